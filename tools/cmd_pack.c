/* recio pack: im2rec in C. Reads a .lst, turns every listed image into an MXNet image record (IRHeader,
   labels, encoded image) and writes PREFIX.rec and PREFIX.idx atomically. N workers decode, resize and
   encode in parallel; the calling thread writes the records in list order, so the output is the same
   bytes for every worker count. A bad image never stops the job: it is reported, counted, listed in
   PREFIX.skipped, and skipped. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "pack.h"
#include "pack_codec.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- one image -> one record ------------------------------------------------------------------- */

typedef struct pack_opts {
    int resize, center_crop, quality, png, color, pass_through, pack_label, exif, strict, quiet, force;
    const char *mask_root; /* segmentation: the list's last field is a mask under this folder */
    const cli_out *outs;   /* the outputs that exist now (an image read must be none of them), nouts */
    size_t nouts;
    recio_filter filter;
    unsigned long long threads;
} pack_opts;

typedef struct pack_result {
    unsigned char *rec; /* the record payload, NULL when skipped */
    size_t n;
    int fatal;          /* an input is an output: the pack stops */
    char why[256];      /* reason when skipped or stopped */
} pack_result;

/* An image read that is one of the existing outputs (PREFIX.rec listed, or linked): the pack would
   write over its own input; -1 with the reason in r. */
static int is_output(const char *path, const pack_opts *o, pack_result *r) {
    size_t i;
    for (i = 0; i < o->nouts; i++)
        if (cli_out_is(&o->outs[i], path))
            return snprintf(r->why, sizeof r->why, "is %s, an output of this pack (the same file): never packed over", o->outs[i].path), -1;
    return 0;
}

static size_t put_header(unsigned char *dst, const recio_lst_item *it, const pack_opts *o) {
    return recio_irecord_pack_header(dst, it->labels, o->pack_label ? it->nlabels : 1, it->index, 0);
}

static size_t header_size(const recio_lst_item *it, const pack_opts *o) { return put_header(NULL, it, o); }

/* dims: the image's stored width and height, then its packed ones (for its mask). */
static int transcode(const unsigned char *src, size_t n, const recio_lst_item *it, const pack_opts *o, pack_result *r, int dims[4]) {
    recio_image img;
    int bad;
    if (codec_probe(src, n, r->why, sizeof r->why)) return -1;
    /* a mask labels the stored pixels: EXIF's turn would leave it behind */
    if (codec_decode(src, n, o->color == 1 ? 3 : o->color == 0 ? 1 : 0, o->exif && !o->mask_root, &img, r->why, sizeof r->why)) return -1;
    dims[0] = img.width, dims[1] = img.height;
    bad = o->center_crop && codec_center_square(&img);
    bad = bad || (o->resize && codec_resize_short(&img, o->resize, o->filter));
    dims[2] = img.width, dims[3] = img.height;
    bad = bad || codec_encode(&img, o->png, o->quality, header_size(it, o), &r->rec, &r->n);
    recio_image_free(&img);
    if (bad) return snprintf(r->why, sizeof r->why, "cannot resize or encode (out of memory?)"), -1;
    put_header(r->rec, it, o);
    return 0;
}

/* A mask resized by nearest neighbour with the rule recio_apply_desc.mask uses: output pixel x
   takes source pixel floor((x + 0.5) * sw / w), computed in integers. Labels are never blended. */
static int mask_nearest(recio_image *m, int w, int h) {
    recio_image o;
    int x, y;
    if (recio_image_alloc(&o, w, h, 1, RECIO_U8, RECIO_HWC, NULL) != RECIO_OK) return -1;
    for (y = 0; y < h; y++) {
        const unsigned char *s = (const unsigned char *)m->data + (size_t)((2 * (long long)y + 1) * m->height / (2 * (long long)h)) * m->stride;
        unsigned char *d = (unsigned char *)o.data + (size_t)y * o.stride;
        for (x = 0; x < w; x++) d[x] = s[(2 * (long long)x + 1) * m->width / (2 * (long long)w)];
    }
    recio_image_free(m);
    *m = o;
    return 0;
}

/* The mask's PNG for an image stored dims[0] x dims[1] and packed dims[2] x dims[3]: the file's own
   bytes when the size is kept (an 8-bit grey or a palette PNG: recio_decode_desc.mask's rule, which the
   iterator reads them by), else its labels cropped and resized as the image was and encoded again
   as a grey PNG (lossless either way). */
