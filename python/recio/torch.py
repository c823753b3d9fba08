"""PyTorch: recio batches as tensors, split across DataLoader workers and torch.distributed ranks
(RecordDataset, iterable), or single records by position (RecordMapDataset, map-style).

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
shared memory the worker reuses and the main process maps once (recio/_shared.py). torch is imported
when this module is.

    from recio.torch import RecordMapDataset
    ds = RecordMapDataset("train.rec", transform="random_resized_crop(224) random_flip(0.5) normalize(imagenet) chw")
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=2)

RecordMapDataset reads record i (the i-th key of the .idx, or of keys=) by its offset and decodes and
transforms it in C: DataLoader's shuffle, samplers and DistributedSampler see an ordinary Dataset.
Normalize turns the uint8 (B, H, W, 3) batches of a chain ending before normalize into the float32
(B, 3, H, W) batch normalize(...) chw gives, in one C pass (docs/python.md, "Fast batches").
"""
import ctypes
import operator
import os
import sys
from ctypes import byref
from typing import Any, Iterator, Optional, Union

import numpy as np
import torch
import torch.utils.data

import recio
from recio import _lib as L
from recio import _shared
from recio._mxnet import _index_of, key_range

PARTS = ("contiguous", "interleave")


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
    process already used is never touched in a forked worker (see recio.ImageRecordIter).

    parts= says what each (rank, worker) part holds:
    - "contiguous" (the default; MXNet's part_index/num_parts): dmlc-core's cut of the records in
      file order, so with shuffle=False each part is a run of consecutive records, and a batch sees
      only the identities (classes) stored there: an insightface file stores each identity's images
      together. shuffle=True cuts the epoch's permutation of every record instead (each part then a
      random sample of the whole file); shuffle_buffer=N only shuffles within the contiguous part.
    - "interleave": every epoch one seeded permutation of every record, the same in every process,
      dealt out to the parts (what DistributedSampler(shuffle=True) does), so every batch draws from
      all identities. It needs the .idx and is shuffle=True with the checks that keep it so:
      shuffle=False, shuffle_buffer (a shuffle within the contiguous part) and shuffle_chunk_size
      (runs of consecutive records) are refused."""

    def __init__(self, rank: Optional[int] = None, world_size: Optional[int] = None,
                 num_workers: Optional[int] = None, parts: str = "contiguous", **kwargs: Any) -> None:
        super().__init__()
        for k in ("part_index", "num_parts", "copy"):
            if k in kwargs:
                raise ValueError("RecordDataset: %s is worked out per rank and worker; leave it out" % k)
        if parts not in PARTS:
            raise ValueError("RecordDataset: parts: 'contiguous' or 'interleave', not %r" % (parts,))
        if parts == "interleave":
            _interleave(kwargs)
        self.parts = parts
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
                data = _shared.worker_batch(b.data.shape, _torch_dtype(b.data.dtype))
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


def _interleave(kwargs: dict) -> None:
    """parts='interleave': a shuffle of every record per epoch (index mode), nothing that undoes it."""
    if "shuffle" in kwargs and not recio._mxnet._typed("shuffle", kwargs["shuffle"]):
        raise ValueError("RecordDataset: parts='interleave' deals out a shuffled order of every record; "
                         "shuffle=False contradicts it (use parts='contiguous')")
    for k in ("shuffle_buffer", "shuffle_chunk_size"):
        if kwargs.get(k):
            raise ValueError("RecordDataset: parts='interleave' shuffles every record together; %s shuffles runs "
                             "of consecutive records (leave it out)" % k)
    kwargs["shuffle"] = True


class _ByValue(torch.Tensor):
    """A batch's labels as a DataLoader worker returns them: pickled by value (B numbers) and rebuilt
    as a plain tensor in the main process. torch's pickler gives every tensor a worker returns new
    shared memory and a file descriptor passed over a socket (then mapped, unmapped and freed): for
    32 labels that costs about as much as for the 4.8 MB image batch beside them."""

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return _plain_tensor, (self.as_subclass(torch.Tensor).tolist(), self.dtype)


def _plain_tensor(values: Any, dtype: Any) -> torch.Tensor:
    """_ByValue's rebuild: the same numbers, as a plain tensor of that dtype."""
    return torch.tensor(values, dtype=dtype)


