/* Properties of the split on random datasets (random record sizes, 1-7 files, some empty, records
   with aligned magics so they are stored in parts, nsplit 1..64). What is expected comes from the
   generator: each payload starts with its record id, and the global offsets are those the writer
   reported; the byte-part model below is the README rule ("first record head >= r*step, else the
   total") applied to those offsets, independently of the split code. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#include <errno.h>
#include <stdint.h>
#include "tmpdir.h"

typedef struct dataset {
    char dir[64];
    char uris[1024];
    unsigned nfiles;
    uint64_t n, total;      /* records, bytes */
    uint64_t *goff;         /* global offset of record id i (ids in file order) */
    unsigned *file;         /* file of record i */
    uint64_t *ord;          /* ordinal in its file */
} dataset;

static uint64_t rnd_state = 12345;
static uint64_t rnd(uint64_t n) { /* test-local generator, not the library's */
    rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rnd_state >> 33) % n;
}

static void make_dataset(dataset *ds, unsigned nfiles, int with_idx) {
    unsigned f;
    uint64_t cap = 0;
    memset(ds, 0, sizeof *ds);
    strcpy(ds->dir, "/tmp/recio_split_XXXXXX");
    CHECK(t_mkdtemp(ds->dir) != NULL);
    ds->nfiles = nfiles;
    for (f = 0; f < nfiles; f++) {
        char path[128], idx[140];
        recio_writer *w = NULL;
        recio_writer_desc wd;
        unsigned i, nrec = rnd(4) == 0 ? 0 : (unsigned)rnd(120);
        unsigned char buf[3000];
        snprintf(path, sizeof path, "%s/part-%u.rec", ds->dir, f);
        snprintf(idx, sizeof idx, "%s.idx", path);
        memset(&wd, 0, sizeof wd);
        wd.index_path = with_idx ? idx : NULL;
        CHECK_EQ_INT(recio_writer_open_desc(&w, path, &wd), RECIO_OK);
        for (i = 0; i < nrec; i++) {
            size_t size = 4 + (rnd(10) == 0 ? rnd(2900) : rnd(60)), k;
            uint32_t id = (uint32_t)ds->n;
            for (k = 0; k < size; k++) buf[k] = (unsigned char)rnd(256);
            if (size >= 12 && rnd(5) == 0) recio_store_u32le(buf + 4 * (1 + rnd((size - 4) / 4)), RECIO_MAGIC);
            recio_store_u32le(buf, id);
            if (ds->n == cap) {
                cap = cap ? 2 * cap : 256;
                ds->goff = (uint64_t *)realloc(ds->goff, cap * sizeof *ds->goff);
                ds->file = (unsigned *)realloc(ds->file, cap * sizeof *ds->file);
                ds->ord = (uint64_t *)realloc(ds->ord, cap * sizeof *ds->ord);
            }
            ds->goff[ds->n] = ds->total + recio_writer_tell(w);
            ds->file[ds->n] = f;
            ds->ord[ds->n] = i;
            ds->n++;
            CHECK_EQ_INT(recio_writer_write(w, buf, size), RECIO_OK);
        }
        ds->total += recio_writer_tell(w);
        CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
        if (f) strcat(ds->uris, ";");
        strcat(ds->uris, path);
    }
}

static void free_dataset(dataset *ds) {
    CHECK(t_rmtree(ds->dir) == 0);
    free(ds->goff);
    free(ds->file);
    free(ds->ord);
}

/* A dataset with at least min records (the generator may give fewer). */
static void make_dataset_min(dataset *ds, unsigned nfiles, int with_idx, uint64_t min) {
    for (make_dataset(ds, nfiles, with_idx); ds->n < min; make_dataset(ds, nfiles, with_idx)) free_dataset(ds);
}

static uint32_t rec_id(const recio_record *rec) { return rec->size >= 4 ? recio_load_u32le(rec->data) : 0xffffffffu; }

/* The README rule on the generator's offsets. */
static uint64_t model_head(const dataset *ds, uint64_t x) {
    uint64_t i;
    for (i = 0; i < ds->n; i++)
        if (ds->goff[i] >= x) return ds->goff[i];
    return ds->total;
}

static uint64_t model_nominal(const dataset *ds, uint64_t r, unsigned nsplit) {
    uint64_t step = (ds->total + nsplit - 1) / nsplit;
    step = (step + 3) / 4 * 4;
    return r * step < ds->total ? r * step : ds->total;
}

/* Read a whole part; ids[] gets the record ids; returns the count (-1 on error). */
static long read_part(const char *uris, unsigned r, unsigned nsplit, const recio_split_desc *d, uint32_t *ids, long max,
                      recio_split_where *ws) {
    recio_split *s = NULL;
    recio_record rec;
    recio_split_where w;
    recio_err e;
    long n = 0;
    char msg[RECIO_ERRMSG_SIZE];
    recio_split_desc dm;
    memset(&dm, 0, sizeof dm);
    if (d) dm = *d;
    dm.errmsg = msg;
    if (recio_split_open_desc(&s, uris, r, nsplit, &dm) != RECIO_OK) {
        fprintf(stderr, "  open: %s\n", msg);
        recio_split_close(s);
        return -1;
    }
    while ((e = rec_split_next_where(s, &rec, &w)) == RECIO_OK) {
        if (n < max) {
            ids[n] = rec_id(&rec);
            if (ws) ws[n] = w;
        }
        n++;
    }
    if (e != RECIO_END) fprintf(stderr, "  next: %s\n", recio_split_errmsg(s));
    recio_split_close(s);
    return e == RECIO_END ? n : -1;
}

