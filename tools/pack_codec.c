/* Image adapter of the pack commands, on stb_image / stb_image_resize / stb_image_write.
   Each stb implementation is private to this file (*_STATIC), so it cannot clash with the copy that
   recio.h's implementation carries in librecio.a. */
#include "pack_codec.h"
#include <stdlib.h>
#include <string.h>

#include "stb_image_private.h" /* also turns -Wunused-function off: the static stb writer and resizer
                                  bring functions this file does not call */
/* stb_image_resize 0.97 asserts that filter weights sum below 1.1 and trips on common shrinks with
   the triangle filter (500x375 -> 341x256); it renormalises the weights right after, so the assert
   only stops correct work. */
#define STBIR_ASSERT(x) ((void)0)
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include "stb_image_resize.h"
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#include "stb_image_write.h"
/* stb_image_write 1.16's JPEG bit writer shifts a signed int into its sign bit (`bitBuf <<= 8`):
   undefined in C, harmless on every compiler we know, and it stops a -fsanitize=undefined build.
   The shift check is switched off for that one function by declaring it (unprototyped, so no
   private stb type is needed) with no_sanitize before its body is parsed: STBIWDEF, which stb
   puts before each public definition, carries the declaration in. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#undef STBIWDEF
#define STBIWDEF static void stbiw__jpg_writeBits() __attribute__((no_sanitize("shift"))); static
#endif
#endif
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"

#define CODEC_MAX_PIXELS (double)(1 << 28)

static void set_why(const char **why, const char *w) {
    if (why) *why = w;
}

void codec_image_free(codec_image *img) {
    free(img->px);
    img->px = NULL;
}

/* 1 when `tag` (len bytes) occurs in the last `tail` bytes of b[0..n). */
static int tail_has(const unsigned char *b, size_t n, const char *tag, size_t len, size_t tail) {
    size_t i = n > tail ? n - tail : 0;
    for (; i + len <= n; i++)
        if (memcmp(b + i, tag, len) == 0) return 1;
    return 0;
}

int codec_probe(const void *bytes, size_t n, const char **why) {
    const unsigned char *b = (const unsigned char *)bytes;
    int x, y, c;
    if (n == 0) return set_why(why, "empty file"), -1;
    if (!stbi_info_from_memory(b, (int)(n > 0x7fffffff ? 0x7fffffff : n), &x, &y, &c))
        return set_why(why, "not an image (unknown or broken header)"), -1;
    /* stb_image fills a cut-off JPEG with grey instead of failing: the end marker is the tell. */
    if (n >= 2 && b[0] == 0xff && b[1] == 0xd8 && !tail_has(b, n, "\xff\xd9", 2, 4096))
        return set_why(why, "truncated JPEG (no end-of-image marker)"), -1;
    if (n >= 8 && memcmp(b, "\x89PNG", 4) == 0 && !tail_has(b, n, "IEND", 4, 4096))
        return set_why(why, "truncated PNG (no IEND chunk)"), -1;
    return 0;
}

/* ---- EXIF orientation: APP1 "Exif\0\0", then a TIFF header in either byte order, IFD0 tag 0x0112 */

static unsigned rd16(const unsigned char *p, int be) { return be ? (unsigned)p[0] << 8 | p[1] : (unsigned)p[1] << 8 | p[0]; }
static unsigned long rd32(const unsigned char *p, int be) {
    return be ? (unsigned long)rd16(p, 1) << 16 | rd16(p + 2, 1) : (unsigned long)rd16(p + 2, 0) << 16 | rd16(p, 0);
}

static int tiff_orientation(const unsigned char *t, size_t n) {
    int be;
    unsigned long ifd;
    unsigned i, count;
    if (n < 8) return 1;
    if (t[0] == 'I' && t[1] == 'I') be = 0;
    else if (t[0] == 'M' && t[1] == 'M') be = 1;
    else return 1;
    if (rd16(t + 2, be) != 42) return 1;
    ifd = rd32(t + 4, be);
    if (ifd > n - 2) return 1;
    count = rd16(t + ifd, be);
    for (i = 0; i < count; i++) {
        const unsigned char *e = t + ifd + 2 + 12 * (size_t)i;
        unsigned v;
        if (ifd + 2 + 12 * (size_t)i + 12 > n) return 1;
        if (rd16(e, be) != 0x0112) continue;
        if (rd16(e + 2, be) != 3) return 1; /* must be a SHORT */
        v = rd16(e + 8, be);
        return v >= 1 && v <= 8 ? (int)v : 1;
    }
    return 1;
}

int codec_exif_orientation(const void *bytes, size_t n) {
    const unsigned char *b = (const unsigned char *)bytes;
    size_t at = 2;
    if (n < 4 || b[0] != 0xff || b[1] != 0xd8) return 1;
    while (at + 4 <= n && b[at] == 0xff) {
        unsigned m = b[at + 1];
        size_t len = (size_t)b[at + 2] << 8 | b[at + 3];
        if (m == 0xff) { /* fill byte */
            at++;
            continue;
        }
        if (m == 0xda || m == 0xd9 || len < 2 || at + 2 + len > n) return 1; /* scan data: no more headers */
        if (m == 0xe1 && len >= 8 && memcmp(b + at + 4, "Exif\0\0", 6) == 0)
            return tiff_orientation(b + at + 10, len - 8);
        at += 2 + len;
    }
    return 1;
}

