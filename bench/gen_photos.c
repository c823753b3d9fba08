/* gen_photos: the benchmarks' ImageNet-like photo set, cut from the sample photos.
     gen_photos SRC_DIR OUT_DIR [COUNT [SEED]]
   Writes COUNT (default 1000) JPEGs into OUT_DIR/class_00 .. class_09 (one class folder per tenth of
   the set, as ImageNet's train folders): each a random crop of a random sample photo, aspect ratio
   (long side / short side) drawn from 1 to 2 (wide or tall), scaled so that its shorter side is 200 to
   600 px, JPEG quality 95. Everything is drawn from recio's RNG seeded with SEED (default 1): the
   same files on every host built with the same JPEG decoder. The photos are cropped and resized with
   recio (AREA when shrinking, LINEAR when enlarging) and encoded with stb_image_write. Then
   `recio list` + `recio pack --resize 256 --quality 90` pack them as im2rec packs ImageNet
   (see the Makefile's bench-data target). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wunused-function" /* stb_image_write's unused static writers */
#endif
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image_write.h"

#define NCLASS 10

static const char *sources[] = {"astronaut-375x500.jpg", "astronaut-exif-rot90-400x300.jpg", "camera-gray-400x300.jpg",
                                "chelsea-333x500.png", "chelsea-500x375.jpg", "chelsea-cmyk-300x400.jpg",
                                "coffee-500x333.jpg", "coffee-progressive-480x360.jpg", "hubble-1600x1200.jpg",
                                "rocket-640x480.jpg", "rocket-alpha-256x256.png"}; /* not retina-120x90: too small */
#define NSRC (sizeof sources / sizeof sources[0])

int main(int argc, char **argv) {
    recio_image src[NSRC];
    recio_rng rng;
    unsigned long long total = 0;
    int count = argc > 3 ? atoi(argv[3]) : 1000, i, c, short_min = 1 << 30, short_max = 0;
    size_t k;
    if (argc < 3 || count <= 0) {
        fprintf(stderr, "usage: gen_photos SRC_DIR OUT_DIR [COUNT [SEED]]\n");
        return 2;
    }
    rng.state = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    for (k = 0; k < NSRC; k++) {
        char path[4096];
        size_t n;
        unsigned char *b;
        snprintf(path, sizeof path, "%s/%s", argv[1], sources[k]);
        if (!(b = bench_slurp(path, &n))) return fprintf(stderr, "gen_photos: cannot read %s\n", path), 1;
        memset(&src[k], 0, sizeof src[k]);
        if (recio_image_decode(&src[k], b, n, 3) != RECIO_OK) return fprintf(stderr, "gen_photos: cannot decode %s\n", path), 1;
        free(b);
    }
    mkdir(argv[2], 0755);
    for (c = 0; c < NCLASS; c++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/class_%02d", argv[2], c);
        mkdir(dir, 0755);
    }
    for (i = 0; i < count; i++) {
        const recio_image *s = &src[recio_rng_below(&rng, NSRC)];
        double aspect = exp(log(2.0) * recio_rng_uniform(&rng)); /* long / short, log-uniform in [1, 2] */
        int wide = (int)recio_rng_below(&rng, 2), target = 200 + (int)recio_rng_below(&rng, 401);
        double frac = 0.5 + 0.5 * recio_rng_uniform(&rng); /* crop's short side / the largest that fits */
        int cw, ch, x, y, ow, oh;
        recio_image view, out;
        char path[4096];
        /* the largest crop of this aspect ratio inside the photo, then a fraction of it */
        double fw = wide ? aspect : 1.0, fh = wide ? 1.0 : aspect, fit = fmin(s->width / fw, s->height / fh) * frac;
        cw = (int)fmax(8, floor(fit * fw));
        ch = (int)fmax(8, floor(fit * fh));
        if (cw > s->width) cw = s->width;
        if (ch > s->height) ch = s->height;
        x = (int)recio_rng_below(&rng, (uint64_t)(s->width - cw + 1));
        y = (int)recio_rng_below(&rng, (uint64_t)(s->height - ch + 1));
        if (cw < ch) ow = target, oh = (int)lround((double)ch * target / cw);
        else oh = target, ow = (int)lround((double)cw * target / ch);
        memset(&out, 0, sizeof out);
        if (recio_image_crop(s, &view, x, y, cw, ch) != RECIO_OK ||
            recio_image_resize(&view, &out, ow, oh, ow < cw ? RECIO_AREA : RECIO_LINEAR) != RECIO_OK)
            return fprintf(stderr, "gen_photos: crop/resize failed\n"), 1;
        snprintf(path, sizeof path, "%s/class_%02d/img_%04d.jpg", argv[2], i * NCLASS / count, i);
        if (!stbi_write_jpg(path, ow, oh, 3, out.data, 95)) return fprintf(stderr, "gen_photos: cannot write %s\n", path), 1;
        total += (unsigned long long)ow * (unsigned long long)oh;
        if ((ow < oh ? ow : oh) < short_min) short_min = ow < oh ? ow : oh;
        if ((ow < oh ? ow : oh) > short_max) short_max = ow < oh ? ow : oh;
        recio_image_free(&out);
    }
    for (k = 0; k < NSRC; k++) recio_image_free(&src[k]);
    printf("gen_photos: %d JPEGs in %s (%d classes), shorter side %d-%d px, %.0f kpixels on average\n", count, argv[2],
           NCLASS, short_min, short_max, (double)total / count / 1000.0);
    return 0;
}
