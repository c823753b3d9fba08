/* `recio split` through the command ($RECIO): DESIGN.md section 4's output, checked against
   dmlc-core's split-3.tsv / isplit-5.tsv and the offsets of the NAME.rec.tsv manifests. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include <stdint.h>
#include <sys/wait.h>

#define DIR "tests/data/compat/"

static const char *recio_cmd(void) {
    const char *r = getenv("RECIO");
    return r && *r ? r : "build/recio";
}

/* Run the command from the compat directory (so file names print as in the .tsv files). */
static char *run(const char *args, int *status) {
    char cmd[1024];
    FILE *p;
    size_t cap = 1 << 16, n = 0, k;
    char *out = (char *)malloc(cap);
    const char *r = recio_cmd();
    snprintf(cmd, sizeof cmd, "cd %s && %s%s %s 2>&1", DIR, r[0] == '/' || strchr(r, ' ') ? "" : "../../../", r, args);
    p = popen(cmd, "r");
    if (!p) {
        *status = -1;
        out[0] = 0;
        return out;
    }
    while ((k = fread(out + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (cap - n < 2) out = (char *)realloc(out, cap *= 2);
    }
    out[n] = 0;
    *status = pclose(p);
    *status = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    return out;
}

static unsigned long long manifest_offset(const char *file, unsigned long long ord) {
    char path[128];
    unsigned long long o, off, len, found = ~0ULL;
    char sha[65];
    FILE *f;
    snprintf(path, sizeof path, DIR "%s.tsv", file);
    f = fopen(path, "r");
    if (!f) return found;
    while (fscanf(f, "%llu\t%llu\t%llu\t%64s", &o, &off, &len, sha) == 4)
        if (o == ord) found = off;
    fclose(f);
    return found;
}

/* Expected lines for one rank from a dmlc split file: file ordinal offset length. */
static char *expected(const char *tsv, unsigned rank) {
    FILE *f = fopen(tsv, "r");
    size_t cap = 1 << 16, n = 0;
    char *out = (char *)malloc(cap), file[16], sha[65];
    unsigned r;
    unsigned long long ord, len;
    out[0] = 0;
    if (!f) return out;
    while (fscanf(f, "%u\t%15s\t%llu\t%llu\t%64s", &r, file, &ord, &len, sha) == 5) {
        if (r != rank) continue;
        if (cap - n < 128) out = (char *)realloc(out, cap *= 2);
        n += (size_t)sprintf(out + n, "%s\t%llu\t%llu\t%llu\n", file, ord, manifest_offset(file, ord), len);
    }
    fclose(f);
    return out;
}

static void check_same(const char *args, const char *tsv, unsigned rank) {
    int st;
    char *got = run(args, &st), *want = expected(tsv, rank);
    CHECK_EQ_INT(st, 0);
    CHECK(want[0] != 0);
    CHECK(strcmp(got, want) == 0);
    if (strcmp(got, want) != 0) fprintf(stderr, "  %s: got %.200s\n  want %.200s\n", args, got, want);
    free(got);
    free(want);
}

static void test_byte_parts_output(void) {
    unsigned r;
    char args[128];
    for (r = 0; r < 3; r++) {
        snprintf(args, sizeof args, "split --nsplit 3 --rank %u 'a.rec;b.rec;c.rec'", r);
        check_same(args, DIR "split-3.tsv", r);
    }
    check_same("split --nsplit 16 --rank 12 'a.rec;b.rec;c.rec'", DIR "split-16.tsv", 12);
}

static void test_index_parts_output(void) {
    check_same("split --nsplit 5 --rank 3 --index 'a.rec;b.rec;c.rec'", DIR "isplit-5.tsv", 3);
    check_same("split --nsplit 5 --rank 1 --index-file all.idx 'a.rec;b.rec;c.rec'", DIR "isplit-5.tsv", 1);
}

static void test_bounds_output(void) {
    int st;
    char *got = run("split --nsplit 3 --rank 1 --bounds 'a.rec;b.rec;c.rec'", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(strcmp(got, "505304\t710128\t?\n") == 0); /* split-3.bounds.tsv, rank 1 */
    free(got);
    got = run("split --nsplit 8 --rank 7 --index --equalize pad --bounds 'a.rec;b.rec;c.rec'", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(strstr(got, "\t139\n") != NULL); /* ceil(1111 / 8) */
    free(got);
}

/* Shuffled output: the same twice, another order for another epoch, all records once. */
static void test_shuffle_output(void) {
    int st;
    char *a = run("split --nsplit 1 --rank 0 --shuffle 3 --epoch 1 'a.rec;b.rec;c.rec'", &st), *b, *c;
    size_t lines = 0;
    const char *p;
    CHECK_EQ_INT(st, 0);
    b = run("split --nsplit 1 --rank 0 --shuffle 3 --epoch 1 'a.rec;b.rec;c.rec'", &st);
    c = run("split --nsplit 1 --rank 0 --shuffle 3 --epoch 2 --chunk 16,4 'a.rec;b.rec;c.rec'", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(strcmp(a, b) == 0);
    CHECK(strcmp(a, c) != 0);
    for (p = a; *p; p++) lines += *p == '\n';
    CHECK_EQ_INT(lines, 1111);
    free(a);
    free(b);
    free(c);
}

/* The exit status, and a piece of the output when given. */
static void expect_status(const char *args, int status, const char *needle) {
    int st;
    char *out = run(args, &st);
    CHECK_EQ_INT(st, status);
    if (needle) CHECK(strstr(out, needle) != NULL);
    free(out);
}

static void test_errors_and_usage(void) {
    expect_status("split --nsplit 2 --rank 0 'a.rec;nope.rec'", 1, "recio: nope.rec");
    expect_status("split --nsplit 2 --rank 2 a.rec", 2, "--rank");
    expect_status("split --nsplit 0 --rank 0 a.rec", 2, "--nsplit");
    expect_status("split --rank 0 a.rec", 2, "required");
    expect_status("split --nsplit 2 --rank 0 --equalize maybe a.rec", 2, "pad or drop");
    expect_status("split --help", 0, "example:");
}

/* ---- damaged files: a part yields every sound record of its range, then the error ---- */

#define DMG "../../../build/test_split_cli/" /* from the compat folder */

/* DMG/NAME: the first n bytes of a.rec + b.rec + c.rec; 0 on success. */
static int make_truncated(const char *name, long n) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mkdir -p build/test_split_cli && cat " DIR "a.rec " DIR "b.rec " DIR "c.rec | head -c %ld > build/test_split_cli/%s", n, name);
    return system(cmd) == 0 ? 0 : -1;
}

/* The lines `recio split` must print for [b, e) of a file that is a prefix of a.rec + b.rec + c.rec:
   the records `dump` finds there in the undamaged whole. */
static char *records_between(const char *name, unsigned long long b, unsigned long long e) {
    int st;
    char *all = run("dump ../../../build/test_split_cli/whole.rec", &st), *out = (char *)malloc(strlen(all) + 1), *p = all;
    size_t n = 0;
    unsigned long long ord, off, len;
    out[0] = 0;
    while (sscanf(p, "%llu\t%llu\t%llu", &ord, &off, &len) == 3) {
        if (off >= b && off < e) n += (size_t)sprintf(out + n, DMG "%s\t%llu\t%llu\t%llu\n", name, ord, off, len);
        if (!(p = strchr(p, '\n'))) break;
        p++;
    }
    free(all);
    return out;
}

/* A .rec cut at 60000 (inside its record at 57996), 3 parts: rank 1's range is sound and comes out
   whole (it printed nothing and failed at the far end: the ordinal of its first record was found by
   hopping over the whole file); rank 2 gives its sound records, then the error at 57996. */
static void test_truncated_parts(void) {
    int st;
    char *got, *want;
    CHECK(make_truncated("whole.rec", 1L << 30) == 0 && make_truncated("t60k.rec", 60000) == 0);
    got = run("split --nsplit 3 --rank 1 " DMG "t60k.rec", &st);
    want = records_between("t60k.rec", 20332, 40056); /* split --bounds of rank 1 */
    CHECK_EQ_INT(st, 0);
    CHECK(want[0] && strcmp(got, want) == 0);
    free(got);
    free(want);
    got = run("split --nsplit 3 --rank 2 " DMG "t60k.rec", &st); /* records on stdout, then the error */
    want = records_between("t60k.rec", 40056, 57996);
    CHECK_EQ_INT(st, 1);
    CHECK(want[0] && strncmp(got, want, strlen(want)) == 0);
    CHECK(strncmp(got + strlen(want), "recio: " DMG "t60k.rec: offset 57996: ", strlen("recio: " DMG "t60k.rec: offset 57996: ")) == 0);
    free(got);
    free(want);
}

/* 32 bytes: a record at 0 (8 bytes of data), an empty one at 16, and at 24 a header whose 100 bytes
   are missing. Rank 1 of 2 ([16, 32)) gives the record at 16, then names 24. */
static void test_truncated_small(void) {
    static const unsigned char bytes[32] = {0x0a, 0x23, 0xd7, 0xce, 8, 0, 0, 0, 'A', 'A', 'A', 'A', 'A', 'A', 'A', 'A',
                                            0x0a, 0x23, 0xd7, 0xce, 0, 0, 0, 0, 0x0a, 0x23, 0xd7, 0xce, 100, 0, 0, 0};
    FILE *f = fopen("build/test_split_cli/t32.rec", "wb");
    int st;
    char *got;
    CHECK(f && fwrite(bytes, 1, 32, f) == 32);
    if (f) fclose(f);
    got = run("split --nsplit 2 --rank 1 " DMG "t32.rec", &st);
    CHECK_EQ_INT(st, 1);
    CHECK(strncmp(got, DMG "t32.rec\t1\t16\t0\n", strlen(DMG "t32.rec\t1\t16\t0\n")) == 0);
    CHECK(strstr(got, "t32.rec: offset 24: ") != NULL);
    free(got);
}

int main(void) {
    RUN(test_byte_parts_output);
    RUN(test_index_parts_output);
    RUN(test_bounds_output);
    RUN(test_shuffle_output);
    RUN(test_errors_and_usage);
    RUN(test_truncated_parts);
    RUN(test_truncated_small);
    return t_done("split_cli");
}
