"""recio.mx against MXNet 1.9's recordio.py and mx.image.imdecode behaviour (pytest; tests/test_python.sh).

Expected bytes come from MXNet's record layout written out here with struct (flag, label, id, id2 as
"IfQQ", labels after it when the label is not a number), offsets from `recio dump`, pixels from Pillow
(ImageOps.exif_transpose for orientations): never from recio.mx itself.
"""
import io
import multiprocessing
import numbers
import os
import pickle
import random
import struct
import subprocess
import sys

import numpy as np
import pytest

import recio
import recio.mx as mx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHOTOS = os.path.join(HERE, "data", "photos")
COMPAT = os.path.join(HERE, "data", "compat")
RECIO = os.environ.get("RECIO", os.path.join(ROOT, "build", "recio")).split()

Image = pytest.importorskip("PIL.Image")
ImageOps = pytest.importorskip("PIL.ImageOps")


def mxnet_pack(header, s):
    """The payload MXNet's pack() makes: a number label in the header, anything else as float32s after it."""
    flag, label, id_, id2 = header
    if isinstance(label, numbers.Number):
        return struct.pack("<IfQQ", 0, label, id_, id2) + s
    a = np.asarray(label, dtype=np.float32)
    return struct.pack("<IfQQ", a.size, 0, id_, id2) + a.astype("<f4").tobytes() + s


def dump_offsets(path):
    out = subprocess.run(RECIO + ["dump", str(path)], stdout=subprocess.PIPE, check=True).stdout.decode()
    return [int(line.split("\t")[1]) for line in out.splitlines()]


def jpeg(w, h, seed, exif=None, quality=92):
    """A JPEG whose pixels differ across both axes (so every orientation is told apart)."""
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x * y + seed * 37) % 256], -1).astype(np.uint8)
    out = io.BytesIO()
    kw = {"exif": exif} if exif is not None else {}
    Image.fromarray(rgb).save(out, "JPEG", quality=quality, **kw)
    return out.getvalue()


def pil_rgb(data, upright=True):
    im = Image.open(io.BytesIO(data))
    return np.asarray((ImageOps.exif_transpose(im) if upright else im).convert("RGB"))


def close_to(a, b, tol=3.0):
    return a.shape == b.shape and np.abs(a.astype(np.int32) - b.astype(np.int32)).mean() <= tol


def max_diff(a, b):
    assert a.shape == b.shape, (a.shape, b.shape)
    return int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max()) if a.size else 0


def cv2_or_skip():
    return pytest.importorskip("cv2")  # python3-opencv: make's python-deps installs it


PHOTO_NAMES = ["chelsea-500x375.jpg", "coffee-progressive-480x360.jpg", "chelsea-cmyk-300x400.jpg", "camera-gray-400x300.jpg",
               "astronaut-exif-rot90-400x300.jpg", "hubble-1600x1200.jpg", "chelsea-333x500.png", "rocket-alpha-256x256.png"]


# ---- pack / unpack ----

def test_unpack_returns_the_payload_whole():
    # a payload whose end looks like a segmentation mask tail (PNG signature, its length, "RMSK")
    body = b"A" * 20 + b"\x89PNG\r\n\x1a\n" + b"abcd" + struct.pack("<I", 12) + b"RMSK"
    payload = struct.pack("<IfQQ", 0, 1.5, 3, 0) + body
    assert len(body) == 40
    for unpack in (recio.unpack, mx.recordio.unpack):
        h, s = unpack(payload)
        assert s == body, "%s gave %d bytes of 40" % (unpack.__module__, len(s))
        assert (h.flag, h.label, h.id, h.id2) == (0, 1.5, 3, 0)
    h, s = mx.recordio.unpack(struct.pack("<IfQQ", 2, 9, 1, 2) + struct.pack("<ff", 1, 2) + body)
    assert h.flag == 2 and h.label.dtype == np.float32 and list(h.label) == [1, 2] and s == body


