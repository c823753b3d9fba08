/* Where the commands write (issue 23 item 3): `recio show x.rec x.rec` replaced the dataset with a PNG
   and exited 0, `recio mean ... -o x.rec` replaced it with the .npy, `recio unpack data/x.rec data/`
   replaced data/x.lst, the only map back to the source paths. For every command that writes (show,
   mean, unpack, apply with its image, raw tensor, --boxes-out and --mask-out, pack, index, salvage,
   list): an output that is an input (another spelling, a hard link, a symbolic link) is refused with
   exit 2 naming both, --force or not; an existing file that is not the command's kind of output is
   refused unless --force (and replaced with it); one of its kind is replaced, so every command run
   twice with the same names still works (DESIGN.md section 4's forms). POSIX (the command is). */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "tmpdir.h"
#include "image_write.h"
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], err_text[1 << 14];
static const char *exe;

#define PHOTO "tests/data/photos/retina-120x90.jpg" /* 120x90 */

static const char *in_dir(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* "recio ARGS" run in the test folder; stderr into err_text; the exit status. */
static int R(const char *args) {
    char cmd[4096], errp[128];
    size_t n = 0;
    unsigned char *t;
    int st;
    snprintf(errp, sizeof errp, "%s.err", dir); /* beside the folder, whose names are checked */
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >/dev/null 2>%s", dir, exe, args, errp);
    st = system(cmd);
    t = t_slurp(errp, &n);
    snprintf(err_text, sizeof err_text, "%.*s", (int)(t ? n : 0), t ? (const char *)t : "");
    free(t);
    remove(errp);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void put(const char *name, const void *b, size_t n) {
    FILE *f = fopen(in_dir(name), "wb");
    CHECK(f != NULL);
    if (f) fwrite(b, 1, n, f), fclose(f);
}
static void put_text(const char *name, const char *text) { put(name, text, strlen(text)); }

static int has(const char *name, const void *b, size_t n) {
    size_t k = 0;
    unsigned char *x = t_slurp(in_dir(name), &k);
    int same = x && k == n && memcmp(x, b, n) == 0;
    free(x);
    return same;
}
static int has_text(const char *name, const char *text) { return has(name, text, strlen(text)); }

static int exists(const char *name) { return access(in_dir(name), F_OK) == 0; }

static int starts_with(const char *name, const char *sig, size_t k) {
    size_t n = 0;
    unsigned char *x = t_slurp(in_dir(name), &n);
    int ok = x && n >= k && memcmp(x, sig, k) == 0;
    free(x);
    return ok;
}

/* The bytes of a file, to check later that it is untouched. */
typedef struct kept {
    unsigned char *b;
    size_t n;
} kept;
static kept keep(const char *name) {
    kept k;
    k.n = 0;
    k.b = t_slurp(in_dir(name), &k.n);
    CHECK(k.b != NULL);
    return k;
}
static int same(const char *name, const kept *k) { return k->b && has(name, k->b, k->n); }

static int said(const char *text) {
    int ok = strstr(err_text, text) != NULL;
    if (!ok) printf("  expected '%s' in: %s", text, err_text);
    return ok;
}

/* The output named as an input: refused (exit 2), both named, the input untouched. */
static void refused_as_input(const char *args, const char *out, const char *in, const kept *k) {
    char words[600];
    int rc = R(args);
    if (rc != 2) printf("  %s: exit %d\n", args, rc);
    CHECK_EQ_INT(rc, 2);
    snprintf(words, sizeof words, "%s: is the input %s (the same file)", out, in);
    CHECK(said(words));
    CHECK(same(in, k));
}

/* An existing file not of the output's kind: refused without --force (exit 2, untouched, the
   message names it and --force), replaced with it. */
static void refused_unless_forced(const char *args, const char *out, const char *sig, size_t k) {
    char forced[2048];
    kept before = keep(out);
    int rc = R(args);
    if (rc != 2) printf("  %s: exit %d over an existing %s\n", args, rc, out);
    CHECK_EQ_INT(rc, 2);
    CHECK(said(out) && said("pass --force to replace it"));
    CHECK(same(out, &before));
    snprintf(forced, sizeof forced, "%s --force", args);
    CHECK_EQ_INT(R(forced), 0);
    CHECK(!same(out, &before) && starts_with(out, sig, k));
    free(before.b);
}

static void copy_photo(const char *name) {
    size_t n = 0;
    unsigned char *jpg = t_slurp(PHOTO, &n);
    CHECK(jpg != NULL);
    if (jpg) put(name, jpg, n);
    free(jpg);
}

/* A grey 8-bit PNG mask of the photo's size, labels 0..3. */
static void make_mask(const char *name) {
    static unsigned char px[90][120];
    t_mem_out m;
    int x, y;
    for (y = 0; y < 90; y++)
        for (x = 0; x < 120; x++) px[y][x] = (unsigned char)((x / 30 + y / 45) & 3);
    m.n = 0;
    CHECK(stbi_write_png_to_func(t_to_mem, &m, 120, 90, 1, px, 120) && m.n <= (int)sizeof m.b);
    put(name, m.b, (size_t)m.n);
}

/* x.lst (two photos) packed to x.rec + x.idx; a.jpg, the photo; b.txt, its boxes; m.png, its mask. */
static void setup(void) {
    copy_photo("a.jpg");
    copy_photo("c.jpg");
    put_text("x.lst", "0\t1\ta.jpg\n1\t2\tc.jpg\n");
    CHECK_EQ_INT(R("pack --quiet x ."), 0);
    CHECK(starts_with("x.rec", "\x0a\x23\xd7\xce", 4) && exists("x.idx"));
    put_text("b.txt", "0 0.1 0.2 0.5 0.6\n");
    make_mask("m.png");
}

/* The three reproductions of the issue. */
static void test_issue_reproductions(void) {
    kept rec = keep("x.rec"), lst;
    refused_as_input("show x.rec x.rec", "x.rec", "x.rec", &rec);
    refused_as_input("mean x.rec --spec 'resize(8,8) float chw' -o x.rec", "x.rec", "x.rec", &rec);
    CHECK(mkdir(in_dir("data"), 0755) == 0);
    CHECK(link(in_dir("x.rec"), in_dir("data/x.rec")) == 0);
    put_text("data/x.lst", "0\t1\t/photos/cat.jpg\n1\t2\t/photos/dog.jpg\n"); /* the map back to the sources */
    lst = keep("data/x.lst");
    CHECK_EQ_INT(R("unpack data/x.rec data/"), 2);
    CHECK(said("data/x.lst: exists and is not a list written by 'recio unpack'") && said("pass --force"));
    CHECK(same("data/x.lst", &lst) && !exists("data/0.jpg") && !exists("data/1.jpg")); /* stopped before writing */
    remove(in_dir("data/x.rec")), remove(in_dir("data/x.lst")), rmdir(in_dir("data"));
    free(rec.b);
    free(lst.b);
}

/* Every command, its output an input through another spelling, a hard link or a symbolic link. */
static void test_output_is_an_input(void) {
    kept rec = keep("x.rec"), img = keep("a.jpg"), boxes = keep("b.txt"), mask = keep("m.png"), lst;
    CHECK(link(in_dir("x.rec"), in_dir("hard.rec")) == 0 && symlink("x.rec", in_dir("soft.rec")) == 0);
    refused_as_input("show x.rec ./x.rec", "./x.rec", "x.rec", &rec);
    refused_as_input("show x.rec hard.rec", "hard.rec", "x.rec", &rec);
    refused_as_input("show x.rec soft.rec --force", "soft.rec", "x.rec", &rec);
    refused_as_input("mean 'c.rec;x.rec' --spec 'resize(8,8) float chw' -o hard.rec", "hard.rec", "x.rec", &rec);
    refused_as_input("index -o ./x.rec x.rec", "./x.rec", "x.rec", &rec);
    refused_as_input("index -o hard.rec --force x.rec", "hard.rec", "x.rec", &rec);
    refused_as_input("salvage x.rec ./x.rec", "./x.rec", "x.rec", &rec);
    refused_as_input("salvage x.rec soft.rec", "soft.rec", "x.rec", &rec);
    CHECK(link(in_dir("x.rec"), in_dir("s.idx")) == 0); /* OUT.idx beside OUT.rec is the input */
    refused_as_input("salvage x.rec s.rec", "s.idx", "x.rec", &rec);
    CHECK(!exists("s.rec"));
    refused_as_input("apply --spec flip a.jpg ./a.jpg", "./a.jpg", "a.jpg", &img);
    CHECK(link(in_dir("a.jpg"), in_dir("hard.jpg")) == 0);
    refused_as_input("apply --spec 'resize(4,4) float' --force a.jpg hard.jpg", "hard.jpg", "a.jpg", &img);
    refused_as_input("apply --spec flip --boxes b.txt --boxes-out ./b.txt a.jpg o.png", "./b.txt", "b.txt", &boxes);
    refused_as_input("apply --spec flip --mask m.png --mask-out ./m.png a.jpg o.png", "./m.png", "m.png", &mask);
    CHECK(!exists("o.png")); /* all outputs or none */
    CHECK_EQ_INT(R("apply --spec flip --boxes b.txt --boxes-out o.png a.jpg ./o.png"), 2); /* two outputs, one file */
    CHECK(said("are the same file: each output needs its own") && !exists("o.png"));
    /* pack: an output that is the list, or one of the images it reads */
    put_text("p.lst", "0\t1\ta.jpg\n");
    lst = keep("p.lst");
    CHECK(link(in_dir("p.lst"), in_dir("p.idx")) == 0);
    refused_as_input("pack --quiet --force p .", "p.idx", "p.lst", &lst);
    CHECK(!exists("p.rec"));
    remove(in_dir("p.idx")), remove(in_dir("p.lst"));
    put_text("q.lst", "0\t1\ta.jpg\n1\t1\tq.rec\n");
    CHECK(symlink("a.jpg", in_dir("q.rec")) == 0);
    CHECK_EQ_INT(R("pack --quiet --force q ."), 1);
    CHECK(said("is q.rec, an output of this pack (the same file): never packed over") && same("a.jpg", &img));
    CHECK(!exists("q.idx"));
    /* unpack: a record's file named as the input */
    CHECK(link(in_dir("x.rec"), in_dir("0.jpg")) == 0);
    CHECK_EQ_INT(R("unpack --force 0.jpg ."), 2);
    CHECK(said("./0.jpg: is the input 0.jpg (the same file)") && same("0.jpg", &rec) && !exists("0.jpg.lst"));
    remove(in_dir("0.jpg")), remove(in_dir("q.rec")), remove(in_dir("q.lst")), remove(in_dir("hard.jpg"));
    remove(in_dir("hard.rec")), remove(in_dir("soft.rec")), remove(in_dir("s.idx"));
    free(rec.b), free(img.b), free(boxes.b), free(mask.b), free(lst.b);
}

/* Every command over an existing file of another kind: refused, then replaced with --force. */
static void test_other_kinds_need_force(void) {
    static const char png[] = "\x89PNG\r\n\x1a\n", npy[] = "\x93NUMPY", rec[] = "\x0a\x23\xd7\xce";
    put_text("sheet.png", "notes I keep\n");
    refused_unless_forced("show x.rec sheet.png --tile 16", "sheet.png", png, 8);
    put_text("mean.npy", "notes I keep\n");
    refused_unless_forced("mean x.rec --spec 'resize(8,8) float chw' -o mean.npy", "mean.npy", npy, 6);
    put_text("o.f32", "0\t1\tcat.jpg\n"); /* text: a list, never a raw tensor */
    refused_unless_forced("apply --spec 'resize(4,4) float' a.jpg o.f32", "o.f32", "", 0);
    CHECK(exists("a.jpg"));
    copy_photo("o.f32"); /* a JPEG: not a tensor */
    refused_unless_forced("apply --spec 'resize(4,4) float' a.jpg o.f32", "o.f32", "", 0);
    put_text("o.png", "0 0.1 0.2 0.3 0.4\n");
    refused_unless_forced("apply --spec flip a.jpg o.png", "o.png", png, 8);
    put_text("bo.txt", "\x89PNG\r\n\x1a\n...");
    refused_unless_forced("apply --spec flip --boxes b.txt --boxes-out bo.txt a.jpg o2.png", "bo.txt", "0 ", 2);
    put_text("mo.png", "text\n");
    refused_unless_forced("apply --spec flip --mask m.png --mask-out mo.png a.jpg o3.png", "mo.png", png, 8);
    put_text("ix.idx", "\xff\xd8\xff\xe0 a photo");
    refused_unless_forced("index -o ix.idx x.rec", "ix.idx", "0\t", 2);
    put_text("sv.rec", "my notes\n");
    refused_unless_forced("salvage x.rec sv.rec", "sv.rec", rec, 4);
    put_text("sv.idx", "my notes\n");
    refused_unless_forced("salvage x.rec sv.rec", "sv.idx", "0\t", 2);
    CHECK(starts_with("sv.rec", rec, 4));
    put_text("L.lst", "\x89PNG\r\n\x1a\n");
    refused_unless_forced("list --no-shuffle L .", "L.lst", "0\t", 2);
    put_text("x.skipped", "my notes\n");
    CHECK_EQ_INT(R("pack --quiet x ."), 2);
    CHECK(said("x.skipped: exists and is not a list of skipped images") && has_text("x.skipped", "my notes\n"));
    CHECK_EQ_INT(R("pack --quiet --force x ."), 0);
    CHECK(!exists("x.skipped")); /* nothing skipped: the commit removes the stale list */
    put_text("x.idx", "\x89PNG\r\n\x1a\n");
    refused_unless_forced("pack --quiet x .", "x.idx", "0\t", 2);
    /* unpack: a source list; files in a folder that no earlier unpack wrote */
    CHECK(mkdir(in_dir("u"), 0755) == 0);
    put_text("u/x.lst", "0\t1\tcats/1.jpg\n");
    refused_unless_forced("unpack x.rec u", "u/x.lst", "0\t1\t0.jpg\n", 10);
    CHECK(mkdir(in_dir("v"), 0755) == 0);
    put_text("v/1.jpg", "mine");
    CHECK_EQ_INT(R("unpack x.rec v"), 2);
    CHECK(said("v/1.jpg: exists: not replaced (pass --force to replace it)"));
    CHECK(has_text("v/1.jpg", "mine") && !exists("v/0.jpg") && !exists("v/x.lst")); /* 0.jpg, made first, taken back */
    CHECK_EQ_INT(R("unpack --force x.rec v"), 0);
    CHECK(!has_text("v/1.jpg", "mine") && exists("v/0.jpg") && exists("v/x.lst"));
}

/* The contract forms run twice with the same names: each output of the command's kind is replaced. */
static void test_own_kind_replaced(void) {
    static const char *const twice[] = {
        "show x.rec s.png --tile 16", "mean x.rec --spec 'resize(8,8) float chw' -o m.npy",
        "apply --spec 'resize(4,4) float' a.jpg t.f32", "apply --spec flip a.jpg t.png", "apply --spec flip a.jpg t.jpg",
        "apply --spec flip --boxes b.txt --boxes-out t.txt --mask m.png --mask-out tm.png a.jpg t2.png",
        "index x.rec", "index -o t.idx x.rec", "salvage x.rec t.rec", "pack --quiet x .", "list t .", "unpack x.rec w"};
    size_t i;
    kept again;
    for (i = 0; i < sizeof twice / sizeof twice[0]; i++) {
        int a = R(twice[i]), b = R(twice[i]);
        if (a || b) printf("  %s: exit %d, then %d: %s", twice[i], a, b, err_text);
        CHECK(a == 0 && b == 0);
    }
    /* a different run over the earlier outputs replaces them (not only the same bytes again) */
    again = keep("t.f32");
    CHECK_EQ_INT(R("apply --spec 'resize(2,2) float' a.jpg t.f32"), 0);
    CHECK(!same("t.f32", &again));
    free(again.b);
}

static int is_link(const char *name) {
    struct stat st;
    return lstat(in_dir(name), &st) == 0 && S_ISLNK(st.st_mode);
}

/* A symbolic link at an output: the file it names is replaced, the link stays (replacing the link
   made it a plain file; with /dev/stdout redirected to a file, run as root, a plain file in /dev). */
static void test_link_followed(void) {
    static const char *const runs[] = {"index -o l.idx x.rec", "salvage x.rec lr.rec", "show x.rec l.png --tile 16",
                                       "apply --spec flip a.jpg l.jpg", "pack --quiet x ."};
    static const char *const links[][2] = {{"l.idx", "real.idx"}, {"lr.rec", "real.rec"}, {"l.png", "real.png"},
                                           {"l.jpg", "real.jpg"}, {"x.rec", "real-x.rec"}};
    size_t i;
    put_text("real.idx", "0\t0\n");
    put_text("real.rec", "");
    put_text("real.png", "");
    put_text("real.jpg", "");
    CHECK(rename(in_dir("x.rec"), in_dir("real-x.rec")) == 0 && symlink("real-x.rec", in_dir("x.rec")) == 0);
    for (i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        kept before;
        if (i == 4) put_text("real-x.rec", "\x0a\x23\xd7\xce an older dataset"); /* pack makes the same bytes again */
        before = keep(links[i][1]);
        if (!is_link(links[i][0])) CHECK(symlink(links[i][1], in_dir(links[i][0])) == 0);
        if (R(runs[i]) != 0) printf("  %s: %s", runs[i], err_text), CHECK(0);
        CHECK(is_link(links[i][0]) && !same(links[i][1], &before));
        free(before.b);
    }
    CHECK(is_link("x.rec") && starts_with("real-x.rec", "\x0a\x23\xd7\xce", 4));
    CHECK(remove(in_dir("x.rec")) == 0 && rename(in_dir("real-x.rec"), in_dir("x.rec")) == 0);
}

int main(void) {
    if (!(exe = t_recio_tool())) return t_done("outputs");
    snprintf(dir, sizeof dir, "/tmp/recio-outputs-XXXXXX");
    if (!t_mkdtemp(dir)) return perror("mkdtemp"), 1;
    setup();
    RUN(test_issue_reproductions);
    RUN(test_output_is_an_input);
    RUN(test_other_kinds_need_force);
    RUN(test_own_kind_replaced);
    RUN(test_link_followed);
    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        CHECK(system(cmd) == 0);
    }
    return t_done("outputs");
}
