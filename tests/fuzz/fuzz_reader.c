/* libFuzzer harness: any bytes through the RecordIO reader, from memory and through a tiny
   streaming buffer fed by short reads. Both must agree record for record. */
#include "recio.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t n, at;
} src;

static int64_t src_read(void *u, void *buf, size_t n) {
    src *s = (src *)u;
    size_t k = n < 3 ? n : 3;
    if (k > s->n - s->at) k = s->n - s->at;
    memcpy(buf, s->p + s->at, k);
    s->at += k;
    return (int64_t)k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_reader *a, *b;
    recio_reader_desc d;
    recio_record ra, rb;
    recio_err ea, eb;
    src s = {data, size, 0};
    memset(&d, 0, sizeof d);
    d.io.read = src_read;
    d.io.user = &s;
    if (recio_reader_open_mem(&a, data, size) != RECIO_OK) return 0;
    if (recio_reader_open_desc(&b, NULL, &d) != RECIO_OK) return recio_reader_close(a), 0;
    do {
        ea = recio_reader_next(a, &ra);
        eb = recio_reader_next(b, &rb);
        if (ea != eb) __builtin_trap();
        if (ea == RECIO_OK && (ra.size != rb.size || ra.offset != rb.offset || memcmp(ra.data, rb.data, ra.size) != 0)) __builtin_trap();
    } while (ea == RECIO_OK);
    /* both name the same offset (the wording may differ: only one side knows the size) */
    if (ea != RECIO_END && strtoull(strstr(recio_reader_errmsg(a), "offset ") + 7, NULL, 10) !=
                               strtoull(strstr(recio_reader_errmsg(b), "offset ") + 7, NULL, 10))
        __builtin_trap();
    recio_reader_close(a);
    recio_reader_close(b);
    return 0;
}
