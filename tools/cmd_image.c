/* recio apply: one image through a transform spec, the eager image ops from the command line. */
#include "cli.h"
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "pack_codec.h" /* the tool's one image encoder (recio.h never writes images) */

static const char apply_help[] =
    "usage: recio apply --spec SPEC [--seed S] [--boxes IN.txt --boxes-out OUT.txt]\n"
    "                   [--mask MASK.png --mask-out OUT.png] [--force] IN OUT\n\n"
    "Decode IN (JPEG, PNG, BMP, ...; channels as stored), run the transform SPEC with seed S\n"
    "(default 0; the same seed gives the same result on every host) and write OUT:\n"
    "  OUT.png / OUT.jpg   for u8 results (JPEG quality 95)\n"
    "  any other name      the tensor's raw little-endian bytes (e.g. OUT.f32)\n"
    "The shape is printed on stderr as 'OUT: DTYPE LAYOUT D0xD1xD2' (dimensions in layout order).\n\n"
    "SPEC: ops separated by spaces, applied left to right, e.g.\n"
    "  resize_short(256) center_crop(224) normalize(imagenet) chw\n"
    "  random_resized_crop(224) random_flip(0.5) color_jitter(0.4,0.4,0.4) normalize(imagenet) chw\n"
    "  random_subpolicy((rotate(10) gray),(hue(0.1))) autoaugment\n"
    "  random_resized_crop(224) random_flip(0.5) trivialaugment normalize(imagenet) random_erasing(0.25) chw\n"
    "  interp(cubic,antialias) resize_short(256) center_crop(224) normalize(imagenet) bgr chw\n"
    "Resizes are bilinear (OpenCV INTER_LINEAR) unless interp(nearest|cubic|lanczos|area|auto[,antialias])\n"
    "precedes one. Recipes: randaugment(N,M), autoaugment(imagenet|cifar10|svhn), gaussian_blur(K),\n"
    "cutout(S), pad(L,T,R,B), translate(DX,DY), random_rotate(DEG,FILL), random_shear_x(MAX)...\n"
    "(see docs/image.md for every op and the library each follows).\n\n"
    "Detection and segmentation: the geometric ops (crops, resizes, flips, pad, rotate, shear) move\n"
    "boxes and masks exactly as they move the pixels, with the same random draws (OUT is the same\n"
    "as without them); colour ops leave them alone. The exception is SSD's crop,\n"
    "random_bbox_crop([T,SMIN,SMAX,RMIN,RMAX,TRIALS]): it picks a crop whose IoU with some box is\n"
    "at least T (no arguments: SSD's choices), so it reads the boxes; without --boxes the whole image\n"
    "is its one box and T asks for at least T of the area.\n"
    "  --boxes IN.txt      one box per line, 'class xmin ymin xmax ymax', whitespace-separated,\n"
    "                      normalised to IN (0..1, x right, y down); a line that is not a box (NaN,\n"
    "                      infinite or too large for a float, xmin > xmax, ymin > ymax) is an error\n"
    "  --boxes-out OUT.txt the boxes after the chain, normalised to OUT: each the bounding box of\n"
    "                      its moved corners, clipped to OUT; a box whose centre leaves OUT is\n"
    "                      dropped (MXNet's default), and so is one whose centre is outside IN,\n"
    "                      whatever the chain (identity too)\n"
    "  --mask MASK.png     a label per pixel, IN's size: an 8-bit grey PNG, or a palette PNG whose\n"
    "                      indices are the labels (VOC's masks); other kinds are refused\n"
    "  --mask-out OUT.png  the mask moved by nearest-neighbour sampling; areas the geometry uncovers\n"
    "                      (pad, rotate's corners) get label 255 (\"ignore\")\n\n"
    "Outputs: OUT, OUT.txt and the mask are written whole, all of them or none (temporary files\n"
    "renamed). None may be an input or another output. An existing output is replaced when it holds\n"
    "what is written there (a PNG for .png, a JPEG for .jpg, a boxes file, a raw tensor: a file of no\n"
    "type recio knows and not text); anything else only with\n"
    "  --force             replace existing outputs whatever they hold\n\n"
    "example: recio apply --spec 'resize_short(256) center_crop(224) normalize(imagenet) chw' cat.jpg cat.f32\n"
    "example: recio apply --spec 'random_resized_crop(300) random_flip(0.5)' --seed 7 \\\n"
    "           --boxes dog.txt --boxes-out dog-aug.txt --mask dog-mask.png --mask-out dog-aug-mask.png \\\n"
    "           dog.jpg dog-aug.png\n"
    "example: recio apply --spec 'random_expand(4) random_bbox_crop resize(300,300) random_flip(0.5)' \\\n"
    "           --seed 3 --boxes dog.txt --boxes-out dog-ssd.txt dog.jpg dog-ssd.png\n";

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

