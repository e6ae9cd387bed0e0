"""Elementwise arithmetic, reductions, MatMul and Cast, with Tensor's operators."""

import math
import operator

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import Tensor, get_default_graph
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, elementwise_ulps, tensor_ulps
from graphdef.framework.limits import check as check_size
from graphdef.ops.registry import (NOT_DIFFERENTIABLE, Attr, build, builder, constant_value, convert_to_tensor,
                                   define, infer_broadcast, same_as_input)
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops

ARITH = dtypes.NUMERIC
SIGNED = dtypes.SIGNED
FLOATS = dtypes.FLOATS
REAL = dtypes.NUMERIC


def _binary(type_name, kernel, doc, grad, allowed=ARITH, *, numerics):
    return define(type_name, "x: T, y: T -> z: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=infer_broadcast, kernel=kernel,
                  grad=_broadcasting(grad) if callable(grad) else grad, numerics=numerics)


def _unary(type_name, kernel, doc, grad, allowed=ARITH, *, numerics):
    return define(type_name, "x: T -> y: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=same_as_input(), kernel=kernel,
                  grad=grad, numerics=numerics)


def _broadcasting(grad):
    """Wraps a binary op's gradient so each side is summed back to its own (broadcast) shape."""
    def wrapped(op, g):
        x, y = op.inputs
        gx, gy = grad(op, g, x, y)
        if not (x.shape.is_fully_defined() and y.shape.is_fully_defined()):
            return _unbroadcast_at_run_time(x, y, gx, gy)
        return [None if gx is None else unbroadcast(gx, x), None if gy is None else unbroadcast(gy, y)]
    return wrapped


def _unbroadcast_at_run_time(x, y, gx, gy):
    """TF's own form for shapes known only at run time: BroadcastGradientArgs, Sum, Reshape."""
    sx, sy = array_ops.shape_of(x), array_ops.shape_of(y)
    rx, ry = build("BroadcastGradientArgs", [sx, sy], default_name="BroadcastGradientArgs").outputs
    return [None if gx is None else array_ops.reshape(reduce_sum(gx, rx), sx),
            None if gy is None else array_ops.reshape(reduce_sum(gy, ry), sy)]


def _broadcast_gradient_args(s0, s1):
    dtype = np.asarray(s0).dtype
    s0, s1 = [int(d) for d in np.ravel(s0)], [int(d) for d in np.ravel(s1)]
    n = max(len(s0), len(s1))
    a, b = [1] * (n - len(s0)) + s0, [1] * (n - len(s1)) + s1
    for p, q in zip(a, b):
        if p != q and p != 1 and q != 1:
            raise ValueError(f"shapes {s0} and {s1} are not broadcast-compatible")
    if s0 == s1:  # TF's fast path: nothing to reduce
        return np.array([], dtype=dtype), np.array([], dtype=dtype)
    # as TF does, every size-1 (or missing) dim is listed, even where both sides are 1
    r0 = [i for i, p in enumerate(a) if p == 1]
    r1 = [i for i, q in enumerate(b) if q == 1]
    return np.array(r0, dtype=dtype), np.array(r1, dtype=dtype)


