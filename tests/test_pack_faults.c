/* Fault injection for the commands that write files (`recio pack`, `index -o`, `salvage`, `list`,
   `mean`, `show`, `unpack`, `apply` with --boxes-out and --mask-out): the program runs with
   tests/faultshim.c preloaded, once for every file operation it makes, with that one operation
   failing (EIO, ENOSPC for writes); once more with every read and write moving 3 bytes at a time
   (pack). After each run the folder holds exactly the old outputs, or exactly the new ones: the .rec,
   .idx and .skipped of one pack together, apply's image, boxes and mask together, an unpack's list
   and images together, never a mix, never a temporary file left behind.
   The one allowed difference: a failed read of an image makes pack skip that image, so a successful
   run may hold fewer records, each a sound run's record byte for byte, each missing one named in
   .skipped. POSIX native builds only (the shim is an LD_PRELOAD library). `recio iter` writes no
   file, but reads several (the .rec, its .idx, the .lst, the mean .npy): under each failure it exits
   0 with a sound run's batches, or 1 with the error said after printing only batches a sound run
   prints first, never a wrong batch. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "tmpdir.h"
#include "image_write.h"
#include <stdlib.h>
#include <sys/wait.h>

static char dir[64], shim[1024], failed_op[32], err_text[8192];
static char out_to[128] = "/dev/null"; /* where the command's stdout goes */

typedef struct blob {
    unsigned char *p; /* NULL: the file does not exist */
    size_t n;
} blob;

/* The outputs of one run: up to NOUT files of the folder (a prefix's .rec, .idx, .skipped, .lst; or a
   command's own names). */
#define NOUT 8
typedef struct fileset {
    char name[NOUT][64];
    int n;
} fileset;
typedef struct outputs {
    blob f[NOUT];
} outputs;
static const char *const ext[4] = {".rec", ".idx", ".skipped", ".lst"};

static void path_of(char *p, size_t cap, const char *name) { snprintf(p, cap, "%s/%s", dir, name); }

/* PREFIX.rec, .idx, .skipped and .lst. */
static fileset prefix_set(const char *prefix) {
    fileset fs;
    int i;
    for (i = 0; i < 4; i++) snprintf(fs.name[i], sizeof fs.name[i], "%s%s", prefix, ext[i]);
    fs.n = 4;
    return fs;
}

static outputs grab(const fileset *fs) {
    outputs o;
    char p[256];
    int i;
    memset(&o, 0, sizeof o);
    for (i = 0; i < fs->n; i++) {
        path_of(p, sizeof p, fs->name[i]);
        o.f[i].p = t_slurp(p, &o.f[i].n);
    }
    return o;
}
static void put_back(const fileset *fs, const outputs *o) {
    char p[256];
    int i;
    for (i = 0; i < fs->n; i++) {
        FILE *f;
        path_of(p, sizeof p, fs->name[i]);
        remove(p);
        if (!o->f[i].p) continue;
        f = fopen(p, "wb");
        CHECK(f && fwrite(o->f[i].p, 1, o->f[i].n, f) == o->f[i].n);
        if (f) fclose(f);
    }
}
static void drop(outputs *o) {
    int i;
    for (i = 0; i < NOUT; i++) free(o->f[i].p), o->f[i].p = NULL;
}
static int same_blob(const blob *a, const blob *b) {
    if (!a->p || !b->p) return !a->p && !b->p;
    return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}
static int same_outputs(const outputs *a, const outputs *b) {
    int i, same = 1;
    for (i = 0; i < NOUT; i++) same &= same_blob(&a->f[i], &b->f[i]);
    return same;
}
static int lines(const blob *b) {
    size_t i;
    int n = 0;
    for (i = 0; b->p && i < b->n; i++) n += b->p[i] == '\n';
    return n;
}

/* Names in the folder other than the expected ones (a temporary or a kept-aside file left behind):
   said, counted and removed, so the next run starts clean. */
static int strays(const char *const *expected, int n, int rc) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int bad = 0, i;
    if (!d) return 1;
    while ((e = readdir(d)) != NULL) {
        int known = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
        for (i = 0; i < n && !known; i++) known = !strcmp(e->d_name, expected[i]);
        if (!known) {
            char p[512];
            /* a kept copy whose removal failed after a good commit loses nothing, if the user is told */
            int told = rc == 0 && !strcmp(failed_op, "remove") && strstr(err_text, e->d_name) && strstr(err_text, "remove it by hand");
            if (!told) printf("  left behind: %s\n", e->d_name);
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
            bad |= !told;
        }
    }
    closedir(d);
    return bad;
}

