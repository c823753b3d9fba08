/* The prefetcher ring under stress: 1..8 producer threads with random delays, reset and destroy at
   random points, errors from fetch, work and begin, and no allocation once the slots have grown.
   Expected values are by construction: item seq of epoch e carries (e, seq) and work's f(e, seq). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include <pthread.h>
#include <time.h>

typedef struct prod {
    uint64_t n;           /* items per epoch */
    uint64_t fail_fetch;  /* fetch fails at this item (UINT64_MAX: never) */
    uint64_t fail_work;
    int fail_begin;
    unsigned max_delay_us;
    pthread_mutex_t mu;   /* guards rng and the counters below */
    uint64_t rng, begins, fetch_running, fetch_overlap;
} prod;

static uint64_t mix(uint64_t e, uint64_t seq) { return recio_seed_for(e * 1000003u + seq, 0, 0); }

static void pause_random(prod *pr) {
    struct timespec ts;
    uint64_t r;
    if (!pr->max_delay_us) return;
    pthread_mutex_lock(&pr->mu);
    r = recio_seed_for(pr->rng++, 0, 0);
    pthread_mutex_unlock(&pr->mu);
    ts.tv_sec = 0;
    ts.tv_nsec = (long)(r % (pr->max_delay_us + 1)) * 1000;
    if (r % 3 == 0) nanosleep(&ts, NULL);
}

static recio_err p_begin(void *user, uint64_t epoch, char *errmsg) {
    prod *pr = (prod *)user;
    pthread_mutex_lock(&pr->mu);
    pr->begins++;
    pthread_mutex_unlock(&pr->mu);
    if (pr->fail_begin) {
        strcpy(errmsg, "list.rec: offset 0: cannot open");
        return RECIO_ERR_IO;
    }
    (void)epoch;
    return RECIO_OK;
}

static recio_err p_fetch(void *user, recio_prefetch_slot *s, unsigned worker) {
    prod *pr = (prod *)user;
    recio_err e = RECIO_OK;
    (void)worker;
    pthread_mutex_lock(&pr->mu);
    if (pr->fetch_running++) pr->fetch_overlap++;
    pthread_mutex_unlock(&pr->mu);
    pause_random(pr);
    if (s->seq >= pr->n) e = RECIO_END;
    else if (s->seq == pr->fail_fetch) {
        sprintf(s->errmsg, "x.rec: offset %llu: bad magic", (unsigned long long)(s->seq * 16));
        e = RECIO_ERR_CORRUPT;
    } else if (recio_prefetch_slot_reserve(s, 2 * sizeof(uint64_t))) e = RECIO_ERR_NOMEM;
    else {
        ((uint64_t *)s->data)[0] = s->seq;
        s->size = sizeof(uint64_t);
        s->tag = s->seq * 16;
    }
    pthread_mutex_lock(&pr->mu);
    pr->fetch_running--;
    pthread_mutex_unlock(&pr->mu);
    return e;
}

static recio_err p_work(void *user, recio_prefetch_slot *s, unsigned worker) {
    prod *pr = (prod *)user;
    (void)worker;
    pause_random(pr);
    if (s->seq == pr->fail_work) {
        strcpy(s->errmsg, "y.rec: offset 64: image cannot be decoded");
        return RECIO_ERR_DECODE;
    }
    ((uint64_t *)s->data)[1] = mix(s->epoch, ((uint64_t *)s->data)[0]);
    s->size = 2 * sizeof(uint64_t);
    return RECIO_OK;
}

static void prod_init(prod *pr, uint64_t n, unsigned delay, uint64_t seed) {
    memset(pr, 0, sizeof *pr);
    pr->n = n;
    pr->fail_fetch = pr->fail_work = UINT64_MAX;
    pr->max_delay_us = delay;
    pr->rng = seed;
    pthread_mutex_init(&pr->mu, NULL);
}