/* What an output named so holds: PNG, JPEG, or the raw tensor. */
static cli_kind out_kind(const char *path) {
    if (has_ext(path, ".png")) return CLI_KIND_PNG;
    return has_ext(path, ".jpg") || has_ext(path, ".jpeg") ? CLI_KIND_JPEG : CLI_KIND_RAW;
}

/* Raw tensor bytes, little-endian whatever the host, rows packed. */
static int write_raw(const recio_image *img, cli_out *out) {
    size_t es = recio_dtype_size(img->dtype), rows = (size_t)img->height * (img->layout == RECIO_CHW ? (size_t)img->channels : 1u);
    size_t rb = (size_t)img->width * (img->layout == RECIO_CHW ? 1u : (size_t)img->channels) * es, r, i;
    unsigned char *buf = (unsigned char *)malloc(rb ? rb : 1);
    int ok = buf != NULL;
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
        ok = cli_out_write(out, buf, rb) == 0;
    }
    free(buf);
    return ok ? 0 : -1;
}

/* img into out's bytes (committed later, with the other outputs): a PNG, a JPEG, or raw. */
static int write_out(const recio_image *img, cli_out *out) {
    cli_kind kind = out_kind(out->path);
    recio_image hwc = {0};
    unsigned char *bytes = NULL;
    size_t n = 0;
    int ok;
    if (kind == CLI_KIND_RAW) return write_raw(img, out);
    if (img->dtype != RECIO_U8) {
        cli_err("%s: a %s result cannot be a PNG/JPEG: name OUT .f32 (raw) or end SPEC with u8 ops", out->path, dtype_name(img->dtype));
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
    ok = codec_encode(img, kind == CLI_KIND_PNG, 95, 0, &bytes, &n) == 0;
    if (hwc.data) recio_image_free(&hwc);
    ok = ok && cli_out_write(out, bytes, n) == 0;
    free(bytes);
    return ok ? 0 : -1;
}

/* The top-level ops of a spec: [starts[i], ends[i]) at parenthesis depth 0, split on spaces. */
static int spec_ops(const char *spec, const char **starts, const char **ends, int max) {
    int n = 0, depth = 0;
    const char *p = spec;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        starts[n] = p;
        for (; *p && (depth > 0 || (*p != ' ' && *p != '\t' && *p != '\n')); p++)
            depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        ends[n++] = p;
    }
    return n;
}

/* A chain failed on src: find the op by running ever longer prefixes of the spec (the failure path
   only), and say which op, on what size (WxH, as every size recio prints). */
static void which_op_failed(const char *spec, const recio_image *src, uint64_t seed, recio_err e, const char *in, const char *why) {
    const char *s[64], *en[64];
    int n = spec_ops(spec, s, en, 64), k;
    recio_image prev = *src, cur;
    char *pre;
    if (why && strstr(why, " cannot take the ")) { /* the library said the op and the sizes itself */
        cli_err("%s: offset 0: %s", in, why);
        return;
    }
    pre = (char *)malloc(strlen(spec) + 1);
    for (k = 1; pre && k <= n; k++) {
        recio_transform *t = NULL;
        recio_err ek;
        memcpy(pre, spec, (size_t)(en[k - 1] - spec));
        pre[en[k - 1] - spec] = 0;
        memset(&cur, 0, sizeof cur);
        if (recio_transform_parse(&t, pre) != RECIO_OK) break;
        ek = recio_transform_apply(t, src, &cur, seed);
        recio_transform_free(t);
        if (ek != RECIO_OK) {
            cli_err("%s: offset 0: %.*s cannot take the %dx%d image (WxH, %d channel%s) that reaches it: %s", in,
                    (int)(en[k - 1] - s[k - 1]), s[k - 1], prev.width, prev.height, prev.channels, prev.channels == 1 ? "" : "s",
                    why && why[0] ? why : recio_strerror(ek));
            if (prev.data != src->data) recio_image_free(&prev);
            free(pre);
            return;
        }
        if (prev.data != src->data) recio_image_free(&prev);
        prev = cur;
    }
    if (prev.data != src->data) recio_image_free(&prev);
    free(pre);
    cli_err("%s: offset 0: %dx%d image (WxH, %d channels): transform failed: %s", in, src->width, src->height, src->channels,
            why && why[0] ? why : recio_strerror(e));
}