static void check_byte_mode(const dataset *ds, unsigned nsplit) {
    uint32_t *ids = (uint32_t *)malloc((ds->n + 1) * sizeof *ids);
    recio_split_where *ws = (recio_split_where *)malloc((ds->n + 1) * sizeof *ws);
    unsigned char *seen = (unsigned char *)calloc(ds->n + 1, 1);
    recio_split_desc d;
    uint64_t total = 0;
    unsigned r;
    memset(&d, 0, sizeof d);
    d.ordinals = 1;
    for (r = 0; r < nsplit; r++) {
        long k, n = read_part(ds->uris, r, nsplit, &d, ids, (long)ds->n, ws);
        uint64_t nb = model_nominal(ds, r, nsplit), ne = model_nominal(ds, r + 1, nsplit);
        uint64_t b = nb == ne ? nb : model_head(ds, nb), e = nb == ne ? ne : model_head(ds, ne);
        recio_split *s = NULL;
        uint64_t gb, ge;
        CHECK(n >= 0);
        CHECK_EQ_INT(recio_split_open(&s, ds->uris, r, nsplit), RECIO_OK);
        gb = rec_split_info(s).begin, ge = rec_split_info(s).end;
        recio_split_close(s);
        CHECK_EQ_INT(gb, b);
        CHECK_EQ_INT(ge, e);
        for (k = 0; k < n; k++) {
            CHECK(ids[k] < ds->n);
            if (ids[k] >= ds->n) break;
            CHECK(!seen[ids[k]]);
            seen[ids[k]] = 1;
            CHECK(ds->goff[ids[k]] >= b && ds->goff[ids[k]] < e);
            CHECK(k == 0 || ids[k] == ids[k - 1] + 1); /* file order, files in list order */
            CHECK_EQ_INT(ws[k].key, ds->goff[ids[k]]);
            CHECK_EQ_INT(ws[k].ordinal, ds->ord[ids[k]]);
        }
        total += n > 0 ? (uint64_t)n : 0;
    }
    CHECK_EQ_INT(total, ds->n);
    free(ids);
    free(ws);
    free(seen);
}

static void test_byte_parts_random_datasets(void) {
    int round;
    for (round = 0; round < 12; round++) {
        dataset ds;
        static const unsigned ns[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64};
        size_t i;
        make_dataset(&ds, 1 + (unsigned)rnd(7), round % 2);
        if (ds.n)
            for (i = 0; i < sizeof ns / sizeof ns[0]; i++) check_byte_mode(&ds, ns[i]);
        free_dataset(&ds);
    }
}

/* Indexed: ceil(n/N) consecutive records per rank, the last ranks fewer or none. */
static void test_index_parts_random_datasets(void) {
    int round;
    for (round = 0; round < 8; round++) {
        dataset ds;
        unsigned nsplit, r;
        make_dataset(&ds, 1 + (unsigned)rnd(7), 1);
        for (nsplit = 1; ds.n && nsplit <= 64; nsplit += 1 + (unsigned)rnd(9)) {
            uint64_t step = (ds.n + nsplit - 1) / nsplit, next = 0;
            uint32_t *ids = (uint32_t *)malloc((ds.n + 1) * sizeof *ids);
            recio_split_desc d;
            memset(&d, 0, sizeof d);
            d.mode = RECIO_SPLIT_INDEX;
            for (r = 0; r < nsplit; r++) {
                long k, n = read_part(ds.uris, r, nsplit, &d, ids, (long)ds.n, NULL);
                uint64_t want = r * step >= ds.n ? 0 : (ds.n - r * step < step ? ds.n - r * step : step);
                CHECK_EQ_INT(n, want);
                for (k = 0; k < n; k++) CHECK_EQ_INT(ids[k], next + (uint64_t)k);
                next += n > 0 ? (uint64_t)n : 0;
            }
            CHECK_EQ_INT(next, ds.n);
            free(ids);
        }
        free_dataset(&ds);
    }
}

/* Every rank yields the same count; pad repeats the first records of the rank's own sequence;
   the records that are not repeats cover the dataset once (pad) or are distinct (drop). */
