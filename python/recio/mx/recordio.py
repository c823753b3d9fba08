"""``mxnet.recordio`` (MXNet 1.9) on recio's C reader, writer, index and image-record code.

``MXRecordIO`` and ``MXIndexedRecordIO`` read and write through ``recio.Reader`` / ``recio.Writer``
(recio_reader_* / recio_writer_*), the ``.idx`` through recio_index_load / recio_index_save, and
``pack`` writes the image header with recio_irecord_pack_header; ``unpack`` is ``recio.unpack``
(recio_irecord_unpack). As MXNet's:

- A handle notes the process that opened it. Used from another one (a forked DataLoader worker),
  ``seek`` / ``read_idx`` reopen it there (the child never moves the parent's file offset), while
  ``read`` and ``write`` raise RuntimeError("Forbidden operation in multiple processes").
- ``del`` closes it; a writer finishes its file then (every record and the ``.idx`` written).
- It pickles by uri and flag (and idx_path, key_type): the copy is reopened at the first record.

Where this differs from MXNet: pickling leaves the original open (MXNet closes it, so its next
``read()`` raises); an open writer refuses to be pickled (MXNet's copy would reopen the file with 'w'
and empty it); a writer closed from a process other than its own is dropped without flushing (its
records belong to the opener); errors are recio's exceptions ("FILE: offset N: what") where MXNet
raises MXNetError; ``.idx`` keys must be whole numbers 0..2^64-1 (``key_type`` applies to them as
MXNet applies it to the key's text).
"""
from __future__ import annotations

import ctypes
import numbers
import operator
import os
from array import array
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from .. import IRHeader, Reader, Writer, _error, _lib as L, _random_read_buffer
from .. import _pack_header
from .. import unpack as _unpack
from . import image as _image

np = L.numpy()  # records need no NumPy; array labels and images do

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]

PathLike = Union[str, bytes, "os.PathLike[str]"]
Buffer = Union[bytes, bytearray, memoryview]
HeaderLike = Union[IRHeader, Sequence[Any]]


