/* The iterator on real images (the sample photos, tests/data/photos) with a transform spec, and the
   `recio iter` command. Expected checksums of the center crops were computed outside recio with
   /usr/bin/python3, PIL and numpy:
     im = np.asarray(Image.open(f).convert('RGB')); h, w = im.shape[:2]
     crop = im[(h-16)//2:(h-16)//2+16, (w-16)//2:(w-16)//2+16]; FNV-1a 64 over crop.tobytes()
   for chelsea-333x500.png then rocket-alpha-256x256.png (concatenated per batch). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "iter_util.h"

#define PNG2 "build/test_iter/png2.rec"
#define PHOTOS "build/test_iter/photos.rec"
#define BAD "build/test_iter/bad-jpeg.rec"
#define SUM_CHELSEA_ROCKET 0x5948e5af8a8d6bdaull         /* batch 2 */

static const char *photos[] = {"chelsea-500x375.jpg", "coffee-500x333.jpg", "astronaut-375x500.jpg", "rocket-640x480.jpg",
                               "retina-120x90.jpg", "camera-gray-400x300.jpg", "coffee-progressive-480x360.jpg",
                               "chelsea-cmyk-300x400.jpg", "astronaut-exif-rot90-400x300.jpg", "chelsea-333x500.png",
                               "rocket-alpha-256x256.png", "hubble-1600x1200.jpg"};

/* Pack files as image records (id 1000 + i, label i); `garble`'s image is made undecodable. */
static void pack(const char *out, const char **names, unsigned n, unsigned garble) {
    mkdir("build", 0755);
    mkdir("build/test_iter", 0755);
    iu_pack_photos(out, NULL, names, n, garble);
}

static recio_iter *open_spec(const char *uris, const char *spec, unsigned batch, unsigned workers, size_t sbuf) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[512];
    memset(&d, 0, sizeof d);
    d.uris = uris;
    d.item.spec = spec;
    d.run.batch = batch;
    d.run.workers = workers;
    d.run.shuffle_buffer = sbuf;
    d.source.seed = 5;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) fprintf(stderr, "open: %s\n", msg);
    CHECK(it != NULL);
    return it;
}

static void test_center_crop_checksum(void) {
    unsigned w;
    for (w = 0; w < 3; w++) {
        recio_iter *it = open_spec(PNG2, "center_crop(16)", 2, w, 0);
        recio_batch b;
        if (!it) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        CHECK_EQ_INT(b.count, 2);
        CHECK_EQ_INT(b.item.width, 16);
        CHECK_EQ_INT(b.item.height, 16);
        CHECK_EQ_INT(b.item.channels, 3);
        CHECK_EQ_INT(b.item.dtype, RECIO_U8);
        CHECK_EQ_INT(b.item_bytes, 16 * 16 * 3);
        CHECK(iu_fnv(b.data, 2 * b.item_bytes) == SUM_CHELSEA_ROCKET);
        CHECK(recio_batch_checksum(&b, RECIO_SUM_BYTES) == SUM_CHELSEA_ROCKET); /* u8: the bytes as they are */
        CHECK(recio_batch_checksum(&b, RECIO_SUM_ITEMS) == iu_batch_checksum((const unsigned char *)b.data, 2, b.item_bytes));
        CHECK(b.sums == NULL); /* not asked for */
        CHECK(b.labels[0] == 0.0f && b.labels[1] == 1.0f);
        CHECK_EQ_INT(b.ids[1], 1001);
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END);
        recio_iter_close(it);
    }
}

/* Random augmentation: the same batches in pull mode and with 1, 2 and 4 workers. */
static void test_random_chain_same_for_every_worker_count(void) {
    static const char spec[] = "random_resized_crop(24) random_flip(0.5) color_jitter(0.4,0.4,0.4) normalize(imagenet) chw";
    iu_batch ref[16], got[16];
    size_t nref = 0;
    unsigned w;
    for (w = 0; w <= 4; w += 1 + (w == 2)) {
        recio_iter *it = open_spec(PHOTOS, spec, 5, w, 4);
        size_t n;
        if (!it) return;
        n = iu_run(it, w ? got : ref, 16, 2, NULL);
        recio_iter_close(it);
        if (!w) nref = n;
        else CHECK(n == nref && iu_same(ref, got, n));
    }
    CHECK_EQ_INT(nref, 6); /* 12 photos, batch 5, pad: 3 batches per epoch */
    CHECK(ref[0].sum != ref[3].sum);
}

static void test_broken_image_mid_epoch(void) {
    unsigned w;
    char want[128];
    snprintf(want, sizeof want, "%s: offset ", BAD);
    for (w = 0; w < 4; w += 3) {
        recio_iter *it = open_spec(BAD, "resize(16,16)", 2, w, 0);
        iu_batch got[8];
        recio_err e;
        if (!it) return;
        CHECK_EQ_INT(iu_run(it, got, 8, 1, &e), 2); /* record 5 is bad: batches {0,1} {2,3}, then the error */
        CHECK_EQ_INT(e, RECIO_ERR_DECODE);
        CHECK(strncmp(recio_iter_errmsg(it), want, strlen(want)) == 0);
        recio_iter_close(it);
    }
}