@pytest.mark.parametrize("header", [
    (0, 3, 7, 0), (5, 2.5, 1, 2), (0, np.float32(-1.25), 0, 0), (0, True, 0, 0), (0, 7.0, 2 ** 64 - 1, 2 ** 63),
    (0, [1.0], 7, 0), (0, np.array([4.5], np.float32), 1, 0), (0, np.array(2.0), 1, 0), (9, [1, 2], 7, 9),
    (0, [], 3, 0), (0, np.arange(6, dtype=np.float64).reshape(2, 3), 4, 0), (0, list(range(300)), 5, 0)])
def test_pack_is_mxnets(header):
    s = b"payload\x00\x01"
    got = mx.recordio.pack(header, s)
    assert got == mxnet_pack(header, s)
    assert got == mx.recordio.pack(mx.recordio.IRHeader(*header), s)  # a tuple and an IRHeader alike
    h, back = mx.recordio.unpack(got)
    assert back == s
    if isinstance(header[1], numbers.Number):
        assert h.flag == 0 and isinstance(h.label, float) and h.label == np.float32(header[1])
    else:
        want = np.asarray(header[1], np.float32).ravel()
        assert h.flag == want.size and (h.flag == 0 or np.array_equal(h.label, want))


def test_pack_refuses_ids_out_of_range():
    for bad in ((0, 1, -1, 0), (0, 1, 0, 2 ** 64)):
        with pytest.raises(struct.error):
            mx.recordio.pack(bad, b"")


