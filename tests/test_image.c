/* Image ops: decode, resize, crops, flips, colour, types. Expected values come from outside the
   library: by hand (noted at each test) or from /usr/bin/python3 + numpy implementing the published
   formulas (OpenCV INTER_LINEAR's half-pixel mapping, MXNet mx.image's colour augmenters); the
   scripts are quoted next to their numbers. */
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include <math.h>

static recio_image gray_from(const int *v, int w, int h) {
    recio_image img = {0};
    int i;
    recio_image_alloc(&img, w, h, 1, RECIO_U8, RECIO_HWC, NULL);
    for (i = 0; i < w * h; i++) ((unsigned char *)img.data)[(i / w) * img.stride + i % w] = (unsigned char)v[i];
    return img;
}

static int check_gray(const recio_image *img, const int *want, int tol) {
    int x, y, bad = 0;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++) {
            int d = (int)recio_image_get(img, x, y, 0) - want[y * img->width + x];
            if (d > tol || d < -tol) bad++;
        }
    return bad == 0;
}

/* 4x4 ramp v = 10x + 40y. Expected: numpy loop over OpenCV's mapping
   fx = (d + 0.5) * sw/dw - 0.5, x0 = floor(fx) clamped to [0, sw-1], weights (1-a, a), rounded half up. */
static const int ramp[16] = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150};

static void test_resize_ramp_down2(void) {
    static const int want[4] = {25, 45, 105, 125}; /* also by hand: means of 2x2 blocks */
    recio_image in = gray_from(ramp, 4, 4), out = {0};
    CHECK(recio_image_resize(&in, &out, 2, 2, RECIO_LINEAR) == RECIO_OK);
    CHECK(out.width == 2 && out.height == 2 && out.channels == 1 && out.owned);
    CHECK(check_gray(&out, want, 0));
    recio_image_free(&out);
    CHECK(recio_image_resize(&in, &out, 2, 2, RECIO_AREA) == RECIO_OK);
    CHECK(check_gray(&out, want, 0));
    recio_image_free(&out);
    recio_image_free(&in);
}

/* The ramp resized to w x h: within 1 of the float reference, equal to OpenCV's numbers. */
static void check_ramp(int w, int h, const int *numpy, const int *cv) {
    recio_image in = gray_from(ramp, 4, 4), out = {0};
    CHECK(recio_image_resize(&in, &out, w, h, RECIO_LINEAR) == RECIO_OK);
    CHECK(check_gray(&out, numpy, 1));
    CHECK(check_gray(&out, cv, 0));
    recio_image_free(&out);
    recio_image_free(&in);
}

static void test_resize_ramp_up2(void) {
    /* numpy float reference: 0, 2.5, 7.5, ... 30 per row (.5 rounded up here, so allow 1) */
    static const int numpy[64] = {0, 3, 8, 13, 18, 23, 28, 30, 10, 13, 18, 23, 28, 33, 38, 40, 30, 33, 38, 43, 48, 53, 58, 60,
                                  50, 53, 58, 63, 68, 73, 78, 80, 70, 73, 78, 83, 88, 93, 98, 100, 90, 93, 98, 103, 108, 113, 118, 120,
                                  110, 113, 118, 123, 128, 133, 138, 140, 120, 123, 128, 133, 138, 143, 148, 150};
    /* python3-opencv 4.6: cv2.resize(ramp.astype(np.uint8), (8, 8), interpolation=cv2.INTER_LINEAR);
       OpenCV's fixed point truncates the .5 ties, and recio follows it to the bit */
    static const int cv[64] = {0, 2, 7, 12, 17, 22, 27, 30, 10, 12, 17, 22, 27, 32, 37, 40, 30, 32, 37, 42, 47, 52, 57, 60,
                               50, 52, 57, 62, 67, 72, 77, 80, 70, 72, 77, 82, 87, 92, 97, 100, 90, 92, 97, 102, 107, 112, 117, 120,
                               110, 112, 117, 122, 127, 132, 137, 140, 120, 122, 127, 132, 137, 142, 147, 150};
    check_ramp(8, 8, numpy, cv);
}

static void test_resize_ramp_3x5(void) {
    /* numpy: [[1.667, 15, 28.333], [29.667, 43, 56.333], ...] rounded; cv2.resize (3, 5) gives the second table */
    static const int numpy[15] = {2, 15, 28, 30, 43, 56, 62, 75, 88, 94, 107, 120, 122, 135, 148};
    static const int cv[15] = {1, 15, 28, 29, 43, 56, 62, 75, 88, 93, 107, 120, 121, 135, 148};
    check_ramp(3, 5, numpy, cv);
}

