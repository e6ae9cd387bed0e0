"""graphrun's --feed NAME=VALUE and --feeds FILE.npz: find the placeholder, read the value, convert it.

Values are parsed, never evaluated (a string may be given as {"b64": "..."} for bytes that are not
UTF-8, as TF Serving's REST API and --json write them): `@path` and .npz archives are read with
numpy.load(allow_pickle=False), anything else with json.loads. The conversion to the
placeholder's dtype refuses to change a value (1.5 into int32, 300 into uint8, true into
float32) rather than silently casting, and the shape must be compatible with the
placeholder's. Every message starts with a label naming the flag that gave the value
("--feed x", "--feeds data.npz: 'x'").
"""

import base64
import binascii
import json
import math
import os
import zipfile

import numpy as np

from graphdef.ops import unsupported as unsupported_ops
from graphdef.framework import dtypes, limits, npy_check
from graphdef.framework.graph import Operation
from graphdef.client.output_format import format_float
from graphdef.framework.shapes import show

PLACEHOLDER_TYPES = ("Placeholder", "PlaceholderWithDefault")
DAMAGED_MEMBER = "the member is damaged (its CRC-32 does not match); write the archive again"


class FeedError(ValueError):
    """A --feed that cannot be used; the message is one line and names the feed."""


# -- the placeholders ---------------------------------------------------------------------

def placeholders(graph):
    """The graph's feedable nodes, in graph order (one of a dtype graphdef cannot hold is not one)."""
    return [op for op in graph.get_operations()
            if op.type in PLACEHOLDER_TYPES and not unsupported_ops.is_unsupported(op)]


def describe(op):
    """`x (float32, [?,2])`: how errors name a placeholder."""
    tensor = op.outputs[0]
    return f"{op.name} ({tensor.dtype.name}, {show(tensor.shape)})"


def _placeholder_list(graph):
    found = placeholders(graph)
    if not found:
        return "the graph has no placeholders"
    return "the graph's placeholders: " + ", ".join(describe(op) for op in found)


def find_placeholder(graph, name):
    """The output tensor of placeholder `name` ("x" or "x:0"), or FeedError listing them all."""
    node, sep, index = name.rpartition(":")
    if not (sep and index.isdigit()):
        node, index = name, "0"
    try:
        op = graph.get_operation_by_name(node)
    except KeyError:
        problem = f"the graph has no node '{node}'"
    else:
        if op.type not in PLACEHOLDER_TYPES:
            problem = f"'{node}' is a {op.type} node, not a placeholder"
        elif int(index) != 0:
            problem = "a placeholder has only output 0"
        elif unsupported_ops.is_unsupported(op):
            problem = (f"its dtype ({unsupported_ops.dtype_of(op)}) is one graphdef cannot hold, so graphdef "
                       "cannot run what reads it")
        else:
            return op.outputs[0]
    raise FeedError(f"cannot feed '{name}': {problem}; {_placeholder_list(graph)}")


def unfed_placeholders(targets, fed):
    """Placeholders (without a default) that computing `targets` needs and `fed` lacks.

    `targets` are tensors to compute or operations to run for their effects (graphrun's
    --run). Walks inputs and control inputs from them, stopping at fed tensors, which is
    the set of nodes Session.run executes.
    """
    stack = [op for op in (_computed(t, fed) for t in targets) if op is not None]
    seen = set(stack)
    missing = []
    while stack:
        op = stack.pop()
        if op.type == "Placeholder":
            missing.append(op)
        deps = [t.op for t in op.inputs if t not in fed] + list(op.control_inputs)
        for dep in deps:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    order = {op: i for i, op in enumerate(missing[0].graph.get_operations())} if missing else {}
    return sorted(missing, key=order.get)


def _computed(target, fed):
    """The node that computes or runs `target`, or None when a feed replaces it."""
    if isinstance(target, Operation):
        return None if any(t in fed for t in target.outputs) else target
    return None if target in fed else target.op


# -- parsing ------------------------------------------------------------------------------

