/* Label masks by one rule wherever they enter (issue 23, item 4): an 8-bit grey PNG gives its bytes,
   a palette PNG (1, 2, 4 or 8 bits; VOC's masks) its indices, never its colours; every other kind is
   refused by name. Masks decoded as images used to be relabelled: a 1-bit grey PNG's 1 became 255, a
   VOC palette's 1 became 38, a 16-bit grey's 3000 became 11, a grey JPEG's labels blurred. The PNGs
   are written here from the PNG specification (chunks, CRC-32, stored deflate blocks, Adler-32), the
   expected labels are the ones written, and each kind goes through each entry point: the library
   (recio_decode_desc.mask), the iterator (desc.labels.masks), `recio apply --mask`, `recio pack --mask-root`
   (then read back by the iterator), `recio verify --decode` and `recio show`. */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp */
#include "recio.h"
#include "test.h"
#include "img_desc.h"
#include "cli_util.h"
#include "tmpdir.h"
#include "image_write.h"
#include <stdlib.h>
#include <string.h>

#define W 16
#define H 12

/* The kinds. A mask's labels are vals[region], region = (x >= W/2) + 2 (y >= H/2). */
enum { K_GREY8, K_PAL8, K_PAL4, K_PAL2, K_PAL1, K_GREY1, K_GREY16, K_RGB, K_GREYA, K_JPEG, NK };
#define NGOOD 5 /* the kinds before K_GREY1 are masks */
static const unsigned vals[NK][4] = {{0, 1, 77, 255}, {0, 1, 15, 255}, {0, 1, 9, 15}, {0, 1, 2, 3}, {0, 1, 1, 0},
                                     {0, 1, 1, 0},    {0, 3000, 1, 65535}, {0}, {0}, {0}};
static const char *const refusal[NK] = {NULL, NULL, NULL, NULL, NULL, "a 1-bit grey PNG", "a 16-bit grey PNG",
                                        "an 8-bit RGB PNG", "an 8-bit grey+alpha PNG", "a JPEG"};
static t_mem_out masks[NK];
static char dir[64];

static unsigned label_at(int k, int x, int y) { return vals[k][(x >= W / 2) + 2 * (y >= H / 2)]; }

/* ---- PNG from the specification ---- */

static uint32_t crc_more(uint32_t c, const unsigned char *p, size_t n) {
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (b = 0; b < 8; b++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    }
    return c;
}

static void put(t_mem_out *o, const void *p, size_t n) { t_to_mem(o, (void *)(uintptr_t)p, (int)n); }
static void put32(t_mem_out *o, uint32_t v) {
    unsigned char b[4];
    b[0] = (unsigned char)(v >> 24), b[1] = (unsigned char)(v >> 16), b[2] = (unsigned char)(v >> 8), b[3] = (unsigned char)v;
    put(o, b, 4);
}
static void chunk(t_mem_out *o, const char *type, const unsigned char *data, size_t n) {
    put32(o, (uint32_t)n);
    put(o, type, 4);
    if (n) put(o, data, n); /* IEND has no data: memcpy from NULL is undefined even for 0 bytes */
    put32(o, crc_more(crc_more(0xffffffffu, (const unsigned char *)type, 4), data, n) ^ 0xffffffffu);
}

/* The raw rows (filter 0, samples MSB first) as a zlib stream of stored blocks. */
static size_t zlib_stored(const unsigned char *raw, size_t n, unsigned char *z) {
    size_t at = 0, i, k = 2;
    uint32_t a = 1, b = 0;
    z[0] = 0x78, z[1] = 0x01;
    do {
        size_t len = n - at > 65535 ? 65535 : n - at;
        z[k++] = at + len == n;
        z[k++] = (unsigned char)len, z[k++] = (unsigned char)(len >> 8);
        z[k++] = (unsigned char)~len, z[k++] = (unsigned char)(~len >> 8);
        memcpy(z + k, raw + at, len), k += len, at += len;
    } while (at < n);
    for (i = 0; i < n; i++) a = (a + raw[i]) % 65521, b = (b + a) % 65521;
    z[k++] = (unsigned char)(b >> 8), z[k++] = (unsigned char)b, z[k++] = (unsigned char)(a >> 8), z[k++] = (unsigned char)a;
    return k;
}

