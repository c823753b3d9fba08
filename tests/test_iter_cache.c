/* The iterator's decoded-image cache (desc.run.cache_bytes, issue 14): the batches (bytes, labels, keys)
   are the same with and without it over 3 shuffled epochs, pull mode and 2 workers, for an eval
   chain (items kept) and a train chain (the prefix before the first random op kept); epochs 2 and 3
   are served from it; a small budget keeps some records and changes nothing; chains that cannot be
   cut say why; a checkpoint does not see the cache. And the cut's rule itself, on random chains of
   the op table: where the rule allows a cut, the whole chain and prefix-then-rest (run through the
   public API, not the cache) give the same bytes for every seed. A private copy of the
   implementation (RECIO_STATIC) reaches the table and the rule. */
#define _POSIX_C_SOURCE 200809L
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "iter_util.h"

#define DIR "build/test_iter_cache"
#define PHOTOS DIR "/photos.rec"
#define NPHOTO 12
#define NOPS ((int)(sizeof recio__ops / sizeof recio__ops[0]))

static const char *photos[NPHOTO] = {"chelsea-500x375.jpg", "coffee-500x333.jpg", "astronaut-375x500.jpg", "rocket-640x480.jpg",
                                     "retina-120x90.jpg", "camera-gray-400x300.jpg", "coffee-progressive-480x360.jpg",
                                     "chelsea-cmyk-300x400.jpg", "astronaut-exif-rot90-400x300.jpg", "chelsea-333x500.png",
                                     "rocket-alpha-256x256.png", "hubble-1600x1200.jpg"};

/* No op is random: the finished items are kept. */
#define EVAL "resize_short(64) center_crop(56) normalize(imagenet) chw"
/* The first random op is random_crop, planned with the decode but a crop only: resize_short's
   output is kept. */
#define TRAIN "resize_short(64) random_crop(48) random_flip(0.5) color_jitter(0.4,0.4,0.4,0.1) normalize(imagenet) chw"
/* Random from the first op: nothing to keep. */
#define TRAIN_RRC "random_resized_crop(48) random_flip(0.5) chw"
/* random_resized_crop's size would set the DCT scale of center_crop's decode: not cut. */
#define CROP_RRC "center_crop(80) random_resized_crop(32)"

/* The photos as image records (id 1000 + i, label i), with a .idx for the full shuffle. */
static void pack(void) {
    t_mkdir("build");
    t_mkdir(DIR);
    iu_pack_photos(PHOTOS, PHOTOS ".idx", photos, NPHOTO, NPHOTO);
}

static recio_iter *open_it(const char *spec, unsigned workers, size_t cache) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[512];
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS;
    d.item.spec = spec;
    d.run.batch = 5; /* 12 records: 3 batches an epoch, the last padded with 3 */
    d.run.workers = workers;
    d.source.mode = 1;
    d.source.shuffle = RECIO_SHUFFLE_FULL;
    d.source.seed = 7;
    d.run.cache_bytes = cache;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) fprintf(stderr, "open '%s': %s\n", spec, msg);
    CHECK(it != NULL);
    return it;
}

/* One epoch's batches: a hash of each batch's tensor, labels and keys. */
#define NB 3
typedef struct epoch_sums {
    uint64_t data[NB], labels[NB], keys[NB];
    unsigned n;
} epoch_sums;

static void take_epoch(recio_iter *it, epoch_sums *s) {
    recio_batch b;
    recio_err e;
    memset(s, 0, sizeof *s);
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
        unsigned n = b.count + b.pad;
        if (s->n == NB) break;
        s->data[s->n] = iu_fnv(b.data, n * b.item_bytes);
        s->labels[s->n] = iu_fnv(b.labels, n * b.label_width * sizeof(float));
        s->keys[s->n] = iu_fnv(b.keys, n * sizeof(uint64_t));
        s->n++;
    }
    if (e != RECIO_END) fprintf(stderr, "next: %s\n", recio_iter_errmsg(it));
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(s->n, NB);
}

/* recio_iter_stats' cache part. */
static void cache_of(recio_iter *it, recio_iter_cache_info *ci) {
    recio_iter_info info;
    recio_iter_stats(it, &info);
    *ci = info.cache;
}

/* The epoch is over and the next not begun: the counts are final (workers make nothing now). */
static void stats_then_reset(recio_iter *it, recio_iter_cache_info *ci) {
    cache_of(it, ci);
    recio_iter_reset(it);
}

