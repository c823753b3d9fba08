/* Records whose image does not decode (issue 12 item 11): `pack --pass-through` keeps a garbled image,
   so `recio verify --decode` must find each one, `recio show` must fail on it, and the iterator must
   either stop (the default) or, with skip_bad, leave it out, counted and named. The dataset is made
   here: sample photos and two bad images (text, a PNG cut short) with MXNet image headers. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "cli_util.h"
#include <sys/wait.h>

#define T "build/test_bad_records"
#define PHOTOS "tests/data/photos/"
#define NREC 7

/* id -> image: "" for the two bad ones, made in make_dataset */
static const char *const source[NREC] = {"retina-120x90.jpg", "", "camera-gray-400x300.jpg", "",
                                         "coffee-500x333.jpg", "rocket-alpha-256x256.png", "chelsea-500x375.jpg"};
static uint64_t offset_of[NREC];
static char out_text[1 << 16];

static int put_record(recio_writer *w, uint64_t id, const unsigned char *img, size_t n) {
    unsigned char *rec = (unsigned char *)malloc(64 + n);
    float label = (float)id;
    size_t h = recio_irecord_pack_header(rec, &label, 1, id, 0);
    int ok;
    memcpy(rec + h, img, n);
    ok = recio_writer_write(w, rec, h + n) == RECIO_OK;
    free(rec);
    return ok ? 0 : -1;
}

/* Record id i: its photo, or for the bad ones text (1) and a PNG cut at 20000 of its 82165 bytes (3:
   a sound header, so the size is known, and missing pixel data). */
static int put_source(recio_writer *w, unsigned i) {
    static const char text[] = "this is not an image at all";
    char path[256];
    size_t n = 0;
    unsigned char *img;
    int bad;
    if (i == 1) return put_record(w, i, (const unsigned char *)text, sizeof text - 1);
    snprintf(path, sizeof path, PHOTOS "%s", i == 3 ? "rocket-alpha-256x256.png" : source[i]);
    img = t_slurp(path, &n);
    bad = !img || put_record(w, i, img, i == 3 ? 20000 : n);
    free(img);
    return bad ? -1 : 0;
}

/* T/bad.rec holds ids 0..6; T/good.rec the five good ones. */
static int make_dataset(const char *path, int only_good) {
    recio_writer *w;
    unsigned i;
    int bad = 0;
    if (system("mkdir -p " T) != 0 || recio_writer_open(&w, path) != RECIO_OK) return -1;
    for (i = 0; i < NREC; i++) {
        if (only_good && (i == 1 || i == 3)) continue;
        if (!only_good) offset_of[i] = recio_writer_tell(w);
        bad |= put_source(w, i);
    }
    return recio_writer_close(w) == RECIO_OK && !bad ? 0 : -1;
}

/* "recio ARGS 2>&1" into out_text; the exit status. (tests/cli_util.h) */
static int recio(const char *args) { return t_recio_capture(args, 0, out_text, sizeof out_text); }

static int has(const char *needle) { return strstr(out_text, needle) != NULL; }

static void test_verify_decode(void) {
    char want[256];
    CHECK_EQ_INT(recio("verify " T "/bad.rec"), 0); /* the RecordIO framing is sound */
    CHECK_EQ_INT(recio("verify --decode " T "/bad.rec"), 1);
    snprintf(want, sizeof want, "recio: " T "/bad.rec: offset %llu: decode: ", (unsigned long long)offset_of[1]);
    CHECK(has(want));
    snprintf(want, sizeof want, "recio: " T "/bad.rec: offset %llu: decode: ", (unsigned long long)offset_of[3]);
    CHECK(has(want));
    CHECK(has(T "/bad.rec: 7 records, ") && has(", 2 that do not decode"));
    /* each bad one named, none of the good */
    snprintf(want, sizeof want, "offset %llu:", (unsigned long long)offset_of[2]);
    CHECK(!has(want));
    CHECK_EQ_INT(recio("verify --decode " T "/good.rec"), 0);
    CHECK(has(T "/good.rec: 5 records, ") && has("every image decodes, ok"));
}

/* --skip-empty: insightface's layout (record 0 and identity records with nothing after the image
   header) verifies with them counted as 'without an image'; without it they are named as before
   and the summary says how many are empty and what passes over them. A bad image still fails. */
