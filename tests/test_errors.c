/* One error convention: every open that fails hands back "FILE: offset N: what" through its desc's
   errmsg (RECIO_ERRMSG_SIZE bytes), with the file's name and the system's reason; a good open leaves
   it empty; the handles keep saying why their calls fail; recio_index_save's desc does the same for a
   save. The expected words are the C library's strerror for the errno of the case. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "tmpdir.h"
#include <errno.h>
#include <string.h>

#define MISSING "tests/data/no-such-dir/missing.rec"

static char msg[RECIO_ERRMSG_SIZE];

/* msg names the file, an offset, and the words for errno e. */
static int says(const char *file, int e) {
    char want[RECIO_ERRMSG_SIZE];
    snprintf(want, sizeof want, "%s: offset 0: cannot open: %s", file, strerror(e));
    if (strcmp(msg, want) != 0) printf("  got  \"%s\"\n  want \"%s\"\n", msg, want);
    return strcmp(msg, want) == 0;
}

/* An output's: it is written beside PATH and renamed, so the temporary file is what cannot be made. */
static int says_create(const char *file, int e) {
    char want[RECIO_ERRMSG_SIZE];
    snprintf(want, sizeof want, "%s: offset 0: cannot create: %s (a temporary file beside it)", file, strerror(e));
    if (strcmp(msg, want) != 0) printf("  got  \"%s\"\n  want \"%s\"\n", msg, want);
    return strcmp(msg, want) == 0;
}

static void test_reader(void) {
    recio_reader_desc d;
    recio_reader *r = (recio_reader *)&d;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    strcpy(msg, "stale");
    CHECK(recio_reader_open_desc(&r, MISSING, &d) == RECIO_ERR_IO && r == NULL);
    CHECK(says(MISSING, ENOENT));
    d.use_mmap = 1;
    strcpy(msg, "stale");
    CHECK(recio_reader_open_desc(&r, MISSING, &d) == RECIO_ERR_IO && r == NULL);
    CHECK(strstr(msg, MISSING) == msg && strstr(msg, strerror(ENOENT)) != NULL);
    d.use_mmap = 0;
    CHECK(recio_reader_open_desc(&r, "tests/data/compat/a.rec", &d) == RECIO_OK && msg[0] == 0);
    recio_reader_close(r);
}

static void test_writer(void) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK(recio_writer_open_desc(&w, MISSING, &d) == RECIO_ERR_IO && w == NULL);
    CHECK(strstr(msg, MISSING) == msg && strstr(msg, strerror(ENOENT)) != NULL);
    d.atomic = 1; /* the temporary file beside it cannot be made either */
    CHECK(recio_writer_open_desc(&w, MISSING, &d) == RECIO_ERR_IO && w == NULL);
    CHECK(strstr(msg, MISSING) == msg && strstr(msg, strerror(ENOENT)) != NULL);
    printf("  writer: %s\n", msg);
}

static void test_split_and_iter(void) {
    recio_split_desc sd;
    recio_split *s = NULL;
    recio_iter_desc id;
    recio_iter *it = NULL;
    memset(&sd, 0, sizeof sd);
    sd.errmsg = msg;
    CHECK(recio_split_open_desc(&s, MISSING, 0, 1, &sd) != RECIO_OK);
    CHECK(strstr(msg, MISSING) != NULL && s == NULL); /* a failed open makes no handle, as every open */
    printf("  split: %s\n", msg);
    recio_split_close(s);
    memset(&id, 0, sizeof id);
    id.uris = MISSING, id.item.spec = "resize(8,8)", id.errmsg = msg;
    msg[0] = 0;
    CHECK(recio_iter_open(&it, &id) != RECIO_OK && it == NULL);
    CHECK(strstr(msg, MISSING) != NULL);
    printf("  iter: %s\n", msg);
    id.uris = "tests/data/compat/a.rec", id.item.spec = NULL, id.item.transform = NULL;
    CHECK(recio_iter_open(&it, &id) == RECIO_ERR_ARG && strstr(msg, "no spec") != NULL);
}

static void test_index_and_lst(void) {
    recio_index idx;
    recio_lst lst;
    recio_index_desc id;
    recio_lst_desc ld;
    static recio_index_entry e[2] = {{7, 0}, {9, 40}};
    memset(&id, 0, sizeof id);
    memset(&ld, 0, sizeof ld);
    id.errmsg = ld.errmsg = msg;
    CHECK(recio_index_load(&idx, MISSING, &id) == RECIO_ERR_IO && says(MISSING, ENOENT));
    msg[0] = 0;
    CHECK(recio_lst_load(&lst, MISSING, &ld) == RECIO_ERR_IO && says(MISSING, ENOENT));
    idx.entries = e, idx.count = 2;
    msg[0] = 0;
    CHECK(recio_index_save(&idx, MISSING, &id) == RECIO_ERR_IO && says_create(MISSING, ENOENT));
#ifndef _WIN32
    CHECK(recio_index_save(&idx, "/dev/full", &id) == RECIO_ERR_IO); /* the write fails, with its offset */
    CHECK(strstr(msg, "/dev/full: offset 0: write failed: ") == msg || strstr(msg, "/dev/full: offset 0: close failed: ") == msg);
    printf("  index save: %s\n", msg);
#endif
}

int main(void) {
    RUN(test_reader);
    RUN(test_writer);
    RUN(test_split_and_iter);
    RUN(test_index_and_lst);
    return t_done("errors");
}
