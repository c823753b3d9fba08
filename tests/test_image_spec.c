/* Transform specs: parsing and its errors, seeded randomness, fused == op-by-op, caller memory,
   threads, and `recio apply`. Expected values by hand unless noted. */
/* The implementation is included: the tests turn fusion off through the transform's struct
   (recio_transform.fuse: a test hook, not public API) and read the policies' spec text. */
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include <math.h>
#include <pthread.h>

static recio_image photo_img(const char *name) {
    char path[256];
    size_t n = 0;
    unsigned char *b;
    recio_image img = {0};
    snprintf(path, sizeof path, "tests/data/photos/%s", name);
    b = t_slurp(path, &n);
    if (b) recio_image_decode(&img, b, n, 3);
    free(b);
    return img;
}

static int parse_err(const char *spec, const char *want) {
    recio_transform *t = (recio_transform *)&t;
    char msg[256];
    recio_err e = t_parse_ex(&t, spec, NULL, msg, sizeof msg);
    if (e != RECIO_ERR_SPEC || t != NULL || strcmp(msg, want) != 0) {
        fprintf(stderr, "  spec \"%s\": got %d \"%s\", want \"%s\"\n", spec, (int)e, msg, want);
        return 0;
    }
    return 1;
}

static void test_parse_errors(void) {
    CHECK(parse_err("resize_short(256)     flipp", "spec:1:23: unknown op 'flipp' (did you mean 'flip'?)"));
    CHECK(parse_err("qqqqqq", "spec:1:1: unknown op 'qqqqqq'")); /* nothing near: no guess */
    CHECK(parse_err("flip\n  gray hue", "spec:2:11: hue: expected '(' and arguments"));
    CHECK(parse_err("resize(10)", "spec:1:1: resize: too few arguments"));
    CHECK(parse_err("resize(10,20,30)", "spec:1:14: resize: too many arguments"));
    CHECK(parse_err("resize(10,0)", "spec:1:11: resize: expected a size (whole pixels) in [1, 65535]"));
    CHECK(parse_err("center_crop(2.5)", "spec:1:13: center_crop: expected a size (whole pixels) in [1, 65535]"));
    CHECK(parse_err("random_flip(1.5)", "spec:1:13: random_flip: expected a probability in [0, 1]"));
    CHECK(parse_err("normalize(imagenet", "spec:1:19: normalize: expected ')'"));
    CHECK(parse_err("normalize(1,2,3,4,5,0)", "spec:1:21: normalize: expected a number in (0, 1000000)"));
    CHECK(parse_err("crop(a)", "spec:1:6: crop: expected a number"));
    CHECK(parse_err("flip)", "spec:1:5: expected a space between ops, found ')'"));
    CHECK(parse_err("random_apply(0.5)", "spec:1:17: random_apply: expected ',' and ops"));
    CHECK(parse_err("random_apply(0.5, flip", "spec:1:23: missing ')'"));
    CHECK(parse_err("random_choice()", "spec:1:1: random_choice: needs at least one op"));
    CHECK(parse_err("random_subpolicy(flip)", "spec:1:18: random_subpolicy: expected '(' starting a sub-policy"));
    CHECK(parse_err("random_choice(flip, bogus(1))", "spec:1:21: unknown op 'bogus'"));
    CHECK(parse_err("posterize(9)", "spec:1:11: posterize: expected a whole number of bits in [0, 8]"));
    CHECK(parse_err("pad(-1)", "spec:1:5: pad: expected a whole number in [0, 65535]"));
    CHECK(parse_err("*", "spec:1:1: unexpected '*'"));
    /* each kind's real bounds, from the op table's argument kinds (issue 23: these said "expected a
       number > 0" and ">= 0" for values past the hidden 1e6) */
    CHECK(parse_err("random_expand(1e6)", "spec:1:15: random_expand: expected a number in (0, 1000000)"));
    CHECK(parse_err("sharpness(1e38)", "spec:1:11: sharpness: expected a number in [0, 1000000)"));
    CHECK(parse_err("sharpness(-1)", "spec:1:11: sharpness: expected a number in [0, 1000000)"));
    CHECK(parse_err("rotate(2e30)", "spec:1:8: rotate: expected a number in [-1e30, 1e30]"));
    CHECK(parse_err("random_bbox_crop(1.5)", "spec:1:18: random_bbox_crop: expected an overlap in [0, 1], or -1 for SSD's choices"));
    CHECK(parse_err("random_bbox_crop(-1,0)", "spec:1:21: random_bbox_crop: expected a fraction in (0, 1]"));
    CHECK(parse_err("gaussian_blur(4)", "spec:1:15: gaussian_blur: expected an odd kernel size in [1, 255]"));
    CHECK(parse_err("gaussian_blur(257)", "spec:1:15: gaussian_blur: expected an odd kernel size in [1, 255]"));
}

