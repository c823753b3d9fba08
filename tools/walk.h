/* recio list's walk of an image folder (tools/walk.c), shared with its fuzzer. */
#ifndef RECIO_WALK_H
#define RECIO_WALK_H
#include <stddef.h>
#include <stdio.h>

typedef struct list_item {
    unsigned long long index;
    unsigned label;
    char *path; /* relative to ROOT */
    char *mask; /* relative to --mask-root; NULL without it */
} list_item;

/* The images under root in im2rec's order (folders sorted by path, files sorted in each), with their
   index and label (the folder's number with recursive, else 0); with recursive, writes the label
   map ("folder<TAB>label" lines) to labels unless it is NULL. Symbolic links are followed; a folder reached a second time
   (a link loop, or two links to one folder) is walked once. Names with a tab or a line break are
   left out with a message. 0, or -1 after a message. */
int walk_collect(const char *root, int recursive, const char *exts, list_item **items, size_t *count, FILE *labels);
#endif
