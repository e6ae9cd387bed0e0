"""Keeps freed array memory in the process for the next Session.run, as graphrun-cc does
(runner/core/memory_reuse.cc) and as TensorFlow's and ONNX Runtime's own allocators do.

numpy takes each array from malloc. By default glibc serves large blocks with fresh mmap'd pages,
and hands freed memory at the top of its heap back to the kernel, so every run of a model pays
page faults and page clearing for each large intermediate again. On this project's 2-core machine
that was 11% of the MLP training step of benchmarks/bench_training.py and 6% of MobileNetV2's run
at batch 8. Here blocks up to 32 MiB (the highest threshold glibc adapts to by itself) come from
the heap, and glibc returns the free top of its heap only past 256 MiB. Free blocks below a live
one stay in the process in any case (as they always do in glibc), so a process holds about the
heap its largest run needed; larger blocks keep glibc's default and go back when freed.

Set once, by the first Session, for the whole process (malloc has no other scope):
GRAPHDEF_KEEP_MEMORY=0 leaves glibc's defaults. Only on Linux with glibc; elsewhere nothing changes.
"""

import ctypes
import os
import sys
import threading

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # malloc.h
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20
_lock = threading.Lock()
_tuned = None  # None until the first Session asks; then whether malloc was tuned


def keep_freed_memory():
    """Tunes glibc's malloc, the first time it is called in the process; True when it did."""
    global _tuned
    with _lock:
        if _tuned is None:
            _tuned = False  # a failure below is not tried again by every later Session
            _tuned = _tune()
        return _tuned


def _tune():
    if os.environ.get("GRAPHDEF_KEEP_MEMORY") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc's alone: another libc's mallopt numbers mean other things
        mallopt = libc.mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # Setting either threshold ends glibc's adaptation of both, so the mmap threshold goes first;
    # mallopt returns 0 only for a value out of its range, which neither of these is
    tuned = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) and tuned)
