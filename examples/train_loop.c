/* train_loop: one training epoch's input pipeline over a packed dataset, as a training job runs it.
     build/examples/train_loop DATASET.rec [WORKERS [BATCH]]
   Prints the first batch's checksum (FNV-1a 64 of its tensor: compare it across machines; it does
   not depend on WORKERS) and the throughput in images/s. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    recio_iter_desc d = {0};
    recio_iter *it;
    recio_batch b;
    recio_err e;
    char msg[512];
    unsigned long long images = 0, batches = 0;
    double t0, dt;
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATASET.rec [WORKERS [BATCH]]\n", argv[0]);
        return 2;
    }
    d.uris = argv[1];
    d.item.spec = "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw"; /* ResNet training chain */
    d.run.workers = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
    d.run.batch = argc > 3 ? (unsigned)atoi(argv[3]) : 32;
    d.run.shuffle_buffer = 256; /* a streaming shuffle: no .idx needed */
    d.source.seed = 2024;
    if ((e = (d.errmsg = msg, recio_iter_open(&it, &d))) != RECIO_OK) {
        fprintf(stderr, "train_loop: %s\n", msg);
        return 1;
    }
    t0 = now_s();
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) {
        if (batches++ == 0)
            printf("first batch: %u images of %dx%dx%d float, labels[0] = %g, checksum %016llx\n", b.count, b.item.channels,
                   b.item.height, b.item.width, (double)b.labels[0], (unsigned long long)recio_batch_checksum(&b, RECIO_SUM_BYTES));
        images += b.count; /* a real job would run the model on b.data here */
    }
    dt = now_s() - t0;
    if (e != RECIO_END) {
        fprintf(stderr, "train_loop: %s\n", recio_iter_errmsg(it));
        recio_iter_close(it);
        return 1;
    }
    printf("epoch 0: %llu images in %llu batches, %.2f s: %.1f images/s with %u workers\n", images, batches, dt,
           dt > 0 ? images / dt : 0.0, d.run.workers);
    recio_iter_close(it);
    return 0;
}
