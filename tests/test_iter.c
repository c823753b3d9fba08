/* The iterator in the library build (RECIO_THREADS): every case in pull mode and with 1..8
   workers, and the batches identical across all of them. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "iter_cases.h"

static void test_same_batches_for_every_worker_count(void) {
    static const recio_last_batch modes[] = {RECIO_LAST_PAD, RECIO_LAST_DISCARD, RECIO_LAST_ROLL_OVER};
    iu_batch ref[64], got[64];
    unsigned m, w;
    for (m = 0; m < 3; m++) {
        size_t nref = 0;
        for (w = 0; w <= 8; w++) {
            recio_iter_desc d;
            recio_iter *it;
            size_t n;
            iu_desc(&d, "build/test_iter/sixty.rec", 7, modes[m], w);
            d.run.shuffle_buffer = m == 1 ? 0 : 11;
            d.run.prefetch = w ? 1 + w % 3 : 0;
            if (!(it = ic_open(&d))) return;
            n = iu_run(it, w ? got : ref, 64, 3, NULL);
            recio_iter_close(it);
            if (!w) nref = n;
            else CHECK(n == nref && iu_same(ref, got, n));
        }
        CHECK(nref >= 24);
    }
}

/* Close at random moments with workers busy or blocked on a full ring. */
static void test_close_any_moment(void) {
    unsigned round;
    for (round = 0; round < 24; round++) {
        recio_iter_desc d;
        recio_iter *it;
        iu_batch got[32];
        iu_desc(&d, "build/test_iter/sixty.rec", 1 + round % 5, (recio_last_batch)(round % 3), 1 + round % 8);
        d.run.shuffle_buffer = round % 4;
        if (!(it = ic_open(&d))) return;
        iu_run(it, got, round % 13, 2, NULL);
        if (round % 2) recio_iter_reset(it);
        recio_iter_close(it);
    }
}

/* recio_io.close is optional in a filesystem's streams: the iterator reads its side file
   (path_imglist) and the split its .idx through an open_read that leaves it NULL (they used to call it). */
static recio_io closeless[16];
static unsigned ncloseless;
static recio_err open_closeless(void *user, const char *path, recio_io *io, char *why) {
    size_t n = strlen(path);
    recio_err e = t_open_read(io, path);
    (void)user, (void)why;
    if (e == RECIO_OK && n > 4 && (!strcmp(path + n - 4, ".lst") || !strcmp(path + n - 4, ".idx")) && ncloseless < 16)
        closeless[ncloseless++] = *io, io->close = NULL; /* the test closes it */
    return e;
}

static void test_hooks_without_close(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    char msg[RECIO_ERRMSG_SIZE];
    unsigned i;
    recio_fs fs;
    FILE *f;
    iu_make("build/test_iter/closeless.rec", 4);
    f = fopen("build/test_iter/closeless.lst", "w");
    for (i = 0; f && i < 4; i++) fprintf(f, "%u\t%u\tx%u.jpg\n", 100 + i, 50 + i, i);
    if (f) fclose(f);
    iu_desc(&d, "build/test_iter/closeless.rec", 2, RECIO_LAST_PAD, 0);
    d.labels.width = 1;
    d.source.mode = 1;
    d.labels.imglist = "build/test_iter/closeless.lst";
    memset(&fs, 0, sizeof fs);
    fs.open_read = open_closeless;
    d.source.fs = &fs;
    d.errmsg = msg;
    ncloseless = 0;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    CHECK(ncloseless >= 2); /* the .idx and the .lst went through the hook */
    CHECK(it && recio_iter_next(it, &b) == RECIO_OK);
    if (it) CHECK(b.labels[0] == 50.0f && b.labels[1] == 51.0f && b.ids[0] == 100 && b.ids[1] == 101);
    recio_iter_close(it);
    for (i = 0; i < ncloseless; i++) closeless[i].close(closeless[i].user);
}

/* Every io a filesystem's open_read hands out is closed exactly once, also when the k-th one cannot read
   (read == NULL: refused) and the open or a later re-read fails because of it. The hook counts its
   opens and the closes of what it opened. */
