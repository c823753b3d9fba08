/* Iterator checkpoints (issue 23, item 6): a blob restores only into an iterator whose options give
   the same batches, and a damaged blob never restores.
   - Every field of recio_iter_desc, read from recio.h's own declaration (so a new field cannot be
     missed), is changed in turn: a field that changes batches must make the restore fail with
     "other options"; one that does not must restore and give exactly the batch the saved iterator
     gives next.
   - Every single-bit flip of a blob (with and without rolled-over records), every cut and an
     extension must be refused with words in recio_iter_errmsg, and must leave the iterator as it
     was. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "image_write.h"
#include "tmpdir.h"
#include <ctype.h>

#define DIR "build/test_iter_checkpoint"
#define DS DIR "/ds.rec"
#define NREC 10
#define W 24
#define H 16

/* ---- the dataset: NREC records, each a detection record (labels [2, 5, class, box]) with a
   segmentation mask, so that every option has something to act on ---- */

static int png_of(t_mem_out *m, const unsigned char *px, int channels) {
    m->n = 0;
    return stbi_write_png_to_func(t_to_mem, m, W, H, channels, px, W * channels) && m->n <= (int)sizeof m->b;
}

static void write_dataset(const char *path, const char *idx, unsigned salt) {
    static t_mem_out img, mask;
    static unsigned char buf[RECIO_IRHEADER_SIZE + 64 + 2 * sizeof img.b + RECIO_MASK_TAIL_SIZE];
    unsigned char px[W * H * 3], mk[W * H];
    recio_writer_desc wd;
    recio_writer *w = NULL;
    unsigned i;
    int x, y;
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx;
    if (recio_writer_open_desc(&w, path, &wd) != RECIO_OK) exit(1);
    for (i = 0; i < NREC; i++) {
        float lab[7] = {2, 5, 0, 0.1f, 0.1f, 0.6f, 0.7f};
        size_t n;
        lab[2] = (float)(i % 3), lab[4] += 0.02f * (float)i;
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                px[(y * W + x) * 3 + 0] = (unsigned char)(x * 10 + i * 23 + salt);
                px[(y * W + x) * 3 + 1] = (unsigned char)(y * 15 + i * 7);
                px[(y * W + x) * 3 + 2] = (unsigned char)((x ^ y) * 9 + i);
                mk[y * W + x] = (unsigned char)((x / 6 + i) % 4);
            }
        if (!png_of(&img, px, 3) || !png_of(&mask, mk, 1)) exit(1);
        n = recio_irecord_pack_header(buf, lab, 7, 100 + i, 0);
        memcpy(buf + n, img.b, (size_t)img.n), n += (size_t)img.n;
        memcpy(buf + n, mask.b, (size_t)mask.n), n += (size_t)mask.n;
        n += recio_irecord_mask_tail(buf + n, (size_t)mask.n);
        if (recio_writer_write(w, buf, n) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
}

/* The mean image for "resize(8,8) float chw": (3, 8, 8) float32, each element its own index. */
static void write_mean(const char *path) {
    static const char hdr[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 8, 8), }";
    char h[128];
    int len = (int)strlen(hdr), k;
    FILE *f = fopen(path, "wb");
    if (!f) exit(1);
    memcpy(h, hdr, (size_t)len);
    while ((10 + len + 1) % 64) h[len++] = ' ';
    h[len++] = '\n';
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(len & 255, f), fputc(len >> 8, f);
    fwrite(h, 1, (size_t)len, f);
    for (k = 0; k < 3 * 8 * 8; k++) {
        float v = (float)k;
        unsigned char le[4];
        recio_store_f32le(le, v);
        fwrite(le, 1, 4, f);
    }
    fclose(f);
}

static void make_files(void) {
    FILE *f;
    unsigned i;
    t_mkdir("build");
    t_mkdir(DIR);
    write_dataset(DS, DIR "/ds.idx", 0);
    write_dataset(DIR "/other.rec", NULL, 1);
    write_mean(DIR "/mean.npy");
    if (!(f = fopen(DIR "/ds.lst", "w"))) exit(1);
    for (i = 0; i < NREC; i++) fprintf(f, "%u\t%u\timg%u.png\n", 100 + i, (i * 7) % 3, i);
    fclose(f);
}

