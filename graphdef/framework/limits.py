"""The largest single tensor the runtime will allocate, checked before allocating it.

A hostile or mistaken graph can ask for a tensor of any size with a few bytes (a Fill
with dims [10**6, 10**6], a Const whose shape claims [2**31, 2**31], a .npy header that
lies). numpy would try, and the process would die or swap; instead every place where an
output's size comes from a value asks `check` first, and a tensor over the limit is
refused with one line naming what asked for it, its shape and its size.

The limit is GRAPHDEF_MAX_TENSOR_BYTES (bytes) when set, else the memory this process may
really have: the smallest of physical memory, its cgroup's memory limit (v2 memory.max or v1
memory.limit_in_bytes, on its own cgroup and every ancestor) and RLIMIT_AS / RLIMIT_DATA. So a
tensor too large for a container or a ulimit is refused with the one line, not ended by the
kernel's OOM killer. graphrun-cc (runner/core/tensor_limit.cc) applies the same rule with the
same words.

The limit is per tensor, and a run holds many: a tensor of FREE_CHECK_BYTES or more is also checked
against the memory free at that moment (free_memory_now), so a run whose tensors together outgrow
the machine is refused at the first one that does not fit instead of being killed.
"""

import math
import os
import resource

from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError

ENV = "GRAPHDEF_MAX_TENSOR_BYTES"
MAX_RANK = 64  # numpy's most dims; graphrun-cc refuses more in the same words (kMaxRank)
ROOT_ENV = "GRAPHDEF_CGROUP_ROOT"  # tests: a directory read in place of / for the cgroup files
# cgroup v1 writes "no limit" as the largest page-aligned int64 (9223372036854771712 with 4 KiB pages)
_V1_UNLIMITED = 1 << 62
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


class TensorTooLarge(ResourceExhaustedError):
    """Raised by a kernel, which does not know its node; Session.run adds the node's name."""


def physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not every platform reports it
        return 1 << 34


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _cgroup_mounts(root):
    """(cgroup2 mount, v1 memory mount): each (mount point, mount root) from mountinfo, or None."""
    v2 = v1 = None
    for line in (_read(os.path.join(root, "proc/self/mountinfo")) or "").splitlines():
        fields = line.split()
        if "-" not in fields[6:]:
            continue
        dash = fields.index("-", 6)
        if len(fields) < dash + 4:
            continue
        fstype, options = fields[dash + 1], fields[dash + 3].split(",")
        mount = (fields[4].replace("\\040", " "), fields[3])
        if fstype == "cgroup2" and v2 is None:
            v2 = mount
        elif fstype == "cgroup" and "memory" in options and v1 is None:
            v1 = mount
    return v2, v1


def _cgroup_dirs(root, mount, path):
    """The directories of cgroup `path` and its ancestors under `mount`, deepest first."""
    point, mount_root = mount
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
        path = path[len(mount_root):]  # the mount shows only the subtree from its root
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    base = os.path.join(root, point.lstrip("/"))
    return [os.path.join(base, *parts[:n]) for n in range(len(parts), -1, -1)]


def _smallest_limit(dirs, name, unlimited):
    found = None
    for directory in dirs:
        text = _read(os.path.join(directory, name))
        value = text.strip() if text is not None else ""
        if value.isascii() and value.isdigit() and int(value) < unlimited:
            found = int(value) if found is None else min(found, int(value))
    return found


def cgroup_memory_limit(root="/"):
    """The tightest memory limit of this process's cgroups (v2 memory.max, v1 memory.limit_in_bytes,
    on its own cgroup and each ancestor), in bytes; None when nothing limits it. `root` stands for /,
    so tests point it at a directory of fake files."""
    limits = [_smallest_limit(dirs, files[0], unlimited) for dirs, files, unlimited in _memory_cgroups(root)]
    limits = [n for n in limits if n is not None]
    return min(limits) if limits else None


_V2_FILES, _V1_FILES = ("memory.max", "memory.current"), ("memory.limit_in_bytes", "memory.usage_in_bytes")


def _memory_cgroups(root):
    """(directories deepest first, (limit file, usage file), the limit meaning none) of each memory
    cgroup hierarchy this process is in."""
    v2_mount, v1_mount = _cgroup_mounts(root)
    for line in (_read(os.path.join(root, "proc/self/cgroup")) or "").splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "" and v2_mount is not None:
            yield _cgroup_dirs(root, v2_mount, path), _V2_FILES, 1 << 64
        elif "memory" in controllers.split(",") and v1_mount is not None:
            yield _cgroup_dirs(root, v1_mount, path), _V1_FILES, _V1_UNLIMITED


def rlimit_memory():
    """The smaller soft limit of RLIMIT_AS and RLIMIT_DATA in bytes; None when neither is set."""
    found = []
    for which in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY and soft >= 0:
            found.append(soft)
    return min(found) if found else None


FREE_CHECK_BYTES = 64 << 20  # below this, reading /proc would cost more than the tensor's own work