static unsigned hk_opens, hk_closes, hk_bad_at;
static recio_io hk_inner[64];
static int hk_close(void *user) {
    hk_closes++;
    return hk_inner[(size_t)user].close(hk_inner[(size_t)user].user);
}
static int64_t hk_read(void *user, void *buf, size_t n) { return hk_inner[(size_t)user].read(hk_inner[(size_t)user].user, buf, n); }
static int hk_seek(void *user, uint64_t off) { return hk_inner[(size_t)user].seek(hk_inner[(size_t)user].user, off); }
static int64_t hk_size(void *user) { return hk_inner[(size_t)user].size(hk_inner[(size_t)user].user); }
static recio_err open_counted(void *user, const char *path, recio_io *io, char *why) {
    size_t k = hk_opens;
    recio_err e;
    (void)user, (void)why;
    if (k >= 64 || (e = t_open_read(&hk_inner[k], path)) != RECIO_OK) return RECIO_ERR_IO;
    hk_opens++;
    memset(io, 0, sizeof *io);
    io->user = (void *)k;
    io->read = hk_opens == hk_bad_at ? NULL : hk_read;
    io->seek = hk_inner[k].seek ? hk_seek : NULL;
    io->size = hk_inner[k].size ? hk_size : NULL;
    io->close = hk_close;
    return RECIO_OK;
}

static void test_hook_io_closed_once(void) {
    unsigned bad;
    iu_make("build/test_iter/hooked.rec", 5);
    for (bad = 0; bad <= 8; bad++) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_batch b;
        char msg[RECIO_ERRMSG_SIZE];
        recio_fs fs;
        unsigned epoch;
        iu_desc(&d, "build/test_iter/hooked.rec", 2, RECIO_LAST_ROLL_OVER, bad % 2);
        memset(&fs, 0, sizeof fs);
        fs.open_read = open_counted;
        d.source.fs = &fs;
        d.errmsg = msg;
        hk_opens = hk_closes = 0, hk_bad_at = bad;
        if (recio_iter_open(&it, &d) == RECIO_OK)
            for (epoch = 0; epoch < 3; epoch++) {
                while (recio_iter_next(it, &b) == RECIO_OK) {}
                recio_iter_reset(it);
            }
        recio_iter_close(it);
        CHECK(hk_opens >= 1);
        CHECK_EQ_INT(hk_closes, hk_opens);
    }
}

/* skip_bad leaves record 1 out: records 0, 2, 3 move up with everything of theirs (labels (i, -i),
   id 100 + i, key = offset, label counts, checksum, the item) and the last place is padding, a copy
   of the first item. Expected values from how iu_make writes the dataset. */
static void test_skip_bad_moves_every_array(void) {
    static const unsigned rec[4] = {0, 2, 3, 0};
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    unsigned fail = 101, i;
    iu_make("build/test_iter/skip.rec", 4);
    iu_desc(&d, "build/test_iter/skip.rec", 4, RECIO_LAST_PAD, 0);
    d.item.user = &fail;
    d.run.skip_bad = 1;
    d.run.checksums = 1;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    CHECK(it && recio_iter_next(it, &b) == RECIO_OK);
    if (!it) return;
    CHECK_EQ_INT(b.count, 3);
    CHECK_EQ_INT(b.pad, 1);
    for (i = 0; i < 4; i++) {
        const uint64_t *item = (const uint64_t *)((const unsigned char *)b.data + i * IU_ITEM);
        CHECK(b.labels[2 * i] == (float)rec[i] && b.labels[2 * i + 1] == -(float)rec[i]);
        CHECK_EQ_INT(b.ids[i], 100 + rec[i]);
        CHECK_EQ_INT(b.keys[i], iu_offset(rec[i]));
        CHECK_EQ_INT(b.label_counts[i], 2);
        CHECK_EQ_INT(item[1], 100 + rec[i]);
        CHECK_EQ_INT(item[2], 3 * (rec[i] + 1));
        CHECK(b.sums[i] == iu_checksum((const unsigned char *)item, IU_ITEM));
    }
    recio_iter_close(it);
}

/* Every allocation of an open with workers refused in turn (2 workers, a prefetch ring of 4,
   shuffled through a buffer, the .idx read): each is a clean RECIO_ERR_NOMEM with its words, the
   handle NULL and nothing left allocated (the prefetcher's refused thread array once had it free
   pointers never set). The first open that gets through may still meet the refusal on a worker:
   then an error, never a wrong batch. A later open with nothing refused gives the batches of an
   open with the default allocator. */
