/* File helpers shared by the dataset commands (list, pack, unpack), declared in pack.h. Outputs go
   through cli_out.c (one policy: never an input, whole or nothing). */
#define _POSIX_C_SOURCE 200809L
#include "pack.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