def test_pack_unpack_mxnet_written_records():
    """images.rec (dmlc-core's writer): unpack as `recio dump --header` reads it, and pack gives the
    same bytes back (a record with labels after the header has 0 in the header's label in MXNet's)."""
    out = subprocess.run(RECIO + ["dump", "--header", os.path.join(COMPAT, "images.rec")], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    rows = [line.split("\t") for line in out.splitlines()]
    r = mx.recordio.MXRecordIO(os.path.join(COMPAT, "images.rec"), "r")
    for row in rows:
        payload = r.read()
        h, s = mx.recordio.unpack(payload)
        assert h.flag == int(row[3]) and h.id == int(row[5]) and h.id2 == int(row[6]) and len(s) == int(row[7])
        labels = [float(x) for x in row[4].split(",")]
        assert np.allclose(np.float32([h.label] if h.flag == 0 else h.label), np.float32(labels), rtol=1e-6)
        again = mx.recordio.pack(h, s)
        assert again == (payload if h.flag == 0 else payload[:4] + b"\0\0\0\0" + payload[8:])
    assert r.read() is None


# ---- MXRecordIO ----

def test_recordio_write_read_reset(tmp_path):
    p = str(tmp_path / "a.rec")
    w = mx.recordio.MXRecordIO(p, "w")
    assert w.writable and w.is_open and w.pid == os.getpid()
    payloads = [b"", b"x", b"\x0a\x23\xd7\xce" * 3, bytes(range(256)) * 40]
    for s in payloads:
        w.write(s)
    with pytest.raises(AssertionError):
        w.read()
    w.close()
    w.close()  # twice: nothing
    r = mx.recordio.MXRecordIO(p, "r")
    with pytest.raises(AssertionError):
        r.write(b"x")
    assert [r.read() for _ in payloads] == payloads and r.read() is None
    r.reset()
    assert r.read() == payloads[0]
    w = mx.recordio.MXRecordIO(p, "w")
    w.write(b"one")
    w.reset()  # a writer starts the file over
    w.write(b"two")
    del w
    r = mx.recordio.MXRecordIO(p, "r")
    assert r.read() == b"two" and r.read() is None
    with pytest.raises(ValueError, match="Invalid flag"):
        mx.recordio.MXRecordIO(p, "a")
    with pytest.raises(recio.FileError, match="no-such-dir"):
        mx.recordio.MXRecordIO(str(tmp_path / "no-such-dir" / "x.rec"), "w")


@pytest.mark.parametrize("count,size", [(255, 1), (300, 10000)])
def test_del_finishes_a_writer(tmp_path, count, size):
    p = str(tmp_path / "d.rec")
    w = mx.recordio.MXRecordIO(p, "w")
    for i in range(count):
        w.write(bytes([i % 256]) * size)
    del w
    assert len(dump_offsets(p)) == count
    r = mx.recordio.MXRecordIO(p, "r")
    assert all(r.read() == bytes([i % 256]) * size for i in range(count)) and r.read() is None


def test_a_script_that_never_closes_keeps_its_records(tmp_path):
    p, ix = str(tmp_path / "s.rec"), str(tmp_path / "s.idx")
    script = ("import recio.mx as mx\n"
              "w = mx.recordio.MXIndexedRecordIO(%r, %r, 'w')\n"
              "for i in range(300):\n    w.write_idx(i, bytes([i %% 256]) * 10000)\n") % (ix, p)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    offs = dump_offsets(p)
    assert len(offs) == 300
    assert open(ix).read() == "".join("%d\t%d\n" % (i, o) for i, o in enumerate(offs))


# ---- MXIndexedRecordIO ----

def test_indexed_write_read_keys(tmp_path):
    p, ix = str(tmp_path / "i.rec"), str(tmp_path / "i.idx")
    w = mx.recordio.MXIndexedRecordIO(ix, p, "w")
    assert os.path.exists(ix) and open(ix).read() == ""  # MXNet opens the .idx at once
    keys = [5, 3, 2 ** 64 - 1, 0, 17]
    tells = []
    for k in keys:
        tells.append(w.tell())
        w.write_idx(k, b"rec%d" % k)
    w.write(b"outside the index")
    tells.append(w.tell())
    w.write_idx("42", b"text key")  # key_type=int: int("42")
    assert w.keys == keys + [42] and w.idx[42] == tells[-1]
    w.close()
    offs = dump_offsets(p)
    assert tells == offs[:5] + [offs[6]]
    want = [(k, offs[i]) for i, k in enumerate(keys)] + [(42, offs[6])]
    assert open(ix).read() == "".join("%d\t%d\n" % kv for kv in want)  # the unindexed record has no line
    r = mx.recordio.MXIndexedRecordIO(ix, p, "r")
    assert r.keys == keys + [42] and r.idx == dict(want)
    for k in random.sample(r.keys, len(r.keys)):
        assert r.read_idx(k) == (b"text key" if k == 42 else b"rec%d" % k)
    r.seek(3)
    assert r.read() == b"rec3" and r.read() == b"rec" + str(2 ** 64 - 1).encode()
    with pytest.raises(KeyError):
        r.read_idx(4)
    with pytest.raises(AssertionError):
        r.tell()
    s = mx.recordio.MXIndexedRecordIO(ix, p, "r", key_type=str)  # MXNet converts the key's text
    assert s.keys == [str(k) for k in keys] + ["42"] and s.read_idx("17") == b"rec17"


def test_indexed_refuses_keys_recio_cannot_store(tmp_path):
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / "k.idx"), str(tmp_path / "k.rec"), "w", key_type=str)
    for bad in ("a", "-1", str(2 ** 64)):
        with pytest.raises(ValueError, match="whole numbers"):
            w.write_idx(bad, b"x")
    w.write_idx("7", b"y")
    w.close()
    assert len(dump_offsets(tmp_path / "k.rec")) == 1, "a refused key writes no record"
    with pytest.raises(recio.FileError):
        mx.recordio.MXIndexedRecordIO(str(tmp_path / "missing.idx"), str(tmp_path / "k.rec"), "r")


# ---- processes and pickling ----

def _big_file(tmp_path, n=300, size=10000):
    """More than the reader's 1 MiB buffer: a child moving a shared file offset would show."""
    p, ix = str(tmp_path / "big.rec"), str(tmp_path / "big.idx")
    w = mx.recordio.MXIndexedRecordIO(ix, p, "w")
    for i in range(n):
        w.write_idx(i, bytes([i % 251]) * size + struct.pack("<I", i))
    w.close()
    return ix, p, [bytes([i % 251]) * size + struct.pack("<I", i) for i in range(n)]


def _child_reads(rec, order, want, conn):
    try:
        ok = all(rec.read_idx(k) == want[k] for k in order)
        try:
            rec.read()
            sequential = "reopened"  # read_idx opened it again here: this process owns it now
        except RuntimeError:
            sequential = "refused"
        conn.send((ok, sequential, rec.pid == os.getpid()))
    except Exception as e:  # pragma: no cover - reported to the parent
        conn.send((False, repr(e), False))