static void sweep_desc(recio_iter_desc *d, t_failalloc *fa, char *msg) {
    iu_desc(d, "build/test_iter/sixty.rec", 7, RECIO_LAST_PAD, 2);
    d->run.prefetch = 4;
    d->run.shuffle_buffer = 5;
    d->source.mode = 1;
    d->errmsg = msg;
    if (fa) d->alloc.alloc = t_fail_alloc, d->alloc.free = t_fail_free, d->alloc.user = fa;
}

static void test_open_allocation_failures(void) {
    recio_iter_desc d;
    recio_iter *it;
    iu_batch ref[32], got[32];
    char msg[RECIO_ERRMSG_SIZE];
    t_failalloc fa;
    size_t nref, n;
    recio_err e;
    long k;
    sweep_desc(&d, NULL, msg);
    if (!(it = ic_open(&d))) return;
    nref = iu_run(it, ref, 32, 2, NULL);
    recio_iter_close(it);
    CHECK(nref >= 18);
    sweep_desc(&d, &fa, msg);
    for (k = 1; k < 400; k++) {
        it = (recio_iter *)&d;
        t_fail_arm(&fa, k);
        if ((e = recio_iter_open(&it, &d)) == RECIO_OK) {
            n = iu_run(it, got, 32, 2, &e);
            CHECK(e == RECIO_ERR_NOMEM || (e == RECIO_END && n == nref && iu_same(ref, got, n)));
            recio_iter_close(it);
            CHECK_EQ_INT(fa.live, 0);
            break;
        }
        CHECK_EQ_INT(e, RECIO_ERR_NOMEM);
        CHECK(it == NULL);
        CHECK(strstr(msg, "out of memory") != NULL);

        CHECK_EQ_INT(fa.failed, 1);
        CHECK_EQ_INT(fa.live, 0);
    }
    CHECK(k > 10 && k < 400);
    t_fail_arm(&fa, 0);
    if (!(it = ic_open(&d))) return;
    n = iu_run(it, got, 32, 2, &e);
    CHECK(e == RECIO_END && n == nref && iu_same(ref, got, n));
    recio_iter_close(it);
    CHECK_EQ_INT(fa.live, 0);
}

#ifdef RECIO_NO_IMAGE
/* Records only: what needs the image section (a spec, and mean_img and mixing, which need one) is
   refused at open with words that say so; the callback path with the same dataset opens. */
static void test_noimage_refuses_image_options_at_open(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    iu_make("build/test_iter/noimg.rec", 4);
    iu_desc(&d, "build/test_iter/noimg.rec", 2, RECIO_LAST_PAD, 0);
    d.errmsg = msg;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    recio_iter_close(it);
    d.item.spec = "float";
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_UNSUPPORTED && !it);
    CHECK(strcmp(msg, "a spec needs the image section, and this build has RECIO_NO_IMAGE: give a transform callback") == 0);
    d.item.spec = NULL;
    d.item.mean_img = "build/test_iter/mean.npy";
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_ARG && !it);
    CHECK(strcmp(msg, "build/test_iter/mean.npy: mean_img needs a spec whose output is float32 (end it with `float`, or `float chw`)") == 0);
    d.item.mean_img = NULL;
    d.mix.mixup_alpha = 0.2f;
    d.mix.num_classes = 4;
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_ARG && !it);
    CHECK(strcmp(msg, "mixing (mixup_alpha or cutmix_alpha set) needs a spec (the item's shape)") == 0);
}
#endif

int main(void) {
    unsigned w;
    static const unsigned counts[] = {0, 1, 3, 8};
    for (w = 0; w < 4; w++) {
        ic_workers = counts[w];
        ic_all();
    }
    RUN(test_same_batches_for_every_worker_count);
    RUN(test_close_any_moment);
    RUN(test_hooks_without_close);
    RUN(test_hook_io_closed_once);
    RUN(test_skip_bad_moves_every_array);
    RUN(test_open_allocation_failures);
#ifdef RECIO_NO_IMAGE
    RUN(test_noimage_refuses_image_options_at_open);
#endif
    return t_done("iter");
}
