/* libFuzzer harness: the two scans that read damaged files, the salvage scan (tools/salvage_scan.c,
   the code `recio salvage` and `recio verify --all` run) and the index scan (`recio index`: the
   reader from the start to the end, each record's offset a key). The file is the input itself, or
   (first byte odd) records made from the input, written by the writer, then damaged where the input
   says (a flipped byte, a cut, an insertion). Properties:
   - salvage: its records and damaged regions tile the file in order, [0, n), without gaps or
     overlaps; each record kept reads alone from its bytes (a reader over exactly [from, to): the
     same payload, then the end): everything kept is a sound record of the input;
   - index: offsets rise, are 4-aligned, and a reader started at each reads the same record;
   - a file the index scan reads to its end without error is salvaged whole: the same records at the
     same offsets, no damaged region; an undamaged written file gives back the payloads written.
   A crash, a sanitizer report, a hang or a broken property is a failure. */
#include "../../tools/salvage_scan.c"
#include <stdint.h>
#include <stdlib.h>

#define MAXREC 4096

typedef struct seen {
    const unsigned char *buf;
    size_t n, at;                /* where the next callback must start */
    size_t nrec, ndamage;
    uint64_t off[MAXREC];        /* the records kept */
    size_t size[MAXREC];
} seen;

static void check(int ok) {
    if (!ok) __builtin_trap();
}

/* The bytes [from, to) hold exactly one sound record, equal to rec. */
static void reads_alone(const unsigned char *buf, size_t from, size_t to, const recio_record *rec) {
    recio_reader *r = NULL;
    recio_record x;
    check(to > from && recio_reader_open_mem(&r, buf + from, to - from) == RECIO_OK);
    check(recio_reader_next(r, &x) == RECIO_OK);
    check(x.size == rec->size && (x.size == 0 || memcmp(x.data, rec->data, x.size) == 0));
    check(recio_reader_tell(r) == to - from && recio_reader_next(r, &x) == RECIO_END);
    recio_reader_close(r);
}

static int on_record(void *user, const recio_record *rec, size_t from, size_t to) {
    seen *s = (seen *)user;
    check(rec && from == s->at && to > from && to <= s->n && rec->offset == from);
    reads_alone(s->buf, from, to, rec);
    if (s->nrec < MAXREC) s->off[s->nrec] = from, s->size[s->nrec] = rec->size;
    s->nrec++;
    s->at = to;
    return 0;
}

static int on_damage(void *user, const recio_record *rec, size_t from, size_t to) {
    seen *s = (seen *)user;
    check(!rec && from == s->at && to > from && to <= s->n);
    s->ndamage++;
    s->at = to;
    return 0;
}

/* The index scan; returns 1 when it read to the end without error, the offsets into s. */
static int index_scan(const unsigned char *buf, size_t n, seen *s) {
    recio_reader *r = NULL;
    recio_record rec;
    recio_err e;
    uint64_t last = 0;
    s->nrec = 0;
    if (recio_reader_open_mem(&r, buf, n) != RECIO_OK) return 0;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        recio_reader *again = NULL;
        recio_record x;
        check(rec.offset % 4 == 0 && rec.offset < n && (s->nrec == 0 || rec.offset > last));
        check(recio_reader_open_mem(&again, buf, n) == RECIO_OK && recio_reader_seek(again, rec.offset) == RECIO_OK);
        check(recio_reader_next(again, &x) == RECIO_OK && x.offset == rec.offset && x.size == rec.size &&
              (x.size == 0 || memcmp(x.data, rec.data, x.size) == 0));
        recio_reader_close(again);
        if (s->nrec < MAXREC) s->off[s->nrec] = rec.offset, s->size[s->nrec] = rec.size;
        s->nrec++;
        last = rec.offset;
    }
    recio_reader_close(r);
    return e == RECIO_END;
}

/* Records made from data (a length byte, then that many bytes, each), written by the writer. */
static int build(const uint8_t *data, size_t size, recio_buffer *out, size_t *count) {
    recio_writer *w = NULL;
    size_t at = 0;
    memset(out, 0, sizeof *out);
    *count = 0;
    recio_writer_desc wd;
    memset(&wd, 0, sizeof wd);
    wd.mem = out;
    if (recio_writer_open_desc(&w, NULL, &wd) != RECIO_OK) return -1;
    while (at < size && *count < MAXREC) {
        size_t len = data[at++];
        if (len > size - at) len = size - at;
        if (recio_writer_write(w, data + at, len) != RECIO_OK) break;
        at += len, ++*count;
    }
    return recio_writer_close(w) == RECIO_OK ? 0 : -1;
}

/* Damage: 0 none, 1 flip byte p, 2 cut k bytes at p, 3 insert k copies of 0x0a (the magic's first
   byte) at p. Returns the new file (malloc'd). */
static unsigned char *damage(const unsigned char *b, size_t n, int how, size_t p, size_t k, size_t *m) {
    unsigned char *d = (unsigned char *)malloc(n + k + 1);
    if (!b) b = d; /* no record written: an empty file (memcpy wants a pointer even for 0 bytes) */
    if (p > n) p = n;
    if (how == 2 && k > n - p) k = n - p;
    memcpy(d, b, n);
    *m = n;
    if (how == 1 && p < n) d[p] ^= (unsigned char)(k | 1);
    if (how == 2) memmove(d + p, b + p + k, n - p - k), *m = n - k;
    if (how == 3) memset(d + p, 0x0a, k), memcpy(d + p + k, b + p, n - p), *m = n + k;
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static seen s, idx;
    recio_buffer built;
    const unsigned char *buf = data;
    unsigned char *own = NULL;
    size_t n = size, count = 0;
    int how = 0, clean;
    if (size > (1 << 16)) return 0;
    memset(&built, 0, sizeof built);
    if (size >= 4 && (data[0] & 1)) {
        how = (data[0] >> 1) & 3;
        if (build(data + 4, size - 4, &built, &count) != 0) return recio_buffer_free(&built), 0;
        own = damage(built.data, built.size, how, (size_t)(data[1] | data[2] << 8), data[3], &n);
        buf = own;
    }
    s.buf = buf, s.n = n, s.at = 0, s.nrec = s.ndamage = 0;
    check(salvage_scan(buf, n, on_record, on_damage, &s) == 0 && s.at == n);
    clean = index_scan(buf, n, &idx);
    if (clean) {
        size_t i;
        check(s.ndamage == 0 && s.nrec == idx.nrec);
        for (i = 0; i < s.nrec && i < MAXREC; i++) check(s.off[i] == idx.off[i] && s.size[i] == idx.size[i]);
    }
    if (own && how == 0) check(clean && s.nrec == count);
    free(own);
    recio_buffer_free(&built);
    return 0;
}
