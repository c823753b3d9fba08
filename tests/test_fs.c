/* The filesystem table: a throwaway in-memory filesystem serving "mem://" (the recipe of
   docs/fs.md, tried once), and the same calls recio makes on local files. Over mem:// go the reader
   (streamed, and mapped through the fs's map), the atomic writer with its .idx (nothing visible
   before the commit, both or neither after, PATH unchanged after an abort or a failed commit), the
   split with a wildcard, a directory and its .idx side files, the iterator with a .lst side file,
   recio_index_load / recio_lst_load / recio_index_save, and recio_fs_find's scheme rules; then the
   local filesystem's group commit (what a tool that replaces several outputs calls). The
   scheme's whole cost is the mem_* functions below and one registration: a desc's `fs` (or
   recio_index.fs / recio_lst.fs) pointing at mem_fs. Expected values come from how the records
   are written here, never from the code under test. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "tmpdir.h"

/* ---- the mem:// filesystem: files by full name, directories implied by the names ---- */

#define MEM_FILES 64
typedef struct mem_file {
    char *name; /* NULL: free slot */
    unsigned char *data;
    size_t size;
} mem_file;

typedef struct mem_fs_state {
    mem_file f[MEM_FILES];
    int fail_commit; /* the next commit fails (a full disk, a lost connection) */
    int opens, closes;
} mem_fs_state;

static mem_fs_state mem;

static mem_file *mem_lookup(const char *name) {
    int i;
    for (i = 0; i < MEM_FILES; i++)
        if (mem.f[i].name && strcmp(mem.f[i].name, name) == 0) return &mem.f[i];
    return NULL;
}

/* A file with its own copy of the bytes, replacing one of that name. */
static void mem_put(const char *name, const void *data, size_t n) {
    mem_file *f = mem_lookup(name);
    int i;
    for (i = 0; !f && i < MEM_FILES; i++)
        if (!mem.f[i].name) f = &mem.f[i], f->name = (char *)malloc(strlen(name) + 1), strcpy(f->name, name);
    if (!f) return;
    free(f->data);
    f->data = (unsigned char *)malloc(n ? n : 1);
    if (n) memcpy(f->data, data, n);
    f->size = n;
}

static void mem_del(mem_file *f) {
    free(f->name), free(f->data);
    memset(f, 0, sizeof *f);
}

static void mem_reset(void) {
    int i;
    for (i = 0; i < MEM_FILES; i++)
        if (mem.f[i].name) mem_del(&mem.f[i]);
    memset(&mem, 0, sizeof mem);
}

/* A stream over a snapshot of the file's bytes. */
typedef struct mem_cursor {
    unsigned char *data;
    size_t size, at;
} mem_cursor;

static int64_t mem_read(void *u, void *buf, size_t n) {
    mem_cursor *c = (mem_cursor *)u;
    if (n > c->size - c->at) n = c->size - c->at;
    memcpy(buf, c->data + c->at, n);
    c->at += n;
    return (int64_t)n;
}
static int mem_seek(void *u, uint64_t off) {
    mem_cursor *c = (mem_cursor *)u;
    if (off > c->size) return -1;
    c->at = (size_t)off;
    return 0;
}
static int64_t mem_size(void *u) { return (int64_t)((mem_cursor *)u)->size; }
static int mem_close(void *u) {
    mem_cursor *c = (mem_cursor *)u;
    mem.closes++;
    free(c->data), free(c);
    return 0;
}

static recio_err mem_open_read(void *user, const char *path, recio_io *io, char *why) {
    mem_file *f = mem_lookup(path);
    mem_cursor *c;
    (void)user;
    if (!f) return strcpy(why, "no such mem file"), RECIO_ERR_IO;
    c = (mem_cursor *)calloc(1, sizeof *c);
    c->data = (unsigned char *)malloc(f->size ? f->size : 1);
    memcpy(c->data, f->data, f->size);
    c->size = f->size;
    memset(io, 0, sizeof *io);
    io->read = mem_read, io->seek = mem_seek, io->size = mem_size, io->close = mem_close, io->user = c;
    mem.opens++;
    return RECIO_OK;
}

