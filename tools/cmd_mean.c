/* recio mean: the per-pixel mean image of a dataset after a chain, as a NumPy .npy for
   `recio iter --mean-img` / recio_iter_desc.mean_img (MXNet's mean_img). */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char mean_help[] =
    "usage: recio mean URIS --spec SPEC -o OUT.npy [--channels C] [--workers N] [--force]\n\n"
    "Run SPEC on every record of URIS ('a.rec;b.rec') and write the mean of the items, element by\n"
    "element, as a NumPy .npy of float32 shaped as one item: (C,H,W) when the spec ends in chw, else\n"
    "(H,W,C). Sums are kept in double, so the order of the records does not matter. This is MXNet's\n"
    "mean_img, made ahead of time (MXNet makes it on the first run when the file is missing;\n"
    "recio asks for it). Use it with 'recio iter --mean-img OUT.npy' or recio_iter_desc.mean_img, whose\n"
    "spec must make items of the same shape and end in float: the mean is subtracted after the whole\n"
    "chain, so compute it over the same crop, without random ops (their seed here is 0) and without\n"
    "normalize. In Python: numpy.load(OUT.npy).\n\n"
    "  --spec SPEC     e.g. 'resize_short(256) center_crop(224) float chw'; u8 or float32 items\n"
    "  -o OUT.npy      where to write the mean\n"
    "  --channels C    decode to C channels: 1, 3 or 4 (default 3)\n"
    "  --workers N     decode threads, 0..256 (default 0: this thread)\n"
    "  --force         replace an existing OUT.npy that is not a .npy (it is never one of URIS)\n"
    "OUT.npy is written whole or not at all (a temporary file renamed); an existing .npy is replaced.\n\n"
    "example: recio mean train.rec --spec 'resize_short(256) center_crop(224) float chw' -o mean.npy\n"
    "         recio iter train.rec --spec 'random_resized_crop(224) random_flip(0.5) float chw' \\\n"
    "             --mean-img mean.npy --batch 32\n";

typedef struct mean_opts {
    recio_iter_desc d;
    const char *out;
    int force;
    char *files;         /* URIS cut at its ';' */
    const char **inputs; /* its files, which OUT must not be */
    size_t ninputs;
} mean_opts;

static int parse_mean_args(int argc, char **argv, mean_opts *o) {
    int i;
    unsigned long long v;
    memset(o, 0, sizeof *o);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (cli_is_help(a)) return fputs(mean_help, stdout), -1;
        if (strcmp(a, "--spec") == 0 && has) o->d.item.spec = argv[++i];
        else if (strcmp(a, "-o") == 0 && has) o->out = argv[++i];
        else if (strcmp(a, "--force") == 0) o->force = 1;
        else if (!has && (strcmp(a, "--channels") == 0 || strcmp(a, "--workers") == 0 || strcmp(a, "--spec") == 0 ||
                          strcmp(a, "-o") == 0))
            return cli_usage_error("mean", "%s needs a value", a);
        else if (strcmp(a, "--channels") == 0 || strcmp(a, "--workers") == 0) {
            if (cli_parse_u64(argv[++i], &v) || (a[2] == 'c' ? v != 1 && v != 3 && v != 4 : v > 256))
                return cli_usage_error("mean", a[2] == 'c' ? "bad value '%s' for %s: 1, 3 or 4" : "bad value '%s' for %s: a whole number from 0 to 256", argv[i], a);
            if (a[2] == 'c') o->d.item.channels = (int)v;
            else o->d.run.workers = (unsigned)v;
        } else if (a[0] == '-' && a[1]) return cli_usage_error("mean", "unknown option '%s'", a);
        else if (o->d.uris) return cli_usage_error("mean", "one URIS argument ('a.rec;b.rec' for several files)");
        else o->d.uris = a;
    }
    if (!o->d.uris) return cli_usage_error("mean", "which dataset?");
    if (!o->d.item.spec) return cli_usage_error("mean", "--spec is required (e.g. --spec 'center_crop(224) float chw')");
    if (!o->out) return cli_usage_error("mean", "-o OUT.npy is required");
    o->d.run.batch = 32;
    o->d.run.last_batch = RECIO_LAST_PAD; /* every record; only the real items of the last batch count */
    return 0;
}

