"""Tests of issue 25 items 4 and 5: recio.torch.RecordMapDataset (map-style, by position over the .idx
keys or a key range), insightface's layout (record 0 a header whose label gives the image keys,
identity records with empty payloads after the images), ImageRecordIter's skip_bad= and keys=,
RecordDataset's parts= ('contiguous' or 'interleave'), and errors a Python user can act on.

Runs on its own, as tests/test_python_map.sh does from `make test` (the last line is
"test_python_map: N passed, N failed[, N skipped]"), or under pytest:
    RECIO_LIBRARY=$PWD/build/librecio.so /usr/bin/python3 -m pytest tests/test_python_map.py
The data sets are made under a temporary directory, removed at exit. PIL makes the JPEGs; the
PyTorch tests need torch: without them those tests are skipped.
"""
import io
import os
import pydoc
import shutil
import sys
import tempfile
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import recio  # noqa: E402

_TMP = []
_SETS = {}
SIDE = 24  # image side in pixels


def tmp(name):
    """A path in this run's temporary directory (removed at exit by the process that made it)."""
    if not _TMP:
        d = tempfile.mkdtemp(prefix="recio-map-")
        pid = os.getpid()
        _TMP.append(d)
        import atexit
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(d, ignore_errors=True))
    return os.path.join(_TMP[0], name)


def colour(i):
    """The solid colour of image i (< 4096): its base-16 digits, 14 levels apart."""
    return tuple(16 + 14 * ((i >> s) & 15) for s in (0, 4, 8))


def ident(rgb):
    """The image number a decoded colour (its mean over the pixels, R G B) stands for."""
    return sum(int(round((float(v) - 16) / 14)) << s for v, s in zip(rgb, (0, 4, 8)))


def jpeg(i, side=SIDE):
    try:
        from PIL import Image
    except ImportError:
        raise unittest.SkipTest("PIL (python3-pil) is not installed")
    b = io.BytesIO()
    Image.new("RGB", (side, side), colour(i)).save(b, "JPEG", quality=95)
    return b.getvalue()