class _Ragged(ValueError):
    """_batch's error when an item's shape differs from the first's (__getitems__ then goes item by
    item)."""


class _Row(torch.Tensor):
    """Row k of a batch RecordMapDataset.__getitems__ made: a plain tensor to everything but
    default_collate, which gives back the batch itself when it is handed all of its rows in order."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def of(batch: torch.Tensor, k: int) -> "_Row":
        row = batch.as_subclass(torch.Tensor)[k].as_subclass(_Row)
        row._recio_row = (batch, k)
        return row


def _collate_rows(rows: Any, *, collate_fn_map: Any = None) -> torch.Tensor:
    """default_collate for _Row items: their batch when they are all its rows in order, else torch's
    stack of them as plain tensors."""
    marks = [getattr(r, "_recio_row", (None, -1)) for r in rows]
    whole = marks[0][0]
    if whole is not None and len(rows) == whole.shape[0] and all(
            b is whole and k == at for at, (b, k) in enumerate(marks)):
        return whole
    from torch.utils.data._utils.collate import collate_tensor_fn
    return collate_tensor_fn([r.as_subclass(torch.Tensor) for r in rows])


try:  # torch >= 1.13: default_collate looks an item's exact type up here first (its documented hook)
    from torch.utils.data._utils.collate import default_collate_fn_map
    default_collate_fn_map[_Row] = _collate_rows
except ImportError:  # older torch stacks the rows as any tensors: the same values, with a copy
    pass


def _torch_dtype(np_dtype: Any) -> Any:
    return torch.from_numpy(np.empty(0, dtype=np_dtype)).dtype


class RecordMapDataset(torch.utils.data.Dataset):
    """A map-style Dataset over one .rec file: ds[i] is (image, label) of the i-th record, read by its
    offset from the .idx and decoded and transformed in C, so DataLoader(shuffle=True), samplers and
    DistributedSampler work as on any Dataset.

    rec: the .rec file. idx: its .idx (default: the one beside it, as the C library names it: REC.idx,
    else REC with .rec replaced by .idx), loaded by the C library. keys: which records, in which
    order: None (every .idx line, in the file's order), (begin, end) or range(begin, end) (the keys
    begin <= key < end, in key order: insightface's images are keys (1, int(label[0])) of record 0's
    label, see docs/python.md),
    or a list / integer array of keys (in that order; each must be in the .idx).

    transform: a recio transform spec (docs/image.md) or a recio.Transform; None decodes only
    ((H, W, C) uint8). Item i of epoch e runs with seed recio_seed_for(seed, e, i) (set_epoch(e), or
    epoch=), so an item is the same whatever worker reads it. channels: decode to 1, 3 (default) or
    4 channels (0: as stored). fast=True (default) lets libjpeg-turbo decode at a reduced DCT scale
    where the chain shrinks the image, as ImageRecordIter does; fast=False decodes in full first.

    image: a torch tensor of the chain's output (no copy of it is made). label: the record header's
    label as a 0-d tensor of label_dtype (default float32; torch.long for class indices), or with
    label_width=N the first N of its labels padded with label_pad_value, shape (N,).

    Batches: DataLoader(ds, batch_size=64) asks for ds.__getitems__(positions), which decodes each
    image straight into its row of one tensor and hands default_collate views it gives back as that
    tensor: no per-item tensors are stacked. ds[[i, j, ...]] gives the same (images, labels) at once
    (DataLoader(ds, batch_size=None, sampler=BatchSampler(...))). threads=N decodes a batch's rows on
    N threads of the calling process (the C decode runs without the GIL). A DataLoader worker makes
    its batches in a few slots of shared memory it reuses, which the main process maps once
    (recio/_shared.py; torch would make new shared memory for every batch). Ending the chain before
    normalize and chw (uint8 (B, H, W, 3) batches, a quarter of the bytes) and normalising with
    recio.torch.Normalize or on the GPU still saves the workers the float32 writes
    (docs/python.md, "Fast batches").

    Processes: the file is opened by each process on its first read (forked and spawned DataLoader
    workers included: the dataset pickles by path, its index arrays with it); threads of one process
    read one at a time and decode at once. A record with an empty image (insightface's header and
    identity records, out of a key range) raises recio.DecodeError naming its offset and key."""

    def __init__(self, rec: Union[str, os.PathLike], idx: Union[None, str, os.PathLike] = None,
                 transform: Union[None, str, "recio.Transform"] = None, keys: Any = None, seed: int = 0, epoch: int = 0,
                 channels: int = 3, fast: bool = True, label_width: int = 1, label_pad_value: float = -1.0,
                 label_dtype: Any = torch.float32, mmap: bool = False, threads: int = 0) -> None:
        super().__init__()
        self.rec = os.fsdecode(recio._fspath(rec, "RecordMapDataset: rec"))
        if recio._stat(self.rec)[0] == "dir":
            raise ValueError("RecordMapDataset: rec: %s is a directory; give one .rec file" % self.rec)
        # the .idx beside the .rec by the C library's rule (recio_index_path, through _index_of)
        self.idx = os.fsdecode(recio._fspath(idx, "RecordMapDataset: idx")) if idx is not None else _index_of(self.rec)
        if not recio._is_file(self.idx):
            raise ValueError("RecordMapDataset: %s has no index %s: make it with 'recio index %s', or give idx="
                             % (self.rec, self.idx, self.rec))
        all_keys, all_offsets = recio._load_index(self.idx)
        order = self._select(all_keys, keys)
        self.keys, self.offsets = all_keys[order], all_offsets[order]
        if not len(self.keys):
            raise ValueError("RecordMapDataset: keys=%r: no record of %s has such a key" % (keys, self.idx))
        self.transform = _transform(transform)
        self.seed = recio._c_int(seed, "RecordMapDataset: seed", ctypes.c_uint64)
        self.epoch = recio._c_int(epoch, "RecordMapDataset: epoch", ctypes.c_uint64)
        self.channels = recio._c_int(channels, "RecordMapDataset: channels", ctypes.c_int)
        if self.channels not in (0, 1, 3, 4):
            raise ValueError("RecordMapDataset: channels: 1, 3, 4 or 0 (as stored), not %d" % self.channels)
        self.fast = bool(fast)
        self.label_width = recio._c_int(label_width, "RecordMapDataset: label_width", ctypes.c_int)
        if self.label_width < 1:
            raise ValueError("RecordMapDataset: label_width: at least 1, not %d" % self.label_width)
        self.label_pad_value, self.label_dtype = float(label_pad_value), label_dtype
        self._reader = recio.Reader(self.rec, mmap=mmap, buffer_size=recio._random_read_buffer(self.rec, len(all_keys)))
        self.threads = recio._c_int(threads, "RecordMapDataset: threads", ctypes.c_int)
        self._pool, self._pool_pid = None, None

    @staticmethod
    def _select(all_keys: np.ndarray, keys: Any) -> np.ndarray:
        """Positions in the .idx of the records keys= names, in the dataset's order."""
        if keys is None:
            return np.arange(len(all_keys))
        if isinstance(keys, (range, tuple)):
            b, e = key_range(keys, "RecordMapDataset: keys")
            at = np.nonzero((all_keys >= np.uint64(b)) & (all_keys < np.uint64(e)))[0]
            return at[np.argsort(all_keys[at], kind="stable")]
        want = np.asarray(keys)
        if want.ndim != 1 or want.dtype.kind not in "iu":
            raise TypeError("RecordMapDataset: keys: (begin, end), a range, or a list / 1-D integer array of keys, not %s "
                            "(a float array such as a header's label: give a tuple or a range of ints)"
                            % (type(keys).__name__ if want.dtype.kind not in "iuf" else "a %s array" % want.dtype))
        if (want < 0).any():
            raise ValueError("RecordMapDataset: keys: negative key %d" % int(want[want < 0][0]))
        want = want.astype(np.uint64)
        by_key = np.argsort(all_keys, kind="stable")
        at = np.searchsorted(all_keys[by_key], want)
        found = (at < len(all_keys)) & (all_keys[by_key][np.minimum(at, len(all_keys) - 1)] == want)
        if not found.all():
            raise KeyError("RecordMapDataset: key %d is not in the index" % int(want[~found][0]))
        return by_key[at]

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose seeds the next items use (in DataLoader workers from the next epoch's start,
        as they get the dataset anew then; with persistent_workers=True they keep the old one)."""
        self.epoch = recio._c_int(epoch, "RecordMapDataset.set_epoch: epoch", ctypes.c_uint64)

    def __len__(self) -> int:
        """The number of records (keys) in the dataset."""
        return len(self.keys)

    def __getitem__(self, i: Any) -> tuple:
        """(image tensor, label tensor) of record i (negative i counts from the end); for a list (or
        1-D array) of positions, (images, labels) of all of them stacked, made in place (what a
        DataLoader with batch_size=None and a BatchSampler asks for: see the class docstring)."""
        if isinstance(i, (list, tuple, np.ndarray, torch.Tensor)):
            return self._batch(i)
        i = self._position(i)
        t = self.transform._enter()
        try:
            image, label = self._item(t, i)
        finally:
            self.transform._leave()
        return torch.from_numpy(image), self._labels([label])[0]

    def __getitems__(self, positions: list) -> list:
        """[ds[i] for i in positions], made as one batch: what DataLoader(ds, batch_size=B) asks a
        worker for. Each image is decoded straight into its row of one tensor, and the items are
        views of it that torch's default_collate gives back as that tensor (no stack, no copy; in a
        worker, in shared memory the worker reuses). Items of different shapes come one by one, for
        a collate_fn of your own."""
        try:
            images, labels = self._batch(positions)
        except _Ragged:
            return [self[i] for i in positions]
        return [(_Row.of(images, k), _Row.of(labels, k)) for k in range(images.shape[0])]

    def _position(self, i: Any) -> int:
        try:
            i = operator.index(i)
        except TypeError:
            raise TypeError("RecordMapDataset: an index is an integer, not %r" % (i,)) from None
        n = len(self.keys)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("RecordMapDataset: index %d out of range (%d records)" % (i, n))
        return i

    def _batch(self, positions: Any) -> tuple:
        """Items at positions into one (B, ...) tensor: each decoded straight into its row (in a
        DataLoader worker the tensor is in shared memory, so it travels without another copy). An item
        whose shape differs from the first's raises _Ragged, a ValueError."""
        pos = [self._position(p) for p in (positions.tolist() if hasattr(positions, "tolist") else positions)]
        if not pos:
            raise IndexError("RecordMapDataset: an empty list of positions")
        t = self.transform._enter()  # once for the batch: every row runs on the same C chain
        try:
            first, label = self._item(t, pos[0])
            out = self._rows((len(pos),) + first.shape, first.dtype)
            rows = out.numpy()
            rows[0] = first

            def row(k: int) -> Any:
                r = rows[k]
                got, lab = self._item(t, pos[k], into=r)
                if got is not r:  # the chain's output did not have the first item's shape
                    raise _Ragged("RecordMapDataset: %s: offset %d: item %d is %s, item %d %s: a batch needs one "
                                     "shape (end the chain with a fixed-size crop or resize)"
                                     % (self.rec, int(self.offsets[pos[k]]), pos[k], tuple(got.shape), pos[0],
                                        tuple(first.shape)))
                return lab
            rest = range(1, len(pos))
            labels = [label] + (list(self._threads().map(row, rest)) if self.threads > 1 else [row(k) for k in rest])
        finally:
            self.transform._leave()
        labels = self._labels(labels)
        if torch.utils.data.get_worker_info() is not None:  # a worker's: sent by value, not new shared memory
            labels = labels.as_subclass(_ByValue)
        return out, labels

    @staticmethod
    def _rows(shape: tuple, dtype: Any) -> torch.Tensor:
        """A batch's tensor. In a DataLoader worker, shared memory the worker reuses (recio/_shared.py:
        the main process maps it once and says when a batch is let go); elsewhere NumPy's allocation:
        malloc reuses the last batch's memory (torch.empty faults in fresh pages)."""
        if torch.utils.data.get_worker_info() is not None:
            return _shared.worker_batch(shape, _torch_dtype(dtype))
        return torch.from_numpy(np.empty(shape, dtype=dtype))

    def _threads(self) -> Any:
        """This process's thread pool for threads= (the C decode runs without the GIL)."""
        if self._pool is None or self._pool_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor
            self._pool, self._pool_pid = ThreadPoolExecutor(self.threads), os.getpid()
        return self._pool

    def __getstate__(self) -> dict:
        """Everything but this process's thread pool (another process makes its own)."""
        d = dict(self.__dict__)
        d["_pool"], d["_pool_pid"] = None, None
        return d

    def _item(self, t: Any, i: int, into: Any = None) -> tuple:
        """(image array, label values) of position i, run on the C chain t (between the transform's
        _enter and _leave); into: the array to decode into when it fits. The IRecord points into the
        payload: everything is read from it before the payload goes."""
        off = int(self.offsets[i])
        payload = self._reader.read_at(off)
        ir = L.IRecord()
        if L.lib.recio_irecord_unpack(byref(ir), payload, len(payload)) != L.OK:
            raise recio.CorruptError("%s: offset %d: record of %d bytes is too short for its image header"
                                     % (self.rec, off, len(payload)), L.ERR_CORRUPT)
        if not ir.image_size:
            raise recio.DecodeError("%s: offset %d: key %d: empty image (0 bytes): not an image record (insightface's "
                                    "record 0 and identity records: give keys=)" % (self.rec, off, int(self.keys[i])),
                                    L.ERR_DECODE)
        try:  # the chain on the record's image, read where it lies in the payload (no copy)
            image = self.transform._apply_buf(t, ir.image, ir.image_size, L.lib.recio_seed_for(self.seed, self.epoch, i),
                                              self.channels, self.fast, into)
        except recio.Error as err:  # the chain's words, with the file and the record's offset
            raise type(err)("%s: offset %d: %s" % (self.rec, off, err.message), err.code) from None
        return image, self._label(ir)

    def _label(self, ir: Any) -> Any:
        """The record's label: a float (label_width 1), else label_width float32 values, padded."""
        if self.label_width == 1:
            if ir.flag > 0:
                return float(np.frombuffer(ctypes.string_at(ir.labels, 4), dtype="<f4")[0])
            return float(ir.label)
        if ir.flag > 0:
            labels = np.frombuffer(ctypes.string_at(ir.labels, 4 * ir.flag), dtype="<f4")
        else:
            labels = np.array([ir.label], dtype=np.float32)
        out = np.full(self.label_width, self.label_pad_value, dtype=np.float32)
        k = min(len(labels), self.label_width)
        out[:k] = labels[:k]
        return out

    def _labels(self, values: list) -> torch.Tensor:
        """_label's values of a batch as one tensor of label_dtype ((B,) or (B, label_width)), made at
        once rather than a tensor per item and a stack."""
        if self.label_width == 1:
            return torch.tensor(values, dtype=self.label_dtype)
        return torch.tensor(np.stack(values), dtype=self.label_dtype)

    def __repr__(self) -> str:
        return "recio.torch.RecordMapDataset(%r, %d records, transform=%r)" % (self.rec, len(self), self.transform.spec)


