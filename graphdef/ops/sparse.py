"""Ops on sparse tensors held as (indices [n, rank], values [n], dense_shape [rank]): SparseToDense,
SparseTensorDenseMatMul, SparseReorder and SparseReduceSum.

SparseTensor (tf.SparseTensor) holds the three parts; the builders take one, or any object with
.indices, .values and .dense_shape. Indices out of bounds, out of order or repeated are errors in
TF's words; every dense size a shape value decides passes the size limit.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import (NOT_DIFFERENTIABLE, Attr, build, check_dims_value, check_dims_vector, constant_value,
                                   convert_to_tensor, define)
from graphdef.ops import array as array_ops
from graphdef.ops import gather_scatter
from graphdef.ops import math as math_ops
from graphdef.ops import slicing

IDX = frozenset((dtypes.int32, dtypes.int64))


def _dense_shape(shape, what="output_shape"):
    check_dims_value(shape, what)
    if np.ndim(shape) > 1:
        raise ValueError(f"{what} must be a vector, got shape {show(np.shape(shape))}")
    dims = [int(d) for d in np.ravel(shape)]
    for d in dims:
        if d < 0:
            raise ValueError(f"Dimension {d} must be >= 0")
    return tuple(dims)


def _show_index(row):
    return "[" + ",".join(str(int(v)) for v in row) + "]"


def _check_in_bounds(indices, shape, what="indices"):
    bad = np.flatnonzero(np.any((indices < 0) | (indices >= np.asarray(shape, np.int64)), axis=1)) \
        if indices.size else []
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"{what}[{i}] = {_show_index(indices[i])} is out of bounds: need 0 <= index < "
                         f"{_show_index(shape)}")


def _flat_positions(indices, shape):
    strides = np.cumprod((1,) + tuple(shape[::-1])[:-1], dtype=np.int64)[::-1] if shape else np.zeros(0, np.int64)
    return indices.astype(np.int64) @ strides if indices.shape[1] else np.zeros(len(indices), np.int64)


# -- SparseToDense -------------------------------------------------------------------------------

def _sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value, *, validate_indices):
    indices, values = np.asarray(sparse_indices), np.asarray(sparse_values)
    shape = _dense_shape(output_shape)
    if indices.ndim > 2:
        raise ValueError(f"sparse_indices should be a scalar, vector, or matrix, got shape {show(indices.shape)}")
    n = indices.shape[0] if indices.ndim else 1
    rank = indices.shape[1] if indices.ndim == 2 else 1
    if rank != len(shape):
        raise ValueError(f"output_shape has incorrect number of elements: {len(shape)} should be: {rank}")
    if values.ndim > 1 or (values.ndim == 1 and values.shape[0] != n):
        raise ValueError(f"sparse_values has incorrect shape {show(values.shape)}, should be [] or [{n}]")
    if np.ndim(default_value) != 0:
        raise ValueError(f"default_value should be a scalar, got shape {show(np.shape(default_value))}")
    indices = indices.reshape(n, rank).astype(np.int64)
    check_size(shape, values.dtype)
    if validate_indices:
        _check_in_bounds(indices, shape)
        flat = _flat_positions(indices, shape)
        if n > 1:
            step = np.diff(flat)
            bad = np.flatnonzero(step <= 0)
            if bad.size:
                i = int(bad[0]) + 1
                if step[bad[0]] == 0:
                    raise ValueError(f"indices[{i}] = {_show_index(indices[i])} is repeated")
                raise ValueError(f"indices[{i}] = {_show_index(indices[i])} is out of order. Many sparse ops require "
                                 "sorted indices; use tf.sparse.reorder to create a correctly ordered copy.")
    elif n and np.any((indices < 0) | (indices >= np.asarray(shape, np.int64))):
        raise ValueError(f"Indices are not valid (out of bounds). Shape: {_show_index(shape)}")
    out = np.full(shape, default_value, values.dtype)
    if n:
        out.reshape(-1)[_flat_positions(indices, shape)] = np.broadcast_to(values, (n,))  # later ones win
    return out


def _infer_sparse_to_dense(ctx):
    check_dims_vector(ctx, 1, "output_shape")
    shape = constant_value(ctx.inputs[1])
    if shape is not None:
        try:
            return [TensorShape(_dense_shape(shape))]
        except ValueError as e:
            raise ctx.error(str(e)) from None
    s = ctx.shape(1)
    return [TensorShape(None if s.ndims != 1 or s.dims[0] is None else [None] * s.dims[0])]


def _sparse_to_dense_grad(op, g):
    """TF's: the values' gradient is the dense gradient at their positions; default_value gets the rest."""
    picked = gather_scatter.gather_nd(g, _as_matrix(op.inputs[0]))
    rest = math_ops.reduce_sum(g) - math_ops.reduce_sum(picked)
    values_grad = math_ops.reduce_sum(picked) if op.inputs[2].shape.ndims == 0 else picked
    return [None, None, values_grad, rest]


def _as_matrix(indices):
    rank = indices.shape.ndims
    if rank == 2:
        return indices
    return array_ops.reshape(indices, [-1, 1])


SPARSE_TO_DENSE = define(
    "SparseToDense", "sparse_indices: Tindices, output_shape: Tindices, sparse_values: T, default_value: T -> "
    "dense: T",
    doc="A dense tensor of output_shape holding default_value, with sparse_values at sparse_indices; "
        "validate_indices refuses indices out of bounds, out of order or repeated.",
    attrs={"validate_indices": Attr("bool", True), "T": Attr("type"), "Tindices": Attr("type", allowed=IDX)},
    infer=_infer_sparse_to_dense, kernel=_sparse_to_dense, grad=_sparse_to_dense_grad, numerics=EXACT)


# -- SparseTensorDenseMatMul -----------------------------------------------------------------------

def _sparse_matmul(a_indices, a_values, a_shape, b, *, adjoint_a, adjoint_b):
    indices, values, b = np.asarray(a_indices), np.asarray(a_values), np.asarray(b)
    shape = _dense_shape(a_shape, "a_shape")
    if len(shape) != 2 or b.ndim != 2:
        raise ValueError(f"a_shape and b must be matrices, got {list(shape)} and {show(b.shape)}")
    if indices.ndim != 2 or indices.shape[1] != 2 or values.shape != indices.shape[:1]:
        raise ValueError(f"a_indices must be [n, 2] and a_values [n], got {show(indices.shape)} and "
                         f"{show(values.shape)}")
    rows, cols = (shape[1], shape[0]) if adjoint_a else shape
    inner = b.shape[1] if adjoint_b else b.shape[0]
    if cols != inner:
        raise ValueError(f"Cannot multiply A and B because inner dimension does not match: {cols} vs. {inner}. "
                         f"Did you forget a transpose? Dimensions of A: [{rows}, {cols}]. Dimensions of B: "
                         f"{show(b.shape)}")
    i, k = indices[:, 1 if adjoint_a else 0].astype(np.int64), indices[:, 0 if adjoint_a else 1].astype(np.int64)
    for name, where, bound, column in (("m", i, rows, 1 if adjoint_a else 0), ("k", k, cols, 0 if adjoint_a else 1)):
        bad = np.flatnonzero((where < 0) | (where >= bound))
        if bad.size:
            raise ValueError(f"{name} ({int(where[bad[0]])}) from index[{int(bad[0])},{column}] out of bounds "
                             f"(>={bound})")
    right = b.T if adjoint_b else b
    check_size((rows, right.shape[1]), b.dtype)
    out = np.zeros((rows, right.shape[1]), b.dtype)
    np.add.at(out, i, values[:, None] * right[k])
    return out


def _infer_sparse_matmul(ctx):
    b = ctx.shape(3)
    if b.ndims not in (None, 2):
        raise ctx.error(f"b must be a matrix, got shape {show(b)}")
    shape = constant_value(ctx.inputs[2])
    rows = None
    if shape is not None and np.size(shape) == 2:
        rows = int(np.ravel(shape)[1 if ctx.attrs["adjoint_a"] else 0])
    cols = None if b.ndims is None else b.dims[0 if ctx.attrs["adjoint_b"] else 1]
    return [TensorShape([rows, cols])]


def _sparse_matmul_grad(op, g):
    """TF's: b's gradient is A^T g (A g for adjoint_a); each value's is g's row . b's row it met."""
    indices, values, shape, b = op.inputs
    adj_a, adj_b = op.attrs["adjoint_a"], op.attrs["adjoint_b"]
    b_grad = sparse_tensor_dense_matmul_parts(indices, values, shape, g, adjoint_a=not adj_a)
    if adj_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = slicing.gather(g, cols if adj_a else rows)
    parts_b = slicing.gather(array_ops.transpose(b) if adj_b else b, rows if adj_a else cols)
    return [None, math_ops.reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


SPARSE_TENSOR_DENSE_MAT_MUL = define(
    "SparseTensorDenseMatMul", "a_indices: Tindices, a_values: T, a_shape: int64, b: T -> product: T",
    doc="A (sparse, [m, k] from its parts) times dense b, either side adjointed; repeated indices add up.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "Tindices": Attr("type", dtypes.int64, IDX),
           "adjoint_a": Attr("bool", False), "adjoint_b": Attr("bool", False)},
    infer=_infer_sparse_matmul, kernel=_sparse_matmul, grad=_sparse_matmul_grad, numerics=tensor_ulps(8))