/* "mem://a/b" is a directory when some file's name starts with "mem://a/b/". */
static int mem_is_dir(const char *path) {
    size_t n = strlen(path);
    int i;
    for (i = 0; i < MEM_FILES; i++)
        if (mem.f[i].name && strncmp(mem.f[i].name, path, n) == 0 && (mem.f[i].name[n] == '/' || path[n - 1] == '/')) return 1;
    return 0;
}

static recio_err mem_stat(void *user, const char *path, recio_fs_stat *st, char *why) {
    mem_file *f = mem_lookup(path);
    (void)user, (void)why;
    st->kind = f ? RECIO_FS_FILE : mem_is_dir(path) ? RECIO_FS_DIR : RECIO_FS_NONE;
    st->size = f ? f->size : 0;
    return RECIO_OK;
}

/* Each name right under dir, once (a file, or the first component of a deeper name: a directory). */
static recio_err mem_list(void *user, const char *dir, int (*entry)(void *, const char *, recio_fs_kind), void *ctx,
                          char *why) {
    char seen[MEM_FILES][64];
    size_t n = strlen(dir), skip = n + (dir[n - 1] != '/');
    int i, j, nseen = 0;
    (void)user;
    if (!mem_is_dir(dir)) return strcpy(why, "no such mem directory"), RECIO_ERR_IO;
    for (i = 0; i < MEM_FILES; i++) {
        const char *name = mem.f[i].name, *slash;
        size_t len;
        if (!name || strncmp(name, dir, n) != 0 || (dir[n - 1] != '/' && name[n] != '/')) continue;
        slash = strchr(name + skip, '/');
        len = slash ? (size_t)(slash - (name + skip)) : strlen(name + skip);
        for (j = 0; j < nseen && !(strlen(seen[j]) == len && !strncmp(seen[j], name + skip, len)); j++) {}
        if (j < nseen || len >= 64) continue;
        memcpy(seen[nseen], name + skip, len), seen[nseen][len] = 0;
        if (entry(ctx, seen[nseen++], slash ? RECIO_FS_DIR : RECIO_FS_FILE)) break;
    }
    return RECIO_OK;
}

/* An output on its way: its bytes grow here and appear under its name on commit. */
typedef struct mem_pending {
    char name[256];
    recio_buffer b;
    int del;
} mem_pending;

static int mem_write(void *u, const void *buf, size_t n) {
    recio_buffer *b = &((mem_pending *)u)->b;
    if (b->size + n > b->capacity) {
        size_t cap = (b->size + n) * 2;
        unsigned char *p = (unsigned char *)realloc(b->data, cap);
        if (!p) return -1;
        b->data = p, b->capacity = cap;
    }
    memcpy(b->data + b->size, buf, n);
    b->size += n;
    return 0;
}

/* In place: the file appears when its stream is closed. */
static int mem_close_put(void *u) {
    mem_pending *p = (mem_pending *)u;
    mem_put(p->name, p->b.data, p->b.size);
    free(p->b.data), free(p);
    return 0;
}

static recio_err mem_create(void *user, const char *path, recio_fs_mode mode, recio_fs_out *out, char *why) {
    mem_pending *p = (mem_pending *)calloc(1, sizeof *p);
    (void)user, (void)why;
    snprintf(p->name, sizeof p->name, "%s", path);
    p->del = mode == RECIO_FS_DELETE;
    memset(out, 0, sizeof *out);
    out->io.write = mem_write, out->io.user = p;
    if (mode == RECIO_FS_IN_PLACE) out->io.close = mem_close_put;
    else out->pending = p;
    return RECIO_OK;
}

static recio_err mem_commit(void *user, void *const *pending, int n, char *why) {
    int i, fail = mem.fail_commit;
    (void)user;
    mem.fail_commit = 0;
    for (i = 0; i < n; i++) { /* all or none: nothing changes unless every one can */
        mem_pending *p = (mem_pending *)pending[i];
        if (!p) continue;
        if (!fail && p->del && mem_lookup(p->name)) mem_del(mem_lookup(p->name));
        else if (!fail && !p->del) mem_put(p->name, p->b.data, p->b.size);
        free(p->b.data), free(p);
    }
    if (fail) strcpy(why, "mem: the commit was refused");
    return fail ? RECIO_ERR_IO : RECIO_OK;
}

