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
import ctypes
import os
import struct
import sys
from collections import namedtuple
from ctypes import POINTER, byref, c_float, c_size_t, c_uint64, c_void_p

import numpy as np

from . import _lib as L
from ._mxnet import MXNET_DEFAULTS, UNSUPPORTED, translate

__all__ = ["ImageRecordIter", "Batch", "Transform", "Reader", "Writer", "Split", "split", "pack", "unpack", "IRHeader",
           "Error", "ArgError", "FileError", "CorruptError", "DecodeError", "checksum", "library_path",
           "MXNET_DEFAULTS", "UNSUPPORTED", "translate"]

library_path = L.path


# ---- errors ---------------------------------------------------------------------------------------

class Error(Exception):
    """A recio error. str(e) is the library's message ("train.rec: offset 96: bad magic ..."); e.code is
    the recio_err value."""

    def __init__(self, message, code=None):
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


class _Closing:
    """A handle over C memory: close() at the end of a with block and when collected."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
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


_TYPESTR = {code: np.dtype(name).str for code, name in L.DTYPES.items()}


def _view(ptr, shape, typestr, owner):
    """A NumPy array over C memory; typestr as NumPy's array interface spells it ("<f4")."""
    return np.asarray(_View(ptr, shape, typestr, owner))


def checksum(array):
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
    was mixed (0 not, 1 MixUp, 2 CutMix), else None, 1.0, 0.
    Unless the iterator was made with copy=True the arrays are views of recio's buffer, valid until
    the iterator's next batch (take .copy() of what you keep)."""
    __slots__ = ("data", "label", "pad", "index", "keys", "count", "epoch", "number", "_sums", "label_counts", "objects",
                 "mask", "soft_label", "lam", "mix")

    def __init__(self, data, label, pad, index, keys, count, epoch, number, sums, label_counts=None, objects=None,
                 mask=None, soft_label=None, lam=1.0, mix=0):
        self.data, self.label, self.pad, self.index, self.keys = data, label, pad, index, keys
        self.count, self.epoch, self.number, self._sums = count, epoch, number, sums
        self.label_counts, self.objects, self.mask = label_counts, objects, mask
        self.soft_label, self.lam, self.mix = soft_label, lam, mix

    def checksum(self, fast=False):
        """What `recio iter` prints for this batch: FNV-1a 64 of the bytes of its count + pad items
        (elements little-endian), recio_batch_checksum; with fast, what `recio iter --checksum fast`
        prints: FNV-1a 64 over recio_checksum of each item (recio_batch_checksum_fast)."""
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


