/* The iterator's decoded-image cache (desc.cache_bytes): epoch 2 against epoch 1, measured in the
   same run, for an eval chain (the finished items are kept) and a train chain (resize_short's output
   is kept, the random crop, flip and normalize run every epoch), in pull mode and with 2 workers.
   Each row also times epoch 1 without the cache (what keeping the records costs) and checks that
   epoch 2's batches are the bytes the uncached iterator gives (the fast checksum of every batch).
   Data: the bench set (`make bench-data`: build/bench-data/imagenet1k.rec, 1,000 JPEGs of shorter
   side 256, docs/bench.md), or the .rec given: the cache holds every record (~0.6 GB of float items
   for the eval chain, ~0.26 GB of 256-pixel u8 images for the train chain). Batch 32, one run per
   row: build/bench/bench_cache [REC]. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH 32
#define BUDGET ((size_t)2 << 30)

static const char *data = "build/bench-data/imagenet1k.rec";

static recio_iter *open_it(const char *spec, unsigned workers, size_t cache) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[512];
    memset(&d, 0, sizeof d);
    d.uris = data;
    d.spec = spec;
    d.batch = BATCH;
    d.workers = workers;
    d.seed = 1;
    d.checksums = 1; /* the fast batch checksum, computed by the workers */
    d.cache_bytes = cache;
    if (recio_iter_open_ex(&it, &d, msg, sizeof msg) != RECIO_OK) fprintf(stderr, "bench_cache: %s\n", msg), exit(1);
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
        *sum = *sum * 1099511628211ull ^ recio_batch_checksum_fast(&b);
    }
    if (e != RECIO_END) fprintf(stderr, "bench_cache: %s\n", recio_iter_errmsg(it)), exit(1);
    dt = now() - t0;
    recio_iter_reset(it);
    return n / dt;
}

static void row(const char *name, const char *spec, unsigned workers) {
    recio_iter *plain = open_it(spec, workers, 0), *cached;
    recio_iter_cache_info ci;
    uint64_t s0, s1, s2, p1;
    double base = epoch(plain, &s0), e1, e2;
    epoch(plain, &p1); /* epoch 1's batches without the cache, to compare */
    recio_iter_close(plain);
    cached = open_it(spec, workers, BUDGET);
    e1 = epoch(cached, &s1);
    e2 = epoch(cached, &s2);
    recio_iter_cache_stats(cached, &ci);
    printf("| %s | %u | %.0f | %.0f | %.0f | %.2fx | %.2fx | %llu, %.0f MB | %s |\n", name, workers, base, e1, e2, e1 / base, e2 / e1,
           (unsigned long long)ci.records, ci.bytes / 1e6, s0 == s1 && p1 == s2 ? "same" : "DIFFER");
    recio_iter_close(cached);
}

int main(int argc, char **argv) {
    struct stat st;
    if (argc > 1) data = argv[1];
    if (stat(data, &st) != 0) return fprintf(stderr, "bench_cache: %s is missing: run 'make bench-data'\n", data), 1;
    printf("bench_cache: %s, batch %d, budget %zu MB; img/s, one run per row\n\n", data, BATCH, BUDGET >> 20);
    printf("| chain | workers | no cache | epoch 1 (filling) | epoch 2 (from cache) | epoch 1 / no cache | epoch 2 / epoch 1 | kept | batches |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    row("eval: resize_short(256) center_crop(224) normalize(imagenet) chw", "resize_short(256) center_crop(224) normalize(imagenet) chw", 0);
    row("eval", "resize_short(256) center_crop(224) normalize(imagenet) chw", 2);
    row("train: resize_short(256) \\| random_crop(224) random_flip(0.5) normalize(imagenet) chw",
        "resize_short(256) random_crop(224) random_flip(0.5) normalize(imagenet) chw", 0);
    row("train", "resize_short(256) random_crop(224) random_flip(0.5) normalize(imagenet) chw", 2);
    return 0;
}
