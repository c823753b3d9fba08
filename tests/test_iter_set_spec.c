/* recio_iter_set_spec: a new spec (a new item shape: progressive resizing) from the next epoch on.
   The shape changes at the epoch boundary, never inside an epoch; the batches after the switch are
   those of an iterator opened with the new spec (resize is not random and nothing is shuffled, so
   epoch 1 of the switched iterator equals epoch 0 of a fresh one); a bad spec is refused with words
   and leaves the iterator working; the cache starts over for the new chain; a checkpoint carries
   the spec in force. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "iter_util.h"

#define PHOTOS "build/test_iter_set_spec/photos.rec"
#define IDX "build/test_iter_set_spec/photos.idx"

static const char *photos[] = {"chelsea-500x375.jpg", "coffee-500x333.jpg", "astronaut-375x500.jpg", "rocket-640x480.jpg"};

static recio_iter *open_spec(const char *spec, unsigned workers, size_t cache) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS;
    d.item.spec = spec;
    d.run.batch = 2;
    d.run.workers = workers;
    d.run.cache_bytes = cache;
    d.errmsg = msg;
    if (recio_iter_open(&it, &d) != RECIO_OK) fprintf(stderr, "open '%s': %s\n", spec, msg);
    CHECK(it != NULL);
    return it;
}

/* The next batch's shape and the FNV-1a 64 of its tensor (0 when there is none). */
typedef struct seen {
    recio_err e;
    int w, h;
    size_t bytes;
    uint64_t sum;
} seen;

static seen next_of(recio_iter *it) {
    recio_batch b;
    seen s;
    memset(&s, 0, sizeof s);
    if ((s.e = recio_iter_next(it, &b)) != RECIO_OK) return s;
    s.w = b.item.width, s.h = b.item.height, s.bytes = b.item_bytes;
    s.sum = iu_fnv(b.data, (size_t)(b.count + b.pad) * b.item_bytes);
    return s;
}

/* Epoch 0 with the old shape to its end although the spec was set after batch 0; epoch 1 with the
   new shape, the bytes of a fresh iterator's epoch 0 with the new spec. */
static void test_shape_changes_at_the_epoch_boundary(void) {
    unsigned w;
    for (w = 0; w < 3; w += 2) {
        recio_iter *it = open_spec("resize(8,8)", w, 0), *fresh = open_spec("resize(16,12)", w, 0);
        recio_iter_info info;
        seen a, b, want;
        if (!it || !fresh) return;
        a = next_of(it);
        CHECK(a.e == RECIO_OK && a.w == 8 && a.h == 8 && a.bytes == 8 * 8 * 3);
        CHECK_EQ_INT(recio_iter_set_spec(it, "resize(16,12)"), RECIO_OK);
        CHECK_EQ_INT(recio_iter_errmsg(it)[0], 0);
        b = next_of(it); /* still epoch 0: the old shape */
        CHECK(b.e == RECIO_OK && b.w == 8 && b.h == 8 && b.bytes == 8 * 8 * 3);
        CHECK_EQ_INT(next_of(it).e, RECIO_END);
        recio_iter_stats(it, &info);
        CHECK(info.item.width == 8 && info.item_bytes == 8 * 8 * 3); /* pending: not in force yet */
        CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
        recio_iter_stats(it, &info);
        CHECK(info.item.width == 16 && info.item.height == 12 && info.item_bytes == 16 * 12 * 3);
        CHECK(info.records == RECIO_SPLIT_UNKNOWN && info.batches == RECIO_SPLIT_UNKNOWN); /* byte mode: not counted */
        for (;;) {
            a = next_of(it), want = next_of(fresh);
            CHECK_EQ_INT(a.e, want.e);
            if (a.e != RECIO_OK || want.e != RECIO_OK) break;
            CHECK(a.w == 16 && a.h == 12 && a.bytes == 16 * 12 * 3);
            CHECK(a.sum == want.sum);
        }
        /* a second switch mid-epoch: the reset takes it at once */
        CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
        CHECK_EQ_INT(next_of(it).w, 16);
        CHECK_EQ_INT(recio_iter_set_spec(it, "resize(4,4)"), RECIO_OK);
        CHECK_EQ_INT(next_of(it).w, 16);
        CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
        a = next_of(it);
        CHECK(a.e == RECIO_OK && a.w == 4 && a.h == 4 && a.bytes == 4 * 4 * 3);
        recio_iter_close(it);
        recio_iter_close(fresh);
    }
}

