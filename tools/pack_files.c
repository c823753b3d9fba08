/* File helpers shared by the dataset commands (list, pack, unpack, show, salvage), declared in pack.h. */
#define _POSIX_C_SOURCE 200809L
#include "pack.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pack_read_file(const char *path, unsigned char **out, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    size_t len = 0, cap = 0;
    if (!f) return -1;
    for (;;) {
        size_t k;
        if (len == cap) {
            unsigned char *q = (unsigned char *)realloc(b, cap = cap ? cap * 2 : 1 << 16);
            if (!q) {
                free(b);
                fclose(f);
                errno = ENOMEM;
                return -1;
            }
            b = q;
        }
        k = fread(b + len, 1, cap - len, f);
        len += k;
        if (k == 0) break;
    }
    if (ferror(f)) {
        int e = errno ? errno : EIO;
        free(b);
        fclose(f);
        errno = e;
        return -1;
    }
    fclose(f);
    *out = b;
    *n = len;
    return 0;
}

int pack_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    int bad;
    if (!f) return -1;
    bad = fwrite(data, 1, n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* "PATH.WHAT.PID" (".2", ".3"... for the k-th try), malloc'd. */
static char *side_name(const char *path, const char *what, unsigned k) {
    char tag[64];
    if (k == 1) snprintf(tag, sizeof tag, ".%s.%ld", what, (long)getpid());
    else snprintf(tag, sizeof tag, ".%s.%ld.%u", what, (long)getpid(), k);
    return pack_cat(path, tag);
}

/* A side name created exclusively: no other writer can share it. */
static int unique_name(const char *path, const char *what, char **name) {
    unsigned k;
    for (k = 1; k < 1000; k++) {
        int fd;
        if (!(*name = side_name(path, what, k))) return errno = ENOMEM, -1;
        if ((fd = open(*name, O_WRONLY | O_CREAT | O_EXCL, 0666)) >= 0) return fd;
        free(*name);
        *name = NULL;
        if (errno != EEXIST) return -1;
    }
    return errno = EEXIST, -1;
}

FILE *pack_create_tmp(const char *path, char **tmp) {
    int fd = unique_name(path, "tmp", tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (fd >= 0 && !f) {
        int e = errno;
        close(fd);
        remove(*tmp);
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return f;
}

int pack_sync_close(FILE *f) {
    int bad = fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL; /* EINVAL: a pipe or device, nothing to sync */
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

/* Keep the current PATH under a free name beside it (*bak, malloc'd; a hard link when the file system
   has them, *linked = 1, so PATH stays), for putting it back when a replace fails half-way. *bak is
   NULL when PATH does not exist. 0 or -1. */
int pack_keep_aside(const char *path, char **bak, int *linked) {
    struct stat st;
    unsigned k;
    int fd, err = EEXIST;
    *bak = NULL, *linked = 0;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    for (k = 1; k < 1000 && err == EEXIST; k++) { /* the link takes the name: nothing to clean on failure */
        if (!(*bak = side_name(path, "old", k))) return errno = ENOMEM, -1;
        if (link(path, *bak) == 0) return *linked = 1, 0;
        err = errno;
        free(*bak);
        *bak = NULL;
    }
    if ((errno = err) == EEXIST || err == ENOENT) return -1;
    if ((fd = unique_name(path, "old", bak)) < 0) return -1; /* no hard links here: move it aside */
    close(fd);
    if (rename(path, *bak) == 0) return 0;
    remove(*bak);
    free(*bak);
    *bak = NULL;
    return -1;
}

/* Undo pack_keep_aside after a replace of PATH failed: drop the extra name when PATH is still the
   kept file (a hard link, PATH never replaced), else move the kept file back. */
void pack_put_back(const char *path, const char *bak, int linked, int replaced) {
    if (!bak) return;
    if (linked && !replaced) remove(bak);
    else rename(bak, path);
}

char *pack_cat(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    char *p = (char *)malloc(a + b + 1);
    if (!p) return NULL;
    memcpy(p, s, a);
    memcpy(p + a, suffix, b + 1);
    return p;
}

char *pack_join(const char *a, const char *b) {
    size_t n = strlen(a);
    char *p, *q;
    if (!n || b[0] == '/') return pack_cat(b, ""); /* an absolute path is taken as it is (os.path.join) */
    if (a[n - 1] == '/') return pack_cat(a, b);
    p = pack_cat(a, "/");
    q = p ? pack_cat(p, b) : NULL;
    free(p);
    return q;
}

double pack_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

