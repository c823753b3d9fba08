/* Where the recio command writes, in one place for every command (declared in cli.h):
   - an output is never one of the command's inputs (recio_same_file: the same file through hard and
     symbolic links and any spelling), --force or not;
   - an existing file is replaced only when it holds what the command writes there (its own kind: a
     RecordIO file for a .rec, an index for an .idx, a PNG for a sheet, ...), or with --force; any
     other file is refused with a message that names it and --force;
   - every output appears whole or not at all: the bytes are kept in memory until the commit, then
     written through recio_outfile, on the filesystem of the output's path (a local file: under a
     temporary name beside the target, renamed; s3://: an upload completed); outputs that go
     together are committed all or none (on S3, as far as it can: see docs/remote.md).
   docs/pack.md ("Outputs") says the same for users. */
#define _XOPEN_SOURCE 700 /* realpath (XSI in glibc), lstat */
#include "cli.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- what an existing file holds ----------------------------------------------------------------- */

#define HEAD 65536 /* bytes read to tell a file's kind (an unpack list is read whole) */

static const char *const kind_words[] = {
    "a RecordIO file", "an MXNet index (.idx)", "an im2rec list (.lst)", "a list of skipped images (.skipped)",
    "a list written by 'recio unpack' (ID<TAB>label...<TAB>ID.jpg lines)", "a PNG image", "a JPEG image",
    "a NumPy .npy file", "a boxes file ('class xmin ymin xmax ymax' lines)", "a raw tensor (no known file type, not text)",
    "a file this command made"};

static int starts(const unsigned char *b, size_t n, const char *sig, size_t k) { return n >= k && memcmp(b, sig, k) == 0; }

/* A file type recio knows by its first bytes (records, images, arrays): never a raw tensor. */
static int known_binary(const unsigned char *b, size_t n) {
    return starts(b, n, "\x0a\x23\xd7\xce", 4) || starts(b, n, "\x89PNG", 4) || starts(b, n, "\xff\xd8\xff", 3) ||
           starts(b, n, "\x93NUMPY", 6) || starts(b, n, "BM", 2) || starts(b, n, "GIF8", 4) || starts(b, n, "II*", 4) ||
           starts(b, n, "MM\0*", 4) || (starts(b, n, "RIFF", 4) && n >= 12 && memcmp(b + 8, "WEBP", 4) == 0);
}

/* Printable text with line breaks (a list, an index, notes): never a raw tensor. */
static int text(const unsigned char *b, size_t n) {
    size_t i;
    int lines = 0;
    for (i = 0; i < n; i++) {
        if (b[i] == '\n') lines = 1;
        else if (b[i] != '\t' && b[i] != '\r' && (b[i] < 32 || b[i] > 126)) return 0;
    }
    return lines;
}

/* The first line of b (NUL-ended copy in line, cap bytes). */
static void first_line(const unsigned char *b, size_t n, char *line, size_t cap) {
    size_t k = 0;
    while (k < n && k + 1 < cap && b[k] != '\n') line[k] = (char)b[k], k++;
    line[k] = 0;
}

static const char *digits(const char *p) {
    const char *q = p;
    while (*q >= '0' && *q <= '9') q++;
    return q > p ? q : NULL;
}

/* "key<TAB>offset": what every .idx line holds. */
static int idx_line(const char *s) {
    if (!(s = digits(s)) || (*s != '\t' && *s != ' ')) return 0;
    while (*s == '\t' || *s == ' ') s++;
    return (s = digits(s)) != NULL && (!*s || !strcmp(s, "\r"));
}

/* "index<TAB>label...<TAB>path" (spaces around fields allowed, as the .lst reader takes them). */
static int lst_line(const char *s, int min_tabs) {
    int tabs = 0;
    while (*s == ' ') s++;
    if (!digits(s)) return 0;
    for (; *s; s++) tabs += *s == '\t';
    return tabs >= min_tabs;
}

static int boxes_line(const char *s) {
    char *end;
    int k;
    for (k = 0; k < 5; k++, s = end) {
        strtod(s, &end);
        if (end == s) return 0;
    }
    return 1;
}

/* "ID.jpg" / ".png" / ".bin" (or, mask, "ID.mask.png"): the names unpack gives a record's files. */
static int unpack_name(const char *f, size_t n, const char *id, size_t idn, int mask) {
    static const char *const ext[] = {".jpg", ".png", ".bin"};
    size_t i, k = n - idn;
    if (n <= idn || memcmp(f, id, idn) != 0) return 0;
    if (mask) return k == 9 && memcmp(f + idn, ".mask.png", 9) == 0;
    for (i = 0; i < 3; i++)
        if (k == 4 && memcmp(f + idn, ext[i], 4) == 0) return 1;
    return 0;
}

