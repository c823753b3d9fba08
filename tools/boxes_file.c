/* The boxes file of `recio apply --boxes`: one box a line, in a file of its own so that the fuzz
   harness (tests/fuzz/fuzz_boxes.c) reaches the very code the command runs. */
#include "cli.h"
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

/* Line ln's five numbers as floats; 0, or -1 with the error printed: a number a float cannot hold
   (1e40 would become inf), or a box that is not one (recio_boxes_check: NaN, infinite, inverted). */
static int box_line(const char *path, int ln, const char *const names[5], const double d[5], float v[5]) {
    char why[96];
    const char *c;
    int k;
    for (k = 0; k < 5; k++) {
        if (d[k] == d[k] && (d[k] > FLT_MAX || d[k] < -FLT_MAX) && d[k] - d[k] == 0)
            return cli_err("%s: line %d: %s %g does not fit in a float", path, ln, names[k], d[k]), -1;
        v[k] = (float)d[k];
    }
    if (recio_boxes_check(v, 1, 5, NULL, why, sizeof why) == RECIO_OK) return 0;
    c = strchr(why, ':'); /* "object 0: what" */
    cli_err("%s: line %d: %s (a box is 'class xmin ymin xmax ymax': finite numbers, xmin <= xmax, ymin <= ymax)", path, ln,
            c ? c + 2 : why);
    return -1;
}

/* Boxes file: `class xmin ymin xmax ymax` per line (blank lines skipped) into 5 floats per box. */
int cli_read_boxes(const char *path, float **obj, int *count) {
    FILE *f = fopen(path, "r");
    char line[512];
    int ln = 0, cap = 0;
    *obj = NULL, *count = 0;
    if (!f) return cli_err("%s: cannot open: %s", path, strerror(errno)), -1;
    static const char *const names[5] = {"class", "xmin", "ymin", "xmax", "ymax"};
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end;
        double d[5];
        float v[5];
        int k;
        ln++;
        for (k = 0; k < 5; k++, p = end) {
            d[k] = strtod(p, &end);
            if (end == p) break;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (k == 0 && !*p) continue;
        if (k < 5 || *p) return fclose(f), cli_err("%s: line %d: expected 'class xmin ymin xmax ymax'", path, ln), -1;
        if (box_line(path, ln, names, d, v)) return fclose(f), -1;
        if (*count == cap) {
            float *nb = (float *)realloc(*obj, (size_t)(cap = cap ? 2 * cap : 16) * 5 * sizeof(float));
            if (!nb) return fclose(f), cli_err("%s: out of memory", path), -1;
            *obj = nb;
        }
        memcpy(*obj + (size_t)5 * (size_t)(*count)++, v, sizeof v);
    }
    fclose(f);
    return 0;
}
