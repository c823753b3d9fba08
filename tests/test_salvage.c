/* `recio salvage` and `recio verify --all` ($RECIO) on files damaged at random: a bit flip, bytes
   overwritten, cut out, inserted, or the file cut short, at any byte offset. The truth comes from
   the writer's own offsets: a record is untouched when its bytes lie wholly outside the damage, and
   every untouched record must come out of salvage, in order. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "rec_util.h"
#include <sys/wait.h>

#define NREC 60
#define DIR "build/test_salvage"

static unsigned char *payload[NREC];
static size_t psize[NREC];
static uint64_t start[NREC + 1]; /* record i is [start[i], start[i + 1]) of the sound file */

static const char *recio_cmd(void) {
    const char *r = getenv("RECIO");
    return r && *r ? r : "build/recio";
}

static int run(const char *args) {
    char cmd[1024];
    int st;
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", recio_cmd(), args);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Payloads of 0 to 3000 random bytes; some hold the magic at aligned offsets (the writer splits them
   into parts) and at unaligned ones (a false head for a scan that does not check). */
static void make_dataset(unsigned char **file, size_t *n) {
    static const unsigned char magic[4] = {0x0a, 0x23, 0xd7, 0xce};
    recio_buffer out;
    recio_writer *w;
    int i;
    size_t k;
    memset(&out, 0, sizeof out);
    CHECK(rec_writer_mem(&w, &out) == RECIO_OK);
    for (i = 0; i < NREC; i++) {
        psize[i] = (size_t)t_between(0, 3000);
        payload[i] = (unsigned char *)malloc(psize[i] + 1);
        for (k = 0; k < psize[i]; k++) payload[i][k] = (unsigned char)t_rand();
        if (psize[i] > 64 && i % 3 == 0) memcpy(payload[i] + 4 * t_between(1, 8), magic, 4);
        if (psize[i] > 64 && i % 4 == 1) memcpy(payload[i] + 4 * t_between(1, 8) + 1, magic, 4);
        start[i] = recio_writer_tell(w);
        CHECK(recio_writer_write(w, payload[i], psize[i]) == RECIO_OK);
    }
    start[NREC] = recio_writer_tell(w);
    CHECK(recio_writer_close(w) == RECIO_OK);
    *file = (unsigned char *)out.data;
    *n = out.size;
    CHECK(*n == start[NREC]);
}

