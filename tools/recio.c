/* recio: the command-line tool. Each command lives in a function of the cli_command table;
   every command takes --help. Errors: "recio: FILE: offset N: what", exit 1; bad usage exits 2. */
#include "cli.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const cli_command commands[] = {
    {"dump", "print every record: ordinal, offset, length (--header: image record fields)", cli_cmd_dump},
    {"verify", "check that every record of .rec files can be read", cli_cmd_verify},
    {"index", "rebuild the .idx of a .rec by scanning it", cli_cmd_index},
    {"split", "the records of one worker's part of a dataset (as dmlc-core's InputSplit)", cli_cmd_split},
    {"apply", "decode an image, run a transform spec on it, write the result", cli_cmd_apply},
    {"list", "make an im2rec .lst of the images under a folder", cli_cmd_list},
    {"pack", "pack the images of a .lst into .rec + .idx (im2rec in C)", cli_cmd_pack},
    {"unpack", "write the images of a .rec back to files, labels in a .lst", cli_cmd_unpack},
    {"show", "draw records as a labelled contact sheet PNG", cli_cmd_show},
    {"iter", "run the training iterator: one line per batch, then images/s", cli_cmd_iter},
    {"mean", "the mean image of a dataset after a spec, as a .npy (MXNet's mean_img)", cli_cmd_mean},
    {"salvage", "copy every record of a damaged .rec that still reads, with a new .idx", cli_cmd_salvage},
};

/* Through recio_redact: a URL's user:password@ and ?query (a presigned URL's signature) never reach
   the terminal or a log, whoever wrote the message. */
void cli_err(const char *fmt, ...) {
    char small[4096], *m = small;
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (m = (char *)malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(m, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!m) m = small; /* out of memory: the message cut short */
    recio_redact(m);
    fprintf(stderr, "recio: %s\n", n < 0 ? fmt : m);
    if (m != small) free(m);
}

int cli_open_reader(recio_reader **r, const char *path) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_reader_desc d;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    if (recio_reader_open_desc(r, path, &d) == RECIO_OK) return 0;
    cli_err("%s", msg);
    return -1;
}

int cli_open_iter(recio_iter **it, const recio_iter_desc *d) {
    char msg[RECIO_ERRMSG_SIZE];
    recio_iter_desc with = *d; /* the words come in the desc's buffer */
    recio_err e;
    with.errmsg = msg;
    e = recio_iter_open(it, &with);
    if (e == RECIO_OK) return 0;
    cli_err("%s", msg);
    cli_spec_hint(msg);
    return e == RECIO_ERR_SPEC || e == RECIO_ERR_ARG || e == RECIO_ERR_LIMIT ? CLI_EXIT_USAGE : CLI_EXIT_ERR; /* bad options */
}

int cli_close_writer(recio_writer *w) {
    recio_err e = recio_writer_finish(w);
    if (recio_writer_errmsg(w)[0]) cli_err("%s", recio_writer_errmsg(w));
    else if (e != RECIO_OK) cli_err("%s", recio_strerror(e));
    recio_writer_close(w);
    return e == RECIO_OK ? 0 : -1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "recio %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see 'recio %s --help')\n", cmd);
    return CLI_EXIT_USAGE;
}

/* After "unknown op" (whose words name the nearest op, when one is near): where the ops are listed. */
void cli_spec_hint(const char *msg) {
    if (strstr(msg, "unknown op")) fputs("(the ops and their arguments: docs/image.md, \"SPEC GRAMMAR\" in recio.h)\n", stderr);
}

static void usage(FILE *f) {
    size_t i;
    fputs("usage: recio COMMAND [OPTIONS] ...\n\n"
          "recio reads and writes MXNet / dmlc-core RecordIO datasets (.rec, .idx, .lst).\n\ncommands:\n", f);
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'recio COMMAND --help' (or 'recio help COMMAND') tells more. Errors print as 'recio: FILE: offset N: what'\n"
          "and exit 1; bad usage exits 2.\n", f);
}

int main(int argc, char **argv) {
    size_t i;
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0) { /* `recio help pack` = `recio pack --help` */
        char help[] = "--help", *args[2];
        if (argc < 3) return usage(stdout), 0;
        args[0] = argv[2], args[1] = help;
        for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[2], commands[i].name) == 0) return commands[i].run(2, args);
        cli_err("unknown command '%s' (see 'recio --help')", argv[2]);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("recio %d.%d\n", RECIO_VERSION_MAJOR, RECIO_VERSION_MINOR);
        return 0;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    cli_err("unknown command '%s' (see 'recio --help')", argv[1]);
    return CLI_EXIT_USAGE;
}
