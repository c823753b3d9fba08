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
    char why[RECIO_ERRMSG_SIZE];
    const char *c;
    int k;
    for (k = 0; k < 5; k++) {
        if (d[k] == d[k] && (d[k] > FLT_MAX || d[k] < -FLT_MAX) && d[k] - d[k] == 0)
            return cli_err("%s: line %d: %s %g does not fit in a float", path, ln, names[k], d[k]), -1;
        v[k] = (float)d[k];
    }
    if (recio_boxes_check(v, 1, 5, NULL, why) == RECIO_OK) return 0;
    c = strchr(why, ':'); /* "object 0: what" */
    cli_err("%s: line %d: %s (a box is 'class xmin ymin xmax ymax': finite numbers, xmin <= xmax, ymin <= ymax)", path, ln,
            c ? c + 2 : why);
    return -1;
}

/* The whole file into a NUL-terminated buffer (malloc'd); 0, or -1 with the error said. */
static int slurp(const char *path, char **text, size_t *n) {
    FILE *f = fopen(path, "rb");
    size_t cap = 0, k;
    *text = NULL, *n = 0;
    if (!f) return cli_err("%s: cannot open: %s", path, strerror(errno)), -1;
    do {
        if (cap - *n < 4097) {
            char *nb = (char *)realloc(*text, cap = cap ? 2 * cap : 8192);
            if (!nb) return fclose(f), free(*text), *text = NULL, cli_err("%s: out of memory", path), -1;
            *text = nb;
        }
        *n += k = fread(*text + *n, 1, cap - *n - 1, f);
    } while (k > 0);
    k = (size_t)ferror(f);
    fclose(f);
    if (k) return free(*text), *text = NULL, cli_err("%s: cannot read", path), -1;
    (*text)[*n] = 0;
    return 0;
}

static int ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Line s (NUL-terminated, no newline) into d: the count of numbers, each ending at whitespace or the
   end (so "0.1-0.2" is no pair of numbers), or -1 for anything else. */
static int line_numbers(const char *s, double d[5]) {
    int k = 0;
    for (;;) {
        char *end;
        while (ws(*s)) s++;
        if (!*s) return k;
        if (k == 5) return -1;
        d[k] = strtod(s, &end);
        if (end == s || (*end && !ws(*end))) return -1;
        k++, s = end;
    }
}

/* Boxes file: `class xmin ymin xmax ymax` per line (blank lines skipped) into 5 floats per box. Lines
   may be of any length (a line is never read in pieces), and a NUL byte is refused (what follows it
   would be lost). */
int cli_read_boxes(const char *path, float **obj, int *count) {
    static const char *const names[5] = {"class", "xmin", "ymin", "xmax", "ymax"};
    char *text, *line, *nl;
    size_t n;
    int ln = 0, cap = 0, rc = 0;
    *obj = NULL, *count = 0;
    if (slurp(path, &text, &n)) return -1;
    for (line = text; !rc && line < text + n; line = nl + 1) {
        double d[5];
        float v[5];
        int k;
        ln++;
        nl = strchr(line, '\n');
        if (!nl) nl = text + n;
        *nl = 0;
        if (nl != line + strlen(line)) {
            rc = -1, cli_err("%s: line %d: a NUL byte (not a text file?)", path, ln);
            break;
        }
        if ((k = line_numbers(line, d)) == 0) continue;
        if (k != 5) rc = -1, cli_err("%s: line %d: expected 'class xmin ymin xmax ymax'", path, ln);
        else if (box_line(path, ln, names, d, v)) rc = -1;
        else if (*count == cap) {
            float *nb = (float *)realloc(*obj, (size_t)(cap = cap ? 2 * cap : 16) * 5 * sizeof(float));
            if (!nb) rc = -1, cli_err("%s: out of memory", path);
            else *obj = nb;
        }
        if (!rc) memcpy(*obj + (size_t)5 * (size_t)(*count)++, v, sizeof v);
    }
    free(text);
    return rc;
}
