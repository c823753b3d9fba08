/* Image adapter of the pack commands: recio.h's decode and resize, EXIF orientation of our own, and
   stb_image_write for encoding (recio.h never writes images), as a copy private to this file
   (STB_IMAGE_WRITE_STATIC) so it cannot clash with another. */
#include "pack_codec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
/* The static writer brings functions this file does not call, and Debian's stb_image_write 1.16
   declares stbi_write_hdr_to_func without defining it under STBI_WRITE_NO_STDIO; GCC reports those
   at the end of the file, after any pop, so the warning stays off for this file. */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
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

/* The library's own checks (recio_decode_desc.check): the limits, the bytes present, every JPEG
   scan and PNG chunk there, with its words; no pixels decoded, so an image stored as it is costs a
   walk of its bytes. */
int codec_probe(const void *bytes, size_t n, char *why, size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_decode_desc d;
    recio_image shape;
    memset(&d, 0, sizeof d);
    d.bytes = bytes, d.size = n, d.check = 1, d.errmsg = msg;
    if (recio_image_decode_desc(&shape, &d) == RECIO_OK) return 0;
    if (why) snprintf(why, cap, "%s", msg);
    return -1;
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

/* Replace *img by *next (the result of an op on it). */
static int take(recio_image *img, recio_image *next, recio_err e) {
    if (e != RECIO_OK) return recio_image_free(next), -1;
    recio_image_free(img);
    *img = *next;
    return 0;
}

int codec_orient(recio_image *img, int o) {
    int ow = o >= 5 ? img->height : img->width, oh = o >= 5 ? img->width : img->height, x, y, c = img->channels;
    recio_image d;
    if (o < 2 || o > 8) return 0;
    if (recio_image_alloc(&d, ow, oh, c, RECIO_U8, RECIO_HWC, NULL) != RECIO_OK) return -1;
    for (y = 0; y < oh; y++)
        for (x = 0; x < ow; x++) {
            int sx, sy;
            oriented_src(o, img->width, img->height, x, y, &sx, &sy);
            memcpy((unsigned char *)d.data + y * d.stride + (size_t)x * c,
                   (const unsigned char *)img->data + sy * img->stride + (size_t)sx * c, (size_t)c);
        }
    return take(img, &d, RECIO_OK);
}

/* recio_image_decode_desc with its words (RECIO_ERRMSG_SIZE bytes) in why (cap bytes): mask or image. */
static recio_err codec_desc(const void *bytes, size_t n, int channels, int mask, recio_image *out, char *why, size_t cap) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_decode_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.bytes = bytes, d.size = n, d.channels = channels, d.mask = mask, d.errmsg = msg;
    if ((e = recio_image_decode_desc(out, &d)) != RECIO_OK && why && cap) { /* cut to cap, as the words always were */
        size_t n = strlen(msg) < cap ? strlen(msg) : cap - 1;
        memcpy(why, msg, n);
        why[n] = 0;
    }
    return e;
}

recio_err codec_mask(const void *bytes, size_t n, recio_image *out, char *why, size_t cap) {
    return codec_desc(bytes, n, 0, 1, out, why, cap);
}

int codec_decode(const void *bytes, size_t n, int channels, int apply_exif, recio_image *out, char *why, size_t cap) {
    if (codec_desc(bytes, n, channels, 0, out, why, cap) != RECIO_OK) return -1;
    if (apply_exif && codec_orient(out, codec_exif_orientation(bytes, n))) {
        recio_image_free(out);
        snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}

int codec_center_square(recio_image *img) {
    int s = img->width < img->height ? img->width : img->height;
    recio_image view, copy;
    memset(&copy, 0, sizeof copy);
    if (recio_image_center_crop(img, &view, s, s) != RECIO_OK) return -1;
    return take(img, &copy, recio_image_copy(&view, &copy));
}

int codec_resize(recio_image *img, int w, int h, recio_filter f) {
    recio_image out;
    memset(&out, 0, sizeof out);
    return take(img, &out, recio_image_resize(img, &out, w, h, f));
}

int codec_resize_short(recio_image *img, int s, recio_filter f) {
    recio_image out;
    memset(&out, 0, sizeof out);
    return take(img, &out, recio_image_resize_short(img, &out, s, f));
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

void codec_set_png_level(int level) { stbi_write_png_compression_level = level < 1 ? 1 : level > 9 ? 9 : level; }

int codec_encode(const recio_image *img, int png, int quality, size_t reserve, unsigned char **out, size_t *n) {
    grow g;
    int ok, w = img->width, h = img->height, c = img->channels;
    g.cap = reserve + (size_t)w * h / 4 + 1024; /* a typical JPEG fits: few reallocs */
    g.p = (unsigned char *)malloc(g.cap);
    g.n = reserve;
    g.bad = !g.p;
    if (g.bad) return -1;
    if (png) ok = stbi_write_png_to_func(grow_put, &g, w, h, c, img->data, (int)img->stride);
    else if (img->stride == (size_t)w * c) ok = stbi_write_jpg_to_func(grow_put, &g, w, h, c, img->data, quality);
    else ok = 0; /* stb's JPEG writer wants packed rows; every image here is packed */
    if (!ok || g.bad) {
        free(g.p);
        return -1;
    }
    *out = g.p;
    *n = g.n;
    return 0;
}
