/* recio.h - v0.1 - RecordIO image datasets to model-ready tensors - MIT or public domain (see end)

   recio reads and writes dmlc-core / MXNet RecordIO files byte for byte, splits a dataset across
   workers exactly as dmlc-core's InputSplit does, and turns packed images into tensors with eager,
   one-image-per-call ops. It is one header with no dependency but libc (and stb_image for the image
   section, pthreads for the optional prefetcher).

   Do this:
      #define RECIO_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.

   TABLE OF CONTENTS (each is a section with a banner, declarations first, then the implementation)
      1. CORE         errors, allocator, I/O hooks, little-endian helpers, seedable RNG
      2. RECORDIO     reader (streaming, memory, mmap) and writer (.idx, atomic)
      3. INDEX        .idx and .lst files, MXNet image record header (IRHeader)
      4. SPLIT        rank/nsplit partition of many files, as dmlc-core's InputSplit
      5. IMAGE OPS    decode, resize, crop, flip, colour, normalize: one image per call
      6. RANDOM       random policies and the transform spec
      7. PREFETCHER   ring buffer of reusable slots (only with RECIO_THREADS)
      8. ITERATOR     batches of augmented images (ImageRecordIter in C)

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
      The reader is strict: a bad magic, a truncated header or payload, a broken part sequence or
      trailing garbage is RECIO_ERR_CORRUPT naming the header offset of the first bad record, after
      every sound record before it. (dmlc-core merges or drops records silently in some of these.)

   ERRORS
      Every fallible call returns recio_err: RECIO_OK (0), RECIO_END (1, no more records) or a
      negative error. recio_strerror() gives words; each handle keeps the detail, as
      "FILE: offset N: what", for recio_reader_errmsg() and friends.

   MEMORY
      Every allocation goes through RECIO_MALLOC / RECIO_REALLOC / RECIO_FREE (define all or none),
      or through the recio_allocator set in a *_desc, which wins when set. Options structs
      (recio_*_desc) mean "defaults" when zeroed.

   CONFIGURATION (define before the implementation)
      RECIO_STATIC        make every function static (private copy in one translation unit)
      RECIO_NO_STDIO      no file backend: use memory readers and your own recio_io hooks
      RECIO_MALLOC(sz,u) RECIO_REALLOC(p,sz,u) RECIO_FREE(p,u)   allocator (u = user pointer)
      RECIO_ASSERT(x)     internal checks (default assert.h)
      RECIO_THREADS       build the prefetcher and the threaded iterator (pthreads)
      On 32-bit hosts compile the implementation with -D_FILE_OFFSET_BITS=64 for files over 2 GiB.

   THREADING
      No global state. Handles are not shared between threads without a lock; different handles
      may be used from different threads freely.
*/
#ifndef RECIO_H_INCLUDED
#define RECIO_H_INCLUDED

/* The implementation uses POSIX (fseeko, fsync, mmap, pthreads) where the host has it. Under a strict
   -std=c99 those are hidden unless asked for before the first system header: include recio.h first
   in the implementation file, or build that file in a gnu mode or with _POSIX_C_SOURCE defined. */
#if defined(RECIO_IMPLEMENTATION) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

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

#define RECIO_VERSION_MAJOR 0
#define RECIO_VERSION_MINOR 1

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================================
   1. CORE
   ================================================================================================== */

typedef enum recio_err {
    RECIO_OK = 0,
    RECIO_END = 1,               /* no more records: not an error */
    RECIO_ERR_ARG = -1,          /* invalid argument or usage */
    RECIO_ERR_NOMEM = -2,        /* allocation failed or size overflow */
    RECIO_ERR_IO = -3,           /* open, read, write, seek, sync or close failed */
    RECIO_ERR_CORRUPT = -4,      /* malformed RecordIO data */
    RECIO_ERR_TOO_BIG = -5,      /* a record of 2^29 bytes or more */
    RECIO_ERR_FORMAT = -6,       /* malformed .idx / .lst text or image record header */
    RECIO_ERR_DECODE = -7,       /* an image that cannot be decoded */
    RECIO_ERR_SPEC = -8,         /* transform spec syntax or argument */
    RECIO_ERR_UNSUPPORTED = -9   /* not available in this build or on this platform */
} recio_err;

/* Words for an error code; never NULL. */
RECIODEF const char *recio_strerror(recio_err e);

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
   close: release the source; 0 on success, -1 when buffered data could not be written (optional) */
typedef struct recio_io {
    int64_t (*read)(void *user, void *buf, size_t n);
    int (*write)(void *user, const void *buf, size_t n);
    int (*seek)(void *user, uint64_t offset);
    int64_t (*size)(void *user);
    int (*sync)(void *user);
    int (*close)(void *user);
    void *user;
} recio_io;

#ifndef RECIO_NO_STDIO
/* Fill io with the stdio file backend for path; mode as fopen ("rb", "wb"). */
RECIODEF recio_err recio_io_open_file(recio_io *io, const char *path, const char *mode);
#endif

/* A growing memory buffer, the target of recio_writer_open_mem. Free with recio_buffer_free. */
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
   every host. recio_seed_for(seed, epoch, index) gives the seed of record `index` in `epoch`, so a
   record's random choices never depend on thread count or call order. */
typedef struct recio_rng {
    uint64_t state;
} recio_rng;
RECIODEF uint64_t recio_hash64(uint64_t x);                 /* splitmix64 finaliser */
RECIODEF uint64_t recio_seed_for(uint64_t seed, uint64_t epoch, uint64_t index);
RECIODEF void recio_rng_seed(recio_rng *r, uint64_t seed);
RECIODEF uint64_t recio_rng_next(recio_rng *r);
RECIODEF uint64_t recio_rng_below(recio_rng *r, uint64_t n); /* uniform in [0, n), n > 0, no bias */
RECIODEF double recio_rng_uniform(recio_rng *r);             /* uniform in [0, 1), 53 bits */

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
    recio_io io;           /* custom source, used when path is NULL */
    const char *name;      /* name in messages (default: path, or "<memory>" / "<io>") */
    size_t buffer_size;    /* streaming buffer (default 1 MiB); grows for larger records */
    int use_mmap;          /* map the file and hand out pointers into it (POSIX) */
    recio_allocator alloc;
} recio_reader_desc;

/* Open a reader. On error *r is NULL. A streaming reader reads through one reusable buffer;
   memory and mmap readers hand out pointers into the source (zero copy) for single-part records. */
RECIODEF recio_err recio_reader_open(recio_reader **r, const char *path);
RECIODEF recio_err recio_reader_open_mem(recio_reader **r, const void *buf, size_t n);
RECIODEF recio_err recio_reader_open_mmap(recio_reader **r, const char *path);
RECIODEF recio_err recio_reader_open_desc(recio_reader **r, const char *path, const recio_reader_desc *desc);

/* Next record: RECIO_OK, RECIO_END, or an error that stays until recio_reader_seek. */
RECIODEF recio_err recio_reader_next(recio_reader *r, recio_record *rec);
/* Continue at byte offset `offset` (a record head, e.g. from a .idx); clears a stored error. */
RECIODEF recio_err recio_reader_seek(recio_reader *r, uint64_t offset);
RECIODEF uint64_t recio_reader_tell(const recio_reader *r); /* offset of the next record head */
RECIODEF int64_t recio_reader_size(const recio_reader *r);  /* source size, -1 unknown */
RECIODEF const char *recio_reader_errmsg(const recio_reader *r); /* "" when no error */
RECIODEF void recio_reader_close(recio_reader *r);

typedef struct recio_writer recio_writer;

