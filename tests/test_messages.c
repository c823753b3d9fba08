/* recio's own message formatter against the C library's snprintf, and the record reader's
   message for each complaint, word for word (hand-written expectations), from memory and through
   streaming hooks. A private copy of the implementation (RECIO_STATIC) reaches the formatter. */
#define RECIO_STATIC
#define RECIO_NO_IMAGE
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include <limits.h>

/* recio__fmt(cap, f, ...) must give what snprintf gives for the same format (recio's %U is
   snprintf's %llu), cut the same way: at most cap - 1 characters and a terminator. */
static void t_same(size_t cap, const char *want_full, const char *got) {
    char want[600];
    size_t n = strlen(want_full);
    if (cap == 0) return;
    if (n > cap - 1) n = cap - 1;
    memcpy(want, want_full, n);
    want[n] = 0;
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "  cap %zu: want [%s] got [%s]\n", cap, want, got);
        CHECK(0);
    }
}

static uint64_t t_u64(void) {
    static const uint64_t edge[] = {0, 1, 9, 10, 11, 99, 100, 4294967295u, 4294967296ull, 9999999999999999999ull,
                                    10000000000000000000ull, 18446744073709551615ull, 9223372036854775808ull};
    unsigned k = t_rand() % 24;
    if (k < sizeof edge / sizeof edge[0]) return edge[k];
    return ((uint64_t)t_rand() << 32 | t_rand()) >> (t_rand() % 64);
}

static void test_formatter_matches_snprintf(void) {
    static const char *const words[] = {"", "a", "name.rec", "%", "x y", "0123456789abcdefghij"};
    char got[600], want[600];
    int i;
    for (i = 0; i < 20000; i++) {
        const char *s = words[t_rand() % 6];
        int d = (int)t_rand();
        unsigned u = t_rand(), x = t_rand() >> (t_rand() % 32);
        uint64_t v = t_u64();
        size_t cap = 1 + t_rand() % 80;
        if (i % 7 == 0) d = i % 2 ? INT_MIN : INT_MAX;
        if (i % 11 == 0) u = UINT_MAX, x = 0;
        snprintf(want, sizeof want, "[%s] d=%d u=%u x=%x U=%llu 100%% end", s, d, u, x, (unsigned long long)v);
        memset(got, '#', sizeof got);
        recio__fmt(got, cap, "[%s] d=%d u=%u x=%x U=%U 100%% end", s, d, u, x, v);
        t_same(cap, want, got);
        recio__fmt(got, sizeof got, "%U", v);
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        t_same(sizeof got, want, got);
    }
    /* what snprintf leaves undefined, recio defines: NULL strings, a lone '%', unknown conversions */
    recio__fmt(got, sizeof got, "%s|%q|%", (const char *)NULL);
    CHECK(strcmp(got, "(null)|q|%") == 0);
    memset(got, '#', sizeof got);
    recio__fmt(got, 0, "abc"); /* cap 0: not a byte written */
    CHECK(got[0] == '#');
    /* the most conversions a format may hold (RECIO__FMT_ARGS), all taken in order */
    recio__fmt(got, sizeof got, "%d %u %x %U %s %d %u %x", -1, 2u, 255u, (uint64_t)4, "five", 6, 7u, 0xabcu);
    CHECK(strcmp(got, "-1 2 ff 4 five 6 7 abc") == 0);
}

/* "NAME: offset N: what", cut to RECIO_ERRMSG_SIZE - 1 characters however long NAME is. */
static void test_handle_message_prefix(void) {
    char msg[RECIO_ERRMSG_SIZE], name[700], want[1400];
    size_t len;
    for (len = 0; len < sizeof name; len += 37) {
        memset(name, 'n', len);
        name[len] = 0;
        memset(msg, '#', sizeof msg);
        recio__errf(msg, name, 18446744073709551615ull, "bad %s %u", "thing", 7u);
        snprintf(want, sizeof want, "%s: offset 18446744073709551615: bad thing 7", name);
        t_same(RECIO_ERRMSG_SIZE, want, msg);
    }
    recio__errf(msg, NULL, 0, "x");
    CHECK(strcmp(msg, "?: offset 0: x") == 0);
}

