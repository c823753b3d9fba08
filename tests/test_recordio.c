/* RecordIO core: golden files written by dmlc-core (tests/data/compat, see its README.md), strict
   handling of every kind of damage, randomised round trips through every backend, writer errors. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "sha256.h"
#include "test.h"
#include "rec_util.h"
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include "tmpdir.h"
#ifndef _WIN32 /* the command-line tool is POSIX-only */
#include <sys/wait.h>
#define HAVE_CLI 1
#endif

#define COMPAT "tests/data/compat/"

static char tmpdir[64];

static const char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* ---- manifests ---- */

typedef struct {
    unsigned long long ordinal, offset, length;
    char sha[65];
} man_row;

static man_row *load_manifest(const char *path, size_t *n) {
    FILE *f = fopen(path, "r");
    man_row *rows = NULL;
    size_t cap = 0;
    man_row m;
    *n = 0;
    if (!f) return NULL;
    while (fscanf(f, "%llu\t%llu\t%llu\t%64s", &m.ordinal, &m.offset, &m.length, m.sha) == 4) {
        if (*n == cap) rows = (man_row *)realloc(rows, (cap = cap ? cap * 2 : 64) * sizeof *rows);
        rows[(*n)++] = m;
    }
    fclose(f);
    return rows;
}

/* Read everything from r and compare with the manifest; returns records read. */
static size_t check_against_manifest(recio_reader *r, const man_row *rows, size_t n) {
    recio_record rec;
    recio_err e;
    size_t k = 0;
    char sha[65];
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        if (k >= n) {
            CHECK(!"more records than the manifest");
            break;
        }
        CHECK_EQ_INT(rec.offset, rows[k].offset);
        CHECK_EQ_INT(rec.size, rows[k].length);
        t_sha256_hex(rec.data, rec.size, sha);
        CHECK(strcmp(sha, rows[k].sha) == 0);
        k++;
    }
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(k, n);
    return k;
}

static const char *golden[] = {"a", "b", "c"};

