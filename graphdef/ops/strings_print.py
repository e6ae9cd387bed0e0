"""Assert, Print, PrintV2, StringFormat and AsString: tensors as text, in TensorFlow's own layout.

A tensor's summary is TensorFlow's SummarizeValue: the first `summarize` elements in nested
brackets for Assert and Print ("[1 2 3...]"), and the first and last `summarize` of each dim
for StringFormat ("[1 2 ... 9 10]", strings quoted); strings C-escaped (\\n, \\t, \\", octal
\\NNN for other control bytes, UTF-8 kept), floats with the fewest of 6 or 9 significant
digits (%g) that read back (15 or 17 for float64), bools as 1 and 0.
"""

import sys

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, same_as_input
from graphdef.ops.strings import as_array, check_string_bytes, strings_like

_ESCAPES = {0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x22: b'\\"', 0x27: b"\\'", 0x5C: b"\\\\"}


# Summaries are built as Latin-1 text, one character per byte, so a string's bytes >= 0x80 pass
# through unchanged whether or not they are UTF-8, as in TF; text() turns one into a message.

def _latin(text):
    """An attr's text (template, message) as its UTF-8 bytes in the Latin-1 space of summaries."""
    return (text.encode("utf-8") if isinstance(text, str) else bytes(text)).decode("latin-1")


def text(summary):
    """A summary as a message: its bytes read as UTF-8, any other byte shown \\xNN."""
    return summary.encode("latin-1").decode("utf-8", "backslashreplace")


def c_escape(s):
    """absl's Utf8SafeCEscape: named escapes, octal for other control bytes, bytes >= 0x80 kept."""
    out = bytearray()
    for b in s:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return out.decode("latin-1")


def _float_text(value, digits):
    short, long = digits
    text = "%.*g" % (short, value)
    if float(np.array(float(text), dtype=value.dtype)) != float(value) and np.isfinite(value):
        text = "%.*g" % (long, value)
    return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(text, text)


def element_text(value, dtype, quoted):
    if dtype is dtypes.string:
        return f'"{c_escape(value)}"' if quoted else c_escape(value)
    if dtype.is_bool:
        return "1" if value else "0"
    if dtype.is_floating:
        digits = (15, 17) if dtype is dtypes.float64 else (6, 9)
        return _float_text(np.asarray(value, dtype.np)[()], digits)
    return str(int(value))


def summarize(array, dtype, limit):
    """SummarizeValue(limit, print_v2=False): Assert's and Print's layout."""
    flat = array.reshape(-1).tolist()
    count = len(flat)
    limit = count if limit < 0 else min(limit, count)
    if array.ndim == 0:
        return " ".join(element_text(v, dtype, False) for v in flat[:limit]) + ("..." if count > limit else "")
    out, index = [], [0]

    def one_dim(dim):
        if index[0] >= limit:
            return
        n = array.shape[dim]
        if dim == array.ndim - 1:
            for i in range(n):
                if index[0] >= limit:
                    if dim != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(element_text(flat[index[0]], dtype, False))
                index[0] += 1
            return
        for _ in range(n):
            opened = index[0] < limit
            if opened:
                out.append("[")
            one_dim(dim + 1)
            if index[0] < limit or opened:
                out.append("]")

    one_dim(0)
    return "".join(out) + ("..." if count > limit else "")


def summarize_v2(array, dtype, ends):
    """SummarizeValue(ends, print_v2=True): StringFormat's layout, first and last `ends` of each dim."""
    flat = array.reshape(-1).tolist()
    if array.ndim == 0:
        return element_text(flat[0], dtype, True)
    ends = len(flat) if ends < 0 else ends
    out = []
    ndim = array.ndim

    def spacing(dim):
        out.append(" " if dim == ndim - 1 else "\n" * (ndim - dim - 1) + " " * (dim + 1))

    def one_dim(dim, start):
        if dim == ndim:
            out.append(element_text(flat[start], dtype, True))
            return
        out.append("[")
        n = array.shape[dim]
        step = int(np.prod(array.shape[dim + 1:], dtype=np.int64))
        for i in range(min(ends, n)):
            if i > 0:
                spacing(dim)
            one_dim(dim + 1, start + step * i)
        if n > 2 * ends:
            spacing(dim)
            out.append("...")
        for i in range(max(ends, n - ends), n):
            spacing(dim)
            one_dim(dim + 1, start + step * i)
        out.append("]")

    one_dim(0, 0)
    return "".join(out)


