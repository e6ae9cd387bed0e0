"""String ops: join, split, length, substrings, case, strip, base64, numbers to and from text.

Strings are object arrays of `bytes` (graphdef.framework.dtypes.string). The hash bucket ops
are in strings_hash.py, the regular expressions in strings_regex.py, and Assert, Print and
StringFormat in strings_print.py. Error words are TensorFlow's, so a model's failure reads
the same as under TensorFlow.
"""

import base64
import binascii
import inspect
import re

import numpy as np

from graphdef.framework import dtypes, limits
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, broadcast, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, same_as_input

UNITS = ("BYTE", "UTF8_CHAR")


def as_array(value):
    """A kernel's input as an ndarray: a bare `bytes` (one element an indexing kernel handed on) as a
    0-d object array, since np.asarray would make it 'S' and drop its trailing NUL bytes."""
    if isinstance(value, bytes):
        out = np.empty((), dtype=object)
        out[()] = value
        return out
    return np.asarray(value)


def check_string_bytes(total):
    """Refuses an output whose strings would take more than the tensor size limit (a hostile graph can
    join or rewrite a 100 MB string thousands of times with a few nodes), before they are made."""
    limit = limits.max_tensor_bytes()
    if total > limit:
        raise limits.TensorTooLarge(f"the output's strings would take {limits.format_bytes(total)}, over the limit "
                                    f"of {limits.format_bytes(limit)} (set {limits.ENV} to change it)")