class ImageRecordIter(_Closing):
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
    and cache_bytes=N (keep decoded images in N bytes of memory for the next epochs; cache_stats()).

    Iterate for one epoch of batches; iterating again starts the next epoch (so does reset(), as in
    MXNet). A record that cannot be read raises recio.Error with "FILE: offset N: what"."""

    def __init__(self, **kwargs):
        opt = translate(**kwargs)
        self._opt = opt
        self._it = None
        self._len = None
        d = L.IterDesc()
        self._uris = L.cstr(opt["uris"])  # the C side keeps these pointers: hold the bytes
        self._spec = L.cstr(opt["spec"])
        d.uris, d.spec = self._uris, self._spec
        d.rank, d.nsplit, d.index, d.shuffle = opt["rank"], opt["nsplit"], int(opt["index"]), int(opt["shuffle"])
        d.equalize, d.rotate_shards, d.shuffle_buffer = opt["equalize"], int(opt["rotate_shards"]), opt["shuffle_buffer"]
        d.seed, d.seed_aug = opt["seed"] & ((1 << 64) - 1), opt["seed_aug"] & ((1 << 64) - 1)
        self._side = [L.cstr(opt[k]) if opt[k] else None for k in ("index_path", "path_imglist", "mean_img")]
        d.index_path, d.path_imglist, d.mean_img = self._side
        d.chunk_records, d.window_chunks = opt["chunk_records"], 1 if opt["chunk_records"] else 0
        d.use_mmap, d.mean_scale = int(opt["use_mmap"]), opt["mean_scale"]
        d.label_pad_set, d.label_pad_value = 1, opt["label_pad_value"]
        d.label_strict, d.label_detection = int(opt["label_strict"]), int(opt["label_detection"])
        d.masks, d.mask_fill = int(opt["masks"]), opt["mask_fill"]
        d.mixup_alpha, d.cutmix_alpha, d.mix_prob = opt["mixup_alpha"], opt["cutmix_alpha"], opt["mix_prob"]
        d.num_classes = opt["num_classes"]
        d.channels, d.label_width, d.batch = opt["channels"], opt["label_width"], opt["batch"]
        d.last_batch, d.workers, d.prefetch, d.checksums = opt["last_batch"], opt["workers"], opt["prefetch"], int(opt["checksums"])
        if opt["cache_bytes"] < 0:
            raise ValueError("ImageRecordIter: cache_bytes must be 0 (off) or a budget in bytes, not %d" % opt["cache_bytes"])
        d.cache_bytes = opt["cache_bytes"]
        self._desc = d
        it = c_void_p()
        msg = ctypes.create_string_buffer(1024)
        e = L.lib.recio_iter_open_ex(byref(it), byref(d), msg, len(msg))
        if e != L.OK:
            raise _error(e, msg.value)
        self._it = it
        self._b = L.Batch()
        self._fresh = True      # no batch taken in this epoch yet: reset() keeps the epoch
        self._ended = False
        self._batch = None
        self._copy = opt["copy"]
        self._epoch = 0
        for _ in range(opt["epoch"]):
            self._advance()
        self._item = None  # (C, H, W) or (H, W, C) of one item, once known
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

    # -- MXNet DataIter interface --
    @property
    def batch_size(self):
        return self._opt["batch"]

    @property
    def spec(self):
        """The recio transform chain the options became."""
        return self._opt["spec"]

    @property
    def provide_data(self):
        return [(self._opt["data_name"], (self._opt["batch"],) + self._item_shape())]

    @property
    def provide_label(self):
        lw = self._opt["label_width"]
        return [(self._opt["label_name"], (self._opt["batch"],) if lw == 1 else (self._opt["batch"], lw))]

    def _item_shape(self):
        if self._item is None:
            # the C iterator fixes it from the dataset's first record at open; a batch shows it, and
            # before the first one a pull-mode twin of batch 1 gives it (one decode)
            if self._batch is not None:
                self._item = tuple(self._batch.data.shape[1:])
            else:
                self._item = _probe_shape(self._opt)
        return self._item

    def __iter__(self):
        if self._ended:
            self.reset()
        return self

    def __next__(self):
        return self.next()

    def next(self):
        """The next batch of this epoch; StopIteration at its end."""
        if self._it is None:
            raise ValueError("ImageRecordIter is closed")
        b = self._b
        e = L.lib.recio_iter_next(self._it, byref(b))
        if e == L.END:
            self._ended = True
            self._batch = None
            raise StopIteration
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(self._it))
        self._fresh = False
        return self._wrap(b)

    def _wrap(self, b):
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
        if self._copy:
            data, label, ids, keys = data.copy(), label.copy(), ids.copy(), keys.copy()
            sums = sums.copy() if sums is not None else None
            counts = counts.copy()
            objects = objects.copy() if objects is not None else None
            mask = mask.copy() if mask is not None else None
            soft = soft.copy() if soft is not None else None
        batch = Batch(data, label, b.pad, ids, keys, b.count, b.epoch, b.index, sums, counts, objects, mask, soft, b.lam, b.mix)
        self._batch = batch
        return batch

    def iter_next(self):
        """MXNet's iter_next(): advance, True while there is a batch (then see getdata() etc.)."""
        try:
            self.next()
            return True
        except StopIteration:
            return False

    def getdata(self):
        return self._batch.data

    def getlabel(self):
        return self._batch.label

    def getpad(self):
        return self._batch.pad

    def getindex(self):
        return self._batch.index

    def _advance(self):
        e = L.lib.recio_iter_reset(self._it)
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(self._it))
        self._fresh, self._ended, self._batch = True, False, None
        self._epoch += 1

    def reset(self):
        """Start the next epoch (new shuffle, new random augmentation). Resetting before any batch of
        the current epoch was taken keeps it, so MXNet's `it.reset()` at the top of each epoch and
        plain `for batch in it` loops give the same epochs."""
        if self._it is None:
            raise ValueError("ImageRecordIter is closed")
        if not self._fresh or self._ended:
            self._advance()

    @property
    def epoch(self):
        """The epoch the next batch comes from."""
        return self._epoch

    def __len__(self):
        """Batches per epoch of this part (needs the .idx files for a cheap count; without them the part
        is read once). With last_batch='roll_over', later epochs may have one batch more."""
        if self._len is None:
            n = _count_records(self._opt)
            b = self._opt["batch"]
            self._len = -(-n // b) if self._opt["last_batch"] == 0 else n // b
        return self._len

    # -- checkpoints --
    def _save(self):
        size = c_size_t()
        e = L.lib.recio_iter_save(self._it, None, 0, byref(size))
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(self._it))
        buf = ctypes.create_string_buffer(size.value)
        e = L.lib.recio_iter_save(self._it, buf, size.value, byref(size))
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(self._it))
        return buf.raw[:size.value]

    def state_dict(self):
        """The position (recio_iter_save): load_state_dict on an iterator made with the same options
        continues with exactly the batches this one would give next."""
        return {"recio_iter": self._save(), "epoch": self._epoch, "fresh": self._fresh, "ended": self._ended}

    def load_state_dict(self, state):
        blob = bytes(state["recio_iter"])
        e = L.lib.recio_iter_restore(self._it, blob, len(blob))
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(self._it))
        self._fresh, self._ended, self._batch = bool(state["fresh"]), bool(state["ended"]), None
        self._epoch = int(state["epoch"])

    def cache_stats(self):
        """The decoded-image cache (cache_bytes=): a dict of mode ('off', 'items' or 'prefix'),
        prefix_ops, records, bytes, hits, misses and why (when off although cache_bytes was given)."""
        if self._it is None:
            raise ValueError("ImageRecordIter is closed")
        ci = L.CacheInfo()
        L.lib.recio_iter_cache_stats(self._it, byref(ci))
        return {"mode": ("off", "items", "prefix")[ci.mode], "prefix_ops": ci.prefix_ops, "records": ci.records,
                "bytes": ci.bytes, "hits": ci.hits, "misses": ci.misses, "why": ci.why.decode()}

    def close(self):
        """Stop the threads and free the buffers; arrays of batches not copied become invalid."""
        if self._it is not None:
            L.lib.recio_iter_close(self._it)
            self._it = None


