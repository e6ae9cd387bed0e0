"""Ops that index into or out of a dense tensor: OneHot, GatherNd, ScatterNd and Where.

Indices out of range are errors naming the node, as in TF; every output size that an index
value or a shape input decides is checked against the size limit before anything is allocated.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.framework.graph import name_scope
from graphdef.ops.registry import (NOT_DIFFERENTIABLE, Attr, build, check_dims_value, check_dims_vector,
                                   constant_value, convert_to_tensor, define)
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops


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


# -- GatherNd and ScatterNd ----------------------------------------------------------------------

INDICES = frozenset((dtypes.int16, dtypes.int32, dtypes.int64))


def _nd_split(indices_shape, target_shape, what):
    """(rows of coordinates, coordinate length q) for indices [..., q] into target_shape."""
    if len(indices_shape) == 0:
        raise ValueError(f"{what}: indices must have at least one dim, got a scalar")
    q = indices_shape[-1]
    if q > len(target_shape):
        raise ValueError(f"{what}: index depth {q} (indices' last dim) is past the rank {len(target_shape)} of "
                         f"{show(target_shape)}")
    return int(np.prod(indices_shape[:-1], dtype=np.int64)), q


def _flat_positions(indices, shape, what):
    """Row-major offsets of each coordinate row into shape[:q]; an out-of-range row is an error."""
    rows, q = _nd_split(indices.shape, shape, what)
    coords = indices.reshape(rows, q).astype(np.int64)
    bounds = np.asarray(shape[:q], dtype=np.int64)
    bad = np.flatnonzero(np.any((coords < 0) | (coords >= bounds), axis=1)) if rows and q else []
    if len(bad):
        at = np.unravel_index(int(bad[0]), indices.shape[:-1]) if indices.ndim > 1 else ()
        raise ValueError(f"{what}: indices{list(int(a) for a in at)} = {coords[bad[0]].tolist()} does not index "
                         f"into shape {show(shape)}")
    strides = np.cumprod([1] + [int(d) for d in shape[:q]][::-1], dtype=np.int64)[:q][::-1]
    return coords @ strides if q else np.zeros(rows, np.int64), q


def _infer_gather_nd(ctx):
    p, i = ctx.shape(0), ctx.shape(1)
    if i.ndims == 0:
        raise ctx.error("indices must have at least one dim, got a scalar")
    if p.ndims is None or i.ndims is None or i.dims[-1] is None:
        return [TensorShape(None)]
    q = i.dims[-1]
    if q > p.ndims:
        raise ctx.error(f"index depth {q} (indices' last dim) is past the rank of params {show(p)}")
    return [TensorShape(i.dims[:-1] + p.dims[q:])]


def _gather_nd(params, indices, *, bad_indices_policy):
    p, i = np.asarray(params), np.asarray(indices)
    _check_policy(bad_indices_policy)
    rows, q = _nd_split(i.shape, p.shape, "GatherNd")
    check_size(i.shape[:-1] + p.shape[q:], p.dtype)  # many rows of a large slice may ask for anything
    flat, q = _flat_positions(i, p.shape, "GatherNd")
    slices = p.reshape((int(np.prod(p.shape[:q], dtype=np.int64)),) + p.shape[q:])
    return slices[flat].reshape(i.shape[:-1] + p.shape[q:])


def _check_policy(policy):
    if policy not in ("", "DEFAULT", "ERROR"):  # IGNORE is GPU-only in TF
        raise ValueError(f"bad_indices_policy {policy!r} is not supported; use '' (an error, as on TF's CPU)")


def _gather_nd_grad(op, g):
    params, indices = op.inputs
    shape = array_ops.shape_of(params, out_type=indices.dtype)
    return [scatter_nd(indices, g, shape), None]


GATHER_ND = define(
    "GatherNd", "params: Tparams, indices: Tindices -> output: Tparams",
    doc="The slices of params at the coordinates in indices' last dim: shape indices[:-1] + params[q:]; "
        "a coordinate out of range is an error.",
    attrs={"Tparams": Attr("type"), "Tindices": Attr("type", allowed=INDICES),
           "bad_indices_policy": Attr("string", "")},
    infer=_infer_gather_nd, kernel=_gather_nd, grad=_gather_nd_grad, numerics=EXACT)


def _infer_scatter_nd(ctx):
    check_dims_vector(ctx, 2, "shape")
    i, u = ctx.shape(0), ctx.shape(1)
    if i.ndims == 0:
        raise ctx.error("indices must have at least one dim, got a scalar")
    shape = constant_value(ctx.inputs[2])
    if shape is None:
        n = ctx.shape(2).dims[0] if ctx.shape(2).ndims == 1 else None
        return [TensorShape(None if n is None else [None] * n)]
    out = [int(d) for d in np.ravel(shape)]
    if any(d < 0 for d in out):
        raise ctx.error(f"shape {out} must not be negative")
    if i.ndims is not None and i.dims[-1] is not None and u.ndims is not None:
        q = i.dims[-1]
        want = TensorShape(i.dims[:-1] + tuple(out[q:])) if q <= len(out) else None
        if want is None or not want.is_compatible_with(u):
            raise ctx.error(f"updates {show(u)} must have shape indices[:-1] + shape[{q}:] for indices {show(i)} "
                            f"and shape {out}")
    return [TensorShape(out)]


def _scatter_nd(indices, updates, shape, *, bad_indices_policy):
    i, u = np.asarray(indices), np.asarray(updates)
    _check_policy(bad_indices_policy)
    check_dims_value(shape)
    out_shape = tuple(int(d) for d in np.ravel(shape))
    if np.ndim(shape) != 1 or any(d < 0 for d in out_shape):
        raise ValueError(f"shape must be a vector of non-negative sizes, got {np.asarray(shape).tolist()}")
    rows, q = _nd_split(i.shape, out_shape, "ScatterNd")
    if u.shape != i.shape[:-1] + out_shape[q:]:
        raise ValueError(f"updates {show(u.shape)} must have shape indices[:-1] + shape[{q}:] = "
                         f"{show(i.shape[:-1] + out_shape[q:])}")
    check_size(out_shape, u.dtype)  # shape is a value: it may ask for anything
    flat, q = _flat_positions(i, out_shape, "ScatterNd")
    out = np.zeros(out_shape, u.dtype)
    view = out.reshape((int(np.prod(out_shape[:q], dtype=np.int64)), int(np.prod(out_shape[q:], dtype=np.int64))))
    np.add.at(view, flat, u.reshape(rows, view.shape[1]))  # duplicates add up, in index order
    return out


SCATTER_ND = define(
    "ScatterNd", "indices: Tindices, updates: T, shape: Tindices -> output: T",
    doc="Zeros of `shape` with each update added at its coordinates (duplicates add up); a coordinate out "
        "of range is an error.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "Tindices": Attr("type", allowed=INDICES),
           "bad_indices_policy": Attr("string", "")},
    infer=_infer_scatter_nd, kernel=_scatter_nd,
    grad=lambda op, g: [None, gather_nd(g, op.inputs[0]), None], numerics=tensor_ulps(8))


# -- Where (one argument) ------------------------------------------------------------------------

def _where(input):  # noqa: A002 - TF's name
    x = np.asarray(input)
    if x.ndim == 0:  # as TF, which has no [n, 0] answer for a scalar
        raise ValueError("Where needs an input of at least one dim, got a scalar")
    return np.argwhere(x).astype(np.int64).reshape(np.count_nonzero(x), x.ndim)


def _infer_where(ctx):
    if ctx.shape(0).ndims == 0:
        raise ctx.error("input must have at least one dim, got a scalar")
    return TensorShape([None, ctx.shape(0).ndims])


WHERE = define(
    "Where", "input: T -> index: int64",
    doc="The coordinates of input's true (non-zero) elements, one row each in row-major order: [n, rank].",
    attrs={"T": Attr("type", dtypes.bool_, dtypes.NUMERIC | {dtypes.bool_})},
    infer=lambda ctx: [_infer_where(ctx)], kernel=_where, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)


# -- builders -------------------------------------------------------------------------

def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """tf.one_hot: float32 1/0 unless told otherwise."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
    on = array_ops.constant(1 if on_value is None else on_value, dtype=dtype, name="on_value")
    off = array_ops.constant(0 if off_value is None else off_value, dtype=dtype, name="off_value")
    return build("OneHot", [indices, depth, on, off], name=name, default_name="one_hot",
                 attrs={"axis": -1 if axis is None else int(axis)}).outputs[0]


