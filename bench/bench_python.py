"""Python binding speed (make bench): recio.ImageRecordIter against the C iterator on the same records,
and against a torchvision DataLoader on the same JPEGs (when python3-torchvision is installed).

Data: the realistic set of the pipeline benchmarks (docs/bench.md): build/bench-data/imagenet1k.rec
(`make bench-data`: 1,000 photos of varied sizes and aspect ratios, packed as im2rec packs ImageNet,
--resize 256 --quality 90), or the .rec named by BENCH_REC. torchvision reads the very same JPEG
bytes, written out as files as an ImageFolder user has them. Without the set (the script run on its
own), N records cycling through the sample photos (tests/data/photos, ~300x400 to 640x480), said in
the header line. Batch 32, the train chain
random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw (torchvision: RandomResizedCrop(224),
RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet)). Each configuration runs RUNS times,
interleaved with the one it is compared to, one epoch per run (an epoch reads the set BENCH_REPEAT = 3
times); the table gives the median images/s
and the range of the per-run ratios, of wall time and of CPU time (images per CPU second: what the
Python layer adds, which other jobs on a shared machine hardly disturb). "C iterator" is `recio iter --quiet` (its own timer, after open);
the Python side times its epoch loop the same way, touching every batch's data.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import recio  # noqa: E402

RECIO = os.environ.get("RECIO", os.path.join(ROOT, "build", "recio")).split()
N = int(os.environ.get("BENCH_IMAGES", "1000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
BATCH = 32
SPEC = "random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw"
PHOTOS = ["chelsea-500x375.jpg", "coffee-500x333.jpg", "astronaut-375x500.jpg", "rocket-640x480.jpg",
          "coffee-progressive-480x360.jpg", "astronaut-exif-rot90-400x300.jpg", "chelsea-cmyk-300x400.jpg"]


REALISTIC = os.environ.get("BENCH_REC", os.path.join(ROOT, "build", "bench-data", "imagenet1k.rec"))


def make_data(d):
    """(rec, files, what): the records, the same JPEGs as (path, label) files, and the set's name."""
    jpgs = os.path.join(d, "jpg")
    os.makedirs(jpgs)
    if os.path.exists(REALISTIC):
        files = []
        with recio.Reader(REALISTIC) as r:
            for i, payload in enumerate(r):
                h, jpeg = recio.unpack(payload)
                f = os.path.join(jpgs, "%05d.jpg" % i)
                with open(f, "wb") as out:
                    out.write(jpeg)
                files.append((f, int(h.label if isinstance(h.label, float) else h.label[0])))
        return REALISTIC, files, "the realistic set %s (%d JPEG records)" % (os.path.relpath(REALISTIC, ROOT), len(files))
    rec = os.path.join(d, "bench.rec")
    blobs = [open(os.path.join(ROOT, "tests", "data", "photos", p), "rb").read() for p in PHOTOS]
    files = []
    with recio.Writer(rec, index=True) as w:
        for i in range(N):
            b = blobs[i % len(blobs)]
            w.write(recio.pack(recio.IRHeader(0, float(i % 10), i, 0), b))
            f = os.path.join(jpgs, "%05d.jpg" % i)
            with open(f, "wb") as out:
                out.write(b)
            files.append((f, i % 10))
    return rec, files, "%d JPEG records cycling through 7 sample photos (no %s: run `make bench-data`)" % (
        N, os.path.relpath(REALISTIC, ROOT))


