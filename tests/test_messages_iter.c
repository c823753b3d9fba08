/* Messages of the iterator, `recio iter` / `recio mean` and the decode that say what is really wrong
   (issue 23, item 12), and the mean image's .npy read as NumPy writes it, whatever the header's
   spacing, quotes, key order, element order or byte order. Expected texts and pixels are written
   out by hand here. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "image_write.h"
#include "tmpdir.h"
#ifndef _WIN32
#include "cli_util.h"
#endif
#include <errno.h>

#define DIR "build/test_messages_iter"
#define DS DIR "/ds.rec"
#define SEG DIR "/seg.rec"

/* A w x h PNG (channels 1 or 3) of pixels v(x, y, c) = 7x + 3y + 50c + salt into m. */
static int png_of(t_mem_out *m, int w, int h, int channels, int salt) {
    unsigned char px[64 * 64 * 3];
    int x, y, c;
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            for (c = 0; c < channels; c++) px[(y * w + x) * channels + c] = (unsigned char)(7 * x + 3 * y + 50 * c + salt);
    m->n = 0;
    return stbi_write_png_to_func(t_to_mem, m, w, h, channels, px, w * channels) && m->n <= (int)sizeof m->b;
}

/* Records of a 40x30 image each; with masks, a mask of mw x mh after it (segmentation records). */
static void write_records(const char *path, int count, const int (*mask)[2]) {
    static t_mem_out img, mk;
    static unsigned char buf[RECIO_IRHEADER_SIZE + 2 * sizeof img.b + RECIO_MASK_TAIL_SIZE];
    recio_writer *w = NULL;
    int i;
    if (recio_writer_open(&w, path) != RECIO_OK) exit(1);
    for (i = 0; i < count; i++) {
        float label = (float)i;
        size_t n = recio_irecord_pack_header(buf, &label, 1, (uint64_t)i, 0);
        if (!png_of(&img, 40, 30, 3, i)) exit(1);
        memcpy(buf + n, img.b, (size_t)img.n), n += (size_t)img.n;
        if (mask) {
            if (!png_of(&mk, mask[i][0], mask[i][1], 1, 0)) exit(1);
            memcpy(buf + n, mk.b, (size_t)mk.n), n += (size_t)mk.n;
            n += recio_irecord_mask_tail(buf + n, (size_t)mk.n);
        }
        if (recio_writer_write(w, buf, n) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
}

static void make_files(void) {
    static const int masks[3][2] = {{40, 30}, {30, 20}, {40, 30}}; /* record 1's mask is the wrong size */
    t_mkdir("build");
    t_mkdir(DIR);
    write_records(DS, 4, NULL);
    write_records(SEG, 3, masks);
}

static recio_iter *open_it(recio_iter_desc *d, recio_err want, char *msg) {
    recio_iter *it = NULL;
    recio_err e;
    d->errmsg = msg; /* RECIO_ERRMSG_SIZE bytes */
    e = recio_iter_open(&it, d);
    if (e != want) fprintf(stderr, "  open: %d (%s), expected %d\n", (int)e, msg, (int)want);
    CHECK_EQ_INT(e, want);
    return it;
}

/* A mask of another size than its image: said so, not "the chain turns this 40x30 image into
   40x30, not the 40x30 of the first record"; a bad record, so skip_bad leaves it out. */
static void test_mask_size_message(void) {
    recio_iter_desc d;
    recio_iter *it;
    recio_batch b;
    char msg[RECIO_ERRMSG_SIZE];
    const char *m;
    int skip;
    for (skip = 0; skip < 2; skip++) {
        memset(&d, 0, sizeof d);
        d.uris = SEG, d.item.spec = "resize(16,16)", d.labels.masks = 1, d.run.skip_bad = skip;
        if (!(it = open_it(&d, RECIO_OK, msg))) return;
        CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK);
        if (skip) {
            CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_OK); /* record 1 left out: this is record 2 */
            CHECK(b.count == 0 || b.ids[0] == 2);
            CHECK_EQ_INT(skipped_of(it, NULL, NULL), 1);
        } else {
            CHECK_EQ_INT(recio_iter_next(it, &b), RECIO_ERR_FORMAT);
            m = recio_iter_errmsg(it);
            if (!strstr(m, "mask") || !strstr(m, "30x20") || !strstr(m, "40x30") || strstr(m, "chain turns"))
                fprintf(stderr, "  said: %s\n", m), CHECK(0);
        }
        recio_iter_close(it);
    }
}

