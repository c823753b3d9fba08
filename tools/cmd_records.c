/* recio dump / verify / index: the RecordIO commands. */
#include "cli.h"
#include "pack_codec.h"
#include "pack.h"
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>

/* After the loop: RECIO_END is success, anything else is reported with the reader's detail. */
static int reader_result(recio_reader *r, recio_err e) {
    if (e == RECIO_END) return 0;
    cli_err("%s", recio_reader_errmsg(r));
    return -1;
}

static void print_header(const recio_irecord *ir) {
    uint32_t i;
    for (i = 0; i < ir->nlabels; i++)
        printf(i ? ",%.9g" : "%.9g", (double)recio_load_f32le((const char *)ir->all_labels + 4 * (size_t)i));
    printf("\t%llu\t%llu\t%llu\n", (unsigned long long)ir->id, (unsigned long long)ir->id2,
           (unsigned long long)ir->image_size);
}

static const char dump_help[] =
    "usage: recio dump [--header] FILE.rec\n\n"
    "Print one line per record: ordinal<TAB>offset<TAB>length, where offset is the byte offset of\n"
    "the record's first header and length the payload size (parts joined).\n\n"
    "  --header   also read the MXNet image record header and print\n"
    "             ordinal offset length flag labels id id2 image_length\n"
    "             (labels comma-separated, %.9g: the header label when flag is 0, else the\n"
    "             flag labels that follow the header)\n\n"
    "example: recio dump --header train.rec | head\n";

CLI_COMMAND(cli_cmd_dump) {
    int i, header = 0, rc = 0;
    const char *path = NULL;
    recio_reader *r;
    recio_record rec;
    recio_err e;
    uint64_t n = 0;
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(dump_help, stdout), 0;
        if (strcmp(argv[i], "--header") == 0) header = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("dump", "unknown option '%s'", argv[i]);
        else if (path) return cli_usage_error("dump", "one file at a time");
        else path = argv[i];
    }
    if (!path) return cli_usage_error("dump", "which file?");
    if (cli_open_reader(&r, path)) return CLI_EXIT_ERR;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        printf("%llu\t%llu\t%llu", (unsigned long long)n, (unsigned long long)rec.offset, (unsigned long long)rec.size);
        if (header) {
            recio_irecord ir;
            if (recio_irecord_unpack(&ir, rec.data, rec.size) != RECIO_OK) {
                putchar('\n');
                fflush(stdout);
                cli_err("%s: offset %llu: record of %llu bytes is too short for its image header", path,
                        (unsigned long long)rec.offset, (unsigned long long)rec.size);
                rc = CLI_EXIT_ERR;
                break;
            }
            printf("\t%u\t", (unsigned)ir.flag);
            print_header(&ir);
        } else {
            putchar('\n');
        }
        n++;
    }
    fflush(stdout);
    if (!rc && reader_result(r, e)) rc = CLI_EXIT_ERR;
    recio_reader_close(r);
    return rc;
}

static const char verify_help[] =
    "usage: recio verify [--decode [--skip-empty]] [--all] FILE.rec...\n\n"
    "Read every record of each file strictly: magic, lengths, part sequence, padding to the end.\n"
    "Prints 'FILE: N records, B payload bytes, ok' per sound file (B: the records' data, without\n"
    "headers and padding) and exits 0 when all are sound; otherwise prints 'recio: FILE: offset N:\n"
    "what' for the first record that cannot be read and exits 1.\n\n"
    "  --decode   also read each record's image header and decode its image in full, as the\n"
    "             iterator will, and a segmentation record's mask (an 8-bit grey or a palette\n"
    "             PNG of the image's size): every record that fails is named ('recio: FILE:\n"
    "             offset N: decode: why' or '... mask: why'), the check goes on to the next, and\n"
    "             the exit status is 1\n"
    "  --skip-empty  with --decode: a record whose image is empty (0 bytes after the image header:\n"
    "             insightface's record 0 and identity records) is counted as 'without an image',\n"
    "             not as one that does not decode\n"
    "  --all      do not stop at the first damage: name every damaged region ('recio: FILE: offset\n"
    "             N: B bytes no record can be read from ...'), found as 'recio salvage' finds them\n";

