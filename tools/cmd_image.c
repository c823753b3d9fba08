/* recio apply: one image through a transform spec, the eager image ops from the command line. */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pack_codec.h" /* the tool's one image encoder (recio.h never writes images) */

static const char apply_help[] =
    "usage: recio apply --spec SPEC [--seed S] IN OUT\n\n"
    "Decode IN (JPEG, PNG, BMP, ...; channels as stored), run the transform SPEC with seed S\n"
    "(default 0; the same seed gives the same result on every host) and write OUT:\n"
    "  OUT.png / OUT.jpg   for u8 results (JPEG quality 95)\n"
    "  any other name      the tensor's raw little-endian bytes (e.g. OUT.f32)\n"
    "The shape is printed on stderr as 'OUT: DTYPE LAYOUT D0xD1xD2' (dimensions in layout order).\n\n"
    "SPEC: ops separated by spaces, applied left to right, e.g.\n"
    "  resize_short(256) center_crop(224) normalize(imagenet) chw\n"
    "  random_resized_crop(224) random_flip(0.5) color_jitter(0.4,0.4,0.4) normalize(imagenet) chw\n"
    "  random_subpolicy((rotate(10) gray),(hue(0.1))) autoaugment\n"
    "(see docs/image.md for every op).\n\n"
    "example: recio apply --spec 'resize_short(256) center_crop(224) normalize(imagenet) chw' cat.jpg cat.f32\n";

static const char *dtype_name(recio_dtype t) {
    return t == RECIO_U8 ? "u8" : t == RECIO_F32 ? "f32" : t == RECIO_I8 ? "i8" : "f16";
}

static int has_ext(const char *path, const char *ext) {
    size_t n = strlen(path), k = strlen(ext);
    const char *p = path + n - k;
    size_t i;
    if (n < k) return 0;
    for (i = 0; i < k; i++)
        if ((p[i] | 0x20) != ext[i]) return 0;
    return 1;
}

