"""Batches a DataLoader worker hands the main process in shared memory it reuses.

torch sends every tensor a worker returns through new shared memory: the worker creates a segment,
writes the batch (the kernel allocates and zeroes a page at every 4 KiB), passes a file descriptor
over a socket, and the main process maps it, faults every page in again, and unmaps and frees it
when the batch goes. On a virtual machine that returns freed memory to its host, that costs 4-7 us a
page: 240 us for a 150 KB image, a third of what decoding and cropping it costs (docs/python.md).

Here a worker keeps a few slots of shared memory (a memfd each) and writes batches into them. The
main process maps a slot once (its file descriptor travels with the slot's first batch only), keeps
the mapping, and builds each batch as a view of it. When the main process lets go of a batch's
memory (no tensor, view or array of it is left), it writes "slot free" to a pipe the worker made;
the worker reads the pipe before it picks a slot. A slot is reused only when every copy of it sent
has been let go and the worker holds none of it, so a batch is never overwritten while anything
can see it. A worker that finds no free slot (the caller keeps many batches) makes its batch in new
shared memory, as torch does.

Linux only (memfd); elsewhere every batch takes torch's way.
"""
import mmap
import os
import select
import threading
import weakref
from typing import Any, Optional

import numpy as np
import torch

_SLOTS = 8  # per worker; the DataLoader keeps about prefetch_factor (2) + 2 of a worker's batches out
_RELEASE, _MAPPED = 0, 1  # the main process's two words to a worker (2 bytes: word, slot)


class _Slot:
    """One memfd of a worker's, its mapping, and who can still see it."""

    def __init__(self, size: int) -> None:
        self.fd = os.memfd_create("recio-batch", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, size)
        self.mm = mmap.mmap(self.fd, size)
        self.size = size
        self.held = False  # a tensor of the worker's still views it
        self.sent = 0  # times pickled for the main process
        self.freed = 0  # times the main process let go of it
        self.mapped = False  # the main process keeps a mapping (its fd need not travel again)

    def free(self) -> bool:
        return not self.held and self.sent == self.freed


class _Worker:
    """This process's slots (a DataLoader worker's) and the pipe the main process answers on."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.token = os.urandom(8).hex()  # names these slots in the main process (pids are reused)
        self.r, self.w = os.pipe()
        os.set_blocking(self.r, False)
        self.heard = False  # the main process has the pipe (it wrote to it)
        self.slots: list = []
        self.lock = threading.RLock()  # the DataLoader pickles batches on its queue's feeder thread

    def drain(self) -> None:
        """Read what the main process said: slots it mapped, slots it let go of."""
        while True:
            try:
                words = os.read(self.r, 4096)  # writes of 2 bytes are atomic: whole words only
            except BlockingIOError:
                return
            if not words:
                return
            self.heard = True
            for k in range(0, len(words) - 1, 2):
                slot = self.slots[words[k + 1]]
                if words[k] == _RELEASE:
                    slot.freed += 1
                else:
                    slot.mapped = True

    def take(self, nbytes: int) -> Optional[int]:
        """A free slot of at least nbytes, made if there are fewer than _SLOTS; None when all are out."""
        with self.lock:
            self.drain()
            fits = [i for i, s in enumerate(self.slots) if s.free() and s.size >= nbytes]
            if not fits and len(self.slots) < _SLOTS:
                self.slots.append(_Slot(max(nbytes, 1)))
                fits = [len(self.slots) - 1]
            if not fits:
                return None
            i = min(fits, key=lambda k: self.slots[k].size)
            self.slots[i].held = True
            return i

    def let_go(self, i: int) -> None:
        self.slots[i].held = False


_worker: Optional[_Worker] = None


def _this_worker() -> Optional[_Worker]:
    global _worker
    if not hasattr(os, "memfd_create"):
        return None
    if _worker is None or _worker.pid != os.getpid():  # a fork's child makes its own
        _worker = _Worker()
    return _worker


class _Pooled(torch.Tensor):
    """A worker's batch in one of its slots: pickled as (slot, shape, dtype), the slot's and the
    pipe's file descriptors with it until the main process has them. torch's operations on it give
    plain tensors (only this object is sent this way)."""

    __torch_function__ = torch._C._disabled_torch_function_impl

    def __reduce_ex__(self, protocol: Any) -> tuple:
        from multiprocessing.reduction import DupFd
        w, i = self._recio_slot
        with w.lock:
            w.drain()
            slot = w.slots[i]
            slot.sent += 1
            mem = None if slot.mapped else DupFd(slot.fd)
            pipe = None if w.heard else DupFd(w.w)
        return _rebuild, (w.token, i, slot.size, mem, pipe, tuple(self.shape), self.numpy().dtype.str)


def worker_batch(shape: tuple, dtype: Any) -> torch.Tensor:
    """An uninitialised tensor of shape and (torch) dtype for a DataLoader worker to return: in one of
    the worker's reused slots, else in new shared memory made as such (as torch's default_collate
    makes its batch; torch.empty(...).share_memory_() would fault a private allocation in and then
    copy it)."""
    count = int(np.prod(shape))
    e = torch.empty(0, dtype=dtype)
    try:
        np_dtype = e.numpy().dtype
    except TypeError:  # bfloat16 and the like: no NumPy view of a slot
        np_dtype = None
    w = _this_worker() if np_dtype is not None else None
    i = w.take(count * e.element_size()) if w is not None else None
    if i is None:
        storage = (e._typed_storage() if hasattr(e, "_typed_storage") else e.storage())._new_shared(count, device="cpu")
        return e.new(storage).resize_(shape)
    arr = np.frombuffer(w.slots[i].mm, dtype=np_dtype, count=count).reshape(shape)
    weakref.finalize(arr, w.let_go, i)  # the storage of every tensor made from it holds arr
    t = torch.from_numpy(arr).as_subclass(_Pooled)
    t._recio_slot = (w, i)
    return t


# ---- the main process's side --------------------------------------------------------------------

class _Seen:
    """A worker's slots as the main process maps them, and the pipe back to it."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pipe = -1
        self.maps: dict = {}

    def say(self, word: int, i: int) -> None:
        if os.getpid() != self.pid or self.pipe < 0:  # a forked child's copy speaks for no one
            return
        try:
            os.write(self.pipe, bytes((word, i)))
        except OSError:  # the worker is gone (EPIPE), or not reading: its slot stays out
            pass

    def gone(self) -> bool:
        """The worker closed its end (it exited)."""
        if self.pipe < 0:
            return False
        p = select.poll()
        p.register(self.pipe, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))


