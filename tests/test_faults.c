/* Fault injection through the I/O hooks: a backend over memory that fails its Nth call (read, write,
   seek, size, sync or close), or answers reads short, or with EINTR first. Driven over every N for
   the reader, the writer and the split: each run either gives exactly the records of the sound run
   or returns a clean error (never a wrong record, never OK after a failed write); `make sanitize`
   runs it under ASan and UBSan. */
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#include <errno.h>

typedef struct fault_io {
    unsigned char *data;
    size_t size, cap, pos;
    long calls, fail_at; /* fail_at: the call (counted from 1) that fails; 0 = none */
    int shorts;          /* reads return at most a few bytes */
    int eintr;           /* every other read fails once with EINTR first */
    int failed;          /* a call did fail */
    long *shared;        /* count calls here instead (the files of one split) */
} fault_io;

static int fault_now(fault_io *f) {
    long c = f->shared ? ++*f->shared : ++f->calls;
    if (c == f->fail_at) f->failed = 1;
    return c == f->fail_at;
}

static int64_t f_read(void *u, void *buf, size_t n) {
    fault_io *f = (fault_io *)u;
    size_t k = f->size - f->pos;
    if (fault_now(f)) return -1;
    if (f->eintr && (f->calls & 1)) return errno = EINTR, -1;
    if (k > n) k = n;
    if (f->shorts && k > 3) k = 1 + (size_t)(f->calls % 3);
    memcpy(buf, f->data + f->pos, k);
    f->pos += k;
    return (int64_t)k;
}
static int f_write(void *u, const void *buf, size_t n) {
    fault_io *f = (fault_io *)u;
    if (fault_now(f)) return -1;
    if (f->pos + n > f->cap) {
        size_t cap = (f->pos + n) * 2;
        unsigned char *d = (unsigned char *)realloc(f->data, cap);
        if (!d) return -1;
        f->data = d, f->cap = cap;
    }
    memcpy(f->data + f->pos, buf, n);
    f->pos += n;
    if (f->pos > f->size) f->size = f->pos;
    return 0;
}
static int f_seek(void *u, uint64_t off) {
    fault_io *f = (fault_io *)u;
    if (fault_now(f) || off > f->size) return -1;
    f->pos = (size_t)off;
    return 0;
}
static int64_t f_size(void *u) {
    fault_io *f = (fault_io *)u;
    return fault_now(f) ? -1 : (int64_t)f->size;
}
static int f_sync(void *u) { return fault_now((fault_io *)u) ? -1 : 0; }
static int f_close(void *u) { return fault_now((fault_io *)u) ? -1 : 0; }

static recio_io hooks(fault_io *f) {
    recio_io io;
    memset(&io, 0, sizeof io);
    io.read = f_read, io.write = f_write, io.seek = f_seek, io.size = f_size, io.sync = f_sync, io.close = f_close;
    io.user = f;
    return io;
}

/* A sound file of 40 records, some of several parts (the magic inside their payloads). */
static recio_buffer sound_file(void) {
    static const unsigned char magic[4] = {0x0a, 0x23, 0xd7, 0xce};
    recio_buffer b;
    recio_writer *w;
    unsigned char p[900];
    int i, k;
    memset(&b, 0, sizeof b);
    CHECK(rec_writer_mem(&w, &b) == RECIO_OK);
    for (i = 0; i < 40; i++) {
        int n = t_between(0, 900);
        for (k = 0; k < n; k++) p[k] = (unsigned char)t_rand();
        if (n > 40 && i % 3 == 0) memcpy(p + 16, magic, 4);
        CHECK(recio_writer_write(w, p, (size_t)n) == RECIO_OK);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
    return b;
}

/* Records of a reader over f (checksum of each payload in order); the error, or RECIO_END. */
static recio_err read_all(fault_io *f, uint64_t *sums, int *n) {
    recio_reader_desc d;
    recio_reader *r;
    recio_record rec;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.io = hooks(f);
    d.buffer_size = 256; /* small: many calls */
    *n = 0;
    if ((e = recio_reader_open_desc(&r, NULL, &d)) != RECIO_OK) return e;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) sums[(*n)++] = recio_checksum(rec.data, rec.size, 1);
    recio_reader_close(r);
    return e;
}