_IMAGENET = ((123.68, 116.28, 103.53), (58.395, 57.12, 57.375))  # normalize(imagenet)'s, on 0..255


class Normalize:
    """uint8 images (B, H, W, 3), or one (H, W, 3), to float32 (B, 3, H, W) / (3, H, W) holding
    (pixel - mean[c]) / std[c]: what `normalize(mean, std) chw` at the end of a recio chain gives, bit
    for bit (float32 subtraction, then division, as x.float().sub_(mean).div_(std) computes too).
    mean and std are three numbers each, on the pixels' 0..255 scale (torchvision's Normalize takes
    them on 0..1: multiply by 255); mean="imagenet" (std None) is normalize(imagenet)'s.

    It is the second half of docs/python.md's quarter-bytes form ("Fast batches" 3): RecordMapDataset
    workers make uint8 HWC batches (a chain ending before normalize and chw) and the main process
    normalises each batch in one C pass per image (recio's SIMD normalize kernel,
    reading the uint8 pixels once and writing each float once), in place of the three passes of
    torch's float(), sub_ and div_. out: a float32 (B, 3, H, W) contiguous CPU tensor to write into;
    by default a new one each call (a batch you still hold is never overwritten). The C calls run
    without the GIL. Pickles by its numbers (DataLoader workers, spawn)."""

    def __init__(self, mean: Union[str, Any] = "imagenet", std: Any = None) -> None:
        if isinstance(mean, str):
            if mean != "imagenet" or std is not None:
                raise ValueError("Normalize: mean: three numbers (with std), or 'imagenet' alone, not %r" % (mean,))
            mean, std = _IMAGENET
        self.mean, self.std = self._three(mean, "mean"), self._three(std, "std")
        if not all(s > 0 for s in self.std):
            raise ValueError("Normalize: std: three positive numbers, not %r" % (self.std,))
        # each number as the float32 it becomes, written so that the spec parser reads that float back
        nums = ",".join(repr(float(v)) for v in self.mean + self.std)
        self.transform = recio.Transform("normalize(%s) chw" % nums)

    @staticmethod
    def _three(v: Any, name: str) -> tuple:
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("Normalize: %s: three numbers, not %r" % (name, v)) from None
        if a.shape != (3,) or not np.isfinite(a).all():
            raise ValueError("Normalize: %s: three finite numbers (one per channel), not %r" % (name, v))
        return tuple(float(x) for x in a.astype(np.float32))

    def __call__(self, images: Any, out: Optional[torch.Tensor] = None) -> torch.Tensor:
        """images (a uint8 tensor or NumPy array, (B, H, W, 3) or (H, W, 3)) normalised into out, or
        into a new float32 tensor: (B, 3, H, W) or (3, H, W)."""
        x = torch.from_numpy(images) if isinstance(images, np.ndarray) else images
        if not isinstance(x, torch.Tensor):
            raise TypeError("Normalize: images: a uint8 tensor or array, not %s" % type(images).__name__)
        if x.dtype != torch.uint8 or x.dim() not in (3, 4) or x.shape[-1] != 3 or x.device.type != "cpu":
            raise ValueError("Normalize: images: uint8 (B, H, W, 3) or (H, W, 3) on the CPU (a recio chain ending "
                             "before normalize and chw), not %s %s on %s" % (x.dtype, tuple(x.shape), x.device))
        one = x.dim() == 3
        x = x.contiguous().view((1,) + tuple(x.shape) if one else tuple(x.shape))
        b, h, w = x.shape[0], x.shape[1], x.shape[2]
        shape = (3, h, w) if one else (b, 3, h, w)
        if out is None:  # NumPy's allocation: malloc reuses freed memory (no new pages to fault in)
            out = torch.from_numpy(np.empty(shape, dtype=np.float32))
        elif (not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or out.device.type != "cpu"
              or tuple(out.shape) != shape or not out.is_contiguous()):
            raise ValueError("Normalize: out: a contiguous float32 CPU tensor of shape %s, not %s"
                             % (shape, _describe(out)))
        self._run(x, out, b, h, w)
        return out

    def _run(self, x: torch.Tensor, out: torch.Tensor, b: int, h: int, w: int) -> None:
        """One recio_transform_apply_desc per image, over the two tensors' memory (no copy)."""
        src = L.Image(width=w, height=h, channels=3, dtype=L.U8, layout=L.HWC, stride=w * 3)
        dst = L.Image(width=w, height=h, channels=3, dtype=L.F32, layout=L.CHW, stride=w * 4)
        msg, d = ctypes.create_string_buffer(L.ERRMSG_SIZE), L.ApplyDesc()
        d.image, d.out, d.errmsg = ctypes.pointer(src), ctypes.pointer(dst), ctypes.cast(msg, ctypes.c_void_p)
        at, to, step, ostep = x.data_ptr(), out.data_ptr(), h * w * 3, h * w * 3 * 4
        apply, pd = L.lib.recio_transform_apply_desc, byref(d)
        t = self.transform._enter()
        try:
            for i in range(b):
                src.data, dst.data = at + i * step, to + i * ostep
                e = apply(t, pd)
                if e != L.OK:
                    raise recio._error(e, b"Normalize: image %d of %d: " % (i, b) + msg.value)
        finally:
            self.transform._leave()

    def __repr__(self) -> str:
        return "recio.torch.Normalize(mean=%r, std=%r)" % (self.mean, self.std)


def _describe(t: Any) -> str:
    if isinstance(t, torch.Tensor):
        return "%s %s on %s%s" % (t.dtype, tuple(t.shape), t.device, "" if t.is_contiguous() else " (not contiguous)")
    return type(t).__name__


def _transform(transform: Any) -> "recio.Transform":
    """A recio.Transform from a spec, a Transform, or None (decode only)."""
    if transform is None:
        return recio.Transform("")
    if isinstance(transform, str):
        return recio.Transform(transform)
    if isinstance(transform, recio.Transform):
        return transform
    raise TypeError("RecordMapDataset: transform: a recio transform spec or a recio.Transform (run in C), not %s; "
                    "apply Python transforms to the tensors the dataset returns" % type(transform).__name__)
