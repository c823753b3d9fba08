/* Issue 24's error walk, image side: every public fallible call of IMAGE OPS and RANDOM POLICIES AND
   TRANSFORM SPEC given a bad argument returns the code for its cause (RECIO_ERR_ARG for a misuse,
   RECIO_ERR_NOMEM only for a failed allocation, RECIO_ERR_LIMIT over RECIO_MAX_PIXELS,
   RECIO_ERR_SMALL for a caller's buffer too small, RECIO_ERR_DECODE / _SPEC for bad data) and, where
   the call has an errmsg (the desc forms, recio_boxes_check), words that name the op and the sizes.
   The image ops themselves have no errmsg: their code is all they say. Expected words by hand. */
#include "recio.h"
#include "test.h"
#include <stdint.h>

static int has(const char *msg, const char *want) {
    if (strstr(msg, want)) return 1;
    fprintf(stderr, "  said \"%s\", want \"%s\"\n", msg, want);
    return 0;
}

static void *no_alloc(size_t n, void *user) {
    (void)n, (void)user;
    return NULL;
}
static void no_free(void *p, void *user) { (void)p, (void)user; }

static recio_image small_u8(void) {
    recio_image img = {0};
    if (recio_image_alloc(&img, 8, 6, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK) memset(img.data, 100, recio_image_bytes(&img));
    return img;
}

/* The helpers and every image op: a NULL or invalid input is RECIO_ERR_ARG; a failed allocation
   RECIO_ERR_NOMEM; a wrapped output of the wrong shape RECIO_ERR_ARG; u8-only ops on f32 UNSUPPORTED. */
static void test_image_ops(void) {
    static const float m[6] = {1, 0, 0, 0, 1, 0}, alpha[3] = {0, 0, 0}, mean[4] = {0}, sd[4] = {1, 1, 1, 1};
    recio_image in = small_u8(), bad = {0}, out = {0}, f = {0};
    recio_allocator none = {no_alloc, no_free, NULL};
    float buf[4];
    recio_image wrong = recio_image_wrap(buf, 1, 1, 3, RECIO_U8, RECIO_HWC, 0);
    CHECK_EQ_INT(recio_image_alloc(&out, 0, 6, 3, RECIO_U8, RECIO_HWC, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_alloc(&out, 8, 6, 2, RECIO_U8, RECIO_HWC, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_alloc(&out, 8, 6, 3, RECIO_U8, RECIO_HWC, &none), RECIO_ERR_NOMEM);
    CHECK_EQ_INT(recio_image_copy(&bad, &out), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_copy(&in, &wrong), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_crop(&in, &out, 4, 0, 5, 6), RECIO_ERR_ARG); /* 4 + 5 > 8 */
    CHECK_EQ_INT(recio_image_center_crop(&in, &out, 9, 6), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_flip(&bad, &out), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_resize(&in, &out, 0, 4, RECIO_LINEAR), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_resize(&in, &wrong, 4, 4, RECIO_LINEAR), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_resize_short(&in, &out, -1, RECIO_LINEAR), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_affine(&bad, &out, m, RECIO_BORDER_CONSTANT, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_rotate(&bad, &out, 10, RECIO_BORDER_CONSTANT, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_pad(&in, &out, -1, 0, 0, 0, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_erase(&bad, &out, 0, 0, 1, 1, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_gaussian_blur(&in, &out, 4, 1), RECIO_ERR_ARG); /* even ksize */
    CHECK_EQ_INT(recio_image_brightness(&bad, &out, 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_contrast(&bad, &out, 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_saturation(&bad, &out, 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_hue(&bad, &out, 0.1f), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_lighting(&bad, &out, alpha), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_gray(&bad, &out), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_bgr(&bad, &out), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_convert(&bad, &out, RECIO_F32, 1, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_normalize(&bad, &out, mean, sd), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_to_chw(&bad, &out), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_convert(&in, &f, RECIO_F32, 1, 0), RECIO_OK);
    CHECK_EQ_INT(recio_image_resize(&f, &out, 4, 4, RECIO_LINEAR), RECIO_ERR_UNSUPPORTED); /* u8 HWC only */
    CHECK(out.data == NULL); /* nothing left behind by a failed op */
    recio_image_free(&f);
    recio_image_free(&in);
}

/* Decode: arguments, empty, unknown format, a header over RECIO_MAX_PIXELS (LIMIT), a mask of the
   wrong kind, a failing allocator (NOMEM); each with its words. */
static void test_decode(void) {
    static const unsigned char junk[16] = "not an image...";
    char msg[RECIO_ERRMSG_SIZE];
    recio_image img = {0};
    recio_decode_desc d;
    size_t n = 0;
    unsigned char *png = t_slurp("tests/data/image/retina.png", &n), *jpg;
    int w, h, c;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_image_decode_desc(&img, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_image_decode(NULL, junk, sizeof junk, 3), RECIO_ERR_ARG);
    d.bytes = junk, d.size = sizeof junk, d.channels = 2;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "decode: channels 2: decode to 0 (as stored), 1, 3 or 4 channels"));
    d.channels = 3, d.size = 0;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_DECODE);
    CHECK(has(msg, "decode: empty image (0 bytes)"));
    d.size = sizeof junk;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_DECODE);
    CHECK(has(msg, "decode: unsupported image format"));
    CHECK_EQ_INT(recio_image_info(junk, sizeof junk, &w, &h, &c), RECIO_ERR_DECODE);
    CHECK(png && n > 24);
    if (!png) return;
    d.bytes = png, d.size = n, d.mask = 1, d.channels = 3;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "mask: channels 3: a mask decodes to 1 channel"));
    d.channels = 0;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_DECODE); /* an RGB PNG is not a label mask */
    CHECK(has(msg, "mask: ") && has(msg, "not a label mask"));
    d.mask = 0, d.alloc.alloc = no_alloc, d.alloc.free = no_free;
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_NOMEM);
    CHECK(has(msg, "decode: out of memory"));
    memset(&d.alloc, 0, sizeof d.alloc);
    memcpy(png + 16, "\0\0\x4e\x20\0\0\x4e\x20", 8); /* 20000 x 20000 claimed */
    CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_ERR_LIMIT);
    CHECK(has(msg, "decode: 20000x20000 PNG is more than RECIO_MAX_PIXELS"));
    CHECK(img.data == NULL);
    free(png);
    jpg = t_slurp("tests/data/photos/astronaut-375x500.jpg", &n);
    CHECK(jpg != NULL);
    if (jpg) {
        d.bytes = jpg, d.size = n, d.channels = 3;
        CHECK_EQ_INT(recio_image_decode_desc(&img, &d), RECIO_OK);
        CHECK(msg[0] == 0); /* "" after success */
        recio_image_free(&img);
        free(jpg);
    }
}

/* Parse: NULL arguments, a bad spec (line:column, the op, the nearest op), a failing allocator. */
static void test_parse(void) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_transform *t = (recio_transform *)&msg;
    recio_transform_desc d;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_transform_parse(NULL, "flip"), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_transform_parse_desc(&t, NULL, &d), RECIO_ERR_ARG);
    CHECK(t == NULL && has(msg, "spec: the spec is NULL"));
    CHECK_EQ_INT(recio_transform_parse_desc(&t, "resize(10)", &d), RECIO_ERR_SPEC);
    CHECK(t == NULL && has(msg, "spec:1:1: resize: too few arguments"));
    CHECK_EQ_INT(recio_transform_parse_desc(&t, "flip resize_shrt(3)", &d), RECIO_ERR_SPEC);
    CHECK(has(msg, "spec:1:6: unknown op 'resize_shrt' (did you mean 'resize_short'?)"));
    d.alloc.alloc = no_alloc, d.alloc.free = no_free;
    CHECK_EQ_INT(recio_transform_parse_desc(&t, "flip", &d), RECIO_ERR_NOMEM);
    CHECK(has(msg, "spec: out of memory"));
}

