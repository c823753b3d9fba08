/* The op table: every descriptor is complete and documented, every op parses and runs, and for random
   chains of every op the table's shape rules and scratch bound hold against what the executor does.
   A private copy of the implementation (RECIO_STATIC) reaches the table and the arena's count. */
#define RECIO_STATIC
#define RECIO_IMPLEMENTATION
#include "recio.h"
#include "test.h"
#include "img_desc.h"

#define NOPS ((int)(sizeof recio__ops / sizeof recio__ops[0]))

static char *read_file(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    char *s;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = (char *)malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    if (size) *size = n;
    return s;
}

/* `name` as a whole word (followed by '(' or a space) inside [from, to) of text. */
static int mentions(const char *text, const char *from, const char *to, const char *name) {
    const char *p = text ? strstr(text, from) : NULL, *end = p ? strstr(p, to) : NULL;
    size_t n = strlen(name);
    for (; p && end && (p = strstr(p, name)) != NULL && p < end; p += n) {
        char before = p[-1], after = p[n];
        if ((before == ' ' || before == '`' || before == '(') && (after == '(' || after == ' ' || after == '`' || after == '\n'))
            return 1;
    }
    return 0;
}

static void test_every_op_described_and_documented(void) {
    char *h = read_file("recio.h", NULL), *doc = read_file("docs/image.md", NULL);
    int i;
    CHECK(h != NULL && doc != NULL);
    for (i = 0; i < NOPS; i++) {
        const recio__opdef *d = &recio__ops[i];
        int j;
        CHECK(d->exec != NULL || d->pix != NULL || d->fop != NULL); /* something runs it */
        if (!d->exec && !(d->flags & RECIO__OPF_LIST)) CHECK((d->pix != NULL) != (d->fop != NULL));
        if (d->flags & (RECIO__OPF_RESAMPLE | RECIO__OPF_LIST)) CHECK(d->shape != NULL);
        if (d->flags & RECIO__OPF_LIST) CHECK(d->parse != NULL);
        CHECK(d->min <= d->max && d->max <= 6);
        for (j = 0; j < i; j++) CHECK(strcmp(d->name, recio__ops[j].name) != 0);
        if (!mentions(h, "SPEC GRAMMAR", "FUSION", d->name)) fprintf(stderr, "  recio.h's SPEC GRAMMAR lacks %s\n", d->name), CHECK(0);
        if (!mentions(doc, "## Transform specs", "### Fused paths", d->name)) fprintf(stderr, "  docs/image.md lacks %s\n", d->name), CHECK(0);
    }
    free(h);
    free(doc);
}

/* A valid argument for check c, drawn at random (sizes small: the images are small). */
static float arg_for(int c) {
    switch (c) {
    case RECIO__A_SIZE: return (float)t_between(1, 48);
    case RECIO__A_INT: return (float)t_between(0, 6);
    case RECIO__A_PROB: return (float)t_between(0, 4) / 4;
    case RECIO__A_BITS: return (float)t_between(0, 8);
    case RECIO__A_FRAC: return (float)t_between(1, 10) / 10;
    case RECIO__A_IOU: return (float)t_between(-1, 10) / 10 < 0 ? -1.0f : (float)t_between(0, 10) / 10;
    case RECIO__A_ODD: return (float)(2 * t_between(0, 7) + 1);
    case RECIO__A_POS: return (float)t_between(1, 40) / 10;
    case RECIO__A_NONNEG: return (float)t_between(0, 40) / 10;
    default: return (float)t_between(-20, 40) / 10;
    }
}

