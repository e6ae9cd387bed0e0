"""Ops along one axis that keep it: Cumsum and Cumprod (running sums and products), TopKV2."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import tensor_ulps, EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, constant_value, convert_to_tensor, define
from graphdef.ops import gather_scatter as gather_scatter_ops
from graphdef.ops import manip as manip_ops
from graphdef.ops import math as math_ops

SMALL_INDEX = frozenset((dtypes.int16, dtypes.int32, dtypes.int64))


# -- Cumsum and Cumprod ---------------------------------------------------------------------------

def _scan_axis(axis, ndim):
    if np.ndim(axis) != 0:
        raise ValueError(f"axis must be a scalar, got shape {show(np.shape(axis))}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
    return a % ndim


def _infer_scan(ctx):
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.error(f"axis must be a scalar, got shape {show(ctx.shape(1))}")
    axis, x = constant_value(ctx.inputs[1]), ctx.shape(0)
    if axis is not None and x.ndims is not None:
        try:
            _scan_axis(axis, x.ndims)
        except ValueError as e:
            raise ctx.error(f"{e} (input shape {show(x)})") from None
    return [x]


def _scan(accumulate, identity):
    def kernel(x, axis, *, exclusive, reverse):
        x = np.asarray(x)
        if x.ndim == 0:
            raise ValueError("cannot scan a scalar; it needs at least one dim")
        a = _scan_axis(axis, x.ndim)
        if reverse:
            x = np.flip(x, a)
        out = accumulate(x, axis=a, dtype=x.dtype)
        if exclusive:  # shifted by one along the axis, the identity first
            first = np.full(x.shape[:a] + (min(1, x.shape[a]),) + x.shape[a + 1:], identity, x.dtype)
            out = np.concatenate([first, np.take(out, range(x.shape[a] - 1), axis=a)], axis=a)
        return np.flip(out, a) if reverse else out
    return kernel


def _cumsum_grad(op, g):
    return [cumsum(g, op.inputs[1], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]), None]


def _cumprod_grad(op, g):
    """TF's formula: the running sum of prod * g the other way, over x (so x must not be 0)."""
    x, axis = op.inputs
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    return [cumsum(prod * g, axis, exclusive=exclusive, reverse=not reverse) / x, None]


def _scan_op(type_name, kernel, doc, grad):
    return define(type_name, "x: T, axis: Tidx -> out: T", doc=doc,
                  attrs={"exclusive": Attr("bool", False), "reverse": Attr("bool", False),
                         "T": Attr("type", allowed=dtypes.NUMERIC),
                         "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
                  infer=_infer_scan, kernel=kernel, grad=grad, numerics=tensor_ulps(8))


CUMSUM = _scan_op("Cumsum", _scan(np.cumsum, 0), "Running sums along an axis; exclusive leaves each element out, "
                  "reverse runs from the end.", _cumsum_grad)
CUMPROD = _scan_op("Cumprod", _scan(np.cumprod, 1), "Running products along an axis; exclusive leaves each "
                   "element out, reverse runs from the end.", _cumprod_grad)


# -- TopKV2 ----------------------------------------------------------------------------------------

def _infer_top_k(ctx):
    x, k = ctx.shape(0), constant_value(ctx.inputs[1])
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.error(f"k must be a scalar, got shape {show(ctx.shape(1))}")
    if x.ndims == 0:
        raise ctx.error("input must have at least one dim")
    if k is not None:
        k = int(k)
        n = x.dims[-1] if x.ndims else None
        if k < 0 or (n is not None and k > n):
            raise ctx.error(f"k {k} must be in [0, {n if n is not None else 'the last dim'}] for input {show(x)}")
    if x.ndims is None:
        return [TensorShape(None), TensorShape(None)]
    out = TensorShape(x.dims[:-1] + (k,))
    return [out, out]


def _top_k(input, k, *, sorted, index_type):  # noqa: A002 - TF's names
    x = np.asarray(input)
    if x.ndim == 0:
        raise ValueError("TopKV2 needs an input of at least one dim")
    if np.ndim(k) != 0:
        raise ValueError(f"k must be a scalar, got shape {show(np.shape(k))}")
    k, n = int(k), x.shape[-1]
    if not 0 <= k <= n:
        raise ValueError(f"k {k} must be in [0, {n}], the input's last dim (shape {show(x.shape)})")
    # a stable ascending sort of the reversed row, read backwards: largest first, ties by lower
    # index first (as TF), and no negation (which would overflow INT_MIN and wrap unsigned)
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    indices = (n - 1 - order).astype(index_type.np)
    return np.take_along_axis(x, indices.astype(np.int64), axis=-1), indices


def _top_k_grad(op, g_values, g_indices=None):
    """The values' gradient goes back to the positions they came from (OneHot, summed over k)."""
    x, indices = op.inputs[0], op.outputs[1]
    n = x.shape.dims[-1] if x.shape.ndims else None
    if n is None:
        raise NotImplementedError(f"the gradient of TopKV2 '{op.name}' needs the input's last dim known")
    hot = gather_scatter_ops.one_hot(indices, n, dtype=g_values.dtype)        # [..., k, n]
    return [math_ops.reduce_sum(hot * manip_ops.expand_dims(g_values, -1), axis=-2), None]


TOP_K_V2 = define(
    "TopKV2", "input: T, k: Tk -> values: T, indices: index_type",
    doc="The k largest entries of each last-axis row, largest first (ties: lower index first), and their "
        "indices; k past the last dim is an error.",
    attrs={"sorted": Attr("bool", True), "T": Attr("type", allowed=dtypes.NUMERIC),
           "Tk": Attr("type", dtypes.int32, SMALL_INDEX), "index_type": Attr("type", dtypes.int32, SMALL_INDEX)},
    infer=_infer_top_k, kernel=_top_k, grad=_top_k_grad, numerics=EXACT)


# -- builders ------------------------------------------------------------------------------------

def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    return build("Cumsum", [x, axis], name=name, default_name="Cumsum",
                 attrs={"exclusive": bool(exclusive), "reverse": bool(reverse)}).outputs[0]


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    return build("Cumprod", [x, axis], name=name, default_name="Cumprod",
                 attrs={"exclusive": bool(exclusive), "reverse": bool(reverse)}).outputs[0]


def top_k(input, k=1, sorted=True, name=None, index_type=dtypes.int32):  # noqa: A002 - TF's names
    """tf.math.top_k: (values, indices) of the k largest entries along the last axis."""
    input = convert_to_tensor(input)  # noqa: A001
    values, indices = build("TopKV2", [input, k], name=name, default_name="TopKV2",
                            attrs={"sorted": bool(sorted), "index_type": dtypes.as_dtype(index_type)}).outputs
    return values, indices
