/* recio unpack (records back to image files + a .lst) and recio show (a labelled contact sheet PNG). */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "pack.h"
#include "pack_codec.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Reader over every image record of a file; reports its own errors. Returns 1 for a record, 0 at the
   end, -1 after an error was printed. */
static int next_image(recio_reader *r, const char *path, recio_irecord *ir, uint64_t *offset) {
    recio_record rec;
    recio_err e = recio_reader_next(r, &rec);
    if (e == RECIO_END) return 0;
    if (e != RECIO_OK) return cli_err("%s", recio_reader_errmsg(r)), -1;
    *offset = rec.offset;
    if (recio_irecord_unpack(ir, rec.data, rec.size) != RECIO_OK)
        return cli_err("%s: offset %llu: record of %llu bytes is too short for its image header", path,
                       (unsigned long long)rec.offset, (unsigned long long)rec.size), -1;
    return 1;
}

/* "0.5" or "1,2,3": the labels of a record, %.9g so they read back as the same floats. */
static void format_labels(const recio_irecord *ir, char *buf, size_t cap, const char *sep) {
    uint32_t i;
    size_t at = 0;
    buf[0] = 0;
    for (i = 0; i < ir->nlabels && at < cap; i++) {
        float v = recio_load_f32le((const char *)ir->all_labels + 4 * (size_t)i);
        at += (size_t)snprintf(buf + at, cap - at, "%s%.9g", i ? sep : "", (double)v);
    }
}

static const char *image_ext(const unsigned char *b, size_t n) {
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return ".jpg";
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return ".png";
    return ".bin";
}

/* DIR/NAME.lst where FILE.rec's base name gives NAME. */
static char *unpack_lst_name(const char *rec, const char *dir) {
    const char *slash = strrchr(rec, '/'), *base = slash ? slash + 1 : rec;
    char *name = pack_cat(base, ""), *out;
    size_t n;
    if (!name) return NULL;
    n = strlen(name);
    if (n > 4 && strcmp(name + n - 4, ".rec") == 0) name[n - 4] = 0;
    out = pack_join(dir, name);
    free(name);
    name = out ? pack_cat(out, ".lst") : NULL;
    free(out);
    return name;
}

static const char unpack_help[] =
    "usage: recio unpack [--force] FILE.rec DIR\n\n"
    "Write each image record's image to DIR/ID.jpg (.png, or .bin when the bytes are neither), ID being\n"
    "the record header's id, and the labels to DIR/NAME.lst (NAME from FILE.rec) as\n"
    "'ID<TAB>label...<TAB>ID.jpg' lines, so 'recio pack --pass-through DIR/NAME DIR' packs them again.\n"
    "A segmentation record's label mask goes to DIR/ID.mask.png, named in a last column of its line\n"
    "('...<TAB>ID.jpg<TAB>ID.mask.png'): 'recio pack --pass-through --mask-root DIR DIR/NAME DIR'.\n"
    "DIR is created when missing; ids are taken to be unique, as im2rec writes them.\n"
    "Nothing is written over: an existing DIR/NAME.lst that is not unpack's own list (a list of source\n"
    "paths, say) stops the command before it writes anything, and an existing DIR/ID.jpg stops it\n"
    "unless DIR holds unpack's own NAME.lst (an earlier unpack of NAME: written again). Each file is\n"
    "written whole (a temporary file renamed), NAME.lst last; a run that fails removes the files it\n"
    "made, so DIR holds no half of an unpack.\n\n"
    "  --force    replace existing files in DIR whatever they hold (FILE.rec itself never)\n\n"
    "example: recio unpack val.rec val_images/ && ls val_images | head\n";

typedef struct unpack_run {
    const char *in, *dir;
    int force;       /* replace DIR's files: --force, or DIR holds an earlier unpack of this NAME */
    cli_out lst;
    char *made;      /* the names of the files this run made, NUL-separated, to remove on failure */
    size_t made_n, made_cap;
} unpack_run;