# -- SparseReorder ---------------------------------------------------------------------------------

def _check_parts(indices, values, shape):
    if indices.ndim != 2 or values.ndim != 1 or values.shape[0] != indices.shape[0]:
        raise ValueError(f"input_indices must be [n, rank] and input_values [n], got {show(indices.shape)} and "
                         f"{show(values.shape)}")
    if indices.shape[1] != len(shape):
        raise ValueError(f"input_indices has {indices.shape[1]} columns for input_shape {_show_index(shape)}")


def _sparse_reorder(input_indices, input_values, input_shape):
    indices, values = np.asarray(input_indices), np.asarray(input_values)
    shape = _dense_shape(input_shape, "input_shape")
    _check_parts(indices, values, shape)
    order = np.lexsort(indices.T[::-1]) if indices.size else np.arange(len(values))  # stable, row-major
    return indices[order], values[order]


def _sparse_reorder_grad(op, g_indices, g_values):
    """The values' gradient goes back to where each value came from (TF inverts the permutation)."""
    indices, shape = op.inputs[0], op.inputs[2]
    n = slicing.gather(array_ops.shape_of(indices), 0)
    positions = array_ops.range_(0, n, 1)
    _, moved = build("SparseReorder", [indices, positions, shape], default_name="SparseReorder").outputs
    return [None, slicing.unsorted_segment_sum(g_values, moved, n), None]