/* Kind k's labels as a grey (type 0) or palette (type 3) PNG of that bit depth; palettes carry VOC's
   colour map (index i's bits spread over r, g, b from the top) and a tRNS chunk. */
static void png_labels(t_mem_out *o, int k, int type, int depth, int w, int h) {
    static unsigned char raw[H * 2 * (1 + 2 * W) + 64], z[sizeof raw + 64], plte[768], trns[256];
    unsigned char ihdr[13] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t n = 0, zn;
    int x, y, i, j;
    memset(raw, 0, sizeof raw);
    for (y = 0; y < h; y++) {
        size_t row = n;
        raw[n++] = 0;
        n += ((size_t)w * (size_t)depth + 7) / 8;
        for (x = 0; x < w; x++) {
            unsigned v = label_at(k, x * W / w, y * H / h);
            if (depth == 16) raw[row + 1 + 2 * x] = (unsigned char)(v >> 8), raw[row + 2 + 2 * x] = (unsigned char)v;
            else raw[row + 1 + x * depth / 8] |= (unsigned char)(v << (8 - depth - x * depth % 8));
        }
    }
    ihdr[3] = (unsigned char)w, ihdr[7] = (unsigned char)h, ihdr[8] = (unsigned char)depth, ihdr[9] = (unsigned char)type;
    o->n = 0;
    put(o, "\x89PNG\r\n\x1a\n", 8);
    chunk(o, "IHDR", ihdr, 13);
    if (type == 3) {
        for (i = 0; i < 256; i++) {
            unsigned char c[3] = {0, 0, 0};
            for (j = 0; j < 8; j++) c[0] |= (unsigned char)(((i >> (3 * j)) & 1) << (7 - j)), c[1] |= (unsigned char)(((i >> (3 * j + 1)) & 1) << (7 - j)),
                                     c[2] |= (unsigned char)(((i >> (3 * j + 2)) & 1) << (7 - j));
            memcpy(plte + 3 * i, c, 3);
            trns[i] = (unsigned char)(i == 255 ? 0 : 255);
        }
        chunk(o, "PLTE", plte, (size_t)3 << depth);
        chunk(o, "tRNS", trns, (size_t)1 << depth);
    }
    zn = zlib_stored(raw, n, z);
    chunk(o, "IDAT", z, zn);
    chunk(o, "IEND", NULL, 0);
    CHECK(o->n <= (int)sizeof o->b);
}

static void make_kinds(void) {
    static unsigned char rgb[W * H * 3];
    size_t n = 0;
    unsigned char *jpg;
    int i;
    png_labels(&masks[K_GREY8], K_GREY8, 0, 8, W, H);
    png_labels(&masks[K_PAL8], K_PAL8, 3, 8, W, H);
    png_labels(&masks[K_PAL4], K_PAL4, 3, 4, W, H);
    png_labels(&masks[K_PAL2], K_PAL2, 3, 2, W, H);
    png_labels(&masks[K_PAL1], K_PAL1, 3, 1, W, H);
    png_labels(&masks[K_GREY1], K_GREY1, 0, 1, W, H);
    png_labels(&masks[K_GREY16], K_GREY16, 0, 16, W, H);
    for (i = 0; i < W * H * 3; i++) rgb[i] = (unsigned char)(i % 3 ? 0 : 1); /* "label 1" in red */
    masks[K_RGB].n = masks[K_GREYA].n = masks[K_JPEG].n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &masks[K_RGB], W, H, 3, rgb, W * 3) != 0);
    CHECK(stbi_write_png_to_func(t_to_mem, &masks[K_GREYA], W, H, 2, rgb, W * 2) != 0);
    /* a grey JPEG (stb_image_write's JPEG writer trips UBSan's shift check: one of the test files) */
    jpg = t_slurp("tests/data/image/gray-rst1-50x30.jpg", &n);
    CHECK(jpg != NULL && n <= sizeof masks[K_JPEG].b);
    if (jpg && n <= sizeof masks[K_JPEG].b) memcpy(masks[K_JPEG].b, jpg, n), masks[K_JPEG].n = (int)n;
    free(jpg);
}

