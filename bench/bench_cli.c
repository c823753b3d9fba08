/* `recio iter` against examples/train_loop on the realistic set: the CLI with its cheap checksum
   (--checksum fast: every item hashed by the worker while hot) and a line per batch must run within
   5% of the library loop
   with the same options (train chain, batch 32, streaming shuffle 256, seed 2024). Each row is its
   own process, rounds interleaved; both programs time their epoch themselves (startup excluded).
   The set is read three times per epoch ("a.rec;a.rec;a.rec") so that an epoch lasts long enough to time.
     bench_cli [DATA.rec [ROUNDS]]       (the programs are found next to this one: ../recio, ../examples) */
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NROWS 6
#define SPEC "'random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw'"

/* img/s printed by a command ("... R img/s" or "... R images/s"); -1 when it printed none */
static double run(const char *cmd) {
    char line[1024];
    double r = -1;
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    while (fgets(line, sizeof line, p)) {
        char *u = strstr(line, " img/s");
        if (!u) u = strstr(line, " images/s");
        if (u) {
            char *s = u;
            while (s > line && s[-1] != ' ') s--;
            r = atof(s);
        }
    }
    return pclose(p) == 0 ? r : -1;
}

int main(int argc, char **argv) {
    const char *rec = argc > 1 ? argv[1] : "build/bench-data/imagenet1k.rec";
    int rounds = argc > 2 ? atoi(argv[2]) : 7, i, k;
    char build[4096], uris[8192], cmd[NROWS][16384];
    static const char *names[NROWS] = {"examples/train_loop, 1 worker", "examples/train_loop, 0 workers (pull mode)",
                                       "recio iter --workers 0 --checksum fast", "recio iter --workers 1 --checksum fast",
                                       "recio iter --workers 0 --no-checksum", "recio iter --workers 0 (bytes checksum)"};
    double v[NROWS][64], ratio[64], tmp[64];
    char *slash;
    snprintf(build, sizeof build, "%s", argv[0]);
    if ((slash = strrchr(build, '/')) != NULL) *slash = 0; /* BUILD/bench */
    if ((slash = strrchr(build, '/')) != NULL) *slash = 0; /* BUILD */
    else snprintf(build, sizeof build, "..");
    if (rounds < 1 || rounds > 64) rounds = 7;
    snprintf(uris, sizeof uris, "%s;%s;%s", rec, rec, rec);
    snprintf(cmd[0], sizeof cmd[0], "%s/examples/train_loop '%s' 1 32", build, uris);
    snprintf(cmd[1], sizeof cmd[1], "%s/examples/train_loop '%s' 0 32", build, uris);
    for (i = 2; i < NROWS; i++)
        snprintf(cmd[i], sizeof cmd[i], "%s/recio iter '%s' --spec " SPEC " --batch 32 --shuffle-buffer 256 --seed 2024 --workers %d%s 2>&1 >/dev/null",
                 build, uris, i == 3 ? 1 : 0, i == 4 ? " --no-checksum" : i == 5 ? "" : " --checksum fast");
    for (i = 0; i < NROWS; i++)
        if (run(cmd[i]) < 0) return fprintf(stderr, "bench_cli: failed: %s\n", cmd[i]), 1; /* and warm */
    for (k = 0; k < rounds; k++)
        for (i = 0; i < NROWS; i++) v[i][k] = run(cmd[i]);
    printf("recio iter against examples/train_loop, %s x 3 per epoch, train chain, batch 32, shuffle buffer 256, "
           "%d interleaved rounds\n", rec, rounds);
    printf("%-42s %9s %17s %8s %13s\n", "program", "img/s", "(min-max)", "ratio", "(min-max)");
    for (i = 0; i < NROWS; i++) {
        double lo, hi, rlo, rhi, m, rm;
        for (k = 0; k < rounds; k++) ratio[k] = v[i][k] / v[0][k];
        bench_range(v[i], rounds, &lo, &hi);
        bench_range(ratio, rounds, &rlo, &rhi);
        memcpy(tmp, v[i], sizeof tmp);
        m = bench_median(tmp, rounds);
        rm = bench_median(ratio, rounds);
        printf("%-42s %9.0f %8.0f-%-8.0f %7.3fx %6.3f-%.3fx%s\n", names[i], m, lo, hi, rm, rlo, rhi, i ? "" : "  (baseline)");
    }
    /* the target compares like with like: each recio iter row with train_loop's row of its worker count */
    {
        static const int pair[2][2] = {{2, 1}, {3, 0}};
        for (i = 0; i < 2; i++) {
            double rlo, rhi, rm;
            for (k = 0; k < rounds; k++) ratio[k] = v[pair[i][0]][k] / v[pair[i][1]][k];
            bench_range(ratio, rounds, &rlo, &rhi);
            rm = bench_median(ratio, rounds);
            printf("%s against %s: %.3fx (%.3f-%.3fx)\n", names[pair[i][0]], names[pair[i][1]], rm, rlo, rhi);
        }
    }
    printf("target: recio iter within 5%% of train_loop with the same worker count (ratio >= 0.95)\n");
    return 0;
}
