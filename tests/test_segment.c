/* Segmentation records: an image and its label mask in one record (the mask PNG and an 8-byte tail
   after the image; recio.h section 3). Checked against an independent model: a scene of solid
   rectangles, each with its own colour and label, is listed and packed with the command; the record
   read back must give the scene's pixels and labels (exact where lossless; after --resize each
   pixel's label must be the label of the rectangle its centre falls in, found from the rectangles'
   geometry); PIL, an old reader, still opens the image; unpack and repack keep every byte; and
   `recio show` lays each label's PASCAL VOC colour (hard-coded here from VOC's published map) over
   exactly its region. */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#include "cli_util.h"
#include "image_write.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SW 48
#define SH 40

/* The scene: background label 0, then rectangles [x0, x1) x [y0, y1) drawn in order (later on top). */
typedef struct region {
    int x0, y0, x1, y1;
    unsigned char rgb[3], label;
} region;

static const region scene[] = {
    {0, 0, SW, SH, {90, 90, 90}, 0},
    {4, 4, 20, 18, {200, 40, 40}, 1},
    {26, 6, 44, 30, {30, 180, 60}, 2},
    {6, 24, 16, 36, {20, 20, 220}, 15},
    {40, 34, 48, 40, {250, 250, 250}, 255},
};
#define NREG ((int)(sizeof scene / sizeof scene[0]))

/* PASCAL VOC's colour map for the labels the scene uses (from VOC's published palette). */
static void voc_colour(int label, unsigned char c[3]) {
    static const unsigned char known[][4] = {{1, 128, 0, 0}, {2, 0, 128, 0}, {15, 192, 128, 128}};
    size_t i;
    c[0] = c[1] = c[2] = 0;
    for (i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i][0] == label) c[0] = known[i][1], c[1] = known[i][2], c[2] = known[i][3];
}

/* The region that holds the point (x, y) (continuous, pixel edges), -1 when it lies within `margin`
   of any region's edge (where a rounding may go either way). */
static int region_at(double x, double y, double margin) {
    int k, hit = 0;
    for (k = 0; k < NREG; k++) {
        const region *r = &scene[k];
        if (x > r->x0 + margin && x < r->x1 - margin && y > r->y0 + margin && y < r->y1 - margin) hit = k;
        else if (x > r->x0 - margin && x < r->x1 + margin && y > r->y0 - margin && y < r->y1 + margin) return -1;
    }
    return hit;
}

