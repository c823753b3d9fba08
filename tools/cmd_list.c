/* recio list: a folder of images becomes im2rec .lst files ("index\tlabel\tpath", path relative to ROOT).
   The walk, the labels, the split into chunks and train/val/test follow MXNet's tools/im2rec.py, so a
   list made here packs the same way there; the shuffle uses recio's RNG so a seed means one order
   on every host. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "pack.h"
#include "walk.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct list_opts {
    const char *exts; /* comma-separated, lower case, with dots */
    char *exts_owned; /* exts when made from --exts */
    int recursive, shuffle, force;
    const char *mask_root; /* segmentation: each image's mask is MASK_ROOT/its path with .png */
    unsigned long long seed, chunks;
    double train, test;
} list_opts;

/* With --mask-root: each image's mask is the same path under the mask folder with the extension
   .png (images/a/b.jpg -> masks/a/b.png, the layout of ADE20K, Cityscapes-style and VOC-style sets:
   grey or palette PNGs); an image without one is left out, and said so. Indices stay the
   walk's, so they still name the same images as a list made without masks. */
static int find_masks(const char *mask_root, list_item *items, size_t *n) {
    size_t i, k = 0;
    for (i = 0; i < *n; i++) {
        char *dot = strrchr(items[i].path, '.'), *slash = strrchr(items[i].path, '/'), *stem, *full;
        struct stat st;
        if (dot && slash && dot < slash) dot = NULL;
        if ((stem = pack_cat(items[i].path, "")) != NULL && dot) stem[dot - items[i].path] = 0;
        items[i].mask = stem ? pack_cat(stem, ".png") : NULL;
        full = items[i].mask ? pack_join(mask_root, items[i].mask) : NULL;
        free(stem);
        if (!full) { /* the rest go too, so the caller frees each item once */
            for (; i < *n; i++) free(items[i].path), free(items[i].mask);
            *n = k;
            return cli_err("out of memory"), -1;
        }
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            items[k++] = items[i];
        } else {
            cli_err("%s: no mask for %s: skipped", full, items[i].path);
            free(items[i].path), free(items[i].mask);
        }
        free(full);
    }
    *n = k;
    return 0;
}

/* The lists of one run, committed together: all or none. */
typedef struct list_outs {
    cli_out *out; /* grown while the lists are made; committed after, so nothing points into it yet */
    size_t n, cap;
    int force;
} list_outs;

/* A list's lines, kept for commit_lists (each list gets a temporary file of its own, so two lists to
   one name never mix, then is renamed); 0 or the exit status. */
static int write_list(list_outs *lo, const char *path, const list_item *items, size_t n) {
    cli_out *o;
    size_t i;
    int rc;
    if (lo->n == lo->cap) {
        cli_out *m = (cli_out *)realloc(lo->out, (lo->cap = 2 * lo->cap + 4) * sizeof *m);
        if (!m) return cli_err("out of memory"), CLI_EXIT_ERR;
        lo->out = m;
    }
    if ((rc = cli_out_claim(o = &lo->out[lo->n], path, CLI_KIND_LST, NULL, 0, lo->force)) != 0) return rc;
    if (!(o->path = pack_cat(path, ""))) return cli_out_free(o), cli_err("out of memory"), CLI_EXIT_ERR;
    lo->n++;
    /* im2rec writes '%d\t' % index, '%f\t' % label, '%s\n' % path */
    for (i = 0; i < n; i++) /* and the mask column for recio pack --mask-root */
        cli_out_printf(o, "%llu\t%f\t%s%s%s\n", items[i].index, (double)items[i].label, items[i].path, items[i].mask ? "\t" : "",
                       items[i].mask ? items[i].mask : "");
    return 0;
}

static int write_named(list_outs *lo, const char *prefix, const char *chunk, const char *part, const list_item *items, size_t n) {
    char name[4096];
    if ((size_t)snprintf(name, sizeof name, "%s%s%s.lst", prefix, chunk, part) >= sizeof name)
        return cli_err("%s: name too long", prefix), CLI_EXIT_ERR;
    return write_list(lo, name, items, n);
}

/* im2rec's split: per chunk of ceil(N / chunks) images, the first test part, then train, then val
   (sizes from the chunk size, not the chunk's length, exactly as im2rec computes them). */
