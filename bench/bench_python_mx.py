"""Map-style Python datasets (make bench, issue 25's numbers):

(a) insightface's MXFaceDataset.__getitem__ on recio.mx (read_idx + unpack + imdecode + asnumpy) against
    the same Dataset written as a user without MXNet writes it (the .idx parsed into a dict, f.seek and
    f.read, struct for the RecordIO and image headers, np.asarray(PIL.Image.open(...).convert("RGB"))),
    one process, rounds interleaved, each round every image once in a shuffled order; then each in a
    DataLoader(num_workers=2) against 0 workers.
(b) recio.torch.RecordMapDataset with the train chain in DataLoader(num_workers=2) against torchvision's
    ImageFolder + transforms (PIL decoding) on the same JPEGs written out as class folders.
(c) the cold import of recio (a new interpreter each time; torch is not imported).
BENCH_PARTS=b runs (b) alone (BENCH_RUNS=6: its 3 rounds); BENCH_SETS=imagenet (or faces) one set.

Data: 112x112 face-like JPEGs (BENCH_FACES, default 2,000: squares cut at random from the photos in
/work/shared/photos, else tests/data/photos, resized to 112x112, Pillow quality 95) packed in
insightface's layout (record 0 a header with labels (1, N+1), 20 images per identity, identity records
after; build/bench-data/faces112.rec, made once), and the 1,000-photo ImageNet-like set of `make
bench-data` (build/bench-data/imagenet1k.rec). Every figure is a median over interleaved rounds with the
range of the per-round ratios; the load average is printed before and after each table (the machine may
be shared).
"""
import io
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import recio  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "7"))
PARTS = os.environ.get("BENCH_PARTS", "abc")  # which of (a), (b), (c) to run
NFACES = int(os.environ.get("BENCH_FACES", "2000"))
DATA = os.path.join(ROOT, "build", "bench-data")
FACES = os.path.join(DATA, "faces112.rec")
IMAGENET = os.environ.get("BENCH_REC", os.path.join(DATA, "imagenet1k.rec"))
SPEC = "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw"
FACE_SPEC = "random_flip(0.5) normalize(127.5,127.5,127.5,127.5,127.5,127.5) chw"  # arcface_torch's transform


def load():
    return "load %.2f" % os.getloadavg()[0]


# ---- data ------------------------------------------------------------------------------------------

