/* Copy every record of one RecordIO file into another: the README's example, compiled by `make`.
   usage: copy_records FROM.rec TO.rec */
#include "recio.h"
#include <stdio.h>

static int copy_records(const char *from, const char *to) {
    recio_reader *r; recio_writer *w; recio_record rec; recio_err e, we = RECIO_OK;
    if ((e = recio_reader_open(&r, from)) != RECIO_OK) return fprintf(stderr, "%s: %s\n", from, recio_strerror(e)), 1;
    if ((e = recio_writer_open(&w, to)) != RECIO_OK) return fprintf(stderr, "%s: %s\n", to, recio_strerror(e)), recio_reader_close(r), 1;
    while (we == RECIO_OK && (e = recio_reader_next(r, &rec)) == RECIO_OK) /* rec.data valid until the next call */
        we = recio_writer_write(w, rec.data, rec.size);
    if (e != RECIO_OK && e != RECIO_END) fprintf(stderr, "%s\n", recio_reader_errmsg(r)); /* "FILE: offset N: what" */
    recio_reader_close(r);
    if ((we = recio_writer_finish(w)) != RECIO_OK) fprintf(stderr, "%s\n", recio_writer_errmsg(w)); /* ENOSPC, ... */
    recio_writer_close(w);
    return we != RECIO_OK || (e != RECIO_OK && e != RECIO_END);
}

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: %s FROM.rec TO.rec\n", argv[0]), 2;
    return copy_records(argv[1], argv[2]);
}