/* channels 2 (grey and alpha) is no decode's output: named with the values that are. */
static void test_channels_two(void) {
    recio_iter_desc d;
    recio_transform *t = NULL;
    t_enc ed;
    recio_image out = {0};
    t_mem_out *png = (t_mem_out *)malloc(sizeof *png);
    char msg[RECIO_ERRMSG_SIZE];
    memset(&d, 0, sizeof d);
    d.uris = DS, d.item.spec = "resize(8,8)", d.item.channels = 2;
    open_it(&d, RECIO_ERR_ARG, msg);
    CHECK(strcmp(msg, "bad options: channels 2 (decode to 1, 3 or 4 channels)") == 0);
    CHECK(png && png_of(png, 40, 30, 3, 0) && recio_transform_parse(&t, "resize(8,8)") == RECIO_OK);
    memset(&ed, 0, sizeof ed);
    ed.channels = 2;
    if (png && t) { /* Python's Transform(channels=2) */
        CHECK_EQ_INT(t_apply_encoded(t, png->b, (size_t)png->n, &out, 0, &ed, msg, sizeof msg), RECIO_ERR_ARG);
        CHECK(strcmp(msg, "decode: channels 2: decode to 0 (as stored), 1, 3 or 4 channels") == 0);
        CHECK_EQ_INT(t_decode_ex(&out, png->b, (size_t)png->n, 2, msg, sizeof msg), RECIO_ERR_ARG);
        CHECK(strcmp(msg, "decode: channels 2: decode to 0 (as stored), 1, 3 or 4 channels") == 0);
    }
    recio_transform_free(t);
    free(png);
}

#ifndef _WIN32
static int cli(const char *args, int want, const char *says) {
    static char out[8192];
    int st = t_recio_capture(args, 60, out, sizeof out);
    if (st == want && strstr(out, says)) return 1;
    fprintf(stderr, "  recio %s: exit %d, said: %s  (want %d and '%s')\n", args, st, out, want, says);
    return 0;
}
#endif

/* The commands: --channels 2 is bad usage (exit 2) naming 1, 3 or 4; mean -o DIR says why (exit 2: a folder is
   no output, refused before any work); numeric values are strict and their words name the range. */
static void test_cli_words(void) {
#ifndef _WIN32
    char want[128];
    if (!t_recio_tool()) return;
    CHECK(cli("iter " DS " --spec 'resize(8,8)' --channels 2", 2, "bad value '2' for --channels: 1, 3 or 4"));
    CHECK(cli("mean " DS " --spec 'resize(8,8) float' --channels 2 -o " DIR "/m.npy", 2, "bad value '2' for --channels: 1, 3 or 4"));
    /* a value the option lacks is named as such (it was "unknown option '--workers'"); the range in
       the words is the one --help gives; a float option is strict too (strtod took " 0.5", "+0.5"
       and hex) */
    CHECK(cli("mean " DS " -o " DIR "/m.npy --spec 'resize(8,8) float' --workers", 2, "--workers needs a value"));
    CHECK(cli("mean " DS " --spec 'resize(8,8) float' --workers 257 -o " DIR "/m.npy", 2, "bad value '257' for --workers: a whole number from 0 to 256"));
    CHECK(cli("mean --help", 0, "--workers N     decode threads, 0..256"));
    CHECK(cli("iter " DS " --spec 'resize(8,8)' --label-pad ' 0.5'", 2, "bad value ' 0.5' for --label-pad: a number from"));
    CHECK(cli("iter " DS " --spec 'resize(8,8)' --label-pad +0.5", 2, "bad value '+0.5' for --label-pad: a number from"));
    CHECK(cli("iter " DS " --spec 'resize(8,8) float' --mean-img " DIR "/m.npy --mean-scale 0x1p-1", 2,
              "bad value '0x1p-1' for --mean-scale: a number from"));
    CHECK(cli("iter " DS " --spec 'resize(8,8)' --label-pad", 2, "--label-pad needs a value"));
    snprintf(want, sizeof want, DIR ": is a folder, not a file to write"); /* the output rule's words (cli_out) */
    CHECK(cli("mean " DS " --spec 'resize(8,8) float' -o " DIR, 2, want));
#else
    t_skip("the recio command is POSIX only", 1);
#endif
}

/* ---- the mean image's .npy ---- */

#define MC 3
#define MH 4
#define MW 5
/* The mean's element (c, y, x) of the (C,H,W) item: a value that tells every element apart. */
static float mean_at(int c, int y, int x) { return (float)(c * 100 + y * 10 + x) * 0.5f; }

/* A .npy with this header dict (padded as NumPy pads), format major.0, the floats in C or Fortran
   order, little- or big-endian. */
