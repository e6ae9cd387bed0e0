"""The largest single tensor the runtime will allocate, checked before allocating it.

A hostile or mistaken graph can ask for a tensor of any size with a few bytes (a Fill
with dims [10**6, 10**6], a Const whose shape claims [2**31, 2**31], a .npy header that
lies). numpy would try, and the process would die or swap; instead every place where an
output's size comes from a value asks `check` first, and a tensor over the limit is
refused with one line naming what asked for it, its shape and its size.

The limit is GRAPHDEF_MAX_TENSOR_BYTES (bytes) when set, else the machine's physical
memory. graphrun-cc applies the same rule with the same words.
"""

import math
import os

from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError

ENV = "GRAPHDEF_MAX_TENSOR_BYTES"
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


class TensorTooLarge(ResourceExhaustedError):
    """Raised by a kernel, which does not know its node; Session.run adds the node's name."""


def physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 1 << 34


_cache = (None, None)


def max_tensor_bytes():
    """The limit in bytes (read from the environment on each call, so tests can change it)."""
    global _cache
    text = os.environ.get(ENV)
    if _cache[0] == text and _cache[1] is not None:
        return _cache[1]
    if text is None or not text.strip():
        limit = physical_memory()
    else:
        try:
            limit = int(text.strip())
        except ValueError:
            limit = -1
        if limit < 0:
            raise InvalidArgumentError(f"{ENV} must be a whole number of bytes, got {text!r}")
    _cache = (text, limit)
    return limit


def format_bytes(n):
    """3.6 TiB: binary units, one decimal (plain bytes below 1 KiB)."""
    if n < 1024:
        return f"{n} B"
    if n >= 1024 ** len(_UNITS):  # beyond YiB (shape products of dozens of dims): float() would overflow
        return f"about 10^{len(str(n)) - 1} B"
    value, unit = float(n), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.1f} {_UNITS[unit]}"


def tensor_bytes(dims, itemsize):
    """Exact byte size of a tensor of `dims` (Python ints: no int64 overflow); None if a dim is unknown."""
    n = itemsize
    for d in dims:
        if d is None:
            return None
        n *= int(d)
    return n


def describe(dims, dtype_name):
    return "[" + ",".join(str(int(d)) for d in dims) + f"] {dtype_name}"


def check(dims, dtype, what="output", where=None, error=None):
    """Raises unless a tensor of `dims` and numpy `dtype` fits the limit; returns its byte size.

    `where` prefixes the message ("node 'x' (Const): attr 'value'"); without it the error is
    a TensorTooLarge that Session.run completes with the running node's name. `error` picks
    another exception type for callers whose contract is a different error class.
    """
    import numpy as np
    dtype = np.dtype(dtype)
    dims = tuple(map(int, dims))
    if dims and min(dims) < 0:
        return 0  # not a size at all: the caller's own validation names that mistake
    # every kernel asks on every run, so the common case is kept to a few builtin calls
    size = math.prod(dims) * dtype.itemsize
    limit = max_tensor_bytes()
    if size == 0 and tensor_bytes([d for d in dims if d], dtype.itemsize) >= 1 << 63:
        # empty, yet numpy cannot even describe it: its other dims multiply past int64
        text = (f"{what} {describe(dims, _dtype_name(dtype))} is empty but its other dims multiply past "
                "2^63, more than any runtime can index")
        raise (error or (ResourceExhaustedError if where else TensorTooLarge))(f"{where}: {text}" if where else text)
    if size > limit:
        text = (f"{what} {describe(dims, _dtype_name(dtype))} would take {format_bytes(size)}, "
                f"over the limit of {format_bytes(limit)} (set {ENV} to change it)")
        if where:
            text = f"{where}: {text}"
        raise (error or (ResourceExhaustedError if where else TensorTooLarge))(text)
    return size


def check_count(count, dtype, what="output", where=None):
    """The same rule for a flat tensor of `count` elements."""
    return check((count,), dtype, what, where)


def _dtype_name(dtype):
    return "bool" if dtype.kind == "b" else dtype.name
