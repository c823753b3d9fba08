// Pipeline benchmark on the realistic set (build/bench-data/imagenet1k.rec, `make bench-data`: 1,000
// photos packed as im2rec packs ImageNet, --resize 256 --quality 90). Single thread, one process,
// rounds interleaved (every row once per round, in turn), medians and min-max spreads over ROUNDS.
//   1. Decoders on the records' JPEGs, against raw libjpeg-turbo (jpeg_read_scanlines, JDCT_ISLOW,
//      RGB): cv::imdecode must run near 1.0x of it, else the OpenCV baseline below is broken.
//   2. Eval and train chains into a 32 x 3x224x224 float CHW batch: the OpenCV loop (read record,
//      imdecode, resize / random-resized-crop, flip, normalise: opencv_chain.h) is the baseline;
//      against it the iterator in pull mode (workers 0, no checksums) of the default build
//      (libjpeg-turbo) and of the stb-only build (both are private copies of recio in this program,
//      bench/variant.c), and torchvision (bench/bench_torchvision.py, DataLoader num_workers=0,
//      PIL + transforms, run by Debian's /usr/bin/python3 once per round, in the same interleaving).
//   bench_pipeline [DATA.rec [ROUNDS]]
#include "bench.h"
#include "opencv_chain.h"
#include "variant.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <unistd.h>
#ifdef BENCH_LIBJPEG
#include <jpeglib.h>
#endif

#define BATCH 32
static const char *EVAL = "resize_short(256) center_crop(224) normalize(imagenet) chw";
static const char *TRAIN = "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw";

static std::vector<std::vector<unsigned char> > jpegs;
static std::vector<float> batch((size_t)BATCH * 3 * 224 * 224);
static volatile unsigned sink;

struct row {
    std::string name;
    std::vector<double> v, c; // img/s per round: wall clock, and per CPU second of the thread doing the work
};

// images/s of one run by the wall clock and by the CPU clock of this thread
struct rate {
    double wall, cpu;
};
struct stopwatch {
    double w0 = now(), c0 = bench_thread_cpu();
    rate done(size_t n) const { return {n / (now() - w0), n / (bench_thread_cpu() - c0)}; }
};
static void add(row &r, rate x) { r.v.push_back(x.wall), r.c.push_back(x.cpu); }

// median and min-max over rounds of v (kept), and of the per-round ratio v / base
static void stats(const std::vector<double> &v, const std::vector<double> &base, double s[6]) {
    std::vector<double> a = v, r;
    int n = (int)v.size();
    for (int k = 0; k < n; k++) r.push_back(v[k] / base[k]);
    bench_range(a.data(), n, &s[1], &s[2]);
    bench_range(r.data(), n, &s[4], &s[5]);
    s[0] = bench_median(a.data(), n), s[3] = bench_median(r.data(), n);
}

// Per row: median [min-max] img/s by the wall clock and its ratio to the baseline row (median of the
// per-round ratios [min-max]); then the ratio by CPU time, which other jobs on the machine disturb less.
static void print_rows(const char *title, std::vector<row> &rows, size_t base, const char *note) {
    std::printf("\n%s\n%-44s %7s %13s %7s %11s | %9s %11s\n", title, "", "img/s", "(min-max)", "ratio", "(min-max)",
                "cpu ratio", "(min-max)");
    for (size_t i = 0; i < rows.size(); i++) {
        double w[6], c[6];
        if (rows[i].v.empty()) continue;
        stats(rows[i].v, rows[base].v, w);
        stats(rows[i].c, rows[base].c, c);
        std::printf("%-44s %7.0f %6.0f-%-6.0f %6.2fx %5.2f-%.2fx | %8.2fx %5.2f-%.2fx%s\n", rows[i].name.c_str(), w[0], w[1], w[2],
                    w[3], w[4], w[5], c[3], c[4], c[5], i == base ? "  (baseline)" : "");
    }
    if (note) std::printf("%s\n", note);
}

// ---- decoders, each over every record's JPEG, pixels freed per image as a loop over a dataset does ----
#ifdef BENCH_LIBJPEG
static rate raw_turbo() {
    stopwatch t;
    for (auto &j : jpegs) {
        jpeg_decompress_struct d;
        jpeg_error_mgr err;
        d.err = jpeg_std_error(&err);
        jpeg_create_decompress(&d);
        jpeg_mem_src(&d, j.data(), (unsigned long)j.size());
        jpeg_read_header(&d, TRUE);
        d.out_color_space = JCS_RGB;
        jpeg_start_decompress(&d);
        size_t stride = (size_t)d.output_width * 3;
        unsigned char *px = (unsigned char *)std::malloc(stride * d.output_height);
        while (d.output_scanline < d.output_height) {
            JSAMPROW rows[8];
            for (int k = 0; k < 8; k++) rows[k] = px + stride * std::min<size_t>(d.output_scanline + k, d.output_height - 1);
            jpeg_read_scanlines(&d, rows, 8);
        }
        jpeg_finish_decompress(&d);
        jpeg_destroy_decompress(&d);
        sink = px[0];
        std::free(px);
    }
    return t.done(jpegs.size());
}