/* m holds kind k's labels, flipped when flip is set. */
static int labels_are(const unsigned char *m, size_t stride, int k, int flip) {
    int x, y;
    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++) {
            unsigned want = label_at(k, flip ? W - 1 - x : x, y), got = m[(size_t)y * stride + (size_t)x];
            if (got != want) return printf("  kind %d (%d,%d): %u, want %u\n", k, x, y, got, want), 0;
        }
    return 1;
}

/* ---- the library ---- */

static void test_decode_rule(void) {
    char msg[256];
    int k;
    size_t cut;
    for (k = 0; k < NK; k++) {
        recio_image m;
        recio_err e = t_mask_decode(&m, masks[k].b, (size_t)masks[k].n, msg, sizeof msg);
        if (k < NGOOD) {
            CHECK_EQ_INT(e, RECIO_OK);
            if (e == RECIO_OK) {
                CHECK(m.width == W && m.height == H && m.channels == 1 && m.dtype == RECIO_U8 && m.layout == RECIO_HWC);
                CHECK(labels_are((const unsigned char *)m.data, m.stride, k, 0));
            } else {
                printf("  kind %d: %s\n", k, msg);
            }
            recio_image_free(&m);
        } else {
            CHECK_EQ_INT(e, RECIO_ERR_DECODE);
            CHECK(m.data == NULL && strncmp(msg, "mask: ", 6) == 0 && strstr(msg, refusal[k]) != NULL);
            if (!strstr(msg, refusal[k])) printf("  kind %d: %s\n", k, msg);
        }
    }
    /* damaged: every cut of a palette mask is an error, never a crash or made-up labels */
    for (cut = 0; cut < (size_t)masks[K_PAL8].n; cut++) {
        recio_image m;
        recio_err e = t_mask_decode(&m, masks[K_PAL8].b, cut, msg, sizeof msg);
        CHECK(e == RECIO_ERR_DECODE && m.data == NULL && strncmp(msg, "mask: ", 6) == 0);
    }
    CHECK(t_mask_decode(NULL, masks[0].b, 10, msg, sizeof msg) == RECIO_ERR_ARG);
}

/* ---- segmentation records: the iterator, and recio verify --decode ---- */

/* A record of the W x H image (an RGB PNG) with mask bytes m (m_n of them) and its tail; returns its offset. */
static uint64_t put_record(recio_writer *w, uint64_t id, const unsigned char *m, size_t m_n, int bad_tail) {
    static unsigned char rgb[W * H * 3];
    static t_mem_out img;
    unsigned char *r;
    uint64_t at = recio_writer_tell(w);
    float label = (float)id;
    size_t n;
    memset(rgb, 90, sizeof rgb);
    img.n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &img, W, H, 3, rgb, W * 3) != 0);
    r = (unsigned char *)malloc(64 + (size_t)img.n + m_n + 8);
    n = recio_irecord_pack_header(r, &label, 1, id, 0);
    memcpy(r + n, img.b, (size_t)img.n), n += (size_t)img.n;
    memcpy(r + n, m, m_n), n += m_n;
    n += recio_irecord_mask_tail(r + n, m_n);
    if (bad_tail) r[n - 8] ^= 0x40; /* the length no longer fits: no mask is found */
    CHECK(recio_writer_write(w, r, n) == RECIO_OK);
    free(r);
    return at;
}

/* One record per kind, ids 0..NK-1: every good kind comes out with its labels (flipped by the
   spec), every other is refused naming the record's offset and the kind, left out and counted with
   skip_bad; 0 and 2 workers alike. */
