/* Boxes and masks through the chain, checked against an independent model: solid rectangles, one
   per colour channel (so they may overlap), on a plain grey background; the spec runs on image +
   boxes + mask; then the rectangles are found again in the output image (pixels whose channel is
   at least half on) and compared with the boxes recio_transform_apply_desc returns, and the mask's
   labels with the image's flat regions. Over every geometric op, chains and policies, many seeds. */
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "image_write.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BG 60      /* background in every channel; a rectangle sets its channel to 255 */
#define LABEL0 10  /* mask label: LABEL0 + the bits of the rectangles covering the pixel */

typedef struct scene {
    recio_image img, mask;
    int n;
    float obj[3 * 6]; /* class, xmin, ymin, xmax, ymax, extra */
} scene;

static scene make_scene(int w, int h, int n) {
    scene s;
    int k, x, y;
    memset(&s, 0, sizeof s);
    CHECK(recio_image_alloc(&s.img, w, h, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    CHECK(recio_image_alloc(&s.mask, w, h, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    memset(s.img.data, BG, recio_image_bytes(&s.img));
    memset(s.mask.data, LABEL0, recio_image_bytes(&s.mask));
    s.n = n;
    for (k = 0; k < n; k++) {
        int rw = t_between(w / 5, w / 2), rh = t_between(h / 5, h / 2), x0 = t_between(1, w - rw - 1), y0 = t_between(1, h - rh - 1);
        float *o = s.obj + 6 * k;
        o[0] = (float)k, o[1] = (float)x0 / w, o[2] = (float)y0 / h, o[3] = (float)(x0 + rw) / w, o[4] = (float)(y0 + rh) / h;
        o[5] = 100.0f + (float)k; /* an extra float per object, carried along */
        for (y = y0; y < y0 + rh; y++)
            for (x = x0; x < x0 + rw; x++) {
                recio_image_set(&s.img, x, y, k, 255);
                ((unsigned char *)s.mask.data)[(size_t)y * s.mask.stride + (size_t)x] += (unsigned char)(1 << k);
            }
    }
    return s;
}

static void free_scene(scene *s) {
    recio_image_free(&s->img);
    recio_image_free(&s->mask);
}

/* Bounding box [x0, x1) x [y0, y1) of the output pixels where channel k is at least half on; 0 when none. */
static int find_rect(const recio_image *img, int k, int r[4]) {
    int x, y, any = 0;
    r[0] = r[1] = 1 << 30, r[2] = r[3] = -1;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++)
            if (recio_image_get(img, x, y, k) >= (255 + BG) / 2.0f) {
                any = 1;
                if (x < r[0]) r[0] = x;
                if (y < r[1]) r[1] = y;
                if (x + 1 > r[2]) r[2] = x + 1;
                if (y + 1 > r[3]) r[3] = y + 1;
            }
    return any;
}

typedef struct result {
    recio_image out, mask;
    float obj[3 * 6];
    int kept;
} result;

static recio_err run_spec(const char *spec, const scene *s, uint64_t seed, result *r) {
    recio_transform *t = NULL;
    recio_image plain = {0};
    recio_apply_desc d;
    recio_err e;
    memset(r, 0, sizeof *r);
    if (recio_transform_parse(&t, spec) != RECIO_OK) {
        fprintf(stderr, "  cannot parse '%s'\n", spec);
        CHECK(0);
        return RECIO_ERR_SPEC;
    }
    memset(&d, 0, sizeof d);
    d.boxes = s->obj, d.count = s->n, d.stride = 6, d.boxes_out = r->obj, d.count_out = &r->kept;
    d.mask = &s->mask, d.mask_out = &r->mask;
    e = t_apply_ex(t, &s->img, &r->out, seed, &d);
    /* the same seed gives the same image with and without boxes and mask (but the SSD crop's draw
       reads the boxes: without them the whole image is its one box) */
    if (e == RECIO_OK && !strstr(spec, "bbox") && recio_transform_apply(t, &s->img, &plain, seed) == RECIO_OK)
        if (plain.width != r->out.width || plain.height != r->out.height || memcmp(plain.data, r->out.data, recio_image_bytes(&plain)) != 0)
            fprintf(stderr, "  '%s' seed %d: other pixels with boxes\n", spec, (int)seed), CHECK(0);
    recio_image_free(&plain);
    recio_transform_free(t);
    return e;
}

static void free_result(result *r) {
    recio_image_free(&r->out);
    recio_image_free(&r->mask);
}

/* Is the found rectangle f cut by the image's edge or by uncovered (black) canvas? Some pixel of the
   ring around it is outside the image or black: how a dropped object can still be seen. */
static int cut_off(const recio_image *img, const int f[4]) {
    int x, y, k;
    for (y = f[1] - 1; y <= f[3]; y++)
        for (x = f[0] - 1; x <= f[2]; x++) {
            int black = 1;
            if (x >= f[0] && x < f[2] && y >= f[1] && y < f[3]) continue;
            if (x < 0 || y < 0 || x >= img->width || y >= img->height) return 1;
            for (k = 0; k < 3; k++) black &= recio_image_get(img, x, y, k) == 0;
            if (black) return 1;
        }
    return 0;
}

/* Each kept object against its rectangle found in the output: each found edge at most out pixels
   outside the box and at most in pixels inside it (a rotated corner's tip is under half covered, so
   the found rectangle may be smaller; a box rotated twice grows beyond its object). A dropped object
   is either not visible or cut by the image's edge. */
static int check_boxes(const char *spec, uint64_t seed, const scene *s, const result *r, double out, double in) {
    int k, j, bad = 0, W = r->out.width, H = r->out.height;
    for (k = 0; k < s->n; k++) {
        int f[4], seen = find_rect(&r->out, k, f);
        const float *o = NULL;
        for (j = 0; j < r->kept; j++)
            if (r->obj[6 * j] == (float)k) o = r->obj + 6 * j;
        if (!o) {
            if (seen && !cut_off(&r->out, f) && (f[2] - f[0]) * (f[3] - f[1]) > 4) bad = 1;
            continue;
        }
        if (o[5] != 100.0f + (float)k) bad = 1;
        if (!seen) {
            if ((o[3] - o[1]) * W > 2 * in + 1 && (o[4] - o[2]) * H > 2 * in + 1) bad = 1; /* a box with nothing in it */
            continue;
        }
        {
            double b[4];
            b[0] = o[1] * W, b[1] = o[2] * H, b[2] = o[3] * W, b[3] = o[4] * H;
            /* A warped box cut by the image's edge keeps the corners that left (the rule's bounding box
               of moved corners, then clipped): only containment holds for it. */
            int cut = in > 1 && (b[0] < 0.01 || b[1] < 0.01 || b[2] > W - 0.01 || b[3] > H - 0.01);
            for (j = 0; j < 4; j++) {
                double d = j < 2 ? f[j] - b[j] : b[j] - f[j]; /* > 0: the found edge is inside the box */
                if (d < -out || (d > in && !cut)) bad = 1;
            }
            if (bad)
                fprintf(stderr, "  '%s' seed %d %dx%d: object %d at %.2f,%.2f,%.2f,%.2f, found %d,%d,%d,%d (input %dx%d: %g,%g,%g,%g)\n",
                        spec, (int)seed, W, H, k, b[0], b[1], b[2], b[3], f[0], f[1], f[2], f[3], s->img.width, s->img.height,
                        s->obj[6 * k + 1] * s->img.width, s->obj[6 * k + 2] * s->img.height, s->obj[6 * k + 3] * s->img.width,
                        s->obj[6 * k + 4] * s->img.height);
        }
        if (bad) break;
    }
    return !bad;
}

/* The mask against the image: where the image is flat (a 3x3 neighbourhood of one colour), the
   label is that of the rectangles the colour says, or the fill where the geometry uncovered black. */
static int check_mask(const char *spec, uint64_t seed, const result *r, int fill) {
    int x, y, i, j, k, flat = 0, wrong = 0;
    const recio_image *o = &r->out;
    if (r->mask.width != o->width || r->mask.height != o->height) return 0;
    for (y = 1; y < o->height - 1; y++)
        for (x = 1; x < o->width - 1; x++) {
            int same = 1, bits = 0, black = 1, want;
            float v[3];
            for (k = 0; k < 3; k++) {
                v[k] = recio_image_get(o, x, y, k);
                if (v[k] != 0) black = 0;
                if (v[k] == 255) bits |= 1 << k;
                else if (v[k] != BG && v[k] != 0) same = 0;
            }
            for (j = -1; j <= 1 && same; j++)
                for (i = -1; i <= 1 && same; i++)
                    for (k = 0; k < 3; k++) same &= recio_image_get(o, x + i, y + j, k) == v[k];
            if (!same || (black && bits)) continue;
            flat++;
            want = black ? fill : LABEL0 + bits;
            if (((unsigned char *)r->mask.data)[(size_t)y * r->mask.stride + (size_t)x] != want) wrong++;
        }
    if (wrong) fprintf(stderr, "  '%s' seed %d: %d of %d flat pixels with another mask label\n", spec, (int)seed, wrong, flat);
    return wrong == 0;
}

typedef struct op_case {
    const char *spec;
    double out, in; /* pixels a found edge may be outside / inside its box */
} op_case;

/* Every geometric op (and chains, policies and photometric ops among them). Exact maps (flips,
   integer crops, pad): the found edges are the boxes' up to float rounding. */
static const op_case cases[] = {
    {"flip", 1e-3, 1e-3},
    {"vflip", 1e-3, 1e-3},
    {"random_flip(0.5)", 1e-3, 1e-3},
    {"random_vflip(0.5)", 1e-3, 1e-3},
    {"crop(7,5,50,40)", 1e-3, 1e-3},
    {"center_crop(50,45)", 1e-3, 1e-3},
    {"random_crop(55,40)", 1e-3, 1e-3},
    {"random_crop(30)", 1e-3, 1e-3},
    {"pad(6)", 1e-3, 1e-3},
    {"pad(3) random_crop(50,50) random_flip(0.5) random_vflip(0.5)", 1e-3, 1e-3},
    {"resize_long(80)", 1, 1},
    {"letterbox(90,90)", 1, 1},
    {"letterbox(120,50,0)", 1, 1},
    {"random_expand(2)", 1e-3, 1e-3},
    {"random_expand(3) random_crop(60,55) letterbox(64,64)", 1, 1},
    {"resize(97,61)", 1, 1},
    {"resize(40,50)", 1, 1},
    {"area resize(45,38)", 1, 1},
    {"resize_short(70)", 1, 1},
    {"random_resized_crop(64)", 1, 1},
    {"random_resized_crop(50,0.3,1,0.5,2)", 1, 1},
    {"random_resized_crop(80) random_flip(0.5) float", 1, 1},
    {"rotate(17)", 1, 3},
    {"rotate(-90)", 1, 3},
    {"random_rotate(30)", 1, 3},
    {"shear_x(0.25)", 1, 3},
    {"shear_y(-0.3)", 1, 3},
    {"resize(90,70) rotate(12) crop(5,5,70,55)", 1, 3},
    {"random_rotate(20) random_rotate(20)", 1, 1e9},
    {"random_apply(0.5, flip vflip) random_choice(rotate(15), shear_x(0.2), pad(4), center_crop(40))", 1, 3},
    {"brightness(1) random_crop(48,44) invert invert", 1e-3, 1e-3},
    {"random_bbox_crop", 1e-3, 1e-3},
    {"random_bbox_crop(0.5)", 1e-3, 1e-3},
    {"random_bbox_cover(0.9,0.2,1,0.5,2,100) random_flip(0.5)", 1e-3, 1e-3},
    {"random_expand(3) random_bbox_crop resize(90,90)", 1, 1},
    {"random_choice(random_bbox_crop(0.1), random_bbox_crop(0.7), random_bbox_cover(0.5,0.3,1,1,1))", 1e-3, 1e-3},
    {"pad(2,7,5,0)", 1e-3, 1e-3},
    {"pad(0,3,9,1,0) random_crop(50,50)", 1e-3, 1e-3},
    {"random_resized_crop(64,40)", 1, 1},
    {"random_resized_crop(48,64,0.3,1,0.5,2)", 1, 1},
    {"random_shear_x(0.3)", 1, 3},
    {"random_shear_y(0.3,0)", 1, 3},
    {"rotate(20,0) gaussian_blur(1)", 1, 3},
    {"translate(7,-4)", 1e-3, 1e-3},
    {"translate_rel(-0.2,0.15,0) random_crop(40,40)", 1e-3, 1e-3},
    {"random_choice(translate(9,0), translate(0,-9), random_shear_x(0.2), rotate(9))", 1, 3},
};

static void test_boxes_and_mask_follow_pixels(void) {
    size_t i;
    int seed, failed_cases = 0;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (seed = 0; seed < 20; seed++) {
            scene s = make_scene(t_between(60, 110), t_between(60, 110), t_between(1, 3));
            result r;
            recio_err e = run_spec(cases[i].spec, &s, (uint64_t)seed, &r);
            int ok = e == RECIO_OK;
            if (!ok) fprintf(stderr, "  '%s' seed %d: %s\n", cases[i].spec, seed, recio_strerror(e));
            if (ok) ok = check_boxes(cases[i].spec, (uint64_t)seed, &s, &r, cases[i].out, cases[i].in);
            if (ok) ok = check_mask(cases[i].spec, (uint64_t)seed, &r, 255);
            if (!ok) failed_cases++;
            CHECK(ok);
            free_result(&r);
            free_scene(&s);
            if (failed_cases > 5) return;
        }
}

/* ---- the SSD crop: its constraint checked by an independent overlap, on a coordinate image ---- */

static int same_pixels(const recio_image *a, const recio_image *b);

/* An image whose pixel (x, y) is (x, y, 7): where an output came from says itself. */
static recio_image coord_image(int w, int h) {
    recio_image img;
    int x, y;
    CHECK(recio_image_alloc(&img, w, h, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            unsigned char *p = (unsigned char *)img.data + (size_t)y * img.stride + 3 * (size_t)x;
            p[0] = (unsigned char)x, p[1] = (unsigned char)y, p[2] = 7;
        }
    return img;
}

/* The crop [x0, x0 + w) x [y0, y0 + h) the output is of the coordinate image; 0 when it is not one. */
static int crop_of(const recio_image *out, int c[4]) {
    int x, y;
    const unsigned char *p0 = (const unsigned char *)out->data;
    if (out->channels != 3) return 0;
    c[0] = p0[0], c[1] = p0[1], c[2] = out->width, c[3] = out->height;
    for (y = 0; y < out->height; y++)
        for (x = 0; x < out->width; x++) {
            const unsigned char *p = p0 + (size_t)y * out->stride + 3 * (size_t)x;
            if (p[0] != c[0] + x || p[1] != c[1] + y || p[2] != 7) return 0;
        }
    return 1;
}

/* IoU of two rectangles x0, y0, x1, y1, or (cover) the part of b inside a: written from the
   definitions, not from recio. */
static double overlap(const double a[4], const double b[4], int cover) {
    double ix = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
    double iy = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
    double i = ix > 0 && iy > 0 ? ix * iy : 0, aa = (a[2] - a[0]) * (a[3] - a[1]), ab = (b[2] - b[0]) * (b[3] - b[1]);
    return cover ? i / ab : i / (aa + ab - i);
}

/* random_bbox_crop(T) and random_bbox_cover(T) over 300 seeds each: the output is a crop of the input
   whose overlap with some box is at least T, or the whole input (no candidate reached it); most
   seeds do crop, and the same seed gives the same crop again. */
static void test_bbox_crop_meets_constraint(void) {
    static const char *ops[2] = {"random_bbox_crop", "random_bbox_cover"};
    static const float ts[3] = {0.3f, 0.5f, 0.7f};
    int op, ti, seed;
    for (op = 0; op < 2; op++)
        for (ti = 0; ti < 3; ti++) {
            char spec[100];
            int cropped = 0, whole = 0, bad = 0;
            recio_transform *t = NULL;
            snprintf(spec, sizeof spec, "%s(%g,0.3,1,0.5,2,50)", ops[op], ts[ti]);
            CHECK(recio_transform_parse(&t, spec) == RECIO_OK);
            for (seed = 0; seed < 300 && t; seed++) {
                int W = t_between(40, 200), H = t_between(40, 200), n = t_between(1, 4), k, c[4], kept = 0;
                recio_image in = coord_image(W, H), out = {0}, again = {0};
                float obj[4 * 5], got[4 * 5];
                double best = 0, cr[4];
                recio_apply_desc d;
                for (k = 0; k < n; k++) {
                    int bw = t_between(2, W / 2), bh = t_between(2, H / 2), x0 = t_between(0, W - bw), y0 = t_between(0, H - bh);
                    obj[5 * k] = (float)k, obj[5 * k + 1] = (float)x0 / W, obj[5 * k + 2] = (float)y0 / H;
                    obj[5 * k + 3] = (float)(x0 + bw) / W, obj[5 * k + 4] = (float)(y0 + bh) / H;
                }
                memset(&d, 0, sizeof d);
                d.boxes = obj, d.count = n, d.boxes_out = got, d.count_out = &kept;
                CHECK(t_apply_ex(t, &in, &out, (uint64_t)seed, &d) == RECIO_OK);
                CHECK(t_apply_ex(t, &in, &again, (uint64_t)seed, &d) == RECIO_OK);
                CHECK(same_pixels(&out, &again));
                if (!crop_of(&out, c)) {
                    bad++;
                } else if (c[2] == W && c[3] == H) {
                    whole++;
                } else {
                    cropped++;
                    cr[0] = c[0], cr[1] = c[1], cr[2] = c[0] + c[2], cr[3] = c[1] + c[3];
                    for (k = 0; k < n; k++) {
                        double b[4], v;
                        b[0] = (double)obj[5 * k + 1] * W, b[1] = (double)obj[5 * k + 2] * H;
                        b[2] = (double)obj[5 * k + 3] * W, b[3] = (double)obj[5 * k + 4] * H;
                        if ((v = overlap(cr, b, op)) > best) best = v;
                    }
                    if (best < (double)ts[ti] - 1e-12) {
                        fprintf(stderr, "  '%s' seed %d: crop %d,%d %dx%d of %dx%d has overlap %g\n", spec, seed, c[0], c[1], c[2], c[3], W, H, best);
                        bad++;
                    }
                }
                recio_image_free(&in), recio_image_free(&out), recio_image_free(&again);
            }
            CHECK(bad == 0);
            CHECK(cropped >= 10); /* fails when the op never crops (IoU 0.7 with these boxes: about 1 seed in 20) */
            if (bad || cropped < 10) fprintf(stderr, "  '%s': %d cropped, %d whole, %d bad\n", spec, cropped, whole, bad);
            recio_transform_free(t);
        }
}

/* Without boxes (a plain apply, as the iterator runs it) the whole image is the one box: a crop then
   keeps at least T of the area. SSD's default (no arguments) keeps the image for some seeds (its
   "keep" choice) and crops for others. */
static void test_bbox_crop_without_boxes(void) {
    recio_transform *t = NULL;
    int seed, c[4], whole = 0, cropped = 0;
    recio_image in = coord_image(150, 100);
    CHECK(recio_transform_parse(&t, "random_bbox_crop(0.6,0.3,1,0.5,2,50)") == RECIO_OK);
    for (seed = 0; seed < 300; seed++) {
        recio_image out = {0};
        CHECK(recio_transform_apply(t, &in, &out, (uint64_t)seed) == RECIO_OK);
        CHECK(crop_of(&out, c));
        if ((double)c[2] * c[3] < 0.6 * 150 * 100 - 1e-9) fprintf(stderr, "  seed %d: %dx%d\n", seed, c[2], c[3]), CHECK(0);
        cropped += c[2] < 150 || c[3] < 100;
        recio_image_free(&out);
    }
    CHECK(cropped > 100);
    cropped = 0;
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "random_bbox_crop") == RECIO_OK);
    for (seed = 0; seed < 300; seed++) {
        recio_image out = {0};
        CHECK(recio_transform_apply(t, &in, &out, (uint64_t)seed) == RECIO_OK);
        CHECK(crop_of(&out, c));
        if (c[2] == 150 && c[3] == 100) whole++;
        else cropped++;
        recio_image_free(&out);
    }
    CHECK(whole > 300 / 7 / 2 && cropped > 300 / 2); /* keep is one choice of seven */
    recio_transform_free(t);
    recio_image_free(&in);
}

/* No candidate can reach the constraint (a 2x2 box, IoU 0.9 with crops of at least half the side):
   every seed keeps the whole image and the boxes as they were. */
static void test_bbox_crop_fallback(void) {
    recio_transform *t = NULL;
    recio_image in = coord_image(100, 100);
    float obj[5] = {3, 0.50f, 0.50f, 0.52f, 0.52f}, got[5];
    int seed, kept, c[4];
    recio_apply_desc d;
    CHECK(recio_transform_parse(&t, "random_bbox_crop(0.9,0.5,1,0.5,2,200)") == RECIO_OK);
    for (seed = 0; seed < 100; seed++) {
        recio_image out = {0};
        memset(&d, 0, sizeof d);
        kept = -1;
        d.boxes = obj, d.count = 1, d.boxes_out = got, d.count_out = &kept;
        CHECK(t_apply_ex(t, &in, &out, (uint64_t)seed, &d) == RECIO_OK);
        CHECK(crop_of(&out, c) && c[0] == 0 && c[1] == 0 && c[2] == 100 && c[3] == 100);
        CHECK(kept == 1 && memcmp(got, obj, sizeof obj) == 0);
        recio_image_free(&out);
    }
    recio_transform_free(t);
    recio_image_free(&in);
    CHECK(recio_transform_parse(&t, "random_bbox_crop(1.5)") == RECIO_ERR_SPEC);
    CHECK(recio_transform_parse(&t, "random_bbox_crop(0.5,0)") == RECIO_ERR_SPEC);
    CHECK(recio_transform_parse(&t, "random_bbox_cover(-1,0.3,1,0.5,2,20)") == RECIO_OK);
    recio_transform_free(t);
}

/* No op interpolates the mask: on a mask of random labels from a small set, every output label is
   one of them or the fill, over every geometric op (downscales, upscales, area, warps, canvases). */
static void test_mask_labels_never_blended(void) {
    static const char *specs[] = {"resize(37,23)", "resize(150,130)", "area resize(20,17)", "resize_short(41)", "resize_long(200)",
                                  "random_resized_crop(33)", "letterbox(50,80)", "rotate(33)", "random_rotate(40)", "shear_x(0.4)",
                                  "shear_y(-0.2)", "pad(5)", "random_expand(3) resize(64,64)", "random_bbox_crop resize(30,30)",
                                  "center_crop(40,30) vflip flip", NULL};
    static const unsigned char labels[3] = {3, 77, 200};
    recio_image img, mask;
    int i, seed, bad = 0;
    size_t k;
    CHECK(recio_image_alloc(&img, 90, 70, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    CHECK(recio_image_alloc(&mask, 90, 70, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (k = 0; k < recio_image_bytes(&img); k++) ((unsigned char *)img.data)[k] = (unsigned char)t_rand();
    for (k = 0; k < recio_image_bytes(&mask); k++) ((unsigned char *)mask.data)[k] = labels[t_rand() % 3];
    for (i = 0; specs[i]; i++)
        for (seed = 0; seed < 5; seed++) {
            recio_transform *t = NULL;
            recio_image out = {0}, m = {0};
            recio_apply_desc d;
            int x, y;
            memset(&d, 0, sizeof d);
            d.mask = &mask, d.mask_out = &m;
            CHECK(recio_transform_parse(&t, specs[i]) == RECIO_OK);
            CHECK(t_apply_ex(t, &img, &out, (uint64_t)seed, &d) == RECIO_OK);
            for (y = 0; y < m.height; y++)
                for (x = 0; x < m.width; x++) {
                    unsigned char v = ((unsigned char *)m.data)[(size_t)y * m.stride + (size_t)x];
                    if (v != 3 && v != 77 && v != 200 && v != 255 && bad++ < 3)
                        fprintf(stderr, "  '%s' seed %d: label %d at %d,%d\n", specs[i], seed, v, x, y);
                }
            CHECK(m.width == out.width && m.height == out.height);
            recio_image_free(&out), recio_image_free(&m);
            recio_transform_free(t);
        }
    CHECK(bad == 0);
    recio_image_free(&img);
    recio_image_free(&mask);
}

/* The drop rule exactly: a crop that leaves a box's centre just outside drops it, just inside keeps
   it clipped; boxes_out may be the input array. */
static void test_drop_and_clip(void) {
    recio_transform *t = NULL;
    recio_image in = {0}, out = {0};
    float obj[10] = {1, 0.10f, 0.10f, 0.30f, 0.30f, 2, 0.20f, 0.50f, 0.62f, 0.70f};
    recio_apply_desc d;
    int kept = -1;
    CHECK(recio_image_alloc(&in, 100, 100, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    memset(in.data, 0, recio_image_bytes(&in));
    CHECK(recio_transform_parse(&t, "crop(21,0,79,100)") == RECIO_OK); /* box 1's centre x = 20: out */
    memset(&d, 0, sizeof d);
    d.boxes = obj, d.count = 2, d.boxes_out = obj, d.count_out = &kept;
    CHECK(t_apply_ex(t, &in, &out, 0, &d) == RECIO_OK);
    CHECK_EQ_INT(kept, 1);
    CHECK(obj[0] == 2 && obj[1] == 0 && fabsf(obj[3] - 41.0f / 79) < 1e-6f && fabsf(obj[2] - 0.5f) < 1e-6f);
    recio_image_free(&out);
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "crop(19,0,81,100)") == RECIO_OK); /* centre x = 20 - 19 = 1: in, clipped at 0 */
    obj[0] = 1, obj[1] = 0.1f, obj[2] = 0.1f, obj[3] = 0.3f, obj[4] = 0.3f;
    kept = -1;
    CHECK(t_apply_ex(t, &in, &out, 0, &d) == RECIO_OK);
    CHECK_EQ_INT(kept, 2); /* box 2 (centre 41 - 19) stays too */
    CHECK(obj[0] == 1 && obj[1] == 0 && fabsf(obj[3] - 11.0f / 81) < 1e-6f && obj[5] == 2);
    recio_image_free(&out);
    recio_transform_free(t);
    recio_image_free(&in);
}

/* A box that is not one (a NaN or infinite value, xmin > xmax, ymin > ymax) is refused with the
   object named, never moved as a box: a NaN xmin used to come out of flip as 0.5 (and of rotate
   with an area), an inverted box out of random_resized_crop as the whole image. */
static void test_invalid_boxes_refused(void) {
    static const char *const specs[] = {"flip", "rotate(30)", "random_resized_crop(64)", "identity", "brightness(1.2)"};
    float nan_ = strtof("nan", NULL), inf_ = strtof("inf", NULL), out[12], ok[6] = {0, 0.1f, 0.2f, 0.1f, 0.6f, 0};
    float bad[6][5] = {{0, 0, 0.2f, 0.5f, 0.6f}, {0, 0.9f, 0.8f, 0.1f, 0.2f}, {0, 0.1f, 0.8f, 0.5f, 0.2f},
                       {0, 0.1f, 0.2f, 0.5f, 0}, {0, 0.1f, 0.2f, 0.5f, 0.6f}, {0, 0.1f, 0.2f, 0.5f, 0.6f}};
    static const char *const why[6] = {"object 0: xmin is NaN", "object 0: xmin > xmax (an inverted box)",
                                       "object 0: ymin > ymax (an inverted box)", "object 0: ymax is infinite",
                                       "object 0: class is NaN", "object 0: class is infinite"};
    scene sc = make_scene(80, 60, 1);
    char msg[160];
    int i, k, at, kept;
    bad[0][1] = nan_, bad[3][4] = inf_, bad[4][0] = nan_, bad[5][0] = -inf_;
    for (i = 0; i < 6; i++) {
        float two[10];
        memcpy(two, ok, 5 * sizeof(float)), memcpy(two + 5, bad[i], 5 * sizeof(float));
        CHECK(t_boxes_check(bad[i], 1, 5, &at, msg, sizeof msg) == RECIO_ERR_ARG && at == 0 && strcmp(msg, why[i]) == 0);
        CHECK(t_boxes_check(two, 2, 5, &at, msg, sizeof msg) == RECIO_ERR_ARG && at == 1 && strncmp(msg, "object 1: ", 10) == 0);
        for (k = 0; k < 5; k++) {
            recio_transform *t = NULL;
            recio_image o = {0};
            recio_apply_desc d;
            memset(&d, 0, sizeof d);
            d.boxes = bad[i], d.count = 1, d.boxes_out = out, d.count_out = &kept;
            CHECK(recio_transform_parse(&t, specs[k]) == RECIO_OK);
            CHECK_EQ_INT(t_apply_ex(t, &sc.img, &o, 3, &d), RECIO_ERR_ARG);
            CHECK(o.data == NULL);
            recio_transform_free(t);
        }
    }
    /* a zero-area box is a box; the floats after the fifth are the object's own, never checked */
    ok[5] = nan_;
    CHECK(t_boxes_check(ok, 1, 6, &at, msg, sizeof msg) == RECIO_OK && at == -1 && msg[0] == 0);
    CHECK(t_boxes_check(ok, 1, 4, &at, NULL, 0) == RECIO_ERR_ARG);
    CHECK(t_boxes_check(NULL, 0, 0, NULL, NULL, 0) == RECIO_OK);
    { /* the encoded path says which */
        t_mem_out png;
        recio_transform *t = NULL;
        recio_image o = {0};
        recio_apply_desc d;
        memset(&png, 0, sizeof png);
        CHECK(stbi_write_png_to_func(t_to_mem, &png, sc.img.width, sc.img.height, 3, sc.img.data, (int)sc.img.stride) != 0);
        memset(&d, 0, sizeof d);
        d.boxes = bad[0], d.count = 1, d.boxes_out = out, d.count_out = &kept;
        CHECK(recio_transform_parse(&t, "flip") == RECIO_OK);
        CHECK(t_apply_encoded_ex(t, png.b, (size_t)png.n, &o, 0, NULL, &d, msg, sizeof msg) == RECIO_ERR_ARG);
        CHECK(strcmp(msg, "transform: boxes: object 0: xmin is NaN") == 0);
        recio_transform_free(t);
    }
    free_scene(&sc);
}

/* Boxes are clipped to the image and dropped when their centre is outside whatever the chain: with
   no geometric op (identity, colour ops only) as after flip flip (the same image). -5 -5 10 10 used
   to survive identity while flip dropped it. Expected boxes worked out by hand. */
static void test_clip_without_geometry(void) {
    static const char *const specs[] = {"identity", "brightness(1.2) contrast(0.9)", "flip flip", "crop(0,0,80,60)"};
    /* class, xmin, ymin, xmax, ymax: out of the image (centre 2.5, 2.5); partly out on the left; its
       centre just right of the image; inside */
    static const float in[4][5] = {{0, -5, -5, 10, 10}, {1, -0.4f, 0.2f, 0.5f, 0.6f}, {2, 0.8f, 0.1f, 1.3f, 0.3f}, {3, 0.25f, 0.5f, 0.75f, 1}};
    static const float want[2][5] = {{1, 0, 0.2f, 0.5f, 0.6f}, {3, 0.25f, 0.5f, 0.75f, 1}};
    scene sc = make_scene(80, 60, 1);
    int k, i, j;
    for (k = 0; k < 4; k++) {
        recio_transform *t = NULL;
        recio_image o = {0};
        recio_apply_desc d;
        float out[4 * 5];
        int kept = -1;
        memset(&d, 0, sizeof d);
        d.boxes = &in[0][0], d.count = 4, d.boxes_out = out, d.count_out = &kept;
        CHECK(recio_transform_parse(&t, specs[k]) == RECIO_OK);
        CHECK(t_apply_ex(t, &sc.img, &o, 0, &d) == RECIO_OK);
        CHECK_EQ_INT(kept, 2);
        for (i = 0; i < 2 && kept == 2; i++)
            for (j = 0; j < 5; j++)
                if (fabsf(out[5 * i + j] - want[i][j]) > 1e-6f) printf("  %s: box %d value %d: %g, want %g\n", specs[k], i, j, out[5 * i + j], want[i][j]), CHECK(0);
        recio_image_free(&o);
        recio_transform_free(t);
    }
    free_scene(&sc);
}

/* mask_fill: the default 255, a given label, and label 0; a bad desc is refused. */
static void test_mask_fill_and_args(void) {
    recio_transform *t = NULL;
    scene s = make_scene(40, 30, 1);
    recio_image out = {0}, m = {0};
    recio_apply_desc d;
    int fills[3] = {0, 7, RECIO_MASK_FILL_ZERO}, want[3] = {255, 7, 0}, i, kept;
    float o[6];
    CHECK(recio_transform_parse(&t, "pad(2)") == RECIO_OK);
    for (i = 0; i < 3; i++) {
        memset(&d, 0, sizeof d);
        d.mask = &s.mask, d.mask_out = &m, d.mask_fill = fills[i];
        CHECK(t_apply_ex(t, &s.img, &out, 0, &d) == RECIO_OK);
        CHECK(m.width == 44 && m.height == 34 && ((unsigned char *)m.data)[0] == want[i] && ((unsigned char *)m.data)[2 * m.stride + 2] == LABEL0);
        recio_image_free(&out);
        recio_image_free(&m);
    }
    memset(&d, 0, sizeof d);
    CHECK(t_apply_ex(t, &s.img, &out, 0, &d) == RECIO_OK); /* zero desc: a plain apply */
    recio_image_free(&out);
    d.boxes = s.obj, d.count = 1; /* no boxes_out */
    CHECK(t_apply_ex(t, &s.img, &out, 0, &d) == RECIO_ERR_ARG);
    d.boxes_out = o, d.count_out = &kept, d.stride = 4;
    CHECK(t_apply_ex(t, &s.img, &out, 0, &d) == RECIO_ERR_ARG);
    memset(&d, 0, sizeof d);
    d.mask = &s.img, d.mask_out = &m; /* three channels */
    CHECK(t_apply_ex(t, &s.img, &out, 0, &d) == RECIO_ERR_ARG);
    recio_transform_free(t);
    free_scene(&s);
}

/* Decode + apply_ex and apply_encoded with the same boxes and mask give the same boxes and mask,
   whatever window of the JPEG the planner decodes and at whatever DCT scale (the planned ops'
   steps are replayed at full size), and the image of the plain path at full scale. */
static void test_encoded_path(void) {
    static const char *specs[] = {"crop(3,5,400,300) random_resized_crop(120,0.2,0.9) random_flip(0.5)",
                                  "resize_short(200) random_crop(150,120) rotate(10)", "area resize(100,80) center_crop(60) pad(3)",
                                  "random_crop(300,200) crop(10,10,200,150) resize(90,70) vflip", "letterbox(128,128) gray",
                                  "random_crop(400,300) random_bbox_crop(0.3) resize(90,70)", "random_bbox_cover resize(64,64)", NULL};
    size_t n = 0;
    unsigned char *jpg = t_slurp("tests/data/photos/chelsea-500x375.jpg", &n);
    recio_image dec = {0}, mask;
    int i, seed, scale, y;
    CHECK(jpg && recio_image_decode(&dec, jpg, n, 0) == RECIO_OK);
    CHECK(recio_image_alloc(&mask, dec.width, dec.height, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (y = 0; y < mask.height; y++) memset((unsigned char *)mask.data + (size_t)y * mask.stride, y * 7 / mask.height, (size_t)mask.width);
    for (i = 0; jpg && specs[i]; i++)
        for (seed = 0; seed < 4; seed++)
            for (scale = 0; scale < 2; scale++) {
                float obj[15] = {0, 0.1f, 0.1f, 0.6f, 0.5f, 1, 0.4f, 0.3f, 0.95f, 0.9f, 2, 0.0f, 0.7f, 0.2f, 1.0f}, a[15], b[15];
                int ka = -1, kb = -1;
                recio_transform *t = NULL;
                recio_image oa = {0}, ob = {0}, ma = {0}, mb = {0};
                recio_apply_desc d;
                t_enc ed;
                memset(&d, 0, sizeof d);
                memset(&ed, 0, sizeof ed);
                d.boxes = obj, d.count = 3, d.mask = &mask;
                d.boxes_out = a, d.count_out = &ka, d.mask_out = &ma;
                CHECK(recio_transform_parse(&t, specs[i]) == RECIO_OK);
                CHECK(t_apply_ex(t, &dec, &oa, (uint64_t)seed, &d) == RECIO_OK);
                d.boxes_out = b, d.count_out = &kb, d.mask_out = &mb;
                ed.full_scale = !scale;
                CHECK(t_apply_encoded_ex(t, jpg, n, &ob, (uint64_t)seed, &ed, &d, NULL, 0) == RECIO_OK);
                if (ka != kb || memcmp(a, b, sizeof(float) * 5 * (size_t)(ka > 0 ? ka : 0)) != 0 || !same_pixels(&ma, &mb) ||
                    (!scale && !same_pixels(&oa, &ob)))
                    fprintf(stderr, "  '%s' seed %d%s: the encoded path differs\n", specs[i], seed, scale ? " (DCT-scaled)" : ""), CHECK(0);
                recio_image_free(&oa), recio_image_free(&ob), recio_image_free(&ma), recio_image_free(&mb);
                recio_transform_free(t);
            }
    recio_image_free(&dec);
    recio_image_free(&mask);
    free(jpg);
}

/* ---- the command: recio apply --boxes/--boxes-out and --mask/--mask-out (the contract) ---- */

static int sh(const char *cmd) {
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

/* An image as PNG bytes (malloc'd; *len bytes), grey or RGB as the image is. */
static unsigned char *png_bytes(const recio_image *img, int *len) {
    return stbi_write_png_to_mem((const unsigned char *)img->data, (int)img->stride, img->width, img->height, img->channels, len);
}

/* A PNG file (RGB, or grey for a mask): recio decodes PNG losslessly. */
static void write_png(const char *path, const recio_image *img) {
    int len = 0;
    unsigned char *b = png_bytes(img, &len);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && b != NULL);
    if (f && b) CHECK(fwrite(b, 1, (size_t)len, f) == (size_t)len);
    if (f) fclose(f);
    free(b);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

static recio_image decode_file(const char *path) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n);
    recio_image img = {0};
    CHECK(b && recio_image_decode(&img, b, n, 0) == RECIO_OK);
    free(b);
    return img;
}

static int same_pixels(const recio_image *a, const recio_image *b) {
    int y;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels) return 0;
    for (y = 0; y < a->height; y++)
        if (memcmp((unsigned char *)a->data + (size_t)y * a->stride, (unsigned char *)b->data + (size_t)y * b->stride, (size_t)a->width * a->channels))
            return 0;
    return 1;
}

/* The CLI's files equal the library's results for the same seed, and pass the model's checks. */
static void cli_run_and_compare(const char *recio, const char *spec, uint64_t seed, const scene *s) {
    char cmd[1024], text[400];
    result r;
    recio_image out, mask;
    FILE *f;
    int k, kept = 0, same = 1;
    snprintf(cmd, sizeof cmd, "%s apply --spec '%s' --seed %d --boxes build/tb_in.txt --boxes-out build/tb_out.txt "
             "--mask build/tb_mask.png --mask-out build/tb_mask_out.png build/tb_in.png build/tb_out.png 2>/dev/null", recio, spec, (int)seed);
    CHECK(sh(cmd) == 0);
    CHECK(run_spec(spec, s, seed, &r) == RECIO_OK);
    out = decode_file("build/tb_out.png");
    mask = decode_file("build/tb_mask_out.png");
    CHECK(same_pixels(&out, &r.out) && same_pixels(&mask, &r.mask) && mask.channels == 1);
    f = fopen("build/tb_out.txt", "r");
    CHECK(f != NULL);
    while (f && fgets(text, sizeof text, f)) {
        float v[5];
        CHECK(sscanf(text, "%g %g %g %g %g", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5);
        for (k = 0; k < 5 && kept < r.kept; k++) same &= v[k] == r.obj[6 * kept + k];
        kept++;
    }
    if (f) fclose(f);
    CHECK(same && kept == r.kept);
    CHECK(check_boxes(spec, seed, s, &r, 1, 1) && check_mask(spec, seed, &r, 255));
    recio_image_free(&out), recio_image_free(&mask);
    free_result(&r);
}

/* recio apply --spec SPEC with `text` as the boxes file: exit 1, `words` on stderr, no OUT written. */
static void cli_bad_box(const char *recio, const char *spec, const char *text, const char *words) {
    char cmd[1024];
    write_text("build/tb_bad.txt", text);
    remove("build/tb_bad_out.txt");
    snprintf(cmd, sizeof cmd, "%s apply --spec '%s' --boxes build/tb_bad.txt --boxes-out build/tb_bad_out.txt build/tb_in.png build/tb_out.png "
             "2>build/tb_err.txt; test $? = 1 && grep -qF '%s' build/tb_err.txt && test ! -e build/tb_bad_out.txt", recio, spec, words);
    if (sh(cmd) != 0) printf("  %s: %s", spec, text), CHECK(0);
}

static void test_cli_boxes_and_mask(void) {
    const char *recio = t_recio_tool();
    char cmd[1024], text[400];
    scene s;
    int k, at = 0;
    if (!recio) return;
    s = make_scene(96, 80, 3);
    for (k = 0; k < s.n; k++) /* 5 floats a line; the model's extra float is not in the file */
        at += snprintf(text + at, sizeof text - (size_t)at, "%g %.9g %.9g %.9g %.9g\n", s.obj[6 * k], s.obj[6 * k + 1], s.obj[6 * k + 2],
                       s.obj[6 * k + 3], s.obj[6 * k + 4]);
    for (k = 0; k < s.n; k++) s.obj[6 * k + 5] = 100.0f + (float)k; /* kept for the model's check */
    write_text("build/tb_in.txt", text);
    write_png("build/tb_in.png", &s.img);
    write_png("build/tb_mask.png", &s.mask);
    cli_run_and_compare(recio, "random_resized_crop(64,0.3,1) random_flip(0.5) random_vflip(0.5)", 5, &s);
    cli_run_and_compare(recio, "resize(120,100) center_crop(90,70)", 0, &s);
    snprintf(cmd, sizeof cmd, "%s apply --spec flip --boxes build/tb_in.txt build/tb_in.png build/tb_out.png 2>/dev/null", recio);
    CHECK(sh(cmd) == 2); /* --boxes without --boxes-out */
    write_text("build/tb_bad.txt", "0 0.1 0.1 0.5 0.5\n1 0.2 0.2 0.3\n");
    snprintf(cmd, sizeof cmd, "%s apply --spec flip --boxes build/tb_bad.txt --boxes-out build/tb_out.txt build/tb_in.png build/tb_out.png "
             "2>build/tb_err.txt && exit 9; grep -q 'tb_bad.txt: line 2: expected' build/tb_err.txt", recio);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s apply --spec flip --mask build/tb_in.png --mask-out build/tb_m.png build/tb_in.png build/tb_out.png 2>/dev/null", recio);
    CHECK(sh(cmd) == 1); /* a three-channel mask */
    /* lines that are not boxes: refused, the line named (a NaN xmin came out of flip as 0.5, the
       inverted box out of random_resized_crop as 0 0 1 1, class 1e40 as inf) */
    cli_bad_box(recio, "flip", "0 nan 0.2 0.5 0.6\n", "tb_bad.txt: line 1: xmin is NaN");
    cli_bad_box(recio, "rotate(30)", "0 0.1 0.1 0.5 0.5\n1 0.2 0.2 0.3 inf\n", "tb_bad.txt: line 2: ymax is infinite");
    cli_bad_box(recio, "random_resized_crop(64)", "0 0.9 0.8 0.1 0.2\n", "tb_bad.txt: line 1: xmin > xmax");
    cli_bad_box(recio, "flip", "1e40 0.1 0.2 0.5 0.6\n", "tb_bad.txt: line 1: class 1e+40 does not fit in a float");
    cli_bad_box(recio, "flip", "0 0.1 -1e39 0.5 0.6\n", "tb_bad.txt: line 1: ymin -1e+39 does not fit in a float");
    /* clipped and dropped with no geometric op as with one */
    write_text("build/tb_bad.txt", "0 -5 -5 10 10\n1 -0.4 0.25 0.5 0.75\n");
    snprintf(cmd, sizeof cmd, "%s apply --spec identity --boxes build/tb_bad.txt --boxes-out build/tb_out.txt build/tb_in.png build/tb_out.png "
             "&& test \"$(cat build/tb_out.txt)\" = '1 0 0.25 0.5 0.75'", recio);
    CHECK(sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "%s apply --help | grep -q -- '--boxes-out OUT.txt'", recio);
    CHECK(sh(cmd) == 0);
    free_scene(&s);
}

/* ---- MXNet's detection labels: [A, B, header floats, B floats per object] ---- */

static void test_det_layout(void) {
    float sm[14] = {4, 5, 640, 480, 0, 0.1f, 0.2f, 0.5f, 0.6f, 2, 0.3f, 0.3f, 0.9f, 0.8f}, out[20];
    float bad_b[9] = {2, 4, 0, 0.1f, 0.2f, 0.5f, 0.6f, 1, 1}, objs[6] = {1, 0.1f, 0.1f, 0.2f, 0.2f, 1}, extra[2] = {640, 480};
    recio_det_layout l;
    CHECK(recio_det_layout_of(sm, 14, &l) == RECIO_OK && l.header_width == 4 && l.object_width == 5 && l.count == 2);
    CHECK(recio_det_layout_of(sm, 4, &l) == RECIO_OK && l.count == 0); /* no objects */
    CHECK(recio_det_layout_of(sm, 13, &l) == RECIO_ERR_FORMAT);        /* objects do not fill the rest */
    CHECK(recio_det_layout_of(sm + 4, 1, &l) == RECIO_ERR_FORMAT);     /* a classification label */
    CHECK(recio_det_layout_of(bad_b, 9, &l) == RECIO_ERR_FORMAT);      /* B < 5 */
    sm[0] = 4.5f;
    CHECK(recio_det_layout_of(sm, 14, &l) == RECIO_ERR_FORMAT);
    sm[0] = 4;
    CHECK(recio_det_labels(out, 20, extra, 2, sm + 4, 5, 2) == 14 && memcmp(out, sm, sizeof sm) == 0);
    CHECK(recio_det_labels(out, 13, extra, 2, sm + 4, 5, 2) == 14); /* too small: the size, nothing written */
    CHECK(recio_det_labels(out, 20, NULL, 0, objs, 6, 1) == 8 && out[0] == 2 && out[1] == 6 && out[7] == 1);
    CHECK(recio_det_layout_of(out, 8, &l) == RECIO_OK && l.object_width == 6 && l.count == 1);
    CHECK(recio_det_labels(out, 20, NULL, 0, objs, 4, 1) == 0);
}

/* A detection .rec in the SageMaker/im2rec layout (made here: [4, 5, W, H] then objects, one of
   them class -1 padding), and recio show drawing its boxes where the objects are, moved by --spec. */
static const unsigned char show_pal[3][3] = {{255, 64, 64}, {64, 220, 64}, {80, 140, 255}};

static int write_det_rec(const char *path, const scene *s) {
    recio_writer *w = NULL;
    float lab[4 + 4 * 5];
    unsigned char *rec, *png;
    int len = 0, k, ok;
    size_t n;
    lab[0] = 4, lab[1] = 5, lab[2] = (float)s->img.width, lab[3] = (float)s->img.height;
    for (k = 0; k < s->n; k++) memcpy(lab + 4 + 5 * k, s->obj + 6 * k, 5 * sizeof(float));
    lab[4 + 5 * k] = -1, lab[5 + 5 * k] = lab[6 + 5 * k] = lab[7 + 5 * k] = lab[8 + 5 * k] = 0; /* MXNet's padding */
    n = recio_irecord_pack_header(NULL, NULL, (uint32_t)(9 + 5 * k), 0, 0);
    if (!(png = png_bytes(&s->img, &len))) return 0;
    rec = (unsigned char *)malloc(n + (size_t)len);
    recio_irecord_pack_header(rec, lab, (uint32_t)(9 + 5 * k), 7, 0);
    memcpy(rec + n, png, (size_t)len);
    ok = recio_writer_open(&w, path) == RECIO_OK && recio_writer_write(w, rec, n + (size_t)len) == RECIO_OK;
    ok &= recio_writer_close(w) == RECIO_OK;
    free(rec);
    free(png);
    return ok;
}

/* Does some corner of object k's box (flipped when asked) have its class's colour on the sheet? */
static int box_drawn(const recio_image *sheet, const scene *s, int k, int flipped) {
    const float *o = s->obj + 6 * k;
    int W = s->img.width, H = s->img.height, oy = 2 + (96 - H) / 2, c, hit = 0;
    float x0 = flipped ? 1 - o[3] : o[1], x1 = flipped ? 1 - o[1] : o[3];
    int xs[2], ys[2];
    xs[0] = 2 + (int)(x0 * W), xs[1] = 2 + (int)(x1 * W + 0.5f) - 1, ys[0] = oy + (int)(o[2] * H), ys[1] = oy + (int)(o[4] * H + 0.5f) - 1;
    for (c = 0; c < 4; c++) {
        int x = xs[c & 1], y = ys[c >> 1], ch, same = 1;
        for (ch = 0; ch < 3; ch++) same &= recio_image_get(sheet, x, y, ch) == show_pal[k][ch];
        hit |= same;
    }
    return hit;
}

static int ink_on_row(const recio_image *img, int y) {
    int x;
    for (x = 0; x < img->width; x++)
        if (recio_image_get(img, x, y, 0) == 240 && recio_image_get(img, x, y, 1) == 240) return 1;
    return 0;
}

static void test_show_draws_boxes(void) {
    const char *recio = getenv("RECIO");
    char cmd[512];
    scene s;
    int k, flipped;
    if (!recio) {
        CHECK(recio != NULL);
        return;
    }
    s = make_scene(96, 80, 3);
    CHECK(write_det_rec("build/tb_det.rec", &s));
    for (flipped = 0; flipped < 2; flipped++) {
        recio_image sheet;
        snprintf(cmd, sizeof cmd, "%s show build/tb_det.rec build/tb_sheet.png --tile 96 %s >/dev/null", recio, flipped ? "--spec flip" : "");
        CHECK(sh(cmd) == 0);
        sheet = decode_file("build/tb_sheet.png");
        CHECK(sheet.height > 96 + 4 + 11 && (sheet.height - 96 - 6) % 9 == 0); /* the long label wraps onto lines */
        CHECK(ink_on_row(&sheet, sheet.height - 5));                            /* ... down to the last one */
        for (k = 0; k < s.n; k++)
            if (!box_drawn(&sheet, &s, k, flipped)) fprintf(stderr, "  object %d%s: no box on the sheet\n", k, flipped ? " (flipped)" : ""), CHECK(0);
        recio_image_free(&sheet);
    }
    free_scene(&s);
}

/* Boxes past the image (issue 23, item 10): each outline is clipped to its image. One object of
   +-1.7e7 took 2.75 s and drew nothing (all of it off the sheet), a box running off the right
   and bottom drew into the border, and a NaN side or a class of 1e30 were undefined casts. On a
   40x30 grey image in a 40-pixel tile (so the image sits at (2, 7)): the huge box (class 1, green)
   is the image's border, the half-outside box (class 0, red) is clipped to its lower-right
   quarter, the NaN box is not drawn, and no box colour lands outside the image. */
static void test_show_clips_boxes(void) {
    static const unsigned char grey[3] = {100, 100, 100};
    static const float lab[] = {2, 5, 1, -1.7e7f, -1.7e7f, 1.7e7f, 1.7e7f, 0, 0.5f, 0.5f, 3.0f, 3.0f,
                                2, NAN, 0.1f, 0.5f, 0.5f, 1e30f, 0.1f, 0.1f, 0.3f, 0.3f};
    const char *recio = getenv("RECIO");
    recio_image img, sheet;
    recio_writer *w = NULL;
    unsigned char *rec, *png;
    int len = 0, x, y, stray = 0, border = 0, ok;
    size_t n = recio_irecord_pack_header(NULL, lab, (uint32_t)(sizeof lab / sizeof lab[0]), 0, 0);
    char cmd[512];
    if (!recio) {
        CHECK(recio != NULL);
        return;
    }
    CHECK(recio_image_alloc(&img, 40, 30, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (y = 0; y < 30; y++)
        for (x = 0; x < 40; x++) memcpy((unsigned char *)img.data + y * img.stride + 3 * x, grey, 3);
    png = png_bytes(&img, &len);
    rec = (unsigned char *)malloc(n + (size_t)len);
    CHECK(png && rec);
    if (!png || !rec) return;
    recio_irecord_pack_header(rec, lab, (uint32_t)(sizeof lab / sizeof lab[0]), 1, 0);
    memcpy(rec + n, png, (size_t)len);
    ok = recio_writer_open(&w, "build/tb_clip.rec") == RECIO_OK && recio_writer_write(w, rec, n + (size_t)len) == RECIO_OK;
    CHECK(recio_writer_close(w) == RECIO_OK && ok);
    free(rec), free(png), recio_image_free(&img);
    snprintf(cmd, sizeof cmd, "%s show build/tb_clip.rec build/tb_clip.png --tile 40 >/dev/null", recio);
    CHECK(sh(cmd) == 0);
    sheet = decode_file("build/tb_clip.png");
    CHECK(sheet.width == 44);
    for (y = 0; sheet.data && y < sheet.height; y++)
        for (x = 0; x < sheet.width; x++) {
            int r = (int)recio_image_get(&sheet, x, y, 0), g = (int)recio_image_get(&sheet, x, y, 1), b = (int)recio_image_get(&sheet, x, y, 2);
            int inside = x >= 2 && x < 42 && y >= 7 && y < 37, red = r == 255 && g == 64 && b == 64, green = r == 64 && g == 220 && b == 64;
            int edge = inside && (x == 2 || x == 41 || y == 7 || y == 36), quarter = x >= 22 && y >= 22;
            int is_box = !(r == g && g == b); /* grey background, black border, white-ish ink are not */
            if (!inside && is_box) stray++;
            if (edge && !(quarter && (x == 41 || y == 36) ? red : green)) border++;
        }
    if (stray || border) fprintf(stderr, "  %d box pixels outside the image, %d border pixels not the clipped boxes' colours\n", stray, border);
    CHECK(sheet.data && stray == 0 && border == 0);
    recio_image_free(&sheet);
}

int main(void) {
    RUN(test_boxes_and_mask_follow_pixels);
    RUN(test_bbox_crop_meets_constraint);
    RUN(test_bbox_crop_without_boxes);
    RUN(test_bbox_crop_fallback);
    RUN(test_mask_labels_never_blended);
    RUN(test_drop_and_clip);
    RUN(test_invalid_boxes_refused);
    RUN(test_clip_without_geometry);
    RUN(test_mask_fill_and_args);
    RUN(test_encoded_path);
    RUN(test_cli_boxes_and_mask);
    RUN(test_det_layout);
    RUN(test_show_draws_boxes);
    RUN(test_show_clips_boxes);
    return t_done("boxes");
}
