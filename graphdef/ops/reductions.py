"""Reductions along axes: Sum, Mean, Max, Min, Prod, ArgMax and ArgMin, with their tf.* builders."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, convert_to_tensor, define
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops
from graphdef.ops import math as math_ops

ARITH = dtypes.NUMERIC

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
        count = math_ops.cast(array_ops.size(x), x.dtype) / math_ops.cast(array_ops.size(op.outputs[0]), x.dtype)
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
    hits = math_ops.cast(compare_ops.equal(x, array_ops.broadcast_to(y, array_ops.shape_of(x))), g.dtype)
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


# -- builders -------------------------------------------------------------------------

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