/* The command under the shim; fail_at 0: no fault. *calls: how many points the run had. */
static int run(const char *args, long fail_at, int shorts, long *calls) {
    char cmd[2048], log[256], errp[128];
    const char *exe = getenv("RECIO"), *pwd = getenv("PWD");
    size_t n = 0;
    unsigned char *txt;
    int st;
    path_of(log, sizeof log, "fault.log");
    snprintf(cmd, sizeof cmd,
             "cd %s && ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 RECIO_FAULT_AT=%ld RECIO_FAULT_SHORT=%d "
             "RECIO_FAULT_LOG=%s LD_PRELOAD=%s %s%s %s >%s 2>%s.err",
             dir, fail_at, shorts, log, shim, exe && *exe ? exe : pwd ? pwd : ".", exe && *exe ? "" : "/build/recio", args, out_to, dir);
    st = system(cmd);
    snprintf(errp, sizeof errp, "%s.err", dir); /* beside the folder: every name in it is checked */
    txt = t_slurp(errp, &n);
    snprintf(err_text, sizeof err_text, "%.*s", (int)(txt ? n : 0), txt ? (const char *)txt : "");
    free(txt);
    remove(errp);
    txt = t_slurp(log, &n);
    *calls = txt ? atol((const char *)txt) : -1;
    failed_op[0] = 0;
    if (txt && strchr((const char *)txt, ' ')) sscanf(strchr((const char *)txt, ' ') + 1, "%31s", failed_op);
    free(txt);
    remove(log);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every record of a .rec held in memory, in order; how many, or -1. */
static int records(const blob *rec, blob *out, int max) {
    recio_reader *r;
    recio_record x;
    int n = 0;
    if (!rec->p || recio_reader_open_mem(&r, rec->p, rec->n) != RECIO_OK) return -1;
    while (n < max && recio_reader_next(r, &x) == RECIO_OK) {
        out[n].p = (unsigned char *)malloc(x.size + 1);
        memcpy(out[n].p, x.data, x.size);
        out[n++].n = x.size;
    }
    recio_reader_close(r);
    return n;
}

/* A successful pack that skipped images the sound run packed: its records are the sound run's, in
   order, with gaps; one more .skipped line per gap; one .idx line per record. */
static int fewer_but_sound(const outputs *got, const outputs *sound) {
    blob a[64], b[64];
    int na = records(&got->f[0], a, 64), nb = records(&sound->f[0], b, 64), i, j = 0, ok = na >= 0 && nb >= 0;
    for (i = 0; ok && i < na; i++, j++) {
        while (j < nb && !same_blob(&a[i], &b[j])) j++;
        ok = j < nb;
    }
    ok = ok && lines(&got->f[1]) == na && lines(&got->f[2]) - lines(&sound->f[2]) == nb - na;
    for (i = 0; i < na; i++) free(a[i].p);
    for (i = 0; i < nb; i++) free(b[i].p);
    return ok;
}

static void put_text(const char *name, const char *text) {
    char p[256];
    FILE *f;
    path_of(p, sizeof p, name);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

static void copy_photo(const char *from, const char *to) {
    char src[256], dst[256];
    size_t n = 0;
    unsigned char *b;
    FILE *f;
    snprintf(src, sizeof src, "tests/data/photos/%s", from);
    path_of(dst, sizeof dst, to);
    b = t_slurp(src, &n);
    CHECK(b != NULL);
    f = fopen(dst, "wb");
    CHECK(f != NULL);
    if (f && b) fwrite(b, 1, n, f);
    if (f) fclose(f);
    free(b);
}

/* Drive `args` over every failure point with `old` in place; `sound` is what a clean run leaves. */
static void drive(const fileset *fs, const char *args, const outputs *old, const outputs *sound, long points,
                  const char *const *expected, int nexpected, int image_reads) {
    long n, calls, olds = 0, news = 0, fewer = 0, bad = 0;
    for (n = 1; n <= points + 2; n++) {
        outputs got;
        int rc;
        put_back(fs, old);
        rc = run(args, n, 0, &calls);
        got = grab(fs);
        if (same_outputs(&got, old) && rc != 0) olds++;
        else if (same_outputs(&got, sound) && rc == 0) news++;
        else if (rc == 0 && image_reads && fewer_but_sound(&got, sound)) fewer++;
        else {
            printf("  %s: failure point %ld of %ld (%s): exit %d with %s outputs\n", args, n, calls, failed_op, rc,
                   same_outputs(&got, old) ? "the old" : same_outputs(&got, sound) ? "the new" : "mixed");
            bad++;
        }
        if (strays(expected, nexpected, rc)) printf("  (after failure point %ld, a failed %s, exit %d)\n", n, failed_op, rc), bad++;
        fflush(stdout);
        drop(&got);
        if (bad > 20) break;
    }
    printf("  %s: %ld failure points: %ld kept the old outputs, %ld gave the new, %ld skipped an unreadable image\n",
           args, points, olds, news, fewer);
    CHECK(bad == 0);
    CHECK(olds > 0 && news > 0);
}

static void test_pack_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "fault.log"};
    fileset ds = prefix_set("ds");
    outputs old, sound, got;
    long points = 0, calls;
    copy_photo("retina-120x90.jpg", "imgs/a.jpg");
    copy_photo("rocket-alpha-256x256.png", "imgs/b.png");
    copy_photo("camera-gray-400x300.jpg", "imgs/c.jpg");
    copy_photo("chelsea-500x375.jpg", "imgs/d.jpg");
    put_text("imgs/bad.jpg", "not an image at all");
    /* the old dataset: two images and a skipped one */
    put_text("ds.lst", "0\t1\ta.jpg\n1\t2\tbad.jpg\n2\t0\tc.jpg\n");
    CHECK_EQ_INT(run("pack ds imgs", 0, 0, &calls), 0);
    /* the new one: four images, the bad one again, resized so the encoder runs too */
    put_text("ds.lst", "0\t1\ta.jpg\n1\t2\tb.png\n2\t0\tc.jpg\n3\t3\tbad.jpg\n4\t1\td.jpg\n");
    old = grab(&ds);
    CHECK(old.f[0].p && old.f[1].p && old.f[2].p);
    CHECK_EQ_INT(run("pack --resize 64 ds imgs", 0, 0, &points), 0);
    sound = grab(&ds);
    CHECK(sound.f[0].p && !same_outputs(&old, &sound) && lines(&sound.f[2]) == 1);
    CHECK(points > 20);
    drive(&ds, "pack --resize 64 ds imgs", &old, &sound, points, expected, 6, 1);
    /* reads and writes three bytes at a time: the same bytes */
    put_back(&ds, &old);
    CHECK_EQ_INT(run("pack --resize 64 ds imgs", 0, 1, &calls), 0);
    got = grab(&ds);
    CHECK(same_outputs(&got, &sound));
    drop(&got);
    drop(&old);
    drop(&sound);
}