static int same_epoch(const epoch_sums *a, const epoch_sums *b) {
    return a->n == b->n && memcmp(a->data, b->data, sizeof a->data) == 0 && memcmp(a->labels, b->labels, sizeof a->labels) == 0 &&
           memcmp(a->keys, b->keys, sizeof a->keys) == 0;
}

/* 3 epochs without the cache and with a budget of `cache` bytes: the same batches; after epoch 1
   every record is kept (when the budget holds them all), and every item of epochs 2 and 3 (12
   records and 3 padding copies each) comes from the cache. */
static void check_same(const char *spec, unsigned workers, size_t cache, recio_iter_cache_mode mode, int all_kept) {
    recio_iter *plain = open_it(spec, workers, 0), *cached = open_it(spec, workers, cache);
    recio_iter_cache_info ci, c1;
    epoch_sums a, b;
    int ep;
    if (!plain || !cached) return;
    for (ep = 0; ep < 3; ep++) {
        take_epoch(plain, &a);
        take_epoch(cached, &b);
        if (!same_epoch(&a, &b)) fprintf(stderr, "  '%s' workers %u cache %zu: epoch %d differs\n", spec, workers, cache, ep), CHECK(0);
        stats_then_reset(cached, ep == 0 ? &c1 : &ci);
        recio_iter_reset(plain);
    }
    CHECK_EQ_INT(ci.mode, mode);
    CHECK_EQ_INT(c1.hits + c1.misses, 15);
    CHECK(ci.bytes <= cache);
    CHECK(ci.records > 0);
    CHECK_EQ_INT(ci.hits + ci.misses, 45);
    if (all_kept) {
        CHECK_EQ_INT(c1.records, NPHOTO);
        CHECK_EQ_INT(ci.records, NPHOTO);
        CHECK_EQ_INT(ci.hits - c1.hits, 30); /* epochs 2 and 3: every item from the cache */
    } else {
        CHECK(ci.records < NPHOTO);
        CHECK(ci.hits > c1.hits && ci.hits - c1.hits < 30);
    }
    cache_of(plain, &ci);
    CHECK_EQ_INT(ci.mode, RECIO_CACHE_OFF);
    CHECK_EQ_INT(ci.records + ci.hits + ci.misses + ci.bytes, 0);
    CHECK(ci.why[0] == 0);
    recio_iter_close(plain);
    recio_iter_close(cached);
}

static void test_eval_chain_same_batches(void) {
    check_same(EVAL, 0, 64 << 20, RECIO_CACHE_ITEMS, 1);
    check_same(EVAL, 2, 64 << 20, RECIO_CACHE_ITEMS, 1);
}

static void test_train_chain_same_batches(void) {
    recio_iter *it = open_it(TRAIN, 0, 64 << 20);
    recio_iter_cache_info ci;
    if (!it) return;
    cache_of(it, &ci);
    CHECK_EQ_INT(ci.mode, RECIO_CACHE_PREFIX);
    CHECK_EQ_INT(ci.prefix_ops, 1); /* resize_short(64) */
    recio_iter_close(it);
    check_same(TRAIN, 0, 64 << 20, RECIO_CACHE_PREFIX, 1);
    check_same(TRAIN, 2, 64 << 20, RECIO_CACHE_PREFIX, 1);
}

/* resize_short(64) keeps 64 x (64..85) x 3 bytes a record, about 15 KB; the eval items are
   56 x 56 x 3 floats (37,632 bytes). 64 KB holds the table (64 slots) and a few of either. */
static void test_small_budget_same_batches(void) {
    check_same(TRAIN, 0, 64 << 10, RECIO_CACHE_PREFIX, 0);
    check_same(TRAIN, 2, 64 << 10, RECIO_CACHE_PREFIX, 0);
    check_same(EVAL, 2, 64 << 10, RECIO_CACHE_ITEMS, 0);
}

/* A budget too small for the table itself keeps nothing and still gives the batches. */
static void test_tiny_budget(void) {
    recio_iter *plain = open_it(TRAIN, 2, 0), *cached = open_it(TRAIN, 2, 100);
    recio_iter_cache_info ci;
    epoch_sums a, b;
    if (!plain || !cached) return;
    take_epoch(plain, &a);
    take_epoch(cached, &b);
    CHECK(same_epoch(&a, &b));
    stats_then_reset(cached, &ci);
    CHECK_EQ_INT(ci.records, 0);
    CHECK_EQ_INT(ci.bytes, 0);
    CHECK_EQ_INT(ci.misses, 15);
    recio_iter_close(plain);
    recio_iter_close(cached);
}