typedef struct apply_args {
    const char *spec, *in, *out, *boxes, *boxes_out, *mask, *mask_out;
    const unsigned char *bytes; /* IN as read */
    size_t n;
    unsigned long long seed;
    int force;
    const char *inputs[3];    /* IN, IN.txt and MASK.png (NULL when not given): no output may be one */
} apply_args;

/* The options; -1 when they are sound, else the exit status (help printed, or usage error). */
static int apply_parse(int argc, char **argv, apply_args *a) {
    static const char *const pairs[] = {"--spec", "--boxes", "--boxes-out", "--mask", "--mask-out"};
    int i, k;
    memset(a, 0, sizeof *a);
    for (i = 1; i < argc; i++) {
        const char **slot[5];
        slot[0] = &a->spec, slot[1] = &a->boxes, slot[2] = &a->boxes_out, slot[3] = &a->mask, slot[4] = &a->mask_out;
        if (cli_is_help(argv[i])) return fputs(apply_help, stdout), 0;
        for (k = 0; k < 5 && !(strcmp(argv[i], pairs[k]) == 0 && i + 1 < argc); k++) {}
        if (k < 5) *slot[k] = argv[++i];
        else if (strcmp(argv[i], "--force") == 0) a->force = 1;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (cli_parse_u64(argv[++i], &a->seed)) return cli_usage_error("apply", "--seed wants a whole number, not '%s'", argv[i]);
        } else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("apply", "unknown option '%s'", argv[i]);
        else if (!a->in) a->in = argv[i];
        else if (!a->out) a->out = argv[i];
        else return cli_usage_error("apply", "too many arguments");
    }
    if (!a->spec) return cli_usage_error("apply", "--spec SPEC is required");
    if (!a->in || !a->out) return cli_usage_error("apply", "expected IN and OUT");
    if (!a->boxes != !a->boxes_out) return cli_usage_error("apply", "--boxes and --boxes-out go together");
    if (!a->mask != !a->mask_out) return cli_usage_error("apply", "--mask and --mask-out go together");
    return -1;
}

/* The whole file (IN may be a pipe); 0, or -1 with the error printed. */
static int read_all(const char *path, unsigned char **bytes, size_t *n) {
    FILE *f = fopen(path, "rb");
    *bytes = NULL, *n = 0;
    if (!f) return cli_err("%s: cannot open: %s", path, strerror(errno)), -1;
    for (;;) {
        unsigned char *nb = (unsigned char *)realloc(*bytes, *n + 65536);
        size_t k;
        if (!nb) break;
        *bytes = nb;
        k = fread(*bytes + *n, 1, 65536, f);
        *n += k;
        if (k < 65536) break;
    }
    fclose(f);
    return 0;
}

static int write_boxes(cli_out *out, const float *obj, int count) {
    int i;
    for (i = 0; i < count; i++, obj += 5)
        cli_out_printf(out, "%.9g %.9g %.9g %.9g %.9g\n", obj[0], obj[1], obj[2], obj[3], obj[4]);
    return 0;
}

/* The mask by the library's one rule (recio_decode_desc.mask: the labels of an 8-bit grey or a palette
   PNG, any other kind refused by name), the image's size. */
static int read_mask(const char *path, const recio_image *img, recio_image *m) {
    unsigned char *bytes;
    size_t n;
    int rc = -1;
    char err[RECIO_ERRMSG_SIZE];
    recio_decode_desc dd;
    if (read_all(path, &bytes, &n) != 0) return -1;
    memset(&dd, 0, sizeof dd);
    dd.bytes = bytes, dd.size = n, dd.mask = 1, dd.errmsg = err;
    if (recio_image_decode_desc(m, &dd) != RECIO_OK) cli_err("%s: offset 0: %s", path, err);
    else if (m->width != img->width || m->height != img->height)
        cli_err("%s: mask is %dx%d, the image %dx%d", path, m->width, m->height, img->width, img->height), recio_image_free(m);
    else rc = 0;
    free(bytes);
    return rc;
}

/* The image through the chain with the boxes and mask asked for, the boxes and the mask into their
   outputs' bytes; 0, or -1 with the error printed. */