BROADCAST_GRADIENT_ARGS = define(
    "BroadcastGradientArgs", "s0: T, s1: T -> r0: T, r1: T",
    doc="For shapes s0, s1 broadcast together: the axes each side's gradient must be summed over.",
    attrs={"T": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=lambda ctx: [TensorShape([None]), TensorShape([None])],
    kernel=_broadcast_gradient_args, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def unbroadcast(g, x):
    """Sums `g`, shaped like a broadcast result, over the axes broadcasting added to `x`."""
    gs, xs = g.shape, x.shape
    if gs.is_fully_defined() and gs == xs:
        return g
    if gs.ndims is None or xs.ndims is None:
        raise NotImplementedError(f"gradient through broadcasting needs known ranks ('{x.name}')")
    lead = gs.ndims - xs.ndims
    axes = list(range(lead)) + [lead + i for i, d in enumerate(xs.dims)
                                if d == 1 and gs.dims[lead + i] != 1]
    if axes:
        g = reduce_sum(g, axis=axes, keepdims=True)
    if lead or (axes and not xs.is_fully_defined()):
        g = array_ops.reshape(g, array_ops.shape_of(x))
    return g


# operator.* rather than np.* ufuncs: same numpy semantics, far less call overhead on scalars.
ADD = _binary("Add", operator.add, "x + y with numpy broadcasting (TF 1.x graphs).",
               lambda op, g, x, y: (g, g), numerics=EXACT)
ADD_V2 = _binary("AddV2", operator.add, "x + y with numpy broadcasting.", lambda op, g, x, y: (g, g), numerics=EXACT)
SUB = _binary("Sub", operator.sub, "x - y with numpy broadcasting.", lambda op, g, x, y: (g, negative(g)),
              numerics=EXACT)
MUL = _binary("Mul", operator.mul, "x * y with numpy broadcasting.",
               lambda op, g, x, y: (multiply(g, y), multiply(x, g)), numerics=EXACT)
REAL_DIV = _binary("RealDiv", operator.truediv, "x / y for floats, with numpy broadcasting.",
                   lambda op, g, x, y: (g / y, negative(g) * x / square(y)), FLOATS, numerics=EXACT)
def _choose(pick_x):
    """Maximum/Minimum send the gradient to the side that won (x on ties, as TF does)."""
    def grad(op, g, x, y):
        x_wins = pick_x(x, y)
        zero = array_ops.zeros_like(g)
        return compare_ops.select_v2(x_wins, g, zero), compare_ops.select_v2(x_wins, zero, g)
    return grad


def _ge(x, y):
    return compare_ops.greater_equal(x, y)


def _le(x, y):
    return compare_ops.less_equal(x, y)


MAXIMUM = _binary("Maximum", np.maximum, "Elementwise max; NaN propagates.", _choose(_ge), numerics=EXACT_BUT_ZERO_SIGN)
MINIMUM = _binary("Minimum", np.minimum, "Elementwise min; NaN propagates.", _choose(_le), numerics=EXACT_BUT_ZERO_SIGN)
SQUARED_DIFFERENCE = _binary("SquaredDifference", lambda x, y: np.square(x - y), "(x - y) ** 2 with broadcasting.",
                              lambda op, g, x, y: (g * (2 * (x - y)), g * (2 * (y - x))), SIGNED, numerics=EXACT)
POW = _binary("Pow", operator.pow, "x ** y; integer x to a negative integer power is an error.",
              lambda op, g, x, y: (g * y * pow(x, y - 1), None), numerics=elementwise_ulps(4))

NEG = _unary("Neg", operator.neg, "-x.", lambda op, g: [negative(g)], SIGNED, numerics=EXACT)
SQUARE = _unary("Square", np.square, "x * x.", lambda op, g: [g * (2 * op.inputs[0])], numerics=EXACT)
SQRT = _unary("Sqrt", np.sqrt, "Square root; NaN below zero.", lambda op, g: [g / (2 * op.outputs[0])],
              FLOATS, numerics=EXACT)
EXP = _unary("Exp", np.exp, "e ** x.", lambda op, g: [g * op.outputs[0]], FLOATS, numerics=elementwise_ulps(4))
LOG = _unary("Log", np.log, "Natural log; -inf at 0, NaN below zero.", lambda op, g: [g / op.inputs[0]],
             FLOATS, numerics=elementwise_ulps(4))
LOG1P = _unary("Log1p", np.log1p, "log(1 + x), accurate near 0.", lambda op, g: [g / (1 + op.inputs[0])],
               FLOATS, numerics=elementwise_ulps(4))
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])  # numpy has no erfc; C's is correctly rounded enough

