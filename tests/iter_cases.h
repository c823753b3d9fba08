/* Iterator cases that must hold in every build: included by test_iter.c (library with
   RECIO_THREADS, workers 0..8) and test_iter_nothreads.c (the header without RECIO_THREADS).
   Expected ids, offsets and seeds are worked out by hand from the dataset's layout (iter_util.h). */
#ifndef RECIO_ITER_CASES_H
#define RECIO_ITER_CASES_H
#include "iter_util.h"
#include "rec_util.h"

#define DS10 "build/test_iter/ten.rec"

static unsigned ic_workers = 0; /* set by the including test */

static recio_iter *ic_open(const recio_iter_desc *d) {
    recio_iter *it = NULL;
    recio_err e = recio_iter_open(&it, d);
    CHECK_EQ_INT(e, RECIO_OK);
    if (e) fprintf(stderr, "open: %s\n", it ? recio_iter_errmsg(it) : recio_strerror(e));
    return it;
}

static void ic_check_ids(const iu_batch *b, unsigned count, unsigned pad, const unsigned *ids) {
    unsigned i;
    CHECK_EQ_INT(b->count, count);
    CHECK_EQ_INT(b->pad, pad);
    for (i = 0; i < count + pad; i++) CHECK_EQ_INT(b->ids[i], 100 + ids[i]);
}

/* Items carry the seed the transform got: recio_seed_for(42, epoch, key of the record). */
static void ic_check_items(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    unsigned i;
    iu_desc(&d, DS10, 4, RECIO_LAST_PAD, ic_workers);
    it = ic_open(&d);
    if (!it) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK_EQ_INT(b.batch, 4);
    CHECK_EQ_INT(b.epoch, 0);
    CHECK_EQ_INT(b.index, 0);
    CHECK_EQ_INT(b.workers, ic_workers); /* the threads that made it, 0 in pull mode */
    for (i = 0; i < 4; i++) {
        const uint64_t *o = (const uint64_t *)b.data + 4 * i;
        CHECK(b.keys[i] == iu_offset(i)); /* file 0 */
        CHECK(o[0] == recio_seed_for(42, 0, iu_offset(i)));
        CHECK_EQ_INT(o[1], 100 + i);
        CHECK_EQ_INT(o[2], 3 * (i + 1));
        CHECK_EQ_INT(o[3], i);
        CHECK(b.labels[2 * i] == (float)i && b.labels[2 * i + 1] == -(float)i);
    }
    recio_iter_close(it);
}

static void ic_last_batch_pad(void) {
    static const unsigned b0[] = {0, 1, 2, 3}, b1[] = {4, 5, 6, 7}, b2[] = {8, 9, 0, 1};
    recio_iter_desc d;
    recio_iter *it;
    iu_batch got[8];
    recio_err e;
    iu_desc(&d, DS10, 4, RECIO_LAST_PAD, ic_workers);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(iu_run(it, got, 8, 2, &e), 6);
    CHECK_EQ_INT(e, RECIO_END);
    ic_check_ids(&got[0], 4, 0, b0);
    ic_check_ids(&got[1], 4, 0, b1);
    ic_check_ids(&got[2], 2, 2, b2);
    ic_check_ids(&got[5], 2, 2, b2);
    CHECK_EQ_INT(got[2].index, 2);
    CHECK_EQ_INT(got[3].epoch, 1);
    CHECK_EQ_INT(got[3].index, 0);
    CHECK(got[0].sum != got[3].sum); /* epoch 1 gives every record new random seeds */
    recio_iter_close(it);
}

static void ic_last_batch_discard(void) {
    recio_iter_desc d;
    recio_iter *it;
    iu_batch got[8];
    recio_err e;
    recio_batch b;
    iu_desc(&d, DS10, 4, RECIO_LAST_DISCARD, ic_workers);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(iu_run(it, got, 8, 1, &e), 2);
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END); /* stays at the end until reset */
    recio_iter_close(it);
    d.run.batch = 5; /* divides 10: nothing dropped */
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(iu_run(it, got, 8, 1, &e), 2);
    recio_iter_close(it);
}