/* Every line is unpack's: 'ID<TAB>labels<TAB>ID.ext' and maybe '<TAB>ID.mask.png'. */
static int unpacked_list(const unsigned char *b, size_t n) {
    size_t at = 0;
    while (at < n) {
        const char *s = (const char *)b + at, *e = (const char *)memchr(s, '\n', n - at), *id_end, *last, *prev;
        if (!e) e = (const char *)b + n;
        at = (size_t)(e - (const char *)b) + 1;
        if (e > s && e[-1] == '\r') e--;
        if (e == s) continue;
        if (!(id_end = digits(s)) || id_end >= e || *id_end != '\t') return 0;
        for (last = e; last > s && last[-1] != '\t'; last--) {}
        for (prev = last - 1; prev > s && prev[-1] != '\t'; prev--) {}
        if (last <= id_end + 1) return 0;
        if (unpack_name(last, (size_t)(e - last), s, (size_t)(id_end - s), 0)) continue;
        if (prev <= id_end || !unpack_name(last, (size_t)(e - last), s, (size_t)(id_end - s), 1) ||
            !unpack_name(prev, (size_t)(last - 1 - prev), s, (size_t)(id_end - s), 0))
            return 0;
    }
    return 1;
}

/* 1 when b (the file's first n bytes, or all of it) is of kind k; an empty file is of every kind. */
static int of_kind(const unsigned char *b, size_t n, cli_kind k) {
    char line[512];
    if (n == 0) return 1;
    first_line(b, n, line, sizeof line);
    switch (k) {
    case CLI_KIND_REC: return starts(b, n, "\x0a\x23\xd7\xce", 4);
    case CLI_KIND_IDX: return idx_line(line);
    case CLI_KIND_LST: return lst_line(line, 2);
    case CLI_KIND_SKIPPED: return lst_line(line, 1);
    case CLI_KIND_UNPACKED: return unpacked_list(b, n);
    case CLI_KIND_PNG: return starts(b, n, "\x89PNG\r\n\x1a\n", 8);
    case CLI_KIND_JPEG: return starts(b, n, "\xff\xd8\xff", 3);
    case CLI_KIND_NPY: return starts(b, n, "\x93NUMPY", 6);
    case CLI_KIND_BOXES: return boxes_line(line);
    case CLI_KIND_RAW: return !known_binary(b, n) && !text(b, n < 4096 ? n : 4096);
    case CLI_KIND_NONE: return 0;
    }
    return 0;
}

/* Whether the file at path (a regular file, on any filesystem) is of kind k; -1 when it cannot be
   read (*why set). */
static int file_of_kind(const recio_fs *fs, const char *path, cli_kind k, char *why) {
    unsigned char *b = NULL;
    size_t n = 0, cap = k == CLI_KIND_UNPACKED ? (size_t)-1 : HEAD, have = 0;
    recio_io io;
    int64_t got = 1;
    int is = -1;
    if (k == CLI_KIND_NONE) return 0;
    why[0] = 0;
    if (fs->open_read(fs->user, path, &io, why) != RECIO_OK) return -1;
    while (n < cap && got > 0) { /* a read may stop short of the end: go on to EOF */
        if (n == have) {
            unsigned char *nb = (unsigned char *)realloc(b, have = have ? 2 * have : 4096);
            if (!nb) break;
            b = nb;
        }
        if ((got = io.read(io.user, b + n, (have < cap ? have : cap) - n)) > 0) n += (size_t)got;
    }
    if (got == 0 || n >= cap) is = of_kind(b, n < cap ? n : cap, k);
    else if (got > 0) snprintf(why, RECIO_ERRMSG_SIZE, "out of memory");
    else snprintf(why, RECIO_ERRMSG_SIZE, "%s", io.error && io.error(io.user) ? io.error(io.user) : strerror(errno ? errno : EIO));
    if (io.close) io.close(io.user);
    free(b);
    return is;
}

/* ---- the policy ---------------------------------------------------------------------------------- */

/* A symbolic link to a regular file: the output replaces the file, not the link. Replacing the link
   would turn it into a plain file, and with /dev/stdout redirected to a file (a link to
   /proc/self/fd/1) put a file in /dev. -1 out of memory. */