static void mem_discard(void *user, void *pending) {
    mem_pending *p = (mem_pending *)pending;
    (void)user;
    if (p) free(p->b.data), free(p);
}

static recio_err mem_remove(void *user, const char *path, char *why) {
    mem_file *f = mem_lookup(path);
    (void)user;
    if (!f) return strcpy(why, "no such mem file"), RECIO_ERR_IO;
    mem_del(f);
    return RECIO_OK;
}

/* Mapped: the bytes themselves, no copy (valid while the file is not replaced). */
static recio_err mem_map(void *user, const char *path, recio_fs_map *m, char *why) {
    mem_file *f = mem_lookup(path);
    (void)user;
    if (!f) return strcpy(why, "no such mem file"), RECIO_ERR_IO;
    m->data = f->data, m->size = f->size, m->token = f;
    return RECIO_OK;
}
static void mem_unmap(void *user, recio_fs_map *m) { (void)user, (void)m; }

static const recio_fs mem_fs = {"mem", NULL, 0, mem_open_read, mem_stat, mem_list, mem_create, mem_commit,
                                mem_discard, mem_remove, mem_map, mem_unmap, NULL};

/* ---- the tests ---- */

/* n records of file `file`: record i holds (file * 1000 + i) little-endian, then i bytes of i. */
static void write_ds(const char *path, const char *idx, unsigned file, unsigned n) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    unsigned char rec[300];
    unsigned i;
    memset(&d, 0, sizeof d);
    d.fs = &mem_fs;
    d.index_path = idx;
    d.atomic = 1;
    CHECK_EQ_INT(recio_writer_open_desc(&w, path, &d), RECIO_OK);
    for (i = 0; i < n; i++) {
        recio_store_u32le(rec, file * 1000 + i);
        memset(rec + 4, (int)i, i);
        CHECK_EQ_INT(recio_writer_write(w, rec, 4 + i), RECIO_OK);
    }
    CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
}

static unsigned rec_id(const recio_record *r) { return r->size >= 4 ? recio_load_u32le(r->data) : 99999; }

static void test_find(void) {
    recio_fs plain;
    memset(&plain, 0, sizeof plain);
    plain.open_read = mem_open_read;
    plain.next = &mem_fs;
    CHECK(recio_fs_find(&mem_fs, "mem://a.rec") == &mem_fs);
    CHECK(recio_fs_find(&mem_fs, "MEM://a.rec") == &mem_fs); /* schemes ignore case */
    CHECK(recio_fs_find(&mem_fs, "memx://a.rec") == NULL);
    CHECK(recio_fs_find(&mem_fs, "me://a.rec") == NULL);
    CHECK(recio_fs_find(&plain, "mem://a.rec") == &mem_fs); /* through next */
    CHECK(recio_fs_find(&plain, "a.rec") == &plain);        /* a NULL scheme takes plain paths */
    CHECK(recio_fs_find(&plain, "file:///a.rec") == &plain); /* and file:// */
    CHECK(recio_fs_find(&plain, "C://a.rec") == &plain);    /* one letter is a drive, not a scheme */
    CHECK(recio_fs_find(NULL, "zz://a.rec") == NULL);
#ifndef RECIO_NO_STDIO
    CHECK(recio_fs_find(NULL, "a.rec") != NULL && recio_fs_find(NULL, "a.rec") == recio_fs_find(NULL, "FILE:///a.rec"));
    { /* file://PATH is PATH to the local files */
        recio_reader *r = NULL;
        recio_record rec;
        CHECK_EQ_INT(recio_reader_open(&r, "file://tests/data/compat/a.rec"), RECIO_OK);
        CHECK(r && recio_reader_next(r, &rec) == RECIO_OK);
        recio_reader_close(r);
    }
#else
    CHECK(recio_fs_find(NULL, "a.rec") == NULL);
#endif
}

