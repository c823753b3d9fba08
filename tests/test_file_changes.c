/* Files that change under the reader (issue 12 item 12): a file truncated between opening a split
   and reading it killed the process with SIGBUS when the split mapped it (shuffled splits did by
   default, and so `recio iter --shuffle`). Nothing maps unless asked now: every default split and
   reader here, opened and then cut to half by truncate(), must end in a clean error. Each read runs
   in a child process so that a SIGBUS is reported, not suffered. POSIX only. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include <sys/wait.h>
#include <unistd.h>

#define T "build/test_file_changes"
#define NREC 200

static int make_file(const char *rec, const char *idx) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    unsigned char payload[3000];
    int i, bad = 0;
    memset(&d, 0, sizeof d);
    d.index_path = idx;
    if (recio_writer_open_desc(&w, rec, &d) != RECIO_OK) return -1;
    for (i = 0; i < NREC; i++) {
        memset(payload, i & 255, sizeof payload);
        bad |= recio_writer_write(w, payload, 1000 + (size_t)(i * 7) % 2000) != RECIO_OK;
    }
    return recio_writer_close(w) == RECIO_OK && !bad ? 0 : -1;
}

/* Child: open as `how` says, read a record (a split opens and maps its files then), cut the file to
   about a third, read the rest. Exit 0 when the reading ended in
   an error or with every record (read into the buffer before the cut), 1 when it ended cleanly
   short of them (records lost without a word), 2 when it could not open. */
static int child(int how, const char *rec, const char *idx) {
    recio_record r;
    recio_err e = RECIO_OK;
    int n = 1;
    if (how < 3) {
        recio_split_desc d;
        recio_split *s = NULL;
        memset(&d, 0, sizeof d);
        if (how > 0) d.index_path = idx, d.shuffle = how == 1 ? RECIO_SHUFFLE_FULL : RECIO_SHUFFLE_CHUNK;
        if (recio_split_open_desc(&s, rec, 0, 1, &d) != RECIO_OK || recio_split_next(s, &r) != RECIO_OK) return 2;
        if (truncate(rec, 100000) != 0) return 2;
        while ((e = recio_split_next(s, &r)) == RECIO_OK) n++;
        recio_split_close(s);
    } else {
        recio_reader *rd = NULL;
        if (recio_reader_open(&rd, rec) != RECIO_OK || recio_reader_next(rd, &r) != RECIO_OK) return 2;
        if (truncate(rec, 100000) != 0) return 2;
        while ((e = recio_reader_next(rd, &r)) == RECIO_OK) n++;
        recio_reader_close(rd);
    }
    return e != RECIO_END || n == NREC ? 0 : 1;
}

static void test_truncated_while_open(void) {
    static const char *what[4] = {"byte-mode split", "full-shuffle split", "chunk-shuffle split", "reader"};
    int how;
    CHECK(system("rm -rf " T " && mkdir -p " T) == 0);
    for (how = 0; how < 4; how++) {
        pid_t p;
        int st = 0;
        CHECK(make_file(T "/a.rec", T "/a.idx") == 0);
        fflush(NULL);
        p = fork();
        if (p == 0) _exit(child(how, T "/a.rec", T "/a.idx"));
        CHECK(p > 0 && waitpid(p, &st, 0) == p);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fprintf(stderr, "  %s: %s %d\n", what[how], WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

int main(void) {
    RUN(test_truncated_while_open);
    return t_done("test_file_changes");
}
