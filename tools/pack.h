/* Shared by the dataset commands (list, pack, unpack, show): small file helpers. */
#ifndef RECIO_PACK_H
#define RECIO_PACK_H
#include <stddef.h>
#include <stdio.h>

/* Whole file into a malloc'd buffer (at least 1 byte allocated); 0 on success, else -1 with errno set. */
int pack_read_file(const char *path, unsigned char **out, size_t *n);
/* Write a whole file; 0 on success, else -1 with errno set. */
int pack_write_file(const char *path, const void *data, size_t n);
/* "a" + "/" + "b" (just b when a is empty), malloc'd; NULL when out of memory. */
char *pack_join(const char *a, const char *b);
/* s + suffix, malloc'd; NULL when out of memory. */
char *pack_cat(const char *s, const char *suffix);
/* A new empty file beside path, "PATH.tmp.PID", that no other writer uses, open for writing; its name
   in *tmp (malloc'd). NULL with errno set on failure. */
FILE *pack_create_tmp(const char *path, char **tmp);
/* fflush, fsync and fclose: 0 when the bytes are on disk, else -1. */
int pack_sync_close(FILE *f);
/* Keep the current PATH under a free name beside it (*bak, malloc'd; a hard link where the file system
   has them, *linked = 1, so PATH stays), for putting it back when a replace fails half-way. *bak is
   NULL when PATH does not exist. 0 or -1 with errno set. */
int pack_keep_aside(const char *path, char **bak, int *linked);
/* Undo pack_keep_aside after replacing PATH failed (replaced: PATH was changed before the failure). */
void pack_put_back(const char *path, const char *bak, int linked, int replaced);
/* Seconds on a monotonic clock. */
double pack_now(void);
#endif