def _probe_shape(opt):
    """Item shape of a spec: the C iterator fixes it from the dataset's first record at open; a pull
    mode twin of batch 1 gives it without touching the real iterator."""
    d = L.IterDesc()
    uris, spec = L.cstr(opt["uris"]), L.cstr(opt["spec"])
    d.uris, d.spec, d.channels, d.batch, d.label_width = uris, spec, opt["channels"], 1, 1
    it, b = c_void_p(), L.Batch()
    msg = ctypes.create_string_buffer(1024)
    e = L.lib.recio_iter_open_ex(byref(it), byref(d), msg, len(msg))
    if e != L.OK:
        raise _error(e, msg.value)
    try:
        e = L.lib.recio_iter_next(it, byref(b))
        if e != L.OK:
            raise _error(e, L.lib.recio_iter_errmsg(it))
        i = b.item
        return (i.channels, i.height, i.width) if i.layout == L.CHW else (i.height, i.width, i.channels)
    finally:
        L.lib.recio_iter_close(it)


def _count_records(opt):
    """Records per epoch of the iterator's part."""
    sd = L.SplitDesc()
    sd.mode = L.SPLIT_INDEX if opt["index"] else L.SPLIT_BYTES
    sd.equalize = opt["equalize"]
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

class Transform:
    """A recio transform chain (docs/image.md): t(image, seed=0) runs it on encoded bytes (JPEG, PNG,
    ...; decoded with the channels as stored, or `channels`) or on a uint8 HWC array, and returns a new
    NumPy array: (C, H, W) after `chw`, else (H, W, C). The result equals what
    `recio apply --spec SPEC --seed S IN OUT` writes raw. fast=True lets libjpeg-turbo decode JPEGs at
    a reduced DCT scale where the chain shrinks them (as the iterator does; pixels then differ a little
    from a full decode). A Transform may be called from several threads at once.

    Detection and segmentation: t(image, seed, boxes=B, mask=M, mask_fill=255) moves boxes and/or a
    label mask with the image, as recio_transform_apply_ex does (docs/image.md, "Boxes and masks"),
    and returns a tuple (image, boxes, mask), None for what was not given. B: (N, 5 or more) floats,
    class, xmin, ymin, xmax, ymax normalised to the input (0..1), extra columns carried along; the
    result holds the kept objects, in order, normalised to the output; a box that is not one (NaN or
    infinite values, xmin > xmax or ymin > ymax) raises ArgError naming it. M: a uint8 (H, W) array
    of the input's size, or the bytes of an 8-bit grey PNG or of a palette PNG whose indices are the
    labels (other kinds raise DecodeError, as recio_mask_decode); the result is uint8 (H', W'), moved by
    nearest neighbour, mask_fill (default 255) where the geometry uncovers. The image is the one
    t(image, seed) gives, except after random_bbox_crop/_cover, whose draw reads the boxes."""

    def __init__(self, spec):
        self.spec = spec
        t = c_void_p()
        msg = ctypes.create_string_buffer(512)
        e = L.lib.recio_transform_parse_ex(byref(t), L.cstr(spec), None, msg, len(msg))
        if e != L.OK:
            raise _error(e, msg.value)
        self._t = t

    def output_shape(self, width, height, channels=3):
        """Shape of the output for an input of that size as NumPy gives it, or None when it depends on
        the seed or the input cannot fit the chain."""
        s = L.Image()
        if L.lib.recio_transform_output_shape(self._t, width, height, channels, byref(s)) != L.OK:
            return None
        return ((s.channels, s.height, s.width) if s.layout == L.CHW else (s.height, s.width, s.channels)), L.DTYPES[s.dtype]

    def _wrap_out(self, w, h, c):
        """A NumPy output and an Image wrapped over it when the shape is known before running."""
        shp = self.output_shape(w, h, c)
        if shp is None:
            return None, L.Image()
        shape, dt = shp
        arr = np.empty(shape, dtype=dt)
        s = L.Image()
        L.lib.recio_transform_output_shape(self._t, w, h, c, byref(s))
        s.data = arr.ctypes.data
        return arr, s

    def __call__(self, image, seed=0, channels=0, fast=False, boxes=None, mask=None, mask_fill=255):
        seed = int(seed) & ((1 << 64) - 1)
        if boxes is not None or mask is not None:
            return self._apply_targets(image, seed, channels, fast, boxes, mask, mask_fill)
        if isinstance(image, np.ndarray):
            return self._apply_array(image, seed)
        buf = bytes(image) if not isinstance(image, (bytes, bytearray)) else image
        w, h, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        arr, out = None, L.Image()
        if L.lib.recio_image_info(buf, len(buf), byref(w), byref(h), byref(c)) == L.OK:
            ch = channels or (4 if c.value == 2 else c.value)
            arr, out = self._wrap_out(w.value, h.value, ch)
        d = L.EncodedDesc()
        d.channels, d.full_scale = int(channels), 0 if fast else 1
        msg = ctypes.create_string_buffer(512)
        e = L.lib.recio_transform_apply_encoded(self._t, buf, len(buf), byref(out), seed, byref(d), msg, len(msg))
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

    def _apply_array(self, image, seed):
        a, src, w, h, c = self._u8_image(image)
        arr, out = self._wrap_out(w, h, c)
        e = L.lib.recio_transform_apply(self._t, byref(src), byref(out), seed)
        return self._finish(e, b"transform: " + L.strerror(e).encode() if e else b"", arr, out)

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

    def _apply_targets(self, image, seed, channels, fast, boxes, mask, mask_fill):
        """The image with boxes and/or a mask riding along (recio_transform_apply_ex / _encoded_ex)."""
        d, keep = L.ApplyDesc(), []
        kept, bx, bout, mout = ctypes.c_int(0), None, None, L.Image()
        if boxes is not None:
            bx = np.ascontiguousarray(boxes, dtype=np.float32)
            if bx.size == 0:
                bx = bx.reshape(0, bx.shape[-1] if bx.ndim == 2 else 5)
            if bx.ndim != 2 or bx.shape[1] < 5:
                raise ArgError("Transform: boxes are (N, 5 or more): class, xmin, ymin, xmax, ymax, ...; not %s"
                               % (bx.shape,), L.ERR_ARG)
            why = ctypes.create_string_buffer(128)
            e = L.lib.recio_boxes_check(bx.ctypes.data_as(POINTER(c_float)), bx.shape[0], bx.shape[1], None, why, len(why))
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
        msg = ctypes.create_string_buffer(512)
        if isinstance(image, np.ndarray):
            a, src, w, h, c = self._u8_image(image)
            arr, out = self._wrap_out(w, h, c)
            e = L.lib.recio_transform_apply_ex(self._t, byref(src), byref(out), seed, byref(d))
            if e:
                msg.value = b"transform: " + L.strerror(e).encode()
        else:
            buf = bytes(image) if not isinstance(image, (bytes, bytearray)) else image
            w, h, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
            arr, out = None, L.Image()
            if L.lib.recio_image_info(buf, len(buf), byref(w), byref(h), byref(c)) == L.OK:
                arr, out = self._wrap_out(w.value, h.value, channels or (4 if c.value == 2 else c.value))
            ed = L.EncodedDesc()
            ed.channels, ed.full_scale = int(channels), 0 if fast else 1
            e = L.lib.recio_transform_apply_encoded_ex(self._t, buf, len(buf), byref(out), seed, byref(ed), byref(d), msg, len(msg))
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

    def close(self):
        if getattr(self, "_t", None):
            L.lib.recio_transform_free(self._t)
            self._t = None

    def __del__(self):
        self.close()

    def __repr__(self):
        return "recio.Transform(%r)" % self.spec