static void make_desc(recio_prefetch_desc *d, prod *pr, unsigned threads, unsigned depth, recio_prefetch_fn work) {
    memset(d, 0, sizeof *d);
    d->fetch = p_fetch;
    d->work = work;
    d->begin = p_begin;
    d->user = pr;
    d->threads = threads;
    d->depth = depth;
}

static recio_prefetch *make(prod *pr, unsigned threads, unsigned depth, int with_work) {
    recio_prefetch_desc d;
    recio_prefetch *p = NULL;
    make_desc(&d, pr, threads, depth, with_work ? p_work : NULL);
    CHECK(recio_prefetch_create(&p, &d) == RECIO_OK);
    return p;
}

/* Take `count` items (all when count is UINT64_MAX) and check each; returns how many came. */
static uint64_t consume(recio_prefetch *p, uint64_t epoch, uint64_t count, int with_work, recio_err *last) {
    uint64_t k = 0;
    recio_prefetch_slot *s;
    recio_err e = RECIO_OK;
    while (k < count && (e = recio_prefetch_next(p, &s)) == RECIO_OK) {
        const uint64_t *v = (const uint64_t *)s->data;
        CHECK_EQ_INT(s->seq, k);
        CHECK_EQ_INT(s->epoch, epoch);
        CHECK_EQ_INT(v[0], k);
        CHECK_EQ_INT(s->tag, k * 16);
        if (with_work) CHECK(v[1] == mix(epoch, k));
        recio_prefetch_release(p, s);
        k++;
    }
    if (last) *last = e;
    return k;
}

static void test_order_every_thread_count(void) {
    unsigned t;
    for (t = 1; t <= 8; t++) {
        prod pr;
        recio_prefetch *p;
        recio_err e;
        uint64_t ep;
        prod_init(&pr, 200, 100, t);
        p = make(&pr, t, 1 + t % 5, 1);
        for (ep = 0; ep < 3; ep++) {
            if (ep) recio_prefetch_reset(p, ep);
            CHECK_EQ_INT(consume(p, ep, UINT64_MAX, 1, &e), 200);
            CHECK_EQ_INT(e, RECIO_END);
            CHECK_EQ_INT(recio_prefetch_next(p, NULL), RECIO_ERR_ARG);
        }
        recio_prefetch_destroy(p);
        CHECK_EQ_INT(pr.fetch_overlap, 0); /* fetch is serialised whatever the thread count */
        CHECK_EQ_INT(pr.begins, 3);
        pthread_mutex_destroy(&pr.mu);
    }
}

/* Items 0 .. n-1 of `epoch`, then error `code` with message `msg`, which stays until a reset. */
static void expect_error(recio_prefetch *p, uint64_t epoch, uint64_t n, recio_err code, const char *msg) {
    recio_err e;
    CHECK_EQ_INT(consume(p, epoch, UINT64_MAX, 1, &e), n);
    CHECK_EQ_INT(e, code);
    CHECK(strcmp(recio_prefetch_errmsg(p), msg) == 0);
    CHECK_EQ_INT(consume(p, epoch, UINT64_MAX, 1, &e), 0);
    CHECK_EQ_INT(e, code);
}

static void test_fetch_error_reaches_consumer(void) {
    prod pr;
    recio_prefetch *p;
    recio_err e;
    prod_init(&pr, 100, 50, 7);
    pr.fail_fetch = 37;
    p = make(&pr, 4, 3, 1);
    expect_error(p, 0, 37, RECIO_ERR_CORRUPT, "x.rec: offset 592: bad magic");
    pr.fail_fetch = UINT64_MAX;
    recio_prefetch_reset(p, 1);
    CHECK(strcmp(recio_prefetch_errmsg(p), "") == 0);
    CHECK_EQ_INT(consume(p, 1, UINT64_MAX, 1, &e), 100);
    CHECK_EQ_INT(e, RECIO_END);
    recio_prefetch_destroy(p);
    pthread_mutex_destroy(&pr.mu);
}

