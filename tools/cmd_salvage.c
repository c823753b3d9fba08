/* recio salvage, and the scan behind `recio verify --all`: find every record that still reads after
   damage at any byte offset. A cut or an insertion shifts the alignment of everything after it, so
   after damage the scan looks for the magic at every byte, not every fourth. */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole file through its filesystem, read-only: mapped where the filesystem maps (or empty),
   else read whole (a remote object). */
static int read_whole(const recio_fs *fs, const char *path, cli_bytes *b, char *why) {
    recio_io io;
    size_t cap = 0;
    int64_t got = 1;
    if (fs->open_read(fs->user, path, &io, why) != RECIO_OK) return -1;
    while (got > 0) {
        if (b->n == cap) {
            unsigned char *nb = (unsigned char *)realloc(b->own, cap = cap ? 2 * cap : 1 << 20);
            if (!nb) break;
            b->own = nb;
        }
        if ((got = io.read(io.user, b->own + b->n, cap - b->n)) > 0) b->n += (size_t)got;
    }
    if (got < 0) snprintf(why, RECIO_ERRMSG_SIZE, "%s", io.error && io.error(io.user) ? io.error(io.user) : strerror(errno ? errno : EIO));
    else if (got > 0) snprintf(why, RECIO_ERRMSG_SIZE, "out of memory");
    if (io.close) io.close(io.user);
    b->p = b->own;
    return got == 0 ? 0 : -1;
}

int salvage_map(const char *path, cli_bytes *b) {
    char why[RECIO_ERRMSG_SIZE] = "";
    const recio_fs *fs = recio_fs_find(NULL, path);
    memset(b, 0, sizeof *b);
    if (!fs) return cli_err("%s: cannot read: no filesystem serves this path", path), -1;
    if (fs->map && fs->map(fs->user, path, &b->map, why) == RECIO_OK) {
        b->fs = fs, b->p = (const unsigned char *)b->map.data, b->n = (size_t)b->map.size;
        return 0;
    }
    if (!fs->map && read_whole(fs, path, b, why) == 0) return 0;
    salvage_unmap(b);
    return cli_err("%s: cannot read: %s", path, why[0] ? why : strerror(errno)), -1;
}

void salvage_unmap(cli_bytes *b) {
    if (b->fs) b->fs->unmap(b->fs->user, &b->map);
    free(b->own);
    memset(b, 0, sizeof *b);
}

typedef struct salvage_run {
    const char *in;
    recio_writer *w;
    unsigned long long kept, kept_bytes, lost, regions;
} salvage_run;

static int keep_record(void *user, const recio_record *rec, size_t from, size_t to) {
    salvage_run *s = (salvage_run *)user;
    (void)from, (void)to;
    s->kept++;
    s->kept_bytes += rec->size;
    return recio_writer_write(s->w, rec->data, rec->size) == RECIO_OK ? 0 : -1;
}

static int note_damage(void *user, const recio_record *rec, size_t from, size_t to) {
    salvage_run *s = (salvage_run *)user;
    (void)rec;
    s->regions++;
    s->lost += to - from;
    cli_err("%s: offset %llu: %llu bytes no record can be read from, skipped (next record at offset %llu)", s->in,
            (unsigned long long)from, (unsigned long long)(to - from), (unsigned long long)to);
    return 0;
}

static const char salvage_help[] =
    "usage: recio salvage [--force] IN.rec OUT.rec\n\n"
    "Copy every record of a damaged IN.rec that still reads into OUT.rec, with a new OUT.idx (or OUT.rec.idx,\n"
    "when one is there: readers take it first).\n"
    "After damage (a cut, a bit flip, inserted or lost bytes, at any byte offset) the scan looks for\n"
    "the next record head at every byte, so records after the damage are found even when the damage\n"
    "shifted their alignment. A head counts when its record reads in full and is followed by another\n"
    "record or the end of the file, so a magic number inside a damaged payload is not taken for one.\n"
    "Each skipped region is named on stderr ('recio: IN: offset N: B bytes ... skipped'); stdout gets\n"
    "'K records kept (B bytes), L bytes lost in R regions'. Records whose bytes were changed without\n"
    "breaking their framing cannot be told apart from sound ones (the format has no checksum): run\n"
    "'recio verify --decode OUT.rec' to find images that no longer decode.\n"
    "OUT.rec and OUT.idx are written through temporary files and renamed at the end, both or neither;\n"
    "OUT is never IN. An existing RecordIO OUT.rec and index OUT.idx are replaced; other files only with\n"
    "  --force   replace an existing OUT.rec or OUT.idx whatever it holds\n";

/* The .idx that goes with OUT.rec (malloc'd), by the library's rule (recio_index_path): OUT.idx, as
   im2rec names it, unless an OUT.rec.idx is there, which readers would take first. */
static char *idx_name(const char *rec) {
    size_t cap = strlen(rec) + 5;
    char *idx = (char *)malloc(cap);
    if (idx && recio_index_path(idx, cap, rec, NULL, NULL) != RECIO_OK) free(idx), idx = NULL;
    return idx;
}

/* The scan into an atomic writer of OUT.rec (and OUT.idx); 0 or the exit status. */
static int salvage_into(salvage_run *s, const char *out, const char *idx) {
    recio_writer_desc d;
    cli_bytes in;
    int rc;
    if (salvage_map(s->in, &in)) return CLI_EXIT_ERR;
    memset(&d, 0, sizeof d);
    d.index_path = idx;
    d.atomic = 1;
    if (recio_writer_open_desc(&s->w, out, &d) != RECIO_OK) {
        cli_err("%s: cannot create: %s", out, s->w ? recio_writer_errmsg(s->w) : strerror(errno));
        if (s->w) recio_writer_abort(s->w);
        return salvage_unmap(&in), CLI_EXIT_ERR;
    }
    rc = salvage_scan(in.p, in.n, keep_record, note_damage, s);
    salvage_unmap(&in);
    if (rc) {
        cli_err("%s: %s", out, recio_writer_errmsg(s->w));
        recio_writer_abort(s->w);
        return CLI_EXIT_ERR;
    }
    return cli_close_writer(s->w) != 0 ? CLI_EXIT_ERR : 0;
}

CLI_COMMAND(cli_cmd_salvage) {
    salvage_run s;
    const char *io[2] = {NULL, NULL}; /* IN, OUT */
    char *idx;
    cli_out check[2];
    int rc, i, k = 0, force = 0;
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(salvage_help, stdout), 0;
        if (strcmp(argv[i], "--force") == 0) force = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("salvage", "unknown option '%s'", argv[i]);
        else if (k < 2) io[k++] = argv[i];
        else return cli_usage_error("salvage", "expected IN.rec OUT.rec");
    }
    if (k != 2) return cli_usage_error("salvage", "expected IN.rec OUT.rec");
    if (!(idx = idx_name(io[1]))) return cli_err("out of memory"), CLI_EXIT_ERR;
    memset(&s, 0, sizeof s);
    s.in = io[0];
    memset(check, 0, sizeof check);
    if ((rc = cli_out_claim(&check[0], io[1], CLI_KIND_REC, io, 1, force)) == 0 &&
        (rc = cli_out_claim(&check[1], idx, CLI_KIND_IDX, io, 1, force)) == 0 &&
        (rc = salvage_into(&s, cli_out_target(&check[0]), cli_out_target(&check[1]))) == 0)
        printf("%llu records kept (%llu bytes), %llu bytes lost in %llu regions\n", s.kept, s.kept_bytes, s.lost, s.regions);
    cli_out_free(&check[0]), cli_out_free(&check[1]);
    free(idx);
    return rc;
}
