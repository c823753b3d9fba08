// Image benchmark: recio against OpenCV (the baseline, measured in the same run), single thread,
// on the sample photographs (every JPEG of tests/data/photos, decoded to 3 channels).
// Each line: images per second, median of 5 runs, and recio/OpenCV. OpenCV is a benchmark-only
// dependency (C++: OpenCV 4 has no C API); `make bench` installs libopencv-dev when missing.
// recio is compiled into this program (a private copy), with RECIO_TURBOJPEG when the Makefile
// finds libjpeg-turbo; stb's decoder is then called directly for the stb lines.
#if defined(RECIO_BENCH_TURBO) && !defined(RECIO_TURBOJPEG) /* the default build passes -DRECIO_TURBOJPEG */
#define RECIO_TURBOJPEG
#endif
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "bench.h"
#include "opencv_chain.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static const char *files[] = {"astronaut-375x500.jpg", "camera-gray-400x300.jpg", "chelsea-500x375.jpg",
                              "chelsea-cmyk-300x400.jpg", "coffee-500x333.jpg", "coffee-progressive-480x360.jpg",
                              "hubble-1600x1200.jpg", "retina-120x90.jpg", "rocket-640x480.jpg",
                              "astronaut-exif-rot90-400x300.jpg"};
static const int nfiles = sizeof files / sizeof files[0];
static std::vector<std::vector<unsigned char> > jpegs;
static std::vector<recio_image> pixels;  // recio's decode, reused by the resize lines
static std::vector<cv::Mat> cvpixels;    // OpenCV's decode (BGR)
static std::vector<float> tensor(3 * 224 * 224);
static volatile double sink;

// images/s of one run: the photo set repeated `reps` times
template <class F> static double run_once(F f, int reps) {
    double t0 = now();
    int n = 0;
    for (int k = 0; k < reps; k++)
        for (int i = 0; i < nfiles; i++) f(i, k), n++;
    return n / (now() - t0);
}

// Medians over 5 runs of images/s for recio (fa) and OpenCV (fb), runs interleaved so that the
// load of a shared machine weighs on both sides alike.
template <class A, class B> static void pair(A fa, B fb, int reps, double *ra, double *rb) {
    std::vector<double> a, b;
    for (int run = 0; run < 5; run++) {
        a.push_back(run_once(fa, reps));
        b.push_back(run_once(fb, reps));
    }
    *ra = bench_median(a.data(), 5);
    *rb = bench_median(b.data(), 5);
}

static void line(const char *what, double a, double b) {
    std::printf("%-60s %10.0f %10.0f %7.2fx\n", what, a, b, a / b);
}

// the OpenCV side (opencv_chain.h), into the one tensor
static cv::Mat cv_decode(int i) { return cv_decode(jpegs[i].data(), jpegs[i].size()); }
static void cv_eval(const cv::Mat &bgr) { cv_eval(bgr, tensor.data()); }
static void cv_train(const cv::Mat &bgr) { cv_train(bgr, tensor.data()); }

