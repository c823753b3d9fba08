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
/* recio_iter_open; on failure its message (and the valid ops for an unknown one) on stderr and
   the exit status: usage for a bad spec or option, else an error. 0 when open. */
int cli_open_iter(recio_iter **it, const recio_iter_desc *d);
/* Finish and close a writer: its message on stderr (the error, or a note after a good commit, such as
   a kept copy that could not be removed); 0 when the output is complete and in place, else -1. */
int cli_close_writer(recio_writer *w);
/* Parse an unsigned integer option value (decimal digits only); returns 0 on success. */
int cli_parse_u64(const char *s, unsigned long long *out);
/* A whole number from lo to hi: decimal digits, a '-' allowed first (no space, no '+'); 0 or -1. */
int cli_parse_int(const char *s, long long lo, long long hi, long long *out);
/* A finite decimal number from lo to hi: digits with an optional '.' fraction and exponent, a '-'
   allowed first (no space, '+', hex, nan or inf); 0 or -1. */
int cli_parse_real(const char *s, double lo, double hi, double *out);
/* The value v of option name (the argument after it, NULL when there is none) through
   cli_parse_int / cli_parse_real: 0, or the usage exit status after "CMD: bad value 'V' for NAME: a
   whole number (a number) from LO to HI" or "NAME needs a value". */
int cli_int_opt(const char *cmd, const char *name, const char *v, long long lo, long long hi, long long *out);
int cli_real_opt(const char *cmd, const char *name, const char *v, double lo, double hi, double *out);

/* ---- outputs (cli_out.c): the one policy of every command that writes a file ----
   An output is never one of the command's inputs (--force or not); an existing file is replaced
   only when it holds the kind the command writes there, or with --force; every output appears
   whole or not at all (the bytes are kept until the commit, then renamed into place), and the
   outputs of one job are committed all or none. */
typedef enum cli_kind {
    CLI_KIND_REC,      /* RecordIO: the magic first */
    CLI_KIND_IDX,      /* an MXNet index: 'key<TAB>offset' lines */
    CLI_KIND_LST,      /* an im2rec list: 'index<TAB>label...<TAB>path' lines */
    CLI_KIND_SKIPPED,  /* pack's PREFIX.skipped: 'index<TAB>path<TAB>why' lines */
    CLI_KIND_UNPACKED, /* unpack's list: every line names its own ID's files (ID.jpg, ID.mask.png) */
    CLI_KIND_PNG,
    CLI_KIND_JPEG,
    CLI_KIND_NPY,
    CLI_KIND_BOXES,    /* 'class xmin ymin xmax ymax' lines */
    CLI_KIND_RAW,      /* a raw tensor: a file of no type recio knows, and not text */
    CLI_KIND_NONE      /* no existing file is replaced without --force */
} cli_kind;

typedef struct cli_out {
    const char *path;          /* as the user named it (in messages) */
    char *target;              /* the file a symbolic link at path names, which is replaced (the link
                                  stays: /dev/stdout redirected to a file is never itself replaced) */
    const char *const *inputs; /* what the output must not be */
    size_t ninputs;
    int exists;                /* a file was there when claimed */
    int replace;               /* an existing file may go (the claim said so) */
    int absent;                /* the new version is no file (cli_out_hold/commit_all remove it) */
    int no_sync;               /* no fsync before the rename (unpack's many images) */
    unsigned char *buf;        /* the bytes, until the commit */
    size_t n, cap;
    int nomem;
    recio_outfile *held;       /* committed, the previous file kept until settled */
    char msg[RECIO_ERRMSG_SIZE];
} cli_out;

/* Check that the command may write path (not an input, not a folder; an existing file of its kind,
   or force); 0 (then cli_out_free when done), or the exit status after saying why. Nothing is
   written yet. */
int cli_out_claim(cli_out *o, const char *path, cli_kind kind, const char *const *inputs, size_t ninputs, int force);
/* A job's outputs (NULLs skipped) are distinct files; 0, or the usage status after saying which two. */
int cli_out_distinct(const char *const *paths, size_t n);
/* Where the output really goes: the file a symbolic link names, else the path (for a writer). */
const char *cli_out_target(const cli_out *o);
/* 1 when the file claimed existed and path is it (an input found during the job: pack's images). */
int cli_out_is(const cli_out *o, const char *path);
/* Add bytes (kept in memory until the commit); -1 when out of memory (the commit says so). */
int cli_out_write(cli_out *o, const void *p, size_t n);
int cli_out_printf(cli_out *o, const char *fmt, ...);
/* Put the bytes written (or data) at the path; 0, or -1 with the error said and the path as it was. */
int cli_out_commit(cli_out *o);
int cli_out_commit_bytes(cli_out *o, const void *data, size_t n);
/* Commit several outputs, all or none: when one fails, those before it get their old files back. */
int cli_out_commit_all(cli_out *const *outs, size_t n);
/* A commit that can be taken back (with a commit elsewhere, e.g. the writer's .rec and .idx):
   cli_out_settle(o, 1) puts the previous file back, cli_out_settle(o, 0) keeps the new one (on S3,
   which keeps no copy aside, the output is only made then: -1 when that fails, said). */
int cli_out_hold(cli_out *o);
int cli_out_settle(cli_out *o, int undo);
/* 1 when path is a local file (no scheme, or file://), 0 for s3://, http(s)://... */
int cli_is_local(const char *path);
/* Remove path through its filesystem; 0, or -1 after saying why (nothing there is no error). */
int cli_remove(const char *path);
/* Free the bytes and the names (a held commit not settled is taken back); after every claim. */
void cli_out_free(cli_out *o);
/* The salvage scan (cmd_salvage.c): every record that reads, and every damaged region between them
   ([from, to) with rec NULL), in file order; a callback returning non-zero stops it (-1). */
typedef int (*salvage_fn)(void *user, const recio_record *rec, size_t from, size_t to);
int salvage_scan(const unsigned char *buf, size_t n, salvage_fn on_record, salvage_fn on_damage, void *user);
/* A whole file's bytes through its filesystem: mapped where it maps (local files), else read into
   memory (s3://, http(s)://). 0, or -1 after saying why. */
typedef struct cli_bytes {
    const unsigned char *p;
    size_t n;
    const recio_fs *fs;  /* the fs that mapped it, or NULL */
    recio_fs_map map;
    unsigned char *own;  /* read into memory: freed by salvage_unmap */
} cli_bytes;
int salvage_map(const char *path, cli_bytes *b);
void salvage_unmap(cli_bytes *b);

/* A boxes file (boxes_file.c): 'class xmin ymin xmax ymax' a line, blank lines skipped, into 5 floats
   a box (*obj malloc'd, the caller frees it, also after a failure); 0, or -1 with the error said. */
int cli_read_boxes(const char *path, float **obj, int *count);

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