/* The atomic writer over mem://: nothing there before the commit, both files after; an abort or a
   refused commit leaves the earlier pair as it was. */
static void test_writer_commit_discard(void) {
    recio_writer_desc d;
    recio_writer *w = NULL;
    mem_file *f;
    char msg[RECIO_ERRMSG_SIZE];
    mem_reset();
    memset(&d, 0, sizeof d);
    d.fs = &mem_fs, d.atomic = 1, d.index_path = "mem://w/a.idx", d.errmsg = msg;
    CHECK_EQ_INT(recio_writer_open_desc(&w, "mem://w/a.rec", &d), RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, "first", 5), RECIO_OK);
    CHECK(!mem_lookup("mem://w/a.rec") && !mem_lookup("mem://w/a.idx"));
    CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
    CHECK((f = mem_lookup("mem://w/a.rec")) != NULL && f->size == 16 && !memcmp(f->data + 8, "first", 5));
    CHECK((f = mem_lookup("mem://w/a.idx")) != NULL && f->size == 4 && !memcmp(f->data, "0\t0\n", 4));
    /* abort: the pending pair is dropped */
    CHECK_EQ_INT(recio_writer_open_desc(&w, "mem://w/a.rec", &d), RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, "second record", 13), RECIO_OK);
    recio_writer_abort(w);
    CHECK((f = mem_lookup("mem://w/a.rec")) != NULL && f->size == 16);
    /* a refused commit: an error naming the file, neither replaced */
    CHECK_EQ_INT(recio_writer_open_desc(&w, "mem://w/a.rec", &d), RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, "second record", 13), RECIO_OK);
    mem.fail_commit = 1;
    CHECK_EQ_INT(recio_writer_close(w), RECIO_ERR_IO);
    CHECK((f = mem_lookup("mem://w/a.rec")) != NULL && f->size == 16);
    CHECK((f = mem_lookup("mem://w/a.idx")) != NULL && f->size == 4);
    /* a filesystem without create is read-only, and says so */
    {
        recio_fs ro = mem_fs;
        ro.create = NULL;
        d.fs = &ro;
        d.index_path = NULL;
        CHECK_EQ_INT(recio_writer_open_desc(&w, "mem://w/b.rec", &d), RECIO_ERR_UNSUPPORTED);
        CHECK(w == NULL && strcmp(msg, "mem://w/b.rec: offset 0: cannot create: the filesystem is read-only") == 0);
    }
}

/* A reader over mem://, streamed and mapped: the same records; a missing file in the fs's words. */
static void test_reader(void) {
    recio_reader_desc d;
    recio_reader *r = NULL;
    recio_record rec;
    char msg[RECIO_ERRMSG_SIZE];
    unsigned n, mapped;
    mem_reset();
    write_ds("mem://r/a.rec", NULL, 3, 40);
    for (mapped = 0; mapped < 2; mapped++) {
        memset(&d, 0, sizeof d);
        d.fs = &mem_fs, d.use_mmap = (int)mapped;
        CHECK_EQ_INT(recio_reader_open_desc(&r, "mem://r/a.rec", &d), RECIO_OK);
        for (n = 0; recio_reader_next(r, &rec) == RECIO_OK; n++) CHECK_EQ_INT(rec_id(&rec), 3000 + n);
        CHECK_EQ_INT(n, 40);
        CHECK_EQ_INT(recio_reader_seek(r, 0), RECIO_OK);
        CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_OK);
        /* mapped: the record points into the filesystem's own bytes (zero copy); streamed: a copy */
        CHECK(((const unsigned char *)rec.data == mem_lookup("mem://r/a.rec")->data + 8) == (mapped == 1));
        recio_reader_close(r);
    }
    d.errmsg = msg;
    CHECK_EQ_INT(recio_reader_open_desc(&r, "mem://r/none.rec", &d), RECIO_ERR_IO);
    CHECK(strcmp(msg, "mem://r/none.rec: offset 0: cannot open: no such mem file") == 0);
    CHECK_EQ_INT(recio_reader_open_desc(&r, "nofs://x.rec", &d), RECIO_ERR_UNSUPPORTED);
    CHECK(strstr(msg, "nofs://x.rec: offset 0: cannot open: no filesystem serves this path") == msg);
    CHECK_EQ_INT(mem.opens, mem.closes);
}