/* ---- hooks a desc may carry ---- */

static recio_err plain_open(void *user, const char *path, recio_io *io, char *why) {
    (void)user, (void)why;
    return t_open_read(io, path);
}
/* A filesystem of its own for plain paths that opens the same files: the batches do not change. */
static const recio_fs plain_fs = {NULL, NULL, 0, plain_open, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
static void *counting_alloc(size_t n, void *user) {
    ++*(unsigned long *)user;
    return malloc(n);
}
static void counting_free(void *p, void *user) {
    (void)user;
    free(p);
}
static recio_err fill_item(void *user, const recio_irecord *rec, uint64_t seed, void *out, size_t n, unsigned worker, char *msg) {
    (void)user, (void)worker, (void)msg;
    memset(out, (int)(rec->id + seed) & 255, n);
    return RECIO_OK;
}

/* ---- every field of recio_iter_desc ---- */

typedef enum { REFUSED, SAME, OPEN_REFUSED } expect;
typedef struct field_case {
    const char *name; /* "uris", or a sub-desc's field: "source.seed" */
    expect want; /* REFUSED: it changes batches, so the fingerprint must see it; OPEN_REFUSED: the
                    iterator owns it (source.epoch, alloc, errmsg), so an open with it set fails */
} field_case;

static const field_case fields[] = {
    {"uris", REFUSED}, {"rank", REFUSED}, {"nsplit", REFUSED}, {"rotate_shards", REFUSED},
    {"source.mode", REFUSED}, {"source.index_path", REFUSED}, {"source.shuffle", REFUSED}, {"source.seed", REFUSED},
    {"source.epoch", OPEN_REFUSED}, {"source.chunk_records", REFUSED}, {"source.window_chunks", REFUSED},
    {"source.equalize", REFUSED}, {"source.ordinals", SAME}, {"source.use_mmap", SAME}, {"source.buffer_size", SAME},
    {"source.fs", SAME}, {"source.errmsg", OPEN_REFUSED}, {"source.alloc", OPEN_REFUSED}, {"source.key_begin", REFUSED},
    {"source.key_end", REFUSED},
    {"item.spec", REFUSED}, {"item.channels", REFUSED}, {"item.transform", SAME}, {"item.user", SAME},
    {"item.item_bytes", REFUSED}, {"item.mean_img", REFUSED}, {"item.mean_scale", REFUSED}, {"item.seed_aug", REFUSED},
    {"labels.width", REFUSED}, {"labels.pad_set", REFUSED}, {"labels.pad_value", REFUSED}, {"labels.strict", REFUSED},
    {"labels.detection", REFUSED}, {"labels.masks", REFUSED}, {"labels.mask_fill", REFUSED}, {"labels.imglist", REFUSED},
    {"mix.mixup_alpha", REFUSED}, {"mix.cutmix_alpha", REFUSED}, {"mix.prob", REFUSED}, {"mix.num_classes", REFUSED},
    {"run.batch", REFUSED}, {"run.last_batch", REFUSED}, {"run.workers", SAME}, {"run.prefetch", SAME},
    {"run.shuffle_buffer", REFUSED}, {"run.checksums", SAME}, {"run.skip_bad", REFUSED}, {"run.cache_bytes", SAME},
    {"errmsg", SAME}, {"alloc", SAME},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static char errbuf[RECIO_ERRMSG_SIZE];
static unsigned long allocs;

static void base_desc(recio_iter_desc *d) {
    memset(d, 0, sizeof *d);
    d->uris = DS;
    d->item.spec = "resize(8,8) float chw";
    d->run.batch = 4;
    d->source.seed = 7;
    d->labels.width = 8;
    d->run.last_batch = RECIO_LAST_PAD;
}

/* The desc for one field's case: what the field needs around it to matter (a split for rank, an
   index for the shuffles, mixing for its knobs...), then, when change is set, the field changed.
   Returns 0 for a field this test does not know. */
static int vary(const char *name, recio_iter_desc *d, int change) {
    base_desc(d);
#define IS(s) (strcmp(name, s) == 0)
    if (IS("rank") || IS("rotate_shards")) d->nsplit = 2;
    if (IS("source.index_path") || IS("source.shuffle") || IS("source.equalize")) d->source.mode = RECIO_SPLIT_INDEX;
    if (IS("source.chunk_records") || IS("source.window_chunks")) d->source.mode = RECIO_SPLIT_INDEX, d->source.shuffle = RECIO_SHUFFLE_CHUNK;
    if (IS("item.item_bytes")) d->item.spec = NULL, d->item.transform = fill_item, d->item.item_bytes = 32;
    if (IS("item.mean_scale")) d->item.mean_img = DIR "/mean.npy";
    if (IS("labels.pad_value")) d->labels.pad_set = 1;
    if (IS("labels.mask_fill")) d->labels.masks = 1;
    if (IS("mix.mixup_alpha") || IS("mix.cutmix_alpha") || IS("mix.prob") || IS("mix.num_classes")) d->mix.mixup_alpha = 0.2f, d->mix.num_classes = 3;
    if (IS("run.prefetch")) d->run.workers = 1;
    if (IS("source.key_begin")) d->source.key_end = NREC; /* a range of every key, then without key 0 */
    if (!change) return 1;
    if (IS("uris")) d->uris = DIR "/other.rec";
    else if (IS("rank")) d->rank = 1;
    else if (IS("nsplit")) d->nsplit = 2;
    else if (IS("rotate_shards")) d->rotate_shards = 1;
    else if (IS("source.mode")) d->source.mode = RECIO_SPLIT_INDEX;
    else if (IS("source.index_path")) d->source.index_path = DIR "/ds.idx";
    else if (IS("source.shuffle")) d->source.shuffle = RECIO_SHUFFLE_FULL;
    else if (IS("source.seed")) d->source.seed = 8;
    else if (IS("source.epoch")) d->source.epoch = 1;
    else if (IS("source.chunk_records")) d->source.chunk_records = 2;
    else if (IS("source.window_chunks")) d->source.window_chunks = 3;
    else if (IS("source.equalize")) d->source.equalize = RECIO_EQUALIZE_DROP;
    else if (IS("source.ordinals")) d->source.ordinals = 1;
    else if (IS("source.use_mmap")) d->source.use_mmap = 1;
    else if (IS("source.buffer_size")) d->source.buffer_size = 4096;
    else if (IS("source.fs")) d->source.fs = &plain_fs;
    else if (IS("source.errmsg")) d->source.errmsg = errbuf;
    else if (IS("source.alloc")) d->source.alloc.alloc = counting_alloc, d->source.alloc.free = counting_free, d->source.alloc.user = &allocs;
    else if (IS("source.key_begin")) d->source.key_begin = 1;
    else if (IS("source.key_end")) d->source.key_end = NREC - 2;
    else if (IS("item.spec")) d->item.spec = "resize(8,8) flip float chw";
    else if (IS("item.channels")) d->item.channels = 1;
    else if (IS("item.transform")) d->item.transform = fill_item; /* a spec is given: the callback is not used */
    else if (IS("item.user")) d->item.user = &allocs;
    else if (IS("item.item_bytes")) d->item.item_bytes = 48;
    else if (IS("item.mean_img")) d->item.mean_img = DIR "/mean.npy";
    else if (IS("item.mean_scale")) d->item.mean_scale = 0.5f;
    else if (IS("item.seed_aug")) d->item.seed_aug = 99;
    else if (IS("labels.width")) d->labels.width = 9;
    else if (IS("labels.pad_set")) d->labels.pad_set = 1; /* pads with 0 instead of -1 */
    else if (IS("labels.pad_value")) d->labels.pad_value = 5;
    else if (IS("labels.strict")) d->labels.strict = 1;
    else if (IS("labels.detection")) d->labels.detection = 1;
    else if (IS("labels.masks")) d->labels.masks = 1;
    else if (IS("labels.mask_fill")) d->labels.mask_fill = 7;
    else if (IS("labels.imglist")) d->labels.imglist = DIR "/ds.lst";
    else if (IS("mix.mixup_alpha")) d->mix.mixup_alpha = 0.4f;
    else if (IS("mix.cutmix_alpha")) d->mix.cutmix_alpha = 1.0f;
    else if (IS("mix.prob")) d->mix.prob = 0.5f;
    else if (IS("mix.num_classes")) d->mix.num_classes = 4;
    else if (IS("run.batch")) d->run.batch = 5;
    else if (IS("run.last_batch")) d->run.last_batch = RECIO_LAST_DISCARD;
    else if (IS("run.workers")) d->run.workers = 2;
    else if (IS("run.prefetch")) d->run.prefetch = 5;
    else if (IS("run.shuffle_buffer")) d->run.shuffle_buffer = 3;
    else if (IS("run.checksums")) d->run.checksums = 1;
    else if (IS("run.skip_bad")) d->run.skip_bad = 1;
    else if (IS("run.cache_bytes")) d->run.cache_bytes = 1 << 20;
    else if (IS("errmsg")) d->errmsg = errbuf;
    else if (IS("alloc")) d->alloc.alloc = counting_alloc, d->alloc.free = counting_free, d->alloc.user = &allocs;
    else return 0;
#undef IS
    return 1;
}

/* ---- the declared fields, read from recio.h ---- */

static char *read_text(const char *path) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n), *s = b ? (unsigned char *)realloc(b, n + 1) : NULL;
    if (!s) return free(b), NULL;
    s[n] = 0;
    return (char *)s;
}

