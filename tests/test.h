/* Minimal test harness: TEST cases of CHECKs; the last line is "N passed, N failed". */
#ifndef RECIO_TEST_H
#define RECIO_TEST_H
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static int t_passed, t_failed, t_skipped, t_case_bad;
static const char *t_case;

#define CHECK(c) ((c) ? (void)0 : t_fail_at(__FILE__, __LINE__, #c))
#define CHECK_EQ_INT(a, b) t_check_eq_int(__FILE__, __LINE__, #a, (long long)(a), (long long)(b))
#define RUN(fn) t_run(#fn, fn)

static inline void t_fail_at(const char *file, int line, const char *what) {
    if (t_case_bad < 5) fprintf(stderr, "FAIL %s (%s:%d): %s\n", t_case, file, line, what);
    t_case_bad++;
}

static inline void t_check_eq_int(const char *file, int line, const char *what, long long a, long long b) {
    char buf[256];
    if (a == b) return;
    snprintf(buf, sizeof buf, "%s == %lld, expected %lld", what, a, b);
    t_fail_at(file, line, buf);
}

static inline void t_run(const char *name, void (*fn)(void)) {
    clock_t t0 = clock();
    t_case = name;
    t_case_bad = 0;
    fn();
    if (getenv("RECIO_TEST_TIMES")) /* where a slow run (qemu, sanitizers) spends its CPU */
        fprintf(stderr, "  %.2f s  %s\n", (double)(clock() - t0) / CLOCKS_PER_SEC, name);
    if (t_case_bad) t_failed++;
    else t_passed++;
}

/* Random cases that are the same on every host (splitmix64). */
static uint64_t t_state = 0x9e3779b97f4a7c15ull;
static inline uint32_t t_rand(void) {
    uint64_t z = (t_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static inline int t_between(int lo, int hi) { return lo + (int)(t_rand() % (uint32_t)(hi - lo + 1)); }

/* n cases that cannot run here (a missing optional tool): reported, never counted as passed. */
static inline void t_skip(const char *why, int n) {
    printf("skip: %s\n", why);
    t_skipped += n;
}

/* A local file's read hooks as recio's own filesystem opens them (the file:// row of recio_fs), for
   tests whose recio_io hook wraps a file. */
#ifdef RECIO_H_INCLUDED
static inline recio_err t_open_read(recio_io *io, const char *path) {
    char why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs = recio_fs_find(NULL, path);
    return fs && fs->open_read ? fs->open_read(fs->user, path, io, why) : RECIO_ERR_IO;
}

/* recio_iter_stats' skip_bad part: the count skipped, and the first few (bad, n) when asked. */
static inline uint64_t skipped_of(recio_iter *it, const recio_iter_bad **bad, unsigned *n) {
    recio_iter_info info;
    recio_iter_stats(it, &info);
    if (bad) *bad = info.bad;
    if (n) *n = info.nbad;
    return info.skipped;
}
#endif

/* The recio command ($RECIO, as make test sets it) for a test that drives it; NULL after reporting
   why it cannot run: skipped on Windows (the command is POSIX-only), a failure when unset. */
static inline const char *t_recio_tool(void) {
    const char *r = getenv("RECIO");
#ifdef _WIN32
    t_skip("the recio tool is built on POSIX only", 1);
    return NULL;
#endif
    if (!r) {
        fprintf(stderr, "  RECIO not set: run through make test\n");
        t_fail_at(__FILE__, __LINE__, "RECIO set");
    }
    return r;
}

/* The allocation-failure sweep's allocator: a recio_allocator (alloc = t_fail_alloc, free =
   t_fail_free, user = a t_failalloc) that refuses its fail_at-th call (counted from 1; 0: none) and
   keeps count of the blocks live, so a sweep over fail_at = 1, 2, ... reaches every allocation of
   an open, and live == 0 after it shows that nothing leaked. Blocks come filled with 0xa5, so a
   pointer read from memory never set is garbage (a crash) rather than a lucky NULL. The counts are atomic (GCC's builtins)
   where the compiler has them: the prefetcher's threads allocate too. */
typedef struct t_failalloc {
    long calls, fail_at, live, failed;
} t_failalloc;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__TINYC__)
#define T_ADD(p, k) __atomic_add_fetch((p), (k), __ATOMIC_SEQ_CST)
#else
#define T_ADD(p, k) (*(p) += (k)) /* single-threaded use only */
#endif
static inline void *t_fail_alloc(size_t n, void *user) {
    t_failalloc *f = (t_failalloc *)user;
    void *p;
    if (T_ADD(&f->calls, 1) == f->fail_at) {
        T_ADD(&f->failed, 1);
        return NULL;
    }
    if ((p = malloc(n)) != NULL) T_ADD(&f->live, 1), memset(p, 0xa5, n); /* what is read unset shows */
    return p;
}
static inline void t_fail_free(void *p, void *user) {
    if (p) T_ADD(&((t_failalloc *)user)->live, -1);
    free(p);
}
/* f reset to fail its fail_at-th call. */
static inline void t_fail_arm(t_failalloc *f, long fail_at) {
    memset(f, 0, sizeof *f);
    f->fail_at = fail_at;
}

static inline int t_done(const char *suite) {
    if (t_skipped) printf("%s: %d passed, %d failed, %d skipped\n", suite, t_passed, t_failed, t_skipped);
    else printf("%s: %d passed, %d failed\n", suite, t_passed, t_failed);
    return t_failed ? 1 : 0;
}

/* Read a whole file; NULL when missing. */
static inline unsigned char *t_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b;
    long sz;
    *n = 0;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = (unsigned char *)malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}
#endif
