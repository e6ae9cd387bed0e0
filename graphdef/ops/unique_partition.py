"""Ops that group or count values, or split and merge a tensor's rows by index: Unique, UniqueV2,
UniqueWithCounts, Bincount, DenseBincount, DynamicPartition, DynamicStitch and ParallelDynamicStitch.

Partitioned embeddings (TF1's partitioned variables and embedding_lookup) are DynamicPartition
then DynamicStitch; Unique keeps first-occurrence order as TF does (every NaN its own value, -0.0
equal to 0.0). Bad indices are errors in TF's words; every size a value decides passes the size
limit first.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.framework.graph import name_scope
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, define
from graphdef.ops import array as array_ops
from graphdef.ops import math as math_ops
from graphdef.ops import reductions
from graphdef.ops import slicing

IDX = frozenset((dtypes.int32, dtypes.int64))


# -- Unique, UniqueV2, UniqueWithCounts -------------------------------------------------------------

def _first_occurrences(rows):
    """(first index of each distinct row in order of appearance, each row's position among them)."""
    if rows.dtype != object and rows.ndim == 1:
        # np.unique sorts; its first-occurrence indices, sorted, give TF's order
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True, equal_nan=False)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return first[order], rank[inverse.reshape(-1)]
    if rows.dtype.kind in "biu":  # exact values: np.unique over whole rows, first occurrences as above
        _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return first[order], rank[inverse.reshape(-1)]
    seen, first, idx = {}, [], np.empty(len(rows), np.int64)
    for i, row in enumerate(rows):
        key = tuple(row.tolist()) if rows.ndim > 1 else row  # a NaN is a new float each time: never equal
        k = seen.setdefault(key, len(first))
        if k == len(first):
            first.append(i)
        idx[i] = k
    return np.asarray(first, np.int64), idx