def split_feed(text):
    """`NAME=VALUE` -> (NAME, VALUE); the value may itself contain '='."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise FeedError(f"--feed expects NAME=VALUE, got {text!r}")
    if not value:
        raise FeedError(f"--feed {name}: the value is empty")
    return name, value


def parse_value(text, label):
    """The array `text` denotes: `@file.npy`, or JSON (a number, true/false, a string, nested arrays)."""
    if text.startswith("@"):
        return _load_npy(text[1:], label)
    return _from_json(text, label)


def _load_npy(path, label):
    _check_npy_file(path, label)
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise FeedError(f"{label}: no such file '{path}'") from None
    except OSError as e:  # the system's words only, as graphrun-cc gives them
        raise FeedError(f"{label}: cannot read '{path}' ({e.strerror or _one_line(e)})") from None
    except Exception:  # noqa: BLE001 - numpy raises many kinds for a bad file; all mean "unreadable"
        raise FeedError(f"{label}: '{path}': {_unreadable(path)}") from None
    if not isinstance(loaded, np.ndarray):
        if hasattr(loaded, "close"):
            loaded.close()
        raise FeedError(f"{label}: '{path}' is an .npz archive; give a single .npy array")
    if loaded.dtype.kind not in npy_check.FEEDABLE_KINDS:
        raise FeedError(f"{label}: '{path}' holds {loaded.dtype} data; "
                        "only numbers, bools and strings can be fed")
    return loaded


def _unreadable(path):
    """What a file np.load failed on is, in graphrun-cc's words (its header passed npy_check)."""
    try:
        with open(path, "rb") as f:
            return "malformed .npy header" if f.read(len(_NPY_MAGIC)) == _NPY_MAGIC else "not an .npy file"
    except OSError:
        return "not an .npy file"


def _check_npy_file(path, label):
    """Refuses an .npy whose header lies, names objects or is over the size limit, before np.load.

    An .npz archive (a zip) is left to np.load, which reports it; other unreadable files too.
    """
    try:
        with open(path, "rb") as f:
            if f.read(2) == b"PK":
                return
            f.seek(0)
            try:
                npy_check.check(f, os.fstat(f.fileno()).st_size, f"{label}: '{path}'")
            except npy_check.NpyHeaderError as e:
                raise FeedError(_header_problem(e, f, f"{label}: '{path}'")) from None
    except OSError:
        return  # np.load reports a missing or unreadable file in its own words


def _check_npz_member(archive, key, where):
    """The same check for one member of an .npz archive, read from the zip without numpy."""
    member = key if key in archive.zip.namelist() else key + ".npy"
    problem = None
    try:
        size = archive.zip.getinfo(member).file_size
        with archive.zip.open(member) as f:
            try:
                npy_check.check(f, size, where)
            except npy_check.NpyHeaderError as e:
                problem = _header_problem(e, f, where)
    except (KeyError, OSError, zipfile.BadZipFile, EOFError, ValueError) as e:
        problem = f"{where}: {_member_problem(e)}"
    if problem is not None:
        raise FeedError(problem)


def _member_problem(error):
    if isinstance(error, zipfile.BadZipFile) and str(error).startswith("Bad CRC-32"):
        return DAMAGED_MEMBER  # graphrun-cc's words: libzip's and zipfile's differ
    return f"cannot read the array ({_one_line(error)})"


def _header_problem(error, f, where):
    """The line for an .npy header npy_check refused: its own words where it names the problem
    (objects, missing data), else "not an .npy file" or "malformed .npy header", as graphrun-cc
    says; the parser's detail (numpy's, or ast's) is left out."""
    text = str(error)
    if text.startswith(where):
        return text
    try:
        f.seek(0)
        magic = f.read(len(_NPY_MAGIC))
    except (OSError, ValueError):
        magic = b""
    return f"{where}: " + ("malformed .npy header" if magic == _NPY_MAGIC else "not an .npy file")


_NPY_MAGIC = b"\x93NUMPY"


