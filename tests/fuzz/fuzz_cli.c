/* libFuzzer harness: the command line's argument parsers, the code the commands run (tools/
   cli_args.c, cmd_iter.c, cmd_split.c, cmd_pack.c, cmd_list.c, cmd_mean.c included here). The input
   is a list of arguments, one a line.
   - cli_parse_u64 (every whole-number option) on each argument, against a model: accepted exactly
     when the argument is decimal digits only (no sign, no space) whose value fits 64 bits, and then
     that value; cli_parse_int and cli_parse_real likewise, for the ranges the commands use (a '-'
     allowed first; a real is digits with an optional fraction and exponent, no space, '+', hex,
     nan or inf);
   - recio split's --chunk K[,W] on each argument: accepted exactly when K and W are such numbers
     from 1 to 2^32-1, and then those;
   - recio iter's whole option parser on the list: when it accepts, every value is in the range its
     --help gives (batch, workers, nsplit, rank < nsplit, prefetch, channels, last batch, chunk and
     window only together with the chunk shuffle), the float options are the model's value of an
     argument that follows their name, and the dataset and spec are arguments given;
   - recio pack's, list's and mean's parsers on the same list: when one accepts, each numeric value
     is within its --help range (pack: --resize 0..65536, --quality 1..100, --color -1..1,
     --num-thread 1..256; list: --chunks 1..65536, ratios 0..1 adding up to at most 1; mean:
     --channels 1, 3 or 4, --workers 0..256) and is its default or the model's value of an argument
     that follows the option's name, and every name (prefix, root, dataset, spec, output) is an
     argument given.
   Messages go through the commands' own formats into a buffer (a bad format argument shows under
   the sanitizers). A crash, a sanitizer report or a broken property is a failure. */
#define _POSIX_C_SOURCE 200809L
#include "../../tools/cli_args.c"
#include "../../tools/cmd_iter.c"
#include "../../tools/cmd_split.c"
#include "../../tools/cmd_pack.c"
#include "../../tools/cmd_list.c"
#include "../../tools/cmd_mean.c"
#include "../../tools/pack_files.c" /* pack_cat: list's --exts */
#include "../../tools/pack_codec.c" /* what pack links (never called from its parser) */
#include "../../tools/walk.c"       /* what list links (never called from its parser) */
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

/* Never reached: the harness calls the parsers, not the commands (whose outputs these are). */
#define NEVER __builtin_trap()
int cli_open_iter(recio_iter **it, const recio_iter_desc *d) { (void)it, (void)d, NEVER; }
int cli_close_writer(recio_writer *w) { (void)w, NEVER; }
int cli_out_claim(cli_out *o, const char *path, cli_kind kind, const char *const *inputs, size_t ninputs, int force) {
    (void)o, (void)path, (void)kind, (void)inputs, (void)ninputs, (void)force, NEVER;
}
void cli_out_free(cli_out *o) { (void)o, NEVER; }
int cli_out_hold(cli_out *o) { (void)o, NEVER; }
int cli_out_settle(cli_out *o, int undo) { (void)o, (void)undo, NEVER; }
int cli_out_is(const cli_out *o, const char *path) { (void)o, (void)path, NEVER; }
const char *cli_out_target(const cli_out *o) { (void)o, NEVER; }
int cli_out_printf(cli_out *o, const char *fmt, ...) { (void)o, (void)fmt, NEVER; }
int cli_out_write(cli_out *o, const void *p, size_t n) { (void)o, (void)p, (void)n, NEVER; }
int cli_out_commit(cli_out *o) { (void)o, NEVER; }
int cli_out_commit_all(cli_out *const *outs, size_t n) { (void)outs, (void)n, NEVER; }

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

/* The model of a whole number with an optional '-' first, from lo to hi (hi >= 0 here). */
static int model_int(const char *s, long long lo, long long hi, long long *v) {
    unsigned long long u;
    int neg = *s == '-';
    if (model_u64(s + neg, strlen(s + neg), &u)) return -1;
    if (neg && u != 0) { /* -u >= lo, counted without overflow */
        if (lo >= 0 || u - 1 > (unsigned long long)-(lo + 1)) return -1;
        *v = -(long long)(u - 1) - 1;
    } else {
        if (u > (unsigned long long)hi) return -1;
        *v = (long long)u;
    }
    return *v >= lo && *v <= hi ? 0 : -1;
}

