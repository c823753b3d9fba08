/* Shared by the iterator tests: a small image-record dataset whose every byte offset is known by
   hand, a transform whose output records the seed it was given, and batch summaries to compare. */
#ifndef RECIO_ITER_UTIL_H
#define RECIO_ITER_UTIL_H
#include "tmpdir.h"

/* tests/data/photos files as image records into out (id 1000 + i, label i), with idx (NULL: none);
   record `garble`'s entropy data wiped out (a JPEG that does not decode; garble >= n: none). */
static inline void iu_pack_photos(const char *out, const char *idx, const char *const *names, unsigned n, unsigned garble) {
    recio_writer *w = NULL;
    recio_writer_desc wd;
    unsigned i;
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx;
    if (recio_writer_open_desc(&w, out, &wd) != RECIO_OK) exit(1);
    for (i = 0; i < n; i++) {
        char path[256];
        size_t size;
        unsigned char *img, *rec;
        float label = (float)i;
        snprintf(path, sizeof path, "tests/data/photos/%s", names[i]);
        if (!(img = t_slurp(path, &size))) fprintf(stderr, "missing %s\n", path), exit(1);
        if (i == garble) memset(img + 20, 0x55, size - 40);
        rec = (unsigned char *)malloc(RECIO_IRHEADER_SIZE + size);
        recio_irecord_pack_header(rec, &label, 1, 1000 + i, 0);
        memcpy(rec + RECIO_IRHEADER_SIZE, img, size);
        if (recio_writer_write(w, rec, RECIO_IRHEADER_SIZE + size) != RECIO_OK) exit(1);
        free(rec);
        free(img);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
}

/* Record i: IRHeader {flag 2, label 0, id 100+i, id2 0}, labels (i, -i), then 3(i+1) bytes of value
   i. Payload 32 + 3(i+1) bytes; on disk 8 + that rounded up to 4 (RecordIO framing). */
static inline uint64_t iu_offset(unsigned i) {
    uint64_t off = 0;
    unsigned k;
    for (k = 0; k < i; k++) off += 8 + ((32 + 3 * (k + 1) + 3) & ~3u);
    return off;
}

static inline void iu_make(const char *path, unsigned n) {
    recio_writer *w = NULL;
    recio_writer_desc wd;
    unsigned char buf[32 + 3 * 64];
    char idx[256];
    unsigned i;
    t_mkdir("build");
    t_mkdir("build/test_iter");
    snprintf(idx, sizeof idx, "%s.idx", path);
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx; /* FILE.idx, for the indexed split */
    if (recio_writer_open_desc(&w, path, &wd) != RECIO_OK) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    for (i = 0; i < n; i++) {
        float lab[2];
        lab[0] = (float)i;
        lab[1] = -(float)i;
        recio_irecord_pack_header(buf, lab, 2, 100 + i, 0);
        memset(buf + 32, (int)i, 3 * (i % 64 + 1));
        if (recio_writer_write(w, buf, 32 + 3 * (i % 64 + 1)) != RECIO_OK) exit(1);
    }
    if (recio_writer_close(w) != RECIO_OK) exit(1);
}

/* item = {seed, id, image length, first image byte} as 4 u64. */
#define IU_ITEM 32
static inline recio_err iu_transform(void *user, const recio_irecord *r, uint64_t seed, void *out, size_t n, unsigned worker, char *msg) {
    uint64_t *o = (uint64_t *)out;
    const unsigned *fail_id = (const unsigned *)user;
    (void)worker;
    if (n != IU_ITEM) return RECIO_ERR_ARG;
    if (fail_id && r->id == *fail_id) {
        strcpy(msg, "cannot decode this one");
        return RECIO_ERR_DECODE;
    }
    o[0] = seed;
    o[1] = r->id;
    o[2] = r->image_size;
    o[3] = r->image_size ? ((const unsigned char *)r->image)[0] : 999;
    return RECIO_OK;
}

static inline uint64_t iu_fnv(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* recio_checksum written out again from its documentation, byte by byte over the little-endian
   bytes of a tensor, to check the library's lanes and kernels against. */
static inline uint64_t iu_fnv_more(uint64_t h, uint64_t v, int bytes) {
    int j;
    for (j = 0; j < bytes; j++) h = (h ^ ((v >> 8 * j) & 255)) * 0x100000001b3ull;
    return h;
}

static inline uint64_t iu_checksum(const unsigned char *le, size_t n) {
    uint32_t lane[64];
    size_t i, k;
    uint64_t h = 0xcbf29ce484222325ull;
    for (k = 0; k < 64; k++) lane[k] = 2166136261u ^ (uint32_t)k * 2654435769u;
    for (i = 0; i + 256 <= n; i += 256)
        for (k = 0; k < 64; k++) {
            const unsigned char *q = le + i + 4 * k;
            uint32_t w = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
            uint32_t x = (lane[k] ^ w) * 16777619u;
            lane[k] = x ^ (x >> 13);
        }
    for (k = 0; k < 64; k++) h = iu_fnv_more(h, lane[k], 4);
    for (; i < n; i++) h = iu_fnv_more(h, le[i], 1);
    return iu_fnv_more(h, (uint64_t)n, 8);
}

/* The batch checksum of `count` items of `item` little-endian bytes each. */
static inline uint64_t iu_batch_checksum(const unsigned char *le, unsigned count, size_t item) {
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned i;
    for (i = 0; i < count; i++) h = iu_fnv_more(h, iu_checksum(le + i * item, item), 8);
    return h;
}

typedef struct iu_batch {
    uint64_t epoch, index, sum, labsum;
    unsigned count, pad;
    uint64_t ids[16];
} iu_batch;

static inline void iu_desc(recio_iter_desc *d, const char *uris, unsigned batch, recio_last_batch lb, unsigned workers) {
    memset(d, 0, sizeof *d);
    d->uris = uris;
    d->run.batch = batch;
    d->run.last_batch = lb;
    d->run.workers = workers;
    d->item.transform = iu_transform;
    d->item.item_bytes = IU_ITEM;
    d->labels.width = 2;
    d->source.seed = 42;
}

/* Take up to max batches (crossing epochs with reset until `epochs` epochs are done). */
static inline size_t iu_run(recio_iter *it, iu_batch *out, size_t max, uint64_t epochs, recio_err *err) {
    size_t n = 0;
    recio_batch b;
    recio_err e = RECIO_OK;
    memset(out, 0, max * sizeof *out);
    while (n < max) {
        unsigned i;
        e = recio_iter_next(it, &b);
        if (e == RECIO_END) {
            if (--epochs == 0 || recio_iter_reset(it) != RECIO_OK) break;
            continue;
        }
        if (e != RECIO_OK) break;
        memset(&out[n], 0, sizeof out[n]);
        out[n].epoch = b.epoch;
        out[n].index = b.index;
        out[n].count = b.count;
        out[n].pad = b.pad;
        out[n].sum = iu_fnv(b.data, (size_t)(b.count + b.pad) * b.item_bytes);
        out[n].labsum = iu_fnv(b.labels, (size_t)b.batch * b.label_width * sizeof(float));
        for (i = 0; i < b.count + b.pad && i < 16; i++) out[n].ids[i] = b.ids[i];
        n++;
    }
    if (err) *err = e;
    return n;
}

static inline int iu_same(const iu_batch *a, const iu_batch *b, size_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}
#endif