SPARSE_REORDER = define(
    "SparseReorder", "input_indices: int64, input_values: T, input_shape: int64 -> output_indices: int64, "
    "output_values: T",
    doc="The entries of a sparse tensor sorted into row-major order of their indices (ties keep their order).",
    attrs={"T": Attr("type")},
    infer=lambda ctx: [ctx.shape(0), ctx.shape(1)], kernel=_sparse_reorder, grad=_sparse_reorder_grad,
    numerics=EXACT)


# -- SparseReduceSum -------------------------------------------------------------------------------

def _reduction_axes(axes, rank):
    axes = np.asarray(axes).reshape(-1).astype(np.int64)  # vectorized: a fed list may be long
    bad = np.flatnonzero((axes < -rank) | (axes >= rank))
    if bad.size:
        raise ValueError(f"Invalid reduction dimension {int(axes[bad[0]])}, for input with {rank} dimensions.")
    return sorted(set(np.unique(axes % rank).tolist())) if rank else []


def _sparse_reduce_sum(input_indices, input_values, input_shape, reduction_axes, *, keep_dims):
    indices, values = np.asarray(input_indices), np.asarray(input_values)
    shape = _dense_shape(input_shape, "input_shape")
    _check_parts(indices, values, shape)
    axes = _reduction_axes(reduction_axes, len(shape))
    _check_in_bounds(indices.astype(np.int64), shape)
    kept = tuple(1 if d in axes else s for d, s in enumerate(shape))
    check_size(kept, values.dtype)
    out = np.zeros(kept, values.dtype)
    if len(values):
        spots = np.where(np.isin(np.arange(len(shape)), axes), 0, indices.astype(np.int64))
        np.add.at(out.reshape(-1), _flat_positions(spots, kept), values)
    return out if keep_dims else out.reshape(tuple(s for d, s in enumerate(shape) if d not in axes))