static void check_equalized(const dataset *ds, unsigned nsplit, recio_split_desc d) {
    uint32_t *ids = (uint32_t *)malloc((ds->n + 64) * sizeof *ids);
    recio_split_where *ws = (recio_split_where *)malloc((ds->n + 64) * sizeof *ws);
    unsigned char *seen = (unsigned char *)calloc(ds->n + 1, 1);
    long first = -1, k;
    uint64_t distinct = 0;
    unsigned r;
    for (r = 0; r < nsplit; r++) {
        long n = read_part(ds->uris, r, nsplit, &d, ids, (long)ds->n + 64, ws), own = 0;
        CHECK(n >= 0);
        if (first < 0) first = n;
        CHECK_EQ_INT(n, first);
        for (k = 0; k < n; k++) {
            if (ws[k].repeat) {
                CHECK_EQ_INT(ids[k], ids[(k - own) % own]); /* cycling over the own records */
                continue;
            }
            own++;
            CHECK(ids[k] < ds->n && !seen[ids[k]]);
            if (ids[k] < ds->n) seen[ids[k]] = 1;
            distinct++;
        }
    }
    { /* the count announced at open is the count yielded */
        recio_split *s = NULL;
        CHECK_EQ_INT(recio_split_open_desc(&s, ds->uris, nsplit - 1, nsplit, &d), RECIO_OK);
        CHECK_EQ_INT(rec_split_info(s).count, first);
        recio_split_close(s);
    }
    if (d.equalize == RECIO_EQUALIZE_PAD) CHECK_EQ_INT(distinct, ds->n);
    else CHECK_EQ_INT(distinct, (uint64_t)first * nsplit);
    free(ids);
    free(ws);
    free(seen);
}

static void test_equalize_index_and_byte(void) {
    int round;
    for (round = 0; round < 6; round++) {
        dataset ds;
        recio_split_desc d;
        unsigned nsplit;
        make_dataset(&ds, 1 + (unsigned)rnd(7), 1);
        memset(&d, 0, sizeof d);
        for (nsplit = 1; nsplit <= ds.n && nsplit <= 64; nsplit = nsplit * 2 + (unsigned)rnd(3)) {
            d.mode = RECIO_SPLIT_INDEX;
            d.shuffle = RECIO_SHUFFLE_NONE;
            d.equalize = RECIO_EQUALIZE_PAD;
            check_equalized(&ds, nsplit, d);
            d.equalize = RECIO_EQUALIZE_DROP;
            check_equalized(&ds, nsplit, d);
            d.shuffle = RECIO_SHUFFLE_FULL;
            d.seed = 7;
            check_equalized(&ds, nsplit, d);
            d.mode = RECIO_SPLIT_BYTES;
            d.shuffle = RECIO_SHUFFLE_NONE;
            check_equalized(&ds, nsplit, d); /* byte drop: always possible */
        }
        /* byte pad with 2 parts of a dataset of many records: both non-empty */
        d.mode = RECIO_SPLIT_BYTES;
        d.equalize = RECIO_EQUALIZE_PAD;
        if (ds.n >= 50) check_equalized(&ds, 2, d);
        free_dataset(&ds);
    }
}

/* Shuffled orders: a function of (seed, epoch) only; every rank's slice together = all once. */
static void check_shuffle(const dataset *ds, recio_split_shuffle mode) {
    uint32_t *a = (uint32_t *)malloc((ds->n + 1) * sizeof *a), *b = (uint32_t *)malloc((ds->n + 1) * sizeof *b);
    unsigned char *seen = (unsigned char *)calloc(ds->n + 1, 1);
    recio_split_desc d;
    recio_split *s = NULL;
    recio_record rec;
    unsigned nsplit = 1 + (unsigned)rnd(6), r;
    long n1, n2, k, moved = 0, total = 0;
    memset(&d, 0, sizeof d);
    d.shuffle = mode;
    d.seed = 99;
    d.chunk_records = 1 + (uint32_t)rnd(9);
    d.window_chunks = 1 + (uint32_t)rnd(4);
    n1 = read_part(ds->uris, 0, 1, &d, a, (long)ds->n, NULL);
    n2 = read_part(ds->uris, 0, 1, &d, b, (long)ds->n, NULL);
    CHECK_EQ_INT(n1, ds->n);
    CHECK(n1 == n2 && memcmp(a, b, (size_t)n1 * sizeof *a) == 0); /* reproducible */
    for (k = 0; k < n1; k++) moved += a[k] != (uint32_t)k;
    if (ds->n > 20) CHECK(moved > 0); /* it is a shuffle */
    d.epoch = 1;
    n2 = read_part(ds->uris, 0, 1, &d, b, (long)ds->n, NULL);
    CHECK_EQ_INT(n2, n1);
    if (ds->n > 20) CHECK(memcmp(a, b, (size_t)n1 * sizeof *a) != 0); /* a new order per epoch */
    /* reset(1) on an epoch-0 handle gives the epoch-1 order */
    d.epoch = 0;
    CHECK_EQ_INT(recio_split_open_desc(&s, ds->uris, 0, 1, &d), RECIO_OK);
    while (recio_split_next(s, &rec) == RECIO_OK) {}
    CHECK_EQ_INT(recio_split_reset(s, 1), RECIO_OK);
    for (k = 0; recio_split_next(s, &rec) == RECIO_OK; k++)
        if (k < n2) CHECK_EQ_INT(rec_id(&rec), b[k]);
    CHECK_EQ_INT(k, n2);
    recio_split_close(s);
    /* ranks of nsplit: disjoint, and all together = every record */
    for (r = 0; r < nsplit; r++) {
        long n = read_part(ds->uris, r, nsplit, &d, b, (long)ds->n, NULL);
        for (k = 0; k < n; k++) {
            CHECK(b[k] < ds->n && !seen[b[k]]);
            if (b[k] < ds->n) seen[b[k]] = 1;
        }
        total += n;
    }
    CHECK_EQ_INT(total, ds->n);
    free(a);
    free(b);
    free(seen);
}