static void test_verify_skip_empty(void) {
    recio_writer *w = NULL;
    size_t n = 0;
    unsigned char *img = t_slurp(PHOTOS "retina-120x90.jpg", &n);
    int ok = img && recio_writer_open(&w, T "/faces.rec") == RECIO_OK;
    ok = ok && put_record(w, 0, img, 0) == 0 && put_record(w, 1, img, n) == 0 && put_record(w, 2, img, n) == 0 &&
         put_record(w, 0, img, 0) == 0 && put_record(w, 0, img, 0) == 0;
    CHECK(w && recio_writer_close(w) == RECIO_OK && ok);
    free(img);
    CHECK_EQ_INT(recio("verify --decode " T "/faces.rec"), 1);
    CHECK(has("faces.rec: offset 0: decode: empty image (0 bytes)"));
    CHECK(has("3 that do not decode (3 of them empty: --skip-empty passes over records without an image)"));
    CHECK_EQ_INT(recio("verify --decode --skip-empty " T "/faces.rec"), 0);
    CHECK(has(T "/faces.rec: 5 records, ") && has(", 3 without an image (skipped), every image decodes, ok"));
    CHECK(!has("offset 0:"));
    CHECK_EQ_INT(recio("verify --decode --skip-empty " T "/bad.rec"), 1); /* no empty image there: as before */
    CHECK(has(", 2 that do not decode\n"));
    CHECK_EQ_INT(recio("verify --skip-empty " T "/faces.rec"), 2);
    CHECK(has("--skip-empty acts with --decode"));
}

static void test_show_fails_on_bad_record(void) {
    char want[256];
    CHECK_EQ_INT(recio("show " T "/bad.rec " T "/sheet.png --tile 32"), 1);
    snprintf(want, sizeof want, T "/bad.rec: offset %llu: record id 1: ", (unsigned long long)offset_of[1]);
    CHECK(has(want));
    CHECK(has("2 of 7 records shown do not decode"));
    CHECK(has(T "/sheet.png: 7 records")); /* the sheet is still drawn, crosses and all */
    CHECK_EQ_INT(recio("show " T "/bad.rec " T "/sheet1.png --n 1 --tile 32"), 0);
}

/* ---- the iterator ---- */

typedef struct run_t {
    unsigned batches, count[16], pad[16], skipped;
    uint64_t ids[16][4], sums[16];
} run_t;

static recio_err run_epochs(const char *uris, unsigned batch, unsigned workers, int skip, unsigned epochs, run_t *r,
                            recio_iter **keep) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    recio_err e;
    unsigned ep, i;
    memset(&d, 0, sizeof d);
    memset(r, 0, sizeof *r);
    d.uris = uris;
    d.item.spec = "resize(16,16)";
    d.run.batch = batch;
    d.run.workers = workers;
    d.run.skip_bad = skip;
    d.run.checksums = 1;
    if ((e = recio_iter_open(&it, &d)) != RECIO_OK) return e;
    for (ep = 0; ep < epochs; ep++) {
        if (ep) recio_iter_reset(it);
        while ((e = recio_iter_next(it, &b)) == RECIO_OK && r->batches < 16) {
            r->count[r->batches] = b.count;
            r->pad[r->batches] = b.pad;
            for (i = 0; i < b.count + b.pad && i < 4; i++) r->ids[r->batches][i] = b.ids[i];
            r->sums[r->batches++] = recio_batch_checksum(&b, RECIO_SUM_BYTES);
            r->skipped += b.skipped;
        }
        if (e != RECIO_END) break;
    }
    if (keep) *keep = it;
    else recio_iter_close(it);
    return e;
}

/* Strict by default: the first bad record stops the epoch, named by file and offset. */
static void test_iter_strict_names_the_record(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    recio_err e;
    char want[256];
    memset(&d, 0, sizeof d);
    d.uris = T "/bad.rec";
    d.item.spec = "resize(16,16)";
    d.run.batch = 2;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_DECODE);
    snprintf(want, sizeof want, T "/bad.rec: offset %llu: decode: ", (unsigned long long)offset_of[1]);
    CHECK(strstr(recio_iter_errmsg(it), want) != NULL);
    e = recio_iter_next(it, &b);
    CHECK_EQ_INT(e, RECIO_ERR_DECODE); /* sticky */
    CHECK_EQ_INT(skipped_of(it, NULL, NULL), 0);
    recio_iter_close(it);
}

/* skip_bad: the sound records, in order, the batch padded at its end; the same bytes for every worker
   count; the two bad ones counted and named. */
