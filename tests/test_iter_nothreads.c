/* The header built without RECIO_THREADS (a board without threads): the iterator runs in pull mode
   with the same results. Private copy of the implementation (RECIO_STATIC) in this test. */
#define _POSIX_C_SOURCE 200809L
#undef RECIO_THREADS
#define RECIO_IMPLEMENTATION
#define RECIO_STATIC
#include "recio.h"
#include "test.h"
#include "iter_cases.h"

/* The prefetcher must not exist without RECIO_THREADS: were recio_prefetch_create declared, this
   object of the same name would not compile (conflicting types). */
static int recio_prefetch_create = 0;

static void test_workers_ignored_without_threads(void) {
    recio_iter_desc d;
    recio_iter *it;
    iu_batch a[16], b[16];
    recio_batch one;
    size_t n;
    iu_desc(&d, DS10, 3, RECIO_LAST_PAD, 0);
    if (!(it = ic_open(&d))) return;
    n = iu_run(it, a, 16, 2, NULL);
    recio_iter_close(it);
    d.run.workers = 4; /* asked for, not available: pull mode, same batches */
    if (!(it = ic_open(&d))) return;
    CHECK(iu_run(it, b, 16, 2, NULL) == n && iu_same(a, b, n));
    recio_iter_close(it);
    if (!(it = ic_open(&d))) return; /* and each batch says so */
    CHECK_EQ_INT(recio_iter_next(it, &one), RECIO_OK);
    CHECK_EQ_INT(one.workers, 0);
    recio_iter_close(it);
    CHECK_EQ_INT(n, 8);
}

int main(void) {
    ic_workers = 0;
    (void)recio_prefetch_create;
    ic_all();
    RUN(test_workers_ignored_without_threads);
    return t_done("iter_nothreads");
}