static void test_shuffle_full_and_chunk(void) {
    int round;
    for (round = 0; round < 10; round++) {
        dataset ds;
        make_dataset(&ds, 1 + (unsigned)rnd(7), 1);
        if (ds.n) {
            check_shuffle(&ds, RECIO_SHUFFLE_FULL);
            check_shuffle(&ds, RECIO_SHUFFLE_CHUNK);
        }
        free_dataset(&ds);
    }
}

/* The full shuffle is the documented Fisher-Yates: recompute it here from recio_rng alone. */
static void test_shuffle_is_documented_fisher_yates(void) {
    dataset ds;
    recio_split_desc d;
    uint32_t *got;
    uint64_t *perm, i;
    recio_rng rng;
    long n;
    make_dataset_min(&ds, 3, 1, 10);
    got = (uint32_t *)malloc(ds.n * sizeof *got);
    perm = (uint64_t *)malloc(ds.n * sizeof *perm);
    memset(&d, 0, sizeof d);
    d.shuffle = RECIO_SHUFFLE_FULL;
    d.seed = 5;
    d.epoch = 2;
    n = read_part(ds.uris, 0, 1, &d, got, (long)ds.n, NULL);
    CHECK_EQ_INT(n, ds.n);
    for (i = 0; i < ds.n; i++) perm[i] = i;
    rng.state = recio_seed_for(5, 2, 0);
    for (i = ds.n - 1; i >= 1; i--) {
        uint64_t j = recio_rng_below(&rng, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (i = 0; i < ds.n; i++) CHECK_EQ_INT(got[i], perm[i]);
    free(got);
    free(perm);
    free_dataset(&ds);
}

/* The chunk shuffle, recomputed here from recio_rng alone: chunks of K records in index order are
   put in a Fisher-Yates order (seed_for(seed, epoch, 0)); each window of W chunks in that order
   then lists its records chunk by chunk and shuffles them as Fisher-Yates with
   seed_for(seed, epoch, window + 1). K leaves a short last chunk, and the epochs put it in
   different windows. */
static void test_chunk_shuffle_is_documented(void) {
    dataset ds;
    recio_split_desc d;
    uint32_t *got;
    uint64_t *cperm, *win, i, c, w, nchunks, K = 3, W = 2, at, out, epoch;
    recio_rng rng;
    long n;
    make_dataset_min(&ds, 3, 1, 20);
    while (ds.n % K == 0) K++;
    got = (uint32_t *)malloc(ds.n * sizeof *got);
    nchunks = (ds.n + K - 1) / K;
    cperm = (uint64_t *)malloc(nchunks * sizeof *cperm);
    win = (uint64_t *)malloc(K * W * sizeof *win);
    memset(&d, 0, sizeof d);
    d.shuffle = RECIO_SHUFFLE_CHUNK;
    d.chunk_records = (uint32_t)K;
    d.window_chunks = (uint32_t)W;
    d.seed = 8;
    for (epoch = 0; epoch < 8; epoch++) {
        d.epoch = epoch;
        n = read_part(ds.uris, 0, 1, &d, got, (long)ds.n, NULL);
        CHECK_EQ_INT(n, ds.n);
        for (i = 0; i < nchunks; i++) cperm[i] = i;
        rng.state = recio_seed_for(8, epoch, 0);
        for (i = nchunks; i > 1; i--) {
            uint64_t j = recio_rng_below(&rng, i), t = cperm[i - 1];
            cperm[i - 1] = cperm[j];
            cperm[j] = t;
        }
        for (out = 0, w = 0; w * W < nchunks; w++) {
            for (at = 0, c = w * W; c < (w + 1) * W && c < nchunks; c++)
                for (i = cperm[c] * K; i < (cperm[c] + 1) * K && i < ds.n; i++) win[at++] = i;
            rng.state = recio_seed_for(8, epoch, w + 1);
            for (i = at; i > 1; i--) {
                uint64_t j = recio_rng_below(&rng, i), t = win[i - 1];
                win[i - 1] = win[j];
                win[j] = t;
            }
            for (i = 0; i < at && out < ds.n; i++, out++) CHECK_EQ_INT(got[out], win[i]);
        }
        CHECK_EQ_INT(out, ds.n);
    }
    free(got);
    free(cperm);
    free(win);
    free_dataset(&ds);
}

static int write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    if (n) fwrite(data, 1, n, f);
    return fclose(f);
}

/* Open must fail (or the first next must), with a message naming `name` (and `off` when given). */
static void expect_error(const char *uris, unsigned r, unsigned nsplit, const recio_split_desc *d, const char *name, const char *off) {
    recio_split *s = NULL;
    recio_record rec;
    char msg[RECIO_ERRMSG_SIZE];
    recio_split_desc dm;
    recio_err e;
    memset(&dm, 0, sizeof dm);
    if (d) dm = *d;
    dm.errmsg = msg; /* a failed open says why here, and its handle is NULL */
    e = recio_split_open_desc(&s, uris, r, nsplit, &dm);
    if (e == RECIO_OK) {
        while ((e = recio_split_next(s, &rec)) == RECIO_OK) {}
        snprintf(msg, sizeof msg, "%s", recio_split_errmsg(s)); /* after the open the handle tells */
    } else {
        CHECK(s == NULL);
    }
    CHECK(e < 0);
    CHECK(strstr(msg, name) != NULL);
    if (off) CHECK(strstr(msg, off) != NULL);
    if (!strstr(msg, name) || (off && !strstr(msg, off))) fprintf(stderr, "  message: %s\n", msg);
    recio_split_close(s);
}

static void test_bad_input(void) {
    char dir[64] = "/tmp/recio_split_bad_XXXXXX", p[200], q[256], uris[600]; /* room for t_mkdtemp */
    unsigned char junk[64], rec[16];
    recio_split_desc d;
    recio_writer *w = NULL;
    recio_split *s = (recio_split *)1;
    CHECK(t_mkdtemp(dir) != NULL);
    memset(&d, 0, sizeof d);
    memset(junk, 'x', sizeof junk);
    memset(rec, 7, sizeof rec);
    snprintf(p, sizeof p, "%s/good.rec", dir);
    CHECK_EQ_INT(recio_writer_open(&w, p), RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, rec, sizeof rec), RECIO_OK); /* at 0, 24 bytes */
    CHECK_EQ_INT(recio_writer_write(w, rec, sizeof rec), RECIO_OK); /* at 24 */
    CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
    /* a missing file */
    snprintf(uris, sizeof uris, "%s;%s/missing.rec", p, dir);
    expect_error(uris, 0, 1, &d, "missing.rec", NULL);
    /* not RecordIO: a size that is not whole words, then text of the right size */
    snprintf(q, sizeof q, "%s/odd.rec", dir);
    CHECK(write_file(q, junk, 63) == 0);
    snprintf(uris, sizeof uris, "%s;%s", p, q);
    expect_error(uris, 0, 2, &d, "odd.rec", "offset 60");
    CHECK(write_file(q, junk, 64) == 0);
    expect_error(q, 0, 1, &d, "odd.rec", "offset 0");
    /* a stale index: an offset past the end, then one inside a record */
    snprintf(q, sizeof q, "%s.idx", p);
    CHECK(write_file(q, "0\t0\n1\t4000\n", 11) == 0);
    d.mode = RECIO_SPLIT_INDEX;
    expect_error(p, 0, 1, &d, "good.rec.idx", "4000");
    CHECK(write_file(q, "0\t0\n1\t12\n", 9) == 0);
    expect_error(p, 0, 1, &d, "good.rec", "offset 12");
    d.shuffle = RECIO_SHUFFLE_FULL;
    expect_error(p, 0, 1, &d, "good.rec", "offset 12");
    d.shuffle = RECIO_SHUFFLE_CHUNK;
    d.chunk_records = 1;
    expect_error(p, 0, 1, &d, "good.rec", "offset");
    /* the chunk shuffle's streamed index: the .idx parser's words on its line, the offset checks */
    CHECK(write_file(q, "0\t0\n1\t24 x\n", 11) == 0);
    expect_error(p, 0, 1, &d, "good.rec.idx: line 2: unexpected text after the offset", NULL);
    CHECK(write_file(q, "0\t0\n1\t26\n", 9) == 0);
    expect_error(p, 0, 1, &d, "good.rec.idx: offset 26 is not a record head (not 4-aligned): stale index?", NULL);
    CHECK(write_file(q, "0\t0\n1\t48\n", 9) == 0);
    expect_error(p, 0, 1, &d, "good.rec.idx: offset 48 is past the end of the data (48 bytes): stale index?", NULL);
    d.shuffle = RECIO_SHUFFLE_FULL; /* the whole index in memory: the same checks */
    CHECK(write_file(q, "0\t0\n1\t26\n", 9) == 0);
    expect_error(p, 0, 1, &d, "good.rec.idx: offset 26 is not a record head (not 4-aligned): stale index?", NULL);
    CHECK(write_file(q, "0\t0\n1\t0\n", 8) == 0);
    expect_error(p, 0, 1, &d, "good.rec.idx: offset 0 is listed twice", NULL);
    d.shuffle = RECIO_SHUFFLE_CHUNK;
    /* no index at all in index mode */
    remove(q);
    d.shuffle = RECIO_SHUFFLE_NONE;
    expect_error(p, 0, 1, &d, "good.rec", "recio index");
    /* rank and nsplit */
    memset(&d, 0, sizeof d);
    expect_error(p, 3, 3, &d, "rank 3", NULL);
    expect_error(p, 0, 0, &d, "nsplit", NULL);
    /* only empty files */
    snprintf(q, sizeof q, "%s/empty.rec", dir);
    CHECK(write_file(q, "", 0) == 0);
    expect_error(q, 0, 1, &d, "empty", NULL);
    /* a wildcard that matches nothing */
    snprintf(q, sizeof q, "%s/nothing-*.rec", dir);
    expect_error(q, 0, 1, &d, "nothing-*.rec", NULL);
    /* NULL out-pointer; a NULL handle is harmless */
    CHECK_EQ_INT(recio_split_open(NULL, p, 0, 1), RECIO_ERR_ARG);
    recio_split_close(NULL);
    CHECK(recio_split_next(NULL, NULL) == RECIO_ERR_ARG);
    (void)s;
    CHECK(t_rmtree(dir) == 0);
}

