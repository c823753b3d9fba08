/* RECIO_TURBOJPEG: JPEG decode through libjpeg-turbo with DCT scaling and windows. Built against the
   library when it is installed (the Makefile then defines RECIO_TEST_TURBO and links -ljpeg);
   otherwise only the hint is tested. This file compiles its own private copy of recio (RECIO_STATIC). */
#if defined(RECIO_TEST_TURBO) && !defined(RECIO_TURBOJPEG)
#define RECIO_TURBOJPEG
#endif
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "img_desc.h"

static void test_decode_hint(void) {
    static const struct { const char *spec; int hint; } cases[] = {
        {"resize_short(256) center_crop(224) normalize(imagenet) chw", 256}, {"area random_resized_crop(224) flip", 224},
        {"flip resize_short(2)", 0}, {"center_crop(10)", 0}, {"", 0}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recio_transform *t = NULL;
        CHECK(recio_transform_parse(&t, cases[i].spec) == RECIO_OK);
        CHECK_EQ_INT(recio__decode_hint(t), cases[i].hint);
        recio_transform_free(t);
    }
}

#ifdef RECIO_TEST_TURBO
static unsigned char *photo(const char *name, size_t *n) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/photos/%s", name);
    return t_slurp(path, n);
}

/* Every JPEG: same size and channels as stb, and close to stb's pixels (two IDCTs and chroma
   upsamplers differ by a few levels; a wrong colour conversion would be off by tens). */
static void test_turbo_matches_stb(void) {
    static const char *files[] = {"astronaut-375x500.jpg", "camera-gray-400x300.jpg", "chelsea-500x375.jpg",
                                  "chelsea-cmyk-300x400.jpg", "coffee-500x333.jpg", "coffee-progressive-480x360.jpg",
                                  "retina-120x90.jpg", "rocket-640x480.jpg", "astronaut-exif-rot90-400x300.jpg"};
    size_t i, n, k;
    int ch;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        unsigned char *b = photo(files[i], &n);
        for (ch = 0; ch <= 4; ch++) {
            recio_image tj = {0};
            stbi_uc *ref;
            int w, h, c, want;
            double sum = 0;
            if (ch == 2) continue;
            CHECK(b && recio_image_decode(&tj, b, n, ch) == RECIO_OK);
            ref = stbi_load_from_memory(b, (int)n, &w, &h, &c, ch);
            want = ch ? ch : c;
            CHECK(ref && tj.width == w && tj.height == h && tj.channels == want);
            if (!ref || !tj.data || tj.channels != want) continue;
            for (k = 0; k < (size_t)w * h * want; k++) sum += abs((int)((unsigned char *)tj.data)[k] - (int)ref[k]);
            if (sum / ((double)w * h * want) >= 2.5) fprintf(stderr, "  %s ch %d: mean diff %g\n", files[i], ch, sum / ((double)w * h * want));
            CHECK(sum / ((double)w * h * want) < 2.5);
            stbi_image_free(ref);
            recio_image_free(&tj);
        }
        free(b);
    }
}

/* By hand from the sizes: 1600x1200 keeps a short side >= 256 at 1/4 (400x300; 1/8 is 150);
   500x375 cannot use 1/2 (188 < 256); for 100 it can (250x188), 1/4 is 94 < 100. */
static void test_turbo_dct_scaling(void) {
    size_t n;
    unsigned char *hub = photo("hubble-1600x1200.jpg", &n), *che;
    size_t m;
    recio_image img = {0};
    CHECK(t_decode_scaled(&img, hub, n, 3, 256, NULL, 0) == RECIO_OK && img.width == 400 && img.height == 300);
    recio_image_free(&img);
    CHECK(t_decode_scaled(&img, hub, n, 3, 1200, NULL, 0) == RECIO_OK && img.width == 1600);
    recio_image_free(&img);
    che = photo("chelsea-500x375.jpg", &m);
    CHECK(t_decode_scaled(&img, che, m, 3, 256, NULL, 0) == RECIO_OK && img.width == 500 && img.height == 375);
    recio_image_free(&img);
    CHECK(t_decode_scaled(&img, che, m, 3, 100, NULL, 0) == RECIO_OK && img.width == 250 && img.height == 188);
    recio_image_free(&img);
    free(hub);
    free(che);
}


static const char *photos[] = {"astronaut-375x500.jpg", "camera-gray-400x300.jpg", "chelsea-500x375.jpg",
                               "chelsea-cmyk-300x400.jpg", "coffee-500x333.jpg", "coffee-progressive-480x360.jpg",
                               "hubble-1600x1200.jpg", "retina-120x90.jpg", "rocket-640x480.jpg",
                               "astronaut-exif-rot90-400x300.jpg"};