def faces(n=60, per=6):
    """An insightface-like file (the layout of their MS1M / Glint360K train.rec, which their
    MXFaceDataset reads as images range(1, int(label[0])) of record 0): record 0 a header with labels
    (n + 1, n + 1 + identities) and an empty payload; records 1..n the images (image k: colour k, id
    k, label = identity (k - 1) // per, stored identity by identity); then records n + 1... one per
    identity, labels (its first image key, its last + 1), empty payloads. Keys are the ordinals."""
    if ("faces", n, per) in _SETS:
        return _SETS[("faces", n, per)]
    path = tmp("faces%d.rec" % n)
    with recio.Writer(path, index=True) as w:
        ids = -(-n // per)
        w.write(recio.pack(recio.IRHeader(2, np.array([n + 1, n + 1 + ids], np.float32), 0, 0), b""))
        for k in range(1, n + 1):
            w.write(recio.pack(recio.IRHeader(0, float((k - 1) // per), k, 0), jpeg(k)))
        for ident_ in range(ids):
            lo, hi = 1 + ident_ * per, min(1 + (ident_ + 1) * per, n + 1)
            w.write(recio.pack(recio.IRHeader(2, np.array([lo, hi], np.float32), 0, 0), b""))
    _SETS[("faces", n, per)] = path
    return path


def photos():
    """Three sample photos (tests/data/photos) as image records: record k has key k, id 10 + k and
    labels [k, 10 k, 100 k, 1000 k] for k > 0, the single label 0.5 for k = 0."""
    if "photos" in _SETS:
        return _SETS["photos"]
    path = tmp("photos.rec")
    with recio.Writer(path, index=True) as w:
        for k, name in enumerate(("retina-120x90.jpg", "coffee-500x333.jpg", "chelsea-500x375.jpg")):
            with open(os.path.join(HERE, "data", "photos", name), "rb") as f:
                img = f.read()
            label = 0.5 if k == 0 else np.array([k, 10 * k, 100 * k, 1000 * k], np.float32)
            w.write(recio.pack(recio.IRHeader(0, label, 10 + k, 0), img))
    _SETS["photos"] = path
    return path


def raises(exc, fn, *words):
    """fn() raises exc with every word in its message."""
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), "%r not in %r" % (w, str(e))
        return e
    raise AssertionError("no %s raised" % exc.__name__)


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        raise unittest.SkipTest("python3-torch is not installed")


def pixels_id(t):
    """The image number a (C, H, W) or (H, W, C) tensor's pixels stand for."""
    a = np.asarray(t, dtype=np.float32)
    a = a.reshape(3, -1) if a.shape[0] == 3 else a.reshape(-1, 3).T
    return ident(a.mean(axis=1))


def header0(rec):
    """Record 0's header: insightface reads the image keys from its label."""
    with recio.Reader(rec) as r:
        return recio.unpack(r.read())[0]


# ---- RecordMapDataset ----

def test_map_dataset_key_range():
    """insightface's recipe: keys from record 0's label, as range or tuple; item i is key 1 + i,
    its pixels and its label; negative indices; positions past the end."""
    need_torch()
    import torch
    from recio.torch import RecordMapDataset
    rec = faces()
    h = header0(rec)
    assert list(h.label) == [61, 71]
    for keys in (range(1, int(h.label[0])), (1, int(h.label[0]))):
        ds = RecordMapDataset(rec, keys=keys, transform="chw", label_dtype=torch.long)
        assert len(ds) == 60
        assert list(ds.keys) == list(range(1, 61))
        for i in (0, 1, 17, 59, -1, -60):
            img, lab = ds[i]
            k = 1 + (i % 60)
            assert img.shape == (3, SIDE, SIDE) and img.dtype == torch.uint8
            assert pixels_id(img) == k, (i, pixels_id(img))
            assert lab.dtype == torch.long and lab.shape == () and int(lab) == (k - 1) // 6
    raises(IndexError, lambda: ds[60], "index 60 out of range (60 records)")
    raises(IndexError, lambda: ds[-61])
    raises(TypeError, lambda: ds["3"], "an index is an integer")
    # a key list, in its order; a float array (a header label as is) is refused, naming the fix
    ds = RecordMapDataset(rec, keys=[5, 3, 60], transform="chw")
    assert [pixels_id(ds[i][0]) for i in range(3)] == [5, 3, 60]
    raises(TypeError, lambda: RecordMapDataset(rec, keys=h.label), "a float array")
    ds = RecordMapDataset(rec, keys=tuple(h.label), label_width=2)  # the identity records: their labels
    assert len(ds) == 10 and list(ds.keys) == list(range(61, 71))
    raises(recio.DecodeError, lambda: ds[0], "key 61: empty image")
    raises(KeyError, lambda: RecordMapDataset(rec, keys=[3, 1000]), "key 1000 is not in the index")
    raises(ValueError, lambda: RecordMapDataset(rec, keys=(500, 600)), "no record of", "has such a key")
    # every key: record 0 is the header, with nothing to decode
    ds = RecordMapDataset(rec)
    assert len(ds) == 60 + 1 + 10
    raises(recio.DecodeError, lambda: ds[0], "faces60.rec: offset 0: key 0: empty image (0 bytes)", "give keys=")
    img, lab = ds[3]  # decode only: (H, W, C) uint8, float label
    assert img.shape == (SIDE, SIDE, 3) and pixels_id(img) == 3 and lab.dtype == torch.float32 and float(lab) == 0


def test_map_dataset_labels_and_index():
    """label_width pads or cuts the header's labels; the .idx is loaded by the C library (its
    'FILE: line N' words), found beside the .rec as the C library names it, or given."""
    need_torch()
    import torch
    from recio.torch import RecordMapDataset
    ds = RecordMapDataset(photos(), label_width=3, label_pad_value=-7, transform="resize(8,8)")
    assert ds[0][1].tolist() == [0.5, -7.0, -7.0]     # a number label, padded
    assert ds[2][1].tolist() == [2.0, 20.0, 200.0]    # four labels, cut
    ds = RecordMapDataset(photos(), transform="resize(8,8)", label_dtype=torch.int32)
    assert [ds[k][1].item() for k in range(3)] == [0, 1, 2] and ds[1][1].dtype == torch.int32  # the first label
    rec = faces()
    # REC with .rec replaced by .idx (im2rec's name) is found; a given idx= wins
    other = tmp("other.rec")
    shutil.copy(rec, other)
    shutil.copy(rec[:-4] + ".idx", tmp("other.idx"))
    assert len(RecordMapDataset(other, keys=(1, 61))) == 60
    with open(tmp("few.idx"), "w") as f:
        f.write("7\t%d\n" % int(RecordMapDataset(rec).offsets[7]))
    ds = RecordMapDataset(other, idx=tmp("few.idx"))
    assert len(ds) == 1 and pixels_id(ds[0][0]) == 7
    with open(tmp("bad.idx"), "w") as f:
        f.write("1\t0\n2 x\n")
    raises(recio.CorruptError, lambda: RecordMapDataset(rec, idx=tmp("bad.idx")), "bad.idx: line 2")
    raises(ValueError, lambda: RecordMapDataset(tmp("none.rec")), "has no index", "recio index")
    raises(TypeError, lambda: RecordMapDataset(rec, transform=lambda x: x), "a recio transform spec or a recio.Transform")


def test_map_dataset_seeds():
    """Item i of epoch e is the chain run with recio_seed_for(seed, e, i): what recio.Transform gives
    the record's image bytes with that seed (the documented rule); set_epoch changes it."""
    need_torch()
    from recio.torch import RecordMapDataset
    rec = photos()
    spec = "random_resized_crop(32,0.3,1) random_flip(0.5) normalize(imagenet) chw"
    t = recio.Transform(spec)
    ds = RecordMapDataset(rec, keys=(1, 3), transform=spec, seed=11)
    with recio.Reader(rec) as r:
        images = [recio.unpack(p)[1] for p in r]
    got = {}
    for epoch in (0, 1, 2):
        ds.set_epoch(epoch)
        for i in (0, 1):
            for fast in (True, False):
                ds.fast = fast
                want = t(images[1 + i], seed=recio.L.lib.recio_seed_for(11, epoch, i), channels=3, fast=fast)
                got[epoch, i, fast] = ds[i][0].numpy()
                assert got[epoch, i, fast].shape == (3, 32, 32) and np.array_equal(got[epoch, i, fast], want), (epoch, i)
    assert not np.array_equal(got[0, 1, True], got[1, 1, True])  # another crop
    ds = RecordMapDataset(rec, keys=(1, 3), transform=spec, seed=11, epoch=2)
    assert np.array_equal(ds[1][0].numpy(), got[2, 1, True])


def test_map_dataset_dataloader():
    """DataLoader(shuffle=True) with 0 and 2 workers, fork and spawn, 2 epochs: every image once per
    epoch, pixels and labels right, not in file order; DistributedSampler's parts cover it once."""
    need_torch()
    import torch
    import torch.utils.data
    from recio.torch import RecordMapDataset
    from recio import _shared
    from torch.utils.data import default_collate
    rec = faces(200, 10)
    ds = RecordMapDataset(rec, keys=(1, int(header0(rec).label[0])), transform="resize(8,8) chw", label_dtype=torch.long)
    items = ds.__getitems__([5, 0, 7])  # what the DataLoader asks for: [ds[i] for i in ...]
    assert [(pixels_id(x), int(y)) for x, y in items] == [(6, 0), (1, 0), (8, 0)]
    for k, i in enumerate((5, 0, 7)):
        assert torch.equal(items[k][0], ds[i][0]) and torch.equal(items[k][1], ds[i][1])
    data, label = default_collate(items)  # all the rows in order: the batch as made
    assert data.data_ptr() == items[0][0].data_ptr() and label.tolist() == [0, 0, 0]
    data, label = default_collate(items[::-1])  # any other list of them: stacked, as any tensors
    assert [pixels_id(x) for x in data] == [8, 1, 6] and data.data_ptr() != items[0][0].data_ptr()
    ragged = RecordMapDataset(photos(), transform="resize_short(20) chw")  # 120x90 -> 26x20, 500x333 -> 30x20
    shapes = [tuple(x.shape) for x, _ in ragged.__getitems__([0, 1, 2])]  # one by one: a collate_fn of yours
    assert shapes == [tuple(ragged[i][0].shape) for i in (0, 1, 2)] and len(set(shapes)) > 1, shapes
    for nw, ctx in ((0, None), (2, "fork"), (2, "spawn")):
        loader = torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True, num_workers=nw,
                                             multiprocessing_context=ctx if nw else None, timeout=60 if nw else 0)
        for epoch in range(2):
            seen = []
            for data, label in loader:
                ids = [pixels_id(data[k]) for k in range(data.shape[0])]
                assert [(k - 1) // 10 for k in ids] == label.tolist(), "%s %d workers: pixels against labels" % (ctx, nw)
                # made as one batch by __getitems__ and not stacked again: from workers in their slots
                assert type(data) is torch.Tensor and (_shared.pooled(data) if nw else True), (ctx, nw)
                seen += ids
            assert sorted(seen) == list(range(1, 201)), "%s %d workers, epoch %d" % (ctx, nw, epoch)
            assert seen != list(range(1, 201))
    got = []
    for r in range(2):
        sampler = torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=r, shuffle=True, seed=3)
        loader = torch.utils.data.DataLoader(ds, batch_size=25, sampler=sampler, num_workers=2, timeout=60)
        part = [pixels_id(d[k]) for d, _ in loader for k in range(d.shape[0])]
        assert len(part) == 100
        got += part
    assert sorted(got) == list(range(1, 201))


def test_map_dataset_batches():
    """ds[[i, j, ...]] stacks the items (each decoded into its row: the same tensors as ds[i]), on the
    calling thread or threads=2; a DataLoader over a BatchSampler with fork and spawn workers gets every
    image once; a chain whose output size varies cannot make a batch, and says so."""
    need_torch()
    import torch
    import torch.utils.data as tud
    from recio import _shared
    from recio.torch import RecordMapDataset
    rec = faces(200, 10)
    spec = "random_resized_crop(16,0.5,1) random_flip(0.5) float chw"
    for threads in (0, 2):
        ds = RecordMapDataset(rec, keys=(1, 201), transform=spec, seed=3, threads=threads, label_dtype=torch.long)
        x, y = ds[[4, 0, 199, 4]]
        assert x.shape == (4, 3, 16, 16) and x.dtype == torch.float32 and y.tolist() == [0, 0, 19, 0]
        for k, i in enumerate((4, 0, 199, 4)):
            assert torch.equal(x[k], ds[i][0]), (threads, k)
        assert torch.equal(ds[np.array([7, 8])][0], ds[torch.tensor([7, 8])][0])
    raises(IndexError, lambda: ds[[0, 200]], "index 200 out of range")
    raises(IndexError, lambda: ds[[]], "an empty list")
    for ctx in ("fork", "spawn"):
        loader = tud.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=ctx, timeout=60,
                                sampler=tud.BatchSampler(tud.RandomSampler(ds), 32, drop_last=False))
        seen = []
        for data, label in loader:
            ids = [pixels_id(data[k]) for k in range(data.shape[0])]
            assert [(k - 1) // 10 for k in ids] == label.tolist()
            # labels come by value, as a plain tensor (not recio's pickling subclass), images in a worker's
            # shared memory (a slot this process maps), as a plain tensor too
            assert type(label) is torch.Tensor and label.dtype == torch.long, ctx
            assert type(data) is torch.Tensor and _shared.pooled(data), ctx
            seen += ids
        assert sorted(seen) == list(range(1, 201)), ctx
    ds = RecordMapDataset(photos(), transform="resize_short(20) chw")  # 120x90 -> 26x20, 500x333 -> 30x20
    raises(ValueError, lambda: ds[[0, 1]], "a batch needs one shape", "offset ")



def test_worker_batches_reuse_shared_memory():
    """A worker's batches come in shared memory it reuses (recio/_shared.py) and are never overwritten
    while anything of them is alive: batches all kept (more than a worker's slots), only a view of
    each kept, a batch kept while a forked child of the main process drops its copy, and dropped at
    once (then slots are reused: at most 8 a worker for 25 batches), under fork and spawn, and with
    persistent workers over 2 epochs."""
    need_torch()
    import torch
    import torch.utils.data as tud
    from recio import _shared
    from recio.torch import RecordMapDataset
    rec = faces(200, 10)
    ds = RecordMapDataset(rec, keys=(1, 201), transform="resize(8,8) chw", label_dtype=torch.long)

    def check(data, label, what):
        ids = [pixels_id(data[k]) for k in range(data.shape[0])]
        assert [(k - 1) // 10 for k in ids] == label.tolist(), what  # labels travel by value
        return ids

    def loader(ctx, persistent=False):
        return tud.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=ctx, timeout=60,
                              persistent_workers=persistent,
                              sampler=tud.BatchSampler(tud.RandomSampler(ds), 8, drop_last=False))
    for ctx in ("fork", "spawn"):
        kept = list(loader(ctx))  # 25 batches kept: 12-13 a worker, more than its 8 slots
        assert sorted(sum((check(d, y, "kept %s" % ctx) for d, y in kept), [])) == list(range(1, 201)), ctx
        assert sum(_shared.pooled(d) for d, _ in kept) <= 16, ctx
        views = [(d[2:5], y[2:5]) for d, y in loader(ctx)]  # the batches go, a view of each stays
        for v, y in views:
            check(v, y, "views %s" % ctx)
        before = set(_shared.slots())
        seen = []
        for d, y in loader(ctx):  # each batch dropped before the next: its slot comes back
            assert _shared.pooled(d), ctx
            seen += check(d, y, "dropped %s" % ctx)
        assert sorted(seen) == list(range(1, 201)), ctx
        new = {t: n for t, n in _shared.slots().items() if t not in before}
        assert len(new) == 2 and all(1 <= n <= 8 for n in new.values()), (ctx, new)
    it = iter(loader("fork"))  # a forked child of the main process drops its copy of a kept batch
    held = next(it)
    pid = os.fork()
    if pid == 0:
        held = None  # the child's copy of the batch goes: it must not free the worker's slot
        os._exit(0)
    for _ in range(300):  # under ASan a forked child can hang in the allocator (conftest.py): then kill it
        if os.waitpid(pid, os.WNOHANG)[0]:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    for d, y in it:  # each dropped before the next: the worker reuses every slot the main process frees
        check(d, y, "after the child")
    check(held[0], held[1], "held while a child dropped it")
    dl = loader("fork", persistent=True)
    for epoch in range(2):
        assert sorted(sum((check(d, y, "persistent") for d, y in dl), [])) == list(range(1, 201)), epoch


def test_map_dataset_uint8_batches_normalised_after():
    """docs/python.md's worker recipe: a chain ending before normalize gives uint8 batches, and
    x.float().sub_(mean).div_(std) on them is the float32 batch of the chain with normalize(mean, std),
    bit for bit (normalize(imagenet)'s numbers as written in the docs)."""
    need_torch()
    import torch
    from recio.torch import Normalize, RecordMapDataset
    rec = faces(40, 10)
    for norm, mean, std in (("normalize(imagenet)", (123.68, 116.28, 103.53), (58.395, 57.12, 57.375)),
                            ("normalize(127.5,127.5,127.5,127.5,127.5,127.5)", (127.5,) * 3, (127.5,) * 3)):
        f32 = RecordMapDataset(rec, keys=(1, 41), transform="random_resized_crop(24) random_flip(0.5) %s chw" % norm)
        u8 = RecordMapDataset(rec, keys=(1, 41), transform="random_resized_crop(24) random_flip(0.5) chw")
        pos = list(range(40))
        x8, x = u8[pos][0], f32[pos][0]
        assert x8.dtype == torch.uint8 and x.dtype == torch.float32
        mean_t = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
        std_t = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
        assert torch.equal(x8.float().sub_(mean_t).div_(std_t), x), norm
        # recio.torch.Normalize: uint8 HWC batches (the chain without chw) to the same float32 batch
        hwc = RecordMapDataset(rec, keys=(1, 41), transform="random_resized_crop(24) random_flip(0.5)")
        h8 = hwc[pos][0]
        assert h8.shape == (40, 24, 24, 3) and h8.dtype == torch.uint8
        n = Normalize(mean, std)
        assert torch.equal(n(h8), x), norm
        assert torch.equal(n(h8[3].numpy()), x[3]), norm  # one image, a NumPy array


def test_normalize_every_value():
    """recio.torch.Normalize on uint8 pixels holding every value 0..255 in every channel gives what
    torch's float32 ops give, (x - mean) / std bit for bit, for several means and stds; out= is
    written and returned; wrong shapes, dtypes and numbers are refused by name."""
    need_torch()
    import torch
    from recio.torch import Normalize
    g = torch.Generator().manual_seed(5)
    # 5 images of 19 x 27 (odd widths: the SIMD loop's tail too), every value in each channel
    x = torch.randint(0, 256, (5, 19, 27, 3), dtype=torch.uint8, generator=g)
    x[0].view(-1, 3)[:256] = torch.arange(256, dtype=torch.uint8).view(256, 1)
    for mean, std in (((123.68, 116.28, 103.53), (58.395, 57.12, 57.375)), ((127.5,) * 3, (127.5,) * 3),
                      ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)), ((-3.25, 300.1, 1e-3), (0.7, 1e3, 3.0))):
        ref = x.permute(0, 3, 1, 2).float().sub_(torch.tensor(mean).view(1, 3, 1, 1)).div_(
            torch.tensor(std).view(1, 3, 1, 1))
        got = Normalize(mean, std)(x)
        assert got.dtype == torch.float32 and got.shape == (5, 3, 19, 27)
        assert torch.equal(got, ref), (mean, std, (got - ref).abs().max())
    assert torch.equal(Normalize("imagenet")(x), Normalize((123.68, 116.28, 103.53), (58.395, 57.12, 57.375))(x))
    import pickle  # spawn workers, or a Normalize sent to another process: by its numbers
    assert torch.equal(pickle.loads(pickle.dumps(Normalize((1, 2, 3), (4, 5, 6))))(x), Normalize((1, 2, 3), (4, 5, 6))(x))
    out = torch.full((5, 3, 19, 27), float("nan"))
    assert Normalize()(x, out=out) is out and torch.equal(out, Normalize()(x))
    assert torch.equal(Normalize()(x[:, :, ::2]), Normalize()(x[:, :, ::2].contiguous()))  # a strided view
    raises(ValueError, lambda: Normalize()(x.float()), "uint8 (B, H, W, 3)", "torch.float32")
    raises(ValueError, lambda: Normalize()(x.permute(0, 3, 1, 2)), "uint8 (B, H, W, 3)", "(5, 3, 19, 27)")
    raises(ValueError, lambda: Normalize()(x, out=torch.empty(5, 3, 19, 26)), "out:", "(5, 3, 19, 26)")
    raises(ValueError, lambda: Normalize()(x, out=torch.empty(5, 3, 27, 19).transpose(2, 3)), "not contiguous")
    raises(TypeError, lambda: Normalize()([1, 2, 3]), "images:", "list")
    raises(ValueError, lambda: Normalize((1, 2), (1, 2, 3)), "mean:")
    raises(ValueError, lambda: Normalize((1, 2, 3), (1, 0, 3)), "std:", "positive")
    raises(ValueError, lambda: Normalize("cifar"), "'imagenet'")

# ---- ImageRecordIter: keys= and skip_bad= ----

def test_iter_keys_and_skip_bad():
    """insightface files in ImageRecordIter: without either option record 0 stops the iterator;
    keys=(1, N+1) (from record 0's label: (N+1, ...)) reads the N images, each once, in order and shuffled, and len() counts them;
    skip_bad=True passes over the empty records, counted in Batch.skipped and skipped()."""
    rec = faces()
    kw = dict(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=20, preprocess_threads=2)
    raises(recio.DecodeError, lambda: recio.ImageRecordIter(**kw), "faces60.rec: offset 0: first record: decode: empty image")
    keys = (1, int(header0(rec).label[0]))
    for shuffle in (False, True):
        it = recio.ImageRecordIter(keys=keys, shuffle=shuffle, **kw)
        assert len(it) == 3
        ids = [int(x) for b in it for x in b.index[:b.count]]
        assert sorted(ids) == list(range(1, 61)) and (ids == list(range(1, 61))) != shuffle
        it.close()
    it = recio.ImageRecordIter(keys=range(11, 21), **kw)
    b = next(iter(it))
    assert list(b.index) == list(range(11, 21)) * 2 and b.count == 10 and b.pad == 10
    it.close()
    raises(ValueError, lambda: recio.ImageRecordIter(keys=(5, 5), **kw), "keys: begin < end")
    raises(TypeError, lambda: recio.ImageRecordIter(keys=(1, "x"), **kw), "keys: a key is an integer")
    it = recio.ImageRecordIter(skip_bad=True, last_batch="discard", **kw)
    got = [(b.count, b.pad, b.skipped, [int(x) for x in b.index[:b.count]]) for b in it]  # views: read them now
    assert [g[:3] for g in got] == [(19, 1, 1), (20, 0, 0), (20, 0, 0)]  # the identity records end the last one
    assert sum((g[3] for g in got), []) == list(range(1, 60))
    count, first = it.skipped()
    assert count >= 1 and first[0].startswith(rec + ": offset 0: ") and "empty image" in first[0]
    it.close()
    # a split over the same range: the images alone
    s = recio.split(rec, keys=keys)
    assert s.count == 60 and [recio.unpack(p)[0].id for p in s] == list(range(1, 61))


# ---- RecordDataset: parts= ----

def test_record_dataset_parts():
    """parts='contiguous' (shuffle=False): each worker reads a run of identities; parts='interleave':
    every batch draws from the whole file, every image once an epoch; what would undo it is refused."""
    need_torch()
    import torch.utils.data
    from recio.torch import RecordDataset
    rec = faces(200, 10)
    kw = dict(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=20, keys=(1, 201))
    for parts in ("contiguous", "interleave"):
        ds = RecordDataset(parts=parts, **kw)
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, timeout=60)
        for epoch in range(2):
            ds.set_epoch(epoch)
            seen, spans = [], []
            for data, label in loader:
                seen += [pixels_id(data[k]) for k in range(data.shape[0])]
                spans.append(len(set(int(x) for x in label)))
            assert sorted(seen) == list(range(1, 201)), parts
            if parts == "contiguous":
                assert max(spans) <= 3  # 20 consecutive images: 2 or 3 identities
            else:
                assert min(spans) >= 8, spans  # 20 of 200 images drawn from 20 identities
    raises(ValueError, lambda: RecordDataset(parts="interleave", shuffle=False, **kw), "shuffle=False contradicts it")
    raises(ValueError, lambda: RecordDataset(parts="interleave", shuffle_buffer=64, **kw), "shuffle_buffer")
    raises(ValueError, lambda: RecordDataset(parts="random", **kw), "'contiguous' or 'interleave'")


