/* The iterator's ImageRecordIter options (issue 14) and detection labels (issue 16): label_width
   with a pad value and the real counts, label_strict, label_detection, seed_aug, index_path, the
   chunk shuffle, use_mmap, equalize, path_imglist and mean_img, in pull mode and with 2 workers.
   Expected labels, seeds and pixels are written out by hand here from how the dataset is made. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "iter_util.h"
#ifndef _WIN32
#include "cli_util.h"
#endif

#define DIR "build/test_iter_opts"
#define LABELS DIR "/labels.rec"
#define DET DIR "/det.rec"
#define PHOTOS DIR "/photos.rec"

#define IMG "tests/data/photos/retina-120x90.jpg"

/* Record i of labels.rec (id 100+i): nlab[i] labels, label j = 10 i + j; image: a 120x90 JPEG. */
static const unsigned nlab[8] = {1, 2, 3, 4, 5, 6, 0, 3};
static unsigned workers; /* 0, then 2 */
static size_t img_size;

/* Offset of record i in labels.rec: each takes 8 + round4(24 + 4 n + image) bytes, n = 0 for one
   label (it sits in the header). */
static unsigned long long label_offset(unsigned i) {
    unsigned long long off = 0;
    unsigned k;
    for (k = 0; k < i; k++) off += 8 + ((24 + 4 * (nlab[k] == 1 ? 0 : nlab[k]) + img_size + 3) & ~(size_t)3);
    return off;
}


static void write_records(const char *path, const float *const *labels, const unsigned *n, unsigned count, unsigned id0) {
    recio_writer *w = NULL;
    recio_writer_desc wd;
    unsigned char *buf, *img = t_slurp(IMG, &img_size);
    char idx[256];
    unsigned i;
    if (!img || !(buf = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + 4 * 64 + img_size))) exit(1);
    memset(&wd, 0, sizeof wd);
    snprintf(idx, sizeof idx, "%s.idx", path);
    wd.index_path = idx;
    if (recio_writer_open_desc(&w, path, &wd) != RECIO_OK) exit(1);
    for (i = 0; i < count; i++) {
        size_t h = recio_irecord_pack_header(buf, labels[i], n[i], id0 + i, 0);
        memcpy(buf + h, img, img_size);
        if (recio_writer_write(w, buf, h + img_size) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
    free(buf), free(img);
}

static void make_labels(void) {
    static float lab[8][6];
    const float *p[8];
    unsigned i, j;
    for (i = 0; i < 8; i++) {
        for (j = 0; j < 6; j++) lab[i][j] = (float)(10 * i + j);
        p[i] = lab[i];
    }
    write_records(LABELS, p, nlab, 8, 100);
}

/* det.rec (ids 200 + i): [4, 5, W, H] then k objects of 5 (k = 0, 1, 3, 2); object o = (o, .1o, .2, .3, .4) + i.
   Record 4 is [4, 5, W, H] + 7 floats: not whole objects. */
static const unsigned det_objects[4] = {0, 1, 3, 2};
static float det[5][4 + 15];
static unsigned det_n[5];

static void make_det(void) {
    const float *p[5];
    unsigned i, o;
    for (i = 0; i < 5; i++) {
        det[i][0] = 4, det[i][1] = 5, det[i][2] = 640, det[i][3] = 480;
        det_n[i] = 4;
        for (o = 0; i < 4 && o < det_objects[i]; o++) {
            float *q = &det[i][4 + 5 * o];
            q[0] = (float)o + i, q[1] = 0.1f * o + i, q[2] = 0.2f + i, q[3] = 0.3f + i, q[4] = 0.4f + i;
            det_n[i] += 5;
        }
        p[i] = det[i];
    }
    det_n[4] = 11;
    write_records(DET, p, det_n, 5, 200);
}

static void open_it(recio_iter_desc *d, const char *uris, unsigned batch) {
    iu_desc(d, uris, batch, RECIO_LAST_PAD, workers);
}

static recio_iter *must_open(const recio_iter_desc *d) {
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    recio_iter_desc with = *d;
    recio_err e;
    with.errmsg = msg;
    e = recio_iter_open(&it, &with);
    CHECK_EQ_INT(e, RECIO_OK);
    if (e) fprintf(stderr, "open: %s\n", msg);
    return it;
}

/* Record i's label j as the file holds it, or `pad` past its count (j < width). */
static float want_label(unsigned i, unsigned j, float pad) {
    unsigned n = nlab[i] ? nlab[i] : 1; /* 0 labels: the header's one label (10 i) */
    if (nlab[i] == 0) return j == 0 ? 0.0f : pad; /* packed with nlabels 0: flag 0, label 0 */
    return j < n ? (float)(10 * i + j) : pad;
}

static void check_labels(unsigned width, int set, float value) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    unsigned i, j;
    float pad = set ? value : -1.0f;
    open_it(&d, LABELS, 8);
    d.labels.width = width;
    d.labels.pad_set = set;
    d.labels.pad_value = value;
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK(b.label_counts != NULL && b.objects == NULL);
    for (i = 0; i < 8; i++) {
        CHECK_EQ_INT(b.label_counts[i], nlab[i] ? nlab[i] : 1);
        for (j = 0; j < width; j++) CHECK(b.labels[i * width + j] == want_label(i, j, pad));
    }
    recio_iter_close(it);
}