/* One op of the table as spec text with random valid arguments; policies wrap simple ops. */
static void op_text(const recio__opdef *d, char *s, size_t cap, int depth) {
    int k, n, c = RECIO__A_NUM;
    size_t at;
    if (d->flags & RECIO__OPF_LIST) {
        char a[200], b[200];
        const recio__opdef *x = &recio__ops[t_between(0, NOPS - 1)], *y = &recio__ops[t_between(0, NOPS - 1)];
        if (depth > 0 || (x->flags & RECIO__OPF_LIST)) x = &recio__ops[0];
        if (depth > 0 || (y->flags & RECIO__OPF_LIST)) y = &recio__ops[1];
        op_text(x, a, sizeof a, depth + 1);
        op_text(y, b, sizeof b, depth + 1);
        if (strcmp(d->name, "random_apply") == 0) snprintf(s, cap, "random_apply(%g, %s %s)", arg_for(RECIO__A_PROB), a, b);
        else if (strcmp(d->name, "random_subpolicy") == 0) snprintf(s, cap, "random_subpolicy((%s),(%s %s))", a, b, a);
        else if (strcmp(d->name, "random_choice") == 0) snprintf(s, cap, "random_choice(%s, %s)", a, b);
        else snprintf(s, cap, "%s", d->name);
        return;
    }
    if (strcmp(d->name, "interp") == 0) { /* words, not numbers */
        static const char *f[6] = {"nearest", "linear", "cubic", "lanczos", "area", "auto"};
        snprintf(s, cap, "interp(%s%s)", f[t_between(0, 5)], t_between(0, 1) ? ",antialias" : "");
        return;
    }
    n = t_between(d->min, d->max);
    if (strcmp(d->name, "pad") == 0 && n == 3) n = 4; /* N[,VALUE] or L,T,R,B[,VALUE] */
    at = (size_t)snprintf(s, cap, "%s", d->name);
    for (k = 0; k < n && at < cap; k++) {
        float v;
        if (k < 6 && d->check[k]) c = d->check[k];
        v = arg_for(c);
        if (strcmp(d->name, "pad") == 0 && k > 0 && k < 4 && n >= 4) v = (float)t_between(0, 6); /* sides */
        if (strcmp(d->name, "random_resized_crop") == 0 && k == 1 && (v > 1 || n == 6)) v = (float)t_between(2, 48); /* W,H form */
        at += (size_t)snprintf(s + at, cap - at, "%s%g", k ? "," : "(", v);
    }
    if (n && at < cap) snprintf(s + at, cap - at, ")");
}

static int parses(recio_transform **t, const char *spec) {
    char msg[200];
    if (t_parse_ex(t, spec, NULL, msg, sizeof msg) == RECIO_OK) return 1;
    fprintf(stderr, "  '%s': %s\n", spec, msg);
    CHECK(0);
    return 0;
}

static recio_image random_u8(int w, int h, int c) {
    recio_image img;
    size_t i;
    CHECK(recio_image_alloc(&img, w, h, c, RECIO_U8, RECIO_HWC, NULL) == RECIO_OK);
    for (i = 0; i < recio_image_bytes(&img); i++) ((unsigned char *)img.data)[i] = (unsigned char)t_rand();
    return img;
}

/* One chain on one image, checked against the table's promises: when it runs, its output has the
   shape recio_transform_query gave (when it gave one); it never asks the arena for more than
   its scratch_size; and with exactly that much caller scratch it runs without
   allocating and gives the same bytes. Returns the apply's result. */
static recio_err check_chain(const char *spec, const recio_image *in, uint64_t seed) {
    recio_transform *t = NULL;
    recio_image out = {0}, out2 = {0}, shape;
    recio__scratch sc;
    size_t asked = 0, bound;
    void *scratch;
    recio_err e, es;
    if (!parses(&t, spec)) return RECIO_ERR_SPEC;
    memset(&sc, 0, sizeof sc);
    sc.asked = &asked;
    e = recio__apply_in(t, in, &out, seed, &sc, NULL, 0);
    bound = t_scratch_size(t, in->width, in->height, in->channels);
    es = t_output_shape(t, in->width, in->height, in->channels, &shape);
    if (e == RECIO_OK) {
        if (asked > bound)
            fprintf(stderr, "  '%s' on %dx%dx%d asked %zu > bound %zu\n", spec, in->width, in->height, in->channels, asked, bound), CHECK(0);
        if (es == RECIO_OK)
            CHECK(shape.width == out.width && shape.height == out.height && shape.dtype == out.dtype && shape.layout == out.layout);
        scratch = malloc(bound);
        CHECK(t_apply_scratch(t, in, &out2, seed, scratch, bound) == RECIO_OK);
        if (out2.width != out.width || out2.height != out.height || out2.dtype != out.dtype ||
            memcmp(out2.data, out.data, recio_image_bytes(&out)) != 0)
            fprintf(stderr, "  '%s' on %dx%dx%d: other bytes with caller scratch\n", spec, in->width, in->height, in->channels), CHECK(0);
        free(scratch);
    }
    recio_image_free(&out);
    recio_image_free(&out2);
    recio_transform_free(t);
    return e;
}

/* Pixels the op may meet: u8 HWC, f32, CHW, both. */
static const char *starts[] = {"", "float ", "normalize(imagenet) ", "chw ", "float chw "};
#define NSTARTS ((int)(sizeof starts / sizeof starts[0]))

/* Every op alone, after each kind of pixels, runs (or refuses a crop that does not fit); an op
   that needs u8 says so for other pixels. */