static void check_off(const char *spec, const char *why_has) {
    recio_iter *it = open_it(spec, 2, 64 << 20);
    recio_iter_cache_info ci;
    epoch_sums a;
    if (!it) return;
    take_epoch(it, &a);
    recio_iter_reset(it);
    take_epoch(it, &a);
    stats_then_reset(it, &ci);
    CHECK_EQ_INT(ci.mode, RECIO_CACHE_OFF);
    CHECK_EQ_INT(ci.records + ci.hits + ci.misses + ci.bytes, 0);
    if (!strstr(ci.why, why_has)) fprintf(stderr, "  why: '%s'\n", ci.why), CHECK(0);
    recio_iter_close(it);
}

static void test_uncuttable_chains_say_so(void) {
    check_off(TRAIN_RRC, "starts with a random op (random_resized_crop)");
    check_off(CROP_RRC, "random_resized_crop resizes within the ops planned with the JPEG decode");
    check_off("random_apply(0.5, resize_short(64)) center_crop(40)", "starts with a random op (random_apply)");
}

static void test_callback_not_cached(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_iter_cache_info ci;
    iu_desc(&d, PHOTOS, 4, RECIO_LAST_PAD, 0);
    d.run.cache_bytes = 1 << 20;
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_OK);
    cache_of(it, &ci);
    CHECK_EQ_INT(ci.mode, RECIO_CACHE_OFF);
    CHECK(strstr(ci.why, "transform callback") != NULL);
    recio_iter_close(it);
    cache_of(NULL, &ci);
    CHECK_EQ_INT(ci.mode, RECIO_CACHE_OFF);
}

/* The cache is not part of the options a checkpoint must agree on: same blob, and either restores
   into the other. */
static void test_checkpoint_ignores_cache(void) {
    recio_iter *plain = open_it(TRAIN, 0, 0), *cached = open_it(TRAIN, 0, 64 << 20);
    unsigned char b1[256], b2[256];
    size_t n1 = 0, n2 = 0;
    recio_batch b;
    if (!plain || !cached) return;
    CHECK_EQ_INT(recio_iter_next(plain, &b), RECIO_OK);
    CHECK_EQ_INT(recio_iter_next(cached, &b), RECIO_OK);
    CHECK_EQ_INT(recio_iter_save(plain, b1, sizeof b1, &n1), RECIO_OK);
    CHECK_EQ_INT(recio_iter_save(cached, b2, sizeof b2, &n2), RECIO_OK);
    CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);
    CHECK_EQ_INT(recio_iter_restore(cached, b1, n1), RECIO_OK);
    recio_iter_close(plain);
    recio_iter_close(cached);
}

/* ---- the rule, on random chains ---- */

static float arg_for(int c) {
    switch (c) {
    case RECIO__A_SIZE: return (float)t_between(8, 160);
    case RECIO__A_INT: return (float)t_between(0, 40);
    case RECIO__A_PROB: return (float)t_between(0, 4) / 4;
    case RECIO__A_BITS: return (float)t_between(1, 8);
    case RECIO__A_FRAC: return (float)t_between(1, 10) / 10;
    case RECIO__A_IOU: return -1.0f;
    case RECIO__A_POS: return (float)t_between(5, 20) / 10;
    case RECIO__A_NONNEG: return (float)t_between(0, 10) / 10;
    default: return (float)t_between(-20, 40) / 10;
    }
}

/* One row of the table as spec text with random valid arguments; policies wrap two simple ops. */
static void op_text(const recio__opdef *d, char *s, size_t cap, int depth) {
    int k, n, c = RECIO__A_NUM;
    size_t at;
    if (d->flags & RECIO__OPF_LIST) {
        char a[120], b[120];
        const recio__opdef *x = &recio__ops[t_between(0, NOPS - 1)], *y = &recio__ops[t_between(0, NOPS - 1)];
        if (depth > 0 || (x->flags & RECIO__OPF_LIST)) x = &recio__ops[6]; /* flip */
        if (depth > 0 || (y->flags & RECIO__OPF_LIST)) y = &recio__ops[2]; /* center_crop */
        op_text(x, a, sizeof a, depth + 1);
        op_text(y, b, sizeof b, depth + 1);
        if (strcmp(d->name, "random_apply") == 0) snprintf(s, cap, "random_apply(%g, %s %s)", arg_for(RECIO__A_PROB), a, b);
        else if (strcmp(d->name, "random_subpolicy") == 0) snprintf(s, cap, "random_subpolicy((%s),(%s %s))", a, b, a);
        else if (strcmp(d->name, "random_choice") == 0) snprintf(s, cap, "random_choice(%s, %s)", a, b);
        else snprintf(s, cap, "%s", d->name);
        return;
    }
    n = t_between(d->min, d->max);
    at = (size_t)snprintf(s, cap, "%s", d->name);
    for (k = 0; k < n && at < cap; k++) {
        if (k < 6 && d->check[k]) c = d->check[k];
        at += (size_t)snprintf(s + at, cap - at, "%s%g", k ? "," : "(", arg_for(c));
    }
    if (n && at < cap) snprintf(s + at, cap - at, ")");
}

