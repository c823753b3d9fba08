/* Kernel columns on decoded pixels: the scalar column (RECIO_NO_SIMD) against SSE2 (RECIO_NO_AVX2,
   x86) and the best column of a default build (AVX2 on x86 when the CPU has it, NEON on ARM), each a
   private copy of recio in this program (bench/variant.c), in interleaved rounds; medians and the
   min-max spread of the per-round ratio to scalar.
   Pixels: the first N photos of the realistic set before packing (build/bench-data/photos, shorter
   side 200-600 px, listed in imagenet1k.lst), decoded once, so every op does real resampling.
     bench_kernels [LIST.lst [N [ROUNDS]]]        (defaults build/bench-data/imagenet1k.lst 100 7)
     bench_kernels --once OP COLUMN LIST.lst N    load, then run op OP (0-4; -1: none) once over the
                                                  N photos with COLUMN: for instruction counts
                                                  (bench/qemu_count.sh subtracts the -1 run)
   Under QEMU (make bench-cross ARCH=aarch64) only the ratio means anything: QEMU translates NEON
   and scalar code with different overheads than a real core has. */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "variant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 4
#define NOPS 5
static const char *EVAL = "resize_short(256) center_crop(224) normalize(imagenet) chw";
static const char *TRAIN = "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw";
static const char *NORM = "normalize(imagenet) chw";
static const char *opname[NOPS] = {"resize to 224x224, LINEAR (hrow2 + vrow2)", "normalize chw of 224x224 u8 (norm3)",
                                   "eval chain on decoded pixels", "train chain on decoded pixels",
                                   "recio_checksum of 3x224x224 f32 (hash lanes)"};

typedef struct pic {
    unsigned char *px;
    int w, h;
} pic;

static pic *pics, *pics224; /* and each resized to 224x224 */
static int npics;
static float *tensor;
static unsigned char *small;
static volatile uint64_t sink;

/* images/s of op `op` with variant v over every picture; *cpu: the same per CPU second of this thread */
static double run(const bench_variant *v, int op, void *const t[3], double *cpu) {
    double t0 = now(), c0 = bench_thread_cpu();
    int i, reps = op == 4 ? 20 : 1;
    for (i = 0; i < npics * reps; i++) {
        const pic *p = &pics[i % npics];
        int rc = 0;
        switch (op) {
        case 0: rc = v->resize(p->px, p->w, p->h, small, 224, 224); break;
        case 1: rc = v->transform_apply(t[0], pics224[i % npics].px, 224, 224, tensor, 0); break;
        case 2: rc = v->transform_apply(t[1], p->px, p->w, p->h, tensor, 0); break;
        case 3: rc = v->transform_apply(t[2], p->px, p->w, p->h, tensor, (uint64_t)i); break;
        case 4: sink += v->checksum(tensor, 3 * 224 * 224 * sizeof(float), 4); break;
        }
        if (rc) fprintf(stderr, "bench_kernels: %s failed\n", opname[op]), exit(1);
    }
    *cpu = npics * reps / (bench_thread_cpu() - c0);
    return npics * reps / (now() - t0);
}

static int load(const char *lst, int want) {
    char dir[4096], line[8192];
    int i;
    const char *slash = strrchr(lst, '/');
    FILE *f = fopen(lst, "r");
    if (!f) return fprintf(stderr, "bench_kernels: cannot open %s (run `make bench-data` from the repository root)\n", lst), -1;
    snprintf(dir, sizeof dir, "%.*s/photos", slash ? (int)(slash - lst) : 1, slash ? lst : ".");
    pics = (pic *)calloc((size_t)want, sizeof *pics);
    while (npics < want && fgets(line, sizeof line, f)) {
        char *path = strrchr(line, '\t'), full[12288];
        size_t n;
        unsigned char *b;
        if (!path) continue;
        path[strcspn(path, "\r\n")] = 0;
        snprintf(full, sizeof full, "%s/%s", dir, path + 1);
        if (!(b = bench_slurp(full, &n))) return fprintf(stderr, "bench_kernels: cannot read %s\n", full), -1;
        if (bench_variant_stb.decode(b, n, &pics[npics].px, &pics[npics].w, &pics[npics].h))
            return fprintf(stderr, "bench_kernels: cannot decode %s\n", full), -1;
        free(b);
        npics++;
    }
    fclose(f);
    pics224 = (pic *)calloc((size_t)npics + 1, sizeof *pics224);
    for (i = 0; i < npics; i++) {
        pics224[i].px = (unsigned char *)malloc(224 * 224 * 3);
        if (bench_variant_stb.resize(pics[i].px, pics[i].w, pics[i].h, pics224[i].px, 224, 224)) return -1;
    }
    return npics ? 0 : -1;
}

