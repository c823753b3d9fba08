/* The kernel table: every column this build and CPU can run gives the scalar column's bytes, on
   random sizes, windows, mirrors and pixels. A private copy of the implementation (RECIO_STATIC)
   reaches the columns directly. Under `make cross ARCH=aarch64|armhf` this runs the NEON column. */
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"

#define NCOLS ((int)(sizeof recio__kern_cols / sizeof recio__kern_cols[0]))

static int t_usable_columns(void) {
    int i, n = 0;
    for (i = 1; i < NCOLS; i++) n += recio__kern_cols[i]->usable();
    return n;
}

static void test_columns_listed(void) {
    const recio__kern *best = recio__kern_pick();
    int i;
    printf("kernel columns:");
    for (i = 0; i < NCOLS; i++) printf(" %s%s", recio__kern_cols[i]->name, recio__kern_cols[i]->usable() ? "" : "(not on this CPU)");
    printf("; picked %s\n", best->name);
    CHECK(recio__kern_cols[0] == &recio__kern_scalar);
    CHECK(best->usable());
#if defined(RECIO__SSE2) || defined(RECIO__NEON)
    CHECK(best != &recio__kern_scalar); /* a SIMD build never falls back to scalar */
#endif
}

/* The AVX2 column's own cpuid probe against what the kernel tells: the "avx2" flag of /proc/cpuinfo
   (Linux sets it from the same CPUID bit, and clears it when the OS does not save YMM state). */
static void test_avx2_probe(void) {
#if defined(RECIO__AVX2) && defined(__linux__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int flag = -1;
    if (!f) return;
    while (flag < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) flag = strstr(line, " avx2") != NULL;
    fclose(f);
    if (flag < 0) return;
    CHECK(recio__avx2_usable() == flag);
    CHECK((recio__kern_pick() == &recio__kern_avx2) == flag);
#endif
}

static void test_hrow2_equals_scalar(void) {
    int round, col;
    for (round = 0; round < 400; round++) {
        int C = t_between(3, 4), sn = t_between(2, 700), dn = t_between(1, 900), o = t_between(0, dn - 1);
        int n = t_between(1, dn - o), flip = (int)(t_rand() & 1), i;
        recio__axis ax;
        unsigned char *row = (unsigned char *)malloc((size_t)sn * C);
        int32_t *want = (int32_t *)malloc(((size_t)n * C + 4) * sizeof(int32_t));
        int32_t *got = (int32_t *)malloc(((size_t)n * C + 4) * sizeof(int32_t));
        ax.k = recio__axis_k(sn, dn, RECIO_LINEAR, 0);
        ax.ofs = (int *)malloc((size_t)n * sizeof(int));
        ax.coef = (int16_t *)malloc((size_t)n * (size_t)ax.k * sizeof(int16_t));
        recio__axis_taps(&ax, sn, dn, o, n, flip, RECIO_LINEAR, 0);
        recio__axis_bounds(&ax, C, sn);
        for (i = 0; i < sn * C; i++) row[i] = (unsigned char)t_rand();
        recio__kern_scalar.hrow2(row, C, &ax, want);
        for (col = 1; col < NCOLS; col++) {
            if (!recio__kern_cols[col]->usable()) continue;
            memset(got, 0xa5, ((size_t)n * C + 4) * sizeof(int32_t));
            recio__kern_cols[col]->hrow2(row, C, &ax, got);
            if (memcmp(got, want, (size_t)n * C * sizeof(int32_t)) != 0) {
                fprintf(stderr, "  %s hrow2: C=%d %d->%d window %d+%d flip %d differs\n", recio__kern_cols[col]->name, C, sn, dn, o, n, flip);
                CHECK(0);
            }
        }
        free(ax.ofs), free(ax.coef);
        free(row), free(want), free(got);
    }
}

static void test_vrow2_equals_scalar(void) {
    int round, col, x;
    for (round = 0; round < 300; round++) {
        int n = t_between(1, 2000), b0 = t_between(0, 2048), b1 = 2048 - b0;
        int32_t *r0 = (int32_t *)malloc((size_t)n * sizeof(int32_t)), *r1 = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        unsigned char *want = (unsigned char *)malloc((size_t)n), *got = (unsigned char *)malloc((size_t)n);
        for (x = 0; x < n; x++) { /* what the horizontal pass can give: 0 .. 255 * 2^11 */
            r0[x] = (int32_t)(t_rand() % (255u * 2048u + 1));
            r1[x] = (int32_t)(t_rand() % (255u * 2048u + 1));
        }
        if (round < 4) b0 = round & 1 ? 2048 : 0, b1 = 2048 - b0; /* the extremes */
        recio__kern_scalar.vrow2(r0, r1, b0, b1, want, n);
        for (col = 1; col < NCOLS; col++) {
            if (!recio__kern_cols[col]->usable()) continue;
            recio__kern_cols[col]->vrow2(r0, r1, b0, b1, got, n);
            if (memcmp(got, want, (size_t)n) != 0) {
                fprintf(stderr, "  %s vrow2: n=%d b=%d,%d differs\n", recio__kern_cols[col]->name, n, b0, b1);
                CHECK(0);
            }
        }
        free(r0), free(r1), free(want), free(got);
    }
}