static void test_index_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "fault.log"};
    fileset ds = prefix_set("ds");
    outputs old, sound;
    long points = 0;
    /* after the pack test: ds.rec holds its new dataset; an index with other keys stands as the old */
    put_text("ds.idx", "7\t0\n");
    old = grab(&ds);
    CHECK_EQ_INT(run("index -o ds.idx ds.rec", 0, 0, &points), 0);
    sound = grab(&ds);
    CHECK(!same_outputs(&old, &sound) && points > 5);
    drive(&ds, "index -o ds.idx ds.rec", &old, &sound, points, expected, 6, 0);
    drop(&old);
    drop(&sound);
}

/* salvage IN OUT over an older OUT (and its .idx); list PREFIX ROOT over an older PREFIX.lst */
static void test_salvage_and_list_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "sv.rec", "sv.idx", "L.lst",
                                           "fault.log"};
    fileset sv = prefix_set("sv"), L = prefix_set("L");
    outputs old, sound;
    long points = 0;
    put_text("sv.rec", "");
    put_text("sv.idx", "0\t0\n");
    old = grab(&sv);
    CHECK_EQ_INT(run("salvage ds.rec sv.rec", 0, 0, &points), 0);
    sound = grab(&sv);
    CHECK(!same_outputs(&old, &sound) && sound.f[0].p && sound.f[0].n > 1000 && points > 5);
    drive(&sv, "salvage ds.rec sv.rec", &old, &sound, points, expected, 9, 0);
    drop(&old);
    drop(&sound);
    put_text("L.lst", "0\t0\told.jpg\n");
    old = grab(&L);
    CHECK_EQ_INT(run("list L imgs", 0, 0, &points), 0);
    sound = grab(&L);
    CHECK(!same_outputs(&old, &sound) && points > 3);
    drive(&L, "list L imgs", &old, &sound, points, expected, 9, 0);
    drop(&old);
    drop(&sound);
}

