/* bench_remote: reading a .rec from object storage and HTTP on loopback (page cache warm), through a
   split with nsplit 1, every record's bytes touched. In interleaved rounds (each row timed once per
   round, rows in turn, so drift of this shared machine falls on all of them alike):
     local    the same file through the split from disk
     nginx    http://127.0.0.1 (nginx)                          ratio to local        (issue: >= 0.8x)
              (these two, the proxy rows, nginx https and socket split: as training reads, a split
              per round whose first epoch is not timed, then RUN_EPOCHS epochs back to back, timed
              together; the other rows time a new split's one epoch, as their base rows start a
              new transfer)
     s3rver   s3:// on s3rver, SigV4-signed                     ratio to curl whole   (issue: >= 0.9x)
     curl     `curl -o /dev/null` of the same object from s3rver, whole, signed: the server's own speed
     proxy+0   s3:// through the tests' fault proxy, no fault   (the proxy's own speed)
     proxy+20  the same with 20 ms added before every request   ratio to proxy+0      (issue: >= 0.8x)
     curl nginx  `curl -o /dev/null` of the file whole from nginx (the tool: its exec and start-up
                 are in the time, ~10-50 ms under load: this row understates loopback HTTP)
     libcurl nginx  the file whole from nginx by libcurl in this process, one connection kept
                 across rounds, bytes dropped: what loopback HTTP gives here
     libcurl copy   the same, each byte copied once into a 1 MiB buffer (as into a reader's): the
                 ceiling for any reader through libcurl, whose bytes come through its write callback
                                                                ratio to local
     socket split   the local row's split, through a filesystem of this program's own (sock://) whose
                 read is recv() from one plain GET of the whole file, straight into the reader's
                 buffer: no libcurl, ranges, retries or ETags. The ceiling of any reader on this
                 machine and server (a fresh connection per epoch, as the nginx row asks anew)
                                                                ratio to local
     read bytes  the file read() whole into a 1 MiB buffer, a byte of each 4 KiB touched: no split, no
                 parse (the local row's bytes alone)
     recv bytes  the same bytes from nginx: one plain GET over a bare socket, the body recv()ed into a
                 1 MiB buffer and touched alike. Against read bytes: what loopback TCP gives on this
                 machine against the page cache, the bound of any HTTP reader (nginx's sendfile and
                 the kernel's TCP path share these cores with the reader)
                                                                ratio to read bytes
     nginx https  the nginx row over TLS (servers.py's self-signed certificate, trusted through
                 AWS_CA_BUNDLE)                                  ratio to nginx
     shards http  the same records cut into 50 shards (SHARDS), read through one split over the
                 ';' list of their http:// URLs: an open per shard, so what connections cost shows
     shards https the shards over TLS                          ratio to shards http
     iter local  the iterator with the train chain (ITER_SPEC, batch 32, 2 workers) over the local file,
                 ITER_EPOCHS epochs of one iterator as training runs it (its open, 1-2 ms here, and
                 5-10 ms over nginx, is in the time): MB/s of the file read, as in the rows above
     iter nginx  the same over the nginx URL                   ratio to iter local   (issue: >= 0.95x)
   Medians and the spread (min..max) of the rounds, in MB/s. The servers are started for the run by
   tests/remote/servers.py on 127.0.0.1 (this program runs itself under it when started alone).
   Usage: bench_remote [FILE.rec [ROUNDS]]   (default build/bench-data/imagenet1k.rec, 7 rounds)
   RECIO_BENCH_ROWS=0,1,8,9,10 times only those rows (a row's ratio needs its base row). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <curl/curl.h>

#define ROWS 17
#define ITER_EPOCHS 3
#define RUN_EPOCHS 3 /* the rows read as training reads: epochs of one split, back to back */
#define ITER_SPEC "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw"
#define SHARDS 50
static const char *NAMES[ROWS] = {"local", "nginx", "s3rver", "curl whole", "proxy+0", "proxy+20ms", "curl nginx", "libcurl nginx",
                                  "nginx https", "shards http", "shards https", "iter local", "iter nginx", "libcurl copy", "socket split",
                                  "read bytes", "recv bytes"};
static const char *S3, *HTTP, *PROXY, *WWW, *HTTPS;
static CURL *keep; /* libcurl nginx: one handle, so its connection is kept between rounds */
static volatile uint64_t sink;