def make_faces(path, n, per=20):
    """insightface's layout: record 0 (labels n+1, n+1+identities), images 1..n (`per` per identity),
    identity records n+1.. (labels: the identity's first image key and last + 1)."""
    from PIL import Image
    src = "/work/shared/photos" if os.path.isdir("/work/shared/photos") else os.path.join(ROOT, "tests", "data", "photos")
    photos = []
    for name in sorted(os.listdir(src)):
        if name.endswith((".jpg", ".png")):
            with Image.open(os.path.join(src, name)) as im:
                photos.append(im.convert("RGB"))
    rng = random.Random(1)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with recio.Writer(path, index=True, atomic=True) as w:
        ids = -(-n // per)
        w.write(recio.pack(recio.IRHeader(2, np.array([n + 1, n + 1 + ids], np.float32), 0, 0), b""), key=0)
        for k in range(1, n + 1):
            im = photos[rng.randrange(len(photos))]
            side = rng.randint(min(im.size) // 4, min(im.size))
            x, y = rng.randint(0, im.size[0] - side), rng.randint(0, im.size[1] - side)
            face = im.crop((x, y, x + side, y + side)).resize((112, 112), Image.BILINEAR)
            b = io.BytesIO()
            face.save(b, "JPEG", quality=95)
            w.write(recio.pack(recio.IRHeader(0, float((k - 1) // per), k, 0), b.getvalue()), key=k)
        for i in range(ids):
            lab = np.array([1 + i * per, min(1 + (i + 1) * per, n + 1)], np.float32)
            w.write(recio.pack(recio.IRHeader(2, lab, 0, 0), b""), key=n + 1 + i)


def write_jpegs(rec, keys, d):
    """The records' JPEG bytes as class folders (ImageFolder's layout): d/class_LABEL/KEY.jpg."""
    with recio.Reader(rec) as r:
        idx = dict(zip(*[a.tolist() for a in recio._load_index(rec[:-4] + ".idx")]))
        for k in keys:
            h, jpeg = recio.unpack(r.read_at(idx[k]))
            label = int(h.label if np.ndim(h.label) == 0 else h.label[0])
            os.makedirs(os.path.join(d, "class_%04d" % label), exist_ok=True)
            with open(os.path.join(d, "class_%04d" % label, "%06d.jpg" % k), "wb") as f:
                f.write(jpeg)


# ---- (a) the two Datasets ---------------------------------------------------------------------------

class MXFaceDataset:
    """insightface's arcface_torch MXFaceDataset (its transform left out: the decode path), on recio.mx."""

    def __init__(self, rec):
        import recio.mx as mx
        self.mx = mx
        self.imgrec = mx.recordio.MXIndexedRecordIO(rec[:-4] + ".idx", rec, "r")
        header, _ = mx.recordio.unpack(self.imgrec.read_idx(0))
        if header.flag > 0:  # insightface's header record: the images are keys 1 .. label[0] - 1
            self.header0 = (int(header.label[0]), int(header.label[1]))
            self.imgidx = np.array(range(1, int(header.label[0])))
        else:
            self.imgidx = np.array(list(self.imgrec.keys))

    def __getitem__(self, index):
        idx = self.imgidx[index]
        s = self.imgrec.read_idx(idx)
        header, img = self.mx.recordio.unpack(s)
        label = header.label
        if not isinstance(label, float):
            label = label[0]
        sample = self.mx.image.imdecode(img).asnumpy()
        return sample, int(label)

    def __len__(self):
        return len(self.imgidx)


class PlainDataset:
    """The same Dataset without MXNet: the .idx parsed into a dict, f.seek + f.read of the RecordIO
    header and payload, struct for the headers, Pillow to decode. The file is opened per process (a
    file object shared by forked workers shares its offset)."""

    def __init__(self, rec):
        self.rec = rec
        self.offsets = {}
        with open(rec[:-4] + ".idx") as f:
            for line in f:
                k, off = line.split("\t")
                self.offsets[int(k)] = int(off)
        self.f, self.pid = None, None
        header, _ = self._record(0)
        if header[0] > 0:
            self.keys = list(range(1, int(header[1][0])))
        else:
            self.keys = list(self.offsets)

    def _record(self, key):
        if self.pid != os.getpid():
            self.f, self.pid = open(self.rec, "rb"), os.getpid()
        self.f.seek(self.offsets[key])
        magic, lrec = struct.unpack("<II", self.f.read(8))
        payload = self.f.read(lrec & ((1 << 29) - 1))
        flag, label, _, _ = struct.unpack("<IfQQ", payload[:24])
        if flag > 0:
            label = struct.unpack("<%df" % flag, payload[24:24 + 4 * flag])
        return (flag, label), payload[24 + 4 * flag:]

    def __getitem__(self, index):
        from PIL import Image
        (flag, label), img = self._record(self.keys[index])
        sample = np.asarray(Image.open(io.BytesIO(img)).convert("RGB"))
        return sample, int(label if flag == 0 else label[0])

    def __len__(self):
        return len(self.keys)

    def __getstate__(self):
        d = dict(self.__dict__)
        d["f"], d["pid"] = None, None
        return d


def one_pass(ds, order):
    """Seconds for every item of ds once, in `order`."""
    t0 = time.perf_counter()
    for i in order:
        ds[i]
    return time.perf_counter() - t0


def as_tensors(batch):
    """A DataLoader collate_fn for images of different sizes (the ImageNet-like set): a list of tensors
    (from workers they travel in shared memory, as default_collate's batch does) and the labels."""
    import torch
    return [torch.from_numpy(a) for a, _ in batch], torch.tensor([y for _, y in batch])


def loader_pass(ds, workers, rounds=1, same_size=True):
    """Images per second through DataLoader(batch_size=64, shuffle=True, num_workers=workers), the
    workers started before the clock (persistent), `rounds` epochs timed."""
    import torch.utils.data
    dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=workers,
                                     collate_fn=None if same_size else as_tensors, persistent_workers=workers > 0)
    for _ in dl:  # start the workers, warm the page cache
        pass
    t0 = time.perf_counter()
    n = 0
    for _ in range(rounds):
        for x, _ in dl:
            n += len(x)
    return n / (time.perf_counter() - t0)


def breakdown(rec, n=300):
    """Where each Dataset spends an item (µs, best of 3 passes over n items): what explains the ratio."""
    from PIL import Image
    import recio.mx as mx
    plain, mxd = PlainDataset(rec), MXFaceDataset(rec)
    order = list(range(min(n, len(plain))))
    rows = {}

    def best(name, fn):
        rows[name] = min(timeit(fn) for _ in range(3)) / len(order) * 1e6

    def timeit(fn):
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    payloads = [plain._record(plain.keys[i])[1] for i in order]
    raws = [mxd.imgrec.read_idx(mxd.imgidx[i]) for i in order]
    best("plain: seek + read + struct", lambda: [plain._record(plain.keys[i]) for i in order])
    best("plain: Image.open", lambda: [Image.open(io.BytesIO(p)) for p in payloads])
    best("plain: open + convert('RGB') (decode)", lambda: [Image.open(io.BytesIO(p)).convert("RGB") for p in payloads])
    best("plain: open + convert + np.asarray", lambda: [np.asarray(Image.open(io.BytesIO(p)).convert("RGB")) for p in payloads])
    best("recio.mx: read_idx", lambda: [mxd.imgrec.read_idx(mxd.imgidx[i]) for i in order])
    best("recio.mx: unpack", lambda: [mx.recordio.unpack(s) for s in raws])
    best("recio.mx: imdecode + asnumpy", lambda: [mx.image.imdecode(p).asnumpy() for p in payloads])
    for k, v in rows.items():
        print("    %-42s %7.1f us" % (k, v))


def bench_getitem(name, rec):
    plain, mxd = PlainDataset(rec), MXFaceDataset(rec)
    assert len(plain) == len(mxd)
    a, b = plain[0], mxd[0]
    assert a[1] == b[1] and a[0].shape == b[0].shape and np.abs(a[0].astype(int) - b[0].astype(int)).max() <= 2
    n = len(plain)
    rng = random.Random(7)
    one_pass(plain, range(n)), one_pass(mxd, range(n))  # warm the page cache and both code paths
    tm, tp, ratios = [], [], []
    for r in range(RUNS):
        order = list(range(n))
        rng.shuffle(order)
        first, second = (mxd, plain) if r % 2 == 0 else (plain, mxd)
        t1, t2 = one_pass(first, order), one_pass(second, order)
        x, y = (t1, t2) if first is mxd else (t2, t1)
        tm.append(n / x), tp.append(n / y), ratios.append(y / x)
    ratios.sort()
    print("| %s: MXFaceDataset on recio.mx vs without MXNet (PIL), one process | %.0f | %.0f | **%.2f** (%.2f-%.2f) |"
          % (name, statistics.median(tm), statistics.median(tp), statistics.median(ratios), ratios[0], ratios[-1]))
    sys.stdout.flush()


def bench_loader_scaling(name, rec):
    import torch
    torch.set_num_threads(1)
    for label, ds in (("recio.mx", MXFaceDataset(rec)), ("without MXNet (PIL)", PlainDataset(rec))):
        w0, w2 = [], []
        for r in range(max(3, RUNS // 2)):
            w0.append(loader_pass(ds, 0, same_size=rec == FACES)), w2.append(loader_pass(ds, 2, same_size=rec == FACES))
        ratios = sorted(b / a for a, b in zip(w0, w2))
        print("| %s: %s, DataLoader 2 workers vs 0 | %.0f | %.0f | %.2f (%.2f-%.2f) |"
              % (name, label, statistics.median(w2), statistics.median(w0), statistics.median(ratios), ratios[0],
                 ratios[-1]))
        sys.stdout.flush()


# ---- (b) RecordMapDataset vs ImageFolder ---------------------------------------------------------------

def transfer_ceiling(shape, workers=2, batches=60, dtype=None):
    """Images per second DataLoader(num_workers=2) passes when its workers only allocate the batch
    (tensors of `shape` and dtype (float32) in shared memory, as default_collate makes them): what any
    Dataset returning such batches from worker processes can reach here."""
    import torch
    import torch.utils.data

    class Empty(torch.utils.data.Dataset):
        def __len__(self):
            return batches

        def __getitem__(self, i):
            return torch.empty(shape, dtype=dtype or torch.float32).share_memory_()
    dl = torch.utils.data.DataLoader(Empty(), batch_size=None, num_workers=workers, persistent_workers=True)
    for _ in dl:
        pass
    t0 = time.perf_counter()
    n = sum(x.shape[0] for x in dl)
    return n / (time.perf_counter() - t0)


def cpu_seconds():
    """CPU seconds (user + system) of this process and of its reaped children: DataLoader workers that
    are not persistent are joined, so reaped, at the end of each epoch."""
    import resource
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def bench_map_vs_imagefolder(name, rec, faces, repeat, rounds):
    """RecordMapDataset five ways (per item with default_collate; whole batches from a BatchSampler;
    whole uint8 batches from a chain without normalize, normalised in the main process by torch's ops
    (CHW) or by recio.torch.Normalize (HWC: the chain without chw either), the same tensors, checked;
    whole batches on 2 threads of the main process) against ImageFolder +
    transforms in DataLoader(num_workers=2), batch 32, `repeat` passes over the set per timed epoch,
    interleaved. Two figures per run: images per wall second, and images per CPU second of every
    process (main and workers: what a loaded machine changes least)."""
    import torch
    import torch.utils.data as tud
    from torchvision import datasets, transforms as T
    from recio.torch import Normalize, RecordMapDataset
    torch.set_num_threads(1)
    h = recio.unpack(recio.Reader(rec).read())[0]
    keys = (1, int(h.label[0])) if h.flag > 0 else None
    spec = FACE_SPEC if faces else SPEC
    # the same chain without normalize: uint8 items, a quarter of the bytes to cross processes
    spec8 = spec.replace(spec[spec.index("normalize"):spec.index(" chw")] + " ", "")
    mean, std = ((127.5,) * 3, (127.5,) * 3) if faces else ((123.68, 116.28, 103.53), (58.395, 57.12, 57.375))
    mean = torch.tensor(mean, dtype=torch.float32).view(1, 3, 1, 1)
    std = torch.tensor(std, dtype=torch.float32).view(1, 3, 1, 1)
    ours = RecordMapDataset(rec, keys=keys, transform=spec, label_dtype=torch.long)
    ours8 = RecordMapDataset(rec, keys=keys, transform=spec8, label_dtype=torch.long)
    # ... and without chw: uint8 HWC items, normalised (and made CHW) by Normalize in one C pass
    oursh = RecordMapDataset(rec, keys=keys, transform=spec8.replace(" chw", ""), label_dtype=torch.long)
    norm = Normalize(mean.flatten().tolist(), std.flatten().tolist())
    threaded = RecordMapDataset(rec, keys=keys, transform=spec, label_dtype=torch.long, threads=2)
    first = list(range(64))
    assert torch.equal(ours[first][0], ours8[first][0].float().sub_(mean).div_(std))  # the same tensors
    assert torch.equal(ours[first][0], norm(oursh[first][0]))
    with tempfile.TemporaryDirectory(prefix="recio-bench-folder-") as d:
        write_jpegs(rec, ours.keys.tolist(), d)
        if faces:  # arcface_torch's: RandomHorizontalFlip, ToTensor, Normalize(0.5, 0.5)
            tf = T.Compose([T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)])
        else:
            tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                            T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        theirs = datasets.ImageFolder(d, transform=tf)
        assert len(theirs) == len(ours)

        def order(n, seed):
            g = torch.Generator().manual_seed(seed)
            return torch.cat([torch.randperm(n, generator=g) for _ in range(repeat)]).tolist()

        def loaders(seed):
            o = order(len(ours), seed)
            batches = tud.BatchSampler(o, 32, drop_last=True)
            return {"per item": tud.DataLoader(ours, batch_size=32, sampler=o, num_workers=2, drop_last=True),
                    "batches": tud.DataLoader(ours, batch_size=None, sampler=batches, num_workers=2),
                    "uint8": tud.DataLoader(ours8, batch_size=None, sampler=batches, num_workers=2),
                    "Normalize": tud.DataLoader(oursh, batch_size=None, sampler=batches, num_workers=2),
                    "threads": tud.DataLoader(threaded, batch_size=None, sampler=batches, num_workers=0),
                    "torchvision": tud.DataLoader(theirs, batch_size=32, sampler=o, num_workers=2, drop_last=True)}

        def run(k, dl):
            t0, c0, n = time.perf_counter(), cpu_seconds(), 0
            for x, _ in dl:
                if k == "uint8":  # the train loop's first step: the float32 normalised batch
                    x = x.float().sub_(mean).div_(std)
                elif k == "Normalize":
                    x = norm(x)
                n += x.shape[0]
            return n / (time.perf_counter() - t0), n / (cpu_seconds() - c0)
        for k, dl in loaders(0).items():  # warm the page cache
            run(k, dl)
        got = {k: [] for k in ("per item", "batches", "uint8", "Normalize", "threads", "torchvision")}
        for r in range(rounds):
            ls = list(loaders(r + 1).items())
            for k, dl in (ls if r % 2 == 0 else ls[::-1]):
                got[k].append(run(k, dl))
        ceiling = transfer_ceiling((32, 3, 112, 112) if faces else (32, 3, 224, 224))
        ceiling8 = transfer_ceiling((32, 3, 112, 112) if faces else (32, 3, 224, 224), dtype=torch.uint8)
        what = "flip + normalize" if faces else "train chain"
        rows = (("batch_size=32 (items from __getitems__, default_collate), 2 workers", "per item"),
                ("whole batches (BatchSampler), 2 workers", "batches"),
                ("whole uint8 batches (chain without normalize), normalised in the main process, 2 workers", "uint8"),
                ("whole uint8 HWC batches (chain without normalize and chw), recio.torch.Normalize in the main "
                 "process, 2 workers", "Normalize"),
                ("whole batches, threads=2, in the main process (num_workers=0)", "threads"))
        tv = got["torchvision"]
        for label, k in rows:
            ratios = sorted(a[0] / b[0] for a, b in zip(got[k], tv))
            cpu = sorted(a[1] / b[1] for a, b in zip(got[k], tv))
            print("| %s, %s: RecordMapDataset %s vs ImageFolder + transforms, 2 workers | %.0f | %.0f | **%.2f** "
                  "(%.2f-%.2f) | %.0f vs %.0f: %.2f (%.2f-%.2f) |"
                  % (name, what, label, statistics.median(a[0] for a in got[k]), statistics.median(b[0] for b in tv),
                     statistics.median(ratios), ratios[0], ratios[-1], statistics.median(a[1] for a in got[k]),
                     statistics.median(b[1] for b in tv), statistics.median(cpu), cpu[0], cpu[-1]))
        print("| %s: DataLoader(num_workers=2) passing empty batches of that size (the ceiling of any "
              "worker-process Dataset here): float32 %.0f, uint8 %.0f | | | | |" % (name, ceiling, ceiling8))
        if not faces:
            map_breakdown(ours, ours8, oursh, norm, theirs, tf, mean, std)
        sys.stdout.flush()


def map_breakdown(ours, ours8, oursh, norm, theirs, tf, mean, std, n=192):
    """Where an image goes on each side (CPU µs an image in one process, best of 3 over n images):
    torchvision's steps, recio's batch, and the new shared memory a worker's batch needs."""
    import torch
    from PIL import Image
    rrc, flip, tt, nm = tf.transforms
    paths = [theirs.samples[i][0] for i in range(n)]
    imgs = [Image.open(p).convert("RGB") for p in paths]
    crops = [rrc(im) for im in imgs]
    tens = [tt(c) for c in crops]
    items = [theirs[i][0] for i in range(32)]
    x8 = ours8[list(range(32))][0]
    xh = oursh[list(range(32))][0]

    def best(fn):
        ts = []
        for _ in range(3):
            t0 = time.process_time()
            fn()
            ts.append(time.process_time() - t0)
        return min(ts) / n * 1e6

    def collate_shared():  # default_collate in a worker: the batch in new shared memory
        for _ in range(n // 32):
            out = items[0].new(items[0].storage()._new_shared(32 * items[0].numel())).resize_(32, *items[0].shape)
            torch.stack(items, 0, out=out)

    def shared(dtype):
        return lambda: [torch.empty((32,) + tuple(x8.shape[1:]), dtype=dtype).share_memory_() for _ in range(n // 32)]
    rows = [("torchvision: Image.open + convert('RGB') (decode)", lambda: [Image.open(p).convert("RGB") for p in paths]),
            ("torchvision: RandomResizedCrop", lambda: [rrc(im) for im in imgs]),
            ("torchvision: RandomHorizontalFlip", lambda: [flip(c) for c in crops]),
            ("torchvision: ToTensor", lambda: [tt(c) for c in crops]),
            ("torchvision: Normalize", lambda: [nm(t) for t in tens]),
            ("torchvision: ImageFolder.__getitem__", lambda: [theirs[i] for i in range(n)]),
            ("torchvision: default_collate into new shared memory", collate_shared),
            ("recio: ds[i], float32", lambda: [ours[i] for i in range(n)]),
            ("recio: ds[[32 positions]], float32", lambda: [ours[list(range(b, b + 32))] for b in range(0, n, 32)]),
            ("recio: ds[[32 positions]], uint8 (no normalize)", lambda: [ours8[list(range(b, b + 32))] for b in range(0, n, 32)]),
            ("recio: ds[[32 positions]], uint8 HWC (no normalize, no chw)",
             lambda: [oursh[list(range(b, b + 32))] for b in range(0, n, 32)]),
            ("a new shared-memory float32 batch", shared(torch.float32)),
            ("a new shared-memory uint8 batch", shared(torch.uint8)),
            ("a new shared-memory uint8 batch made as such, every page written once (a worker's now)",
             lambda: [torch.empty(0, dtype=torch.uint8).new(torch.empty(0, dtype=torch.uint8).storage()._new_shared(
                 xh.numel())).fill_(1) for _ in range(n // 32)]),
            ("main process: uint8 batch -> x.float().sub_(mean).div_(std)",
             lambda: [x8.float().sub_(mean).div_(std) for _ in range(n // 32)]),
            ("main process: uint8 HWC batch -> recio.torch.Normalize", lambda: [norm(xh) for _ in range(n // 32)])]
    print("\n[%s] where an image goes (CPU µs an image, one process, best of 3 over %d):" % (load(), n))
    for label, fn in rows:
        print("    %-62s %7.0f" % (label, best(fn)))


# ---- (c) import time -----------------------------------------------------------------------------

def bench_import(runs=15):
    """New interpreters importing recio, with compiled bytecode as an installed package has it (here
    in build/pycache: this environment may set PYTHONDONTWRITEBYTECODE), the first run writing it."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PYTHONPYCACHEPREFIX=os.path.join(ROOT, "build", "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = ("import sys, time; t = time.perf_counter(); import %s; "
            "print(time.perf_counter() - t, 'torch' in sys.modules, 'numpy' in sys.modules)")
    for mod in ("recio", "recio.mx", "numpy"):
        ts, flags = [], None
        subprocess.run([sys.executable, "-c", "import " + mod], env=env, check=True)  # writes the bytecode
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", code % mod], env=env, stdout=subprocess.PIPE, check=True)
            t, torch_in, np_in = out.stdout.decode().split()
            ts.append(float(t) * 1000)
            flags = (torch_in, np_in)
        ts.sort()
        print("| import %s (a new interpreter each time; torch imported: %s, numpy: %s) | %.1f ms (%.1f-%.1f) |"
              % (mod, flags[0], flags[1], statistics.median(ts), ts[0], ts[-1]))


def machine():
    model, flags = "?", ""
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, check=True).stdout.decode()
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("Flags:"):
                have = line.split(":", 1)[1].split()
                flags = " ".join(f for f in ("sse2", "ssse3", "sse4_2", "avx", "avx2", "avx512f", "avx512bw") if f in have)
    except (OSError, subprocess.CalledProcessError):
        pass
    return "%s, %d CPUs (lscpu flags: %s)" % (model, os.cpu_count(), flags)


def main():
    try:
        from PIL import features
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        print("skip: bench_python_mx.py needs Pillow, torch and torchvision (%s)" % e)
        return 0
    if not os.path.exists(FACES):
        make_faces(FACES, NFACES)
    print("Map-style datasets: %s; Pillow %s with libjpeg-turbo: %s (libjpeg %s); recio %s; %d interleaved rounds"
          % (machine(), __import__("PIL").__version__, features.check_feature("libjpeg_turbo"), features.version("jpg"),
             recio.library_path, RUNS))
    sets = [("112x112 faces (%d)" % NFACES, FACES)]
    if os.environ.get("BENCH_SETS") == "imagenet":
        sets = []
    if os.environ.get("BENCH_SETS") == "faces":
        pass
    elif os.path.exists(IMAGENET):
        sets.append(("ImageNet-like (1,000 photos, shorter side 256)", IMAGENET))
    else:
        print("skip: %s is missing (make bench-data)" % IMAGENET)
    if "a" in PARTS:
        part_a(sets)
    if "b" in PARTS:
        part_b(sets)
    if "c" in PARTS:
        print("\n(c) cold import [%s]\n" % load())
        print("| what | median (range) |\n|---|---:|")
        bench_import()
    print("\n[%s]" % load())
    return 0


def part_a(sets):
    print("\n(a) __getitem__, images/s [%s]\n" % load())
    print("| dataset | recio | against | ratio (range) |\n|---|---:|---:|---:|")
    for name, rec in sets:
        bench_getitem(name, rec)
    for name, rec in sets:
        bench_loader_scaling(name, rec)
    print("\n[%s] where an item goes (µs, one process, best of 3):" % load())
    for name, rec in sets:
        print("  %s:" % name)
        breakdown(rec)


def part_b(sets):
    print("\n(b) DataLoader(num_workers=2), images/s [%s]\n" % load())
    print("| dataset | recio | against | ratio (range) | images per CPU second: recio vs against, ratio (range) |\n"
          "|---|---:|---:|---:|---:|")
    for name, rec in sets[::-1]:
        bench_map_vs_imagefolder(name, rec, rec == FACES, repeat=3, rounds=max(3, RUNS // 2))


if __name__ == "__main__":
    sys.exit(main())
