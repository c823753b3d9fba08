/* Small test helpers over the records API: the one-line forms the tests used before issue 24 folded
   them into descs and recio_split_query. Each goes through the public desc or query call, so the
   tests that use them check those calls with the same inputs and expected values. */
#ifndef RECIO_TESTS_REC_UTIL_H
#define RECIO_TESTS_REC_UTIL_H
#include <string.h>
#include "recio.h"

/* A reader that maps path (desc.use_mmap). */
static inline recio_err rec_reader_mapped(recio_reader **r, const char *path) {
    recio_reader_desc d;
    memset(&d, 0, sizeof d);
    d.use_mmap = 1;
    return recio_reader_open_desc(r, path, &d);
}

/* A writer into b (recio_writer_desc.mem). */
static inline recio_err rec_writer_mem(recio_writer **w, recio_buffer *b) {
    recio_writer_desc d;
    memset(&d, 0, sizeof d);
    d.mem = b;
    return recio_writer_open_desc(w, NULL, &d);
}

/* One record with its own .idx key (a batch of one). */
static inline recio_err rec_write_key(recio_writer *w, uint64_t key, const void *data, size_t size) {
    recio_writer_item it;
    it.data = data, it.size = size, it.key = key;
    return recio_writer_write_batch(w, &it, 1);
}

/* recio_split_next, then where the record came from (where may be NULL). */
static inline recio_err rec_split_next_where(recio_split *s, recio_record *rec, recio_split_where *where) {
    recio_split_info info;
    recio_err e = recio_split_next(s, rec);
    if (e == RECIO_OK && where && (e = recio_split_query(s, &info)) == RECIO_OK) *where = info.where;
    return e;
}

static inline recio_split_info rec_split_info(const recio_split *s) {
    recio_split_info info;
    memset(&info, 0, sizeof info);
    recio_split_query(s, &info);
    return info;
}

/* .idx / .lst text parsed from memory (desc.text), words into msg (may be NULL). */
static inline recio_err rec_index_parse(recio_index *idx, const char *text, size_t n, const char *name, char *msg) {
    recio_index_desc d;
    memset(&d, 0, sizeof d);
    d.text = text ? text : "";
    d.size = n;
    d.errmsg = msg;
    return recio_index_load(idx, name, &d);
}

static inline recio_err rec_lst_parse(recio_lst *l, const char *text, size_t n, const char *name, int mask_column, char *msg) {
    recio_lst_desc d;
    memset(&d, 0, sizeof d);
    d.text = text ? text : "";
    d.size = n;
    d.mask_column = mask_column;
    d.errmsg = msg;
    return recio_lst_load(l, name, &d);
}
#endif
