"""torchvision baseline of bench_pipeline.cpp: the same records, the same chains, as a PyTorch user
writes them: a map-style Dataset over the .rec (its .idx gives each record's offset; a few lines of
pure-Python RecordIO, no MXNet), PIL decode, torchvision transforms, DataLoader(batch_size=32,
num_workers=0), one thread. Prints 'eval IMG/S CPU_IMG/S' and 'train IMG/S CPU_IMG/S' (one epoch
each, timed from the first batch request to the last, by the wall clock and by the process's CPU
time). Run by Debian's /usr/bin/python3 (python3-torchvision).
    bench_torchvision.py DATA.rec"""
import io
import struct
import sys
import time

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms as T

MAGIC = 0xCED7230A


class RecordIO(Dataset):
    def __init__(self, rec, transform):
        self.offsets = [int(line.split()[1]) for line in open(rec[:-4] + ".idx")]
        self.f = open(rec, "rb")
        self.transform = transform

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        f = self.f
        f.seek(self.offsets[i])
        payload = b""
        while True:  # dmlc-core parts: cflag 0 whole, 1 first, 2 middle, 3 last (magic re-inserted)
            magic, lrec = struct.unpack("<II", f.read(8))
            assert magic == MAGIC
            cflag, n = lrec >> 29, lrec & ((1 << 29) - 1)
            payload += f.read(n)
            f.read((4 - n % 4) % 4)
            if cflag in (0, 3):
                break
            payload += struct.pack("<I", MAGIC)
        flag, label = struct.unpack("<If", payload[:8])  # IRHeader: flag, label, id, id2
        start = 24 + 4 * flag
        img = Image.open(io.BytesIO(payload[start:])).convert("RGB")
        return self.transform(img), label


def rate(rec, transform):
    loader = DataLoader(RecordIO(rec, transform), batch_size=32, num_workers=0, shuffle=False)
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for x, _ in loader:
        n += x.shape[0]
    return "%.1f %.1f" % (n / (time.perf_counter() - t0), n / (time.process_time() - c0))


def main():
    rec = sys.argv[1]
    torch.set_num_threads(1)
    norm = T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    evalt = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), norm])
    traint = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), norm])
    ds = RecordIO(rec, evalt)
    for i in range(64):  # warm the page cache and the code paths
        ds[i]
    print("eval " + rate(rec, evalt), flush=True)
    print("train " + rate(rec, traint), flush=True)


if __name__ == "__main__":
    main()