static int follow(cli_out *o) {
    struct stat st;
    if (lstat(o->path, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
    errno = 0;
    if (!(o->target = realpath(o->path, NULL))) return errno == ENOMEM ? -1 : 0;
    return 0;
}

const char *cli_out_target(const cli_out *o) { return o->target ? o->target : o->path; }

/* What is at path, through its filesystem; 0, or the exit status after saying why. */
static int what_is(const char *path, const recio_fs **fs, recio_fs_stat *st) {
    char why[RECIO_ERRMSG_SIZE] = "";
    recio_fs_out probe;
    memset(st, 0, sizeof *st);
    if (!(*fs = recio_fs_find(NULL, path))) return cli_err("%s: no filesystem serves this path", path), CLI_EXIT_USAGE;
    if (!(*fs)->create) return cli_err("%s: cannot write here: the filesystem is read-only", path), CLI_EXIT_USAGE;
    if ((*fs)->info && (*fs)->info((*fs)->user, path, st, why) != RECIO_OK)
        return cli_err("%s: cannot tell what is there: %s", path, why[0] ? why : "failed"), CLI_EXIT_ERR;
    if (!(*fs)->scheme || !(*fs)->scheme[0]) return 0;
    if ((*fs)->create((*fs)->user, path, RECIO_FS_ATOMIC, &probe, why) != RECIO_OK) /* before the work: http(s) */
        return cli_err("%s: cannot write here: %s", path, why[0] ? why : "refused"), CLI_EXIT_USAGE;
    if (probe.io.close) probe.io.close(probe.io.user); /* a remote create sends nothing before the first part */
    if (probe.pending) (*fs)->discard((*fs)->user, probe.pending);
    return 0;
}

static int claim(cli_out *o, const char *path, cli_kind kind, const char *const *inputs, size_t ninputs, int force) {
    char why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs;
    recio_fs_stat st;
    size_t i;
    int is, rc;
    memset(o, 0, sizeof *o);
    o->path = path, o->inputs = inputs, o->ninputs = ninputs;
    for (i = 0; i < ninputs; i++)
        if (inputs[i] && recio_same_file(path, inputs[i]))
            return cli_err("%s: is the input %s (the same file): never written over; name another output", path, inputs[i]),
                   CLI_EXIT_USAGE;
    if ((rc = what_is(path, &fs, &st)) != 0) return rc;
    if (st.kind == RECIO_FS_NONE) return 0; /* nothing there (yet): the commit takes the name only if it is still free */
    o->exists = 1;
    if (st.kind == RECIO_FS_FILE && (!fs->scheme || !fs->scheme[0]) && follow(o) != 0)
        return cli_err("%s: out of memory", path), CLI_EXIT_ERR;
    if (st.kind == RECIO_FS_DIR) return cli_err("%s: is a folder, not a file to write", path), CLI_EXIT_USAGE;
    if (st.kind != RECIO_FS_FILE) return 0; /* a FIFO or a device: written in place, nothing replaced */
    if (force) return o->replace = 1, 0;
    if ((is = file_of_kind(fs, path, kind, why)) == 1) return o->replace = 1, 0;
    if (is < 0)
        return cli_err("%s: exists, and cannot be read to tell what it holds (%s): not replaced (pass --force to replace it)", path,
                       why),
               CLI_EXIT_ERR;
    if (kind == CLI_KIND_NONE) return cli_err("%s: exists: not replaced (pass --force to replace it)", path), CLI_EXIT_USAGE;
    cli_err("%s: exists and is not %s: not replaced (pass --force to replace it)", path, kind_words[kind]);
    return CLI_EXIT_USAGE;
}

int cli_out_claim(cli_out *o, const char *path, cli_kind kind, const char *const *inputs, size_t ninputs, int force) {
    int rc = claim(o, path, kind, inputs, ninputs, force);
    if (rc) free(o->target), o->target = NULL; /* refused: nothing for the caller to free */
    return rc;
}

int cli_out_distinct(const char *const *paths, size_t n) {
    size_t i, j;
    for (i = 0; i < n; i++)
        for (j = i + 1; paths[i] && j < n; j++)
            if (paths[j] && recio_same_file(paths[i], paths[j]))
                return cli_err("%s and %s are the same file: each output needs its own", paths[i], paths[j]), CLI_EXIT_USAGE;
    return 0;
}

int cli_out_is(const cli_out *o, const char *path) { return o->exists && recio_same_file(o->path, path); }

int cli_out_write(cli_out *o, const void *p, size_t n) {
    if (o->nomem) return -1;
    if (o->n + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        unsigned char *nb;
        while (cap < o->n + n) cap *= 2;
        if (!(nb = (unsigned char *)realloc(o->buf, cap))) return o->nomem = 1, -1;
        o->buf = nb, o->cap = cap;
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
    return 0;
}

int cli_out_printf(cli_out *o, const char *fmt, ...) {
    char small[512], *big = NULL;
    va_list ap;
    int len, rc;
    va_start(ap, fmt);
    len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0) return o->nomem = 1, -1;
    if ((size_t)len >= sizeof small) {
        if (!(big = (char *)malloc((size_t)len + 1))) return o->nomem = 1, -1;
        va_start(ap, fmt);
        vsnprintf(big, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    rc = cli_out_write(o, big ? big : small, (size_t)len);
    free(big);
    return rc;
}

/* Write data to o's target through recio_outfile and commit: kept for an undo (o->held) when hold,
   else finished. absent: the target's new version is no file. 0, or -1 with the error said and the
   target as it was. */
static int put(cli_out *o, const void *data, size_t n, int hold, int absent) {
    char *msg = o->msg; /* the handle's words: it keeps the buffer, so the buffer lives in o */
    recio_outfile_desc d;
    recio_outfile *f;
    recio_io io;
    if (o->nomem) return cli_err("%s: out of memory", o->path), -1;
    memset(&d, 0, sizeof d);
    d.replace = o->replace, d.undo = hold, d.no_sync = o->no_sync;
    d.inputs = o->inputs, d.ninputs = o->ninputs, d.errmsg = msg;
    if (recio_outfile_open(&f, absent ? NULL : &io, cli_out_target(o), &d) != RECIO_OK) return cli_err("%s", msg), -1;
    if (!absent && n && io.write(io.user, data, n) != 0) {
        cli_err("%s: write failed: %s", cli_out_target(o), io.error && io.error(io.user) ? io.error(io.user) : strerror(errno));
        recio_outfile_close(f, 0);
        return -1;
    }
    if (recio_outfile_commit(f) != RECIO_OK) {
        cli_err("%s", msg);
        recio_outfile_close(f, 0);
        return -1;
    }
    if (msg[0]) cli_err("%s", msg); /* a note: in place, but a side name is left */
    if (hold) return o->held = f, 0;
    if (recio_outfile_close(f, 0) != RECIO_OK || msg[0]) cli_err("%s", msg);
    return 0;
}

/* A held commit finished: undo puts the previous file back, else the kept copy goes (or, on a
   filesystem that keeps no copy, S3, the output appears only now). -1 when that failed (said). */
static int settle(cli_out *o, int undo) {
    int bad;
    if (!o->held) return 0;
    if ((bad = recio_outfile_close(o->held, undo) != RECIO_OK) || o->msg[0]) cli_err("%s", o->msg);
    o->held = NULL;
    return bad ? -1 : 0;
}

int cli_out_commit(cli_out *o) { return put(o, o->buf, o->n, 0, 0); }

int cli_out_commit_bytes(cli_out *o, const void *data, size_t n) { return put(o, data, n, 0, 0); }

int cli_out_commit_all(cli_out *const *outs, size_t n) {
    size_t i, k;
    int bad = 0;
    for (i = 0; i < n; i++)
        if (put(outs[i], outs[i]->buf, outs[i]->n, 1, outs[i]->absent) != 0) break;
    for (k = 0; k < i; k++) bad |= settle(outs[k], i < n || bad) != 0; /* in order: a deferred one that fails stops the rest */
    return i < n || bad ? -1 : 0;
}

int cli_out_hold(cli_out *o) { return put(o, o->buf, o->n, 1, o->absent); }

int cli_out_settle(cli_out *o, int undo) { return settle(o, undo); }

void cli_out_free(cli_out *o) {
    (void)settle(o, 1);
    free(o->buf);
    free(o->target);
    o->buf = NULL, o->target = NULL, o->n = o->cap = 0;
}

int cli_is_local(const char *path) {
    const recio_fs *fs = recio_fs_find(NULL, path);
    return fs && (!fs->scheme || !fs->scheme[0]);
}

int cli_remove(const char *path) {
    char why[RECIO_ERRMSG_SIZE] = "";
    const recio_fs *fs = recio_fs_find(NULL, path);
    if (fs && fs->remove && (fs->remove(fs->user, path, why) == RECIO_OK || (cli_is_local(path) && errno == ENOENT))) return 0;
    return cli_err("%s: cannot remove what this run made: %s", path, why[0] ? why : "the filesystem cannot remove"), -1;
}