/* Width 4: records with fewer labels are padded with -1 (MXNet's label_pad_value), with more are
   cut; label_counts says which. label_pad_set with 0 gives zeros, with 7.5 gives 7.5. */
static void test_label_pad(void) {
    check_labels(4, 0, 0.0f);
    check_labels(4, 1, 0.0f);
    check_labels(6, 1, 7.5f);
    check_labels(1, 0, 0.0f);
}

/* label_strict: the first record with more labels than label_width fails, named by file and offset. */
static void test_label_strict(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    char want[128];
    open_it(&d, LABELS, 2);
    d.labels.width = 3;
    d.labels.strict = 1;
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG); /* record 3 has 4 labels */
    snprintf(want, sizeof want, "%s: offset %llu: 4 labels, more than label_width 3", LABELS, label_offset(3));
    CHECK(strstr(recio_iter_errmsg(it), want) != NULL);
    if (!strstr(recio_iter_errmsg(it), want)) fprintf(stderr, "got: %s\nwant: %s\n", recio_iter_errmsg(it), want);
    recio_iter_close(it);
}

/* Detection: label_width 16 = header 4 + 2 objects + 2. Whole objects only: the record with 3
   objects keeps 2 and counts 2 in its row (its last 2 places are padding, not half an object; its 19
   labels in label_counts show the cut); padding -1; a record that is not whole objects is an error. */
static void test_label_detection(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    unsigned i, j;
    open_it(&d, DET, 4);
    d.labels.width = 16;
    d.labels.detection = 1;
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK(b.objects != NULL);
    for (i = 0; i < 4 && b.objects; i++) {
        unsigned keep = det_objects[i] > 2 ? 4 + 10 : det_n[i];
        CHECK_EQ_INT(b.objects[i], det_objects[i] > 2 ? 2 : det_objects[i]);
        CHECK_EQ_INT(b.label_counts[i], det_n[i]);
        for (j = 0; j < 16; j++) CHECK(b.labels[16 * i + j] == (j < keep ? det[i][j] : -1.0f));
    }
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(it), "detection labels: 11 labels are not") != NULL);
    recio_iter_close(it);
    d.labels.width = 3; /* shorter than the header */
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(it), "the header has 4 floats, more than label_width 3") != NULL);
    recio_iter_close(it);
}

/* seed_aug drives the per-record seeds, seed the order: with a shuffle buffer the ids stay those
   of seed, the seeds are recio_seed_for(seed_aug, epoch, key). */
static void test_seed_aug(void) {
    recio_iter_desc d;
    recio_iter *a, *b;
    recio_batch x, y;
    unsigned i;
    open_it(&d, LABELS, 8);
    d.run.shuffle_buffer = 5;
    if (!(a = must_open(&d))) return;
    d.item.seed_aug = 77;
    if (!(b = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(a, &x), RECIO_OK);
    CHECK_EQ_INT(recio_iter_next(b, &y), RECIO_OK);
    for (i = 0; i < 8; i++) {
        const uint64_t *oa = (const uint64_t *)x.data + 4 * i, *ob = (const uint64_t *)y.data + 4 * i;
        CHECK(x.ids[i] == y.ids[i]);
        CHECK(oa[0] == recio_seed_for(42, 0, x.keys[i]));
        CHECK(ob[0] == recio_seed_for(77, 0, y.keys[i]));
    }
    recio_iter_close(a);
    recio_iter_close(b);
}

/* Whether the process maps `name` now (Linux: /proc/self/maps); -1 where that cannot be seen. */
static int mapped(const char *name) {
#ifdef __linux__
    char line[1024];
    int found = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) found |= strstr(line, name) != NULL;
    fclose(f);
    return found;
#else
    (void)name;
    return -1;
#endif
}