static void test_parse_every_op(void) {
    static const char *ok[] = {
        "resize(224,224)", "resize_short(256)", "center_crop(224)", "center_crop(224,200)", "crop(0,0,10,10)",
        "random_crop(224)", "random_crop(224,100)", "random_resized_crop(224)", "random_resized_crop(224,0.1,0.9,0.5,2)",
        "flip", "random_flip(0.5)", "rotate(-15.5)", "random_rotate(10)", "pad(4)", "pad(4,128)", "brightness(1.2)",
        "contrast(0.8)", "saturation(1.5)", "hue(-0.1)", "color_jitter(0.4,0.4,0.4)", "color_jitter(0.4,0.4,0.4,0.1)",
        "lighting(0.1)", "gray", "float", "normalize(imagenet)", "normalize( 1, 2, 3, 4, 5, 6 )", "chw", "f16",
        "i8(0.02)", "i8(0.02,-3)", "area resize(10,10)", "posterize(4)", "solarize(128)", "autocontrast", "equalize",
        "invert", "sharpness(1.5)", "shear_x(0.2)", "shear_y(-0.2)", "random_apply(0.5, flip gray)",
        "random_choice(flip, gray, rotate(3))", "random_subpolicy((flip gray), (hue(0.1)))", "autoaugment",
        "random_apply(1, random_choice(random_subpolicy((flip))))", "", "  flip\tgray\n", "1e0", NULL};
    int i;
    for (i = 0; ok[i]; i++) {
        recio_transform *t = NULL;
        char msg[256];
        recio_err e = t_parse_ex(&t, ok[i], NULL, msg, sizeof msg);
        if (i == 46) { /* "1e0" is not an op */
            CHECK(e == RECIO_ERR_SPEC);
            continue;
        }
        if (e != RECIO_OK) fprintf(stderr, "  '%s': %s\n", ok[i], msg);
        CHECK(e == RECIO_OK && t != NULL);
        recio_transform_free(t);
    }
    CHECK(recio_transform_parse(NULL, "flip") == RECIO_ERR_ARG);
}

/* Every op on a photo (the alpha PNG too, as 3 channels) through the whole chain: no error. */
static void test_apply_every_op(void) {
    static const char *specs[] = {
        "resize(64,48)", "resize_short(64)", "center_crop(80)", "crop(5,6,50,40)", "random_crop(90,80)",
        "random_resized_crop(64)", "flip", "random_flip(0.5)", "rotate(30)", "random_rotate(20)", "pad(3,9)",
        "brightness(1.2)", "contrast(0.7)", "saturation(1.4)", "hue(0.2)", "color_jitter(0.4,0.4,0.4,0.1)",
        "lighting(0.1)", "gray", "float", "normalize(imagenet)", "chw", "f16", "i8(0.5,-10)", "area resize_short(50)",
        "posterize(3)", "solarize(100)", "autocontrast", "equalize", "invert", "sharpness(0.3)", "shear_x(0.2)",
        "shear_y(0.2)", "autoaugment", "normalize(imagenet) flip crop(1,1,20,20) chw brightness(2) f16", NULL};
    recio_image in = photo_img("retina-120x90.jpg");
    int i;
    CHECK(in.data != NULL);
    for (i = 0; specs[i] && in.data; i++) {
        recio_transform *t = NULL;
        recio_image out = {0}, shape;
        recio_err e;
        uint64_t seed;
        CHECK(recio_transform_parse(&t, specs[i]) == RECIO_OK);
        for (seed = 0; seed < 4; seed++) {
            e = recio_transform_apply(t, &in, &out, seed);
            if (e != RECIO_OK) fprintf(stderr, "  '%s': %s\n", specs[i], recio_strerror(e));
            CHECK(e == RECIO_OK);
            if (t_output_shape(t, in.width, in.height, 3, &shape) == RECIO_OK)
                CHECK(shape.width == out.width && shape.height == out.height && shape.dtype == out.dtype && shape.layout == out.layout);
            recio_image_free(&out);
        }
        recio_transform_free(t);
    }
    recio_image_free(&in);
}