typedef struct recio_writer_desc {
    recio_io io;            /* custom sink, used when path is NULL */
    const char *name;       /* name in messages */
    const char *index_path; /* also write an MXNet .idx ("key\toffset\n") here; NULL: none */
    int atomic;             /* write PATH.tmp, fsync, rename to PATH on a clean close */
    size_t buffer_size;     /* default 1 MiB */
    recio_allocator alloc;
} recio_writer_desc;

RECIODEF recio_err recio_writer_open(recio_writer **w, const char *path);
RECIODEF recio_err recio_writer_open_desc(recio_writer **w, const char *path, const recio_writer_desc *desc);
/* Write into out (grown as needed; free with recio_buffer_free after the writer is closed). */
RECIODEF recio_err recio_writer_open_mem(recio_writer **w, recio_buffer *out);
/* Append one record (key in the .idx = ordinal). RECIO_ERR_TOO_BIG for size >= 2^29 leaves the
   file sound; any I/O error is kept and returned by every later call, close included. */
RECIODEF recio_err recio_writer_write(recio_writer *w, const void *data, size_t size);
RECIODEF recio_err recio_writer_write_key(recio_writer *w, uint64_t key, const void *data, size_t size);
RECIODEF uint64_t recio_writer_tell(const recio_writer *w); /* offset the next record will have */
RECIODEF const char *recio_writer_errmsg(const recio_writer *w);
/* Flush, sync and rename (atomic), close; returns the first error that happened, if any. On error
   an atomic writer removes its temporary file and leaves PATH untouched. */
RECIODEF recio_err recio_writer_close(recio_writer *w);

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
    recio_allocator alloc;
    char errmsg[256];       /* "FILE: line N: what" after a failed load */
} recio_index;

RECIODEF recio_err recio_index_parse(recio_index *idx, const char *text, size_t n, const char *name);
#ifndef RECIO_NO_STDIO
RECIODEF recio_err recio_index_load(recio_index *idx, const char *path);
RECIODEF recio_err recio_index_save(const recio_index *idx, const char *path);
#endif
RECIODEF void recio_index_free(recio_index *idx);

/* .lst: "index\tlabel[\tlabel...]\tpath" per line (im2rec's list file). */
typedef struct recio_lst_item {
    uint64_t index;
    const float *labels; /* into recio_lst storage */
    uint32_t nlabels;
    const char *path;    /* into recio_lst storage */
} recio_lst_item;

typedef struct recio_lst {
    recio_lst_item *items;
    size_t count;
    void *storage;
    recio_allocator alloc;
    char errmsg[256];
} recio_lst;

RECIODEF recio_err recio_lst_parse(recio_lst *lst, const char *text, size_t n, const char *name);
#ifndef RECIO_NO_STDIO
RECIODEF recio_err recio_lst_load(recio_lst *lst, const char *path);
#endif
RECIODEF void recio_lst_free(recio_lst *lst);

/* MXNet image record: IRHeader {u32 flag; f32 label; u64 id; u64 id2} (24 bytes), then when
   flag > 0 `flag` float32 labels (the header label is then ignored), then the encoded image. */
#define RECIO_IRHEADER_SIZE 24

typedef struct recio_irecord {
    uint32_t flag;
    float label;
    uint64_t id, id2;
    const void *labels;      /* flag little-endian float32s, unaligned; NULL when flag == 0 */
    const void *image;       /* encoded image bytes inside the payload */
    size_t image_size;
} recio_irecord;

/* Parse a payload; RECIO_ERR_FORMAT when it is too short for its header and labels. */
RECIODEF recio_err recio_irecord_unpack(recio_irecord *out, const void *payload, size_t size);
RECIODEF uint32_t recio_irecord_nlabels(const recio_irecord *r);        /* flag, or 1 when flag == 0 */
RECIODEF float recio_irecord_label(const recio_irecord *r, uint32_t i); /* label i (i < nlabels) */
/* Write the header (and labels) into dst, which holds recio_irecord_header_size(nlabels) bytes.
   nlabels == 1 stores flag 0 and the label in the header, as MXNet's pack() does for a scalar;
   other counts store flag = nlabels and the labels after the header. */
RECIODEF size_t recio_irecord_header_size(uint32_t nlabels);
RECIODEF size_t recio_irecord_pack_header(void *dst, const float *labels, uint32_t nlabels, uint64_t id, uint64_t id2);

/* ==================================================================================================
   4. SPLIT
   ================================================================================================== */

/* (declarations of the split section) */

/* ==================================================================================================
   5. IMAGE OPS
   ================================================================================================== */

/* (declarations of the image section) */

/* ==================================================================================================
   6. RANDOM POLICIES AND TRANSFORM SPEC
   ================================================================================================== */

/* (declarations of the transform section) */

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
#define RECIO_PREFETCH_ERRMSG 512

typedef struct recio_prefetch recio_prefetch;

typedef struct recio_prefetch_slot {
    void *data;       /* slot_size bytes at create; recio_prefetch_slot_reserve grows it */
    size_t capacity;  /* bytes at data */
    size_t size;      /* bytes the producer filled (free for the producer to use) */
    uint64_t seq;     /* item number in the epoch */
    uint64_t epoch;
    uint64_t tag;     /* free for the producer, e.g. the record's offset */
    unsigned index;   /* 0 .. depth-1: lets the user keep side arrays per slot */
    char errmsg[RECIO_PREFETCH_ERRMSG];
} recio_prefetch_slot;

typedef recio_err (*recio_prefetch_fn)(void *user, recio_prefetch_slot *slot, unsigned worker);
typedef recio_err (*recio_prefetch_begin_fn)(void *user, uint64_t epoch, char *errmsg /* RECIO_PREFETCH_ERRMSG */);

typedef struct recio_prefetch_desc {
    recio_prefetch_fn fetch;       /* required */
    recio_prefetch_fn work;        /* optional */
    recio_prefetch_begin_fn begin; /* optional */
    void *user;
    unsigned depth;                /* slots in the ring (default 4) */
    unsigned threads;              /* producer threads (default 1) */
    size_t slot_size;              /* initial bytes per slot (default 0: grow on demand) */
    uint64_t epoch;                /* first epoch (default 0) */
    recio_allocator alloc;
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

/* (declarations of the iterator section) */

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
#include <math.h>
#include <limits.h>
#ifndef RECIO_NO_STDIO
#include <stdio.h>
#endif

#if defined(__APPLE__) || (defined(__unix__) && defined(_POSIX_C_SOURCE) && _POSIX_C_SOURCE >= 200112L)
#define RECIO__POSIX 1
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
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

#define RECIO__ERRMSG 512
#define RECIO__DEFAULT_BUFFER (1u << 20)

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

static char *recio__strdup(const recio_allocator *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = (char *)recio__malloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Own tiny formatter, so messages need no stdio: %s %d %u %x and %U (uint64_t). */
static size_t recio__put_u64(char *d, size_t cap, size_t at, uint64_t v, unsigned base) {
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (k > 0) {
        --k;
        if (at + 1 < cap) d[at] = tmp[k];
        at++;
    }
    return at;
}

static void recio__vfmt(char *d, size_t cap, const char *f, va_list ap) {
    size_t at = 0;
    if (cap == 0) return;
    for (; *f; f++) {
        if (*f != '%' || !f[1]) {
            if (at + 1 < cap) d[at] = *f;
            at++;
            continue;
        }
        switch (*++f) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            for (; *s; s++, at++)
                if (at + 1 < cap) d[at] = *s;
            break;
        }
        case 'd': {
            int v = va_arg(ap, int);
            uint64_t m = v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v;
            if (v < 0) {
                if (at + 1 < cap) d[at] = '-';
                at++;
            }
            at = recio__put_u64(d, cap, at, m, 10);
            break;
        }
        case 'u': at = recio__put_u64(d, cap, at, va_arg(ap, unsigned), 10); break;
        case 'x': at = recio__put_u64(d, cap, at, va_arg(ap, unsigned), 16); break;
        case 'U': at = recio__put_u64(d, cap, at, va_arg(ap, uint64_t), 10); break;
        default:
            if (at + 1 < cap) d[at] = *f;
            at++;
        }
    }
    d[at < cap ? at : cap - 1] = 0;
}