/* A row, favouring the ops the JPEG planner plans (resizes and crops) so that cuts land inside its
   reach, where the rule has something to decide. */
static const recio__opdef *pick_op(void) {
    static const char *planned[] = {"resize", "resize_short", "center_crop", "crop", "random_crop", "random_resized_crop", "area"};
    int i;
    if (t_between(0, 1)) return &recio__ops[t_between(0, NOPS - 1)];
    for (i = 0; i < NOPS; i++)
        if (strcmp(recio__ops[i].name, planned[t_between(0, 6)]) == 0) break;
    return &recio__ops[i < NOPS ? i : 0];
}

static int same_image(const recio_image *a, const recio_image *b) {
    int y, c, planes;
    size_t row;
    if (a->width != b->width || a->height != b->height || a->channels != b->channels || a->dtype != b->dtype || a->layout != b->layout) return 0;
    planes = a->layout == RECIO_CHW ? a->channels : 1;
    row = (size_t)a->width * recio_dtype_size(a->dtype) * (a->layout == RECIO_CHW ? 1 : (size_t)a->channels);
    for (c = 0; c < planes; c++)
        for (y = 0; y < a->height; y++)
            if (memcmp((const char *)a->data + ((size_t)c * a->height + y) * a->stride, (const char *)b->data + ((size_t)c * b->height + y) * b->stride, row))
                return 0;
    return 1;
}

/* Whole chain vs its first k ops (decoding) then the rest (on pixels), seeds 0..nseed-1: 1 when
   every seed gives the same bytes (or both fail), 0 at the first difference. *ran: seeds compared. */
static int quiet; /* a difference is what the test expects */
static int fused_equals_split(const char *whole, const char *head, const char *tail, const unsigned char *jpg, size_t n, int nseed, int *ran) {
    recio_transform *tw = NULL, *th = NULL, *tt = NULL;
    int s, same = 1;
    if (recio_transform_parse(&tw, whole) || recio_transform_parse(&th, head) || recio_transform_parse(&tt, tail)) {
        fprintf(stderr, "  cannot parse '%s' | '%s'\n", head, tail);
        same = 0;
    }
    for (s = 0; same && s < nseed; s++) {
        recio_image a, p, q;
        recio_err ea, ep, eq = RECIO_ERR_ARG;
        memset(&a, 0, sizeof a), memset(&p, 0, sizeof p), memset(&q, 0, sizeof q);
        ea = t_apply_encoded(tw, jpg, n, &a, (uint64_t)s * 7919 + 1, NULL, NULL, 0);
        ep = t_apply_encoded(th, jpg, n, &p, (uint64_t)s * 7919 + 1, NULL, NULL, 0);
        if (ep == RECIO_OK) eq = recio_transform_apply(tt, &p, &q, (uint64_t)s * 7919 + 1);
        if (ea == RECIO_OK) {
            ++*ran;
            same = eq == RECIO_OK && same_image(&a, &q);
        } else {
            same = ep != RECIO_OK || eq != RECIO_OK; /* the whole chain fails: so must one half */
        }
        if (!same && !quiet) fprintf(stderr, "  seed %d: '%s' | '%s' differs (whole %d, halves %d %d)\n", s, head, tail, ea, ep, eq);
        recio_image_free(&a), recio_image_free(&p), recio_image_free(&q);
    }
    recio_transform_free(tw), recio_transform_free(th), recio_transform_free(tt);
    return same;
}

/* Random chains of 2 to 5 table rows on three JPEGs (baseline 4:2:0, progressive, a larger one):
   wherever recio__tf_cache_cut allows a cut, fused == prefix-then-rest for 6 seeds. 120 cut chains
   natively; 20 under an emulator ($RUN, make cross), where each decode costs fifty times more. */