def _child_read_only(rec, conn):
    try:
        rec.read()
        conn.send("read")
    except RuntimeError as e:
        conn.send(str(e))


def test_fork_reopens_and_leaves_the_parent_offset(tmp_path):
    ix, p, want = _big_file(tmp_path)
    r = mx.recordio.MXIndexedRecordIO(ix, p, "r")
    assert r.read_idx(0) == want[0]
    ctx = multiprocessing.get_context("fork")
    a, b = ctx.Pipe()
    child = ctx.Process(target=_child_reads, args=(r, random.Random(1).sample(range(300), 300), want, b))
    child.start()
    ok, sequential, owns = a.recv()
    child.join(60)
    assert ok and owns and sequential == "reopened"
    assert [r.read() for _ in range(299)] == want[1:], "the parent reads on where it was"
    a, b = ctx.Pipe()
    child = ctx.Process(target=_child_read_only, args=(r, b))
    child.start()
    msg = a.recv()
    child.join(60)
    assert "Forbidden operation in multiple processes" in msg


def _child_closes(w, conn):
    w.close()
    conn.send("closed")


def test_a_forked_writer_copy_writes_nothing(tmp_path):
    p = str(tmp_path / "f.rec")
    w = mx.recordio.MXRecordIO(p, "w")
    for i in range(10):
        w.write(b"parent %d" % i)  # still in the writer's buffer at the fork
    ctx = multiprocessing.get_context("fork")
    a, b = ctx.Pipe()
    child = ctx.Process(target=_child_closes, args=(w, b))
    child.start()
    assert a.recv() == "closed"
    child.join(60)
    for i in range(10, 20):
        w.write(b"parent %d" % i)
    w.close()
    r = mx.recordio.MXRecordIO(p, "r")
    got = []
    while True:
        s = r.read()
        if s is None:
            break
        got.append(s)
    assert got == [b"parent %d" % i for i in range(20)]


def test_pickle_by_uri_and_flag(tmp_path):
    ix, p, want = _big_file(tmp_path, n=20, size=100)
    r = mx.recordio.MXIndexedRecordIO(ix, p, "r")
    assert r.read_idx(5) == want[5]
    state = pickle.dumps(r)
    assert len(state) < 1000, "the keys are read again, not pickled"
    c = pickle.loads(state)
    assert c.is_open and c.keys == list(range(20)) and c.read() == want[0] and c.read_idx(19) == want[19]
    assert r.read() == want[6], "the original stays open where it was"
    r.close()
    c2 = pickle.loads(pickle.dumps(r))
    assert not c2.is_open and c2.read_idx(3) == want[3]  # a closed one stays closed until a seek opens it
    s = pickle.loads(pickle.dumps(mx.recordio.MXRecordIO(p, "r")))
    assert s.read() == want[0]
    w = mx.recordio.MXIndexedRecordIO(str(tmp_path / "w.idx"), str(tmp_path / "w.rec"), "w")
    w.write_idx(0, b"kept")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(w)
    w.close()
    assert mx.recordio.MXIndexedRecordIO(str(tmp_path / "w.idx"), str(tmp_path / "w.rec"), "r").read_idx(0) == b"kept"


class FaceDataset:
    """insightface's MXFaceDataset, reduced: header record 0 gives the image keys."""

    def __init__(self, idx, rec):
        self.imgrec = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
        header, _ = mx.recordio.unpack(self.imgrec.read_idx(0))
        self.keys = list(range(1, int(header.label[0])))

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, i):
        header, img = mx.recordio.unpack(self.imgrec.read_idx(self.keys[i]))
        sample = mx.image.imdecode(img).asnumpy()
        return int(header.id), float(sample.astype(np.float64).sum())


