/* Allocation-failure sweeps over every open path (issue 23, coverage): the reader, the writer, the
   split, the transform parse, the prefetcher and the iterator with its side files (index,
   path_imglist, mean_img; workers 0 and 1). One helper fails the k-th allocation for k = 1, 2, ...
   until the operation (the open and its first record or batch) no longer reaches k, and checks each
   time: the error is RECIO_ERR_NOMEM with words for the caller (errmsg, or the handle's message),
   nothing is left allocated (counted by the allocator itself, so it holds without ASan too), and an
   open that succeeded, with or without a failure on the way, gives the right first record or batch.
   The iterator is also swept over whole epochs: after a refusal in the middle of one (in next, a
   worker, the cache), no wrong batch, then or after the reset (test_iter_no_wrong_batch_after). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "tmpdir.h"
#include "image_write.h"
#include <pthread.h>

/* ---- the failing allocator: counts calls and live blocks under a lock (workers allocate too) ---- */
typedef struct as_ctx {
    pthread_mutex_t lock;
    long calls, fail_at, live;
    int failed;
} as_ctx;

static void *as_alloc(size_t n, void *u) {
    as_ctx *c = (as_ctx *)u;
    void *p = NULL;
    pthread_mutex_lock(&c->lock);
    if (++c->calls == c->fail_at) {
        c->failed = 1;
    } else if ((p = malloc(n ? n : 1)) != NULL) {
        c->live++;
    }
    pthread_mutex_unlock(&c->lock);
    return p;
}

static void as_free(void *p, void *u) {
    as_ctx *c = (as_ctx *)u;
    if (!p) return;
    pthread_mutex_lock(&c->lock);
    c->live--;
    pthread_mutex_unlock(&c->lock);
    free(p);
}

/* One operation under allocator a: the open, its first record or batch, the close. Returns the
   first error, with words in msg; sets *right when it succeeded and gave the expected data. */
typedef recio_err (*as_op)(void *user, recio_allocator a, char *msg, int *right);

/* Fail allocation k = 1, 2, ... until op runs without reaching k; returns that k (0 on a failure). */
static long as_sweep(const char *what, as_op op, void *user) {
    long k;
    for (k = 1; k < 20000; k++) {
        as_ctx c;
        recio_allocator a;
        char msg[RECIO_ERRMSG_SIZE];
        int right = 0, bad = t_case_bad;
        recio_err e;
        memset(&c, 0, sizeof c);
        pthread_mutex_init(&c.lock, NULL);
        c.fail_at = k;
        a.alloc = as_alloc, a.free = as_free, a.user = &c;
        msg[0] = 0;
        e = op(user, a, msg, &right);
        pthread_mutex_destroy(&c.lock);
        CHECK_EQ_INT(c.live, 0); /* nothing leaked, whatever failed */
        if (e == RECIO_OK) {
            CHECK(right); /* a failure on the way (retried or not needed) never changes the data */
        } else {
            CHECK(c.failed);             /* no error but from the refused allocation */
            CHECK_EQ_INT(e, RECIO_ERR_NOMEM);
            CHECK(msg[0] != 0);          /* words for the caller */
        }
        if (t_case_bad != bad) {
            fprintf(stderr, "  %s: allocation %ld refused: %s (%s)\n", what, k, recio_strerror(e), msg);
            return 0;
        }
        if (e == RECIO_OK && !c.failed) break;
    }
    printf("  %s: %ld allocation points swept\n", what, k - 1);
    CHECK(k > 1 && k < 20000);
    return k;
}

/* ---- the dataset: 3 small PNG records (id 10+i, labels i, 2i), their .idx, a .lst, a mean .npy ---- */
static char as_dir[64] = "/tmp/recio-alloc-XXXXXX", as_rec[128], as_idx[128], as_lst[128], as_npy[128], as_out[128];
static unsigned char as_payload[3][4096];
static size_t as_size[3];

static void as_put(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n) exit(1);
    fclose(f);
}