ERFC = _unary("Erfc", lambda x: _ERFC(x).astype(np.asarray(x).dtype), "1 - erf(x) (Keras' exact gelu uses it).",
              lambda op, g: [g * (-2 / np.sqrt(np.pi)) * exp(-square(op.inputs[0]))], FLOATS,
              numerics=elementwise_ulps(4))
SIGN = _unary("Sign", np.sign, "-1, 0 or 1 by the sign of x (0 for 0).", NOT_DIFFERENTIABLE, SIGNED, numerics=EXACT)
ABS = _unary("Abs", np.abs, "|x|.", lambda op, g: [g * sign(op.inputs[0])], SIGNED, numerics=EXACT)
SIGMOID = _unary("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), "1 / (1 + exp(-x)).",
                 lambda op, g: [g * op.outputs[0] * (1 - op.outputs[0])], FLOATS, numerics=elementwise_ulps(4))
TANH = _unary("Tanh", np.tanh, "Hyperbolic tangent.",
              lambda op, g: [g * (1 - square(op.outputs[0]))], FLOATS, numerics=elementwise_ulps(4))
RSQRT = _unary("Rsqrt", lambda x: 1 / np.sqrt(x), "1 / sqrt(x); inf at 0, NaN below zero.",
               lambda op, g: [g * op.outputs[0] * op.outputs[0] * op.outputs[0] * -0.5], FLOATS,
               numerics=elementwise_ulps(2))


# -- integer-aware division: TF's three conventions ------------------------------------------------

def _nonzero_divisor(y):
    if np.any(np.asarray(y) == 0):  # TF refuses rather than returning numpy's 0 and a warning
        raise ValueError("integer division by zero")