/* use_mmap 1 maps the files while the iterator reads them, 0 (the default) does not. */
static void test_use_mmap(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    int m;
    for (m = 0; m < 2; m++) {
        open_it(&d, DET, 2);
        d.source.use_mmap = m;
        d.labels.width = 4;
        if (!(it = must_open(&d))) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        if (mapped("test_iter_opts/det.rec") >= 0) CHECK_EQ_INT(mapped("test_iter_opts/det.rec"), m);
        else t_skip("no /proc/self/maps", 1);
        recio_iter_close(it);
    }
}

/* The ids of one epoch, batch 1. */
static unsigned epoch_ids(recio_iter_desc *d, uint64_t *ids, unsigned max) {
    recio_iter *it = must_open(d);
    recio_batch b;
    unsigned n = 0;
    if (!it) return 0;
    while (n < max && recio_iter_next(it, &b) == RECIO_OK) ids[n++] = b.ids[0];
    recio_iter_close(it);
    return n;
}

/* A global index (index_path, global offsets over 'labels.rec;det.rec') partitions by count as the
   per-file indexes do; use_mmap gives the same; a chunk shuffle yields each record once, in the
   split's order for the same options. */
static void test_index_path_chunks_mmap(void) {
    recio_iter_desc d;
    recio_split_desc sd;
    recio_split *s = NULL;
    recio_index ia, ib;
    uint64_t want[16], got[16], base = 0;
    unsigned n, i, seen = 0;
    (void)n;
    FILE *f;
    memset(&ia, 0, sizeof ia), memset(&ib, 0, sizeof ib);
    CHECK_EQ_INT(recio_index_load(&ia, LABELS ".idx", NULL), RECIO_OK);
    CHECK_EQ_INT(recio_index_load(&ib, DET ".idx", NULL), RECIO_OK);
    f = fopen(DIR "/all.idx", "w");
    for (i = 1; f && i < ia.count; i++) fprintf(f, "%u\t%llu\n", i, (unsigned long long)ia.entries[i].offset); /* not record 0 */
    {
        size_t sz;
        unsigned char *all = t_slurp(LABELS, &sz);
        base = sz;
        free(all);
    }
    for (i = 0; f && i < ib.count; i++) fprintf(f, "%u\t%llu\n", 8 + i, (unsigned long long)(base + ib.entries[i].offset));
    if (f) fclose(f);
    recio_index_free(&ia);
    recio_index_free(&ib);
    open_it(&d, LABELS ";" DET, 1);
    d.nsplit = 2, d.rank = 0;
    d.source.mode = 1;
    n = epoch_ids(&d, got, 16);
    CHECK_EQ_INT(n, 7); /* per-file .idx: 13 records, ceil(13 / 2) = 7 to rank 0 */
    for (i = 0; i < 7; i++) want[i] = 100 + i;
    CHECK(memcmp(want, got, 8 * 7) == 0);
    d.source.mode = 0, d.source.index_path = DIR "/all.idx"; /* 12 records: 6 to rank 0, from record 1 */
    for (i = 0; i < 6; i++) want[i] = 101 + i;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 6);
    CHECK(memcmp(want, got, 8 * 6) == 0);
    d.source.use_mmap = 1;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 6);
    CHECK(memcmp(want, got, 8 * 6) == 0);
    /* chunk shuffle over the 12, chunks of 2 in windows of 3 */
    d.nsplit = 1, d.rank = 0, d.source.use_mmap = 0;
    d.source.shuffle = RECIO_SHUFFLE_CHUNK, d.source.chunk_records = 2, d.source.window_chunks = 3;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 12);
    memset(&sd, 0, sizeof sd);
    sd.index_path = d.source.index_path, sd.shuffle = RECIO_SHUFFLE_CHUNK, sd.chunk_records = 2, sd.window_chunks = 3, sd.seed = 42;
    CHECK_EQ_INT(recio_split_open_desc(&s, LABELS ";" DET, 0, 1, &sd), RECIO_OK);
    for (i = 0; i < 12; i++) {
        recio_record r;
        recio_irecord ir;
        CHECK_EQ_INT(recio_split_next(s, &r), RECIO_OK);
        CHECK_EQ_INT(recio_irecord_unpack(&ir, r.data, r.size), RECIO_OK);
        CHECK_EQ_INT(got[i], ir.id);
        seen |= 1u << (got[i] < 200 ? got[i] - 100 : got[i] - 200 + 8);
    }
    recio_split_close(s);
    CHECK_EQ_INT(seen, 0x1ffe);
    for (i = 0; i < 7 && got[i] == 101 + i; i++) {}
    CHECK(i < 7); /* shuffled */
    d.source.shuffle = 3;
    {
        recio_iter *it = NULL;
        CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_ERR_ARG);
    }
}

