/* Timing helpers shared by the benchmarks: a monotonic clock and order statistics of runs. */
#ifndef RECIO_BENCH_H
#define RECIO_BENCH_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the calling thread: a single-threaded row timed with it is not slowed by other
   jobs taking the core away (only by what they do to caches), so its ratios hold on a busy machine. */
static inline double bench_thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n runs (sorts v). */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

/* Fastest of n runs (sorts v): interference only ever slows a run down. */
static inline double bench_best(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[0];
}
/* Smallest and largest of n runs (v unchanged): the spread a table shows next to a median. */
static inline void bench_range(const double *v, int n, double *lo, double *hi) {
    int i;
    *lo = *hi = v[0];
    for (i = 1; i < n; i++) {
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

/* A whole file in memory (malloc'd); NULL when it cannot be read. */
static inline unsigned char *bench_slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long sz;
    *n = 0;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = (unsigned char *)malloc(sz > 0 ? (size_t)sz : 1)) != NULL)
        *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}
#endif