static int mask_png(unsigned char *src, size_t n, const int dims[4], const pack_opts *o, unsigned char **png, size_t *pn, char *why, size_t cap) {
    recio_image m;
    int bad;
    if (codec_mask(src, n, &m, why, cap) != RECIO_OK) { /* "mask: why": the caller names the mask */
        if (!strncmp(why, "mask: ", 6)) memmove(why, why + 6, strlen(why + 6) + 1);
        return -1;
    }
    if (m.width != dims[0] || m.height != dims[1]) {
        snprintf(why, cap, "%dx%d, the image is %dx%d", m.width, m.height, dims[0], dims[1]);
        return recio_image_free(&m), -1;
    }
    if (dims[0] == dims[2] && dims[1] == dims[3]) {
        recio_image_free(&m);
        *png = src, *pn = n;
        return 0;
    }
    bad = o->center_crop && codec_center_square(&m);
    bad = bad || mask_nearest(&m, dims[2], dims[3]) || codec_encode(&m, 1, 9, 0, png, pn);
    recio_image_free(&m);
    if (bad) snprintf(why, cap, "cannot resize or encode (out of memory?)");
    return bad ? -1 : 0;
}

/* Segmentation: the record gets the mask and its tail (recio.h, section 3); on failure the record
   is dropped with the reason, as for a bad image. */
static void add_mask(const recio_lst_item *it, const pack_opts *o, const int dims[4], pack_result *r) {
    char *path = pack_join(o->mask_root, it->mask ? it->mask : ""), why[200] = "";
    unsigned char *src = NULL, *png = NULL, *rec = NULL;
    size_t n = 0, pn = 0;
    if (path && o->nouts && is_output(path, o, r)) { /* r->why says which */
        free(r->rec), free(path);
        r->rec = NULL, r->fatal = 1;
        return;
    }
    if (!path || pack_read_file(path, &src, &n)) snprintf(why, sizeof why, "cannot read: %s", strerror(errno));
    else if (!mask_png(src, n, dims, o, &png, &pn, why, sizeof why) && !(rec = (unsigned char *)realloc(r->rec, r->n + pn + RECIO_MASK_TAIL_SIZE)))
        snprintf(why, sizeof why, "out of memory");
    if (rec) {
        memcpy(rec + r->n, png, pn);
        recio_irecord_mask_tail(rec + r->n + pn, pn);
        r->rec = rec, r->n += pn + RECIO_MASK_TAIL_SIZE;
    } else {
        free(r->rec);
        r->rec = NULL;
        snprintf(r->why, sizeof r->why, "mask %s: %s", path ? path : it->mask, why);
    }
    if (png != src) free(png);
    free(src);
    free(path);
}

static void pack_one(const char *root, const recio_lst_item *it, const pack_opts *o, pack_result *r) {
    char *path = pack_join(root, it->path);
    unsigned char *src = NULL;
    size_t n = 0;
    int dims[4] = {0, 0, 0, 0}, c;
    memset(r, 0, sizeof *r);
    if (!path || pack_read_file(path, &src, &n)) {
        snprintf(r->why, sizeof r->why, "cannot read: %s", strerror(errno));
    } else if (o->nouts && is_output(path, o, r)) {
        r->fatal = 1;
    } else if (o->pass_through) {
        size_t h = header_size(it, o);
        if (codec_probe(src, n, r->why, sizeof r->why)) {
            /* skipped with the library's words */
        } else if ((r->rec = (unsigned char *)malloc(h + n)) == NULL) {
            snprintf(r->why, sizeof r->why, "out of memory");
        } else {
            put_header(r->rec, it, o);
            memcpy(r->rec + h, src, n);
            r->n = h + n;
            recio_image_info(src, n, &dims[0], &dims[1], &c);
            dims[2] = dims[0], dims[3] = dims[1];
        }
    } else {
        transcode(src, n, it, o, r, dims);
    }
    if (r->rec && o->mask_root) add_mask(it, o, dims, r);
    free(src);
    free(path);
}

/* ---- workers: take list positions in order, fill a bounded window of result slots --------------- */

typedef struct pack_pool {
    const recio_lst *lst;
    const char *root;
    const pack_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t can_take, done;
    size_t next_take, next_write, window;
    pack_result *slots; /* item i lives in slots[i % window] while next_write <= i < next_write + window */
    unsigned char *ready;
    int stop;
} pack_pool;