static void test_every_op_runs(void) {
    int i, round, s;
    for (i = 0; i < NOPS; i++)
        for (round = 0; round < 6; round++)
            for (s = 0; s < NSTARTS; s++) {
                char spec[700];
                recio_image in = random_u8(t_between(30, 90), t_between(30, 90), round & 1 ? 3 : 4);
                recio_err e;
                size_t at = (size_t)snprintf(spec, sizeof spec, "%s", starts[s]);
                op_text(&recio__ops[i], spec + at, sizeof spec - at, 0);
                e = check_chain(spec, &in, (uint64_t)round);
                if (s > 0 && (recio__ops[i].flags & RECIO__OPF_U8)) CHECK(e == RECIO_ERR_UNSUPPORTED);
                else if (e != RECIO_OK && e != RECIO_ERR_ARG && !(recio__ops[i].flags & RECIO__OPF_LIST) && !(s > 0 && (recio__ops[i].flags & RECIO__OPF_RESAMPLE)))
                    fprintf(stderr, "  %s: %s\n", spec, recio_strerror(e)), CHECK(0);
                recio_image_free(&in);
            }
}

/* Random chains of every op on random sizes, from every kind of pixels. */
static void test_random_chains(void) {
    int round, ran = 0;
    for (round = 0; round < 900; round++) {
        char spec[2000];
        int k, n = t_between(1, 5), c = t_between(0, 2) ? 3 : 1;
        recio_image in = random_u8(t_between(1, 140), t_between(1, 140), c);
        size_t at = (size_t)snprintf(spec, sizeof spec, "%s", starts[t_between(0, NSTARTS - 1)]);
        for (k = 0; k < n && at < sizeof spec - 700; k++) {
            op_text(&recio__ops[t_between(0, NOPS - 1)], spec + at, 700, 0);
            at += strlen(spec + at);
            spec[at++] = ' ';
        }
        spec[at] = 0;
        ran += check_chain(spec, &in, (uint64_t)round) == RECIO_OK;
        recio_image_free(&in);
    }
    printf("random chains that ran: %d of 900\n", ran);
    CHECK(ran > 200); /* the checks must see real work */
}

/* Every filter before every resizing op, on sizes down to one pixel, shrinking up to 20 times: the
   wider filters' taps (Lanczos' 8, the antialiased ones' growing with the shrink) stay within the
   scratch bound and caller scratch gives the same bytes. */
static void test_filters_scratch(void) {
    static const char *filt[] = {"interp(nearest)", "interp(cubic)", "interp(lanczos)", "interp(linear,antialias)",
                                 "interp(cubic,antialias)", "interp(lanczos,antialias)", "interp(area)", "area", "interp(auto)"};
    static const char *ops[] = {"resize(%d,%d)", "resize_short(%d)", "random_resized_crop(%d,%d)", "resize_long(%d)",
                                "letterbox(%d,%d)", "center_crop(%d) resize(%d,9) flip"};
    int f, o, k;
    for (f = 0; f < 9; f++)
        for (o = 0; o < 6; o++)
            for (k = 0; k < 6; k++) {
                char op[80], spec[200];
                recio_image in = random_u8(t_between(1, 120), t_between(1, 120), k & 1 ? 3 : 1);
                recio_err e;
                snprintf(op, sizeof op, ops[o], t_between(1, 20), t_between(2, 60));
                snprintf(spec, sizeof spec, "%s%s %s", starts[0], filt[f], op);
                e = check_chain(spec, &in, (uint64_t)k);
                if (e != RECIO_OK && e != RECIO_ERR_ARG) fprintf(stderr, "  %s: %s\n", spec, recio_strerror(e)), CHECK(0);
                recio_image_free(&in);
            }
    { /* auto's choice is not monotonic in the size: after branches, the bound's size (1000: shrink, AREA's 3
         taps) is not the branch that enlarges 20 pixels (CUBIC's 4): the bound must hold for both */
        recio_image in = random_u8(50, 50, 3);
        for (k = 0; k < 8; k++)
            CHECK(check_chain("random_choice(resize(20,20), resize(1000,1000)) interp(auto) resize(600,600)", &in, (uint64_t)k) == RECIO_OK);
        recio_image_free(&in);
    }
}

/* The planner's roles: on a JPEG, decoding only the planned window at full scale gives exactly
   decode + apply, for chains that mix planned and unplanned ops (area before an op the planner
   stops at, crops after the resize, a second resize). */