static void test_work_and_begin_errors(void) {
    prod pr;
    recio_prefetch *p;
    prod_init(&pr, 100, 50, 9);
    pr.fail_work = 5;
    p = make(&pr, 3, 4, 1);
    expect_error(p, 0, 5, RECIO_ERR_DECODE, "y.rec: offset 64: image cannot be decoded");
    pr.fail_begin = 1;
    recio_prefetch_reset(p, 1);
    expect_error(p, 1, 0, RECIO_ERR_IO, "list.rec: offset 0: cannot open");
    recio_prefetch_destroy(p);
    pthread_mutex_destroy(&pr.mu);
}

static void test_holding_every_slot_is_an_error(void) {
    prod pr;
    recio_prefetch *p;
    recio_prefetch_slot *s[3];
    unsigned i;
    prod_init(&pr, 10, 0, 1);
    p = make(&pr, 2, 3, 0);
    for (i = 0; i < 3; i++) CHECK_EQ_INT(recio_prefetch_next(p, &s[i]), RECIO_OK);
    CHECK_EQ_INT(recio_prefetch_next(p, &s[0]), RECIO_ERR_ARG); /* not a hang */
    recio_prefetch_destroy(p); /* while holding slots, with producers waiting */
    pthread_mutex_destroy(&pr.mu);
}

/* Reset and destroy at random moments: mid-epoch, with slots held, while producers sleep in a
   callback or wait for a free slot. Every item seen must belong to the epoch asked for. */
static void test_random_reset_and_destroy(void) {
    unsigned round;
    for (round = 0; round < 60; round++) {
        uint64_t r = recio_seed_for(round + 1000, 0, 0), ep;
        unsigned threads = 1 + (unsigned)(r % 8), depth = 1 + (unsigned)((r >> 8) % 6);
        prod pr;
        recio_prefetch *p;
        prod_init(&pr, 1 + (r >> 16) % 80, (unsigned)((r >> 24) % 300), r);
        p = make(&pr, threads, depth, (int)((r >> 32) & 1));
        for (ep = 0; ep < (r >> 40) % 5; ep++) {
            uint64_t take = (r >> (ep * 4)) % (pr.n + 2);
            recio_prefetch_slot *held = NULL;
            if (ep) recio_prefetch_reset(p, ep);
            CHECK_EQ_INT(consume(p, ep, take, (int)((r >> 32) & 1), NULL), take < pr.n ? take : pr.n);
            if (depth > 1 && (r >> 50) % 2 && recio_prefetch_next(p, &held) == RECIO_OK) {
                recio_prefetch_reset(p, ep + 100); /* a held slot survives a reset */
                CHECK(held->epoch == ep);
                recio_prefetch_release(p, held);
            }
        }
        if ((r >> 60) & 1) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL); /* let the ring fill so producers block */
        }
        recio_prefetch_destroy(p);
        pthread_mutex_destroy(&pr.mu);
    }
}

/* Counting allocator: after the first epoch no epoch allocates. */
static size_t n_allocs;
static pthread_mutex_t alloc_mu = PTHREAD_MUTEX_INITIALIZER;
static void *c_alloc(size_t n, void *u) {
    (void)u;
    pthread_mutex_lock(&alloc_mu);
    n_allocs++;
    pthread_mutex_unlock(&alloc_mu);
    return malloc(n);
}
static void c_free(void *q, void *u) {
    (void)u;
    free(q);
}

static void test_no_allocation_in_steady_state(void) {
    prod pr;
    recio_prefetch_desc d;
    recio_prefetch *p = NULL;
    size_t after_first;
    uint64_t ep;
    recio_err e;
    prod_init(&pr, 300, 20, 3);
    make_desc(&d, &pr, 4, 5, p_work);
    d.alloc.alloc = c_alloc;
    d.alloc.free = c_free;
    CHECK(recio_prefetch_create(&p, &d) == RECIO_OK);
    CHECK_EQ_INT(consume(p, 0, UINT64_MAX, 1, &e), 300);
    after_first = n_allocs;
    CHECK(after_first > 0);
    for (ep = 1; ep < 4; ep++) {
        recio_prefetch_reset(p, ep);
        CHECK_EQ_INT(consume(p, ep, UINT64_MAX, 1, &e), 300);
    }
    CHECK_EQ_INT(n_allocs, after_first);
    recio_prefetch_destroy(p);
    pthread_mutex_destroy(&pr.mu);
}

