"""A drop-in for the parts of MXNet that code holding `.rec` files still imports, on recio's C library.

    import recio.mx as mx          # instead of: import mxnet as mx

    rec = mx.recordio.MXIndexedRecordIO("train.idx", "train.rec", "r")
    header, img = mx.recordio.unpack(rec.read_idx(0))
    sample = mx.image.imdecode(img).asnumpy()          # (H, W, 3) uint8 RGB

Covered (each behaves as MXNet 1.9's python/mxnet/recordio.py and mx.image.imdecode; differences below):

- ``mx.recordio.MXRecordIO(uri, flag)``: ``open``, ``close``, ``reset``, ``read``, ``write``, ``is_open``,
  ``writable``, ``uri``, ``flag``, ``pid``; closes on ``del`` (a writer finishes its file then); reopens
  when used in another process (a forked DataLoader worker); pickles by uri and flag.
- ``mx.recordio.MXIndexedRecordIO(idx_path, uri, flag, key_type=int)``: also ``keys``, ``idx``,
  ``key_type``, ``idx_path``, ``read_idx``, ``write_idx``, ``seek``, ``tell``.
- ``mx.recordio.IRHeader``, ``pack``, ``unpack``, ``pack_img``, ``unpack_img``.
- ``mx.image.imdecode(buf, flag=1, to_rgb=True, out=None)`` -> ``mx.nd.NDArray``.
- ``mx.nd.NDArray``: ``asnumpy()``, ``shape``, ``dtype``, ``ndim``, ``size``, ``astype``, ``copy``,
  indexing, ``len()`` and NumPy conversion (``np.asarray(x)``); nothing more.

Not covered: the rest of NDArray (arithmetic, contexts, ``mx.nd.*`` functions), ``mx.image``'s other
functions and augmenters, ``mx.io``'s iterators (``recio.ImageRecordIter`` is ``mx.io.ImageRecordIter``
with MXNet's parameter names), ``mx.recordio.MXRecordIO_PB`` and everything else in MXNet (symbols,
Gluon, KVStore, autograd).

Differences: errors are recio's exceptions (``recio.FileError``, ``recio.CorruptError``, ...) with
"FILE: offset N: what" where MXNet raises MXNetError; images decode with recio's C decoder
(libjpeg-turbo or stb_image: 8-bit only, a 16-bit PNG comes back as 8 bits), with the EXIF orientation
of a JPEG applied as OpenCV 4 applies it by default; ``.idx`` keys are unsigned 64-bit integers (the
C library's ``recio_index_entry``); see each name's docstring and docs/python.md.
"""
from . import image, ndarray, recordio
from . import ndarray as nd

__all__ = ["recordio", "image", "nd", "ndarray"]