/* Reads every record of part `rank` of nsplit; returns how many, ids in ids. */
static unsigned read_part(const char *uris, unsigned rank, unsigned nsplit, recio_split_desc *d, unsigned *ids) {
    recio_split *s = NULL;
    recio_record rec;
    unsigned n = 0;
    recio_err e = recio_split_open_desc(&s, uris, rank, nsplit, d);
    if (e != RECIO_OK) fprintf(stderr, "  open failed: %s\n", recio_strerror(e));
    CHECK_EQ_INT(e, RECIO_OK);
    while (e == RECIO_OK && (e = recio_split_next(s, &rec)) == RECIO_OK) ids[n++] = rec_id(&rec);
    CHECK_EQ_INT(e, RECIO_END);
    recio_split_close(s);
    return n;
}

/* A wildcard, a directory (its *.rec files in sorted order, not the .idx beside them), a wildcard
   in a directory component; parts that cover every record once; index mode through the .idx side
   files the split finds beside each file through the filesystem. */
static void test_split(void) {
    recio_split_desc d;
    unsigned ids[400], n, k, r, want[130], total = 0;
    mem_reset();
    write_ds("mem://ds/b.rec", "mem://ds/b.rec.idx", 2, 30);
    write_ds("mem://ds/a.rec", "mem://ds/a.idx", 1, 40); /* im2rec's name: .rec replaced */
    write_ds("mem://ds/sub/c.rec", NULL, 3, 20);
    write_ds("mem://other/c.rec", NULL, 4, 10);
    mem_put("mem://ds/notes.txt", "x", 1);
    for (k = 0; k < 40; k++) want[k] = 1000 + k; /* a.rec, then b.rec: sorted by name */
    for (k = 0; k < 30; k++) want[40 + k] = 2000 + k;
    memset(&d, 0, sizeof d);
    d.fs = &mem_fs;
    n = read_part("mem://ds/*.rec", 0, 1, &d, ids);
    CHECK_EQ_INT(n, 70);
    for (k = 0; k < n && k < 70; k++) CHECK_EQ_INT(ids[k], want[k]);
    n = read_part("mem://ds", 0, 1, &d, ids);
    CHECK_EQ_INT(n, 70);
    for (k = 0; k < n && k < 70; k++) CHECK_EQ_INT(ids[k], want[k]);
    n = read_part("mem://ds/", 0, 1, &d, ids); /* as S3 prefixes are written: its files are "mem://ds/a.rec" */
    CHECK_EQ_INT(n, 70);
    for (k = 0; k < n && k < 70; k++) CHECK_EQ_INT(ids[k], want[k]);
    {
        recio_split *s = NULL;
        recio_split_info info;
        CHECK_EQ_INT(recio_split_open_desc(&s, "mem://ds/", 0, 1, &d), RECIO_OK);
        CHECK(s && recio_split_query(s, &info) == RECIO_OK && info.nfiles == 2 && !strcmp(info.files[0], "mem://ds/a.rec") &&
              !strcmp(info.files[1], "mem://ds/b.rec"));
        recio_split_close(s);
    }
    n = read_part("mem://*/c.rec;mem://ds/?.rec", 0, 1, &d, ids); /* other/c.rec (ds/c.rec is not there), a, b */
    CHECK_EQ_INT(n, 80);
    CHECK(n == 80 && ids[0] == 4000 && ids[10] == 1000 && ids[50] == 2000);
    for (r = 0; r < 3; r++) total += read_part("mem://ds/[ab].rec", r, 3, &d, ids);
    CHECK_EQ_INT(total, 70);
    d.mode = RECIO_SPLIT_INDEX; /* needs each file's .idx: a.idx (replaced name), b.rec.idx (beside) */
    for (total = 0, r = 0; r < 4; r++) total += read_part("mem://ds", r, 4, &d, ids);
    CHECK_EQ_INT(total, 70);
    d.mode = RECIO_SPLIT_BYTES;
    {
        recio_split *s = NULL;
        recio_fs nolist = mem_fs;
        char msg[RECIO_ERRMSG_SIZE];
        nolist.list = NULL;
        d.fs = &nolist;
        d.errmsg = msg; /* a failed open says why here; its handle is NULL */
        CHECK_EQ_INT(recio_split_open_desc(&s, "mem://ds/*.rec", 0, 1, &d), RECIO_ERR_UNSUPPORTED);
        CHECK(s == NULL && strstr(msg, "the filesystem cannot list directories") != NULL);
        d.fs = &mem_fs;
        CHECK_EQ_INT(recio_split_open_desc(&s, "mem://ds/z*.rec", 0, 1, &d), RECIO_ERR_IO);
        CHECK(s == NULL && strcmp(msg, "mem://ds/z*.rec: no file matches") == 0);
        d.errmsg = NULL;
    }
    CHECK_EQ_INT(mem.opens, mem.closes);
}

