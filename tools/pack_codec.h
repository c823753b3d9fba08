/* The image calls of recio list/pack/unpack/show in one small adapter: decoding and resizing are
   recio.h's image ops; what recio.h does not do (EXIF orientation, encoding to JPEG/PNG) is here.
   Images are recio_image, u8 HWC, owned (free with recio_image_free). Functions return 0 on success;
   on failure *why (when given) names the cause in a few words.
   Nothing here keeps state between calls: safe on worker threads. */
#ifndef RECIO_PACK_CODEC_H
#define RECIO_PACK_CODEC_H
#include "recio.h"

/* The decoder's checks without decoding the pixels (recio_decode_desc.check): 0 when the bytes hold
   a whole image recio decodes; else -1 and the library's words ("decode: why") in why (cap bytes). */
int codec_probe(const void *bytes, size_t n, char *why, size_t cap);

/* Decode to `channels` (1, 3, or 0 = as stored; gray+alpha becomes 4). 16-bit PNGs come down to 8
   bits; CMYK JPEGs come back as RGB. With apply_exif, a JPEG's EXIF orientation (1..8) is applied. */
int codec_decode(const void *bytes, size_t n, int channels, int apply_exif, recio_image *out, char *why, size_t cap);
/* A label mask by the library's rule (recio_decode_desc.mask), its words ("mask: why") into why (cap bytes). */
recio_err codec_mask(const void *bytes, size_t n, recio_image *out, char *why, size_t cap);

/* EXIF orientation of a JPEG (1..8); 1 when absent, malformed or not a JPEG. */
int codec_exif_orientation(const void *bytes, size_t n);
/* Turn stored pixels into display pixels for an EXIF orientation (2..8 move pixels; 1 is a no-op). */
int codec_orient(recio_image *img, int orientation);

/* Largest centred square (im2rec --center-crop). */
int codec_center_square(recio_image *img);
/* Resize to exactly w x h / shorter side to s (longer floor(long * s / short), as im2rec). */
int codec_resize(recio_image *img, int w, int h, recio_filter f);
int codec_resize_short(recio_image *img, int s, recio_filter f);

/* Encode as JPEG (quality 1..100) or PNG, after `reserve` bytes left for the caller (a record
   header), into a malloc'd buffer: *out holds reserve + encoded bytes, *n their total. */
/* The PNG compression level (1..9; default 8) for every later codec_encode: process-wide, so set it
   before starting worker threads. stb_image_write compresses levels 1..5 alike. */
void codec_set_png_level(int level);
int codec_encode(const recio_image *img, int png, int quality, size_t reserve, unsigned char **out, size_t *n);
#endif
