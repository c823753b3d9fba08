/* libFuzzer harness: any bytes as a .rec and its .idx (the first two bytes give the .idx's length),
   through the split in byte, indexed and shuffled modes for 1 to 3 parts, and through the mapped
   reader with seeks to offsets the input names. A crash, a sanitizer report, a hang or a mapped
   reader that disagrees with the memory reader is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char rec_path[64], idx_path[64];

static int put(const char *path, const uint8_t *b, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, n, f) == n;
    if (f) fclose(f);
    return ok;
}

static void drain_split(unsigned rank, unsigned nsplit, int mode, uint64_t seed) {
    recio_split_desc d;
    recio_split *s = NULL;
    recio_record rec;
    int k = 0;
    memset(&d, 0, sizeof d);
    if (mode >= 1) d.index_path = idx_path, d.mode = RECIO_SPLIT_INDEX;
    if (mode == 2) d.shuffle = RECIO_SHUFFLE_FULL, d.seed = seed;
    if (recio_split_open_desc(&s, rec_path, rank, nsplit, &d) == RECIO_OK)
        while (recio_split_next(s, &rec) == RECIO_OK && ++k < 100000) {
        }
    recio_split_close(s);
}

/* The mapped reader, seeking where the input says, agrees with the memory reader. */
static void seeks(const uint8_t *rec, size_t n, const uint8_t *how, size_t hn) {
    recio_reader *m = NULL, *a = NULL;
    size_t i;
    recio_reader_desc d;
    memset(&d, 0, sizeof d);
    d.use_mmap = 1;
    if (recio_reader_open_desc(&m, rec_path, &d) != RECIO_OK) return;
    if (recio_reader_open_mem(&a, rec, n) != RECIO_OK) {
        recio_reader_close(m);
        return;
    }
    for (i = 0; i + 2 <= hn && i < 16; i += 2) {
        uint64_t off = (uint64_t)(how[i] | how[i + 1] << 8) & ~(uint64_t)3;
        recio_record x, y;
        recio_err ex = recio_reader_seek(m, off), ey = recio_reader_seek(a, off);
        if (ex != ey) __builtin_trap();
        if (ex != RECIO_OK) continue;
        ex = recio_reader_next(m, &x);
        ey = recio_reader_next(a, &y);
        if (ex != ey || (ex == RECIO_OK && (x.size != y.size || x.offset != y.offset || memcmp(x.data, y.data, x.size) != 0)))
            __builtin_trap();
    }
    recio_reader_close(m);
    recio_reader_close(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t ni;
    unsigned nsplit, rank;
    int mode;
    if (size < 2 || size > (1 << 16)) return 0;
    if (!rec_path[0]) {
        snprintf(rec_path, sizeof rec_path, "/tmp/recio-fuzz-%ld.rec", (long)getpid());
        snprintf(idx_path, sizeof idx_path, "/tmp/recio-fuzz-%ld.idx", (long)getpid());
    }
    ni = (size_t)(data[0] | data[1] << 8) % (size - 1);
    if (!put(idx_path, data + 2, ni) || !put(rec_path, data + 2 + ni, size - 2 - ni)) return 0;
    for (mode = 0; mode < 3; mode++)
        for (nsplit = 1; nsplit <= 3; nsplit++)
            for (rank = 0; rank < nsplit; rank++) drain_split(rank, nsplit, mode, data[0]);
    seeks(data + 2 + ni, size - 2 - ni, data + 2, ni);
    return 0;
}