/* Remember a file this run made (name NUL-ended, k bytes with the NUL); -1 when out of memory. */
static int unpack_made(unpack_run *u, const char *name, size_t k) {
    if (u->made_n + k > u->made_cap) {
        char *m = (char *)realloc(u->made, 2 * u->made_cap + k + 4096);
        if (!m) return cli_err("out of memory"), -1;
        u->made = m, u->made_cap = 2 * u->made_cap + k + 4096;
    }
    memcpy(u->made + u->made_n, name, k);
    u->made_n += k;
    return 0;
}

/* One record's file DIR/NAME: written whole, and remembered when it is new. */
/* One record's file DIR/NAME: written whole, and remembered when it is new. 0 or the exit status. */
static int unpack_file(unpack_run *u, const char *name, const void *data, size_t n) {
    char *file = pack_join(u->dir, name);
    size_t k = strlen(name) + 1;
    cli_out o;
    int rc, fresh;
    if (!file) return cli_err("out of memory"), CLI_EXIT_ERR;
    if ((rc = cli_out_claim(&o, file, CLI_KIND_NONE, &u->in, 1, u->force)) != 0) return free(file), rc;
    fresh = !o.replace;
    if (fresh && unpack_made(u, name, k)) rc = CLI_EXIT_ERR;
    o.no_sync = 1; /* a sync per image would double the time; the list, which names them, is synced */
    if (!rc && cli_out_commit_bytes(&o, data, n) != 0) {
        rc = CLI_EXIT_ERR;
        if (fresh) u->made_n -= k; /* never made */
    }
    cli_out_free(&o);
    free(file);
    return rc;
}

/* A failed run: the files it made go (DIR's other files, and the ones it replaced, stay). */
static void unpack_undo(unpack_run *u) {
    size_t at;
    for (at = 0; at < u->made_n; at += strlen(u->made + at) + 1) {
        char *file = pack_join(u->dir, u->made + at);
        if (file) cli_remove(file); /* through its filesystem: s3:// too */
        free(file);
    }
}

/* Every record's files, the list's lines kept; 0 or the exit status. */
static int unpack_all(recio_reader *r, unpack_run *u, unsigned long long *count) {
    recio_irecord ir;
    uint64_t off;
    int k, rc;
    while ((k = next_image(r, u->in, &ir, &off)) == 1) {
        char name[64], mask[64], labels[4096];
        snprintf(name, sizeof name, "%llu%s", (unsigned long long)ir.id, image_ext((const unsigned char *)ir.image, ir.image_size));
        snprintf(mask, sizeof mask, "%llu.mask.png", (unsigned long long)ir.id);
        if ((rc = unpack_file(u, name, ir.image, ir.image_size)) != 0) return rc;
        if (ir.mask && (rc = unpack_file(u, mask, ir.mask, ir.mask_size)) != 0) return rc; /* the PNG bytes as stored */
        format_labels(&ir, labels, sizeof labels, "\t");
        cli_out_printf(&u->lst, "%llu\t%s\t%s%s%s\n", (unsigned long long)ir.id, labels, name, ir.mask ? "\t" : "", ir.mask ? mask : "");
        (*count)++;
    }
    return k ? CLI_EXIT_ERR : 0;
}