class MXRecordIO:
    """Read ('r') or write ('w') a RecordIO file one record after another, as ``mxnet.recordio.MXRecordIO``.

    >>> w = MXRecordIO("tmp.rec", "w")
    >>> for i in range(5):
    ...     w.write(b"record_%d" % i)
    >>> del w                      # finishes tmp.rec, as close() does
    >>> r = MXRecordIO("tmp.rec", "r")
    >>> r.read()
    b'record_0'
    """

    def __init__(self, uri: PathLike, flag: str) -> None:
        """Open ``uri`` for reading (flag 'r') or writing (flag 'w', which empties the file)."""
        self.uri = os.fsdecode(os.fspath(uri))
        self.flag = flag
        self.pid: Optional[int] = None
        self.is_open = False
        self.writable = False
        self._handle: Any = None
        self.open()

    def open(self) -> None:
        """Open the file (ValueError for a flag other than 'r' and 'w')."""
        if self.flag == "w":
            self._handle = self._open_writer()
            self.writable = True
        elif self.flag == "r":
            self._handle = Reader(self.uri)
            self.writable = False
        else:
            raise ValueError("Invalid flag %s" % self.flag)
        self.pid = os.getpid()
        self.is_open = True

    def _open_writer(self) -> Writer:
        return Writer(self.uri)

    def close(self) -> None:
        """Close the file; a writer finishes it (recio.Error if that fails). Closing twice does nothing."""
        if not getattr(self, "is_open", False):
            return
        handle, self._handle = self._handle, None
        opener, self.pid = self.pid, None
        self.is_open = False
        if self.writable and opener != os.getpid():
            handle.abort()  # a copy inherited by fork: the buffered records are the opener's to write
        else:
            handle.close()

    def __del__(self) -> None:
        self.close()

    def reset(self) -> None:
        """Back to the first record (close and open again); a writer starts the file over, empty."""
        self.close()
        self.open()

    def __getstate__(self) -> Dict[str, Any]:
        """The state to pickle: uri, flag and whether it is open (the copy reopens at the first record).
        An open writer refuses: its copy would reopen the file with 'w' and empty it."""
        if self.is_open and self.writable:
            raise TypeError("%s: an open %s writer cannot be pickled (its copy would open the file with 'w' and "
                            "empty it); close() it first" % (self.uri, type(self).__name__))
        d = dict(self.__dict__)
        d["_handle"], d["pid"] = None, None
        return d

    def __setstate__(self, d: Dict[str, Any]) -> None:
        """Restore a pickled handle: open it again when the original was open."""
        self.__dict__.update(d)
        was_open = self.is_open
        self.is_open, self._handle = False, None
        if was_open:
            self.open()

    def _check_pid(self, allow_reset: bool = False) -> None:
        """In a process other than the opener's: reopen here (allow_reset) or raise RuntimeError."""
        if self.pid != os.getpid():
            if allow_reset:
                self.reset()
            elif not self.is_open:
                raise RuntimeError("Forbidden operation in multiple processes: %s is closed" % self.uri)
            else:
                raise RuntimeError("Forbidden operation in multiple processes: %s was opened by process %d"
                                   % (self.uri, self.pid))

    def write(self, buf: Buffer) -> None:
        """Append one record holding ``buf`` (bytes-like)."""
        assert self.writable
        self._check_pid(allow_reset=False)
        self._handle.write(buf)

    def read(self) -> Optional[bytes]:
        """The next record's bytes, or None after the last."""
        assert not self.writable
        self._check_pid(allow_reset=False)
        return self._handle.read()


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with its ``.idx`` (one "key<TAB>offset" line per record), for reads by key, as
    ``mxnet.recordio.MXIndexedRecordIO``: ``keys`` lists the keys in file order, ``idx`` maps each to its
    record's offset; ``write_idx(key, buf)`` appends a record under a key (``write(buf)`` appends one
    outside the index, as MXNet's does).

    >>> w = MXIndexedRecordIO("tmp.idx", "tmp.rec", "w")
    >>> for i in range(5):
    ...     w.write_idx(i, b"record_%d" % i)
    >>> w.close()
    >>> r = MXIndexedRecordIO("tmp.idx", "tmp.rec", "r")
    >>> r.read_idx(3)
    b'record_3'
    """

    def __init__(self, idx_path: PathLike, uri: PathLike, flag: str, key_type: Callable[[Any], Any] = int) -> None:
        """Open ``uri`` and its index ``idx_path`` for reading ('r') or writing ('w'); ``key_type``
        converts each key (read from the .idx, or given to write_idx)."""
        self.idx_path = os.fsdecode(os.fspath(idx_path))
        self.idx: Dict[Any, int] = {}
        self.keys: List[Any] = []
        self.key_type = key_type
        self._entries: Optional[array] = None  # a writer's (key, offset) pairs, one after the other
        super().__init__(uri, flag)

    def open(self) -> None:
        """Open the file and its index: reading loads every key; writing starts an empty .idx."""
        super().open()
        self.idx, self.keys = {}, []
        try:
            if self.writable:
                self._entries = array("Q")
                _save_index(self.idx_path, self._entries)  # MXNet opens the .idx with 'w' here
            else:
                self._load_index()
                # reads by key: a buffer of about two records, not the streaming reader's 1 MiB (a read
                # after a seek fills the whole buffer: 1 MiB took longer than decoding a 112x112 face)
                self._handle.close()
                self._handle = Reader(self.uri, buffer_size=_random_read_buffer(self.uri, len(self.keys)))
        except BaseException:
            self._entries = None
            super().close()
            raise

    def _load_index(self) -> None:
        ix, d = L.Index(), L.IndexDesc()
        msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
        d.errmsg = ctypes.cast(msg, ctypes.c_void_p)
        e = L.lib.recio_index_load(ctypes.byref(ix), L.cstr(self.idx_path), ctypes.byref(d))
        if e != L.OK:
            raise _error(e, msg.value)
        try:  # recio_index_entry is {uint64 key, offset}: the entries as one run of native uint64s
            pairs = array("Q", ctypes.string_at(ix.entries, 16 * ix.count)) if ix.count else array("Q")
        finally:
            L.lib.recio_index_free(ctypes.byref(ix))
        keys, offsets = pairs[0::2].tolist(), pairs[1::2].tolist()
        if self.key_type is not int:  # MXNet converts the key's text
            keys = [self.key_type(str(k)) for k in keys]
        self.keys = keys
        self.idx = dict(zip(keys, offsets))

    def close(self) -> None:
        """Close the file; a writer finishes it and then writes the .idx of every write_idx."""
        if not getattr(self, "is_open", False):
            return
        entries, self._entries = self._entries, None
        opener = self.pid
        super().close()
        if entries is not None and opener == os.getpid():
            _save_index(self.idx_path, entries)

    def __getstate__(self) -> Dict[str, Any]:
        """As MXRecordIO's; the keys of an open reader are left out (reopening reads them again)."""
        d = super().__getstate__()
        d["_entries"] = None
        if self.is_open:
            d["idx"], d["keys"] = {}, []
        return d

    def seek(self, idx: Any) -> None:
        """Move the reader to the record of key ``idx`` (KeyError when there is none). In a process other
        than the opener's (a forked DataLoader worker) the file is first opened again for this one."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        self._handle.seek(self.idx[idx])

    def tell(self) -> int:
        """The offset the next record will be written at."""
        assert self.writable
        return self._handle.tell()

    def read_idx(self, idx: Any) -> Optional[bytes]:
        """The bytes of the record of key ``idx`` (reading goes on after it, as after seek + read)."""
        assert not self.writable
        self._check_pid(allow_reset=True)
        return self._handle.read_at(self.idx[idx])

    def write_idx(self, idx: Any, buf: Buffer) -> None:
        """Append a record holding ``buf`` under key ``key_type(idx)``: a whole number 0..2^64-1 in the .idx
        (recio's .idx keys are unsigned 64-bit; MXNet would also write a key such as 'a')."""
        key = self.key_type(idx)
        number = _index_key(key)
        pos = self.tell()
        self.write(buf)
        assert self._entries is not None
        self._entries.extend((number, pos))
        self.idx[key] = pos
        self.keys.append(key)


def _index_key(key: Any) -> int:
    """A key as the whole number recio's .idx holds (recio_index_entry.key), or ValueError/TypeError."""
    if isinstance(key, (str, bytes)):
        try:
            n = int(key)
        except ValueError:
            raise ValueError("write_idx: key %r: recio's .idx keys are whole numbers 0..2^64-1" % (key,)) from None
    elif isinstance(key, numbers.Real) and not isinstance(key, numbers.Integral):
        if not float(key).is_integer():
            raise ValueError("write_idx: key %r: recio's .idx keys are whole numbers 0..2^64-1" % (key,))
        n = int(key)
    else:
        n = operator.index(key)
    if not 0 <= n < 1 << 64:
        raise ValueError("write_idx: key %d: recio's .idx keys are whole numbers 0..2^64-1" % n)
    return n


def _save_index(path: str, entries: array) -> None:
    """Write ``entries`` (key, offset, key, offset, ...) as an MXNet .idx with recio_index_save."""
    ix = L.Index()
    ix.entries = ctypes.cast(entries.buffer_info()[0], ctypes.POINTER(L.IndexEntry))
    ix.count = len(entries) // 2
    msg = ctypes.create_string_buffer(L.ERRMSG_SIZE)
    d = L.IndexDesc()
    d.errmsg = ctypes.cast(msg, ctypes.c_void_p)
    e = L.lib.recio_index_save(ctypes.byref(ix), L.cstr(path), ctypes.byref(d))
    if e != L.OK:
        raise _error(e, msg.value)


def pack(header: HeaderLike, s: Buffer) -> bytes:
    """An image record payload: the header (an IRHeader or any (flag, label, id, id2)), then ``s``, as
    ``mxnet.recordio.pack``. A number label goes in the header (flag 0); anything else is made a float32
    array, flattened, and stored after the header (flag = its size, header label 0), so an array of
    one label is not a number label. The given flag is ignored, as MXNet ignores it."""
    header = IRHeader(*header)
    return _pack_header(header.label, isinstance(header.label, numbers.Number), header.id, header.id2, "pack") + bytes(s)


def unpack(s: Buffer) -> Tuple[IRHeader, bytes]:
    """(IRHeader, the bytes after the header and its labels) of a record payload, as
    ``mxnet.recordio.unpack``: ``label`` is a float (flag 0) or a float32 array of ``flag`` labels; the
    bytes come back whole (a segmentation record's mask tail too: ``recio.unpack_mask`` splits it off)."""
    return _unpack(s)


def unpack_img(s: Buffer, iscolor: int = -1) -> Tuple[IRHeader, Optional[np.ndarray]]:
    """(IRHeader, image) of a record payload, as ``mxnet.recordio.unpack_img``, decoded as
    ``cv2.imdecode(..., iscolor)``: -1 (the default) the stored channels, uint8 (H, W) grey, (H, W, 3)
    BGR or (H, W, 4) BGRA, no EXIF rotation; 0 grey (H, W); 1 BGR (H, W, 3); with 0 and 1 a JPEG's EXIF
    orientation is applied, as OpenCV does (| 128 leaves it). The image is None when the bytes do not
    decode, as cv2 gives."""
    header, img = unpack(s)
    return header, _image.cv_decode(img, iscolor)


def pack_img(header: HeaderLike, img: Any, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode ``img`` (uint8 (H, W) grey, (H, W, 3) BGR or (H, W, 4) BGRA, OpenCV's channel order) and
    pack it with ``header``, as ``mxnet.recordio.pack_img``: ``img_fmt`` '.jpg' (``quality`` 1-100) or
    '.png' (``quality`` is the compression level, clamped to 0-9), or another extension the encoder
    knows. recio's C library decodes but does not encode, so this encodes with OpenCV (cv2) when it is
    installed, as MXNet does, else with Pillow."""
    return pack(header, encode(img, quality, img_fmt))


def encode(img: Any, quality: int = 95, img_fmt: str = ".jpg", encoder: Optional[str] = None) -> bytes:
    """The encoded bytes of pack_img: through cv2 ('cv2') or Pillow ('pil'), the first importable one
    when ``encoder`` is None. ImportError naming both when neither is installed."""
    order = [encoder] if encoder else ["cv2", "pil"]
    for name in order:
        try:
            return _ENCODERS[name](img, int(quality), img_fmt)
        except ImportError:
            if encoder:
                raise
    raise ImportError("pack_img: encoding needs OpenCV (python3-opencv / pip install opencv-python) or Pillow "
                      "(python3-pil / pip install pillow): recio's C library decodes images but does not encode them")


def _encode_cv2(img: Any, quality: int, img_fmt: str) -> bytes:
    import cv2
    fmt = img_fmt.upper()
    params = ([cv2.IMWRITE_JPEG_QUALITY, quality] if fmt in (".JPG", ".JPEG") else
              [cv2.IMWRITE_PNG_COMPRESSION, quality] if fmt == ".PNG" else [])
    try:
        ok, buf = cv2.imencode(img_fmt, np.asarray(img), params)
    except cv2.error as e:  # an extension OpenCV has no encoder for, an image it cannot write
        raise ValueError("pack_img: OpenCV cannot encode a %s %s image as %r: %s"
                         % (np.asarray(img).dtype, np.shape(img), img_fmt, str(e).strip())) from None
    if not ok:
        raise ValueError("pack_img: OpenCV could not encode a %s image as %s" % (np.shape(img), img_fmt))
    return buf.tobytes()


def _encode_pil(img: Any, quality: int, img_fmt: str) -> bytes:
    import io

    from PIL import Image
    a = np.asarray(img)
    if a.dtype != np.uint8 or not (a.ndim == 2 or (a.ndim == 3 and a.shape[2] in (1, 3, 4))):
        raise ValueError("pack_img: img is uint8 (H, W), (H, W, 1), (H, W, 3) BGR or (H, W, 4) BGRA, not %s %s"
                         % (a.dtype, a.shape))
    fmt = img_fmt.lower()
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[..., 0]
    elif a.ndim == 3:
        a = a[..., [2, 1, 0, 3][:a.shape[2]]]  # OpenCV's BGR(A) -> RGB(A)
        if a.shape[2] == 4 and fmt in (".jpg", ".jpeg"):
            a = a[..., :3]  # JPEG has no alpha
    out = io.BytesIO()
    pic = Image.fromarray(np.ascontiguousarray(a))
    if fmt in (".jpg", ".jpeg"):
        pic.save(out, "JPEG", quality=max(1, min(quality, 100)))
    elif fmt == ".png":
        pic.save(out, "PNG", compress_level=max(0, min(quality, 9)))
    else:
        kind = Image.registered_extensions().get(fmt)
        if kind is None:
            raise ValueError("pack_img: img_fmt %r: not a format Pillow writes ('.jpg', '.png', ...)" % img_fmt)
        pic.save(out, kind)
    return out.getvalue()


_ENCODERS = {"cv2": _encode_cv2, "pil": _encode_pil}