/* equalize DROP: 13 records over 2 ranks, each gets floor(13/2) = 6; PAD: 7 each. */
static void test_equalize(void) {
    recio_iter_desc d;
    uint64_t got[16];
    open_it(&d, LABELS ";" DET, 1);
    d.nsplit = 2, d.rank = 1, d.source.mode = 1;
    d.source.equalize = RECIO_EQUALIZE_DROP;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 6);
    d.rank = 0;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 6);
    d.source.equalize = RECIO_EQUALIZE_PAD, d.rank = 1;
    CHECK_EQ_INT(epoch_ids(&d, got, 16), 7);
}

/* path_imglist: the .lst's labels replace the records' (by id); a record without a line fails. */
static void test_imglist(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    unsigned i;
    FILE *f = fopen(DIR "/labels.lst", "w");
    for (i = 0; f && i < 8; i++) {
        if (i == 5) continue;
        fprintf(f, "%u\t%u.5\t%u\timg%u.jpg\n", 100 + i, i, i % 2 ? 9 : 0, i);
    }
    if (f) fclose(f);
    open_it(&d, LABELS, 4);
    d.labels.width = 3;
    d.labels.imglist = DIR "/labels.lst";
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    for (i = 0; i < 4; i++) {
        CHECK(b.labels[3 * i] == (float)i + 0.5f);
        CHECK(b.labels[3 * i + 1] == (i % 2 ? 9.0f : 0.0f));
        CHECK(b.labels[3 * i + 2] == -1.0f);
        CHECK_EQ_INT(b.label_counts[i], 2);
    }
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(it), LABELS ": offset ") != NULL);
    CHECK(strstr(recio_iter_errmsg(it), "image id 105 has no line in " DIR "/labels.lst") != NULL);
    recio_iter_close(it);
    d.labels.imglist = DIR "/none.lst";
    it = NULL;
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_ERR_IO);
}

/* ---- mean_img, on real images ---- */

static void pack_photos(void) {
    static const char *names[] = {"chelsea-500x375.jpg", "coffee-500x333.jpg", "retina-120x90.jpg", "rocket-640x480.jpg"};
    recio_writer *w = NULL;
    unsigned i;
    if (recio_writer_open(&w, PHOTOS) != RECIO_OK) exit(1);
    for (i = 0; i < 4; i++) {
        char path[256];
        size_t size;
        unsigned char *img, *rec;
        float label = (float)i;
        snprintf(path, sizeof path, "tests/data/photos/%s", names[i]);
        if (!(img = t_slurp(path, &size))) exit(1);
        rec = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + size);
        recio_irecord_pack_header(rec, &label, 1, 1000 + i, 0);
        memcpy(rec + RECIO_IRHEADER_SIZE, img, size);
        if (recio_writer_write(w, rec, RECIO_IRHEADER_SIZE + size) != RECIO_OK) exit(1);
        free(img), free(rec);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
}

/* A .npy written by hand (format 1.0): '<f4', C order, shape (a, b, c), values v[i]. */
static void write_npy(const char *path, unsigned a, unsigned b, unsigned c, const float *v) {
    char h[128];
    int n = snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': (%u, %u, %u), }", a, b, c);
    FILE *f = fopen(path, "wb");
    size_t i;
    while ((10 + n + 1) % 64) h[n++] = ' ';
    h[n++] = '\n';
    if (!f) return;
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(n & 255, f), fputc(n >> 8, f);
    fwrite(h, 1, (size_t)n, f);
    for (i = 0; i < (size_t)a * b * c; i++) {
        unsigned char le[4];
        recio_store_f32le(le, v[i]);
        fwrite(le, 1, 4, f);
    }
    fclose(f);
}

