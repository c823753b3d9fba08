/* The split against dmlc-core's own answers (tests/data/compat, see its README): every
   split-N.tsv / split-N.bounds.tsv / isplit-*.tsv line, for every rank. Payloads are checked by
   SHA-256 (tests/sha256.h, checked there against FIPS 180-2's known answers). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "sha256.h"
#include "test.h"
#include "rec_util.h"
#include <stdint.h>

#define DIR "tests/data/compat/"
#define URIS DIR "a.rec;" DIR "b.rec;" DIR "c.rec"

/* ---- expected files ---- */
typedef struct exp_rec {
    unsigned rank;
    char file[16];
    unsigned long long ordinal, length;
    char sha[65];
} exp_rec;

static exp_rec *load_split(const char *path, size_t *n) {
    FILE *f = fopen(path, "r");
    exp_rec *v = NULL;
    size_t cap = 0;
    exp_rec e;
    *n = 0;
    if (!f) return NULL;
    while (fscanf(f, "%u\t%15s\t%llu\t%llu\t%64s", &e.rank, e.file, &e.ordinal, &e.length, e.sha) == 5) {
        if (*n == cap) v = (exp_rec *)realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
        v[(*n)++] = e;
    }
    fclose(f);
    return v;
}

/* Offsets of each file's records by ordinal, from NAME.rec.tsv (dmlc's reader). */
static unsigned long long manifest[3][1024];

static void load_manifests(void) {
    const char *names[3] = {DIR "a.rec.tsv", DIR "b.rec.tsv", DIR "c.rec.tsv"};
    int i;
    for (i = 0; i < 3; i++) {
        FILE *f = fopen(names[i], "r");
        unsigned long long ord, off, len;
        char sha[65];
        CHECK(f != NULL);
        if (!f) continue;
        while (fscanf(f, "%llu\t%llu\t%llu\t%64s", &ord, &off, &len, sha) == 4)
            if (ord < 1024) manifest[i][ord] = off;
        fclose(f);
    }
}

static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Run every rank of one configuration and compare with the expected lines, in order. */
static void check_all_ranks(const char *expected, const char *uris, unsigned nsplit, const recio_split_desc *desc) {
    size_t n, at = 0;
    exp_rec *v = load_split(expected, &n);
    unsigned r;
    CHECK(v != NULL && n > 0);
    for (r = 0; r < nsplit && v; r++) {
        recio_split *s = NULL;
        recio_record rec;
        recio_split_where w;
        char msg[RECIO_ERRMSG_SIZE];
        recio_split_desc d = *desc;
        recio_err e;
        d.errmsg = msg;
        e = recio_split_open_desc(&s, uris, r, nsplit, &d);
        CHECK_EQ_INT(e, RECIO_OK);
        if (e) {
            fprintf(stderr, "  %s\n", msg);
            recio_split_close(s);
            break;
        }
        while ((e = rec_split_next_where(s, &rec, &w)) == RECIO_OK) {
            char sha[65];
            int fi = base_name(w.path)[0] - 'a';
            CHECK(at < n);
            if (at >= n) break;
            CHECK_EQ_INT(v[at].rank, r);
            CHECK(strcmp(base_name(w.path), v[at].file) == 0);
            CHECK_EQ_INT(w.ordinal, v[at].ordinal);
            CHECK_EQ_INT(rec.size, v[at].length);
            if (fi >= 0 && fi < 3 && w.ordinal < 1024) CHECK_EQ_INT(rec.offset, manifest[fi][w.ordinal]);
            t_sha256_hex(rec.data, rec.size, sha);
            CHECK(strcmp(sha, v[at].sha) == 0);
            at++;
        }
        CHECK_EQ_INT(e, RECIO_END);
        recio_split_close(s);
    }
    CHECK_EQ_INT(at, n);
    free(v);
}

