"""PyTorch: recio batches as tensors, split across DataLoader workers and torch.distributed ranks.

    from recio.torch import RecordDataset
    ds = RecordDataset(path_imgrec="train.rec", data_shape=(3, 224, 224), batch_size=64,
                       random_resized_crop=True, rand_mirror=True, shuffle=True, last_batch="discard")
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)   # batches come made
    for epoch in range(90):
        ds.set_epoch(epoch)                      # new shuffle and augmentation in every process
        for data, label in loader: ...

Each (rank, DataLoader worker) pair reads its own part: part = rank * workers + worker of
world_size * workers parts, cut as dmlc-core cuts them, so every record is read once per epoch by one
process. In the main process (num_workers=0) the tensors are torch.from_numpy views of recio's batch
buffer (no copy; valid until the next batch). In worker processes each batch is copied once, into
shared memory that the DataLoader hands to the main process without another copy. torch is imported
when this module is.
"""
import sys
from typing import Any, Iterator, Optional

import numpy as np
import torch
import torch.utils.data

import recio


def _dist(rank: Optional[int], world_size: Optional[int]) -> tuple:
    """(rank, world size): as given, else torch.distributed's when initialised, else (0, 1)."""
    if rank is not None or world_size is not None:
        return int(rank or 0), int(world_size or 1)
    d = torch.distributed
    if d.is_available() and d.is_initialized():
        return d.get_rank(), d.get_world_size()
    return 0, 1


class RecordDataset(torch.utils.data.IterableDataset):
    """recio.ImageRecordIter's options (MXNet names, or spec=...), as an IterableDataset of (data, label)
    batches. part_index/num_parts are worked out per process (rank, world_size default to
    torch.distributed's); give equalise=True (with shuffle=True and the .idx) so that every part yields
    the same number of batches, which DistributedDataParallel needs. In worker processes the recio
    iterator runs on the worker's own thread (workers=0) unless workers= or preprocess_threads= say
    otherwise; in the main process it uses recio's threads (preprocess_threads, default 4, at most the
    cores).

    len(ds) is the number of batches a DataLoader gets in one epoch: each worker's part pads or
    discards its own last batch, so it depends on the DataLoader's num_workers. len(loader) asks
    the dataset from DataLoader.__len__, whose num_workers is used; num_workers= tells len(ds) asked
    anywhere else (default 0: the rank's part read by the main process).

    Processes: DataLoader workers (fork or spawn) open their own iterators; an iterator the main
    process already used is never touched in a forked worker (see recio.ImageRecordIter)."""

    def __init__(self, rank: Optional[int] = None, world_size: Optional[int] = None,
                 num_workers: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__()
        for k in ("part_index", "num_parts", "copy"):
            if k in kwargs:
                raise ValueError("RecordDataset: %s is worked out per rank and worker; leave it out" % k)
        self.kwargs = kwargs
        self.rank, self.world_size, self.num_workers = rank, world_size, num_workers
        self._want = kwargs.pop("epoch", None)
        self._it = None
        self._part = None

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration yields (its shuffle and augmentation), in every process."""
        self._want = int(epoch)

    def part(self) -> tuple:
        """(part_index, num_parts) of the calling process: rank * workers + worker."""
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info is not None else (0, 1)
        rank, world = _dist(self.rank, self.world_size)
        return rank * nw + wid, world * nw

    def _iterator(self) -> tuple:
        part = self.part()
        in_worker = torch.utils.data.get_worker_info() is not None
        it, want = self._it, self._want
        if it is not None and (self._part != part or (want is not None and
                                                      (want < it.epoch or (want == it.epoch and not it._fresh)))):
            it.close()  # another part, or an epoch behind this one: open again (in a forked worker this
            # only drops the main process's iterator, whose threads are not in this process)
            it = self._it = None
        if it is None:
            kw = dict(self.kwargs)
            if in_worker and "workers" not in kw and "preprocess_threads" not in kw:
                kw["workers"] = 0
            kw["epoch"] = want or 0
            it = self._it = recio.ImageRecordIter(part_index=part[0], num_parts=part[1], **kw)
            self._part = part
        elif want is not None:
            while it.epoch < want:
                it._advance()
        self._want = None
        return it, in_worker

    def __iter__(self) -> Iterator[tuple]:
        """(data, label) tensors, one pair per batch of this process's part, for one epoch."""
        it, in_worker = self._iterator()
        for b in it:
            label = torch.from_numpy(np.array(b.label))
            if in_worker:
                data = torch.empty(b.data.shape, dtype=_torch_dtype(b.data.dtype)).share_memory_()
                np.copyto(data.numpy(), b.data)
            else:
                data = torch.from_numpy(b.data)
            yield data, label

    def __len__(self) -> int:
        """Batches per epoch: of the calling worker's part in a DataLoader worker; in the main process,
        summed over the parts of the DataLoader's workers (see the class docstring)."""
        info = torch.utils.data.get_worker_info()
        if info is not None:
            parts = [self.part()]
        else:
            nw = self.num_workers
            caller = sys._getframe(1).f_locals.get("self") if hasattr(sys, "_getframe") else None
            if isinstance(caller, torch.utils.data.DataLoader) and caller.dataset is self:
                nw = caller.num_workers  # len(loader): its workers are the ones that will read
            nw = max(int(nw or 0), 1)
            rank, world = _dist(self.rank, self.world_size)
            parts = [(rank * nw + w, world * nw) for w in range(nw)]
        kw = dict(self.kwargs)
        return sum(recio._batches(recio.translate(part_index=p, num_parts=n, **kw)) for p, n in parts)

    def __getstate__(self) -> dict:
        s = dict(self.__dict__)
        s["_it"], s["_part"] = None, None  # a worker process opens its own
        return s


def _torch_dtype(np_dtype: Any) -> Any:
    return torch.from_numpy(np.empty(0, dtype=np_dtype)).dtype