def _infer_sparse_reduce_sum(ctx):
    shape, axes = constant_value(ctx.inputs[2]), constant_value(ctx.inputs[3])
    if shape is None or axes is None:
        return [TensorShape(None)]
    try:
        dims = _dense_shape(shape, "input_shape")
        axes = _reduction_axes(axes, len(dims))
    except ValueError as e:
        raise ctx.error(str(e)) from None
    if ctx.attrs["keep_dims"]:
        return [TensorShape([1 if d in axes else s for d, s in enumerate(dims)])]
    return [TensorShape([s for d, s in enumerate(dims) if d not in axes])]


def _sparse_reduce_sum_grad(op, g):
    """TF's: each value gets the gradient of the output cell it was summed into."""
    indices, _, shape, axes = op.inputs
    axes_value, dims = constant_value(axes), constant_value(shape)
    if axes_value is None or dims is None:
        raise NotImplementedError(f"the gradient of SparseReduceSum '{op.name}' needs constant input_shape and "
                                  "reduction_axes")
    reduced = _reduction_axes(axes_value, np.size(dims))
    mask = np.array([d in reduced for d in range(np.size(dims))])
    kept = np.where(mask, 1, np.ravel(dims)).astype(np.int64)
    cells = array_ops.constant(np.where(mask, 0, 1).astype(np.int64)) * indices  # reduced dims collapse to 0
    return [None, gather_scatter.gather_nd(array_ops.reshape(g, kept), cells), None, None]


SPARSE_REDUCE_SUM = define(
    "SparseReduceSum", "input_indices: int64, input_values: T, input_shape: int64, reduction_axes: int32 -> "
    "output: T",
    doc="The dense sum of a sparse tensor over reduction_axes (none given: no reduction); keep_dims keeps them as 1.",
    attrs={"keep_dims": Attr("bool", False), "T": Attr("type", allowed=dtypes.NUMERIC)},
    infer=_infer_sparse_reduce_sum, kernel=_sparse_reduce_sum, grad=_sparse_reduce_sum_grad,
    numerics=tensor_ulps(8))


# -- SparseFillEmptyRows and SparseReshape (tf.nn.safe_embedding_lookup_sparse, feature columns) ------

def _fill_empty_rows(indices, values, dense_shape, default_value):
    indices, values = np.asarray(indices), np.asarray(values)
    shape = _dense_shape(dense_shape, "dense_shape")
    if indices.ndim != 2 or values.ndim != 1:
        raise ValueError(f"indices must be a matrix and values a vector, got {show(indices.shape)} and "
                         f"{show(values.shape)}")
    if values.shape[0] != indices.shape[0]:
        raise ValueError(f"The length of `values` ({values.shape[0]}) must match the first dimension of `indices` "
                         f"({indices.shape[0]}).")
    if np.ndim(default_value) != 0:
        raise ValueError(f"default_value must be a scalar, got shape {show(np.shape(default_value))}")
    if not shape or indices.shape[1] != len(shape):
        raise ValueError(f"indices has {indices.shape[1]} columns for dense_shape {_show_index(shape)}")
    rows, n = shape[0], indices.shape[0]
    if rows == 0 and n:
        raise ValueError(f"Received SparseTensor with dense_shape[0] = 0 but indices.shape[0] = {n}")
    row = indices[:, 0].astype(np.int64)
    bad = np.flatnonzero((row < 0) | (row >= rows))
    if bad.size:
        raise ValueError(f"indices({int(bad[0])}, 0) is invalid: {int(row[bad[0]])} >= {rows}")
    check_size((rows, len(shape)), np.int64)  # at most one added entry per row
    empty = np.bincount(row, minlength=rows)[:rows] == 0
    added = np.flatnonzero(empty)
    all_rows = np.concatenate([row, added])
    order = np.argsort(all_rows, kind="stable")  # by row; a row's entries keep their order
    filler = np.zeros((added.size, len(shape)), np.int64)
    filler[:, 0] = added
    out_indices = np.concatenate([indices.astype(np.int64), filler])[order]
    out_values = np.concatenate([values, np.full(added.size, default_value, values.dtype)])[order]
    reverse = np.empty(n + added.size, np.int64)
    reverse[order] = np.arange(order.size)
    return out_indices, out_values, empty, reverse[:n]