static void test_spec_errors(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    memset(&d, 0, sizeof d);
    d.uris = PNG2;
    d.item.spec = "center_crop(16) flipp";
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_SPEC);
    CHECK(it == NULL && strstr(msg, "flipp") != NULL);
    d.item.spec = "resize_short(20)"; /* no fixed size: the second image does not fit the first's shape */
    d.run.batch = 2;
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_OK);
    if (it) {
        recio_batch b;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG);
        CHECK(strstr(recio_iter_errmsg(it), "fixed-size") != NULL);
        recio_iter_close(it);
    }
}

/* The checksum reads float items as little-endian bytes on every host: 1.0f, 2.0f are
   00 00 80 3f 00 00 00 40 (IEEE 754), whatever the host's byte order. */
static void test_checksum_little_endian(void) {
    static const unsigned char le[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40};
    float v[2] = {1.0f, 2.0f};
    recio_batch b;
    memset(&b, 0, sizeof b);
    b.data = v;
    b.count = 2;
    b.item_bytes = 4;
    b.item = recio_image_wrap(NULL, 1, 1, 1, RECIO_F32, RECIO_HWC, 0);
    CHECK(recio_batch_checksum(&b, RECIO_SUM_BYTES) == iu_fnv(le, 8));
    CHECK(recio_batch_checksum(&b, RECIO_SUM_ITEMS) == iu_batch_checksum(le, 2, 4));
}

/* Items of several lane blocks plus a tail, in f32: the library's lanes (whatever kernel column
   runs them) and its word order give what the documented algorithm gives byte by byte; checksums
   the workers compute equal those read back from the batch. */
static void test_checksum_lanes_and_worker_sums(void) {
    unsigned w;
    for (w = 0; w < 3; w++) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_batch b;
        char msg[RECIO_ERRMSG_SIZE];
        recio_batch copy;
        unsigned char *le;
        size_t i, n;
        memset(&d, 0, sizeof d);
        d.uris = PNG2;
        d.item.spec = "center_crop(21,13) normalize(imagenet) chw";
        d.run.batch = 2;
        d.run.workers = w;
        d.run.checksums = 1;
        if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) fprintf(stderr, "open: %s\n", msg);
        CHECK(it != NULL);
        if (!it) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        CHECK(b.sums != NULL);
        n = (size_t)2 * b.item_bytes; /* 21*13*3 floats = 3276 bytes: 12 blocks and a tail of 204 */
        le = (unsigned char *)malloc(n);
        for (i = 0; i < n / 4; i++) recio_store_f32le(le + 4 * i, ((const float *)b.data)[i]);
        CHECK(recio_batch_checksum(&b, RECIO_SUM_ITEMS) == iu_batch_checksum(le, 2, b.item_bytes));
        CHECK(recio_batch_checksum(&b, RECIO_SUM_BYTES) == iu_fnv(le, n));
        copy = b;
        copy.sums = NULL; /* recomputed from the items */
        CHECK(recio_batch_checksum(&copy, RECIO_SUM_ITEMS) == recio_batch_checksum(&b, RECIO_SUM_ITEMS));
        CHECK(recio_checksum(b.data, b.item_bytes, 4) == iu_checksum(le, b.item_bytes));
        free(le);
        recio_iter_close(it);
    }
}

/* ---- the command ---- */

static char *run_cmd(const char *args, int *status) {
    static char out[65536];
    char cmd[1024];
    const char *recio = getenv("RECIO");
    FILE *p;
    size_t n;
    snprintf(cmd, sizeof cmd, "%s iter %s", recio ? recio : "build/recio", args);
    p = popen(cmd, "r");
    if (!p) return NULL;
    n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    *status = pclose(p);
    *status = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    return out;
}

/* The checksum the command must print for the batch of items `order` (0 chelsea, 1 rocket) centre-
   cropped to 16x16, from the test's own copy of the algorithm over the pixels pinned by
   SUM_CHELSEA_ROCKET: FNV-1a 64 of the batch's bytes, or with fast the fold of item checksums. */
static unsigned long long cli_sum_of(const char *order, int fast) {
    recio_iter *it = open_spec(PNG2, "center_crop(16)", 2, 0, 0);
    recio_batch b;
    unsigned char items[3 * 768];
    unsigned n = 0;
    uint64_t h = 0;
    if (!it) return 0;
    if (recio_iter_next(it, &b) == RECIO_OK && iu_fnv(b.data, 2 * b.item_bytes) == SUM_CHELSEA_ROCKET && b.item_bytes == 768) {
        for (; order[n]; n++) memcpy(items + 768 * n, (const unsigned char *)b.data + 768 * (order[n] - '0'), 768);
        h = fast ? iu_batch_checksum(items, n, 768) : iu_fnv(items, n * 768);
    }
    recio_iter_close(it);
    return (unsigned long long)h;
}
static unsigned long long cli_sum(const char *order) { return cli_sum_of(order, 0); }

