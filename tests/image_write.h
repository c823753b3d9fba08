/* Tests that make their own images: stb_image_write, private to the test (static, no stdio), and a
   growing memory sink for its *_to_func writers. */
#ifndef RECIO_TEST_IMAGE_WRITE_H
#define RECIO_TEST_IMAGE_WRITE_H
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wunused-function" /* the static writer brings functions unused here */
#endif
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include "stb_image_write.h"
#include <string.h>

/* Bytes a writer produced (up to 64 KiB; n counts them all, so n > sizeof b means it overflowed). */
typedef struct t_mem_out {
    unsigned char b[1 << 16];
    int n;
} t_mem_out;

static void t_to_mem(void *u, void *d, int k) {
    t_mem_out *m = (t_mem_out *)u;
    if (m->n + k <= (int)sizeof m->b) memcpy(m->b + m->n, d, (size_t)k);
    m->n += k;
}
#endif