static int write_chunks(list_outs *lo, const char *prefix, const list_opts *o, const list_item *items, size_t n) {
    size_t size = (n + o->chunks - 1) / o->chunks, c;
    int rc = 0;
    for (c = 0; c < o->chunks && !rc; c++) {
        size_t b = c * size < n ? c * size : n, e = b + size < n ? b + size : n, len = e - b;
        size_t sep = (size_t)((double)size * o->train), sep_test = (size_t)((double)size * o->test);
        char chunk[32] = "";
        if (o->chunks > 1) snprintf(chunk, sizeof chunk, "_%llu", (unsigned long long)c);
        if (sep_test > len) sep_test = len;
        if (sep_test + sep > len) sep = len - sep_test;
        if (o->train == 1.0) {
            rc = write_named(lo, prefix, chunk, "", items + b, len);
            continue;
        }
        if (o->test > 0) rc = write_named(lo, prefix, chunk, "_test", items + b, sep_test);
        if (!rc && o->train + o->test < 1.0) rc = write_named(lo, prefix, chunk, "_val", items + b + sep_test + sep, len - sep_test - sep);
        if (!rc) rc = write_named(lo, prefix, chunk, "_train", items + b + sep_test, sep);
    }
    return rc;
}

/* Every list in place, all or none; each said on stderr. */
static int commit_lists(list_outs *lo) {
    cli_out **group = (cli_out **)malloc((lo->n ? lo->n : 1) * sizeof *group);
    size_t i;
    int rc;
    if (!group) return cli_err("out of memory"), -1;
    for (i = 0; i < lo->n; i++) group[i] = &lo->out[i];
    rc = cli_out_commit_all(group, lo->n);
    free(group);
    if (rc) return -1;
    for (i = 0; i < lo->n; i++) {
        size_t k, lines = 0;
        for (k = 0; k < lo->out[i].n; k++) lines += lo->out[i].buf[k] == '\n';
        fprintf(stderr, "%s: %llu images\n", lo->out[i].path, (unsigned long long)lines);
    }
    return 0;
}

static void shuffle(list_item *items, size_t n, unsigned long long seed) {
    recio_rng rng;
    size_t i;
    rng.state = seed;
    for (i = n; i > 1; i--) { /* Fisher-Yates from the end */
        size_t j = (size_t)recio_rng_below(&rng, i);
        list_item t = items[i - 1];
        items[i - 1] = items[j];
        items[j] = t;
    }
}

static const char list_help[] =
    "usage: recio list [OPTIONS] PREFIX ROOT\n\n"
    "Find the images under ROOT and write PREFIX.lst, one 'index<TAB>label<TAB>path' line each (path\n"
    "relative to ROOT), the list file MXNet's im2rec writes and 'recio pack' reads.\n\n"
    "  --recursive          walk sub-folders: every folder holding images gets a label, 0, 1, 2, ...\n"
    "                       in sorted path order; the label map ('folder<TAB>label') goes to stdout\n"
    "                       (without it: only ROOT's own files, all with label 0)\n"
    "  --exts LIST          file extensions, comma-separated or as separate words (im2rec's\n"
    "                       '--exts .jpg .png'); default .jpeg,.jpg,.png; any case\n"
    "  --shuffle            shuffle the list (default) with recio's RNG seeded by --seed\n"
    "  --no-shuffle         keep the sorted walk order\n"
    "  --seed S             shuffle seed (default 100, as im2rec); same seed, same list everywhere\n"
    "  --train-ratio R      fraction for PREFIX_train.lst, 0..1 (default 1: one PREFIX.lst)\n"
    "  --test-ratio R       fraction for PREFIX_test.lst, 0..1 (default 0); the rest goes to\n"
    "                       PREFIX_val.lst (the two add up to at most 1)\n"
    "  --chunks N           split into N lists PREFIX_0.lst ..., 1..65536 (default 1)\n"
    "  --mask-root DIR      segmentation: each image's label mask is DIR/its path with .png\n"
    "                       (images/a/b.jpg -> DIR/a/b.png); lines become 'index<TAB>label<TAB>\n"
    "                       path<TAB>mask' for 'recio pack --mask-root DIR' (im2rec cannot read\n"
    "                       them); an image without a mask is left out with a message\n"
    "  --force              replace an existing PREFIX*.lst that is not an im2rec list\n\n"
    "The index of an image is its position in the walk, before shuffling, so it names the image in\n"
    "every split. Progress and counts go to stderr. A file or folder whose name holds a tab or a line\n"
    "break cannot be written in a .lst line: it is skipped with a message. The lists are written whole,\n"
    "all or none (temporary files renamed); an existing list is replaced, any other file only with\n"
    "--force.\n\n"
    "example: recio list --recursive --train-ratio 0.9 data/train images/   # -> data/train_train.lst, _val.lst\n";

/* --exts .jpg,.png, or im2rec's form --exts .jpg .png: the words after --exts that look like
   extensions (a dot, no slash, short) join the list. */