def _face_set(tmp_path, n=40):
    idx, rec = str(tmp_path / "faces.idx"), str(tmp_path / "faces.rec")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(0, mx.recordio.pack((0, [n + 1, n + 1], 0, 0), b""))
    sums = {}
    for i in range(1, n + 1):
        data = jpeg(24, 20, i)
        sums[i] = float(pil_rgb(data).astype(np.float64).sum())
        w.write_idx(i, mx.recordio.pack((0, float(i % 3), i, 0), data))
    del w
    return idx, rec, sums


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_dataloader_workers(tmp_path, context):
    torch = pytest.importorskip("torch")
    idx, rec, sums = _face_set(tmp_path)
    ds = FaceDataset(idx, rec)
    for workers in (0, 2):
        kw = dict(num_workers=workers, multiprocessing_context=context) if workers else {}
        loader = torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, **kw)
        for epoch in range(2):
            seen = {}
            for ids, total in loader:
                for i, t in zip(ids.tolist(), total.tolist()):
                    assert i not in seen
                    seen[i] = t
            assert sorted(seen) == sorted(sums), "every record once per epoch (%s, %d workers)" % (context, workers)
            assert all(abs(seen[i] - sums[i]) <= 3 * 24 * 20 * 3 for i in sums), "the pixels of each record"


# ---- images ----

def test_imdecode_rgb_bgr_grey_and_ndarray():
    for name in ("chelsea-500x375.jpg", "coffee-progressive-480x360.jpg", "chelsea-cmyk-300x400.jpg",
                 "camera-gray-400x300.jpg", "chelsea-333x500.png", "rocket-alpha-256x256.png"):
        data = open(os.path.join(PHOTOS, name), "rb").read()
        ref = pil_rgb(data)
        x = mx.image.imdecode(data)
        assert isinstance(x, mx.nd.NDArray) and x.shape == ref.shape and x.dtype == np.uint8
        a = x.asnumpy()
        assert type(a) is np.ndarray and a.flags.c_contiguous and close_to(a, ref, 1.0), name
        assert np.array_equal(np.asarray(x), a) and np.array_equal(np.array(x, dtype=np.float32), a.astype(np.float32))
        assert np.array_equal(mx.image.imdecode(bytearray(data), to_rgb=False).asnumpy(), a[..., ::-1])
        assert np.array_equal(mx.image.imdecode(np.frombuffer(data, np.uint8)).asnumpy(), a)
        g = mx.image.imdecode(data, flag=0)
        grey = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
        assert g.shape == grey.shape + (1,) and close_to(g.asnumpy()[..., 0], grey, 2.0), name
    a[:] = 0
    assert x.asnumpy().any(), "asnumpy gives a copy, as MXNet's"
    assert x[10:20].shape == (10,) + x.shape[1:] and len(x) == x.shape[0] and x.astype("float32").dtype == np.float32
    out = mx.nd.NDArray(np.zeros(x.shape, np.uint8))
    assert mx.image.imdecode(data, out=out) is out and np.array_equal(out.asnumpy(), x.asnumpy())


def test_imdecode_errors():
    with pytest.raises(ValueError, match="bytes"):
        mx.image.imdecode("not bytes")
    with pytest.raises(recio.DecodeError, match="decode"):
        mx.image.imdecode(b"\xff\xd8\xff garbage")
    with pytest.raises(recio.DecodeError):
        mx.image.imdecode(b"")


def _with_orientation(data, k, big_endian):
    """data (a JPEG without metadata) with an Exif APP1 segment holding Orientation = k."""
    if big_endian:
        tiff = b"MM\0*" + struct.pack(">IH", 8, 1) + struct.pack(">HHIHH", 0x0112, 3, 1, k, 0) + b"\0\0\0\0"
    else:
        tiff = b"II*\0" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x0112, 3, 1, k, 0) + b"\0\0\0\0"
    app1 = b"Exif\0\0" + tiff
    return data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:]


@pytest.mark.parametrize("k", range(1, 9))
def test_exif_orientation_as_opencv(k):
    plain = jpeg(40, 24, 3)
    for big in (False, True):
        data = _with_orientation(plain, k, big)
        want = pil_rgb(data)  # Pillow's exif_transpose: the same eight orientations
        assert want.shape == ((40, 24, 3) if k >= 5 else (24, 40, 3))
        got = mx.image.imdecode(data).asnumpy()
        assert close_to(got, want), "orientation %d" % k
        assert close_to(mx.image.imdecode(data, flag=-1).asnumpy(), pil_rgb(data, upright=False))
        _, bgr = mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), data), 1)
        assert close_to(bgr[..., ::-1], want)
        for keep in (-1, 1 | 128):
            _, stored = mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), data), keep)
            assert close_to(stored[..., ::-1], pil_rgb(data, upright=False))