static void test_iter_skip_bad(void) {
    static const uint64_t want_ids[3][3] = {{0, 2, 0}, {4, 5, 4}, {6, 0, 6}};
    static const unsigned want_count[3] = {2, 2, 1};
    run_t a, b;
    recio_iter *it = NULL;
    const recio_iter_bad *bad;
    unsigned n = 9, i, k;
    CHECK_EQ_INT(run_epochs(T "/bad.rec", 3, 0, 1, 1, &a, &it), RECIO_END);
    CHECK_EQ_INT(a.batches, 3);
    for (i = 0; i < 3 && a.batches == 3; i++) {
        CHECK_EQ_INT(a.count[i], want_count[i]);
        CHECK_EQ_INT(a.pad[i], 3 - want_count[i]);
        for (k = 0; k < 3; k++) CHECK_EQ_INT(a.ids[i][k], want_ids[i][k]);
    }
    CHECK_EQ_INT(a.skipped, 2);
    CHECK_EQ_INT(skipped_of(it, &bad, &n), 2);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK(strcmp(bad[0].file, T "/bad.rec") == 0 && bad[0].offset == offset_of[1]);
        CHECK(bad[1].offset == offset_of[3] && strncmp(bad[1].what, "decode: ", 8) == 0);
    }
    recio_iter_close(it);
#ifdef RECIO_THREADS
    CHECK_EQ_INT(run_epochs(T "/bad.rec", 3, 2, 1, 1, &b, NULL), RECIO_END);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
#endif
    /* a second epoch counts them again, names them once */
    CHECK_EQ_INT(run_epochs(T "/bad.rec", 3, 0, 1, 2, &b, &it), RECIO_END);
    CHECK_EQ_INT(skipped_of(it, &bad, &n), 4);
    CHECK_EQ_INT(n, 2);
    recio_iter_close(it);
}

/* A batch of bad records only: count 0, its items zeros, marked as padding. */
static void test_iter_skip_bad_whole_batch(void) {
    run_t a;
    unsigned i, real = 0;
    CHECK_EQ_INT(run_epochs(T "/bad.rec", 1, 0, 1, 1, &a, NULL), RECIO_END);
    CHECK_EQ_INT(a.batches, NREC);
    for (i = 0; i < a.batches; i++) real += a.count[i];
    CHECK_EQ_INT(real, NREC - 2);
    CHECK(a.count[1] == 0 && a.pad[1] == 1 && a.ids[1][0] == 0);
    CHECK(a.count[3] == 0 && a.pad[3] == 1);
    CHECK(a.count[2] == 1 && a.pad[2] == 0 && a.ids[2][0] == 2);
}

/* The item's shape comes from the first record: with skip_bad, from the first that decodes. */
static void test_iter_skip_bad_first_record(void) {
    recio_writer *w;
    run_t a;
    recio_iter_desc d;
    recio_iter *it;
    char msg[512];
    CHECK(recio_writer_open(&w, T "/badfirst.rec") == RECIO_OK);
    CHECK(put_source(w, 1) == 0 && put_source(w, 3) == 0 && put_source(w, 0) == 0 && put_source(w, 2) == 0);
    CHECK(recio_writer_close(w) == RECIO_OK);
    memset(&d, 0, sizeof d);
    d.uris = T "/badfirst.rec";
    d.item.spec = "resize(16,16)";
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_DECODE);
    CHECK(strstr(msg, "badfirst.rec: offset 0: first record: decode: ") != NULL);
    CHECK_EQ_INT(run_epochs(T "/badfirst.rec", 2, 0, 1, 1, &a, NULL), RECIO_END);
    CHECK(a.batches == 2 && a.count[0] == 0 && a.count[1] == 2 && a.ids[1][0] == 0 && a.ids[1][1] == 2);
}

static void test_cli_iter_skip_bad(void) {
    char want[256];
    CHECK_EQ_INT(recio("iter " T "/bad.rec --spec 'resize(16,16)' --batch 3"), 1);
    snprintf(want, sizeof want, "recio: " T "/bad.rec: offset %llu: decode: ", (unsigned long long)offset_of[1]);
    CHECK(has(want));
    CHECK_EQ_INT(recio("iter " T "/bad.rec --spec 'resize(16,16)' --batch 3 --skip-bad --workers 2"), 0);
    CHECK(has("0\t0\t2\t1\t0,2,0\t") && has("0\t2\t1\t2\t6,0,6\t"));
    CHECK(has("5 images in "));
    CHECK(has("recio: 2 records left out, their images do not decode"));
    CHECK(has(want));
}

int main(void) {
    if (make_dataset(T "/good.rec", 1) != 0 || make_dataset(T "/bad.rec", 0) != 0) {
        printf("cannot make " T "/bad.rec\n");
        return 1;
    }
    RUN(test_verify_decode);
    RUN(test_verify_skip_empty);
    RUN(test_show_fails_on_bad_record);
    RUN(test_iter_strict_names_the_record);
    RUN(test_iter_skip_bad);
    RUN(test_iter_skip_bad_whole_batch);
    RUN(test_iter_skip_bad_first_record);
    RUN(test_cli_iter_skip_bad);
    return t_done("bad_records");
}