static int exts_arg(int argc, char **argv, int *i, list_opts *o) {
    char *all = pack_cat(argv[++*i], ""), *t;
    while (all && *i + 1 < argc && argv[*i + 1][0] == '.' && !strchr(argv[*i + 1], '/') && strlen(argv[*i + 1]) <= 8) {
        t = pack_cat(all, ",");
        free(all);
        all = t ? pack_cat(t, argv[++*i]) : NULL;
        free(t);
    }
    if (!all) return -1;
    free(o->exts_owned);
    o->exts = o->exts_owned = all;
    return 0;
}

/* Each chunk is a list written, empty or not (as im2rec): more than this is a mistake, and
   2^64-1 chunks ran for ever. */
#define LIST_MAX_CHUNKS 65536

static int parse_list_args(int argc, char **argv, list_opts *o, const char **prefix, const char **root) {
    int i, rc;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x;
        if (strcmp(a, "--recursive") == 0) o->recursive = 1;
        else if (strcmp(a, "--shuffle") == 0) o->shuffle = 1;
        else if (strcmp(a, "--no-shuffle") == 0) o->shuffle = 0;
        else if (strcmp(a, "--force") == 0) o->force = 1;
        else if (strcmp(a, "--exts") == 0 && v) {
            if (exts_arg(argc, argv, &i, o)) return cli_err("out of memory"), CLI_EXIT_ERR;
        }
        else if (strcmp(a, "--seed") == 0) {
            if (!v) return cli_usage_error("list", "--seed needs a value");
            if (cli_parse_u64(argv[++i], &o->seed)) return cli_usage_error("list", "bad value '%s' for --seed: a whole number from 0 to %llu", v, ~0ull);
        } else if (strcmp(a, "--chunks") == 0) {
            if ((rc = cli_int_opt("list", a, v, 1, LIST_MAX_CHUNKS, &x)) != 0) return rc;
            o->chunks = (unsigned long long)x, i++;
        } else if (strcmp(a, "--train-ratio") == 0 || strcmp(a, "--test-ratio") == 0) {
            double *r = strcmp(a, "--train-ratio") == 0 ? &o->train : &o->test;
            if ((rc = cli_real_opt("list", a, v, 0, 1, r)) != 0) return rc;
            i++;
        } else if (strcmp(a, "--mask-root") == 0 && v) {
            o->mask_root = argv[++i];
        } else if (a[0] == '-' && a[1]) return cli_usage_error("list", "unknown option '%s'", a);
        else if (!*prefix) *prefix = a;
        else if (!*root) *root = a;
        else return cli_usage_error("list", "unexpected argument '%s'", a);
    }
    if (!*prefix || !*root) return cli_usage_error("list", "want PREFIX and ROOT");
    if (o->train + o->test > 1.0) return cli_usage_error("list", "--train-ratio plus --test-ratio is more than 1");
    return 0;
}

CLI_COMMAND(cli_cmd_list) {
    list_opts o;
    list_outs lo;
    const char *prefix = NULL, *root = NULL;
    list_item *items;
    size_t n, i;
    int rc, k;
    for (k = 1; k < argc; k++)
        if (cli_is_help(argv[k])) return fputs(list_help, stdout), 0;
    memset(&o, 0, sizeof o);
    o.exts = ".jpeg,.jpg,.png";
    o.shuffle = 1;
    o.seed = 100;
    o.chunks = 1;
    o.train = 1.0;
    if ((rc = parse_list_args(argc, argv, &o, &prefix, &root)) != 0) return free(o.exts_owned), rc;
    rc = walk_collect(root, o.recursive, o.exts, &items, &n, stdout) ? CLI_EXIT_ERR : 0;
    fflush(stdout); /* the label map before any message on stderr */
    if (!rc && o.mask_root && find_masks(o.mask_root, items, &n)) rc = CLI_EXIT_ERR;
    if (!rc && n == 0) cli_err("%s: no files ending in %s%s", root, o.exts, o.recursive ? "" : " (sub-folders need --recursive)");
    if (!rc && o.shuffle) shuffle(items, n, o.seed);
    memset(&lo, 0, sizeof lo);
    lo.force = o.force;
    if (!rc && (rc = write_chunks(&lo, prefix, &o, items, n)) == 0 && commit_lists(&lo)) rc = CLI_EXIT_ERR;
    for (i = 0; i < lo.n; i++) free((char *)lo.out[i].path), cli_out_free(&lo.out[i]);
    free(lo.out);
    for (i = 0; i < n; i++) free(items[i].path), free(items[i].mask);
    free(items);
    free(o.exts_owned);
    return rc;
}