def _nesting_depth(text):
    """How deep the text's arrays and objects nest, counted outside strings, without parsing it
    (json.loads recurses once per level and would run out of stack first)."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _reject_constant(token):
    raise ValueError(f"{token} is not JSON")


def _from_json(text, label):
    depth = _nesting_depth(text)
    if depth > limits.MAX_RANK:
        raise FeedError(f"{label}: the arrays nest {depth} deep, more than the {limits.MAX_RANK} dims a tensor "
                        "may have")
    try:
        parsed = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        # the json module's detail (a line and column) is not given: graphrun-cc's parser words it otherwise
        raise FeedError(f"{label}: cannot parse {_clip(text)!r} as JSON; "
                        "give a number, true/false, a nested array, or @file.npy") from None
    parsed = _b64_objects(parsed, label)
    grid, kinds = _grid(parsed)
    if grid is None or list in kinds:
        raise FeedError(f"{label}: the nested arrays are not rectangular")
    if kinds and kinds <= {str, bytes}:
        return _strings(grid, label)
    if not kinds <= {bool, int, float}:
        raise FeedError(f"{label}: {_clip(text)!r} is not a number, true/false, a string, "
                        "or a rectangular nested array of one kind of them")
    return _typed(grid, kinds, label)


def _compact(parsed):
    """JSON as graphrun-cc echoes it: no spaces, keys sorted, text unescaped but for controls."""
    return json.dumps(parsed, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _b64_objects(parsed, label):
    """{"b64": "..."} objects (TF Serving's REST form of bytes, as --json writes bytes that are not
    UTF-8) replaced by their bytes; any other object is refused."""
    if isinstance(parsed, list):
        return [_b64_objects(item, label) for item in parsed]
    if not isinstance(parsed, dict):
        return parsed
    encoded = parsed.get("b64")
    if set(parsed) != {"b64"} or not isinstance(encoded, str):
        raise FeedError(f"{label}: a JSON object in a feed must be {{\"b64\": \"<base64>\"}} (bytes), got "
                        f"{_clip(_compact(parsed))}")
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise FeedError(f"{label}: {_clip(encoded)!r} is not base64") from None


def _grid(parsed):
    """The parsed JSON as an object ndarray and the set of its element types.

    dtype=object keeps Python's bools, ints (of any size) and floats apart; a ragged
    array shows up as elements that are lists, and so as a wrong element type.
    """
    try:
        grid = np.array(parsed, dtype=object)
    except ValueError:  # arrays of different lengths at one depth
        return None, set()
    return grid, set(map(type, grid.reshape(-1).tolist()))


def _typed(grid, kinds, label):
    """A bool, int64, uint64 or float64 array holding exactly the JSON values.

    Values no such array holds exactly (ints beyond 64 bits, or mixed with floats beyond
    2**53) stay Python numbers in the object array, converted one by one later.
    """
    if not kinds or kinds == {bool}:  # no elements at all fit any dtype
        return grid.astype(np.bool_)
    if bool in kinds:
        raise FeedError(f"{label}: the array mixes true/false with numbers")
    flat = grid.reshape(-1).tolist()
    if kinds == {int}:
        lo, hi = min(flat), max(flat)
        for dtype in (np.int64, np.uint64):
            if np.iinfo(dtype).min <= lo and hi <= np.iinfo(dtype).max:
                return grid.astype(dtype)
        return grid
    # json.loads reads a number beyond float64's range (1e400) as inf; JSON has no inf.
    if not all(math.isfinite(v) for v in flat if type(v) is float):
        raise FeedError(f"{label}: a number is beyond the range of float64")
    if all(type(v) is float or -(2 ** 53) <= v <= 2 ** 53 for v in flat):
        return grid.astype(np.float64)
    return grid


# -- conversion ---------------------------------------------------------------------------

def convert(value, tensor, label):
    """`value` as an ndarray of the placeholder's dtype, checked against its shape."""
    dtype = tensor.dtype.np
    if tensor.dtype is dtypes.string:
        converted = _to_string(value, tensor, label)
    elif value.dtype.kind in "OSU" and value.size and isinstance(value.reshape(-1)[0], (bytes, str)):
        held = f" ({value.dtype} data)" if value.dtype.kind in "SU" else ""
        raise FeedError(f"{label}: {_target(tensor)} cannot be fed strings{held}")
    elif value.size == 0:
        converted = np.zeros(value.shape, dtype)
    elif dtype.kind == "b":
        converted = _to_bool(value, tensor, label)
    elif value.dtype.kind == "b":
        raise FeedError(f"{label}: true/false cannot be fed to {_target(tensor)}")
    elif dtype.kind in "iu":
        converted = _to_int(value, dtype, tensor, label)
    elif dtype.kind in "fc":
        converted = _to_float(value, dtype, tensor, label)
    else:
        raise FeedError(f"{label}: {_target(tensor)} cannot be fed numbers")
    static = tensor.shape.dims
    if static is not None and (len(static) != converted.ndim or any(
            d is not None and d != n for d, n in zip(static, converted.shape))):
        raise FeedError(f"{label}: a value of shape {show(converted.shape)} does not fit "
                        f"{_target(tensor)}, whose shape is {show(static)}")
    return converted