static void as_make(void) {
    static t_mem_out png;
    recio_writer *w = NULL;
    recio_writer_desc wd;
    unsigned char px[6 * 5 * 3], npy[16 * 8 + 4 * 3 * 4 * 4];
    const char *hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4), }";
    unsigned i, k;
    if (!t_mkdtemp(as_dir)) exit(1);
    snprintf(as_rec, sizeof as_rec, "%s/d.rec", as_dir);
    snprintf(as_idx, sizeof as_idx, "%s/d.idx", as_dir);
    snprintf(as_lst, sizeof as_lst, "%s/d.lst", as_dir);
    snprintf(as_npy, sizeof as_npy, "%s/mean.npy", as_dir);
    snprintf(as_out, sizeof as_out, "%s/out.rec", as_dir);
    memset(&wd, 0, sizeof wd);
    wd.index_path = as_idx;
    if (recio_writer_open_desc(&w, as_rec, &wd) != RECIO_OK) exit(1);
    for (i = 0; i < 3; i++) {
        float lab[2];
        lab[0] = (float)i, lab[1] = 2.0f * (float)i;
        for (k = 0; k < sizeof px; k++) px[k] = (unsigned char)(k * 7 + i * 50);
        png.n = 0;
        if (!stbi_write_png_to_func(t_to_mem, &png, 6, 5, 3, px, 18)) exit(1);
        as_size[i] = recio_irecord_pack_header(as_payload[i], lab, 2, 10 + i, 0);
        memcpy(as_payload[i] + as_size[i], png.b, (size_t)png.n);
        as_size[i] += (size_t)png.n;
        if (recio_writer_write(w, as_payload[i], as_size[i]) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
    as_put(as_lst, "10\t7\ta.png\n11\t8\tb.png\n12\t9\tc.png\n", 33);
    /* a version 1 .npy: magic, u16 header length, header padded with spaces to 16 and '\n' */
    memcpy(npy, "\x93NUMPY\x01\x00", 8);
    k = (unsigned)strlen(hdr);
    memcpy(npy + 10, hdr, k);
    while ((10 + k + 1) % 16) npy[10 + k++] = ' ';
    npy[10 + k++] = '\n';
    npy[8] = (unsigned char)k, npy[9] = 0;
    for (i = 0; i < 48; i++) {
        float f = (float)i / 8.0f;
        memcpy(npy + 10 + k + 4 * i, &f, 4);
    }
    as_put(as_npy, npy, 10 + k + 4 * 48);
}

/* ---- the operations ---- */
static recio_err op_reader(void *user, recio_allocator a, char *msg, int *right) {
    recio_reader_desc d;
    recio_reader *r = NULL;
    recio_record rec;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.alloc = a, d.errmsg = msg, d.use_mmap = user != NULL;
    if ((e = recio_reader_open_desc(&r, as_rec, &d)) != RECIO_OK) return CHECK(r == NULL), e;
    if ((e = recio_reader_next(r, &rec)) != RECIO_OK)
        snprintf(msg, RECIO_ERRMSG_SIZE, "%s", recio_reader_errmsg(r));
    else
        *right = rec.size == as_size[0] && memcmp(rec.data, as_payload[0], rec.size) == 0;
    recio_reader_close(r);
    return e;
}

/* Open, write two records with an index (atomically), close; then the file read back plainly. */
static recio_err op_writer(void *user, recio_allocator a, char *msg, int *right) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    recio_reader *r = NULL;
    recio_record rec;
    recio_err e;
    char idx[160];
    (void)user;
    remove(as_out);
    snprintf(idx, sizeof idx, "%s.idx", as_out);
    memset(&d, 0, sizeof d);
    d.alloc = a, d.errmsg = msg, d.index_path = idx, d.atomic = 1;
    if ((e = recio_writer_open_desc(&w, as_out, &d)) != RECIO_OK) return CHECK(w == NULL), e;
    e = recio_writer_write(w, as_payload[0], as_size[0]);
    if (e == RECIO_OK) e = recio_writer_write(w, as_payload[1], as_size[1]);
    if (e != RECIO_OK) snprintf(msg, RECIO_ERRMSG_SIZE, "write: %s", recio_writer_errmsg(w));
    if (recio_writer_close(w) != RECIO_OK && e == RECIO_OK) e = RECIO_ERR_NOMEM, strcpy(msg, "close");
    if (e != RECIO_OK) return e;
    if (recio_reader_open(&r, as_out) != RECIO_OK) return RECIO_OK;
    *right = recio_reader_next(r, &rec) == RECIO_OK && rec.size == as_size[0] && !memcmp(rec.data, as_payload[0], rec.size) &&
             recio_reader_next(r, &rec) == RECIO_OK && rec.size == as_size[1] && !memcmp(rec.data, as_payload[1], rec.size) &&
             recio_reader_next(r, &rec) == RECIO_END;
    recio_reader_close(r);
    return RECIO_OK;
}