/* Wildcards and directories expand in sorted order; 0-byte files contribute nothing. */
static void test_wildcards_and_directories(void) {
    dataset ds;
    char uri[200];
    uint32_t *ids;
    long n;
    recio_split_desc d;
    make_dataset_min(&ds, 4, 0, 1);
    ids = (uint32_t *)malloc(ds.n * sizeof *ids);
    memset(&d, 0, sizeof d);
    snprintf(uri, sizeof uri, "%s/part-*.rec", ds.dir);
    n = read_part(uri, 0, 1, &d, ids, (long)ds.n, NULL);
    CHECK_EQ_INT(n, ds.n);
    while (n-- > 0) CHECK_EQ_INT(ids[n], n);
    n = read_part(ds.dir, 0, 1, &d, ids, (long)ds.n, NULL);
    CHECK_EQ_INT(n, ds.n);
    while (n-- > 0) CHECK_EQ_INT(ids[n], n);
    free(ids);
    free_dataset(&ds);
}

/* A filesystem of its own for plain paths (here: files held in memory, its only hook open_read)
   replaces the local files entirely. */
typedef struct memfile {
    const unsigned char *data;
    size_t size, pos;
} memfile;
static recio_buffer mem_files[2];
static int64_t mf_read(void *u, void *buf, size_t n) {
    memfile *m = (memfile *)u;
    size_t k = m->size - m->pos < n ? m->size - m->pos : n;
    memcpy(buf, m->data + m->pos, k);
    m->pos += k;
    return (int64_t)k;
}
static int mf_seek(void *u, uint64_t off) {
    memfile *m = (memfile *)u;
    if (off > m->size) return -1;
    m->pos = (size_t)off;
    return 0;
}
static int64_t mf_size(void *u) { return (int64_t)((memfile *)u)->size; }
static int mf_close(void *u) {
    free(u);
    return 0;
}
static recio_err mf_open(void *user, const char *path, recio_io *io, char *why) {
    memfile *m;
    (void)user, (void)why;
    if (strcmp(path, "mem:0") && strcmp(path, "mem:1")) return RECIO_ERR_IO;
    m = (memfile *)calloc(1, sizeof *m);
    m->data = mem_files[path[4] - '0'].data;
    m->size = mem_files[path[4] - '0'].size;
    io->read = mf_read;
    io->seek = mf_seek;
    io->size = mf_size;
    io->close = mf_close;
    io->user = m;
    return RECIO_OK;
}