static void recio__fmt(char *d, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    recio__vfmt(d, cap, f, ap);
    va_end(ap);
}

/* Every handle message reads "NAME: offset N: what" so the user can go straight to the bytes. */
static void recio__errf(char *msg, const char *name, uint64_t offset, const char *f, ...) {
    va_list ap;
    size_t at;
    recio__fmt(msg, RECIO__ERRMSG, "%s: offset %U: ", name ? name : "?", offset);
    at = strlen(msg);
    va_start(ap, f);
    recio__vfmt(msg + at, RECIO__ERRMSG - at, f, ap);
    va_end(ap);
}

static const char *recio__errno_str(int e) {
#ifndef RECIO_NO_STDIO
    return e ? strerror(e) : "unknown system error";
#else
    (void)e;
    return "system error";
#endif
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

RECIODEF uint64_t recio_hash64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

RECIODEF uint64_t recio_seed_for(uint64_t seed, uint64_t epoch, uint64_t index) {
    uint64_t h = recio_hash64(seed + 0x9e3779b97f4a7c15ULL);
    h = recio_hash64(h ^ (epoch + 0x632be59bd9b4e019ULL));
    return recio_hash64(h ^ (index + 0x85157af5b7a2d2c7ULL));
}

RECIODEF void recio_rng_seed(recio_rng *r, uint64_t seed) { r->state = seed; }

RECIODEF uint64_t recio_rng_next(recio_rng *r) {
    r->state += 0x9e3779b97f4a7c15ULL;
    return recio_hash64(r->state);
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

#ifndef RECIO_NO_STDIO
static int64_t recio__file_read(void *user, void *buf, size_t n) {
    FILE *f = (FILE *)user;
    size_t k = fread(buf, 1, n, f);
    if (k < n && ferror(f)) return -1;
    return (int64_t)k;
}

static int recio__file_write(void *user, const void *buf, size_t n) {
    return fwrite(buf, 1, n, (FILE *)user) == n ? 0 : -1;
}

static int recio__file_seek(void *user, uint64_t off) {
#if defined(RECIO__POSIX)
    if ((uint64_t)(off_t)off != off) return -1;
    return fseeko((FILE *)user, (off_t)off, SEEK_SET);
#elif defined(_WIN32)
    return _fseeki64((FILE *)user, (__int64)off, SEEK_SET);
#else
    if (off > (uint64_t)LONG_MAX) return -1;
    return fseek((FILE *)user, (long)off, SEEK_SET);
#endif
}

static int64_t recio__file_size(void *user) {
#if defined(RECIO__POSIX)
    struct stat st;
    if (fstat(fileno((FILE *)user), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (int64_t)st.st_size;
#else
    (void)user;
    return -1;
#endif
}

static int recio__file_sync(void *user) {
    FILE *f = (FILE *)user;
    if (fflush(f) != 0) return -1;
#if defined(RECIO__POSIX)
    if (fsync(fileno(f)) != 0 && errno != EINVAL) return -1; /* EINVAL: not syncable (a pipe, /dev/full) */
#endif
    return 0;
}

static int recio__file_close(void *user) { return fclose((FILE *)user) == 0 ? 0 : -1; }

RECIODEF recio_err recio_io_open_file(recio_io *io, const char *path, const char *mode) {
    FILE *f;
    memset(io, 0, sizeof *io);
    if (!path || !mode) return RECIO_ERR_ARG;
    f = fopen(path, mode);
    if (!f) return RECIO_ERR_IO;
    /* recio buffers itself in large blocks; a second stdio buffer would only add a copy. */
    setvbuf(f, NULL, _IONBF, 0);
    io->read = recio__file_read;
    io->write = recio__file_write;
    io->seek = recio__file_seek;
    io->size = recio__file_size;
    io->sync = recio__file_sync;
    io->close = recio__file_close;
    io->user = f;
    return RECIO_OK;
}
#endif

/* ---- 2. RECORDIO: implementation --------------------------------------------------------------- */

#define RECIO__ALIGN4(n) (((n) + 3u) & ~(size_t)3u)

struct recio_reader {
    recio_allocator alloc;
    recio_io io;
    int has_io;
    /* memory mode: the whole source is addressable (a buffer or a mapping) */
    const unsigned char *mem;
    uint64_t mem_size;
    void *map_base;
    size_t map_len;
    /* streaming mode: buf[0] is at file offset base; bytes [pos, end) are valid */
    unsigned char *buf;
    size_t cap, pos, end;
    uint64_t base;
    int eof;
    int64_t size;
    unsigned char *join; /* multi-part records are assembled here */
    size_t join_cap;
    recio_err sticky;
    char *name;
    char errmsg[RECIO__ERRMSG];
};

static uint64_t recio__rd_off(const recio_reader *r) { return r->base + r->pos; }

static recio_err recio__rd_fail(recio_reader *r, recio_err e, uint64_t off, const char *f, ...) {
    va_list ap;
    size_t at;
    recio__errf(r->errmsg, r->name, off, "");
    at = strlen(r->errmsg);
    va_start(ap, f);
    recio__vfmt(r->errmsg + at, RECIO__ERRMSG - at, f, ap);
    va_end(ap);
    r->sticky = e;
    return e;
}

/* Make `need` bytes at the current position addressable; returns how many are (less only at end
   of file). Streaming mode compacts and refills the buffer, growing it only as data arrives so a
   corrupt length cannot make it allocate more than the file holds. */
static recio_err recio__rd_avail(recio_reader *r, size_t need, const unsigned char **p, size_t *got) {
    if (r->mem) {
        uint64_t left = r->mem_size - r->pos;
        *p = r->mem + r->pos;
        *got = left < need ? (size_t)left : need;
        return RECIO_OK;
    }
    while (r->end - r->pos < need && !r->eof) {
        int64_t n;
        if (r->pos > 0 && r->cap - r->pos < need) {
            memmove(r->buf, r->buf + r->pos, r->end - r->pos);
            r->base += r->pos;
            r->end -= r->pos;
            r->pos = 0;
        }
        if (r->end == r->cap) {
            size_t ncap = r->cap * 2 < need ? need : r->cap * 2;
            unsigned char *nb = (unsigned char *)recio__realloc(&r->alloc, r->buf, r->end, ncap);
            if (!nb) return recio__rd_fail(r, RECIO_ERR_NOMEM, recio__rd_off(r), "cannot grow read buffer to %U bytes", (uint64_t)ncap);
            r->buf = nb;
            r->cap = ncap;
        }
        n = r->io.read(r->io.user, r->buf + r->end, r->cap - r->end);
        if (n < 0) return recio__rd_fail(r, RECIO_ERR_IO, r->base + r->end, "read failed: %s", recio__errno_str(errno));
        if (n == 0) r->eof = 1;
        r->end += (size_t)n;
    }
    *p = r->buf + r->pos;
    *got = r->end - r->pos < need ? r->end - r->pos : need;
    return RECIO_OK;
}

/* Read one part header at the current position. */
static recio_err recio__rd_header(recio_reader *r, uint64_t rec_off, int first, unsigned *cflag, size_t *len) {
    const unsigned char *p;
    size_t got;
    uint32_t magic, lrec;
    uint64_t at = recio__rd_off(r);
    recio_err e = recio__rd_avail(r, 8, &p, &got);
    if (e) return e;
    if (got == 0) {
        if (first) return RECIO_END;
        return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "multi-part record ends at end of file without its last part");
    }
    if (got < 8) return recio__rd_fail(r, RECIO_ERR_CORRUPT, first ? rec_off : at, "truncated header: %u bytes before end of file", (unsigned)got);
    magic = recio_load_u32le(p);
    lrec = recio_load_u32le(p + 4);
    if (magic != RECIO_MAGIC) return recio__rd_fail(r, RECIO_ERR_CORRUPT, first ? rec_off : at, "bad magic 0x%x (expected 0xced7230a)", (unsigned)magic);
    *cflag = lrec >> 29;
    *len = lrec & RECIO_MAX_RECORD;
    if (*cflag > 3) return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "invalid cflag %u", *cflag);
    if (first && *cflag >= 2) return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "continuation part (cflag %u) without a first part", *cflag);
    if (!first && *cflag < 2)
        return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "multi-part record broken: part at offset %U has cflag %u, expected 2 or 3", at, *cflag);
    return RECIO_OK;
}