static recio_image run(const char *spec, const recio_image *in, uint64_t seed, int fuse) {
    recio_transform *t = NULL;
    recio_transform_desc d;
    recio_image out = {0};
    memset(&d, 0, sizeof d);
    if (t_parse_ex(&t, spec, &d, NULL, 0) == RECIO_OK) {
        t->fuse = fuse;
        recio_transform_apply(t, in, &out, seed);
    }
    recio_transform_free(t);
    return out;
}

static double max_diff(const recio_image *a, const recio_image *b) {
    double m = 0;
    int x, y, c;
    if (!a->data || !b->data || a->width != b->width || a->height != b->height || a->dtype != b->dtype || a->layout != b->layout) return 1e9;
    for (c = 0; c < a->channels; c++)
        for (y = 0; y < a->height; y++)
            for (x = 0; x < a->width; x++) {
                double d = fabs(recio_image_get(a, x, y, c) - recio_image_get(b, x, y, c));
                m = d > m ? d : m;
            }
    return m;
}

static void test_fused_equals_chain(void) {
    static const char *specs[] = {
        "resize_short(256) center_crop(224) normalize(imagenet) chw",
        "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw",
        "random_resized_crop(96) flip float chw", "area resize_short(120) center_crop(100) flip normalize(imagenet)",
        "flip resize(100,80) crop(3,4,50,40) flip normalize(imagenet) chw", "center_crop(200) flip chw",
        "resize(300,200) random_crop(150,100) random_flip(0.5) float normalize(1,2,3,4,5,6) chw",
        "resize_short(150) random_apply(0.5, flip) random_choice(center_crop(100), random_crop(120)) normalize(imagenet)",
        NULL};
    static const char *files[] = {"chelsea-500x375.jpg", "astronaut-375x500.jpg", "coffee-500x333.jpg"};
    int i, f;
    for (f = 0; f < 3; f++) {
        recio_image in = photo_img(files[f]);
        for (i = 0; specs[i]; i++) {
            uint64_t seed;
            for (seed = 1; seed < 6; seed++) {
                recio_image a = run(specs[i], &in, seed, 1), b = run(specs[i], &in, seed, 0);
                double d = max_diff(&a, &b);
                if (d != 0) fprintf(stderr, "  %s on %s seed %d: max diff %g\n", specs[i], files[f], (int)seed, d);
                CHECK(d == 0); /* the issue asks 1e-4; the fused pass is built to give the very same floats */
                recio_image_free(&a);
                recio_image_free(&b);
            }
        }
        recio_image_free(&in);
    }
}

/* The eval chain against the public ops called one by one (not through the executor). */
static void test_eval_chain_by_ops(void) {
    const float mean[4] = {123.68f, 116.28f, 103.53f, 0}, std[4] = {58.395f, 57.12f, 57.375f, 1};
    recio_image in = photo_img("chelsea-500x375.jpg"), r = {0}, c, n = {0}, chw = {0};
    recio_image got = run("resize_short(256) center_crop(224) normalize(imagenet) chw", &in, 0, 1);
    CHECK(recio_image_resize_short(&in, &r, 256, RECIO_LINEAR) == RECIO_OK && r.width == 341 && r.height == 256);
    CHECK(recio_image_center_crop(&r, &c, 224, 224) == RECIO_OK); /* starts at (58, 16) */
    CHECK(c.data == (unsigned char *)r.data + 16 * r.stride + 58 * 3);
    CHECK(recio_image_normalize(&c, &n, mean, std) == RECIO_OK);
    CHECK(recio_image_to_chw(&n, &chw) == RECIO_OK);
    CHECK(got.width == 224 && got.height == 224 && got.dtype == RECIO_F32 && got.layout == RECIO_CHW);
    CHECK(max_diff(&got, &chw) == 0);
    recio_image_free(&in);
    recio_image_free(&r);
    recio_image_free(&n);
    recio_image_free(&chw);
    recio_image_free(&got);
}