def _meminfo_field(text, name):
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key == name and rest.split() and rest.split()[0].isdigit():
            return int(rest.split()[0]) * 1024
    return None


def _cgroup_headroom(root):
    """The least room left under a limit over this process's cgroups: limit minus usage (v2
    memory.max and memory.current, v1 memory.limit_in_bytes and memory.usage_in_bytes)."""
    rooms = []
    for dirs, (limit_file, usage_file), unlimited in _memory_cgroups(root):
        for directory in dirs:
            limit = _smallest_limit([directory], limit_file, unlimited)
            usage = _smallest_limit([directory], usage_file, 1 << 64)
            if limit is not None and usage is not None:
                rooms.append(max(0, limit - usage))
    return min(rooms) if rooms else None


def free_memory_now(root="/"):
    """The bytes this process can still get at this moment, or None when nothing says: the least of
    the kernel's MemAvailable, the room under its cgroups' limits, and RLIMIT_AS / RLIMIT_DATA less
    its address space / data segment. `root` stands for /, as for cgroup_memory_limit."""
    found = []
    meminfo = _read(os.path.join(root, "proc/meminfo"))
    if meminfo is not None and (available := _meminfo_field(meminfo, "MemAvailable")) is not None:
        found.append(available)
    if (room := _cgroup_headroom(root)) is not None:
        found.append(room)
    status = _read(os.path.join(root, "proc/self/status")) or ""
    for which, field in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft = resource.getrlimit(which)[0]
        used = _meminfo_field(status, field)
        if soft != resource.RLIM_INFINITY and soft >= 0 and used is not None:
            found.append(max(0, soft - used))
    return min(found) if found else None


def default_max_tensor_bytes(root="/"):
    """The limit without GRAPHDEF_MAX_TENSOR_BYTES: the least of physical memory, the cgroup limit
    and the rlimits (at least 1 byte, as the variable must be)."""
    candidates = [physical_memory(), cgroup_memory_limit(root), rlimit_memory()]
    return max(1, min(n for n in candidates if n is not None))


_cache = (None, None)


def max_tensor_bytes():
    """The limit in bytes (read from the environment on each call, so tests can change it)."""
    global _cache
    text = os.environ.get(ENV)
    key = (text, None if text and text.strip() else os.environ.get(ROOT_ENV))
    if _cache[0] == key and _cache[1] is not None:
        return _cache[1]
    if text is None or not text.strip():
        limit = default_max_tensor_bytes(os.environ.get(ROOT_ENV) or "/")
    else:
        try:
            limit = int(text.strip())
        except ValueError:
            limit = -1
        if limit < 0:
            raise InvalidArgumentError(f"{ENV} must be a whole number of bytes, got {text!r}")
    _cache = (key, limit)
    return limit


def out_of_memory_text():
    """What a failed allocation under the limit reports after the node's name, in graphrun-cc's words.

    numpy's own MemoryError text is left out: graphrun-cc has none to give, and the line must
    read the same in both runtimes.
    """
    try:
        limit = f", under the limit of {format_bytes(max_tensor_bytes())} per tensor"
    except InvalidArgumentError:
        limit = ""
    return f"out of memory{limit} (free memory, or set {ENV} lower)"


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


def describe_dims(dims):
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


def describe(dims, dtype_name):
    return f"{describe_dims(dims)} {dtype_name}"


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
    if size == 0 and (other := tensor_bytes([d for d in dims if d], dtype.itemsize)) > limit:
        # empty, yet its other dims still cost: kernels compute strides from them, and printing
        # [10**12, 0] writes 10**12 "[]"; so they must fit as if the zero dims were ones
        needed = "more than 16.0 EiB" if other >= 1 << 64 else format_bytes(other)
        _refuse(f"{what} {describe(dims, _dtype_name(dtype))} is empty, but its other dims would take {needed}, "
                f"over the limit of {format_bytes(limit)} (set {ENV} to change it)", where, error)
    if size > limit:
        # past 2^64 bytes graphrun-cc's unsigned product overflows, and says so: the same words here
        needed = "more than 16.0 EiB" if size >= 1 << 64 else format_bytes(size)
        _refuse(f"{what} {describe(dims, _dtype_name(dtype))} would take {needed}, "
                f"over the limit of {format_bytes(limit)} (set {ENV} to change it)", where, error)
    if size >= FREE_CHECK_BYTES:
        free = free_memory_now(os.environ.get(ROOT_ENV) or "/")
        if free is not None and size > free:
            _refuse(f"{what} {describe(dims, _dtype_name(dtype))} would take {format_bytes(size)}, more than the "
                    f"{format_bytes(free)} of memory free now (free memory, or ask for less)", where, error)
    return size


def _refuse(text, where, error):
    raise (error or (ResourceExhaustedError if where else TensorTooLarge))(f"{where}: {text}" if where else text)


def check_count(count, dtype, what="output", where=None):
    """The same rule for a flat tensor of `count` elements."""
    return check((count,), dtype, what, where)


def _dtype_name(dtype):
    return "bool" if dtype.kind == "b" else dtype.name
