/* bench_split: what a split costs. Medians of 5 runs; each line is a ratio to a baseline measured
   in the same run (page cache warm: every measurement is preceded by an untimed pass).
   1. Opening part 128 of 256 over 1,000 small files, vs one full scan of the same records.
   2. Reading a whole dataset through a split with nsplit 1, vs a plain read() loop (1 MiB buffer).
   3. Indexed reading, unshuffled and shuffled, vs sequential reading of the same file.
   Data is generated once under build/bench_split/. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#define ROOT "build/bench_split"
#define RUNS 5

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef double (*bench_fn)(void *arg);

/* One untimed pass, then the median of RUNS timed ones. */
static double median(bench_fn fn, void *arg) {
    double t[RUNS];
    int i;
    fn(arg);
    for (i = 0; i < RUNS; i++) t[i] = fn(arg);
    qsort(t, RUNS, sizeof t[0], cmp_d);
    return t[RUNS / 2];
}

static volatile uint64_t sink;

static uint64_t touch(const void *p, size_t n) { /* read the bytes a consumer would read: one per 4 KiB */
    const unsigned char *b = (const unsigned char *)p;
    uint64_t s = n;
    size_t i;
    for (i = 0; i < n; i += 4096) s += b[i];
    return s;
}

/* A dataset: nfiles files of nrec records of lo..hi bytes, each with its .rec.idx. */
static void make_files(const char *dir, unsigned nfiles, unsigned nrec, unsigned lo, unsigned hi, char **uris) {
    unsigned f, i;
    size_t cap = (size_t)nfiles * (strlen(dir) + 32) + 1;
    unsigned char *buf = (unsigned char *)malloc(hi);
    uint64_t x = 88172645463325252ULL;
    char marker[256];
    struct stat st;
    *uris = (char *)malloc(cap);
    (*uris)[0] = 0;
    snprintf(marker, sizeof marker, "%s/done", dir);
    for (f = 0; f < nfiles; f++) {
        char path[256];
        snprintf(path, sizeof path, "%s%s/f%04u.rec", f ? ";" : "", dir, f);
        strcat(*uris, path);
    }
    if (stat(marker, &st) == 0) {
        free(buf);
        return;
    }
    mkdir(ROOT, 0755);
    mkdir(dir, 0755);
    for (f = 0; f < nfiles; f++) {
        char path[256], idx[270];
        recio_writer *w;
        recio_writer_desc d;
        memset(&d, 0, sizeof d);
        snprintf(path, sizeof path, "%s/f%04u.rec", dir, f);
        snprintf(idx, sizeof idx, "%s.idx", path);
        d.index_path = idx;
        if (recio_writer_open_desc(&w, path, &d) != RECIO_OK) {
            fprintf(stderr, "bench_split: cannot create %s\n", path);
            exit(1);
        }
        for (i = 0; i < nrec; i++) {
            unsigned n = lo + (unsigned)(x % (hi - lo + 1)), k;
            for (k = 0; k < n; k++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                buf[k] = (unsigned char)x;
            }
            recio_writer_write(w, buf, n);
        }
        if (recio_writer_close(w) != RECIO_OK) exit(1);
    }
    fclose(fopen(marker, "w"));
    free(buf);
}

typedef struct job {
    const char *uris;
    unsigned rank, nsplit;
    recio_split_desc d;
} job;

static double run_open(void *arg) {
    job *j = (job *)arg;
    double t = now();
    recio_split *s = NULL;
    if (recio_split_open_desc(&s, j->uris, j->rank, j->nsplit, &j->d) != RECIO_OK) {
        fprintf(stderr, "bench_split: %s\n", recio_split_errmsg(s));
        exit(1);
    }
    recio_split_close(s);
    return now() - t;
}

static double run_split(void *arg) {
    job *j = (job *)arg;
    double t = now();
    recio_split *s = NULL;
    recio_record rec;
    recio_err e;
    uint64_t sum = 0;
    if (recio_split_open_desc(&s, j->uris, j->rank, j->nsplit, &j->d) != RECIO_OK) {
        fprintf(stderr, "bench_split: %s\n", recio_split_errmsg(s));
        exit(1);
    }
    while ((e = recio_split_next(s, &rec)) == RECIO_OK) sum += touch(rec.data, rec.size);
    if (e != RECIO_END) fprintf(stderr, "bench_split: %s\n", recio_split_errmsg(s)), exit(1);
    recio_split_close(s);
    sink += sum;
    return now() - t;
}

/* Every file of the list through its own reader, one after the other. */
static double run_scan(void *arg) {
    const char *uris = (const char *)arg;
    char path[256];
    const char *p = uris;
    double t = now();
    uint64_t sum = 0;
    while (*p) {
        const char *q = strchr(p, ';');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        recio_reader *r;
        recio_record rec;
        memcpy(path, p, n);
        path[n] = 0;
        if (recio_reader_open(&r, path) != RECIO_OK) exit(1);
        while (recio_reader_next(r, &rec) == RECIO_OK) sum += touch(rec.data, rec.size);
        recio_reader_close(r);
        p += n + (q != NULL);
    }
    sink += sum;
    return now() - t;
}