/* The last identifier in [b, e) into name (NUL-ended); 0 when there is none. */
static int last_ident(const char *b, const char *e, char *name, size_t cap) {
    const char *p = e, *q;
    while (p > b && !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) p--;
    for (q = p; q > b && (isalnum((unsigned char)q[-1]) || q[-1] == '_'); q--) {}
    if (q == p || (size_t)(p - q) >= cap) return 0;
    memcpy(name, q, (size_t)(p - q));
    name[p - q] = 0;
    return 1;
}

/* The sub-descs of recio_iter_desc: a member of one of these types is a struct whose fields count. */
static const char *const subdescs[] = {"recio_split_desc", "recio_iter_item_desc", "recio_iter_label_desc",
                                       "recio_iter_mix_desc", "recio_iter_run_desc"};

static int declared_in(const char *h, const char *type, const char *prefix, char names[][64], int max);

/* One declaration [p, q): a sub-desc member's fields as "member.field", else its names. */
static int one_decl(const char *h, char *p, char *q, const char *prefix, char names[][64], int max) {
    char *fp, member[40], pre[96];
    size_t k;
    int n = 0;
    while (p < q && isspace((unsigned char)*p)) p++;
    for (k = 0; k < sizeof subdescs / sizeof subdescs[0]; k++)
        if (strncmp(p, subdescs[k], strlen(subdescs[k])) == 0 && isspace((unsigned char)p[strlen(subdescs[k])])) {
            if (!last_ident(p, q, member, sizeof member)) return 0;
            snprintf(pre, sizeof pre, "%s%s.", prefix, member);
            return declared_in(h, subdescs[k], pre, names, max);
        }
    if ((fp = strstr(p, "(*")) != NULL && fp < q) { /* a function pointer "(*name)(...)" */
        char *close = strchr(fp, ')');
        if (!last_ident(fp + 2, close, member, sizeof member)) return 0;
        snprintf(names[0], sizeof names[0], "%s%s", prefix, member);
        return 1;
    }
    for (fp = p; fp < q && n < max;) { /* "unsigned rank, nsplit" */
        char *comma = memchr(fp, ',', (size_t)(q - fp)), *end = comma ? comma : q;
        if (last_ident(fp, end, member, sizeof member)) snprintf(names[n], sizeof names[n], "%s%s", prefix, member), n++;
        fp = end + 1;
    }
    return n;
}

