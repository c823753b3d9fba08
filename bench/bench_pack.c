/* recio pack throughput. 2,000 JPEGs (crops and rescales of the sample photos, made once under
   build/bench_pack/) are packed with --resize 256 --quality 90 by the real command (build/recio, or
   $RECIO) with 1 and 2 workers; the baseline is the same decode + resize + encode done in this
   process on the same files, with no file I/O, no threads and no RecordIO: the ratio is what the tool
   itself costs or wins. --pass-through is compared with `cp -r` of the same files. Finally stb's JPEG
   encoder (what pack uses) against libjpeg-turbo's, when libturbojpeg.so.0 is installed (loaded with
   dlopen, so building this needs nothing extra): speed, size and PSNR at quality 90.
   Medians of 5 runs; timings on a shared machine are noisy, the ratios less so. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include "tools/pack_codec.c" /* the adapter pack uses: the baseline runs the very same image code */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define DIR "build/bench_pack"
#define NIMG 2000
#define RUNS 5

static const char *const photos[] = {
    "astronaut-375x500.jpg", "camera-gray-400x300.jpg", "chelsea-500x375.jpg", "coffee-500x333.jpg",
    "coffee-progressive-480x360.jpg", "hubble-1600x1200.jpg", "rocket-640x480.jpg", "chelsea-333x500.png",
};
#define NPHOTOS (sizeof photos / sizeof photos[0])

/* CPU seconds (user + system) of this process or of its finished children. */
static double cpu(int who) {
    struct rusage u;
    getrusage(who, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec + ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) * 1e-6;
}

/* Image k: a seeded crop of 60-100% of a sample photo, rescaled to a longer side of 400-500 pixels
   (ImageNet-like), JPEG quality 90. */
static int make_image(const recio_image *src, int k, const char *path) {
    recio_rng rng;
    recio_image im;
    unsigned char *jpg;
    size_t n;
    double f;
    int cw, ch, x0, y0, longer, rc;
    rng.state = recio_seed_for(42, 0, (uint64_t)k);
    f = 0.6 + 0.4 * recio_rng_uniform(&rng);
    cw = (int)(src->width * f), ch = (int)(src->height * f);
    x0 = (int)recio_rng_below(&rng, (uint64_t)(src->width - cw + 1));
    y0 = (int)recio_rng_below(&rng, (uint64_t)(src->height - ch + 1));
    if (recio_image_crop(src, &im, x0, y0, cw, ch) != RECIO_OK) return -1; /* a view: resizing replaces it */
    longer = 400 + (int)recio_rng_below(&rng, 101);
    rc = cw >= ch ? codec_resize(&im, longer, ch * longer / cw, RECIO_AREA) : codec_resize(&im, cw * longer / ch, longer, RECIO_AREA);
    rc = rc || codec_encode(&im, 0, 90, 0, &jpg, &n);
    if (!rc) {
        FILE *o = fopen(path, "wb");
        rc = !o || fwrite(jpg, 1, n, o) != n;
        if (o) rc |= fclose(o) != 0;
        free(jpg);
    }
    recio_image_free(&im);
    return rc;
}

static int make_dataset(void) {
    recio_image src[NPHOTOS];
    char path[256];
    FILE *lst;
    size_t i, n;
    int k, rc = 0;
    struct stat st;
    if (stat(DIR "/src/1999.jpg", &st) == 0 && stat(DIR "/bench.lst", &st) == 0) return 0;
    if (system("mkdir -p " DIR "/src") != 0) return -1;
    printf("making %d images under %s/src (once) ...\n", NIMG, DIR);
    for (i = 0; i < NPHOTOS; i++) {
        unsigned char *b;
        char why[160];
        snprintf(path, sizeof path, "tests/data/photos/%s", photos[i]);
        if (!(b = bench_slurp(path, &n)) || codec_decode(b, n, 3, 1, &src[i], why, sizeof why)) return fprintf(stderr, "%s: cannot load\n", path), -1;
        free(b);
    }
    lst = fopen(DIR "/bench.lst.tmp", "wb");
    for (k = 0; lst && !rc && k < NIMG; k++) {
        snprintf(path, sizeof path, DIR "/src/%d.jpg", k);
        rc = make_image(&src[k % NPHOTOS], k, path);
        fprintf(lst, "%d\t%d\t%d.jpg\n", k, k % 10, k);
    }
    for (i = 0; i < NPHOTOS; i++) recio_image_free(&src[i]);
    if (!lst || fclose(lst) != 0 || rc) return -1;
    return rename(DIR "/bench.lst.tmp", DIR "/bench.lst");
}

typedef struct blob {
    unsigned char *p;
    size_t n;
} blob;

static blob files[NIMG];
static double total_mb;

