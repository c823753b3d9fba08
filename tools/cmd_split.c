/* recio split: the records of one part of a dataset split across workers. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

static const char split_help[] =
    "usage: recio split --nsplit N --rank R [OPTIONS] 'a.rec;b.rec;...'\n\n"
    "Print the records of part R of N, in the order worker R reads them, one line each:\n"
    "file<TAB>ordinal<TAB>offset<TAB>length (ordinal and offset within that file).\n"
    "The list is ';'-separated; wildcards and directories (their *.rec files) expand in sorted order.\n"
    "By default the parts are dmlc-core's byte ranges (InputSplit 'recordio'), record for record.\n\n"
    "  --index            split by record count using each file's .idx (dmlc's 'indexed_recordio')\n"
    "  --index-file IDX   one index over the whole list, global offsets (implies --index)\n"
    "  --shuffle SEED     shuffle every record, a new order per epoch (implies --index)\n"
    "  --chunk K[,W]      with --shuffle: shuffle chunks of K records, then windows of W chunks\n"
    "                     (bounded memory; default K 256, W 16)\n"
    "  --epoch E          epoch of the shuffle (default 0)\n"
    "  --equalize pad|drop  every rank yields the same count: repeat own records, or drop\n"
    "  --bounds           print 'begin<TAB>end<TAB>count' of the part instead (global byte offsets)\n"
    "  --mmap             map the files instead of reading them (faster; a file cut short\n"
    "                     while mapped kills the process with SIGBUS)\n\n"
    "example: recio split --nsplit 4 --rank 1 'train-*.rec' | wc -l\n"
    "         recio split --nsplit 8 --rank 0 --shuffle 42 --epoch 3 --equalize pad data/\n";

static int opt_u64(const char *opt, const char *v, unsigned long long *out) {
    if (!v || cli_parse_u64(v, out)) return cli_usage_error("split", "%s needs a whole number", opt);
    return 0;
}

/* --chunk K[,W]: whole numbers from 1 to 2^32-1, of any length (leading zeros too). */
static int parse_chunk(const char *v, recio_split_desc *d) {
    unsigned long long k = 0, w = 0;
    char *kbuf = v ? (char *)malloc(strlen(v) + 1) : NULL, *comma;
    int bad;
    if (!kbuf) return -1;
    strcpy(kbuf, v);
    if ((comma = strchr(kbuf, ',')) != NULL) *comma++ = 0;
    bad = cli_parse_u64(kbuf, &k) || k == 0 || k > 0xffffffffu || (comma && (cli_parse_u64(comma, &w) || w == 0 || w > 0xffffffffu));
    free(kbuf);
    if (bad) return -1;
    d->chunk_records = (uint32_t)k;
    d->window_chunks = (uint32_t)w;
    return 0;
}

static int print_part(recio_split *s) {
    recio_record rec;
    recio_split_info info;
    const recio_split_where *w = &info.where;
    recio_err e;
    while ((e = recio_split_next(s, &rec)) == RECIO_OK && (e = recio_split_query(s, &info)) == RECIO_OK) {
        printf("%s\t", w->path);
        if (w->ordinal == RECIO_SPLIT_UNKNOWN) fputs("?", stdout);
        else printf("%llu", (unsigned long long)w->ordinal);
        printf("\t%llu\t%llu\n", (unsigned long long)rec.offset, (unsigned long long)rec.size);
    }
    fflush(stdout);
    if (e == RECIO_END) return 0;
    cli_err("%s", recio_split_errmsg(s));
    return CLI_EXIT_ERR;
}

CLI_COMMAND(cli_cmd_split) {
    recio_split_desc d;
    recio_split *s = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    unsigned long long nsplit = 0, rank = 0, v;
    int i, have_n = 0, have_r = 0, bounds = 0, rc;
    const char *uris = NULL;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.ordinals = 1;
    d.errmsg = msg;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) return fputs(split_help, stdout), 0;
        if (strcmp(a, "--nsplit") == 0) {
            if (opt_u64(a, next, &nsplit)) return CLI_EXIT_USAGE;
            have_n = 1, i++;
        } else if (strcmp(a, "--rank") == 0) {
            if (opt_u64(a, next, &rank)) return CLI_EXIT_USAGE;
            have_r = 1, i++;
        } else if (strcmp(a, "--shuffle") == 0 || strcmp(a, "--epoch") == 0) {
            if (opt_u64(a, next, &v)) return CLI_EXIT_USAGE;
            if (a[2] == 's') d.seed = v, d.shuffle = d.shuffle ? d.shuffle : RECIO_SHUFFLE_FULL;
            else d.epoch = v;
            i++;
        } else if (strcmp(a, "--chunk") == 0) {
            if (parse_chunk(next, &d)) return cli_usage_error("split", "--chunk needs K or K,W (whole numbers > 0)");
            d.shuffle = RECIO_SHUFFLE_CHUNK, i++;
        } else if (strcmp(a, "--equalize") == 0) {
            if (next && strcmp(next, "pad") == 0) d.equalize = RECIO_EQUALIZE_PAD;
            else if (next && strcmp(next, "drop") == 0) d.equalize = RECIO_EQUALIZE_DROP;
            else return cli_usage_error("split", "--equalize takes pad or drop");
            i++;
        } else if (strcmp(a, "--index-file") == 0 && next) d.index_path = next, i++;
        else if (strcmp(a, "--index") == 0) d.mode = RECIO_SPLIT_INDEX;
        else if (strcmp(a, "--bounds") == 0) bounds = 1;
        else if (strcmp(a, "--mmap") == 0) d.use_mmap = 1;
        else if (a[0] == '-' && a[1]) return cli_usage_error("split", "unknown option '%s'", a);
        else if (uris) return cli_usage_error("split", "one list of files (join them with ';')");
        else uris = a;
    }
    if (!uris) return cli_usage_error("split", "which files?");
    if (!have_n || !have_r) return cli_usage_error("split", "--nsplit and --rank are required");
    if (nsplit == 0 || nsplit > 0xffffffffu) return cli_usage_error("split", "--nsplit must be from 1 to 4294967295, not %llu", nsplit);
    if (rank >= nsplit) return cli_usage_error("split", "--rank must be below --nsplit (0..%llu)", nsplit - 1);
    e = recio_split_open_desc(&s, uris, (unsigned)rank, (unsigned)nsplit, &d);
    if (e != RECIO_OK) {
        cli_err("%s", msg);
        return CLI_EXIT_ERR;
    }
    if (bounds) {
        recio_split_info info;
        recio_split_query(s, &info);
        printf("%llu\t%llu\t", (unsigned long long)info.begin, (unsigned long long)info.end);
        if (info.count == RECIO_SPLIT_UNKNOWN) puts("?");
        else printf("%llu\n", (unsigned long long)info.count);
        rc = 0;
    } else {
        rc = print_part(s);
    }
    recio_split_close(s);
    return rc;
}
