/* The iterator on detection and segmentation records: with a spec, each record's boxes (MXNet's
   detection labels) and its label mask move with the pixels, the boxes into the item's label row
   (dropped ones gone, the row padded), the mask into batch.masks. Expected boxes and masks are worked
   out by hand for flips, crops, resizes and pads of a 64x32 scene, on PNG records and on JPEG ones
   (whose crops the decoder plans); a random chain must give, item by item, what the eager
   recio_transform_apply_desc gives for the item's seed (test_boxes checks that path against its
   rectangle model); 0 and 2 workers give the same bytes. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "tmpdir.h"
#include "image_write.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 64
#define H 32
#define LW 24 /* label_width: [4, 5, W, H] and up to 4 objects */

static char dir[64], rec_path[128];

/* Three objects: class, xmin, ymin, xmax, ymax (normalised). The third lies in the right quarter. */
static const float objs[3][5] = {{1, 0.25f, 0.25f, 0.5f, 0.75f}, {2, 0.0f, 0.0f, 0.125f, 0.25f}, {3, 0.8125f, 0.5f, 1.0f, 1.0f}};

/* Left half red, right half blue; its mask: left 1, right 2. */
static void scene(unsigned char *rgb, unsigned char *mask) {
    int x, y;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            unsigned char *p = rgb + 3 * (y * W + x);
            p[0] = x < W / 2 ? 220 : 20, p[1] = 30, p[2] = x < W / 2 ? 20 : 220;
            mask[y * W + x] = x < W / 2 ? 1 : 2;
        }
}

static void put_record(recio_writer *w, const t_mem_out *img, const t_mem_out *mask, uint64_t id) {
    float labels[4 + 15] = {4, 5, W, H};
    unsigned char *r = (unsigned char *)malloc(64 + sizeof labels + (size_t)img->n + (size_t)(mask ? mask->n : 0) + 8);
    size_t n;
    memcpy(labels + 4, objs, sizeof objs);
    n = recio_irecord_pack_header(r, labels, 4 + 15, id, 0);
    memcpy(r + n, img->b, (size_t)img->n), n += (size_t)img->n;
    if (mask) {
        memcpy(r + n, mask->b, (size_t)mask->n), n += (size_t)mask->n;
        n += recio_irecord_mask_tail(r + n, (size_t)mask->n);
    }
    CHECK(recio_writer_write(w, r, n) == RECIO_OK);
    free(r);
}

/* 6 records of the scene (PNG, or JPEG), each with its mask; the last without one when `unmasked`. */
static void make_rec(int jpeg, int unmasked) {
    static unsigned char rgb[W * H * 3], mask[W * H];
    static t_mem_out im, m;
    recio_writer *w;
    uint64_t i;
    scene(rgb, mask);
    im.n = m.n = 0;
    if (jpeg) { /* PIL's JPEG of the same scene (stb_image_write's JPEG writer trips UBSan's shift check) */
        size_t n = 0;
        unsigned char *j = t_slurp("tests/data/image/halves-64x32.jpg", &n);
        CHECK(j != NULL && n <= sizeof im.b);
        if (j && n <= sizeof im.b) memcpy(im.b, j, n), im.n = (int)n;
        free(j);
    } else {
        CHECK(stbi_write_png_to_func(t_to_mem, &im, W, H, 3, rgb, W * 3) != 0);
    }
    CHECK(stbi_write_png_to_func(t_to_mem, &m, W, H, 1, mask, W) != 0);
    CHECK(im.n <= (int)sizeof im.b && m.n <= (int)sizeof m.b);
    CHECK(recio_writer_open(&w, rec_path) == RECIO_OK);
    for (i = 0; i < 6; i++) put_record(w, &im, unmasked && i == 5 ? NULL : &m, i);
    CHECK(recio_writer_close(w) == RECIO_OK);
}

static recio_iter_desc desc_for(const char *spec, unsigned workers) {
    recio_iter_desc d;
    memset(&d, 0, sizeof d);
    d.uris = rec_path;
    d.item.spec = spec;
    d.run.batch = 3;
    d.labels.width = LW;
    d.labels.detection = 1;
    d.labels.masks = 1;
    d.run.workers = workers;
    d.source.seed = 7;
    return d;
}

static int near(float a, float b) { return fabsf(a - b) < 1e-5f; }

