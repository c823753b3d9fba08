/* libFuzzer harness: the command line's argument parsers, the code the commands run (tools/
   cli_args.c, cmd_iter.c, cmd_split.c included here). The input is a list of arguments, one a line.
   - cli_parse_u64 (every whole-number option) on each argument, against a model: accepted exactly
     when the argument is decimal digits only (no sign, no space) whose value fits 64 bits, and then
     that value;
   - recio split's --chunk K[,W] on each argument: accepted exactly when K and W are such numbers
     from 1 to 2^32-1, and then those;
   - recio iter's whole option parser on the list: when it accepts, every value is in the range its
     --help gives (batch, workers, nsplit, rank < nsplit, prefetch, channels, last batch, chunk and
     window only together with the chunk shuffle), and the dataset and spec are arguments given.
   Messages go through the commands' own formats into a buffer (a bad format argument shows under
   the sanitizers). A crash, a sanitizer report or a broken property is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "../../tools/cli_args.c"
#include "../../tools/cmd_iter.c"
#include "../../tools/cmd_split.c"
#include <stdarg.h>
#include <stdint.h>

static char msg[2048];

void cli_err(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    (void)cmd;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

/* Never reached: the harness calls the parsers, not the commands. */
int cli_open_iter(recio_iter **it, const recio_iter_desc *d) {
    (void)it, (void)d;
    __builtin_trap();
}

static void check(int ok) {
    if (!ok) __builtin_trap();
}

/* The model of a whole number: -1, or 0 with the value. */
static int model_u64(const char *s, size_t len, unsigned long long *v) {
    size_t i;
    *v = 0;
    if (len == 0) return -1;
    for (i = 0; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || *v > (~0ull - d) / 10) return -1;
        *v = *v * 10 + d;
    }
    return 0;
}

static void numbers(const char *a) {
    unsigned long long got = 12345, want, k, w = 0;
    recio_split_desc d;
    const char *comma = strchr(a, ',');
    int ok;
    int r = cli_parse_u64(a, &got);
    check(r == model_u64(a, strlen(a), &want) && (r != 0 || got == want));
    memset(&d, 0, sizeof d);
    ok = model_u64(a, comma ? (size_t)(comma - a) : strlen(a), &k) == 0 && k >= 1 && k <= 0xffffffffu &&
         (!comma || (model_u64(comma + 1, strlen(comma + 1), &w) == 0 && w >= 1 && w <= 0xffffffffu));
    r = parse_chunk(a, &d);
    check((r == 0) == ok && (r != 0 || (d.chunk_records == k && d.window_chunks == w)));
}

static int given(char **argv, int argc, const char *s) {
    int i;
    for (i = 1; i < argc; i++)
        if (argv[i] == s) return 1;
    return 0;
}

static void iter_parse(int argc, char **argv) {
    iter_opts o;
    const recio_iter_desc *d = &o.d;
    if (parse(argc, argv, &o) != 0) return;
    check(given(argv, argc, d->uris) && given(argv, argc, d->item.spec));
    check(d->run.batch <= 1u << 24 && d->run.workers <= 256 && d->nsplit <= 1u << 20 && d->run.prefetch <= 4096);
    check(d->nsplit ? d->rank < d->nsplit : d->rank <= 1u << 20);
    check(d->item.channels == 0 || d->item.channels == 1 || d->item.channels == 3 || d->item.channels == 4);
    check(d->run.last_batch == RECIO_LAST_PAD || d->run.last_batch == RECIO_LAST_DISCARD ||
          d->run.last_batch == RECIO_LAST_ROLL_OVER);
    check(!d->source.window_chunks || d->source.chunk_records);
    check(!d->source.chunk_records || (d->source.shuffle == RECIO_SHUFFLE_CHUNK && d->source.mode == RECIO_SPLIT_INDEX));
    check(d->run.cache_bytes == (size_t)o.cache_mb << 20 && (o.cache_mb << 20) >> 20 == o.cache_mb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text, *argv[66], *p;
    int argc = 1, i, help = 0;
    static char name[] = "iter";
    if (size > 4096) return 0;
    text = (char *)malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    argv[0] = name;
    for (p = text; argc < 65;) {
        char *nl = strchr(p, '\n');
        argv[argc++] = p;
        if (!nl) break;
        *nl = 0, p = nl + 1;
    }
    argv[argc] = NULL;
    for (i = 1; i < argc; i++) help |= cli_is_help(argv[i]), numbers(argv[i]);
    if (!help) iter_parse(argc, argv); /* --help would print the help, and parse nothing */
    free(text);
    return 0;
}
