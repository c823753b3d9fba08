/* The S3 writer's parts grow: 8 MiB, doubled every RECIO__RM_TIER parts (recio__rm_part_size), so
   that an object is not stopped by S3's 10,000 parts at 78 GiB. This program builds recio with
   RECIO__RM_TIER 2 (the library's is 1000) so that a write of about 90 MiB shows it: through the
   tests' proxy, which lists every upload part it passes on, parts 1-2 must be 8 MiB, 3-4 16 MiB,
   5 32 MiB and 6 the rest, and the object must read back whole. Run by tests/test_remote.sh under
   tests/remote/servers.py. */
#define _POSIX_C_SOURCE 200809L /* setenv, popen */
#define RECIO__RM_TIER 2u
#define RECIO_IMPLEMENTATION
#include "../../recio.h"
#include "../test.h"

#define MIB (1u << 20)
#define NREC 90u

static int by_number(const void *a, const void *b) {
    unsigned long long x = ((const unsigned long long *)a)[0], y = ((const unsigned long long *)b)[0];
    return x < y ? -1 : x > y;
}

/* The proxy's stats, by curl (the tests need it anyway): "parts": [[n, bytes], ...]. */
static int proxy_parts(const char *proxy, unsigned long long (*parts)[2], int cap) {
    char cmd[1024], body[65536], *p, *end;
    size_t len;
    FILE *f;
    int n = 0;
    snprintf(cmd, sizeof cmd, "curl -sSf '%s/__proxy/stats'", proxy);
    if (!(f = popen(cmd, "r"))) return -1;
    len = fread(body, 1, sizeof body - 1, f);
    body[len] = 0;
    if (pclose(f) != 0 || !(p = strstr(body, "\"parts\": ["))) return -1;
    if (!(end = strstr(p, "]]"))) return 0; /* "parts": [] */
    for (p += 10; n < cap && (p = strchr(p, '[')) != NULL && p < end; p++, n++)
        if (sscanf(p, "[%llu, %llu]", &parts[n][0], &parts[n][1]) != 2) return -1;
    return n;
}

static void proxy_reset(const char *proxy) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "curl -sSf -o /dev/null '%s/__proxy/set'", proxy);
    CHECK(system(cmd) == 0);
}

static void test_parts_grow(void) {
    const char *proxy = getenv("RECIO_TEST_PROXY_S3");
    unsigned char *rec = (unsigned char *)malloc(MIB);
    unsigned long long parts[64][2], total = 0, want;
    uint64_t hw = RECIO_FNV1A_INIT, hr = RECIO_FNV1A_INIT;
    recio_writer *w = NULL;
    recio_reader *r = NULL;
    recio_record one;
    unsigned i, j, n = 0;
    int k;
    if (!rec) exit(1);
    setenv("AWS_ENDPOINT_URL", proxy, 1);
    proxy_reset(proxy);
    CHECK(recio_writer_open(&w, "s3://scratch/parts.rec") == RECIO_OK);
    for (i = 0; w && i < NREC; i++) {
        for (j = 0; j < MIB; j++) rec[j] = (unsigned char)(i * 131 + j * 7 + (j >> 11));
        hw = recio_fnv1a64(hw, rec, MIB);
        CHECK(recio_writer_write(w, rec, MIB) == RECIO_OK);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
    k = proxy_parts(proxy, parts, 64); /* as their bodies came in: two go up at once */
    if (k > 0) qsort(parts, (size_t)k, sizeof parts[0], by_number);
    want = (unsigned long long)NREC * (MIB + 8); /* a record: 8 bytes of header, 1 MiB of payload */
    CHECK_EQ_INT(k, 6);
    for (i = 0; k > 0 && i < (unsigned)k; i++) {
        unsigned long long size = i < 5 ? (8ull * MIB) << (i / 2) : want - total;
        if (parts[i][0] != i + 1 || parts[i][1] != size)
            fprintf(stderr, "  part %llu: %llu bytes, want part %u of %llu\n", parts[i][0], parts[i][1], i + 1, size);
        CHECK(parts[i][0] == i + 1 && parts[i][1] == size);
        total += parts[i][1];
    }
    CHECK(total == want);
    CHECK(recio_reader_open(&r, "s3://scratch/parts.rec") == RECIO_OK);
    while (r && recio_reader_next(r, &one) == RECIO_OK) hr = recio_fnv1a64(hr, one.data, one.size), n++;
    recio_reader_close(r);
    CHECK(n == NREC && hr == hw);
    free(rec);
}

int main(void) {
    if (!getenv("RECIO_TEST_PROXY_S3") || !getenv("RECIO_TEST_S3")) {
        fprintf(stderr, "test_remote_parts: run it through tests/test_remote.sh (it starts the servers)\n");
        t_failed++;
        return t_done("test_remote_parts");
    }
    setenv("AWS_REGION", "us-east-1", 1);
    setenv("AWS_ACCESS_KEY_ID", "RECIOTESTKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "recio-test-secret/+=", 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/recio-test", 1);
    RUN(test_parts_grow);
    return t_done("test_remote_parts");
}