/* Every item's label row is [4, 5, W, H, want objects..., -1...] and its object count n. */
static int rows_are(const recio_batch *b, const float (*want)[5], unsigned n) {
    unsigned i, k, l;
    for (i = 0; i < b->count; i++) {
        const float *row = b->labels + (size_t)i * LW;
        if (b->objects[i] != n || row[0] != 4 || row[1] != 5 || row[2] != W || row[3] != H) return 0;
        for (k = 0; k < n; k++)
            for (l = 0; l < 5; l++)
                if (!near(row[4 + 5 * k + l], want[k][l])) return printf("  item %u object %u value %u: %g, want %g\n", i, k, l, row[4 + 5 * k + l], want[k][l]), 0;
        for (l = 4 + 5 * n; l < LW; l++)
            if (row[l] != -1) return 0;
    }
    return 1;
}

/* Every item's mask: label `left` in columns [0, split), `right` from split on, `border` pixels of
   `fill` all round. */
static int masks_are(const recio_batch *b, int split, int left, int right, int border, int fill) {
    unsigned i;
    int x, y, w = b->item.width, h = b->item.height;
    for (i = 0; i < b->batch; i++)
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++) {
                int in = x >= border && x < w - border && y >= border && y < h - border;
                int want = !in ? fill : x < split ? left : right, got = b->masks[(size_t)i * w * h + (size_t)y * w + x];
                if (got != want) return printf("  item %u mask (%d,%d): %d, want %d\n", i, x, y, got, want), 0;
            }
    return 1;
}

/* One spec on both encodings and 0 and 2 workers: the rows and masks as worked out by hand. */
static void check_spec(const char *spec, const float (*want)[5], unsigned n, int split, int left, int right, int border, int fill,
                       int mask_fill) {
    int jpeg;
    unsigned workers;
    for (jpeg = 0; jpeg < 2; jpeg++) {
        make_rec(jpeg, 0);
        for (workers = 0; workers <= 2; workers += 2) {
            recio_iter_desc d = desc_for(spec, workers);
            recio_iter *it = NULL;
            recio_batch b;
            int batches = 0;
            char msg[512] = "";
            d.labels.mask_fill = mask_fill;
            CHECK((d.errmsg = msg, recio_iter_open(&it, &d)) == RECIO_OK);
            if (!it) {
                printf("  %s: %s\n", spec, msg);
                continue;
            }
            while (recio_iter_next(it, &b) == RECIO_OK) {
                batches++;
                CHECK(b.masks != NULL && b.objects != NULL);
                if (!rows_are(&b, want, n)) printf("  %s (%s, %u workers): boxes\n", spec, jpeg ? "JPEG" : "PNG", workers), CHECK(0);
                if (!masks_are(&b, split, left, right, border, fill)) printf("  %s (%s, %u workers): mask\n", spec, jpeg ? "JPEG" : "PNG", workers), CHECK(0);
            }
            CHECK_EQ_INT(batches, 2);
            recio_iter_close(it);
        }
    }
}

static void test_flip_resize(void) {
    static const float want[3][5] = {{1, 0.5f, 0.25f, 0.75f, 0.75f}, {2, 0.875f, 0.0f, 1.0f, 0.25f}, {3, 0.0f, 0.5f, 0.1875f, 1.0f}};
    check_spec("flip resize(32,16) float chw", want, 3, 16, 2, 1, 0, 0, 0);
}

/* The left half: the third object's centre (x 0.906) leaves it and it is dropped. */
static void test_crop_drops(void) {
    static const float want[2][5] = {{1, 0.5f, 0.25f, 1.0f, 0.75f}, {2, 0.0f, 0.0f, 0.25f, 0.25f}};
    check_spec("crop(0,0,32,32)", want, 2, 32, 1, 1, 0, 0, 0);
}

/* The centre: x 16..48 of 64; the first box becomes x 0..0.5, the others' centres (x 4, x 58) leave. */
static void test_center_crop(void) {
    static const float want[1][5] = {{1, 0.0f, 0.25f, 0.5f, 0.75f}};
    check_spec("center_crop(32,32) float", want, 1, 16, 1, 2, 0, 0, 0);
}

/* pad(4): 72x40, the boxes shrink towards the middle; the mask border is 255, or 0 when asked. */
static void test_pad_fill(void) {
    static const float want[3][5] = {{1, 20.0f / 72, 12.0f / 40, 36.0f / 72, 28.0f / 40},
                                     {2, 4.0f / 72, 4.0f / 40, 12.0f / 72, 12.0f / 40},
                                     {3, 56.0f / 72, 20.0f / 40, 68.0f / 72, 36.0f / 40}};
    check_spec("pad(4)", want, 3, 36, 1, 2, 4, 255, 0);
    check_spec("pad(4)", want, 3, 36, 1, 2, 4, 0, RECIO_MASK_FILL_ZERO);
}