/* Indexed, shuffled, part 0 of 1: the first record is the permutation's first, as without failures. */
static size_t split_first;
static recio_err op_split(void *user, recio_allocator a, char *msg, int *right) {
    recio_split_desc d;
    recio_split *s = NULL;
    recio_record rec;
    recio_err e;
    size_t i;
    (void)user;
    memset(&d, 0, sizeof d);
    d.alloc = a, d.errmsg = msg, d.mode = RECIO_SPLIT_INDEX, d.index_path = as_idx, d.shuffle = RECIO_SHUFFLE_FULL, d.seed = 5;
    if ((e = recio_split_open_desc(&s, as_rec, 0, 1, &d)) != RECIO_OK) {
        recio_split_close(s); /* a failed split open returns its handle too */
        return e;
    }
    if ((e = recio_split_next(s, &rec)) != RECIO_OK) {
        snprintf(msg, RECIO_ERRMSG_SIZE, "%s", recio_split_errmsg(s));
    } else {
        for (i = 0; i < 3 && !(rec.size == as_size[i] && !memcmp(rec.data, as_payload[i], rec.size)); i++) {
        }
        if (split_first == 99) split_first = i; /* the run without failures sets what the others give */
        *right = i < 3 && i == split_first;
    }
    recio_split_close(s);
    return e;
}

/* Parse and apply: the pixels of a failure-free run. */
static unsigned char tr_ref[3 * 4 * 4];
static int tr_have;
static recio_err op_transform(void *user, recio_allocator a, char *msg, int *right) {
    recio_transform_desc d;
    recio_transform *t = NULL;
    recio_image in, out;
    recio_err e;
    unsigned char px[6 * 5 * 3];
    size_t k;
    (void)user;
    memset(&d, 0, sizeof d);
    d.alloc = a;
    e = t_parse_ex(&t, "random_apply(0.5, rotate(10)) resize(4,4) random_flip(0.5) brightness(0.2)", &d, msg,
                                 RECIO_ERRMSG_SIZE);
    if (e != RECIO_OK) return CHECK(t == NULL), e;
    for (k = 0; k < sizeof px; k++) px[k] = (unsigned char)(k * 13);
    in = recio_image_wrap(px, 6, 5, 3, RECIO_U8, RECIO_HWC, 18);
    memset(&out, 0, sizeof out);
    if ((e = recio_transform_apply(t, &in, &out, 3)) != RECIO_OK) {
        strcpy(msg, "apply");
    } else {
        if (!tr_have) memcpy(tr_ref, out.data, sizeof tr_ref), tr_have = 1;
        *right = recio_image_bytes(&out) == sizeof tr_ref && memcmp(out.data, tr_ref, sizeof tr_ref) == 0;
    }
    recio_image_free(&out);
    recio_transform_free(t);
    return e;
}

/* The prefetcher of issue 23 item 2: depth 4, 2 threads, slots of 64 bytes; items 0..2 of epoch 0. */
static recio_err pf_fetch(void *user, recio_prefetch_slot *slot, unsigned worker) {
    (void)user, (void)worker;
    if (slot->seq >= 3) return RECIO_END;
    memset(slot->data, (int)slot->seq + 1, 64);
    slot->size = 64;
    return RECIO_OK;
}