static fileset set_of(const char *const *names, int n) {
    fileset fs;
    int i;
    for (i = 0; i < n; i++) snprintf(fs.name[i], sizeof fs.name[i], "%s", names[i]);
    fs.n = n;
    return fs;
}

/* One command over one set of outputs: old (made by make_old, "" for none: the outputs absent), then
   every failure point of args. */
static void drive_command(const fileset *fs, const char *make_old, const char *args, const char *const *expected, int nexpected) {
    outputs none, old, sound;
    long points = 0, calls;
    memset(&none, 0, sizeof none);
    put_back(fs, &none);
    if (*make_old) CHECK_EQ_INT(run(make_old, 0, 0, &calls), 0);
    old = grab(fs);
    CHECK_EQ_INT(run(args, 0, 0, &points), 0);
    sound = grab(fs);
    CHECK(!same_outputs(&old, &sound) && points > 3);
    drive(fs, args, &old, &sound, points, expected, nexpected, 0);
    drop(&old);
    drop(&sound);
}

/* mean -o over an older mean, show over an older sheet */
static void test_mean_and_show_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "sv.rec", "sv.idx", "L.lst",
                                           "m.npy", "s.png", "fault.log"};
    static const char *const npy[] = {"m.npy"}, *const png[] = {"s.png"};
    fileset m = set_of(npy, 1), sheet = set_of(png, 1);
    drive_command(&m, "mean ds.rec --spec 'resize(4,4) float chw' -o m.npy", "mean ds.rec --spec 'resize(8,6) float chw' -o m.npy", expected, 11);
    drive_command(&sheet, "show ds.rec s.png --tile 8", "show ds.rec s.png --tile 16", expected, 11);
}

/* A grey 8-bit PNG of w x h, labels 0..3. */
static void put_mask(const char *name, int w, int h) {
    static unsigned char px[256 * 256];
    t_mem_out mem;
    char p[256];
    FILE *f;
    int x, y;
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) px[y * w + x] = (unsigned char)((x * 4 / w + y * 2 / h) & 3);
    mem.n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &mem, w, h, 1, px, w) && mem.n <= (int)sizeof mem.b);
    path_of(p, sizeof p, name);
    f = fopen(p, "wb");
    CHECK(f != NULL);
    if (f) fwrite(mem.b, 1, (size_t)mem.n, f), fclose(f);
}

/* apply's image, boxes and mask: all three new, or all three old */
static void test_apply_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "sv.rec", "sv.idx", "L.lst",
                                           "m.npy", "s.png", "a.jpg", "b.txt", "m.png", "o.png", "bo.txt", "mo.png", "fault.log"};
    static const char *const outs[] = {"o.png", "bo.txt", "mo.png"};
    fileset fs = set_of(outs, 3);
    copy_photo("retina-120x90.jpg", "a.jpg");
    put_text("b.txt", "0 0.1 0.2 0.5 0.6\n1 0.6 0.1 0.9 0.4\n");
    put_mask("m.png", 120, 90);
    drive_command(&fs, "apply --spec 'resize(60,45)' --boxes b.txt --boxes-out bo.txt --mask m.png --mask-out mo.png a.jpg o.png",
                  "apply --spec 'flip pad(4)' --boxes b.txt --boxes-out bo.txt --mask m.png --mask-out mo.png a.jpg o.png", expected, 17);
}

/* unpack into the folder: its list and every image it made, or none of them (a fresh folder), or
   the earlier unpack's (the same bytes again) */
static void test_unpack_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "sv.rec", "sv.idx", "L.lst",
                                           "m.npy", "s.png", "a.jpg", "b.txt", "m.png", "o.png", "bo.txt", "mo.png", "up.rec",
                                           "up.lst", "0.jpg", "1.jpg", "2.jpg", "4.jpg", "fault.log"};
    static const char *const outs[] = {"up.lst", "0.jpg", "1.jpg", "2.jpg", "4.jpg"};
    fileset fs = set_of(outs, 5);
    outputs none, sound;
    long points = 0, calls;
    char p[256];
    size_t n = 0;
    unsigned char *rec;
    FILE *f;
    path_of(p, sizeof p, "ds.rec"); /* ds.rec after the pack test: records 0, 1, 2 and 4 */
    rec = t_slurp(p, &n);
    path_of(p, sizeof p, "up.rec");
    CHECK(rec && (f = fopen(p, "wb")) != NULL && fwrite(rec, 1, n, f) == n && fclose(f) == 0);
    free(rec);
    drive_command(&fs, "", "unpack up.rec .", expected, 23);
    memset(&none, 0, sizeof none);
    put_back(&fs, &none);
    CHECK_EQ_INT(run("unpack up.rec .", 0, 0, &points), 0);
    sound = grab(&fs);
    CHECK(sound.f[0].p && sound.f[4].p);
    drive(&fs, "unpack up.rec .", &sound, &sound, points, expected, 23, 0);
    put_back(&fs, &none);
    CHECK_EQ_INT(run("unpack up.rec .", 0, 0, &calls), 0);
    drop(&sound);
}