#define NPHOTOS (sizeof photos / sizeof photos[0])

/* Chains the window planner covers (leading crops, one resize, crops after it, random ops drawing
   after the plan), ones it stops early on, and ones that fail. */
static const char *window_specs[] = {
    "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw",
    "resize_short(256) center_crop(224) normalize(imagenet) chw",
    "area random_resized_crop(64)",
    "area resize_short(100) random_crop(90,80)",
    "center_crop(100) resize(50,40) random_crop(30) flip",
    "crop(7,5,60,50) random_crop(40,30) brightness(1.2)",
    "random_crop(64,48)",
    "resize(700,500) center_crop(600,400)",
    "flip random_resized_crop(100)",
    "random_resized_crop(200) color_jitter(0.4,0.4,0.4) normalize(imagenet) chw",
    "resize_short(256) resize(100,100) center_crop(50)",
    "random_choice(flip, gray) random_resized_crop(32)",
    "random_resized_crop(224,0.08,1,0.75,1.33) center_crop(200) random_crop(150) chw",
    "crop(10,20,5000,5000)",
    "normalize(imagenet)",
};
#define NSPECS (sizeof window_specs / sizeof window_specs[0])

static int same_pixels(const recio_image *a, const recio_image *b) {
    int y, c, planes;
    size_t row;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->dtype != b->dtype ||
        a->layout != b->layout)
        return 0;
    planes = a->layout == RECIO_CHW ? a->channels : 1;
    row = (size_t)a->width * (a->layout == RECIO_CHW ? 1u : (size_t)a->channels) * recio_dtype_size(a->dtype);
    for (c = 0; c < planes; c++)
        for (y = 0; y < a->height; y++)
            if (memcmp((const char *)a->data + ((size_t)c * a->height + y) * a->stride,
                       (const char *)b->data + ((size_t)c * b->height + y) * b->stride, row))
                return 0;
    return 1;
}

/* Without DCT scaling, decoding only the window the chain reads must change nothing: the result is
   decode + apply to the bit, for every photo (gray, CMYK, progressive, tiny, large), chain and seed,
   errors included. */
