"""Feeds for the fuzzed graphs: plausible ones, hostile ones, and hostile feed files.

`session_feeds` builds a feed_dict for Session.run: values of each placeholder's dtype
and shape most of the time, otherwise the wrong dtype or rank, NaN, inf, empty arrays and
extreme integers. `cli_feed_args` builds graphrun's feed flags, writing .npy and .npz
files whose headers lie, hold Python objects or a pickle (which must never be loaded:
loading it trips `TRIPWIRE`), are cut short or use exotic dtypes.
"""

import io
import pickle
import struct
import zipfile

import numpy as np

INT_EDGES = [0, 1, -1, 2, 3, 9, 99, -99, 2 ** 31 - 1, -(2 ** 31), 2 ** 63 - 1]
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e38, 1e-40]
TRIPWIRE = {"unpickled": False}


def trip():
    """Called only if a pickle from a fuzzed file is ever loaded: a finding."""
    TRIPWIRE["unpickled"] = True


class _Trap:
    def __reduce__(self):
        return (trip, ())


def _dims(tensor, rng):
    dims = tensor.shape.dims
    if dims is None:
        dims = [None] * rng.randrange(4)
    return [rng.randrange(5) if d is None else d for d in dims]


def plausible(tensor, rng):
    dtype = tensor.dtype.np
    dims = _dims(tensor, rng)
    # the nonzero dims count too: an empty [65536, 65536, 0] is cheap as an array, but the
    # harness's own .tolist() for a JSON feed made 2^32 empty lists (slow enough to pass for a hang)
    if any(d > 1 << 16 for d in dims) or int(np.prod([max(d, 1) for d in dims], dtype=object)) > 1 << 16:
        dims = [min(d, 1) for d in dims]
    n = int(np.prod(dims, dtype=np.int64))
    if dtype.kind == "f":
        values = np.array([rng.uniform(-3, 3) for _ in range(n)], dtype)
    elif dtype.kind == "b":
        values = np.array([rng.random() < 0.5 for _ in range(n)], dtype)
    else:
        values = np.array([rng.randrange(0, 4) for _ in range(n)]).astype(dtype)
    return values.reshape(dims)


