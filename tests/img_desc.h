/* The tests' shorthands over the desc forms of decode, parse and apply (recio_image_decode_desc,
   recio_transform_parse_desc, recio_transform_apply_desc): each fills one desc from the arguments the
   removed variants took (same inputs, same expected values in the tests) and copies the desc's
   RECIO_ERRMSG_SIZE words into the caller's (errmsg, cap) buffer. Include after recio.h. */
#ifndef RECIO_TEST_IMG_DESC_H
#define RECIO_TEST_IMG_DESC_H
#include <stdio.h>
#include <string.h>
#ifndef RECIO_NO_IMAGE /* a build without the image ops has none of these calls */

/* The decode hints and scratch of an encoded apply (what recio_encoded_desc carried). */
typedef struct t_enc {
    int channels;
    void *scratch;
    size_t scratch_size;
    int full_scale;
} t_enc;

static inline void t_words(char *errmsg, size_t cap, const char *msg) {
    size_t n = strlen(msg);
    if (!errmsg || !cap) return;
    if (n >= cap) n = cap - 1; /* cut, as the (errmsg, size) variants cut */
    memcpy(errmsg, msg, n);
    errmsg[n] = 0;
}

static inline recio_err t_decode_scaled(recio_image *out, const void *b, size_t n, int channels, int min_short, char *errmsg,
                                        size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_decode_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.bytes = b, d.size = n, d.channels = channels, d.min_short = min_short, d.errmsg = msg;
    e = recio_image_decode_desc(out, &d);
    t_words(errmsg, cap, msg);
    return e;
}

static inline recio_err t_decode_ex(recio_image *out, const void *b, size_t n, int channels, char *errmsg, size_t cap) {
    return t_decode_scaled(out, b, n, channels, 0, errmsg, cap);
}

static inline recio_err t_mask_decode(recio_image *out, const void *b, size_t n, char *errmsg, size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_decode_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.bytes = b, d.size = n, d.mask = 1, d.errmsg = msg;
    e = recio_image_decode_desc(out, &d);
    t_words(errmsg, cap, msg);
    return e;
}

/* desc may be NULL (default allocator). */
static inline recio_err t_parse_ex(recio_transform **t, const char *spec, const recio_transform_desc *desc, char *errmsg,
                                   size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_transform_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    d.errmsg = msg;
    e = recio_transform_parse_desc(t, spec, &d);
    t_words(errmsg, cap, msg);
    return e;
}

static inline recio_err t_apply_scratch(const recio_transform *t, const recio_image *in, recio_image *out, uint64_t seed,
                                        void *scratch, size_t scratch_size) {
    recio_apply_desc d;
    memset(&d, 0, sizeof d);
    d.image = in, d.out = out, d.seed = seed, d.scratch = scratch, d.scratch_size = scratch_size;
    return recio_transform_apply_desc(t, &d);
}

/* The two halves of recio_transform_query, as the tests ask them one at a time. */
static inline size_t t_scratch_size(const recio_transform *t, int w, int h, int channels) {
    recio_transform_info i;
    recio_transform_query(t, w, h, channels, &i);
    return i.scratch_size;
}

static inline recio_err t_output_shape(const recio_transform *t, int w, int h, int channels, recio_image *shape) {
    recio_transform_info i;
    recio_err e = recio_transform_query(t, w, h, channels, &i);
    *shape = i.shape;
    return e;
}

/* Boxes and mask from `targets` (may be NULL), input an image. */
static inline recio_err t_apply_ex(const recio_transform *t, const recio_image *in, recio_image *out, uint64_t seed,
                                   const recio_apply_desc *targets) {
    recio_apply_desc d;
    memset(&d, 0, sizeof d);
    if (targets) d = *targets;
    d.image = in, d.out = out, d.seed = seed;
    return recio_transform_apply_desc(t, &d);
}

/* Encoded input with hints `enc` (may be NULL) and boxes and mask from `targets` (may be NULL). */
static inline recio_err t_apply_encoded_ex(const recio_transform *t, const void *b, size_t n, recio_image *out, uint64_t seed,
                                           const t_enc *enc, const recio_apply_desc *targets, char *errmsg, size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_apply_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    if (targets) d = *targets;
    d.image = NULL, d.bytes = b, d.size = n, d.out = out, d.seed = seed, d.errmsg = msg;
    d.scratch = enc ? enc->scratch : NULL, d.scratch_size = enc ? enc->scratch_size : 0;
    d.channels = enc ? enc->channels : 0, d.full_scale = enc ? enc->full_scale : 0;
    e = recio_transform_apply_desc(t, &d);
    t_words(errmsg, cap, msg);
    return e;
}

static inline recio_err t_apply_encoded(const recio_transform *t, const void *b, size_t n, recio_image *out, uint64_t seed,
                                        const t_enc *enc, char *errmsg, size_t cap) {
    return t_apply_encoded_ex(t, b, n, out, seed, enc, NULL, errmsg, cap);
}

static inline recio_err t_boxes_check(const float *boxes, int count, int stride, int *bad, char *errmsg, size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_err e = recio_boxes_check(boxes, count, stride, bad, errmsg ? msg : NULL);
    if (errmsg) t_words(errmsg, cap, msg);
    return e;
}
#endif
#endif
