/* Inference preprocessing: a JPEG in, the 3x224x224 float tensor an ImageNet model wants out.
   usage: infer_preprocess IMAGE.jpg [IMAGE.jpg ...]
   Prints the tensor's shape and its first values per image. After setup the loop allocates
   nothing but the decoded pixels: the transform writes into our tensor using our scratch memory.
   Built with RECIO_TURBOJPEG (and -ljpeg), a JPEG is decoded only where the chain reads it. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include <stdio.h>
#include <stdlib.h>

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long sz;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 && (b = (unsigned char *)malloc((size_t)sz)))
        *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

int main(int argc, char **argv) {
    static float tensor[3 * 224 * 224];              /* the model's input, reused for every image */
    static unsigned char scratch[8 << 20];           /* recio's working memory, reused too */
    recio_transform *t;
    int i;
    if (recio_transform_parse(&t, "resize_short(256) center_crop(224) normalize(imagenet) chw") != RECIO_OK) return 1;
    for (i = 1; i < argc; i++) {
        size_t n = 0;
        unsigned char *jpeg = slurp(argv[i], &n);
        recio_image out = recio_image_wrap(tensor, 224, 224, 3, RECIO_F32, RECIO_CHW, 0);
        recio_apply_desc d = {0};
        char why[RECIO_ERRMSG_SIZE] = "cannot read the file";
        recio_transform_info ti;
        int w = 0, h = 0;
        recio_err e = RECIO_ERR_IO;
        d.bytes = jpeg, d.size = n, d.channels = 3, d.out = &out;
        if (jpeg && recio_image_info(jpeg, n, &w, &h, NULL) == RECIO_OK &&
            (recio_transform_query(t, w, h, 3, &ti), ti.scratch_size <= sizeof scratch)) {
            d.scratch = scratch; /* else NULL: recio allocates for this unusually large image */
            d.scratch_size = sizeof scratch;
        }
        d.errmsg = why; /* set after the read: "" on success */
        if (jpeg) e = recio_transform_apply_desc(t, &d);
        free(jpeg);
        if (e != RECIO_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], why);
            continue;
        }
        printf("%s: 3x224x224 f32, R[0..2] = %.4f %.4f %.4f, B[0] = %.4f\n", argv[i], tensor[0], tensor[1], tensor[2],
               tensor[2 * 224 * 224]);
    }
    recio_transform_free(t);
    return 0;
}