static void test_norm3_equals_scalar(void) {
    int round, col, c, v;
    for (round = 0; round < 200; round++) {
        int n = t_between(1, 700), x;
        float mean[3], sd[3], lut[3 * 256];
        unsigned char *row = (unsigned char *)malloc((size_t)n * 3);
        float *want = (float *)malloc((size_t)n * 3 * sizeof(float)), *got = (float *)malloc((size_t)n * 3 * sizeof(float));
        float *const dw[3] = {want, want + n, want + 2 * n};
        float *const dg[3] = {got, got + n, got + 2 * n};
        for (c = 0; c < 3; c++) {
            mean[c] = (float)(t_rand() % 25600) / 100.0f;
            sd[c] = 0.5f + (float)(t_rand() % 10000) / 97.0f;
            for (v = 0; v < 256; v++) lut[c * 256 + v] = recio__norm((float)v, mean[c], sd[c]);
        }
        for (x = 0; x < 3 * n; x++) row[x] = (unsigned char)t_rand();
        recio__kern_scalar.norm3(row, dw, n, lut, mean, sd);
        for (col = 1; col < NCOLS; col++) {
            if (!recio__kern_cols[col]->usable()) continue;
            recio__kern_cols[col]->norm3(row, dg, n, lut, mean, sd);
            if (memcmp(got, want, (size_t)n * 3 * sizeof(float)) != 0) {
                fprintf(stderr, "  %s norm3: n=%d differs\n", recio__kern_cols[col]->name, n);
                CHECK(0);
            }
        }
        free(row), free(want), free(got);
    }
}

/* Colour conversion: random factors (with the edges where u8 clamps and rounds), offsets, widths. */
static void test_mix3_equals_scalar(void) {
    int round, col, i;
    for (round = 0; round < 300; round++) {
        int n = t_between(1, 300);
        float a = (float)t_between(-300, 3000) / 1000, b = (float)t_between(-3000, 3000) / 1000, off[3];
        unsigned char *s = (unsigned char *)malloc((size_t)n * 3), *want = (unsigned char *)malloc((size_t)n * 3);
        unsigned char *got = (unsigned char *)malloc((size_t)n * 3 + 16);
        for (i = 0; i < 3; i++) off[i] = round % 3 ? (float)t_between(-30000, 30000) / 100 : 0;
        if (round % 7 == 0) a = 1, b = 0; /* brightness 1: every value lands on .5 + integer */
        for (i = 0; i < n * 3; i++) s[i] = (unsigned char)(round % 5 == 0 ? 255 * (t_rand() & 1) : t_rand());
        recio__kern_scalar.mix3(s, want, n, a, b, off);
        for (col = 1; col < NCOLS; col++) {
            if (!recio__kern_cols[col]->usable()) continue;
            memset(got, 0xa5, (size_t)n * 3 + 16);
            recio__kern_cols[col]->mix3(s, got, n, a, b, off);
            if (memcmp(got, want, (size_t)n * 3) != 0 || got[n * 3] != 0xa5) {
                fprintf(stderr, "  %s mix3: n=%d a=%g b=%g off %g,%g,%g differs\n", recio__kern_cols[col]->name, n, a, b, off[0], off[1], off[2]);
                CHECK(0);
            }
        }
        free(s), free(want), free(got);
    }
}

static void test_hash_equals_scalar(void) {
    int round, col, k;
    for (round = 0; round < 50; round++) {
        size_t blocks = (size_t)t_between(0, 40), i;
        unsigned char *p = (unsigned char *)malloc(blocks * 4 * RECIO__LANES + 1);
        uint32_t want[RECIO__LANES], got[RECIO__LANES];
        for (i = 0; i < blocks * 4 * RECIO__LANES; i++) p[i] = (unsigned char)t_rand();
        for (k = 0; k < RECIO__LANES; k++) want[k] = t_rand();
        memcpy(got, want, sizeof got);
        recio__kern_scalar.hash(want, p, blocks);
        for (col = 1; col < NCOLS; col++) {
            uint32_t lane[RECIO__LANES];
            if (!recio__kern_cols[col]->usable()) continue;
            memcpy(lane, got, sizeof lane);
            recio__kern_cols[col]->hash(lane, p, blocks);
            if (memcmp(lane, want, sizeof lane) != 0) {
                fprintf(stderr, "  %s hash: %u blocks differ\n", recio__kern_cols[col]->name, (unsigned)blocks);
                CHECK(0);
            }
        }
        free(p);
    }
}

int main(void) {
    RUN(test_columns_listed);
    RUN(test_avx2_probe);
    if (t_usable_columns() == 0) {
        t_skip("no SIMD column in this build (RECIO_NO_SIMD, or no SSE2/NEON target): only scalar", 5);
        return t_done("kernels");
    }
    RUN(test_hrow2_equals_scalar);
    RUN(test_vrow2_equals_scalar);
    RUN(test_norm3_equals_scalar);
    RUN(test_hash_equals_scalar);
    RUN(test_mix3_equals_scalar);
    return t_done("kernels");
}