/* Raw tensor bytes, little-endian whatever the host, rows packed. */
static int write_raw(const recio_image *img, const char *path) {
    FILE *f = fopen(path, "wb");
    size_t es = recio_dtype_size(img->dtype), rows = (size_t)img->height * (img->layout == RECIO_CHW ? (size_t)img->channels : 1u);
    size_t rb = (size_t)img->width * (img->layout == RECIO_CHW ? 1u : (size_t)img->channels) * es, r, i;
    unsigned char *buf = (unsigned char *)malloc(rb ? rb : 1);
    int ok = f && buf;
    for (r = 0; ok && r < rows; r++) {
        const unsigned char *s = (const unsigned char *)img->data + r * img->stride;
        for (i = 0; i < rb; i += es) {
            if (es == 4) {
                float v;
                memcpy(&v, s + i, 4);
                recio_store_f32le(buf + i, v);
            } else if (es == 2) {
                uint16_t v;
                memcpy(&v, s + i, 2);
                buf[i] = (unsigned char)v, buf[i + 1] = (unsigned char)(v >> 8);
            } else {
                buf[i] = s[i];
            }
        }
        ok = fwrite(buf, 1, rb, f) == rb;
    }
    free(buf);
    if (f && fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

static int write_out(const recio_image *img, const char *path) {
    int png = has_ext(path, ".png"), jpg = has_ext(path, ".jpg") || has_ext(path, ".jpeg");
    recio_image hwc = {0};
    unsigned char *bytes = NULL;
    size_t n = 0;
    int ok;
    if (!png && !jpg) return write_raw(img, path);
    if (img->dtype != RECIO_U8) {
        cli_err("%s: a %s result cannot be a PNG/JPEG: name OUT .f32 (raw) or end SPEC with u8 ops", path, dtype_name(img->dtype));
        return -2;
    }
    if (img->layout == RECIO_CHW || img->stride != (size_t)img->width * (size_t)img->channels) {
        int x, y, c; /* image files are interleaved and packed; a crop is a view with wider rows */
        if (recio_image_alloc(&hwc, img->width, img->height, img->channels, RECIO_U8, RECIO_HWC, NULL)) return -1;
        for (y = 0; y < img->height; y++)
            for (x = 0; x < img->width; x++)
                for (c = 0; c < img->channels; c++) recio_image_set(&hwc, x, y, c, recio_image_get(img, x, y, c));
        img = &hwc;
    }
    ok = codec_encode(img, png, 95, 0, &bytes, &n) == 0;
    if (hwc.data) recio_image_free(&hwc);
    if (ok) {
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(bytes, 1, n, f) == n;
        if (f && fclose(f) != 0) ok = 0;
        free(bytes);
    }
    return ok ? 0 : -1;
}

CLI_COMMAND(cli_cmd_apply) {
    const char *spec = NULL, *in = NULL, *out = NULL;
    unsigned long long seed = 0;
    char err[256];
    recio_transform *t = NULL;
    recio_image src = {0}, dst = {0};
    unsigned char *bytes = NULL;
    size_t n = 0;
    FILE *f;
    int i, rc = CLI_EXIT_ERR, w;
    recio_err e;
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(apply_help, stdout), 0;
        if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc) spec = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (cli_parse_u64(argv[++i], &seed)) return cli_usage_error("apply", "--seed wants a whole number, not '%s'", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("apply", "unknown option '%s'", argv[i]);
        else if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return cli_usage_error("apply", "too many arguments");
    }
    if (!spec) return cli_usage_error("apply", "--spec SPEC is required");
    if (!in || !out) return cli_usage_error("apply", "expected IN and OUT");
    if (recio_transform_parse_ex(&t, spec, NULL, err, sizeof err) != RECIO_OK) return cli_usage_error("apply", "%s", err);
    if (!(f = fopen(in, "rb"))) {
        cli_err("%s: cannot open: %s", in, strerror(errno));
        goto done;
    }
    for (;;) { /* read it all: IN may be a pipe */
        unsigned char *nb = (unsigned char *)realloc(bytes, n + 65536);
        size_t k;
        if (!nb) break;
        bytes = nb;
        k = fread(bytes + n, 1, 65536, f);
        n += k;
        if (k < 65536) break;
    }
    fclose(f);
    if ((e = recio_image_decode_ex(&src, bytes, n, 0, err, sizeof err)) != RECIO_OK) {
        cli_err("%s: offset 0: %s", in, e == RECIO_ERR_DECODE ? err : recio_strerror(e));
        goto done;
    }
    if ((e = recio_transform_apply(t, &src, &dst, seed)) != RECIO_OK) {
        recio_image again = {0}; /* the same run once more, for the op's own words */
        recio_encoded_desc ed;
        memset(&ed, 0, sizeof ed);
        ed.full_scale = 1;
        if (recio_transform_apply_encoded(t, bytes, n, &again, seed, &ed, err, sizeof err) == RECIO_OK || strncmp(err, "transform: ", 11) != 0)
            snprintf(err, sizeof err, "transform: %s", recio_strerror(e));
        recio_image_free(&again);
        cli_err("%s: %dx%dx%d image: %s", in, src.width, src.height, src.channels, err + 11);
        goto done;
    }
    if ((w = write_out(&dst, out)) != 0) {
        if (w == -1) cli_err("%s: cannot write: %s", out, strerror(errno));
        goto done;
    }
    if (dst.layout == RECIO_CHW) fprintf(stderr, "%s: %s CHW %dx%dx%d\n", out, dtype_name(dst.dtype), dst.channels, dst.height, dst.width);
    else fprintf(stderr, "%s: %s HWC %dx%dx%d\n", out, dtype_name(dst.dtype), dst.height, dst.width, dst.channels);
    rc = 0;
done:
    recio_image_free(&src);
    recio_image_free(&dst);
    recio_transform_free(t);
    free(bytes);
    return rc;
}
