/* libFuzzer harness: image decoding to 1, 3, 4 or the stored channels, at full size and DCT-scaled
   (stb_image; libjpeg-turbo when built with RECIO_TURBOJPEG: make fuzz runs both builds) and
   the decode + transform path that decodes only a JPEG's window, on any bytes. A crash, a sanitizer
   report or an output of the wrong shape is a failure. */
#include "recio.h"
#include "../img_desc.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *specs[] = {"random_resized_crop(32) random_flip(0.5) normalize(imagenet) chw",
                                  "resize_short(24) center_crop(16)", "area random_crop(8,6) brightness(1.5)"};
    static const int side[] = {32, 16, 8};
    size_t k;
    recio_image img;
    static const int channels[4] = {0, 1, 3, 4};
    int ch = channels[size % 4];
    if (recio_image_decode(&img, data, size, ch) == RECIO_OK) {
        if (img.width <= 0 || img.height <= 0 || !img.data || (ch && img.channels != ch)) __builtin_trap();
        recio_image_free(&img);
    }
    if (t_decode_scaled(&img, data, size, ch, (int)(size % 97), NULL, 0) == RECIO_OK) { /* DCT-scaled */
        if (img.width <= 0 || img.height <= 0 || !img.data || (ch && img.channels != ch)) __builtin_trap();
        recio_image_free(&img);
    }
    for (k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        recio_transform *t = NULL;
        recio_image out;
        t_enc d;
        char msg[256];
        memset(&out, 0, sizeof out);
        memset(&d, 0, sizeof d);
        d.channels = 3;
        d.full_scale = (int)(size & 1);
        if (recio_transform_parse(&t, specs[k]) != RECIO_OK) __builtin_trap();
        if (t_apply_encoded(t, data, size, &out, size * 31 + k, &d, msg, sizeof msg) == RECIO_OK) {
            if (out.width != side[k] || out.channels != 3) __builtin_trap();
            recio_image_free(&out);
        } else if (strncmp(msg, "decode: ", 8) != 0 && strncmp(msg, "transform: ", 11) != 0) {
            __builtin_trap();
        }
        recio_transform_free(t);
    }
    return 0;
}