static recio_err op_prefetch(void *user, recio_allocator a, char *msg, int *right) {
    recio_prefetch_desc d;
    recio_prefetch *p = NULL;
    recio_prefetch_slot *slot;
    recio_err e;
    unsigned n = 0;
    (void)user;
    memset(&d, 0, sizeof d);
    d.fetch = pf_fetch, d.depth = 4, d.threads = 2, d.slot_size = 64, d.alloc = a;
    if ((e = recio_prefetch_create(&p, &d)) != RECIO_OK) return strcpy(msg, "create"), CHECK(p == NULL), e;
    while ((e = recio_prefetch_next(p, &slot)) == RECIO_OK) {
        n += slot->seq == n && slot->size == 64 && ((unsigned char *)slot->data)[63] == n + 1;
        recio_prefetch_release(p, slot);
    }
    if (e == RECIO_END) e = RECIO_OK, *right = n == 3;
    else snprintf(msg, RECIO_ERRMSG_SIZE, "%s", recio_prefetch_errmsg(p));
    recio_prefetch_destroy(p);
    return e;
}

/* The iterator with every side file: index + shuffle, path_imglist, mean_img, a cache; user says the
   workers. The first batch must equal a failure-free run's (labels from the .lst). */
typedef struct it_case {
    unsigned workers;
    int have;
    unsigned char data[2 * 3 * 4 * 4 * 4];
    float labels[2 * 2];
    uint64_t ids[2];
} it_case;

static recio_err op_iter(void *user, recio_allocator a, char *msg, int *right) {
    it_case *c = (it_case *)user;
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.uris = as_rec, d.source.index_path = as_idx, d.source.shuffle = RECIO_SHUFFLE_FULL, d.source.seed = 9;
    d.item.spec = "resize(4,4) random_flip(0.5) float chw";
    d.labels.imglist = as_lst, d.item.mean_img = as_npy, d.run.cache_bytes = 1 << 20;
    d.run.batch = 2, d.labels.width = 2, d.run.workers = c->workers, d.alloc = a;
    if ((e = (d.errmsg = msg, recio_iter_open(&it, &d))) != RECIO_OK) return CHECK(it == NULL), e;
    if ((e = recio_iter_next(it, &b)) != RECIO_OK) {
        snprintf(msg, RECIO_ERRMSG_SIZE, "%s", recio_iter_errmsg(it));
    } else if (b.item_bytes * 2 == sizeof c->data && b.count == 2) {
        if (!c->have) {
            memcpy(c->data, b.data, sizeof c->data), memcpy(c->labels, b.labels, sizeof c->labels);
            memcpy(c->ids, b.ids, sizeof c->ids), c->have = 1;
            /* the labels are the .lst's (7, 8, 9 for ids 10, 11, 12), padded with -1 */
            CHECK(b.labels[0] == (float)(b.ids[0] - 3) && b.labels[1] == -1.0f);
        }
        *right = !memcmp(b.data, c->data, sizeof c->data) && !memcmp(b.labels, c->labels, sizeof c->labels) &&
                 !memcmp(b.ids, c->ids, sizeof c->ids);
    }
    recio_iter_close(it);
    return e;
}

/* ---- no wrong batch afterwards: a failure in the middle of an epoch ----
   recio.h promises that recio_iter_next's error is kept until recio_iter_reset, which starts the next
   epoch. So: every batch delivered, before or after a refused allocation (in next, in a worker, in the
   cache, in reset), must be the batch of the same (epoch, index) in a run with the plain allocator
   (checksum of the tensor, ids and labels), taken in order; an error is NOMEM with words and comes
   again from next until the reset; a failed reset is NOMEM and the next one works; and a whole epoch
   follows the failure. Batch 1 over 3 records: a failure can land between batches. */
#define EP_EPOCHS 6
#define EP_BATCHES 3
typedef struct ep_batch {
    uint64_t sum, id;
    float labels[2];
} ep_batch;