# ---- errors a Python user can act on ----

def test_crop_larger_than_image():
    """A 224 crop of a 120x90 image names the op and both sizes (it said 'first record: invalid
    argument'), in ImageRecordIter and in Transform."""
    raises(recio.ArgError, lambda: recio.ImageRecordIter(path_imgrec=photos(), data_shape=(3, 224, 224), batch_size=4),
           "photos.rec: offset 0: first record: transform: center_crop(224,224) cannot take the 120x90 image (WxH, 3 "
           "channels) that reaches it")
    raises(recio.ArgError, lambda: recio.Transform("resize_short(112) center_crop(224)")(jpeg(1)),
           "center_crop(224) cannot take the 112x112 image")


def test_type_errors_name_the_parameter():
    """A value of the wrong type names its parameter; numbers and yes/no as strings are read as MXNet
    reads them (it passes every value as a string)."""
    base = dict(path_imgrec=photos(), data_shape=(3, 16, 16), batch_size=4)
    for k, v, words in (("batch_size", "x", "batch_size: an integer, not 'x'"), ("batch_size", 2.5, "batch_size"),
                        ("shuffle", "maybe", "shuffle: True or False"), ("seed", None, "seed: an integer"),
                        ("mean_r", "red", "mean_r: a number"), ("data_shape", (3, "a", 4), "data_shape:"),
                        ("path_imgrec", 3, "path_imgrec: a path"), ("path_imgidx", 2.0, "path_imgidx: a path"),
                        ("rand_mirror", [1], "rand_mirror: True or False"), ("preprocess_threads", "two", "preprocess_threads")):
        kw = dict(base)
        kw[k] = v
        raises(TypeError, lambda: recio.translate(**kw), words)
    o = recio.translate(**dict(base, batch_size="8", shuffle="false", rand_mirror="1", mean_r="1.5", seed=np.uint64(2**63 + 1)))
    assert o["batch"] == 8 and o["shuffle"] == 0 and "random_flip" in o["spec"] and o["seed"] == 2**63 + 1
    assert recio.translate(**dict(base, shuffle="False"))["shuffle"] == 0  # bool("False") would be True
    raises(TypeError, lambda: recio.Reader(3), "Reader: path: a path")
    raises(TypeError, lambda: recio.Writer(None), "Writer: path: a path")
    raises(TypeError, lambda: recio.Transform(7), "Transform: spec:")
    raises(TypeError, lambda: recio.Transform("flip")(3.5), "Transform: image:")
    raises(TypeError, lambda: recio.split(None), "Split: uris: a path")


