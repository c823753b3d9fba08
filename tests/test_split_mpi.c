/* examples/mpi_split.c under `mpirun --oversubscribe -np 4`: every record read exactly once, in
   byte, index and shuffled mode. Skipped, with a message, where mpicc or mpirun is absent.
   With --s3 (tests/test_remote.sh runs it so under tests/remote/servers.py, which sets
   RECIO_TEST_S3): the same ranks over s3:// shards on the tests' s3rver, each rank's part (records,
   bytes, a hash of every record's offset and payload) equal to that rank's part of the local run. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include <unistd.h>

static int have(const char *tool) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

/* The example's allreduce verdict, and that all 4 ranks reported; each rank's line into parts
   (when given: "rank R of 4: ..." at parts[R]). */
static void run_mode_parts(const char *bin, const char *args, char parts[4][256]) {
    char cmd[1024], line[256];
    FILE *p;
    int ok = 0, ranks = 0;
    unsigned r;
    snprintf(cmd, sizeof cmd, "mpirun %s--oversubscribe -np 4 %s %s 2>&1",
             geteuid() == 0 ? "--allow-run-as-root " : "", bin, args);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return;
    while (fgets(line, sizeof line, p)) {
        if (strstr(line, "every record read exactly once: ok") && strstr(line, "1111 records")) ok = 1;
        if (strncmp(line, "rank ", 5) == 0 && strstr(line, " of 4: ")) ranks++;
        if (parts && sscanf(line, "rank %u of 4: ", &r) == 1 && r < 4) snprintf(parts[r], 256, "%s", line);
        if (!strstr(line, "rank ") && !strstr(line, "ok")) fprintf(stderr, "  %s", line);
    }
    CHECK_EQ_INT(pclose(p), 0);
    CHECK(ok);
    CHECK_EQ_INT(ranks, 4);
}
static void run_mode(const char *bin, const char *args) { run_mode_parts(bin, args, NULL); }

/* The example built with libcurl (RECIO_CURL) into dir/mpi_split; 0 when it built. */
static int build_example(const char *dir, const char *bin, const char *flags) {
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "printf '#define RECIO_IMPLEMENTATION\\n#include \"recio.h\"\\n#include \"examples/mpi_split.c\"\\n' > %s/m.c && "
             "mpicc -std=c99 -O1 -I. -I/usr/include/stb -D_FILE_OFFSET_BITS=64 %s %s/m.c -o %s -lm %s",
             dir, flags, dir, bin, strstr(flags, "RECIO_CURL") ? "-lcurl" : "");
    return system(cmd);
}

static void test_mpi_every_record_once(void) {
    char dir[] = "/tmp/recio_mpi_XXXXXX", cmd[600], bin[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(bin, sizeof bin, "%s/mpi_split", dir);
    /* one translation unit: the implementation, then the example */
    CHECK(build_example(dir, bin, "") == 0);
    run_mode(bin, "");
    run_mode(bin, "--index");
    run_mode(bin, "--shuffle 11");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The golden files' shards on s3rver (a wildcard: listed), read by 4 ranks: each rank's part is the
   local run's, in byte, index (the .idx beside each shard, on S3) and shuffled mode. */
static void test_mpi_s3_parts(void) {
    static const char *const MODES[] = {"", "--index", "--shuffle 11"};
    char dir[] = "/tmp/recio_mpi_XXXXXX", cmd[600], bin[64], args[512];
    char local[4][256], remote[4][256];
    int m, r;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(bin, sizeof bin, "%s/mpi_split", dir);
    CHECK(build_example(dir, bin, "-DRECIO_CURL") == 0);
    setenv("AWS_ENDPOINT_URL", getenv("RECIO_TEST_S3"), 1); /* the keys tests/remote/servers.py's s3rver takes */
    setenv("AWS_ACCESS_KEY_ID", "RECIOTESTKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "recio-test-secret/+=", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    unsetenv("AWS_SESSION_TOKEN"), unsetenv("AWS_PROFILE");
    for (m = 0; m < 3; m++) {
        memset(local, 0, sizeof local), memset(remote, 0, sizeof remote);
        snprintf(args, sizeof args, "'tests/data/compat/a.rec;tests/data/compat/b.rec;tests/data/compat/c.rec' %s", MODES[m]);
        run_mode_parts(bin, args, local);
        snprintf(args, sizeof args, "-x AWS_ENDPOINT_URL -x AWS_ACCESS_KEY_ID -x AWS_SECRET_ACCESS_KEY -x AWS_REGION "
                 "%s 's3://data/compat/[abc].rec' %s", bin, MODES[m]);
        run_mode_parts("", args, remote); /* mpirun's -x options before the program */
        for (r = 0; r < 4; r++) {
            if (strcmp(local[r], remote[r])) fprintf(stderr, "  %s: local %s  s3    %s", MODES[m], local[r], remote[r]);
            CHECK(local[r][0] && strstr(local[r], " records, ") && !strcmp(local[r], remote[r]));
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

int main(int argc, char **argv) {
    int s3 = argc > 1 && !strcmp(argv[1], "--s3");
    if (!have("mpicc") || !have("mpirun")) {
        t_skip("mpicc/mpirun not found (install libopenmpi-dev, e.g. with 'make mpi-example')", 1);
        return t_done(s3 ? "split_mpi_s3" : "split_mpi");
    }
    if (!s3) RUN(test_mpi_every_record_once);
    else if (!getenv("RECIO_TEST_S3")) t_skip("--s3 runs under tests/remote/servers.py (tests/test_remote.sh)", 1);
    else RUN(test_mpi_s3_parts);
    return t_done(s3 ? "split_mpi_s3" : "split_mpi");
}