/* The .idx rule, asked through the filesystem: REC.idx first, then .rec replaced (the one to make). */
static void test_index_path(void) {
    char out[64];
    int found = -1;
    mem_reset();
    CHECK_EQ_INT(recio_index_path(out, sizeof out, "mem://x/t.rec", &mem_fs, &found), RECIO_OK);
    CHECK(strcmp(out, "mem://x/t.idx") == 0 && found == 0);
    mem_put("mem://x/t.idx", "0\t0\n", 4);
    CHECK_EQ_INT(recio_index_path(out, sizeof out, "mem://x/t.rec", &mem_fs, &found), RECIO_OK);
    CHECK(strcmp(out, "mem://x/t.idx") == 0 && found == 1);
    mem_put("mem://x/t.rec.idx", "0\t0\n", 4);
    CHECK_EQ_INT(recio_index_path(out, sizeof out, "mem://x/t.rec", &mem_fs, &found), RECIO_OK);
    CHECK(strcmp(out, "mem://x/t.rec.idx") == 0 && found == 1);
    CHECK_EQ_INT(recio_index_path(out, sizeof out, "mem://x/data", &mem_fs, &found), RECIO_OK);
    CHECK(strcmp(out, "mem://x/data.idx") == 0 && found == 0);
    CHECK_EQ_INT(recio_index_path(out, 17, "mem://x/t.rec", &mem_fs, NULL), RECIO_ERR_SMALL); /* needs 13 + 5 */
}

/* recio_index_load / _save and recio_lst_load through the filesystem of their desc's fs. */
static void test_index_and_lst(void) {
    recio_index idx;
    recio_index_desc id;
    recio_lst lst;
    recio_lst_desc ld;
    char msg[RECIO_ERRMSG_SIZE];
    static const char text[] = "0\t1\ta.jpg\n1\t2.5\tb.jpg\n";
    mem_reset();
    mem_put("mem://l/x.idx", "5\t0\n7\t24\n", 9);
    mem_put("mem://l/x.lst", text, sizeof text - 1);
    memset(&id, 0, sizeof id);
    id.fs = &mem_fs;
    id.errmsg = msg;
    CHECK_EQ_INT(recio_index_load(&idx, "mem://l/x.idx", &id), RECIO_OK);
    CHECK(idx.count == 2 && idx.entries[0].key == 5 && idx.entries[1].offset == 24);
    CHECK_EQ_INT(recio_index_save(&idx, "mem://l/y.idx", &id), RECIO_OK);
    CHECK(mem_lookup("mem://l/y.idx") && mem_lookup("mem://l/y.idx")->size == 9 &&
          !memcmp(mem_lookup("mem://l/y.idx")->data, "5\t0\n7\t24\n", 9));
    recio_index_free(&idx);
    CHECK_EQ_INT(recio_index_load(&idx, "mem://l/none.idx", &id), RECIO_ERR_IO);
    CHECK(strcmp(msg, "mem://l/none.idx: offset 0: cannot open: no such mem file") == 0);
    memset(&ld, 0, sizeof ld);
    ld.fs = &mem_fs;
    CHECK_EQ_INT(recio_lst_load(&lst, "mem://l/x.lst", &ld), RECIO_OK);
    CHECK(lst.count == 2 && lst.items[1].labels[0] == 2.5f && strcmp(lst.items[1].path, "b.jpg") == 0);
    recio_lst_free(&lst);
}

