/* Every public fallible call of the records side (CORE, RECORDIO, INDEX AND IMAGE RECORDS, SPLIT,
   PREFETCHER) with a bad argument: the code, and the words that name what is wrong, where the call has
   a place for words (a desc's errmsg at birth, the handle after). Calls with neither (a NULL handle,
   a header parser) are checked for their code. Issue 24's one error convention. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include <errno.h>
#include <string.h>

#define MISSING "build/no-such-dir/none.rec"

static char msg[RECIO_ERRMSG_SIZE];

/* msg holds `want` (a substring), and it was written: the words name what is wrong. */
static int says(const char *have, const char *want) {
    if (strstr(have, want)) return 1;
    printf("  got  \"%s\"\n  want \"...%s...\"\n", have, want);
    return 0;
}

static void test_reader(void) {
    recio_reader *r = (recio_reader *)&r;
    recio_reader_desc d;
    recio_record rec;
    static const unsigned char rec8[12] = {0x0a, 0x23, 0xd7, 0xce, 4, 0, 0, 0, 'a', 'b', 'c', 'd'};
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_reader_open(NULL, "tests/data/compat/a.rec"), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_reader_open(&r, NULL), RECIO_ERR_ARG);
    CHECK(r == NULL);
    CHECK_EQ_INT(recio_reader_open_mem(&r, NULL, 5), RECIO_ERR_ARG);
    CHECK(r == NULL);
    CHECK_EQ_INT(recio_reader_open_desc(&r, NULL, &d), RECIO_ERR_ARG); /* no path, no io */
    CHECK(r == NULL && says(msg, "no path and no desc.io.read"));
    CHECK_EQ_INT(recio_reader_open_desc(&r, MISSING, &d), RECIO_ERR_IO);
    CHECK(r == NULL && says(msg, MISSING ": offset 0: cannot open: ") && says(msg, strerror(ENOENT)));
    d.use_mmap = 1;
    CHECK_EQ_INT(recio_reader_open_desc(&r, MISSING, &d), RECIO_ERR_IO);
    CHECK(r == NULL && says(msg, MISSING ": offset 0: cannot open: "));
    CHECK_EQ_INT(recio_reader_next(NULL, &rec), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_reader_seek(NULL, 0), RECIO_ERR_ARG);
    CHECK(recio_reader_open_mem(&r, rec8, sizeof rec8) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, NULL), RECIO_ERR_ARG);
    CHECK(says(recio_reader_errmsg(r), "<memory>: offset 0: next: the record pointer is NULL"));
    CHECK_EQ_INT(recio_reader_seek(r, 100), RECIO_ERR_ARG);
    CHECK(says(recio_reader_errmsg(r), "<memory>: offset 100: seek past end of file (size 12)"));
    recio_reader_close(r);
    /* a name with a URL's secret: no message of the reader carries it (the corruption path formats
       without the variadic formatter, which redacts: the name is redacted when the reader is made) */
    d.name = "http://user:s3cret@host/x.rec?X-Amz-Signature=abc", d.use_mmap = 0;
    CHECK(recio_reader_open_desc(&r, "tests/data/compat/a.rec", &d) == RECIO_OK);
    CHECK_EQ_INT(recio_reader_seek(r, 3), RECIO_OK);
    CHECK_EQ_INT(recio_reader_next(r, &rec), RECIO_ERR_CORRUPT); /* no record head at byte 3 */
    CHECK(says(recio_reader_errmsg(r), "http://host/x.rec: offset 3: ") && !strstr(recio_reader_errmsg(r), "s3cret") &&
          !strstr(recio_reader_errmsg(r), "Signature"));
    recio_reader_close(r);
}