static double run_stat(void *arg) {
    const char *p = (const char *)arg;
    char path[256];
    double t = now();
    struct stat st;
    while (*p) {
        const char *q = strchr(p, ';');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        memcpy(path, p, n);
        path[n] = 0;
        if (stat(path, &st) == 0) sink += (uint64_t)st.st_size;
        p += n + (q != NULL);
    }
    return now() - t;
}

static double run_read_loop(void *arg) {
    const char *uris = (const char *)arg;
    static unsigned char buf[1 << 20];
    char path[256];
    const char *p = uris;
    double t = now();
    uint64_t sum = 0;
    while (*p) {
        const char *q = strchr(p, ';');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        ssize_t k;
        int fd;
        memcpy(path, p, n);
        path[n] = 0;
        if ((fd = open(path, O_RDONLY)) < 0) exit(1);
        while ((k = read(fd, buf, sizeof buf)) > 0) sum += touch(buf, (size_t)k);
        close(fd);
        p += n + (q != NULL);
    }
    sink += sum;
    return now() - t;
}

static uint64_t bytes_of(const char *uris) {
    recio_split *s = NULL;
    uint64_t n;
    recio_split_open(&s, uris, 0, 1);
    n = recio_split_total_bytes(s);
    recio_split_close(s);
    return n;
}

static void row(const char *what, double t, double base, uint64_t bytes) {
    printf("  %-46s %10.3f ms", what, t * 1e3);
    if (bytes) printf(" %8.0f MB/s", (double)bytes / t / 1e6);
    else printf(" %13s", "");
    printf("   x%.3f\n", base / t);
}

int main(void) {
    char *small, *large, *one;
    job j;
    double base, t;
    uint64_t nb;
    make_files(ROOT "/small", 1000, 64, 256, 3072, &small);
    make_files(ROOT "/large", 4, 300, 100000, 120000, &large);
    make_files(ROOT "/one", 1, 16000, 2000, 6000, &one);

    printf("1. open part 128 of 256 over 1,000 small files, %.0f MB (ratio = full scan / open)\n", (double)bytes_of(small) / 1e6);
    base = median(run_scan, small);
    row("full scan of every record (baseline)", base, base, 0);
    memset(&j, 0, sizeof j);
    j.uris = small;
    j.rank = 128;
    j.nsplit = 256;
    t = median(run_stat, small);
    row("stat() of every file (the floor of an open)", t, base, 0);
    t = median(run_open, &j);
    row("recio_split_open, byte mode", t, base, 0);
    j.d.mode = RECIO_SPLIT_INDEX;
    t = median(run_open, &j);
    row("recio_split_open, index mode (reads 1,000 .idx)", t, base, 0);

    printf("2. whole dataset (4 files, %.0f MB), nsplit 1 (ratio = throughput vs read())\n", (double)bytes_of(large) / 1e6);
    nb = bytes_of(large);
    base = median(run_read_loop, large);
    row("read() loop, 1 MiB buffer (baseline)", base, base, nb);
    memset(&j, 0, sizeof j);
    j.uris = large;
    j.nsplit = 1;
    t = median(run_split, &j);
    row("split, byte mode", t, base, nb);
    j.d.use_mmap = 1;
    t = median(run_split, &j);
    row("split, byte mode, mmap", t, base, nb);

    printf("3. one file of 16,000 records of 2-6 KB (ratio = throughput vs sequential reader)\n");
    nb = bytes_of(one);
    base = median(run_scan, one);
    row("recio_reader sequential (baseline)", base, base, nb);
    memset(&j, 0, sizeof j);
    j.uris = one;
    j.nsplit = 1;
    j.d.mode = RECIO_SPLIT_INDEX;
    t = median(run_split, &j);
    row("split, index mode, in order", t, base, nb);
    j.d.shuffle = RECIO_SHUFFLE_FULL;
    t = median(run_split, &j);
    row("split, full shuffle (files mapped: default)", t, base, nb);
    j.d.shuffle = RECIO_SHUFFLE_CHUNK;
    t = median(run_split, &j);
    row("split, chunk shuffle 256 x 16 (mapped)", t, base, nb);
    j.d.use_mmap = -1;
    j.d.shuffle = RECIO_SHUFFLE_FULL;
    t = median(run_split, &j);
    row("split, full shuffle, buffered reads", t, base, nb);
    j.d.shuffle = RECIO_SHUFFLE_CHUNK;
    t = median(run_split, &j);
    row("split, chunk shuffle 256 x 16, buffered reads", t, base, nb);
    free(small);
    free(large);
    free(one);
    return 0;
}