static void test_reader_every_failure(void) {
    recio_buffer b = sound_file();
    uint64_t want[64], got[64];
    fault_io f;
    int n0, n, i;
    long calls, at;
    int shorts;
    long points = 0;
    for (shorts = 0; shorts < 2; shorts++) { /* whole reads, then short ones (many more calls) */
        memset(&f, 0, sizeof f);
        f.data = b.data, f.size = b.size, f.shorts = shorts;
        CHECK(read_all(&f, want, &n0) == RECIO_END && n0 == 40);
        calls = f.calls;
        for (at = 1; at <= calls + 1; at++) { /* every call fails once, in its own run */
            recio_err e;
            memset(&f, 0, sizeof f);
            f.data = b.data, f.size = b.size, f.fail_at = at, f.shorts = shorts;
            e = read_all(&f, got, &n);
            for (i = 0; i < n && i < n0; i++) CHECK(got[i] == want[i]); /* never a wrong record */
            if (f.failed) CHECK(e != RECIO_END || n == n0);             /* a failure is reported, or did not matter */
            else CHECK(e == RECIO_END && n == n0);
        }
        points += calls + 1;
    }
    for (i = 0; i < 2; i++) { /* short reads: the same records; EINTR: the same records or a clean error */
        recio_err e;
        memset(&f, 0, sizeof f);
        f.data = b.data, f.size = b.size, f.shorts = i == 0, f.eintr = i == 1;
        e = read_all(&f, got, &n);
        if (e != RECIO_END || n != n0) fprintf(stderr, "  %s: %s after %d records\n", i ? "EINTR" : "short reads", recio_strerror(e), n);
        CHECK(memcmp(got, want, sizeof want[0] * (size_t)(n < n0 ? n : n0)) == 0);
        if (i == 0) CHECK(e == RECIO_END && n == n0);
        else CHECK(e == RECIO_END ? n == n0 : e < 0);
    }
    printf("reader: %ld failure points\n", points);
    recio_buffer_free(&b);
}

/* Write the 40 records of `b` again through f; the result of close. */
static recio_err write_all(fault_io *f, const recio_buffer *b) {
    recio_writer_desc d;
    recio_reader *r;
    recio_writer *w;
    recio_record rec;
    recio_err e = RECIO_OK, ce;
    memset(&d, 0, sizeof d);
    d.io = hooks(f);
    d.buffer_size = 512;
    if ((e = recio_writer_open_desc(&w, NULL, &d)) != RECIO_OK) return e;
    CHECK(recio_reader_open_mem(&r, b->data, b->size) == RECIO_OK);
    while (e == RECIO_OK && recio_reader_next(r, &rec) == RECIO_OK) e = recio_writer_write(w, rec.data, rec.size);
    recio_reader_close(r);
    ce = recio_writer_close(w);
    return e != RECIO_OK ? e : ce;
}

static void test_writer_every_failure(void) {
    recio_buffer b = sound_file();
    fault_io f;
    long calls, at;
    memset(&f, 0, sizeof f);
    CHECK(write_all(&f, &b) == RECIO_OK && f.size == b.size && memcmp(f.data, b.data, b.size) == 0);
    calls = f.calls;
    free(f.data);
    for (at = 1; at <= calls; at++) {
        recio_err e;
        memset(&f, 0, sizeof f);
        f.fail_at = at;
        e = write_all(&f, &b);
        if (f.failed) CHECK(e != RECIO_OK); /* a failed write, sync or close is never OK */
        else CHECK(e == RECIO_OK && f.size == b.size && memcmp(f.data, b.data, b.size) == 0);
        free(f.data);
    }
    printf("writer: %ld failure points\n", calls);
    recio_buffer_free(&b);
}

/* The split opens its files through desc.fs (a filesystem for plain paths): two files of the sound
   data, each a fault_io. */
typedef struct split_files {
    recio_buffer b;
    fault_io f[2];
    long fail_at, calls;
    int shorts; /* the files answer reads a few bytes at a time: many more calls to fail */
} split_files;

static recio_err open_faulty(void *user, const char *path, recio_io *io, char *why) {
    split_files *s = (split_files *)user;
    (void)why;
    fault_io *f = &s->f[strcmp(path, "b.rec") == 0];
    memset(f, 0, sizeof *f);
    f->data = s->b.data, f->size = s->b.size;
    f->fail_at = s->fail_at, f->shared = &s->calls; /* the count runs on across files */
    f->shorts = s->shorts;
    *io = hooks(f);
    return RECIO_OK;
}

/* A filesystem for plain paths whose only hook is open_faulty. */
static recio_fs faulty_fs(split_files *s) {
    recio_fs fs;
    memset(&fs, 0, sizeof fs);
    fs.open_read = open_faulty;
    fs.user = s;
    return fs;
}

static recio_err split_all(split_files *s, unsigned rank, unsigned nsplit, uint64_t *sums, int *n, int *failed) {
    recio_split_desc d;
    recio_split *sp = NULL;
    recio_record rec;
    recio_err e;
    recio_fs fs = faulty_fs(s);
    memset(&d, 0, sizeof d);
    d.fs = &fs;
    d.buffer_size = 256;
    *n = 0;
    s->calls = 0;
    memset(s->f, 0, sizeof s->f);
    e = recio_split_open_desc(&sp, "a.rec;b.rec", rank, nsplit, &d);
    while (e == RECIO_OK && (e = recio_split_next(sp, &rec)) == RECIO_OK && *n < 200) sums[(*n)++] = recio_checksum(rec.data, rec.size, 1);
    recio_split_close(sp);
    *failed = s->fail_at > 0 && s->calls >= s->fail_at; /* the count is shared: a reopen resets f */
    return e;
}

