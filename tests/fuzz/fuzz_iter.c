/* libFuzzer harness: the whole iterator over a dataset built from the input. Up to 8 records (small
   PNGs, or bytes that are no image), each with labels from the input: plain, MXNet's detection layout
   or any floats; a mask tail (a grey PNG of a few labels, or junk); then options from the input
   (detection, masks, MixUp/CutMix, cache, skip_bad, last_batch, shuffle buffer, an indexed shuffle,
   workers 0 or 1, label width and strictness, 1 or 3 channels), a path_imglist (made to match, or the
   input's text), a mean_img .npy (made to match, or the input's bytes), and a checkpoint: saved after
   some batches and restored into a second iterator, exactly (the next batches must then be the
   same), with one byte changed, or the input's bytes as the blob. Two epochs at most, so it ends.
   A crash, a sanitizer report, a leak, a hang, an open refused without a message, or a batch that
   breaks recio_batch's promises (count + pad <= batch, label counts, objects) is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "tests/image_write.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FI_FAIL() (fprintf(stderr, "fuzz_iter: check at line %d failed\n", __LINE__), __builtin_trap())
#define FI_RECS 8

typedef struct fi_in {
    const uint8_t *p;
    size_t n;
} fi_in;

static uint8_t fi_byte(fi_in *in) {
    uint8_t b = 0;
    if (in->n) b = *in->p++, in->n--;
    return b;
}

static char fi_rec[80], fi_idx[80], fi_lst[80], fi_npy[80];

typedef struct fi_spec {
    const char *spec;
    int f32, c_first, w, h; /* the item's shape, for a matching mean image */
} fi_spec;

static const fi_spec fi_specs[8] = {
    {"resize(4,4)", 0, 0, 4, 4},
    {"resize(4,4) float chw", 1, 1, 4, 4},
    {"random_resized_crop(4) random_flip(0.5) float chw", 1, 1, 4, 4},
    {"center_crop(2) resize(3,3)", 0, 0, 3, 3},
    {"random_flip(0.5) resize(4,3) float", 1, 0, 4, 3},
    {"rotate(15) resize(4,4) float chw", 1, 1, 4, 4},
    {"random_expand(2) random_bbox_crop resize(5,4) float chw", 1, 1, 5, 4},
    {"pad(1) random_crop(3) float", 1, 0, 3, 3},
};

/* One record's labels: MXNet's detection layout [2, 5, objects of class, xmin, ymin, xmax, ymax] or
   small whole numbers (classes for mixing), from the input. */
static uint32_t fi_labels(fi_in *in, float *lab, int det) {
    uint32_t n, i;
    uint8_t b = fi_byte(in);
    if (det && !(b & 0x80)) {
        n = 2 + 5 * (b % 4);
        lab[0] = 2, lab[1] = 5;
        for (i = 2; i < n; i++) lab[i] = (i - 2) % 5 == 0 ? (float)(fi_byte(in) % 4) : ((float)fi_byte(in) - 16.0f) / 224.0f;
        return n;
    }
    n = b % 6;
    for (i = 0; i < n || i < 1; i++) lab[i] = (float)(fi_byte(in) % 5);
    return n ? n : 1;
}

