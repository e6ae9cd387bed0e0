""".npy files streamed front to back in flat memory: mapped for reading, appended for writing.

Reading: a mapped file's pages, once touched, stay in the process (and count in its
resident size) until the kernel needs the memory back, so streaming a file larger than
memory would look like it needs all of it. Each NpyMap therefore hands back the pages
behind the rows already done, with madvise(MADV_DONTNEED), a window at a time.

Writing: NpyWriter writes the header for the final shape, then each block of rows in
order with plain buffered writes. The rows are produced in order anyway, and write()
costs less than first-touch faults on a writable map of a fresh file.
"""

import math
import mmap
import os

import numpy as np
from numpy.lib import format as npy_format

RELEASE_BYTES = 8 << 20  # hand back pages in steps of this size: the most a stream keeps mapped


class NpyError(ValueError):
    """An .npy file that cannot be read or written as asked; the message is one line."""


class NpyMap:
    """The array in an .npy file, mapped read-only."""

    def __init__(self, path):
        self.path = str(path)
        try:
            with open(self.path, "rb") as f:
                shape, fortran, dtype, offset = _read_header(f, self.path)
                size = os.fstat(f.fileno()).st_size
                needed = offset + math.prod(shape) * dtype.itemsize
                if size < needed:
                    raise NpyError(f"{self.path}: the file is {size} bytes, its header promises {needed}")
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
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
        """Unmaps; arrays taken from `array` must be gone by now."""
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


class NpyWriter:
    """Writes an .npy file of `dtype` and `shape` front to back, a block of rows at a time."""

    def __init__(self, path, dtype, shape):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self._rows_left = self.shape[0]
        header = {"descr": npy_format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": self.shape}
        self._file = open(path, "wb", buffering=1 << 16)  # wrote fastest of the sizes tried
        try:
            if len(repr(header)) > 65000:  # version 1.0 headers hold at most 64 KiB
                npy_format.write_array_header_2_0(self._file, header)
            else:
                npy_format.write_array_header_1_0(self._file, header)
        except BaseException:
            self._file.close()
            raise

    def write(self, rows):
        """Appends `rows`, whose dtype and row shape must be the file's."""
        if rows.dtype != self.dtype or rows.shape[1:] != self.shape[1:] or len(rows) > self._rows_left:
            raise NpyError(f"rows of {rows.dtype} {list(rows.shape)} do not continue an array of "
                           f"{self.dtype} {list(self.shape)} with {self._rows_left} rows to go")
        self._file.write((rows if rows.flags.c_contiguous else np.ascontiguousarray(rows)).data)
        self._rows_left -= len(rows)

    def close(self):
        """Closes the file; NpyError if fewer rows were written than the header promises."""
        if self._file.closed:
            return
        self._file.close()
        if self._rows_left:
            raise NpyError(f"{self._rows_left} rows of {self.shape[0]} were never written")

    def abort(self):
        """Closes the file without the completeness check (the caller deletes it)."""
        self._file.close()
