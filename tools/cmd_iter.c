/* recio iter: run the iterator over a dataset, one line per batch, throughput at the end. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include <string.h>
#include <stdlib.h>
#include <time.h>

static const char iter_help[] =
    "usage: recio iter URIS --spec SPEC --batch B [--workers N] [--seed S] [--epochs E]\n"
    "                  [--nsplit N --rank R] [--shuffle] [--last-batch pad|discard|roll_over]\n"
    "                  [--shuffle-buffer N] [--rotate] [--prefetch N] [--channels C] [--label-width N]\n"
    "                  [--checksum fast] [--no-checksum] [--skip-bad] [--quiet] [--labels]\n"
    "                  [--index] [--index-path IDX] [--shuffle-chunk N [--shuffle-window N]]\n"
    "                  [--equalize pad|drop] [--mmap|--no-mmap] [--seed-aug S] [--label-pad V]\n"
    "                  [--label-strict] [--detection] [--imglist LST] [--mean-img NPY [--mean-scale F]]\n"
    "                  [--cache-mb N]\n\n"
    "Run the training iterator over URIS ('a.rec;b.rec') and print one line per batch:\n"
    "  epoch<TAB>batch<TAB>count<TAB>pad<TAB>ids<TAB>checksum\n"
    "count = records in the batch, pad = padding items after them, ids = the image-header ids of all\n"
    "count+pad items (comma-separated), checksum = FNV-1a 64 (hex) of the batch tensor's bytes\n"
    "(recio_batch_checksum; float elements in little-endian order, so every host prints the same).\n"
    "On stderr at the end: 'N images in T s: R img/s'. The output is the same for every --workers;\n"
    "--workers 0 (the default) runs everything on one thread (pull mode).\n\n"
    "  --spec SPEC          transform chain per image (see 'recio apply --help'); end it with a fixed size\n"
    "  --batch B            images per batch (default 1)\n"
    "  --workers N          decode threads (default 0)          --prefetch N  batches in flight\n"
    "  --seed S             shuffles and random augmentation    --epochs E    default 1\n"
    "  --nsplit N --rank R  read part R of N, as dmlc-core splits\n"
    "  --shuffle            a new global order every epoch (uses each file's .idx)\n"
    "  --shuffle-buffer N   streaming shuffle through N records (no .idx needed)\n"
    "  --rotate             epoch e reads part (R + e) % N      --last-batch  default pad\n"
    "  --channels C         decode to 1, 3 or 4 (default 3)     --label-width labels per image (default 1)\n"
    "  --checksum fast      a checksum that costs little next to decoding: FNV-1a 64 over each item's\n"
    "                       recio_checksum (64 lanes, a word at a time), computed by the workers while\n"
    "                       the item is in cache (RECIO_SUM_ITEMS). The byte-by-byte default\n"
    "                       costs about as much as decoding: use this (or --no-checksum) to time a pipeline\n"
    "  --no-checksum        print '-' for the checksum\n"
    "  --skip-bad           leave out records whose image does not decode instead of stopping: the\n"
    "                       batch's sound items move up and the places freed at its end are padding\n"
    "                       (the pad column counts them); at the end 'recio: N records left out' and\n"
    "                       'recio: FILE: offset N: why' for the first few on stderr\n"
    "  --quiet              no batch lines, only the throughput\n"
    "  --labels             two more columns: each item's labels (items ';'-separated, labels ','-separated,\n"
    "                       %.9g, --label-width of them) and how many labels each record really has\n"
    "                       (more than --label-width: they were cut); with --detection a third, the\n"
    "                       objects of each item\n\n";

/* The rest of the help (C99 promises string literals of 4095 bytes only). */
static const char iter_help2[] =
    "Data set (MXNet ImageRecordIter / DALI readers.mxnet options, see docs/iter.md):\n"
    "  --index              partition by record count with each file's .idx (default: dmlc byte ranges)\n"
    "  --index-path IDX     one .idx over the whole list with global offsets (implies --index)\n"
    "  --shuffle-chunk N    bounded shuffle (MXNet shuffle_chunk_size): chunks of N records from the\n"
    "                       .idx, permuted, then shuffled again --shuffle-window chunks (default 16) at\n"
    "                       a time; memory: one offset per chunk. --shuffle is a full permutation\n"
    "  --equalize pad|drop  every part yields the same count per epoch (with an index): pad repeats a\n"
    "                       part's first records up to the largest part, drop stops at the smallest\n"
    "  --mmap, --no-mmap    map the files, or read them through a buffer (the default: what network\n"
    "                       file systems need; a file cut while mapped kills the process)\n"
    "  --seed-aug S         seed of the random augmentation only (MXNet seed_aug); default: --seed,\n"
    "                       which then also orders the shuffles\n"
    "Labels:\n"
    "  --label-pad V        value for labels a record does not have (default -1, MXNet's\n"
    "                       label_pad_value; --label-pad 0 pads with zeros)\n"
    "  --label-strict       a record with more labels than --label-width is an error (as MXNet)\n"
    "                       instead of being cut\n"
    "  --detection          labels are MXNet's detection layout [A, B, header, objects of B floats]:\n"
    "                       checked, cut at whole objects; --label-width is then ImageDetRecordIter's\n"
    "                       label_pad_width (header + objects x B)\n"
    "  --imglist LST        labels from this .lst (im2rec's list) replace the records', matched by\n"
    "                       image id = the .lst index (MXNet path_imglist); a record without a line fails\n"
    "  --mean-img NPY       subtract this per-pixel mean (float32 .npy shaped as the item, (C,H,W) or\n"
    "                       (H,W,C); 'recio mean' makes one) after the whole chain, which must end in\n"
    "                       float (e.g. 'center_crop(224) float chw'), then multiply by --mean-scale\n"
    "Cache (MindSpore's single-node cache; docs/iter.md, Cache):\n"
    "  --cache-mb N         keep up to N MiB of decoded images in memory (0, the default: off): per\n"
    "                       record, the output of the chain's ops before its first random op (the\n"
    "                       whole item when none is random), made once and never evicted; later\n"
    "                       epochs skip the decode. The same batches as without it. On stderr: each\n"
    "                       epoch's img/s and what was kept, or why this chain cannot be cut (it\n"
    "                       starts with a random op, or a resize after its first random op would\n"
    "                       change how the JPEG is decoded)\n\n"
    "example: recio iter train.rec --spec 'resize_short(256) center_crop(224) normalize(imagenet) chw' \\\n"
    "             --batch 32 --workers 2 --epochs 1 | head\n";

