/* Batch-level MixUp and CutMix in the iterator (timm's Mixup in batch mode: item i with item n-1-i,
   one lam per batch). Records are solid-colour images, so every expected value is worked out here
   from the unmixed batch of the same iterator without mixing: MixUp items are lam a + (1 - lam) b
   element by element; a CutMix item holds its partner's colour on exactly a rectangle of (1 - lam) of
   its pixels; the soft labels are lam and 1 - lam on the two classes. lam follows Beta(alpha, alpha)
   (mean and variance over 3000 batches); mix_prob mixes that share of batches; 0 and 2 workers give
   the same bytes; misuse is refused with the reason. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "tmpdir.h"
#include "image_write.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 16
#define H 12
#define NC 3

static char dir[64], rec_path[128];

/* n records: record k is grey 10 + 30 (k mod 8) with label `labels[k]` (default k % NC). */
static void make_rec(unsigned n, const float *labels) {
    recio_writer *w;
    unsigned k;
    CHECK(recio_writer_open(&w, rec_path) == RECIO_OK);
    for (k = 0; k < n; k++) {
        static unsigned char px[W * H * 3], r[8192];
        t_mem_out png;
        float label = labels ? labels[k] : (float)(k % NC);
        size_t h;
        memset(px, 10 + 30 * (int)(k % 8), sizeof px);
        png.n = 0;
        CHECK(stbi_write_png_to_func(t_to_mem, &png, W, H, 3, px, W * 3) != 0);
        h = recio_irecord_pack_header(r, &label, 1, k, 0);
        memcpy(r + h, png.b, (size_t)png.n);
        CHECK(recio_writer_write(w, r, h + (size_t)png.n) == RECIO_OK);
    }
    CHECK(recio_writer_close(w) == RECIO_OK);
}

static recio_iter_desc desc_for(const char *spec, unsigned batch, unsigned workers) {
    recio_iter_desc d;
    memset(&d, 0, sizeof d);
    d.uris = rec_path, d.item.spec = spec, d.run.batch = batch, d.run.workers = workers, d.source.seed = 11, d.mix.num_classes = NC;
    return d;
}

static float grey(unsigned k) { return (float)(10 + 30 * (k % 8)); }

/* Item i of a mixed batch b against the plain batch p: MixUp or CutMix as b says; soft labels. */
static int item_ok(const recio_batch *b, const recio_batch *p, unsigned i) {
    unsigned n = b->batch, j = n - 1 - i, c, e, pn = (unsigned)(b->item_bytes / 4);
    const float *x = (const float *)((const unsigned char *)b->data + (size_t)i * b->item_bytes);
    float a = grey((unsigned)p->ids[i]), o = grey((unsigned)p->ids[j]), lam = b->lam;
    float ci = p->labels[i], cj = p->labels[j], want[NC] = {0, 0, 0};
    want[(int)ci] += lam, want[(int)cj] += 1 - lam;
    for (c = 0; c < NC; c++)
        if (fabsf(b->soft_labels[(size_t)i * NC + c] - want[c]) > 1e-6f) return printf("  soft label %u of item %u\n", c, i), 0;
    if (b->mix == 1) {
        for (e = 0; e < pn; e++)
            if (fabsf(x[e] - (lam * a + (1 - lam) * o)) > 1e-3f) return printf("  mixup item %u element %u: %g\n", i, e, x[e]), 0;
    } else if (b->mix == 2 && i != j) { /* the partner's grey on a rectangle of exactly (1 - lam) of the pixels, per plane */
        int x0 = W, y0 = H, x1 = -1, y1 = -1, px, py, ch, count = 0;
        for (ch = 0; ch < 3; ch++)
            for (py = 0; py < H; py++)
                for (px = 0; px < W; px++) {
                    float v = x[(size_t)(ch * H + py) * W + px]; /* CHW */
                    if (v == o) {
                        count++;
                        if (px < x0) x0 = px;
                        if (px > x1) x1 = px;
                        if (py < y0) y0 = py;
                        if (py > y1) y1 = py;
                    } else if (v != a) return printf("  cutmix item %u: a value of neither image\n", i), 0;
                }
        if (count && count != 3 * (x1 - x0 + 1) * (y1 - y0 + 1)) return printf("  cutmix item %u: not a rectangle\n", i), 0;
        if (fabs((double)count / (3.0 * W * H) - (1.0 - lam)) > 1e-6) return printf("  cutmix item %u: %d of %d pixels, lam %g\n", i, count / 3, W * H, lam), 0;
    } else if (b->mix == 0) {
        for (e = 0; e < pn; e++)
            if (x[e] != a) return 0;
    }
    return 1;
}

