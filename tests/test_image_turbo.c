/* RECIO_TURBOJPEG: JPEG decode through libjpeg-turbo with DCT scaling. Built against the library when
   it is installed (the Makefile then defines RECIO_TEST_TURBO and links -lturbojpeg); otherwise only
   the hint is tested. This file compiles its own private copy of recio (RECIO_STATIC). */
#ifdef RECIO_TEST_TURBO
#define RECIO_TURBOJPEG
#endif
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"

static void test_decode_hint(void) {
    static const struct { const char *spec; int hint; } cases[] = {
        {"resize_short(256) center_crop(224) normalize(imagenet) chw", 256}, {"area random_resized_crop(224) flip", 224},
        {"flip resize_short(2)", 0}, {"center_crop(10)", 0}, {"", 0}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        recio_transform *t = NULL;
        CHECK(recio_transform_parse(&t, cases[i].spec) == RECIO_OK);
        CHECK_EQ_INT(recio_transform_decode_hint(t), cases[i].hint);
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
    CHECK(recio_image_decode_scaled(&img, hub, n, 3, 256, NULL, 0) == RECIO_OK && img.width == 400 && img.height == 300);
    recio_image_free(&img);
    CHECK(recio_image_decode_scaled(&img, hub, n, 3, 1200, NULL, 0) == RECIO_OK && img.width == 1600);
    recio_image_free(&img);
    che = photo("chelsea-500x375.jpg", &m);
    CHECK(recio_image_decode_scaled(&img, che, m, 3, 256, NULL, 0) == RECIO_OK && img.width == 500 && img.height == 375);
    recio_image_free(&img);
    CHECK(recio_image_decode_scaled(&img, che, m, 3, 100, NULL, 0) == RECIO_OK && img.width == 250 && img.height == 188);
    recio_image_free(&img);
    free(hub);
    free(che);
}

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
        recio_err e = recio_image_decode_ex(&img, d, len, 3, msg, sizeof msg);
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
#else
    t_skip("libturbojpeg not installed: RECIO_TURBOJPEG not tested (apt-get install libturbojpeg0-dev)", 3);
#endif
    return t_done("turbo");
}