_seen: dict = {}  # worker token -> _Seen
_seen_lock = threading.Lock()  # each DataLoader's pin_memory thread rebuilds batches too


def _sweep() -> None:
    """Drop what is kept for workers that exited: their mappings go with the last batch of them."""
    for token in [t for t, s in _seen.items() if s.pid != os.getpid() or s.gone()]:
        s = _seen.pop(token)
        if s.pid == os.getpid() and s.pipe >= 0:
            fd, s.pipe = s.pipe, -1  # its batches still alive say nothing more (the number may be reused)
            os.close(fd)


def _rebuild(token: str, i: int, size: int, mem: Any, pipe: Any, shape: tuple, dtype: str) -> torch.Tensor:
    """A worker's pooled batch in the process that received it: a view of its slot's mapping."""
    with _seen_lock:
        arr = _view(_seen_for(token), token, i, size, mem, pipe, shape, dtype)
    return torch.from_numpy(arr)


def _seen_for(token: str) -> _Seen:
    s = _seen.get(token)
    if s is None or s.pid != os.getpid():
        _sweep()
        s = _seen[token] = _Seen()
    return s


def _view(s: _Seen, token: str, i: int, size: int, mem: Any, pipe: Any, shape: tuple, dtype: str) -> np.ndarray:
    if pipe is not None:
        fd = pipe.detach()
        if s.pipe < 0:
            os.set_blocking(fd, False)
            s.pipe = fd
        else:
            os.close(fd)
    if mem is not None:
        fd = mem.detach()
        try:
            if i not in s.maps:
                s.maps[i] = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        s.say(_MAPPED, i)
    if i not in s.maps:
        raise RuntimeError("recio.torch: a worker's batch (slot %d of %s) came without its shared memory" % (i, token))
    arr = np.frombuffer(s.maps[i], dtype=np.dtype(dtype), count=int(np.prod(shape))).reshape(shape)
    weakref.finalize(arr, s.say, _RELEASE, i)  # when no tensor, view or array of this batch is left
    return arr


def pooled(t: torch.Tensor) -> bool:
    """Whether t's memory lies in a worker's slot mapped by this process (for the tests)."""
    p = t.data_ptr()
    with _seen_lock:
        for s in _seen.values():
            for mm in s.maps.values():
                base = np.frombuffer(mm, dtype=np.uint8, count=1).ctypes.data
                if base <= p < base + len(mm):
                    return True
    return False


def slots() -> dict:
    """{worker token: number of its slots this process maps} (for the tests)."""
    with _seen_lock:
        return {token: len(s.maps) for token, s in _seen.items()}