/* A small PNG from the input (or, one time in 8, bytes that are no image), and a mask tail. */
static size_t fi_image(fi_in *in, unsigned char *out, size_t cap, int masks) {
    static t_mem_out png;
    unsigned char px[8 * 8 * 3];
    uint8_t k = fi_byte(in), s = fi_byte(in);
    int w = 1 + s % 8, h = 1 + (s >> 3) % 8, c = k & 1 ? 3 : 1, i;
    size_t n = 0, m;
    if (k % 8 == 7) {
        n = 1 + s % 32;
        for (m = 0; m < n; m++) out[m] = fi_byte(in);
    } else {
        for (i = 0; i < w * h * c; i++) px[i] = fi_byte(in);
        png.n = 0;
        if (!stbi_write_png_to_func(t_to_mem, &png, w, h, c, px, w * c) || (size_t)png.n > cap / 2) return 0;
        memcpy(out, png.b, (size_t)png.n);
        n = (size_t)png.n;
    }
    if (!masks || (k & 0x40)) return n;
    if (k & 0x20) { /* a tail whose mask is junk */
        m = 1 + fi_byte(in) % 16;
        for (i = 0; i < (int)m; i++) out[n + (size_t)i] = fi_byte(in);
    } else { /* a grey mask of labels {0, 1, 2, x}, the image's size (or not, when k & 0x10) */
        uint8_t lab = fi_byte(in);
        if (k & 0x10) w = 1 + w % 3;
        for (i = 0; i < w * h; i++) px[i] = (uint8_t)(i % 4 == 3 ? lab : i % 3);
        png.n = 0;
        if (!stbi_write_png_to_func(t_to_mem, &png, w, h, 1, px, w) || (size_t)png.n > cap / 2 - 16) return n;
        memcpy(out + n, png.b, (size_t)png.n);
        m = (size_t)png.n;
    }
    return n + m + recio_irecord_mask_tail(out + n + m, m);
}

static int fi_put(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

/* The dataset: records with ids 0..n-1; with an index when `idx`. Returns the record count. */
static unsigned fi_dataset(fi_in *in, int det, int masks, int idx) {
    static unsigned char rec[1 << 17];
    recio_writer *w = NULL;
    recio_writer_desc wd;
    float lab[2 + 5 * 3];
    unsigned n = 1 + fi_byte(in) % FI_RECS, i;
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx ? fi_idx : NULL;
    if (recio_writer_open_desc(&w, fi_rec, &wd) != RECIO_OK) return 0;
    for (i = 0; i < n; i++) {
        uint32_t nl = fi_labels(in, lab, det);
        size_t h = recio_irecord_pack_header(rec, lab, nl, i, 0);
        size_t m = fi_image(in, rec + h, sizeof rec - h, masks);
        if (recio_writer_write(w, rec, h + m) != RECIO_OK) break;
    }
    if (recio_writer_close(w) != RECIO_OK) return 0;
    return n;
}

/* path_imglist: a line per record (one left out when asked), or the input's bytes as text. */
static void fi_imglist(fi_in *in, unsigned n, uint8_t how) {
    char text[1024];
    size_t k = 0;
    unsigned i;
    if (how & 1) {
        size_t m = fi_byte(in) % 128;
        for (; k < m; k++) text[k] = (char)fi_byte(in);
    } else {
        for (i = 0; i < n; i++) {
            if ((how & 2) && i == n - 1) continue;
            k += (size_t)snprintf(text + k, sizeof text - k, "%u\t%u\t%s%u.png\n", i, fi_byte(in) % 5,
                                  how & 4 ? "\t1\t" : "", i); /* how & 4: more label columns */
        }
    }
    fi_put(fi_lst, text, k);
}

/* mean_img: a float32 .npy of the item's shape (C,H,W or H,W,C), or of the wrong shape, or junk. */
static void fi_mean(fi_in *in, const fi_spec *s, int c, uint8_t how) {
    unsigned char b[128 + 4 * 3 * 8 * 8];
    char hd[128];
    int hl, i, n;
    if (how == 3) {
        n = fi_byte(in) % 96;
        for (i = 0; i < n; i++) b[i] = fi_byte(in);
        fi_put(fi_npy, b, (size_t)n);
        return;
    }
    if (how == 2) c = 4 - c; /* a shape that does not match */
    hl = s->c_first ? snprintf(hd, sizeof hd, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", c, s->h, s->w)
                    : snprintf(hd, sizeof hd, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d, %d), }", s->h, s->w, c);
    while ((10 + hl + 1) % 16) hd[hl++] = ' ';
    hd[hl++] = '\n';
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)hl, b[9] = 0;
    memcpy(b + 10, hd, (size_t)hl);
    n = c * s->w * s->h;
    for (i = 0; i < n; i++) {
        float f = (float)fi_byte(in) / 4.0f;
        memcpy(b + 10 + hl + 4 * i, &f, 4);
    }
    fi_put(fi_npy, b, (size_t)(10 + hl + 4 * n));
}