def strings_like(shape, items):
    """An object array of `shape` holding `items` (bytes), row-major."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def map_strings(fn, array):
    array = as_array(array)
    return strings_like(array.shape, [fn(item) for item in array.reshape(-1).tolist()])


def _elementwise(type_name, doc, fn, attrs=None):
    """A string -> string op applied to every element."""
    def kernel(x, **attrs):
        return map_strings(lambda s: fn(s, **attrs), x)
    return define(type_name, "input: string -> output: string", doc=doc, attrs=attrs or {}, infer=same_as_input(),
                  kernel=_keywords(kernel, attrs or {}), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _keywords(kernel, attrs):
    """`kernel` with its attrs as keyword-only parameters, which is how the registry passes them."""
    params = [inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in attrs]
    kernel.__signature__ = inspect.Signature(params)
    return kernel


def _check_unit(ctx):
    unit = ctx.attrs["unit"]
    if unit not in UNITS:
        raise ctx.error(f"attr 'unit' is {unit!r}; it must be one of {', '.join(UNITS)}")


# -- StringJoin ------------------------------------------------------------------------------------

def _infer_join(ctx):
    shape = TensorShape(())
    for i, t in enumerate(ctx.inputs):
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
            continue
        merged = broadcast(shape, t.shape)
        if merged is None or (shape.ndims is not None and t.shape.ndims is not None and shape.ndims != t.shape.ndims):
            raise ctx.error(f"input {i} has shape {show(t.shape)}, which does not match {show(shape)}")
        shape = merged
    return [shape]


def _string_join(*inputs, separator):
    arrays = [as_array(a) for a in inputs]
    shaped = [a for a in arrays if a.ndim]
    shape = shaped[0].shape if shaped else ()
    for a in shaped:
        if a.shape != shape:
            raise InvalidArgumentError(f"Input shapes do not match: {list(shape)} vs. {list(a.shape)}")
    count = int(np.prod(shape, dtype=np.int64))
    sep = _attr_bytes(separator)
    check_string_bytes(sum(sum(map(len, a.reshape(-1).tolist())) * (1 if a.ndim else count) for a in arrays)
                       + len(sep) * max(len(arrays) - 1, 0) * count)
    columns = [a.reshape(-1).tolist() if a.ndim else [a[()]] * count for a in arrays]
    return strings_like(shape, [sep.join(row) for row in zip(*columns)] if columns else [b""] * count)


def _attr_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


STRING_JOIN = define(
    "StringJoin", "inputs: N*string -> output: string",
    doc="Joins the strings of every input, element by element, with `separator` between them; scalars repeat.",
    attrs={"N": Attr("int", minimum=0), "separator": Attr("string", "")},
    infer=_infer_join, kernel=_string_join, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- StringSplitV2 and StringSplit: sparse outputs -------------------------------------------------

def _infer_split(ctx):
    if ctx.shape(0).ndims not in (None, 1):
        raise ctx.error(f"input must be a vector, got shape {show(ctx.shape(0))}")
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.error(f"sep must be a scalar, got shape {show(ctx.shape(1))}")
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _sparse(pieces_per_row):
    indices, values = [], []
    for row, pieces in enumerate(pieces_per_row):
        indices.extend((row, col) for col in range(len(pieces)))
        values.extend(pieces)
    width = max((len(p) for p in pieces_per_row), default=0)
    return (np.array(indices, dtype=np.int64).reshape(-1, 2), strings_like((len(values),), values),
            np.array([len(pieces_per_row), width], dtype=np.int64))


_SPACE = frozenset(b" \t\n\v\f\r")  # C's isspace


def _split_whitespace(text, maxsplit):
    """TF's rule: tokens between runs of whitespace; after maxsplit tokens, the rest (leading
    whitespace skipped) is one more piece, even when it is empty; maxsplit 0 keeps the string whole."""
    if maxsplit == 0:
        return [text]
    pieces, p, n = [], 0, len(text)
    while p < n and text[p] in _SPACE:
        p += 1
    while p < n:
        q = p
        while q < n and text[q] not in _SPACE:
            q += 1
        pieces.append(text[p:q])
        p = q
        while p < n and text[p] in _SPACE:
            p += 1
        if len(pieces) == maxsplit:
            pieces.append(text[p:])
            break
    return pieces


def _string_split_v2(input, sep, *, maxsplit):  # noqa: A002 - TF's argument name
    sep = as_array(sep)
    if sep.ndim:
        raise InvalidArgumentError(f"sep must be a scalar, got shape: {list(sep.shape)}")
    sep = sep[()]
    rows = []
    for text in as_array(input).reshape(-1).tolist():
        if not sep:
            rows.append(_split_whitespace(text, maxsplit))
        else:
            rows.append(text.split(sep, maxsplit) if maxsplit >= 0 else text.split(sep))
    return _sparse(rows)


STRING_SPLIT_V2 = define(
    "StringSplitV2", "input: string, sep: string -> indices: int64, values: string, shape: int64",
    doc="Splits each string at `sep` (ASCII whitespace when empty), at most maxsplit times, into a sparse matrix.",
    attrs={"maxsplit": Attr("int", -1)}, infer=_infer_split, kernel=_string_split_v2, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)


def _string_split(input, delimiter, *, skip_empty):  # noqa: A002 - TF's argument name
    delimiter = as_array(delimiter)
    if delimiter.ndim:
        raise InvalidArgumentError(f"delimiter must be a scalar, got shape: {list(delimiter.shape)}")
    chars = delimiter[()]
    rows = []
    for text in as_array(input).reshape(-1).tolist():
        if not chars:  # each byte on its own
            pieces = [text[i:i + 1] for i in range(len(text))]
        else:  # any byte of the delimiter splits
            pieces = re.split(b"[" + re.escape(chars) + b"]", text) if text else []
        rows.append([p for p in pieces if p] if skip_empty else pieces)
    return _sparse(rows)


STRING_SPLIT = define(
    "StringSplit", "input: string, delimiter: string -> indices: int64, values: string, shape: int64",
    doc="Splits each string at any byte of `delimiter` (each byte when empty) into a sparse matrix.",
    attrs={"skip_empty": Attr("bool", True)}, infer=_infer_split, kernel=_string_split, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)


# -- StringLength and Substr -----------------------------------------------------------------------

def _char_starts(text):
    """The byte offsets where a UTF-8 character starts (every byte that is not a continuation byte)."""
    return [i for i, b in enumerate(text) if b & 0xC0 != 0x80]


def _string_length(input, *, unit):  # noqa: A002
    x = as_array(input)
    flat = x.reshape(-1).tolist()
    if unit == "BYTE":
        lengths = list(map(len, flat))
    else:
        lengths = [len(s) - sum(1 for b in s if b & 0xC0 == 0x80) for s in flat]
    return np.array(lengths, dtype=np.int32).reshape(x.shape)


def _infer_unit_same(ctx):
    _check_unit(ctx)
    return [ctx.shape(0)]


STRING_LENGTH = define(
    "StringLength", "input: string -> output: int32",
    doc="The length of each string, in bytes or (unit UTF8_CHAR) in UTF-8 characters.",
    attrs={"unit": Attr("string", "BYTE")}, infer=_infer_unit_same, kernel=_string_length,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_substr(ctx):
    _check_unit(ctx)
    pos, length = ctx.shape(1), ctx.shape(2)
    if pos.is_fully_defined() and length.is_fully_defined() and pos.dims != length.dims:
        raise ctx.error(f"pos and len should have the same shape, got: {show(pos)} vs. {show(length)}")
    out = broadcast(ctx.shape(0), pos)
    if out is None:
        raise ctx.error(f"shapes {show(ctx.shape(0))} and {show(pos)} cannot be broadcast together")
    return [out]


def _substr(input, pos, len, *, unit):  # noqa: A002 - TF's argument names
    text, pos, length = as_array(input), as_array(pos), as_array(len)
    return _substrings(text, pos, length, unit)


def _substrings(text, pos, length, unit):
    if pos.shape != length.shape:
        raise InvalidArgumentError(f"pos and len should have the same shape, got: {list(pos.shape)} vs. "
                                   f"{list(length.shape)}")
    try:
        text_b, pos_b, len_b = np.broadcast_arrays(text, pos, length)
    except ValueError:
        raise InvalidArgumentError(f"Incompatible shapes: {list(text.shape)} vs. {list(pos.shape)}") from None
    out = []
    for i, (s, p, n) in enumerate(zip(text_b.reshape(-1).tolist(), pos_b.reshape(-1).tolist(),
                                      len_b.reshape(-1).tolist())):
        if unit == "BYTE":
            if abs(p) > len(s):
                raise InvalidArgumentError(f"pos {p} out of range for string b'{_shown(s)}' at index {i}")
            first = p + len(s) if p < 0 else p
            out.append(s[first:] if n < 0 else s[first:first + n])  # a negative len reads to the end
            continue
        # TF's character walk: a negative len gives "" from a pos counted from the start, and is out of
        # range from one counted from the end
        starts = _char_starts(s)
        size = len(starts)
        if abs(p) > size or (p < 0 and n < 0):
            raise InvalidArgumentError(f"pos {p} out of range for string at index {i}")
        first = p + size if p < 0 else p
        last = first if n < 0 else min(size, first + n)
        bounds = starts + [len(s)]
        out.append(s[bounds[first]:bounds[last]])
    return strings_like(text_b.shape, out)


SUBSTR = define(
    "Substr", "input: string, pos: T, len: T -> output: string",
    doc="The substring of each string from `pos` (from the end when negative), `len` bytes or characters long.",
    attrs={"T": Attr("type", allowed=dtypes.INDEX), "unit": Attr("string", "BYTE")},
    infer=_infer_substr, kernel=_substr, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- case, strip, base64 ---------------------------------------------------------------------------

def _check_encoding(encoding):
    if encoding not in ("", "utf-8"):
        raise InvalidArgumentError(f"encoding must be \"\" or \"utf-8\", got \"{encoding}\"")


def _case(convert_ascii, convert_text):
    def fn(s, *, encoding):
        _check_encoding(encoding)
        if encoding == "utf-8":
            # TF's ICU conversion ends the text at its first NUL and reads each invalid UTF-8 sequence
            # as U+FFFD, which is Python's "replace" rule (the maximal subpart of a sequence)
            return convert_text(s.split(b"\0", 1)[0].decode("utf-8", "replace")).encode("utf-8")
        return convert_ascii(s)
    return fn


STRING_LOWER = _elementwise("StringLower", "Each string in lower case: ASCII only, or all of Unicode with utf-8.",
                            _case(bytes.lower, str.lower), {"encoding": Attr("string", "")})
STRING_UPPER = _elementwise("StringUpper", "Each string in upper case: ASCII only, or all of Unicode with utf-8.",
                            _case(bytes.upper, str.upper), {"encoding": Attr("string", "")})
# TF strips what C's isspace calls whitespace: space, \t, \n, \v, \f, \r (bytes.strip's set)
STRING_STRIP = _elementwise("StringStrip", "Each string without its leading and trailing ASCII whitespace.",
                            bytes.strip)


def _encode_base64(s, *, pad):
    check_string_bytes((len(s) + 2) // 3 * 4)
    # TF's web-safe alphabet ('-' and '_'), with '=' padding only when asked
    encoded = base64.urlsafe_b64encode(s)
    return encoded if pad else encoded.rstrip(b"=")


_BASE64 = re.compile(rb"^[A-Za-z0-9_-]*={0,2}$")


def _decode_base64(s):
    if not _BASE64.match(s) or len(s.rstrip(b"=")) % 4 == 1 or (b"=" in s and len(s) % 4):
        raise InvalidArgumentError("Invalid character found in base64.")
    body = s.rstrip(b"=")
    try:
        return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise InvalidArgumentError("Invalid character found in base64.") from None


ENCODE_BASE64 = _elementwise("EncodeBase64", "Each string in web-safe base64 ('-' and '_'), padded with '=' if pad.",
                             _encode_base64, {"pad": Attr("bool", False)})
DECODE_BASE64 = _elementwise("DecodeBase64", "Each web-safe base64 string decoded, with or without '=' padding.",
                             _decode_base64)


# -- StringToNumber --------------------------------------------------------------------------------

_INT = re.compile(rb"^[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*$")
_FLOAT = re.compile(rb"^[ \t\n\v\f\r]*[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                    rb"|(?i:inf|infinity|nan))[ \t\n\v\f\r]*$")


def _string_to_number(string_tensor, *, out_type):
    x = as_array(string_tensor)
    target = out_type.np
    out = np.empty(x.size, dtype=target)
    info = np.iinfo(target) if out_type.is_integer else None
    for i, s in enumerate(x.reshape(-1).tolist()):
        if info is None:
            if not _FLOAT.match(s):
                raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {_shown(s)}")
            with np.errstate(over="ignore"):
                out[i] = float(s)
        else:
            if not _INT.match(s) or (info.min == 0 and s.strip().startswith(b"-")):
                raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {_shown(s)}")
            value = int(s)
            if not info.min <= value <= info.max:
                raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: {_shown(s)}")
            out[i] = value
    return out.reshape(x.shape)


def _shown(s):
    return s.decode("utf-8", "backslashreplace")


STRING_TO_NUMBER = define(
    "StringToNumber", "string_tensor: string -> output: out_type",
    doc="Each string parsed as a decimal number of out_type (surrounding whitespace allowed).",
    attrs={"out_type": Attr("type", dtypes.float32, frozenset((dtypes.float32, dtypes.float64, dtypes.int32,
                                                                dtypes.int64, dtypes.uint32, dtypes.uint64)))},
    infer=same_as_input(), kernel=_string_to_number, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders (tf.strings) -------------------------------------------------------------------------

def _one(op_type, inputs, name, default_name, **attrs):
    return build(op_type, inputs, name=name, default_name=default_name, attrs=attrs).outputs[0]


def join(inputs, separator="", name=None):
    return _one("StringJoin", [list(inputs)], name, "StringJoin", separator=separator)


def length(input, unit="BYTE", name=None):  # noqa: A002
    return _one("StringLength", [input], name, "StringLength", unit=unit)


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002
    return _one("Substr", [input, pos, len], name, "Substr", unit=unit)


def lower(input, encoding="", name=None):  # noqa: A002
    return _one("StringLower", [input], name, "StringLower", encoding=encoding)


def upper(input, encoding="", name=None):  # noqa: A002
    return _one("StringUpper", [input], name, "StringUpper", encoding=encoding)


def strip(input, name=None):  # noqa: A002
    return _one("StringStrip", [input], name, "StringStrip")


def to_number(string_tensor, out_type=dtypes.float32, name=None):
    return _one("StringToNumber", [string_tensor], name, "StringToNumber", out_type=dtypes.as_dtype(out_type))


def encode_base64(input, pad=False, name=None):  # noqa: A002
    return _one("EncodeBase64", [input], name, "EncodeBase64", pad=pad)


def decode_base64(input, name=None):  # noqa: A002
    return _one("DecodeBase64", [input], name, "DecodeBase64")


def split_v2(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """StringSplitV2's three outputs (indices, values, dense_shape) of a sparse matrix."""
    op = build("StringSplitV2", [input, b"" if sep is None else sep], name=name, default_name="StringSplit",
               attrs={"maxsplit": maxsplit})
    return tuple(op.outputs)
