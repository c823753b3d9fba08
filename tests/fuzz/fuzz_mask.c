/* libFuzzer harness: label masks (recio_decode_desc.mask, the rule every mask entry point calls) on any
   bytes. A crash or sanitizer report is a failure, and so is a mask that is not u8 1-channel HWC, a
   PNG accepted whose header says neither 8-bit grey nor 1/2/4/8-bit palette, a palette index past
   what its bit depth can hold, or a refusal whose words do not start "mask: ". */
#include "recio.h"
#include "../img_desc.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_image m;
    char msg[256];
    size_t i;
    if (t_mask_decode(&m, data, size, msg, sizeof msg) != RECIO_OK) {
        if (strncmp(msg, "mask: ", 6) != 0) __builtin_trap();
        return 0;
    }
    if (size < 33 || m.width <= 0 || m.height <= 0 || m.channels != 1 || m.dtype != RECIO_U8 || m.layout != RECIO_HWC || !m.data)
        __builtin_trap();
    if (!(data[25] == 0 && data[24] == 8) && !(data[25] == 3 && (data[24] == 1 || data[24] == 2 || data[24] == 4 || data[24] == 8)))
        __builtin_trap();
    for (i = 0; data[25] == 3 && i < recio_image_bytes(&m); i++)
        if (((const unsigned char *)m.data)[i] >> data[24]) __builtin_trap(); /* 8-bit: v >> 8 is 0 */
    recio_image_free(&m);
    return 0;
}