/* socket split: a read-only filesystem over bare HTTP/1.1 on loopback ("sock://127.0.0.1:PORT/KEY"),
   the least a reader can do to take a file from a web server. It sends one GET (with a Range from the
   position after a seek), reads its headers, and then recv()s the body into the caller's buffer. */
typedef struct sock_file {
    int fd;
    uint64_t pos, size;
    char addr[256], head[16384]; /* head: the answer's headers, and body bytes that came with them */
    size_t hn, hi;
} sock_file;

static int sock_get(sock_file *f, uint64_t off) {
    struct sockaddr_in a;
    char req[1024], *end = NULL, *v;
    const char *slash = strchr(f->addr, '/'), *colon = strchr(f->addr, ':');
    int n;
    long status;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET, a.sin_port = htons((unsigned short)atoi(colon + 1)), a.sin_addr.s_addr = htonl(0x7f000001);
    if ((f->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 || connect(f->fd, (struct sockaddr *)&a, sizeof a)) return -1;
    n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=%llu-\r\nConnection: close\r\n\r\n", slash,
                 (unsigned long long)off);
    if (write(f->fd, req, (size_t)n) != n) return -1;
    for (f->hn = 0; !end;) {
        ssize_t k = recv(f->fd, f->head + f->hn, sizeof f->head - 1 - f->hn, 0);
        if (k <= 0) return -1;
        f->head[f->hn += (size_t)k] = 0;
        end = strstr(f->head, "\r\n\r\n");
    }
    status = f->hn > 12 ? strtol(f->head + 9, NULL, 10) : 0;
    if (status == 200 && off == 0 && (v = strstr(f->head, "Content-Length:")) != NULL) f->size = strtoull(v + 15, NULL, 10);
    else if (status == 206 && (v = strstr(f->head, "Content-Range:")) != NULL && (v = strchr(v, '/')) != NULL) f->size = strtoull(v + 1, NULL, 10);
    else return -1;
    f->hi = (size_t)(end + 4 - f->head), f->pos = off;
    return 0;
}

static int64_t sock_read(void *user, void *buf, size_t n) {
    sock_file *f = (sock_file *)user;
    ssize_t k;
    if (f->hi < f->hn) {
        k = (ssize_t)(n < f->hn - f->hi ? n : f->hn - f->hi);
        memcpy(buf, f->head + f->hi, (size_t)k);
        f->hi += (size_t)k;
    } else if (f->pos >= f->size || (k = recv(f->fd, buf, n, 0)) <= 0) {
        return f->pos >= f->size ? 0 : -1;
    }
    f->pos += (uint64_t)k;
    return k;
}

static int sock_seek(void *user, uint64_t off) {
    sock_file *f = (sock_file *)user;
    if (off == f->pos) return 0;
    close(f->fd), f->fd = -1;
    return sock_get(f, off);
}

static int64_t sock_size(void *user) { return (int64_t)((sock_file *)user)->size; }

static int sock_close(void *user) {
    sock_file *f = (sock_file *)user;
    close(f->fd);
    free(f);
    return 0;
}

static recio_err sock_open(void *user, const char *path, recio_io *io, char *why) {
    sock_file *f = (sock_file *)calloc(1, sizeof *f);
    (void)user;
    if (!f) return RECIO_ERR_NOMEM;
    f->fd = -1;
    snprintf(f->addr, sizeof f->addr, "%s", path + 7);
    if (!strchr(f->addr, '/') || !strchr(f->addr, ':') || sock_get(f, 0)) {
        snprintf(why, RECIO_ERRMSG_SIZE, "no 200 answer over a bare socket");
        if (f->fd >= 0) close(f->fd);
        free(f);
        return RECIO_ERR_IO;
    }
    memset(io, 0, sizeof *io);
    io->read = sock_read, io->seek = sock_seek, io->size = sock_size, io->close = sock_close, io->user = f;
    return RECIO_OK;
}

static const recio_fs SOCK_FS = {"sock", NULL, 0, sock_open, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};

/* Seconds to take path's bytes (a local file, or sock://ADDR/KEY over a bare socket) into a 1 MiB
   buffer, round and round, a byte of each 4 KiB touched. */