/* Names declared in "typedef struct TYPE { ... } TYPE;" of the header text h, comments removed,
   each after prefix; a sub-desc member stands for its own fields. -1 when the struct is not found. */
static int declared_in(const char *h, const char *type, const char *prefix, char names[][64], int max) {
    char open[80], close[80], *body, *b, *e, *p, *q;
    int n = 0;
    snprintf(open, sizeof open, "typedef struct %s {", type);
    snprintf(close, sizeof close, "} %s;", type);
    if (!(b = strstr(h, open)) || !(e = strstr(b, close))) return -1;
    b += strlen(open);
    if (!(body = (char *)malloc((size_t)(e - b) + 1))) return -1;
    memcpy(body, b, (size_t)(e - b));
    body[e - b] = 0;
    e = body + (e - b);
    for (p = body; p < e; p++) /* comments become spaces */
        if (p[0] == '/' && p[1] == '*')
            for (q = strstr(p + 2, "*/"); p < q + 2; p++) *p = ' ';
    for (p = body; p < e && n < max; p = q + 1) {
        int k;
        if (!(q = memchr(p, ';', (size_t)(e - p)))) break;
        if ((k = one_decl(h, p, q, prefix, names + n, max - n)) < 0) return free(body), -1;
        n += k;
    }
    free(body);
    return n;
}