typedef struct ep_case {
    unsigned workers;
    ep_batch want[EP_EPOCHS][EP_BATCHES]; /* from the plain allocator, never from a failing run */
    long reported, absorbed, in_reset;    /* refusals after the open: next's error, or none (the batch
                                             must be right all the same), or in reset */
} ep_case;

static void ep_desc(recio_iter_desc *d, const ep_case *c) {
    memset(d, 0, sizeof *d);
    d->uris = as_rec, d->source.index_path = as_idx, d->source.shuffle = RECIO_SHUFFLE_FULL, d->source.seed = 9;
    d->item.spec = "resize(4,4) random_flip(0.5) float chw";
    d->labels.imglist = as_lst, d->item.mean_img = as_npy, d->run.cache_bytes = 1 << 20;
    d->run.batch = 1, d->labels.width = 2, d->run.workers = c->workers;
}

static ep_batch ep_of(const recio_batch *b) {
    ep_batch e;
    e.sum = recio_batch_checksum(b, RECIO_SUM_BYTES), e.id = b->ids[0];
    e.labels[0] = b->labels[0], e.labels[1] = b->labels[1];
    return e;
}

/* The reference: EP_EPOCHS epochs with the default allocator. */
static void ep_reference(ep_case *c) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    unsigned e, i;
    ep_desc(&d, c);
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_OK);
    if (!it) return;
    for (e = 0; e < EP_EPOCHS; e++) {
        for (i = 0; i < EP_BATCHES; i++) {
            CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
            CHECK(b.epoch == e && b.index == i && b.count == 1);
            c->want[e][i] = ep_of(&b);
        }
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END);
        CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK);
    }
    recio_iter_close(it);
    /* the epochs differ (shuffle and flips), so a batch of another epoch would show */
    CHECK(memcmp(&c->want[0][0], &c->want[1][0], sizeof c->want[0][0]) || memcmp(&c->want[0][1], &c->want[1][1], sizeof c->want[0][0]));
}

/* One epoch from where the iterator is: 1 when it ended whole, 0 after an error (checked). */
static int ep_epoch(recio_iter *it, const ep_case *c, int *right) {
    recio_batch b;
    recio_err e;
    unsigned next = 0;
    uint64_t epoch = 0;
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
        ep_batch got = ep_of(&b);
        if (next == 0) epoch = b.epoch;
        if (b.epoch != epoch || b.index != next || b.epoch >= EP_EPOCHS || b.index >= EP_BATCHES || b.count != 1 ||
            memcmp(&got, &c->want[b.epoch][b.index], sizeof got) != 0)
            return *right = 0, 0;
        next++;
    }
    if (e == RECIO_END) return next == EP_BATCHES ? 1 : (*right = 0, 0);
    CHECK_EQ_INT(e, RECIO_ERR_NOMEM);
    CHECK(recio_iter_errmsg(it)[0] != 0);
    CHECK_EQ_INT(recio_iter_next(it, &b), e); /* kept until the reset */
    return 0;
}

/* Whether the refusal happened yet: workers allocate too, so under the allocator's lock. */
static int as_failed(as_ctx *c) {
    int f;
    pthread_mutex_lock(&c->lock);
    f = c->failed;
    pthread_mutex_unlock(&c->lock);
    return f;
}

