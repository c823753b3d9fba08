"""``mx.image.imdecode`` on recio's C decoder, and the OpenCV-style decode behind ``mx.recordio.unpack_img``.

Images decode through the recio library (``recio_image_decode_desc``: libjpeg-turbo for JPEG when the
library was built with it, else stb_image; PNG and BMP through stb_image), always to 8 bits per channel.
EXIF orientation: OpenCV 4's ``cv::imdecode`` turns a JPEG upright by its EXIF Orientation tag unless it
is asked for the image unchanged (``IMREAD_UNCHANGED``, -1) or told ``IMREAD_IGNORE_ORIENTATION`` (128),
and MXNet's ``imdecode`` and ``unpack_img`` decode through it; so do these. The C library itself never
rotates (recio's iterator reads pixels as stored): the rotation is done here, on the decoded array.
"""
from __future__ import annotations

import ctypes
from ctypes import byref
from typing import Any, Optional, Union

from .. import CorruptError, DecodeError, _error, _lib as L, _view
from .ndarray import NDArray

np = L.numpy()

__all__ = ["imdecode"]

IMREAD_UNCHANGED, IMREAD_GRAYSCALE, IMREAD_COLOR, IMREAD_IGNORE_ORIENTATION = -1, 0, 1, 128

Buffer = Union[bytes, bytearray, memoryview, "np.ndarray", NDArray]


class _Pixels:
    """Owns a recio_image that the C decoder allocated; frees it when the last array over it goes."""
    __slots__ = ("img",)

    def __init__(self, img: L.Image) -> None:
        self.img = img

    def __del__(self) -> None:
        L.lib.recio_image_free(byref(self.img))


def _decode(buf: bytes, channels: int) -> np.ndarray:
    """(H, W, C) uint8, RGB(A) or grey, from recio_image_decode_desc (channels 1, 3, 4, or 0 = as stored,
    grey + alpha as 4): a view of the C library's pixels, no copy. recio.DecodeError on failure."""
    e, img, msg = L.decode_desc(bytes(buf), channels)
    if e != L.OK:
        raise _error(e, msg)
    owner = _Pixels(img)
    h, w, c = img.height, img.width, img.channels
    rows = _view(img.data, (h, img.stride), "|u1", owner)  # the rows as stored, padding included
    return rows[:, :w * c].reshape(h, w, c) if img.stride == w * c else np.ascontiguousarray(rows[:, :w * c]).reshape(h, w, c)


def _u16(b: bytes, at: int, order: str) -> int:
    return int.from_bytes(b[at:at + 2], order)


def _tiff_orientation(t: bytes) -> int:
    """The Orientation tag (0x0112) of IFD0 in an Exif TIFF block, or 1 when there is none or it is bad."""
    order = {b"II*\0": "little", b"MM\0*": "big"}.get(t[:4])
    if order is None or len(t) < 8:
        return 1
    ifd = int.from_bytes(t[4:8], order)
    if ifd + 2 > len(t):
        return 1
    for k in range(_u16(t, ifd, order)):
        p = ifd + 2 + 12 * k
        if p + 12 > len(t):
            return 1
        if _u16(t, p, order) == 0x0112:
            kind = _u16(t, p + 2, order)  # SHORT (3), as the standard says; LONG (4) seen in the wild
            v = _u16(t, p + 8, order) if kind == 3 else int.from_bytes(t[p + 8:p + 12], order) if kind == 4 else 1
            return v if 1 <= v <= 8 else 1
    return 1


def exif_orientation(buf: bytes) -> int:
    """The EXIF Orientation (1..8) of a JPEG's first Exif APP1 segment; 1 (as stored) for anything else:
    other formats, no Exif, a damaged segment. Reads only the markers before the first scan."""
    b = bytes(buf[:65536 * 4]) if len(buf) > 65536 * 4 else bytes(buf)  # metadata sits at the front
    if b[:2] != b"\xff\xd8":
        return 1
    i = 2
    while i + 4 <= len(b):
        if b[i] != 0xFF:
            return 1
        m = b[i + 1]
        if m == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if m == 0x01 or 0xD0 <= m <= 0xD8:  # markers without a length
            i += 2
            continue
        if m in (0xDA, 0xD9):  # the scan (or the end) begins: no metadata after it counts
            return 1
        n = _u16(b, i + 2, "big")
        if n < 2:
            return 1
        if m == 0xE1 and b[i + 4:i + 10] == b"Exif\0\0":
            return _tiff_orientation(b[i + 10:i + 2 + n])
        i += 2 + n
    return 1


