/* The iterator's decoded-image cache (desc.run.cache_bytes): epoch 2 against epoch 1, measured in the
   same run, for an eval chain (the finished items are kept) and a train chain (resize_short's output
   is kept, the random crop, flip and normalize run every epoch), in pull mode and with 2 workers.
   Each row also times epoch 1 without the cache (what keeping the records costs) and checks that
   epoch 2's batches are the bytes the uncached iterator gives (the fast checksum of every batch).
   Data: the bench set (`make bench-data`: build/bench-data/imagenet1k.rec, 1,000 JPEGs of shorter
   side 256, docs/bench.md), or the .rec given: the cache holds every record (~0.6 GB of float items
   for the eval chain, ~0.26 GB of 256-pixel u8 images for the train chain). Batch 32; each row is
   ROUNDS rounds of (uncached epoch, cached epoch 1, cached epoch 2) in turn, so the two sides see
   the same machine; medians and the range over the rounds: build/bench/bench_cache [REC]. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH 32
#define BUDGET ((size_t)2 << 30)
#define ROUNDS 5

static const char *data = "build/bench-data/imagenet1k.rec";

static recio_iter *open_it(const char *spec, unsigned workers, size_t cache) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[512];
    memset(&d, 0, sizeof d);
    d.uris = data;
    d.item.spec = spec;
    d.run.batch = BATCH;
    d.run.workers = workers;
    d.source.seed = 1;
    d.run.checksums = 1; /* the fast batch checksum, computed by the workers */
    d.run.cache_bytes = cache;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) fprintf(stderr, "bench_cache: %s\n", msg), exit(1);
    return it;
}

/* One epoch: its img/s, and *sum folds every batch's checksum. */
static double epoch(recio_iter *it, uint64_t *sum) {
    recio_batch b;
    recio_err e;
    unsigned long n = 0;
    double t0 = now(), dt;
    *sum = 0;
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
        n += b.count;
        *sum = *sum * 1099511628211ull ^ recio_batch_checksum(&b, RECIO_SUM_ITEMS);
    }
    if (e != RECIO_END) fprintf(stderr, "bench_cache: %s\n", recio_iter_errmsg(it)), exit(1);
    dt = now() - t0;
    recio_iter_reset(it);
    return n / dt;
}

/* Median [min-max] of v, as a table cell. */
static void cell(const char *fmt, double *v) {
    double lo, hi;
    bench_range(v, ROUNDS, &lo, &hi);
    printf(" | ");
    printf(fmt, bench_median(v, ROUNDS));
    printf(" (");
    printf(fmt, lo);
    printf("-");
    printf(fmt, hi);
    printf(")");
}

/* recio_iter_stats' cache part. */
static void cache_of(recio_iter *it, recio_iter_cache_info *ci) {
    recio_iter_info info;
    recio_iter_stats(it, &info);
    *ci = info.cache;
}

static void row(const char *name, const char *spec, unsigned workers) {
    double base[ROUNDS], e1[ROUNDS], e2[ROUNDS], fill[ROUNDS], gain[ROUNDS];
    recio_iter_cache_info ci;
    uint64_t s0, s1, s2, p1;
    int r, same = 1;
    memset(&ci, 0, sizeof ci);
    for (r = 0; r < ROUNDS; r++) {
        recio_iter *plain = open_it(spec, workers, 0), *cached;
        base[r] = epoch(plain, &s0);
        epoch(plain, &p1); /* epoch 1's batches without the cache, to compare */
        recio_iter_close(plain);
        cached = open_it(spec, workers, BUDGET);
        e1[r] = epoch(cached, &s1);
        e2[r] = epoch(cached, &s2);
        cache_of(cached, &ci);
        recio_iter_close(cached);
        same &= s0 == s1 && p1 == s2;
        fill[r] = e1[r] / base[r], gain[r] = e2[r] / e1[r];
    }
    printf("| %s | %u", name, workers);
    cell("%.0f", base), cell("%.0f", e1), cell("%.0f", e2), cell("%.2fx", fill), cell("%.2fx", gain);
    printf(" | %llu, %.0f MB | %s |\n", (unsigned long long)ci.records, ci.bytes / 1e6, same ? "same" : "DIFFER");
    fflush(stdout);
}

int main(int argc, char **argv) {
    struct stat st;
    if (argc > 1) data = argv[1];
    if (stat(data, &st) != 0) return fprintf(stderr, "bench_cache: %s is missing: run 'make bench-data'\n", data), 1;
    printf("bench_cache: %s, batch %d, budget %zu MB; img/s, median (min-max) of %d rounds per row\n\n", data, BATCH,
           BUDGET >> 20, ROUNDS);
    printf("| chain | workers | no cache | epoch 1 (filling) | epoch 2 (from cache) | epoch 1 / no cache | epoch 2 / epoch 1 | kept | batches |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    row("eval: resize_short(256) center_crop(224) normalize(imagenet) chw", "resize_short(256) center_crop(224) normalize(imagenet) chw", 0);
    row("eval", "resize_short(256) center_crop(224) normalize(imagenet) chw", 2);
    row("train: resize_short(256) random_crop(224) random_flip(0.5) normalize(imagenet) chw (cut after resize_short(256))",
        "resize_short(256) random_crop(224) random_flip(0.5) normalize(imagenet) chw", 0);
    row("train", "resize_short(256) random_crop(224) random_flip(0.5) normalize(imagenet) chw", 2);
    return 0;
}