static double bytes_only(const char *path) {
    static unsigned char buf[1 << 20];
    sock_file f;
    uint64_t h = 0;
    double t0 = now();
    ssize_t k;
    size_t i;
    memset(&f, 0, sizeof f);
    if (!strncmp(path, "sock://", 7)) {
        snprintf(f.addr, sizeof f.addr, "%s", path + 7);
        if (sock_get(&f, 0)) fprintf(stderr, "bench_remote: no answer over a bare socket\n"), exit(1);
        for (i = f.hi; i < f.hn; i += 4096) h += (unsigned char)f.head[i];
    } else if ((f.fd = open(path, O_RDONLY)) < 0) {
        perror(path), exit(1);
    }
    while ((k = f.size ? recv(f.fd, buf, sizeof buf, 0) : read(f.fd, buf, sizeof buf)) > 0)
        for (i = 0; i < (size_t)k; i += 4096) h += buf[i];
    if (k < 0) perror("bench_remote: bytes"), exit(1);
    close(f.fd);
    sink += h;
    return now() - t0;
}

/* One epoch of s: its records' bytes (a byte of each 4 KiB touched) added to *bytes; exits on an error. */
static void split_epoch(recio_split *s, uint64_t *bytes) {
    recio_record rec;
    uint64_t h = 0;
    recio_err e;
    size_t i;
    while ((e = recio_split_next(s, &rec)) == RECIO_OK) {
        const unsigned char *b = (const unsigned char *)rec.data;
        for (i = 0; i < rec.size; i += 4096) h += b[i];
        *bytes += rec.size;
    }
    if (e != RECIO_END) fprintf(stderr, "bench_remote: %s\n", recio_split_errmsg(s)), exit(1);
    sink += h;
}

/* Seconds an epoch of uri takes through a split (remote: through the filesystem rows), and its bytes.
   epochs 0: a new split's one epoch, its open in the time. Else as training reads: a new split whose
   first epoch is not timed (it pays for fresh memory a page fault per 4 KiB, its range buffers and
   its reader's: that halved a 19 MB read from nginx, 0.6 against 1.4 GB/s here), then `epochs`
   epochs back to back (recio_split_reset), timed together: the time is their mean. A split kept
   from one round to the next read ahead while the other rows ran (the next epoch's first ranges
   come before it ends): its epochs were up to 8 GB/s through 20 ms a request. */
static double split_read(const char *uri, int epochs, uint64_t *bytes) {
    recio_split_desc d;
    recio_split *s = NULL;
    double t0 = now();
    char msg[RECIO_ERRMSG_SIZE];
    int e, timed = epochs ? epochs : 1;
    memset(&d, 0, sizeof d);
    d.errmsg = msg; /* a remote URI goes through the built-in s3/http rows like any path */
    if (!strncmp(uri, "sock://", 7)) d.fs = &SOCK_FS;
    if (recio_split_open_desc(&s, uri, 0, 1, &d) != RECIO_OK) fprintf(stderr, "bench_remote: %s\n", msg), exit(1);
    if (epochs) split_epoch(s, bytes), t0 = now(); /* the untimed first epoch */
    for (e = 0; e < timed; e++) {
        if (epochs && recio_split_reset(s, (uint64_t)e + 1) != RECIO_OK)
            fprintf(stderr, "bench_remote: %s\n", recio_split_errmsg(s)), exit(1);
        *bytes = 0;
        split_epoch(s, bytes);
    }
    t0 = (now() - t0) / timed;
    recio_split_close(s);
    return t0;
}

/* Seconds for ITER_EPOCHS epochs of one iterator over uri with the train chain (decoding dominates:
   the question is whether reading remotely shows). */
static double iter_epoch(const char *uri) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    recio_err e;
    char msg[RECIO_ERRMSG_SIZE];
    double t0 = now();
    int k;
    memset(&d, 0, sizeof d);
    d.uris = uri, d.item.spec = ITER_SPEC, d.run.batch = 32, d.run.workers = 2, d.errmsg = msg;
    if (recio_iter_open(&it, &d) != RECIO_OK) fprintf(stderr, "bench_remote: %s\n", msg), exit(1);
    for (k = 0; k < ITER_EPOCHS; k++) {
        while ((e = recio_iter_next(it, &b)) == RECIO_OK) sink += b.count;
        if (e != RECIO_END || (k + 1 < ITER_EPOCHS && recio_iter_reset(it) != RECIO_OK))
            fprintf(stderr, "bench_remote: %s\n", recio_iter_errmsg(it)), exit(1);
    }
    recio_iter_close(it);
    return now() - t0;
}