typedef enum { SUM_BYTES, SUM_FAST, SUM_NONE } sum_kind;

typedef struct iter_opts {
    recio_iter_desc d;
    unsigned long long epochs, cache_mb;
    int quiet, labels;
    sum_kind sum;
} iter_opts;


/* --labels: each item's labels, the records' real counts, and (detection) their objects. */
static void print_labels(const recio_batch *b) {
    unsigned i, j, n = b->count + b->pad;
    for (i = 0; i < n; i++)
        for (j = 0; j < b->label_width; j++) printf("%s%.9g", j ? "," : i ? ";" : "\t", (double)b->labels[i * b->label_width + j]);
    for (i = 0; i < n; i++) printf(i ? ",%u" : "\t%u", b->label_counts[i]);
    for (i = 0; b->objects && i < n; i++) printf(i ? ",%u" : "\t%u", b->objects[i]);
}

static void print_batch(const recio_batch *b, sum_kind sum, int labels) {
    unsigned i;
    printf("%llu\t%llu\t%u\t%u\t", (unsigned long long)b->epoch, (unsigned long long)b->index, b->count, b->pad);
    for (i = 0; i < b->count + b->pad; i++) printf(i ? ",%llu" : "%llu", (unsigned long long)b->ids[i]);
    if (sum == SUM_NONE) printf("\t-");
    else printf("\t%016llx", (unsigned long long)recio_batch_checksum(b, sum == SUM_FAST ? RECIO_SUM_ITEMS : RECIO_SUM_BYTES));
    if (labels) print_labels(b);
    putchar('\n');
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One numeric option: value into *v, within [lo, hi]. Returns 0, or the usage exit status. */
static int num_opt(int argc, char **argv, int *i, unsigned long long lo, unsigned long long hi, unsigned long long *v) {
    const char *name = argv[*i];
    if (*i + 1 >= argc) return cli_usage_error("iter", "%s needs a value", name);
    if (cli_parse_u64(argv[++*i], v) || *v < lo || *v > hi) return cli_usage_error("iter", "bad value '%s' for %s: a whole number from %llu to %llu", argv[*i], name, lo, hi);
    return 0;
}

/* --channels: what a decode makes, 1, 3 or 4 (2, grey and alpha, is not one). 0, or the usage exit status. */
static int channels_opt(int argc, char **argv, int *i, int *c) {
    unsigned long long v;
    if (*i + 1 >= argc) return cli_usage_error("iter", "--channels needs a value");
    if (cli_parse_u64(argv[++*i], &v) || (v != 1 && v != 3 && v != 4))
        return cli_usage_error("iter", "bad value '%s' for --channels: 1, 3 or 4", argv[*i]);
    *c = (int)v;
    return 0;
}

static int last_batch_opt(const char *s, recio_last_batch *lb) {
    if (strcmp(s, "pad") == 0) *lb = RECIO_LAST_PAD;
    else if (strcmp(s, "discard") == 0) *lb = RECIO_LAST_DISCARD;
    else if (strcmp(s, "roll_over") == 0) *lb = RECIO_LAST_ROLL_OVER;
    else return -1;
    return 0;
}

/* A float option into *f (cli_parse_real: no space, '+', hex, nan or inf). Returns 0, or the usage exit status. */
static int float_opt(int argc, char **argv, int *i, float *f) {
    double v;
    int rc = cli_real_opt("iter", argv[*i], *i + 1 < argc ? argv[*i + 1] : NULL, -3.4e38, 3.4e38, &v);
    if (rc) return rc;
    ++*i;
    *f = (float)v;
    return 0;
}

/* The flags, one function per sub-desc of recio_iter_desc (and one for this command's own): each
   returns 1 when argv[*i] is not one of its flags, else 0 or the usage exit status. A new iterator
   option is one line in its sub-desc's function. */
#define IS(name) (strcmp(a, name) == 0)
#define NUM(name, lo, hi, dst) if (IS(name)) return (rc = num_opt(argc, argv, i, lo, hi, &v)) ? rc : ((dst) = v, 0)

/* The dataset: which files and part (top level) and how the split reads them (desc.source). */
static int source_opt(int argc, char **argv, int *i, recio_iter_desc *d) {
    const char *a = argv[*i];
    unsigned long long v;
    int rc, has = *i + 1 < argc;
    recio_split_desc *s = &d->source;
    NUM("--seed", 0, ~0ull, s->seed);
    NUM("--nsplit", 1, 1u << 20, d->nsplit);
    NUM("--rank", 0, 1u << 20, d->rank);
    NUM("--shuffle-chunk", 1, 1u << 30, s->chunk_records);
    NUM("--shuffle-window", 1, 1u << 20, s->window_chunks);
    if (IS("--rotate")) d->rotate_shards = 1;
    else if (IS("--shuffle")) s->shuffle = RECIO_SHUFFLE_FULL, s->mode = RECIO_SPLIT_INDEX;
    else if (IS("--index")) s->mode = RECIO_SPLIT_INDEX;
    else if (IS("--index-path") && has) s->index_path = argv[++*i];
    else if (IS("--mmap")) s->use_mmap = 1;
    else if (IS("--no-mmap")) s->use_mmap = 0;
    else if (IS("--equalize") && has) {
        const char *w = argv[++*i];
        if (strcmp(w, "pad") == 0) s->equalize = RECIO_EQUALIZE_PAD;
        else if (strcmp(w, "drop") == 0) s->equalize = RECIO_EQUALIZE_DROP;
        else return cli_usage_error("iter", "--equalize is pad or drop, not '%s'", w);
        s->mode = RECIO_SPLIT_INDEX;
    } else return 1;
    return 0;
}

/* What a record becomes (desc.item). */
static int item_opt(int argc, char **argv, int *i, recio_iter_item_desc *it) {
    const char *a = argv[*i];
    unsigned long long v;
    int rc, has = *i + 1 < argc;
    NUM("--seed-aug", 1, ~0ull, it->seed_aug);
    if (IS("--channels")) return channels_opt(argc, argv, i, &it->channels);
    if (IS("--mean-scale")) return float_opt(argc, argv, i, &it->mean_scale);
    if (IS("--spec") && has) it->spec = argv[++*i];
    else if (IS("--mean-img") && has) it->mean_img = argv[++*i];
    else return 1;
    return 0;
}

/* desc.labels */
static int labels_opt(int argc, char **argv, int *i, recio_iter_label_desc *l) {
    const char *a = argv[*i];
    unsigned long long v;
    int rc, has = *i + 1 < argc;
    NUM("--label-width", 1, 1u << 16, l->width);
    if (IS("--label-pad")) return l->pad_set = 1, float_opt(argc, argv, i, &l->pad_value);
    if (IS("--imglist") && has) l->imglist = argv[++*i];
    else if (IS("--label-strict")) l->strict = 1;
    else if (IS("--detection")) l->detection = 1;
    else return 1;
    return 0;
}

/* desc.run (--cache-mb is in MiB: o->cache_mb, made bytes after the loop) */
static int run_opt(int argc, char **argv, int *i, iter_opts *o) {
    const char *a = argv[*i];
    unsigned long long v;
    int rc;
    recio_iter_run_desc *r = &o->d.run;
    NUM("--batch", 1, 1u << 24, r->batch);
    NUM("--workers", 0, 256, r->workers);
    NUM("--shuffle-buffer", 0, 1u << 24, r->shuffle_buffer);
    NUM("--prefetch", 1, 4096, r->prefetch);
    NUM("--cache-mb", 0, (unsigned long long)(SIZE_MAX >> 20), o->cache_mb);
    if (IS("--last-batch") && *i + 1 < argc) {
        if (last_batch_opt(argv[++*i], &r->last_batch)) return cli_usage_error("iter", "--last-batch is pad, discard or roll_over, not '%s'", argv[*i]);
    } else if (IS("--skip-bad")) r->skip_bad = 1;
    else return 1;
    return 0;
}

/* This command's own: epochs and what it prints. */
static int own_opt(int argc, char **argv, int *i, iter_opts *o) {
    const char *a = argv[*i];
    unsigned long long v;
    int rc;
    NUM("--epochs", 0, ~0ull, o->epochs);
    if (IS("--quiet")) o->quiet = 1;
    else if (IS("--labels")) o->labels = 1;
    else if (IS("--no-checksum")) o->sum = SUM_NONE;
    else if (IS("--checksum") && *i + 1 < argc) {
        if (strcmp(argv[++*i], "fast") == 0) o->sum = SUM_FAST;
        else if (strcmp(argv[*i], "bytes") == 0) o->sum = SUM_BYTES;
        else return cli_usage_error("iter", "--checksum is fast or bytes, not '%s'", argv[*i]);
    } else return 1;
    return 0;
}
#undef NUM
#undef IS

/* One argument: a flag of one of the groups, or URIS. 0, or the usage exit status. */
static int one_arg(int argc, char **argv, int *i, iter_opts *o) {
    const char *a = argv[*i];
    int k;
    if ((k = source_opt(argc, argv, i, &o->d)) != 1 || (k = item_opt(argc, argv, i, &o->d.item)) != 1 ||
        (k = labels_opt(argc, argv, i, &o->d.labels)) != 1 || (k = run_opt(argc, argv, i, o)) != 1 || (k = own_opt(argc, argv, i, o)) != 1)
        return k;
    if (a[0] == '-' && a[1]) return cli_usage_error("iter", "unknown option '%s'", a);
    if (o->d.uris) return cli_usage_error("iter", "one URIS argument ('a.rec;b.rec' for several files)");
    o->d.uris = a;
    return 0;
}

static int parse(int argc, char **argv, iter_opts *o) {
    int i, rc = 0;
    recio_split_desc *s = &o->d.source;
    memset(o, 0, sizeof *o);
    o->epochs = 1;
    for (i = 1; i < argc && !rc; i++) {
        if (cli_is_help(argv[i])) return fputs(iter_help, stdout), fputs(iter_help2, stdout), -1;
        rc = one_arg(argc, argv, &i, o);
    }
    if (rc) return rc;
    o->d.run.cache_bytes = (size_t)o->cache_mb << 20;
    if (s->chunk_records) {
        if (s->shuffle) return cli_usage_error("iter", "--shuffle (full) or --shuffle-chunk N (bounded), not both");
        s->shuffle = RECIO_SHUFFLE_CHUNK, s->mode = RECIO_SPLIT_INDEX;
    } else if (s->window_chunks) return cli_usage_error("iter", "--shuffle-window goes with --shuffle-chunk");
    if (!o->d.uris) return cli_usage_error("iter", "which dataset?");
    if (!o->d.item.spec) return cli_usage_error("iter", "--spec is required (e.g. --spec 'resize(224,224)')");
    if (o->quiet) o->sum = SUM_NONE; /* nothing prints them */
    o->d.run.checksums = o->sum == SUM_FAST; /* the workers checksum items while they are hot */
    if (o->d.nsplit && o->d.rank >= o->d.nsplit) return cli_usage_error("iter", "--rank must be below --nsplit");
    return 0;
}

/* --skip-bad: how many records were left out, and which (the first few), as errors are named. */
static void report_skipped(const recio_iter_info *info) {
    unsigned i;
    if (!info->skipped) return;
    cli_err("%llu records left out, their images do not decode (--skip-bad; counted in every epoch); %s:",
            (unsigned long long)info->skipped, info->nbad == RECIO_ITER_BAD_KEEP ? "the first of them" : "they are");
    for (i = 0; i < info->nbad; i++)
        cli_err("%s: offset %llu: %s", info->bad[i].file, (unsigned long long)info->bad[i].offset, info->bad[i].what);
}

/* --cache-mb: what the cache kept, or why it kept nothing. */
static void report_cache(const recio_iter_info *info) {
    const recio_iter_cache_info ci = info->cache;
    if (ci.mode == RECIO_CACHE_OFF) {
        cli_err("cache off: %s", ci.why);
        return;
    }
    if (ci.mode == RECIO_CACHE_ITEMS) fprintf(stderr, "cache: finished items (no op is random): ");
    else fprintf(stderr, "cache: the output of the first %u ops: ", ci.prefix_ops);
    fprintf(stderr, "%llu records in %.1f MiB, %llu hits, %llu misses\n", (unsigned long long)ci.records, ci.bytes / 1048576.0,
            (unsigned long long)ci.hits, (unsigned long long)ci.misses);
}

static int run(recio_iter *it, const iter_opts *o) {
    recio_iter_info info;
    recio_batch b;
    recio_err e = RECIO_OK;
    unsigned long long ep, images = 0, before;
    double t0 = now_s(), dt, te;
    for (ep = 0; ep < o->epochs; ep++) {
        if (ep && (e = recio_iter_reset(it)) != RECIO_OK) break;
        te = now_s(), before = images;
        while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
            images += b.count;
            if (!o->quiet) print_batch(&b, o->sum, o->labels);
        }
        if (e != RECIO_END) break;
        if (o->cache_mb && (dt = now_s() - te) > 0) /* epoch 2 on: from the cache */
            fprintf(stderr, "epoch %llu: %llu images in %.3f s: %.1f img/s\n", ep, images - before, dt, (images - before) / dt);
    }
    fflush(stdout);
    if (e != RECIO_END && e != RECIO_OK) {
        cli_err("%s", recio_iter_errmsg(it)[0] ? recio_iter_errmsg(it) : recio_strerror(e));
        return CLI_EXIT_ERR;
    }
    dt = now_s() - t0;
    fprintf(stderr, "%llu images in %.3f s: %.1f img/s\n", images, dt, dt > 0 ? images / dt : 0.0);
    recio_iter_stats(it, &info);
    if (o->cache_mb) report_cache(&info);
    report_skipped(&info);
    return 0;
}

CLI_COMMAND(cli_cmd_iter) {
    iter_opts o;
    recio_iter *it = NULL;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = cli_open_iter(&it, &o.d)) != 0) return rc;
    rc = run(it, &o);
    recio_iter_close(it);
    return rc;
}