static void test_custom_opener(void) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_split_desc d;
    recio_split *s = NULL;
    recio_record rec;
    recio_split_where w;
    recio_fs fs;
    int f, i, n = 0;
    memset(&fs, 0, sizeof fs);
    fs.open_read = mf_open;
    for (f = 0; f < 2; f++) {
        recio_writer *wr = NULL;
        memset(&mem_files[f], 0, sizeof mem_files[f]);
        CHECK_EQ_INT(rec_writer_mem(&wr, &mem_files[f]), RECIO_OK);
        for (i = 0; i < 10; i++) {
            unsigned char v[12] = {0};
            recio_store_u32le(v, (uint32_t)(f * 10 + i)); /* ids are little-endian, as rec_id reads them */
            CHECK_EQ_INT(recio_writer_write(wr, v, sizeof v), RECIO_OK);
        }
        CHECK_EQ_INT(recio_writer_close(wr), RECIO_OK);
    }
    memset(&d, 0, sizeof d);
    d.fs = &fs;
    d.ordinals = 1;
    /* 2 files of 10 records of 20 bytes: 400 bytes, step 200: rank 1 = records 10..19 */
    CHECK_EQ_INT(recio_split_open_desc(&s, "mem:0;mem:1", 1, 2, &d), RECIO_OK);
    while (rec_split_next_where(s, &rec, &w) == RECIO_OK) {
        CHECK_EQ_INT(rec_id(&rec), 10 + n);
        CHECK(strcmp(w.path, "mem:1") == 0);
        CHECK_EQ_INT(w.ordinal, n);
        n++;
    }
    CHECK_EQ_INT(n, 10);
    recio_split_close(s);
    /* a hook that fails without saying why: its code's words, not a stale errno's */
    errno = EAGAIN;
    d.errmsg = msg;
    CHECK_EQ_INT(recio_split_open_desc(&s, "mem:0;mem:7", 0, 1, &d), RECIO_ERR_IO);
    CHECK(s == NULL && strcmp(msg, "mem:7: offset 0: cannot open: I/O error") == 0);
    recio_split_close(s);
    recio_buffer_free(&mem_files[0]);
    recio_buffer_free(&mem_files[1]);
}