/* recio_batch's promises. */
static void fi_check(const recio_iter_desc *d, const recio_batch *b) {
    unsigned i;
    if (b->count + b->pad > b->batch || b->batch != (d->run.batch ? d->run.batch : 1) || !b->data) FI_FAIL();
    if (d->run.last_batch == RECIO_LAST_DISCARD && b->pad > b->skipped) FI_FAIL(); /* skip_bad pads what it leaves out */
    if (d->labels.detection && !b->objects) FI_FAIL();
    for (i = 0; d->labels.detection && i < b->count; i++)
        if (b->objects[i] * 5 + 2 > b->label_width && b->objects[i]) FI_FAIL();
    if (d->labels.masks && !b->masks) FI_FAIL();
}

/* Up to `max` batches over at most two epochs. */
static recio_err fi_take(recio_iter *it, const recio_iter_desc *d, unsigned max, recio_batch *last) {
    recio_err e = RECIO_OK;
    unsigned k, epochs = 0;
    for (k = 0; k < max; k++) {
        e = recio_iter_next(it, last);
        if (e == RECIO_END && ++epochs < 2) {
            if (recio_iter_reset(it) != RECIO_OK) FI_FAIL();
            continue;
        }
        if (e != RECIO_OK) break;
        fi_check(d, last);
    }
    if (e != RECIO_OK && e != RECIO_END && !recio_iter_errmsg(it)[0]) fprintf(stderr, "err %d\n", (int)e), FI_FAIL();
    return e;
}

static int fi_same(const recio_batch *a, const recio_batch *b) {
    size_t n = (size_t)(a->count + a->pad) * a->item_bytes;
    return a->count == b->count && a->pad == b->pad && a->epoch == b->epoch && a->index == b->index &&
           a->item_bytes == b->item_bytes && memcmp(a->data, b->data, n) == 0 &&
           memcmp(a->labels, b->labels, sizeof(float) * a->batch * a->label_width) == 0 &&
           memcmp(a->ids, b->ids, sizeof(uint64_t) * (a->count + a->pad)) == 0;
}

/* Save after k batches, restore into a second iterator (exactly, damaged, or the input's bytes). */
static void fi_checkpoint(recio_iter *a, const recio_iter_desc *d, fi_in *in, uint8_t how) {
    unsigned char blob[4096];
    size_t size = 0;
    recio_iter *b = NULL;
    recio_iter_desc again;
    recio_batch x, y;
    recio_err ea, eb;
    char msg[RECIO_ERRMSG_SIZE];
    uint8_t flip = fi_byte(in), at = fi_byte(in);
    if (fi_take(a, d, 1 + at % 5, &x) != RECIO_OK) return;
    if (how == 3) {
        size = fi_byte(in);
        for (ea = 0; (size_t)ea < size; ea++) blob[ea] = fi_byte(in);
    } else if (recio_iter_save(a, blob, sizeof blob, &size) != RECIO_OK) {
        return;
    }
    if (how == 2 && size) blob[at % size] ^= (uint8_t)(flip | 1);
    again = *d;
    again.errmsg = msg;
    if (recio_iter_open(&b, &again) != RECIO_OK) FI_FAIL(); /* it opened once */
    eb = recio_iter_restore(b, blob, size);
    if (how == 1 && eb != RECIO_OK) FI_FAIL();
    if (eb != RECIO_OK && !recio_iter_errmsg(b)[0]) FI_FAIL();
    if (how == 1) { /* the restored iterator goes on as the saved one */
        unsigned k;
        for (k = 0; k < 3; k++) {
            ea = fi_take(a, d, 1, &x);
            eb = fi_take(b, d, 1, &y);
            if (ea != eb || (ea == RECIO_OK && !fi_same(&x, &y))) FI_FAIL();
            if (ea != RECIO_OK) break;
        }
    } else {
        fi_take(b, d, 3, &y);
    }
    recio_iter_close(b);
}