static void test_seed_determinism(void) {
    const char *spec = "random_resized_crop(64) random_flip(0.5) color_jitter(0.3,0.3,0.3,0.05) lighting(0.1) normalize(imagenet)";
    recio_image in = photo_img("coffee-500x333.jpg");
    recio_image a = run(spec, &in, 42, 1), b = run(spec, &in, 42, 1), c = run(spec, &in, 43, 1);
    CHECK(max_diff(&a, &b) == 0);
    CHECK(max_diff(&a, &c) > 0.01);
    recio_image_free(&a);
    recio_image_free(&b);
    recio_image_free(&c);
    recio_image_free(&in);
}

/* random_flip(P) flips about P of the time; random_choice picks each branch (counts by seed). */
static void test_policy_frequencies(void) {
    recio_image in = {0}, out;
    recio_transform *t = NULL, *c = NULL;
    int seed, flips = 0, picks[3] = {0, 0, 0};
    recio_image_alloc(&in, 2, 1, 1, RECIO_U8, RECIO_HWC, NULL);
    ((unsigned char *)in.data)[0] = 1;
    ((unsigned char *)in.data)[1] = 2;
    CHECK(recio_transform_parse(&t, "random_flip(0.25)") == RECIO_OK);
    CHECK(recio_transform_parse(&c, "random_choice(pad(1,10), pad(1,20), pad(1,30))") == RECIO_OK);
    for (seed = 0; seed < 2000; seed++) {
        memset(&out, 0, sizeof out);
        CHECK(recio_transform_apply(t, &in, &out, (uint64_t)seed) == RECIO_OK);
        flips += ((unsigned char *)out.data)[0] == 2;
        recio_image_free(&out);
        CHECK(recio_transform_apply(c, &in, &out, (uint64_t)seed) == RECIO_OK);
        picks[((unsigned char *)out.data)[0] / 10 - 1]++;
        recio_image_free(&out);
    }
    CHECK(flips > 400 && flips < 600);
    CHECK(picks[0] > 550 && picks[1] > 550 && picks[2] > 550);
    recio_transform_free(t);
    recio_transform_free(c);
    recio_image_free(&in);
}

/* PIL ImageOps semantics, by hand on the values 0, 37, 128, 200, 255:
   posterize(3) keeps the top 3 bits: 0 32 128 192 224; solarize(128) inverts >= 128: 0 37 127 55 0;
   invert: 255 218 127 55 0; autocontrast stretches [0, 255]: unchanged. */
static void test_pil_ops(void) {
    static const unsigned char v[5] = {0, 37, 128, 200, 255};
    static const struct { const char *spec; unsigned char want[5]; } cases[] = {
        {"posterize(3)", {0, 32, 128, 192, 224}}, {"solarize(128)", {0, 37, 127, 55, 0}},
        {"invert", {255, 218, 127, 55, 0}}, {"autocontrast", {0, 37, 128, 200, 255}}};
    recio_image in = {0};
    size_t i;
    recio_image_alloc(&in, 5, 1, 1, RECIO_U8, RECIO_HWC, NULL);
    memcpy(in.data, v, 5);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recio_image out = run(cases[i].spec, &in, 0, 1);
        CHECK(out.data && memcmp(out.data, cases[i].want, 5) == 0);
        recio_image_free(&out);
    }
    /* autocontrast of 50..150 maps 50 -> 0, 100 -> 127.5 -> 128, 150 -> 255 */
    memcpy(in.data, "\62\144\226\144\62", 5);
    {
        recio_image out = run("autocontrast", &in, 0, 1);
        CHECK(out.data && memcmp(out.data, "\0\200\377\200\0", 5) == 0);
        recio_image_free(&out);
    }
    /* equalize (PIL): histogram {50: 2, 100: 2, 150: 1}, step = (5 - 1) / 255 = 0: unchanged */
    {
        recio_image out = run("equalize", &in, 0, 1);
        CHECK(out.data && memcmp(out.data, in.data, 5) == 0);
        recio_image_free(&out);
    }
    recio_image_free(&in);
}

