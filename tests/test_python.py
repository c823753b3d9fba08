"""Tests of the Python binding (python/recio) against the recio command and the C library.

Run under pytest by tests/test_python.sh from `make test` with Debian's /usr/bin/python3 (or on its own:
/usr/bin/python3 tests/test_python.py [TEST...]); the last line is
"test_python: N passed, N failed[, N skipped]" like the C tests. RECIO names the command
(default build/recio), RECIO_LIBRARY the library the package loads.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import recio  # noqa: E402
from recio import _lib, _mxnet  # noqa: E402

RECIO = os.environ.get("RECIO", os.path.join(ROOT, "build", "recio")).split()
PHOTOS = os.path.join(HERE, "data", "photos")
COMPAT = os.path.join(HERE, "data", "compat")

passed = failed = skipped = 0
TMP = tempfile.mkdtemp(prefix="recio-pytest-")


def cli(*args, check=True):
    p = subprocess.run(RECIO + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise AssertionError("recio %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr.decode()))
    return p


def tmp(name):
    return os.path.join(TMP, name)


def make_dataset():
    """ds.rec (+ ds.idx): the 12 sample photos packed with their shorter side at 128 (mixed sizes,
    grey and alpha sources); ds2.rec: the same again (a second file); ds3.rec without an .idx."""
    cli("list", "--no-shuffle", tmp("ds"), PHOTOS)
    with open(tmp("ds.lst")) as f:  # give every image a label: its index times 1.5, and a second one
        lines = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    with open(tmp("ds.lst"), "w") as f:
        for i, (idx, _, path) in enumerate(lines):
            f.write("%s\t%g\t%g\t%s\n" % (idx, int(idx) * 1.5, -int(idx), path))
    cli("pack", "--resize", "128", "--pack-label", "--quiet", tmp("ds"), PHOTOS)
    shutil.copy(tmp("ds.rec"), tmp("ds2.rec"))
    shutil.copy(tmp("ds.idx"), tmp("ds2.idx"))
    shutil.copy(tmp("ds.rec"), tmp("ds3.rec"))


def setup_module():
    """pytest: the datasets every test reads."""
    make_dataset()


def teardown_module():
    shutil.rmtree(TMP, ignore_errors=True)


def _run(fn):
    global passed, failed
    try:
        fn()
        passed += 1
    except SkipTest as e:
        skip(fn.__name__, str(e))
    except Exception:
        failed += 1
        print("FAIL %s:\n%s" % (fn.__name__, traceback.format_exc()), file=sys.stderr)


class SkipTest(unittest.SkipTest):  # pytest reports it as a skip too
    pass


def skip(name, why):
    global skipped
    skipped += 1
    print("skip: %s: %s" % (name, why))


def check(cond, what=""):
    if not cond:
        raise AssertionError(what)


def raises(exc, fn, *words):
    try:
        fn()
    except exc as e:
        for w in words:
            check(w in str(e), "%r not in %r" % (w, str(e)))
        return e
    raise AssertionError("no %s raised" % exc.__name__)


# ---- batches equal `recio iter` ----

def cli_iter(uris, spec, batch, epochs=1, **o):
    args = ["iter", uris, "--spec", spec, "--batch", batch, "--epochs", epochs]
    for k, v in o.items():
        flag = "--" + k.replace("_", "-")
        args += [flag] if v is True else [flag, v]
    return cli(*args).stdout.decode().splitlines()


def py_lines(it, epochs=1):
    out = []
    for e in range(epochs):
        for b in it:
            out.append("%d\t%d\t%d\t%d\t%s\t%016x" % (b.epoch, b.number, b.count, b.pad,
                                                     ",".join(str(i) for i in b.index[:b.count + b.pad]), b.checksum()))
    return out


MX = dict(path_imgrec=None, data_shape=(3, 64, 64), batch_size=5, resize=80, rand_crop=True, rand_mirror=True,
          mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375)


def test_iter_equals_cli():
    rec = tmp("ds.rec")
    cases = [
        (dict(preprocess_threads=1), {}),
        (dict(workers=0, seed=7), dict(seed=7, workers=0)),
        (dict(preprocess_threads=2, seed=3, shuffle=True), dict(seed=3, workers=2, shuffle=True)),
        (dict(workers=2, num_parts=3, part_index=1), dict(nsplit=3, rank=1, workers=2)),
        (dict(workers=1, last_batch="discard"), dict(workers=1, last_batch="discard")),
        (dict(workers=2, last_batch="roll_over", seed=9), dict(workers=2, last_batch="roll_over", seed=9)),
        (dict(workers=0, shuffle_buffer=4, seed=2), dict(workers=0, shuffle_buffer=4, seed=2)),
        (dict(workers=2, checksums=True), dict(workers=2)),
    ]
    for kw, cl in cases:
        args = dict(MX, path_imgrec=rec, **kw)
        it = recio.ImageRecordIter(**args)
        got = py_lines(it, epochs=3)
        want = cli_iter(rec, it.spec, 5, epochs=3, **cl)
        check(got == want, "%s:\n%s\n!=\n%s" % (kw, "\n".join(got), "\n".join(want)))
        it.close()


def test_iter_cache_bytes():
    """cache_bytes=: the same batches as the command without a cache, over 3 epochs, for a train chain
    (rand_crop after resize: the resize is kept) and 2 workers; epochs 2 and 3 served from it."""
    rec = tmp("ds.rec")
    it = recio.ImageRecordIter(**dict(MX, path_imgrec=rec, workers=2, seed=3, shuffle=True, cache_bytes=64 << 20))
    got = py_lines(it, epochs=3)
    want = cli_iter(rec, it.spec, 5, epochs=3, seed=3, workers=2, shuffle=True)
    check(got == want, "cache_bytes:\n%s\n!=\n%s" % ("\n".join(got), "\n".join(want)))
    st = it.cache_stats()
    check(st["mode"] == "prefix" and st["prefix_ops"] == 1, "what is kept: %s (spec %s)" % (st, it.spec))
    check(st["records"] > 0 and st["hits"] >= 2 * st["records"] and 0 < st["bytes"] <= 64 << 20, "cache stats: %s" % st)
    it.close()
    it = recio.ImageRecordIter(**dict(MX, path_imgrec=rec, rand_crop=False, random_resized_crop=True, cache_bytes=1 << 20))
    st = it.cache_stats()
    check(st["mode"] == "off" and "random_resized_crop" in st["why"], "an uncuttable chain says why: %s" % st)
    it.close()


def test_iter_set_spec():
    """set_spec(): the new shape from the next epoch on (provide_data too), never inside the epoch
    under way; the batches are a fresh iterator's with that spec; a spec that does not parse raises
    with the column and changes nothing."""
    rec = tmp("ds.rec")
    it = recio.ImageRecordIter(path_imgrec=rec, spec="resize(8,8) chw", batch_size=4)
    fresh = recio.ImageRecordIter(path_imgrec=rec, spec="resize(16,12) chw", batch_size=4)
    n = len(it)
    first = it.next()
    check(first.data.shape == (4, 3, 8, 8))
    raises(recio.ArgError, lambda: it.set_spec("resize(16,12) flipp"), "spec:1:15", "flipp")
    it.set_spec("resize(16,12) chw")
    rest = [b.data.shape for b in it]
    check(len(rest) == n - 1 and all(sh == (4, 3, 8, 8) for sh in rest), "epoch 0 keeps its shape: %s" % rest)
    check(it.provide_data[0][1] == (4, 3, 8, 8), str(it.provide_data))
    got = [b.data.copy() for b in it]  # the next epoch: the new spec
    want = [b.data.copy() for b in fresh]
    check(len(got) == len(want) == n and all(g.shape == (4, 3, 12, 16) for g in got), str([g.shape for g in got]))
    check(all(np.array_equal(g, w) for g, w in zip(got, want)), "the batches of a fresh iterator with the new spec")
    check(it.provide_data[0][1] == (4, 3, 12, 16) and it.spec == "resize(16,12) chw", str(it.provide_data))
    it.close()
    fresh.close()


def test_iter_other_dtypes_and_layouts():
    rec = tmp("ds.rec")
    for kw in (dict(dtype="uint8"), dict(dtype="int8", mean_r=100, mean_g=100, mean_b=100), dict(dtype="float16"),
               dict(layout="NHWC"), dict(data_shape=(1, 40, 48)), dict(spec="resize(32,24) gray", data_shape=None)):
        args = dict(path_imgrec=rec, data_shape=(3, 48, 48), batch_size=4, workers=2)
        args.update(kw)
        it = recio.ImageRecordIter(**args)
        b = it.next()
        want_dt = {"uint8": np.uint8, "int8": np.int8, "float16": np.float16}.get(kw.get("dtype"), np.float32)
        if "spec" in kw:
            want_dt = np.uint8
        check(b.data.dtype == want_dt, "%s: %s" % (kw, b.data.dtype))
        shp = {"layout": (4, 48, 48, 3), "spec": (4, 24, 32, 3), "data_shape": (4, 1, 40, 48)}
        want_shape = next((v for k, v in shp.items() if k in kw), (4, 3, 48, 48))
        check(b.data.shape == want_shape, "%s: %s" % (kw, b.data.shape))
        check(it.provide_data[0][1] == want_shape, "%s: provide_data %s" % (kw, it.provide_data))
        it.close()
        got = py_lines(recio.ImageRecordIter(**args))
        ch = args["data_shape"][0] if args["data_shape"] else 3
        check(got == cli_iter(rec, it.spec, 4, workers=2, channels=ch), "%s: batches differ from recio iter" % kw)


def test_labels_and_ids():
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=5, label_width=2,
                               workers=0)
    got = []
    for b in it:
        check(b.label.shape == (5, 2), str(b.label.shape))
        got += [(int(i), float(x), float(y)) for i, (x, y) in zip(b.index[:b.count], b.label[:b.count])]
    check(got == [(i, i * 1.5, -i) for i in range(12)], str(got))
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=5, workers=0)
    b = it.next()
    check(b.label.shape == (5,) and list(b.label) == [0, 1.5, 3, 4.5, 6], str(b.label))
    check(it.provide_label == [("softmax_label", (5,))], str(it.provide_label))


def test_imglist_labels():
    with open(tmp("other.lst"), "w") as f:
        for i in range(12):
            f.write("%d\t%g\t%g\tx.jpg\n" % (i, 100 + i, 7))
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), path_imglist=tmp("other.lst"), label_width=2,
                               data_shape=(3, 32, 32), batch_size=6, workers=0)
    b = it.next()
    check(b.label.tolist() == [[100 + i, 7] for i in range(6)], str(b.label))
    with open(tmp("short.lst"), "w") as f:
        f.write("0\t1\tx.jpg\n")
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), path_imglist=tmp("short.lst"),
                               data_shape=(3, 32, 32), batch_size=6, workers=0)
    raises(recio.ArgError, it.next, "ds.rec: offset", "image id 1 has no line in", "short.lst")
    # the .lst gives 2 labels, label_width 3: the third is label_pad_value, label_counts says 2
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), path_imglist=tmp("other.lst"), label_width=3,
                               label_pad_value=0.25, data_shape=(3, 32, 32), batch_size=6, workers=2)
    b = it.next()
    check(b.label.tolist() == [[100 + i, 7, 0.25] for i in range(6)], str(b.label))
    check(b.label_counts.tolist() == [2] * 6 and b.objects is None, str(b.label_counts))


def test_label_pad_and_detection():
    """MXNet's detection layout [A, B, W, H, objects of 5] with 0..3 objects, label_pad_width 14 (header
    + 2 objects): padded with -1, cut at whole objects, objects counted; written with recio.pack. The
    chain only resizes, so the normalised boxes keep their values (test_iter_moves_boxes_and_masks
    moves them)."""
    img = open(os.path.join(PHOTOS, "retina-120x90.jpg"), "rb").read()
    labels = []
    with recio.Writer(tmp("det.rec")) as w:
        for i, k in enumerate((0, 2, 3, 1)):
            lab = [4, 5, 120, 90] + [v for o in range(k) for v in (o, 0.1 * o, 0.2, 0.6, 0.7 + 0.1 * i)]
            labels.append(np.array(lab, dtype=np.float32))
            w.write(recio.pack(recio.IRHeader(0, np.array(lab, dtype=np.float32), 50 + i, 0), img))
    want = np.full((4, 14), -1, dtype=np.float32)
    for i, lab in enumerate(labels):
        keep = min(len(lab), 14)  # 19 labels (3 objects): 4 + 2 whole objects = 14
        want[i, :keep] = lab[:keep]
    for workers in (0, 2):
        it = recio.ImageRecordIter(path_imgrec=tmp("det.rec"), spec="resize(16,16)", batch_size=4, workers=workers,
                                   label_pad_width=14)
        b = it.next()
        check(b.label.shape == (4, 14) and np.allclose(b.label, want, atol=1e-6), str(b.label))
        check(b.objects.tolist() == [0, 2, 2, 1] and b.label_counts.tolist() == [4, 14, 19, 9], str(b.objects))
        it.close()
    it = recio.ImageRecordIter(path_imgrec=tmp("det.rec"), data_shape=(3, 16, 16), batch_size=4, workers=0,
                               label_width=14, label_strict=True)
    raises(recio.ArgError, it.next, "det.rec: offset", "19 labels, more than label_width 14")


def _photo_items(spec):
    """Every record of ds.rec through Transform(spec), as the iterator decodes (3 channels, fast)."""
    t = recio.Transform(spec)
    out = []
    with recio.Reader(tmp("ds.rec")) as r:
        for payload in r:
            _, image = recio.unpack(payload)
            out.append(t(image, seed=0, channels=3, fast=True).astype(np.float64))
    return out


def test_mean_img_against_numpy():
    """recio mean == numpy's mean over the same decoded items; ImageRecordIter(mean_img=, scale=) gives
    (x - mean) * scale, for a (C,H,W) and an (H,W,C) .npy."""
    spec = "resize(20,12) float chw"
    cli("mean", tmp("ds.rec"), "--spec", spec, "-o", tmp("mean.npy"))
    mean = np.load(tmp("mean.npy"))
    want = np.mean(np.stack(_photo_items(spec)), axis=0)
    check(mean.dtype == np.float32 and mean.shape == (3, 12, 20), "%s %s" % (mean.dtype, mean.shape))
    check(np.abs(mean - want).max() < 1e-4, "max diff %g" % np.abs(mean - want).max())
    cli("mean", tmp("ds.rec"), "--spec", "resize(20,12)", "-o", tmp("mean_hwc.npy"), "--workers", "2")
    hwc = np.load(tmp("mean_hwc.npy"))
    check(hwc.shape == (12, 20, 3) and np.abs(hwc.transpose(2, 0, 1) - want).max() < 1e-4, str(hwc.shape))
    kw = dict(path_imgrec=tmp("ds.rec"), batch_size=12, workers=2, spec=spec)
    plain = recio.ImageRecordIter(**kw).next().data.copy()
    for path in (tmp("mean.npy"), tmp("mean_hwc.npy")):
        got = recio.ImageRecordIter(mean_img=path, **kw).next().data
        check(np.allclose(got, plain - mean, atol=1e-4), path)
    kw = dict(path_imgrec=tmp("ds.rec"), batch_size=12, workers=0, data_shape=(3, 12, 20), resize=20)
    it = recio.ImageRecordIter(mean_img=tmp("mean.npy"), scale=0.5, **{k: v for k, v in kw.items() if k != "resize"})
    check(it.spec == "center_crop(20,12) float chw", it.spec)
    base = recio.ImageRecordIter(**{k: v for k, v in kw.items() if k != "resize"}).next().data.copy()
    got = it.next().data
    check(np.allclose(got, (base - mean) * 0.5, atol=1e-4), "mean_img with scale=0.5")
    raises(ValueError, lambda: recio.ImageRecordIter(mean_img=tmp("mean.npy"), spec="resize(20,12) chw",
                                                     path_imgrec=tmp("ds.rec"), batch_size=2), "float32")


def test_seed_aug_chunks_mmap_index():
    """seed_aug changes the augmentation only: the shuffled order stays that of seed; shuffle_chunk_size
    (MB) reads every record once a epoch in another order; use_mmap gives the same batches; path_imgidx
    is one index over the list."""
    kw = dict(path_imgrec=tmp("ds.rec"), data_shape=(3, 24, 24), batch_size=12, rand_crop=True, workers=2,
              shuffle=True, seed=4)
    a = recio.ImageRecordIter(**kw).next()
    b = recio.ImageRecordIter(seed_aug=9, **kw).next()
    check(a.index.tolist() == b.index.tolist() and not np.array_equal(a.data, b.data))
    c = recio.ImageRecordIter(**dict(kw, seed=9, shuffle=False)).next()
    d = recio.ImageRecordIter(**dict(kw, seed_aug=9, shuffle=False)).next()
    check(np.array_equal(c.data, d.data), "without a shuffle seed_aug=9 is seed=9")
    m = recio.ImageRecordIter(use_mmap=True, **kw).next()
    check(np.array_equal(a.data, m.data) and a.index.tolist() == m.index.tolist())
    ids = sorted(recio.ImageRecordIter(shuffle_chunk_size=1, **kw).next().index.tolist())
    check(ids == list(range(12)), str(ids))
    o = recio.translate(**dict(kw, shuffle_chunk_size=1))
    n, size = 12, os.path.getsize(tmp("ds.rec"))
    check(o["shuffle"] == 2 and o["chunk_records"] == max(1, (1 << 20) * n // size), str(o["chunk_records"]))
    # one global index over two files: offsets of ds2.rec moved by the size of ds.rec
    with open(tmp("ds.idx")) as f:
        rows = [ln.split() for ln in f if ln.strip()]
    with open(tmp("both.idx"), "w") as f:
        for k, off in rows:
            f.write("%s\t%s\n" % (k, off))
        for k, off in rows[:5]:
            f.write("%d\t%d\n" % (100 + int(k), size + int(off)))
    it = recio.ImageRecordIter(path_imgrec=[tmp("ds.rec"), tmp("ds2.rec")], path_imgidx=tmp("both.idx"),
                               data_shape=(3, 24, 24), batch_size=17, workers=0)
    check(len(it) == 1)
    b = it.next()
    check(b.count == 17 and b.index.tolist() == list(range(12)) + list(range(5)), str(b.index))


def test_zero_copy_and_copy():
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=4, workers=0)
    b1 = it.next()
    p1 = b1.data.__array_interface__["data"][0]
    first = b1.data.copy()
    b2 = it.next()
    check(b2.data.__array_interface__["data"][0] == p1, "pull mode reuses one buffer: a view, not a copy")
    check(not np.array_equal(b1.data, first), "the old view shows the new batch (documented)")
    check(b1.data.flags.writeable and not b1.data.flags.owndata)
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=4, workers=0, copy=True)
    c1 = it.next()
    keep = c1.data.copy()
    it.next()
    check(np.array_equal(c1.data, keep) and c1.data.flags.owndata, "copy=True batches stay")
    check(np.array_equal(keep, first), "same first batch either way")


def test_reset_len_epochs():
    for kw, n in ((dict(), 3), (dict(last_batch="discard"), 2), (dict(num_parts=2, part_index=1), 2),
                  (dict(path_imgrec=tmp("ds3.rec")), 3), (dict(path_imgrec=tmp("ds.rec") + ";" + tmp("ds2.rec")), 5),
                  (dict(shuffle=True, num_parts=2, part_index=0, equalise=True), 2)):
        args = dict(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=5, workers=1)
        args.update(kw)
        it = recio.ImageRecordIter(**args)
        check(len(it) == n, "%s: len %d, expected %d" % (kw, len(it), n))
        check(len(list(it)) == n, "%s: %d batches" % (kw, n))
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=5, workers=1)
    it.reset()  # MXNet style: reset at the top of every epoch, also the first
    check([b.epoch for b in it] == [0, 0, 0])
    it.reset()
    check([b.epoch for b in it] == [1, 1, 1])
    check([b.epoch for b in it] == [2, 2, 2], "iterating again starts the next epoch")
    it2 = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 32, 32), batch_size=5, workers=1, epoch=2)
    check([b.epoch for b in it2] == [2, 2, 2] and it2.epoch == 2)


def test_state_dict():
    args = dict(MX, path_imgrec=tmp("ds.rec"), shuffle=True, seed=5, workers=2, last_batch="roll_over")
    ref = recio.ImageRecordIter(**args)
    lines = py_lines(ref, epochs=3)
    for cut in (0, 1, 2, 3, 5):
        it = recio.ImageRecordIter(**args)
        got = []
        while len(got) < cut:
            try:
                b = it.next()
                got.append("%d %d %016x" % (b.epoch, b.number, b.checksum()))
            except StopIteration:
                it.reset()
        state = it.state_dict()
        it.close()
        it2 = recio.ImageRecordIter(**args)
        it2.load_state_dict(state)
        while len(got) < len(lines):
            try:
                b = it2.next()
                got.append("%d %d %016x" % (b.epoch, b.number, b.checksum()))
            except StopIteration:
                it2.reset()
        want = [" ".join([ln.split("\t")[0], ln.split("\t")[1], ln.split("\t")[5]]) for ln in lines]
        check(got == want, "cut %d:\n%s\n%s" % (cut, got, want))
    other = recio.ImageRecordIter(**dict(args, seed=6))
    raises(recio.ArgError, lambda: other.load_state_dict(state), "other options")


def test_errors_carry_file_and_offset():
    raw = bytearray(open(tmp("ds.rec"), "rb").read())
    offs = [int(ln.split()[1]) for ln in open(tmp("ds.idx"))]
    raw[offs[7]:offs[7] + 4] = b"\0\0\0\0"  # record 7's magic
    with open(tmp("bad.rec"), "wb") as f:
        f.write(raw)
    for workers in (0, 2):
        it = recio.ImageRecordIter(path_imgrec=tmp("bad.rec"), data_shape=(3, 32, 32), batch_size=2, workers=workers)
        n = 0
        try:
            for _ in it:
                n += 1
            raise AssertionError("no error")
        except recio.CorruptError as e:
            cli_msg = cli("iter", tmp("bad.rec"), "--spec", it.spec, "--batch", 2, check=False).stderr.decode()
            check(("%s: offset %d:" % (tmp("bad.rec"), offs[7])) in str(e), str(e))
            check(str(e) in cli_msg, "%r vs %r" % (str(e), cli_msg))
            check(n == 3, "batches before the bad record: %d" % n)
        raises(recio.CorruptError, it.next)  # it stays until reset
    raises(recio.FileError, lambda: recio.ImageRecordIter(path_imgrec=tmp("none.rec"), data_shape=(3, 8, 8), batch_size=1),
           "none.rec")
    raises(recio.ArgError, lambda: recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), spec="flipp", batch_size=1),
           "spec:1:1: unknown op 'flipp'")
    raises(ValueError, lambda: recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), data_shape=(3, 999, 999), batch_size=1),
           "ds.rec: offset 0: first record")
    raises(recio.DecodeError, lambda: recio.Transform("flip")(b"not an image"), "decode")
    raises(ValueError, lambda: recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), spec="resize(20,10) chw",
                                                     data_shape=(3, 20, 10), batch_size=1), "data_shape", "(3, 10, 20)")
    it = recio.ImageRecordIter(path_imgrec=tmp("ds.rec"), spec="resize(20,10) chw", data_shape=(3, 10, 20), batch_size=1)
    check(it.next().data.shape == (1, 3, 10, 20))


# ---- MXNet names ----

def spec_of(**kw):
    return recio.translate(**dict(dict(path_imgrec=tmp("ds.rec"), batch_size=2, data_shape=(3, 224, 224)), **kw))


def test_mxnet_names_map():
    base = "center_crop(224,224) float chw"
    table = [
        (dict(), base),
        (dict(resize=256), "resize_short(256) " + base),
        (dict(resize=256, inter_method=3), "area resize_short(256) " + base),
        (dict(rand_crop=True), "random_crop(224,224) float chw"),
        (dict(data_shape=(3, 200, 100)), "center_crop(100,200) float chw"),
        (dict(data_shape=(1, 28, 28)), "center_crop(28,28) float chw"),
        (dict(random_resized_crop=True), "random_resized_crop(224,1,1,1,1) float chw"),
        (dict(random_resized_crop=True, min_random_area=0.08, max_aspect_ratio=0.25),
         "random_resized_crop(224,0.08,1,0.75,1.25) float chw"),
        (dict(random_resized_crop=True, min_random_area=0.08, min_aspect_ratio=0.75, max_aspect_ratio=1.333),
         "random_resized_crop(224,0.08,1,0.75,1.333) float chw"),
        (dict(random_resized_crop=True, max_random_area=0.5, min_random_area=0.2),
         "random_resized_crop(224,0.2,0.5,1,1) float chw"),
        (dict(rand_mirror=True), "center_crop(224,224) random_flip(0.5) float chw"),
        (dict(mirror=True), "center_crop(224,224) flip float chw"),
        (dict(max_rotate_angle=10, fill_value=0), "random_rotate(10) " + base),
        (dict(max_rotate_angle=10), "random_rotate(10,255) " + base),
        (dict(rotate=30, fill_value=7), "rotate(30,7) " + base),
        (dict(max_shear_ratio=0.2), "random_shear_x(0.2,255) " + base),
        (dict(max_rotate_angle=5, max_shear_ratio=0.1, fill_value=0), "random_rotate(5) random_shear_x(0.1) " + base),
        (dict(resize=256, inter_method=2), "interp(cubic) resize_short(256) " + base),
        (dict(resize=256, inter_method=0), "interp(nearest) resize_short(256) " + base),
        (dict(resize=256, inter_method=9), "interp(auto) resize_short(256) " + base),
        (dict(random_resized_crop=True, inter_method=4), "interp(lanczos) random_resized_crop(224,1,1,1,1) float chw"),
        (dict(random_resized_crop=True, data_shape=(3, 8, 9)), "random_resized_crop(9,8,1,1,1,1) float chw"),
        (dict(rotate=90, fill_value=0), "rotate(90) " + base),
        (dict(pad=4), "pad(4,255) " + base),
        (dict(pad=4, fill_value=0), "pad(4,0) " + base),
        (dict(brightness=0.4), "center_crop(224,224) color_jitter(0.4,0,0) float chw"),
        (dict(contrast=0.4, saturation=0.2), "center_crop(224,224) color_jitter(0,0.4,0.2) float chw"),
        (dict(pca_noise=0.1), "center_crop(224,224) lighting(0.1) float chw"),
        (dict(mean_r=1, mean_g=2, mean_b=3), "center_crop(224,224) normalize(1,2,3,1,1,1) chw"),
        (dict(std_r=2, std_g=4, std_b=8), "center_crop(224,224) normalize(0,0,0,2,4,8) chw"),
        (dict(scale=0.5, std_r=2), "center_crop(224,224) normalize(0,0,0,4,2,2) chw"),
        (dict(dtype="float32"), base),
        (dict(dtype="float16"), "center_crop(224,224) float chw f16"),
        (dict(dtype="uint8"), "center_crop(224,224) chw"),
        (dict(dtype="int8"), "center_crop(224,224) i8(1,0) chw"),
        (dict(dtype="int8", mean_r=127.6, mean_g=128, mean_b=128.4), "center_crop(224,224) i8(1,-128) chw"),
        (dict(layout="NHWC"), "center_crop(224,224) float"),
        (dict(spec="resize(10,10)", data_shape=None), "resize(10,10)"),
    ]
    for kw, want in table:
        got = spec_of(**kw)["spec"]
        check(got == want, "%s: %r, expected %r" % (kw, got, want))
        recio.Transform(got)  # and the C parser takes it
    o = spec_of(part_index=2, num_parts=4, seed=11, label_width=3, prefetch_buffer=7, preprocess_threads=1,
                shuffle=True, round_batch=False)
    check((o["rank"], o["nsplit"], o["seed"], o["label_width"], o["prefetch"], o["workers"], o["index"], o["shuffle"],
           o["last_batch"]) == (2, 4, 11, 3, 7, 1, True, True, 0), str(o))
    check(spec_of()["workers"] == min(4, os.cpu_count()), "preprocess_threads default 4, at most the cores")
    check(spec_of(round_batch=True)["last_batch"] == 0 and spec_of(last_batch="roll_over")["last_batch"] == 2)
    o = spec_of(seed_aug=5)
    check((o["seed"], o["seed_aug"]) == (0, 5), "seed_aug is the C iterator's seed_aug")
    o = spec_of(path_imgidx=tmp("ds.idx"))
    check(o["uris"] == tmp("ds.rec") and o["index_path"] == tmp("ds.idx") and o["index"])
    o = spec_of(shuffle=True, shuffle_chunk_size=1, shuffle_chunk_seed=7, seed=3)
    check((o["shuffle"], o["seed"], o["seed_aug"]) == (2, 7, 3), str(o))
    o = spec_of(label_pad_width=14, label_pad_value=0)
    check((o["label_width"], o["label_detection"], o["label_pad_value"]) == (14, True, 0.0), str(o))
    o = spec_of(mean_img=tmp("ds.idx"), scale=0.5)  # any existing file: translate does not read it
    check(o["spec"] == "center_crop(224,224) float chw" and o["mean_scale"] == 0.5, str(o))
    check(spec_of(equalize="drop")["equalize"] == 2 and spec_of(equalise=True)["equalize"] == 1)
    check(spec_of(path_imgrec=[tmp("ds.rec"), tmp("ds2.rec")])["uris"] == tmp("ds.rec") + ";" + tmp("ds2.rec"))
    spec_of(ctx="cpu"), spec_of(device_id=-1)
    for k in ("verbose", "data_name", "label_name", "aug_seq", "ctx", "device_id"):
        spec_of(**{k: recio.MXNET_DEFAULTS[k]})  # accepted with MXNet's defaults
    check(spec_of(verbose=True)["verbose"] and not spec_of()["verbose"])


def test_mxnet_rejections():
    for name in recio.UNSUPPORTED:
        d = recio.MXNET_DEFAULTS[name]
        v = "x.bin" if isinstance(d, str) else (0.5 if d in (0, 0.0, None) else d + 3 if d != -1 else 300)
        raises(ValueError, lambda: spec_of(**{name: v}), "ImageRecordIter: %s:" % name)
    bad = [
        (dict(fill_value=3), "fill_value", "pad"),
        (dict(inter_method=10), "inter_method", "not offered"),
        (dict(dtype="float64"), "dtype", ""),
        (dict(data_shape=(4, 8, 8)), "data_shape", ""),
        (dict(random_resized_crop=True, rand_crop=True), "rand_crop", ""),
        (dict(max_aspect_ratio=0.2), "max_aspect_ratio", "random_resized_crop"),
        (dict(min_random_area=0.3), "min_random_area", "random_resized_crop"),
        (dict(dtype="uint8", mean_r=3), "mean_r", "uint8"),
        (dict(dtype="int8", std_r=3), "std_r", "int8"),
        (dict(dtype="int8", mean_r=3), "mean_g", "one mean"),
        (dict(path_imgidx=tmp("elsewhere.idx")), "path_imgidx", "does not exist"),
        (dict(path_imgrec=tmp("ds3.rec"), shuffle=True), "shuffle", "recio index"),
        (dict(seed_aug=0, seed=3), "seed_aug", "follow seed"),
        (dict(shuffle_chunk_size=1), "shuffle_chunk_size", "shuffle=True"),
        (dict(shuffle_chunk_seed=1), "shuffle_chunk_seed", "shuffle_chunk_size"),
        (dict(mean_img=tmp("nomean.npy")), "mean_img", "recio mean"),
        (dict(mean_img=tmp("ds.idx"), mean_r=3), "mean_r", "mean_img"),
        (dict(mean_img=tmp("ds.idx"), dtype="uint8"), "mean_img", "float32"),
        (dict(label_pad_width=-1), "label_pad_width", "estimate"),
        (dict(equalize="both"), "equalize", ""),
        (dict(ctx="tpu"), "ctx", ""),
        (dict(device_id=1), "device_id", ""),
        (dict(aug_seq="det_aug_default"), "aug_seq", ""),
        (dict(spec="flip", resize=3), "resize", "spec="),
        (dict(preprocess_threads=0), "preprocess_threads", ""),
        (dict(round_batch=True, last_batch="pad"), "round_batch", ""),
        (dict(part_index=3, num_parts=3), "part_index", ""),
        (dict(data_shape=None), "data_shape", "required"),
    ]
    for kw, name, word in bad:
        raises(ValueError, lambda: spec_of(**kw), "ImageRecordIter: %s:" % name, word)
    raises(TypeError, lambda: spec_of(rand_crops=True), "rand_crops")


def test_docs_table_names_every_option():
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    rows = {ln.split("|")[1].strip().strip("`") for ln in text.splitlines() if ln.startswith("| `")}
    for name in list(recio.MXNET_DEFAULTS) + list(_mxnet.RECIO_OPTIONS):
        check(name in rows, "docs/python.md has no row for %s" % name)
    for name in recio.UNSUPPORTED:
        row = next(ln for ln in text.splitlines() if ln.startswith("| `%s`" % name))
        check("not supported" in row, "docs/python.md: %s is not marked 'not supported'" % name)


# ---- Transform ----

def test_transform_equals_apply():
    specs = ["resize_short(256) center_crop(224) normalize(imagenet) chw",
             "random_resized_crop(96) random_flip(0.5) normalize(imagenet) chw",
             "random_crop(64) color_jitter(0.4,0.4,0.4,0.1) lighting(0.1) float",
             "resize(50,40) rotate(17) gray",
             "area resize_short(100) center_crop(64,48) i8(2,-10) chw",
             "resize(33,31) f16",
             "random_resized_crop(64) random_choice(flip,gray) float f16 chw"]
    photos = sorted(os.listdir(PHOTOS))
    photos = [p for p in photos if p.endswith((".jpg", ".png"))][:12]
    n = 0
    for si, spec in enumerate(specs):
        t = recio.Transform(spec)
        colour = "jitter" in spec or "lighting" in spec
        for pi, photo in enumerate(photos[si % 3::3]):
            if colour and "gray" in photo:
                continue  # colour jitter wants 3 or 4 channels
            path = os.path.join(PHOTOS, photo)
            seed = 1000 * si + pi
            out = tmp("apply.raw")
            cli("apply", "--spec", spec, "--seed", seed, path, out)
            want = open(out, "rb").read()
            got = t(open(path, "rb").read(), seed=seed)
            check(got.tobytes() == want, "%s on %s seed %d: %d bytes vs %d" % (spec, photo, seed, got.nbytes, len(want)))
            n += 1
    check(n >= 20)


def test_transform_array_and_shapes():
    png = open(os.path.join(PHOTOS, "chelsea-333x500.png"), "rb").read()
    t = recio.Transform("resize(64,48) normalize(imagenet) chw")
    x = t(png, seed=3)
    check(x.shape == (3, 48, 64) and x.dtype == np.float32, str(x.shape))
    pixels = recio.Transform("flip")(png)  # flip twice: the decoded pixels, HWC uint8
    pixels = recio.Transform("flip")(pixels)
    check(pixels.shape == (500, 333, 3) and pixels.dtype == np.uint8, str(pixels.shape))
    check(np.array_equal(t(pixels, seed=3), x), "an HWC array gives what its encoded bytes give")
    check(np.array_equal(recio.Transform("flip")(pixels[:, :, 0])[:, ::-1, 0], pixels[:, :, 0]), "grey 2-D input")
    check(t.output_shape(333, 500) == ((3, 48, 64), "float32"))
    check(recio.Transform("random_rotate(5)").output_shape(10, 10) is not None)
    raises(recio.ArgError, lambda: recio.Transform("center_crop(600)")(png), "transform")
    raises(recio.ArgError, lambda: t(np.zeros((4, 4), dtype=np.float32)), "uint8")
    jpg = open(os.path.join(PHOTOS, "hubble-1600x1200.jpg"), "rb").read()
    tt = recio.Transform("resize_short(100) center_crop(96) chw")
    check(tt(jpg, fast=True).shape == tt(jpg).shape == (3, 96, 96))


def test_transform_boxes_and_mask():
    """boxes= and mask= ride along (recio_transform_apply_desc): a flip and an integer crop against
    hand-computed boxes and NumPy's own slicing of the mask; mask_fill; the very files
    `recio apply --boxes/--mask` writes, for encoded input and a random chain; bad input refused."""
    rng = np.random.RandomState(0)
    img = rng.randint(0, 256, (40, 60, 3)).astype(np.uint8)
    mask = np.zeros((40, 60), np.uint8)
    mask[5:20, 10:30] = 3
    mask[25:38, 40:55] = 7
    boxes = np.array([[3, 10 / 60., 5 / 40., 30 / 60., 20 / 40., 42], [7, 40 / 60., 25 / 40., 55 / 60., 38 / 40., 43]], np.float32)
    out, b, m = recio.Transform("flip")(img, boxes=boxes, mask=mask)
    want = boxes.copy()
    want[:, 1], want[:, 3] = 1 - boxes[:, 3], 1 - boxes[:, 1]
    check(np.array_equal(out, img[:, ::-1]) and np.array_equal(m, mask[:, ::-1]), "flip: image and mask")
    check(b.shape == (2, 6) and np.allclose(b, want, atol=1e-6), "flip: boxes %s" % b)
    out, b, m = recio.Transform("crop(8,4,40,30)")(img, boxes=boxes, mask=mask)
    want = np.array([[3, 2 / 40., 1 / 30., 22 / 40., 16 / 30., 42], [7, 32 / 40., 21 / 30., 1, 1, 43]], np.float32)
    check(np.array_equal(out, img[4:34, 8:48]) and np.array_equal(m, mask[4:34, 8:48]), "crop: image and mask")
    check(np.allclose(b, want, atol=1e-6), "crop: boxes %s, want %s" % (b, want))
    out, b, m = recio.Transform("crop(40,0,20,40)")(img, boxes=boxes)
    check(b.shape == (1, 6) and b[0, 0] == 7 and m is None, "a box whose centre leaves is dropped: %s" % b)
    for fill, corner in ((255, 255), (0, 0), (9, 9)):
        _, b, m = recio.Transform("pad(2)")(img, mask=mask, mask_fill=fill)
        check(b is None and m.shape == (44, 64) and m[0, 0] == corner and np.array_equal(m[2:42, 2:62], mask), "pad, fill %d" % fill)
    raises(recio.ArgError, lambda: recio.Transform("flip")(img, boxes=boxes[:, :4]), "boxes")
    raises(recio.ArgError, lambda: recio.Transform("flip")(img, mask=mask[:10]))
    try:
        from PIL import Image
    except ImportError:
        raise SkipTest("PIL is not installed: the command's files are not compared")
    Image.fromarray(img).save(tmp("bm.png"))
    Image.fromarray(mask).save(tmp("bm_mask.png"))
    raises(recio.DecodeError, lambda: recio.Transform("flip")(img, mask=open(tmp("bm.png"), "rb").read()), "an 8-bit RGB PNG, not a label mask")
    with open(tmp("bm.txt"), "w") as f:
        for o in boxes:
            f.write("%g %.9g %.9g %.9g %.9g\n" % tuple(o[:5]))
    for spec, seed in (("random_resized_crop(32,0.3,1) random_flip(0.5) random_vflip(0.5)", 5),
                       ("random_expand(2) random_bbox_crop(0.3) resize(48,40)", 3)):
        cli("apply", "--spec", spec, "--seed", seed, "--boxes", tmp("bm.txt"), "--boxes-out", tmp("bm_out.txt"),
            "--mask", tmp("bm_mask.png"), "--mask-out", tmp("bm_mask_out.png"), tmp("bm.png"), tmp("bm_out.png"))
        out, b, m = recio.Transform(spec)(open(tmp("bm.png"), "rb").read(), seed=seed, boxes=boxes[:, :5],
                                          mask=open(tmp("bm_mask.png"), "rb").read())
        check(np.array_equal(out, np.asarray(Image.open(tmp("bm_out.png")))), "%s: the image of recio apply" % spec)
        check(np.array_equal(m, np.asarray(Image.open(tmp("bm_mask_out.png")))), "%s: the mask of recio apply" % spec)
        lines = [ln.split() for ln in open(tmp("bm_out.txt")) if ln.strip()]
        got = np.array(lines, np.float32).reshape(-1, 5)
        check(got.shape == b.shape and np.array_equal(got, b), "%s: boxes %s, recio apply %s" % (spec, b, got))
    # a segmentation record from Python: the mask after the image, found again; the image alone by unpack
    png, mpng = open(tmp("bm.png"), "rb").read(), open(tmp("bm_mask.png"), "rb").read()
    rec = recio.pack(recio.IRHeader(0, 2.0, 5, 0), png, mask=mpng)
    check(rec.endswith(struct.pack("<I", len(mpng)) + b"RMSK") and len(rec) == 24 + len(png) + len(mpng) + 8)
    h, im, mk = recio.unpack_mask(rec)
    check(h.label == 2.0 and im == png and mk == mpng)
    check(recio.unpack(rec)[1] == rec[24:], "unpack gives the bytes after the header whole, as MXNet's unpack")
    check(recio.unpack_mask(recio.pack(recio.IRHeader(0, 1.0, 1, 0), png))[2] is None)
    _, _, m = recio.Transform("flip")(im, mask=mk)
    check(np.array_equal(m, mask[:, ::-1]), "the record's mask decodes to the labels")


def _png(labels, colour_type, depth, palette=None):
    """A PNG of a (H, W) array of sample values, written here from the PNG specification (filter 0
    rows, samples packed from the top bit, zlib via Python's zlib, CRC-32 via binascii)."""
    import binascii
    import zlib
    h, w = labels.shape
    rows = b""
    for row in labels:
        if depth == 16:
            rows += b"\0" + b"".join(struct.pack(">H", int(v)) for v in row)
        else:
            bits = "".join(format(int(v), "0%db" % depth) for v in row)
            bits += "0" * (-len(bits) % 8)
            rows += b"\0" + bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", binascii.crc32(kind + data) & 0xffffffff)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour_type, 0, 0, 0))
    if palette is not None:
        out += chunk(b"PLTE", bytes(palette))
    return out + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_mask_kinds():
    """One mask rule for recio.pack(mask=), Transform(mask=) and the iterator (recio_decode_desc.mask): a
    VOC palette PNG's index 1 stays label 1 (it became 38, the grey of its colour), an 8-bit grey
    PNG's bytes are the labels; a 1-bit grey PNG (1 became 255), a 16-bit grey one (3000 became 11),
    a grey JPEG and an RGB PNG are refused, naming the kind."""
    labels = np.zeros((12, 16), np.uint8)
    labels[:, 8:] = 1
    labels[6:, :4] = 15
    voc = []
    for i in range(256):  # VOC's colour map: index i's bits spread over r, g, b from the top
        c = [0, 0, 0]
        for j in range(8):
            for k in range(3):
                c[k] |= ((i >> (3 * j + k)) & 1) << (7 - j)
        voc += c
    img = np.full((12, 16, 3), 90, np.uint8)
    good = {"palette": _png(labels, 3, 8, voc), "grey": _png(labels, 0, 8)}
    ones = (labels == 1).astype(np.uint8)
    bad = {"a 1-bit grey PNG": _png(ones, 0, 1), "a 16-bit grey PNG": _png(ones.astype(np.uint16) * 3000, 0, 16),
           "an 8-bit RGB PNG": _png(np.repeat(ones, 3, axis=1), 2, 8)}
    try:
        import io
        from PIL import Image
        jpg = io.BytesIO()
        Image.fromarray(ones * 3).save(jpg, "JPEG")
        bad["a JPEG"] = jpg.getvalue()
    except ImportError:
        pass
    hdr = recio.IRHeader(0, 1.0, 7, 0)
    for name, m in good.items():
        _, _, mk = recio.Transform("flip")(img, mask=m)
        check(mk.shape == (12, 16) and np.array_equal(mk, labels[:, ::-1]), "%s: Transform's labels %s" % (name, mk))
        rec = recio.pack(hdr, _png(img[:, :, 0], 0, 8), mask=m)
        check(recio.unpack_mask(rec)[2] == m, "%s: pack keeps the mask's bytes" % name)
        with recio.Writer(tmp("mk.rec")) as w:
            w.write(rec)
        it = recio.ImageRecordIter(path_imgrec=tmp("mk.rec"), spec="flip", batch_size=1, masks=True)
        b = next(iter(it))
        check(np.array_equal(b.mask[0], labels[:, ::-1]), "%s: the iterator's labels %s" % (name, b.mask[0]))
        it.close()
    for name, m in bad.items():
        raises(recio.DecodeError, lambda: recio.pack(hdr, _png(img[:, :, 0], 0, 8), mask=m), "mask: " + name + ", not a label mask")
        raises(recio.DecodeError, lambda: recio.Transform("flip")(img, mask=m), "mask: " + name + ", not a label mask")


def test_transform_refuses_bad_boxes():
    """Boxes that are not boxes (NaN, infinite, as 1e40 becomes in float32, or inverted) raise
    ArgError naming the object, on arrays and encoded images; none is moved as if a box."""
    img = np.zeros((20, 30, 3), np.uint8)
    for row, words in (([0, np.nan, 0.2, 0.5, 0.6], "object 0: xmin is NaN"), ([0, 0.9, 0.8, 0.1, 0.2], "object 0: xmin > xmax"),
                       ([1e40, 0.1, 0.2, 0.5, 0.6], "object 0: class is infinite")):
        boxes = np.array([[0, 0.1, 0.1, 0.2, 0.2], row], np.float64)
        boxes[0, 0] = 3
        with np.errstate(over="ignore"):
            for spec in ("flip", "identity", "random_resized_crop(16)"):
                raises(recio.ArgError, lambda: recio.Transform(spec)(img, boxes=boxes),
                       "Transform: boxes: " + words.replace("object 0", "object 1"))
    _, b, _ = recio.Transform("identity")(img, boxes=np.array([[0, -5, -5, 10, 10], [1, -0.4, 0.25, 0.5, 0.75]], np.float32))
    check(b.shape == (1, 5) and np.allclose(b[0], [1, 0, 0.25, 0.5, 0.75]), "identity clips and drops: %s" % b)


def test_iter_moves_boxes_and_masks():
    """ImageRecordIter on detection + segmentation records (label_pad_width, masks=True): a flip moves
    the boxes in label (hand-computed) and Batch.mask (NumPy's own flip of the mask); a pad leaves
    mask_fill around it; objects counts the kept boxes, -1 pads the row."""
    try:
        from PIL import Image
    except ImportError:
        raise SkipTest("PIL is not installed: no PNGs to pack")
    rng = np.random.RandomState(1)
    img = rng.randint(0, 256, (40, 60, 3)).astype(np.uint8)
    mask = np.zeros((40, 60), np.uint8)
    mask[5:20, 10:30] = 3
    mask[25:38, 40:55] = 7
    Image.fromarray(img).save(tmp("im.png"))
    Image.fromarray(mask).save(tmp("im_mask.png"))
    png, mpng = open(tmp("im.png"), "rb").read(), open(tmp("im_mask.png"), "rb").read()
    labels = np.array([4, 5, 60, 40, 3, 10 / 60., 5 / 40., 30 / 60., 20 / 40., 7, 40 / 60., 25 / 40., 55 / 60., 38 / 40.], np.float32)
    with recio.Writer(tmp("seg.rec")) as w:
        for i in range(4):
            w.write(recio.pack(recio.IRHeader(len(labels), labels, i, 0), png, mask=mpng))
    it = recio.ImageRecordIter(path_imgrec=tmp("seg.rec"), spec="flip", batch_size=2, label_pad_width=20, masks=True,
                               workers=0)
    want = labels.copy()
    for k in (4, 9):
        want[k + 1], want[k + 3] = 1 - labels[k + 3], 1 - labels[k + 1]
    n = 0
    for b in it:
        for i in range(b.count):
            n += 1
            check(np.array_equal(b.data[i], img[:, ::-1]) and np.array_equal(b.mask[i], mask[:, ::-1]), "flip: image and mask")
            check(b.objects[i] == 2 and np.allclose(b.label[i][:14], want, atol=1e-6) and np.all(b.label[i][14:] == -1),
                  "flip: label row %s" % b.label[i])
    check(n == 4, "4 items, not %d" % n)
    it = recio.ImageRecordIter(path_imgrec=tmp("seg.rec"), spec="pad(3)", batch_size=2, masks=True, mask_fill=9,
                               workers=2)
    for b in it:
        check(b.mask.shape == (2, 46, 66) and np.all(b.mask[:, :3] == 9) and np.array_equal(b.mask[0, 3:43, 3:63], mask),
              "pad: the mask inside, mask_fill round it")


def test_iter_mixup():
    """mixup_alpha: each item is lam x_i + (1 - lam) x_(n-1-i) of the unmixed batch (NumPy's own
    arithmetic), soft_label puts lam and 1 - lam on the two classes."""
    photos = sorted(f for f in os.listdir(PHOTOS) if f.endswith(".jpg"))[:8]
    with recio.Writer(tmp("mix.rec")) as w:
        for i, f in enumerate(photos):
            w.write(recio.pack(recio.IRHeader(0, float(i % 5), i, 0), open(os.path.join(PHOTOS, f), "rb").read()))
    it = recio.ImageRecordIter(path_imgrec=tmp("mix.rec"), spec="resize(8,8) float", batch_size=4, workers=0)
    plain = [(b.data.copy(), b.label.copy()) for b in it]
    check(len(plain) == 2, "two batches")
    it = recio.ImageRecordIter(path_imgrec=tmp("mix.rec"), spec="resize(8,8) float", batch_size=4, workers=2,
                               mixup_alpha=0.4, num_classes=1000)
    for (x, y), b in zip(plain, it):
        lam = b.lam
        check(b.mix == 1 and 0 <= lam <= 1 and b.soft_label.shape == (4, 1000), "mixed: %s %s" % (b.mix, lam))
        check(np.allclose(b.data, lam * x + (1 - lam) * x[::-1], atol=1e-3), "MixUp pixels")
        want = np.zeros((4, 1000), np.float32)
        for i in range(4):
            want[i, int(y[i])] += lam
            want[i, int(y[3 - i])] += 1 - lam
        check(np.allclose(b.soft_label, want, atol=1e-6), "soft labels")


# ---- records ----

def test_reader_writer_pack():
    missing = tmp("no-such-dir/x.rec")
    raises(recio.FileError, lambda: recio.Reader(missing), missing + ": offset 0: cannot open: No such file")
    raises(recio.FileError, lambda: recio.Writer(missing), missing, "No such file")
    payloads = [b"", b"x", b"\x0a\x23\xd7\xce" * 5, bytes(range(256)) * 3]
    with recio.Writer(tmp("w.rec"), index=True) as w:
        for p in payloads:
            w.write(p)
    dump = [ln.split("\t") for ln in cli("dump", tmp("w.rec")).stdout.decode().splitlines()]
    r = recio.Reader(tmp("w.rec"))
    got = []
    for p in r:
        got.append((p, r.offset))
    check([g[0] for g in got] == payloads)
    check([str(g[1]) for g in got] == [d[1] for d in dump])
    check(open(tmp("w.idx")).read().split() == sum(([str(i), d[1]] for i, d in enumerate(dump)), []))
    with open(tmp("w2.rec.idx"), "w") as f:  # the .idx readers take (recio_index_path): REC.idx when there
        f.write("0\t0\n")
    with recio.Writer(tmp("w2.rec"), index=True) as w:
        for p in payloads:
            w.write(p)
    check(open(tmp("w2.rec.idx")).read().split() == sum(([str(i), d[1]] for i, d in enumerate(dump)), []))
    check(not os.path.exists(tmp("w2.idx")))
    r.seek(got[2][1])
    check(r.read() == payloads[2] and r.read() == payloads[3] and r.read() is None)
    with recio.Reader(tmp("w.rec"), mmap=True) as r:
        check(list(r) == payloads)
    try:
        with recio.Writer(tmp("a.rec"), atomic=True) as w:
            w.write(b"abc")
            raise KeyError("stop")
    except KeyError:
        pass
    check(not os.path.exists(tmp("a.rec")), "an aborted atomic writer leaves nothing")
    raises(recio.CorruptError, lambda: list(recio.Reader(os.path.join(COMPAT, "corrupt-bad-magic.rec"))), "offset")
    raises(recio.FileError, lambda: recio.Reader(tmp("missing.rec")), "missing.rec")
    # image record headers, as `recio dump --header` reads them
    hdr = [ln.split("\t") for ln in cli("dump", "--header", os.path.join(COMPAT, "images.rec")).stdout.decode().splitlines()]
    for (payload, h) in zip(recio.Reader(os.path.join(COMPAT, "images.rec")), hdr):
        head, img = recio.unpack(payload)
        labels = [float(x) for x in h[4].split(",")]
        check(head.flag == int(h[3]) and head.id == int(h[5]) and head.id2 == int(h[6]) and len(img) == int(h[7]), str(h))
        lab = [head.label] if head.flag == 0 else list(head.label)
        check(np.allclose(np.float32(lab), np.float32(labels), rtol=1e-6), "%s %s" % (lab, labels))
        again = recio.pack(head, img)  # with labels after the header, MXNet writes 0 in the header's label
        check(again == payload if head.flag == 0 else again[:4] + again[8:] == payload[:4] + payload[8:],
              "pack(unpack(x)) == x")


def test_split_equals_cli():
    uris = ";".join(os.path.join(COMPAT, f) for f in ("a.rec", "b.rec", "c.rec"))
    for nsplit in (1, 3, 7):
        for rank in range(nsplit):
            want = cli("split", "--nsplit", nsplit, "--rank", rank, uris).stdout.decode().splitlines()
            got = ["%s\t%s\t%d\t%d" % (w.path, "-" if w.ordinal is None else w.ordinal, w.offset, len(p))
                   for w, p in recio.split(uris, rank, nsplit).items()]
            check(got == want, "nsplit %d rank %d:\n%s\n%s" % (nsplit, rank, got, want))
    s = recio.split(uris, 0, 2, index=True)
    check(s.count == len(list(s)), "index mode counts")
    a = [w.key for w, _ in recio.split(uris, 0, 1, shuffle=True, seed=1).items()]
    b = [w.key for w, _ in recio.split(uris, 0, 1, shuffle=True, seed=1, epoch=1).items()]
    check(sorted(a) == sorted(b) and a != b, "a new order per epoch")


def test_library_lookup():
    f = _lib.find_library
    check(f(environ={"RECIO_LIBRARY": "/x/librecio.so"}) == "/x/librecio.so", "RECIO_LIBRARY wins")
    tree = tmp("tree")
    os.makedirs(os.path.join(tree, "python", "recio"))
    os.makedirs(os.path.join(tree, "build"))
    open(os.path.join(tree, "build", "librecio.so"), "w").close()
    check(f(pkg_dir=os.path.join(tree, "python", "recio"), environ={}) == os.path.join(tree, "build", "librecio.so"))
    inst = tmp("prefix")  # PREFIX/lib/python3/dist-packages/recio next to PREFIX/lib/librecio.so
    os.makedirs(os.path.join(inst, "lib", "python3", "dist-packages", "recio"))
    open(os.path.join(inst, "lib", "librecio.so"), "w").close()
    check(f(pkg_dir=os.path.join(inst, "lib", "python3", "dist-packages", "recio"), environ={}) ==
          os.path.join(inst, "lib", "librecio.so"))


# ---- PyTorch ----

def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise SkipTest("python3-torch is not installed")


def test_torch_parts():
    need_torch()
    import torch
    from recio.torch import RecordDataset
    uris = tmp("ds.rec") + ";" + tmp("ds2.rec")
    kw = dict(path_imgrec=uris, data_shape=(3, 32, 32), batch_size=3, last_batch="discard")
    seen = []
    for rank in range(2):
        ds = RecordDataset(rank=rank, world_size=2, **kw)
        check(ds.part() == (rank, 2))
        for data, label in ds:
            check(isinstance(data, torch.Tensor) and data.shape == (3, 3, 32, 32))
            check(data.data_ptr() == ds._it._batch.data.__array_interface__["data"][0], "main process: no copy")
            seen += ds._it._batch.index.tolist()
    whole = recio.ImageRecordIter(**dict(kw, workers=0))
    all_ids = sorted(i for b in whole for i in b.index.tolist())
    check(sorted(seen) == all_ids, "two ranks read every record once: %s vs %s" % (sorted(seen), all_ids))
    # DataLoader workers within a rank: part = rank * workers + worker
    ds = RecordDataset(rank=1, world_size=2, **dict(kw, checksums=True))
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    got = sorted(recio._fold([recio.checksum(d[i].numpy()) for i in range(d.shape[0])]) for d, _ in loader)
    want = []
    for part in (2, 3):
        want += [b.checksum(fast=True) for b in recio.ImageRecordIter(**dict(kw, num_parts=4, part_index=part, workers=0))]
    check(got == sorted(want), "workers of rank 1 read parts 2 and 3 of 4")
    # epochs: set_epoch gives the same batches in workers as an iterator at that epoch
    ds.set_epoch(1)
    kw2 = dict(kw, rand_crop=True, seed=4)
    ds = RecordDataset(rank=0, world_size=1, **kw2)
    ds.set_epoch(2)
    a = [d.clone() for d, _ in ds]
    ref = recio.ImageRecordIter(**dict(kw2, workers=0, epoch=2))
    b = [torch.from_numpy(x.data.copy()) for x in ref]
    check(len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b)), "set_epoch(2) == epoch=2")
    c = [d.clone() for d, _ in ds]  # next pass: epoch 3
    check(not all(torch.equal(x, y) for x, y in zip(a, c)), "a new epoch, new crops")
    check(len(ds) == len(a))
    # rank and world size from torch.distributed: two processes in a gloo group, each reads its half
    import torch.distributed as dist
    if not dist.is_available():
        return
    script = ("import sys, json, torch.distributed as dist\nsys.path.insert(0, %r)\n"
              "from recio.torch import RecordDataset\n"
              "r = int(sys.argv[1])\n"
              "dist.init_process_group('gloo', init_method='file://' + %r, rank=r, world_size=2)\n"
              "ds = RecordDataset(**json.loads(sys.argv[2]))\n"
              "ids = [i for _ in ds for i in ds._it._batch.index.tolist()]\n"
              "print(json.dumps([ds.part(), ids]))\n"
              "dist.destroy_process_group()\n") % (os.path.join(ROOT, "python"), tmp("dist-store"))
    import json
    args = json.dumps(dict(kw, data_shape=list(kw["data_shape"])))
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo")  # the two processes talk over loopback only
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r), args], stdout=subprocess.PIPE, env=env)
             for r in (0, 1)]
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    check([o[0] for o in outs] == [[0, 2], [1, 2]], "parts from torch.distributed: %s" % [o[0] for o in outs])
    check(sorted(outs[0][1] + outs[1][1]) == all_ids, "two ranks of a process group read every record once")


