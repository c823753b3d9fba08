/* The salvage scan (salvage_scan in cli.h), in a file of its own so that the fuzz harness
   (tests/fuzz/fuzz_salvage.c) reaches the very code `recio salvage` and `recio verify --all` run.
   A cut or an insertion shifts the alignment of everything after it, so after damage the scan looks
   for the magic at every byte, not every fourth. */
#include "cli.h"
#include <string.h>

/* The record that starts at buf[at], read as the strict reader reads it: the reader holding its
   payload (a record of several parts is joined in the reader's buffer: close it after use) and the
   offset just past it, padding included; NULL when no sound record starts there. */
static recio_reader *reader_at(const unsigned char *buf, size_t n, size_t at, recio_record *rec, size_t *end) {
    recio_reader *r;
    if (n - at < 8 || recio_reader_open_mem(&r, buf + at, n - at) != RECIO_OK) return NULL;
    if (recio_reader_next(r, rec) != RECIO_OK) {
        recio_reader_close(r);
        return NULL;
    }
    *end = at + (size_t)recio_reader_tell(r);
    return r;
}

static int record_at(const unsigned char *buf, size_t n, size_t at, size_t *end) {
    recio_record rec;
    recio_reader *r = reader_at(buf, n, at, &rec, end);
    recio_reader_close(r);
    return r != NULL;
}

/* A sound record starts at `at` and is followed by another or by the end of the file: a head that
   a magic number inside a damaged payload is unlikely to fake. */
static int strong_head(const unsigned char *buf, size_t n, size_t at, size_t *end) {
    size_t end2;
    return record_at(buf, n, at, end) && (*end == n || record_at(buf, n, *end, &end2));
}

/* The first offset in [from, to) where a sound record starts (a strong head when strong), or to. */
static size_t next_head(const unsigned char *buf, size_t n, size_t from, size_t to, int strong) {
    static const unsigned char magic[4] = {0x0a, 0x23, 0xd7, 0xce};
    size_t q, end;
    for (q = from; q < to && q + 8 <= n; q++) {
        const unsigned char *m = (const unsigned char *)memchr(buf + q, magic[0], n - q - 7);
        if (!m || (size_t)(m - buf) >= to) break;
        q = (size_t)(m - buf);
        if (memcmp(m, magic, 4) == 0 && (strong ? strong_head(buf, n, q, &end) : record_at(buf, n, q, &end))) return q;
    }
    return to;
}

/* The records and damaged regions, in order. A record that reads but is not followed by another
   may have damage inside it (bytes cut out of its payload make it run into the next record): when a
   strong head lies within its span, the span before that head is the damage. */
int salvage_scan(const unsigned char *buf, size_t n, salvage_fn on_record, salvage_fn on_damage, void *user) {
    size_t at = 0, end, end2, next;
    while (at < n) {
        recio_record rec;
        recio_reader *r = reader_at(buf, n, at, &rec, &end); /* read once: kept when the look past it holds */
        if (r && (end == n || record_at(buf, n, end, &end2) || next_head(buf, n, at + 1, end, 1) == end)) {
            int stop;
            rec.offset = at;
            stop = on_record && on_record(user, &rec, at, end);
            recio_reader_close(r);
            if (stop) return -1;
            at = end;
            continue;
        }
        recio_reader_close(r);
        next = next_head(buf, n, at + 1, n, 1);
        if (next == n) next = next_head(buf, n, at + 1, n, 0);
        if (on_damage && on_damage(user, NULL, at, next)) return -1;
        at = next;
    }
    return 0;
}