static void test_sha256_known_answers(void) {
    char h[65];
    t_sha256_hex("abc", 3, h);
    CHECK(strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    t_sha256_hex("", 0, h);
    CHECK(strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    t_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h);
    CHECK(strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
}

static const unsigned byte_ns[] = {1, 2, 3, 4, 5, 7, 8, 16, 64};

static void test_byte_mode_every_rank(void) {
    recio_split_desc d;
    size_t i;
    char path[128];
    memset(&d, 0, sizeof d);
    d.ordinals = 1;
    for (i = 0; i < sizeof byte_ns / sizeof byte_ns[0]; i++) {
        snprintf(path, sizeof path, DIR "split-%u.tsv", byte_ns[i]);
        check_all_ranks(path, URIS, byte_ns[i], &d);
    }
}

static void test_byte_mode_mmap(void) {
    recio_split_desc d;
    memset(&d, 0, sizeof d);
    d.ordinals = 1;
    d.use_mmap = 1;
    check_all_ranks(DIR "split-7.tsv", URIS, 7, &d);
}

/* begin/end are dmlc's internal offsets; the count is what each rank yielded. */
static void test_byte_bounds(void) {
    size_t i;
    for (i = 0; i < sizeof byte_ns / sizeof byte_ns[0]; i++) {
        char path[128];
        unsigned r, rank, lines = 0;
        unsigned long long nb, ne, b, e, cnt;
        FILE *f;
        snprintf(path, sizeof path, DIR "split-%u.bounds.tsv", byte_ns[i]);
        f = fopen(path, "r");
        CHECK(f != NULL);
        if (!f) continue;
        for (r = 0; fscanf(f, "%u\t%llu\t%llu\t%llu\t%llu\t%llu", &rank, &nb, &ne, &b, &e, &cnt) == 6; r++) {
            recio_split *s = NULL;
            recio_record rec;
            uint64_t gb, ge, got = 0;
            CHECK_EQ_INT(rank, r);
            CHECK_EQ_INT(recio_split_open(&s, URIS, r, byte_ns[i]), RECIO_OK);
            gb = rec_split_info(s).begin, ge = rec_split_info(s).end;
            CHECK_EQ_INT(gb, b);
            CHECK_EQ_INT(ge, e);
            CHECK_EQ_INT(rec_split_info(s).total_bytes, 932440);
            CHECK(rec_split_info(s).count == RECIO_SPLIT_UNKNOWN); /* byte mode does not count at open */
            while (recio_split_next(s, &rec) == RECIO_OK) got++;
            CHECK_EQ_INT(got, cnt);
            recio_split_close(s);
            lines++;
        }
        fclose(f);
        CHECK_EQ_INT(lines, byte_ns[i]);
    }
}

/* Without desc.ordinals a part entering a file mid-way does not know the ordinals there. */
static void test_byte_ordinals_unknown_mid_file(void) {
    recio_split *s = NULL;
    recio_record rec;
    recio_split_where w;
    int unknown = 0, known = 0;
    CHECK_EQ_INT(recio_split_open(&s, URIS, 1, 3), RECIO_OK); /* split-3 rank 1: b.rec ordinal 62 */
    while (rec_split_next_where(s, &rec, &w) == RECIO_OK) {
        if (w.ordinal == RECIO_SPLIT_UNKNOWN) unknown++;
        else known++;
        CHECK_EQ_INT(w.key, 57996 + rec.offset); /* a.rec is 57,996 bytes: b.rec starts there */
    }
    CHECK_EQ_INT(unknown, 1);
    CHECK_EQ_INT(known, 0);
    recio_split_close(s);
}

static void test_indexed_global_index(void) {
    static const unsigned ns[] = {1, 2, 3, 5, 8};
    recio_split_desc d;
    size_t i;
    char path[128];
    memset(&d, 0, sizeof d);
    d.index_path = DIR "all.idx";
    for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        snprintf(path, sizeof path, DIR "isplit-%u.tsv", ns[i]);
        check_all_ranks(path, URIS, ns[i], &d);
    }
}

/* Each file's own .idx (local offsets) gives the same count-based parts as the global one. */
static void test_indexed_per_file_index(void) {
    static const unsigned ns[] = {1, 2, 3, 5, 8};
    static const unsigned fns[] = {1, 2, 3, 7};
    recio_split_desc d;
    size_t i, k;
    char path[128], uri[64];
    memset(&d, 0, sizeof d);
    d.mode = RECIO_SPLIT_INDEX;
    for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        snprintf(path, sizeof path, DIR "isplit-%u.tsv", ns[i]);
        check_all_ranks(path, URIS, ns[i], &d);
    }
    for (k = 0; k < 3; k++)
        for (i = 0; i < sizeof fns / sizeof fns[0]; i++) {
            snprintf(path, sizeof path, DIR "isplit-%c-%u.tsv", (char)('a' + k), fns[i]);
            snprintf(uri, sizeof uri, DIR "%c.rec", (char)('a' + k));
            check_all_ranks(path, uri, fns[i], &d);
        }
}

/* dmlc's indexed split reads offset[first] .. offset[next part's first]: the bounds say so. */
static void test_indexed_bounds_and_count(void) {
    recio_split *s = NULL;
    recio_split_desc d;
    uint64_t b, e;
    memset(&d, 0, sizeof d);
    d.index_path = DIR "all.idx";
    /* n = 1111, N = 8: 139 per rank, the last 138 (README); rank 7 starts at position 973 */
    CHECK_EQ_INT(recio_split_open_desc(&s, URIS, 7, 8, &d), RECIO_OK);
    CHECK_EQ_INT(rec_split_info(s).count, 138);
    b = rec_split_info(s).begin, e = rec_split_info(s).end;
    CHECK_EQ_INT(e, 932440);
    CHECK(b > 57996 + 656292); /* inside c.rec */
    recio_split_close(s);
}

int main(void) {
    load_manifests();
    RUN(test_sha256_known_answers);
    RUN(test_byte_mode_every_rank);
    RUN(test_byte_mode_mmap);
    RUN(test_byte_bounds);
    RUN(test_byte_ordinals_unknown_mid_file);
    RUN(test_indexed_global_index);
    RUN(test_indexed_per_file_index);
    RUN(test_indexed_bounds_and_count);
    return t_done("split_compat");
}