static void test_equalize_pil(void) {
    /* 600 pixels: 300 of 10, 200 of 20, 100 of 30. PIL: step = (600 - 100) // 255 = 1;
       lut[i] = n // step with n starting at step // 2 = 0 and adding h[i] after: 10 -> 0, 20 -> 300,
       30 -> 500, both clipped to 255. */
    recio_image in = {0};
    int i;
    recio_image_alloc(&in, 600, 1, 1, RECIO_U8, RECIO_HWC, NULL);
    for (i = 0; i < 600; i++) ((unsigned char *)in.data)[i] = (unsigned char)(i < 300 ? 10 : i < 500 ? 20 : 30);
    {
        recio_image out = run("equalize", &in, 0, 1);
        unsigned char *o = (unsigned char *)out.data;
        CHECK(o && o[0] == 0 && o[300] == 255 && o[599] == 255);
        recio_image_free(&out);
    }
    recio_image_free(&in);
}

static int n_allocs;
static void *count_alloc(size_t n, void *u) {
    (void)u;
    n_allocs++;
    return malloc(n);
}
static void count_free(void *p, void *u) {
    (void)u;
    free(p);
}

static void scratch_case(const char *file) {
    static const char *specs[] = {"resize_short(256) center_crop(224) normalize(imagenet) chw",
                                  "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw",
                                  "color_jitter(0.4,0.4,0.4,0.1) area random_resized_crop(128) lighting(0.1) random_apply(0.5, rotate(10)) normalize(imagenet) chw",
                                  NULL};
    recio_image in = photo_img(file);
    int i;
    for (i = 0; specs[i]; i++) {
        recio_transform *t = NULL;
        recio_transform_desc d;
        recio_image shape, out, ref;
        size_t need;
        void *scratch, *buf;
        uint64_t seed;
        memset(&d, 0, sizeof d);
        d.alloc.alloc = count_alloc;
        d.alloc.free = count_free;
        CHECK(t_parse_ex(&t, specs[i], &d, NULL, 0) == RECIO_OK);
        CHECK(t_output_shape(t, in.width, in.height, 3, &shape) == RECIO_OK);
        CHECK(shape.layout == RECIO_CHW && shape.dtype == RECIO_F32 && shape.channels == 3);
        need = t_scratch_size(t, in.width, in.height, 3);
        scratch = malloc(need);
        buf = malloc(recio_image_bytes(&shape));
        for (seed = 0; seed < 6; seed++) {
            out = recio_image_wrap(buf, shape.width, shape.height, 3, RECIO_F32, RECIO_CHW, 0);
            n_allocs = 0;
            CHECK(t_apply_scratch(t, &in, &out, seed, scratch, need) == RECIO_OK);
            CHECK_EQ_INT(n_allocs, 0);
            CHECK(out.data == buf);
            ref = run(specs[i], &in, seed, 1);
            CHECK(max_diff(&out, &ref) == 0);
            recio_image_free(&ref);
        }
        out = recio_image_wrap(buf, shape.width, shape.height, 3, RECIO_F32, RECIO_CHW, 0);
        CHECK(t_apply_scratch(t, &in, &out, 0, scratch, 64) == RECIO_ERR_SMALL);
        out = recio_image_wrap(buf, shape.width, shape.height, 3, RECIO_F32, RECIO_HWC, 0);
        CHECK(t_apply_scratch(t, &in, &out, 0, scratch, need) == RECIO_ERR_ARG); /* wrong layout */
        free(scratch);
        free(buf);
        recio_transform_free(t);
    }
    recio_image_free(&in);
}

/* With caller scratch of recio_transform_query's scratch_size bytes and a wrapped output: no allocation,
   the same numbers as the allocating path, and too little scratch is RECIO_ERR_SMALL. */
static void test_scratch_zero_alloc(void) {
    scratch_case("chelsea-500x375.jpg");
    /* every op on 1.9 Mpx takes two CPU minutes under qemu's soft float: a cross run (RUN set) keeps
       the two smaller photos, which take the same paths */
    if (!getenv("RECIO_TEST_EMULATED")) scratch_case("hubble-1600x1200.jpg");
    scratch_case("retina-120x90.jpg");
}