def _dtype_of(array):
    return dtypes.as_dtype(as_array(array).dtype)


# -- Assert -----------------------------------------------------------------------------------------

def _assert(condition, *data, summarize):
    condition = as_array(condition)
    if condition.size != 1:  # TF takes a one-element tensor as a scalar here
        raise InvalidArgumentError(f"In[0] should be a scalar: {show(TensorShape(condition.shape))}")
    if condition.reshape(-1)[0]:
        return ()
    parts = [f"[{summarize_fn(as_array(d), summarize)}]" for d in data]
    raise InvalidArgumentError("assertion failed: " + text(" ".join(parts)))


def summarize_fn(array, limit):
    return summarize(array, _dtype_of(array), limit)


ASSERT = define(
    "Assert", "condition: bool, data: T ->",
    doc="Fails the run with 'assertion failed: [data]...' when condition is false.",
    attrs={"T": Attr("list(type)", minimum=1), "summarize": Attr("int", 3)},
    infer=lambda ctx: [], kernel=_assert, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- Print and PrintV2 ------------------------------------------------------------------------------

# how often each Print node has printed: TF counts per kernel, graphdef per node name in the process
_PRINTED = {}


def _print(input, *data, message, first_n, summarize, node):  # noqa: A002 - TF's argument name
    if first_n >= 0:
        seen = _PRINTED.get(node, 0)
        if seen >= first_n:
            return input
        _PRINTED[node] = seen + 1
    line = text(_latin(message) + "".join(f"[{summarize_fn(as_array(d), summarize)}]" for d in data))
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    return input


PRINT = define(
    "Print", "input: T, data: U -> output: T",
    doc="Passes input through and writes message and each data tensor's summary to stderr (the first first_n runs).",
    attrs={"T": Attr("type"), "U": Attr("list(type)", minimum=0), "message": Attr("string", ""),
           "first_n": Attr("int", -1), "summarize": Attr("int", 3)},
    infer=same_as_input(), kernel=_print, stateful=True, grad=lambda op, g, *rest: [g] + [None] * (len(op.inputs) - 1),
    numerics=EXACT)

_STREAMS = ("stderr", "stdout", "log(info)", "log(warning)", "log(error)")


def _print_v2(input, *, output_stream, end):  # noqa: A002
    text = as_array(input)
    if text.ndim:
        raise InvalidArgumentError(f"Input is expected to be scalar, but got {show(TensorShape(text.shape))}")
    if output_stream not in _STREAMS:
        # a file:// stream would let a model file write wherever the user may: graphdef never does
        raise InvalidArgumentError(f"output_stream '{output_stream}' is not one graphdef writes to; it writes to "
                                   f"{', '.join(_STREAMS)}")
    stream = sys.stdout if output_stream == "stdout" else sys.stderr
    data = text[()] + (end.encode("utf-8") if isinstance(end, str) else bytes(end))
    buffer = getattr(stream, "buffer", None)
    stream.flush()
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8", "backslashreplace"))
        stream.flush()
    return ()


PRINT_V2 = define(
    "PrintV2", "input: string ->",
    doc="Writes the string to output_stream (stderr by default) followed by end.",
    attrs={"output_stream": Attr("string", "stderr"), "end": Attr("string", "\n")},
    infer=lambda ctx: [], kernel=_print_v2, stateful=True, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- StringFormat and AsString ----------------------------------------------------------------------

def _infer_format(ctx):
    pieces = _latin(ctx.attrs["template"]).split(_latin(ctx.attrs["placeholder"]))
    if len(pieces) - 1 != len(ctx.inputs):
        raise ctx.error(f"num placeholders in template and num inputs must match: {len(pieces) - 1} vs. "
                        f"{len(ctx.inputs)}")
    return [TensorShape(())]


def _string_format(*inputs, template, placeholder, summarize):
    pieces = _latin(template).split(_latin(placeholder))
    if len(pieces) - 1 != len(inputs):
        raise InvalidArgumentError(f"num placeholders in template and num inputs must match: {len(pieces) - 1} vs. "
                                   f"{len(inputs)}")
    out = [pieces[0]]
    for array, piece in zip(inputs, pieces[1:]):
        array = as_array(array)
        out.append(summarize_v2(array, _dtype_of(array), summarize))
        out.append(piece)
    return strings_like((), ["".join(out).encode("latin-1")])


STRING_FORMAT = define(
    "StringFormat", "inputs: T -> output: string",
    doc="The template with each placeholder replaced by one input's summary, as tf.print writes it.",
    attrs={"T": Attr("list(type)", minimum=0), "template": Attr("string", "%s"), "placeholder": Attr("string", "%s"),
           "summarize": Attr("int", 3)},
    infer=_infer_format, kernel=_string_format, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _as_string(input, *, precision, scientific, shortest, width, fill):  # noqa: A002
    x = as_array(input)
    dtype = _dtype_of(x)
    if fill and len(fill) > 1:
        raise InvalidArgumentError(f"Fill string must be one or fewer characters: {fill}")
    if scientific and shortest:
        raise InvalidArgumentError("Cannot select both scientific and shortest notation")
    if precision > -1 and not dtype.is_floating:
        raise InvalidArgumentError(f"precision not supported for datatype {dtype.name}")
    check_string_bytes(max(width, 0) * x.size)
    flags = ("-" if fill == "-" else "") + (" " if fill == " " else "") + ("0" if fill == "0" else "")
    width_text = str(width) if width > -1 else ""
    prec = f".{precision}" if precision > -1 else ""
    if dtype.is_floating:
        conv = "e" if scientific else "g" if shortest else "f"
        fmt = f"%{flags}{width_text}{prec}{conv}"
        items = [(fmt % v) for v in x.reshape(-1).tolist()]
    elif dtype.is_bool:
        fmt = f"%{flags}{width_text}s"
        items = [fmt % ("true" if v else "false") for v in x.reshape(-1).tolist()]
    elif dtype is dtypes.string:
        fmt = f"%{flags}{width_text}s"
        return strings_like(x.shape, [(fmt.encode() % v) for v in x.reshape(-1).tolist()])
    else:
        fmt = f"%{flags}{width_text}d"
        items = [fmt % v for v in x.reshape(-1).tolist()]
    return strings_like(x.shape, [s.encode("ascii") for s in items])


AS_STRING = define(
    "AsString", "input: T -> output: string",
    doc="Each element as text (printf rules: width, fill, precision, scientific or shortest for floats).",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC | frozenset((dtypes.bool_, dtypes.string))),
           "precision": Attr("int", -1), "scientific": Attr("bool", False), "shortest": Attr("bool", False),
           "width": Attr("int", -1), "fill": Attr("string", "")},
    infer=same_as_input(), kernel=_as_string, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders ---------------------------------------------------------------------------------------

def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's spelling
    return build("Assert", [condition, list(data)], name=name, default_name="Assert",
                 attrs={"summarize": 3 if summarize is None else summarize})


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802 - TF's spelling
    return build("Print", [input_, list(data)], name=name, default_name="Print",
                 attrs={"message": message or "", "first_n": -1 if first_n is None else first_n,
                        "summarize": 3 if summarize is None else summarize}).outputs[0]


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """tf.strings.format: the template's `placeholder`s filled with the inputs' summaries."""
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    return build("StringFormat", [inputs], name=name, default_name="StringFormat",
                 attrs={"template": template, "placeholder": placeholder, "summarize": summarize}).outputs[0]


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    return build("AsString", [input], name=name, default_name="AsString",
                 attrs={"precision": precision, "scientific": scientific, "shortest": shortest, "width": width,
                        "fill": fill}).outputs[0]


def print_v2(*inputs, output_stream="stderr", end="\n", sep=" ", summarize=3, name=None):
    """tf.print: each input formatted (Python strings as they are, tensors summarized) to output_stream."""
    templates, tensors = [], []
    for item in inputs:
        if isinstance(item, str):
            templates.append(item)
        else:
            templates.append("{}")
            tensors.append(item)
    text = string_format(sep.join(templates), tensors, summarize=summarize)
    return build("PrintV2", [text], name=name, default_name="PrintV2",
                 attrs={"output_stream": output_stream if isinstance(output_stream, str) else "stderr", "end": end})