static void test_rule_holds_on_random_chains(void) {
    static const char *files[] = {"tests/data/photos/chelsea-500x375.jpg", "tests/data/photos/coffee-progressive-480x360.jpg",
                                  "tests/data/photos/rocket-640x480.jpg"};
    unsigned char *jpg[3];
    size_t n[3];
    const char *emulated = getenv("RUN");
    int f, chains = 0, cut = 0, ran = 0, trial, want = emulated && *emulated ? 20 : 120;
    for (f = 0; f < 3; f++) CHECK((jpg[f] = t_slurp(files[f], &n[f])) != NULL);
    for (trial = 0; trial < 4000 && cut < want; trial++) {
        char piece[6][400], whole[2600], head[2600], tail[2600], why[RECIO_ERRMSG_SIZE];
        int len = t_between(2, 5), i, k;
        recio_transform *t = NULL;
        whole[0] = 0;
        for (i = 0; i < len; i++) {
            op_text(pick_op(), piece[i], sizeof piece[i], 0);
            strcat(strcat(whole, i ? " " : ""), piece[i]);
        }
        if (recio_transform_parse(&t, whole) != RECIO_OK) continue;
        k = recio__tf_cache_cut(t, why, sizeof why);
        recio_transform_free(t);
        chains++;
        if (k <= 0) continue;
        head[0] = tail[0] = 0;
        for (i = 0; i < len; i++) strcat(strcat(i < k ? head : tail, (i && i != k) ? " " : ""), piece[i]);
        cut++;
        f = trial % 3;
        if (!fused_equals_split(whole, head, tail, jpg[f], n[f], 6, &ran)) {
            fprintf(stderr, "  on %s\n", files[f]);
            CHECK(0);
            break;
        }
    }
    printf("rule: %d chains, %d cut, %d outputs compared byte for byte\n", chains, cut, ran);
    CHECK(cut >= want * 5 / 6);
    CHECK(ran >= cut * 5 / 2);
    for (f = 0; f < 3; f++) free(jpg[f]);
}

static int top_ops(const recio_transform *t) {
    int i, k = 0;
    for (i = t->first; i >= 0; i = t->nodes[i].next) k++;
    return k;
}

/* Cuts inside the planner's reach that the rule allows (a random crop after the kept ops), on
   chains that plan the crop with the decode: the same bytes for 40 seeds. */
static void test_rule_cuts_inside_the_plan(void) {
    static const char *cases[][2] = {
        {"resize_short(256)", "random_crop(224) random_flip(0.5) normalize(imagenet) chw"},
        {"resize_short(96)", "random_crop(80,64) color_jitter(0.4,0.4,0.4)"},
        {"resize_short(256) center_crop(224)", "random_flip(0.5) color_jitter(0.4,0.4,0.4,0.1) lighting(0.1)"},
        {"resize(200,150) crop(10,5,180,140)", "random_crop(100) random_flip(0.5) random_resized_crop(48)"},
        {"center_crop(300)", "random_crop(128)"},
        {"area resize_short(40)", "random_crop(32)"},
    };
    size_t n;
    unsigned char *jpg = t_slurp("tests/data/photos/chelsea-500x375.jpg", &n);
    int i, ran = 0;
    char whole[512], why[RECIO_ERRMSG_SIZE];
    for (i = 0; jpg && i < (int)(sizeof cases / sizeof cases[0]); i++) {
        recio_transform *t = NULL, *h = NULL;
        snprintf(whole, sizeof whole, "%s %s", cases[i][0], cases[i][1]);
        CHECK_EQ_INT(recio_transform_parse(&t, whole), RECIO_OK);
        CHECK_EQ_INT(recio_transform_parse(&h, cases[i][0]), RECIO_OK);
        if (t && h) CHECK_EQ_INT(recio__tf_cache_cut(t, why, sizeof why), top_ops(h));
        recio_transform_free(t), recio_transform_free(h);
        CHECK(fused_equals_split(whole, cases[i][0], cases[i][1], jpg, n, 40, &ran));
    }
    CHECK_EQ_INT(ran, 40 * 6);
    free(jpg);
}

/* Why the rule refuses a resize after the cut: here the whole chain decodes the JPEG at a DCT
   scale random_resized_crop's 32 pixels allow, the prefix alone at full scale, and the bytes
   differ. (Without libjpeg-turbo there is no DCT scaling and they agree.) */