static void test_output_shape(void) {
    recio_transform *t = NULL;
    recio_transform_info i;
    recio_image s;
    CHECK(recio_transform_parse(&t, "resize_short(256) center_crop(224) normalize(imagenet) chw") == RECIO_OK);
    CHECK(recio_transform_query(t, 500, 375, 3, &i) == RECIO_OK);
    s = i.shape;
    CHECK(s.width == 224 && s.height == 224 && s.channels == 3 && s.dtype == RECIO_F32 && s.layout == RECIO_CHW);
    CHECK(s.stride == 224 * 4 && recio_image_bytes(&s) == 3 * 224 * 224 * 4 && s.data == NULL);
    CHECK(i.scratch_size >= 341 * 256 * 3); /* the resize's u8 HWC output at least */
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "resize_short(256)") == RECIO_OK);
    CHECK(recio_transform_query(t, 500, 375, 3, &i) == RECIO_OK && i.shape.width == 341 && i.shape.height == 256);
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "random_choice(resize(10,10), resize(20,20))") == RECIO_OK);
    CHECK(recio_transform_query(t, 50, 50, 3, &i) == RECIO_ERR_ARG); /* depends on the seed */
    CHECK(i.shape.width == 0 && i.shape.height == 0);
    CHECK(i.scratch_size >= 20 * 20 * 3 && i.scratch_size != SIZE_MAX); /* the larger branch, bounded all the same */
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "center_crop(100)") == RECIO_OK);
    CHECK(recio_transform_query(t, 50, 50, 3, &i) == RECIO_ERR_ARG); /* does not fit */
    CHECK(i.shape.width == 0);
    recio_transform_free(t);
}

static void test_crop_too_big(void) {
    recio_image in = photo_img("retina-120x90.jpg"), out = {0};
    recio_transform *t = NULL;
    CHECK(recio_transform_parse(&t, "center_crop(100)") == RECIO_OK);
    CHECK(recio_transform_apply(t, &in, &out, 0) == RECIO_ERR_ARG && out.data == NULL);
    recio_transform_free(t);
    CHECK(recio_transform_parse(&t, "normalize(imagenet) resize(10,10)") == RECIO_OK);
    CHECK(recio_transform_apply(t, &in, &out, 0) == RECIO_ERR_UNSUPPORTED); /* resizes need u8 */
    recio_transform_free(t);
    recio_image_free(&in);
}

typedef struct job {
    const recio_transform *t;
    const recio_image *in;
    uint64_t sum;
} job;

static void *worker(void *p) {
    job *j = (job *)p;
    uint64_t seed;
    for (seed = 0; seed < 12; seed++) {
        recio_image out = {0};
        size_t i, n;
        if (recio_transform_apply(j->t, j->in, &out, seed) != RECIO_OK) return NULL;
        n = recio_image_bytes(&out);
        for (i = 0; i < n; i++) j->sum = j->sum * 1099511628211ULL ^ ((unsigned char *)out.data)[i];
        recio_image_free(&out);
    }
    return NULL;
}

static void test_threads_share_transform(void) {
    recio_image in = photo_img("chelsea-500x375.jpg");
    recio_transform *t = NULL;
    pthread_t th[3];
    job jobs[4];
    int i;
    CHECK(recio_transform_parse(&t, "random_resized_crop(96) random_flip(0.5) color_jitter(0.3,0.3,0.3) normalize(imagenet) chw") == RECIO_OK);
    for (i = 0; i < 4; i++) jobs[i].t = t, jobs[i].in = &in, jobs[i].sum = 0;
    for (i = 0; i < 3; i++) pthread_create(&th[i], NULL, worker, &jobs[i]);
    worker(&jobs[3]);
    for (i = 0; i < 3; i++) pthread_join(th[i], NULL);
    for (i = 0; i < 3; i++) CHECK(jobs[i].sum == jobs[3].sum && jobs[i].sum != 0);
    recio_transform_free(t);
    recio_image_free(&in);
}

static void test_autoaugment_preset(void) {
    recio_transform *t = NULL;
    CHECK(strncmp(recio__autoaugment_imagenet(), "random_subpolicy(", 17) == 0);
    CHECK(recio_transform_parse(&t, recio__autoaugment_imagenet()) == RECIO_OK);
    recio_transform_free(t);
}