static void *pack_worker(void *arg) {
    pack_pool *p = (pack_pool *)arg;
    for (;;) {
        size_t i;
        pack_result r;
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->next_take < p->lst->count && p->next_take >= p->next_write + p->window)
            pthread_cond_wait(&p->can_take, &p->mu);
        if (p->stop || p->next_take >= p->lst->count) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        i = p->next_take++;
        pthread_mutex_unlock(&p->mu);
        pack_one(p->root, &p->lst->items[i], p->o, &r);
        pthread_mutex_lock(&p->mu);
        p->slots[i % p->window] = r;
        p->ready[i % p->window] = 1;
        pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* The result of item i, waiting for it; frees its slot for the workers. */
static pack_result pack_take(pack_pool *p, size_t i) {
    pack_result r;
    pthread_mutex_lock(&p->mu);
    while (!p->ready[i % p->window]) pthread_cond_wait(&p->done, &p->mu);
    r = p->slots[i % p->window];
    p->ready[i % p->window] = 0;
    p->next_write = i + 1;
    pthread_cond_broadcast(&p->can_take);
    pthread_mutex_unlock(&p->mu);
    return r;
}

/* ---- progress: a bar on a terminal, a plain line every few seconds otherwise ------------------- */

typedef struct progress {
    int tty, quiet;
    double start, last;
    size_t total;
} progress;

/* The terminal's width: the window size of stderr, else $COLUMNS (digits; atoi's overflow is
   undefined), else 80. */
static int terminal_columns(void) {
    struct winsize ws;
    long long n;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return cli_parse_int(getenv("COLUMNS"), 1, 1 << 16, &n) == 0 ? (int)n : 80;
}

static void progress_show(progress *pg, size_t done, int final) {
    double now = pack_now(), el = now - pg->start, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(pg->total - done) / rate : 0;
    int pct = pg->total ? (int)(100.0 * (double)done / (double)pg->total) : 100;
    if (pg->quiet || (!final && now - pg->last < (pg->tty ? 0.1 : 5.0))) return;
    pg->last = now;
    if (pg->tty) { /* one line that fits the terminal, or every redraw wraps and stacks */
        char bar[31], tail[96];
        int i, cols = terminal_columns(), width, fill;
        snprintf(tail, sizeof tail, "%zu/%zu %3d%% %7.1f img/s ETA %d:%02d ", done, pg->total, pct, rate, (int)eta / 60,
                 (int)eta % 60);
        width = cols - 1 - (int)strlen(tail) - 3; /* "[" bar "] " and a column left free */
        if (width > 30) width = 30;
        if ((int)strlen(tail) > cols - 1) tail[cols > 1 ? cols - 1 : 0] = 0;
        if (width >= 5) {
            fill = pct * width / 100;
            for (i = 0; i < width; i++) bar[i] = i < fill ? '#' : '-';
            bar[width] = 0;
            fprintf(stderr, "\r[%s] %s", bar, tail);
        } else {
            fprintf(stderr, "\r%s", tail);
        }
        if (final) fputc('\n', stderr);
    } else if (!final) {
        fprintf(stderr, "recio pack: %zu/%zu (%d%%), %.1f img/s, ETA %.0f s\n", done, pg->total, pct, rate, eta);
    }
}

/* ---- the command ------------------------------------------------------------------------------- */

typedef struct pack_out {
    recio_writer *w;
    cli_out claim[3]; /* .rec, .idx (written by the writer) and .skipped (its lines kept until the commit) */
    const char *lst_path; /* the input, which no output may be */
    char *skipped_path, *rec_path;
    size_t packed, nskipped;
} pack_out;

static int note_skip(pack_out *out, const recio_lst_item *it, const char *root, const pack_result *r, int tty) {
    char *path = pack_join(root, it->path);
    fprintf(stderr, "%srecio: %s: %s\n", tty ? "\r\033[K" : "", path ? path : it->path, r->why); /* over the bar */
    free(path);
    if (r->fatal) return -1;
    out->nskipped++;
    cli_out_printf(&out->claim[2], "%llu\t%s\t%s\n", (unsigned long long)it->index, it->path, r->why);
    return 0;
}

/* One record under its .lst index as the .idx key (im2rec's keys). */
static recio_err write_record(recio_writer *w, uint64_t key, const void *data, size_t size) {
    recio_writer_item item;
    item.data = data, item.size = size, item.key = key;
    return recio_writer_write_batch(w, &item, 1);
}

static int run_pool(const recio_lst *lst, const char *root, const pack_opts *o, pack_out *out) {
    pack_pool p;
    pthread_t th[256];
    size_t i, nth = o->threads, started = 0;
    progress pg;
    int rc = 0;
    memset(&p, 0, sizeof p);
    p.lst = lst, p.root = root, p.o = o;
    p.window = 4 * nth + 4;
    p.slots = (pack_result *)calloc(p.window, sizeof *p.slots);
    p.ready = (unsigned char *)calloc(p.window, 1);
    if (!p.slots || !p.ready) return free(p.slots), free(p.ready), cli_err("out of memory"), -1;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.can_take, NULL);
    pthread_cond_init(&p.done, NULL);
    for (started = 0; started < nth; started++)
        if (pthread_create(&th[started], NULL, pack_worker, &p) != 0) break;
    if (!started) rc = -1, cli_err("cannot start worker threads");
    pg.tty = isatty(2), pg.quiet = o->quiet, pg.start = pg.last = pack_now(), pg.total = lst->count;
    for (i = 0; !rc && i < lst->count; i++) {
        pack_result r = pack_take(&p, i);
        recio_err e;
        if (!r.rec) rc = note_skip(out, &lst->items[i], root, &r, pg.tty && !o->quiet);
        else if ((e = write_record(out->w, lst->items[i].index, r.rec, r.n)) != RECIO_OK)
            rc = -1, cli_err("%s", recio_writer_errmsg(out->w));
        else out->packed++;
        free(r.rec);
        progress_show(&pg, i + 1, 0);
    }
    if (!rc) progress_show(&pg, lst->count, 1);
    pthread_mutex_lock(&p.mu);
    p.stop = 1;
    pthread_cond_broadcast(&p.can_take);
    pthread_mutex_unlock(&p.mu);
    for (i = 0; i < started; i++) pthread_join(th[i], NULL);
    for (i = 0; i < p.window; i++)
        if (p.ready[i]) free(p.slots[i].rec);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.can_take);
    pthread_cond_destroy(&p.done);
    free(p.slots);
    free(p.ready);
    return rc;
}

