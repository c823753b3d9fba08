/* libFuzzer harness: what `recio pack` does to an image file before encoding it: the probe, the EXIF
   orientation parser and the decode that applies it (tools/pack_codec.c, compiled in here), on any
   bytes. A crash, a sanitizer report, an orientation out of 1..8 or a rotated image whose size does
   not match its orientation is a failure. */
#include "../../tools/pack_codec.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_image plain, turned;
    char why[200], probe[RECIO_ERRMSG_SIZE]; /* the probe passes on the library's words whole */
    int o = codec_exif_orientation(data, size);
    if (o < 1 || o > 8) __builtin_trap();
    (void)codec_probe(data, size, probe, sizeof probe);
    if (size > (1 << 20) || codec_decode(data, size, 3, 0, &plain, why, sizeof why) != 0) return 0;
    if (codec_decode(data, size, 3, 1, &turned, why, sizeof why) == 0) {
        int swap = o >= 5; /* orientations 5..8 exchange width and height */
        if ((swap ? turned.height : turned.width) != plain.width || (swap ? turned.width : turned.height) != plain.height)
            __builtin_trap();
        recio_image_free(&turned);
    }
    recio_image_free(&plain);
    return 0;
}