/* ---- the command ---- */
static int sh(const char *cmd) {
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

static void test_cli_apply(void) {
    const char *recio = t_recio_tool();
    char cmd[1024], line[256] = "";
    size_t n = 0;
    unsigned char *b;
    FILE *f;
    recio_image in, ref;
    if (!recio) return;
    snprintf(cmd, sizeof cmd, "%s apply --spec 'resize_short(256) center_crop(224) normalize(imagenet) chw' --seed 3 "
             "tests/data/photos/chelsea-500x375.jpg build/test_apply.f32 2>build/test_apply.err", recio);
    CHECK(sh(cmd) == 0);
    f = fopen("build/test_apply.err", "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    CHECK(strcmp(line, "build/test_apply.f32: f32 CHW 3x224x224\n") == 0);
    b = t_slurp("build/test_apply.f32", &n);
    CHECK_EQ_INT(n, 3 * 224 * 224 * 4);
    in = photo_img("chelsea-500x375.jpg");
    ref = run("resize_short(256) center_crop(224) normalize(imagenet) chw", &in, 3, 1);
    CHECK(b && ref.data && n == recio_image_bytes(&ref) && recio_load_f32le(b + 4 * 1000) == ((float *)ref.data)[1000]);
    free(b);
    recio_image_free(&ref);
    recio_image_free(&in);
    snprintf(cmd, sizeof cmd, "%s apply --spec 'center_crop(50) flip' tests/data/photos/retina-120x90.jpg build/test_apply.png 2>/dev/null", recio);
    CHECK(sh(cmd) == 0);
    b = t_slurp("build/test_apply.png", &n);
    in = recio__image_shape(0, 0, 0, RECIO_U8, RECIO_HWC);
    CHECK(b && recio_image_decode(&in, b, n, 0) == RECIO_OK && in.width == 50 && in.height == 50);
    recio_image_free(&in);
    free(b);
    snprintf(cmd, sizeof cmd, "%s apply --spec 'flipp' a b 2>/dev/null", recio);
    CHECK(sh(cmd) == 2);
    snprintf(cmd, sizeof cmd, "%s apply a b 2>/dev/null", recio);
    CHECK(sh(cmd) == 2);
    snprintf(cmd, sizeof cmd, "%s apply --spec flip tests/data/image/gray16-3x1.pngX b.png 2>/dev/null", recio);
    CHECK(sh(cmd) == 1);
    snprintf(cmd, sizeof cmd, "%s apply --spec flip tests/test.h build/x.png 2>build/test_apply.err", recio);
    CHECK(sh(cmd) == 1);
    f = fopen("build/test_apply.err", "r");
    line[0] = 0;
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    CHECK(strncmp(line, "recio: tests/test.h: offset 0: decode: ", 39) == 0);
    snprintf(cmd, sizeof cmd, "%s apply --help | grep -q 'example: recio apply'", recio);
    CHECK(sh(cmd) == 0);
}

/* A fixed scratch that is too small says how much is needed (not just "out of memory"). */
static void test_scratch_too_small_says_need(void) {
    size_t n = 0, need;
    unsigned char *b = t_slurp("tests/data/photos/rocket-alpha-256x256.png", &n);
    recio_transform *t = NULL;
    static float tensor[3 * 64 * 64];
    static unsigned char small[64];
    t_enc d;
    char msg[256], want[128];
    recio_image out = recio_image_wrap(tensor, 64, 64, 3, RECIO_F32, RECIO_CHW, 0);
    memset(&d, 0, sizeof d);
    CHECK(b && recio_transform_parse(&t, "resize(64,64) normalize(imagenet) chw") == RECIO_OK);
    if (b && t) {
        d.channels = 3, d.scratch = small, d.scratch_size = sizeof small;
        need = t_scratch_size(t, 256, 256, 3);
        snprintf(want, sizeof want, "transform: scratch too small: need %llu bytes, have 64", (unsigned long long)need);
        CHECK(t_apply_encoded(t, b, n, &out, 0, &d, msg, sizeof msg) == RECIO_ERR_SMALL);
        CHECK(strcmp(msg, want) == 0);
    }
    recio_transform_free(t);
    free(b);
}

int main(void) {
    RUN(test_parse_errors);
    RUN(test_scratch_too_small_says_need);
    RUN(test_parse_every_op);
    RUN(test_apply_every_op);
    RUN(test_fused_equals_chain);
    RUN(test_eval_chain_by_ops);
    RUN(test_seed_determinism);
    RUN(test_policy_frequencies);
    RUN(test_pil_ops);
    RUN(test_equalize_pil);
    RUN(test_scratch_zero_alloc);
    RUN(test_output_shape);
    RUN(test_crop_too_big);
    RUN(test_threads_share_transform);
    RUN(test_autoaugment_preset);
    RUN(test_cli_apply);
    return t_done("image_spec");
}