static void test_resize_area_fraction(void) {
    /* By hand: 6 -> 4 pixels, each output covers 1.5 inputs: (0*1 + 30*.5)/1.5 = 10, (30*.5 + 60)/1.5 = 50,
       (90 + 120*.5)/1.5 = 100, (120*.5 + 150)/1.5 = 140. LINEAR instead samples 0.25, 1.75, 3.25, 4.75:
       7.5, 52.5, 97.5, 142.5 (cv2.resize with INTER_AREA / INTER_LINEAR gives these same numbers). */
    static const int row[6] = {0, 30, 60, 90, 120, 150}, area[4] = {10, 50, 100, 140}, lin[4] = {8, 53, 98, 143};
    recio_image in = gray_from(row, 6, 1), out = {0};
    CHECK(recio_image_resize(&in, &out, 4, 1, RECIO_AREA) == RECIO_OK);
    CHECK(check_gray(&out, area, 0));
    recio_image_free(&out);
    CHECK(recio_image_resize(&in, &out, 4, 1, RECIO_LINEAR) == RECIO_OK);
    CHECK(check_gray(&out, lin, 0));
    recio_image_free(&out);
    recio_image_free(&in);
}

/* OpenCV itself (python3-opencv 4.6, cv2.resize INTER_LINEAR) on a real photo, stored as raw bytes:
     im = cv2.cvtColor(cv2.imread('tests/data/photos/retina-120x90.jpg'), cv2.COLOR_BGR2RGB)
     cv2.resize(im, (61, 37), interpolation=cv2.INTER_LINEAR).tofile('tests/data/image/retina-cv-61x37.rgb')
     cv2.resize(im, (144, 108), interpolation=cv2.INTER_LINEAR).tofile('tests/data/image/retina-cv-144x108.rgb')
     cv2.resize(im, (50, 37), interpolation=cv2.INTER_AREA).tofile('tests/data/image/retina-cv-area-50x37.rgb')
   recio follows OpenCV's fixed point to the bit, so no difference is allowed. (stb and OpenCV decode
   JPEGs slightly differently, so both sides start from recio's own decode written out as PNG.) */
static void check_cv(const char *ref, const char *png, int w, int h, recio_filter f, int tol) {
    size_t n = 0, m = 0, i;
    unsigned char *want = t_slurp(ref, &n), *bytes = t_slurp(png, &m);
    recio_image in = {0}, out = {0};
    int worst = 0;
    CHECK(want && bytes);
    if (!want || !bytes) return;
    CHECK(recio_image_decode(&in, bytes, m, 3) == RECIO_OK);
    CHECK(recio_image_resize(&in, &out, w, h, f) == RECIO_OK);
    CHECK_EQ_INT(n, (size_t)w * h * 3);
    for (i = 0; i < n && out.data; i++) {
        int d = abs((int)((unsigned char *)out.data)[i] - (int)want[i]);
        if (d > worst) worst = d;
    }
    CHECK(worst <= tol);
    recio_image_free(&in);
    recio_image_free(&out);
    free(want);
    free(bytes);
}

static void test_resize_matches_opencv(void) {
    check_cv("tests/data/image/retina-cv-61x37.rgb", "tests/data/image/retina.png", 61, 37, RECIO_LINEAR, 0);
    check_cv("tests/data/image/retina-cv-144x108.rgb", "tests/data/image/retina.png", 144, 108, RECIO_LINEAR, 0);
    /* AREA: OpenCV sums in float at non-integer scales, recio in fixed point: within 1 */
    check_cv("tests/data/image/retina-cv-area-50x37.rgb", "tests/data/image/retina.png", 50, 37, RECIO_AREA, 1);
}

/* resize_short's size, without pixels: recio_transform_query (recio_resize_short_size went). */
static void resize_short_size(int w, int h, int s, int *ow, int *oh) {
    char spec[64];
    recio_transform *t = NULL;
    recio_image shape;
    *ow = *oh = -1;
    snprintf(spec, sizeof spec, "resize_short(%d)", s);
    if (recio_transform_parse(&t, spec) == RECIO_OK && t_output_shape(t, w, h, 3, &shape) == RECIO_OK)
        *ow = shape.width, *oh = shape.height;
    recio_transform_free(t);
}

static void test_resize_short_size(void) {
    int w, h;
    resize_short_size(500, 375, 256, &w, &h); /* floor(500*256/375) = floor(341.33) */
    CHECK(w == 341 && h == 256);
    resize_short_size(333, 500, 256, &w, &h); /* floor(500*256/333) = floor(384.38) */
    CHECK(w == 256 && h == 384);
    resize_short_size(300, 300, 224, &w, &h);
    CHECK(w == 224 && h == 224);
}

