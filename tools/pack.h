/* Shared by the dataset commands (list, pack, unpack, show): small file helpers. */
#ifndef RECIO_PACK_H
#define RECIO_PACK_H
#include <stddef.h>
#include <stdio.h>

/* Whole file into a malloc'd buffer (at least 1 byte allocated); 0 on success, else -1 with errno set. */
int pack_read_file(const char *path, unsigned char **out, size_t *n);
/* "a" + "/" + "b" (just b when a is empty), malloc'd; NULL when out of memory. */
char *pack_join(const char *a, const char *b);
/* s + suffix, malloc'd; NULL when out of memory. */
char *pack_cat(const char *s, const char *suffix);
/* Seconds on a monotonic clock. */
double pack_now(void);
#endif