/* The iterator over mem://: a directory split in two parts, its records re-read by key, labels
   from a .lst side file on the same filesystem. */
static recio_err copy_id(void *user, const recio_irecord *rec, uint64_t seed, void *out, size_t item_bytes, unsigned worker,
                         char *errmsg) {
    (void)user, (void)seed, (void)worker, (void)errmsg;
    memset(out, 0, item_bytes);
    recio_store_u32le(out, (uint32_t)rec->id);
    return RECIO_OK;
}

static void test_iterator(void) {
    recio_writer_desc wd;
    recio_writer *w = NULL;
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    char msg[RECIO_ERRMSG_SIZE], lst[24 * 32] = "";
    unsigned char rec[64];
    unsigned i, part, seen = 0, labels_ok = 1;
    mem_reset();
    memset(&wd, 0, sizeof wd);
    wd.fs = &mem_fs, wd.atomic = 1;
    CHECK_EQ_INT(recio_writer_open_desc(&w, "mem://it/a.rec", &wd), RECIO_OK);
    for (i = 0; i < 24; i++) { /* image records without images: the callback takes the id */
        float label = (float)i;
        size_t h = recio_irecord_pack_header(rec, &label, 1, 100 + i, 0);
        CHECK_EQ_INT(recio_writer_write(w, rec, h), RECIO_OK);
        snprintf(lst + strlen(lst), 32, "%u\t%u\tx%u.jpg\n", 100 + i, 500 + i, i);
    }
    CHECK_EQ_INT(recio_writer_close(w), RECIO_OK);
    mem_put("mem://it/a.lst", lst, strlen(lst));
    for (part = 0; part < 2; part++) {
        memset(&d, 0, sizeof d);
        d.uris = "mem://it", d.source.fs = &mem_fs, d.nsplit = 2, d.rank = part;
        d.item.transform = copy_id, d.item.item_bytes = 4, d.run.batch = 5, d.run.last_batch = RECIO_LAST_PAD;
        d.labels.imglist = "mem://it/a.lst";
        d.errmsg = msg;
        CHECK_EQ_INT(recio_iter_open(&it, &d), RECIO_OK);
        while (it && recio_iter_next(it, &b) == RECIO_OK)
            for (i = 0; i < b.count; i++) {
                uint32_t id = recio_load_u32le((const unsigned char *)b.data + 4 * i);
                seen += id >= 100 && id < 124;
                labels_ok &= b.labels[i] == (float)(id + 400); /* 500 + i from the .lst, not i */
            }
        recio_iter_close(it);
    }
    CHECK_EQ_INT(seen, 24);
    CHECK(labels_ok);
    CHECK_EQ_INT(mem.opens, mem.closes);
}

#if !defined(RECIO_NO_STDIO) && !defined(_WIN32)
#include <dirent.h>
static char dir[64];
static const char *at(const char *name) {
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}
static int same_text(const char *path, const char *text) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n);
    int same = b && n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}
static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
}
static int exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* Temporary or kept-aside files left in the folder. */
static int strays(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp.") != NULL || strstr(e->d_name, ".old.") != NULL;
    if (d) closedir(d);
    return n;
}

/* Three outputs through the local filesystem's table, as a command replacing a dataset makes
   them: two new files and one that goes (RECIO_FS_DELETE); 0 when all three were made. */