def test_directory_refused_unless_asked():
    """path_imgrec naming a directory is refused (MXNet reads one file; a shared folder may hold a stray
    .rec); directories=True reads every .rec in it."""
    d = tmp("shared")
    os.makedirs(d, exist_ok=True)
    for name in ("a", "b"):
        shutil.copy(faces(), os.path.join(d, name + ".rec"))
    kw = dict(data_shape=(3, 16, 16), batch_size=32, skip_bad=True)
    raises(ValueError, lambda: recio.ImageRecordIter(path_imgrec=d, **kw), "path_imgrec: %s is a directory" % d,
           "directories=True")
    it = recio.ImageRecordIter(path_imgrec=d, directories=True, **kw)
    ids = [int(x) for b in it for x in b.index[:b.count]]
    assert ids == list(range(1, 61)) * 2, ids  # a.rec then b.rec, their header and identity records skipped
    it.close()


def test_transform_takes_a_path():
    """Transform(spec)(path): a str or os.PathLike path is read (it said 'string argument without an
    encoding')."""
    import pathlib
    p = tmp("one.jpg")
    with open(p, "wb") as f:
        f.write(jpeg(9))
    t = recio.Transform("chw")
    for arg in (p, pathlib.Path(p)):
        x = t(arg)
        assert x.shape == (3, SIDE, SIDE) and pixels_id(x) == 9
    raises(FileNotFoundError, lambda: t(tmp("missing.jpg")))


