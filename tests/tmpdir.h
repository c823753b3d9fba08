/* Temporary directories for the tests, on POSIX and on Windows (mingw-w64, run under wine by
   `make cross ARCH=win64`). Include after stdio.h; POSIX files need _POSIX_C_SOURCE for mkdtemp. */
#ifndef RECIO_TEST_TMPDIR_H
#define RECIO_TEST_TMPDIR_H
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#ifdef _WIN32
#include <direct.h>
#include <io.h>
#include <stdlib.h>
#define t_mkdir(p) _mkdir(p)
#else
#include <sys/stat.h>
#include <unistd.h>
#define t_mkdir(p) mkdir(p, 0755)
#endif

/* tmpl is "/tmp/NAME-XXXXXX" in a buffer with a byte to spare: on Windows (wine runs the tests in the
   repository) it becomes "build/NAME-XXXXXX", so what a test leaves stays under build/. */
static inline char *t_mkdtemp(char *tmpl) {
#ifdef _WIN32
    if (strncmp(tmpl, "/tmp/", 5) == 0) memmove(tmpl + 6, tmpl + 5, strlen(tmpl + 5) + 1), memcpy(tmpl, "build/", 6);
    if (_mktemp_s(tmpl, strlen(tmpl) + 1) != 0 || _mkdir(tmpl) != 0) return NULL;
    return tmpl;
#else
    return mkdtemp(tmpl);
#endif
}

/* Remove dir and the files in it (one level, as the tests make them); 0 on success. */
static inline int t_rmtree(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[1024];
    int bad = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        bad |= remove(p) != 0;
    }
    closedir(d);
#ifdef _WIN32
    return bad | (_rmdir(dir) != 0);
#else
    return bad | (rmdir(dir) != 0);
#endif
}
#endif