/* Add the count real items of b to sum (n elements each). */
static int add_batch(const recio_batch *b, double *sum, size_t n) {
    unsigned i;
    size_t k;
    for (i = 0; i < b->count; i++) {
        if (b->item.dtype == RECIO_U8) {
            const unsigned char *p = (const unsigned char *)b->data + (size_t)i * b->item_bytes;
            for (k = 0; k < n; k++) sum[k] += p[k];
        } else if (b->item.dtype == RECIO_F32) {
            const float *p = (const float *)((const unsigned char *)b->data + (size_t)i * b->item_bytes);
            for (k = 0; k < n; k++) sum[k] += p[k];
        } else {
            return -1;
        }
    }
    return 0;
}

/* The files of URIS ('a.rec;b.rec'), for the check that OUT is none of them; -1 out of memory. */
static int uri_files(mean_opts *o) {
    char *p;
    size_t n = 1;
    if (!(o->files = (char *)malloc(strlen(o->d.uris) + 1))) return -1;
    strcpy(o->files, o->d.uris);
    for (p = o->files; *p; p++) n += *p == ';';
    if (!(o->inputs = (const char **)malloc(n * sizeof *o->inputs))) return -1;
    for (p = o->files;; *p++ = 0) {
        o->inputs[o->ninputs++] = p;
        if (!(p = strchr(p, ';'))) break;
    }
    return 0;
}

/* NumPy format 1.0: magic, version, header length, a dict padded with spaces to 64 bytes, data. */
static int write_npy(cli_out *out, const recio_image *item, const double *sum, size_t n, unsigned long long count) {
    char h[160];
    int len;
    size_t k;
    if (item->layout == RECIO_CHW)
        len = snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", item->channels, item->height, item->width);
    else
        len = snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", item->height, item->width, item->channels);
    while ((10 + len + 1) % 64) h[len++] = ' ';
    h[len++] = '\n';
    cli_out_write(out, "\x93NUMPY\x01\x00", 8);
    cli_out_printf(out, "%c%c", len & 255, len >> 8);
    cli_out_write(out, h, (size_t)len);
    for (k = 0; k < n; k++) {
        unsigned char le[4];
        recio_store_f32le(le, (float)(sum[k] / (double)count));
        cli_out_write(out, le, 4);
    }
    return cli_out_commit(out);
}

static int mean_run(recio_iter *it, const mean_opts *o, cli_out *out) {
    recio_batch b;
    recio_image item;
    recio_err e;
    double *sum = NULL;
    size_t n = 0;
    unsigned long long count = 0;
    int rc = 0;
    memset(&item, 0, sizeof item);
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
        if (!sum) {
            n = b.item_bytes / recio_dtype_size(b.item.dtype);
            if (!(sum = (double *)calloc(n ? n : 1, sizeof *sum))) return cli_err("out of memory for %llu sums", (unsigned long long)n), CLI_EXIT_ERR;
        }
        if (add_batch(&b, sum, n)) {
            free(sum);
            cli_err("the spec makes items of another type than u8 or float32: end it with 'float'");
            return CLI_EXIT_USAGE;
        }
        count += b.count;
        item = b.item;
    }
    if (e != RECIO_END) rc = (cli_err("%s", recio_iter_errmsg(it)), CLI_EXIT_ERR);
    else if (!count) rc = (cli_err("%s: no records", o->d.uris), CLI_EXIT_ERR);
    else if (write_npy(out, &item, sum, n, count)) rc = CLI_EXIT_ERR;
    else if (item.layout == RECIO_CHW)
        fprintf(stderr, "%llu images: mean of shape (C,H,W) = (%d, %d, %d) written to %s\n", count, item.channels, item.height, item.width, o->out);
    else
        fprintf(stderr, "%llu images: mean of shape (H,W,C) = (%d, %d, %d) written to %s\n", count, item.height, item.width, item.channels, o->out);
    free(sum);
    return rc;
}

CLI_COMMAND(cli_cmd_mean) {
    mean_opts o;
    cli_out out;
    recio_iter *it = NULL;
    int rc = parse_mean_args(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if (uri_files(&o)) rc = (cli_err("out of memory"), CLI_EXIT_ERR);
    else if ((rc = cli_out_claim(&out, o.out, CLI_KIND_NPY, o.inputs, o.ninputs, o.force)) == 0) { /* before the work */
        if ((rc = cli_open_iter(&it, &o.d)) == 0) rc = mean_run(it, &o, &out);
        recio_iter_close(it);
        cli_out_free(&out);
    }
    free(o.files);
    free((void *)o.inputs);
    return rc;
}
