/* The s3:// and http(s):// filesystems against real servers on 127.0.0.1 (tests/remote/servers.py
   starts s3rver with SigV4 checked, nginx and the fault proxies, and sets RECIO_TEST_*): reads and
   splits give exactly the records of the same bytes read locally; S3 listings page past 1,000 keys;
   multipart writes appear whole or not at all and leave no parts; the proxies' faults are retried or
   reported, and nothing wrong is ever returned; credentials, anonymous access, and no secret in any
   message. Run by tests/test_remote.sh (make test). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "../test.h"
#include "../rec_util.h"
#include <curl/curl.h>
#include <sys/time.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>

#define SECRET "recio-test-secret/+="
static const char *S3, *HTTP, *PROXY_S3, *PROXY_HTTP, *WWW, *S3DIR;
static const char *COMPAT = "tests/data/compat";
static char PHOTOS[600]; /* the photo set packed by test_iter_photos, which copies it into nginx's root */
static char msgs[1 << 16]; /* every error message seen, to look for secrets in */

static void note(const char *m) {
    size_t n = strlen(msgs);
    if (n + strlen(m) + 2 < sizeof msgs) sprintf(msgs + n, "%s\n", m);
}

static double now_s(void) {
    struct timeval t;
    gettimeofday(&t, NULL);
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* The S3 settings of the tests' server (or of the proxy before it). */
static void use_s3(const char *endpoint, const char *id, const char *secret, const char *token) {
    setenv("AWS_ENDPOINT_URL", endpoint, 1);
    setenv("AWS_REGION", "us-east-1", 1);
    unsetenv("AWS_DEFAULT_REGION");
    unsetenv("AWS_PROFILE");
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/recio-test", 1);
    if (id) setenv("AWS_ACCESS_KEY_ID", id, 1);
    else unsetenv("AWS_ACCESS_KEY_ID");
    if (secret) setenv("AWS_SECRET_ACCESS_KEY", secret, 1);
    else unsetenv("AWS_SECRET_ACCESS_KEY");
    if (token) setenv("AWS_SESSION_TOKEN", token, 1);
    else unsetenv("AWS_SESSION_TOKEN");
}
static void use_default(void) { use_s3(S3, "RECIOTESTKEY", SECRET, NULL); }

/* GET base + path with libcurl (the proxies' control); the body into out. */
static size_t t_sink(char *p, size_t s, size_t n, void *u) {
    char *o = (char *)u;
    size_t have = strlen(o), k = s * n < 4000 - have ? s * n : 4000 - have;
    memcpy(o + have, p, k);
    o[have + k] = 0;
    return s * n;
}
static int http_get(const char *base, const char *path, char *out) {
    char url[1024];
    CURL *h = curl_easy_init();
    long code = 0;
    out[0] = 0;
    snprintf(url, sizeof url, "%s%s", base, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, t_sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return (int)code;
}
static void faults(const char *proxy, const char *q) {
    char out[4096], path[600];
    snprintf(path, sizeof path, "/__proxy/set?%s", q);
    CHECK(http_get(proxy, path, out) == 200);
}
static long stat_of(const char *proxy, const char *field) {
    char out[4096], key[64], *p;
    http_get(proxy, "/__proxy/stats", out);
    snprintf(key, sizeof key, "\"%s\": ", field);
    p = strstr(out, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* get(a, b) once it holds still (the same for 150 ms, 3 s at most): a server logs or counts a request
   when its own thread reads or ends it, which may come after the client sent it. */
static long settled(long (*get)(const char *, const char *), const char *a, const char *b) {
    long last = get(a, b), now;
    int same = 0, tries;
    for (tries = 0; tries < 60 && same < 3; tries++, last = now) {
        struct timespec ms50 = {0, 50 * 1000 * 1000};
        nanosleep(&ms50, NULL);
        now = get(a, b);
        same = now == last ? same + 1 : 0;
    }
    return last;
}

/* ---- the filesystem rows, as every path-taking call reaches them ---- */

static recio_err open_remote(const char *uri, recio_io *io, char *why) {
    const recio_fs *fs = recio_fs_find(NULL, uri);
    why[0] = 0;
    memset(io, 0, sizeof *io);
    if (!fs) return snprintf(why, RECIO_ERRMSG_SIZE, "no filesystem"), RECIO_ERR_UNSUPPORTED;
    return fs->open_read(fs->user, uri, io, why);
}
/* FNV-1a of every record of a reader, with their offsets: the same for a local and a remote read. */
typedef struct {
    size_t n;
    uint64_t h;
    recio_err end;
    char msg[RECIO_ERRMSG_SIZE];
} digest;

static digest digest_reader(recio_reader *r) {
    digest d;
    recio_record rec;
    memset(&d, 0, sizeof d);
    d.h = RECIO_FNV1A_INIT;
    while ((d.end = recio_reader_next(r, &rec)) == RECIO_OK) {
        d.h = recio_fnv1a64(d.h, rec.data, rec.size);
        d.h = recio_fnv1a64(d.h, &rec.offset, sizeof rec.offset);
        d.n++;
    }
    snprintf(d.msg, sizeof d.msg, "%s", recio_reader_errmsg(r));
    note(d.msg);
    return d;
}
static digest digest_path(const char *path);
static digest digest_local(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", COMPAT, name);
    return digest_path(path);
}
static digest digest_path(const char *path) {
    recio_reader *r;
    digest d;
    memset(&d, 0, sizeof d);
    if (recio_reader_open(&r, path) != RECIO_OK) return d.end = RECIO_ERR_IO, d;
    d = digest_reader(r);
    recio_reader_close(r);
    return d;
}
static digest digest_remote(const char *uri) {
    recio_reader_desc rd;
    recio_reader *r;
    digest d;
    memset(&d, 0, sizeof d);
    memset(&rd, 0, sizeof rd);
    rd.errmsg = d.msg;
    if ((d.end = recio_reader_open_desc(&r, uri, &rd)) != RECIO_OK) return note(d.msg), d;
    d = digest_reader(r);
    recio_reader_close(r);
    return d;
}

static const char *FILES[] = {"a.rec", "b.rec", "c.rec", "images.rec"};

static void test_read_both_servers(void) {
    int i, k;
    for (k = 0; k < 2; k++)
        for (i = 0; i < 4; i++) {
            char uri[512];
            digest l = digest_local(FILES[i]), r;
            if (k) snprintf(uri, sizeof uri, "s3://data/compat/%s", FILES[i]);
            else snprintf(uri, sizeof uri, "%s/compat/%s", HTTP, FILES[i]);
            r = digest_remote(uri);
            CHECK(l.end == RECIO_END && l.n > 0);
            CHECK(r.end == RECIO_END);
            CHECK(r.n == l.n && r.h == l.h);
            if (r.end != RECIO_END) fprintf(stderr, "  %s: %s\n", uri, r.msg);
        }
}

/* The records of one part: (file, offset, payload) hashed in order. */
/* FNV-1a of s's records to its end, with their files and offsets; *n records, *end how it ended. */
static uint64_t split_hash(recio_split *s, size_t *n, recio_err *end) {
    recio_record rec;
    recio_split_where w;
    uint64_t h = RECIO_FNV1A_INIT;
    *n = 0;
    while ((*end = rec_split_next_where(s, &rec, &w)) == RECIO_OK) {
        h = recio_fnv1a64(h, rec.data, rec.size);
        h = recio_fnv1a64(h, &w.file, sizeof w.file);
        h = recio_fnv1a64(h, &rec.offset, sizeof rec.offset);
        (*n)++;
    }
    return h;
}

static uint64_t split_digest(const char *uris, unsigned rank, unsigned nsplit, int remote, int indexed, size_t *n, recio_err *end) {
    recio_split_desc d;
    recio_split *s = NULL;
    uint64_t h;
    char msg[RECIO_ERRMSG_SIZE];
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    (void)remote; /* remote URIs go through the built-in s3/http rows like any path */
    if (indexed) d.mode = RECIO_SPLIT_INDEX;
    *n = 0;
    if ((*end = recio_split_open_desc(&s, uris, rank, nsplit, &d)) != RECIO_OK) {
        note(msg);
        fprintf(stderr, "  split %s: %s\n", uris, msg);
        recio_split_close(s);
        return 0;
    }
    h = split_hash(s, n, end);
    if (*end != RECIO_END) fprintf(stderr, "  split %s: %s\n", uris, recio_split_errmsg(s));
    recio_split_close(s);
    return h;
}

/* dmlc-core's parts of the golden files, from nginx and from s3rver, byte mode and index mode. */
static void test_split_both_servers(void) {
    static const unsigned NS[] = {1, 2, 3, 5, 8};
    char local[512], http[1024], s3[512];
    int i, k, indexed;
    snprintf(local, sizeof local, "%s/a.rec;%s/b.rec;%s/c.rec", COMPAT, COMPAT, COMPAT);
    snprintf(http, sizeof http, "%s/compat/a.rec;%s/compat/b.rec;%s/compat/c.rec", HTTP, HTTP, HTTP);
    snprintf(s3, sizeof s3, "s3://data/compat/a.rec;s3://data/compat/b.rec;s3://data/compat/c.rec");
    for (indexed = 0; indexed < 2; indexed++)
        for (i = 0; i < 5; i++)
            for (k = 0; k < (int)NS[i]; k++) {
                size_t nl, nh, ns;
                recio_err el, eh, es;
                uint64_t hl = split_digest(local, (unsigned)k, NS[i], 0, indexed, &nl, &el);
                uint64_t hh = split_digest(http, (unsigned)k, NS[i], 1, indexed, &nh, &eh);
                uint64_t hs = split_digest(s3, (unsigned)k, NS[i], 1, indexed, &ns, &es);
                CHECK(el == RECIO_END && eh == RECIO_END && es == RECIO_END);
                CHECK(nh == nl && hh == hl);
                CHECK(ns == nl && hs == hl);
            }
}

/* uri (a copy of s3://scratch/w.rec) read through proxy, which fails every GET once the reader is
   open: the error names the URI, an offset and the tries, and the records before it are w.rec's. */
static uint64_t w_hash[4000];
static size_t w_n;
static void fail_mid_read(const char *uri, const char *proxy) {
    recio_reader_desc rd;
    recio_reader *r;
    recio_record rec;
    char why[RECIO_ERRMSG_SIZE];
    size_t n = 0, good = 1;
    recio_err e;
    memset(&rd, 0, sizeof rd);
    rd.name = uri;
    CHECK(open_remote(uri, &rd.io, why) == RECIO_OK);
    if (!rd.io.read) return;
    CHECK(recio_reader_open_desc(&r, NULL, &rd) == RECIO_OK);
    faults(proxy, "status=503&count=1000&methods=GET");
    while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {
        if (n >= w_n || recio_fnv1a64(RECIO_FNV1A_INIT, rec.data, rec.size) != w_hash[n]) good = 0;
        n++;
    }
    CHECK(e == RECIO_ERR_IO && good && n > 0 && n < w_n);
    CHECK(strstr(recio_reader_errmsg(r), uri) == recio_reader_errmsg(r));
    CHECK(strstr(recio_reader_errmsg(r), ": offset ") && strstr(recio_reader_errmsg(r), "HTTP 503 after 5 tries: SlowDown"));
    fprintf(stderr, "  (as expected, after %d records) %s\n", (int)n, recio_reader_errmsg(r));
    note(recio_reader_errmsg(r));
    recio_reader_close(r);
    faults(proxy, "");
}

/* Random seeks and reads against the local bytes (the read-ahead's ranges, dropped and started again). */
static void compare_seeks(const char *uri, const unsigned char *want, size_t size, int rounds) {
    recio_io io;
    char why[RECIO_ERRMSG_SIZE];
    unsigned char *got = (unsigned char *)malloc(size + 1);
    int i;
    CHECK(open_remote(uri, &io, why) == RECIO_OK);
    if (!io.read) {
        free(got);
        return;
    }
    CHECK(io.size(io.user) == (int64_t)size);
    for (i = 0; i < rounds; i++) {
        size_t off = i == 0 ? 0 : (size_t)(t_rand() % size), len = (size_t)(t_rand() % (i % 3 == 0 ? size : 300000)) + 1, have = 0;
        int64_t k = 1;
        if (off + len > size) len = size - off;
        CHECK(io.seek(io.user, off) == 0);
        while (have < len && (k = io.read(io.user, got + have, len - have)) > 0) have += (size_t)k;
        CHECK(k > 0 && have == len);
        CHECK(memcmp(got, want + off, have) == 0);
    }
    CHECK(io.seek(io.user, size) == 0 && io.read(io.user, got, 1) == 0); /* the end */
    io.close(io.user);
    free(got);
}

/* ---- writing ---- */

static const recio_fs *fs_of(const char *uri) { return recio_fs_find(NULL, uri); }

/* n bytes through the fs's create (atomic) and commit: RECIO_OK or the commit's error. */
static recio_err put_bytes(const char *uri, const unsigned char *b, size_t n, size_t step, char *why) {
    const recio_fs *fs = fs_of(uri);
    recio_fs_out out;
    recio_err e;
    size_t at;
    why[0] = 0;
    if ((e = fs->create(fs->user, uri, RECIO_FS_ATOMIC, &out, why)) != RECIO_OK) return e;
    for (at = 0; at < n; at += step)
        if (out.io.write(out.io.user, b + at, n - at < step ? n - at : step)) break;
    out.io.close(out.io.user);
    if (at < n) return fs->discard(fs->user, out.pending), RECIO_ERR_IO;
    e = fs->commit(fs->user, &out.pending, 1, why);
    if (e != RECIO_OK) note(why);
    return e;
}

static recio_fs_kind kind_of(const char *uri, uint64_t *size) {
    const recio_fs *fs = fs_of(uri);
    recio_fs_stat st;
    char why[RECIO_ERRMSG_SIZE] = "";
    memset(&st, 0, sizeof st);
    if (fs->info(fs->user, uri, &st, why) != RECIO_OK) return note(why), fprintf(stderr, "  stat %s: %s\n", uri, why), (recio_fs_kind)-1;
    if (size) *size = st.size;
    return st.kind;
}

/* Upload directories left in s3rver's store: parts of an upload never completed nor aborted. */
static int orphan_uploads(void) {
    char path[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(path, sizeof path, "%s/scratch/._S3rver_uploads", S3DIR);
    if (!(d = opendir(path))) return 0;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static unsigned char *big;
static uint64_t w_all; /* the hash of every record's bytes of w.rec, in order */
static size_t big_n = (21u << 20) + 12345; /* three parts: 8 + 8 + the rest */

static void test_multipart_write_read(void) {
    char why[RECIO_ERRMSG_SIZE];
    uint64_t size = 0;
    const recio_fs *fs = fs_of("s3://scratch/big.bin");
    recio_fs_out out;
    size_t at;
    CHECK(kind_of("s3://scratch/big.bin", NULL) == RECIO_FS_NONE);
    CHECK(fs->create(fs->user, "s3://scratch/big.bin", RECIO_FS_ATOMIC, &out, why) == RECIO_OK);
    for (at = 0; at < big_n; at += 1000003) CHECK(out.io.write(out.io.user, big + at, big_n - at < 1000003 ? big_n - at : 1000003) == 0);
    CHECK(out.io.close(out.io.user) == 0);
    CHECK(kind_of("s3://scratch/big.bin", NULL) == RECIO_FS_NONE); /* parts are up, the object is not */
    CHECK(fs->commit(fs->user, &out.pending, 1, why) == RECIO_OK);
    CHECK(kind_of("s3://scratch/big.bin", &size) == RECIO_FS_FILE && size == big_n);
    CHECK(orphan_uploads() == 0);
    compare_seeks("s3://scratch/big.bin", big, big_n, 40);
    /* a small object: one PUT */
    CHECK(put_bytes("s3://scratch/small.bin", big, 1000, 1000, why) == RECIO_OK);
    CHECK(kind_of("s3://scratch/small.bin", &size) == RECIO_FS_FILE && size == 1000);
    compare_seeks("s3://scratch/small.bin", big, 1000, 10);
}

/* RecordIO written to S3 through recio_writer, read back through the reader: the same records. */
/* Live bytes through a split's allocator, and their most; with limit, no block over it. */
typedef struct counted {
    size_t live, peak, limit;
} counted;
static void *counted_alloc(size_t n, void *user) {
    counted *c = (counted *)user;
    size_t *p = c->limit && n > c->limit ? NULL : (size_t *)malloc(n + 16);
    if (!p) return NULL;
    *p = n, c->live += n;
    if (c->live > c->peak) c->peak = c->live;
    return (char *)p + 16;
}
static void counted_free(void *q, void *user) {
    if (q) ((counted *)user)->live -= *(size_t *)((char *)q - 16), free((char *)q - 16);
}

static long nginx_log_end(void) {
    const char *log = getenv("RECIO_TEST_NGINX_LOG");
    FILE *f = log ? fopen(log, "r") : NULL;
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (f) fclose(f);
    return n;
}
static long log_size(const char *unused_a, const char *unused_b) {
    (void)unused_a, (void)unused_b;
    return nginx_log_end();
}

/* The nginx requests logged from byte `from` of its access log on whose path holds `tag` (NULL: every
   one): how many, and over how many connections (distinct $connection numbers). nginx logs a request
   when it ends, and one a client cancelled (a range asked ahead, then the file closed) when it sees
   the connection close: the log is read once it holds still (a cancelled range of one
   split was counted as the next split's, 9 requests where 8 were asked). */
static void nginx_requests(long from, const char *tag, size_t *requests, size_t *conns) {
    const char *log = getenv("RECIO_TEST_NGINX_LOG");
    static unsigned long seen[4096];
    unsigned long c;
    char method[16], path[512];
    size_t i;
    FILE *f;
    *requests = *conns = 0;
    settled(log_size, NULL, NULL);
    if (!log || !(f = fopen(log, "r"))) return;
    fseek(f, from, SEEK_SET);
    while (fscanf(f, "%lu %15s %511s", &c, method, path) == 3) {
        if (tag && !strstr(path, tag)) continue;
        for (i = 0; i < *conns && seen[i] != c; i++) continue;
        if (i == *conns && *conns < sizeof seen / sizeof seen[0]) seen[(*conns)++] = c;
        (*requests)++;
    }
    fclose(f);
}

/* A split reads the 18 MiB object in order with ranges of up to 16 MiB in flight: the same records,
   epoch after epoch, whatever its reader's buffer.
   From a near server (far 0) it holds only a few hundred KiB of each range in memory (the rest waits
   in its socket, paused, and then goes straight into the reader's buffer): at most 4 MiB through
   the allocator (ranges held whole took 8 MiB and more). From a far one (far 1: answers 30 ms late)
   ranges stream whole at once, for the bandwidth of several connections: 8 MiB and more. s3rver
   (far -1) may answer slowly enough to count as far: its memory is not checked. */
static void split_memory(const char *uri, uint64_t want, int far) {
    /* the default reader buffer, and two that end reads mid-range at other places (one not a power
       of two); two epochs of each split (recio_split_reset: a seek back to 0, the ranges asked anew) */
    static const size_t bufs[] = {0, 65536, 300000};
    static unsigned serial;
    int direct = !strncmp(uri, HTTP, strlen(HTTP)) && uri[strlen(HTTP)] == '/';
    size_t b;
    for (b = 0; b < sizeof bufs / sizeof bufs[0]; b++) {
        char tag[32], tagged[600]; /* straight from nginx: this split's requests told from the last one's */
        recio_split_desc d;
        recio_split *s = NULL;
        recio_record rec;
        counted c = {0, 0, 0};
        char msg[RECIO_ERRMSG_SIZE];
        int e;
        long from = nginx_log_end();
        size_t requests, conns;
        memset(&d, 0, sizeof d);
        d.errmsg = msg, d.buffer_size = bufs[b];
        d.alloc.alloc = counted_alloc, d.alloc.free = counted_free, d.alloc.user = &c;
        snprintf(tag, sizeof tag, "split=%u", ++serial);
        snprintf(tagged, sizeof tagged, "%s%s%s", uri, direct ? "?" : "", direct ? tag : "");
        CHECK(recio_split_open_desc(&s, tagged, 0, 1, &d) == RECIO_OK);
        if (!s) {
            note(msg);
            return;
        }
        for (e = 0; e < 2; e++) {
            uint64_t h = RECIO_FNV1A_INIT;
            size_t n = 0;
            recio_err end;
            CHECK(!e || recio_split_reset(s, (uint64_t)e) == RECIO_OK);
            while ((end = recio_split_next(s, &rec)) == RECIO_OK) h = recio_fnv1a64(h, rec.data, rec.size), n++;
            if (end != RECIO_END) fprintf(stderr, "  %s, buffer %zu, epoch %d: %s\n", uri, bufs[b], e, recio_split_errmsg(s));
            CHECK(end == RECIO_END && n == 3000 && h == want);
        }
        recio_split_close(s);
        nginx_requests(from, direct ? tag : NULL, &requests, &conns);
        fprintf(stderr, "  %s through a split (buffer %zu): at most %zu KiB allocated, %zu requests to nginx\n", uri, bufs[b],
                c.peak >> 10, requests);
        if (far >= 0) CHECK(far ? c.peak >= (8u << 20) : c.peak > 0 && c.peak <= (4u << 20));
        CHECK(c.live == 0);
        /* straight from nginx: the stat's HEAD, four ranges at the open (0.25, 1, 4 MiB and the rest:
           a range leaves no tail shorter than twice itself), two after the reset (8 MiB and the
           rest: a near server's ranges to a reader in order start at 8 MiB), and a third epoch's
           first range, asked before the second ends (recio__rm_wrap). 10-11 with the ramp of the
           open after the reset too; 12-13 with the short tail as well. */
        if (direct) CHECK(requests <= 8);
    }
}

static void test_writer_records(void) {
    const recio_fs *fs = fs_of("s3://scratch/w.rec");
    recio_writer_desc wd;
    recio_reader_desc rd;
    recio_writer *w;
    recio_reader *r;
    recio_record rec;
    recio_fs_out out;
    char why[RECIO_ERRMSG_SIZE];
    size_t i, n = 0;
    uint64_t hw = RECIO_FNV1A_INIT, hr = RECIO_FNV1A_INIT;
    recio_writer *lw; /* the same records into nginx's root */
    char local[512];
    snprintf(local, sizeof local, "%s/w.rec", WWW);
    CHECK(recio_writer_open(&lw, local) == RECIO_OK);
    memset(&wd, 0, sizeof wd);
    memset(&rd, 0, sizeof rd);
    CHECK(fs->create(fs->user, "s3://scratch/w.rec", RECIO_FS_ATOMIC, &out, why) == RECIO_OK);
    wd.io = out.io;
    wd.name = "s3://scratch/w.rec";
    CHECK(recio_writer_open_desc(&w, NULL, &wd) == RECIO_OK);
    for (i = 0; i < 3000; i++) { /* about 18 MiB: parts go up while records are written */
        size_t len = 1 + (size_t)(t_rand() % 12000), off = (size_t)(t_rand() % (big_n - len));
        hw = recio_fnv1a64(hw, big + off, len);
        w_hash[w_n++] = recio_fnv1a64(RECIO_FNV1A_INIT, big + off, len);
        CHECK(recio_writer_write(w, big + off, len) == RECIO_OK);
        CHECK(recio_writer_write(lw, big + off, len) == RECIO_OK);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
    CHECK(recio_writer_close(lw) == RECIO_OK);
    CHECK(fs->commit(fs->user, &out.pending, 1, why) == RECIO_OK);
    CHECK(open_remote("s3://scratch/w.rec", &rd.io, why) == RECIO_OK);
    if (!rd.io.read) return;
    CHECK(recio_reader_open_desc(&r, NULL, &rd) == RECIO_OK);
    while (recio_reader_next(r, &rec) == RECIO_OK) hr = recio_fnv1a64(hr, rec.data, rec.size), n++;
    CHECK(n == 3000 && hr == hw);
    recio_reader_close(r);
    w_all = hw;
    snprintf(local, sizeof local, "%s/w.rec", HTTP);
    split_memory("s3://scratch/w.rec", hw, -1);
    split_memory(local, hw, 0);
}

/* The writer on an s3:// path, with its .idx: both appear on close; a failure leaves neither, and
   no upload parts. */
static recio_err write_path(const char *rec, const char *idx, size_t nrec, uint64_t *h, char *msg) {
    recio_writer_desc wd;
    recio_writer *w;
    recio_err e;
    size_t i;
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx, wd.atomic = 1, wd.errmsg = msg;
    *h = RECIO_FNV1A_INIT;
    if ((e = recio_writer_open_desc(&w, rec, &wd)) != RECIO_OK) return e;
    for (i = 0; i < nrec; i++) {
        size_t len = 1 + (size_t)(t_rand() % 12000), off = (size_t)(t_rand() % (big_n - len));
        *h = recio_fnv1a64(*h, big + off, len);
        if (recio_writer_write(w, big + off, len) != RECIO_OK) break;
    }
    e = recio_writer_finish(w);
    snprintf(msg, RECIO_ERRMSG_SIZE, "%s", recio_writer_errmsg(w));
    recio_writer_close(w);
    return e;
}

/* The records of rec and the entries of its .idx: n of them, their FNV-1a h. */
static int read_back(const char *rec, const char *idx, size_t n, uint64_t h) {
    recio_reader *r = NULL;
    recio_record one;
    recio_index ix;
    uint64_t hr = RECIO_FNV1A_INIT;
    size_t got = 0, entries = 0;
    if (recio_reader_open(&r, rec) != RECIO_OK) return 0;
    while (recio_reader_next(r, &one) == RECIO_OK) hr = recio_fnv1a64(hr, one.data, one.size), got++;
    recio_reader_close(r);
    memset(&ix, 0, sizeof ix);
    if (recio_index_load(&ix, idx, NULL) == RECIO_OK) entries = ix.count, recio_index_free(&ix);
    return got == n && hr == h && entries == n;
}

static void test_writer_path(void) {
    char msg[RECIO_ERRMSG_SIZE];
    uint64_t h;
    CHECK(write_path("s3://scratch/wp.rec", "s3://scratch/wp.idx", 2500, &h, msg) == RECIO_OK);
    CHECK(read_back("s3://scratch/wp.rec", "s3://scratch/wp.idx", 2500, h));
    /* the second part refused: neither object appears */
    use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
    faults(PROXY_S3, "status=500&count=100&match=partNumber%3D2&methods=PUT");
    CHECK(write_path("s3://scratch/wp2.rec", "s3://scratch/wp2.idx", 2500, &h, msg) == RECIO_ERR_IO);
    CHECK(strstr(msg, "s3://scratch/wp2.rec") != NULL && strstr(msg, "HTTP 500 after 5 tries") != NULL);
    fprintf(stderr, "  (as expected) %s\n", msg);
    note(msg);
    faults(PROXY_S3, "");
    use_default();
    CHECK(kind_of("s3://scratch/wp2.rec", NULL) == RECIO_FS_NONE && kind_of("s3://scratch/wp2.idx", NULL) == RECIO_FS_NONE);
    CHECK(orphan_uploads() == 0);
}

/* The writer keeps no pointer into its caller's paths: the buffers they were in are written over
   right after the open (as Python frees the temporary it passed), and the objects still appear
   whole at the names given, with nothing at the names written over them. Parts go up while it
   writes (about 12 MiB), and the last part, the completions and the .idx's PUT come at the finish.
   Before the fix, the finish sent its requests to the overwritten key, or to the bucket itself. */
static void test_writer_path_copied(void) {
    char msg[RECIO_ERRMSG_SIZE], *rec = (char *)malloc(64), *idx = (char *)malloc(64);
    recio_writer_desc wd;
    recio_writer *w;
    uint64_t h = RECIO_FNV1A_INIT;
    size_t i;
    if (!rec || !idx) exit(1);
    snprintf(rec, 64, "s3://scratch/wc.rec"), snprintf(idx, 64, "s3://scratch/wc.idx");
    memset(&wd, 0, sizeof wd);
    wd.index_path = idx, wd.atomic = 1, wd.errmsg = msg;
    CHECK(recio_writer_open_desc(&w, rec, &wd) == RECIO_OK);
    if (!w) return;
    snprintf(rec, 64, "s3://scratch/XX.rec"), snprintf(idx, 64, "s3://scratch/XX.idx");
    for (i = 0; i < 2000; i++) {
        size_t len = 1 + (size_t)(t_rand() % 12000), off = (size_t)(t_rand() % (big_n - len));
        h = recio_fnv1a64(h, big + off, len);
        CHECK(recio_writer_write(w, big + off, len) == RECIO_OK);
    }
    CHECK(recio_writer_finish(w) == RECIO_OK);
    fprintf(stderr, "  finish: \"%s\"\n", recio_writer_errmsg(w));
    recio_writer_close(w);
    free(rec), free(idx);
    CHECK(read_back("s3://scratch/wc.rec", "s3://scratch/wc.idx", 2000, h));
    CHECK(kind_of("s3://scratch/XX.rec", NULL) == RECIO_FS_NONE && kind_of("s3://scratch/XX.idx", NULL) == RECIO_FS_NONE);
    CHECK(orphan_uploads() == 0);
}

/* recio_index_save to S3: the object appears, whole, when it returns (it used to write in place
   and never commit: on S3 nothing appeared, the save said OK, and the upload's writer leaked); a
   save the server refuses leaves no object, and says why. */
static void test_index_save_s3(void) {
    recio_index ix, back;
    recio_index_desc d;
    char msg[RECIO_ERRMSG_SIZE];
    size_t i, same = 0;
    memset(&ix, 0, sizeof ix);
    memset(&back, 0, sizeof back);
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    ix.count = 20000; /* about 230 KB of lines */
    ix.entries = (recio_index_entry *)calloc(ix.count, sizeof *ix.entries);
    if (!ix.entries) exit(1);
    for (i = 0; i < ix.count; i++) ix.entries[i].key = i * 7, ix.entries[i].offset = i * 4096 + 12;
    CHECK(recio_index_save(&ix, "s3://scratch/saved.idx", &d) == RECIO_OK);
    CHECK(recio_index_load(&back, "s3://scratch/saved.idx", NULL) == RECIO_OK && back.count == ix.count);
    for (i = 0; i < back.count && i < ix.count; i++)
        same += back.entries[i].key == ix.entries[i].key && back.entries[i].offset == ix.entries[i].offset;
    CHECK(same == ix.count);
    recio_index_free(&back);
    use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
    faults(PROXY_S3, "status=403&count=100&match=refused.idx&methods=PUT");
    CHECK(recio_index_save(&ix, "s3://scratch/refused.idx", &d) == RECIO_ERR_IO);
    CHECK(strstr(msg, "s3://scratch/refused.idx") != NULL && strstr(msg, "403") != NULL);
    fprintf(stderr, "  (as expected) %s\n", msg);
    note(msg);
    faults(PROXY_S3, "");
    use_default();
    CHECK(kind_of("s3://scratch/refused.idx", NULL) == RECIO_FS_NONE);
    free(ix.entries);
}

/* A part that cannot go up: the upload is aborted, no object appears, no part is left. */
static void test_write_failure_aborts(void) {
    char why[RECIO_ERRMSG_SIZE];
    use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
    faults(PROXY_S3, "status=500&count=100&match=partNumber%3D2&methods=PUT");
    CHECK(put_bytes("s3://scratch/fail.bin", big, big_n, 1 << 20, why) != RECIO_OK);
    CHECK(strstr(why, "HTTP 500 after 5 tries") != NULL);
    if (!strstr(why, "HTTP 500 after 5 tries")) fprintf(stderr, "  why: %s\n", why);
    faults(PROXY_S3, "");
    CHECK(kind_of("s3://scratch/fail.bin", NULL) == RECIO_FS_NONE);
    CHECK(orphan_uploads() == 0);
    CHECK(stat_of(PROXY_S3, "requests") >= 0);
    /* the completion refused: aborted too */
    faults(PROXY_S3, "status=503&count=100&match=uploadId%3D&methods=POST");
    CHECK(put_bytes("s3://scratch/fail2.bin", big, big_n, 1 << 20, why) != RECIO_OK);
    CHECK(strstr(why, "HTTP 503 after 5 tries") != NULL);
    faults(PROXY_S3, "");
    CHECK(kind_of("s3://scratch/fail2.bin", NULL) == RECIO_FS_NONE);
    CHECK(orphan_uploads() == 0);
    use_default();
    /* discarded by the caller after parts went up */
    {
        const recio_fs *fs = fs_of("s3://scratch/discarded.bin");
        recio_fs_out out;
        CHECK(fs->create(fs->user, "s3://scratch/discarded.bin", RECIO_FS_ATOMIC, &out, why) == RECIO_OK);
        CHECK(out.io.write(out.io.user, big, 17u << 20) == 0);
        out.io.close(out.io.user);
        fs->discard(fs->user, out.pending);
        CHECK(kind_of("s3://scratch/discarded.bin", NULL) == RECIO_FS_NONE);
        CHECK(orphan_uploads() == 0);
    }
}

static void test_http_read_only(void) {
    char uri[512], why[RECIO_ERRMSG_SIZE];
    const recio_fs *fs;
    recio_fs_out out;
    snprintf(uri, sizeof uri, "%s/compat/new.rec", HTTP);
    fs = fs_of(uri);
    CHECK(fs && fs->create(fs->user, uri, RECIO_FS_ATOMIC, &out, why) == RECIO_ERR_UNSUPPORTED);
    CHECK(strstr(why, "read-only") != NULL);
}

/* ---- listing ---- */

typedef struct {
    int n, dirs;
    char names[2000][24];
} listing;
static int on_entry(void *ctx, const char *name, recio_fs_kind kind) {
    listing *l = (listing *)ctx;
    if (l->n < 2000) snprintf(l->names[l->n], sizeof l->names[0], "%s", name);
    l->n++;
    l->dirs += kind == RECIO_FS_DIR;
    return 0;
}

/* A split over an S3 "directory" named as S3 tools write it, with its final '/', takes the files
   it takes without it, named alike (it used to list the keys under "compat//": none). */
static void split_dir_names(void) {
    recio_split *a = NULL, *b = NULL;
    recio_split_info ia, ib;
    unsigned i, same = 0;
    CHECK(recio_split_open(&a, "s3://data/compat", 0, 1) == RECIO_OK);
    CHECK(recio_split_open(&b, "s3://data/compat/", 0, 1) == RECIO_OK);
    if (a && b && recio_split_query(a, &ia) == RECIO_OK && recio_split_query(b, &ib) == RECIO_OK) {
        CHECK(ia.nfiles >= 5 && ib.nfiles == ia.nfiles && !strcmp(ia.files[0], "s3://data/compat/a.rec"));
        for (i = 0; i < ia.nfiles && i < ib.nfiles; i++) same += !strcmp(ia.files[i], ib.files[i]);
        CHECK(same == ia.nfiles);
    } else {
        CHECK(!"split and query");
    }
    recio_split_close(a), recio_split_close(b);
}

static void test_list(void) {
    static listing l;
    char why[RECIO_ERRMSG_SIZE], key[64];
    const recio_fs *fs = fs_of("s3://data/compat");
    DIR *d = opendir(COMPAT);
    struct dirent *e;
    int local = 0, i, ok = 1;
    while ((e = readdir(d)) != NULL) local += e->d_name[0] != '.';
    closedir(d);
    memset(&l, 0, sizeof l);
    CHECK(fs->list(fs->user, "s3://data/compat", on_entry, &l, why) == RECIO_OK);
    CHECK(l.n == local && l.dirs == 0);
    memset(&l, 0, sizeof l);
    CHECK(fs->list(fs->user, "s3://data", on_entry, &l, why) == RECIO_OK);
    CHECK(l.n == 1 && l.dirs == 1 && !strcmp(l.names[0], "compat"));
    CHECK(kind_of("s3://data/compat", NULL) == RECIO_FS_DIR);
    CHECK(kind_of("s3://data/compat/nothing.rec", NULL) == RECIO_FS_NONE);
    /* more than 1,000 keys: ListObjectsV2's pages */
    for (i = 0; i < 1050; i++) {
        snprintf(key, sizeof key, "s3://scratch/many/k%04d", i);
        if (put_bytes(key, (const unsigned char *)"x", 1, 1, why) != RECIO_OK) ok = 0;
    }
    CHECK(ok);
    use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
    faults(PROXY_S3, "");
    memset(&l, 0, sizeof l);
    CHECK(fs->list(fs->user, "s3://scratch/many/", on_entry, &l, why) == RECIO_OK);
    if (l.n != 1050) fprintf(stderr, "  list s3://scratch/many/: %d entries: %s\n", l.n, why);
    CHECK(l.n == 1050);
    CHECK(stat_of(PROXY_S3, "requests") == 2); /* two pages */
    for (i = 0; i < 1050 && i < l.n; i++) {
        snprintf(key, sizeof key, "k%04d", i);
        if (strcmp(l.names[i], key)) ok = 0;
    }
    CHECK(ok);
    use_default();
    split_dir_names();
}

/* ---- the iterator: the photo set packed here, iterated from disk, nginx and s3rver ---- */

static int run_out(const char *args, char *out, size_t cap) { /* the recio command's stdout */
    char cmd[4096];
    const char *exe = getenv("RECIO");
    FILE *p;
    size_t n;
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", exe && *exe ? exe : "build/recio", args);
    if (!(p = popen(cmd, "r"))) return -1;
    n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    return pclose(p);
}

static void test_iter_photos(void) {
    static char local[1 << 16], remote[1 << 16];
    char dir[600], args[3000], why[RECIO_ERRMSG_SIZE], uri[700];
    const char *iter = "--spec 'random_resized_crop(64) random_flip(0.5) normalize(imagenet) chw' --batch 4 --workers 2 "
                       "--seed 3 --epochs 2 --shuffle";
    unsigned char *b;
    size_t n;
    int k;
    snprintf(dir, sizeof dir, "%s/..", S3DIR);
    snprintf(args, sizeof args, "list --recursive %s/photos tests/data/photos", dir);
    CHECK(run_out(args, local, sizeof local) == 0);
    snprintf(args, sizeof args, "pack --quiet %s/photos tests/data/photos", dir);
    CHECK(run_out(args, local, sizeof local) == 0);
    snprintf(args, sizeof args, "%s/photos.rec", dir);
    b = t_slurp(args, &n);
    CHECK(b && n > 100000);
    if (!b) return;
    CHECK(put_bytes("s3://scratch/photos.rec", b, n, 1 << 20, why) == RECIO_OK);
    snprintf(args, sizeof args, "%s/photos.idx", dir);
    free(b);
    b = t_slurp(args, &n);
    CHECK(b && put_bytes("s3://scratch/photos.idx", b, n, n, why) == RECIO_OK);
    free(b);
    snprintf(args, sizeof args, "cp %s/photos.rec %s/photos.idx %s/", dir, dir, WWW);
    CHECK(system(args) == 0);
    snprintf(PHOTOS, sizeof PHOTOS, "%s/photos.rec", WWW);
    snprintf(args, sizeof args, "iter %s/photos.rec %s", dir, iter);
    CHECK(run_out(args, local, sizeof local) == 0 && strlen(local) > 100);
    for (k = 0; k < 2; k++) {
        if (k) snprintf(uri, sizeof uri, "s3://scratch/photos.rec");
        else snprintf(uri, sizeof uri, "%s/photos.rec", HTTP);
        snprintf(args, sizeof args, "iter %s %s", uri, iter);
        CHECK(run_out(args, remote, sizeof remote) == 0);
        CHECK(strcmp(local, remote) == 0); /* the same batches: ids and checksums */
    }
}

/* ---- every command that writes, with its outputs on s3:// (and salvage, index, mean, show, unpack
   reading a remote input): the same bytes as the same command writing local files ---- */

/* "recio ARGS" with stderr into err (cap bytes); the exit status. */
static int run_err(const char *args, char *err, size_t cap) {
    char cmd[4096];
    const char *exe = getenv("RECIO");
    FILE *p;
    size_t n;
    int st;
    snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/null", exe && *exe ? exe : "build/recio", args);
    if (!(p = popen(cmd, "r"))) return -1;
    n = fread(err, 1, cap - 1, p);
    err[n] = 0;
    st = pclose(p);
    note(err);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* An object's bytes through the s3 row (NULL when it cannot be read). */
static unsigned char *get_bytes(const char *uri, size_t *n) {
    char why[RECIO_ERRMSG_SIZE];
    recio_io io;
    unsigned char *b = NULL;
    size_t cap = 0;
    int64_t got = 1;
    *n = 0;
    if (open_remote(uri, &io, why) != RECIO_OK) return NULL;
    while (got > 0) {
        if (*n == cap) b = (unsigned char *)realloc(b, cap = cap ? 2 * cap : 1 << 16);
        if ((got = io.read(io.user, b + *n, cap - *n)) > 0) *n += (size_t)got;
    }
    io.close(io.user);
    if (got < 0) free(b), b = NULL;
    return b;
}

/* s3://scratch/cli/NAME holds the bytes of the local LOCAL/NAME, both made by the command. */
static int same_as_local(const char *local, const char *name, int quiet) {
    char path[700], uri[300];
    size_t a = 0, b = 0;
    unsigned char *x, *y;
    int same;
    snprintf(path, sizeof path, "%s/%s", local, name);
    snprintf(uri, sizeof uri, "s3://scratch/cli/%s", name);
    x = t_slurp(path, &a);
    y = get_bytes(uri, &b);
    same = x && y && a == b && a > 0 && memcmp(x, y, a) == 0;
    if (!same && !quiet) fprintf(stderr, "  %s: %zu bytes locally, %s%zu bytes on s3\n", name, a, y ? "" : "unreadable, ", b);
    free(x), free(y);
    return same;
}

static void test_cli_outputs(void) {
    static const char *const cmds[] = {
        "list %s/p tests/data/photos",
        "pack --quiet %s/p tests/data/photos",
        "index -o %s/p2.idx %s/p.rec",
        "salvage %s/p.rec %s/sv.rec",
        "mean %s/p.rec --spec 'resize(8,6) float chw' -o %s/m.npy",
        "show %s/p.rec %s/s.png --tile 16",
        "unpack %s/p.rec %s/up",
        "apply --spec 'flip pad(4)' tests/data/photos/retina-120x90.jpg %s/o.png",
    };
    static const char *const made[] = {"p.lst", "p.rec", "p.idx", "p2.idx", "sv.rec", "sv.idx", "m.npy", "s.png",
                                       "up/p.lst", "up/0.jpg", "up/11.jpg", "o.png"};
    char local[600], args[4000], err[4096];
    size_t i;
    int orphans = orphan_uploads();
    snprintf(local, sizeof local, "%s/../cli", S3DIR);
    snprintf(args, sizeof args, "rm -rf %s && mkdir -p %s", local, local);
    CHECK(system(args) == 0);
    for (i = 0; i < sizeof cmds / sizeof *cmds; i++) { /* the same command, local then on s3 (inputs there too) */
        int rc;
        snprintf(args, sizeof args, cmds[i], local, local);
        CHECK_EQ_INT(run_err(args, err, sizeof err), 0);
        snprintf(args, sizeof args, cmds[i], "s3://scratch/cli", "s3://scratch/cli");
        if ((rc = run_err(args, err, sizeof err)) != 0) fprintf(stderr, "  recio %s: exit %d: %s", args, rc, err);
        CHECK_EQ_INT(rc, 0);
    }
    for (i = 0; i < sizeof made / sizeof *made; i++) CHECK(same_as_local(local, made[i], 0));
    /* a remote input salvaged into a local file: the local salvage's bytes */
    snprintf(args, sizeof args, "salvage s3://scratch/cli/p.rec %s/sv2.rec", local);
    CHECK_EQ_INT(run_err(args, err, sizeof err), 0);
    snprintf(args, sizeof args, "cmp -s %s/sv.rec %s/sv2.rec", local, local);
    CHECK(system(args) == 0);
    /* run again: every output of its own kind is replaced, as for local files */
    CHECK_EQ_INT(run_err("index -o s3://scratch/cli/p2.idx s3://scratch/cli/p.rec", err, sizeof err), 0);
    CHECK_EQ_INT(run_err("pack --quiet s3://scratch/cli/p tests/data/photos", err, sizeof err), 0);
    CHECK(same_as_local(local, "p.rec", 0) && same_as_local(local, "p.idx", 0));
    /* the policy, through the s3 row: an input is never an output; another kind is not replaced
       without --force (read through the fs to tell), and is with it */
    CHECK_EQ_INT(run_err("show s3://scratch/cli/p.rec s3://scratch/cli/p.rec", err, sizeof err), 2);
    CHECK(strstr(err, "s3://scratch/cli/p.rec: is the input s3://scratch/cli/p.rec (the same file)") != NULL);
    CHECK_EQ_INT(run_err("show s3://scratch/cli/p.rec s3://scratch/cli/m.npy --tile 16", err, sizeof err), 2);
    CHECK(strstr(err, "s3://scratch/cli/m.npy: exists and is not a PNG image") != NULL && strstr(err, "--force") != NULL);
    CHECK(same_as_local(local, "m.npy", 0));
    CHECK_EQ_INT(run_err("show s3://scratch/cli/p.rec s3://scratch/cli/m.npy --tile 16 --force", err, sizeof err), 0);
    CHECK(!same_as_local(local, "m.npy", 1));
    /* an upload that fails: the command says so (exit 1), the old object stays, no parts are left */
    use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
    faults(PROXY_S3, "status=500&count=1000&methods=PUT,POST");
    CHECK_EQ_INT(run_err("index -o s3://scratch/cli/p2.idx s3://scratch/cli/p.rec", err, sizeof err), 1);
    CHECK(strstr(err, "s3://scratch/cli/p2.idx") != NULL && strstr(err, "HTTP 500") != NULL);
    CHECK_EQ_INT(run_err("pack --quiet s3://scratch/cli/p tests/data/photos", err, sizeof err), 1);
    faults(PROXY_S3, "");
    use_default();
    CHECK(same_as_local(local, "p2.idx", 0) && same_as_local(local, "p.rec", 0) && same_as_local(local, "p.idx", 0));
    CHECK(orphan_uploads() == orphans);
    /* an http(s) URL is read-only: said before any work */
    snprintf(args, sizeof args, "mean %s/photos.rec --spec 'resize(8,6) float chw' -o %s/m.npy", HTTP, HTTP);
    CHECK_EQ_INT(run_err(args, err, sizeof err), 2);
    CHECK(strstr(err, "read-only") != NULL);
    snprintf(args, sizeof args, "rm -rf %s", local);
    CHECK(system(args) == 0);
}

/* ---- faults ---- */

static void test_faults_read(void) {
    static const char *cases[] = {"status=503&count=2&retry_after=1&methods=GET", "status=429&count=3&methods=GET",
                                  "status=500&count=4", "cut=3&methods=GET", "reset=3", "delay_ms=20"};
    char uri[512];
    digest l = digest_local("b.rec"), r;
    int k, i;
    for (k = 0; k < 2; k++) {
        const char *proxy = k ? PROXY_S3 : PROXY_HTTP;
        if (k) snprintf(uri, sizeof uri, "s3://data/compat/b.rec");
        else snprintf(uri, sizeof uri, "%s/compat/b.rec", PROXY_HTTP);
        use_s3(PROXY_S3, "RECIOTESTKEY", SECRET, NULL);
        for (i = 0; i < 6; i++) {
            double t0 = now_s();
            faults(proxy, cases[i]);
            r = digest_remote(uri);
            CHECK(r.end == RECIO_END && r.n == l.n && r.h == l.h);
            if (r.end != RECIO_END) fprintf(stderr, "  %s with %s: %s\n", uri, cases[i], r.msg);
            CHECK(stat_of(proxy, "faults") == (i == 0 ? 2 : i == 1 ? 3 : i == 2 ? 4 : i == 5 ? 0 : 3));
            if (i == 0) CHECK(now_s() - t0 >= 0.95); /* Retry-After: 1 waited out */
        }
        /* the 18 MiB object through a split: ranges ahead wait paused in their sockets, and are cut
           half-way (paused or not), then resumed where they stopped: every record right */
        faults(proxy, "cut=3&methods=GET");
        if (k) snprintf(uri, sizeof uri, "s3://scratch/w.rec");
        else snprintf(uri, sizeof uri, "%s/w.rec", PROXY_HTTP);
        split_memory(uri, w_all, k ? -1 : 0);
        CHECK(stat_of(proxy, "faults") == 3);
        faults(proxy, "delay_ms=30");
        split_memory(uri, w_all, 1);
        if (k) snprintf(uri, sizeof uri, "s3://data/compat/b.rec");
        else snprintf(uri, sizeof uri, "%s/compat/b.rec", PROXY_HTTP);
        /* always failing from the open on: its reason, with the tries */
        faults(proxy, "status=503&count=1000&methods=GET");
        r = digest_remote(uri);
        CHECK(r.end == RECIO_ERR_IO && strstr(r.msg, "HTTP 503 after 5 tries: SlowDown") != NULL);
        /* failing after the open (past what was read ahead): the reader names the URI and the offset,
           and every record before is right */
        faults(proxy, "");
        if (k) snprintf(uri, sizeof uri, "s3://scratch/w.rec");
        else snprintf(uri, sizeof uri, "%s/w.rec", PROXY_HTTP);
        fail_mid_read(uri, proxy);
        /* the object replaced while read: an error, never a mix; with If-Match ignored too. The
           photos (1.4 MB): the open asks for two ranges at once (the first 768 KiB), in either order,
           so the object changes after both were answered (replace_after=2), and the third sees it */
        if (k) snprintf(uri, sizeof uri, "s3://scratch/photos.rec");
        else snprintf(uri, sizeof uri, "%s/photos.rec", PROXY_HTTP);
        for (i = 0; i < 2; i++) {
            digest lp = digest_path(PHOTOS);
            faults(proxy, i ? "replace_after=2&ignore_if_match=1" : "replace_after=2");
            r = digest_remote(uri);
            if (r.end != RECIO_ERR_IO || !strstr(r.msg, "changed")) fprintf(stderr, "  replaced (%d): %s (%zu records)\n", i, r.msg, r.n);
            CHECK(r.end == RECIO_ERR_IO && strstr(r.msg, "changed") != NULL);
            CHECK(r.n > 0 && r.n < lp.n);
            fprintf(stderr, "  (as expected) %s\n", r.msg);
        }
        CHECK(stat_of(proxy, "if_match") > 0); /* the third range carried it */
        faults(proxy, "");
    }
    use_default();
}

/* What a record stream gives before an error is a prefix of the true one (records through the
   reader are checked one by one against the local file's). The object changes after the open's two
   ranges (the third range comes from the new object); the second range is answered first, by the
   new object, its bytes in before the first range's ETag (they are checked when it comes: without
   that check the records across 256 KiB came back with inverted bytes); and, ten times, between
   the two ranges, answered in either order. Never a mix: the records before the change and an
   error, or none (the first range is the new object, whose inverted bytes are no records). */
static int no_wrong_record(const char *fault, int any_end) {
    recio_reader *lr, *rr;
    recio_reader_desc rd;
    recio_record a, b;
    char why[RECIO_ERRMSG_SIZE], uri[512];
    recio_err e;
    int good = 1;
    faults(PROXY_HTTP, fault);
    memset(&rd, 0, sizeof rd);
    snprintf(uri, sizeof uri, "%s/photos.rec", PROXY_HTTP);
    rd.name = "photos.rec";
    CHECK(open_remote(uri, &rd.io, why) == RECIO_OK);
    CHECK(recio_reader_open(&lr, PHOTOS) == RECIO_OK);
    CHECK(recio_reader_open_desc(&rr, NULL, &rd) == RECIO_OK);
    if (!lr || !rr) return 0;
    while ((e = recio_reader_next(rr, &b)) == RECIO_OK)
        if (recio_reader_next(lr, &a) != RECIO_OK || a.size != b.size || a.offset != b.offset || memcmp(a.data, b.data, a.size))
            good = 0;
    if (!good || !(any_end ? e != RECIO_END : e == RECIO_ERR_IO)) fprintf(stderr, "  %s: %s\n", fault, recio_reader_errmsg(rr));
    note(recio_reader_errmsg(rr));
    recio_reader_close(rr);
    recio_reader_close(lr);
    faults(PROXY_HTTP, "");
    return good && (any_end ? e != RECIO_END : e == RECIO_ERR_IO);
}

static void test_no_wrong_record(void) {
    int i, ok = 1;
    CHECK(no_wrong_record("replace_after=2&ignore_if_match=1", 0));
    /* the open's second range answered first, by the new object, before the first range's ETag */
    CHECK(no_wrong_record("replace_from=262144&delay_first_ms=100", 0));
    for (i = 0; i < 10; i++) ok &= no_wrong_record("replace_after=1", 1);
    CHECK(ok);
}

/* ---- credentials and messages ---- */

static void expect_open_fails(const char *uri, const char *want1, const char *want2) {
    recio_io io;
    char why[RECIO_ERRMSG_SIZE];
    CHECK(open_remote(uri, &io, why) == RECIO_ERR_IO);
    note(why);
    CHECK(strstr(why, want1) != NULL && (!want2 || strstr(why, want2) != NULL));
    if (!strstr(why, want1) || (want2 && !strstr(why, want2))) fprintf(stderr, "  %s: %s\n", uri, why);
}

static void test_credentials(void) {
    char path[512], uri[512];
    FILE *f;
    digest d;
    expect_open_fails("s3://data/compat/missing.rec", "HTTP 404", NULL);
    snprintf(uri, sizeof uri, "%s/compat/missing.rec", HTTP);
    expect_open_fails(uri, "HTTP 404", NULL);
    use_s3(S3, "RECIOTESTKEY", "wrong-secret", NULL);
    expect_open_fails("s3://data/compat/a.rec", "HTTP 403", "SignatureDoesNotMatch");
    use_s3(S3, "NOSUCHKEY", SECRET, NULL);
    expect_open_fails("s3://data/compat/a.rec", "HTTP 403", "InvalidAccessKeyId");
    /* a session token: signed and sent; without it, refused */
    use_s3(S3, "RECIOTMPKEY", "recio-tmp-secret", "recio-session-token/+=");
    d = digest_remote("s3://data/compat/a.rec");
    CHECK(d.end == RECIO_END && d.n == digest_local("a.rec").n);
    use_s3(S3, "RECIOTMPKEY", "recio-tmp-secret", NULL);
    expect_open_fails("s3://data/compat/a.rec", "HTTP 400", "InvalidToken");
    /* anonymous: the public bucket reads, the others refuse */
    use_s3(S3, NULL, NULL, NULL);
    d = digest_remote("s3://public/compat/a.rec");
    CHECK(d.end == RECIO_END && d.h == digest_local("a.rec").h);
    expect_open_fails("s3://data/compat/a.rec", "HTTP 403", "AccessDenied");
    /* the shared credentials file's profile */
    snprintf(path, sizeof path, "%s/../credentials", S3DIR);
    f = fopen(path, "w");
    fprintf(f, "[other]\naws_access_key_id = NOSUCHKEY\naws_secret_access_key = x\n\n[default]\naws_access_key_id = RECIOTESTKEY\n"
               "aws_secret_access_key = %s\n", SECRET);
    fclose(f);
    setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
    d = digest_remote("s3://data/compat/a.rec");
    CHECK(d.end == RECIO_END && d.h == digest_local("a.rec").h);
    setenv("AWS_PROFILE", "other", 1);
    expect_open_fails("s3://data/compat/a.rec", "HTTP 403", "InvalidAccessKeyId");
    /* an http URL's user:password@ and ?query never reach a message */
    snprintf(uri, sizeof uri, "http://someone:pa55word@%s/compat/missing.rec?X-Amz-Signature=deadbeef1234", HTTP + 7);
    expect_open_fails(uri, "HTTP 404", NULL);
    use_default();
    CHECK(strstr(msgs, SECRET) == NULL && strstr(msgs, "pa55word") == NULL && strstr(msgs, "deadbeef1234") == NULL);
    CHECK(strstr(msgs, "recio-tmp-secret") == NULL && strstr(msgs, "recio-session-token") == NULL);
    CHECK(strstr(msgs, "Signature=") == NULL && strstr(msgs, "SignatureProvided") == NULL);
}

/* ---- HTTPS: nginx with a certificate made for this run (servers.py), trusted only through the
   variables docs/remote.md names; verification is never off ---- */

static void no_ca_vars(void) {
    unsetenv("AWS_CA_BUNDLE");
    unsetenv("CURL_CA_BUNDLE");
    unsetenv("SSL_CERT_FILE");
}

/* recio split's lines (file<TAB>ordinal<TAB>offset<TAB>length) alike but for the file's name. */
static int same_but_names(const char *a, const char *b) {
    int lines = 0;
    while (*a && *b) {
        const char *ta = strchr(a, '\t'), *tb = strchr(b, '\t'), *ea, *eb;
        if (!ta || !tb) return 0;
        ea = strchr(ta, '\n'), eb = strchr(tb, '\n');
        if (!ea || !eb || ea - ta != eb - tb || memcmp(ta, tb, (size_t)(ea - ta))) return 0;
        a = ea + 1, b = eb + 1, lines++;
    }
    return !*a && !*b && lines > 0;
}

/* A split opens its files one after another (and asks each one's size first): the connections (and
   over HTTPS the TLS sessions) of one open serve the next, so 12 files take far fewer than 12
   connections (each open making its own took two per file: the size's HEAD and the reads). The
   records are the local ones. */
static void connections_kept(const char *base, const char *what) {
    char local[2048], list[8192];
    size_t nl, nr, requests, conns, i, at = 0, lat = 0;
    recio_err el, er;
    uint64_t hl, hr;
    long from;
    for (i = 0; i < 12; i++) {
        lat += (size_t)snprintf(local + lat, sizeof local - lat, "%s%s/%s", i ? ";" : "", COMPAT, FILES[i % 4]);
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s/compat/%s", i ? ";" : "", base, FILES[i % 4]);
    }
    from = nginx_log_end();
    hl = split_digest(local, 0, 1, 0, 0, &nl, &el);
    hr = split_digest(list, 0, 1, 1, 0, &nr, &er);
    CHECK(el == RECIO_END && er == RECIO_END && nr == nl && hr == hl && nl > 0);
    nginx_requests(from, NULL, &requests, &conns);
    fprintf(stderr, "  %s: a split over 12 files: %zu requests over %zu connections\n", what, requests, conns);
    CHECK(requests >= 12);
    /* a HEAD and a GET a file, and a few more: no range is asked past a size the split's stat saw
       (four ranges an open, three of them past these small files' ends, made 60) */
    CHECK(requests <= 36);
    CHECK(conns >= 1 && conns <= 6);
}

/* Epoch e of one split kept open (recio_split_reset), chunk-shuffled so that reads seek: the hash of
   its records, files and offsets. */
static uint64_t epoch_digest(recio_split *s, uint64_t e, size_t *n) {
    recio_err end;
    uint64_t h;
    *n = 0;
    if (recio_split_reset(s, e) != RECIO_OK) return 0;
    h = split_hash(s, n, &end);
    return end == RECIO_END ? h : 0;
}

/* A split kept for several epochs hands its range buffers from one file to the next and from one
   epoch to the next (recio__rm_buf: fresh memory faulted in a page at a time); chunk shuffling
   makes the reads seek, cancelling ranges in flight whose buffers go on to other ranges. Every
   epoch's records are the local split's. */
static void test_kept_split_epochs(void) {
    char local[4096], list[4096], msg[RECIO_ERRMSG_SIZE];
    recio_split *sl = NULL, *sr = NULL;
    recio_split_desc d;
    size_t at = 0, lat = 0, nl, nr;
    uint64_t e;
    int i;
    for (i = 0; i < 4; i++) { /* a, b, c (with .idx) and the photos */
        const char *f = i < 3 ? FILES[i] : "photos.rec";
        lat += (size_t)snprintf(local + lat, sizeof local - lat, "%s%s/%s", i ? ";" : "", i < 3 ? COMPAT : WWW, f);
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s/%s%s", i ? ";" : "", HTTP, i < 3 ? "compat/" : "", f);
    }
    memset(&d, 0, sizeof d);
    d.errmsg = msg, d.shuffle = RECIO_SHUFFLE_CHUNK, d.chunk_records = 3, d.seed = 5;
    if (recio_split_open_desc(&sl, local, 0, 1, &d) != RECIO_OK) fprintf(stderr, "  %s\n", msg);
    if (recio_split_open_desc(&sr, list, 0, 1, &d) != RECIO_OK) fprintf(stderr, "  %s\n", msg);
    CHECK(sr != NULL && sl != NULL);
    for (e = 0; sl && sr && e < 4; e++) {
        uint64_t hl = epoch_digest(sl, e, &nl), hr = epoch_digest(sr, e, &nr);
        if (hr != hl) fprintf(stderr, "  epoch %u: %s\n", (unsigned)e, recio_split_errmsg(sr));
        CHECK(hl != 0 && nl > 20 && hr == hl && nr == nl);
    }
    recio_split_close(sl);
    recio_split_close(sr);
}

/* From a split's second epoch on, the next epoch's first range is asked before the epoch ends
   (recio__rm_wrap), and the next epoch starts from it: part rank of nsplit of w.rec through the
   HTTP proxy, delay_ms late (30: a far server, whose ranges stream whole; 0: a near one). The proxy
   counts the GETs from the part's first byte as they come: two in the second epoch (its own, after
   the reset, and the third epoch's), then one an epoch (the next one's; none after the reset).
   Without it, one an epoch. Every epoch's records are the local split's. */
static void next_epoch_early(unsigned rank, unsigned nsplit, int delay_ms) {
    char uri[1024], local[1024], q[128], msg[RECIO_ERRMSG_SIZE];
    recio_split *sr = NULL, *sl = NULL;
    recio_split_desc d;
    recio_split_info si;
    long seen[4];
    int e;
    snprintf(uri, sizeof uri, "%s/w.rec", PROXY_HTTP);
    snprintf(local, sizeof local, "%s/w.rec", WWW);
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK(recio_split_open_desc(&sl, local, rank, nsplit, &d) == RECIO_OK);
    CHECK(sl && recio_split_query(sl, &si) == RECIO_OK);
    if (!sl) return;
    snprintf(q, sizeof q, "delay_ms=%d&watch=%llu", delay_ms, (unsigned long long)si.begin);
    faults(PROXY_HTTP, q);
    if (recio_split_open_desc(&sr, uri, rank, nsplit, &d) != RECIO_OK) fprintf(stderr, "  %s\n", msg);
    CHECK(sr != NULL);
    for (e = 0; sr && e < 4; e++) {
        size_t nl, nr;
        recio_err endl, endr; /* the first epoch without a reset: from the second reset on, ranges wrap */
        uint64_t hl = e ? epoch_digest(sl, (uint64_t)e, &nl) : split_hash(sl, &nl, &endl);
        uint64_t hr = e ? epoch_digest(sr, (uint64_t)e, &nr) : split_hash(sr, &nr, &endr);
        if (!e && (endl != RECIO_END || endr != RECIO_END)) hl = 0;
        if (hr != hl) fprintf(stderr, "  epoch %d: %s\n", e, recio_split_errmsg(sr));
        CHECK(hl != 0 && nl > 100 && hr == hl && nr == nl);
        seen[e] = settled(stat_of, PROXY_HTTP, "watched"); /* under load a range asked before an epoch's end was counted after it */
    }
    fprintf(stderr, "  part %u of %u from byte %llu, %d ms a request: ranges from it asked by each epoch's end: %ld %ld %ld %ld\n",
            rank, nsplit, (unsigned long long)si.begin, delay_ms, seen[0], seen[1], seen[2], seen[3]);
    CHECK(seen[1] == seen[0] + 2 && seen[2] == seen[1] + 1 && seen[3] == seen[2] + 1);
    recio_split_close(sr);
    recio_split_close(sl);
    faults(PROXY_HTTP, "");
}

/* A far server's ranges are held whole (8 MiB): through an allocator that gives no block over 2
   MiB, a split over w.rec 30 ms away reads its first epoch whole (the open's ranges, asked before
   the server was known to be far, cannot grow and pause as a near server's do), and the second,
   whose ranges need 8 MiB, fails at its start, naming the URI, the offset and "out of memory".
   Every record before is the local split's. */
static void test_range_no_memory(void) {
    char uri[1024], local[1024], msg[RECIO_ERRMSG_SIZE];
    recio_split *sr = NULL, *sl = NULL;
    recio_split_desc d;
    recio_record a, b;
    counted c = {0, 0, 2u << 20};
    recio_err er = RECIO_OK;
    size_t n = 0, wrong = 0;
    const char *m;
    int e;
    snprintf(uri, sizeof uri, "%s/w.rec", PROXY_HTTP);
    snprintf(local, sizeof local, "%s/w.rec", WWW);
    faults(PROXY_HTTP, "delay_ms=30");
    memset(&d, 0, sizeof d);
    d.errmsg = msg;
    CHECK(recio_split_open_desc(&sl, local, 0, 1, &d) == RECIO_OK);
    d.alloc.alloc = counted_alloc, d.alloc.free = counted_free, d.alloc.user = &c;
    if (recio_split_open_desc(&sr, uri, 0, 1, &d) != RECIO_OK) fprintf(stderr, "  %s\n", msg);
    CHECK(sr != NULL && sl != NULL);
    for (e = 0; e < 2 && sl && sr; e++) {
        CHECK(!e || (recio_split_reset(sl, 1) == RECIO_OK && recio_split_reset(sr, 1) == RECIO_OK));
        for (n = 0; (er = recio_split_next(sr, &b)) == RECIO_OK; n++)
            wrong += recio_split_next(sl, &a) != RECIO_OK || a.size != b.size || memcmp(a.data, b.data, a.size);
        if (!e) CHECK(er == RECIO_END && n == 3000 && wrong == 0);
    }
    m = sr ? recio_split_errmsg(sr) : "";
    fprintf(stderr, "  (as expected) %zu records, then: %s\n", n, m);
    CHECK(er != RECIO_OK && er != RECIO_END && wrong == 0 && n == 0);
    CHECK(strstr(m, "/w.rec: offset 0: ") && strstr(m, "out of memory"));
    recio_split_close(sr);
    recio_split_close(sl);
    CHECK(c.live == 0);
    faults(PROXY_HTTP, "");
}

static void test_next_epoch_early(void) {
    next_epoch_early(0, 1, 0);
    next_epoch_early(0, 1, 30);
    next_epoch_early(1, 2, 0);
}

/* A reader that steps back a little (the split's scan for a record overlaps its 16 KiB windows by 4
   bytes) gets the bytes again without a new request. Bytes the reader waited for go straight into
   its buffer, and each step back behind them used to start a new range, cancelling the one in
   flight and closing its connection (35 requests to find one record). Through the proxy with a
   delay, so that the reader waits at the start of the range ahead. The bytes are the file's. */
/* n bytes at `at` through io (a read may give less than asked: what came so far), equal to want's. */
static int read_at(recio_io *io, uint64_t at, unsigned char *got, size_t n, const unsigned char *want) {
    size_t done = 0;
    int64_t k = 1;
    if (io->seek(io->user, at)) return 0;
    while (done < n && (k = io->read(io->user, got + done, n - done)) > 0) done += (size_t)k;
    if (done < n) fprintf(stderr, "  at %llu: %s\n", (unsigned long long)at, io->error ? io->error(io->user) : "short");
    return done == n && !memcmp(got, want + at, n);
}

static void test_step_back(void) {
    static unsigned char got[1 << 16];
    unsigned char *want;
    char uri[1024], why[RECIO_ERRMSG_SIZE], path[600];
    recio_io io;
    size_t n, i;
    long requests;
    int ok = 1;
    snprintf(path, sizeof path, "%s/b.rec", COMPAT);
    want = t_slurp(path, &n);
    CHECK(want && n > 600000);
    if (!want) return;
    snprintf(uri, sizeof uri, "%s/compat/b.rec", PROXY_HTTP);
    faults(PROXY_HTTP, "delay_ms=30");
    CHECK(open_remote(uri, &io, why) == RECIO_OK);
    if (!io.read) {
        free(want);
        return;
    }
    /* from the first byte after the open's range, in 16 KiB windows overlapping by 4, as the scan */
    for (i = 0; i < 8 && ok; i++) {
        uint64_t at = 262144 + i * (16384 - 4);
        ok = read_at(&io, at, got, 16384, want);
    }
    CHECK(ok);
    requests = stat_of(PROXY_HTTP, "requests");
    fprintf(stderr, "  8 windows stepping back 4 bytes each: %ld requests\n", requests);
    CHECK(requests >= 2 && requests <= 3); /* the open's two ranges (and one ahead) */
    io.close(io.user);
    free(want);
    /* a record here and there, past the open's two ranges (768 KiB), from a new open: one range each
       (four were started for each, and at the first read ranges from the open's end on, none read) */
    want = t_slurp(PHOTOS, &n);
    CHECK(want && n > 1200000);
    if (!want) return;
    snprintf(uri, sizeof uri, "%s/photos.rec", PROXY_HTTP);
    CHECK(open_remote(uri, &io, why) == RECIO_OK);
    if (!io.read) {
        free(want);
        return;
    }
    faults(PROXY_HTTP, "delay_ms=30");
    for (i = 0; i < 4 && ok; i++) {
        uint64_t at = 1150000 - i * 100000;
        ok = read_at(&io, at, got, 16384, want);
    }
    CHECK(ok);
    requests = stat_of(PROXY_HTTP, "requests");
    fprintf(stderr, "  4 reads far apart: %ld requests\n", requests);
    CHECK(requests == 4);
    io.close(io.user);
    free(want);
    faults(PROXY_HTTP, "delay_ms=0");
}

/* The iterator with --rotate reads another part each epoch, so it opens a new split each epoch: the
   connections of the first serve the next (they belong to the iterator, not to one split), and the
   batches are the local ones. Eight epochs used to take new connections each (42 here); now the
   count does not grow with the epochs: two files open at once at most (the split's, and the
   iterator's own reader of single records), each with a range or two in flight (4 to 6 here). */
static void iter_connections_kept(void) {
    static char local[1 << 16], remote[1 << 16];
    const char *opt = "--spec 'resize(16,12) chw' --batch 3 --nsplit 2 --rank 1 --rotate --epochs 8 --seed 1";
    char args[3000];
    size_t requests, conns;
    long from;
    snprintf(args, sizeof args, "iter %s/../photos.rec %s", S3DIR, opt);
    CHECK(run_out(args, local, sizeof local) == 0 && strlen(local) > 100);
    from = nginx_log_end();
    snprintf(args, sizeof args, "iter %s/photos.rec %s", HTTP, opt);
    CHECK(run_out(args, remote, sizeof remote) == 0 && strcmp(local, remote) == 0);
    nginx_requests(from, NULL, &requests, &conns);
    fprintf(stderr, "  iterator, 8 epochs with --rotate: %zu requests over %zu connections\n", requests, conns);
    CHECK(requests >= 8 && requests <= 88); /* a few per epoch (71 here): no range started again and again */
    CHECK(conns >= 1 && conns <= 8);
}

static void test_connections_kept(void) {
    const char *https = getenv("RECIO_TEST_HTTPS"), *ca = getenv("RECIO_TEST_CA");
    CHECK(getenv("RECIO_TEST_NGINX_LOG") != NULL);
    connections_kept(HTTP, "http");
    iter_connections_kept();
    if (!https || !ca) {
        t_skip(getenv("RECIO_TEST_HTTPS_SKIP") ? getenv("RECIO_TEST_HTTPS_SKIP") : "no HTTPS server", 1);
        return;
    }
    no_ca_vars();
    setenv("AWS_CA_BUNDLE", ca, 1);
    connections_kept(https, "https");
    no_ca_vars();
}

static void test_https(void) {
    static const unsigned NS[] = {1, 2, 3, 5};
    const char *https = getenv("RECIO_TEST_HTTPS"), *ca = getenv("RECIO_TEST_CA");
    char uri[1024], local[512], list[2048], args[2048], out[1 << 16], err[4096];
    digest l, r;
    int i, k;
    if (!https || !ca) {
        t_skip(getenv("RECIO_TEST_HTTPS_SKIP") ? getenv("RECIO_TEST_HTTPS_SKIP") : "no HTTPS server", 1);
        return;
    }
    /* not trusted: refused, named, no bytes */
    no_ca_vars();
    snprintf(uri, sizeof uri, "%s/compat/a.rec", https);
    r = digest_remote(uri);
    CHECK(r.end == RECIO_ERR_IO && r.n == 0 && strstr(r.msg, uri) == r.msg);
    CHECK(strstr(r.msg, "certificate") != NULL || strstr(r.msg, "SSL") != NULL);
    fprintf(stderr, "  (as expected, untrusted) %s\n", r.msg);
    /* trusted through CURL_CA_BUNDLE: every golden file reads as locally */
    setenv("CURL_CA_BUNDLE", ca, 1);
    for (i = 0; i < 4; i++) {
        snprintf(uri, sizeof uri, "%s/compat/%s", https, FILES[i]);
        l = digest_local(FILES[i]);
        r = digest_remote(uri);
        if (r.end != RECIO_END) fprintf(stderr, "  %s: %s\n", uri, r.msg);
        CHECK(r.end == RECIO_END && r.n == l.n && r.h == l.h && l.n > 0);
    }
    /* through AWS_CA_BUNDLE (what S3 tools read), the split's parts: dmlc-core's, as locally */
    no_ca_vars();
    setenv("AWS_CA_BUNDLE", ca, 1);
    snprintf(local, sizeof local, "%s/a.rec;%s/b.rec;%s/c.rec", COMPAT, COMPAT, COMPAT);
    snprintf(list, sizeof list, "%s/compat/a.rec;%s/compat/b.rec;%s/compat/c.rec", https, https, https);
    for (i = 0; i < 4; i++)
        for (k = 0; k < (int)NS[i]; k++) {
            size_t nl, nr;
            recio_err el, er;
            uint64_t hl = split_digest(local, (unsigned)k, NS[i], 0, 1, &nl, &el);
            uint64_t hr = split_digest(list, (unsigned)k, NS[i], 1, 1, &nr, &er);
            CHECK(el == RECIO_END && er == RECIO_END && nr == nl && hr == hl);
        }
    /* the command, through SSL_CERT_FILE: recio split gives the local part's lines */
    no_ca_vars();
    setenv("SSL_CERT_FILE", ca, 1);
    snprintf(args, sizeof args, "split --nsplit 3 --rank 2 '%s/compat/b.rec'", https);
    CHECK(run_out(args, out, sizeof out) == 0 && strlen(out) > 0);
    {
        static char want[1 << 16];
        snprintf(args, sizeof args, "split --nsplit 3 --rank 2 '%s/b.rec'", COMPAT);
        CHECK(run_out(args, want, sizeof want) == 0);
        CHECK(same_but_names(want, out));
    }
    no_ca_vars();
    snprintf(args, sizeof args, "verify '%s/compat/b.rec'", https);
    CHECK(run_err(args, err, sizeof err) == 1 && strstr(err, "/compat/b.rec: offset 0: cannot open") != NULL);
}

/* A URL's user:password@ and its query (a presigned URL's signature) never reach a message: the
   reader's at open and mid-read, and the CLI's over the split, the iterator and every command that
   reads; only the host and path are named. */
#define SECRETS "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDSECRETCRED%%2F20261127&X-Amz-Signature=deadbeef1234"
static int leaks(const char *m) {
    return strstr(m, "pa55word") || strstr(m, "deadbeef1234") || strstr(m, "AKIDSECRETCRED") || strstr(m, "X-Amz-") ||
           strstr(m, "someone:");
}

static void test_no_secret_in_messages(void) {
    static const char *const cmds[] = {"verify '%s'", "dump '%s'", "split --nsplit 1 --rank 0 '%s'", "split --nsplit 2 --rank 1 '%s;%s'",
                                       "iter '%s' --spec 'resize(8,8) chw' --batch 2", "show '%s' /dev/null",
                                       "index -o /dev/null '%s'", "salvage '%s' /nonexistent/x.rec",
                                       "mean '%s' --spec 'resize(8,6) float chw' -o /dev/null", "unpack '%s' /tmp"};
    char missing[1024], there[1024], args[4096], err[4096], msg[RECIO_ERRMSG_SIZE];
    recio_reader_desc rd;
    recio_reader *r = NULL;
    recio_record rec;
    size_t i;
    int rc;
    { /* the rule itself: each URL in a text, any case; s3:// and plain paths as they are */
        static const char *const cases[][2] = {
            {"HTTPS://u:p@h:8443/a/b.rec?X-Amz-Signature=1#f: offset 3: x", "HTTPS://h:8443/a/b.rec: offset 3: x"},
            {"is the input http://h/x.rec?sig=2 (the same file)", "is the input http://h/x.rec (the same file)"},
            {"a http://u@h/y and https://h/z?q: then", "a http://h/y and https://h/z: then"},
            {"s3://b/k?x: offset 0: /tmp/a?b", "s3://b/k?x: offset 0: /tmp/a?b"},
            {"http://h", "http://h"}};
        char t[200];
        for (i = 0; i < sizeof cases / sizeof *cases; i++) {
            snprintf(t, sizeof t, "%s", cases[i][0]);
            recio_redact(t);
            if (strcmp(t, cases[i][1])) fprintf(stderr, "  recio_redact: '%s' gave '%s'\n", cases[i][0], t);
            CHECK(strcmp(t, cases[i][1]) == 0);
        }
    }
    snprintf(missing, sizeof missing, "http://someone:pa55word@%s/compat/missing.rec?" SECRETS, HTTP + 7);
    snprintf(there, sizeof there, "http://someone:pa55word@%s/photos.rec?" SECRETS, PROXY_HTTP + 7);
    memset(&rd, 0, sizeof rd);
    rd.errmsg = msg;
    CHECK(recio_reader_open_desc(&r, missing, &rd) == RECIO_ERR_IO && !r);
    CHECK(strstr(msg, "/compat/missing.rec: offset 0: ") && strstr(msg, "HTTP 404"));
    if (leaks(msg)) fprintf(stderr, "  leaked: %s\n", msg);
    CHECK(!leaks(msg));
    /* mid-read: the proxy answers 503 from the third range on (the open asks for two) */
    CHECK(recio_reader_open_desc(&r, there, &rd) == RECIO_OK);
    if (r) {
        recio_err e;
        faults(PROXY_HTTP, "status=503&count=1000&methods=GET");
        while ((e = recio_reader_next(r, &rec)) == RECIO_OK) {}
        CHECK(e == RECIO_ERR_IO && strstr(recio_reader_errmsg(r), "/photos.rec: offset ") != NULL);
        if (leaks(recio_reader_errmsg(r))) fprintf(stderr, "  leaked: %s\n", recio_reader_errmsg(r));
        CHECK(!leaks(recio_reader_errmsg(r)));
        recio_reader_close(r);
        faults(PROXY_HTTP, "");
    }
    for (i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        snprintf(args, sizeof args, cmds[i], missing, missing);
        rc = run_err(args, err, sizeof err);
        if (rc != 1 || !strstr(err, "/compat/missing.rec")) fprintf(stderr, "  recio %.40s...: exit %d: %s", cmds[i], rc, err);
        CHECK(rc == 1 && strstr(err, "/compat/missing.rec") != NULL);
        if (leaks(err)) fprintf(stderr, "  recio %.40s...: leaked: %s", cmds[i], err);
        CHECK(!leaks(err));
    }
    faults(PROXY_HTTP, "status=503&count=1000&methods=GET");
    snprintf(args, sizeof args, "verify '%s'", there);
    CHECK(run_err(args, err, sizeof err) == 1 && strstr(err, "HTTP 503") != NULL);
    if (leaks(err)) fprintf(stderr, "  recio verify: leaked: %s", err);
    CHECK(!leaks(err));
    faults(PROXY_HTTP, "");
}

int main(void) {
    size_t i;
    S3 = getenv("RECIO_TEST_S3"), HTTP = getenv("RECIO_TEST_HTTP"), WWW = getenv("RECIO_TEST_WWW");
    PROXY_S3 = getenv("RECIO_TEST_PROXY_S3"), PROXY_HTTP = getenv("RECIO_TEST_PROXY_HTTP"), S3DIR = getenv("RECIO_TEST_S3_DIR");
    if (!S3 || !HTTP || !PROXY_S3 || !PROXY_HTTP || !WWW || !S3DIR) {
        fprintf(stderr, "test_remote: run it through tests/test_remote.sh (it starts the servers)\n");
        t_failed++;
        return t_done("test_remote");
    }
    big = (unsigned char *)malloc(big_n);
    for (i = 0; i < big_n; i++) big[i] = (unsigned char)(t_rand() >> 7);
    use_default();
    RUN(test_read_both_servers);
    RUN(test_split_both_servers);
    RUN(test_multipart_write_read);
    RUN(test_writer_records);
    RUN(test_write_failure_aborts);
    RUN(test_writer_path);
    RUN(test_writer_path_copied);
    RUN(test_index_save_s3);
    RUN(test_http_read_only);
    RUN(test_list);
    RUN(test_iter_photos);
    RUN(test_cli_outputs);
    RUN(test_faults_read);
    RUN(test_no_wrong_record);
    RUN(test_credentials);
    RUN(test_https);
    RUN(test_connections_kept);
    RUN(test_kept_split_epochs);
    RUN(test_next_epoch_early);
    RUN(test_range_no_memory);
    RUN(test_step_back);
    RUN(test_no_secret_in_messages);
    free(big);
    return t_done("test_remote");
}