def test_exif_of_a_photo():
    data = open(os.path.join(PHOTOS, "astronaut-exif-rot90-400x300.jpg"), "rb").read()
    assert mx.image.imdecode(data).shape == pil_rgb(data).shape == (400, 300, 3)


def test_unpack_img_as_cv2():
    grey = open(os.path.join(PHOTOS, "camera-gray-400x300.jpg"), "rb").read()
    alpha = open(os.path.join(PHOTOS, "rocket-alpha-256x256.png"), "rb").read()
    colour = open(os.path.join(PHOTOS, "chelsea-500x375.jpg"), "rb").read()
    s = lambda d: mx.recordio.pack(mx.recordio.IRHeader(0, 2.0, 9, 0), d)  # noqa: E731
    h, g = mx.recordio.unpack_img(s(grey))  # default -1: as stored
    assert h.id == 9 and g.shape == (300, 400) and close_to(g, np.asarray(Image.open(io.BytesIO(grey))))
    _, a = mx.recordio.unpack_img(s(alpha))
    assert a.shape == (256, 256, 4) and np.array_equal(a, np.asarray(Image.open(io.BytesIO(alpha)).convert("RGBA"))[..., [2, 1, 0, 3]])
    _, c = mx.recordio.unpack_img(s(colour), 1)
    assert c.shape == (375, 500, 3) and close_to(c[..., ::-1], pil_rgb(colour), 1.0)
    _, c0 = mx.recordio.unpack_img(s(colour), 0)
    assert c0.shape == (375, 500)
    assert mx.recordio.unpack_img(s(b"not an image"))[1] is None  # cv2.imdecode gives None
    with pytest.raises(ValueError, match="empty"):
        mx.recordio.unpack_img(s(b""))
    with pytest.raises(ValueError, match="iscolor"):
        mx.recordio.unpack_img(s(colour), 2)


@pytest.mark.parametrize("encoder", ["cv2", "pil"])
@pytest.mark.parametrize("shape", [(30, 50, 3), (30, 50), (30, 50, 4), (30, 50, 1)])
def test_pack_img_png_round_trip(shape, encoder):
    if encoder == "cv2":
        cv2_or_skip()
    img = ((np.arange(np.prod(shape)) * 7919) % 256).astype(np.uint8).reshape(shape)
    s = mx.recordio.pack((0, [1, 2], 4, 0), mx.recordio.encode(img, 3, ".png", encoder=encoder))
    h, data = mx.recordio.unpack(s)
    assert list(h.label) == [1, 2] and data.startswith(b"\x89PNG")
    pic = np.asarray(Image.open(io.BytesIO(data)))
    order = {3: [2, 1, 0], 4: [2, 1, 0, 3]}
    want = img[..., order[shape[2]]] if len(shape) == 3 and shape[2] > 1 else img.reshape(shape[:2])
    assert np.array_equal(pic, want), "PNG pixels in the file's order (RGB) from OpenCV's BGR"
    _, back = mx.recordio.unpack_img(s)
    assert np.array_equal(back, img.reshape(shape[:2]) if len(shape) == 3 and shape[2] == 1 else img)


def test_pack_img_jpeg():
    bgr = pil_rgb(jpeg(64, 48, 5))[..., ::-1].copy()
    s = mx.recordio.pack_img(mx.recordio.IRHeader(0, 3.0, 1, 0), bgr)  # default: '.jpg', quality 95
    _, data = mx.recordio.unpack(s)
    assert data[:2] == b"\xff\xd8"
    pic = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    assert close_to(pic, bgr[..., ::-1], 8.0) and not close_to(pic, bgr, 30.0), "RGB in the file, from BGR"
    small = mx.recordio.pack_img((0, 3.0, 1, 0), bgr, quality=10)
    assert len(small) < len(s)
    for encoder in ("cv2", "pil"):
        with pytest.raises(ValueError, match="nope"):
            mx.recordio.pack((0, 1, 0, 0), mx.recordio.encode(bgr, 95, ".nope", encoder=encoder))


def test_pack_img_without_an_encoder(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="Pillow"):
        mx.recordio.pack_img((0, 1, 0, 0), np.zeros((4, 4, 3), np.uint8))