/* Items of a "resize(8,6) float chw" chain (3 x 6 x 8), with and without the mean. */
static void test_mean_img(void) {
    enum { C = 3, H = 6, W = 8, N = C * H * W };
    static float chw[N], hwc[N], plain[4][N];
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    char msg[512];
    unsigned c, y, x, i, k;
    for (c = 0; c < C; c++)
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                float m = 0.5f * (float)((c * H + y) * W + x) - 20.0f;
                chw[(c * H + y) * W + x] = m;
                hwc[(y * W + x) * C + c] = m;
            }
    write_npy(DIR "/mean_chw.npy", C, H, W, chw);
    write_npy(DIR "/mean_hwc.npy", H, W, C, hwc);
    write_npy(DIR "/mean_bad.npy", C, W, H, chw);
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS, d.item.spec = "resize(8,6) float chw", d.run.batch = 4, d.run.workers = workers, d.source.seed = 1;
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    memcpy(plain, b.data, sizeof plain);
    recio_iter_close(it);
    for (k = 0; k < 2; k++) {
        d.item.mean_img = k ? DIR "/mean_hwc.npy" : DIR "/mean_chw.npy";
        d.item.mean_scale = 0.25f;
        if (!(it = must_open(&d))) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        for (i = 0; i < 4; i++)
            for (c = 0; c < N; c++) {
                float want = (plain[i][c] - chw[c]) * 0.25f, got = ((const float *)b.data)[i * N + c];
                if (got != want) {
                    CHECK(got == want);
                    i = 4;
                    break;
                }
            }
        recio_iter_close(it);
    }
    d.item.mean_img = DIR "/mean_bad.npy";
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_ARG);
    CHECK(strstr(msg, "mean_bad.npy: mean_img: its shape (3, 8, 6) is not the item's (C,H,W) = (3, 6, 8)") != NULL);
    d.item.spec = "resize(8,6) chw"; /* u8 items: the mean cannot be subtracted in place */
    d.item.mean_img = DIR "/mean_chw.npy";
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_ARG);
    CHECK(strstr(msg, "needs a spec whose output is float32") != NULL);
}

/* A .lst for labels.rec: image id 100 + i has the label i + v. */
static void write_lst(const char *path, unsigned v) {
    FILE *f = fopen(path, "w");
    unsigned i;
    for (i = 0; f && i < 8; i++) fprintf(f, "%u\t%u\timg%u.jpg\n", 100 + i, i + v, i);
    if (f) fclose(f);
}


/* insightface's layout: record 0 a header whose labels (N+1, N+1+identities) say where the N images
   (keys 1..N) end, the images, then identity records (labels: each identity's key range), all but the
   images with empty payloads. key_begin/key_end = (1, N+1) read the images alone, each once, in order or shuffled: the item
   shape comes from key 1 (record 0 does not decode), and a checkpoint of a ranged iterator is
   refused by one without the range. */
