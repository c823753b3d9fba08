/* The iterator against the bare eager chain, measured in the same run.
   Data: 2,000 image records cycling through the sample photos (tests/data/photos, ~400x400 JPEGs,
   as ImageNet's average), under build/bench. Chain: ResNet training augmentation into CHW float.
   Rows: the eager chain in a plain loop on one thread (baseline: reader -> header -> decode ->
   transform into a reused buffer), then the iterator in pull mode and with 1 and 2 workers; then
   the peak RSS of a 3-epoch run in a fresh process against prefetch x batch bytes.
   Medians of 5 runs. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5
#define NREC 2000
#define BATCH 32
#define DATA "build/bench/bench_iter.rec"
#define SPEC "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw"

static const char *photos[] = {"chelsea-500x375.jpg", "coffee-500x333.jpg", "astronaut-375x500.jpg", "rocket-640x480.jpg",
                               "coffee-progressive-480x360.jpg", "camera-gray-400x300.jpg",
                               "astronaut-exif-rot90-400x300.jpg", "chelsea-cmyk-300x400.jpg"};
#define NPHOTOS (sizeof photos / sizeof photos[0])

static int make_dataset(void) {
    recio_writer *w;
    unsigned char *img[NPHOTOS], *rec;
    size_t n[NPHOTOS], i;
    mkdir("build", 0755);
    mkdir("build/bench", 0755);
    for (i = 0; i < NPHOTOS; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/photos/%s", photos[i]);
        if (!(img[i] = bench_slurp(path, &n[i]))) return fprintf(stderr, "bench_iter: missing %s\n", path), -1;
    }
    if (recio_writer_open(&w, DATA) != RECIO_OK) return -1;
    rec = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + 1000000);
    for (i = 0; i < NREC; i++) {
        float label = (float)(i % 1000);
        size_t k = i % NPHOTOS;
        recio_irecord_pack_header(rec, &label, 1, i, 0);
        memcpy(rec + RECIO_IRHEADER_SIZE, img[k], n[k]);
        if (recio_writer_write(w, rec, RECIO_IRHEADER_SIZE + n[k]) != RECIO_OK) return -1;
    }
    free(rec);
    for (i = 0; i < NPHOTOS; i++) free(img[i]);
    return recio_writer_close(w) == RECIO_OK ? 0 : -1;
}

/* Baseline: the same work per image with the eager API in a loop, one thread, output and scratch
   memory reused (the best a hand-written loop does). */
static double eager_chain(const recio_transform *t) {
    recio_reader *r;
    recio_record rec;
    recio_irecord ir;
    recio_image img, out;
    recio_apply_desc ad;
    recio_transform_info ti;
    size_t n = 0, scratch_size = 0;
    void *scratch = NULL;
    float *buf = (float *)malloc(3 * 224 * 224 * sizeof(float));
    double t0 = now();
    if (recio_reader_open(&r, DATA) != RECIO_OK) exit(1);
    while (recio_reader_next(r, &rec) == RECIO_OK) {
        memset(&img, 0, sizeof img);
        out = recio_image_wrap(buf, 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
        if (recio_irecord_unpack(&ir, rec.data, rec.size) || recio_image_decode(&img, ir.image, ir.image_size, 3)) exit(1);
        recio_transform_query(t, img.width, img.height, 3, &ti);
        if (ti.scratch_size > scratch_size) {
            scratch_size = ti.scratch_size;
            scratch = realloc(scratch, scratch_size);
        }
        memset(&ad, 0, sizeof ad);
        ad.image = &img, ad.out = &out, ad.seed = recio_seed_for(1, 0, rec.offset), ad.scratch = scratch, ad.scratch_size = scratch_size;
        if (recio_transform_apply_desc(t, &ad)) exit(1);
        recio_image_free(&img);
        n++;
    }
    recio_reader_close(r);
    free(scratch);
    free(buf);
    return (double)n / (now() - t0);
}

static recio_iter *open_iter(unsigned workers) {
    recio_iter_desc d;
    recio_iter *it;
    char msg[512];
    memset(&d, 0, sizeof d);
    d.uris = DATA;
    d.item.spec = SPEC;
    d.run.batch = BATCH;
    d.run.workers = workers;
    d.source.seed = 1;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) {
        fprintf(stderr, "bench_iter: %s\n", msg);
        exit(1);
    }
    return it;
}