# ---- against OpenCV itself (what MXNet's unpack_img, pack_img and imdecode run) ----

@pytest.mark.parametrize("name", PHOTO_NAMES)
def test_decodes_as_opencv(name):
    """unpack_img(iscolor) == cv2.imdecode(buf, iscolor); imdecode == cv2's BGR made RGB. Pixels equal but
    for CMYK JPEGs (stb's conversion: 2 levels) and grey from colour PNGs (OpenCV asks libpng for a
    gamma-aware luma; recio's is stb's plain weights)."""
    cv2 = cv2_or_skip()
    data = open(os.path.join(PHOTOS, name), "rb").read()
    buf = np.frombuffer(data, np.uint8)
    slack = 2 if "cmyk" in name else 0
    for flags in (-1, 0, 1, 1 | 128, 0 | 128):
        want = cv2.imdecode(buf, flags)
        _, got = mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), data), flags)
        if flags & ~128 == 0 and name.endswith(".png"):
            assert got.shape == want.shape and close_to(got, want, 4.0), (name, flags)
        else:
            assert max_diff(got, want) <= slack, (name, flags)
    rgb = cv2.cvtColor(cv2.imdecode(buf, 1), cv2.COLOR_BGR2RGB)
    assert max_diff(mx.image.imdecode(data).asnumpy(), rgb) <= slack
    assert max_diff(mx.image.imdecode(data, to_rgb=False).asnumpy(), rgb[..., ::-1]) <= slack
    if not name.endswith(".png"):
        assert max_diff(mx.image.imdecode(data, flag=0).asnumpy()[..., 0], cv2.imdecode(buf, 0)) <= slack + 1


@pytest.mark.parametrize("k", range(1, 9))
def test_exif_orientation_equals_opencv(k):
    cv2 = cv2_or_skip()
    plain = jpeg(40, 24, 3)
    for big in (False, True):
        data = _with_orientation(plain, k, big)
        buf = np.frombuffer(data, np.uint8)
        for flags in (-1, 0, 1, 129):
            _, got = mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), data), flags)
            assert max_diff(got, cv2.imdecode(buf, flags)) == 0, (k, big, flags)


@pytest.mark.parametrize("fmt,quality", [(".jpg", 95), (".jpg", 20), (".png", 3), (".png", 95)])
def test_pack_img_encoders(fmt, quality):
    """cv2 (MXNet's encoder, used when installed) gives cv2.imencode's bytes; Pillow's file decodes to the
    same pixels (PNG) or close (JPEG)."""
    cv2 = cv2_or_skip()
    bgr = pil_rgb(jpeg(64, 48, 5))[..., ::-1].copy()
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if fmt == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, quality]
    want = cv2.imencode(fmt, bgr, params)[1].tobytes()
    assert mx.recordio.unpack(mx.recordio.pack_img((0, 1, 0, 0), bgr, quality, fmt))[1] == want
    pil = mx.recordio.encode(bgr, quality, fmt, encoder="pil")
    a, b = cv2.imdecode(np.frombuffer(pil, np.uint8), -1), cv2.imdecode(np.frombuffer(want, np.uint8), -1)
    assert (max_diff(a, b) == 0) if fmt == ".png" else close_to(a, b, 4.0)


def test_damaged_exif_and_bytes_never_crash():
    """Every cut and many byte flips of an EXIF JPEG's first 200 bytes: exif_orientation gives 1..8 and
    never raises; decoding gives an image, None (unpack_img) or recio.DecodeError/CorruptError (imdecode)."""
    data = _with_orientation(jpeg(16, 8, 1), 6, False)
    rng = random.Random(5)
    cases = [data[:n] for n in range(0, 200)]
    for _ in range(400):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(2, 60)] = rng.randrange(256)
        cases.append(bytes(b))
    for b in cases:
        assert 1 <= mx.image.exif_orientation(b) <= 8
        if b:
            _, img = mx.recordio.unpack_img(mx.recordio.pack((0, 1, 0, 0), b), 1)
            assert img is None or img.ndim == 3
            try:
                mx.image.imdecode(b)
            except (recio.DecodeError, recio.CorruptError):
                pass
