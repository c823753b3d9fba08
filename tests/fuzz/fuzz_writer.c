/* libFuzzer harness: the writer. Up to 32 records from the input (lengths and bytes, with the
   RecordIO magic planted at aligned and unaligned places, which the writer must split into parts),
   written one by one, with keys, or as batches, through a sink of the input's choosing (a small
   writer buffer, with or without writev), then read back from memory: every record must come back
   byte for byte, in order, at increasing offsets, and nothing after them. */
#include "recio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FW_FAIL() (fprintf(stderr, "fuzz_writer: check at line %d failed\n", __LINE__), __builtin_trap())
#define FW_RECS 32

typedef struct fw_sink {
    unsigned char *b;
    size_t n, cap;
} fw_sink;

static int fw_write(void *u, const void *p, size_t n) {
    fw_sink *s = (fw_sink *)u;
    if (s->n + n > s->cap) return -1;
    memcpy(s->b + s->n, p, n);
    s->n += n;
    return 0;
}

static int fw_writev(void *u, const recio_iovec *v, int n) {
    int i;
    for (i = 0; i < n; i++)
        if (fw_write(u, v[i].base, v[i].len) != 0) return -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static unsigned char out[1 << 18], rec[FW_RECS][600];
    static const size_t bufs[4] = {0, 1, 16, 100};
    const void *ptrs[FW_RECS];
    recio_writer_item items[FW_RECS];
    size_t sizes[FW_RECS], at = 2, i, n = 0, k;
    recio_writer_desc d;
    recio_writer *w = NULL;
    recio_reader *r = NULL;
    recio_record got;
    recio_err e = RECIO_OK;
    fw_sink sink;
    uint64_t last = 0;
    uint8_t how;
    if (size < 2 || size > 8192) return 0;
    how = data[0];
    while (n < FW_RECS && at < size) { /* length byte, then the bytes; 0xff plants the magic */
        size_t len = data[at++] * (how & 0x80 ? 2 : 1) % 600;
        for (k = 0; k < len; k++) rec[n][k] = at < size ? data[at++] : (uint8_t)k;
        for (k = 0; k + 4 <= len; k++)
            if (rec[n][k] == 0xff) rec[n][k] = 0x0a, rec[n][k + 1] = 0x23, rec[n][k + 2] = 0xd7, rec[n][k + 3] = 0xce;
        items[n].data = ptrs[n] = rec[n], items[n].size = len, items[n].key = n * 7;
        sizes[n++] = len;
    }
    memset(&sink, 0, sizeof sink);
    sink.b = out, sink.cap = sizeof out;
    memset(&d, 0, sizeof d);
    d.io.write = fw_write, d.io.user = &sink;
    if (how & 1) d.io.writev = fw_writev;
    d.buffer_size = bufs[(how >> 1) & 3];
    if (recio_writer_open_desc(&w, NULL, &d) != RECIO_OK) FW_FAIL();
    for (i = 0; i < n && e == RECIO_OK;) {
        size_t m = 1 + data[1] % 4;
        if (m > n - i) m = n - i;
        switch ((how >> 3) & 3) {
        case 0: e = recio_writer_write(w, ptrs[i], sizes[i]), m = 1; break;
        case 1: e = recio_writer_write_batch(w, items + i, 1), m = 1; break; /* one keyed record */
        default: e = recio_writer_write_batch(w, items + i, m); break;
        }
        i += m;
    }
    if (e != RECIO_OK || recio_writer_close(w) != RECIO_OK) FW_FAIL(); /* the sink never refuses here */
    if (recio_reader_open_mem(&r, sink.b, sink.n) != RECIO_OK) FW_FAIL();
    for (i = 0; i < n; i++) {
        if (recio_reader_next(r, &got) != RECIO_OK || got.size != sizes[i] || (i && got.offset <= last) ||
            (got.size && memcmp(got.data, ptrs[i], got.size) != 0))
            FW_FAIL();
        last = got.offset;
    }
    if (recio_reader_next(r, &got) != RECIO_END) FW_FAIL();
    recio_reader_close(r);
    return 0;
}
