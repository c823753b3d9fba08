/* Shared by the recio command's source files: messages, exits and argument parsing. */
#ifndef RECIO_CLI_H
#define RECIO_CLI_H
#include "recio.h"
#include <stdio.h>

/* Exit statuses: 1 for errors in the data or the system, 2 for bad usage. */
#define CLI_EXIT_ERR 1
#define CLI_EXIT_USAGE 2

typedef struct cli_command {
    const char *name;
    const char *summary;               /* one line for `recio --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_command;

/* "recio: what" on stderr. */
void cli_err(const char *fmt, ...);
/* Print "recio CMD: msg" and a pointer to --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...);
/* 1 when argv[i] is -h or --help. */
int cli_is_help(const char *arg);
/* After a spec error message: when it is "unknown op", the valid ops on stderr. */
void cli_spec_hint(const char *msg);
/* A streaming reader on path; on failure its words ("PATH: offset 0: cannot open: ...") on stderr
   and -1. */
int cli_open_reader(recio_reader **r, const char *path);
/* recio_iter_open_ex; on failure its message (and the valid ops for an unknown one) on stderr and
   the exit status: usage for a bad spec or option, else an error. 0 when open. */
int cli_open_iter(recio_iter **it, const recio_iter_desc *d);
/* Finish and close a writer: its message on stderr (the error, or a note after a good commit, such as
   a kept copy that could not be removed); 0 when the output is complete and in place, else -1. */
int cli_close_writer(recio_writer *w);
/* Parse an unsigned integer option value; returns 0 on success. */
int cli_parse_u64(const char *s, unsigned long long *out);

/* The salvage scan (cmd_salvage.c): every record that reads, and every damaged region between them
   ([from, to) with rec NULL), in file order; a callback returning non-zero stops it (-1). */
typedef int (*salvage_fn)(void *user, const recio_record *rec, size_t from, size_t to);
int salvage_scan(const unsigned char *buf, size_t n, salvage_fn on_record, salvage_fn on_damage, void *user);
int salvage_map(const char *path, const unsigned char **buf, size_t *n);
void salvage_unmap(const unsigned char *buf, size_t n);

#define CLI_COMMAND(fn) int fn(int argc, char **argv)
CLI_COMMAND(cli_cmd_dump);
CLI_COMMAND(cli_cmd_verify);
CLI_COMMAND(cli_cmd_index);
CLI_COMMAND(cli_cmd_split);
CLI_COMMAND(cli_cmd_apply);
CLI_COMMAND(cli_cmd_list);
CLI_COMMAND(cli_cmd_pack);
CLI_COMMAND(cli_cmd_unpack);
CLI_COMMAND(cli_cmd_show);
CLI_COMMAND(cli_cmd_iter);
CLI_COMMAND(cli_cmd_mean);
CLI_COMMAND(cli_cmd_salvage);
#endif