# ---- records --------------------------------------------------------------------------------------

class Reader(_Closing):
    """Records of one RecordIO file, in order: iterate for the payloads (bytes); .offset is the byte
    offset of the last record's header. mmap=True maps the file."""

    def __init__(self, path, mmap=False):
        self.path = os.fspath(path)
        d = L.ReaderDesc()
        d.use_mmap = 1 if mmap else 0
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, c_void_p)
        r = c_void_p()
        e = L.lib.recio_reader_open_desc(byref(r), L.cstr(self.path), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        self._r, self._rec, self.offset = r, L.Record(), None

    def read(self):
        """The next record's payload, or None at the end of the file."""
        e = L.lib.recio_reader_next(self._r, byref(self._rec))
        if e == L.END:
            return None
        if e != L.OK:
            raise _error(e, L.lib.recio_reader_errmsg(self._r))
        self.offset = self._rec.offset
        return ctypes.string_at(self._rec.data, self._rec.size) if self._rec.size else b""

    def __iter__(self):
        while True:
            p = self.read()
            if p is None:
                return
            yield p

    def seek(self, offset):
        """Continue at a record head (an offset from a .idx, or a previous .offset)."""
        e = L.lib.recio_reader_seek(self._r, offset)
        if e != L.OK:
            raise _error(e, L.lib.recio_reader_errmsg(self._r))

    def tell(self):
        return L.lib.recio_reader_tell(self._r)

    def close(self):
        if getattr(self, "_r", None):
            L.lib.recio_reader_close(self._r)
            self._r = None


class Writer:
    """Write a RecordIO file: write(payload[, key]); index=PATH (or True for PATH.idx beside it... as
    FILE.rec -> FILE.idx) also writes MXNet's .idx; atomic=True writes FILE.tmp and renames it on a
    clean close. As a context manager an exception aborts (an atomic writer then leaves FILE alone)."""

    def __init__(self, path, index=None, atomic=False):
        self.path = os.fspath(path)
        if index is True:
            index = self.path[:-4] + ".idx" if self.path.endswith(".rec") else self.path + ".idx"
        self._index = L.cstr(os.fspath(index)) if index else None
        d = L.WriterDesc()
        d.index_path, d.atomic = self._index, 1 if atomic else 0
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, c_void_p)
        w = c_void_p()
        e = L.lib.recio_writer_open_desc(byref(w), L.cstr(self.path), byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        self._w = w

    def write(self, payload, key=None):
        b = bytes(payload) if not isinstance(payload, (bytes, bytearray)) else payload
        if key is None:
            e = L.lib.recio_writer_write(self._w, bytes(b), len(b))
        else:
            e = L.lib.recio_writer_write_key(self._w, int(key), bytes(b), len(b))
        if e != L.OK:
            raise _error(e, L.lib.recio_writer_errmsg(self._w))

    def tell(self):
        """Offset the next record will have."""
        return L.lib.recio_writer_tell(self._w)

    def close(self):
        if getattr(self, "_w", None):
            e = L.lib.recio_writer_finish(self._w)
            msg = L.lib.recio_writer_errmsg(self._w)
            L.lib.recio_writer_close(self._w)
            self._w = None
            if e != L.OK:
                raise _error(e, msg)

    def abort(self):
        if getattr(self, "_w", None):
            L.lib.recio_writer_abort(self._w)
            self._w = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self):
        self.abort()


