"""recio's Python surfaces over s3:// and http:// (docs/remote.md): recio.Reader and Writer, recio.mx's
MXRecordIO and MXIndexedRecordIO, recio.split, ImageRecordIter and recio.torch's datasets, against
nginx and s3rver on 127.0.0.1. Run by tests/test_remote.sh under tests/remote/servers.py, which
starts the servers and seeds tests/data/compat into nginx's root (compat/) and into s3rver
(s3://data/compat/).

Every expected value is what the same bytes give from the local file (the local reader is checked
against dmlc-core's golden files in tests/test_split_compat.c), and, for what is written to S3,
the records the test itself wrote. The Python layer used to ask os.path what was at a path, so a
remote .idx "did not exist" and a remote .rec had no size; and the C writer built its S3 URLs from
the string Python had passed, freed by then (HTTP 409 from s3rver, or the object under another
name).
"""
import gc
import multiprocessing
import os
import random

import numpy as np
import pytest

import recio
import recio.mx as mx

HERE = os.path.dirname(os.path.abspath(__file__))
COMPAT = os.path.join(HERE, "data", "compat")
PHOTOS = os.path.join(HERE, "data", "photos")
HTTP, S3, WWW = (os.environ.get(k) for k in ("RECIO_TEST_HTTP", "RECIO_TEST_S3", "RECIO_TEST_WWW"))
pytestmark = pytest.mark.skipif(not (HTTP and S3 and WWW),
                                reason="the remote servers are not running: tests/test_remote.sh starts them")
torch = pytest.importorskip("torch")
import recio.torch  # noqa: E402  (after torch: recio.torch needs it)

AWS = {"AWS_ACCESS_KEY_ID": "RECIOTESTKEY", "AWS_SECRET_ACCESS_KEY": "recio-test-secret/+=",
       "AWS_REGION": "us-east-1", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/recio-test"}


@pytest.fixture(scope="module", autouse=True)
def servers():
    """S3 settings for s3rver; the photos (tests/data/photos, label i % 3) packed with their .idx into
    nginx's root (compat/img.rec, img.idx) and into S3 (s3://scratch/img.rec, .idx) by
    recio.Writer(index=True)."""
    old = {k: os.environ.get(k) for k in list(AWS) + ["AWS_ENDPOINT_URL"]}
    os.environ.update(AWS, AWS_ENDPOINT_URL=S3)
    photos = sorted(f for f in os.listdir(PHOTOS) if f.endswith((".jpg", ".png")))
    recs = []
    for i, f in enumerate(photos):
        with open(os.path.join(PHOTOS, f), "rb") as fh:
            recs.append(recio.pack(recio.IRHeader(0, float(i % 3), i, 0), fh.read()))
    for path in (os.path.join(WWW, "compat", "img.rec"), "s3://scratch/img.rec"):
        with recio.Writer(path, index=True) as w:
            for r in recs:
                w.write(r)
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def records(path):
    return [bytes(r) for r in recio.Reader(path)]


def local(name):
    return os.path.join(WWW, "compat", name)  # nginx serves these very files


def test_reader_gives_the_local_records():
    for name in ("a.rec", "b.rec", "c.rec", "images.rec", "img.rec"):
        want = records(local(name))
        assert len(want) > 0
        assert records(HTTP + "/compat/" + name) == want
        assert records(("s3://scratch/" if name == "img.rec" else "s3://data/compat/") + name) == want


def test_mx_indexed_reads_by_key():
    want = mx.recordio.MXIndexedRecordIO(os.path.join(COMPAT, "a.rec.idx"), os.path.join(COMPAT, "a.rec"), "r")
    keys = list(want.keys)
    random.Random(5).shuffle(keys)
    for base in (HTTP + "/compat/", "s3://data/compat/"):
        r = mx.recordio.MXIndexedRecordIO(base + "a.rec.idx", base + "a.rec", "r")
        assert r.keys == want.keys
        assert [r.read_idx(k) for k in keys] == [want.read_idx(k) for k in keys]
        r.close()
    seq = mx.recordio.MXRecordIO(HTTP + "/compat/a.rec", "r")
    got = [seq.read() for _ in range(len(want.keys) + 1)]
    assert got[:-1] == records(os.path.join(COMPAT, "a.rec")) and got[-1] is None


_SHARED = None  # the parent's open remote reader, which forked workers inherit


def _read_keys(keys):
    return [_SHARED.read_idx(k) for k in keys]


def test_mx_indexed_in_forked_workers():
    """A reader the parent used (its connections open) read by key in forked workers, as a DataLoader
    does: each worker opens its own, and the parent reads on, right, after them."""
    global _SHARED
    want = mx.recordio.MXIndexedRecordIO(os.path.join(COMPAT, "a.rec.idx"), os.path.join(COMPAT, "a.rec"), "r")
    _SHARED = mx.recordio.MXIndexedRecordIO(HTTP + "/compat/a.rec.idx", HTTP + "/compat/a.rec", "r")
    keys = list(want.keys)
    assert _SHARED.read_idx(keys[7]) == want.read_idx(keys[7])
    halves = [keys[0::2], keys[1::2][::-1]]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(_read_keys, halves)
    assert got == [[want.read_idx(k) for k in h] for h in halves]
    assert [_SHARED.read_idx(k) for k in keys[::-1]] == [want.read_idx(k) for k in keys[::-1]]
    _SHARED.close()


def test_writers_to_s3():
    rng = random.Random(9)
    recs = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 3000))) for _ in range(300)]
    # the path is a string Python frees after the open: the writer must not build its URLs from it
    w = recio.Writer("s3://scratch/" + "".join(["py", "-w", ".rec"]))
    for r in recs:
        w.write(r)
    w.close()
    assert records("s3://scratch/py-w.rec") == recs
    # recio.mx, with its .idx
    w = mx.recordio.MXIndexedRecordIO("s3://scratch/py-mx.idx", "s3://scratch/py-mx.rec", "w")
    for k, r in enumerate(recs):
        w.write_idx(1000 + k, r)
    w.close()
    r = mx.recordio.MXIndexedRecordIO("s3://scratch/py-mx.idx", "s3://scratch/py-mx.rec", "r")
    assert r.keys == [1000 + k for k in range(len(recs))]
    assert [r.read_idx(1000 + k) for k in range(0, len(recs), 7)] == recs[0::7]
    r.close()
    # dropped without close(): finished as close() does, never lost
    w = recio.Writer("s3://scratch/py-dropped.rec")
    for r in recs[:50]:
        w.write(r)
    with pytest.warns(ResourceWarning):
        del w
        gc.collect()
    assert records("s3://scratch/py-dropped.rec") == recs[:50]
    # an http(s) URL is read-only, said before anything is written
    with pytest.raises(recio.Error, match="read-only"):
        mx.recordio.MXRecordIO(HTTP + "/compat/new.rec", "w")


