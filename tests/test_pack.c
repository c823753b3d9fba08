/* recio list / pack / unpack / show, through the command ($RECIO, default build/recio).
   Expected values were computed outside recio with /usr/bin/python3 + PIL + numpy (Debian 12:
   python3-pil 9.4, python3-numpy), as noted at each table; sample photos are tests/data/photos,
   bad inputs and the 16-bit PNG are tests/data/pack (made by the script quoted in test_pack_16bit). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "cli_util.h"
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>


#define T "build/test_pack"
#define PHOTOS "tests/data/photos"
#define NPHOTOS 12

/* `ls tests/data/photos | LC_ALL=C sort`, the images only */
static const char *const photo[NPHOTOS] = {
    "astronaut-375x500.jpg", "astronaut-exif-rot90-400x300.jpg", "camera-gray-400x300.jpg", "chelsea-333x500.png",
    "chelsea-500x375.jpg", "chelsea-cmyk-300x400.jpg", "coffee-500x333.jpg", "coffee-progressive-480x360.jpg",
    "hubble-1600x1200.jpg", "retina-120x90.jpg", "rocket-640x480.jpg", "rocket-alpha-256x256.png",
};

static char out_text[1 << 16], err_text[1 << 16];

static void read_text(const char *path, char *buf, size_t cap) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n);
    if (n >= cap) n = cap - 1;
    if (b) memcpy(buf, b, n);
    buf[n] = 0;
    free(b);
}