/* Make the part body (len bytes + padding) addressable after its 8-byte header. */
static recio_err recio__rd_body(recio_reader *r, uint64_t rec_off, size_t len, const unsigned char **body) {
    const unsigned char *p;
    size_t got, total = 8 + RECIO__ALIGN4(len);
    recio_err e;
    if (r->size >= 0 && recio__rd_off(r) + total > (uint64_t)r->size)
        return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "length %U runs past end of file (size %U)", (uint64_t)len, (uint64_t)r->size);
    e = recio__rd_avail(r, total, &p, &got);
    if (e) return e;
    if (got < total) return recio__rd_fail(r, RECIO_ERR_CORRUPT, rec_off, "truncated: length %U runs past end of file", (uint64_t)len);
    *body = p + 8;
    r->pos += total;
    return RECIO_OK;
}

static recio_err recio__rd_join(recio_reader *r, size_t at, const void *src, size_t n, uint64_t rec_off) {
    if (at + n < at) return recio__rd_fail(r, RECIO_ERR_NOMEM, rec_off, "record size overflows");
    if (at + n > r->join_cap) {
        size_t ncap = r->join_cap ? r->join_cap : 4096;
        unsigned char *nj;
        while (ncap < at + n) ncap = ncap > SIZE_MAX / 2 ? at + n : ncap * 2;
        nj = (unsigned char *)recio__realloc(&r->alloc, r->join, at, ncap);
        if (!nj) return recio__rd_fail(r, RECIO_ERR_NOMEM, rec_off, "cannot allocate %U bytes for a multi-part record", (uint64_t)ncap);
        r->join = nj;
        r->join_cap = ncap;
    }
    if (n) memcpy(r->join + at, src, n);
    return RECIO_OK;
}

RECIODEF recio_err recio_reader_next(recio_reader *r, recio_record *rec) {
    uint64_t rec_off;
    unsigned cflag;
    size_t len, size = 0;
    const unsigned char *body;
    unsigned char magic[4];
    recio_err e;
    if (!r || !rec) return RECIO_ERR_ARG;
    if (r->sticky) return r->sticky;
    rec_off = recio__rd_off(r);
    if ((e = recio__rd_header(r, rec_off, 1, &cflag, &len)) != RECIO_OK) return e;
    if ((e = recio__rd_body(r, rec_off, len, &body)) != RECIO_OK) return e;
    if (cflag == 0) {
        rec->data = body;
        rec->size = len;
        rec->offset = rec_off;
        return RECIO_OK;
    }
    recio_store_u32le(magic, RECIO_MAGIC);
    if ((e = recio__rd_join(r, 0, body, len, rec_off)) != RECIO_OK) return e;
    size = len;
    do {
        if ((e = recio__rd_header(r, rec_off, 0, &cflag, &len)) != RECIO_OK) return e;
        if ((e = recio__rd_body(r, rec_off, len, &body)) != RECIO_OK) return e;
        if ((e = recio__rd_join(r, size, magic, 4, rec_off)) != RECIO_OK) return e;
        if ((e = recio__rd_join(r, size + 4, body, len, rec_off)) != RECIO_OK) return e;
        size += 4 + len;
    } while (cflag != 3);
    rec->data = r->join;
    rec->size = size;
    rec->offset = rec_off;
    return RECIO_OK;
}

static recio_err recio__rd_alloc(recio_reader **out, const char *name, const recio_allocator *a) {
    recio_reader *r;
    recio_allocator al;
    memset(&al, 0, sizeof al);
    if (a) al = *a;
    r = (recio_reader *)recio__malloc(&al, sizeof *r);
    if (!r) return RECIO_ERR_NOMEM;
    memset(r, 0, sizeof *r);
    r->alloc = al;
    r->size = -1;
    r->name = recio__strdup(&al, name);
    if (!r->name) {
        recio__free(&al, r);
        return RECIO_ERR_NOMEM;
    }
    *out = r;
    return RECIO_OK;
}

RECIODEF recio_err recio_reader_open_mem(recio_reader **r, const void *buf, size_t n) {
    recio_reader_desc d;
    memset(&d, 0, sizeof d);
    d.name = "<memory>";
    if (!r) return RECIO_ERR_ARG;
    *r = NULL;
    if (!buf && n) return RECIO_ERR_ARG;
    if (recio__rd_alloc(r, d.name, NULL)) return RECIO_ERR_NOMEM;
    (*r)->mem = buf ? (const unsigned char *)buf : (const unsigned char *)"";
    (*r)->mem_size = n;
    (*r)->size = (int64_t)n;
    return RECIO_OK;
}

#if defined(RECIO__POSIX)
static recio_err recio__rd_map(recio_reader *r, const char *path) {
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return RECIO_ERR_IO;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return RECIO_ERR_IO;
    }
    r->mem = (const unsigned char *)"";
    r->mem_size = (uint64_t)st.st_size;
    r->size = (int64_t)st.st_size;
    if (st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            close(fd);
            return RECIO_ERR_IO;
        }
        posix_madvise(m, (size_t)st.st_size, POSIX_MADV_SEQUENTIAL);
        r->map_base = m;
        r->map_len = (size_t)st.st_size;
        r->mem = (const unsigned char *)m;
    }
    close(fd);
    return RECIO_OK;
}
#endif

RECIODEF recio_err recio_reader_open_desc(recio_reader **out, const char *path, const recio_reader_desc *desc) {
    recio_reader_desc d;
    recio_reader *r;
    recio_err e;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!path && !d.io.read) return RECIO_ERR_ARG;
    if (!d.name) d.name = path ? path : "<io>";
    if (!d.buffer_size) d.buffer_size = RECIO__DEFAULT_BUFFER;
    if ((e = recio__rd_alloc(&r, d.name, &d.alloc)) != RECIO_OK) return e;
    if (path && d.use_mmap) {
#if defined(RECIO__POSIX)
        e = recio__rd_map(r, path);
#else
        e = RECIO_ERR_UNSUPPORTED;
#endif
    } else if (path) {
#ifndef RECIO_NO_STDIO
        e = recio_io_open_file(&r->io, path, "rb");
        r->has_io = e == RECIO_OK;
#else
        e = RECIO_ERR_UNSUPPORTED;
#endif
    } else {
        r->io = d.io;
        r->has_io = 1;
    }
    if (e == RECIO_OK && r->has_io) {
        r->size = r->io.size ? r->io.size(r->io.user) : -1;
        r->cap = d.buffer_size < 16 ? 16 : d.buffer_size;
        r->buf = (unsigned char *)recio__malloc(&r->alloc, r->cap);
        if (!r->buf) e = RECIO_ERR_NOMEM;
    }
    if (e != RECIO_OK) {
        recio_reader_close(r);
        return e;
    }
    *out = r;
    return RECIO_OK;
}