#define FACES DIR "/faces.rec"
#define NFACES 5
static void make_faces(void) {
    recio_writer *w = NULL;
    recio_writer_desc wd;
    unsigned char *buf, *img = t_slurp(IMG, &img_size);
    unsigned i;
    float lab[2];
    if (!img || !(buf = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + 8 + img_size))) exit(1);
    memset(&wd, 0, sizeof wd);
    wd.index_path = FACES ".idx";
    if (recio_writer_open_desc(&w, FACES, &wd) != RECIO_OK) exit(1);
    lab[0] = NFACES + 1, lab[1] = NFACES + 4;
    if (recio_writer_write(w, buf, recio_irecord_pack_header(buf, lab, 2, 0, 0)) != RECIO_OK) exit(1);
    for (i = 1; i <= NFACES; i++) {
        float l = (float)(i / 2); /* identities 0, 1, 1, 2, 2 */
        size_t h = recio_irecord_pack_header(buf, &l, 1, 300 + i, 0);
        memcpy(buf + h, img, img_size);
        if (recio_writer_write(w, buf, h + img_size) != RECIO_OK) exit(1);
    }
    for (i = 0; i < 3; i++) { /* identity i: keys [2i, 2i + 2) clipped to the images */
        lab[0] = (float)(i ? 2 * i : 1), lab[1] = (float)(2 * i + 2 < NFACES + 1 ? 2 * i + 2 : NFACES + 1);
        if (recio_writer_write(w, buf, recio_irecord_pack_header(buf, lab, 2, 0, 0)) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
    free(buf), free(img);
}

static void test_key_range(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    char msg[512];
    unsigned i, shuffle;
    unsigned char blob[4096];
    size_t size;
    for (shuffle = 0; shuffle < 2; shuffle++) {
        uint64_t seen = 0;
        memset(&d, 0, sizeof d);
        d.uris = FACES, d.item.spec = "resize(12,9) chw", d.run.batch = NFACES, d.run.workers = workers, d.source.shuffle = (int)shuffle, d.source.seed = 3;
        d.source.key_begin = 1, d.source.key_end = NFACES + 1;
        if (!(it = must_open(&d))) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        CHECK_EQ_INT(b.count, NFACES);
        CHECK_EQ_INT(b.pad, 0);
        CHECK_EQ_INT(b.item.width, 12);
        for (i = 0; i < NFACES; i++) {
            CHECK(b.ids[i] > 300 && b.ids[i] <= 300 + NFACES);
            if (!shuffle) CHECK_EQ_INT(b.ids[i], 301 + i);
            CHECK(b.labels[i] == (float)((b.ids[i] - 300) / 2));
            seen |= 1u << (b.ids[i] - 300);
        }
        CHECK_EQ_INT(seen, 0x3e);
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_END);
        CHECK_EQ_INT(recio_iter_save(it, blob, sizeof blob, &size), RECIO_OK);
        recio_iter_close(it);
        d.source.key_end = 0; /* no range (key_begin alone is nothing) */
        d.run.skip_bad = 1; /* opens (record 0 is passed over), but it is another dataset */
        if (!(it = must_open(&d))) return;
        CHECK_EQ_INT(recio_iter_restore(it, blob, size), RECIO_ERR_ARG);
        recio_iter_close(it);
    }
    /* without the range record 0 is the first record: it does not decode */
    d.run.skip_bad = 0;
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_DECODE);
    CHECK(strstr(msg, "faces.rec: offset 0: first record") != NULL);
    recio_iter_close(it);
    d.source.key_begin = NFACES + 10, d.source.key_end = NFACES + 20; /* a range with no key */
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_FORMAT);
    CHECK(strstr(msg, "faces.rec: the index lists no record") != NULL);
    recio_iter_close(it);
}

/* A crop larger than the image that reaches it (issue 25: "224 crop of a 112-px image" said only
   "first record: invalid argument"): the op as written and both sizes, from the shape probe, from
   a later record (not "the output is not the first record's shape"), and from apply_encoded. */
static void test_crop_too_large(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_transform *t = NULL;
    recio_batch b;
    recio_image out;
    char msg[512];
    unsigned char *img;
    size_t n;
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS, d.item.spec = "resize(112,112) center_crop(224) chw", d.run.batch = 2, d.run.workers = workers;
    CHECK_EQ_INT((d.errmsg = msg, recio_iter_open(&it, &d)), RECIO_ERR_ARG);
    CHECK(strstr(msg, "photos.rec: offset 0: first record: transform: center_crop(224) cannot take the 112x112 image (WxH, 3 channels) that reaches it") != NULL);
    if (!strstr(msg, "center_crop(224) cannot take")) fprintf(stderr, "  %s\n", msg);
    recio_iter_close(it);
    d.item.spec = "center_crop(300,200) chw"; /* record 2 is 120x90 */
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_ARG);
    CHECK(strstr(recio_iter_errmsg(it), ": transform: center_crop(300,200) cannot take the 120x90 image (WxH, 3 channels) that reaches it") != NULL);
    if (!strstr(recio_iter_errmsg(it), "cannot take")) fprintf(stderr, "  %s\n", recio_iter_errmsg(it));
    recio_iter_close(it);
    CHECK((img = t_slurp(IMG, &n)) != NULL);
    CHECK_EQ_INT(recio_transform_parse(&t, "random_resized_crop(64,0.08,1) random_crop(100,50)"), RECIO_OK);
    memset(&out, 0, sizeof out);
    CHECK_EQ_INT(t_apply_encoded(t, img, n, &out, 1, NULL, msg, sizeof msg), RECIO_ERR_ARG);
    CHECK(strcmp(msg, "transform: random_crop(100,50) cannot take the 64x64 image (WxH, 3 channels) that reaches it") == 0);
    if (strcmp(msg, "transform: random_crop(100,50) cannot take the 64x64 image (WxH, 3 channels) that reaches it")) fprintf(stderr, "  %s\n", msg);
    recio_transform_free(t);
    free(img);
}

/* A checkpoint is refused by an iterator whose seed_aug, pad value or .lst differ, and accepted by
   an identical one, and by one whose .lst holds other labels under the same name. */
