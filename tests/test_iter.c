/* The iterator in the library build (RECIO_THREADS): every case in pull mode and with 1..8
   workers, and the batches identical across all of them. */
#define _POSIX_C_SOURCE 200809L
#include "recio.h"
#include "test.h"
#include "iter_cases.h"

static void test_same_batches_for_every_worker_count(void) {
    static const recio_last_batch modes[] = {RECIO_LAST_PAD, RECIO_LAST_DISCARD, RECIO_LAST_ROLL_OVER};
    iu_batch ref[64], got[64];
    unsigned m, w;
    for (m = 0; m < 3; m++) {
        size_t nref = 0;
        for (w = 0; w <= 8; w++) {
            recio_iter_desc d;
            recio_iter *it;
            size_t n;
            iu_desc(&d, "build/test_iter/sixty.rec", 7, modes[m], w);
            d.shuffle_buffer = m == 1 ? 0 : 11;
            d.prefetch = w ? 1 + w % 3 : 0;
            if (!(it = ic_open(&d))) return;
            n = iu_run(it, w ? got : ref, 64, 3, NULL);
            recio_iter_close(it);
            if (!w) nref = n;
            else CHECK(n == nref && iu_same(ref, got, n));
        }
        CHECK(nref >= 24);
    }
}

/* Close at random moments with workers busy or blocked on a full ring. */
static void test_close_any_moment(void) {
    unsigned round;
    for (round = 0; round < 24; round++) {
        recio_iter_desc d;
        recio_iter *it;
        iu_batch got[32];
        iu_desc(&d, "build/test_iter/sixty.rec", 1 + round % 5, (recio_last_batch)(round % 3), 1 + round % 8);
        d.shuffle_buffer = round % 4;
        if (!(it = ic_open(&d))) return;
        iu_run(it, got, round % 13, 2, NULL);
        if (round % 2) recio_iter_reset(it);
        recio_iter_close(it);
    }
}

#ifdef RECIO_NO_IMAGE
/* Records only: what needs the image section (a spec, and mean_img and mixing, which need one) is
   refused at open with words that say so; the callback path with the same dataset opens. */
static void test_noimage_refuses_image_options_at_open(void) {
    recio_iter_desc d;
    recio_iter *it = NULL;
    char msg[RECIO_ERRMSG_SIZE];
    iu_make("build/test_iter/noimg.rec", 4);
    iu_desc(&d, "build/test_iter/noimg.rec", 2, RECIO_LAST_PAD, 0);
    d.errmsg = msg;
    CHECK(recio_iter_open(&it, &d) == RECIO_OK);
    recio_iter_close(it);
    d.spec = "float";
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_UNSUPPORTED && !it);
    CHECK(strcmp(msg, "a spec needs the image section, and this build has RECIO_NO_IMAGE: give a transform callback") == 0);
    d.spec = NULL;
    d.mean_img = "build/test_iter/mean.npy";
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_ARG && !it);
    CHECK(strcmp(msg, "build/test_iter/mean.npy: mean_img needs a spec whose output is float32 (end it with `float`, or `float chw`)") == 0);
    d.mean_img = NULL;
    d.mixup_alpha = 0.2f;
    d.num_classes = 4;
    CHECK(recio_iter_open(&it, &d) == RECIO_ERR_ARG && !it);
    CHECK(strcmp(msg, "mixing (mixup_alpha or cutmix_alpha set) needs a spec (the item's shape)") == 0);
}
#endif

int main(void) {
    unsigned w;
    static const unsigned counts[] = {0, 1, 3, 8};
    for (w = 0; w < 4; w++) {
        ic_workers = counts[w];
        ic_all();
    }
    RUN(test_same_batches_for_every_worker_count);
    RUN(test_close_any_moment);
#ifdef RECIO_NO_IMAGE
    RUN(test_noimage_refuses_image_options_at_open);
#endif
    return t_done("iter");
}
