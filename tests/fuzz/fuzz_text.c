/* libFuzzer harness: the text and header parsers (.idx, .lst, image record header). */
#include "recio.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    recio_index idx;
    recio_lst lst;
    recio_irecord ir;
    size_t i;
    memset(&idx, 0, sizeof idx);
    memset(&lst, 0, sizeof lst);
    if (recio_index_parse(&idx, (const char *)data, size, "fuzz.idx") == RECIO_OK) recio_index_free(&idx);
    if (recio_lst_parse(&lst, (const char *)data, size, "fuzz.lst") == RECIO_OK) {
        for (i = 0; i < lst.count; i++)
            if (strlen(lst.items[i].path) > size || lst.items[i].nlabels == 0) __builtin_trap();
        recio_lst_free(&lst);
    }
    if (recio_irecord_unpack(&ir, data, size) == RECIO_OK) {
        uint32_t k, n = recio_irecord_nlabels(&ir);
        volatile float sum = 0;
        for (k = 0; k < n; k++) sum += recio_irecord_label(&ir, k);
        if ((const uint8_t *)ir.image + ir.image_size != data + size) __builtin_trap();
        (void)sum;
    }
    return 0;
}