static const char pack_help[] =
    "usage: recio pack [OPTIONS] PREFIX[.lst] ROOT\n\n"
    "Read PREFIX.lst ('index<TAB>label...<TAB>path' lines, as 'recio list' or im2rec write them), load\n"
    "each image from ROOT/path (an absolute path is taken as it is) and write PREFIX.rec (one MXNet\n"
    "image record each: IRHeader with id = index, the labels, the encoded image) and PREFIX.idx\n"
    "(index<TAB>offset), as im2rec does. They and PREFIX.skipped are written to temporary files and\n"
    "renamed when complete, all three or none. A second pack to a prefix that one is writing stops at\n"
    "once (exit 1).\n"
    "When PREFIX.lst does not exist, PREFIX packs every PREFIX*.lst as im2rec does (PREFIX_train.lst and\n"
    "PREFIX_val.lst after 'list --train-ratio', PREFIX_0.lst ... after '--chunks'), each to its own\n"
    ".rec; a folder packs every .lst in it. Fields are stripped of spaces; a malformed line is\n"
    "reported ('FILE: line N: what'), skipped and counted, and the pack goes on; an index on two lines\n"
    "is warned about.\n\n"
    "  --resize S           shorter side to S pixels, 0..65536 (longer: floor(long*S/short)); 0 = keep\n"
    "                       (default); bilinear, exactly OpenCV's INTER_LINEAR as im2rec uses\n"
    "  --area               resize with the antialiased area filter (OpenCV INTER_AREA) instead\n"
    "  --center-crop        crop the largest centred square first\n"
    "  --quality Q          JPEG quality 1..100 (default 95); with --encoding .png the PNG compression\n"
    "                       level 1..9 (larger values count as 9, as im2rec's OpenCV does)\n"
    "  --encoding E         .jpg (default) or .png\n"
    "  --color C            1 = RGB (default), 0 = gray, -1 = as stored (alpha kept for .png)\n"
    "  --pass-through       copy each file's bytes unchanged (no decode; the header is checked, and\n"
    "                       for JPEG/PNG the end marker)\n"
    "  --pack-label         store every label of a line (flag = count); default: the first label only\n"
    "  --no-exif            do not rotate photos per their EXIF orientation\n"
    "  --mask-root DIR      segmentation: each list line ends with two paths, 'image<TAB>mask' (as\n"
    "                       'recio list --mask-root' writes), the mask under DIR: an 8-bit grey PNG\n"
    "                       or a palette PNG whose indices are the labels (VOC's masks; never their\n"
    "                       colours) of the image's size; other kinds (1- or 16-bit grey, RGB, JPEG)\n"
    "                       skip the record, named. It goes into the record after\n"
    "                       the image (the tail that 'recio unpack' and 'recio show' read; readers\n"
    "                       of plain records still see the image). It is kept byte for byte, or with\n"
    "                       --resize/--center-crop cut and resized as the image by nearest neighbour\n"
    "                       (labels are never blended) and stored as PNG: lossless either way. EXIF\n"
    "                       orientation is not applied then (the mask labels the stored pixels)\n"
    "  --num-thread N       N workers decode/resize/encode, 1..256 (default 1); output is the same for\n"
    "                       any N\n"
    "  --strict             exit 1 when any image or list line was skipped\n"
    "  --quiet              no progress\n\n"
    "  --force              replace existing outputs whatever they hold (see below)\n\n"
    "A missing or empty ROOT, or a run where no image could be packed, is an error (exit 1) that\n"
    "leaves the previous PREFIX.rec and PREFIX.idx as they were. An existing PREFIX.rec, .idx and\n"
    ".skipped are replaced when they hold what pack writes there (RecordIO, an index, a list of\n"
    "skipped images): packing a prefix again rebuilds it. Any other file there stops the pack before\n"
    "it starts unless --force; an output that is the list or one of the images never is written.\n"
    "Images that cannot be read or decoded (empty, truncated, not an image) are skipped with\n"
    "'recio: PATH: why' on stderr and listed in PREFIX.skipped ('index<TAB>path<TAB>why'; the file is\n"
    "written only when something was skipped). Progress goes to stderr: a bar on a terminal,\n"
    "otherwise a line every 5 s. The summary goes to stdout.\n\n"
    "example: recio list --recursive data/train photos/ && recio pack --resize 256 --quality 90 \\\n"
    "           --num-thread 4 data/train photos/\n";