def _floor_div(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.floor(x / y)  # floor of the rounded quotient, as TF; numpy's // differs (1 // 0.1 is 9)
    _nonzero_divisor(y)
    return np.floor_divide(x, y)


def _floor_mod(x, y):
    if np.asarray(x).dtype.kind == "f":
        # TF's rule: the C remainder, moved into y's sign when it is non-zero, so -4 mod 2 is -0.0
        m = np.fmod(x, y)
        return np.where((m != 0) & ((y < 0) != (m < 0)), m + y, m)
    _nonzero_divisor(y)
    return np.remainder(x, y)


def _div(x, y):
    kind = np.asarray(x).dtype.kind
    if kind == "f":
        return x / y
    _nonzero_divisor(y)
    q = np.floor_divide(x, y)
    if kind == "u":
        return q
    # C++ division truncates toward zero: step floored quotients of inexact, opposite-sign pairs back up
    inexact = (x - q * y != 0) & ((x < 0) != (y < 0))
    return q + inexact.astype(q.dtype)


def _div_grad(op, g, x, y):
    if not x.dtype.is_floating:
        return None, None
    return g / y, negative(g) * x / square(y)


FLOOR_DIV = _binary("FloorDiv", _floor_div, "x // y rounding toward -inf (floor(x / y) for floats); "
                    "integer division by zero is an error.", NOT_DIFFERENTIABLE, numerics=EXACT)
FLOOR_MOD = _binary("FloorMod", _floor_mod, "The remainder of floor division: it has y's sign, as Python's %.",
                    lambda op, g, x, y: (g, negative(g) * floordiv(x, y)), numerics=EXACT)
DIV = _binary("Div", _div, "TF 1.x's x / y: truncating toward zero for integers, like RealDiv for floats.",
              _div_grad, numerics=EXACT)


def _same_shapes(what, *arrays):
    shape = np.shape(arrays[0])
    for a in arrays[1:]:
        if np.shape(a) != shape:
            raise ValueError(f"{what} inputs must all have one shape, got {show(shape)} and {show(np.shape(a))}")


def _infer_same_shapes(ctx):
    shape = ctx.shape(0)
    for i in range(1, len(ctx.inputs)):
        if not shape.is_compatible_with(ctx.shape(i)):
            raise ctx.error(f"inputs must all have one shape, got {show(shape)} and {show(ctx.shape(i))}")
        shape = shape.merge_with(ctx.shape(i))
    return [shape]


_SAME_WIDTH_UINT = {4: np.uint32, 8: np.uint64, 2: np.uint16}


def _relu_grad(gradients, features):
    _same_shapes("ReluGrad", gradients, features)
    gradients = np.asarray(gradients)
    keep = np.asarray(features) > 0
    if gradients.dtype.kind != "f" or gradients.ndim == 0:
        return np.where(keep, gradients, np.zeros((), gradients.dtype))
    # select(keep, g, +0.0) by masking the bits: exact (a NaN where features <= 0 still gives 0,
    # unlike g * keep) and several times faster than np.where
    bits = _SAME_WIDTH_UINT[gradients.dtype.itemsize]
    mask = keep.astype(bits)
    np.negative(mask, out=mask)  # True -> all ones, False -> 0
    return (np.ascontiguousarray(gradients).view(bits) & mask).view(gradients.dtype)


RELU_GRAD = define(
    "ReluGrad", "gradients: T, features: T -> backprops: T",
    doc="The gradient of Relu: `gradients` where features > 0, else 0.",
    attrs={"T": Attr("type", allowed=REAL)}, infer=_infer_same_shapes, kernel=_relu_grad,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)
RELU = _unary("Relu", lambda x: np.maximum(x, 0), "max(x, 0); NaN propagates.",
              lambda op, g: [build("ReluGrad", [g, op.inputs[0]], default_name="ReluGrad").outputs[0]], REAL,
              numerics=EXACT_BUT_ZERO_SIGN)


def _add_n(*inputs):
    _same_shapes("AddN", *inputs)
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total


ADD_N = define(
    "AddN", "inputs: N*T -> sum: T",
    doc="The sum of N tensors of one shape, added left to right.",
    attrs={"N": Attr("int"), "T": Attr("type", allowed=ARITH)},
    infer=_infer_same_shapes, kernel=_add_n, grad=lambda op, g: [g] * len(op.inputs), numerics=tensor_ulps(8))


# -- reductions -----------------------------------------------------------------------

def normalize_axes(axes, ndim):
    """Reduction axes (scalar or 1-D, negatives allowed) -> sorted tuple; raises on bad ones."""
    out = []
    for a in np.ravel(axes).tolist():
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        a = a % ndim if ndim else 0
        if a in out:
            raise ValueError(f"axis {a} is listed twice")
        out.append(a)
    return tuple(sorted(out)) if ndim else ()


def _reduces_every_axis(x, axes):
    """True for axes built as Range(0, Rank(x), 1): what reduce_* emits for axis=None, unknown rank."""
    op = axes.op
    if op.type != "Range":
        return False
    start, limit, delta = op.inputs
    return (limit.op.type == "Rank" and limit.op.inputs[0] is x
            and constant_value(start) == 0 and constant_value(delta) == 1)


def _infer_reduction(ctx):
    x = ctx.shape(0)
    keep = ctx.attrs["keep_dims"]
    axes = constant_value(ctx.inputs[1])
    if not keep and _reduces_every_axis(ctx.inputs[0], ctx.inputs[1]):
        return [TensorShape(())]
    if x.ndims is None:
        return [TensorShape(None)]
    if axes is None:
        return [TensorShape([None] * x.ndims) if keep else TensorShape(None)]
    try:
        axes = normalize_axes(axes, x.ndims)
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)})") from None
    if keep:
        return [TensorShape([1 if i in axes else d for i, d in enumerate(x.dims)])]
    return [TensorShape([d for i, d in enumerate(x.dims) if i not in axes])]


def _check_empty_reduction(x, axes, keep_dims):
    """An empty input reduced over its empty axes may give an output of any size (a [0, 2^40]
    Const summed over axis 0): checked against the limit before numpy fills it."""
    if x.size == 0:
        axes = normalize_axes(axes, x.ndim)
        check_size([1 if i in axes else d for i, d in enumerate(x.shape) if keep_dims or i not in axes], x.dtype)


