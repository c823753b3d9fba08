"""``mx.nd.NDArray`` as far as image code uses it: ``asnumpy()``, ``shape``, ``dtype`` and NumPy conversion.

MXNet's NDArray is a tensor on a device with its own operators; what ``mx.image.imdecode`` callers do
with it is almost always ``.asnumpy()`` (or ``np.asarray``). This class holds a NumPy array on the CPU
and offers that much, plus indexing, ``astype`` and ``copy``; arithmetic, contexts and the ``mx.nd``
functions are not here (use NumPy on ``asnumpy()``).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from .. import _lib as L

np = L.numpy()

__all__ = ["NDArray"]


class NDArray:
    """An image (or any array) on the CPU, as MXNet's NDArray shows it to image code.

    ``asnumpy()`` returns a new NumPy array, as MXNet's does: writing to it leaves this NDArray alone."""

    __slots__ = ("_a",)

    def __init__(self, data: Any) -> None:
        """Wrap ``data`` (a NumPy array, or anything ``np.asarray`` takes) without copying it."""
        self._a = data if isinstance(data, np.ndarray) else np.asarray(data)

    def asnumpy(self) -> np.ndarray:
        """A C-contiguous NumPy copy of the data."""
        return np.array(self._a, copy=True, order="C")

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape, e.g. ``(H, W, 3)`` for a decoded colour image."""
        return tuple(self._a.shape)

    @property
    def dtype(self) -> np.dtype:
        """The element type (``numpy.uint8`` for decoded images)."""
        return self._a.dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._a.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(self._a.size)

    def astype(self, dtype: Any) -> "NDArray":
        """A copy converted to ``dtype``."""
        return NDArray(self._a.astype(dtype))

    def copy(self) -> "NDArray":
        """A copy with its own memory."""
        return NDArray(self.asnumpy())

    def __array__(self, dtype: Optional[Any] = None, copy: Optional[bool] = None) -> np.ndarray:
        """NumPy conversion: ``np.asarray(x)`` (no copy unless a dtype or ``copy=True`` asks for one)."""
        a = self._a if dtype is None else self._a.astype(dtype, copy=False)
        return np.array(a, copy=True) if copy else a

    def __len__(self) -> int:
        """The size of the first axis (NumPy's len)."""
        return len(self._a)

    def __getitem__(self, key: Any) -> "NDArray":
        """A view of part of the array, as an NDArray (MXNet's indexing also gives NDArrays)."""
        return NDArray(self._a[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[key] = np.asarray(value)

    def __repr__(self) -> str:
        return "%s\n<NDArray %s @cpu(0)>" % (self._a, "x".join(str(d) for d in self._a.shape))