/* An int option from lo to hi (cli_int_opt: digits and '-' only, the range said on failure). */
static int int_opt(const char *name, const char *v, long long lo, long long hi, int *out) {
    long long x;
    int rc = cli_int_opt("pack", name, v, lo, hi, &x);
    if (!rc) *out = (int)x;
    return rc;
}

static int parse_pack_args(int argc, char **argv, pack_opts *o, const char **prefix, const char **root) {
    int i, rc;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        long long x;
        if (strcmp(a, "--resize") == 0) {
            if ((rc = int_opt(a, v, 0, 1 << 16, &o->resize)) != 0) return rc;
        } else if (strcmp(a, "--quality") == 0) {
            if ((rc = int_opt(a, v, 1, 100, &o->quality)) != 0) return rc;
        } else if (strcmp(a, "--color") == 0) {
            if ((rc = int_opt(a, v, -1, 1, &o->color)) != 0) return rc;
        } else if (strcmp(a, "--encoding") == 0) {
            if (!v || (strcmp(v, ".jpg") && strcmp(v, ".png"))) return cli_usage_error("pack", "--encoding wants .jpg or .png");
            o->png = strcmp(v, ".png") == 0;
        } else if (strcmp(a, "--num-thread") == 0) {
            if ((rc = cli_int_opt("pack", a, v, 1, 256, &x)) != 0) return rc;
            o->threads = (unsigned long long)x;
        } else {
            takes = 0;
            if (strcmp(a, "--center-crop") == 0) o->center_crop = 1;
            else if (strcmp(a, "--pass-through") == 0) o->pass_through = 1;
            else if (strcmp(a, "--area") == 0) o->filter = RECIO_AREA;
            else if (strcmp(a, "--pack-label") == 0) o->pack_label = 1;
            else if (strcmp(a, "--no-exif") == 0) o->exif = 0;
            else if (strcmp(a, "--mask-root") == 0 && v) o->mask_root = argv[++i];
            else if (strcmp(a, "--strict") == 0) o->strict = 1;
            else if (strcmp(a, "--quiet") == 0) o->quiet = 1;
            else if (strcmp(a, "--force") == 0) o->force = 1;
            else if (a[0] == '-' && a[1]) return cli_usage_error("pack", "unknown option '%s'", a);
            else if (!*prefix) *prefix = a;
            else if (!*root) *root = a;
            else return cli_usage_error("pack", "unexpected argument '%s'", a);
        }
        i += takes;
    }
    if (!*prefix || !*root) return cli_usage_error("pack", "want PREFIX and ROOT");
    return 0;
}

/* PREFIX.lst / PREFIX.rec / PREFIX.idx / PREFIX.skipped from "PREFIX" or "PREFIX.lst". */
static char *out_name(const char *prefix, const char *ext) {
    size_t n = strlen(prefix);
    char *base = pack_cat(prefix, ""), *p;
    if (!base) return NULL;
    if (n > 4 && strcmp(prefix + n - 4, ".lst") == 0) base[n - 4] = 0;
    p = pack_cat(base, ext);
    free(base);
    return p;
}

/* Ctrl-C or a kill in the middle of a long pack: remove the writer's temporary .rec and .idx so
   nothing half-written is left behind (the .skipped lines are in memory until the commit); the
   previous outputs stay as they were. A handler needs file-scope state: the names, set before the
   handler is installed. */
static char *interrupt_tmp[2];
static const int interrupt_sigs[] = {SIGINT, SIGTERM, SIGHUP};

