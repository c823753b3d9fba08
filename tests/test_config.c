/* Configuration macros: a private copy (RECIO_STATIC) built without stdio, with every allocation
   routed through counting RECIO_MALLOC/REALLOC/FREE; and the runtime allocator of a desc. */
#include <stdlib.h>
static long t_allocs, t_frees, t_live;
static void *t_malloc(size_t n) { t_allocs++, t_live++; return malloc(n); }
static void *t_realloc(void *p, size_t n) { if (!p) t_allocs++, t_live++; return realloc(p, n); }
static void t_free(void *p) { if (p) t_frees++, t_live--; free(p); }
#define RECIO_MALLOC(sz, u) ((void)(u), t_malloc(sz))
#define RECIO_REALLOC(p, sz, u) ((void)(u), t_realloc(p, sz))
#define RECIO_FREE(p, u) ((void)(u), t_free(p))
#define RECIO_NO_STDIO
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#include "img_desc.h"

static void test_no_stdio_roundtrip_with_counted_allocations(void) {
    recio_buffer out;
    recio_writer *w;
    recio_reader *r;
    recio_record rec;
    unsigned char big[70000];
    int i;
    memset(&out, 0, sizeof out);
    memset(big, 0x5a, sizeof big);
    big[4] = 0x0a, big[5] = 0x23, big[6] = 0xd7, big[7] = 0xce; /* forces a multi-part record */
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    for (i = 0; i < 20; i++) CHECK(recio_writer_write(w, big, sizeof big - (size_t)i) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(recio_reader_open_mem(&r, out.data, out.size) == RECIO_OK);
    for (i = 0; i < 20; i++) {
        CHECK(recio_reader_next(r, &rec) == RECIO_OK);
        CHECK(rec.size == sizeof big - (size_t)i && memcmp(rec.data, big, rec.size) == 0);
    }
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    recio_reader_close(r);
    recio_buffer_free(&out);
    CHECK(t_allocs > 3);   /* writer, buffers, join buffer: all through the macros */
    CHECK_EQ_INT(t_live, 0); /* and all given back */
    /* without stdio there is no file backend: path-based opens say so */
    CHECK_EQ_INT(recio_reader_open(&r, "x.rec"), RECIO_ERR_UNSUPPORTED);
    CHECK_EQ_INT(recio_writer_open(&w, "x.rec"), RECIO_ERR_UNSUPPORTED);
    CHECK_EQ_INT(t_live, 0);
}

typedef struct {
    long live, calls;
} arena;
static void *a_alloc(size_t n, void *u) { ((arena *)u)->live++, ((arena *)u)->calls++; return malloc(n); }
static void a_free(void *p, void *u) { ((arena *)u)->live--; free(p); }

static void test_runtime_allocator_in_desc(void) {
    arena a = {0, 0};
    recio_reader_desc d;
    recio_reader *r;
    recio_record rec;
    recio_buffer out;
    recio_writer *w;
    long before = t_allocs;
    unsigned char payload[9000];
    memset(payload, 1, sizeof payload);
    memcpy(payload + 8, "\x0a\x23\xd7\xce", 4);
    memset(&out, 0, sizeof out);
    out.alloc.alloc = a_alloc;
    out.alloc.free = a_free;
    out.alloc.user = &a;
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    CHECK(recio_writer_write(w, payload, sizeof payload) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    memset(&d, 0, sizeof d);
    d.alloc = out.alloc;
    d.io.read = NULL;
    CHECK(recio_reader_open_mem(&r, out.data, out.size) == RECIO_OK); /* open_mem: default allocator */
    CHECK(recio_reader_next(r, &rec) == RECIO_OK && rec.size == sizeof payload);
    recio_reader_close(r);
    recio_buffer_free(&out);
    CHECK(a.calls >= 3);  /* the writer, its buffer and the growing output */
    CHECK_EQ_INT(a.live, 0);
    CHECK(t_allocs - before >= 1); /* only the mem reader used the macros */
    CHECK_EQ_INT(t_live, 0);
}

#ifndef RECIO_NO_IMAGE
/* stb's own allocations (about ten per image) go through the transform's allocator, as the decoded
   pixels do: none reaches RECIO_MALLOC. A PNG, so that stb decodes it in every build. */
static void test_stb_allocates_through_the_desc_allocator(void) {
    arena a = {0, 0};
    recio_transform_desc td;
    recio_transform *t = NULL;
    recio_image out;
    size_t n = 0;
    unsigned char *png = t_slurp("tests/data/photos/chelsea-333x500.png", &n);
    static float tensor[3 * 56 * 56];
    long before;
    CHECK(png != NULL);
    if (!png) return;
    memset(&td, 0, sizeof td);
    td.alloc.alloc = a_alloc;
    td.alloc.free = a_free;
    td.alloc.user = &a;
    CHECK(t_parse_ex(&t, "resize_short(64) center_crop(56) normalize(imagenet) chw", &td, NULL, 0) == RECIO_OK);
    before = t_allocs;
    a.calls = 0;
    out = recio_image_wrap(tensor, 56, 56, 3, RECIO_F32, RECIO_CHW, 0);
    CHECK(t_apply_encoded(t, png, n, &out, 1, NULL, NULL, 0) == RECIO_OK);
    CHECK_EQ_INT(t_allocs - before, 0); /* nothing through RECIO_MALLOC */
    CHECK(a.calls >= 5);                /* stb's buffers, the pixels, the scratch */
    recio_transform_free(t);
    CHECK_EQ_INT(a.live, 0);
    free(png);
}
#endif

int main(void) {
    RUN(test_no_stdio_roundtrip_with_counted_allocations);
    RUN(test_runtime_allocator_in_desc);
#ifndef RECIO_NO_IMAGE
    RUN(test_stb_allocates_through_the_desc_allocator);
#endif
    return t_done("config");
}