RECIODEF recio_err recio_reader_open(recio_reader **r, const char *path) {
    return recio_reader_open_desc(r, path, NULL);
}

RECIODEF recio_err recio_reader_open_mmap(recio_reader **r, const char *path) {
    recio_reader_desc d;
    memset(&d, 0, sizeof d);
    d.use_mmap = 1;
    return recio_reader_open_desc(r, path, &d);
}

RECIODEF recio_err recio_reader_seek(recio_reader *r, uint64_t offset) {
    if (!r) return RECIO_ERR_ARG;
    r->sticky = RECIO_OK;
    r->errmsg[0] = 0;
    if (r->mem) {
        if (offset > r->mem_size) return recio__rd_fail(r, RECIO_ERR_ARG, offset, "seek past end of file (size %U)", r->mem_size);
        r->pos = (size_t)offset;
        return RECIO_OK;
    }
    if (offset >= r->base && offset <= r->base + r->end) { /* inside the buffer: no I/O */
        r->pos = (size_t)(offset - r->base);
        return RECIO_OK;
    }
    if (!r->io.seek || r->io.seek(r->io.user, offset) != 0)
        return recio__rd_fail(r, RECIO_ERR_IO, offset, "seek failed: %s", recio__errno_str(errno));
    r->base = offset;
    r->pos = r->end = 0;
    r->eof = 0;
    return RECIO_OK;
}

RECIODEF uint64_t recio_reader_tell(const recio_reader *r) { return r ? recio__rd_off(r) : 0; }
RECIODEF int64_t recio_reader_size(const recio_reader *r) { return r ? r->size : -1; }
RECIODEF const char *recio_reader_errmsg(const recio_reader *r) { return r ? r->errmsg : ""; }

RECIODEF void recio_reader_close(recio_reader *r) {
    if (!r) return;
    if (r->has_io && r->io.close) r->io.close(r->io.user);
#if defined(RECIO__POSIX)
    if (r->map_base) munmap(r->map_base, r->map_len);
#endif
    recio__free(&r->alloc, r->buf);
    recio__free(&r->alloc, r->join);
    recio__free(&r->alloc, r->name);
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
    char *path, *tmp_path, *idx_path, *idx_tmp_path;
    recio_err sticky;
    char *name;
    char errmsg[RECIO__ERRMSG];
};

static recio_err recio__wr_fail(recio_writer *w, recio_err e, uint64_t off, const char *what) {
    recio__errf(w->errmsg, w->name, off, "%s", what);
    w->sticky = e;
    return e;
}

static recio_err recio__wr_io_fail(recio_writer *w, uint64_t off, const char *what) {
    char tmp[200];
    recio__fmt(tmp, sizeof tmp, "%s: %s", what, recio__errno_str(errno));
    return recio__wr_fail(w, RECIO_ERR_IO, off, tmp);
}

static recio_err recio__wr_flush(recio_writer *w) {
    if (w->len && w->io.write(w->io.user, w->buf, w->len) != 0)
        return recio__wr_io_fail(w, w->offset - w->len, "write failed");
    w->len = 0;
    return RECIO_OK;
}