def gather_nd(params, indices, name=None, batch_dims=0):
    """tf.gather_nd. With batch_dims, as TF builds it (GatherNd has no such attr): the leading batch dims
    of params and indices flattened into one, each index row prefixed with its batch number."""
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, (int, np.integer)):
        raise TypeError(f"gather_nd: batch_dims must be a Python int, got {batch_dims!r}")
    if batch_dims == 0:
        return build("GatherNd", [params, indices], name=name, default_name="GatherNd").outputs[0]
    with name_scope(name, "BatchGatherND"):
        return _batch_gather_nd(convert_to_tensor(params, name="params"), convert_to_tensor(indices, name="indices"),
                                int(batch_dims))


def _part(shape, begin, size):
    return build("Slice", [shape, np.array([begin], np.int32), np.array([size], np.int32)],
                 default_name="Slice").outputs[0]


def _concat(values):
    return build("ConcatV2", [values, np.int32(0)], default_name="concat").outputs[0]


def _batch_gather_nd(params, indices, batch_dims):
    rank_p, rank_i = params.shape.ndims, indices.shape.ndims
    if rank_p is None or rank_i is None:
        raise ValueError(f"gather_nd: batch_dims={batch_dims} needs params' and indices' ranks known when the graph "
                         f"is built, got {show(params.shape)} and {show(indices.shape)}")
    if batch_dims < 0 or batch_dims >= rank_i or batch_dims >= rank_p:
        raise ValueError(f"gather_nd: batch_dims={batch_dims} must be at least 0 and less than the ranks of params "
                         f"({rank_p}) and indices ({rank_i})")
    inner = rank_i - batch_dims - 1  # index dims between the batch dims and the index rows
    params_shape = array_ops.shape_of(params)
    indices_shape = array_ops.shape_of(indices)
    batch_shape = _part(params_shape, 0, batch_dims)
    batch = build("Prod", [batch_shape, np.int32(0)], default_name="Prod", attrs={"keep_dims": True}).outputs[0]
    flat_params = array_ops.reshape(params, _concat([batch, _part(params_shape, batch_dims, -1)]))
    flat_indices = array_ops.reshape(indices, _concat([batch, _part(indices_shape, batch_dims, -1)]))
    numbers = array_ops.range_(0, array_ops.reshape(batch, []), 1)
    numbers = build("Cast", [numbers], default_name="Cast", attrs={"DstT": indices.dtype.base_dtype}).outputs[0]
    numbers = array_ops.reshape(numbers, _concat([batch, np.ones(inner + 1, np.int32)]))
    numbers = build("Tile", [numbers, _concat([np.array([1], np.int32), _part(indices_shape, batch_dims, inner),
                                               np.array([1], np.int32)])], default_name="Tile").outputs[0]
    rows = build("ConcatV2", [[numbers, flat_indices], np.int32(-1)], default_name="concat").outputs[0]
    out = build("GatherNd", [flat_params, rows], default_name="GatherNd").outputs[0]
    result = array_ops.reshape(out, _concat([batch_shape, _part(array_ops.shape_of(out), 1, -1)]))
    depth = indices.shape.dims[-1]
    if depth is not None:  # what TF's GatherNd would infer for the batched gather
        result.set_shape(TensorShape(list(params.shape.dims[:batch_dims]) + list(indices.shape.dims[batch_dims:-1])
                                     + list(params.shape.dims[batch_dims + depth:])))
    return result


def scatter_nd(indices, updates, shape, name=None):
    return build("ScatterNd", [indices, updates, shape], name=name, default_name="ScatterNd").outputs[0]


def where(condition, x=None, y=None, name=None):
    """tf.where: the coordinates of true elements (Where), or with x and y an elementwise choice (SelectV2)."""
    if x is None and y is None:
        return build("Where", [condition], name=name, default_name="Where").outputs[0]
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    return compare_ops.select_v2(condition, x, y, name=name)
