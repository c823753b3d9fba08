"""Tests of the Python handles (ImageRecordIter, Transform, Reader, Writer, Split) under threads, after
close, across fork and pickling (spawn), and of what a dropped Writer leaves: issues 23 (items 1, 7, 8,
12) and 25 (item 3).

Runs on its own, as tests/test_python_handles.sh does from `make test` (the last line is
"test_python_handles: N passed, N failed[, N skipped]"), or under pytest:
    RECIO_LIBRARY=$PWD/build/librecio.so /usr/bin/python3 -m pytest tests/test_python_handles.py
The data sets are made under a temporary directory, removed at exit. PIL makes the JPEGs; the
DataLoader tests need torch: without them those tests are skipped.
"""
import gc
import io
import os
import pickle
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unittest
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import recio  # noqa: E402

SPEC = "resize(64,64) random_flip(0.5) float chw"
_TMP = []
_SETS = {}


def tmp(name):
    """A path in this run's temporary directory (removed at exit by the process that made it)."""
    if not _TMP:
        d = tempfile.mkdtemp(prefix="recio-handles-")
        pid = os.getpid()
        _TMP.append(d)
        import atexit
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(d, ignore_errors=True))
    return os.path.join(_TMP[0], name)


def colour(i):
    """The solid colour of image i (< 4096): its base-16 digits, 14 levels apart (JPEG moves a flat
    colour by a few levels), so that a record is identified by its pixels as well as its header."""
    return tuple(16 + 14 * ((i >> s) & 15) for s in (0, 4, 8))


def ident(rgb):
    """The image number a decoded colour (its mean over the pixels, R G B) stands for."""
    return sum(int(round((float(v) - 16) / 14)) << s for v, s in zip(rgb, (0, 4, 8)))


def dataset(n):
    """PATH.rec + PATH.idx of n solid-colour 16x16 JPEGs: record i has label i, id i, key i."""
    if n in _SETS:
        return _SETS[n]
    try:
        from PIL import Image
    except ImportError:
        raise unittest.SkipTest("PIL (python3-pil) is not installed")
    path = tmp("set%d.rec" % n)
    with recio.Writer(path, index=True) as w:
        for i in range(n):
            b = io.BytesIO()
            Image.new("RGB", (16, 16), colour(i)).save(b, "JPEG", quality=95)
            w.write(recio.pack(recio.IRHeader(0, float(i), i, 0), b.getvalue()), key=i)
    _SETS[n] = path
    return path


def offsets(rec):
    with open(rec[:-4] + ".idx") as f:
        return [int(ln.split()[1]) for ln in f if ln.strip()]


def raises(exc, fn, *words):
    """fn() raises exc with every word in its message."""
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), "%r not in %r" % (w, str(e))
        return e
    raise AssertionError("no %s raised" % exc.__name__)


def check_batch(b, shape=(1, 3, 64, 64)):
    """A batch whose pixels are the image its label names."""
    assert b.data.shape == shape, b.data.shape
    for k in range(b.count):
        got = ident(b.data[k].reshape(3, -1).mean(axis=1))
        assert got == int(b.label[k]), "item %d: pixels of image %d, label %g" % (k, got, b.label[k])