/* --all: every damaged region of the file, as salvage sees them. */
typedef struct verify_tally {
    const char *path;
    unsigned long long records, bytes, regions;
} verify_tally;
static int count_record(void *user, const recio_record *rec, size_t from, size_t to) {
    verify_tally *t = (verify_tally *)user;
    (void)from, (void)to;
    t->records++, t->bytes += rec->size;
    return 0;
}
static int name_damage(void *user, const recio_record *rec, size_t from, size_t to) {
    verify_tally *t = (verify_tally *)user;
    (void)rec;
    t->regions++;
    cli_err("%s: offset %llu: %llu bytes no record can be read from (next record at offset %llu)", t->path,
            (unsigned long long)from, (unsigned long long)(to - from), (unsigned long long)to);
    return 0;
}
static int verify_all(const char *path) {
    cli_bytes in;
    verify_tally t;
    memset(&t, 0, sizeof t);
    t.path = path;
    if (salvage_map(path, &in)) return -1;
    salvage_scan(in.p, in.n, count_record, name_damage, &t);
    salvage_unmap(&in);
    printf("%s: %llu records, %llu bytes, %s\n", path, t.records, t.bytes, t.regions ? "damaged" : "ok");
    fflush(stdout);
    return t.regions ? -1 : 0;
}

/* A segmentation record's mask by the iterator's rule (recio_decode_desc.mask: an 8-bit grey or a
   palette PNG) and of its image's w x h. A record that ends in "RMSK" but where recio_irecord_unpack
   finds no PNG mask is named too, since training with masks would fail on it: a JPEG or BMP there
   by its kind, else as a damaged tail. 0 when sound, else -1 with why. */
static int mask_check(const recio_irecord *ir, int w, int h, char *why, size_t cap) {
    const unsigned char *end = (const unsigned char *)ir->image + ir->image_size, *t;
    recio_image m;
    size_t n;
    int bad;
    if (!ir->mask) {
        if (ir->image_size < RECIO_MASK_TAIL_SIZE || memcmp(end - 4, "RMSK", 4) != 0) return 0;
        n = recio_load_u32le(end - 8);
        t = n >= 3 && n <= ir->image_size - RECIO_MASK_TAIL_SIZE ? end - 8 - n : NULL;
        if (t && ((t[0] == 0xff && t[1] == 0xd8) || (t[0] == 'B' && t[1] == 'M'))) /* refused by kind: never a mask */
            return codec_mask(t, n, &m, why, cap) == RECIO_OK ? (recio_image_free(&m), 0) : -1;
        snprintf(why, cap, "mask: the record ends in a mask tail (\"RMSK\") that holds no mask: its length (%llu) or the mask's signature is damaged",
                 (unsigned long long)n);
        return -1;
    }
    if (codec_mask(ir->mask, ir->mask_size, &m, why, cap) != RECIO_OK) return -1;
    if ((bad = m.width != w || m.height != h) != 0) snprintf(why, cap, "mask: %dx%d, the image is %dx%d", m.width, m.height, w, h);
    recio_image_free(&m);
    return bad ? -1 : 0;
}

/* The image record of rec decodes in full, its mask too (0); its image is empty and skip_empty (1);
   else "recio: FILE: offset N: why" and -1, or -2 when the image is empty. */
static int decode_check(const char *path, const recio_record *rec, int skip_empty) {
    recio_irecord ir;
    recio_image img;
    char why[RECIO_ERRMSG_SIZE] = "";
    recio_decode_desc dd;
    recio_err e;
    if (recio_irecord_unpack(&ir, rec->data, rec->size) != RECIO_OK) {
        cli_err("%s: offset %llu: record of %llu bytes is too short for its image header", path,
                (unsigned long long)rec->offset, (unsigned long long)rec->size);
        return -1;
    }
    if (ir.image_size == 0 && skip_empty) return 1;
    memset(&img, 0, sizeof img);
    memset(&dd, 0, sizeof dd);
    dd.bytes = ir.image, dd.size = ir.image_size, dd.errmsg = why;
    e = recio_image_decode_desc(&img, &dd);
    if (e == RECIO_OK && mask_check(&ir, img.width, img.height, why, sizeof why) != 0) e = RECIO_ERR_DECODE;
    recio_image_free(&img);
    if (e == RECIO_OK) return 0;
    cli_err("%s: offset %llu: %s", path, (unsigned long long)rec->offset, why[0] ? why : recio_strerror(e));
    return ir.image_size ? -1 : -2;
}

