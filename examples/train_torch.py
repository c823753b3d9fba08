"""Train a small PyTorch model on a .rec with recio: the loop of docs/python.md, runnable.

    make && PYTHONPATH=python python3 examples/train_torch.py train.rec [--epochs 2] [--workers 2] [--size 64]

Without a .rec argument it packs the sample photos (tests/data/photos) into a temporary one first.
Under torchrun each rank reads its own part of the records (RecordDataset splits by rank and
DataLoader worker). Prints loss and images/s per epoch.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.utils.data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from recio.torch import RecordDataset  # noqa: E402


def sample_rec(d):
    """The sample photos as train.rec (label = photo number % 4), with the recio command."""
    recio_cmd = os.environ.get("RECIO", os.path.join(ROOT, "build", "recio"))
    prefix = os.path.join(d, "train")
    subprocess.run([recio_cmd, "list", "--no-shuffle", prefix, os.path.join(ROOT, "tests", "data", "photos")],
                   check=True, stderr=subprocess.DEVNULL)
    with open(prefix + ".lst") as f:
        rows = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    with open(prefix + ".lst", "w") as f:
        for idx, _, path in rows:
            f.write("%s\t%d\t%s\n" % (idx, int(idx) % 4, path))
    subprocess.run([recio_cmd, "pack", "--resize", "160", "--quiet", prefix, os.path.join(ROOT, "tests", "data", "photos")],
                   check=True)
    return prefix + ".rec"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rec", nargs="?")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    ap.add_argument("--threads", type=int, default=2, help="recio decode threads (main process)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--classes", type=int, default=4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        rec = a.rec or sample_rec(d)
        ds = RecordDataset(path_imgrec=rec, data_shape=(3, a.size, a.size), batch_size=a.batch,
                           random_resized_crop=True, min_random_area=0.25, rand_mirror=True,
                           mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375,
                           preprocess_threads=a.threads, last_batch="discard", seed=1)
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=a.workers)
        model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(), nn.Linear(16, a.classes))
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()
        for epoch in range(a.epochs):
            ds.set_epoch(epoch)
            t0, n, total = time.perf_counter(), 0, 0.0
            for data, label in loader:
                opt.zero_grad()
                loss = loss_fn(model(data), label.long() % a.classes)
                loss.backward()
                opt.step()
                n += data.shape[0]
                total += loss.item() * data.shape[0]
            dt = time.perf_counter() - t0
            print("epoch %d: %d images, loss %.4f, %.1f img/s" % (epoch, n, total / max(n, 1), n / dt))


if __name__ == "__main__":
    main()