static void ic_last_batch_roll_over(void) {
    static const unsigned e0a[] = {0, 1, 2, 3}, e0b[] = {4, 5, 6, 7}, e1a[] = {8, 9, 0, 1}, e1b[] = {2, 3, 4, 5},
                          e1c[] = {6, 7, 8, 9}, e2b[] = {4, 5, 6, 7};
    recio_iter_desc d;
    recio_iter *it;
    iu_batch got[12];
    recio_err e;
    iu_desc(&d, DS10, 4, RECIO_LAST_ROLL_OVER, ic_workers);
    if (!(it = ic_open(&d))) return;
    /* epoch 0: 0-3 4-7 (8 9 roll over); epoch 1: 8 9 0 1, 2-5, 6-9; epoch 2: 0-3, 4-7 (8 9 wait) */
    CHECK_EQ_INT(iu_run(it, got, 12, 3, &e), 7);
    ic_check_ids(&got[0], 4, 0, e0a);
    ic_check_ids(&got[1], 4, 0, e0b);
    ic_check_ids(&got[2], 4, 0, e1a);
    ic_check_ids(&got[3], 4, 0, e1b);
    ic_check_ids(&got[4], 4, 0, e1c);
    ic_check_ids(&got[5], 4, 0, e0a);
    ic_check_ids(&got[6], 4, 0, e2b);
    CHECK_EQ_INT(got[2].epoch, 1);
    recio_iter_close(it);
}

/* A reset in the middle of an epoch rolls nothing over and starts the next epoch clean. */
static void ic_reset_mid_epoch(void) {
    static const unsigned b0[] = {0, 1, 2, 3};
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    iu_batch got[4];
    iu_desc(&d, DS10, 4, RECIO_LAST_ROLL_OVER, ic_workers);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
    CHECK_EQ_INT(iu_run(it, got, 1, 1, NULL), 1);
    ic_check_ids(&got[0], 4, 0, b0);
    CHECK_EQ_INT(got[0].epoch, 1);
    recio_iter_close(it);
}

/* The shuffle buffer hands out a permutation, a new one per epoch, the same for the same seed. */
static void ic_shuffle_buffer(void) {
    recio_iter_desc d;
    recio_iter *it;
    iu_batch a[40], b[40];
    unsigned seen[64], i, j, moved = 0;
    size_t n;
    iu_desc(&d, "build/test_iter/sixty.rec", 3, RECIO_LAST_DISCARD, ic_workers);
    d.run.shuffle_buffer = 16;
    if (!(it = ic_open(&d))) return;
    n = iu_run(it, a, 40, 2, NULL);
    recio_iter_close(it);
    CHECK_EQ_INT(n, 40);
    memset(seen, 0, sizeof seen);
    for (i = 0; i < 20; i++)
        for (j = 0; j < 3; j++) {
            unsigned id = (unsigned)a[i].ids[j] - 100;
            if (id < 64) seen[id]++;
            moved += id != 3 * i + j;
        }
    for (i = 0; i < 60; i++) CHECK_EQ_INT(seen[i], 1);
    CHECK(moved > 40);
    CHECK(memcmp(a[0].ids, a[20].ids, sizeof a[0].ids) != 0 || memcmp(a[1].ids, a[21].ids, sizeof a[0].ids) != 0);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(iu_run(it, b, 40, 2, NULL), 40);
    CHECK(iu_same(a, b, 40));
    recio_iter_close(it);
}