static void test_window_equals_full_decode(void) {
    size_t i, s, n;
    uint64_t seed;
    int ch, bad = 0, cases = 0;
    for (i = 0; i < NPHOTOS; i++) {
        unsigned char *b = photo(photos[i], &n);
        CHECK(b != NULL);
        if (!b) continue;
        for (s = 0; s < NSPECS; s++) {
            recio_transform *t = NULL;
            CHECK(recio_transform_parse(&t, window_specs[s]) == RECIO_OK);
            for (seed = 0; seed < 6 && t; seed++) {
                t_enc d = {0};
                recio_image full = {0}, a = {0}, b2 = {0};
                recio_err e1, e2;
                char msg[128];
                ch = (int)(seed % 3) == 2 ? 0 : 3;
                d.channels = ch;
                d.full_scale = 1;
                CHECK(recio_image_decode(&full, b, n, ch) == RECIO_OK);
                e1 = recio_transform_apply(t, &full, &a, seed * 7919 + s);
                e2 = t_apply_encoded(t, b, n, &b2, seed * 7919 + s, &d, msg, sizeof msg);
                cases++;
                if (e1 != e2 || (e1 == RECIO_OK && !same_pixels(&a, &b2))) {
                    if (bad++ < 5) fprintf(stderr, "  %s, '%s', seed %d: %s vs %s\n", photos[i], window_specs[s], (int)seed,
                                           recio_strerror(e1), recio_strerror(e2));
                }
                if (e2 != RECIO_OK) CHECK(strncmp(msg, "transform: ", 11) == 0);
                recio_image_free(&full);
                recio_image_free(&a);
                recio_image_free(&b2);
            }
            recio_transform_free(t);
        }
        free(b);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(cases == (int)(NPHOTOS * NSPECS * 6));
}

/* With DCT scaling: the same output shape as decode + apply, and close to the full-size image shrunk
   with the antialiased AREA filter (a 1/4-scale DCT decode is itself an 8x8 box-like average; the
   plain LINEAR shrink aliases). Mean difference a couple of levels on 0..255, where a crop shifted by
   a few pixels gives tens. The photo set's big image takes the 1/4 path. */
static void test_window_scaled_close(void) {
    size_t i, n, k;
    recio_transform *t = NULL, *area = NULL;
    t_enc d = {0};
    d.channels = 3;
    CHECK(recio_transform_parse(&t, "resize_short(256) center_crop(224)") == RECIO_OK);
    CHECK(recio_transform_parse(&area, "area resize_short(256) center_crop(224)") == RECIO_OK);
    for (i = 0; i < NPHOTOS && t && area; i++) {
        unsigned char *b = photo(photos[i], &n);
        recio_image full = {0}, a = {0}, s = {0};
        double sum = 0;
        if (!b) continue;
        CHECK(recio_image_decode(&full, b, n, 3) == RECIO_OK);
        CHECK(recio_transform_apply(area, &full, &a, 1) == RECIO_OK);
        CHECK(t_apply_encoded(t, b, n, &s, 1, &d, NULL, 0) == RECIO_OK);
        CHECK(s.width == a.width && s.height == a.height && s.channels == 3);
        if (s.width == a.width && s.height == a.height && s.channels == 3)
            for (k = 0; k < (size_t)a.width * a.height * 3; k++) sum += abs((int)((unsigned char *)a.data)[k] - (int)((unsigned char *)s.data)[k]);
        sum /= (double)a.width * a.height * 3;
        if (sum >= 2.5) fprintf(stderr, "  %s: mean difference %g\n", photos[i], sum);
        CHECK(sum < 2.5);
        recio_image_free(&full);
        recio_image_free(&a);
        recio_image_free(&s);
        free(b);
    }
    recio_transform_free(t);
    recio_transform_free(area);
}

/* Caller scratch and a wrapped output: the encoded path allocates only the decoded window. */
static void test_window_scratch(void) {
    size_t n;
    unsigned char *b = photo("hubble-1600x1200.jpg", &n);
    recio_transform *t = NULL;
    static float tensor[3 * 224 * 224];
    t_enc d = {0};
    char msg[256], want[128];
    size_t need;
    CHECK(b && recio_transform_parse(&t, "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw") == RECIO_OK);
    if (b && t) {
        recio_image out = recio_image_wrap(tensor, 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
        d.channels = 3;
        d.scratch_size = t_scratch_size(t, 1600, 1200, 3);
        d.scratch = malloc(d.scratch_size);
        CHECK(t_apply_encoded(t, b, n, &out, 5, &d, NULL, 0) == RECIO_OK && out.data == tensor);
        need = d.scratch_size;
        d.scratch_size = 16; /* too small: RECIO_ERR_SMALL, as with an image in, and the words say how much it needs */
        CHECK(t_apply_encoded(t, b, n, &out, 5, &d, NULL, 0) == RECIO_ERR_SMALL);
        snprintf(want, sizeof want, "transform: scratch too small: need %llu bytes, have 16", (unsigned long long)need);
        CHECK(t_apply_encoded(t, b, n, &out, 5, &d, msg, sizeof msg) == RECIO_ERR_SMALL);
        CHECK(strcmp(msg, want) == 0);
        free(d.scratch);
    }
    recio_transform_free(t);
    free(b);
}

/* Truncated and bit-flipped JPEGs through the window path: an error naming the decoder or a valid
   image, never a crash (this runs under ASan in make sanitize). */
static void test_window_damaged(void) {
    size_t n, k, i;
    recio_transform *t = NULL;
    int errors = 0;
    CHECK(recio_transform_parse(&t, "random_resized_crop(64) random_flip(0.5)") == RECIO_OK);
    for (i = 0; i < NPHOTOS && t; i++) {
        unsigned char *b = photo(photos[i], &n), *d;
        uint64_t s = 1234 + i;
        if (!b) continue;
        d = (unsigned char *)malloc(n);
        for (k = 0; k < 40; k++) {
            recio_image out = {0};
            char msg[160];
            size_t len = k < 20 ? n * k / 20 + 2 : n;
            recio_err e;
            memcpy(d, b, n);
            if (k >= 20) {
                int f;
                for (f = 0; f < 4; f++) {
                    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
                    d[(s >> 33) % n] ^= (unsigned char)(1u << ((s >> 20) & 7));
                }
            }
            e = t_apply_encoded(t, d, len, &out, k, NULL, msg, sizeof msg);
            if (e == RECIO_OK) CHECK(out.width == 64 && out.height == 64);
            else errors++, CHECK(strncmp(msg, "decode: ", 8) == 0 || strncmp(msg, "transform: ", 11) == 0);
            recio_image_free(&out);
        }
        free(d);
        free(b);
    }
    CHECK(errors > 0);
    recio_transform_free(t);
}

#ifdef RECIO_THREADS
/* The iterator decodes through the window path too: each item is apply_encoded of its record with
   seed recio_seed_for(desc seed, epoch, key), and the batches are the same for 0 and 2 workers. */
static void test_iter_through_window(void) {
    const char *rec = "build/test_turbo/photos.rec";
    const char *spec = "random_resized_crop(48) random_flip(0.5) normalize(imagenet) chw";
    recio_writer *w = NULL;
    recio_transform *t = NULL;
    unsigned char *first = NULL;
    size_t i, n, total = 0;
    unsigned workers;
    mkdir("build", 0755);
    mkdir("build/test_turbo", 0755);
    CHECK(recio_writer_open(&w, rec) == RECIO_OK);
    for (i = 0; i < NPHOTOS && w; i++) {
        unsigned char *img = photo(photos[i], &n), *r;
        float label = (float)i;
        if (!img) continue;
        r = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + n);
        recio_irecord_pack_header(r, &label, 1, (uint64_t)i, 0);
        memcpy(r + RECIO_IRHEADER_SIZE, img, n);
        CHECK(recio_writer_write(w, r, RECIO_IRHEADER_SIZE + n) == RECIO_OK);
        free(r);
        free(img);
    }
    CHECK(w && recio_writer_close(w) == RECIO_OK);
    CHECK(recio_transform_parse(&t, spec) == RECIO_OK);
    for (workers = 0; workers <= 2; workers += 2) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_batch b;
        size_t at = 0;
        char msg[RECIO_ERRMSG_SIZE];
        memset(&d, 0, sizeof d);
        d.uris = rec;
        d.item.spec = spec;
        d.run.batch = 4;
        d.run.workers = workers;
        d.source.seed = 11;
        d.item.channels = 3;
        CHECK((d.errmsg = msg, recio_iter_open(&it, &d)) == RECIO_OK);
        while (it && recio_iter_next(it, &b) == RECIO_OK) {
            size_t bytes = (size_t)(b.count + b.pad) * b.item_bytes;
            if (workers == 0) {
                unsigned k;
                first = (unsigned char *)realloc(first, at + bytes);
                memcpy(first + at, b.data, bytes);
                for (k = 0; k < b.count; k++) { /* the item from its own record, by hand */
                    recio_reader *r = NULL;
                    recio_record rr;
                    recio_irecord ir;
                    recio_image out = {0};
                    if (recio_reader_open(&r, rec) != RECIO_OK) break;
                    CHECK(recio_reader_seek(r, b.keys[k] & (((uint64_t)1 << 48) - 1)) == RECIO_OK);
                    CHECK(recio_reader_next(r, &rr) == RECIO_OK && recio_irecord_unpack(&ir, rr.data, rr.size) == RECIO_OK);
                    CHECK(t_apply_encoded(t, ir.image, ir.image_size, &out, recio_seed_for(11, b.epoch, b.keys[k]),
                                                        &(t_enc){3, NULL, 0, 0}, NULL, 0) == RECIO_OK);
                    CHECK(out.data && memcmp(out.data, (const unsigned char *)b.data + k * b.item_bytes, b.item_bytes) == 0);
                    recio_image_free(&out);
                    recio_reader_close(r);
                }
                total = at + bytes;
            } else {
                CHECK(at + bytes <= total && memcmp(first + at, b.data, bytes) == 0);
            }
            at += bytes;
        }
        CHECK(at == total && total > 0);
        recio_iter_close(it);
    }
    free(first);
    recio_transform_free(t);
}
#endif

