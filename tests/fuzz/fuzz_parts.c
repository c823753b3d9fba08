/* libFuzzer harness: the split's invariants over datasets and options the input picks: 1-3 files of
   0-63 records (some empty), byte or index mode (each file's .idx, or one global index with offsets
   in the concatenation: desc.index_path), no / full / chunk shuffle (chunk and window sizes),
   no / pad / drop equalising, 1-8 ranks, a seed, epochs 0 and 1 (the second by recio_split_reset).
   Each payload starts with its record's id; what is expected comes from the dataset as generated
   here (ids, files, ordinals, offsets), never from the split:
   - every record once per epoch across the ranks (without equalising; with pad, the records not
     marked repeat; with drop, no record twice), and a repeat is one of the rank's own records;
   - with pad or drop every rank yields the same count: the largest part's, or the smallest's (in
     index mode, from docs/split.md's floor rule: n/nsplit rounded up, or down);
   - where: the file and ordinal of the record's id, key = its global offset, index < n in index mode
     (unknown in byte mode), seq 0, 1, 2...; the record's offset and size are those written;
   - recio_split_query's count, when known, is the count yielded.
   Only an equalised byte split may refuse (a rank with an empty byte part cannot pad), a padded
   split with fewer records than ranks (the same: a rank with none), or a dataset with no record. A crash, a sanitizer report, a hang or a broken invariant is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXN 192 /* 3 files x 63 records */

typedef struct dataset {
    unsigned nfiles, n;
    unsigned file[MAXN], ord[MAXN], size[MAXN];
    uint64_t off[MAXN], goff[MAXN]; /* in its file; in the concatenation of the non-empty files */
    char path[3][96];
    char uris[300];
} dataset;

typedef struct got {
    unsigned count, ids[MAXN * 8];
    int repeat[MAXN * 8];
} got;

static void check(int ok) {
    if (!ok) __builtin_trap();
}

static char dir[64];

/* The files, framed here by the format's rule (no payload holds the magic, so no record splits). */
static int make(dataset *ds, const uint8_t *counts, const uint8_t *sizes, size_t nsizes) {
    unsigned f, i;
    uint64_t base = 0;
    size_t uo = 0;
    ds->n = 0;
    ds->uris[0] = 0;
    for (f = 0; f < ds->nfiles; f++) {
        FILE *rec, *idx;
        char ipath[100];
        uint64_t off = 0;
        unsigned k = counts[f] % 64;
        snprintf(ds->path[f], sizeof ds->path[f], "%s/f%u.rec", dir, f);
        snprintf(ipath, sizeof ipath, "%s/f%u.idx", dir, f);
        rec = fopen(ds->path[f], "wb"), idx = fopen(ipath, "w");
        if (!rec || !idx) return (rec ? fclose(rec) : 0), (idx ? fclose(idx) : 0), -1;
        for (i = 0; i < k; i++) {
            unsigned id = ds->n++, sz = 4 + (nsizes ? sizes[id % nsizes] % 24 : 0), pad = (4 - sz % 4) % 4;
            unsigned char head[8], body[32] = {0};
            uint32_t lrec = sz; /* cflag 0: a whole record */
            memset(body, 0x11, sizeof body);
            body[0] = (unsigned char)id, body[1] = body[2] = body[3] = 0;
            memcpy(head, "\x0a\x23\xd7\xce", 4);
            head[4] = (unsigned char)lrec, head[5] = (unsigned char)(lrec >> 8), head[6] = head[7] = 0;
            fwrite(head, 1, 8, rec), fwrite(body, 1, sz, rec), fwrite("\0\0\0", 1, pad, rec);
            fprintf(idx, "%u\t%llu\n", i, (unsigned long long)off);
            ds->file[id] = f, ds->ord[id] = i, ds->size[id] = sz, ds->off[id] = off, ds->goff[id] = base + off;
            off += 8 + sz + pad;
        }
        base += off;
        fclose(rec), fclose(idx);
        uo += (size_t)snprintf(ds->uris + uo, sizeof ds->uris - uo, "%s%s", f ? ";" : "", ds->path[f]);
    }
    return 0;
}

/* One rank's epoch; 0, or -1 when the split refused (open or next). */
static int read_rank(const dataset *ds, unsigned rank, unsigned nsplit, const recio_split_desc *d, uint64_t epoch, got *g) {
    recio_split *s = NULL;
    recio_record rec;
    recio_split_where w;
    recio_err e = recio_split_open_desc(&s, ds->uris, rank, nsplit, d);
    uint64_t want;
    g->count = 0;
    if (e == RECIO_OK && epoch) e = recio_split_reset(s, epoch);
    if (e != RECIO_OK) return recio_split_close(s), -1;
    while ((e = recio_split_next(s, &rec)) == RECIO_OK) {
        unsigned id;
        recio_split_info info;
        check(recio_split_query(s, &info) == RECIO_OK);
        w = info.where;
        check(g->count < MAXN * 8 && rec.size >= 4);
        id = ((const unsigned char *)rec.data)[0];
        check(id < ds->n && rec.size == ds->size[id] && rec.offset == ds->off[id]);
        check(w.path && strcmp(w.path, ds->path[ds->file[id]]) == 0 && w.file < info.nfiles && strcmp(info.files[w.file], w.path) == 0);
        check(w.ordinal == ds->ord[id] && w.key == ds->goff[id] && w.seq == g->count);
        check(d->mode == RECIO_SPLIT_INDEX ? w.index < ds->n : w.index == RECIO_SPLIT_UNKNOWN);
        check(!w.repeat || d->equalize == RECIO_EQUALIZE_PAD);
        g->ids[g->count] = id, g->repeat[g->count++] = w.repeat;
    }
    {
        recio_split_info info;
        want = recio_split_query(s, &info) == RECIO_OK ? info.count : (uint64_t)-2;
    }
    recio_split_close(s);
    if (e != RECIO_END) return -1;
    check(want == RECIO_SPLIT_UNKNOWN ? d->mode == RECIO_SPLIT_BYTES && d->equalize == RECIO_EQUALIZE_NONE : want == g->count);
    return 0;
}

