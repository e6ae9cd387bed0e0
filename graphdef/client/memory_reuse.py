"""Keeps freed array memory in the process for the next Session.run, as graphrun-cc does
(runner/core/memory_reuse.cc) and as TensorFlow's and ONNX Runtime's own allocators do.

numpy takes each array from malloc. By default glibc serves large blocks with fresh mmap'd pages,
and hands freed memory at the top of its heap back to the kernel, so every run of a model pays
page faults and page clearing for each large intermediate again. On this project's 2-core machine
that was 11% of the MLP training step of benchmarks/bench_training.py and 6% of MobileNetV2's run
at batch 8. Blocks up to 32 MiB (the highest threshold glibc adapts to by itself) then come from
the heap, and up to 256 MiB of free heap top stays in the process (the most the kept buffers of
ops/kept_buffers.py hold as well); larger blocks keep glibc's default.

Set once, by the first Session, for the whole process (malloc has no other scope):
GRAPHDEF_KEEP_MEMORY=0 leaves glibc's defaults. Elsewhere than glibc nothing changes.
"""

import ctypes
import os
import threading

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # malloc.h
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20
_lock = threading.Lock()
_done = False


def keep_freed_memory():
    """Tunes glibc's malloc once per process; True when it was tuned (now or before)."""
    global _done
    with _lock:
        if not _done:
            _done = True
            _done = _tune()
        return _done


def _tune():
    if os.environ.get("GRAPHDEF_KEEP_MEMORY") == "0":
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc's alone: another libc's mallopt numbers mean other things
        mallopt = libc.mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # the mmap threshold first: setting either one ends glibc's own adaptation of both
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
