/* Limits with safe defaults, checked before allocating, and messages that say what is wrong (issue
   12): ops whose output would pass RECIO_MAX_PIXELS (pad(30000) asked for 8 GB, resize(30000,30000)
   for 2.9 GB) are refused by their shape rule, in the executor, the JPEG window planner and the
   scratch walk alike; a batch tensor past RECIO_MAX_BATCH_BYTES is refused when the iterator opens;
   an op that needs u8 pixels after chw says so (it said "not supported in this build"); an empty
   image, --nsplit 4294967297 and a Git LFS pointer are named as what they are. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "cli_util.h"
#include <sys/wait.h>

#define T "build/test_limits"
#define PHOTO "tests/data/photos/retina-120x90.jpg"

static char out_text[1 << 14];

/* "recio ARGS 2>&1" into out_text; the exit status. (tests/cli_util.h) */
static int recio(const char *args) { return t_recio_capture(args, 60, out_text, sizeof out_text); }

static int has(const char *s, const char *needle) {
    if (strstr(s, needle)) return 1;
    fprintf(stderr, "  '%s' does not say '%s'\n", s, needle);
    return 0;
}

/* spec on the photo: the code, and the message of the encoded path in msg. */
static recio_err run(const char *spec, char *msg, size_t cap) {
    size_t n = 0;
    unsigned char *b = t_slurp(PHOTO, &n);
    recio_transform *t = NULL;
    recio_image img = {0}, out = {0};
    recio_err e = RECIO_ERR_ARG, e2;
    msg[0] = 0;
    if (b && recio_transform_parse(&t, spec) == RECIO_OK && recio_image_decode(&img, b, n, 3) == RECIO_OK) {
        e = recio_transform_apply(t, &img, &out, 1);
        if (e == RECIO_OK) recio_image_free(&out);
        e2 = t_apply_encoded(t, b, n, &out, 1, NULL, msg, cap);
        if (e2 == RECIO_OK) recio_image_free(&out);
        if (e2 != e) fprintf(stderr, "  %s: apply %d, apply_encoded %d\n", spec, e, e2);
        CHECK(e2 == e);
    }
    recio_image_free(&img);
    recio_transform_free(t);
    free(b);
    return e;
}

static void test_op_outputs(void) {
    static const char *big[] = {"pad(30000)", "resize(30000,30000)", "resize_short(20000)", "random_resized_crop(20000)",
                                "center_crop(100,80) resize(17000,17000)", "random_apply(1, pad(9000))"};
    char msg[256];
    recio_transform *t = NULL;
    recio_image shape;
    size_t i;
    for (i = 0; i < sizeof big / sizeof big[0]; i++) {
        CHECK_EQ_INT(run(big[i], msg, sizeof msg), RECIO_ERR_LIMIT);
        CHECK(has(msg, "more than RECIO_MAX_PIXELS"));
        CHECK(recio_transform_parse(&t, big[i]) == RECIO_OK); /* the scratch walk agrees */
        CHECK(t_output_shape(t, 120, 90, 3, &shape) != RECIO_OK);
        recio_transform_free(t);
    }
    run("pad(30000)", msg, sizeof msg);
    CHECK(has(msg, "transform: pad would make a 60120x60090 image"));
    run("resize(30000,30000)", msg, sizeof msg);
    CHECK(has(msg, "transform: resize would make a 30000x30000 image"));
    CHECK_EQ_INT(run("pad(100) resize(64,64)", msg, sizeof msg), RECIO_OK);
    CHECK_EQ_INT(run("chw resize(10,10)", msg, sizeof msg), RECIO_ERR_UNSUPPORTED);
    CHECK(has(msg, "resize needs u8 HWC pixels"));
    CHECK_EQ_INT(run("normalize(imagenet) rotate(10)", msg, sizeof msg), RECIO_ERR_UNSUPPORTED);
    CHECK(has(msg, "rotate needs u8 HWC pixels"));
    CHECK_EQ_INT(recio("apply --spec 'chw resize(10,10)' " PHOTO " " T "/x.f32"), 1);
    CHECK(has(out_text, "resize needs u8 HWC pixels") && !strstr(out_text, "not supported in this build"));
    CHECK_EQ_INT(recio("apply --spec 'pad(30000)' " PHOTO " " T "/x.png"), 1);
    CHECK(has(out_text, "pad would make a 60120x60090 image, more than RECIO_MAX_PIXELS"));
}

static int put_records(const char *path, const unsigned char *img, size_t n, int count) {
    recio_writer *w = NULL;
    unsigned char *rec = (unsigned char *)malloc(64 + n);
    int i, bad = recio_writer_open(&w, path) != RECIO_OK;
    for (i = 0; i < count && !bad; i++) {
        float label = (float)i;
        size_t h = recio_irecord_pack_header(rec, &label, 1, (uint64_t)i, 0);
        memcpy(rec + h, img, n);
        bad |= recio_writer_write(w, rec, h + n) != RECIO_OK;
    }
    free(rec);
    return recio_writer_close(w) == RECIO_OK && !bad ? 0 : -1;
}