static void test_sha256_known_answer(void) {
    char h[65];
    t_sha256_hex("abc", 3, h); /* FIPS 180-2 appendix B.1 */
    CHECK(strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    t_sha256_hex("", 0, h);
    CHECK(strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
}

static void test_golden_read_all_backends(void) {
    size_t i, n, sz;
    for (i = 0; i < 3; i++) {
        char rec_path[128], man_path[128];
        man_row *rows;
        recio_reader *r;
        recio_reader_desc d;
        unsigned char *bytes;
        snprintf(rec_path, sizeof rec_path, COMPAT "%s.rec", golden[i]);
        snprintf(man_path, sizeof man_path, COMPAT "%s.rec.tsv", golden[i]);
        rows = load_manifest(man_path, &n);
        CHECK(rows && n > 100);
        if (!rows) continue;
        CHECK(recio_reader_open(&r, rec_path) == RECIO_OK);
        check_against_manifest(r, rows, n);
        recio_reader_close(r);
        CHECK(rec_reader_mapped(&r, rec_path) == RECIO_OK);
        check_against_manifest(r, rows, n);
        recio_reader_close(r);
        bytes = t_slurp(rec_path, &sz);
        CHECK(recio_reader_open_mem(&r, bytes, sz) == RECIO_OK);
        check_against_manifest(r, rows, n);
        recio_reader_close(r);
        /* a tiny buffer forces every refill, compaction and growth path */
        memset(&d, 0, sizeof d);
        d.buffer_size = 16;
        CHECK(recio_reader_open_desc(&r, rec_path, &d) == RECIO_OK);
        check_against_manifest(r, rows, n);
        recio_reader_close(r);
        free(bytes);
        free(rows);
    }
}

static void test_golden_write_byte_identical(void) {
    size_t i, sz;
    for (i = 0; i < 3; i++) {
        char rec_path[128], idx_path[128];
        unsigned char *orig, *idx_orig, *idx_ours;
        size_t idx_sz, ours_sz;
        recio_reader *r;
        recio_writer *w, *wf;
        recio_writer_desc d;
        recio_record rec;
        recio_buffer out;
        snprintf(rec_path, sizeof rec_path, COMPAT "%s.rec", golden[i]);
        snprintf(idx_path, sizeof idx_path, COMPAT "%s.rec.idx", golden[i]);
        orig = t_slurp(rec_path, &sz);
        idx_orig = t_slurp(idx_path, &idx_sz);
        memset(&out, 0, sizeof out);
        memset(&d, 0, sizeof d);
        d.index_path = tmp_path("golden.idx");
        CHECK(recio_reader_open(&r, rec_path) == RECIO_OK);
        CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
        CHECK(recio_writer_open_desc(&wf, tmp_path("golden.rec"), &d) == RECIO_OK);
        while (recio_reader_next(r, &rec) == RECIO_OK) {
            CHECK(recio_writer_write(w, rec.data, rec.size) == RECIO_OK);
            CHECK(recio_writer_write(wf, rec.data, rec.size) == RECIO_OK);
        }
        recio_reader_close(r);
        CHECK(recio_writer_close(w) == RECIO_OK);
        CHECK(recio_writer_close(wf) == RECIO_OK);
        CHECK_EQ_INT(out.size, sz);
        CHECK(out.size == sz && memcmp(out.data, orig, sz) == 0);
        ours_sz = 0;
        free(orig);
        orig = t_slurp(tmp_path("golden.rec"), &ours_sz);
        CHECK(orig && ours_sz == out.size && memcmp(orig, out.data, ours_sz) == 0);
        idx_ours = t_slurp(tmp_path("golden.idx"), &ours_sz);
        CHECK(idx_ours && idx_orig && ours_sz == idx_sz && memcmp(idx_ours, idx_orig, idx_sz) == 0);
        free(idx_ours);
        free(idx_orig);
        free(orig);
        recio_buffer_free(&out);
    }
}

/* images.rec.tsv: ordinal flag labels id id2 image_length image_sha256 */
static void test_golden_image_records(void) {
    FILE *f = fopen(COMPAT "images.rec.tsv", "r");
    recio_reader *r;
    recio_record rec;
    char line[1024];
    size_t n = 0;
    CHECK(f != NULL);
    if (!f) return;
    CHECK(recio_reader_open(&r, COMPAT "images.rec") == RECIO_OK);
    while (fgets(line, sizeof line, f)) {
        unsigned long long ord, flag, id, id2, ilen;
        char labels[512], want_sha[65], got_labels[512], sha[65];
        recio_irecord ir;
        uint32_t k;
        size_t at = 0;
        CHECK(sscanf(line, "%llu\t%llu\t%511s\t%llu\t%llu\t%llu\t%64s", &ord, &flag, labels, &id, &id2, &ilen, want_sha) == 7);
        CHECK(recio_reader_next(r, &rec) == RECIO_OK);
        CHECK(recio_irecord_unpack(&ir, rec.data, rec.size) == RECIO_OK);
        CHECK_EQ_INT(ir.flag, flag);
        CHECK(ir.id == id && ir.id2 == id2);
        CHECK_EQ_INT(ir.image_size, ilen);
        for (k = 0; k < ir.nlabels; k++) {
            float v = recio_load_f32le((const char *)ir.all_labels + 4 * (size_t)k);
            at += (size_t)snprintf(got_labels + at, sizeof got_labels - at, k ? ",%.9g" : "%.9g", (double)v);
        }
        CHECK(strcmp(got_labels, labels) == 0);
        t_sha256_hex(ir.image, ir.image_size, sha);
        CHECK(strcmp(sha, want_sha) == 0);
        n++;
    }
    CHECK(n == 33);
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    recio_reader_close(r);
    fclose(f);
}

/* ---- damage ---- */

/* Read until the end or an error; returns records read and the final code and message. */
static size_t drain(recio_reader *r, recio_err *last) {
    recio_record rec;
    size_t n = 0;
    while ((*last = recio_reader_next(r, &rec)) == RECIO_OK) n++;
    return n;
}

static int msg_has_offset(const char *msg, unsigned long long off) {
    char want[64];
    snprintf(want, sizeof want, ": offset %llu: ", off);
    return strstr(msg, want) != NULL;
}

static void test_golden_corrupt_files(void) {
    FILE *f = fopen(COMPAT "corrupt.tsv", "r");
    char file[128], what[256];
    unsigned long long off, good;
    int cases = 0;
    CHECK(f != NULL);
    if (!f) return;
    while (fscanf(f, "%127s\t%llu\t%llu\t%255[^\n]", file, &off, &good, what) == 4) {
        char path[256];
        int mode;
        snprintf(path, sizeof path, COMPAT "%s", file);
        for (mode = 0; mode < 3; mode++) {
            recio_reader *r;
            recio_reader_desc d;
            recio_err e;
            memset(&d, 0, sizeof d);
            d.use_mmap = mode == 1;
            d.buffer_size = mode == 2 ? 16 : 0;
            CHECK(recio_reader_open_desc(&r, path, &d) == RECIO_OK);
            CHECK_EQ_INT(drain(r, &e), good);
            CHECK_EQ_INT(e, RECIO_ERR_CORRUPT);
            CHECK(msg_has_offset(recio_reader_errmsg(r), off));
            CHECK(strncmp(recio_reader_errmsg(r), path, strlen(path)) == 0);
            CHECK_EQ_INT(recio_reader_next(r, NULL), RECIO_ERR_ARG);
            recio_reader_close(r);
        }
        cases++;
    }
    CHECK(cases == 2);
    fclose(f);
}

/* Reference encoder, written from the format description only (compat README), for the tests. */
static size_t ref_header(unsigned char *d, unsigned cflag, size_t len) {
    uint32_t lrec = (uint32_t)cflag << 29 | (uint32_t)len;
    d[0] = 0x0a, d[1] = 0x23, d[2] = 0xd7, d[3] = 0xce;
    d[4] = (unsigned char)lrec, d[5] = (unsigned char)(lrec >> 8), d[6] = (unsigned char)(lrec >> 16), d[7] = (unsigned char)(lrec >> 24);
    return 8;
}

static size_t ref_encode(unsigned char *d, const unsigned char *p, size_t n) {
    static const unsigned char magic[4] = {0x0a, 0x23, 0xd7, 0xce};
    size_t i, start = 0, at = 0;
    int split = 0;
    for (i = 0; i + 4 <= n; i += 4)
        if (memcmp(p + i, magic, 4) == 0) {
            at += ref_header(d + at, split ? 2 : 1, i - start);
            memcpy(d + at, p + start, i - start);
            at += i - start;
            split = 1;
            start = i + 4;
        }
    at += ref_header(d + at, split ? 3 : 0, n - start);
    memcpy(d + at, p + start, n - start);
    at += n - start;
    while (at % 4) d[at++] = 0;
    return at;
}

/* Build a file in memory from hand-made parts; returns its size. */
typedef struct {
    unsigned char b[4096];
    size_t n;
} hand_file;

static void hf_record(hand_file *h, const char *payload) { h->n += ref_encode(h->b + h->n, (const unsigned char *)payload, strlen(payload)); }
static void hf_part(hand_file *h, unsigned cflag, size_t len) {
    h->n += ref_header(h->b + h->n, cflag, len);
    memset(h->b + h->n, 'x', (len + 3) & ~(size_t)3);
    h->n += (len + 3) & ~(size_t)3;
}

static void expect_damage(const hand_file *h, size_t good, unsigned long long off, const char *label) {
    recio_reader *r;
    recio_err e;
    size_t n;
    t_case = label;
    CHECK(recio_reader_open_mem(&r, h->b, h->n) == RECIO_OK);
    n = drain(r, &e);
    CHECK_EQ_INT(n, good);
    CHECK_EQ_INT(e, RECIO_ERR_CORRUPT);
    CHECK(msg_has_offset(recio_reader_errmsg(r), off));
    recio_reader_close(r);
}

/* Each case: two sound records (offsets 0 and 12: "abcd" = 8+4 bytes, "efgh" = 8+4), then damage at 24. */
static void test_strict_damage_cases(void) {
    hand_file h;
    const char *name = "test_strict_damage_cases";
#define BASE() (memset(&h, 0, sizeof h), hf_record(&h, "abcd"), hf_record(&h, "efgh"))
    BASE(), h.n += 3, expect_damage(&h, 2, 24, "truncated header: 3 bytes");
    BASE(), hf_part(&h, 3, 4), expect_damage(&h, 2, 24, "orphan cflag 3");
    BASE(), hf_part(&h, 2, 4), hf_part(&h, 3, 4), expect_damage(&h, 2, 24, "orphan cflag 2");
    BASE(), hf_part(&h, 1, 4), hf_record(&h, "ijkl"), expect_damage(&h, 2, 24, "cflag 1 then a cflag 0 record");
    BASE(), hf_part(&h, 1, 4), expect_damage(&h, 2, 24, "cflag 1 then end of file");
    BASE(), hf_part(&h, 1, 4), hf_part(&h, 2, 4), expect_damage(&h, 2, 24, "cflag 1, 2 then end of file");
    BASE(), hf_part(&h, 5, 4), expect_damage(&h, 2, 24, "invalid cflag 5");
    BASE(), h.n += 8, expect_damage(&h, 2, 24, "8 zero bytes appended");
    BASE(), h.n += 2, expect_damage(&h, 2, 24, "2 bytes appended");
    BASE(), ref_header(h.b + h.n, 0, 100), h.n += 8 + 40, expect_damage(&h, 2, 24, "length past end");
    BASE(), ref_header(h.b + h.n, 0, RECIO_MAX_RECORD), h.n += 8, expect_damage(&h, 2, 24, "huge length past end");
    BASE(), h.b[12] ^= 0x10, expect_damage(&h, 1, 12, "bad magic in the middle");
    BASE(), ref_header(h.b + h.n, 0, 5), h.n += 8 + 5, expect_damage(&h, 2, 24, "padding missing at the end");
    BASE(), hf_part(&h, 1, 4), h.n += 4, expect_damage(&h, 2, 24, "part header truncated");
    BASE(), hf_part(&h, 1, 4), h.n += ref_header(h.b + h.n, 3, 40), expect_damage(&h, 2, 24, "last part runs past end");
#undef BASE
    t_case = name;
}

/* Damage anywhere must give an error or records, never a crash or a read out of bounds (ASan). */
static void test_truncations_and_bitflips_never_crash(void) {
    size_t sz, cut, k;
    unsigned char *orig = t_slurp(COMPAT "b.rec", &sz);
    recio_rng rng;
    CHECK(orig != NULL);
    if (!orig) return;
    rng.state = 7;
    for (cut = 0; cut < 4096; cut++) {
        unsigned char *copy = (unsigned char *)malloc(cut ? cut : 1);
        recio_reader *r;
        recio_err e;
        memcpy(copy, orig, cut);
        CHECK(recio_reader_open_mem(&r, copy, cut) == RECIO_OK);
        drain(r, &e);
        CHECK(e == RECIO_END || e == RECIO_ERR_CORRUPT);
        recio_reader_close(r);
        free(copy);
    }
    for (k = 0; k < 300; k++) {
        size_t len = 1 + (size_t)recio_rng_below(&rng, 20000);
        unsigned char *copy = (unsigned char *)malloc(len);
        recio_reader *r;
        recio_err e;
        int f;
        memcpy(copy, orig, len);
        for (f = 0; f < 4; f++) copy[recio_rng_below(&rng, len)] ^= (unsigned char)(1u << recio_rng_below(&rng, 8));
        CHECK(recio_reader_open_mem(&r, copy, len) == RECIO_OK);
        drain(r, &e);
        CHECK(e == RECIO_END || e == RECIO_ERR_CORRUPT);
        recio_reader_close(r);
        free(copy);
    }
    free(orig);
}

/* ---- randomised round trips ---- */

typedef struct {
    unsigned char *data;
    size_t size;
} payload;

static const unsigned char MAGIC_LE[4] = {0x0a, 0x23, 0xd7, 0xce};

static payload *make_payloads(size_t count, uint64_t seed) {
    payload *p = (payload *)calloc(count, sizeof *p);
    recio_rng g;
    size_t i, j;
    g.state = seed;
    for (i = 0; i < count; i++) {
        size_t n;
        switch (i % 8) {
        case 0: n = 0; break;
        case 1: n = (size_t)recio_rng_below(&g, 9); break;               /* around the 4-byte edges */
        case 2: n = 4 * (size_t)recio_rng_below(&g, 6); break;
        case 3: n = 100000 + (size_t)recio_rng_below(&g, 20000); break; /* larger than small buffers */
        default: n = (size_t)recio_rng_below(&g, 600);
        }
        p[i].size = n;
        p[i].data = (unsigned char *)malloc(n ? n : 1);
        for (j = 0; j < n; j++) p[i].data[j] = (unsigned char)recio_rng_next(&g);
        /* salt with the magic at every alignment, and aligned runs and ends */
        if (n >= 4 && i % 3 == 0) {
            size_t at = (size_t)recio_rng_below(&g, n - 3);
            memcpy(p[i].data + at, MAGIC_LE, 4);
            memcpy(p[i].data + (n - 4), MAGIC_LE, 4);
            memcpy(p[i].data, MAGIC_LE, 4);
            if (n >= 12 && i % 2) memcpy(p[i].data + 4, MAGIC_LE, 4);
        }
    }
    return p;
}

static void free_payloads(payload *p, size_t count) {
    size_t i;
    for (i = 0; i < count; i++) free(p[i].data);
    free(p);
}

static void expect_payloads(recio_reader *r, const payload *p, size_t count) {
    recio_record rec;
    size_t i;
    for (i = 0; i < count; i++) {
        CHECK(recio_reader_next(r, &rec) == RECIO_OK);
        CHECK_EQ_INT(rec.size, p[i].size);
        CHECK(rec.size == p[i].size && (rec.size == 0 || memcmp(rec.data, p[i].data, rec.size) == 0));
    }
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
}

/* A source that returns short reads of 1..7 bytes, as a pipe or socket may. */
typedef struct {
    const unsigned char *b;
    size_t n, at;
    recio_rng g;
} dribble;

static int64_t dribble_read(void *u, void *buf, size_t n) {
    dribble *d = (dribble *)u;
    size_t k = 1 + (size_t)recio_rng_below(&d->g, 7);
    if (k > n) k = n;
    if (k > d->n - d->at) k = d->n - d->at;
    memcpy(buf, d->b + d->at, k);
    d->at += k;
    return (int64_t)k;
}

static void test_random_roundtrip_every_backend(void) {
    const size_t count = 400;
    payload *p = make_payloads(count, 42);
    recio_buffer out;
    recio_writer *w;
    recio_reader *r;
    recio_reader_desc d;
    dribble dr;
    size_t i, at = 0;
    unsigned char *ref = (unsigned char *)malloc(60u << 20);
    memset(&out, 0, sizeof out);
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    for (i = 0; i < count; i++) {
        CHECK(recio_writer_write(w, p[i].data, p[i].size) == RECIO_OK);
        at += ref_encode(ref + at, p[i].data, p[i].size);
    }
    CHECK_EQ_INT(recio_writer_tell(w), at);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(out.size == at && memcmp(out.data, ref, at) == 0); /* the writer matches the reference encoder */
    CHECK(recio_reader_open_mem(&r, out.data, out.size) == RECIO_OK);
    expect_payloads(r, p, count);
    recio_reader_close(r);
    {
        FILE *f = fopen(tmp_path("rt.rec"), "wb");
        CHECK(f && fwrite(out.data, 1, out.size, f) == out.size);
        if (f) fclose(f);
    }
    CHECK(recio_reader_open(&r, tmp_path("rt.rec")) == RECIO_OK);
    expect_payloads(r, p, count);
    recio_reader_close(r);
    CHECK(rec_reader_mapped(&r, tmp_path("rt.rec")) == RECIO_OK);
    expect_payloads(r, p, count);
    recio_reader_close(r);
    memset(&d, 0, sizeof d);
    memset(&dr, 0, sizeof dr);
    dr.b = out.data;
    dr.n = out.size;
    dr.g.state = 3;
    d.io.read = dribble_read;
    d.io.user = &dr;
    d.buffer_size = 24;
    CHECK(recio_reader_open_desc(&r, NULL, &d) == RECIO_OK);
    expect_payloads(r, p, count);
    recio_reader_close(r);
    free(ref);
    recio_buffer_free(&out);
    free_payloads(p, count);
}

static void test_seek_with_written_index(void) {
    const size_t count = 200;
    payload *p = make_payloads(count, 9);
    recio_writer_desc wd;
    recio_writer *w;
    recio_reader *r;
    recio_index idx;
    recio_record rec;
    recio_rng g;
    size_t i;
    int mode;
    memset(&wd, 0, sizeof wd);
    wd.index_path = tmp_path("seek.idx");
    CHECK(recio_writer_open_desc(&w, tmp_path("seek.rec"), &wd) == RECIO_OK);
    for (i = 0; i < count; i++) CHECK(rec_write_key(w, 1000 + i, p[i].data, p[i].size) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    memset(&idx, 0, sizeof idx);
    CHECK(recio_index_load(&idx, tmp_path("seek.idx"), NULL) == RECIO_OK);
    CHECK_EQ_INT(idx.count, count);
    g.state = 5;
    for (mode = 0; mode < 3; mode++) {
        recio_reader_desc rd;
        memset(&rd, 0, sizeof rd);
        rd.use_mmap = mode == 1;
        rd.buffer_size = mode == 2 ? 8192 : 0; /* small: seeks land in compacted and regrown buffers */
        CHECK(recio_reader_open_desc(&r, tmp_path("seek.rec"), &rd) == RECIO_OK);
        for (i = 0; i < 500 && idx.count == count; i++) {
            size_t k = (size_t)recio_rng_below(&g, count);
            CHECK_EQ_INT(idx.entries[k].key, 1000 + k);
            CHECK(recio_reader_seek(r, idx.entries[k].offset) == RECIO_OK);
            CHECK_EQ_INT(recio_reader_tell(r), idx.entries[k].offset);
            CHECK(recio_reader_next(r, &rec) == RECIO_OK);
            CHECK(rec.offset == idx.entries[k].offset && rec.size == p[k].size);
            CHECK(rec.size == p[k].size && (rec.size == 0 || memcmp(rec.data, p[k].data, rec.size) == 0));
        }
        /* a seek into the middle of a record is reported as damage at that offset, and seek recovers */
        CHECK(recio_reader_seek(r, idx.entries[3].offset + 4) == RECIO_OK);
        CHECK(recio_reader_next(r, &rec) == RECIO_ERR_CORRUPT);
        CHECK(msg_has_offset(recio_reader_errmsg(r), idx.entries[3].offset + 4));
        CHECK(recio_reader_seek(r, idx.entries[3].offset) == RECIO_OK);
        CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == p[3].size);
        recio_reader_close(r);
    }
    recio_index_free(&idx);
    free_payloads(p, count);
}

/* ---- writer errors ---- */

static void test_writer_dev_full(void) {
    recio_writer *w;
    static unsigned char big[300000];
    recio_err e = RECIO_OK;
    int i;
    struct stat st;
    if (stat("/dev/full", &st) != 0) {
        printf("skip: no /dev/full\n");
        return;
    }
    CHECK(recio_writer_open(&w, "/dev/full") == RECIO_OK);
    for (i = 0; i < 8 && e == RECIO_OK; i++) e = recio_writer_write(w, big, sizeof big);
    CHECK_EQ_INT(e, RECIO_ERR_IO); /* the 1 MiB buffer filled and its flush failed */
    CHECK(strstr(recio_writer_errmsg(w), "/dev/full: offset ") != NULL);
    CHECK(strstr(recio_writer_errmsg(w), strerror(ENOSPC)) != NULL);
    CHECK_EQ_INT(recio_writer_write(w, big, 4), RECIO_ERR_IO); /* sticky */
    CHECK_EQ_INT(recio_writer_finish(w), RECIO_ERR_IO);
    CHECK(strstr(recio_writer_errmsg(w), strerror(ENOSPC)) != NULL); /* still readable after finish */
    CHECK_EQ_INT(recio_writer_write(w, big, 4), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    /* a small file only fails at close: still reported */
    CHECK(recio_writer_open(&w, "/dev/full") == RECIO_OK);
    CHECK(recio_writer_write(w, big, 10) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
}

typedef struct {
    size_t budget;
} failing_sink;

static int failing_write(void *u, const void *buf, size_t n) {
    failing_sink *s = (failing_sink *)u;
    (void)buf;
    if (n > s->budget) return -1;
    s->budget -= n;
    return 0;
}

static void test_writer_errors_are_sticky_and_too_big_is_harmless(void) {
    recio_writer_desc d;
    recio_writer *w;
    failing_sink s;
    recio_buffer out;
    recio_reader *r;
    recio_record rec;
    static const unsigned char small[128] = {1, 2, 3, 4, 5, 6, 7, 8};
    memset(&d, 0, sizeof d);
    s.budget = 100;
    d.io.write = failing_write;
    d.io.user = &s;
    d.buffer_size = 64;
    d.name = "sink";
    CHECK(recio_writer_open_desc(&w, NULL, &d) == RECIO_OK);
    CHECK(recio_writer_write(w, small, 8) == RECIO_OK);
    CHECK(recio_writer_write(w, small, 8) == RECIO_OK);
    CHECK(recio_writer_write(w, small, 8) == RECIO_OK);
    CHECK(recio_writer_write(w, small, 8) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, small, 8), RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, small, 100), RECIO_ERR_IO);
    CHECK(strncmp(recio_writer_errmsg(w), "sink: offset ", 13) == 0);
    CHECK_EQ_INT(recio_writer_write(w, small, 8), RECIO_ERR_IO);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    /* 2^29 bytes: refused before any byte is read or written, and the file stays sound */
    memset(&out, 0, sizeof out);
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    CHECK(recio_writer_write(w, small, 8) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, small, (size_t)1 << 29), RECIO_ERR_TOO_BIG);
    CHECK(strstr(recio_writer_errmsg(w), "2^29") != NULL);
    CHECK(recio_writer_write(w, small, 4) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(recio_reader_open_mem(&r, out.data, out.size) == RECIO_OK);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == 8);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == 4);
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    recio_reader_close(r);
    recio_buffer_free(&out);
}