/* iter over a shuffled dataset with its index, list and mean image, a worker reading: every failure
   point ends in a sound run's batches (exit 0), or in the error said (exit 1, "recio: ...") after
   only the batches a sound run prints first. */
static void test_iter_every_failure(void) {
    static const char *const expected[] = {"imgs", "ds.lst", "ds.rec", "ds.idx", "ds.skipped", "sv.rec", "sv.idx", "L.lst",
                                           "m.npy", "s.png", "a.jpg", "b.txt", "m.png", "o.png", "bo.txt", "mo.png", "up.rec",
                                           "up.lst", "0.jpg", "1.jpg", "2.jpg", "4.jpg", "im.npy", "fault.log"};
    static const char args[] = "iter ds.rec --spec 'resize(8,6) float chw' --batch 2 --shuffle --seed 3 --epochs 2 "
                               "--imglist ds.lst --mean-img im.npy --workers 1 --labels";
    long points = 0, calls, n, errs = 0, bad = 0;
    size_t ns = 0, ng;
    unsigned char *sound, *got;
    char prev[128];
    snprintf(prev, sizeof prev, "%s", out_to);
    CHECK_EQ_INT(run("mean ds.rec --spec 'resize(8,6) float chw' -o im.npy", 0, 0, &calls), 0);
    snprintf(out_to, sizeof out_to, "%s.out", dir); /* beside the folder: every name in it is checked */
    CHECK_EQ_INT(run(args, 0, 0, &points), 0);
    sound = t_slurp(out_to, &ns);
    CHECK(sound && ns > 0 && points > 5);
    for (n = 1; sound && n <= points + 2; n++) {
        int rc = run(args, n, 0, &calls), ok;
        got = t_slurp(out_to, &ng);
        ok = rc == 0 ? got && ng == ns && !memcmp(got, sound, ns)
                     : rc == 1 && !strncmp(err_text, "recio: ", 7) && (!got || (ng <= ns && !memcmp(got, sound, ng)));
        errs += rc != 0;
        if (!ok) printf("  iter: failure point %ld of %ld (%s): exit %d, %s\n", n, calls, failed_op, rc, err_text), bad++;
        bad += strays(expected, 24, rc);
        free(got);
        if (bad > 20) break;
    }
    printf("  iter: %ld failure points, %ld ended in an error\n", points, errs);
    CHECK(bad == 0 && errs > 0);
    remove(out_to);
    snprintf(out_to, sizeof out_to, "%s", prev);
    free(sound);
}

int main(void) {
    const char *build = getenv("RECIO_BUILD"), *runner = getenv("RUN");
    char imgs[128];
    snprintf(shim, sizeof shim, "%s/%s/tests/faultshim.so", getenv("PWD") ? getenv("PWD") : ".", build ? build : "build");
    if ((runner && *runner) || !build || access(shim, R_OK) != 0) {
        t_skip("the fault shim is an LD_PRELOAD library for native POSIX builds (run by make test)", 7);
        return t_done("test_pack_faults");
    }
    snprintf(dir, sizeof dir, "/tmp/recio-pfault-XXXXXX");
    CHECK(t_mkdtemp(dir) != NULL);
    path_of(imgs, sizeof imgs, "imgs");
    CHECK(t_mkdir(imgs) == 0);
    RUN(test_pack_every_failure);
    RUN(test_index_every_failure);
    RUN(test_salvage_and_list_every_failure);
    RUN(test_mean_and_show_every_failure);
    RUN(test_apply_every_failure);
    RUN(test_unpack_every_failure);
    RUN(test_iter_every_failure);
    path_of(imgs, sizeof imgs, "imgs");
    t_rmtree(imgs);
    t_rmtree(dir);
    return t_done("test_pack_faults");
}