/* Save at every batch of 3 epochs; a fresh iterator restored from it gives exactly the rest. */
static void ic_save_restore_mode(recio_last_batch lb, size_t sbuf, unsigned workers2, int parts) {
    recio_iter_desc d;
    recio_iter *it, *it2;
    iu_batch all[64], rest[64];
    unsigned char blob[512];
    size_t n, k, size, m;
    recio_batch b;
    iu_desc(&d, parts ? "build/test_iter/sixty.rec;" DS10 : "build/test_iter/sixty.rec", parts ? 6 : 7, lb, ic_workers);
    d.run.shuffle_buffer = sbuf;
    if (parts) { /* rank 1 of 2, rotating, indexed global shuffle: every epoch another order and part */
        d.rank = 1;
        d.nsplit = 2;
        d.rotate_shards = 1, d.source.mode = RECIO_SPLIT_INDEX, d.source.shuffle = RECIO_SHUFFLE_FULL;
    }
    if (!(it = ic_open(&d))) return;
    n = iu_run(it, all, 64, 3, NULL);
    recio_iter_close(it);
    CHECK(n >= (parts ? 15u : 24u)); /* 35 records a part: 5 or 6 batches of 6 an epoch */
    for (k = 0; k <= n; k += 1 + k % 3) {
        size_t taken = 0;
        if (!(it = ic_open(&d))) return;
        while (taken < k) { /* take k batches, crossing epochs as iu_run does */
            recio_err e = recio_iter_next(it, &b);
            if (e == RECIO_END) recio_iter_reset(it);
            else taken++;
        }
        if (k == n) CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END); /* a save after the end */
        CHECK_EQ_INT(recio_iter_save(it, NULL, 0, &size), RECIO_OK);
        CHECK(size <= sizeof blob);
        CHECK_EQ_INT(recio_iter_save(it, blob, size - 1, &size), RECIO_ERR_SMALL);
        CHECK_EQ_INT(recio_iter_save(it, blob, sizeof blob, &size), RECIO_OK);
        recio_iter_close(it);
        d.run.workers = workers2;
        it2 = ic_open(&d);
        d.run.workers = ic_workers;
        if (!it2) return;
        CHECK_EQ_INT(recio_iter_restore(it2, blob, size), RECIO_OK);
        m = iu_run(it2, rest, 64, 3 - (k ? all[k - 1].epoch : 0), NULL); /* epochs left from the saved one */
        CHECK_EQ_INT(m, n - k);
        if (m != n - k) fprintf(stderr, "lb %d sbuf %zu k %zu n %zu ep %llu\n", (int)lb, sbuf, k, n, (unsigned long long)(k ? all[k-1].epoch : 0));
        CHECK(iu_same(all + k, rest, m < n - k ? m : n - k));
        recio_iter_close(it2);
    }
}

static void ic_save_restore(void) {
    ic_save_restore_mode(RECIO_LAST_PAD, 0, 0, 0);
    ic_save_restore_mode(RECIO_LAST_DISCARD, 0, ic_workers ? 1 : 0, 0);
    ic_save_restore_mode(RECIO_LAST_ROLL_OVER, 0, 0, 0);
    ic_save_restore_mode(RECIO_LAST_ROLL_OVER, 9, ic_workers ? 3 : 0, 0);
    ic_save_restore_mode(RECIO_LAST_PAD, 5, 0, 0);
    ic_save_restore_mode(RECIO_LAST_ROLL_OVER, 4, ic_workers ? 2 : 0, 1);
}

static void ic_restore_rejects(void) {
    recio_iter_desc d;
    recio_iter *it, *it2;
    unsigned char blob[64];
    size_t size;
    iu_desc(&d, DS10, 4, RECIO_LAST_PAD, ic_workers);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(recio_iter_save(it, blob, sizeof blob, &size), RECIO_OK);
    CHECK_EQ_INT(size, 48);
    d.source.seed = 7; /* other options: another position */
    if (!(it2 = ic_open(&d))) return;
    CHECK_EQ_INT(recio_iter_restore(it2, blob, size), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(it2), "other options") != NULL);
    blob[4] = 9;
    CHECK_EQ_INT(recio_iter_restore(it, blob, size), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(recio_iter_restore(it, blob, 7), RECIO_ERR_FORMAT);
    recio_iter_close(it);
    recio_iter_close(it2);
}