static void test_iterator(void) {
    char path[128], words[96];
    uint64_t off[NK];
    recio_writer *w = NULL;
    unsigned k, workers;
    snprintf(path, sizeof path, "%s/kinds.rec", dir);
    CHECK(recio_writer_open(&w, path) == RECIO_OK);
    if (!w) return;
    for (k = 0; k < NK; k++) off[k] = put_record(w, k, masks[k].b, (size_t)masks[k].n, 0);
    CHECK(recio_writer_close(w) == RECIO_OK);
    for (workers = 0; workers <= 2; workers += 2) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_batch b;
        const recio_iter_bad *bad = NULL;
        unsigned nbad = 0, got = 0;
        recio_err e = RECIO_OK;
        memset(&d, 0, sizeof d);
        d.uris = path, d.item.spec = "flip", d.run.batch = 1, d.labels.masks = 1, d.run.workers = workers;
        CHECK(recio_iter_open(&it, &d) == RECIO_OK);
        while (it && (e = recio_iter_next(it, &b)) == RECIO_OK) got++;
        snprintf(words, sizeof words, "offset %llu: mask: a 1-bit grey PNG", (unsigned long long)off[K_GREY1]);
        CHECK(it && e == RECIO_ERR_DECODE && got == NGOOD && strstr(recio_iter_errmsg(it), words) != NULL);
        recio_iter_close(it);
        d.run.skip_bad = 1;
        CHECK(recio_iter_open(&it, &d) == RECIO_OK);
        for (got = 0; it && (e = recio_iter_next(it, &b)) == RECIO_OK;) { /* a batch whose record is left out has none */
            CHECK(b.count + b.skipped == 1 && b.masks != NULL);
            if (b.count != 1) continue;
            CHECK(b.ids[0] == got && labels_are(b.masks, W, (int)b.ids[0], 1));
            got++;
        }
        CHECK(e == RECIO_END && got == NGOOD);
        CHECK(it && skipped_of(it, &bad, &nbad) == NK - NGOOD && nbad == NK - NGOOD);
        for (k = 0; k < nbad; k++) CHECK(bad[k].offset == off[NGOOD + k] && strstr(bad[k].what, refusal[NGOOD + k]) != NULL);
        recio_iter_close(it);
    }
}

/* recio verify --decode names each record whose mask the iterator would refuse, by offset: garbage
   after a PNG signature, a cut mask, an RGB one, one of the wrong size, a tail whose length is
   damaged, a 1-bit grey one, a JPEG one (which the record format cannot hold: named all the same);
   the grey and palette masks pass. */
static void test_verify(void) {
    static const unsigned char junk[40] = "\x89PNG\r\n\x1a\nthis is not the rest of a PNG";
    static t_mem_out small;
    char path[128], args[256], out[4096], want[160];
    uint64_t off[9];
    recio_writer *w = NULL;
    int i;
    if (!t_recio_tool()) return;
    png_labels(&small, K_GREY8, 0, 8, W / 2, H / 2);
    snprintf(path, sizeof path, "%s/verify.rec", dir);
    CHECK(recio_writer_open(&w, path) == RECIO_OK);
    if (!w) return;
    off[0] = put_record(w, 0, masks[K_GREY8].b, (size_t)masks[K_GREY8].n, 0);
    off[1] = put_record(w, 1, masks[K_PAL8].b, (size_t)masks[K_PAL8].n, 0);
    off[2] = put_record(w, 2, junk, sizeof junk, 0);
    off[3] = put_record(w, 3, masks[K_PAL8].b, (size_t)masks[K_PAL8].n / 2, 0);
    off[4] = put_record(w, 4, masks[K_RGB].b, (size_t)masks[K_RGB].n, 0);
    off[5] = put_record(w, 5, small.b, (size_t)small.n, 0);
    off[6] = put_record(w, 6, masks[K_GREY8].b, (size_t)masks[K_GREY8].n, 1);
    off[7] = put_record(w, 7, masks[K_GREY1].b, (size_t)masks[K_GREY1].n, 0);
    off[8] = put_record(w, 8, masks[K_JPEG].b, (size_t)masks[K_JPEG].n, 0);
    CHECK(recio_writer_close(w) == RECIO_OK);
    snprintf(args, sizeof args, "verify --decode %s", path);
    CHECK_EQ_INT(t_recio_capture(args, 60, out, sizeof out), 1);
    for (i = 0; i < 2; i++) {
        snprintf(want, sizeof want, "offset %llu:", (unsigned long long)off[i]);
        CHECK(strstr(out, want) == NULL);
    }
    for (i = 2; i < 9; i++) {
        static const char *const what[9] = {"", "", "mask: bad PNG header", "mask: truncated PNG", "mask: an 8-bit RGB PNG",
                                            "mask: 8x6, the image is 16x12", "mask: the record ends in a mask tail (\"RMSK\") that holds no mask",
                                            "mask: a 1-bit grey PNG", "mask: a JPEG, not a label mask"};
        snprintf(want, sizeof want, "%s: offset %llu: %s", path, (unsigned long long)off[i], what[i]);
        if (!strstr(out, want)) printf("  want '%s' in:\n%s", want, out), CHECK(0);
    }
    CHECK(strstr(out, "9 records") != NULL && strstr(out, "7 that do not decode") != NULL);
}