/* Epochs of a mixed iterator and of the same one without mixing, side by side. */
static void compare_runs(float mixup, float cutmix, unsigned workers, int *kinds) {
    recio_iter_desc dm = desc_for("float chw", 4, workers), dp = desc_for("float chw", 4, 0);
    recio_iter *m = NULL, *p = NULL;
    recio_batch bm, bp;
    unsigned epoch, i;
    dm.mix.mixup_alpha = mixup, dm.mix.cutmix_alpha = cutmix;
    CHECK(recio_iter_open(&m, &dm) == RECIO_OK && recio_iter_open(&p, &dp) == RECIO_OK);
    for (epoch = 0; m && p && epoch < 6; epoch++) {
        while (recio_iter_next(m, &bm) == RECIO_OK) {
            CHECK(recio_iter_next(p, &bp) == RECIO_OK);
            CHECK(bm.soft_labels != NULL && bp.soft_labels == NULL && bp.lam == 1.0f);
            kinds[bm.mix]++;
            CHECK(bm.mix == 0 || (bm.lam >= 0 && bm.lam <= 1));
            for (i = 0; i < bm.batch; i++)
                if (!item_ok(&bm, &bp, i)) printf("  epoch %u batch %llu (mix %d, lam %g)\n", epoch, (unsigned long long)bm.index, bm.mix, bm.lam), CHECK(0);
        }
        recio_iter_reset(m), recio_iter_reset(p);
    }
    recio_iter_close(m), recio_iter_close(p);
}

static void test_mixup_cutmix(void) {
    int kinds[3] = {0, 0, 0};
    make_rec(8, NULL);
    compare_runs(0.4f, 0, 0, kinds);
    CHECK(kinds[1] == 12 && kinds[0] == 0 && kinds[2] == 0);
    kinds[1] = 0;
    compare_runs(0, 1.0f, 2, kinds);
    CHECK(kinds[2] == 12 && kinds[0] == 0 && kinds[1] == 0);
    kinds[2] = 0;
    compare_runs(1.0f, 1.0f, 2, kinds); /* half and half */
    CHECK(kinds[1] > 0 && kinds[2] > 0 && kinds[1] + kinds[2] == 12);
}

/* lam over 3000 batches of 2: Beta(0.2, 0.2) has mean 1/2 and variance 1 / (4 (2 a + 1)). */
static void test_beta_and_prob(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    double sum = 0, sq = 0, mean, var, want = 1.0 / (4 * 1.4);
    unsigned k, mixed = 0, total = 0;
    make_rec(6000, NULL); /* big enough for 3000 batches of 2, one epoch */
    d = desc_for("float", 2, 2);
    d.mix.mixup_alpha = 0.2f;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    for (k = 0; it && recio_iter_next(it, &b) == RECIO_OK; k++) sum += b.lam, sq += (double)b.lam * b.lam;
    recio_iter_close(it);
    CHECK_EQ_INT(k, 3000);
    mean = sum / k, var = sq / k - mean * mean;
    printf("  Beta(0.2, 0.2) over %u batches: mean %.4f (1/2), variance %.4f (%.4f)\n", k, mean, var, want);
    CHECK(fabs(mean - 0.5) < 0.03 && fabs(var - want) < 0.1 * want);
    d.mix.prob = 0.3f, d.mix.mixup_alpha = 0, d.mix.cutmix_alpha = 1;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    while (it && recio_iter_next(it, &b) == RECIO_OK) mixed += b.mix == 2, total++;
    recio_iter_close(it);
    printf("  mix_prob 0.3: %u of %u batches mixed\n", mixed, total);
    CHECK(total == 3000 && mixed > 780 && mixed < 1020);
}