CLI_COMMAND(cli_cmd_unpack) {
    unpack_run u;
    char *lst_path = NULL;
    recio_reader *r = NULL;
    unsigned long long count = 0;
    int i, rc = CLI_EXIT_ERR, made_dir;
    memset(&u, 0, sizeof u);
    for (i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return fputs(unpack_help, stdout), 0;
        if (strcmp(argv[i], "--force") == 0) u.force = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage_error("unpack", "unknown option '%s'", argv[i]);
        else if (!u.in) u.in = argv[i];
        else if (!u.dir) u.dir = argv[i];
        else return cli_usage_error("unpack", "unexpected argument '%s'", argv[i]);
    }
    if (!u.in || !u.dir) return cli_usage_error("unpack", "want FILE.rec and DIR");
    if (!(lst_path = unpack_lst_name(u.in, u.dir))) return cli_err("out of memory"), CLI_EXIT_ERR;
    made_dir = cli_is_local(u.dir) && mkdir(u.dir, 0777) == 0; /* an object store has no folders to make */
    if (!made_dir && cli_is_local(u.dir) && errno != EEXIST) cli_err("%s: cannot create: %s", u.dir, strerror(errno));
    else if ((rc = cli_out_claim(&u.lst, lst_path, CLI_KIND_UNPACKED, &u.in, 1, u.force)) == 0 &&
             (rc = cli_open_reader(&r, u.in) ? CLI_EXIT_ERR : 0) == 0) {
        u.force |= u.lst.replace; /* DIR/NAME.lst is an earlier unpack's (or --force): its files may go */
        if ((rc = unpack_all(r, &u, &count)) == 0 && cli_out_commit(&u.lst)) rc = CLI_EXIT_ERR;
    }
    if (rc) unpack_undo(&u);
    if (rc && made_dir) rmdir(u.dir);
    if (!rc) printf("%s: %llu images written to %s, labels in %s\n", u.in, count, u.dir, lst_path);
    cli_out_free(&u.lst);
    free(u.made);
    free(lst_path);
    recio_reader_close(r);
    return rc;
}

/* ---- show: a grid of tiles, each the record's image fitted into TILE x TILE, "id:label" under it -- */

/* A 5x7 bitmap font of our own: the characters labels are made of. Row bits: 0x10 is the left column. */
static const struct glyph {
    char ch;
    unsigned char rows[7];
} font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}}, {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}}, {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}}, {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}}, {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}}, {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}}, {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}}, {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}}, {'e', {0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E}},
    {'n', {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}}, {'a', {0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F}},
    {'i', {0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E}}, {'f', {0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}},
};

#define SHOW_PAD 2   /* border around each tile */
#define SHOW_LINE 9       /* a line of label text under a tile: 7-pixel glyphs and 2 pixels below */
#define SHOW_MAX_LINES 8  /* the longest label wraps onto at most this many lines */
#define SHOW_TEXT 400     /* "id:labels" characters kept (a detection record has many labels) */

typedef struct sheet {
    int w, h, tile, cols;
    unsigned char *px;          /* RGB */
    const recio_transform *spec; /* NULL: the images as decoded */
    uint64_t seed;
    int nbad;                    /* records drawn as a red cross */
    int lines;                   /* label lines under each tile: the longest label's, wrapped */
} sheet;

/* Height of a cell's label band: 2 pixels above the text, SHOW_LINE per line. */
static int band(const sheet *s) { return 2 + SHOW_LINE * s->lines; }

static const struct glyph *glyph_of(char c) {
    size_t i;
    for (i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].ch == c) return &font[i];
    return glyph_of('?');
}

static void put_px(sheet *s, int x, int y, const unsigned char rgb[3]) {
    if (x >= 0 && y >= 0 && x < s->w && y < s->h) memcpy(s->px + ((size_t)y * s->w + x) * 3, rgb, 3);
}

/* Text at (x, y), clipped to max_w pixels; 6 pixels per character. */
static void draw_text(sheet *s, int x, int y, int max_w, const char *t) {
    static const unsigned char ink[3] = {240, 240, 240};
    int cx, r, b;
    for (cx = 0; *t && cx + 5 <= max_w; t++, cx += 6) {
        const struct glyph *g = glyph_of(*t);
        for (r = 0; r < 7; r++)
            for (b = 0; b < 5; b++)
                if (g->rows[r] & (0x10 >> b)) put_px(s, x + cx + b, y + r, ink);
    }
}

/* Fit img (u8 HWC, 3 channels) into the tile of cell k (aspect kept, centred). */
static void draw_tile(sheet *s, int k, const recio_image *img) {
    int cw = s->tile + 2 * SHOW_PAD, ch = cw + band(s);
    int x0 = (k % s->cols) * cw + SHOW_PAD, y0 = (k / s->cols) * ch + SHOW_PAD;
    int x, y, ox = (s->tile - img->width) / 2, oy = (s->tile - img->height) / 2;
    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++)
            put_px(s, x0 + ox + x, y0 + oy + y, (const unsigned char *)img->data + y * img->stride + (size_t)x * 3);
}