/* recio show lays each label's VOC colour over the image, (pixel + colour + 1) / 2, labels 0 and 255
   left alone (the rule tests/test_segment.c checks for grey masks): a palette mask's index 1 must be
   drawn as label 1 (the palette read as colours made it 38); a 1-bit grey mask is refused by name. */
static void test_show(void) {
    char path[128], args[512], out[1024];
    recio_writer *w = NULL;
    recio_image sheet = {0};
    size_t n = 0;
    unsigned char *png;
    int x, y, c, j, bad = 0;
    if (!t_recio_tool()) return;
    snprintf(path, sizeof path, "%s/show.rec", dir);
    CHECK(recio_writer_open(&w, path) == RECIO_OK);
    if (!w) return;
    put_record(w, 0, masks[K_PAL8].b, (size_t)masks[K_PAL8].n, 0);
    CHECK(recio_writer_close(w) == RECIO_OK);
    snprintf(args, sizeof args, "show %s %s/sheet.png --n 1 --tile %d", path, dir, W);
    CHECK_EQ_INT(t_recio_capture(args, 60, out, sizeof out), 0);
    snprintf(args, sizeof args, "%s/sheet.png", dir);
    png = t_slurp(args, &n);
    CHECK(png && recio_image_decode(&sheet, png, n, 3) == RECIO_OK);
    free(png);
    for (y = 0; sheet.data && y < H; y++) /* the tile is W square, the image centred in it, 2 pixels in */
        for (x = 0; x < W; x++) {
            unsigned l = label_at(K_PAL8, x, y);
            unsigned char col[3] = {0, 0, 0};
            for (j = 0; j < 8; j++)
                for (c = 0; c < 3; c++) col[c] |= (unsigned char)(((l >> (3 * j + c)) & 1) << (7 - j));
            for (c = 0; c < 3; c++)
                bad += (int)recio_image_get(&sheet, 2 + x, 2 + (W - H) / 2 + y, c) != (l == 0 || l == 255 ? 90 : (90 + col[c] + 1) / 2);
        }
    CHECK(sheet.data && bad == 0);
    recio_image_free(&sheet);
    CHECK(recio_writer_open(&w, path) == RECIO_OK);
    if (!w) return;
    put_record(w, 0, masks[K_GREY1].b, (size_t)masks[K_GREY1].n, 0);
    CHECK(recio_writer_close(w) == RECIO_OK);
    snprintf(args, sizeof args, "show %s %s/sheet.png --n 1 --tile %d", path, dir, W);
    t_recio_capture(args, 60, out, sizeof out);
    CHECK(strstr(out, "mask: a 1-bit grey PNG") != NULL);
}

/* ---- the command: apply --mask, pack --mask-root ---- */

static void write_file(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) CHECK(fwrite(b, 1, n, f) == n), fclose(f);
}

/* The image file and each kind's mask file in dir. */
static void write_files(void) {
    static unsigned char rgb[W * H * 3];
    static t_mem_out img;
    char path[160];
    int k;
    memset(rgb, 90, sizeof rgb);
    img.n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &img, W, H, 3, rgb, W * 3) != 0);
    snprintf(path, sizeof path, "%s/img.png", dir);
    write_file(path, img.b, (size_t)img.n);
    for (k = 0; k < NK; k++) {
        snprintf(path, sizeof path, "%s/mask%d.png", dir, k);
        write_file(path, masks[k].b, (size_t)masks[k].n);
    }
}

/* recio apply --spec flip --mask: the good kinds' labels flipped in the grey PNG it writes (read
   back with stb through recio_image_decode); the others exit 1 naming the file and the kind. */