static void test_crop_views(void) {
    int v[20], i;
    recio_image in, view, v2;
    for (i = 0; i < 20; i++) v[i] = i;
    in = gray_from(v, 5, 4);
    CHECK(recio_image_crop(&in, &view, 1, 2, 3, 2) == RECIO_OK);
    CHECK(view.data == (unsigned char *)in.data + 2 * in.stride + 1 && !view.owned && view.stride == in.stride);
    CHECK(recio_image_get(&view, 0, 0, 0) == 11 && recio_image_get(&view, 2, 1, 0) == 18);
    CHECK(recio_image_crop(&in, &v2, 3, 0, 3, 1) == RECIO_ERR_ARG); /* 3 + 3 > 5 */
    CHECK(recio_image_crop(&in, &v2, 0, 3, 1, 2) == RECIO_ERR_ARG);
    CHECK(recio_image_crop(&in, &v2, -1, 0, 1, 1) == RECIO_ERR_ARG);
    CHECK(recio_image_crop(&in, &v2, 0, 0, 0, 1) == RECIO_ERR_ARG);
    CHECK(recio_image_crop(&in, &v2, 4, 3, 1, 1) == RECIO_OK && recio_image_get(&v2, 0, 0, 0) == 19);
    /* centre: ((5-2)/2, (4-3)/2) = (1, 0) with integer division */
    CHECK(recio_image_center_crop(&in, &v2, 2, 3) == RECIO_OK && recio_image_get(&v2, 0, 0, 0) == 1);
    recio_image_free(&view); /* a view: nothing freed, only cleared */
    CHECK(view.data == NULL && in.data != NULL);
    recio_image_free(&in);
}

static void fill_pattern(recio_image *img) {
    int x, y, c;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++)
            for (c = 0; c < img->channels; c++) recio_image_set(img, x, y, c, (float)((x * 7 + y * 13 + c * 29) % 251));
}

static int same_pixels(const recio_image *a, const recio_image *b) {
    int x, y, c;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels) return 0;
    for (y = 0; y < a->height; y++)
        for (x = 0; x < a->width; x++)
            for (c = 0; c < a->channels; c++)
                if (recio_image_get(a, x, y, c) != recio_image_get(b, x, y, c)) return 0;
    return 1;
}

static void test_flip_twice(void) {
    recio_dtype types[4] = {RECIO_U8, RECIO_F32, RECIO_I8, RECIO_F16};
    int t, l;
    for (t = 0; t < 4; t++)
        for (l = 0; l < 2; l++) {
            recio_image a = {0}, b = {0}, c = {0};
            CHECK(recio_image_alloc(&a, 7, 3, 3, types[t], (recio_layout)l, NULL) == RECIO_OK);
            fill_pattern(&a);
            CHECK(recio_image_flip(&a, &b) == RECIO_OK);
            CHECK(recio_image_get(&b, 0, 1, 2) == recio_image_get(&a, 6, 1, 2)); /* mirrored */
            CHECK(!same_pixels(&a, &b));
            CHECK(recio_image_flip(&b, &c) == RECIO_OK);
            CHECK(same_pixels(&a, &c));
            recio_image_free(&a);
            recio_image_free(&b);
            recio_image_free(&c);
        }
}