def test_split_parts_match_local():
    names = ("a.rec", "b.rec", "c.rec")
    here = ";".join(os.path.join(COMPAT, n) for n in names)
    for uris in (";".join(HTTP + "/compat/" + n for n in names), ";".join("s3://data/compat/" + n for n in names)):
        for nsplit in (1, 3):
            for rank in range(nsplit):
                want = [bytes(r) for r in recio.split(here, rank, nsplit)]
                assert [bytes(r) for r in recio.split(uris, rank, nsplit)] == want


def _batches(it):
    return [(np.array(b.data[0]), np.array(b.label[0])) for b in it]


def test_image_record_iter_remote_index():
    """ImageRecordIter with a remote .idx (shuffled by it, and by chunks: the chunk size is worked out
    from the file's size and the .idx's count) and len() (records counted from the .idx)."""
    for extra in (dict(), dict(shuffle_chunk_size=1)):
        want_it = recio.ImageRecordIter(path_imgrec=local("img.rec"), path_imgidx=local("img.idx"), data_shape=(3, 8, 8),
                                        batch_size=3, shuffle=True, seed=3, **extra)
        want = _batches(want_it)
        assert len(want) > 3
        for base in (HTTP + "/compat/", "s3://scratch/"):
            it = recio.ImageRecordIter(path_imgrec=base + "img.rec", path_imgidx=base + "img.idx", data_shape=(3, 8, 8),
                                       batch_size=3, shuffle=True, seed=3, **extra)
            assert len(it) == len(want_it)
            got = _batches(it)
            assert len(got) == len(want)
            for (d, l), (wd, wl) in zip(got, want):
                assert np.array_equal(d, wd) and np.array_equal(l, wl)
    # the .idx found beside the .rec, as the C library names it, for a global shuffle
    it = recio.ImageRecordIter(path_imgrec=HTTP + "/compat/img.rec", data_shape=(3, 8, 8), batch_size=3, shuffle=True,
                               seed=3)
    assert len(_batches(it)) == len(want)


def test_torch_datasets_remote():
    want = recio.torch.RecordMapDataset(local("img.rec"))
    for rec in (HTTP + "/compat/img.rec", "s3://scratch/img.rec"):
        ds = recio.torch.RecordMapDataset(rec)  # its .idx beside it
        assert len(ds) == len(want) > 0
        for i in range(len(ds)):
            (img, label), (wimg, wlabel) = ds[i], want[i]
            assert torch.equal(img, wimg) and torch.equal(label, wlabel)
    ds = recio.torch.RecordMapDataset(HTTP + "/compat/img.rec")
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork")
    got = sorted(tuple(img.flatten().tolist()) for img, _ in loader)
    assert got == sorted(tuple(want[i][0].flatten().tolist()) for i in range(len(want)))
    # the iterable dataset, read by two workers
    kw = dict(data_shape=(3, 8, 8), batch_size=2)
    want_sum = sorted(float(d.double().sum()) for d, _ in torch.utils.data.DataLoader(
        recio.torch.RecordDataset(path_imgrec=local("img.rec"), **kw), batch_size=None, num_workers=2,
        multiprocessing_context="fork"))
    got_sum = sorted(float(d.double().sum()) for d, _ in torch.utils.data.DataLoader(
        recio.torch.RecordDataset(path_imgrec=HTTP + "/compat/img.rec", **kw), batch_size=None, num_workers=2,
        multiprocessing_context="fork"))
    assert got_sum == want_sum and len(got_sum) > 0


def test_missing_remote_names_the_uri():
    gone = HTTP + "/compat/nothere.rec"
    with pytest.raises(ValueError, match="nothere"):
        recio.torch.RecordMapDataset(gone)
    with pytest.raises(ValueError, match="path_imgidx: .*nothere.idx does not exist"):
        recio.ImageRecordIter(path_imgrec=HTTP + "/compat/img.rec", path_imgidx=HTTP + "/compat/nothere.idx",
                              data_shape=(3, 8, 8), batch_size=3)
    with pytest.raises(recio.FileError, match="s3://nobucket/x.rec: offset 0: .*NoSuchBucket"):
        recio.Reader("s3://nobucket/x.rec")