/* Run "recio ARGS"; stdout and stderr land in out_text / err_text; returns the exit status. */
static int recio(const char *args) {
    char cmd[4096];
    const char *exe = getenv("RECIO");
    int st;
    snprintf(cmd, sizeof cmd, "%s %s >" T "/out.txt 2>" T "/err.txt", exe && *exe ? exe : "build/recio", args);
    st = system(cmd);
    read_text(T "/out.txt", out_text, sizeof out_text);
    read_text(T "/err.txt", err_text, sizeof err_text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
}

static int sh(const char *cmd) { return system(cmd) == 0 ? 0 : -1; }

static int same_file(const char *a, const char *b) {
    size_t na = 0, nb = 0;
    unsigned char *x = t_slurp(a, &na), *y = t_slurp(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* ---- records, read with recio's reader; the image header parsed by hand (u32 flag, f32 label,
   u64 id, u64 id2, little-endian) so the test does not lean on the packer's own counterpart. */
typedef struct rec_t {
    unsigned flag;
    float label, labels[8];
    unsigned long long id, id2;
    unsigned char *img;
    size_t img_n;
} rec_t;

static unsigned le32(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16 | (unsigned)p[3] << 24; }
static float lef(const unsigned char *p) {
    unsigned u = le32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int read_recs(const char *path, rec_t *out, int max) {
    recio_reader *r;
    recio_record rec;
    int n = 0;
    if (recio_reader_open(&r, path) != RECIO_OK) return -1;
    while (recio_reader_next(r, &rec) == RECIO_OK && n < max) {
        const unsigned char *p = (const unsigned char *)rec.data;
        rec_t *o = &out[n++];
        size_t h = 24;
        unsigned i;
        memset(o, 0, sizeof *o);
        if (rec.size < 24) return recio_reader_close(r), -1;
        o->flag = le32(p);
        o->label = lef(p + 4);
        o->id = le32(p + 8) | (unsigned long long)le32(p + 12) << 32;
        o->id2 = le32(p + 16) | (unsigned long long)le32(p + 20) << 32;
        for (i = 0; i < o->flag && i < 8; i++) o->labels[i] = lef(p + 24 + 4 * i);
        h += 4 * (size_t)o->flag;
        o->img_n = rec.size - h;
        o->img = (unsigned char *)malloc(o->img_n + 1);
        memcpy(o->img, p + h, o->img_n);
    }
    recio_reader_close(r);
    return n;
}

/* Size and channels of a record's image, and its pixels as packed RGB (malloc'd), through recio's
   decoder: stb_image, a third party, not the code under test. */
static int info_of(const rec_t *r, int *w, int *h, int *c) { return recio_image_info(r->img, r->img_n, w, h, c) == RECIO_OK; }

static unsigned char *load_rgb(const rec_t *r, int *w, int *h) {
    recio_image im;
    unsigned char *px;
    int y;
    if (recio_image_decode(&im, r->img, r->img_n, 3) != RECIO_OK) return NULL;
    *w = im.width, *h = im.height;
    px = (unsigned char *)malloc((size_t)im.width * im.height * 3);
    for (y = 0; px && y < im.height; y++)
        memcpy(px + (size_t)y * im.width * 3, (unsigned char *)im.data + y * im.stride, (size_t)im.width * 3);
    recio_image_free(&im);
    return px;
}

static void free_recs(rec_t *r, int n) {
    int i;
    for (i = 0; i < n; i++) free(r[i].img);
}

static int same_text(const char *path, const char *text) {
    size_t n = 0;
    unsigned char *b = t_slurp(path, &n);
    int same = b && n == strlen(text) && memcmp(b, text, n) == 0;
    free(b);
    return same;
}

static int count_lines(const char *path) {
    size_t n, i;
    unsigned char *b = t_slurp(path, &n);
    int k = 0;
    for (i = 0; b && i < n; i++) k += b[i] == '\n';
    free(b);
    return b ? k : -1;
}

/* A .lst of the sample photos in sorted order, label 0 (what `recio list --no-shuffle` should write). */
static void write_photo_lst(const char *path) {
    FILE *f = fopen(path, "wb");
    int i;
    for (i = 0; i < NPHOTOS; i++) fprintf(f, "%d\t0\t%s\n", i, photo[i]);
    fclose(f);
}

/* ---- list ---------------------------------------------------------------------------------------- */

static void test_list_sorted(void) {
    char expect[4096] = "", line[256];
    size_t n = 0;
    char *got;
    int i;
    CHECK_EQ_INT(recio("list --no-shuffle " T "/flat " PHOTOS), 0);
    for (i = 0; i < NPHOTOS; i++) { /* im2rec's format: '%d\t' index, '%f\t' label, path */
        snprintf(line, sizeof line, "%d\t0.000000\t%s\n", i, photo[i]);
        strcat(expect, line);
    }
    got = (char *)t_slurp(T "/flat.lst", &n);
    CHECK(got && n == strlen(expect) && memcmp(got, expect, n) == 0);
    free(got);
}

static void test_list_shuffle_seed(void) {
    /* splitmix64 (state += 0x9e3779b97f4a7c15, Stafford mix 13) with rejection below
       UINT64_MAX - UINT64_MAX % n, Fisher-Yates from the end, 12 items, seed 7: written out in Python */
    static const int order[NPHOTOS] = {10, 11, 5, 1, 7, 4, 8, 2, 9, 6, 0, 3};
    recio_lst lst;
    int i;
    CHECK_EQ_INT(recio("list --seed 7 " T "/shuf " PHOTOS), 0);
    memset(&lst, 0, sizeof lst);
    CHECK(recio_lst_load(&lst, T "/shuf.lst", NULL) == RECIO_OK);
    CHECK_EQ_INT(lst.count, NPHOTOS);
    for (i = 0; i < NPHOTOS && (size_t)i < lst.count; i++) {
        CHECK_EQ_INT(lst.items[i].index, order[i]);
        CHECK(strcmp(lst.items[i].path, photo[order[i]]) == 0);
    }
    recio_lst_free(&lst);
    /* the same seed again gives the same file; another seed does not */
    CHECK_EQ_INT(recio("list --seed 7 " T "/shuf2 " PHOTOS), 0);
    CHECK(same_file(T "/shuf.lst", T "/shuf2.lst"));
    CHECK_EQ_INT(recio("list --seed 8 " T "/shuf3 " PHOTOS), 0);
    CHECK(!same_file(T "/shuf.lst", T "/shuf3.lst"));
}

static void test_list_recursive(void) {
    static const char expect[] = /* folders sorted by path: "a", "a/deep", "b"; root has no images */
        "0\t0.000000\ta/x.jpg\n1\t0.000000\ta/y.png\n2\t1.000000\ta/deep/z.jpg\n3\t2.000000\tb/w.JPG\n";
    size_t n = 0;
    char *got;
    CHECK(sh("rm -rf " T "/tree && mkdir -p " T "/tree/a/deep " T "/tree/b && cp " PHOTOS "/retina-120x90.jpg " T
             "/tree/a/x.jpg && cp " PHOTOS "/rocket-alpha-256x256.png " T "/tree/a/y.png && cp " PHOTOS
             "/retina-120x90.jpg " T "/tree/a/deep/z.jpg && cp " PHOTOS "/retina-120x90.jpg " T
             "/tree/b/w.JPG && echo hi > " T "/tree/b/notes.txt") == 0);
    CHECK_EQ_INT(recio("list --recursive --no-shuffle " T "/rec " T "/tree"), 0);
    got = (char *)t_slurp(T "/rec.lst", &n);
    CHECK(got && n == strlen(expect) && memcmp(got, expect, n) == 0);
    free(got);
    CHECK(strcmp(out_text, "a\t0\na/deep\t1\nb\t2\n") == 0); /* the label map */
    /* --exts narrows the set */
    CHECK_EQ_INT(recio("list --recursive --no-shuffle --exts .png " T "/recpng " T "/tree"), 0);
    CHECK_EQ_INT(count_lines(T "/recpng.lst"), 1);
    CHECK_EQ_INT(recio("list --recursive --exts JPG " T "/recjpg " T "/tree"), 0); /* no dot, any case */
    CHECK_EQ_INT(count_lines(T "/recjpg.lst"), 3);
}

/* Links are followed (as im2rec) into folders outside the tree, but a folder is walked once: a link
   to a parent (a loop) or a second name for a folder listed already is not entered; a 2^20 lattice
   of links (two links to the next folder at every level) ends at once. */
static void test_list_links(void) {
    static const char expect[] = /* "a" and the outside folder through "b"; "a/up" and "c" not followed */
        "0\t0.000000\ta/x.jpg\n1\t1.000000\tb/y.jpg\n";
    size_t n = 0;
    int i;
    char *got, cmd[4096];
    CHECK(sh("rm -rf " T "/lk " T "/outside && mkdir -p " T "/lk/a " T "/outside && cp " PHOTOS "/retina-120x90.jpg " T
             "/lk/a/x.jpg && cp " PHOTOS "/retina-120x90.jpg " T "/outside/y.jpg && ln -s ../../lk " T "/lk/a/up && ln -s ../outside " T
             "/lk/b && ln -s a " T "/lk/c") == 0);
    CHECK_EQ_INT(recio("list --recursive --no-shuffle " T "/links " T "/lk"), 0);
    got = (char *)t_slurp(T "/links.lst", &n);
    CHECK(got && n == strlen(expect) && memcmp(got, expect, n) == 0);
    free(got);
    CHECK(strstr(err_text, "not followed") != NULL);
    snprintf(cmd, sizeof cmd, "rm -rf " T "/lat && mkdir -p " T "/lat/d0");
    CHECK(sh(cmd) == 0);
    for (i = 1; i <= 20; i++) {
        snprintf(cmd, sizeof cmd, "mkdir " T "/lat/d%d && ln -s ../d%d " T "/lat/d%d/l1 && ln -s ../d%d " T "/lat/d%d/l2", i, i, i - 1, i, i - 1);
        CHECK(sh(cmd) == 0);
    }
    CHECK(sh("cp " PHOTOS "/retina-120x90.jpg " T "/lat/d20/z.jpg") == 0);
    snprintf(cmd, sizeof cmd, "timeout 30 %s list --recursive " T "/lattice " T "/lat/d0 >/dev/null 2>&1", getenv("RECIO"));
    CHECK(sh(cmd) == 0); /* was 2^20 walks of d20 */
    CHECK_EQ_INT(count_lines(T "/lattice.lst"), 1);
}

/* A file named "7<TAB>ok.jpg" was listed verbatim, so pack read label 7 and packed ok.jpg (another
   photo) with "0 skipped"; a newline in a name made pack reject the whole list. They are left out. */
static void test_list_unlistable_names(void) {
    static const char expect[] = "0\t0.000000\tgood.jpg\n1\t1.000000\tsub/ok.jpg\n";
    size_t n = 0;
    char *got;
    CHECK(sh("rm -rf " T "/names && mkdir -p " T "/names/sub '" T "/names/bad\tdir' && cd " T "/names && for f in "
             "good.jpg ok.jpg \"$(printf '7\tok.jpg')\" \"$(printf 'a\nb.jpg')\" \"$(printf 'c\rd.jpg')\" sub/ok.jpg "
             "\"$(printf 'bad\tdir/x.jpg')\"; do cp ../../../" PHOTOS "/retina-120x90.jpg \"$f\"; done && rm ok.jpg") == 0);
    CHECK_EQ_INT(recio("list --recursive --no-shuffle " T "/names " T "/names"), 0);
    got = (char *)t_slurp(T "/names.lst", &n);
    CHECK(got && n == strlen(expect) && memcmp(got, expect, n) == 0);
    free(got);
    CHECK(strstr(err_text, "names/7\\tok.jpg: skipped: a tab or line break in the name") != NULL);
    CHECK(strstr(err_text, "names/a\\nb.jpg: skipped") != NULL);
    CHECK(strstr(err_text, "names/c\\rd.jpg: skipped") != NULL);
    CHECK(strstr(err_text, "names/bad\\tdir: skipped") != NULL);
    CHECK_EQ_INT(recio("pack --quiet --pass-through " T "/names " T "/names"), 0);
    CHECK(strstr(out_text, "2 packed, 0 skipped") != NULL);
}

static void test_list_splits(void) {
    /* im2rec: chunk size 12; test = first int(12*0.25) = 3, train = next int(12*0.5) = 6, val = rest 3 */
    recio_lst lst;
    CHECK_EQ_INT(recio("list --no-shuffle --train-ratio 0.5 --test-ratio 0.25 " T "/sp " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/sp_test.lst"), 3);
    CHECK_EQ_INT(count_lines(T "/sp_train.lst"), 6);
    CHECK_EQ_INT(count_lines(T "/sp_val.lst"), 3);
    memset(&lst, 0, sizeof lst);
    CHECK(recio_lst_load(&lst, T "/sp_val.lst", NULL) == RECIO_OK);
    CHECK(lst.count == 3 && lst.items[0].index == 9 && lst.items[2].index == 11);
    recio_lst_free(&lst);
    /* 5 chunks of ceil(12/5) = 3: _0.._3 hold 3 each, _4 is empty (as im2rec writes it) */
    CHECK_EQ_INT(recio("list --no-shuffle --chunks 5 " T "/ch " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/ch_0.lst"), 3);
    CHECK_EQ_INT(count_lines(T "/ch_3.lst"), 3);
    CHECK_EQ_INT(count_lines(T "/ch_4.lst"), 0);
    CHECK_EQ_INT(recio("list --train-ratio 0.8 --test-ratio 0.3 " T "/bad " PHOTOS), 2);
    CHECK_EQ_INT(recio("list " T "/onlyprefix"), 2);
}

/* ---- pack ---------------------------------------------------------------------------------------- */

static void test_pack_resize(void) {
    /* display size after EXIF (PIL ImageOps.exif_transpose), shorter side to 64, longer
       floor(long * 64 / short) */
    static const int size[NPHOTOS][2] = {{64, 85}, {64, 85}, {85, 64}, {64, 96}, {85, 64}, {64, 85},
                                         {96, 64}, {85, 64}, {85, 64}, {85, 64}, {85, 64}, {64, 64}};
    rec_t r[NPHOTOS];
    int i, n, w, h, c;
    write_photo_lst(T "/rs.lst");
    CHECK_EQ_INT(recio("pack --resize 64 --quality 90 " T "/rs " PHOTOS), 0);
    CHECK(strstr(out_text, "12 packed, 0 skipped") != NULL);
    n = read_recs(T "/rs.rec", r, NPHOTOS);
    CHECK_EQ_INT(n, NPHOTOS);
    for (i = 0; i < n; i++) {
        CHECK_EQ_INT(r[i].flag, 0);
        CHECK(r[i].label == 0.0f);
        CHECK_EQ_INT(r[i].id, i);
        CHECK_EQ_INT(r[i].id2, 0);
        CHECK(r[i].img_n > 2 && r[i].img[0] == 0xff && r[i].img[1] == 0xd8); /* JPEG */
        CHECK(info_of(&r[i], &w, &h, &c));
        CHECK_EQ_INT(w, size[i][0]);
        CHECK_EQ_INT(h, size[i][1]);
        CHECK_EQ_INT(c, 3); /* --color 1: gray, CMYK and RGBA all become RGB */
    }
    free_recs(r, n);
    /* the .idx: key = .lst index, offset = where `recio dump` finds each record */
    CHECK_EQ_INT(count_lines(T "/rs.idx"), NPHOTOS);
    CHECK_EQ_INT(recio("verify " T "/rs.rec"), 0);
    CHECK_EQ_INT(recio("index -o " T "/rs_rebuilt.idx " T "/rs.rec"), 0);
    CHECK(same_file(T "/rs.idx", T "/rs_rebuilt.idx"));
    CHECK(sh("ls " T "/rs.*.tmp* " T "/rs.*.old* " T "/rs.skipped >/dev/null 2>&1") != 0); /* nothing left over */
}

/* ImageNet's common shrink 500x375 -> 341x256 (stb_image_resize 0.97 asserted on it with its triangle filter). */
static void test_pack_imagenet_shrink(void) {
    rec_t r[2];
    int n, w, h, c;
    put_text(T "/in.lst", "0\t1\tchelsea-500x375.jpg\n1\t2\tcoffee-500x333.jpg\n");
    CHECK_EQ_INT(recio("pack --resize 256 " T "/in " PHOTOS), 0);
    n = read_recs(T "/in.rec", r, 2);
    CHECK_EQ_INT(n, 2);
    CHECK(n == 2 && info_of(&r[0], &w, &h, &c) && w == 341 && h == 256);
    CHECK(n == 2 && info_of(&r[1], &w, &h, &c) && w == 384 && h == 256);
    CHECK(n == 2 && r[0].label == 1.0f && r[1].label == 2.0f && r[1].id == 1);
    free_recs(r, n);
    /* --area: the same sizes, other pixels */
    put_text(T "/in_area.lst", "0\t1\tchelsea-500x375.jpg\n1\t2\tcoffee-500x333.jpg\n");
    CHECK_EQ_INT(recio("pack --resize 256 --area " T "/in_area " PHOTOS), 0);
    n = read_recs(T "/in_area.rec", r, 2);
    CHECK(n == 2 && info_of(&r[0], &w, &h, &c) && w == 341 && h == 256);
    CHECK(!same_file(T "/in.rec", T "/in_area.rec"));
    free_recs(r, n);
}

static void test_pack_pass_through(void) {
    rec_t r[NPHOTOS];
    int i, n;
    write_photo_lst(T "/pt.lst");
    CHECK_EQ_INT(recio("pack --pass-through --num-thread 3 " T "/pt " PHOTOS), 0);
    n = read_recs(T "/pt.rec", r, NPHOTOS);
    CHECK_EQ_INT(n, NPHOTOS);
    for (i = 0; i < n; i++) {
        char path[256];
        size_t sn;
        unsigned char *src;
        snprintf(path, sizeof path, PHOTOS "/%s", photo[i]);
        src = t_slurp(path, &sn);
        CHECK(src && sn == r[i].img_n && memcmp(src, r[i].img, sn) == 0);
        CHECK_EQ_INT(r[i].id, i);
        free(src);
    }
    free_recs(r, n);
}

static void test_pack_threads_identical(void) {
    write_photo_lst(T "/t1.lst");
    write_photo_lst(T "/t4.lst");
    CHECK_EQ_INT(recio("pack --resize 48 --num-thread 1 " T "/t1 " PHOTOS), 0);
    CHECK_EQ_INT(recio("pack --resize 48 --num-thread 4 " T "/t4 " PHOTOS), 0);
    CHECK(same_file(T "/t1.rec", T "/t4.rec"));
    CHECK(same_file(T "/t1.idx", T "/t4.idx"));
}

static void test_pack_bad_inputs(void) {
    rec_t r[8];
    int n;
    put_text(T "/bad.lst", "0\t0\tphotos/retina-120x90.jpg\n1\t1\tpack/empty.jpg\n2\t2\tpack/truncated.jpg\n"
                              "3\t3\tpack/text.jpg\n4\t4\tpack/missing.jpg\n5\t5\tphotos/rocket-640x480.jpg\n");
    CHECK_EQ_INT(recio("pack --num-thread 2 " T "/bad tests/data"), 0);
    CHECK(strstr(out_text, "2 packed, 4 skipped") != NULL);
    CHECK(strstr(err_text, "recio: tests/data/pack/empty.jpg: ") != NULL);
    CHECK(strstr(err_text, "recio: tests/data/pack/truncated.jpg: ") != NULL);
    CHECK(strstr(err_text, "recio: tests/data/pack/text.jpg: ") != NULL);
    CHECK(strstr(err_text, "recio: tests/data/pack/missing.jpg: ") != NULL);
    CHECK_EQ_INT(count_lines(T "/bad.skipped"), 4);
    CHECK(strstr(err_text, "missing.jpg: cannot read: No such file or directory") != NULL);
    n = read_recs(T "/bad.rec", r, 8);
    CHECK_EQ_INT(n, 2);
    CHECK(n == 2 && r[0].id == 0 && r[1].id == 5 && r[1].label == 5.0f);
    free_recs(r, n);
    CHECK_EQ_INT(count_lines(T "/bad.idx"), 2);
    /* pass-through checks headers and end markers without decoding */
    CHECK_EQ_INT(recio("pack --pass-through " T "/bad tests/data"), 0);
    CHECK(strstr(out_text, "2 packed, 4 skipped") != NULL);
    CHECK_EQ_INT(recio("pack --strict --quiet " T "/bad tests/data"), 1);
    /* a 29-byte JPEG whose header claims 20000x20000 pixels is refused before any allocation */
    put_text(T "/huge.lst", "0\t0\tpack/huge-header-20000x20000.jpg\n");
    CHECK_EQ_INT(recio("pack " T "/huge tests/data"), 1); /* and nothing else to pack: an error */
    CHECK(strstr(err_text, "huge-header-20000x20000.jpg: decode: 20000x20000 JPEG is more than RECIO_MAX_PIXELS") != NULL);
    /* a clean run removes a stale .skipped */
    write_photo_lst(T "/bad.lst");
    CHECK_EQ_INT(recio("pack --strict --resize 32 " T "/bad " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/bad.skipped"), -1);
}

/* Corner means (20x20) of astronaut-exif-rot90-400x300.jpg after PIL's ImageOps.exif_transpose
   (orientation 6: 300x400 shown), RGB: top-left, top-right, bottom-left, bottom-right. */
static const double exif_corner[4][3] = {
    {188.5, 127.5, 122.4}, {27.7, 18.9, 59.5}, {7.7, 7.6, 7.4}, {146.7, 140.9, 139.4}};

static double corner_err(const unsigned char *px, int w, int h, int k, const double want[3]) {
    int x0 = (k & 1) ? w - 20 : 0, y0 = (k & 2) ? h - 20 : 0, x, y, ch;
    double worst = 0;
    for (ch = 0; ch < 3; ch++) {
        double s = 0;
        for (y = y0; y < y0 + 20; y++)
            for (x = x0; x < x0 + 20; x++) s += px[((size_t)y * w + x) * 3 + ch];
        s = fabs(s / 400 - want[ch]);
        if (s > worst) worst = s;
    }
    return worst;
}

static void test_pack_exif(void) {
    rec_t r[1];
    int n, w, h, c, k;
    unsigned char *px;
    put_text(T "/ex.lst", "7\t0\tastronaut-exif-rot90-400x300.jpg\n");
    CHECK_EQ_INT(recio("pack --encoding .png " T "/ex " PHOTOS), 0);
    n = read_recs(T "/ex.rec", r, 1);
    CHECK_EQ_INT(n, 1);
    if (n != 1) return;
    CHECK_EQ_INT(r[0].id, 7);
    px = load_rgb(&r[0], &w, &h);
    CHECK(px && w == 300 && h == 400);
    /* decoders differ by a few levels (IDCT, chroma upsampling): 6 is far below a wrong rotation */
    for (k = 0; px && w == 300 && h == 400 && k < 4; k++) CHECK(corner_err(px, w, h, k, exif_corner[k]) < 6);
    free(px);
    free_recs(r, n);
    CHECK_EQ_INT(recio("pack --no-exif " T "/ex " PHOTOS), 0);
    n = read_recs(T "/ex.rec", r, 1);
    CHECK(n == 1 && info_of(&r[0], &w, &h, &c) && w == 400 && h == 300);
    free_recs(r, n);
}

/* Both TIFF byte orders: retina-120x90.jpg with an EXIF segment added (by a few lines of Python struct
   calls), orientation 3 in a big-endian (MM) block and 8 in a little-endian (II) one. By the EXIF
   definition, 3 shows the stored image turned 180 degrees and 8 turned 90 degrees counter-clockwise
   (PIL's exif_transpose: ROTATE_180, ROTATE_90); the scan data is the same, so pixels match exactly. */
static void test_pack_exif_byte_orders(void) {
    rec_t r[3];
    unsigned char *px[3] = {NULL, NULL, NULL};
    int n, w[3], h[3], x, y, i, bad3 = 0, bad8 = 0;
    put_text(T "/eo.lst", "0\t0\tphotos/retina-120x90.jpg\n1\t0\tpack/retina-exif3-mm-120x90.jpg\n"
                         "2\t0\tpack/retina-exif8-ii-120x90.jpg\n");
    CHECK_EQ_INT(recio("pack --encoding .png " T "/eo tests/data"), 0);
    n = read_recs(T "/eo.rec", r, 3);
    CHECK_EQ_INT(n, 3);
    for (i = 0; i < n; i++) px[i] = load_rgb(&r[i], &w[i], &h[i]);
    CHECK(n == 3 && px[0] && px[1] && px[2]);
    if (n == 3 && px[0] && px[1] && px[2]) {
        CHECK(w[0] == 120 && h[0] == 90 && w[1] == 120 && h[1] == 90 && w[2] == 90 && h[2] == 120);
        for (y = 0; y < 90; y++)
            for (x = 0; x < 120; x++) {
                const unsigned char *s = px[0] + ((size_t)y * 120 + x) * 3;
                bad3 += memcmp(px[1] + ((size_t)(89 - y) * 120 + (119 - x)) * 3, s, 3) != 0;
                bad8 += memcmp(px[2] + ((size_t)(119 - x) * 90 + y) * 3, s, 3) != 0; /* CCW: (x,y) -> (y, 119-x) */
            }
        CHECK_EQ_INT(bad3, 0);
        CHECK_EQ_INT(bad8, 0);
    }
    for (i = 0; i < 3; i++) free(px[i]);
    free_recs(r, n);
}

static void test_pack_colour_kinds(void) {
    /* --color 0: one channel; --color -1 keeps RGBA in PNG; the CMYK JPEG comes out as RGB whose mean
       matches PIL's Adobe CMYK conversion, R = (255-C)(255-K)/255 etc.: mean 149.0, 108.8, 79.9. */
    rec_t r[3];
    int n, w, h, c, i, bad = 0;
    double mean[3] = {0, 0, 0};
    unsigned char *px;
    put_text(T "/ck.lst", "0\t0\tcamera-gray-400x300.jpg\n1\t0\trocket-alpha-256x256.png\n2\t0\tchelsea-cmyk-300x400.jpg\n");
    CHECK_EQ_INT(recio("pack --color 0 " T "/ck " PHOTOS), 0);
    n = read_recs(T "/ck.rec", r, 3);
    /* stb_image_write's JPEGs always carry 3 components: gray shows as R = G = B (chroma exactly neutral) */
    px = n == 3 ? load_rgb(&r[1], &w, &h) : NULL;
    CHECK(px && w == 256 && h == 256);
    for (i = 0; px && i < w * h; i++) bad += abs(px[3 * i] - px[3 * i + 1]) > 2 || abs(px[3 * i] - px[3 * i + 2]) > 2;
    CHECK(px && bad == 0);
    free(px);
    free_recs(r, n);
    CHECK_EQ_INT(recio("pack --color 0 --encoding .png " T "/ck " PHOTOS), 0);
    n = read_recs(T "/ck.rec", r, 3);
    CHECK(n == 3 && info_of(&r[0], &w, &h, &c) && c == 1 && w == 400);
    CHECK(n == 3 && info_of(&r[2], &w, &h, &c) && c == 1 && w == 300);
    free_recs(r, n);
    CHECK_EQ_INT(recio("pack --color -1 --encoding .png " T "/ck " PHOTOS), 0);
    n = read_recs(T "/ck.rec", r, 3);
    CHECK(n == 3 && info_of(&r[1], &w, &h, &c) && c == 4 && w == 256);
    CHECK(n == 3 && info_of(&r[0], &w, &h, &c) && c == 1);
    px = n == 3 ? load_rgb(&r[2], &w, &h) : NULL;
    CHECK(px && w == 300 && h == 400);
    for (i = 0; px && i < w * h * 3; i++) mean[i % 3] += px[i];
    for (i = 0; px && i < 3; i++) mean[i] /= (double)w * h;
    CHECK(fabs(mean[0] - 149.0) < 4 && fabs(mean[1] - 108.8) < 4 && fabs(mean[2] - 79.9) < 4);
    free(px);
    free_recs(r, n);
}

static void test_pack_16bit(void) {
    /* tests/data/pack/rgb16-64x48.png, written by Python (zlib + struct, filter 0): 16-bit RGB,
       R = x*1000, G = y*1000, B = 40000. In 8 bits: the high byte (stb) or rounded v*255/65535,
       so within 1 of v/257. */
    rec_t r[1];
    int n, w, h, x, y, bad = 0;
    unsigned char *px;
    put_text(T "/p16.lst", "0\t0\trgb16-64x48.png\n");
    CHECK_EQ_INT(recio("pack --encoding .png " T "/p16 tests/data/pack"), 0);
    n = read_recs(T "/p16.rec", r, 1);
    px = n == 1 ? load_rgb(&r[0], &w, &h) : NULL;
    CHECK(px && w == 64 && h == 48);
    for (y = 0; px && y < 48; y++)
        for (x = 0; x < 64; x++) {
            const unsigned char *p = px + ((size_t)y * 64 + x) * 3;
            bad += fabs(p[0] - x * 1000 / 257.0) > 1.01 || fabs(p[1] - y * 1000 / 257.0) > 1.01 ||
                   fabs(p[2] - 40000 / 257.0) > 1.01;
        }
    CHECK_EQ_INT(bad, 0);
    free(px);
    free_recs(r, n);
}

static void test_pack_labels(void) {
    rec_t r[2];
    int n;
    put_text(T "/ml.lst", "4\t1.5\t2\t-3\tretina-120x90.jpg\n9\t0.25\tretina-120x90.jpg\n");
    CHECK_EQ_INT(recio("pack --pack-label --pass-through " T "/ml " PHOTOS), 0);
    n = read_recs(T "/ml.rec", r, 2);
    CHECK_EQ_INT(n, 2);
    CHECK(n == 2 && r[0].flag == 3 && r[0].label == 0.0f && r[0].labels[0] == 1.5f && r[0].labels[1] == 2.0f &&
          r[0].labels[2] == -3.0f && r[0].id == 4);
    CHECK(n == 2 && r[1].flag == 0 && r[1].label == 0.25f && r[1].id == 9); /* one label: flag 0, as MXNet */
    free_recs(r, n);
    /* .idx keys are the .lst indexes; record 0 takes 8 + (24 + 3*4 + 3863 bytes of retina, padded to 4) */
    CHECK(same_text(T "/ml.idx", "4\t0\n9\t3908\n"));
    CHECK_EQ_INT(recio("pack --pass-through " T "/ml " PHOTOS), 0);
    n = read_recs(T "/ml.rec", r, 2);
    CHECK(n == 2 && r[0].flag == 0 && r[0].label == 1.5f); /* without --pack-label: the first label */
    free_recs(r, n);
}

/* A mistyped ROOT (missing, empty, a file) or a run that packs nothing is an error, and the dataset
   packed before stays as it was (it used to be replaced by empty files, exit 0). */
static void test_pack_wrong_root_keeps_dataset(void) {
    static const char *const bad[] = {"/nonexistent", T "/empty-root", T "/wr.lst", "tests/data/pack"};
    static const char *const why[] = {"/nonexistent: cannot open: No such file or directory", "empty-root: empty folder",
                                      "wr.lst: not a folder", "wr.rec: nothing packed (12 skipped)"};
    char args[512];
    int i;
    write_photo_lst(T "/wr.lst");
    CHECK_EQ_INT(recio("pack --pass-through --quiet " T "/wr " PHOTOS), 0);
    CHECK(sh("cp " T "/wr.rec " T "/wr.rec.before && cp " T "/wr.idx " T "/wr.idx.before && rm -rf " T
             "/empty-root && mkdir " T "/empty-root") == 0);
    for (i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "pack --quiet " T "/wr %s", bad[i]);
        CHECK_EQ_INT(recio(args), 1);
        CHECK(strstr(err_text, why[i]) != NULL);
        CHECK(same_file(T "/wr.rec", T "/wr.rec.before"));
        CHECK(same_file(T "/wr.idx", T "/wr.idx.before"));
        CHECK(strstr(out_text, "packed") == NULL);
    }
    CHECK(sh("ls " T "/wr.rec.* " T "/wr.idx.* | grep -v before >/dev/null 2>&1") != 0); /* no temporaries left */
}

/* A list of 400 entries of the large photo: a pack that runs long enough to be interrupted or raced. */
static void long_list(const char *path) {
    FILE *f = fopen(path, "wb");
    int i;
    for (i = 0; f && i < 400; i++) fprintf(f, "%d\t0\thubble-1600x1200.jpg\n", i);
    if (f) fclose(f);
}

/* Killed in the middle: the temporary files go, the previous output stays. */
/* Earlier outputs of a prefix, of the kinds pack replaces (a file of another kind stops it at once):
   RecordIO's magic first, a list of skipped images. */
#define OLD_REC "\x0a\x23\xd7\xce previous output"
#define OLD_SKIPPED "7\tprevious list\n"

static void test_pack_interrupted(void) {
    char cmd[1024];
    const char *exe = getenv("RECIO");
    long_list(T "/big.lst");
    sh("rm -f " T "/big.*.tmp*"); /* from an earlier failed run */
    put_text(T "/big.rec", OLD_REC);
    put_text(T "/big.skipped", OLD_SKIPPED);
    snprintf(cmd, sizeof cmd, "%s pack --quiet --resize 300 " T "/big " PHOTOS " >/dev/null 2>&1 & p=$!; sleep 0.5; kill -TERM $p; wait $p",
             exe && *exe ? exe : "build/recio");
    CHECK(system(cmd) != 0); /* the shell reports the pack's death by SIGTERM */
    CHECK(sh("ls " T "/big.*.tmp* >/dev/null 2>&1") != 0);
    CHECK(same_text(T "/big.rec", OLD_REC));
    CHECK(same_text(T "/big.skipped", OLD_SKIPPED)); /* it used to be emptied at the start */
}

/* A second pack to a prefix that one is writing stops at once (it used to write the same PREFIX.rec.tmp:
   a .rec holding B's records followed by A's tail, and exit 0); the first is not disturbed. */
static void test_pack_concurrent_same_prefix(void) {
    char cmd[1024];
    const char *exe = getenv("RECIO");
    int i;
    long_list(T "/race.lst");
    sh("rm -f " T "/race.*.tmp* " T "/race.*.old*");
    put_text(T "/race.rec", OLD_REC);
    put_text(T "/race.skipped", OLD_SKIPPED);
    snprintf(cmd, sizeof cmd, "%s pack --quiet --resize 300 " T "/race " PHOTOS " >/dev/null 2>&1 & p=$!; sleep 0.4; "
             "%s pack --quiet --pass-through " T "/race " PHOTOS " >" T "/race.out 2>&1; b=$?; kill -TERM $p; wait $p; exit $b",
             exe && *exe ? exe : "build/recio", exe && *exe ? exe : "build/recio");
    i = system(cmd);
    CHECK(WIFEXITED(i) && WEXITSTATUS(i) == 1);
    read_text(T "/race.out", err_text, sizeof err_text);
    CHECK(strstr(err_text, "race.lst: another recio pack is writing") != NULL);
    CHECK(same_text(T "/race.rec", OLD_REC));
    CHECK(same_text(T "/race.skipped", OLD_SKIPPED));
    CHECK(sh("ls " T "/race.*.tmp* " T "/race.*.old* >/dev/null 2>&1") != 0);
    /* the lock goes with its process: the next pack runs */
    put_text(T "/race.lst", "0\t0\tretina-120x90.jpg\n1\t0\tnot-there.jpg\n");
    CHECK_EQ_INT(recio("pack --quiet " T "/race " PHOTOS), 0);
    CHECK(strstr(out_text, "1 packed, 1 skipped") != NULL);
    CHECK_EQ_INT(count_lines(T "/race.skipped"), 1);
    put_text(T "/race.lst", "0\t0\tretina-120x90.jpg\n");
    CHECK_EQ_INT(recio("pack --quiet " T "/race " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/race.skipped"), -1); /* nothing skipped: the stale list goes with the commit */
}

static void test_pack_usage(void) {
    CHECK_EQ_INT(recio("pack --quality 0 " T "/x " PHOTOS), 2);
    CHECK_EQ_INT(recio("pack --encoding .gif " T "/x " PHOTOS), 2);
    CHECK_EQ_INT(recio("pack --bogus " T "/x " PHOTOS), 2);
    CHECK_EQ_INT(recio("pack " T "/does-not-exist " PHOTOS), 1);
    CHECK(strstr(err_text, "does-not-exist.lst") != NULL);
    CHECK_EQ_INT(recio("pack --help"), 0);
    CHECK(strstr(out_text, "usage: recio pack") != NULL);
}

/* pack's and list's numeric options take what their --help says and nothing else: decimal digits (a
   '-' first only where a negative value means something: --color -1), within the range --help
   gives; anything else is bad usage (exit 2, before any work) naming the option and its range.
   strtol and strtod used to take " 5", "+5", "0x0.8", "" (as 0) and "5 "; list --chunks took any
   count, and 4000000000 (or 2^64-1, whose chunk size wrapped to 0) wrote empty lists for ever. */
static void test_numeric_options(void) {
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"pack --resize ' 64'", "bad value ' 64' for --resize: a whole number from 0 to 65536"},
        {"pack --resize +64", "bad value '+64' for --resize: a whole number from 0 to 65536"},
        {"pack --resize '64 '", "bad value '64 ' for --resize: a whole number from 0 to 65536"},
        {"pack --resize 64px", "bad value '64px' for --resize: a whole number from 0 to 65536"},
        {"pack --resize 65537", "bad value '65537' for --resize: a whole number from 0 to 65536"},
        {"pack --resize 99999999999999999999", "bad value '99999999999999999999' for --resize: a whole number from 0 to"},
        {"pack --quality ' 90'", "bad value ' 90' for --quality: a whole number from 1 to 100"},
        {"pack --quality +90", "bad value '+90' for --quality: a whole number from 1 to 100"},
        {"pack --quality 0x5a", "bad value '0x5a' for --quality: a whole number from 1 to 100"},
        {"pack --quality 101", "bad value '101' for --quality: a whole number from 1 to 100"},
        {"pack --color +1", "bad value '+1' for --color: a whole number from -1 to 1"},
        {"pack --color ' -1'", "bad value ' -1' for --color: a whole number from -1 to 1"},
        {"pack --color -2", "bad value '-2' for --color: a whole number from -1 to 1"},
        {"pack --num-thread +2", "bad value '+2' for --num-thread: a whole number from 1 to 256"},
        {"pack --num-thread 257", "bad value '257' for --num-thread: a whole number from 1 to 256"},
        {"list --train-ratio ' 0.5'", "bad value ' 0.5' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio +0.5", "bad value '+0.5' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio 0x0.8", "bad value '0x0.8' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio ''", "bad value '' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio nan", "bad value 'nan' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio -0.1", "bad value '-0.1' for --train-ratio: a number from 0 to 1"},
        {"list --train-ratio 1.5", "bad value '1.5' for --train-ratio: a number from 0 to 1"},
        {"list --test-ratio '0.2 '", "bad value '0.2 ' for --test-ratio: a number from 0 to 1"},
        {"list --test-ratio inf", "bad value 'inf' for --test-ratio: a number from 0 to 1"},
        {"list --test-ratio 1e999", "bad value '1e999' for --test-ratio: a number from 0 to 1"},
        {"list --chunks 0", "bad value '0' for --chunks: a whole number from 1 to 65536"},
        {"list --chunks ' 2'", "bad value ' 2' for --chunks: a whole number from 1 to 65536"},
        {"list --chunks 4000000000", "bad value '4000000000' for --chunks: a whole number from 1 to 65536"},
        {"list --chunks 18446744073709551615", "bad value '18446744073709551615' for --chunks: a whole number from 1 to 65536"},
        {"list --seed +5", "bad value '+5' for --seed: a whole number from 0 to 18446744073709551615"},
    };
    static char out[8192];
    char cmd[512];
    size_t i;
    if (!t_recio_tool()) return;
    CHECK(sh("rm -f " T "/num*") == 0);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st;
        snprintf(cmd, sizeof cmd, "%s " T "/num " PHOTOS, bad[i].args);
        st = t_recio_capture(cmd, 30, out, sizeof out); /* 124 when it runs on */
        CHECK_EQ_INT(st, 2);
        CHECK(strstr(out, bad[i].says) != NULL);
        if (st != 2 || !strstr(out, bad[i].says)) fprintf(stderr, "  recio %s: exit %d, said: %s\n", cmd, st, out);
    }
    CHECK_EQ_INT(count_lines(T "/num.lst"), -1); /* nothing was written */
    /* the values --help names still go through: -1 and -0, the bounds, a fraction with an exponent */
    CHECK_EQ_INT(recio("pack --color -1 --color -0 --quality 1 --quality 100 --resize 0 --resize 65536 --num-thread 256 " T "/num " PHOTOS), 1);
    CHECK(strstr(err_text, "num.lst") != NULL); /* parsed: the missing list is the error */
    CHECK_EQ_INT(recio("list --no-shuffle --train-ratio 2.5e-1 --test-ratio .5 " T "/numr " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/numr_test.lst"), 6); /* int(12 * 0.5) */
    CHECK_EQ_INT(count_lines(T "/numr_train.lst"), 3); /* int(12 * 0.25) */
    CHECK_EQ_INT(count_lines(T "/numr_val.lst"), 3);
}

/* ---- unpack and show ----------------------------------------------------------------------------- */

static void test_unpack_roundtrip(void) {
    char a[256], b[256];
    int i;
    write_photo_lst(T "/rt.lst");
    CHECK_EQ_INT(recio("pack --pass-through " T "/rt " PHOTOS), 0);
    CHECK(sh("rm -rf " T "/rt_out") == 0);
    CHECK_EQ_INT(recio("unpack " T "/rt.rec " T "/rt_out"), 0);
    for (i = 0; i < NPHOTOS; i++) {
        const char *ext = strrchr(photo[i], '.');
        snprintf(a, sizeof a, PHOTOS "/%s", photo[i]);
        snprintf(b, sizeof b, T "/rt_out/%d%s", i, ext);
        CHECK(same_file(a, b));
    }
    CHECK_EQ_INT(count_lines(T "/rt_out/rt.lst"), NPHOTOS);
    /* and packing the unpacked files again gives the same .rec */
    CHECK_EQ_INT(recio("pack --pass-through " T "/rt_out/rt " T "/rt_out"), 0);
    CHECK(same_file(T "/rt.rec", T "/rt_out/rt.rec"));
}

static void test_show_png_size(void) {
    size_t n = 0;
    unsigned char *png;
    write_photo_lst(T "/sh.lst");
    CHECK_EQ_INT(recio("pack --resize 40 " T "/sh " PHOTOS), 0);
    /* 5 records, tile 32: ceil(sqrt(5)) = 3 columns, 2 rows; cell (32+4) x (32+4+11) */
    CHECK_EQ_INT(recio("show " T "/sh.rec " T "/sheet.png --n 5 --tile 32"), 0);
    png = t_slurp(T "/sheet.png", &n);
    CHECK(png && n > 24 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(png + 12, "IHDR", 4) == 0);
    if (png && n > 24) { /* IHDR width and height, big-endian */
        CHECK_EQ_INT(((unsigned)png[16] << 24 | (unsigned)png[17] << 16 | (unsigned)png[18] << 8 | png[19]), 108);
        CHECK_EQ_INT(((unsigned)png[20] << 24 | (unsigned)png[21] << 16 | (unsigned)png[22] << 8 | png[23]), 94);
    }
    free(png);
    /* every record, 4 columns: 12 -> 3 rows of 132 x 143 cells */
    CHECK_EQ_INT(recio("show " T "/sh.rec " T "/sheet2.png --cols 4"), 0);
    png = t_slurp(T "/sheet2.png", &n);
    CHECK(png && n > 24 && png[18] * 256 + png[19] == 4 * 132 && png[22] * 256 + png[23] == 3 * 143);
    free(png);
    CHECK_EQ_INT(recio("show " T "/sh.rec"), 2);
}

/* The centre pixel of tile k (tile 32, 3 columns) of a sheet PNG. */
static void sheet_px(const char *path, int k, unsigned char rgb[3]) {
    rec_t r;
    unsigned char *px;
    int w = 0, h = 0;
    memset(&r, 0, sizeof r);
    r.img = t_slurp(path, &r.img_n);
    px = r.img ? load_rgb(&r, &w, &h) : NULL;
    memset(rgb, 0, 3);
    if (px && w == 108) memcpy(rgb, px + ((size_t)((k / 3) * 47 + 2 + 16) * w + (k % 3) * 36 + 2 + 16) * 3, 3);
    free(px);
    free(r.img);
}

static void test_show_spec(void) {
    unsigned char a[3], b[3];
    int k, gray = 1;
    write_photo_lst(T "/sp.lst");
    CHECK_EQ_INT(recio("pack --pass-through " T "/sp " PHOTOS), 0);
    /* 'gray' puts g in R, G and B: every tile's centre is neutral; without it, the coffee is not */
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_gray.png --n 9 --tile 32 --spec gray"), 0);
    for (k = 0; k < 9; k++) {
        sheet_px(T "/sp_gray.png", k, a);
        gray &= a[0] == a[1] && a[1] == a[2];
    }
    CHECK(gray);
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_plain.png --n 9 --tile 32"), 0);
    sheet_px(T "/sp_plain.png", 6, b); /* coffee-500x333.jpg: a red-brown cup */
    CHECK(b[0] > b[2] + 20);
    /* random ops follow the seed: the same seed gives the same sheet, another seed another one */
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_r1.png --n 9 --tile 32 --seed 3 --spec 'random_resized_crop(48)'"), 0);
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_r2.png --n 9 --tile 32 --seed 3 --spec 'random_resized_crop(48)'"), 0);
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_r3.png --n 9 --tile 32 --seed 4 --spec 'random_resized_crop(48)'"), 0);
    CHECK(same_file(T "/sp_r1.png", T "/sp_r2.png"));
    CHECK(!same_file(T "/sp_r1.png", T "/sp_r3.png"));
    /* a float CHW tensor is shown too (stretched to 0..255) */
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_f.png --n 4 --tile 32 --spec 'resize_short(40) center_crop(32) normalize(imagenet) chw'"), 0);
    CHECK(strstr(out_text, "4 records") != NULL);
    /* a bad spec is bad usage, with the column of the mistake */
    CHECK_EQ_INT(recio("show " T "/sp.rec " T "/sp_bad.png --spec 'resize_short(40) flipp'"), 2);
    CHECK(strstr(err_text, "flipp") != NULL);
}

/* ---- im2rec habits (issue 14) -------------------------------------------------------------------- */

/* Fields stripped, a trailing tab, an absolute path, malformed lines said and skipped (the pack goes
   on and counts them), a duplicated index warned about. */
static void test_pack_im2rec_lines(void) {
    char cwd[2048], text[4096];
    rec_t r[8];
    int n;
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(text, sizeof text,
             "0 \t 0 \t retina-120x90.jpg \n"           /* spaces around the tabs, as real lists have */
             "1\t1\t%s/" PHOTOS "/coffee-500x333.jpg\t\n" /* absolute, and a trailing tab */
             "no tabs here\n"
             "2\tx\tchelsea-500x375.jpg\n"
             "1\t2\trocket-640x480.jpg\n",                /* index 1 again */
             cwd);
    put_text(T "/im2.lst", text);
    CHECK_EQ_INT(recio("pack --quiet " T "/im2 " PHOTOS), 0);
    CHECK(strstr(out_text, "3 packed, 0 skipped") != NULL);
    CHECK(strstr(out_text, "2 malformed lines skipped") != NULL);
    CHECK(strstr(err_text, "im2.lst: line 3: expected 'index<TAB>label...<TAB>path' (line skipped)") != NULL);
    CHECK(strstr(err_text, "im2.lst: line 4: a label is not a number (line skipped)") != NULL);
    CHECK(strstr(err_text, "warning: index 1 is on 2 lines") != NULL);
    n = read_recs(T "/im2.rec", r, 8);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        int w = 0, h = 0, c = 0;
        CHECK(info_of(&r[0], &w, &h, &c) && w == 120 && h == 90);
        CHECK(info_of(&r[1], &w, &h, &c) && w == 500 && h == 333);
        CHECK(r[1].id == 1 && r[1].label == 1.0f && r[2].id == 1 && r[2].label == 2.0f);
    }
    free_recs(r, n);
    CHECK_EQ_INT(recio("pack --quiet --strict " T "/im2 " PHOTOS), 1);
}

/* A NUL inside a path is refused with a message, not cut short into another file's name. */
static void test_pack_nul_in_path(void) {
    FILE *f = fopen(T "/nul.lst", "wb");
    if (f) fwrite("0\t0\tretina-120x90.jpg\n1\t0\tretina-120x90.jpg\0.png\n", 1, 48, f), fclose(f);
    CHECK_EQ_INT(recio("pack --quiet " T "/nul " PHOTOS), 0);
    CHECK(strstr(err_text, "nul.lst: line 2: a NUL byte in the path") != NULL);
    CHECK(strstr(out_text, "1 packed") != NULL && strstr(out_text, "1 malformed line skipped") != NULL);
}

/* `pack PREFIX` packs every PREFIX*.lst, as im2rec does after --train-ratio or --chunks. */
static void test_pack_every_list(void) {
    rec_t r[NPHOTOS];
    int a, b;
    sh("rm -f " T "/every*");
    CHECK_EQ_INT(recio("list --train-ratio 0.5 " T "/every " PHOTOS), 0);
    CHECK_EQ_INT(recio("pack --quiet --resize 32 " T "/every " PHOTOS), 0);
    a = read_recs(T "/every_train.rec", r, NPHOTOS);
    free_recs(r, a);
    b = read_recs(T "/every_val.rec", r, NPHOTOS);
    free_recs(r, b);
    CHECK_EQ_INT(a, 6);
    CHECK_EQ_INT(b, 6);
    CHECK(strstr(out_text, "every_train.lst:") != NULL && strstr(out_text, "every_val.lst:") != NULL);
    /* named with .lst, or PREFIX.lst exists: that list alone */
    sh("rm -f " T "/every_val.rec");
    CHECK_EQ_INT(recio("pack --quiet --resize 32 " T "/every_train.lst " PHOTOS), 0);
    CHECK(fopen(T "/every_val.rec", "rb") == NULL);
    sh("cp " T "/every_train.lst " T "/every.lst");
    CHECK_EQ_INT(recio("pack --quiet --resize 32 " T "/every " PHOTOS), 0);
    CHECK(fopen(T "/every_val.rec", "rb") == NULL && strstr(out_text, "every_train") == NULL);
}

/* --quality is the PNG compression level with --encoding .png (im2rec's cv2.IMWRITE_PNG_COMPRESSION). */
static void test_pack_png_level(void) {
    size_t n1 = 0, n9 = 0;
    unsigned char *b;
    write_photo_lst(T "/png1.lst");
    write_photo_lst(T "/png9.lst");
    CHECK_EQ_INT(recio("pack --quiet --resize 64 --encoding .png --quality 1 " T "/png1 " PHOTOS), 0);
    CHECK_EQ_INT(recio("pack --quiet --resize 64 --encoding .png --quality 9 " T "/png9 " PHOTOS), 0);
    b = t_slurp(T "/png1.rec", &n1);
    free(b);
    b = t_slurp(T "/png9.rec", &n9);
    free(b);
    CHECK(n1 > 0 && n9 > 0 && n9 < n1);
}

/* im2rec's `--exts .jpg .png` form. */
static void test_list_exts_words(void) {
    CHECK_EQ_INT(recio("list --no-shuffle --exts .png .PNG " T "/lx " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/lx.lst"), 2);
    CHECK_EQ_INT(recio("list --no-shuffle --exts .png,.jpg " T "/lx " PHOTOS), 0);
    CHECK_EQ_INT(count_lines(T "/lx.lst"), NPHOTOS);
}

/* `recio index` rebuilds the keys pack wrote (the .lst index, in the header id), not 0, 1, 2. */
static void test_index_keys_from_ids(void) {
    FILE *f = fopen(T "/keys.lst", "wb");
    int i;
    for (i = 0; f && i < 4; i++) fprintf(f, "%d\t0\t%s\n", 100 - 7 * i, photo[i]);
    if (f) fclose(f);
    CHECK_EQ_INT(recio("pack --quiet --pass-through " T "/keys " PHOTOS), 0);
    CHECK_EQ_INT(recio("index -o " T "/keys2.idx " T "/keys.rec"), 0);
    CHECK(same_file(T "/keys.idx", T "/keys2.idx"));
    CHECK_EQ_INT(recio("index --ordinal -o " T "/keys3.idx " T "/keys.rec"), 0);
    read_text(T "/keys3.idx", err_text, sizeof err_text);
    CHECK(strncmp(err_text, "0\t0\n1\t", 6) == 0);
}

/* Without -o, `recio index` writes the .idx the split reads (recio_index_path): KEYS.rec.idx when
   there is one (a stale one is what needs rebuilding), else im2rec's KEYS.idx. */
static void test_index_default_output(void) {
    FILE *f = fopen(T "/keys.rec.idx", "wb");
    if (f) fputs("7\t0\n", f), fclose(f);
    remove(T "/keys.idx");
    CHECK_EQ_INT(recio("index --ordinal " T "/keys.rec"), 0);
    read_text(T "/keys.rec.idx", err_text, sizeof err_text);
    CHECK(strncmp(err_text, "0\t0\n1\t", 6) == 0);
    CHECK(access(T "/keys.idx", F_OK) != 0);
    remove(T "/keys.rec.idx");
    CHECK_EQ_INT(recio("index --ordinal " T "/keys.rec"), 0);
    read_text(T "/keys.idx", err_text, sizeof err_text);
    CHECK(strncmp(err_text, "0\t0\n1\t", 6) == 0);
}

/* The bar fits the terminal: no redraw wider than the window (here 50 columns). */
/* The widest bar drawn on a terminal with $COLUMNS set to columns; 0 when none. */
static int bar_width(const char *columns) {
    char cmd[1024], *p, *line;
    const char *exe = getenv("RECIO");
    int widest = 0;
    snprintf(cmd, sizeof cmd, "COLUMNS=%s script -qec '%s pack --resize 32 " T "/bar " PHOTOS "' /dev/null </dev/null >" T "/bar.txt 2>&1",
             columns, exe && *exe ? exe : "build/recio");
    CHECK(system(cmd) == 0);
    read_text(T "/bar.txt", out_text, sizeof out_text);
    CHECK(strstr(out_text, "12/12") != NULL);
    for (line = p = out_text;; p++)
        if (*p == '\r' || *p == '\n' || !*p) {
            if (*line == '[' && (int)(p - line) > widest) widest = (int)(p - line); /* a redraw of the bar */
            if (!*p) break;
            line = p + 1;
        }
    return widest;
}

static void test_progress_width(void) {
    int w;
    if (system("command -v script >/dev/null 2>&1") != 0) {
        t_skip("script(1) is missing: the progress bar needs a terminal", 1);
        return;
    }
    write_photo_lst(T "/bar.lst");
    w = bar_width("50");
    CHECK(w > 0 && w < 50);
    /* 2^32 + 50 is no width: the default 80 (atoi wrapped it to 50, and its overflow is undefined) */
    w = bar_width("4294967346");
    CHECK(w >= 50 && w < 80);
}

/* `recio help pack`; apply's errors name the op and the sizes (WxH); an unknown op names the nearest valid one. */
static void test_help_and_spec_errors(void) {
    CHECK_EQ_INT(recio("help pack"), 0);
    CHECK(strncmp(out_text, "usage: recio pack", 17) == 0);
    CHECK_EQ_INT(recio("help nosuch"), 2);
    CHECK_EQ_INT(recio("apply --spec 'resize(100,80) center_crop(900)' " PHOTOS "/retina-120x90.jpg " T "/x.png"), 1);
    CHECK(strstr(err_text, "center_crop(900) cannot take the 100x80 image (WxH, 3 channels)") != NULL);
    CHECK_EQ_INT(recio("apply --spec 'flipp' " PHOTOS "/retina-120x90.jpg " T "/x.png"), 2);
    CHECK(strstr(err_text, "unknown op 'flipp'") != NULL);
    CHECK(strstr(err_text, "unknown op 'flipp' (did you mean 'flip'?)") != NULL); /* the library names the nearest op */
    CHECK(strstr(err_text, "docs/image.md") != NULL);
    CHECK_EQ_INT(recio("apply --spec 'randaugmnt(2,9)' " PHOTOS "/retina-120x90.jpg " T "/x.png"), 2);
    CHECK(strstr(err_text, "unknown op 'randaugmnt' (did you mean 'randaugment'?)") != NULL);
}

int main(void) {
    if (sh("mkdir -p " T) != 0) return 1;
    RUN(test_list_sorted);
    RUN(test_list_shuffle_seed);
    RUN(test_list_recursive);
    RUN(test_list_links);
    RUN(test_list_unlistable_names);
    RUN(test_list_splits);
    RUN(test_pack_resize);
    RUN(test_pack_imagenet_shrink);
    RUN(test_pack_pass_through);
    RUN(test_pack_threads_identical);
    RUN(test_pack_bad_inputs);
    RUN(test_pack_exif);
    RUN(test_pack_exif_byte_orders);
    RUN(test_pack_colour_kinds);
    RUN(test_pack_16bit);
    RUN(test_pack_labels);
    RUN(test_pack_wrong_root_keeps_dataset);
    RUN(test_pack_interrupted);
    RUN(test_pack_concurrent_same_prefix);
    RUN(test_pack_usage);
    RUN(test_numeric_options);
    RUN(test_unpack_roundtrip);
    RUN(test_show_png_size);
    RUN(test_show_spec);
    RUN(test_pack_im2rec_lines);
    RUN(test_pack_nul_in_path);
    RUN(test_pack_every_list);
    RUN(test_pack_png_level);
    RUN(test_list_exts_words);
    RUN(test_index_keys_from_ids);
    RUN(test_index_default_output);
    RUN(test_progress_width);
    RUN(test_help_and_spec_errors);
    return t_done("pack");
}