static int load_files(void) {
    char path[256];
    int k;
    total_mb = 0;
    for (k = 0; k < NIMG; k++) {
        snprintf(path, sizeof path, DIR "/src/%d.jpg", k);
        if (!(files[k].p = bench_slurp(path, &files[k].n))) return -1;
        total_mb += (double)files[k].n / 1e6;
    }
    return 0;
}

/* What pack does to images first, first + step, ..., in this process, from memory; 0 on success. */
static int work_alone(int first, int step) {
    int k;
    for (k = first; k < NIMG; k += step) {
        recio_image im;
        unsigned char *out;
        size_t n;
        char why[160];
        if (codec_decode(files[k].p, files[k].n, 3, 1, &im, why, sizeof why)) return -1;
        if (codec_resize_short(&im, 256, RECIO_LINEAR) || codec_encode(&im, 0, 90, 24, &out, &n))
            return recio_image_free(&im), -1;
        recio_image_free(&im);
        free(out);
    }
    return 0;
}

static void *work_half(void *arg) { return work_alone(*(int *)arg, 2) ? arg : NULL; }

/* The same work on 1 or 2 threads: with 2, how much parallelism the machine really gives right now. */
static double time_alone(int threads, double *cpu_s) {
    double t = now(), c = cpu(RUSAGE_SELF);
    int bad = 0;
    if (threads == 1) bad = work_alone(0, 1);
    else {
        pthread_t th;
        int first[2] = {0, 1};
        void *res = NULL;
        pthread_create(&th, NULL, work_half, &first[1]);
        bad = work_alone(first[0], 2);
        pthread_join(th, &res);
        bad |= res != NULL;
    }
    *cpu_s = cpu(RUSAGE_SELF) - c;
    return bad ? -1 : now() - t;
}

static double time_cmd(const char *cmd, double *cpu_s) {
    double t = now(), c = cpu(RUSAGE_CHILDREN);
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        return -1;
    }
    *cpu_s = cpu(RUSAGE_CHILDREN) - c;
    return now() - t;
}

/* ---- stb vs libjpeg-turbo: JPEG encode at quality 90 (4:2:0 for both, as stb picks at q <= 90) -- */

typedef void *(*tj_init_fn)(void);
typedef int (*tj_compress_fn)(void *, const unsigned char *, int, int, int, int, unsigned char **, unsigned long *, int,
                              int, int);
typedef void (*tj_free_fn)(unsigned char *);
typedef int (*tj_destroy_fn)(void *);

static double psnr(const unsigned char *a, const unsigned char *b, size_t n) {
    double se = 0;
    size_t i;
    for (i = 0; i < n; i++) se += (double)(a[i] - b[i]) * (a[i] - b[i]);
    return se == 0 ? 99 : 10 * log10(255.0 * 255.0 * (double)n / se);
}

static void encoder_compare(void) {
    void *lib = dlopen("libturbojpeg.so.0", RTLD_NOW);
    tj_init_fn init;
    tj_compress_fn comp;
    tj_free_fn tfree;
    tj_destroy_fn destroy;
    void *h;
    double ts[RUNS], tt[RUNS], bytes[2] = {0, 0}, q[2] = {0, 0};
    int r, k, m = 200;
    if (!lib) {
        printf("\nlibjpeg-turbo: not installed (apt-get install libturbojpeg0) - encoder comparison skipped\n");
        return;
    }
    *(void **)&init = dlsym(lib, "tjInitCompress");
    *(void **)&comp = dlsym(lib, "tjCompress2");
    *(void **)&tfree = dlsym(lib, "tjFree");
    *(void **)&destroy = dlsym(lib, "tjDestroy");
    if (!init || !comp || !tfree || !destroy || !(h = init())) return;
    for (r = 0; r < RUNS; r++) {
        ts[r] = tt[r] = 0;
        for (k = 0; k < m; k++) {
            recio_image im;
            char why[160];
            unsigned char *s, *t = NULL;
            size_t sn;
            unsigned long tn = 0;
            double t0;
            if (codec_decode(files[k].p, files[k].n, 3, 1, &im, why, sizeof why)) return;
            if (codec_resize_short(&im, 256, RECIO_LINEAR)) {
                recio_image_free(&im);
                return;
            }
            t0 = now();
            if (codec_encode(&im, 0, 90, 0, &s, &sn)) return;
            ts[r] += now() - t0;
            t0 = now();
            if (comp(h, (unsigned char *)im.data, im.width, (int)im.stride, im.height, 0 /* TJPF_RGB */, &t, &tn, 2 /* TJSAMP_420 */, 90, 0) != 0) return;
            tt[r] += now() - t0;
            if (r == 0) { /* size and PSNR against the resized pixels (packed), both decoded by stb_image */
                recio_image pix[2];
                int i;
                bytes[0] += (double)sn, bytes[1] += (double)tn;
                for (i = 0; i < 2; i++)
                    if (recio_image_decode(&pix[i], i ? t : s, i ? tn : sn, 3) == RECIO_OK) {
                        q[i] += psnr((const unsigned char *)im.data, (const unsigned char *)pix[i].data, recio_image_bytes(&im));
                        recio_image_free(&pix[i]);
                    }
            }
            free(s);
            tfree(t);
            recio_image_free(&im);
        }
    }
    destroy(h);
    {
        double ms = bench_median(ts, RUNS), mt = bench_median(tt, RUNS);
        printf("\nJPEG encode of %d images resized to 256, quality 90, 4:2:0 (median of %d):\n", m, RUNS);
        printf("  %-22s %9s %10s %9s %9s\n", "encoder", "img/s", "KB/image", "PSNR dB", "speed");
        printf("  %-22s %9.0f %10.1f %9.2f %8.2fx\n", "libjpeg-turbo 2.1", m / mt, bytes[1] / m / 1e3, q[1] / m, 1.0);
        printf("  %-22s %9.0f %10.1f %9.2f %8.2fx\n", "stb_image_write (pack)", m / ms, bytes[0] / m / 1e3, q[0] / m, mt / ms);
    }
    dlclose(lib);
}