static double curl_whole(const char *endpoint, const char *key) {
    char cmd[2048];
    double t0 = now();
    if (!strcmp(endpoint, HTTP)) snprintf(cmd, sizeof cmd, "curl -sSf -o /dev/null '%s/%s'", HTTP, key);
    else snprintf(cmd, sizeof cmd, "curl -sSf -o /dev/null --aws-sigv4 aws:amz:us-east-1:s3 --user '%s:%s' "
                  "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' '%s/bench/%s'", getenv("AWS_ACCESS_KEY_ID"),
                  getenv("AWS_SECRET_ACCESS_KEY"), endpoint, key);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_remote: curl failed\n");
        exit(1);
    }
    return now() - t0;
}

static size_t drop(char *p, size_t size, size_t n, void *user) {
    (void)p, (void)user;
    return size * n;
}

/* The bytes copied once into a 1 MiB buffer, round and round (a reader's buffer, in the cache). */
static size_t copy(char *p, size_t size, size_t n, void *user) {
    static char buf[1 << 20];
    static size_t at;
    size_t k = size * n, i, m;
    (void)user;
    for (i = 0; i < k; i += m, at = (at + m) % sizeof buf) {
        m = k - i < sizeof buf - at ? k - i : sizeof buf - at;
        memcpy(buf + at, p + i, m);
    }
    sink += (unsigned char)buf[at / 2];
    return k;
}

/* Seconds for libcurl to fetch url whole in this process (no exec), bytes dropped or copied once. */
static double libcurl_whole(const char *url, int copied) {
    double t0 = now();
    if (!keep) keep = curl_easy_init();
    curl_easy_setopt(keep, CURLOPT_URL, url);
    curl_easy_setopt(keep, CURLOPT_WRITEFUNCTION, copied ? copy : drop);
    curl_easy_setopt(keep, CURLOPT_BUFFERSIZE, 256L << 10);
    if (curl_easy_perform(keep) != CURLE_OK) fprintf(stderr, "bench_remote: libcurl failed\n"), exit(1);
    return now() - t0;
}

static void proxy_delay(int ms) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "curl -sSf -o /dev/null '%s/__proxy/set?delay_ms=%d'", PROXY, ms);
    if (system(cmd) != 0) exit(1);
}

/* The file into nginx's root and into s3rver (bucket "bench", made here), through recio's own writer. */
static void stage(const char *path, const char *base) {
    size_t n, at;
    unsigned char *b = bench_slurp(path, &n);
    char dst[1024], why[RECIO_ERRMSG_SIZE], cmd[2048];
    const recio_fs *fs;
    recio_fs_out out;
    FILE *f;
    if (!b) fprintf(stderr, "bench_remote: cannot read %s (make bench-data)\n", path), exit(1);
    snprintf(dst, sizeof dst, "%s/%s", WWW, base);
    if (!(f = fopen(dst, "wb")) || fwrite(b, 1, n, f) != n || fclose(f)) exit(1);
    snprintf(cmd, sizeof cmd, "curl -sSf -o /dev/null -X PUT --aws-sigv4 aws:amz:us-east-1:s3 --user '%s:%s' "
             "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' '%s/bench'", getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), S3);
    if (system(cmd) != 0) exit(1);
    snprintf(dst, sizeof dst, "s3://bench/%s", base);
    fs = recio_fs_find(NULL, dst);
    if (!fs || fs->create(fs->user, dst, RECIO_FS_ATOMIC, &out, why) != RECIO_OK) fprintf(stderr, "%s\n", why), exit(1);
    for (at = 0; at < n; at += 1 << 20)
        if (out.io.write(out.io.user, b + at, n - at < (1u << 20) ? n - at : (1u << 20))) exit(1);
    out.io.close(out.io.user);
    if (fs->commit(fs->user, &out.pending, 1, why) != RECIO_OK) fprintf(stderr, "%s\n", why), exit(1);
    free(b);
}

/* The records of path cut into SHARDS files under nginx's root (shards/part-NN.rec), and the ';' list
   of their URLs under base (http or https) into list. */