// What cv::imdecode does in newer OpenCV releases (libjpeg-turbo's JCS_EXT_BGR straight into the Mat's
// rows); Debian's OpenCV 4.6 decodes RGB and swaps every pixel to BGR in a byte loop instead.
static cv::Mat cv_decode_turbo(const unsigned char *jpeg, size_t n) {
    jpeg_decompress_struct d;
    jpeg_error_mgr err;
    d.err = jpeg_std_error(&err);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, jpeg, (unsigned long)n);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = JCS_EXT_BGR;
    jpeg_start_decompress(&d);
    cv::Mat m((int)d.output_height, (int)d.output_width, CV_8UC3);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = m.ptr((int)d.output_scanline);
        jpeg_read_scanlines(&d, &row, 1);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return m;
}
#endif

static cv::Mat cv_decode_with(int how, const unsigned char *jpeg, size_t n) {
#ifdef BENCH_LIBJPEG
    if (how) return cv_decode_turbo(jpeg, n);
#endif
    (void)how;
    return cv_decode(jpeg, n);
}

static rate cv_imdecode(int how) {
    stopwatch t;
    for (auto &j : jpegs) sink = cv_decode_with(how, j.data(), j.size()).data[0];
    return t.done(jpegs.size());
}

static rate recio_decode(const bench_variant &v) {
    stopwatch t;
    for (auto &j : jpegs) {
        unsigned char *px;
        int w, h;
        if (v.decode(j.data(), j.size(), &px, &w, &h)) std::abort();
        sink = px[0];
        v.free_pixels(px);
    }
    return t.done(jpegs.size());
}

// ---- pipelines ----
// The OpenCV loop over the .rec: a record reader (recio's, as MXNet's would be), imdecode, the chain
// into item k of the batch.
static rate cv_loop(const char *rec, bool train, int how) {
    stopwatch t;
    void *r = bench_variant_turbo.records_open(rec);
    const unsigned char *img;
    size_t n, k = 0;
    int e;
    if (!r) std::abort();
    std::srand(1);
    while ((e = bench_variant_turbo.records_next(r, &img, &n)) == 1) {
        float *dst = batch.data() + (k++ % BATCH) * 3 * 224 * 224;
        cv::Mat bgr = cv_decode_with(how, img, n);
        if (train) cv_train(bgr, dst);
        else cv_eval(bgr, dst);
    }
    bench_variant_turbo.records_close(r);
    if (e < 0) std::abort();
    return t.done(k);
}

static rate recio_iter(const bench_variant &v, const char *rec, bool train) {
    size_t n;
    double cpu, r = v.iter_epoch(rec, train ? TRAIN : EVAL, BATCH, 0, 0, &n, &cpu);
    if (r < 0) std::exit(1);
    return {r, cpu};
}

// torchvision: one process per round, eval then train epoch; false when it cannot run
static const char *PY = "/usr/bin/python3";
static bool torchvision(const char *rec, rate *eval, rate *train, std::string *why) {
    std::string cmd = std::string(PY) + " bench/bench_torchvision.py " + rec + " 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    char line[512];
    bool ok_e = false, ok_t = false;
    if (!p) return *why = "popen failed", false;
    while (std::fgets(line, sizeof line, p)) {
        if (std::sscanf(line, "eval %lf %lf", &eval->wall, &eval->cpu) == 2) ok_e = true;
        else if (std::sscanf(line, "train %lf %lf", &train->wall, &train->cpu) == 2) ok_t = true;
        else if (why->empty()) *why = line;
    }
    int st = pclose(p);
    if (!why->empty() && why->back() == '\n') why->pop_back();
    return st == 0 && ok_e && ok_t;
}