/* Source pixel of display pixel (x, y) for orientations 2..8 (EXIF 2.3, table of Orientation). */
static void oriented_src(int o, int w, int h, int x, int y, int *sx, int *sy) {
    switch (o) {
    case 2: *sx = w - 1 - x, *sy = y; break;
    case 3: *sx = w - 1 - x, *sy = h - 1 - y; break;
    case 4: *sx = x, *sy = h - 1 - y; break;
    case 5: *sx = y, *sy = x; break;
    case 6: *sx = y, *sy = h - 1 - x; break;
    case 7: *sx = w - 1 - y, *sy = h - 1 - x; break;
    case 8: *sx = w - 1 - y, *sy = x; break;
    default: *sx = x, *sy = y; break;
    }
}

int codec_orient(codec_image *img, int o) {
    int ow = o >= 5 ? img->h : img->w, oh = o >= 5 ? img->w : img->h, x, y, c = img->c;
    unsigned char *d;
    if (o < 2 || o > 8) return 0;
    d = (unsigned char *)malloc((size_t)ow * oh * c);
    if (!d) return -1;
    for (y = 0; y < oh; y++)
        for (x = 0; x < ow; x++) {
            int sx, sy;
            oriented_src(o, img->w, img->h, x, y, &sx, &sy);
            memcpy(d + ((size_t)y * ow + x) * c, img->px + ((size_t)sy * img->w + sx) * c, (size_t)c);
        }
    free(img->px);
    img->px = d;
    img->w = ow;
    img->h = oh;
    return 0;
}

int codec_decode(const void *bytes, size_t n, int channels, int apply_exif, codec_image *out, const char **why) {
    int w, h, c;
    memset(out, 0, sizeof *out);
    if (n > 0x7fffffff) return set_why(why, "file too large to decode"), -1;
    /* a small file can claim a huge size (a "decompression bomb"): refuse before allocating */
    if (stbi_info_from_memory((const unsigned char *)bytes, (int)n, &w, &h, &c) && (double)w * h > CODEC_MAX_PIXELS)
        return set_why(why, "image too large (more than 2^28 pixels)"), -1;
    out->px = stbi_load_from_memory((const unsigned char *)bytes, (int)n, &w, &h, &c, channels);
    if (!out->px) return set_why(why, stbi_failure_reason() ? stbi_failure_reason() : "cannot decode"), -1;
    out->w = w;
    out->h = h;
    out->c = channels ? channels : c;
    if (apply_exif && codec_orient(out, codec_exif_orientation(bytes, n)))
        return codec_image_free(out), set_why(why, "out of memory"), -1;
    return 0;
}

int codec_center_square(codec_image *img) {
    int s = img->w < img->h ? img->w : img->h, x0 = (img->w - s) / 2, y0 = (img->h - s) / 2, y;
    size_t row = (size_t)s * img->c;
    if (s == img->w && s == img->h) return 0;
    /* rows move towards the start, never over rows still to be read */
    for (y = 0; y < s; y++) memmove(img->px + y * row, img->px + ((size_t)(y0 + y) * img->w + x0) * img->c, row);
    img->w = img->h = s;
    return 0;
}

int codec_resize(codec_image *img, int w, int h) {
    unsigned char *d;
    int alpha = img->c == 4 ? 3 : img->c == 2 ? 1 : STBIR_ALPHA_CHANNEL_NONE;
    if (w == img->w && h == img->h) return 0;
    if (w < 1 || h < 1) return -1;
    d = (unsigned char *)malloc((size_t)w * h * img->c);
    if (!d) return -1;
    if (!stbir_resize_uint8_generic(img->px, img->w, img->h, 0, d, w, h, 0, img->c, alpha, 0, STBIR_EDGE_CLAMP,
                                    STBIR_FILTER_TRIANGLE, STBIR_COLORSPACE_LINEAR, NULL)) {
        free(d);
        return -1;
    }
    free(img->px);
    img->px = d;
    img->w = w;
    img->h = h;
    return 0;
}

int codec_resize_short(codec_image *img, int s) {
    if (img->h > img->w) return codec_resize(img, s, (int)((long long)img->h * s / img->w));
    return codec_resize(img, (int)((long long)img->w * s / img->h), s);
}

typedef struct grow {
    unsigned char *p;
    size_t n, cap;
    int bad;
} grow;

static void grow_put(void *ctx, void *data, int size) {
    grow *g = (grow *)ctx;
    if (g->bad || size <= 0) return;
    if (g->n + (size_t)size > g->cap) {
        size_t cap = g->cap * 2 > g->n + (size_t)size ? g->cap * 2 : g->n + (size_t)size;
        unsigned char *q = (unsigned char *)realloc(g->p, cap);
        if (!q) {
            g->bad = 1;
            return;
        }
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->n, data, (size_t)size);
    g->n += (size_t)size;
}

int codec_encode(const codec_image *img, int png, int quality, size_t reserve, unsigned char **out, size_t *n) {
    grow g;
    int ok;
    g.cap = reserve + (size_t)img->w * img->h / 4 + 1024; /* a typical JPEG fits: few reallocs */
    g.p = (unsigned char *)malloc(g.cap);
    g.n = reserve;
    g.bad = !g.p;
    if (g.bad) return -1;
    if (png) ok = stbi_write_png_to_func(grow_put, &g, img->w, img->h, img->c, img->px, img->w * img->c);
    else ok = stbi_write_jpg_to_func(grow_put, &g, img->w, img->h, img->c, img->px, quality);
    if (!ok || g.bad) {
        free(g.p);
        return -1;
    }
    *out = g.p;
    *n = g.n;
    return 0;
}
