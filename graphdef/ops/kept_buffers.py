"""Output buffers a kernel keeps between runs and writes into again once nothing else holds them.

A fresh array of tens of megabytes costs the kernel's page faults and zeroing on every run: on
this project's 2-core machine, writing a new 38 MB array took 10 ms against 5 ms into one used
before, as much as the convolution producing it (MobileNetV2's expansions at batch 8). A slot
keeps the memory of the last array it handed out and hands it out again when no array views it
any more; numpy makes the memory's owner every view's base, so its reference count tells.

The Session's donation rule (client/session_steps._sole_owner) counts references the same way;
kept_references() tells it the one a slot holds, so a kept buffer can still be donated. Both
rules trust sys.getrefcount only where its count is known: CPython 3.14's borrowed loads of
locals can leave getrefcount's argument uncounted, so from 3.14 on nothing is kept or donated
(REFCOUNTS_TRUSTED) until the counts are checked there.

Slots hold at most KEEP_MAX_BYTES together (one model at batch 8 keeps under 100 MB): past that a
new output is not kept, so runs at many batch sizes do not each leave a set of buffers behind.
"""

import ctypes
import sys

import numpy as np

ALIGN = 64  # oneDNN's AVX-512 loads and stores touch two cache lines for a row that starts mid-line
# Smaller arrays come from malloc's free lists without page faults, and a recently freed one is
# warm in the caches where a kept one waited a whole run (MobileNetV2 at batch 1 ran 5-20% slower
# keeping its 1-5 MB outputs, in A/B runs)
KEEP_MIN_BYTES = 16 << 20
KEEP_MAX_BYTES = 256 << 20
REFCOUNTS_TRUSTED = sys.version_info < (3, 14)
_kept = {}  # id of each owner the slots hold -> its size: an id stays in while its owner is alive


def address(array):
    """Where a C-contiguous array's first element is: through the buffer protocol for a writable
    one, a third of the time numpy's .ctypes takes (which every oneDNN call asked several times)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only, or empty
        return array.ctypes.data


def aligned_empty(shape, count, dtype=np.float32):
    """np.empty of `count` elements on a 64-byte boundary (numpy's arrays are only aligned to 16)."""
    return aligned_empty_at(shape, count, dtype)[0]


def aligned_empty_at(shape, count, dtype=np.float32):
    """(aligned_empty's array, its address): a kernel handing the address to a library saves
    asking numpy for it again (a microsecond or two each time, on every node of a run)."""
    dtype = np.dtype(dtype)
    if dtype.itemsize > 16 or ALIGN % dtype.itemsize:  # counted in bytes, then viewed
        nbytes = count * dtype.itemsize
        array, at = _view(np.empty(nbytes + ALIGN, np.uint8), (nbytes,), nbytes)
        return array.view(dtype).reshape(shape), at
    # malloc aligns to 16 bytes, so the 64-byte boundary is a whole number of elements on
    return _view(np.empty(count + ALIGN // dtype.itemsize, dtype), shape, count)


def _view(owner, shape, count):
    start = address(owner)
    skip = (-start % ALIGN) // owner.itemsize
    return owner[skip:skip + count].reshape(shape), start + skip * owner.itemsize


def kept_references(owner):
    """How many references to the array `owner` a slot holds (0 or 1)."""
    return 1 if id(owner) in _kept else 0


class OutputSlot:
    """The memory of one kernel's outputs, all of one shape and dtype, reused run after run.
    The caller serializes the calls (a slot is not thread-safe)."""

    __slots__ = ("_owner",)

    def __init__(self):
        self._owner = None

    def empty(self, shape, count, dtype=np.float32):
        """An uninitialized aligned array: the last one's memory when no array views it now."""
        return self.empty_at(shape, count, dtype)[0]

    def empty_at(self, shape, count, dtype=np.float32):
        """(empty's array, its address)."""
        nbytes = count * np.dtype(dtype).itemsize
        if nbytes < KEEP_MIN_BYTES or not REFCOUNTS_TRUSTED:
            return aligned_empty_at(shape, count, dtype)
        owner = self._owner
        # the references when nothing views it: the slot's, `owner`, getrefcount's argument
        if (owner is not None and sys.getrefcount(owner) == 3 and owner.dtype == dtype
                and owner.size >= count + ALIGN // owner.itemsize):
            return _view(owner, shape, count)
        out, at = aligned_empty_at(shape, count, dtype)
        self.release()
        if sum(_kept.values()) + out.base.nbytes <= KEEP_MAX_BYTES:
            self._owner = out.base
            _kept[id(out.base)] = out.base.nbytes
        return out, at

    def release(self):
        if self._owner is not None:
            _kept.pop(id(self._owner), None)
            self._owner = None

    def __del__(self):
        self.release()
