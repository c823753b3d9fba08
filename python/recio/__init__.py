"""recio from Python: MXNet's ImageRecordIter, transforms and RecordIO files on the recio C library.

    import recio
    it = recio.ImageRecordIter(path_imgrec="train.rec", data_shape=(3, 224, 224), batch_size=32,
                               random_resized_crop=True, rand_mirror=True, shuffle=True,
                               mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375)
    for batch in it:                    # one epoch; iterate again (or it.reset()) for the next
        batch.data, batch.label         # NumPy: (32, 3, 224, 224) float32 (a view of recio's buffer), (32,)

    t = recio.Transform("resize_short(256) center_crop(224) normalize(imagenet) chw")
    x = t(open("cat.jpg", "rb").read(), seed=0)   # what `recio apply --spec ... --seed 0` writes raw

Pure Python over ctypes (librecio.so from RECIO_LIBRARY, the build tree, or make install's lib dir);
NumPy is the only dependency. See docs/python.md.
"""
from __future__ import annotations

import atexit
import ctypes
import operator
import os
import struct
import sys
import threading
import types
import warnings
import weakref
from collections import namedtuple
from ctypes import POINTER, byref, c_float, c_int, c_size_t, c_uint, c_uint32, c_uint64, c_void_p
from typing import Any, Iterator, Optional, Union

from . import _lib as L
from ._mxnet import MXNET_DEFAULTS, UNSUPPORTED, key_range, translate

np = L.numpy()  # records need no NumPy; arrays say what to install when it is missing

__all__ = ["ImageRecordIter", "Batch", "Transform", "Reader", "Writer", "Split", "split", "pack", "unpack", "IRHeader",
           "Error", "ArgError", "FileError", "CorruptError", "DecodeError", "checksum", "library_path",
           "MXNET_DEFAULTS", "UNSUPPORTED", "translate"]

library_path = L.path
__version__ = L.__version__  # recio.h's RECIO_VERSION_MAJOR.MINOR.0


# ---- errors ---------------------------------------------------------------------------------------

