// The header, implementation included, compiled as C++: round-trip one record through memory.
#define RECIO_IMPLEMENTATION
#define RECIO_STATIC
#include "recio.h"
#include "test.h"

static void test_cpp_roundtrip() {
    recio_buffer buf = recio_buffer();
    recio_writer *w = 0;
    recio_reader *r = 0;
    recio_record rec;
    const char msg[] = "hello from C++";
    recio_writer_desc d = recio_writer_desc();
    d.mem = &buf;
    CHECK(recio_writer_open_desc(&w, 0, &d) == RECIO_OK);
    CHECK(recio_writer_write(w, msg, sizeof msg) == RECIO_OK);
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(recio_reader_open_mem(&r, buf.data, buf.size) == RECIO_OK);
    CHECK(recio_reader_next(r, &rec) == RECIO_OK);
    CHECK(rec.size == sizeof msg && memcmp(rec.data, msg, sizeof msg) == 0);
    CHECK(recio_reader_next(r, &rec) == RECIO_END);
    recio_reader_close(r);
    recio_buffer_free(&buf);
}

// README's C++ form of "zero = defaults": value-initialisation, warning-free under g++ -Wextra
// -Werror (this file's flags), where C's `= {0}` warns for every field left out.
static void test_cpp_zero_init() {
    recio_iter_desc d{};
    recio_split_desc s = {};
    CHECK(d.run.workers == 0 && d.run.batch == 0 && d.item.spec == 0 && d.uris == 0 && s.seed == 0);
}

int main() {
    RUN(test_cpp_roundtrip);
    RUN(test_cpp_zero_init);
    return t_done("cpp");
}