static void write_npy(const char *path, const char *dict, int major, int fortran, int big) {
    char h[512];
    int len = (int)strlen(dict), pre = major == 1 ? 10 : 12, c, y, x, i[3], k;
    FILE *f = fopen(path, "wb");
    float v[MC * MH * MW];
    if (!f) exit(1);
    memcpy(h, dict, (size_t)len);
    while ((pre + len + 1) % 64) h[len++] = ' ';
    h[len++] = '\n';
    fwrite("\x93NUMPY", 1, 6, f);
    fputc(major, f), fputc(0, f);
    fputc(len & 255, f), fputc(len >> 8, f);
    if (major > 1) fputc(0, f), fputc(0, f);
    fwrite(h, 1, (size_t)len, f);
    for (c = 0; c < MC; c++)
        for (y = 0; y < MH; y++)
            for (x = 0; x < MW; x++) {
                i[0] = c, i[1] = y, i[2] = x;
                v[fortran ? i[0] + MC * (i[1] + MH * i[2]) : (i[0] * MH + i[1]) * MW + i[2]] = mean_at(c, y, x);
            }
    for (k = 0; k < MC * MH * MW; k++) {
        unsigned char le[4], out[4];
        recio_store_f32le(le, v[k]);
        out[0] = le[big ? 3 : 0], out[1] = le[big ? 2 : 1], out[2] = le[big ? 1 : 2], out[3] = le[big ? 0 : 3];
        fwrite(out, 1, 4, f);
    }
    fclose(f);
}

/* The first batch's items with mean_img = path, or an error (message into msg). */
static recio_err mean_batch(const char *path, float *items, size_t n, char *msg) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.uris = DS, d.item.spec = "resize(5,4) float chw", d.run.batch = 2, d.item.mean_img = path;
    msg[0] = 0;
    if ((e = (d.errmsg = msg, recio_iter_open(&it, &d))) != RECIO_OK) return e;
    if ((e = recio_iter_next(it, &b)) == RECIO_OK) memcpy(items, b.data, n * sizeof *items);
    recio_iter_close(it);
    return e;
}

static void test_npy_headers(void) {
    static const struct {
        const char *dict;
        int major, fortran, big;
    } ok[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), }", 1, 0, 0}, /* numpy.save's own */
        {"{'descr':'<f4','fortran_order':False,'shape':(3,4,5)}", 1, 0, 0},          /* no spaces */
        {"{\"shape\": (3, 4, 5,), \"descr\": \"<f4\", \"fortran_order\": False}", 1, 0, 0},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4, 5), }", 1, 1, 0},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4, 5), }", 1, 0, 1},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L, 5L), }", 2, 0, 0},
        {" {'descr': '<f4',\n 'fortran_order': False,\t'shape': ( 3 , 4 , 5 ) } ", 3, 0, 0},
    };
    static const struct {
        const char *dict, *says;
    } bad[] = {
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4, 5), }", "the .npy must be float32 ('<f4' or '>f4'), not '<f8'"},
        {"{'descr': '<f4', 'shape': (3, 4, 5), }", "the .npy header is not a dict of descr, fortran_order and shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), 'x': 1}", "not a dict of descr, fortran_order and shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4 5)}", "not a dict of descr, fortran_order and shape"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3, 4, 5)}", "not a dict of descr, fortran_order and shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5)} x", "not a dict of descr, fortran_order and shape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (60,)}", "the .npy shape must have three dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (5, 4, 3)}", "its shape (5, 4, 3) is not the item's (C,H,W) = (3, 4, 5)"},
    };
    float plain[2 * MC * MH * MW], got[2 * MC * MH * MW];
    char msg[RECIO_ERRMSG_SIZE], path[128];
    size_t k, j, n = 2 * MC * MH * MW;
    int bad_values = 0;
    CHECK_EQ_INT(mean_batch(NULL, plain, n, msg), RECIO_OK);
    for (k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        snprintf(path, sizeof path, DIR "/ok%u.npy", (unsigned)k);
        write_npy(path, ok[k].dict, ok[k].major, ok[k].fortran, ok[k].big);
        if (mean_batch(path, got, n, msg) != RECIO_OK) {
            fprintf(stderr, "  %s: refused: %s\n", ok[k].dict, msg), CHECK(0);
            continue;
        }
        for (j = 0, bad_values = 0; j < n; j++) { /* item - mean, element by element, the mean as written */
            size_t e = j % (MC * MH * MW);
            int c = (int)(e / (MH * MW)), y = (int)(e / MW % MH), x = (int)(e % MW);
            bad_values += got[j] != plain[j] - mean_at(c, y, x);
        }
        if (bad_values) fprintf(stderr, "  %s: %d values not item - mean\n", ok[k].dict, bad_values);
        CHECK_EQ_INT(bad_values, 0);
    }
    for (k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(path, sizeof path, DIR "/bad%u.npy", (unsigned)k);
        write_npy(path, bad[k].dict, 1, 0, 0);
        if (mean_batch(path, got, n, msg) == RECIO_OK || !strstr(msg, bad[k].says))
            fprintf(stderr, "  %s: said '%s', want '%s'\n", bad[k].dict, msg, bad[k].says), CHECK(0);
    }
}

int main(void) {
    make_files();
    RUN(test_mask_size_message);
    RUN(test_channels_two);
    RUN(test_cli_words);
    RUN(test_npy_headers);
    t_rmtree(DIR);
    return t_done("messages_iter");
}