static void draw_broken(sheet *s, int k) {
    static const unsigned char red[3] = {160, 30, 30};
    int cw = s->tile + 2 * SHOW_PAD, ch = cw + band(s), i;
    int x0 = (k % s->cols) * cw + SHOW_PAD, y0 = (k / s->cols) * ch + SHOW_PAD;
    for (i = 0; i < s->tile; i++) { /* a red cross: this record's image does not decode */
        put_px(s, x0 + i, y0 + i, red);
        put_px(s, x0 + s->tile - 1 - i, y0 + i, red);
    }
}

/* "id:labels" of a record, as shown under its tile. */
static void label_text(const recio_irecord *ir, char *text, size_t cap) {
    int n = snprintf(text, cap, "%llu:", (unsigned long long)ir->id);
    if (n > 0 && (size_t)n < cap) format_labels(ir, text + n, cap - (size_t)n, ",");
}

/* Characters per line of a tile, and the lines a text takes wrapped (1 at least, SHOW_MAX_LINES at most). */
static int line_chars(int tile) { return (tile + 1) / 6 > 0 ? (tile + 1) / 6 : 1; }
static int text_lines(const char *text, int tile) {
    int n = ((int)strlen(text) + line_chars(tile) - 1) / line_chars(tile);
    return n < 1 ? 1 : n > SHOW_MAX_LINES ? SHOW_MAX_LINES : n;
}

/* The label wrapped onto the band's lines (a detection record's labels are long); what does not fit
   on the last line is cut. */
static void draw_label(sheet *s, int k, const recio_irecord *ir) {
    int cw = s->tile + 2 * SHOW_PAD, ch = cw + band(s), per = line_chars(s->tile), i;
    char text[SHOW_TEXT], line[SHOW_TEXT];
    size_t len;
    label_text(ir, text, sizeof text);
    len = strlen(text);
    for (i = 0; i < s->lines && (size_t)(i * per) < len; i++) {
        snprintf(line, sizeof line, "%.*s", per, text + (size_t)i * per);
        draw_text(s, (k % s->cols) * cw + SHOW_PAD, (k / s->cols) * ch + SHOW_PAD + s->tile + 2 + i * SHOW_LINE, s->tile, line);
    }
}

static int fit_tile(recio_image *img, int tile) {
    int w = img->width, h = img->height;
    if (w >= h) return codec_resize(img, tile, h * tile / w > 0 ? h * tile / w : 1, RECIO_AREA);
    return codec_resize(img, w * tile / h > 0 ? w * tile / h : 1, tile, RECIO_AREA);
}

/* Any transform output (u8/f32/i8/f16, HWC/CHW, 1-4 channels) as u8 RGB HWC to look at: u8 as is,
   other types stretched from their min..max over the image to 0..255 (a normalized tensor then shows
   its content, not a black square); gray repeated, alpha dropped. */
static int displayable(const recio_image *in, recio_image *out) {
    float lo = 0, hi = 255, v;
    int x, y, c, n = in->channels < 3 ? 1 : 3;
    if (in->dtype != RECIO_U8) {
        lo = hi = recio_image_get(in, 0, 0, 0);
        for (y = 0; y < in->height; y++)
            for (x = 0; x < in->width; x++)
                for (c = 0; c < n; c++) {
                    v = recio_image_get(in, x, y, c);
                    lo = v < lo ? v : lo, hi = v > hi ? v : hi;
                }
        if (hi <= lo) hi = lo + 1;
    }
    if (recio_image_alloc(out, in->width, in->height, 3, RECIO_U8, RECIO_HWC, NULL) != RECIO_OK) return -1;
    for (y = 0; y < in->height; y++)
        for (x = 0; x < in->width; x++)
            for (c = 0; c < 3; c++)
                recio_image_set(out, x, y, c, (recio_image_get(in, x, y, n == 1 ? 0 : c) - lo) * 255.0f / (hi - lo));
    return 0;
}

/* A record's detection objects (MXNet's layout: recio_det_layout_of), 5 floats each, without the
   class -1 padding; none when its labels are not that layout (a classification record). */
