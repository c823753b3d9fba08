/* libFuzzer harness: recio_transform_apply_desc with boxes and a mask, all from the input (a small
   image, up to 8 objects of 5..7 floats, any float bits, a mask of a few labels, a chain from a table
   or the input's own spec text). Beyond crashes it checks recio.h's promises on what apply_ex gives:
   every kept box is finite, inside [0,1] and ordered (xmin <= xmax, ymin <= ymax), its extra floats
   carried unchanged; no more objects come out than went in; every mask label is one of the input's
   or the fill; the pixels are those of plain recio_transform_apply with the same seed (unless boxes
   steer a random_bbox_crop/_cover); and the
   encoded path (the image as a PNG, encoded bytes in the same desc) gives the same pixels, boxes
   and mask as decode-then-apply. */
#include "recio.h"
#include "../img_desc.h"
#include "tests/image_write.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FA_MAXBOX 8
#define FA_FAIL() (fprintf(stderr, "fuzz_apply: check at line %d failed\n", __LINE__), __builtin_trap())

static const char *const fa_specs[] = {
    "identity", "flip", "random_flip(0.5)", "resize(7,5)", "center_crop(3)", "random_resized_crop(6)",
    "random_crop(3)", "rotate(30)", "pad(2)", "shear_x(0.3)", "random_bbox_crop", "random_expand(2.5) resize(5,5)",
    "random_bbox_cover(0.5,0.2,0.9,0.5,2,20)", "resize_short(5) center_crop(4) random_flip(0.5)", "brightness(0.5) flip",
    "random_apply(0.5, rotate(10) shear_y(0.2)) resize(6,4) float chw",
};

typedef struct fa_in {
    const uint8_t *p;
    size_t n;
} fa_in;

static uint8_t fa_byte(fa_in *in) {
    uint8_t b = 0;
    if (in->n) b = *in->p++, in->n--;
    return b;
}

