"""How graphrun prints fetched values: the text line and the --json document.

The C++ runner must print the same bytes, so nothing here is left to numpy's or json's
defaults; the rules are:

* ints in decimal, bools `true`/`false`;
* floats with the shortest digits that round-trip in the value's own precision (a float32
  0.1 prints "0.1"), laid out by Python's repr() rule: positional for exponents -4..15,
  otherwise "d.ddde±XX"; nan/inf/-inf bare in text, as JSON strings with --json;
* arrays as nested brackets, elements separated by ", ";
* strings (dtype string, held as bytes) in text between double quotes, with `\\` and `"`
  escaped, valid UTF-8 kept as text, every other byte and every control character (tab and
  line breaks too) written \\xNN as text_escape writes them (so a value cannot drive the
  terminal or break its line); in JSON a valid UTF-8 string is a JSON
  string (control characters as \\u00NN), any other is {"b64": "<base64>"}, as TensorFlow
  Serving's REST API writes binary strings.

Outputs can have millions of elements, so elements are converted with C-level map()s
and the nesting is built level by level: linear in the number of elements.
"""

import base64
import json
import math
import re

import numpy as np

# Text and --json stop here: a million values is already megabytes no one reads, and a
# hostile shape (a [2^40, 0] tensor prints 2^40 "[]") must not take memory or minutes.
MAX_PRINTED = 1 << 20

# JSON has no literal for these, so --json carries them as strings.
_NONFINITE_JSON = {"nan": '"nan"', "inf": '"inf"', "-inf": '"-inf"'}


def printed_items(shape):
    """How many values (or empty "[]" groups) the text of a tensor of `shape` holds."""
    count = 1
    for d in shape:
        if d == 0:
            break
        count *= int(d)
    return count


def too_large_to_print(outputs):
    """The one-line reason the first output over MAX_PRINTED cannot be printed, else None."""
    for name, array in outputs:
        shape = np.shape(array)
        count = printed_items(shape)
        if count > MAX_PRINTED:
            count = count if count < 2 ** 63 else "more than 2^63"   # graphrun-cc counts in int64
            return (f"cannot print {name}: its shape {format_shape(shape)} would print {count} items, "
                    f"more than the {MAX_PRINTED} printed; save it as .npy with --out DIR")
    return None


def format_value(array):
    """The text form of one fetched value: a bare scalar, or nested brackets."""
    array = np.asarray(array)
    return _nest(element_strings(array), array.shape)


def format_shape(shape, separator=","):
    """`[2,3]` for the text line (separator ","), `[2, 3]` for JSON (separator ", ")."""
    return "[" + separator.join(str(d) for d in shape) + "]"


def dtype_name(array):
    """The printed dtype: numpy's name, but "string" for a string tensor's object array."""
    return "string" if array.dtype.kind in "OSU" else array.dtype.name


def format_line(name, array):
    """`<node>:<k> <dtype> <shape> = <values>`, without the newline."""
    array = np.asarray(array)
    return f"{name} {dtype_name(array)} {format_shape(array.shape)} = {format_value(array)}"


def format_text(outputs):
    """Every (name, array) of `outputs` as one line each, newline-terminated."""
    return "".join(format_line(name, array) + "\n" for name, array in outputs)


def format_json(outputs):
    """The --json document for (name, array) pairs, on one line (no trailing newline).

    Built by hand: json.dumps would print a float32 0.1 as 0.10000000149011612 and use
    NaN/Infinity, which are not JSON.
    """
    entries = []
    for name, array in outputs:
        array = np.asarray(array)
        values = _nest(element_strings(array, for_json=True), array.shape)
        entries.append(f'{{"name": {json.dumps(name)}, "dtype": "{dtype_name(array)}", '
                       f'"shape": {format_shape(array.shape, ", ")}, "values": {values}}}')
    return '{"outputs": [' + ", ".join(entries) + "]}"


def format_float(value):
    """One float in its own precision (np.float32, np.float16, or float/np.float64)."""
    return element_strings(np.asarray(value))[0]


def element_strings(array, for_json=False):
    """The printed form of every element of `array`, in row-major order."""
    flat = np.asarray(array).reshape(-1)
    kind = flat.dtype.kind
    if kind in "OSU":
        return list(map(_json_string if for_json else _text_string, flat.tolist()))
    if kind == "b":
        return np.where(flat, "true", "false").tolist()
    if kind in "iu":
        return list(map(str, flat.tolist()))
    if kind != "f" or flat.dtype.itemsize > 8:
        raise TypeError(f"cannot print values of dtype {flat.dtype}")
    if flat.dtype.itemsize == 8:
        # tolist() gives Python floats, whose repr is exactly the float64 rule.
        strings = list(map(repr, flat.tolist()))
    else:
        strings = _shortest_narrow(flat)
    if for_json and flat.size and not np.isfinite(flat).all():
        strings = [_NONFINITE_JSON.get(s, s) for s in strings]
    return strings


def _as_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _text_string(value):
    """One string element for the text line: quoted, escaped, never raw control bytes."""
    # `\` and `"` are ASCII, never inside a UTF-8 sequence: escaping them in the bytes is safe
    raw = _as_bytes(value).replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return '"' + _VALUE_CONTROLS.sub(_hex, raw.decode("utf-8", "backslashreplace")) + '"'


# every control character, tab and line breaks included: a value stays on its one line
_VALUE_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _hex(match):
    return f"\\x{ord(match.group()):02x}"


# what json.dumps(ensure_ascii=False) leaves raw that a terminal would still act on
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u2028\u2029]")


def _json_string(value):
    raw = _as_bytes(value)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return '{"b64": "' + base64.b64encode(raw).decode("ascii") + '"}'
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def _shortest_narrow(flat):
    """float32/float16 elements with their own shortest digits, in Python's repr layout.

    str() of a numpy float32 scalar has the shortest digits that round-trip in float32
    (Dragon4), but numpy's own layout ("1.6777216e+07"). float() of that string and then
    repr() keeps exactly those digits: a decimal of at most 9 significant digits is the
    shortest repr of its own float64 value (distinct decimals of up to 15 digits are
    distinct doubles), so repr() can only reprint it, now in Python's layout.
    """
    with np.printoptions(legacy=False):  # a legacy print mode would change scalar str()
        return list(map(repr, map(float, map(str, list(flat)))))


def _nest(items, shape):
    """Groups the flat element strings into nested brackets, innermost axis first."""
    if not shape:
        return items[0]
    for axis in range(len(shape) - 1, -1, -1):
        n = shape[axis]
        groups = math.prod(shape[:axis])
        if n == 0:
            items = ["[]"] * groups
        else:
            items = ["[" + ", ".join(items[i:i + n]) + "]" for i in range(0, groups * n, n)]
    return items[0]