/* A corrupt record mid-epoch: the batches before it, then the error naming file and offset. */
static void ic_corrupt_mid_epoch(void) {
    static const char path[] = "build/test_iter/corrupt.rec";
    char want[128];
    size_t n;
    unsigned char *bytes = t_slurp("build/test_iter/sixty.rec", &n);
    FILE *f = fopen(path, "wb");
    recio_iter_desc d;
    recio_iter *it;
    iu_batch got[16];
    recio_err e;
    unsigned round;
    if (!bytes || !f) {
        CHECK(0);
        return;
    }
    bytes[iu_offset(25)] ^= 0xff; /* record 25's magic */
    fwrite(bytes, 1, n, f);
    fclose(f);
    free(bytes);
    snprintf(want, sizeof want, "%s: offset %llu: bad magic", path, (unsigned long long)iu_offset(25));
    for (round = 0; round < 2; round++) {
        iu_desc(&d, path, 4, RECIO_LAST_PAD, ic_workers);
        d.run.shuffle_buffer = round ? 3 : 0;
        if (!(it = ic_open(&d))) return;
        CHECK_EQ_INT(iu_run(it, got, 16, 1, &e), round ? 5 : 6); /* 24 records, or 22 of them via the buffer */
        CHECK_EQ_INT(e, RECIO_ERR_CORRUPT);
        CHECK(strncmp(recio_iter_errmsg(it), want, strlen(want)) == 0);
        CHECK_EQ_INT(iu_run(it, got, 16, 1, &e), 0);
        CHECK_EQ_INT(e, RECIO_ERR_CORRUPT); /* kept until reset */
        recio_iter_close(it);
    }
}

static void ic_transform_error(void) {
    recio_iter_desc d;
    recio_iter *it;
    iu_batch got[16];
    recio_err e;
    unsigned fail = 100 + 9;
    char want[96];
    iu_desc(&d, DS10, 3, RECIO_LAST_PAD, ic_workers);
    d.item.user = &fail;
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(iu_run(it, got, 16, 1, &e), 3);
    CHECK_EQ_INT(e, RECIO_ERR_DECODE);
    snprintf(want, sizeof want, "%s: offset %llu: cannot decode this one", DS10, (unsigned long long)iu_offset(9));
    CHECK(strcmp(recio_iter_errmsg(it), want) == 0);
    recio_iter_close(it);
}

static void ic_bad_options(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[512];
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_ERR_ARG);
    CHECK(it == NULL);
    iu_desc(&d, "build/test_iter/missing.rec", 4, RECIO_LAST_PAD, ic_workers);
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_IO);
    CHECK(it == NULL && strncmp(msg, "build/test_iter/missing.rec: ", 29) == 0);
    iu_desc(&d, DS10, 4, (recio_last_batch)7, ic_workers);
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_ERR_ARG);
}

