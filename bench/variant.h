/* Build variants of recio in one benchmark program. bench/variant.c includes the implementation as a
   private copy (RECIO_STATIC) and is compiled once per variant with that variant's flags, so one
   process can time, say, the libjpeg-turbo and the stb-only library, or the SIMD and the
   RECIO_NO_SIMD kernels, in interleaved rounds: machine load then weighs on both sides of a ratio
   alike. Each copy exports one table, bench_variant_NAME:
     turbo   RECIO_TURBOJPEG when libjpeg-turbo links (the default build), best kernel column
     stb     stb_image decoder (JPEG=stb), best kernel column
     sse2    RECIO_NO_AVX2 (x86 only): the SSE2 column
     scalar  RECIO_NO_SIMD: the scalar column (and stb's plain C decoder) */
#ifndef RECIO_BENCH_VARIANT_H
#define RECIO_BENCH_VARIANT_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_variant {
    const char *name;
    const char *decoder; /* "libjpeg-turbo" or "stb_image" */
    const char *(*kernels)(void); /* the kernel column this copy runs: "avx2", "sse2", "neon", "scalar" */
    /* One epoch of the iterator (spec, batch, `workers` threads or pull mode with 0, checksums on or
       off): images/s, timed from the first recio_iter_next to RECIO_END; *images counts them and
       *cpu_rate is images per CPU second of the calling thread (pull mode: all the work). -1 on
       error (printed). */
    double (*iter_epoch)(const char *uris, const char *spec, unsigned batch, unsigned workers, int checksums, size_t *images,
                         double *cpu_rate);
    /* Records of a .rec: each image record's encoded image (IRHeader skipped); NULL / -1 on error.
       `next` returns 1 with a record, 0 at the end; the bytes stay valid until the next call. */
    void *(*records_open)(const char *path);
    int (*records_next)(void *r, const unsigned char **img, size_t *n);
    void (*records_close)(void *r);
    /* Full-size decode to 3-channel u8 HWC (malloc'd through recio; free with free_pixels). 0 = ok. */
    int (*decode)(const void *bytes, size_t n, unsigned char **px, int *w, int *h);
    void (*free_pixels)(unsigned char *px);
    /* A transform spec ending in a 3x224x224 f32 CHW tensor, applied to decoded u8 RGB pixels into
       `out` with recio_transform_apply_desc (scratch kept in the handle, grown when needed). */
    void *(*transform_new)(const char *spec);
    int (*transform_apply)(void *t, const unsigned char *px, int w, int h, float *out, uint64_t seed);
    void (*transform_free)(void *t);
    /* u8 RGB w x h -> ow x oh, LINEAR (recio_image_resize). 0 = ok. */
    int (*resize)(const unsigned char *px, int w, int h, unsigned char *out, int ow, int oh);
    uint64_t (*checksum)(const void *p, size_t n, size_t elem_size); /* recio_checksum */
    void (*resize_short_size)(int w, int h, int s, int *ow, int *oh);
} bench_variant;

extern const bench_variant bench_variant_turbo, bench_variant_stb, bench_variant_scalar;
#if defined(__x86_64__) || defined(__i386__)
extern const bench_variant bench_variant_sse2;
#endif

#ifdef __cplusplus
}
#endif
#endif