/* The summary line of a file that reads: the counts of --decode's verdicts (c[0] do not decode, c[1]
   of them empty, c[2] without an image under --skip-empty). */
static void verify_summary(const char *path, uint64_t n, uint64_t bytes, int decode, const uint64_t *c) {
    char skipped[64] = "", hint[128] = "";
    if (c[2]) snprintf(skipped, sizeof skipped, "%llu without an image (skipped), ", (unsigned long long)c[2]);
    if (c[1]) /* what insightface's files hold on purpose */
        snprintf(hint, sizeof hint, " (%llu of them empty: --skip-empty passes over records without an image)", (unsigned long long)c[1]);
    if (c[0])
        printf("%s: %llu records, %llu payload bytes, %s%llu that do not decode%s\n", path, (unsigned long long)n,
               (unsigned long long)bytes, skipped, (unsigned long long)c[0], hint);
    else
        printf("%s: %llu records, %llu payload bytes, %s%s\n", path, (unsigned long long)n, (unsigned long long)bytes, skipped,
               decode ? "every image decodes, ok" : "ok");
}

/* One file: 0 when every record reads (and decodes, with decode), else -1 after saying why. */
static int verify_file(const char *path, int decode, int skip_empty) {
    recio_reader *r;
    recio_record rec;
    recio_err e;
    uint64_t n = 0, bytes = 0, c[3] = {0, 0, 0};
    int rc, v;
    if (cli_open_reader(&r, path)) return -1;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        n++;
        bytes += rec.size;
        v = decode ? decode_check(path, &rec, skip_empty) : 0;
        c[0] += v < 0, c[1] += v == -2, c[2] += v == 1;
    }
    rc = reader_result(r, e);
    recio_reader_close(r);
    if (!rc) verify_summary(path, n, bytes, decode, c);
    fflush(stdout);
    return rc || c[0] ? -1 : 0;
}

CLI_COMMAND(cli_cmd_verify) {
    int i, nfiles = 0, bad = 0, decode = 0, all = 0, skip_empty = 0;
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(verify_help, stdout), 0;
        if (strcmp(argv[i], "--decode") == 0) decode = 1;
        else if (strcmp(argv[i], "--all") == 0) all = 1;
        else if (strcmp(argv[i], "--skip-empty") == 0) skip_empty = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("verify", "unknown option '%s'", argv[i]);
    }
    if (skip_empty && !decode) return cli_usage_error("verify", "--skip-empty acts with --decode");
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--decode") == 0 || strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "--skip-empty") == 0) continue;
        nfiles++;
        if (all && !decode ? verify_all(argv[i]) : verify_file(argv[i], decode, skip_empty)) bad = 1;
    }
    if (!nfiles) return cli_usage_error("verify", "which files?");
    return bad ? CLI_EXIT_ERR : 0;
}

static const char index_help[] =
    "usage: recio index [-o OUT.idx] [--ordinal] [--force] FILE.rec\n\n"
    "Scan FILE.rec and write its MXNet index, one 'key<TAB>offset' line per record. The key is the\n"
    "image record header's id (what pack and im2rec write: the .lst index) when every record has an\n"
    "image header and no two share an id, so a rebuilt .idx has the keys of the lost one; else, or\n"
    "with --ordinal, the record's ordinal (0, 1, 2, ...), said on stderr. The default output is\n"
    "the index the split reads: FILE.rec.idx when there is one, else .rec replaced by .idx\n"
    "(train.rec -> train.idx), as im2rec names it. The index is written to a\n"
    "temporary file beside OUT.idx, fsynced and renamed, so a failure never leaves half a file. OUT\n"
    "is never the input; a FIFO or device is written in place. An existing index is rebuilt; any\n"
    "other file is replaced only with\n"
    "  --force   replace an existing OUT.idx that is not an index\n";