/* A random chain: each item as the eager API makes it for the item's seed. */
static void test_random_matches_eager(void) {
    const char *spec = "random_flip(0.5) random_crop(48,24) resize(24,12)";
    recio_transform *t = NULL;
    unsigned workers;
    make_rec(0, 0);
    CHECK(recio_transform_parse(&t, spec) == RECIO_OK);
    for (workers = 0; workers <= 2; workers += 2) {
        recio_iter_desc d = desc_for(spec, workers);
        recio_iter *it = NULL;
        recio_batch b;
        unsigned i, epoch, agree = 0;
        CHECK(recio_iter_open(&it, &d) == RECIO_OK);
        for (epoch = 0; it && epoch < 3; epoch++) {
            while (recio_iter_next(it, &b) == RECIO_OK) {
                for (i = 0; i < b.count; i++) {
                    recio_reader *r;
                    recio_record rec;
                    recio_irecord ir;
                    recio_image img = {0}, mask = {0}, out = {0}, mout = {0};
                    recio_apply_desc ap;
                    float boxes[15];
                    int kept = 0, k;
                    const float *row = b.labels + (size_t)i * LW;
                    memset(&ap, 0, sizeof ap);
                    CHECK(recio_reader_open(&r, rec_path) == RECIO_OK && recio_reader_seek(r, b.keys[i] & 0xffffffffffffull) == RECIO_OK &&
                          recio_reader_next(r, &rec) == RECIO_OK && recio_irecord_unpack(&ir, rec.data, rec.size) == RECIO_OK);
                    CHECK(recio_image_decode(&img, ir.image, ir.image_size, 3) == RECIO_OK);
                    CHECK(recio_image_decode(&mask, ir.mask, ir.mask_size, 1) == RECIO_OK);
                    memcpy(boxes, objs, sizeof objs);
                    ap.boxes = ap.boxes_out = boxes, ap.count = 3, ap.stride = 5, ap.count_out = &kept;
                    ap.mask = &mask, ap.mask_out = &mout;
                    CHECK(t_apply_ex(t, &img, &out, recio_seed_for(d.source.seed, b.epoch, b.keys[i]), &ap) == RECIO_OK);
                    {
                        int same = (unsigned)kept == b.objects[i] && (size_t)mout.width * mout.height == (size_t)b.item.width * b.item.height &&
                                   memcmp(mout.data, b.masks + (size_t)i * b.item.width * b.item.height, (size_t)mout.width * mout.height) == 0 &&
                                   memcmp(out.data, (unsigned char *)b.data + (size_t)i * b.item_bytes, b.item_bytes) == 0;
                        for (k = 0; same && k < 5 * kept; k++) same = near(row[4 + k], boxes[k]);
                        agree += same;
                        CHECK(same);
                    }
                    recio_image_free(&img), recio_image_free(&mask), recio_image_free(&out), recio_image_free(&mout);
                    recio_reader_close(r);
                }
            }
            recio_iter_reset(it);
        }
        CHECK_EQ_INT(agree, 18);
        recio_iter_close(it);
    }
    recio_transform_free(t);
}

/* tests/data/det/det.rec, made by recio pack --pack-label from an im2rec detection .lst: a flip moves
   each record's boxes (x -> 1 - x), different object counts pad with -1. */