def public_callables():
    """(name, object) of every public function, class and method of recio and recio.torch (and
    recio.mx when it is there): what the user calls."""
    mods = [recio]
    try:
        import recio.torch as rt
        mods.append(rt)
    except ImportError:
        pass
    try:
        import recio.mx as mx
        mods += [mx] + [getattr(mx, m) for m in ("recordio", "image", "nd") if hasattr(mx, m)]
    except ImportError:
        pass
    out = []
    for m in mods:
        names = getattr(m, "__all__", None) or [n for n in dir(m) if not n.startswith("_")]
        for n in names:
            obj = getattr(m, n)
            if getattr(obj, "__module__", "") and not str(getattr(obj, "__module__", "")).startswith("recio"):
                continue  # imported from elsewhere (numpy, torch, typing)
            if isinstance(obj, type):
                out.append(("%s.%s" % (m.__name__, n), obj))
                for a, v in vars(obj).items():
                    if (not a.startswith("_") or a in ("__call__", "__iter__", "__next__", "__len__", "__getitem__",
                                                      "__enter__", "__exit__")) and callable(v):
                        out.append(("%s.%s.%s" % (m.__name__, n, a), v))
                    elif isinstance(v, property) and not a.startswith("_"):
                        out.append(("%s.%s.%s" % (m.__name__, n, a), v))
            elif callable(obj):
                out.append(("%s.%s" % (m.__name__, n), obj))
    return out


def test_every_public_callable_has_a_docstring():
    """Every public function, class, method and property of the package says what it does."""
    need_torch()
    missing = [n for n, obj in public_callables() if not (obj.__doc__ or "").strip()]
    assert not missing, "no docstring: %s" % ", ".join(missing)


def test_help_lists_mxnet_parameters():
    """help(recio.ImageRecordIter) shows MXNet's parameter names (the constructor takes **kwargs) and
    recio's own."""
    text = pydoc.render_doc(recio.ImageRecordIter, renderer=pydoc.plaintext)
    for name in list(recio.MXNET_DEFAULTS) + ["spec", "skip_bad", "keys", "directories", "last_batch"]:
        assert " %s=" % name in text, name


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
    print("test_python_map: %d passed, %d failed%s" % (passed, failed, tail))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