static void epoch_invariants(const dataset *ds, unsigned nsplit, const recio_split_desc *d, uint64_t epoch) {
    static got g[8];
    unsigned seen[MAXN], r, i, lo = ~0u, hi = 0, n_own = 0;
    int refused = 0;
    memset(seen, 0, sizeof seen);
    for (r = 0; r < nsplit; r++) refused |= read_rank(ds, r, nsplit, d, epoch, &g[r]) != 0;
    if (refused) {
        check(ds->n == 0 || (d->mode == RECIO_SPLIT_BYTES && d->equalize != RECIO_EQUALIZE_NONE) ||
              (d->equalize == RECIO_EQUALIZE_PAD && ds->n < nsplit)); /* a rank with nothing to repeat */
        return;
    }
    for (r = 0; r < nsplit; r++) {
        unsigned own = 0;
        for (i = 0; i < g[r].count; i++)
            if (!g[r].repeat[i]) seen[g[r].ids[i]]++, own++;
        for (i = 0; i < g[r].count; i++) /* a repeat is one of this rank's own records */
            if (g[r].repeat[i]) {
                unsigned j;
                for (j = 0; j < g[r].count && (g[r].repeat[j] || g[r].ids[j] != g[r].ids[i]); j++) {}
                check(j < g[r].count);
            }
        n_own += own;
        if (g[r].count < lo) lo = g[r].count;
        if (g[r].count > hi) hi = g[r].count;
    }
    for (i = 0; i < ds->n; i++) check(d->equalize == RECIO_EQUALIZE_DROP ? seen[i] <= 1 : seen[i] == 1);
    if (d->equalize != RECIO_EQUALIZE_NONE) check(lo == hi);
    if (d->equalize == RECIO_EQUALIZE_PAD) check(n_own == ds->n);
    if (d->equalize != RECIO_EQUALIZE_NONE && d->mode == RECIO_SPLIT_INDEX) {
        /* docs/split.md: rank r gets positions [floor(r*n/nsplit), floor((r+1)*n/nsplit)), so at most
           one record per rank is repeated or dropped */
        unsigned m = ds->n / nsplit, want = d->equalize == RECIO_EQUALIZE_PAD ? m + (ds->n % nsplit != 0) : m;
        check(lo == want);
    }
}

/* The replay leaves nothing in /tmp. */
static void cleanup(void) {
    static const char *const names[] = {"f0.rec", "f0.idx", "f1.rec", "f1.idx", "f2.rec", "f2.idx", "all.idx"};
    char p[128];
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) snprintf(p, sizeof p, "%s/%s", dir, names[i]), remove(p);
    remove(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static dataset ds;
    recio_split_desc d;
    unsigned nsplit;
    if (size < 9 || size > 4096) return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/recio-fuzz-parts-%ld", (long)getpid());
        mkdir(dir, 0700);
        atexit(cleanup);
    }
    memset(&d, 0, sizeof d);
    ds.nfiles = 1 + data[0] % 3;
    nsplit = 1 + data[1] % 8;
    d.mode = (data[2] & 1) ? RECIO_SPLIT_INDEX : RECIO_SPLIT_BYTES;
    d.shuffle = (recio_split_shuffle)((data[2] >> 1) % 3);
    if (d.shuffle) d.mode = RECIO_SPLIT_INDEX;
    d.equalize = (recio_split_equalize)((data[2] >> 3) % 3);
    d.chunk_records = data[3] % 17; /* 0: the default */
    d.window_chunks = data[4] % 9;
    d.seed = data[5];
    d.ordinals = 1;
    if (make(&ds, data + 6, data + 9, size - 9) != 0) return 0;
    if ((data[0] >> 4) & 1) { /* one global index over the list: offsets in the concatenation */
        static char all[96];
        FILE *f;
        unsigned i;
        snprintf(all, sizeof all, "%s/all.idx", dir);
        if (!(f = fopen(all, "w"))) return 0;
        for (i = 0; i < ds.n; i++) fprintf(f, "%u\t%llu\n", i, (unsigned long long)ds.goff[i]);
        fclose(f);
        d.index_path = all, d.mode = RECIO_SPLIT_INDEX;
    }
    epoch_invariants(&ds, nsplit, &d, 0);
    epoch_invariants(&ds, nsplit, &d, 1);
    return 0;
}