def _target(tensor):
    return f"placeholder '{tensor.op.name}' ({tensor.dtype.name})"


def _to_string(value, tensor, label):
    if value.dtype.kind in "OSU" or value.size == 0:
        return _strings(value, label)
    given = "true/false" if value.dtype.kind == "b" else "numbers"
    raise FeedError(f"{label}: {_target(tensor)} takes strings, not {given}" """; quote them: '["a", "b"]'""")


def _strings(value, label):
    try:
        return dtypes.string_array(value)
    except TypeError as e:
        raise FeedError(f"{label}: {e}") from None


def _to_bool(value, tensor, label):
    if value.dtype.kind != "b":
        raise FeedError(f"{label}: {_target(tensor)} takes true/false, not numbers")
    return value.astype(np.bool_)


def _to_int(value, dtype, tensor, label):
    """The first element, in order, that is not an integer or is out of range is named (as
    graphrun-cc, which converts element by element, names it)."""
    info = np.iinfo(dtype)
    if value.dtype.kind == "f":
        wide = value.astype(np.float64)
        fraction = ~np.isfinite(wide) | (wide != np.trunc(wide))
        # min and max + 1 are zero or powers of two, so these bounds are exact in float64.
        with np.errstate(invalid="ignore"):
            outside = (wide < float(info.min)) | (wide >= float(info.max) + 1)
        _refuse_first(value, fraction, outside, tensor, label)
        return value.astype(dtype)
    if value.dtype.kind == "O":
        value = _object_to_ints(value, info, tensor, label)
    lo, hi = _extremes(value.reshape(-1))
    if lo < info.min or hi > info.max:
        first = next(v for v in value.reshape(-1).tolist() if not info.min <= v <= info.max)
        raise FeedError(f"{label}: {first} is out of range for {_target(tensor)}")
    return value.astype(dtype)


def _refuse_first(value, fraction, outside, tensor, label):
    bad = np.flatnonzero((fraction | outside).reshape(-1))
    if bad.size:
        k = bad[0]
        item = value.reshape(-1)[k]
        problem = (f"is not an integer, which {_target(tensor)} needs" if fraction.reshape(-1)[k]
                   else f"is out of range for {_target(tensor)}")
        raise FeedError(f"{label}: {format_float(item)} {problem}")


def _extremes(flat):
    if flat.dtype.kind == "O":  # Python ints, compared exactly whatever their size
        values = flat.tolist()
        return min(values), max(values)
    return int(flat.min()), int(flat.max())


def _object_to_ints(value, info, tensor, label):
    """Python ints and integral floats as an object array of Python ints."""
    out = []
    for v in value.reshape(-1).tolist():
        if type(v) is float:
            if not v.is_integer():
                raise FeedError(f"{label}: {format_float(v)} is not an integer, which {_target(tensor)} needs")
            v = int(v)
        if not info.min <= v <= info.max:
            raise FeedError(f"{label}: {v} is out of range for {_target(tensor)}")
        out.append(v)
    return np.array(out, dtype=object).reshape(value.shape)