/* A stream over bytes, with or without a size hook, read in small pieces. */
typedef struct t_src {
    const unsigned char *d;
    size_t n, at;
} t_src;
static int64_t t_src_read(void *u, void *buf, size_t n) {
    t_src *s = (t_src *)u;
    if (n > s->n - s->at) n = s->n - s->at;
    if (n > 3) n = 3;
    memcpy(buf, s->d + s->at, n);
    s->at += n;
    return (int64_t)n;
}
static int64_t t_src_size(void *u) { return (int64_t)((t_src *)u)->n; }

/* Reads bytes to the end as a stream named "s" (with a size hook when sized) and, when sized, from
   memory ("<memory>"); each must end with e and the message NAME + want. */
static void t_complaint(const unsigned char *bytes, size_t n, int sized, recio_err e, const char *want) {
    recio_reader *r;
    recio_reader_desc d;
    recio_record rec;
    t_src src;
    char want_s[300];
    recio_err got;
    int mode;
    for (mode = 0; mode < 2; mode++) {
        if (mode == 0) {
            if (!sized) continue; /* memory always knows its size */
            CHECK(recio_reader_open_mem(&r, bytes, n) == RECIO_OK);
        } else {
            memset(&d, 0, sizeof d);
            src.d = bytes, src.n = n, src.at = 0;
            d.io.read = t_src_read;
            d.io.size = sized ? t_src_size : NULL;
            d.io.user = &src;
            d.name = "s";
            CHECK(recio_reader_open_desc(&r, NULL, &d) == RECIO_OK);
        }
        while ((got = recio_reader_next(r, &rec)) == RECIO_OK) continue;
        CHECK_EQ_INT(got, e);
        snprintf(want_s, sizeof want_s, "%s%s", mode == 0 ? "<memory>" : "s", want);
        if (strcmp(recio_reader_errmsg(r), e == RECIO_END ? "" : want_s) != 0) {
            fprintf(stderr, "  want [%s] got [%s]\n", e == RECIO_END ? "" : want_s, recio_reader_errmsg(r));
            CHECK(0);
        }
        CHECK_EQ_INT(recio_reader_next(r, &rec), e); /* sticky */
        recio_reader_close(r);
    }
}

/* Little-endian header bytes: magic, then cflag << 29 | len. */
static size_t t_head(unsigned char *p, uint32_t magic, unsigned cflag, uint32_t len) {
    recio_store_u32le(p, magic);
    recio_store_u32le(p + 4, (uint32_t)cflag << 29 | len);
    return 8;
}

static void test_reader_complaints_word_for_word(void) {
    unsigned char b[64];
    size_t n;
    memset(b, 0, sizeof b);
    t_complaint(b, 0, 1, RECIO_END, "");
    t_complaint(b, 5, 1, RECIO_ERR_CORRUPT, ": offset 0: truncated header: 5 bytes before end of file");
    memcpy(b, "\x01\x02\x03\x04\0\0\0\0", 8);
    t_complaint(b, 8, 1, RECIO_ERR_CORRUPT, ": offset 0: bad magic 0x4030201 (expected 0xced7230a)");
    memcpy(b, "version https://git-lfs.github.com/spec/v1\n", 43);
    t_complaint(b, 43, 1, RECIO_ERR_CORRUPT,
                ": offset 0: bad magic 0x73726576: this is a Git LFS pointer (text), not the data: fetch it with 'git lfs pull'");
    n = t_head(b, RECIO_MAGIC, 0, 1) + 4; /* one good record of 1 byte, then the complaint at 12 */
    memcpy(b + n, "version ", 8);           /* "version " past offset 0 is plain bad magic */
    t_complaint(b, n + 8, 1, RECIO_ERR_CORRUPT, ": offset 12: bad magic 0x73726576 (expected 0xced7230a)");
    t_head(b, RECIO_MAGIC, 5, 0);
    t_complaint(b, 8, 1, RECIO_ERR_CORRUPT, ": offset 0: invalid cflag 5");
    t_head(b, RECIO_MAGIC, 2, 0);
    t_complaint(b, 8, 1, RECIO_ERR_CORRUPT, ": offset 0: continuation part (cflag 2) without a first part");
    n = t_head(b, RECIO_MAGIC, 1, 4) + 4;
    t_complaint(b, n, 1, RECIO_ERR_CORRUPT, ": offset 0: multi-part record ends at end of file without its last part");
    n += t_head(b + n, RECIO_MAGIC, 0, 4);
    t_complaint(b, n + 4, 1, RECIO_ERR_CORRUPT,
                ": offset 0: multi-part record broken: part at offset 12 has cflag 0, expected 2 or 3");
    t_head(b, RECIO_MAGIC, 0, 100);
    t_complaint(b, 16, 1, RECIO_ERR_CORRUPT, ": offset 0: length 100 runs past end of file (size 16)");
    t_complaint(b, 16, 0, RECIO_ERR_CORRUPT, ": offset 0: truncated: length 100 runs past end of file");
}