static void test_split_every_failure(void) {
    split_files s;
    uint64_t want[200], got[200];
    int n0, n, failed, i, points = 0;
    unsigned rank;
    memset(&s, 0, sizeof s);
    s.b = sound_file();
    for (rank = 0; rank < 3; rank++) {
        long at;
        s.fail_at = 0;
        CHECK(split_all(&s, rank, 3, want, &n0, &failed) == RECIO_END && n0 > 0);
        for (at = 1; at <= 400; at++) {
            recio_err e;
            s.fail_at = at;
            e = split_all(&s, rank, 3, got, &n, &failed);
            for (i = 0; i < n && i < n0; i++) CHECK(got[i] == want[i]);
            if (!failed) break; /* past the last call */
            points++;
            CHECK(e != RECIO_END || n == n0);
        }
    }
    printf("split: %d failure points over 3 parts\n", points);
    recio_buffer_free(&s.b);
}

/* The iterator opens its files through desc.source.fs: one file of 30 image records, each a fault_io
   over the same memory, the call count running on across the opens of one run. */
static recio_err cb_item(void *user, const recio_irecord *rec, uint64_t seed, void *out, size_t item_bytes, unsigned worker,
                         char *errmsg) {
    (void)user, (void)seed, (void)worker, (void)errmsg;
    memset(out, 0, item_bytes);
    memcpy(out, rec->image, rec->image_size < item_bytes ? rec->image_size : item_bytes);
    return RECIO_OK;
}

static int iter_all(split_files *s, unsigned workers, uint64_t *sums, int *failed) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e;
    recio_fs fs = faulty_fs(s);
    int n = 0;
    memset(&d, 0, sizeof d);
    d.uris = "a.rec";
    d.item.transform = cb_item, d.item.item_bytes = 16, d.run.batch = 4, d.run.workers = workers, d.source.seed = 3;
    d.source.fs = &fs;
    s->calls = 0;
    memset(s->f, 0, sizeof s->f);
    e = recio_iter_open(&it, &d);
    while (e == RECIO_OK && (e = recio_iter_next(it, &b)) == RECIO_OK && n < 64)
        sums[n++] = recio_checksum(b.data, (size_t)(b.count + b.pad) * b.item_bytes, 1) ^ b.count;
    recio_iter_close(it);
    *failed = s->fail_at > 0 && s->calls >= s->fail_at; /* the count is shared: a reopen resets f */
    return e == RECIO_END ? n : -1 - n;
}

static void test_iter_every_failure(void) {
    split_files s;
    recio_writer *w;
    unsigned char rec[400];
    uint64_t want[64], got[64];
    int i, k, n0, n, failed, points = 0;
    unsigned workers;
    memset(&s, 0, sizeof s);
    CHECK(rec_writer_mem(&w, &s.b) == RECIO_OK);
    for (i = 0; i < 30; i++) { /* image records: a header, then 0 to 300 bytes */
        float label = (float)i;
        size_t h = recio_irecord_pack_header(rec, &label, 1, (uint64_t)i, 0), m = (size_t)t_between(0, 300);
        for (k = 0; k < (int)m; k++) rec[h + (size_t)k] = (unsigned char)t_rand();
        CHECK(recio_writer_write(w, rec, h + m) == RECIO_OK);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
    s.shorts = 1;
    for (workers = 0; workers <= 2; workers += 2) {
        long at;
        s.fail_at = 0;
        n0 = iter_all(&s, workers, want, &failed);
        CHECK(n0 == 8);
        for (at = 1; at <= 100000; at++) {
            s.fail_at = at;
            n = iter_all(&s, workers, got, &failed);
            if (!failed) break; /* past the last call */
            points++;
            if (n >= 0 && n != n0) fprintf(stderr, "  call %ld failed: the epoch ended early (%d of %d batches) without an error\n", at, n, n0), CHECK(0);
            if (n < 0) n = -1 - n; /* an error after n sound batches */
            for (i = 0; i < n && i < n0; i++) CHECK(got[i] == want[i]); /* never a wrong batch */
        }
    }
    printf("iterator: %d failure points (0 and 2 workers)\n", points);
    CHECK(points > 0);
    recio_buffer_free(&s.b);
}

int main(void) {
    RUN(test_reader_every_failure);
    RUN(test_writer_every_failure);
    RUN(test_split_every_failure);
    RUN(test_iter_every_failure);
    return t_done("faults");
}
