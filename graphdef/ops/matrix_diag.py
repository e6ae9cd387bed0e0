"""Diagonals of the innermost matrices: MatrixDiagPartV3 (read a band of diagonals), MatrixDiagV3
(build matrices from them), MatrixSetDiagV3 (replace them) and MatrixBandPart (zero outside a band,
as CLIP's causal mask and tf.linalg.band_part).

A band is k = d or [lower, upper]; with a band, diagonal d is row upper - d of the packed
[..., num_diags, max_diag_len] tensor, and `align` says which side each shorter diagonal is
packed against: "RIGHT_LEFT" (TF's default) puts superdiagonals (d >= 0) against the right and
subdiagonals against the left.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, constant_value, convert_to_tensor, define
from graphdef.ops import array as array_ops

ALIGNS = ("LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT")


# -- the band's geometry -------------------------------------------------------------------------

def _band(k):
    k = np.asarray(k)
    if k.ndim > 1 or k.size not in (1, 2):
        raise ValueError(f"diag_index must have only one or two elements, received {k.size} elements.")
    lower, upper = int(k.reshape(-1)[0]), int(k.reshape(-1)[-1])
    if lower > upper:
        raise ValueError(f"lower_diag_index must not be larger than upper_diag_index: {lower} > {upper}")
    return lower, upper, k.size == 2 and lower != upper


def _check_band(lower, upper, rows, cols):
    for name, d, dot in (("lower_diag_index", lower, "."), ("upper_diag_index", upper, "")):
        if not (-rows < d < cols or d == 0):
            raise ValueError(f"{name} is out of bound: {d}{dot} It must be between {-rows} and {cols}")


def _length(d, rows, cols):
    return max(0, min(rows + min(d, 0), cols - max(d, 0)))


def _max_length(lower, upper, rows, cols):
    return min(rows + min(upper, 0), cols - max(lower, 0))


def _positions(lower, upper, rows, cols, align):
    """Index arrays (packed row, packed column, matrix row, matrix column) of every band element."""
    width = _max_length(lower, upper, rows, cols)
    sup_right, sub_right = align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT"
    parts = []
    for d in range(upper, lower - 1, -1):
        n = _length(d, rows, cols)
        offset = width - n if (sup_right if d >= 0 else sub_right) else 0
        i = np.arange(n)
        parts.append((np.full(n, upper - d), offset + i, i + max(-d, 0), i + max(d, 0)))
    if not parts:
        return (np.zeros(0, np.int64),) * 4, width
    return tuple(np.concatenate(p).astype(np.int64) for p in zip(*parts)), width


def _check_align(align):
    if align not in ALIGNS:
        raise ValueError(f"align must be one of {', '.join(ALIGNS)}, got {align!r}")


def _check_align_attr(ctx):
    """A model file's align is checked when the node is read, as TF checks an attr's allowed values."""
    align = ctx.attrs.get("align")
    if align is not None and align not in ALIGNS:
        raise ctx.error(f"attr 'align' is {align!r}; it must be one of {', '.join(ALIGNS)}")


# -- MatrixDiagPartV3 -----------------------------------------------------------------------------

def _diag_part(input, k, padding_value, *, align):  # noqa: A002 - TF's name
    x = np.asarray(input)
    if x.ndim < 2:
        raise ValueError(f"input must be at least 2-dim, received shape: {show(x.shape)}")
    if np.ndim(padding_value) != 0:
        raise ValueError(f"padding_value must be a scalar, got shape {show(np.shape(padding_value))}")
    _check_align(align)
    lower, upper, ranged = _band(k)
    rows, cols = x.shape[-2:]
    _check_band(lower, upper, rows, cols)
    width = _max_length(lower, upper, rows, cols)
    shape = x.shape[:-2] + (upper - lower + 1, max(width, 0))
    check_size(shape, x.dtype)
    out = np.full(shape, padding_value, x.dtype)
    if out.size and x.size:  # positions are as many as the band's elements: none to place, none to list
        (pr, pc, mr, mc), _ = _positions(lower, upper, rows, cols, align)
        out[..., pr, pc] = x[..., mr, mc]
    return out if ranged else out.reshape(x.shape[:-2] + (max(width, 0),))


def _infer_diag_part(ctx):
    _check_align_attr(ctx)
    x = ctx.shape(0)
    if x.ndims is not None and x.ndims < 2:
        raise ctx.error(f"input must be at least 2-dim, received shape: {show(x)}")
    k = constant_value(ctx.inputs[1])
    if x.ndims is None or k is None:
        return [TensorShape(None)]
    try:
        lower, upper, ranged = _band(k)
    except ValueError as e:
        raise ctx.error(str(e)) from None
    rows, cols = x.dims[-2:]
    width = None if rows is None or cols is None else max(_max_length(lower, upper, rows, cols), 0)
    return [TensorShape(x.dims[:-2] + ((upper - lower + 1, width) if ranged else (width,)))]


def _diag_part_grad(op, g):
    x, k = op.inputs[0], op.inputs[1]
    align = op.attrs["align"]
    dims = x.shape.dims[-2:] if x.shape.ndims else (None, None)
    if None not in dims:
        return [matrix_diag(g, k=k, num_rows=dims[0], num_cols=dims[1], align=align), None, None]
    return [matrix_set_diag(array_ops.zeros_like(x), g, k=k, align=align), None, None]


_ALIGN = Attr("string", "RIGHT_LEFT")
MATRIX_DIAG_PART_V3 = define(
    "MatrixDiagPartV3", "input: T, k: int32, padding_value: T -> diagonal: T",
    doc="The diagonals k (d, or a band [lower, upper]) of the innermost matrices, shorter ones padded per align.",
    attrs={"T": Attr("type"), "align": _ALIGN},
    infer=_infer_diag_part, kernel=_diag_part, grad=_diag_part_grad, numerics=EXACT)


# -- MatrixDiagV3 ----------------------------------------------------------------------------------

def _matrix_size(diagonal_shape, lower, upper, ranged, num_rows, num_cols):
    if ranged and (len(diagonal_shape) < 2 or diagonal_shape[-2] != upper - lower + 1):
        raise ValueError(f"The number of diagonals provided in the input does not match the lower_diag_index "
                         f"and upper_diag_index range: diagonal {show(diagonal_shape)}, k [{lower}, {upper}]")
    width = diagonal_shape[-1]
    least_rows, least_cols = width - min(upper, 0), width + max(lower, 0)
    if num_rows == -1 and num_cols == -1:
        num_rows = num_cols = max(least_rows, least_cols)
    elif num_rows == -1:
        num_rows = least_rows
    elif num_cols == -1:
        num_cols = least_cols
    if num_rows < least_rows:
        raise ValueError("The number of rows is too small.")
    if num_cols < least_cols:
        raise ValueError("The number of columns is too small.")
    if num_rows != least_rows and num_cols != least_cols:
        raise ValueError("The number of rows or columns is not consistent with the specified d_lower, d_upper, and "
                         "diagonal.")
    return num_rows, num_cols


def _matrix_diag(diagonal, k, num_rows, num_cols, padding_value, *, align):
    diag = np.asarray(diagonal)
    for value, what in ((num_rows, "num_rows"), (num_cols, "num_cols"), (padding_value, "padding_value")):
        if np.ndim(value) != 0:
            raise ValueError(f"{what} must be a scalar, got shape {show(np.shape(value))}")
    if diag.ndim < 1:
        raise ValueError("diagonal must be at least 1-dim, received a scalar")
    _check_align(align)
    lower, upper, ranged = _band(k)
    rows, cols = _matrix_size(diag.shape, lower, upper, ranged, int(num_rows), int(num_cols))
    _check_band(lower, upper, rows, cols)
    batch = diag.shape[:-2] if ranged else diag.shape[:-1]
    check_size(batch + (rows, cols), diag.dtype)
    out = np.full(batch + (rows, cols), padding_value, diag.dtype)
    if out.size and diag.size:
        (pr, pc, mr, mc), _ = _positions(lower, upper, rows, cols, align)
        packed = diag if ranged else diag[..., None, :]
        out[..., mr, mc] = packed[..., pr, pc]
    return out


def _infer_matrix_diag(ctx):
    _check_align_attr(ctx)
    diag = ctx.shape(0)
    k, rows, cols = (constant_value(ctx.inputs[i]) for i in (1, 2, 3))
    if diag.ndims == 0:
        raise ctx.error("diagonal must be at least 1-dim, received a scalar")
    if diag.ndims is None or k is None or rows is None or cols is None or diag.dims[-1] is None:
        return [TensorShape(None)]
    try:
        lower, upper, ranged = _band(k)
        r, c = _matrix_size(diag.dims, lower, upper, ranged, int(rows), int(cols))
    except ValueError as e:
        raise ctx.error(str(e)) from None
    return [TensorShape((diag.dims[:-2] if ranged else diag.dims[:-1]) + (r, c))]


MATRIX_DIAG_V3 = define(
    "MatrixDiagV3", "diagonal: T, k: int32, num_rows: int32, num_cols: int32, padding_value: T -> output: T",
    doc="Matrices (num_rows x num_cols, -1 for the least that fits) with the given diagonals k and padding_value "
        "elsewhere.",
    attrs={"T": Attr("type"), "align": _ALIGN}, infer=_infer_matrix_diag, kernel=_matrix_diag,
    grad=lambda op, g: [matrix_diag_part(g, k=op.inputs[1], align=op.attrs["align"]), None, None, None, None],
    numerics=EXACT)


# -- MatrixSetDiagV3 -------------------------------------------------------------------------------

def _set_diag(input, diagonal, k, *, align):  # noqa: A002 - TF's name
    x, diag = np.asarray(input), np.asarray(diagonal)
    if x.ndim < 2:
        raise ValueError(f"input must be at least 2-dim, received shape: {show(x.shape)}")
    _check_align(align)
    lower, upper, ranged = _band(k)
    rows, cols = x.shape[-2:]
    _check_band(lower, upper, rows, cols)
    width = _max_length(lower, upper, rows, cols)
    if ranged and (diag.ndim < 2 or diag.shape[-2] != upper - lower + 1):
        raise ValueError("The number of diagonals provided in `diag` is not consistent with `lower_diag_index` and "
                         "`upper_diag_index`")
    expected = x.shape[:-2] + ((upper - lower + 1,) if ranged else ()) + (width,)
    if diag.shape != expected:
        raise ValueError(f"Either first dimensions of diagonal don't match input.shape[:-2], or diagonal.shape[:-1] "
                         f"is not equal to the longests diagonal in range [lower_diag_index:upper_diag_index]. "
                         f"diagonal {show(diag.shape)}, expected {show(expected)}")
    out = x.copy()
    if out.size and diag.size:
        (pr, pc, mr, mc), _ = _positions(lower, upper, rows, cols, align)
        packed = diag if ranged else diag[..., None, :]
        out[..., mr, mc] = packed[..., pr, pc]
    return out


def _set_diag_grad(op, g):
    k, align = op.inputs[2], op.attrs["align"]
    return [matrix_set_diag(g, array_ops.zeros_like(op.inputs[1]), k=k, align=align),
            matrix_diag_part(g, k=k, align=align), None]


def _infer_set_diag(ctx):
    _check_align_attr(ctx)
    x = ctx.shape(0)
    if x.ndims is not None and x.ndims < 2:
        raise ctx.error(f"input must be at least 2-dim, received shape: {show(x)}")
    return [x]


MATRIX_SET_DIAG_V3 = define(
    "MatrixSetDiagV3", "input: T, diagonal: T, k: int32 -> output: T",
    doc="input with its diagonals k replaced by `diagonal` (packed as MatrixDiagPartV3 gives them).",
    attrs={"T": Attr("type"), "align": _ALIGN}, infer=_infer_set_diag, kernel=_set_diag, grad=_set_diag_grad,
    numerics=EXACT)


# -- MatrixBandPart --------------------------------------------------------------------------------

def _band_part(input, num_lower, num_upper):  # noqa: A002 - TF's name
    x = np.asarray(input)
    if x.ndim < 2:
        raise ValueError(f"input must be at least 2-dim, received shape: {show(x.shape)}")
    rows, cols = x.shape[-2:]
    for value, what in ((num_lower, "num_lower"), (num_upper, "num_upper")):
        if np.ndim(value) != 0:
            raise ValueError(f"{what} must be scalar, got shape {show(np.shape(value))}")
    lower, upper = int(num_lower), int(num_upper)
    if lower > rows:
        raise ValueError(f"num_lower must be negative or less or equal to number of rows ({rows}) got: {lower}")
    if upper > cols:
        raise ValueError(f"num_upper must be negative or less or equal to number of columns ({cols}) got: {upper}")
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # j - i
    keep = ((lower < 0) | (-offset <= lower)) & ((upper < 0) | (offset <= upper))
    return np.where(keep, x, np.zeros((), x.dtype))


def _infer_band_part(ctx):
    x = ctx.shape(0)
    if x.ndims is not None and x.ndims < 2:
        raise ctx.error(f"input must be at least 2-dim, received shape: {show(x)}")
    for i, what in ((1, "num_lower"), (2, "num_upper")):
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.error(f"{what} must be scalar, got shape {show(ctx.shape(i))}")
    return [x]


MATRIX_BAND_PART = define(
    "MatrixBandPart", "input: T, num_lower: Tindex, num_upper: Tindex -> band: T",
    doc="The innermost matrices with everything outside the band (num_lower below, num_upper above the main "
        "diagonal; negative keeps all) set to 0.",
    attrs={"T": Attr("type"), "Tindex": Attr("type", dtypes.int64, frozenset((dtypes.int32, dtypes.int64)))},
    infer=_infer_band_part, kernel=_band_part,
    grad=lambda op, g: [matrix_band_part(g, op.inputs[1], op.inputs[2]), None, None], numerics=EXACT)


# -- the older forms: V2 (align fixed LEFT_LEFT) and V1 (the main diagonal only) ------------------------
# TF1-era graphs hold these; each runs the V3 kernel with its fixed arguments.

def _v2(kernel):
    def run(*inputs):
        return kernel(*inputs, align="LEFT_LEFT")
    return run


MATRIX_DIAG_PART_V2 = define(
    "MatrixDiagPartV2", "input: T, k: int32, padding_value: T -> diagonal: T",
    doc="MatrixDiagPartV3 with align LEFT_LEFT.", attrs={"T": Attr("type")}, infer=_infer_diag_part,
    kernel=_v2(_diag_part), numerics=EXACT,
    grad=lambda op, g: [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), g, k=op.inputs[1], align="LEFT_LEFT"),
                        None, None])
MATRIX_DIAG_V2 = define(
    "MatrixDiagV2", "diagonal: T, k: int32, num_rows: int32, num_cols: int32, padding_value: T -> output: T",
    doc="MatrixDiagV3 with align LEFT_LEFT.", attrs={"T": Attr("type")}, infer=_infer_matrix_diag,
    kernel=_v2(_matrix_diag), numerics=EXACT,
    grad=lambda op, g: [matrix_diag_part(g, k=op.inputs[1], align="LEFT_LEFT"), None, None, None, None])
MATRIX_SET_DIAG_V2 = define(
    "MatrixSetDiagV2", "input: T, diagonal: T, k: int32 -> output: T",
    doc="MatrixSetDiagV3 with align LEFT_LEFT.", attrs={"T": Attr("type")}, infer=_infer_set_diag,
    kernel=_v2(_set_diag), numerics=EXACT,
    grad=lambda op, g: [matrix_set_diag(g, array_ops.zeros_like(op.inputs[1]), k=op.inputs[2], align="LEFT_LEFT"),
                        matrix_diag_part(g, k=op.inputs[2], align="LEFT_LEFT"), None])


def _main_diag_part(input):  # noqa: A002 - TF's name
    return _diag_part(input, np.int32(0), np.zeros((), np.asarray(input).dtype), align="RIGHT_LEFT")


def _main_diag(diagonal):
    return _matrix_diag(diagonal, np.int32(0), np.int32(-1), np.int32(-1), np.zeros((), np.asarray(diagonal).dtype),
                        align="RIGHT_LEFT")


def _main_set_diag(input, diagonal):  # noqa: A002 - TF's name
    return _set_diag(input, diagonal, np.int32(0), align="RIGHT_LEFT")


def _infer_main_diag_part(ctx):
    x = ctx.shape(0)
    if x.ndims is not None and x.ndims < 2:
        raise ctx.error(f"input must be at least 2-dim, received shape: {show(x)}")
    if x.ndims is None:
        return [TensorShape(None)]
    rows, cols = x.dims[-2:]
    return [TensorShape(x.dims[:-2] + (None if None in (rows, cols) else min(rows, cols),))]


def _infer_main_diag(ctx):
    d = ctx.shape(0)
    if d.ndims == 0:
        raise ctx.error("diagonal must be at least 1-dim, received a scalar")
    return [TensorShape(None if d.ndims is None else d.dims + (d.dims[-1],))]


MATRIX_DIAG_PART = define(
    "MatrixDiagPart", "input: T -> diagonal: T", doc="The main diagonal of the innermost matrices.",
    attrs={"T": Attr("type")}, infer=_infer_main_diag_part, kernel=_main_diag_part, numerics=EXACT,
    grad=lambda op, g: [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), g)])
MATRIX_DIAG = define(
    "MatrixDiag", "diagonal: T -> output: T", doc="Square matrices with `diagonal` on the main diagonal, 0 elsewhere.",
    attrs={"T": Attr("type")}, infer=_infer_main_diag, kernel=_main_diag, numerics=EXACT,
    grad=lambda op, g: [matrix_diag_part(g)])
MATRIX_SET_DIAG = define(
    "MatrixSetDiag", "input: T, diagonal: T -> output: T", doc="input with its main diagonal replaced by `diagonal`.",
    attrs={"T": Attr("type")}, infer=_infer_set_diag, kernel=_main_set_diag, numerics=EXACT,
    grad=lambda op, g: [matrix_set_diag(g, array_ops.zeros_like(op.inputs[1])), matrix_diag_part(g)])


# -- builders ------------------------------------------------------------------------------------

def _padding(x, padding_value):
    x = convert_to_tensor(x)
    return x, array_ops.constant(padding_value, dtype=x.dtype)


def matrix_diag_part(input, name=None, k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """tf.linalg.diag_part."""
    x, pad = _padding(input, padding_value)
    return build("MatrixDiagPartV3", [x, _k(k), pad], name=name, default_name="diag_part",
                 attrs={"align": align}).outputs[0]


def matrix_diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0, align="RIGHT_LEFT"):
    """tf.linalg.diag."""
    d, pad = _padding(diagonal, padding_value)
    return build("MatrixDiagV3", [d, _k(k), _i32(num_rows), _i32(num_cols), pad], name=name, default_name="diag",
                 attrs={"align": align}).outputs[0]


def matrix_set_diag(input, diagonal, name=None, k=0, align="RIGHT_LEFT"):  # noqa: A002
    """tf.linalg.set_diag."""
    return build("MatrixSetDiagV3", [input, diagonal, _k(k)], name=name, default_name="set_diag",
                 attrs={"align": align}).outputs[0]


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """tf.linalg.band_part."""
    return build("MatrixBandPart", [input, num_lower, num_upper], name=name, default_name="MatrixBandPart").outputs[0]


def _k(k):
    return k if hasattr(k, "dtype") else np.asarray(k, np.int32)


def _i32(v):
    return v if hasattr(v, "dtype") else np.int32(v)