def _unique(x, axis, out_idx):
    x = np.asarray(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("unique expects a 1D vector.")
        first, idx = _first_occurrences(x)
        return x[first], idx.astype(out_idx.np), np.bincount(idx, minlength=first.size).astype(out_idx.np)
    moved = np.moveaxis(x, axis, 0)
    n, width = moved.shape[0], int(np.prod(moved.shape[1:], dtype=np.int64))
    if moved.ndim > 1 and width == 0:  # slices with no elements are all equal
        first, idx = np.zeros(min(n, 1), np.int64), np.zeros(n, np.int64)
    else:
        first, idx = _first_occurrences(moved.reshape(n, width) if moved.ndim > 1 else moved)
    y = np.moveaxis(moved[first], 0, axis)
    return y, idx.astype(out_idx.np), np.bincount(idx, minlength=first.size).astype(out_idx.np)


def _unique_kernel(x, *, out_idx):
    return _unique(x, None, out_idx)[:2]


def _unique_with_counts_kernel(x, *, out_idx):
    return _unique(x, None, out_idx)


def _checked_axis(axis, ndim):
    axis = np.asarray(axis)
    if axis.size > 1:
        raise ValueError(f"axis does not support input tensors larger than 1 elements, got {axis.size}")
    if axis.size == 0:
        return None
    a = int(axis.reshape(()))
    if not -ndim <= a < ndim:
        raise ValueError(f"axis has to be between [{-ndim}, {ndim}), got {a}")
    return a % ndim


def _unique_v2_kernel(x, axis, *, out_idx):
    x = np.asarray(x)
    return _unique(x, _checked_axis(axis, max(x.ndim, 1)), out_idx)[:2]


def _infer_unique(ctx):
    x = ctx.shape(0)
    if x.ndims not in (None, 1):
        raise ctx.error(f"unique expects a 1D vector, got shape {show(x)}")
    n = [None] if x.ndims is None else list(x.dims)
    counts = [TensorShape([None])] if ctx.op_type == "UniqueWithCounts" else []
    return [TensorShape([None]), TensorShape(n)] + counts


def _infer_unique_v2(ctx):
    x = ctx.shape(0)
    axis = constant_value(ctx.inputs[1])
    if axis is None or x.ndims is None:
        return [TensorShape(None if x.ndims is None else [None] * x.ndims), TensorShape([None])]
    try:
        a = _checked_axis(axis, max(x.ndims, 1))
    except ValueError as e:
        raise ctx.error(f"{e} (input {show(x)})") from None
    if a is None:
        if x.ndims != 1:
            raise ctx.error(f"unique expects a 1D vector, got shape {show(x)}")
        a = 0
    dims = list(x.dims)
    n = dims[a]
    dims[a] = None
    return [TensorShape(dims), TensorShape([n])]


_UNIQUE_ATTRS = {"T": Attr("type"), "out_idx": Attr("type", dtypes.int32, IDX)}
UNIQUE = define(
    "Unique", "x: T -> y: T, idx: out_idx",
    doc="The distinct values of a vector in order of first appearance, and each element's position among them.",
    attrs=_UNIQUE_ATTRS, infer=_infer_unique, kernel=_unique_kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
UNIQUE_WITH_COUNTS = define(
    "UniqueWithCounts", "x: T -> y: T, idx: out_idx, count: out_idx",
    doc="Unique, and how many times each distinct value appears.",
    attrs=_UNIQUE_ATTRS, infer=_infer_unique, kernel=_unique_with_counts_kernel, grad=NOT_DIFFERENTIABLE,
    numerics=EXACT)
UNIQUE_V2 = define(
    "UniqueV2", "x: T, axis: Taxis -> y: T, idx: out_idx",
    doc="The distinct slices along `axis` (a 1-element vector; empty means a vector input) in order of first "
        "appearance, and each slice's position among them.",
    attrs={**_UNIQUE_ATTRS, "Taxis": Attr("type", dtypes.int64, IDX)},
    infer=_infer_unique_v2, kernel=_unique_v2_kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- Bincount, DenseBincount ----------------------------------------------------------------------

def _bin_size(size):
    if np.ndim(size) != 0:
        raise ValueError(f"size should be a scalar, got shape {show(np.shape(size))}")
    n = int(size)
    if n < 0:
        raise ValueError(f"size ({n}) must be non-negative")
    return n


def _count(rows, size, weights, dtype, binary):
    """Bins of each row of `rows` ([r, m] of non-negative ints): [r, size]; values past size - 1 are ignored,
    as TF does. One bincount over row * size + value, however many rows."""
    r = rows.shape[0]
    keep = rows < size
    flat = (np.arange(r, dtype=np.int64)[:, None] * size + rows)[keep]
    if binary:
        out = np.zeros(r * size, dtype)
        out[flat] = 1
    elif weights is None:
        out = np.bincount(flat, minlength=r * size).astype(dtype)
    elif dtype.kind == "f":
        out = np.bincount(flat, weights=weights[keep].astype(np.float64), minlength=r * size).astype(dtype)
    else:  # integer weights add up exactly (bincount's weights are float64)
        out = np.zeros(r * size, np.int64)
        np.add.at(out, flat, weights[keep].astype(np.int64))
        out = out.astype(dtype)
    return out.reshape(r, size)


def _bincount(arr, size, weights):
    arr, weights = np.asarray(arr), np.asarray(weights)
    n = _bin_size(size)
    if arr.size and arr.min() < 0:
        raise ValueError("Input arr must be non-negative!")
    if weights.size and weights.shape != arr.shape:
        raise ValueError(f"Input indices and weights must have the same size, got {show(arr.shape)} and "
                         f"{show(weights.shape)}")
    check_size((n,), weights.dtype)
    flat_weights = weights.reshape(1, -1) if weights.size else None
    return _count(arr.reshape(1, -1).astype(np.int64), n, flat_weights, weights.dtype, False).reshape(n)


def _dense_bincount(input, size, weights, *, binary_output):  # noqa: A002 - TF's name
    x, weights = np.asarray(input), np.asarray(weights)
    n = _bin_size(size)
    if x.ndim > 2:
        raise ValueError(f"input must be a vector or a matrix, got shape {show(x.shape)}")
    if x.size and x.min() < 0:
        raise ValueError(f"Input 'in' must be non-negative! Negative input value found: {int(x.min())}")
    if weights.size and weights.shape != x.shape:
        raise ValueError(f"weights {show(weights.shape)} must have input's shape {show(x.shape)} or be empty")
    rows = x.reshape(-1, x.shape[-1] if x.ndim else 1).astype(np.int64)
    check_size(rows.shape[:1] + (n,), weights.dtype)
    out = _count(rows, n, weights.reshape(rows.shape) if weights.size else None, weights.dtype, binary_output)
    return out if x.ndim == 2 else out.reshape(n)


def _infer_bincount(ctx):
    size = constant_value(ctx.inputs[1])
    n = None if size is None or np.ndim(size) else int(size)
    if n is not None and n < 0:
        raise ctx.error(f"size ({n}) must be non-negative")
    if ctx.op_type == "DenseBincount":
        x = ctx.shape(0)
        if x.ndims is not None and x.ndims > 2:
            raise ctx.error(f"input must be a vector or a matrix, got shape {show(x)}")
        if x.ndims == 2:
            return [TensorShape([x.dims[0], n])]
        if x.ndims is None:
            return [TensorShape(None)]
    return [TensorShape([n])]


_COUNTED = frozenset((dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64))
BINCOUNT = define(
    "Bincount", "arr: int32, size: int32, weights: T -> bins: T",
    doc="bins[i] = how many of arr equal i (or the sum of their weights), for i < size; larger values ignored.",
    attrs={"T": Attr("type", allowed=_COUNTED)}, infer=_infer_bincount, kernel=_bincount,
    grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(8))
DENSE_BINCOUNT = define(
    "DenseBincount", "input: Tidx, size: Tidx, weights: T -> output: T",
    doc="Bincount of a vector, or of each row of a matrix; binary_output gives 1 for any count.",
    attrs={"Tidx": Attr("type", allowed=IDX), "T": Attr("type", allowed=_COUNTED),
           "binary_output": Attr("bool", False)},
    infer=_infer_bincount, kernel=_dense_bincount, grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(8))


# -- DynamicPartition ----------------------------------------------------------------------------

def _dynamic_partition(data, partitions, *, num_partitions):
    data, parts = np.asarray(data), np.asarray(partitions)
    if data.shape[:parts.ndim] != parts.shape:
        raise ValueError(f"data.shape must start with partitions.shape, got data.shape = {show(data.shape)}, "
                         f"partitions.shape = {show(parts.shape)}")
    flat = parts.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= num_partitions))
    if bad.size:
        at = ",".join(str(int(a)) for a in np.unravel_index(int(bad[0]), parts.shape)) if parts.ndim else ""
        raise ValueError(f"partitions[{at}] = {int(flat[bad[0]])} is not in [0, {num_partitions})")
    rows = data.reshape((flat.size,) + data.shape[parts.ndim:])
    # one stable sort by partition, cut by the counts: a mask per partition would be partitions x rows
    order = np.argsort(flat, kind="stable")
    ends = np.cumsum(np.bincount(flat, minlength=num_partitions)[:num_partitions])
    grouped = rows[order]
    return tuple(np.split(grouped, ends[:-1])) if num_partitions > 1 else (grouped,)


def _infer_dynamic_partition(ctx):
    data, parts = ctx.shape(0), ctx.shape(1)
    n = ctx.attrs["num_partitions"]
    if data.ndims is None or parts.ndims is None:
        return [TensorShape(None)] * n
    if not TensorShape(data.dims[:parts.ndims]).is_compatible_with(parts):
        raise ctx.error(f"data.shape must start with partitions.shape, got data.shape = {show(data)}, "
                        f"partitions.shape = {show(parts)}")
    counts = [None] * n
    value = constant_value(ctx.inputs[1])
    if value is not None:  # constant partitions: each output's rows are known (bad ones are the kernel's)
        flat = np.asarray(value).reshape(-1)
        if flat.size == 0 or (flat.min() >= 0 and flat.max() < n):
            counts = np.bincount(flat, minlength=n).tolist()
    return [TensorShape((c,) + data.dims[parts.ndims:]) for c in counts]


def _dynamic_partition_grad(op, *grads):
    """TF's rule: the positions of data's rows, partitioned alike, stitch the gradients back."""
    data, parts = op.inputs
    positions = array_ops.reshape(array_ops.range_(0, array_ops.size(parts), 1), array_ops.shape_of(parts))
    partitioned = dynamic_partition(positions, parts, op.attrs["num_partitions"])
    stitched = dynamic_stitch(partitioned, list(grads))
    return [array_ops.reshape(stitched, array_ops.shape_of(data)), None]


DYNAMIC_PARTITION = define(
    "DynamicPartition", "data: T, partitions: int32 -> outputs: num_partitions*T",
    doc="Splits data's rows (partitions' shape leading) into num_partitions outputs by each row's partition, "
        "keeping their order.",
    attrs={"num_partitions": Attr("int", minimum=1), "T": Attr("type")},
    infer=_infer_dynamic_partition, kernel=_dynamic_partition, grad=_dynamic_partition_grad, numerics=EXACT)


# -- DynamicStitch, ParallelDynamicStitch ----------------------------------------------------------

def _dynamic_stitch(*inputs, N):  # noqa: N803 - TF's attr name
    indices, data = [np.asarray(i) for i in inputs[:N]], [np.asarray(d) for d in inputs[N:]]
    for m, (i, d) in enumerate(zip(indices, data)):
        if d.shape[:i.ndim] != i.shape:
            raise ValueError(f"data[{m}].shape = {show(d.shape)} does not start with indices[{m}].shape = "
                             f"{show(i.shape)}")
        if i.size and i.min() < 0:
            raise ValueError(f"indices[{m}] is out of range")
    row = data[0].shape[indices[0].ndim:]
    for m, (i, d) in enumerate(zip(indices, data)):
        if d.shape[i.ndim:] != row:
            raise ValueError(f"data[{m}].shape = {show(d.shape)} does not match data[0]'s rows {show(row)} after "
                             f"indices[{m}].shape = {show(i.shape)}")
    n = max((int(i.max()) + 1 for i in indices if i.size), default=0)
    check_size((n,) + row, data[0].dtype)
    out = np.zeros((n,) + row, data[0].dtype) if data[0].dtype != object else np.full((n,) + row, b"", object)
    for i, d in zip(indices, data):  # in order: a later index overwrites an earlier one, as on TF's CPU
        out[i.reshape(-1)] = d.reshape((i.size,) + row)
    return out


def _infer_dynamic_stitch(ctx):
    n = ctx.attrs["N"]
    i0, d0 = ctx.shape(0), ctx.shape(n)
    if i0.ndims is None or d0.ndims is None:
        return [TensorShape(None)]
    for m in range(n):
        i, d = ctx.shape(m), ctx.shape(n + m)
        if i.ndims is not None and d.ndims is not None and not TensorShape(d.dims[:i.ndims]).is_compatible_with(i):
            raise ctx.error(f"data[{m}].shape = {show(d)} does not start with indices[{m}].shape = {show(i)}")
    values = [constant_value(t) for t in ctx.inputs[:n]]
    rows = None
    if all(v is not None for v in values):  # as TF's shape function: constant indices give the rows
        flat = np.concatenate([np.asarray(v).reshape(-1) for v in values])
        rows = int(flat.max()) + 1 if flat.size and flat.min() >= 0 else (0 if not flat.size else None)
    return [TensorShape((rows,) + d0.dims[i0.ndims:])]


def _dynamic_stitch_grad(op, g):
    n = op.attrs["N"]
    return [None] * n + [slicing.gather(g, op.inputs[m]) for m in range(n)]


_STITCH = dict(attrs={"N": Attr("int", minimum=1), "T": Attr("type")}, infer=_infer_dynamic_stitch,
               kernel=_dynamic_stitch, grad=_dynamic_stitch_grad, numerics=EXACT)
DYNAMIC_STITCH = define(
    "DynamicStitch", "indices: N*int32, data: N*T -> merged: T",
    doc="merged[indices[m][i]] = data[m][i]: rows put back in place, later inputs winning; rows no index names "
        "are 0.", **_STITCH)
PARALLEL_DYNAMIC_STITCH = define(
    "ParallelDynamicStitch", "indices: N*int32, data: N*T -> merged: T",
    doc="DynamicStitch whose winner among repeated indices TF leaves unspecified (here: the later input).",
    **_STITCH)


# -- builders ------------------------------------------------------------------------------------

def unique(x, out_idx=dtypes.int32, name=None):
    """tf.unique: (y, idx)."""
    return tuple(build("Unique", [x], name=name, default_name="Unique",
                       attrs={"out_idx": dtypes.as_dtype(out_idx)}).outputs)


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """tf.unique_with_counts: (y, idx, count)."""
    return tuple(build("UniqueWithCounts", [x], name=name, default_name="UniqueWithCounts",
                       attrs={"out_idx": dtypes.as_dtype(out_idx)}).outputs)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None):
    """tf.math.bincount (TF1's form): size max(arr) + 1, at least minlength, at most maxlength."""
    with name_scope(name, "bincount"):
        arr = array_ops.identity(arr) if not hasattr(arr, "dtype") else arr
        arr = math_ops.cast(arr, dtypes.int32)
        size = reductions.reduce_max(arr) + 1
        size = math_ops.maximum(size, 0)  # an empty arr has max INT_MIN: no bins
        if minlength is not None:
            size = math_ops.maximum(size, np.int32(minlength))
        if maxlength is not None:
            size = math_ops.minimum(size, np.int32(maxlength))
        w = (array_ops.constant(np.zeros(0, dtypes.as_dtype(dtype).np)) if weights is None else weights)
        return build("Bincount", [arr, size, w], default_name="Bincount").outputs[0]


def dynamic_partition(data, partitions, num_partitions, name=None):
    return list(build("DynamicPartition", [data, partitions], name=name, default_name="DynamicPartition",
                      attrs={"num_partitions": int(num_partitions)}).outputs)


def dynamic_stitch(indices, data, name=None):
    return build("DynamicStitch", [list(indices), list(data)], name=name, default_name="DynamicStitch").outputs[0]


def parallel_dynamic_stitch(indices, data, name=None):
    return build("ParallelDynamicStitch", [list(indices), list(data)], name=name,
                 default_name="ParallelDynamicStitch").outputs[0]