static size_t epoch(recio_iter *it) {
    recio_batch b;
    size_t n = 0;
    recio_err e;
    while ((e = recio_iter_next(it, &b)) == RECIO_OK) n += b.count;
    if (e != RECIO_END) fprintf(stderr, "bench_iter: %s\n", recio_iter_errmsg(it)), exit(1);
    return n;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* images/s of one epoch; *cores = CPU time / wall time (how many cores the machine gave us) */
static double iter_rate(unsigned workers, double *cores) {
    recio_iter *it = open_iter(workers);
    double t0 = now(), c0 = cpu_now(), wall;
    size_t n = epoch(it);
    wall = now() - t0;
    *cores = (cpu_now() - c0) / wall;
    recio_iter_close(it);
    return (double)n / wall;
}

static long status_kb(const char *field) {
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, strlen(field)) == 0) v = atol(line + strlen(field) + 1);
    fclose(f);
    return v;
}

/* In a fresh process: RSS before, after each of 3 epochs, and the peak (VmHWM). */
static void rss_run(unsigned workers, long out[5]) {
    int fd[2];
    pid_t pid;
    if (pipe(fd)) exit(1);
    pid = fork();
    if (pid == 0) {
        long v[5];
        int e;
        recio_iter *it;
        v[0] = status_kb("VmRSS:");
        it = open_iter(workers);
        for (e = 0; e < 3; e++) {
            if (e) recio_iter_reset(it);
            epoch(it);
            v[1 + e] = status_kb("VmRSS:");
        }
        v[4] = status_kb("VmHWM:");
        recio_iter_close(it);
        if (write(fd[1], v, sizeof v) != (ssize_t)sizeof v) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (read(fd[0], out, 5 * sizeof(long)) != (ssize_t)(5 * sizeof(long))) exit(1);
    close(fd[0]);
    waitpid(pid, NULL, 0);
}

int main(void) {
    double eager[RUNS], pull[RUNS], w1[RUNS], w2[RUNS], c1[RUNS], c2[RUNS], cp[RUNS], me, mp, m1, m2, batch_mb;
    recio_transform *t;
    long rss[5];
    int i;
    if (make_dataset()) return 1;
    if (recio_transform_parse(&t, SPEC) != RECIO_OK) return 1;
    eager_chain(t); /* warm the page cache */
    for (i = 0; i < RUNS; i++) { /* interleaved, so machine noise hits every row alike */
        eager[i] = eager_chain(t);
        pull[i] = iter_rate(0, &cp[i]);
        w1[i] = iter_rate(1, &c1[i]);
        w2[i] = iter_rate(2, &c2[i]);
    }
    recio_transform_free(t);
    me = bench_median(eager, RUNS), mp = bench_median(pull, RUNS), m1 = bench_median(w1, RUNS), m2 = bench_median(w2, RUNS);
    printf("iterator, %d images (sample photos as JPEG records), batch %d, spec '%s'\n", NREC, BATCH, SPEC);
    printf("medians of %d runs; %ld cores online\n\n", RUNS, sysconf(_SC_NPROCESSORS_ONLN));
    printf("%-34s %10s %10s %12s\n", "pipeline", "images/s", "ratio", "cores used");
    printf("%-34s %10.1f %10.3f\n", "eager chain in a loop (baseline)", me, 1.0);
    printf("%-34s %10.1f %10.3f %12.2f\n", "iterator, pull mode (0 workers)", mp, mp / me, bench_median(cp, RUNS));
    printf("%-34s %10.1f %10.3f %12.2f   (target >= 0.95)\n", "iterator, 1 worker", m1, m1 / me, bench_median(c1, RUNS));
    printf("%-34s %10.1f %10.3f %12.2f\n", "iterator, 2 workers", m2, m2 / me, bench_median(c2, RUNS));
    printf("%-34s %10s %10.3f   (target >= 1.8 on 2 free cores; 'cores used' says what we got)\n", "2 workers / 1 worker", "", m2 / m1);
    rss_run(2, rss);
    batch_mb = (double)BATCH * 3 * 224 * 224 * 4 / 1048576.0;
    printf("\nRSS over 3 epochs, 2 workers, prefetch 3 (MiB): start %.1f, after epochs %.1f %.1f %.1f, peak %.1f\n",
           rss[0] / 1024.0, rss[1] / 1024.0, rss[2] / 1024.0, rss[3] / 1024.0, rss[4] / 1024.0);
    printf("peak - start = %.1f MiB; prefetch x batch bytes = 3 x %.1f = %.1f MiB; ratio %.2f (target <= 1.20)\n",
           (rss[4] - rss[0]) / 1024.0, batch_mb, 3 * batch_mb, (rss[4] - rss[0]) / 1024.0 / (3 * batch_mb));
    return 0;
}