def _to_float(value, dtype, tensor, label):
    if value.dtype.kind == "O":
        bits = np.finfo(dtype).nmant + 1
        try:
            floats = [_int_to_float(v, bits) if type(v) is int else v for v in value.reshape(-1).tolist()]
        except OverflowError:
            raise FeedError(f"{label}: a number is out of range for {_target(tensor)}") from None
        value = np.array(floats, dtype=np.float64).reshape(value.shape)
    with np.errstate(over="ignore"):
        converted = value.astype(dtype)
    was_inf = np.isinf(value) if value.dtype.kind in "fc" else np.zeros(value.shape, bool)
    _refuse(value, np.isinf(converted) & ~was_inf, f"is out of range for {_target(tensor)}", label)
    return converted


def _int_to_float(n, bits):
    """n rounded once (half to even) to `bits` significant bits, as a float.

    float(n) first would round to 53 bits and then again to float32's 24.
    """
    excess = abs(n).bit_length() - bits
    if excess <= 0:
        return float(n)
    q, r = divmod(abs(n), 1 << excess)
    half = 1 << (excess - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << excess), n)


def _refuse(value, mask, problem, label):
    """FeedError naming the first element where `mask` holds, if any does."""
    if mask.any():
        item = value.reshape(-1)[np.flatnonzero(mask.reshape(-1))[0]]
        shown = format_float(item) if isinstance(item, (float, np.floating)) else str(item)
        raise FeedError(f"{label}: {shown} {problem}")


def parse_feeds(graph, feed_args, feeds=None):
    """{placeholder tensor: ndarray} for the --feed NAME=VALUE strings (added to `feeds`)."""
    feeds = {} if feeds is None else feeds
    for text in feed_args:
        name, raw = split_feed(text)
        tensor = find_placeholder(graph, name)
        label = f"--feed {name}"
        _check_once(feeds, tensor, label)
        value = parse_value(raw, label)
        if raw.startswith("@") and value.dtype.kind in "SU" and tensor.dtype is not dtypes.string:
            raise FeedError(f"{label}: '{raw[1:]}' holds {value.dtype} data (strings), which "
                            f"{_target(tensor)} cannot be fed")
        feeds[tensor] = convert(value, tensor, label)
    return feeds


def parse_npz(graph, path, feeds=None):
    """Adds to `feeds` every array of the .npz archive `path`, each keyed by a placeholder's name.

    Arrays saved as np.savez(path, x=..., **{"layer/y": ...}) feed placeholders x and layer/y.
    """
    feeds = {} if feeds is None else feeds
    label = f"--feeds {path}"
    archive = _load_npz(path, label)
    with archive:
        for key in archive.files:
            try:
                tensor = find_placeholder(graph, key)
            except FeedError as e:
                raise FeedError(f"{label}: {e}") from None
            where = f"{label}: '{key}'"
            _check_once(feeds, tensor, where)
            _check_npz_member(archive, key, where)
            try:
                value = archive[key]
            except zipfile.BadZipFile as e:  # a damaged member (its CRC)
                raise FeedError(f"{where}: {_member_problem(e)}") from None
            except Exception:  # noqa: BLE001 - a header npy_check passed but numpy cannot follow ([-1])
                raise FeedError(f"{where}: malformed .npy header") from None
            if value.dtype.kind not in npy_check.FEEDABLE_KINDS:
                raise FeedError(f"{where}: holds {value.dtype} data; only numbers, bools and strings can be fed")
            feeds[tensor] = convert(value, tensor, where)
    return feeds


def _load_npz(path, label):
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise FeedError(f"{label}: no such file") from None
    except Exception as e:  # noqa: BLE001 - numpy raises many kinds for a bad file; all mean "not an .npz"
        raise FeedError(f"{label}: cannot read the file as an .npz archive ({_one_line(e)})") from None
    if isinstance(archive, np.ndarray):
        raise FeedError(f"{label}: the file is a single .npy array; feed it with --feed NAME=@{path}")
    return archive


def _check_once(feeds, tensor, label):
    if tensor in feeds:
        raise FeedError(f"{label}: placeholder '{tensor.op.name}' is fed twice")


# -- messages -----------------------------------------------------------------------------

def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _clip(text, limit=60):
    return text if len(text) <= limit else text[:limit] + "..."