/* Append bytes; large blocks bypass the buffer so big records cost one copy (the kernel's). */
static recio_err recio__wr_put(recio_writer *w, const void *data, size_t n) {
    if (n <= w->cap - w->len) {
        if (n) memcpy(w->buf + w->len, data, n);
        w->len += n;
        w->offset += n;
        return RECIO_OK;
    }
    w->offset += n;
    if (recio__wr_flush(w)) return w->sticky;
    if (n >= w->cap) {
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

RECIODEF recio_err recio_writer_write_key(recio_writer *w, uint64_t key, const void *data, size_t size) {
    static const unsigned char zeros[4] = {0, 0, 0, 0};
    const unsigned char *p = (const unsigned char *)data;
    size_t i, start = 0;
    uint64_t rec_off;
    unsigned cflag = 0;
    if (!w || (!data && size)) return RECIO_ERR_ARG;
    if (w->sticky) return w->sticky;
    if (size > RECIO_MAX_RECORD) {
        recio__errf(w->errmsg, w->name, w->offset, "record of %U bytes: RecordIO allows at most 2^29-1", (uint64_t)size);
        return RECIO_ERR_TOO_BIG; /* nothing written: the file stays sound */
    }
    rec_off = w->offset;
    /* An aligned magic word inside the payload would read as a header: cut the payload there. */
    for (i = 0; i + 4 <= size; i += 4) {
        if (p[i] == 0x0a && recio_load_u32le(p + i) == RECIO_MAGIC) {
            if (recio__wr_part(w, cflag == 0 ? 1 : 2, p + start, i - start)) return w->sticky;
            cflag = 3;
            start = i + 4;
        }
    }
    if (recio__wr_part(w, cflag, p + start, size - start)) return w->sticky;
    if (recio__wr_put(w, zeros, RECIO__ALIGN4(size) - size)) return w->sticky;
    if (w->has_idx && recio__wr_index(w, key, rec_off)) return w->sticky;
    w->count++;
    return RECIO_OK;
}

RECIODEF recio_err recio_writer_write(recio_writer *w, const void *data, size_t size) {
    return recio_writer_write_key(w, w ? w->count : 0, data, size);
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
    recio__free(&w->alloc, w->buf);
    recio__free(&w->alloc, w->name);
    recio__free(&w->alloc, w->path);
    recio__free(&w->alloc, w->tmp_path);
    recio__free(&w->alloc, w->idx_path);
    recio__free(&w->alloc, w->idx_tmp_path);
    recio__free(&w->alloc, w);
}

#ifndef RECIO_NO_STDIO
static char *recio__cat(const recio_allocator *a, const char *s, const char *t) {
    size_t n = strlen(s), m = strlen(t);
    char *d = (char *)recio__malloc(a, n + m + 1);
    if (d) {
        memcpy(d, s, n);
        memcpy(d + n, t, m + 1);
    }
    return d;
}

/* Open one output file (data or index), through PATH.tmp when atomic. */
static recio_err recio__wr_open_file(recio_writer *w, recio_io *io, const char *path, int atomic, char **keep, char **tmp) {
    *keep = recio__strdup(&w->alloc, path);
    if (!*keep) return RECIO_ERR_NOMEM;
    if (atomic) {
        *tmp = recio__cat(&w->alloc, path, ".tmp");
        if (!*tmp) return RECIO_ERR_NOMEM;
    }
    if (recio_io_open_file(io, atomic ? *tmp : path, "wb") != RECIO_OK) {
        recio__errf(w->errmsg, atomic ? *tmp : path, 0, "cannot create: %s", recio__errno_str(errno));
        return RECIO_ERR_IO;
    }
    return RECIO_OK;
}
#endif

RECIODEF recio_err recio_writer_open_desc(recio_writer **out, const char *path, const recio_writer_desc *desc) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    recio_err e;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if (!path && !d.io.write) return RECIO_ERR_ARG;
    if (!d.name) d.name = path ? path : "<io>";
    e = recio__wr_alloc(&w, &d);
    if (e == RECIO_OK && path) {
#ifndef RECIO_NO_STDIO
        e = recio__wr_open_file(w, &w->io, path, d.atomic, &w->path, &w->tmp_path);
#else
        e = RECIO_ERR_UNSUPPORTED;
#endif
    } else if (e == RECIO_OK) {
        w->io = d.io;
    }
    if (e == RECIO_OK && d.index_path) {
#ifndef RECIO_NO_STDIO
        e = recio__wr_open_file(w, &w->idx_io, d.index_path, d.atomic, &w->idx_path, &w->idx_tmp_path);
        w->has_idx = e == RECIO_OK;
#else
        e = RECIO_ERR_UNSUPPORTED;
#endif
    }
    if (e != RECIO_OK) {
        if (w) {
            if (w->io.close) w->io.close(w->io.user);
            if (w->tmp_path) remove(w->tmp_path);
            recio__wr_free(w);
        }
        return e;
    }
    *out = w;
    return RECIO_OK;
}

RECIODEF recio_err recio_writer_open(recio_writer **w, const char *path) {
    return recio_writer_open_desc(w, path, NULL);
}

RECIODEF recio_err recio_writer_open_mem(recio_writer **w, recio_buffer *out) {
    recio_writer_desc d;
    if (!out) return RECIO_ERR_ARG;
    memset(&d, 0, sizeof d);
    d.io.write = recio__mem_write;
    d.io.user = out;
    d.name = "<memory>";
    d.alloc = out->alloc;
    return recio_writer_open_desc(w, NULL, &d);
}

RECIODEF uint64_t recio_writer_tell(const recio_writer *w) { return w ? w->offset : 0; }
RECIODEF const char *recio_writer_errmsg(const recio_writer *w) { return w ? w->errmsg : ""; }

/* Flush, sync and close one sink; the first failure is recorded, later steps still run. */
static void recio__wr_finish(recio_writer *w, recio_io *io, int sync) {
    if (sync && !w->sticky && io->sync && io->sync(io->user) != 0) recio__wr_io_fail(w, w->offset, "sync failed");
    if (io->close && io->close(io->user) != 0 && !w->sticky) recio__wr_io_fail(w, w->offset, "close failed");
}

#ifndef RECIO_NO_STDIO
static void recio__wr_commit(recio_writer *w, const char *tmp, const char *path) {
    if (!tmp) return;
    if (w->sticky) {
        remove(tmp);
        return;
    }
    if (rename(tmp, path) != 0) {
        recio__wr_io_fail(w, w->offset, "cannot rename temporary file into place");
        remove(tmp);
    }
}
#endif

RECIODEF recio_err recio_writer_close(recio_writer *w) {
    recio_err e;
    if (!w) return RECIO_ERR_ARG;
    if (!w->sticky) recio__wr_flush(w);
    if (w->has_idx && !w->sticky && w->idx_len && w->idx_io.write(w->idx_io.user, w->idx_buf, w->idx_len) != 0)
        recio__wr_io_fail(w, w->offset, "index write failed");
    recio__wr_finish(w, &w->io, w->tmp_path != NULL);
    if (w->has_idx) recio__wr_finish(w, &w->idx_io, w->idx_tmp_path != NULL);
#ifndef RECIO_NO_STDIO
    recio__wr_commit(w, w->tmp_path, w->path);
    recio__wr_commit(w, w->idx_tmp_path, w->idx_path);
#endif
    e = w->sticky;
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
    recio__fmt(msg, 256, "%s: line %U: %s", L->name ? L->name : "?", L->line, what);
    return RECIO_ERR_FORMAT;
}

RECIODEF recio_err recio_index_parse(recio_index *idx, const char *text, size_t n, const char *name) {
    recio__lines L;
    const char *b, *e;
    size_t cap = 0;
    recio_allocator a;
    if (!idx || (!text && n)) return RECIO_ERR_ARG;
    a = idx->alloc;
    memset(idx, 0, sizeof *idx);
    idx->alloc = a;
    L.p = text ? text : "";
    L.end = L.p + n;
    L.name = name;
    L.line = 0;
    while (recio__next_line(&L, &b, &e)) {
        recio_index_entry en;
        if (recio__parse_u64(&b, e, &en.key)) return recio__text_fail(idx->errmsg, &L, "expected 'key<TAB>offset'"), recio_index_free(idx), RECIO_ERR_FORMAT;
        while (b < e && recio__is_blank(*b)) b++;
        if (recio__parse_u64(&b, e, &en.offset)) return recio__text_fail(idx->errmsg, &L, "expected an offset after the key"), recio_index_free(idx), RECIO_ERR_FORMAT;
        while (b < e && recio__is_blank(*b)) b++;
        if (b != e) return recio__text_fail(idx->errmsg, &L, "unexpected text after the offset"), recio_index_free(idx), RECIO_ERR_FORMAT;
        if (idx->count == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            recio_index_entry *ne;
            if (ncap > SIZE_MAX / sizeof *ne) return recio_index_free(idx), RECIO_ERR_NOMEM;
            ne = (recio_index_entry *)recio__realloc(&idx->alloc, idx->entries, cap * sizeof *ne, ncap * sizeof *ne);
            if (!ne) return recio_index_free(idx), RECIO_ERR_NOMEM;
            idx->entries = ne;
            cap = ncap;
        }
        idx->entries[idx->count++] = en;
    }
    return RECIO_OK;
}

RECIODEF void recio_index_free(recio_index *idx) {
    if (!idx) return;
    recio__free(&idx->alloc, idx->entries);
    idx->entries = NULL;
    idx->count = 0;
}

#ifndef RECIO_NO_STDIO
/* Whole small text file into memory (for .idx and .lst). */
static recio_err recio__slurp(const recio_allocator *a, const char *path, char **out, size_t *n, char *msg) {
    recio_io io;
    recio_buffer b;
    char chunk[65536];
    int64_t k;
    memset(&b, 0, sizeof b);
    if (a) b.alloc = *a;
    *out = NULL;
    *n = 0;
    if (recio_io_open_file(&io, path, "rb") != RECIO_OK) {
        recio__fmt(msg, 256, "%s: cannot open: %s", path, recio__errno_str(errno));
        return RECIO_ERR_IO;
    }
    while ((k = io.read(io.user, chunk, sizeof chunk)) > 0)
        if (recio__mem_write(&b, chunk, (size_t)k)) {
            io.close(io.user);
            recio_buffer_free(&b);
            return RECIO_ERR_NOMEM;
        }
    io.close(io.user);
    if (k < 0) {
        recio__fmt(msg, 256, "%s: offset %U: read failed", path, (uint64_t)b.size);
        recio_buffer_free(&b);
        return RECIO_ERR_IO;
    }
    *out = (char *)b.data;
    *n = b.size;
    return RECIO_OK;
}

RECIODEF recio_err recio_index_load(recio_index *idx, const char *path) {
    char *text;
    size_t n;
    recio_err e;
    if (!idx || !path) return RECIO_ERR_ARG;
    idx->entries = NULL;
    idx->count = 0;
    if ((e = recio__slurp(&idx->alloc, path, &text, &n, idx->errmsg)) != RECIO_OK) return e;
    e = recio_index_parse(idx, text, n, path);
    recio__free(&idx->alloc, text);
    return e;
}

RECIODEF recio_err recio_index_save(const recio_index *idx, const char *path) {
    recio_io io;
    char line[48];
    size_t i;
    int bad = 0;
    if (!idx || !path) return RECIO_ERR_ARG;
    if (recio_io_open_file(&io, path, "wb") != RECIO_OK) return RECIO_ERR_IO;
    setvbuf((FILE *)io.user, NULL, _IOFBF, 1 << 16); /* many small lines: let stdio batch them */
    for (i = 0; i < idx->count && !bad; i++) {
        recio__fmt(line, sizeof line, "%U\t%U\n", idx->entries[i].key, idx->entries[i].offset);
        bad = io.write(io.user, line, strlen(line)) != 0;
    }
    if (io.close(io.user) != 0) bad = 1;
    return bad ? RECIO_ERR_IO : RECIO_OK;
}
#endif

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

/* One .lst line: index, labels..., path (the last tab-separated field; it may hold spaces). */
static recio_err recio__lst_line(recio_lst *l, recio__lines *L, const char *b, const char *e, recio_buffer *items,
                                 recio_buffer *labels, recio_buffer *paths) {
    recio_lst_item it;
    const char *last = e;
    float f;
    uint64_t path_at = paths->size, label_at = labels->size / sizeof(float);
    while (last > b && last[-1] != '\t') last--;
    if (last == b) return recio__text_fail(l->errmsg, L, "expected 'index<TAB>label...<TAB>path'");
    memset(&it, 0, sizeof it);
    if (recio__parse_u64(&b, last, &it.index)) return recio__text_fail(l->errmsg, L, "the index is not a whole number");
    for (;;) {
        while (b < last && recio__is_blank(*b)) b++;
        if (b >= last) break;
        if (recio__parse_float(&b, last, &f)) return recio__text_fail(l->errmsg, L, "a label is not a number");
        if (recio__mem_write(labels, &f, sizeof f)) return RECIO_ERR_NOMEM;
        it.nlabels++;
    }
    if (it.nlabels == 0) return recio__text_fail(l->errmsg, L, "no label before the path");
    if (recio__mem_write(paths, last, (size_t)(e - last)) || recio__mem_write(paths, "", 1)) return RECIO_ERR_NOMEM;
    /* pointers are fixed up once the storage stops moving */
    it.labels = (const float *)(uintptr_t)label_at;
    it.path = (const char *)(uintptr_t)path_at;
    return recio__mem_write(items, &it, sizeof it) ? RECIO_ERR_NOMEM : RECIO_OK;
}

RECIODEF recio_err recio_lst_parse(recio_lst *l, const char *text, size_t n, const char *name) {
    recio__lines L;
    const char *b, *e;
    recio_buffer items, labels, paths;
    recio_err err = RECIO_OK;
    size_t i, lab_bytes;
    recio_allocator a;
    if (!l || (!text && n)) return RECIO_ERR_ARG;
    a = l->alloc;
    memset(l, 0, sizeof *l);
    l->alloc = a;
    memset(&items, 0, sizeof items);
    items.alloc = labels.alloc = paths.alloc = a;
    labels = paths = items;
    L.p = text ? text : "";
    L.end = L.p + n;
    L.name = name;
    L.line = 0;
    while (!err && recio__next_line(&L, &b, &e)) err = recio__lst_line(l, &L, b, e, &items, &labels, &paths);
    /* one block: labels (float aligned) then paths; items in their own array */
    lab_bytes = labels.size;
    if (!err && recio__buffer_reserve(&labels, paths.size)) err = RECIO_ERR_NOMEM;
    if (!err) {
        if (paths.size) memcpy(labels.data + lab_bytes, paths.data, paths.size);
        l->items = (recio_lst_item *)items.data;
        l->count = items.size / sizeof(recio_lst_item);
        l->storage = labels.data;
        for (i = 0; i < l->count; i++) {
            recio_lst_item *it = &l->items[i];
            it->labels = (const float *)(void *)labels.data + (uintptr_t)it->labels;
            it->path = (const char *)labels.data + lab_bytes + (uintptr_t)it->path;
        }
        items.data = labels.data = NULL;
    }
    recio_buffer_free(&items);
    recio_buffer_free(&labels);
    recio_buffer_free(&paths);
    return err;
}

#ifndef RECIO_NO_STDIO
RECIODEF recio_err recio_lst_load(recio_lst *l, const char *path) {
    char *text;
    size_t n;
    recio_err e;
    if (!l || !path) return RECIO_ERR_ARG;
    if ((e = recio__slurp(&l->alloc, path, &text, &n, l->errmsg)) != RECIO_OK) return e;
    e = recio_lst_parse(l, text, n, path);
    recio__free(&l->alloc, text);
    return e;
}
#endif

RECIODEF void recio_lst_free(recio_lst *l) {
    if (!l) return;
    recio__free(&l->alloc, l->items);
    recio__free(&l->alloc, l->storage);
    l->items = NULL;
    l->storage = NULL;
    l->count = 0;
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
    out->image = p + need;
    out->image_size = size - need;
    return RECIO_OK;
}

RECIODEF uint32_t recio_irecord_nlabels(const recio_irecord *r) { return r->flag ? r->flag : 1; }

RECIODEF float recio_irecord_label(const recio_irecord *r, uint32_t i) {
    if (r->flag == 0) return i == 0 ? r->label : 0.0f;
    return i < r->flag ? recio_load_f32le((const unsigned char *)r->labels + 4 * (size_t)i) : 0.0f;
}

RECIODEF size_t recio_irecord_header_size(uint32_t nlabels) {
    return RECIO_IRHEADER_SIZE + (nlabels == 1 ? 0 : 4 * (size_t)nlabels);
}

RECIODEF size_t recio_irecord_pack_header(void *dst, const float *labels, uint32_t nlabels, uint64_t id, uint64_t id2) {
    unsigned char *p = (unsigned char *)dst;
    uint32_t i;
    recio_store_u32le(p, nlabels == 1 ? 0 : nlabels);
    recio_store_f32le(p + 4, nlabels == 1 ? labels[0] : 0.0f);
    recio_store_u64le(p + 8, id);
    recio_store_u64le(p + 16, id2);
    if (nlabels != 1)
        for (i = 0; i < nlabels; i++) recio_store_f32le(p + RECIO_IRHEADER_SIZE + 4 * (size_t)i, labels[i]);
    return recio_irecord_header_size(nlabels);
}

/* ---- 4. SPLIT: implementation ------------------------------------------------------------------ */

/* (implementation of the split section) */

/* ---- 5. IMAGE OPS: implementation -------------------------------------------------------------- */

/* (implementation of the image section) */

/* ---- 6. RANDOM POLICIES AND TRANSFORM SPEC: implementation ------------------------------------- */

/* (implementation of the transform section) */

/* ---- 7. PREFETCHER: implementation ------------------------------------------------------------- */

#ifdef RECIO_THREADS
#if !defined(RECIO__POSIX)
#error "recio: RECIO_THREADS needs POSIX threads (pthreads) on this platform"
#endif
#include <pthread.h>

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
    pthread_t tid;
} recio__pf_thread;