static void stage_shards(const char *path, const char *base, char *list, size_t cap) {
    recio_reader *r;
    recio_writer *w = NULL;
    recio_record rec;
    size_t n = 0, per, at = 0;
    char dst[1024];
    int k = -1;
    if (recio_reader_open(&r, path) != RECIO_OK) exit(1);
    while (recio_reader_next(r, &rec) == RECIO_OK) n++;
    per = (n + SHARDS - 1) / SHARDS;
    snprintf(dst, sizeof dst, "%s/shards", WWW);
    mkdir(dst, 0755);
    if (recio_reader_seek(r, 0) != RECIO_OK) exit(1);
    for (n = 0; recio_reader_next(r, &rec) == RECIO_OK; n++) {
        if (n % per == 0) {
            if (w && recio_writer_close(w) != RECIO_OK) exit(1);
            snprintf(dst, sizeof dst, "%s/shards/part-%02d.rec", WWW, ++k);
            if (recio_writer_open(&w, dst) != RECIO_OK) exit(1);
            at += (size_t)snprintf(list + at, cap - at, "%s%s/shards/part-%02d.rec", k ? ";" : "", base, k);
            if (at >= cap) exit(1);
        }
        if (recio_writer_write(w, rec.data, rec.size) != RECIO_OK) exit(1);
    }
    if (!w || recio_writer_close(w) != RECIO_OK) exit(1);
    recio_reader_close(r);
}