/* Two files: keys name the file in their top 16 bits; order is file by file. */
static void ic_two_files(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    unsigned i;
    iu_desc(&d, DS10 ";" DS10, 20, RECIO_LAST_PAD, ic_workers);
    if (!(it = ic_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK_EQ_INT(b.count, 20);
    for (i = 0; i < 20; i++) {
        CHECK(b.keys[i] == (((uint64_t)(i / 10) << 48) | iu_offset(i % 10)));
        CHECK_EQ_INT(b.ids[i], 100 + i % 10);
    }
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END);
    recio_iter_close(it);
}

/* The records of split part `part` in epoch `epoch`, as keys (file << 48 | offset): the reference
   for the iterator's order (recio_split is checked against dmlc-core in its own tests). */
static size_t ic_split_keys(const char *uris, unsigned part, unsigned nsplit, int index, uint64_t epoch, uint64_t *keys, size_t max) {
    recio_split_desc sd;
    recio_split *s = NULL;
    recio_record rec;
    recio_split_where w;
    size_t n = 0;
    memset(&sd, 0, sizeof sd);
    sd.mode = index ? RECIO_SPLIT_INDEX : RECIO_SPLIT_BYTES;
    sd.shuffle = index ? RECIO_SHUFFLE_FULL : RECIO_SHUFFLE_NONE;
    sd.seed = 42;
    sd.epoch = epoch;
    CHECK_EQ_INT(recio_split_open_desc(&s, uris, part, nsplit, &sd), RECIO_OK);
    while (n < max && rec_split_next_where(s, &rec, &w) == RECIO_OK) keys[n++] = ((uint64_t)w.file << 48) | rec.offset;
    recio_split_close(s);
    return n;
}

/* Batch-1 keys of the iterator over `epochs` epochs; epoch boundaries at ends[]. */
static size_t ic_iter_keys(recio_iter_desc *d, unsigned epochs, uint64_t *keys, size_t max, size_t *ends) {
    recio_iter *it = ic_open(d);
    recio_batch b;
    size_t n = 0;
    unsigned e = 0;
    if (!it) return 0;
    while (n < max && e < epochs) {
        recio_err r = recio_iter_next(it, &b);
        if (r == RECIO_OK) keys[n++] = b.keys[0];
        else if (r == RECIO_END) ends[e++] = n, recio_iter_reset(it);
        else break;
    }
    recio_iter_close(it);
    return n;
}

/* Parts, rotation and the indexed global shuffle come from recio_split, epoch by epoch. */
static void ic_split_parts(void) {
    static const char uris[] = "build/test_iter/sixty.rec;" DS10;
    uint64_t want[80], got[240];
    size_t ends[3], n, m, total = 0;
    unsigned r, e, mode;
    recio_iter_desc d;
    for (mode = 0; mode < 3; mode++) /* parts; rotating parts; indexed + shuffled, rotating */
        for (r = 0; r < 3; r++) {
            iu_desc(&d, uris, 1, RECIO_LAST_PAD, ic_workers);
            d.rank = r;
            d.nsplit = 3;
            d.rotate_shards = mode > 0;
            d.source.shuffle = mode == 2 ? RECIO_SHUFFLE_FULL : RECIO_SHUFFLE_NONE; /* implies the index */
            n = ic_iter_keys(&d, 3, got, 240, ends);
            CHECK_EQ_INT(ends[2], n);
            for (e = 0; e < 3; e++) {
                size_t from = e ? ends[e - 1] : 0;
                unsigned part = mode ? (r + e) % 3 : r;
                m = ic_split_keys(uris, part, 3, mode == 2, e, want, 80);
                CHECK_EQ_INT(ends[e] - from, m);
                CHECK(m == ends[e] - from && memcmp(got + from, want, m * 8) == 0);
                if (mode == 0 && e == 0) total += m;
            }
        }
    CHECK_EQ_INT(total, 70); /* the parts cover both files */
}

/* Equalised parts: every rank gives the same number of batches per epoch. */
static void ic_split_equalise(void) {
    static const char uris[] = "build/test_iter/sixty.rec;" DS10;
    uint64_t got[100];
    size_t ends[1], n0 = 0;
    unsigned r;
    recio_iter_desc d;
    for (r = 0; r < 4; r++) {
        size_t n;
        iu_desc(&d, uris, 1, RECIO_LAST_PAD, ic_workers);
        d.rank = r;
        d.nsplit = 4;
        d.source.mode = RECIO_SPLIT_INDEX, d.source.equalize = RECIO_EQUALIZE_PAD;
        n = ic_iter_keys(&d, 1, got, 100, ends);
        if (!r) n0 = n;
        CHECK_EQ_INT(n, n0);
    }
    CHECK_EQ_INT(n0, 18); /* ceil(70 / 4) */
}

static void ic_make_data(void) {
    iu_make(DS10, 10);
    iu_make("build/test_iter/sixty.rec", 60);
}

static void ic_all(void) {
    ic_make_data();
    RUN(ic_check_items);
    RUN(ic_last_batch_pad);
    RUN(ic_last_batch_discard);
    RUN(ic_last_batch_roll_over);
    RUN(ic_reset_mid_epoch);
    RUN(ic_shuffle_buffer);
    RUN(ic_save_restore);
    RUN(ic_restore_rejects);
    RUN(ic_corrupt_mid_epoch);
    RUN(ic_transform_error);
    RUN(ic_bad_options);
    RUN(ic_two_files);
    RUN(ic_split_parts);
    RUN(ic_split_equalise);
}
#endif