/* Every allocation of create refused in turn (depth 4, 2 threads, slot_size 64): a clean
   RECIO_ERR_NOMEM with nothing left allocated (a refused thread array once had destroy free the
   slots' buffers before they were set); the first create that gets through gives every item. */
static void test_create_allocation_failures(void) {
    prod pr;
    recio_prefetch_desc d;
    t_failalloc fa;
    long k;
    prod_init(&pr, 50, 0, 7);
    make_desc(&d, &pr, 2, 4, p_work);
    d.slot_size = 64;
    d.alloc.alloc = t_fail_alloc, d.alloc.free = t_fail_free, d.alloc.user = &fa;
    for (k = 1; k < 64; k++) {
        recio_prefetch *p = (recio_prefetch *)&d;
        recio_err e;
        t_fail_arm(&fa, k);
        if ((e = recio_prefetch_create(&p, &d)) == RECIO_OK) {
            CHECK_EQ_INT(consume(p, 0, UINT64_MAX, 1, &e), 50);
            CHECK_EQ_INT(e, RECIO_END);
            recio_prefetch_destroy(p);
            CHECK_EQ_INT(fa.failed, 0); /* the call that would fail never came */
            CHECK_EQ_INT(fa.live, 0);
            break;
        }
        CHECK_EQ_INT(e, RECIO_ERR_NOMEM);
        CHECK(p == NULL);
        CHECK_EQ_INT(fa.failed, 1);
        CHECK_EQ_INT(fa.live, 0);
    }
    CHECK(k > 3 && k < 64); /* the handle, the slots, the threads, the slots' buffers */
    pthread_mutex_destroy(&pr.mu);
}

static void test_bad_arguments(void) {
    recio_prefetch_desc d;
    recio_prefetch *p = (recio_prefetch *)&d;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(recio_prefetch_create(&p, &d), RECIO_ERR_ARG); /* no fetch */
    CHECK(p == NULL);
    CHECK_EQ_INT(recio_prefetch_create(NULL, &d), RECIO_ERR_ARG);
    recio_prefetch_destroy(NULL);
    CHECK(strcmp(recio_prefetch_errmsg(NULL), "") == 0);
}

/* The generic use: raw records from a reader, prefetched. Offsets and lengths are dmlc-core's,
   from tests/data/compat/a.rec.tsv (ordinal, offset, length, sha256). */
static recio_err rd_fetch(void *user, recio_prefetch_slot *s, unsigned worker) {
    recio_reader *r = (recio_reader *)user;
    recio_record rec;
    recio_err e = recio_reader_next(r, &rec);
    (void)worker;
    if (e == RECIO_OK && (e = recio_prefetch_slot_reserve(s, rec.size ? rec.size : 1)) == RECIO_OK) {
        memcpy(s->data, rec.data, rec.size);
        s->size = rec.size;
        s->tag = rec.offset;
    } else if (e < 0) {
        snprintf(s->errmsg, RECIO_ERRMSG_SIZE, "%s", recio_reader_errmsg(r));
    }
    return e;
}

static recio_prefetch *reader_prefetch(recio_reader *r) {
    recio_prefetch_desc d;
    recio_prefetch *p = NULL;
    memset(&d, 0, sizeof d);
    d.fetch = rd_fetch;
    d.user = r;
    d.depth = 3;
    CHECK(recio_prefetch_create(&p, &d) == RECIO_OK);
    return p;
}