/* An allocator that refuses any block over `limit` bytes once `strict` is set (after the open). */
typedef struct t_tight {
    size_t limit;
    int strict;
} t_tight;
static void *t_tight_alloc(size_t n, void *u) { return ((t_tight *)u)->strict && n > ((t_tight *)u)->limit ? NULL : malloc(n); }
static void t_tight_free(void *p, void *u) { (void)u, free(p); }

/* A multi-part record whose join buffer cannot grow is out of memory (not damage), word for word,
   and stays so; the first part's 4096-byte buffer is given, the 8192 the second part needs is not. */
static void test_join_out_of_memory(void) {
    static unsigned char b[8 + 8 + 8 + 5000];
    recio_reader *r;
    recio_reader_desc d;
    recio_record rec;
    t_src src;
    t_tight tight = {4096, 0};
    size_t n = t_head(b, RECIO_MAGIC, 1, 8); /* joined: "abcdefgh", magic, 5000 bytes = 5012 */
    memcpy(b + n, "abcdefgh", 8);
    n += 8;
    n += t_head(b + n, RECIO_MAGIC, 3, 5000);
    memset(b + n, 'z', 5000);
    n += 5000;
    memset(&d, 0, sizeof d);
    src.d = b, src.n = n, src.at = 0;
    d.io.read = t_src_read;
    d.io.user = &src;
    d.name = "s";
    d.alloc.alloc = t_tight_alloc;
    d.alloc.free = t_tight_free;
    d.alloc.user = &tight;
    CHECK(recio_reader_open_desc(&r, NULL, &d) == RECIO_OK);
    tight.strict = 1;
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_ERR_NOMEM);
    CHECK(strcmp(recio_reader_errmsg(r), "s: offset 0: cannot allocate 8192 bytes for a multi-part record") == 0);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_ERR_NOMEM); /* sticky */
    recio_reader_close(r);
    tight.strict = 0; /* the same bytes read whole when the memory is there */
    src.at = 0;
    CHECK(recio_reader_open_desc(&r, NULL, &d) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_OK);
    CHECK(rec.size == 5012 && memcmp(rec.data, "abcdefgh\x0a\x23\xd7\xcezz", 14) == 0);
    CHECK(rec.size == 5012 && ((const unsigned char *)rec.data)[5011] == 'z');
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_END);
    recio_reader_close(r);
}

/* A payload that starts with the magic word: an empty first part, then the rest (dmlc-core writes
   it so); the join starts from nothing (make sanitize once caught a copy from the NULL buffer). */
static void test_empty_first_part(void) {
    unsigned char b[32];
    recio_reader *r;
    recio_record rec;
    size_t n = t_head(b, RECIO_MAGIC, 1, 0);
    n += t_head(b + n, RECIO_MAGIC, 3, 4);
    memcpy(b + n, "tail", 4);
    n += 4;
    CHECK(recio_reader_open_mem(&r, b, n) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_OK);
    CHECK(rec.size == 8 && memcmp(rec.data, "\x0a\x23\xd7\xcetail", 8) == 0);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_END);
    recio_reader_close(r);
}

/* An empty buffer given as NULL is still memory: the end at once, and a seek past it says so. */
static void test_empty_null_buffer_is_memory(void) {
    recio_reader *r;
    recio_record rec;
    CHECK(recio_reader_open_mem(&r, NULL, 0) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_END);
    CHECK_EQ_INT(recio_reader_seek(r, 0), RECIO_OK);
    CHECK_EQ_INT(recio_reader_seek(r, 4), RECIO_ERR_ARG);
    CHECK(strcmp(recio_reader_errmsg(r), "<memory>: offset 4: seek past end of file (size 0)") == 0);
    recio_reader_close(r);
}

int main(void) {
    RUN(test_formatter_matches_snprintf);
    RUN(test_handle_message_prefix);
    RUN(test_reader_complaints_word_for_word);
    RUN(test_join_out_of_memory);
    RUN(test_empty_null_buffer_is_memory);
    RUN(test_empty_first_part);
    printf("messages: %d passed, %d failed\n", t_passed, t_failed);
    return t_failed != 0;
}
