/* The implementation as a user may build it: strict -std=c99 (no feature macro anywhere) and a
   system header included before recio.h, which in glibc and musl fixes the feature set before recio
   can ask for POSIX. The file backend must still know file sizes (the split needs them), replace an
   existing file atomically, map files and expand wildcard and directory uris. Portable C only here:
   the same file runs under Windows (see make cross ARCH=win64). */
#include <stdio.h>
#include <string.h>
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#ifdef _WIN32
#include <direct.h>
#define t_mkdir(p) _mkdir(p)
#define t_rmdir(p) _rmdir(p)
#else
#include <sys/stat.h>
#include <unistd.h>
#define t_mkdir(p) mkdir(p, 0777)
#define t_rmdir(p) rmdir(p)
#endif

static char dir[512];
static const char *path_in(const char *name) {
    static char buf[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Records "file F record I" of 1..60 bytes, n per file; returns the records written. */
static int write_file(const char *path, int f, int n, int atomic) {
    recio_writer_desc d;
    recio_writer *w;
    char rec[64];
    int i, ok = 1;
    memset(&d, 0, sizeof d);
    d.atomic = atomic;
    if (recio_writer_open_desc(&w, path, &d) != RECIO_OK) return 0;
    for (i = 0; i < n; i++) {
        memset(rec, 'a' + i % 26, sizeof rec);
        snprintf(rec, sizeof rec, "file %d record %d", f, i);
        ok &= recio_writer_write(w, rec, (size_t)(1 + (f * 7 + i * 13) % 60)) == RECIO_OK;
    }
    ok &= recio_writer_close(w) == RECIO_OK;
    return ok ? n : 0;
}

static void test_file_size_and_atomic_replace(void) {
    recio_reader *r;
    recio_record rec;
    struct stat st;
    int n = 0;
    CHECK_EQ_INT(write_file(path_in("a.rec"), 0, 50, 0), 50);
    /* an atomic writer onto a file that exists replaces it */
    CHECK_EQ_INT(write_file(path_in("a.rec"), 0, 40, 1), 40);
    CHECK(recio_reader_open(&r, path_in("a.rec")) == RECIO_OK);
    while (recio_reader_next(r, &rec) == RECIO_OK) n++;
    CHECK_EQ_INT(n, 40);
    CHECK(stat(path_in("a.rec"), &st) == 0 && st.st_size > 0); /* the whole file was read */
    CHECK_EQ_INT((long long)st.st_size, (long long)recio_reader_tell(r));
    recio_reader_close(r);
}

static void test_mmap_reader(void) {
    recio_reader *r;
    recio_record rec;
    recio_err e = rec_reader_mapped(&r, path_in("a.rec"));
    int n = 0;
#ifdef _WIN32
    if (e == RECIO_ERR_UNSUPPORTED) return;
#endif
    CHECK_EQ_INT(e, RECIO_OK);
    if (e) return;
    while (recio_reader_next(r, &rec) == RECIO_OK) n++;
    CHECK_EQ_INT(n, 40);
    recio_reader_close(r);
}

/* Every record of uris, over nsplit parts, exactly once. */
static int count_split(const char *uris, unsigned nsplit) {
    unsigned rank;
    int n = 0;
    for (rank = 0; rank < nsplit; rank++) {
        recio_split *s;
        recio_record rec;
        recio_err e = recio_split_open(&s, uris, rank, nsplit);
        if (e != RECIO_OK) {
            printf("split %s: %s\n", uris, s ? recio_split_errmsg(s) : recio_strerror(e));
            recio_split_close(s);
            return -1;
        }
        while ((e = recio_split_next(s, &rec)) == RECIO_OK) n++;
        if (e != RECIO_END) n = -1000000;
        recio_split_close(s);
    }
    return n;
}

static void test_split_lists_wildcards_and_directories(void) {
    char uris[2000];
    CHECK_EQ_INT(write_file(path_in("b.rec"), 1, 70, 0), 70);
    CHECK_EQ_INT(write_file(path_in("c.rec"), 2, 9, 1), 9);
    snprintf(uris, sizeof uris, "%s;%s;%s", path_in("a.rec"), path_in("b.rec"), path_in("c.rec"));
    CHECK_EQ_INT(count_split(uris, 1), 119);
    CHECK_EQ_INT(count_split(uris, 3), 119);
    CHECK_EQ_INT(count_split(path_in("*.rec"), 2), 119);
    CHECK_EQ_INT(count_split(path_in("[ab].rec"), 2), 110);
    CHECK_EQ_INT(count_split(path_in("?.rec"), 4), 119);
    CHECK_EQ_INT(count_split(dir, 5), 119); /* a directory stands for its *.rec files */
}

int main(int argc, char **argv) {
    (void)argc;
    snprintf(dir, sizeof dir, "%s.tmp", argv[0]);
    remove(path_in("a.rec")), remove(path_in("b.rec")), remove(path_in("c.rec"));
    t_rmdir(dir);
    CHECK(t_mkdir(dir) == 0);
    RUN(test_file_size_and_atomic_replace);
    RUN(test_mmap_reader);
    RUN(test_split_lists_wildcards_and_directories);
    remove(path_in("a.rec")), remove(path_in("b.rec")), remove(path_in("c.rec"));
    t_rmdir(dir);
    return t_done("strict_c99");
}