static void test_apply(void) {
    char args[512], out[1024], path[160], want[160];
    int k;
    if (!t_recio_tool()) return;
    write_files();
    for (k = 0; k < NK; k++) {
        int rc;
        snprintf(path, sizeof path, "%s/out%d.png", dir, k);
        remove(path);
        snprintf(args, sizeof args, "apply --spec flip --mask %s/mask%d.png --mask-out %s %s/img.png %s/o.png", dir, k, path, dir, dir);
        rc = t_recio_capture(args, 60, out, sizeof out);
        if (k < NGOOD) {
            size_t n = 0;
            unsigned char *b = t_slurp(path, &n);
            recio_image m = {0};
            CHECK(rc == 0 && b != NULL);
            CHECK(b && recio_image_decode(&m, b, n, 1) == RECIO_OK && m.width == W && m.height == H &&
                  labels_are((const unsigned char *)m.data, m.stride, k, 1));
            recio_image_free(&m);
            free(b);
        } else {
            snprintf(want, sizeof want, "mask%d.png: offset 0: mask: %s", k, refusal[k]);
            CHECK_EQ_INT(rc, 1);
            if (!strstr(out, want)) printf("  want '%s' in: %s", want, out), CHECK(0);
        }
    }
}

/* recio pack --mask-root: the refused kinds are skipped, named; the packed records' masks read by
   the iterator are the labels, as stored (a palette mask's own bytes) and after --resize 6 (an exact
   halving: pixel (x, y) takes source (2x + 1, 2y + 1), by nearest neighbour, stored as a grey PNG). */
static void test_pack(void) {
    char args[512], out[4096], path[160], want[160];
    FILE *f;
    int k, resize;
    if (!t_recio_tool()) return;
    write_files();
    snprintf(path, sizeof path, "%s/seg.lst", dir);
    f = fopen(path, "w");
    CHECK(f != NULL);
    for (k = 0; f && k < NK; k++) fprintf(f, "%d\t%d\timg.png\tmask%d.png\n", k, k, k);
    if (f) fclose(f);
    for (resize = 0; resize < 2; resize++) {
        recio_iter_desc d;
        recio_iter *it = NULL;
        recio_batch b;
        unsigned got = 0;
        snprintf(args, sizeof args, "pack --quiet --encoding .png%s --mask-root %s %s/seg %s", resize ? " --resize 6" : "", dir, dir, dir);
        CHECK_EQ_INT(t_recio_capture(args, 60, out, sizeof out), 0);
        for (k = NGOOD; k < NK; k++) {
            snprintf(want, sizeof want, "mask%d.png: %s", k, refusal[k]);
            if (!strstr(out, want)) printf("  want '%s' in: %s", want, out), CHECK(0);
        }
        snprintf(path, sizeof path, "%s/seg.rec", dir);
        memset(&d, 0, sizeof d);
        d.uris = path, d.item.spec = "identity", d.run.batch = 1, d.labels.masks = 1;
        CHECK(recio_iter_open(&it, &d) == RECIO_OK);
        while (it && recio_iter_next(it, &b) == RECIO_OK) {
            int x, y, kk = (int)b.labels[0], bad = 0;
            CHECK(kk == (int)got && b.item.width == (resize ? W / 2 : W) && b.item.height == (resize ? H / 2 : H));
            for (y = 0; y < b.item.height && !bad; y++)
                for (x = 0; x < b.item.width && !bad; x++)
                    bad = b.masks[y * b.item.width + x] != label_at(kk, resize ? 2 * x + 1 : x, resize ? 2 * y + 1 : y);
            if (bad) printf("  kind %d (resize %d): wrong labels\n", kk, resize), CHECK(0);
            got++;
        }
        CHECK_EQ_INT(got, NGOOD);
        recio_iter_close(it);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/recio-masks-XXXXXX");
    CHECK(t_mkdtemp(dir) != NULL);
    make_kinds();
    RUN(test_decode_rule);
    RUN(test_iterator);
    RUN(test_verify);
    RUN(test_show);
    RUN(test_apply);
    RUN(test_pack);
    t_rmtree(dir);
    return t_done("mask_kinds");
}