static int declared_fields(char names[][64], int max) {
    char *h = read_text("recio.h");
    int n = h ? declared_in(h, "recio_iter_desc", "", names, max) : -1;
    free(h);
    return n;
}

static void test_every_field_is_classified(void) {
    char names[128][64];
    int n = declared_fields(names, 128), i, k;
    CHECK(n > 30); /* the parse found the struct */
    for (i = 0; i < n; i++) {
        for (k = 0; k < NFIELDS && strcmp(fields[k].name, names[i]) != 0; k++) {}
        if (k == NFIELDS) fprintf(stderr, "  recio_iter_desc.%s: no case in this test (does it change batches?)\n", names[i]);
        CHECK(k < NFIELDS);
    }
    for (k = 0; k < NFIELDS; k++) {
        for (i = 0; i < n && strcmp(fields[k].name, names[i]) != 0; i++) {}
        if (i == n) fprintf(stderr, "  %s: not a field of recio_iter_desc\n", fields[k].name);
        CHECK(i < n);
    }
}

/* ---- restores ---- */

/* A batch's bytes (data, labels, ids, keys, and masks and soft labels when there are any). */
typedef struct seen {
    recio_err e;
    uint64_t sum;
} seen;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    while (n--) h = (h ^ *b++) * 0x100000001b3ull;
    return h;
}

static seen next_of(recio_iter *it) {
    recio_batch b;
    seen s;
    unsigned n;
    s.sum = 0xcbf29ce484222325ull;
    if ((s.e = recio_iter_next(it, &b)) != RECIO_OK) return s;
    n = b.count + b.pad;
    s.sum = fnv(s.sum, &b.count, sizeof b.count);
    s.sum = fnv(s.sum, b.data, (size_t)n * b.item_bytes);
    s.sum = fnv(s.sum, b.labels, (size_t)n * b.label_width * sizeof(float));
    s.sum = fnv(s.sum, b.ids, (size_t)n * 8);
    s.sum = fnv(s.sum, b.keys, (size_t)n * 8);
    if (b.masks) s.sum = fnv(s.sum, b.masks, (size_t)n * (size_t)b.item.width * (size_t)b.item.height);
    if (b.soft_labels) s.sum = fnv(s.sum, b.soft_labels, (size_t)n * 3 * sizeof(float)), s.sum = fnv(s.sum, &b.lam, sizeof b.lam);
    return s;
}

static recio_iter *open_or_fail(const recio_iter_desc *d, const char *what) {
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    recio_iter_desc with = *d;
    if (!with.errmsg) with.errmsg = msg; /* the errmsg field's own case keeps its buffer */
    if (recio_iter_open(&it, &with) != RECIO_OK) {
        fprintf(stderr, "  %s: open: %s\n", what, with.errmsg);
        t_fail_at(__FILE__, __LINE__, "open");
        return NULL;
    }
    return it;
}

/* A field the iterator owns: set, the open fails with words that say whose it is. */
static void open_refused(const char *name) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    vary(name, &d, 1);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_ERR_ARG);
    CHECK(it == NULL);
    if (!strstr(msg, "are the iterator's own")) fprintf(stderr, "  %s set: open said '%s'\n", name, msg);
    CHECK(strstr(msg, "source.epoch, source.alloc and source.errmsg are the iterator's own") != NULL);
}

