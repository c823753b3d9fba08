/* Writes two records to memory, reads them back, decodes nothing: prints "consumer: ok". */
#include "recio.h"
#include <stdio.h>
#include <string.h>

int main(void) {
    recio_writer *w = NULL;
    recio_reader *r = NULL;
    recio_record rec;
    recio_buffer buf;
    recio_err e;
    int n = 0;
    recio_writer_desc d;
    memset(&buf, 0, sizeof buf);
    memset(&d, 0, sizeof d);
    d.mem = &buf;
    if ((e = recio_writer_open_desc(&w, NULL, &d)) != RECIO_OK) return printf("open: %s\n", recio_strerror(e)), 1;
    if (recio_writer_write(w, "hello", 5) != RECIO_OK || recio_writer_write(w, "recio", 5) != RECIO_OK) return 1;
    if ((e = recio_writer_close(w)) != RECIO_OK) return printf("close: %s\n", recio_strerror(e)), 1;
    if ((e = recio_reader_open_mem(&r, buf.data, buf.size)) != RECIO_OK) return printf("read: %s\n", recio_strerror(e)), 1;
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) n++;
    recio_reader_close(r);
    recio_buffer_free(&buf);
    if (e != RECIO_END || n != 2) return printf("consumer: %d records, %s\n", n, recio_strerror(e)), 1;
    printf("consumer: ok (recio %d.%d)\n", RECIO_VERSION_MAJOR, RECIO_VERSION_MINOR);
    return 0;
}