/* Refusals say why and change nothing: a spec that does not parse (at once), one that cannot run on
   the first record (at the reset, which starts the next epoch with the old spec), a callback
   iterator; NULL cancels a pending spec. */
static void test_bad_spec_is_refused_and_the_iterator_works_on(void) {
    recio_iter *it = open_spec("resize(8,8)", 2, 0);
    recio_iter_desc d;
    recio_iter *cb = NULL;
    seen s;
    if (!it) return;
    CHECK_EQ_INT(next_of(it).w, 8);
    CHECK_EQ_INT(recio_iter_set_spec(it, "resize(16,16) flipp"), RECIO_ERR_SPEC);
    CHECK(strstr(recio_iter_errmsg(it), "spec:1:15") != NULL && strstr(recio_iter_errmsg(it), "flipp") != NULL);
    if (!strstr(recio_iter_errmsg(it), "flipp")) fprintf(stderr, "  words: %s\n", recio_iter_errmsg(it));
    s = next_of(it);
    CHECK(s.e == RECIO_OK && s.w == 8);
    CHECK_EQ_INT(next_of(it).e, RECIO_END);
    CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK); /* nothing pending */
    CHECK_EQ_INT(next_of(it).w, 8);
    /* parses, but a 600-pixel crop does not fit the first image (500x375) */
    CHECK_EQ_INT(recio_iter_set_spec(it, "center_crop(600)"), RECIO_OK);
    CHECK(recio_iter_reset(it) != RECIO_OK);
    CHECK(strstr(recio_iter_errmsg(it), "set_spec: the new spec 'center_crop(600)' is not taken") != NULL);
    if (!strstr(recio_iter_errmsg(it), "is not taken")) fprintf(stderr, "  words: %s\n", recio_iter_errmsg(it));
    s = next_of(it);
    CHECK(s.e == RECIO_OK && s.w == 8);
    CHECK_EQ_INT(next_of(it).w, 8);
    CHECK_EQ_INT(next_of(it).e, RECIO_END);
    /* NULL cancels */
    CHECK_EQ_INT(recio_iter_set_spec(it, "resize(4,4)"), RECIO_OK);
    CHECK_EQ_INT(recio_iter_set_spec(it, NULL), RECIO_OK);
    CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
    CHECK_EQ_INT(next_of(it).w, 8);
    recio_iter_close(it);
    /* a callback iterator has no spec to replace */
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS, d.item.transform = iu_transform, d.item.item_bytes = IU_ITEM;
    CHECK_EQ_INT(recio_iter_open(&cb, &d), RECIO_OK);
    CHECK_EQ_INT(recio_iter_set_spec(cb, "resize(4,4)"), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(cb), "opened with a transform callback") != NULL);
    CHECK_EQ_INT(recio_iter_next(cb, &(recio_batch){0}), RECIO_OK);
    recio_iter_close(cb);
    CHECK_EQ_INT(recio_iter_set_spec(NULL, "flip"), RECIO_ERR_ARG);
}

/* The cache is cut again for the new chain and starts empty: a chain with no random op keeps items,
   one that starts with a resize then flips at random keeps the resize's output. */