/* Same bytes, labels and lam with 0 and 2 workers, over an epoch and a checkpoint restore. */
static void test_workers_and_restore(void) {
    recio_iter_desc d;
    recio_iter *a = NULL, *b = NULL;
    recio_batch x, y;
    unsigned char state[4096];
    size_t size = 0;
    unsigned k;
    make_rec(8, NULL);
    d = desc_for("float chw", 2, 0);
    d.mix.mixup_alpha = d.mix.cutmix_alpha = 0.7f;
    CHECK(recio_iter_open(&a, &d) == RECIO_OK);
    d.run.workers = 2;
    CHECK(recio_iter_open(&b, &d) == RECIO_OK);
    CHECK(a && b && recio_iter_next(a, &x) == RECIO_OK && recio_iter_next(a, &x) == RECIO_OK);
    CHECK(a && recio_iter_save(a, state, sizeof state, &size) == RECIO_OK);
    CHECK(b && recio_iter_next(b, &y) == RECIO_OK && recio_iter_next(b, &y) == RECIO_OK);
    for (k = 0; a && b && k < 2; k++) {
        CHECK(recio_iter_next(a, &x) == RECIO_OK && recio_iter_next(b, &y) == RECIO_OK);
        CHECK(x.mix == y.mix && x.lam == y.lam && memcmp(x.data, y.data, 2 * x.item_bytes) == 0 &&
              memcmp(x.soft_labels, y.soft_labels, 2 * NC * sizeof(float)) == 0);
    }
    recio_iter_close(b);
    b = NULL;
    CHECK(recio_iter_open(&b, &d) == RECIO_OK && recio_iter_restore(b, state, size) == RECIO_OK);
    CHECK(b && recio_iter_next(b, &y) == RECIO_OK); /* batch 2 again, after the restore */
    recio_iter_close(a);
    a = NULL;
    d.run.workers = 0;
    CHECK(recio_iter_open(&a, &d) == RECIO_OK);
    for (k = 0; a && k < 3; k++) CHECK(recio_iter_next(a, &x) == RECIO_OK);
    CHECK(a && b && x.index == y.index && x.lam == y.lam && memcmp(x.data, y.data, 2 * x.item_bytes) == 0);
    recio_iter_close(a), recio_iter_close(b);
}

static void test_refused(void) {
    static const float bad_labels[4] = {0, 1, 5, 2};
    recio_iter_desc d;
    recio_iter *it = NULL;
    recio_batch b;
    char msg[512] = "";
    make_rec(4, bad_labels);
    d = desc_for("resize(8,8)", 4, 0); /* u8 items */
    d.mix.mixup_alpha = 1;
    CHECK((d.errmsg = msg, recio_iter_open(&it, &d)) == RECIO_ERR_ARG && strstr(msg, "f32 items for MixUp") != NULL);
    d.item.spec = "float", d.mix.num_classes = 0;
    CHECK((d.errmsg = msg, recio_iter_open(&it, &d)) == RECIO_ERR_ARG && strstr(msg, "num_classes") != NULL);
    d.mix.num_classes = NC;
    CHECK((d.errmsg = msg, recio_iter_open(&it, &d)) == RECIO_OK);
    CHECK(it && recio_iter_next(it, &b) == RECIO_ERR_ARG);
    if (it) {
        printf("  %s\n", recio_iter_errmsg(it));
        CHECK(strstr(recio_iter_errmsg(it), "label 5 is not a class in [0, 3)") != NULL && strstr(recio_iter_errmsg(it), "offset") != NULL);
        recio_iter_close(it);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/recio-itermix-XXXXXX");
    CHECK(t_mkdtemp(dir) != NULL);
    snprintf(rec_path, sizeof rec_path, "%s/mix.rec", dir);
    RUN(test_mixup_cutmix);
    RUN(test_beta_and_prob);
    RUN(test_workers_and_restore);
    RUN(test_refused);
    remove(rec_path);
    t_rmtree(dir);
    return t_done("iter_mix");
}