def _sum(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    axes = normalize_axes(axes, x.ndim)
    if not axes:  # nothing to reduce (a gradient's unbroadcast often asks for this): no copy
        return x
    return np.sum(x, axis=axes, dtype=x.dtype, keepdims=keep_dims)


def _mean(x, axes, *, keep_dims):
    x = np.asarray(x)
    axes = normalize_axes(axes, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes]))
    if x.dtype.kind in "iu":  # TF sums in a wider type, then divides with truncation
        if count == 0:
            raise ValueError("mean of an empty integer reduction")
        wide = np.uint64 if x.dtype.kind == "u" else np.int64
        total = np.sum(x, axis=axes, dtype=wide, keepdims=keep_dims)
        quotient = total // count if x.dtype.kind == "u" else np.sign(total) * (np.abs(total) // count)
        return quotient.astype(x.dtype)
    if count == 0:  # numpy would warn; TF quietly gives NaN
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep_dims else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        check_size(shape, x.dtype)
        return np.full(shape, np.nan, dtype=x.dtype)
    return np.mean(x, axis=axes, dtype=x.dtype, keepdims=keep_dims)


def _max(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.max(x, axis=normalize_axes(axes, x.ndim), keepdims=keep_dims, initial=lowest)


def _reduction(type_name, kernel, doc, grad, allowed=ARITH, *, numerics):
    return define(type_name, "input: T, reduction_indices: Tidx -> output: T", doc=doc,
                  attrs={"keep_dims": Attr("bool", False), "T": Attr("type", allowed=allowed),
                         "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
                  infer=_infer_reduction, kernel=kernel, grad=grad, numerics=numerics)


def _spread(op, g):
    """The gradient of a sum: g, with the reduced axes restored, repeated over the input's shape."""
    x = op.inputs[0]
    axes = constant_value(op.inputs[1])
    if op.outputs[0].shape.ndims == 0 and not op.attrs["keep_dims"]:  # reduced to a scalar
        return array_ops.broadcast_to(g, array_ops.shape_of(x)), None
    if x.shape.ndims is None or axes is None:
        raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs a known rank and constant axes")
    axes = normalize_axes(axes, x.shape.ndims)
    if not op.attrs["keep_dims"]:
        kept = [1 if i in axes else (d if d is not None else -1) for i, d in enumerate(x.shape.dims)]
        if kept.count(-1) > 1:
            raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs the kept dims known")
        g = array_ops.reshape(g, kept)
    return array_ops.broadcast_to(g, array_ops.shape_of(x)), axes


def _sum_grad(op, g):
    return [_spread(op, g)[0], None]


def _mean_grad(op, g):
    spread, axes = _spread(op, g)
    x = op.inputs[0]
    dims = [None] if axes is None else [x.shape.dims[a] for a in axes]
    if None in dims:
        count = cast(array_ops.size(x), x.dtype) / cast(array_ops.size(op.outputs[0]), x.dtype)
    else:
        count = float(np.prod(dims))
    return [spread / count, None]


def _extreme_grad(op, g):
    """Max/Min: the gradient goes to every element equal to the extreme, shared among ties (as TF)."""
    x, y = op.inputs[0], op.outputs[0]
    axes = constant_value(op.inputs[1])
    if x.shape.ndims is None or axes is None:
        raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs a known rank and constant axes")
    axes = normalize_axes(axes, x.shape.ndims)
    if not op.attrs["keep_dims"]:
        kept = [1 if i in axes else (d if d is not None else -1) for i, d in enumerate(x.shape.dims)]
        y, g = array_ops.reshape(y, kept), array_ops.reshape(g, kept)
    hits = cast(compare_ops.equal(x, array_ops.broadcast_to(y, array_ops.shape_of(x))), g.dtype)
    count = reduce_sum(hits, axis=list(axes), keepdims=True)
    return [hits * g / count, None]


def _min(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    highest = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max
    return np.min(x, axis=normalize_axes(axes, x.ndim), keepdims=keep_dims, initial=highest)


def _prod(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    return np.prod(x, axis=normalize_axes(axes, x.ndim), dtype=x.dtype, keepdims=keep_dims)


SUM = _reduction("Sum", _sum, "Sum over the axes given as a tensor; keep_dims keeps them as size 1.", _sum_grad,
                 numerics=tensor_ulps(8))
MEAN = _reduction("Mean", _mean, "Mean over the axes; integer means truncate, as in TF.", _mean_grad,
                  numerics=tensor_ulps(8))
MAX = _reduction("Max", _max, "Max over the axes; an empty reduction gives the lowest value.", _extreme_grad,
                 numerics=EXACT_BUT_ZERO_SIGN)
MIN = _reduction("Min", _min, "Min over the axes; an empty reduction gives the highest value.", _extreme_grad,
                 numerics=EXACT_BUT_ZERO_SIGN)
PROD = _reduction("Prod", _prod, "Product over the axes; an empty reduction gives 1.", None, numerics=tensor_ulps(8))


def _infer_arg_extreme(ctx):
    x = ctx.shape(0)
    axis = constant_value(ctx.inputs[1])
    if x.ndims is None or axis is None:
        return [TensorShape(None if x.ndims is None else [None] * (x.ndims - 1))]
    try:
        (axis,) = normalize_axes(axis, x.ndims)
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)})") from None
    return [TensorShape([d for i, d in enumerate(x.dims) if i != axis])]


def _arg_extreme(pick):
    def kernel(x, dimension, *, output_type):
        x = np.asarray(x)
        if x.ndim == 0:
            raise ValueError(f"cannot take {pick.__name__} of a scalar; it needs at least one dim")
        (axis,) = normalize_axes(dimension, x.ndim)
        if x.shape[axis] == 0:
            raise ValueError(f"cannot take {pick.__name__} along an empty axis {axis} of shape {list(x.shape)}")
        return pick(x, axis=axis).astype(output_type.np)  # the first index on ties, as TF
    return kernel


def _arg_op(type_name, pick, doc):
    return define(type_name, "input: T, dimension: Tidx -> output: output_type", doc=doc,
                  attrs={"T": Attr("type", allowed=ARITH | {dtypes.bool_}),
                         "Tidx": Attr("type", dtypes.int32, dtypes.INDEX),
                         "output_type": Attr("type", dtypes.int64, dtypes.INDEX)},
                  infer=_infer_arg_extreme, kernel=_arg_extreme(pick), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


ARG_MAX = _arg_op("ArgMax", np.argmax, "The index of the largest value along an axis (the first on ties).")
ARG_MIN = _arg_op("ArgMin", np.argmin, "The index of the smallest value along an axis (the first on ties).")


# -- MatMul and Cast ------------------------------------------------------------------

def _infer_matmul(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    for s, side in ((a, "a"), (b, "b")):
        if s.ndims not in (None, 2):
            raise ctx.error(f"input {side} must be a matrix, got shape {show(s)}")
    if a.ndims is None or b.ndims is None:
        return [TensorShape([None, None])]
    m, k = reversed(a.dims) if ctx.attrs["transpose_a"] else a.dims
    k2, n = reversed(b.dims) if ctx.attrs["transpose_b"] else b.dims
    if k is not None and k2 is not None and k != k2:
        flags = "".join(f", {f}=True" for f in ("transpose_a", "transpose_b") if ctx.attrs[f])
        raise ctx.error(f"cannot multiply {show(a)} by {show(b)}{flags}: inner dimensions {k} and {k2} differ")
    return [TensorShape([m, n])]


def _matmul(a, b, *, transpose_a, transpose_b):
    if np.ndim(a) != 2 or np.ndim(b) != 2:
        raise ValueError(f"MatMul needs matrices, got shapes {list(np.shape(a))} and {list(np.shape(b))}")
    # [m, k] x [k, n] is m x n whatever k is: an empty k (or k of 1) may ask for any size
    m = np.shape(a)[1 if transpose_a else 0]
    n = np.shape(b)[0 if transpose_b else 1]
    check_size((m, n), np.result_type(a, b))
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


MATMUL = define(
    "MatMul", "a: T, b: T -> product: T",
    doc="Matrix product of two 2-D tensors, optionally transposing either first.",
    attrs={"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
           "T": Attr("type", allowed=ARITH)},
    infer=_infer_matmul, kernel=_matmul, grad=lambda op, g: _matmul_grad(op, g), numerics=tensor_ulps(8))


def _matmul_grad(op, g):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)]
    if not ta and tb:
        return [matmul(g, b), matmul(g, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, g, transpose_b=True), matmul(a, g)]
    return [matmul(b, g, transpose_a=True, transpose_b=True), matmul(g, a, transpose_a=True, transpose_b=True)]


def _cast(x, *, DstT):  # noqa: N803 - TF's attr name
    return np.asarray(x).astype(DstT.np)


CAST = define(
    "Cast", "x: SrcT -> y: DstT",
    doc="Converts the element type; float -> int truncates toward zero, x -> bool is x != 0.",
    attrs={"SrcT": Attr("type"), "DstT": Attr("type"), "Truncate": Attr("bool", False)},
    infer=same_as_input(), kernel=_cast,
    grad=lambda op, g: [cast(g, op.attrs["SrcT"]) if op.attrs["SrcT"].is_floating and g.dtype.is_floating
                        else None], numerics=EXACT)


# -- builders -------------------------------------------------------------------------

def _op(type_name, default_name):
    return builder(type_name, default_name, 2)


def _op1(type_name, default_name):
    return builder(type_name, default_name, 1)


add = _op("AddV2", "Add")
subtract = _op("Sub", "Sub")
multiply = _op("Mul", "Mul")
maximum = _op("Maximum", "Maximum")
minimum = _op("Minimum", "Minimum")
pow = _op("Pow", "Pow")  # noqa: A001 - TF's name
negative = _op1("Neg", "Neg")
square = _op1("Square", "Square")
sqrt = _op1("Sqrt", "Sqrt")
exp = _op1("Exp", "Exp")
log = _op1("Log", "Log")
abs = _op1("Abs", "Abs")  # noqa: A001 - TF's name
sigmoid = _op1("Sigmoid", "Sigmoid")
tanh = _op1("Tanh", "Tanh")
relu = _op1("Relu", "Relu")
sign = _op1("Sign", "Sign")
log1p = _op1("Log1p", "Log1p")
erfc = _op1("Erfc", "Erfc")
squared_difference = _op("SquaredDifference", "SquaredDifference")
rsqrt = _op1("Rsqrt", "Rsqrt")
floor_mod = floormod = mod = _op("FloorMod", "FloorMod")
realdiv = _op("RealDiv", "RealDiv")


def floordiv(x, y, name=None):
    """x // y, rounding toward -inf (TF's FloorDiv, also for floats)."""
    with get_default_graph().name_scope(name or "floordiv") as scope:
        return build("FloorDiv", [x, y], name=scope).outputs[0]


floor_div = floordiv


def div(x, y, name=None):
    """TF 1.x's tf.div (Python 2 division): RealDiv for floats, FloorDiv for integers."""
    with get_default_graph().name_scope(name or "div") as scope:
        x, y = _pair(x, y)
        return build("RealDiv" if x.dtype.is_floating else "FloorDiv", [x, y], name=scope).outputs[0]


def add_n(inputs, name=None):
    """The sum of a list of same-shaped tensors."""
    return build("AddN", [list(inputs)], name=name, default_name="AddN").outputs[0]

# int8/16 divide in float32, int32/64 in float64: TF's true-division table.
_TRUEDIV_TYPE = {dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32, dtypes.int16: dtypes.float32,
                 dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def _pair(x, y):
    """Converts a Python operand to the other operand's dtype, as TF's operators do."""
    if isinstance(x, Tensor) or hasattr(x, "_to_tensor"):
        x = convert_to_tensor(x)
        return x, convert_to_tensor(y, dtype=x.dtype, name="y")
    y = convert_to_tensor(y, name="y")
    return convert_to_tensor(x, dtype=y.dtype, name="x"), y


def truediv(x, y, name=None):
    """x / y; integers are cast to float first (int32 -> float64), so 15 / 4 is 3.75."""
    graph = get_default_graph()
    with graph.name_scope(name or "truediv") as scope:
        x, y = _pair(x, y)
        if x.dtype is not y.dtype:
            raise TypeError(f"divide: x is {x.dtype.name} but y is {y.dtype.name}; cast one side")
        target = _TRUEDIV_TYPE.get(x.dtype)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return build("RealDiv", [x, y], name=scope).outputs[0]


def divide(x, y, name=None):
    """True division, as `x / y`."""
    return truediv(x, y, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    return build("MatMul", [a, b], name=name, default_name="MatMul",
                 attrs={"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}).outputs[0]


def cast(x, dtype, name=None):
    """Converts `x` to `dtype`; a no-op (no node) when it already has it."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return build("Cast", [x], name=name, default_name="Cast", attrs={"DstT": dtype}).outputs[0]


def _reduce(type_name, default_name):
    def reducer(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        x = convert_to_tensor(input_tensor)
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else keep_dims)
        if axis is None:  # every axis: a constant list when the rank is known, else Range(0, Rank(x))
            if x.shape.ndims is None:
                axis = array_ops.range_(0, array_ops.rank(x), 1)
            else:
                axis = array_ops.constant(list(range(x.shape.ndims)), dtype=dtypes.int32)
        return build(type_name, [x, axis], name=name, default_name=default_name,
                     attrs={"keep_dims": keep}).outputs[0]
    reducer.__name__ = f"reduce_{default_name.lower()}"
    return reducer


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return build("ArgMax", [input, 0 if axis is None else axis], name=name, default_name="ArgMax",
                 attrs={"output_type": dtypes.as_dtype(output_type)}).outputs[0]


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    axis = dimension if axis is None else axis
    return build("ArgMin", [input, 0 if axis is None else axis], name=name, default_name="ArgMin",
                 attrs={"output_type": dtypes.as_dtype(output_type)}).outputs[0]


# -- Tensor operators, named as TF names them ------------------------------------------

def _operator(type_name, default_name, reflected=False):
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        return build(type_name, [a, b], default_name=default_name).outputs[0]
    return method


for _dunder, _type, _name in (("add", "AddV2", "add"), ("sub", "Sub", "sub"), ("mul", "Mul", "mul"),
                              ("pow", "Pow", "pow")):
    setattr(Tensor, f"__{_dunder}__", _operator(_type, _name))
    setattr(Tensor, f"__r{_dunder}__", _operator(_type, _name, reflected=True))
Tensor.__truediv__ = lambda self, other: truediv(self, other)
Tensor.__rtruediv__ = lambda self, other: truediv(other, self)
Tensor.__matmul__ = lambda self, other: matmul(self, other, name="matmul")
Tensor.__rmatmul__ = lambda self, other: matmul(other, self, name="matmul")
Tensor.__neg__ = lambda self: negative(self)
Tensor.__abs__ = lambda self: abs(self)
Tensor.__floordiv__ = lambda self, other: floordiv(self, other)
Tensor.__rfloordiv__ = lambda self, other: floordiv(other, self)
Tensor.__mod__ = _operator("FloorMod", "mod")
Tensor.__rmod__ = _operator("FloorMod", "mod", reflected=True)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max), as TF1 builds it (Minimum, then Maximum)."""
    with get_default_graph().name_scope(name or "clip_by_value") as scope:
        t = convert_to_tensor(t, name="t")
        return maximum(minimum(t, clip_value_max, name="Minimum"), clip_value_min, name=scope)