static void row(const char *what, double s, double cpu_s, double rate, const char *unit_note) {
    printf("%-38s %8.2f %8.2f %9.0f %s\n", what, s, cpu_s, rate, unit_note);
}

int main(void) {
    const char *exe = getenv("RECIO");
    char cmd[1024], note[160];
    double t[6][RUNS], c[6][RUNS], m[6], mc[6];
    int r, i;
    if (!exe || !*exe) exe = "build/recio";
    if (make_dataset() || load_files()) return fprintf(stderr, "bench_pack: cannot make the dataset\n"), 1;
    for (r = 0; r < RUNS; r++) {
        t[0][r] = time_alone(1, &c[0][r]);
        t[5][r] = time_alone(2, &c[5][r]);
        snprintf(cmd, sizeof cmd, "%s pack --quiet --resize 256 --quality 90 --num-thread 1 " DIR "/bench " DIR "/src >/dev/null", exe);
        t[1][r] = time_cmd(cmd, &c[1][r]);
        snprintf(cmd, sizeof cmd, "%s pack --quiet --resize 256 --quality 90 --num-thread 2 " DIR "/bench " DIR "/src >/dev/null", exe);
        t[2][r] = time_cmd(cmd, &c[2][r]);
        t[3][r] = time_cmd("rm -rf " DIR "/copy && cp -r " DIR "/src " DIR "/copy", &c[3][r]);
        snprintf(cmd, sizeof cmd, "%s pack --quiet --pass-through " DIR "/bench " DIR "/src >/dev/null", exe);
        t[4][r] = time_cmd(cmd, &c[4][r]);
        for (i = 0; i < 6; i++)
            if (t[i][r] < 0) return 1;
    }
    for (i = 0; i < 6; i++) m[i] = bench_median(t[i], RUNS), mc[i] = bench_median(c[i], RUNS);
    printf("recio pack, %d JPEGs (%.1f MB, ~400-500 px), --resize 256 --quality 90, median of %d runs\n", NIMG, total_mb, RUNS);
    printf("(wall s: elapsed; cpu s: user+system of the work, immune to other load on the machine)\n");
    printf("%-38s %8s %8s %9s %s\n", "what", "wall s", "cpu s", "img/s", "ratio");
    row("decode+resize+encode alone, 1 thread", m[0], mc[0], NIMG / m[0], "1.00x (baseline)");
    snprintf(note, sizeof note, "%.2fx of alone (wall), %.2fx (cpu)", m[0] / m[1], mc[0] / mc[1]);
    row("recio pack --num-thread 1", m[1], mc[1], NIMG / m[1], note);
    snprintf(note, sizeof note, "%.2fx of alone: what this machine gives 2 threads now", m[0] / m[5]);
    row("decode+resize+encode alone, 2 threads", m[5], mc[5], NIMG / m[5], note);
    snprintf(note, sizeof note, "%.2fx of 1 thread (target >= 1.8), %.2fx of alone on 2 threads", m[1] / m[2], m[5] / m[2]);
    row("recio pack --num-thread 2", m[2], mc[2], NIMG / m[2], note);
    printf("\n%-38s %8s %8s %9s %s\n", "what", "wall s", "cpu s", "MB/s", "ratio");
    row("cp -r of the same files", m[3], mc[3], total_mb / m[3], "1.00x (baseline)");
    snprintf(note, sizeof note, "%.2fx of cp (target >= 0.5)", m[3] / m[4]);
    row("recio pack --pass-through", m[4], mc[4], total_mb / m[4], note);
    encoder_compare();
    return 0;
}