static void test_turbo_damaged(void) {
    size_t n, k;
    unsigned char *b = photo("coffee-progressive-480x360.jpg", &n), *d = (unsigned char *)malloc(n);
    uint64_t s = 99;
    int errors = 0;
    char msg[128];
    for (k = 0; k < 24; k++) {
        recio_image img = {0};
        size_t len = k < 12 ? n * k / 12 + 3 : n;
        memcpy(d, b, n);
        if (k >= 12) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            d[(s >> 33) % n] ^= (unsigned char)(1u << ((s >> 20) & 7));
        }
        recio_err e = t_decode_ex(&img, d, len, 3, msg, sizeof msg);
        if (e == RECIO_OK) {
            CHECK(img.width > 0 && img.height > 0); /* a flipped bit may change the stored size */
            recio_image_free(&img);
        } else {
            errors++;
            CHECK((e == RECIO_ERR_DECODE || e == RECIO_ERR_NOMEM) && strncmp(msg, "decode: ", 8) == 0);
        }
    }
    CHECK(errors > 0);
    free(b);
    free(d);
}
#endif

int main(void) {
    RUN(test_decode_hint);
#ifdef RECIO_TEST_TURBO
    RUN(test_turbo_matches_stb);
    RUN(test_turbo_dct_scaling);
    RUN(test_turbo_damaged);
    RUN(test_window_equals_full_decode);
    RUN(test_window_scaled_close);
    RUN(test_window_scratch);
    RUN(test_window_damaged);
#ifdef RECIO_THREADS
    RUN(test_iter_through_window);
#endif
#else
    t_skip("libjpeg-turbo not installed: RECIO_TURBOJPEG not tested (apt-get install libjpeg62-turbo-dev)", 7);
#endif
    return t_done("turbo");
}
