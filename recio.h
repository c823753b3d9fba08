/* recio.h - v1.0.0 - RecordIO image datasets to model-ready tensors - MIT or public domain (see end)

   recio reads and writes dmlc-core / MXNet RecordIO files byte for byte, splits a dataset across
   workers exactly as dmlc-core's InputSplit does, and turns packed images into tensors with eager,
   one-image-per-call ops. It is one header with no dependency but libc (and stb_image for the image
   section, pthreads or Win32 threads for the optional prefetcher). It builds as C99 or C++ with any
   flags and include order, on Linux, macOS, Windows and bare-metal targets.

   Do this:
      #define RECIO_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   TABLE OF CONTENTS (each is a section with a banner, declarations first, then the implementation)
      1. CORE         errors (one convention: RECIO_ERRMSG_SIZE, desc.errmsg), allocator, I/O hooks,
                      the "FILE: offset N: what" formatter, threads (pthreads / Win32), the
                      filesystem table (recio_fs: a path's scheme picks open, info, list,
                      create/commit, remove, map; the local files' POSIX / Win32 / ISO C columns;
                      the remote s3:// and http(s):// column over libcurl; your own schemes), output
                      files that appear whole or not at all (recio_outfile: implemented after the
                      writer, whose create and commit it is), little-endian helpers, checksums
                      (recio_checksum runs on the kernel table of IMAGE OPS), seedable RNG
      2. RECORDIO     reader (streaming, memory, mapped) and writer (.idx, atomic), on any filesystem
      3. INDEX        .idx and .lst files, MXNet image record header (IRHeader), detection labels,
                      segmentation records (the mask tail)
      4. SPLIT        rank/nsplit partition of many files, as dmlc-core's InputSplit; wildcards and
                      directories expanded over the filesystem's list
      5. IMAGE OPS    decode, resize, crop, flip, colour, normalize: one image per call; the
                      kernel table (scalar / SSE2 / AVX2 / NEON columns of the hot loops)
      6. TRANSFORM    the transform spec: the op table (one descriptor per op), its parser,
                      executor, JPEG window planner and shape/scratch walk; random policies;
                      boxes and masks moved by each geometric op's steps; where a chain may be
                      cut for the iterator's cache (the ops flagged random)
      7. PREFETCHER   ring buffer of reusable slots (only with RECIO_THREADS)
      8. ITERATOR     batches of augmented images (ImageRecordIter in C), the decoded-image cache,
                      boxes and masks moved with the pixels, MixUp/CutMix with soft labels

   USAGE
      recio_reader *r; recio_record rec; recio_err e;
      if ((e = recio_reader_open(&r, "train.rec")) != RECIO_OK) { puts(recio_strerror(e)); return 1; }
      while ((e = recio_reader_next(r, &rec)) == RECIO_OK)
          use(rec.data, rec.size);            // valid until the next call
      if (e != RECIO_END) fprintf(stderr, "%s\n", recio_reader_errmsg(r)); // "train.rec: offset 96: ..."
      recio_reader_close(r);

   RECORD FORMAT (dmlc-core RecordIO; every integer little-endian on every host)
      A record of n bytes (n < 2^29) is stored as one or more parts, each
         u32 magic = 0xced7230a    bytes 0a 23 d7 ce
         u32 lrec  = cflag << 29 | len
         len bytes of data
      and the record ends with zero bytes up to a multiple of 4. cflag 0 = the whole record;
      a payload that holds the magic word at a 4-aligned offset is cut there into parts
      cflag 1 (first), 2 (middle), 3 (last); the magic itself is dropped and put back on read.
      So an aligned magic word in a valid file is always a header, which is how a reader can
      start anywhere: a "record head" is an aligned magic followed by cflag 0 or 1.
      The reader is strict: a bad magic, a truncated header or payload, a broken part sequence,
      parts that join past 2^29 - 1 bytes, or trailing garbage is RECIO_ERR_CORRUPT naming the
      header offset of the first bad record, after every sound record before it. (dmlc-core
      merges or drops records silently in some of these.)

   FILESYSTEMS
      Every path goes through one table, recio_fs, picked by the path's scheme: plain paths and
      file:// are the local files (POSIX, Win32 or ISO C stdio; none under RECIO_NO_STDIO); a scheme
      of your own ("mem://", a board's flash) is a few hooks in a desc's `fs` (docs/fs.md), and gets
      everything the local files get: mapped reads, atomic writes, wildcards, directories, .idx files.

   SPLITTING
      recio_split_open(&s, "a.rec;b.rec", rank, nsplit) gives worker `rank` the same records that
      dmlc-core's InputSplit gives it (byte ranges moved to record heads; parts may cross files). An
      indexed mode splits by record count using the .idx files, with a seeded shuffle per epoch,
      and can equalise the count per rank so collective training steps never hang.

   IMAGE OPS
      recio_image_decode (stb_image, or libjpeg-turbo with RECIO_TURBOJPEG), then one call per op
      (resize with OpenCV INTER_LINEAR semantics, crops as views, flip, colour, normalize, CHW...),
      or a transform spec: "resize_short(256) center_crop(224) normalize(imagenet) chw", applied by
      recio_transform_apply(t, in, out, seed). Randomness comes only from the seed, so a record's
      augmentation is the same on every host and for every thread count. Chains of crop, resize,
      flip and normalize run fused in one pass. Caller buffers and a scratch area make the
      per-image path allocation-free. recio_transform_apply_desc decodes and applies in one
      call; with RECIO_TURBOJPEG it decodes only the part of a JPEG the chain's crops keep. It
      also moves detection boxes and a segmentation mask with the pixels.
      Resizes are OpenCV's INTER_LINEAR unless `interp(...)` picks nearest, bicubic, Lanczos-4 or
      area (OpenCV's) or PIL's antialiased filters; the training recipes are spec ops too:
      randaugment, trivialaugment, autoaugment(imagenet|cifar10|svhn), random_erasing, cutout,
      gaussian_blur, random ranges of posterize/solarize/sharpness/shear/rotate, pad per side, bgr.

   ERRORS
      Every fallible call returns recio_err: RECIO_OK (0), RECIO_END (1, no more records) or a
      negative error. recio_strerror() gives words; each handle keeps the detail, as
      "FILE: offset N: what", for recio_reader_errmsg() and friends.

   MEMORY
      Every allocation goes through RECIO_MALLOC / RECIO_REALLOC / RECIO_FREE (define all or none),
      or through the recio_allocator set in a *_desc, which wins when set; stb_image's allocations
      too, through the allocator of the call that decodes (libjpeg-turbo's use malloc). Options structs
      (recio_*_desc) mean "defaults" when zeroed.

   CONFIGURATION (define before the implementation)
      RECIO_STATIC        make every function static (private copy in one translation unit)
      RECIO_NO_STDIO      no local filesystem: memory readers, your own recio_io hooks and your own
                          recio_fs; nothing of the OS is referenced then (no open, mmap, stat,
                          opendir...): bare metal
      RECIO_MALLOC(sz,u) RECIO_REALLOC(p,sz,u) RECIO_FREE(p,u)   allocator (u = user pointer)
      RECIO_ASSERT(x)     internal checks (default assert.h)
      RECIO_THREADS       build the prefetcher, the threaded iterator and the background writer
                          (pthreads; Win32 threads on Windows); without it the iterator runs on the
                          calling thread. A target with neither stops with an #error saying so.
      RECIO_HAVE_PTHREADS use <pthread.h> where recio would not look for it (an RTOS, winpthreads)
      RECIO_TURBOJPEG     decode JPEG through libjpeg-turbo (link -ljpeg), with DCT scaling and windows
                          (the Makefile's default build; `make JPEG=stb` for stb_image only)
      RECIO_CURL          s3://BUCKET/KEY and http(s):// paths through libcurl >= 7.75 (link -lcurl; the
                          Makefile's default build, `make CURL=no` without): AWS_ACCESS_KEY_ID,
                          AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION,
                          AWS_ENDPOINT_URL (path-style), else ~/.aws/credentials (AWS_PROFILE, default
                          "default"), else anonymous; docs/remote.md. Without it those paths say so
      RECIO_NO_IMAGE      records only: the image section goes (decoding, ops, transforms, stb, the
                          recio_image_* helpers); the image types, recio_dtype_size and recio_checksum
                          stay for the iterator's batches (of the kernels, only the checksum's); the
                          iterator then refuses a spec, mean_img and mixing at open
      RECIO_NO_STB_IMPLEMENTATION   use the stb_image your program already builds, not recio's
                          private (static) copy; stb_image.h must be on the include path either way
      RECIO_MAX_PIXELS    refuse images larger than this from their header, and ops whose output
                          would be larger (default 2^28)
      RECIO_STB_TRUST_JPEG_SCANS  skip the walk of each baseline JPEG scan that proves it complete
                          before stb decodes it (about 30% of stb's decode time): stb then fills a
                          scan cut short and followed by a marker with zero bits, made-up pixels
      RECIO_MAX_BATCH_BYTES  refuse an iterator whose batch is larger: the tensor and every per-item
                          array with it (labels, soft labels, masks, ids, keys, counts) (default
                          2^31: a batch of 2048 224x224x3 f32 items fits)
      RECIO_NO_SIMD, RECIO_NO_AVX2  scalar kernel column only / no AVX2 column (results are identical
                          either way; the column is picked once per pass from what the CPU runs; tcc:
                          always scalar)
      (recio's private stb_image is built for JPEG, PNG and BMP only, the formats recio decodes;
                          the rest are refused as "unsupported image format": docs/image.md)
      On 32-bit hosts compile the implementation with -D_FILE_OFFSET_BITS=64 for files over 2 GiB.

   THREADING
      No global state (on a target without an OS, and so without threads, stb_image's failure
      reason and the allocator of the decode under way are plain statics). Handles are not shared
      between threads without a lock; different handles may be used from different threads freely.
      A const recio_transform may be applied from many threads at once.
*/
#ifndef RECIO_H_INCLUDED
#define RECIO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifndef RECIODEF
#ifdef RECIO_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define RECIODEF static __attribute__((unused)) /* a private copy need not use every function */
#else
#define RECIODEF static
#endif
#else
#define RECIODEF extern
#endif
#endif

/* The API declared in this header is stable from 1.0.0 (semantic versioning: a minor version only
   adds, a major one may remove or change; CHANGELOG.md maps each removed name to its replacement).
   RECIO_VERSION is MAJOR * 10000 + MINOR * 100 + PATCH, for #if RECIO_VERSION >= 10100. */
#define RECIO_VERSION_MAJOR 1
#define RECIO_VERSION_MINOR 0
#define RECIO_VERSION_PATCH 0
#define RECIO_VERSION (RECIO_VERSION_MAJOR * 10000 + RECIO_VERSION_MINOR * 100 + RECIO_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================================
   1. CORE
   ================================================================================================== */

typedef enum recio_err {
    RECIO_OK = 0,
    RECIO_END = 1,              /* no more records: not an error */
    RECIO_ERR_ARG = -1,         /* invalid argument or usage */
    RECIO_ERR_NOMEM = -2,       /* allocation failed or size overflow */
    RECIO_ERR_IO = -3,          /* open, read, write, seek, sync or close failed */
    RECIO_ERR_CORRUPT = -4,     /* malformed RecordIO data */
    RECIO_ERR_TOO_BIG = -5,     /* a record of 2^29 bytes or more */
    RECIO_ERR_FORMAT = -6,      /* malformed .idx / .lst text or image record header */
    RECIO_ERR_DECODE = -7,      /* an image that cannot be decoded */
    RECIO_ERR_SPEC = -8,        /* transform spec syntax or argument */
    RECIO_ERR_UNSUPPORTED = -9, /* not available in this build or on this platform */
    RECIO_ERR_LIMIT = -10,      /* over a limit: RECIO_MAX_PIXELS, RECIO_MAX_BATCH_BYTES, a count */
    RECIO_ERR_SMALL = -11       /* a caller's buffer (scratch, output) is too small */
} recio_err;

/* Words for an error code; never NULL. */
RECIODEF const char *recio_strerror(recio_err e);

/* ONE ERROR CONVENTION. Every call returns a recio_err; the words come as "FILE: offset N: what"
   (text files: "FILE: line N: what"), always in a buffer of RECIO_ERRMSG_SIZE bytes:
   - a handle says why its last call failed: recio_reader_errmsg, recio_writer_errmsg,
     recio_split_errmsg, recio_iter_errmsg;
   - an open that fails has no handle to ask, so every open's desc has `errmsg`: point it at
     RECIO_ERRMSG_SIZE bytes and a failed open writes why there ("" after a good one). The simple
     opens (recio_reader_open, ...) are the desc opens with no desc, for callers who only need the
     code; the calls that make no handle (recio_index_load and _save, recio_lst_load) have a desc
     with `errmsg` too. */
#define RECIO_ERRMSG_SIZE 512

/* Runtime allocator. When alloc is NULL the RECIO_MALLOC/RECIO_FREE macros are used. */
typedef struct recio_allocator {
    void *(*alloc)(size_t size, void *user);
    void (*free)(void *ptr, void *user);
    void *user;
} recio_allocator;

/* I/O hooks: all bytes recio reads or writes go through these. Offsets are 64-bit.
   read:  up to n bytes into buf; returns bytes read, 0 at end of file, -1 on error.
   write: all n bytes; 0 on success, -1 on error.
   seek:  to an absolute offset; 0 on success.            (optional for writers)
   size:  total size in bytes, or -1 when unknown.         (optional)
   sync:  make written bytes durable (fsync); 0 on success (optional)
   close: release the source; 0 on success, -1 when buffered data could not be written (optional)
   writev: all bytes of n pieces in order, as one write; 0 on success (optional: lets
           recio_writer_write_batch hand payloads to the sink without copying them) */
typedef struct recio_iovec {
    const void *base;
    size_t len;
} recio_iovec;

typedef struct recio_io {
    int64_t (*read)(void *user, void *buf, size_t n);
    int (*write)(void *user, const void *buf, size_t n);
    int (*seek)(void *user, uint64_t offset);
    int64_t (*size)(void *user);
    int (*sync)(void *user);
    int (*close)(void *user);
    void *user;
    int (*writev)(void *user, const recio_iovec *v, int n);
    /* Optional: the io's own words for its last failure (a remote read's "HTTP 503 after 5 tries:
       ..."), which recio reports in place of errno's. */
    const char *(*error)(void *user);
} recio_io;

#ifndef RECIO_NO_STDIO
/* OUTPUT FILES THAT APPEAR WHOLE OR NOT AT ALL, on any filesystem that can write (FILESYSTEMS:
   PATH's scheme picks it; s3:// too). recio_outfile_open creates PATH's new version through its
   filesystem's create (local files: a temporary name beside PATH, PATH.tmp.PID, created exclusively,
   so two writers never share one; S3: an upload) and fills *io with hooks on it: write through
   io->write (or io->writev), never close it. recio_outfile_commit syncs it and makes it appear at
   PATH (the filesystem's commit); recio_outfile_close before a commit discards it, so PATH keeps what
   it held. An existing PATH that is a FIFO or a device is written in place (renaming over it would
   destroy it); a folder is refused. A symbolic link at PATH is replaced by the new file; its target
   is left alone. */
typedef struct recio_outfile recio_outfile;
typedef struct recio_outfile_desc {
    int replace;               /* 1: commit replaces a file at PATH; 0: a file at PATH is refused
                                  (RECIO_ERR_ARG), at open and at commit: one made meanwhile is never
                                  lost (the commit links the new file in, which fails on a name taken) */
    int undo;                  /* 1: commit keeps PATH's previous file aside until recio_outfile_close,
                                  which can put it back: several files changed all or none */
    int no_sync;               /* 1: no fsync before the commit (many small files: every program sees
                                  the file whole, but a crash of the machine may leave it short) */
    const char *const *inputs; /* optional: ninputs paths PATH must not be (recio_same_file): the
                                  files a job reads are never written over (RECIO_ERR_ARG) */
    size_t ninputs;
    char *errmsg; /* optional, RECIO_ERRMSG_SIZE bytes that outlive the handle: why open,
                     commit or close failed, or a note; "" after a call with nothing to say */
    recio_allocator alloc;
    const struct recio_fs *fs; /* your filesystems, asked before the built-in ones (FILESYSTEMS) */
} recio_outfile_desc;
/* io NULL: the new version of PATH is no file; the commit removes PATH (kept aside with undo). */
RECIODEF recio_err recio_outfile_open(recio_outfile **f, recio_io *io, const char *path,
                                      const recio_outfile_desc *desc);
/* Sync, close and rename (or link) the new file into place; on error the temporary file is gone and
   PATH is as it was. A second commit returns RECIO_ERR_ARG. With undo on a filesystem other than the
   local files (which keep the previous file aside under a hard link), nothing can be kept aside: the
   commit syncs and closes, and the output appears at recio_outfile_close(f, 0), whose error says
   when it could not (S3 has no transaction over several objects: those before it stay). */
RECIODEF recio_err recio_outfile_commit(recio_outfile *f);
/* Free the handle. Before a commit: the new file is dropped. After one: undo = 1 (with desc.undo)
   puts PATH's previous file back, or removes the new one when there was none; undo = 0 removes the
   kept copy (when that fails: RECIO_OK, and a note naming the copy in desc.errmsg). */
RECIODEF recio_err recio_outfile_close(recio_outfile *f, int undo);
/* 1 when a and b name one file: the same device and inode (Windows: volume and file index), through
   hard and symbolic links and any spelling; when neither exists, the same name in the same folder.
   A path with a scheme (s3://, http://...) is the same as another only when spelt the same. */
RECIODEF int recio_same_file(const char *a, const char *b);
#endif

/* FILESYSTEMS. Every call that takes a path (readers, writers, the split, the iterator, .idx / .lst /
   mean_img loads, the CLI) goes through one table that maps the path's scheme to a recio_fs: "s3"
   serves "s3://...", and a scheme of NULL or "" serves plain paths (and "file://..."). Built in: the
   local files (POSIX, Win32, or ISO C stdio; none under RECIO_NO_STDIO) and, with RECIO_CURL, s3 and
   http(s). Register your own by pointing a desc's `fs` at a recio_fs (chain more with `next`): it is
   asked first, so it may also take over plain paths. There is no global registry.
   Wildcards ("dir/part-*.rec": * ? [a-z] [!x], in any path component) and directories (their *.rec
   files) are expanded by recio over `list`, the same way for every filesystem; the .idx beside a
   .rec is found through `info` (recio_index_path). Hooks may run on the iterator's worker threads,
   several at once.
   Every hook returns a recio_err and, on failure, may write the reason in `why` (RECIO_ERRMSG_SIZE
   bytes, "" on entry): only the reason, e.g. "No such file or directory"; recio puts "PATH: offset N:
   what it was doing: " in front (recio_strerror(e) when why is left empty). */
typedef enum recio_fs_kind {
    RECIO_FS_NONE = 0, /* nothing there */
    RECIO_FS_FILE = 1, /* bytes that can be read (size known) */
    RECIO_FS_DIR = 2,  /* a directory, or a prefix that has entries (object stores) */
    RECIO_FS_OTHER = 3 /* something else: a device, a FIFO (written in place, never replaced) */
} recio_fs_kind;

typedef struct recio_fs_stat {
    recio_fs_kind kind;
    uint64_t size; /* RECIO_FS_FILE: bytes */
} recio_fs_stat;

/* A whole file in memory, read-only (mmap): data stays valid until unmap. */
typedef struct recio_fs_map {
    const void *data; /* not NULL, also for 0 bytes */
    uint64_t size;
    void *token; /* the fs's, for unmap */
} recio_fs_map;

/* How create writes PATH. */
typedef enum recio_fs_mode {
    RECIO_FS_IN_PLACE = 0, /* PATH itself, created or truncated; nothing to commit */
    RECIO_FS_ATOMIC = 1,   /* the bytes appear at PATH only on commit (a temporary file renamed, a
                              multipart upload completed); discard leaves PATH as it was. The fs may
                              write in place what cannot be replaced (a FIFO, a device): pending NULL */
    RECIO_FS_DELETE = 2,   /* no bytes (io unused): PATH goes away on commit, with its group */
    RECIO_FS_NEW = 3       /* as ATOMIC, but the commit never replaces a file: one made at PATH since
                              fails it (the local files link the temporary file in, which fails on a
                              name taken; S3 checks first, and sends If-None-Match: *) */
} recio_fs_mode;

/* What create gives: the sink and, for an atomic mode, what commit or discard takes. */
typedef struct recio_fs_out {
    recio_io io;     /* the sink: recio writes, syncs and closes it before commit or discard */
    void *pending;   /* the fs's token for commit / discard; NULL: nothing to commit */
    const char *tmp; /* optional: the temporary file's name while pending, for a signal handler
                        that removes it (recio_writer_desc.tmp_names, recio pack); NULL when none */
} recio_fs_out;

typedef struct recio_fs {
    const char *scheme; /* "s3" serves "s3://..."; NULL or "" serves plain paths and file:// */
    void *user;         /* passed to every hook */
    unsigned flags;     /* RECIO_FS_FOLD_CASE: wildcards match names ignoring ASCII case;
                           RECIO_FS_BACKSLASH: '\\' separates path components too (Windows) */
    /* Required. A stream on path: read, and seek and size where it can (the split needs sizes). */
    recio_err (*open_read)(void *user, const char *path, recio_io *io, char *why);
    /* Optional: what is at path (stat; named info because <sys/stat.h> may #define stat). Default:
       open_read, then io.size (kind FILE when it opens, NONE when it does not). kind NONE with
       RECIO_OK when nothing is there (why may say it in the fs's words); an error when it cannot
       tell (permission, network). */
    recio_err (*info)(void *user, const char *path, recio_fs_stat *st, char *why);
    /* Optional (without it: no wildcards or directories). Each entry of directory dir (not "." or
       ".."), by name, to entry until it returns nonzero; kind may be RECIO_FS_NONE when not known
       cheaply. An error when dir cannot be listed. dir may end with a separator ("dir/", "C:\\",
       "s3://bucket/prefix/"), and is "." for a pattern without a directory. */
    recio_err (*list)(void *user, const char *dir, int (*entry)(void *ctx, const char *name, recio_fs_kind kind),
                      void *ctx, char *why);
    /* Optional, together (without them: read-only). create fills out as mode says. commit makes the
       n pending outputs (NULLs skipped) appear, all or none as far as the fs can, in order (the
       local files: each but the last is kept aside under a hard link and put back if a later one
       fails), and consumes them whatever happens; RECIO_OK with why set: done, with a note for the
       user. discard drops one pending output (after its io was closed): PATH stays as it was. */
    recio_err (*create)(void *user, const char *path, recio_fs_mode mode, recio_fs_out *out, char *why);
    recio_err (*commit)(void *user, void *const *pending, int n, char *why);
    void (*discard)(void *user, void *pending);
    recio_err (*remove)(void *user, const char *path, char *why); /* optional */
    /* Optional: map the whole file (readers and splits with use_mmap; without it they stream). */
    recio_err (*map)(void *user, const char *path, recio_fs_map *m, char *why);
    void (*unmap)(void *user, recio_fs_map *m);
    const struct recio_fs *next; /* the next filesystem to ask, or NULL */
} recio_fs;
#define RECIO_FS_FOLD_CASE 1u
#define RECIO_FS_BACKSLASH 2u /* '\\' separates path components too (Windows) */

/* The filesystem that serves path: the first of list (following next) whose scheme matches, else
   the built-in one; NULL when none does (an unknown scheme; a plain path under RECIO_NO_STDIO). A
   scheme is two or more of [A-Za-z0-9+.-] before "://" (so "C:\x" and "C://x" are plain paths),
   matched ignoring case. */
RECIODEF const recio_fs *recio_fs_find(const recio_fs *list, const char *path);
/* Every http:// or https:// URL in text loses its user:password@ and its ?query and #fragment (where
   a presigned URL keeps its signature), in place. recio's own messages are all passed through it;
   the CLI passes its own too. A query ends at white space (a ':' just before it stays: the
   ": offset N" after a name). */
RECIODEF void recio_redact(char *text);

/* A growing memory buffer, the target of a memory writer (recio_writer_desc.mem). Free with recio_buffer_free. */
typedef struct recio_buffer {
    unsigned char *data;
    size_t size, capacity;
    recio_allocator alloc;
} recio_buffer;
RECIODEF void recio_buffer_free(recio_buffer *b);

/* Little-endian load/store: the format is little-endian on every host. p need not be aligned. */
RECIODEF uint32_t recio_load_u32le(const void *p);
RECIODEF uint64_t recio_load_u64le(const void *p);
RECIODEF float recio_load_f32le(const void *p);
RECIODEF void recio_store_u32le(void *p, uint32_t v);
RECIODEF void recio_store_u64le(void *p, uint64_t v);
RECIODEF void recio_store_f32le(void *p, float v);

/* Seedable RNG: splitmix64 (Steele, Lea, Flood 2014), one 64-bit word of state, the same stream on
   every host; seed it by setting state (recio_rng g = {seed}). recio_seed_for(seed, epoch, index)
   gives the seed of record `index` in `epoch`, so a record's random choices never depend on thread
   count or call order. */
typedef struct recio_rng {
    uint64_t state;
} recio_rng;
RECIODEF uint64_t recio_seed_for(uint64_t seed, uint64_t epoch, uint64_t index);
RECIODEF uint64_t recio_rng_next(recio_rng *r);
RECIODEF uint64_t recio_rng_below(recio_rng *r, uint64_t n); /* uniform in [0, n), n > 0, no bias */
RECIODEF double recio_rng_uniform(recio_rng *r);             /* uniform in [0, 1), 53 bits */

/* FNV-1a 64 of n bytes, continuing from h (start with RECIO_FNV1A_INIT): handy to compare payloads
   across machines. */
#define RECIO_FNV1A_INIT 0xcbf29ce484222325ULL
RECIODEF uint64_t recio_fnv1a64(uint64_t h, const void *p, size_t n);
/* Checksum of a tensor of n bytes whose elements are elem_size (1, 2 or 4) bytes, taken in
   little-endian order so every host gives the same number. It runs at memory speed (FNV-1a byte by
   byte costs as much as decoding the image): 64 lanes each hash every 64th 32-bit word (lane k:
   h = (h ^ w) * 16777619, h ^= h >> 13, from 2166136261 ^ k * 2654435769), then FNV-1a 64 over the
   64 lane states (little-endian), the n % 256 bytes left over and n as 8 little-endian bytes.
   (Implemented in IMAGE OPS, on the kernel table's SIMD columns; RECIO_NO_IMAGE keeps it.) */
RECIODEF uint64_t recio_checksum(const void *p, size_t n, size_t elem_size);

/* ==================================================================================================
   2. RECORDIO
   ================================================================================================== */

#define RECIO_MAGIC 0xced7230aU
#define RECIO_MAX_RECORD ((1U << 29) - 1U) /* largest payload a part length can say */

typedef struct recio_record {
    const void *data; /* the payload; valid until the next call on the same handle */
    size_t size;      /* payload bytes (parts joined) */
    uint64_t offset;  /* byte offset of the record's first header in its file */
} recio_record;

typedef struct recio_reader recio_reader;

typedef struct recio_reader_desc {
    recio_io io;        /* custom source, used when path is NULL: recio_reader_close closes it;
                           a failed open leaves it to the caller, open */
    const char *name;   /* name in messages (default: path, or "<memory>" / "<io>") */
    size_t buffer_size; /* streaming buffer (default 1 MiB); grows for larger records */
    int use_mmap;       /* map the file and hand out pointers into it, where its filesystem maps
                           (local files on POSIX and Windows; else it is streamed); a local file
                           truncated while mapped kills the process (SIGBUS): map only files
                           nothing else changes while they are read */
    char *errmsg;       /* optional, RECIO_ERRMSG_SIZE bytes: why the open failed */
    recio_allocator alloc;
    const recio_fs *fs; /* your filesystems, asked before the built-in ones (see FILESYSTEMS) */
} recio_reader_desc;

/* Open a reader. On error *r is NULL. A streaming reader reads through one reusable buffer;
   memory and mapped readers (desc.use_mmap) hand out pointers into the source (zero copy) for
   single-part records. */
RECIODEF recio_err recio_reader_open(recio_reader **r, const char *path);
RECIODEF recio_err recio_reader_open_mem(recio_reader **r, const void *buf, size_t n);
RECIODEF recio_err recio_reader_open_desc(recio_reader **r, const char *path, const recio_reader_desc *desc);

/* Next record: RECIO_OK, RECIO_END, or an error that stays until recio_reader_seek. */
RECIODEF recio_err recio_reader_next(recio_reader *r, recio_record *rec);
/* Continue at byte offset `offset` (a record head, e.g. from a .idx); clears a stored error. */
RECIODEF recio_err recio_reader_seek(recio_reader *r, uint64_t offset);
RECIODEF uint64_t recio_reader_tell(const recio_reader *r);      /* offset of the next record head */
RECIODEF const char *recio_reader_errmsg(const recio_reader *r); /* "" when no error */
RECIODEF void recio_reader_close(recio_reader *r);

typedef struct recio_writer recio_writer;

typedef struct recio_writer_desc {
    recio_io io;            /* custom sink, used when path is NULL: the writer closes it when it
                               finishes; a failed open leaves it to the caller, open */
    const char *name;       /* name in messages */
    const char *index_path; /* also write an MXNet .idx ("key\toffset\n") here; NULL: none */
    int atomic;             /* write a unique PATH.tmp.PID, fsync, rename to PATH (and the .idx) on a
                               clean close; a target that is not a regular file is written in place */
    size_t buffer_size;     /* default 1 MiB */
    int background;         /* RECIO_THREADS: a thread writes one buffer while you fill the next (the
                               hooks then run on that thread); without RECIO_THREADS: ignored */
    char *errmsg;           /* optional, RECIO_ERRMSG_SIZE bytes: why the open failed */
    recio_allocator alloc;
    const recio_fs *fs;     /* your filesystems, asked before the built-in ones (see FILESYSTEMS) */
    recio_buffer *mem;      /* write into this buffer (path and io unused; grown with its own alloc;
                               free it with recio_buffer_free after the writer is closed) */
    const char **tmp_names; /* optional, out: 2 pointers, set at open to the temporary files an
                               atomic writer fills (the data, the .idx; NULL when none), valid until
                               the writer finishes: for a signal handler that removes them */
} recio_writer_desc;

/* One record of recio_writer_write_batch: its payload and its key in the .idx. */
typedef struct recio_writer_item {
    const void *data;
    size_t size;
    uint64_t key;
} recio_writer_item;

RECIODEF recio_err recio_writer_open(recio_writer **w, const char *path);
RECIODEF recio_err recio_writer_open_desc(recio_writer **w, const char *path, const recio_writer_desc *desc);
/* Append one record (key in the .idx = ordinal). RECIO_ERR_TOO_BIG for size >= 2^29 leaves the
   file sound; any I/O error is kept and returned by every later call, close included. */
RECIODEF recio_err recio_writer_write(recio_writer *w, const void *data, size_t size);
/* Append n records with their own keys in the .idx (MXNet's write_idx), byte for byte as n
   recio_writer_write calls would write them. With a sink that has writev (the file backend on
   POSIX) the payloads go to the kernel without being copied, about 1 MiB per call: they need only
   stay valid during this call. A record that fails stops the batch: the ones before it are written. */
RECIODEF recio_err recio_writer_write_batch(recio_writer *w, const recio_writer_item *items, size_t n);
RECIODEF uint64_t recio_writer_tell(const recio_writer *w); /* offset the next record will have */
RECIODEF const char *recio_writer_errmsg(const recio_writer *w);
/* Flush, sync and rename (atomic) and close the sink, keeping the handle so recio_writer_errmsg
   still tells what went wrong; returns the first error that happened, if any. On error an atomic
   writer removes its temporary files and leaves PATH and the .idx untouched: both are replaced or
   neither (if the .idx cannot be renamed, the old PATH is put back). Two atomic writers of one PATH
   never share a temporary file, so PATH is always one whole file, the last to finish; which .idx
   goes with it is up to the order of their renames: lock the pair if writers may race (recio pack
   does). Later writes return RECIO_ERR_ARG. */
RECIODEF recio_err recio_writer_finish(recio_writer *w);
/* recio_writer_finish (unless done) and free the handle; returns the first error. */
RECIODEF recio_err recio_writer_close(recio_writer *w);
/* Give up: close without syncing or renaming and free the handle. An atomic writer removes its
   temporary files, so PATH (and the .idx) keep what they held before; a plain writer leaves the
   partial file. For a job that fails half-way (a --strict pack, an interrupted conversion). */
RECIODEF void recio_writer_abort(recio_writer *w);

/* ==================================================================================================
   3. INDEX AND IMAGE RECORDS
   ================================================================================================== */

/* MXNet .idx: one "key\toffset\n" line per record. */
typedef struct recio_index_entry {
    uint64_t key, offset;
} recio_index_entry;

typedef struct recio_index {
    recio_index_entry *entries;
    size_t count;
    recio_allocator alloc; /* the entries' allocator (the desc's, set by load) */
} recio_index;

/* How an .idx is loaded or saved; zero (or a NULL desc) means the defaults. */
typedef struct recio_index_desc {
    const char *text; /* load: parse these size bytes instead of reading path (path, or
                         "<memory>" when NULL, names them in messages) */
    size_t size;
    char *errmsg;          /* optional, RECIO_ERRMSG_SIZE bytes: "FILE: line N: what" (load) or
                              "FILE: offset N: what" (save) after a failure, "" after success */
    recio_allocator alloc; /* load: for the entries (kept in the index for recio_index_free) */
    const recio_fs *fs;    /* your filesystems, asked before the built-in ones (FILESYSTEMS) */
} recio_index_desc;

/* Load (or parse desc->text) into idx, which is overwritten: free a loaded one first. */
RECIODEF recio_err recio_index_load(recio_index *idx, const char *path, const recio_index_desc *desc);
/* Save idx as path, written whole (a file beside it renamed over it; on S3, one object): a failure
   leaves path as it was. */
RECIODEF recio_err recio_index_save(const recio_index *idx, const char *path, const recio_index_desc *desc);
RECIODEF void recio_index_free(recio_index *idx);
/* The .idx that goes with the data file rec, the one rule the split, `recio index` and Python follow:
   REC.idx when it exists, else rec with a final ".rec" replaced by ".idx" (im2rec's name, and the one
   to create), asked through fs (may be NULL: the built-in filesystems). out gets the name; cap must
   be at least strlen(rec) + 5 (else RECIO_ERR_SMALL). *found (optional) is 1 when a file is there. */
RECIODEF recio_err recio_index_path(char *out, size_t cap, const char *rec, const recio_fs *fs, int *found);

/* .lst: "index\tlabel[\tlabel...]\tpath" per line (im2rec's list file). As im2rec reads it, the line
   and each tab-separated field are stripped of spaces (so "0 \t 1 \t a.jpg" and a trailing tab are
   fine) and the path is the last field; a path holding a NUL byte is refused. A malformed line fails
   the load with "FILE: line N: what" in desc.errmsg, unless desc.on_bad_line is set: then that
   message goes to on_bad_line, the line is left out and counted in skipped, and the load goes on
   (im2rec's habit).
   With mask_column set, each line ends with two paths, "index\tlabel...\timage\tmask": the list
   of a segmentation dataset (recio list/pack --mask-root); im2rec cannot read such a list. */
typedef struct recio_lst_item {
    uint64_t index;
    const float *labels; /* into recio_lst storage */
    uint32_t nlabels;
    const char *path; /* into recio_lst storage */
    const char *mask; /* the mask's path with mask_column (into recio_lst storage), else NULL */
} recio_lst_item;

typedef struct recio_lst {
    recio_lst_item *items;
    size_t count;
    void *storage;
    recio_allocator alloc; /* the desc's, for recio_lst_free */
    size_t skipped;        /* malformed lines left out (with desc.on_bad_line) */
} recio_lst;

/* How a .lst is loaded; zero (or a NULL desc) means the defaults. */
typedef struct recio_lst_desc {
    const char *text; /* parse these size bytes instead of reading path (path, or "<memory>" when
                         NULL, names them in messages) */
    size_t size;
    char *errmsg; /* optional, RECIO_ERRMSG_SIZE bytes: "FILE: line N: what" after a failure */
    void (*on_bad_line)(void *user, const char *msg); /* optional: report and skip malformed lines */
    void *user;                                       /* passed to on_bad_line */
    int mask_column;                                  /* lines end with image and mask paths */
    recio_allocator alloc;
    const recio_fs *fs; /* your filesystems (FILESYSTEMS) */
} recio_lst_desc;

/* Load (or parse desc->text) into lst, which is overwritten: free a loaded one first. */
RECIODEF recio_err recio_lst_load(recio_lst *lst, const char *path, const recio_lst_desc *desc);
RECIODEF void recio_lst_free(recio_lst *lst);

/* MXNet image record: IRHeader {u32 flag; f32 label; u64 id; u64 id2} (24 bytes), then when
   flag > 0 `flag` float32 labels (the header label is then ignored), then the encoded image.
   SEGMENTATION RECORDS carry the image's label mask after the image, as a tail:
      encoded image | mask PNG (one label per pixel: recio_decode_desc.mask) | u32 LE mask length | "RMSK"
   Why a tail: the header and labels keep their meaning (a record may be both a detection and a
   segmentation record), and every old reader still sees the image: MXNet's ImageRecordIter (OpenCV),
   DALI, PIL and recio before this decode from the image's first byte and stop at its end marker
   (JPEG EOI, PNG IEND), never reading the tail. recio_irecord_unpack finds the tail (the last 4
   bytes "RMSK", a length that fits, and a PNG signature where it says the mask starts) and then
   gives the image without it. */
#define RECIO_IRHEADER_SIZE 24
#define RECIO_MASK_TAIL_SIZE 8

typedef struct recio_irecord {
    uint32_t flag;
    float label;
    uint64_t id, id2;
    const void *labels; /* flag little-endian float32s, unaligned; NULL when flag == 0 */
    const void *image;  /* encoded image bytes inside the payload (without a mask tail) */
    size_t image_size;
    const void *mask; /* the label mask's PNG bytes of a segmentation record; NULL when none */
    size_t mask_size;
    uint32_t nlabels;       /* the record's labels: flag, or 1 (the header's label) when flag == 0 */
    const void *all_labels; /* nlabels little-endian float32s, unaligned: labels, or the header's
                               label inside the payload when flag == 0; label i is
                               recio_load_f32le((const char *)all_labels + 4 * i) */
} recio_irecord;

/* Parse a payload; RECIO_ERR_FORMAT when it is too short for its header and labels. */
RECIODEF recio_err recio_irecord_unpack(recio_irecord *out, const void *payload, size_t size);
/* Write the 8-byte tail that follows a mask of mask_size bytes (see above) into dst; returns
   RECIO_MASK_TAIL_SIZE, or 0 (nothing written) when mask_size does not fit in 32 bits. A
   segmentation record is header, labels, image, mask, then this tail. */
RECIODEF size_t recio_irecord_mask_tail(void *dst, size_t mask_size);
/* Write the header (and labels) into dst and return its size; dst NULL: only the size. nlabels == 1
   stores flag 0 and the label in the header, as MXNet's pack() does for a number; other counts store
   flag = nlabels and the labels after the header. nlabels | RECIO_LABEL_ARRAY stores flag = nlabels
   for every count, one too, as MXNet's pack() does for an array label (numpy). */
#define RECIO_LABEL_ARRAY 0x80000000u
RECIODEF size_t recio_irecord_pack_header(void *dst, const float *labels, uint32_t nlabels, uint64_t id, uint64_t id2);

/* MXNET DETECTION LABELS: the labels of im2rec's object-detection records (SageMaker's format, read
   by MXNet's ImageDetRecordIter): [A, B, A - 2 header floats (e.g. the image's width and height),
   then objects of B floats each: class, xmin, ymin, xmax, ymax (normalised 0..1, x right, y down),
   then any extra floats of the object (e.g. "difficult")]. A >= 2 and B >= 5 are whole numbers and
   the objects fill the rest exactly; an object of class -1 is MXNet's padding, not an object.
   Objects in this layout are what recio_apply_desc.boxes takes (stride B). */
typedef struct recio_det_layout {
    uint32_t header_width; /* A: floats before the first object */
    uint32_t object_width; /* B: floats per object */
    uint32_t count;        /* objects: object i is labels[A + i*B] .. labels[A + i*B + B - 1] */
} recio_det_layout;
/* The layout of n labels; RECIO_ERR_FORMAT when they are not one (a classification label, say),
   RECIO_ERR_ARG for NULL labels (n > 0) or out. */
RECIODEF recio_err recio_det_layout_of(const float *labels, size_t n, recio_det_layout *out);
/* Write [2 + nextra, object_width, extra..., objects...] into dst (cap floats). Returns how many
   floats the labels take; nothing is written when that is more than cap (0 when object_width < 5). */
RECIODEF size_t recio_det_labels(float *dst, size_t cap, const float *extra, uint32_t nextra, const float *objects,
                                 uint32_t object_width, uint32_t count);

/* ==================================================================================================
   4. SPLIT
   ================================================================================================== */

/* Split a dataset of many RecordIO files into `nsplit` parts, one per worker (`rank`), with no
   coordination between workers.

   Byte mode (default) is dmlc-core's InputSplit for the "recordio" type, to the byte: the files of
   `uris` (';'-separated, in that order, 0-byte files dropped) are one stream of `total` bytes;
   step = ceil(total / nsplit) rounded up to a multiple of 4; part r covers [r*step, (r+1)*step)
   with both ends moved forward to the next record head (an aligned magic followed by cflag 0/1),
   and yields the records whose head lies in that range. Parts may cross files and may be empty.
   Opening costs one stat (recio_fs.info) per file and at most two short boundary scans: never a
   pass over the data.

   Index mode (mode = RECIO_SPLIT_INDEX, or index_path set) partitions by record count using each
   file's index (recio_index_path: FILE.idx, or FILE with .rec replaced by .idx; local offsets) or
   one index over the whole list (index_path; global offsets, as dmlc's "indexed_recordio"): the
   offsets are sorted, n records,
   rank r gets positions [r*ceil(n/nsplit), min((r+1)*ceil(n/nsplit), n)), as dmlc-core does.
   A key range (key_end > 0) keeps only the index lines whose key is in [key_begin, key_end): the
   other records are as if not listed (the chunk shuffle then needs the kept records consecutive).
   With a shuffle the positions are first permuted by an order that depends only on (seed, epoch):
      RECIO_SHUFFLE_FULL   Fisher-Yates over all n positions, driven by recio_rng seeded with
                           recio_seed_for(seed, epoch, 0): for i = n-1 down to 1, swap i with
                           recio_rng_below(rng, i+1). Every rank computes the same order.
      RECIO_SHUFFLE_CHUNK  positions cut into chunks of chunk_records consecutive records; the chunks
                           are permuted (Fisher-Yates, seed recio_seed_for(seed, epoch, 0)); the
                           permuted sequence is cut into windows of window_chunks chunks, and each
                           window w is shuffled again (seed recio_seed_for(seed, epoch, w + 1)). The
                           index is streamed, keeping one offset per chunk (plus one window of
                           offsets while reading): it never has to fit in memory when sorted.
   then rank r takes its slice of that order. recio_split_reset(s, epoch) starts another epoch.

   Equalised parts (equalize): every rank yields the same number of records per epoch, so that
   collective operations in distributed training do not wait forever for a rank that ran out.
      RECIO_EQUALIZE_PAD   yield max-count records: after its own records a rank repeats the first
                           records of its own epoch sequence (cyclically if it must repeat more than
                           it has); recio_split_where.repeat is 1 for those.
      RECIO_EQUALIZE_DROP  yield min-count records: each rank stops after that many.
   In index mode an equalised split balances the count: rank r gets positions
   [r*n/nsplit, (r+1)*n/nsplit), so at most one record per rank is repeated or dropped. In byte mode
   the byte parts are kept and counted (from each FILE.idx, else by hopping over record headers:
   a pass over the headers, not the data); a rank with an empty byte part cannot pad (error), nor
   can an index-mode rank when there are fewer records than ranks.

   Errors: a failed open sets *s to NULL and writes why ("FILE: offset N: what") into desc.errmsg;
   after the open the handle tells (recio_split_errmsg). */
typedef struct recio_split recio_split;

typedef enum recio_split_mode {
    RECIO_SPLIT_BYTES = 0, /* dmlc-core byte ranges */
    RECIO_SPLIT_INDEX = 1  /* record count, from .idx files */
} recio_split_mode;

typedef enum recio_split_shuffle {
    RECIO_SHUFFLE_NONE = 0,
    RECIO_SHUFFLE_FULL = 1, /* index mode: one permutation of every record per epoch */
    RECIO_SHUFFLE_CHUNK = 2 /* index mode: permuted chunks, shuffled within windows (bounded memory) */
} recio_split_shuffle;

typedef enum recio_split_equalize {
    RECIO_EQUALIZE_NONE = 0,
    RECIO_EQUALIZE_PAD = 1, /* repeat own records up to the largest part's count */
    RECIO_EQUALIZE_DROP = 2 /* stop at the smallest part's count */
} recio_split_equalize;

typedef struct recio_split_desc {
    recio_split_mode mode;
    const char *index_path;      /* one index over the whole list, global offsets (implies INDEX) */
    recio_split_shuffle shuffle; /* implies INDEX mode */
    uint64_t seed;               /* shuffle seed */
    uint64_t epoch;              /* first epoch (recio_split_reset picks later ones) */
    uint32_t chunk_records;      /* CHUNK: records per chunk (default 256) */
    uint32_t window_chunks;      /* CHUNK: chunks shuffled together (default 16) */
    recio_split_equalize equalize;
    int ordinals;       /* byte mode: also find the ordinal of the first record when a
                           part starts inside a file (FILE.idx, else a header hop) */
    int use_mmap;       /* 1: map the files where their filesystem maps (local files on
                           POSIX and Windows; fastest for shuffled reads, but a file
                           truncated while mapped kills the process with SIGBUS);
                           0 (default) or -1: read through a buffer (a clean error then) */
    size_t buffer_size; /* reader buffer (default 1 MiB; shuffled: about 2 records) */
    const recio_fs *fs; /* your filesystems, asked before the built-in ones (FILESYSTEMS):
                           the files, their .idx, wildcards and directories go through it */
    char *errmsg;       /* optional, RECIO_ERRMSG_SIZE bytes: why the open failed */
    recio_allocator alloc;
    uint64_t key_begin, key_end; /* key_end > 0: only the index lines whose key is in [key_begin,
                                    key_end) (implies INDEX; UINT64_MAX: no upper end). For a file
                                    whose first or last records are not images (insightface's:
                                    images [1, label[0]) of record 0's label, then identities) */
} recio_split_desc;

#define RECIO_SPLIT_UNKNOWN UINT64_MAX

/* Where the last record came from. */
typedef struct recio_split_where {
    unsigned file;    /* index in the expanded file list (recio_split_info.files) */
    const char *path; /* that file's name, owned by the split */
    uint64_t ordinal; /* ordinal within its file; RECIO_SPLIT_UNKNOWN in byte mode for the records of
                         a file the part enters mid-way, unless desc.ordinals was set */
    uint64_t key;     /* global byte offset of the record head: unique, the same on every host and
                         for every nsplit (a good `index` for recio_seed_for) */
    uint64_t index;   /* index mode: position in the sorted global index; else RECIO_SPLIT_UNKNOWN */
    uint64_t seq;     /* 0, 1, 2, ... within this epoch on this rank */
    int repeat;       /* 1 for a record repeated by RECIO_EQUALIZE_PAD */
} recio_split_where;

/* What a split knows about itself (recio_split_query); the pointers are the split's, valid until
   it is closed. */
typedef struct recio_split_info {
    uint64_t begin, end;      /* byte range of the part in the concatenation: byte mode [begin, end)
                                 after moving to record heads (dmlc's offsets); index mode unshuffled,
                                 the range read (first record to the next part's first) */
    uint64_t count;           /* records per epoch on this rank; RECIO_SPLIT_UNKNOWN in byte mode
                                 without equalize (not counted) */
    uint64_t total_bytes;     /* size of all files */
    unsigned nfiles;          /* after expansion, empty files dropped */
    const char *const *files; /* their names */
    recio_split_where where;  /* where the last record recio_split_next gave came from (zero before
                                 the first of an epoch) */
} recio_split_info;

/* Open part `rank` of `nsplit` of the files in `uris` (';'-separated; wildcards and directories, whose
   *.rec files are taken, expand in sorted order, on any filesystem that lists: see FILESYSTEMS).
   See the error note above. */
RECIODEF recio_err recio_split_open(recio_split **s, const char *uris, unsigned rank, unsigned nsplit);
RECIODEF recio_err recio_split_open_desc(recio_split **s, const char *uris, unsigned rank, unsigned nsplit,
                                         const recio_split_desc *desc);
/* Next record of this part: RECIO_OK, RECIO_END at the end of the epoch, or an error (sticky).
   recio_split_query then says where it came from (info.where). */
RECIODEF recio_err recio_split_next(recio_split *s, recio_record *rec);
/* Start epoch `epoch` from the beginning of the part (a new order when shuffled); clears an error. */
RECIODEF recio_err recio_split_reset(recio_split *s, uint64_t epoch);
/* The part's bounds, count, files, and where the last record came from (recio_split_info). */
RECIODEF recio_err recio_split_query(const recio_split *s, recio_split_info *info);
RECIODEF const char *recio_split_errmsg(const recio_split *s); /* "" when no error */
RECIODEF void recio_split_close(recio_split *s);

/* ==================================================================================================
   5. IMAGE OPS
   ================================================================================================== */

/* A decoded image larger than this is refused, from its header, before anything is allocated (corrupt
   sizes), and so is an op's output (see CONFIGURATION); the tools size their own images by it too. */
#ifndef RECIO_MAX_PIXELS
#define RECIO_MAX_PIXELS ((uint64_t)1 << 28)
#endif

/* One image, in memory. HWC: row y starts at data + y*stride and holds width*channels elements.
   CHW: plane c, row y starts at data + (c*height + y)*stride and holds width elements.
   `owned` is the block recio_image_free releases (NULL for a view of someone else's memory). */
typedef enum recio_dtype {
    RECIO_U8 = 0,  /* 0..255 */
    RECIO_F32 = 1, /* float */
    RECIO_I8 = 2,  /* signed, saturated: e.g. a quantised model input */
    RECIO_F16 = 3  /* IEEE half, stored as uint16_t bits */
} recio_dtype;

typedef enum recio_layout { RECIO_HWC = 0, RECIO_CHW = 1 } recio_layout;

typedef struct recio_image {
    int width, height, channels; /* channels 1, 3 or 4 */
    recio_dtype dtype;
    recio_layout layout;
    size_t stride; /* bytes between rows (HWC) or between a plane's rows (CHW) */
    void *data;
    void *owned;           /* NULL for a view */
    recio_allocator alloc; /* frees `owned` */
} recio_image;

/* Resampling filters. LINEAR is OpenCV INTER_LINEAR (half-pixel centres, 2x2 taps, no antialiasing
   when shrinking: fast, what most pipelines use). AREA averages every covered source pixel with
   fractional coverage (OpenCV INTER_AREA when shrinking; antialiased), and is LINEAR when enlarging.
   NEAREST, CUBIC, LANCZOS are OpenCV's INTER_NEAREST (source floor(x * src / dst)), INTER_CUBIC
   (Keys a = -0.75, 4x4 taps) and INTER_LANCZOS4 (8x8 taps), MXNet's inter_method 0, 2 and 4, with
   no antialiasing. The _AA filters are PIL's BILINEAR, BICUBIC (a = -0.5) and LANCZOS (a = 3),
   which torchvision's antialias=True and DALI's antialias follow: when shrinking by s the filter
   is widened s times, so every source pixel counts (docs/image.md has the maths). */
typedef enum recio_filter {
    RECIO_LINEAR = 0,
    RECIO_AREA = 1,
    RECIO_NEAREST = 2,
    RECIO_CUBIC = 3,
    RECIO_LANCZOS = 4,
    RECIO_LINEAR_AA = 5,
    RECIO_CUBIC_AA = 6,
    RECIO_LANCZOS_AA = 7,
    RECIO_AUTO = 8 /* MXNet's inter_method 9: CUBIC when both sides grow, AREA when both shrink, else LINEAR */
} recio_filter;

/* Border of affine ops: a constant value, the nearest edge pixel, or a mirror (dcb|abcd|cba). */
typedef enum recio_border {
    RECIO_BORDER_CONSTANT = 0,
    RECIO_BORDER_REPLICATE = 1,
    RECIO_BORDER_REFLECT = 2
} recio_border;

/* OUTPUT CONVENTION of every op below (`out` parameters):
   - out->data == NULL (e.g. `recio_image out = {0}`): the op allocates `out` (free with recio_image_free).
   - out->data != NULL (e.g. from recio_image_wrap over your buffer): the op writes there and allocates
     nothing; out's width/height/channels/dtype/layout must be those of the result, else RECIO_ERR_ARG.
   Inputs are never modified; `in` and `out` must not overlap. Ops that need u8 HWC say so and
   return RECIO_ERR_UNSUPPORTED for other inputs. */

RECIODEF size_t recio_dtype_size(recio_dtype t);
#ifndef RECIO_NO_IMAGE /* the helpers, decoding and every op (the types above stay: the iterator's batch uses them) */
RECIODEF size_t recio_image_bytes(const recio_image *img); /* bytes spanned: stride * rows */
/* A view of caller memory (stride 0 = packed: width*channels*size for HWC, width*size for CHW);
   nothing is ever freed. With data NULL it describes a shape. */
RECIODEF recio_image recio_image_wrap(void *data, int w, int h, int channels, recio_dtype t, recio_layout l,
                                      size_t stride);
/* Allocate a packed image (alloc may be NULL). */
RECIODEF recio_err recio_image_alloc(recio_image *img, int w, int h, int channels, recio_dtype t, recio_layout l,
                                     const recio_allocator *alloc);
RECIODEF void recio_image_free(recio_image *img); /* frees an owned image; a view is only cleared */
RECIODEF recio_err recio_image_copy(const recio_image *in, recio_image *out); /* any stride to out */

/* Element (x, y, c) as float / store with rounding and saturation (u8, i8). Slow, for tests and tools. */
RECIODEF float recio_image_get(const recio_image *img, int x, int y, int c);
RECIODEF void recio_image_set(recio_image *img, int x, int y, int c, float v);

/* DECODE (stb_image, from memory): JPEG baseline/progressive, PNG (8/16-bit, alpha, palette), BMP
   (uncompressed, bottom-up or top-down); any other format is RECIO_ERR_DECODE "unsupported image
   format". channels: 1, 3, 4, or 0 = as stored (2 = grey+alpha becomes 4).
   Always u8 HWC, owned. A corrupt or truncated image is RECIO_ERR_DECODE, never filler pixels; a
   header claiming more pixels than its bytes can hold is RECIO_ERR_DECODE and one over
   RECIO_MAX_PIXELS RECIO_ERR_LIMIT, both refused before any allocation.
   stb's working memory and the pixels come from RECIO_MALLOC; recio_image_decode_desc takes an
   allocator (stb's allocations included) and writes the reason into its errmsg. */
RECIODEF recio_err recio_image_decode(recio_image *out, const void *bytes, size_t n, int channels);
/* LABEL MASKS (segmentation, recio_decode_desc.mask): the one rule wherever recio takes a mask in
   (recio_iter_desc.masks, recio pack --mask-root, recio apply --mask, recio verify --decode, Python).
   A mask is an 8-bit grey PNG, whose bytes are the labels, or a palette PNG (1, 2, 4 or 8 bits,
   PASCAL VOC's own format), whose indices are the labels, never its colours. Any other kind is
   refused with RECIO_ERR_DECODE and its kind named ("mask: a 16-bit grey PNG, not a label mask
   (...)"): decoding it would change the labels (a 1-bit grey PNG's 1 becomes 255, a 16-bit grey's
   3000 becomes 11, a JPEG blurs them). A damaged PNG is RECIO_ERR_DECODE ("mask: truncated PNG ...").
   The mask comes out u8, 1 channel, HWC, owned (recio_image_free); channels must be 0 or 1.
   SCALED DECODE (min_short): a JPEG reduced by its DCT scaling (1/2, 1/4 or 1/8, the strongest that
   keeps the shorter side >= min_short; 0 = full size) when the implementation is built with
   RECIO_TURBOJPEG (link -ljpeg, libjpeg-turbo >= 1.5). Other formats, or builds without it, decode
   at full size. For a transform, recio_transform_apply_desc with `bytes` does better: it decodes
   only the window the chain reads. With RECIO_TURBOJPEG every JPEG goes through libjpeg-turbo
   (CMYK/YCCK converted to RGB as stb does); a decode that libjpeg-turbo only warns about (e.g. a
   truncated scan, filled with grey) is accepted. A zero-initialised desc (bytes and size set) is
   recio_image_decode. */
typedef struct recio_decode_desc {
    const void *bytes;                       /* in: the encoded image */
    size_t size;                             /* its bytes */
    int channels;                            /* 1, 3, 4; 0 = as stored */
    int min_short;                           /* > 0: DCT-scaled JPEG decode (above); 0 = full size */
    const struct recio_transform *transform; /* with min_short 0: the min_short this transform's first
                              resize needs (S of a leading resize_short(S) or random_resized_crop(S)) */
    int mask;                                /* 1: a label mask by the rule above */
    int check;             /* 1: check, decode nothing: every check decode makes before the pixels (the
                              format, the size against RECIO_MAX_PIXELS and against the bytes present,
                              a PNG's chunks up to IEND, every scan of a baseline JPEG complete, a
                              JPEG's end-of-image marker), whatever the decoder; out gets
                              the shape (data NULL). Costs a walk of the bytes, not a decode (a mask
                              is decoded and dropped: its labels need its pixels). recio pack's
                              probe of images it stores as they are */
    recio_allocator alloc; /* the pixels and stb's working memory; zero = RECIO_MALLOC */
    char *errmsg;          /* optional out, RECIO_ERRMSG_SIZE bytes: "" or "decode: why" / "mask: why" */
} recio_decode_desc;
RECIODEF recio_err recio_image_decode_desc(recio_image *out, const recio_decode_desc *d);
/* Size and stored channel count without decoding pixels. */
RECIODEF recio_err recio_image_info(const void *bytes, size_t n, int *w, int *h, int *channels);

/* GEOMETRY. Crops of HWC images are views sharing in's memory (nothing to free); crops of CHW
   images are owned copies (free them). */
RECIODEF recio_err recio_image_crop(const recio_image *in, recio_image *view, int x, int y, int w, int h);
RECIODEF recio_err recio_image_center_crop(const recio_image *in, recio_image *view, int w, int h);
RECIODEF recio_err recio_image_flip(const recio_image *in, recio_image *out); /* horizontal mirror, any type */
/* (The vertical mirror is the spec's `vflip` op: recio_transform_parse(&t, "vflip").) */
/* u8 HWC to w x h. */
RECIODEF recio_err recio_image_resize(const recio_image *in, recio_image *out, int w, int h, recio_filter f);
/* Shorter side to s, the other floor(long*s/short) (recio_transform_query of "resize_short(S)"
   gives that size without pixels). */
RECIODEF recio_err recio_image_resize_short(const recio_image *in, recio_image *out, int s, recio_filter f);
/* Affine warp, u8 HWC: out(x,y) = in(M * (x,y,1)), M maps output to input coordinates (2x3,
   row-major, pixel centres at integers), bilinear; out keeps its size (out->width/height, or in's
   size when out is unallocated). */
RECIODEF recio_err recio_image_affine(const recio_image *in, recio_image *out, const float m[6], recio_border b,
                                      float border_value);
/* Rotate counter-clockwise by deg about the centre, same size, corners filled with border_value. */
RECIODEF recio_err recio_image_rotate(const recio_image *in, recio_image *out, float deg, recio_border b,
                                      float border_value);
/* left, top, right and bottom pixels of value on each side (any dtype, HWC; torchvision's Pad with
   four numbers: n on every side is pad(in, out, n, n, n, n, value)). */
RECIODEF recio_err recio_image_pad(const recio_image *in, recio_image *out, int left, int top, int right, int bottom,
                                   float value);
/* The w x h rectangle at (x, y) set to value in every channel, the rest copied (torchvision's
   F.erase; any dtype and layout; the rectangle is clipped to the image). */
RECIODEF recio_err recio_image_erase(const recio_image *in, recio_image *out, int x, int y, int w, int h, float value);
/* Gaussian blur, u8 HWC, torchvision's F.gaussian_blur: an odd ksize, weights exp(-x^2 / (2 sigma^2))
   for x = -(ksize-1)/2 .. (ksize-1)/2 normalised to sum 1, along x then y, mirrored borders
   (dcb|abcd|cba), rounded to nearest. */
RECIODEF recio_err recio_image_gaussian_blur(const recio_image *in, recio_image *out, int ksize, float sigma);

/* COLOUR (MXNet mx.image math, g = 0.299 R + 0.587 G + 0.114 B; 3 or 4 channels, alpha untouched;
   brightness, contrast, saturation and gray also take 1 channel, where g is the pixel; u8 or f32,
   HWC or CHW; u8 results rounded and clamped). */
RECIODEF recio_err recio_image_brightness(const recio_image *in, recio_image *out, float f);
RECIODEF recio_err recio_image_contrast(const recio_image *in, recio_image *out, float f);
RECIODEF recio_err recio_image_saturation(const recio_image *in, recio_image *out, float f);
/* YIQ hue rotation by angle f*pi (MXNet HueJitterAug with alpha = f); f == 0 copies exactly. */
RECIODEF recio_err recio_image_hue(const recio_image *in, recio_image *out, float f);
/* Add eigvec * (alpha .* eigval) (AlexNet PCA lighting, MXNet LightingAug) for a given alpha[3]. */
RECIODEF recio_err recio_image_lighting(const recio_image *in, recio_image *out, const float alpha[3]);
RECIODEF recio_err recio_image_gray(const recio_image *in, recio_image *out); /* g in R, G and B */
/* Channels 0 and 2 swapped (RGB to BGR, the order of OpenCV- and Caffe-trained models); any dtype
   and layout; 1 channel is copied, alpha stays. */
RECIODEF recio_err recio_image_bgr(const recio_image *in, recio_image *out);

/* TYPES AND LAYOUT */
/* out = in * scale + offset, converted to out's dtype (rounded and saturated for u8/i8); out must be
   allocated or wrapped with the wanted dtype, or be unallocated with dtype `t` (then t is used). */
RECIODEF recio_err recio_image_convert(const recio_image *in, recio_image *out, recio_dtype t, float scale,
                                       float offset);
/* f32 out = (in - mean[c]) / std[c]; any input dtype, layout kept. */
RECIODEF recio_err recio_image_normalize(const recio_image *in, recio_image *out, const float mean[4],
                                         const float std[4]);
RECIODEF recio_err recio_image_to_chw(const recio_image *in, recio_image *out); /* any dtype */
#endif                                                                          /* RECIO_NO_IMAGE */

/* ==================================================================================================
   6. TRANSFORM
   ================================================================================================== */

/* A transform is a parsed chain of ops, immutable after parsing: one transform may be applied from
   many threads at once. Randomness comes only from the seed given to apply (the iterator passes
   recio_seed_for(seed, epoch, record id)), so a result never depends on threads or call order.

   SPEC GRAMMAR: ops separated by spaces, applied left to right; arguments in parentheses, separated
   by commas. Sizes are pixels, probabilities in [0, 1].
      resize(W,H) resize_short(S) center_crop(W[,H]) crop(X,Y,W,H) random_crop(W[,H])
      random_resized_crop(S[,smin,smax,rmin,rmax])  (defaults 0.08, 1, 3/4, 4/3; torchvision's algorithm)
      random_resized_crop(W,H[,smin,smax,rmin,rmax])  (W x H: a second argument above 1 is H)
      flip random_flip(P) vflip random_vflip(P) pad(N[,VALUE]) pad(LEFT,TOP,RIGHT,BOTTOM[,VALUE])
      rotate(DEG[,FILL]) random_rotate(DEG[,FILL]) random_shear_x(MAX[,FILL]) random_shear_y(MAX[,FILL])
      translate(DX,DY[,FILL]) translate_rel(FX,FY[,FILL])   (content moved right/down; u8)
      resize_long(S) letterbox(W,H[,VALUE]) random_expand(MAX[,VALUE])   (detection: see docs/image.md)
      random_bbox_crop([T[,SMIN,SMAX,RMIN,RMAX[,TRIALS]]]) random_bbox_cover(...)
                    (SSD's crop: IoU, or coverage, with some box at least T; -1 or no arguments =
                    SSD's choices; defaults 0.3, 1, 0.5, 2, 50; its draw reads the boxes: without
                    them the whole image is the one box; docs/image.md)
      brightness(F) contrast(F) saturation(F) hue(F) color_jitter(B,C,S[,H]) lighting(STD) gray
      float normalize(imagenet | M0,M1,M2,S0,S1,S2) chw f16 i8(SCALE[,ZERO])
      posterize(BITS) solarize(T) autocontrast equalize invert sharpness(F) shear_x(F[,FILL]) shear_y(F[,FILL])
                    (u8 only: PIL ImageOps / ImageEnhance semantics, AutoAugment's vocabulary)
      random_posterize(MIN,MAX) random_solarize(MIN,MAX) random_sharpness(MIN,MAX)  (argument drawn)
      gaussian_blur(K[,SMIN[,SMAX]]) (u8)  random_erasing([P,SMIN,SMAX,RMIN,RMAX,VALUE]) cutout(SIZE[,VALUE])
      bgr   (channels 0 and 2 swapped: BGR order for OpenCV/Caffe-trained models)
      random_apply(P, OPS...) random_choice(OPS...) random_subpolicy((OPS...),(OPS...),...)
      autoaugment(imagenet|cifar10|svhn)   (AutoAugment's policies, as torchvision's AutoAugmentPolicy)
      randaugment(N[,M])   (torchvision's RandAugment; `randaugment` alone: 2, 9)
      trivialaugment         (torchvision's TrivialAugmentWide)   identity
      area   (the next resize, resize_short or random_resized_crop uses the antialiased AREA filter)
      interp(nearest|linear|cubic|lanczos|area|auto[,antialias])   (the filter of the next resize: OpenCV's
             INTER_NEAREST/LINEAR/CUBIC/LANCZOS4/AREA, MXNet's auto; with antialias PIL's, as torchvision)
   Resizes use RECIO_LINEAR unless preceded by `area` or `interp`. Boxes and masks (recio_apply_desc)
   move with the ops of the lines above `brightness` and with shear_x/shear_y; the others leave them alone.
   FUSION: runs of crop / resize / flip / float / normalize / chw are computed in one pass (only the
   pixels that survive the crops are resampled) with exactly the numbers of the op-by-op chain. */
typedef struct recio_transform recio_transform;

#ifndef RECIO_NO_IMAGE
/* Parse options (zero = defaults). */
typedef struct recio_transform_desc {
    recio_allocator alloc; /* the transform, its runs and the decodes of recio_transform_apply_desc */
    char *errmsg;          /* optional out, RECIO_ERRMSG_SIZE bytes: "" or "spec:1:23: unknown op 'flipp' ..." */
} recio_transform_desc;

/* Parse. On error *t is NULL and recio_transform_parse_desc's errmsg says where and why
   ("spec:1:23: unknown op 'flipp' (did you mean 'flip'?)", line:column of the offending token). */
RECIODEF recio_err recio_transform_parse(recio_transform **t, const char *spec);
RECIODEF recio_err recio_transform_parse_desc(recio_transform **t, const char *spec, const recio_transform_desc *d);
RECIODEF void recio_transform_free(recio_transform *t);

/* Apply to one image. `out` follows the image ops' output convention: unallocated = allocated for
   you; wrapped over your buffer = written there (shape must match). Thread-safe on a const t. */
RECIODEF recio_err recio_transform_apply(const recio_transform *t, const recio_image *in, recio_image *out,
                                         uint64_t seed);

/* Everything else goes through one desc (zero-initialised fields mean defaults):

   INPUT: `image`, or `bytes`/`size` (an encoded JPEG, PNG, BMP as recio_image_decode,
   decoded to `channels` and the chain applied in one call). With RECIO_TURBOJPEG a JPEG is decoded
   only as far as the chain reads it: the chain's leading crops (crop, center_crop, random_crop,
   random_resized_crop) and first resize are worked out on the full-size header before decoding, then
   libjpeg-turbo decodes just the rows and columns that resize reads, at the strongest DCT scale (1/2,
   1/4, 1/8) that still leaves the cropped region at least as large as the resize's target. Random
   crops are drawn on the full-size image, so the crop is the same whatever the scale and the output
   shape is that of decode + apply. With full_scale set the output equals recio_image_decode +
   recio_transform_apply bit for bit; without RECIO_TURBOJPEG, or for other formats, this is exactly
   decode + apply. The decoded pixels are one allocation through the transform's allocator
   (libjpeg-turbo also allocates with malloc).

   SCRATCH: with `out` wrapped and `scratch` of recio_transform_query's scratch_size bytes, apply allocates
   nothing for the pixels (RECIO_ERR_SMALL "transform: scratch too small: need N bytes, have M" when
   it is smaller).

   BOXES AND MASKS (detection, segmentation) beside the image. The chain's geometric ops (crops,
   resizes, flips, pad, rotate, shear) move them exactly as they move the pixels, with the same random
   draws, so the image is the one recio_transform_apply gives for that seed (but random_bbox_crop and
   random_bbox_cover draw their crop from the boxes: without them the whole image is the box). A box
   becomes the axis-aligned bounding box of its moved corners (exact for crops, resizes, flips and
   pad), is clipped to the image after each op, and is dropped when its centre leaves the image
   (MXNet's default emit mode); the input's boxes are clipped and dropped by the same rule first, so a
   chain with no geometric op (identity, colour ops only) clips them too. Photometric ops leave boxes
   and mask alone. The mask (u8, 1 channel, HWC, the input's size: one label per pixel) is moved by
   nearest-neighbour sampling (a resize takes the source pixel under each output pixel's centre) and
   the areas the geometry uncovers get mask_fill. With encoded input the ops the planner ran before
   decoding are replayed on them at full size with the same draws, so they come out as with decode +
   apply whatever the window and DCT scale decoded. Boxes and mask take their working memory from
   the transform's allocator (not from scratch).

   ERRORS: RECIO_ERR_ARG for a bad desc (neither or both of in and bytes, boxes without boxes_out or
   count_out, stride < 5, a box that is not one (recio_boxes_check), a mask that is not u8 1-channel
   HWC of the input's size); RECIO_ERR_DECODE for a bad image; what the failing op said otherwise.
   errmsg receives "decode: why" or "transform: why" (the op and the sizes: "transform: crop
   300x300 at 0,0 does not fit a 200x100 image"). */
enum { RECIO_MASK_FILL_ZERO = -1 }; /* mask_fill for label 0 (0 itself means the default, 255) */
typedef struct recio_apply_desc {
    const recio_image *image; /* in: the image, or NULL with bytes */
    const void *bytes;        /* in: an encoded image instead of `image` */
    size_t size;              /* its bytes */
    int channels;             /* bytes: decode to 1, 3 or 4 channels; 0 = as stored */
    int full_scale;           /* bytes: 1 = never DCT-scale (windows only) */
    recio_image *out;         /* out, by the output convention above */
    uint64_t seed;            /* the draws (recio_seed_for(seed, epoch, id) in the iterator) */
    void *scratch;            /* optional: the pixels' working memory (above); NULL = allocate */
    size_t scratch_size;
    const float *boxes; /* optional in: count objects of `stride` floats: class, xmin, ymin, xmax,
                           ymax (normalised to the input: 0..1, x right, y down), then any extra
                           floats of the object, carried along unchanged */
    int count;
    int stride;              /* floats per object, >= 5; 0 = 5 */
    float *boxes_out;        /* out (with boxes): room for count objects; may be `boxes` itself. The kept
                                objects come first, in input order, normalised to the output */
    int *count_out;          /* out (with boxes): how many were kept */
    const recio_image *mask; /* optional in: u8, 1 channel, HWC, the input's width and height */
    recio_image *mask_out;   /* out (with mask): the output's size, by the output convention above */
    int mask_fill;           /* label of uncovered mask areas: 0 = 255 (the usual "ignore" label),
                                1..255 as given, RECIO_MASK_FILL_ZERO = 0 */
    char *errmsg;            /* optional out, RECIO_ERRMSG_SIZE bytes: "" or "decode: why" / "transform: why" */
} recio_apply_desc;
RECIODEF recio_err recio_transform_apply_desc(const recio_transform *t, const recio_apply_desc *d);

/* What the chain makes of an input of w x h x channels (u8 HWC), found by one walk of the chain
   with the same size functions the ops run with:
   - shape: the output's size, dtype and layout (data NULL), so batches can be preallocated; all
     zero when the shape depends on the seed or the input cannot take the chain (a crop larger than
     the image);
   - scratch_size: an upper bound of the scratch bytes, whatever the seed: the sum of what each op
     takes; after a policy whose branches differ in size, the largest of them is carried on; SIZE_MAX
     when that cannot be bounded within the image limits.
   RECIO_OK when the shape is one shape; RECIO_ERR_ARG when it is not (scratch_size is filled all the
   same) or t or info is NULL. */
typedef struct recio_transform_info {
    recio_image shape;
    size_t scratch_size;
} recio_transform_info;
RECIODEF recio_err recio_transform_query(const recio_transform *t, int w, int h, int channels,
                                         recio_transform_info *info);
/* Boxes that are not boxes: the first of count objects of stride floats (0 = 5; as
   recio_apply_desc.boxes) whose class or a coordinate is not a finite number (NaN; infinite, as a
   value too large for a float becomes) or that is inverted (xmin > xmax or ymin > ymax). RECIO_OK
   when there is none; else RECIO_ERR_ARG with *bad (may be NULL) its index and errmsg (NULL or
   RECIO_ERRMSG_SIZE bytes) what is wrong ("object 2: xmin is NaN"). The transform refuses such
   boxes (RECIO_ERR_ARG, its errmsg says which), the iterator a record that holds one when its spec
   moves them (desc.label_detection; skip_bad leaves it out and counts it), recio apply --boxes the
   line: never moved as if boxes. */
RECIODEF recio_err recio_boxes_check(const float *boxes, int count, int stride, int *bad, char *errmsg);
#endif /* RECIO_NO_IMAGE */

/* ==================================================================================================
   7. PREFETCHER (RECIO_THREADS)
   ================================================================================================== */

/* A fixed ring of `depth` reusable slots between producer threads and one consumer (sokol_fetch
   style: the ring and the threads are made at create, nothing is allocated after the slots have
   grown to their working size). Items are numbered 0, 1, 2 ... per epoch and reach the consumer in
   that order, whatever the number of producer threads:
     fetch(user, slot, worker)  runs for one item at a time, in item order (read the source here);
     work(user, slot, worker)   optional, runs for several items at once on `threads` threads
                                (decode here); worker < threads indexes per-thread scratch.
   A callback returns RECIO_OK; RECIO_END (fetch only: the epoch has no item slot->seq); or an
   error, after writing "FILE: offset N: what" into slot->errmsg. The consumer receives every item
   before the failing one, then the error with that message (it stays until a reset). begin(user,
   epoch, errmsg), optional, runs before the first fetch of every epoch, serialised with fetch.
   Callbacks run on the prefetcher's threads, never two fetch/begin at once. */
#ifdef RECIO_THREADS

typedef struct recio_prefetch recio_prefetch;

typedef struct recio_prefetch_slot {
    void *data;      /* slot_size bytes at create; recio_prefetch_slot_reserve grows it */
    size_t capacity; /* bytes at data */
    size_t size;     /* bytes the producer filled (free for the producer to use) */
    uint64_t seq;    /* item number in the epoch */
    uint64_t epoch;
    uint64_t tag;   /* free for the producer, e.g. the record's offset */
    unsigned index; /* 0 .. depth-1: lets the user keep side arrays per slot */
    char errmsg[RECIO_ERRMSG_SIZE];
} recio_prefetch_slot;

typedef recio_err (*recio_prefetch_fn)(void *user, recio_prefetch_slot *slot, unsigned worker);
typedef recio_err (*recio_prefetch_begin_fn)(void *user, uint64_t epoch, char *errmsg /* RECIO_ERRMSG_SIZE */);

typedef struct recio_prefetch_desc {
    recio_prefetch_fn fetch;       /* required */
    recio_prefetch_fn work;        /* optional */
    recio_prefetch_begin_fn begin; /* optional */
    void *user;
    unsigned depth;   /* slots in the ring (default 4) */
    unsigned threads; /* producer threads (default 1) */
    size_t slot_size; /* initial bytes per slot (default 0: grow on demand) */
    uint64_t epoch;   /* first epoch (default 0) */
    recio_allocator alloc;
    char *errmsg; /* optional, RECIO_ERRMSG_SIZE bytes: why create failed */
} recio_prefetch_desc;

/* Make the ring and start the threads; production of `desc->epoch` starts at once. */
RECIODEF recio_err recio_prefetch_create(recio_prefetch **p, const recio_prefetch_desc *desc);
/* Take the next item (blocks without spinning). RECIO_OK: *slot is yours until
   recio_prefetch_release; RECIO_END: the epoch is over; an error: recio_prefetch_errmsg says where.
   Holding every slot and asking for more is RECIO_ERR_ARG, not a hang. */
RECIODEF recio_err recio_prefetch_next(recio_prefetch *p, recio_prefetch_slot **slot);
/* Give a taken slot back for reuse (any order). */
RECIODEF void recio_prefetch_release(recio_prefetch *p, recio_prefetch_slot *slot);
/* Drop everything produced and not taken, clear a stored error and start `epoch` (item 0 again).
   Safe at any moment, also while producers are blocked or inside a callback: a callback already
   running finishes and its result is dropped. Slots the consumer holds stay valid until released. */
RECIODEF void recio_prefetch_reset(recio_prefetch *p, uint64_t epoch);
/* Producer side: make slot->data hold at least n bytes (keeps the first slot->size bytes). */
RECIODEF recio_err recio_prefetch_slot_reserve(recio_prefetch_slot *slot, size_t n);
RECIODEF const char *recio_prefetch_errmsg(const recio_prefetch *p); /* "" when no error */
/* Stop the threads (waits for running callbacks to return) and free everything. NULL is fine. */
RECIODEF void recio_prefetch_destroy(recio_prefetch *p);
#endif /* RECIO_THREADS */

/* ==================================================================================================
   8. ITERATOR
   ================================================================================================== */

/* ImageRecordIter in C. Records flow: source (the files, or part `rank` of `nsplit`) -> optional
   streaming shuffle buffer -> batches of `batch` records -> per record: image header, labels (its
   own or its path_imglist line's, padded or cut to label_width), the transform (a spec, or your
   callback) into one item of the batch tensor, then the mean image if any. With RECIO_THREADS and
   workers > 0, `workers` threads build batches in parallel behind a ring of `prefetch` batches;
   otherwise (workers == 0, or no RECIO_THREADS) everything runs on the caller's thread ("pull
   mode"). The batches are the same bytes either way: reading is serial and in order, and the random
   choices for a record depend only on recio_seed_for(seed, epoch, record key), where the key is the
   record's place in the dataset: (file index << 48) + byte offset of its header.
   Memory: prefetch x batch bytes, plus the raw records of the batches in flight and of the shuffle
   buffer, plus per-worker scratch; nothing grows with the dataset but the optional cache of decoded
   images, which stays within desc.cache_bytes. */
typedef enum recio_last_batch {
    RECIO_LAST_PAD = 0,      /* fill the last batch with the epoch's first records; batch.pad says how many */
    RECIO_LAST_DISCARD = 1,  /* drop an incomplete last batch */
    RECIO_LAST_ROLL_OVER = 2 /* an incomplete last batch opens the next epoch (after recio_iter_reset) */
} recio_last_batch;

/* Per-record work when no spec is given: write item_bytes bytes for record `rec` at out. Runs on the
   worker threads, several at once (so it must be thread-safe), or on the caller's thread in pull
   mode. seed = recio_seed_for(item.seed_aug or else source.seed, epoch, key). On failure write "what"
   into errmsg (RECIO_ERRMSG_SIZE bytes); the iterator prefixes "FILE: offset N: ". */
typedef recio_err (*recio_iter_record_fn)(void *user, const recio_irecord *rec, uint64_t seed, void *out,
                                          size_t item_bytes, unsigned worker, char *errmsg);

/* What each record becomes: a transform spec, or your function. */
typedef struct recio_iter_item_desc {
    const char *spec;               /* e.g. "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw";
                                       the output of the first record fixes the item's shape and dtype, so
                                       end the chain with a fixed size (crop, resize); recio_iter_set_spec
                                       changes it from the next epoch on */
    int channels;                   /* decode to 1, 3 or 4 channels (default 3; others refused at open) */
    recio_iter_record_fn transform; /* used when spec is NULL */
    void *user;                     /* passed to transform */
    size_t item_bytes;              /* bytes of one item in the batch tensor (required with transform) */
    /* Per-pixel mean image (MXNet's mean_img): a NumPy .npy file of float32, shaped as the item,
       (C,H,W) or (H,W,C) (`recio mean` makes one; any header NumPy writes: either byte order, C or
       Fortran order). It is the chain's last step: the item becomes
       (item - mean) x mean_scale, so end the spec with the crop and `float` (and `chw`), not normalize:
       MXNet too subtracts it after the crop and before scaling. Needs a spec whose output is f32. */
    const char *mean_img;
    float mean_scale;  /* with mean_img (MXNet's scale); 0: 1 */
    uint64_t seed_aug; /* of every record's random choices (MXNet's seed_aug); 0: source.seed */
} recio_iter_item_desc;

/* Labels: batch.labels has `width` floats per item. */
typedef struct recio_iter_label_desc {
    unsigned width; /* labels per item (default 1); for detection, MXNet's label_pad_width */
    int pad_set;    /* 1: pad_value fills the places of missing labels; 0 (default): they
                       are -1, as MXNet's label_pad_value (so pad with 0: set this and
                       leave pad_value 0) */
    float pad_value;
    int strict;          /* 1: a record with more labels than width is an error (MXNet's
                            ImageRecordIter); 0: they are cut, and batch.label_counts shows it */
    int detection;       /* 1: labels are MXNet's detection layout [A, B, A-2 header floats,
                            objects of B floats]: checked per record, cut at whole objects,
                            batch.objects counts each row's objects (ImageDetRecordIter). With
                            a spec the boxes move with the pixels (recio_apply_desc's
                            rules: clipped, dropped when the centre leaves the image) */
    int masks;           /* 1: every record carries a label mask (a segmentation record, recio
                            pack --mask-root), read by recio_decode_desc.mask's rule; the spec moves
                            it with the pixels (nearest neighbour, mask_fill where nothing
                            maps) into batch.masks */
    int mask_fill;       /* with masks: as recio_apply_desc.mask_fill (0: 255, "ignore") */
    const char *imglist; /* a .lst whose labels replace the records' (MXNet's path_imglist),
                            matched by image-header id = the .lst index; a record whose id has no
                            line is an error. im2rec's list, or a segmentation list with the mask
                            column (recio list --mask-root; the column is not used) */
} recio_iter_label_desc;

/* Batch-level mixing, as timm's Mixup in batch mode: each batch is mixed with itself reversed (item i
   with item batch-1-i) by one lam ~ Beta(alpha, alpha), drawn from recio_seed_for(item.seed_aug or
   source.seed, epoch, 2^63 + batch number); labels become soft (batch.soft_labels). Needs a spec; not
   with labels.detection or labels.masks. */
typedef struct recio_iter_mix_desc {
    float mixup_alpha;    /* > 0: MixUp (Zhang et al. 2018): x_i = lam x_i + (1 - lam) x_j (f32 items) */
    float cutmix_alpha;   /* > 0: CutMix (Yun et al. 2019): x_j's pixels in a box of about (1 - lam) of
                             the area replace x_i's; lam is then 1 - the box's exact share */
    float prob;           /* the chance a batch is mixed (0: 1); with both alphas, CutMix half the time */
    unsigned num_classes; /* with mixing (required): label 0 of each item is its class in
                             [0, num_classes); soft_labels[i] = lam onehot(c_i) + (1 - lam) onehot(c_j) */
} recio_iter_mix_desc;

/* How batches are made. */
typedef struct recio_iter_run_desc {
    unsigned batch; /* items per batch (default 1) */
    recio_last_batch last_batch;
    unsigned workers;      /* decode threads (RECIO_THREADS); 0: pull mode on the caller's thread.
                              Without RECIO_THREADS any value runs in pull mode (batch.workers
                              is then 0: the batches are the same, made on your thread) */
    unsigned prefetch;     /* batches in flight with workers (default workers + 1) */
    size_t shuffle_buffer; /* streaming shuffle through a buffer of this many records (0: off),
                              like DALI's initial_fill: cheap, no index needed */
    int checksums;         /* each worker checksums its items while they are still in cache
                              (recio_batch.sums, for recio_batch_checksum) */
    int skip_bad;          /* leave out records whose image does not decode instead of failing
                              (RECIO_ERR_DECODE, _FORMAT or _UNSUPPORTED from the decode or your
                              transform): the batch's sound items move up, in order, and the places
                              freed at its end become padding (batch.pad), copies of its first
                              sound item (zeros when it has none). See recio_iter_stats.
                              Default 0: such a record is an error, as every other failure is */
    size_t cache_bytes;    /* decoded-image cache, a memory budget (0, the default: off). With a spec,
                              each record's result up to the chain's first random op is kept the
                              first time it is made (the whole item when no op is random), never
                              evicted, until the budget is spent; later epochs start from it and
                              skip the decode. The batches are the same bytes with and without it.
                              Some chains cannot be cut: recio_iter_stats says so and why */
} recio_iter_run_desc;

/* The iterator's options, one sub-desc per concern; all zero means defaults. */
typedef struct recio_iter_desc {
    const char *uris;      /* "a.rec;b.rec" (required) */
    unsigned rank, nsplit; /* read part `rank` of `nsplit` (default: all, nsplit 1) */
    int rotate_shards;     /* epoch e reads part (rank + e) % nsplit (default: stick to `rank`) */
    /* How the files are split and read, as recio_split_open_desc takes it: mode (RECIO_SPLIT_INDEX:
       by record count with each file's .idx; index_path, shuffle and key_end imply it), index_path,
       shuffle and its chunks (MXNet's shuffle_chunk_size), equalize, use_mmap (0, the default: read
       through a buffer, what network filesystems need: DALI's dont_use_mmap), buffer_size, seed (of the
       shuffles, and of every record's random choices unless item.seed_aug), key_begin/key_end (the
       item shape then comes from the first record in the range), and fs (your filesystems, asked
       before the built-in ones: for the files, re-reading records, labels.imglist and item.mean_img).
       The iterator picks the epochs; its alloc and errmsg are the ones below: leave source.epoch,
       source.alloc and source.errmsg zero (an open refuses them, with words). */
    recio_split_desc source;
    recio_iter_item_desc item;
    recio_iter_label_desc labels;
    recio_iter_mix_desc mix;
    recio_iter_run_desc run;
    char *errmsg; /* optional, RECIO_ERRMSG_SIZE bytes: why the open failed ("" after success) */
    recio_allocator alloc;
} recio_iter_desc;

/* One batch; the pointers stay valid until the next call on the iterator. */
typedef struct recio_batch {
    void *data;           /* batch x item_bytes: `count` records, then `pad` padding items */
    const float *labels;  /* batch x label_width */
    const uint64_t *ids;  /* image-header id of each item */
    const uint64_t *keys; /* record key of each item (file index << 48 | offset) */
    const uint64_t *sums; /* recio_checksum of each item with desc.checksums, else NULL */
    unsigned count, pad;  /* real items; padding items after them (RECIO_LAST_PAD) */
    unsigned batch;       /* batch size */
    size_t item_bytes;
    recio_image item; /* with a spec: one item's width, height, channels, dtype, layout
                         (data NULL; items are packed); zero with a callback */
    unsigned label_width;
    uint64_t epoch, index;        /* epoch, and this batch's number in it */
    unsigned skipped;             /* records of this batch left out by desc.skip_bad */
    unsigned workers;             /* threads that built it: desc.workers, or 0 in pull mode (also when
                                     desc.workers > 0 but recio was built without RECIO_THREADS) */
    const unsigned *label_counts; /* labels each item's record (or .lst line) really has: more than
                                   label_width means they were cut, fewer that the rest is padding */
    const unsigned *objects;      /* desc.label_detection: the objects each item's label row holds (whole
                                     ones that fit label_width and, with a spec, that the chain kept; the
                                     record's own count is in label_counts); else NULL */
    const unsigned char *masks;   /* desc.masks: batch x item.height x item.width labels, item i's mask
                                     at i * height * width; else NULL */
    const float *soft_labels;     /* with mixing: batch x num_classes; else NULL */
    float lam;                    /* with mixing: this batch's lam (1: not mixed); else 1 */
    int mix;                      /* with mixing: 0 not mixed, 1 MixUp, 2 CutMix */
} recio_batch;

/* A record desc.run.skip_bad left out. */
#define RECIO_ITER_BAD_KEEP 16
typedef struct recio_iter_bad {
    const char *file;             /* as named in desc.uris */
    uint64_t offset;              /* of the record's first header */
    char what[RECIO_ERRMSG_SIZE]; /* why, e.g. "decode: unknown image type" */
} recio_iter_bad;

typedef struct recio_iter recio_iter;

/* Open an iterator at epoch 0 (threads start at once). On error *it is NULL and desc->errmsg (when
   set) says why, e.g. "spec:1:7: unknown op 'flipp'". A batch over RECIO_MAX_BATCH_BYTES is
   RECIO_ERR_LIMIT. */
RECIODEF recio_err recio_iter_open(recio_iter **it, const recio_iter_desc *desc);
/* Next batch: RECIO_OK, RECIO_END at the end of the epoch (again until recio_iter_reset), or an
   error, kept until the next reset, with "FILE: offset N: what" in recio_iter_errmsg. */
RECIODEF recio_err recio_iter_next(recio_iter *it, recio_batch *b);
/* Start the next epoch (at any moment; batches not taken are dropped). A spec given to
   recio_iter_set_spec takes effect here; if the new spec cannot run on the dataset's first record,
   the reset fails with words in recio_iter_errmsg, the old spec stays, and the iterator works on. */
RECIODEF recio_err recio_iter_reset(recio_iter *it);
/* A new transform spec (the item's shape may change: progressive resizing) from the next epoch on:
   the epoch under way keeps its shape, recio_iter_reset switches. The spec is parsed now: a bad one
   is refused (RECIO_ERR_PARSE, words in recio_iter_errmsg) and changes nothing. Needs an iterator
   opened with a spec; not with item.mean_img (shaped as the old item). At the switch the decoded-image
   cache is emptied and cut again for the new chain (its budget starts over), and the checkpoint
   fingerprint becomes that of an iterator opened with the new spec: a checkpoint holds the spec in
   force when it was saved (a pending one is not in it), so restore it into an iterator opened with
   that spec. The spec is copied; NULL cancels a pending one. */
RECIODEF recio_err recio_iter_set_spec(recio_iter *it, const char *spec);
/* Checkpoint: write the position (epoch, batches taken, roll-over records, a fingerprint of the
   options and side files, a check sum of it all) into buf. buf NULL: just *size. RECIO_ERR_SMALL when
   cap < *size. */
RECIODEF recio_err recio_iter_save(const recio_iter *it, void *buf, size_t cap, size_t *size);
/* Continue from a checkpoint made by an iterator with the same options: the following batches are
   exactly those the saved iterator would have given next. Re-reads (without decoding) the records of
   the current epoch before the saved position. A blob from other options or files is RECIO_ERR_ARG,
   a damaged one (any changed byte) RECIO_ERR_FORMAT, each with words in recio_iter_errmsg; the
   iterator is then left as it was. */
RECIODEF recio_err recio_iter_restore(recio_iter *it, const void *blob, size_t size);
RECIODEF const char *recio_iter_errmsg(const recio_iter *it); /* "" when no error */
/* The decoded-image cache (desc.run.cache_bytes): what it keeps. */
typedef enum recio_iter_cache_mode {
    RECIO_CACHE_OFF = 0,   /* cache_bytes 0, a transform callback, or a chain it cannot cut (see why) */
    RECIO_CACHE_ITEMS = 1, /* no op is random: each record's finished item is kept */
    RECIO_CACHE_PREFIX = 2 /* the output of the first prefix_ops ops, all before the first random op */
} recio_iter_cache_mode;
typedef struct recio_iter_cache_info {
    recio_iter_cache_mode mode;
    unsigned prefix_ops;         /* RECIO_CACHE_PREFIX: top-level ops whose output is kept */
    uint64_t records;            /* records kept */
    uint64_t bytes;              /* allocated for them and their table (never above cache_bytes) */
    uint64_t hits, misses;       /* items made from a kept record / without one */
    char why[RECIO_ERRMSG_SIZE]; /* RECIO_CACHE_OFF with cache_bytes set: why, e.g. "the chain starts
                                    with a random op (random_resized_crop): nothing before it to keep" */
} recio_iter_cache_info;
/* What an open iterator knows of its epoch, its items and what it has done so far. */
typedef struct recio_iter_info {
    uint64_t records;          /* records an epoch of this part reads (the part of the epoch under
                                  way with rotate_shards); RECIO_SPLIT_UNKNOWN in byte mode without
                                  equalize (the split does not count: recio_split_query) */
    uint64_t batches;          /* batches such an epoch gives: records / batch rounded up
                                  (RECIO_LAST_PAD) or down (DISCARD, ROLL_OVER, whose later epochs
                                  may give one more); RECIO_SPLIT_UNKNOWN when records is */
    recio_image item;          /* with a spec: the shape of the items of the epoch under way (data
                                  NULL), as batch.item; zero with a callback */
    size_t item_bytes;         /* bytes of one item */
    uint64_t skipped;          /* desc.run.skip_bad: records left out so far, over every epoch (a
                                  bad record counts once per epoch it is read in), counted as their
                                  batches are delivered: the same for every worker count */
    const recio_iter_bad *bad; /* the first RECIO_ITER_BAD_KEEP distinct ones, valid until close */
    unsigned nbad;
    recio_iter_cache_info cache; /* the decoded-image cache, how often it served */
} recio_iter_info;
/* Fill *info (all zero and "" for a NULL it). Safe while workers run: the counts are a snapshot. */
RECIODEF void recio_iter_stats(recio_iter *it, recio_iter_info *info);
RECIODEF void recio_iter_close(recio_iter *it);
/* What `recio iter` prints, to compare a pipeline across machines and worker counts.
   RECIO_SUM_BYTES: FNV-1a 64 of the batch tensor's bytes ((count + pad) x item_bytes), each element
   taken in little-endian order so every host gives the same number. Byte by byte: about as costly
   as decoding the batch.
   RECIO_SUM_ITEMS, the cheap one (`recio iter --checksum fast`): FNV-1a 64 over the recio_checksum
   of each of the count + pad items (each as 8 little-endian bytes); uses b->sums when the workers
   computed them while the items were in cache (desc.checksums), else reads the items. */
typedef enum recio_batch_sum { RECIO_SUM_BYTES = 0, RECIO_SUM_ITEMS = 1 } recio_batch_sum;
RECIODEF uint64_t recio_batch_checksum(const recio_batch *b, recio_batch_sum kind);

#ifdef __cplusplus
}
#endif
#endif /* RECIO_H_INCLUDED */

/* ##################################################################################################
   IMPLEMENTATION
   ################################################################################################## */
#if defined(RECIO_IMPLEMENTATION) && !defined(RECIO_IMPLEMENTATION_DONE)
#define RECIO_IMPLEMENTATION_DONE

#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <limits.h>
#ifndef RECIO_NO_STDIO
#include <stdio.h>
#endif

/* ---- platform: which OS services the implementation may call ----
   Each is a column of the local filesystem (CORE, "the local filesystem"); nothing else asks.
   RECIO__POSIX  (Unix, macOS; not under RECIO_NO_STDIO) file descriptors (open, read, write, lseek,
                 fstat, fsync, writev), stat, opendir, link and rename, mmap. Every call it makes is
                 declared by the system headers whatever the feature macros and the include order
                 (glibc and musl hide fileno, fseeko and posix_madvise in a strict -std=c99 file whose
                 first include is a system header: recio uses none of them, or asks for them by
                 their macros), so the build never quietly loses them.
   RECIO__WIN32  (Windows; not under RECIO_NO_STDIO) the CRT's stdio with 64-bit seeks, sizes from
                 _fstati64, _commit, MoveFileEx for the atomic replace, FindFirstFile for listings,
                 file mappings.
   RECIO__ISOFILE (any other hosted C library: newlib, a vendor's libc) ISO C stdio: the size from
                 fseek/ftell, rename and remove; no listing, no mapping.
   RECIO_NO_STDIO no local filesystem: nothing but the C library's string and math functions is
                 referenced then; paths go to the filesystems a desc gives (recio_fs).
   RECIO_THREADS uses Win32 threads (SRW locks, condition variables: Vista and later) on Windows,
   pthreads on Unix and macOS; any other target stops here, before any use. */
#if !defined(RECIO_NO_STDIO) && (defined(__unix__) || defined(__unix) || defined(__APPLE__)) && !defined(_WIN32)
#define RECIO__POSIX 1
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>
#include <dirent.h>
#elif !defined(RECIO_NO_STDIO) && defined(_WIN32)
#define RECIO__WIN32 1
#include <sys/types.h>
#include <sys/stat.h>
#include <io.h>
#elif !defined(RECIO_NO_STDIO)
#define RECIO__ISOFILE 1
#endif

#ifdef RECIO_THREADS
#if defined(_WIN32) && !defined(RECIO_HAVE_PTHREADS)
#define RECIO__WINTHREADS 1
#include <process.h>
#elif defined(__unix__) || defined(__unix) || defined(__APPLE__) || defined(RECIO_HAVE_PTHREADS)
#define RECIO__PTHREADS 1
#include <pthread.h>
#else
/* This target has neither thread API: without RECIO_THREADS the iterator runs on the calling thread. */
#error "recio: RECIO_THREADS needs POSIX or Win32 threads: build without it, or define RECIO_HAVE_PTHREADS"
#undef RECIO_THREADS /* the message above is the only one: nothing below asks for threads */
#endif
#endif

#if defined(RECIO__WIN32) || defined(RECIO__WINTHREADS)
#ifndef WIN32_LEAN_AND_MEAN /* only what recio uses; the user's own include of windows.h is not changed */
#define WIN32_LEAN_AND_MEAN
#define RECIO__LEAN_DEFINED
#endif
#ifndef NOMINMAX
#define NOMINMAX
#define RECIO__NOMINMAX_DEFINED
#endif
#include <windows.h>
#ifdef RECIO__LEAN_DEFINED
#undef WIN32_LEAN_AND_MEAN
#undef RECIO__LEAN_DEFINED
#endif
#ifdef RECIO__NOMINMAX_DEFINED
#undef NOMINMAX
#undef RECIO__NOMINMAX_DEFINED
#endif
#if defined(RECIO__WINTHREADS) && defined(_WIN32_WINNT) && _WIN32_WINNT < 0x0600
#error "recio: RECIO_THREADS on Windows needs _WIN32_WINNT 0x0600 (Vista) or later: SRW locks and condition variables"
#endif
#endif

#if defined(RECIO_MALLOC) && defined(RECIO_FREE) && defined(RECIO_REALLOC)
#elif !defined(RECIO_MALLOC) && !defined(RECIO_FREE) && !defined(RECIO_REALLOC)
#define RECIO_MALLOC(sz, u) ((void)(u), malloc(sz))
#define RECIO_REALLOC(p, sz, u) ((void)(u), realloc(p, sz))
#define RECIO_FREE(p, u) ((void)(u), free(p))
#else
#error "recio: define all of RECIO_MALLOC, RECIO_REALLOC and RECIO_FREE, or none"
#endif

#ifndef RECIO_ASSERT
#include <assert.h>
#define RECIO_ASSERT(x) assert(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 1. CORE: implementation ------------------------------------------------------------------- */

#define RECIO__DEFAULT_BUFFER (1u << 20)
/* One copy of a small function that gcc -Os would otherwise copy into each caller (measured on a
   Cortex-M4 build: the FNV hash, 7 copies, 166 bytes; the iterator's restart, 2 copies, 24 bytes). */
#if defined(__GNUC__) || defined(__clang__)
#define RECIO__NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define RECIO__NOINLINE __declspec(noinline)
#else
#define RECIO__NOINLINE
#endif
#ifndef RECIO_MAX_BATCH_BYTES
#define RECIO_MAX_BATCH_BYTES ((uint64_t)1 << 31) /* an iterator's batch, all its arrays (see CONFIGURATION) */
#endif

RECIODEF const char *recio_strerror(recio_err e) {
    switch (e) {
    case RECIO_OK: return "ok";
    case RECIO_END: return "end of records";
    case RECIO_ERR_ARG: return "invalid argument";
    case RECIO_ERR_NOMEM: return "out of memory";
    case RECIO_ERR_IO: return "I/O error";
    case RECIO_ERR_CORRUPT: return "corrupt RecordIO data";
    case RECIO_ERR_TOO_BIG: return "record too big (2^29 bytes or more)";
    case RECIO_ERR_FORMAT: return "malformed file";
    case RECIO_ERR_DECODE: return "image cannot be decoded";
    case RECIO_ERR_SPEC: return "bad transform spec";
    case RECIO_ERR_UNSUPPORTED: return "not supported in this build";
    case RECIO_ERR_LIMIT: return "over a limit";
    case RECIO_ERR_SMALL: return "buffer too small";
    }
    return "unknown error";
}

static void *recio__malloc(const recio_allocator *a, size_t n) {
    if (n == 0) n = 1;
    if (a && a->alloc) return a->alloc(n, a->user);
    return RECIO_MALLOC(n, a ? a->user : NULL);
}

static void recio__free(const recio_allocator *a, void *p) {
    if (!p) return;
    if (a && a->alloc) {
        if (a->free) a->free(p, a->user);
        return;
    }
    RECIO_FREE(p, a ? a->user : NULL);
}

/* A custom allocator has no realloc, so it gets alloc + copy + free; old is the used size. */
static void *recio__realloc(const recio_allocator *a, void *p, size_t old, size_t n) {
    void *q;
    if (!(a && a->alloc)) return RECIO_REALLOC(p, n ? n : 1, a ? a->user : NULL);
    q = recio__malloc(a, n);
    if (q && p) memcpy(q, p, old < n ? old : n);
    if (q) recio__free(a, p);
    return q;
}

#ifdef RECIO_THREADS
/* ---- threads: the few calls recio makes, on pthreads or Win32 ---- */
typedef struct recio__thread {
    void (*fn)(void *);
    void *arg;
#ifdef RECIO__WINTHREADS
    HANDLE h;
#else
    pthread_t h;
#endif
} recio__thread;

#ifdef RECIO__WINTHREADS
typedef SRWLOCK recio__mutex;
typedef CONDITION_VARIABLE recio__cond;
static int recio__mutex_init(recio__mutex *m) {
    InitializeSRWLock(m);
    return 0;
}
static void recio__mutex_destroy(recio__mutex *m) { (void)m; }
static void recio__mutex_lock(recio__mutex *m) { AcquireSRWLockExclusive(m); }
static void recio__mutex_unlock(recio__mutex *m) { ReleaseSRWLockExclusive(m); }
static int recio__cond_init(recio__cond *c) {
    InitializeConditionVariable(c);
    return 0;
}
static void recio__cond_destroy(recio__cond *c) { (void)c; }
static void recio__cond_wait(recio__cond *c, recio__mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void recio__cond_broadcast(recio__cond *c) { WakeAllConditionVariable(c); }
static unsigned __stdcall recio__thread_main(void *p) {
    recio__thread *t = (recio__thread *)p;
    t->fn(t->arg);
    return 0;
}
/* t must stay where it is until recio__thread_join. */
static int recio__thread_start(recio__thread *t, void (*fn)(void *), void *arg) {
    t->fn = fn;
    t->arg = arg;
    t->h = (HANDLE)_beginthreadex(NULL, 0, recio__thread_main, t, 0, NULL);
    return t->h ? 0 : -1;
}
static void recio__thread_join(recio__thread *t) {
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
}
#else
typedef pthread_mutex_t recio__mutex;
typedef pthread_cond_t recio__cond;
static int recio__mutex_init(recio__mutex *m) { return pthread_mutex_init(m, NULL) ? -1 : 0; }
static void recio__mutex_destroy(recio__mutex *m) { pthread_mutex_destroy(m); }
static void recio__mutex_lock(recio__mutex *m) { pthread_mutex_lock(m); }
static void recio__mutex_unlock(recio__mutex *m) { pthread_mutex_unlock(m); }
static int recio__cond_init(recio__cond *c) { return pthread_cond_init(c, NULL) ? -1 : 0; }
static void recio__cond_destroy(recio__cond *c) { pthread_cond_destroy(c); }
static void recio__cond_wait(recio__cond *c, recio__mutex *m) { pthread_cond_wait(c, m); }
static void recio__cond_broadcast(recio__cond *c) { pthread_cond_broadcast(c); }
static void *recio__thread_main(void *p) {
    recio__thread *t = (recio__thread *)p;
    t->fn(t->arg);
    return NULL;
}
static int recio__thread_start(recio__thread *t, void (*fn)(void *), void *arg) {
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->h, NULL, recio__thread_main, t) ? -1 : 0;
}
static void recio__thread_join(recio__thread *t) { pthread_join(t->h, NULL); }
#endif
#endif /* RECIO_THREADS */

/* s, t and u joined, allocated; NULL when out of memory. */
static char *recio__cat(const recio_allocator *a, const char *s, const char *t, const char *u) {
    size_t n = strlen(s), m = strlen(t), k = strlen(u);
    char *d = (char *)recio__malloc(a, n + m + k + 1);
    if (d) {
        memcpy(d, s, n);
        memcpy(d + n, t, m);
        memcpy(d + n + m, u, k + 1);
    }
    return d;
}

static char *recio__strdup(const recio_allocator *a, const char *s) { return recio__cat(a, s, "", ""); }

/* Own tiny formatter, so messages need no stdio: %s %d %u %x and %U (uint64_t). */
/* An argument of the formatter: a string for %s, a number for the others (%d's as int64_t). Taking
   them as an array lets the record reader, whose messages hold only numbers, report with no
   variadic call (docs/footprint.md). */
typedef union recio__arg {
    uint64_t u;
    const char *s;
} recio__arg;
#define RECIO__FMT_ARGS 8 /* the most conversions one format may hold (recio's longest has 6) */

static int recio__fmt_conv(char c) { return c == 's' || c == 'd' || c == 'u' || c == 'x' || c == 'U'; }

/* Formats f, then g when not NULL, into d (cap > 0), cut to fit with a terminator: %s %d %u %x %U
   take args[0], args[1]... in turn (past the n given they print nothing); '%' before any other
   char prints that char. The two formats let a handle message put its "NAME: offset N: " before
   what went wrong in the same call (recio__errf, recio__rd_fail).
   One loop and one store for every character, whether it comes from a format, a string argument
   or a number: the record reader links this function alone for its messages (docs/footprint.md).
   Numbers take no 64-bit division: on a 32-bit target it would bring libgcc's (about 700 bytes)
   into every program that can report an error. Their digits come from subtracting powers of the
   base, kept on the way up, most significant first. */
static void recio__fmt_args(char *d, size_t cap, const char *f, const char *g, const recio__arg *args, size_t n) {
    const char *s = NULL; /* the rest of a string argument, or of a '-' sign before digits */
    uint64_t v = 0, pw[20];
    int e = -1; /* digits left of v: pw[e] is the next one's weight */
    size_t at = 0, k = 0;
    char c;
    for (;;) {
        if (s && *s) {
            c = *s++;
        } else if (e >= 0) {
            for (c = 0; v >= pw[e]; c++) v -= pw[e];
            c = "0123456789abcdef"[(unsigned char)c];
            e--;
        } else if ((c = *f++) == 0) {
            if (!g) break;
            f = g, g = NULL;
            continue;
        } else if (c == '%' && *f) {
            c = *f++;
            if (recio__fmt_conv(c)) {
                if (k < n && c == 's') {
                    s = args[k].s ? args[k].s : "(null)";
                } else if (k < n) {
                    unsigned base = c == 'x' ? 16 : 10, top = c == 'x' ? 15 : 19; /* base^(top+1) > 2^64 */
                    v = args[k].u;
                    if (c == 'd' && (int64_t)v < 0) s = "-", v = 0 - v;
                    for (pw[0] = 1, e = 0; (unsigned)e < top && pw[e] * base <= v; e++) pw[e + 1] = pw[e] * base;
                }
                k++;
                continue;
            }
        }
        if (at + 1 < cap) d[at] = c;
        at++;
    }
    d[at < cap ? at : cap - 1] = 0;
}

/* Takes from ap the arguments f's conversions name, as recio__fmt_args reads them; returns how many. */
static size_t recio__va_args(const char *f, va_list ap, recio__arg *args) {
    size_t n = 0;
    for (; *f && n < RECIO__FMT_ARGS; f++) {
        if (*f != '%' || !f[1]) continue;
        switch (*++f) {
        case 's': args[n++].s = va_arg(ap, const char *); break;
        case 'd': args[n++].u = (uint64_t)(int64_t)va_arg(ap, int); break;
        case 'u':
        case 'x': args[n++].u = va_arg(ap, unsigned); break;
        case 'U': args[n++].u = va_arg(ap, uint64_t); break;
        }
    }
    return n;
}

static void recio__vfmt(char *d, size_t cap, const char *f, va_list ap) {
    recio__arg args[RECIO__FMT_ARGS];
    size_t n;
    if (!cap) return;
    n = recio__va_args(f, ap, args);
    recio__fmt_args(d, cap, f, NULL, args, n);
}

static void recio__fmt(char *d, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    recio__vfmt(d, cap, f, ap);
    va_end(ap);
}

/* Every handle message reads "NAME: offset N: what" so the user can go straight to the bytes:
   recio__fmt_args with this first format and args[0] = NAME, args[1] = N. */
#define RECIO__AT_OFFSET "%s: offset %U: "

static void recio__verrf(char *msg, const char *name, uint64_t offset, const char *f, va_list ap) {
    recio__arg args[2 + RECIO__FMT_ARGS];
    if (!msg) return; /* an optional desc.errmsg left NULL */
    args[0].s = name ? name : "?";
    args[1].u = offset;
    recio__fmt_args(msg, RECIO_ERRMSG_SIZE, RECIO__AT_OFFSET, f, args, 2 + recio__va_args(f, ap, args + 2));
    recio_redact(msg); /* no URL's password or signature in any message */
}

static void recio__errf(char *msg, const char *name, uint64_t offset, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    recio__verrf(msg, name, offset, f, ap);
    va_end(ap);
}

#ifndef RECIO_NO_STDIO
static const char *recio__errno_str(int e) { return e ? strerror(e) : "unknown system error"; }
#else
static const char *recio__errno_str(int e) { return (void)e, "system error"; }
#endif

/* Why io's last call failed: its own words when it has them (a remote io's), else errno's. */
static const char *recio__io_why(const recio_io *io) {
    const char *w = io->error ? io->error(io->user) : NULL;
    return w && w[0] ? w : recio__errno_str(errno);
}

/* A failed open's words into dst (RECIO_ERRMSG_SIZE bytes, may be NULL): the handle's own message
   when it made one, else "NAME: offset 0: <the code's words>". */
static void recio__open_msg(char *dst, const char *name, const char *have, recio_err e) {
    if (!dst) return;
    if (e == RECIO_OK) dst[0] = 0;
    else if (have && have[0]) recio__fmt(dst, RECIO_ERRMSG_SIZE, "%s", have);
    else recio__errf(dst, name, 0, "%s", recio_strerror(e));
}

RECIODEF uint32_t recio_load_u32le(const void *p) {
    const unsigned char *b = (const unsigned char *)p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

RECIODEF uint64_t recio_load_u64le(const void *p) {
    const unsigned char *b = (const unsigned char *)p;
    return (uint64_t)recio_load_u32le(b) | (uint64_t)recio_load_u32le(b + 4) << 32;
}

RECIODEF float recio_load_f32le(const void *p) {
    uint32_t u = recio_load_u32le(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

RECIODEF void recio_store_u32le(void *p, uint32_t v) {
    unsigned char *b = (unsigned char *)p;
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
    b[2] = (unsigned char)(v >> 16);
    b[3] = (unsigned char)(v >> 24);
}

RECIODEF void recio_store_u64le(void *p, uint64_t v) {
    recio_store_u32le(p, (uint32_t)v);
    recio_store_u32le((unsigned char *)p + 4, (uint32_t)(v >> 32));
}

RECIODEF void recio_store_f32le(void *p, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    recio_store_u32le(p, u);
}

static uint64_t recio__hash64(uint64_t z) { /* splitmix64's finaliser */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The label a mask_fill setting means (recio_apply_desc, recio_iter_desc): 0 = 255, the usual
   "ignore" label; RECIO_MASK_FILL_ZERO = 0. */
static unsigned char recio__mask_fill_value(int fill) {
    return (unsigned char)(fill < 0 ? 0 : fill ? fill : 255); /* < 0: RECIO_MASK_FILL_ZERO */
}

RECIODEF uint64_t recio_seed_for(uint64_t seed, uint64_t epoch, uint64_t index) {
    uint64_t h = recio__hash64(seed + 0x9e3779b97f4a7c15ULL);
    h = recio__hash64(h ^ (epoch + 0x632be59bd9b4e019ULL));
    return recio__hash64(h ^ (index + 0x85157af5b7a2d2c7ULL));
}

RECIODEF uint64_t recio_rng_next(recio_rng *r) {
    r->state += 0x9e3779b97f4a7c15ULL;
    return recio__hash64(r->state);
}

RECIODEF uint64_t recio_rng_below(recio_rng *r, uint64_t n) {
    uint64_t x, lim;
    if (n <= 1) return 0;
    lim = UINT64_MAX - UINT64_MAX % n; /* reject the short top stripe: no modulo bias */
    do x = recio_rng_next(r);
    while (x >= lim);
    return x % n;
}

RECIODEF double recio_rng_uniform(recio_rng *r) {
    return (double)(recio_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

RECIO__NOINLINE RECIODEF uint64_t recio_fnv1a64(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

RECIODEF void recio_buffer_free(recio_buffer *b) {
    if (!b) return;
    recio__free(&b->alloc, b->data);
    b->data = NULL;
    b->size = b->capacity = 0;
}

static int recio__buffer_reserve(recio_buffer *b, size_t extra) {
    size_t need = b->size + extra, cap = b->capacity ? b->capacity : 4096;
    unsigned char *p;
    if (need < b->size) return -1;
    if (need <= b->capacity) return 0;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    p = (unsigned char *)recio__realloc(&b->alloc, b->data, b->size, cap);
    if (!p) return -1;
    b->data = p;
    b->capacity = cap;
    return 0;
}

static int recio__mem_write(void *user, const void *buf, size_t n) {
    recio_buffer *b = (recio_buffer *)user;
    if (recio__buffer_reserve(b, n)) return -1;
    if (n) memcpy(b->data + b->size, buf, n);
    b->size += n;
    return 0;
}

/* ---- filesystems: the scheme of a path ---- */

static int recio__lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* 1 when p starts with "SCHEME://" (scheme lower case), ignoring case. */
static int recio__scheme_is(const char *p, const char *scheme) {
    size_t i;
    for (i = 0; scheme[i]; i++)
        if (recio__lower(p[i]) != scheme[i]) return 0;
    return strncmp(p + i, "://", 3) == 0;
}

static void recio__cut(char *from, const char *to) { memmove(from, to, strlen(to) + 1); }

/* One URL at p (just past "://" is host): its user:password@ and ?query#fragment cut; where it ends. */
static char *recio__redact_one(char *host) {
    char *end = host + strcspn(host, "/?# \t\n"), *at = NULL, *q, *stop;
    for (q = host; q < end; q++)
        if (*q == '@') at = q;
    if (at) recio__cut(host, at + 1), end -= at + 1 - host;
    q = end + strcspn(end, "?# \t\n");
    if (*q != '?' && *q != '#') return q;
    stop = q + strcspn(q, " \t\n");
    if (stop > q + 1 && stop[-1] == ':') stop--;
    recio__cut(q, stop);
    return q;
}

RECIODEF void recio_redact(char *text) {
    char *p = text;
    if (!p) return;
    while (*p) {
        if (recio__scheme_is(p, "http")) p = recio__redact_one(p + 7);
        else if (recio__scheme_is(p, "https")) p = recio__redact_one(p + 8);
        else p++;
    }
}

#ifndef RECIO_NO_STDIO
/* "file://PATH" is PATH. */
static const char *recio__lfs_path(const char *p) { return recio__scheme_is(p, "file") ? p + 7 : p; }

/* errno's words as the reason of a failed hook. */
static recio_err recio__lfs_why(char *why, recio_err e) {
    recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", recio__errno_str(errno));
    return e;
}
#endif

/* ---- REMOTE: s3:// and http(s):// through libcurl (RECIO_CURL) --------------------------------------
   A remote file is a session (a curl multi handle: its connections are kept and reused) and a few
   transfers. An open asks for its first two ranges at once (a split that reads in order: all
   RECIO__RM_DEPTH); reading keeps ranged GETs in flight ahead of the reader, each twice the last (four
   times in such a split) up to RECIO__RM_CHUNK (the last takes the rest of the file when less than
   twice it would be left), as many as cover twice the bytes it takes in a round trip, so a worker
   rarely waits for one; after a seek, one range, and more as the reader reads on in order; a split
   that reads one file's part epoch after epoch has the next epoch's first ranges asked before an
   epoch ends (recio__rm_wrap), so its reset waits no round trip. From a near server, a range holds
   at most RECIO__RM_HOLD bytes in memory: past that it pauses, the rest waiting in its socket; a far
   one's ranges are held whole (recio__rm_hold). The bytes the reader waits for go straight into its
   buffer.
   Every range carries the ETag of the first answer in If-Match and its answer's ETag is checked too
   (a server that ignores If-Match is caught): an object replaced while it is read is an error, never
   a mix of two versions. Failures that may pass (5xx, 429, 408, a reset or timed-out connection, a
   short body) are retried up to RECIO__RM_TRIES times with exponential backoff and jitter
   (Retry-After honoured), resuming a short body where it stopped. Writing to S3 is a multipart
   upload whose parts go up while the writer fills the next; the object appears only when it
   completes, and any failure aborts it. Messages name the URI (with no user:password@ or ?query of
   an http URL: a presigned URL's signature stays out) and the status; no secret or signature is
   ever in one. */
#if defined(RECIO_CURL) && !defined(RECIO_NO_STDIO) /* no files at all: no remote ones either */
#include <curl/curl.h>
#if LIBCURL_VERSION_NUM < 0x074b00
#error "RECIO_CURL needs libcurl 7.75 or later (CURLOPT_AWS_SIGV4 signs the S3 requests)"
#endif
/* Milliseconds for backoff waits (a wall clock: a jump only moves one retry, see recio__rm_pump): the
   remote column's one OS call outside libcurl, a column per OS. */
#ifdef _WIN32
#include <windows.h>
static double recio__rm_now(void) { return (double)GetTickCount64(); }
#else
#include <sys/time.h> /* gettimeofday: declared whatever the feature macros (clock_gettime is not) */
static double recio__rm_now(void) {
    struct timeval t;
    gettimeofday(&t, NULL);
    return (double)t.tv_sec * 1e3 + (double)t.tv_usec / 1e3;
}
#endif

#define RECIO__RM_TRIES 5            /* tries of one request before its error is the caller's */
#define RECIO__RM_DEPTH 4            /* ranged GETs in flight ahead of the reader */
#define RECIO__RM_FIRST (256u << 10) /* an open's first range (and the most a seek's first asks) */
#define RECIO__RM_CHUNK (8u << 20)   /* the largest range */
/* The most of a range held in memory (at least CURLOPT_BUFFERSIZE + RECIO__RM_TAIL): the rest waits in
   the socket, paused, until the reader asks, and then goes straight into the reader's buffer. */
#define RECIO__RM_HOLD ((256u << 10) + 2 * RECIO__RM_TAIL)
/* Answers this slow (ms) mean a far server: there ranges are held whole (recio__rm_hold). */
#define RECIO__RM_FAR 10.0
/* Bytes before the reader's position kept: the split's scan for a record overlaps its windows by 4,
   and each step back was a new range. */
#define RECIO__RM_TAIL 4096u
#define RECIO__RM_PART (8u << 20) /* a multipart upload's first parts (S3's least is 5 MiB) */
/* Parts double in size every RECIO__RM_TIER parts (recio__rm_part_size). */
#ifndef RECIO__RM_TIER
#define RECIO__RM_TIER 1000u
#endif
#define RECIO__RM_URL 3072
#define RECIO__RM_TAG 160 /* an ETag, quotes included */

typedef struct recio__rm_cfg {
    int s3;                                 /* s3://BUCKET/KEY, else an http(s) URL */
    char id[256], secret[256], token[4096]; /* S3 credentials; id "" = anonymous */
    char region[64], endpoint[1024], bucket[256];
    char name[1024];       /* the URI as messages show it */
    char ca[1024];         /* a CA bundle to trust instead of the system's, or "" */
    const char *uri, *key; /* uri: own; key: into it, after "s3://BUCKET/" */
    /* The URI, copied: a writer builds its part and commit URLs from it long after the open, whose
       caller's string (a Python temporary, a stack buffer) may be gone by then. */
    char own[RECIO__RM_URL / 2];
} recio__rm_cfg;

enum { RECIO__RM_IDLE, RECIO__RM_RUN, RECIO__RM_WAIT, RECIO__RM_DONE, RECIO__RM_FAILED };

struct recio__rm_sess;
typedef struct recio__rm_xfer {
    struct recio__rm_sess *s;
    CURL *h;
    struct curl_slist *hdrs;
    char url[RECIO__RM_URL], range[48], iferr[CURL_ERROR_SIZE];
    const char *method;        /* "GET", "HEAD", "PUT", "POST", "DELETE" */
    const char *if_match;      /* ETag the object must still have, or NULL */
    char *adopt;               /* the open's range: where the first answer's ETag goes */
    uint64_t off, len;         /* GET: the range asked; len 0: the whole body */
    const unsigned char *body; /* PUT / POST: body_len bytes */
    size_t body_len, body_pos;
    unsigned char *buf; /* the answer's body: cap bytes, or growing when grow */
    size_t cap, got;
    int grow, state, tries, part, overflow;
    int if_none_match;  /* PUT / POST: "If-None-Match: *" (RECIO_FS_NEW) */
    unsigned char *dst; /* GET: the reader's buffer while it waits for the bytes at
                           off + got: they go there, not through buf (one copy) */
    size_t dst_cap, dst_got;
    uint64_t skip;   /* buf[0..) holds bytes [skip, got) of the range (or of the body: skip 0) */
    uint64_t used;   /* GET: bytes of the range the reader has taken: all but their last RECIO__RM_TAIL may go */
    int paused;      /* GET: its buffer was full; what came stays in curl and the socket till the reader asks */
    int drain;       /* a guessed range past the end: its short answer (416) ends, the connection is kept */
    int wrap;        /* GET: a range of the reader's next pass (recio__rm_wrap) */
    double at;       /* WAIT: when to try again (ms, monotonic) */
    double t0, wait; /* when this try started; ms from then to its answer's status line (-1: none yet) */
    CURLcode rc;
    long status, retry_after;
    uint64_t total, first;              /* Content-Range's size and first byte, UINT64_MAX when absent */
    uint64_t want_total;                /* GET: the object's size as the open saw it */
    uint64_t from;                      /* GET: the first byte this try asks for */
    char etag[RECIO__RM_TAG], err[512]; /* the answer's ETag; the first bytes of an error body */
    size_t err_len;
} recio__rm_xfer;

/* A split's connections, kept from one open to the next. Without it every open of a remote file
   starts its own libcurl multi handle, and so new connections (and, over HTTPS, full TLS
   handshakes) for each file and each HEAD; a split opens one file after another. A pool belongs to
   one split (no global state: the split's lifetime is the pool's): an open takes an idle multi
   handle, whose connection cache still holds the connections the last file left open, and gives it
   back at close; the share handle keeps DNS answers and TLS sessions for all of them, so a new
   connection resumes a TLS session instead of a full handshake. */
#define RECIO__RM_POOL 4     /* idle multi handles kept: a split has a few files open at once at most */
#define RECIO__RM_SIZES 4096 /* file sizes a pool remembers */
typedef struct recio__rm_pool {
    recio_allocator alloc;
    CURLSH *sh; /* made at the first open; NULL when libcurl cannot make one */
    CURLM *idle[RECIO__RM_POOL];
    int n, shared;                       /* shared: sh was tried */
    unsigned char *buf[RECIO__RM_DEPTH]; /* range buffers a closed file left (their pages mapped) */
    int seq; /* its owner reads files in order from their start (a split that does not shuffle) */
    /* Where its owner starts again at the end of each pass (recio__rm_wrap): bytes [wrap_from,
       wrap_to) of the file named wrap (recio__rm_cfg.name), read again and again (a split's part in
       one file, from its second epoch on); wrap "": no such pass. */
    char wrap[1024];
    uint64_t wrap_from, wrap_to;
    /* The sizes its stats saw (a ring of RECIO__RM_SIZES: URI hash, size): an open asks no range past
       a file's end (416s on every small file, their connections closed when cancelled). A hint only:
       every answer is checked against the first. */
    uint64_t (*sizes)[2];
    unsigned nsizes, at;
    size_t cap[RECIO__RM_DEPTH];
    int nbuf;
#ifdef RECIO_THREADS                      /* the split's files may be opened and closed on worker threads */
    recio__mutex mu;                      /* idle, n, sh */
    recio__mutex lk[CURL_LOCK_DATA_LAST]; /* the share's data, a lock per kind (libcurl may hold two) */
#endif
} recio__rm_pool;

typedef struct recio__rm_sess {
    recio__rm_cfg cfg;
    recio_allocator alloc;
    recio__rm_pool *pool; /* where m came from and goes back to, or NULL: m is own */
    CURLM *m;
    recio_rng rng;               /* backoff jitter */
    char why[RECIO_ERRMSG_SIZE]; /* the last failure, without the URI */
} recio__rm_sess;

/* a and b agree on n bytes, ignoring ASCII case (b may be shorter: its 0 ends the match). */
static int recio__rm_ieq(const char *a, const char *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        if (recio__lower((unsigned char)a[i]) != recio__lower((unsigned char)b[i])) return 0;
    return 1;
}

static int recio__rm_put(char *dst, size_t cap, const char *src, size_t n) {
    if (n >= cap) return -1;
    memcpy(dst, src, n);
    dst[n] = 0;
    return 0;
}

static const char *recio__rm_env(const char *name) {
    const char *v = getenv(name);
    return v && v[0] ? v : NULL;
}

/* RFC 3986: every byte but A-Z a-z 0-9 - . _ ~ (and '/' when keep_slash) as %XX, as SigV4 wants it. */
static int recio__rm_enc(char *out, size_t cap, const char *s, int keep_slash) {
    size_t at = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_' || c == '~' || (keep_slash && c == '/');
        if (at + 4 >= cap) return -1;
        if (plain) out[at++] = (char)c;
        else out[at++] = '%', out[at++] = "0123456789ABCDEF"[c >> 4], out[at++] = "0123456789ABCDEF"[c & 15];
    }
    out[at] = 0;
    return 0;
}

/* The URI as messages show it: an http URL without user:password@ and without its ?query. */
static void recio__rm_name(char *out, size_t cap, const char *uri) {
    const char *p = strstr(uri, "://"), *host = p ? p + 3 : uri, *at, *end;
    size_t n;
    end = host + strcspn(host, "/?#");
    at = host;
    while ((p = (const char *)memchr(at, '@', (size_t)(end - at))) != NULL) at = p + 1;
    n = (size_t)(host - uri);
    if (n >= cap) n = cap - 1;
    memcpy(out, uri, n);
    out[n] = 0;
    recio__fmt(out + n, cap - n, "%s", at);
    out[n + strcspn(out + n, "?#")] = 0;
}

/* key = value lines of profile [name] in the shared credentials file. */
static void recio__rm_profile(recio__rm_cfg *c) {
    const char *file = recio__rm_env("AWS_SHARED_CREDENTIALS_FILE"), *home = recio__rm_env("HOME");
    const char *want = recio__rm_env("AWS_PROFILE");
    char path[1024], line[4400];
    int in = 0;
    FILE *f;
    if (!file && !home) return;
    if (!file) recio__fmt(path, sizeof path, "%s/.aws/credentials", home);
    else recio__fmt(path, sizeof path, "%s", file);
    if (!want) want = "default";
    if (!(f = fopen(path, "r"))) return;
    while (fgets(line, sizeof line, f)) {
        char *k = line + strspn(line, " \t"), *v, *e;
        k[strcspn(k, "\r\n")] = 0;
        if (*k == '[') {
            e = strchr(k, ']');
            in = e && (size_t)(e - k - 1) == strlen(want) && strncmp(k + 1, want, strlen(want)) == 0;
            continue;
        }
        if (!in || !(v = strchr(k, '='))) continue;
        for (e = v; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--) {}
        *e = 0;
        v += 1 + strspn(v + 1, " \t");
        for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--) {}
        *e = 0;
        if (!strcmp(k, "aws_access_key_id")) recio__rm_put(c->id, sizeof c->id, v, strlen(v));
        else if (!strcmp(k, "aws_secret_access_key")) recio__rm_put(c->secret, sizeof c->secret, v, strlen(v));
        else if (!strcmp(k, "aws_session_token")) recio__rm_put(c->token, sizeof c->token, v, strlen(v));
    }
    fclose(f);
}

/* The S3 settings as every S3 tool reads them: the variables, else the shared credentials file's
   profile (AWS_PROFILE, default "default"); anonymous when neither names a key. */
static void recio__rm_creds(recio__rm_cfg *c) {
    const char *id = recio__rm_env("AWS_ACCESS_KEY_ID"), *secret = recio__rm_env("AWS_SECRET_ACCESS_KEY");
    const char *token = recio__rm_env("AWS_SESSION_TOKEN"), *region = recio__rm_env("AWS_REGION");
    const char *ep = recio__rm_env("AWS_ENDPOINT_URL");
    if (id && secret) {
        recio__rm_put(c->id, sizeof c->id, id, strlen(id));
        recio__rm_put(c->secret, sizeof c->secret, secret, strlen(secret));
        if (token) recio__rm_put(c->token, sizeof c->token, token, strlen(token));
    } else {
        recio__rm_profile(c);
    }
    if (!c->secret[0]) c->id[0] = c->token[0] = 0; /* a key with no secret cannot sign: anonymous */
    if (!region) region = recio__rm_env("AWS_DEFAULT_REGION");
    recio__fmt(c->region, sizeof c->region, "%s", region ? region : "us-east-1");
    if (ep) {
        recio__fmt(c->endpoint, sizeof c->endpoint, "%s", ep);
        while (c->endpoint[0] && c->endpoint[strlen(c->endpoint) - 1] == '/') c->endpoint[strlen(c->endpoint) - 1] = 0;
    }
}

/* The CA bundle HTTPS trusts (a private endpoint's own CA, a test's self-signed certificate), from
   the variables users already set for it: AWS_CA_BUNDLE (the AWS CLI and SDKs), CURL_CA_BUNDLE
   (the curl tool; libcurl itself reads none), SSL_CERT_FILE (OpenSSL's). Certificates are still
   verified, always; without any, the system's store (libcurl's default). */
static void recio__rm_ca(recio__rm_cfg *c) {
    const char *ca = recio__rm_env("AWS_CA_BUNDLE");
    if (!ca) ca = recio__rm_env("CURL_CA_BUNDLE");
    if (!ca) ca = recio__rm_env("SSL_CERT_FILE");
    if (ca) recio__rm_put(c->ca, sizeof c->ca, ca, strlen(ca));
}

/* uri's scheme, bucket and key, and the settings that go with them. why gets the reason on failure. */
static recio_err recio__rm_cfg_load(recio__rm_cfg *c, const char *uri, char *why) {
    memset(c, 0, sizeof *c);
    if (strlen(uri) >= sizeof c->own) return recio__fmt(why, RECIO_ERRMSG_SIZE, "URI too long"), RECIO_ERR_ARG;
    uri = c->uri = (const char *)memcpy(c->own, uri, strlen(uri) + 1);
    recio__rm_name(c->name, sizeof c->name, uri);
    if (recio__rm_ieq(uri, "s3://", 5)) {
        const char *b = uri + 5, *slash = strchr(b, '/');
        size_t n = slash ? (size_t)(slash - b) : strlen(b);
        c->s3 = 1;
        if (n == 0 || recio__rm_put(c->bucket, sizeof c->bucket, b, n))
            return recio__fmt(why, RECIO_ERRMSG_SIZE, "not an S3 URI (s3://BUCKET/KEY)"), RECIO_ERR_ARG;
        c->key = slash ? slash + 1 : b + n;
        recio__rm_creds(c);
    } else if (!recio__rm_ieq(uri, "http://", 7) && !recio__rm_ieq(uri, "https://", 8)) {
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "not a remote URI"), RECIO_ERR_ARG;
    }
    recio__rm_ca(c);
    return RECIO_OK;
}

/* The URL of key (NULL: the bucket itself) with an already canonical query (NULL: none): SigV4 signs
   the query as sent, so its parameters must come sorted and RFC 3986 encoded. A custom endpoint
   (AWS_ENDPOINT_URL) is addressed path-style; AWS by virtual host (path-style for dotted buckets,
   which a virtual host's certificate does not cover). An http(s) URI is its own URL. */
static int recio__rm_url(const recio__rm_cfg *c, char *out, const char *key, const char *query) {
    char k[RECIO__RM_URL];
    size_t n;
    if (!c->s3) return recio__rm_put(out, RECIO__RM_URL, c->uri, strlen(c->uri));
    if (recio__rm_enc(k, sizeof k, key ? key : "", 1)) return -1;
    if (c->endpoint[0]) recio__fmt(out, RECIO__RM_URL, "%s/%s", c->endpoint, c->bucket);
    else if (strchr(c->bucket, '.'))
        recio__fmt(out, RECIO__RM_URL, "https://s3.%s.amazonaws.com/%s", c->region, c->bucket);
    else recio__fmt(out, RECIO__RM_URL, "https://%s.s3.%s.amazonaws.com", c->bucket, c->region);
    n = strlen(out);
    if (key || !c->endpoint[0]) recio__fmt(out + n, RECIO__RM_URL - n, "/%s", k); /* virtual host: "/" at least */
    n = strlen(out);
    if (query) recio__fmt(out + n, RECIO__RM_URL - n, "?%s", query);
    return strlen(out) + 1 >= RECIO__RM_URL ? -1 : 0;
}

/* The answer's status line and the headers recio looks at; a new status line (a redirect's next
   answer, or after "100 Continue") starts the answer over. */
static size_t recio__rm_on_header(char *p, size_t size, size_t n, void *user) {
    recio__rm_xfer *x = (recio__rm_xfer *)user;
    size_t len = size * n, v;
    char line[512];
    if (recio__rm_put(line, sizeof line, p, len < sizeof line ? len : sizeof line - 1)) return len;
    line[strcspn(line, "\r\n")] = 0;
    if (!strncmp(line, "HTTP/", 5)) {
        const char *sp = strchr(line, ' ');
        if (x->wait < 0) x->wait = recio__rm_now() - x->t0;
        x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->etag[0] = 0, x->total = UINT64_MAX, x->first = UINT64_MAX, x->retry_after = -1, x->err_len = 0;
        return len;
    }
    v = strcspn(line, ":");
    if (!line[v]) return len;
    line[v] = 0;
    p = line + v + 1 + strspn(line + v + 1, " \t");
    if (recio__rm_ieq(line, "etag", 5)) recio__fmt(x->etag, sizeof x->etag, "%s", p);
    else if (recio__rm_ieq(line, "retry-after", 12) && *p >= '0' && *p <= '9') x->retry_after = strtol(p, NULL, 10);
    else if (recio__rm_ieq(line, "content-range", 14) && recio__rm_ieq(p, "bytes ", 6) && strchr(p, '/')) {
        x->first = (uint64_t)strtoull(p + 6, NULL, 10);
        if (strchr(p, '/')[1] != '*') x->total = (uint64_t)strtoull(strchr(p, '/') + 1, NULL, 10);
    }
    return len;
}

/* Room in x's buffer for len more bytes: first by dropping what the reader is done with (but its last
   RECIO__RM_TAIL bytes), then, with grow, by growing it. 0 when there is room. */
static int recio__rm_room(recio__rm_xfer *x, size_t len, int grow) {
    uint64_t keep = x->used > RECIO__RM_TAIL ? x->used - RECIO__RM_TAIL : 0;
    size_t held, cap;
    unsigned char *b;
    if (keep > x->got) keep = x->got;
    if (keep > x->skip && x->got - x->skip + len > x->cap) {
        memmove(x->buf, x->buf + (keep - x->skip), (size_t)(x->got - keep));
        x->skip = keep;
    }
    held = (size_t)(x->got - x->skip);
    if (held + len <= x->cap) return 0;
    if (!grow || len > SIZE_MAX / 2 - held) return -1;
    for (cap = x->cap ? x->cap : 4096; cap < held + len; cap *= 2) continue;
    if (!(b = (unsigned char *)recio__realloc(&x->s->alloc, x->buf, held, cap))) return -1;
    x->buf = b, x->cap = cap;
    return 0;
}

/* The body: a range's bytes straight into the reader's buffer when it waits for them, else into buf,
   which holds only so much (the transfer pauses when it is full: a range of megabytes is not copied
   through memory twice); a body to keep (grow) whole; of an error answer, its first bytes. */
static size_t recio__rm_on_body(char *p, size_t size, size_t n, void *user) {
    recio__rm_xfer *x = (recio__rm_xfer *)user;
    size_t len = size * n;
    if (x->status < 200 || x->status > 299) {
        size_t k = len < sizeof x->err - 1 - x->err_len ? len : sizeof x->err - 1 - x->err_len;
        memcpy(x->err + x->err_len, p, k);
        x->err[x->err_len += k] = 0;
        return len;
    }
    if (!x->grow && !x->len) return len; /* a HEAD's or a PUT's answer: nothing to keep */
    if (x->len && (x->status != 206 || x->first != x->from)) return x->overflow = 3, 0; /* not the bytes asked */
    if (x->len && x->adopt && !x->adopt[0]) recio__fmt(x->adopt, RECIO__RM_TAG, "%s", x->etag); /* the open's range */
    if (x->len && x->want_total == UINT64_MAX && x->total != UINT64_MAX) x->want_total = x->total;
    if (x->len && x->off + x->len > x->want_total && x->want_total >= x->off) x->len = x->want_total - x->off;
    if (x->len && ((x->if_match && x->if_match[0] && strcmp(x->etag, x->if_match)) || (x->total != x->want_total)))
        return x->overflow = 5, 0; /* another object: a server that ignored If-Match, or a new size */
    if (x->len && x->got + len > x->len) return x->overflow = 1, 0; /* more than the range: never kept */
    if (x->dst && x->dst_got < x->dst_cap) { /* the reader waits for these bytes: straight to it */
        size_t k = len < x->dst_cap - x->dst_got ? len : x->dst_cap - x->dst_got;
        size_t t = k < RECIO__RM_TAIL ? k : RECIO__RM_TAIL;
        memcpy(x->dst + x->dst_got, p, k);
        x->dst_got += k, x->got += k, x->used = x->got, p += k, len -= k;
        /* the reader had all that was held before: their end is kept alone (a reader may step back) */
        memcpy(x->buf, p - t, t);
        x->skip = x->got - t;
        if (len && recio__rm_room(x, len, 1)) return x->overflow = 2, 0;
        memcpy(x->buf + (x->got - x->skip), p, len);
        x->got += len;
        return k + len;
    }
    if (recio__rm_room(x, len, x->grow)) {
        if (x->grow) return x->overflow = x->got + len < x->got ? 1 : 2, 0;
        x->paused = 1; /* the rest waits in the socket until the reader comes for it */
        return CURL_WRITEFUNC_PAUSE;
    }
    memcpy(x->buf + (x->got - x->skip), p, len);
    x->got += len;
    return len;
}

static size_t recio__rm_on_send(char *p, size_t size, size_t n, void *user) {
    recio__rm_xfer *x = (recio__rm_xfer *)user;
    size_t k = size * n < x->body_len - x->body_pos ? size * n : x->body_len - x->body_pos;
    memcpy(p, x->body + x->body_pos, k);
    x->body_pos += k;
    return k;
}

/* The headers every request carries: S3's payload hash (the body is not hashed: UNSIGNED-PAYLOAD,
   which S3 accepts over TLS and from any client), the session token, If-Match; no Expect (a part
   goes up without waiting a round trip for "100 Continue"). */
static struct curl_slist *recio__rm_hdr(struct curl_slist *l, const char *h) {
    struct curl_slist *t;
    if (!l) return NULL;
    if (!(t = curl_slist_append(l, h))) curl_slist_free_all(l); /* out of memory: the whole list goes */
    return t;
}

static int recio__rm_headers(recio__rm_xfer *x) {
    const recio__rm_cfg *c = &x->s->cfg;
    char h[4200];
    struct curl_slist *l = curl_slist_append(NULL, "Expect:");
    if (c->s3) l = recio__rm_hdr(l, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (c->s3 && c->id[0] && c->token[0]) {
        recio__fmt(h, sizeof h, "x-amz-security-token: %s", c->token);
        l = recio__rm_hdr(l, h);
    }
    if (x->if_match && x->if_match[0]) {
        recio__fmt(h, sizeof h, "If-Match: %s", x->if_match);
        l = recio__rm_hdr(l, h);
    }
    if (x->if_none_match) l = recio__rm_hdr(l, "If-None-Match: *"); /* S3 refuses (412) when the key exists */
    curl_slist_free_all(x->hdrs);
    x->hdrs = l;
    return l ? 0 : -1;
}

/* Every option of x's next try, from a clean handle (curl_easy_reset keeps its connections). HTTPS
   is verified, always; only http and https are spoken; an S3 request with a key is signed. */
static int recio__rm_prep(recio__rm_xfer *x) {
    const recio__rm_cfg *c = &x->s->cfg;
    CURL *h = x->h;
    uint64_t from = x->from = x->off + x->got;
    curl_easy_reset(h);
    if (recio__rm_headers(x)) return -1;
    if (x->s->pool && x->s->pool->sh) curl_easy_setopt(h, CURLOPT_SHARE, x->s->pool->sh);
    curl_easy_setopt(h, CURLOPT_URL, x->url);
    curl_easy_setopt(h, CURLOPT_PRIVATE, (void *)x);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->iferr);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a connection silent for 30 s is dead: try again */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 30L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca[0]) curl_easy_setopt(h, CURLOPT_CAINFO, c->ca);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, c->s3 ? 0L : 1L); /* web servers redirect; S3 says why */
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L << 10); /* fewer, larger copies (default 16 KiB) */
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, recio__rm_on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, (void *)x);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, recio__rm_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)x);
    if (c->s3 && c->id[0]) {
        char sig[128];
        recio__fmt(sig, sizeof sig, "aws:amz:%s:s3", c->region);
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, sig);
        curl_easy_setopt(h, CURLOPT_USERNAME, c->id);
        curl_easy_setopt(h, CURLOPT_PASSWORD, c->secret);
    }
    if (!strcmp(x->method, "HEAD")) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (!strcmp(x->method, "PUT")) {
        x->body_pos = 0;
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, recio__rm_on_send);
        curl_easy_setopt(h, CURLOPT_READDATA, (void *)x);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->body_len);
    } else if (!strcmp(x->method, "POST")) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->body ? (const char *)x->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
    } else if (!strcmp(x->method, "DELETE")) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
    if (x->len) { /* a range; a retry asks only for what is still missing */
        recio__fmt(x->range, sizeof x->range, "%U-%U", from, x->off + x->len - 1);
        curl_easy_setopt(h, CURLOPT_RANGE, x->range);
    }
    return 0;
}

/* x out of the session's multi handle. A paused handle is dropped: its pause would outlive a reset. */
static void recio__rm_unhook(recio__rm_xfer *x) {
    curl_multi_remove_handle(x->s->m, x->h);
    if (x->paused) curl_easy_cleanup(x->h), x->h = NULL, x->paused = 0;
}

/* Start x's next try on the session's multi handle. */
static int recio__rm_start(recio__rm_xfer *x) {
    if (!x->h && !(x->h = curl_easy_init())) return -1;
    if (!x->len) x->got = x->skip = 0; /* a range keeps what came and asks for the rest */
    x->status = 0, x->overflow = 0, x->err_len = 0, x->err[0] = 0, x->iferr[0] = 0, x->etag[0] = 0;
    x->total = x->first = UINT64_MAX, x->retry_after = -1, x->t0 = recio__rm_now(), x->wait = -1;
    if (recio__rm_prep(x) || curl_multi_add_handle(x->s->m, x->h) != CURLM_OK) return -1;
    x->state = RECIO__RM_RUN;
    x->tries++;
    return 0;
}

/* May this failure pass? Server trouble (5xx, 429 too many requests, 408), a connection that broke,
   timed out or was refused, a body cut short. Never: an answer that says no (403, 404, 412...). */
static int recio__rm_transient(const recio__rm_xfer *x) {
    switch (x->rc) {
    case CURLE_OK: break;
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_COULDNT_RESOLVE_HOST: return 1;
    default: return 0;
    }
    return x->status >= 500 || x->status == 429 || x->status == 408 ||
           (x->status >= 200 && x->status <= 299 && x->len && x->got < x->len); /* a short body */
}

/* Exponential backoff from 100 ms, doubled per try up to 10 s, times a jitter in [0.5, 1) so that
   many workers do not come back together; a Retry-After the server gave is waited out (at most 60 s). */
static double recio__rm_backoff(recio__rm_xfer *x) {
    double d = 100.0 * (double)(1u << (x->tries < 8 ? x->tries - 1 : 7));
    if (d > 10000) d = 10000;
    d *= 0.5 + 0.5 * recio_rng_uniform(&x->s->rng);
    if (x->retry_after >= 0 && (double)x->retry_after * 1000 > d)
        d = (double)(x->retry_after < 60 ? x->retry_after : 60) * 1000;
    return d;
}

/* A finished try: done, again later, or failed. */
static void recio__rm_settle(recio__rm_xfer *x, CURLcode rc) {
    recio__rm_unhook(x);
    x->rc = x->overflow ? CURLE_OK : rc;
    if (x->drain) x->state = RECIO__RM_IDLE, x->drain = 0;
    else if (x->overflow) x->state = RECIO__RM_FAILED;
    else if (rc == CURLE_OK && x->status >= 200 && x->status <= 299 && !(x->len && x->got < x->len))
        x->state = RECIO__RM_DONE;
    else if (recio__rm_transient(x) && x->tries < RECIO__RM_TRIES)
        x->state = RECIO__RM_WAIT, x->at = recio__rm_now() + recio__rm_backoff(x);
    else x->state = RECIO__RM_FAILED;
}

/* Settles every transfer of s that finished; how many. */
static int recio__rm_settled(recio__rm_sess *s) {
    CURLMsg *msg;
    int left, n = 0;
    while ((msg = curl_multi_info_read(s->m, &left)) != NULL) {
        recio__rm_xfer *x = NULL;
        if (msg->msg != CURLMSG_DONE) continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        if (x) recio__rm_settle(x, msg->data.result), n++;
    }
    return n;
}

/* Moves every transfer of the session on: starts the retries whose time came, waits up to wait_ms
   for the network (less when a retry falls due earlier, not at all when libcurl has work to do at
   once: a new request, a transfer resumed), then lets libcurl work and settles what finished. xs:
   the session's transfers that may wait for a retry (n of them). -1 when curl itself fails. The wait
   comes before the work: a caller waits after a step that brought it nothing, and work done before
   the wait may pause every transfer (their buffers full) and leave the wait nothing to wake it: 100
   ms lost, about once an epoch over loopback. */
static int recio__rm_pump(recio__rm_sess *s, recio__rm_xfer *const *xs, int n, int wait_ms) {
    int running, i;
    double now = recio__rm_now();
    for (i = 0; i < n; i++)
        if (xs[i] && xs[i]->state == RECIO__RM_WAIT) {
            if (xs[i]->at <= now || xs[i]->at - now > 61000) { /* due (or the clock jumped back) */
                if (recio__rm_start(xs[i])) return -1;
            } else if (xs[i]->at - now < wait_ms) {
                wait_ms = (int)(xs[i]->at - now) + 1;
            }
        }
    if (wait_ms > 0 && curl_multi_poll(s->m, NULL, 0, wait_ms, NULL) != CURLM_OK) return -1;
    if (curl_multi_perform(s->m, &running) != CURLM_OK) return -1;
    recio__rm_settled(s);
    return 0;
}

/* Until x is done or failed (the session's other transfers go on meanwhile). */
static int recio__rm_wait(recio__rm_sess *s, recio__rm_xfer *x, recio__rm_xfer *const *xs, int n) {
    while (x->state == RECIO__RM_RUN || x->state == RECIO__RM_WAIT) {
        recio__rm_xfer *one[1];
        one[0] = x;
        if (recio__rm_pump(s, xs ? xs : one, xs ? n : 1, 100)) return -1;
    }
    return x->state == RECIO__RM_DONE ? 0 : -1;
}

/* The text of element tag in an XML body (the first from *from on), entities decoded, into out;
 *from moves past it. 0 when found. */
static int recio__rm_xml(const char **from, const char *end, const char *tag, char *out, size_t cap) {
    char open[64], close[64];
    const char *a, *b, *p;
    size_t at = 0;
    recio__fmt(open, sizeof open, "<%s>", tag);
    recio__fmt(close, sizeof close, "</%s>", tag);
    for (a = *from; a + strlen(open) <= end && strncmp(a, open, strlen(open)); a++) {}
    if (a + strlen(open) > end) return -1;
    a += strlen(open);
    for (b = a; b + strlen(close) <= end && strncmp(b, close, strlen(close)); b++) {}
    if (b + strlen(close) > end) return -1;
    for (p = a; p < b && at + 1 < cap; p++) {
        static const char *const ent[] = {"&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", "\"", "&apos;", "'"};
        size_t k;
        for (k = 0; k < 10; k += 2)
            if ((size_t)(b - p) >= strlen(ent[k]) && !strncmp(p, ent[k], strlen(ent[k]))) break;
        if (k < 10) out[at++] = ent[k + 1][0], p += strlen(ent[k]) - 1;
        else if (*p == '&' && p[1] == '#' && strchr(p, ';') && strchr(p, ';') < b) {
            long v = p[2] == 'x' ? strtol(p + 3, NULL, 16) : strtol(p + 2, NULL, 10);
            out[at++] = (char)(v > 0 && v < 128 ? v : '?');
            p = strchr(p, ';');
        } else out[at++] = *p;
    }
    out[at] = 0;
    *from = b + strlen(close);
    return 0;
}

/* Why x failed, in s->why: "HTTP 503 after 5 tries: SlowDown (Please reduce your request rate.)",
   "HTTP 404 (not found)", "connection reset after 5 tries: ...". S3's <Code> and <Message> are
   taken from an error body, nothing else of it (its StringToSign and SignatureProvided stay out). */
static void recio__rm_fail_words(recio__rm_sess *s, const recio__rm_xfer *x) {
    char code[96] = "", text[256] = "", tries[48] = "";
    const char *p = x->err, *q = x->err, *what;
    if (x->tries > 1) recio__fmt(tries, sizeof tries, " after %d tries", x->tries);
    if (x->overflow) {
        if (x->overflow == 5)
            recio__fmt(s->why, sizeof s->why, "the object changed while it was read (ETag %s, then %s)",
                       x->if_match ? x->if_match : "", x->etag);
        else
            recio__fmt(s->why, sizeof s->why,
                       x->overflow == 2   ? "out of memory"
                       : x->overflow == 3 ? "HTTP %d: not the byte range asked (the server must answer Range requests)"
                                          : "HTTP %d: the server sent more than was asked",
                       (int)x->status);
        return;
    }
    if (x->rc != CURLE_OK) {
        recio__fmt(s->why, sizeof s->why, "%s%s: %s", curl_easy_strerror(x->rc), tries,
                   x->iferr[0] ? x->iferr : "no answer");
        return;
    }
    recio__rm_xml(&p, x->err + x->err_len, "Code", code, sizeof code);
    recio__rm_xml(&q, x->err + x->err_len, "Message", text, sizeof text);
    what = x->status == 404   ? "not found"
           : x->status == 403 ? "access denied"
           : x->status == 412 ? "the object changed"
                              : "";
    if (x->status == 412)
        recio__fmt(s->why, sizeof s->why, "HTTP 412: the object changed while it was read (If-Match failed)");
    else if (x->status >= 200 && x->status <= 299)
        recio__fmt(s->why, sizeof s->why, "HTTP %d%s: the body ended after %U of %U bytes", (int)x->status, tries,
                   (uint64_t)x->got, x->len);
    else if (code[0])
        recio__fmt(s->why, sizeof s->why, "HTTP %d%s: %s%s%s%s", (int)x->status, tries, code, text[0] ? " (" : "", text,
                   text[0] ? ")" : "");
    else
        recio__fmt(s->why, sizeof s->why, "HTTP %d%s%s%s%s", (int)x->status, tries, what[0] ? " (" : "", what,
                   what[0] ? ")" : "");
}

static recio_err recio__rm_code(const recio__rm_xfer *x) { return x->overflow == 2 ? RECIO_ERR_NOMEM : RECIO_ERR_IO; }

/* One request, waited for, retried as any: method on url; body for PUT/POST; the answer's body into
   x->buf (growing). Failure words in s->why. */
static recio_err recio__rm_call(recio__rm_sess *s, recio__rm_xfer *x, const char *method, const unsigned char *body,
                                size_t n) {
    x->s = s, x->method = method, x->body = body, x->body_len = n, x->grow = 1, x->tries = 0, x->len = 0, x->off = 0;
    if (recio__rm_start(x)) return recio__fmt(s->why, sizeof s->why, "cannot start a transfer (libcurl)"), RECIO_ERR_IO;
    if (recio__rm_wait(s, x, NULL, 0) == 0) return RECIO_OK;
    recio__rm_fail_words(s, x);
    return recio__rm_code(x);
}

static void recio__rm_xfer_free(recio__rm_sess *s, recio__rm_xfer *x) {
    if (x->h) {
        if (x->state == RECIO__RM_RUN) curl_multi_remove_handle(s->m, x->h);
        curl_easy_cleanup(x->h);
    }
    curl_slist_free_all(x->hdrs);
    recio__free(&s->alloc, x->buf);
    memset(x, 0, sizeof *x);
}

#ifdef RECIO_THREADS
static void recio__rm_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *user) {
    (void)h, (void)a;
    recio__mutex_lock(&((recio__rm_pool *)user)->lk[d]);
}
static void recio__rm_unlock(CURL *h, curl_lock_data d, void *user) {
    (void)h;
    recio__mutex_unlock(&((recio__rm_pool *)user)->lk[d]);
}
#define RECIO__RM_LOCK(p) recio__mutex_lock(&(p)->mu)
#define RECIO__RM_UNLOCK(p) recio__mutex_unlock(&(p)->mu)
#else
#define RECIO__RM_LOCK(p) (void)(p)
#define RECIO__RM_UNLOCK(p) (void)(p)
#endif

/* 0 when p is ready (nothing of libcurl's is made before the first remote open). */
static int recio__rm_pool_init(recio__rm_pool *p, const recio_allocator *a) {
    memset(p, 0, sizeof *p);
    if (a) p->alloc = *a;
#ifdef RECIO_THREADS
    {
        int i;
        if (recio__mutex_init(&p->mu)) return -1;
        for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
            if (recio__mutex_init(&p->lk[i])) {
                while (i--) recio__mutex_destroy(&p->lk[i]);
                return recio__mutex_destroy(&p->mu), -1;
            }
    }
#endif
    return 0;
}

/* Every open of the pool was closed: its connections and sessions go. */
static void recio__rm_pool_free(recio__rm_pool *p) {
    while (p->n) curl_multi_cleanup(p->idle[--p->n]); /* before the share: they may close TLS sessions */
    while (p->nbuf) recio__free(&p->alloc, p->buf[--p->nbuf]);
    recio__free(&p->alloc, p->sizes);
    if (p->sh) curl_share_cleanup(p->sh);
#ifdef RECIO_THREADS
    {
        int i;
        for (i = 0; i < CURL_LOCK_DATA_LAST; i++) recio__mutex_destroy(&p->lk[i]);
        recio__mutex_destroy(&p->mu);
    }
#endif
    memset(p, 0, sizeof *p);
}

/* The share handle (first call only; without one the pool still keeps connections). */
static void recio__rm_pool_share(recio__rm_pool *p) {
    CURLSH *sh;
    p->shared = 1;
    if (!(sh = curl_share_init())) return;
#ifdef RECIO_THREADS
    curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, recio__rm_lock);
    curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, recio__rm_unlock);
    curl_share_setopt(sh, CURLSHOPT_USERDATA, (void *)p);
#endif
    if (curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK ||
        curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK)
        curl_share_cleanup(sh), sh = NULL;
    p->sh = sh;
}

/* uri's size, as a stat saw it, for the next opens. */
static void recio__rm_size_keep(recio__rm_pool *p, const char *uri, uint64_t size) {
    uint64_t h = recio_fnv1a64(RECIO_FNV1A_INIT, uri, strlen(uri));
    RECIO__RM_LOCK(p);
    if (!p->sizes) p->sizes = (uint64_t(*)[2])recio__malloc(&p->alloc, RECIO__RM_SIZES * sizeof *p->sizes);
    if (p->sizes) {
        p->sizes[p->at][0] = h, p->sizes[p->at][1] = size;
        p->at = (p->at + 1) % RECIO__RM_SIZES;
        if (p->nsizes < RECIO__RM_SIZES) p->nsizes++;
    }
    RECIO__RM_UNLOCK(p);
}

/* uri's size as last seen by a stat, else UINT64_MAX. */
static uint64_t recio__rm_size_seen(recio__rm_pool *p, const char *uri) {
    uint64_t h = recio_fnv1a64(RECIO_FNV1A_INIT, uri, strlen(uri)), size = UINT64_MAX;
    unsigned i;
    RECIO__RM_LOCK(p);
    for (i = 1; i <= p->nsizes && size == UINT64_MAX; i++) {
        unsigned k = (p->at + RECIO__RM_SIZES - i) % RECIO__RM_SIZES;
        if (p->sizes[k][0] == h) size = p->sizes[k][1];
    }
    RECIO__RM_UNLOCK(p);
    return size;
}

/* An idle multi handle of the pool (its connections with it), else a new one. */
static CURLM *recio__rm_pool_take(recio__rm_pool *p) {
    CURLM *m = NULL;
    RECIO__RM_LOCK(p);
    if (!p->shared) recio__rm_pool_share(p);
    if (p->n) m = p->idle[--p->n];
    RECIO__RM_UNLOCK(p);
    if (!m && (m = curl_multi_init()) != NULL) curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, 2L * RECIO__RM_DEPTH);
    return m;
}

/* m back to the pool (none of its transfers left in it), or closed when the pool is full. */
static void recio__rm_pool_give(recio__rm_pool *p, CURLM *m) {
    RECIO__RM_LOCK(p);
    if (p->n < RECIO__RM_POOL) p->idle[p->n++] = m, m = NULL;
    RECIO__RM_UNLOCK(p);
    if (m) curl_multi_cleanup(m);
}

/* x's range buffer back to the pool (or freed when there is none, or it is full). */
static void recio__rm_buf_give(recio__rm_sess *s, recio__rm_xfer *x) {
    recio__rm_pool *p = s->pool;
    if (x->buf && p) {
        RECIO__RM_LOCK(p);
        if (p->nbuf < RECIO__RM_DEPTH) p->buf[p->nbuf] = x->buf, p->cap[p->nbuf++] = x->cap, x->buf = NULL;
        RECIO__RM_UNLOCK(p);
    }
    recio__free(&s->alloc, x->buf);
    x->buf = NULL, x->cap = 0;
}

/* A range buffer of want bytes or more for x: its own, else one the pool kept, else a new one.
   Memory fresh from the system costs a page fault per 4 KiB on its first write: with a new buffer
   per range, and per file, that was half the time of reading a 19 MB file from nginx. -1: no memory. */
static int recio__rm_buf(recio__rm_sess *s, recio__rm_xfer *x, size_t want) {
    recio__rm_pool *p = s->pool;
    int i;
    if (x->cap >= want) return 0;
    recio__rm_buf_give(s, x);
    if (p) {
        RECIO__RM_LOCK(p);
        for (i = 0; i < p->nbuf && p->cap[i] < want; i++) continue;
        if (i < p->nbuf)
            x->buf = p->buf[i], x->cap = p->cap[i], p->buf[i] = p->buf[--p->nbuf], p->cap[i] = p->cap[p->nbuf];
        RECIO__RM_UNLOCK(p);
    }
    if (!x->buf && (x->buf = (unsigned char *)recio__malloc(&s->alloc, want)) != NULL) x->cap = want;
    return x->buf ? 0 : -1;
}

static recio_err recio__rm_sess_open(recio__rm_sess *s, const char *uri, const recio_allocator *a,
                                     recio__rm_pool *pool) {
    recio_err e;
    memset(s, 0, sizeof *s);
    if (a) s->alloc = *a;
    if ((e = recio__rm_cfg_load(&s->cfg, uri, s->why)) != RECIO_OK) return e;
    s->pool = pool;
    if (!(s->m = pool ? recio__rm_pool_take(pool) : curl_multi_init()))
        return recio__fmt(s->why, sizeof s->why, "cannot start libcurl"), RECIO_ERR_NOMEM;
    s->rng.state = (uint64_t)(uintptr_t)s ^ (uint64_t)recio__rm_now();
    return RECIO_OK;
}

/* After every transfer of s was freed (so none is left in s->m). */
static void recio__rm_sess_close(recio__rm_sess *s) {
    if (s->m && s->pool) recio__rm_pool_give(s->pool, s->m);
    else if (s->m) curl_multi_cleanup(s->m);
    s->m = NULL;
}

/* ---- reading: ranged GETs kept ahead of the reader ---- */

typedef struct recio__rm_file {
    recio__rm_sess s;
    char etag[RECIO__RM_TAG]; /* the object's, from the HEAD of the open */
    uint64_t size, pos, next; /* next: where the next range ahead starts */
    size_t ramp;              /* that range's length */
    uint64_t seek_at;         /* pos at the last seek away from what was read ahead */
    double seek_t, lat;       /* when that was (ms); the shortest wait for an answer's first line seen */
    double rate;              /* bytes a ms the reader took since the last seek (before it: since the one before) */
    size_t first;             /* the length of the first range after it; 0: none since the open */
    int wrapped;              /* the ranges ahead went on from where the next pass starts (recio__rm_wrap) */
    recio__rm_xfer x[RECIO__RM_DEPTH];
    recio__rm_xfer *xs[RECIO__RM_DEPTH];
    char msg[RECIO_ERRMSG_SIZE]; /* "URI: offset N: why" after a failed read */
} recio__rm_file;

/* f's owner reads its files in order from where it opens or seeks (recio__rm_pool.seq). */
static int recio__rm_seq(const recio__rm_file *f) { return f->s.pool && f->s.pool->seq; }

/* The reader has taken x's range up to pos: all before it but RECIO__RM_TAIL bytes may go. */
static void recio__rm_taken(recio__rm_xfer *x, uint64_t pos) {
    if (pos - x->off > x->used) x->used = pos - x->off;
}

static void recio__rm_cancel(recio__rm_xfer *x) {
    if (x->state == RECIO__RM_RUN) recio__rm_unhook(x);
    x->state = RECIO__RM_IDLE;
}

/* Starts x on bytes [off, off + len) of f, which must be the object of f's first answer (its ETag in
   If-Match; total: its size, UINT64_MAX while not known). x's buffer holds len bytes. After
   recio__rm_wrap, the range is the next pass's. */
static int recio__rm_get(recio__rm_file *f, recio__rm_xfer *x, uint64_t off, uint64_t len, uint64_t total) {
    x->method = "GET", x->if_match = f->etag, x->grow = 0, x->tries = 0;
    x->off = off, x->len = len, x->got = 0, x->skip = 0, x->used = 0, x->want_total = total, x->wrap = f->wrapped;
    return recio__rm_start(x);
}

/* Ranges in flight the reader's pattern earns. After a seek, one: a reader that reads a record and
   seeks again (shuffled reads, the iterator's single records) would leave ranges ahead unread, and
   cancelling a transfer mid-body closes its connection. One more for each half of the first range
   read in order since, up to RECIO__RM_DEPTH; all of them from the open on, and after every seek
   when the file's owner reads in order (recio__rm_pool.seq: a split seeks to where it reads on). */
static int recio__rm_depth(const recio__rm_file *f) {
    uint64_t halves;
    if (!f->first) return RECIO__RM_DEPTH;
    halves = (f->pos - f->seek_at) * 2 / f->first;
    return halves + 1 < RECIO__RM_DEPTH ? (int)halves + 1 : RECIO__RM_DEPTH;
}

/* The server of f answers in RECIO__RM_FAR or longer (its shortest wait seen; -1 while none came). */
static int recio__rm_far(const recio__rm_file *f) { return f->lat >= RECIO__RM_FAR; }

/* Bytes to have asked for ahead of the reader: twice what it takes (since a seek) in the
   shortest wait for an answer seen (the link's round trip: a longer one waited for libcurl to send
   it), and a range's hold; all of the file while either is not known, and from a far server, whose
   connections add up (its rate, waits included, undercounts what the reader takes once bytes are
   there: through 20 ms a request the last range was asked too late, a round trip lost an epoch). */
static uint64_t recio__rm_lead(recio__rm_file *f) {
    double ms = recio__rm_now() - f->seek_t;
    int i;
    for (i = 0; i < RECIO__RM_DEPTH; i++)
        if (f->x[i].wait >= 0 && (f->lat < 0 || f->x[i].wait < f->lat)) f->lat = f->x[i].wait;
    if (ms >= 1 && f->pos > f->seek_at + RECIO__RM_FIRST) f->rate = (double)(f->pos - f->seek_at) / ms;
    if (f->lat < 0 || f->rate <= 0 || recio__rm_far(f)) return UINT64_MAX; /* far: every slot (recio__rm_hold) */
    return (uint64_t)(2 * f->rate * f->lat) + RECIO__RM_HOLD;
}

/* A paused x goes on (what libcurl kept comes in this call, and may pause it again). */
static int recio__rm_go(recio__rm_xfer *x) {
    if (!x->paused) return 0;
    x->paused = 0;
    if (curl_easy_pause(x->h, CURLPAUSE_CONT) == CURLE_OK) return 0;
    x->paused = 1;
    return -1;
}

/* The length of the range after one of len: twice it, up to RECIO__RM_CHUNK; four times when the
   file's owner reads in order (recio__rm_pool.seq): its first ranges are asked together, and
   while they fill the slots, the next waits for the first to be read (20 ms a request: four
   ranges of 0.25-2 MiB left the reader waiting a round trip twice an epoch). */
static size_t recio__rm_after(const recio__rm_file *f, uint64_t len) {
    uint64_t next = len * (recio__rm_seq(f) ? 4 : 2);
    return next > RECIO__RM_CHUNK ? RECIO__RM_CHUNK : (size_t)next;
}

/* What a range ahead holds in memory before it pauses. Where answers take RECIO__RM_FAR or longer
   (object storage across a network), a connection carries about its window a round trip (S3: some
   100 MB/s), so ranges ahead must stream at once to add up: they are held whole. Nearer (a LAN,
   loopback) one connection fills the link, and a byte that waits in its socket is copied once. */
static uint64_t recio__rm_hold(const recio__rm_file *f) { return recio__rm_far(f) ? RECIO__RM_CHUNK : RECIO__RM_HOLD; }

/* The buffer of a range of len bytes at off: what it holds (recio__rm_hold), as much for every range
   of its slot (the ramp does not reallocate), or the whole range from a far server (a merged tail,
   recio__rm_span, is longer than RECIO__RM_CHUNK). */
static size_t recio__rm_want(const recio__rm_file *f, uint64_t off, uint64_t len) {
    uint64_t hold = recio__rm_hold(f), want = f->size - off < hold ? f->size - off : hold;
    return (size_t)(recio__rm_far(f) && len > want ? len : want);
}

/* The length of the range at off planned as len, in a file of size bytes (UINT64_MAX: not known):
   the rest of the file when less than twice len would be left after it (up to twice
   RECIO__RM_CHUNK). A short range at the end is a request more, asked only when a slot frees: through
   20 ms a request the 19 MB file's fifth range, 5 MiB, left the reader waiting 10-20 ms an epoch. */
static uint64_t recio__rm_span(uint64_t off, uint64_t len, uint64_t size) {
    uint64_t rest = size - off;
    if (size == UINT64_MAX || off >= size) return len;
    return rest < 2 * len && rest <= 2 * (uint64_t)RECIO__RM_CHUNK ? rest : len;
}

/* Bytes of the ranges in flight that have not come yet. */
static uint64_t recio__rm_due(const recio__rm_file *f) {
    uint64_t due = 0;
    int i;
    for (i = 0; i < RECIO__RM_DEPTH; i++)
        if (f->x[i].state == RECIO__RM_RUN || f->x[i].state == RECIO__RM_WAIT) due += f->x[i].len - f->x[i].got;
    return due;
}

/* The end of f's pass (recio__rm_pool.wrap_to, within the file). */
static uint64_t recio__rm_pass_end(const recio__rm_file *f) {
    return f->s.pool->wrap_to < f->size ? f->s.pool->wrap_to : f->size;
}

/* The next pass, asked before this one ends. An owner that reads bytes [from, to) of f again and
   again (recio__rm_pool.wrap: a split's epochs) seeks back to `from` at `to`, and the round
   trip of that range was an epoch's wait (through 20 ms a request, 20 ms of an epoch of 50-90).
   Once every range to `to` was asked, and what is left for the reader, or for the link to bring,
   takes less than twice a round trip (at the reader's rate since the last seek, waits included),
   the ranges ahead go on from `from` (recio__rm_ahead), as the next pass's: the reader does not
   read them (recio__rm_slot) until it seeks back among them (recio__rm_seek). A reader that closes
   instead wasted them: the owner names the pass only from its second epoch on. */
static void recio__rm_wrap(recio__rm_file *f) {
    const recio__rm_pool *p = f->s.pool;
    uint64_t to, left, due;
    if (f->wrapped || !p || !p->wrap[0] || !recio__rm_seq(f) || f->rate <= 0 || f->lat < 0) return;
    to = recio__rm_pass_end(f);
    if (f->next < to || (f->next == to && to < f->size) || p->wrap_from >= to) return; /* the pass may end past to */
    left = to > f->pos ? to - f->pos : 0, due = recio__rm_due(f);
    if ((double)(due < left ? due : left) > 2 * f->rate * f->lat + RECIO__RM_HOLD || strcmp(p->wrap, f->s.cfg.name))
        return;
    f->wrapped = 1, f->next = p->wrap_from, f->ramp = RECIO__RM_CHUNK;
}

/* The reader came back to where the next pass starts: its ranges are the ranges ahead now, and what
   is left of this pass's goes. */
static void recio__rm_land(recio__rm_file *f) {
    int i;
    for (i = 0; i < RECIO__RM_DEPTH; i++) {
        if (!f->x[i].wrap) recio__rm_cancel(&f->x[i]);
        f->x[i].wrap = 0;
    }
    f->wrapped = 0, f->seek_at = f->pos, f->seek_t = recio__rm_now();
}

/* Bytes asked ahead of the reader: to f->next; once the next pass began, to this one's end and from
   the next one's start. */
static uint64_t recio__rm_asked(const recio__rm_file *f) {
    uint64_t to;
    if (!f->wrapped) return f->next - f->pos;
    to = recio__rm_pass_end(f);
    return (to > f->pos ? to - f->pos : 0) + (f->next - f->s.pool->wrap_from);
}

/* Starts ranges ahead of the reader into idle slots (as many as recio__rm_depth allows), each
   recio__rm_after the last. Beyond the range in flight, only while what was asked ahead of the
   reader is less than its lead (recio__rm_lead): ranges in flight together share a near link, each
   waiting paused for its turn (over loopback four at once read at 0.65x of one at a time). -1, with
   f->s.why, when one cannot start. */
static int recio__rm_ahead(recio__rm_file *f) {
    int i, busy = 0, depth = recio__rm_depth(f), sent = 0;
    uint64_t lead = recio__rm_lead(f), end;
    recio__rm_wrap(f);
    end = f->wrapped ? recio__rm_pass_end(f) : f->size;
    for (i = 0; i < RECIO__RM_DEPTH; i++) busy += f->x[i].state != RECIO__RM_IDLE;
    for (i = 0; i < RECIO__RM_DEPTH && f->next < end && busy < depth && (!busy || recio__rm_asked(f) < lead); i++) {
        recio__rm_xfer *x = &f->x[i];
        uint64_t len = recio__rm_span(f->next, f->ramp, end);
        if (x->state != RECIO__RM_IDLE) continue;
        busy++;
        if (recio__rm_buf(&f->s, x, recio__rm_want(f, f->next, len)))
            return recio__fmt(f->s.why, sizeof f->s.why, "out of memory"), -1;
        if (recio__rm_get(f, x, f->next, len, f->size))
            return recio__fmt(f->s.why, sizeof f->s.why, "libcurl failed"), -1;
        f->next += len;
        f->ramp = recio__rm_after(f, f->ramp);
        sent |= x->wrap;
    }
    /* the next pass's requests go out now: libcurl sends them when it runs next, and the pass may
       have ended (a split at its end: the next read comes after its reset) */
    if (sent && recio__rm_pump(&f->s, f->xs, RECIO__RM_DEPTH, 0))
        return recio__fmt(f->s.why, sizeof f->s.why, "libcurl failed"), -1;
    return 0;
}

/* The slot whose range holds pos, after dropping those wholly before it (but the next pass's);
   NULL when none does. */
static recio__rm_xfer *recio__rm_slot(recio__rm_file *f) {
    recio__rm_xfer *hit = NULL;
    int i;
    for (i = 0; i < RECIO__RM_DEPTH; i++) {
        recio__rm_xfer *x = &f->x[i];
        if (x->state == RECIO__RM_IDLE || x->wrap) continue;
        if (x->off + x->len <= f->pos) recio__rm_cancel(x);
        else if (x->off + x->skip <= f->pos) hit = x; /* below skip: delivered, not kept (a seek back) */
    }
    return hit;
}

static int64_t recio__rm_fail_read(recio__rm_file *f, uint64_t at) {
    recio__errf(f->msg, f->s.cfg.name, at, "%s", f->s.why);
    return -1;
}

/* The reader waits at pos for x: what is before it may go, and a paused x goes on (the bytes it holds
   come in this call when the reader's buffer waits for them). */
static int recio__rm_resume(recio__rm_xfer *x, uint64_t pos) {
    recio__rm_taken(x, pos);
    return recio__rm_go(x);
}

/* A step of the reader's wait at its position for x: x resumes, every transfer moves on, and the
   network is waited for (100 ms at most) only when that brought x nothing (x may pause again at once:
   a wait on the sockets then would be a wait for nothing). */
static int recio__rm_await(recio__rm_file *f, recio__rm_xfer *x) {
    uint64_t got = x->got;
    if (recio__rm_resume(x, f->pos) || recio__rm_pump(&f->s, f->xs, RECIO__RM_DEPTH, 0)) return -1;
    if (x->got != got || x->paused || (x->state != RECIO__RM_RUN && x->state != RECIO__RM_WAIT)) return 0;
    return recio__rm_pump(&f->s, f->xs, RECIO__RM_DEPTH, 100);
}

/* Bytes as they arrive: a range need not be complete for the reader to go on with its start. */
static int64_t recio__rm_read(void *user, void *buf, size_t n) {
    recio__rm_file *f = (recio__rm_file *)user;
    size_t done = 0;
    if (f->msg[0]) return -1;
    /* ranges ahead start when the reader reads in order (a seek starts again below); the transfers
       move on when the reader waits, so that the bytes it waits for go straight into its buffer */
    if ((recio__rm_slot(f) || f->pos == f->next) && recio__rm_ahead(f)) return recio__rm_fail_read(f, f->pos);
    while (done < n && f->pos < f->size) {
        recio__rm_xfer *x = recio__rm_slot(f);
        size_t k;
        if (!x && f->wrapped && done) break;           /* past this pass's ranges: it may end here */
        if (!x && (f->pos != f->next || f->wrapped)) { /* a seek away from what was read ahead: start again from pos */
            int i;
            for (i = 0; i < RECIO__RM_DEPTH; i++) recio__rm_cancel(&f->x[i]);
            f->wrapped = 0;
            /* the first range: what the caller asked for (64 KiB at least, RECIO__RM_FIRST at most); from
               a near server to a reader in order, RECIO__RM_CHUNK at once (its ranges hold
               RECIO__RM_HOLD whatever their length, and over loopback an epoch through ranges of
               0.25, 1 and 4 MiB took 1.1-1.3x the time of libcurl fetching the file whole; 0.9-1.1x) */
            f->ramp = n - done < (64u << 10) ? 64u << 10 : n - done > RECIO__RM_FIRST ? RECIO__RM_FIRST : n - done;
            if (recio__rm_seq(f) && f->lat >= 0 && !recio__rm_far(f)) f->ramp = RECIO__RM_CHUNK;
            f->next = f->seek_at = f->pos, f->first = recio__rm_seq(f) ? 0 : f->ramp;
            f->seek_t = recio__rm_now();
        }
        if (!x && recio__rm_ahead(f)) return recio__rm_fail_read(f, f->pos);
        if (!x && !(x = recio__rm_slot(f)))
            return recio__fmt(f->s.why, sizeof f->s.why, "no range started here"), recio__rm_fail_read(f, f->pos);
        if (done && f->pos >= x->off + x->got) break; /* what came so far: the caller works while the rest comes */
        if (f->pos == x->off + x->got) {              /* waiting: the bytes go straight into the caller's buffer */
            x->dst = (unsigned char *)buf + done, x->dst_cap = n - done, x->dst_got = 0;
            while (!x->dst_got && (x->state == RECIO__RM_RUN || x->state == RECIO__RM_WAIT))
                if (recio__rm_await(f, x)) {
                    x->dst = NULL;
                    return recio__fmt(f->s.why, sizeof f->s.why, "libcurl failed"), recio__rm_fail_read(f, f->pos);
                }
            x->dst = NULL;
            if (x->dst_got) {
                done += x->dst_got, f->pos += x->dst_got;
                if (f->pos >= x->off + x->len) x->state = RECIO__RM_IDLE;
                if (recio__rm_ahead(f)) return recio__rm_fail_read(f, f->pos);
                continue;
            }
        }
        while (f->pos >= x->off + x->got && (x->state == RECIO__RM_RUN || x->state == RECIO__RM_WAIT))
            if (recio__rm_await(f, x))
                return recio__fmt(f->s.why, sizeof f->s.why, "libcurl failed"), recio__rm_fail_read(f, f->pos);
        if (f->pos >= x->off + x->got) { /* failed, with nothing more for pos */
            recio__rm_fail_words(&f->s, x);
            return recio__rm_fail_read(f, x->off + x->got);
        }
        k = (size_t)(x->off + x->got - f->pos) < n - done ? (size_t)(x->off + x->got - f->pos) : n - done;
        memcpy((unsigned char *)buf + done, x->buf + (f->pos - x->off - x->skip), k);
        done += k, f->pos += k;
        recio__rm_taken(x, f->pos);
        if (f->pos >= x->off + x->len) x->state = RECIO__RM_IDLE;
        if (recio__rm_ahead(f)) return recio__rm_fail_read(f, f->pos);
    }
    return (int64_t)done;
}

static int recio__rm_seek(void *user, uint64_t off) {
    recio__rm_file *f = (recio__rm_file *)user;
    f->pos = off;
    if (f->wrapped && off >= f->s.pool->wrap_from && off < f->next) recio__rm_land(f);
    return 0;
}

static int64_t recio__rm_size(void *user) { return (int64_t)((recio__rm_file *)user)->size; }

static int recio__rm_close(void *user) {
    recio__rm_file *f = (recio__rm_file *)user;
    recio_allocator a = f->s.alloc;
    int i;
    for (i = 0; i < RECIO__RM_DEPTH; i++) {
        recio__rm_cancel(&f->x[i]); /* no transfer may write into a buffer the pool keeps */
        recio__rm_buf_give(&f->s, &f->x[i]);
        recio__rm_xfer_free(&f->s, &f->x[i]);
    }
    recio__rm_sess_close(&f->s);
    recio__free(&a, f);
    return 0;
}

/* The ranges after the first, asked with it, before the size and the ETag are known: a reader opens
   a file to read it, and a round trip more before its first bytes showed in every open (with 20 ms
   per request, a 19 MB file read at 0.63x). One range, twice the first; every slot's (each
   recio__rm_after the last) when the file's owner reads its files in order from their start
   (recio__rm_pool.seq): that round trip then passes while the first ranges come. A range past the end of the file is
   answered 416, which recio__rm_guessed drops, and none is asked past the size a stat saw; a range ahead waits in its
   socket, paused, past RECIO__RM_HOLD, so a reader that reads less costs little more than that. */
static int recio__rm_guess(recio__rm_file *f) {
    int i, n = recio__rm_seq(f) ? RECIO__RM_DEPTH : 2;
    uint64_t off = RECIO__RM_FIRST, len = recio__rm_after(f, RECIO__RM_FIRST);
    uint64_t known = f->s.pool ? recio__rm_size_seen(f->s.pool, f->s.cfg.uri) : UINT64_MAX;
    for (i = 1; i < n && off < known; i++, off += len, len = recio__rm_after(f, len)) {
        recio__rm_xfer *x = &f->x[i];
        len = recio__rm_span(off, len, known);
        if (recio__rm_buf(&f->s, x, len < RECIO__RM_HOLD ? (size_t)len : RECIO__RM_HOLD) ||
            recio__rm_get(f, x, off, len, UINT64_MAX))
            return -1;
    }
    return 0;
}

/* x's buffer grown to cap (what it holds kept), and x going on if it paused: a far server's range,
   asked before the first answer told that it is far, is held whole as the ranges after it. */
static void recio__rm_widen(recio__rm_xfer *x, size_t cap) {
    unsigned char *b;
    if (x->cap >= cap || !(b = (unsigned char *)recio__realloc(&x->s->alloc, x->buf, (size_t)(x->got - x->skip), cap)))
        return;
    x->buf = b, x->cap = cap;
    recio__rm_go(x);
}

/* After the open's first answer: the guessed ranges are kept, in order, while the file reaches them
   and their answers (those in yet) are the same object: the first answer's ETag and size. Their
   requests went without If-Match (the ETag was not known), so bytes that came before the first
   answer are checked here; later ones are checked as they come (recio__rm_on_body). From the first
   that is not, they are dropped, and asked again in turn. */
static void recio__rm_guessed(recio__rm_file *f) {
    int i, keep = 1;
    recio__rm_lead(f); /* takes the first answer's wait: how far the server is */
    for (i = 1; i < RECIO__RM_DEPTH; i++) {
        recio__rm_xfer *x = &f->x[i];
        if (x->state == RECIO__RM_IDLE) continue;
        if (!keep || f->size <= x->off || x->state == RECIO__RM_FAILED || (x->status && strcmp(x->etag, f->etag)) ||
            (x->total != UINT64_MAX && x->total != f->size)) {
            /* past the end (a small file): its 416 ends it soon, and a cancel would close its connection */
            if (f->size <= x->off && x->state == RECIO__RM_RUN && (!x->status || x->status == 416)) x->drain = 1;
            else recio__rm_cancel(x);
            keep = 0;
            continue;
        }
        x->want_total = f->size;
        if (x->off + x->len > f->size) x->len = f->size - x->off;
        f->next = x->off + x->len, f->ramp = recio__rm_after(f, x->len);
        recio__rm_widen(x, recio__rm_want(f, x->off, x->len)); /* without memory it pauses as it did */
    }
}

/* Opens uri for reading: the first range's answer gives the size and the ETag (and an error's words,
   which a HEAD's answer has no body for). */
static recio_err recio__rm_open(recio__rm_file **out, const char *uri, const recio_allocator *a, recio__rm_pool *pool,
                                char *why) {
    recio__rm_file *f = (recio__rm_file *)recio__malloc(a, sizeof *f);
    recio__rm_xfer *x;
    recio_err e;
    int i;
    *out = NULL;
    if (!f) return recio__fmt(why, RECIO_ERRMSG_SIZE, "out of memory"), RECIO_ERR_NOMEM;
    memset(f, 0, sizeof *f);
    if ((e = recio__rm_sess_open(&f->s, uri, a, pool)) != RECIO_OK) goto fail;
    for (i = 0; i < RECIO__RM_DEPTH; i++) {
        f->x[i].s = &f->s, f->xs[i] = &f->x[i];
        if (recio__rm_url(&f->s.cfg, f->x[i].url, f->s.cfg.key, NULL)) {
            recio__fmt(f->s.why, sizeof f->s.why, "URI too long");
            e = RECIO_ERR_ARG;
            goto fail;
        }
    }
    f->lat = -1, f->seek_t = recio__rm_now();
    x = &f->x[0]; /* the first range gives the size (Content-Range) and the ETag, with no HEAD first */
    if (recio__rm_buf(&f->s, x, RECIO__RM_FIRST)) {
        recio__fmt(f->s.why, sizeof f->s.why, "out of memory");
        e = RECIO_ERR_NOMEM;
        goto fail;
    }
    x->method = "GET", x->if_match = x->adopt = f->etag, x->len = RECIO__RM_FIRST, x->want_total = UINT64_MAX;
    if (recio__rm_start(x) || recio__rm_guess(f)) {
        recio__fmt(f->s.why, sizeof f->s.why, "cannot start a transfer (libcurl)");
        e = RECIO_ERR_IO;
        goto fail;
    }
    if (recio__rm_wait(&f->s, x, f->xs, RECIO__RM_DEPTH) == 0) {
        f->size = x->want_total;
    } else if (x->rc == CURLE_OK && x->status == 416 && x->total != UINT64_MAX) { /* an empty object */
        f->size = x->total, x->state = RECIO__RM_IDLE;
    } else {
        recio__rm_fail_words(&f->s, x);
        e = recio__rm_code(x);
        goto fail;
    }
    if (f->size == UINT64_MAX) {
        recio__fmt(f->s.why, sizeof f->s.why, "HTTP %d: no Content-Range: the size is not known", (int)x->status);
        e = RECIO_ERR_IO;
        goto fail;
    }
    f->next = x->state == RECIO__RM_IDLE ? 0 : x->len; /* the ranges ahead start at the first read */
    f->ramp = RECIO__RM_FIRST * 2;
    x->adopt = NULL;
    recio__rm_guessed(f);
    *out = f;
    return RECIO_OK;
fail:
    recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", f->s.why);
    recio__rm_close(f);
    return e;
}

/* ---- writing: a multipart upload whose parts go up while the next fills ---- */

typedef struct recio__rm_writer {
    recio__rm_sess s;
    char upload[1024];      /* the UploadId, "" until the first part */
    recio__rm_xfer part[2]; /* one fills while the other goes up */
    recio__rm_xfer call;    /* create, complete, abort, a single PUT */
    int cur;                /* the part that fills */
    size_t fill;
    unsigned nparts;
    char (*etags)[RECIO__RM_TAG]; /* part n's ETag at n - 1 */
    size_t etag_cap;
    int failed, del; /* del: RECIO_FS_DELETE's pending (nothing written) */
    int fresh;       /* RECIO_FS_NEW: never replaces an object */
} recio__rm_writer;

static int recio__rm_w_fail(recio__rm_writer *w) {
    w->failed = 1;
    return -1;
}

static const char *recio__rm_body_text(recio__rm_xfer *x, char *tmp, size_t cap, const char *tag) {
    const char *p = (const char *)x->buf;
    if (!x->buf || recio__rm_xml(&p, (const char *)x->buf + x->got, tag, tmp, cap)) return NULL;
    return tmp;
}

/* A part that went up: its ETag kept for the completion. */
static int recio__rm_w_settled(recio__rm_writer *w, recio__rm_xfer *x) {
    if (x->state == RECIO__RM_IDLE) return 0;
    if (recio__rm_wait(&w->s, x, NULL, 0)) return recio__rm_fail_words(&w->s, x), recio__rm_w_fail(w);
    if (!x->etag[0])
        return recio__fmt(w->s.why, sizeof w->s.why, "part %d: no ETag in the answer", x->part), recio__rm_w_fail(w);
    recio__fmt(w->etags[x->part - 1], RECIO__RM_TAG, "%s", x->etag);
    x->state = RECIO__RM_IDLE;
    return 0;
}

/* The size of the part that fills: 8 MiB, doubled every RECIO__RM_TIER parts, up to 4 GiB (512
   MiB where size_t has 32 bits). S3 takes at most 10,000 parts: of 8 MiB alone they ended an object
   at 78 GiB, and a bigger .rec failed at its 10,001st part, its upload (hours of packing) aborted.
   These reach 8 TB, past S3's 5 TiB. A writer's two part buffers grow with its object (128 MiB at
   100 GB); under 8 GB its parts stay 8 MiB. */
static size_t recio__rm_part_size(const recio__rm_writer *w) {
    unsigned t = w->nparts / RECIO__RM_TIER, most = sizeof(size_t) < 8 ? 6 : 9;
    return (size_t)RECIO__RM_PART << (t < most ? t : most);
}

/* Starts the filled part on its way (making the upload first) and gives the writer the other one,
   once that one's upload is over. */
static int recio__rm_w_send(recio__rm_writer *w) {
    recio__rm_xfer *x = &w->part[w->cur];
    char q[1200];
    if (!w->upload[0]) {
        char id[1024];
        if (recio__rm_url(&w->s.cfg, w->call.url, w->s.cfg.key, "uploads=") ||
            recio__rm_call(&w->s, &w->call, "POST", NULL, 0) != RECIO_OK)
            return recio__rm_w_fail(w);
        if (!recio__rm_body_text(&w->call, id, sizeof id, "UploadId"))
            return recio__fmt(w->s.why, sizeof w->s.why, "no UploadId in the answer"), recio__rm_w_fail(w);
        recio__rm_enc(w->upload, sizeof w->upload, id, 0);
    }
    if (w->nparts >= w->etag_cap) {
        size_t cap = w->etag_cap ? w->etag_cap * 2 : 64;
        char(*t)[RECIO__RM_TAG] = (char(*)[RECIO__RM_TAG])recio__realloc(
            &w->s.alloc, w->etags, w->etag_cap * RECIO__RM_TAG, cap * RECIO__RM_TAG);
        if (!t) return recio__fmt(w->s.why, sizeof w->s.why, "out of memory"), recio__rm_w_fail(w);
        w->etags = t, w->etag_cap = cap;
    }
    x->part = (int)++w->nparts;
    recio__fmt(q, sizeof q, "partNumber=%u&uploadId=%s", w->nparts, w->upload);
    if (recio__rm_url(&w->s.cfg, x->url, w->s.cfg.key, q))
        return recio__fmt(w->s.why, sizeof w->s.why, "URI too long"), recio__rm_w_fail(w);
    x->method = "PUT", x->body = x->buf, x->body_len = w->fill, x->len = 0, x->grow = 0, x->tries = 0;
    if (recio__rm_start(x))
        return recio__fmt(w->s.why, sizeof w->s.why, "cannot start a transfer"), recio__rm_w_fail(w);
    w->cur ^= 1, w->fill = 0;
    return recio__rm_w_settled(w, &w->part[w->cur]);
}

static int recio__rm_w_write(void *user, const void *buf, size_t n) {
    recio__rm_writer *w = (recio__rm_writer *)user;
    const unsigned char *p = (const unsigned char *)buf;
    if (w->failed) return -1;
    while (n) {
        recio__rm_xfer *x = &w->part[w->cur];
        size_t part = recio__rm_part_size(w), k = part - w->fill < n ? part - w->fill : n;
        if (x->cap < part) /* a new part, of the next size: its buffer holds nothing yet */
            recio__free(&w->s.alloc, x->buf), x->buf = NULL, x->cap = 0;
        if (!x->buf && !(x->buf = (unsigned char *)recio__malloc(&w->s.alloc, part)))
            return recio__fmt(w->s.why, sizeof w->s.why, "out of memory"), recio__rm_w_fail(w);
        x->cap = part;
        memcpy(x->buf + w->fill, p, k);
        w->fill += k, p += k, n -= k;
        if (w->fill == part && recio__rm_w_send(w)) return -1;
    }
    if (recio__rm_pump(&w->s, NULL, 0, 0)) return recio__rm_w_fail(w); /* the part going up moves on */
    if (w->part[w->cur ^ 1].state == RECIO__RM_FAILED) return recio__rm_w_settled(w, &w->part[w->cur ^ 1]);
    return 0;
}

static const char *recio__rm_w_error(void *user) { return ((recio__rm_writer *)user)->s.why; }
static int recio__rm_w_sync(void *user) { return ((recio__rm_writer *)user)->failed ? -1 : 0; }
static int recio__rm_w_close(void *user) { return ((recio__rm_writer *)user)->failed ? -1 : 0; }

/* AbortMultipartUpload: the parts go, no object appears. Its own failure is noted after the first. */
static void recio__rm_w_abort(recio__rm_writer *w) {
    char q[1100], keep[RECIO_ERRMSG_SIZE];
    if (!w->upload[0]) return;
    recio__fmt(keep, sizeof keep, "%s", w->s.why);
    recio__fmt(q, sizeof q, "uploadId=%s", w->upload);
    if (recio__rm_url(&w->s.cfg, w->call.url, w->s.cfg.key, q) == 0 &&
        recio__rm_call(&w->s, &w->call, "DELETE", NULL, 0) == RECIO_OK) {
        recio__fmt(w->s.why, sizeof w->s.why, "%s", keep);
    } else {
        char why[RECIO_ERRMSG_SIZE];
        recio__fmt(why, sizeof why, "%s", w->s.why);
        recio__fmt(w->s.why, sizeof w->s.why, "%s%s(the upload could not be aborted: %s)", keep, keep[0] ? " " : "",
                   why);
    }
    w->upload[0] = 0;
}

static void recio__rm_w_free(recio__rm_writer *w) {
    recio_allocator a = w->s.alloc;
    recio__rm_xfer_free(&w->s, &w->part[0]);
    recio__rm_xfer_free(&w->s, &w->part[1]);
    recio__rm_xfer_free(&w->s, &w->call);
    recio__free(&a, w->etags);
    recio__rm_sess_close(&w->s);
    recio__free(&a, w);
}

/* CompleteMultipartUpload's body: every part's number and ETag, in order. */
static int recio__rm_w_manifest(recio__rm_writer *w, recio_buffer *b) {
    unsigned i;
    char line[RECIO__RM_TAG + 96];
    b->alloc = w->s.alloc;
    if (recio__mem_write(b, "<CompleteMultipartUpload>", 25)) return -1;
    for (i = 0; i < w->nparts; i++) {
        recio__fmt(line, sizeof line, "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>", i + 1, w->etags[i]);
        if (recio__mem_write(b, line, strlen(line))) return -1;
    }
    return recio__mem_write(b, "</CompleteMultipartUpload>", 27); /* with its 0 */
}

/* The object appears: the last part and the completion, or one PUT for a small object. Any failure
   aborts the upload. why gets the reason. */
static recio_err recio__rm_w_commit(recio__rm_writer *w, char *why) {
    recio_buffer b;
    char code[96];
    memset(&b, 0, sizeof b);
    if (!w->failed && !w->upload[0]) { /* all of it fits one part: one PUT */
        recio__rm_xfer *x = &w->part[w->cur];
        w->call.if_none_match = w->fresh;
        if (recio__rm_url(&w->s.cfg, w->call.url, w->s.cfg.key, NULL) == 0 &&
            recio__rm_call(&w->s, &w->call, "PUT", x->buf ? x->buf : (const unsigned char *)"", w->fill) == RECIO_OK)
            return why[0] = 0, RECIO_OK;
        w->failed = 1;
    }
    if (!w->failed && w->fill) recio__rm_w_send(w);
    if (!w->failed) recio__rm_w_settled(w, &w->part[0]);
    if (!w->failed) recio__rm_w_settled(w, &w->part[1]);
    if (!w->failed && recio__rm_w_manifest(w, &b))
        recio__fmt(w->s.why, sizeof w->s.why, "out of memory"), w->failed = 1;
    if (!w->failed) {
        char q[1100];
        recio__fmt(q, sizeof q, "uploadId=%s", w->upload);
        w->call.if_none_match = w->fresh;
        if (recio__rm_url(&w->s.cfg, w->call.url, w->s.cfg.key, q) ||
            recio__rm_call(&w->s, &w->call, "POST", b.data, b.size - 1) != RECIO_OK)
            w->failed = 1;
        else if (recio__rm_body_text(&w->call, code, sizeof code, "Code")) /* S3 may say 200 and then fail */
            recio__fmt(w->s.why, sizeof w->s.why, "CompleteMultipartUpload: %s", code), w->failed = 1;
    }
    recio_buffer_free(&b);
    if (!w->failed) return why[0] = 0, RECIO_OK;
    recio__rm_w_abort(w);
    recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", w->s.why);
    return RECIO_ERR_IO;
}

/* A writer to uri: S3 only (an http(s) URL is read-only). Nothing is sent before the first part. */
static recio_err recio__rm_w_open(recio__rm_writer **out, const char *uri, const recio_allocator *a, recio_io *io,
                                  char *why) {
    recio__rm_writer *w;
    recio_err e;
    *out = NULL;
    if (!recio__rm_ieq(uri, "s3://", 5))
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "http(s) URLs are read-only: write to s3:// or a file"),
               RECIO_ERR_UNSUPPORTED;
    if (!(w = (recio__rm_writer *)recio__malloc(a, sizeof *w)))
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "out of memory"), RECIO_ERR_NOMEM;
    memset(w, 0, sizeof *w);
    if ((e = recio__rm_sess_open(&w->s, uri, a, NULL)) != RECIO_OK) {
        recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", w->s.why);
        recio__rm_w_free(w);
        return e;
    }
    w->part[0].s = w->part[1].s = w->call.s = &w->s;
    memset(io, 0, sizeof *io);
    io->write = recio__rm_w_write, io->sync = recio__rm_w_sync, io->close = recio__rm_w_close, io->user = w;
    io->error = recio__rm_w_error;
    *out = w;
    return RECIO_OK;
}

/* ---- listing, stat, remove ---- */

/* ListObjectsV2 of prefix, every page (continuation tokens), with delimiter '/' when dirs: each
   object (kind FILE, its size) and each common prefix (kind DIR) to entry, named without prefix
   (and without a dir's final '/'), until entry returns nonzero. max: keys per page (0: S3's 1,000). */
static recio_err recio__rm_ls(recio__rm_sess *s, const char *prefix, int dirs, unsigned max,
                              int (*entry)(void *ctx, const char *name, int dir, uint64_t size), void *ctx) {
    recio__rm_xfer x;
    char q[2600], p[1100], token[1100] = "", t[1100], name[1100], size[32], more[16];
    recio_err e = RECIO_OK;
    memset(&x, 0, sizeof x);
    x.s = s;
    if (recio__rm_enc(p, sizeof p, prefix, 0))
        return recio__fmt(s->why, sizeof s->why, "prefix too long"), RECIO_ERR_ARG;
    do {
        const char *at, *end;
        int stop = 0;
        size_t n;
        recio__fmt(q, sizeof q, "%s%s%s%slist-type=2", token[0] ? "continuation-token=" : "", token,
                   token[0] ? "&" : "",
                   dirs ? "delimiter=%2F&" : ""); /* the parameters sorted: SigV4 signs them as sent */
        n = strlen(q);
        if (max) recio__fmt(q + n, sizeof q - n, "&max-keys=%u", max);
        n = strlen(q);
        recio__fmt(q + n, sizeof q - n, "&prefix=%s", p);
        if (recio__rm_url(&s->cfg, x.url, NULL, q)) {
            e = RECIO_ERR_ARG;
            recio__fmt(s->why, sizeof s->why, "URI too long");
            break;
        }
        if ((e = recio__rm_call(s, &x, "GET", NULL, 0)) != RECIO_OK) break;
        end = (const char *)x.buf + x.got;
        for (at = (const char *)x.buf; !stop && recio__rm_xml(&at, end, "Key", name, sizeof name) == 0;) {
            const char *sz = at;
            recio__rm_xml(&sz, end, "Size", size, sizeof size);
            stop = entry(ctx, name + strlen(prefix), 0, (uint64_t)strtoull(size, NULL, 10));
        }
        for (at = (const char *)x.buf; !stop && recio__rm_xml(&at, end, "Prefix", name, sizeof name) == 0;)
            if (strlen(name) > strlen(prefix))
                name[strlen(name) - 1] = 0, stop = entry(ctx, name + strlen(prefix), 1, 0);
        at = (const char *)x.buf;
        token[0] = 0;
        if (!stop && recio__rm_xml(&at, end, "IsTruncated", more, sizeof more) == 0 && !strcmp(more, "true")) {
            at = (const char *)x.buf;
            if (recio__rm_xml(&at, end, "NextContinuationToken", t, sizeof t) || !t[0] ||
                recio__rm_enc(token, sizeof token, t, 0)) {
                recio__fmt(s->why, sizeof s->why, "a truncated listing without a continuation token");
                e = RECIO_ERR_IO;
            }
        }
    } while (e == RECIO_OK && token[0]);
    recio__rm_xfer_free(s, &x);
    return e;
}

static int recio__rm_any(void *ctx, const char *name, int dir, uint64_t size) {
    (void)name, (void)dir, (void)size;
    *(int *)ctx = 1;
    return 1;
}

/* What is at uri: an object (kind 1, its size), a "directory" on S3 (kind 2: keys under uri/), or
   nothing (kind 0, RECIO_OK). An error when the server cannot tell (403, 5xx, no connection). */
static recio_err recio__rm_stat(const char *uri, const recio_allocator *a, recio__rm_pool *pool, int *kind,
                                uint64_t *size, char *why) {
    recio__rm_sess s;
    recio__rm_xfer x;
    recio_err e;
    curl_off_t len = -1;
    *kind = 0, *size = 0;
    memset(&x, 0, sizeof x);
    if ((e = recio__rm_sess_open(&s, uri, a, pool)) != RECIO_OK)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", s.why), recio__rm_sess_close(&s), e;
    if (s.cfg.s3 && (!s.cfg.key[0] || s.cfg.key[strlen(s.cfg.key) - 1] == '/')) {
        e = RECIO_OK;
    } else if (recio__rm_url(&s.cfg, x.url, s.cfg.key, NULL)) {
        e = RECIO_ERR_ARG, recio__fmt(s.why, sizeof s.why, "URI too long");
    } else if ((e = recio__rm_call(&s, &x, "HEAD", NULL, 0)) == RECIO_OK) {
        curl_easy_getinfo(x.h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
        *kind = 1, *size = len < 0 ? 0 : (uint64_t)len;
    } else if (x.rc == CURLE_OK && x.status == 404) {
        e = RECIO_OK;
        if (!s.cfg.s3) *kind = 0;
    }
    if (e == RECIO_OK && s.cfg.s3 && *kind == 0) { /* a prefix with keys under it is a directory */
        char dir[1100];
        int found = 0;
        recio__fmt(dir, sizeof dir, "%s%s", s.cfg.key,
                   s.cfg.key[0] && s.cfg.key[strlen(s.cfg.key) - 1] != '/' ? "/" : "");
        if (!s.cfg.key[0]) found = 1; /* the bucket: listed to see that it answers */
        if ((e = recio__rm_ls(&s, dir, 1, 1, recio__rm_any, &found)) == RECIO_OK && found) *kind = 2;
    }
    if (e != RECIO_OK) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", s.why);
    recio__rm_xfer_free(&s, &x);
    recio__rm_sess_close(&s);
    return e;
}

/* Deletes the object at uri (S3; an http(s) URL is read-only). Deleting what is not there is no error. */
static recio_err recio__rm_remove(const char *uri, const recio_allocator *a, char *why) {
    recio__rm_sess s;
    recio__rm_xfer x;
    recio_err e;
    if (!recio__rm_ieq(uri, "s3://", 5))
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "http(s) URLs are read-only: write to s3:// or a file"),
               RECIO_ERR_UNSUPPORTED;
    memset(&x, 0, sizeof x);
    if ((e = recio__rm_sess_open(&s, uri, a, NULL)) == RECIO_OK) {
        if (recio__rm_url(&s.cfg, x.url, s.cfg.key, NULL))
            e = RECIO_ERR_ARG, recio__fmt(s.why, sizeof s.why, "URI too long");
        else if ((e = recio__rm_call(&s, &x, "DELETE", NULL, 0)) != RECIO_OK && x.rc == CURLE_OK && x.status == 404)
            e = RECIO_OK;
    }
    if (e != RECIO_OK) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", s.why);
    recio__rm_xfer_free(&s, &x);
    recio__rm_sess_close(&s);
    return e;
}

/* ---- the s3, http and https rows of the filesystem table ---- */

static const char *recio__rmfs_error(void *user) { return ((recio__rm_file *)user)->s.why; }

static recio_err recio__rmfs_open_read(void *user, const char *path, recio_io *io, char *why) {
    recio__rm_file *f;
    recio__rm_pool *pool = (recio__rm_pool *)user; /* a split's (recio__rm_rows), or NULL */
    recio_err e = recio__rm_open(&f, path, pool ? &pool->alloc : NULL, pool, why);
    if (e != RECIO_OK) return e;
    memset(io, 0, sizeof *io);
    io->read = recio__rm_read, io->seek = recio__rm_seek, io->size = recio__rm_size, io->close = recio__rm_close;
    io->error = recio__rmfs_error, io->user = f;
    return RECIO_OK;
}

static recio_err recio__rmfs_stat(void *user, const char *path, recio_fs_stat *st, char *why) {
    int kind;
    recio__rm_pool *pool = (recio__rm_pool *)user;
    recio_err e = recio__rm_stat(path, pool ? &pool->alloc : NULL, pool, &kind, &st->size, why);
    st->kind = kind == 1 ? RECIO_FS_FILE : kind == 2 ? RECIO_FS_DIR : RECIO_FS_NONE;
    if (pool && e == RECIO_OK && kind == 1) recio__rm_size_keep(pool, path, st->size);
    return e;
}

typedef struct recio__rmfs_ls {
    int (*entry)(void *ctx, const char *name, recio_fs_kind kind);
    void *ctx;
} recio__rmfs_ls;

static int recio__rmfs_entry(void *ctx, const char *name, int dir, uint64_t size) {
    recio__rmfs_ls *l = (recio__rmfs_ls *)ctx;
    (void)size;
    return name[0] ? l->entry(l->ctx, name, dir ? RECIO_FS_DIR : RECIO_FS_FILE) : 0; /* "dir/" itself: not an entry */
}

/* A "directory" of S3 is a prefix: dir's keys up to the next '/' (ListObjectsV2, delimiter '/'). */
static recio_err recio__rmfs_list(void *user, const char *dir,
                                  int (*entry)(void *ctx, const char *name, recio_fs_kind kind), void *ctx, char *why) {
    recio__rm_sess s;
    recio__rmfs_ls l;
    char prefix[1100];
    recio__rm_pool *pool = (recio__rm_pool *)user;
    recio_err e;
    if (!recio__rm_ieq(dir, "s3://", 5))
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "an http(s) URL cannot be listed: name each file"),
               RECIO_ERR_UNSUPPORTED;
    l.entry = entry, l.ctx = ctx;
    if ((e = recio__rm_sess_open(&s, dir, pool ? &pool->alloc : NULL, pool)) == RECIO_OK) {
        size_t n = strlen(s.cfg.key);
        recio__fmt(prefix, sizeof prefix, "%s%s", s.cfg.key, n && s.cfg.key[n - 1] != '/' ? "/" : "");
        e = recio__rm_ls(&s, prefix, 1, 0, recio__rmfs_entry, &l);
    }
    if (e != RECIO_OK) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", s.why);
    recio__rm_sess_close(&s);
    return e;
}

/* Every mode is atomic on S3 (an object appears whole or not at all); RECIO_FS_DELETE's pending is a
   writer that sends nothing and deletes on commit. */
static recio_err recio__rmfs_create(void *user, const char *path, recio_fs_mode mode, recio_fs_out *out, char *why) {
    recio__rm_writer *w;
    recio_err e;
    (void)user;
    memset(out, 0, sizeof *out);
    if ((e = recio__rm_w_open(&w, path, NULL, &out->io, why)) != RECIO_OK) return e;
    w->del = mode == RECIO_FS_DELETE, w->fresh = mode == RECIO_FS_NEW;
    out->pending = w;
    return RECIO_OK;
}

static void recio__rmfs_discard(void *user, void *pending) {
    recio__rm_writer *w = (recio__rm_writer *)pending;
    (void)user;
    if (!w) return;
    recio__rm_w_abort(w);
    recio__rm_w_free(w);
}

/* RECIO_FS_NEW: an object made at the key since fails the commit. A HEAD first, since not every S3
   honours If-None-Match on writes (AWS does; the commit's request sends it too). */
static recio_err recio__rmfs_taken(recio__rm_writer *w, char *why) {
    uint64_t size;
    int kind;
    recio_err e = recio__rm_stat(w->s.cfg.uri, NULL, NULL, &kind, &size, why);
    if (e == RECIO_OK && kind == 1)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "was made by someone else meanwhile: not replaced"), RECIO_ERR_IO;
    return e;
}

/* In order; the first failure discards the rest (S3 has no transaction over several objects: those
   before it stay). */
static recio_err recio__rmfs_commit(void *user, void *const *pending, int n, char *why) {
    recio_err e = RECIO_OK;
    int i, done = 0;
    for (i = 0; i < n; i++) {
        recio__rm_writer *w = (recio__rm_writer *)pending[i];
        if (!w) continue;
        if (e != RECIO_OK) recio__rmfs_discard(user, w);
        else if (w->fresh && (e = recio__rmfs_taken(w, why)) != RECIO_OK) recio__rmfs_discard(user, w);
        else if (w->del) e = recio__rm_remove(w->s.cfg.uri, NULL, why), recio__rm_w_free(w);
        else e = recio__rm_w_commit(w, why), recio__rm_w_free(w);
        if (e == RECIO_OK) done++;
        else if (done && !strstr(why, "already")) { /* say what stays */ size_t k = strlen(why);
            recio__fmt(why + k, RECIO_ERRMSG_SIZE - k,
                       " (%d output%s before it already written: S3 has no transaction over "
                       "several objects)",
                       done, done > 1 ? "s" : "");
        }
    }
    return e;
}

static recio_err recio__rmfs_remove(void *user, const char *path, char *why) {
    (void)user;
    return recio__rm_remove(path, NULL, why);
}

/* A split's remote rows: for each of s3, http and https that the caller's own filesystems (list) leave
   to the built-in row, a copy of that row whose user is the split's pool, chained before list; the
   new head (list itself when no scheme is left). rows: 3, as long as the split. */
#define RECIO__RM_POOLED 1
static const recio_fs *recio__rm_rows(recio_fs *rows, recio__rm_pool *pool, const recio_fs *list) {
    static const char *const probe[3] = {"s3://", "http://", "https://"};
    const recio_fs *head = list;
    int i;
    for (i = 2; i >= 0; i--) {
        const recio_fs *f = recio_fs_find(list, probe[i]);
        if (!f || f->open_read != recio__rmfs_open_read || f->user) continue;
        rows[i] = *f, rows[i].user = (void *)pool, rows[i].next = head, head = &rows[i];
    }
    return head;
}

/* The connections of a handle that opens remote files one after another: a split, or an iterator,
   whose splits come and go (one per epoch with rotate_shards). k's pool, and the filesystem list
   whose remote rows use it (list itself when list's rows have a pool already: an iterator's split
   uses the iterator's). Zero k before, free it after the handle's last file was closed. */
typedef struct recio__rm_keep {
    recio__rm_pool pool;
    recio_fs rows[3];
    int on;
} recio__rm_keep;

static const recio_fs *recio__rm_keep_init(recio__rm_keep *k, const recio_allocator *a, const recio_fs *list) {
    if (!(k->on = recio__rm_pool_init(&k->pool, a) == 0)) return list;
    return recio__rm_rows(k->rows, &k->pool, list);
}

static void recio__rm_keep_seq(recio__rm_keep *k, int seq) { k->pool.seq = seq; }

/* Bytes [from, to) of uri are read again and again (recio__rm_wrap). */
static void recio__rm_keep_wrap(recio__rm_keep *k, const char *uri, uint64_t from, uint64_t to) {
    recio__rm_name(k->pool.wrap, sizeof k->pool.wrap, uri);
    k->pool.wrap_from = from, k->pool.wrap_to = to;
}

static void recio__rm_keep_free(recio__rm_keep *k) {
    if (k->on) recio__rm_pool_free(&k->pool);
    k->on = 0;
}

#define RECIO__RMFS_ROW(scheme, next)                                                                                  \
    {                                                                                                                  \
        scheme, NULL, 0, recio__rmfs_open_read, recio__rmfs_stat, recio__rmfs_list, recio__rmfs_create,                \
            recio__rmfs_commit, recio__rmfs_discard, recio__rmfs_remove, NULL, NULL, next                              \
    }
#elif !defined(RECIO_NO_STDIO) /* no RECIO_CURL: the schemes are known, and say why they cannot be used */

#define RECIO__RM_NONE "this build has no remote filesystems (built without RECIO_CURL)"
static recio_err recio__rmfs_none(void *user, const char *path, recio_io *io, char *why) {
    (void)user, (void)path, (void)io;
    recio__fmt(why, RECIO_ERRMSG_SIZE, RECIO__RM_NONE);
    return RECIO_ERR_UNSUPPORTED;
}
static recio_err recio__rmfs_none_stat(void *user, const char *path, recio_fs_stat *st, char *why) {
    (void)user, (void)path, (void)st;
    recio__fmt(why, RECIO_ERRMSG_SIZE, RECIO__RM_NONE);
    return RECIO_ERR_UNSUPPORTED;
}
#define RECIO__RMFS_ROW(scheme, next)                                                                                  \
    { scheme, NULL, 0, recio__rmfs_none, recio__rmfs_none_stat, NULL, NULL, NULL, NULL, NULL, NULL, NULL, next }
#endif /* RECIO_CURL */

#ifdef RECIO__RMFS_ROW /* the remote rows, chained after the local filesystem (RECIO__FS_REMOTE: the first) */
static const recio_fs recio__fs_https = RECIO__RMFS_ROW("https", NULL);
static const recio_fs recio__fs_http = RECIO__RMFS_ROW("http", &recio__fs_https);
static const recio_fs recio__fs_s3 = RECIO__RMFS_ROW("s3", &recio__fs_http);
#define RECIO__FS_REMOTE (&recio__fs_s3)
#endif

#ifndef RECIO__FS_REMOTE
#define RECIO__FS_REMOTE NULL /* no built-in remote scheme (RECIO_CURL's column sets its first entry) */
#endif

#ifndef RECIO__RM_POOLED /* no connections to keep */
typedef struct recio__rm_keep {
    int on;
} recio__rm_keep;
#define recio__rm_keep_init(k, a, list) ((void)(k), (void)(a), (list))
#define recio__rm_keep_seq(k, seq) ((void)(k), (void)(seq))
#define recio__rm_keep_wrap(k, uri, from, to) ((void)(k), (void)(uri), (void)(from), (void)(to))
#define recio__rm_keep_free(k) ((void)(k))
#endif

/* ---- the local filesystem: one column per platform, then what every column shares ----
   Each column defines the same few functions, chosen whole by #if (as the kernel table's columns
   are): the file stream's hooks and recio__io_open_file, recio__lfs_stat_raw, recio__lfs_excl (create
   a name exclusively), recio__lfs_link, recio__lfs_replace, recio__lfs_tag (what keeps temporary
   names of writers apart), and the table's list / map entries (NULL where the platform has none).
   Under RECIO_NO_STDIO there is no column and no local filesystem at all. */

#if defined(RECIO__POSIX)
/* POSIX: the file stream works on a descriptor (io->user holds it): recio buffers in large blocks
   itself, so stdio would only add a copy, and every call here is declared in any feature mode. */
static int recio__fd(void *user) { return (int)(intptr_t)user; }

static int64_t recio__file_read(void *user, void *buf, size_t n) {
    ssize_t k;
    if (n > ((size_t)1 << 30)) n = (size_t)1 << 30; /* a short read is fine: callers loop */
    do k = read(recio__fd(user), buf, n);
    while (k < 0 && errno == EINTR);
    return k < 0 ? -1 : (int64_t)k;
}

static int recio__file_write(void *user, const void *buf, size_t n) {
    const char *p = (const char *)buf;
    while (n > 0) {
        ssize_t k = write(recio__fd(user), p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recio__file_seek(void *user, uint64_t off) {
    if ((uint64_t)(off_t)off != off || (off_t)off < 0) return -1;
    return lseek(recio__fd(user), (off_t)off, SEEK_SET) == (off_t)-1 ? -1 : 0;
}

static int64_t recio__file_size(void *user) {
    struct stat st;
    if (fstat(recio__fd(user), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (int64_t)st.st_size;
}

static int recio__file_sync(void *user) {
    if (fsync(recio__fd(user)) != 0 && errno != EINVAL) return -1; /* EINVAL: not syncable (a pipe, /dev/full) */
    return 0;
}

static int recio__file_close(void *user) { return close(recio__fd(user)) == 0 ? 0 : -1; }

static int recio__file_writev(void *user, const recio_iovec *v, int n) {
    struct iovec iov[64];
    int k, fd = recio__fd(user);
    size_t skip = 0;
    if (n > 64) return -1;
    for (k = 0; k < n; k++) {
        iov[k].iov_base = (void *)(uintptr_t)v[k].base;
        iov[k].iov_len = v[k].len;
    }
    for (k = 0; k < n;) { /* writev may stop early: go on from where it stopped */
        ssize_t done = writev(fd, iov + k, n - k);
        if (done < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        for (skip = (size_t)done; k < n && skip >= iov[k].iov_len; k++) skip -= iov[k].iov_len;
        if (k < n) {
            iov[k].iov_base = (char *)iov[k].iov_base + skip;
            iov[k].iov_len -= skip;
        }
    }
    return 0;
}

/* The descriptor hooks over an open descriptor. */
static void recio__io_from_fd(recio_io *io, int fd) {
    memset(io, 0, sizeof *io);
    io->read = recio__file_read;
    io->write = recio__file_write;
    io->seek = recio__file_seek;
    io->size = recio__file_size;
    io->sync = recio__file_sync;
    io->close = recio__file_close;
    io->writev = recio__file_writev;
    io->user = (void *)(intptr_t)fd;
}

static recio_err recio__io_open_file(recio_io *io, const char *path, const char *mode) {
    int fd, flags, plus;
    memset(io, 0, sizeof *io);
    if (!path || !mode || (mode[0] != 'r' && mode[0] != 'w' && mode[0] != 'a')) return RECIO_ERR_ARG;
    plus = strchr(mode, '+') != NULL;
    flags = mode[0] == 'r' ? (plus ? O_RDWR : O_RDONLY)
                           : (plus ? O_RDWR : O_WRONLY) | O_CREAT | (mode[0] == 'w' ? O_TRUNC : O_APPEND);
#ifdef O_CLOEXEC
    flags |= O_CLOEXEC;
#endif
    do fd = open(path, flags, 0666);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return RECIO_ERR_IO;
    recio__io_from_fd(io, fd);
    return RECIO_OK;
}

static int recio__lfs_stat_raw(const char *path, recio_fs_stat *st) {
    struct stat s;
    if (stat(path, &s) != 0) return -1;
    st->kind = S_ISREG(s.st_mode) ? RECIO_FS_FILE : S_ISDIR(s.st_mode) ? RECIO_FS_DIR : RECIO_FS_OTHER;
    st->size = S_ISREG(s.st_mode) ? (uint64_t)s.st_size : 0;
    return 0;
}

/* Created empty and exclusively: two processes writing one PATH never share a temporary file. */
static int recio__lfs_excl(const char *name, recio_io *io) {
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) return -1;
    recio__io_from_fd(io, fd);
    return 0;
}

static int recio__lfs_link(const char *from, const char *to) { return link(from, to); }
static int recio__lfs_replace(const char *tmp, const char *path) { return rename(tmp, path); }
/* tmp also at path unless path is taken (a link fails on a name taken): 0; -1 with errno; 1 when
   this file system has no hard links (then a check and a rename). */
static int recio__lfs_take(const char *tmp, const char *path) {
    if (link(tmp, path) == 0) return 0;
    return errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP || errno == EMLINK ? 1 : -1;
}
static uint64_t recio__lfs_tag(const void *self) { return (void)self, (uint64_t)getpid(); }

static recio_err recio__lfs_list(void *u, const char *dir, int (*entry)(void *, const char *, recio_fs_kind), void *ctx,
                                 char *why) {
    DIR *d = opendir(recio__lfs_path(dir));
    struct dirent *de;
    (void)u;
    if (!d) return recio__lfs_why(why, RECIO_ERR_IO);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && entry(ctx, de->d_name, RECIO_FS_NONE)) break;
    closedir(d);
    return RECIO_OK;
}

static recio_err recio__lfs_map(void *u, const char *path, recio_fs_map *m, char *why) {
    struct stat st;
    int fd = open(recio__lfs_path(path), O_RDONLY);
    void *v = NULL;
    (void)u;
    memset(m, 0, sizeof *m);
    m->data = "";
    if (fd < 0) return recio__lfs_why(why, RECIO_ERR_IO);
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX ||
        (st.st_size > 0 && (v = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED))
        return recio__lfs_why(why, RECIO_ERR_IO), close(fd), RECIO_ERR_IO;
    close(fd);
    if (!v) return RECIO_OK;
#ifdef POSIX_MADV_SEQUENTIAL /* hidden, with its macro, in a strict -std=c99 file: only a hint */
    posix_madvise(v, (size_t)st.st_size, POSIX_MADV_SEQUENTIAL);
#endif
    m->data = v;
    m->size = (uint64_t)st.st_size;
    return RECIO_OK;
}

static void recio__lfs_unmap(void *u, recio_fs_map *m) {
    (void)u;
    if (m->size) munmap((void *)(uintptr_t)m->data, (size_t)m->size);
}
#define RECIO__LFS_FLAGS 0u
#define RECIO__LFS_LIST recio__lfs_list
#define RECIO__LFS_MAP recio__lfs_map, recio__lfs_unmap
#endif /* RECIO__POSIX */

#if defined(RECIO__WIN32) || defined(RECIO__ISOFILE)
/* Windows' C runtime (with 64-bit offsets, sizes and commits) and any other hosted C library
   (newlib, a vendor's libc): the stream is a FILE. */
static int64_t recio__file_read(void *user, void *buf, size_t n) {
    FILE *f = (FILE *)user;
    size_t k = fread(buf, 1, n, f);
    if (k < n && ferror(f)) return -1;
    return (int64_t)k;
}

static int recio__file_write(void *user, const void *buf, size_t n) {
    return fwrite(buf, 1, n, (FILE *)user) == n ? 0 : -1;
}

static int recio__file_close(void *user) { return fclose((FILE *)user) == 0 ? 0 : -1; }

static int recio__file_seek(void *user, uint64_t off);
static int64_t recio__file_size(void *user);
static int recio__file_sync(void *user);

static recio_err recio__io_open_file(recio_io *io, const char *path, const char *mode) {
    FILE *f;
    memset(io, 0, sizeof *io);
    if (!path || !mode) return RECIO_ERR_ARG;
    if (!(f = fopen(path, mode))) return RECIO_ERR_IO;
    setvbuf(f, NULL, _IONBF, 0); /* recio buffers itself in large blocks: a second buffer would only copy */
    io->read = recio__file_read;
    io->write = recio__file_write;
    io->seek = recio__file_seek;
    io->size = recio__file_size;
    io->sync = recio__file_sync;
    io->close = recio__file_close;
    io->user = f;
    return RECIO_OK;
}

/* No exclusive create in C99's fopen: the handle's address (recio__lfs_tag) keeps names apart. */
static int recio__lfs_excl(const char *name, recio_io *io) {
    return recio__io_open_file(io, name, "wb") == RECIO_OK ? 0 : -1;
}
static uint64_t recio__lfs_tag(const void *self) { return (uint64_t)(uintptr_t)self; }
static int recio__lfs_link(const char *from, const char *to) { return (void)from, (void)to, errno = ENOSYS, -1; }
#endif

#if defined(RECIO__WIN32)
static int recio__file_seek(void *user, uint64_t off) {
    if (off > (uint64_t)INT64_MAX) return -1;
    return _fseeki64((FILE *)user, (__int64)off, SEEK_SET);
}

static int64_t recio__file_size(void *user) {
    struct _stati64 st;
    if (_fstati64(_fileno((FILE *)user), &st) != 0 || (st.st_mode & _S_IFMT) != _S_IFREG) return -1;
    return (int64_t)st.st_size;
}

static int recio__file_sync(void *user) {
    if (fflush((FILE *)user) != 0) return -1;
    if (_commit(_fileno((FILE *)user)) != 0 && errno != EBADF) return -1; /* EBADF: a console or pipe */
    return 0;
}

static int recio__lfs_stat_raw(const char *path, recio_fs_stat *st) {
    struct _stati64 s;
    if (_stati64(path, &s) != 0) return -1;
    st->kind = (s.st_mode & _S_IFMT) == _S_IFREG   ? RECIO_FS_FILE
               : (s.st_mode & _S_IFMT) == _S_IFDIR ? RECIO_FS_DIR
                                                   : RECIO_FS_OTHER;
    st->size = st->kind == RECIO_FS_FILE ? (uint64_t)s.st_size : 0;
    return 0;
}

/* Put tmp in place of path, replacing it when it exists (ISO C's rename refuses to here). */
static int recio__lfs_replace(const char *tmp, const char *path) {
    DWORD err;
    if (MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return 0;
    err = GetLastError();
    errno = err == ERROR_ACCESS_DENIED || err == ERROR_SHARING_VIOLATION ? EACCES
            : err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ? ENOENT
                                                                         : EIO;
    return -1;
}

/* tmp moved to path unless path is taken (a move without REPLACE_EXISTING fails on it): 0, or -1. */
static int recio__lfs_take(const char *tmp, const char *path) {
    DWORD err;
    if (MoveFileExA(tmp, path, MOVEFILE_WRITE_THROUGH)) return 0;
    err = GetLastError();
    errno = err == ERROR_ALREADY_EXISTS || err == ERROR_FILE_EXISTS ? EEXIST
            : err == ERROR_ACCESS_DENIED                            ? EACCES
                                                                    : EIO;
    return -1;
}

static recio_err recio__lfs_list(void *u, const char *dir, int (*entry)(void *, const char *, recio_fs_kind), void *ctx,
                                 char *why) {
    WIN32_FIND_DATAA fd;
    HANDLE h;
    char *pat;
    size_t n;
    (void)u;
    dir = recio__lfs_path(dir);
    n = strlen(dir);
    if (!(pat = (char *)recio__malloc(NULL, n + 3))) return RECIO_ERR_NOMEM;
    memcpy(pat, dir, n);
    memcpy(pat + n, n && (dir[n - 1] == '/' || dir[n - 1] == '\\') ? "*" : "\\*", 3);
    h = FindFirstFileA(pat, &fd);
    recio__free(NULL, pat);
    if (h == INVALID_HANDLE_VALUE) { /* "not found" is an empty directory (a drive's root has no ".") */
        if (GetLastError() == ERROR_FILE_NOT_FOUND) return RECIO_OK;
        errno = ENOENT;
        return recio__lfs_why(why, RECIO_ERR_IO);
    }
    do
        if (strcmp(fd.cFileName, ".") && strcmp(fd.cFileName, "..") &&
            entry(ctx, fd.cFileName, fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY ? RECIO_FS_DIR : RECIO_FS_FILE))
            break;
    while (FindNextFileA(h, &fd));
    FindClose(h);
    return RECIO_OK;
}

static recio_err recio__lfs_map(void *u, const char *path, recio_fs_map *m, char *why) {
    HANDLE f = CreateFileA(recio__lfs_path(path), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN, NULL),
           mh;
    LARGE_INTEGER size;
    void *v = NULL;
    (void)u;
    memset(m, 0, sizeof *m);
    m->data = "";
    if (f == INVALID_HANDLE_VALUE) return errno = ENOENT, recio__lfs_why(why, RECIO_ERR_IO);
    if (!GetFileSizeEx(f, &size) || size.QuadPart < 0 || (uint64_t)size.QuadPart > (uint64_t)SIZE_MAX)
        size.QuadPart = -1;
    if (size.QuadPart > 0) {
        mh = CreateFileMappingA(f, NULL, PAGE_READONLY, 0, 0, NULL);
        v = mh ? MapViewOfFile(mh, FILE_MAP_READ, 0, 0, 0) : NULL;
        if (mh) CloseHandle(mh); /* the view keeps the mapping */
    }
    CloseHandle(f);
    if (size.QuadPart < 0 || (size.QuadPart > 0 && !v)) return errno = EIO, recio__lfs_why(why, RECIO_ERR_IO);
    if (v) m->data = v, m->size = (uint64_t)size.QuadPart;
    return RECIO_OK;
}

static void recio__lfs_unmap(void *u, recio_fs_map *m) {
    (void)u;
    if (m->size) UnmapViewOfFile(m->data);
}
#define RECIO__LFS_FLAGS (RECIO_FS_FOLD_CASE | RECIO_FS_BACKSLASH)
#define RECIO__LFS_LIST recio__lfs_list
#define RECIO__LFS_MAP recio__lfs_map, recio__lfs_unmap
#endif /* RECIO__WIN32 */

#if defined(RECIO__ISOFILE)
static int recio__file_seek(void *user, uint64_t off) {
    if (off > (uint64_t)LONG_MAX) return -1;
    return fseek((FILE *)user, (long)off, SEEK_SET);
}

/* The end position, the place put back: ISO C has no stat. */
static int64_t recio__file_size(void *user) {
    FILE *f = (FILE *)user;
    long at = ftell(f), end;
    if (at < 0 || fseek(f, 0, SEEK_END) != 0) return -1;
    end = ftell(f);
    if (fseek(f, at, SEEK_SET) != 0) return -1;
    return end < 0 ? -1 : (int64_t)end;
}

static int recio__file_sync(void *user) { return fflush((FILE *)user) != 0 ? -1 : 0; }

/* A file that opens for reading is a file; its size from its end. */
static int recio__lfs_stat_raw(const char *path, recio_fs_stat *st) {
    recio_io io;
    int64_t n;
    if (recio__io_open_file(&io, path, "rb") != RECIO_OK) return -1;
    n = recio__file_size(io.user);
    recio__file_close(io.user);
    st->kind = RECIO_FS_FILE;
    st->size = n < 0 ? 0 : (uint64_t)n;
    return 0;
}

static int recio__lfs_replace(const char *tmp, const char *path) { return rename(tmp, path); }
static int recio__lfs_take(const char *tmp, const char *path) { return (void)tmp, (void)path, 1; } /* no links */
#define RECIO__LFS_FLAGS 0u
#define RECIO__LFS_LIST NULL /* ISO C cannot list a directory: no wildcards, no directories */
#define RECIO__LFS_MAP NULL, NULL
#endif /* RECIO__ISOFILE */

#ifndef RECIO_NO_STDIO
static recio_err recio__lfs_open_read(void *u, const char *path, recio_io *io, char *why) {
    (void)u;
    return recio__io_open_file(io, recio__lfs_path(path), "rb") == RECIO_OK ? RECIO_OK
                                                                            : recio__lfs_why(why, RECIO_ERR_IO);
}

static recio_err recio__lfs_stat(void *u, const char *path, recio_fs_stat *st, char *why) {
    (void)u;
    memset(st, 0, sizeof *st);
    if (recio__lfs_stat_raw(recio__lfs_path(path), st) == 0) return RECIO_OK;
    return recio__lfs_why(why, errno == ENOENT || errno == ENOTDIR ? RECIO_OK : RECIO_ERR_IO); /* else: cannot tell */
}

/* An output on its way: the names it needs, in the same allocation. tmp is NULL for a deletion. */
typedef struct recio__lfs_pending {
    char *path, *tmp, *bak;
    int kept;  /* 0: nothing kept aside, 1: the old PATH under a hard link bak, 2: moved to bak */
    int done;  /* put in place by this commit */
    int fresh; /* RECIO_FS_NEW: never replaces a file */
} recio__lfs_pending;

/* Names beside PATH for this writer, "PATH.WHAT.TAG" (".2", ".3"... for the k-th try), into d until
   op takes one: 0, or -1 with errno set (EEXIST: every one was taken). */
static int recio__lfs_name(char *d, const char *path, const char *what, const void *self,
                           int (*op)(const char *path, const char *name, recio_io *io), recio_io *io) {
    size_t n = strlen(path);
    unsigned k;
    memcpy(d, path, n);
    for (k = 1; k < 1000; k++) {
        recio__fmt(d + n, 48, k == 1 ? ".%s.%U" : ".%s.%U.%u", what, recio__lfs_tag(self), k);
        if (op(path, d, io) == 0) return 0;
        if (errno != EEXIST) return -1;
    }
    return errno = EEXIST, -1;
}

/* The name created empty (io open for writing on it), or a hard link to path: each takes the name
   only when it is free, so no two writers share one and a failure leaves nothing behind. */
static int recio__lfs_op_excl(const char *path, const char *name, recio_io *io) {
    return (void)path, recio__lfs_excl(name, io);
}
static int recio__lfs_op_link(const char *path, const char *name, recio_io *io) {
    return (void)io, recio__lfs_link(path, name);
}

static recio_err recio__lfs_create(void *u, const char *path, recio_fs_mode mode, recio_fs_out *out, char *why) {
    recio_fs_stat st;
    recio__lfs_pending *p;
    size_t n;
    (void)u;
    path = recio__lfs_path(path);
    memset(out, 0, sizeof *out);
    /* a device or a FIFO would be destroyed by renaming a file over it, and a directory refuses
       (the open then says so): those are written in place */
    if ((mode == RECIO_FS_ATOMIC || mode == RECIO_FS_NEW) && recio__lfs_stat_raw(path, &st) == 0) {
        if (st.kind != RECIO_FS_FILE) mode = RECIO_FS_IN_PLACE;
        else if (mode == RECIO_FS_NEW) return recio__fmt(why, RECIO_ERRMSG_SIZE, "exists: not replaced"), RECIO_ERR_ARG;
    }
    if (mode == RECIO_FS_IN_PLACE)
        return recio__io_open_file(&out->io, path, "wb") == RECIO_OK ? RECIO_OK : recio__lfs_why(why, RECIO_ERR_IO);
    n = strlen(path);
    if (!(p = (recio__lfs_pending *)recio__malloc(NULL, sizeof *p + 3 * n + 100))) return RECIO_ERR_NOMEM;
    memset(p, 0, sizeof *p);
    p->path = (char *)(p + 1);
    p->bak = p->path + n + 1;
    memcpy(p->path, path, n + 1);
    p->fresh = mode == RECIO_FS_NEW;
    if (mode == RECIO_FS_ATOMIC || mode == RECIO_FS_NEW) {
        p->tmp = p->bak + n + 50;
        if (recio__lfs_name(p->tmp, path, "tmp", p, recio__lfs_op_excl, &out->io) != 0) {
            recio__fmt(why, RECIO_ERRMSG_SIZE, "%s (a temporary file beside it)", recio__errno_str(errno));
            return recio__free(NULL, p), RECIO_ERR_IO;
        }
        out->tmp = p->tmp;
    }
    out->pending = p;
    return RECIO_OK;
}

/* Keep the current PATH under a free name beside it, so a commit that fails half-way can put it
   back: a hard link where the file system has them (PATH never disappears; 1), else a rename (2);
   0: there is no PATH. -1 (errno set): PATH exists and cannot be kept. */
static int recio__lfs_keep(recio__lfs_pending *p) {
    recio_fs_stat st;
    recio_io io;
    int err;
    if (recio__lfs_stat_raw(p->path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (recio__lfs_name(p->bak, p->path, "old", p, recio__lfs_op_link, &io) == 0) return 1;
    if (errno == EEXIST || errno == ENOENT) return -1; /* else no hard links here: move it aside */
    if (recio__lfs_name(p->bak, p->path, "old", p, recio__lfs_op_excl, &io) != 0) return -1;
    io.close(io.user);
    if (recio__lfs_replace(p->path, p->bak) == 0) return 2;
    err = errno;
    remove(p->bak);
    return errno = err, -1;
}

/* After the commit: on failure the old PATH back (or the new one gone, if there was none), the
   temporary file removed; on success the kept copy removed, or a note saying it is left. -1 (errno
   set) when the old PATH or the new one's absence could not be restored (it stays as bak). */
static int recio__lfs_settle(recio__lfs_pending *p, int bad, char *why) {
    int rc = 0;
    if (bad && p->kept == 1 && !p->done) remove(p->bak);               /* PATH never changed: drop the extra name */
    else if (bad && p->kept) rc = recio__lfs_replace(p->bak, p->path); /* the old file back */
    else if (bad && p->done && p->tmp) rc = remove(p->path);           /* there was none: neither file is replaced */
    if (p->tmp && !p->done) remove(p->tmp);
    if (!bad && p->kept && remove(p->bak) != 0)
        recio__fmt(why, RECIO_ERRMSG_SIZE,
                   "note: replaced, but the old copy %s could not be removed (%s): remove it by hand", p->bak,
                   recio__errno_str(errno));
    return rc == 0 ? 0 : -1;
}

/* A fresh output's temporary file becomes PATH unless a file is there by now: a link (Windows: a move
   that does not replace) takes the name atomically; with neither, a check and a rename. 0, or -1
   with errno (EEXIST: the name is taken). A temporary name that cannot be removed is a note. */
static int recio__lfs_put_new(recio__lfs_pending *p, char *why) {
    recio_fs_stat st;
    int rc = recio__lfs_take(p->tmp, p->path);
    if (rc == 0 && remove(p->tmp) != 0 && errno != ENOENT)
        recio__fmt(why, RECIO_ERRMSG_SIZE,
                   "note: written, but the temporary name %s could not be removed: remove it by hand", p->tmp);
    if (rc <= 0) return rc;
    if (recio__lfs_stat_raw(p->path, &st) == 0) return errno = EEXIST, -1;
    return recio__lfs_replace(p->tmp, p->path);
}

/* One output in place: a fresh one linked in, else renamed over PATH (or PATH removed); 0, or -1
   with why said. */
static int recio__lfs_put(recio__lfs_pending *p, char *why) {
    const char *f;
    if (p->fresh) p->done = recio__lfs_put_new(p, why) == 0;
    else p->done = p->tmp ? recio__lfs_replace(p->tmp, p->path) == 0 : remove(p->path) == 0 || errno == ENOENT;
    if (p->done) return 0;
    f = p->fresh && errno == EEXIST ? "%s was made by someone else meanwhile: not replaced"
        : p->tmp                    ? "cannot rename the temporary file into place as %s: %s"
                                    : "cannot remove %s: %s";
    recio__fmt(why, RECIO_ERRMSG_SIZE, f, p->path, recio__errno_str(errno));
    return -1;
}

/* In order, all or none: each but the last (every one with keep_all: a commit that may be taken
   back later) keeps its old PATH aside before it is replaced. 0, or -1 with why said; the caller
   settles them. */
static int recio__lfs_place(void *const *pending, int n, int keep_all, char *why) {
    recio__lfs_pending *p;
    int i, last = n - 1;
    while (last >= 0 && !pending[last]) last--;
    for (i = 0; i <= last; i++) {
        if (!(p = (recio__lfs_pending *)pending[i])) continue;
        if ((i < last || keep_all) && !p->fresh && (p->kept = recio__lfs_keep(p)) < 0) {
            p->kept = 0;
            recio__fmt(why, RECIO_ERRMSG_SIZE, "cannot keep the old %s aside while replacing it: %s", p->path,
                       recio__errno_str(errno));
            return -1;
        }
        if (recio__lfs_put(p, why) != 0) return -1;
    }
    return 0;
}

/* In order, all or none: a failure puts back what was done. */
static recio_err recio__lfs_commit(void *u, void *const *pending, int n, char *why) {
    int i, bad = recio__lfs_place(pending, n, 0, why) != 0;
    (void)u;
    for (i = 0; i < n; i++)
        if (pending[i]) recio__lfs_settle((recio__lfs_pending *)pending[i], bad, why), recio__free(NULL, pending[i]);
    return bad ? RECIO_ERR_IO : RECIO_OK;
}

static void recio__lfs_discard(void *u, void *pending) {
    recio__lfs_pending *p = (recio__lfs_pending *)pending;
    (void)u;
    if (p && p->tmp) remove(p->tmp);
    recio__free(NULL, p);
}

static recio_err recio__lfs_remove(void *u, const char *path, char *why) {
    (void)u;
    return remove(recio__lfs_path(path)) == 0 ? RECIO_OK : recio__lfs_why(why, RECIO_ERR_IO);
}

/* The local filesystem: plain paths and file://, this platform's column. */
static const recio_fs recio__fs_local = {NULL,
                                         NULL,
                                         RECIO__LFS_FLAGS,
                                         recio__lfs_open_read,
                                         recio__lfs_stat,
                                         RECIO__LFS_LIST,
                                         recio__lfs_create,
                                         recio__lfs_commit,
                                         recio__lfs_discard,
                                         recio__lfs_remove,
                                         RECIO__LFS_MAP,
                                         RECIO__FS_REMOTE};
#define RECIO__FS_BUILTIN (&recio__fs_local)
#endif /* RECIO_NO_STDIO */

/* The built-in filesystems, asked after the user's: one chain (next), the local files first, then
   any built-in scheme (a remote column defines RECIO__FS_REMOTE as the first of its chain, before
   this point). */
#ifndef RECIO__FS_BUILTIN
#define RECIO__FS_BUILTIN RECIO__FS_REMOTE
#endif

/* ---- filesystems: a path's scheme picks its recio_fs (see FILESYSTEMS) ---- */

/* Length of path's scheme before "://", 0 for a plain path (and file://, which is one). */
static size_t recio__scheme_len(const char *p) {
    size_t n = 0;
    int c;
    while ((c = recio__lower(p[n])) != 0 &&
           ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))
        n++;
    return n > 1 && strncmp(p + n, "://", 3) == 0 && !recio__scheme_is(p, "file") ? n : 0;
}

/* The first filesystem of the chain f whose scheme is path's first n bytes (n = 0: plain paths). */
static const recio_fs *recio__fs_scan(const recio_fs *f, const char *path, size_t n) {
    for (; f; f = f->next) {
        const char *s = f->scheme ? f->scheme : "";
        size_t i = 0;
        while (i < n && recio__lower(s[i]) == recio__lower(path[i])) i++;
        if (i == n && !s[n]) return f;
    }
    return NULL;
}

RECIODEF const recio_fs *recio_fs_find(const recio_fs *list, const char *path) {
    size_t n;
    const recio_fs *f;
    if (!path) return NULL;
    n = recio__scheme_len(path);
    return (f = recio__fs_scan(list, path, n)) != NULL ? f : recio__fs_scan(RECIO__FS_BUILTIN, path, n);
}

/* The filesystem of path, or NULL with why said; why (RECIO_ERRMSG_SIZE bytes) starts empty. */
static const recio_fs *recio__fs_for(const recio_fs *list, const char *path, char *why) {
    const recio_fs *fs = recio_fs_find(list, path);
    why[0] = 0;
    if (!fs) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", "no filesystem serves this path (see recio_fs)");
    return fs;
}

/* "PATH: offset 0: DOING: WHY" into msg (the code's words when why is empty); returns e. */
static recio_err recio__fs_fail(char *msg, const char *path, const char *doing, recio_err e, const char *why) {
    recio__errf(msg, path, 0, "%s: %s", doing, why[0] ? why : recio_strerror(e));
    return e;
}

/* A stream on path through its filesystem (list first). A hook's io that cannot read is refused,
   and closed so it is not leaked. */
static recio_err recio__fs_open(const recio_fs *list, const char *path, recio_io *io, char *why) {
    const recio_fs *fs = recio__fs_for(list, path, why);
    recio_err e;
    memset(io, 0, sizeof *io);
    if (!fs) return RECIO_ERR_UNSUPPORTED;
    if ((e = fs->open_read(fs->user, path, io, why)) != RECIO_OK || io->read) return e;
    if (io->close) io->close(io->user);
    return RECIO_ERR_ARG;
}

/* What is at path: its filesystem's info, else an open and the stream's size (kind NONE when it
   does not open, an error when its size is unknown). */
static recio_err recio__fs_stat(const recio_fs *list, const char *path, recio_fs_stat *st, char *why) {
    const recio_fs *fs = recio__fs_for(list, path, why);
    recio_io io;
    int64_t n = -1;
    memset(st, 0, sizeof *st);
    if (fs && fs->info) return fs->info(fs->user, path, st, why);
    if (!fs || recio__fs_open(fs, path, &io, why) != RECIO_OK) return fs ? RECIO_OK : RECIO_ERR_UNSUPPORTED; /* NONE */
    if (io.size) n = io.size(io.user);
    if (io.close) io.close(io.user);
    st->kind = RECIO_FS_FILE;
    st->size = (uint64_t)n;
    return n < 0 ? RECIO_ERR_IO : RECIO_OK; /* a stream without a size: the split cannot use it */
}

RECIODEF recio_err recio_index_path(char *out, size_t cap, const char *rec, const recio_fs *fs, int *found) {
    char why[RECIO_ERRMSG_SIZE];
    recio_fs_stat st;
    size_t n;
    int k, there = 0;
    if (!out || !rec) return RECIO_ERR_ARG;
    if (cap < (n = strlen(rec)) + 5) return RECIO_ERR_SMALL; /* the caller's buffer */
    for (k = 0; k < 2 && !there; k++) {                      /* REC.idx, then REC with .rec replaced */
        memcpy(out, rec, n + 1);
        if (k && n > 4 && strcmp(rec + n - 4, ".rec") == 0) out[n - 4] = 0;
        memcpy(out + strlen(out), ".idx", 5);
        there = recio__fs_stat(fs, out, &st, why) == RECIO_OK && st.kind == RECIO_FS_FILE;
    }
    if (found) *found = there;
    return RECIO_OK;
}

/* ---- 2. RECORDIO: implementation --------------------------------------------------------------- */

#define RECIO__ALIGN4(n) (((n) + 3u) & ~(size_t)3u)

struct recio_reader {
    recio_allocator alloc;
    recio_io io;
    int has_io;
    /* memory mode: the whole source is addressable (a buffer or a mapping), and is the view below
       with end = mem_size and eof set from the start */
    const unsigned char *mem;
    uint64_t mem_size;
    /* streaming mode: buf[0] is at file offset base; bytes [lo, end) hold the file, pos is next.
       Its refill and size re-check are set by the streaming open and reached only through these
       pointers, so a program that reads only memory links none of that code. */
    recio_err (*fill)(struct recio_reader *r, size_t need);
    int (*regrow)(struct recio_reader *r, uint64_t end);
    unsigned char *raw, *buf;
    const unsigned char *view; /* what the parser reads: buf, or mem in memory mode */
    size_t cap, lo, pos, end;
    uint64_t base;
    int eof;
    int64_t size;
    unsigned char *join; /* multi-part records are assembled here */
    size_t join_cap;
    recio_err sticky;
    const char *name; /* after the struct in the same allocation, or a literal (open_mem) */
    char errmsg[RECIO_ERRMSG_SIZE];
    recio_fs_map map;       /* a mapped file, and the filesystem that unmaps it (last: the fields above */
    const recio_fs *map_fs; /* are the parser's, kept at small offsets for its code) */
};

static uint64_t recio__rd_off(const recio_reader *r) { return r->base + r->pos; }

/* Records the reader's error e at off; f's conversions (numbers only) take a, then b. */
/* "NAME: offset OFF: " and f with up to two numbers, without a variadic call (the memory reader's
   footprint, docs/footprint.md); the name was redacted when the reader was made (recio__rd_alloc). */
static void recio__rd_say(recio_reader *r, uint64_t off, const char *f, uint64_t a, uint64_t b) {
    recio__arg args[4];
    args[0].s = r->name;
    args[1].u = off;
    args[2].u = a;
    args[3].u = b;
    recio__fmt_args(r->errmsg, RECIO_ERRMSG_SIZE, RECIO__AT_OFFSET, f, args, 4);
}

static recio_err recio__rd_fail(recio_reader *r, recio_err e, uint64_t off, const char *f, uint64_t a, uint64_t b) {
    recio__rd_say(r, off, f, a, b);
    r->sticky = e;
    return e;
}

/* A failed system call: "what: <the system's words for errno>". */
static recio_err recio__rd_fail_sys(recio_reader *r, recio_err e, uint64_t off, const char *what) {
    recio__errf(r->errmsg, r->name, off, "%s: %s", what, recio__io_why(&r->io));
    r->sticky = e;
    return e;
}

/* The stream buffer mirrors the file's page alignment: buf is page-aligned and buf[i] holds file
   offset base + i with base a multiple of RECIO__PAGE. The kernel then copies page-aligned to
   page-aligned; a destination a few bytes past the source's alignment (malloc's usual +16) makes
   read() up to 2x slower on some CPUs (measured on AMD EPYC: 0.063 s vs 0.030 s for 512 MB). */
#define RECIO__PAGE 4096u

static recio_err recio__rd_setbuf(recio_reader *r, size_t cap) {
    unsigned char *raw = (unsigned char *)recio__malloc(&r->alloc, cap + RECIO__PAGE);
    unsigned char *buf;
    if (!raw) return RECIO_ERR_NOMEM;
    buf = raw + (RECIO__PAGE - (size_t)((uintptr_t)raw % RECIO__PAGE)) % RECIO__PAGE;
    if (r->buf && r->end > r->pos) memcpy(buf + r->pos, r->buf + r->pos, r->end - r->pos);
    recio__free(&r->alloc, r->raw);
    r->raw = raw;
    r->view = r->buf = buf;
    r->cap = cap;
    r->lo = r->pos;
    return RECIO_OK;
}

/* Drop consumed bytes, keeping the page alignment of the rest. */
static void recio__rd_compact(recio_reader *r) {
    size_t k = (size_t)((r->base + r->pos) % RECIO__PAGE);
    if (k >= r->pos) return;
    memmove(r->buf + k, r->buf + r->pos, r->end - r->pos);
    r->base += r->pos - k;
    r->end -= r->pos - k;
    r->pos = r->lo = k;
}

/* Streaming mode: read until `need` bytes past the position are buffered or the file ends,
   compacting the buffer and growing it only as data arrives, so a corrupt length cannot make it
   allocate more than the file holds. */
static recio_err recio__rd_fill(recio_reader *r, size_t need) {
    while (r->end - r->pos < need && !r->eof) {
        int64_t n;
        if (r->cap - r->pos < need || r->end == r->cap) recio__rd_compact(r);
        if (r->end == r->cap) {
            size_t ncap = r->cap * 2 < r->pos + need ? r->pos + need : r->cap * 2;
            if (ncap < r->cap || recio__rd_setbuf(r, ncap))
                return recio__rd_fail(r, RECIO_ERR_NOMEM, recio__rd_off(r), "cannot grow read buffer to %U bytes", ncap,
                                      0);
        }
        n = r->io.read(r->io.user, r->buf + r->end, r->cap - r->end);
        if (n < 0) return recio__rd_fail_sys(r, RECIO_ERR_IO, r->base + r->end, "read failed");
        if (n == 0) r->eof = 1;
        r->end += (size_t)n;
    }
    return RECIO_OK;
}

/* Streaming mode, when a length runs past the size taken at open: a file still being written (a
   pack appending while the iterator streams) may have grown since, which is not damage, so ask
   again before calling the length too long, and read on past the old end. 1 when it now fits. */
static int recio__rd_regrow(recio_reader *r, uint64_t end) {
    int64_t now;
    if (!r->io.size || (now = r->io.size(r->io.user)) <= r->size) return 0;
    r->size = now;
    r->eof = 0;
    return end <= (uint64_t)r->size;
}

/* 1 when the source holds `end` bytes, as far as can be known. */
static int recio__rd_fits(recio_reader *r, uint64_t end) {
    return r->size < 0 || end <= (uint64_t)r->size || (r->regrow && r->regrow(r, end));
}

/* What is wrong with the part header at file offset off (got bytes at p, its length word lrec
   when got >= 8; at as in recio__rd_part), or NULL; *a and *b get the numbers the message names. */
static const char *recio__rd_bad_header(const unsigned char *p, size_t got, uint32_t lrec, uint64_t off, size_t at,
                                        uint64_t *a, uint64_t *b) {
    unsigned cflag;
    if (got == 0) return "multi-part record ends at end of file without its last part";
    *a = got;
    if (got < 8) return "truncated header: %u bytes before end of file";
    *a = recio_load_u32le(p);
    if (*a != RECIO_MAGIC && off == 0 && memcmp(p, "version ", 8) == 0) /* "version https://git-lfs..." */
        return "bad magic 0x%x: this is a Git LFS pointer (text), not the data: fetch it with 'git lfs pull'";
    if (*a != RECIO_MAGIC) return "bad magic 0x%x (expected 0xced7230a)";
    *a = cflag = lrec >> 29;
    if (cflag > 3) return "invalid cflag %u";
    if (at == 0 && cflag >= 2) return "continuation part (cflag %u) without a first part";
    *a = off, *b = cflag;
    if (at != 0 && cflag < 2) return "multi-part record broken: part at offset %U has cflag %u, expected 2 or 3";
    *a = RECIO_MAX_RECORD; /* no writer makes one: parts of another record, or damage */
    if (at != 0 && at + (lrec & RECIO_MAX_RECORD) > RECIO_MAX_RECORD)
        return "parts join to more than %U bytes, the largest record a writer makes";
    return NULL;
}

/* Room in r->join for a joined record of `need` bytes, keeping the at - 4 already joined (at > 0)
   or none; 0 when the allocation fails, with *cap the size it asked for. */
static int recio__rd_join_room(recio_reader *r, size_t at, size_t need, uint64_t *cap) {
    size_t ncap = r->join_cap ? r->join_cap : 4096;
    unsigned char *nj;
    if (need <= r->join_cap) return 1;
    while (ncap < need) ncap *= 2;
    /* alloc, copy, free rather than recio__realloc, which a memory reader would link for this
       alone (docs/footprint.md); the buffer only doubles, so the copies stay rare */
    *cap = ncap;
    if ((nj = (unsigned char *)recio__malloc(&r->alloc, ncap)) == NULL) return 0;
    if (at > 4) memcpy(nj, r->join, at - 4); /* at == 4: nothing joined yet, join may be NULL */
    recio__free(&r->alloc, r->join);
    r->join = nj;
    r->join_cap = ncap;
    return 1;
}

/* The one complaint of recio__rd_part that is not damage; its error code is chosen where the
   message is made, not on each path (that cost x86-64 a constant per complaint). */
static const char recio__rd_nomem[] = "cannot allocate %U bytes for a multi-part record";

/* One part at the current position: its header, checked, then its body (len bytes + padding)
   made addressable, and for a multi-part record room to join it. at is where the body will go in
   the joined record: 0 for a record's first part, 4 or more (after the magic word put back) for
   a later one. Every complaint goes through one call, which keeps this small where code space is
   scarce. */
static recio_err recio__rd_part(recio_reader *r, uint64_t rec_off, size_t at, unsigned *cflag, size_t *len,
                                const unsigned char **body) {
    size_t total = 8, got;
    uint64_t off = recio__rd_off(r), a = 0, b = 0;
    uint32_t lrec = 0;
    const char *why;
    recio_err e;
    /* Streaming mode refills when the buffer holds less than a header (memory mode has eof set and
       holds everything); a refill may move the bytes, so view + pos is read after it. */
    if (r->end - r->pos < total && !r->eof && (e = r->fill(r, total)) != RECIO_OK) return e;
    if ((got = r->end - r->pos) == 0 && at == 0) return RECIO_END;
    if (got >= 8) lrec = recio_load_u32le(r->view + r->pos + 4);
    why = recio__rd_bad_header(r->view + r->pos, got, lrec, off, at, &a, &b);
    if (!why) {
        *cflag = lrec >> 29;
        *len = lrec & RECIO_MAX_RECORD;
        total = 8 + RECIO__ALIGN4(*len);
        a = *len;
        if (!recio__rd_fits(r, off + total)) {
            why = "length %U runs past end of file (size %U)";
            b = (uint64_t)r->size; /* as the check left it: a growing file's new size */
        } else if (got < total && !r->eof && (e = r->fill(r, total)) != RECIO_OK) {
            return e;
        } else if (r->end - r->pos < total) {
            why = "truncated: length %U runs past end of file";
        } else if (*cflag && !recio__rd_join_room(r, at, at + *len, &a)) {
            why = recio__rd_nomem;
        }
    }
    if (why) return recio__rd_fail(r, why == recio__rd_nomem ? RECIO_ERR_NOMEM : RECIO_ERR_CORRUPT, rec_off, why, a, b);
    *body = r->view + r->pos + 8;
    r->pos += total;
    return RECIO_OK;
}

RECIODEF recio_err recio_reader_next(recio_reader *r, recio_record *rec) {
    uint64_t rec_off;
    unsigned cflag;
    size_t len, at = 0;
    const unsigned char *body;
    recio_err e;
    if (!r) return RECIO_ERR_ARG;
    if (!rec) return recio__rd_say(r, recio__rd_off(r), "next: the record pointer is NULL", 0, 0), RECIO_ERR_ARG;
    if (r->sticky) return r->sticky;
    rec_off = recio__rd_off(r);
    for (;;) { /* cflag 0: whole; 1, 2..., 3: parts joined at r->join[at], the magic word between */
        if ((e = recio__rd_part(r, rec_off, at, &cflag, &len, &body)) != RECIO_OK) return e;
        if (cflag == 0) break;
        /* the magic word the writer cut before this part, then the part (room made by rd_part) */
        if (at) recio_store_u32le(r->join + at - 4, RECIO_MAGIC);
        if (len) memcpy(r->join + at, body, len);
        if (cflag == 3) {
            body = r->join;
            len += at;
            break;
        }
        at += len + 4;
    }
    rec->data = body;
    rec->size = len;
    rec->offset = rec_off;
    return RECIO_OK;
}

/* The reader and its name are one allocation (the name right after the struct). */
static recio_err recio__rd_alloc(recio_reader **out, const char *name, const recio_allocator *a) {
    size_t n = strlen(name) + 1;
    recio_reader *r = (recio_reader *)recio__malloc(a, sizeof *r + n); /* a NULL: the default hooks */
    if (!r) return RECIO_ERR_NOMEM;
    memset(r, 0, sizeof *r);
    if (a) r->alloc = *a;
    r->size = -1;
    memcpy(r + 1, name, n);
    recio_redact((char *)(r + 1)); /* once, so that no message of this reader carries a URL's secret */
    r->name = (const char *)(r + 1);
    *out = r;
    return RECIO_OK;
}

/* Memory mode over n bytes at p: all of it is in view, and there is nothing more to read. */
static void recio__rd_setmem(recio_reader *r, const void *p, size_t n) {
    r->view = r->mem = (const unsigned char *)p;
    r->end = n;
    r->mem_size = n;
    r->size = (int64_t)n;
    r->eof = 1;
}

RECIODEF recio_err recio_reader_open_mem(recio_reader **r, const void *buf, size_t n) {
    recio_reader *m;
    if (!r) return RECIO_ERR_ARG;
    *r = NULL;
    if (!buf && n) return RECIO_ERR_ARG;
    /* Not recio__rd_alloc: a fixed name needs no copy and the default hooks no allocator, and a
       memory reader then links no second function for it (about 160 bytes on x86-64 with its
       unwind entry, docs/footprint.md). Zeroed alloc = the default hooks. */
    if ((m = (recio_reader *)recio__malloc(NULL, sizeof *m)) == NULL) return RECIO_ERR_NOMEM;
    memset(m, 0, sizeof *m);
    m->name = "<memory>";
    /* An empty buffer may be NULL, but a non-NULL mem marks memory mode: the reader's own address
       serves (never read, n is 0). Not "": gcc files that literal with the first function that
       uses it, here one of the split's, and the link then keeps all of that function's strings. */
    recio__rd_setmem(m, buf ? buf : (const void *)m, n);
    *r = m;
    return RECIO_OK;
}

/* path through its filesystem: mapped when asked for and the filesystem can, else a stream. */
static recio_err recio__rd_open_path(recio_reader *r, const char *path, const recio_reader_desc *d) {
    char why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs = recio__fs_for(d->fs, path, why);
    recio_err e = RECIO_ERR_UNSUPPORTED;
    if (fs && d->use_mmap && fs->map) {
        if ((e = fs->map(fs->user, path, &r->map, why)) == RECIO_OK) r->map_fs = fs;
        if (e == RECIO_OK) recio__rd_setmem(r, r->map.data, (size_t)r->map.size);
    } else if (fs) {
        r->has_io = (e = recio__fs_open(fs, path, &r->io, why)) == RECIO_OK;
    }
    return e ? recio__fs_fail(r->errmsg, r->name, "cannot open", e, why) : RECIO_OK;
}

RECIODEF recio_err recio_reader_open_desc(recio_reader **out, const char *path, const recio_reader_desc *desc) {
    recio_reader_desc d;
    recio_reader *r;
    recio_err e;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.errmsg) d.errmsg[0] = 0;
    if (!path && !d.io.read)
        return recio__errf(d.errmsg, "<reader>", 0, "%s", "no path and no desc.io.read: nothing to read"),
               RECIO_ERR_ARG;
    if (!d.name) d.name = path ? path : "<io>";
    if (!d.buffer_size) d.buffer_size = RECIO__DEFAULT_BUFFER;
    if ((e = recio__rd_alloc(&r, d.name, &d.alloc)) != RECIO_OK) return recio__open_msg(d.errmsg, d.name, NULL, e), e;
    if (path) {
        e = recio__rd_open_path(r, path, &d);
    } else {
        r->io = d.io;
        r->has_io = 1;
    }
    if (e == RECIO_OK && r->has_io) {
        r->size = r->io.size ? r->io.size(r->io.user) : -1;
        r->fill = recio__rd_fill;
        r->regrow = recio__rd_regrow;
        e = recio__rd_setbuf(r, d.buffer_size < 2 * RECIO__PAGE ? 2 * RECIO__PAGE : d.buffer_size);
    }
    recio__open_msg(d.errmsg, d.name, r ? r->errmsg : NULL, e);
    if (e != RECIO_OK) {
        if (!path) r->has_io = 0; /* desc.io stays the caller's, as on every other failed open */
        recio_reader_close(r);
        return e;
    }
    *out = r;
    return RECIO_OK;
}

RECIODEF recio_err recio_reader_open(recio_reader **r, const char *path) {
    return recio_reader_open_desc(r, path, NULL);
}

RECIODEF recio_err recio_reader_seek(recio_reader *r, uint64_t offset) {
    if (!r) return RECIO_ERR_ARG;
    r->sticky = RECIO_OK;
    r->errmsg[0] = 0;
    if (r->mem) {
        if (offset > r->mem_size)
            return recio__rd_fail(r, RECIO_ERR_ARG, offset, "seek past end of file (size %U)", r->mem_size, 0);
        r->pos = (size_t)offset;
        return RECIO_OK;
    }
    if (offset >= r->base + r->lo && offset <= r->base + r->end) { /* inside the buffer: no I/O */
        r->pos = (size_t)(offset - r->base);
        return RECIO_OK;
    }
    if (!r->io.seek || r->io.seek(r->io.user, offset) != 0)
        return recio__rd_fail_sys(r, RECIO_ERR_IO, offset, "seek failed");
    r->base = offset - offset % RECIO__PAGE;
    r->lo = r->pos = r->end = (size_t)(offset % RECIO__PAGE);
    r->eof = 0;
    return RECIO_OK;
}

RECIODEF uint64_t recio_reader_tell(const recio_reader *r) { return r ? recio__rd_off(r) : 0; }
RECIODEF const char *recio_reader_errmsg(const recio_reader *r) { return r ? r->errmsg : ""; }

RECIODEF void recio_reader_close(recio_reader *r) {
    if (!r) return;
    if (r->has_io && r->io.close) r->io.close(r->io.user);
    if (r->map_fs && r->map_fs->unmap) r->map_fs->unmap(r->map_fs->user, &r->map);
    recio__free(&r->alloc, r->raw);
    recio__free(&r->alloc, r->join);
    recio__free(&r->alloc, r);
}

struct recio_writer {
    recio_allocator alloc;
    recio_io io;
    unsigned char *buf;
    size_t cap, len;
    uint64_t offset, count;
    recio_io idx_io; /* .idx text goes through its own hooks */
    int has_idx;
    unsigned char idx_buf[4096];
    size_t idx_len;
    const recio_fs *fs[2]; /* filesystems of the data file and of the .idx (NULL: desc.io, none) */
    void *pend[2];         /* their outputs waiting for the commit (atomic), else NULL */
    const char *tmp[2];    /* their temporary names while pending, for desc.tmp_names */
    int finished;
    recio_err sticky;
    char *name;
    char errmsg[RECIO_ERRMSG_SIZE];
#ifdef RECIO_THREADS
    /* background mode: the caller fills buf while the thread writes spare; all below under mu */
    int bg;
    recio__thread thread;
    recio__mutex mu;
    recio__cond cv;
    unsigned char *spare;
    size_t spare_len;
    uint64_t spare_off;
    int pending, stop;
    recio_err bg_err;
    char bg_msg[RECIO_ERRMSG_SIZE];
#endif
};

static recio_err recio__wr_fail(recio_writer *w, recio_err e, uint64_t off, const char *what) {
    recio__errf(w->errmsg, w->name, off, "%s", what);
    w->sticky = e;
    return e;
}

static recio_err recio__wr_io_fail(recio_writer *w, uint64_t off, const char *what) {
    char tmp[RECIO_ERRMSG_SIZE];
    recio__fmt(tmp, sizeof tmp, "%s: %s", what, recio__io_why(&w->io));
    return recio__wr_fail(w, RECIO_ERR_IO, off, tmp);
}

static recio_err recio__wr_flush_sync(recio_writer *w) {
    if (w->len && w->io.write(w->io.user, w->buf, w->len) != 0)
        return recio__wr_io_fail(w, w->offset - w->len, "write failed");
    w->len = 0;
    return RECIO_OK;
}

#ifdef RECIO_THREADS
/* Copying the caller's bytes costs about as much as write() itself (bench_recordio: 0.175 s vs
   0.103 s per 537 MB), so in background mode a thread writes one buffer while the caller fills the
   other: the two overlap on two cores. Errors come back on the caller's next call. */
static void recio__wr_thread(void *arg) {
    recio_writer *w = (recio_writer *)arg;
    recio__mutex_lock(&w->mu);
    for (;;) {
        while (!w->pending && !w->stop) recio__cond_wait(&w->cv, &w->mu);
        if (!w->pending) break;
        recio__mutex_unlock(&w->mu);
        if (w->io.write(w->io.user, w->spare, w->spare_len) != 0) {
            char what[RECIO_ERRMSG_SIZE];
            recio__fmt(what, sizeof what, "write failed: %s", recio__io_why(&w->io));
            recio__mutex_lock(&w->mu);
            recio__errf(w->bg_msg, w->name, w->spare_off, "%s", what);
            w->bg_err = RECIO_ERR_IO;
        } else {
            recio__mutex_lock(&w->mu);
        }
        w->pending = 0;
        recio__cond_broadcast(&w->cv);
    }
    recio__mutex_unlock(&w->mu);
}

/* Wait until the thread holds no buffer; adopt its error, if any. */
static recio_err recio__wr_idle(recio_writer *w) {
    recio__mutex_lock(&w->mu);
    while (w->pending) recio__cond_wait(&w->cv, &w->mu);
    if (w->bg_err && !w->sticky) {
        memcpy(w->errmsg, w->bg_msg, sizeof w->errmsg);
        w->sticky = w->bg_err;
    }
    recio__mutex_unlock(&w->mu);
    return w->sticky;
}

/* Hand the filled buffer to the thread and continue in the spare one. */
static recio_err recio__wr_handoff(recio_writer *w) {
    unsigned char *t;
    if (recio__wr_idle(w) || !w->len) return w->sticky;
    recio__mutex_lock(&w->mu);
    t = w->spare;
    w->spare = w->buf;
    w->spare_len = w->len;
    w->spare_off = w->offset - w->len;
    w->pending = 1;
    recio__cond_broadcast(&w->cv);
    recio__mutex_unlock(&w->mu);
    w->buf = t;
    w->len = 0;
    return RECIO_OK;
}

static recio_err recio__wr_start(recio_writer *w) {
    w->spare = (unsigned char *)recio__malloc(&w->alloc, w->cap);
    if (!w->spare) return RECIO_ERR_NOMEM;
    if (recio__mutex_init(&w->mu) != 0) return RECIO_ERR_NOMEM;
    if (recio__cond_init(&w->cv) != 0) return recio__mutex_destroy(&w->mu), RECIO_ERR_NOMEM;
    if (recio__thread_start(&w->thread, recio__wr_thread, w) != 0) {
        recio__cond_destroy(&w->cv);
        recio__mutex_destroy(&w->mu);
        return RECIO_ERR_NOMEM;
    }
    w->bg = 1;
    return RECIO_OK;
}

static void recio__wr_stop(recio_writer *w) {
    if (!w->bg) return;
    recio__wr_idle(w);
    recio__mutex_lock(&w->mu);
    w->stop = 1;
    recio__cond_broadcast(&w->cv);
    recio__mutex_unlock(&w->mu);
    recio__thread_join(&w->thread);
    recio__cond_destroy(&w->cv);
    recio__mutex_destroy(&w->mu);
    w->bg = 0;
}
#endif

static recio_err recio__wr_flush(recio_writer *w) {
#ifdef RECIO_THREADS
    if (w->bg) return recio__wr_handoff(w);
#endif
    return recio__wr_flush_sync(w);
}

/* Nothing of ours is in flight: safe to touch the sink from this thread. */
static recio_err recio__wr_drain(recio_writer *w) {
    if (recio__wr_flush(w)) return w->sticky;
#ifdef RECIO_THREADS
    if (w->bg) return recio__wr_idle(w);
#endif
    return RECIO_OK;
}

/* Append bytes through the buffer; only blocks larger than the buffer go straight to the sink.
   Writing each large payload directly saves a copy but measured slower on ext4 (0.196 s vs 0.157 s
   for 528 MB of 110 KB records): the file system's cost per write() call outweighs the memcpy. */
static recio_err recio__wr_put(recio_writer *w, const void *data, size_t n) {
    if (n <= w->cap - w->len) {
        if (n) memcpy(w->buf + w->len, data, n);
        w->len += n;
        w->offset += n;
        return RECIO_OK;
    }
    if ((n > w->cap ? recio__wr_drain(w) : recio__wr_flush(w)) != RECIO_OK) return w->sticky;
    w->offset += n;
    if (n > w->cap) {
        if (w->io.write(w->io.user, data, n) != 0) return recio__wr_io_fail(w, w->offset - n, "write failed");
        return RECIO_OK;
    }
    memcpy(w->buf, data, n);
    w->len = n;
    return RECIO_OK;
}

static recio_err recio__wr_part(recio_writer *w, unsigned cflag, const unsigned char *p, size_t n) {
    unsigned char h[8];
    recio_store_u32le(h, RECIO_MAGIC);
    recio_store_u32le(h + 4, (uint32_t)cflag << 29 | (uint32_t)n);
    if (recio__wr_put(w, h, 8)) return w->sticky;
    return recio__wr_put(w, p, n);
}

static recio_err recio__wr_index(recio_writer *w, uint64_t key, uint64_t off) {
    char line[48];
    size_t n;
    recio__fmt(line, sizeof line, "%U\t%U\n", key, off);
    n = strlen(line);
    if (w->idx_len + n > sizeof w->idx_buf) {
        if (w->idx_io.write(w->idx_io.user, w->idx_buf, w->idx_len) != 0)
            return recio__wr_io_fail(w, off, "index write failed");
        w->idx_len = 0;
    }
    memcpy(w->idx_buf + w->idx_len, line, n);
    w->idx_len += n;
    return RECIO_OK;
}

/* First 4-aligned offset >= i (i 4-aligned) where the magic word stands in p[0, n), or n.
   Blocks of 64 bytes with one branch each let the compiler vectorise the compare: the per-word
   loop it replaces took 15% of the writer's time (perf, 110 KB records). */
static size_t recio__find_magic(const unsigned char *p, size_t i, size_t n) {
    static const unsigned char mb[4] = {0x0a, 0x23, 0xd7, 0xce};
    uint32_t m, w[16];
    int k, hit;
    memcpy(&m, mb, 4); /* the magic as this host loads it, whatever its byte order */
    for (; i + 64 <= n; i += 64) {
        memcpy(w, p + i, 64);
        for (hit = 0, k = 0; k < 16; k++) hit |= w[k] == m;
        if (hit) break;
    }
    for (; i + 4 <= n; i += 4) {
        memcpy(w, p + i, 4);
        if (w[0] == m) return i;
    }
    return n;
}

static recio_err recio__wr_record(recio_writer *w, uint64_t key, const void *data, size_t size) {
    static const unsigned char zeros[4] = {0, 0, 0, 0};
    const unsigned char *p = (const unsigned char *)data;
    size_t i, start = 0;
    uint64_t rec_off;
    unsigned cflag = 0;
    if (!w) return RECIO_ERR_ARG;
    if (!data && size)
        return recio__errf(w->errmsg, w->name, w->offset, "write: data is NULL with size %U", (uint64_t)size),
               RECIO_ERR_ARG;
    if (w->finished)
        return recio__errf(w->errmsg, w->name, w->offset, "%s", "write: the writer is finished"), RECIO_ERR_ARG;
    if (w->sticky) return w->sticky;
    if (size > RECIO_MAX_RECORD) {
        recio__errf(w->errmsg, w->name, w->offset, "record of %U bytes: RecordIO allows at most 2^29-1",
                    (uint64_t)size);
        return RECIO_ERR_TOO_BIG; /* nothing written: the file stays sound */
    }
    rec_off = w->offset;
    /* An aligned magic word inside the payload would read as a header: cut the payload there. */
    for (i = recio__find_magic(p, 0, size); i < size; i = recio__find_magic(p, i + 4, size)) {
        if (recio__wr_part(w, cflag == 0 ? 1 : 2, p + start, i - start)) return w->sticky;
        cflag = 3;
        start = i + 4;
    }
    if (recio__wr_part(w, cflag, p + start, size - start)) return w->sticky;
    if (recio__wr_put(w, zeros, RECIO__ALIGN4(size) - size)) return w->sticky;
    if (w->has_idx && recio__wr_index(w, key, rec_off)) return w->sticky;
    w->count++;
    return RECIO_OK;
}

RECIODEF recio_err recio_writer_write(recio_writer *w, const void *data, size_t size) {
    return recio__wr_record(w, w ? w->count : 0, data, size);
}

/* One writev of whole single-part records [*i, ...): headers, payloads and padding, up to about
   1 MiB or 21 records (3 pieces each). A record that needs parts stops the gathering. */
static recio_err recio__wr_gather(recio_writer *w, const recio_writer_item *it, size_t n, size_t *i) {
    static const unsigned char zeros[4] = {0, 0, 0, 0};
    unsigned char hdr[21][8];
    recio_iovec v[63];
    int nv = 0, k = 0;
    size_t bytes = 0;
    uint64_t start = w->offset;
    for (; *i < n && k < 21 && bytes < (1u << 20); (*i)++, k++) {
        size_t sz = it[*i].size, pad = RECIO__ALIGN4(sz) - sz;
        if (sz > RECIO_MAX_RECORD || !it[*i].data || recio__find_magic((const unsigned char *)it[*i].data, 0, sz) < sz)
            break;
        recio_store_u32le(hdr[k], RECIO_MAGIC);
        recio_store_u32le(hdr[k] + 4, (uint32_t)sz);
        v[nv].base = hdr[k], v[nv++].len = 8;
        if (sz) v[nv].base = it[*i].data, v[nv++].len = sz;
        if (pad) v[nv].base = zeros, v[nv++].len = pad;
        if (w->has_idx && recio__wr_index(w, it[*i].key, w->offset)) return w->sticky;
        w->offset += 8 + sz + pad;
        w->count++;
        bytes += 8 + sz + pad;
    }
    if (nv && w->io.writev(w->io.user, v, nv) != 0) return recio__wr_io_fail(w, start, "write failed");
    return RECIO_OK;
}

RECIODEF recio_err recio_writer_write_batch(recio_writer *w, const recio_writer_item *items, size_t n) {
    size_t i = 0;
    if (!w) return RECIO_ERR_ARG;
    if (!items && n)
        return recio__errf(w->errmsg, w->name, w->offset, "write_batch: items is NULL with n %U", (uint64_t)n),
               RECIO_ERR_ARG;
    if (w->finished)
        return recio__errf(w->errmsg, w->name, w->offset, "%s", "write_batch: the writer is finished"), RECIO_ERR_ARG;
    if (w->sticky) return w->sticky;
    while (i < n) {
        size_t before = i;
        int direct = w->io.writev != NULL;
#ifdef RECIO_THREADS
        direct = direct && !w->bg;
#endif
        if (direct && recio__wr_drain(w) == RECIO_OK && recio__wr_gather(w, items, n, &i)) return w->sticky;
        if (w->sticky) return w->sticky;
        if (i == before) { /* no writev, or a record that needs parts or is too big: the usual way */
            recio_err e = recio__wr_record(w, items[i].key, items[i].data, items[i].size);
            if (e) return e;
            i++;
        }
    }
    return RECIO_OK;
}

static recio_err recio__wr_alloc(recio_writer **out, const recio_writer_desc *d) {
    recio_writer *w = (recio_writer *)recio__malloc(&d->alloc, sizeof *w);
    if (!w) return RECIO_ERR_NOMEM;
    memset(w, 0, sizeof *w);
    w->alloc = d->alloc;
    w->cap = d->buffer_size ? d->buffer_size : RECIO__DEFAULT_BUFFER;
    w->buf = (unsigned char *)recio__malloc(&w->alloc, w->cap);
    w->name = recio__strdup(&w->alloc, d->name ? d->name : "<io>");
    *out = w;
    if (!w->buf || !w->name) return RECIO_ERR_NOMEM;
    return RECIO_OK;
}

static void recio__wr_free(recio_writer *w) {
#ifdef RECIO_THREADS
    recio__free(&w->alloc, w->spare);
#endif
    recio__free(&w->alloc, w->buf);
    recio__free(&w->alloc, w->name);
    recio__free(&w->alloc, w);
}

/* One output (which: 0 the data, 1 the .idx) created through its filesystem, atomic or in place. */
static recio_err recio__wr_create(recio_writer *w, const recio_writer_desc *d, const char *path, int which,
                                  recio_io *io) {
    char why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs = recio__fs_for(d->fs, path, why);
    recio_fs_out out;
    recio_err e = RECIO_ERR_UNSUPPORTED;
    if (fs && !fs->create) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", "the filesystem is read-only");
    else if (fs) e = fs->create(fs->user, path, d->atomic ? RECIO_FS_ATOMIC : RECIO_FS_IN_PLACE, &out, why);
    if (e) return recio__fs_fail(w->errmsg, path, "cannot create", e, why);
    *io = out.io;
    w->fs[which] = fs, w->pend[which] = out.pending, w->tmp[which] = out.tmp;
    return RECIO_OK;
}

/* The data file (when path is given) and the .idx through their filesystems. */
static recio_err recio__wr_files(recio_writer *w, const char *path, const recio_writer_desc *d) {
    recio_err e = path ? recio__wr_create(w, d, path, 0, &w->io) : RECIO_OK;
    if (e == RECIO_OK && d->index_path)
        w->has_idx = (e = recio__wr_create(w, d, d->index_path, 1, &w->idx_io)) == RECIO_OK;
    if (e == RECIO_OK && w->pend[0] && w->pend[1] && w->fs[0] != w->fs[1]) /* one commit makes both */
        e = recio__wr_fail(w, RECIO_ERR_ARG, 0, "an atomic .rec and its .idx on two filesystems");
    return e;
}

/* A memory writer writes into desc.mem through these hooks, with the buffer's allocator. */
static void recio__wr_mem_desc(recio_writer_desc *d) {
    memset(&d->io, 0, sizeof d->io);
    d->io.write = recio__mem_write;
    d->io.user = d->mem;
    if (!d->name) d->name = "<memory>";
    d->alloc = d->mem->alloc;
    d->index_path = NULL;
    d->atomic = 0;
}

/* The desc's errors, before anything is made: "NAME: offset 0: what" into desc.errmsg. */
static recio_err recio__wr_check(const recio_writer_desc *d, const char *path) {
    const char *what = NULL;
    if (d->mem && path) what = "desc.mem and a path: a memory writer has no path";
    else if (!path && !d->mem && !d->io.write) what = "no path, no desc.io.write and no desc.mem: nowhere to write";
    if (what) recio__errf(d->errmsg, path ? path : "<writer>", 0, "%s", what);
    return what ? RECIO_ERR_ARG : RECIO_OK;
}

RECIODEF recio_err recio_writer_open_desc(recio_writer **out, const char *path, const recio_writer_desc *desc) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    recio_err e;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.errmsg) d.errmsg[0] = 0;
    if (d.tmp_names) d.tmp_names[0] = d.tmp_names[1] = NULL;
    if (!out)
        return recio__errf(d.errmsg, path ? path : "<writer>", 0, "%s", "the handle pointer is NULL"), RECIO_ERR_ARG;
    *out = NULL;
    if ((e = recio__wr_check(&d, path)) != RECIO_OK) return e;
    if (d.mem) recio__wr_mem_desc(&d);
    if (!d.name) d.name = path ? path : "<io>";
    e = recio__wr_alloc(&w, &d);
    if (e == RECIO_OK && !path) w->io = d.io;
    if (e == RECIO_OK) e = recio__wr_files(w, path, &d); /* the .idx of a desc.io writer too */
#ifdef RECIO_THREADS
    if (e == RECIO_OK && d.background) e = recio__wr_start(w);
#endif
    recio__open_msg(d.errmsg, d.name, w ? w->errmsg : NULL, e);
    if (e != RECIO_OK && w && !path) memset(&w->io, 0, sizeof w->io); /* desc.io stays the caller's */
    if (e != RECIO_OK) return recio_writer_abort(w), e;               /* closes what opened, removes what it created */
    if (d.tmp_names) d.tmp_names[0] = w->tmp[0], d.tmp_names[1] = w->tmp[1];
    *out = w;
    return RECIO_OK;
}

RECIODEF recio_err recio_writer_open(recio_writer **w, const char *path) {
    return recio_writer_open_desc(w, path, NULL);
}

RECIODEF uint64_t recio_writer_tell(const recio_writer *w) { return w ? w->offset : 0; }
RECIODEF const char *recio_writer_errmsg(const recio_writer *w) { return w ? w->errmsg : ""; }

/* Flush, sync and close one sink; the first failure is recorded, later steps still run. */
static void recio__wr_finish(recio_writer *w, recio_io *io, int sync) {
    if (sync && !w->sticky && io->sync && io->sync(io->user) != 0) recio__wr_io_fail(w, w->offset, "sync failed");
    if (io->close && io->close(io->user) != 0 && !w->sticky) recio__wr_io_fail(w, w->offset, "close failed");
}

/* Drops the pending outputs: what was at their paths stays. */
static void recio__wr_discard(recio_writer *w) {
    int i;
    for (i = 0; i < 2; i++)
        if (w->pend[i]) w->fs[i]->discard(w->fs[i]->user, w->pend[i]), w->pend[i] = NULL;
}

/* The data file and the .idx replace what was there, both or neither (one commit of their
   filesystem); after an earlier error they are discarded. A note from a good commit (a kept copy
   that could not be removed) goes to the message; the commit still succeeds. */
static void recio__wr_commit(recio_writer *w) {
    const recio_fs *fs = w->pend[0] ? w->fs[0] : w->fs[1];
    char why[RECIO_ERRMSG_SIZE];
    recio_err e;
    if (w->sticky || !fs) {
        recio__wr_discard(w);
        return;
    }
    why[0] = 0;
    e = fs->commit(fs->user, w->pend, 2, why);
    w->pend[0] = w->pend[1] = NULL; /* the commit consumes them, whatever happens */
    if (e) recio__wr_fail(w, e, w->offset, why[0] ? why : recio_strerror(e));
    else if (why[0]) recio__errf(w->errmsg, w->name, w->offset, "%s", why);
}

/* ---- 1. CORE: output files that appear whole or not at all (recio_outfile, declared in CORE) ----
   Here, after the writer, as it is the writer's create and commit on one file: PATH's filesystem
   (FILESYSTEMS) makes the new version (RECIO_FS_ATOMIC, RECIO_FS_NEW without replace so a name taken
   meanwhile is never lost, RECIO_FS_DELETE for "no file"), and its commit puts it in place. A commit
   to be taken back later (undo) keeps the old file aside in the local column (recio__lfs_place with
   keep_all, recio__lfs_settle at close); elsewhere it waits for the close. */
#ifndef RECIO_NO_STDIO
#if defined(RECIO__POSIX) || defined(RECIO__WIN32)
#if defined(RECIO__POSIX)
/* The device and inode of the folder holding path (its first n bytes: "" is "."). */
static int recio__folder_id(const char *path, size_t n, struct stat *st) {
    recio_allocator none;
    char *d;
    int rc;
    if (n == 0) return stat(".", st);
    memset(&none, 0, sizeof none);
    if (!(d = (char *)recio__malloc(&none, n + 1))) return -1;
    memcpy(d, path, n);
    d[n] = 0;
    rc = stat(d, st);
    recio__free(&none, d);
    return rc;
}

static int recio__same_local(const char *a, const char *b) {
    struct stat x, y;
    const char *na, *nb;
    int ha, hb;
    ha = stat(a, &x) == 0, hb = stat(b, &y) == 0;
    if (ha || hb) return ha && hb && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
    na = strrchr(a, '/'), nb = strrchr(b, '/'); /* neither exists: one name in one folder */
    na = na ? na + 1 : a, nb = nb ? nb + 1 : b;
    if (strcmp(na, nb) != 0 || recio__folder_id(a, (size_t)(na - a), &x) != 0) return 0;
    return recio__folder_id(b, (size_t)(nb - b), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}
#else
/* The volume and file index of path (a folder too); 0, or -1 when it cannot be opened. */
static int recio__file_id(const char *path, BY_HANDLE_FILE_INFORMATION *id) {
    HANDLE h = CreateFileA(path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS, NULL);
    BOOL ok;
    if (h == INVALID_HANDLE_VALUE) return -1;
    ok = GetFileInformationByHandle(h, id);
    CloseHandle(h);
    return ok ? 0 : -1;
}

/* Neither exists: the full paths, compared as Windows compares names (any case, either slash). */
static int recio__same_full_path(const char *a, const char *b) {
    char fa[1024], fb[1024];
    DWORD la = GetFullPathNameA(a, sizeof fa, fa, NULL), lb = GetFullPathNameA(b, sizeof fb, fb, NULL), i;
    if (!la || !lb || la >= sizeof fa || lb >= sizeof fb) return strcmp(a, b) == 0;
    for (i = 0; i <= la; i++) {
        char p = fa[i] == '/' ? '\\' : fa[i], q = fb[i] == '/' ? '\\' : fb[i];
        if (p >= 'A' && p <= 'Z') p = (char)(p - 'A' + 'a');
        if (q >= 'A' && q <= 'Z') q = (char)(q - 'A' + 'a');
        if (p != q) return 0;
    }
    return 1;
}

static int recio__same_local(const char *a, const char *b) {
    BY_HANDLE_FILE_INFORMATION x, y;
    int ha, hb;
    ha = recio__file_id(a, &x) == 0, hb = recio__file_id(b, &y) == 0;
    if (ha || hb)
        return ha && hb && x.dwVolumeSerialNumber == y.dwVolumeSerialNumber && x.nFileIndexHigh == y.nFileIndexHigh &&
               x.nFileIndexLow == y.nFileIndexLow;
    return recio__same_full_path(a, b);
}
#endif

#else
static int recio__same_local(const char *a, const char *b) { return strcmp(a, b) == 0; }
#endif

RECIODEF int recio_same_file(const char *a, const char *b) {
    if (!a || !b) return 0;
    if (recio__scheme_len(a) || recio__scheme_len(b)) return strcmp(a, b) == 0; /* a URI: its spelling */
    return recio__same_local(recio__lfs_path(a), recio__lfs_path(b));
}

struct recio_outfile {
    recio_allocator alloc;
    const recio_fs *fs;
    recio_io io;         /* the new version's sink (zeroed once closed) */
    void *pending;       /* the fs's token until settled; NULL: written in place, or settled */
    char *path, *errmsg; /* errmsg: the caller's buffer, or NULL */
    int undo, no_sync, committed;
    int held;     /* committed with the old file kept aside (local column): settled at close */
    int deferred; /* committed with undo where nothing can be kept aside: made at close(f, 0) */
};

/* "PATH: offset 0: what" into the caller's buffer, when there is one. */
static void recio__of_say(char *msg, const char *path, const char *what, ...) {
    va_list ap;
    if (!msg) return;
    va_start(ap, what);
    recio__verrf(msg, path, 0, what, ap);
    va_end(ap);
}

/* Why PATH may not be written, into msg: an input, a folder, (without replace) a file, (io NULL)
   something that is not a file; or what its filesystem could not tell. */
static recio_err recio__of_check(const recio_fs *fs, const char *path, const recio_outfile_desc *d, int del,
                                 char *msg) {
    char why[RECIO_ERRMSG_SIZE];
    recio_fs_stat st;
    recio_err e;
    size_t i;
    for (i = 0; i < d->ninputs; i++)
        if (d->inputs[i] && recio_same_file(path, d->inputs[i]))
            return recio__errf(msg, path, 0, "is the input %s (the same file): never written over", d->inputs[i]),
                   RECIO_ERR_ARG;
    if (!fs->create)
        return recio__errf(msg, path, 0, "cannot create: the filesystem is read-only"), RECIO_ERR_UNSUPPORTED;
    why[0] = 0;
    if ((e = recio__fs_stat(fs, path, &st, why)) != RECIO_OK)
        return recio__fs_fail(msg, path, "cannot tell what is there", e, why);
    if (st.kind == RECIO_FS_DIR) return recio__errf(msg, path, 0, "is a folder"), RECIO_ERR_ARG;
    if (st.kind == RECIO_FS_FILE && !d->replace)
        return recio__errf(msg, path, 0, "exists: not replaced"), RECIO_ERR_ARG;
    if (st.kind == RECIO_FS_OTHER && del)
        return recio__errf(msg, path, 0, "is not a regular file: not removed"), RECIO_ERR_ARG;
    return RECIO_OK;
}

RECIODEF recio_err recio_outfile_open(recio_outfile **out, recio_io *io, const char *path,
                                      const recio_outfile_desc *desc) {
    recio_outfile_desc d;
    recio_outfile *f;
    recio_fs_out o;
    char msg[RECIO_ERRMSG_SIZE], why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs;
    recio_err e;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.errmsg) d.errmsg[0] = 0;
    if (!path || (d.ninputs && !d.inputs)) return RECIO_ERR_ARG;
    if (!(fs = recio__fs_for(d.fs, path, why)))
        e = recio__fs_fail(msg, path, "cannot create", RECIO_ERR_UNSUPPORTED, why);
    else e = recio__of_check(fs, path, &d, !io, msg);
    if (e == RECIO_OK) {
        e = fs->create(fs->user, path, !io ? RECIO_FS_DELETE : d.replace ? RECIO_FS_ATOMIC : RECIO_FS_NEW, &o, why);
        if (e != RECIO_OK) recio__fs_fail(msg, path, "cannot create", e, why);
    }
    if (e == RECIO_OK && !(f = (recio_outfile *)recio__malloc(&d.alloc, sizeof *f))) {
        if (io) o.io.close(o.io.user);
        if (o.pending) fs->discard(fs->user, o.pending);
        e = RECIO_ERR_NOMEM, recio__errf(msg, path, 0, "out of memory");
    }
    if (e != RECIO_OK) return d.errmsg ? (void)recio__fmt(d.errmsg, RECIO_ERRMSG_SIZE, "%s", msg) : (void)0, e;
    memset(f, 0, sizeof *f);
    f->alloc = d.alloc, f->fs = fs, f->errmsg = d.errmsg, f->undo = d.undo, f->no_sync = d.no_sync,
    f->pending = o.pending;
    if (io) f->io = *io = o.io;
    if (!(f->path = recio__strdup(&f->alloc, path))) return recio_outfile_close(f, 0), RECIO_ERR_NOMEM;
    *out = f;
    return RECIO_OK;
}

/* Sync (unless no_sync, or written in place) and close the sink; 0, or -1 with errno. */
static int recio__of_finish(recio_outfile *f) {
    recio_io io = f->io;
    int bad = 0;
    memset(&f->io, 0, sizeof f->io);
    if (f->pending && !f->no_sync && io.sync && io.sync(io.user) != 0) bad = 1;
    if (io.close && io.close(io.user) != 0) bad = bad ? 1 : 2;
    if (bad)
        recio__of_say(f->errmsg, f->path, bad == 1 ? "sync failed: %s" : "close failed: %s",
                      io.error && io.error(io.user) ? io.error(io.user) : recio__errno_str(errno));
    return bad ? -1 : 0;
}

/* The pending output in place now (consumed), or kept for close: held aside in the local column,
   deferred elsewhere. */
static recio_err recio__of_place(recio_outfile *f) {
    char why[RECIO_ERRMSG_SIZE];
    void *p = f->pending;
    recio_err e = RECIO_OK;
    why[0] = 0;
    if (f->undo && f->fs == &recio__fs_local) {
        if (recio__lfs_place(&p, 1, 1, why) == 0)
            return f->held = 1, why[0] ? recio__of_say(f->errmsg, f->path, "%s", why) : (void)0, RECIO_OK;
        recio__lfs_settle((recio__lfs_pending *)p, 1, why), recio__free(NULL, p);
        e = RECIO_ERR_IO;
    } else if (f->undo) {
        return f->deferred = 1, RECIO_OK;
    } else {
        e = f->fs->commit(f->fs->user, &p, 1, why);
    }
    f->pending = NULL;
    if (e != RECIO_OK) recio__of_say(f->errmsg, f->path, "cannot commit: %s", why[0] ? why : recio_strerror(e));
    else if (why[0]) recio__of_say(f->errmsg, f->path, "%s", why); /* a note: in place, but a name is left */
    return e;
}

RECIODEF recio_err recio_outfile_commit(recio_outfile *f) {
    if (!f || f->committed) return RECIO_ERR_ARG;
    f->committed = 1;
    if (f->errmsg) f->errmsg[0] = 0;
    if (recio__of_finish(f) != 0) {
        if (f->pending) f->fs->discard(f->fs->user, f->pending), f->pending = NULL;
        return RECIO_ERR_IO;
    }
    return f->pending ? recio__of_place(f) : RECIO_OK;
}

RECIODEF recio_err recio_outfile_close(recio_outfile *f, int undo) {
    char why[RECIO_ERRMSG_SIZE];
    recio_err e = RECIO_OK;
    if (!f) return RECIO_ERR_ARG;
    if (f->errmsg) f->errmsg[0] = 0;
    why[0] = 0;
    if (!f->committed && f->io.close) f->io.close(f->io.user); /* dropped: PATH keeps what it held */
    if (f->pending && f->held) {
        if (recio__lfs_settle((recio__lfs_pending *)f->pending, undo, why) != 0) {
            e = RECIO_ERR_IO;
            recio__of_say(f->errmsg, f->path, "cannot put the previous file back: %s", recio__errno_str(errno));
        }
        recio__free(NULL, f->pending);
    } else if (f->pending && f->deferred && !undo) {
        void *p = f->pending;
        if ((e = f->fs->commit(f->fs->user, &p, 1, why)) != RECIO_OK)
            recio__of_say(f->errmsg, f->path, "cannot commit: %s", why[0] ? why : recio_strerror(e));
    } else if (f->pending) {
        f->fs->discard(f->fs->user, f->pending);
    }
    if (e == RECIO_OK && why[0]) recio__of_say(f->errmsg, f->path, "%s", why);
    recio__free(&f->alloc, f->path);
    recio__free(&f->alloc, f);
    return e;
}
#endif

RECIODEF recio_err recio_writer_finish(recio_writer *w) {
    if (!w) return RECIO_ERR_ARG;
    if (w->finished) return w->sticky;
    w->finished = 1;
    if (!w->sticky) recio__wr_drain(w);
#ifdef RECIO_THREADS
    recio__wr_stop(w);
#endif
    if (w->has_idx && !w->sticky && w->idx_len && w->idx_io.write(w->idx_io.user, w->idx_buf, w->idx_len) != 0)
        recio__wr_io_fail(w, w->offset, "index write failed");
    recio__wr_finish(w, &w->io, w->pend[0] != NULL);
    if (w->has_idx) recio__wr_finish(w, &w->idx_io, w->pend[1] != NULL);
    recio__wr_commit(w);
    return w->sticky;
}

RECIODEF void recio_writer_abort(recio_writer *w) {
    if (!w) return;
    if (!w->finished) {
#ifdef RECIO_THREADS
        recio__wr_stop(w);
#endif
        if (w->io.close) w->io.close(w->io.user);
        if (w->has_idx && w->idx_io.close) w->idx_io.close(w->idx_io.user);
        recio__wr_discard(w);
    }
    recio__wr_free(w);
}

RECIODEF recio_err recio_writer_close(recio_writer *w) {
    recio_err e;
    if (!w) return RECIO_ERR_ARG;
    e = recio_writer_finish(w);
    recio__wr_free(w);
    return e;
}

/* ---- 3. INDEX AND IMAGE RECORDS: implementation ------------------------------------------------ */

/* Line-oriented text parsing shared by .idx and .lst: fields split on tabs (and spaces for .idx). */
typedef struct recio__lines {
    const char *p, *end, *name;
    uint64_t line;
} recio__lines;

/* Next non-empty line as [*b, *e) without the newline (and a Windows \r); 0 at the end. */
static int recio__next_line(recio__lines *L, const char **b, const char **e) {
    while (L->p < L->end) {
        const char *s = L->p, *t = (const char *)memchr(s, '\n', (size_t)(L->end - s));
        if (!t) t = L->end;
        L->p = t < L->end ? t + 1 : t;
        L->line++;
        if (t > s && t[-1] == '\r') t--;
        if (t > s) {
            *b = s;
            *e = t;
            return 1;
        }
    }
    return 0;
}

/* Parse a decimal unsigned 64-bit integer at *s (stops at e); 0 on success. */
static int recio__parse_u64(const char **s, const char *e, uint64_t *out) {
    uint64_t v = 0;
    const char *p = *s;
    if (p >= e || *p < '0' || *p > '9') return -1;
    for (; p < e && *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *s = p;
    *out = v;
    return 0;
}

static int recio__is_blank(char c) { return c == ' ' || c == '\t'; }

static recio_err recio__text_fail(char *msg, const recio__lines *L, const char *what) {
    if (msg) recio__fmt(msg, 256, "%s: line %U: %s", L->name ? L->name : "?", L->line, what);
    return RECIO_ERR_FORMAT;
}

/* An allocation failed while reading line N of a text file. */
static recio_err recio__nomem(char *msg, const char *name, uint64_t line) {
    if (msg) recio__fmt(msg, RECIO_ERRMSG_SIZE, "%s: line %U: out of memory", name ? name : "?", line);
    return RECIO_ERR_NOMEM;
}

/* One .idx line [b, e) as "key<blanks>offset": NULL, or what is wrong with it (the .idx parser's
   and the split's streamed index's words). */
static const char *recio__idx_line(const char *b, const char *e, recio_index_entry *en) {
    if (recio__parse_u64(&b, e, &en->key)) return "expected 'key<TAB>offset'";
    while (b < e && recio__is_blank(*b)) b++;
    if (recio__parse_u64(&b, e, &en->offset)) return "expected an offset after the key";
    while (b < e && recio__is_blank(*b)) b++;
    return b != e ? "unexpected text after the offset" : NULL;
}

/* Parse n bytes of .idx text into idx (its alloc set); "NAME: line N: what" into msg. */
static recio_err recio__index_parse(recio_index *idx, const char *text, size_t n, const char *name, char *msg) {
    recio__lines L;
    const char *b, *e, *bad = NULL;
    recio_buffer v;
    recio_index_entry en;
    recio_err err = RECIO_OK;
    memset(&v, 0, sizeof v);
    v.alloc = idx->alloc;
    L.p = text ? text : "";
    L.end = L.p + n;
    L.name = name;
    L.line = 0;
    while (!err && recio__next_line(&L, &b, &e))
        if ((bad = recio__idx_line(b, e, &en)) != NULL) err = recio__text_fail(msg, &L, bad);
        else if (recio__mem_write(&v, &en, sizeof en)) err = recio__nomem(msg, name, L.line);
    if (err) return recio_buffer_free(&v), err;
    idx->entries = (recio_index_entry *)(void *)v.data;
    idx->count = v.size / sizeof en;
    return RECIO_OK;
}

RECIODEF void recio_index_free(recio_index *idx) {
    if (!idx) return;
    recio__free(&idx->alloc, idx->entries);
    idx->entries = NULL;
    idx->count = 0;
}

/* The rest of an opened file into memory (closes io): .idx, .lst, and the iterator's side files. */
static recio_err recio__slurp_io(const recio_allocator *a, recio_io *io, const char *path, char **out, size_t *n,
                                 char *msg) {
    recio_buffer b;
    char chunk[65536];
    int64_t k;
    memset(&b, 0, sizeof b);
    if (a) b.alloc = *a;
    *out = NULL;
    *n = 0;
    while ((k = io->read(io->user, chunk, sizeof chunk)) > 0)
        if (recio__mem_write(&b, chunk, (size_t)k)) {
            k = -2;
            break;
        }
    if (io->close) io->close(io->user); /* optional in a caller's hooks */
    if (k < 0) {
        if (k != -2) recio__errf(msg, path, b.size, "read failed");
        recio_buffer_free(&b);
        return k == -2 ? RECIO_ERR_NOMEM : RECIO_ERR_IO;
    }
    *out = (char *)b.data;
    *n = b.size;
    return RECIO_OK;
}

/* A reader on path through the filesystems of list (the split's files, the iterator's re-reads);
   a failed open says why in msg (RECIO_ERRMSG_SIZE bytes), as "PATH: offset 0: cannot open: WHY". */
static recio_err recio__open_reader(const recio_fs *list, const char *path, recio_reader_desc *rd, recio_reader **r,
                                    char *msg) {
    rd->name = path;
    rd->fs = list;
    rd->errmsg = msg;
    return recio_reader_open_desc(r, path, rd);
}

/* A whole small file into memory through its filesystem (.idx, .lst, the iterator's side files). */
static recio_err recio__slurp(const recio_fs *list, const recio_allocator *a, const char *path, char **out, size_t *n,
                              char *msg) {
    char why[RECIO_ERRMSG_SIZE];
    recio_io io;
    recio_err e;
    *out = NULL;
    *n = 0;
    if ((e = recio__fs_open(list, path, &io, why)) != RECIO_OK) return recio__fs_fail(msg, path, "cannot open", e, why);
    return recio__slurp_io(a, &io, path, out, n, msg);
}

RECIODEF recio_err recio_index_load(recio_index *idx, const char *path, const recio_index_desc *desc) {
    recio_index_desc d;
    char *text;
    size_t n;
    recio_err e;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.errmsg) d.errmsg[0] = 0;
    if (!idx)
        return recio__errf(d.errmsg, path ? path : "<index>", 0, "%s", "the index pointer is NULL"), RECIO_ERR_ARG;
    memset(idx, 0, sizeof *idx);
    idx->alloc = d.alloc;
    if (!path && !d.text)
        return recio__errf(d.errmsg, "<index>", 0, "%s", "no path and no desc.text: nothing to load"), RECIO_ERR_ARG;
    if (d.text) return recio__index_parse(idx, d.text, d.size, path ? path : "<memory>", d.errmsg);
    if ((e = recio__slurp(d.fs, &d.alloc, path, &text, &n, d.errmsg)) != RECIO_OK) return e;
    e = recio__index_parse(idx, text, n, path, d.errmsg);
    recio__free(&d.alloc, text);
    return e;
}

/* path created through its filesystem to be written whole (RECIO_FS_ATOMIC): the bytes appear only
   at recio__whole_end, and a failure leaves PATH as it was. On S3 every object is such a pending
   one, which nothing appears of until its commit. */
static recio_err recio__whole_begin(const recio_fs *list, const char *path, const recio_fs **fs, recio_fs_out *out,
                                    char *msg) {
    char why[RECIO_ERRMSG_SIZE];
    recio_err e = RECIO_ERR_UNSUPPORTED;
    memset(out, 0, sizeof *out);
    *fs = recio__fs_for(list, path, why);
    if (*fs && !(*fs)->create) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", "the filesystem is read-only");
    else if (*fs) e = (*fs)->create((*fs)->user, path, RECIO_FS_ATOMIC, out, why);
    if (e && msg) recio__fs_fail(msg, path, "cannot create", e, why);
    return e;
}

/* The end of recio__whole_begin's output (its io closed): committed when ok, else discarded. */
static recio_err recio__whole_end(const recio_fs *fs, const char *path, recio_fs_out *out, int ok, char *msg) {
    char why[RECIO_ERRMSG_SIZE];
    recio_err e;
    if (!out->pending) return RECIO_OK; /* written in place (a FIFO, a device) */
    if (!ok) return fs->discard(fs->user, out->pending), RECIO_OK;
    why[0] = 0;
    if ((e = fs->commit(fs->user, &out->pending, 1, why)) != RECIO_OK && msg)
        recio__fs_fail(msg, path, "cannot commit", e, why);
    return e;
}

RECIODEF recio_err recio_index_save(const recio_index *idx, const char *path, const recio_index_desc *desc) {
    recio_io io;
    recio_fs_out out;
    const recio_fs *fs;
    char buf[4096]; /* many short lines: written a block at a time */
    char *errmsg = desc ? desc->errmsg : NULL;
    size_t i, len = 0;
    uint64_t at = 0;
    recio_err e;
    int bad = 0;
    if (errmsg) errmsg[0] = 0;
    if (!path) return recio__errf(errmsg, "<index>", 0, "%s", "the path is NULL"), RECIO_ERR_ARG;
    if (!idx || (!idx->entries && idx->count))
        return recio__errf(errmsg, path, 0, "%s",
                           idx ? "the index has a count but no entries" : "the index pointer is NULL"),
               RECIO_ERR_ARG;
    if ((e = recio__whole_begin(desc ? desc->fs : NULL, path, &fs, &out, errmsg)) != RECIO_OK) return e;
    io = out.io;
    for (i = 0; i <= idx->count && !bad; i++) {
        if (len && (i == idx->count || len > sizeof buf - 48)) {
            if ((bad = io.write(io.user, buf, len) != 0) && errmsg)
                recio__errf(errmsg, path, at, "write failed: %s", recio__io_why(&io));
            at += len, len = 0;
        }
        if (i == idx->count) break;
        recio__fmt(buf + len, 48, "%U\t%U\n", idx->entries[i].key, idx->entries[i].offset);
        len += strlen(buf + len);
    }
    if (io.close && io.close(io.user) != 0 && !bad) {
        bad = 1;
        if (errmsg) recio__errf(errmsg, path, at, "close failed: %s", recio__io_why(&io));
    }
    e = recio__whole_end(fs, path, &out, !bad, errmsg);
    return bad ? RECIO_ERR_IO : e;
}

/* Parse a float at *s: delegates to strtod on a bounded copy (the line is not NUL-terminated). */
static int recio__parse_float(const char **s, const char *e, float *out) {
    char tmp[64], *end;
    size_t n = 0;
    const char *p = *s;
    double v;
    while (p + n < e && !recio__is_blank(p[n]) && n < sizeof tmp - 1) n++;
    if (n == 0 || n == sizeof tmp - 1) return -1;
    memcpy(tmp, p, n);
    tmp[n] = 0;
    v = strtod(tmp, &end);
    if (end != tmp + n) return -1;
    *out = (float)v;
    *s = p + n;
    return 0;
}

static int recio__is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* The last tab-separated field of [b, e): returns where it starts (b: there is no tab), *field is
   that start past its leading blanks. */
static const char *recio__lst_last(const char *b, const char *e, const char **field) {
    const char *last;
    for (last = e; last > b && last[-1] != '\t'; last--) {}
    for (*field = last; *field < e && recio__is_space(**field); ++*field) {}
    return last;
}

/* One .lst line: index, labels..., path (the last tab-separated field; it may hold spaces). The
   line and each field are stripped as im2rec's read_list does. */
static recio_err recio__lst_line(int mask_column, char *msg, recio__lines *L, const char *b, const char *e,
                                 recio_buffer *items, recio_buffer *store) {
    recio_lst_item it;
    const char *last, *path, *mask = NULL, *pe;
    float f;
    size_t label_at, path_at, mask_at;
    while (b < e && recio__is_space(*b)) b++;
    while (e > b && recio__is_space(e[-1])) e--;
    if (b == e) return RECIO_OK; /* a blank line */
    if ((last = recio__lst_last(b, e, &path)) == b)
        return recio__text_fail(msg, L, "expected 'index<TAB>label...<TAB>path'");
    pe = e;
    if (mask_column) { /* the last field is the mask; the image's path is the one before it */
        mask = path;
        for (pe = last - 1; pe > b && recio__is_space(pe[-1]); pe--) {}
        if ((last = recio__lst_last(b, pe, &path)) == b)
            return recio__text_fail(msg, L, "expected 'index<TAB>label...<TAB>image<TAB>mask'");
        if (path == pe || memchr(mask, 0, (size_t)(e - mask)))
            return recio__text_fail(msg, L, "a bad image or mask path");
    }
    if (memchr(path, 0, (size_t)(pe - path))) return recio__text_fail(msg, L, "a NUL byte in the path");
    memset(&it, 0, sizeof it);
    if (recio__parse_u64(&b, last, &it.index)) return recio__text_fail(msg, L, "the index is not a whole number");
    while (b < last && *b == ' ') b++;
    if (*b != '\t') return recio__text_fail(msg, L, "the index is not a whole number");
    /* the line's labels (float-aligned), path and mask path, one after the other in the storage */
    while (store->size % sizeof f)
        if (recio__mem_write(store, "", 1)) return RECIO_ERR_NOMEM;
    label_at = store->size;
    for (;;) {
        while (b < last && recio__is_space(*b)) b++;
        if (b >= last) break;
        if (recio__parse_float(&b, last, &f)) return recio__text_fail(msg, L, "a label is not a number");
        if (recio__mem_write(store, &f, sizeof f)) return RECIO_ERR_NOMEM;
        it.nlabels++;
    }
    if (it.nlabels == 0) return recio__text_fail(msg, L, "no label before the path");
    path_at = store->size;
    if (recio__mem_write(store, path, (size_t)(pe - path)) || recio__mem_write(store, "", 1)) return RECIO_ERR_NOMEM;
    mask_at = store->size;
    if (mask && (recio__mem_write(store, mask, (size_t)(e - mask)) || recio__mem_write(store, "", 1)))
        return RECIO_ERR_NOMEM;
    /* pointers are fixed up once the storage stops moving */
    it.labels = (const float *)(uintptr_t)label_at;
    it.path = (const char *)(uintptr_t)path_at;
    it.mask = mask ? (const char *)(uintptr_t)mask_at : NULL; /* never offset 0: the labels come first */
    return recio__mem_write(items, &it, sizeof it) ? RECIO_ERR_NOMEM : RECIO_OK;
}

/* Parse n bytes of .lst text into l as desc d says (l zeroed, its alloc set). */
static recio_err recio__lst_parse(recio_lst *l, const char *text, size_t n, const char *name, const recio_lst_desc *d) {
    recio__lines L;
    const char *b, *e;
    recio_buffer items, store;
    recio_err err = RECIO_OK;
    size_t i;
    char msg[RECIO_ERRMSG_SIZE];
    msg[0] = 0;
    memset(&items, 0, sizeof items);
    items.alloc = l->alloc;
    store = items;
    L.p = text ? text : "";
    L.end = L.p + n;
    L.name = name;
    L.line = 0;
    while (!err && recio__next_line(&L, &b, &e))
        if ((err = recio__lst_line(d->mask_column, msg, &L, b, e, &items, &store)) == RECIO_ERR_FORMAT &&
            d->on_bad_line) {
            d->on_bad_line(d->user, msg);
            msg[0] = 0;
            l->skipped++;
            err = RECIO_OK;
        }
    if (err == RECIO_ERR_NOMEM) recio__nomem(msg, name, L.line);
    if (err && d->errmsg) recio__fmt(d->errmsg, RECIO_ERRMSG_SIZE, "%s", msg);
    if (!err) { /* the storage is one block; the items their own array */
        l->items = (recio_lst_item *)(void *)items.data;
        l->count = items.size / sizeof(recio_lst_item);
        l->storage = store.data;
        for (i = 0; i < l->count; i++) {
            recio_lst_item *it = &l->items[i];
            it->labels = (const float *)(void *)(store.data + (uintptr_t)it->labels);
            it->path = (const char *)store.data + (uintptr_t)it->path;
            if (it->mask) it->mask = (const char *)store.data + (uintptr_t)it->mask;
        }
        items.data = store.data = NULL;
    }
    recio_buffer_free(&items);
    recio_buffer_free(&store);
    return err;
}

RECIODEF recio_err recio_lst_load(recio_lst *l, const char *path, const recio_lst_desc *desc) {
    recio_lst_desc d;
    char *text;
    size_t n;
    recio_err e;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (d.errmsg) d.errmsg[0] = 0;
    if (!l) return recio__errf(d.errmsg, path ? path : "<lst>", 0, "%s", "the list pointer is NULL"), RECIO_ERR_ARG;
    memset(l, 0, sizeof *l);
    l->alloc = d.alloc;
    if (!path && !d.text)
        return recio__errf(d.errmsg, "<lst>", 0, "%s", "no path and no desc.text: nothing to load"), RECIO_ERR_ARG;
    if (d.text) return recio__lst_parse(l, d.text, d.size, path ? path : "<memory>", &d);
    if ((e = recio__slurp(d.fs, &d.alloc, path, &text, &n, d.errmsg)) != RECIO_OK) return e;
    e = recio__lst_parse(l, text, n, path, &d);
    recio__free(&d.alloc, text);
    return e;
}

RECIODEF void recio_lst_free(recio_lst *l) {
    if (!l) return;
    recio__free(&l->alloc, l->items);
    recio__free(&l->alloc, l->storage);
    l->items = NULL;
    l->storage = NULL;
    l->count = 0;
}

/* A segmentation record's mask tail at the end of the image bytes: split it off (see recio.h, 3). */
static void recio__mask_tail_find(recio_irecord *r) {
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const unsigned char *b = (const unsigned char *)r->image, *end = b + r->image_size;
    size_t n;
    if (r->image_size < RECIO_MASK_TAIL_SIZE + sizeof png || memcmp(end - 4, "RMSK", 4) != 0) return;
    n = recio_load_u32le(end - 8);
    if (n < sizeof png || n > r->image_size - RECIO_MASK_TAIL_SIZE) return;
    if (memcmp(end - 8 - n, png, sizeof png) != 0) return;
    r->mask = end - 8 - n;
    r->mask_size = n;
    r->image_size -= n + RECIO_MASK_TAIL_SIZE;
}

RECIODEF recio_err recio_irecord_unpack(recio_irecord *out, const void *payload, size_t size) {
    const unsigned char *p = (const unsigned char *)payload;
    size_t need;
    if (!out || (!payload && size)) return RECIO_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (size < RECIO_IRHEADER_SIZE) return RECIO_ERR_FORMAT;
    out->flag = recio_load_u32le(p);
    out->label = recio_load_f32le(p + 4);
    out->id = recio_load_u64le(p + 8);
    out->id2 = recio_load_u64le(p + 16);
    if (out->flag > (size - RECIO_IRHEADER_SIZE) / 4) return RECIO_ERR_FORMAT;
    need = RECIO_IRHEADER_SIZE + (size_t)out->flag * 4;
    out->labels = out->flag ? p + RECIO_IRHEADER_SIZE : NULL;
    out->nlabels = out->flag ? out->flag : 1;
    out->all_labels = out->flag ? p + RECIO_IRHEADER_SIZE : p + 4;
    out->image = p + need;
    out->image_size = size - need;
    recio__mask_tail_find(out);
    return RECIO_OK;
}

RECIODEF size_t recio_irecord_mask_tail(void *dst, size_t mask_size) {
    unsigned char *d = (unsigned char *)dst;
    if (!d || mask_size > 0xffffffffu) return 0;
    recio_store_u32le(d, (uint32_t)mask_size);
    memcpy(d + 4, "RMSK", 4);
    return RECIO_MASK_TAIL_SIZE;
}

RECIODEF size_t recio_irecord_pack_header(void *dst, const float *labels, uint32_t nlabels, uint64_t id, uint64_t id2) {
    unsigned char *p = (unsigned char *)dst;
    uint32_t i, n = nlabels & ~RECIO_LABEL_ARRAY;
    uint32_t flag = n == 1 && !(nlabels & RECIO_LABEL_ARRAY) ? 0 : n; /* a number: in the header */
    if (!p) return RECIO_IRHEADER_SIZE + 4 * (size_t)flag;
    recio_store_u32le(p, flag);
    recio_store_f32le(p + 4, flag == 0 && n == 1 ? labels[0] : 0.0f);
    recio_store_u64le(p + 8, id);
    recio_store_u64le(p + 16, id2);
    for (i = 0; i < flag; i++) recio_store_f32le(p + RECIO_IRHEADER_SIZE + 4 * (size_t)i, labels[i]);
    return RECIO_IRHEADER_SIZE + 4 * (size_t)flag;
}

/* A label that is a whole number in [lo, hi], as the layout's widths must be: in float and integer
   arithmetic only (1e9 is exact in a float), so a board's soft-float build links no double code. */
static int recio__whole(float v, uint32_t lo, size_t hi) {
    return v >= (float)lo && v <= 1e9f && (float)(uint32_t)v == v && (size_t)(uint32_t)v <= hi;
}

RECIODEF recio_err recio_det_layout_of(const float *labels, size_t n, recio_det_layout *out) {
    size_t a, b;
    if ((!labels && n) || !out) return RECIO_ERR_ARG;
    if (n < 2 || !recio__whole(labels[0], 2, n) || !recio__whole(labels[1], 5, 1000000000u)) return RECIO_ERR_FORMAT;
    a = (size_t)labels[0], b = (size_t)labels[1];
    if ((n - a) % b != 0 || (n - a) / b > UINT32_MAX) return RECIO_ERR_FORMAT;
    out->header_width = (uint32_t)a, out->object_width = (uint32_t)b, out->count = (uint32_t)((n - a) / b);
    return RECIO_OK;
}

RECIODEF size_t recio_det_labels(float *dst, size_t cap, const float *extra, uint32_t nextra, const float *objects,
                                 uint32_t object_width, uint32_t count) {
    size_t body = (size_t)object_width * count, n = 2 + (size_t)nextra + body;
    if (object_width < 5 || (count && body / count != object_width) || n < body) return 0;
    if (n > cap || !dst) return n;
    dst[0] = (float)(2 + (size_t)nextra), dst[1] = (float)object_width;
    if (nextra) memcpy(dst + 2, extra, nextra * sizeof *dst);
    if (body) memcpy(dst + 2 + nextra, objects, body * sizeof *dst);
    return n;
}

/* ---- 4. SPLIT: implementation ------------------------------------------------------------------ */

#define RECIO__SPLIT_READERS 16 /* open files kept by shuffled reads when mapped (no descriptor each) */
#define RECIO__SPLIT_FDS 4      /* ... and when each holds a descriptor and a buffer */
#define RECIO__PROBE_BLOCK 16384u

typedef struct recio__sfile {
    char *path;
    char *idx;           /* the index file its offsets came from, or NULL */
    uint64_t size, base; /* base: offset of its byte 0 in the concatenation */
    uint64_t first;      /* index mode: global position of its first record */
    uint64_t *offs;      /* sorted local record offsets (byte-mode ordinals and counts) */
    size_t noffs;
    int have_offs, sized;
} recio__sfile;

typedef struct recio__sreader {
    recio_reader *r;
    unsigned file;
    uint64_t used;
} recio__sreader;

/* A few bytes at a time from one file, through a block window (boundary scans, header hops). */
typedef struct recio__probe {
    recio_io io;
    int open;
    unsigned file;
    unsigned char *buf;
    uint64_t off;
    size_t len;
} recio__probe;

struct recio_split {
    recio_allocator alloc;
    recio__sfile *files; /* before d: short offsets, smaller code on Thumb */
    unsigned nfiles;
    recio_split_desc d;
    char *index_path;
    unsigned rank, nsplit;
    recio_buffer flist; /* files' storage (alloc: s->alloc, set at open) */
    uint64_t total;
    int indexed;
    const char **names;      /* the files' paths, for recio_split_info.files */
    recio_split_where where; /* of the last record given */
    /* byte mode */
    uint64_t nbegin, nend, begin, end;
    unsigned cur;
    uint64_t ord;
    int started, bdone;
    /* index mode: positions [sbeg, send) of the epoch order belong to this rank */
    uint64_t n, sbeg, send;
    uint64_t *offs; /* NONE/FULL: global offset of each position */
    uint64_t *perm; /* FULL: the epoch's order */
    /* CHUNK */
    uint64_t nchunks, nwin, win, K, W;
    uint64_t *cstart, *cperm, *wstart;
    uint64_t *went; /* CHUNK: the window's records, each an (offset, position) pair */
    /* the epoch stream */
    uint64_t epoch, count, target, seq;
    unsigned resets; /* recio_split_reset's calls, the open's included */
    recio__sreader rd[RECIO__SPLIT_READERS];
    size_t rbuf; /* reader buffer when not set in the desc (0: the reader's default) */
    uint64_t tick;
    recio__probe probe;
    recio__rm_keep rm; /* the remote files' connections, kept from one open to the next */
    recio_err sticky;
    char errmsg[RECIO_ERRMSG_SIZE];
};

static recio_err recio__sp_fail(recio_split *s, recio_err e, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    recio__vfmt(s->errmsg, RECIO_ERRMSG_SIZE, f, ap);
    va_end(ap);
    s->sticky = e;
    return e;
}

static const char *recio__sp_name(const recio_split *s, unsigned f) { return s->files[f].path; }

/* "FILE: offset N: what" about the bytes of file f. */
static recio_err recio__sp_failat(recio_split *s, recio_err e, unsigned file, uint64_t off, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    recio__verrf(s->errmsg, recio__sp_name(s, file), off, f, ap);
    va_end(ap);
    s->sticky = e;
    return e;
}

/* A stream on path through the split's filesystems; a failure says "PATH: offset 0: cannot open: WHY". */
static recio_err recio__sp_open_io(recio_split *s, const char *path, recio_io *io) {
    char why[RECIO_ERRMSG_SIZE];
    recio_err e = recio__fs_open(s->d.fs, path, io, why);
    if (e) s->sticky = recio__fs_fail(s->errmsg, path, "cannot open", e, why);
    return e;
}

/* Largest i with files[i].base <= x: the file holding global offset x. */
static unsigned recio__sp_file_at(const recio_split *s, uint64_t x) {
    unsigned lo = 0, hi = s->nfiles;
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (s->files[mid].base <= x) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Number of v[i] < x in a sorted array. */
static size_t recio__sp_lower(const uint64_t *v, size_t n, uint64_t x) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int recio__sp_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- file list: ';'-separated items, wildcards and directories expanded in sorted order ---- */

static recio_err recio__sp_push(recio_split *s, const char *path, size_t n) {
    recio__sfile f;
    memset(&f, 0, sizeof f);
    if (!(f.path = (char *)recio__malloc(&s->alloc, n + 1))) return RECIO_ERR_NOMEM;
    memcpy(f.path, path, n);
    f.path[n] = 0;
    if (recio__mem_write(&s->flist, &f, sizeof f)) return recio__free(&s->alloc, f.path), RECIO_ERR_NOMEM;
    s->files = (recio__sfile *)(void *)s->flist.data;
    s->nfiles++;
    return RECIO_OK;
}

/* glob(3)'s matching of name s against one component p: * ? [a-z] [!x] (a leading ']' is itself,
   a '[' without its ']' too), ASCII case folded when fold is set. */
static int recio__wildc(int c, int fold) { return fold ? recio__lower(c) : c; }

static int recio__wildmatch(const char *p, const char *s, int fold) {
    for (;; p++, s++) {
        int c = recio__wildc((unsigned char)*s, fold), hit = 0, neg = p[1] == '!' || p[1] == '^';
        const char *q = p + 1 + neg;
        if (*p == '*') {
            do
                if (recio__wildmatch(p + 1, s, fold)) return 1;
            while (*s++);
            return 0;
        }
        if (!*s || !*p) return !*s && !*p;
        for (; *p == '[' && *q && (*q != ']' || q == p + 1 + neg); q++) {
            int lo = recio__wildc((unsigned char)*q, fold), hi = lo;
            if (q[1] == '-' && q[2] && q[2] != ']') hi = recio__wildc((unsigned char)q[2], fold), q += 2;
            hit |= c >= lo && c <= hi;
        }
        if (*p == '[' && *q) {
            if (hit == neg) return 0;
            p = q;
        } else if (*p != '?' && recio__wildc((unsigned char)*p, fold) != c) {
            return 0;
        }
    }
}

/* A directory listing's keeper: each name that matches pattern (one path component) becomes
   prefix + name + rest, a file of the list when rest is empty, else a pattern expanded in turn. */
typedef struct recio__names {
    recio_split *s;
    const char *prefix, *pattern, *rest;
    int fold;
    recio_err e;
} recio__names;

static recio_err recio__sp_expand(recio_split *s, const char *pat, int top);

static int recio__names_add(void *ctx, const char *name, recio_fs_kind kind) {
    recio__names *k = (recio__names *)ctx;
    char *full;
    (void)kind;
    if ((name[0] == '.' && k->pattern[0] != '.') || !recio__wildmatch(k->pattern, name, k->fold)) return 0;
    full = recio__cat(&k->s->alloc, k->prefix, name, k->rest);
    k->e = !full      ? RECIO_ERR_NOMEM
           : *k->rest ? recio__sp_expand(k->s, full, 0)
                      : recio__sp_push(k->s, full, strlen(full));
    recio__free(&k->s->alloc, full);
    return k->e != RECIO_OK;
}

static int recio__is_sep(char c, const recio_fs *fs) {
    return c == '/' || (c == '\\' && fs && (fs->flags & RECIO_FS_BACKSLASH));
}

/* The files pat matches go to the list: its first component with a wildcard is matched against
   the listing of the directory before it (kept with its separator: "dir/", "C:\\",
   "s3://bucket/prefix/"; "." when there is none), and what follows is matched the same way below
   each match; a path without wildcards is taken when something is there. Only the top level's
   listing may fail (glob(3) skips unreadable directories below). */
static recio_err recio__sp_expand(recio_split *s, const char *pat, int top) {
    char why[RECIO_ERRMSG_SIZE], *dir;
    const recio_fs *fs = recio__fs_for(s->d.fs, pat, why);
    size_t w = strcspn(pat, "*?["), a = w, b = w, d;
    recio__names k;
    recio_fs_stat st;
    recio_err e = RECIO_ERR_UNSUPPORTED;
    if (!pat[w]) return recio__fs_stat(s->d.fs, pat, &st, why) || !st.kind ? RECIO_OK : recio__sp_push(s, pat, w);
    while (a && !recio__is_sep(pat[a - 1], fs)) a--;
    while (pat[b] && !recio__is_sep(pat[b], fs)) b++;
    if (!(dir = (char *)recio__malloc(&s->alloc, b + 3))) return RECIO_ERR_NOMEM;
    d = a ? a : 1;
    memcpy(dir, a ? pat : ".", d);
    dir[d] = 0;
    memcpy(dir + d + 1, pat + a, b - a);
    dir[d + 1 + b - a] = 0;
    k.s = s, k.prefix = dir + (a == 0), k.pattern = dir + d + 1, k.rest = pat + b, k.e = RECIO_OK;
    k.fold = fs && (fs->flags & RECIO_FS_FOLD_CASE);
    if (fs && !fs->list) recio__fmt(why, RECIO_ERRMSG_SIZE, "%s", "the filesystem cannot list directories");
    else if (fs) e = fs->list(fs->user, dir, recio__names_add, &k, why);
    if (e && top) e = recio__sp_fail(s, e, "%s: cannot open directory: %s", dir, why[0] ? why : recio_strerror(e));
    recio__free(&s->alloc, dir);
    return k.e ? k.e : top ? e : RECIO_OK;
}

static int recio__sp_cmp_file(const void *a, const void *b) {
    return strcmp(((const recio__sfile *)a)->path, ((const recio__sfile *)b)->path);
}

/* The files pattern pat matches, sorted (as glob(3) sorts them); dir: the directory whose *.rec
   files pat names. */
static recio_err recio__sp_glob(recio_split *s, const char *pat, const char *dir) {
    unsigned first = s->nfiles;
    recio_err e = recio__sp_expand(s, pat, 1);
    if (!e && s->nfiles == first)
        e = recio__sp_fail(s, RECIO_ERR_IO, dir ? "%s: no .rec file in this directory" : "%s: no file matches",
                           dir ? dir : pat);
    if (!e) qsort(s->files + first, s->nfiles - first, sizeof *s->files, recio__sp_cmp_file);
    return e;
}

/* dir ends with a separator ("s3://b/prefix/", "dir/"): its files are dir + name, with no second
   separator (which asked S3 for the keys under "prefix//", none, and named local files "dir//a.rec"). */
static int recio__sp_sep_end(const recio_split *s, const char *dir) {
    char why[RECIO_ERRMSG_SIZE];
    size_t n = strlen(dir);
    return n && recio__is_sep(dir[n - 1], recio__fs_for(s->d.fs, dir, why));
}

/* One item of the list: a pattern, a directory (its *.rec files, not its .idx or .lst companions,
   as DIR/NAME), or a file (its size kept: one stat per file is the whole open cost). What cannot
   be told now is told when the sizes are taken. */
static recio_err recio__sp_item(recio_split *s, const char *item, size_t n) {
    char why[RECIO_ERRMSG_SIZE], *z = (char *)recio__malloc(&s->alloc, n + 1), *pat;
    recio_fs_stat st;
    recio_err e, known = RECIO_ERR_ARG;
    if (!z) return RECIO_ERR_NOMEM;
    memcpy(z, item, n);
    z[n] = 0;
    if (strpbrk(z, "*?[") && !recio__scheme_is(z, "http") &&
        !recio__scheme_is(z, "https")) /* a URL's '?' starts its query */
        e = recio__sp_glob(s, z, NULL);
    else if ((known = recio__fs_stat(s->d.fs, z, &st, why)) == RECIO_OK && st.kind == RECIO_FS_DIR)
        e = (pat = recio__cat(&s->alloc, z, recio__sp_sep_end(s, z) ? "*.rec" : "/*.rec", "")) != NULL
                ? recio__sp_glob(s, pat, z)
                : RECIO_ERR_NOMEM,
        recio__free(&s->alloc, pat);
    else if ((e = recio__sp_push(s, item, n)) == RECIO_OK && known == RECIO_OK && st.kind == RECIO_FS_FILE) {
        s->files[s->nfiles - 1].size = st.size;
        s->files[s->nfiles - 1].sized = 1;
    }
    recio__free(&s->alloc, z);
    return e;
}

static recio_err recio__sp_size(recio_split *s, const char *path, uint64_t *size) {
    char why[RECIO_ERRMSG_SIZE];
    recio_fs_stat st;
    recio_err e = recio__fs_stat(s->d.fs, path, &st, why);
    if (e == RECIO_OK && st.kind == RECIO_FS_NONE) e = RECIO_ERR_IO;
    if (e)
        return s->sticky =
                   recio__fs_fail(s->errmsg, path, st.kind == RECIO_FS_FILE ? "no size" : "cannot open", e, why);
    if (st.kind != RECIO_FS_FILE) return recio__sp_fail(s, RECIO_ERR_IO, "%s: not a regular file", path);
    *size = st.size;
    return RECIO_OK;
}

/* Sizes and bases; 0-byte files are dropped as dmlc-core does, sizes must be whole words. */
static recio_err recio__sp_files(recio_split *s, const char *uris) {
    const char *p = uris, *q;
    unsigned i, kept = 0;
    recio_err e;
    for (; *p; p = *q ? q + 1 : q) {
        q = strchr(p, ';');
        if (!q) q = p + strlen(p);
        if (q > p && (e = recio__sp_item(s, p, (size_t)(q - p))) != RECIO_OK) return e;
    }
    if (s->nfiles == 0) return recio__sp_fail(s, RECIO_ERR_ARG, "no file in '%s'", uris);
    for (i = 0; i < s->nfiles; i++) {
        recio__sfile *f = &s->files[i];
        if (!f->sized && (e = recio__sp_size(s, f->path, &f->size)) != RECIO_OK) return e;
        if (f->size % 4)
            return recio__sp_failat(s, RECIO_ERR_CORRUPT, i, f->size - f->size % 4,
                                    "size %U is not a multiple of 4: not a RecordIO file, or truncated", f->size);
    }
    for (i = 0; i < s->nfiles; i++) {
        recio__sfile *f = &s->files[i];
        if (f->size == 0) {
            recio__free(&s->alloc, f->path);
            continue;
        }
        f->base = s->total;
        s->total += f->size;
        s->files[kept++] = *f;
    }
    s->nfiles = kept;
    if (kept == 0) return recio__sp_fail(s, RECIO_ERR_ARG, "%s: every file is empty: no records", uris);
    return RECIO_OK;
}

/* ---- probing: a window of bytes at any offset of one file ---- */

static void recio__probe_close(recio__probe *p) {
    if (p->open && p->io.close) p->io.close(p->io.user);
    p->open = 0;
    p->len = 0;
}

/* Bytes [at, at+n) of file f (fewer at its end) as *out; n <= RECIO__PROBE_BLOCK. */
static recio_err recio__probe_get(recio_split *s, unsigned f, uint64_t at, size_t n, const unsigned char **out,
                                  size_t *got) {
    recio__probe *p = &s->probe;
    recio_err e;
    if (!p->open || p->file != f) {
        recio__probe_close(p);
        if ((e = recio__sp_open_io(s, recio__sp_name(s, f), &p->io)) != RECIO_OK) return e;
        p->open = 1;
        p->file = f;
    }
    if (!p->buf && !(p->buf = (unsigned char *)recio__malloc(&s->alloc, RECIO__PROBE_BLOCK))) return RECIO_ERR_NOMEM;
    if (!(at >= p->off && at + n <= p->off + p->len)) {
        int64_t k = 0;
        if (!p->io.seek || p->io.seek(p->io.user, at) != 0)
            return recio__sp_failat(s, RECIO_ERR_IO, f, at, "seek failed");
        p->off = at;
        p->len = 0;
        while (p->len < RECIO__PROBE_BLOCK &&
               (k = p->io.read(p->io.user, p->buf + p->len, RECIO__PROBE_BLOCK - p->len)) > 0)
            p->len += (size_t)k;
        if (k < 0) return recio__sp_failat(s, RECIO_ERR_IO, f, at, "read failed: %s", recio__io_why(&p->io));
    }
    *out = p->buf + (at - p->off);
    *got = p->off + p->len - at < n ? (size_t)(p->off + p->len - at) : n;
    return RECIO_OK;
}

/* dmlc-core's SeekRecordBegin: the first record head at or after local offset x of file f, word by
   word (a magic followed by a cflag 2/3 word skips both), or the file's end. */
static recio_err recio__sp_scan(recio_split *s, unsigned f, uint64_t x, uint64_t *head) {
    const unsigned char *p;
    size_t got;
    recio_err e;
    for (;;) {
        if ((e = recio__probe_get(s, f, x, 8, &p, &got)) != RECIO_OK) return e;
        if (got < 4) break;
        if (recio_load_u32le(p) != RECIO_MAGIC) {
            x += 4;
            continue;
        }
        if (got < 8)
            return recio__sp_failat(s, RECIO_ERR_CORRUPT, f, x,
                                    "magic word at end of file: not a RecordIO file, or truncated");
        if (recio_load_u32le(p + 4) >> 29 <= 1) {
            *head = x;
            return RECIO_OK;
        }
        x += 8;
    }
    *head = s->files[f].size;
    return RECIO_OK;
}

/* The record at local offset x of file f: check its head and step over all its parts. */
static recio_err recio__sp_hop(recio_split *s, unsigned f, uint64_t x, uint64_t *next) {
    const unsigned char *p;
    size_t got;
    uint64_t at = x, size = s->files[f].size;
    unsigned first = 1, cflag;
    recio_err e;
    do {
        uint32_t lrec;
        if ((e = recio__probe_get(s, f, at, 8, &p, &got)) != RECIO_OK) return e;
        if (got < 8 || recio_load_u32le(p) != RECIO_MAGIC)
            return recio__sp_failat(s, RECIO_ERR_CORRUPT, f, at, "no record header here");
        lrec = recio_load_u32le(p + 4);
        cflag = lrec >> 29;
        if (first ? cflag > 1 : (cflag != 2 && cflag != 3))
            return recio__sp_failat(s, RECIO_ERR_CORRUPT, f, at, "unexpected part (cflag %u)", cflag);
        at += 8 + RECIO__ALIGN4((uint64_t)(lrec & RECIO_MAX_RECORD));
        if (at > size) return recio__sp_failat(s, RECIO_ERR_CORRUPT, f, x, "record runs past end of file");
        first = 0;
    } while (cflag == 1 || cflag == 2);
    *next = at;
    return RECIO_OK;
}

/* ---- index files ---- */

/* An index's offset `off` must start a record inside the `limit` bytes it indexes. */
static recio_err recio__sp_check_off(recio_split *s, const char *path, uint64_t off, uint64_t limit) {
    if (off + 8 > limit)
        return recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: offset %U is past the end of the data (%U bytes): stale index?",
                              path, off, limit);
    if (off % 4)
        return recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: offset %U is not a record head (not 4-aligned): stale index?",
                              path, off);
    return RECIO_OK;
}

static recio_err recio__sp_load_index(recio_split *s, const char *path, uint64_t limit, uint64_t **out, size_t *n);

/* The .idx that goes with file f (recio_index_path's rule) into f->idx; 1 when there is one. */
static int recio__sp_index_name(recio_split *s, recio__sfile *f, recio_err *e) {
    size_t cap = strlen(f->path) + 5;
    int found = 0;
    *e = RECIO_OK;
    if (f->idx) return 1;
    if (!(f->idx = (char *)recio__malloc(&s->alloc, cap))) return *e = RECIO_ERR_NOMEM, 0;
    recio_index_path(f->idx, cap, f->path, s->d.fs, &found);
    if (!found) recio__free(&s->alloc, f->idx), f->idx = NULL;
    return found;
}

static int recio__sp_find_index(recio_split *s, recio__sfile *f, recio_err *e) {
    if (!recio__sp_index_name(s, f, e)) return 0;
    *e = recio__sp_load_index(s, f->idx, f->size, &f->offs, &f->noffs);
    f->have_offs = *e == RECIO_OK;
    return 1;
}

static recio_err recio__sp_no_index(recio_split *s, const recio__sfile *f) {
    return recio__sp_fail(
        s, RECIO_ERR_IO,
        "%s: no index (looked for %s.idx and the name with .rec replaced by .idx); build one with 'recio index %s'",
        f->path, f->path, f->path);
}

/* Every record head of file f: from its index, else by hopping over the headers. */
static recio_err recio__sp_file_offsets(recio_split *s, unsigned fi) {
    recio__sfile *f = &s->files[fi];
    recio_buffer v;
    uint64_t x = 0;
    recio_err e;
    if (f->have_offs) return RECIO_OK;
    if (recio__sp_find_index(s, f, &e)) return e;
    memset(&v, 0, sizeof v);
    v.alloc = s->alloc;
    while (x < f->size) {
        if (recio__mem_write(&v, &x, sizeof x)) return recio_buffer_free(&v), RECIO_ERR_NOMEM;
        if ((e = recio__sp_hop(s, fi, x, &x)) != RECIO_OK) return recio_buffer_free(&v), e;
    }
    f->offs = (uint64_t *)(void *)v.data;
    f->noffs = v.size / sizeof x;
    f->have_offs = 1;
    return RECIO_OK;
}

/* ---- byte mode ---- */

/* A nominal offset moved to the next record head within its file (kept when it starts a file). */
static recio_err recio__sp_adjust(recio_split *s, uint64_t x, uint64_t *out) {
    unsigned f;
    uint64_t head = 0;
    recio_err e;
    if (x >= s->total) return *out = s->total, RECIO_OK;
    f = recio__sp_file_at(s, x);
    if (x == s->files[f].base) return *out = x, RECIO_OK;
    if ((e = recio__sp_scan(s, f, x - s->files[f].base, &head)) != RECIO_OK) return e;
    *out = s->files[f].base + head;
    return RECIO_OK;
}

static uint64_t recio__sp_nominal(const recio_split *s, uint64_t r) {
    uint64_t step = s->total / s->nsplit + (s->total % s->nsplit != 0);
    step = (step + 3) & ~(uint64_t)3;
    return r > s->total / step ? s->total : (r * step < s->total ? r * step : s->total);
}

static recio_err recio__sp_byte_part(recio_split *s, unsigned r, uint64_t *nb, uint64_t *ne, uint64_t *b, uint64_t *e) {
    recio_err err;
    *nb = recio__sp_nominal(s, r);
    *ne = recio__sp_nominal(s, (uint64_t)r + 1);
    if (*nb == *ne) return *b = *e = *nb, RECIO_OK;
    if ((err = recio__sp_adjust(s, *nb, b)) != RECIO_OK) return err;
    return recio__sp_adjust(s, *ne, e);
}

/* Record heads before global offset x (every file's offsets loaded). */
static uint64_t recio__sp_heads_before(const recio_split *s, uint64_t x) {
    uint64_t n = 0;
    unsigned i;
    for (i = 0; i < s->nfiles && s->files[i].base < x; i++)
        n += recio__sp_lower(s->files[i].offs, s->files[i].noffs, x - s->files[i].base);
    return n;
}

/* Equalising byte parts needs every part's count: from each file's index, else header hops. */
static recio_err recio__sp_byte_counts(recio_split *s) {
    uint64_t lo = (uint64_t)-1, hi = 0, nb, ne, b, en;
    unsigned i, r;
    recio_err e;
    for (i = 0; i < s->nfiles; i++)
        if ((e = recio__sp_file_offsets(s, i)) != RECIO_OK) return e;
    for (r = 0; r < s->nsplit; r++) {
        uint64_t c;
        if ((e = recio__sp_byte_part(s, r, &nb, &ne, &b, &en)) != RECIO_OK) return e;
        c = recio__sp_heads_before(s, en) - recio__sp_heads_before(s, b);
        if (r == s->rank) s->count = c;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
    }
    s->target = s->d.equalize == RECIO_EQUALIZE_PAD ? hi : lo;
    return RECIO_OK;
}

/* ---- readers: a few open files, least recently used closed first ---- */

/* Files are mapped only when asked (use_mmap = 1). A page of a mapping past the end of a file that
   was truncated or rewritten while mapped raises SIGBUS, which a library cannot catch without a
   process-wide signal handler: the default reads through a buffer (one read of about two records
   per shuffled record, some 2 us, nothing next to decoding the image) and reports such a file as
   an error. */
static int recio__sp_mmap(const recio_split *s) { return s->d.use_mmap > 0; }

static recio_err recio__sp_reader(recio_split *s, unsigned f, recio_reader **out) {
    recio__sreader *slot = &s->rd[0];
    recio_reader_desc rd;
    const char *path = recio__sp_name(s, f);
    recio_err e;
    /* Sequential reading needs one file at a time: closing it first lets its buffer be reused
       while still warm in the cache. Shuffled reading keeps a few files open. */
    int k, slots = !s->d.shuffle ? 1 : recio__sp_mmap(s) ? RECIO__SPLIT_READERS : RECIO__SPLIT_FDS;
    for (k = 0; k < slots; k++) {
        if (s->rd[k].r && s->rd[k].file == f) {
            s->rd[k].used = ++s->tick;
            return *out = s->rd[k].r, RECIO_OK;
        }
        if (!s->rd[k].r || s->rd[k].used < slot->used) slot = &s->rd[k];
        if (!slot->r) break;
    }
    recio_reader_close(slot->r);
    slot->r = NULL;
    memset(&rd, 0, sizeof rd);
    rd.alloc = s->alloc;
    rd.buffer_size = s->d.buffer_size ? s->d.buffer_size : s->rbuf;
    rd.use_mmap = recio__sp_mmap(s);
    if ((e = recio__open_reader(s->d.fs, path, &rd, &slot->r, s->errmsg)) != RECIO_OK) return s->sticky = e;
    slot->file = f;
    slot->used = ++s->tick;
    return *out = slot->r, RECIO_OK;
}

static recio_err recio__sp_read_fail(recio_split *s, recio_reader *r, recio_err e, unsigned f) {
    if (s->indexed && s->files[f].idx)
        return recio__sp_fail(s, e, "%s (offset from %s: stale index? rebuild it with 'recio index')", r->errmsg,
                              s->files[f].idx);
    if (s->indexed && s->index_path)
        return recio__sp_fail(s, e, "%s (offset from %s: stale index?)", r->errmsg, s->index_path);
    return recio__sp_fail(s, e, "%s", r->errmsg);
}

/* The record whose head is at global offset g. */
static recio_err recio__sp_read_at(recio_split *s, uint64_t g, recio_record *rec, unsigned *fi) {
    unsigned f = recio__sp_file_at(s, g);
    uint64_t local = g - s->files[f].base;
    recio_reader *r;
    recio_err e;
    if ((e = recio__sp_reader(s, f, &r)) != RECIO_OK) return e;
    if (recio_reader_tell(r) != local && (e = recio_reader_seek(r, local)) != RECIO_OK)
        return recio__sp_read_fail(s, r, e, f);
    if ((e = recio_reader_next(r, rec)) != RECIO_OK)
        return recio__sp_read_fail(s, r, e == RECIO_END ? RECIO_ERR_CORRUPT : e, f);
    *fi = f;
    return RECIO_OK;
}

/* Ordinal of the record at local offset x of file f by hopping over the headers before it: only
   those, so damage later in the file cannot keep a part from the sound records of its range. */
static recio_err recio__sp_hop_ordinal(recio_split *s, unsigned f, uint64_t x, uint64_t *ord) {
    uint64_t at = 0, n = 0;
    recio_err e;
    for (; at < x; n++)
        if ((e = recio__sp_hop(s, f, at, &at)) != RECIO_OK) return e;
    if (at != x)
        return recio__sp_failat(s, RECIO_ERR_CORRUPT, f, x, "no record starts here (the headers before it lead to %U)",
                                at);
    *ord = n;
    return RECIO_OK;
}

/* Ordinal of the record at local offset x of file f, from its offsets (index or hop). */
static recio_err recio__sp_ordinal(recio_split *s, unsigned f, uint64_t x, uint64_t *ord) {
    recio__sfile *sf = &s->files[f];
    size_t k;
    recio_err e;
    if (!sf->have_offs && !recio__sp_find_index(s, sf, &e)) return recio__sp_hop_ordinal(s, f, x, ord);
    if (!sf->have_offs) return e;
    k = recio__sp_lower(sf->offs, sf->noffs, x);
    if (k == sf->noffs || sf->offs[k] != x)
        return recio__sp_failat(s, RECIO_ERR_FORMAT, f, x, "record not listed in %s: stale index?",
                                sf->idx ? sf->idx : "the header hop");
    *ord = k;
    return RECIO_OK;
}

static recio_err recio__sp_byte_next(recio_split *s, recio_record *rec, recio_split_where *w) {
    recio_reader *r;
    recio_err e;
    if (s->bdone) return RECIO_END;
    if (!s->started) {
        uint64_t local;
        if (s->begin >= s->end) return s->bdone = 1, RECIO_END;
        s->cur = recio__sp_file_at(s, s->begin);
        local = s->begin - s->files[s->cur].base;
        s->ord = local == 0 ? 0 : RECIO_SPLIT_UNKNOWN;
        if (local && s->d.ordinals && (e = recio__sp_ordinal(s, s->cur, local, &s->ord)) != RECIO_OK) return e;
        if ((e = recio__sp_reader(s, s->cur, &r)) != RECIO_OK) return e;
        if ((e = recio_reader_seek(r, local)) != RECIO_OK) return recio__sp_read_fail(s, r, e, s->cur);
        s->started = 1;
    }
    for (;;) {
        if ((e = recio__sp_reader(s, s->cur, &r)) != RECIO_OK) return e;
        e = recio_reader_next(r, rec);
        /* records appended since the split opened lie beyond the sizes the parts were cut from: no
           part has them, and their offsets would collide with the next file's */
        if (e == RECIO_OK && rec->offset < s->files[s->cur].size) break;
        if (e != RECIO_OK && e != RECIO_END) return recio__sp_read_fail(s, r, e, s->cur);
        if (++s->cur >= s->nfiles || s->files[s->cur].base >= s->end) return s->bdone = 1, RECIO_END;
        if ((e = recio__sp_reader(s, s->cur, &r)) != RECIO_OK) return e;
        if ((e = recio_reader_seek(r, 0)) != RECIO_OK) return recio__sp_read_fail(s, r, e, s->cur);
        s->ord = 0;
    }
    w->key = s->files[s->cur].base + rec->offset;
    if (w->key >= s->end) return s->bdone = 1, RECIO_END;
    w->file = s->cur;
    w->ordinal = s->ord;
    w->index = RECIO_SPLIT_UNKNOWN;
    if (s->ord != RECIO_SPLIT_UNKNOWN) s->ord++;
    return RECIO_OK;
}

/* ---- index mode ---- */

/* Fisher-Yates over n elements of w words each (the epoch's order: w = 1; a window's (offset,
   position) pairs: w = 2), from seed. */
static void recio__sp_fisher_yates(uint64_t *v, uint64_t n, unsigned w, uint64_t seed) {
    recio_rng rng;
    uint64_t i;
    unsigned k;
    rng.state = seed;
    for (i = n; i > 1; i--) {
        uint64_t *a = v + (i - 1) * w, *b = v + recio_rng_below(&rng, i) * w;
        for (k = 0; k < w; k++) {
            uint64_t t = a[k];
            a[k] = b[k];
            b[k] = t;
        }
    }
}

static void recio__sp_iota(uint64_t *v, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n; i++) v[i] = i;
}

/* CHUNK mode reads its index as a stream and keeps every K-th offset: an index that does not fit
   in memory never has to. An index not sorted by offset is loaded whole instead (RECIO_END). */
typedef struct recio__ixstream {
    recio_buffer starts; /* global offset of every K-th record (all: of every record, in file order) */
    uint64_t count, last;
    unsigned fi; /* one global index: the file holding `last` */
    int global, all;
} recio__ixstream;

static recio_err recio__sp_ix_line(recio_split *s, recio__ixstream *st, const char *b, const char *e, uint64_t line,
                                   const char *path, uint64_t base, uint64_t limit) {
    recio_index_entry en;
    const char *bad = recio__idx_line(b, e, &en);
    uint64_t g;
    recio_err err;
    if (bad) return recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: line %U: %s", path, line, bad);
    if ((err = recio__sp_check_off(s, path, en.offset, limit)) != RECIO_OK) return err;
    if (s->d.key_end && (en.key < s->d.key_begin || en.key >= s->d.key_end))
        return RECIO_OK; /* outside the key range */
    g = base + en.offset;
    if (st->all) return recio__mem_write(&st->starts, &g, sizeof g) ? RECIO_ERR_NOMEM : (st->count++, RECIO_OK);
    if (st->count && g <= st->last) return RECIO_END;
    if (st->global)
        while (st->fi + 1 < s->nfiles && g >= s->files[st->fi + 1].base) s->files[++st->fi].first = st->count;
    if (st->count % s->K == 0 && recio__mem_write(&st->starts, &g, sizeof g)) return RECIO_ERR_NOMEM;
    st->count++;
    st->last = g;
    return RECIO_OK;
}

static recio_err recio__sp_ix_stream(recio_split *s, recio__ixstream *st, const char *path, uint64_t base,
                                     uint64_t limit) {
    enum { BLOCK = 65536 };
    recio_io io;
    char *buf = (char *)recio__malloc(&s->alloc, BLOCK + 1);
    size_t have = 0;
    recio__lines L; /* the block's whole lines */
    int64_t k = 1;
    recio_err e = RECIO_OK;
    if (!buf) return RECIO_ERR_NOMEM;
    if ((e = recio__sp_open_io(s, path, &io)) != RECIO_OK) return recio__free(&s->alloc, buf), e;
    L.line = 0;
    while (!e && k > 0) {
        const char *b, *t;
        if ((k = io.read(io.user, buf + have, BLOCK - have)) < 0)
            e = recio__sp_fail(s, RECIO_ERR_IO, "%s: read failed", path);
        have += k > 0 ? (size_t)k : 0;
        if (k == 0 && have && buf[have - 1] != '\n') buf[have++] = '\n';       /* a last line without its newline */
        for (L.end = buf + have; L.end > buf && L.end[-1] != '\n'; L.end--) {} /* the whole lines */
        for (L.p = buf; !e && recio__next_line(&L, &b, &t);)
            e = recio__sp_ix_line(s, st, b, t, L.line, path, base, limit);
        if (!e && L.end == buf && have == BLOCK)
            e = recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: line %U is too long", path, L.line + 1);
        have -= (size_t)(L.end - buf); /* the unfinished line moves to the front */
        if (have) memmove(buf, L.end, have);
    }
    if (io.close) io.close(io.user);
    recio__free(&s->alloc, buf);
    return e;
}

/* The offsets of every index through st: the one global index, or each file's own (found beside
   it), its base added. */
static recio_err recio__sp_ix_walk(recio_split *s, recio__ixstream *st) {
    unsigned i;
    recio_err e = RECIO_OK;
    st->starts.alloc = s->alloc;
    if ((st->global = s->index_path != NULL) != 0) return recio__sp_ix_stream(s, st, s->index_path, 0, s->total);
    for (i = 0; !e && i < s->nfiles; i++) {
        recio__sfile *f = &s->files[i];
        f->first = st->count;
        if (!recio__sp_index_name(s, f, &e) && !e) e = recio__sp_no_index(s, f);
        if (!e) e = recio__sp_ix_stream(s, st, f->idx, f->base, f->size);
    }
    return e;
}

/* st's offsets (st.all) sorted into *out, each listed once. path: the index they all came from;
   NULL: each file's own, their bases added. */
static recio_err recio__sp_ix_sorted(recio_split *s, recio__ixstream *st, const char *path, uint64_t **out, size_t *n) {
    uint64_t *v = (uint64_t *)(void *)st->starts.data;
    size_t i;
    recio_err e = RECIO_OK;
    *n = (size_t)st->count;
    if (*n) qsort(v, *n, sizeof *v, recio__sp_cmp_u64);
    for (i = 1; i < *n && !e; i++)
        if (v[i] == v[i - 1]) {
            const recio__sfile *f = &s->files[path ? 0 : recio__sp_file_at(s, v[i])];
            e = recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: offset %U is listed twice", path ? path : f->idx,
                               path ? v[i] : v[i] - f->base);
        }
    if (e) return recio__free(&s->alloc, v), *n = 0, e;
    *out = v;
    return RECIO_OK;
}

/* An index, read as a stream, into a sorted array of its offsets, each below `limit` and 4-aligned. */
static recio_err recio__sp_load_index(recio_split *s, const char *path, uint64_t limit, uint64_t **out, size_t *n) {
    recio__ixstream st;
    recio_err e;
    memset(&st, 0, sizeof st);
    st.starts.alloc = s->alloc;
    st.all = 1;
    if ((e = recio__sp_ix_stream(s, &st, path, 0, limit)) != RECIO_OK) return recio_buffer_free(&st.starts), e;
    return recio__sp_ix_sorted(s, &st, path, out, n);
}

/* Global offsets of every indexed record, sorted: one index (global offsets) or one per file. */
static recio_err recio__sp_gather(recio_split *s) {
    recio__ixstream st;
    size_t n;
    recio_err e;
    memset(&st, 0, sizeof st);
    st.all = 1;
    if ((e = recio__sp_ix_walk(s, &st)) != RECIO_OK) return recio_buffer_free(&st.starts), e;
    e = recio__sp_ix_sorted(s, &st, s->index_path, &s->offs, &n);
    s->n = n;
    return e;
}

/* Chunk starts from the index stream(s); RECIO_END when an index is not sorted by offset. */
static recio_err recio__sp_chunk_stream(recio_split *s) {
    recio__ixstream st;
    unsigned i;
    recio_err e;
    uint64_t end;
    memset(&st, 0, sizeof st);
    e = recio__sp_ix_walk(s, &st);
    for (i = st.fi + 1; st.global && !e && i < s->nfiles; i++) s->files[i].first = st.count;
    end = s->total;
    if (!e && recio__mem_write(&st.starts, &end, sizeof end)) e = RECIO_ERR_NOMEM;
    if (e) {
        if (e == RECIO_END) s->errmsg[0] = 0, s->sticky = RECIO_OK;
        recio_buffer_free(&st.starts);
        return e;
    }
    s->n = st.count;
    s->cstart = (uint64_t *)(void *)st.starts.data;
    return RECIO_OK;
}

/* Positions [r*n/N, (r+1)*n/N) when equalised, else dmlc's ceil(n/N) per rank. */
static void recio__sp_slice(const recio_split *s, uint64_t r, uint64_t *b) {
    uint64_t n = s->n, N = s->nsplit, step;
    if (s->d.equalize) {
        *b = n / N * r + n % N * r / N;
        return;
    }
    step = n / N + (n % N != 0);
    *b = r > n / (step ? step : 1) ? n : (r * step < n ? r * step : n);
}

/* Every offset in memory, sorted (NONE, FULL, and CHUNK over an unsorted index). */
static recio_err recio__sp_index_all(recio_split *s) {
    unsigned i;
    uint64_t c;
    recio_err e;
    if ((e = recio__sp_gather(s)) != RECIO_OK) return e;
    for (i = 0; i < s->nfiles; i++) s->files[i].first = recio__sp_lower(s->offs, (size_t)s->n, s->files[i].base);
    if (s->d.shuffle != RECIO_SHUFFLE_CHUNK || s->n == 0) return RECIO_OK;
    if (!(s->cstart = (uint64_t *)recio__malloc(&s->alloc, (size_t)((s->n + s->K - 1) / s->K + 1) * sizeof(uint64_t))))
        return RECIO_ERR_NOMEM;
    for (c = 0; c * s->K < s->n; c++) s->cstart[c] = s->offs[c * s->K];
    s->cstart[c] = s->total;
    recio__free(&s->alloc, s->offs); /* from here one offset per chunk is all that is kept */
    s->offs = NULL;
    return RECIO_OK;
}

static recio_err recio__sp_index_open(recio_split *s) {
    recio_err e = RECIO_END;
    s->K = s->d.chunk_records ? s->d.chunk_records : 256;
    s->W = s->d.window_chunks ? s->d.window_chunks : 16;
    if (s->K > (SIZE_MAX / 16) / s->W)
        return recio__sp_fail(s, RECIO_ERR_ARG, "chunk_records * window_chunks is too large");
    if (s->d.shuffle == RECIO_SHUFFLE_CHUNK) e = recio__sp_chunk_stream(s);
    if (e == RECIO_END) e = recio__sp_index_all(s);
    if (e) return e;
    if (s->n == 0)
        return recio__sp_fail(s, RECIO_ERR_FORMAT, "%s: the index lists no record",
                              s->index_path ? s->index_path : s->files[0].path);
    recio__sp_slice(s, s->rank, &s->sbeg);
    recio__sp_slice(s, (uint64_t)s->rank + 1, &s->send);
    s->begin = !s->offs ? 0 : s->sbeg < s->n ? s->offs[s->sbeg] : s->total;
    s->end = !s->offs ? s->total : s->send < s->n ? s->offs[s->send] : s->total;
    s->count = s->send - s->sbeg;
    if (s->d.shuffle) { /* a buffered random read costs one buffer fill: make it about two records */
        uint64_t avg = s->total / s->n * 2;
        s->rbuf = avg < 4096 ? 4096 : avg > RECIO__DEFAULT_BUFFER ? RECIO__DEFAULT_BUFFER : (size_t)avg;
    }
    /* balanced slices hold floor(n/N) or ceil(n/N) records */
    if (s->d.equalize) s->target = s->n / s->nsplit + (s->d.equalize == RECIO_EQUALIZE_PAD && s->n % s->nsplit != 0);
    if (s->d.shuffle == RECIO_SHUFFLE_FULL) {
        if (s->n > SIZE_MAX / sizeof(uint64_t)) return RECIO_ERR_NOMEM;
        if (!(s->perm = (uint64_t *)recio__malloc(&s->alloc, (size_t)s->n * sizeof(uint64_t)))) return RECIO_ERR_NOMEM;
    }
    if (s->d.shuffle == RECIO_SHUFFLE_CHUNK) {
        s->nchunks = (s->n + s->K - 1) / s->K;
        s->nwin = (s->nchunks + s->W - 1) / s->W;
        s->cperm = (uint64_t *)recio__malloc(&s->alloc, (size_t)s->nchunks * sizeof(uint64_t));
        s->wstart = (uint64_t *)recio__malloc(&s->alloc, (size_t)(s->nwin + 1) * sizeof(uint64_t));
        s->went = (uint64_t *)recio__malloc(&s->alloc, (size_t)(s->K * s->W) * 16);
        if (!s->cperm || !s->wstart || !s->went) return RECIO_ERR_NOMEM;
    }
    return RECIO_OK;
}

#ifndef RECIO_NO_IMAGE
/* Global offset of the lowest record the index lists (within the key range); 0 in byte mode. Only
   the iterator's shape probe asks (image builds). */
static uint64_t recio__sp_first(const recio_split *s) {
    if (!s->indexed || !s->n) return 0;
    return s->offs ? s->offs[0] : s->cstart ? s->cstart[0] : 0;
}
#endif

/* CHUNK: the epoch's chunk order and where each window starts in the sequence. */
static void recio__sp_chunk_epoch(recio_split *s) {
    uint64_t w, p = 0, short_by = s->nchunks * s->K - s->n; /* the last chunk's missing records */
    recio__sp_iota(s->cperm, s->nchunks);
    recio__sp_fisher_yates(s->cperm, s->nchunks, 1, recio_seed_for(s->d.seed, s->epoch, 0));
    while (s->cperm[p] != s->nchunks - 1) p++; /* where the short chunk went */
    s->wstart[0] = 0;
    for (w = 0; w < s->nwin; w++) { /* every chunk holds K records but the short one */
        uint64_t end = (w + 1) * s->W < s->nchunks ? (w + 1) * s->W : s->nchunks;
        s->wstart[w + 1] = end * s->K - (p < end ? short_by : 0);
    }
    s->win = RECIO_SPLIT_UNKNOWN;
}

/* Offsets of the records of window w, found by hopping from each chunk's first record. */
static recio_err recio__sp_chunk_window(recio_split *s, uint64_t w) {
    uint64_t c, at = 0, i;
    recio_err e;
    for (c = w * s->W; c < (w + 1) * s->W && c < s->nchunks; c++) {
        uint64_t ch = s->cperm[c], g = s->cstart[ch], nrec = ch == s->nchunks - 1 ? s->n - ch * s->K : s->K;
        for (i = 0; i < nrec; i++) { /* a sequential pass over the chunk (cheap when mapped) */
            recio_record rec;
            recio_reader *r;
            unsigned f;
            s->went[2 * at] = g;
            s->went[2 * at++ + 1] = ch * s->K + i;
            if ((e = recio__sp_read_at(s, g, &rec, &f)) != RECIO_OK) return e;
            if ((e = recio__sp_reader(s, f, &r)) != RECIO_OK) return e;
            g = s->files[f].base + recio_reader_tell(r);
        }
        if (ch + 1 < s->nchunks && g != s->cstart[ch + 1]) {
            unsigned f = recio__sp_file_at(s, g);
            return recio__sp_failat(s, RECIO_ERR_FORMAT, f, g - s->files[f].base,
                                    "the index skips records here; chunk shuffle needs an index of every record");
        }
    }
    recio__sp_fisher_yates(s->went, at, 2, recio_seed_for(s->d.seed, s->epoch, w + 1)); /* the window's own shuffle */
    s->win = w;
    return RECIO_OK;
}

/* Position and offset of sequence index q of this epoch's order. */
static recio_err recio__sp_locate(recio_split *s, uint64_t q, uint64_t *pos, uint64_t *off) {
    uint64_t w;
    recio_err e;
    if (s->d.shuffle != RECIO_SHUFFLE_CHUNK) {
        *pos = s->perm ? s->perm[q] : q;
        *off = s->offs[*pos];
        return RECIO_OK;
    }
    if (s->win == RECIO_SPLIT_UNKNOWN || q < s->wstart[s->win] || q >= s->wstart[s->win + 1]) {
        uint64_t lo = 0, hi = s->nwin;
        while (hi - lo > 1) {
            w = lo + (hi - lo) / 2;
            if (s->wstart[w] <= q) lo = w;
            else hi = w;
        }
        if ((e = recio__sp_chunk_window(s, lo)) != RECIO_OK) return e;
    }
    *off = s->went[2 * (q - s->wstart[s->win])];
    *pos = s->went[2 * (q - s->wstart[s->win]) + 1];
    return RECIO_OK;
}

static recio_err recio__sp_index_next(recio_split *s, recio_record *rec, recio_split_where *w) {
    uint64_t pos, off;
    unsigned f = 0;
    recio_err e;
    if (s->count == 0) return RECIO_END;
    if (s->target == RECIO_SPLIT_UNKNOWN && s->seq >= s->count) return RECIO_END;
    if ((e = recio__sp_locate(s, s->sbeg + s->seq % s->count, &pos, &off)) != RECIO_OK) return e;
    if ((e = recio__sp_read_at(s, off, rec, &f)) != RECIO_OK) return e;
    w->file = f;
    w->key = off;
    w->index = pos;
    w->ordinal = pos - s->files[f].first;
    return RECIO_OK;
}

/* ---- public ---- */

/* A split that reads its part in order, all in one file, starts each epoch where the last started:
   from its second epoch on (a first reset: the owner loops over epochs), its remote file asks for the
   next epoch's first bytes before this one ends (recio__rm_wrap). */
static void recio__sp_wrap(recio_split *s) {
    unsigned f;
    if (s->indexed || s->d.shuffle || s->begin >= s->end || ++s->resets < 2) return;
    f = recio__sp_file_at(s, s->begin);
    if (recio__sp_file_at(s, s->end - 1) == f)
        recio__rm_keep_wrap(&s->rm, s->files[f].path, s->begin - s->files[f].base, s->end - s->files[f].base);
}

RECIODEF recio_err recio_split_reset(recio_split *s, uint64_t epoch) {
    if (!s) return RECIO_ERR_ARG;
    recio__sp_wrap(s);
    s->sticky = RECIO_OK;
    s->errmsg[0] = 0;
    s->epoch = epoch;
    s->seq = 0;
    s->started = s->bdone = 0;
    memset(&s->where, 0, sizeof s->where);
    if (s->perm) {
        recio__sp_iota(s->perm, s->n);
        recio__sp_fisher_yates(s->perm, s->n, 1, recio_seed_for(s->d.seed, epoch, 0));
    }
    if (s->cperm) recio__sp_chunk_epoch(s);
    return RECIO_OK;
}

/* The files' names as one array (recio_split_info.files). */
static recio_err recio__sp_names(recio_split *s) {
    unsigned i;
    if (!(s->names = (const char **)recio__malloc(&s->alloc, (s->nfiles + 1) * sizeof *s->names)))
        return recio__sp_fail(s, RECIO_ERR_NOMEM, "%s", "out of memory for the file list");
    for (i = 0; i < s->nfiles; i++) s->names[i] = s->files[i].path;
    s->names[s->nfiles] = NULL;
    return RECIO_OK;
}

static recio_err recio__sp_setup(recio_split *s, const char *uris) {
    recio_err e;
    if (s->nsplit == 0) return recio__sp_fail(s, RECIO_ERR_ARG, "nsplit is 0: there must be at least one part");
    if (s->rank >= s->nsplit)
        return recio__sp_fail(s, RECIO_ERR_ARG, "rank %u is out of range: nsplit is %u, so ranks are 0..%u", s->rank,
                              s->nsplit, s->nsplit - 1);
    if ((unsigned)s->d.shuffle > 2 || (unsigned)s->d.equalize > 2 || (unsigned)s->d.mode > 1)
        return recio__sp_fail(s, RECIO_ERR_ARG, "unknown mode, shuffle or equalize value");
    if ((e = recio__sp_files(s, uris)) != RECIO_OK) return e;
    if ((e = recio__sp_names(s)) != RECIO_OK) return e;
    s->indexed = s->d.mode == RECIO_SPLIT_INDEX || s->index_path || s->d.shuffle || s->d.key_end;
    s->count = s->target = RECIO_SPLIT_UNKNOWN;
    if (s->indexed) e = recio__sp_index_open(s);
    else {
        e = recio__sp_byte_part(s, s->rank, &s->nbegin, &s->nend, &s->begin, &s->end);
        if (!e && s->d.equalize) e = recio__sp_byte_counts(s);
    }
    if (e) return e;
    recio__probe_close(&s->probe);
    if (s->d.equalize == RECIO_EQUALIZE_PAD && s->count == 0 && s->target > 0)
        return recio__sp_fail(s, RECIO_ERR_ARG, "rank %u of %u has no records to repeat for padding (%s)", s->rank,
                              s->nsplit,
                              s->indexed ? "fewer records than ranks" : "byte parts can be empty: use the index mode");
    return recio_split_reset(s, s->d.epoch);
}

RECIODEF recio_err recio_split_open_desc(recio_split **out, const char *uris, unsigned rank, unsigned nsplit,
                                         const recio_split_desc *desc) {
    recio_split *s;
    recio_allocator a;
    recio_err e;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    memset(&a, 0, sizeof a);
    if (desc) a = desc->alloc;
    if (!(s = (recio_split *)recio__malloc(&a, sizeof *s)))
        return recio__open_msg(desc ? desc->errmsg : NULL, uris, NULL, RECIO_ERR_NOMEM), RECIO_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    s->alloc = s->flist.alloc = a;
    if (desc) s->d = *desc;
    s->d.fs = recio__rm_keep_init(&s->rm, &a, s->d.fs);
    recio__rm_keep_seq(&s->rm, !s->d.shuffle); /* in order: its remote files' opens ask far ahead */
    s->rank = rank;
    s->nsplit = nsplit;
    s->win = RECIO_SPLIT_UNKNOWN;
    if (s->d.index_path && !(s->index_path = recio__strdup(&a, s->d.index_path))) e = RECIO_ERR_NOMEM;
    else if (!uris) e = recio__sp_fail(s, RECIO_ERR_ARG, "no uris");
    else e = recio__sp_setup(s, uris);
    recio__open_msg(s->d.errmsg, uris, s->errmsg, e);
    if (e != RECIO_OK) {
        recio_split_close(s);
        return e;
    }
    *out = s;
    return RECIO_OK;
}

RECIODEF recio_err recio_split_open(recio_split **s, const char *uris, unsigned rank, unsigned nsplit) {
    return recio_split_open_desc(s, uris, rank, nsplit, NULL);
}

RECIODEF recio_err recio_split_next(recio_split *s, recio_record *rec) {
    recio_split_where w;
    recio_err e;
    if (!s) return RECIO_ERR_ARG;
    if (!rec)
        return recio__fmt(s->errmsg, RECIO_ERRMSG_SIZE, "%s", "split next: the record pointer is NULL"), RECIO_ERR_ARG;
    if (s->sticky) return s->sticky;
    if (s->target != RECIO_SPLIT_UNKNOWN && s->seq >= s->target) return RECIO_END;
    memset(&w, 0, sizeof w);
    if (s->indexed) e = recio__sp_index_next(s, rec, &w);
    else {
        e = recio__sp_byte_next(s, rec, &w);
        if (e == RECIO_END && s->target != RECIO_SPLIT_UNKNOWN && s->seq < s->target && s->count) {
            s->started = s->bdone = 0; /* pad: go round the own part again */
            e = recio__sp_byte_next(s, rec, &w);
        }
    }
    if (e) return e == RECIO_END ? e : (s->sticky = e);
    w.path = s->files[w.file].path;
    w.seq = s->seq;
    w.repeat = s->count != RECIO_SPLIT_UNKNOWN && s->seq >= s->count;
    s->seq++;
    s->where = w;
    return RECIO_OK;
}

RECIODEF recio_err recio_split_query(const recio_split *s, recio_split_info *info) {
    if (!s || !info) return RECIO_ERR_ARG;
    info->begin = s->begin;
    info->end = s->end;
    info->count = s->target != RECIO_SPLIT_UNKNOWN ? s->target : s->count;
    info->total_bytes = s->total;
    info->nfiles = s->nfiles;
    info->files = s->names;
    info->where = s->where;
    return RECIO_OK;
}
RECIODEF const char *recio_split_errmsg(const recio_split *s) { return s ? s->errmsg : ""; }

RECIODEF void recio_split_close(recio_split *s) {
    unsigned i;
    if (!s) return;
    for (i = 0; i < RECIO__SPLIT_READERS; i++) recio_reader_close(s->rd[i].r);
    recio__probe_close(&s->probe);
    recio__free(&s->alloc, s->probe.buf);
    for (i = 0; i < s->nfiles; i++) {
        recio__free(&s->alloc, s->files[i].path);
        recio__free(&s->alloc, s->files[i].idx);
        recio__free(&s->alloc, s->files[i].offs);
    }
    recio__free(&s->alloc, s->files);
    recio__free(&s->alloc, s->names);
    recio__free(&s->alloc, s->index_path);
    recio__free(&s->alloc, s->offs);
    recio__free(&s->alloc, s->perm);
    recio__free(&s->alloc, s->cstart);
    recio__free(&s->alloc, s->cperm);
    recio__free(&s->alloc, s->wstart);
    recio__free(&s->alloc, s->went);
    recio__rm_keep_free(&s->rm); /* after every file of the split was closed */
    recio__free(&s->alloc, s);
}

/* ---- 5. IMAGE OPS: implementation -------------------------------------------------------------- */

/* The instruction sets of the kernel columns (see "kernels" below). AVX2 is compiled with a target
   attribute and chosen at run time, so a default x86-64 build runs on any x86-64 and still uses
   AVX2 where the CPU has it; NEON is there whenever the compiler targets it (aarch64 always, ARMv7
   with -mfpu=neon), and then stb_image's NEON JPEG paths are switched on too. */
#if defined(__TINYC__) && !defined(RECIO_NO_SIMD) /* tcc has no intrinsics headers */
#define RECIO_NO_SIMD
#endif
#if !defined(RECIO_NO_SIMD)
#if defined(__SSE2__) || defined(_M_X64)
#define RECIO__SSE2 1
#include <emmintrin.h>
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(RECIO_NO_AVX2)
#define RECIO__AVX2 1
#include <immintrin.h>
#include <cpuid.h>
#endif
#endif
#if defined(__ARM_NEON) || defined(__ARM_NEON__)
#define RECIO__NEON 1
#include <arm_neon.h>
#if !defined(RECIO_NO_STB_IMPLEMENTATION) && !defined(STBI_NEON)
#define STBI_NEON
#endif
#endif
#else
#define STBI_NO_SIMD /* plain C everywhere, stb's decoders included */
#endif
#define RECIO__ALIGN 64 /* scratch blocks start on cache lines */

/* static, so the per-row address arithmetic inlines it (a public function in a -fPIC object does
   not: another library could interpose it) */
static size_t recio__esize(recio_dtype t) {
    switch (t) {
    case RECIO_U8:
    case RECIO_I8: return 1;
    case RECIO_F16: return 2;
    case RECIO_F32: return 4;
    }
    return 0;
}

RECIODEF size_t recio_dtype_size(recio_dtype t) { return recio__esize(t); }

#ifndef RECIO_NO_IMAGE /* the image helpers belong to the image section: records-only builds leave them out */
static size_t recio__row_bytes(int w, int c, recio_dtype t, recio_layout l) {
    return (size_t)w * (l == RECIO_CHW ? 1u : (size_t)c) * recio_dtype_size(t);
}

static recio_image recio__image_shape(int w, int h, int channels, recio_dtype t, recio_layout l) {
    recio_image img;
    memset(&img, 0, sizeof img);
    img.width = w;
    img.height = h;
    img.channels = channels;
    img.dtype = t;
    img.layout = l;
    img.stride = recio__row_bytes(w, channels, t, l);
    return img;
}

static size_t recio__rows(const recio_image *img) {
    return (size_t)img->height * (img->layout == RECIO_CHW ? (size_t)img->channels : 1u);
}

RECIODEF size_t recio_image_bytes(const recio_image *img) { return img->stride * recio__rows(img); }

RECIODEF recio_image recio_image_wrap(void *data, int w, int h, int channels, recio_dtype t, recio_layout l,
                                      size_t stride) {
    recio_image img = recio__image_shape(w, h, channels, t, l);
    if (stride) img.stride = stride;
    img.data = data;
    return img;
}

/* Sizes that overflow size_t (or are not positive) are refused before any multiplication is used. */
static int recio__shape_ok(int w, int h, int c, recio_dtype t) {
    size_t es = recio_dtype_size(t);
    if (w <= 0 || h <= 0 || (c != 1 && c != 3 && c != 4) || !es) return 0;
    return (size_t)w <= SIZE_MAX / 4 / (size_t)c / es / (size_t)h;
}

RECIODEF recio_err recio_image_alloc(recio_image *img, int w, int h, int channels, recio_dtype t, recio_layout l,
                                     const recio_allocator *alloc) {
    if (!img) return RECIO_ERR_ARG;
    if (!recio__shape_ok(w, h, channels, t)) return RECIO_ERR_ARG;
    *img = recio__image_shape(w, h, channels, t, l);
    if (alloc) img->alloc = *alloc;
    img->data = img->owned = recio__malloc(&img->alloc, recio_image_bytes(img));
    return img->data ? RECIO_OK : RECIO_ERR_NOMEM;
}

RECIODEF void recio_image_free(recio_image *img) {
    if (!img) return;
    recio__free(&img->alloc, img->owned);
    memset(img, 0, sizeof *img);
}

/* The output convention of every op: allocate when out has no data, else check the caller's shape. */
static recio_err recio__out(recio_image *out, int w, int h, int c, recio_dtype t, recio_layout l) {
    if (!out) return RECIO_ERR_ARG;
    if (!out->data) return recio_image_alloc(out, w, h, c, t, l, &out->alloc);
    if (out->width != w || out->height != h || out->channels != c || out->dtype != t || out->layout != l ||
        out->stride < recio__row_bytes(w, c, t, l))
        return RECIO_ERR_ARG;
    return RECIO_OK;
}

static int recio__valid(const recio_image *img) {
    return img && img->data && recio__shape_ok(img->width, img->height, img->channels, img->dtype) &&
           img->stride >= recio__row_bytes(img->width, img->channels, img->dtype, img->layout);
}

static unsigned char *recio__at(const recio_image *img, int x, int y, int c) {
    size_t es = recio__esize(img->dtype);
    unsigned char *p = (unsigned char *)img->data;
    if (img->layout == RECIO_CHW)
        return p + ((size_t)c * (size_t)img->height + (size_t)y) * img->stride + (size_t)x * es;
    return p + (size_t)y * img->stride + ((size_t)x * (size_t)img->channels + (size_t)c) * es;
}

/* IEEE half <-> float, round to nearest even, by bits (no host half type needed). */
static uint16_t recio__f2h(float f) {
    uint32_t x, sign, mant;
    int exp;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    exp = (int)((x >> 23) & 0xff) - 127 + 15;
    mant = x & 0x7fffffu;
    if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    if (exp >= 31) return (uint16_t)(sign | 0x7c00u);
    if (exp <= 0) {
        uint32_t m, shift, r;
        if (exp < -10) return (uint16_t)sign;
        m = mant | 0x800000u;
        shift = (uint32_t)(14 - exp);
        r = m >> shift;
        if ((m & ((1u << shift) - 1)) > (1u << (shift - 1)) ||
            ((m & ((1u << shift) - 1)) == (1u << (shift - 1)) && (r & 1)))
            r++;
        return (uint16_t)(sign | r);
    }
    {
        uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++; /* a carry into the exponent is right */
        return (uint16_t)h;
    }
}

static float recio__h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
    float f;
    if (exp == 0) {
        f = (float)mant * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    x = exp == 31 ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112) << 23) | (mant << 13);
    memcpy(&f, &x, 4);
    return f;
}

static float recio__ldf(const unsigned char *p, recio_dtype t) {
    switch (t) {
    case RECIO_U8: return (float)*p;
    case RECIO_I8: return (float)(signed char)*p;
    case RECIO_F16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return recio__h2f(h);
    }
    case RECIO_F32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    }
    return 0;
}

/* floor of a float in int range, without libm: a records-only program links with a plain `cc` */
static int recio__floor_int(float v) {
    int i = (int)v;
    return (float)i > v ? i - 1 : i;
}

static unsigned char recio__u8(float v) { return v <= 0 ? 0 : v >= 255 ? 255 : (unsigned char)(v + 0.5f); }

static void recio__stf(unsigned char *p, recio_dtype t, float v) {
    switch (t) {
    case RECIO_U8: *p = recio__u8(v); break;
    case RECIO_I8:
        *p = (unsigned char)(signed char)(v <= -128 ? -128 : v >= 127 ? 127 : recio__floor_int(v + 0.5f));
        break;
    case RECIO_F16: {
        uint16_t h = recio__f2h(v);
        memcpy(p, &h, 2);
        break;
    }
    case RECIO_F32: memcpy(p, &v, 4); break;
    }
}

RECIODEF float recio_image_get(const recio_image *img, int x, int y, int c) {
    return recio__ldf(recio__at(img, x, y, c), img->dtype);
}

RECIODEF void recio_image_set(recio_image *img, int x, int y, int c, float v) {
    recio__stf(recio__at(img, x, y, c), img->dtype, v);
}

RECIODEF recio_err recio_image_copy(const recio_image *in, recio_image *out) {
    size_t r, rows, rb;
    recio_err e;
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout)) != RECIO_OK) return e;
    rows = recio__rows(in);
    rb = recio__row_bytes(in->width, in->channels, in->dtype, in->layout);
    for (r = 0; r < rows; r++)
        memcpy((unsigned char *)out->data + r * out->stride, (const unsigned char *)in->data + r * in->stride, rb);
    return RECIO_OK;
}

#endif /* RECIO_NO_IMAGE: the image helpers */

/* One axis of a resampling pass (see "the resampler" below): output i reads taps ofs[i] .. ofs[i]+k-1
   weighted by coef[i*k ..], on 2^11. */
#define RECIO__FIX 2048
typedef struct recio__axis {
    int n, k;      /* outputs, taps per output */
    int *ofs;      /* first source index per output */
    int16_t *coef; /* n*k */
    int lo, hi;    /* 2 taps: the outputs a kernel may load with 8 bytes from ofs*C (recio__axis_bounds) */
    int plain;     /* LINEAR or AREA: taps >= 0 summing to 2^11, so 2 of them may take the kernels' path */
    int wide;      /* Lanczos: |taps| may add up past 1.41, so vertical sums may pass 2^31 (recio__vrowk64) */
} recio__axis;

/* ---- kernels: the resampler's and the iterator's hot loops, one column per instruction set ----
   A column is a recio__kern: the horizontal and vertical passes of the LINEAR resampler, the
   normalise-into-three-planes step, the colour mix and the checksum lanes (RECIO_NO_IMAGE keeps
   the checksum lanes only: RECIO__KERN_IMAGE drops the rest). The scalar column is the reference;
   every other column computes exactly its bytes (tests compare each usable column with it on
   random sizes), usually by running its own loop over the body of a row and the scalar code over
   the edges. A new instruction set is a new column here, never an #if inside the scalar code.
   The column is picked (recio__kern_pick) when a transform is parsed or an iterator opened, and
   kept there: the pick runs cpuid, a trap to the hypervisor in a virtual machine (5 us on the
   2-core KVM guest of docs/bench.md, 15 us a pick, 5% of an eval-chain image). The eager ops
   pick once per call. */
#define RECIO__LANES 64 /* checksum lanes: 256-byte blocks, 4-byte words */
typedef struct recio__kern {
    const char *name;
    int (*usable)(void); /* the CPU has it (x86 AVX2 is chosen at run time) */
    /* checksum: lane[k] takes word k of every 256-byte block (native-order 32-bit words) */
    void (*hash)(uint32_t *lane, const unsigned char *p, size_t blocks);
#ifndef RECIO_NO_IMAGE /* records only: the checksum is the one kernel left */
    /* K == 2 taps, 3 or 4 channels: dst[i*C + c] = s[ofs*C + c] * a0 + s[(ofs+1)*C + c] * a1 */
    void (*hrow2)(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst);
    /* two rows of the horizontal pass into u8, OpenCV's VResizeLinear rounding */
    void (*vrow2)(const int32_t *r0, const int32_t *r1, int b0, int b1, unsigned char *line, int n);
    /* RGB u8 into three f32 planes: d[c][x] = lut[c*256 + v], which is ((float)v - mean[c]) / std[c] */
    void (*norm3)(const unsigned char *row, float *const d[3], int n, const float *lut, const float *mean,
                  const float *std);
    /* colour conversion of n RGB u8 pixels: d = u8(a*x + b*g + off[c]), g = 0.299 R + 0.587 G + 0.114 B
       (brightness, contrast, saturation, gray: recio__mix) */
    void (*mix3)(const unsigned char *s, unsigned char *d, int n, float a, float b, const float off[3]);
#define RECIO__KERN_IMAGE(hrow2, vrow2, norm3, mix3) , hrow2, vrow2, norm3, mix3
#else
#define RECIO__KERN_IMAGE(hrow2, vrow2, norm3, mix3)
#endif
} recio__kern;

static int recio__kern_always(void) { return 1; }

static uint32_t recio__lane_step(uint32_t h, uint32_t w) {
    uint32_t x = (h ^ w) * 0x01000193u; /* FNV's 32-bit prime, then a shift so high bits reach low ones */
    return x ^ (x >> 13);
}

static void recio__hash_c(uint32_t *lane, const unsigned char *p, size_t blocks) {
    uint32_t h[RECIO__LANES], w;
    size_t b;
    int k;
    memcpy(h, lane, sizeof h); /* a local copy: compilers vectorise the lanes when nothing aliases them */
    for (b = 0; b < blocks; b++, p += 4 * RECIO__LANES)
        for (k = 0; k < RECIO__LANES; k++) {
            memcpy(&w, p + 4 * k, 4);
            h[k] = recio__lane_step(h[k], w);
        }
    memcpy(lane, h, sizeof h);
}

#ifndef RECIO_NO_IMAGE /* the image kernels: resampler, normalise, colour */
static void recio__hpx(const unsigned char *p, int C, int a0, int a1, int32_t *d) {
    int c;
    for (c = 0; c < C; c++) d[c] = p[c] * a0 + p[c + C] * a1;
}

static void recio__hrow2_part(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst, int from, int to);
static void recio__hrow2_c(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst) {
    recio__hrow2_part(s, C, ax, dst, 0, ax->n);
}

/* The outputs a SIMD hrow2 leaves to the scalar code, [from, to): those before ax->lo, whose 8-byte
   loads would leave the row (see recio__axis_bounds), first; those from ax->hi on last, since a
   kernel's 16-byte store for 3 channels runs into the next output's first int. */
static void recio__hrow2_part(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst, int from, int to) {
    int i;
    for (i = from; i < to; i++) recio__hpx(s + ax->ofs[i] * C, C, ax->coef[2 * i], ax->coef[2 * i + 1], dst + i * C);
}

/* OpenCV's VResizeLinear for 8-bit: ((r >> 4) * b) >> 16 per row, then (sum + 2) >> 2. */
static void recio__vrow2_c(const int32_t *r0, const int32_t *r1, int b0, int b1, unsigned char *line, int n) {
    int x;
    for (x = 0; x < n; x++) {
        int32_t v = ((((r0[x] >> 4) * b0) >> 16) + (((r1[x] >> 4) * b1) >> 16) + 2) >> 2;
        line[x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

static void recio__norm3_c(const unsigned char *row, float *const d[3], int n, const float *lut, const float *mean,
                           const float *std) {
    int x;
    (void)mean, (void)std; /* a table lookup is the fastest scalar way to the same floats */
    for (x = 0; x < n; x++, row += 3) {
        d[0][x] = lut[row[0]];
        d[1][x] = lut[256 + row[1]];
        d[2][x] = lut[512 + row[2]];
    }
}

/* The float steps in this order, each rounded to float: every column does exactly these. */
static void recio__mix3_c(const unsigned char *s, unsigned char *d, int n, float a, float b, const float off[3]) {
    int x, c;
    for (x = 0; x < n; x++, s += 3, d += 3) {
        float g = 0.299f * (float)s[0] + 0.587f * (float)s[1] + 0.114f * (float)s[2];
        for (c = 0; c < 3; c++) d[c] = recio__u8(a * (float)s[c] + b * g + off[c]);
    }
}
#endif

static const recio__kern recio__kern_scalar = {
    "scalar", recio__kern_always,
    recio__hash_c RECIO__KERN_IMAGE(recio__hrow2_c, recio__vrow2_c, recio__norm3_c, recio__mix3_c)};

#if defined(RECIO__SSE2)
#ifndef RECIO_NO_IMAGE
static void recio__hrow2_sse2(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst) {
    __m128i z = _mm_setzero_si128();
    int i;
    recio__hrow2_part(s, C, ax, dst, 0, ax->lo);
    for (i = ax->lo; i < ax->hi; i++) {
        int32_t lo, hi, w;
        const unsigned char *p = s + ax->ofs[i] * C;
        __m128i px;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + C, 4);
        memcpy(&w, ax->coef + 2 * i, 4); /* x86 is little-endian: (a1 << 16) | a0, madd's pair order */
        px = _mm_unpacklo_epi8(_mm_unpacklo_epi8(_mm_cvtsi32_si128(lo), _mm_cvtsi32_si128(hi)), z);
        _mm_storeu_si128((__m128i *)(void *)(dst + i * C), _mm_madd_epi16(px, _mm_set1_epi32(w)));
    }
    recio__hrow2_part(s, C, ax, dst, ax->hi, ax->n);
}

/* r >> 4 fits int16 (r <= 255 * 2^11), so the saturating packs and adds never saturate. */
static int recio__vrow2_sse2_body(const int32_t *r0, const int32_t *r1, int b0, int b1, unsigned char *line, int n) {
    __m128i vb0 = _mm_set1_epi16((short)b0), vb1 = _mm_set1_epi16((short)b1), two = _mm_set1_epi16(2);
    int x = 0;
    for (; x + 8 <= n; x += 8) {
        __m128i a = _mm_packs_epi32(_mm_srai_epi32(_mm_loadu_si128((const __m128i *)(const void *)(r0 + x)), 4),
                                    _mm_srai_epi32(_mm_loadu_si128((const __m128i *)(const void *)(r0 + x + 4)), 4));
        __m128i b = _mm_packs_epi32(_mm_srai_epi32(_mm_loadu_si128((const __m128i *)(const void *)(r1 + x)), 4),
                                    _mm_srai_epi32(_mm_loadu_si128((const __m128i *)(const void *)(r1 + x + 4)), 4));
        __m128i v = _mm_adds_epi16(_mm_mulhi_epi16(a, vb0), _mm_mulhi_epi16(b, vb1));
        v = _mm_srai_epi16(_mm_adds_epi16(v, two), 2);
        _mm_storel_epi64((__m128i *)(void *)(line + x), _mm_packus_epi16(v, v));
    }
    return x;
}

static void recio__vrow2_sse2(const int32_t *r0, const int32_t *r1, int b0, int b1, unsigned char *line, int n) {
    int x = recio__vrow2_sse2_body(r0, r1, b0, b1, line, n);
    recio__vrow2_c(r0 + x, r1 + x, b0, b1, line + x, n - x);
}
#endif

/* SSE2 has no 32-bit multiply: even and odd lanes through the 32x32->64 one, low halves kept. */
static __m128i recio__mullo32_sse2(__m128i a, __m128i b) {
    __m128i even = _mm_mul_epu32(a, b), odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), _mm_srli_epi64(b, 32));
    return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                              _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
}

static void recio__hash_sse2(uint32_t *lane, const unsigned char *p, size_t blocks) {
    const __m128i prime = _mm_set1_epi32(0x01000193);
    __m128i h[RECIO__LANES / 4];
    size_t b;
    int k;
    for (k = 0; k < RECIO__LANES / 4; k++) h[k] = _mm_loadu_si128((const __m128i *)(const void *)(lane + 4 * k));
    for (b = 0; b < blocks; b++, p += 4 * RECIO__LANES)
        for (k = 0; k < RECIO__LANES / 4; k++) {
            __m128i x = recio__mullo32_sse2(
                _mm_xor_si128(h[k], _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k))), prime);
            h[k] = _mm_xor_si128(x, _mm_srli_epi32(x, 13));
        }
    for (k = 0; k < RECIO__LANES / 4; k++) _mm_storeu_si128((__m128i *)(void *)(lane + 4 * k), h[k]);
}

static const recio__kern recio__kern_sse2 = {
    "sse2", recio__kern_always,
    recio__hash_sse2 RECIO__KERN_IMAGE(recio__hrow2_sse2, recio__vrow2_sse2, recio__norm3_c, recio__mix3_c)};
#endif

#if defined(RECIO__AVX2)
/* cpuid and xgetbv themselves: __builtin_cpu_supports would bring libgcc's CPU-model constructor
   (about 4.5 KB, run at start-up) into every program that links recio, even one that reads records.
   Two cpuid instructions, not four: leaf 1 is there on every x86-64, and a CPU with XSAVE enumerates
   its state in leaf 0xD, so its highest leaf is past 7 without asking leaf 0 (each cpuid traps to
   the hypervisor in a virtual machine). */
static int recio__avx2_usable(void) {
    unsigned a, b, c, d, lo, hi;
    __cpuid(1, a, b, c, d);
    if (!(c & (1u << 27))) return 0; /* OSXSAVE */
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6u) != 6u) return 0; /* the OS saves XMM and YMM state */
    __cpuid_count(7, 0, a, b, c, d);
    return (int)((b >> 5) & 1u); /* AVX2 */
}

#ifndef RECIO_NO_IMAGE
/* Both taps' pixels come from one 8-byte load, which a byte shuffle spreads into the 16-bit pairs
   madd takes (SSE2 needs two loads and three unpacks for that): 1.25x SSE2's horizontal pass on
   341 -> 224 RGB rows here. Wider (two outputs per 256-bit madd) measured no faster: stores bind it. */
__attribute__((target("avx2"))) static void recio__hrow2_avx2(const unsigned char *s, int C, const recio__axis *ax,
                                                              int32_t *dst) {
    const __m128i sh = C == 3 ? _mm_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1)
                              : _mm_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1);
    int i;
    recio__hrow2_part(s, C, ax, dst, 0, ax->lo);
    for (i = ax->lo; i < ax->hi; i++) {
        int64_t px;
        int32_t w;
        memcpy(&px, s + ax->ofs[i] * C, 8);
        memcpy(&w, ax->coef + 2 * i, 4); /* x86 is little-endian: (a1 << 16) | a0, madd's pair order */
        _mm_storeu_si128((__m128i *)(void *)(dst + i * C),
                         _mm_madd_epi16(_mm_shuffle_epi8(_mm_cvtsi64_si128(px), sh), _mm_set1_epi32(w)));
    }
    recio__hrow2_part(s, C, ax, dst, ax->hi, ax->n);
}

__attribute__((target("avx2"))) static void recio__vrow2_avx2(const int32_t *r0, const int32_t *r1, int b0, int b1,
                                                              unsigned char *line, int n) {
    __m256i vb0 = _mm256_set1_epi16((short)b0), vb1 = _mm256_set1_epi16((short)b1), two = _mm256_set1_epi16(2);
    int x = 0;
    for (; x + 16 <= n; x += 16) {
        /* packs works within 128-bit lanes: permute the quadwords back into order after each pack */
        __m256i a =
            _mm256_packs_epi32(_mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(r0 + x)), 4),
                               _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(r0 + x + 8)), 4));
        __m256i b =
            _mm256_packs_epi32(_mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(r1 + x)), 4),
                               _mm256_srai_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(r1 + x + 8)), 4));
        __m256i v = _mm256_adds_epi16(_mm256_mulhi_epi16(a, vb0), _mm256_mulhi_epi16(b, vb1));
        v = _mm256_permute4x64_epi64(_mm256_srai_epi16(_mm256_adds_epi16(v, two), 2), 0xD8);
        v = _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0xD8);
        _mm_storeu_si128((__m128i *)(void *)(line + x), _mm256_castsi256_si128(v));
    }
    _mm256_zeroupper(); /* the SSE tail (and the SSE horizontal pass after us) pay for dirty upper halves */
    x += recio__vrow2_sse2_body(r0 + x, r1 + x, b0, b1, line + x, n - x);
    recio__vrow2_c(r0 + x, r1 + x, b0, b1, line + x, n - x);
}

/* Eight RGB pixels at a time, ((float)v - mean) / std with IEEE sub and div: the table's floats. */
__attribute__((target("avx2"))) static void recio__norm3_avx2(const unsigned char *row, float *const d[3], int n,
                                                              const float *lut, const float *mean, const float *std) {
    const __m128i a0 = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i a1 = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i a2 = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i b0 = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i b1 = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i b2 = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256 m0 = _mm256_set1_ps(mean[0]), m1 = _mm256_set1_ps(mean[1]), m2 = _mm256_set1_ps(mean[2]);
    const __m256 s0 = _mm256_set1_ps(std[0]), s1 = _mm256_set1_ps(std[1]), s2 = _mm256_set1_ps(std[2]);
    float *const tail[3] = {d[0] + (n & ~7), d[1] + (n & ~7), d[2] + (n & ~7)};
    int x = 0;
    for (; x + 8 <= n; x += 8, row += 24) { /* 24 bytes: 16 + 8, never past the eighth pixel */
        int64_t t;
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)row), b;
        memcpy(&t, row + 16, 8);
        b = _mm_cvtsi64_si128(t);
#define RECIO__PLANE(A, B, M, S, D)                                                                                    \
    _mm256_storeu_ps(D + x, _mm256_div_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_or_si128(          \
                                                            _mm_shuffle_epi8(a, A), _mm_shuffle_epi8(b, B)))),         \
                                                        M),                                                            \
                                          S))
        RECIO__PLANE(a0, b0, m0, s0, d[0]);
        RECIO__PLANE(a1, b1, m1, s1, d[1]);
        RECIO__PLANE(a2, b2, m2, s2, d[2]);
#undef RECIO__PLANE
    }
    _mm256_zeroupper();
    recio__norm3_c(row, tail, n - x, lut, mean, std);
}
#endif

__attribute__((target("avx2"))) static void recio__hash_avx2(uint32_t *lane, const unsigned char *p, size_t blocks) {
    const __m256i prime = _mm256_set1_epi32(0x01000193);
    __m256i h[RECIO__LANES / 8];
    size_t b;
    int k;
    for (k = 0; k < RECIO__LANES / 8; k++) h[k] = _mm256_loadu_si256((const __m256i *)(const void *)(lane + 8 * k));
    for (b = 0; b < blocks; b++, p += 4 * RECIO__LANES)
        for (k = 0; k < RECIO__LANES / 8; k++) {
            __m256i x = _mm256_mullo_epi32(
                _mm256_xor_si256(h[k], _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * k))), prime);
            h[k] = _mm256_xor_si256(x, _mm256_srli_epi32(x, 13));
        }
    for (k = 0; k < RECIO__LANES / 8; k++) _mm256_storeu_si256((__m256i *)(void *)(lane + 8 * k), h[k]);
    _mm256_zeroupper();
}

#ifndef RECIO_NO_IMAGE
/* Eight pixels at a time: bytes shuffled into R, G, B lanes of floats, the scalar steps, then
   clamped, truncated and shuffled back (u8(v) is trunc(min(max(v + 0.5, 0), 255.5))). */
__attribute__((target("avx2"))) static __m256 recio__mix_ch(__m256 x, __m256 g, __m256 a, __m256 b, float off) {
    const __m256 half = _mm256_set1_ps(0.5f), top = _mm256_set1_ps(255.5f);
    __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(a, x), _mm256_mul_ps(b, g)), _mm256_set1_ps(off));
    return _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, half), _mm256_setzero_ps()), top);
}
__attribute__((target("avx2"))) static __m128i recio__mix_bytes(__m256 v) { /* 8 floats in [0, 255.5] to 8 bytes */
    __m256i i = _mm256_cvttps_epi32(v);
    __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    return _mm_packus_epi16(w, w);
}
__attribute__((target("avx2"))) static void recio__mix3_avx2(const unsigned char *s, unsigned char *d, int n, float a,
                                                             float b, const float off[3]) {
    static const signed char in_lo[3][16] = {{0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
                                             {1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
                                             {2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}};
    static const signed char in_hi[3][16] = {{-1, -1, -1, -1, -1, -1, 2, 5, -1, -1, -1, -1, -1, -1, -1, -1},
                                             {-1, -1, -1, -1, -1, 0, 3, 6, -1, -1, -1, -1, -1, -1, -1, -1},
                                             {-1, -1, -1, -1, -1, 1, 4, 7, -1, -1, -1, -1, -1, -1, -1, -1}};
    static const signed char out_lo[3][16] = {{0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5},
                                              {-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1},
                                              {-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1}};
    static const signed char out_hi[3][16] = {{-1, -1, 6, -1, -1, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
                                              {5, -1, -1, 6, -1, -1, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1},
                                              {-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, -1, -1, -1, -1, -1, -1}};
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    int x = 0, c;
    for (; x + 8 <= n; x += 8) {
        __m128i lo = _mm_loadu_si128((const __m128i *)(const void *)(s + 3 * x));
        __m128i hi = _mm_loadl_epi64((const __m128i *)(const void *)(s + 3 * x + 16));
        __m128i olo = _mm_setzero_si128(), ohi = _mm_setzero_si128();
        __m256 p[3], g;
        for (c = 0; c < 3; c++) {
            __m128i ch = _mm_or_si128(_mm_shuffle_epi8(lo, _mm_loadu_si128((const __m128i *)(const void *)in_lo[c])),
                                      _mm_shuffle_epi8(hi, _mm_loadu_si128((const __m128i *)(const void *)in_hi[c])));
            p[c] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(ch));
        }
        g = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(0.299f), p[0]), _mm256_mul_ps(_mm256_set1_ps(0.587f), p[1])),
            _mm256_mul_ps(_mm256_set1_ps(0.114f), p[2]));
        for (c = 0; c < 3; c++) {
            __m128i bytes = recio__mix_bytes(recio__mix_ch(p[c], g, va, vb, off[c]));
            olo = _mm_or_si128(olo, _mm_shuffle_epi8(bytes, _mm_loadu_si128((const __m128i *)(const void *)out_lo[c])));
            ohi = _mm_or_si128(ohi, _mm_shuffle_epi8(bytes, _mm_loadu_si128((const __m128i *)(const void *)out_hi[c])));
        }
        _mm_storeu_si128((__m128i *)(void *)(d + 3 * x), olo);
        _mm_storel_epi64((__m128i *)(void *)(d + 3 * x + 16), ohi);
    }
    _mm256_zeroupper();
    recio__mix3_c(s + 3 * x, d + 3 * x, n - x, a, b, off);
}
#endif

/* Every AVX2 kernel that uses 256-bit registers ends with vzeroupper: GCC adds none to
   target("avx2") functions that fall into SSE code, and the dirty upper halves made the SSE
   horizontal pass 1.6x slower (docs/bench.md). */
static const recio__kern recio__kern_avx2 = {
    "avx2", recio__avx2_usable,
    recio__hash_avx2 RECIO__KERN_IMAGE(recio__hrow2_avx2, recio__vrow2_avx2, recio__norm3_avx2, recio__mix3_avx2)};
#endif

#if defined(RECIO__NEON)
#ifndef RECIO_NO_IMAGE
static void recio__hrow2_neon(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst) {
    int i;
    recio__hrow2_part(s, C, ax, dst, 0, ax->lo);
    for (i = ax->lo; i < ax->hi; i++) { /* 8 bytes: both taps' pixels (and 1-2 bytes more, inside the row) */
        uint16x8_t w = vmovl_u8(vld1_u8(s + ax->ofs[i] * C));
        int16x4_t p0 = vreinterpret_s16_u16(vget_low_u16(w));
        int16x4_t p1 = vreinterpret_s16_u16(C == 4 ? vget_high_u16(w) : vext_u16(vget_low_u16(w), vget_high_u16(w), 3));
        vst1q_s32(dst + i * C, vmlal_n_s16(vmull_n_s16(p0, ax->coef[2 * i]), p1, ax->coef[2 * i + 1]));
    }
    recio__hrow2_part(s, C, ax, dst, ax->hi, ax->n);
}

/* The scalar arithmetic in 32-bit lanes, then saturating narrows: the same bytes by construction. */
static void recio__vrow2_neon(const int32_t *r0, const int32_t *r1, int b0, int b1, unsigned char *line, int n) {
    const int32x4_t two = vdupq_n_s32(2);
    int x = 0, h;
    for (; x + 8 <= n; x += 8) {
        int16x4_t half[2];
        for (h = 0; h < 2; h++) {
            int32x4_t a = vshrq_n_s32(vmulq_n_s32(vshrq_n_s32(vld1q_s32(r0 + x + 4 * h), 4), b0), 16);
            int32x4_t b = vshrq_n_s32(vmulq_n_s32(vshrq_n_s32(vld1q_s32(r1 + x + 4 * h), 4), b1), 16);
            half[h] = vreinterpret_s16_u16(vqmovun_s32(vshrq_n_s32(vaddq_s32(vaddq_s32(a, b), two), 2)));
        }
        vst1_u8(line + x, vqmovun_s16(vcombine_s16(half[0], half[1])));
    }
    recio__vrow2_c(r0 + x, r1 + x, b0, b1, line + x, n - x);
}
#endif

static void recio__hash_neon(uint32_t *lane, const unsigned char *p, size_t blocks) {
    uint32x4_t h[RECIO__LANES / 4];
    size_t b;
    int k;
    for (k = 0; k < RECIO__LANES / 4; k++) h[k] = vld1q_u32(lane + 4 * k);
    for (b = 0; b < blocks; b++, p += 4 * RECIO__LANES)
        for (k = 0; k < RECIO__LANES / 4; k++) {
            uint32x4_t x = vmulq_n_u32(veorq_u32(h[k], vreinterpretq_u32_u8(vld1q_u8(p + 16 * k))), 0x01000193u);
            h[k] = veorq_u32(x, vshrq_n_u32(x, 13));
        }
    for (k = 0; k < RECIO__LANES / 4; k++) vst1q_u32(lane + 4 * k, h[k]);
}

#ifndef RECIO_NO_IMAGE
/* Eight pixels at a time (vld3 splits the channels), the scalar steps in float lanes; the float to
   integer conversion truncates, as the scalar cast does. */
static float32x4_t recio__mix_ch_neon(float32x4_t x, float32x4_t g, float a, float b, float off) {
    float32x4_t v = vaddq_f32(vaddq_f32(vmulq_f32(vdupq_n_f32(a), x), vmulq_f32(vdupq_n_f32(b), g)), vdupq_n_f32(off));
    return vminq_f32(vmaxq_f32(vaddq_f32(v, vdupq_n_f32(0.5f)), vdupq_n_f32(0.0f)), vdupq_n_f32(255.5f));
}
static void recio__mix3_neon(const unsigned char *s, unsigned char *d, int n, float a, float b, const float off[3]) {
    int x = 0, c, h;
    for (; x + 8 <= n; x += 8) {
        uint8x8x3_t px = vld3_u8(s + 3 * x), o;
        float32x4_t p[3][2], g[2];
        for (c = 0; c < 3; c++) {
            uint16x8_t w = vmovl_u8(px.val[c]);
            p[c][0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(w)));
            p[c][1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(w)));
        }
        for (h = 0; h < 2; h++)
            g[h] =
                vaddq_f32(vaddq_f32(vmulq_f32(vdupq_n_f32(0.299f), p[0][h]), vmulq_f32(vdupq_n_f32(0.587f), p[1][h])),
                          vmulq_f32(vdupq_n_f32(0.114f), p[2][h]));
        for (c = 0; c < 3; c++) {
            uint16x4_t lo = vmovn_u32(vcvtq_u32_f32(recio__mix_ch_neon(p[c][0], g[0], a, b, off[c])));
            uint16x4_t hi = vmovn_u32(vcvtq_u32_f32(recio__mix_ch_neon(p[c][1], g[1], a, b, off[c])));
            o.val[c] = vmovn_u16(vcombine_u16(lo, hi));
        }
        vst3_u8(d + 3 * x, o);
    }
    recio__mix3_c(s + 3 * x, d + 3 * x, n - x, a, b, off);
}

#if defined(__aarch64__)
/* One channel of eight pixels: ((float)v - mean) / std with IEEE sub and div, the table's floats. */
static void recio__norm8_neon(uint8x8_t v, float *d, float32x4_t mean, float32x4_t std) {
    uint16x8_t w = vmovl_u8(v);
    vst1q_f32(d, vdivq_f32(vsubq_f32(vcvtq_f32_u32(vmovl_u16(vget_low_u16(w))), mean), std));
    vst1q_f32(d + 4, vdivq_f32(vsubq_f32(vcvtq_f32_u32(vmovl_u16(vget_high_u16(w))), mean), std));
}
/* Straight-line code, eight pixels a step: a version with loops over channels and quarters kept
   the vld3 registers on the stack and ran more instructions than the table (docs/bench.md). */
static void recio__norm3_neon(const unsigned char *row, float *const d[3], int n, const float *lut, const float *mean,
                              const float *std) {
    const float32x4_t m0 = vdupq_n_f32(mean[0]), m1 = vdupq_n_f32(mean[1]), m2 = vdupq_n_f32(mean[2]);
    const float32x4_t s0 = vdupq_n_f32(std[0]), s1 = vdupq_n_f32(std[1]), s2 = vdupq_n_f32(std[2]);
    float *const tail[3] = {d[0] + (n & ~7), d[1] + (n & ~7), d[2] + (n & ~7)};
    int x = 0;
    for (; x + 8 <= n; x += 8, row += 24) {
        uint8x8x3_t px = vld3_u8(row);
        recio__norm8_neon(px.val[0], d[0] + x, m0, s0);
        recio__norm8_neon(px.val[1], d[1] + x, m1, s1);
        recio__norm8_neon(px.val[2], d[2] + x, m2, s2);
    }
    recio__norm3_c(row, tail, n - x, lut, mean, std);
}
#define RECIO__NORM3_NEON recio__norm3_neon
#else /* ARMv7 NEON has no vector divide (and flushes subnormals): the table */
#define RECIO__NORM3_NEON recio__norm3_c
#endif
#endif /* RECIO_NO_IMAGE */

static const recio__kern recio__kern_neon = {
    "neon", recio__kern_always,
    recio__hash_neon RECIO__KERN_IMAGE(recio__hrow2_neon, recio__vrow2_neon, RECIO__NORM3_NEON, recio__mix3_neon)};
#endif

/* Every column this build has, the reference first: the tests run each usable one against it. */
static const recio__kern *const recio__kern_cols[] = {
    &recio__kern_scalar,
#if defined(RECIO__SSE2)
    &recio__kern_sse2,
#endif
#if defined(RECIO__AVX2)
    &recio__kern_avx2,
#endif
#if defined(RECIO__NEON)
    &recio__kern_neon,
#endif
};

/* The best usable column: the last one the CPU runs. */
static const recio__kern *recio__kern_pick(void) {
    int i = (int)(sizeof recio__kern_cols / sizeof recio__kern_cols[0]) - 1;
    while (i > 0 && !recio__kern_cols[i]->usable()) i--;
    return recio__kern_cols[i];
}

/* ---- the checksum (declared in CORE): lanes through the kernel table ---- */

static int recio__host_le(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* A big-endian host: the 32-bit words a little-endian host would load, from elements of es bytes. */
static void recio__le_words(uint32_t *w, const unsigned char *p, size_t nwords, size_t es) {
    size_t i;
    for (i = 0; i < nwords; i++, p += 4) {
        if (es == 4) memcpy(&w[i], p, 4); /* the element's value is the word's */
        else if (es == 2) {
            uint16_t a, b;
            memcpy(&a, p, 2);
            memcpy(&b, p + 2, 2);
            w[i] = (uint32_t)a | (uint32_t)b << 16;
        } else w[i] = recio_load_u32le(p);
    }
}

static uint64_t recio__checksum(const recio__kern *kn, const void *data, size_t n, size_t es) {
    const unsigned char *p = (const unsigned char *)data;
    size_t blocks = n / (4 * RECIO__LANES), i, k;
    uint32_t lane[RECIO__LANES];
    unsigned char b[4 * RECIO__LANES];
    uint64_t h = RECIO_FNV1A_INIT;
    if (es != 2 && es != 4) es = 1;
    for (k = 0; k < RECIO__LANES; k++) lane[k] = 2166136261u ^ (uint32_t)k * 2654435769u;
    if (recio__host_le()) {
        kn->hash(lane, p, blocks);
    } else {
        uint32_t w[RECIO__LANES];
        for (i = 0; i < blocks; i++) {
            recio__le_words(w, p + i * sizeof b, RECIO__LANES, es);
            kn->hash(lane, (const unsigned char *)w, 1);
        }
    }
    for (k = 0; k < RECIO__LANES; k++) recio_store_u32le(b + 4 * k, lane[k]);
    h = recio_fnv1a64(h, b, sizeof b);
    p += blocks * sizeof b;
    for (i = 0; i < n % sizeof b; i++) /* the tail, each element's bytes little-endian first */
        h = (h ^ p[recio__host_le() ? i : i - i % es + (es - 1 - i % es)]) * 0x100000001b3ull;
    recio_store_u64le(b, (uint64_t)n);
    return recio_fnv1a64(h, b, 8);
}

RECIODEF uint64_t recio_checksum(const void *data, size_t n, size_t es) {
    return recio__checksum(recio__kern_pick(), data, n, es);
}

/* ---- everything below decodes or transforms images: RECIO_NO_IMAGE leaves it (and stb) out ---- */
#ifndef RECIO_NO_IMAGE

static int recio__is_u8hwc(const recio_image *img) {
    return recio__valid(img) && img->dtype == RECIO_U8 && img->layout == RECIO_HWC;
}

/* stb_image is built here, private to recio (STB_IMAGE_STATIC), so it never clashes with the user's
   own copy; RECIO_NO_STB_IMPLEMENTATION uses the user's stb_image instead. Only decoding from memory
   is needed (STBI_NO_STDIO keeps stdio out). */
#ifndef RECIO_NO_STB_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_STDIO
#define STBI_ASSERT(x) RECIO_ASSERT(x)
/* The formats recio decodes (recio__format says why these): stb's other decoders are not built. */
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
/* stb 2.27's JPEG bit reader, after a marker cuts a scan short (corrupt data), shifts a zero by 32
   or more (`b << (24 - code_bits)` with code_bits below -8: UBSan's "shift exponent 34"): the value
   is 0 whatever the shift, so the shift check is switched off for that one function, declared
   (unprototyped: stb's types come later) with no_sanitize before its body is parsed. STBIDEF,
   which stb puts before each public function, carries the declaration in (tools/pack_codec.c does
   the same for stb_image_write). Such a scan still decodes to wrong pixels with stb; libjpeg-turbo
   (RECIO_TURBOJPEG) refuses it. */
#if !defined(__cplusplus) && defined(__has_attribute) && !defined(STBIDEF) && defined(__STDC_VERSION__) &&             \
    __STDC_VERSION__ < 202311L /* C23 reads () as (void): the declaration would clash */
#if __has_attribute(no_sanitize)
#define STBIDEF                                                                                                        \
    static void stbi__grow_buffer_unsafe() __attribute__((no_sanitize("shift")));                                      \
    static
#endif
#endif
/* stb keeps its failure reason in a thread-local, which needs the OS's thread pointer
   (__aeabi_read_tp on ARM): without an OS and without RECIO_THREADS, a plain static will do. */
#if !defined(__unix__) && !defined(__unix) && !defined(__APPLE__) && !defined(_WIN32) && !defined(RECIO_THREADS)
#define STBI_NO_THREAD_LOCALS
#endif
/* stb allocates through the allocator of the recio call that decodes (a transform's or iterator's
   desc.alloc; RECIO_MALLOC for recio_image_decode). stb takes no allocator argument, so for the
   length of one decode the call's allocator is reached through a pointer of the calling thread,
   put back when the decode returns: a plain static where there is no OS (and so no threads). A
   compiler with no thread-local storage (tcc) keeps RECIO_MALLOC for stb. */
#if defined(STBI_NO_THREAD_LOCALS)
#define RECIO__STB_TLS
#elif defined(__cplusplus) && __cplusplus >= 201103L
#define RECIO__STB_TLS thread_local
#elif defined(_MSC_VER)
#define RECIO__STB_TLS __declspec(thread)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define RECIO__STB_TLS _Thread_local
#elif (defined(__GNUC__) || defined(__clang__)) && !defined(__TINYC__)
#define RECIO__STB_TLS __thread
#endif
#ifdef RECIO__STB_TLS
static RECIO__STB_TLS const recio_allocator *recio__stb_alloc;
static RECIO__STB_TLS int recio__stb_oom; /* an allocation of this decode failed: stb does not always say so */
static void *recio__stb_malloc(size_t n) {
    void *p = recio__malloc(recio__stb_alloc, n);
    if (!p) recio__stb_oom = 1;
    return p;
}
static void *recio__stb_realloc(void *p, size_t old, size_t n) {
    void *q = recio__realloc(recio__stb_alloc, p, old, n);
    if (!q) recio__stb_oom = 1;
    return q;
}
static void recio__stb_free(void *p) { recio__free(recio__stb_alloc, p); }
#define STBI_MALLOC(sz) recio__stb_malloc(sz)
#define STBI_REALLOC_SIZED(p, oldsz, newsz) recio__stb_realloc(p, oldsz, newsz)
#define STBI_FREE(p) recio__stb_free(p)
#else
#define STBI_MALLOC(sz) RECIO_MALLOC(sz, NULL)
#define STBI_REALLOC(p, sz) RECIO_REALLOC(p, sz, NULL)
#define STBI_FREE(p) RECIO_FREE(p, NULL)
#endif
#endif
/* stb_image 2.27 declares stbi_set_unpremultiply_on_load_thread but defines it under the misspelt
   name stbi__unpremultiply_on_load_thread; with STB_IMAGE_STATIC that is a static function declared
   and never defined, which -Wunused-function reports at the end of the translation unit (so a
   diagnostic push/pop around the include cannot catch it). Giving both spellings one name makes the
   declaration match the definition. */
#if !defined(RECIO_NO_STB_IMPLEMENTATION) && defined(STBI_NO_THREAD_LOCALS)
/* Without thread-locals stb defines none of its *_thread setters (recio calls none): bodies below. */
#define stbi_convert_iphone_png_to_rgb_thread recio__stbi_iphone_thread
#define stbi_set_flip_vertically_on_load_thread recio__stbi_flip_thread
#define stbi_set_unpremultiply_on_load_thread recio__stbi_unpremultiply_thread
#define RECIO__STB_TLS_STUBS
#elif !defined(RECIO_NO_STB_IMPLEMENTATION) && !defined(stbi_set_unpremultiply_on_load_thread)
#define stbi_set_unpremultiply_on_load_thread stbi__unpremultiply_on_load_thread
#endif
/* Without GIF (STBI_ONLY_JPEG and STBI_ONLY_PNG, say) stb declares its GIF loader but defines none. */
#if !defined(RECIO_NO_STB_IMPLEMENTATION) &&                                                                           \
    (defined(STBI_NO_GIF) ||                                                                                           \
     (!defined(STBI_ONLY_GIF) && (defined(STBI_ONLY_JPEG) || defined(STBI_ONLY_PNG) || defined(STBI_ONLY_BMP) ||       \
                                  defined(STBI_ONLY_TGA) || defined(STBI_ONLY_PSD) || defined(STBI_ONLY_HDR) ||        \
                                  defined(STBI_ONLY_PIC) || defined(STBI_ONLY_PNM) || defined(STBI_ONLY_ZLIB))))
#define stbi_load_gif_from_memory recio__stbi_no_gif
#define RECIO__STB_GIF_STUB
#endif
/* With STB_IMAGE_STATIC every stb function recio does not call is an unused static function:
   silence exactly that warning, for stb's code only (GCC and clang check it by source location). */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "stb_image.h"
#ifdef RECIO__STB_GIF_STUB
static stbi_uc *recio__stbi_no_gif(stbi_uc const *b, int n, int **d, int *x, int *y, int *z, int *c, int want) {
    (void)b, (void)n, (void)d, (void)x, (void)y, (void)z, (void)c, (void)want;
    return NULL;
}
#endif
#ifdef RECIO__STB_TLS_STUBS
static void recio__stbi_iphone_thread(int flag) { (void)flag; }
static void recio__stbi_flip_thread(int flag) { (void)flag; }
static void recio__stbi_unpremultiply_thread(int flag) { (void)flag; }
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef RECIO_TURBOJPEG /* libjpeg-turbo's libjpeg API (link -ljpeg); jpeglib.h wants FILE and size_t first */
#include <stdio.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>
#if !defined(LIBJPEG_TURBO_VERSION) || !defined(JCS_ALPHA_EXTENSIONS)
#error "RECIO_TURBOJPEG needs libjpeg-turbo 1.5 or later (its jpeglib.h; link -ljpeg)"
#endif
#endif

/* ---- decode ---- */

static int recio__jpeg_dht_ok(const unsigned char *b, size_t n);
static int recio__format(const unsigned char *b, size_t n);
static int recio__jpeg_claim_ok(uint64_t w, uint64_t h, size_t n, char *errmsg, size_t cap);
static int recio__pixels_ok(uint64_t w, uint64_t h, const char *fmt, char *errmsg, size_t cap);
enum { RECIO__FMT_NONE, RECIO__FMT_JPEG, RECIO__FMT_PNG, RECIO__FMT_BMP };

/* Calls into stb between these two allocate through a (NULL: RECIO_MALLOC); begin returns the
   allocator to give back to end. */
static const recio_allocator *recio__stb_begin(const recio_allocator *a) {
#if defined(RECIO__STB_TLS)
    const recio_allocator *saved = recio__stb_alloc;
    recio__stb_alloc = a;
    recio__stb_oom = 0;
    return saved;
#else
    (void)a;
    return NULL;
#endif
}

/* stb failed for want of memory, not for the image: its zlib returns NULL with no reason of its own
   (the reason left is then a stale one, e.g. "no SOI" from trying the PNG as a JPEG). */
static int recio__stb_out_of_memory(void) {
#if defined(RECIO__STB_TLS)
    if (recio__stb_oom) return 1;
#endif
    return stbi_failure_reason() && strcmp(stbi_failure_reason(), "outofmem") == 0;
}

static void recio__stb_end(const recio_allocator *saved) {
#if defined(RECIO__STB_TLS)
    recio__stb_alloc = saved;
#else
    (void)saved;
#endif
}

static recio_err recio__info(const void *bytes, size_t n, int *w, int *h, int *channels, const recio_allocator *a) {
    int x = 0, y = 0, c = 0, ok, fmt;
    const recio_allocator *saved;
    if (!bytes || n == 0 || n > INT_MAX) return RECIO_ERR_ARG;
    fmt = recio__format((const unsigned char *)bytes, n);
    if (fmt == RECIO__FMT_NONE) return RECIO_ERR_DECODE;                               /* not a format recio decodes */
    if (!recio__jpeg_dht_ok((const unsigned char *)bytes, n)) return RECIO_ERR_DECODE; /* stb reads tables here too */
    saved = recio__stb_begin(a);
    ok = stbi_info_from_memory((const stbi_uc *)bytes, (int)n, &x, &y, &c);
    recio__stb_end(saved);
    if (!ok) return RECIO_ERR_DECODE;
    if (fmt == RECIO__FMT_BMP && y < 0) y = y == INT_MIN ? 0 : -y; /* rows stored top down */
    if (w) *w = x;
    if (h) *h = y;
    if (channels) *channels = c;
    return RECIO_OK;
}

RECIODEF recio_err recio_image_info(const void *bytes, size_t n, int *w, int *h, int *channels) {
    return recio__info(bytes, n, w, h, channels, NULL);
}

#ifdef RECIO_TURBOJPEG
/* stb's CMYK to RGB: Adobe JPEGs store inverted inks, so r = c * k / 255 (stbi__blinn_8x8). */
static unsigned char recio__blinn(unsigned x, unsigned y) {
    unsigned t = x * y + 128;
    return (unsigned char)((t + (t >> 8)) >> 8);
}

/* libjpeg-turbo through its libjpeg API, which (unlike the TurboJPEG API of Debian 12) decodes a
   window: jpeg_crop_scanline for columns, jpeg_skip_scanlines and an early stop for rows. Errors
   leave through longjmp, so everything a jump must see lives in this struct, not in locals. */
typedef struct recio__jdec {
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr em;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
    recio_image img;
    int live, cmyk, want, win[4]; /* win: x0, x1, y0, y1 asked for */
    JDIMENSION cx, cw;            /* the columns libjpeg-turbo decodes */
} recio__jdec;

static void recio__jdec_exit(j_common_ptr c) {
    recio__jdec *j = (recio__jdec *)(void *)c; /* d is the first member */
    c->err->format_message(c, j->msg);
    longjmp(j->jb, 1);
}

/* A library never prints. Warnings are accepted (extraneous bytes, an odd progression) but for those
   that say the data ended before the image did: libjpeg-turbo would fill the rest with grey. */
static void recio__jdec_emit(j_common_ptr c, int level) {
    if (level < 0 && (c->err->msg_code == JWRN_JPEG_EOF || c->err->msg_code == JWRN_HIT_MARKER)) c->err->error_exit(c);
    if (level < 0) c->err->num_warnings++;
}

static recio_err recio__jdec_fail(recio__jdec *j, char *errmsg, size_t cap) {
    if (errmsg) recio__fmt(errmsg, cap, "decode: %s", j->msg);
    recio_image_free(&j->img);
    if (j->live) jpeg_destroy_decompress(&j->d);
    j->live = 0;
    return RECIO_ERR_DECODE;
}

static void recio__jdec_close(recio__jdec *j) {
    if (j->live) jpeg_destroy_decompress(&j->d);
    j->live = 0;
}

/* Read the header: size in j->d.image_width x image_height. */
static recio_err recio__jdec_open(recio__jdec *j, const unsigned char *b, size_t n, int channels, char *errmsg,
                                  size_t cap) {
    memset(j, 0, sizeof *j);
    j->d.err = jpeg_std_error(&j->em);
    j->em.error_exit = recio__jdec_exit;
    j->em.emit_message = recio__jdec_emit;
    j->want = channels;
    if (setjmp(j->jb)) return recio__jdec_fail(j, errmsg, cap);
    jpeg_create_decompress(&j->d);
    j->live = 1;
    jpeg_mem_src(&j->d, b, (unsigned long)n);
    jpeg_read_header(&j->d, TRUE);
    if (!(j->d.arith_code /* can code a block in less than a bit */
              ? recio__pixels_ok(j->d.image_width, j->d.image_height, "JPEG", j->msg, sizeof j->msg)
              : recio__jpeg_claim_ok(j->d.image_width, j->d.image_height, n, j->msg, sizeof j->msg))) {
        if (errmsg) recio__fmt(errmsg, cap, "%s", j->msg);
        recio__jdec_close(j);
        return RECIO_ERR_DECODE;
    }
    j->cmyk = j->d.jpeg_color_space == JCS_CMYK || j->d.jpeg_color_space == JCS_YCCK; /* no RGB from these */
    if (!j->want) j->want = j->d.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
    return RECIO_OK;
}

/* CMYK rows (4 bytes a pixel) to `want` channels in place: the packed output never overtakes the input. */
static void recio__jdec_uncmyk(recio_image *img, int want) {
    size_t k, np = (size_t)img->width * (size_t)img->height;
    unsigned char *px = (unsigned char *)img->data;
    for (k = 0; k < np; k++) {
        const unsigned char *q = px + 4 * k;
        unsigned char r = recio__blinn(q[0], q[3]), g = recio__blinn(q[1], q[3]), bl = recio__blinn(q[2], q[3]);
        unsigned char *o = px + (size_t)want * k;
        if (want == 1) o[0] = (unsigned char)((r * 77 + g * 150 + bl * 29) >> 8); /* stb's luma */
        else o[0] = r, o[1] = g, o[2] = bl;
        if (want == 4) o[3] = 255;
    }
    img->channels = want;
    img->stride = (size_t)img->width * (size_t)want;
}

/* Decode columns [*x0, x1) and rows [y0, y1) of the image scaled by 1/den (x1 = 0: all of it) into
   j->img, owned. libjpeg-turbo widens the columns to its iMCU grid: *x0 comes back moved left,
   and j->img is that wider window. */
static recio_err recio__jdec_run(recio__jdec *j, int den, int *x0, int x1, int y0, int y1, const recio_allocator *alloc,
                                 char *errmsg, size_t cap) {
    JDIMENSION row;
    j->win[0] = *x0, j->win[1] = x1, j->win[2] = y0, j->win[3] = y1; /* in memory: a longjmp leaves them alone */
    if (setjmp(j->jb)) return recio__jdec_fail(j, errmsg, cap);
    j->d.scale_num = 1;
    j->d.scale_denom = (unsigned)den;
    j->d.out_color_space = j->cmyk ? JCS_CMYK : j->want == 1 ? JCS_GRAYSCALE : j->want == 3 ? JCS_RGB : JCS_EXT_RGBA;
    jpeg_calc_output_dimensions(&j->d);
    if ((uint64_t)j->d.output_width * j->d.output_height > RECIO_MAX_PIXELS ||
        !recio__shape_ok((int)j->d.output_width, 1, 4, RECIO_U8)) {
        recio__fmt(j->msg, sizeof j->msg, "%ux%u pixels is more than RECIO_MAX_PIXELS", j->d.output_width,
                   j->d.output_height);
        return recio__jdec_fail(j, errmsg, cap);
    }
    if (j->win[1] <= 0 || j->win[1] > (int)j->d.output_width) j->win[1] = (int)j->d.output_width;
    if (j->win[3] <= 0 || j->win[3] > (int)j->d.output_height) j->win[3] = (int)j->d.output_height;
    if (j->win[0] < 0 || j->win[0] >= j->win[1]) j->win[0] = 0;
    if (j->win[2] < 0 || j->win[2] >= j->win[3]) j->win[2] = 0;
    jpeg_start_decompress(&j->d);
    j->cx = (JDIMENSION)j->win[0];
    j->cw = (JDIMENSION)(j->win[1] - j->win[0]);
    if (j->cw < j->d.output_width) jpeg_crop_scanline(&j->d, &j->cx, &j->cw);
    if (recio_image_alloc(&j->img, (int)j->cw, j->win[3] - j->win[2], j->d.output_components, RECIO_U8, RECIO_HWC,
                          alloc) != RECIO_OK) {
        recio__fmt(j->msg, sizeof j->msg, "no memory for %ux%d pixels", j->cw, j->win[3] - j->win[2]);
        recio__jdec_fail(j, errmsg, cap);
        return RECIO_ERR_NOMEM;
    }
    if (j->win[2] > 0) jpeg_skip_scanlines(&j->d, (JDIMENSION)j->win[2]);
    while ((row = j->d.output_scanline) < (JDIMENSION)j->win[3]) {
        JSAMPROW rp[16];
        JDIMENSION k, m = (JDIMENSION)j->win[3] - row < 16 ? (JDIMENSION)j->win[3] - row : 16;
        for (k = 0; k < m; k++)
            rp[k] = (JSAMPROW)j->img.data + (size_t)(row - (JDIMENSION)j->win[2] + k) * j->img.stride;
        if (jpeg_read_scanlines(&j->d, rp, m) == 0) break; /* cannot happen with memory input; never spin */
    }
    jpeg_abort_decompress(&j->d); /* rows below the window are never decoded */
    recio__jdec_close(j);
    *x0 = (int)j->cx;
    if (j->cmyk) recio__jdec_uncmyk(&j->img, j->want);
    return RECIO_OK;
}

static int recio__ceil_div(JDIMENSION a, int b) { return (int)((a + (JDIMENSION)b - 1) / (JDIMENSION)b); }

/* The whole image, at the strongest of 1/2, 1/4, 1/8 that keeps the shorter side >= min_short (the
   other factors cost more than a full decode). */
static recio_err recio__tj_decode(recio_image *out, const unsigned char *b, size_t n, int channels, int min_short,
                                  char *errmsg, size_t cap) {
    recio__jdec j;
    int den = 1, x0 = 0;
    recio_err e;
    if ((e = recio__jdec_open(&j, b, n, channels, errmsg, cap)) != RECIO_OK) return e;
    while (min_short > 0 && den < 8 && recio__ceil_div(j.d.image_width, 2 * den) >= min_short &&
           recio__ceil_div(j.d.image_height, 2 * den) >= min_short)
        den *= 2;
    if ((e = recio__jdec_run(&j, den, &x0, 0, 0, 0, NULL, errmsg, cap)) != RECIO_OK) return e;
    *out = j.img;
    return RECIO_OK;
}
#endif

/* stb_image 2.27 (Debian 12) has two JPEG bugs fixed in 2.28: it trusts a DHT table's symbol count
   and writes past its 257-entry size array when the counts add up to more than 256, and a scan
   may use a Huffman table no DHT defined, whose uninitialised codes index anywhere. Walk the
   JPEG's segments as stb reads them, entropy-coded data included (progressive files define tables
   between scans), and refuse such a file before stb sees it. Returns 0 when it is unsafe. stb
   takes any run of 0xff before the SOI's 0xd8 as fill, so the walk starts where stb would (both
   found by fuzzing). */
static unsigned recio__byte(const unsigned char *b, size_t n, size_t i) {
    return i < n ? b[i] : 0;
} /* stb reads 0 at the end */

/* An SOS's components must name tables defined so far (bit 4 * class + id of `defined`): DC for a
   baseline scan or a first DC scan, AC for a baseline scan or any AC scan. */
static int recio__jpeg_sos_ok(const unsigned char *b, size_t n, size_t i, unsigned defined, int progressive) {
    unsigned ns = recio__byte(b, n, i + 4), c, ss = recio__byte(b, n, i + 5 + 2 * ns),
             ah = recio__byte(b, n, i + 7 + 2 * ns) >> 4;
    int dc = !progressive || (ss == 0 && ah == 0), ac = !progressive || ss > 0;
    for (c = 0; c < ns && c < 4; c++) {
        unsigned sel = recio__byte(b, n, i + 6 + 2 * c), td = sel >> 4, ta = sel & 15;
        if ((dc && (td > 3 || !(defined >> td & 1))) || (ac && (ta > 3 || !(defined >> (4 + ta) & 1)))) return 0;
    }
    return 1;
}

static int recio__jpeg_dht_ok(const unsigned char *b, size_t n) {
    size_t i = 0;
    unsigned defined = 0;
    int progressive = 0;
    while (i < n && b[i] == 0xff) i++;
    if (i == 0 || i >= n || b[i] != 0xd8) return 1; /* not a JPEG to stb */
    i++;
    while (i + 4 <= n) {
        unsigned m;
        size_t len;
        if (b[i] != 0xff) { /* entropy-coded data: the next marker is 0xff not followed by 0 or RSTn */
            const unsigned char *p = (const unsigned char *)memchr(b + i, 0xff, n - i);
            if (!p) return 1;
            i = (size_t)(p - b);
            continue;
        }
        m = b[i + 1];
        if (m == 0xff || m == 0x00 || (m >= 0xd0 && m <= 0xd7) || m == 0x01) { /* fill, stuffing, RSTn, TEM */
            i += m == 0xff ? 1 : 2;
            continue;
        }
        if (m == 0xd9) return 1; /* EOI */
        len = (size_t)b[i + 2] << 8 | b[i + 3];
        if (m == 0xc4) { /* as stb reads it: tables while the length lasts, bytes past the end read as 0 */
            long left = (long)len - 2;
            size_t at = i + 4;
            while (left > 0) {
                unsigned k, total = 0, q = recio__byte(b, n, at);
                for (k = 1; k <= 16; k++) total += recio__byte(b, n, at + k);
                if (total > 256) return 0;
                if ((q >> 4) <= 1 && (q & 15) <= 3) defined |= 1u << ((q >> 4) * 4 + (q & 15));
                at += 17 + total;
                left -= 17 + (long)total;
            }
        }
        if (m == 0xc2) progressive = 1;
        if (m == 0xda && !recio__jpeg_sos_ok(b, n, i, defined, progressive)) return 0;
        i += 2 + len;
    }
    return 1;
}

/* stb fills a scan that stops early (cut short, then an end marker or more segments) with zero bits
   and returns made-up pixels; libjpeg-turbo warns ("premature end of data segment") and recio
   refuses. For stb the scans of a baseline JPEG are walked here, Huffman code by code, without
   decoding pixels: every block of every MCU must be coded before the marker that ends the scan
   (and each restart interval before its RSTn). Progressive and other files are not walked. */
#ifdef RECIO_STB_TRUST_JPEG_SCANS
#define RECIO__TRUST_SCANS 1
#else
#define RECIO__TRUST_SCANS 0
#endif
typedef struct recio__jbits {
    const unsigned char *b;
    size_t n, i;
    uint64_t acc;     /* the low `bits` bits are the next ones, most significant first */
    int bits, marker; /* marker: the scan's data ended at a marker (b[i] is its 0xff) */
} recio__jbits;

static void recio__jfill(recio__jbits *r) {
    while (r->bits <= 56 && !r->marker) {
        unsigned c;
        if (r->i >= r->n) {
            r->marker = 1;
            break;
        }
        if ((c = r->b[r->i]) == 0xff) {
            if ((r->i + 1 < r->n ? r->b[r->i + 1] : 0xd9) != 0) {
                r->marker = 1;
                break;
            }
            r->i++; /* a stuffed 0xff */
        }
        r->i++, r->acc = r->acc << 8 | c, r->bits += 8;
    }
}

/* Huffman table: a 9-bit lookup (length << 8 | symbol; 0 for longer codes), then the codes of each
   length l are mincode[l] .. maxcode[l], their symbols from first[l]. */
typedef struct recio__jhuff {
    uint16_t fast[512];
    int32_t maxcode[18], mincode[17];
    uint16_t first[17];
    unsigned char sym[256];
} recio__jhuff;

static int recio__jhuff_build(recio__jhuff *h, const unsigned char *counts, const unsigned char *syms, unsigned total) {
    int32_t code = 0;
    unsigned l, k = 0, j;
    memcpy(h->sym, syms, total);
    memset(h->fast, 0, sizeof h->fast);
    for (l = 1; l <= 16; l++) {
        h->first[l] = (uint16_t)k, h->mincode[l] = code;
        if (code + counts[l - 1] > (1 << l) || (counts[l - 1] && code + counts[l - 1] == (1 << l)))
            return 0; /* overfull, or an all-ones code: checked before the codes index the lookup */
        for (j = 0; l <= 9 && j < counts[l - 1]; j++) { /* every 9-bit look-ahead that starts with this code */
            unsigned lo = (unsigned)(code + (int32_t)j) << (9 - l), m;
            for (m = 0; m < 1u << (9 - l); m++) h->fast[lo + m] = (uint16_t)(l << 8 | syms[k + j]);
        }
        code += counts[l - 1], k += counts[l - 1];
        h->maxcode[l] = counts[l - 1] ? code - 1 : -1;
        code <<= 1;
    }
    h->maxcode[17] = 0x7fffffff;
    return 1;
}

/* The next symbol, or -1 at the end of the scan's data, -2 for a code the table lacks. */
static int recio__jhuff_next(recio__jbits *r, const recio__jhuff *h) {
    unsigned look, e;
    int32_t code;
    int l;
    if (r->bits < 16) recio__jfill(r);
    look = (unsigned)(r->bits >= 9 ? r->acc >> (r->bits - 9) : r->acc << (9 - r->bits)) & 511;
    if ((e = h->fast[look]) != 0) {
        if ((int)(e >> 8) > r->bits) return -1;
        r->bits -= (int)(e >> 8);
        return (int)(e & 255);
    }
    for (l = 10; l <= 16; l++) {
        if (l > r->bits) return -1;
        code = (int32_t)(r->acc >> (r->bits - l) & ((1u << l) - 1));
        if (h->maxcode[l] >= 0 && code <= h->maxcode[l] && code >= h->mincode[l]) {
            r->bits -= l;
            return h->sym[h->first[l] + (code - h->mincode[l])];
        }
    }
    return -2;
}

static int recio__jskip(recio__jbits *r, int s) {
    if (r->bits < s) recio__jfill(r);
    if (r->bits < s) return 0;
    r->bits -= s;
    return 1;
}

/* One 8x8 block's codes: 1 when all are there, 0 when the data ends first or a code is unknown. The
   AC loop, where the time goes, takes a short code and its extra bits in one step. */
static int recio__jblock(recio__jbits *r, const recio__jhuff *dc, const recio__jhuff *ac) {
    int k = 1, t = recio__jhuff_next(r, dc);
    if (t < 0 || !recio__jskip(r, t & 15)) return 0;
    while (k < 64) {
        unsigned e, look;
        int len;
        if (r->bits < 32) recio__jfill(r);
        look = (unsigned)(r->bits >= 9 ? r->acc >> (r->bits - 9) : r->acc << (9 - r->bits)) & 511;
        if ((e = ac->fast[look]) != 0) {
            t = (int)(e & 255), len = (int)(e >> 8) + (t & 15);
            if (len > r->bits) return 0;
            r->bits -= len;
        } else if ((t = recio__jhuff_next(r, ac)) < 0 || !recio__jskip(r, t & 15)) {
            return 0;
        }
        if ((t & 15) == 0 && (t >> 4) != 15) break; /* end of block */
        k += (t >> 4) + 1;
    }
    return 1;
}

typedef struct recio__jframe {
    unsigned w, h, nc, hmax, vmax, restart, id[4], hs[4], vs[4];
    recio__jhuff tab[8]; /* DC 0-3, AC 4-7 */
    unsigned defined;
} recio__jframe;

/* The entropy-coded data of one scan at b[i]: 1 when every MCU is there. */
static int recio__jscan(recio__jframe *f, const unsigned char *b, size_t n, size_t sos, size_t i) {
    unsigned ns = recio__byte(b, n, sos + 4), c, k, comp[4], dc[4], ac[4], mx, my, x, todo;
    recio__jbits r;
    uint64_t mcus, m;
    if (ns < 1 || ns > 4) return 0;
    for (c = 0; c < ns; c++) {
        unsigned sel = recio__byte(b, n, sos + 5 + 2 * c), t = recio__byte(b, n, sos + 6 + 2 * c);
        for (k = 0; k < f->nc && f->id[k] != sel; k++) {}
        if (k == f->nc || (t >> 4) > 3 || (t & 15) > 3 || !(f->defined >> (t >> 4) & 1) ||
            !(f->defined >> (4 + (t & 15)) & 1))
            return 0;
        comp[c] = k, dc[c] = t >> 4, ac[c] = 4 + (t & 15);
    }
    if (ns == 1) { /* one component: its own blocks, in rows */
        mx = (f->w * f->hs[comp[0]] + f->hmax - 1) / f->hmax, my = (f->h * f->vs[comp[0]] + f->vmax - 1) / f->vmax;
        mcus = (uint64_t)((mx + 7) / 8) * ((my + 7) / 8);
    } else {
        mcus = (uint64_t)((f->w + 8 * f->hmax - 1) / (8 * f->hmax)) * ((f->h + 8 * f->vmax - 1) / (8 * f->vmax));
    }
    memset(&r, 0, sizeof r);
    r.b = b, r.n = n, r.i = i;
    for (m = 0; m < mcus; m++) {
        if (f->restart && m > 0 && m % f->restart == 0) { /* the rest of the byte is padding; then RSTn */
            while (r.i + 1 < n && b[r.i] == 0xff && b[r.i + 1] == 0xff) r.i++;
            if (r.i + 1 >= n || b[r.i] != 0xff || (b[r.i + 1] & 0xf8) != 0xd0) return 0;
            r.i += 2, r.bits = 0, r.marker = 0;
        }
        for (c = 0; c < ns; c++) {
            todo = ns == 1 ? 1 : f->hs[comp[c]] * f->vs[comp[c]];
            for (x = 0; x < todo; x++)
                if (!recio__jblock(&r, &f->tab[dc[c]], &f->tab[ac[c]])) return 0;
        }
    }
    return 1;
}

/* Where the entropy-coded data starting at i ends: the next marker that is not RSTn (nor a stuffed
   0xff), or n. */
static size_t recio__jpeg_scan_end(const unsigned char *b, size_t n, size_t i) {
    while (i + 1 < n && !(b[i] == 0xff && b[i + 1] != 0 && b[i + 1] != 0xff && (b[i + 1] < 0xd0 || b[i + 1] > 0xd7)))
        i++;
    return i + 1 < n ? i : n;
}

/* 1: every scan complete (or not a Huffman JPEG: not walked), 0: a scan stops early, 2: progressive
   (its scans are not walked: see recio__jpeg_same_with_filler). */
static int recio__jpeg_scans_complete(const unsigned char *b, size_t n) {
    recio__jframe f;
    size_t i = 0;
    unsigned c;
    memset(&f, 0, sizeof f);
    while (i < n && b[i] == 0xff) i++;
    if (i == 0 || i >= n || b[i] != 0xd8) return 1;
    i++;
    while (i + 4 <= n) {
        unsigned m;
        size_t len;
        if (b[i] != 0xff) return 1; /* data where a marker belongs: stb's own checks decide */
        if ((m = b[i + 1]) == 0xff) {
            i++;
            continue;
        }
        if (m == 0xd9) return 1;
        len = (size_t)b[i + 2] << 8 | b[i + 3];
        if (len < 2 || len > n - i - 2) return 1; /* cut inside a header: stb reads past the end, which is caught */
        if (m == 0xc2) return 2;
        if ((m >= 0xc3 && m <= 0xcb && m != 0xc4 && m != 0xc8) || (m >= 0xcd && m <= 0xcf))
            return 1; /* lossless, arithmetic */
        if (m == 0xc0 || m == 0xc1) {
            f.h = (unsigned)b[i + 5] << 8 | b[i + 6], f.w = (unsigned)b[i + 7] << 8 | b[i + 8], f.nc = b[i + 9];
            if (f.nc < 1 || f.nc > 4 || len < 8 + 3 * f.nc || f.h == 0 || f.w == 0) return 1;
            for (c = 0; c < f.nc; c++) {
                f.id[c] = b[i + 10 + 3 * c], f.hs[c] = b[i + 11 + 3 * c] >> 4, f.vs[c] = b[i + 11 + 3 * c] & 15;
                if (!f.hs[c] || !f.vs[c] || f.hs[c] > 4 || f.vs[c] > 4) return 1;
                if (f.hs[c] > f.hmax) f.hmax = f.hs[c];
                if (f.vs[c] > f.vmax) f.vmax = f.vs[c];
            }
        }
        if (m == 0xdd && len >= 4) f.restart = (unsigned)b[i + 4] << 8 | b[i + 5];
        if (m == 0xc4) {
            size_t at = i + 4, end = i + 2 + len;
            while (at + 17 <= end) {
                unsigned q = b[at], k, total = 0;
                for (k = 1; k <= 16; k++) total += b[at + k];
                if (total > 256 || at + 17 + total > end || (q >> 4) > 1 || (q & 15) > 3) return 1;
                if (!recio__jhuff_build(&f.tab[(q >> 4) * 4 + (q & 15)], b + at + 1, b + at + 17, total)) return 0;
                f.defined |= 1u << ((q >> 4) * 4 + (q & 15));
                at += 17 + total;
            }
        }
        if (m == 0xda) {
            size_t data = i + 2 + len;
            if (!f.nc) return 1;
            if (!recio__jscan(&f, b, n, i, data)) return 0;
            i = recio__jpeg_scan_end(b, n, data);
            continue;
        }
        i += 2 + len;
    }
    return 1;
}

/* The formats recio decodes: JPEG, PNG and BMP, what image datasets hold (ImageNet's odd files are
   PNG and CMYK JPEG). Each is recognised by its magic, and for each the header's size is checked
   against RECIO_MAX_PIXELS and against the bytes present before anything is allocated; a file that
   ends before its image does is an error, never filler. Refused as "unsupported image format": GIF
   (animation, LZW that stb pads with stale pixels when cut short), TGA (no magic: random bytes pass
   stb's test for it), PSD, PIC, PNM, HDR (stb 2.27 hangs on an HDR whose RLE line stops at the end
   of the data, and PNM or PSD cut short decode from uninitialised memory). stb's decoders for those
   are not even built; with the user's stb (RECIO_NO_STB_IMPLEMENTATION) the magic check keeps
   them out all the same. */

static int recio__format(const unsigned char *b, size_t n) {
    size_t i = 0;
    while (i < n && b[i] == 0xff) i++; /* stb takes any run of 0xff before the SOI's 0xd8 */
    if (i > 0 && i < n && b[i] == 0xd8) return RECIO__FMT_JPEG;
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return RECIO__FMT_PNG;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M') return RECIO__FMT_BMP;
    return RECIO__FMT_NONE;
}

static uint32_t recio__be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* w x h against RECIO_MAX_PIXELS; 0 (with the reason in errmsg) when it is more. */
static int recio__pixels_ok(uint64_t w, uint64_t h, const char *fmt, char *errmsg, size_t cap) {
    if (w > 0 && h > 0 && w * h <= RECIO_MAX_PIXELS) return 1;
    if (errmsg)
        recio__fmt(errmsg, cap, "decode: %Ux%U %s is more than RECIO_MAX_PIXELS (%U pixels)", w, h, fmt,
                   (uint64_t)RECIO_MAX_PIXELS);
    return 0;
}

/* A Huffman-coded JPEG codes every 8x8 block of its largest component with at least one bit (a DC
   code, in the first scan that covers it; arithmetic coding, which only libjpeg-turbo decodes, can
   take less and is not held to this): a header claiming more blocks than twice the bits present is a lie
   (a 16384x16384 header over 2 KB of data would have libjpeg-turbo allocate 1.2 GB first). */
static int recio__jpeg_claim_ok(uint64_t w, uint64_t h, size_t n, char *errmsg, size_t cap) {
    if (!recio__pixels_ok(w, h, "JPEG", errmsg, cap)) return 0;
    if (w * h <= (uint64_t)n * 8 * 64 * 2) return 1;
    if (errmsg)
        recio__fmt(errmsg, cap, "decode: a JPEG of %Ux%U pixels cannot fit in %U bytes (truncated or corrupt)", w, h,
                   (uint64_t)n);
    return 0;
}

/* PNG: every chunk inside the file up to IEND; the IHDR's size against the limit and against the
   compressed data (deflate expands at most 1032 times); *empty_idat set when an IDAT of length 0
   comes before any data (stb 2.27 then calls memcpy(NULL, .., 0)). */
static int recio__png_check(const unsigned char *b, size_t n, int *empty_idat, char *errmsg, size_t cap) {
    static const unsigned char spp[7] = {1, 0, 3, 1, 2, 0, 4}; /* samples per pixel by colour type */
    uint64_t w, h, row, idat = 0;
    size_t i = 8;
    unsigned depth, type;
    *empty_idat = 0;
    if (n < 33 || memcmp(b + 12, "IHDR", 4) != 0 || recio__be32(b + 8) != 13) {
        if (errmsg) recio__fmt(errmsg, cap, "decode: bad PNG header (no IHDR first)");
        return 0;
    }
    w = recio__be32(b + 16), h = recio__be32(b + 20), depth = b[24], type = b[25];
    if (!recio__pixels_ok(w, h, "PNG", errmsg, cap)) return 0;
    if (type > 6 || !spp[type] || !depth || depth > 16) {
        if (errmsg) recio__fmt(errmsg, cap, "decode: bad PNG header (colour type %u, depth %u)", type, depth);
        return 0;
    }
    for (;;) {
        uint64_t len;
        if (n - i < 12 || (len = recio__be32(b + i)) > n - i - 12) {
            if (errmsg)
                recio__fmt(errmsg, cap, "decode: truncated PNG (the chunk at byte %U runs past the end)", (uint64_t)i);
            return 0;
        }
        if (memcmp(b + i + 4, "IDAT", 4) == 0) {
            if (len == 0 && idat == 0) *empty_idat = 1;
            idat += len;
        }
        if (memcmp(b + i + 4, "IEND", 4) == 0) break;
        i += 12 + (size_t)len;
    }
    row = 1 + (w * spp[type] * depth + 7) / 8;
    if (row * h <= idat * 1032 + 1032) return 1;
    if (errmsg)
        recio__fmt(errmsg, cap, "decode: a PNG of %Ux%U pixels cannot fit in %U bytes of data (truncated or corrupt)",
                   w, h, idat);
    return 0;
}

/* BMP: stb decodes only the uncompressed kinds (RLE is refused), whose pixels are rows padded to 4
   bytes from the header's data offset: all of them must be there. A negative height (rows stored top
   down) is a valid image of that many rows. *w and *h get the size. */
static int recio__bmp_check(const unsigned char *b, size_t n, int *w, int *h, char *errmsg, size_t cap) {
    uint32_t off, hsz, comp = 0;
    int64_t x, y;
    unsigned bpp;
    uint64_t need;
    if (n < 26) goto cut;
    off = recio_load_u32le(b + 10), hsz = recio_load_u32le(b + 14);
    if (hsz == 12) {
        x = b[18] | b[19] << 8, y = b[20] | b[21] << 8, bpp = (unsigned)(b[24] | b[25] << 8);
    } else if (hsz == 40 || hsz == 56 || hsz == 108 || hsz == 124) {
        if (n < 34) goto cut;
        x = (int32_t)recio_load_u32le(b + 18), y = (int32_t)recio_load_u32le(b + 22);
        bpp = (unsigned)(b[28] | b[29] << 8), comp = recio_load_u32le(b + 30);
    } else {
        if (errmsg) recio__fmt(errmsg, cap, "decode: bad BMP header (size %u)", (unsigned)hsz);
        return 0;
    }
    if (y < 0) y = -y;
    if (x <= 0 || !recio__pixels_ok((uint64_t)x, (uint64_t)y, "BMP", errmsg, cap)) return 0;
    *w = (int)x, *h = (int)y;
    if (comp != 0 && comp != 3) return 1; /* compressed: stb refuses it, in its words */
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
        if (errmsg) recio__fmt(errmsg, cap, "decode: bad BMP header (%u bits a pixel)", bpp);
        return 0;
    }
    need = (uint64_t)off + ((uint64_t)x * bpp + 31) / 32 * 4 * (uint64_t)y;
    if (need <= n) return 1;
    if (errmsg)
        recio__fmt(errmsg, cap, "decode: truncated BMP (%dx%d at %u bits needs %U bytes, there are %U)", *w, *h, bpp,
                   need, (uint64_t)n);
    return 0;
cut:
    if (errmsg) recio__fmt(errmsg, cap, "decode: truncated BMP (%U bytes)", (uint64_t)n);
    return 0;
}

/* stb reads through these callbacks, so a read past the end of the bytes (a file that ends before
   its image does, which stb would fill with zeros or leave uninitialised) is seen: `over`. */
typedef struct recio__stbin {
    const unsigned char *b;
    size_t n, at;
    int over;
} recio__stbin;

static int recio__stbin_read(void *u, char *dst, int size) {
    recio__stbin *s = (recio__stbin *)u;
    size_t k = s->n - s->at;
    if (size <= 0) return 0;
    if (k == 0) {
        s->over = 1;
        return 0;
    }
    if (k > (size_t)size) k = (size_t)size;
    memcpy(dst, s->b + s->at, k);
    s->at += k;
    return (int)k;
}

static void recio__stbin_skip(void *u, int k) {
    recio__stbin *s = (recio__stbin *)u;
    if (k <= 0) return;
    if ((size_t)k > s->n - s->at) s->over = 1, s->at = s->n;
    else s->at += (size_t)k;
}

static int recio__stbin_eof(void *u) {
    const recio__stbin *s = (const recio__stbin *)u;
    return s->at >= s->n;
}

/* A progressive JPEG's scans are not walked (refinement scans need every coefficient's history);
   instead it is decoded a second time with 16 bytes of 0xaa before the marker that ends each scan.
   A complete scan never reads them (stb skips bytes up to the next 0xff after a scan); a scan cut
   short reads them where stb reads zero bits, the first of them a 1, and gives other pixels (0x55
   missed 5 of 410 cuts in the test, whose first filled bit is 0 either way). 1 when the pixels
   agree. Costs a second decode, for progressive files only. */
static int recio__jpeg_same_with_filler(const unsigned char *b, size_t n, const stbi_uc *px, int w, int h, int want,
                                        const recio_allocator *a) {
    size_t i, k = 0, m = 0, scans = 0, end;
    unsigned char *v;
    stbi_io_callbacks io;
    recio__stbin in;
    stbi_uc *q;
    int w2 = 0, h2 = 0, c2 = 0, same;
    for (i = 0; i + 1 < n; i++) /* an upper bound: every SOS marker */
        scans += b[i] == 0xff && b[i + 1] == 0xda;
    if (!(v = (unsigned char *)recio__malloc(a, n + 16 * scans)))
        return 1; /* no memory for the check: stb's pixels stand */
    for (i = 0; i + 4 <= n;) {
        if (b[i] == 0xff && b[i + 1] == 0xda) { /* copy the header and the data, then the filler */
            end = recio__jpeg_scan_end(b, n, i + 2 + ((size_t)b[i + 2] << 8 | b[i + 3]));
            memcpy(v + m, b + k, end - k), m += end - k, k = end;
            memset(v + m, 0xaa, 16), m += 16;
            i = end;
        } else {
            i++;
        }
    }
    memcpy(v + m, b + k, n - k), m += n - k;
    memset(&in, 0, sizeof in);
    in.b = v, in.n = m;
    io.read = recio__stbin_read, io.skip = recio__stbin_skip, io.eof = recio__stbin_eof;
    q = stbi_load_from_callbacks(&io, &in, &w2, &h2, &c2, want);
    same = q && !in.over && w2 == w && h2 == h && memcmp(q, px, (size_t)w * (size_t)h * (size_t)want) == 0;
    if (q) stbi_image_free(q);
    recio__free(a, v);
    return same;
}

static recio_err recio__decode_stb(recio_image *out, const void *bytes, size_t n, int want, char *errmsg,
                                   size_t errmsg_size, const recio_allocator *a);

/* The channel counts a decode makes: 0 (as stored), 1, 3 or 4. */
static int recio__channels_ok(int c) { return c == 0 || c == 1 || c == 3 || c == 4; }

/* Why a decode's arguments are refused. */
static void recio__decode_args_why(int huge, int channels, char *errmsg, size_t cap) {
    if (huge) recio__fmt(errmsg, cap, "decode: image of more than 2^31 bytes");
    else if (!recio__channels_ok(channels))
        recio__fmt(errmsg, cap, "decode: channels %d: decode to 0 (as stored), 1, 3 or 4 channels", channels);
    else recio__fmt(errmsg, cap, "decode: bad arguments (a NULL image, bytes or output)");
}

/* A header over RECIO_MAX_PIXELS is a limit, not damage (RECIO_ERR_LIMIT): the format checks
   (recio__pixels_ok, libjpeg-turbo's output size) say so in their words, the one place they meet. */
static recio_err recio__decode_code(recio_err e, const char *why) {
    return e == RECIO_ERR_DECODE && strstr(why, "more than RECIO_MAX_PIXELS") ? RECIO_ERR_LIMIT : e;
}

static recio_err recio__decode_run(recio_image *out, const void *bytes, size_t n, int channels, int min_short,
                                   char *errmsg, size_t errmsg_size, const recio_allocator *a);

/* Decode with stb's allocations (and so the pixels, unless libjpeg-turbo decodes) through a. */
static recio_err recio__decode(recio_image *out, const void *bytes, size_t n, int channels, int min_short, char *errmsg,
                               size_t errmsg_size, const recio_allocator *a) {
    char why[RECIO_ERRMSG_SIZE];
    char *w = errmsg && errmsg_size ? errmsg : why;
    w[0] = 0;
    return recio__decode_code(
        recio__decode_run(out, bytes, n, channels, min_short, w, w == why ? sizeof why : errmsg_size, a), w);
}

static recio_err recio__decode_run(recio_image *out, const void *bytes, size_t n, int channels, int min_short,
                                   char *errmsg, size_t errmsg_size, const recio_allocator *a) {
    const recio_allocator *saved;
    recio_err e;
    if (errmsg && errmsg_size) errmsg[0] = 0;
    if (out && bytes && n == 0) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "decode: empty image (0 bytes)");
        return RECIO_ERR_DECODE;
    }
    if (!out || !bytes || n > INT_MAX || !recio__channels_ok(channels)) {
        if (errmsg) recio__decode_args_why(bytes && out && n > INT_MAX, channels, errmsg, errmsg_size);
        return RECIO_ERR_ARG;
    }
    memset(out, 0, sizeof *out);
#ifdef RECIO_TURBOJPEG
    if (n >= 3 && ((const unsigned char *)bytes)[0] == 0xff && ((const unsigned char *)bytes)[1] == 0xd8)
        return recio__tj_decode(out, (const unsigned char *)bytes, n, channels, min_short, errmsg, errmsg_size);
#else
    (void)min_short;
#endif
    saved = recio__stb_begin(a);
    e = recio__decode_stb(out, bytes, n, channels, errmsg, errmsg_size, a);
    recio__stb_end(saved);
    return e;
}

/* stb said no: its own allocation failing says nothing of the image (RECIO_ERR_NOMEM, so skip_bad
   keeps it); anything else is the image's fault. */
static recio_err recio__stb_fail(char *errmsg, size_t errmsg_size) {
    if (recio__stb_out_of_memory()) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "decode: out of memory");
        return RECIO_ERR_NOMEM;
    }
    if (errmsg)
        recio__fmt(errmsg, errmsg_size, "decode: %s", stbi_failure_reason() ? stbi_failure_reason() : "unknown");
    return RECIO_ERR_DECODE;
}

/* Everything decode checks before it allocates pixels, in one place for the decoder and for
   recio_decode_desc.check: the format, a JPEG's Huffman tables, a PNG's chunks, a BMP's header, the
   size against RECIO_MAX_PIXELS and against the bytes present, and (unless trust_scans) that every
   scan of a baseline JPEG is complete. k->scans: 1, or 2 for a progressive JPEG, whose last scan
   only its pixels can tell (recio__jpeg_same_with_filler). Runs inside recio__stb_begin. */
typedef struct recio__dchk {
    int fmt, w, h, c, empty_idat, scans;
} recio__dchk;
static recio_err recio__decode_checks(const unsigned char *b, size_t n, int trust_scans, recio__dchk *k, char *errmsg,
                                      size_t errmsg_size) {
    int bmp;
    memset(k, 0, sizeof *k);
    k->fmt = recio__format(b, n), k->scans = 1, bmp = k->fmt == RECIO__FMT_BMP;
    if (k->fmt == RECIO__FMT_NONE) {
        if (errmsg)
            recio__fmt(errmsg, errmsg_size, "decode: unsupported image format (recio decodes JPEG, PNG and BMP)");
        return RECIO_ERR_DECODE;
    }
    if (k->fmt == RECIO__FMT_JPEG && !recio__jpeg_dht_ok(b, n)) {
        if (errmsg)
            recio__fmt(errmsg, errmsg_size,
                       "decode: bad Huffman table (more than 256 symbols, or used before it is defined)");
        return RECIO_ERR_DECODE;
    }
    if ((k->fmt == RECIO__FMT_PNG && !recio__png_check(b, n, &k->empty_idat, errmsg, errmsg_size)) ||
        (bmp && !recio__bmp_check(b, n, &k->w, &k->h, errmsg, errmsg_size)))
        return RECIO_ERR_DECODE;
    if (!stbi_info_from_memory(b, (int)n, bmp ? NULL : &k->w, bmp ? NULL : &k->h, &k->c))
        return recio__stb_fail(errmsg, errmsg_size);
    if (k->fmt == RECIO__FMT_JPEG && !recio__jpeg_claim_ok((uint64_t)k->w, (uint64_t)k->h, n, errmsg, errmsg_size))
        return RECIO_ERR_DECODE;
    if (k->fmt == RECIO__FMT_JPEG && !trust_scans && (k->scans = recio__jpeg_scans_complete(b, n)) == 0) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "decode: truncated JPEG (a scan stops before its last block)");
        return RECIO_ERR_DECODE;
    }
    return RECIO_OK;
}

static recio_err recio__decode_stb(recio_image *out, const void *bytes, size_t n, int want, char *errmsg,
                                   size_t errmsg_size, const recio_allocator *a) {
    static const char *names[4] = {"", "JPEG", "PNG", "BMP"};
    const unsigned char *b = (const unsigned char *)bytes;
    unsigned char *copy = NULL;
    int w, h, c, fmt, empty_idat, scans;
    stbi_io_callbacks io;
    recio__stbin in;
    stbi_uc *px;
    recio__dchk k;
    recio_err e = recio__decode_checks(b, n, RECIO__TRUST_SCANS, &k, errmsg, errmsg_size);
    if (e != RECIO_OK) return e;
    w = k.w, h = k.h, c = k.c, fmt = k.fmt, empty_idat = k.empty_idat, scans = k.scans;
    if (want == 0) want = c == 2 ? 4 : c;
    memset(&in, 0, sizeof in);
    in.b = b, in.n = n;
    if (empty_idat) { /* stb 2.27 would memcpy to NULL: give it the chunks without the empty IDATs */
        size_t i = 8, m = 8;
        if (!(copy = (unsigned char *)recio__malloc(a, n))) return RECIO_ERR_NOMEM;
        memcpy(copy, b, 8);
        while (i + 12 <= n) { /* recio__png_check saw every chunk inside n, up to IEND */
            size_t len = recio__be32(b + i) + (size_t)12;
            if (len > 12 || memcmp(b + i + 4, "IDAT", 4) != 0) memcpy(copy + m, b + i, len), m += len;
            if (memcmp(b + i + 4, "IEND", 4) == 0) break;
            i += len;
        }
        in.b = copy, in.n = m;
    }
    io.read = recio__stbin_read, io.skip = recio__stbin_skip, io.eof = recio__stbin_eof;
    px = stbi_load_from_callbacks(&io, &in, &w, &h, &c, want);
    recio__free(a, copy);
    if (in.over) { /* stb read past the end: what it gave is made up */
        if (px) stbi_image_free(px);
        if (errmsg)
            recio__fmt(errmsg, errmsg_size, "decode: truncated %s (the data ends before the image does)", names[fmt]);
        return RECIO_ERR_DECODE;
    }
    if (!px) return recio__stb_fail(errmsg, errmsg_size);
    if (scans == 2 && !recio__jpeg_same_with_filler(b, n, px, w, h, want, a)) {
        stbi_image_free(px);
        if (errmsg)
            recio__fmt(errmsg, errmsg_size, "decode: truncated JPEG (a progressive scan stops before its last block)");
        return RECIO_ERR_DECODE;
    }
    if (!recio__shape_ok(w, h, want, RECIO_U8)) {
        stbi_image_free(px);
        if (errmsg) recio__fmt(errmsg, errmsg_size, "decode: image too large");
        return RECIO_ERR_DECODE;
    }
#ifdef RECIO_NO_STB_IMPLEMENTATION
    { /* the user's stb allocates with its own malloc: hand out pixels that recio_image_free can free */
        recio_image copy = recio_image_wrap(px, w, h, want, RECIO_U8, RECIO_HWC, 0);
        recio_err e;
        if (a) out->alloc = *a;
        e = recio_image_copy(&copy, out);
        stbi_image_free(px);
        return e;
    }
#else
    *out = recio__image_shape(w, h, want, RECIO_U8, RECIO_HWC);
    out->data = out->owned = px;
#if defined(RECIO__STB_TLS)
    if (a) out->alloc = *a; /* stb allocated through a */
#else
    (void)a; /* stb allocated through RECIO_MALLOC */
#endif
    return RECIO_OK;
#endif
}

RECIODEF recio_err recio_image_decode(recio_image *out, const void *bytes, size_t n, int channels) {
    return recio__decode(out, bytes, n, channels, 0, NULL, 0, NULL);
}

/* ---- label masks (recio_decode_desc.mask) ---- */

/* CRC-32 of a PNG chunk (ISO 3309), bit by bit: only a palette mask's rewritten IHDR needs one. */
static uint32_t recio__crc32(const unsigned char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    size_t i;
    int k;
    for (i = 0; i < n; i++)
        for (c ^= p[i], k = 0; k < 8; k++) c = c >> 1 ^ (0xedb88320u & ((uint32_t)0 - (c & 1)));
    return c ^ 0xffffffffu;
}

/* A palette PNG as the grey PNG of its indices, for stb (which would give the palette's colours):
   colour type 0 in the IHDR (its CRC made again), PLTE and tRNS left out (stb refuses a palette's
   tRNS in a grey image), nothing after IEND. recio__png_check has seen every chunk inside n. */
static unsigned char *recio__png_indices(const unsigned char *b, size_t n, size_t *m, const recio_allocator *a) {
    unsigned char *c = (unsigned char *)recio__malloc(a, n);
    size_t i = 8;
    uint32_t crc;
    if (!c) return NULL;
    memcpy(c, b, 8), *m = 8;
    while (i + 12 <= n) {
        size_t len = recio__be32(b + i) + (size_t)12;
        if (memcmp(b + i + 4, "PLTE", 4) != 0 && memcmp(b + i + 4, "tRNS", 4) != 0)
            memcpy(c + *m, b + i, len), *m += len;
        if (memcmp(b + i + 4, "IEND", 4) == 0) break;
        i += len;
    }
    c[25] = 0; /* the IHDR is the first chunk: bytes 8..32 */
    crc = recio__crc32(c + 12, 17);
    c[29] = (unsigned char)(crc >> 24), c[30] = (unsigned char)(crc >> 16), c[31] = (unsigned char)(crc >> 8),
    c[32] = (unsigned char)crc;
    return c;
}

/* A decoder's "decode: why" as the mask's "mask: why". */
static void recio__mask_words(char *errmsg) {
    if (errmsg && !strncmp(errmsg, "decode: ", 8))
        memmove(errmsg + 6, errmsg + 8, strlen(errmsg + 8) + 1), memcpy(errmsg, "mask: ", 6);
}

/* The refusal of a mask of another kind, named from its header. Its words are its own literals (no
   "JPEG" or "%s" that the decoder also uses): a shared literal would keep these in every program
   that decodes images, masks or not (docs/footprint.md). */
static recio_err recio__mask_refuse(const unsigned char *b, size_t n, char *errmsg, size_t cap) {
    static const char *const types[7] = {"grey PNG", "", "RGB PNG", "palette PNG", "grey+alpha PNG", "", "RGBA PNG"};
    int fmt = recio__format(b, n);
    char kind[48];
    if (fmt == RECIO__FMT_PNG && n >= 33 && b[25] < 7)
        recio__fmt(kind, sizeof kind, b[24] == 8 ? "an %u-bit %s" : "a %u-bit %s", (unsigned)b[24], types[b[25]]);
    else
        recio__fmt(kind, sizeof kind,
                   !n                       ? "an empty file"
                   : fmt == RECIO__FMT_JPEG ? "a JPEG"
                   : fmt == RECIO__FMT_BMP  ? "a BMP"
                                            : "a file of no image format recio reads");
    if (errmsg)
        recio__fmt(errmsg, cap,
                   "mask: %s, not a label mask (an 8-bit grey PNG, or a palette PNG whose indices are the labels: "
                   "another kind's values are not its labels)",
                   kind);
    return RECIO_ERR_DECODE;
}

static recio_err recio__mask_decode(recio_image *out, const void *bytes, size_t n, char *errmsg, size_t cap,
                                    const recio_allocator *a) {
    static const unsigned char scale[9] = {0, 255, 0x55, 0, 0x11, 0, 0, 0, 1}; /* stb's widening of grey < 8 bits */
    const unsigned char *b = (const unsigned char *)bytes;
    unsigned char *copy = NULL;
    size_t m = 0, i;
    int empty, pal;
    recio_err e;
    if (errmsg && cap) errmsg[0] = 0;
    if (!out || (!bytes && n)) return RECIO_ERR_ARG;
    memset(out, 0, sizeof *out);
    if (recio__format(b, n) != RECIO__FMT_PNG) return recio__mask_refuse(b, n, errmsg, cap);
    if (!recio__png_check(b, n, &empty, errmsg, cap)) return recio__mask_words(errmsg), RECIO_ERR_DECODE;
    pal = b[25] == 3 && (b[24] == 1 || b[24] == 2 || b[24] == 4 || b[24] == 8);
    if (!pal && !(b[25] == 0 && b[24] == 8)) return recio__mask_refuse(b, n, errmsg, cap);
    if (pal && !(copy = recio__png_indices(b, n, &m, a))) return RECIO_ERR_NOMEM;
    e = recio__decode(out, copy ? copy : b, copy ? m : n, 1, 0, errmsg, cap, a);
    recio__free(a, copy);
    if (e != RECIO_OK) return recio__mask_words(errmsg), e;
    if (pal && b[24] < 8) /* indices of 1, 2 or 4 bits came out widened as grey: narrow them back */
        for (i = 0; i < recio_image_bytes(out); i++) ((unsigned char *)out->data)[i] /= scale[b[24]];
    return RECIO_OK;
}

static int recio__decode_hint(const recio_transform *t); /* with the op table */

/* Without pixels, a JPEG's end-of-image marker (within the last 4 KiB: cameras and editors append
   bytes after it) says what the scan walk cannot: that no header was cut (the walk leaves those to
   stb's reads) and that a progressive JPEG's last scan is there (told otherwise only by its pixels). */
static int recio__jpeg_ends(const unsigned char *b, size_t n) {
    size_t i = n > 4096 ? n - 4096 : 0;
    for (; i + 2 <= n; i++)
        if (b[i] == 0xff && b[i + 1] == 0xd9) return 1;
    return 0;
}

/* recio_decode_desc.check: the decoder's checks without its pixels (a mask's kind and labels need
   its pixels: it is decoded and dropped). */
static recio_err recio__check_only(recio_image *out, const recio_decode_desc *d, const recio_allocator *a, char *why) {
    char own[RECIO_ERRMSG_SIZE];
    char *w = why ? why : own;
    const unsigned char *b = (const unsigned char *)d->bytes;
    const recio_allocator *saved;
    recio__dchk k;
    recio_err e;
    if (d->mask) { /* a mask's kind and labels need its pixels: decoded, then dropped */
        if ((e = recio__mask_decode(out, d->bytes, d->size, w, sizeof own, a)) == RECIO_OK) {
            recio_image s = recio__image_shape(out->width, out->height, 1, RECIO_U8, RECIO_HWC);
            recio_image_free(out);
            *out = s;
        }
        return e;
    }
    if (!out || !b || d->size == 0 || d->size > INT_MAX || !recio__channels_ok(d->channels))
        return recio__decode(out, d->bytes, d->size, d->channels, 0, w, sizeof own, a); /* its words */
    w[0] = 0;
    memset(out, 0, sizeof *out);
    saved = recio__stb_begin(a);
    e = recio__decode_checks(b, d->size, 0, &k, w, sizeof own);
    recio__stb_end(saved);
    if (e == RECIO_OK && k.fmt == RECIO__FMT_JPEG && !recio__jpeg_ends(b, d->size))
        e = RECIO_ERR_DECODE, recio__fmt(w, sizeof own, "decode: truncated JPEG (no end-of-image marker)");
    if (e != RECIO_OK) return recio__decode_code(e, w);
    *out = recio__image_shape(k.w, k.h, d->channels ? d->channels : k.c == 2 ? 4 : k.c, RECIO_U8, RECIO_HWC);
    return RECIO_OK;
}

RECIODEF recio_err recio_image_decode_desc(recio_image *out, const recio_decode_desc *d) {
    const recio_allocator *a;
    char *why;
    if (!d) {
        if (out) memset(out, 0, sizeof *out);
        return RECIO_ERR_ARG;
    }
    a = d->alloc.alloc || d->alloc.user ? &d->alloc : NULL;
    why = d->errmsg;
    if (d->mask && d->channels != 0 && d->channels != 1) {
        if (out) memset(out, 0, sizeof *out);
        if (why)
            recio__fmt(why, RECIO_ERRMSG_SIZE, "mask: channels %d: a mask decodes to 1 channel (or 0)", d->channels);
        return RECIO_ERR_ARG;
    }
    if (d->check) return recio__check_only(out, d, a, why);
    if (d->mask) return recio__mask_decode(out, d->bytes, d->size, why, why ? RECIO_ERRMSG_SIZE : 0, a);
    return recio__decode(out, d->bytes, d->size, d->channels,
                         d->min_short || !d->transform ? d->min_short : recio__decode_hint(d->transform), why,
                         why ? RECIO_ERRMSG_SIZE : 0, a);
}

/* ---- geometry ---- */

RECIODEF recio_err recio_image_crop(const recio_image *in, recio_image *view, int x, int y, int w, int h) {
    if (!recio__valid(in) || !view || x < 0 || y < 0 || w <= 0 || h <= 0 || w > in->width - x || h > in->height - y)
        return RECIO_ERR_ARG;
    if (in->layout == RECIO_CHW) { /* planes are height rows apart: a shorter view cannot keep that */
        recio_image tmp;
        int c, r;
        recio_err e;
        memset(view, 0, sizeof *view);
        if ((e = recio_image_alloc(&tmp, w, h, in->channels, in->dtype, RECIO_CHW, &in->alloc)) != RECIO_OK) return e;
        for (c = 0; c < in->channels; c++)
            for (r = 0; r < h; r++) memcpy(recio__at(&tmp, 0, r, c), recio__at(in, x, y + r, c), tmp.stride);
        *view = tmp;
        return RECIO_OK;
    }
    *view = *in;
    view->owned = NULL;
    view->width = w;
    view->height = h;
    view->data = recio__at(in, x, y, 0);
    return RECIO_OK;
}

RECIODEF recio_err recio_image_center_crop(const recio_image *in, recio_image *view, int w, int h) {
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    return recio_image_crop(in, view, (in->width - w) / 2, (in->height - h) / 2, w, h);
}

RECIODEF recio_err recio_image_flip(const recio_image *in, recio_image *out) {
    size_t es, px;
    int x, y, c, planes;
    recio_err e;
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout)) != RECIO_OK) return e;
    es = recio_dtype_size(in->dtype);
    planes = in->layout == RECIO_CHW ? in->channels : 1;
    px = (in->layout == RECIO_CHW ? 1u : (size_t)in->channels) * es;
    for (c = 0; c < planes; c++)
        for (y = 0; y < in->height; y++) {
            const unsigned char *s = recio__at(in, 0, y, c);
            unsigned char *d = recio__at(out, in->width - 1, y, c);
            for (x = 0; x < in->width; x++, s += px, d -= px) memcpy(d, s, px);
        }
    return RECIO_OK;
}

static recio_err recio__image_vflip(const recio_image *in, recio_image *out) {
    size_t rb;
    int y, c, planes;
    recio_err e;
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout)) != RECIO_OK) return e;
    rb = recio__row_bytes(in->width, in->channels, in->dtype, in->layout);
    planes = in->layout == RECIO_CHW ? in->channels : 1;
    for (c = 0; c < planes; c++)
        for (y = 0; y < in->height; y++) memcpy(recio__at(out, 0, in->height - 1 - y, c), recio__at(in, 0, y, c), rb);
    return RECIO_OK;
}

static void recio__resize_short_size(int w, int h, int s, int *ow, int *oh) {
    if (w <= h) {
        *ow = s;
        *oh = (int)((int64_t)h * s / w);
    } else {
        *oh = s;
        *ow = (int)((int64_t)w * s / h);
    }
}

/* ---- the resampler: separable, fixed point, any crop window of the output, mirrored or not ----
   One axis maps output i to taps src[ofs[i] + k] * coef[i*K + k], k < K, coefs summing to 2^11
   (OpenCV's INTER_RESIZE_COEF_BITS). Rows are resampled horizontally once into int rows (value *
   2^11), cached by source row, then combined vertically into u8 (two rows: OpenCV's 16-bit blend,
   recio__vrow2; more: (sum + 2^21) >> 22, recio__vrowk). Only the window [o, o+n) of the full-size
   output is computed, so "resize then crop" costs the crop only. */

typedef struct recio__arena {
    unsigned char *buf;
    size_t cap, used;
    int growable; /* heap blocks may be added (no caller scratch) */
    int short_;   /* a request did not fit the caller's fixed scratch: RECIO_ERR_SMALL, not NOMEM */
    recio_allocator alloc;
    void *blocks; /* heap blocks, linked through their first pointer */
    size_t asked; /* every request plus its alignment: one buffer this big serves the same run */
} recio__arena;

static void *recio__arena_get(recio__arena *a, size_t n) {
    size_t at = (a->used + RECIO__ALIGN - 1) & ~(size_t)(RECIO__ALIGN - 1);
    a->asked = n > SIZE_MAX - RECIO__ALIGN - a->asked ? SIZE_MAX : a->asked + n + RECIO__ALIGN;
    if (a->buf && at <= a->cap && n <= a->cap - at) {
        a->used = at + n;
        return a->buf + at;
    }
    if (!a->growable) return a->short_ = 1, (void *)NULL;
    if (n > SIZE_MAX - 2 * RECIO__ALIGN) return NULL;
    {
        size_t cap = n + 2 * RECIO__ALIGN < ((size_t)1 << 16) ? ((size_t)1 << 16) : n + 2 * RECIO__ALIGN;
        unsigned char *b = (unsigned char *)recio__malloc(&a->alloc, cap);
        if (!b) return NULL;
        memcpy(b, &a->blocks, sizeof(void *));
        a->blocks = b;
        a->buf = b + RECIO__ALIGN;
        a->cap = cap - RECIO__ALIGN;
        a->used = n;
        return a->buf;
    }
}

static void recio__arena_free(recio__arena *a) {
    while (a->blocks) {
        void *next;
        memcpy(&next, a->blocks, sizeof(void *));
        recio__free(&a->alloc, a->blocks);
        a->blocks = next;
    }
}

/* Taps of one axis: output i of the full output size `dn` (window from o, n outputs, reversed when
   flip), source size sn. LINEAR is OpenCV's cv::resize INTER_LINEAR to the bit: fx = (float)((d +
   0.5) * scale - 0.5), weights rounded to nearest-even on 2^11; along x a tap outside the image is
   clamped to the edge pixel, along y (`rows`) the first row index may be -1 or sn - 1 and rows are
   clamped when fetched. AREA (when shrinking) weighs source pixel j by |[j, j+1] & [i*s, (i+1)*s]| / s. */
/* The support (half width, in source pixels at scale 1) of a PIL filter: triangle, cubic, Lanczos-3. */
static double recio__aa_support(recio_filter f) { return f == RECIO_LINEAR_AA ? 1.0 : f == RECIO_CUBIC_AA ? 2.0 : 3.0; }
static int recio__is_aa(recio_filter f) { return f == RECIO_LINEAR_AA || f == RECIO_CUBIC_AA || f == RECIO_LANCZOS_AA; }

/* Taps per output of an axis sn -> dn. */
static int recio__axis_k(int sn, int dn, recio_filter f, int rows) {
    double scale = 1.0 / ((double)dn / sn);
    int K = (f == RECIO_AREA && scale > 1.0) ? (int)ceil(scale) + 1 : 2;
    if (f == RECIO_NEAREST) K = 1;
    if (f == RECIO_CUBIC) K = 4;
    if (f == RECIO_LANCZOS) K = 8;
    if (recio__is_aa(f)) K = (int)ceil(recio__aa_support(f) * (scale > 1.0 ? scale : 1.0)) * 2 + 1; /* PIL's bound */
    if (K > 2 && K > sn) K = sn; /* the whole source row already */
    if (sn == 1 && !rows) K = 1; /* one column: nothing to blend, and no second tap to read */
    return K;
}

/* The filters' weights: OpenCV's (float, as cv::resize computes them) and PIL's (double). */
static void recio__cubic_w(float x, float w[4]) { /* Keys with a = -0.75 at distances 1+x, x, 1-x, 2-x */
    const float a = -0.75f;
    float t = x + 1, u = 1 - x;
    w[0] = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    w[2] = ((a + 2) * u - (a + 3)) * u * u + 1;
    w[3] = 1.0f - w[0] - w[1] - w[2];
}
static void recio__lanczos4_w(float x, float w[8]) { /* sinc(t) sinc(t/4) at t = x+3 .. x-4, normalised */
    float sum = 0;
    int i;
    for (i = 0; i < 8; i++) {
        double t = (double)x + 3 - i, pt = 3.14159265358979323846 * t;
        w[i] = fabs(t) < 1e-6 ? 1.0f : (float)(4.0 * sin(pt) * sin(pt / 4) / (pt * pt));
        sum += w[i];
    }
    for (i = 0; i < 8; i++) w[i] *= 1.0f / sum;
}
static double recio__sinc(double x) {
    double px = 3.14159265358979323846 * x;
    return x == 0 ? 1.0 : sin(px) / px;
}
static double recio__aa_w(recio_filter f, double x) {
    if (x < 0) x = -x;
    if (f == RECIO_LINEAR_AA) return x < 1 ? 1 - x : 0;
    if (f == RECIO_CUBIC_AA)
        return x < 1 ? (1.5 * x - 2.5) * x * x + 1 : x < 2 ? ((-0.5 * x + 2.5) * x - 4) * x + 2 : 0;
    return x < 3 ? recio__sinc(x) * recio__sinc(x / 3) : 0;
}

/* OpenCV's CUBIC / LANCZOS taps of output d: K weights from sx - K/2 + 1, each rounded to 2^11 on
   its own as cv::resize rounds them; taps outside the source take the edge pixel (OpenCV's
   replicated border), so their weights are added onto the edge tap. */
static void recio__taps_cv(int16_t *cf, int *ofs, int K, int sn, int d, double scale, recio_filter f) {
    float fx = (float)((d + 0.5) * scale - 0.5), w[8];
    int sx = (int)floorf(fx), taps = f == RECIO_CUBIC ? 4 : 8, j, first;
    fx -= (float)sx;
    if (f == RECIO_CUBIC) recio__cubic_w(fx, w);
    else recio__lanczos4_w(fx, w);
    first = sx - taps / 2 + 1;
    *ofs = first < 0 ? 0 : first > sn - K ? sn - K : first;
    for (j = 0; j < taps; j++) {
        int p = first + j;
        p = p < 0 ? 0 : p > sn - 1 ? sn - 1 : p;
        cf[p - *ofs] = (int16_t)(cf[p - *ofs] + lrintf(w[j] * RECIO__FIX));
    }
}

/* PIL's taps (ImagingResample's precompute_coeffs): centre (d + 0.5) * scale, support widened by the
   shrink factor, taps [xmin, xmax) inside the source only, normalised to sum 1; then 2^11 with the
   largest tap taking the rounding, for exact unit gain. */
static void recio__taps_aa(int16_t *cf, int *ofs, int K, int sn, int d, double scale, recio_filter f) {
    double fs = scale > 1.0 ? scale : 1.0, support = recio__aa_support(f) * fs, centre = (d + 0.5) * scale, sum = 0;
    int xmin = (int)(centre - support + 0.5), xmax = (int)(centre + support + 0.5), j, isum = 0, big = 0, n;
    if (xmin < 0) xmin = 0;
    if (xmax > sn) xmax = sn;
    n = xmax - xmin;
    if (n > K) n = K;
    for (j = 0; j < n; j++) sum += recio__aa_w(f, (j + xmin - centre + 0.5) / fs);
    *ofs = xmin > sn - K ? sn - K : xmin;
    for (j = 0; j < n; j++) {
        double w = recio__aa_w(f, (j + xmin - centre + 0.5) / fs);
        int k = xmin - *ofs + j, v = (int)floor((sum != 0 ? w / sum : 0) * RECIO__FIX + 0.5);
        cf[k] = (int16_t)v;
        isum += v;
        if (v > cf[big]) big = k;
    }
    cf[big] = (int16_t)(cf[big] + RECIO__FIX - isum);
}

/* Fills ax (ofs and coef already carved for n outputs of ax->k taps). */
static void recio__axis_taps(recio__axis *ax, int sn, int dn, int o, int n, int flip, recio_filter f, int rows) {
    double scale = 1.0 / ((double)dn / sn);
    int i, k, K = ax->k;
    ax->n = n;
    ax->plain = f == RECIO_LINEAR || f == RECIO_AREA;
    ax->wide = f == RECIO_LANCZOS || f == RECIO_LANCZOS_AA;
    for (i = 0; i < n; i++) {
        int d = o + (flip ? n - 1 - i : i), *ofs = &ax->ofs[i];
        int16_t *cf = &ax->coef[(size_t)i * (size_t)K];
        memset(cf, 0, (size_t)K * sizeof(int16_t));
        if (f == RECIO_NEAREST && sn > 1) {
            int sx = (int)floor(d * scale); /* cv::resize INTER_NEAREST: no half-pixel shift */
            *ofs = sx < sn - 1 ? sx : sn - 1;
            cf[0] = RECIO__FIX;
        } else if (K == 1) {
            *ofs = 0;
            cf[0] = RECIO__FIX;
        } else if (f == RECIO_CUBIC || f == RECIO_LANCZOS) {
            recio__taps_cv(cf, ofs, K, sn, d, scale, f);
        } else if (recio__is_aa(f)) {
            recio__taps_aa(cf, ofs, K, sn, d, scale, f);
        } else if (f == RECIO_LINEAR || scale <= 1.0) {
            float fx = (float)((d + 0.5) * scale - 0.5);
            int sx = (int)floorf(fx);
            fx -= (float)sx;
            if (!rows && sx < 0) fx = 0, sx = 0;
            if (!rows && sx >= sn - 1) fx = 0, sx = sn - 1;
            cf[0] = (int16_t)lrintf((1.0f - fx) * RECIO__FIX);
            cf[1] = (int16_t)lrintf(fx * RECIO__FIX);
            *ofs = sx;
            if (!rows && sx == sn - 1) *ofs = sx - 1, cf[1] = cf[0], cf[0] = 0; /* same value, read inside */
        } else {
            double lo = d * scale, hi = (d + 1) * scale;
            int j0 = (int)floor(lo), sum = 0, big = 0;
            if (j0 > sn - K) j0 = sn - K < 0 ? 0 : sn - K;
            *ofs = j0;
            for (k = 0; k < K && j0 + k < sn; k++) {
                double l = lo > j0 + k ? lo : j0 + k, h = hi < j0 + k + 1 ? hi : j0 + k + 1;
                int w = h > l ? (int)floor((h - l) / scale * RECIO__FIX + 0.5) : 0;
                cf[k] = (int16_t)w;
                sum += w;
                if (w > cf[big]) big = k;
            }
            cf[big] = (int16_t)(cf[big] + RECIO__FIX - sum); /* exact unit gain */
        }
    }
}

/* Horizontal pass of one source row into dst (n*C ints, plus 4 ints of slack that a kernel's last
   16-byte store may overwrite). LINEAR with 3 or 4 channels goes through the column's kernel. */
static void recio__hrow(const unsigned char *s, int C, const recio__axis *ax, int32_t *dst, const recio__kern *kn) {
    int i, k, c, n = ax->n, K = ax->k;
    const int *ofs = ax->ofs;
    const int16_t *cf = ax->coef;
    if (K == 2 && ax->plain && (C == 3 || C == 4)) {
        kn->hrow2(s, C, ax, dst);
    } else if (K == 2 && C == 1) {
        for (i = 0; i < n; i++, cf += 2) dst[i] = s[ofs[i]] * cf[0] + s[ofs[i] + 1] * cf[1];
    } else if (C == 3) { /* RGB, the common case of the many-tap filters: one pass over the taps */
        for (i = 0; i < n; i++, dst += 3, cf += K) {
            const unsigned char *p = s + ofs[i] * 3;
            int32_t r = 0, g = 0, b = 0;
            for (k = 0; k < K; k++, p += 3) r += p[0] * cf[k], g += p[1] * cf[k], b += p[2] * cf[k];
            dst[0] = r, dst[1] = g, dst[2] = b;
        }
    } else {
        for (i = 0; i < n; i++, dst += C, cf += K)
            for (c = 0; c < C; c++) {
                const unsigned char *p = s + ofs[i] * C + c;
                int32_t v = 0;
                for (k = 0; k < K; k++) v += p[k * C] * cf[k];
                dst[c] = v;
            }
    }
}

/* Outputs [lo, hi) of a 2-tap axis whose taps a kernel may read with one 8-byte load from ofs*C:
   ofs <= width - 2 - (C == 3) keeps it inside the row. ofs is monotonic, so this is one run. */
static void recio__axis_bounds(recio__axis *ax, int C, int width) {
    int last = width - 2 - (C == 3);
    ax->lo = 0;
    ax->hi = ax->n;
    while (ax->lo < ax->n && ax->ofs[ax->lo] > last) ax->lo++;
    while (ax->hi > ax->lo && ax->ofs[ax->hi - 1] > last) ax->hi--;
}

/* K rows (AREA) into u8: row by row into acc, skipping the zero taps at the window's ends. The sum
   is at most 255 * 2^11 * 2^11 < 2^31 since the taps add up to 2^11. */
static void recio__vrowk(const int32_t *const *rp, const int16_t *b, int K, int32_t *acc, unsigned char *line, int n) {
    int r, x, first = 1;
    for (r = 0; r < K; r++) {
        const int32_t *row = rp[r];
        int32_t w = b[r];
        if (!w) continue;
        if (first)
            for (x = 0; x < n; x++) acc[x] = row[x] * w + (1 << 21);
        else
            for (x = 0; x < n; x++) acc[x] += row[x] * w;
        first = 0;
    }
    for (x = 0; x < n; x++) {
        int32_t v = first ? 0 : acc[x] >> 22;
        line[x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* The same in 64 bits, pixel by pixel: for the Lanczos filters, whose sums can pass 2^31 (the |taps|
   of Lanczos-4 add up to 1.71, of PIL's Lanczos-3 to 1.54: 1.54^2 * 255 * 2^22 > 2^31; CUBIC's to
   1.375, CUBIC_AA's to 1.25, so recio__vrowk holds them), and for 1 or 2 taps of the new filters
   (no acc row is carved for those). The same integers as recio__vrowk where that does not overflow. */
static void recio__vrowk64(const int32_t *const *rp, const int16_t *b, int K, unsigned char *line, int n) {
    int r, x;
    for (x = 0; x < n; x++) {
        int64_t v = (int64_t)1 << 21;
        for (r = 0; r < K; r++) v += (int64_t)rp[r][x] * b[r];
        v >>= 22;
        line[x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* Where a materialised row goes: u8 into an image, or through a per-channel table into f32 (HWC/CHW). */
typedef struct recio__sink {
    recio_image *img;        /* n x rows output */
    const float *lut;        /* C*256 floats, NULL = u8 */
    const float *mean, *std; /* not NULL: lut[c][v] is exactly ((float)v - mean[c]) / std[c] */
    const recio__kern *kn;   /* the transform's column; NULL: pick one (an eager op) */
} recio__sink;

static void recio__emit(const recio__sink *k, int y, const unsigned char *row, int n, int C, const recio__kern *kn) {
    int x, c;
    if (!k->lut) {
        if (k->img->layout == RECIO_HWC) {
            memcpy(recio__at(k->img, 0, y, 0), row, (size_t)n * (size_t)C);
            return;
        }
        for (c = 0; c < C; c++) {
            unsigned char *d = recio__at(k->img, 0, y, c);
            for (x = 0; x < n; x++) d[x] = row[x * C + c];
        }
        return;
    }
    if (k->img->layout == RECIO_CHW && C == 3) { /* the hot path: one pass, three planes */
        float *const d[3] = {(float *)(void *)recio__at(k->img, 0, y, 0), (float *)(void *)recio__at(k->img, 0, y, 1),
                             (float *)(void *)recio__at(k->img, 0, y, 2)};
        if (k->mean) kn->norm3(row, d, n, k->lut, k->mean, k->std);
        else recio__norm3_c(row, d, n, k->lut, NULL, NULL);
    } else if (k->img->layout == RECIO_CHW) {
        for (c = 0; c < C; c++) {
            float *d = (float *)(void *)recio__at(k->img, 0, y, c);
            const float *l = k->lut + c * 256;
            for (x = 0; x < n; x++) d[x] = l[row[x * C + c]];
        }
    } else {
        float *d = (float *)(void *)recio__at(k->img, 0, y, 0);
        for (x = 0; x < n; x++)
            for (c = 0; c < C; c++, d++, row++) *d = k->lut[c * 256 + *row];
    }
}

/* The logical source of a resampling pass is sw x sh; src holds only part of it, whose first pixel
   is the source's (sx0, sy0) (a JPEG decoded over a window). The taps must land inside src. */
typedef struct recio__srcwin {
    int sw, sh, sx0, sy0;
} recio__srcwin;

static int recio__taps_inside(const recio__axis *ax, int sx0, int n, int rows, int sn) {
    int i, lo, hi;
    for (i = 0; i < ax->n; i++) {
        lo = ax->ofs[i], hi = ax->ofs[i] + ax->k - 1;
        if (rows) lo = lo < 0 ? 0 : lo, hi = hi >= sn ? sn - 1 : hi; /* rows are clamped when fetched */
        if (lo - sx0 < 0 || hi - sx0 >= n) return 0;
    }
    return 1;
}

/* The memory of one pass, carved from one block in this order. recio__rs_carve(NULL, ...) only adds
   the sizes up: the pass and recio_transform_query call the same function, so the bound and
   the allocation cannot drift apart. kx == 0: a copy pass (no resampling), one output line only. */
typedef struct recio__rs_mem {
    int *xofs, *yofs;
    int16_t *xcoef, *ycoef;
    int32_t **rows, *acc;
    const int32_t **rp;
    int *tag;
    unsigned char *line;
} recio__rs_mem;

/* The next n bytes of the block (NULL when only counting), aligned. */
static void *recio__carve(unsigned char *base, size_t *at, size_t n) {
    void *p = base && n ? base + *at : NULL;
    *at += (n + RECIO__ALIGN - 1) & ~(size_t)(RECIO__ALIGN - 1);
    return p;
}

static size_t recio__rs_carve(unsigned char *base, int kx, int ky, int ow, int oh, size_t rl, recio__rs_mem *m) {
    recio__rs_mem tmp;
    size_t at = 0;
    int r;
    if (!m) m = &tmp;
    m->line = (unsigned char *)recio__carve(base, &at, rl);
    if (!kx) return at;
    m->xofs = (int *)recio__carve(base, &at, (size_t)ow * sizeof(int));
    m->xcoef = (int16_t *)recio__carve(base, &at, (size_t)ow * (size_t)kx * sizeof(int16_t));
    m->yofs = (int *)recio__carve(base, &at, (size_t)oh * sizeof(int));
    m->ycoef = (int16_t *)recio__carve(base, &at, (size_t)oh * (size_t)ky * sizeof(int16_t));
    m->rows = (int32_t **)recio__carve(base, &at, (size_t)ky * sizeof(int32_t *));
    m->acc = (int32_t *)recio__carve(base, &at, ky > 2 ? rl * sizeof(int32_t) : 0);
    m->rp = (const int32_t **)recio__carve(base, &at, (size_t)ky * sizeof(int32_t *));
    m->tag = (int *)recio__carve(base, &at, (size_t)ky * sizeof(int));
    for (r = 0; r < ky; r++) { /* ky cached source rows, horizontally resampled */
        int32_t *row = (int32_t *)recio__carve(base, &at, (rl + 4) * sizeof(int32_t));
        if (base) m->rows[r] = row;
    }
    return at;
}

/* Bytes recio__resample takes from the arena for that pass: an upper bound when sw x sh is the
   largest source the pass may read (taps only grow with the source). */
/* The filter a pass of sw x sh to dw x dh uses: RECIO_AUTO resolved by MXNet's rule (GetInterMethod). */
static recio_filter recio__filter_for(recio_filter f, int sw, int sh, int dw, int dh) {
    if (f != RECIO_AUTO) return f;
    return dw > sw && dh > sh ? RECIO_CUBIC : dw < sw && dh < sh ? RECIO_AREA : RECIO_LINEAR;
}

static size_t recio__rs_need(int sw, int sh, int dw, int dh, int ow, int oh, int C, recio_filter f) {
    size_t rl = (size_t)ow * (size_t)C;
    if (f == RECIO_AUTO) { /* sw x sh may be a bound, and AUTO's choice is not monotonic in it: the most of the three */
        size_t a = recio__rs_need(sw, sh, dw, dh, ow, oh, C, RECIO_CUBIC),
               b = recio__rs_need(sw, sh, dw, dh, ow, oh, C, RECIO_AREA);
        return a > b ? a : b; /* LINEAR's 2 taps are fewer than either's */
    }
    if (dw == sw && dh == sh) return recio__rs_carve(NULL, 0, 0, ow, oh, rl, NULL) + RECIO__ALIGN;
    return recio__rs_carve(NULL, recio__axis_k(sw, dw, f, 0), recio__axis_k(sh, dh, f, 1), ow, oh, rl, NULL) +
           RECIO__ALIGN;
}

/* Output window (ox, oy, ow x oh) of the source resized to dw x dh, mirrored when flip, into the sink. */
static recio_err recio__resample(recio__arena *a, const recio_image *src, const recio__srcwin *sw, int dw, int dh,
                                 int ox, int oy, int ow, int oh, int flip, recio_filter f, const recio__sink *k) {
    recio__axis hx, vy;
    recio__rs_mem m;
    unsigned char *block;
    int C = src->channels, y, r, x, K, i, copy;
    size_t rl = (size_t)ow * (size_t)C;
    recio__srcwin whole;
    const recio__kern *kn = k->kn ? k->kn : recio__kern_pick();
    if (!sw) {
        whole.sw = src->width, whole.sh = src->height, whole.sx0 = whole.sy0 = 0;
        sw = &whole;
    }
    copy = dw == sw->sw && dh == sw->sh;
    f = recio__filter_for(f, sw->sw, sw->sh, dw, dh);
    hx.k = copy ? 0 : recio__axis_k(sw->sw, dw, f, 0);
    vy.k = copy ? 0 : recio__axis_k(sw->sh, dh, f, 1);
    if (!(block = (unsigned char *)recio__arena_get(a, recio__rs_carve(NULL, hx.k, vy.k, ow, oh, rl, NULL))))
        return RECIO_ERR_NOMEM;
    recio__rs_carve(block, hx.k, vy.k, ow, oh, rl, &m);
    if (copy) { /* no resampling: copy rows, mirrored or not */
        if (ox < sw->sx0 || oy < sw->sy0 || ox - sw->sx0 + ow > src->width || oy - sw->sy0 + oh > src->height)
            return RECIO_ERR_ARG;
        for (y = 0; y < oh; y++) {
            const unsigned char *s = recio__at(src, ox - sw->sx0, oy - sw->sy0 + y, 0);
            if (flip)
                for (x = 0; x < ow; x++) memcpy(m.line + (size_t)x * C, s + (size_t)(ow - 1 - x) * C, (size_t)C);
            recio__emit(k, y, flip ? m.line : s, ow, C, kn); /* emit reads the row: no copy of it first */
        }
        return RECIO_OK;
    }
    hx.ofs = m.xofs, hx.coef = m.xcoef, vy.ofs = m.yofs, vy.coef = m.ycoef;
    recio__axis_taps(&hx, sw->sw, dw, ox, ow, flip, f, 0);
    recio__axis_taps(&vy, sw->sh, dh, oy, oh, 0, f, 1);
    if (!recio__taps_inside(&hx, sw->sx0, src->width, 0, sw->sw) ||
        !recio__taps_inside(&vy, sw->sy0, src->height, 1, sw->sh))
        return RECIO_ERR_ARG; /* a window too small for its pass: a bug, never a read outside */
    for (i = 0; i < ow; i++) hx.ofs[i] -= sw->sx0;
    if (hx.k == 2 && hx.plain) recio__axis_bounds(&hx, C, src->width);
    K = vy.k;
    for (r = 0; r < K; r++) m.tag[r] = -1;
    for (y = 0; y < oh; y++) {
        const int16_t *b = &vy.coef[(size_t)y * (size_t)K];
        int y0 = vy.ofs[y];
        for (r = 0; r < K; r++) {
            int sy = y0 + r < 0 ? 0 : y0 + r < sw->sh ? y0 + r : sw->sh - 1, slot = sy % K;
            if (m.tag[slot] != sy) {
                recio__hrow(recio__at(src, 0, sy - sw->sy0, 0), C, &hx, m.rows[slot], kn);
                m.tag[slot] = sy;
            }
            m.rp[r] = m.rows[slot];
        }
        if (vy.wide || (!vy.plain && K <= 2)) {
            recio__vrowk64(m.rp, b, K, m.line, (int)rl);
        } else if (K == 2) {
            kn->vrow2(m.rp[0], m.rp[1], b[0], b[1], m.line, (int)rl);
        } else {
            recio__vrowk(m.rp, b, K, m.acc, m.line, (int)rl);
        }
        recio__emit(k, y, m.line, ow, C, kn);
    }
    return RECIO_OK;
}

/* Temporary memory of a public op: the caller's allocator, freed before return. */
static recio_err recio__resample_op(const recio_image *in, recio_image *out, int dw, int dh, recio_filter f) {
    recio__arena a;
    recio__sink k;
    recio_err e;
    if (!recio__is_u8hwc(in)) return recio__valid(in) ? RECIO_ERR_UNSUPPORTED : RECIO_ERR_ARG;
    if (dw <= 0 || dh <= 0 || (unsigned)f > (unsigned)RECIO_AUTO) return RECIO_ERR_ARG; /* negatives wrap past it */
    if ((e = recio__out(out, dw, dh, in->channels, RECIO_U8, RECIO_HWC)) != RECIO_OK) return e;
    memset(&a, 0, sizeof a);
    a.growable = 1;
    a.alloc = in->alloc;
    memset(&k, 0, sizeof k);
    k.img = out;
    e = recio__resample(&a, in, NULL, dw, dh, 0, 0, dw, dh, 0, f, &k);
    recio__arena_free(&a);
    return e;
}

RECIODEF recio_err recio_image_resize(const recio_image *in, recio_image *out, int w, int h, recio_filter f) {
    return recio__resample_op(in, out, w, h, f);
}

RECIODEF recio_err recio_image_resize_short(const recio_image *in, recio_image *out, int s, recio_filter f) {
    int w, h;
    if (!recio__valid(in) || s <= 0) return RECIO_ERR_ARG;
    recio__resize_short_size(in->width, in->height, s, &w, &h);
    return recio__resample_op(in, out, w, h, f);
}

/* Bilinear sample of channel c at (fx, fy) with the border rule; u8 HWC. */
static float recio__sample(const recio_image *in, float fx, float fy, int c, recio_border b, float bv) {
    int x0 = (int)floorf(fx), y0 = (int)floorf(fy), i, j;
    float ax = fx - (float)x0, ay = fy - (float)y0, v = 0;
    for (j = 0; j < 2; j++)
        for (i = 0; i < 2; i++) {
            int x = x0 + i, y = y0 + j, W = in->width, H = in->height;
            float w = (i ? ax : 1 - ax) * (j ? ay : 1 - ay), p;
            if (w == 0) continue;
            if (x < 0 || y < 0 || x >= W || y >= H) {
                if (b == RECIO_BORDER_CONSTANT) {
                    v += w * bv;
                    continue;
                }
                if (b == RECIO_BORDER_REPLICATE) {
                    x = x < 0 ? 0 : x >= W ? W - 1 : x;
                    y = y < 0 ? 0 : y >= H ? H - 1 : y;
                } else {
                    x = x < 0 ? -x - 1 : x >= W ? 2 * W - x - 1 : x;
                    y = y < 0 ? -y - 1 : y >= H ? 2 * H - y - 1 : y;
                    x = x < 0 ? 0 : x >= W ? W - 1 : x;
                    y = y < 0 ? 0 : y >= H ? H - 1 : y;
                }
            }
            p = *recio__at(in, x, y, c);
            v += w * p;
        }
    return v;
}

RECIODEF recio_err recio_image_affine(const recio_image *in, recio_image *out, const float m[6], recio_border b,
                                      float border_value) {
    int x, y, c, w, h;
    recio_err e;
    if (!recio__is_u8hwc(in)) return recio__valid(in) ? RECIO_ERR_UNSUPPORTED : RECIO_ERR_ARG;
    if (!m || !out) return RECIO_ERR_ARG;
    w = out->data ? out->width : in->width;
    h = out->data ? out->height : in->height;
    if ((e = recio__out(out, w, h, in->channels, RECIO_U8, RECIO_HWC)) != RECIO_OK) return e;
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            float fx = m[0] * (float)x + m[1] * (float)y + m[2], fy = m[3] * (float)x + m[4] * (float)y + m[5];
            unsigned char *d = recio__at(out, x, y, 0);
            for (c = 0; c < in->channels; c++) d[c] = recio__u8(recio__sample(in, fx, fy, c, b, border_value));
        }
    return RECIO_OK;
}

/* Output-to-input map of a counter-clockwise rotation by deg about the image centre. */
static void recio__rot_matrix(float m[6], int w, int h, float deg) {
    double t = deg * 3.14159265358979323846 / 180.0, cs = cos(t), sn = sin(t);
    double cx = (w - 1) * 0.5, cy = (h - 1) * 0.5;
    m[0] = (float)cs;
    m[1] = (float)-sn;
    m[2] = (float)(cx - cs * cx + sn * cy);
    m[3] = (float)sn;
    m[4] = (float)cs;
    m[5] = (float)(cy - sn * cx - cs * cy);
}

RECIODEF recio_err recio_image_rotate(const recio_image *in, recio_image *out, float deg, recio_border b,
                                      float border_value) {
    float m[6];
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    recio__rot_matrix(m, in->width, in->height, deg);
    return recio_image_affine(in, out, m, b, border_value);
}

/* in placed at (x0, y0) of a w x h canvas filled with value (HWC, any dtype): pad, letterbox, expand. */
static recio_err recio__place(const recio_image *in, recio_image *out, int x0, int y0, int w, int h, float value) {
    int x, y, c;
    size_t rb;
    recio_err e;
    if (!recio__valid(in) || in->layout != RECIO_HWC || x0 < 0 || y0 < 0 || in->width > w - x0 || in->height > h - y0)
        return RECIO_ERR_ARG;
    if (!recio__shape_ok(w, h, in->channels, in->dtype)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, w, h, in->channels, in->dtype, RECIO_HWC)) != RECIO_OK) return e;
    rb = recio__row_bytes(in->width, in->channels, in->dtype, RECIO_HWC);
    for (y = 0; y < h; y++) {
        for (x = 0; x < w; x++) {
            if (y >= y0 && y < y0 + in->height && x == x0) {
                memcpy(recio__at(out, x, y, 0), recio__at(in, 0, y - y0, 0), rb);
                x += in->width - 1;
                continue;
            }
            for (c = 0; c < in->channels; c++) recio__stf(recio__at(out, x, y, c), in->dtype, value);
        }
    }
    return RECIO_OK;
}

RECIODEF recio_err recio_image_pad(const recio_image *in, recio_image *out, int left, int top, int right, int bottom,
                                   float value) {
    if (!recio__valid(in) || left < 0 || top < 0 || right < 0 || bottom < 0 || left > INT_MAX - in->width - right ||
        top > INT_MAX - in->height - bottom)
        return RECIO_ERR_ARG;
    return recio__place(in, out, left, top, in->width + left + right, in->height + top + bottom, value);
}

RECIODEF recio_err recio_image_erase(const recio_image *in, recio_image *out, int x, int y, int w, int h, float value) {
    int i, j, c;
    recio_err e;
    if (!recio__valid(in) || w < 0 || h < 0) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout)) != RECIO_OK) return e;
    if ((e = recio_image_copy(in, out)) != RECIO_OK) return e;
    if (x < 0) w += x, x = 0; /* clipped, as a cutout square at the border is */
    if (y < 0) h += y, y = 0;
    if (w > in->width - x) w = in->width - x;
    if (h > in->height - y) h = in->height - y;
    for (j = 0; j < h; j++)
        for (i = 0; i < w; i++)
            for (c = 0; c < in->channels; c++) recio__stf(recio__at(out, x + i, y + j, c), in->dtype, value);
    return RECIO_OK;
}

/* The normalised 1-D Gaussian of torchvision's _get_gaussian_kernel1d, in float as it computes it. */
static void recio__gauss_kernel(float *k, int ksize, float sigma) {
    float sum = 0, half = (float)(ksize - 1) * 0.5f;
    int i;
    for (i = 0; i < ksize; i++) {
        float x = ((float)i - half) / sigma;
        k[i] = (float)exp(-0.5 * (double)(x * x));
        sum += k[i];
    }
    for (i = 0; i < ksize; i++) k[i] /= sum;
}

/* Mirror index (dcb|abcd|cba, torch's "reflect"); a side of one pixel reads itself. */
static int recio__mirror(int i, int n) {
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
}

/* Blur rows [0, h): per output row, the vertical pass into `row` (w*C floats), then the horizontal. */
static void recio__blur(const recio_image *in, recio_image *out, const float *k, int K, float *row) {
    int x, y, c, i, C = in->channels, W = in->width, r = K / 2;
    for (y = 0; y < in->height; y++) {
        unsigned char *d = recio__at(out, 0, y, 0);
        for (x = 0; x < W * C; x++) row[x] = 0;
        for (i = 0; i < K; i++) {
            const unsigned char *s = recio__at(in, 0, recio__mirror(y + i - r, in->height), 0);
            for (x = 0; x < W * C; x++) row[x] += k[i] * (float)s[x];
        }
        for (x = 0; x < W; x++)
            for (c = 0; c < C; c++) {
                float v = 0;
                for (i = 0; i < K; i++) v += k[i] * row[recio__mirror(x + i - r, W) * C + c];
                d[x * C + c] = recio__u8(v);
            }
    }
}

#define RECIO__BLUR_MAX 255 /* the largest kernel: 255 taps (torchvision asks for odd sizes, any) */
static int recio__blur_ok(const recio_image *in, int ksize, float sigma) {
    return ksize >= 1 && ksize <= RECIO__BLUR_MAX && (ksize & 1) && sigma > 0 && in->width < INT_MAX / 4;
}

RECIODEF recio_err recio_image_gaussian_blur(const recio_image *in, recio_image *out, int ksize, float sigma) {
    float k[RECIO__BLUR_MAX], *row;
    recio_err e;
    if (!recio__is_u8hwc(in)) return recio__valid(in) ? RECIO_ERR_UNSUPPORTED : RECIO_ERR_ARG;
    if (!recio__blur_ok(in, ksize, sigma)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, RECIO_U8, RECIO_HWC)) != RECIO_OK) return e;
    if (!(row = (float *)recio__malloc(&in->alloc, (size_t)in->width * (size_t)in->channels * sizeof(float))))
        return RECIO_ERR_NOMEM;
    recio__gauss_kernel(k, ksize, sigma);
    recio__blur(in, out, k, ksize, row);
    recio__free(&in->alloc, row);
    return RECIO_OK;
}

/* ---- colour: one 3x3 matrix (plus offset) per pixel, or per-pixel grey mixing ---- */

/* grey_ok: the op also makes sense on one channel (g is then the pixel itself). */
static recio_err recio__colour_check(const recio_image *in, recio_image *out, int grey_ok) {
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if ((in->channels < 3 && !grey_ok) || (in->dtype != RECIO_U8 && in->dtype != RECIO_F32))
        return RECIO_ERR_UNSUPPORTED;
    if (out && out->data == in->data) return RECIO_ERR_ARG;
    return recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout);
}

/* Colour ops see pixels as float[4]; u8 HWC (the common case) is read and written through row
   pointers, anything else through the element accessors. Same arithmetic either way. */
typedef struct recio__pxwalk {
    const recio_image *in;
    recio_image *out;
    int fast, x, y;
    const unsigned char *s;
    unsigned char *d;
} recio__pxwalk;

static int recio__px_next(recio__pxwalk *w, float p[4]) {
    int c, C = w->in->channels;
    if (w->x == w->in->width) {
        w->x = 0;
        w->y++;
    }
    if (w->y >= w->in->height) return 0;
    if (w->fast) {
        if (w->x == 0) {
            w->s = recio__at(w->in, 0, w->y, 0);
            w->d = recio__at(w->out, 0, w->y, 0);
        }
        for (c = 0; c < C; c++) p[c] = (float)w->s[w->x * C + c];
    } else {
        for (c = 0; c < C; c++) p[c] = recio_image_get(w->in, w->x, w->y, c);
    }
    return 1;
}

static void recio__px_put(recio__pxwalk *w, const float p[4]) {
    int c, C = w->in->channels;
    if (w->fast)
        for (c = 0; c < C; c++) w->d[w->x * C + c] = recio__u8(p[c]);
    else
        for (c = 0; c < C; c++) recio_image_set(w->out, w->x, w->y, c, p[c]);
    w->x++;
}

static recio__pxwalk recio__px_walk(const recio_image *in, recio_image *out) {
    recio__pxwalk w;
    memset(&w, 0, sizeof w);
    w.in = in;
    w.out = out;
    w.fast = recio__is_u8hwc(in) && recio__is_u8hwc(out);
    return w;
}

/* out = a * x + b * g(x) + off[c] per pixel, alpha copied; a grey image is its own g. RGB u8 rows
   go through the kernel table's colour conversion. */
static void recio__mix(const recio__kern *k, const recio_image *in, recio_image *out, float a, float b,
                       const float off[3]) {
    recio__pxwalk w = recio__px_walk(in, out);
    float p[4] = {0, 0, 0, 0}, q[4];
    int c;
    if (w.fast && in->channels == 3) {
        static const float zero[3] = {0, 0, 0};
        int y;
        for (y = 0; y < in->height; y++)
            k->mix3(recio__at(in, 0, y, 0), recio__at(out, 0, y, 0), in->width, a, b, off ? off : zero);
        return;
    }
    while (recio__px_next(&w, p)) {
        float g = in->channels == 1 ? p[0] : 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
        for (c = 0; c < 3; c++) q[c] = a * p[c] + b * g + (off ? off[c] : 0.0f);
        q[3] = p[3];
        recio__px_put(&w, q);
    }
}

static void recio__matrix(const recio_image *in, recio_image *out, const float m[9]) {
    recio__pxwalk w = recio__px_walk(in, out);
    float p[4] = {0, 0, 0, 0}, q[4];
    int c;
    while (recio__px_next(&w, p)) {
        for (c = 0; c < 3; c++) q[c] = m[3 * c] * p[0] + m[3 * c + 1] * p[1] + m[3 * c + 2] * p[2];
        q[3] = p[3];
        recio__px_put(&w, q);
    }
}

typedef recio_err (*recio__colour_fn)(const recio__kern *, const recio_image *, recio_image *, float);
/* The colour ops of one factor take the kernel column of their caller: a transform's, or a pick
   of their own when called eagerly (the public wrappers below). */
static recio_err recio__brightness(const recio__kern *k, const recio_image *in, recio_image *out, float f) {
    recio_err e = recio__colour_check(in, out, 1);
    if (e == RECIO_OK) recio__mix(k, in, out, f, 0, NULL);
    return e;
}

static recio_err recio__saturation(const recio__kern *k, const recio_image *in, recio_image *out, float f) {
    recio_err e = recio__colour_check(in, out, 1);
    if (e == RECIO_OK) recio__mix(k, in, out, f, 1 - f, NULL);
    return e;
}

static recio_err recio__contrast(const recio__kern *k, const recio_image *in, recio_image *out, float f) {
    double sum = 0;
    float off[3];
    int x, y;
    recio_err e = recio__colour_check(in, out, 1);
    if (e != RECIO_OK) return e;
    for (y = 0; y < in->height; y++)
        for (x = 0; x < in->width; x++)
            sum += in->channels == 1 ? recio_image_get(in, x, y, 0)
                                     : 0.299 * recio_image_get(in, x, y, 0) + 0.587 * recio_image_get(in, x, y, 1) +
                                           0.114 * recio_image_get(in, x, y, 2);
    off[0] = off[1] = off[2] = (float)((1 - f) * sum / ((double)in->width * in->height));
    recio__mix(k, in, out, f, 0, off);
    return RECIO_OK;
}

static recio_err recio__hue(const recio__kern *kn, const recio_image *in, recio_image *out, float f) {
    static const double tyiq[9] = {0.299, 0.587, 0.114, 0.596, -0.274, -0.321, 0.211, -0.523, 0.311};
    static const double ityiq[9] = {1.0, 0.956, 0.621, 1.0, -0.272, -0.647, 1.0, -1.107, 1.705};
    double u = cos(f * 3.14159265358979323846), w = sin(f * 3.14159265358979323846);
    double bt[9], t1[9];
    float m[9];
    int i, j, k;
    recio_err e = recio__colour_check(in, out, 0);
    (void)kn; /* the 3x3 matrix has no kernel column */
    if (e != RECIO_OK) return e;
    if (f == 0) return recio_image_copy(in, out); /* YIQ there and back is only 3 digits exact */
    bt[0] = 1, bt[1] = 0, bt[2] = 0, bt[3] = 0, bt[4] = u, bt[5] = -w, bt[6] = 0, bt[7] = w, bt[8] = u;
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) {
            t1[3 * i + j] = 0;
            for (k = 0; k < 3; k++) t1[3 * i + j] += ityiq[3 * i + k] * bt[3 * k + j];
        }
    for (i = 0; i < 3; i++) /* m = ityiq . bt . tyiq: out = m . rgb (MXNet applies its transpose on the right) */
        for (j = 0; j < 3; j++) {
            double s = 0;
            for (k = 0; k < 3; k++) s += t1[3 * i + k] * tyiq[3 * k + j];
            m[3 * i + j] = (float)s;
        }
    recio__matrix(in, out, m);
    return RECIO_OK;
}

static recio_err recio__lighting(const recio__kern *k, const recio_image *in, recio_image *out, const float alpha[3]) {
    static const float eigval[3] = {55.46f, 4.794f, 1.148f};
    static const float eigvec[9] = {-0.5675f, 0.7192f,  0.4009f,  -0.5808f, -0.0045f,
                                    -0.8140f, -0.5836f, -0.6948f, 0.4203f};
    float off[3];
    int c;
    recio_err e = recio__colour_check(in, out, 0);
    if (e != RECIO_OK) return e;
    if (!alpha) return RECIO_ERR_ARG;
    for (c = 0; c < 3; c++)
        off[c] = eigvec[3 * c] * alpha[0] * eigval[0] + eigvec[3 * c + 1] * alpha[1] * eigval[1] +
                 eigvec[3 * c + 2] * alpha[2] * eigval[2];
    recio__mix(k, in, out, 1, 0, off);
    return RECIO_OK;
}

static recio_err recio__gray(const recio__kern *k, const recio_image *in, recio_image *out) {
    recio_err e = recio__colour_check(in, out, 1);
    if (e == RECIO_OK) recio__mix(k, in, out, 0, 1, NULL);
    return e;
}

RECIODEF recio_err recio_image_brightness(const recio_image *in, recio_image *out, float f) {
    return recio__brightness(recio__kern_pick(), in, out, f);
}
RECIODEF recio_err recio_image_contrast(const recio_image *in, recio_image *out, float f) {
    return recio__contrast(recio__kern_pick(), in, out, f);
}
RECIODEF recio_err recio_image_saturation(const recio_image *in, recio_image *out, float f) {
    return recio__saturation(recio__kern_pick(), in, out, f);
}
RECIODEF recio_err recio_image_hue(const recio_image *in, recio_image *out, float f) {
    return recio__hue(NULL, in, out, f);
}
RECIODEF recio_err recio_image_lighting(const recio_image *in, recio_image *out, const float alpha[3]) {
    return recio__lighting(recio__kern_pick(), in, out, alpha);
}
RECIODEF recio_err recio_image_gray(const recio_image *in, recio_image *out) {
    return recio__gray(recio__kern_pick(), in, out);
}

RECIODEF recio_err recio_image_bgr(const recio_image *in, recio_image *out) {
    size_t es;
    int x, y;
    recio_err e;
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, in->layout)) != RECIO_OK) return e;
    if ((e = recio_image_copy(in, out)) != RECIO_OK || in->channels < 3) return e;
    es = recio_dtype_size(in->dtype);
    for (y = 0; y < in->height; y++)
        for (x = 0; x < in->width; x++) {
            memcpy(recio__at(out, x, y, 0), recio__at(in, x, y, 2), es);
            memcpy(recio__at(out, x, y, 2), recio__at(in, x, y, 0), es);
        }
    return RECIO_OK;
}

/* ---- types and layout ---- */

RECIODEF recio_err recio_image_convert(const recio_image *in, recio_image *out, recio_dtype t, float scale,
                                       float offset) {
    int x, y, c;
    recio_err e;
    if (!recio__valid(in) || !out) return RECIO_ERR_ARG;
    if (out->data) t = out->dtype;
    if ((e = recio__out(out, in->width, in->height, in->channels, t, in->layout)) != RECIO_OK) return e;
    for (c = 0; c < in->channels; c++)
        for (y = 0; y < in->height; y++)
            for (x = 0; x < in->width; x++)
                recio_image_set(out, x, y, c, recio_image_get(in, x, y, c) * scale + offset);
    return RECIO_OK;
}

/* The one normalisation formula, shared by the op and the fused tables so both give the same bits. */
static float recio__norm(float x, float mean, float std) { return (x - mean) / std; }

RECIODEF recio_err recio_image_normalize(const recio_image *in, recio_image *out, const float mean[4],
                                         const float std[4]) {
    int x, y, c;
    recio_err e;
    if (!recio__valid(in) || !mean || !std) return RECIO_ERR_ARG;
    if ((e = recio__out(out, in->width, in->height, in->channels, RECIO_F32, in->layout)) != RECIO_OK) return e;
    for (c = 0; c < in->channels; c++)
        for (y = 0; y < in->height; y++)
            for (x = 0; x < in->width; x++)
                recio_image_set(out, x, y, c, recio__norm(recio_image_get(in, x, y, c), mean[c], std[c]));
    return RECIO_OK;
}

RECIODEF recio_err recio_image_to_chw(const recio_image *in, recio_image *out) {
    int x, y, c;
    size_t es;
    recio_err e;
    if (!recio__valid(in)) return RECIO_ERR_ARG;
    if (in->layout == RECIO_CHW) return recio_image_copy(in, out);
    if ((e = recio__out(out, in->width, in->height, in->channels, in->dtype, RECIO_CHW)) != RECIO_OK) return e;
    es = recio_dtype_size(in->dtype);
    for (c = 0; c < in->channels; c++)
        for (y = 0; y < in->height; y++) {
            const unsigned char *s = recio__at(in, 0, y, c);
            unsigned char *d = recio__at(out, 0, y, c);
            for (x = 0; x < in->width; x++) memcpy(d + (size_t)x * es, s + (size_t)x * in->channels * es, es);
        }
    return RECIO_OK;
}

/* ---- 6. TRANSFORM: implementation -------------------------------------------------------------- */

/* THE OP TABLE. Everything recio knows about an op is its descriptor in recio__ops (below the op
   functions): its name and how its arguments are checked, and up to five functions, each for one
   consumer of the chain:
     parse  its text, when not "numbers in parentheses" (normalize's `imagenet`, the policies);
     shape  its output size, dtype and layout: recio_transform_query, the scratch walk and the
            executor's output images all use it;
     plan   its role for the JPEG window planner, which works out leading crops and the first resize
            on the header before decoding (NULL: the planner stops there);
     geom   what a geometric op does, with its random parameters drawn: one or two steps (recio__geo),
            each an affine map of its input onto its output. The executor (recio__x_geo, the exec
            of every geometric op) gives each step to the pixels, to the boxes and to the mask, so
            all three move by the same draw; an op without geom leaves boxes and mask alone;
     exec   how the executor runs it (NULL: materialise the pixels, then `pix` into a new image);
     pix    the pixel work of an op that needs real pixels (fop: when that is a colour op of one
            factor, recio__brightness and the like, called with arg[0] and the transform's kernels).
   `flags` say what it needs. Adding an op is one descriptor plus its functions; nothing depends on
   the order of the table.
   Why steps and not the executor's fused state (dw/dh/ox/oy/ow/oh/flip): that state is reset by
   every op that materialises pixels, and rotate, shear and pad are not in it at all; a step is the
   exact map of one op, the fused pass computes every pixel by the composition of the same maps,
   and boxes and masks are cheap enough to move at each step. */
typedef struct recio__opdef recio__opdef;

typedef struct recio__node {
    const recio__opdef *op;
    int nargs;
    int child, next; /* first child / next sibling, -1 = none */
    float arg[6];
} recio__node;

struct recio_transform {
    recio_allocator alloc;
    recio__node *nodes;
    int count, cap, first, fuse;
    const recio__kern *kn; /* the kernel column, picked once at parse (the pick costs a cpuid trap) */
};

typedef struct recio__parser {
    const char *p, *line0;
    int line, depth;
    recio_transform *t;
    char *err;
    size_t errcap;
} recio__parser;

/* Shapes without pixels: what the chain makes of a w x h x c u8 image, and a scratch bound. After a
   policy whose branches give different shapes (`varies`), w and h are the largest of any branch and
   short the smallest shorter side, so the bound still holds for every branch; `loose` then says a
   failure may be the bound's and not the chain's. */
typedef struct recio__shp {
    int w, h, c, varies, bad, loose, short_;
    recio_dtype t;
    recio_layout l;
    recio_filter filt; /* of the next resize (`area` before it) */
    size_t scratch;
} recio__shp;

/* The chain's leading crops and first resize, worked out on the full-size w x h image before it is
   decoded: the source rectangle r the resize reads, its target dw x dh, the window o of the resized
   image that the crops after it keep, and the node the rest of the chain starts at. The generator
   advances exactly as the executor would. */
typedef struct recio__plan {
    int r[4], o[4], dw, dh, next, resized;
    recio_filter filt;
} recio__plan;

typedef struct recio__exec recio__exec;
typedef struct recio__tgt recio__tgt;

/* One geometric step of an op, its parameters drawn. m maps output to input coordinates with pixel
   centres at integers (recio_image_affine's m); the mask samples through it and the boxes go
   through its inverse. kind says how the pixels move: crop, resize and flip join the pending pass,
   PIX runs the op's pix function (which reads the step from the executor). */
enum { RECIO__GEO_CROP = 1, RECIO__GEO_RESIZE, RECIO__GEO_FLIP, RECIO__GEO_PIX };
typedef struct recio__geo {
    int kind;
    int x0, y0; /* crop: the corner */
    int w, h;   /* the step's output size */
    int sw, sh; /* its input size */
    double m[6];
} recio__geo;

/* Box i is b[5i..5i+3]: xmin, ymin, xmax, ymax in pixels of the current w x h image, edges (pixel x
   spans [x, x + 1)); b[5i+4] is 1 while it is kept. mask: data NULL when there is none; a view of
   the caller's until the first step, then owned through alloc. */
struct recio__tgt {
    const recio_allocator *alloc;
    double *b;
    int n, w, h;
    recio_image mask;
    unsigned char fill;
};

enum {                          /* what an op needs */
       RECIO__OPF_GEOM = 1,     /* moves pixels (it has geom): boxes and masks move with it */
       RECIO__OPF_U8 = 2,       /* needs u8 HWC pixels, else RECIO_ERR_UNSUPPORTED */
       RECIO__OPF_RESAMPLE = 4, /* one resampling pass: the scratch walk counts its taps and rows */
       RECIO__OPF_PREFIX = 16,  /* changes only how the next op runs (area): the hint looks past it */
       RECIO__OPF_LIST = 32,    /* runs child ops: its shape function counts their scratch */
       RECIO__OPF_RANDOM = 64   /* draws from the seed's generator (its result may depend on the seed); a
                                   LIST row without it is random when any child is (recio__node_random).
                                   The iterator's cache keeps what comes before the first such op */
};

/* How an op's arguments are checked: sizes are whole pixels > 0, probabilities in [0, 1], ... */
enum {
    RECIO__A_NUM = 1,
    RECIO__A_SIZE,
    RECIO__A_PROB,
    RECIO__A_NONNEG,
    RECIO__A_POS,
    RECIO__A_INT,
    RECIO__A_BITS,
    RECIO__A_FRAC,
    RECIO__A_IOU,
    RECIO__A_ODD
};

struct recio__opdef {
    const char *name;
    unsigned char min, max; /* how many arguments */
    unsigned char check[6]; /* per argument; 0 = as the one before */
    unsigned char flags;    /* RECIO__OPF_* */
    unsigned char images;   /* most images of its output size it takes from scratch; 0 = 2 (a pending
                               pass's result and its own) */
    recio_err (*parse)(recio__parser *ps, const recio__opdef *d, int self, const char *at);
    void (*shape)(const recio_transform *t, const recio__node *n, recio__shp *s);
    int (*plan)(const recio__node *n, recio_rng *g, recio__plan *p); /* 1 planned, 0 stop, -1 would fail */
    int (*geom)(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]); /* steps, -1 cannot run */
    recio_err (*exec)(recio__exec *x, const recio__node *n);
    recio_err (*pix)(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *out);
    recio__colour_fn fop;              /* or a colour op of arg[0] (recio__brightness and the like) */
    int (*hint)(const recio__node *n); /* the shorter side its resize needs, as the chain's first resize:
                                          the min_short of recio_decode_desc.transform; NULL = none */
};

static recio_err recio__perr(recio__parser *ps, const char *at, const char *f, const char *what) {
    char msg[160];
    recio__fmt(msg, sizeof msg, f, what);
    if (ps->err) recio__fmt(ps->err, ps->errcap, "spec:%d:%d: %s", ps->line, (int)(at - ps->line0) + 1, msg);
    return RECIO_ERR_SPEC;
}

static void recio__skip_ws(recio__parser *ps) {
    for (;; ps->p++) {
        if (*ps->p == '\n') {
            ps->line++;
            ps->line0 = ps->p + 1;
        } else if (*ps->p != ' ' && *ps->p != '\t' && *ps->p != '\r') return;
    }
}

/* Decimal number without the C library, so the user's locale cannot change its meaning. */
static int recio__number(recio__parser *ps, float *out) {
    const char *p = ps->p;
    double v = 0, scale = 1;
    int neg = 0, digits = 0, ex = 0, eneg = 0;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    for (; *p >= '0' && *p <= '9'; p++, digits++) v = v * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++) v += (*p - '0') * (scale /= 10);
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '-' || *q == '+') eneg = *q++ == '-';
        if (*q >= '0' && *q <= '9') {
            for (; *q >= '0' && *q <= '9'; q++) ex = ex < 100 ? ex * 10 + (*q - '0') : ex;
            p = q;
            v *= pow(10.0, eneg ? -ex : ex);
        }
    }
    *out = (float)(neg ? -v : v);
    ps->p = p;
    return 1;
}

static int recio__new_node(recio_transform *t, const recio__opdef *op) {
    recio__node *n;
    if (t->count == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        recio__node *nn =
            (recio__node *)recio__realloc(&t->alloc, t->nodes, (size_t)t->cap * sizeof *nn, (size_t)cap * sizeof *nn);
        if (!nn) return -1;
        t->nodes = nn;
        t->cap = cap;
    }
    n = &t->nodes[t->count];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->child = n->next = -1;
    return t->count++;
}

static recio_err recio__parse_list(recio__parser *ps, int *first, char close, int commas);

/* What each argument kind (RECIO__A_*, the op table's check column) accepts: [lo, hi], an end left
   out when open, whole or odd numbers only, or -1 besides. The check and its refusal both read the
   row, so the message always says the real bounds. */
enum { RECIO__AK_LO_OPEN = 1, RECIO__AK_HI_OPEN = 2, RECIO__AK_WHOLE = 4, RECIO__AK_ODD = 8, RECIO__AK_MINUS1 = 16 };
typedef struct recio__argkind {
    const char *what;
    float lo, hi;
    unsigned char flags;
} recio__argkind;
static const recio__argkind recio__argkinds[] = {
    {"a number", -1e30f, 1e30f, 0},                                              /* 0: none given, as NUM */
    {"a number", -1e30f, 1e30f, 0},                                              /* RECIO__A_NUM */
    {"a size (whole pixels)", 1, 65535, RECIO__AK_WHOLE},                        /* RECIO__A_SIZE */
    {"a probability", 0, 1, 0},                                                  /* RECIO__A_PROB */
    {"a number", 0, 1e6f, RECIO__AK_HI_OPEN},                                    /* RECIO__A_NONNEG */
    {"a number", 0, 1e6f, RECIO__AK_LO_OPEN | RECIO__AK_HI_OPEN},                /* RECIO__A_POS */
    {"a whole number", 0, 65535, RECIO__AK_WHOLE},                               /* RECIO__A_INT */
    {"a whole number of bits", 0, 8, RECIO__AK_WHOLE},                           /* RECIO__A_BITS */
    {"a fraction", 0, 1, RECIO__AK_LO_OPEN},                                     /* RECIO__A_FRAC */
    {"an overlap", 0, 1, RECIO__AK_MINUS1},                                      /* RECIO__A_IOU */
    {"an odd kernel size", 1, RECIO__BLUR_MAX, RECIO__AK_WHOLE | RECIO__AK_ODD}, /* RECIO__A_ODD */
};

static int recio__arg_fits(const recio__argkind *k, float v) {
    if ((k->flags & RECIO__AK_MINUS1) && v == -1) return 1;
    if (!((k->flags & RECIO__AK_LO_OPEN) ? v > k->lo : v >= k->lo) ||
        !((k->flags & RECIO__AK_HI_OPEN) ? v < k->hi : v <= k->hi))
        return 0;
    if ((k->flags & RECIO__AK_WHOLE) && v != floorf(v)) return 0;
    return !(k->flags & RECIO__AK_ODD) || ((int)v & 1);
}

/* A bound of the table in words: a whole number, or a power of ten as 1eN. */
static void recio__bound_words(float v, char *out, size_t cap) {
    double a = v < 0 ? -(double)v : (double)v;
    int e = 0;
    if (a < 1e7) {
        recio__fmt(out, cap, "%d", (int)v);
        return;
    }
    for (; a >= 9.5; a /= 10) e++;
    recio__fmt(out, cap, v < 0 ? "-1e%d" : "1e%d", e);
}

static recio_err recio__check_arg(recio__parser *ps, const char *at, const recio__opdef *d, int i, float v) {
    const recio__argkind *k;
    char lo[16], hi[16], msg[160];
    int j = i < 5 ? i : 5;
    while (j > 0 && !d->check[j]) j--;
    k = &recio__argkinds[d->check[j]];
    if (recio__arg_fits(k, v)) return RECIO_OK;
    recio__bound_words(k->lo, lo, sizeof lo), recio__bound_words(k->hi, hi, sizeof hi);
    recio__fmt(msg, sizeof msg, "%s: expected %s in %s%s, %s%s%s", d->name, k->what,
               (k->flags & RECIO__AK_LO_OPEN) ? "(" : "[", lo, hi, (k->flags & RECIO__AK_HI_OPEN) ? ")" : "]",
               (k->flags & RECIO__AK_MINUS1) ? ", or -1 for SSD's choices" : "");
    return recio__perr(ps, at, "%s", msg);
}

/* Numeric arguments "(a, b, ...)" after the op name: what most ops take. */
static recio_err recio__parse_args(recio__parser *ps, const recio__opdef *d, int self, const char *name_at) {
    recio__node *n = &ps->t->nodes[self];
    recio_err e;
    if (*ps->p != '(') {
        if (d->min > 0) return recio__perr(ps, ps->p, "%s: expected '(' and arguments", d->name);
        return RECIO_OK;
    }
    ps->p++;
    recio__skip_ws(ps);
    if (*ps->p != ')') {
        for (;;) {
            const char *at = ps->p;
            float v;
            if (!recio__number(ps, &v)) return recio__perr(ps, at, "%s: expected a number", d->name);
            if (n->nargs == d->max) return recio__perr(ps, at, "%s: too many arguments", d->name);
            if ((e = recio__check_arg(ps, at, d, n->nargs, v)) != RECIO_OK) return e;
            n->arg[n->nargs++] = v;
            recio__skip_ws(ps);
            if (*ps->p != ',') break;
            ps->p++;
            recio__skip_ws(ps);
        }
    }
    if (*ps->p != ')') return recio__perr(ps, ps->p, "%s: expected ')'", d->name);
    if (n->nargs < d->min) return recio__perr(ps, name_at, "%s: too few arguments", d->name);
    ps->p++;
    return RECIO_OK;
}

/* normalize(imagenet) stands for normalize's six numbers. */
static recio_err recio__parse_normalize(recio__parser *ps, const recio__opdef *d, int self, const char *name_at) {
    static const float imagenet[6] = {123.68f, 116.28f, 103.53f, 58.395f, 57.12f, 57.375f};
    recio__parser at = *ps;
    if (*ps->p == '(') {
        ps->p++;
        recio__skip_ws(ps);
    }
    if (at.p == ps->p || strncmp(ps->p, "imagenet", 8) != 0) {
        *ps = at; /* numbers, as for any op */
        return recio__parse_args(ps, d, self, name_at);
    }
    ps->p += 8;
    recio__skip_ws(ps);
    if (*ps->p != ')') return recio__perr(ps, ps->p, "%s: expected ')'", d->name);
    ps->p++;
    memcpy(ps->t->nodes[self].arg, imagenet, sizeof imagenet);
    ps->t->nodes[self].nargs = 6;
    return RECIO_OK;
}

/* ---- the executor: ops run left to right; crops, resizes, flips and the float/normalize/chw
   conversion are kept pending and done in one resampling pass when another op (or the end) needs
   pixels. Each output pixel is computed from its own coordinates, so pending or not, the numbers
   are the same. ---- */
struct recio__exec {
    recio__arena a;
    size_t *asked; /* receives the arena's total at the end (the iterator sizes its scratch by it) */
    recio_rng rng;
    const recio_transform *t;
    recio_image cur;                  /* the current pixels (when lazy: the u8 HWC source of the pending pass) */
    recio__srcwin win;                /* the source is win.sw x win.sh, of which cur holds the part from (sx0, sy0) */
    int lazy;                         /* cur is u8 HWC: the pending geometry and conversion below apply */
    int dw, dh, ox, oy, ow, oh, flip; /* cur resized to dw x dh, window, mirrored */
    recio_filter filt, next_filt;
    int conv, chw; /* conversion through lut to f32 pending; CHW layout pending */
    float lut[4 * 256];
    int affine; /* lut[c][v] is ((float)v - am[c]) / as[c] exactly (one normalize, or float) */
    float am[4], as[4];
    const recio__geo *geo;   /* the step a geometric op's pix runs */
    recio__tgt *tg;          /* boxes and mask riding along; NULL = none */
    const recio__node *node; /* the op running, for messages */
    char why[160];           /* what an op refused, in words ("" = recio_strerror of the code says it) */
};

static void recio__exec_reset(recio__exec *x) {
    x->lazy = x->cur.dtype == RECIO_U8 && x->cur.layout == RECIO_HWC;
    x->win.sw = x->dw = x->ow = x->cur.width;
    x->win.sh = x->dh = x->oh = x->cur.height;
    x->win.sx0 = x->win.sy0 = 0;
    x->ox = x->oy = x->flip = 0;
    x->conv = x->chw = x->affine = 0;
    x->filt = RECIO_LINEAR;
}

/* An op's output of w x h pixels against RECIO_MAX_PIXELS, checked before anything is allocated
   (pad(30000) asked for 8 GB): RECIO_ERR_LIMIT with the reason in x->why. */
static recio_err recio__exec_limit(recio__exec *x, int w, int h) {
    if (w > 0 && h > 0 && (uint64_t)w * (uint64_t)h <= RECIO_MAX_PIXELS) return RECIO_OK;
    recio__fmt(x->why, sizeof x->why, "%s would make a %dx%d image, more than RECIO_MAX_PIXELS (%U pixels)",
               x->node ? x->node->op->name : "an op", w, h, (uint64_t)RECIO_MAX_PIXELS);
    return RECIO_ERR_LIMIT;
}

/* An op that needs u8 HWC pixels after float, normalize, chw, f16 or i8: RECIO_ERR_UNSUPPORTED. */
static recio_err recio__exec_not_u8(recio__exec *x) {
    recio__fmt(x->why, sizeof x->why, "%s needs u8 HWC pixels: put it before float, normalize, chw, f16 and i8",
               x->node ? x->node->op->name : "the op");
    return RECIO_ERR_UNSUPPORTED;
}

static int recio__exec_pending(const recio__exec *x) {
    return x->lazy && (x->dw != x->cur.width || x->dh != x->cur.height || x->ox || x->oy || x->ow != x->cur.width ||
                       x->oh != x->cur.height || x->flip || x->conv || x->chw || x->win.sx0 || x->win.sy0 ||
                       x->win.sw != x->cur.width || x->win.sh != x->cur.height);
}

/* The shape the pending pass will produce. */
static recio_image recio__exec_shape(const recio__exec *x) {
    if (!x->lazy) return x->cur;
    return recio__image_shape(x->ow, x->oh, x->cur.channels, x->conv ? RECIO_F32 : RECIO_U8,
                              x->chw ? RECIO_CHW : RECIO_HWC);
}

static recio_err recio__exec_alloc(recio__exec *x, recio_image *img, recio_image shape) {
    *img = shape;
    img->data = recio__arena_get(&x->a, recio_image_bytes(&shape));
    return img->data ? RECIO_OK : RECIO_ERR_NOMEM;
}

/* Run the pending pass into dst (or a new arena image when dst is NULL). */
static recio_err recio__exec_flush(recio__exec *x, recio_image *dst) {
    recio_image tmp;
    recio__sink k;
    recio_err e;
    if (!recio__exec_pending(x)) {
        if (dst) return recio_image_copy(&x->cur, dst);
        return RECIO_OK;
    }
    if (!x->conv && !x->chw && x->dw == x->win.sw && x->dh == x->win.sh && !x->flip && !dst) {
        e = recio_image_crop(&x->cur, &tmp, x->ox - x->win.sx0, x->oy - x->win.sy0, x->ow,
                             x->oh); /* a crop alone stays a view */
    } else {
        if (!dst && (e = recio__exec_alloc(x, &tmp, recio__exec_shape(x))) != RECIO_OK) return e;
        memset(&k, 0, sizeof k);
        k.img = dst ? dst : &tmp;
        k.kn = x->t->kn;
        k.lut = x->conv ? x->lut : NULL;
        if (x->conv && x->affine) k.mean = x->am, k.std = x->as;
        e = recio__resample(&x->a, &x->cur, &x->win, x->dw, x->dh, x->ox, x->oy, x->ow, x->oh, x->flip, x->filt, &k);
    }
    if (e != RECIO_OK) return e;
    if (dst) return RECIO_OK;
    x->cur = tmp;
    recio__exec_reset(x);
    return RECIO_OK;
}

/* Crop (x0, y0, w, h) of the current logical image. */
static recio_err recio__exec_crop(recio__exec *x, int x0, int y0, int w, int h) {
    recio_image v;
    recio_err e;
    recio_image s = recio__exec_shape(x);
    if (x0 < 0 || y0 < 0 || w <= 0 || h <= 0 || w > s.width - x0 || h > s.height - y0) return RECIO_ERR_ARG;
    if (x->lazy) {
        x->ox += x->flip ? x->ow - x0 - w : x0;
        x->oy += y0;
        x->ow = w;
        x->oh = h;
        return RECIO_OK;
    }
    if ((e = recio_image_crop(&x->cur, &v, x0, y0, w, h)) != RECIO_OK) return e;
    if (v.owned) { /* a CHW crop is a copy: move it into the arena's lifetime */
        recio_image a;
        if ((e = recio__exec_alloc(x, &a, recio__image_shape(w, h, v.channels, v.dtype, v.layout))) == RECIO_OK)
            e = recio_image_copy(&v, &a);
        recio_image_free(&v);
        v = a;
        if (e != RECIO_OK) return e;
    }
    x->cur = v;
    return RECIO_OK;
}

static recio_err recio__exec_resize(recio__exec *x, int w, int h) {
    recio_err e;
    recio_filter f = x->next_filt;
    x->next_filt = RECIO_LINEAR;
    /* A second resize needs the first's pixels; a mirror before a resize is done first too, since
       mirrored taps can round a tie the other way. */
    if (x->lazy && (x->conv || x->chw || x->flip || x->dw != x->win.sw || x->dh != x->win.sh)) {
        if ((e = recio__exec_flush(x, NULL)) != RECIO_OK) return e;
    }
    if (!x->lazy) return recio__exec_not_u8(x); /* resizing needs u8 HWC */
    if ((e = recio__exec_limit(x, w, h)) != RECIO_OK) return e;
    if (x->ox != x->win.sx0 || x->oy != x->win.sy0 || x->ow != x->cur.width || x->oh != x->cur.height) {
        recio_image v;
        if ((e = recio_image_crop(&x->cur, &v, x->ox - x->win.sx0, x->oy - x->win.sy0, x->ow, x->oh)) != RECIO_OK)
            return e;
        x->cur = v;
    }
    x->win.sw = x->ow, x->win.sh = x->oh, x->win.sx0 = x->win.sy0 = 0; /* the crop is the new source */
    x->ox = x->oy = 0;
    x->dw = x->ow = w;
    x->dh = x->oh = h;
    x->filt = f;
    if (!x->t->fuse) return recio__exec_flush(x, NULL);
    return RECIO_OK;
}

static recio_err recio__exec_flip(recio__exec *x) {
    recio_image o;
    recio_err e;
    if (x->lazy) {
        x->flip ^= 1;
        return RECIO_OK;
    }
    if ((e = recio__exec_alloc(
             x, &o, recio__image_shape(x->cur.width, x->cur.height, x->cur.channels, x->cur.dtype, x->cur.layout))) !=
        RECIO_OK)
        return e;
    if ((e = recio_image_flip(&x->cur, &o)) != RECIO_OK) return e;
    x->cur = o;
    return RECIO_OK;
}

static recio_err recio__exec_normalize(recio__exec *x, const float *mean, const float *std) {
    int c, v;
    recio_image o;
    recio_err e;
    if (x->lazy) {
        int first = !x->conv || (x->affine && x->am[0] == 0 && x->am[1] == 0 && x->am[2] == 0 && x->as[0] == 1 &&
                                 x->as[1] == 1 && x->as[2] == 1); /* a table still equal to (float)v */
        for (c = 0; c < 4; c++)
            for (v = 0; v < 256; v++) {
                float *l = &x->lut[c * 256 + v];
                if (!x->conv) *l = (float)v;
                if (mean && c < x->cur.channels) *l = recio__norm(*l, mean[c], std[c]);
            }
        if (!mean && !x->conv) {
            x->affine = 1;
            for (c = 0; c < 4; c++) x->am[c] = 0, x->as[c] = 1;
        } else if (mean) {
            x->affine = first && x->cur.channels >= 3;
            for (c = 0; c < 3; c++) x->am[c] = mean[c], x->as[c] = std[c];
        }
        x->conv = 1;
        return RECIO_OK;
    }
    if (!mean) {
        if (x->cur.dtype == RECIO_F32) return RECIO_OK;
        if ((e = recio__exec_alloc(
                 x, &o, recio__image_shape(x->cur.width, x->cur.height, x->cur.channels, RECIO_F32, x->cur.layout))) !=
            RECIO_OK)
            return e;
        e = recio_image_convert(&x->cur, &o, RECIO_F32, 1, 0);
    } else {
        if ((e = recio__exec_alloc(
                 x, &o, recio__image_shape(x->cur.width, x->cur.height, x->cur.channels, RECIO_F32, x->cur.layout))) !=
            RECIO_OK)
            return e;
        e = recio_image_normalize(&x->cur, &o, mean, std);
    }
    if (e == RECIO_OK) x->cur = o;
    return e;
}

/* Every other op: on materialised pixels, into a new arena image of the same shape unless said. */

/* random_resized_crop's output size and where its scale and ratio arguments start: (S, ...) is
   square; (W, H, ...) when the second argument is above 1 (a scale never is) or six are given. */
static int recio__rrc_size(const recio__node *n, int *w, int *h) {
    int two = n->nargs == 6 || (n->nargs > 1 && n->arg[1] > 1);
    *w = (int)n->arg[0];
    *h = two ? (int)n->arg[1] : *w;
    return two ? 2 : 1;
}

static void recio__rrc_rect(recio_rng *g, const recio__node *n, int W, int H, int r[4]) {
    int ow, oh, k = recio__rrc_size(n, &ow, &oh);
    double smin = n->nargs > k ? n->arg[k] : 0.08, smax = n->nargs > k + 1 ? n->arg[k + 1] : 1.0;
    double rmin = n->nargs > k + 2 ? n->arg[k + 2] : 0.75, rmax = n->nargs > k + 3 ? n->arg[k + 3] : 4.0 / 3.0;
    double area = (double)W * H, ratio;
    int i;
    for (i = 0; i < 10; i++) {
        double ta = area * (smin + (smax - smin) * recio_rng_uniform(g));
        double lr = log(rmin) + (log(rmax) - log(rmin)) * recio_rng_uniform(g), ar = exp(lr);
        int w = (int)floor(sqrt(ta * ar) + 0.5), h = (int)floor(sqrt(ta / ar) + 0.5);
        if (w > 0 && h > 0 && w <= W && h <= H) {
            r[0] = (int)recio_rng_below(g, (uint64_t)(W - w) + 1);
            r[1] = (int)recio_rng_below(g, (uint64_t)(H - h) + 1);
            r[2] = w;
            r[3] = h;
            return;
        }
    }
    ratio = (double)W / H;
    if (ratio < rmin) r[2] = W, r[3] = (int)floor(W / rmin + 0.5);
    else if (ratio > rmax) r[3] = H, r[2] = (int)floor(H * rmax + 0.5);
    else r[2] = W, r[3] = H;
    if (r[2] > W) r[2] = W;
    if (r[3] > H) r[3] = H;
    if (r[2] < 1) r[2] = 1;
    if (r[3] < 1) r[3] = 1;
    r[0] = (W - r[2]) / 2;
    r[1] = (H - r[3]) / 2;
}

/* ---- the ops: shape rules, planner roles, executors and pixel work; the table follows ---- */

static void recio__shp_op(const recio_transform *t, const recio__node *n, recio__shp *s);
static void recio__shp_list(const recio_transform *t, int node, recio__shp *s);
static size_t recio__shp_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
static int recio__shp_differ(const recio__shp *a, const recio__shp *b) {
    return a->w != b->w || a->h != b->h || a->c != b->c || a->t != b->t || a->l != b->l;
}
static recio_err recio__exec_list(recio__exec *x, int node);

/* Run one op: its executor, or for an op of real pixels, the pending pass first and then its pixels. */
static recio_err recio__x_pixels(recio__exec *x, const recio__node *n);
static recio_err recio__exec_op(recio__exec *x, const recio__node *n) {
    x->node = n;
    return n->op->exec ? n->op->exec(x, n) : recio__x_pixels(x, n);
}

/* ---- geometric steps: built by the ops' geom functions, run on the pixels, the boxes, the mask ---- */

static void recio__geo_map(recio__geo *g, int kind, int sw, int sh, int w, int h, const double m[6]) {
    memset(g, 0, sizeof *g);
    g->kind = kind, g->sw = sw, g->sh = sh, g->w = w, g->h = h;
    memcpy(g->m, m, sizeof g->m);
}
/* A cw x ch crop at (x0, y0) of a w x h image; -1 when it does not fit. */
static int recio__geo_crop(recio__geo *g, int w, int h, int x0, int y0, int cw, int ch) {
    double m[6] = {1, 0, 0, 0, 1, 0};
    if (x0 < 0 || y0 < 0 || cw <= 0 || ch <= 0 || cw > w - x0 || ch > h - y0) return -1;
    m[2] = x0, m[5] = y0;
    recio__geo_map(g, RECIO__GEO_CROP, w, h, cw, ch, m);
    g->x0 = x0, g->y0 = y0;
    return 1;
}
/* A resize of w x h to dw x dh: half-pixel centres, (x + 0.5) * w / dw - 0.5 (the resampler's). */
static int recio__geo_resize(recio__geo *g, int w, int h, int dw, int dh) {
    double m[6] = {0, 0, 0, 0, 0, 0};
    if (dw <= 0 || dh <= 0) return -1;
    m[0] = (double)w / dw, m[2] = 0.5 * m[0] - 0.5;
    m[4] = (double)h / dh, m[5] = 0.5 * m[4] - 0.5;
    recio__geo_map(g, RECIO__GEO_RESIZE, w, h, dw, dh, m);
    return 1;
}

static recio_err recio__geo_pixels(recio__exec *x, const recio__node *n, const recio__geo *g) {
    recio_err e;
    if (g->kind == RECIO__GEO_CROP) return recio__exec_crop(x, g->x0, g->y0, g->w, g->h);
    if (g->kind == RECIO__GEO_RESIZE) return recio__exec_resize(x, g->w, g->h);
    if (g->kind == RECIO__GEO_FLIP) return recio__exec_flip(x);
    x->geo = g;
    e = recio__x_pixels(x, n);
    x->geo = NULL;
    return e;
}

static recio_err recio__tgt_step(recio__tgt *tg, const recio__geo *g);

/* The op as written ("center_crop(224)", "random_resized_crop(224,0.08,1)"), for messages: whole
   arguments as such, others to at most three decimals (the formatter has no floats). */
static void recio__node_text(const recio__node *n, char *d, size_t cap) {
    size_t at;
    int i, k;
    recio__fmt(d, cap, "%s(", n->op->name);
    for (i = 0; i < n->nargs && i < 6; i++) {
        double v = n->arg[i], a = v < 0 ? -v : v;
        uint64_t m = (uint64_t)(a * 1000 + 0.5);
        char fr[5];
        fr[0] = '.', fr[1] = (char)('0' + m / 100 % 10), fr[2] = (char)('0' + m / 10 % 10),
        fr[3] = (char)('0' + m % 10), fr[4] = 0;
        for (k = 3; k > 0 && fr[k] == '0'; k--) fr[k] = 0; /* 0.080 -> 0.08, 2.000 -> 2 */
        at = strlen(d);
        recio__fmt(d + at, cap - at, "%s%s%U%s", i ? "," : "", v < 0 ? "-" : "", m / 1000, k ? fr : "");
    }
    at = strlen(d);
    recio__fmt(d + at, cap - at, ")");
}

/* The exec of every geometric op: its steps, drawn once, applied to pixels, boxes and mask. A step
   that does not fit the image (a 224 crop of a 112-pixel image) says the op and both sizes. */
static recio_err recio__x_geo(recio__exec *x, const recio__node *n) {
    recio__geo g[2];
    recio_image s = recio__exec_shape(x);
    int k = n->op->geom(x, n, s.width, s.height, g), i;
    recio_err e;
    char op[64];
    if (k < 0) {
        recio__node_text(n, op, sizeof op);
        recio__fmt(x->why, sizeof x->why, "%s cannot take the %dx%d image (WxH, %d channel%s) that reaches it", op,
                   s.width, s.height, s.channels, s.channels == 1 ? "" : "s");
        return RECIO_ERR_ARG;
    }
    for (i = 0; i < k; i++) {
        if ((e = recio__geo_pixels(x, n, &g[i])) != RECIO_OK) return e;
        if (x->tg && (e = recio__tgt_step(x->tg, &g[i])) != RECIO_OK) return e;
    }
    return RECIO_OK;
}

/* Width and height of a crop op: W, and H when given (else square). */
static void recio__crop_size(const recio__node *n, int *w, int *h) {
    *w = (int)n->arg[0];
    *h = n->nargs > 1 ? (int)n->arg[1] : *w;
}

/* resize(W,H) */
static void recio__sh_resize(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    s->w = (int)n->arg[0], s->h = (int)n->arg[1];
    s->short_ = s->w < s->h ? s->w : s->h;
}
static int recio__pl_resized(recio__plan *p) {
    if (p->dw <= 0 || p->dh <= 0 || (uint64_t)p->dw * (uint64_t)p->dh > RECIO_MAX_PIXELS)
        return -1; /* the plain path says why */
    p->o[0] = p->o[1] = 0, p->o[2] = p->dw, p->o[3] = p->dh;
    p->resized = 1;
    return 1;
}
static int recio__pl_resize(const recio__node *n, recio_rng *g, recio__plan *p) {
    (void)g;
    if (p->resized) return 0; /* a second resize needs the first's pixels */
    p->dw = (int)n->arg[0], p->dh = (int)n->arg[1];
    return recio__pl_resized(p);
}
static int recio__g_resize(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_resize(g, w, h, (int)n->arg[0], (int)n->arg[1]);
}

/* resize_short(S) */
static void recio__sh_resize_short(const recio_transform *t, const recio__node *n, recio__shp *s) {
    int S = (int)n->arg[0], lng = s->w > s->h ? s->w : s->h;
    (void)t;
    if (s->short_ > 0 && s->short_ < (s->w < s->h ? s->w : s->h)) { /* branches: a square holding any of them */
        int64_t b = (int64_t)lng * S / s->short_;
        s->w = s->h = b > 65535 * 4 ? 65535 * 4 : b < S ? S : (int)b;
    } else {
        recio__resize_short_size(s->w, s->h, S, &s->w, &s->h);
    }
    s->short_ = S;
}
static int recio__pl_resize_short(const recio__node *n, recio_rng *g, recio__plan *p) {
    (void)g;
    if (p->resized) return 0;
    recio__resize_short_size(p->r[2], p->r[3], (int)n->arg[0], &p->dw, &p->dh);
    return recio__pl_resized(p);
}
static int recio__g_resize_short(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int dw, dh;
    (void)x;
    recio__resize_short_size(w, h, (int)n->arg[0], &dw, &dh);
    return recio__geo_resize(g, w, h, dw, dh);
}

/* Crops narrow the source rectangle before the resize and the window of its output after it. */
static int recio__pl_box(recio__plan *p, int x0, int y0, int w, int h) {
    int *box = p->resized ? p->o : p->r;
    if (x0 < 0 || y0 < 0 || w <= 0 || h <= 0 || w > box[2] - x0 || h > box[3] - y0) return -1;
    box[0] += x0, box[1] += y0, box[2] = w, box[3] = h;
    return 1;
}
static void recio__sh_crop_wh(const recio__node *n, recio__shp *s) {
    int w, h;
    recio__crop_size(n, &w, &h);
    if (w > s->w || h > s->h) s->bad = 1;
    s->w = w, s->h = h;
    s->short_ = w < h ? w : h;
}

/* center_crop(W[,H]) */
static void recio__sh_center_crop(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    recio__sh_crop_wh(n, s);
}
static int recio__pl_center_crop(const recio__node *n, recio_rng *g, recio__plan *p) {
    const int *box = p->resized ? p->o : p->r;
    int w, h;
    (void)g;
    recio__crop_size(n, &w, &h);
    return recio__pl_box(p, (box[2] - w) / 2, (box[3] - h) / 2, w, h);
}
static int recio__g_center_crop(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int cw, ch;
    (void)x;
    recio__crop_size(n, &cw, &ch);
    return recio__geo_crop(g, w, h, (w - cw) / 2, (h - ch) / 2, cw, ch);
}

/* crop(X,Y,W,H) */
static void recio__sh_crop(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    if (n->arg[0] + n->arg[2] > (float)s->w || n->arg[1] + n->arg[3] > (float)s->h) s->bad = 1;
    s->w = (int)n->arg[2], s->h = (int)n->arg[3];
    s->short_ = s->w < s->h ? s->w : s->h;
}
static int recio__pl_crop(const recio__node *n, recio_rng *g, recio__plan *p) {
    (void)g;
    return recio__pl_box(p, (int)n->arg[0], (int)n->arg[1], (int)n->arg[2], (int)n->arg[3]);
}
static int recio__g_crop(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_crop(g, w, h, (int)n->arg[0], (int)n->arg[1], (int)n->arg[2], (int)n->arg[3]);
}

/* random_crop(W[,H]): the corner uniform over every position where the crop fits */
static int recio__random_corner(recio_rng *g, int bw, int bh, int w, int h, int *x0, int *y0) {
    if (w <= 0 || h <= 0 || w > bw || h > bh) return 0;
    *x0 = (int)recio_rng_below(g, (uint64_t)(bw - w) + 1);
    *y0 = (int)recio_rng_below(g, (uint64_t)(bh - h) + 1);
    return 1;
}
static int recio__pl_random_crop(const recio__node *n, recio_rng *g, recio__plan *p) {
    const int *box = p->resized ? p->o : p->r;
    int w, h, x0, y0;
    recio__crop_size(n, &w, &h);
    if (!recio__random_corner(g, box[2], box[3], w, h, &x0, &y0)) return -1;
    return recio__pl_box(p, x0, y0, w, h);
}
static int recio__g_random_crop(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int cw, ch, x0, y0;
    recio__crop_size(n, &cw, &ch);
    if (!recio__random_corner(&x->rng, w, h, cw, ch, &x0, &y0)) return -1;
    return recio__geo_crop(g, w, h, x0, y0, cw, ch);
}

/* random_resized_crop(S[,smin,smax,rmin,rmax]) */
static void recio__sh_rrc(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    recio__rrc_size(n, &s->w, &s->h);
    s->short_ = s->w < s->h ? s->w : s->h;
}
/* (W, H, ...): H a whole number of pixels, at most four scale and ratio numbers after it */
static recio_err recio__parse_rrc(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    recio_err e = recio__parse_args(ps, d, self, at);
    const recio__node *n = &ps->t->nodes[self];
    int w, h;
    if (e == RECIO_OK && recio__rrc_size(n, &w, &h) == 2 && (n->arg[1] != floorf(n->arg[1]) || n->arg[1] > 65535))
        return recio__perr(
            ps, at, "%s: the height (second argument above 1) must be a whole number of pixels up to 65535", d->name);
    return e;
}
static int recio__pl_rrc(const recio__node *n, recio_rng *g, recio__plan *p) {
    int c[4];
    if (p->resized) return 0;
    recio__rrc_rect(g, n, p->r[2], p->r[3], c);
    p->r[0] += c[0], p->r[1] += c[1], p->r[2] = c[2], p->r[3] = c[3];
    recio__rrc_size(n, &p->dw, &p->dh);
    return recio__pl_resized(p);
}
static int recio__g_rrc(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int r[4], ow, oh;
    recio__rrc_size(n, &ow, &oh);
    recio__rrc_rect(&x->rng, n, w, h, r);
    if (recio__geo_crop(g, w, h, r[0], r[1], r[2], r[3]) < 0) return -1;
    return recio__geo_resize(g + 1, r[2], r[3], ow, oh) < 0 ? -1 : 2;
}

/* flip, random_flip(P), vflip, random_vflip(P): mirrors; the vertical one on real pixels (the
   pending pass mirrors only along x) */
static int recio__g_flip(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    double m[6] = {-1, 0, 0, 0, 1, 0};
    if (n->nargs && !(recio_rng_uniform(&x->rng) < n->arg[0])) return 0;
    m[2] = w - 1;
    recio__geo_map(g, RECIO__GEO_FLIP, w, h, w, h, m);
    return 1;
}
static int recio__g_vflip(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    double m[6] = {1, 0, 0, 0, -1, 0};
    if (n->nargs && !(recio_rng_uniform(&x->rng) < n->arg[0])) return 0;
    m[5] = h - 1;
    recio__geo_map(g, RECIO__GEO_PIX, w, h, w, h, m);
    return 1;
}
static recio_err recio__p_vflip(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio__image_vflip(in, o);
}

/* area, interp(NAME[,antialias]): the filter of the next resize (area's is AREA; interp's its arg[0]) */
static recio_filter recio__node_filter(const recio__node *n) {
    return n->nargs ? (recio_filter)(int)n->arg[0] : RECIO_AREA;
}
static void recio__sh_area(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    s->filt = recio__node_filter(n);
}
static int recio__pl_area(const recio__node *n, recio_rng *g, recio__plan *p) {
    (void)g;
    if (p->resized) return 0;
    p->filt = recio__node_filter(n);
    return 1;
}
static recio_err recio__x_area(recio__exec *x, const recio__node *n) {
    x->next_filt = recio__node_filter(n);
    return RECIO_OK;
}
/* A word of an argument list: advances past it when it is `w`. */
static int recio__word(recio__parser *ps, const char *w) {
    size_t n = strlen(w);
    char c;
    if (strncmp(ps->p, w, n) != 0) return 0; /* first: the text may end before n bytes */
    c = ps->p[n];
    if ((c >= 'a' && c <= 'z') || c == '_') return 0;
    ps->p += n;
    recio__skip_ws(ps);
    return 1;
}
/* interp(nearest | linear | cubic | lanczos | area | auto [, antialias]) */
static recio_err recio__parse_interp(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    static const char *const names[6] = {"nearest", "linear", "cubic", "lanczos", "area", "auto"};
    static const recio_filter plain[6] = {RECIO_NEAREST, RECIO_LINEAR, RECIO_CUBIC,
                                          RECIO_LANCZOS, RECIO_AREA,   RECIO_AUTO};
    static const recio_filter aa[6] = {RECIO_NEAREST,    RECIO_LINEAR_AA, RECIO_CUBIC_AA,
                                       RECIO_LANCZOS_AA, RECIO_AREA,      RECIO_AUTO};
    recio__node *n = &ps->t->nodes[self];
    int i, anti = 0;
    (void)at;
    if (*ps->p != '(') return recio__perr(ps, ps->p, "%s: expected '(' and a filter", d->name);
    ps->p++;
    recio__skip_ws(ps);
    for (i = 0; i < 6 && !recio__word(ps, names[i]); i++) {}
    if (i == 6) return recio__perr(ps, ps->p, "%s: expected nearest, linear, cubic, lanczos, area or auto", d->name);
    if (*ps->p == ',') {
        ps->p++;
        recio__skip_ws(ps);
        if (!recio__word(ps, "antialias")) return recio__perr(ps, ps->p, "%s: expected 'antialias'", d->name);
        anti = 1;
    }
    if (*ps->p != ')') return recio__perr(ps, ps->p, "%s: expected ')'", d->name);
    ps->p++;
    n->arg[0] = (float)(anti ? aa[i] : plain[i]);
    n->nargs = 1;
    return RECIO_OK;
}

/* float, normalize(...), f16, i8(SCALE[,ZERO]), chw */
static void recio__sh_f32(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t, (void)n;
    s->t = RECIO_F32;
}
static void recio__sh_f16(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t, (void)n;
    s->t = RECIO_F16;
}
static void recio__sh_i8(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t, (void)n;
    s->t = RECIO_I8;
}
static void recio__sh_chw(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t, (void)n;
    s->l = RECIO_CHW;
}
static recio_err recio__x_float(recio__exec *x, const recio__node *n) {
    (void)n;
    return recio__exec_normalize(x, NULL, NULL);
}
static recio_err recio__x_normalize(recio__exec *x, const recio__node *n) {
    float m[4] = {0, 0, 0, 0}, d[4] = {1, 1, 1, 1};
    int c;
    for (c = 0; c < 3; c++) m[c] = n->arg[c], d[c] = n->arg[3 + c];
    return recio__exec_normalize(x, m, d);
}
static recio_err recio__x_materialise(recio__exec *x, const recio__node *n);
static recio_err recio__x_chw(recio__exec *x, const recio__node *n) {
    if (x->lazy) {
        x->chw = 1;
        return RECIO_OK;
    }
    return x->cur.layout == RECIO_CHW ? RECIO_OK : recio__x_materialise(x, n);
}
static recio_err recio__p_chw(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio_image_to_chw(in, o);
}
static recio_err recio__p_f16(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio_image_convert(in, o, RECIO_F16, 1, 0);
}
static recio_err recio__p_i8(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x;
    return recio_image_convert(in, o, RECIO_I8, 1 / n->arg[0], n->nargs > 1 ? n->arg[1] : 0);
}

/* rotate(DEG[,FILL]), random_rotate(DEG[,FILL]), shear_x(F[,FILL]), shear_y(F[,FILL]),
   random_shear_x(MAX[,FILL]), random_shear_y(MAX[,FILL]): warps whose float map the step carries
   (recio_image_rotate's own matrix, so the pixels are the same bits), FILL (default 0) in the
   corners they uncover; pad(N[,VALUE]) and pad(L,T,R,B[,VALUE]) */
/* A random angle or shear factor: uniform in [-MAX, MAX] (MXNet's max_rotate_angle, max_shear_ratio) */
static float recio__draw_sym(recio__exec *x, float max) { return (float)((recio_rng_uniform(&x->rng) * 2 - 1) * max); }
static int recio__geo_warp(recio__geo *g, int w, int h, const float fm[6]) {
    double m[6];
    int i;
    for (i = 0; i < 6; i++) m[i] = fm[i];
    recio__geo_map(g, RECIO__GEO_PIX, w, h, w, h, m);
    return 1;
}
static int recio__g_rotate(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    float m[6];
    (void)x;
    recio__rot_matrix(m, w, h, n->arg[0]);
    return recio__geo_warp(g, w, h, m);
}
static int recio__g_random_rotate(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    float m[6];
    recio__rot_matrix(m, w, h, recio__draw_sym(x, n->arg[0]));
    return recio__geo_warp(g, w, h, m);
}
static int recio__geo_shear(recio__geo *g, int w, int h, int at, float f) {
    float m[6] = {1, 0, 0, 0, 1, 0};
    m[at] = f;
    return recio__geo_warp(g, w, h, m);
}
static int recio__g_shear_x(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_shear(g, w, h, 1, n->arg[0]); /* x reads x + F*y */
}
static int recio__g_shear_y(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_shear(g, w, h, 3, n->arg[0]); /* y reads y + F*x */
}
/* MXNet's random shear (image_aug_default's warp with no rotation or scaling): s uniform in [-MAX,
   MAX], the forward map x' = x + s (y - H/2) (OpenCV's warpAffine, pixel centres at integers), so the
   row at H/2 stays put and the image stays centred; x reads x - s (y - H/2). random_shear_y is the
   same along y. (shear_x, AutoAugment's, shears about the top-left corner as PIL does.) */
static int recio__geo_shear_c(recio__geo *g, int w, int h, int along_x, float s) {
    float m[6] = {1, 0, 0, 0, 1, 0};
    if (along_x) m[1] = -s, m[2] = s * (float)h * 0.5f;
    else m[3] = -s, m[5] = s * (float)w * 0.5f;
    return recio__geo_warp(g, w, h, m);
}
static int recio__g_random_shear_x(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    return recio__geo_shear_c(g, w, h, 1, recio__draw_sym(x, n->arg[0]));
}
static int recio__g_random_shear_y(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    return recio__geo_shear_c(g, w, h, 0, recio__draw_sym(x, n->arg[0]));
}
/* translate(DX,DY[,FILL]): the content moves DX pixels right and DY down (torchvision's F.affine
   translate, whole pixels: truncated as its AutoAugment does); translate_rel(FX,FY[,FILL]): by
   FX * width and FY * height pixels, truncated (AutoAugment's and RandAugment's size-relative form) */
static int recio__geo_shift(recio__geo *g, int w, int h, int dx, int dy) {
    float m[6] = {1, 0, 0, 0, 1, 0};
    m[2] = (float)-dx, m[5] = (float)-dy;
    return recio__geo_warp(g, w, h, m);
}
/* Pixels of a shift, truncated; past the image it is all FILL, so it is clamped there (an int cast of
   1e30 would be undefined). */
static int recio__shift_px(double v, int side) { return v > side ? side : v < -side ? -side : (int)v; }
static int recio__g_translate(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_shift(g, w, h, recio__shift_px(n->arg[0], w), recio__shift_px(n->arg[1], h));
}
static int recio__g_translate_rel(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    (void)x;
    return recio__geo_shift(g, w, h, recio__shift_px(n->arg[0] * (float)w, w),
                            recio__shift_px(n->arg[1] * (float)h, h));
}
static recio_err recio__p_translate(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    float m[6];
    int i;
    for (i = 0; i < 6; i++) m[i] = (float)x->geo->m[i];
    return recio_image_affine(in, o, m, RECIO_BORDER_CONSTANT, n->nargs > 2 ? n->arg[2] : 0);
}
static recio_err recio__p_warp(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    float m[6];
    int i;
    for (i = 0; i < 6; i++) m[i] = (float)x->geo->m[i];
    return recio_image_affine(in, o, m, RECIO_BORDER_CONSTANT, n->nargs > 1 ? n->arg[1] : 0);
}
static int recio__geo_place(recio__geo *g, int w, int h, int x0, int y0, int cw, int ch);
/* Left, top, right, bottom of pad(N[,VALUE]) or pad(L,T,R,B[,VALUE]); returns the VALUE. */
static float recio__pad_sides(const recio__node *n, int p[4]) {
    int four = n->nargs >= 4, i;
    for (i = 0; i < 4; i++) p[i] = (int)n->arg[four ? i : 0];
    return n->nargs == 2 || n->nargs == 5 ? n->arg[n->nargs - 1] : 0;
}
static recio_err recio__parse_pad(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    recio_err e = recio__parse_args(ps, d, self, at);
    const recio__node *n = &ps->t->nodes[self];
    int i;
    if (e != RECIO_OK) return e;
    if (n->nargs == 3) return recio__perr(ps, at, "%s: expected N[,VALUE] or LEFT,TOP,RIGHT,BOTTOM[,VALUE]", d->name);
    for (i = 1; i < 4 && n->nargs >= 4; i++)
        if (n->arg[i] < 0 || n->arg[i] > 65535 || n->arg[i] != floorf(n->arg[i]))
            return recio__perr(ps, at, "%s: sides must be whole numbers from 0 to 65535", d->name);
    return RECIO_OK;
}
static int recio__g_pad(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int p[4];
    (void)x;
    recio__pad_sides(n, p);
    return recio__geo_place(g, w, h, p[0], p[1], w + p[0] + p[2], h + p[1] + p[3]);
}
static void recio__sh_pad(const recio_transform *t, const recio__node *n, recio__shp *s) {
    int p[4];
    (void)t;
    recio__pad_sides(n, p);
    s->w += p[0] + p[2], s->h += p[1] + p[3];
    s->short_ += p[0] + p[2] < p[1] + p[3] ? p[0] + p[2] : p[1] + p[3]; /* never more than the real one */
}
static recio_err recio__p_pad(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    int p[4];
    float v = recio__pad_sides(n, p);
    (void)x;
    return recio_image_pad(in, o, p[0], p[1], p[2], p[3], v);
}

/* Detection's resizes and zoom-out: resize_long(S), letterbox(W,H[,VALUE]), random_expand(MAX[,VALUE]) */
static void recio__resize_long_size(int w, int h, int S, int *ow, int *oh) {
    if (w >= h) *ow = S, *oh = (int)((int64_t)h * S / w);
    else *oh = S, *ow = (int)((int64_t)w * S / h);
    if (*ow < 1) *ow = 1;
    if (*oh < 1) *oh = 1;
}
static void recio__sh_resize_long(const recio_transform *t, const recio__node *n, recio__shp *s) {
    int S = (int)n->arg[0];
    (void)t;
    if (s->varies) { /* branches: a square holds any of them; the shorter side may be 1 */
        s->w = s->h = S, s->short_ = 1;
        return;
    }
    recio__resize_long_size(s->w, s->h, S, &s->w, &s->h);
    s->short_ = s->w < s->h ? s->w : s->h;
}
static int recio__g_resize_long(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int dw, dh;
    (void)x;
    recio__resize_long_size(w, h, (int)n->arg[0], &dw, &dh);
    return recio__geo_resize(g, w, h, dw, dh);
}
/* A canvas step: the w x h image placed at (x0, y0) of a cw x ch canvas (its pix fills the rest). */
static int recio__geo_place(recio__geo *g, int w, int h, int x0, int y0, int cw, int ch) {
    double m[6] = {1, 0, 0, 0, 1, 0};
    if (x0 < 0 || y0 < 0 || w > cw - x0 || h > ch - y0) return -1;
    m[2] = -x0, m[5] = -y0;
    recio__geo_map(g, RECIO__GEO_PIX, w, h, cw, ch, m);
    return 1;
}
static recio_err recio__p_place(recio__exec *x, const recio_image *in, recio_image *o, float value) {
    return recio__place(in, o, (int)-x->geo->m[2], (int)-x->geo->m[5], x->geo->w, x->geo->h, value);
}
/* letterbox: fit inside W x H with the aspect kept (the other side rounded), centred, VALUE around */
static void recio__sh_letterbox(const recio_transform *t, const recio__node *n, recio__shp *s) {
    (void)t;
    s->w = (int)n->arg[0], s->h = (int)n->arg[1];
    s->short_ = s->w < s->h ? s->w : s->h;
}
static int recio__g_letterbox(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    int W = (int)n->arg[0], H = (int)n->arg[1], nw = W, nh = H;
    (void)x;
    if ((int64_t)w * H >= (int64_t)h * W) nh = (int)(((int64_t)h * W * 2 + w) / (2 * (int64_t)w));
    else nw = (int)(((int64_t)w * H * 2 + h) / (2 * (int64_t)h));
    nw = nw < 1 ? 1 : nw > W ? W : nw, nh = nh < 1 ? 1 : nh > H ? H : nh;
    if (recio__geo_resize(g, w, h, nw, nh) < 0) return -1;
    return recio__geo_place(g + 1, nw, nh, (W - nw) / 2, (H - nh) / 2, W, H) < 0 ? -1 : 2;
}
static recio_err recio__p_letterbox(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    return recio__p_place(x, in, o, n->nargs > 2 ? n->arg[2] : 0);
}
/* random_expand: a canvas r times the image (r uniform in [1, MAX]), the image at a uniform position */
#define RECIO__EXPAND_MAX 65535
static int recio__expand_side(int v, double r) {
    double c = floor(v * r);
    return c > RECIO__EXPAND_MAX ? (v > RECIO__EXPAND_MAX ? v : RECIO__EXPAND_MAX) : (int)c;
}
static void recio__sh_expand(const recio_transform *t, const recio__node *n, recio__shp *s) {
    int w = recio__expand_side(s->w, n->arg[0] > 1 ? n->arg[0] : 1),
        h = recio__expand_side(s->h, n->arg[0] > 1 ? n->arg[0] : 1);
    (void)t;
    if (w != s->w || h != s->h) s->varies = 1; /* short_ stays: r may be 1 */
    s->w = w, s->h = h;
}
static int recio__g_expand(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    double mx = n->arg[0] > 1 ? n->arg[0] : 1, r = 1 + (mx - 1) * recio_rng_uniform(&x->rng);
    int cw = recio__expand_side(w, r), ch = recio__expand_side(h, r), x0, y0;
    x0 = (int)recio_rng_below(&x->rng, (uint64_t)(cw - w) + 1);
    y0 = (int)recio_rng_below(&x->rng, (uint64_t)(ch - h) + 1);
    return recio__geo_place(g, w, h, x0, y0, cw, ch);
}
static recio_err recio__p_expand(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    return recio__p_place(x, in, o, n->nargs > 1 ? n->arg[1] : 0);
}

/* random_bbox_crop([T[,SMIN,SMAX,RMIN,RMAX[,TRIALS]]]), random_bbox_cover(...): SSD's sampler (Liu et
   al. 2016, as Caffe SSD's batch sampler, MXNet's DetRandomCropAug and DALI's random_bbox_crop). T is
   the least overlap the crop must reach with at least one box: IoU (area of intersection over area
   of union), or for _cover the part of the box inside the crop (MXNet's min_object_covered); 0 = no
   constraint; -1 = SSD's seven choices, one drawn uniformly: keep the image, 0, 0.1, 0.3, 0.5, 0.7,
   0.9. Up to TRIALS candidates are drawn; the first that reaches T is the crop; when none does (or
   the choice is "keep"), the image stays whole. A candidate: side scale s uniform in [SMIN, SMAX],
   aspect a uniform in [RMIN, RMAX] clipped to [s^2, 1/s^2] (so it fits), size round(W s sqrt(a)) x
   round(H s / sqrt(a)) (a is relative to the image's own aspect, as in SSD), corner uniform. The
   draw reads the boxes riding along (x->tg: the op's only input beyond its arguments); when there
   are none (a plain apply, the iterator) or none is left, the whole image is the one box
   (TensorFlow's use_image_if_no_bounding_boxes), so T asks for a crop of at least T of the area. */
static const float recio__ssd_choices[7] = {-1, 0, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f};
static double recio__bbox_arg(const recio__node *n, int i, double def) { return n->nargs > i ? n->arg[i] : def; }
/* Overlap of crop c and box b (x0, y0, x1, y1 in pixel edges): IoU, or the part of b in c. */
static double recio__bbox_overlap(const double c[4], const double *b, int cover) {
    double iw = (c[2] < b[2] ? c[2] : b[2]) - (c[0] > b[0] ? c[0] : b[0]);
    double ih = (c[3] < b[3] ? c[3] : b[3]) - (c[1] > b[1] ? c[1] : b[1]);
    double in = iw > 0 && ih > 0 ? iw * ih : 0, ab = (b[2] - b[0]) * (b[3] - b[1]), ac = (c[2] - c[0]) * (c[3] - c[1]);
    if (in <= 0) return 0;
    return cover ? in / ab : in / (ab + ac - in);
}
/* The best overlap of crop c with any kept box, or with the whole w x h image when none is kept. */
static double recio__bbox_best(const recio__tgt *tg, const double c[4], int w, int h, int cover) {
    double best = 0, img[4] = {0, 0, 0, 0};
    int i, any = 0;
    for (i = 0; tg && i < tg->n; i++) {
        const double *b = tg->b + 5 * (size_t)i;
        double v;
        if (b[4] == 0) continue;
        any = 1;
        if ((v = recio__bbox_overlap(c, b, cover)) > best) best = v;
    }
    if (any) return best;
    img[2] = w, img[3] = h;
    return recio__bbox_overlap(c, img, cover);
}
static void recio__bbox_candidate(recio_rng *g, const recio__node *n, int w, int h, int r[4]) {
    double smin = recio__bbox_arg(n, 1, 0.3), smax = recio__bbox_arg(n, 2, 1), rmin = recio__bbox_arg(n, 3, 0.5),
           rmax = recio__bbox_arg(n, 4, 2), s = smin + (smax - smin) * recio_rng_uniform(g), lo, hi, a;
    lo = rmin > s * s ? rmin : s * s, hi = rmax < 1 / (s * s) ? rmax : 1 / (s * s);
    a = lo + (hi - lo) * recio_rng_uniform(g);
    r[2] = (int)floor(w * s * sqrt(a) + 0.5), r[3] = (int)floor(h * s / sqrt(a) + 0.5);
    r[2] = r[2] < 1 ? 1 : r[2] > w ? w : r[2], r[3] = r[3] < 1 ? 1 : r[3] > h ? h : r[3];
    r[0] = (int)recio_rng_below(g, (uint64_t)(w - r[2]) + 1);
    r[1] = (int)recio_rng_below(g, (uint64_t)(h - r[3]) + 1);
}
static int recio__bbox_crop(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2], int cover) {
    int trials = (int)recio__bbox_arg(n, 5, 50), i, r[4];
    double t = recio__bbox_arg(n, 0, -1), c[4];
    if (t < 0) t = recio__ssd_choices[recio_rng_below(&x->rng, 7)];
    for (i = 0; t >= 0 && i < trials; i++) {
        recio__bbox_candidate(&x->rng, n, w, h, r);
        c[0] = r[0], c[1] = r[1], c[2] = r[0] + r[2], c[3] = r[1] + r[3];
        if (recio__bbox_best(x->tg, c, w, h, cover) >= t) return recio__geo_crop(g, w, h, r[0], r[1], r[2], r[3]);
    }
    return 0; /* keep the image */
}
static int recio__g_bbox_crop(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    return recio__bbox_crop(x, n, w, h, g, 0);
}
static int recio__g_bbox_cover(recio__exec *x, const recio__node *n, int w, int h, recio__geo g[2]) {
    return recio__bbox_crop(x, n, w, h, g, 1);
}
/* At most the input; the shorter side at least SMIN * max(SMIN, sqrt(RMIN), 1 / sqrt(RMAX)) of it. */
static void recio__sh_bbox_crop(const recio_transform *t, const recio__node *n, recio__shp *s) {
    double smin = recio__bbox_arg(n, 1, 0.3), smax = recio__bbox_arg(n, 2, 1), rmin = recio__bbox_arg(n, 3, 0.5),
           rmax = recio__bbox_arg(n, 4, 2), f, fw, fh;
    (void)t;
    if (smax < smin) smin = smax; /* the range may be given either way round */
    if (rmax < rmin) f = rmin, rmin = rmax, rmax = f;
    fw = smin * (smin > sqrt(rmin) ? smin : sqrt(rmin)), fh = smin * (smin > 1 / sqrt(rmax) ? smin : 1 / sqrt(rmax));
    f = floor(s->short_ * (fw < fh ? fw : fh));
    s->varies = 1;
    s->short_ = f < 1 ? 1 : (int)f;
}

/* brightness(F), contrast(F), saturation(F), hue(F), gray, lighting(STD), color_jitter(B,C,S[,H]) */
static recio_err recio__p_gray(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)n;
    return recio__gray(x->t->kn, in, o);
}
static recio_err recio__p_lighting(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    float alpha[3];
    int i;
    for (i = 0; i < 3; i++) { /* Box-Muller: a normal draw from two uniforms */
        double u1 = recio_rng_uniform(&x->rng), u2 = recio_rng_uniform(&x->rng);
        alpha[i] = (float)(n->arg[0] * sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2));
    }
    return recio__lighting(x->t->kn, in, o, alpha);
}

/* One colour op of a factor on the current pixels, into a new image of the same shape. */
static recio_err recio__x_colour(recio__exec *x, recio__colour_fn op, float f) {
    recio_image o;
    recio_err e;
    if ((e = recio__exec_alloc(
             x, &o, recio__image_shape(x->cur.width, x->cur.height, x->cur.channels, x->cur.dtype, x->cur.layout))) !=
        RECIO_OK)
        return e;
    if ((e = op(x->t->kn, &x->cur, &o, f)) == RECIO_OK) x->cur = o;
    return e;
}
static recio_err recio__x_jitter(recio__exec *x, const recio__node *n) {
    static const recio__colour_fn ops[3] = {recio__brightness, recio__contrast, recio__saturation};
    int order[3] = {0, 1, 2}, i, j, tmp;
    recio_err e;
    if ((e = recio__exec_flush(x, NULL)) != RECIO_OK) return e;
    for (i = 2; i > 0; i--) { /* MXNet's RandomOrderAug: shuffle, then each draws its factor */
        j = (int)recio_rng_below(&x->rng, (uint64_t)i + 1);
        tmp = order[i], order[i] = order[j], order[j] = tmp;
    }
    for (i = 0; i < 3; i++) {
        float r = n->arg[order[i]];
        if (r == 0) continue;
        if ((e = recio__x_colour(x, ops[order[i]], (float)(1 + (recio_rng_uniform(&x->rng) * 2 - 1) * r))) != RECIO_OK)
            return e;
    }
    if (n->nargs > 3 && n->arg[3] != 0 &&
        (e = recio__x_colour(x, recio__hue, (float)((recio_rng_uniform(&x->rng) * 2 - 1) * n->arg[3]))) != RECIO_OK)
        return e;
    recio__exec_reset(x);
    return RECIO_OK;
}

/* ---- u8 ops only reachable from specs (AutoAugment's vocabulary, PIL ImageOps semantics) ---- */

static void recio__lut_apply(const recio_image *in, recio_image *out, unsigned char lut[3][256]) {
    int x, y, c;
    for (y = 0; y < in->height; y++) {
        const unsigned char *s = recio__at(in, 0, y, 0);
        unsigned char *d = recio__at(out, 0, y, 0);
        for (x = 0; x < in->width; x++)
            for (c = 0; c < in->channels; c++, s++, d++) *d = c < 3 ? lut[c][*s] : *s;
    }
}

static void recio__histogram(const recio_image *in, uint32_t h[3][256]) {
    int x, y, c, nc = in->channels < 3 ? in->channels : 3;
    memset(h, 0, sizeof(uint32_t) * 3 * 256);
    for (y = 0; y < in->height; y++) {
        const unsigned char *s = recio__at(in, 0, y, 0);
        for (x = 0; x < in->width; x++, s += in->channels)
            for (c = 0; c < nc; c++) h[c][s[c]]++;
    }
}

/* The 256-entry table of posterize, solarize, invert, autocontrast or equalize for each channel. */

/* A point op: a 256-entry table per colour channel, built from the channel's histogram. */
typedef void (*recio__lut_fn)(const uint32_t h[256], float arg, unsigned char lut[256]);

static recio_err recio__lut_op(const recio_image *in, recio_image *out, float arg, int hist, recio__lut_fn build) {
    uint32_t h[3][256];
    unsigned char lut[3][256];
    int c, i;
    if (hist) recio__histogram(in, h);
    else memset(h, 0, sizeof h);
    for (c = 0; c < 3; c++) {
        for (i = 0; i < 256; i++) lut[c][i] = (unsigned char)i;
        if (in->channels > 1 || c == 0) build(h[c], arg, lut[c]);
    }
    recio__lut_apply(in, out, lut);
    return RECIO_OK;
}

static void recio__lut_posterize(const uint32_t h[256], float bits, unsigned char lut[256]) {
    int i;
    (void)h;
    for (i = 0; i < 256; i++) lut[i] = (unsigned char)(i & ~((1 << (8 - (int)bits)) - 1));
}
static void recio__lut_solarize(const uint32_t h[256], float at, unsigned char lut[256]) {
    int i;
    (void)h;
    for (i = 0; i < 256; i++) lut[i] = (unsigned char)((float)i >= at ? 255 - i : i);
}
static void recio__lut_invert(const uint32_t h[256], float arg, unsigned char lut[256]) {
    int i;
    (void)h, (void)arg;
    for (i = 0; i < 256; i++) lut[i] = (unsigned char)(255 - i);
}
static void recio__lut_autocontrast(const uint32_t h[256], float arg, unsigned char lut[256]) {
    int lo = 0, hi = 255, i;
    (void)arg;
    while (lo < 255 && !h[lo]) lo++;
    while (hi > 0 && !h[hi]) hi--;
    if (hi > lo)
        for (i = 0; i < 256; i++) lut[i] = recio__u8((float)(i - lo) * 255.0f / (float)(hi - lo));
}
static void recio__lut_equalize(const uint32_t h[256], float arg, unsigned char lut[256]) {
    uint32_t total = 0, last = 0, step, acc;
    int i;
    (void)arg;
    for (i = 0; i < 256; i++) {
        total += h[i];
        if (h[i]) last = h[i];
    }
    step = (total - last) / 255;
    if (!step) return;
    for (acc = step / 2, i = 0; i < 256; i++) {
        uint32_t v = acc / step;
        lut[i] = (unsigned char)(v > 255 ? 255 : v);
        acc += h[i];
    }
}

static recio_err recio__p_posterize(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x;
    return recio__lut_op(in, o, n->arg[0], 0, recio__lut_posterize);
}
static recio_err recio__p_solarize(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x;
    return recio__lut_op(in, o, n->arg[0], 0, recio__lut_solarize);
}
static recio_err recio__p_invert(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio__lut_op(in, o, 0, 0, recio__lut_invert);
}
static recio_err recio__p_autocontrast(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio__lut_op(in, o, 0, 1, recio__lut_autocontrast);
}
static recio_err recio__p_equalize(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio__lut_op(in, o, 0, 1, recio__lut_equalize);
}

/* PIL ImageEnhance.Sharpness: blend with the 3x3 SMOOTH filter (centre 5, others 1, /13); edges kept. */
static void recio__sharpness(const recio_image *in, recio_image *out, float f) {
    int x, y, c, i, j, C = in->channels;
    for (y = 0; y < in->height; y++)
        for (x = 0; x < in->width; x++)
            for (c = 0; c < C; c++) {
                float v = *recio__at(in, x, y, c), s = 0;
                if (c < 3 && x > 0 && y > 0 && x < in->width - 1 && y < in->height - 1) {
                    for (j = -1; j <= 1; j++)
                        for (i = -1; i <= 1; i++) s += (float)*recio__at(in, x + i, y + j, c) * (i || j ? 1.0f : 5.0f);
                    s = (float)recio__u8(s / 13.0f);
                    v = s + f * (v - s);
                }
                *recio__at(out, x, y, c) = recio__u8(v);
            }
}

static recio_err recio__p_sharpness(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x;
    recio__sharpness(in, o, n->arg[0]);
    return RECIO_OK;
}

/* random_posterize(MIN,MAX) random_solarize(MIN,MAX) random_sharpness(MIN,MAX): the op with its
   argument drawn from [MIN, MAX] (bits: a whole number, each equally likely) */
static double recio__draw_in(recio__exec *x, const recio__node *n) {
    return n->arg[0] + (n->arg[1] - n->arg[0]) * recio_rng_uniform(&x->rng);
}
static recio_err recio__p_random_posterize(recio__exec *x, const recio__node *n, const recio_image *in,
                                           recio_image *o) {
    int lo = (int)(n->arg[0] < n->arg[1] ? n->arg[0] : n->arg[1]),
        hi = (int)(n->arg[0] < n->arg[1] ? n->arg[1] : n->arg[0]);
    return recio__lut_op(in, o, (float)(lo + (int)recio_rng_below(&x->rng, (uint64_t)(hi - lo) + 1)), 0,
                         recio__lut_posterize);
}
static recio_err recio__p_random_solarize(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    return recio__lut_op(in, o, (float)recio__draw_in(x, n), 0, recio__lut_solarize);
}
static recio_err recio__p_random_sharpness(recio__exec *x, const recio__node *n, const recio_image *in,
                                           recio_image *o) {
    recio__sharpness(in, o, (float)recio__draw_in(x, n));
    return RECIO_OK;
}

/* bgr: channels 0 and 2 swapped */
static recio_err recio__p_bgr(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    (void)x, (void)n;
    return recio_image_bgr(in, o);
}

/* random_erasing([P,SMIN,SMAX,RMIN,RMAX,VALUE]): torchvision's RandomErasing (Zhong et al. 2017),
   defaults 0.5, 0.02, 0.33, 0.3, 3.3, 0, drawn as it draws: apply with P; then up to ten tries of
   area a*U(SMIN,SMAX) and aspect exp(U(ln RMIN, ln RMAX)), h = round(sqrt(area*aspect)), w =
   round(sqrt(area/aspect)), until h < H and w < W; top uniform in [0, H-h], left in [0, W-w]. No
   try fits: unchanged. VALUE is in the units of the pixels at that point (0 after normalize is the
   mean), as torchvision's value on a normalised tensor. */
static float recio__argor(const recio__node *n, int i, float d) { return n->nargs > i ? n->arg[i] : d; }
static recio_err recio__p_erasing(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    double area = (double)in->width * in->height, lr0 = log(recio__argor(n, 3, 0.3f)),
           lr1 = log(recio__argor(n, 4, 3.3f));
    float s0 = recio__argor(n, 1, 0.02f), s1 = recio__argor(n, 2, 0.33f);
    int i;
    if (!(recio_rng_uniform(&x->rng) < recio__argor(n, 0, 0.5f))) return recio_image_copy(in, o);
    for (i = 0; i < 10; i++) {
        double ea = area * (s0 + (s1 - s0) * recio_rng_uniform(&x->rng));
        double ar = exp(lr0 + (lr1 - lr0) * recio_rng_uniform(&x->rng));
        double hd = floor(sqrt(ea * ar) + 0.5), wd = floor(sqrt(ea / ar) + 0.5); /* compared before any int cast */
        int h, w, top, left;
        if (!(hd < in->height && wd < in->width)) continue;
        h = (int)hd, w = (int)wd;
        top = (int)recio_rng_below(&x->rng, (uint64_t)(in->height - h) + 1);
        left = (int)recio_rng_below(&x->rng, (uint64_t)(in->width - w) + 1);
        return recio_image_erase(in, o, left, top, w, h, recio__argor(n, 5, 0));
    }
    return recio_image_copy(in, o);
}
/* cutout(SIZE[,VALUE]): DeVries & Taylor 2017, as their code: a centre pixel uniform (y drawn, then
   x), VALUE (default 0) over cells [c - SIZE/2, c + SIZE/2) (integer halves: SIZE - 1 for an odd
   SIZE), clipped to the image */
static recio_err recio__p_cutout(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    int half = (int)n->arg[0] / 2, cx, cy;
    cy = (int)recio_rng_below(&x->rng, (uint64_t)in->height);
    cx = (int)recio_rng_below(&x->rng, (uint64_t)in->width);
    return recio_image_erase(in, o, cx - half, cy - half, 2 * half, 2 * half, recio__argor(n, 1, 0));
}
/* gaussian_blur(K[,SMIN[,SMAX]]): torchvision's GaussianBlur(K, sigma): sigma uniform in [SMIN, SMAX]
   (default 0.1, 2.0, torchvision's), or SMIN when only it is given; the row buffer from scratch */
static recio_err recio__p_blur(recio__exec *x, const recio__node *n, const recio_image *in, recio_image *o) {
    float k[RECIO__BLUR_MAX], *row, s0 = recio__argor(n, 1, 0.1f), s1 = recio__argor(n, 2, n->nargs == 2 ? s0 : 2.0f);
    float sigma = (float)(s0 + (s1 - s0) * recio_rng_uniform(&x->rng));
    if (!recio__blur_ok(in, (int)n->arg[0], sigma)) return RECIO_ERR_ARG;
    if (!(row = (float *)recio__arena_get(&x->a, (size_t)in->width * (size_t)in->channels * sizeof(float))))
        return RECIO_ERR_NOMEM;
    recio__gauss_kernel(k, (int)n->arg[0], sigma);
    recio__blur(in, o, k, (int)n->arg[0], row);
    return RECIO_OK;
}

/* An op of real pixels, on materialised pixels: a new image of the shape its shape rule gives. */
static recio_err recio__x_materialise(recio__exec *x, const recio__node *n) {
    const recio__opdef *d = n->op;
    recio_image o, *in = &x->cur;
    recio__shp s;
    recio_err e;
    if ((d->flags & RECIO__OPF_U8) && !(in->dtype == RECIO_U8 && in->layout == RECIO_HWC)) return recio__exec_not_u8(x);
    memset(&s, 0, sizeof s);
    s.w = in->width, s.h = in->height, s.c = in->channels, s.t = in->dtype, s.l = in->layout;
    s.short_ = s.w < s.h ? s.w : s.h;
    if (d->shape) d->shape(x->t, n, &s);
    if (x->geo) s.w = x->geo->w, s.h = x->geo->h; /* the size it drew (random_expand's shape is a bound) */
    if ((e = recio__exec_limit(x, s.w, s.h)) != RECIO_OK) return e;
    if (!recio__shape_ok(s.w, s.h, s.c, s.t)) return RECIO_ERR_ARG;
    if ((e = recio__exec_alloc(x, &o, recio__image_shape(s.w, s.h, s.c, s.t, s.l))) != RECIO_OK) return e;
    e = d->pix ? d->pix(x, n, in, &o) : d->fop(x->t->kn, in, &o, n->arg[0]);
    if (e == RECIO_OK) x->cur = o;
    return e;
}
static recio_err recio__x_pixels(recio__exec *x, const recio__node *n) {
    recio_err e;
    if ((e = recio__exec_flush(x, NULL)) != RECIO_OK) return e; /* the pending pass, then the op */
    if ((e = recio__x_materialise(x, n)) == RECIO_OK) recio__exec_reset(x);
    return e;
}

/* ---- policies: random_apply(P, OPS...), random_choice(OPS...), random_subpolicy((OPS...),...) ---- */

/* Branches: random_apply's whole list is one branch that may not run; the others run one child.
   Every branch's scratch counts; the shape after is every branch's that can succeed, joined. */
static void recio__sh_join(recio__shp *acc, const recio__shp *b, int *any) {
    if (b->bad) return;
    if (!*any) {
        *acc = *b, *any = 1;
        return;
    }
    if (recio__shp_differ(acc, b)) acc->varies = 1;
    acc->varies |= b->varies, acc->loose |= b->loose;
    if (b->w > acc->w) acc->w = b->w;
    if (b->h > acc->h) acc->h = b->h;
    if (b->short_ < acc->short_) acc->short_ = b->short_;
}
static void recio__sh_branches(const recio_transform *t, const recio__node *n, recio__shp *s, int whole) {
    recio__shp base = *s, b, acc = *s;
    int c, any = 0;
    size_t sum = s->scratch;
    base.scratch = 0;
    if (whole) recio__sh_join(&acc, &base, &any); /* random_apply may not apply */
    for (c = n->child; c >= 0; c = t->nodes[c].next) {
        b = base;
        if (whole) recio__shp_list(t, c, &b);
        else recio__shp_op(t, &t->nodes[c], &b);
        sum = recio__shp_add(sum, b.scratch);
        if (b.bad) acc.varies = 1; /* a branch that fails: the chain may */
        recio__sh_join(&acc, &b, &any);
        if (whole) break;
    }
    if (!any) acc.bad = 1;
    acc.loose |= acc.varies;
    *s = acc;
    s->scratch = sum;
}
static void recio__sh_apply(const recio_transform *t, const recio__node *n, recio__shp *s) {
    recio__sh_branches(t, n, s, 1);
}
static void recio__sh_choice(const recio_transform *t, const recio__node *n, recio__shp *s) {
    recio__sh_branches(t, n, s, 0);
}
static void recio__sh_group(const recio_transform *t, const recio__node *n, recio__shp *s) {
    recio__shp_list(t, n->child, s);
}

static recio_err recio__x_apply(recio__exec *x, const recio__node *n) {
    return recio_rng_uniform(&x->rng) < n->arg[0] ? recio__exec_list(x, n->child) : RECIO_OK;
}
static recio_err recio__x_choice(recio__exec *x, const recio__node *n) {
    int c = n->child, k = 0;
    uint64_t pick;
    for (; c >= 0; c = x->t->nodes[c].next) k++;
    pick = recio_rng_below(&x->rng, (uint64_t)k);
    for (c = n->child; pick--; c = x->t->nodes[c].next) {}
    return recio__exec_op(x, &x->t->nodes[c]);
}
static recio_err recio__x_group(recio__exec *x, const recio__node *n) { return recio__exec_list(x, n->child); }
/* identity: nothing (RandAugment's and TrivialAugment's "Identity" choice) */
static recio_err recio__x_identity(recio__exec *x, const recio__node *n) {
    (void)x, (void)n;
    return RECIO_OK;
}

/* A group of ops run in order: a sub-policy, or the AutoAugment preset; not written in specs. */
static const recio__opdef recio__op_group = {
    "group", 0, 0, {0}, RECIO__OPF_LIST, 0, NULL, recio__sh_group, NULL, NULL, recio__x_group, NULL, NULL, NULL};

/* The list after the name: "(P, OPS...)" for random_apply (p set), "(OPS...)" or "((OPS...),...)". */
static recio_err recio__parse_policy(recio__parser *ps, const recio__opdef *d, int self, const char *name_at, int prob,
                                     int groups) {
    recio_err e;
    int first = -1, prev = -1;
    if (*ps->p != '(') return recio__perr(ps, ps->p, "%s: expected '('", d->name);
    ps->p++;
    recio__skip_ws(ps);
    if (prob) {
        const char *at = ps->p;
        float v;
        if (!recio__number(ps, &v)) return recio__perr(ps, at, "%s: expected a probability first", d->name);
        if ((e = recio__check_arg(ps, at, d, 0, v)) != RECIO_OK) return e;
        ps->t->nodes[self].arg[0] = v;
        ps->t->nodes[self].nargs = 1;
        recio__skip_ws(ps);
        if (*ps->p != ',') return recio__perr(ps, ps->p, "%s: expected ',' and ops", d->name);
        ps->p++;
    }
    if (!groups) {
        if ((e = recio__parse_list(ps, &first, ')', 1)) != RECIO_OK) return e;
    } else {
        for (;;) {
            int g, gfirst = -1;
            recio__skip_ws(ps);
            if (*ps->p != '(') return recio__perr(ps, ps->p, "%s: expected '(' starting a sub-policy", d->name);
            ps->p++;
            if ((e = recio__parse_list(ps, &gfirst, ')', 0)) != RECIO_OK) return e;
            ps->p++;
            if ((g = recio__new_node(ps->t, &recio__op_group)) < 0) return RECIO_ERR_NOMEM;
            ps->t->nodes[g].child = gfirst;
            if (prev < 0) first = g;
            else ps->t->nodes[prev].next = g;
            prev = g;
            recio__skip_ws(ps);
            if (*ps->p != ',') break;
            ps->p++;
        }
    }
    recio__skip_ws(ps);
    if (*ps->p != ')') return recio__perr(ps, ps->p, "%s: expected ')'", d->name);
    if (first < 0) return recio__perr(ps, name_at, "%s: needs at least one op", d->name);
    ps->p++;
    ps->t->nodes[self].child = first;
    return RECIO_OK;
}
static recio_err recio__parse_nested(recio__parser *ps, const recio__opdef *d, int self, const char *at, int prob,
                                     int groups) {
    recio_err e;
    if (++ps->depth > 16) return recio__perr(ps, at, "%s: nested too deeply", d->name);
    e = recio__parse_policy(ps, d, self, at, prob, groups);
    ps->depth--;
    return e;
}
static recio_err recio__parse_apply(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    return recio__parse_nested(ps, d, self, at, 1, 0);
}
static recio_err recio__parse_choice(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    return recio__parse_nested(ps, d, self, at, 0, 0);
}
static recio_err recio__parse_subpolicy(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    return recio__parse_nested(ps, d, self, at, 0, 1);
}
/* A preset is itself a spec, parsed in place into a group that takes the op's node. */
static recio_err recio__parse_preset(recio__parser *ps, int self, const char *spec) {
    recio__parser sub = *ps;
    int first = -1;
    recio_err e;
    sub.p = sub.line0 = spec;
    sub.line = 1;
    if ((e = recio__parse_list(&sub, &first, 0, 0)) != RECIO_OK) return e;
    ps->t->nodes[self].op = &recio__op_group;
    ps->t->nodes[self].nargs = 0;
    ps->t->nodes[self].child = first;
    return RECIO_OK;
}
/* The policies' specs in this grammar (defined with the policies below; the tests check the text). */
static const char *recio__autoaugment_imagenet(void);
static const char *recio__autoaugment_cifar10(void);
static const char *recio__autoaugment_svhn(void);
static size_t recio__randaugment_spec(char *buf, size_t cap, int n, int m);
static size_t recio__trivialaugment_spec(char *buf, size_t cap);
/* autoaugment[(imagenet | cifar10 | svhn)] */
static recio_err recio__parse_autoaugment(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    const char *spec = recio__autoaugment_imagenet();
    (void)at;
    if (*ps->p == '(') {
        ps->p++;
        recio__skip_ws(ps);
        if (recio__word(ps, "cifar10")) spec = recio__autoaugment_cifar10();
        else if (recio__word(ps, "svhn")) spec = recio__autoaugment_svhn();
        else if (!recio__word(ps, "imagenet"))
            return recio__perr(ps, ps->p, "%s: expected imagenet, cifar10 or svhn", d->name);
        if (*ps->p != ')') return recio__perr(ps, ps->p, "%s: expected ')'", d->name);
        ps->p++;
    }
    return recio__parse_preset(ps, self, spec);
}
/* randaugment[(N[,M])] and trivialaugment: their specs written out, then parsed as a preset */
static recio_err recio__parse_generated(recio__parser *ps, int self, int n, int m) {
    size_t len = n < 0 ? recio__trivialaugment_spec(NULL, 0) : recio__randaugment_spec(NULL, 0, n, m);
    char *spec = (char *)recio__malloc(&ps->t->alloc, len + 1);
    recio_err e;
    if (!spec) return RECIO_ERR_NOMEM;
    if (n < 0) recio__trivialaugment_spec(spec, len + 1);
    else recio__randaugment_spec(spec, len + 1, n, m);
    e = recio__parse_preset(ps, self, spec);
    recio__free(&ps->t->alloc, spec);
    return e;
}
static recio_err recio__parse_randaugment(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    recio_err e = recio__parse_args(ps, d, self, at);
    const recio__node *n = &ps->t->nodes[self];
    int N = n->nargs > 0 ? (int)n->arg[0] : 2, M = n->nargs > 1 ? (int)n->arg[1] : 9;
    if (e != RECIO_OK) return e;
    if (N > 16 || M > 30) return recio__perr(ps, at, "%s: N is 0 to 16 ops, M a magnitude bin from 0 to 30", d->name);
    return recio__parse_generated(ps, self, N, M);
}
static recio_err recio__parse_trivialaugment(recio__parser *ps, const recio__opdef *d, int self, const char *at) {
    (void)d, (void)at;
    return recio__parse_generated(ps, self, -1, 0);
}

/* The hints (recio__opdef.hint): resize_short(S) needs S; random_resized_crop(W,H) the shorter of W, H. */
static int recio__hint_arg0(const recio__node *n) { return (int)n->arg[0]; }
static int recio__hint_rrc(const recio__node *n) {
    int w, h;
    recio__rrc_size(n, &w, &h);
    return w < h ? w : h;
}

/* ---- the table ---- */
/* One op per three-line group (name and arguments; shape, plan and geometry; the executors and the
   decode hint), which the formatter would pack by width: */
/* clang-format off */
#define RECIO__G RECIO__OPF_GEOM
#define RECIO__R RECIO__OPF_RANDOM
static const recio__opdef recio__ops[] = {
    /* One op, three lines (a function NULL when the op has none; recio__opdef says what each does):
       {"name", fewest args, most args, {argument checks}, flags, images,
        parse, shape, plan, geom,
        exec, pix, fop, hint}, */
    {"resize", 2, 2, {RECIO__A_SIZE}, RECIO__G | RECIO__OPF_RESAMPLE, 0,
     NULL, recio__sh_resize, recio__pl_resize, recio__g_resize,
     recio__x_geo, NULL, NULL, NULL},
    {"resize_short", 1, 1, {RECIO__A_SIZE}, RECIO__G | RECIO__OPF_RESAMPLE, 0,
     NULL, recio__sh_resize_short, recio__pl_resize_short, recio__g_resize_short,
     recio__x_geo, NULL, NULL, recio__hint_arg0},
    {"center_crop", 1, 2, {RECIO__A_SIZE}, RECIO__G, 0,
     NULL, recio__sh_center_crop, recio__pl_center_crop, recio__g_center_crop,
     recio__x_geo, NULL, NULL, NULL},
    {"crop", 4, 4, {RECIO__A_INT, RECIO__A_INT, RECIO__A_SIZE}, RECIO__G, 0,
     NULL, recio__sh_crop, recio__pl_crop, recio__g_crop,
     recio__x_geo, NULL, NULL, NULL},
    {"random_crop", 1, 2, {RECIO__A_SIZE}, RECIO__G | RECIO__R, 0,
     NULL, recio__sh_center_crop, recio__pl_random_crop, recio__g_random_crop,
     recio__x_geo, NULL, NULL, NULL},
    {"random_resized_crop", 1, 6, {RECIO__A_SIZE, RECIO__A_POS}, RECIO__G | RECIO__OPF_RESAMPLE | RECIO__R, 0,
     recio__parse_rrc, recio__sh_rrc, recio__pl_rrc, recio__g_rrc,
     recio__x_geo, NULL, NULL, recio__hint_rrc},
    {"flip", 0, 0, {0}, RECIO__G, 0,
     NULL, NULL, NULL, recio__g_flip,
     recio__x_geo, NULL, NULL, NULL},
    {"random_flip", 1, 1, {RECIO__A_PROB}, RECIO__G | RECIO__R, 0,
     NULL, NULL, NULL, recio__g_flip,
     recio__x_geo, NULL, NULL, NULL},
    {"vflip", 0, 0, {0}, RECIO__G, 0,
     NULL, NULL, NULL, recio__g_vflip,
     recio__x_geo, recio__p_vflip, NULL, NULL},
    {"random_vflip", 1, 1, {RECIO__A_PROB}, RECIO__G | RECIO__R, 0,
     NULL, NULL, NULL, recio__g_vflip,
     recio__x_geo, recio__p_vflip, NULL, NULL},
    {"rotate", 1, 2, {RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8, 0,
     NULL, NULL, NULL, recio__g_rotate,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"random_rotate", 1, 2, {RECIO__A_NONNEG, RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, recio__g_random_rotate,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"shear_x", 1, 2, {RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8, 0,
     NULL, NULL, NULL, recio__g_shear_x,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"shear_y", 1, 2, {RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8, 0,
     NULL, NULL, NULL, recio__g_shear_y,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"random_shear_x", 1, 2, {RECIO__A_NONNEG, RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, recio__g_random_shear_x,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"random_shear_y", 1, 2, {RECIO__A_NONNEG, RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, recio__g_random_shear_y,
     recio__x_geo, recio__p_warp, NULL, NULL},
    {"translate", 2, 3, {RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8, 0,
     NULL, NULL, NULL, recio__g_translate,
     recio__x_geo, recio__p_translate, NULL, NULL},
    {"translate_rel", 2, 3, {RECIO__A_NUM}, RECIO__G | RECIO__OPF_U8, 0,
     NULL, NULL, NULL, recio__g_translate_rel,
     recio__x_geo, recio__p_translate, NULL, NULL},
    {"pad", 1, 5, {RECIO__A_INT, RECIO__A_NUM}, RECIO__G, 0,
     recio__parse_pad, recio__sh_pad, NULL, recio__g_pad,
     recio__x_geo, recio__p_pad, NULL, NULL},
    {"resize_long", 1, 1, {RECIO__A_SIZE}, RECIO__G | RECIO__OPF_RESAMPLE, 0,
     NULL, recio__sh_resize_long, NULL, recio__g_resize_long,
     recio__x_geo, NULL, NULL, NULL},
    {"letterbox", 2, 3, {RECIO__A_SIZE, RECIO__A_SIZE, RECIO__A_NUM}, RECIO__G | RECIO__OPF_RESAMPLE, 0,
     NULL, recio__sh_letterbox, NULL, recio__g_letterbox,
     recio__x_geo, recio__p_letterbox, NULL, NULL},
    {"random_expand", 1, 2, {RECIO__A_POS, RECIO__A_NUM}, RECIO__G | RECIO__R, 0,
     NULL, recio__sh_expand, NULL, recio__g_expand,
     recio__x_geo, recio__p_expand, NULL, NULL},
    {"random_bbox_crop", 0, 6, {RECIO__A_IOU, RECIO__A_FRAC, RECIO__A_FRAC, RECIO__A_POS, RECIO__A_POS, RECIO__A_INT},
     RECIO__G | RECIO__R, 0,
     NULL, recio__sh_bbox_crop, NULL, recio__g_bbox_crop,
     recio__x_geo, NULL, NULL, NULL},
    {"random_bbox_cover", 0, 6, {RECIO__A_IOU, RECIO__A_FRAC, RECIO__A_FRAC, RECIO__A_POS, RECIO__A_POS, RECIO__A_INT},
     RECIO__G | RECIO__R, 0,
     NULL, recio__sh_bbox_crop, NULL, recio__g_bbox_cover,
     recio__x_geo, NULL, NULL, NULL},
    {"area", 0, 0, {0}, RECIO__OPF_PREFIX, 0,
     NULL, recio__sh_area, recio__pl_area, NULL,
     recio__x_area, NULL, NULL, NULL},
    {"interp", 1, 1, {0}, RECIO__OPF_PREFIX, 0,
     recio__parse_interp, recio__sh_area, recio__pl_area, NULL,
     recio__x_area, NULL, NULL, NULL},
    {"brightness", 1, 1, {RECIO__A_NONNEG}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, NULL, recio__brightness, NULL},
    {"contrast", 1, 1, {RECIO__A_NONNEG}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, NULL, recio__contrast, NULL},
    {"saturation", 1, 1, {RECIO__A_NONNEG}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, NULL, recio__saturation, NULL},
    {"hue", 1, 1, {RECIO__A_NUM}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, NULL, recio__hue, NULL},
    {"color_jitter", 3, 4, {RECIO__A_NONNEG}, RECIO__R, 5,
     NULL, NULL, NULL, NULL,
     recio__x_jitter, NULL, NULL, NULL},
    {"lighting", 1, 1, {RECIO__A_NONNEG}, RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_lighting, NULL, NULL},
    {"gray", 0, 0, {0}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_gray, NULL, NULL},
    {"posterize", 1, 1, {RECIO__A_BITS}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_posterize, NULL, NULL},
    {"solarize", 1, 1, {RECIO__A_NONNEG}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_solarize, NULL, NULL},
    {"autocontrast", 0, 0, {0}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_autocontrast, NULL, NULL},
    {"equalize", 0, 0, {0}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_equalize, NULL, NULL},
    {"invert", 0, 0, {0}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_invert, NULL, NULL},
    {"sharpness", 1, 1, {RECIO__A_NONNEG}, RECIO__OPF_U8, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_sharpness, NULL, NULL},
    {"random_posterize", 2, 2, {RECIO__A_BITS}, RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_random_posterize, NULL, NULL},
    {"random_solarize", 2, 2, {RECIO__A_NONNEG}, RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_random_solarize, NULL, NULL},
    {"random_sharpness", 2, 2, {RECIO__A_NONNEG}, RECIO__OPF_U8 | RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_random_sharpness, NULL, NULL},
    {"gaussian_blur", 1, 3, {RECIO__A_ODD, RECIO__A_POS}, RECIO__OPF_U8 | RECIO__R, 3,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_blur, NULL, NULL},
    {"random_erasing", 0, 6, {RECIO__A_PROB, RECIO__A_POS, RECIO__A_POS, RECIO__A_POS, RECIO__A_POS, RECIO__A_NUM},
     RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_erasing, NULL, NULL},
    {"cutout", 1, 2, {RECIO__A_SIZE, RECIO__A_NUM}, RECIO__R, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_cutout, NULL, NULL},
    {"bgr", 0, 0, {0}, 0, 0,
     NULL, NULL, NULL, NULL,
     NULL, recio__p_bgr, NULL, NULL},
    {"float", 0, 0, {0}, 0, 0,
     NULL, recio__sh_f32, NULL, NULL,
     recio__x_float, NULL, NULL, NULL},
    {"normalize", 6, 6, {RECIO__A_NUM, RECIO__A_NUM, RECIO__A_NUM, RECIO__A_POS}, 0, 0,
     recio__parse_normalize, recio__sh_f32, NULL, NULL,
     recio__x_normalize, NULL, NULL, NULL},
    {"chw", 0, 0, {0}, 0, 0,
     NULL, recio__sh_chw, NULL, NULL,
     recio__x_chw, recio__p_chw, NULL, NULL},
    {"f16", 0, 0, {0}, 0, 0,
     NULL, recio__sh_f16, NULL, NULL,
     NULL, recio__p_f16, NULL, NULL},
    {"i8", 1, 2, {RECIO__A_POS, RECIO__A_NUM}, 0, 0,
     NULL, recio__sh_i8, NULL, NULL,
     NULL, recio__p_i8, NULL, NULL},
    {"random_apply", 1, 1, {RECIO__A_PROB}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_apply, recio__sh_apply, NULL, NULL,
     recio__x_apply, NULL, NULL, NULL},
    {"random_choice", 0, 0, {0}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_choice, recio__sh_choice, NULL, NULL,
     recio__x_choice, NULL, NULL, NULL},
    {"random_subpolicy", 0, 0, {0}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_subpolicy, recio__sh_choice, NULL, NULL,
     recio__x_choice, NULL, NULL, NULL},
    {"autoaugment", 0, 0, {0}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_autoaugment, recio__sh_group, NULL, NULL,
     recio__x_group, NULL, NULL, NULL},
    {"randaugment", 0, 2, {RECIO__A_INT}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_randaugment, recio__sh_group, NULL, NULL,
     recio__x_group, NULL, NULL, NULL},
    {"trivialaugment", 0, 0, {0}, RECIO__OPF_LIST | RECIO__R, 0,
     recio__parse_trivialaugment, recio__sh_group, NULL, NULL,
     recio__x_group, NULL, NULL, NULL},
    {"identity", 0, 0, {0}, 0, 0,
     NULL, NULL, NULL, NULL,
     recio__x_identity, NULL, NULL, NULL},
};
/* clang-format on */
#undef RECIO__G
#undef RECIO__R

/* ---- the parser ---- */

/* Edit distance of a and b (each under 32 bytes): the nearest op names an unknown op's message. */
static int recio__edits(const char *a, const char *b) {
    int row[33], i, j, n = (int)strlen(b);
    for (j = 0; j <= n; j++) row[j] = j;
    for (i = 1; a[i - 1]; i++) {
        int diag = row[0];
        row[0] = i;
        for (j = 1; j <= n; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up, row[j] = best;
        }
    }
    return row[n];
}

/* "unknown op 'flipp' (did you mean 'flip'?)": the nearest op within a third of the name. */
static recio_err recio__unknown_op(recio__parser *ps, const char *at, const char *name) {
    char msg[96];
    size_t i, best = 0;
    int d, bd = 1 << 30;
    for (i = 0; i < sizeof recio__ops / sizeof recio__ops[0]; i++)
        if (strlen(recio__ops[i].name) < 32 && (d = recio__edits(name, recio__ops[i].name)) < bd) bd = d, best = i;
    if (bd > 0 && bd <= 1 + (int)strlen(name) / 3) {
        recio__fmt(msg, sizeof msg, "unknown op '%s' (did you mean '%s'?)", name, recio__ops[best].name);
        return recio__perr(ps, at, "%s", msg);
    }
    return recio__perr(ps, at, "unknown op '%s'", name);
}

static recio_err recio__parse_op(recio__parser *ps, int *out) {
    const char *at = ps->p;
    char name[32];
    size_t len = 0, i;
    const recio__opdef *d = NULL;
    int self;
    while ((ps->p[len] >= 'a' && ps->p[len] <= 'z') || ps->p[len] == '_' ||
           (len && ps->p[len] >= '0' && ps->p[len] <= '9'))
        len++;
    if (len == 0) {
        name[0] = *ps->p ? *ps->p : '?';
        name[1] = 0;
        return recio__perr(ps, at, "unexpected '%s'", name);
    }
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, ps->p, len);
    name[len] = 0;
    for (i = 0; i < sizeof recio__ops / sizeof recio__ops[0]; i++)
        if (strlen(recio__ops[i].name) == len && memcmp(recio__ops[i].name, ps->p, len) == 0) d = &recio__ops[i];
    if (!d) return recio__unknown_op(ps, at, name);
    ps->p += len;
    if ((self = recio__new_node(ps->t, d)) < 0) return RECIO_ERR_NOMEM;
    *out = self;
    return (d->parse ? d->parse : recio__parse_args)(ps, d, self, at);
}

/* Ops until `close` (not consumed) or the end; commas may separate them inside policies. */
static recio_err recio__parse_list(recio__parser *ps, int *first, char close, int commas) {
    int prev = -1, node = -1;
    recio_err e;
    for (;;) {
        recio__skip_ws(ps);
        if (*ps->p == close || (*ps->p == 0 && close == 0)) break;
        if (*ps->p == 0) {
            char c[2];
            c[0] = close;
            c[1] = 0;
            return recio__perr(ps, ps->p, "missing '%s'", c);
        }
        if (prev >= 0 && commas && *ps->p == ',') {
            ps->p++;
            recio__skip_ws(ps);
        }
        if ((e = recio__parse_op(ps, &node)) != RECIO_OK) return e;
        if (prev < 0) *first = node;
        else ps->t->nodes[prev].next = node;
        prev = node;
        if (*ps->p && *ps->p != ' ' && *ps->p != '\t' && *ps->p != '\n' && *ps->p != '\r' && *ps->p != close &&
            !(commas && *ps->p == ',')) {
            char c[2];
            c[0] = *ps->p;
            c[1] = 0;
            return recio__perr(ps, ps->p, "expected a space between ops, found '%s'", c);
        }
    }
    return RECIO_OK;
}

RECIODEF void recio_transform_free(recio_transform *t) {
    recio_allocator a;
    if (!t) return;
    a = t->alloc;
    recio__free(&a, t->nodes);
    recio__free(&a, t);
}

RECIODEF recio_err recio_transform_parse_desc(recio_transform **t, const char *spec, const recio_transform_desc *desc) {
    recio__parser ps;
    recio_transform *tr;
    recio_allocator a;
    recio_err e;
    char *errmsg = desc ? desc->errmsg : NULL;
    size_t errmsg_size = errmsg ? RECIO_ERRMSG_SIZE : 0;
    if (errmsg) errmsg[0] = 0;
    if (t) *t = NULL;
    if (!t || !spec) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "spec: %s is NULL", !t ? "the transform pointer" : "the spec");
        return RECIO_ERR_ARG;
    }
    memset(&a, 0, sizeof a);
    if (desc) a = desc->alloc;
    tr = (recio_transform *)recio__malloc(&a, sizeof *tr);
    if (!tr) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "spec: out of memory"); /* as a later allocation says */
        return RECIO_ERR_NOMEM;
    }
    memset(tr, 0, sizeof *tr);
    tr->alloc = a;
    tr->kn = recio__kern_pick();
    tr->first = -1;
    tr->fuse = 1; /* the tests turn it off through the struct (they include the implementation) */
    memset(&ps, 0, sizeof ps);
    ps.p = ps.line0 = spec;
    ps.line = 1;
    ps.t = tr;
    ps.err = errmsg;
    ps.errcap = errmsg ? errmsg_size : 0;
    e = recio__parse_list(&ps, &tr->first, 0, 0);
    if (e != RECIO_OK) {
        if (e == RECIO_ERR_NOMEM && errmsg) recio__fmt(errmsg, errmsg_size, "spec: out of memory");
        recio_transform_free(tr);
        return e;
    }
    *t = tr;
    return RECIO_OK;
}

/* The smallest shorter side the transform's first resize needs (S of a leading resize_short(S) or
   random_resized_crop(S)), 0 when it needs full resolution: its row's `hint` says (recio_decode_desc.transform). */
static int recio__decode_hint(const recio_transform *t) {
    int i = t ? t->first : -1;
    while (i >= 0 && (t->nodes[i].op->flags & RECIO__OPF_PREFIX)) i = t->nodes[i].next;
    return i >= 0 && t->nodes[i].op->hint ? t->nodes[i].op->hint(&t->nodes[i]) : 0;
}

/* ---- cutting a chain in two, for the iterator's cache ---- */

/* Does node n's result depend on the seed? Its row says so, or (a group: a sub-policy, the
   AutoAugment preset) one of its children's does. */
static int recio__node_random(const recio_transform *t, const recio__node *n) {
    int c;
    if (n->op->flags & RECIO__OPF_RANDOM) return 1;
    for (c = n->child; c >= 0; c = t->nodes[c].next)
        if (recio__node_random(t, &t->nodes[c])) return 1;
    return 0;
}

/* Where the iterator's cache may cut t: -1 when no op is random (keep the chain's output), k > 0 to
   keep the output of the first k top-level ops, 0 (and why) when it may keep nothing. The rule:
   cut before the first random op, so the prefix draws nothing and the rest, run with a fresh
   generator on the same seed, draws what it draws inside the whole chain; and only when no op
   from there to the end of the JPEG planner's reach (the leading ops with a plan function)
   resizes or picks a filter (RESAMPLE, HINT, PREFIX): those set the DCT scale the whole chain
   decodes at, which the prefix alone would pick otherwise; nor when an op that changes how the
   next resize runs (PREFIX: area) is kept without its resize. Then prefix-then-rest gives the whole
   chain's bytes; tests/test_iter_cache.c checks that on random chains of the table's ops. */
static int recio__tf_cache_cut(const recio_transform *t, char *why, size_t cap) {
    int i, k = 0, planned = 1, modifier = -1;
    for (i = t->first; i >= 0 && !recio__node_random(t, &t->nodes[i]); i = t->nodes[i].next, k++) {
        const recio__opdef *d = t->nodes[i].op;
        planned = planned && d->plan;
        if (d->flags & RECIO__OPF_PREFIX) modifier = i;
        if (d->flags & RECIO__OPF_RESAMPLE) modifier = -1;
    }
    if (i < 0) return -1;
    if (k == 0)
        return recio__fmt(why, cap, "the chain starts with a random op (%s): nothing before it to keep",
                          t->nodes[i].op->name),
               0;
    if (modifier >= 0) /* its resize comes after the cut: the rest alone would resize without it */
        return recio__fmt(why, cap, "%s before the first random op (%s) changes a resize after it",
                          t->nodes[modifier].op->name, t->nodes[i].op->name),
               0;
    for (; planned && i >= 0 && t->nodes[i].op->plan; i = t->nodes[i].next)
        if (t->nodes[i].op->flags & (RECIO__OPF_RESAMPLE | RECIO__OPF_PREFIX))
            return recio__fmt(why, cap,
                              "%s resizes within the ops planned with the JPEG decode, after the first random op: "
                              "its size picks the DCT scale, so the ops before it cannot be kept apart",
                              t->nodes[i].op->name),
                   0;
    return k;
}

/* A copy of t that runs its top-level ops from the from-th up to (not including) the to-th (to < 0:
   to the end), through t's allocator. */
static recio_err recio__tf_part(const recio_transform *t, int from, int to, recio_transform **out) {
    recio_transform *p;
    int i, k, prev = -1;
    *out = NULL;
    if (!(p = (recio_transform *)recio__malloc(&t->alloc, sizeof *p))) return RECIO_ERR_NOMEM;
    *p = *t;
    p->cap = t->count;
    if (!(p->nodes = (recio__node *)recio__malloc(&t->alloc, (size_t)t->count * sizeof *p->nodes)))
        return recio__free(&t->alloc, p), RECIO_ERR_NOMEM;
    memcpy(p->nodes, t->nodes, (size_t)t->count * sizeof *p->nodes);
    for (i = t->first, k = 0; i >= 0 && k < from; prev = i, i = t->nodes[i].next, k++) {}
    p->first = i;
    for (; i >= 0 && k != to; prev = i, i = t->nodes[i].next, k++) {}
    if (i >= 0 && prev >= 0) p->nodes[prev].next = -1;
    *out = p;
    return RECIO_OK;
}

RECIODEF recio_err recio_transform_parse(recio_transform **t, const char *spec) {
    return recio_transform_parse_desc(t, spec, NULL);
}

/* AutoAugment's ImageNet policy (Cubuk et al. 2019, as torchvision's AutoAugmentPolicy.IMAGENET with
   10 magnitude bins): 25 sub-policies of two ops, each applied with its probability; signed
   magnitudes pick either sign with equal chance. Magnitudes: rotate 30*m/9 degrees; posterize
   8 - round(m*4/9) bits; solarize threshold 255*(1 - m/9); colour/contrast/sharpness 1 +/- 0.9*m/9;
   shear 0.3*m/9. */
static const char *recio__autoaugment_imagenet(void) {
    return "random_subpolicy("
           "(random_apply(0.4, posterize(4)) random_apply(0.6, random_choice(rotate(30), rotate(-30)))),"
           "(random_apply(0.6, solarize(113.33)) random_apply(0.6, autocontrast)),"
           "(random_apply(0.8, equalize) random_apply(0.6, equalize)),"
           "(random_apply(0.6, posterize(5)) random_apply(0.6, posterize(5))),"
           "(random_apply(0.4, equalize) random_apply(0.2, solarize(141.67))),"
           "(random_apply(0.4, equalize) random_apply(0.8, random_choice(rotate(26.67), rotate(-26.67)))),"
           "(random_apply(0.6, solarize(170)) random_apply(0.6, equalize)),"
           "(random_apply(0.8, posterize(6)) random_apply(1.0, equalize)),"
           "(random_apply(0.2, random_choice(rotate(10), rotate(-10))) random_apply(0.6, solarize(28.33))),"
           "(random_apply(0.6, equalize) random_apply(0.4, posterize(5))),"
           "(random_apply(0.8, random_choice(rotate(26.67), rotate(-26.67))) random_apply(0.4, saturation(1))),"
           "(random_apply(0.4, random_choice(rotate(30), rotate(-30))) random_apply(0.6, equalize)),"
           "(random_apply(0.0, equalize) random_apply(0.8, equalize)),"
           "(random_apply(0.6, invert) random_apply(1.0, equalize)),"
           "(random_apply(0.6, random_choice(saturation(1.4), saturation(0.6))) random_apply(1.0, "
           "random_choice(contrast(1.8), contrast(0.2)))),"
           "(random_apply(0.8, random_choice(rotate(26.67), rotate(-26.67))) random_apply(1.0, "
           "random_choice(saturation(1.2), saturation(0.8)))),"
           "(random_apply(0.8, random_choice(saturation(1.8), saturation(0.2))) random_apply(0.8, solarize(56.67))),"
           "(random_apply(0.4, random_choice(sharpness(1.7), sharpness(0.3))) random_apply(0.6, invert)),"
           "(random_apply(0.6, random_choice(shear_x(0.1667), shear_x(-0.1667))) random_apply(1.0, equalize)),"
           "(random_apply(0.4, saturation(1)) random_apply(0.6, equalize)),"
           "(random_apply(0.4, equalize) random_apply(0.2, solarize(141.67))),"
           "(random_apply(0.6, solarize(113.33)) random_apply(0.6, autocontrast)),"
           "(random_apply(0.6, invert) random_apply(1.0, equalize)),"
           "(random_apply(0.6, random_choice(saturation(1.4), saturation(0.6))) random_apply(1.0, "
           "random_choice(contrast(1.8), contrast(0.2)))),"
           "(random_apply(0.8, equalize) random_apply(0.6, equalize)))";
}

/* AutoAugment's CIFAR-10 and SVHN policies as torchvision defines them (AutoAugmentPolicy, 10 bins),
   written in this grammar by tests/data/recipes/make_refs.py from torchvision's own tables (the test
   compares): shear tan-free factors 0.3*m/9, translations translate_rel(150/331*m/9) of the image
   size, the rest as the ImageNet policy. */
static const char *recio__autoaugment_cifar10(void) {
    return "random_subpolicy("
           "(random_apply(0.1, invert) random_apply(0.2, random_choice(contrast(1.6), contrast(0.4)))),"
           "(random_apply(0.7, random_choice(rotate(6.66667), rotate(-6.66667))) random_apply(0.3, "
           "random_choice(translate_rel(0.453172,0), translate_rel(-0.453172,0)))),"
           "(random_apply(0.8, random_choice(sharpness(1.1), sharpness(0.9))) random_apply(0.9, "
           "random_choice(sharpness(1.3), sharpness(0.7)))),"
           "(random_apply(0.5, random_choice(shear_y(0.266667), shear_y(-0.266667))) random_apply(0.7, "
           "random_choice(translate_rel(0,0.453172), translate_rel(0,-0.453172)))),"
           "(random_apply(0.5, autocontrast) random_apply(0.9, equalize)),"
           "(random_apply(0.2, random_choice(shear_y(0.233333), shear_y(-0.233333))) random_apply(0.3, posterize(5))),"
           "(random_apply(0.4, random_choice(saturation(1.3), saturation(0.7))) random_apply(0.6, "
           "random_choice(brightness(1.7), brightness(0.3)))),"
           "(random_apply(0.3, random_choice(sharpness(1.9), sharpness(0.1))) random_apply(0.7, "
           "random_choice(brightness(1.9), brightness(0.1)))),"
           "(random_apply(0.6, equalize) random_apply(0.5, equalize)),"
           "(random_apply(0.6, random_choice(contrast(1.7), contrast(0.3))) random_apply(0.6, "
           "random_choice(sharpness(1.5), sharpness(0.5)))),"
           "(random_apply(0.7, random_choice(saturation(1.7), saturation(0.3))) random_apply(0.5, "
           "random_choice(translate_rel(0.40282,0), translate_rel(-0.40282,0)))),"
           "(random_apply(0.3, equalize) random_apply(0.4, autocontrast)),"
           "(random_apply(0.4, random_choice(translate_rel(0,0.151057), translate_rel(0,-0.151057))) random_apply(0.2, "
           "random_choice(sharpness(1.6), sharpness(0.4)))),"
           "(random_apply(0.9, random_choice(brightness(1.6), brightness(0.4))) random_apply(0.2, "
           "random_choice(saturation(1.8), saturation(0.2)))),"
           "(random_apply(0.5, solarize(198.333)) random_apply(0, invert)),"
           "(random_apply(0.2, equalize) random_apply(0.6, autocontrast)),"
           "(random_apply(0.2, equalize) random_apply(0.6, equalize)),"
           "(random_apply(0.9, random_choice(saturation(1.9), saturation(0.1))) random_apply(0.6, equalize)),"
           "(random_apply(0.8, autocontrast) random_apply(0.2, solarize(28.3333))),"
           "(random_apply(0.1, random_choice(brightness(1.3), brightness(0.7))) random_apply(0.7, saturation(1))),"
           "(random_apply(0.4, solarize(113.333)) random_apply(0.9, autocontrast)),"
           "(random_apply(0.9, random_choice(translate_rel(0,0.453172), translate_rel(0,-0.453172))) random_apply(0.7, "
           "random_choice(translate_rel(0,0.453172), translate_rel(0,-0.453172)))),"
           "(random_apply(0.9, autocontrast) random_apply(0.8, solarize(170))),"
           "(random_apply(0.8, equalize) random_apply(0.1, invert)),"
           "(random_apply(0.7, random_choice(translate_rel(0,0.453172), translate_rel(0,-0.453172))) random_apply(0.9, "
           "autocontrast)))";
}
static const char *recio__autoaugment_svhn(void) {
    return "random_subpolicy("
           "(random_apply(0.9, random_choice(shear_x(0.133333), shear_x(-0.133333))) random_apply(0.2, invert)),"
           "(random_apply(0.9, random_choice(shear_y(0.266667), shear_y(-0.266667))) random_apply(0.7, invert)),"
           "(random_apply(0.6, equalize) random_apply(0.6, solarize(85))),"
           "(random_apply(0.9, invert) random_apply(0.6, equalize)),"
           "(random_apply(0.6, equalize) random_apply(0.9, random_choice(rotate(10), rotate(-10)))),"
           "(random_apply(0.9, random_choice(shear_x(0.133333), shear_x(-0.133333))) random_apply(0.8, autocontrast)),"
           "(random_apply(0.9, random_choice(shear_y(0.266667), shear_y(-0.266667))) random_apply(0.4, invert)),"
           "(random_apply(0.9, random_choice(shear_y(0.166667), shear_y(-0.166667))) random_apply(0.2, solarize(85))),"
           "(random_apply(0.9, invert) random_apply(0.8, autocontrast)),"
           "(random_apply(0.6, equalize) random_apply(0.9, random_choice(rotate(10), rotate(-10)))),"
           "(random_apply(0.9, random_choice(shear_x(0.133333), shear_x(-0.133333))) random_apply(0.3, solarize(170))),"
           "(random_apply(0.8, random_choice(shear_y(0.266667), shear_y(-0.266667))) random_apply(0.7, invert)),"
           "(random_apply(0.9, equalize) random_apply(0.6, random_choice(translate_rel(0,0.302115), "
           "translate_rel(0,-0.302115)))),"
           "(random_apply(0.9, invert) random_apply(0.6, equalize)),"
           "(random_apply(0.3, random_choice(contrast(1.3), contrast(0.7))) random_apply(0.8, "
           "random_choice(rotate(13.3333), rotate(-13.3333)))),"
           "(random_apply(0.8, invert) random_apply(0, random_choice(translate_rel(0,0.100705), "
           "translate_rel(0,-0.100705)))),"
           "(random_apply(0.7, random_choice(shear_y(0.2), shear_y(-0.2))) random_apply(0.4, solarize(28.3333))),"
           "(random_apply(0.6, invert) random_apply(0.8, random_choice(rotate(13.3333), rotate(-13.3333)))),"
           "(random_apply(0.3, random_choice(shear_y(0.233333), shear_y(-0.233333))) random_apply(0.9, "
           "random_choice(translate_rel(0.151057,0), translate_rel(-0.151057,0)))),"
           "(random_apply(0.1, random_choice(shear_x(0.2), shear_x(-0.2))) random_apply(0.6, invert)),"
           "(random_apply(0.7, solarize(198.333)) random_apply(0.6, random_choice(translate_rel(0,0.352467), "
           "translate_rel(0,-0.352467)))),"
           "(random_apply(0.8, random_choice(shear_y(0.133333), shear_y(-0.133333))) random_apply(0.8, invert)),"
           "(random_apply(0.7, random_choice(shear_x(0.3), shear_x(-0.3))) random_apply(0.8, "
           "random_choice(translate_rel(0,0.151057), translate_rel(0,-0.151057)))),"
           "(random_apply(0.8, random_choice(shear_y(0.166667), shear_y(-0.166667))) random_apply(0.7, autocontrast)),"
           "(random_apply(0.7, random_choice(shear_x(0.0666667), shear_x(-0.0666667))) random_apply(0.1, invert)))";
}

/* A spec being written: the bytes that fit in cap, the length counted in full (as snprintf). */
typedef struct recio__out_text {
    char *d;
    size_t cap, at;
} recio__out_text;
static void recio__put(recio__out_text *o, const char *s) {
    for (; *s; s++, o->at++)
        if (o->at + 1 < o->cap) o->d[o->at] = *s;
    if (o->cap) o->d[o->at < o->cap ? o->at : o->cap - 1] = 0;
}
/* v as printf's %g writes it (6 significant digits, trailing zeros dropped; |v| in [1e-4, 1e6) or
   0), without printf: the C library's would follow the user's locale (a decimal comma). */
static void recio__put_g(recio__out_text *o, double v) {
    char s[32];
    int e, i, n = 6, k = 0;
    uint64_t m;
    if (signbit(v)) s[k++] = '-', v = -v;
    if (v == 0) {
        s[k++] = '0', s[k] = 0;
        recio__put(o, s);
        return;
    }
    e = (int)floor(log10(v));
    m = (uint64_t)floor(v * pow(10.0, 5 - e) + 0.5);
    if (m >= 1000000) m = (m + 5) / 10, e++;
    if (m < 100000) m = (uint64_t)floor(v * pow(10.0, 6 - e) + 0.5), e--;
    {
        char dig[7];
        for (i = 5; i >= 0; i--, m /= 10) dig[i] = (char)('0' + m % 10);
        while (n > 1 && dig[n - 1] == '0' && n > e + 1) n--;
        if (e < 0) {
            s[k++] = '0', s[k++] = '.';
            for (i = 0; i < -e - 1; i++) s[k++] = '0';
            for (i = 0; i < n; i++) s[k++] = dig[i];
        } else {
            for (i = 0; i <= e; i++) s[k++] = i < 6 ? dig[i] : '0';
            if (n > e + 1) s[k++] = '.';
            for (i = e + 1; i < n; i++) s[k++] = dig[i];
        }
    }
    s[k] = 0;
    recio__put(o, s);
}

/* torch.linspace(a, b, n)[i] in float, as torch computes it (from the nearer end). */
static float recio__linspace(float a, float b, int n, int i) {
    float st = (b - a) / (float)(n - 1);
    return i < n / 2 ? a + st * (float)i : b - st * (float)(n - 1 - i);
}

/* The 14 ops of RandAugment and TrivialAugmentWide in torchvision's order (Identity, ShearX, ShearY,
   TranslateX, TranslateY, Rotate, Brightness, Color, Contrast, Sharpness, Posterize, Solarize,
   AutoContrast, Equalize) and op k's magnitude at bin i of 31: RandAugment's ranges, or
   TrivialAugmentWide's (wide). Translations: RandAugment's of a 331-pixel image as a fraction of
   it (torchvision's 150/331 * size), TrivialAugment's in pixels. */
#define RECIO__AUG_OPS 14
#define RECIO__AUG_BINS 31
static float recio__aug_mag(int k, int i, int wide) {
    static const float ra[RECIO__AUG_OPS] = {0, 0.3f, 0.3f, 150, 150, 30, 0.9f, 0.9f, 0.9f, 0.9f, 0, 0, 0, 0};
    static const float ta[RECIO__AUG_OPS] = {0, 0.99f, 0.99f, 32, 32, 135, 0.99f, 0.99f, 0.99f, 0.99f, 0, 0, 0, 0};
    if (k == 10) return (float)(8 - (int)rintf((float)i / ((float)(RECIO__AUG_BINS - 1) / (wide ? 6.0f : 4.0f))));
    if (k == 11) return recio__linspace(255.0f, 0.0f, RECIO__AUG_BINS, i);
    if ((k == 3 || k == 4) && !wide)
        return (float)(recio__linspace(0, (float)(150.0 / 331.0 * 331.0), RECIO__AUG_BINS, i) / 331.0);
    return recio__linspace(0, wide ? ta[k] : ra[k], RECIO__AUG_BINS, i);
}
static void recio__aug_op(recio__out_text *o, int k, float m, int wide) {
    static const char *const name[RECIO__AUG_OPS] = {
        "identity",    "shear_x(",  "shear_y(",   "",           "",          "rotate(",      "brightness(",
        "saturation(", "contrast(", "sharpness(", "posterize(", "solarize(", "autocontrast", "equalize"};
    recio__put(o, k == 3 || k == 4 ? (wide ? "translate(" : "translate_rel(") : name[k]);
    if (k == 4) recio__put(o, "0,");
    if (k >= 6 && k <= 9) recio__put_g(o, (float)(1.0 + (double)m));
    else if (k == 10) recio__put_g(o, (int)m);
    else if (k > 0 && k < 12) recio__put_g(o, m);
    if (k == 3) recio__put(o, ",0");
    if (k > 0 && k < 12) recio__put(o, ")");
}
/* One draw of either: an op uniformly, then a bin of it (bins = the one bin m, or all 31) and for
   signed ops (1..9) a sign, each equally likely: nested random_choice. */
static void recio__aug_choice(recio__out_text *o, int wide, int m) {
    int k, i;
    recio__put(o, "random_choice(");
    for (k = 0; k < RECIO__AUG_OPS; k++) {
        int signs = k >= 1 && k <= 9, many = (k >= 1 && k <= 11) && (m < 0 || signs);
        if (k) recio__put(o, ", ");
        if (k == 0 || k >= 12) {
            recio__aug_op(o, k, 0, wide);
            continue;
        }
        if (many) recio__put(o, "random_choice(");
        for (i = m < 0 ? 0 : m; i <= (m < 0 ? RECIO__AUG_BINS - 1 : m); i++) {
            float v = recio__aug_mag(k, i, wide);
            if (i > (m < 0 ? 0 : m)) recio__put(o, ", ");
            recio__aug_op(o, k, v, wide);
            if (signs) recio__put(o, ", "), recio__aug_op(o, k, -v, wide);
        }
        if (many) recio__put(o, ")");
    }
    recio__put(o, ")");
}
static size_t recio__randaugment_spec(char *buf, size_t cap, int n, int m) {
    recio__out_text o;
    int i;
    o.d = buf, o.cap = buf ? cap : 0, o.at = 0;
    if (o.cap) buf[0] = 0;
    m = m < 0 ? 0 : m > RECIO__AUG_BINS - 1 ? RECIO__AUG_BINS - 1 : m;
    for (i = 0; i < n; i++) {
        if (i) recio__put(&o, " ");
        recio__aug_choice(&o, 0, m);
    }
    return o.at;
}
static size_t recio__trivialaugment_spec(char *buf, size_t cap) {
    recio__out_text o;
    o.d = buf, o.cap = buf ? cap : 0, o.at = 0;
    if (o.cap) buf[0] = 0;
    recio__aug_choice(&o, 1, -1);
    return o.at;
}

/* ---- boxes and a mask riding along (recio_apply_desc) ---- */

/* What is wrong with a float that must be a finite number; NULL when nothing. */
static const char *recio__not_finite(float v) {
    return v != v ? "is NaN" : v > FLT_MAX || v < -FLT_MAX ? "is infinite" : NULL;
}

RECIODEF recio_err recio_boxes_check(const float *boxes, int count, int stride, int *bad, char *why) {
    static const char *const names[5] = {"class", "xmin", "ymin", "xmax", "ymax"};
    const size_t cap = RECIO_ERRMSG_SIZE;
    int i, k;
    if (bad) *bad = -1;
    if (why) why[0] = 0;
    if (!stride) stride = 5;
    if (count < 0 || stride < 5 || (count && !boxes)) {
        if (why)
            recio__fmt(why, cap,
                       count < 0    ? "count %d < 0"
                       : stride < 5 ? "stride %d < 5"
                                    : "no boxes (count %d)",
                       count < 0    ? count
                       : stride < 5 ? stride
                                    : count);
        return RECIO_ERR_ARG;
    }
    for (i = 0; i < count; i++) {
        const float *o = boxes + (size_t)i * (size_t)stride;
        const char *what = NULL;
        for (k = 0; k < 5 && !(what = recio__not_finite(o[k])); k++) {}
        if (what) {
            if (why) recio__fmt(why, cap, "object %d: %s %s", i, names[k], what);
        } else if (o[1] > o[3] || o[2] > o[4]) {
            if (why)
                recio__fmt(why, cap, "object %d: %s (an inverted box)", i, o[1] > o[3] ? "xmin > xmax" : "ymin > ymax");
        } else {
            continue;
        }
        if (bad) *bad = i;
        return RECIO_ERR_ARG;
    }
    return RECIO_OK;
}

/* A moved box's bounding box [lo, hi]: dropped when its centre is not inside the w x h image,
   else clipped to it. */
static void recio__box_keep(double *b, const double lo[2], const double hi[2], int w, int h) {
    double cx = (lo[0] + hi[0]) * 0.5, cy = (lo[1] + hi[1]) * 0.5;
    if (!(cx > 0 && cx < w && cy > 0 && cy < h)) {
        b[4] = 0;
        return;
    }
    b[0] = lo[0] < 0 ? 0 : lo[0], b[1] = lo[1] < 0 ? 0 : lo[1];
    b[2] = hi[0] > w ? w : hi[0], b[3] = hi[1] > h ? h : hi[1];
}

/* Each kept box's corners through the inverse of the step's map (centres are edges - 0.5). */
static void recio__boxes_step(recio__tgt *tg, const recio__geo *g) {
    const double *m = g->m;
    double det = m[0] * m[4] - m[1] * m[3], f[6];
    int i, k;
    f[0] = m[4] / det, f[1] = -m[1] / det, f[3] = -m[3] / det, f[4] = m[0] / det;
    f[2] = -(f[0] * m[2] + f[1] * m[5]), f[5] = -(f[3] * m[2] + f[4] * m[5]);
    for (i = 0; i < tg->n; i++) {
        double *b = tg->b + 5 * (size_t)i, lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
        if (b[4] == 0) continue;
        for (k = 0; k < 4; k++) {
            double px = b[k & 1 ? 2 : 0] - 0.5, py = b[k & 2 ? 3 : 1] - 0.5;
            double q[2];
            q[0] = f[0] * px + f[1] * py + f[2] + 0.5, q[1] = f[3] * px + f[4] * py + f[5] + 0.5;
            if (q[0] < lo[0]) lo[0] = q[0];
            if (q[0] > hi[0]) hi[0] = q[0];
            if (q[1] < lo[1]) lo[1] = q[1];
            if (q[1] > hi[1]) hi[1] = q[1];
        }
        recio__box_keep(b, lo, hi, g->w, g->h);
    }
}

/* The mask pixel under output pixel (x, y)'s centre: for a resize in integers, floor((x + 0.5) *
   sw / w) (no rounding tie can go either way), else the map rounded (exact for the integer maps of
   crops, flips and pad). */
static void recio__mask_src(const recio__geo *g, int x, int y, int *sx, int *sy) {
    double fx, fy;
    if (g->kind == RECIO__GEO_RESIZE) {
        *sx = (int)((2 * (int64_t)x + 1) * g->sw / (2 * (int64_t)g->w));
        *sy = (int)((2 * (int64_t)y + 1) * g->sh / (2 * (int64_t)g->h));
        return;
    }
    fx = floor(g->m[0] * x + g->m[1] * y + g->m[2] + 0.5);
    fy = floor(g->m[3] * x + g->m[4] * y + g->m[5] + 0.5);
    *sx = fx < -1 ? -1 : fx > g->sw ? g->sw : (int)fx; /* far outside is outside */
    *sy = fy < -1 ? -1 : fy > g->sh ? g->sh : (int)fy;
}

static recio_err recio__mask_step(recio__tgt *tg, const recio__geo *g) {
    recio_image o;
    int x, y, sx, sy;
    recio_err e;
    if ((e = recio_image_alloc(&o, g->w, g->h, 1, RECIO_U8, RECIO_HWC, tg->alloc)) != RECIO_OK) return e;
    for (y = 0; y < g->h; y++) {
        unsigned char *d = recio__at(&o, 0, y, 0);
        for (x = 0; x < g->w; x++) {
            recio__mask_src(g, x, y, &sx, &sy);
            d[x] = sx >= 0 && sy >= 0 && sx < g->sw && sy < g->sh ? *recio__at(&tg->mask, sx, sy, 0) : tg->fill;
        }
    }
    recio_image_free(&tg->mask);
    tg->mask = o;
    return RECIO_OK;
}

static recio_err recio__tgt_step(recio__tgt *tg, const recio__geo *g) {
    RECIO_ASSERT(g->sw == tg->w && g->sh == tg->h); /* every size change is a step */
    recio__boxes_step(tg, g);
    tg->w = g->w, tg->h = g->h;
    return tg->mask.data ? recio__mask_step(tg, g) : RECIO_OK;
}

/* Boxes and mask of d for a w x h input. */
/* Why the desc's boxes or mask cannot ride along a w x h input; NULL when they can. */
static const char *recio__tgt_bad(const recio_apply_desc *d, int w, int h) {
    const recio_image *m = d->mask;
    if (d->count < 0) return "boxes: count < 0";
    if (d->stride && d->stride < 5) return "boxes: stride < 5 (class, xmin, ymin, xmax, ymax at least)";
    if (d->mask_fill < -1 || d->mask_fill > 255) return "mask_fill: a label 1..255, 0 (255) or RECIO_MASK_FILL_ZERO";
    if (d->count && (!d->boxes || !d->boxes_out || !d->count_out))
        return "boxes: boxes, boxes_out and count_out go together";
    if (m && (!recio__is_u8hwc(m) || m->channels != 1)) return "mask: not u8, 1 channel, HWC";
    if (m && (m->width != w || m->height != h)) return "mask: not the input's size";
    if (m && !d->mask_out) return "mask: no mask_out";
    return NULL;
}

static recio_err recio__tgt_init(recio__tgt *tg, const recio_transform *t, int w, int h, const recio_apply_desc *d,
                                 char *errmsg, size_t cap) {
    int stride = d->stride ? d->stride : 5, i;
    const recio_image *m = d->mask;
    const char *bad = recio__tgt_bad(d, w, h);
    char why[RECIO_ERRMSG_SIZE];
    memset(tg, 0, sizeof *tg);
    tg->alloc = &t->alloc, tg->w = w, tg->h = h;
    if (bad) {
        if (errmsg && m && strcmp(bad, "mask: not the input's size") == 0)
            recio__fmt(errmsg, cap, "transform: %s (mask %dx%d, input %dx%d)", bad, m->width, m->height, w, h);
        else if (errmsg) recio__fmt(errmsg, cap, "transform: %s", bad);
        return RECIO_ERR_ARG;
    }
    tg->fill = recio__mask_fill_value(d->mask_fill);
    if (m) tg->mask = *m, tg->mask.owned = NULL;
    if (!d->count) return RECIO_OK;
    if (recio_boxes_check(d->boxes, d->count, stride, NULL, why) != RECIO_OK) {
        if (errmsg) recio__fmt(errmsg, cap, "transform: boxes: %s", why);
        return RECIO_ERR_ARG;
    }
    if ((size_t)d->count > SIZE_MAX / (5 * sizeof(double))) return RECIO_ERR_NOMEM;
    if (!(tg->b = (double *)recio__malloc(tg->alloc, (size_t)d->count * 5 * sizeof(double)))) return RECIO_ERR_NOMEM;
    for (i = 0; i < d->count; i++) { /* normalised to pixels, then kept as after any op: the same whatever the chain */
        const float *o = d->boxes + (size_t)i * (size_t)stride;
        double *b = tg->b + 5 * (size_t)i, lo[2], hi[2];
        lo[0] = (double)o[1] * w, lo[1] = (double)o[2] * h, hi[0] = (double)o[3] * w, hi[1] = (double)o[4] * h,
        b[4] = 1;
        recio__box_keep(b, lo, hi, w, h);
    }
    tg->n = d->count;
    return RECIO_OK;
}

/* The kept objects, first and in order (in place when boxes_out is boxes), normalised to the output;
   the mask into mask_out. */
static recio_err recio__tgt_finish(recio__tgt *tg, const recio_apply_desc *d) {
    size_t stride = (size_t)(d->stride ? d->stride : 5);
    int i, k = 0;
    for (i = 0; i < tg->n; i++) {
        const double *b = tg->b + 5 * (size_t)i;
        float *o = d->boxes_out + (size_t)k * stride;
        if (b[4] == 0) continue;
        memmove(o, d->boxes + (size_t)i * stride, stride * sizeof *o);
        o[1] = (float)(b[0] / tg->w), o[2] = (float)(b[1] / tg->h), o[3] = (float)(b[2] / tg->w),
        o[4] = (float)(b[3] / tg->h);
        k++;
    }
    if (d->count_out) *d->count_out = k;
    return tg->mask.data ? recio_image_copy(&tg->mask, d->mask_out) : RECIO_OK;
}

static void recio__tgt_free(recio__tgt *tg) {
    recio_image_free(&tg->mask);
    if (tg->b) recio__free(tg->alloc, tg->b);
}

/* ---- running a chain ---- */

static recio_err recio__exec_list(recio__exec *x, int node) {
    recio_err e;
    for (; node >= 0; node = x->t->nodes[node].next) {
        if ((e = recio__exec_op(x, &x->t->nodes[node])) != RECIO_OK) return e;
        if (!x->t->fuse && (e = recio__exec_flush(x, NULL)) != RECIO_OK) return e;
    }
    return RECIO_OK;
}

/* Run the chain from `node` on the executor's state and write the result into out. */
static recio_err recio__exec_run(recio__exec *x, int node, recio_image *out) {
    recio_image shape;
    recio_err e;
    int had = out->data != NULL;
    e = recio__exec_list(x, node);
    if (e == RECIO_OK) {
        shape = recio__exec_shape(x);
        e = recio__out(out, shape.width, shape.height, shape.channels, shape.dtype, shape.layout);
        if (e == RECIO_OK) e = recio__exec_flush(x, out); /* the last pass writes straight into out */
        if (e != RECIO_OK && !had) recio_image_free(out);
    }
    if (x->asked) *x->asked = x->a.asked;
    recio__arena_free(&x->a);
    return e == RECIO_ERR_NOMEM && x->a.short_ ? RECIO_ERR_SMALL : e;
}

/* Where a run's temporaries go: the caller's block, fixed (RECIO_ERR_SMALL when too small) or
   followed by heap blocks when grow is set (the iterator, which then enlarges its block to
   `asked` so the next record fits); NULL p = heap only. */
typedef struct recio__scratch {
    void *p;
    size_t n;
    int grow;
    size_t *asked;
} recio__scratch;

/* How encoded input is decoded (recio_apply_desc's channels and full_scale; the iterator's channels). */
typedef struct recio__enc {
    int channels;   /* 1, 3, 4; 0 = as stored */
    int full_scale; /* never DCT-scale */
} recio__enc;

static void recio__exec_init(recio__exec *x, const recio_transform *t, const recio_image *in, uint64_t seed,
                             const recio__scratch *sc) {
    memset(x, 0, sizeof *x);
    x->t = t;
    x->a.buf = (unsigned char *)sc->p;
    x->a.cap = sc->p ? sc->n : 0;
    x->a.growable = sc->p == NULL || sc->grow;
    x->a.alloc = t->alloc;
    x->asked = sc->asked;
    x->rng.state = seed;
    x->cur = *in;
    x->cur.owned = NULL;
    recio__exec_reset(x);
}

/* "transform: " and what the op said, or the code's words; words already there (a bad box) stay. */
static void recio__exec_msg(const recio__exec *x, recio_err e, char *errmsg, size_t cap) {
    if (errmsg && !errmsg[0]) recio__fmt(errmsg, cap, "transform: %s", x->why[0] ? x->why : recio_strerror(e));
}

static recio_err recio__apply_in(const recio_transform *t, const recio_image *in, recio_image *out, uint64_t seed,
                                 const recio__scratch *sc, char *errmsg, size_t cap) {
    recio__exec x;
    recio_err e;
    if (!t || !recio__valid(in) || !out) {
        if (errmsg)
            recio__fmt(errmsg, cap, "transform: %s",
                       !t     ? "no transform"
                       : !out ? "no output image"
                              : "not a valid input image");
        return RECIO_ERR_ARG;
    }
    recio__exec_init(&x, t, in, seed, sc);
    if ((e = recio__exec_run(&x, t->first, out)) != RECIO_OK) recio__exec_msg(&x, e, errmsg, cap);
    return e;
}

RECIODEF recio_err recio_transform_apply(const recio_transform *t, const recio_image *in, recio_image *out,
                                         uint64_t seed) {
    recio__scratch sc;
    memset(&sc, 0, sizeof sc);
    return recio__apply_in(t, in, out, seed, &sc, NULL, 0);
}

/* Run the chain from node with the targets riding along, then write them out. */
static recio_err recio__tgt_run(recio__exec *x, int node, recio_image *out, recio__tgt *tg, const recio_apply_desc *d) {
    int had = out->data != NULL;
    recio_err e;
    x->tg = tg;
    if ((e = recio__exec_run(x, node, out)) == RECIO_OK) {
        RECIO_ASSERT(tg->w == out->width && tg->h == out->height);
        if ((e = recio__tgt_finish(tg, d)) != RECIO_OK && !had) recio_image_free(out);
    }
    return e;
}

/* The chain on an image with the desc's boxes and mask (none: a plain run), the executor's words in errmsg. */
static recio_err recio__apply_tgt(const recio_transform *t, const recio_image *in, recio_image *out, uint64_t seed,
                                  const recio__scratch *sc, const recio_apply_desc *d, char *errmsg, size_t cap) {
    recio__tgt tg;
    recio__exec x;
    recio_err e;
    if (!d) return recio__apply_in(t, in, out, seed, sc, errmsg, cap);
    if (!t || !recio__valid(in) || !out) return recio__apply_in(t, in, out, seed, sc, errmsg, cap); /* its words */
    if ((e = recio__tgt_init(&tg, t, in->width, in->height, d, errmsg, cap)) == RECIO_OK) {
        recio__exec_init(&x, t, in, seed, sc);
        if ((e = recio__tgt_run(&x, t->first, out, &tg, d)) != RECIO_OK) recio__exec_msg(&x, e, errmsg, cap);
    }
    recio__tgt_free(&tg);
    return e;
}

/* A run out of the caller's fixed scratch: say how much a w x h x c input needs. */
static void recio__scratch_why(const recio_transform *t, const recio__scratch *sc, int w, int h, int c, char *errmsg,
                               size_t cap) {
    recio_transform_info ti;
    if (!errmsg || !sc->p || sc->grow) return;
    recio_transform_query(t, w, h, c, &ti); /* the bound is filled whatever the shape */
    if (ti.scratch_size > sc->n)
        recio__fmt(errmsg, cap, "transform: scratch too small: need %U bytes, have %U", (uint64_t)ti.scratch_size,
                   (uint64_t)sc->n);
}

/* ---- decode and apply: only the part of a JPEG that the chain reads ---- */
#ifdef RECIO_TURBOJPEG

/* The planned ops' steps on the boxes and mask: their own geom functions on the same draws, at the
   full w x h size, so they move exactly as on the plain path whatever the window and DCT scale. */
static recio_err recio__tgt_replay(const recio_transform *t, int stop, uint64_t seed, int w, int h, recio__tgt *tg) {
    recio__exec x;
    recio__geo g[2];
    int i, j, k;
    recio_err e;
    memset(&x, 0, sizeof x);
    x.t = t;
    x.rng.state = seed;
    for (i = t->first; i >= 0 && i != stop; i = t->nodes[i].next) {
        const recio__node *n = &t->nodes[i];
        if (!n->op->geom) continue; /* area */
        if ((k = n->op->geom(&x, n, w, h, g)) < 0) return RECIO_ERR_ARG;
        for (j = 0; j < k; j++, w = tg->w, h = tg->h)
            if ((e = recio__tgt_step(tg, &g[j])) != RECIO_OK) return e;
    }
    return RECIO_OK;
}

/* The executor's run after the plan, with the targets when asked for. */
static recio_err recio__jpeg_run(recio__exec *x, int next, recio_image *out, uint64_t seed, int w, int h,
                                 const recio_apply_desc *d, char *errmsg, size_t cap) {
    recio__tgt tg;
    recio_err e;
    if (!d) return recio__exec_run(x, next, out);
    if ((e = recio__tgt_init(&tg, x->t, w, h, d, errmsg, cap)) == RECIO_OK &&
        (e = recio__tgt_replay(x->t, next, seed, w, h, &tg)) == RECIO_OK)
        e = recio__tgt_run(x, next, out, &tg, d);
    else recio__arena_free(&x->a);
    recio__tgt_free(&tg);
    return e;
}

/* The plan of no geometry: the whole w x h image, not resized, the chain from `next` on. */
static void recio__plan_whole(recio__plan *p, int w, int h, int next) {
    memset(p, 0, sizeof *p);
    p->r[2] = p->o[2] = p->dw = w;
    p->r[3] = p->o[3] = p->dh = h;
    p->next = next;
}

/* Each op plans itself until one cannot (no plan function, or a second resize); 0 when an op would
   fail (the plain path then reports it). */
static int recio__plan_make(const recio_transform *t, int w, int h, recio_rng *g, recio__plan *p) {
    int i, r = 1;
    recio__plan_whole(p, w, h, t->first);
    for (i = t->first; i >= 0; i = t->nodes[i].next) {
        const recio__node *n = &t->nodes[i];
        if (!n->op->plan || (r = n->op->plan(n, g, p)) <= 0) break;
    }
    if (r < 0) return 0;
    p->next = i;
    if (!p->resized) p->dw = p->o[2] = p->r[2], p->dh = p->o[3] = p->r[3];
    return 1;
}

/* Source interval [lo, hi) that outputs [o, o + n) of a resize of sn to dn read: the taps of LINEAR
   and AREA reach at most two pixels past the scaled interval, the wider filters half their taps; one
   more for rounding. */
static void recio__plan_need(int sn, int dn, int o, int n, recio_filter f, int *lo, int *hi) {
    double s = (double)sn / dn;
    int m = f == RECIO_LINEAR || f == RECIO_AREA ? 3 : recio__axis_k(sn, dn, f, 0) / 2 + 3;
    *lo = (int)floor(o * s) - m;
    *hi = (int)ceil((o + n) * s) + m;
    if (*lo < 0) *lo = 0;
    if (*hi > sn) *hi = sn;
}

/* The plan on a JPEG: the strongest DCT scale 1/den that still leaves the source rectangle at least
   the resize's target, the rectangle on that scale, and only its rows and columns that the pass
   reads (plus one pixel: libjpeg-turbo's chroma upsampling differs at a window's own edge). */
static recio_err recio__apply_jpeg(const recio_transform *t, const unsigned char *b, size_t n, recio_image *out,
                                   uint64_t seed, const recio__enc *d, const recio_apply_desc *ap,
                                   const recio__scratch *sc, char *errmsg, size_t cap) {
    recio__jdec j;
    recio__plan p;
    recio__exec x;
    recio_rng g;
    recio_image view;
    int den = 1, W, H, SW, SH, r[4], k, lo[2], hi[2], cx, cy;
    recio_filter pf;
    recio_err e;
    if ((e = recio__jdec_open(&j, b, n, d->channels, errmsg, cap)) != RECIO_OK) return e;
    W = (int)j.d.image_width, H = (int)j.d.image_height;
    g.state = seed;
    if (!recio__plan_make(t, W, H, &g, &p)) { /* decode it all; the plain chain reports the failing op */
        recio__plan_whole(&p, W, H, t->first);
        g.state = seed;
    }
    while (!d->full_scale && den < 8 && p.r[2] >= p.dw * den * 2 && p.r[3] >= p.dh * den * 2) den *= 2;
    SW = (W + den - 1) / den, SH = (H + den - 1) / den; /* libjpeg-turbo's scaled size */
    for (k = 0; k < 2; k++) {                           /* the rectangle on the 1/den scale, rounded, never empty */
        int a = (2 * p.r[k] + den) / (2 * den), z = (2 * (p.r[k] + p.r[k + 2]) + den) / (2 * den), lim = k ? SH : SW;
        if (z > lim) z = lim;
        if (a > z - 1) a = z - 1;
        r[k] = a, r[k + 2] = z - a;
    }
    pf = recio__filter_for(p.filt, r[2], r[3], p.dw, p.dh); /* AUTO: as the pass will resolve it */
    recio__plan_need(r[2], p.dw, p.o[0], p.o[2], pf, &lo[0], &hi[0]);
    recio__plan_need(r[3], p.dh, p.o[1], p.o[3], pf, &lo[1], &hi[1]);
    cx = r[0] + lo[0] - 1, cy = r[1] + lo[1] - 1;
    if (cx < 0) cx = 0;
    if (cy < 0) cy = 0;
    if ((e = recio__jdec_run(&j, den, &cx, r[0] + hi[0] + 1, cy, r[1] + hi[1] + 1, &t->alloc, errmsg, cap)) != RECIO_OK)
        return e;
    if (recio_image_crop(&j.img, &view, r[0] + lo[0] - cx, r[1] + lo[1] - cy, hi[0] - lo[0], hi[1] - lo[1]) !=
        RECIO_OK) {
        recio_image_free(&j.img); /* a header that lied about its size: fewer pixels than it said */
        if (errmsg) recio__fmt(errmsg, cap, "decode: image smaller than its header says");
        return RECIO_ERR_DECODE;
    }
    recio__exec_init(&x, t, &view, 0, sc);
    x.rng = g; /* the planned ops, as if they had run */
    x.win.sw = r[2], x.win.sh = r[3], x.win.sx0 = lo[0], x.win.sy0 = lo[1];
    x.dw = p.dw, x.dh = p.dh, x.ox = p.o[0], x.oy = p.o[1], x.ow = p.o[2], x.oh = p.o[3];
    x.filt = p.filt;
    if (!p.resized) x.next_filt = p.filt; /* `area` planned, its resize not: it still applies */
    e = recio__jpeg_run(&x, p.next, out, seed, W, H, ap, errmsg, cap);
    if (e != RECIO_OK) recio__exec_msg(&x, e, errmsg, cap);
    if (e == RECIO_ERR_SMALL) recio__scratch_why(t, sc, W, H, j.img.channels, errmsg, cap);
    recio_image_free(&j.img);
    return e;
}
#endif

static recio_err recio__apply_encoded(const recio_transform *t, const void *bytes, size_t n, recio_image *out,
                                      uint64_t seed, const recio__enc *d, const recio_apply_desc *ap,
                                      const recio__scratch *sc, char *errmsg, size_t errmsg_size) {
    recio_image img;
    recio_err e;
    if (errmsg && errmsg_size) errmsg[0] = 0;
    if (t && bytes && !n && out) {
        if (errmsg) recio__fmt(errmsg, errmsg_size, "decode: empty image (0 bytes)");
        return RECIO_ERR_DECODE;
    }
    if (!t || !bytes || !out || !recio__channels_ok(d->channels)) {
        if (errmsg) recio__decode_args_why(0, d->channels, errmsg, errmsg_size);
        return RECIO_ERR_ARG;
    }
#ifdef RECIO_TURBOJPEG
    if (n >= 3 && ((const unsigned char *)bytes)[0] == 0xff && ((const unsigned char *)bytes)[1] == 0xd8) {
        char why[RECIO_ERRMSG_SIZE];
        char *w = errmsg && errmsg_size ? errmsg : why;
        w[0] = 0;
        e = recio__apply_jpeg(t, (const unsigned char *)bytes, n, out, seed, d, ap, sc, w,
                              w == why ? sizeof why : errmsg_size);
        return recio__decode_code(e, w);
    }
#endif
    if ((e = recio__decode(&img, bytes, n, d->channels, 0, errmsg, errmsg_size, &t->alloc)) != RECIO_OK) return e;
    e = recio__apply_tgt(t, &img, out, seed, sc, ap, errmsg, errmsg_size);
    if (e == RECIO_ERR_SMALL) recio__scratch_why(t, sc, img.width, img.height, img.channels, errmsg, errmsg_size);
    recio_image_free(&img);
    return e;
}

/* The desc's input: an image, or encoded bytes (exactly one); words for the wrong mix. */
static recio_err recio__apply_desc_check(const recio_transform *t, const recio_apply_desc *d) {
    const char *bad = NULL;
    if (!t) bad = "no transform";
    else if (!d->out) bad = "no output image (out)";
    else if (d->image && d->bytes) bad = "both an image and encoded bytes: give one";
    else if (!d->image && !d->bytes) bad = "no input: give an image or encoded bytes";
    else if (d->image && !recio__valid(d->image)) bad = "the input image is not a valid image";
    else if (d->scratch_size && !d->scratch) bad = "scratch_size without scratch";
    if (!bad) return RECIO_OK;
    if (d->errmsg) recio__fmt(d->errmsg, RECIO_ERRMSG_SIZE, "transform: %s", bad);
    return RECIO_ERR_ARG;
}

RECIODEF recio_err recio_transform_apply_desc(const recio_transform *t, const recio_apply_desc *d) {
    recio__scratch sc;
    recio__enc enc;
    recio_err e;
    const recio_apply_desc *ap;
    if (!d) return RECIO_ERR_ARG;
    if (d->errmsg) d->errmsg[0] = 0;
    if ((e = recio__apply_desc_check(t, d)) != RECIO_OK) return e;
    memset(&sc, 0, sizeof sc);
    sc.p = d->scratch, sc.n = d->scratch_size;
    ap = d->count || d->mask || d->boxes || d->mask_out || d->boxes_out || d->count_out || d->mask_fill || d->stride
             ? d
             : NULL;
    if (d->image) {
        e = recio__apply_tgt(t, d->image, d->out, d->seed, &sc, ap, d->errmsg, d->errmsg ? RECIO_ERRMSG_SIZE : 0);
        if (e == RECIO_ERR_SMALL)
            recio__scratch_why(t, &sc, d->image->width, d->image->height, d->image->channels, d->errmsg,
                               RECIO_ERRMSG_SIZE);
        return e;
    }
    memset(&enc, 0, sizeof enc);
    enc.channels = d->channels, enc.full_scale = d->full_scale;
    return recio__apply_encoded(t, d->bytes, d->size, d->out, d->seed, &enc, ap, &sc, d->errmsg,
                                d->errmsg ? RECIO_ERRMSG_SIZE : 0);
}

/* ---- shapes without pixels: output shape and a scratch bound, by the ops' own shape rules and
   recio__rs_need, the function the resampler carves its memory by ---- */

static void recio__shp_op(const recio_transform *t, const recio__node *n, recio__shp *s) {
    const recio__opdef *d = n->op;
    recio__shp in = *s;
    size_t img;
    if (d->shape) d->shape(t, n, s);
    if ((d->flags & RECIO__OPF_LIST) || s->bad) return; /* a list counted its ops itself */
    if (s->w <= 0 || s->h <= 0 || (uint64_t)s->w * (uint64_t)s->h > RECIO_MAX_PIXELS ||
        !recio__shape_ok(s->w, s->h, s->c, RECIO_F32)) { /* the executor refuses it too (recio__exec_limit) */
        s->bad = 1;
        return;
    }
    if (d->flags & RECIO__OPF_RESAMPLE) { /* its pass reads at most the whole input */
        s->scratch = recio__shp_add(s->scratch, recio__rs_need(in.w, in.h, s->w, s->h, s->w, s->h, s->c, in.filt));
        s->filt = RECIO_LINEAR;
    }
    /* the images it takes (at most f32) and a copy pass's line */
    img = (size_t)s->w * (size_t)s->h * (size_t)s->c * 4 + RECIO__ALIGN;
    s->scratch = recio__shp_add(s->scratch, (size_t)(d->images ? d->images : 2) * img);
    s->scratch = recio__shp_add(s->scratch, recio__rs_need(s->w, s->h, s->w, s->h, s->w, s->h, s->c, RECIO_LINEAR));
}

static void recio__shp_list(const recio_transform *t, int node, recio__shp *s) {
    for (; node >= 0 && !s->bad; node = t->nodes[node].next) recio__shp_op(t, &t->nodes[node], s);
}

static recio__shp recio__shape_of(const recio_transform *t, int w, int h, int channels) {
    recio__shp s;
    memset(&s, 0, sizeof s);
    s.w = w, s.h = h, s.c = channels, s.short_ = w < h ? w : h;
    s.t = RECIO_U8;
    s.l = RECIO_HWC;
    if (!t || !recio__shape_ok(w, h, channels, RECIO_U8)) s.bad = 1;
    else recio__shp_list(t, t->first, &s);
    return s;
}

static size_t recio__scratch_bound(const recio__shp *s) {
    if (s->bad && s->loose) return SIZE_MAX; /* branches too large to bound together */
    return recio__shp_add(s->scratch, 16 * RECIO__ALIGN);
}

RECIODEF recio_err recio_transform_query(const recio_transform *t, int w, int h, int channels,
                                         recio_transform_info *info) {
    recio__shp s;
    if (!info) return RECIO_ERR_ARG;
    memset(info, 0, sizeof *info);
    if (!t) return RECIO_ERR_ARG;
    s = recio__shape_of(t, w, h, channels);
    info->scratch_size = recio__scratch_bound(&s);
    if (s.bad || s.varies) return RECIO_ERR_ARG;
    info->shape = recio__image_shape(s.w, s.h, s.c, s.t, s.l);
    return RECIO_OK;
}

#endif /* RECIO_NO_IMAGE */

/* ---- 7. PREFETCHER: implementation ------------------------------------------------------------- */

#ifdef RECIO_THREADS

/* A slot is FREE (producers may claim it), BUSY (a callback fills it), READY (waits for the
   consumer) or HELD (the consumer has it). Slots are claimed in item order, so at most `depth`
   items are in flight and memory stays at depth slots whatever the dataset size. */
enum { RECIO__PF_FREE, RECIO__PF_BUSY, RECIO__PF_READY, RECIO__PF_HELD };

typedef struct recio__pf_slot {
    recio_prefetch_slot pub; /* first member: the user's pointer converts back */
    const recio_allocator *alloc;
    int state;
    uint64_t gen; /* reset generation the content belongs to */
    recio_err err;
} recio__pf_slot;

typedef struct recio__pf_thread {
    recio_prefetch *p;
    unsigned worker;
    recio__thread tid;
} recio__pf_thread;

struct recio_prefetch {
    recio_prefetch_desc d;
    recio__mutex mu;
    recio__cond cv_prod; /* producers: a free slot, the fetch turn, a reset, stop */
    recio__cond cv_cons; /* consumer: a ready item, the end of the epoch */
    recio__pf_slot *slots;
    recio__pf_thread *threads;
    unsigned started;
    uint64_t gen, epoch, claim, want;
    int fetching; /* a fetch or begin runs: they are serialised */
    int begun;    /* begin has run for this generation */
    int done;     /* no item `done_seq` in this generation: done_err says why */
    uint64_t done_seq;
    recio_err done_err, sticky;
    int stop;
    char done_msg[RECIO_ERRMSG_SIZE];
    char errmsg[RECIO_ERRMSG_SIZE];
};

static void recio__pf_copymsg(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n >= RECIO_ERRMSG_SIZE) n = RECIO_ERRMSG_SIZE - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The epoch stops at item `seq` because of e (RECIO_END or an error). Called with the lock held. */
static void recio__pf_finish(recio_prefetch *p, uint64_t seq, recio_err e, const char *msg) {
    p->done = 1;
    p->done_seq = seq;
    p->done_err = e;
    recio__pf_copymsg(p->done_msg, e < 0 && !msg[0] ? recio_strerror(e) : msg);
    recio__cond_broadcast(&p->cv_cons);
}

/* Run begin for the current generation; called and returns with the lock held. */
static void recio__pf_begin(recio_prefetch *p) {
    char msg[RECIO_ERRMSG_SIZE];
    uint64_t gen = p->gen, epoch = p->epoch;
    recio_err e = RECIO_OK;
    msg[0] = 0;
    p->fetching = 1;
    recio__mutex_unlock(&p->mu);
    if (p->d.begin) e = p->d.begin(p->d.user, epoch, msg);
    recio__mutex_lock(&p->mu);
    p->fetching = 0;
    recio__cond_broadcast(&p->cv_prod);
    if (gen != p->gen) return;
    p->begun = 1;
    if (e != RECIO_OK) recio__pf_finish(p, p->claim, e == RECIO_END ? RECIO_END : e, msg);
}

/* Drop a slot whose generation was reset away while its callback ran. */
static int recio__pf_stale(recio_prefetch *p, recio__pf_slot *s) {
    if (s->gen == p->gen) return 0;
    s->state = RECIO__PF_FREE;
    recio__cond_broadcast(&p->cv_prod);
    return 1;
}

/* Fetch (in turn) then work (in parallel) one item into s; called and returns with the lock held. */
static void recio__pf_produce(recio_prefetch *p, recio__pf_slot *s, unsigned worker) {
    recio_err e;
    s->state = RECIO__PF_BUSY;
    s->gen = p->gen;
    s->err = RECIO_OK;
    s->pub.seq = p->claim++;
    s->pub.epoch = p->epoch;
    s->pub.size = 0;
    s->pub.tag = 0;
    s->pub.errmsg[0] = 0;
    p->fetching = 1;
    recio__mutex_unlock(&p->mu);
    e = p->d.fetch(p->d.user, &s->pub, worker);
    recio__mutex_lock(&p->mu);
    p->fetching = 0;
    recio__cond_broadcast(&p->cv_prod);
    if (recio__pf_stale(p, s)) return;
    if (e != RECIO_OK) {
        s->state = RECIO__PF_FREE;
        recio__pf_finish(p, s->pub.seq, e, s->pub.errmsg);
        return;
    }
    if (p->d.work) {
        recio__mutex_unlock(&p->mu);
        e = p->d.work(p->d.user, &s->pub, worker);
        recio__mutex_lock(&p->mu);
        if (recio__pf_stale(p, s)) return;
        s->err = e == RECIO_END ? RECIO_ERR_ARG : e; /* work has no "end": that is a bug in it */
    }
    s->state = RECIO__PF_READY;
    recio__cond_broadcast(&p->cv_cons);
}

static recio__pf_slot *recio__pf_find(recio_prefetch *p, int state) {
    unsigned i;
    for (i = 0; i < p->d.depth; i++)
        if (p->slots[i].state == state) return &p->slots[i];
    return NULL;
}

static void recio__pf_main(void *arg) {
    recio__pf_thread *t = (recio__pf_thread *)arg;
    recio_prefetch *p = t->p;
    recio__mutex_lock(&p->mu);
    while (!p->stop) {
        recio__pf_slot *s = NULL;
        if (!p->fetching && !p->done) {
            if (!p->begun) {
                recio__pf_begin(p);
                continue;
            }
            s = recio__pf_find(p, RECIO__PF_FREE);
        }
        if (s) recio__pf_produce(p, s, t->worker);
        else recio__cond_wait(&p->cv_prod, &p->mu);
    }
    recio__mutex_unlock(&p->mu);
}

static void recio__pf_stop(recio_prefetch *p) {
    unsigned i;
    recio__mutex_lock(&p->mu);
    p->stop = 1;
    recio__cond_broadcast(&p->cv_prod);
    recio__cond_broadcast(&p->cv_cons);
    recio__mutex_unlock(&p->mu);
    for (i = 0; i < p->started; i++) recio__thread_join(&p->threads[i].tid);
    p->started = 0;
}

RECIODEF void recio_prefetch_destroy(recio_prefetch *p) {
    unsigned i;
    if (!p) return;
    recio__pf_stop(p);
    recio__cond_destroy(&p->cv_prod);
    recio__cond_destroy(&p->cv_cons);
    recio__mutex_destroy(&p->mu);
    for (i = 0; p->slots && i < p->d.depth; i++) recio__free(&p->d.alloc, p->slots[i].pub.data);
    recio__free(&p->d.alloc, p->slots);
    recio__free(&p->d.alloc, p->threads);
    recio__free(&p->d.alloc, p);
}

/* The slots are zeroed before anything else can fail: destroy frees each slot's data. */
static recio_err recio__pf_alloc(recio_prefetch *p) {
    unsigned i;
    p->slots = (recio__pf_slot *)recio__malloc(&p->d.alloc, sizeof *p->slots * p->d.depth);
    if (!p->slots) return RECIO_ERR_NOMEM;
    memset(p->slots, 0, sizeof *p->slots * p->d.depth);
    p->threads = (recio__pf_thread *)recio__malloc(&p->d.alloc, sizeof *p->threads * p->d.threads);
    if (!p->threads) return RECIO_ERR_NOMEM;
    for (i = 0; i < p->d.depth; i++) {
        recio__pf_slot *s = &p->slots[i];
        s->alloc = &p->d.alloc;
        s->pub.index = i;
        if (p->d.slot_size && recio_prefetch_slot_reserve(&s->pub, p->d.slot_size)) return RECIO_ERR_NOMEM;
    }
    return RECIO_OK;
}

static void recio__pf_say(char *msg, const char *what) {
    if (msg) recio__fmt(msg, RECIO_ERRMSG_SIZE, "prefetch: %s", what);
}

/* create's arguments: RECIO_ERR_ARG for a missing one, RECIO_ERR_LIMIT over the ring's limits. */
static recio_err recio__pf_check(recio_prefetch **out, const recio_prefetch_desc *d) {
    char *msg = d ? d->errmsg : NULL;
    if (!d) return RECIO_ERR_ARG; /* no desc, no place for words */
    if (!out) return recio__pf_say(msg, "the handle pointer is NULL"), RECIO_ERR_ARG;
    if (!d->fetch) return recio__pf_say(msg, "desc.fetch is NULL: nothing to produce items"), RECIO_ERR_ARG;
    if (d->depth > 4096) return recio__pf_say(msg, "desc.depth is over 4096 slots"), RECIO_ERR_LIMIT;
    if (d->threads > 1024) return recio__pf_say(msg, "desc.threads is over 1024"), RECIO_ERR_LIMIT;
    return RECIO_OK;
}

RECIODEF recio_err recio_prefetch_create(recio_prefetch **out, const recio_prefetch_desc *desc) {
    recio_prefetch *p;
    recio_err e;
    unsigned i;
    if (desc && desc->errmsg) desc->errmsg[0] = 0;
    if (out) *out = NULL;
    if ((e = recio__pf_check(out, desc)) != RECIO_OK) return e;
    p = (recio_prefetch *)recio__malloc(&desc->alloc, sizeof *p);
    if (!p) return recio__pf_say(desc->errmsg, "out of memory for the prefetcher"), RECIO_ERR_NOMEM;
    memset(p, 0, sizeof *p);
    p->d = *desc;
    if (!p->d.depth) p->d.depth = 4;
    if (!p->d.threads) p->d.threads = 1;
    p->epoch = p->d.epoch;
    if (recio__mutex_init(&p->mu) || recio__cond_init(&p->cv_prod) || recio__cond_init(&p->cv_cons)) {
        recio__free(&desc->alloc, p); /* glibc never fails these; elsewhere a leak beats a crash */
        return RECIO_ERR_NOMEM;
    }
    if ((e = recio__pf_alloc(p)) != RECIO_OK) {
        recio_prefetch_destroy(p);
        return e;
    }
    for (i = 0; i < p->d.threads; i++, p->started++) {
        p->threads[i].p = p;
        p->threads[i].worker = i;
        if (recio__thread_start(&p->threads[i].tid, recio__pf_main, &p->threads[i]) != 0) {
            recio_prefetch_destroy(p);
            return RECIO_ERR_NOMEM;
        }
    }
    *out = p;
    return RECIO_OK;
}

RECIODEF recio_err recio_prefetch_slot_reserve(recio_prefetch_slot *slot, size_t n) {
    recio__pf_slot *s = (recio__pf_slot *)slot;
    void *q;
    if (!slot) return RECIO_ERR_ARG;
    if (n <= slot->capacity) return RECIO_OK;
    q = recio__realloc(s->alloc, slot->data, slot->size < slot->capacity ? slot->size : slot->capacity, n);
    if (!q)
        return recio__fmt(slot->errmsg, RECIO_ERRMSG_SIZE, "prefetch: out of memory growing a slot to %U bytes",
                          (uint64_t)n),
               RECIO_ERR_NOMEM;
    slot->data = q;
    slot->capacity = n;
    return RECIO_OK;
}

/* The consumer's side of next, with the lock held: RECIO_OK with *out, or 0 < r to keep waiting. */
static recio_err recio__pf_take(recio_prefetch *p, recio_prefetch_slot **out, int *wait) {
    unsigned i, held = 0;
    *wait = 0;
    if (p->sticky) return p->sticky;
    for (i = 0; i < p->d.depth; i++) {
        recio__pf_slot *s = &p->slots[i];
        held += s->state == RECIO__PF_HELD;
        if (s->state != RECIO__PF_READY || s->gen != p->gen || s->pub.seq != p->want) continue;
        if (s->err) {
            s->state = RECIO__PF_FREE;
            recio__cond_broadcast(&p->cv_prod);
            recio__pf_copymsg(p->errmsg, s->pub.errmsg[0] ? s->pub.errmsg : recio_strerror(s->err));
            return p->sticky = s->err;
        }
        s->state = RECIO__PF_HELD;
        p->want++;
        *out = &s->pub;
        return RECIO_OK;
    }
    if (p->done && p->want >= p->done_seq) {
        if (p->done_err == RECIO_END) return RECIO_END;
        recio__pf_copymsg(p->errmsg, p->done_msg);
        return p->sticky = p->done_err;
    }
    if (held == p->d.depth || p->stop) {
        recio__pf_copymsg(p->errmsg,
                          p->stop ? "prefetcher stopped" : "every slot is taken: release one before asking for more");
        return RECIO_ERR_ARG;
    }
    *wait = 1;
    return RECIO_OK;
}

RECIODEF recio_err recio_prefetch_next(recio_prefetch *p, recio_prefetch_slot **slot) {
    recio_err e;
    int wait;
    if (!p) return RECIO_ERR_ARG;
    if (!slot) {
        recio__mutex_lock(&p->mu);
        recio__pf_copymsg(p->errmsg, "prefetch next: the slot pointer is NULL");
        recio__mutex_unlock(&p->mu);
        return RECIO_ERR_ARG;
    }
    *slot = NULL;
    recio__mutex_lock(&p->mu);
    while ((e = recio__pf_take(p, slot, &wait)) == RECIO_OK && wait) recio__cond_wait(&p->cv_cons, &p->mu);
    recio__mutex_unlock(&p->mu);
    return e;
}

RECIODEF void recio_prefetch_release(recio_prefetch *p, recio_prefetch_slot *slot) {
    recio__pf_slot *s = (recio__pf_slot *)slot;
    if (!p || !slot) return;
    recio__mutex_lock(&p->mu);
    RECIO_ASSERT(s->state == RECIO__PF_HELD);
    s->state = RECIO__PF_FREE;
    recio__cond_broadcast(&p->cv_prod);
    recio__mutex_unlock(&p->mu);
}

RECIODEF void recio_prefetch_reset(recio_prefetch *p, uint64_t epoch) {
    unsigned i;
    if (!p) return;
    recio__mutex_lock(&p->mu);
    p->gen++;
    p->epoch = epoch;
    p->claim = p->want = 0;
    p->begun = p->done = 0;
    p->sticky = RECIO_OK;
    p->errmsg[0] = 0;
    for (i = 0; i < p->d.depth; i++)
        if (p->slots[i].state == RECIO__PF_READY) p->slots[i].state = RECIO__PF_FREE;
    recio__cond_broadcast(&p->cv_prod);
    recio__cond_broadcast(&p->cv_cons);
    recio__mutex_unlock(&p->mu);
}

RECIODEF const char *recio_prefetch_errmsg(const recio_prefetch *p) { return p ? p->errmsg : ""; }
#endif /* RECIO_THREADS */

/* ---- 8. ITERATOR: implementation --------------------------------------------------------------- */

/* Without RECIO_THREADS these are no-ops: everything runs on the caller's thread. */
#ifdef RECIO_THREADS
#define RECIO__IT_LOCK(it) recio__mutex_lock(&(it)->mu)
#define RECIO__IT_UNLOCK(it) recio__mutex_unlock(&(it)->mu)
#else
#define RECIO__IT_LOCK(it) ((void)0)
#define RECIO__IT_UNLOCK(it) ((void)0)
#endif
#define RECIO__IT_KEY(file, off) (((uint64_t)(file) << 48) | (off))
#define RECIO__IT_OFFMASK ((((uint64_t)1) << 48) - 1)
#define RECIO__IT_MAGIC 0x54494352u /* "RCIT" */
#define RECIO__IT_VERSION 2u        /* 2: a check sum at the end; the fingerprint covers every batch option */
/* A checkpoint: magic, version, fingerprint, epoch, batches taken, ended, n, n rolled-over keys, then
   a FNV-1a 64 of every byte before it, so damage anywhere is refused (changing any one byte always
   changes the hash) instead of restoring somewhere else. */
#define RECIO__IT_BLOB(n) (48 + 8 * (size_t)(n))

/* A .lst line by its index (= the image-header id), for path_imglist. */
typedef struct recio__it_line {
    uint64_t id;
    size_t item;
} recio__it_line;

typedef struct recio__it_bytes {
    unsigned char *p;
    size_t size, cap;
} recio__it_bytes;

/* desc.cache_bytes: records' images by record key in an open-addressing table (a power of two
   slots, at most half full; img.data NULL = empty). An entry is written once, under the iterator's
   mutex, and never changes or leaves until close, so a worker copies the recio_image out under the
   lock and reads its pixels without it. */
typedef struct recio__it_centry {
    uint64_t key;
    recio_image img;
} recio__it_centry;

typedef struct recio__it_cache {
    recio_iter_cache_mode mode;
    unsigned prefix_ops;
    recio_transform *head, *tail; /* RECIO_CACHE_PREFIX: the chain before / from its first random op */
    recio__it_centry *tab;
    size_t cap, used;
    uint64_t bytes, hits, misses;
    char why[RECIO_ERRMSG_SIZE];
} recio__it_cache;

/* One batch under construction: fetch copies the raw records in, work turns them into items in
   `out` (the batch tensor, then labels, ids and keys). */
typedef struct recio__it_slot {
    recio__it_bytes raw;
    size_t *off, *len; /* each record's bytes in raw */
    uint64_t *key;
    unsigned count, pad;
    unsigned char *out;
    uint64_t seq, epoch;
    char *errmsg; /* RECIO_ERRMSG_SIZE bytes */
    float lam;    /* mixing: this batch's lam and kind (0 none, 1 MixUp, 2 CutMix) */
    int mix;
    uint64_t base; /* batches a restore skipped in this run, as the fetch saw it (mixing draws by
                      base + seq: the worker must not read the consumer's it->base) */
    /* desc.skip_bad: which entries did not decode, their keys and (the first few) why */
    unsigned char *bad;
    unsigned nbad;
    uint64_t *bad_key;
    char *bad_what; /* RECIO_ITER_BAD_KEEP x RECIO_ERRMSG_SIZE */
} recio__it_slot;

/* The records of this part (a recio_split); `aux` reads single records anywhere (padding,
   roll-over, restore). */
typedef struct recio__it_src {
    recio_split *split;
    char **names; /* the split's file list, kept: workers name files while a split reopens */
    unsigned part, nfiles, aux_file;
    recio_reader *aux;
    uint64_t count; /* recio_split_count of the part open, for recio_iter_stats (under mu once it runs) */
} recio__it_src;

struct recio_iter {
    recio_iter_desc d;
    size_t lab_off, ids_off, keys_off, sums_off, cnt_off, obj_off, mask_off, mask_bytes, soft_off, out_bytes;
    uint64_t fingerprint;
    float *mean;   /* desc.mean_img in the item's layout (item_bytes / 4 floats) */
    recio_lst lst; /* desc.path_imglist, and its lines sorted by index */
    struct recio__it_line *lines;
    recio_transform *tf;        /* from desc.item.spec */
    recio_transform *next_tf;   /* recio_iter_set_spec: the chain of the next epoch, and its spec */
    char *next_spec, *own_spec; /* own_spec: a set spec in force (desc.item.spec points at it) */
    const recio__kern *kn;      /* the checksum's kernel column, picked once (a cpuid trap per pick) */
    recio_image shape;          /* of one item with a spec */
    recio__it_bytes *scratch;   /* per worker, for the transform */
    recio__it_cache cache;      /* desc.cache_bytes */
    unsigned nscratch;
    recio__it_slot *slots;
    unsigned nslots;
    /* producer side (fetch and begin, which never run at once) */
    recio__it_src src;
    recio__rm_keep rm; /* the remote files' connections, kept from one epoch's split to the next */
    recio_rng rng;
    recio__it_bytes *sbuf; /* shuffle buffer: sfill records, their keys in skey */
    uint64_t *skey;
    size_t sfill;
    int src_end, epoch_over;
    uint64_t *first; /* keys of the epoch's first records, for padding */
    unsigned nfirst;
    uint64_t *carry; /* roll-over records feeding this epoch's first batch */
    unsigned ncarry, carry_pos;
    uint64_t run_base; /* batches skipped at this run's start (the fetch side's copy of skip) */
    /* handed between consumer and producer under mu */
    uint64_t *carry_in, *carry_out;
    unsigned ncarry_in, ncarry_out;
    uint64_t skip;
    /* consumer side */
    uint64_t epoch, base, delivered, pull_seq;
    uint64_t *carry_next;
    unsigned ncarry_next;
    int ended, need_begin;
    uint64_t nskipped; /* desc.skip_bad: records left out, and the first few */
    recio_iter_bad *skipped;
    unsigned nskipped_kept;
    recio_err sticky;
    char errmsg[RECIO_ERRMSG_SIZE];
    char pull_msg[RECIO_ERRMSG_SIZE];
#ifdef RECIO_THREADS
    recio__mutex mu;
    int mu_ok;
    recio_prefetch *pf;
    recio_prefetch_slot *held;
#endif
};

/* The spec's chain: never one without the image section, which lets a records-only build drop what
   needs one (decoding items, mixing, the mean image) at compile time. */
#ifndef RECIO_NO_IMAGE
#define RECIO__IT_TF(it) ((it)->tf)
#else
#define RECIO__IT_TF(it) ((recio_transform *)NULL)
#endif

static int recio__it_reserve(const recio_allocator *a, recio__it_bytes *b, size_t n) {
    size_t cap = b->cap ? b->cap : 4096;
    unsigned char *q;
    if (n <= b->cap) return 0;
    while (cap < n) cap = cap > SIZE_MAX / 2 ? n : cap * 2;
    q = (unsigned char *)recio__realloc(a, b->p, b->size, cap);
    if (!q) return -1;
    b->p = q;
    b->cap = cap;
    return 0;
}

static void *recio__it_calloc(const recio_allocator *a, size_t n, size_t size) {
    void *p;
    if (size && n > SIZE_MAX / size) return NULL;
    p = recio__malloc(a, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

/* ---- source: part `part` of the split ---- */

static void recio__it_set_count(recio_iter *it, uint64_t n) {
#ifdef RECIO_THREADS
    if (it->mu_ok) { /* the producer reopens the split while the consumer may ask recio_iter_stats */
        RECIO__IT_LOCK(it);
        it->src.count = n;
        RECIO__IT_UNLOCK(it);
        return;
    }
#endif
    it->src.count = n;
}

static recio_err recio__it_split_open(recio_iter *it, unsigned part, uint64_t epoch, char *msg) {
    recio_split_desc sd = it->d.source; /* the options as given (recio__it_desc filled in the defaults) */
    recio_err e;
    sd.epoch = epoch;
    sd.alloc = it->d.alloc;
    sd.errmsg = msg; /* the split's words, or "URIS: offset 0: why" when it made none */
    recio_split_close(it->src.split);
    it->src.split = NULL;
    e = recio_split_open_desc(&it->src.split, it->d.uris, part, it->d.nsplit, &sd);
    if (e != RECIO_OK) {
        recio_split_close(it->src.split);
        it->src.split = NULL;
        return e;
    }
    it->src.part = part;
    {
        recio_split_info si;
        recio__it_set_count(it, recio_split_query(it->src.split, &si) == RECIO_OK ? si.count : RECIO_SPLIT_UNKNOWN);
    }
    if (!it->src.names) it->src.nfiles = it->src.split->nfiles; /* then fixed: workers read it */
    else if (it->src.split->nfiles != it->src.nfiles)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "%s: the file list changed since the iterator opened", it->d.uris),
               RECIO_ERR_IO;
    return RECIO_OK;
}

static recio_err recio__it_src_init(recio_iter *it) {
    recio__it_src *s = &it->src;
    recio_err e;
    unsigned i;
    it->d.source.fs = recio__rm_keep_init(&it->rm, &it->d.alloc, it->d.source.fs); /* every file the iterator opens */
    e = recio__it_split_open(it, it->d.rank, 0, it->errmsg);
    s->aux_file = UINT_MAX;
    if (e != RECIO_OK) return e;
    if (s->nfiles > 0xffffu) return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "more than 65535 files"), RECIO_ERR_ARG;
    if (!(s->names = (char **)recio__it_calloc(&it->d.alloc, s->nfiles, sizeof *s->names))) return RECIO_ERR_NOMEM;
    for (i = 0; i < s->nfiles; i++)
        if (!(s->names[i] = recio__strdup(&it->d.alloc, s->split->files[i].path))) return RECIO_ERR_NOMEM;
    return RECIO_OK;
}

static void recio__it_src_free(recio_iter *it) {
    unsigned i;
    for (i = 0; it->src.names && i < it->src.nfiles; i++) recio__free(&it->d.alloc, it->src.names[i]);
    recio__free(&it->d.alloc, it->src.names);
    recio_split_close(it->src.split);
    recio_reader_close(it->src.aux);
    recio__rm_keep_free(&it->rm);
}

static const char *recio__it_file(const recio_iter *it, uint64_t key) {
    uint64_t f = key >> 48;
    return f < it->src.nfiles ? it->src.names[f] : "?";
}

/* Epoch `epoch` reads part rank, or (rank + epoch) % nsplit when the shards rotate. */
static recio_err recio__it_src_begin(recio_iter *it, uint64_t epoch, char *msg) {
    unsigned part = it->d.rotate_shards ? (unsigned)((it->d.rank + epoch) % it->d.nsplit) : it->d.rank;
    recio_err e;
    if (!it->src.split || part != it->src.part) return recio__it_split_open(it, part, epoch, msg);
    if ((e = recio_split_reset(it->src.split, epoch)) != RECIO_OK)
        recio__fmt(msg, RECIO_ERRMSG_SIZE, "%s", it->src.split->errmsg);
    return e;
}

/* Next record of the epoch's stream: its bytes are valid until the next source call. */
static recio_err recio__it_src_next(recio_iter *it, recio_record *rec, uint64_t *key, char *msg) {
    recio_err e = recio_split_next(it->src.split, rec);
    const recio_split_where w = it->src.split->where;
    if (e == RECIO_OK) {
        if (rec->offset > RECIO__IT_OFFMASK)
            return recio__errf(msg, w.path, rec->offset, "offset beyond 2^48"), RECIO_ERR_UNSUPPORTED;
        *key = RECIO__IT_KEY(w.file, rec->offset);
    } else if (e != RECIO_END) {
        recio__fmt(msg, RECIO_ERRMSG_SIZE, "%s", it->src.split->errmsg);
    }
    return e;
}

static recio_err recio__it_open_aux(recio_iter *it, const char *path, char *msg) {
    recio_reader_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.alloc = it->d.alloc;
    rd.buffer_size = 1u << 16; /* one record at a time */
    return recio__open_reader(it->d.source.fs, path, &rd, &it->src.aux, msg);
}

/* The record with this key, read again (padding, roll-over, restore). */
static recio_err recio__it_src_read_at(recio_iter *it, uint64_t key, recio_record *rec, char *msg) {
    recio__it_src *s = &it->src;
    unsigned file = (unsigned)(key >> 48);
    const char *path = file < s->nfiles ? s->names[file] : NULL;
    recio_err e;
    if (!path) return recio__fmt(msg, RECIO_ERRMSG_SIZE, "record key %U names no file", key), RECIO_ERR_ARG;
    if (s->aux_file != file) {
        recio_reader_close(s->aux);
        s->aux = NULL;
        s->aux_file = UINT_MAX;
        if ((e = recio__it_open_aux(it, path, msg)) != RECIO_OK) return e;
        s->aux_file = file;
    }
    e = recio_reader_seek(s->aux, key & RECIO__IT_OFFMASK);
    if (e == RECIO_OK) e = recio_reader_next(s->aux, rec);
    if (e == RECIO_END)
        e = RECIO_ERR_CORRUPT, recio__errf(msg, path, key & RECIO__IT_OFFMASK, "no record here any more");
    else if (e != RECIO_OK) recio__fmt(msg, RECIO_ERRMSG_SIZE, "%s", s->aux->errmsg);
    return e;
}

/* ---- fetch: the epoch's record order, serial ---- */

/* Put record bytes into entry i of s (s NULL: the record is skipped, as when restoring). */
static recio_err recio__it_put(recio_iter *it, recio__it_slot *s, unsigned i, const void *data, size_t n,
                               uint64_t key) {
    if (it->nfirst < it->d.run.batch) it->first[it->nfirst++] = key;
    if (!s) return RECIO_OK;
    if (i == 0) s->raw.size = 0;
    if (s->raw.size + n < n || recio__it_reserve(&it->d.alloc, &s->raw, s->raw.size + n))
        return recio__errf(s->errmsg, recio__it_file(it, key), key & RECIO__IT_OFFMASK,
                           "out of memory for a record of %U bytes", (uint64_t)n),
               RECIO_ERR_NOMEM;
    if (n) memcpy(s->raw.p + s->raw.size, data, n);
    s->off[i] = s->raw.size;
    s->len[i] = n;
    s->key[i] = key;
    s->raw.size += n;
    return RECIO_OK;
}

static recio_err recio__it_sbuf_fill(recio_iter *it, size_t j, char *msg) {
    recio_record rec;
    recio_err e = recio__it_src_next(it, &rec, &it->skey[j], msg);
    if (e == RECIO_END) it->src_end = 1;
    if (e != RECIO_OK) return e;
    if (recio__it_reserve(&it->d.alloc, &it->sbuf[j], rec.size))
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "out of memory in the shuffle buffer"), RECIO_ERR_NOMEM;
    if (rec.size) memcpy(it->sbuf[j].p, rec.data, rec.size);
    it->sbuf[j].size = rec.size;
    return RECIO_OK;
}

/* Streaming shuffle: keep shuffle_buffer records, hand out a random one, refill its place. */
static recio_err recio__it_take_shuffled(recio_iter *it, recio__it_slot *s, unsigned i, char *msg) {
    size_t j;
    recio_err e;
    recio__it_bytes t;
    while (!it->src_end && it->sfill < it->d.run.shuffle_buffer) {
        if ((e = recio__it_sbuf_fill(it, it->sfill, msg)) == RECIO_OK) it->sfill++;
        else if (e != RECIO_END) return e;
    }
    if (!it->sfill) return RECIO_END;
    j = (size_t)recio_rng_below(&it->rng, it->sfill);
    if ((e = recio__it_put(it, s, i, it->sbuf[j].p, it->sbuf[j].size, it->skey[j])) != RECIO_OK) return e;
    if (!it->src_end) {
        if ((e = recio__it_sbuf_fill(it, j, msg)) == RECIO_OK) return RECIO_OK;
        if (e != RECIO_END) return e;
    }
    /* the source is dry: shrink the buffer, keeping the storage of the slot that leaves */
    it->sfill--;
    t = it->sbuf[j];
    it->sbuf[j] = it->sbuf[it->sfill];
    it->skey[j] = it->skey[it->sfill];
    it->sbuf[it->sfill] = t;
    return RECIO_OK;
}

/* The epoch's next record into entry i: roll-over records first, then the (shuffled) stream. */
static recio_err recio__it_take(recio_iter *it, recio__it_slot *s, unsigned i, char *msg) {
    recio_record rec;
    uint64_t key;
    recio_err e;
    if (it->carry_pos < it->ncarry) {
        key = it->carry[it->carry_pos++];
        if ((e = recio__it_src_read_at(it, key, &rec, msg)) != RECIO_OK) return e;
        return recio__it_put(it, s, i, rec.data, rec.size, key);
    }
    if (it->d.run.shuffle_buffer) return recio__it_take_shuffled(it, s, i, msg);
    if ((e = recio__it_src_next(it, &rec, &key, msg)) != RECIO_OK) return e;
    return recio__it_put(it, s, i, rec.data, rec.size, key);
}

static recio_err recio__it_gather(recio_iter *it, recio__it_slot *s, unsigned *n, char *msg) {
    recio_err e = RECIO_OK;
    for (*n = 0; *n < it->d.run.batch && (e = recio__it_take(it, s, *n, msg)) == RECIO_OK; ++*n) {}
    return e == RECIO_END ? RECIO_OK : e;
}

/* An incomplete last batch of n records: pad it, drop it, or keep it for the next epoch. */
static recio_err recio__it_last(recio_iter *it, recio__it_slot *s, unsigned n) {
    unsigned i, nfirst = it->nfirst;
    recio_err e;
    recio_record rec;
    if (n && it->d.run.last_batch == RECIO_LAST_PAD) {
        for (i = n; i < it->d.run.batch; i++) {
            uint64_t key = it->first[(i - n) % nfirst];
            if ((e = recio__it_src_read_at(it, key, &rec, s->errmsg)) != RECIO_OK) return e;
            if ((e = recio__it_put(it, s, i, rec.data, rec.size, key)) != RECIO_OK) return e;
        }
        s->count = n;
        s->pad = it->d.run.batch - n;
        return RECIO_OK;
    }
    if (it->d.run.last_batch == RECIO_LAST_ROLL_OVER) {
        RECIO__IT_LOCK(it);
        for (i = 0; i < n; i++) it->carry_out[i] = s->key[i];
        it->ncarry_out = n;
        RECIO__IT_UNLOCK(it);
    }
    return RECIO_END;
}

static recio_err recio__it_fetch(recio_iter *it, recio__it_slot *s) {
    unsigned n;
    recio_err e;
    s->count = s->pad = 0;
    s->base = it->run_base;
    if (it->epoch_over) return RECIO_END;
    if ((e = recio__it_gather(it, s, &n, s->errmsg)) != RECIO_OK) return e;
    if (n == it->d.run.batch) {
        s->count = n;
        return RECIO_OK;
    }
    it->epoch_over = 1;
    return recio__it_last(it, s, n);
}

/* Start an epoch: the roll-over records the consumer passed in, then skip what a restore says. */
static recio_err recio__it_begin(recio_iter *it, uint64_t epoch, char *msg) {
    uint64_t skip, k;
    unsigned n;
    recio_err e;
    RECIO__IT_LOCK(it);
    memcpy(it->carry, it->carry_in, sizeof *it->carry * it->ncarry_in);
    it->ncarry = it->ncarry_in;
    skip = it->skip;
    RECIO__IT_UNLOCK(it);
    it->run_base = skip;
    it->carry_pos = 0;
    it->nfirst = 0;
    it->sfill = 0;
    it->src_end = it->epoch_over = 0;
    it->rng.state = recio_seed_for(it->d.source.seed ^ 0x73687566666c65ull /* "shuffle" */, epoch, 0);
    if ((e = recio__it_src_begin(it, epoch, msg)) != RECIO_OK) return e;
    for (k = 0; k < skip && !it->epoch_over; k++) {
        if ((e = recio__it_gather(it, NULL, &n, msg)) != RECIO_OK) return e;
        it->epoch_over = n < it->d.run.batch;
    }
    return RECIO_OK;
}

/* ---- work: records to items, in parallel ---- */

#ifndef RECIO_NO_IMAGE
/* ---- the decoded-image cache (desc.cache_bytes) ---- */

static size_t recio__it_cache_slot(const recio__it_cache *c, uint64_t key) {
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (c->cap - 1);
    while (c->tab[i].img.data && c->tab[i].key != key) i = (i + 1) & (c->cap - 1);
    return i;
}

/* The kept image of `key` into *img (a view: the cache owns it); 0 when there is none. */
static int recio__it_cache_get(recio_iter *it, uint64_t key, recio_image *img) {
    recio__it_cache *c = &it->cache;
    int found = 0;
    RECIO__IT_LOCK(it);
    if (c->cap) {
        const recio__it_centry *e = &c->tab[recio__it_cache_slot(c, key)];
        if ((found = e->img.data != NULL) != 0) *img = e->img, img->owned = NULL;
    }
    if (found) c->hits++;
    else c->misses++;
    RECIO__IT_UNLOCK(it);
    return found;
}

/* Would n more bytes (and the table's growth) fit the budget? Asked before making a copy to keep. */
static int recio__it_cache_room(const recio__it_cache *c, size_t n, size_t budget) {
    size_t grow = (c->used + 1) * 2 > c->cap ? (c->cap ? c->cap : 64) * sizeof *c->tab : 0;
    return c->bytes + grow + n <= budget && n <= budget;
}

/* Double the table (the caller holds the lock and has checked the budget). */
static int recio__it_cache_grow(recio_iter *it) {
    recio__it_cache *c = &it->cache, old = *c;
    size_t i, cap = c->cap ? c->cap * 2 : 64;
    recio__it_centry *tab = (recio__it_centry *)recio__it_calloc(&it->d.alloc, cap, sizeof *tab);
    if (!tab) return -1;
    c->tab = tab, c->cap = cap;
    for (i = 0; i < old.cap; i++)
        if (old.tab[i].img.data) c->tab[recio__it_cache_slot(c, old.tab[i].key)] = old.tab[i];
    recio__free(&it->d.alloc, old.tab);
    c->bytes += (cap - old.cap) * sizeof *tab;
    return 0;
}

/* Keep *img (owned, through desc.alloc) for `key` when the budget allows: 1 = the cache owns it now
   (img is cleared), 0 = the caller still does (over budget, or another worker kept this key first). */
static int recio__it_cache_put(recio_iter *it, uint64_t key, recio_image *img) {
    recio__it_cache *c = &it->cache;
    size_t n = recio_image_bytes(img), i;
    int kept = 0;
    RECIO__IT_LOCK(it);
    if (recio__it_cache_room(c, n, it->d.run.cache_bytes) &&
        ((c->used + 1) * 2 <= c->cap || recio__it_cache_grow(it) == 0) &&
        !c->tab[i = recio__it_cache_slot(c, key)].img.data) {
        c->tab[i].key = key, c->tab[i].img = *img;
        c->used++, c->bytes += n, kept = 1;
        memset(img, 0, sizeof *img);
    }
    RECIO__IT_UNLOCK(it);
    return kept;
}

/* Which part of the chain the cache keeps (recio__tf_cache_cut's rule), and its two halves. */
static recio_err recio__it_cache_init(recio_iter *it) {
    recio__it_cache *c = &it->cache;
    int k;
    recio_err e;
    if (!it->d.run.cache_bytes) return RECIO_OK;
    if (!it->tf)
        return recio__fmt(c->why, sizeof c->why, "no spec: the items of a transform callback are not kept"), RECIO_OK;
    if (it->d.labels.detection || it->d.labels.masks) /* a kept image would skip moving the record's boxes and mask */
        return recio__fmt(c->why, sizeof c->why,
                          "boxes or masks move with each record's pixels (label_detection, masks): nothing is kept"),
               RECIO_OK;
    if ((k = recio__tf_cache_cut(it->tf, c->why, sizeof c->why)) < 0) return c->mode = RECIO_CACHE_ITEMS, RECIO_OK;
    if (k == 0) return RECIO_OK;
    if ((e = recio__tf_part(it->tf, 0, k, &c->head)) != RECIO_OK ||
        (e = recio__tf_part(it->tf, k, -1, &c->tail)) != RECIO_OK)
        return e;
    c->mode = RECIO_CACHE_PREFIX, c->prefix_ops = (unsigned)k;
    return RECIO_OK;
}

/* The spec path: decode and the chain straight into the batch item. Each worker keeps one scratch
   block; a record that needs more runs on heap blocks once and the block grows to what it asked, so
   the header is read once, by the decoder. With RECIO_TURBOJPEG only the part of a JPEG that the
   chain reads is decoded. With the cache keeping prefixes, every record runs in two halves, the
   second from the kept (or just made) output of the first: the same bytes, by the cut's rule. */
static recio_err recio__it_run(recio_iter *it, const recio_irecord *ir, uint64_t key, uint64_t seed, recio_image *dst,
                               const recio_apply_desc *ap, unsigned worker, char *what) {
    recio__it_bytes *blk = &it->scratch[worker];
    recio__enc d;
    recio__scratch sc;
    recio_image pre;
    recio_err e;
    size_t asked = 0;
    memset(&d, 0, sizeof d);
    d.channels = it->d.item.channels;
    memset(&sc, 0, sizeof sc);
    sc.p = blk->cap ? blk->p : NULL, sc.n = blk->cap, sc.grow = 1, sc.asked = &asked;
    if (it->cache.mode != RECIO_CACHE_PREFIX) {
        e = recio__apply_encoded(it->tf, ir->image, ir->image_size, dst, seed, &d, ap, &sc, what, RECIO_ERRMSG_SIZE);
    } else if (recio__it_cache_get(it, key, &pre)) {
        e = recio__apply_in(it->cache.tail, &pre, dst, seed, &sc, what, RECIO_ERRMSG_SIZE);
    } else {
        memset(&pre, 0, sizeof pre);
        pre.alloc = it->d.alloc;
        size_t head_asked;
        e = recio__apply_encoded(it->cache.head, ir->image, ir->image_size, &pre, seed, &d, NULL, &sc, what,
                                 RECIO_ERRMSG_SIZE);
        head_asked = asked; /* the rest's run below sets `asked` again: the block must fit both */
        if (e == RECIO_OK &&
            (e = recio__apply_in(it->cache.tail, &pre, dst, seed, &sc, what, RECIO_ERRMSG_SIZE)) == RECIO_OK)
            recio__it_cache_put(it, key, &pre); /* only records that made an item: skip_bad's never */
        if (head_asked > asked) asked = head_asked;
        recio_image_free(&pre);
    }
    if (asked > blk->cap) recio__it_reserve(&it->d.alloc, blk, asked); /* if it cannot, heap blocks still serve */
    return e;
}

/* A finished item to keep (RECIO_CACHE_ITEMS), copied when the budget has room for it. */
static void recio__it_keep_item(recio_iter *it, uint64_t key, const void *out) {
    recio_image copy;
    int room;
    RECIO__IT_LOCK(it);
    room = recio__it_cache_room(&it->cache, it->d.item.item_bytes, it->d.run.cache_bytes);
    RECIO__IT_UNLOCK(it);
    if (!room || recio_image_alloc(&copy, it->shape.width, it->shape.height, it->shape.channels, it->shape.dtype,
                                   it->shape.layout, &it->d.alloc) != RECIO_OK)
        return;
    memcpy(copy.data, out, it->d.item.item_bytes);
    if (!recio__it_cache_put(it, key, &copy)) recio_image_free(&copy);
}

static recio_err recio__it_decode(recio_iter *it, const recio_irecord *ir, uint64_t key, uint64_t seed, void *out,
                                  const recio_apply_desc *ap, unsigned worker, char *what) {
    const recio_image *sh = &it->shape;
    recio_image dst, kept;
    recio_err e;
    int w = 0, h = 0, c = 0;
    if (it->cache.mode == RECIO_CACHE_ITEMS && recio__it_cache_get(it, key, &kept)) {
        memcpy(out, kept.data, it->d.item.item_bytes);
        return RECIO_OK;
    }
    dst = recio_image_wrap(out, sh->width, sh->height, sh->channels, sh->dtype, sh->layout, 0);
    e = recio__it_run(it, ir, key, seed, &dst, ap, worker, what);
    if (e == RECIO_OK && it->cache.mode == RECIO_CACHE_ITEMS) recio__it_keep_item(it, key, out);
    /* a shape that differs from the first record's (the executor's own words are kept) */
    if (e == RECIO_ERR_ARG && strncmp(what, "transform: ", 11) == 0 &&
        (strcmp(what + 11, recio_strerror(e)) == 0 || strncmp(what + 11, "mask: ", 6) == 0) &&
        recio__info(ir->image, ir->image_size, &w, &h, &c, &it->d.alloc) == RECIO_OK) {
        recio_transform_info got;                                              /* sizes as WxH, as everywhere */
        if (ap && ap->mask && (ap->mask->width != w || ap->mask->height != h)) /* the record is bad, not the chain */
            e = RECIO_ERR_FORMAT, recio__fmt(what, RECIO_ERRMSG_SIZE, "mask: %dx%d, not the %dx%d (WxH) of its image",
                                             ap->mask->width, ap->mask->height, w, h);
        else if (recio_transform_query(it->tf, w, h, it->d.item.channels ? it->d.item.channels : c, &got) == RECIO_OK)
            recio__fmt(what, RECIO_ERRMSG_SIZE,
                       "the chain turns this %dx%d image into %dx%d, not the %dx%d (WxH) of the first record (end the "
                       "spec with a fixed-size crop or resize)",
                       w, h, got.shape.width, got.shape.height, sh->width, sh->height);
        else
            recio__fmt(what, RECIO_ERRMSG_SIZE,
                       "the chain's output for this %dx%d image is not the %dx%d (WxH, %d channels) of the first "
                       "record (end the spec with a fixed-size crop or resize)",
                       w, h, sh->width, sh->height, sh->channels);
    }
    return e;
}

/* desc.label_detection with a spec: the objects the chain moves must be boxes (recio_boxes_check).
   One with a NaN or an inverted box is not an object to move or count: the record is refused,
   naming the object (skip_bad leaves it out and counts it). */
static recio_err recio__it_boxes(const float *row, unsigned objects, char *what) {
    char why[RECIO_ERRMSG_SIZE];
    if (!objects || recio_boxes_check(row + (size_t)row[0], (int)objects, (int)row[1], NULL, why) == RECIO_OK)
        return RECIO_OK;
    return recio__fmt(what, RECIO_ERRMSG_SIZE, "detection labels: %s", why), RECIO_ERR_FORMAT;
}

/* Why a record has no mask (recio_irecord_unpack finds PNG masks only): none at all; a tail ("RMSK"
   at the end) over an image of another kind, refused by name (a JPEG); or a damaged tail. */
static void recio__it_no_mask(const recio_irecord *ir, char *what) {
    const unsigned char *end = (const unsigned char *)ir->image + ir->image_size;
    size_t n = ir->image_size >= RECIO_MASK_TAIL_SIZE && !memcmp(end - 4, "RMSK", 4) ? recio_load_u32le(end - 8) : 0;
    if (!n)
        recio__fmt(what, RECIO_ERRMSG_SIZE,
                   "no label mask in this record (desc.masks; recio pack --mask-root writes them)");
    else if (n <= ir->image_size - RECIO_MASK_TAIL_SIZE && recio__format(end - 8 - n, n) != RECIO__FMT_NONE)
        recio__mask_refuse(end - 8 - n, n, what, RECIO_ERRMSG_SIZE);
    else
        recio__fmt(what, RECIO_ERRMSG_SIZE,
                   "mask: the record ends in a mask tail (\"RMSK\") that holds no mask: its length (%U) or the mask's "
                   "signature is damaged",
                   (uint64_t)n);
}

/* With label_detection and/or masks: item i's boxes (its label row, in place) and its mask (into the
   batch's mask tensor) go through the chain with the pixels. */
static recio_err recio__it_decode_with(recio_iter *it, const recio_irecord *ir, uint64_t key, uint64_t seed,
                                       unsigned char *out, unsigned i, unsigned worker, char *what) {
    float *row = (float *)(out + it->lab_off) + (size_t)i * it->d.labels.width;
    unsigned *objects = (unsigned *)(out + it->obj_off) + i;
    recio_apply_desc ap;
    recio_image mask, mask_out;
    recio_err e;
    int kept = 0;
    size_t l;
    memset(&ap, 0, sizeof ap);
    memset(&mask, 0, sizeof mask);
    if (it->d.labels.detection && *objects) { /* [A, B, header, objects]: it_labels checked it and cut whole objects */
        unsigned a = (unsigned)row[0], b = (unsigned)row[1], fit = (it->d.labels.width - a) / b;
        ap.boxes = ap.boxes_out = row + a, ap.count = (int)(*objects < fit ? *objects : fit), ap.stride = (int)b;
        ap.count_out = &kept;
        if ((e = recio__it_boxes(row, (unsigned)ap.count, what)) != RECIO_OK) return e;
    }
    if (it->d.labels.masks) {
        if (!ir->mask) return recio__it_no_mask(ir, what), RECIO_ERR_FORMAT;
        if ((e = recio__mask_decode(&mask, ir->mask, ir->mask_size, what, RECIO_ERRMSG_SIZE, &it->d.alloc)) != RECIO_OK)
            return e;
        mask_out = recio_image_wrap(out + it->mask_off + (size_t)i * it->mask_bytes, it->shape.width, it->shape.height,
                                    1, RECIO_U8, RECIO_HWC, 0);
        ap.mask = &mask, ap.mask_out = &mask_out, ap.mask_fill = it->d.labels.mask_fill;
    }
    e = recio__it_decode(it, ir, key, seed, out + (size_t)i * it->d.item.item_bytes, &ap, worker, what);
    recio_image_free(&mask);
    if (e == RECIO_OK && ap.boxes) {
        for (l = (size_t)row[0] + (size_t)kept * (size_t)row[1]; l < it->d.labels.width; l++)
            row[l] = it->d.labels.pad_value;
        *objects = (unsigned)kept;
    }
    return e;
}
static void recio__it_cache_free(recio_iter *it) {
    recio__it_cache *c = &it->cache;
    size_t i;
    for (i = 0; i < c->cap; i++) recio_image_free(&c->tab[i].img);
    recio__free(&it->d.alloc, c->tab);
    recio_transform_free(c->head);
    recio_transform_free(c->tail);
}
#else
static void recio__it_cache_free(recio_iter *it) { (void)it; } /* nothing is ever kept */
static recio_err recio__it_cache_init(recio_iter *it) {
    if (it->d.run.cache_bytes)
        recio__fmt(it->cache.why, sizeof it->cache.why, "no spec (RECIO_NO_IMAGE): nothing to keep");
    return RECIO_OK;
}
static recio_err recio__it_decode(recio_iter *it, const recio_irecord *ir, uint64_t key, uint64_t seed, void *out,
                                  const void *ap, unsigned worker, char *what) {
    (void)it, (void)ir, (void)key, (void)seed, (void)out, (void)ap, (void)worker, (void)what;
    return RECIO_ERR_UNSUPPORTED; /* never reached: without the image section no spec is accepted */
}
static recio_err recio__it_decode_with(recio_iter *it, const recio_irecord *ir, uint64_t key, uint64_t seed,
                                       unsigned char *out, unsigned i, unsigned worker, char *what) {
    (void)it, (void)ir, (void)key, (void)seed, (void)out, (void)i, (void)worker, (void)what;
    return RECIO_ERR_UNSUPPORTED;
}
#endif

static size_t recio__it_elem(const recio_iter *it) { return RECIO__IT_TF(it) ? recio_dtype_size(it->shape.dtype) : 1; }

/* ---- labels and the mean image ---- */

/* The .lst line for image-header id `id` (path_imglist), or NULL. */
static const recio_lst_item *recio__it_line_of(const recio_iter *it, uint64_t id) {
    size_t lo = 0, hi = it->lst.count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (it->lines[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < it->lst.count && it->lines[lo].id == id ? &it->lst.items[it->lines[lo].item] : NULL;
}

/* Label i (< r->nlabels) of an unpacked record. */
static float recio__ir_label(const recio_irecord *r, uint32_t i) {
    return recio_load_f32le((const unsigned char *)r->all_labels + 4 * (size_t)i);
}

/* desc.label_detection: n labels [A, B, header, objects of B] (recio_det_layout_of) -> *objects;
 *keep: the labels that fit label_width without cutting an object. */
static recio_err recio__it_det(const recio_iter *it, const float *src, const recio_irecord *ir, uint32_t n,
                               unsigned *objects, uint32_t *keep, char *what) {
    float ab[2];
    recio_det_layout lay;
    uint32_t lw = it->d.labels.width;
    ab[0] = n > 0 ? (src ? src[0] : recio__ir_label(ir, 0)) : 0;
    ab[1] = n > 1 ? (src ? src[1] : recio__ir_label(ir, 1)) : 0;
    if (recio_det_layout_of(ab, n, &lay) != RECIO_OK)
        return recio__fmt(what, RECIO_ERRMSG_SIZE,
                          "detection labels: %u labels are not [A, B, A-2 header floats, objects of B floats] "
                          "(A whole in 2..%u, B whole >= 5, %u - A a multiple of B)",
                          n, n, n),
               RECIO_ERR_ARG;
    if (lay.header_width > lw)
        return recio__fmt(what, RECIO_ERRMSG_SIZE,
                          "detection labels: the header has %u floats, more than label_width %u", lay.header_width, lw),
               RECIO_ERR_ARG;
    *keep = n <= lw ? n : lay.header_width + (lw - lay.header_width) / lay.object_width * lay.object_width;
    *objects = (*keep - lay.header_width) / lay.object_width; /* in the row; label_counts shows a cut */
    return RECIO_OK;
}

/* Item i's labels: the record's (or its .lst line's), cut or padded to label_width, and how many
   there really are (and objects, for detection). */
static recio_err recio__it_labels(const recio_iter *it, const recio_irecord *ir, unsigned i, unsigned char *out,
                                  char *what) {
    float *lab = (float *)(out + it->lab_off) + (size_t)i * it->d.labels.width;
    const float *src = NULL;
    uint32_t n = ir->nlabels, keep, l;
    unsigned objects = 0;
    recio_err e;
    if (it->lines) {
        const recio_lst_item *line = recio__it_line_of(it, ir->id);
        if (!line)
            return recio__fmt(what, RECIO_ERRMSG_SIZE, "image id %U has no line in %s (path_imglist)", ir->id,
                              it->d.labels.imglist),
                   RECIO_ERR_ARG;
        src = line->labels, n = line->nlabels;
    }
    if (it->d.labels.strict && n > it->d.labels.width)
        return recio__fmt(what, RECIO_ERRMSG_SIZE, "%u labels, more than label_width %u (label_strict)", n,
                          it->d.labels.width),
               RECIO_ERR_ARG;
    keep = n < it->d.labels.width ? n : it->d.labels.width;
    if (it->d.labels.detection && (e = recio__it_det(it, src, ir, n, &objects, &keep, what)) != RECIO_OK) return e;
    for (l = 0; l < keep; l++) lab[l] = src ? src[l] : recio__ir_label(ir, l);
    for (; l < it->d.labels.width; l++) lab[l] = it->d.labels.pad_value;
    ((unsigned *)(out + it->cnt_off))[i] = n;
    ((unsigned *)(out + it->obj_off))[i] = objects;
    return RECIO_OK;
}

/* desc.mean_img: item = (item - mean) x mean_scale, on the chain's f32 output. */
static void recio__it_sub_mean(const recio_iter *it, float *x) {
    size_t k, n = it->d.item.item_bytes / sizeof(float);
    float sc = it->d.item.mean_scale;
    for (k = 0; k < n; k++) x[k] = (x[k] - it->mean[k]) * sc;
}

/* Entry i of s into item i of the batch; on failure `what` (RECIO_ERRMSG_SIZE bytes) says why. */
static recio_err recio__it_item(recio_iter *it, recio__it_slot *s, unsigned i, unsigned worker, char *what) {
    unsigned char *out = s->out;
    recio_irecord ir;
    recio_err e;
    uint64_t key = s->key[i], aug = it->d.item.seed_aug ? it->d.item.seed_aug : it->d.source.seed;
    what[0] = 0;
    if (recio_irecord_unpack(&ir, s->raw.p + s->off[i], s->len[i]) != RECIO_OK)
        return recio__fmt(what, RECIO_ERRMSG_SIZE, "record of %U bytes is too short for its image header",
                          (uint64_t)s->len[i]),
               RECIO_ERR_FORMAT;
    if ((e = recio__it_labels(it, &ir, i, out, what)) != RECIO_OK) return e;
    ((uint64_t *)(out + it->ids_off))[i] = ir.id;
    ((uint64_t *)(out + it->keys_off))[i] = key;
    if (RECIO__IT_TF(it) && (it->d.labels.detection || it->d.labels.masks))
        e = recio__it_decode_with(it, &ir, key, recio_seed_for(aug, s->epoch, key), out, i, worker, what);
    else if (RECIO__IT_TF(it))
        e = recio__it_decode(it, &ir, key, recio_seed_for(aug, s->epoch, key), out + (size_t)i * it->d.item.item_bytes,
                             NULL, worker, what);
    else
        e = it->d.item.transform(it->d.item.user, &ir, recio_seed_for(aug, s->epoch, key),
                                 out + (size_t)i * it->d.item.item_bytes, it->d.item.item_bytes, worker, what);
    if (e == RECIO_OK && RECIO__IT_TF(it) && it->mean)
        recio__it_sub_mean(it, (float *)(out + (size_t)i * it->d.item.item_bytes));
    if (e == RECIO_OK && it->d.run.checksums) /* now, while the item is in this core's cache */
        ((uint64_t *)(out + it->sums_off))[i] =
            recio__checksum(it->kn, out + (size_t)i * it->d.item.item_bytes, it->d.item.item_bytes, recio__it_elem(it));
    if (e != RECIO_OK && !what[0]) recio__fmt(what, RECIO_ERRMSG_SIZE, "%s", recio_strerror(e));
    return e == RECIO_END ? RECIO_ERR_ARG : e;
}

/* The errors that mean "this record's image is bad", which desc.skip_bad passes over. Running out of
   memory, a chain whose output size varies, or I/O stay errors. */
static int recio__it_undecodable(recio_err e) { /* LIMIT: a header over RECIO_MAX_PIXELS */
    return e == RECIO_ERR_DECODE || e == RECIO_ERR_FORMAT || e == RECIO_ERR_UNSUPPORTED || e == RECIO_ERR_LIMIT;
}

/* Item j of the batch becomes a copy of item i (pixels, labels, id, key, checksum, counts, mask);
   i < 0: zeros (and the mask fill, and the zeros' checksum). Each of the batch's arrays by its
   offset in the slot and its width per item. */
static void recio__it_copy_item(recio_iter *it, recio__it_slot *s, unsigned j, int i) {
    unsigned char *o = s->out;
    size_t ib = it->d.item.item_bytes, at[8], wd[8], k, arrays = RECIO__IT_TF(it) ? 8 : 7; /* masks come with a spec */
    at[0] = 0, at[1] = it->lab_off, at[2] = it->ids_off, at[3] = it->keys_off, at[4] = it->sums_off,
    at[5] = it->cnt_off, at[6] = it->obj_off, at[7] = it->mask_off;
    wd[0] = ib, wd[1] = it->d.labels.width * sizeof(float), wd[2] = wd[3] = wd[4] = 8, wd[5] = wd[6] = 4,
    wd[7] = it->mask_bytes;
    for (k = 0; k < arrays; k++) {
        unsigned char *d = o + at[k] + j * wd[k];
        if (i >= 0) memcpy(d, o + at[k] + (size_t)i * wd[k], wd[k]);
        else memset(d, k == 7 ? recio__mask_fill_value(it->d.labels.mask_fill) : 0, wd[k]);
    }
    if (i < 0 && it->d.run.checksums)
        ((uint64_t *)(o + it->sums_off))[j] = recio__checksum(it->kn, o + j * ib, ib, recio__it_elem(it));
}

/* Leave the bad entries out: the sound ones move up in order (records first, then the epoch-end
   padding), and the places left at the end become padding, copies of the batch's first sound item,
   as an epoch's last batch is padded. The batch keeps its size, so the tensor shape never changes. */
static void recio__it_compact(recio_iter *it, recio__it_slot *s) {
    unsigned i, j = 0, n = s->count + s->pad, count = 0;
    for (i = 0; i < n; i++) {
        if (s->bad[i]) continue;
        count += i < s->count;
        if (i != j) recio__it_copy_item(it, s, j, (int)i);
        j++;
    }
    for (i = j; i < n; i++) recio__it_copy_item(it, s, i, j ? 0 : -1);
    s->count = count;
    s->pad = n - count;
}

/* Entry i did not decode: mark it; a record (not a padding copy of one) is also counted, with its
   key and (for the first few) why. */
static void recio__it_note_bad(recio__it_slot *s, unsigned i, const char *what) {
    s->bad[i] = 1;
    if (i >= s->count) return;
    if (s->nbad < RECIO_ITER_BAD_KEEP)
        recio__fmt(s->bad_what + (size_t)s->nbad * RECIO_ERRMSG_SIZE, RECIO_ERRMSG_SIZE, "%s", what);
    s->bad_key[s->nbad++] = s->key[i];
}

/* ---- batch-level mixing (MixUp, CutMix) ---- */

static int recio__it_mixing(const recio_iter_desc *d) { return d->mix.mixup_alpha > 0 || d->mix.cutmix_alpha > 0; }

/* Once open: mixing (which the open refuses without a spec). */
static int recio__it_mixes(const recio_iter *it) { return RECIO__IT_TF(it) && recio__it_mixing(&it->d); }

#ifndef RECIO_NO_IMAGE
/* What mixing with a spec still needs, or NULL. */
static const char *recio__it_mix_why(const recio_iter *it) {
    const recio_iter_desc *d = &it->d;
    return !d->mix.num_classes                      ? "num_classes (the soft labels' width)"
           : d->labels.detection || d->labels.masks ? "plain class labels (not with label_detection or masks)"
           : d->mix.mixup_alpha > 0 && it->shape.dtype != RECIO_F32
               ? "f32 items for MixUp (end the chain with float or normalize)"
           : !(d->mix.mixup_alpha < 1e4f && d->mix.cutmix_alpha < 1e4f && d->mix.prob >= 0 && d->mix.prob <= 1)
               ? "alphas below 1e4 and mix_prob in [0, 1]"
               : NULL;
}
#else
#define recio__it_mix_why(it) NULL /* never asked: without the image section there is no spec */
#endif

/* At open, once the item's shape is known: what mixing needs. */
static recio_err recio__it_mix_check(recio_iter *it) {
    const char *why = !RECIO__IT_TF(it) ? "a spec (the item's shape)" : recio__it_mix_why(it);
    if (!why) return RECIO_OK;
    recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "mixing (mixup_alpha or cutmix_alpha set) needs %s", why);
    return RECIO_ERR_ARG;
}

#ifndef RECIO_NO_IMAGE                          /* mixing needs a spec; libm stays out of records-only builds */
static double recio__rng_normal(recio_rng *g) { /* Box-Muller */
    double u = 1.0 - recio_rng_uniform(g), v = recio_rng_uniform(g);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Gamma(a, 1): Marsaglia and Tsang's method; a < 1 through Gamma(a + 1) U^(1/a). */
static double recio__rng_gamma(recio_rng *g, double a) {
    double boost = 1.0, d, c, x, v, u;
    if (a < 1) boost = pow(1.0 - recio_rng_uniform(g), 1.0 / a), a += 1;
    d = a - 1.0 / 3, c = 1.0 / sqrt(9 * d);
    for (;;) {
        do x = recio__rng_normal(g), v = 1 + c * x;
        while (v <= 0);
        v = v * v * v, u = recio_rng_uniform(g);
        if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v))) return d * v * boost;
    }
}

static double recio__rng_beta(recio_rng *g, double a) {
    double x = recio__rng_gamma(g, a), y = recio__rng_gamma(g, a);
    return x + y > 0 ? x / (x + y) : 0.5;
}

/* CutMix: items i and j exchange the box [x0, x1) x [y0, y1), in either layout. */
static void recio__it_swap_box(const recio_iter *it, unsigned char *a, unsigned char *b, int x0, int y0, int x1,
                               int y1) {
    const recio_image *sh = &it->shape;
    size_t e = recio_dtype_size(sh->dtype), planes = sh->layout == RECIO_CHW ? (size_t)sh->channels : 1;
    size_t px = sh->layout == RECIO_CHW ? e : e * (size_t)sh->channels, run = (size_t)(x1 - x0) * px, p, k;
    int y;
    for (p = 0; p < planes; p++)
        for (y = y0; y < y1; y++) {
            size_t at = (p * (size_t)sh->height + (size_t)y) * (size_t)sh->width * px + (size_t)x0 * px;
            for (k = 0; k < run; k++) {
                unsigned char t = a[at + k];
                a[at + k] = b[at + k], b[at + k] = t;
            }
        }
}

/* The batch mixed with itself reversed, and each item's soft label. */
static recio_err recio__it_mix(recio_iter *it, recio__it_slot *s) {
    const recio_iter_desc *d = &it->d;
    unsigned n = s->count + s->pad, i, nc = d->mix.num_classes;
    uint64_t aug = d->item.seed_aug ? d->item.seed_aug : d->source.seed;
    float *soft = (float *)(s->out + it->soft_off), lam = 1.0f;
    const float *lab = (const float *)(s->out + it->lab_off);
    size_t ib = d->item.item_bytes;
    recio_rng g;
    g.state = recio_seed_for(aug, s->epoch, 0x8000000000000000ull | (s->base + s->seq));
    s->mix = 0;
    if (recio_rng_uniform(&g) < (d->mix.prob > 0 ? d->mix.prob : 1.0f))
        s->mix = d->mix.mixup_alpha > 0 && (d->mix.cutmix_alpha <= 0 || recio_rng_uniform(&g) < 0.5) ? 1 : 2;
    if (s->mix == 1) lam = (float)recio__rng_beta(&g, d->mix.mixup_alpha);
    if (s->mix == 2) { /* timm's rand_bbox with the corrected lam */
        int W = it->shape.width, H = it->shape.height, cx, cy, x0, y0, x1, y1;
        double r = sqrt(1.0 - recio__rng_beta(&g, d->mix.cutmix_alpha));
        int cw = (int)(W * r), ch = (int)(H * r);
        cx = (int)recio_rng_below(&g, (uint64_t)W), cy = (int)recio_rng_below(&g, (uint64_t)H);
        x0 = cx - cw / 2 < 0 ? 0 : cx - cw / 2, x1 = cx + cw / 2 > W ? W : cx + cw / 2;
        y0 = cy - ch / 2 < 0 ? 0 : cy - ch / 2, y1 = cy + ch / 2 > H ? H : cy + ch / 2;
        lam = (float)(1.0 - (double)(x1 - x0) * (y1 - y0) / ((double)W * H));
        for (i = 0; i < n / 2; i++)
            recio__it_swap_box(it, s->out + (size_t)i * ib, s->out + (size_t)(n - 1 - i) * ib, x0, y0, x1, y1);
    }
    if (s->mix == 1)
        for (i = 0; i < n / 2; i++) {
            float *a = (float *)(s->out + (size_t)i * ib), *b = (float *)(s->out + (size_t)(n - 1 - i) * ib);
            size_t k;
            for (k = 0; k < ib / 4; k++) {
                float x = a[k], y = b[k];
                a[k] = lam * x + (1 - lam) * y, b[k] = lam * y + (1 - lam) * x;
            }
        }
    s->lam = lam;
    memset(soft, 0, (size_t)n * nc * sizeof *soft);
    for (i = 0; i < n; i++) {
        float ci = lab[(size_t)i * d->labels.width], cj = lab[(size_t)(n - 1 - i) * d->labels.width];
        if (!(ci >= 0 && ci < (float)nc && ci == floorf(ci)) || !(cj >= 0 && cj < (float)nc && cj == floorf(cj))) {
            unsigned bad = ci >= 0 && ci < (float)nc && ci == floorf(ci) ? n - 1 - i : i;
            float v = lab[(size_t)bad * d->labels.width];
            const char *f = v == floorf(v) && fabsf(v) < 1e9f
                                ? "label %d is not a class in [0, %u) (num_classes, for mixing)"
                                : "a label that is not a whole number is not a class in [0, %u) (mixing)";
            if (v == floorf(v) && fabsf(v) < 1e9f)
                return recio__errf(s->errmsg, recio__it_file(it, s->key[bad]), s->key[bad] & RECIO__IT_OFFMASK, f,
                                   (int)v, nc),
                       RECIO_ERR_ARG;
            return recio__errf(s->errmsg, recio__it_file(it, s->key[bad]), s->key[bad] & RECIO__IT_OFFMASK, f, nc),
                   RECIO_ERR_ARG;
        }
        soft[(size_t)i * nc + (size_t)ci] += lam;
        soft[(size_t)i * nc + (size_t)cj] += 1 - lam;
    }
    return RECIO_OK;
}
#else
static recio_err recio__it_mix(recio_iter *it, recio__it_slot *s) {
    (void)it, (void)s;
    return RECIO_ERR_UNSUPPORTED; /* never reached: recio__it_mix_check wants a spec */
}
#endif

static recio_err recio__it_work(recio_iter *it, recio__it_slot *s, unsigned worker) {
    char what[RECIO_ERRMSG_SIZE];
    unsigned i, n = s->count + s->pad;
    recio_err e;
    s->nbad = 0;
    if (s->bad) memset(s->bad, 0, n);
    for (i = 0; i < n; i++) {
        if ((e = recio__it_item(it, s, i, worker, what)) == RECIO_OK) continue;
        if (!it->d.run.skip_bad || !recio__it_undecodable(e))
            return recio__errf(s->errmsg, recio__it_file(it, s->key[i]), s->key[i] & RECIO__IT_OFFMASK, "%s", what), e;
        recio__it_note_bad(s, i, what);
    }
    if (s->bad && memchr(s->bad, 1, n)) recio__it_compact(it, s);
    if (recio__it_mixes(it)) return recio__it_mix(it, s);
    return RECIO_OK;
}

/* On delivery, in batch order: add the batch's left-out records to the iterator's count and list. */
static void recio__it_tally(recio_iter *it, const recio__it_slot *s) {
    unsigned i, k;
    it->nskipped += s->nbad;
    for (i = 0; i < s->nbad && i < RECIO_ITER_BAD_KEEP && it->nskipped_kept < RECIO_ITER_BAD_KEEP; i++) {
        const char *file = recio__it_file(it, s->bad_key[i]);
        uint64_t off = s->bad_key[i] & RECIO__IT_OFFMASK;
        recio_iter_bad *b = &it->skipped[it->nskipped_kept];
        for (k = 0; k < it->nskipped_kept && (it->skipped[k].offset != off || it->skipped[k].file != file); k++) {}
        if (k < it->nskipped_kept) continue; /* seen in an earlier epoch */
        b->file = file;
        b->offset = off;
        recio__fmt(b->what, RECIO_ERRMSG_SIZE, "%s", s->bad_what + (size_t)i * RECIO_ERRMSG_SIZE);
        it->nskipped_kept++;
    }
}

/* ---- the threaded pipeline: the prefetcher's callbacks ---- */
#ifdef RECIO_THREADS
static recio__it_slot *recio__it_bind(recio_iter *it, recio_prefetch_slot *ps) {
    recio__it_slot *s = &it->slots[ps->index];
    s->out = (unsigned char *)ps->data;
    s->seq = ps->seq;
    s->epoch = ps->epoch;
    s->errmsg = ps->errmsg;
    return s;
}
static recio_err recio__it_pf_fetch(void *user, recio_prefetch_slot *ps, unsigned worker) {
    (void)worker;
    return recio__it_fetch((recio_iter *)user, recio__it_bind((recio_iter *)user, ps));
}
static recio_err recio__it_pf_work(void *user, recio_prefetch_slot *ps, unsigned worker) {
    recio_iter *it = (recio_iter *)user;
    return recio__it_work(it, &it->slots[ps->index], worker);
}
static recio_err recio__it_pf_begin(void *user, uint64_t epoch, char *errmsg) {
    return recio__it_begin((recio_iter *)user, epoch, errmsg);
}
#endif

/* ---- consumer side ---- */

/* The desc fields that change batches: the one list the checkpoint fingerprint hashes, sub-desc by
   sub-desc, each as recio__it_desc left it (defaults filled in) and only when the options named by
   `when` make it matter, so two descs that give the same batches give the same fingerprint. Left out,
   since they never change a batch: source.ordinals, use_mmap, buffer_size and fs, run.workers,
   prefetch, checksums (adds batch.sums only) and cache_bytes, errmsg and alloc (source.epoch, alloc
   and errmsg must be zero); and item.transform and user, since a callback cannot be hashed (restore
   with the same one). A new desc field goes here or in that list: tests/test_iter_checkpoint.c reads
   the structs from recio.h and changes every field in turn. */
enum { RECIO__FP_INT, RECIO__FP_F32, RECIO__FP_STR, RECIO__FP_FILL /* mask_fill: the label it means */ };
enum { RECIO__FPW_ALWAYS, RECIO__FPW_CHUNK, RECIO__FPW_MEAN, RECIO__FPW_MASKS, RECIO__FPW_MIX };
typedef struct recio__it_fpfield { /* 5 bytes an entry, not 12: the table is in every build (docs/footprint.md) */
    unsigned short off;
    unsigned char size, kind, when;
} recio__it_fpfield;
#define RECIO__FPF(f, k, w)                                                                                            \
    { offsetof(recio_iter_desc, f), sizeof(((recio_iter_desc *)0)->f), RECIO__FP_##k, RECIO__FPW_##w }
static const recio__it_fpfield recio__it_fpfields[] = {
    RECIO__FPF(uris, STR, ALWAYS),
    RECIO__FPF(rank, INT, ALWAYS),
    RECIO__FPF(nsplit, INT, ALWAYS),
    RECIO__FPF(rotate_shards, INT, ALWAYS),
    /* source */
    RECIO__FPF(source.mode, INT, ALWAYS),
    RECIO__FPF(source.index_path, STR, ALWAYS),
    RECIO__FPF(source.shuffle, INT, ALWAYS),
    RECIO__FPF(source.seed, INT, ALWAYS),
    RECIO__FPF(source.chunk_records, INT, CHUNK),
    RECIO__FPF(source.window_chunks, INT, CHUNK),
    RECIO__FPF(source.equalize, INT, ALWAYS),
    RECIO__FPF(source.key_begin, INT, ALWAYS),
    RECIO__FPF(source.key_end, INT, ALWAYS),
    /* item */
    RECIO__FPF(item.spec, STR, ALWAYS),
    RECIO__FPF(item.channels, INT, ALWAYS),
    RECIO__FPF(item.item_bytes, INT, ALWAYS),
    RECIO__FPF(item.mean_img, STR, ALWAYS),
    RECIO__FPF(item.mean_scale, F32, MEAN),
    RECIO__FPF(item.seed_aug, INT, ALWAYS),
    /* labels */
    RECIO__FPF(labels.width, INT, ALWAYS),
    RECIO__FPF(labels.pad_set, INT, ALWAYS),
    RECIO__FPF(labels.pad_value, F32, ALWAYS),
    RECIO__FPF(labels.strict, INT, ALWAYS),
    RECIO__FPF(labels.detection, INT, ALWAYS),
    RECIO__FPF(labels.masks, INT, ALWAYS),
    RECIO__FPF(labels.mask_fill, FILL, MASKS),
    RECIO__FPF(labels.imglist, STR, ALWAYS),
    /* mix */
    RECIO__FPF(mix.mixup_alpha, F32, MIX),
    RECIO__FPF(mix.cutmix_alpha, F32, MIX),
    RECIO__FPF(mix.prob, F32, MIX),
    RECIO__FPF(mix.num_classes, INT, MIX),
    /* run */
    RECIO__FPF(run.batch, INT, ALWAYS),
    RECIO__FPF(run.last_batch, INT, ALWAYS),
    RECIO__FPF(run.shuffle_buffer, INT, ALWAYS),
    RECIO__FPF(run.skip_bad, INT, ALWAYS),
};
#undef RECIO__FPF

static uint64_t recio__it_fp_u64s(uint64_t h, const uint64_t *v, unsigned n) {
    unsigned i;
    for (i = 0; i < n; i++) {
        unsigned char b[8];
        recio_store_u64le(b, v[i]);
        h = recio_fnv1a64(h, b, 8);
    }
    return h;
}

static int recio__it_fp_matters(const recio_iter_desc *d, unsigned when) {
    return when == RECIO__FPW_CHUNK   ? d->source.shuffle == RECIO_SHUFFLE_CHUNK
           : when == RECIO__FPW_MEAN  ? d->item.mean_img != NULL
           : when == RECIO__FPW_MASKS ? d->labels.masks != 0
           : when == RECIO__FPW_MIX   ? recio__it_mixing(d)
                                      : 1;
}

/* One field of the list: an integer of any width, a float's bits (0 for -0), a string with a mark
   that tells NULL from "", or mask_fill's label; 0 when it does not matter. */
static uint64_t recio__it_fp_field(uint64_t h, const recio_iter_desc *d, const recio__it_fpfield *f) {
    const unsigned char *p = (const unsigned char *)d + f->off;
    uint64_t v = 0;
    uint32_t u32;
    uint16_t u16;
    float x;
    const char *s;
    if (!recio__it_fp_matters(d, f->when)) return recio__it_fp_u64s(h, &v, 1);
    switch (f->kind) {
    case RECIO__FP_STR:
        memcpy(&s, p, sizeof s);
        v = s != NULL;
        h = recio__it_fp_u64s(h, &v, 1);
        return s ? recio_fnv1a64(h, s, strlen(s) + 1) : h;
    case RECIO__FP_F32:
        memcpy(&x, p, 4);
        if (x != 0) memcpy(&u32, &x, 4), v = u32;
        break;
    case RECIO__FP_FILL: {
        int fill;
        memcpy(&fill, p, sizeof fill);
        v = recio__mask_fill_value(fill);
        break;
    }
    default:
        if (f->size == 8) memcpy(&v, p, 8);
        else if (f->size == 4) memcpy(&u32, p, 4), v = u32;
        else if (f->size == 2) memcpy(&u16, p, 2), v = u16;
        else v = *p;
    }
    return recio__it_fp_u64s(h, &v, 1);
}

/* What the side files hold (not only their names): the mean image's floats and the .lst's lines in
   id order, so a checkpoint is refused when either file changed. */
static uint64_t recio__it_fp_files(const recio_iter *it, uint64_t h) {
    size_t i;
    if (RECIO__IT_TF(it) && it->mean) h = recio_fnv1a64(h, it->mean, it->d.item.item_bytes);
    for (i = 0; it->lines && i < it->lst.count; i++) {
        const recio_lst_item *l = &it->lst.items[it->lines[i].item];
        uint64_t v[2];
        v[0] = l->index, v[1] = l->nlabels;
        h = recio__it_fp_u64s(h, v, 2);
        if (l->nlabels) h = recio_fnv1a64(h, l->labels, (size_t)l->nlabels * sizeof *l->labels);
    }
    return h;
}

/* What a checkpoint must agree on to mean the same position: the fields of the list, then the side
   files' contents. */
static uint64_t recio__it_fingerprint(const recio_iter *it) {
    uint64_t h = RECIO_FNV1A_INIT;
    size_t i;
    for (i = 0; i < sizeof recio__it_fpfields / sizeof recio__it_fpfields[0]; i++)
        h = recio__it_fp_field(h, &it->d, &recio__it_fpfields[i]);
    return recio__it_fp_files(it, h);
}

/* The defaults, filled in one place, as the values they stand for (so the checkpoint fingerprint
   sees a default spelled out as the same options), one sub-desc at a time. */
static void recio__it_defaults(recio_iter_desc *d) {
    recio_split_desc *sd = &d->source;
    if (!d->nsplit) d->nsplit = 1;
    if (sd->index_path || sd->shuffle || sd->key_end) sd->mode = RECIO_SPLIT_INDEX; /* as the split reads them */
    if (!sd->chunk_records) sd->chunk_records = 256;
    if (!sd->window_chunks) sd->window_chunks = 16;
    if (!d->item.channels) d->item.channels = 3;
    if (!d->item.mean_scale) d->item.mean_scale = 1.0f;
    if (!d->item.seed_aug) d->item.seed_aug = sd->seed;
    if (!d->labels.width) d->labels.width = 1;
    if (!d->labels.pad_set) d->labels.pad_value = -1.0f, d->labels.pad_set = 1;
    if (!d->mix.prob) d->mix.prob = 1.0f;
    if (!d->run.batch) d->run.batch = 1;
    if (!d->run.prefetch) d->run.prefetch = d->run.workers + 1;
}

/* source: what the split takes, and what the iterator owns in it (the epoch, alloc and errmsg). */
static recio_err recio__it_desc_source(const recio_iter_desc *d, char *msg) {
    const recio_split_desc *sd = &d->source;
    if (sd->epoch || sd->errmsg || sd->alloc.alloc || sd->alloc.free || sd->alloc.user)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE,
                          "bad options: source.epoch, source.alloc and source.errmsg are the iterator's own "
                          "(recio_iter_reset, desc.alloc, desc.errmsg): leave them zero"),
               RECIO_ERR_ARG;
    if ((unsigned)sd->mode > RECIO_SPLIT_INDEX || (unsigned)sd->shuffle > RECIO_SHUFFLE_CHUNK ||
        (unsigned)sd->equalize > RECIO_EQUALIZE_DROP)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE,
                          "bad options: source.mode %d, shuffle %d, equalize %d (each 0, 1 or 2; mode 0 or 1)",
                          (int)sd->mode, (int)sd->shuffle, (int)sd->equalize),
               RECIO_ERR_ARG;
    if (d->rank >= d->nsplit)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "bad options: rank %u of %u", d->rank, d->nsplit), RECIO_ERR_ARG;
    return RECIO_OK;
}

static recio_err recio__it_desc_run(recio_iter_desc *d, char *msg) {
    recio_iter_run_desc *r = &d->run;
    if ((unsigned)r->last_batch > RECIO_LAST_ROLL_OVER || r->batch > (1u << 24) || d->labels.width > (1u << 16))
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "bad options: last_batch %d, batch %u, label width %u",
                          (int)r->last_batch, r->batch, d->labels.width),
               RECIO_ERR_ARG;
#ifndef RECIO_THREADS
    r->workers = 0;
#endif
    if (r->workers > 256 || r->prefetch > 4096)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "bad options: %u workers, prefetch %u", r->workers, r->prefetch),
               RECIO_ERR_ARG;
    if (r->workers && r->prefetch < 2) r->prefetch = 2; /* one batch with the consumer, one being made */
    return RECIO_OK;
}

static recio_err recio__it_desc(recio_iter_desc *d, char *msg) {
    const recio_iter_item_desc *item = &d->item;
    recio_err e;
    if (!d->uris || !*d->uris) return recio__fmt(msg, RECIO_ERRMSG_SIZE, "no dataset: uris is empty"), RECIO_ERR_ARG;
    if (!item->spec && (!item->transform || !item->item_bytes))
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "no spec, and no transform callback with item_bytes"), RECIO_ERR_ARG;
    recio__it_defaults(d);
    if (item->spec && item->channels != 1 && item->channels != 3 && item->channels != 4)
        return recio__fmt(msg, RECIO_ERRMSG_SIZE, "bad options: channels %d (decode to 1, 3 or 4 channels)",
                          item->channels),
               RECIO_ERR_ARG;
    if ((e = recio__it_desc_source(d, msg)) != RECIO_OK) return e;
    return recio__it_desc_run(d, msg);
}

#ifndef RECIO_NO_IMAGE
/* Run the chain on one record: its output is the item's shape. */
static recio_err recio__it_shape_of(recio_iter *it, const recio_record *rec, char *what) {
    recio_irecord ir;
    recio_image img, out;
    recio__scratch sc;
    recio_err e;
    memset(&sc, 0, sizeof sc);
    memset(&img, 0, sizeof img);
    memset(&out, 0, sizeof out);
    what[0] = 0;
    if ((e = recio_irecord_unpack(&ir, rec->data, rec->size)) == RECIO_OK &&
        (e = recio__decode(&img, ir.image, ir.image_size, it->d.item.channels, 0, what, RECIO_ERRMSG_SIZE,
                           &it->d.alloc)) == RECIO_OK &&
        (e = recio__apply_in(it->tf, &img, &out, 0, &sc, what, RECIO_ERRMSG_SIZE)) ==
            RECIO_OK) { /* what: the op that refused */
        it->shape = recio__image_shape(out.width, out.height, out.channels, out.dtype, out.layout);
        it->d.item.item_bytes = recio_image_bytes(&it->shape);
    }
    recio_image_free(&img);
    recio_image_free(&out);
    return e;
}

/* Key of the record the item shape comes from: the dataset's first (the first file starts with
   one), or with a key range the first the range takes (record 0 may be a header, as insightface's). */
static uint64_t recio__it_first_key(const recio_iter *it) {
    const recio_split *s = it->src.split;
    uint64_t g = recio__sp_first(s);
    unsigned f;
    if (!it->d.source.key_end) return 0;
    f = recio__sp_file_at(s, g);
    return RECIO__IT_KEY(f, g - s->files[f].base);
}

/* The item's chain from a spec (recio__it_spec at open, recio_iter_set_spec later): words in it->errmsg. */
static recio_err recio__it_parse(recio_iter *it, const char *spec, recio_transform **tf) {
    recio_transform_desc td;
    char what[RECIO_ERRMSG_SIZE];
    recio_err e;
    memset(&td, 0, sizeof td);
    td.alloc = it->d.alloc;
    td.errmsg = what;
    if ((e = recio_transform_parse_desc(tf, spec, &td)) != RECIO_OK)
        recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s", what);
    return e;
}

/* Run it->tf on the dataset's first record (with skip_bad: the first that decodes, among the first
   1000 of its file): its output is the item's shape (it->shape, item.item_bytes). */
static recio_err recio__it_shape_first(recio_iter *it) {
    recio_record rec;
    char what[RECIO_ERRMSG_SIZE];
    recio_err e;
    unsigned tries;
    uint64_t first = recio__it_first_key(it);
    if ((e = recio__it_src_read_at(it, first, &rec, it->errmsg)) != RECIO_OK) return e;
    for (tries = 1; (e = recio__it_shape_of(it, &rec, what)) != RECIO_OK; tries++) {
        recio__errf(it->errmsg, recio__it_file(it, first), rec.offset, "first record: %s",
                    what[0] ? what : recio_strerror(e));
        if (!it->d.run.skip_bad || !recio__it_undecodable(e) || tries == 1000 ||
            recio_reader_next(it->src.aux, &rec) != RECIO_OK)
            return e;
    }
    it->errmsg[0] = 0;
    return RECIO_OK;
}

/* Parse the spec and fix the item's shape from the first record. */
static recio_err recio__it_spec(recio_iter *it) {
    recio_err e;
    if (!it->d.item.spec) return RECIO_OK;
    if ((e = recio__it_parse(it, it->d.item.spec, &it->tf)) != RECIO_OK) return e;
    return recio__it_shape_first(it);
}
#else
static recio_err recio__it_spec(recio_iter *it) {
    if (!it->d.item.spec) return RECIO_OK;
    recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
               "a spec needs the image section, and this build has RECIO_NO_IMAGE: give a transform callback");
    return RECIO_ERR_UNSUPPORTED;
}
#define recio_transform_free(t) ((void)(t))
#endif

/* A side file (path_imglist, mean_img) into memory, through desc.fs. */
static recio_err recio__it_slurp(recio_iter *it, const char *path, char **text, size_t *n) {
    return recio__slurp(it->d.source.fs, &it->d.alloc, path, text, n, it->errmsg);
}

static int recio__it_line_cmp(const void *a, const void *b) {
    uint64_t x = ((const recio__it_line *)a)->id, y = ((const recio__it_line *)b)->id;
    return x < y ? -1 : x > y;
}

/* The .lst text as a list with a mask column (recio list --mask-root: "index label... image mask")
   or without (im2rec's): the kind desc.masks suggests first, then the other; only the labels are
   used, so either kind serves. When neither parses, the first kind's error. */
static recio_err recio__it_lst_parse(recio_iter *it, const char *text, size_t n) {
    char first[RECIO_ERRMSG_SIZE];
    recio_lst_desc d;
    recio_err e;
    memset(&d, 0, sizeof d);
    d.alloc = it->lst.alloc = it->d.alloc;
    d.mask_column = it->d.labels.masks != 0;
    d.errmsg = it->errmsg;
    if ((e = recio__lst_parse(&it->lst, text, n, it->d.labels.imglist, &d)) != RECIO_ERR_FORMAT) return e;
    recio__fmt(first, sizeof first, "%s", it->errmsg);
    d.mask_column = !d.mask_column;
    memset(&it->lst, 0, sizeof it->lst);
    it->lst.alloc = d.alloc;
    if ((e = recio__lst_parse(&it->lst, text, n, it->d.labels.imglist, &d)) == RECIO_ERR_FORMAT)
        recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s", first);
    return e;
}

/* desc.path_imglist: parse it with the INDEX section's .lst parser, and sort its lines by index. */
static recio_err recio__it_imglist(recio_iter *it) {
    char *text;
    size_t n, i;
    recio_err e;
    if (!it->d.labels.imglist) return RECIO_OK;
    if ((e = recio__it_slurp(it, it->d.labels.imglist, &text, &n)) != RECIO_OK) return e;
    e = recio__it_lst_parse(it, text, n);
    recio__free(&it->d.alloc, text);
    if (e != RECIO_OK) return e; /* recio__it_lst_parse said why in it->errmsg */
    if (!(it->lines = (recio__it_line *)recio__it_calloc(&it->d.alloc, it->lst.count + 1, sizeof *it->lines)))
        return RECIO_ERR_NOMEM;
    for (i = 0; i < it->lst.count; i++) it->lines[i].id = it->lst.items[i].index, it->lines[i].item = i;
    qsort(it->lines, it->lst.count, sizeof *it->lines, recio__it_line_cmp);
    for (i = 1; i < it->lst.count; i++)
        if (it->lines[i].id == it->lines[i - 1].id)
            return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                              "%s: index %U is on two lines (path_imglist needs one line per image id)",
                              it->d.labels.imglist, it->lines[i].id),
                   RECIO_ERR_FORMAT;
    return RECIO_OK;
}

#ifndef RECIO_NO_IMAGE /* a mean image needs a spec: records-only builds leave the .npy reader out */
/* A .npy array's layout: its shape, element order and byte order, and where its data starts. */
typedef struct recio__npy {
    size_t dim[3];
    int ndim, fortran, big;
    size_t data_at;
} recio__npy;

static const char *recio__py_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

/* A quoted Python string at p (either quote, no escapes) into out: past it, or NULL. */
static const char *recio__py_str(const char *p, char *out, size_t cap) {
    char q = *p;
    size_t k = 0;
    if (q != '\'' && q != '"') return NULL;
    for (p++; *p && *p != q; p++) {
        if (*p == '\\' || k + 1 >= cap) return NULL;
        out[k++] = *p;
    }
    out[k] = 0;
    return *p == q ? p + 1 : NULL;
}

/* True or False at p into *v: past it, or NULL. */
static const char *recio__py_bool(const char *p, int *v) {
    if (!strncmp(p, "True", 4)) return *v = 1, p + 4;
    if (!strncmp(p, "False", 5)) return *v = 0, p + 5;
    return NULL;
}

/* A tuple of whole numbers, "(3, 16, 16)", "(3,16,16,)", "(16L,)", "()": past it, or NULL; the
   first three into np->dim, how many into np->ndim. */
static const char *recio__py_shape(const char *p, recio__npy *np) {
    np->ndim = 0;
    if (*p != '(') return NULL;
    for (p = recio__py_ws(p + 1); *p != ')'; p = recio__py_ws(p)) {
        uint64_t v = 0;
        if (*p < '0' || *p > '9') return NULL;
        for (; *p >= '0' && *p <= '9'; p++)
            if ((v = v * 10 + (uint64_t)(*p - '0')) > ((uint64_t)1 << 31)) return NULL; /* no item is that big */
        if (*p == 'L') p++;                                                             /* Python 2's long */
        if (np->ndim < 3) np->dim[np->ndim] = (size_t)v;
        np->ndim++;
        p = recio__py_ws(p);
        if (*p == ',') p++;
        else if (*p != ')') return NULL;
    }
    return p + 1;
}

/* The header's dict, as numpy.lib.format writes and reads it: a Python literal with exactly the
   keys descr, fortran_order and shape, in any order, either quote, any spacing, a trailing comma.
   0, or -1 when it is not such a dict. */
static int recio__npy_dict(const char *p, recio__npy *np, char *descr, size_t cap) {
    unsigned seen = 0, bit;
    if (*(p = recio__py_ws(p)) != '{') return -1;
    for (p = recio__py_ws(p + 1); *p != '}';) {
        char key[16];
        if (!(p = recio__py_str(p, key, sizeof key)) || *(p = recio__py_ws(p)) != ':') return -1;
        p = recio__py_ws(p + 1);
        if (!strcmp(key, "descr")) bit = 1, p = recio__py_str(p, descr, cap);
        else if (!strcmp(key, "fortran_order")) bit = 2, p = recio__py_bool(p, &np->fortran);
        else if (!strcmp(key, "shape")) bit = 4, p = recio__py_shape(p, np);
        else return -1;
        if (!p || (seen & bit)) return -1;
        seen |= bit;
        if (*(p = recio__py_ws(p)) == ',') p = recio__py_ws(p + 1);
        else if (*p != '}') return -1;
    }
    return seen == 7 && !*recio__py_ws(p + 1) ? 0 : -1; /* numpy pads with spaces and a newline */
}

/* A .npy file's header (format 1, 2 or 3): float32 of either byte order, C or Fortran order, three
   dimensions. */
static recio_err recio__npy_header(const char *t, size_t n, recio__npy *np, char *why) {
    size_t hl, at;
    char hdr[4096], descr[16];
    memset(np, 0, sizeof *np);
    if (n < 10 || memcmp(t, "\x93NUMPY", 6) != 0)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "not a NumPy .npy file"), RECIO_ERR_FORMAT;
    hl = t[6] == 1 ? (size_t)((unsigned char)t[8] | (unsigned char)t[9] << 8)
         : n >= 12 ? (size_t)recio_load_u32le(t + 8)
                   : n;
    at = t[6] == 1 ? 10 : 12;
    if (hl >= sizeof hdr || at + hl > n)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, ".npy header of %U bytes does not fit", (uint64_t)hl),
               RECIO_ERR_FORMAT;
    memcpy(hdr, t + at, hl);
    hdr[hl] = 0;
    np->data_at = at + hl;
    while (hl && (hdr[hl - 1] == ' ' || hdr[hl - 1] == '\n')) hdr[--hl] = 0; /* the padding, out of the messages */
    if (memchr(hdr, 0, hl) || recio__npy_dict(hdr, np, descr, sizeof descr))
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "the .npy header is not a dict of descr, fortran_order and shape: %s",
                          hdr),
               RECIO_ERR_FORMAT;
    if (strcmp(descr, "<f4") != 0 && strcmp(descr, ">f4") != 0)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "the .npy must be float32 ('<f4' or '>f4'), not '%s'", descr),
               RECIO_ERR_FORMAT;
    np->big = descr[0] == '>';
    if (np->ndim != 3)
        return recio__fmt(why, RECIO_ERRMSG_SIZE, "the .npy shape must have three dimensions, (C,H,W) or (H,W,C): %s",
                          hdr),
               RECIO_ERR_FORMAT;
    return RECIO_OK;
}

/* The mean image's floats into it->mean, in the item's layout: its own order when the .npy is shaped
   like the item, transposed when it is shaped like the other layout; a Fortran-order or big-endian
   file read as such. */
static recio_err recio__it_mean_fill(recio_iter *it, const char *t, const recio__npy *np, char *why) {
    const recio_image *sh = &it->shape;
    const size_t *dim = np->dim;
    size_t C = (size_t)sh->channels, H = (size_t)sh->height, W = (size_t)sh->width, c, y, x, i[3];
    int chw = sh->layout == RECIO_CHW, same, other;
    same = chw ? dim[0] == C && dim[1] == H && dim[2] == W : dim[0] == H && dim[1] == W && dim[2] == C;
    other = chw ? dim[0] == H && dim[1] == W && dim[2] == C : dim[0] == C && dim[1] == H && dim[2] == W;
    if (!same && !other)
        return recio__fmt(why, RECIO_ERRMSG_SIZE,
                          "its shape (%U, %U, %U) is not the item's (C,H,W) = (%U, %U, %U) nor (H,W,C)",
                          (uint64_t)dim[0], (uint64_t)dim[1], (uint64_t)dim[2], (uint64_t)C, (uint64_t)H, (uint64_t)W),
               RECIO_ERR_ARG;
    for (c = 0; c < C; c++)
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                size_t dst = chw ? (c * H + y) * W + x : (y * W + x) * C + c, src;
                const unsigned char *q;
                uint32_t u;
                if (chw == same) i[0] = c, i[1] = y, i[2] = x; /* the element's index in the .npy's shape */
                else i[0] = y, i[1] = x, i[2] = c;
                src = np->fortran ? i[0] + dim[0] * (i[1] + dim[1] * i[2]) : (i[0] * dim[1] + i[1]) * dim[2] + i[2];
                q = (const unsigned char *)t + 4 * src;
                u = np->big ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]
                            : recio_load_u32le(q);
                memcpy(&it->mean[dst], &u, 4);
            }
    return RECIO_OK;
}

/* The .npy of desc.mean_img into it->mean. */
static recio_err recio__it_mean_load(recio_iter *it) {
    char *t, why[RECIO_ERRMSG_SIZE];
    size_t n, floats = it->d.item.item_bytes / 4, d01;
    recio__npy np;
    recio_err e;
    if ((e = recio__it_slurp(it, it->d.item.mean_img, &t, &n)) != RECIO_OK) return e;
    if ((e = recio__npy_header(t, n, &np, why)) == RECIO_OK) {
        d01 = np.dim[0] * np.dim[1]; /* each below 2^31: no wrap */
        if (!d01 || floats % d01 || np.dim[2] != floats / d01 || n - np.data_at < it->d.item.item_bytes)
            recio__fmt(why, RECIO_ERRMSG_SIZE, "shape (%U, %U, %U) with %U bytes of data, and an item has %U bytes",
                       (uint64_t)np.dim[0], (uint64_t)np.dim[1], (uint64_t)np.dim[2], (uint64_t)(n - np.data_at),
                       (uint64_t)it->d.item.item_bytes),
                e = RECIO_ERR_ARG;
        else if (!(it->mean = (float *)recio__malloc(&it->d.alloc, it->d.item.item_bytes)))
            e = RECIO_ERR_NOMEM, recio__fmt(why, RECIO_ERRMSG_SIZE, "out of memory");
        else e = recio__it_mean_fill(it, t + np.data_at, &np, why);
    }
    recio__free(&it->d.alloc, t);
    if (e != RECIO_OK) recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s: mean_img: %s", it->d.item.mean_img, why);
    return e;
}
#else
static recio_err recio__it_mean_load(recio_iter *it) {
    (void)it;
    return RECIO_ERR_UNSUPPORTED; /* never reached: without the image section no spec is accepted */
}
#endif

/* desc.mean_img: load the .npy (needs a spec with f32 output: the mean is its last step). */
static recio_err recio__it_mean(recio_iter *it) {
    if (!it->d.item.mean_img) return RECIO_OK;
    if (!RECIO__IT_TF(it) || it->shape.dtype != RECIO_F32)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                          "%s: mean_img needs a spec whose output is float32 (end it with `float`, or `float chw`)",
                          it->d.item.mean_img),
               RECIO_ERR_ARG;
    return recio__it_mean_load(it);
}

/* Everything a batch needs per item (RECIO_MAX_BATCH_BYTES limits it all, not only the tensor): the
   item, its soft labels, labels and mask, and the bookkeeping (id, key, checksum and two counts in
   the slot; key, offset, length and skip_bad's mark beside it; the iterator's five carried keys).
   Within the limit (and a quarter of size_t, for a 32-bit host) no offset of the layout can wrap. */
static recio_err recio__it_budget(recio_iter *it) {
    static const char *const knob[4] = {"the item", "num_classes", "label_width", "the item"};
    const recio_iter_desc *d = &it->d;
    uint64_t part[5], per = 0, lim = RECIO_MAX_BATCH_BYTES < SIZE_MAX / 4 ? RECIO_MAX_BATCH_BYTES : SIZE_MAX / 4,
                      b = d->run.batch;
    unsigned k, big = 0;
    char parts[200];
    part[0] = d->item.item_bytes, part[1] = recio__it_mixes(it) ? (uint64_t)d->mix.num_classes * 4 : 0;
    part[2] = (uint64_t)d->labels.width * 4, part[3] = it->mask_bytes;
    part[4] = 8 + 8 + 8 + 4 + 4 + (8 + 2 * sizeof(size_t)) + (d->run.skip_bad ? 9 : 0) + 5 * 8;
    for (k = 0; k < 5; k++) {
        per += part[k] > lim ? lim + 1 : part[k]; /* each at most lim + 1: the sum cannot wrap */
        if (k < 4 && part[k] > part[big]) big = k;
    }
    if (per <= lim / b) return RECIO_OK;
    recio__fmt(parts, sizeof parts,
               "%U of image, %U of soft labels, %U of labels, %U of mask, %U of ids, keys and counts", part[0], part[1],
               part[2], part[3], part[4]);
    recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
               "a batch of %U items of %U bytes each (%s) is more than %s (%U bytes): make the batch or %s smaller", b,
               per, parts, lim == RECIO_MAX_BATCH_BYTES ? "RECIO_MAX_BATCH_BYTES" : "what this host's size_t holds",
               lim, knob[big]);
    return RECIO_ERR_LIMIT;
}

/* Batch layout: items, then labels, ids, keys, item checksums, label counts and object counts
   (8-aligned), masks and soft labels; recio__it_budget has bounded the whole. */
static recio_err recio__it_layout(recio_iter *it) {
    size_t b = it->d.run.batch, items, labs;
    recio_err e;
    if ((uint64_t)it->d.item.item_bytes * b > RECIO_MAX_BATCH_BYTES || it->d.item.item_bytes > SIZE_MAX / b) {
        recio__fmt(
            it->errmsg, RECIO_ERRMSG_SIZE,
            "a batch of %U items of %U bytes is %U bytes, more than RECIO_MAX_BATCH_BYTES (%U): make the batch smaller",
            (uint64_t)b, (uint64_t)it->d.item.item_bytes, (uint64_t)it->d.item.item_bytes * b,
            (uint64_t)RECIO_MAX_BATCH_BYTES);
        return RECIO_ERR_LIMIT;
    }
    /* masks and soft labels come with a spec only (a records-only build compiles them out) */
    it->mask_bytes = RECIO__IT_TF(it) && it->d.labels.masks ? (size_t)it->shape.width * it->shape.height : 0;
    if (recio__it_mixing(&it->d) && (e = recio__it_mix_check(it)) != RECIO_OK) return e;
    if ((e = recio__it_budget(it)) != RECIO_OK) return e;
    items = (it->d.item.item_bytes * b + 7) & ~(size_t)7;
    labs = (b * it->d.labels.width * sizeof(float) + 7) & ~(size_t)7;
    it->lab_off = items;
    it->ids_off = items + labs;
    it->keys_off = it->ids_off + 8 * b;
    it->sums_off = it->keys_off + 8 * b;
    it->cnt_off = it->sums_off + 8 * b;
    it->obj_off = it->cnt_off + 4 * b;
    it->mask_off = (it->obj_off + 4 * b + 7) & ~(size_t)7;
    it->soft_off = (it->mask_off + it->mask_bytes * b + 7) & ~(size_t)7;
    it->out_bytes = (it->soft_off + (recio__it_mixes(it) ? (size_t)it->d.mix.num_classes * 4 * b : 0) + 7) & ~(size_t)7;
    return RECIO_OK;
}

static recio_err recio__it_alloc(recio_iter *it) {
    const recio_allocator *a = &it->d.alloc;
    size_t b = it->d.run.batch, sb = it->d.run.shuffle_buffer;
    unsigned i;
    it->nslots = it->d.run.workers ? it->d.run.prefetch : 1;
    it->slots = (recio__it_slot *)recio__it_calloc(a, it->nslots, sizeof *it->slots);
    /* the five key arrays of a batch's length are one block (first owns it; close frees first) */
    if ((it->first = (uint64_t *)recio__it_calloc(a, b, 5 * 8)) != NULL)
        it->carry = it->first + b, it->carry_in = it->carry + b, it->carry_out = it->carry_in + b,
        it->carry_next = it->carry_out + b;
    it->sbuf = (recio__it_bytes *)recio__it_calloc(a, sb, sizeof *it->sbuf);
    it->skey = (uint64_t *)recio__it_calloc(a, sb, 8);
    it->nscratch = it->d.run.workers ? it->d.run.workers : 1;
    it->scratch = (recio__it_bytes *)recio__it_calloc(a, it->nscratch, sizeof *it->scratch);
    if (!it->slots || !it->first || !it->sbuf || !it->skey || !it->scratch) return RECIO_ERR_NOMEM;
    for (i = 0; i < it->nslots; i++) {
        recio__it_slot *s = &it->slots[i];
        /* key, off and len in one block (key owns it), as bad_key and bad (bad_key owns that) */
        if (!(s->key = (uint64_t *)recio__it_calloc(a, b, 8 + 2 * sizeof(size_t)))) return RECIO_ERR_NOMEM;
        s->off = (size_t *)(void *)(s->key + b), s->len = s->off + b;
        if (!it->d.run.skip_bad) continue;
        s->bad_what = (char *)recio__it_calloc(a, RECIO_ITER_BAD_KEEP, RECIO_ERRMSG_SIZE);
        if (!(s->bad_key = (uint64_t *)recio__it_calloc(a, b, 8 + 1)) || !s->bad_what) return RECIO_ERR_NOMEM;
        s->bad = (unsigned char *)(s->bad_key + b);
    }
    if (it->d.run.skip_bad &&
        !(it->skipped = (recio_iter_bad *)recio__it_calloc(a, RECIO_ITER_BAD_KEEP, sizeof *it->skipped)))
        return RECIO_ERR_NOMEM;
    if (!it->d.run.workers) {
        it->slots[0].out = (unsigned char *)recio__it_calloc(a, it->out_bytes, 1);
        it->slots[0].errmsg = it->pull_msg;
        if (!it->slots[0].out) return RECIO_ERR_NOMEM;
    }
    return RECIO_OK;
}

#ifdef RECIO_THREADS
/* The workers and their ring of batches of out_bytes, producing it->epoch (at open, and again when
   recio_iter_set_spec's switch changed the batch's size). */
static recio_err recio__it_pf_create(recio_iter *it) {
    recio_prefetch_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.epoch = it->epoch;
    pd.fetch = recio__it_pf_fetch;
    pd.work = recio__it_pf_work;
    pd.begin = recio__it_pf_begin;
    pd.user = it;
    pd.depth = it->nslots;
    pd.threads = it->d.run.workers;
    pd.slot_size = it->out_bytes;
    pd.alloc = it->d.alloc;
    return recio_prefetch_create(&it->pf, &pd);
}

static recio_err recio__it_start(recio_iter *it) {
    if (recio__mutex_init(&it->mu)) return RECIO_ERR_NOMEM;
    it->mu_ok = 1;
    return it->d.run.workers ? recio__it_pf_create(it) : RECIO_OK;
}
#endif

RECIODEF void recio_iter_close(recio_iter *it) {
    const recio_allocator *a;
    unsigned i;
    if (!it) return;
    a = &it->d.alloc;
#ifdef RECIO_THREADS
    recio_prefetch_destroy(it->pf); /* first: it stops the threads that use everything below */
    if (it->mu_ok) recio__mutex_destroy(&it->mu);
#endif
    for (i = 0; it->slots && i < it->nslots; i++) {
        recio__free(a, it->slots[i].raw.p);
        recio__free(a, it->slots[i].key);     /* and off, len */
        recio__free(a, it->slots[i].bad_key); /* and bad */
        recio__free(a, it->slots[i].bad_what);
        if (!it->d.run.workers) recio__free(a, it->slots[i].out);
    }
    recio__free(a, it->skipped);
    for (i = 0; it->sbuf && i < it->d.run.shuffle_buffer; i++) recio__free(a, it->sbuf[i].p);
    for (i = 0; it->scratch && i < it->nscratch; i++) recio__free(a, it->scratch[i].p);
    recio__free(a, it->scratch);
    recio__it_cache_free(it);
    recio_transform_free(it->tf);
    recio_transform_free(it->next_tf);
    recio__free(a, it->next_spec);
    recio__free(a, it->own_spec);
    recio__free(a, it->mean);
    recio__free(a, it->lines);
    recio_lst_free(&it->lst);
    recio__free(a, it->slots);
    recio__free(a, it->sbuf);
    recio__free(a, it->skey);
    recio__free(a, it->first); /* and the carry arrays */
    recio__it_src_free(it);
    recio__free(a, it);
}

/* An open's steps in order, the first error stopping them (its words in it->errmsg, or none). */
static recio_err recio__it_open_steps(recio_iter *it) {
    recio_err e;
    if ((e = recio__it_desc(&it->d, it->errmsg)) == RECIO_OK && (e = recio__it_src_init(it)) == RECIO_OK &&
        (e = recio__it_spec(it)) == RECIO_OK && (e = recio__it_cache_init(it)) == RECIO_OK &&
        (e = recio__it_imglist(it)) == RECIO_OK && (e = recio__it_mean(it)) == RECIO_OK &&
        (e = recio__it_layout(it)) == RECIO_OK && (e = recio__it_alloc(it)) == RECIO_OK) {
        it->fingerprint = recio__it_fingerprint(it);
#ifdef RECIO_THREADS
        e = recio__it_start(it);
#endif
    }
    return e;
}

RECIODEF recio_err recio_iter_open(recio_iter **out, const recio_iter_desc *desc) {
    recio_iter *it;
    recio_err e = RECIO_ERR_NOMEM;
    char *errmsg = desc ? desc->errmsg : NULL;
    if (errmsg) errmsg[0] = 0;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    if (!desc) return RECIO_ERR_ARG;
    if ((it = (recio_iter *)recio__it_calloc(&desc->alloc, 1, sizeof *it)) != NULL) {
        it->d = *desc;
        it->kn = recio__kern_pick();
        it->need_begin = 1;
        e = recio__it_open_steps(it);
    }
    if (e != RECIO_OK) { /* a handle that cannot be allocated says so too */
        if (errmsg) recio__fmt(errmsg, RECIO_ERRMSG_SIZE, "%s", it && it->errmsg[0] ? it->errmsg : recio_strerror(e));
        recio_iter_close(it);
        return e;
    }
    *out = it;
    return RECIO_OK;
}

static void recio__it_release(recio_iter *it) {
#ifdef RECIO_THREADS
    if (it->held) recio_prefetch_release(it->pf, it->held);
    it->held = NULL;
#else
    (void)it;
#endif
}

static void recio__it_view(recio_iter *it, const recio__it_slot *s, recio_batch *b) {
    b->data = s->out;
    b->labels = (const float *)(s->out + it->lab_off);
    b->ids = (const uint64_t *)(s->out + it->ids_off);
    b->keys = (const uint64_t *)(s->out + it->keys_off);
    b->sums = it->d.run.checksums ? (const uint64_t *)(s->out + it->sums_off) : NULL;
    b->count = s->count;
    b->pad = s->pad;
    b->batch = it->d.run.batch;
    b->item_bytes = it->d.item.item_bytes;
    b->item = it->shape;
    b->label_width = it->d.labels.width;
    b->epoch = it->epoch;
    b->index = it->base + s->seq;
    b->skipped = s->nbad;
    b->workers = it->d.run.workers; /* 0 when RECIO_THREADS is missing: say so, never silently */
    b->label_counts = (const unsigned *)(s->out + it->cnt_off);
    b->objects = it->d.labels.detection ? (const unsigned *)(s->out + it->obj_off) : NULL;
    b->masks = it->mask_bytes ? s->out + it->mask_off : NULL;
    b->soft_labels = recio__it_mixes(it) ? (const float *)(s->out + it->soft_off) : NULL;
    b->lam = recio__it_mixes(it) ? s->lam : 1.0f;
    b->mix = recio__it_mixes(it) ? s->mix : 0;
    it->delivered = b->index + 1;
    recio__it_tally(it, s);
}

/* Pull mode: make the next batch here, on the caller's thread. */
static recio_err recio__it_pull(recio_iter *it, recio__it_slot **out) {
    recio__it_slot *s = &it->slots[0];
    recio_err e;
    s->errmsg[0] = 0;
    if (it->need_begin) {
        it->need_begin = 0;
        if ((e = recio__it_begin(it, it->epoch, s->errmsg)) != RECIO_OK) return e;
    }
    s->seq = it->pull_seq;
    s->epoch = it->epoch;
    if ((e = recio__it_fetch(it, s)) != RECIO_OK) return e;
    if ((e = recio__it_work(it, s, 0)) != RECIO_OK) return e;
    it->pull_seq++;
    *out = s;
    return RECIO_OK;
}

static recio_err recio__it_produce(recio_iter *it, recio__it_slot **s) {
#ifdef RECIO_THREADS
    if (it->pf) {
        recio_prefetch_slot *ps;
        recio_err e = recio_prefetch_next(it->pf, &ps);
        if (e != RECIO_OK) {
            recio__fmt(it->pull_msg, RECIO_ERRMSG_SIZE, "%s", recio_prefetch_errmsg(it->pf));
            return e;
        }
        it->held = ps;
        *s = &it->slots[ps->index];
        return RECIO_OK;
    }
#endif
    return recio__it_pull(it, s);
}

RECIODEF recio_err recio_iter_next(recio_iter *it, recio_batch *b) {
    recio__it_slot *s = NULL;
    recio_err e;
    if (!it || !b) return RECIO_ERR_ARG;
    recio__it_release(it);
    if (it->sticky) return it->sticky;
    if (it->ended) return RECIO_END;
    e = recio__it_produce(it, &s);
    if (e == RECIO_END) {
        it->ended = 1;
        RECIO__IT_LOCK(it);
        memcpy(it->carry_next, it->carry_out, sizeof *it->carry_out * it->ncarry_out);
        it->ncarry_next = it->ncarry_out;
        RECIO__IT_UNLOCK(it);
        return e;
    }
    if (e != RECIO_OK) {
        recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s", it->pull_msg[0] ? it->pull_msg : recio_strerror(e));
        return it->sticky = e;
    }
    recio__it_view(it, s, b);
    return RECIO_OK;
}

/* Restart the pipeline at it->epoch, skipping `skip` batches, fed by ncarry roll-over keys. */
RECIO__NOINLINE static void recio__it_restart(recio_iter *it, uint64_t skip, const uint64_t *carry, unsigned ncarry) {
    recio__it_release(it);
    RECIO__IT_LOCK(it);
    if (carry != it->carry_in) memcpy(it->carry_in, carry, sizeof *carry * ncarry);
    it->ncarry_in = ncarry;
    it->ncarry_out = 0;
    it->skip = skip;
    RECIO__IT_UNLOCK(it);
    it->base = it->delivered = skip;
    it->ended = 0;
    it->sticky = RECIO_OK;
    it->errmsg[0] = it->pull_msg[0] = 0;
    it->pull_seq = 0;
    it->need_begin = 1;
#ifdef RECIO_THREADS
    if (it->pf) recio_prefetch_reset(it->pf, it->epoch);
#endif
}

/* ---- a new spec from the next epoch on (recio_iter_set_spec) ---- */

#ifndef RECIO_NO_IMAGE
static void recio__it_drop_next(recio_iter *it) {
    recio_transform_free(it->next_tf);
    recio__free(&it->d.alloc, it->next_spec);
    it->next_tf = NULL, it->next_spec = NULL;
}

RECIODEF recio_err recio_iter_set_spec(recio_iter *it, const char *spec) {
    recio_transform *tf = NULL;
    char *copy;
    recio_err e;
    if (!it) return RECIO_ERR_ARG;
    if (!spec) return recio__it_drop_next(it), RECIO_OK;
    if (!it->tf || it->d.item.mean_img)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "set_spec: %s",
                          !it->tf ? "the iterator was opened with a transform callback, not a spec"
                                  : "item.mean_img is shaped as the item of the spec the iterator was opened with"),
               RECIO_ERR_ARG;
    if ((e = recio__it_parse(it, spec, &tf)) != RECIO_OK) return e; /* the words name the column */
    if (!(copy = recio__strdup(&it->d.alloc, spec))) return recio_transform_free(tf), RECIO_ERR_NOMEM;
    recio__it_drop_next(it);
    it->next_tf = tf, it->next_spec = copy;
    return RECIO_OK;
}

/* The pull-mode batch buffer at the size of the layout in force. */
static recio_err recio__it_pull_buffer(recio_iter *it) {
    unsigned char *out;
    if (it->d.run.workers) return RECIO_OK; /* the prefetcher's ring holds them */
    if (!(out = (unsigned char *)recio__it_calloc(&it->d.alloc, it->out_bytes, 1))) return RECIO_ERR_NOMEM;
    recio__free(&it->d.alloc, it->slots[0].out);
    it->slots[0].out = out;
    return RECIO_OK;
}

/* Make it->next_tf the chain in force (workers stopped): its shape from the first record, the batch
   layout and buffer. On failure the old chain is back, with its layout, and the words in it->errmsg. */
static recio_err recio__it_take_next(recio_iter *it) {
    recio_transform *old = it->tf;
    recio_image shape = it->shape;
    size_t bytes = it->d.item.item_bytes;
    recio_err e;
    char why[RECIO_ERRMSG_SIZE];
    it->tf = it->next_tf;
    if ((e = recio__it_shape_first(it)) == RECIO_OK && (e = recio__it_layout(it)) == RECIO_OK &&
        (e = recio__it_pull_buffer(it)) == RECIO_OK) {
        recio_transform_free(old);
        recio__free(&it->d.alloc, it->own_spec);
        it->d.item.spec = it->own_spec = it->next_spec;
        it->next_tf = NULL, it->next_spec = NULL;
        return RECIO_OK;
    }
    recio__fmt(why, sizeof why, "set_spec: the new spec '%s' is not taken: %s", it->next_spec,
               it->errmsg[0] ? it->errmsg : recio_strerror(e));
    recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s", why);
    it->tf = old, it->shape = shape, it->d.item.item_bytes = bytes;
    recio__it_layout(it); /* it held before: it holds again */
    recio__it_drop_next(it);
    return e;
}

/* The switch at a reset: the new chain, a cache cut for it (its budget starts over), the
   fingerprint of an iterator opened with it. The cache only saves work: cutting it may fail
   (memory) and leave it off, the batches are the same. */
static recio_err recio__it_switch(recio_iter *it) {
    recio_err e = recio__it_take_next(it);
    if (e != RECIO_OK) return e;
    recio__it_cache_free(it);
    memset(&it->cache, 0, sizeof it->cache);
    if (recio__it_cache_init(it) != RECIO_OK) {
        recio__it_cache_free(it);
        memset(&it->cache, 0, sizeof it->cache);
        recio__fmt(it->cache.why, sizeof it->cache.why,
                   "out of memory cutting the new spec's chain (recio_iter_set_spec)");
    }
    it->fingerprint = recio__it_fingerprint(it);
    return RECIO_OK;
}
#else
RECIODEF recio_err recio_iter_set_spec(recio_iter *it, const char *spec) {
    (void)spec;
    if (it)
        recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                   "set_spec: a spec needs the image section (this build has RECIO_NO_IMAGE)");
    return it ? RECIO_ERR_UNSUPPORTED : RECIO_ERR_ARG;
}
static recio_err recio__it_switch(recio_iter *it) {
    (void)it;
    return RECIO_OK;
}
#endif

/* A pending spec at a reset: stop the workers (they use the chain and the layout) and switch; the
   reset starts them again. A switch that fails leaves the old spec, still working. */
static recio_err recio__it_stop_switch(recio_iter *it) {
    recio__it_release(it);
#ifdef RECIO_THREADS
    recio_prefetch_destroy(it->pf);
    it->pf = NULL;
#endif
    return recio__it_switch(it);
}

/* The workers again after a switch, at the epoch the restart set up. */
static recio_err recio__it_restart_workers(recio_iter *it) {
#ifdef RECIO_THREADS
    recio_err e;
    if (it->d.run.workers && (e = recio__it_pf_create(it)) != RECIO_OK)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "set_spec: cannot start the workers again"), it->sticky = e;
#else
    (void)it;
#endif
    return RECIO_OK;
}

RECIODEF recio_err recio_iter_reset(recio_iter *it) {
    recio_err e = RECIO_OK, w;
    char why[RECIO_ERRMSG_SIZE];
    int switching;
    if (!it) return RECIO_ERR_ARG;
    switching = it->next_tf != NULL;
    it->epoch++;
    if (switching && (e = recio__it_stop_switch(it)) != RECIO_OK) recio__fmt(why, sizeof why, "%s", it->errmsg);
    /* only a finished epoch leaves records to roll over */
    recio__it_restart(it, 0, it->carry_next, it->ended ? it->ncarry_next : 0);
    it->ncarry_next = 0;
    if (switching && (w = recio__it_restart_workers(it)) != RECIO_OK) return w;
    if (e != RECIO_OK)
        recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "%s", why); /* the restart cleared the switch's words */
    return e;
}

RECIODEF recio_err recio_iter_save(const recio_iter *it, void *buf, size_t cap, size_t *size) {
    unsigned char *p = (unsigned char *)buf;
    const uint64_t *carry = it ? (it->ended ? it->carry_next : it->carry_in) : NULL;
    unsigned i, n;
    if (!it || !size) return RECIO_ERR_ARG;
    n = it->ended ? it->ncarry_next : it->ncarry_in;
    *size = RECIO__IT_BLOB(n);
    if (!buf) return RECIO_OK;
    if (cap < *size) return RECIO_ERR_SMALL;
    recio_store_u32le(p, RECIO__IT_MAGIC);
    recio_store_u32le(p + 4, RECIO__IT_VERSION);
    recio_store_u64le(p + 8, it->fingerprint);
    recio_store_u64le(p + 16, it->epoch);
    recio_store_u64le(p + 24, it->delivered);
    recio_store_u32le(p + 32, (uint32_t)it->ended);
    recio_store_u32le(p + 36, n);
    for (i = 0; i < n; i++) recio_store_u64le(p + 40 + 8 * (size_t)i, carry[i]);
    recio_store_u64le(p + *size - 8, recio_fnv1a64(RECIO_FNV1A_INIT, p, *size - 8));
    return RECIO_OK;
}

/* Why a blob cannot be restored into it (words into it->errmsg), or RECIO_OK. */
static recio_err recio__it_blob_check(recio_iter *it, const unsigned char *p, size_t size) {
    uint32_t n, v;
    if (size < 8 || recio_load_u32le(p) != RECIO__IT_MAGIC)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "not a recio iterator checkpoint (no RCIT magic)"),
               RECIO_ERR_FORMAT;
    if ((v = recio_load_u32le(p + 4)) != RECIO__IT_VERSION)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                          "checkpoint of version %u: this recio reads version %u (save it again with this recio)", v,
                          RECIO__IT_VERSION),
               RECIO_ERR_FORMAT;
    if (size < RECIO__IT_BLOB(0))
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "checkpoint is cut short: %U bytes, less than %U",
                          (uint64_t)size, (uint64_t)RECIO__IT_BLOB(0)),
               RECIO_ERR_FORMAT;
    if ((uint64_t)size != 48 + 8 * (uint64_t)(n = recio_load_u32le(p + 36)))
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                          "checkpoint is damaged: %U bytes, and its header says %U (48 + 8 per rolled-over record)",
                          (uint64_t)size, 48 + 8 * (uint64_t)n),
               RECIO_ERR_FORMAT;
    if (recio_load_u64le(p + size - 8) != recio_fnv1a64(RECIO_FNV1A_INIT, p, size - 8))
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                          "checkpoint is damaged: its check sum does not match its bytes"),
               RECIO_ERR_FORMAT;
    if (n >= it->d.run.batch || recio_load_u32le(p + 32) > 1)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE,
                          "checkpoint is damaged: %u rolled-over records for a batch of %u", n, it->d.run.batch),
               RECIO_ERR_FORMAT;
    if (recio_load_u64le(p + 8) != it->fingerprint)
        return recio__fmt(it->errmsg, RECIO_ERRMSG_SIZE, "checkpoint was made with other options or files"),
               RECIO_ERR_ARG;
    return RECIO_OK;
}

RECIODEF recio_err recio_iter_restore(recio_iter *it, const void *blob, size_t size) {
    const unsigned char *p = (const unsigned char *)blob;
    unsigned i, n;
    recio_err e;
    if (!it || !blob) return RECIO_ERR_ARG;
    if ((e = recio__it_blob_check(it, p, size)) != RECIO_OK) return e;
    n = recio_load_u32le(p + 36);
    for (i = 0; i < n; i++) it->carry_next[i] = recio_load_u64le(p + 40 + 8 * (size_t)i);
    it->epoch = recio_load_u64le(p + 16);
    recio__it_restart(it, recio_load_u64le(p + 24), it->carry_next, recio_load_u32le(p + 32) ? 0 : n);
    it->ended = (int)recio_load_u32le(p + 32);
    it->ncarry_next = it->ended ? n : 0;
    return RECIO_OK;
}

RECIODEF const char *recio_iter_errmsg(const recio_iter *it) { return it ? it->errmsg : ""; }

/* Records and batches of an epoch of the current part (RECIO_SPLIT_UNKNOWN when the split did not count). */
static void recio__it_counts(const recio_iter *it, recio_iter_info *info) {
    uint64_t n = it->src.count, b = it->d.run.batch;
    info->records = info->batches = n;
    if (n != RECIO_SPLIT_UNKNOWN) info->batches = it->d.run.last_batch == RECIO_LAST_PAD ? n / b + (n % b != 0) : n / b;
}

RECIODEF void recio_iter_stats(recio_iter *it, recio_iter_info *info) {
    if (!info) return;
    memset(info, 0, sizeof *info);
    if (!it) return;
    info->item = it->shape;
    info->item_bytes = it->d.item.item_bytes;
    info->bad = it->skipped;
    RECIO__IT_LOCK(it); /* the split reopens on the producer's side (rotate_shards) */
    recio__it_counts(it, info);
    info->cache.mode = it->cache.mode;
    info->cache.prefix_ops = it->cache.prefix_ops;
    info->cache.records = it->cache.used;
    info->cache.bytes = it->cache.bytes;
    info->cache.hits = it->cache.hits;
    info->cache.misses = it->cache.misses;
    RECIO__IT_UNLOCK(it);
    info->skipped = it->nskipped; /* consumer-side counts: this thread's */
    info->nbad = it->nskipped_kept;
    recio__fmt(info->cache.why, sizeof info->cache.why, "%s", it->cache.why);
}

static uint64_t recio__batch_sum_bytes(const recio_batch *b) {
    const unsigned char *p = (const unsigned char *)b->data;
    size_t n = (size_t)(b->count + b->pad) * b->item_bytes, es = b->item.width ? recio_dtype_size(b->item.dtype) : 1, i,
           k;
    uint64_t h = RECIO_FNV1A_INIT;
    const uint16_t one = 1;
    if (es <= 1 || *(const unsigned char *)&one == 1) return recio_fnv1a64(h, p, n);
    for (i = 0; i + es <= n;) { /* a big-endian host: each element's bytes reversed, hashed a block at a time */
        unsigned char t[256];
        size_t m = 0;
        for (; m + es <= sizeof t && i + es <= n; i += es, m += es)
            for (k = 0; k < es; k++) t[m + k] = p[i + es - 1 - k];
        h = recio_fnv1a64(h, t, m);
    }
    return h;
}

static uint64_t recio__batch_sum_items(const recio_batch *b) {
    size_t es = b->item.width ? recio_dtype_size(b->item.dtype) : 1;
    uint64_t h = RECIO_FNV1A_INIT;
    const recio__kern *kn = b->sums ? NULL : recio__kern_pick();
    unsigned i;
    for (i = 0; i < b->count + b->pad; i++) {
        unsigned char le[8];
        recio_store_u64le(le, b->sums ? b->sums[i]
                                      : recio__checksum(kn, (const unsigned char *)b->data + (size_t)i * b->item_bytes,
                                                        b->item_bytes, es));
        h = recio_fnv1a64(h, le, 8);
    }
    return h;
}

RECIODEF uint64_t recio_batch_checksum(const recio_batch *b, recio_batch_sum kind) {
    return kind == RECIO_SUM_ITEMS ? recio__batch_sum_items(b) : recio__batch_sum_bytes(b);
}

#ifdef __cplusplus
}
#endif
#endif /* RECIO_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the recio authors
Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions: The above copyright notice and this
permission notice shall be included in all copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain. Anyone is free to copy,
modify, publish, use, compile, sell, or distribute this software, either in source code form or as
a compiled binary, for any purpose, commercial or non-commercial, and by any means.
------------------------------------------------------------------------------
*/