/* Saved after batch 1 of the field's base desc, then restored into the desc with the field changed. */
static void one_field(const field_case *f) {
    recio_iter_desc d;
    recio_iter *a, *b;
    unsigned char blob[256];
    size_t n;
    seen want, got;
    recio_err e;
    int change;
    if (!vary(f->name, &d, 0)) {
        fprintf(stderr, "  %s: no case in vary()\n", f->name);
        t_fail_at(__FILE__, __LINE__, "a case for the field");
        return;
    }
    if (!(a = open_or_fail(&d, f->name))) return;
    if (f->want == OPEN_REFUSED) {
        recio_iter_close(a);
        open_refused(f->name);
        return;
    }
    CHECK_EQ_INT(next_of(a).e, RECIO_OK);
    CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
    want = next_of(a);
    CHECK_EQ_INT(want.e, RECIO_OK);
    recio_iter_close(a);
    for (change = 0; change < 2; change++) { /* unchanged: must restore; changed: as the table says */
        vary(f->name, &d, change);
        if (!(b = open_or_fail(&d, f->name))) return;
        e = recio_iter_restore(b, blob, n);
        if (!change || f->want == SAME) {
            got = next_of(b);
            if (e != RECIO_OK || got.e != RECIO_OK || got.sum != want.sum)
                fprintf(stderr, "  %s%s: restore %d (%s), then another batch\n", f->name, change ? " changed" : "", (int)e, recio_iter_errmsg(b));
            CHECK(e == RECIO_OK && got.e == RECIO_OK && got.sum == want.sum);
        } else {
            if (e != RECIO_ERR_ARG) fprintf(stderr, "  %s changed: the restore gave %d, not refused\n", f->name, (int)e);
            CHECK_EQ_INT(e, RECIO_ERR_ARG);
            CHECK(strstr(recio_iter_errmsg(b), "other options") != NULL);
        }
        recio_iter_close(b);
    }
}

static void test_each_field_in_turn(void) {
    int k;
    for (k = 0; k < NFIELDS; k++) one_field(&fields[k]);
}

/* Defaults spelled out are the same options: a blob moves between them. */
static void test_defaults_are_the_same_options(void) {
    recio_iter_desc d, e;
    recio_iter *a, *b;
    unsigned char blob[256];
    size_t n;
    seen want;
    int k;
    for (k = 0; k < 4; k++) {
        base_desc(&d);
        if (k == 3) d.labels.masks = 1;
        if (k == 1) d.source.mode = RECIO_SPLIT_INDEX, d.source.shuffle = RECIO_SHUFFLE_CHUNK;
        if (k == 2) d.mix.mixup_alpha = 0.3f, d.mix.num_classes = 3;
        e = d;
        if (k == 0) e.item.channels = 3, e.item.seed_aug = d.source.seed, e.labels.pad_set = 1, e.labels.pad_value = -1, e.nsplit = 1;
        if (k == 1) e.source.chunk_records = 256, e.source.window_chunks = 16;
        if (k == 2) e.mix.prob = 1;
        if (k == 3) e.labels.mask_fill = 255;
        if (!(a = open_or_fail(&d, "defaults"))) return;
        next_of(a);
        CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
        want = next_of(a);
        recio_iter_close(a);
        if (!(b = open_or_fail(&e, "defaults spelled out"))) return;
        CHECK_EQ_INT(recio_iter_restore(b, blob, n), RECIO_OK);
        CHECK(next_of(b).sum == want.sum);
        recio_iter_close(b);
    }
}

/* Every bit of a blob flipped, every cut, and one extension: each refused with words, and the
   iterator untouched (its next batch is still its first); the sound blob then restores. */