/* reset() in byte mode reads the same part again; an epoch changes nothing unshuffled. */
static void test_byte_reset_rereads(void) {
    dataset ds;
    recio_split *s = NULL;
    recio_record rec;
    uint32_t first[4096];
    long n = 0, k = 0;
    make_dataset_min(&ds, 3, 0, 20);
    CHECK_EQ_INT(recio_split_open(&s, ds.uris, 1, 3), RECIO_OK);
    while (recio_split_next(s, &rec) == RECIO_OK)
        if (n < 4096) first[n++] = rec_id(&rec);
    CHECK(recio_split_next(s, &rec) == RECIO_END); /* stays at the end */
    CHECK_EQ_INT(recio_split_reset(s, 5), RECIO_OK);
    while (recio_split_next(s, &rec) == RECIO_OK) {
        if (k < n) CHECK_EQ_INT(rec_id(&rec), first[k]);
        k++;
    }
    CHECK_EQ_INT(k, n);
    recio_split_close(s);
    free_dataset(&ds);
}

/* A global .idx of ds: "id SEP offset" lines, in id order with CRLF and no final newline, or in
   reverse order (unsorted) with LF. */
static void write_global_idx(const dataset *ds, const char *path, const char *sep, int reverse) {
    FILE *f = fopen(path, "wb");
    uint64_t k;
    CHECK(f != NULL);
    for (k = 0; f && k < ds->n; k++) {
        uint64_t i = reverse ? ds->n - 1 - k : k;
        fprintf(f, "%llu%s%llu%s", (unsigned long long)i, sep, (unsigned long long)ds->goff[i], reverse ? "\n" : k + 1 < ds->n ? "\r\n" : "");
    }
    if (f) fclose(f);
}

/* The chunk shuffle streams a sorted index (per file or global, CRLF, no final newline) and loads
   an unsorted one whole: the same order every way. Indexes are read in 64 KB blocks whatever their
   lines; a duplicate is named by its index and its offset in its own file. */
static void test_chunk_index_sources(void) {
    dataset ds;
    char gidx[128], fidx[160], *big;
    uint32_t *a, *b;
    recio_split_desc d;
    uint64_t i;
    FILE *f;
    long na, nb;
    make_dataset_min(&ds, 4, 1, 300);
    a = (uint32_t *)malloc(ds.n * sizeof *a);
    b = (uint32_t *)malloc(ds.n * sizeof *b);
    memset(&d, 0, sizeof d);
    d.shuffle = RECIO_SHUFFLE_CHUNK;
    d.seed = 3;
    d.chunk_records = 4;
    d.window_chunks = 3;
    na = read_part(ds.uris, 1, 2, &d, a, (long)ds.n, NULL);
    snprintf(gidx, sizeof gidx, "%s/all.idx", ds.dir);
    write_global_idx(&ds, gidx, "\t", 0);
    d.index_path = gidx;
    nb = read_part(ds.uris, 1, 2, &d, b, (long)ds.n, NULL);
    CHECK(na > 0 && na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0);
    write_global_idx(&ds, gidx, " ", 1);
    nb = read_part(ds.uris, 1, 2, &d, b, (long)ds.n, NULL);
    CHECK(na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0);
    /* the .idx is read in 64 KB blocks: lines that cross a block's end, CRLF and no final newline
       read as in memory; a line longer than a block is refused with its number */
    d.index_path = NULL;
    d.shuffle = RECIO_SHUFFLE_FULL;
    d.seed = 11;
    na = read_part(ds.uris, 0, 1, &d, a, (long)ds.n, NULL); /* each file's own index */
    CHECK_EQ_INT(na, ds.n);
    big = (char *)malloc(70001);
    memset(big, ' ', 500); /* over 500 bytes a line: 64 KB blocks end inside lines */
    big[500] = 0;
    write_global_idx(&ds, gidx, big, 0);
    CHECK(ds.n * 500 > 2 * 65536);
    d.index_path = gidx;
    nb = read_part(ds.uris, 0, 1, &d, b, (long)ds.n, NULL);
    CHECK(nb == na && memcmp(a, b, (size_t)na * sizeof *a) == 0);
    d.shuffle = RECIO_SHUFFLE_CHUNK; /* the streamed chunk starts: every record, in order */
    nb = read_part(ds.uris, 0, 1, &d, b, (long)ds.n, NULL);
    CHECK_EQ_INT(nb, ds.n);
    memset(big, ' ', 70000); /* line 2 is longer than a block */
    f = fopen(gidx, "wb");
    fprintf(f, "0\t0\n1");
    fwrite(big, 1, 70000, f);
    fprintf(f, "%llu\n", (unsigned long long)ds.goff[1]);
    fclose(f);
    expect_error(ds.uris, 0, 1, &d, "all.idx: line 2 is too long", NULL);
    d.shuffle = RECIO_SHUFFLE_FULL;
    expect_error(ds.uris, 0, 1, &d, "all.idx: line 2 is too long", NULL);
    /* a file's own index with an offset twice: that index, and the offset in that file (the
       first record of a later file, followed by another) */
    d.index_path = NULL;
    for (i = 1; i + 1 < ds.n && !(ds.ord[i] == 0 && ds.file[i] != ds.file[0] && ds.file[i + 1] == ds.file[i]); i++) {}
    CHECK(i + 1 < ds.n);
    if (i + 1 < ds.n) {
        char want[256];
        uint64_t second = ds.goff[i + 1] - ds.goff[i]; /* the second record's offset in its file */
        snprintf(fidx, sizeof fidx, "%s/part-%u.rec.idx", ds.dir, ds.file[i]);
        f = fopen(fidx, "wb");
        fprintf(f, "0\t0\n1\t%llu\n2\t%llu\n", (unsigned long long)second, (unsigned long long)second);
        fclose(f);
        snprintf(want, sizeof want, "part-%u.rec.idx: offset %llu is listed twice", ds.file[i], (unsigned long long)second);
        expect_error(ds.uris, 0, 1, &d, want, NULL);
    }
    free(big);
    free(a);
    free(b);
    free_dataset(&ds);
}