static void on_interrupt(int sig) {
    int i;
    for (i = 0; i < 2; i++)
        if (interrupt_tmp[i]) unlink(interrupt_tmp[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cleanup_on_interrupt(const char *const tmp[2]) {
    struct sigaction sa;
    size_t i;
    for (i = 0; i < 2; i++) /* none on S3: an interrupted upload is never completed (see docs/remote.md) */
        interrupt_tmp[i] = tmp[i] ? pack_cat(tmp[i], "") : NULL;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof interrupt_sigs / sizeof interrupt_sigs[0]; i++) sigaction(interrupt_sigs[i], &sa, NULL);
}

/* Held while the outputs are renamed, so a kill cannot land between two renames. */
static void block_interrupts(int block) {
    sigset_t set;
    size_t i;
    sigemptyset(&set);
    for (i = 0; i < sizeof interrupt_sigs / sizeof interrupt_sigs[0]; i++) sigaddset(&set, interrupt_sigs[i]);
    if (!block) /* committed or given up: a late signal has nothing left to clean */
        for (i = 0; i < 2; i++) free(interrupt_tmp[i]), interrupt_tmp[i] = NULL;
    pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* The three outputs change together or not at all. The new .skipped (or its absence: a stale list
   would lie) goes in first, the old one kept aside; then the writer replaces .rec and .idx, both
   or neither; if that fails, the old .skipped comes back. */
static int commit_outputs(pack_out *out) {
    int bad = 0;
    block_interrupts(1);
    out->claim[2].absent = out->nskipped == 0;
    if (cli_out_hold(&out->claim[2]) != 0) {
        bad = 1, recio_writer_abort(out->w);
    } else if (recio_writer_finish(out->w) != RECIO_OK) { /* keeps the handle, so the message can say what failed */
        bad = 1, cli_err("%s", recio_writer_errmsg(out->w));
        cli_out_settle(&out->claim[2], 1);
        recio_writer_abort(out->w);
    } else {
        bad = cli_out_settle(&out->claim[2], 0) != 0; /* S3: the .skipped is only made now */
        cli_close_writer(out->w); /* finished: says a note, if any */
    }
    block_interrupts(0);
    return bad ? -1 : 0;
}

/* A mistyped ROOT must not become "0 packed" over a good dataset: it has to be a folder with
   something in it. */
static int check_root(const char *root) {
    struct stat st;
    struct dirent *ent;
    DIR *d;
    int any = 0;
    if (stat(root, &st) != 0) return cli_err("%s: cannot open: %s", root, strerror(errno)), -1;
    if (!S_ISDIR(st.st_mode)) return cli_err("%s: not a folder (ROOT holds the images the list names)", root), -1;
    if (!(d = opendir(root))) return cli_err("%s: cannot open: %s", root, strerror(errno)), -1;
    while (!any && (ent = readdir(d)) != NULL) any = strcmp(ent->d_name, ".") != 0 && strcmp(ent->d_name, "..") != 0;
    closedir(d);
    if (!any) return cli_err("%s: empty folder, nothing to pack", root), -1;
    return 0;
}

/* Whether pack may write PREFIX.rec, .idx and .skipped (cli_out_claim: never the list; an existing
   file of the kind pack writes there, or --force); the ones that exist, for is_output. 0 or the
   exit status. */
static int claim_outputs(pack_out *out, const char *idx, pack_opts *o) {
    static const cli_kind kinds[3] = {CLI_KIND_REC, CLI_KIND_IDX, CLI_KIND_SKIPPED};
    const char *paths[3];
    int i;
    paths[0] = out->rec_path, paths[1] = idx, paths[2] = out->skipped_path;
    int rc;
    for (i = 0; i < 3; i++)
        if ((rc = cli_out_claim(&out->claim[i], paths[i], kinds[i], &out->lst_path, 1, o->force)) != 0) return rc;
    o->outs = out->claim, o->nouts = 3;
    return 0;
}

/* The new .rec and .idx, under temporary names in the writer. */
static int open_outputs(pack_out *out, recio_writer_desc *d) {
    char msg[RECIO_ERRMSG_SIZE];
    d->errmsg = msg;
    if (recio_writer_open_desc(&out->w, cli_out_target(&out->claim[0]), d) == RECIO_OK) return 0;
    cli_err("%s", msg);
    return -1;
}

/* Pack into the writer; on success commit the three outputs, else leave every old file alone. */
static int pack_and_commit(const recio_lst *lst, const char *root, const pack_opts *o, pack_out *out) {
    int rc = run_pool(lst, root, o, out);
    if (!rc && !out->packed) /* all skipped: a wrong ROOT or list, not a dataset to replace the old one */
        rc = -1, cli_err("%s: nothing packed (%zu skipped); the previous files are left as they were", out->rec_path,
                         out->nskipped);
    if (!rc) return commit_outputs(out);
    block_interrupts(1);
    recio_writer_abort(out->w);
    block_interrupts(0);
    return -1;
}

static int pack_files(const recio_lst *lst, const char *prefix, const char *root, const pack_opts *opts) {
    pack_out out;
    pack_opts o = *opts;
    recio_writer_desc d;
    const char *tmp[2];
    char *idx = out_name(prefix, ".idx");
    double t0 = pack_now(), dt;
    int rc = CLI_EXIT_ERR, k;
    memset(&out, 0, sizeof out);
    memset(&d, 0, sizeof d);
    out.rec_path = out_name(prefix, ".rec");
    out.skipped_path = out_name(prefix, ".skipped");
    out.lst_path = prefix;
    d.index_path = idx;
    d.atomic = 1;
    d.tmp_names = tmp;
    if (!idx || !out.rec_path || !out.skipped_path) cli_err("out of memory");
    else if ((rc = claim_outputs(&out, idx, &o)) == 0) {
        rc = CLI_EXIT_ERR;
        d.index_path = cli_out_target(&out.claim[1]); /* a link's file, not the link */
        if (!check_root(root) && !open_outputs(&out, &d)) {
            cleanup_on_interrupt(tmp);
            rc = pack_and_commit(lst, root, &o, &out) ? CLI_EXIT_ERR : 0;
        }
    }
    dt = pack_now() - t0;
    if (!rc) {
        printf("%s: %zu packed, %zu skipped, %.2f s (%.1f img/s); index %s\n", out.rec_path, out.packed, out.nskipped, dt,
               dt > 0 ? (double)out.packed / dt : 0.0, idx);
        if (out.nskipped) printf("skipped files are listed in %s\n", out.skipped_path);
        if (out.nskipped && o.strict) rc = CLI_EXIT_ERR;
    }
    for (k = 0; k < 3; k++) cli_out_free(&out.claim[k]);
    free(idx);
    free(out.rec_path);
    free(out.skipped_path);
    return rc;
}

/* Two packs to one prefix would race to rename their outputs into place (one's .rec with the other's
   .idx): the second stops at once and says why. The lock is on PREFIX.lst, the file every pack to
   this prefix opens; the kernel drops it when the process ends, however it ends. Returns the
   descriptor to keep open, -1 when the list does not exist (loading it reports that), -2 when taken
   or unreadable (never pack unlocked). */
static int lock_prefix(const char *lst_path) {
    int fd = open(lst_path, O_RDONLY);
    if (fd < 0 && errno != ENOENT) return cli_err("%s: cannot open: %s", lst_path, strerror(errno)), -2;
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    if (errno == EWOULDBLOCK)
        cli_err("%s: another recio pack is writing this prefix now; nothing was changed (try again when it ends)", lst_path);
    else
        cli_err("%s: cannot lock: %s", lst_path, strerror(errno));
    close(fd);
    return -2;
}

/* A malformed .lst line: said, counted, and left out; the pack goes on (im2rec's habit). */
static void on_bad_line(void *user, const char *msg) {
    (void)user;
    cli_err("%s (line skipped)", msg);
}

typedef struct dup_key {
    uint64_t index;
    size_t at;
} dup_key;

static int cmp_dup(const void *a, const void *b) {
    const dup_key *x = (const dup_key *)a, *y = (const dup_key *)b;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : x->at < y->at ? -1 : x->at > y->at;
}

/* Two lines with one index would give the .idx two records under one key: warn (im2rec does not
   check; the pack still goes on, every image is packed). */
static void warn_duplicates(const recio_lst *lst, const char *lst_path) {
    dup_key *k = lst->count > 1 ? (dup_key *)malloc(lst->count * sizeof *k) : NULL;
    size_t i, j, shown = 0, more = 0;
    if (!k) return;
    for (i = 0; i < lst->count; i++) k[i].index = lst->items[i].index, k[i].at = i;
    qsort(k, lst->count, sizeof *k, cmp_dup);
    for (i = 0; i < lst->count; i = j) {
        for (j = i + 1; j < lst->count && k[j].index == k[i].index; j++) {}
        if (j - i < 2) continue;
        if (shown++ < 5)
            cli_err("%s: warning: index %llu is on %zu lines (%s, %s%s): the .idx will hold key %llu %zu times", lst_path,
                    (unsigned long long)k[i].index, j - i, lst->items[k[i].at].path, lst->items[k[i + 1].at].path,
                    j - i > 2 ? ", ..." : "", (unsigned long long)k[i].index, j - i);
        else more++;
    }
    if (more) cli_err("%s: warning: %zu more indices are on more than one line", lst_path, more);
    free(k);
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The lists `pack PREFIX` packs: PREFIX.lst when named so or when it exists (unlike im2rec, which
   would also pack PREFIX_area.lst and PREFIX2.lst beside it: an exact name is never widened); every
   .lst in PREFIX when it is a folder; else, as im2rec, every PREFIX*.lst (PREFIX_train.lst,
   PREFIX_0.lst, ... after `list --train-ratio` or `--chunks`), sorted. When none is found,
   PREFIX.lst (its loading says so). */
static int find_lists(const char *prefix, char ***out, size_t *n) {
    size_t len = strlen(prefix), cap = 0, blen;
    struct stat st;
    char *dir = NULL, *slash, **v;
    const char *base = "", *open_at;
    struct dirent *e;
    DIR *d = NULL;
    int isdir = stat(prefix, &st) == 0 && S_ISDIR(st.st_mode);
    *out = NULL, *n = 0;
    if (!isdir && (dir = out_name(prefix, ".lst")) != NULL && stat(dir, &st) == 0 && S_ISREG(st.st_mode)) len = 0;
    free(dir);
    dir = NULL;
    if (len && !(len > 4 && strcmp(prefix + len - 4, ".lst") == 0)) {
        if (!(dir = pack_cat(prefix, ""))) return -1;
        if (!isdir) { /* "data/train" -> folder "data", names starting with "train" */
            slash = strrchr(dir, '/');
            base = slash ? slash + 1 : dir;
            if (slash) *slash = 0;
        }
        open_at = !isdir && base == dir ? "." : dir;
        d = opendir(open_at);
    }
    blen = strlen(base);
    while (d && (e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        char *path;
        if (k <= 4 || strcmp(e->d_name + k - 4, ".lst") != 0 || strncmp(e->d_name, base, blen) != 0) continue;
        path = base == dir ? pack_cat(e->d_name, "") : pack_join(dir, e->d_name);
        if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (*n == cap) {
            if (!(v = (char **)realloc(*out, (cap ? 2 * cap : 8) * sizeof *v))) {
                free(path);
                break;
            }
            *out = v, cap = cap ? 2 * cap : 8;
        }
        (*out)[(*n)++] = path;
    }
    if (d) closedir(d);
    free(dir);
    if (*n > 1) qsort(*out, *n, sizeof **out, cmp_name);
    if (*n == 0) {
        free(*out);
        if (!(*out = (char **)malloc(sizeof **out)) || !((*out)[0] = out_name(prefix, ".lst"))) return free(*out), -1;
        *n = 1;
    }
    return 0;
}

/* One list: lock its prefix, load it (malformed lines said and skipped), pack it. */
static int pack_list(const char *lst_path, const char *root, const pack_opts *o) {
    recio_lst lst;
    recio_lst_desc d;
    char msg[RECIO_ERRMSG_SIZE];
    recio_err e;
    int rc, lock;
    if ((lock = lock_prefix(lst_path)) == -2) return CLI_EXIT_ERR;
    memset(&d, 0, sizeof d);
    d.on_bad_line = on_bad_line;
    d.mask_column = o->mask_root != NULL;
    d.errmsg = msg;
    if ((e = recio_lst_load(&lst, lst_path, &d)) != RECIO_OK) {
        cli_err("%s", msg[0] ? msg : recio_strerror(e));
        rc = CLI_EXIT_ERR;
    } else {
        warn_duplicates(&lst, lst_path);
        rc = pack_files(&lst, lst_path, root, o);
        if (lst.skipped) printf("%s: %zu malformed line%s skipped\n", lst_path, lst.skipped, lst.skipped == 1 ? "" : "s");
        if (!rc && lst.skipped && o->strict) rc = CLI_EXIT_ERR;
    }
    recio_lst_free(&lst);
    if (lock >= 0) close(lock);
    return rc;
}

CLI_COMMAND(cli_cmd_pack) {
    pack_opts o;
    const char *prefix = NULL, *root = NULL;
    char **lists;
    size_t i, n;
    int rc, k;
    for (k = 1; k < argc; k++)
        if (cli_is_help(argv[k])) return fputs(pack_help, stdout), 0;
    memset(&o, 0, sizeof o);
    o.quality = 95, o.color = 1, o.exif = 1, o.threads = 1;
    if ((rc = parse_pack_args(argc, argv, &o, &prefix, &root)) != 0) return rc;
    if (o.png) codec_set_png_level(o.quality > 9 ? 9 : o.quality); /* before any worker starts */
    if (find_lists(prefix, &lists, &n)) return cli_err("out of memory"), CLI_EXIT_ERR;
    for (i = 0; i < n; i++) {
        if (n > 1) printf("%s:\n", lists[i]);
        fflush(stdout);
        if ((k = pack_list(lists[i], root, &o)) != 0 && !rc) rc = k;
        free(lists[i]);
    }
    free(lists);
    return rc;
}