static void test_checkpoint_fingerprint(void) {
    recio_iter_desc d;
    recio_iter *a, *b;
    recio_batch x;
    unsigned char blob[256];
    size_t n;
    unsigned k;
    open_it(&d, LABELS, 2);
    d.item.seed_aug = 5;
    d.labels.width = 3;
    if (!(a = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(a, &x), RECIO_OK);
    CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
    for (k = 0; k < 4; k++) {
        recio_iter_desc e = d;
        if (k == 1) e.item.seed_aug = 6;
        if (k == 2) e.labels.pad_set = 1;
        if (k == 3) e.labels.detection = 1;
        if (!(b = must_open(&e))) return;
        CHECK_EQ_INT(recio_iter_restore(b, blob, n), k ? RECIO_ERR_ARG : RECIO_OK);
        recio_iter_close(b);
    }
    recio_iter_close(a);
    /* the same file names with other contents: refused too */
    open_it(&d, LABELS, 2);
    d.labels.imglist = DIR "/fp.lst";
    write_lst(DIR "/fp.lst", 9);
    if (!(a = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
    recio_iter_close(a);
    for (k = 0; k < 2; k++) {
        write_lst(DIR "/fp.lst", k ? 8 : 9);
        if (!(b = must_open(&d))) return;
        CHECK_EQ_INT(recio_iter_restore(b, blob, n), k ? RECIO_ERR_ARG : RECIO_OK);
        recio_iter_close(b);
    }
}

#ifndef _WIN32
/* Run "recio ARGS"; the output must contain want (exit status st). */
static void cli_has(const char *args, int st, const char *want) {
    static char out[16384], cmd[1024];
    int got;
    snprintf(cmd, sizeof cmd, "iter %s", args);
    got = t_recio_capture(cmd, 60, out, sizeof out);
    CHECK_EQ_INT(got, st);
    CHECK(strstr(out, want) != NULL);
    if (!strstr(out, want) || got != st) fprintf(stderr, "recio %s\ngave: %s\nwant: %s\n", args, out, want);
}

/* `recio iter` reaches every option; expected lines written out from the datasets by hand. */
static void test_cli(void) {
    char want[256], args[512];
    if (!t_recio_tool()) return;
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --batch 4 --labels --label-width 3 --no-checksum", 0,
            "0\t0\t4\t0\t100,101,102,103\t-\t0,-1,-1;10,11,-1;20,21,22;30,31,32\t1,2,3,4\n"
            "0\t1\t4\t0\t104,105,106,107\t-\t40,41,42;50,51,52;0,-1,-1;70,71,72\t5,6,1,3\n");
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --batch 8 --labels --label-width 2 --label-pad 0.5 --no-checksum", 0,
            "\t-\t0,0.5;10,11;20,21;30,31;40,41;50,51;0,0.5;70,71\t1,2,3,4,5,6,1,3\n");
    snprintf(want, sizeof want, "recio: %s: offset %llu: 4 labels, more than label_width 3 (label_strict)", LABELS, label_offset(3));
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --batch 4 --label-width 3 --label-strict", 1, want);
    /* the first batch, then record 4 (not whole objects) fails; one object fits each row, and a
       chain without geometric ops drops it as any chain would: every box of records 1..3 has its
       centre outside the image (coordinates from 1 up). It used to keep them as they were. */
    cli_has(DIR "/det.rec --spec 'gray' --batch 4 --labels --label-width 9 --detection --no-checksum", 1,
            "\t-\t4,5,640,480,-1,-1,-1,-1,-1;4,5,640,480,-1,-1,-1,-1,-1;"
            "4,5,640,480,-1,-1,-1,-1,-1;4,5,640,480,-1,-1,-1,-1,-1\t4,9,19,14\t0,0,0,0\n");
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --batch 4 --labels --label-width 2 --imglist " DIR "/labels.lst", 1,
            "\t0.5,0;1.5,9;2.5,0;3.5,9\t2,2,2,2\n");
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --batch 4 --imglist " DIR "/labels.lst", 1, "image id 105 has no line in " DIR "/labels.lst");
    /* 13 records, --equalize drop over 2 parts: 6 each; pad: 7 */
    cli_has("'" DIR "/labels.rec;" DIR "/det.rec' --spec 'resize(4,4)' --batch 1 --nsplit 2 --rank 0 --equalize drop --quiet --mmap", 0, "6 images in");
    cli_has("'" DIR "/labels.rec;" DIR "/det.rec' --spec 'resize(4,4)' --batch 1 --nsplit 2 --rank 1 --equalize pad --quiet --mmap --no-mmap", 0, "7 images in");
    /* the global index leaves out record 0: rank 0 of 2 gets records 1..6 */
    cli_has("'" DIR "/labels.rec;" DIR "/det.rec' --spec 'resize(4,4)' --batch 6 --nsplit 2 --index-path " DIR "/all.idx --no-checksum", 0,
            "0\t0\t6\t0\t101,102,103,104,105,106\t-\n");
    cli_has("'" DIR "/labels.rec;" DIR "/det.rec' --spec 'resize(4,4)' --batch 1 --index-path " DIR "/all.idx --shuffle-chunk 2 --quiet", 0, "12 images in");
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --shuffle-window 3", 2, "--shuffle-window goes with --shuffle-chunk");
    cli_has(DIR "/labels.rec --spec 'resize(4,4)' --equalize both", 2, "--equalize is pad or drop, not 'both'");
    cli_has(DIR "/photos.rec --spec 'resize(8,6) chw' --mean-img " DIR "/mean_chw.npy", 2, "needs a spec whose output is float32");
    snprintf(args, sizeof args, "%s/labels.rec --spec 'resize(4,4)' --label-pad x", DIR);
    cli_has(args, 2, "bad value 'x' for --label-pad");
}