static int apply_run(const apply_args *a, const recio_transform *t, const recio_image *src, recio_image *dst, cli_out *outs) {
    recio_apply_desc d;
    recio_image mask = {0}, mask_out = {0};
    float *obj = NULL;
    int kept = 0, rc = -1;
    char why[RECIO_ERRMSG_SIZE];
    recio_err e;
    memset(&d, 0, sizeof d);
    d.image = src, d.out = dst, d.seed = a->seed, d.errmsg = why;
    if (a->boxes && cli_read_boxes(a->boxes, &obj, &d.count) != 0) goto done;
    if (a->mask && read_mask(a->mask, src, &mask) != 0) goto done;
    d.boxes = obj, d.boxes_out = obj, d.count_out = &kept;
    if (a->mask) d.mask = &mask, d.mask_out = &mask_out;
    if ((e = recio_transform_apply_desc(t, &d)) != RECIO_OK) { /* errmsg: the op's own words */
        which_op_failed(a->spec, src, a->seed, e, a->in, strncmp(why, "transform: ", 11) == 0 ? why + 11 : NULL);
        goto done;
    }
    if (a->boxes_out && write_boxes(&outs[1], obj, kept) != 0) goto done;
    if (a->mask_out && write_out(&mask_out, &outs[2]) == -1) cli_err("%s: cannot encode the mask (out of memory?)", a->mask_out);
    else rc = 0;
done:
    free(obj);
    recio_image_free(&mask);
    recio_image_free(&mask_out);
    return rc;
}

/* OUT, OUT.txt and the mask may be written (claimed before any work): three files, none of them
   an input; 0 or the exit status. */
static int claim_outputs(apply_args *a, cli_out *outs, size_t *n) {
    const char *names[3];
    cli_kind kinds[3];
    int j, rc;
    names[0] = a->out, names[1] = a->boxes_out, names[2] = a->mask_out;
    a->inputs[0] = a->in, a->inputs[1] = a->boxes, a->inputs[2] = a->mask;
    kinds[0] = out_kind(a->out), kinds[1] = CLI_KIND_BOXES, kinds[2] = a->mask_out ? out_kind(a->mask_out) : CLI_KIND_PNG;
    if ((rc = cli_out_distinct(names, 3)) != 0) return rc;
    for (j = 0, *n = 0; j < 3; j++) {
        if (!names[j]) continue;
        if ((rc = cli_out_claim(&outs[j], names[j], kinds[j], a->inputs, 3, a->force)) != 0) return rc;
        (*n)++;
    }
    return 0;
}

CLI_COMMAND(cli_cmd_apply) {
    apply_args a;
    char err[RECIO_ERRMSG_SIZE];
    recio_transform_desc td;
    recio_decode_desc dd;
    recio_transform *t = NULL;
    recio_image src = {0}, dst = {0};
    unsigned char *bytes = NULL;
    cli_out outs[3], *group[3];
    size_t n = 0, nout = 0, j;
    int rc = CLI_EXIT_ERR, w;
    recio_err e;
    if ((w = apply_parse(argc, argv, &a)) >= 0) return w;
    memset(&td, 0, sizeof td);
    td.errmsg = err;
    if (recio_transform_parse_desc(&t, a.spec, &td) != RECIO_OK) {
        int u = cli_usage_error("apply", "%s", err);
        return cli_spec_hint(err), u;
    }
    memset(outs, 0, sizeof outs);
    if ((w = claim_outputs(&a, outs, &nout)) != 0) {
        rc = w;
        goto done;
    }
    if (read_all(a.in, &bytes, &n) != 0) goto done;
    memset(&dd, 0, sizeof dd);
    dd.bytes = bytes, dd.size = n, dd.errmsg = err;
    if ((e = recio_image_decode_desc(&src, &dd)) != RECIO_OK) {
        cli_err("%s: offset 0: %s", a.in, e == RECIO_ERR_DECODE ? err : recio_strerror(e));
        goto done;
    }
    a.bytes = bytes, a.n = n;
    if (apply_run(&a, t, &src, &dst, outs) != 0) goto done;
    if ((w = write_out(&dst, &outs[0])) != 0) {
        if (w == -1) cli_err("%s: cannot encode the image (out of memory?)", a.out);
        goto done;
    }
    for (j = nout = 0; j < 3; j++)
        if (outs[j].path) group[nout++] = &outs[j];
    if (cli_out_commit_all(group, nout) != 0) goto done;
    if (dst.layout == RECIO_CHW) fprintf(stderr, "%s: %s CHW %dx%dx%d\n", a.out, dtype_name(dst.dtype), dst.channels, dst.height, dst.width);
    else fprintf(stderr, "%s: %s HWC %dx%dx%d\n", a.out, dtype_name(dst.dtype), dst.height, dst.width, dst.channels);
    rc = 0;
done:
    for (j = 0; j < 3; j++) cli_out_free(&outs[j]);
    recio_image_free(&src);
    recio_image_free(&dst);
    recio_transform_free(t);
    free(bytes);
    return rc;
}