int main(int argc, char **argv) {
    const bench_variant *vs[MAXV];
    void *t[MAXV][3];
    double v[MAXV][NOPS][64], c[MAXV][NOPS][64], ratio[64], tmp[64], cpu;
    int nv = 0, rounds = argc > 3 ? atoi(argv[3]) : 7, i, k, op;
    size_t pixels = 0;
    vs[nv++] = &bench_variant_scalar;
#if defined(__x86_64__) || defined(__i386__)
    vs[nv++] = &bench_variant_sse2;
#endif
    vs[nv++] = &bench_variant_stb; /* the default build's kernels */
    if (argc == 6 && strcmp(argv[1], "--once") == 0) {
        op = atoi(argv[2]);
        for (i = 0; i < nv && strcmp(vs[i]->kernels(), argv[3]) != 0; i++) {}
        if (i == nv || op < -1 || op >= NOPS || load(argv[4], atoi(argv[5]))) return fprintf(stderr, "bench_kernels: bad --once\n"), 2;
        tensor = (float *)malloc(3 * 224 * 224 * sizeof(float));
        small = (unsigned char *)malloc(224 * 224 * 3);
        t[i][0] = vs[i]->transform_new(NORM), t[i][1] = vs[i]->transform_new(EVAL), t[i][2] = vs[i]->transform_new(TRAIN);
        if (op >= 0) run(vs[i], op, t[i], &cpu);
        return 0;
    }
    if (rounds < 1 || rounds > 64) rounds = 7;
    if (load(argc > 1 ? argv[1] : "build/bench-data/imagenet1k.lst", argc > 2 ? atoi(argv[2]) : 100)) return 1;
    for (i = 0; i < npics; i++) pixels += (size_t)pics[i].w * (size_t)pics[i].h;
    tensor = (float *)malloc(3 * 224 * 224 * sizeof(float));
    small = (unsigned char *)malloc(224 * 224 * 3);
    for (i = 0; i < nv; i++) {
        t[i][0] = vs[i]->transform_new(NORM);
        t[i][1] = vs[i]->transform_new(EVAL);
        t[i][2] = vs[i]->transform_new(TRAIN);
        if (!t[i][0] || !t[i][1] || !t[i][2]) return fprintf(stderr, "bench_kernels: bad spec\n"), 1;
        for (op = 0; op < NOPS; op++) run(vs[i], op, t[i], &cpu); /* warm: scratch grows, caches fill */
    }
    for (k = 0; k < rounds; k++)
        for (op = 0; op < NOPS; op++)
            for (i = 0; i < nv; i++) v[i][op][k] = run(vs[i], op, t[i], &c[i][op][k]);
    printf("kernel columns on %d decoded photos (%.0f kpixels on average), single thread, %d interleaved rounds\n", npics,
           (double)pixels / npics / 1e3, rounds);
    printf("%-46s %-7s %7s %13s %7s %11s | %9s %11s\n", "op (images/s; checksum: tensors/s)", "column", "median", "(min-max)", "ratio",
           "(min-max)", "cpu ratio", "(min-max)");
    for (op = 0; op < NOPS; op++)
        for (i = 0; i < nv; i++) {
            double lo, hi, rlo, rhi, m, rm, clo, chi, cm;
            for (k = 0; k < rounds; k++) ratio[k] = v[i][op][k] / v[0][op][k];
            bench_range(v[i][op], rounds, &lo, &hi);
            bench_range(ratio, rounds, &rlo, &rhi);
            memcpy(tmp, v[i][op], sizeof tmp);
            m = bench_median(tmp, rounds);
            rm = bench_median(ratio, rounds);
            for (k = 0; k < rounds; k++) ratio[k] = c[i][op][k] / c[0][op][k];
            bench_range(ratio, rounds, &clo, &chi);
            cm = bench_median(ratio, rounds);
            printf("%-46s %-7s %7.0f %6.0f-%-6.0f %6.2fx %5.2f-%.2fx | %8.2fx %5.2f-%.2fx\n", i ? "" : opname[op], vs[i]->kernels(), m, lo,
                   hi, rm, rlo, rhi, cm, clo, chi);
        }
    for (i = 0; i < nv; i++)
        for (k = 0; k < 3; k++) vs[i]->transform_free(t[i][k]);
    for (i = 0; i < npics; i++) bench_variant_stb.free_pixels(pics[i].px), free(pics224[i].px);
    free(pics);
    free(pics224);
    free(tensor);
    free(small);
    return 0;
}