/* `recio mean`: its usage errors, and a mean the iterator accepts (its values are checked against
   numpy in tests/test_python.py). */
static void test_cli_mean(void) {
    static char out[4096];
    if (!t_recio_tool()) return;
    CHECK_EQ_INT(t_recio_capture("mean " DIR "/photos.rec --spec 'resize(8,6) float chw'", 60, out, sizeof out), 2);
    CHECK(strstr(out, "-o OUT.npy is required") != NULL);
    CHECK_EQ_INT(t_recio_capture("mean " DIR "/photos.rec --spec 'resize(8,6) f16' -o " DIR "/m16.npy", 60, out, sizeof out), 2);
    CHECK(strstr(out, "end it with 'float'") != NULL);
    CHECK_EQ_INT(t_recio_capture("mean " DIR "/photos.rec --spec 'resize(8,6) float chw' -o " DIR "/m.npy", 60, out, sizeof out), 0);
    CHECK(strstr(out, "4 images: mean of shape (C,H,W) = (3, 6, 8) written to " DIR "/m.npy") != NULL);
    cli_has(DIR "/photos.rec --spec 'resize(8,6) float chw' --batch 4 --mean-img " DIR "/m.npy --no-checksum", 0, "1000,1001,1002,1003\t-\n");
}

/* The CLI's --seed-aug and --mean-img against the library: the same checksums. */
static void test_cli_same_as_library(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    char want[128];
    if (!t_recio_tool()) return;
    memset(&d, 0, sizeof d);
    d.uris = PHOTOS, d.item.spec = "random_crop(8,6) float chw", d.run.batch = 4, d.source.seed = 3, d.item.seed_aug = 9;
    d.item.mean_img = DIR "/mean_hwc.npy", d.item.mean_scale = 0.25f;
    if (!(it = must_open(&d))) return;
    CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
    snprintf(want, sizeof want, "0\t0\t4\t0\t1000,1001,1002,1003\t%016llx\n", (unsigned long long)recio_batch_checksum(&b, RECIO_SUM_BYTES));
    recio_iter_close(it);
    cli_has(DIR "/photos.rec --spec 'random_crop(8,6) float chw' --batch 4 --seed 3 --seed-aug 9 --mean-img " DIR "/mean_hwc.npy --mean-scale 0.25", 0, want);
}
#endif

int main(void) {
    unsigned w;
    t_mkdir("build");
    t_mkdir(DIR);
    make_labels();
    make_det();
    pack_photos();
    make_faces();
    for (w = 0; w < 2; w++) {
        workers = 2 * w;
        RUN(test_label_pad);
        RUN(test_label_strict);
        RUN(test_label_detection);
        RUN(test_seed_aug);
        RUN(test_index_path_chunks_mmap);
        RUN(test_equalize);
        RUN(test_use_mmap);
        RUN(test_imglist);
        RUN(test_mean_img);
        RUN(test_checkpoint_fingerprint);
        RUN(test_key_range);
        RUN(test_crop_too_large);
    }
#ifndef _WIN32
    RUN(test_cli);
    RUN(test_cli_same_as_library);
    RUN(test_cli_mean);
#endif
    return t_done("iter_opts");
}
