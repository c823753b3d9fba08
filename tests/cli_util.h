/* Running the recio command ($RECIO, as make test sets it) from a test: POSIX only. */
#ifndef RECIO_TEST_CLI_UTIL_H
#define RECIO_TEST_CLI_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* "recio ARGS 2>&1" under `timeout SECONDS` (0: none); its output into out (cap bytes, NUL-ended);
   the exit status (124: it ran out of time), -1 when it could not run. */
static inline int t_recio_capture(const char *args, int seconds, char *out, size_t cap) {
    char cmd[2048], limit[32] = "";
    const char *exe = getenv("RECIO");
    FILE *p;
    size_t n;
    int st;
    if (seconds > 0) snprintf(limit, sizeof limit, "timeout %d ", seconds);
    snprintf(cmd, sizeof cmd, "%s%s %s 2>&1", limit, exe && *exe ? exe : "build/recio", args);
    if (!(p = popen(cmd, "r"))) return -1;
    n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
#endif