/* The model of a real: [-] digits [. digits] [e [+-] digits], at least one digit before the
   exponent, nothing else; its value is the C library's reading of that text. */
static int model_real(const char *s, double lo, double hi, double *v) {
    const char *p = s + (*s == '-');
    size_t whole = strspn(p, "0123456789"), frac = 0;
    p += whole;
    if (*p == '.') frac = strspn(++p, "0123456789"), p += frac;
    if (whole + frac == 0) return -1;
    if (*p == 'e' || *p == 'E') {
        size_t k;
        p += 1 + (p[1] == '+' || p[1] == '-');
        if ((k = strspn(p, "0123456789")) == 0) return -1;
        p += k;
    }
    if (*p) return -1;
    *v = strtod(s, NULL);
    return *v >= lo && *v <= hi ? 0 : -1;
}

static const long long int_ranges[][2] = {{0, 1 << 16}, {1, 100}, {-1, 1}, {1, 256}, {1, 65536}};
static const double real_ranges[][2] = {{0, 1}, {-3.4e38, 3.4e38}};

static void numbers(const char *a) {
    unsigned long long got = 12345, want, k, w = 0;
    recio_split_desc d;
    const char *comma = strchr(a, ',');
    int ok;
    size_t j;
    int r = cli_parse_u64(a, &got);
    check(r == model_u64(a, strlen(a), &want) && (r != 0 || got == want));
    memset(&d, 0, sizeof d);
    ok = model_u64(a, comma ? (size_t)(comma - a) : strlen(a), &k) == 0 && k >= 1 && k <= 0xffffffffu &&
         (!comma || (model_u64(comma + 1, strlen(comma + 1), &w) == 0 && w >= 1 && w <= 0xffffffffu));
    r = parse_chunk(a, &d);
    check((r == 0) == ok && (r != 0 || (d.chunk_records == k && d.window_chunks == w)));
    for (j = 0; j < sizeof int_ranges / sizeof int_ranges[0]; j++) {
        long long x = 777, m;
        r = cli_parse_int(a, int_ranges[j][0], int_ranges[j][1], &x);
        check(r == model_int(a, int_ranges[j][0], int_ranges[j][1], &m) && (r != 0 ? x == 777 : x == m));
    }
    for (j = 0; j < sizeof real_ranges / sizeof real_ranges[0]; j++) {
        double x = 777, m;
        r = cli_parse_real(a, real_ranges[j][0], real_ranges[j][1], &x);
        check(r == model_real(a, real_ranges[j][0], real_ranges[j][1], &m) && (r != 0 ? x == 777 : x == m));
    }
}

static int given(char **argv, int argc, const char *s) {
    int i;
    for (i = 1; i < argc; i++)
        if (argv[i] == s) return 1;
    return 0;
}

/* v is the default, or the model's reading of an argument that follows the option name. */
static int int_from(char **argv, int argc, const char *name, long long lo, long long hi, long long v, long long dflt) {
    int i;
    long long m;
    if (v == dflt) return 1;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i - 1], name) == 0 && model_int(argv[i], lo, hi, &m) == 0 && m == v) return 1;
    return 0;
}

static int real_from(char **argv, int argc, const char *name, double lo, double hi, double v, double dflt) {
    int i;
    double m;
    if (v == dflt) return 1;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i - 1], name) == 0 && model_real(argv[i], lo, hi, &m) == 0 && m == v) return 1;
    return 0;
}

/* The same for a float option (iter's): the model's value as a float. */
static int float_from(char **argv, int argc, const char *name, float v) {
    int i;
    double m;
    for (i = 2; i < argc; i++)
        if (strcmp(argv[i - 1], name) == 0 && model_real(argv[i], -3.4e38, 3.4e38, &m) == 0 && (float)m == v) return 1;
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
    check(d->item.mean_scale == 0 || float_from(argv, argc, "--mean-scale", d->item.mean_scale));
    check(d->labels.pad_set ? float_from(argv, argc, "--label-pad", d->labels.pad_value) : d->labels.pad_value == 0);
}

