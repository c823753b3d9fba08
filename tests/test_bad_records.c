/* Records whose image does not decode (issue 12 item 11): `pack --pass-through` keeps a garbled image,
   so `recio verify --decode` must find each one, `recio show` must fail on it, and the iterator must
   either stop (the default) or, with skip_bad, leave it out, counted and named. The dataset is made
   here: sample photos and two bad images (text, a PNG cut short) with MXNet image headers. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
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

/* "recio ARGS 2>&1" into out_text; the exit status. */
static int recio(const char *args) {
    char cmd[2048];
    const char *exe = getenv("RECIO");
    FILE *p;
    size_t n;
    int st;
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", exe && *exe ? exe : "build/recio", args);
    if (!(p = popen(cmd, "r"))) return -1;
    n = fread(out_text, 1, sizeof out_text - 1, p);
    out_text[n] = 0;
    st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

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

static void test_show_fails_on_bad_record(void) {
    char want[256];
    CHECK_EQ_INT(recio("show " T "/bad.rec " T "/sheet.png --tile 32"), 1);
    snprintf(want, sizeof want, T "/bad.rec: offset %llu: record id 1: ", (unsigned long long)offset_of[1]);
    CHECK(has(want));
    CHECK(has("2 of 7 records shown do not decode"));
    CHECK(has(T "/sheet.png: 7 records")); /* the sheet is still drawn, crosses and all */
    CHECK_EQ_INT(recio("show " T "/bad.rec " T "/sheet1.png --n 1 --tile 32"), 0);
}

int main(void) {
    if (make_dataset(T "/good.rec", 1) != 0 || make_dataset(T "/bad.rec", 0) != 0) {
        printf("cannot make " T "/bad.rec\n");
        return 1;
    }
    RUN(test_verify_decode);
    RUN(test_show_fails_on_bad_record);
    return t_done("bad_records");
}
