/* examples/mpi_split.c under `mpirun --oversubscribe -np 4`: every record read exactly once, in
   byte, index and shuffled mode. Skipped, with a message, where mpicc or mpirun is absent. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include <unistd.h>

static int have(const char *tool) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

/* The example's allreduce verdict, and that all 4 ranks reported. */
static void run_mode(const char *bin, const char *args) {
    char cmd[512], line[256];
    FILE *p;
    int ok = 0, ranks = 0;
    snprintf(cmd, sizeof cmd, "mpirun %s--oversubscribe -np 4 %s %s 2>&1", geteuid() == 0 ? "--allow-run-as-root " : "", bin, args);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "every record read exactly once: ok") && strstr(line, "1111 records")) ok = 1;
        if (strncmp(line, "rank ", 5) == 0 && strstr(line, " of 4: ")) ranks++;
        if (!strstr(line, "rank ") && !strstr(line, "ok")) fprintf(stderr, "  %s", line);
    }
    CHECK_EQ_INT(pclose(p), 0);
    CHECK(ok);
    CHECK_EQ_INT(ranks, 4);
}

static void test_mpi_every_record_once(void) {
    char dir[] = "/tmp/recio_mpi_XXXXXX", cmd[600], bin[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(bin, sizeof bin, "%s/mpi_split", dir);
    /* one translation unit: the implementation, then the example */
    snprintf(cmd, sizeof cmd,
             "printf '#define RECIO_IMPLEMENTATION\\n#include \"recio.h\"\\n#include \"examples/mpi_split.c\"\\n' > %s/m.c && "
             "mpicc -std=c99 -O1 -I. -I/usr/include/stb -D_FILE_OFFSET_BITS=64 %s/m.c -o %s -lm",
             dir, dir, bin);
    CHECK(system(cmd) == 0);
    run_mode(bin, "");
    run_mode(bin, "--index");
    run_mode(bin, "--shuffle 11");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    if (!have("mpicc") || !have("mpirun")) {
        t_skip("mpicc/mpirun not found (install libopenmpi-dev, e.g. with 'make mpi-example')", 1);
        return t_done("split_mpi");
    }
    RUN(test_mpi_every_record_once);
    return t_done("split_mpi");
}