static void flips(recio_last_batch lb, unsigned take, size_t want_size) {
    recio_iter_desc d;
    recio_iter *a, *b;
    unsigned char blob[256];
    size_t n, i;
    seen first, want;
    unsigned k, bit, accepted = 0, silent = 0;
    recio_err e;
    base_desc(&d);
    d.run.last_batch = lb;
    if (!(a = open_or_fail(&d, "flips"))) return;
    first = next_of(a);
    for (k = 1; k < take; k++) next_of(a);
    if (lb == RECIO_LAST_ROLL_OVER) CHECK_EQ_INT(next_of(a).e, RECIO_END); /* 2 records roll over */
    CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
    CHECK_EQ_INT(n, want_size);
    if (lb == RECIO_LAST_ROLL_OVER) recio_iter_reset(a);
    want = next_of(a);
    recio_iter_close(a);
    if (!(b = open_or_fail(&d, "flips"))) return;
    for (i = 0; i < n; i++)
        for (bit = 0; bit < 8; bit++) {
            blob[i] ^= (unsigned char)(1u << bit);
            e = recio_iter_restore(b, blob, n);
            accepted += e == RECIO_OK;
            silent += e != RECIO_OK && recio_iter_errmsg(b)[0] == 0;
            blob[i] ^= (unsigned char)(1u << bit);
        }
    for (i = 0; i < n; i++) { /* cut short */
        e = recio_iter_restore(b, blob, i);
        accepted += e == RECIO_OK;
        silent += e != RECIO_OK && recio_iter_errmsg(b)[0] == 0;
    }
    memset(blob + n, 0, 8);
    accepted += recio_iter_restore(b, blob, n + 8) == RECIO_OK; /* with 8 more bytes */
    if (accepted || silent) fprintf(stderr, "  %zu-byte blob: %u damaged ones restored, %u refused without words\n", n, accepted, silent);
    CHECK_EQ_INT(accepted, 0);
    CHECK_EQ_INT(silent, 0);
    CHECK(next_of(b).sum == first.sum); /* none of them moved it */
    recio_iter_close(b);
    if (!(b = open_or_fail(&d, "flips"))) return;
    CHECK_EQ_INT(recio_iter_restore(b, blob, n), RECIO_OK);
    if (lb == RECIO_LAST_ROLL_OVER) CHECK_EQ_INT(next_of(b).e, RECIO_END), recio_iter_reset(b); /* saved at the end */
    CHECK(next_of(b).sum == want.sum);
    recio_iter_close(b);
}

static void test_every_bit_flip_refused(void) {
    flips(RECIO_LAST_PAD, 1, 48);          /* mid-epoch: no rolled-over records */
    flips(RECIO_LAST_ROLL_OVER, 2, 48 + 16); /* after the epoch: 10 records, batches of 4: 2 roll over */
}

/* A message that says what is wrong: the damage, a foreign blob, another version. */
static void test_refusal_words(void) {
    recio_iter_desc d;
    recio_iter *a;
    unsigned char blob[256];
    size_t n;
    base_desc(&d);
    if (!(a = open_or_fail(&d, "words"))) return;
    CHECK_EQ_INT(recio_iter_save(a, blob, sizeof blob, &n), RECIO_OK);
    blob[20] ^= 1; /* the epoch */
    CHECK_EQ_INT(recio_iter_restore(a, blob, n), RECIO_ERR_FORMAT);
    CHECK(strstr(recio_iter_errmsg(a), "checkpoint is damaged") != NULL);
    blob[20] ^= 1;
    blob[4] = 1; /* a version 1 blob (made before the check sum) */
    CHECK_EQ_INT(recio_iter_restore(a, blob, n - 8), RECIO_ERR_FORMAT);
    CHECK(strstr(recio_iter_errmsg(a), "checkpoint of version 1: this recio reads version 2") != NULL);
    blob[0] ^= 0x40;
    CHECK_EQ_INT(recio_iter_restore(a, blob, n), RECIO_ERR_FORMAT);
    CHECK(strstr(recio_iter_errmsg(a), "not a recio iterator checkpoint") != NULL);
    recio_iter_close(a);
}

int main(void) {
    make_files();
    RUN(test_every_field_is_classified);
    RUN(test_each_field_in_turn);
    RUN(test_defaults_are_the_same_options);
    RUN(test_every_bit_flip_refused);
    RUN(test_refusal_words);
    t_rmtree(DIR);
    return t_done("test_iter_checkpoint");
}