/* recio pack's parser, from the defaults cli_cmd_pack sets. */
static void pack_parse(int argc, char **argv) {
    pack_opts o;
    const char *prefix = NULL, *root = NULL;
    memset(&o, 0, sizeof o);
    o.quality = 95, o.color = 1, o.exif = 1, o.threads = 1;
    if (parse_pack_args(argc, argv, &o, &prefix, &root) != 0) return;
    check(given(argv, argc, prefix) && given(argv, argc, root) && (!o.mask_root || given(argv, argc, o.mask_root)));
    check(o.resize >= 0 && o.resize <= 1 << 16 && int_from(argv, argc, "--resize", 0, 1 << 16, o.resize, 0));
    check(o.quality >= 1 && o.quality <= 100 && int_from(argv, argc, "--quality", 1, 100, o.quality, 95));
    check(o.color >= -1 && o.color <= 1 && int_from(argv, argc, "--color", -1, 1, o.color, 1));
    check(o.threads >= 1 && o.threads <= 256 && int_from(argv, argc, "--num-thread", 1, 256, (long long)o.threads, 1));
}

/* recio list's parser, from the defaults cli_cmd_list sets. */
static void list_parse(int argc, char **argv) {
    list_opts o;
    const char *prefix = NULL, *root = NULL;
    memset(&o, 0, sizeof o);
    o.exts = ".jpeg,.jpg,.png", o.shuffle = 1, o.seed = 100, o.chunks = 1, o.train = 1.0;
    if (parse_list_args(argc, argv, &o, &prefix, &root) == 0) {
        unsigned long long m;
        int i, seed_ok = o.seed == 100;
        check(given(argv, argc, prefix) && given(argv, argc, root) && (!o.mask_root || given(argv, argc, o.mask_root)));
        check(o.chunks >= 1 && o.chunks <= LIST_MAX_CHUNKS && int_from(argv, argc, "--chunks", 1, LIST_MAX_CHUNKS, (long long)o.chunks, 1));
        check(o.train >= 0 && o.train <= 1 && real_from(argv, argc, "--train-ratio", 0, 1, o.train, 1.0));
        check(o.test >= 0 && o.test <= 1 && real_from(argv, argc, "--test-ratio", 0, 1, o.test, 0) && o.train + o.test <= 1.0);
        for (i = 2; i < argc && !seed_ok; i++)
            seed_ok = strcmp(argv[i - 1], "--seed") == 0 && model_u64(argv[i], strlen(argv[i]), &m) == 0 && m == o.seed;
        check(seed_ok);
    }
    free(o.exts_owned);
}

/* recio mean's parser. */
static void mean_parse(int argc, char **argv) {
    mean_opts o;
    const recio_iter_desc *d = &o.d;
    if (parse_mean_args(argc, argv, &o) != 0) return;
    check(given(argv, argc, d->uris) && given(argv, argc, d->item.spec) && given(argv, argc, o.out));
    check(d->item.channels == 0 || d->item.channels == 1 || d->item.channels == 3 || d->item.channels == 4);
    check(int_from(argv, argc, "--channels", 1, 4, d->item.channels, 0));
    check(d->run.workers <= 256 && int_from(argv, argc, "--workers", 0, 256, d->run.workers, 0));
    check(d->run.batch == 32 && d->run.last_batch == RECIO_LAST_PAD);
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
    if (!help) { /* --help would print the help, and parse nothing */
        static char iter_name[] = "iter", pack_name[] = "pack", list_name[] = "list", mean_name[] = "mean";
        argv[0] = iter_name, iter_parse(argc, argv);
        argv[0] = pack_name, pack_parse(argc, argv);
        argv[0] = list_name, list_parse(argc, argv);
        argv[0] = mean_name, mean_parse(argc, argv);
    }
    free(text);
    return 0;
}