def orient(a: np.ndarray, orientation: int) -> np.ndarray:
    """``a`` (H, W[, C]) turned upright for an EXIF orientation, as OpenCV's ApplyExifOrientation does:
    2 mirror, 3 rotate 180, 4 flip, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90
    counter-clockwise. A view (no copy)."""
    if orientation >= 5:
        a = a.swapaxes(0, 1)
    flip = {2: (1,), 3: (0, 1), 4: (0,), 6: (1,), 7: (0, 1), 8: (0,)}.get(orientation, ())
    return np.flip(a, flip) if flip else a


def _as_bytes(buf: Any, who: str) -> bytes:
    if isinstance(buf, NDArray):
        buf = buf.asnumpy()
    if isinstance(buf, np.ndarray):
        return np.ascontiguousarray(buf).tobytes()
    if isinstance(buf, (bytes, bytearray, memoryview)):
        return bytes(buf)
    raise ValueError("%s: buf must be of type bytes, bytearray or numpy.ndarray, not %s (a str? convert it to bytes)"
                     % (who, type(buf).__name__))


def cv_decode(buf: Any, flags: int = IMREAD_COLOR) -> Optional[np.ndarray]:
    """``cv2.imdecode(np.frombuffer(buf, np.uint8), flags)`` on recio's decoder: ``IMREAD_COLOR`` (1) gives
    (H, W, 3) BGR, ``IMREAD_GRAYSCALE`` (0) (H, W), ``IMREAD_UNCHANGED`` (-1) the stored channels ((H, W)
    grey, BGR, BGRA) without EXIF rotation; ``| IMREAD_IGNORE_ORIENTATION`` (128) keeps a JPEG as stored.
    None when the bytes do not decode (as cv2 returns); ValueError for an empty buffer (cv2 asserts) or
    for flags other than these (OpenCV's reduced-size and any-depth modes are not offered)."""
    b = _as_bytes(buf, "unpack_img")
    if not b:
        raise ValueError("unpack_img: empty image (0 bytes): nothing to decode")
    mode = flags & ~IMREAD_IGNORE_ORIENTATION if flags != IMREAD_UNCHANGED else IMREAD_UNCHANGED
    if mode not in (IMREAD_UNCHANGED, IMREAD_GRAYSCALE, IMREAD_COLOR):
        raise ValueError("unpack_img: iscolor %r: recio decodes -1 (unchanged), 0 (grey) and 1 (colour), "
                         "optionally | 128 (ignore the EXIF orientation)" % (flags,))
    try:
        a = _decode(b, {IMREAD_UNCHANGED: 0, IMREAD_GRAYSCALE: 1, IMREAD_COLOR: 3}[mode])
    except (DecodeError, CorruptError):  # not an image we can decode: cv2 gives None
        return None
    if a.shape[2] >= 3:
        a = a[..., [2, 1, 0, 3][:a.shape[2]]]  # RGB(A) -> OpenCV's BGR(A) (a copy)
    else:
        a = a[..., 0]
    if mode != IMREAD_UNCHANGED and not flags & IMREAD_IGNORE_ORIENTATION:
        a = orient(a, exif_orientation(b))
    return np.ascontiguousarray(a)


def imdecode(buf: Buffer, flag: int = 1, to_rgb: bool = True, out: Optional[NDArray] = None) -> NDArray:
    """Decode an image (JPEG, PNG, BMP) to an (H, W, 3) uint8 NDArray, RGB (``to_rgb=False``: BGR), or
    (H, W, 1) grey with ``flag=0``, as MXNet's ``mx.image.imdecode``. A JPEG's EXIF orientation is
    applied as OpenCV 4 applies it by default (``flag=-1``, OpenCV's IMREAD_UNCHANGED, keeps the stored
    orientation and still gives 3 channels). ``out``: an NDArray of the result's shape to write into
    (returned). Raises recio.DecodeError ("decode: ...") where MXNet raises MXNetError, and ValueError
    when ``buf`` is not bytes, bytearray or a NumPy array (e.g. a str)."""
    b = _as_bytes(buf, "imdecode")
    a = _decode(b, 1 if flag == 0 else 3)
    if flag != 0 and not to_rgb:
        a = a[..., ::-1]
    if flag != IMREAD_UNCHANGED:
        a = orient(a, exif_orientation(b))
    if out is not None:
        if tuple(out.shape) != a.shape:
            raise ValueError("imdecode: out has shape %s, the image %s" % (tuple(out.shape), a.shape))
        out[:] = a
        return out
    return NDArray(a)
