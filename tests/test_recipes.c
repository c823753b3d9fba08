/* The classification recipes of issue 16: resampling filters, non-square random_resized_crop, random
   ranges, per-side pad, bgr, random erasing, cutout, Gaussian blur, RandAugment, TrivialAugmentWide
   and AutoAugment's CIFAR-10 / SVHN policies. Expected values come from outside recio: hand-computed
   (noted at each test), from images whose pixels encode their own coordinates, or from torchvision /
   PIL / OpenCV through tests/data/recipes/make_refs.py (the reference files it writes). */
/* The implementation is included: the tests turn fusion off through the transform's struct
   (recio_transform.fuse: a test hook, not public API) and read the policies' spec text. */
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include <math.h>

static recio_image gray_from(const unsigned char *v, int w, int h) {
    recio_image img = {0};
    CHECK(recio_image_alloc(&img, w, h, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    memcpy(img.data, v, (size_t)w * h);
    return img;
}

static recio_err run(const char *spec, const recio_image *in, recio_image *out, uint64_t seed) {
    recio_transform *t = NULL;
    char msg[200];
    recio_err e = t_parse_ex(&t, spec, NULL, msg, sizeof msg);
    if (e != RECIO_OK) {
        fprintf(stderr, "  '%s': %s\n", spec, msg);
        return e;
    }
    e = recio_transform_apply(t, in, out, seed);
    recio_transform_free(t);
    return e;
}

static int px(const recio_image *img, int x, int y, int c) { return (int)recio_image_get(img, x, y, c); }

/* pad(L,T,R,B,VALUE) on a 2x2 image [1 2; 3 4]: by hand, pad(1,2,0,1,9) is 3 wide and 5 tall:
     9 9 9 / 9 9 9 / 9 1 2 / 9 3 4 / 9 9 9 */
static void test_pad_sides(void) {
    static const unsigned char v[4] = {1, 2, 3, 4};
    static const unsigned char want[15] = {9, 9, 9, 9, 9, 9, 9, 1, 2, 9, 3, 4, 9, 9, 9};
    recio_image in = gray_from(v, 2, 2), out = {0}, out2 = {0};
    recio_transform *t = NULL;
    char msg[160];
    CHECK(run("pad(1,2,0,1,9)", &in, &out, 0) == RECIO_OK);
    CHECK(out.width == 3 && out.height == 5);
    if (out.width == 3 && out.height == 5) CHECK(memcmp(out.data, want, 15) == 0);
    CHECK(recio_image_pad(&in, &out2, 1, 2, 0, 1, 9) == RECIO_OK);
    if (out2.data && out.data) CHECK(memcmp(out2.data, want, 15) == 0);
    recio_image_free(&out), recio_image_free(&out2);
    /* pad(1) and pad(1,5) keep their meaning: N on every side, VALUE 5 */
    CHECK(run("pad(1,5)", &in, &out, 0) == RECIO_OK);
    CHECK(out.width == 4 && out.height == 4 && px(&out, 0, 0, 0) == 5 && px(&out, 1, 1, 0) == 1 && px(&out, 3, 3, 0) == 5);
    recio_image_free(&out);
    CHECK(t_parse_ex(&t, "pad(1,2,3)", NULL, msg, sizeof msg) == RECIO_ERR_SPEC);
    CHECK(strstr(msg, "LEFT,TOP,RIGHT,BOTTOM") != NULL);
    CHECK(t_parse_ex(&t, "pad(1,2.5,3,4)", NULL, msg, sizeof msg) == RECIO_ERR_SPEC);
    recio_image_free(&in);
}

/* bgr: (10, 20, 30) becomes (30, 20, 10), in u8 HWC, f32 and CHW alike; alpha stays */
static void test_bgr(void) {
    static const char *specs[] = {"bgr", "float bgr", "chw bgr", "normalize(0,0,0,1,1,1) chw bgr"};
    recio_image in = {0}, out = {0};
    int i, x, y;
    CHECK(recio_image_alloc(&in, 3, 2, 4, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (y = 0; y < 2; y++)
        for (x = 0; x < 3; x++) {
            unsigned char *p = (unsigned char *)in.data + (y * 3 + x) * 4;
            p[0] = (unsigned char)(10 + x), p[1] = 20, p[2] = (unsigned char)(30 + y), p[3] = 40;
        }
    for (i = 0; i < 4; i++) {
        CHECK(run(specs[i], &in, &out, 0) == RECIO_OK);
        for (y = 0; y < 2 && out.data; y++)
            for (x = 0; x < 3; x++)
                CHECK(px(&out, x, y, 0) == 30 + y && px(&out, x, y, 1) == 20 && px(&out, x, y, 2) == 10 + x && px(&out, x, y, 3) == 40);
        recio_image_free(&out);
    }
    recio_image_free(&in);
}

/* rotate(45, 77) of a flat 9x9 image of 10: the corners come from outside (77), the centre stays 10;
   random_rotate(30, 200) the same with 200. */
static void test_rotate_fill(void) {
    unsigned char v[81];
    recio_image in, out = {0};
    memset(v, 10, sizeof v);
    in = gray_from(v, 9, 9);
    CHECK(run("rotate(45,77)", &in, &out, 0) == RECIO_OK);
    CHECK(px(&out, 0, 0, 0) == 77 && px(&out, 8, 8, 0) == 77 && px(&out, 4, 4, 0) == 10);
    recio_image_free(&out);
    CHECK(run("random_rotate(30,200)", &in, &out, 3) == RECIO_OK);
    CHECK(px(&out, 4, 4, 0) == 10 && (px(&out, 0, 0, 0) == 200 || px(&out, 8, 0, 0) == 200));
    recio_image_free(&out);
    CHECK(run("rotate(45)", &in, &out, 0) == RECIO_OK); /* default: 0 as before */
    CHECK(px(&out, 0, 0, 0) == 0);
    recio_image_free(&out);
    recio_image_free(&in);
}

/* random_shear_x(MAX), MXNet's shear: a vertical line x = 20 of a 41x41 image moves, in row y, to
   20 + s (y - 20.5) (forward map x' = x + s (y - H/2)); the factor read back from rows 5 and 35 stays
   in [-MAX, MAX] and takes both signs and most of the range over 60 seeds, and rows 20 and 21 stay
   around x = 20 (the shear is about the middle row, H/2 = 20.5). random_shear_y the same, turned. */
static double line_x(const recio_image *img, int y) {
    double s = 0, sw = 0;
    int x;
    for (x = 0; x < img->width; x++) s += x * (double)px(img, x, y, 0), sw += px(img, x, y, 0);
    return sw > 0 ? s / sw : -1;
}
static void test_random_shear(void) {
    unsigned char v[41 * 41];
    recio_image in, out = {0};
    int seed, y;
    double lo = 1, hi = -1;
    memset(v, 0, sizeof v);
    for (y = 0; y < 41; y++) v[y * 41 + 20] = 255;
    in = gray_from(v, 41, 41);
    for (seed = 0; seed < 60; seed++) {
        double f;
        CHECK(run("random_shear_x(0.3)", &in, &out, (uint64_t)seed) == RECIO_OK);
        f = (line_x(&out, 35) - line_x(&out, 5)) / 30.0;
        CHECK(f >= -0.3 - 0.01 && f <= 0.3 + 0.01);
        CHECK(fabs((line_x(&out, 20) + line_x(&out, 21)) / 2 - 20) < 0.05);
        CHECK(fabs(line_x(&out, 5) - (20 + f * (5 - 20.5))) < 0.05);
        if (f < lo) lo = f;
        if (f > hi) hi = f;
        recio_image_free(&out);
    }
    CHECK(lo < -0.2 && hi > 0.2);
    recio_image_free(&in);
    { /* y: a horizontal line y = 20 turned the same way; column 20/21 in the middle stays at y = 20 */
        int x, yy, moved = 0;
        memset(v, 0, sizeof v);
        for (x = 0; x < 41; x++) v[20 * 41 + x] = 255;
        in = gray_from(v, 41, 41);
        for (seed = 0; seed < 20; seed++) {
            double s0 = 0, w0 = 0, s1 = 0, w1 = 0;
            CHECK(run("random_shear_y(0.3)", &in, &out, (uint64_t)seed) == RECIO_OK);
            for (yy = 0; yy < 41; yy++) s0 += yy * (double)px(&out, 20, yy, 0), w0 += px(&out, 20, yy, 0), s1 += yy * (double)px(&out, 5, yy, 0), w1 += px(&out, 5, yy, 0);
            CHECK(w0 > 0 && fabs(s0 / w0 - 20) < 0.6); /* column 20 is half a pixel from the middle, 20.5 */
            moved += w1 > 0 && fabs(s1 / w1 - 20) > 1;
            recio_image_free(&out);
        }
        CHECK(moved > 10);
        recio_image_free(&in);
    }
}

/* random_posterize(MIN,MAX) on a ramp 0..255: b bits leave exactly 2^b distinct values; every b of
   MIN..MAX appears over 80 seeds, and no other. random_solarize(MIN,MAX): the ramp is inverted from
   the threshold T on (out(i) = i below T, 255 - i from T), so T is the first i that moved. */
static void test_random_lut_ranges(void) {
    unsigned char v[256];
    recio_image in, out = {0};
    int seed, i, seen[9] = {0};
    double tlo = 999, thi = -1;
    for (i = 0; i < 256; i++) v[i] = (unsigned char)i;
    in = gray_from(v, 256, 1);
    for (seed = 0; seed < 80; seed++) {
        int hist[256] = {0}, distinct = 0, b;
        CHECK(run("random_posterize(3,6)", &in, &out, (uint64_t)seed) == RECIO_OK);
        for (i = 0; i < 256 && out.data; i++) distinct += !hist[px(&out, i, 0, 0)]++;
        for (b = 0; b <= 8; b++)
            if (distinct == 1 << b) seen[b]++;
        recio_image_free(&out);
        CHECK(run("random_solarize(64,192)", &in, &out, (uint64_t)seed) == RECIO_OK);
        for (i = 0; i < 256 && out.data && px(&out, i, 0, 0) == i; i++) {}
        if (i < tlo) tlo = i;
        if (i > thi) thi = i;
        CHECK(i >= 64 && i <= 193);
        recio_image_free(&out);
    }
    CHECK(seen[3] && seen[4] && seen[5] && seen[6] && seen[3] + seen[4] + seen[5] + seen[6] == 80);
    CHECK(tlo < 80 && thi > 176);
    recio_image_free(&in);
}

/* random_sharpness(MIN,MAX): one pixel of 200 on 0 in a 5x5 image. PIL's SMOOTH kernel gives
   s = round(200 * 5 / 13) = 77 there, and the result is s + F (200 - s), so F = (out - 77) / 123 (to
   within 1/123 for the rounding). */
static void test_random_sharpness(void) {
    unsigned char v[25];
    recio_image in, out = {0};
    int seed;
    double lo = 9, hi = -9;
    memset(v, 0, sizeof v);
    v[12] = 200;
    in = gray_from(v, 5, 5);
    for (seed = 0; seed < 60; seed++) {
        double f;
        CHECK(run("random_sharpness(0.2,1.4)", &in, &out, (uint64_t)seed) == RECIO_OK);
        f = (px(&out, 2, 2, 0) - 77) / 123.0;
        CHECK(f > 0.2 - 0.01 && f < 1.4 + 0.01); /* 1.45 would clamp at 255 */
        if (f < lo) lo = f;
        if (f > hi) hi = f;
        recio_image_free(&out);
    }
    CHECK(lo < 0.4 && hi > 1.2);
    recio_image_free(&in);
}

/* One erased rectangle of value v in an image of 1 (u8) is found by its bounding box; the rest is 1. */
static int find_rect(const recio_image *img, int v, int r[4]) {
    int x, y, n = 0;
    r[0] = r[1] = 1 << 30, r[2] = r[3] = -1;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++) {
            int p = px(img, x, y, 0);
            if (p != v) continue;
            n++;
            if (x < r[0]) r[0] = x;
            if (y < r[1]) r[1] = y;
            if (x > r[2]) r[2] = x;
            if (y > r[3]) r[3] = y;
        }
    if (!n) return 0;
    r[2] -= r[0] - 1, r[3] -= r[1] - 1;
    return n == r[2] * r[3] ? 1 : -1; /* -1: not one solid rectangle */
}

/* An independent model of torchvision 0.14's RandomErasing.get_params (transcribed from its source),
   driven by recio's public generator as the executor seeds it: torch.rand(1) < p; ten tries of
   erase_area = area * U(scale), aspect = exp(U(log ratio)), h = int(round(sqrt(area * aspect))), w the
   same with / aspect (Python's round: half to even), kept when h < H and w < W; then i =
   randint(0, H - h + 1) (the top) and j = randint(0, W - w + 1). Returns 0 for "unchanged". */
static int erasing_model(uint64_t seed, int W, int H, double p, double s0, double s1, double r0, double r1, int r[4]) {
    recio_rng g;
    double area = (double)W * H, l0 = log(r0), l1 = log(r1);
    int k;
    g.state = seed;
    if (!(recio_rng_uniform(&g) < p)) return 0;
    for (k = 0; k < 10; k++) {
        double ea = area * (s0 + (s1 - s0) * recio_rng_uniform(&g)), ar = exp(l0 + (l1 - l0) * recio_rng_uniform(&g));
        double h = rint(sqrt(ea * ar)), w = rint(sqrt(ea / ar));
        if (!(h < H && w < W)) continue;
        r[3] = (int)h, r[2] = (int)w;
        r[1] = (int)recio_rng_below(&g, (uint64_t)(H - r[3]) + 1);
        r[0] = (int)recio_rng_below(&g, (uint64_t)(W - r[2]) + 1);
        return 1;
    }
    return 0;
}

/* random_erasing: the model's rectangle exactly, for 300 seeds and three settings (one where the
   ten tries often fail); and torchvision's rules checked on what comes out: P = 0 never erases,
   P = 1 always erases (a 60x50 image always has a fit in ten tries of these ranges) one solid
   rectangle whose area is SMIN..SMAX of the image and aspect h/w RMIN..RMAX, within the rounding of
   h and w to whole pixels; P = 0.5 erases about half the time (binomial: 200 draws within 5 sigma). */
static void test_random_erasing(void) {
    unsigned char v[60 * 50];
    recio_image in, out = {0};
    int seed, hits = 0, r[4];
    memset(v, 1, sizeof v);
    in = gray_from(v, 60, 50);
    for (seed = 0; seed < 200; seed++) {
        CHECK(run("random_erasing(0)", &in, &out, (uint64_t)seed) == RECIO_OK);
        CHECK(find_rect(&out, 7, r) == 0 && memcmp(out.data, v, sizeof v) == 0);
        recio_image_free(&out);
        CHECK(run("random_erasing(1,0.1,0.3,0.5,2,7)", &in, &out, (uint64_t)seed) == RECIO_OK);
        if (find_rect(&out, 7, r) == 1) {
            double a = (double)r[2] * r[3] / 3000.0, ar = (double)r[3] / r[2];
            double da = (r[2] + r[3] + 1.0) / 3000.0, dr = ar * (1.0 / r[2] + 1.0 / r[3]); /* one pixel of rounding */
            CHECK(a >= 0.1 - da && a <= 0.3 + da);
            CHECK(ar >= 0.5 - dr && ar <= 2 + dr);
        } else {
            CHECK(0);
        }
        recio_image_free(&out);
        CHECK(run("random_erasing(0.5,0.02,0.33,0.3,3.3,7)", &in, &out, (uint64_t)seed) == RECIO_OK);
        hits += find_rect(&out, 7, r) == 1;
        recio_image_free(&out);
    }
    CHECK(hits > 100 - 5 * 7 && hits < 100 + 5 * 7);
    {
        static const double set[3][5] = {{0.5, 0.02, 0.33, 0.3, 3.3}, {1, 0.1, 0.3, 0.5, 2}, {0.9, 0.5, 0.9, 0.2, 5}};
        int k, erased = 0, kept = 0;
        for (k = 0; k < 3; k++)
            for (seed = 0; seed < 300; seed++) {
                char spec[120];
                int m[4], got;
                snprintf(spec, sizeof spec, "random_erasing(%g,%g,%g,%g,%g,7)", set[k][0], set[k][1], set[k][2], set[k][3], set[k][4]);
                CHECK(run(spec, &in, &out, (uint64_t)seed) == RECIO_OK);
                got = find_rect(&out, 7, r);
                if (erasing_model((uint64_t)seed, 60, 50, set[k][0], set[k][1], set[k][2], set[k][3], set[k][4], m)) {
                    erased++;
                    if (got != 1 || memcmp(r, m, sizeof m) != 0)
                        fprintf(stderr, "  %s seed %d: %d,%d %dx%d, model %d,%d %dx%d\n", spec, seed, r[0], r[1], r[2], r[3], m[0], m[1], m[2], m[3]), CHECK(0);
                } else {
                    kept++;
                    CHECK(got == 0);
                }
                recio_image_free(&out);
            }
        printf("random_erasing: %d erased, %d left alone, every rectangle the model's\n", erased, kept);
        CHECK(erased > 300 && kept > 150);
    }
    /* aspect ratios of 1e5 never fit in ten tries: unchanged (and no int overflow on the way) */
    CHECK(run("random_erasing(1,0.1,0.3,100000,900000,7)", &in, &out, 3) == RECIO_OK);
    CHECK(out.data && memcmp(out.data, v, sizeof v) == 0);
    recio_image_free(&out);
    /* after normalize the value is in normalised units: 0 is the mean */
    CHECK(run("normalize(1,1,1,2,2,2) random_erasing(1,0.2,0.2,1,1,-3)", &in, &out, 1) == RECIO_OK);
    CHECK(out.dtype == RECIO_F32);
    {
        int x, y, neg = 0, zero = 0;
        for (y = 0; y < out.height; y++)
            for (x = 0; x < out.width; x++) neg += recio_image_get(&out, x, y, 0) == -3.0f, zero += recio_image_get(&out, x, y, 0) == 0.0f;
        CHECK(neg > 0 && neg + zero == 3000); /* (1 - 1) / 2 = 0 elsewhere */
    }
    recio_image_free(&out);
    recio_image_free(&in);
}

/* cutout(SIZE): DeVries' code as the model (y = randint(h), x = randint(w) from the public generator,
   rows clip(y - SIZE//2, 0, h) .. clip(y + SIZE//2, 0, h), columns the same): exactly its square, whole
   and clipped ones among 100 seeds; an odd SIZE erases SIZE - 1 (their integer halves). */
static void test_cutout(void) {
    unsigned char v[40 * 30];
    recio_image in, out = {0};
    int seed, r[4], whole = 0, clipped = 0;
    memset(v, 1, sizeof v);
    in = gray_from(v, 40, 30);
    for (seed = 0; seed < 100; seed++) {
        recio_rng g;
        int y, x, m[4];
        g.state = (uint64_t)seed;
        y = (int)recio_rng_below(&g, 30), x = (int)recio_rng_below(&g, 40);
        m[0] = x - 5 < 0 ? 0 : x - 5, m[1] = y - 5 < 0 ? 0 : y - 5;
        m[2] = (x + 5 > 40 ? 40 : x + 5) - m[0], m[3] = (y + 5 > 30 ? 30 : y + 5) - m[1];
        CHECK(run("cutout(10,9)", &in, &out, (uint64_t)seed) == RECIO_OK);
        CHECK(find_rect(&out, 9, r) == 1);
        CHECK(memcmp(r, m, sizeof m) == 0);
        CHECK(r[2] >= 5 && r[2] <= 10 && r[3] >= 5 && r[3] <= 10);
        whole += r[2] == 10 && r[3] == 10;
        clipped += r[2] < 10 || r[3] < 10;
        recio_image_free(&out);
    }
    CHECK(whole > 20 && clipped > 20);
    CHECK(run("cutout(7)", &in, &out, 1) == RECIO_OK);
    CHECK(find_rect(&out, 0, r) == 1 && r[2] <= 6 && r[3] <= 6);
    recio_image_free(&out);
    recio_image_free(&in);
}

/* Max and count of differences of out against a raw RGB reference file. */
static int compare_ref(const recio_image *out, const char *ref, int *count) {
    size_t n = 0, i;
    unsigned char *want = t_slurp(ref, &n);
    int worst = 0;
    *count = 0;
    CHECK(want != NULL);
    if (!want) return 999;
    CHECK_EQ_INT(n, recio_image_bytes(out));
    for (i = 0; i < n && i < recio_image_bytes(out); i++) {
        int d = abs((int)((unsigned char *)out->data)[i] - (int)want[i]);
        if (d > worst) worst = d;
        *count += d != 0;
    }
    free(want);
    return worst;
}

static recio_image retina(void) {
    size_t n = 0;
    unsigned char *b = t_slurp("tests/data/image/retina.png", &n);
    recio_image img = {0};
    CHECK(b && recio_image_decode(&img, b, n, 3) == RECIO_OK);
    free(b);
    return img;
}

/* torchvision's F.gaussian_blur on the same pixels (float32 2-D convolution, reflect padding,
   rounded): recio's separable float sums differ only in the order of additions, so a value may land
   on the other side of .5: at most 1 apart, in under 1% of the bytes. The op with a fixed sigma
   (two arguments) is the public function. */
static void test_gaussian_blur_matches_torchvision(void) {
    static const struct { int k; float s; const char *ref, *spec; } c[] = {
        {5, 1.3f, "tests/data/recipes/blur-k5-s1.3.rgb", "gaussian_blur(5,1.3)"},
        {9, 3.0f, "tests/data/recipes/blur-k9-s3.rgb", "gaussian_blur(9,3)"},
        {3, 0.5f, "tests/data/recipes/blur-k3-s0.5.rgb", "gaussian_blur(3,0.5)"}};
    recio_image in = retina(), out = {0};
    size_t i;
    int count;
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        CHECK(recio_image_gaussian_blur(&in, &out, c[i].k, c[i].s) == RECIO_OK);
        CHECK(compare_ref(&out, c[i].ref, &count) <= 1);
        printf("gaussian_blur(%d, %g) vs torchvision: %d of %d bytes differ by 1\n", c[i].k, c[i].s, count, (int)recio_image_bytes(&out));
        CHECK(count * 100 < (int)recio_image_bytes(&out));
        recio_image_free(&out);
        CHECK(run(c[i].spec, &in, &out, 5) == RECIO_OK);
        CHECK(compare_ref(&out, c[i].ref, &count) <= 1);
        recio_image_free(&out);
    }
    CHECK(recio_image_gaussian_blur(&in, &out, 4, 1) == RECIO_ERR_ARG); /* even: torchvision refuses it too */
    recio_image_free(&in);
}

/* random_resized_crop(W,H,...) on an image whose pixels are their own coordinates (R = x, G = y):
   bilinear resampling reproduces a linear ramp, so the first and last output columns and rows say
   which source rectangle was read: x0 + (i + 0.5) * cw / W - 0.5 at column i. The rectangle is the
   one the square form draws for the same seed (the draw does not depend on the output size), its
   area is smin..smax of the image and its aspect rmin..rmax (to a pixel). */
static void crop_read_back(const recio_image *o, double r[4]) {
    double a = px(o, 0, 0, 0), b = px(o, o->width - 1, 0, 0), c = px(o, 0, 0, 1), d = px(o, 0, o->height - 1, 1);
    /* a = x0 + 0.5 s - 0.5, b = x0 + (W - 0.5) s - 0.5 with s = cw / W */
    double sx = (b - a) / (o->width - 1), sy = (d - c) / (o->height - 1);
    r[2] = sx * o->width, r[3] = sy * o->height;
    r[0] = a + 0.5 - 0.5 * sx, r[1] = c + 0.5 - 0.5 * sy;
}
static void test_rrc_non_square(void) {
    recio_image in = {0}, a = {0}, b = {0};
    int x, y, seed;
    CHECK(recio_image_alloc(&in, 200, 150, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (y = 0; y < 150; y++)
        for (x = 0; x < 200; x++) {
            unsigned char *p = (unsigned char *)in.data + (y * 200 + x) * 3;
            p[0] = (unsigned char)x, p[1] = (unsigned char)y, p[2] = 0;
        }
    for (seed = 0; seed < 30; seed++) {
        double ra[4], rb[4];
        CHECK(run("random_resized_crop(64,40,0.2,0.9,0.6,1.6)", &in, &a, (uint64_t)seed) == RECIO_OK);
        CHECK(run("random_resized_crop(50,0.2,0.9,0.6,1.6)", &in, &b, (uint64_t)seed) == RECIO_OK);
        CHECK(a.width == 64 && a.height == 40 && b.width == 50 && b.height == 50);
        crop_read_back(&a, ra), crop_read_back(&b, rb);
        for (x = 0; x < 4; x++)
            if (fabs(ra[x] - rb[x]) >= 2.5) /* each read back to about a pixel (u8 rounding) */ printf("seed %d: %g %g %g %g vs %g %g %g %g\n", seed, ra[0], ra[1], ra[2], ra[3], rb[0], rb[1], rb[2], rb[3]), CHECK(0);
        CHECK(ra[2] * ra[3] > 0.2 * 30000 * 0.9 && ra[2] * ra[3] < 0.9 * 30000 * 1.1);
        CHECK(ra[2] / ra[3] > 0.6 * 0.9 && ra[2] / ra[3] < 1.6 * 1.1);
        recio_image_free(&a), recio_image_free(&b);
    }
    /* the six-argument form is always W,H,... (a height of 1 too) */
    CHECK(run("random_resized_crop(30,1,0.5,1,0.75,1.33)", &in, &a, 1) == RECIO_OK);
    CHECK(a.width == 30 && a.height == 1);
    recio_image_free(&a);
    CHECK(run("random_resized_crop(30,1)", &in, &a, 1) == RECIO_OK); /* (S, smin): square, as before */
    CHECK(a.width == 30 && a.height == 30);
    recio_image_free(&a);
    recio_image_free(&in);
}

/* Resampling against the libraries each filter follows (tests/data/recipes/make_refs.py):
   - NEAREST is cv2.INTER_NEAREST to the byte (only indices: floor(x * src / dst));
   - CUBIC and LANCZOS are cv2.INTER_CUBIC / INTER_LANCZOS4: the same taps rounded to 2^11 and the
     same integer sums, so equal but where a float weight computed in another order rounds to the
     other side (allowed: 1, on under 0.5% of the bytes);
   - the _AA filters are PIL's kernels; PIL rounds its horizontal pass to u8 and keeps 22-bit taps,
     (clamped to 0..255, which cuts the overshoot of the negative lobes), recio keeps the pass in
     2^11 fixed point, torchvision (0.14, uint8 tensors) computes in float: within 1 of
     torchvision on under 5% of the bytes (0.9% measured), within 3 of PIL (3 only for Lanczos at a
     shrink of 5). Counts printed. LANCZOS_AA has no torchvision form. */
typedef struct ref_case {
    recio_filter f;
    const char *ref;
    int tol;
    double share; /* most bytes that may differ */
} ref_case;
static void test_filters_match_references(void) {
    static const int sizes[3][2] = {{61, 37}, {23, 17}, {144, 108}};
    recio_image in = retina();
    int z;
    for (z = 0; z < 3; z++) {
        int w = sizes[z][0], h = sizes[z][1];
        const ref_case c[] = {{RECIO_NEAREST, "cv-nearest", 0, 0},       {RECIO_CUBIC, "cv-cubic", 1, 0.005},
                              {RECIO_LANCZOS, "cv-lanczos", 1, 0.005},   {RECIO_LINEAR_AA, "tv-linear", 1, 0.05},
                              {RECIO_CUBIC_AA, "tv-cubic", 1, 0.05},     {RECIO_LINEAR_AA, "pil-linear", 1, 0.2},
                              {RECIO_CUBIC_AA, "pil-cubic", 2, 0.2},     {RECIO_LANCZOS_AA, "pil-lanczos", 3, 0.2}};
        size_t i;
        for (i = 0; i < sizeof c / sizeof c[0]; i++) {
            char path[160];
            recio_image out = {0};
            int count, worst;
            if (w > 120 && c[i].ref[0] != 'c') continue; /* PIL and torchvision: shrinking only */
            snprintf(path, sizeof path, "tests/data/recipes/%s-%dx%d.rgb", c[i].ref, w, h);
            CHECK(recio_image_resize(&in, &out, w, h, c[i].f) == RECIO_OK);
            worst = compare_ref(&out, path, &count);
            printf("%-12s %3dx%-3d: max diff %d, %d of %d bytes differ\n", c[i].ref, w, h, worst, count, w * h * 3);
            if (worst > c[i].tol || count > c[i].share * w * h * 3) fprintf(stderr, "  %s\n", path), CHECK(0);
            recio_image_free(&out);
        }
    }
    recio_image_free(&in);
}

/* The filters of the spec: interp(NAME[,antialias]) before a resize gives the public resize's bytes
   with that filter (the fused pass and the op-by-op one alike), and only the next resize uses it. */
static void test_interp_op(void) {
    static const struct { const char *spec; recio_filter f; } c[] = {
        {"interp(nearest) resize(50,40)", RECIO_NEAREST}, {"interp(cubic) resize(50,40)", RECIO_CUBIC},
        {"interp(lanczos) resize(50,40)", RECIO_LANCZOS}, {"interp(linear, antialias) resize(50,40)", RECIO_LINEAR_AA},
        {"interp(cubic,antialias) resize(50,40)", RECIO_CUBIC_AA}, {"interp(lanczos,antialias) resize(50,40)", RECIO_LANCZOS_AA},
        {"interp(area) resize(50,40)", RECIO_AREA}, {"interp(linear) resize(50,40)", RECIO_LINEAR},
        {"interp(nearest,antialias) resize(50,40)", RECIO_NEAREST}, {"resize(50,40)", RECIO_LINEAR}};
    recio_image in = retina(), a = {0}, b = {0}, c2 = {0};
    recio_transform *t = NULL;
    recio_transform_desc d;
    char msg[160];
    size_t i;
    memset(&d, 0, sizeof d);
    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        CHECK(run(c[i].spec, &in, &a, 0) == RECIO_OK);
        CHECK(recio_image_resize(&in, &b, 50, 40, c[i].f) == RECIO_OK);
        CHECK(a.data && b.data && memcmp(a.data, b.data, recio_image_bytes(&b)) == 0);
        CHECK(t_parse_ex(&t, c[i].spec, &d, NULL, 0) == RECIO_OK);
        t->fuse = 0;
        CHECK(recio_transform_apply(t, &in, &c2, 0) == RECIO_OK);
        CHECK(c2.data && memcmp(c2.data, b.data, recio_image_bytes(&b)) == 0);
        recio_transform_free(t);
        recio_image_free(&a), recio_image_free(&b), recio_image_free(&c2);
    }
    /* one-shot: the second resize is LINEAR again */
    CHECK(run("interp(nearest) resize(80,60) resize(50,40)", &in, &a, 0) == RECIO_OK);
    CHECK(recio_image_resize(&in, &b, 80, 60, RECIO_NEAREST) == RECIO_OK);
    CHECK(recio_image_resize(&b, &c2, 50, 40, RECIO_LINEAR) == RECIO_OK);
    CHECK(a.data && c2.data && memcmp(a.data, c2.data, recio_image_bytes(&c2)) == 0);
    recio_image_free(&a), recio_image_free(&b), recio_image_free(&c2);
    CHECK(t_parse_ex(&t, "interp(bicubic) resize(4,4)", NULL, msg, sizeof msg) == RECIO_ERR_SPEC);
    CHECK(strstr(msg, "expected nearest, linear, cubic, lanczos, area or auto") != NULL);
    CHECK(t_parse_ex(&t, "interp(cubic, fast)", NULL, msg, sizeof msg) == RECIO_ERR_SPEC);
    CHECK(recio_image_resize(&in, &a, 5, 5, (recio_filter)9) == RECIO_ERR_ARG);
    /* interp(auto), MXNet's inter_method 9 (GetInterMethod): both sides larger -> CUBIC, both smaller
       -> AREA, anything else -> LINEAR; the retina photo is 120x90 */
    {
        static const struct { int w, h; recio_filter f; } au[] = {{150, 100, RECIO_CUBIC}, {60, 40, RECIO_AREA},
                                                                 {150, 60, RECIO_LINEAR}, {120, 45, RECIO_LINEAR}};
        size_t k;
        for (k = 0; k < sizeof au / sizeof au[0]; k++) {
            char spec[60];
            snprintf(spec, sizeof spec, "interp(auto) resize(%d,%d)", au[k].w, au[k].h);
            CHECK(run(spec, &in, &a, 0) == RECIO_OK);
            CHECK(recio_image_resize(&in, &b, au[k].w, au[k].h, au[k].f) == RECIO_OK);
            CHECK(a.data && b.data && memcmp(a.data, b.data, recio_image_bytes(&b)) == 0);
            recio_image_free(&b);
            CHECK(recio_image_resize(&in, &b, au[k].w, au[k].h, RECIO_AUTO) == RECIO_OK);
            CHECK(a.data && b.data && memcmp(a.data, b.data, recio_image_bytes(&b)) == 0);
            recio_image_free(&a), recio_image_free(&b);
        }
    }
    recio_image_free(&in);
}

/* Constant images stay constant through every filter, shrinking and enlarging, on odd sizes down
   to one pixel (taps folded onto the edge or normalised over the inside must still add to one), and
   a one-pixel line survives NEAREST where it falls: hand-computed, the source index of output x is
   floor(x * src / dst). */
static void test_filters_flat_and_nearest(void) {
    int f, k;
    for (f = 0; f <= (int)RECIO_AUTO; f++)
        for (k = 0; k < 40; k++) {
            int sw = t_between(1, 40), sh = t_between(1, 40), dw = t_between(1, 90), dh = t_between(1, 90), i, bad = 0;
            recio_image in = {0}, out = {0};
            CHECK(recio_image_alloc(&in, sw, sh, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
            memset(in.data, 173, recio_image_bytes(&in));
            CHECK(recio_image_resize(&in, &out, dw, dh, (recio_filter)f) == RECIO_OK);
            for (i = 0; i < dw * dh * 3 && out.data; i++) bad += ((unsigned char *)out.data)[i] != 173;
            if (bad) fprintf(stderr, "  filter %d %dx%d -> %dx%d: %d bytes off\n", f, sw, sh, dw, dh, bad), CHECK(0);
            recio_image_free(&in), recio_image_free(&out);
        }
    {
        unsigned char v[10] = {0, 0, 0, 0, 0, 0, 0, 200, 0, 0};
        recio_image in = gray_from(v, 10, 1), out = {0};
        /* 10 -> 4: sources floor(x * 2.5) = 0, 2, 5, 7: output 3 is 200 */
        CHECK(recio_image_resize(&in, &out, 4, 1, RECIO_NEAREST) == RECIO_OK);
        CHECK(px(&out, 0, 0, 0) == 0 && px(&out, 1, 0, 0) == 0 && px(&out, 2, 0, 0) == 0 && px(&out, 3, 0, 0) == 200);
        recio_image_free(&out), recio_image_free(&in);
    }
}

/* The policies against torchvision's own tables (make_refs.py writes them in recio's grammar from
   torchvision 0.14's AutoAugment / RandAugment / TrivialAugmentWide): the preset strings and the
   generated specs are those texts exactly, and the ops `autoaugment(cifar10)`, `randaugment(2,9)`,
   `trivialaugment` give, seed for seed, the bytes of the reference text parsed as a spec. */
static char *slurp_text(const char *path) {
    size_t n = 0;
    char *s = (char *)t_slurp(path, &n), *t;
    CHECK(s != NULL);
    if (!s) return NULL;
    t = (char *)malloc(n + 1);
    memcpy(t, s, n);
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r')) n--;
    t[n] = 0;
    free(s);
    return t;
}
static void same_outputs(const char *a, const char *b, int seeds) {
    recio_image in = retina(), x = {0}, y = {0};
    int seed, differ = 0;
    for (seed = 0; seed < seeds; seed++) {
        CHECK(run(a, &in, &x, (uint64_t)seed) == RECIO_OK);
        CHECK(run(b, &in, &y, (uint64_t)seed) == RECIO_OK);
        differ += !(x.data && y.data && x.width == y.width && memcmp(x.data, y.data, recio_image_bytes(&x)) == 0);
        recio_image_free(&x), recio_image_free(&y);
    }
    if (differ) fprintf(stderr, "  '%.40s' differs from the reference for %d seeds\n", a, differ), CHECK(0);
    recio_image_free(&in);
}
static void test_policies_match_torchvision(void) {
    char *cifar = slurp_text("tests/data/recipes/autoaugment-cifar10.txt"), *svhn = slurp_text("tests/data/recipes/autoaugment-svhn.txt");
    char *ra = slurp_text("tests/data/recipes/randaugment-2-9.txt"), *ta = slurp_text("tests/data/recipes/trivialaugment.txt");
    char *buf;
    size_t n;
    if (!cifar || !svhn || !ra || !ta) return;
    CHECK(strcmp(recio__autoaugment_cifar10(), cifar) == 0);
    CHECK(strcmp(recio__autoaugment_svhn(), svhn) == 0);
    n = recio__randaugment_spec(NULL, 0, 2, 9);
    buf = (char *)malloc(n + 1);
    CHECK(recio__randaugment_spec(buf, n + 1, 2, 9) == n);
    if (strcmp(buf, ra) != 0) fprintf(stderr, "  randaugment:\n  %s\n  %s\n", buf, ra), CHECK(0);
    free(buf);
    n = recio__trivialaugment_spec(NULL, 0);
    buf = (char *)malloc(n + 1);
    CHECK(recio__trivialaugment_spec(buf, n + 1) == n);
    if (strcmp(buf, ta) != 0) fprintf(stderr, "  trivialaugment:\n  %s\n  %s\n", buf, ta), CHECK(0);
    CHECK(recio__trivialaugment_spec(buf, 10) == n && strlen(buf) == 9); /* cut, NUL-terminated, full length */
    free(buf);
    same_outputs("autoaugment(cifar10)", cifar, 40);
    same_outputs("autoaugment(svhn)", svhn, 40);
    same_outputs("randaugment(2,9)", ra, 40);
    same_outputs("randaugment", ra, 10);
    same_outputs("trivialaugment", ta, 40);
    same_outputs("autoaugment(imagenet)", recio__autoaugment_imagenet(), 10);
    free(cifar), free(svhn), free(ra), free(ta);
}

/* What the policies do, from outside: over 300 seeds TrivialAugment leaves the image alone when it
   draws Identity (1/14), bin 0 of a signed op (magnitude 0: 2 of its 62 choices, 9 ops), Posterize's
   8 bits (8 - round(i/5) for bins 0..2: 3 of 31); Solarize(255) inverts the photo's 255s;
   randaugment(0,M) is the identity. */
static void test_policies_behave(void) {
    recio_image in = retina(), out = {0};
    int seed, same = 0;
    for (seed = 0; seed < 300; seed++) {
        CHECK(run("trivialaugment", &in, &out, (uint64_t)seed) == RECIO_OK);
        same += out.data && memcmp(out.data, in.data, recio_image_bytes(&in)) == 0;
        recio_image_free(&out);
    }
    /* expected share: (1 + 9 * 2/62 + 3/31) / 14 = 0.0991: 29.7 of 300, binomial sd 5.2 */
    printf("trivialaugment left %d of 300 images unchanged (29.7 expected)\n", same);
    CHECK(same > 30 - 5 * 5 && same < 30 + 5 * 5);
    CHECK(run("randaugment(0,9)", &in, &out, 3) == RECIO_OK);
    CHECK(out.data && memcmp(out.data, in.data, recio_image_bytes(&in)) == 0);
    recio_image_free(&out);
    recio_image_free(&in);
}

/* translate(DX,DY): out(x, y) = in(x - DX, y - DY), exactly, FILL outside (hand model); translate_rel
   truncates FX * width: 0.26 of 10 is 2 pixels. */
static void test_translate(void) {
    unsigned char v[50];
    recio_image in, a = {0}, b = {0};
    int x, y, bad = 0;
    for (x = 0; x < 50; x++) v[x] = (unsigned char)(x * 5);
    in = gray_from(v, 10, 5);
    CHECK(run("translate(3,-1,200)", &in, &a, 0) == RECIO_OK);
    for (y = 0; y < 5 && a.data; y++)
        for (x = 0; x < 10; x++) {
            int sx = x - 3, sy = y + 1, want = sx >= 0 && sy < 5 ? v[sy * 10 + sx] : 200;
            bad += px(&a, x, y, 0) != want;
        }
    CHECK(bad == 0);
    CHECK(run("translate_rel(0.26,0)", &in, &b, 0) == RECIO_OK);
    CHECK(px(&b, 2, 0, 0) == v[0] && px(&b, 1, 0, 0) == 0 && px(&b, 9, 4, 0) == v[47]);
    recio_image_free(&a), recio_image_free(&b);
    CHECK(run("translate(1e20,-1e20,9)", &in, &a, 0) == RECIO_OK); /* far away: all FILL (an int cast would be undefined); 1e30 is the parser's very edge, where a host's strtod may round past it */
    for (y = 0, bad = 0; y < 5 && a.data; y++)
        for (x = 0; x < 10; x++) bad += px(&a, x, y, 0) != 9;
    CHECK(bad == 0);
    recio_image_free(&a), recio_image_free(&in);
}

int main(void) {
    RUN(test_pad_sides);
    RUN(test_bgr);
    RUN(test_rotate_fill);
    RUN(test_random_shear);
    RUN(test_random_lut_ranges);
    RUN(test_random_sharpness);
    RUN(test_random_erasing);
    RUN(test_cutout);
    RUN(test_gaussian_blur_matches_torchvision);
    RUN(test_rrc_non_square);
    RUN(test_filters_match_references);
    RUN(test_interp_op);
    RUN(test_filters_flat_and_nearest);
    RUN(test_translate);
    RUN(test_policies_match_torchvision);
    RUN(test_policies_behave);
    return t_done("recipes");
}