IRHeader = namedtuple("IRHeader", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = "MXNet's image record header (mx.recordio.IRHeader): label is a float, or an array when flag > 0."


def unpack(payload):
    """An image record payload -> (IRHeader, encoded image bytes), as mx.recordio.unpack (a
    segmentation record's mask tail is not part of the image: unpack_mask gives it)."""
    header, image, _ = unpack_mask(payload)
    return header, image


def unpack_mask(payload):
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
    """A mask's PNG bytes -> its labels, uint8 (H, W), by recio_mask_decode's rule: an 8-bit grey PNG,
    or a palette PNG whose indices are the labels; any other kind raises DecodeError naming it."""
    dec, msg = L.Image(), ctypes.create_string_buffer(512)
    e = L.lib.recio_mask_decode(byref(dec), buf, len(buf), msg, len(msg))
    if e != L.OK:
        raise _error(e, msg.value)
    try:
        raw = ctypes.string_at(dec.data, dec.stride * dec.height)
        return np.frombuffer(raw, dtype=np.uint8).reshape(dec.height, dec.stride)[:, :dec.width].copy()
    finally:
        L.lib.recio_image_free(byref(dec))


def pack(header, image, mask=None):
    """IRHeader + encoded image bytes -> a record payload, as mx.recordio.pack: a scalar label goes in
    the header (flag 0), an array of labels after it (flag = their count; the header label is 0).
    mask: the bytes of a label mask PNG, stored after the image with its 8-byte tail (a segmentation
    record, as recio pack --mask-root writes): an 8-bit grey PNG, or a palette PNG whose indices are
    the labels (VOC's masks); any other kind raises DecodeError naming it (recio_mask_decode)."""
    tail = b""
    if mask is not None:
        mask = bytes(mask)
        _mask_labels(mask)
        tail = mask + struct.pack("<I", len(mask)) + b"RMSK"
    if np.ndim(header.label) == 0:
        hdr = struct.pack("<IfQQ", 0, float(header.label), int(header.id), int(header.id2))
    else:
        lab = np.ascontiguousarray(header.label, dtype="<f4").ravel()
        hdr = struct.pack("<IfQQ", lab.size, 0.0, int(header.id), int(header.id2)) + lab.tobytes()
    return hdr + bytes(image) + tail


Where = namedtuple("Where", ["path", "ordinal", "offset", "key", "seq"])
Where.__doc__ = ("Where a split's record came from: its file, ordinal in that file (None when unknown), offset of "
                 "its header in the file, key (global offset), seq (0, 1, ... in this epoch)")


class Split(_Closing):
    """Part `rank` of `nsplit` of the RecordIO files in uris ('a.rec;b.rec', a list, wildcards,
    directories), cut exactly as dmlc-core's InputSplit does (index=True: by record count from each
    .idx; shuffle=True: a seeded order per epoch). Iterate for payloads; items() gives (Where, bytes)."""

    def __init__(self, uris, rank=0, nsplit=1, index=False, shuffle=False, seed=0, epoch=0, _desc=None):
        if isinstance(uris, (list, tuple)):
            uris = ";".join(os.fspath(u) for u in uris)
        self.uris = os.fspath(uris)
        sd = _desc or L.SplitDesc()
        if _desc is None:
            sd.mode = L.SPLIT_INDEX if index or shuffle else L.SPLIT_BYTES
            sd.shuffle = L.SHUFFLE_FULL if shuffle else L.SHUFFLE_NONE
            sd.seed, sd.epoch, sd.ordinals = int(seed), int(epoch), 1
        s = c_void_p()
        e = L.lib.recio_split_open_desc(byref(s), L.cstr(self.uris), int(rank), int(nsplit), byref(sd))
        if e != L.OK:
            msg = L.lib.recio_split_errmsg(s) if s else b""
            L.lib.recio_split_close(s)
            raise _error(e, msg)
        self._s, self._rec, self._where = s, L.Record(), L.SplitWhere()
        self.where = None

    def _next(self):
        e = L.lib.recio_split_next_where(self._s, byref(self._rec), byref(self._where))
        if e == L.END:
            return None
        if e != L.OK:
            raise _error(e, L.lib.recio_split_errmsg(self._s))
        w = self._where
        self.where = Where(os.fsdecode(w.path), None if w.ordinal == L.SPLIT_UNKNOWN else w.ordinal,
                           self._rec.offset, w.key, w.seq)
        return ctypes.string_at(self._rec.data, self._rec.size) if self._rec.size else b""

    def __iter__(self):
        while True:
            p = self._next()
            if p is None:
                return
            yield p

    def items(self):
        while True:
            p = self._next()
            if p is None:
                return
            yield self.where, p

    def reset(self, epoch=0):
        """Start epoch `epoch` from the beginning of the part (a new order when shuffled)."""
        e = L.lib.recio_split_reset(self._s, int(epoch))
        if e != L.OK:
            raise _error(e, L.lib.recio_split_errmsg(self._s))

    @property
    def count(self):
        """Records per epoch on this part; None when not known without reading (byte mode)."""
        n = L.lib.recio_split_count(self._s)
        return None if n == L.SPLIT_UNKNOWN else int(n)

    @property
    def bounds(self):
        b, e = c_uint64(), c_uint64()
        L.lib.recio_split_bounds(self._s, byref(b), byref(e))
        return b.value, e.value

    @property
    def files(self):
        return [os.fsdecode(L.lib.recio_split_file(self._s, i)) for i in range(L.lib.recio_split_nfiles(self._s))]

    def _count_by_index(self):
        """Byte mode: the records whose head lies in the part's range, from each file's .idx (None if one
        is missing)."""
        from ._mxnet import _index_of
        begin, end = self.bounds
        base, n = 0, 0
        for f in self.files:
            size = os.path.getsize(f)
            if base < end and base + size > begin:
                ix = _index_of(f)
                if not os.path.exists(ix):
                    return None
                offs = np.loadtxt(ix, dtype=np.uint64, usecols=1, ndmin=1) if os.path.getsize(ix) else np.zeros(0, np.uint64)
                g = offs.astype(np.int64) + base
                n += int(np.count_nonzero((g >= begin) & (g < end)))
            base += size
        return n

    def close(self):
        if getattr(self, "_s", None):
            L.lib.recio_split_close(self._s)
            self._s = None


def split(uris, rank=0, nsplit=1, **kw):
    """recio.Split(uris, rank, nsplit, ...): the records of one part, as `recio split` lists them."""
    return Split(uris, rank, nsplit, **kw)