static void test_planner_matches_plain_chain(void) {
#ifdef RECIO_TURBOJPEG
    static const char *specs[] = {"area flip resize(37,29)", "area resize_short(40) center_crop(30) random_crop(20,10) gray",
                                  "crop(3,5,80,60) random_resized_crop(33,0.2,0.9) crop(1,2,20,20) resize(17,9)",
                                  "random_crop(70,50) area random_resized_crop(24) random_flip(0.5) normalize(imagenet) chw",
                                  "interp(lanczos) resize_short(60) center_crop(50)", "interp(cubic,antialias) random_resized_crop(40,30)",
                                  "crop(100,30,300,300) interp(lanczos,antialias) resize(33,21) random_crop(20)",
                                  "interp(auto) random_resized_crop(300,200)", "interp(auto) resize(90,40)", NULL};
    long n = 0;
    char *jpg = read_file("tests/data/photos/chelsea-500x375.jpg", &n);
    int i;
    uint64_t seed;
    CHECK(jpg != NULL && n > 0);
    for (i = 0; jpg && specs[i]; i++)
        for (seed = 0; seed < 4; seed++) {
            recio_transform *t = NULL;
            recio_image dec = {0}, a = {0}, b = {0};
            t_enc d;
            memset(&d, 0, sizeof d);
            d.full_scale = 1;
            CHECK(recio_transform_parse(&t, specs[i]) == RECIO_OK);
            CHECK(recio_image_decode(&dec, jpg, (size_t)n, 0) == RECIO_OK);
            CHECK(recio_transform_apply(t, &dec, &a, seed) == RECIO_OK);
            CHECK(t_apply_encoded(t, jpg, (size_t)n, &b, seed, &d, NULL, 0) == RECIO_OK);
            if (a.data && b.data && (a.width != b.width || a.height != b.height || memcmp(a.data, b.data, recio_image_bytes(&a)) != 0))
                fprintf(stderr, "  '%s' seed %d: window decode differs\n", specs[i], (int)seed), CHECK(0);
            recio_image_free(&dec), recio_image_free(&a), recio_image_free(&b);
            recio_transform_free(t);
        }
    free(jpg);
#else
    t_skip("built without RECIO_TURBOJPEG: no window planner", 1);
#endif
}

/* Every argument kind the op table uses has its row of bounds and words (the check and its message
   both read it), and each refusal names the row's bounds. */
static void test_argument_kinds(void) {
    int i, j;
    CHECK_EQ_INT(sizeof recio__argkinds / sizeof recio__argkinds[0], RECIO__A_ODD + 1);
    for (i = 0; i < NOPS; i++)
        for (j = 0; j < 6; j++) CHECK(recio__ops[i].check[j] <= RECIO__A_ODD);
    for (i = 0; i <= RECIO__A_ODD; i++) {
        const recio__argkind *k = &recio__argkinds[i];
        CHECK(k->what != NULL && k->lo < k->hi);
        CHECK(recio__arg_fits(k, k->lo) == !(k->flags & RECIO__AK_LO_OPEN));
        CHECK(recio__arg_fits(k, k->hi) == !(k->flags & RECIO__AK_HI_OPEN) || (k->flags & RECIO__AK_ODD) != 0);
        CHECK(!recio__arg_fits(k, k->hi * 2 + 1) && !recio__arg_fits(k, k->lo - 2 - fabsf(k->lo)));
    }
}

/* The transform specs the docs show (code spans in lowercase, starting with an op name, without
   "..." or "[" of a syntax line; a table's "\|" read as the "|" it renders) parse: docs/iter.md's
   cache table showed `resize_short(256) | random_crop(224) ...`, which the parser refuses. */
static void test_doc_specs_parse(void) {
    static const char *const docs[] = {"docs/iter.md", "docs/bench.md", "docs/image.md", "README.md"};
    size_t k;
    int checked = 0;
    for (k = 0; k < sizeof docs / sizeof docs[0]; k++) {
        char *text = read_file(docs[k], NULL), *p, *q, span[512];
        int line = 1;
        CHECK(text != NULL);
        for (p = text; p && *p; p = q + 1) {
            size_t n = 0, len;
            int i, op = 0, plain = 1;
            if (*p == '\n') line++;
            if (*p != '`' || !(q = strchr(p + 1, '`')) || q - p > (long)sizeof span) {
                q = p;
                continue;
            }
            for (p++; p < q; p++) {
                if (*p == '\n') line++;
                if (p[0] == '\\' && p[1] == '|') continue;
                span[n++] = *p;
            }
            span[n] = 0;
            for (i = 0; span[i]; i++) plain &= !(span[i] >= 'A' && span[i] <= 'Z') && span[i] != '[';
            for (i = 0; i < NOPS && !op; i++)
                len = strlen(recio__ops[i].name), op = !strncmp(span, recio__ops[i].name, len) && (span[len] == '(' || span[len] == ' ');
            if (!op || !plain || strstr(span, "...")) continue;
            {
                recio_transform *t = NULL;
                char msg[256];
                if (t_parse_ex(&t, span, NULL, msg, sizeof msg) != RECIO_OK)
                    fprintf(stderr, "  %s:%d: `%s`: %s\n", docs[k], line, span, msg), CHECK(0);
                recio_transform_free(t);
                checked++;
            }
        }
        free(text);
    }
    CHECK(checked > 10);
}

int main(void) {
    RUN(test_every_op_described_and_documented);
    RUN(test_every_op_runs);
    RUN(test_random_chains);
    RUN(test_filters_scratch);
    RUN(test_planner_matches_plain_chain);
    RUN(test_argument_kinds);
    RUN(test_doc_specs_parse);
    return t_done("optable");
}
