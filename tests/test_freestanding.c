/* What a program without files does with recio (make freestanding links it for a Cortex-M4 against
   the RECIO_NO_STDIO library; make test runs it here): records written to and read from memory, an
   index parsed from text, a two-file dataset split across ranks through a filesystem over memory, and
   image ops on pixels in a buffer. Only recio's memory paths and the C library are used. */
#include "recio.h"
#include <stdio.h>
#include <string.h>

static int passed, failed;
static void check(int ok, const char *what) {
    if (ok) passed++;
    else failed++, printf("FAIL %s\n", what);
}

/* Two "files" in memory, opened by name through the split's filesystem (plain paths, open_read only). */
typedef struct mem_file {
    const char *name;
    recio_buffer data;
    uint64_t at;
} mem_file;
static mem_file files[2] = {{"flash:a.rec", {0, 0, 0, {0, 0, 0}}, 0}, {"flash:b.rec", {0, 0, 0, {0, 0, 0}}, 0}};

static int64_t mf_read(void *u, void *buf, size_t n) {
    mem_file *f = (mem_file *)u;
    size_t left = f->data.size - (size_t)f->at;
    if (n > left) n = left;
    memcpy(buf, f->data.data + f->at, n);
    f->at += n;
    return (int64_t)n;
}
static int mf_seek(void *u, uint64_t off) {
    mem_file *f = (mem_file *)u;
    if (off > f->data.size) return -1;
    f->at = off;
    return 0;
}
static int64_t mf_size(void *u) { return (int64_t)((mem_file *)u)->data.size; }
static recio_err mf_open(void *user, const char *path, recio_io *io, char *why) {
    int i;
    (void)user, (void)why;
    for (i = 0; i < 2; i++)
        if (strcmp(path, files[i].name) == 0) {
            memset(io, 0, sizeof *io);
            files[i].at = 0;
            io->read = mf_read;
            io->seek = mf_seek;
            io->size = mf_size;
            io->user = &files[i];
            return RECIO_OK;
        }
    return RECIO_ERR_IO;
}

static void records_index_split(void) {
    recio_writer *w;
    recio_writer_desc wd;
    recio_reader *r;
    recio_record rec;
    recio_index idx;
    recio_index_desc id;
    recio_split_desc sd;
    recio_fs fs;
    unsigned char payload[300];
    int f, i, n, rank, total = 0;
    memset(payload, 0x5a, sizeof payload);
    for (f = 0; f < 2; f++) {
        memset(&wd, 0, sizeof wd);
        wd.mem = &files[f].data;
        check(recio_writer_open_desc(&w, NULL, &wd) == RECIO_OK, "writer desc.mem");
        for (i = 0; i < 40; i++) {
            recio_store_u32le(payload, (uint32_t)(f * 100 + i));
            check(recio_writer_write(w, payload, (size_t)(4 + (i * 37) % 290)) == RECIO_OK, "write");
        }
        check(recio_writer_close(w) == RECIO_OK, "writer_close");
    }
    check(recio_reader_open_mem(&r, files[0].data.data, files[0].data.size) == RECIO_OK, "reader_open_mem");
    for (n = 0; recio_reader_next(r, &rec) == RECIO_OK; n++) check(recio_load_u32le(rec.data) == (uint32_t)n, "payload");
    check(n == 40, "40 records");
    recio_reader_close(r);
    memset(&idx, 0, sizeof idx);
    memset(&id, 0, sizeof id);
    id.text = "0\t0\n1\t24\n", id.size = 9;
    check(recio_index_load(&idx, "flash:a.idx", &id) == RECIO_OK && idx.count == 2, "index desc.text");
    recio_index_free(&idx);
    memset(&sd, 0, sizeof sd);
    memset(&fs, 0, sizeof fs);
    fs.open_read = mf_open;
    sd.fs = &fs;
    for (rank = 0; rank < 3; rank++) {
        recio_split *s;
        check(recio_split_open_desc(&s, "flash:a.rec;flash:b.rec", (unsigned)rank, 3, &sd) == RECIO_OK, "split_open");
        while (recio_split_next(s, &rec) == RECIO_OK) total++;
        recio_split_close(s);
    }
    check(total == 80, "every record once over 3 ranks");
    recio_buffer_free(&files[0].data);
    recio_buffer_free(&files[1].data);
}

static void image_ops(void) {
    static unsigned char px[32 * 24 * 3], small_px[16 * 12 * 3], flip_px[16 * 12 * 3];
    static float hwc[12 * 12 * 3], chw[3 * 12 * 12];
    const float mean[4] = {0.485f, 0.456f, 0.406f, 0}, std[4] = {0.229f, 0.224f, 0.225f, 1};
    recio_image in = recio_image_wrap(px, 32, 24, 3, RECIO_U8, RECIO_HWC, 0);
    recio_image small = recio_image_wrap(small_px, 16, 12, 3, RECIO_U8, RECIO_HWC, 0);
    recio_image flipped = recio_image_wrap(flip_px, 16, 12, 3, RECIO_U8, RECIO_HWC, 0), crop;
    recio_image norm = recio_image_wrap(hwc, 12, 12, 3, RECIO_F32, RECIO_HWC, 0);
    recio_image out = recio_image_wrap(chw, 12, 12, 3, RECIO_F32, RECIO_CHW, 0);
    int i;
    for (i = 0; i < (int)sizeof px; i++) px[i] = (unsigned char)(i * 7);
    check(recio_image_resize(&in, &small, 16, 12, RECIO_LINEAR) == RECIO_OK, "resize");
    check(recio_image_flip(&small, &flipped) == RECIO_OK, "flip");
    check(flip_px[0] == small_px[15 * 3] && flip_px[2] == small_px[15 * 3 + 2], "flip mirrors");
    check(recio_image_center_crop(&flipped, &crop, 12, 12) == RECIO_OK, "center_crop");
    check(recio_image_normalize(&crop, &norm, mean, std) == RECIO_OK, "normalize");
    check(recio_image_to_chw(&norm, &out) == RECIO_OK, "to_chw");
    check(chw[0] == hwc[0] && chw[12 * 12] == hwc[1] && chw[2 * 12 * 12 + 1] == hwc[5], "chw planes");
}

int main(void) {
    records_index_split();
    image_ops();
    printf("freestanding: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