static void put(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

/* Damage kind k of the sound file into out; [*d0, *d1) is the damaged range of the sound file
   (an insertion at p touches only a record that has p strictly inside). */
static size_t damage(int k, const unsigned char *in, size_t n, unsigned char *out, size_t *d0, size_t *d1) {
    size_t p = (size_t)t_between(0, (int)n - 1), len = (size_t)t_between(1, 600), i;
    if (p + len > n) len = n - p;
    memcpy(out, in, n);
    switch (k) {
    case 0: /* one bit */
        out[p] ^= (unsigned char)(1u << (t_rand() % 8));
        *d0 = p, *d1 = p + 1;
        return n;
    case 1: /* bytes overwritten */
        for (i = 0; i < len; i++) out[p + i] = (unsigned char)t_rand();
        *d0 = p, *d1 = p + len;
        return n;
    case 2: /* bytes cut out */
        memmove(out + p, in + p + len, n - p - len);
        *d0 = p, *d1 = p + len;
        return n - len;
    case 3: /* bytes inserted */
        memcpy(out + p + len, in + p, n - p);
        for (i = 0; i < len; i++) out[p + i] = (unsigned char)t_rand();
        *d0 = *d1 = p;
        return n + len;
    default: /* cut short */
        *d0 = p, *d1 = n;
        return p;
    }
}

static int untouched(int i, size_t d0, size_t d1) {
    if (d0 == d1) return start[i + 1] <= d0 || start[i] >= d0; /* an insertion between records */
    return start[i + 1] <= d0 || start[i] >= d1;
}

/* The records salvage wrote (how many), and how many of the untouched ones are among them, in order. */
static int check_output(size_t d0, size_t d1, int *untouched_n, int *kept_untouched) {
    recio_reader *r;
    recio_record rec;
    int i = 0, n = 0;
    *untouched_n = *kept_untouched = 0;
    for (i = 0; i < NREC; i++) *untouched_n += untouched(i, d0, d1);
    if (recio_reader_open(&r, DIR "/out.rec") != RECIO_OK) return -1;
    i = 0;
    while (recio_reader_next(r, &rec) == RECIO_OK) {
        int j;
        n++;
        for (j = i; j < NREC; j++) /* the next record with these bytes, in order (a damaged one matches none) */
            if (psize[j] == rec.size && memcmp(payload[j], rec.data, rec.size) == 0) break;
        if (j == NREC) continue;
        *kept_untouched += untouched(j, d0, d1);
        i = j + 1;
    }
    recio_reader_close(r);
    return n;
}

static void test_random_damage(void) {
    unsigned char *sound, *bad;
    size_t n, m, d0, d1;
    int round, total_untouched = 0, total_kept = 0, total_out = 0, missed = 0;
    make_dataset(&sound, &n);
    bad = (unsigned char *)malloc(n + 700);
    for (round = 0; round < 150; round++) {
        int u, k, got;
        m = damage(round % 5, sound, n, bad, &d0, &d1);
        put(DIR "/bad.rec", bad, m);
        CHECK(run("salvage " DIR "/bad.rec " DIR "/out.rec") == 0);
        got = check_output(d0, d1, &u, &k);
        CHECK(got >= 0);
        total_untouched += u, total_kept += k, total_out += got;
        if (k != u) {
            fprintf(stderr, "  round %d (kind %d, damage %zu-%zu): %d of %d untouched records kept\n", round, round % 5, d0, d1, k, u);
            missed++;
        }
        if (run("verify " DIR "/out.rec") != 0) fprintf(stderr, "  round %d: salvage output does not verify\n", round), CHECK(0);
    }
    printf("salvage over 150 random damages: %d of %d untouched records kept (%d records written in all)\n", total_kept,
           total_untouched, total_out);
    CHECK(missed == 0);
    free(bad);
    free(sound);
}

/* A sound file comes out byte for byte, and verify --all says ok; a damaged one is exit 1. */
static void test_sound_file_and_verify_all(void) {
    unsigned char *sound, *out;
    size_t n, m = 0;
    FILE *f;
    make_dataset(&sound, &n);
    put(DIR "/sound.rec", sound, n);
    CHECK(run("salvage " DIR "/sound.rec " DIR "/out.rec") == 0);
    out = (unsigned char *)malloc(n + 1);
    f = fopen(DIR "/out.rec", "rb");
    if (f) m = fread(out, 1, n + 1, f), fclose(f);
    CHECK(m == n && memcmp(out, sound, n) == 0);
    CHECK(run("verify --all " DIR "/sound.rec") == 0);
    sound[start[NREC / 2] + 2] ^= 0x40; /* a header's magic */
    put(DIR "/bad.rec", sound, n);
    CHECK(run("verify --all " DIR "/bad.rec") == 1);
    CHECK(run("salvage " DIR "/bad.rec " DIR "/bad.rec") == 2); /* never over its input */
    { /* the .idx readers take for OUT.rec (recio_index_path): OUT.rec.idx when one is there, never a
         fresh OUT.idx beside a stale OUT.rec.idx */
        recio_index idx;
        recio_index_desc d;
        put(DIR "/two.rec.idx", (const unsigned char *)"0\t0\n", 4);
        remove(DIR "/two.idx");
        CHECK(run("salvage " DIR "/sound.rec " DIR "/two.rec") == 0);
        memset(&d, 0, sizeof d);
        CHECK(recio_index_load(&idx, DIR "/two.rec.idx", &d) == RECIO_OK && idx.count == NREC);
        if (idx.count == NREC) CHECK(idx.entries[NREC - 1].offset == start[NREC - 1]);
        recio_index_free(&idx);
        CHECK(fopen(DIR "/two.idx", "rb") == NULL);
    }
    free(out);
    free(sound);
}

/* The damaged files of tests/data/compat: a flipped magic byte costs exactly that record (the file
   with the byte put back is the truth), a file cut inside a payload keeps every record before it. */
static int read_payloads(const char *path, recio_buffer *all, size_t *sizes, int max) {
    recio_reader *r;
    recio_record rec;
    int n = 0;
    if (recio_reader_open(&r, path) != RECIO_OK) return -1;
    while (n < max && recio_reader_next(r, &rec) == RECIO_OK) {
        sizes[n++] = rec.size;
        all->data = (unsigned char *)realloc(all->data, all->size + rec.size + 1);
        memcpy(all->data + all->size, rec.data, rec.size);
        all->size += rec.size;
    }
    recio_reader_close(r);
    return n;
}

static void test_compat_damaged_files(void) {
    static const unsigned char magic[4] = {0x0a, 0x23, 0xd7, 0xce};
    unsigned char file[600];
    size_t n = 0, sz_truth[64], sz_out[64], head;
    recio_buffer truth, out;
    int nt, no, i;
    FILE *f = fopen("tests/data/compat/corrupt-bad-magic.rec", "rb");
    if (f) n = fread(file, 1, sizeof file, f), fclose(f);
    CHECK(n == 588);
    memcpy(file + 156, magic, 4); /* the truth: the byte put back */
    put(DIR "/fixed.rec", file, n);
    memset(&truth, 0, sizeof truth), memset(&out, 0, sizeof out);
    nt = read_payloads(DIR "/fixed.rec", &truth, sz_truth, 64);
    CHECK(run("salvage tests/data/compat/corrupt-bad-magic.rec " DIR "/out.rec") == 0);
    no = read_payloads(DIR "/out.rec", &out, sz_out, 64);
    CHECK(nt > 3 && no == nt - 1); /* record 2 (offset 156) and nothing else */
    for (i = 0, head = 0; i < no && no == nt - 1; i++) CHECK(sz_out[i] == sz_truth[i < 2 ? i : i + 1]);
    for (i = 0; i < 2; i++) head += sz_truth[i];
    if (no == nt - 1) CHECK(memcmp(out.data, truth.data, head) == 0 && memcmp(out.data + head, truth.data + head + sz_truth[2], out.size - head) == 0);
    free(truth.data), free(out.data);
    memset(&truth, 0, sizeof truth), memset(&out, 0, sizeof out);
    nt = read_payloads("tests/data/compat/corrupt-trunc-payload.rec", &truth, sz_truth, 64); /* the strict reader: 0..3 */
    CHECK(run("salvage tests/data/compat/corrupt-trunc-payload.rec " DIR "/out.rec") == 0);
    no = read_payloads(DIR "/out.rec", &out, sz_out, 64);
    CHECK(nt == 4 && no == 4 && out.size == truth.size && memcmp(out.data, truth.data, out.size) == 0);
    free(truth.data), free(out.data);
}

int main(void) {
    int i;
    if (system("mkdir -p " DIR) != 0) return 1;
    RUN(test_sound_file_and_verify_all);
    for (i = 0; i < NREC; i++) free(payload[i]);
    RUN(test_random_damage);
    RUN(test_compat_damaged_files);
    for (i = 0; i < NREC; i++) free(payload[i]);
    return t_done("salvage");
}