def test_index_of_is_the_libraries():
    """recio.mx looks for the .idx the split reads (recio_index_path, asked through ctypes): X.rec.idx
    when it exists, else im2rec's X.idx; and 'shuffle' without either names the one to make."""
    from recio._mxnet import _index_of
    rec = tmp("ix.rec")
    shutil.copy(tmp("ds.rec"), rec)
    check(_index_of(rec) == tmp("ix.idx"), "no index: im2rec's name")
    open(rec + ".idx", "w").close()
    check(_index_of(rec) == rec + ".idx", "REC.idx first")
    check(_index_of(os.fsencode(rec)) == os.fsencode(rec + ".idx"), "bytes paths")
    os.remove(rec + ".idx")
    check(_index_of(tmp("noext")) == tmp("noext.idx"), "a name without .rec")


def test_struct_mirrors_match_the_header():
    """The ctypes structs must be recio.h's, field for field: a C compiler says where each field sits
    (a field added in C and not here shifts everything after it: the binding would crash or lie)."""
    import ctypes
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
    if not cc:
        raise SkipTest("no C compiler to read the header's layout")
    mirrors = {"recio_iter_desc": _lib.IterDesc, "recio_batch": _lib.Batch, "recio_image": _lib.Image,
               "recio_iter_item_desc": _lib.IterItemDesc, "recio_iter_label_desc": _lib.IterLabelDesc,
               "recio_iter_mix_desc": _lib.IterMixDesc, "recio_iter_run_desc": _lib.IterRunDesc,
               "recio_iter_info": _lib.IterInfo, "recio_iter_bad": _lib.IterBad,
               "recio_decode_desc": _lib.DecodeDesc, "recio_transform_desc": _lib.TransformDesc, "recio_record": _lib.Record,
               "recio_irecord": _lib.IRecord,
               "recio_io": _lib.IO, "recio_reader_desc": _lib.ReaderDesc, "recio_writer_desc": _lib.WriterDesc,
               "recio_split_desc": _lib.SplitDesc, "recio_split_where": _lib.SplitWhere, "recio_lst": _lib.Lst,
               "recio_lst_item": _lib.LstItem, "recio_allocator": _lib.Allocator, "recio_apply_desc": _lib.ApplyDesc,
               "recio_iter_cache_info": _lib.CacheInfo, "recio_index": _lib.Index, "recio_index_entry": _lib.IndexEntry,
               "recio_fs": _lib.Fs, "recio_fs_stat": _lib.FsStat}
    lines = ['#include "recio.h"', "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for c, py in mirrors.items():
        lines.append('printf("%s sizeof %%zu\\n", sizeof(%s));' % (c, c))
        for f, _ in py._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (c, f, c, f))
    lines.append("return 0; }")
    src, exe = tmp("layout.c"), tmp("layout")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c99", "-I", os.path.dirname(HERE), "-I/usr/include/stb", src, "-o", exe], check=True)
    got = dict(ln.rsplit(" ", 1) for ln in subprocess.run([exe], stdout=subprocess.PIPE, check=True).stdout.decode().splitlines())
    for c, py in mirrors.items():
        check(int(got[c + " sizeof"]) == ctypes.sizeof(py), "%s: %s bytes in C, %d here" % (c, got[c + " sizeof"], ctypes.sizeof(py)))
        for f, _ in py._fields_:
            check(int(got["%s %s" % (c, f)]) == getattr(py, f).offset, "%s.%s: offset %s in C, %d here" % (c, f, got["%s %s" % (c, f)], getattr(py, f).offset))


def main():
    make_dataset()
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    only = sys.argv[1:]
    for t in tests:
        if not only or t.__name__ in only:
            _run(t)
    teardown_module()
    tail = ", %d skipped" % skipped if skipped else ""
    print("test_python: %d passed, %d failed%s" % (passed, failed, tail))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