static void fi_cleanup(void) {
    remove(fi_rec), remove(fi_idx), remove(fi_lst), remove(fi_npy);
}

static void fi_paths(void) {
    long pid = (long)getpid();
    atexit(fi_cleanup);
    snprintf(fi_rec, sizeof fi_rec, "/tmp/recio-fuzz-iter-%ld.rec", pid);
    snprintf(fi_idx, sizeof fi_idx, "/tmp/recio-fuzz-iter-%ld.idx", pid);
    snprintf(fi_lst, sizeof fi_lst, "/tmp/recio-fuzz-iter-%ld.lst", pid);
    snprintf(fi_npy, sizeof fi_npy, "/tmp/recio-fuzz-iter-%ld.npy", pid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const size_t bufs[4] = {0, 2, 5, 64};
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    fi_in in;
    char msg[RECIO_ERRMSG_SIZE];
    uint8_t o0, o1, o2, o3, o4;
    const fi_spec *s;
    unsigned n;
    if (size < 5 || size > 8192) return 0;
    if (!fi_rec[0]) fi_paths();
    in.p = data, in.n = size;
    o0 = fi_byte(&in), o1 = fi_byte(&in), o2 = fi_byte(&in), o3 = fi_byte(&in), o4 = fi_byte(&in);
    memset(&d, 0, sizeof d);
    s = &fi_specs[o2 % 8];
    d.uris = fi_rec;
    d.item.spec = s->spec;
    d.labels.detection = o0 & 1;
    d.labels.masks = (o0 >> 1) & 1;
    d.run.skip_bad = (o0 >> 2) & 1;
    d.run.cache_bytes = o0 & 8 ? 1 << 16 : 0;
    d.mix.mixup_alpha = o0 & 16 ? 0.4f : 0.0f;
    d.mix.cutmix_alpha = o0 & 32 ? 1.0f : 0.0f;
    d.mix.num_classes = d.mix.mixup_alpha > 0 || d.mix.cutmix_alpha > 0 ? 1 + o3 % 6 : 0;
    d.mix.prob = o3 & 0x80 ? 0.5f : 0.0f;
    d.run.workers = (o0 >> 6) & 1;
    d.run.batch = 1 + o1 % 4;
    d.run.last_batch = (recio_last_batch)((o1 >> 2) % 3);
    d.run.shuffle_buffer = bufs[(o1 >> 4) & 3];
    d.labels.strict = (o1 >> 6) & 1;
    d.item.channels = o1 & 0x80 ? 1 : 3;
    d.labels.width = 1 + (o3 >> 3) % 17;
    d.labels.mask_fill = o3 & 0x40 ? RECIO_MASK_FILL_ZERO : 0;
    d.source.seed = o4;
    if (o2 & 0x80) d.source.mode = 1, d.source.shuffle = RECIO_SHUFFLE_FULL;
    n = fi_dataset(&in, d.labels.detection, d.labels.masks, d.source.mode);
    if (!n) return 0;
    if (o0 & 0x80) fi_imglist(&in, n, fi_byte(&in)), d.labels.imglist = fi_lst;
    if ((o2 >> 3) & 3) fi_mean(&in, s, d.item.channels, (o2 >> 3) & 3), d.item.mean_img = fi_npy;
    msg[0] = 0;
    if ((d.errmsg = msg, recio_iter_open(&it, &d)) != RECIO_OK) {
        if (it || !msg[0]) FI_FAIL();
#ifdef FI_DEBUG
        fprintf(stderr, "open: %s\n", msg);
#endif
        return 0;
    }
    if ((o2 >> 5) & 3)
        fi_checkpoint(it, &d, &in, (o2 >> 5) & 3);
    else
        fi_take(it, &d, 24, &b);
    recio_iter_close(it);
    return 0;
}
