/* The image calls of recio list/pack/unpack/show, behind one small adapter so the tool can move to
   recio.h's own image section (issue 5) by changing this file only. Pixels are 8-bit, interleaved
   (HWC), rows packed (stride = w * c). Functions return 0 on success; on failure *why (when given)
   names the cause in a few words. Nothing here keeps state between calls: safe on worker threads. */
#ifndef RECIO_PACK_CODEC_H
#define RECIO_PACK_CODEC_H
#include <stddef.h>

typedef struct codec_image {
    int w, h, c;       /* c: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    unsigned char *px; /* owned; malloc */
} codec_image;

/* A quick look at encoded bytes without decoding the pixels: 0 when they look like a whole image
   (a known format whose header parses, and for JPEG/PNG an end marker in the tail). */
int codec_probe(const void *bytes, size_t n, const char **why);

/* Decode to `channels` (1, 3, or 0 = as stored, up to 4). 16-bit PNGs come down to 8 bits; CMYK JPEGs
   come back as RGB. With apply_exif, a JPEG's EXIF orientation (1..8) is applied to the pixels. */
int codec_decode(const void *bytes, size_t n, int channels, int apply_exif, codec_image *out, const char **why);

/* EXIF orientation of a JPEG (1..8); 1 when absent, malformed or not a JPEG. */
int codec_exif_orientation(const void *bytes, size_t n);
/* Turn stored pixels into display pixels for an EXIF orientation (2..8 move pixels; 1 is a no-op). */
int codec_orient(codec_image *img, int orientation);

/* Largest centred square (im2rec --center-crop). */
int codec_center_square(codec_image *img);
/* Resize to exactly w x h (triangle filter: bilinear when enlarging, area-like when shrinking). */
int codec_resize(codec_image *img, int w, int h);
/* Shorter side to s, longer side floor(long * s / short), as im2rec and resize_short do. */
int codec_resize_short(codec_image *img, int s);

/* Encode as JPEG (quality 1..100) or PNG, after `reserve` bytes left for the caller (a record
   header), into a malloc'd buffer: *out holds reserve + encoded bytes, *n their total. */
int codec_encode(const codec_image *img, int png, int quality, size_t reserve, unsigned char **out, size_t *n);

void codec_image_free(codec_image *img);
#endif