static void test_real_layout_file(void) {
    static const float want[3][4 + 15] = {
        {4, 5, 120, 90, 0, 0.5f, 0.2f, 0.9f, 0.6f, 1, 0.05f, 0.1f, 0.45f, 0.9f, -1, -1, -1, -1, -1},
        {4, 5, 120, 90, 2, 0.1f, 0.2f, 0.5f, 0.6f, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
        {4, 5, 64, 48, 1, 0.25f, 0.25f, 0.75f, 0.75f, 0, 0.875f, 0, 1, 0.5f, 3, 0, 0.5f, 0.5f, 1}};
    static const unsigned objects[3] = {2, 1, 3};
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    unsigned i, l;
    memset(&d, 0, sizeof d);
    d.uris = "tests/data/det/det.rec", d.item.spec = "flip resize(32,24)", d.run.batch = 3, d.labels.width = 19, d.labels.detection = 1;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    CHECK(it && recio_iter_next(it, &b) == RECIO_OK);
    for (i = 0; it && i < 3; i++) {
        CHECK_EQ_INT(b.objects[i], objects[i]);
        for (l = 0; l < 19; l++)
            if (!near(b.labels[19 * i + l], want[i][l])) printf("  record %u label %u: %g, want %g\n", i, l, b.labels[19 * i + l], want[i][l]), CHECK(0);
    }
    recio_iter_close(it);
}

/* Records whose objects are not boxes (record 1: a NaN xmin, record 3: xmin > xmax) are refused,
   the record's offset and the object named; with skip_bad they are left out and counted, and the
   other records keep their objects (a NaN xmin used to count, and move, as one object). */
static void test_invalid_boxes(void) {
    static unsigned char rgb[W * H * 3], mask[W * H];
    static t_mem_out im;
    float labels[4 + 10] = {4, 5, W, H, 1, 0.25f, 0.25f, 0.5f, 0.75f, 2, 0.5f, 0.5f, 0.75f, 1};
    uint64_t off[5];
    recio_writer *w;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e = RECIO_OK;
    const recio_iter_bad *bad = NULL;
    unsigned nbad = 0, i, skip;
    char words[64];
    scene(rgb, mask);
    im.n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &im, W, H, 3, rgb, W * 3) != 0);
    CHECK(recio_writer_open(&w, rec_path) == RECIO_OK);
    for (i = 0; i < 5; i++) {
        unsigned char *r = (unsigned char *)malloc(64 + sizeof labels + (size_t)im.n);
        size_t n;
        labels[10] = i == 1 ? strtof("nan", NULL) : 0.5f;         /* object 1's xmin */
        labels[7] = i == 3 ? 0.1f : 0.5f, labels[5] = 0.25f;      /* object 0's xmax < xmin 0.25 */
        n = recio_irecord_pack_header(r, labels, 14, i, 0);
        memcpy(r + n, im.b, (size_t)im.n), n += (size_t)im.n;
        off[i] = recio_writer_tell(w);
        CHECK(recio_writer_write(w, r, n) == RECIO_OK);
        free(r);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
    for (skip = 0; skip < 2; skip++) {
        recio_iter_desc d = desc_for("flip", skip * 2);
        d.labels.masks = 0, d.run.batch = 5, d.run.skip_bad = (int)skip;
        CHECK(recio_iter_open(&it, &d) == RECIO_OK);
        if (!it) return;
        e = recio_iter_next(it, &b);
        if (!skip) {
            snprintf(words, sizeof words, "offset %llu: ", (unsigned long long)off[1]);
            CHECK(e == RECIO_ERR_FORMAT && strstr(recio_iter_errmsg(it), words) != NULL &&
                  strstr(recio_iter_errmsg(it), "detection labels: object 1: xmin is NaN") != NULL);
        } else {
            CHECK(e == RECIO_OK && b.count == 3 && b.skipped == 2);
            for (i = 0; e == RECIO_OK && i < 3; i++) {
                const float *row = b.labels + (size_t)i * LW;
                CHECK(b.ids[i] == (i == 0 ? 0u : i == 1 ? 2u : 4u) && b.objects[i] == 2);
                CHECK(near(row[5], 0.5f) && near(row[7], 0.75f) && near(row[10], 0.25f) && near(row[12], 0.5f)); /* flipped */
            }
            CHECK(skipped_of(it, &bad, &nbad) == 2 && nbad == 2);
            CHECK(nbad == 2 && bad[0].offset == off[1] && strcmp(bad[0].what, "detection labels: object 1: xmin is NaN") == 0);
            CHECK(nbad == 2 && bad[1].offset == off[3] && strcmp(bad[1].what, "detection labels: object 0: xmin > xmax (an inverted box)") == 0);
        }
        recio_iter_close(it);
    }
}

static void test_missing_mask(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e = RECIO_OK;
    make_rec(0, 1);
    d = desc_for("flip", 0);
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    while (it && (e = recio_iter_next(it, &b)) == RECIO_OK) {}
    CHECK(e == RECIO_ERR_FORMAT);
    if (it) {
        CHECK(strstr(recio_iter_errmsg(it), "offset") != NULL && strstr(recio_iter_errmsg(it), "no label mask") != NULL);
        printf("  %s\n", recio_iter_errmsg(it));
        recio_iter_close(it);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/recio-iterdet-XXXXXX");
    CHECK(t_mkdtemp(dir) != NULL);
    snprintf(rec_path, sizeof rec_path, "%s/det.rec", dir);
    RUN(test_flip_resize);
    RUN(test_crop_drops);
    RUN(test_center_crop);
    RUN(test_pad_fill);
    RUN(test_random_matches_eager);
    RUN(test_real_layout_file);
    RUN(test_missing_mask);
    RUN(test_invalid_boxes);
    remove(rec_path);
    t_rmtree(dir);
    return t_done("iter_det");
}
