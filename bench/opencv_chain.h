// The OpenCV side of the image benchmarks, written as an OpenCV user writes it (and as MXNet's
// ImageRecordIter does per image): imdecode, resize / random-resized-crop, flip, then convertTo +
// subtract + multiply + split into the three CHW float planes of a 3x224x224 tensor (planes written
// in reverse order, so no BGR to RGB pass is needed). Shared by bench_image.cpp and bench_pipeline.cpp.
#ifndef RECIO_BENCH_OPENCV_CHAIN_H
#define RECIO_BENCH_OPENCV_CHAIN_H
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

static const float CV_MEAN[3] = {123.68f, 116.28f, 103.53f}, CV_STD[3] = {58.395f, 57.12f, 57.375f};

static inline cv::Mat cv_decode(const unsigned char *jpeg, size_t n) {
    cv::Mat buf(1, (int)n, CV_8UC1, (void *)jpeg);
    return cv::imdecode(buf, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
}

// shorter side to s, the longer floor(long * s / short): resize_short(S), im2rec's rule
static inline cv::Size cv_short_size(int w, int h, int s) {
    if (w <= h) return cv::Size(s, (int)((long long)h * s / w));
    return cv::Size((int)((long long)w * s / h), s);
}

// normalise a 224x224 BGR crop into the CHW RGB tensor at dst
static inline void cv_to_tensor(const cv::Mat &bgr, float *dst) {
    cv::Mat f;
    bgr.convertTo(f, CV_32FC3);
    cv::subtract(f, cv::Scalar(CV_MEAN[2], CV_MEAN[1], CV_MEAN[0]), f);
    cv::multiply(f, cv::Scalar(1 / CV_STD[2], 1 / CV_STD[1], 1 / CV_STD[0]), f);
    std::vector<cv::Mat> planes;
    for (int c = 2; c >= 0; c--) planes.push_back(cv::Mat(224, 224, CV_32FC1, dst + c * 224 * 224));
    cv::split(f, planes);
}

// eval: resize_short(256) center_crop(224) normalize(imagenet) chw
static inline void cv_eval(const cv::Mat &bgr, float *dst) {
    cv::Size s = cv_short_size(bgr.cols, bgr.rows, 256);
    cv::Mat r;
    cv::resize(bgr, r, s, 0, 0, cv::INTER_LINEAR);
    cv_to_tensor(r(cv::Rect((s.width - 224) / 2, (s.height - 224) / 2, 224, 224)), dst);
}

// torchvision's RandomResizedCrop rectangle (as recio draws it), with the C library's rand()
static inline cv::Rect cv_rrc_rect(int W, int H) {
    for (int i = 0; i < 10; i++) {
        double area = W * (double)H * (0.08 + 0.92 * (std::rand() / (RAND_MAX + 1.0)));
        double ar = std::exp(std::log(0.75) + (std::log(4.0 / 3) - std::log(0.75)) * (std::rand() / (RAND_MAX + 1.0)));
        int w = (int)std::lround(std::sqrt(area * ar)), h = (int)std::lround(std::sqrt(area / ar));
        if (w > 0 && h > 0 && w <= W && h <= H) return cv::Rect(std::rand() % (W - w + 1), std::rand() % (H - h + 1), w, h);
    }
    int s = std::min(W, H);
    return cv::Rect((W - s) / 2, (H - s) / 2, s, s);
}

// train: random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw
static inline void cv_train(const cv::Mat &bgr, float *dst) {
    cv::Mat r;
    cv::resize(bgr(cv_rrc_rect(bgr.cols, bgr.rows)), r, cv::Size(224, 224), 0, 0, cv::INTER_LINEAR);
    if (std::rand() & 1) cv::flip(r, r, 1);
    cv_to_tensor(r, dst);
}
#endif