static int prepare(const char *a, const char *b, const char *gone, recio_fs_out *o, char *why) {
    const recio_fs *fs = recio_fs_find(NULL, a);
    int i;
    why[0] = 0;
    if (fs->create(fs->user, a, RECIO_FS_ATOMIC, &o[0], why) != RECIO_OK) return -1;
    if (fs->create(fs->user, b, RECIO_FS_ATOMIC, &o[1], why) != RECIO_OK) return -1;
    if (fs->create(fs->user, gone, RECIO_FS_DELETE, &o[2], why) != RECIO_OK) return -1;
    CHECK(o[0].tmp && exists(o[0].tmp) && o[2].tmp == NULL);
    CHECK(o[0].io.write(o[0].io.user, "new a", 5) == 0 && o[1].io.write(o[1].io.user, "new b", 5) == 0);
    for (i = 0; i < 2; i++) CHECK(o[i].io.close(o[i].io.user) == 0);
    return 0;
}

/* ...then commit them together, all or none. */
static recio_err commit3(recio_fs_out *o, char *why) {
    const recio_fs *fs = recio_fs_find(NULL, "x");
    void *p[3];
    int i;
    for (i = 0; i < 3; i++) p[i] = o[i].pending;
    return fs->commit(fs->user, p, 3, why);
}

static void test_local_group_commit(void) {
    char why[RECIO_ERRMSG_SIZE];
    recio_fs_out o[3];
    snprintf(dir, sizeof dir, "build/test_fs-XXXXXX");
    CHECK(t_mkdtemp(dir) != NULL);
    put(at("a.txt"), "old a"), put(at("b.txt"), "old b"), put(at("gone.txt"), "old gone");
    CHECK_EQ_INT(prepare(at("a.txt"), at("b.txt"), at("gone.txt"), o, why), 0);
    CHECK(same_text(at("a.txt"), "old a") && exists(at("gone.txt"))); /* nothing before the commit */
    CHECK_EQ_INT(commit3(o, why), RECIO_OK);
    CHECK(same_text(at("a.txt"), "new a") && same_text(at("b.txt"), "new b") && !exists(at("gone.txt")) && !why[0]);
    CHECK_EQ_INT(strays(), 0);
    /* b cannot be renamed into place (a folder took its name meanwhile): a and gone.txt stay */
    put(at("a.txt"), "old a"), put(at("gone.txt"), "old gone");
    CHECK_EQ_INT(prepare(at("a.txt"), at("b.txt"), at("gone.txt"), o, why), 0);
    remove(at("b.txt"));
    CHECK(t_mkdir(at("b.txt")) == 0);
    put(at("b.txt/x"), "keeps the folder");
    CHECK_EQ_INT(commit3(o, why), RECIO_ERR_IO);
    CHECK(strstr(why, "b.txt") != NULL);
    CHECK(same_text(at("a.txt"), "old a") && same_text(at("gone.txt"), "old gone"));
    CHECK_EQ_INT(strays(), 0);
    /* the deletion, last, fails (a folder with a file in it): a and b come back as they were */
    CHECK(t_rmtree(at("b.txt")) == 0);
    put(at("b.txt"), "old b");
    CHECK(t_mkdir(at("gone.d")) == 0);
    put(at("gone.d/x"), "keeps the folder");
    CHECK_EQ_INT(prepare(at("a.txt"), at("b.txt"), at("gone.d"), o, why), 0);
    CHECK_EQ_INT(commit3(o, why), RECIO_ERR_IO);
    CHECK(strstr(why, "cannot remove") != NULL);
    CHECK(same_text(at("a.txt"), "old a") && same_text(at("b.txt"), "old b") && exists(at("gone.d/x")));
    CHECK_EQ_INT(strays(), 0);
    CHECK(t_rmtree(at("gone.d")) == 0 && t_rmtree(dir) == 0);
}
#endif

int main(void) {
    RUN(test_find);
    RUN(test_writer_commit_discard);
    RUN(test_reader);
    RUN(test_split);
    RUN(test_index_path);
    RUN(test_index_and_lst);
    RUN(test_iterator);
#if !defined(RECIO_NO_STDIO) && !defined(_WIN32)
    RUN(test_local_group_commit);
#endif
    mem_reset();
    return t_done("fs");
}