int main(int argc, char **argv) {
    const char *rec = argc > 1 ? argv[1] : "build/bench-data/imagenet1k.rec";
    int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
    cv::setNumThreads(1);
    void *r = bench_variant_turbo.records_open(rec);
    const unsigned char *img;
    size_t n, pixels = 0;
    if (!r) {
        std::fprintf(stderr, "bench_pipeline: cannot open %s (run `make bench-data` from the repository root)\n", rec);
        return 1;
    }
    while (bench_variant_turbo.records_next(r, &img, &n) == 1) jpegs.push_back(std::vector<unsigned char>(img, img + n));
    bench_variant_turbo.records_close(r);
    size_t bytes = 0;
    for (auto &j : jpegs) {
        cv::Mat m = cv_decode(j.data(), j.size());
        pixels += (size_t)m.cols * m.rows;
        bytes += j.size();
    }
    std::printf("pipelines on %s: %zu JPEG records, %.0f KB and %.0f kpixels on average; OpenCV %s (%d thread), "
                "single thread, %d interleaved rounds\n",
                rec, jpegs.size(), bytes / 1e3 / jpegs.size(), pixels / 1e3 / jpegs.size(), CV_VERSION, cv::getNumThreads(),
                rounds);
    std::printf("recio copies: default build = %s decoder, %s kernels; stb-only build = %s decoder, %s kernels\n",
                bench_variant_turbo.decoder, bench_variant_turbo.kernels(), bench_variant_stb.decoder, bench_variant_stb.kernels());

    // 1. decoders
    std::vector<row> dec;
    std::vector<std::function<rate()> > decf;
#ifdef BENCH_LIBJPEG
    dec.push_back({"raw libjpeg-turbo (jpeg_read_scanlines, RGB)", {}, {}}), decf.push_back(raw_turbo);
    dec.push_back({"libjpeg-turbo JCS_EXT_BGR into a cv::Mat", {}, {}}), decf.push_back([] { return cv_imdecode(1); });
#endif
    dec.push_back({"cv::imdecode (BGR), OpenCV " CV_VERSION, {}, {}}), decf.push_back([] { return cv_imdecode(0); });
    dec.push_back({std::string("recio decode, default build (") + bench_variant_turbo.decoder + ")", {}, {}});
    decf.push_back([] { return recio_decode(bench_variant_turbo); });
    dec.push_back({std::string("recio decode, stb-only build (") + bench_variant_stb.decoder + ")", {}, {}});
    decf.push_back([] { return recio_decode(bench_variant_stb); });
    for (auto &f : decf) f(); // warm
    for (int k = 0; k < rounds; k++)
        for (size_t i = 0; i < decf.size(); i++) add(dec[i], decf[i]());
    print_rows("JPEG decode, full size, 3 channels", dec, 0, NULL);
#ifdef BENCH_LIBJPEG
    double imdecode_speed;
    {
        std::vector<double> q;
        for (int k = 0; k < rounds; k++) q.push_back(dec[2].v[k] / dec[0].v[k]);
        imdecode_speed = bench_median(q.data(), rounds);
        std::printf("cv::imdecode runs at %.2fx raw libjpeg-turbo: %s\n", imdecode_speed,
                    imdecode_speed >= 0.85 ? "OpenCV decodes at libjpeg-turbo speed"
                                           : "OpenCV's decoder is slow here (Debian's 4.6 decodes RGB, then swaps each pixel to BGR);\n"
                                             "the baseline is therefore the OpenCV loop with libjpeg-turbo decoding into BGR, as newer OpenCV does");
    }
#else
    std::printf("(libjpeg headers not found: the raw libjpeg-turbo check and the fast-decode OpenCV baseline are skipped)\n");
#endif

    // 2. pipelines: the same rows for both chains, every row once per round
    std::vector<std::string> names;
    std::vector<std::function<rate(bool)> > fs;
#ifdef BENCH_LIBJPEG
    names.push_back("OpenCV loop, libjpeg-turbo BGR decode"), fs.push_back([rec](bool t) { return cv_loop(rec, t, 1); });
#endif
    names.push_back("OpenCV loop, cv::imdecode " CV_VERSION), fs.push_back([rec](bool t) { return cv_loop(rec, t, 0); });
    names.push_back("recio iterator, pull mode, default build"), fs.push_back([rec](bool t) { return recio_iter(bench_variant_turbo, rec, t); });
    names.push_back("recio iterator, pull mode, stb-only build"), fs.push_back([rec](bool t) { return recio_iter(bench_variant_stb, rec, t); });
    std::vector<row> ev, tr;
    for (auto &n : names) ev.push_back({n, {}, {}}), tr.push_back({n, {}, {}});
    ev.push_back({"torchvision DataLoader(num_workers=0)", {}, {}}), tr.push_back(ev.back());
    std::string why;
    bool torch = access(PY, X_OK) == 0;
    if (!torch) why = std::string(PY) + " not found";
    for (auto &f : fs) f(false); // warm
    for (int k = 0; k < rounds; k++) {
        for (size_t i = 0; i < fs.size(); i++) add(ev[i], fs[i](false));
        for (size_t i = 0; i < fs.size(); i++) add(tr[i], fs[i](true));
        rate e, t;
        if (torch && (torch = torchvision(rec, &e, &t, &why))) add(ev.back(), e), add(tr.back(), t);
    }
    if (ev.back().v.size() != (size_t)rounds) {
        ev.pop_back(), tr.pop_back();
        std::printf("\n(torchvision lines skipped: %s; `make bench` installs python3-torchvision as root)\n", why.c_str());
    }
    const size_t recio_row = fs.size() - 2;
    print_rows(("eval chain: " + std::string(EVAL) + ", batch 32").c_str(), ev, 0, "target: default build >= 1.7x the first row");
    print_rows(("train chain: " + std::string(TRAIN) + ", batch 32").c_str(), tr, 0, "target: default build >= 1.7x the first row");
    if (ev.size() > fs.size()) {
        std::vector<row> vt = {tr.back(), tr[recio_row], tr[recio_row + 1]}, ve = {ev.back(), ev[recio_row], ev[recio_row + 1]};
        print_rows("eval chain against torchvision", ve, 0, NULL);
        print_rows("train chain against torchvision", vt, 0, "target: default build >= 5x torchvision (train)");
    }
    return 0;
}