/* The nginx split's speed against another row's, round by round: the median and spread of the ratios. */
static void nginx_against(const double *split, const double *other, int rounds, const char *name) {
    double ratio[64], lo, hi;
    int r;
    for (r = 0; r < rounds; r++) ratio[r] = other[r] / split[r];
    bench_range(ratio, rounds, &lo, &hi);
    printf("nginx split / %s: %.2fx (median of the rounds' ratios; min..max %.2f..%.2f)\n", name, bench_median(ratio, rounds), lo, hi);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "build/bench-data/imagenet1k.rec", *base;
    int rounds = argc > 2 ? atoi(argv[2]) : 7, r, k;
    double t[ROWS][64], mb[ROWS][64];
    int on[ROWS];
    static char uri[ROWS][8192];
    uint64_t bytes = 0;
    S3 = getenv("RECIO_TEST_S3"), HTTP = getenv("RECIO_TEST_HTTP"), PROXY = getenv("RECIO_TEST_PROXY_S3"), WWW = getenv("RECIO_TEST_WWW");
    HTTPS = getenv("RECIO_TEST_HTTPS");
    if (!S3 || !HTTP || !PROXY || !WWW) { /* alone: run again under the servers */
        char *args[8];
        int i = 0;
        args[i++] = (char *)"/usr/bin/python3", args[i++] = (char *)"tests/remote/servers.py";
        args[i++] = (char *)"build/bench-remote-servers", args[i++] = (char *)"--", args[i++] = argv[0];
        if (argc > 1) args[i++] = argv[1];
        if (argc > 2) args[i++] = argv[2];
        args[i] = NULL;
        execv(args[0], args);
        perror("bench_remote: /usr/bin/python3 tests/remote/servers.py");
        return 1;
    }
    if (rounds < 1 || rounds > 64) rounds = 7;
    for (k = 0; k < ROWS; k++) on[k] = !getenv("RECIO_BENCH_ROWS");
    if (getenv("RECIO_BENCH_ROWS")) {
        const char *p = getenv("RECIO_BENCH_ROWS");
        for (; *p; p += *p == ',') {
            char *e;
            long v = strtol(p, &e, 10);
            if (e == p || v < 0 || v >= ROWS) fprintf(stderr, "bench_remote: RECIO_BENCH_ROWS: rows 0..%d\n", ROWS - 1), exit(2);
            on[v] = 1, p = e;
        }
    }
    setenv("AWS_ACCESS_KEY_ID", "RECIOTESTKEY", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "recio-test-secret/+=", 1);
    setenv("AWS_REGION", "us-east-1", 1);
    base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    setenv("AWS_ENDPOINT_URL", S3, 1);
    stage(path, base);
    snprintf(uri[0], sizeof uri[0], "%s", path);
    snprintf(uri[1], sizeof uri[1], "%s/%s", HTTP, base);
    snprintf(uri[2], sizeof uri[2], "s3://bench/%s", base);
    snprintf(uri[7], sizeof uri[7], "%s/%s", HTTP, base);
    snprintf(uri[8], sizeof uri[8], "%s/%s", HTTPS ? HTTPS : HTTP, base);
    snprintf(uri[14], sizeof uri[14], "sock://%s/%s", strstr(HTTP, "://") + 3, base);
    stage_shards(path, HTTP, uri[9], sizeof uri[9]);
    stage_shards(path, HTTPS ? HTTPS : HTTP, uri[10], sizeof uri[10]);
    unsetenv("CURL_CA_BUNDLE"), unsetenv("SSL_CERT_FILE"); /* the first set of AWS_CA_BUNDLE, CURL_CA_BUNDLE... counts */
    if (HTTPS && getenv("RECIO_TEST_CA")) setenv("AWS_CA_BUNDLE", getenv("RECIO_TEST_CA"), 1);
    split_read(uri[0], 0, &bytes); /* warm: the page cache, the servers' caches */
    split_read(uri[1], 0, &bytes);
    split_read(uri[2], 0, &bytes);
    for (r = 0; r < rounds; r++)
        for (k = 0; k < ROWS; k++) {
            uint64_t n = bytes;
            if (!on[k]) continue;
            setenv("AWS_ENDPOINT_URL", k == 4 || k == 5 ? PROXY : S3, 1);
            if (k == 4 || k == 5) proxy_delay(k == 5 ? 20 : 0);
            if (k == 3 || k == 6) t[k][r] = curl_whole(k == 3 ? S3 : HTTP, base);
            else if (k == 7 || k == 13) t[k][r] = libcurl_whole(uri[7], k == 13);
            else if (k == 15 || k == 16) t[k][r] = bytes_only(uri[k == 15 ? 0 : 14]);
            else if (k == 11 || k == 12) t[k][r] = iter_epoch(uri[k == 11 ? 0 : 1]);
            else if (k == 0 || k == 1 || k == 4 || k == 5 || k == 8 || k == 14)
                t[k][r] = split_read(k == 4 || k == 5 ? uri[2] : uri[k], RUN_EPOCHS, &n);
            else t[k][r] = split_read(k == 4 || k == 5 ? uri[2] : uri[k], 0, &n);
            mb[k][r] = (double)bytes * (k == 11 || k == 12 ? ITER_EPOCHS : 1) / t[k][r] / 1e6;
        }
    proxy_delay(0);
    printf("bench_remote: %s, %.1f MB, split nsplit 1, %d interleaved rounds, loopback, page cache warm\n", path, (double)bytes / 1e6,
           rounds);
    printf("%-12s %10s %22s %8s %s\n", "row", "MB/s", "min..max", "ratio", "to");
    for (k = 0; k < ROWS; k++) {
        double lo, hi, ratio[64], m;
        int base_row = k == 1 ? 0 : k == 2 ? 3 : k == 5 ? 4 : k == 8 ? 1 : k == 10 ? 9 : k == 12 ? 11 : k == 13 || k == 14 ? 0 : k == 16 ? 15 : -1;
        if (!on[k]) continue;
        if (base_row >= 0 && !on[base_row]) base_row = -1;
        bench_range(mb[k], rounds, &lo, &hi);
        for (r = 0; r < rounds; r++) ratio[r] = base_row < 0 ? 0 : t[base_row][r] / t[k][r];
        m = bench_median(mb[k], rounds);
        if (base_row < 0) printf("%-12s %10.1f %10.1f..%-10.1f\n", NAMES[k], m, lo, hi);
        else printf("%-12s %10.1f %10.1f..%-10.1f %7.2fx %s\n", NAMES[k], m, lo, hi, bench_median(ratio, rounds), NAMES[base_row]);
    }
    if (on[1] && on[6]) nginx_against(t[1], t[6], rounds, "curl nginx whole");
    if (on[1] && on[7]) nginx_against(t[1], t[7], rounds, "libcurl nginx whole");
    if (on[1] && on[13]) nginx_against(t[1], t[13], rounds, "libcurl copy");
    if (on[1] && on[14]) nginx_against(t[1], t[14], rounds, "socket split");
    return (int)(sink & 0);
}