struct recio_prefetch {
    recio_prefetch_desc d;
    pthread_mutex_t mu;
    pthread_cond_t cv_prod; /* producers: a free slot, the fetch turn, a reset, stop */
    pthread_cond_t cv_cons; /* consumer: a ready item, the end of the epoch */
    recio__pf_slot *slots;
    recio__pf_thread *threads;
    unsigned started;
    uint64_t gen, epoch, claim, want;
    int fetching;   /* a fetch or begin runs: they are serialised */
    int begun;      /* begin has run for this generation */
    int done;       /* no item `done_seq` in this generation: done_err says why */
    uint64_t done_seq;
    recio_err done_err, sticky;
    int stop;
    char done_msg[RECIO_PREFETCH_ERRMSG];
    char errmsg[RECIO_PREFETCH_ERRMSG];
};

static void recio__pf_copymsg(char *dst, const char *src) {
    size_t n = strlen(src);
    if (n >= RECIO_PREFETCH_ERRMSG) n = RECIO_PREFETCH_ERRMSG - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The epoch stops at item `seq` because of e (RECIO_END or an error). Called with the lock held. */
static void recio__pf_finish(recio_prefetch *p, uint64_t seq, recio_err e, const char *msg) {
    p->done = 1;
    p->done_seq = seq;
    p->done_err = e;
    recio__pf_copymsg(p->done_msg, e < 0 && !msg[0] ? recio_strerror(e) : msg);
    pthread_cond_broadcast(&p->cv_cons);
}

/* Run begin for the current generation; called and returns with the lock held. */
static void recio__pf_begin(recio_prefetch *p) {
    char msg[RECIO_PREFETCH_ERRMSG];
    uint64_t gen = p->gen, epoch = p->epoch;
    recio_err e = RECIO_OK;
    msg[0] = 0;
    p->fetching = 1;
    pthread_mutex_unlock(&p->mu);
    if (p->d.begin) e = p->d.begin(p->d.user, epoch, msg);
    pthread_mutex_lock(&p->mu);
    p->fetching = 0;
    pthread_cond_broadcast(&p->cv_prod);
    if (gen != p->gen) return;
    p->begun = 1;
    if (e != RECIO_OK) recio__pf_finish(p, p->claim, e == RECIO_END ? RECIO_END : e, msg);
}

/* Drop a slot whose generation was reset away while its callback ran. */
static int recio__pf_stale(recio_prefetch *p, recio__pf_slot *s) {
    if (s->gen == p->gen) return 0;
    s->state = RECIO__PF_FREE;
    pthread_cond_broadcast(&p->cv_prod);
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
    pthread_mutex_unlock(&p->mu);
    e = p->d.fetch(p->d.user, &s->pub, worker);
    pthread_mutex_lock(&p->mu);
    p->fetching = 0;
    pthread_cond_broadcast(&p->cv_prod);
    if (recio__pf_stale(p, s)) return;
    if (e != RECIO_OK) {
        s->state = RECIO__PF_FREE;
        recio__pf_finish(p, s->pub.seq, e, s->pub.errmsg);
        return;
    }
    if (p->d.work) {
        pthread_mutex_unlock(&p->mu);
        e = p->d.work(p->d.user, &s->pub, worker);
        pthread_mutex_lock(&p->mu);
        if (recio__pf_stale(p, s)) return;
        s->err = e == RECIO_END ? RECIO_ERR_ARG : e; /* work has no "end": that is a bug in it */
    }
    s->state = RECIO__PF_READY;
    pthread_cond_broadcast(&p->cv_cons);
}

static recio__pf_slot *recio__pf_find(recio_prefetch *p, int state) {
    unsigned i;
    for (i = 0; i < p->d.depth; i++)
        if (p->slots[i].state == state) return &p->slots[i];
    return NULL;
}

static void *recio__pf_main(void *arg) {
    recio__pf_thread *t = (recio__pf_thread *)arg;
    recio_prefetch *p = t->p;
    pthread_mutex_lock(&p->mu);
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
        else pthread_cond_wait(&p->cv_prod, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void recio__pf_stop(recio_prefetch *p) {
    unsigned i;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv_prod);
    pthread_cond_broadcast(&p->cv_cons);
    pthread_mutex_unlock(&p->mu);
    for (i = 0; i < p->started; i++) pthread_join(p->threads[i].tid, NULL);
    p->started = 0;
}

RECIODEF void recio_prefetch_destroy(recio_prefetch *p) {
    unsigned i;
    if (!p) return;
    recio__pf_stop(p);
    pthread_cond_destroy(&p->cv_prod);
    pthread_cond_destroy(&p->cv_cons);
    pthread_mutex_destroy(&p->mu);
    for (i = 0; p->slots && i < p->d.depth; i++) recio__free(&p->d.alloc, p->slots[i].pub.data);
    recio__free(&p->d.alloc, p->slots);
    recio__free(&p->d.alloc, p->threads);
    recio__free(&p->d.alloc, p);
}

static recio_err recio__pf_alloc(recio_prefetch *p) {
    unsigned i;
    p->slots = (recio__pf_slot *)recio__malloc(&p->d.alloc, sizeof *p->slots * p->d.depth);
    p->threads = (recio__pf_thread *)recio__malloc(&p->d.alloc, sizeof *p->threads * p->d.threads);
    if (!p->slots || !p->threads) return RECIO_ERR_NOMEM;
    memset(p->slots, 0, sizeof *p->slots * p->d.depth);
    for (i = 0; i < p->d.depth; i++) {
        recio__pf_slot *s = &p->slots[i];
        s->alloc = &p->d.alloc;
        s->pub.index = i;
        if (p->d.slot_size && recio_prefetch_slot_reserve(&s->pub, p->d.slot_size)) return RECIO_ERR_NOMEM;
    }
    return RECIO_OK;
}

RECIODEF recio_err recio_prefetch_create(recio_prefetch **out, const recio_prefetch_desc *desc) {
    recio_prefetch *p;
    recio_err e;
    unsigned i;
    if (!out) return RECIO_ERR_ARG;
    *out = NULL;
    if (!desc || !desc->fetch || desc->depth > 4096 || desc->threads > 1024) return RECIO_ERR_ARG;
    p = (recio_prefetch *)recio__malloc(&desc->alloc, sizeof *p);
    if (!p) return RECIO_ERR_NOMEM;
    memset(p, 0, sizeof *p);
    p->d = *desc;
    if (!p->d.depth) p->d.depth = 4;
    if (!p->d.threads) p->d.threads = 1;
    p->epoch = p->d.epoch;
    if (pthread_mutex_init(&p->mu, NULL) || pthread_cond_init(&p->cv_prod, NULL) || pthread_cond_init(&p->cv_cons, NULL)) {
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
        if (pthread_create(&p->threads[i].tid, NULL, recio__pf_main, &p->threads[i]) != 0) {
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
    if (!q) return RECIO_ERR_NOMEM;
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
            pthread_cond_broadcast(&p->cv_prod);
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
        recio__pf_copymsg(p->errmsg, p->stop ? "prefetcher stopped" : "every slot is taken: release one before asking for more");
        return RECIO_ERR_ARG;
    }
    *wait = 1;
    return RECIO_OK;
}

RECIODEF recio_err recio_prefetch_next(recio_prefetch *p, recio_prefetch_slot **slot) {
    recio_err e;
    int wait;
    if (!p || !slot) return RECIO_ERR_ARG;
    *slot = NULL;
    pthread_mutex_lock(&p->mu);
    while ((e = recio__pf_take(p, slot, &wait)) == RECIO_OK && wait) pthread_cond_wait(&p->cv_cons, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return e;
}

RECIODEF void recio_prefetch_release(recio_prefetch *p, recio_prefetch_slot *slot) {
    recio__pf_slot *s = (recio__pf_slot *)slot;
    if (!p || !slot) return;
    pthread_mutex_lock(&p->mu);
    RECIO_ASSERT(s->state == RECIO__PF_HELD);
    s->state = RECIO__PF_FREE;
    pthread_cond_broadcast(&p->cv_prod);
    pthread_mutex_unlock(&p->mu);
}

RECIODEF void recio_prefetch_reset(recio_prefetch *p, uint64_t epoch) {
    unsigned i;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->gen++;
    p->epoch = epoch;
    p->claim = p->want = 0;
    p->begun = p->done = 0;
    p->sticky = RECIO_OK;
    p->errmsg[0] = 0;
    for (i = 0; i < p->d.depth; i++)
        if (p->slots[i].state == RECIO__PF_READY) p->slots[i].state = RECIO__PF_FREE;
    pthread_cond_broadcast(&p->cv_prod);
    pthread_cond_broadcast(&p->cv_cons);
    pthread_mutex_unlock(&p->mu);
}

RECIODEF const char *recio_prefetch_errmsg(const recio_prefetch *p) { return p ? p->errmsg : ""; }
#endif /* RECIO_THREADS */

/* ---- 8. ITERATOR: implementation --------------------------------------------------------------- */

/* (implementation of the iterator section) */

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