static void test_cli_lines(void) {
    int st;
    char want[256];
    char *o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 2 2>/dev/null", &st);
    snprintf(want, sizeof want, "0\t0\t2\t0\t1000,1001\t%016llx\n", cli_sum("01"));
    CHECK(o && st == 0 && strcmp(o, want) == 0);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 3 --workers 2 --epochs 2 2>/dev/null", &st);
    snprintf(want, sizeof want, "0\t0\t2\t1\t1000,1001,1000\t%016llx\n1\t0\t2\t1\t1000,1001,1000\t%016llx\n", cli_sum("010"),
             cli_sum("010"));
    CHECK(o && st == 0 && strcmp(o, want) == 0);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 3 --workers 2 --checksum fast 2>/dev/null", &st);
    snprintf(want, sizeof want, "0\t0\t2\t1\t1000,1001,1000\t%016llx\n", cli_sum_of("010", 1));
    CHECK(o && st == 0 && strcmp(o, want) == 0);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 2 --no-checksum 2>/dev/null", &st);
    CHECK(o && st == 0 && strcmp(o, "0\t0\t2\t0\t1000,1001\t-\n") == 0);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 3 --last-batch discard 2>&1 >/dev/null", &st);
    CHECK(o && st == 0 && strstr(o, "0 images in ") == o);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --batch 2 2>&1 >/dev/null", &st);
    CHECK(o && strstr(o, "2 images in ") == o && strstr(o, " img/s\n") != NULL);
}

static void test_cli_same_for_every_worker_count(void) {
    static char ref[65536];
    unsigned w;
    for (w = 0; w <= 3; w++) {
        char args[512];
        int st;
        char *o;
        snprintf(args, sizeof args, PHOTOS " --spec 'random_resized_crop(20) random_flip(0.5)' --batch 4 --workers %u "
                 "--seed 9 --epochs 2 --shuffle-buffer 5 --last-batch roll_over 2>/dev/null", w);
        o = run_cmd(args, &st);
        CHECK(o && st == 0);
        if (!o) return;
        if (!w) strcpy(ref, o);
        else CHECK(strcmp(ref, o) == 0);
    }
    CHECK(strlen(ref) > 100);
}

/* Two ranks of two parts: together every photo once (ids 1000..1011), each in file order. */
static void test_cli_parts(void) {
    unsigned seen[12], r, i;
    memset(seen, 0, sizeof seen);
    for (r = 0; r < 2; r++) {
        char args[256], *line;
        int st;
        unsigned prev = 0;
        snprintf(args, sizeof args, PHOTOS " --spec 'resize(8,8)' --batch 1 --nsplit 2 --rank %u 2>/dev/null", r);
        line = run_cmd(args, &st);
        CHECK(line && st == 0);
        for (; line && *line; line = strchr(line, '\n') + 1) {
            unsigned long long ep, b, count, pad, id;
            if (sscanf(line, "%llu\t%llu\t%llu\t%llu\t%llu", &ep, &b, &count, &pad, &id) != 5 || id < 1000 || id > 1011) {
                CHECK(0);
                break;
            }
            CHECK(id >= prev);
            prev = (unsigned)id;
            seen[id - 1000]++;
        }
    }
    for (i = 0; i < 12; i++) CHECK_EQ_INT(seen[i], 1);
}

static void test_cli_errors(void) {
    int st;
    char *o = run_cmd(BAD " --spec 'resize(8,8)' --batch 2 --workers 2 2>&1 >/dev/null", &st);
    CHECK(o && st == 1 && strncmp(o, "recio: " BAD ": offset ", strlen("recio: " BAD ": offset ")) == 0);
    o = run_cmd(PNG2 " --batch 2 2>&1", &st);
    CHECK(st == 2);
    o = run_cmd(PNG2 " --spec 'center_crop(16)' --last-batch maybe 2>&1", &st);
    CHECK(st == 2);
    o = run_cmd(PNG2 " --spec 'crop(' 2>&1", &st);
    CHECK(o && st == 2 && strncmp(o, "recio: ", 7) == 0);
    o = run_cmd("--help", &st);
    CHECK(o && st == 0 && strstr(o, "example: recio iter") != NULL);
}

int main(void) {
    static const char *png2[] = {"chelsea-333x500.png", "rocket-alpha-256x256.png"};
    pack(PNG2, png2, 2, 99);
    pack(PHOTOS, photos, 12, 99);
    pack(BAD, photos, 8, 5);
    RUN(test_center_crop_checksum);
    RUN(test_random_chain_same_for_every_worker_count);
    RUN(test_broken_image_mid_epoch);
    RUN(test_spec_errors);
    RUN(test_checksum_little_endian);
    RUN(test_checksum_lanes_and_worker_sums);
    RUN(test_cli_lines);
    RUN(test_cli_same_for_every_worker_count);
    RUN(test_cli_parts);
    RUN(test_cli_errors);
    return t_done("iter_images");
}