static void test_writer(void) {
    recio_writer *w = (recio_writer *)&w;
    recio_writer_desc d;
    recio_buffer b;
    recio_writer_item items[1];
    memset(&d, 0, sizeof d);
    memset(&b, 0, sizeof b);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_writer_open(&w, NULL), RECIO_ERR_ARG);
    CHECK(w == NULL);
    CHECK_EQ_INT(recio_writer_open_desc(NULL, "build/x.rec", &d), RECIO_ERR_ARG);
    CHECK(says(msg, "build/x.rec: offset 0: the handle pointer is NULL"));
    CHECK_EQ_INT(recio_writer_open_desc(&w, NULL, &d), RECIO_ERR_ARG);
    CHECK(w == NULL && says(msg, "no path, no desc.io.write and no desc.mem"));
    d.mem = &b;
    CHECK_EQ_INT(recio_writer_open_desc(&w, "build/x.rec", &d), RECIO_ERR_ARG);
    CHECK(w == NULL && says(msg, "build/x.rec: offset 0: desc.mem and a path"));
    d.mem = NULL;
    CHECK_EQ_INT(recio_writer_open_desc(&w, MISSING, &d), RECIO_ERR_IO);
    CHECK(w == NULL && says(msg, MISSING ": offset 0: cannot create: ") && says(msg, strerror(ENOENT)));
    CHECK_EQ_INT(recio_writer_write(NULL, "x", 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_writer_write_batch(NULL, items, 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_writer_finish(NULL), RECIO_ERR_ARG);
    d.mem = &b;
    CHECK(recio_writer_open_desc(&w, NULL, &d) == RECIO_OK && msg[0] == 0);
    CHECK_EQ_INT(recio_writer_write(w, NULL, 5), RECIO_ERR_ARG);
    CHECK(says(recio_writer_errmsg(w), "<memory>: offset 0: write: data is NULL with size 5"));
    CHECK_EQ_INT(recio_writer_write_batch(w, NULL, 2), RECIO_ERR_ARG);
    CHECK(says(recio_writer_errmsg(w), "<memory>: offset 0: write_batch: items is NULL with n 2"));
    CHECK_EQ_INT(recio_writer_write(w, "x", (size_t)1 << 29), RECIO_ERR_TOO_BIG);
    CHECK(says(recio_writer_errmsg(w), "<memory>: offset 0: record of 536870912 bytes: RecordIO allows at most 2^29-1"));
    CHECK(recio_writer_finish(w) == RECIO_OK);
    CHECK_EQ_INT(recio_writer_write(w, "x", 1), RECIO_ERR_ARG);
    CHECK(says(recio_writer_errmsg(w), "<memory>: offset 0: write: the writer is finished"));
    items[0].data = "x", items[0].size = 1, items[0].key = 3;
    CHECK_EQ_INT(recio_writer_write_batch(w, items, 1), RECIO_ERR_ARG);
    CHECK(says(recio_writer_errmsg(w), "write_batch: the writer is finished"));
    CHECK(recio_writer_close(w) == RECIO_OK);
    recio_buffer_free(&b);
}

static void test_index_and_lst(void) {
    recio_index idx;
    recio_index_desc id;
    recio_lst lst;
    recio_lst_desc ld;
    char small[8];
    static recio_index_entry e[1] = {{7, 0}};
    memset(&id, 0, sizeof id);
    memset(&ld, 0, sizeof ld);
    id.errmsg = ld.errmsg = msg;
    CHECK_EQ_INT(recio_index_load(NULL, "a.idx", &id), RECIO_ERR_ARG);
    CHECK(says(msg, "a.idx: offset 0: the index pointer is NULL"));
    CHECK_EQ_INT(recio_index_load(&idx, NULL, &id), RECIO_ERR_ARG);
    CHECK(says(msg, "no path and no desc.text: nothing to load"));
    CHECK_EQ_INT(recio_index_load(&idx, MISSING, &id), RECIO_ERR_IO);
    CHECK(says(msg, MISSING ": offset 0: cannot open: ") && says(msg, strerror(ENOENT)));
    id.text = "0\t0\n1\tx\n", id.size = 8;
    CHECK_EQ_INT(recio_index_load(&idx, "t.idx", &id), RECIO_ERR_FORMAT);
    CHECK(says(msg, "t.idx: line 2: expected an offset after the key"));
    id.text = NULL, id.size = 0;
    CHECK_EQ_INT(recio_index_save(NULL, "a.idx", &id), RECIO_ERR_ARG);
    CHECK(says(msg, "a.idx: offset 0: the index pointer is NULL"));
    memset(&idx, 0, sizeof idx);
    idx.count = 3; /* entries NULL */
    CHECK_EQ_INT(recio_index_save(&idx, "a.idx", &id), RECIO_ERR_ARG);
    CHECK(says(msg, "a.idx: offset 0: the index has a count but no entries"));
    idx.entries = e, idx.count = 1;
    CHECK_EQ_INT(recio_index_save(&idx, NULL, &id), RECIO_ERR_ARG);
    CHECK(says(msg, "the path is NULL"));
    CHECK_EQ_INT(recio_index_save(&idx, MISSING, &id), RECIO_ERR_IO); /* written beside, then renamed */
    CHECK(says(msg, MISSING ": offset 0: cannot create: ") && says(msg, strerror(ENOENT)) &&
          says(msg, "(a temporary file beside it)"));
    CHECK_EQ_INT(recio_index_path(NULL, 8, "a.rec", NULL, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_index_path(small, sizeof small, "abcd.rec", NULL, NULL), RECIO_ERR_SMALL); /* needs 8 + 5 */
    CHECK_EQ_INT(recio_lst_load(NULL, "a.lst", &ld), RECIO_ERR_ARG);
    CHECK(says(msg, "a.lst: offset 0: the list pointer is NULL"));
    CHECK_EQ_INT(recio_lst_load(&lst, NULL, &ld), RECIO_ERR_ARG);
    CHECK(says(msg, "no path and no desc.text: nothing to load"));
    CHECK_EQ_INT(recio_lst_load(&lst, MISSING, &ld), RECIO_ERR_IO);
    CHECK(says(msg, MISSING ": offset 0: cannot open: ") && says(msg, strerror(ENOENT)));
    ld.text = "1\tabc\tx.jpg\n", ld.size = 12;
    CHECK_EQ_INT(recio_lst_load(&lst, "t.lst", &ld), RECIO_ERR_FORMAT);
    CHECK(says(msg, "t.lst: line 1: a label is not a number"));
    ld.mask_column = 1, ld.text = "1\ta.jpg\tb.png\n", ld.size = 14;
    CHECK_EQ_INT(recio_lst_load(&lst, "t.lst", &ld), RECIO_ERR_FORMAT);
    CHECK(says(msg, "t.lst: line 1: no label before the path"));
}

static void test_image_records(void) {
    recio_irecord ir;
    recio_det_layout lay;
    unsigned char buf[64] = {0};
    const float one = 1.0f, notdet[3] = {1.0f, 2.0f, 3.0f};
    CHECK_EQ_INT(recio_irecord_unpack(NULL, buf, 24), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_irecord_unpack(&ir, NULL, 24), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_irecord_unpack(&ir, buf, 23), RECIO_ERR_FORMAT); /* shorter than IRHeader */
    CHECK_EQ_INT(recio_irecord_pack_header(buf, &one, 1 | RECIO_LABEL_ARRAY, 0, 0), 28); /* MXNet's flag 1 */
    CHECK(buf[0] == 1 && recio_irecord_unpack(&ir, buf, 28) == RECIO_OK && ir.nlabels == 1 && ir.label == 0.0f);
    CHECK_EQ_INT(recio_irecord_pack_header(buf, notdet, 2 | RECIO_LABEL_ARRAY, 0, 0), 32);
    buf[0] = 9; /* flag 9: 36 bytes of labels that are not there */
    CHECK_EQ_INT(recio_irecord_unpack(&ir, buf, 32), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(recio_irecord_mask_tail(NULL, 10), 0);
#if SIZE_MAX > 0xffffffffu
    CHECK_EQ_INT(recio_irecord_mask_tail(buf, (size_t)1 << 32), 0); /* does not fit the u32 length */
#endif
    CHECK_EQ_INT(recio_det_layout_of(notdet, 3, &lay), RECIO_ERR_FORMAT);
    CHECK_EQ_INT(recio_det_layout_of(NULL, 3, &lay), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_det_labels(NULL, 0, NULL, 0, NULL, 4, 0), 0); /* object_width < 5 */
    CHECK_EQ_INT(recio_strerror(RECIO_ERR_LIMIT)[0] != 0 && recio_strerror(RECIO_ERR_SMALL)[0] != 0, 1);
}

static void test_split(void) {
    recio_split *s = (recio_split *)&s;
    recio_split_desc d;
    recio_split_info info;
    recio_record rec;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_split_open(NULL, "tests/data/compat/a.rec", 0, 1), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_split_open(&s, NULL, 0, 1), RECIO_ERR_ARG);
    CHECK(s == NULL);
    s = (recio_split *)&s;
    CHECK_EQ_INT(recio_split_open_desc(&s, NULL, 0, 1, &d), RECIO_ERR_ARG);
    CHECK(s == NULL && says(msg, "no uris"));
    CHECK_EQ_INT(recio_split_open_desc(&s, "tests/data/compat/a.rec", 0, 0, &d), RECIO_ERR_ARG);
    CHECK(s == NULL && says(msg, "nsplit is 0: there must be at least one part"));
    CHECK_EQ_INT(recio_split_open_desc(&s, "tests/data/compat/a.rec", 2, 2, &d), RECIO_ERR_ARG);
    CHECK(s == NULL && says(msg, "rank 2 is out of range: nsplit is 2, so ranks are 0..1"));
    d.shuffle = (recio_split_shuffle)7;
    CHECK_EQ_INT(recio_split_open_desc(&s, "tests/data/compat/a.rec", 0, 1, &d), RECIO_ERR_ARG);
    CHECK(s == NULL && says(msg, "unknown mode, shuffle or equalize value"));
    d.shuffle = RECIO_SHUFFLE_NONE;
    s = (recio_split *)&s; /* a failed open sets *s = NULL, like every open */
    CHECK(recio_split_open_desc(&s, MISSING, 0, 1, &d) < 0);
    CHECK(s == NULL && says(msg, MISSING));
    CHECK_EQ_INT(recio_split_next(NULL, &rec), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_split_reset(NULL, 0), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_split_query(NULL, &info), RECIO_ERR_ARG);
    CHECK(recio_split_open_desc(&s, "tests/data/compat/a.rec", 0, 1, &d) == RECIO_OK && msg[0] == 0);
    CHECK_EQ_INT(recio_split_query(s, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_split_next(s, NULL), RECIO_ERR_ARG);
    CHECK(says(recio_split_errmsg(s), "split next: the record pointer is NULL"));
    recio_split_close(s);
}

#ifdef RECIO_THREADS
static recio_err pf_fetch(void *user, recio_prefetch_slot *slot, unsigned worker) {
    (void)user, (void)worker;
    return slot->seq < 2 ? RECIO_OK : RECIO_END;
}

static void test_prefetch(void) {
    recio_prefetch *p = (recio_prefetch *)&p;
    recio_prefetch_desc d;
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK_EQ_INT(recio_prefetch_create(&p, NULL), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_prefetch_create(NULL, &d), RECIO_ERR_ARG);
    CHECK(says(msg, "prefetch: the handle pointer is NULL"));
    CHECK_EQ_INT(recio_prefetch_create(&p, &d), RECIO_ERR_ARG);
    CHECK(p == NULL && says(msg, "prefetch: desc.fetch is NULL"));
    d.fetch = pf_fetch;
    d.depth = 5000;
    CHECK_EQ_INT(recio_prefetch_create(&p, &d), RECIO_ERR_LIMIT);
    CHECK(p == NULL && says(msg, "prefetch: desc.depth is over 4096 slots"));
    d.depth = 2, d.threads = 2000;
    CHECK_EQ_INT(recio_prefetch_create(&p, &d), RECIO_ERR_LIMIT);
    CHECK(p == NULL && says(msg, "prefetch: desc.threads is over 1024"));
    d.threads = 1;
    CHECK_EQ_INT(recio_prefetch_slot_reserve(NULL, 8), RECIO_ERR_ARG);
    CHECK_EQ_INT(recio_prefetch_next(NULL, NULL), RECIO_ERR_ARG);
    CHECK(recio_prefetch_create(&p, &d) == RECIO_OK && msg[0] == 0);
    CHECK_EQ_INT(recio_prefetch_next(p, NULL), RECIO_ERR_ARG);
    CHECK(says(recio_prefetch_errmsg(p), "prefetch next: the slot pointer is NULL"));
    recio_prefetch_destroy(p);
}
#endif

int main(void) {
    RUN(test_reader);
    RUN(test_writer);
    RUN(test_index_and_lst);
    RUN(test_image_records);
    RUN(test_split);
#ifdef RECIO_THREADS
    RUN(test_prefetch);
#endif
    return t_done("api_errors");
}