static void draw_scene(recio_image *img, recio_image *mask) {
    int k, x, y, c;
    CHECK(recio_image_alloc(img, SW, SH, 3, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    CHECK(recio_image_alloc(mask, SW, SH, 1, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (k = 0; k < NREG; k++)
        for (y = scene[k].y0; y < scene[k].y1; y++)
            for (x = scene[k].x0; x < scene[k].x1; x++) {
                for (c = 0; c < 3; c++) recio_image_set(img, x, y, c, scene[k].rgb[c]);
                recio_image_set(mask, x, y, 0, scene[k].label);
            }
}

static void write_png(const char *path, const recio_image *img) {
    int len = 0;
    unsigned char *b = stbi_write_png_to_mem((const unsigned char *)img->data, (int)img->stride, img->width, img->height, img->channels, &len);
    FILE *f = fopen(path, "wb");
    CHECK(f && b);
    if (f && b) CHECK(fwrite(b, 1, (size_t)len, f) == (size_t)len);
    if (f) fclose(f);
    free(b);
}

static int sh(const char *cmd) {
    int rc = system(cmd);
    return rc == -1 ? -1 : (rc >> 8) & 0xff;
}

/* ---- the library: the .lst mask column and the record's tail ---- */

static void test_lst_mask_column(void) {
    static const char text[] = "3\t1\t2.5\timg a.jpg\tm/a.png\n 7 \t 0 \t b.png \t b_mask.png \n";
    recio_lst l;
    char msg[RECIO_ERRMSG_SIZE];
    memset(&l, 0, sizeof l);
    CHECK(rec_lst_parse(&l, text, sizeof text - 1, "t.lst", 1, msg) == RECIO_OK && l.count == 2);
    if (l.count == 2) {
        CHECK(l.items[0].index == 3 && l.items[0].nlabels == 2 && l.items[0].labels[1] == 2.5f);
        CHECK(strcmp(l.items[0].path, "img a.jpg") == 0 && strcmp(l.items[0].mask, "m/a.png") == 0);
        CHECK(strcmp(l.items[1].path, "b.png") == 0 && strcmp(l.items[1].mask, "b_mask.png") == 0 && l.items[1].nlabels == 1);
    }
    recio_lst_free(&l);
    memset(&l, 0, sizeof l); /* without the flag the image's path is read as a label: refused */
    CHECK(rec_lst_parse(&l, text, sizeof text - 1, "t.lst", 0, msg) == RECIO_ERR_FORMAT);
    recio_lst_free(&l);
    memset(&l, 0, sizeof l);
    /* one path only */
    CHECK(rec_lst_parse(&l, "1\ta.jpg\tb.png\n", 14, "t.lst", 1, msg) == RECIO_ERR_FORMAT);
    recio_lst_free(&l);
    memset(&l, 0, sizeof l);
    CHECK(rec_lst_parse(&l, "1\t0\ta.jpg\n", 10, "t.lst", 0, msg) == RECIO_OK && l.count == 1 && l.items[0].mask == NULL);
    recio_lst_free(&l);
}

/* A payload built by hand: header, a (fake) JPEG, a PNG signature and bytes, the tail. */
static void test_record_tail(void) {
    static const unsigned char jpg[6] = {0xFF, 0xD8, 1, 2, 0xFF, 0xD9};
    static const unsigned char png[12] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 9, 8, 7, 6};
    unsigned char p[24 + 6 + 12 + 8], tail[8];
    float lab = 4;
    recio_irecord ir;
    CHECK(recio_irecord_mask_tail(tail, 12) == 8 && memcmp(tail, "\x0c\0\0\0RMSK", 8) == 0);
    recio_irecord_pack_header(p, &lab, 1, 9, 0);
    memcpy(p + 24, jpg, 6), memcpy(p + 30, png, 12), memcpy(p + 42, tail, 8);
    CHECK(recio_irecord_unpack(&ir, p, sizeof p) == RECIO_OK);
    CHECK(ir.image == p + 24 && ir.image_size == 6 && ir.mask == p + 30 && ir.mask_size == 12 && ir.label == 4);
    CHECK(recio_irecord_unpack(&ir, p, sizeof p - 8) == RECIO_OK && ir.mask == NULL && ir.image_size == 18); /* no tail */
    p[42] = 40; /* a length past the image */
    CHECK(recio_irecord_unpack(&ir, p, sizeof p) == RECIO_OK && ir.mask == NULL && ir.image_size == 26);
    p[42] = 11; /* no PNG signature where the length says */
    CHECK(recio_irecord_unpack(&ir, p, sizeof p) == RECIO_OK && ir.mask == NULL);
    p[42] = 12, p[49] = 'X'; /* not our tail */
    CHECK(recio_irecord_unpack(&ir, p, sizeof p) == RECIO_OK && ir.mask == NULL);
}

/* ---- the command: list, pack, read back, unpack, show ---- */

/* Every record of a .rec, in order: payload copies (malloc'd) and their count. */
static int read_records(const char *path, unsigned char **pay, size_t *len, int cap) {
    recio_reader *r = NULL;
    recio_record rec;
    int n = 0;
    if (recio_reader_open(&r, path) != RECIO_OK) return -1;
    while (n < cap && recio_reader_next(r, &rec) == RECIO_OK) {
        pay[n] = (unsigned char *)malloc(rec.size);
        memcpy(pay[n], rec.data, rec.size);
        len[n++] = rec.size;
    }
    recio_reader_close(r);
    return n;
}

static void free_records(unsigned char **pay, int n) {
    while (n-- > 0) free(pay[n]);
}

/* The record's image and mask against the scene: exact (lossless PNG, same size), or after a
   resize to w x h, each mask pixel whose centre is clear of region edges (one source pixel) holds
   that region's label, and no label appears that the scene does not have. */
static int check_record(const unsigned char *p, size_t n, int w, int h, int exact) {
    recio_irecord ir;
    recio_image img = {0}, m = {0};
    int x, y, k, c, bad = 0;
    if (recio_irecord_unpack(&ir, p, n) != RECIO_OK || !ir.mask) return 0;
    if (recio_image_decode(&img, ir.image, ir.image_size, 3) != RECIO_OK || recio_image_decode(&m, ir.mask, ir.mask_size, 0) != RECIO_OK)
        return recio_image_free(&img), 0;
    if (m.channels != 1 || m.width != w || m.height != h || img.width != w || img.height != h) bad = 1;
    for (y = 0; !bad && y < h; y++)
        for (x = 0; x < w; x++) {
            int lab = (int)recio_image_get(&m, x, y, 0), known = 0;
            for (k = 0; k < NREG; k++) known |= scene[k].label == lab;
            if (!known) bad = 1;
            k = region_at((x + 0.5) * SW / w, (y + 0.5) * SH / h, exact ? 0.25 : 1.0);
            if (k < 0) continue;
            if (lab != scene[k].label) bad = 1;
            for (c = 0; exact && c < 3; c++) bad |= recio_image_get(&img, x, y, c) != scene[k].rgb[c];
        }
    recio_image_free(&img);
    recio_image_free(&m);
    return !bad;
}

static const char *dir = "build/seg";

/* A text file as a NUL-ended string (t_slurp's bytes are not). */
static char *slurp_text(const char *path) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n), *s = b ? (unsigned char *)realloc(b, n + 1) : NULL;
    if (!s) return free(b), NULL;
    s[n] = 0;
    return (char *)s;
}

static void make_dataset(void) {
    recio_image img, mask;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s/images/a %s/images/b %s/masks/a %s/masks/b", dir, dir, dir, dir, dir);
    CHECK(sh(cmd) == 0);
    draw_scene(&img, &mask);
    snprintf(cmd, sizeof cmd, "%s/images/a/one.png", dir), write_png(cmd, &img);
    snprintf(cmd, sizeof cmd, "%s/images/b/two.png", dir), write_png(cmd, &img);
    snprintf(cmd, sizeof cmd, "%s/images/b/nomask.png", dir), write_png(cmd, &img); /* left out by list */
    snprintf(cmd, sizeof cmd, "%s/masks/a/one.png", dir), write_png(cmd, &mask);
    snprintf(cmd, sizeof cmd, "%s/masks/b/two.png", dir), write_png(cmd, &mask);
    snprintf(cmd, sizeof cmd, "%s/masks/b/rgb.png", dir), write_png(cmd, &img); /* not a grey mask */
    recio_image_free(&img);
    recio_image_free(&mask);
}

static void test_list_and_pack(void) {
    char args[1024], out[4096];
    unsigned char *pay[8];
    size_t len[8];
    int n, i;
    if (!t_recio_tool()) return;
    make_dataset();
    snprintf(args, sizeof args, "list --recursive --no-shuffle --mask-root %s/masks %s/seg %s/images", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    CHECK(strstr(out, "nomask.png") != NULL && strstr(out, "no mask") != NULL);
    snprintf(args, sizeof args, "%s/seg.lst", dir);
    {
        char *lst = slurp_text(args);
        CHECK(lst && strstr(lst, "0\t0.000000\ta/one.png\ta/one.png\n") && strstr(lst, "\t1.000000\tb/two.png\tb/two.png\n"));
        CHECK(lst && !strstr(lst, "nomask"));
        free(lst);
    }
    snprintf(args, sizeof args, "pack --quiet --encoding .png --mask-root %s/masks %s/seg %s/images", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    snprintf(args, sizeof args, "%s/seg.rec", dir);
    n = read_records(args, pay, len, 8);
    CHECK_EQ_INT(n, 2);
    for (i = 0; i < n; i++) CHECK(check_record(pay[i], len[i], SW, SH, 1));
    free_records(pay, n);
    /* resized: the mask by nearest neighbour, labels never blended */
    snprintf(args, sizeof args, "pack --quiet --resize 29 --mask-root %s/masks %s/seg %s/images", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    snprintf(args, sizeof args, "%s/seg.rec", dir);
    n = read_records(args, pay, len, 8);
    CHECK_EQ_INT(n, 2);
    for (i = 0; i < n; i++) CHECK(check_record(pay[i], len[i], SW * 29 / SH, 29, 0));
    free_records(pay, n);
    /* a colour mask is refused, named, and the record skipped */
    snprintf(args, sizeof args, "%s/bad.lst", dir);
    {
        FILE *f = fopen(args, "w");
        CHECK(f != NULL);
        if (f) fputs("0\t0\ta/one.png\tb/rgb.png\n1\t0\tb/two.png\tb/two.png\n", f), fclose(f);
    }
    snprintf(args, sizeof args, "pack --quiet --mask-root %s/masks %s/bad %s/images", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    CHECK(strstr(out, "rgb.png: an 8-bit RGB PNG, not a label mask") != NULL);
}

/* PIL reads the record's image bytes, tail and all, as the scene: old readers keep working. */
static void test_old_reader_sees_the_image(void) {
    char cmd[1024];
    if (!t_recio_tool()) return;
    snprintf(cmd, sizeof cmd, "pack --quiet --encoding .png --mask-root %s/masks %s/seg %s/images >/dev/null", dir, dir, dir);
    {
        char out[2048];
        CHECK(t_recio_capture(cmd, 60, out, sizeof out) == 0);
    }
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import struct, io, sys\n"
             "from PIL import Image\n"
             "b = open('%s/seg.rec', 'rb').read()\n"
             "magic, lrec = struct.unpack('<II', b[:8]); n = lrec & ((1 << 29) - 1)\n"
             "p = b[8:8 + n]; flag = struct.unpack('<I', p[:4])[0]\n"
             "im = Image.open(io.BytesIO(p[24 + 4 * flag:])); im.load()\n"
             "assert p[-4:] == b'RMSK', 'no tail'\n"
             "sys.exit(0 if im.size == (%d, %d) and im.convert('RGB').getpixel((10, 10)) == (200, 40, 40) else 3)\" 2>/dev/null",
             dir, SW, SH);
    if (sh("/usr/bin/python3 -c 'import PIL' 2>/dev/null") != 0) {
        t_skip("PIL is not installed for /usr/bin/python3", 1);
        return;
    }
    CHECK(sh(cmd) == 0);
}

/* unpack writes ID.mask.png and the mask column; a pass-through repack gives the same records. */
static void test_unpack_and_repack(void) {
    char args[1024], out[4096];
    unsigned char *a[8], *b[8];
    size_t la[8], lb[8];
    int na, nb, i;
    if (!t_recio_tool()) return;
    snprintf(args, sizeof args, "unpack %s/seg.rec %s/un", dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    snprintf(args, sizeof args, "%s/un/seg.lst", dir);
    {
        char *lst = slurp_text(args);
        CHECK(lst && strstr(lst, "0\t0\t0.png\t0.mask.png\n") && strstr(lst, "2\t1\t2.png\t2.mask.png\n") /* walk indices: nomask.png was 1 */);
        free(lst);
    }
    snprintf(args, sizeof args, "pack --quiet --pass-through --mask-root %s/un %s/un/seg %s/un", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    snprintf(args, sizeof args, "%s/seg.rec", dir);
    na = read_records(args, a, la, 8);
    snprintf(args, sizeof args, "%s/un/seg.rec", dir);
    nb = read_records(args, b, lb, 8);
    CHECK(na == 2 && nb == 2);
    for (i = 0; i < na && i < nb; i++) CHECK(la[i] == lb[i] && memcmp(a[i], b[i], la[i]) == 0);
    free_records(a, na);
    free_records(b, nb);
}

/* A text file written from a string. */
static void put_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

/* The labels of the first batch (2 items) of seg.rec with path_imglist = lst, masks on or off. */
static char iter_msg[RECIO_ERRMSG_SIZE];
static recio_err iter_labels(const char *lst, int masks, float lab[2], int *has_masks) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    char uris[256];
    recio_err e;
    memset(&d, 0, sizeof d);
    snprintf(uris, sizeof uris, "%s/seg.rec", dir);
    d.uris = uris, d.item.spec = "resize(16,16)", d.run.batch = 2, d.labels.imglist = lst, d.labels.masks = masks;
    lab[0] = lab[1] = -2, *has_masks = 0;
    if ((e = (d.errmsg = iter_msg, recio_iter_open(&it, &d))) != RECIO_OK) return e;
    if ((e = recio_iter_next(it, &b)) == RECIO_OK) lab[0] = b.labels[0], lab[1] = b.labels[1], *has_masks = b.masks != NULL;
    recio_iter_close(it);
    return e;
}

/* path_imglist takes the segmentation list recio list --mask-root writes ("index label image mask";
   it said "line 1: a label is not a number"), with masks on or off, and a plain list with masks on. */
static void test_iter_reads_seg_list(void) {
    char args[1024], out[4096], lst[256], plain[256];
    float lab[2];
    int m;
    if (!t_recio_tool()) return;
    snprintf(args, sizeof args, "pack --quiet --encoding .png --mask-root %s/masks %s/seg %s/images", dir, dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    snprintf(args, sizeof args, "iter %s/seg.rec --spec 'resize(16,16)' --imglist %s/seg.lst --labels --batch 2", dir, dir);
    CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
    CHECK(strstr(out, "\t0;1\t1,1\n") != NULL); /* seg.lst's labels: 0 for id 0, 1 for id 2 */
    if (!strstr(out, "\t0;1\t1,1\n")) fprintf(stderr, "  recio %s\n  gave: %s\n", args, out);
    snprintf(lst, sizeof lst, "%s/seg-labels.lst", dir); /* other labels than the records': the list's are used */
    put_text(lst, "0\t7\ta/one.png\ta/one.png\n2\t9\tb/two.png\tb/two.png\n");
    for (m = 0; m < 2; m++) {
        int has_masks;
        CHECK_EQ_INT(iter_labels(lst, m, lab, &has_masks), RECIO_OK);
        if (iter_msg[0]) fprintf(stderr, "  masks %d: %s\n", m, iter_msg);
        CHECK(lab[0] == 7 && lab[1] == 9 && has_masks == m);
    }
    snprintf(plain, sizeof plain, "%s/plain-labels.lst", dir);
    put_text(plain, "0\t5\ta/one.png\n2\t6\tb/two.png\n");
    {
        int has_masks;
        CHECK_EQ_INT(iter_labels(plain, 1, lab, &has_masks), RECIO_OK);
        CHECK(lab[0] == 5 && lab[1] == 6 && has_masks == 1);
    }
    /* a list neither kind reads: the error of the kind masks suggests */
    put_text(lst, "0\tx\ta/one.png\n");
    CHECK_EQ_INT(iter_labels(lst, 0, lab, &m), RECIO_ERR_FORMAT);
    CHECK(strstr(iter_msg, "seg-labels.lst: line 1: a label is not a number") != NULL);
}

/* The sheet of the first record (tile = the image's size, so the tile is the image): inside each
   region, (pixel + VOC colour + 1) / 2 for labels 1..254, the pixel itself for 0 and 255; with
   --spec flip the overlay moves with the image. */
static void test_show_overlays_mask(void) {
    char args[1024], out[4096];
    int flip;
    if (!t_recio_tool()) return;
    for (flip = 0; flip < 2; flip++) {
        recio_image sheet = {0};
        size_t n = 0;
        unsigned char *png;
        int x, y, c, bad = 0, seen = 0;
        snprintf(args, sizeof args, "show %s/seg.rec %s/sheet.png --n 1 --tile %d %s", dir, dir, SW, flip ? "--spec flip" : "");
        CHECK(t_recio_capture(args, 60, out, sizeof out) == 0);
        snprintf(args, sizeof args, "%s/sheet.png", dir);
        png = t_slurp(args, &n);
        CHECK(png && recio_image_decode(&sheet, png, n, 3) == RECIO_OK);
        free(png);
        for (y = 0; sheet.data && y < SH; y++)
            for (x = 0; x < SW; x++) {
                int k = region_at((flip ? SW - 1 - x : x) + 0.5, y + 0.5, 0.75);
                unsigned char col[3];
                int oy = (SW - SH) / 2; /* the tile is SW square; the image sits centred in it */
                if (k < 0) continue;
                voc_colour(scene[k].label, col);
                for (c = 0; c < 3; c++) {
                    int want = scene[k].label == 0 || scene[k].label == 255 ? scene[k].rgb[c] : (scene[k].rgb[c] + col[c] + 1) / 2;
                    if ((int)recio_image_get(&sheet, 2 + x, 2 + oy + y, c) != want) bad++;
                }
                seen++;
            }
        if (bad) fprintf(stderr, "  %s: %d of %d channel values differ from the model\n", flip ? "flipped" : "plain", bad, 3 * seen);
        CHECK(bad == 0 && seen > SW * SH / 2);
        recio_image_free(&sheet);
    }
}

int main(void) {
    RUN(test_lst_mask_column);
    RUN(test_record_tail);
    RUN(test_list_and_pack);
    RUN(test_old_reader_sees_the_image);
    RUN(test_unpack_and_repack);
    RUN(test_iter_reads_seg_list);
    RUN(test_show_overlays_mask);
    return t_done("segment");
}