def _infer_fill_empty_rows(ctx):
    i = ctx.shape(0)
    rank = i.dims[1] if i.ndims == 2 else None
    shape = constant_value(ctx.inputs[2])
    rows = int(np.ravel(shape)[0]) if shape is not None and np.size(shape) else None
    n = i.dims[0] if i.ndims == 2 else None
    total = None
    value = constant_value(ctx.inputs[0])
    if value is not None and rows is not None and np.ndim(value) == 2 and rows <= 1 << 20:
        first = np.asarray(value)[:, 0] if np.size(value) else np.zeros(0, np.int64)
        if first.size == 0 or (first.min() >= 0 and first.max() < rows):  # constant rows: the count is known
            total = len(first) + int(np.count_nonzero(np.bincount(first, minlength=rows) == 0))
    return [TensorShape([total, rank]), TensorShape([total]), TensorShape([rows]), TensorShape([n])]


def _fill_empty_rows_grad(op, g_indices, g_values, g_empty=None, g_reverse=None):
    """TF's SparseFillEmptyRowsGrad: each value's gradient from where it went; the rest to the default."""
    picked = slicing.gather(g_values, op.outputs[3])
    return [None, picked, None, math_ops.reduce_sum(g_values) - math_ops.reduce_sum(picked)]


SPARSE_FILL_EMPTY_ROWS = define(
    "SparseFillEmptyRows", "indices: int64, values: T, dense_shape: int64, default_value: T -> output_indices: int64, "
    "output_values: T, empty_row_indicator: bool, reverse_index_map: int64",
    doc="A sparse tensor with default_value at [r, 0, ...] for each row r that had no entry, entries ordered by "
        "row; which rows were empty, and where each input entry went.",
    attrs={"T": Attr("type")}, infer=_infer_fill_empty_rows, kernel=_fill_empty_rows, grad=_fill_empty_rows_grad,
    numerics=EXACT)


def _fill_empty_rows_grad_kernel(reverse_index_map, grad_values):
    reverse, g = np.asarray(reverse_index_map), np.asarray(grad_values)
    if reverse.ndim != 1 or g.ndim != 1:
        raise ValueError(f"reverse_index_map and grad_values must be vectors, got {show(reverse.shape)} and "
                         f"{show(g.shape)}")
    bad = np.flatnonzero((reverse < 0) | (reverse >= g.shape[0]))
    if bad.size:
        raise ValueError(f"Elements in reverse index must be in [0, {g.shape[0]}) but got "
                         f"{int(reverse[bad[0]])}")
    visited = np.zeros(g.shape[0], bool)
    visited[reverse] = True
    return g[reverse.astype(np.int64)], g[~visited].sum(dtype=g.dtype)


SPARSE_FILL_EMPTY_ROWS_GRAD = define(
    "SparseFillEmptyRowsGrad", "reverse_index_map: int64, grad_values: T -> d_values: T, d_default_value: T",
    doc="SparseFillEmptyRows' gradient: each input value's from where it went, the rest summed for the default.",
    attrs={"T": Attr("type")},
    infer=lambda ctx: [ctx.shape(0), TensorShape([])], kernel=_fill_empty_rows_grad_kernel, grad=NOT_DIFFERENTIABLE,
    numerics=tensor_ulps(8))