/* write_batch: the same bytes and index as one write per record, through writev (files) and the
   fallback (memory), with records that need parts in the middle of a batch. */
static void test_writer_batch(void) {
    size_t sz, isz, n = 0, i, got;
    unsigned char *orig = t_slurp(COMPAT "b.rec", &sz), *idx_orig = t_slurp(COMPAT "b.rec.idx", &isz), *ours;
    const void *data[200];
    size_t size[200];
    recio_writer_item items[200];
    unsigned char *copies[200];
    recio_reader *r;
    recio_record rec;
    recio_writer_desc d;
    recio_writer *w;
    recio_buffer out;
    CHECK(recio_reader_open(&r, COMPAT "b.rec") == RECIO_OK);
    while (n < 200 && recio_reader_next(r, &rec) == RECIO_OK) {
        copies[n] = (unsigned char *)malloc(rec.size + 1);
        memcpy(copies[n], rec.data, rec.size);
        data[n] = copies[n];
        size[n++] = rec.size;
    }
    recio_reader_close(r);
    CHECK_EQ_INT(n, 103);
    for (i = 0; i < n; i++) items[i].data = data[i], items[i].size = size[i], items[i].key = i; /* the ordinals */
    memset(&d, 0, sizeof d);
    d.index_path = tmp_path("batch.idx");
    CHECK(recio_writer_open_desc(&w, tmp_path("batch.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, data[0], size[0]) == RECIO_OK); /* buffered bytes before a batch */
    CHECK(recio_writer_write_batch(w, items + 1, 50) == RECIO_OK);
    CHECK(recio_writer_write_batch(w, items + 51, 0) == RECIO_OK);
    CHECK(recio_writer_write_batch(w, items + 51, n - 51) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    ours = t_slurp(tmp_path("batch.rec"), &got);
    CHECK(ours && got == sz && memcmp(ours, orig, sz) == 0);
    free(ours);
    ours = t_slurp(tmp_path("batch.idx"), &got);
    CHECK(ours && got == isz && memcmp(ours, idx_orig, isz) == 0);
    free(ours);
    memset(&out, 0, sizeof out);
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    CHECK(recio_writer_write_batch(w, items, n) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(out.size == sz && memcmp(out.data, orig, sz) == 0);
    recio_buffer_free(&out);
#ifndef _WIN32 /* no /dev/full there (wine writes into a file of that name) */
    CHECK(recio_writer_open(&w, "/dev/full") == RECIO_OK);
    CHECK_EQ_INT(recio_writer_write_batch(w, items, n), RECIO_ERR_IO);
    CHECK(strstr(recio_writer_errmsg(w), strerror(ENOSPC)) != NULL);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
#endif
    for (i = 0; i < n; i++) free(copies[i]);
    free(orig);
    free(idx_orig);
}

/* Background mode: the same bytes as the plain writer, and errors still reach the caller. */
static void test_writer_background(void) {
    size_t sz, i;
    unsigned char *orig = t_slurp(COMPAT "b.rec", &sz), *ours;
    recio_reader *r;
    recio_record rec;
    recio_writer_desc d;
    recio_writer *w;
    failing_sink s;
    static unsigned char big[300000];
    recio_err e = RECIO_OK;
    memset(&d, 0, sizeof d);
    d.background = 1;
    d.buffer_size = 100000; /* many hand-offs, and records larger than the buffer */
    CHECK(recio_writer_open_desc(&w, tmp_path("bg.rec"), &d) == RECIO_OK);
    CHECK(recio_reader_open(&r, COMPAT "b.rec") == RECIO_OK);
    for (i = 0; i < 3; i++) {
        CHECK(recio_reader_seek(r, 0) == RECIO_OK);
        while (recio_reader_next(r, &rec) == RECIO_OK) CHECK(recio_writer_write(w, rec.data, rec.size) == RECIO_OK);
    }
    recio_reader_close(r);
    CHECK(recio_writer_close(w) == RECIO_OK);
    ours = t_slurp(tmp_path("bg.rec"), &i);
    CHECK(ours && i == 3 * sz && memcmp(ours, orig, sz) == 0 && memcmp(ours + 2 * sz, orig, sz) == 0);
    free(ours);
    free(orig);
    /* a failing sink: the error surfaces on a later call, with the offset of the failed block */
    memset(&d, 0, sizeof d);
    s.budget = 150000;
    d.io.write = failing_write;
    d.io.user = &s;
    d.buffer_size = 65536;
    d.background = 1;
    d.name = "bgsink";
    CHECK(recio_writer_open_desc(&w, NULL, &d) == RECIO_OK);
    for (i = 0; i < 20 && e == RECIO_OK; i++) e = recio_writer_write(w, big, 30000);
    CHECK_EQ_INT(e, RECIO_ERR_IO);
    CHECK(strncmp(recio_writer_errmsg(w), "bgsink: offset ", 15) == 0);
    CHECK_EQ_INT(recio_writer_write(w, big, 8), RECIO_ERR_IO);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    memset(&d, 0, sizeof d);
    d.background = 1;
    CHECK(recio_writer_open_desc(&w, "/dev/full", &d) == RECIO_OK);
    CHECK(recio_writer_write(w, big, 1000) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_finish(w), RECIO_ERR_IO);
    CHECK(strstr(recio_writer_errmsg(w), strerror(ENOSPC)) != NULL);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Files in the test folder whose names start with NAME (temporaries are NAME.tmp.PID...). */
static int count_like(const char *name) {
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) != NULL) n += strncmp(e->d_name, name, strlen(name)) == 0;
    if (d) closedir(d);
    return n;
}

static int first_record_is(const char *path, const char *text) {
    recio_reader *r;
    recio_record rec;
    int same;
    if (recio_reader_open(&r, path) != RECIO_OK) return 0;
    same = recio_reader_next(r, &rec) == RECIO_OK && rec.size == strlen(text) && memcmp(rec.data, text, rec.size) == 0;
    recio_reader_close(r);
    return same;
}

static void test_writer_atomic(void) {
    recio_writer_desc d;
    recio_writer *w;
    recio_reader *r;
    recio_record rec;
    memset(&d, 0, sizeof d);
    d.atomic = 1;
    d.index_path = tmp_path("atomic.idx");
    remove(tmp_path("atomic.rec"));
    CHECK(recio_writer_open_desc(&w, tmp_path("atomic.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "hello", 5) == RECIO_OK);
    CHECK(!file_exists(tmp_path("atomic.rec")) && count_like("atomic.rec.tmp.") == 1);
    CHECK(!file_exists(tmp_path("atomic.idx")) && count_like("atomic.idx.tmp.") == 1);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(file_exists(tmp_path("atomic.rec")) && count_like("atomic.rec.") == 0);
    CHECK(file_exists(tmp_path("atomic.idx")) && count_like("atomic.idx.") == 0);
    CHECK(recio_reader_open(&r, tmp_path("atomic.rec")) == RECIO_OK);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == 5 && memcmp(rec.data, "hello", 5) == 0);
    recio_reader_close(r);
    /* abort: the temporary files go, the earlier atomic.rec and atomic.idx stay as they were */
    d.index_path = tmp_path("atomic.idx");
    CHECK(recio_writer_open_desc(&w, tmp_path("atomic.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "other", 5) == RECIO_OK);
    recio_writer_abort(w);
    CHECK(count_like("atomic.rec.") == 0 && count_like("atomic.idx.") == 0);
    CHECK(recio_reader_open(&r, tmp_path("atomic.rec")) == RECIO_OK);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == 5 && memcmp(rec.data, "hello", 5) == 0);
    recio_reader_close(r);
    /* the final name is a directory: refused at open (not after writing it all), nothing is left. A
       writer that opened anyway is closed here, or its open temporary file (Windows cannot remove an
       open file) outlives the test folder: recio-test-a00032/dir.rec.tmp.13116576 was one, from wine */
    t_mkdir(tmp_path("dir.rec"));
    d.index_path = NULL;
    w = NULL;
    CHECK_EQ_INT(recio_writer_open_desc(&w, tmp_path("dir.rec"), &d), RECIO_ERR_IO);
    if (w) recio_writer_abort(w);
    CHECK(count_like("dir.rec.") == 0);
    rmdir(tmp_path("dir.rec"));
    /* cannot create: an error, and nothing left behind */
    CHECK_EQ_INT(recio_writer_open_desc(&w, "/nonexistent-dir/x.rec", &d), RECIO_ERR_IO);
    CHECK(w == NULL);
}

/* Two atomic writers of one file at once (two packs to one prefix): each writes its own temporary
   file, so the result is one whole file, the last to finish, never a mix of both. */
static void test_writer_atomic_concurrent(void) {
    recio_writer_desc d;
    recio_writer *a, *b;
    static unsigned char pa[20000], pb[5000];
    recio_reader *r;
    recio_record rec;
    int n = 0, ok = 1;
    memset(&d, 0, sizeof d);
    memset(pa, 'a', sizeof pa);
    memset(pb, 'b', sizeof pb);
    d.atomic = 1;
    d.buffer_size = 4096; /* both write to disk before either finishes */
    CHECK(recio_writer_open_desc(&a, tmp_path("race.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_open_desc(&b, tmp_path("race.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(a, pa, sizeof pa) == RECIO_OK && recio_writer_write(a, pa, sizeof pa) == RECIO_OK);
    CHECK(recio_writer_write(b, pb, sizeof pb) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_close(a), RECIO_OK);
    CHECK_EQ_INT(recio_writer_close(b), RECIO_OK);
    CHECK(recio_reader_open(&r, tmp_path("race.rec")) == RECIO_OK);
    while (recio_reader_next(r, &rec) == RECIO_OK) ok &= rec.size == sizeof pb && ((const char *)rec.data)[0] == 'b', n++;
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    recio_reader_close(r);
    CHECK(ok && n == 1);
    CHECK_EQ_INT(count_like("race.rec."), 0);
}

/* The .idx cannot be renamed into place (a folder took its name meanwhile): the new .rec must not
   stay either; the old pair is what the reader finds. */
static void test_writer_atomic_pair_rollback(void) {
    recio_writer_desc d;
    recio_writer *w;
    char idx[256];
    memset(&d, 0, sizeof d);
    d.atomic = 1;
    snprintf(idx, sizeof idx, "%s", tmp_path("pair.idx")); /* tmp_path's buffers are reused */
    d.index_path = idx;
    remove(tmp_path("pair.idx"));
    CHECK(recio_writer_open_desc(&w, tmp_path("pair.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "old", 3) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
    remove(tmp_path("pair.idx"));
    CHECK(recio_writer_open_desc(&w, tmp_path("pair.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "new", 3) == RECIO_OK);
    CHECK(t_mkdir(tmp_path("pair.idx")) == 0 && t_mkdir(tmp_path("pair.idx/x")) == 0);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    CHECK(first_record_is(tmp_path("pair.rec"), "old"));
    CHECK_EQ_INT(count_like("pair.rec."), 0);
    CHECK_EQ_INT(count_like("pair.idx."), 0);
    rmdir(tmp_path("pair.idx/x"));
    rmdir(tmp_path("pair.idx"));
    /* with no earlier .rec, the new one goes: neither file appears */
    remove(tmp_path("pair.rec"));
    CHECK(recio_writer_open_desc(&w, tmp_path("pair.rec"), &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "new", 3) == RECIO_OK);
    CHECK(t_mkdir(tmp_path("pair.idx")) == 0 && t_mkdir(tmp_path("pair.idx/x")) == 0);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    CHECK(!file_exists(tmp_path("pair.rec")));
    rmdir(tmp_path("pair.idx/x"));
    rmdir(tmp_path("pair.idx"));
}

/* An atomic writer over a FIFO or a device writes into it: renaming a file over it would destroy it. */
static void test_writer_atomic_special_target(void) {
    recio_writer_desc d;
    recio_writer *w;
    struct stat st;
    memset(&d, 0, sizeof d);
    d.atomic = 1;
    if (stat("/dev/full", &st) != 0) return;
    CHECK(recio_writer_open_desc(&w, "/dev/full", &d) == RECIO_OK);
    CHECK(recio_writer_write(w, "x", 1) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO); /* ENOSPC, not a rename */
    CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
}

/* ---- recio_outfile: a file that appears at PATH whole on commit, or not at all ---- */

static int has_text(const char *path, const char *text) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n);
    int same = b && n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

/* open, write, commit: nothing at PATH until the commit, then the whole file; no temporary left. */
static recio_err outfile_write(const char *path, const char *text, const recio_outfile_desc *d, recio_outfile **keep) {
    recio_outfile *f;
    recio_io io;
    recio_err e = recio_outfile_open(&f, &io, path, d);
    if (e != RECIO_OK) return e;
    CHECK(io.write(io.user, text, strlen(text)) == 0);
    e = recio_outfile_commit(f);
    if (keep) *keep = f;
    else recio_outfile_close(f, 0);
    return e;
}

static void test_outfile_create_replace_refuse(void) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_outfile_desc d;
    recio_outfile *f;
    recio_io io;
    const char *p = tmp_path("of.txt");
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    remove(p);
    CHECK_EQ_INT(recio_outfile_open(&f, &io, p, &d), RECIO_OK);
    CHECK(io.write(io.user, "new", 3) == 0);
    CHECK(!file_exists(p) && count_like("of.txt.tmp.") == 1); /* under a temporary name until the commit */
    CHECK_EQ_INT(recio_outfile_commit(f), RECIO_OK);
    CHECK_EQ_INT(recio_outfile_commit(f), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_outfile_close(f, 0), RECIO_OK);
    CHECK(has_text(p, "new") && count_like("of.txt.") == 0);
    /* an existing file without replace: refused at open, named, untouched */
    CHECK_EQ_INT(outfile_write(p, "other", &d, NULL), RECIO_ERR_ARG);
    CHECK(strstr(msg, "of.txt: offset 0: exists: not replaced") != NULL);
    CHECK(has_text(p, "new") && count_like("of.txt.") == 0);
    /* replace: the new file, whole */
    d.replace = 1;
    CHECK_EQ_INT(outfile_write(p, "replaced", &d, NULL), RECIO_OK);
    CHECK(has_text(p, "replaced") && count_like("of.txt.") == 0);
    /* dropped before the commit: the temporary file goes, PATH keeps what it held */
    CHECK_EQ_INT(recio_outfile_open(&f, &io, p, &d), RECIO_OK);
    CHECK(io.write(io.user, "dropped", 7) == 0);
    CHECK_EQ_INT(recio_outfile_close(f, 0), RECIO_OK);
    CHECK(has_text(p, "replaced") && count_like("of.txt.") == 0);
    /* a name taken between open and commit is never lost (the commit links, which fails on it) */
    remove(p);
    d.replace = 0;
    CHECK_EQ_INT(recio_outfile_open(&f, &io, p, &d), RECIO_OK);
    CHECK(io.write(io.user, "late", 4) == 0);
    put_file(p, "someone else's");
    CHECK_EQ_INT(recio_outfile_commit(f), RECIO_ERR_IO);
    CHECK(strstr(msg, "was made by someone else meanwhile") != NULL);
    CHECK_EQ_INT(recio_outfile_close(f, 0), RECIO_OK);
    CHECK(has_text(p, "someone else's") && count_like("of.txt.") == 0);
    /* a folder is never a file to write */
    t_mkdir(tmp_path("of.dir"));
    d.replace = 1;
    CHECK_EQ_INT(outfile_write(tmp_path("of.dir"), "x", &d, NULL), RECIO_ERR_ARG);
    CHECK(strstr(msg, "is a folder") != NULL && count_like("of.dir.") == 0);
    rmdir(tmp_path("of.dir"));
    CHECK_EQ_INT(recio_outfile_open(NULL, &io, p, &d), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_outfile_open(&f, &io, NULL, &d), RECIO_ERR_ARG);
    remove(p);
}

/* Several files all or none: a commit keeps the previous file until close, which can put it back. */
static void test_outfile_undo(void) {
    recio_outfile_desc d;
    recio_outfile *f;
    const char *p = tmp_path("undo.txt");
    memset(&d, 0, sizeof d);
    d.replace = d.undo = 1;
    put_file(p, "old");
    CHECK_EQ_INT(outfile_write(p, "new", &d, &f), RECIO_OK);
    CHECK(has_text(p, "new"));
    CHECK_EQ_INT(recio_outfile_close(f, 1), RECIO_OK);
    CHECK(has_text(p, "old") && count_like("undo.txt.") == 0);
    CHECK_EQ_INT(outfile_write(p, "new", &d, &f), RECIO_OK);
    CHECK_EQ_INT(recio_outfile_close(f, 0), RECIO_OK); /* kept: the old copy goes */
    CHECK(has_text(p, "new") && count_like("undo.txt.") == 0);
    /* the new version is no file: removed, and back with an undo */
    CHECK_EQ_INT(recio_outfile_open(&f, NULL, p, &d), RECIO_OK);
    CHECK_EQ_INT(recio_outfile_commit(f), RECIO_OK);
    CHECK(!file_exists(p));
    CHECK_EQ_INT(recio_outfile_close(f, 1), RECIO_OK);
    CHECK(has_text(p, "new") && count_like("undo.txt.") == 0);
    CHECK_EQ_INT(recio_outfile_open(&f, NULL, p, &d), RECIO_OK);
    CHECK_EQ_INT(recio_outfile_commit(f), RECIO_OK);
    CHECK_EQ_INT(recio_outfile_close(f, 0), RECIO_OK);
    CHECK(!file_exists(p) && count_like("undo.txt") == 0);
    /* made where there was nothing: the undo removes it */
    CHECK_EQ_INT(outfile_write(p, "fresh", &d, &f), RECIO_OK);
    CHECK(has_text(p, "fresh"));
    CHECK_EQ_INT(recio_outfile_close(f, 1), RECIO_OK);
    CHECK(!file_exists(p) && count_like("undo.txt") == 0);
}

/* The inputs of a job are never written over, whatever the spelling; a link is the file it names. */
static void test_outfile_never_an_input(void) {
    char msg[RECIO_ERRMSG_SIZE], other[300], in[300];
    const char *inputs[2];
    recio_outfile_desc d;
    snprintf(in, sizeof in, "%s", tmp_path("in.rec")); /* tmp_path's buffers are reused */
    memset(&d, 0, sizeof d);
    d.errmsg = msg, d.replace = 1, d.inputs = inputs, d.ninputs = 2;
    put_file(in, "dataset");
    inputs[0] = "unrelated.txt", inputs[1] = in;
    snprintf(other, sizeof other, "%s/./in.rec", tmpdir); /* another spelling */
    CHECK(recio_same_file(in, other) && !recio_same_file(in, tmp_path("in.idx")));
    CHECK_EQ_INT(outfile_write(other, "index", &d, NULL), RECIO_ERR_ARG);
    CHECK(strstr(msg, "is the input ") != NULL && strstr(msg, "in.rec (the same file)") != NULL);
    CHECK(has_text(in, "dataset") && count_like("in.rec.") == 0);
    /* two names of one place where nothing is yet */
    snprintf(other, sizeof other, "%s/./none.png", tmpdir);
    CHECK(recio_same_file(tmp_path("none.png"), other) && !recio_same_file(tmp_path("none.png"), tmp_path("none2.png")));
    CHECK(!recio_same_file(NULL, other));
#ifndef _WIN32
    snprintf(other, sizeof other, "%s", tmp_path("hard.rec"));
    remove(other);
    CHECK(link(in, other) == 0);
    CHECK(recio_same_file(in, other));
    CHECK_EQ_INT(outfile_write(other, "sheet", &d, NULL), RECIO_ERR_ARG);
    CHECK(has_text(in, "dataset") && has_text(other, "dataset"));
    remove(other);
    snprintf(other, sizeof other, "%s", tmp_path("soft.rec"));
    remove(other);
    CHECK(symlink("in.rec", other) == 0);
    CHECK_EQ_INT(outfile_write(other, "sheet", &d, NULL), RECIO_ERR_ARG);
    CHECK(has_text(in, "dataset"));
    remove(other);
#endif
    remove(in);
}

/* n records of 1000 bytes (byte k of record i is (i + k) & 255) appended to path as RecordIO bytes. */
static int append_records(const char *path, unsigned first, unsigned n) {
    recio_buffer b;
    recio_writer *w;
    unsigned char rec[1000];
    unsigned i, k;
    FILE *f;
    int ok;
    memset(&b, 0, sizeof b);
    if (rec_writer_mem(&w, &b) != RECIO_OK) return -1;
    for (i = first; i < first + n; i++) {
        for (k = 0; k < sizeof rec; k++) rec[k] = (unsigned char)(i + k);
        recio_writer_write(w, rec, sizeof rec);
    }
    ok = recio_writer_close(w) == RECIO_OK && (f = fopen(path, "ab")) != NULL;
    if (ok) ok = (fwrite(b.data, 1, b.size, f) == b.size) & (fclose(f) == 0);
    recio_buffer_free(&b);
    return ok ? 0 : -1;
}

/* Records appended while a file is read (a pack still writing, a log): the size taken at open made
   the next record "length 1000 runs past end of file". A streaming reader reads them; a split keeps
   to the bytes its parts were cut from, and ends cleanly. */
static void test_file_grows_while_read(void) {
    recio_reader_desc rd;
    recio_split_desc sd;
    recio_reader *r;
    recio_split *sp;
    recio_split_where where;
    recio_record rec;
    recio_err e;
    char path[256], list[600];
    unsigned n = 0, bad = 0;
    snprintf(path, sizeof path, "%s", tmp_path("grow.rec"));
    remove(path);
    CHECK(append_records(path, 0, 40) == 0);
    memset(&rd, 0, sizeof rd);
    rd.buffer_size = 4096; /* far less than the file: the reader has not seen its end */
    CHECK(recio_reader_open_desc(&r, path, &rd) == RECIO_OK);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK);
    CHECK(append_records(path, 40, 10) == 0);
    for (n = 1; (e = recio_reader_next(r, &rec)) == RECIO_OK; n++) bad += ((const unsigned char *)rec.data)[0] != (unsigned char)n;
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(n, 50);
    CHECK_EQ_INT(bad, 0);
    if (e != RECIO_END) fprintf(stderr, "  %s\n", recio_reader_errmsg(r));
    recio_reader_close(r);
    memset(&sd, 0, sizeof sd);
    sd.buffer_size = 4096;
    CHECK(recio_split_open_desc(&sp, path, 0, 1, &sd) == RECIO_OK);
    CHECK(recio_split_next(sp, &rec) == RECIO_OK);
    CHECK(append_records(path, 50, 10) == 0);
    for (n = 1; (e = recio_split_next(sp, &rec)) == RECIO_OK; n++) {}
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(n, 50);
    if (e != RECIO_END) fprintf(stderr, "  %s\n", recio_split_errmsg(sp));
    recio_split_close(sp);
    /* with a file after it, the appended records would take offsets of the next file's range */
    snprintf(list, sizeof list, "%s;%s", path, tmp_path("grow2.rec"));
    remove(tmp_path("grow2.rec"));
    CHECK(append_records(tmp_path("grow2.rec"), 0, 5) == 0);
    CHECK(recio_split_open_desc(&sp, list, 0, 1, &sd) == RECIO_OK);
    CHECK(recio_split_next(sp, &rec) == RECIO_OK);
    CHECK(append_records(path, 60, 10) == 0);
    for (n = 1, bad = 0; (e = rec_split_next_where(sp, &rec, &where)) == RECIO_OK; n++) bad += where.file != (n >= 60);
    CHECK_EQ_INT(e, RECIO_END);
    CHECK_EQ_INT(n, 65);
    CHECK_EQ_INT(bad, 0); /* 60 records of the first file, then the second file's 5 */
    recio_split_close(sp);
}

/* Parts that join past 2^29 - 1 bytes, the largest record a writer makes (three parts of 2^29 - 4
   passed verify as one 1.6 GB record): refused at the header that goes over, before its bytes are
   read or a buffer is grown for them. */
static void test_joined_record_cap(void) {
    unsigned char b[48];
    recio_reader *r;
    recio_record rec;
    memset(b, 0, sizeof b);
    recio_store_u32le(b, RECIO_MAGIC);
    recio_store_u32le(b + 4, 1u << 29 | 16u); /* first part, 16 bytes */
    recio_store_u32le(b + 24, RECIO_MAGIC);
    recio_store_u32le(b + 28, 3u << 29 | RECIO_MAX_RECORD); /* last part: 16 + 4 + (2^29 - 1) in all */
    CHECK(recio_reader_open_mem(&r, b, sizeof b) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_ERR_CORRUPT);
    CHECK(strstr(recio_reader_errmsg(r), "<memory>: offset 0: parts join to more than 536870911 bytes") != NULL);
    recio_reader_close(r);
}

static void test_open_errors(void) {
    recio_reader *r = (recio_reader *)&r;
    CHECK_EQ_INT(recio_reader_open(&r, "/nonexistent/file.rec"), RECIO_ERR_IO);
    CHECK(r == NULL);
    CHECK_EQ_INT(rec_reader_mapped(&r, "/nonexistent/file.rec"), RECIO_ERR_IO);
    CHECK_EQ_INT(recio_reader_open(&r, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_reader_open_mem(&r, NULL, 5), RECIO_ERR_ARG);
    CHECK(recio_reader_open_mem(&r, NULL, 0) == RECIO_OK);
    CHECK(recio_reader_next(r, NULL) == RECIO_ERR_ARG);
    recio_reader_close(r);
    recio_reader_close(NULL);
    CHECK(strcmp(recio_strerror(RECIO_ERR_CORRUPT), "corrupt RecordIO data") == 0);
    CHECK(strcmp(recio_strerror((recio_err)-99), "unknown error") == 0);
}

/* ---- .idx, .lst, image headers ---- */

/* desc.io belongs to the reader once an open succeeds (recio_reader_close closes it), and stays the
   caller's, open, when the open fails: here the allocator refuses the stream buffer (the second
   allocation), the path where the reader used to close it as well (the split then closed it again). */
static unsigned ow_closes;
static int ow_close(void *user) { (void)user; ow_closes++; return 0; }
static int64_t ow_read(void *user, void *buf, size_t n) { (void)user, (void)buf, (void)n; return 0; }

static void test_reader_io_ownership(void) {
    unsigned fail;
    for (fail = 1; fail <= 3; fail++) {
        recio_reader_desc d;
        recio_reader *r = NULL;
        recio_err e;
        t_failalloc fa;
        memset(&d, 0, sizeof d);
        d.io.read = ow_read;
        d.io.close = ow_close;
        d.alloc.alloc = t_fail_alloc, d.alloc.free = t_fail_free, d.alloc.user = &fa;
        ow_closes = 0;
        t_fail_arm(&fa, fail);
        e = recio_reader_open_desc(&r, NULL, &d);
        if (fail <= 2) { /* the handle, then the buffer */
            CHECK(e == RECIO_ERR_NOMEM && r == NULL);
            CHECK_EQ_INT(ow_closes, 0);
        } else {
            CHECK(e == RECIO_OK && r != NULL);
            recio_reader_close(r);
            CHECK_EQ_INT(ow_closes, 1);
        }
        CHECK_EQ_INT(fa.live, 0);
    }
}

/* The same for desc.io of a writer: its index cannot be created, so the open fails; the sink is
   still the caller's and open. A good open hands it to the writer, which closes it once. */
static int ow_write(void *user, const void *buf, size_t n) { (void)user, (void)buf, (void)n; return 0; }
static void test_writer_io_ownership(void) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    memset(&d, 0, sizeof d);
    d.io.write = ow_write;
    d.io.close = ow_close;
    d.index_path = "build/no-such-dir/x.idx";
    ow_closes = 0;
    CHECK(recio_writer_open_desc(&w, NULL, &d) != RECIO_OK && w == NULL);
    CHECK_EQ_INT(ow_closes, 0);
    d.index_path = NULL;
    CHECK(recio_writer_open_desc(&w, NULL, &d) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK_EQ_INT(ow_closes, 1);
}

static void test_index_and_lst_parsing(void) {
    recio_index idx;
    recio_lst lst;
    const char *good = "0\t0\n1\t8\r\n\n7 20\n";
    const char *lst_text = "5\t1.5\ta/b c.jpg\n6\t2\t-3.25\t1e3\tx.png\r\n";
    char msg[RECIO_ERRMSG_SIZE];
    memset(&idx, 0, sizeof idx);
    CHECK(rec_index_parse(&idx, good, strlen(good), "t.idx", msg) == RECIO_OK && msg[0] == 0);
    CHECK_EQ_INT(idx.count, 3);
    CHECK(idx.count == 3 && idx.entries[2].key == 7 && idx.entries[2].offset == 20);
    recio_index_free(&idx);
    CHECK_EQ_INT(rec_index_parse(&idx, "0\t0\n1\tx\n", 8, "t.idx", msg), RECIO_ERR_FORMAT);
    CHECK(strcmp(msg, "t.idx: line 2: expected an offset after the key") == 0);
    CHECK_EQ_INT(rec_index_parse(&idx, "99999999999999999999\t0\n", 23, "t.idx", msg), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(rec_index_parse(&idx, "1\t2\t3\n", 6, "t.idx", msg), RECIO_ERR_FORMAT);
    CHECK(strstr(msg, "line 1: unexpected text") != NULL);
    memset(&lst, 0, sizeof lst);
    CHECK(rec_lst_parse(&lst, lst_text, strlen(lst_text), "t.lst", 0, msg) == RECIO_OK);
    CHECK_EQ_INT(lst.count, 2);
    if (lst.count == 2) {
        CHECK(lst.items[0].index == 5 && lst.items[0].nlabels == 1 && lst.items[0].labels[0] == 1.5f);
        CHECK(strcmp(lst.items[0].path, "a/b c.jpg") == 0);
        CHECK(lst.items[1].nlabels == 3 && lst.items[1].labels[1] == -3.25f && lst.items[1].labels[2] == 1000.0f);
        CHECK(strcmp(lst.items[1].path, "x.png") == 0);
    }
    recio_lst_free(&lst);
    CHECK_EQ_INT(rec_lst_parse(&lst, "1\tabc\tx.jpg\n", 12, "t.lst", 0, msg), RECIO_ERR_FORMAT);
    CHECK(strcmp(msg, "t.lst: line 1: a label is not a number") == 0);
    CHECK_EQ_INT(rec_lst_parse(&lst, "1\tx.jpg\n", 8, "t.lst", 0, msg), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(rec_lst_parse(&lst, "x.jpg\n", 6, "t.lst", 0, msg), RECIO_ERR_FORMAT);
}

static int bad_lines;
static void count_bad(void *user, const char *msg) {
    bad_lines++;
    CHECK(user == &bad_lines && strncmp(msg, "t.lst: line ", 12) == 0);
}

/* im2rec's read_list: the line and every field stripped, a trailing tab fine; a NUL in a path
   refused; with on_bad_line, malformed lines are reported, counted and left out. */
static void test_lst_im2rec_lines(void) {
    recio_lst lst;
    recio_lst_desc d;
    char msg[RECIO_ERRMSG_SIZE];
    static const char text[] = " 0 \t 1.5 \t a b.jpg \t\n1\t2\t/abs/c.jpg\r\n2\tx\td.jpg\n3\t0\te\0.jpg\n4\n5\t7\tf.jpg";
    memset(&lst, 0, sizeof lst);
    CHECK_EQ_INT(rec_lst_parse(&lst, text, (size_t)(strchr(text, '\n') - text), "t.lst", 0, msg), RECIO_OK); /* line 1 alone */
    CHECK(lst.count == 1 && lst.items[0].index == 0 && lst.items[0].nlabels == 1 && strcmp(lst.items[0].path, "a b.jpg") == 0);
    recio_lst_free(&lst);
    CHECK_EQ_INT(rec_lst_parse(&lst, text, sizeof text - 1, "t.lst", 0, msg), RECIO_ERR_FORMAT);
    CHECK(strcmp(msg, "t.lst: line 3: a label is not a number") == 0);
    CHECK_EQ_INT(rec_lst_parse(&lst, "3\t0\te\0.jpg\n", 11, "t.lst", 0, msg), RECIO_ERR_FORMAT);
    CHECK(strcmp(msg, "t.lst: line 1: a NUL byte in the path") == 0);
    memset(&d, 0, sizeof d);
    d.text = text, d.size = sizeof text - 1;
    d.on_bad_line = count_bad;
    d.user = &bad_lines;
    CHECK_EQ_INT(recio_lst_load(&lst, "t.lst", &d), RECIO_OK);
    CHECK_EQ_INT(lst.count, 3);
    CHECK_EQ_INT(lst.skipped, 3);
    CHECK_EQ_INT(bad_lines, 3);
    if (lst.count == 3) {
        CHECK(strcmp(lst.items[0].path, "a b.jpg") == 0 && lst.items[0].labels[0] == 1.5f);
        CHECK(strcmp(lst.items[1].path, "/abs/c.jpg") == 0 && lst.items[1].labels[0] == 2.0f);
        CHECK(lst.items[2].index == 5 && strcmp(lst.items[2].path, "f.jpg") == 0 && lst.items[2].labels[0] == 7.0f);
    }
    recio_lst_free(&lst);
}

static void test_irecord_pack_unpack(void) {
    unsigned char buf[64];
    const float one = 3.5f, many[3] = {1.0f, -2.0f, 0.25f};
    recio_irecord ir;
    size_t n = recio_irecord_pack_header(buf, &one, 1, 77, 5);
    /* flag 0: label 3.5 = 0x40600000 little-endian in bytes 4..7, id 77 in bytes 8..15 */
    static const unsigned char want[24] = {0, 0, 0, 0, 0, 0, 0x60, 0x40, 77, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ_INT(n, 24);
    CHECK(memcmp(buf, want, 24) == 0);
    memcpy(buf + n, "IMG", 3);
    CHECK(recio_irecord_unpack(&ir, buf, n + 3) == RECIO_OK);
    CHECK(ir.flag == 0 && ir.label == 3.5f && ir.id == 77 && ir.id2 == 5 && ir.image_size == 3 && ir.labels == NULL);
    CHECK(ir.nlabels == 1 && recio_load_f32le(ir.all_labels) == 3.5f); /* the header's label */
    CHECK_EQ_INT(recio_irecord_pack_header(NULL, &one, 1, 77, 5), 24);   /* the size alone */
    CHECK_EQ_INT(recio_irecord_pack_header(NULL, many, 3, 0, 0), 36);
    n = recio_irecord_pack_header(buf, many, 3, UINT64_MAX, 0);
    CHECK_EQ_INT(n, 36);
    CHECK(buf[0] == 3 && buf[24 + 4 + 3] == 0xc0); /* -2.0f = 0xc0000000 */
    CHECK(recio_irecord_unpack(&ir, buf, n) == RECIO_OK);
    CHECK(ir.flag == 3 && ir.id == UINT64_MAX && ir.image_size == 0);
    CHECK(ir.nlabels == 3 && recio_load_f32le((const char *)ir.all_labels + 4) == -2.0f &&
          recio_load_f32le((const char *)ir.all_labels + 8) == 0.25f);
    CHECK_EQ_INT(recio_irecord_unpack(&ir, buf, 23), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(recio_irecord_unpack(&ir, buf, 35), RECIO_ERR_FORMAT); /* labels cut short */
    buf[3] = 0xff;                                                      /* flag = huge */
    CHECK_EQ_INT(recio_irecord_unpack(&ir, buf, 36), RECIO_ERR_FORMAT);
}

static void test_endian_helpers_and_rng(void) {
    unsigned char b[8];
    recio_rng g;
    recio_store_u32le(b, 0x11223344u);
    CHECK(b[0] == 0x44 && b[3] == 0x11);
    recio_store_u64le(b, 0x0102030405060708ULL);
    CHECK(b[0] == 8 && b[7] == 1 && recio_load_u64le(b) == 0x0102030405060708ULL);
    recio_store_f32le(b, 1.0f);
    CHECK(b[3] == 0x3f && b[2] == 0x80 && recio_load_f32le(b) == 1.0f);
    /* splitmix64 reference (Vigna's splitmix64.c) from state 0: first output 0xe220a8397b1dcdaf */
    g.state = 0;
    CHECK(recio_rng_next(&g) == 0xe220a8397b1dcdafULL);
    CHECK(recio_rng_next(&g) == 0x6e789e6aa1b965f4ULL);
    CHECK(recio_seed_for(1, 2, 3) == recio_seed_for(1, 2, 3));
    CHECK(recio_seed_for(1, 2, 3) != recio_seed_for(1, 3, 2));
    {
        int hist[10] = {0}, i, ok = 1;
        for (i = 0; i < 100000; i++) hist[recio_rng_below(&g, 10)]++;
        for (i = 0; i < 10; i++) ok &= hist[i] > 9500 && hist[i] < 10500;
        CHECK(ok);
        for (i = 0; i < 1000; i++) {
            double u = recio_rng_uniform(&g);
            ok &= u >= 0.0 && u < 1.0;
        }
        CHECK(ok);
    }
}

/* ---- the command ---- */

#ifdef HAVE_CLI
static int run_cli(const char *args, char *out, size_t cap) {
    const char *tool = getenv("RECIO");
    char cmd[1024];
    FILE *p;
    size_t n = 0;
    int st;
    if (!tool) return -1;
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", tool, args);
    p = popen(cmd, "r");
    if (!p) return -1;
    if (out) {
        n = fread(out, 1, cap - 1, p);
        out[n] = 0;
    } else {
        char sink[4096];
        while (fread(sink, 1, sizeof sink, p) > 0) {
        }
    }
    st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int file_equals_columns(const char *text, const char *manifest, int ncols) {
    /* the tool's text must equal the first ncols tab-separated columns of the manifest */
    FILE *f = fopen(manifest, "r");
    char line[1024];
    size_t at = 0;
    int ok = 1;
    if (!f) return 0;
    while (ok && fgets(line, sizeof line, f)) {
        char *c = line;
        int k;
        for (k = 0; k < ncols; k++) {
            c = strchr(c, k + 1 < ncols ? '\t' : '\t');
            if (!c) break;
            c++;
        }
        if (c) c[-1] = '\n', c[0] = 0;
        ok = strncmp(text + at, line, strlen(line)) == 0;
        at += strlen(line);
    }
    fclose(f);
    return ok && text[at] == 0;
}

static int same_bytes(const char *a, const char *b) {
    size_t na, nb;
    unsigned char *x = t_slurp(a, &na), *y = t_slurp(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* `index -o` replaced whatever OUT was: a device became a regular file, a FIFO was replaced, and
   `index -o same.rec same.rec` put the index over the dataset. Only a regular file or nothing is
   replaced (through a temporary file); a FIFO or device is written in place; the input never. */
static void test_cli_index_targets(char *out, size_t cap) {
    char args[1024], dev[256], fifo[256], rec[256];
    struct stat st;
    snprintf(rec, sizeof rec, "%s", tmp_path("self.rec"));
    CHECK(same_bytes(COMPAT "a.rec", COMPAT "a.rec")); /* readable */
    snprintf(args, sizeof args, "cp " COMPAT "a.rec %s", rec);
    CHECK(system(args) == 0);
    snprintf(args, sizeof args, "index -o %s %s", rec, rec);
    CHECK_EQ_INT(run_cli(args, out, cap), 2); /* bad usage, as every command's output named as an input */
    CHECK(strstr(out, "self.rec: is the input ") != NULL);
    CHECK(same_bytes(rec, COMPAT "a.rec"));
    snprintf(dev, sizeof dev, "%s", tmp_path("full"));
    remove(dev);
    snprintf(args, sizeof args, "cp -a /dev/full %s 2>/dev/null || mknod %s c 1 7", dev, dev);
    if (system(args) == 0 && stat(dev, &st) == 0 && S_ISCHR(st.st_mode)) {
        snprintf(args, sizeof args, "index -o %s " COMPAT "a.rec", dev);
        CHECK_EQ_INT(run_cli(args, out, cap), 1); /* written in place: no space left on the device */
        CHECK(stat(dev, &st) == 0 && S_ISCHR(st.st_mode));
    } else {
        printf("skip: cannot copy /dev/full here\n");
    }
    remove(dev);
    snprintf(fifo, sizeof fifo, "%s", tmp_path("fifo"));
    remove(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    snprintf(args, sizeof args, "cat %s > %s.out & %s index -o %s " COMPAT "a.rec >/dev/null; s=$?; wait; exit $s", fifo,
             fifo, getenv("RECIO"), fifo);
    CHECK_EQ_INT(WEXITSTATUS(system(args)), 0);
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    snprintf(args, sizeof args, "%s.out", fifo);
    CHECK(same_bytes(args, COMPAT "a.rec.idx"));
    remove(fifo);
    remove(args);
}

static void test_cli(void) {
    static char out[1 << 20];
    if (!getenv("RECIO")) {
        printf("skip: RECIO not set (run through make test)\n");
        return;
    }
    CHECK_EQ_INT(run_cli("dump " COMPAT "a.rec", out, sizeof out), 0);
    CHECK(file_equals_columns(out, COMPAT "a.rec.tsv", 3));
    CHECK_EQ_INT(run_cli("dump " COMPAT "c.rec", out, sizeof out), 0);
    CHECK(file_equals_columns(out, COMPAT "c.rec.tsv", 3));
    CHECK_EQ_INT(run_cli("dump --header " COMPAT "images.rec | cut -f1,4-8", out, sizeof out), 0);
    CHECK(file_equals_columns(out, COMPAT "images.rec.tsv", 6));
    CHECK_EQ_INT(run_cli("verify " COMPAT "a.rec " COMPAT "b.rec", out, sizeof out), 0);
    CHECK(strstr(out, COMPAT "b.rec: 103 records, ") != NULL);
    CHECK_EQ_INT(run_cli("verify " COMPAT "corrupt-bad-magic.rec", out, sizeof out), 1);
    CHECK(strncmp(out, "recio: " COMPAT "corrupt-bad-magic.rec: offset 156: bad magic", 57) == 0);
    CHECK_EQ_INT(run_cli("dump " COMPAT "corrupt-trunc-payload.rec", out, sizeof out), 1);
    CHECK(strstr(out, "3\t") != NULL && strstr(out, "recio: " COMPAT "corrupt-trunc-payload.rec: offset 252: ") != NULL);
    {
        char args[512];
        unsigned char *a, *b;
        size_t na, nb;
        snprintf(args, sizeof args, "index -o %s " COMPAT "a.rec", tmp_path("cli.idx"));
        CHECK_EQ_INT(run_cli(args, out, sizeof out), 0);
        a = t_slurp(tmp_path("cli.idx"), &na);
        b = t_slurp(COMPAT "a.rec.idx", &nb);
        CHECK(a && b && na == nb && memcmp(a, b, na) == 0);
        free(a);
        free(b);
    }
    CHECK_EQ_INT(run_cli("--help", out, sizeof out), 0);
    CHECK(strstr(out, "verify") != NULL);
    test_cli_index_targets(out, sizeof out);
    CHECK_EQ_INT(run_cli("dump --help", out, sizeof out), 0);
    CHECK(strstr(out, "usage: recio dump") != NULL);
    CHECK_EQ_INT(run_cli("dump --frobnicate x", out, sizeof out), 2);
    CHECK_EQ_INT(run_cli("frobnicate", out, sizeof out), 2);
    CHECK_EQ_INT(run_cli("dump /nonexistent.rec", out, sizeof out), 1);
    CHECK(strstr(out, "recio: /nonexistent.rec: offset 0: cannot open: ") != NULL);
    CHECK_EQ_INT(run_cli("verify", NULL, 0), 2);
}
#endif

/* A build without RECIO_CURL knows the remote schemes and says why it cannot open them (with it,
   tests/remote/test_remote.c reads them from real servers). */
static void test_remote_schemes_without_curl(void) {
#ifndef RECIO_CURL
    static const char *uris[] = {"s3://bucket/key.rec", "http://127.0.0.1:9/a.rec", "https://127.0.0.1:9/a.rec"};
    char msg[RECIO_ERRMSG_SIZE];
    recio_reader_desc rd;
    recio_reader *r;
    int i;
    for (i = 0; i < 3; i++) {
        memset(&rd, 0, sizeof rd);
        rd.errmsg = msg;
        CHECK(recio_reader_open_desc(&r, uris[i], &rd) == RECIO_ERR_UNSUPPORTED);
        CHECK(strstr(msg, uris[i]) == msg && strstr(msg, "this build has no remote filesystems (built without RECIO_CURL)"));
    }
#endif
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/recio-test-XXXXXX");
    if (!t_mkdtemp(tmpdir)) return perror("mkdtemp"), 1;
    RUN(test_sha256_known_answer);
    RUN(test_remote_schemes_without_curl);
    RUN(test_golden_read_all_backends);
    RUN(test_golden_write_byte_identical);
    RUN(test_golden_image_records);
    RUN(test_golden_corrupt_files);
    RUN(test_strict_damage_cases);
    RUN(test_truncations_and_bitflips_never_crash);
    RUN(test_random_roundtrip_every_backend);
    RUN(test_seek_with_written_index);
    RUN(test_writer_dev_full);
    RUN(test_writer_errors_are_sticky_and_too_big_is_harmless);
    RUN(test_writer_batch);
    RUN(test_writer_background);
    RUN(test_writer_atomic);
    RUN(test_writer_atomic_concurrent);
    RUN(test_writer_atomic_pair_rollback);
    RUN(test_writer_atomic_special_target);
    RUN(test_outfile_create_replace_refuse);
    RUN(test_outfile_undo);
    RUN(test_outfile_never_an_input);
    RUN(test_file_grows_while_read);
    RUN(test_joined_record_cap);
    RUN(test_open_errors);
    RUN(test_reader_io_ownership);
    RUN(test_writer_io_ownership);
    RUN(test_index_and_lst_parsing);
    RUN(test_lst_im2rec_lines);
    RUN(test_irecord_pack_unpack);
    RUN(test_endian_helpers_and_rng);
#ifdef HAVE_CLI
    RUN(test_cli);
#endif
    if (t_rmtree(tmpdir) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return t_done("recordio");
}
