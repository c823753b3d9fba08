/* libFuzzer harness: the text and header parsers (.idx, .lst, image record header). */
#include "recio.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_index idx;
    recio_index_desc id;
    recio_lst lst;
    recio_lst_desc ld;
    recio_irecord ir;
    char msg[RECIO_ERRMSG_SIZE];
    size_t i;
    memset(&id, 0, sizeof id);
    memset(&ld, 0, sizeof ld);
    id.text = ld.text = size ? (const char *)data : "", id.size = ld.size = size;
    id.errmsg = ld.errmsg = msg;
    if (recio_index_load(&idx, "fuzz.idx", &id) == RECIO_OK) recio_index_free(&idx);
    ld.mask_column = size > 0 && (data[0] & 1); /* segmentation lists too: image and mask paths */
    if (recio_lst_load(&lst, "fuzz.lst", &ld) == RECIO_OK) {
        for (i = 0; i < lst.count; i++) {
            if (strlen(lst.items[i].path) > size || lst.items[i].nlabels == 0) __builtin_trap();
            if (!lst.items[i].mask != !ld.mask_column || (lst.items[i].mask && strlen(lst.items[i].mask) > size)) __builtin_trap();
        }
        recio_lst_free(&lst);
    }
    if (recio_irecord_unpack(&ir, data, size) == RECIO_OK) {
        uint32_t k, n = ir.nlabels;
        volatile float sum = 0;
        for (k = 0; k < n; k++) sum += recio_load_f32le((const uint8_t *)ir.all_labels + 4 * (size_t)k);
        const uint8_t *end = (const uint8_t *)ir.image + ir.image_size; /* then the mask and its tail, if any */
        if (ir.mask && ((const uint8_t *)ir.mask != end || end + ir.mask_size + RECIO_MASK_TAIL_SIZE != data + size)) __builtin_trap();
        if (!ir.mask && end != data + size) __builtin_trap();
        (void)sum;
    }
    return 0;
}