static void test_rule_refuses_what_differs(void) {
    size_t n;
    unsigned char *jpg = t_slurp("tests/data/photos/chelsea-500x375.jpg", &n);
    recio_transform *t = NULL;
    char why[RECIO_ERRMSG_SIZE];
    int ran = 0;
    CHECK_EQ_INT(recio_transform_parse(&t, "center_crop(300) random_resized_crop(32)"), RECIO_OK);
    if (t) CHECK_EQ_INT(recio__tf_cache_cut(t, why, sizeof why), 0);
    recio_transform_free(t);
    /* `area` kept without its resize: the rest would resize with the linear filter */
    CHECK_EQ_INT(recio_transform_parse(&t, "resize(69,39) area lighting(0.1) resize(56,62)"), RECIO_OK);
    if (t) CHECK_EQ_INT(recio__tf_cache_cut(t, why, sizeof why), 0);
    CHECK(strstr(why, "area before the first random op (lighting) changes a resize after it") != NULL);
    recio_transform_free(t);
    quiet = 1;
    CHECK(!fused_equals_split("resize(69,39) area lighting(0) resize(56,62)", "resize(69,39) area", "lighting(0) resize(56,62)", jpg, n, 1, &ran));
    quiet = 0;
#ifdef RECIO_TURBOJPEG
    quiet = 1;
    CHECK(!fused_equals_split("center_crop(300) random_resized_crop(32)", "center_crop(300)", "random_resized_crop(32)", jpg, n, 10, &ran));
    quiet = 0;
#else
    (void)ran;
#endif
    free(jpg);
}

/* Every row's flag, by the rule a row follows: RECIO__OPF_RANDOM when any of its functions draws
   from the generator. Checked by running each row on an image with seeds 1..24: a row whose output
   changes with the seed must carry the flag (the converse cannot be seen from outside: random_flip
   with P 0 draws and never flips). */
static void test_random_flag_matches_behaviour(void) {
    recio_image in;
    int i, s, y, x;
    CHECK_EQ_INT(recio_image_alloc(&in, 64, 48, 3, RECIO_U8, RECIO_HWC, NULL), RECIO_OK);
    for (y = 0; y < 48; y++)
        for (x = 0; x < 64 * 3; x++) ((unsigned char *)in.data)[(size_t)y * in.stride + x] = (unsigned char)(x * 7 + y * 13 + x * y);
    for (i = 0; i < NOPS; i++) {
        const recio__opdef *d = &recio__ops[i];
        int varies = 0, trial;
        for (trial = 0; trial < 6 && !varies; trial++) {
            char spec[500];
            recio_transform *t = NULL;
            recio_image first, o;
            op_text(d, spec, sizeof spec, 0);
            if (d->check[0] == RECIO__A_SIZE && d->min >= 1) { /* sizes that fit the 64 x 48 image */
                if (strcmp(d->name, "resize") == 0) snprintf(spec, sizeof spec, "resize(40,30)");
                else snprintf(spec, sizeof spec, "%s(%d)", d->name, t_between(8, 40));
            }
            if (strcmp(d->name, "letterbox") == 0) snprintf(spec, sizeof spec, "letterbox(40,40)");
            if (recio_transform_parse(&t, spec) != RECIO_OK) continue;
            memset(&first, 0, sizeof first);
            if (recio_transform_apply(t, &in, &first, 0) == RECIO_OK) {
                for (s = 1; s <= 24 && !varies; s++) {
                    memset(&o, 0, sizeof o);
                    if (recio_transform_apply(t, &in, &o, (uint64_t)s) == RECIO_OK) varies = !same_image(&first, &o);
                    recio_image_free(&o);
                }
            }
            recio_image_free(&first);
            recio_transform_free(t);
        }
        if (varies && !(d->flags & RECIO__OPF_RANDOM)) fprintf(stderr, "  %s depends on the seed: flag it RECIO__OPF_RANDOM\n", d->name), CHECK(0);
    }
    recio_image_free(&in);
}

int main(void) {
    pack();
    RUN(test_eval_chain_same_batches);
    RUN(test_train_chain_same_batches);
    RUN(test_small_budget_same_batches);
    RUN(test_tiny_budget);
    RUN(test_uncuttable_chains_say_so);
    RUN(test_callback_not_cached);
    RUN(test_checkpoint_ignores_cache);
    RUN(test_rule_cuts_inside_the_plan);
    RUN(test_rule_refuses_what_differs);
    RUN(test_random_flag_matches_behaviour);
    RUN(test_rule_holds_on_random_chains);
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed != 0;
}