/* A key range keeps the index lines whose key is in [key_begin, key_end): each file's own .idx
   (keys are the ordinals there) or one global index (keys are the record ids), with every shuffle
   and several parts; key_end UINT64_MAX has no upper end, key_end 0 is no range. The records the parts yield together are exactly
   those of the range, each once; a range that takes nothing is refused, naming it. The chunk
   shuffle hops from record to record inside a chunk, so it is tried where the range takes
   consecutive records (the global index, keys in file order): per-file ranges leave gaps. */
static void check_key_range(const dataset *ds, const char *gidx, uint64_t kb, uint64_t ke) {
    static const recio_split_shuffle sh[] = {RECIO_SHUFFLE_NONE, RECIO_SHUFFLE_FULL, RECIO_SHUFFLE_CHUNK};
    uint32_t *ids = (uint32_t *)malloc((ds->n + 1) * sizeof *ids);
    unsigned char *seen = (unsigned char *)calloc(ds->n + 1, 1);
    unsigned k, nsplit, r;
    for (k = 0; k < (gidx ? 3u : 2u); k++)
        for (nsplit = 1; nsplit <= 3; nsplit += 2) {
            recio_split_desc d;
            uint64_t i, want = 0, got = 0;
            memset(&d, 0, sizeof d);
            memset(seen, 0, ds->n + 1);
            d.key_begin = kb, d.key_end = ke, d.index_path = gidx, d.shuffle = sh[k], d.seed = 5, d.chunk_records = 3;
            for (r = 0; r < nsplit; r++) {
                long j, n = read_part(ds->uris, r, nsplit, &d, ids, (long)ds->n, NULL);
                CHECK(n >= 0);
                for (j = 0; j < n; j++) {
                    CHECK(ids[j] < ds->n && !seen[ids[j]]);
                    if (ids[j] < ds->n) seen[ids[j]] = 1;
                }
                got += n > 0 ? (uint64_t)n : 0;
            }
            for (i = 0; i < ds->n; i++) {
                uint64_t key = gidx ? i : ds->ord[i];
                int in = !ke || (key >= kb && key < ke);
                want += (uint64_t)in;
                CHECK_EQ_INT(seen[i], in);
            }
            CHECK_EQ_INT(got, want);
        }
    free(ids);
    free(seen);
}

static void test_key_range(void) {
    dataset ds;
    char gidx[128];
    recio_split_desc d;
    make_dataset_min(&ds, 3, 1, 60);
    check_key_range(&ds, NULL, 1, 5);
    check_key_range(&ds, NULL, 3, UINT64_MAX);
    check_key_range(&ds, NULL, 3, 0);
    snprintf(gidx, sizeof gidx, "%s/all.idx", ds.dir);
    write_global_idx(&ds, gidx, "\t", 1); /* unsorted: loaded whole */
    check_key_range(&ds, gidx, 7, ds.n - 9);
    write_global_idx(&ds, gidx, "\t", 0); /* sorted: the chunk shuffle streams it */
    check_key_range(&ds, gidx, 1, ds.n - 1);
    memset(&d, 0, sizeof d);
    d.key_begin = ds.n + 5, d.key_end = ds.n + 10, d.index_path = gidx;
    expect_error(ds.uris, 0, 1, &d, "all.idx: the index lists no record", NULL);
    free_dataset(&ds);
}

int main(void) {
    RUN(test_byte_parts_random_datasets);
    RUN(test_index_parts_random_datasets);
    RUN(test_equalize_index_and_byte);
    RUN(test_shuffle_full_and_chunk);
    RUN(test_shuffle_is_documented_fisher_yates);
    RUN(test_bad_input);
    RUN(test_wildcards_and_directories);
    RUN(test_custom_opener);
    RUN(test_byte_reset_rereads);
    RUN(test_chunk_index_sources);
    RUN(test_chunk_shuffle_is_documented);
    RUN(test_key_range);
    return t_done("split_props");
}