static void test_caller_buffers(void) {
    unsigned char buf[2 * 2 * 3 + 64];
    recio_image in = {0}, out;
    CHECK(recio_image_alloc(&in, 4, 4, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    fill_pattern(&in);
    out = recio_image_wrap(buf, 2, 2, 3, RECIO_U8, RECIO_HWC, 0);
    CHECK(out.stride == 6 && out.owned == NULL);
    CHECK(recio_image_resize(&in, &out, 2, 2, RECIO_LINEAR) == RECIO_OK);
    CHECK(out.data == buf && out.owned == NULL);
    CHECK(recio_image_resize(&in, &out, 3, 2, RECIO_LINEAR) == RECIO_ERR_ARG); /* wrong shape: refused */
    out = recio_image_wrap(buf, 2, 2, 3, RECIO_F32, RECIO_HWC, 0);
    CHECK(recio_image_resize(&in, &out, 2, 2, RECIO_LINEAR) == RECIO_ERR_ARG); /* wrong dtype */
    recio_image_free(&in);
}

static void test_normalize_exact(void) {
    /* By hand: (0 - 123.68)/58.395 = -2.117990, (255 - 116.28)/57.12 = 2.428571, (128 - 103.53)/57.375 = 0.426492 */
    const float mean[4] = {123.68f, 116.28f, 103.53f, 0}, std[4] = {58.395f, 57.12f, 57.375f, 1};
    int v[3] = {0, 255, 128};
    recio_image in = {0}, out = {0}, chw = {0};
    CHECK(recio_image_alloc(&in, 1, 1, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    ((unsigned char *)in.data)[0] = (unsigned char)v[0];
    ((unsigned char *)in.data)[1] = (unsigned char)v[1];
    ((unsigned char *)in.data)[2] = (unsigned char)v[2];
    CHECK(recio_image_normalize(&in, &out, mean, std) == RECIO_OK);
    CHECK(out.dtype == RECIO_F32);
    CHECK(fabs(recio_image_get(&out, 0, 0, 0) - -2.117990) < 1e-5);
    CHECK(fabs(recio_image_get(&out, 0, 0, 1) - 2.428571) < 1e-5);
    CHECK(fabs(recio_image_get(&out, 0, 0, 2) - 0.426492) < 1e-5);
    CHECK(recio_image_to_chw(&out, &chw) == RECIO_OK && chw.layout == RECIO_CHW && chw.stride == 4);
    CHECK(((float *)chw.data)[1] == recio_image_get(&out, 0, 0, 1));
    recio_image_free(&in);
    recio_image_free(&out);
    recio_image_free(&chw);
}

static void test_chw_layout(void) {
    /* by hand: a 2x1 RGB image [1 2 3 | 4 5 6] in CHW is [1 4 | 2 5 | 3 6] */
    recio_image in = {0}, out = {0};
    int i;
    CHECK(recio_image_alloc(&in, 2, 1, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (i = 0; i < 6; i++) ((unsigned char *)in.data)[i] = (unsigned char)(i + 1);
    CHECK(recio_image_to_chw(&in, &out) == RECIO_OK);
    CHECK(memcmp(out.data, "\1\4\2\5\3\6", 6) == 0);
    recio_image_free(&in);
    recio_image_free(&out);
}

/* Two pixels (10,200,30) and (250,5,128). Expected (numpy, MXNet mx.image formulas, rounded half up,
   clipped): coef = [0.299, 0.587, 0.114]; g = (src*coef).sum(2)
     gray           [124,124,124] [92,92,92]
     saturation .5  src*.5 + g*.5                                 [67,162,77]  [171,49,110]
     contrast .5    src*.5 + 3*(1-.5)/src.size * (src*coef).sum() [59,154,69]  [179,57,118]
     brightness 1.3 [13,255,39] [255,7,166]
     hue .25        HueJitterAug: src . (ityiq . bt . tyiq).T     [81,187,0]   [190,0,255]
     hue -.4                                                      [38,135,255] [160,108,0]
     lighting a=(.1,-.2,.3): src + (eigvec*a) . eigval            [6,197,28]   [246,2,126] */
static recio_image two_px(void) {
    static const unsigned char px[6] = {10, 200, 30, 250, 5, 128};
    recio_image img = {0};
    recio_image_alloc(&img, 2, 1, 3, RECIO_U8, RECIO_HWC, NULL);
    memcpy(img.data, px, 6);
    return img;
}

static int px_is(const recio_image *img, const unsigned char want[6]) {
    return img->data && memcmp(img->data, want, 6) == 0;
}

static void test_colour_golden(void) {
    static const unsigned char gray[6] = {124, 124, 124, 92, 92, 92}, sat[6] = {67, 162, 77, 171, 49, 110},
                               con[6] = {59, 154, 69, 179, 57, 118}, bri[6] = {13, 255, 39, 255, 7, 166},
                               hue1[6] = {81, 187, 0, 190, 0, 255}, hue2[6] = {38, 135, 255, 160, 108, 0},
                               lit[6] = {6, 197, 28, 246, 2, 126};
    const float alpha[3] = {0.1f, -0.2f, 0.3f};
    recio_image in = two_px(), o[7];
    memset(o, 0, sizeof o);
    CHECK(recio_image_gray(&in, &o[0]) == RECIO_OK && px_is(&o[0], gray));
    CHECK(recio_image_saturation(&in, &o[1], 0.5f) == RECIO_OK && px_is(&o[1], sat));
    CHECK(recio_image_contrast(&in, &o[2], 0.5f) == RECIO_OK && px_is(&o[2], con));
    CHECK(recio_image_brightness(&in, &o[3], 1.3f) == RECIO_OK && px_is(&o[3], bri));
    CHECK(recio_image_hue(&in, &o[4], 0.25f) == RECIO_OK && px_is(&o[4], hue1));
    CHECK(recio_image_hue(&in, &o[5], -0.4f) == RECIO_OK && px_is(&o[5], hue2));
    CHECK(recio_image_lighting(&in, &o[6], alpha) == RECIO_OK && px_is(&o[6], lit));
    {
        int i;
        for (i = 0; i < 7; i++) recio_image_free(&o[i]);
    }
    recio_image_free(&in);
}

static void test_colour_identities(void) {
    const float zero[3] = {0, 0, 0};
    recio_image in = {0}, o = {0};
    CHECK(recio_image_alloc(&in, 9, 5, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    fill_pattern(&in);
    CHECK(recio_image_hue(&in, &o, 0) == RECIO_OK && same_pixels(&in, &o));
    recio_image_free(&o);
    CHECK(recio_image_lighting(&in, &o, zero) == RECIO_OK && same_pixels(&in, &o));
    recio_image_free(&o);
    CHECK(recio_image_brightness(&in, &o, 1) == RECIO_OK && same_pixels(&in, &o));
    recio_image_free(&o);
    CHECK(recio_image_contrast(&in, &o, 1) == RECIO_OK && same_pixels(&in, &o));
    recio_image_free(&o);
    CHECK(recio_image_saturation(&in, &o, 1) == RECIO_OK && same_pixels(&in, &o));
    recio_image_free(&o);
    CHECK(recio_image_brightness(&in, &o, 0.5f) == RECIO_OK && !same_pixels(&in, &o));
    recio_image_free(&o);
    recio_image_free(&in);
}

/* One channel: g is the pixel. By hand on 10 and 200: brightness(1.5) 15 255, contrast(0.5) around
   the mean 105: 57.5 -> 58 and 152.5 -> 153, saturation and gray leave grey as it is; hue needs colour. */
static void test_colour_grey(void) {
    static const int v[2] = {10, 200};
    recio_image in = gray_from(v, 2, 1), o = {0};
    CHECK(recio_image_brightness(&in, &o, 1.5f) == RECIO_OK && recio_image_get(&o, 0, 0, 0) == 15 && recio_image_get(&o, 1, 0, 0) == 255);
    recio_image_free(&o);
    CHECK(recio_image_contrast(&in, &o, 0.5f) == RECIO_OK && recio_image_get(&o, 0, 0, 0) == 58 && recio_image_get(&o, 1, 0, 0) == 153);
    recio_image_free(&o);
    CHECK(recio_image_saturation(&in, &o, 0.3f) == RECIO_OK && recio_image_get(&o, 0, 0, 0) == 10 && recio_image_get(&o, 1, 0, 0) == 200);
    recio_image_free(&o);
    CHECK(recio_image_gray(&in, &o) == RECIO_OK && recio_image_get(&o, 1, 0, 0) == 200);
    recio_image_free(&o);
    CHECK(recio_image_hue(&in, &o, 0.1f) == RECIO_ERR_UNSUPPORTED && o.data == NULL);
    recio_image_free(&in);
}

static void test_rotate_pad(void) {
    recio_image in = {0}, r = {0}, f = {0}, p = {0}, t = {0};
    int x, y, ok = 1;
    CHECK(recio_image_alloc(&in, 5, 3, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    fill_pattern(&in);
    CHECK(recio_image_rotate(&in, &r, 0, RECIO_BORDER_CONSTANT, 0) == RECIO_OK && same_pixels(&in, &r));
    recio_image_free(&r);
    /* by hand: 180 degrees about the centre of a 5x3 image maps (x, y) to (4 - x, 2 - y) */
    CHECK(recio_image_rotate(&in, &r, 180, RECIO_BORDER_CONSTANT, 0) == RECIO_OK);
    for (y = 0; y < 3; y++)
        for (x = 0; x < 5; x++) ok &= recio_image_get(&r, x, y, 1) == recio_image_get(&in, 4 - x, 2 - y, 1);
    CHECK(ok);
    /* 90 degrees counter-clockwise of a 3x3 block: the right column becomes the top row */
    CHECK(recio_image_crop(&in, &t, 1, 0, 3, 3) == RECIO_OK);
    CHECK(recio_image_rotate(&t, &f, 90, RECIO_BORDER_CONSTANT, 0) == RECIO_OK);
    CHECK(recio_image_get(&f, 0, 0, 0) == recio_image_get(&t, 2, 0, 0) && recio_image_get(&f, 2, 0, 0) == recio_image_get(&t, 2, 2, 0));
    CHECK(recio_image_pad(&in, &p, 2, 2, 2, 2, 7) == RECIO_OK && p.width == 9 && p.height == 7);
    CHECK(recio_image_get(&p, 0, 0, 0) == 7 && recio_image_get(&p, 8, 6, 2) == 7 && recio_image_get(&p, 1, 3, 1) == 7);
    CHECK(recio_image_get(&p, 2, 2, 1) == recio_image_get(&in, 0, 0, 1) && recio_image_get(&p, 6, 4, 2) == recio_image_get(&in, 4, 2, 2));
    recio_image_free(&in);
    recio_image_free(&r);
    recio_image_free(&f);
    recio_image_free(&p);
}

static void test_convert_types(void) {
    /* IEEE half by hand: 1 = 0x3c00, -2 = 0xc000, 0.5 = 0x3800, 65504 = 0x7bff, 1/3 -> 0x3555 */
    recio_image in = {0}, o = {0}, i8 = {0};
    uint16_t *h;
    CHECK(recio_image_alloc(&in, 5, 1, 1, RECIO_F32, RECIO_HWC, NULL) == RECIO_OK);
    ((float *)in.data)[0] = 1;
    ((float *)in.data)[1] = -2;
    ((float *)in.data)[2] = 0.5f;
    ((float *)in.data)[3] = 65504;
    ((float *)in.data)[4] = 1.0f / 3;
    CHECK(recio_image_convert(&in, &o, RECIO_F16, 1, 0) == RECIO_OK && o.dtype == RECIO_F16 && o.stride == 10);
    h = (uint16_t *)o.data;
    CHECK(h[0] == 0x3c00 && h[1] == 0xc000 && h[2] == 0x3800 && h[3] == 0x7bff && h[4] == 0x3555);
    CHECK(recio_image_get(&o, 4, 0, 0) == 0.333251953125f); /* 0x3555 = 1365/4096 */
    /* i8: x*100 rounded and saturated: 100, -128 (from -200), 50, 127, 33 */
    CHECK(recio_image_convert(&in, &i8, RECIO_I8, 100, 0) == RECIO_OK);
    CHECK(memcmp(i8.data, "\x64\x80\x32\x7f\x21", 5) == 0);
    recio_image_free(&in);
    recio_image_free(&o);
    recio_image_free(&i8);
}

/* ---- decode ---- */
static const struct { const char *file; int w, h, c; } photos[] = {
    {"astronaut-375x500.jpg", 375, 500, 3}, {"astronaut-exif-rot90-400x300.jpg", 400, 300, 3},
    {"camera-gray-400x300.jpg", 400, 300, 1}, {"chelsea-333x500.png", 333, 500, 3},
    {"chelsea-500x375.jpg", 500, 375, 3}, {"chelsea-cmyk-300x400.jpg", 300, 400, 3},
    {"coffee-500x333.jpg", 500, 333, 3}, {"coffee-progressive-480x360.jpg", 480, 360, 3},
    {"hubble-1600x1200.jpg", 1600, 1200, 3}, {"retina-120x90.jpg", 120, 90, 3},
    {"rocket-640x480.jpg", 640, 480, 3}, {"rocket-alpha-256x256.png", 256, 256, 4},
};
#define NPHOTOS (sizeof photos / sizeof photos[0])

static unsigned char *photo(size_t i, size_t *n) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/photos/%s", photos[i].file);
    return t_slurp(path, n);
}

static void test_decode_photos(void) {
    size_t i, n;
    for (i = 0; i < NPHOTOS; i++) {
        unsigned char *b = photo(i, &n);
        recio_image img = {0}, one = {0};
        int w, h, c;
        CHECK(b != NULL);
        if (!b) continue;
        CHECK(recio_image_info(b, n, &w, &h, &c) == RECIO_OK && w == photos[i].w && h == photos[i].h);
        CHECK(recio_image_decode(&img, b, n, 0) == RECIO_OK);
        CHECK(img.width == photos[i].w && img.height == photos[i].h && img.channels == photos[i].c);
        CHECK(img.dtype == RECIO_U8 && img.layout == RECIO_HWC && img.stride == (size_t)img.width * img.channels);
        CHECK(recio_image_decode(&one, b, n, 1) == RECIO_OK && one.channels == 1);
        recio_image_free(&img);
        recio_image_free(&one);
        CHECK(recio_image_decode(&img, b, n, 4) == RECIO_OK && img.channels == 4);
        recio_image_free(&img);
        free(b);
    }
}

static void test_decode_alpha_and_gray(void) {
    size_t n = 0;
    unsigned char *b = photo(11, &n);
    recio_image img = {0};
    /* PIL: np.array(Image.open(f))[::32, 128, 3] = 0 32 64 96 128 160 192 224 (a vertical gradient) */
    CHECK(recio_image_decode(&img, b, n, 0) == RECIO_OK && img.channels == 4);
    CHECK(img.data && recio_image_get(&img, 128, 0, 3) == 0 && recio_image_get(&img, 128, 96, 3) == 96 &&
          recio_image_get(&img, 128, 224, 3) == 224);
    recio_image_free(&img);
    free(b);
    /* the grey JPEG keeps one channel as stored and gives R = G = B when asked for three */
    b = photo(2, &n);
    CHECK(recio_image_decode(&img, b, n, 3) == RECIO_OK);
    CHECK(img.data && recio_image_get(&img, 10, 10, 0) == recio_image_get(&img, 10, 10, 2));
    recio_image_free(&img);
    free(b);
}

static void test_decode_16bit_png(void) {
    /* Made with PIL: Image.fromarray(np.array([[0, 65535, 32896]], np.uint16)).save(f, 'PNG') (mode I;16).
       stb scales 16 to 8 bits as (v * 255 + 32767) / 65535: 0, 255, 128 (by hand). */
    size_t n = 0;
    unsigned char *b = t_slurp("tests/data/image/gray16-3x1.png", &n);
    recio_image img = {0};
    CHECK(b && recio_image_decode(&img, b, n, 0) == RECIO_OK);
    CHECK(img.width == 3 && img.height == 1 && img.channels == 1);
    CHECK(img.data && memcmp(img.data, "\0\377\200", 3) == 0);
    recio_image_free(&img);
    free(b);
}

static void test_decode_errors(void) {
    static const unsigned char junk[16] = "not an image!!!";
    char msg[128];
    recio_image img = {0};
    CHECK(t_decode_ex(&img, junk, sizeof junk, 3, msg, sizeof msg) == RECIO_ERR_DECODE);
    CHECK(strncmp(msg, "decode: ", 8) == 0 && strlen(msg) > 9);
    CHECK(img.data == NULL);
    CHECK(recio_image_decode(&img, junk, sizeof junk, 2) == RECIO_ERR_ARG);
    CHECK(recio_image_decode(&img, junk, 0, 3) == RECIO_ERR_DECODE);
}

/* A PNG whose header claims 20000 x 20000 pixels (IHDR width and height at bytes 16..23, edited by
   hand; stb itself accepts up to 2^30 bytes): refused from the header, before any allocation. */
static void test_decode_huge_header(void) {
    size_t n = 0;
    unsigned char *b = t_slurp("tests/data/image/gray16-3x1.png", &n);
    char msg[128];
    recio_image img = {0};
    CHECK(b && n > 24);
    if (!b) return;
    memcpy(b + 16, "\0\0\x4e\x20\0\0\x4e\x20", 8);
    CHECK(t_decode_ex(&img, b, n, 3, msg, sizeof msg) == RECIO_ERR_LIMIT); /* a limit, not damage */
    CHECK(strstr(msg, "20000x20000 PNG is more than RECIO_MAX_PIXELS") != NULL);
    free(b);
}

/* Huffman tables stb_image 2.27 mishandles (fixed upstream in 2.28), made by hand from a real JPEG;
   recio refuses each before stb sees it:
   - a DHT whose 16 counts add up to more than 256 symbols (stb writes past its table), also behind
     an extra 0xff before the SOI (stb skips it as fill) and declared one byte into the segment's end
     (stb reads the next table's counts past the segment);
   - a scan naming AC table 3, which no DHT defined (stb indexes with uninitialised codes).
   Then the fuzzer's own regressions (tests/data/fuzz/image/regress-*). */
static size_t find_marker(const unsigned char *b, size_t n, unsigned char m) {
    size_t i;
    for (i = 2; i + 22 < n; i++)
        if (b[i] == 0xff && b[i + 1] == m) return i;
    return 0;
}

static void expect_bad_huffman(const unsigned char *b, size_t n, const char *what) {
    char msg[128] = "";
    recio_image img = {0};
    recio_err e = t_decode_ex(&img, b, n, 3, msg, sizeof msg);
#ifdef RECIO_TURBOJPEG /* libjpeg-turbo decodes JPEG and refuses these itself, in its own words */
    const char *want = "decode: ";
#else
    const char *want = "bad Huffman table";
#endif
    if (e != RECIO_ERR_DECODE || !strstr(msg, want)) fprintf(stderr, "  %s: %s\n", what, msg);
    CHECK(e == RECIO_ERR_DECODE && strstr(msg, want) != NULL);
    CHECK(recio_image_info(b, n, NULL, NULL, NULL) == RECIO_ERR_DECODE); /* stb's header pass reads DHTs too */
    if (e == RECIO_OK) recio_image_free(&img);
}

static void test_decode_bad_huffman(void) {
    static const char *regress[] = {"regress-ff-fill-before-soi-dht-overflow.jpg", "regress-dht-table-past-segment-end.jpg",
                                    "regress-scan-uses-undefined-huffman-table.jpg"};
    size_t n = 0, i, at;
    unsigned char *b = t_slurp("tests/data/photos/chelsea-500x375.jpg", &n), *c;
    CHECK(b != NULL && (at = find_marker(b, n, 0xc4)) > 0);
    if (!b || !at) return;
    c = (unsigned char *)malloc(n + 1);
    memcpy(c, b, n);
    memset(c + at + 5, 255, 16);
    expect_bad_huffman(c, n, "counts of 255");
    c[0] = 0xff; /* the same behind a fill byte */
    memcpy(c + 1, b, n);
    memset(c + 1 + at + 5, 255, 16);
    expect_bad_huffman(c, n + 1, "fill byte before SOI");
    memcpy(c, b, n); /* first table ends one byte before the declared end: stb reads a second table there */
    {
        size_t first = 17, k;
        for (k = 0; k < 16; k++) first += c[at + 5 + k];
        c[at + 2] = (unsigned char)((first + 3) >> 8), c[at + 3] = (unsigned char)((first + 3) & 255);
        c[at + 4 + first] = 0x01;
        memset(c + at + 4 + first + 1, 40, 16);
    }
    expect_bad_huffman(c, n, "table past the segment");
    memcpy(c, b, n);
    at = find_marker(b, n, 0xda);
    CHECK(at > 0 && c[at + 4] >= 1);
    c[at + 6] = (unsigned char)((c[at + 6] & 0xf0) | 3); /* first component: AC table 3 */
    expect_bad_huffman(c, n, "undefined AC table");
    free(c);
    free(b);
    for (i = 0; i < sizeof regress / sizeof regress[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/fuzz/image/%s", regress[i]);
        b = t_slurp(path, &n);
        CHECK(b != NULL);
        if (b) expect_bad_huffman(b, n, regress[i]);
        free(b);
    }
}

/* Truncated and bit-flipped copies: an error or a valid image, never a crash (run under ASan). */
static void test_decode_damaged(void) {
    size_t i, n, k;
    uint64_t s = 12345;
    int errors = 0, ok = 0;
    for (i = 0; i < NPHOTOS; i++) {
        unsigned char *b = photo(i, &n), *d;
        size_t cuts = photos[i].w > 1000 ? 3 : 10;
        if (!b) continue;
        d = (unsigned char *)malloc(n);
        for (k = 0; k < 2 * cuts; k++) {
            recio_image img = {0};
            char msg[128];
            size_t len = n;
            recio_err e;
            memcpy(d, b, n);
            if (k < cuts) len = n * k / cuts + (k == 0 ? 7 : 0);
            else {
                int f;
                for (f = 0; f < 4; f++) {
                    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                    d[(s >> 33) % n] ^= (unsigned char)(1u << ((s >> 20) & 7));
                }
            }
            e = t_decode_ex(&img, d, len, 3, msg, sizeof msg);
            if (e == RECIO_OK) {
                ok++;
                CHECK(img.width > 0 && img.height > 0 && img.channels == 3);
                recio_image_free(&img);
            } else {
                errors++;
                CHECK(e == RECIO_ERR_DECODE && msg[0]);
            }
        }
        free(d);
        free(b);
    }
    CHECK(errors > 0); /* a cut at 7 bytes cannot decode */
}

int main(void) {
    RUN(test_resize_ramp_down2);
    RUN(test_resize_ramp_up2);
    RUN(test_resize_ramp_3x5);
    RUN(test_resize_area_fraction);
    RUN(test_resize_matches_opencv);
    RUN(test_resize_short_size);
    RUN(test_crop_views);
    RUN(test_flip_twice);
    RUN(test_caller_buffers);
    RUN(test_normalize_exact);
    RUN(test_chw_layout);
    RUN(test_colour_golden);
    RUN(test_colour_identities);
    RUN(test_colour_grey);
    RUN(test_rotate_pad);
    RUN(test_convert_types);
    RUN(test_decode_photos);
    RUN(test_decode_alpha_and_gray);
    RUN(test_decode_16bit_png);
    RUN(test_decode_errors);
    RUN(test_decode_huge_header);
    RUN(test_decode_bad_huffman);
    RUN(test_decode_damaged);
    return t_done("image");
}