typedef struct det_objects {
    float *obj;
    int count;
} det_objects;

static int record_objects(const recio_irecord *ir, det_objects *d) {
    uint32_t n = ir->nlabels, i, k;
    float *l = (float *)malloc((n ? n : 1) * sizeof(float));
    recio_det_layout lay;
    d->obj = NULL, d->count = 0;
    if (!l) return -1;
    for (i = 0; i < n; i++) l[i] = recio_load_f32le((const char *)ir->all_labels + 4 * (size_t)i);
    if (recio_det_layout_of(l, n, &lay) == RECIO_OK && lay.count && (d->obj = (float *)malloc((size_t)lay.count * 5 * sizeof(float))))
        for (k = 0; k < lay.count; k++) {
            const float *o = l + lay.header_width + (size_t)k * lay.object_width;
            if (o[0] >= 0) memcpy(d->obj + (size_t)5 * (size_t)d->count++, o, 5 * sizeof(float));
        }
    free(l);
    return 0;
}

/* The record's image as the model would get it: decoded, through the transform (when given, with the
   seed the iterator gives this record in epoch 0; detection boxes move with it), made displayable
   and fitted into a tile. */
/* Label l's colour: the PASCAL VOC colour map (bit i of l goes to bit 7 - i/3 of red, green, blue
   in turn), so a sheet's colours mean what they mean in VOC's own masks. */
static void label_colour(unsigned l, unsigned char rgb[3]) {
    int i;
    rgb[0] = rgb[1] = rgb[2] = 0;
    for (i = 0; i < 8; i++)
        rgb[i % 3] |= (unsigned char)(((l >> i) & 1) << (7 - i / 3));
}

/* The mask over the tile: each pixel half its own colour, half its label's, (p + c + 1) / 2; labels
   0 (background) and 255 (ignore) leave the pixel alone. The mask is read by nearest neighbour at
   the tile's size, so label edges stay sharp. */
static void overlay_mask(recio_image *img, const recio_image *m) {
    int x, y, c;
    for (y = 0; y < img->height; y++) {
        const unsigned char *mr = (const unsigned char *)m->data + (size_t)((2 * (long long)y + 1) * m->height / (2 * (long long)img->height)) * m->stride;
        unsigned char *p = (unsigned char *)img->data + (size_t)y * img->stride;
        for (x = 0; x < img->width; x++, p += 3) {
            unsigned l = mr[(2 * (long long)x + 1) * m->width / (2 * (long long)img->width)];
            unsigned char col[3];
            if (l == 0 || l == 255) continue;
            label_colour(l, col);
            for (c = 0; c < 3; c++) p[c] = (unsigned char)((p[c] + col[c] + 1) / 2);
        }
    }
}

/* The record's image as the model would get it: decoded, through the transform (when given, with the
   seed the iterator gives this record in epoch 0; detection boxes and a segmentation mask move with
   it), made displayable and fitted into a tile, the mask laid over it. */