def _sparse_reshape(input_indices, input_shape, new_shape):
    indices = np.asarray(input_indices)
    shape = _dense_shape(input_shape, "input_shape")
    check_dims_value(new_shape, "new_shape")
    wanted = [int(d) for d in np.ravel(new_shape)]
    if indices.ndim != 2 or indices.shape[1] != len(shape):
        raise ValueError("Input tensor rank must match input shape length.")
    unknown = [k for k, d in enumerate(wanted) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}")
    for k, d in enumerate(wanted):
        if d < -1:
            raise ValueError(f"size {k} must be non-negative, not {d}")
    total = int(np.prod(shape, dtype=object))
    known = int(np.prod([d for d in wanted if d != -1], dtype=object))
    if unknown:
        if known == 0 and total:
            raise ValueError(f"Input to reshape is a SparseTensor with {total} dense values, but the requested "
                             f"shape has 0. input_shape={_show_index(shape)}")
        if known and total % known:
            raise ValueError(f"Input to reshape is a SparseTensor with {total} dense values, but the requested "
                             f"shape requires a multiple of {known}. input_shape={_show_index(shape)} "
                             f"output_shape={_show_index([total // known if d == -1 else d for d in wanted])}")
        wanted[unknown[0]] = total // known if known else 0
    elif known != total:
        raise ValueError(f"Input to reshape is a tensor with {total} dense values, but the requested shape has "
                         f"{known}. input_shape={_show_index(shape)} output_shape={_show_index(wanted)}")
    if total >= 1 << 63:
        raise ValueError(f"input_shape {_show_index(shape)} has more than 2^63 elements")
    flat = _flat_positions(indices.astype(np.int64), shape) if indices.shape[0] else np.zeros(0, np.int64)
    out = np.zeros((indices.shape[0], len(wanted)), np.int64)
    for k in range(len(wanted) - 1, 0, -1):  # unravel from the last dim; the first takes what is left, as TF
        if wanted[k]:
            out[:, k], flat = flat % wanted[k], flat // wanted[k]
    if wanted:
        out[:, 0] = flat
    return out, np.asarray(wanted, np.int64)


def _infer_sparse_reshape(ctx):
    i, new = ctx.shape(0), ctx.shape(2)
    k = new.dims[0] if new.ndims == 1 else None
    return [TensorShape([i.dims[0] if i.ndims == 2 else None, k]), TensorShape([k])]