static void test_batch_bytes(void) {
    size_t n = 0;
    unsigned char *b = t_slurp(PHOTO, &n);
    CHECK(b && put_records(T "/twelve.rec", b, n, 12) == 0);
    free(b);
    /* 1,000,000 items of 32x32x3 bytes: 3 GB for 12 images */
    CHECK_EQ_INT(recio("iter " T "/twelve.rec --spec 'resize(32,32)' --batch 1000000 --workers 0"), 2);
    CHECK(has(out_text, "a batch of 1000000 items of 3072 bytes is 3072000000 bytes, more than RECIO_MAX_BATCH_BYTES"));
    CHECK_EQ_INT(recio("iter " T "/twelve.rec --spec 'resize(32,32)' --batch 1000 --workers 0 --quiet"), 0);
}

/* An allocator that refuses (and remembers) anything over 64 MB: the open must refuse a batch
   whose side buffers pass RECIO_MAX_BATCH_BYTES before asking for them. */
static size_t biggest_ask;
static void *capped_alloc(size_t n, void *user) {
    (void)user;
    if (n > biggest_ask) biggest_ask = n;
    return n > ((size_t)64 << 20) ? NULL : malloc(n);
}
static void capped_free(void *p, void *user) {
    (void)user;
    free(p);
}

static recio_err open_batch(unsigned batch, unsigned num_classes, unsigned label_width, const char *spec, char *msg) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.uris = T "/twelve.rec", d.item.spec = spec, d.run.batch = batch, d.labels.width = label_width;
    d.mix.mixup_alpha = num_classes ? 0.2f : 0, d.mix.num_classes = num_classes;
    d.alloc.alloc = capped_alloc, d.alloc.free = capped_free;
    biggest_ask = 0;
    e = (d.errmsg = msg, recio_iter_open(&it, &d));
    recio_iter_close(it);
    return e;
}

/* Soft labels, labels and the rest count against RECIO_MAX_BATCH_BYTES with the tensor: 20,000,000
   classes at batch 64 asked for 4.9 GB of soft labels per slot for a 786 KB tensor. */
static void test_batch_side_buffers(void) {
    char msg[512];
    CHECK_EQ_INT(open_batch(64, 20000000, 1, "resize(32,32) float", msg), RECIO_ERR_LIMIT);
    CHECK(has(msg, "a batch of 64 items of "));
    CHECK(has(msg, " bytes each (12288 of image, 80000000 of soft labels, 4 of labels, 0 of mask, "));
    CHECK(has(msg, "is more than RECIO_MAX_BATCH_BYTES (2147483648 bytes): make the batch or num_classes smaller"));
    CHECK(biggest_ask <= ((size_t)64 << 20));
    /* 65536 labels an item at batch 16384: 4 GiB of labels for 3-byte items */
    CHECK_EQ_INT(open_batch(16384, 0, 65536, "resize(1,1)", msg), RECIO_ERR_LIMIT);
    CHECK(has(msg, "(3 of image, 0 of soft labels, 262144 of labels, 0 of mask, "));
    CHECK(has(msg, "make the batch or label_width smaller"));
    CHECK(biggest_ask <= ((size_t)64 << 20));
    /* what fits opens */
    CHECK_EQ_INT(open_batch(64, 1000, 1, "resize(32,32) float", msg), RECIO_OK);
}

static void test_messages(void) {
    static const char lfs[] = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
    recio_image img = {0};
    char msg[256];
    FILE *f;
    CHECK_EQ_INT(t_decode_ex(&img, "", 0, 3, msg, sizeof msg), RECIO_ERR_DECODE);
    CHECK(has(msg, "decode: empty image (0 bytes)"));
    CHECK(put_records(T "/empty.rec", (const unsigned char *)"", 0, 1) == 0);
    CHECK_EQ_INT(recio("verify --decode " T "/empty.rec"), 1);
    CHECK(has(out_text, "empty image (0 bytes)"));
    CHECK_EQ_INT(recio("split --nsplit 4294967297 --rank 0 " T "/empty.rec"), 2);
    CHECK(has(out_text, "--nsplit must be from 1 to 4294967295, not 4294967297"));
    CHECK_EQ_INT(recio("iter " T "/empty.rec --spec flip --batch 1 --nsplit 4294967297"), 2);
    CHECK(has(out_text, "bad value '4294967297' for --nsplit: a whole number from 1 to"));
    f = fopen(T "/lfs.rec", "wb");
    CHECK(f && fwrite(lfs, 1, sizeof lfs - 1, f) == sizeof lfs - 1);
    if (f) fclose(f);
    CHECK_EQ_INT(recio("verify " T "/lfs.rec"), 1);
    CHECK(has(out_text, "offset 0: bad magic 0x73726576: this is a Git LFS pointer"));
}

int main(void) {
    CHECK(system("rm -rf " T " && mkdir -p " T) == 0);
    RUN(test_op_outputs);
    RUN(test_batch_bytes);
    RUN(test_batch_side_buffers);
    RUN(test_messages);
    return t_done("test_limits");
}
