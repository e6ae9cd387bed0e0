"""Ops that index into or out of a dense tensor: OneHot, GatherNd, ScatterNd and Where.

Indices out of range are errors naming the node, as in TF; every output size that an index
value or a shape input decides is checked against the size limit before anything is allocated.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, define
from graphdef.ops import array as array_ops


def _infer_one_hot(ctx):
    indices = ctx.shape(0)
    depth = constant_value(ctx.inputs[1])
    axis = ctx.attrs["axis"]
    if axis < -1:  # wrong whatever the rank; the kernel checks the upper end when the rank is unknown
        raise ctx.error(f"axis {axis} must be -1 or a position in the output's dims")
    if indices.ndims is None:
        return [TensorShape(None)]
    if not -1 <= axis <= indices.ndims:
        raise ctx.error(f"axis {axis} is out of range for indices of rank {indices.ndims}")
    dims = list(indices.dims)
    dims.insert(indices.ndims if axis == -1 else axis, None if depth is None else int(depth))
    return [TensorShape(dims)]


def _one_hot(indices, depth, on_value, off_value, *, axis):
    indices = np.asarray(indices)
    depth = int(depth)
    if depth < 0:
        raise ValueError(f"depth must not be negative, got {depth}")
    if np.ndim(on_value) or np.ndim(off_value):
        raise ValueError(f"on_value and off_value must be scalars, got shapes {show(np.shape(on_value))} "
                         f"and {show(np.shape(off_value))}")
    if not -1 <= axis <= indices.ndim:
        raise ValueError(f"axis {axis} is out of range for indices of rank {indices.ndim}")
    dtype = np.asarray(on_value).dtype
    check_size(indices.shape + (depth,), dtype)
    # written into the output, not compared with an arange(depth): an empty indices with a
    # huge depth gives an empty output, and the arange would have been allocated in full
    out = np.full(indices.shape + (depth,), off_value, dtype=dtype)
    flat, where = out.reshape(-1, depth), indices.reshape(-1)
    rows = np.flatnonzero((where >= 0) & (where < depth))  # out-of-range indices (e.g. -1) stay all off
    flat[rows, where[rows]] = on_value
    return out if axis == -1 else np.moveaxis(out, -1, axis)


ONE_HOT = define(
    "OneHot", "indices: TI, depth: int32, on_value: T, off_value: T -> output: T",
    doc="on_value where the new axis equals the index, off_value elsewhere; an index out of range is all off.",
    attrs={"axis": Attr("int", -1), "T": Attr("type"),
           "TI": Attr("type", dtypes.int64, frozenset((dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64)))},
    infer=_infer_one_hot, kernel=_one_hot, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders -------------------------------------------------------------------------

def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """tf.one_hot: float32 1/0 unless told otherwise."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    on = array_ops.constant(1 if on_value is None else on_value, dtype=dtype, name="on_value")
    off = array_ops.constant(0 if off_value is None else off_value, dtype=dtype, name="off_value")
    return build("OneHot", [indices, depth, on, off], name=name, default_name="one_hot",
                 attrs={"axis": -1 if axis is None else int(axis)}).outputs[0]