static void test_cache_starts_over(void) {
    recio_iter *it = open_spec("resize(8,8)", 0, 1 << 20);
    recio_iter_info info;
    if (!it) return;
    while (next_of(it).e == RECIO_OK) {}
    recio_iter_stats(it, &info);
    CHECK(info.cache.mode == RECIO_CACHE_ITEMS && info.cache.records == 4);
    CHECK_EQ_INT(recio_iter_set_spec(it, "resize(16,12) random_flip(0.5)"), RECIO_OK);
    CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
    recio_iter_stats(it, &info);
    CHECK(info.cache.mode == RECIO_CACHE_PREFIX && info.cache.prefix_ops == 1);
    CHECK(info.cache.records == 0 && info.cache.hits == 0 && info.cache.misses == 0);
    while (next_of(it).e == RECIO_OK) {}
    recio_iter_stats(it, &info);
    CHECK(info.cache.records == 4 && info.cache.misses == 4);
    recio_iter_close(it);
}

/* recio_iter_stats counts an epoch of the part where the split counts (index mode): 4 records in
   batches of 3 are 2 batches padded, 1 with the last discarded; part 1 of 2 has 2 records. */
static void test_stats_count_the_part(void) {
    static const recio_last_batch lb[2] = {RECIO_LAST_PAD, RECIO_LAST_DISCARD};
    static const uint64_t want[2] = {2, 1};
    unsigned k;
    for (k = 0; k < 3; k++) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_iter_info info;
        memset(&d, 0, sizeof d);
        d.uris = PHOTOS, d.item.spec = "resize(8,6) chw", d.run.batch = 3, d.source.mode = RECIO_SPLIT_INDEX;
        d.run.last_batch = lb[k & 1];
        if (k == 2) d.nsplit = 2, d.rank = 1;
        CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_OK);
        recio_iter_stats(it, &info);
        CHECK_EQ_INT(info.records, k == 2 ? 2 : 4);
        CHECK_EQ_INT(info.batches, k == 2 ? 1 : want[k]);
        CHECK(info.item.width == 8 && info.item.height == 6 && info.item.channels == 3 && info.item.layout == RECIO_CHW);
        CHECK(info.item.data == NULL && info.item_bytes == 8 * 6 * 3);
        recio_iter_close(it);
    }
}

/* A checkpoint holds the spec in force: after the switch it restores into an iterator opened with
   the new spec (the same next batch), not into one opened with the old. */
static void test_checkpoint_carries_the_spec_in_force(void) {
    recio_iter *it = open_spec("resize(8,8)", 0, 0), *same = open_spec("resize(16,12)", 0, 0), *old = open_spec("resize(8,8)", 0, 0);
    unsigned char blob[256];
    size_t n;
    seen want, got;
    if (!it || !same || !old) return;
    CHECK_EQ_INT(recio_iter_set_spec(it, "resize(16,12)"), RECIO_OK);
    CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
    CHECK_EQ_INT(next_of(it).w, 16);
    CHECK_EQ_INT(recio_iter_save(it, blob, sizeof blob, &n), RECIO_OK);
    want = next_of(it);
    CHECK_EQ_INT(recio_iter_restore(same, blob, n), RECIO_OK);
    got = next_of(same);
    CHECK(got.e == RECIO_OK && got.w == 16 && got.sum == want.sum);
    CHECK_EQ_INT(recio_iter_restore(old, blob, n), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(old), "other options") != NULL);
    recio_iter_close(it);
    recio_iter_close(same);
    recio_iter_close(old);
}

int main(void) {
    mkdir("build", 0755);
    mkdir("build/test_iter_set_spec", 0755);
    iu_pack_photos(PHOTOS, IDX, photos, 4, 99);
    RUN(test_shape_changes_at_the_epoch_boundary);
    RUN(test_bad_spec_is_refused_and_the_iterator_works_on);
    RUN(test_cache_starts_over);
    RUN(test_checkpoint_carries_the_spec_in_force);
    RUN(test_stats_count_the_part);
    remove(PHOTOS);
    remove(IDX);
    return t_done("iter_set_spec");
}
