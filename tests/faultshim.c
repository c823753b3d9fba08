/* Fault injection for a whole program (recio pack, index, ...), loaded with LD_PRELOAD: the Nth file
   operation fails, whichever it is. The library's own fault tests (test_faults.c) drive recio_io
   hooks; the commands also call the C library directly (the list, the temporary .skipped, renames,
   hard links), so this shim sits where the program meets libc.

   RECIO_FAULT_AT=N   the Nth counted call fails (errno EIO; ENOSPC for writes); 0 or unset: none
   RECIO_FAULT_SHORT=1 reads and writes move at most 3 bytes per call (a careless caller loses data)
   RECIO_FAULT_LOG=F  at exit, "CALLS FAILED_NAME" goes to F (how many points there are, which failed)

   Counted: calls on files (descriptors above 2, streams other than stdin/stdout/stderr) and on
   names (open, rename, link, unlink, remove); both the plain and the 64-bit names, as programs built
   with _FILE_OFFSET_BITS=64 call open64, lseek64, fstat64, fopen64. Nothing but the counter is kept, and only calls made
   through the PLT are seen, which is every call recio's code makes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long calls, fail_at = -1;
static int shorts = -1;
static const char *failed_name;

static void shim_init(void) {
    const char *s;
    if (fail_at >= 0) return;
    s = getenv("RECIO_FAULT_AT");
    fail_at = s ? atol(s) : 0;
    s = getenv("RECIO_FAULT_SHORT");
    shorts = s && *s == '1';
}

/* One more counted call: 1 when it is the one to fail (errno set). */
static int shim_fail(const char *name, int err) {
    shim_init();
    if (++calls != fail_at) return 0;
    failed_name = name;
    errno = err;
    return 1;
}
static int user_fd(int fd) { return fd > 2; }
static int user_file(FILE *f) { return f && f != stdin && f != stdout && f != stderr; }
/* A failed write or read through a stream sets its error indicator, as the C library's own failures do
   (glibc's flag; ferror reads it). */
static void stream_error(FILE *f) {
#ifdef _IO_ERR_SEEN
    f->_flags |= _IO_ERR_SEEN;
#else
    (void)f;
#endif
}
static size_t shim_len(size_t n) {
    shim_init();
    return shorts && n > 3 ? 3 : n;
}