static recio_err op_iter_epochs(void *user, recio_allocator a, char *msg, int *right) {
    ep_case *c = (ep_case *)user;
    recio_iter_desc d;
    recio_iter *it = NULL;
    as_ctx *ctx = (as_ctx *)a.user;
    recio_err e;
    int epochs, whole, failed_before;
    ep_desc(&d, c);
    d.alloc = a, d.errmsg = msg;
    if ((e = recio_iter_open(&it, &d)) != RECIO_OK) return CHECK(it == NULL), e;
    *right = 1;
    for (epochs = 0; epochs < EP_EPOCHS - 1; epochs++) {
        failed_before = as_failed(ctx);
        whole = ep_epoch(it, c, right);
        if (!*right) break;
        if (!failed_before && as_failed(ctx)) {
            if (whole) c->absorbed++;
            else c->reported++;
        }
        if (whole && (as_failed(ctx) || epochs >= 1)) break; /* a whole epoch after the failure (or none came) */
        failed_before = as_failed(ctx);
        if ((e = recio_iter_reset(it)) != RECIO_OK) {
            CHECK_EQ_INT(e, RECIO_ERR_NOMEM);
            CHECK(recio_iter_errmsg(it)[0] != 0);
            CHECK_EQ_INT(recio_iter_reset(it), RECIO_OK); /* the allocator refuses once */
        }
        if (!failed_before && as_failed(ctx)) c->in_reset++;
    }
    *right = *right && epochs < EP_EPOCHS - 1;
    if (!*right) fprintf(stderr, "  wrong or missing batch after allocation %ld was refused\n", ctx->fail_at);
    recio_iter_close(it);
    return RECIO_OK;
}

/* ---- the cases: a failure-free run first sets the reference, then the sweep ---- */
static void as_reference(as_op op, void *user) {
    as_ctx c;
    recio_allocator a;
    char msg[RECIO_ERRMSG_SIZE] = "";
    int right = 0;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    a.alloc = as_alloc, a.free = as_free, a.user = &c;
    CHECK_EQ_INT(op(user, a, msg, &right), RECIO_OK);
    CHECK(right);
    CHECK_EQ_INT(c.live, 0);
    pthread_mutex_destroy(&c.lock);
}

static void test_reader(void) {
    as_reference(op_reader, NULL);
    as_sweep("reader", op_reader, NULL);
    as_sweep("reader (mmap)", op_reader, as_dir);
}

static void test_writer(void) {
    as_reference(op_writer, NULL);
    as_sweep("writer (atomic, with index)", op_writer, NULL);
}

static void test_split(void) {
    split_first = 99;
    as_reference(op_split, NULL);
    as_sweep("split (indexed, shuffled)", op_split, NULL);
}

static void test_transform(void) {
    as_reference(op_transform, NULL);
    as_sweep("transform parse + apply", op_transform, NULL);
}

static void test_prefetch(void) {
    as_reference(op_prefetch, NULL);
    as_sweep("prefetcher", op_prefetch, NULL);
}

static void test_iter_side_files(void) {
    static it_case c0, c1;
    c0.workers = 0, c1.workers = 1;
    as_reference(op_iter, &c0);
    as_sweep("iterator, pull mode", op_iter, &c0);
    as_reference(op_iter, &c1);
    as_sweep("iterator, 1 worker", op_iter, &c1);
    CHECK(memcmp(c0.data, c1.data, sizeof c0.data) == 0); /* the same batch whatever the workers */
}

/* Failures after the open, in pull mode and with 2 workers: the sweep reaches next (and reset). */
static void test_iter_no_wrong_batch_after(void) {
    static ep_case c0, c2;
    c0.workers = 0, c2.workers = 2;
    ep_reference(&c0);
    as_sweep("iterator epochs, pull mode", op_iter_epochs, &c0);
    printf("    refusals after the open: %ld reported by next, %ld absorbed, %ld in reset\n", c0.reported, c0.absorbed, c0.in_reset);
    CHECK(c0.reported > 0 && c0.absorbed > 0);
    ep_reference(&c2);
    CHECK(memcmp(c0.want, c2.want, sizeof c0.want) == 0); /* the same batches whatever the workers */
    as_sweep("iterator epochs, 2 workers", op_iter_epochs, &c2);
    printf("    refusals after the open: %ld reported by next, %ld absorbed, %ld in reset\n", c2.reported, c2.absorbed, c2.in_reset);
    CHECK(c2.reported > 0); /* which refusals a worker absorbs depends on timing */
}

int main(void) {
    as_make();
    RUN(test_reader);
    RUN(test_writer);
    RUN(test_split);
    RUN(test_transform);
    RUN(test_prefetch);
    RUN(test_iter_side_files);
    RUN(test_iter_no_wrong_batch_after);
    t_rmtree(as_dir);
    return t_done("test_alloc_sweep");
}