/* The library's rule (recio_index_path): the .idx the split would read for rec, or the one to make. */
static char *default_idx_path(const char *rec) {
    size_t cap = strlen(rec) + 5;
    char *p = (char *)malloc(cap);
    if (p && recio_index_path(p, cap, rec, NULL, NULL) != RECIO_OK) free(p), p = NULL;
    return p;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One "key<TAB>offset" line per record of r into f. The key is the image record header's id when
   every record has an image header and no two share an id (what pack wrote: the .lst index), so a
   rebuilt .idx has the keys of the lost one; else (or with ordinal) the record's ordinal, and the
   reason goes to stderr. 0, or -1 with the error said. */
static int write_index(recio_reader *r, cli_out *out, int ordinal, unsigned long long *n) {
    recio_record rec;
    recio_irecord ir;
    recio_err e;
    uint64_t *ids = NULL, *off = NULL, *sorted;
    size_t cap = 0, i;
    int use_ids = !ordinal;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        if (*n == cap) {
            uint64_t *a = (uint64_t *)realloc(ids, (cap = cap ? 2 * cap : 1024) * sizeof *a), *b;
            if (a) ids = a;
            b = a ? (uint64_t *)realloc(off, cap * sizeof *b) : NULL;
            if (!b) return free(ids), free(off), cli_err("out of memory"), -1;
            off = b;
        }
        if (use_ids && recio_irecord_unpack(&ir, rec.data, rec.size) != RECIO_OK) use_ids = 0;
        ids[*n] = use_ids ? ir.id : 0;
        off[(*n)++] = rec.offset;
    }
    if (reader_result(r, e)) return free(ids), free(off), -1;
    if (use_ids && *n > 1 && (sorted = (uint64_t *)malloc(*n * sizeof *sorted)) != NULL) {
        memcpy(sorted, ids, *n * sizeof *sorted);
        qsort(sorted, *n, sizeof *sorted, cmp_u64);
        for (i = 1; use_ids && i < *n; i++)
            if (sorted[i] == sorted[i - 1])
                use_ids = 0, fprintf(stderr, "recio: %s: id %llu is on more than one record: keys are the ordinals\n", out->path,
                                     (unsigned long long)sorted[i]);
        free(sorted);
    } else if (use_ids && *n > 1) {
        use_ids = 0;
    }
    if (!ordinal && !use_ids && *n) fprintf(stderr, "recio: keys are the record ordinals (not every record has an image header with its own id)\n");
    for (i = 0; i < *n; i++)
        cli_out_printf(out, "%llu\t%llu\n", use_ids ? (unsigned long long)ids[i] : (unsigned long long)i, (unsigned long long)off[i]);
    free(ids);
    free(off);
    return 0;
}

CLI_COMMAND(cli_cmd_index) {
    int i, rc = CLI_EXIT_ERR, ordinal = 0, force = 0;
    const char *path = NULL, *out = NULL;
    char *defout = NULL;
    recio_reader *r;
    unsigned long long n = 0;
    cli_out o;
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(index_help, stdout), 0;
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--ordinal") == 0) ordinal = 1;
        else if (strcmp(argv[i], "--force") == 0) force = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("index", "unknown option '%s'", argv[i]);
        else if (path) return cli_usage_error("index", "one file at a time");
        else path = argv[i];
    }
    if (!path) return cli_usage_error("index", "which file?");
    if (!out && !(out = defout = default_idx_path(path))) return cli_err("out of memory"), CLI_EXIT_ERR;
    if ((rc = cli_out_claim(&o, out, CLI_KIND_IDX, &path, 1, force)) == 0) {
        rc = CLI_EXIT_ERR;
        if (!cli_open_reader(&r, path)) {
            if (!write_index(r, &o, ordinal, &n) && !cli_out_commit(&o)) rc = 0, printf("%s: %llu records indexed\n", out, n);
            recio_reader_close(r);
        }
        cli_out_free(&o);
    }
    free(defout);
    return rc;
}