def c_iter(rec, workers):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(RECIO + ["iter", rec, "--spec", SPEC, "--batch", str(BATCH), "--workers", str(workers),
                                "--quiet", "--last-batch", "discard"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = p.stderr.decode().strip().splitlines()[-1]  # "N images in T s: R img/s"
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return float(line.split(":")[-1].split()[0]), int(line.split()[0]) / cpu


def py_iter(rec, workers):
    c0 = time.process_time()  # the whole process, every thread: as the C side's rusage, open included
    it = recio.ImageRecordIter(path_imgrec=rec, spec=SPEC, batch_size=BATCH, workers=workers, last_batch="discard")
    t0 = time.perf_counter()
    n = 0
    for b in it:
        n += b.count
        b.data[0, 0, 0, 0]  # touch it, as a training step would
    dt = time.perf_counter() - t0
    it.close()
    return n / dt, n / (time.process_time() - c0)


def tv_loader(files, workers):
    import torch
    import torch.utils.data
    from PIL import Image
    from torchvision import transforms as T
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    class Files(torch.utils.data.Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            with Image.open(files[i][0]) as im:
                return tf(im.convert("RGB")), files[i][1]

    torch.set_num_threads(1)
    dl = torch.utils.data.DataLoader(Files(), batch_size=BATCH, num_workers=workers, drop_last=True)
    t0 = time.perf_counter()
    n = 0
    for x, _ in dl:
        n += x.shape[0]
    return n / (time.perf_counter() - t0), None


def overhead(rec):
    """What the Python layer adds per batch, timed on its own (the machine's load blurs a difference of
    two whole-pipeline timings): building the Batch's arrays over recio's buffer (ImageRecordIter._wrap,
    the Python part of next()) plus one ctypes call, best of 5 x 2,000."""
    import timeit
    from recio import _lib as L
    it = recio.ImageRecordIter(path_imgrec=rec.split(";")[0], spec=SPEC, batch_size=BATCH, workers=0)
    it.next()
    wrap = min(timeit.repeat(lambda: it._wrap(it._b), number=2000, repeat=5)) / 2000
    call = min(timeit.repeat(lambda: L.lib.recio_iter_errmsg(it._it), number=2000, repeat=5)) / 2000
    it.close()
    print("Python layer: %.1f us per batch (the arrays %.1f us, a ctypes call %.1f us)"
          % ((wrap + call) * 1e6, wrap * 1e6, call * 1e6))


def compare(name, a, b, args_a, args_b, runs):
    """Interleaved runs of a and b: medians and the range of the per-run ratio a/b, of images per
    second of wall time and (where both report it) of images per CPU second, which other jobs on a
    shared machine disturb far less."""
    ra, rb, ca, cb = [], [], [], []
    for _ in range(runs):
        (x, cx), (y, cy) = a(*args_a), b(*args_b)
        ra.append(x), rb.append(y), ca.append(cx), cb.append(cy)
    ratios = sorted(x / y for x, y in zip(ra, rb))
    ma, mb = statistics.median(ra), statistics.median(rb)
    cpu = "-"
    if ca[0] is not None and cb[0] is not None:
        cr = sorted(x / y for x, y in zip(ca, cb))
        cpu = "%.3f (%.3f-%.3f)" % (statistics.median(cr), cr[0], cr[-1])
    print("| %s | %.0f | %.0f | %.3f | %.3f-%.3f | %s |" % (name, ma, mb, ma / mb, ratios[0], ratios[-1], cpu))
    sys.stdout.flush()
    return ma / mb


def main():
    with tempfile.TemporaryDirectory(prefix="recio-bench-py-") as d:
        rec, files, what = make_data(d)
        # an epoch reads the set REPEAT times ("a.rec;a.rec;a.rec", the files list likewise): a 1,000-image
        # epoch lasts 0.3 s here, too short to time on a virtual machine
        rec, files = ";".join([rec] * REPEAT), files * REPEAT
        what += ", read %d times per epoch" % REPEAT
        print("Python binding: %s, batch %d, spec '%s', %d interleaved runs, %d cores, load %.1f"
              % (what, BATCH, SPEC, RUNS, os.cpu_count(), os.getloadavg()[0]))
        overhead(rec)
        print("| pipeline (images/s) | this | against | ratio | range | per CPU second: ratio (range) |")
        print("|---|---:|---:|---:|---:|---:|")
        py_iter(rec, 1)  # warm the page cache
        for w in (0, 1, 2):
            compare("Python ImageRecordIter vs C iterator, %d workers (target >= 0.95)" % w, py_iter, c_iter,
                    (rec, w), (rec, w), RUNS)
        try:
            import torchvision  # noqa: F401
            import PIL  # noqa: F401
        except ImportError:
            print("skip: torchvision comparison: python3-torchvision is not installed")
            return 0
        for w in (1, 2):
            compare("Python ImageRecordIter vs torchvision DataLoader, %d worker%s (target >= 4)"
                    % (w, "s" if w > 1 else ""), py_iter, tv_loader, (rec, w), (files, w), max(3, RUNS // 2 + 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