static int record_tile(const recio_irecord *ir, const recio_transform *t, uint64_t seed, int tile, recio_image *img,
                       det_objects *d, char *why, size_t cap) {
    recio_image dec, tr, mask, mtr;
    recio_apply_desc ad;
    char aw[RECIO_ERRMSG_SIZE];
    recio_err e;
    memset(&tr, 0, sizeof tr);
    memset(&mask, 0, sizeof mask);
    memset(&mtr, 0, sizeof mtr);
    memset(&ad, 0, sizeof ad);
    ad.boxes = ad.boxes_out = d->obj, ad.count = d->count, ad.count_out = &d->count;
    if (codec_decode(ir->image, ir->image_size, 3, 0, &dec, why, cap)) return -1;
    if (ir->mask && (codec_mask(ir->mask, ir->mask_size, &mask, why, cap) != RECIO_OK || mask.width != dec.width || mask.height != dec.height)) {
        if (mask.data) snprintf(why, cap, "mask: %dx%d, the image is %dx%d", mask.width, mask.height, dec.width, dec.height);
        recio_image_free(&dec), recio_image_free(&mask);
        return -1;
    }
    if (ir->mask) ad.mask = &mask, ad.mask_out = &mtr;
    ad.image = &dec, ad.out = &tr, ad.seed = recio_seed_for(seed, 0, ir->id), ad.errmsg = aw;
    if (t && (e = recio_transform_apply_desc(t, &ad)) != RECIO_OK) { /* "transform: the op's words" */
        snprintf(why, cap, "%.250s", strncmp(aw, "transform: boxes: ", 18) == 0 ? aw + 11 : aw[0] ? aw : recio_strerror(e));
        recio_image_free(&dec), recio_image_free(&mask);
        return -1;
    }
    e = displayable(t ? &tr : &dec, img) ? RECIO_ERR_NOMEM : RECIO_OK;
    recio_image_free(&dec);
    recio_image_free(&tr);
    if (e == RECIO_OK && fit_tile(img, tile) == 0) {
        if (ir->mask) overlay_mask(img, t ? &mtr : &mask);
        recio_image_free(&mask), recio_image_free(&mtr);
        return 0;
    }
    if (e == RECIO_OK) recio_image_free(img);
    recio_image_free(&mask), recio_image_free(&mtr);
    snprintf(why, cap, "out of memory");
    return -1;
}

/* v (an image coordinate, any float) as a pixel in [lo, hi]: casting a float outside int's range
   (or NaN, which gives lo) is undefined, so clamp first. */
static int clamp_px(float v, int lo, int hi) { return !(v > (float)lo) ? lo : v >= (float)hi ? hi : (int)v; }

/* Each box as an outline in its class's colour, the class number inside its top-left corner. The
   box is clipped to its image first, so an outline costs at most the image's perimeter (a box of
   +-1.7e7 took seconds to draw off the sheet) and never strays into another tile. A box with a NaN
   side, inverted, or wholly outside the image is not drawn. */
static void draw_boxes(sheet *s, int k, const recio_image *img, const det_objects *d) {
    static const unsigned char pal[6][3] = {{255, 64, 64}, {64, 220, 64}, {80, 140, 255}, {255, 220, 0}, {255, 0, 255}, {0, 230, 230}};
    int cw = s->tile + 2 * SHOW_PAD, ch = cw + band(s), i, j, w = img->width, h = img->height;
    int x0 = (k % s->cols) * cw + SHOW_PAD + (s->tile - w) / 2, y0 = (k / s->cols) * ch + SHOW_PAD + (s->tile - h) / 2;
    for (i = 0; i < d->count; i++) {
        const float *o = d->obj + 5 * (size_t)i;
        float l = o[1] * (float)w, t = o[2] * (float)h, r = o[3] * (float)w + 0.5f, b = o[4] * (float)h + 0.5f;
        const unsigned char *c = pal[isfinite(o[0]) ? (unsigned)fmodf(fabsf(o[0]), 6.0f) : 0];
        int a, top, e, f;
        char num[24];
        if (!(l < r && t < b) || !(r > 1 && b > 1 && l < (float)w && t < (float)h)) continue;
        a = x0 + clamp_px(l, 0, w - 1), top = y0 + clamp_px(t, 0, h - 1);
        e = x0 + clamp_px(r, 1, w) - 1, f = y0 + clamp_px(b, 1, h) - 1;
        for (j = a; j <= e; j++) put_px(s, j, top, c), put_px(s, j, f, c);
        for (j = top; j <= f; j++) put_px(s, a, j, c), put_px(s, e, j, c);
        snprintf(num, sizeof num, "%.9g", (double)o[0]);
        draw_text(s, a + 2, top + 2, e - a - 2, num);
    }
}

static void show_record(sheet *s, int k, const recio_irecord *ir, const char *path, uint64_t off) {
    recio_image img;
    det_objects d;
    char why[256] = "out of memory";
    int ok = record_objects(ir, &d) == 0;
    if (ok && record_tile(ir, s->spec, s->seed, s->tile, &img, &d, why, sizeof why) == 0) {
        draw_tile(s, k, &img);
        draw_boxes(s, k, &img, &d);
        recio_image_free(&img);
    } else {
        cli_err("%s: offset %llu: record id %llu: %s", path, (unsigned long long)off, (unsigned long long)ir->id, why);
        draw_broken(s, k);
        s->nbad++;
    }
    free(d.obj);
    draw_label(s, k, ir);
}

