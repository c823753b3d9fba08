/* libFuzzer harness: any bytes as the boxes file of `recio apply --boxes` (tools/boxes_file.c, the
   code the command runs), checked against a model written here from the documented format: lines
   split at '\n'; a line of only whitespace is skipped; any other line is exactly five
   whitespace-separated numbers 'class xmin ymin xmax ymax' (strtod's forms), each fitting a float,
   finite, with xmin <= xmax and ymin <= ymax; a NUL byte is refused. The reader must accept exactly
   the files the model accepts, with the same boxes in order, and on a refusal name the file and the
   first bad line. A crash, a leak, or a disagreement is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "../../tools/boxes_file.c"
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

static char last_err[1024];

/* The command's message sink (tools/recio.c), kept for the check of what the refusal names. */
void cli_err(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
}

static int is_ws(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* One line (no '\n', NUL-terminated copy) by the model: 0 blank, 1 a box in v, -1 refused. */
static int model_line(char *s, float v[5]) {
    int k = 0;
    char *p = s;
    for (;;) {
        char *tok, *end;
        double d;
        while (is_ws((unsigned char)*p)) p++;
        if (!*p) break;
        tok = p;
        while (*p && !is_ws((unsigned char)*p)) p++;
        if (*p) *p++ = 0; /* the token alone */
        else p = tok + strlen(tok);
        if (k == 5) return -1;
        d = strtod(tok, &end);
        if (end == tok || *end) return -1;
        if (!(d == d) || d > FLT_MAX || d < -FLT_MAX) return -1; /* NaN, inf, or beyond a float */
        v[k++] = (float)d;
    }
    if (k == 0) return 0;
    if (k != 5 || v[1] > v[3] || v[2] > v[4]) return -1;
    return 1;
}

/* The model over the whole file: the number of boxes (into want), or -(first bad line). */
static long model(const uint8_t *data, size_t size, float *want) {
    size_t at = 0;
    long ln = 0, n = 0;
    while (at < size) {
        const uint8_t *nl = (const uint8_t *)memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
        char *s = (char *)malloc(len + 1);
        int r;
        ln++;
        memcpy(s, data + at, len);
        s[len] = 0;
        r = memchr(data + at, 0, len) ? -1 : model_line(s, want + 5 * n);
        free(s);
        if (r < 0) return -ln;
        n += r;
        at += len + 1;
    }
    return n;
}

static char path[64];
static void cleanup(void) { remove(path); } /* the replay leaves nothing in /tmp */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    float *want, *got = NULL;
    int count = -1;
    long expect;
    FILE *f;
    if (size > (1 << 16)) return 0;
    if (!path[0]) snprintf(path, sizeof path, "/tmp/recio-fuzz-boxes-%ld.txt", (long)getpid()), atexit(cleanup);
    if (!(f = fopen(path, "wb"))) return 0;
    if (fwrite(data, 1, size, f) != size) size = 0;
    fclose(f);
    want = (float *)malloc((size / 2 + 1) * 5 * sizeof(float)); /* a box takes 10 bytes at least */
    expect = model(data, size, want);
    last_err[0] = 0;
    if (cli_read_boxes(path, &got, &count) == 0) {
        if (expect < 0 || count != expect) __builtin_trap();
        if (count && memcmp(got, want, (size_t)count * 5 * sizeof(float)) != 0) __builtin_trap();
    } else {
        char at[48];
        snprintf(at, sizeof at, ": line %ld: ", -expect);
        if (expect >= 0 || strncmp(last_err, path, strlen(path)) != 0 || !strstr(last_err, at)) __builtin_trap();
    }
    free(got);
    free(want);
    return 0;
}
