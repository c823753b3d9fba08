/* bench_split: what a split costs. Medians of 7 runs; each line is the median ratio to a baseline timed right before each
   run (page cache warm: every measurement is preceded by an untimed pass).
   1. Opening part 128 of 256 over 1,000 small files, vs one full scan of the same records.
   2. Reading a whole dataset through a split with nsplit 1, vs a plain read() loop (1 MiB buffer).
   3. Indexed reading, unshuffled and shuffled, vs sequential reading of the same file.
   Data is generated once under build/bench_split/. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#define ROOT "build/bench_split"
#define RUNS 7

typedef double (*bench_fn)(void *arg);

/* The baseline of the current group; every line times it again right before itself, so the
   ratio compares two runs made seconds apart (this machine's load drifts). */
static bench_fn base_fn;
static void *base_arg;

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
    char msg[RECIO_ERRMSG_SIZE];
    recio_split_desc d = j->d;
    d.errmsg = msg;
    if (recio_split_open_desc(&s, j->uris, j->rank, j->nsplit, &d) != RECIO_OK) {
        fprintf(stderr, "bench_split: %s\n", msg);
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
    char msg[RECIO_ERRMSG_SIZE];
    recio_split_desc d = j->d;
    d.errmsg = msg;
    if (recio_split_open_desc(&s, j->uris, j->rank, j->nsplit, &d) != RECIO_OK) {
        fprintf(stderr, "bench_split: %s\n", msg);
        exit(1);
    }
    while ((e = recio_split_next(s, &rec)) == RECIO_OK) sum += touch(rec.data, rec.size);
    if (e != RECIO_END) fprintf(stderr, "bench_split: %s\n", recio_split_errmsg(s)), exit(1);
    recio_split_close(s);
    sink += sum;
    return now() - t;
}

/* The next path of a ';'-separated list into path; 0 at the end. */
static int next_path(const char **p, char path[256]) {
    const char *q;
    size_t n;
    if (!**p) return 0;
    q = strchr(*p, ';');
    n = q ? (size_t)(q - *p) : strlen(*p);
    memcpy(path, *p, n);
    path[n] = 0;
    *p += n + (q != NULL);
    return 1;
}

/* Every file of the list through its own reader, one after the other. */
static double run_scan(void *arg) {
    const char *p = (const char *)arg;
    char path[256];
    double t = now();
    uint64_t sum = 0;
    while (next_path(&p, path)) {
        recio_reader *r;
        recio_record rec;
        if (recio_reader_open(&r, path) != RECIO_OK) exit(1);
        while (recio_reader_next(r, &rec) == RECIO_OK) sum += touch(rec.data, rec.size);
        recio_reader_close(r);
    }
    sink += sum;
    return now() - t;
}

static double run_stat(void *arg) {
    const char *p = (const char *)arg;
    char path[256];
    double t = now();
    struct stat st;
    while (next_path(&p, path))
        if (stat(path, &st) == 0) sink += (uint64_t)st.st_size;
    return now() - t;
}

static double run_read_loop(void *arg) {
    static unsigned char *buf; /* page-aligned: the fastest a read() loop can be (see bench_recordio) */
    const char *p = (const char *)arg;
    char path[256];
    double t;
    uint64_t sum = 0;
    if (!buf && posix_memalign((void **)&buf, 4096, 1 << 20) != 0) exit(1);
    t = now();
    while (next_path(&p, path)) {
        ssize_t k;
        int fd = open(path, O_RDONLY);
        if (fd < 0) exit(1);
        while ((k = read(fd, buf, 1 << 20)) > 0) sum += touch(buf, (size_t)k);
        close(fd);
    }
    sink += sum;
    return now() - t;
}

static uint64_t bytes_of(const char *uris) {
    recio_split *s = NULL;
    recio_split_info info;
    memset(&info, 0, sizeof info);
    if (recio_split_open(&s, uris, 0, 1) == RECIO_OK) recio_split_query(s, &info);
    recio_split_close(s);
    return info.total_bytes;
}

/* Measure one line: RUNS pairs (baseline, this), after one untimed pair; prints the median time
   and the median of the per-pair ratios. */
static void line(const char *what, bench_fn fn, void *arg, uint64_t bytes) {
    double t[RUNS], r[RUNS], tm;
    int i;
    base_fn(base_arg);
    fn(arg);
    for (i = 0; i < RUNS; i++) {
        double b = base_fn(base_arg);
        t[i] = fn(arg);
        r[i] = b / t[i];
    }
    tm = bench_median(t, RUNS);
    printf("  %-46s %10.3f ms", what, tm * 1e3);
    if (bytes) printf(" %8.0f MB/s", (double)bytes / tm / 1e6);
    else printf(" %13s", "");
    printf("   x%.3f\n", bench_median(r, RUNS));
}

static void baseline(bench_fn fn, void *arg) {
    base_fn = fn;
    base_arg = arg;
}

int main(void) {
    char *small, *large, *one;
    job j;
    uint64_t nb;
    make_files(ROOT "/small", 1000, 64, 256, 3072, &small);
    make_files(ROOT "/large", 4, 300, 100000, 120000, &large);
    make_files(ROOT "/one", 1, 16000, 2000, 6000, &one);

    printf("1. open part 128 of 256 over 1,000 small files, %.0f MB (ratio = full scan / open)\n", (double)bytes_of(small) / 1e6);
    baseline(run_scan, small);
    line("full scan of every record (baseline)", run_scan, small, 0);
    line("stat() of every file (the floor of an open)", run_stat, small, 0);
    memset(&j, 0, sizeof j);
    j.uris = small;
    j.rank = 128;
    j.nsplit = 256;
    line("recio_split_open, byte mode", run_open, &j, 0);
    j.d.mode = RECIO_SPLIT_INDEX;
    line("recio_split_open, index mode (reads 1,000 .idx)", run_open, &j, 0);

    nb = bytes_of(large);
    printf("2. whole dataset (4 files, %.0f MB), nsplit 1 (ratio = throughput vs read())\n", (double)nb / 1e6);
    baseline(run_read_loop, large);
    line("read() loop, 1 MiB buffer (baseline)", run_read_loop, large, nb);
    memset(&j, 0, sizeof j);
    j.uris = large;
    j.nsplit = 1;
    line("split, byte mode", run_split, &j, nb);
    j.d.use_mmap = 1;
    line("split, byte mode, mmap", run_split, &j, nb);

    printf("3. one file of 16,000 records of 2-6 KB (ratio = throughput vs sequential reader)\n");
    nb = bytes_of(one);
    baseline(run_scan, one);
    line("recio_reader sequential (baseline)", run_scan, one, nb);
    memset(&j, 0, sizeof j);
    j.uris = one;
    j.nsplit = 1;
    j.d.mode = RECIO_SPLIT_INDEX;
    line("split, index mode, in order", run_split, &j, nb);
    j.d.shuffle = RECIO_SHUFFLE_FULL;
    j.d.use_mmap = 1;
    line("split, full shuffle, files mapped (use_mmap = 1)", run_split, &j, nb);
    j.d.shuffle = RECIO_SHUFFLE_CHUNK;
    line("split, chunk shuffle 256 x 16 (mapped)", run_split, &j, nb);
    j.d.use_mmap = -1;
    j.d.shuffle = RECIO_SHUFFLE_FULL;
    line("split, full shuffle, buffered reads (default)", run_split, &j, nb);
    j.d.shuffle = RECIO_SHUFFLE_CHUNK;
    line("split, chunk shuffle 256 x 16, buffered reads", run_split, &j, nb);
    free(small);
    free(large);
    free(one);
    return 0;
}