def run_threads(fns):
    """Run each fn on its own thread; the exceptions they raised, in order (None for none)."""
    errs = [None] * len(fns)

    def wrap(i, fn):
        try:
            fn()
        except BaseException as e:  # noqa: B036 - reported to the test
            errs[i] = e
    ts = [threading.Thread(target=wrap, args=(i, f)) for i, f in enumerate(fns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
        assert not t.is_alive(), "a thread hangs"
    return errs


def in_child(fn, timeout=60):
    """fn() in a forked child; its exit status (0 when fn returned True), or 'hang' when it did not end
    in time (then it is killed)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if fn() else 3
        except BaseException:
            traceback.print_exc()
            code = 2
        finally:
            os._exit(code)
    end = time.time() + timeout
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hang"


# ---- threads (issue 23, item 1) ----

def test_two_threads_one_iterator():
    """Two threads iterating one ImageRecordIter: the calls take turns; every batch is whole."""
    it = recio.ImageRecordIter(path_imgrec=dataset(20), spec=SPEC, batch_size=1, workers=0, copy=True)
    counts = [0, 0]

    def run(k):
        for _ in range(200):
            for b in it:
                check_batch(b)
                counts[k] += 1
    errs = run_threads([lambda: run(0), lambda: run(1)])
    assert errs == [None, None], errs
    assert sum(counts) >= 200 * 20, counts  # each loop ends at an epoch's end: at least one epoch each
    it.close()


def test_close_waits_for_next():
    """close() while another thread is in next(): that call finishes, the next ones raise ValueError."""
    for workers in (0, 2):
        it = recio.ImageRecordIter(path_imgrec=dataset(20), spec=SPEC, batch_size=4, workers=workers, copy=True)
        got = []

        def run():
            while True:
                for b in it:
                    check_batch(b, (4, 3, 64, 64))
                    got.append(b)
        started = time.time()
        errs = [None]

        def wrapped():
            try:
                run()
            except BaseException as e:  # noqa: B036
                errs[0] = e
        t = threading.Thread(target=wrapped)
        t.start()
        while len(got) < 10 and time.time() - started < 60:
            time.sleep(0.001)
        it.close()
        t.join(60)
        assert not t.is_alive()
        assert isinstance(errs[0], ValueError) and "closed" in str(errs[0]), "workers %d: %r" % (workers, errs[0])
        assert len(got) >= 10


def test_transform_close_during_calls():
    """Transform.close() while other threads call it: calls in progress finish with the right result,
    later ones raise ValueError; before the close, threads run the chain at once."""
    img = recio.unpack(next(iter(recio.Reader(dataset(20)))))[1]
    t = recio.Transform(SPEC)
    want = [t(img, seed=s) for s in range(4)]
    done = [0, 0]

    def run(k):
        i = 0
        while True:
            x = t(img, seed=i % 4)
            assert np.array_equal(x, want[i % 4])
            done[k] += 1
            i += 1
    threads = [threading.Thread(target=lambda k=k: errs.__setitem__(k, _catch(run, k))) for k in (0, 1)]
    errs = [None, None]
    for th in threads:
        th.start()
    end = time.time() + 60
    while min(done) < 50 and time.time() < end:
        time.sleep(0.001)
    t.close()
    for th in threads:
        th.join(60)
        assert not th.is_alive()
    for e in errs:
        assert isinstance(e, ValueError) and "closed" in str(e), repr(e)
    assert min(done) >= 50
    raises(ValueError, lambda: t(img), "closed")
    raises(ValueError, lambda: t.output_shape(16, 16), "closed")


def _catch(fn, *a):
    try:
        fn(*a)
    except BaseException as e:  # noqa: B036
        return e
    return None


def test_closed_handles_raise():
    """Every accessor of a closed handle raises ValueError naming it closed (no freed memory read)."""
    rec = dataset(20)
    it = recio.ImageRecordIter(path_imgrec=rec, spec="resize(8,8) float chw", batch_size=2, workers=0)
    it.next()
    state = it.state_dict()
    it.close()
    it.close()  # twice is harmless
    for name, fn in [("getdata", it.getdata), ("getlabel", it.getlabel), ("getpad", it.getpad),
                     ("getindex", it.getindex), ("next", it.next), ("iter_next", it.iter_next), ("reset", it.reset),
                     ("state_dict", it.state_dict), ("load_state_dict", lambda: it.load_state_dict(state)),
                     ("cache_stats", it.cache_stats), ("len", lambda: len(it)), ("for", lambda: [b for b in it]),
                     ("provide_data", lambda: it.provide_data)]:
        e = raises(ValueError, fn)
        assert "closed" in str(e), "%s after close: %r" % (name, e)
    assert it.closed
    r = recio.Reader(rec)
    r.close()
    w = recio.Writer(tmp("closed.rec"))
    w.close()
    s = recio.split(rec)
    s.close()
    for name, fn in [("Reader.read", r.read), ("Reader.seek", lambda: r.seek(0)), ("Reader.tell", r.tell),
                     ("Reader iter", lambda: list(r)), ("Writer.write", lambda: w.write(b"x")),
                     ("Writer.tell", w.tell), ("Split iter", lambda: list(s)), ("Split.reset", s.reset),
                     ("Split.count", lambda: s.count), ("Split.bounds", lambda: s.bounds)]:
        e = raises(ValueError, fn)
        assert "closed" in str(e), "%s after close: %r" % (name, e)


def test_load_state_dict_refused_before_moving():
    """load_state_dict with a key missing raises, and the iterator still gives its own next batch."""
    args = dict(path_imgrec=dataset(20), spec="resize(8,8) float chw", batch_size=2, workers=0, shuffle=True, seed=3)
    a, ref = recio.ImageRecordIter(**args), recio.ImageRecordIter(**args)
    state = a.state_dict()
    for x in (a, ref):
        for _ in range(3):
            x.next()
    bad = dict(state)
    del bad["fresh"]
    raises(ValueError, lambda: a.load_state_dict(bad), "fresh")
    assert a.next().checksum() == ref.next().checksum(), "the failed load moved the iterator"


# ---- an error ends the epoch (issue 23, item 7) ----

def test_error_ends_the_epoch():
    """After a recio.Error, iterating again starts the next epoch (which reads up to the bad record)."""
    raw = bytearray(open(dataset(20), "rb").read())
    offs = offsets(dataset(20))
    raw[offs[9]:offs[9] + 4] = b"\0\0\0\0"  # record 9's magic
    bad = tmp("bad.rec")
    with open(bad, "wb") as f:
        f.write(raw)
    for workers in (0, 2):
        it = recio.ImageRecordIter(path_imgrec=bad, spec="resize(8,8) float chw", batch_size=3, workers=workers)
        for epoch in range(3):
            got = []
            try:
                for b in it:
                    got.append((b.epoch, b.label.tolist()))
                raise AssertionError("no error")
            except recio.CorruptError as e:
                assert "offset %d" % offs[9] in str(e), str(e)
            assert got == [(epoch, [0.0, 1.0, 2.0]), (epoch, [3.0, 4.0, 5.0]), (epoch, [6.0, 7.0, 8.0])], \
                "workers %d, epoch %d: %s" % (workers, epoch, got)
        raises(recio.CorruptError, it.next)  # next() itself keeps saying it until the next epoch
        it.close()


# ---- integers that reach C (issue 23, item 8) ----

def test_integers_are_range_checked():
    """An integer that does not fit its C type is refused naming the parameter (ctypes would wrap it)."""
    rec = dataset(20)
    base = dict(path_imgrec=rec, spec="resize(8,8) float chw", batch_size=2, workers=0)
    for kw, name in [(dict(num_parts=2 ** 32 + 2, part_index=1), "num_parts"), (dict(batch_size=2 ** 32 + 1), "batch_size"),
                     (dict(seed=-1), "seed"), (dict(seed=2 ** 64), "seed"), (dict(seed_aug=2 ** 64 + 5), "seed_aug"),
                     (dict(shuffle_buffer=-1), "shuffle_buffer"), (dict(prefetch_buffer=2 ** 32), "prefetch_buffer"),
                     (dict(workers=2 ** 32), "workers"), (dict(cache_bytes=2 ** 64), "cache_bytes"),
                     (dict(label_width=2 ** 32 + 1), "label_width"), (dict(epoch=-1), "epoch")]:
        raises(ValueError, lambda: recio.ImageRecordIter(**dict(base, **kw)), name, "out of range")
    raises(ValueError, lambda: recio.split(rec, rank=2 ** 32, nsplit=2), "rank", "out of range")
    raises(ValueError, lambda: recio.split(rec, rank=0, nsplit=-1), "nsplit", "out of range")
    raises(ValueError, lambda: recio.split(rec, seed=-1), "seed")
    s = recio.split(rec)
    raises(ValueError, lambda: s.reset(-1), "epoch")
    r = recio.Reader(rec)
    raises(ValueError, lambda: r.seek(-1), "offset")
    raises(ValueError, lambda: r.seek(2 ** 64), "offset")
    t = recio.Transform("resize(8,8)")
    img = recio.unpack(r.read())[1]
    raises(ValueError, lambda: t(img, seed=-1), "seed")
    raises(ValueError, lambda: t(img, seed=2 ** 64), "seed")
    raises(ValueError, lambda: t.output_shape(2 ** 31, 8), "width")
    raises(TypeError, lambda: t(img, seed=1.5), "seed")
    assert np.array_equal(t(img, seed=2 ** 64 - 1), t(img, seed=2 ** 64 - 1))  # the top value is in range
    path = tmp("keys.rec")
    with recio.Writer(path, index=True) as w:
        raises(ValueError, lambda: w.write(b"x", key=-1), "key")
        raises(ValueError, lambda: w.write(b"x", key=2 ** 64), "key")
        w.write(b"y", key=2 ** 64 - 1)
    with open(path[:-4] + ".idx") as f:
        assert f.read().split() == [str(2 ** 64 - 1), "0"], "a refused key writes nothing"


# ---- processes (issue 25, item 3) ----

def test_pickled_handles_reopen():
    """Every handle pickles by path and options and opens again on first use, where it was."""
    rec = dataset(20)
    r = recio.Reader(rec)
    want = list(recio.Reader(rec))
    for _ in range(3):
        r.read()
    r2 = pickle.loads(pickle.dumps(r))
    assert list(r2) == want[3:] and list(r) == want[3:], "a copy continues where the reader was"
    t = recio.Transform(SPEC)
    t2 = pickle.loads(pickle.dumps(t))
    assert t2.spec == SPEC and np.array_equal(t2(want[0][24:], seed=5), t(want[0][24:], seed=5))
    args = dict(path_imgrec=rec, spec=SPEC, batch_size=3, workers=0, shuffle=True, seed=2)
    it = recio.ImageRecordIter(**args)
    list(it)
    it.reset()
    it.next()
    it2 = pickle.loads(pickle.dumps(it))  # in epoch 1: the copy starts it over
    ref = recio.ImageRecordIter(**dict(args, epoch=1))
    assert [b.checksum() for b in it2] == [b.checksum() for b in ref]
    s = recio.split(rec, 0, 2, shuffle=True, seed=4, epoch=3)
    first = s._next()
    s2 = pickle.loads(pickle.dumps(s))
    rest = list(s2)
    assert rest[0] == first and rest == list(recio.split(rec, 0, 2, shuffle=True, seed=4, epoch=3))
    s.close()
    assert pickle.loads(pickle.dumps(s)).closed, "a closed handle stays closed"
    path = tmp("pickled-writer.rec")
    w = recio.Writer(path, index=True)
    w.write(b"a")
    w2 = pickle.loads(pickle.dumps(w))
    raises(RuntimeError, lambda: w2.write(b"b"), "belongs to process")
    w2 = None  # dropped: its __del__ must not touch the file
    gc.collect()
    w.write(b"c")
    w.close()
    assert list(recio.Reader(path)) == [b"a", b"c"], "a copy of a Writer never touches the file"


def test_fork_reader_keeps_its_offset():
    """A Reader used in a forked child (seek + read) and in the parent: each reads the right records."""
    rec = big_records()
    want = list(recio.Reader(rec))
    offs = offsets(rec)
    r = recio.Reader(rec)
    for _ in range(5):
        r.read()

    def child():
        for i in (250, 7, 120):
            r.seek(offs[i])
            assert r.read() == want[i] and r.read() == want[i + 1]
        return True
    assert in_child(child) == 0
    assert list(r) == want[5:], "the parent's reader lost its place"
    r.seek(offs[3])
    assert in_child(lambda: r.read() == want[3] and r.offset == offs[3]) == 0


def big_records():
    """300 records of 10 KB (more than a read buffer)."""
    path = tmp("big.rec")
    if not os.path.exists(path):
        with recio.Writer(path, index=True) as w:
            for i in range(300):
                w.write(struct.pack("<I", i) * 2560)
    return path


def test_fork_iterator_never_touches_parent_threads():
    """An ImageRecordIter with worker threads, used then inherited by a forked child: the child iterates
    its own copy (the epoch the parent was in, from its start), closes it and exits; no hang."""
    rec = dataset(20)
    args = dict(path_imgrec=rec, spec="resize(8,8) float chw", batch_size=4, workers=2, shuffle=True, seed=1)
    it = recio.ImageRecordIter(**args)
    list(it)
    it.reset()
    it.next()  # epoch 1, threads busy filling the next batches
    want = [b.label.tolist() for b in recio.ImageRecordIter(**dict(args, epoch=1))]

    def child():
        got = [b.label.tolist() for b in it]
        it.close()
        return got == want
    assert in_child(child) == 0
    assert in_child(lambda: it.close() is None) == 0  # closing it straight away: no hang either
    assert in_child(lambda: it.__del__() is None) == 0  # what garbage collection in the child runs
    rest = [b.label.tolist() for b in it]
    assert len(rest) == 4, "the parent's iterator goes on: %s" % rest
    it.close()


def test_fork_transform_and_split():
    """A Transform and a Split inherited by a forked child work there; the child's split reads its part
    from the start of the epoch on its own file offset, and the parent's continues where it was."""
    rec = dataset(20)
    t = recio.Transform(SPEC)
    img = recio.unpack(next(iter(recio.Reader(rec))))[1]
    want = t(img, seed=9)
    assert in_child(lambda: np.array_equal(t(img, seed=9), want)) == 0
    assert np.array_equal(t(img, seed=9), want)
    records = list(recio.Reader(big_records()))
    s = recio.split(big_records(), 0, 1)
    for _ in range(5):
        s._next()
    assert in_child(lambda: list(s) == records) == 0
    assert list(s) == records[5:], "the parent's split lost its place"


def test_forked_writer_does_not_write():
    """A Writer inherited by a forked child refuses to write there and is dropped without touching the
    parent's file (not finished, not aborted): the parent's file is whole."""
    path = tmp("forked-writer.rec")
    w = recio.Writer(path, index=True)
    for i in range(10):
        w.write(b"%d" % i)

    def child():
        raises(RuntimeError, lambda: w.write(b"child"), "belongs to process")
        w.close()
        recio._finish_writers()
        return True
    assert in_child(child) == 0

    def child_gc():
        recio._finish_writers()  # what interpreter exit runs
        w.__del__()  # what garbage collection runs
        return True
    assert in_child(child_gc) == 0
    for i in range(10, 20):
        w.write(b"%d" % i)
    w.close()
    assert list(recio.Reader(path)) == [b"%d" % i for i in range(20)]
    assert len(offsets(path)) == 20


def check_written(path, payloads):
    """PATH.rec holds exactly the payloads and PATH.idx their keys 0.. and offsets."""
    r = recio.Reader(path)
    got, offs = [], []
    for p in r:
        got.append(p)
        offs.append(r.offset)
    assert got == payloads, "%d of %d records" % (len(got), len(payloads))
    with open(path[:-4] + ".idx") as f:
        assert [ln.split() for ln in f if ln.strip()] == [[str(i), str(o)] for i, o in enumerate(offs)]


def test_writer_dropped_without_close_finishes():
    """A Writer garbage-collected without close() finishes the .rec and .idx, with a ResourceWarning;
    an exception inside `with` still aborts."""
    for n, size in ((255, 1), (300, 10240)):
        path = tmp("dropped-%d.rec" % n)
        payloads = [bytes([i % 256]) * size for i in range(n)]
        w = recio.Writer(path, index=True)
        for p in payloads:
            w.write(p)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del w
            gc.collect()
        check_written(path, payloads)
        assert any(issubclass(c.category, ResourceWarning) and "not closed" in str(c.message) for c in caught), caught
    path = tmp("aborted.rec")
    try:
        with recio.Writer(path, index=True, atomic=True) as w:
            w.write(b"x")
            raise KeyError("stop")
    except KeyError:
        pass
    assert not os.path.exists(path), "an exception inside `with` aborts"


def test_writer_left_open_at_exit_finishes():
    """A script that ends without close(): the file is whole."""
    path = tmp("script.rec")
    script = ("import sys; sys.path.insert(0, %r)\nimport recio\nw = recio.Writer(%r, index=True)\n"
              "for i in range(300):\n    w.write(bytes([i %% 256]) * 10240)\n") % (os.path.join(ROOT, "python"), path)
    p = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", script], stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    check_written(path, [bytes([i % 256]) * 10240 for i in range(300)])
    assert b"ResourceWarning" in p.stderr, p.stderr.decode()


# ---- PyTorch DataLoader (issue 25, item 3) ----

def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise unittest.SkipTest("python3-torch is not installed")


class SeekReadDataset:
    """A straightforward port of an MXNet map-style Dataset: one Reader and one Transform made in
    __init__, seek + read + decode in __getitem__ (what DataLoader workers inherit or unpickle)."""

    def __init__(self, rec):
        self.offsets = offsets(rec)
        self.reader = recio.Reader(rec)
        self.reader.read()  # used in the main process already
        self.t = recio.Transform("resize(4,4)")

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        self.reader.seek(self.offsets[i])
        head, img = recio.unpack(self.reader.read())
        return int(head.id), ident(self.t(img).reshape(-1, 3).mean(axis=0))


def loader_kw(nw, ctx):
    return dict(num_workers=nw, multiprocessing_context=ctx if nw else None, timeout=60 if nw else 0,
                persistent_workers=bool(nw) and ctx == "spawn")


def test_dataloader_seek_read():
    """The seek+read Dataset in DataLoader(num_workers=0 and 2) under fork and spawn, 2 epochs: every
    record once per epoch, its id and pixels right."""
    need_torch()
    import torch.utils.data
    ds = SeekReadDataset(dataset(2000))
    for nw, ctx in ((0, None), (2, "fork"), (2, "spawn")):
        loader = torch.utils.data.DataLoader(ds, batch_size=100, shuffle=True, **loader_kw(nw, ctx))
        for epoch in range(2):
            ids, pix = [], []
            for i, p in loader:
                ids += i.tolist()
                pix += p.tolist()
            assert sorted(ids) == list(range(2000)), "%s %d workers, epoch %d: %d records" % (ctx, nw, epoch, len(ids))
            assert ids == pix, "%s %d workers: the pixels are not the record's" % (ctx, nw)


def test_dataloader_record_dataset():
    """recio.torch.RecordDataset in DataLoader(num_workers=0 and 2) under fork and spawn, 2 epochs: every
    record once per epoch, pixels matching labels; iterated in the main process first (its threads
    running) and then forked; len(loader) is the number of batches that arrive."""
    need_torch()
    import torch
    from recio.torch import RecordDataset
    rec = dataset(2000)
    ds = RecordDataset(path_imgrec=rec, path_imgidx=rec[:-4] + ".idx", data_shape=(3, 16, 16), batch_size=40,
                       shuffle=True, seed=7, preprocess_threads=2)
    # an epoch in the main process first: its iterator, with its threads, is there when workers fork
    assert [d.shape for d, _ in ds] == [(40, 3, 16, 16)] * 50
    for nw, ctx in ((0, None), (2, "fork"), (2, "spawn")):
        loader = torch.utils.data.DataLoader(ds, batch_size=None, **loader_kw(nw, ctx))
        for epoch in range(2):
            labels, n = [], 0
            for data, label in loader:
                n += 1
                labels += [int(x) for x in label.tolist()]
                got = [ident(data[k].reshape(3, -1).mean(dim=1).tolist()) for k in range(data.shape[0])]
                assert got == [int(x) for x in label.tolist()], "%s %d workers: pixels against labels" % (ctx, nw)
            assert sorted(labels) == list(range(2000)), "%s %d workers, epoch %d: %d records" % (ctx, nw, epoch, len(labels))
            assert n == len(loader), "%s %d workers: %d batches, len %d" % (ctx, nw, n, len(loader))
    # parts that each pad or drop their own last batch: len() counts the DataLoader's workers
    for last in ("discard", "pad"):
        ds = RecordDataset(path_imgrec=rec, path_imgidx=rec[:-4] + ".idx", data_shape=(3, 16, 16), batch_size=48,
                           last_batch=last)
        for nw in (0, 2):
            loader = torch.utils.data.DataLoader(ds, batch_size=None, **loader_kw(nw, "fork"))
            n = sum(1 for _ in loader)
            assert n == len(loader), "%s, %d workers: %d batches arrive, len %d" % (last, nw, n, len(loader))
        assert len(RecordDataset(num_workers=2, **ds.kwargs)) == len(torch.utils.data.DataLoader(ds, num_workers=2,
                                                                                                  batch_size=None))


# ---- running ----

def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_") and callable(v)]
    only = sys.argv[1:]
    passed = failed = skipped = 0
    for t in tests:
        if only and t.__name__ not in only:
            continue
        start = time.time()
        try:
            t()
            passed += 1
            if os.environ.get("RECIO_TEST_TIMES"):
                print("ok %s %.1f s" % (t.__name__, time.time() - start))
        except unittest.SkipTest as e:
            skipped += 1
            print("skip: %s: %s" % (t.__name__, e))
        except Exception:
            failed += 1
            print("FAIL %s:\n%s" % (t.__name__, traceback.format_exc()), file=sys.stderr)
    tail = ", %d skipped" % skipped if skipped else ""
    print("test_python_handles: %d passed, %d failed%s" % (passed, failed, tail))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