static const char show_help[] =
    "usage: recio show FILE.rec OUT.png [--n N] [--tile PX] [--cols C] [--spec SPEC [--seed S]] [--force]\n\n"
    "Draw the first N records (default 64) of FILE.rec as a contact sheet: each image fitted into a\n"
    "PX x PX tile (default 128; aspect kept), with 'id:label' under it, so you can look at what was\n"
    "packed. C columns (default: ceil(sqrt(count))); the PNG is C*(PX+4) wide and rows*(PX+6+9*L)\n"
    "high, L the lines the longest label needs wrapped at the tile's width (1 for short labels, at\n"
    "most 8).\n"
    "Records whose image does not decode get a red cross and a message on stderr; the sheet is still\n"
    "written, and the exit status is 1. Detection records (MXNet's layout: labels A, B, A-2 header\n"
    "floats, then B floats per object: class, xmin, ymin, xmax, ymax normalised) get each object's box\n"
    "drawn in its class's colour with the class number; with --spec the boxes move with the image.\n"
    "Segmentation records (a label mask after the image: 'recio pack --mask-root') get the mask laid\n"
    "over the tile: each labelled pixel half its colour, half its label's colour in PASCAL VOC's colour\n"
    "map, (pixel + colour + 1) / 2; labels 0 (background) and 255 (ignore) are left clear. With --spec\n"
    "the mask moves with the image (nearest neighbour).\n\n"
    "  --spec SPEC   run each image through a transform chain first (the spec of 'recio apply' and the\n"
    "                iterator), with the seed the iterator gives that record in epoch 0: what the model\n"
    "                will see. Float results (normalize) are stretched from their min..max to be seen.\n"
    "  --seed S      the iterator's seed (default 0); another seed shows other random choices\n"
    "  --force       replace an existing OUT.png that is not a PNG (OUT.png is never FILE.rec)\n"
    "OUT.png is written whole or not at all (a temporary file renamed); an existing PNG is replaced.\n\n"
    "example: recio show train.rec sheet.png --n 16 --tile 96\n"
    "         recio show train.rec aug.png --spec 'random_resized_crop(160) random_flip(0.5) color_jitter(0.4,0.4,0.4)'\n";

typedef struct show_opts {
    const char *in, *out, *spec;
    unsigned long long n, tile, cols, seed;
    int force;
} show_opts;

static int show_args(int argc, char **argv, show_opts *o) {
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        unsigned long long *v = strcmp(a, "--n") == 0 ? &o->n : strcmp(a, "--tile") == 0 ? &o->tile
                              : strcmp(a, "--cols") == 0 ? &o->cols : NULL;
        if (v) {
            if (i + 1 >= argc || cli_parse_u64(argv[++i], v) || *v < 1 || *v > 4096)
                return cli_usage_error("show", "%s wants a number from 1 to 4096", a);
        } else if (strcmp(a, "--seed") == 0) {
            if (i + 1 >= argc || cli_parse_u64(argv[++i], &o->seed)) return cli_usage_error("show", "--seed wants a whole number");
        } else if (strcmp(a, "--spec") == 0 && i + 1 < argc) o->spec = argv[++i];
        else if (strcmp(a, "--force") == 0) o->force = 1;
        else if (a[0] == '-' && a[1]) return cli_usage_error("show", "unknown option '%s'", a);
        else if (!o->in) o->in = a;
        else if (!o->out) o->out = a;
        else return cli_usage_error("show", "unexpected argument '%s'", a);
    }
    if (!o->in || !o->out) return cli_usage_error("show", "want FILE.rec and OUT.png");
    return 0;
}

