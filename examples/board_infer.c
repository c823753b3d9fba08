/* Inference preprocessing on a board without an OS (Cortex-M4 in `make freestanding`): a JPEG held
   in a const array (as in flash), every byte recio and stb need taken from one fixed arena, and the
   model's input tensor a static array. recio_transform_apply_desc (encoded bytes in) decodes and runs
   "resize_short(72) center_crop(64) normalize(imagenet) chw" straight into the tensor.
   After setup nothing is allocated from a heap: the heap hooks below count their calls and fail,
   and the arena goes back to its mark after every frame. Prints "board_infer: N passed, N failed"
   (make test runs it; make cross ARCH=armhf runs it under qemu-arm). */
#undef RECIO_TURBOJPEG /* stb_image decodes: libjpeg-turbo would allocate with malloc */
#undef RECIO_THREADS
#define RECIO_NO_STDIO /* no files on the board */
#define RECIO_STATIC   /* a private copy, built right here */
static unsigned long heap_calls;
static void *no_heap(void) { heap_calls++; return 0; }
#define RECIO_MALLOC(sz, u) ((void)(sz), (void)(u), no_heap())
#define RECIO_REALLOC(p, sz, u) ((void)(p), (void)(sz), (void)(u), no_heap())
#define RECIO_FREE(p, u) ((void)(p), (void)(u), (void)0)
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "board_jpeg.h"
#include <stdio.h>

/* ---- a bump arena: the last block can be given back, everything goes back to a mark ---- */
#define ARENA_BYTES (160u << 10)
typedef struct arena {
    unsigned char *base;
    size_t top, last, peak, cap;
    unsigned long calls;
} arena;

static void *arena_alloc(size_t n, void *user) {
    arena *a = (arena *)user;
    size_t at = (a->top + 15u) & ~(size_t)15u;
    if (at > a->cap || n > a->cap - at) return 0;
    a->last = a->top;
    a->top = at + n;
    if (a->top > a->peak) a->peak = a->top;
    a->calls++;
    return a->base + at;
}

static void arena_free(void *p, void *user) {
    arena *a = (arena *)user;
    if (p && (unsigned char *)p >= a->base + a->last && (unsigned char *)p < a->base + a->top &&
        (size_t)((unsigned char *)p - a->base) == ((a->last + 15u) & ~(size_t)15u))
        a->top = a->last; /* the newest block: stb often frees what it just allocated */
}

static unsigned char arena_mem[ARENA_BYTES];
static float tensor[3 * 64 * 64]; /* the model's input */

int main(void) {
    arena a = {arena_mem, 0, 0, 0, ARENA_BYTES, 0};
    recio_transform_desc td;
    recio_transform *t = 0;
    recio_apply_desc ad;
    recio_image out;
    char msg[RECIO_ERRMSG_SIZE];
    size_t mark;
    uint64_t first = 0;
    int frame, passed = 0, failed = 0;
    unsigned long setup_heap;

    /* setup: the transform lives in the arena below the mark; each frame's decode and passes take
       their memory from the arena above it (the transform's allocator) */
    memset(&td, 0, sizeof td);
    td.alloc.alloc = arena_alloc;
    td.alloc.free = arena_free;
    td.alloc.user = &a;
    td.errmsg = msg;
    if (recio_transform_parse_desc(&t, "resize_short(72) center_crop(64) normalize(imagenet) chw", &td)) {
        printf("board_infer: %s\nboard_infer: 0 passed, 1 failed\n", msg);
        return 1;
    }
    out = recio_image_wrap(tensor, 64, 64, 3, RECIO_F32, RECIO_CHW, 0);
    memset(&ad, 0, sizeof ad);
    ad.bytes = board_jpeg, ad.size = sizeof board_jpeg, ad.channels = 3, ad.out = &out, ad.errmsg = msg;
    mark = a.top;
    setup_heap = heap_calls;

    /* frames: decode + transform into the tensor; the arena returns to the mark each time */
    for (frame = 0; frame < 3; frame++) {
        unsigned long calls = a.calls;
        recio_err e = recio_transform_apply_desc(t, &ad);
        uint64_t sum = recio_checksum(tensor, sizeof tensor, 4);
        int ok = e == RECIO_OK && (frame == 0 || sum == first);
        if (frame == 0) first = sum;
        printf("frame %d: %s, %lu arena blocks, tensor[0..2] = %.4f %.4f %.4f, checksum %08lx%08lx\n", frame,
               e ? msg : "ok", a.calls - calls, tensor[0], tensor[1], tensor[2], (unsigned long)(sum >> 32),
               (unsigned long)(sum & 0xffffffffu));
        a.top = mark; /* everything the frame took goes back */
        ok ? passed++ : failed++;
    }
    printf("arena: %lu bytes for setup, %lu at the peak of a frame, of %lu\n", (unsigned long)mark,
           (unsigned long)a.peak, (unsigned long)a.cap);
    printf("heap: %lu calls during setup, %lu after\n", setup_heap, heap_calls - setup_heap);
    if (heap_calls == 0) passed++;
    else failed++;
    printf("board_infer: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
