/* One build variant of recio as a private copy (see variant.h). Compiled with -DBENCH_VARIANT=NAME
   and the variant's flags (RECIO_TURBOJPEG, RECIO_NO_AVX2, RECIO_NO_SIMD). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime: recio.h leaves feature macros to the program */
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "variant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_VARIANT
#error "compile with -DBENCH_VARIANT=name"
#endif
#define BV_CAT2(a, b) a##b
#define BV_CAT(a, b) BV_CAT2(a, b)
#define BV_STR2(a) #a
#define BV_STR(a) BV_STR2(a)

static double bv_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *bv_kernels(void) {
#if defined(RECIO_NO_SIMD)
    return "scalar";
#elif defined(__ARM_NEON) || defined(__ARM_NEON__)
    return "neon";
#elif defined(__x86_64__) && !defined(RECIO_NO_AVX2) && (defined(__GNUC__) || defined(__clang__))
    return __builtin_cpu_supports("avx2") ? "avx2" : "sse2";
#elif defined(__SSE2__) || defined(_M_X64)
    return "sse2";
#else
    return "scalar";
#endif
}

static double bv_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double bv_iter_epoch(const char *uris, const char *spec, unsigned batch, unsigned workers, int checksums, size_t *images,
                            double *cpu_rate) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    recio_err e;
    char msg[512];
    double t0, c0;
    size_t n = 0;
    memset(&d, 0, sizeof d);
    d.uris = uris;
    d.item.spec = spec;
    d.run.batch = batch;
    d.run.workers = workers;
    d.run.checksums = checksums;
    d.source.seed = 1;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) return fprintf(stderr, "bench: %s\n", msg), -1;
    t0 = bv_now();
    c0 = bv_cpu();
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) n += b.count;
    t0 = bv_now() - t0;
    c0 = bv_cpu() - c0;
    if (e != RECIO_END) {
        fprintf(stderr, "bench: %s\n", recio_iter_errmsg(it));
        recio_iter_close(it);
        return -1;
    }
    recio_iter_close(it);
    *images = n;
    *cpu_rate = (double)n / c0;
    return (double)n / t0;
}

static void *bv_records_open(const char *path) {
    recio_reader *r;
    return recio_reader_open(&r, path) == RECIO_OK ? (void *)r : NULL;
}

static int bv_records_next(void *r, const unsigned char **img, size_t *n) {
    recio_record rec;
    recio_irecord ir;
    recio_err e = recio_reader_next((recio_reader *)r, &rec);
    if (e == RECIO_END) return 0;
    if (e != RECIO_OK || recio_irecord_unpack(&ir, rec.data, rec.size) != RECIO_OK) return -1;
    *img = (const unsigned char *)ir.image;
    *n = ir.image_size;
    return 1;
}

static void bv_records_close(void *r) { recio_reader_close((recio_reader *)r); }

static int bv_decode(const void *bytes, size_t n, unsigned char **px, int *w, int *h) {
    recio_image img;
    memset(&img, 0, sizeof img);
    if (recio_image_decode(&img, bytes, n, 3) != RECIO_OK) return -1;
    *px = (unsigned char *)img.owned;
    *w = img.width;
    *h = img.height;
    return 0;
}

static void bv_free_pixels(unsigned char *px) {
    recio_image img;
    memset(&img, 0, sizeof img);
    img.owned = px;
    recio_image_free(&img);
}

typedef struct bv_transform {
    recio_transform *t;
    void *scratch;
    size_t size;
} bv_transform;

static void *bv_transform_new(const char *spec) {
    bv_transform *h = (bv_transform *)calloc(1, sizeof *h);
    if (h && recio_transform_parse(&h->t, spec) != RECIO_OK) free(h), h = NULL;
    return h;
}

static int bv_transform_apply(void *th, const unsigned char *px, int w, int h, float *out, uint64_t seed) {
    bv_transform *t = (bv_transform *)th;
    recio_image in = recio_image_wrap((void *)(uintptr_t)px, w, h, 3, RECIO_U8, RECIO_HWC, 0);
    recio_image o = recio_image_wrap(out, 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
    recio_transform_info ti;
    size_t need = (recio_transform_query(t->t, w, h, 3, &ti), ti.scratch_size);
    if (need > t->size) {
        free(t->scratch);
        if (!(t->scratch = malloc(need))) return -1;
        t->size = need;
    }
    recio_apply_desc d;
    memset(&d, 0, sizeof d);
    d.image = &in, d.out = &o, d.seed = seed, d.scratch = t->scratch, d.scratch_size = t->size;
    return recio_transform_apply_desc(t->t, &d) == RECIO_OK ? 0 : -1;
}

static void bv_transform_free(void *th) {
    bv_transform *t = (bv_transform *)th;
    if (!t) return;
    recio_transform_free(t->t);
    free(t->scratch);
    free(t);
}

static int bv_resize(const unsigned char *px, int w, int h, unsigned char *out, int ow, int oh) {
    recio_image in = recio_image_wrap((void *)(uintptr_t)px, w, h, 3, RECIO_U8, RECIO_HWC, 0);
    recio_image o = recio_image_wrap(out, ow, oh, 3, RECIO_U8, RECIO_HWC, 0);
    return recio_image_resize(&in, &o, ow, oh, RECIO_LINEAR) == RECIO_OK ? 0 : -1;
}

/* Shorter side to s, the other floor(long * s / short): resize_short's rule (im2rec's). */
static void bv_short_size(int w, int h, int s, int *ow, int *oh) {
    if (w <= h) *ow = s, *oh = (int)((int64_t)h * s / w);
    else *oh = s, *ow = (int)((int64_t)w * s / h);
}

const bench_variant BV_CAT(bench_variant_, BENCH_VARIANT) = {
    BV_STR(BENCH_VARIANT),
#ifdef RECIO_TURBOJPEG
    "libjpeg-turbo",
#else
    "stb_image",
#endif
    bv_kernels,
    bv_iter_epoch, bv_records_open, bv_records_next, bv_records_close, bv_decode, bv_free_pixels,
    bv_transform_new, bv_transform_apply, bv_transform_free, bv_resize, recio_checksum, bv_short_size};
