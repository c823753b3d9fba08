/* libFuzzer harness: MXNet detection labels (recio_det_layout_of, recio_det_labels) from any float
   bits. A layout that is accepted must be what recio.h says one is (A >= 2 and B >= 5 whole, the
   objects filling the rest exactly), and writing its header extras and objects back with
   recio_det_labels must give the same floats; recio_det_labels must write nothing when cap is too
   small and always say how many floats it needs. The first byte picks the float source: raw bits,
   or small whole numbers (so that layouts parse and their checks run). */
#include "recio.h"
#include <stdio.h>
#include <string.h>

#define FD_FAIL() (fprintf(stderr, "fuzz_det: check at line %d failed\n", __LINE__), __builtin_trap())
#define FD_MAX 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    float lab[FD_MAX], out[FD_MAX + 8];
    recio_det_layout L;
    size_t n, i, cap, need;
    int raw;
    if (size < 2) return 0;
    raw = data[0] & 1;
    cap = data[1];
    data += 2, size -= 2;
    n = raw ? size / 4 : size;
    if (n > FD_MAX) n = FD_MAX;
    for (i = 0; i < n; i++) {
        if (raw) memcpy(&lab[i], data + 4 * i, 4);
        else lab[i] = (float)(int8_t)data[i];
    }
    if (recio_det_layout_of(lab, n, &L) != RECIO_OK) return 0;
    if (L.header_width < 2 || L.object_width < 5 || (float)L.header_width != lab[0] || (float)L.object_width != lab[1] ||
        (size_t)L.header_width + (size_t)L.object_width * L.count != n)
        FD_FAIL();
    for (i = 0; i < FD_MAX + 8; i++) out[i] = -7.5f;
    need = recio_det_labels(out, cap, lab + 2, L.header_width - 2, lab + L.header_width, L.object_width, L.count);
    if (need != n) FD_FAIL();
    if (cap < n) { /* too small: nothing written */
        for (i = 0; i < FD_MAX + 8; i++)
            if (out[i] != -7.5f) FD_FAIL();
        return 0;
    }
    if (memcmp(out, lab, n * sizeof *lab) != 0 || out[n] != -7.5f) FD_FAIL();
    return 0;
}