int main() {
    cv::setNumThreads(1);
    for (int i = 0; i < nfiles; i++) {
        std::string p = std::string("tests/data/photos/") + files[i];
        FILE *f = std::fopen(p.c_str(), "rb");
        if (!f) {
            std::fprintf(stderr, "bench_image: %s: cannot open (run from the repository root)\n", p.c_str());
            return 1;
        }
        std::vector<unsigned char> b;
        unsigned char tmp[65536];
        size_t k;
        while ((k = std::fread(tmp, 1, sizeof tmp, f)) > 0) b.insert(b.end(), tmp, tmp + k);
        std::fclose(f);
        jpegs.push_back(b);
        recio_image img = {};
        int w, h, c;
        unsigned char *px = stbi_load_from_memory(b.data(), (int)b.size(), &w, &h, &c, 3);
        if (!px) return 1;
        img = recio_image_wrap(px, w, h, 3, RECIO_U8, RECIO_HWC, 0);
        img.owned = px;
        pixels.push_back(img);
        cvpixels.push_back(cv_decode(i));
    }
    recio_transform *eval = NULL, *train = NULL, *eval_area = NULL;
    recio_transform_parse(&eval, "resize_short(256) center_crop(224) normalize(imagenet) chw");
    recio_transform_parse(&eval_area, "area resize_short(256) center_crop(224) normalize(imagenet) chw");
    recio_transform_parse(&train, "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw");
    recio_transform_info ti;
    size_t scratch_n = 0;
    for (int i = 0; i < nfiles; i++)
        for (const recio_transform *t : {eval, eval_area, train}) {
            recio_transform_query(t, pixels[i].width, pixels[i].height, 3, &ti);
            scratch_n = std::max(scratch_n, ti.scratch_size);
        }
    std::vector<unsigned char> scratch(scratch_n);
    std::vector<unsigned char> resized(3 * 2048 * 2048);

    std::printf("recio vs OpenCV %s, single thread, %d photos (120x90 .. 1600x1200), images/s, median of 5\n",
                CV_VERSION, nfiles);
    std::printf("%-60s %10s %10s %8s\n", "", "recio", "OpenCV", "ratio");

    auto apply = [&](recio_transform *t, const recio_image *in, uint64_t seed) {
        recio_image out = recio_image_wrap(tensor.data(), 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
        recio_apply_desc d = {};
        d.image = in, d.out = &out, d.seed = seed, d.scratch = scratch.data(), d.scratch_size = scratch.size();
        if (recio_transform_apply_desc(t, &d) != RECIO_OK) std::abort();
    };
    auto resize_short = [&](int i, recio_filter f) {
        cv::Size sz = cv_short_size(pixels[i].width, pixels[i].height, 256);
        int w = sz.width, h = sz.height;
        recio_image out = recio_image_wrap(resized.data(), w, h, 3, RECIO_U8, RECIO_HWC, 0);
        if (recio_image_resize(&pixels[i], &out, w, h, f) != RECIO_OK) std::abort();
    };
    auto cv_resize_short = [&](int i, int mode) {
        cv::Mat r;
        cv::resize(cvpixels[i], r, cv_short_size(cvpixels[i].cols, cvpixels[i].rows, 256), 0, 0, mode);
        sink = r.data[0];
    };
    auto decode = [&](int i, recio_image *img) { // stb_image, as recio decodes without RECIO_TURBOJPEG
        int w, h, c;
        unsigned char *px = stbi_load_from_memory(jpegs[i].data(), (int)jpegs[i].size(), &w, &h, &c, 3);
        if (!px) std::abort();
        *img = recio_image_wrap(px, w, h, 3, RECIO_U8, RECIO_HWC, 0);
        img->owned = px;
    };

    double a, b;
    pair([&](int i, int) { recio_image img; decode(i, &img); recio_image_free(&img); }, [&](int i, int) { sink = cv_decode(i).data[0]; }, 3, &a, &b);
    line("JPEG decode (stb_image vs cv::imdecode)", a, b);
    pair([&](int i, int) { resize_short(i, RECIO_LINEAR); }, [&](int i, int) { cv_resize_short(i, cv::INTER_LINEAR); }, 40, &a, &b);
    line("resize short side to 256, LINEAR vs INTER_LINEAR (no AA)", a, b);
    pair([&](int i, int) { resize_short(i, RECIO_AREA); }, [&](int i, int) { cv_resize_short(i, cv::INTER_AREA); }, 20, &a, &b);
    line("resize short side to 256, AREA vs INTER_AREA (antialiased)", a, b);
    pair([&](int i, int) { apply(eval, &pixels[i], 0); }, [&](int i, int) { cv_eval(cvpixels[i]); }, 40, &a, &b);
    line("eval chain on decoded pixels (LINEAR, no AA)", a, b);
    pair([&](int i, int k) { apply(train, &pixels[i], recio_seed_for(1, (uint64_t)k, (uint64_t)i)); }, [&](int i, int) { cv_train(cvpixels[i]); }, 40, &a, &b);
    line("train chain on decoded pixels (LINEAR, no AA)", a, b);
    pair([&](int i, int) { recio_image img; decode(i, &img); apply(eval, &img, 0); recio_image_free(&img); }, [&](int i, int) { cv_eval(cv_decode(i)); }, 3, &a, &b);
    line("eval chain with decode (LINEAR, no AA)", a, b);
    pair([&](int i, int) { recio_image img; decode(i, &img); apply(eval_area, &img, 0); recio_image_free(&img); },
         [&](int i, int) { cv_eval(cv_decode(i)); }, 3, &a, &b);
    line("eval chain with decode, AREA (AA) vs INTER_LINEAR (no AA)", a, b);
    pair([&](int i, int k) { recio_image img; decode(i, &img); apply(train, &img, recio_seed_for(1, (uint64_t)k, (uint64_t)i)); recio_image_free(&img); }, [&](int i, int) { cv_train(cv_decode(i)); }, 3, &a, &b);
    line("train chain with decode (LINEAR, no AA)", a, b);

#ifdef RECIO_BENCH_TURBO
    auto decode_tj = [&](int i, recio_image *img, int min_short) {
        recio_decode_desc d = {};
        d.bytes = jpegs[i].data(), d.size = jpegs[i].size(), d.channels = 3, d.min_short = min_short;
        if (recio_image_decode_desc(img, &d) != RECIO_OK) std::abort();
    };
    pair([&](int i, int) { recio_image img; decode_tj(i, &img, 0); recio_image_free(&img); }, [&](int i, int) { sink = cv_decode(i).data[0]; }, 3, &a, &b);
    line("JPEG decode, RECIO_TURBOJPEG full size", a, b);
    auto apply_encoded = [&](recio_transform *t, int i, uint64_t seed) {
        recio_image out = recio_image_wrap(tensor.data(), 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
        recio_apply_desc ed = {};
        ed.bytes = jpegs[i].data(), ed.size = jpegs[i].size(), ed.channels = 3, ed.out = &out, ed.seed = seed;
        ed.scratch = scratch.data(), ed.scratch_size = scratch.size();
        if (recio_transform_apply_desc(t, &ed) != RECIO_OK) std::abort();
    };
    pair([&](int i, int) { apply_encoded(eval, i, 0); }, [&](int i, int) { cv_eval(cv_decode(i)); }, 3, &a, &b);
    line("eval chain, RECIO_TURBOJPEG window + DCT scale (LINEAR, no AA)", a, b);
    pair([&](int i, int k) { apply_encoded(train, i, recio_seed_for(1, (uint64_t)k, (uint64_t)i)); },
         [&](int i, int) { cv_train(cv_decode(i)); }, 3, &a, &b);
    line("train chain, RECIO_TURBOJPEG window + DCT scale (LINEAR, no AA)", a, b);
#else
    std::printf("(libjpeg-turbo not installed: RECIO_TURBOJPEG lines skipped)\n");
#endif

    for (auto &p : pixels) recio_image_free(&p);
    recio_transform_free(eval);
    recio_transform_free(eval_area);
    recio_transform_free(train);
    return 0;
}