SPARSE_RESHAPE = define(
    "SparseReshape", "input_indices: int64, input_shape: int64, new_shape: int64 -> output_indices: int64, "
    "output_shape: int64",
    doc="The indices of a sparse tensor of input_shape as those of the same elements in new_shape (one -1 "
        "inferred), row-major.",
    attrs={}, infer=_infer_sparse_reshape, kernel=_sparse_reshape, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- InvertPermutation (TF's SparseReorder gradient holds it) ---------------------------------------

def _invert_permutation(x):
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError("invert_permutation expects a 1D vector.")
    n = x.size
    bad = np.flatnonzero((x < 0) | (x >= n))
    if bad.size:
        raise ValueError(f"{int(x[bad[0]])} is not between 0 and {n}")
    out = np.full(n, -1, x.dtype)
    out[x] = np.arange(n, dtype=x.dtype)
    if n and np.any(out < 0):  # some value repeats: name the first repeated one, as TF does
        order = np.argsort(x, kind="stable")
        repeats = order[1:][x[order[1:]] == x[order[:-1]]]  # positions of second and later occurrences
        raise ValueError(f"{int(x[repeats.min()])} is duplicated in the input.")
    return out


def _infer_invert_permutation(ctx):
    if ctx.shape(0).ndims not in (None, 1):
        raise ctx.error(f"invert_permutation expects a 1D vector, got shape {show(ctx.shape(0))}")
    return [ctx.shape(0)]


INVERT_PERMUTATION = define(
    "InvertPermutation", "x: T -> y: T",
    doc="y[x[i]] = i for a permutation x of 0..n-1; a value out of range or repeated is an error.",
    attrs={"T": Attr("type", dtypes.int32, IDX)}, infer=_infer_invert_permutation, kernel=_invert_permutation,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- SparseTensor and the builders ---------------------------------------------------------------

class SparseTensor:
    """tf.SparseTensor: indices [n, rank] (int64), values [n] and dense_shape [rank] (int64), as tensors."""

    def __init__(self, indices, values, dense_shape):
        self.indices = _int64_tensor(indices, "indices")
        self.values = convert_to_tensor(values)
        self.dense_shape = _int64_tensor(dense_shape, "dense_shape")

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self):
        """The dense shape as far as it is known when the graph is built."""
        value = constant_value(self.dense_shape)
        if value is not None:
            return TensorShape([int(d) for d in np.ravel(value)])
        n = self.dense_shape.shape.dims[0] if self.dense_shape.shape.ndims == 1 else None
        return TensorShape(None if n is None else [None] * n)

    def __repr__(self):
        return f"SparseTensor(indices={self.indices!r}, values={self.values!r}, dense_shape={self.dense_shape!r})"


def _int64_tensor(value, what):
    if hasattr(value, "dtype") and not isinstance(value, np.ndarray):
        t = convert_to_tensor(value)
        if t.dtype is not dtypes.int64:
            raise TypeError(f"SparseTensor: {what} must be int64, got {t.dtype.name} from '{t.name}'")
        return t
    return convert_to_tensor(np.asarray(value, np.int64), name=what)


def _parts(sp):
    return sp.indices, sp.values, sp.dense_shape


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """tf.sparse.to_dense (TF1: tf.sparse_tensor_to_dense): SparseToDense of the SparseTensor's parts."""
    indices, values, shape = _parts(sp_input)
    values = convert_to_tensor(values)
    default = array_ops.constant(0 if default_value is None else default_value, dtype=values.dtype)
    return build("SparseToDense", [indices, shape, values, default], name=name, default_name="SparseToDense",
                 attrs={"validate_indices": bool(validate_indices)}).outputs[0]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0, validate_indices=True, name=None):
    """tf.sparse_to_dense (TF1)."""
    values = math_ops.convert_to_tensor(sparse_values)
    default = array_ops.constant(default_value, dtype=values.dtype)
    return build("SparseToDense", [sparse_indices, output_shape, values, default], name=name,
                 default_name="SparseToDense", attrs={"validate_indices": bool(validate_indices)}).outputs[0]


def sparse_tensor_dense_matmul_parts(indices, values, dense_shape, b, adjoint_a=False, adjoint_b=False, name=None):
    return build("SparseTensorDenseMatMul", [indices, values, dense_shape, b], name=name,
                 default_name="SparseTensorDenseMatMul",
                 attrs={"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)}).outputs[0]


def sparse_tensor_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """tf.sparse.sparse_dense_matmul: sp_a a SparseTensor-like (indices, values, dense_shape)."""
    return sparse_tensor_dense_matmul_parts(*_parts(sp_a), b, adjoint_a, adjoint_b, name)


def sparse_reorder(sp_input, name=None):
    """tf.sparse.reorder: the SparseTensor with its entries in row-major order."""
    indices, values, shape = _parts(sp_input)
    out = build("SparseReorder", [indices, values, shape], name=name, default_name="SparseReorder").outputs
    return SparseTensor(out[0], out[1], shape)


def sparse_reduce_sum(sp_input, axis=None, keepdims=False, name=None):
    """tf.sparse.reduce_sum on a SparseTensor-like: a dense result; axis None sums everything."""
    indices, values, shape = _parts(sp_input)
    if axis is None:
        rank = shape.shape.dims[0] if hasattr(shape, "shape") else np.size(shape)
        if rank is None:
            raise ValueError("sparse_reduce_sum: axis=None needs the rank (dense_shape's length) known")
        axis = list(range(rank))
    axes = np.asarray(axis, np.int32).reshape(-1)
    return build("SparseReduceSum", [indices, values, shape, axes], name=name, default_name="SparseReduceSum",
                 attrs={"keep_dims": bool(keepdims)}).outputs[0]
