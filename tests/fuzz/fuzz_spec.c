/* libFuzzer harness: any text as a transform spec (every op, any arguments), applied to a small
   image when it parses. Beyond crashes it checks the table's promises: an apply that succeeds fits in
   recio_transform_query's scratch_size bytes of caller scratch and gives the same bytes there, and its shape
   is the one recio_transform_query announced. */
#include "recio.h"
#include "../img_desc.h"
#include <stdlib.h>
#include <string.h>

#define FUZZ_SCRATCH_CAP ((size_t)64 << 20) /* larger chains are skipped: memory, not logic */

static void check_apply(const recio_transform *t, const recio_image *in, uint64_t seed) {
    recio_image out, out2, shape;
    size_t need = t_scratch_size(t, in->width, in->height, in->channels);
    void *scratch;
    if (need > FUZZ_SCRATCH_CAP) return;
    memset(&out, 0, sizeof out);
    memset(&out2, 0, sizeof out2);
    if (recio_transform_apply(t, in, &out, seed) != RECIO_OK) return;
    if (t_output_shape(t, in->width, in->height, in->channels, &shape) == RECIO_OK &&
        (shape.width != out.width || shape.height != out.height || shape.dtype != out.dtype || shape.layout != out.layout))
        __builtin_trap();
    scratch = malloc(need ? need : 1);
    if (scratch && t_apply_scratch(t, in, &out2, seed, scratch, need) != RECIO_OK) __builtin_trap();
    if (scratch && memcmp(out.data, out2.data, recio_image_bytes(&out)) != 0) __builtin_trap();
    free(scratch);
    recio_image_free(&out);
    recio_image_free(&out2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_transform *t = NULL;
    recio_image in;
    char *spec, msg[200];
    size_t i;
    int c;
    if (size < 1 || size > 4096) return 0;
    spec = (char *)malloc(size);
    memcpy(spec, data + 1, size - 1);
    spec[size - 1] = 0;
    c = data[0] % 3 == 0 ? 1 : data[0] % 3 == 1 ? 3 : 4;
    if (t_parse_ex(&t, spec, NULL, msg, sizeof msg) == RECIO_OK) {
        if (recio_image_alloc(&in, 23, 17, c, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK) {
            for (i = 0; i < recio_image_bytes(&in); i++) ((unsigned char *)in.data)[i] = (unsigned char)(i * 37 + data[0]);
            check_apply(t, &in, data[0]);
            recio_image_free(&in);
        }
        recio_transform_free(t);
    } else if (strncmp(msg, "spec:", 5) != 0 || t != NULL) {
        __builtin_trap(); /* every refusal names its place */
    }
    free(spec);
    return 0;
}