def hostile(tensor, rng):
    """A value Session.run should refuse or the graph should survive."""
    base = plausible(tensor, rng)
    kind = rng.randrange(9)
    if kind == 0:  # another dtype
        return base.astype(rng.choice([np.float64, np.int64, np.bool_, np.uint8, np.float16, np.complex64]))
    if kind == 1:  # another rank
        return base.reshape(base.shape + (1,)) if rng.random() < 0.5 or not base.size else base.reshape(-1)[0]
    if kind == 2 and base.dtype.kind == "f":
        base = base.copy()
        base.reshape(-1)[: max(1, base.size // 2)] = rng.choice([np.nan, np.inf, -np.inf])
        return base
    if kind == 3:  # empty along some dim
        dims = list(base.shape) or [0]
        dims[rng.randrange(len(dims))] = 0
        return np.zeros(dims, base.dtype)
    if kind == 4 and base.dtype.kind in "iu":
        edge = rng.choice(INT_EDGES)
        try:
            return np.full(base.shape, edge).astype(base.dtype)
        except (OverflowError, ValueError):
            return base
    if kind == 5:
        return rng.choice([["a", "b"], None, [[1, 2], [3]], "x", object(), [1.5], True, 2 ** 70])
    if kind == 6:
        return np.array([rng.choice(FLOAT_EDGES)] * max(1, base.size)).reshape(base.shape or ())
    if kind == 7:  # a large (but allowed) value where the graph expects a small one
        return np.ones((rng.choice([1, 64, 1000]),) + (1,) * base.ndim, base.dtype)
    return base


def session_feeds(graph, rng):
    feeds = {}
    for op in graph.get_operations():
        if op.type not in ("Placeholder", "PlaceholderWithDefault"):
            continue
        if op.type == "PlaceholderWithDefault" and rng.random() < 0.5:
            continue
        tensor = op.outputs[0]
        feeds[tensor] = hostile(tensor, rng) if rng.random() < 0.3 else plausible(tensor, rng)
    return feeds


# -- graphrun's flags -------------------------------------------------------------------------

def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


def _header(descr, shape, fortran=False, version=1):
    text = repr({"descr": descr, "fortran_order": fortran, "shape": tuple(shape)}).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + b" " * pad + b"\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(text)) + text


def hostile_npy(tensor, rng):
    """Bytes of an .npy file for `tensor`'s placeholder, honest or not."""
    base = plausible(tensor, rng)
    kind = rng.randrange(12)
    if kind == 0:
        return npy_bytes(base)
    if kind == 1:  # the header claims far more than the data
        return _header(base.dtype.str, [10 ** 6, 10 ** 6]) + base.tobytes()
    if kind == 2:  # the header claims a little more than the data
        return _header(base.dtype.str, [base.size + 3]) + base.tobytes()
    if kind == 3:  # an object array: a pickle follows the header
        return _header("|O", [1]) + pickle.dumps([_Trap()], protocol=2)
    if kind == 4:  # a bare pickle, no .npy header at all
        return pickle.dumps(_Trap())
    if kind == 5:
        return npy_bytes(base)[: rng.randrange(1, 60)]
    if kind == 6:
        return _header(rng.choice(["<c8", "<U3", "|V4", "<M8[s]", "|S2", ">f4", ">i8", "<f2", "|b1"]),
                       base.shape) + bytes(64)
    if kind == 7:
        return _header(base.dtype.str, base.shape, fortran=True, version=rng.choice([1, 2, 3])) + base.tobytes()
    if kind == 8:  # overflowing shape product
        return _header("<f4", [2 ** 32, 2 ** 32, 2 ** 32]) + bytes(16)
    if kind == 9:
        return _header("<f4", [-1, 5]) + bytes(16)
    if kind == 10:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", 40) + b"{'descr': __import__('os')}".ljust(40)
    return _npz_bytes(tensor, rng)  # an archive given where a single array is expected


def _npz_bytes(tensor, rng, key=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        name = (key or tensor.op.name) + ".npy"
        z.writestr(name, hostile_npy(tensor, rng) if rng.random() < 0.8 else npy_bytes(plausible(tensor, rng)))
        if rng.random() < 0.2:
            z.writestr("junk.npy", pickle.dumps(_Trap()))
    return buf.getvalue()


def json_value(tensor, rng):
    kind = rng.randrange(10)
    if kind < 4:
        return _json_of(plausible(tensor, rng))
    return rng.choice([
        "1e400", "NaN", "Infinity", "[" * 5000 + "]" * 5000, "[1, [2]]", '"text"', "null", "{}",
        "[true, 1]", str(2 ** 70), "[[1,2],[3]]", "[]", "[[]]", "-0", "1.5", "[1e308, -1e308]",
        "[" * 40 + "1" + "]" * 40, "18446744073709551616", "-9223372036854775809", "0x10",
    ])


def _json_of(array):
    import json
    return json.dumps(array.tolist())


def cli_feed_args(graph, rng, workdir):
    """argv feed flags for graphrun, with any files they name written under `workdir`."""
    args = []
    holders = [op for op in graph.get_operations() if op.type in ("Placeholder", "PlaceholderWithDefault")]
    for i, op in enumerate(holders):
        tensor = op.outputs[0]
        choice = rng.randrange(6)
        name = op.name if rng.random() < 0.95 else rng.choice(["nope", op.name + ":1", op.name + ":0"])
        if choice <= 1:
            args += ["--feed", f"{name}={json_value(tensor, rng)}"]
        elif choice == 2:
            path = f"{workdir}/f{i}.npy"
            with open(path, "wb") as f:
                f.write(hostile_npy(tensor, rng))
            args += ["--feed", f"{name}=@{path}"]
        elif choice == 3:
            path = f"{workdir}/f{i}.npz"
            with open(path, "wb") as f:
                f.write(_npz_bytes(tensor, rng, key=name))
            args += ["--feeds", path]
        elif choice == 4:
            dims = rng.choice([[10 ** 6, 10 ** 6], [2 ** 31, 2 ** 31], [2 ** 63], [-1], [3, 4], [],
                               [99999999999999999999], [0], [2 ** 62, 2 ** 62, 4]])
            args += ["--shape", f"{name}={','.join(map(str, dims))}"]
    if rng.random() < 0.7:
        args.append("--random")
    if rng.random() < 0.1:
        args += ["--seed", str(rng.choice([0, 2 ** 64 - 1, 2 ** 64, -1]))]
    return args
