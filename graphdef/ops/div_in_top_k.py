"""DivNoNan (x / y, and 0 where y is 0) and InTopKV2 (is each target among its row's k largest)."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, infer_broadcast
from graphdef.ops import math as math_ops


# -- DivNoNan --------------------------------------------------------------------------------------

def _div_no_nan(x, y):
    x, y = np.asarray(x), np.asarray(y)
    zero = y == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(x, np.where(zero, np.ones_like(y), y))
    return np.where(zero, np.zeros_like(q), q).astype(np.result_type(x, y))


def _div_no_nan_grad(op, g, x, y):
    """TF's: d/dx = g / y and d/dy = g * (-x / y) / y, each 0 where y is 0."""
    return div_no_nan(g, y), g * div_no_nan(div_no_nan(math_ops.negative(x), y), y)


DIV_NO_NAN = define(
    "DivNoNan", "x: T, y: T -> z: T",
    doc="x / y, broadcasting, and 0 wherever y is 0 (even for x 0, inf or NaN).",
    attrs={"T": Attr("type", allowed=dtypes.FLOATS)}, infer=infer_broadcast, kernel=_div_no_nan,
    grad=math_ops._broadcasting(_div_no_nan_grad), numerics=EXACT)


# -- InTopKV2 --------------------------------------------------------------------------------------

def _in_top_k(predictions, targets, k):
    p, t = np.asarray(predictions), np.asarray(targets)
    if p.ndim != 2:
        raise ValueError(f"predictions must be 2-dimensional, got shape {show(p.shape)}")
    if t.ndim != 1:
        raise ValueError(f"targets must be 1-dimensional, got shape {show(t.shape)}")
    if p.shape[0] != t.shape[0]:
        raise ValueError(f"First dimension of predictions {p.shape[0]} must match length of targets {t.shape[0]}")
    if np.ndim(k) != 0:
        raise ValueError(f"k must be a scalar, got shape {show(np.shape(k))}")
    k = int(k)
    batch, classes = p.shape
    valid = (t >= 0) & (t < classes)
    target = p[np.arange(batch), np.where(valid, t, 0)] if classes else np.zeros(batch, p.dtype)
    # TF cannot say (false) for a target out of range or any non-finite score in the row
    valid &= np.isfinite(target) & np.all(np.isfinite(p), axis=1)
    above = np.sum(p > target[:, None], axis=1)
    return valid & (above < k)


def _infer_in_top_k(ctx):
    p, t = ctx.shape(0), ctx.shape(1)
    if p.ndims not in (None, 2):
        raise ctx.error(f"predictions must be 2-dimensional, got shape {show(p)}")
    if t.ndims not in (None, 1):
        raise ctx.error(f"targets must be 1-dimensional, got shape {show(t)}")
    if ctx.shape(2).ndims not in (None, 0):
        raise ctx.error(f"k must be a scalar, got shape {show(ctx.shape(2))}")
    rows = p.dims[0] if p.ndims else None
    if t.ndims and t.dims[0] is not None and rows is not None and t.dims[0] != rows:
        raise ctx.error(f"First dimension of predictions {rows} must match length of targets {t.dims[0]}")
    return [TensorShape([rows if rows is not None else (t.dims[0] if t.ndims else None)])]


IN_TOP_K_V2 = define(
    "InTopKV2", "predictions: float32, targets: T, k: T -> precision: bool",
    doc="Whether each row's target class scores among its k highest (ties count for it); false for a target "
        "out of range or a row with a non-finite score.",
    attrs={"T": Attr("type", dtypes.int32, frozenset((dtypes.int32, dtypes.int64)))},
    infer=_infer_in_top_k, kernel=_in_top_k, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders ------------------------------------------------------------------------------------

def div_no_nan(x, y, name=None):
    """tf.math.div_no_nan."""
    x, y = math_ops._pair(x, y)
    return build("DivNoNan", [x, y], name=name, default_name="div_no_nan").outputs[0]


def in_top_k(predictions, targets, k, name=None):
    """tf.math.in_top_k (TF1 order: predictions, targets, k)."""
    targets = math_ops.convert_to_tensor(targets)
    return build("InTopKV2", [predictions, targets, np.asarray(k, targets.dtype.np)], name=name,
                 default_name="in_top_k").outputs[0]