static void test_records_from_a_reader(void) {
    recio_reader *r = NULL;
    recio_prefetch *p;
    recio_prefetch_slot *s;
    FILE *tsv = fopen("tests/data/compat/a.rec.tsv", "r");
    unsigned long long ord, off, len;
    char sha[80];
    unsigned n = 0;
    CHECK(tsv != NULL);
    CHECK(recio_reader_open(&r, "tests/data/compat/a.rec") == RECIO_OK);
    if (!tsv || !r) return;
    p = reader_prefetch(r);
    while (fscanf(tsv, "%llu %llu %llu %79s", &ord, &off, &len, sha) == 4) {
        CHECK_EQ_INT(recio_prefetch_next(p, &s), RECIO_OK);
        if (!s) break;
        CHECK_EQ_INT(s->seq, ord);
        CHECK_EQ_INT(s->tag, off);
        CHECK_EQ_INT(s->size, len);
        recio_prefetch_release(p, s);
        n++;
    }
    CHECK_EQ_INT(n, 207);
    CHECK_EQ_INT(recio_prefetch_next(p, &s), RECIO_END);
    recio_prefetch_destroy(p);
    recio_reader_close(r);
    fclose(tsv);
}

/* tests/data/compat/corrupt.tsv: the magic of record 2, at offset 156, is damaged. */
static void test_corrupt_file_reaches_consumer(void) {
    static const char path[] = "tests/data/compat/corrupt-bad-magic.rec", want[] = "tests/data/compat/corrupt-bad-magic.rec: offset 156: ";
    recio_reader *r = NULL;
    recio_prefetch *p;
    recio_prefetch_slot *s;
    CHECK(recio_reader_open(&r, path) == RECIO_OK);
    if (!r) return;
    p = reader_prefetch(r);
    CHECK_EQ_INT(recio_prefetch_next(p, &s), RECIO_OK);
    recio_prefetch_release(p, s);
    CHECK_EQ_INT(recio_prefetch_next(p, &s), RECIO_OK);
    recio_prefetch_release(p, s);
    CHECK_EQ_INT(recio_prefetch_next(p, &s), RECIO_ERR_CORRUPT);
    CHECK(strncmp(recio_prefetch_errmsg(p), want, strlen(want)) == 0);
    recio_prefetch_destroy(p);
    recio_reader_close(r);
}

/* Two threads really work at once: each work call waits (up to 5 s) for a second one to arrive. */
static pthread_mutex_t par_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t par_cv = PTHREAD_COND_INITIALIZER;
static int par_inside, par_max;

static recio_err par_work(void *user, recio_prefetch_slot *s, unsigned worker) {
    struct timespec until;
    (void)user, (void)s, (void)worker;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&par_mu);
    if (++par_inside > par_max) par_max = par_inside;
    pthread_cond_broadcast(&par_cv);
    while (par_max < 2 && pthread_cond_timedwait(&par_cv, &par_mu, &until) == 0) {}
    par_inside--;
    pthread_mutex_unlock(&par_mu);
    return RECIO_OK;
}

static void test_work_runs_in_parallel(void) {
    prod pr;
    recio_prefetch_desc d;
    recio_prefetch *p = NULL;
    recio_err e;
    prod_init(&pr, 6, 0, 1);
    make_desc(&d, &pr, 2, 3, par_work);
    CHECK(recio_prefetch_create(&p, &d) == RECIO_OK);
    CHECK_EQ_INT(consume(p, 0, UINT64_MAX, 0, &e), 6);
    CHECK_EQ_INT(par_max, 2);
    recio_prefetch_destroy(p);
    pthread_mutex_destroy(&pr.mu);
}

int main(void) {
    RUN(test_order_every_thread_count);
    RUN(test_fetch_error_reaches_consumer);
    RUN(test_work_and_begin_errors);
    RUN(test_holding_every_slot_is_an_error);
    RUN(test_random_reset_and_destroy);
    RUN(test_no_allocation_in_steady_state);
    RUN(test_create_allocation_failures);
    RUN(test_bad_arguments);
    RUN(test_work_runs_in_parallel);
    RUN(test_records_from_a_reader);
    RUN(test_corrupt_file_reaches_consumer);
    return t_done("prefetch");
}