class Error(Exception):
    """A recio error. str(e) is the library's message ("train.rec: offset 96: bad magic ..."); e.code is
    the recio_err value."""

    def __init__(self, message: str, code: Optional[int] = None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class ArgError(Error, ValueError):
    """Bad argument or transform spec (RECIO_ERR_ARG, RECIO_ERR_SPEC)."""


class FileError(Error, OSError):
    """A file could not be opened, read or written (RECIO_ERR_IO)."""


class CorruptError(Error):
    """Malformed RecordIO data, index or image record header (RECIO_ERR_CORRUPT, _FORMAT, _TOO_BIG)."""


class DecodeError(Error):
    """An image that cannot be decoded (RECIO_ERR_DECODE)."""


_ERRORS = {L.ERR_ARG: ArgError, L.ERR_SPEC: ArgError, L.ERR_IO: FileError, L.ERR_CORRUPT: CorruptError,
           L.ERR_FORMAT: CorruptError, L.ERR_TOO_BIG: CorruptError, L.ERR_DECODE: DecodeError}


def _error(code, msg):
    msg = msg.decode(errors="replace") if isinstance(msg, bytes) else (msg or "")
    if not msg:
        msg = L.strerror(code)
    if code == L.ERR_NOMEM:
        return MemoryError(msg)
    return _ERRORS.get(code, Error)(msg, code)


def _c_int(value: Any, name: str, ctype: Any) -> int:
    """value as a Python int that fits the C type it is passed as (ctypes wraps what does not fit:
    num_parts=2**32+2 would become 2, key=-1 would become 2**64-1), or raise naming the parameter.
    Integral floats (2.0) are accepted, as int() took them before; anything else is a TypeError."""
    try:
        v = operator.index(value)
    except TypeError:
        try:
            v = int(value)
        except (TypeError, ValueError):
            v = None
        if v is None or v != value:
            raise TypeError("%s: an integer, not %r" % (name, value)) from None
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value == -1
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not lo <= v <= hi:
        raise ArgError("%s: %d is out of range (%d to %d)" % (name, v, lo, hi), L.ERR_ARG)
    return v


def _fspath(value: Any, name: str) -> Any:
    """os.fspath(value), or a TypeError naming the parameter."""
    try:
        return os.fspath(value)
    except TypeError:
        raise TypeError("%s: a path (str, bytes or os.PathLike), not %r" % (name, value)) from None


def _stat(path: Union[str, bytes, os.PathLike], name: str = "path") -> tuple:
    """(kind, size) of what is at path, by the filesystem that serves it in the C library's table,
    as the C calls see it: a local file, s3://BUCKET/KEY or an http(s):// URL alike (os.path knows
    only the first). kind is "file", "dir", "other" or None (nothing there); size is the file's
    bytes (0 for the rest). Raises FileError ("PATH: offset 0: what is there: why") when it cannot
    tell: a network failure, a permission, a scheme no filesystem serves."""
    p = _fspath(path, name)
    e, kind, size, why = L.stat(L.cstr(p))
    if e != L.OK:
        why = (why or L.strerror(e).encode()).decode(errors="replace")
        raise FileError("%s: offset 0: what is there: %s" % (os.fsdecode(p), why), e)
    return {L.FS_FILE: "file", L.FS_DIR: "dir", L.FS_OTHER: "other"}.get(kind), int(size) if kind == L.FS_FILE else 0


def _is_file(path: Union[str, bytes, os.PathLike]) -> bool:
    """A file is at path (local or remote; see _stat)."""
    return _stat(path)[0] == "file"


# Every live handle, so that a forked child can give each a fresh lock (a lock another thread of the
# parent held at the fork would stay held in the child for ever).
_HANDLES: "weakref.WeakSet[_Handle]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for h in list(_HANDLES):
        h._new_locks()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Handle:
    """A Python handle over one C object (docs/python.md, "Threads and processes").

    Threads: ctypes releases the GIL during a call, so two threads could be inside one C object at
    once. Calls hold the handle's lock (an RLock) for their whole length, so they run one at a time;
    a handle whose C object allows concurrent calls (Transform: _shared) instead counts the calls in
    progress. close() refuses new calls, waits for those in progress, then frees; later calls raise
    ValueError("... is closed").

    Processes: the C object belongs to the process that opened it (os.getpid() is kept). In another
    process (a fork, or an unpickled copy) the first call opens a new one from the options (_open);
    the parent's object is never called there, only dropped: an iterator's worker threads exist only
    in the parent, so closing its copy in the child would wait for threads that are not there (a
    hang), and freeing a structure another parent thread was using at the fork is not safe either.
    The copy leaks in the child (its memory is the parent's, copied on write). A pickle carries the
    options (_state), never the pointer."""

    _h: Any = None          # the C object, or None (closed, or not opened in this process yet)
    _closed = False         # close() was called: every use raises
    _shared = False         # the C object takes concurrent calls (then calls are counted, not serialised)

    def _init_handle(self) -> None:
        self._h, self._pid, self._closed = None, os.getpid(), False
        self._new_locks()
        _HANDLES.add(self)

    def _new_locks(self) -> None:
        self._mu = threading.RLock()
        self._idle = threading.Condition(self._mu)
        self._busy = 0

    def _name(self) -> str:
        return "recio.%s" % type(self).__name__

    def _live(self) -> Any:
        """The C object of this process; call with self._mu held. Raises ValueError after close()."""
        if self._closed:
            raise ValueError("%s is closed" % self._name())
        if self._h is not None and self._pid != os.getpid():
            self._h = None  # the parent's: dropped, never called (see the class docstring)
        if self._h is None:
            self._h = self._open()
            self._pid = os.getpid()
        return self._h

    def _enter(self) -> Any:
        """For a _shared handle: count a call in and return the C object (_leave when done)."""
        with self._mu:
            h = self._live()
            self._busy += 1
            return h

    def _leave(self) -> None:
        with self._mu:
            self._busy -= 1
            if not self._busy:
                self._idle.notify_all()

    def _open(self) -> Any:
        raise NotImplementedError

    def _free(self, h: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Free the C object: new calls raise ValueError, calls in progress on other threads finish
        first. Closing twice is harmless."""
        if "_mu" not in self.__dict__:
            return  # __init__ failed before anything was opened
        self._closed = True  # from here every call raises, so a busy caller cannot keep close waiting
        with self._mu:
            while self._busy:
                self._idle.wait()
            h, self._h = self._h, None
            if h is not None and self._pid == os.getpid():
                self._free(h)

    @property
    def closed(self) -> bool:
        """True after close()."""
        return self._closed

    def _state(self) -> dict:
        raise NotImplementedError

    def __getstate__(self) -> dict:
        """The options to open it again (the pointer and the locks stay behind)."""
        return dict(self._state(), _closed=self._closed)

    def __setstate__(self, state: dict) -> None:
        self._init_handle()
        self.__dict__.update(state)  # opened on first use (_live)

    def __enter__(self) -> Any:
        """The handle itself; the with block's end closes it."""
        return self

    def __exit__(self, *exc: Any) -> None:
        """close()."""
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # at interpreter exit the library may be gone already
            pass


# ---- NumPy views of C memory ----------------------------------------------------------------------

class _View:
    """Holds an __array_interface__ over C memory and a reference to its owner, which NumPy keeps alive
    as the array's base."""
    __slots__ = ("__array_interface__", "owner")

    def __init__(self, ptr, shape, typestr, owner):
        self.__array_interface__ = {"data": (ptr, False), "shape": shape, "typestr": typestr, "version": 3}
        self.owner = owner


_TYPESTR = dict(L.TYPESTR)


def _view(ptr, shape, typestr, owner):
    """A NumPy array over C memory; typestr as NumPy's array interface spells it ("<f4")."""
    return np.asarray(_View(ptr, shape, typestr, owner))


def checksum(array: Any) -> int:
    """recio_checksum of an array's bytes (little-endian elements of its dtype's size: 1, 2 or 4)."""
    a = np.ascontiguousarray(array)
    return int(L.lib.recio_checksum(a.ctypes.data, a.nbytes, a.dtype.itemsize))


def _fold(sums):
    """FNV-1a 64 over 64-bit item checksums as little-endian bytes: recio_batch_checksum."""
    b = np.ascontiguousarray(sums, dtype="<u8")
    return int(L.lib.recio_fnv1a64(L.FNV1A_INIT, b.ctypes.data, b.nbytes))


# ---- ImageRecordIter ------------------------------------------------------------------------------

class Batch:
    """One batch. data: (batch, C, H, W) (HWC items: (batch, H, W, C)); label: (batch,) floats, or
    (batch, label_width); pad: padding items at the end (they repeat the epoch's first records);
    index: the image-header ids (uint64); keys: recio's record keys; epoch, number: where it is;
    label_counts: the labels each record really has (more than label_width: cut; fewer: the rest is
    label_pad_value); objects: with label_pad_width (detection), each record's objects (with a chain,
    those it kept: the boxes in label move with the pixels), else None; mask: with masks=True,
    (batch, H, W) uint8 label masks moved with the pixels, else None; soft_label, lam, mix: with
    mixup_alpha/cutmix_alpha, (batch, num_classes) mixed one-hot labels, this batch's lam and how it
    was mixed (0 not, 1 MixUp, 2 CutMix), else None, 1.0, 0; skipped: with skip_bad, the records of
    this batch left out because their image does not decode (the places they leave are padding).
    Unless the iterator was made with copy=True the arrays are views of recio's buffer, valid until
    the iterator's next batch (take .copy() of what you keep)."""
    __slots__ = ("data", "label", "pad", "index", "keys", "count", "epoch", "number", "_sums", "label_counts", "objects",
                 "mask", "soft_label", "lam", "mix", "skipped")

    def __init__(self, data: Any, label: Any, pad: int, index: Any, keys: Any, count: int, epoch: int, number: int,
                 sums: Any, label_counts: Any = None, objects: Any = None, mask: Any = None, soft_label: Any = None,
                 lam: float = 1.0, mix: int = 0, skipped: int = 0) -> None:
        """The fields above (ImageRecordIter makes batches; see the class docstring)."""
        self.skipped = skipped
        self.data, self.label, self.pad, self.index, self.keys = data, label, pad, index, keys
        self.count, self.epoch, self.number, self._sums = count, epoch, number, sums
        self.label_counts, self.objects, self.mask = label_counts, objects, mask
        self.soft_label, self.lam, self.mix = soft_label, lam, mix

    def checksum(self, fast: bool = False) -> int:
        """What `recio iter` prints for this batch: FNV-1a 64 of the bytes of its count + pad items
        (elements little-endian), recio_batch_checksum; with fast, what `recio iter --checksum fast`
        prints: FNV-1a 64 over recio_checksum of each item (recio_batch_checksum with RECIO_SUM_ITEMS)."""
        n = self.count + self.pad
        if fast:
            if self._sums is not None:
                return _fold(self._sums[:n])
            return _fold([checksum(self.data[i]) for i in range(n)])
        items = np.ascontiguousarray(self.data[:n])
        if items.dtype.byteorder == ">" or (items.dtype.byteorder == "=" and sys.byteorder == "big"):
            items = items.astype(items.dtype.newbyteorder("<"))
        return int(L.lib.recio_fnv1a64(L.FNV1A_INIT, items.ctypes.data, items.nbytes))

    def __repr__(self):
        return "<recio.Batch epoch %d #%d: data %s %s, count %d, pad %d>" % (
            self.epoch, self.number, self.data.dtype, tuple(self.data.shape), self.count, self.pad)


class ImageRecordIter(_Handle):
    """MXNet's ImageRecordIter on recio's C iterator: the same parameter names (see docs/python.md for
    each one), plus recio's own: spec= (a whole transform chain instead of the augmentation options),
    layout='NCHW'|'NHWC', last_batch='pad'|'discard'|'roll_over', workers= (threads; 0 = on the
    calling thread), shuffle_buffer=N (streaming shuffle, no .idx), equalise=True (every part the same
    number of records; equalize='pad'|'drop'), rotate_shards=True, copy=True (batches own their arrays),
    checksums=True (item checksums made by the workers, for Batch.checksum), epoch=E (start at epoch E),
    use_mmap=True, label_strict=True (more labels than label_width raise), ImageDetRecordIter's
    label_pad_width=N / label_pad_value=V (detection labels; Batch.objects counts each record's objects),
    masks=True (segmentation records: Batch.mask, moved with the pixels; mask_fill=255 for uncovered areas),
    mixup_alpha=A / cutmix_alpha=A / mix_prob=P / num_classes=N (timm's batch MixUp/CutMix: Batch.soft_label),
    cache_bytes=N (keep decoded images in N bytes of memory for the next epochs; cache_stats()),
    skip_bad=True (leave out records whose image does not decode, as `recio iter --skip-bad`: their
    places become padding, Batch.skipped and skipped() count them), keys=(begin, end) or
    range(begin, end) (only the records whose .idx key is in [begin, end): insightface's files give
    keys=header.label of record 0) and directories=True (a directory in path_imgrec means every .rec
    in it; by default a directory is refused, as MXNet reads one file).

    Iterate for one epoch of batches; iterating again starts the next epoch (so does reset(), as in
    MXNet). A record that cannot be read raises recio.Error with "FILE: offset N: what", and ends the
    epoch: iterating again starts the next one.

    Threads: calls run one at a time (a second thread waits); close() waits for a call in progress.
    Processes: a forked child, or an unpickled copy, opens its own iterator from the options on first
    use, at the start of the epoch the original was in (never touching the original's threads)."""

    def __init__(self, **kwargs: Any) -> None:
        self._init_handle()
        self._kwargs = kwargs
        self._opt = translate(**kwargs)
        self._len = None
        self._item = None  # (C, H, W) or (H, W, C) of one item, once known
        self._spec_next = None  # set_spec(): the spec of the next epoch, until a reset takes it
        self._fresh, self._ended, self._batch, self._epoch = True, False, None, self._opt["epoch"]
        with self._mu:
            self._live()
        opt = self._opt
        if opt["own_spec"] and opt["shape"]:  # data_shape beside spec=: the chain must make that shape
            item = self._item_shape()
            c, h, w = opt["shape"]
            if item not in ((c, h, w), (h, w, c)):
                self.close()
                raise ValueError("ImageRecordIter: data_shape: the spec makes items of shape %s, not %s"
                                 % (item, opt["shape"]))
        if opt["verbose"]:
            print("recio.ImageRecordIter: %s, spec '%s', batch %d, %d worker threads"
                  % (opt["uris"], opt["spec"], opt["batch"], opt["workers"]), file=sys.stderr)

    def _desc(self) -> Any:
        """The recio_iter_desc of the options (_DESC: sub-desc by sub-desc), every integer checked
        against its C field."""
        opt, d = self._opt, L.IterDesc()
        if opt["cache_bytes"] < 0:
            raise ValueError("ImageRecordIter: cache_bytes must be 0 (off) or a budget in bytes, not %d" % opt["cache_bytes"])
        self._keep = []  # the C side keeps the strings' pointers: hold the bytes
        for sub, rows in _DESC:
            dst = getattr(d, sub) if sub else d
            types = dict(dst._fields_)
            for field, key, name in rows:
                v = key(self) if callable(key) else opt[key]
                if types[field] is ctypes.c_char_p:
                    v = L.cstr(v) if v else None
                    self._keep.append(v)
                elif types[field] is c_float:
                    v = float(v)
                elif types[field] is c_int:
                    v = int(v)
                else:
                    v = _c_int(v, "ImageRecordIter: " + (name(self) if callable(name) else name or key), types[field])
                setattr(dst, field, v)
        return d

    def _open(self) -> Any:
        """A C iterator at the start of epoch self._epoch (the first open, or again in a new process)."""
        epoch = _c_int(self._epoch, "ImageRecordIter: epoch", c_uint64)
        d = self._desc()
        it = c_void_p()
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, c_void_p)
        e = L.lib.recio_iter_open(byref(it), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        self._b = L.Batch()
        self._fresh, self._ended, self._batch = True, False, None
        for _ in range(epoch):  # C starts at epoch 0; each reset is the next epoch's order and seeds
            e = L.lib.recio_iter_reset(it)
            if e != L.OK:
                err = _error(e, L.lib.recio_iter_errmsg(it))
                L.lib.recio_iter_close(it)
                raise err
        if self._spec_next is not None:  # set_spec before a fork or pickling: the next epoch's again
            self._set_spec_c(it, self._spec_next)
        return it

    def _free(self, h: Any) -> None:
        L.lib.recio_iter_close(h)

    def _state(self) -> dict:
        return {"_kwargs": self._kwargs, "_opt": self._opt, "_len": self._len, "_item": self._item,
                "_epoch": self._epoch, "_fresh": True, "_ended": False, "_batch": None, "_spec_next": self._spec_next}

    # -- MXNet DataIter interface --
    @property
    def batch_size(self) -> int:
        """Items per batch (MXNet's batch_size)."""
        return self._opt["batch"]

    @property
    def spec(self) -> str:
        """The recio transform chain the options became."""
        return self._opt["spec"]

    @property
    def provide_data(self) -> list:
        """MXNet's [(data_name, (batch, C, H, W))] (or (batch, H, W, C) with layout='NHWC')."""
        return [(self._opt["data_name"], (self._opt["batch"],) + self._item_shape())]

    @property
    def provide_label(self) -> list:
        """MXNet's [(label_name, (batch,))], or (batch, label_width) with several labels."""
        lw = self._opt["label_width"]
        return [(self._opt["label_name"], (self._opt["batch"],) if lw == 1 else (self._opt["batch"], lw))]

    def _item_shape(self) -> tuple:
        with self._mu:
            self._live()
            if self._item is None:  # the C iterator fixed it from the dataset's first record
                i = self._info().item
                self._item = (i.channels, i.height, i.width) if i.layout == L.CHW else (i.height, i.width, i.channels)
            return self._item

    def _info(self) -> Any:
        """recio_iter_stats of the open iterator (the caller holds the lock)."""
        info = L.IterInfo()
        L.lib.recio_iter_stats(self._live(), byref(info))
        return info

    def __iter__(self) -> "ImageRecordIter":
        """The iterator itself, moved to the next epoch when the last one ended (or failed)."""
        if self._ended:
            self.reset()
        return self

    def __next__(self) -> "Batch":
        """next()."""
        return self.next()

    def next(self) -> "Batch":
        """The next batch of this epoch; StopIteration at its end. An error ends the epoch: after it
        next() raises it again, and iterating again (or reset()) starts the next epoch."""
        with self._mu:
            it = self._live()
            b = self._b
            e = L.lib.recio_iter_next(it, byref(b))
            if e == L.OK:
                self._fresh = False
                return self._wrap(b)
            self._ended, self._batch = True, None
            if e == L.END:
                raise StopIteration
            raise _error(e, L.lib.recio_iter_errmsg(it))

    def _wrap(self, b: Any) -> "Batch":
        """The Batch of NumPy views (or copies) over the C batch b."""
        n = b.batch
        if n != self._opt["batch"] or b.label_width != self._opt["label_width"]:  # fields after `item`
            raise Error("%s does not match this binding's recio_batch layout (batch %d, label_width %d read back): "
                        "use the recio.h this package came with" % (L.path, n, b.label_width))
        item = b.item
        if item.layout == L.CHW:
            shape = (n, item.channels, item.height, item.width)
        else:
            shape = (n, item.height, item.width, item.channels)
        data = _view(b.data, shape, _TYPESTR[item.dtype], self)
        lw = b.label_width
        label = _view(b.labels, (n,) if lw == 1 else (n, lw), "<f4", self)
        ids = _view(b.ids, (n,), "<u8", self)
        keys = _view(b.keys, (n,), "<u8", self)
        sums = _view(b.sums, (n,), "<u8", self) if b.sums else None
        counts = _view(b.label_counts, (n,), "<u4", self)
        objects = _view(b.objects, (n,), "<u4", self) if b.objects else None
        mask = _view(b.masks, (n, item.height, item.width), "|u1", self) if b.masks else None
        soft = _view(b.soft_labels, (n, self._opt["num_classes"]), "<f4", self) if b.soft_labels else None
        if self._opt["copy"]:
            data, label, ids, keys = data.copy(), label.copy(), ids.copy(), keys.copy()
            sums = sums.copy() if sums is not None else None
            counts = counts.copy()
            objects = objects.copy() if objects is not None else None
            mask = mask.copy() if mask is not None else None
            soft = soft.copy() if soft is not None else None
        batch = Batch(data, label, b.pad, ids, keys, b.count, b.epoch, b.index, sums, counts, objects, mask, soft, b.lam, b.mix,
                      b.skipped)
        self._batch = batch
        return batch

    def iter_next(self) -> bool:
        """MXNet's iter_next(): advance, True while there is a batch (then see getdata() etc.)."""
        try:
            self.next()
            return True
        except StopIteration:
            return False

    def _current(self) -> "Batch":
        """The batch next() last gave (MXNet's getdata() and friends read it)."""
        with self._mu:
            self._live()
            if self._batch is None:
                raise ValueError("%s: no current batch (call iter_next() or next() first)" % self._name())
            return self._batch

    def getdata(self) -> np.ndarray:
        """The current batch's data (after iter_next() or next())."""
        return self._current().data

    def getlabel(self) -> np.ndarray:
        """The current batch's labels."""
        return self._current().label

    def getpad(self) -> int:
        """Padding items at the end of the current batch."""
        return self._current().pad

    def getindex(self) -> np.ndarray:
        """The current batch's image-header ids."""
        return self._current().index

    def _advance(self) -> None:
        with self._mu:
            it = self._live()
            e = L.lib.recio_iter_reset(it)
            if e != L.OK:
                raise _error(e, L.lib.recio_iter_errmsg(it))
            self._fresh, self._ended, self._batch = True, False, None
            self._epoch += 1
            if self._spec_next is not None:  # the reset took it: the items have its shape now
                self._opt = dict(self._opt, spec=self._spec_next)
                self._spec_next, self._item, self._len = None, None, None

    def reset(self) -> None:
        """Start the next epoch (new shuffle, new random augmentation). Resetting before any batch of
        the current epoch was taken keeps it, so MXNet's `it.reset()` at the top of each epoch and
        plain `for batch in it` loops give the same epochs."""
        with self._mu:
            self._live()
            if not self._fresh or self._ended:
                self._advance()

    @property
    def epoch(self) -> int:
        """The epoch the next batch comes from."""
        return self._epoch

    def __len__(self) -> int:
        """Batches per epoch of this part (needs the .idx files for a cheap count; without them the part
        is read once). With last_batch='roll_over', later epochs may have one batch more."""
        with self._mu:
            self._live()
            if self._len is None:
                n = self._info().batches
                self._len = int(n) if n != L.SPLIT_UNKNOWN else _batches(self._opt)  # byte mode: C did not count
            return self._len

    # -- checkpoints --
    def _save(self) -> bytes:
        with self._mu:
            it = self._live()
            size = c_size_t()
            e = L.lib.recio_iter_save(it, None, 0, byref(size))
            if e != L.OK:
                raise _error(e, L.lib.recio_iter_errmsg(it))
            buf = ctypes.create_string_buffer(size.value)
            e = L.lib.recio_iter_save(it, buf, size.value, byref(size))
            if e != L.OK:
                raise _error(e, L.lib.recio_iter_errmsg(it))
            return buf.raw[:size.value]

    def state_dict(self) -> dict:
        """The position (recio_iter_save): load_state_dict on an iterator made with the same options
        continues with exactly the batches this one would give next."""
        with self._mu:
            return {"recio_iter": self._save(), "epoch": self._epoch, "fresh": self._fresh, "ended": self._ended}

    def load_state_dict(self, state: dict) -> None:
        """Continue where state_dict() was taken (an iterator made with the same options). A state
        that is not such a dict is refused before the iterator moves."""
        missing = [k for k in ("recio_iter", "epoch", "fresh", "ended") if k not in state]
        if missing:
            raise ValueError("%s.load_state_dict: the state lacks %s (give what state_dict() returned)"
                             % (self._name(), ", ".join(repr(k) for k in missing)))
        blob = bytes(state["recio_iter"])
        fresh, ended = bool(state["fresh"]), bool(state["ended"])
        epoch = _c_int(state["epoch"], "%s.load_state_dict: epoch" % self._name(), c_uint64)
        with self._mu:
            it = self._live()
            e = L.lib.recio_iter_restore(it, blob, len(blob))
            if e != L.OK:
                raise _error(e, L.lib.recio_iter_errmsg(it))
            self._fresh, self._ended, self._batch, self._epoch = fresh, ended, None, epoch

    def set_spec(self, spec: str) -> None:
        """A new transform chain from the next epoch on (progressive resizing): the epoch under way
        keeps its items' shape, the next reset() (or iterating again after the epoch's end) switches
        to the new one. A spec that does not parse raises recio.Error naming the column and changes
        nothing; None cancels a pending one. A spec that cannot run on the dataset's first record is
        refused by the reset, which then starts the next epoch with the old spec. A state_dict()
        holds the spec in force: load it into an iterator made with that spec."""
        raw = None if spec is None else str(spec)
        with self._mu:
            self._set_spec_c(self._live(), raw)
            self._spec_next = raw

    @staticmethod
    def _set_spec_c(it: Any, spec: Optional[str]) -> None:
        e = L.lib.recio_iter_set_spec(it, None if spec is None else spec.encode())
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(it))

    def skipped(self) -> tuple:
        """With skip_bad=True: (count, first) where count is how many records were left out so far
        over every epoch (once per epoch each is read in) and first the first few distinct ones as
        "FILE: offset N: why" strings."""
        with self._mu:
            info = self._info()
            bad = ["%s: offset %d: %s" % (os.fsdecode(info.bad[i].file), info.bad[i].offset,
                                          info.bad[i].what.decode(errors="replace")) for i in range(info.nbad)]
        return int(info.skipped), bad

    def cache_stats(self) -> dict:
        """The decoded-image cache (cache_bytes=): a dict of mode ('off', 'items' or 'prefix'),
        prefix_ops, records, bytes, hits, misses and why (when off although cache_bytes was given)."""
        with self._mu:
            ci = self._info().cache
        return {"mode": ("off", "items", "prefix")[ci.mode], "prefix_ops": ci.prefix_ops, "records": ci.records,
                "bytes": ci.bytes, "hits": ci.hits, "misses": ci.misses, "why": ci.why.decode()}

    def close(self) -> None:
        """Stop the threads and free the buffers (after a next() in progress on another thread
        returns); arrays of batches not copied become invalid, later calls raise ValueError."""
        super().close()


def _workers_name(it: "ImageRecordIter") -> str:
    return "workers" if "workers" in it._kwargs else "preprocess_threads"


def _label_width_name(it: "ImageRecordIter") -> str:
    return "label_pad_width" if it._opt["label_detection"] else "label_width"


# recio_iter_desc, sub-desc by sub-desc (None: its top level): (C field, translate()'s option or a
# function of the iterator, the parameter an error names). A new C option is one row here.
_DESC = (
    (None, (("uris", "uris", None), ("rank", "rank", "part_index"), ("nsplit", "nsplit", "num_parts"),
            ("rotate_shards", "rotate_shards", None))),
    ("source", (("mode", lambda it: L.SPLIT_INDEX if it._opt["index"] else L.SPLIT_BYTES, None),
                ("index_path", "index_path", None), ("shuffle", "shuffle", None), ("seed", "seed", "seed"),
                ("chunk_records", "chunk_records", "shuffle_chunk_size (in records)"),
                ("window_chunks", lambda it: 1 if it._opt["chunk_records"] else 0, "shuffle_chunk_size"),
                ("equalize", "equalize", None), ("use_mmap", "use_mmap", None),
                ("key_begin", "key_begin", "keys"), ("key_end", "key_end", "keys"))),
    ("item", (("spec", "spec", None), ("channels", "channels", None), ("mean_img", "mean_img", None),
              ("mean_scale", "mean_scale", None), ("seed_aug", "seed_aug", "seed_aug"))),
    ("labels", (("width", "label_width", _label_width_name), ("pad_set", lambda it: 1, None),
                ("pad_value", "label_pad_value", None), ("strict", "label_strict", None),
                ("detection", "label_detection", None), ("masks", "masks", None), ("mask_fill", "mask_fill", None),
                ("imglist", "path_imglist", None))),
    ("mix", (("mixup_alpha", "mixup_alpha", None), ("cutmix_alpha", "cutmix_alpha", None), ("prob", "mix_prob", None),
             ("num_classes", "num_classes", "num_classes"))),
    ("run", (("batch", "batch", "batch_size"), ("last_batch", "last_batch", None), ("workers", "workers", _workers_name),
             ("prefetch", "prefetch", "prefetch_buffer"), ("shuffle_buffer", "shuffle_buffer", "shuffle_buffer"),
             ("checksums", "checksums", None), ("skip_bad", "skip_bad", None), ("cache_bytes", "cache_bytes", "cache_bytes"))),
)


def _batches(opt: dict) -> int:
    """Batches per epoch of the part opt describes (translate()'s options)."""
    n = _count_records(opt)
    b = opt["batch"]
    return -(-n // b) if opt["last_batch"] == 0 else n // b


def _count_records(opt):
    """Records per epoch of the iterator's part."""
    sd = L.SplitDesc()
    sd.mode = L.SPLIT_INDEX if opt["index"] else L.SPLIT_BYTES
    sd.equalize = opt["equalize"]
    sd.key_begin, sd.key_end = opt["key_begin"], opt["key_end"]
    idx = L.cstr(opt["index_path"]) if opt["index_path"] else None
    sd.index_path = idx
    s = Split(opt["uris"], opt["rank"], opt["nsplit"], _desc=sd)
    try:
        n = s.count
        if n is not None:
            return n
        n = s._count_by_index()
        if n is not None:
            return n
        return sum(1 for _ in s)  # no .idx: read the part once
    finally:
        s.close()


# ---- Transform ------------------------------------------------------------------------------------

class Transform(_Handle):
    """A recio transform chain (docs/image.md): t(image, seed=0) runs it on encoded bytes (JPEG, PNG,
    ...; decoded with the channels as stored, or `channels`) or on a uint8 HWC array, and returns a new
    NumPy array: (C, H, W) after `chw`, else (H, W, C). The result equals what
    `recio apply --spec SPEC --seed S IN OUT` writes raw. fast=True lets libjpeg-turbo decode JPEGs at
    a reduced DCT scale where the chain shrinks them (as the iterator does; pixels then differ a little
    from a full decode). A Transform may be called from several threads at once.

    Detection and segmentation: t(image, seed, boxes=B, mask=M, mask_fill=255) moves boxes and/or a
    label mask with the image, as recio_transform_apply_desc does (docs/image.md, "Boxes and masks"),
    and returns a tuple (image, boxes, mask), None for what was not given. B: (N, 5 or more) floats,
    class, xmin, ymin, xmax, ymax normalised to the input (0..1), extra columns carried along; the
    result holds the kept objects, in order, normalised to the output; a box that is not one (NaN or
    infinite values, xmin > xmax or ymin > ymax) raises ArgError naming it. M: a uint8 (H, W) array
    of the input's size, or the bytes of an 8-bit grey PNG or of a palette PNG whose indices are the
    labels (other kinds raise DecodeError, as recio_decode_desc.mask); the result is uint8 (H', W'), moved by
    nearest neighbour, mask_fill (default 255) where the geometry uncovers. The image is the one
    t(image, seed) gives, except after random_bbox_crop/_cover, whose draw reads the boxes.

    Threads: calls run at once (the C chain is read-only while it runs); close() waits for calls in
    progress. A forked child or an unpickled copy parses the spec again on first use."""
    _shared = True

    def __init__(self, spec: str) -> None:
        if not isinstance(spec, str):
            raise TypeError("Transform: spec: a transform spec string such as 'resize_short(256) center_crop(224)', "
                            "not %r" % (spec,))
        self._init_handle()
        self.spec = spec
        with self._mu:
            self._live()

    def _open(self) -> Any:
        t = c_void_p()
        msg, d = ctypes.create_string_buffer(L.ERRMSG_SIZE), L.TransformDesc()
        d.errmsg = ctypes.cast(msg, c_void_p)
        e = L.lib.recio_transform_parse_desc(byref(t), L.cstr(self.spec), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        return t

    def _free(self, h: Any) -> None:
        L.lib.recio_transform_free(h)

    def _state(self) -> dict:
        return {"spec": self.spec}

    def output_shape(self, width: int, height: int, channels: int = 3) -> Optional[tuple]:
        """(shape, dtype name) of the output for an input of that size, the shape as NumPy gives it,
        or None when it depends on the seed or the input cannot fit the chain."""
        args = [_c_int(v, "Transform.output_shape: " + n, c_int)
                for v, n in ((width, "width"), (height, "height"), (channels, "channels"))]
        t = self._enter()
        try:
            return self._shape(t, *args)
        finally:
            self._leave()

    @staticmethod
    def _shape(t: Any, w: int, h: int, c: int) -> Optional[tuple]:
        i = L.TransformInfo()
        if L.lib.recio_transform_query(t, w, h, c, byref(i)) != L.OK:
            return None
        s = i.shape
        return ((s.channels, s.height, s.width) if s.layout == L.CHW else (s.height, s.width, s.channels)), L.DTYPES[s.dtype]

    def _wrap_out(self, t: Any, w: int, h: int, c: int, into: Any = None) -> tuple:
        """A NumPy output and an Image wrapped over it when the shape is known before running; into: a
        C-contiguous array to write into instead, used when it has that shape and dtype."""
        shp = self._shape(t, w, h, c)
        if shp is None:
            return None, L.Image()
        shape, dt = shp
        if into is not None and tuple(into.shape) == shape and into.dtype == np.dtype(dt) and into.flags.c_contiguous:
            arr = into
        else:
            arr = np.empty(shape, dtype=dt)
        i = L.TransformInfo()
        L.lib.recio_transform_query(t, w, h, c, byref(i))
        s = i.shape
        s.data = arr.ctypes.data
        return arr, s

    def __call__(self, image: Union[bytes, bytearray, memoryview, np.ndarray, str, os.PathLike], seed: int = 0,
                 channels: int = 0, fast: bool = False, boxes: Any = None, mask: Any = None, mask_fill: int = 255) -> Any:
        """The chain run on image (encoded bytes, the path of an image file, or a uint8 (H, W) / (H, W, C)
        array) with this seed: a new array; with boxes= or mask=, the tuple (image, boxes, mask) (see
        the class docstring)."""
        seed = _c_int(seed, "Transform: seed", c_uint64)
        channels = _c_int(channels, "Transform: channels", c_int)
        if isinstance(image, (str, os.PathLike)):
            with open(image, "rb") as f:  # a path: its bytes (a str is never image data)
                image = f.read()
        elif not isinstance(image, (bytes, bytearray, memoryview, np.ndarray)):
            raise TypeError("Transform: image: encoded bytes, a path, or a uint8 array, not %s" % type(image).__name__)
        t = self._enter()
        try:
            if boxes is not None or mask is not None:
                return self._apply_targets(t, image, seed, channels, fast, boxes, mask, mask_fill)
            if isinstance(image, np.ndarray):
                return self._apply_array(t, image, seed)
            return self._apply_encoded(t, image, seed, channels, fast)
        finally:
            self._leave()

    def _apply_encoded(self, t: Any, image: Any, seed: int, channels: int, fast: bool) -> np.ndarray:
        buf = bytes(image) if not isinstance(image, bytes) else image
        return self._apply_buf(t, buf, len(buf), seed, channels, fast)

    def _apply_buf(self, t: Any, buf: Any, n: int, seed: int, channels: int, fast: bool, into: Any = None) -> np.ndarray:
        """The chain on n encoded bytes at buf (bytes, or the address of memory the caller keeps
        alive: a record's image inside its payload, with no copy); call between _enter and _leave.
        into: an array the result is written into when it has the result's shape and dtype (the
        returned array is then into itself; the caller compares)."""
        w, h, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        arr, out = None, L.Image()
        if L.lib.recio_image_info(buf, n, byref(w), byref(h), byref(c)) == L.OK:
            ch = channels or (4 if c.value == 2 else c.value)
            arr, out = self._wrap_out(t, w.value, h.value, ch, into)
        d, msg = L.ApplyDesc(), ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.bytes = buf if isinstance(buf, int) else ctypes.cast(ctypes.c_char_p(buf), c_void_p)
        d.size, d.channels, d.full_scale = n, channels, 0 if fast else 1
        d.out, d.seed, d.errmsg = ctypes.pointer(out), seed, ctypes.cast(msg, c_void_p)
        e = L.lib.recio_transform_apply_desc(t, byref(d))
        return self._finish(e, msg.value, arr, out)

    @staticmethod
    def _u8_image(image):
        """(array kept alive, recio_image over it, w, h, c) for a uint8 (H, W) or (H, W, C) array."""
        a = np.ascontiguousarray(image)
        if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (1, 3, 4)):
            raise ArgError("Transform: an image array is uint8 (H, W) or (H, W, C) with C 1, 3 or 4, not %s %s"
                           % (a.dtype, a.shape), L.ERR_ARG)
        h, w = a.shape[:2]
        c = a.shape[2] if a.ndim == 3 else 1
        return a, L.Image(width=w, height=h, channels=c, dtype=L.U8, layout=L.HWC, stride=w * c, data=a.ctypes.data), w, h, c

    def _apply_array(self, t, image, seed):
        a, src, w, h, c = self._u8_image(image)
        arr, out = self._wrap_out(t, w, h, c)
        d, msg = L.ApplyDesc(), ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.image, d.out, d.seed, d.errmsg = ctypes.pointer(src), ctypes.pointer(out), seed, ctypes.cast(msg, c_void_p)
        e = L.lib.recio_transform_apply_desc(t, byref(d))  # the op's own words on failure
        return self._finish(e, msg.value, arr, out)

    @staticmethod
    def _mask_image(mask):
        """The mask as a u8 one-channel Image over a NumPy array (returned too, to keep it alive)."""
        if isinstance(mask, (bytes, bytearray, memoryview)):
            mask = _mask_labels(bytes(mask))
        m = np.ascontiguousarray(mask)
        if m.ndim == 3 and m.shape[2] == 1:
            m = m[:, :, 0].copy()
        if m.dtype != np.uint8 or m.ndim != 2:
            raise ArgError("Transform: a mask is uint8 (H, W), not %s %s" % (m.dtype, m.shape), L.ERR_ARG)
        img = L.Image(width=m.shape[1], height=m.shape[0], channels=1, dtype=L.U8, layout=L.HWC, stride=m.shape[1],
                      data=m.ctypes.data)
        return m, img

    def _apply_targets(self, t, image, seed, channels, fast, boxes, mask, mask_fill):
        """The image with boxes and/or a mask riding along (recio_transform_apply_desc)."""
        d, keep = L.ApplyDesc(), []
        kept, bx, bout, mout = ctypes.c_int(0), None, None, L.Image()
        if boxes is not None:
            bx = np.ascontiguousarray(boxes, dtype=np.float32)
            if bx.size == 0:
                bx = bx.reshape(0, bx.shape[-1] if bx.ndim == 2 else 5)
            if bx.ndim != 2 or bx.shape[1] < 5:
                raise ArgError("Transform: boxes are (N, 5 or more): class, xmin, ymin, xmax, ymax, ...; not %s"
                               % (bx.shape,), L.ERR_ARG)
            why = ctypes.create_string_buffer(L.ERRMSG_SIZE)
            e = L.lib.recio_boxes_check(bx.ctypes.data_as(POINTER(c_float)), bx.shape[0], bx.shape[1], None, why)
            if e != L.OK:
                raise _error(e, b"Transform: boxes: " + why.value)
            bout = np.zeros((max(bx.shape[0], 1), bx.shape[1]), dtype=np.float32)
            d.boxes, d.count, d.stride = bx.ctypes.data_as(POINTER(c_float)), bx.shape[0], bx.shape[1]
            d.boxes_out, d.count_out = bout.ctypes.data_as(POINTER(c_float)), ctypes.pointer(kept)
        if mask is not None:
            m, mimg = self._mask_image(mask)
            keep += [m, mimg]
            d.mask, d.mask_out = ctypes.pointer(mimg), ctypes.pointer(mout)
            if not 0 <= int(mask_fill) <= 255:
                raise ArgError("Transform: mask_fill is a label 0..255", L.ERR_ARG)
            d.mask_fill = L.MASK_FILL_ZERO if int(mask_fill) == 0 else int(mask_fill)
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.seed, d.errmsg = seed, ctypes.cast(msg, c_void_p)
        if isinstance(image, np.ndarray):
            a, src, w, h, c = self._u8_image(image)
            arr, out = self._wrap_out(t, w, h, c)
            d.image, d.out = ctypes.pointer(src), ctypes.pointer(out)
            e = L.lib.recio_transform_apply_desc(t, byref(d))
        else:
            buf = bytes(image) if not isinstance(image, bytes) else image
            w, h, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            arr, out = None, L.Image()
            if L.lib.recio_image_info(buf, len(buf), byref(w), byref(h), byref(c)) == L.OK:
                arr, out = self._wrap_out(t, w.value, h.value, channels or (4 if c.value == 2 else c.value))
            d.bytes, d.size = ctypes.cast(ctypes.c_char_p(buf), c_void_p), len(buf)
            d.channels, d.full_scale, d.out = int(channels), 0 if fast else 1, ctypes.pointer(out)
            e = L.lib.recio_transform_apply_desc(t, byref(d))
        try:
            img = self._finish(e, msg.value, arr, out)
            mk = None
            if mask is not None:
                raw = ctypes.string_at(mout.data, mout.stride * mout.height)
                mk = np.frombuffer(raw, dtype=np.uint8).reshape(mout.height, mout.stride)[:, :mout.width].copy()
        finally:
            if mask is not None:
                L.lib.recio_image_free(byref(mout))
        return img, (bout[:kept.value].copy() if bx is not None else None), mk

    def _finish(self, e, msg, arr, out):
        if e != L.OK:
            if arr is None:
                L.lib.recio_image_free(byref(out))
            raise _error(e, msg)
        if arr is not None:
            return arr
        try:  # the shape depended on the seed: recio allocated the result; copy it out
            chw = out.layout == L.CHW
            shape = (out.channels, out.height, out.width) if chw else (out.height, out.width, out.channels)
            # stride is per row of a plane (CHW: channels x height rows of width) or of pixels (HWC:
            # height rows of width x channels); counting HWC rows as height x width read past the data
            rows = out.channels * out.height if chw else out.height
            rowbytes = (out.width if chw else out.width * out.channels) * L.ELEM_SIZE[out.dtype]
            raw = ctypes.string_at(out.data, out.stride * rows)
            a = np.frombuffer(raw, dtype=np.uint8).reshape(rows, out.stride)[:, :rowbytes]
            return np.ascontiguousarray(a).view(L.DTYPES[out.dtype]).reshape(shape)
        finally:
            L.lib.recio_image_free(byref(out))

    def __repr__(self) -> str:
        return "recio.Transform(%r)" % self.spec


# ---- records --------------------------------------------------------------------------------------

class Reader(_Handle):
    """Records of one RecordIO file, in order: iterate for the payloads (bytes); .offset is the byte
    offset of the last record's header. mmap=True maps the file; buffer_size=N reads through a buffer
    of N bytes (default 1 MiB: for read_at on records of a few KB a buffer of about two records saves
    reading a whole MiB each time).

    The reader keeps its own position: a forked child (a DataLoader worker) or an unpickled copy
    opens the file again on first use and continues where this reader was, so seek+read in several
    processes never share a file offset. Calls from several threads run one at a time."""

    def __init__(self, path: Union[str, bytes, os.PathLike], mmap: bool = False, buffer_size: int = 0) -> None:
        path = _fspath(path, "Reader: path")
        self._buffer = _c_int(buffer_size, "Reader: buffer_size", c_size_t)
        self._init_handle()
        self.path, self._mmap, self._pos, self.offset = path, bool(mmap), 0, None
        self._rec = L.Record()
        with self._mu:
            self._live()

    def _open(self) -> Any:
        d = L.ReaderDesc()
        d.use_mmap, d.buffer_size = 1 if self._mmap else 0, self.__dict__.get("_buffer", 0)
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, c_void_p)
        r = c_void_p()
        e = L.lib.recio_reader_open_desc(byref(r), L.cstr(self.path), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        if self._pos:
            e = L.lib.recio_reader_seek(r, self._pos)
            if e != L.OK:
                err = _error(e, L.lib.recio_reader_errmsg(r))
                L.lib.recio_reader_close(r)
                raise err
        return r

    def _free(self, h: Any) -> None:
        L.lib.recio_reader_close(h)

    def _state(self) -> dict:
        return {"path": self.path, "_mmap": self._mmap, "_pos": self._pos, "offset": self.offset, "_rec": None,
                "_buffer": self.__dict__.get("_buffer", 0)}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._rec = L.Record()

    def read(self) -> Optional[bytes]:
        """The next record's payload, or None at the end of the file."""
        with self._mu:
            r = self._live()
            e = L.lib.recio_reader_next(r, byref(self._rec))
            if e == L.END:
                return None
            if e != L.OK:
                raise _error(e, L.lib.recio_reader_errmsg(r))
            self._pos = L.lib.recio_reader_tell(r)
            self.offset = self._rec.offset
            return ctypes.string_at(self._rec.data, self._rec.size) if self._rec.size else b""

    def read_at(self, offset: int) -> bytes:
        """The payload of the record whose header is at offset (from a .idx), in one call: seek and
        read cannot be split by another thread's seek. Reading goes on after that record."""
        offset = _c_int(offset, "Reader.read_at: offset", c_uint64)
        with self._mu:
            r = self._live()
            e = L.lib.recio_reader_seek(r, offset)
            if e == L.OK:
                e = L.lib.recio_reader_next(r, byref(self._rec))
            if e == L.END:
                raise CorruptError("%s: offset %d: no record here (past the end of the file)" % (self.path, offset), L.ERR_CORRUPT)
            if e != L.OK:
                raise _error(e, L.lib.recio_reader_errmsg(r))
            self._pos = L.lib.recio_reader_tell(r)
            self.offset = self._rec.offset
            return ctypes.string_at(self._rec.data, self._rec.size) if self._rec.size else b""

    def __iter__(self) -> Iterator[bytes]:
        """The payloads from the current position to the end of the file."""
        while True:
            p = self.read()
            if p is None:
                return
            yield p

    def seek(self, offset: int) -> None:
        """Continue at a record head (an offset from a .idx, or a previous .offset)."""
        offset = _c_int(offset, "Reader.seek: offset", c_uint64)
        with self._mu:
            r = self._live()
            e = L.lib.recio_reader_seek(r, offset)
            if e != L.OK:
                raise _error(e, L.lib.recio_reader_errmsg(r))
            self._pos = offset

    def tell(self) -> int:
        """Offset of the next record head."""
        with self._mu:
            return L.lib.recio_reader_tell(self._live())


# Writers not closed yet, finished at interpreter exit (module teardown may come before __del__).
_WRITERS: "weakref.WeakSet[Writer]" = weakref.WeakSet()


class Writer(_Handle):
    """Write a RecordIO file: write(payload[, key]); index=PATH (or True for PATH.idx beside it... as
    FILE.rec -> FILE.idx) also writes MXNet's .idx; atomic=True writes FILE.tmp and renames it on a
    clean close. As a context manager an exception aborts (an atomic writer then leaves FILE alone).

    A Writer that is garbage-collected (or still open at interpreter exit) without close() finishes
    the file as close() does, as a Python file flushes, and warns (ResourceWarning). It belongs to the
    process that opened it: a forked child or an unpickled copy cannot write (opening PATH again
    would truncate what the owner writes) and never touches the owner's file."""

    def __init__(self, path: Union[str, bytes, os.PathLike], index: Union[None, bool, str, os.PathLike] = None,
                 atomic: bool = False) -> None:
        path = _fspath(path, "Writer: path")
        if index is not None and index is not True and index is not False:
            index = _fspath(index, "Writer: index")
        self._init_handle()
        self.path = path
        if index is True:
            from ._mxnet import _index_of  # the C library's one rule for the .idx beside a .rec
            index = _index_of(self.path)
        self._index = L.cstr(index) if index else None
        self._atomic, self._opened = bool(atomic), False
        with self._mu:
            self._live()
        _WRITERS.add(self)

    def _open(self) -> Any:
        if self._opened:
            raise RuntimeError("recio.Writer(%r) belongs to process %d (this is %d): a forked or unpickled Writer "
                               "cannot write (opening the file again would truncate it); write from one process"
                               % (self.path, self._owner, os.getpid()))
        d = L.WriterDesc()
        d.index_path, d.atomic = self._index, 1 if self._atomic else 0
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, c_void_p)
        w = c_void_p()
        e = L.lib.recio_writer_open_desc(byref(w), L.cstr(self.path), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        self._opened, self._owner = True, os.getpid()
        return w

    def _state(self) -> dict:
        return {"path": self.path, "_index": self._index, "_atomic": self._atomic, "_opened": True,
                "_owner": self._owner}

    def write(self, payload: Union[bytes, bytearray, memoryview], key: Optional[int] = None) -> None:
        """Append one record (key: its .idx key; default the record's ordinal)."""
        b = bytes(payload) if not isinstance(payload, (bytes, bytearray)) else payload
        if key is not None:
            key = _c_int(key, "Writer.write: key", c_uint64)
        with self._mu:
            w = self._live()
            if key is None:
                e = L.lib.recio_writer_write(w, bytes(b), len(b))
            else:  # a batch of one record that carries its key
                item = L.WriterItem(ctypes.cast(ctypes.c_char_p(bytes(b)), c_void_p), len(b), key)
                e = L.lib.recio_writer_write_batch(w, byref(item), 1)
            if e != L.OK:
                raise _error(e, L.lib.recio_writer_errmsg(w))

    def tell(self) -> int:
        """Offset the next record will have."""
        with self._mu:
            return L.lib.recio_writer_tell(self._live())

    def _free(self, h: Any) -> None:
        e = L.lib.recio_writer_finish(h)
        msg = L.lib.recio_writer_errmsg(h)
        err = _error(e, msg) if e != L.OK else None
        L.lib.recio_writer_close(h)
        if err is not None:
            raise err

    def close(self) -> None:
        """Finish the file (flush, the .idx, the rename of an atomic writer) and free the handle;
        raises the first write error. In a process that does not own it: only drops it."""
        _WRITERS.discard(self)
        super().close()

    def abort(self) -> None:
        """Give up: close without finishing (an atomic writer leaves PATH as it was)."""
        if "_mu" not in self.__dict__:
            return
        _WRITERS.discard(self)
        self._closed = True
        with self._mu:
            h, self._h = self._h, None
            if h is not None and self._pid == os.getpid():
                L.lib.recio_writer_abort(h)

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        """close() after a clean block; abort() when an exception leaves it."""
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def _collect(self) -> None:
        """Garbage collection or interpreter exit without close(): finish, as a file flushes."""
        if self._h is not None and not self._closed and self._pid == os.getpid():
            warnings.warn("%r was not closed: finished it" % self, ResourceWarning, source=self)
            self.close()

    def __del__(self) -> None:
        if "_mu" in self.__dict__:
            self._collect()  # a failure to finish is printed by Python ("Exception ignored in ...")

    def __repr__(self) -> str:
        return "recio.Writer(%r)" % self.path


def _parameter_list() -> str:
    """ImageRecordIter's keyword arguments with their defaults, for its docstring (help() lists them:
    the constructor takes **kwargs to report unknown names as MXNet does)."""
    from ._mxnet import RECIO_OPTIONS
    def names(d):
        out, line = [], "   "
        for k, v in d.items():
            item = " %s=%r," % (k, v)
            if len(line) + len(item) > 100:
                out.append(line)
                line = "   "
            line += item
        return "\n".join(out + [line.rstrip(",")])
    return ("\n\n    MXNet's parameters (defaults as MXNet's; UNSUPPORTED lists those recio refuses when changed):\n"
            + names(MXNET_DEFAULTS) + "\n\n    recio's own:\n" + names(RECIO_OPTIONS))


ImageRecordIter.__doc__ += _parameter_list()


@atexit.register
def _finish_writers() -> None:
    for w in list(_WRITERS):
        w._collect()


IRHeader = namedtuple("IRHeader", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = "MXNet's image record header (mx.recordio.IRHeader): label is a float, or an array when flag > 0."


def unpack(payload: Any) -> "tuple[IRHeader, bytes]":
    """An image record payload -> (IRHeader, the bytes after the header and labels), as
    mx.recordio.unpack: whole, a segmentation record's mask tail included (unpack_mask splits it off)."""
    b = bytes(payload)
    p = ctypes.c_char_p(b)  # the address the C side parses, to find where its image starts
    ir = L.IRecord()
    e = L.lib.recio_irecord_unpack(byref(ir), p, len(b))
    if e != L.OK:
        raise _error(e, "record of %d bytes is too short for its image header" % len(b))
    label = np.frombuffer(ctypes.string_at(ir.labels, 4 * ir.flag), dtype="<f4").astype(np.float32) if ir.flag > 0 \
        else float(ir.label)
    return IRHeader(ir.flag, label, ir.id, ir.id2), b[ir.image - ctypes.cast(p, c_void_p).value:]


def unpack_mask(payload: Any) -> "tuple[IRHeader, bytes, Optional[bytes]]":
    """An image record payload -> (IRHeader, encoded image bytes, the label mask's PNG bytes or None):
    a segmentation record carries its mask after the image (recio.h section 3; recio pack --mask-root)."""
    b = bytes(payload)
    ir = L.IRecord()
    e = L.lib.recio_irecord_unpack(byref(ir), b, len(b))
    if e != L.OK:
        raise _error(e, "record of %d bytes is too short for its image header" % len(b))
    if ir.flag > 0:
        label = np.frombuffer(ctypes.string_at(ir.labels, 4 * ir.flag), dtype="<f4").astype(np.float32)
    else:
        label = float(ir.label)
    image = ctypes.string_at(ir.image, ir.image_size) if ir.image_size else b""
    mask = ctypes.string_at(ir.mask, ir.mask_size) if ir.mask else None
    return IRHeader(ir.flag, label, ir.id, ir.id2), image, mask


def _mask_labels(buf):
    """A mask's PNG bytes -> its labels, uint8 (H, W), by recio_decode_desc.mask's rule: an 8-bit grey PNG,
    or a palette PNG whose indices are the labels; any other kind raises DecodeError naming it."""
    e, dec, msg = L.decode_desc(bytes(buf), mask=True)
    if e != L.OK:
        raise _error(e, msg)
    try:
        raw = ctypes.string_at(dec.data, dec.stride * dec.height)
        return np.frombuffer(raw, dtype=np.uint8).reshape(dec.height, dec.stride)[:, :dec.width].copy()
    finally:
        L.lib.recio_image_free(byref(dec))


def pack(header: Any, image: Any, mask: Optional[bytes] = None) -> bytes:
    """IRHeader + encoded image bytes -> a record payload, as mx.recordio.pack: a scalar label goes in
    the header (flag 0), an array of labels after it (flag = their count; the header label is 0).
    mask: the bytes of a label mask PNG, stored after the image with its 8-byte tail (a segmentation
    record, as recio pack --mask-root writes): an 8-bit grey PNG, or a palette PNG whose indices are
    the labels (VOC's masks); any other kind raises DecodeError naming it (recio_decode_desc.mask)."""
    tail = b""
    if mask is not None:
        mask = bytes(mask)
        _mask_labels(mask)
        t = ctypes.create_string_buffer(8)
        if L.lib.recio_irecord_mask_tail(t, len(mask)) != 8:
            raise ValueError("pack: a mask of %d bytes does not fit a 32-bit length" % len(mask))
        tail = mask + t.raw
    return _pack_header(header.label, np.ndim(header.label) == 0, header.id, header.id2, "pack") + bytes(image) + tail


def _pack_header(label, number, id, id2, who):
    """The image record header and its labels, as C writes them (recio_irecord_pack_header): a number
    label in the header (flag 0); an array after it (flag = its size, one label too: MXNet's pack())."""
    ids = []
    for name, v in (("id", id), ("id2", id2)):
        v = operator.index(v)
        if not 0 <= v < 1 << 64:
            raise struct.error("%s: %s %d is not in 0..2^64-1" % (who, name, v))
        ids.append(v)
    if number:
        lab, n = (ctypes.c_float * 1)(float(label)), 1
    else:
        arr = L.numpy().ascontiguousarray(label, dtype="float32").ravel()
        lab, n = arr.ctypes.data_as(POINTER(ctypes.c_float)), arr.size | L.LABEL_ARRAY
    buf = ctypes.create_string_buffer(L.lib.recio_irecord_pack_header(None, lab, n, ids[0], ids[1]))
    L.lib.recio_irecord_pack_header(buf, lab, n, ids[0], ids[1])
    return buf.raw


Where = namedtuple("Where", ["path", "ordinal", "offset", "key", "seq"])
Where.__doc__ = ("Where a split's record came from: its file, ordinal in that file (None when unknown), offset of "
                 "its header in the file, key (global offset), seq (0, 1, ... in this epoch)")


# The recio_split_desc fields a Split keeps to open itself again (the rest stay zero: defaults).
_SPLIT_FIELDS = ("mode", "index_path", "shuffle", "seed", "epoch", "chunk_records", "window_chunks", "equalize",
                 "ordinals", "use_mmap", "buffer_size", "key_begin", "key_end")


class Split(_Handle):
    """Part `rank` of `nsplit` of the RecordIO files in uris ('a.rec;b.rec', a list, wildcards,
    directories), cut exactly as dmlc-core's InputSplit does (index=True: by record count from each
    .idx; shuffle=True: a seeded order per epoch; keys=(begin, end) or range(begin, end): only the
    records whose .idx key is in [begin, end), index mode). Iterate for payloads; items() gives
    (Where, bytes).

    Calls from several threads run one at a time. A forked child or an unpickled copy opens the part
    again on first use, at the start of the epoch this split was in."""

    def __init__(self, uris: Union[str, os.PathLike, list, tuple], rank: int = 0, nsplit: int = 1, index: bool = False,
                 shuffle: bool = False, seed: int = 0, epoch: int = 0, keys: Any = None, _desc: Any = None) -> None:
        if isinstance(uris, (list, tuple)):
            uris = ";".join(_fspath(u, "Split: uris") for u in uris)
        uris = _fspath(uris, "Split: uris")
        self._init_handle()
        self.uris = uris
        self._rank = _c_int(rank, "Split: rank", c_uint)
        self._nsplit = _c_int(nsplit, "Split: nsplit", c_uint)
        if _desc is None:
            _desc = L.SplitDesc()
            _desc.mode = L.SPLIT_INDEX if index or shuffle else L.SPLIT_BYTES
            _desc.shuffle = L.SHUFFLE_FULL if shuffle else L.SHUFFLE_NONE
            _desc.seed, _desc.ordinals = _c_int(seed, "Split: seed", c_uint64), 1
            _desc.epoch = _c_int(epoch, "Split: epoch", c_uint64)
            _desc.key_begin, _desc.key_end = key_range(keys, "Split: keys")
        self._fields = {f: getattr(_desc, f) for f in _SPLIT_FIELDS}
        self._epoch = self._fields.pop("epoch")
        self._rec, self._info = L.Record(), L.SplitInfo()
        self.where = None
        with self._mu:
            self._live()

    def _open(self) -> Any:
        sd = L.SplitDesc(**self._fields)
        sd.epoch = self._epoch
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        sd.errmsg = ctypes.cast(msg, c_void_p)
        s = c_void_p()
        e = L.lib.recio_split_open_desc(byref(s), L.cstr(self.uris), self._rank, self._nsplit, byref(sd))
        if e != L.OK:
            raise _error(e, msg.value)
        return s

    def _free(self, h: Any) -> None:
        L.lib.recio_split_close(h)

    def _state(self) -> dict:
        return {"uris": self.uris, "_rank": self._rank, "_nsplit": self._nsplit, "_fields": self._fields,
                "_epoch": self._epoch, "where": None}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._rec, self._info = L.Record(), L.SplitInfo()

    def _next(self) -> Optional[bytes]:
        with self._mu:
            s = self._live()
            e = L.lib.recio_split_next(s, byref(self._rec))
            if e == L.OK:
                e = L.lib.recio_split_query(s, byref(self._info))
            if e == L.END:
                return None
            if e != L.OK:
                raise _error(e, L.lib.recio_split_errmsg(s))
            w = self._info.where
            self.where = Where(os.fsdecode(w.path), None if w.ordinal == L.SPLIT_UNKNOWN else w.ordinal,
                               self._rec.offset, w.key, w.seq)
            return ctypes.string_at(self._rec.data, self._rec.size) if self._rec.size else b""

    def __iter__(self) -> Iterator[bytes]:
        """The payloads of the part, from where the split is to the end of the epoch."""
        while True:
            p = self._next()
            if p is None:
                return
            yield p

    def items(self) -> Iterator[tuple]:
        """(Where, payload) for each record of the part."""
        while True:
            p = self._next()
            if p is None:
                return
            yield self.where, p

    def reset(self, epoch: int = 0) -> None:
        """Start epoch `epoch` from the beginning of the part (a new order when shuffled)."""
        epoch = _c_int(epoch, "Split.reset: epoch", c_uint64)
        with self._mu:
            s = self._live()
            e = L.lib.recio_split_reset(s, epoch)
            if e != L.OK:
                raise _error(e, L.lib.recio_split_errmsg(s))
            self._epoch = epoch

    @property
    def count(self) -> Optional[int]:
        """Records per epoch on this part; None when not known without reading (byte mode)."""
        n = self._query().count
        return None if n == L.SPLIT_UNKNOWN else int(n)

    def _query(self) -> Any:
        """recio_split_query: the part's bounds, count and files (the names copied out)."""
        info = L.SplitInfo()
        with self._mu:
            L.lib.recio_split_query(self._live(), byref(info))
            names = [os.fsdecode(info.files[i]) for i in range(info.nfiles)]
        return types.SimpleNamespace(begin=info.begin, end=info.end, count=info.count, names=names)

    @property
    def bounds(self) -> tuple:
        """(begin, end): the part's range of global byte offsets."""
        info = self._query()
        return int(info.begin), int(info.end)

    @property
    def files(self) -> list:
        """The files the uris named, in order."""
        return self._query().names

    def _count_by_index(self) -> Optional[int]:
        """Byte mode: the records whose head lies in the part's range, from each file's .idx (None if one
        is missing)."""
        from ._mxnet import _index_of
        begin, end = self.bounds
        base, n = 0, 0
        for f in self.files:
            size = _stat(f)[1]
            if base < end and base + size > begin:
                ix = _index_of(f)
                if not _is_file(ix):
                    return None
                g = _load_index(ix)[1].astype(np.int64) + base
                n += int(np.count_nonzero((g >= begin) & (g < end)))
            base += size
        return n


def _random_read_buffer(path: Union[str, os.PathLike], records: int) -> int:
    """A Reader buffer for reads by offset: about two records (a read after a seek fills the whole
    buffer: the default 1 MiB cost 100 us and more a record), as the shuffled split sizes its own."""
    mean = _stat(path)[1] // max(records, 1)
    return min(max(2 * mean, 4096), 1 << 20)


def _load_index(path: Union[str, os.PathLike]) -> tuple:
    """A .idx loaded by the C library (recio_index_load: its parser, its "FILE: line N: what"
    messages) as two uint64 arrays (keys, offsets), in the file's order."""
    ix, d = L.Index(), L.IndexDesc()
    msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
    d.errmsg = ctypes.cast(msg, c_void_p)
    e = L.lib.recio_index_load(byref(ix), L.cstr(_fspath(path, "index path")), byref(d))
    try:
        if e != L.OK:
            raise _error(e, msg.value or ("%s: cannot load the index" % os.fsdecode(path)).encode())
        if not ix.count:
            return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        pairs = np.ctypeslib.as_array(ctypes.cast(ix.entries, POINTER(c_uint64)), shape=(ix.count, 2)).copy()
    finally:
        L.lib.recio_index_free(byref(ix))
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def split(uris: Union[str, os.PathLike, list, tuple], rank: int = 0, nsplit: int = 1, **kw: Any) -> Split:
    """recio.Split(uris, rank, nsplit, ...): the records of one part, as `recio split` lists them."""
    return Split(uris, rank, nsplit, **kw)