#define REAL(ret, name, args) \
    typedef ret(*name##_fn) args; \
    static name##_fn real_##name(void) { \
        static name##_fn f; \
        if (!f) *(void **)&f = dlsym(RTLD_NEXT, #name); \
        return f; \
    }

REAL(int, open, (const char *, int, ...))
REAL(int, open64, (const char *, int, ...))
REAL(off64_t, lseek64, (int, off64_t, int))
REAL(int, fstat64, (int, struct stat64 *))
REAL(FILE *, fopen64, (const char *, const char *))
REAL(int, openat, (int, const char *, int, ...))
REAL(ssize_t, read, (int, void *, size_t))
REAL(ssize_t, write, (int, const void *, size_t))
REAL(ssize_t, writev, (int, const struct iovec *, int))
REAL(off_t, lseek, (int, off_t, int))
REAL(int, fsync, (int))
REAL(int, close, (int))
REAL(int, fstat, (int, struct stat *))
REAL(int, ftruncate, (int, off_t))
REAL(int, rename, (const char *, const char *))
REAL(int, link, (const char *, const char *))
REAL(int, unlink, (const char *))
REAL(int, remove, (const char *))
REAL(FILE *, fopen, (const char *, const char *))
REAL(FILE *, fdopen, (int, const char *))
REAL(size_t, fread, (void *, size_t, size_t, FILE *))
REAL(size_t, fwrite, (const void *, size_t, size_t, FILE *))
REAL(int, fputs, (const char *, FILE *))
REAL(int, fputc, (int, FILE *))
REAL(int, vfprintf, (FILE *, const char *, va_list))
REAL(int, fflush, (FILE *))
REAL(int, fclose, (FILE *))
REAL(DIR *, opendir, (const char *))

int open(const char *path, int flags, ...) {
    va_list ap;
    int mode;
    va_start(ap, flags);
    mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (shim_fail("open", EIO)) return -1;
    return real_open()(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    va_list ap;
    int mode;
    va_start(ap, flags);
    mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (shim_fail("open", EIO)) return -1;
    return real_open64()(path, flags, mode);
}
int openat(int dir, const char *path, int flags, ...) {
    va_list ap;
    int mode;
    va_start(ap, flags);
    mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (shim_fail("openat", EIO)) return -1;
    return real_openat()(dir, path, flags, mode);
}
ssize_t read(int fd, void *buf, size_t n) {
    if (user_fd(fd) && shim_fail("read", EIO)) return -1;
    return real_read()(fd, buf, user_fd(fd) ? shim_len(n) : n);
}
ssize_t write(int fd, const void *buf, size_t n) {
    if (user_fd(fd) && shim_fail("write", ENOSPC)) return -1;
    return real_write()(fd, buf, user_fd(fd) ? shim_len(n) : n);
}
ssize_t writev(int fd, const struct iovec *v, int n) {
    if (user_fd(fd) && shim_fail("writev", ENOSPC)) return -1;
    if (user_fd(fd) && shim_len(4) < 4 && n > 0) return real_write()(fd, v[0].iov_base, shim_len(v[0].iov_len));
    return real_writev()(fd, v, n);
}
off_t lseek(int fd, off_t off, int whence) {
    if (user_fd(fd) && shim_fail("lseek", EIO)) return -1;
    return real_lseek()(fd, off, whence);
}
off64_t lseek64(int fd, off64_t off, int whence) {
    if (user_fd(fd) && shim_fail("lseek", EIO)) return -1;
    return real_lseek64()(fd, off, whence);
}
int fsync(int fd) {
    if (user_fd(fd) && shim_fail("fsync", EIO)) return -1;
    return real_fsync()(fd);
}
int close(int fd) {
    int rc = real_close()(fd); /* the descriptor is gone either way, as POSIX says for EIO */
    if (user_fd(fd) && shim_fail("close", EIO)) return -1;
    return rc;
}
int fstat(int fd, struct stat *st) {
    if (user_fd(fd) && shim_fail("fstat", EIO)) return -1;
    return real_fstat()(fd, st);
}
int fstat64(int fd, struct stat64 *st) {
    if (user_fd(fd) && shim_fail("fstat", EIO)) return -1;
    return real_fstat64()(fd, st);
}
int ftruncate(int fd, off_t n) {
    if (user_fd(fd) && shim_fail("ftruncate", EIO)) return -1;
    return real_ftruncate()(fd, n);
}
int rename(const char *a, const char *b) {
    if (shim_fail("rename", EIO)) return -1;
    return real_rename()(a, b);
}
int link(const char *a, const char *b) {
    if (shim_fail("link", EIO)) return -1;
    return real_link()(a, b);
}
int unlink(const char *a) {
    if (shim_fail("unlink", EIO)) return -1;
    return real_unlink()(a);
}
int remove(const char *a) {
    if (shim_fail("remove", EIO)) return -1;
    return real_remove()(a);
}
FILE *fopen(const char *path, const char *mode) {
    if (shim_fail("fopen", EIO)) return NULL;
    return real_fopen()(path, mode);
}
FILE *fopen64(const char *path, const char *mode) {
    if (shim_fail("fopen", EIO)) return NULL;
    return real_fopen64()(path, mode);
}
FILE *fdopen(int fd, const char *mode) {
    if (user_fd(fd) && shim_fail("fdopen", EIO)) return NULL;
    return real_fdopen()(fd, mode);
}
size_t fread(void *buf, size_t size, size_t n, FILE *f) {
    if (user_file(f) && shim_fail("fread", EIO)) return stream_error(f), 0;
    if (user_file(f) && size == 1) n = shim_len(n);
    return real_fread()(buf, size, n, f);
}
size_t fwrite(const void *buf, size_t size, size_t n, FILE *f) {
    if (user_file(f) && shim_fail("fwrite", ENOSPC)) return stream_error(f), 0;
    return real_fwrite()(buf, size, n, f);
}
int fputs(const char *s, FILE *f) {
    if (user_file(f) && shim_fail("fputs", ENOSPC)) return stream_error(f), EOF;
    return real_fputs()(s, f);
}
int fputc(int c, FILE *f) {
    if (user_file(f) && shim_fail("fputc", ENOSPC)) return stream_error(f), EOF;
    return real_fputc()(c, f);
}
int fprintf(FILE *f, const char *fmt, ...) {
    va_list ap;
    int rc;
    if (user_file(f) && shim_fail("fprintf", ENOSPC)) return stream_error(f), -1;
    va_start(ap, fmt);
    rc = real_vfprintf()(f, fmt, ap);
    va_end(ap);
    return rc;
}
int fflush(FILE *f) {
    if (user_file(f) && shim_fail("fflush", ENOSPC)) return stream_error(f), EOF;
    return real_fflush()(f);
}
int fclose(FILE *f) {
    int user = user_file(f), rc = real_fclose()(f); /* closed either way, as C says */
    if (user && shim_fail("fclose", EIO)) return EOF;
    return rc;
}
DIR *opendir(const char *path) {
    if (shim_fail("opendir", EIO)) return NULL;
    return real_opendir()(path);
}

__attribute__((destructor)) static void shim_report(void) {
    const char *log = getenv("RECIO_FAULT_LOG");
    char line[96];
    int fd, n;
    if (!log) return;
    n = snprintf(line, sizeof line, "%ld %s\n", calls, failed_name ? failed_name : "-");
    fd = real_open()(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (real_write()(fd, line, (size_t)n) < 0) n = 0;
    real_close()(fd);
}