/* Apply: the desc's misuses, the op's own words with sizes, over the pixel limit (LIMIT), scratch
   too small (SMALL, with both sizes), a mask of the wrong size and boxes that are not boxes (ARG). */
static void test_apply(void) {
    char msg[RECIO_ERRMSG_SIZE], want[160];
    recio_image in = small_u8(), out = {0}, mask = {0}, mask_out = {0};
    recio_transform *t = NULL, *big = NULL, *norm = NULL;
    recio_apply_desc d;
    recio_transform_info shape;
    unsigned char scratch[64];
    float box[5] = {0, 0.5f, 0.1f, 0.2f, 0.9f}, box_out[5]; /* xmin > xmax */
    int kept = 0;
    size_t need;
    CHECK(recio_transform_parse(&t, "center_crop(10,4)") == RECIO_OK);
    CHECK(recio_transform_parse(&big, "pad(30000)") == RECIO_OK);
    CHECK(recio_transform_parse(&norm, "resize(16,16) normalize(imagenet) chw") == RECIO_OK);
    if (!t || !big || !norm) return;
    CHECK_EQ_INT(recio_transform_apply(NULL, &in, &out, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_transform_apply_desc(t, NULL), RECIO_ERR_ARG);
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_transform_apply_desc(t, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: no output image (out)"));
    d.out = &out;
    CHECK_EQ_INT(recio_transform_apply_desc(t, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: no input: give an image or encoded bytes"));
    d.image = &in, d.bytes = box;
    CHECK_EQ_INT(recio_transform_apply_desc(t, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: both an image and encoded bytes"));
    d.bytes = NULL;
    CHECK_EQ_INT(recio_transform_apply_desc(t, &d), RECIO_ERR_ARG); /* the op and the sizes */
    CHECK(has(msg, "transform: center_crop(10,4) cannot take the 8x6 image (WxH, 3 channels)"));
    CHECK(out.data == NULL);
    CHECK_EQ_INT(recio_transform_apply_desc(big, &d), RECIO_ERR_LIMIT);
    CHECK(has(msg, "transform: pad would make a 60008x60006 image, more than RECIO_MAX_PIXELS"));
    CHECK_EQ_INT(recio_transform_query(big, 8, 6, 3, &shape), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_transform_query(NULL, 8, 6, 3, &shape), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_transform_query(norm, 8, 6, 3, NULL), RECIO_ERR_ARG);
    {
        float tensor[3 * 16 * 16];
        recio_image o = recio_image_wrap(tensor, 16, 16, 3, RECIO_F32, RECIO_CHW, 0);
        d.out = &o, d.scratch = scratch, d.scratch_size = sizeof scratch;
        CHECK_EQ_INT(recio_transform_query(norm, 8, 6, 3, &shape), RECIO_OK);
        need = shape.scratch_size;
        snprintf(want, sizeof want, "transform: scratch too small: need %llu bytes, have 64", (unsigned long long)need);
        CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_SMALL);
        CHECK(has(msg, want));
        d.scratch = NULL;
        CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
        CHECK(has(msg, "transform: scratch_size without scratch"));
        d.scratch_size = 0;
        CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_OK);
        CHECK(msg[0] == 0);
        d.out = &out;
    }
    CHECK(recio_image_alloc(&mask, 4, 4, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    d.mask = &mask, d.mask_out = &mask_out;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: mask: not the input's size (mask 4x4, input 8x6)"));
    d.mask = NULL, d.mask_out = NULL;
    d.boxes = box, d.count = 1, d.boxes_out = box_out, d.count_out = &kept;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: boxes: object 0: xmin > xmax (an inverted box)"));
    d.count_out = NULL;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: boxes: boxes, boxes_out and count_out go together"));
    d.count_out = &kept, d.stride = 3;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "transform: boxes: stride < 5"));
    memset(&d, 0, sizeof d); /* encoded input: the decoder's words */
    d.bytes = "junk", d.size = 4, d.out = &out, d.errmsg = msg;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_DECODE);
    CHECK(has(msg, "decode: unsupported image format"));
    d.channels = 2;
    CHECK_EQ_INT(recio_transform_apply_desc(norm, &d), RECIO_ERR_ARG);
    CHECK(has(msg, "decode: channels 2"));
    recio_image_free(&mask);
    recio_image_free(&in);
    recio_transform_free(t);
    recio_transform_free(big);
    recio_transform_free(norm);
}

static void test_boxes_check(void) {
    char msg[RECIO_ERRMSG_SIZE];
    float b[2 * 5] = {0, 0.1f, 0.1f, 0.5f, 0.5f, 1, 0.1f, 0.8f, 0.5f, 0.5f}; /* object 1: ymin > ymax */
    int bad = 0;
    CHECK_EQ_INT(recio_boxes_check(b, 2, 5, &bad, msg), RECIO_ERR_ARG);
    CHECK(bad == 1 && has(msg, "object 1: ymin > ymax (an inverted box)"));
    CHECK_EQ_INT(recio_boxes_check(b, 1, 4, &bad, msg), RECIO_ERR_ARG);
    CHECK(has(msg, "stride 4 < 5"));
    CHECK_EQ_INT(recio_boxes_check(NULL, 2, 5, &bad, msg), RECIO_ERR_ARG);
    CHECK(has(msg, "no boxes (count 2)"));
    CHECK_EQ_INT(recio_boxes_check(b, -1, 5, &bad, msg), RECIO_ERR_ARG);
    CHECK(has(msg, "count -1 < 0"));
    CHECK_EQ_INT(recio_boxes_check(b, 1, 5, &bad, msg), RECIO_OK);
    CHECK(bad == -1 && msg[0] == 0);
}

int main(void) {
    RUN(test_image_ops);
    RUN(test_decode);
    RUN(test_parse);
    RUN(test_apply);
    RUN(test_boxes_check);
    return t_done("api_errors_image");
}
