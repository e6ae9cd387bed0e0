""".npy files as memory-mapped arrays that can be walked from start to end in flat memory.

A mapped file's pages, once touched, stay in the process (and count in its resident
size) until the kernel needs the memory back. Streaming a file larger than memory
through a model would then look like it needs all of it. So each NpyMap hands back the
pages behind the rows already done, with madvise(MADV_DONTNEED), a window at a time.
On a shared file mapping that only unmaps the pages: data written through the map stays
in the page cache and reaches the file as usual.
"""

import math
import mmap
import os

import numpy as np
from numpy.lib import format as npy_format

RELEASE_BYTES = 8 << 20  # hand back pages in steps of this size: the most a stream keeps mapped


class NpyError(ValueError):
    """A file that cannot be mapped as an .npy array; the message is one line."""


class NpyMap:
    """The array in an .npy file, mapped read-only ("r") or read-write ("r+")."""

    def __init__(self, path, mode="r"):
        self.path = str(path)
        try:
            with open(self.path, "rb" if mode == "r" else "r+b") as f:
                shape, fortran, dtype, offset = _read_header(f, self.path)
                size = os.fstat(f.fileno()).st_size
                needed = offset + math.prod(shape) * dtype.itemsize
                if size < needed:
                    raise NpyError(f"{self.path}: the file is {size} bytes, its header promises {needed}")
                access = mmap.ACCESS_READ if mode == "r" else mmap.ACCESS_WRITE
                self._map = mmap.mmap(f.fileno(), 0, access=access)
        except FileNotFoundError:
            raise NpyError(f"{self.path}: no such file") from None
        except OSError as e:
            raise NpyError(f"{self.path}: cannot open ({e.strerror})") from None
        if hasattr(mmap, "MADV_SEQUENTIAL"):
            self._map.madvise(mmap.MADV_SEQUENTIAL)
        self.array = np.ndarray(shape, dtype, buffer=self._map, offset=offset, order="F" if fortran else "C")
        self._offset = offset
        self._row_bytes = math.prod(shape[1:]) * dtype.itemsize if shape else 0
        self._released = 0
        self._can_release = not fortran and hasattr(mmap, "MADV_DONTNEED")

    def done_with_rows(self, rows):
        """Rows before `rows` will not be touched again: release their pages, a window at a time."""
        if not self._can_release:
            return
        end = (self._offset + rows * self._row_bytes) // mmap.PAGESIZE * mmap.PAGESIZE
        if end - self._released >= RELEASE_BYTES:
            self._map.madvise(mmap.MADV_DONTNEED, self._released, end - self._released)
            self._released = end

    def close(self):
        """Unmaps; arrays taken from `array` must be gone by now.

        Written pages are left to the kernel to write back, as after any write(): no msync,
        which would make the caller wait for the disk (np.save does not wait either).
        """
        self.array = None
        mapped, self._map = self._map, None
        if mapped is None or mapped.closed:
            return
        try:
            mapped.close()
        except BufferError:
            pass  # a view is still alive somewhere; the map closes when it goes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _read_header(f, path):
    try:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = npy_format.read_array_header_2_0(f)
    except Exception as e:  # noqa: BLE001 - numpy raises several kinds; all mean "not an .npy"
        raise NpyError(f"{path}: not an .npy file ({' '.join(str(e).split())})") from None
    if dtype.hasobject:
        raise NpyError(f"{path}: holds Python objects, which cannot be memory-mapped")
    return shape, fortran, dtype, f.tell()


def create(path, dtype, shape):
    """A new .npy file of `dtype` and `shape` (contents zero), mapped read-write."""
    dtype = np.dtype(dtype)
    header = {"descr": npy_format.dtype_to_descr(dtype), "fortran_order": False, "shape": tuple(shape)}
    with open(path, "wb") as f:
        npy_format.write_array_header_2_0(f, header) if _needs_v2(header) else npy_format.write_array_header_1_0(f, header)
        f.truncate(f.tell() + math.prod(shape) * dtype.itemsize)  # sparse: no page is written yet
    return NpyMap(path, "r+")


def _needs_v2(header):
    return len(repr(header)) > 65000