/* A coordinate: mostly near [0,1] (so boxes survive and move), sometimes any float bits. */
static float fa_float(fa_in *in, int raw) {
    uint32_t u = 0;
    float f;
    int i;
    if (!raw) return ((float)fa_byte(in) - 32.0f) / 192.0f;
    for (i = 0; i < 4; i++) u |= (uint32_t)fa_byte(in) << 8 * i;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct fa_res {
    recio_image out, mask;
    float boxes[FA_MAXBOX * 7];
    int count;
    recio_err err;
} fa_res;

static void fa_res_free(fa_res *r) {
    recio_image_free(&r->out);
    recio_image_free(&r->mask);
}

static void fa_desc(recio_apply_desc *d, fa_res *r, const float *boxes, int count, int stride, const recio_image *mask, int fill) {
    memset(d, 0, sizeof *d);
    memset(r, 0, sizeof *r);
    if (count) d->boxes = boxes, d->count = count, d->stride = stride, d->boxes_out = r->boxes, d->count_out = &r->count;
    if (mask) d->mask = mask, d->mask_out = &r->mask;
    d->mask_fill = fill;
}

static int fa_same_img(const recio_image *a, const recio_image *b) {
    size_t n = recio_image_bytes(a);
    return a->width == b->width && a->height == b->height && a->channels == b->channels && a->dtype == b->dtype &&
           a->layout == b->layout && n == recio_image_bytes(b) && (n == 0 || memcmp(a->data, b->data, n) == 0);
}

/* What apply_ex promises about its boxes and mask. */
static void fa_check(const fa_res *r, const float *boxes, int count, int stride, const recio_image *mask, int fill) {
    int i, j, k, x, y;
    if (r->count < 0 || r->count > count) FA_FAIL();
    for (i = 0; i < r->count; i++) {
        const float *b = r->boxes + i * stride;
        for (j = 1; j < 5; j++)
            if (!isfinite(b[j]) || b[j] < 0.0f || b[j] > 1.0f) FA_FAIL();
        if (b[1] > b[3] || b[2] > b[4]) FA_FAIL();
        /* kept objects come in input order: find its source, whose class and extras it carries */
        for (k = 0; k < count; k++)
            if (memcmp(&boxes[k * stride], &b[0], 4) == 0 &&
                (stride == 5 || memcmp(&boxes[k * stride + 5], &b[5], 4 * (size_t)(stride - 5)) == 0))
                break;
        if (k == count) FA_FAIL();
    }
    if (!mask) return;
    if (!r->mask.data || r->mask.width != r->out.width || r->mask.height != r->out.height) FA_FAIL();
    for (y = 0; y < r->mask.height; y++)
        for (x = 0; x < r->mask.width; x++) {
            unsigned char v = ((const unsigned char *)r->mask.data)[(size_t)y * r->mask.stride + (size_t)x];
            int seen = v == (fill == 0 ? 255 : fill == RECIO_MASK_FILL_ZERO ? 0 : fill);
            size_t q;
            for (q = 0; !seen && q < (size_t)mask->width * (size_t)mask->height; q++)
                seen = ((const unsigned char *)mask->data)[q] == v;
            if (!seen) FA_FAIL();
        }
}

static void fa_run(const recio_transform *t, const recio_image *img, const float *boxes, int count, int stride,
                   const recio_image *mask, int fill, uint64_t seed, int bbox_ops) {
    static t_mem_out png;
    recio_apply_desc d;
    t_enc ed;
    fa_res a, e;
    recio_image plain;
    char msg[256];
    fa_desc(&d, &a, boxes, count, stride, mask, fill);
    a.err = t_apply_ex(t, img, &a.out, seed, &d);
    memset(&plain, 0, sizeof plain);
    if (a.err == RECIO_OK) {
        fa_check(&a, boxes, count, stride, mask, fill);
        /* the pixels do not depend on the mask, nor on the boxes but through the ops that draw their
           crop from them (random_bbox_crop, random_bbox_cover) */
        if ((!count || !bbox_ops) && recio_transform_apply(t, img, &plain, seed) == RECIO_OK && !fa_same_img(&a.out, &plain)) FA_FAIL();
        recio_image_free(&plain);
    }
    png.n = 0;
    if (img->dtype == RECIO_U8 &&
        stbi_write_png_to_func(t_to_mem, &png, img->width, img->height, img->channels, img->data, (int)img->stride) &&
        png.n <= (int)sizeof png.b) {
        memset(&ed, 0, sizeof ed);
        ed.channels = img->channels;
        fa_desc(&d, &e, boxes, count, stride, mask, fill);
        e.err = t_apply_encoded_ex(t, png.b, (size_t)png.n, &e.out, seed, &ed, &d, msg, sizeof msg);
        if (e.err != a.err) FA_FAIL();
        if (e.err == RECIO_OK && (!fa_same_img(&a.out, &e.out) || e.count != a.count ||
                                  memcmp(a.boxes, e.boxes, sizeof(float) * (size_t)(a.count * stride)) != 0 ||
                                  (mask && !fa_same_img(&a.mask, &e.mask))))
            FA_FAIL();
        fa_res_free(&e);
    }
    fa_res_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fa_in in;
    recio_transform *t = NULL;
    recio_image img, mask;
    float boxes[FA_MAXBOX * 7];
    uint8_t labels[4];
    uint64_t seed = 0;
    char spec[512], msg[200];
    int w, h, c, count, stride, fill, flags, i;
    size_t q;
    if (size < 8 || size > 4096) return 0;
    in.p = data;
    in.n = size;
    flags = fa_byte(&in);
    w = 1 + fa_byte(&in) % 16;
    h = 1 + fa_byte(&in) % 16;
    c = flags & 1 ? 3 : 1;
    count = fa_byte(&in) % (FA_MAXBOX + 1);
    stride = 5 + fa_byte(&in) % 3;
    fill = fa_byte(&in);
    fill = fill == 254 ? RECIO_MASK_FILL_ZERO : fill;
    for (i = 0; i < 4; i++) seed |= (uint64_t)fa_byte(&in) << 8 * i;
    for (i = 0; i < count * stride; i++) boxes[i] = fa_float(&in, flags & 2);
    for (i = 0; i < 4; i++) labels[i] = fa_byte(&in);
    if (recio_image_alloc(&img, w, h, c, RECIO_U8, RECIO_HWC, NULL) != RECIO_OK) return 0;
    for (q = 0; q < recio_image_bytes(&img); q++) ((unsigned char *)img.data)[q] = (unsigned char)(fa_byte(&in) ^ (q * 29));
    if (recio_image_alloc(&mask, w, h, 1, RECIO_U8, RECIO_HWC, NULL) != RECIO_OK) {
        recio_image_free(&img);
        return 0;
    }
    for (q = 0; q < (size_t)w * (size_t)h; q++) ((unsigned char *)mask.data)[q] = labels[(q * 7 + (flags >> 5)) % 4];
    if (flags & 16) { /* the rest of the input is the chain */
        q = in.n < sizeof spec - 1 ? in.n : sizeof spec - 1;
        memcpy(spec, in.p, q);
        spec[q] = 0;
    } else {
        strcpy(spec, fa_specs[(flags >> 5 | (flags & 4) << 1) % (sizeof fa_specs / sizeof fa_specs[0])]);
    }
    if (t_parse_ex(&t, spec, NULL, msg, sizeof msg) == RECIO_OK) {
        fa_run(t, &img, boxes, count, stride, flags & 8 ? &mask : NULL, fill, seed, strstr(spec, "bbox") != NULL);
        recio_transform_free(t);
    }
    recio_image_free(&img);
    recio_image_free(&mask);
    return 0;
}
