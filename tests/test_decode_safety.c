/* Images decoded exactly, or refused (issue 12 items 6-10). Every input is made here by hand from the
   sample photos or byte by byte: formats recio does not decode (a 50-byte Radiance HDR whose RLE line
   stops at the end, which hangs stb 2.27; PNM, PSD, GIF, TGA), files cut short (never filler or
   stale pixels), headers that claim more pixels than their bytes can hold (refused before the
   allocation), a top-down BMP, and the inputs that made UBSan abort inside stb 2.27 (a PNG with an
   empty IDAT). The HDR also goes through every command that decodes, under `timeout`. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "cli_util.h"
#include <sys/wait.h>

#define T "build/test_decode_safety"
#define PHOTOS "tests/data/photos/"

static char out_text[1 << 16];

/* 45 bytes of header and an RLE scanline cut after its first run count: 50 bytes. */
static const char hdr50[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 8\n\x02\x02\x00\x08\x82";

static int decode_msg(const unsigned char *b, size_t n, char *msg, size_t cap) {
    recio_image img = {0};
    recio_err e = t_decode_ex(&img, b, n, 0, msg, cap);
    if (e == RECIO_OK) recio_image_free(&img);
    return (int)e;
}

static int refused(const unsigned char *b, size_t n, const char *want) {
    char msg[256] = "";
    int e = decode_msg(b, n, msg, sizeof msg);
    if (e != RECIO_ERR_DECODE || !strstr(msg, want)) fprintf(stderr, "  got %d '%s', want '%s'\n", e, msg, want);
    return e == RECIO_ERR_DECODE && strstr(msg, want) != NULL;
}

/* Over RECIO_MAX_PIXELS: a limit (RECIO_ERR_LIMIT), not damage, refused before any allocation. */
static int limited(const unsigned char *b, size_t n, const char *want) {
    char msg[256] = "";
    int e = decode_msg(b, n, msg, sizeof msg);
    if (e != RECIO_ERR_LIMIT || !strstr(msg, want)) fprintf(stderr, "  got %d '%s', want LIMIT '%s'\n", e, msg, want);
    return e == RECIO_ERR_LIMIT && strstr(msg, want) != NULL;
}

static void test_unsupported_formats(void) {
    static const unsigned char psd[42] = {'8', 'B', 'P', 'S', 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80, 0, 8, 0, 3};
    static const char pnm[] = "P6\n4 4\n255\n\x10\x20\x30\x40";
    static const char gif[] = "GIF89a\x02\x00\x02\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00\x02\x00\x02\x00\x00\x02\x02\x84";
    static const unsigned char tga[18 + 4] = {0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 8, 0, 1, 2, 3, 4};
    recio_image img = {0};
    CHECK(sizeof hdr50 - 1 == 50);
    CHECK(refused((const unsigned char *)hdr50, 50, "unsupported image format"));
    CHECK(refused(psd, sizeof psd, "unsupported image format"));
    CHECK(refused((const unsigned char *)pnm, sizeof pnm - 1, "unsupported image format"));
    CHECK(refused((const unsigned char *)gif, sizeof gif - 1, "unsupported image format"));
    CHECK(refused(tga, sizeof tga, "unsupported image format"));
    CHECK(recio_image_info(hdr50, 50, NULL, NULL, NULL) == RECIO_ERR_DECODE);
    CHECK(recio_image_info(psd, sizeof psd, NULL, NULL, NULL) == RECIO_ERR_DECODE);
    { /* decode + apply, the iterator's path */
        recio_transform *t = NULL;
        char msg[256] = "";
        CHECK(recio_transform_parse(&t, "resize(8,8)") == RECIO_OK);
        CHECK(t_apply_encoded(t, hdr50, 50, &img, 0, NULL, msg, sizeof msg) == RECIO_ERR_DECODE);
        CHECK(strstr(msg, "unsupported image format") != NULL);
        recio_transform_free(t);
    }
}

/* A 24-bit BMP of w x h pixels (h < 0: rows stored top down), pixel (x, y) = (x*40, y*60, 7*x+y). */
static size_t make_bmp(unsigned char *b, int w, int h) {
    int ah = h < 0 ? -h : h, row = (w * 3 + 3) / 4 * 4, x, y;
    size_t n = 54 + (size_t)row * (size_t)ah;
    memset(b, 0, n);
    b[0] = 'B', b[1] = 'M';
    recio_store_u32le(b + 2, (uint32_t)n);
    recio_store_u32le(b + 10, 54);
    recio_store_u32le(b + 14, 40);
    recio_store_u32le(b + 18, (uint32_t)w);
    recio_store_u32le(b + 22, (uint32_t)h);
    b[26] = 1, b[28] = 24;
    for (y = 0; y < ah; y++)
        for (x = 0; x < w; x++) {
            unsigned char *p = b + 54 + (size_t)row * (size_t)(h < 0 ? y : ah - 1 - y) + 3 * x;
            p[2] = (unsigned char)(x * 40), p[1] = (unsigned char)(y * 60), p[0] = (unsigned char)(7 * x + y);
        }
    return n;
}

static void test_bmp(void) {
    unsigned char b[54 + 16 * 3], c[54 + 16 * 3];
    size_t n = make_bmp(b, 5, 3), k;
    int x, y, good = 1;
    recio_image img = {0};
    CHECK(make_bmp(c, 5, -3) == n);
    CHECK(recio_image_decode(&img, c, n, 3) == RECIO_OK && img.width == 5 && img.height == 3); /* top down */
    for (y = 0; y < 3 && img.data; y++)
        for (x = 0; x < 5; x++)
            good &= recio_image_get(&img, x, y, 0) == x * 40 && recio_image_get(&img, x, y, 1) == y * 60 &&
                    recio_image_get(&img, x, y, 2) == 7 * x + y;
    CHECK(good);
    recio_image_free(&img);
    CHECK(recio_image_info(c, n, &x, &y, NULL) == RECIO_OK && x == 5 && y == 3);
    CHECK(recio_image_decode(&img, b, n, 3) == RECIO_OK && img.height == 3); /* bottom up: the same pixels */
    for (y = 0, good = 1; y < 3 && img.data; y++)
        for (x = 0; x < 5; x++) good &= recio_image_get(&img, x, y, 0) == x * 40 && recio_image_get(&img, x, y, 1) == y * 60;
    CHECK(good);
    recio_image_free(&img);
    for (k = 1; k < 10; k++) /* cut anywhere, the last byte of padding included */
        CHECK(refused(c, n * k / 10, "truncated BMP"));
    CHECK(refused(c, n - 1, "truncated BMP"));
    recio_store_u32le(c + 18, 16000); /* 16000 x 16000 claimed over 48 bytes of pixels */
    recio_store_u32le(c + 22, 16000);
    CHECK(refused(c, n, "needs 768000054 bytes"));
    recio_store_u32le(c + 22, 0x80000000u);
    CHECK(limited(c, n, "more than RECIO_MAX_PIXELS"));
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void test_png(void) {
    size_t n = 0, k, first = 8;
    unsigned char *b = t_slurp(PHOTOS "rocket-alpha-256x256.png", &n), *c;
    recio_image a = {0}, e = {0};
    char msg[256];
    CHECK(b != NULL);
    if (!b) return;
    c = (unsigned char *)malloc(n + 12);
    for (k = 1; k < 10; k++) CHECK(refused(b, n * k / 10, "truncated PNG"));
    CHECK(refused(b, n - 12, "truncated PNG")); /* no IEND */
    /* an empty IDAT before the first (stb 2.27 did memcpy(NULL, .., 0)): the same image */
    while (first + 8 < n && memcmp(b + first + 4, "IDAT", 4) != 0) first += 12 + be32(b + first);
    CHECK(first + 8 < n);
    memcpy(c, b, first);
    memcpy(c + first, "\0\0\0\0IDAT\x35\xaf\x06\x1e", 12);
    memcpy(c + first + 12, b + first, n - first);
    CHECK(recio_image_decode(&a, b, n, 0) == RECIO_OK);
    CHECK(recio_image_decode(&e, c, n + 12, 0) == RECIO_OK);
    CHECK(a.data && e.data && a.width == e.width && a.channels == e.channels &&
          memcmp(a.data, e.data, recio_image_bytes(&a)) == 0);
    recio_image_free(&a);
    recio_image_free(&e);
    memcpy(c, b, n); /* 65535^2: the limit, named */
    memcpy(c + 16, "\0\0\xff\xff\0\0\xff\xff", 8);
    CHECK(limited(c, n, "65535x65535 PNG is more than RECIO_MAX_PIXELS"));
    memcpy(c + 16, "\0\0\x27\x10\0\0\x27\x10", 8); /* 10000^2 RGBA (400 MB) from 80 KB: a lie */
    CHECK(refused(c, n, "cannot fit"));
    CHECK(decode_msg(c, 20, msg, sizeof msg) == RECIO_ERR_DECODE);
    free(c);
    free(b);
}

static size_t find_marker(const unsigned char *b, size_t n, unsigned char m) {
    size_t i;
    for (i = 2; i + 10 < n; i++)
        if (b[i] == 0xff && b[i + 1] == m) return i;
    return 0;
}

static void test_jpeg(void) {
    size_t n = 0, at, k;
    unsigned char *b = t_slurp(PHOTOS "retina-120x90.jpg", &n), *c;
    recio_transform *t = NULL;
    recio_image img = {0};
    char msg[256] = "";
    CHECK(b != NULL && (at = find_marker(b, n, 0xc0)) > 0);
    if (!b || !at) return;
    c = (unsigned char *)malloc(n);
    memcpy(c, b, n); /* 16384 x 16384 claimed over 120x90 of data */
    memcpy(c + at + 5, "\x40\x00\x40\x00", 4);
    CHECK(refused(c, n, "cannot fit"));
    CHECK(recio_transform_parse(&t, "random_resized_crop(32)") == RECIO_OK);
    CHECK(t_apply_encoded(t, c, n, &img, 1, NULL, msg, sizeof msg) == RECIO_ERR_DECODE);
    CHECK(strstr(msg, "cannot fit") != NULL);
    for (k = 3; k < 10; k += 3) { /* cut short: an error from both decoders, never grey */
        CHECK(decode_msg(b, n * k / 10, msg, sizeof msg) == RECIO_ERR_DECODE);
        CHECK(t_apply_encoded(t, b, n * k / 10, &img, 1, NULL, msg, sizeof msg) == RECIO_ERR_DECODE);
    }
    c = (unsigned char *)realloc(c, n + 1); /* stb's JPEG decoder in every build (a fill byte first) */
    c[0] = 0xff;
    memcpy(c + 1, b, n);
    for (k = 3; k < 10; k += 3) CHECK(refused(c, 1 + n * k / 10, "truncated JPEG"));
    CHECK(refused(c, n - 1, "truncated JPEG"));
    CHECK(decode_msg(c, n + 1, msg, sizeof msg) == RECIO_OK);
    CHECK(decode_msg(b, n - 2, msg, sizeof msg) == RECIO_ERR_DECODE); /* no EOI: the end is missing */
    CHECK(decode_msg(b, n, msg, sizeof msg) == RECIO_OK);
    recio_transform_free(t);
    free(c);
    free(b);
}

/* A marker in the middle of a scan (the data cut short by a corrupt byte) had stb 2.27's bit reader
   shift by 34 (UBSan abort). A 0xff fill byte before the SOI sends the JPEG to stb in every build
   (libjpeg-turbo takes only files starting ff d8); then libjpeg-turbo on the same bytes refuses it. */
static void test_jpeg_marker_in_scan(void) {
    size_t n = 0, at, k;
    unsigned char *b = t_slurp(PHOTOS "chelsea-500x375.jpg", &n), *c;
    CHECK(b != NULL && (at = find_marker(b, n, 0xda)) > 0);
    if (!b || !at) return;
    c = (unsigned char *)malloc(n + 1);
    for (k = 1; k < 8; k++) {
        size_t m = at + (n - at) * k / 8;
        recio_image img = {0};
        char msg[256] = "";
        recio_err e;
        c[0] = 0xff;
        memcpy(c + 1, b, n);
        c[1 + m] = 0xff, c[2 + m] = (unsigned char)(k & 1 ? 0xd9 : 0xc4);
        e = t_decode_ex(&img, c, n + 1, 3, msg, sizeof msg);
        CHECK(e == RECIO_ERR_DECODE); /* the scan stops at the marker: stb alone would fill it with zeros */
        if (e == RECIO_OK) recio_image_free(&img);
#ifdef RECIO_TURBOJPEG
        CHECK(decode_msg(c + 1, n, msg, sizeof msg) == RECIO_ERR_DECODE);
#endif
    }
    free(c);
    free(b);
}

/* A scan cut short and followed by a marker (an end marker appended to a cut file, or the rest of a
   file after a corrupt byte) decodes in stb as zero bits: made-up pixels, no error. Every cut of
   the scan data of small baseline JPEGs (4:2:0, 4:2:2, 4:4:4, grey; restart intervals of 1 and 2
   MCUs; sizes not a multiple of the MCU) followed by an EOI must be refused; the whole file, read.
   The expected verdict needs no decoder: the encoder's last byte holds at least one bit of data. */
static void test_jpeg_scan_cut_then_marker(void) {
    static const char *const files[] = {"rst2-37x29.jpg", "gray-rst1-50x30.jpg", "s444-33x17.jpg", "s422-41x23.jpg",
                                        "../photos/retina-120x90.jpg"};
    size_t f, cuts = 0, bad = 0;
    for (f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[256], msg[256];
        size_t n = 0, sos = 0, end, p, len;
        unsigned char *b, *c;
        recio_image img = {0};
        snprintf(path, sizeof path, "tests/data/image/%s", files[f]);
        b = t_slurp(path, &n);
        CHECK(b != NULL && (sos = find_marker(b, n, 0xda)) > 0);
        if (!b || !sos) continue;
        len = (size_t)b[sos + 2] << 8 | b[sos + 3];
        for (end = n - 2; end > sos && !(b[end] == 0xff && b[end + 1] == 0xd9); end--) {}
        c = (unsigned char *)malloc(n + 3);
        c[0] = 0xff; /* stb in every build */
        memcpy(c + 1, b, n);
        CHECK(decode_msg(c, n + 1, msg, sizeof msg) == RECIO_OK);
        for (p = sos + 2 + len; p < end; p++) {
            memcpy(c + 1, b, p);
            c[1 + p] = 0xff, c[2 + p] = 0xd9;
            cuts++;
            if (t_decode_ex(&img, c, p + 3, 3, msg, sizeof msg) == RECIO_OK) {
                if (bad++ < 3) printf("  %s cut at %zu of %zu: decoded\n", files[f], p, end);
                recio_image_free(&img);
            }
        }
        free(c);
        free(b);
    }
    printf("  %zu cuts of 5 scans, each followed by an end marker: %zu decoded\n", cuts, bad);
    CHECK(bad == 0 && cuts > 3000);
}

/* The same for progressive JPEGs, checked by a second decode (recio__jpeg_same_with_filler). A cut
   inside a scan's data followed by an end marker is refused, or, when the bits it lost change no
   pixel (they code blocks of the MCU padding, outside the image), gives exactly the pixels of the
   JPEG cut where that scan ends, which is sound (fewer scans) and must decode. */
static void test_jpeg_progressive_cut_then_marker(void) {
    static const char *const files[] = {"prog-37x29.jpg", "prog-gray-40x24.jpg"};
    size_t f, refused = 0, same = 0, wrong = 0, ends = 0;
    for (f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[256], msg[256];
        size_t n = 0, i, p, data, end;
        unsigned char *b, *c;
        snprintf(path, sizeof path, "tests/data/image/%s", files[f]);
        b = t_slurp(path, &n);
        CHECK(b != NULL);
        if (!b) continue;
        c = (unsigned char *)malloc(n + 3);
        c[0] = 0xff; /* stb in every build */
        for (i = 2; i + 4 < n; i++) {
            recio_image whole = {0};
            if (!(b[i] == 0xff && b[i + 1] == 0xda)) continue;
            data = i + 2 + ((size_t)b[i + 2] << 8 | b[i + 3]);
            for (end = data; end + 1 < n && !(b[end] == 0xff && b[end + 1] != 0 && (b[end + 1] < 0xd0 || b[end + 1] > 0xd7)); end++) {}
            memcpy(c + 1, b, end); /* the scans up to this one's end: sound */
            c[1 + end] = 0xff, c[2 + end] = 0xd9;
            ends += t_decode_ex(&whole, c, end + 3, 3, msg, sizeof msg) == RECIO_OK;
            for (p = data + 1; whole.data && p < end; p++) {
                recio_image img = {0};
                memcpy(c + 1, b, p);
                c[1 + p] = 0xff, c[2 + p] = 0xd9;
                if (t_decode_ex(&img, c, p + 3, 3, msg, sizeof msg) != RECIO_OK) {
                    refused++;
                    continue;
                }
                if (img.width == whole.width && img.height == whole.height &&
                    memcmp(img.data, whole.data, (size_t)whole.width * whole.height * 3) == 0) same++;
                else if (wrong++ < 3) printf("  %s cut at %zu (scan data %zu..%zu): made-up pixels\n", files[f], p, data, end);
                recio_image_free(&img);
            }
            recio_image_free(&whole);
            i = end - 1;
        }
        free(c);
        free(b);
    }
    printf("  progressive: %zu cuts inside scans refused, %zu gave the true pixels, %zu made-up; %zu whole-scan prefixes decoded\n",
           refused, same, wrong, ends);
    CHECK(wrong == 0 && refused > 350 && ends == 16);
}

/* UBSan's "shift exponent 34 in stbi__grow_buffer_unsafe", made by hand: an 8x8 grey baseline JPEG
   whose DC and AC tables each hold one 16-bit code (DC category 0, AC run 0 size 10) over 4 zero
   bytes of scan data. The DC code leaves exactly 16 bits, the AC code takes them all, its 10 extra
   bits meet the EOI (code_bits -10), and the next refill shifted by 24 - (-10). stb would then
   decode zeros; recio's walk of the scan sees it end early and refuses it, as libjpeg-turbo does. */
static size_t shift34_jpeg(unsigned char *j) {
    static const unsigned char head[] = {0xff, 0xd8, 0xff, 0xdb, 0x00, 0x43, 0x00};
    static const unsigned char tail[] = {0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00,
                                         0xff, 0xc4, 0x00, 0x14, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x00,
                                         0xff, 0xc4, 0x00, 0x14, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x0a,
                                         0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00,
                                         0x00, 0x00, 0x00, 0x00, 0xff, 0xd9};
    size_t n = sizeof head;
    memcpy(j, head, n);
    memset(j + n, 1, 64); /* quantisation table: all 1 */
    n += 64;
    memcpy(j + n, tail, sizeof tail);
    return n + sizeof tail;
}

static void test_jpeg_shift34(void) {
    unsigned char j[256];
    size_t n;
    recio_image img = {0};
    char msg[256] = "";
    recio_err e;
    j[0] = 0xff; /* a fill byte: stb decodes it in every build */
    n = 1 + shift34_jpeg(j + 1);
    e = t_decode_ex(&img, j, n, 0, msg, sizeof msg);
    CHECK(e == RECIO_ERR_DECODE && strstr(msg, "truncated JPEG") != NULL);
    if (e == RECIO_OK) recio_image_free(&img);
#ifdef RECIO_TURBOJPEG
    CHECK(decode_msg(j + 1, n - 1, msg, sizeof msg) == RECIO_ERR_DECODE);
    CHECK(strstr(msg, "premature end") != NULL);
#endif
}

/* "recio ARGS 2>&1" under a 30 s timeout into out_text; the exit status (124: it hung). (tests/cli_util.h) */
/* recio_decode_desc.check (recio pack's probe of the images it stores as they are): the decoder's
   checks without its pixels. On cuts of a baseline JPEG (stb's path in every build: a fill byte
   first) and of a PNG it refuses what decode refuses, as the same kind of damage (a cut header is
   told by the missing end marker where stb tells it by reading past the end); a progressive JPEG
   without its end marker is refused; a whole image gives decode's shape and no pixels. */
static recio_err check_only(const unsigned char *b, size_t n, recio_image *shape, char *msg) {
    recio_decode_desc d;
    memset(&d, 0, sizeof d);
    d.bytes = b, d.size = n, d.check = 1, d.errmsg = msg;
    return recio_image_decode_desc(shape, &d);
}

static void check_whole(const unsigned char *b, size_t n) {
    recio_image img = {0}, shape;
    char msg[RECIO_ERRMSG_SIZE];
    CHECK(t_decode_ex(&img, b, n, 0, msg, sizeof msg) == RECIO_OK);
    CHECK(check_only(b, n, &shape, msg) == RECIO_OK && msg[0] == 0);
    CHECK(shape.width == img.width && shape.height == img.height && shape.channels == img.channels);
    CHECK(shape.data == NULL && shape.stride == img.stride);
    recio_image_free(&img);
}

static void check_cuts(const unsigned char *b, size_t n, int steps, const char *want) {
    int k, same = 0;
    for (k = 1; k < steps; k++) {
        char m1[RECIO_ERRMSG_SIZE] = "", m2[RECIO_ERRMSG_SIZE] = "";
        recio_image shape;
        size_t cut = n * (size_t)k / (size_t)steps;
        int e1 = decode_msg(b, cut, m1, sizeof m1), e2 = check_only(b, cut, &shape, m2);
        if (e1 == RECIO_ERR_DECODE && e2 == RECIO_ERR_DECODE && (strcmp(m1, m2) == 0 || (strstr(m1, want) && strstr(m2, want))))
            same++;
        else printf("  cut at %zu of %zu: decode %d '%s', check %d '%s'\n", cut, n, e1, m1, e2, m2);
    }
    CHECK(same == steps - 1);
}

static void test_check_only(void) {
    size_t n = 0, np = 0, nq = 0, nh = 0;
    unsigned char *j = t_slurp(PHOTOS "retina-120x90.jpg", &n), *c;
    unsigned char *png = t_slurp(PHOTOS "rocket-alpha-256x256.png", &np);
    unsigned char *prog = t_slurp("tests/data/image/prog-37x29.jpg", &nq);
    unsigned char *huge = t_slurp("tests/data/pack/huge-header-20000x20000.jpg", &nh);
    recio_image shape;
    char msg[RECIO_ERRMSG_SIZE];
    CHECK(j && png && prog && huge);
    if (!j || !png || !prog || !huge) return;
    c = (unsigned char *)malloc(n + 1);
    c[0] = 0xff; /* stb in every build */
    memcpy(c + 1, j, n);
    check_whole(c, n + 1);
    check_whole(png, np);
    check_whole(prog, nq);
    check_cuts(c, n + 1, 40, "truncated JPEG");
    check_cuts(png, np, 20, "truncated PNG");
    CHECK(check_only(png, np - 12, &shape, msg) == RECIO_ERR_DECODE && strstr(msg, "truncated PNG")); /* no IEND */
    CHECK(check_only(prog, nq - 2, &shape, msg) == RECIO_ERR_DECODE && strstr(msg, "truncated JPEG"));
    CHECK(check_only(prog, nq / 2, &shape, msg) == RECIO_ERR_DECODE);
    CHECK(check_only(huge, nh, &shape, msg) == RECIO_ERR_LIMIT && strstr(msg, "20000x20000 JPEG is more than RECIO_MAX_PIXELS"));
    CHECK(check_only(j, 0, &shape, msg) == RECIO_ERR_DECODE && strstr(msg, "empty image"));
    { /* a mask by the mask rule: its shape, one channel, no pixels; a kind that is no mask refused */
        size_t nm = 0;
        unsigned char *m = t_slurp("tests/data/fuzz/mask/seed-grey8.png", &nm);
        recio_decode_desc d;
        memset(&d, 0, sizeof d);
        d.bytes = m, d.size = nm, d.check = 1, d.mask = 1, d.errmsg = msg;
        CHECK(m && recio_image_decode_desc(&shape, &d) == RECIO_OK && shape.width == 12 && shape.height == 10 &&
              shape.channels == 1 && shape.data == NULL);
        d.bytes = png, d.size = np;
        CHECK(recio_image_decode_desc(&shape, &d) == RECIO_ERR_DECODE && strstr(msg, "mask: ") && shape.data == NULL);
        free(m);
    }
    CHECK(check_only((const unsigned char *)"GIF89a....", 10, &shape, msg) == RECIO_ERR_DECODE && strstr(msg, "unsupported image format"));
    free(c), free(j), free(png), free(prog), free(huge);
}

static int recio(const char *args) { return t_recio_capture(args, 30, out_text, sizeof out_text); }

static int put_file(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f) ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

/* The HDR through every command that decodes: each stops with the reason, none hangs. */
static void test_commands_refuse_hdr(void) {
    unsigned char rec[128];
    float label = 1;
    size_t h;
    recio_writer *w = NULL;
    CHECK(system("rm -rf " T " && mkdir -p " T "/imgs") == 0);
    h = recio_irecord_pack_header(rec, &label, 1, 0, 0);
    memcpy(rec + h, hdr50, 50);
    CHECK(recio_writer_open(&w, T "/hdr.rec") == RECIO_OK && recio_writer_write(w, rec, h + 50) == RECIO_OK &&
          recio_writer_close(w) == RECIO_OK);
    CHECK(put_file(T "/imgs/a.hdr", hdr50, 50) == 0 && put_file(T "/x.lst", "0\t1\ta.hdr\n", 10) == 0);
    CHECK_EQ_INT(recio("apply --spec flip " T "/imgs/a.hdr " T "/out.png"), 1);
    CHECK(strstr(out_text, "unsupported image format") != NULL);
    CHECK_EQ_INT(recio("show " T "/hdr.rec " T "/sheet.png --tile 32"), 1);
    CHECK(strstr(out_text, "unsupported image format") != NULL);
    CHECK_EQ_INT(recio("verify --decode " T "/hdr.rec"), 1);
    CHECK(strstr(out_text, "unsupported image format") != NULL);
    CHECK_EQ_INT(recio("iter " T "/hdr.rec --spec 'resize(8,8)' --batch 1 --workers 0"), 1);
    CHECK(strstr(out_text, "unsupported image format") != NULL);
    CHECK_EQ_INT(recio("iter " T "/hdr.rec --spec 'resize(8,8)' --batch 1 --workers 2"), 1);
    CHECK(strstr(out_text, "unsupported image format") != NULL);
    CHECK_EQ_INT(recio("pack " T "/x " T "/imgs"), 1); /* nothing packed: an error */
    CHECK(strstr(out_text, "unsupported image format") != NULL);
}

int main(void) {
    RUN(test_unsupported_formats);
    RUN(test_bmp);
    RUN(test_png);
    RUN(test_jpeg);
    RUN(test_jpeg_marker_in_scan);
    RUN(test_jpeg_scan_cut_then_marker);
    RUN(test_jpeg_progressive_cut_then_marker);
    RUN(test_jpeg_shift34);
    RUN(test_check_only);
    RUN(test_commands_refuse_hdr);
    return t_done("test_decode_safety");
}