/* Records to show: the first n, counted with a first pass so the sheet has the right size. */
static int count_records(const char *path, unsigned long long n, sheet *s, int *count) {
    recio_reader *r;
    recio_irecord ir;
    uint64_t off;
    int k = 0;
    char text[SHOW_TEXT];
    *count = 0;
    s->lines = 1;
    if (cli_open_reader(&r, path)) return -1;
    while ((unsigned long long)*count < n && (k = next_image(r, path, &ir, &off)) == 1) { /* and the lines labels need */
        int lines;
        label_text(&ir, text, sizeof text);
        if ((lines = text_lines(text, s->tile)) > s->lines) s->lines = lines;
        (*count)++;
    }
    recio_reader_close(r);
    return k < 0 ? -1 : 0;
}

static int draw_sheet(const char *path, sheet *s, int count) {
    recio_reader *r;
    recio_irecord ir;
    uint64_t off;
    int k;
    if (cli_open_reader(&r, path)) return -1;
    for (k = 0; k < count && next_image(r, path, &ir, &off) == 1; k++) show_record(s, k, &ir, path, off);
    recio_reader_close(r);
    return k == count ? 0 : -1;
}

static int write_sheet(const sheet *s, cli_out *out, int count) {
    recio_image img = recio_image_wrap(s->px, s->w, s->h, 3, RECIO_U8, RECIO_HWC, 0);
    unsigned char *png;
    size_t n;
    int bad;
    if (codec_encode(&img, 1, 0, 0, &png, &n)) return cli_err("%s: cannot encode PNG", out->path), -1;
    bad = cli_out_commit_bytes(out, png, n);
    if (!bad) printf("%s: %d records, %dx%d\n", out->path, count, s->w, s->h);
    free(png);
    return bad;
}

/* The sheet of o's records into out; 0 or the exit status. */
static int show_run(const show_opts *o, const recio_transform *t, cli_out *out) {
    sheet s;
    int count, rows, rc;
    memset(&s, 0, sizeof s);
    s.spec = t, s.seed = o->seed, s.tile = (int)o->tile;
    if (count_records(o->in, o->n, &s, &count) || (count == 0 && (cli_err("%s: no records to show", o->in), 1))) return CLI_EXIT_ERR;
    for (s.cols = 1; s.cols * s.cols < count; s.cols++) {}
    if (o->cols) s.cols = (int)o->cols < count ? (int)o->cols : count;
    rows = (count + s.cols - 1) / s.cols;
    s.w = s.cols * (s.tile + 2 * SHOW_PAD);
    s.h = rows * (s.tile + 2 * SHOW_PAD + band(&s));
    if ((double)s.w * s.h > (double)RECIO_MAX_PIXELS || !(s.px = (unsigned char *)malloc((size_t)s.w * s.h * 3)))
        return cli_err("%s: a %dx%d sheet is too large", o->out, s.w, s.h), CLI_EXIT_ERR;
    memset(s.px, 32, (size_t)s.w * s.h * 3);
    rc = draw_sheet(o->in, &s, count) || write_sheet(&s, out, count) ? CLI_EXIT_ERR : 0;
    if (!rc && s.nbad) /* the sheet shows them; the status must too, for scripts that check a dataset */
        rc = CLI_EXIT_ERR, cli_err("%s: %d of %d records shown do not decode (red crosses)", o->in, s.nbad, count);
    free(s.px);
    return rc;
}

CLI_COMMAND(cli_cmd_show) {
    show_opts o = {NULL, NULL, NULL, 64, 128, 0, 0, 0};
    recio_transform *t = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    recio_transform_desc td;
    cli_out out;
    int i, rc;
    for (i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) return fputs(show_help, stdout), 0;
    if ((rc = show_args(argc, argv, &o)) != 0) return rc;
    memset(&td, 0, sizeof td);
    td.errmsg = msg;
    if (o.spec && recio_transform_parse_desc(&t, o.spec, &td) != RECIO_OK) {
        rc = cli_usage_error("show", "%s", msg);
        return cli_spec_hint(msg), rc;
    }
    if ((rc = cli_out_claim(&out, o.out, CLI_KIND_PNG, &o.in, 1, o.force)) == 0) { /* before the work */
        rc = show_run(&o, t, &out);
        cli_out_free(&out);
    }
    recio_transform_free(t);
    return rc;
}
