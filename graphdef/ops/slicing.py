"""Ops that cut, repeat, pad or index: Slice, Tile, Pad, GatherV2 and UnsortedSegmentSum.

Out-of-range begins, sizes and indices are errors, as in TF (numpy would clip or wrap them).
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.ops.manip import const_ints, normalize_axis
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.ops.registry import Attr, build, check_dims_vector, constant_value, convert_to_tensor, define
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops
from graphdef.ops import manip as manip_ops
from graphdef.ops import math as math_ops

INDICES = frozenset((dtypes.int16, dtypes.int32, dtypes.int64))


def _vector_of_rank(ctx, index, rank, what):
    s = ctx.shape(index)
    if s.ndims not in (None, 1) or (s.ndims == 1 and rank is not None and s.dims[0] not in (None, rank)):
        raise ctx.error(f"{what} must be a vector of {rank if rank is not None else 'rank'} entries, "
                        f"got shape {show(s)} for input {show(ctx.shape(0))}")


# -- Slice ---------------------------------------------------------------------------------------

def _slice_bounds(shape, begin, size):
    """(begin, end) per dim, checked as TF checks them; size -1 means 'to the end'."""
    if len(begin) != len(shape) or len(size) != len(shape):
        raise ValueError(f"begin {begin} and size {size} must have one entry per dim of shape {show(shape)}")
    bounds = []
    for i, (d, b, s) in enumerate(zip(shape, begin, size)):
        end = d if s == -1 else b + s
        if b < 0 or s < -1 or (d is not None and (b > d or end > d)):
            raise ValueError(f"slice of dim {i} from {b} with size {s} is outside shape {show(shape)}")
        bounds.append((b, end))
    return bounds


def _infer_slice(ctx):
    x = ctx.shape(0)
    for i, what in ((1, "begin"), (2, "size")):
        _vector_of_rank(ctx, i, x.ndims, what)
        check_dims_vector(ctx, i, what)
    begin, size = const_ints(ctx.inputs[1]), const_ints(ctx.inputs[2])
    if x.ndims is None:
        n = next((len(v) for v in (begin, size) if isinstance(v, list)), None)
        return [TensorShape(None if n is None else [None] * n)]
    if size is None:
        return [TensorShape([None] * x.ndims)]
    if begin is None:
        return [TensorShape([None if s == -1 else s for s in size])]
    try:
        bounds = _slice_bounds(x.dims, begin, size)
    except ValueError as e:
        raise ctx.error(str(e)) from None
    return [TensorShape([None if e is None else e - b for b, e in bounds])]


def _slice(input, begin, size):  # noqa: A002 - TF's name
    x = np.asarray(input)
    bounds = _slice_bounds(x.shape, [int(b) for b in np.ravel(begin)], [int(s) for s in np.ravel(size)])
    return x[tuple(slice(b, e) for b, e in bounds)]


def _slice_grad(op, g):
    """Pads the gradient back out with zeros: before = begin, after = dim - begin - size."""
    x, begin, _ = op.inputs
    y = op.outputs[0]
    b = const_ints(begin)
    if x.shape.is_fully_defined() and y.shape.is_fully_defined() and b is not None:
        pads = [[lo, d - lo - n] for lo, d, n in zip(b, x.shape.dims, y.shape.dims)]
        paddings = array_ops.constant(np.array(pads, np.int32).reshape(-1, 2), name="paddings")
    else:
        after = array_ops.shape_of(x, out_type=begin.dtype) - begin - array_ops.shape_of(y, out_type=begin.dtype)
        paddings = manip_ops.stack([begin, after], axis=1)
    return [pad(g, paddings), None, None]


SLICE = define(
    "Slice", "input: T, begin: Index, size: Index -> output: T",
    doc="The block starting at `begin` of `size` (-1: to the end of that dim); out of range is an error.",
    attrs={"T": Attr("type"), "Index": Attr("type", allowed=dtypes.INDEX)},
    infer=_infer_slice, kernel=_slice, grad=_slice_grad, numerics=EXACT)


# -- Tile ----------------------------------------------------------------------------------------

def _infer_tile(ctx):
    x = ctx.shape(0)
    _vector_of_rank(ctx, 1, x.ndims, "multiples")
    check_dims_vector(ctx, 1, "multiples")
    multiples = const_ints(ctx.inputs[1])
    if multiples is None or x.ndims is None:
        n = x.ndims if x.ndims is not None else (len(multiples) if multiples is not None else None)
        return [TensorShape(None if n is None else [None] * n)]
    if len(multiples) != x.ndims or min(multiples, default=0) < 0:
        raise ctx.error(f"multiples {multiples} must be {x.ndims} non-negative counts for shape {show(x)}")
    return [TensorShape([None if d is None else d * m for d, m in zip(x.dims, multiples)])]


def _tile(input, multiples):  # noqa: A002
    x = np.asarray(input)
    reps = [int(m) for m in np.ravel(multiples)]
    if len(reps) != x.ndim or min(reps, default=0) < 0:
        raise ValueError(f"multiples {reps} must be {x.ndim} non-negative counts for shape {show(x.shape)}")
    dims = [d * m for d, m in zip(x.shape, reps)]
    check_size(dims, x.dtype)
    if 0 in dims:  # np.tile repeats dim by dim and would build the copies before a later 0 multiple
        return np.zeros(dims, x.dtype)
    return np.tile(x, reps)


def _tile_grad(op, g):
    """Views the gradient as [m0, d0, m1, d1, ...] and sums the copies (the m axes)."""
    x, multiples = op.inputs
    rank = x.shape.ndims
    if rank is None:
        raise NotImplementedError(f"the gradient of Tile '{op.name}' needs the input's rank")
    m = const_ints(multiples)
    if m is not None and x.shape.is_fully_defined():
        split_shape = [v for pair in zip(m, x.shape.dims) for v in pair]
    else:
        dims = array_ops.shape_of(x, out_type=multiples.dtype)
        split_shape = array_ops.reshape(array_ops.transpose(manip_ops.stack([multiples, dims])), [-1])
    return [math_ops.reduce_sum(array_ops.reshape(g, split_shape), axis=list(range(0, 2 * rank, 2))), None]


TILE = define(
    "Tile", "input: T, multiples: Tmultiples -> output: T",
    doc="Repeats the input multiples[i] times along each dim i.",
    attrs={"T": Attr("type"), "Tmultiples": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_tile, kernel=_tile, grad=_tile_grad, numerics=EXACT)


# -- Pad -----------------------------------------------------------------------------------------

def _infer_pad(ctx):
    x, p = ctx.shape(0), ctx.shape(1)
    if p.ndims not in (None, 2) or (p.ndims == 2 and (p.dims[1] not in (None, 2) or (
            x.ndims is not None and p.dims[0] not in (None, x.ndims)))):
        raise ctx.error(f"paddings must be [rank, 2] for input {show(x)}, got shape {show(p)}")
    check_dims_vector(ctx, 1, "paddings", per_dim=2)
    paddings = constant_value(ctx.inputs[1])
    if paddings is None or x.ndims is None:
        n = x.ndims if x.ndims is not None else (p.dims[0] if p.ndims == 2 else None)
        return [TensorShape(None if n is None else [None] * n)]
    if np.any(paddings < 0):
        raise ctx.error(f"paddings {paddings.tolist()} must not be negative")
    return [TensorShape([None if d is None else d + int(lo) + int(hi) for d, (lo, hi) in zip(x.dims, paddings)])]


def _pad(input, paddings):  # noqa: A002
    x = np.asarray(input)
    p = np.asarray(paddings).reshape(-1, 2) if np.size(paddings) else np.zeros((0, 2), np.int64)
    if p.shape[0] != x.ndim or np.any(p < 0):
        raise ValueError(f"paddings {p.tolist()} must be {x.ndim} non-negative [before, after] pairs")
    if not p.any():
        return x
    dims = [d + lo + hi for d, (lo, hi) in zip(x.shape, p.tolist())]
    check_size(dims, x.dtype)
    return padded(x, p.tolist(), np.zeros((), x.dtype))


def padded(x, pairs, value):
    """`x` with pairs[k] = (before, after) elements of `value` around axis k. Only the borders are
    filled before the copy: a zero-filled array is written twice (30% slower on ResNet50's
    ZeroPadding2D)."""
    out = np.empty([d + lo + hi for d, (lo, hi) in zip(x.shape, pairs)], x.dtype)
    for axis, (lo, hi) in enumerate(pairs):
        for start, stop in ((0, lo), (out.shape[axis] - hi, out.shape[axis])):
            if stop > start:
                out[(slice(None),) * axis + (slice(start, stop),)] = value
    out[tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, pairs))] = x
    return out


def _pad_grad(op, g):
    x, paddings = op.inputs
    p = constant_value(paddings)
    if p is not None:
        begin = [int(v) for v in np.asarray(p)[:, 0]]
    elif x.shape.ndims is not None:
        begin = array_ops.reshape(slice_(paddings, [0, 0], [x.shape.ndims, 1]), [-1])
    else:
        raise NotImplementedError(f"the gradient of Pad '{op.name}' needs the input's rank")
    return [slice_(g, begin, array_ops.shape_of(x, out_type=paddings.dtype)), None]


PAD = define(
    "Pad", "input: T, paddings: Tpaddings -> output: T",
    doc="Adds paddings[i] = [before, after] zeros around each dim i.",
    attrs={"T": Attr("type"), "Tpaddings": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_pad, kernel=_pad, grad=_pad_grad, numerics=EXACT)


# -- GatherV2 and its gradient's UnsortedSegmentSum ------------------------------------------------

def _gather_dims(params, indices, axis, batch_dims):
    """(axis, batch_dims) normalized and checked against the ranks."""
    if batch_dims < 0:
        batch_dims += indices
    if not 0 <= batch_dims <= indices:
        raise ValueError(f"batch_dims is out of range for indices of rank {indices}")
    axis = normalize_axis(axis, params)
    if axis < batch_dims:
        raise ValueError(f"axis {axis} must be at least batch_dims {batch_dims}")
    return axis, batch_dims


def _infer_gather(ctx):
    p, i = ctx.shape(0), ctx.shape(1)
    if ctx.shape(2).ndims not in (None, 0):
        raise ctx.error(f"axis must be a scalar, got shape {show(ctx.shape(2))}")
    axis = const_ints(ctx.inputs[2])
    if p.ndims is None or i.ndims is None or axis is None:
        return [TensorShape(None)]
    try:
        axis, b = _gather_dims(p.ndims, i.ndims, axis, ctx.attrs["batch_dims"])
    except ValueError as e:
        raise ctx.error(f"{e} (params {show(p)}, indices {show(i)})") from None
    if not TensorShape(p.dims[:b]).is_compatible_with(TensorShape(i.dims[:b])):
        raise ctx.error(f"the first {b} (batch) dims of params {show(p)} and indices {show(i)} differ")
    return [TensorShape(p.dims[:axis] + i.dims[b:] + p.dims[axis + 1:])]


def _check_indices(indices, limit):
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = indices[(indices < 0) | (indices >= limit)].ravel()[0]
        raise ValueError(f"index {int(bad)} is not in [0, {limit})")


def _gather(params, indices, axis, *, batch_dims):
    p, i = np.asarray(params), np.asarray(indices)
    axis, b = _gather_dims(p.ndim, i.ndim, int(axis), batch_dims)
    _check_indices(i, p.shape[axis])
    # each index copies a slice of params: many indices into a large slice may ask for any size
    check_size(p.shape[:axis] + i.shape[b:] + p.shape[axis + 1:], p.dtype)
    if b == 0:
        return np.take(p, i, axis=axis)
    if p.shape[:b] != i.shape[:b]:
        raise ValueError(f"the first {b} (batch) dims of params {show(p.shape)} and indices {show(i.shape)} differ")
    # one fancy index: the batch position broadcast against the gathered indices
    batch = int(np.prod(p.shape[:b]))
    flat_p = p.reshape((batch,) + p.shape[b:])
    flat_i = i.reshape((batch,) + i.shape[b:])
    rows = np.arange(batch).reshape((batch,) + (1,) * (i.ndim - b))
    moved = np.moveaxis(flat_p, axis - b + 1, 1)[rows, flat_i]        # [B, I..., A..., R...]
    a = axis - b                                                      # dims between batch and axis
    k = i.ndim - b
    perm = [0] + list(range(1 + k, 1 + k + a)) + list(range(1, 1 + k)) + list(range(1 + k + a, moved.ndim))
    out = moved.transpose(perm)
    return out.reshape(p.shape[:axis] + i.shape[b:] + p.shape[axis + 1:])


def _gather_grad(op, g):
    """Sums the gradient rows back into the gathered positions (a scatter-add), axis moved to the front."""
    params, indices, axis_t = op.inputs
    axis = const_ints(axis_t)
    pr, ir = params.shape.ndims, indices.shape.ndims
    if op.attrs["batch_dims"] != 0 or axis is None or pr is None or ir is None:
        raise NotImplementedError(f"the gradient of GatherV2 '{op.name}' needs batch_dims=0, a constant axis "
                                  "and known ranks")
    axis = normalize_axis(axis, pr)
    if indices.dtype is dtypes.int16:
        indices = math_ops.cast(indices, dtypes.int32)
    p_shape = array_ops.shape_of(params, out_type=dtypes.int32)
    front = [axis] + list(range(axis)) + list(range(axis + 1, pr))       # params' dims, axis first
    # g is [A..., I..., B...]; bring I first, then flatten it to one dim of segment rows
    g_perm = list(range(axis, axis + ir)) + list(range(axis)) + list(range(axis + ir, axis + ir + pr - 1 - axis))
    rows = array_ops.reshape(array_ops.transpose(g, g_perm) if axis else g,
                             _concat_shapes([-1], _take(p_shape, front[1:])))
    ids = array_ops.reshape(indices, [-1])
    count = params.shape.dims[axis]
    if count is None:
        count = gather(p_shape, axis)
    summed = unsorted_segment_sum(rows, ids, count)
    back = list(np.argsort(front))
    return [array_ops.transpose(summed, back) if axis else summed, None, None]


def _take(shape_vector, positions):
    """Entries of a 1-D shape tensor: a Const when it is one, else a GatherV2."""
    value = const_ints(shape_vector)
    if value is not None or not positions:
        return array_ops.constant([value[p] for p in positions] if positions else [], dtype=shape_vector.dtype)
    return gather(shape_vector, array_ops.constant(positions, dtype=dtypes.int32))


def _concat_shapes(*parts):
    tensors = [array_ops.constant(p, dtype=dtypes.int32) if isinstance(p, list) else p for p in parts]
    values = [const_ints(t) for t in tensors]
    if all(v is not None for v in values):
        return array_ops.constant([d for v in values for d in v], dtype=dtypes.int32)
    return manip_ops.concat(tensors, 0)


GATHER_V2 = define(
    "GatherV2", "params: Tparams, indices: Tindices, axis: Taxis -> output: Tparams",
    doc="params' slices at `indices` along `axis`: shape params[:axis] + indices + params[axis+1:] "
        "(batch_dims leading dims shared); an index out of range is an error.",
    attrs={"batch_dims": Attr("int", 0), "Tparams": Attr("type"), "Tindices": Attr("type", allowed=INDICES),
           "Taxis": Attr("type", allowed=dtypes.INDEX)},
    infer=_infer_gather, kernel=_gather, grad=_gather_grad, numerics=EXACT)


def _infer_segment_sum(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    num = const_ints(ctx.inputs[2])
    if ctx.shape(2).ndims not in (None, 0):
        raise ctx.error(f"num_segments must be a scalar, got shape {show(ctx.shape(2))}")
    if data.ndims is None or ids.ndims is None:
        return [TensorShape(None)]
    if not TensorShape(data.dims[:ids.ndims]).is_compatible_with(ids):
        raise ctx.error(f"segment_ids {show(ids)} must be a prefix of data's shape {show(data)}")
    return [TensorShape((num,) + data.dims[ids.ndims:])]


def _segment_sum(data, segment_ids, num_segments):
    data, ids = np.asarray(data), np.asarray(segment_ids)
    num = int(num_segments)
    if num < 0:  # the segment family's words (segments.py)
        raise ValueError(f"Input num_segments == {num} must not be negative.")
    if data.shape[:ids.ndim] != ids.shape:
        raise ValueError(f"segment_ids {show(ids.shape)} must be a prefix of data's shape {show(data.shape)}")
    if ids.size and ids.max() >= num:
        raise ValueError(f"segment id {int(ids.max())} is not below num_segments {num}")
    rest = data.shape[ids.ndim:]
    check_size((num,) + rest, data.dtype)  # num_segments is a value: it may ask for anything
    out = np.zeros((num,) + rest, data.dtype)
    keep = ids.ravel() >= 0  # TF drops negative ids
    row = int(np.prod(rest, dtype=np.int64))  # explicit: -1 cannot be resolved when a size is 0
    np.add.at(out.reshape(num, row), ids.ravel()[keep], data.reshape(ids.size, row)[keep])
    return out


def _segment_sum_grad(op, g):
    """Each data row gets its segment's gradient; rows with a negative id got dropped, so get 0."""
    data, ids, _ = op.inputs
    rows = gather(g, math_ops.maximum(ids, 0))
    if data.shape.ndims is None or ids.shape.ndims is None:
        raise NotImplementedError(f"the gradient of UnsortedSegmentSum '{op.name}' needs known ranks")
    kept = array_ops.reshape(compare_ops.greater_equal(ids, 0), _keep_shape(ids, data.shape.ndims - ids.shape.ndims))
    return [compare_ops.select_v2(kept, rows, array_ops.zeros_like(rows)), None, None]


def _keep_shape(ids, extra):
    return _concat_shapes(array_ops.shape_of(ids, out_type=dtypes.int32), [1] * extra)


UNSORTED_SEGMENT_SUM = define(
    "UnsortedSegmentSum", "data: T, segment_ids: Tindices, num_segments: Tnumsegments -> output: T",
    doc="output[k] = the sum of data's rows whose segment id is k (negative ids are dropped).",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "Tindices": Attr("type", allowed=INDICES),
           "Tnumsegments": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_segment_sum, kernel=_segment_sum, grad=_segment_sum_grad, numerics=tensor_ulps(8))


# -- builders ------------------------------------------------------------------------------------

def slice_(input_, begin, size, name=None):
    """tf.slice: the block at `begin` of `size` (-1 to the end)."""
    return build("Slice", [input_, begin, size], name=name, default_name="Slice").outputs[0]


def tile(input, multiples, name=None):  # noqa: A002
    return build("Tile", [input, multiples], name=name, default_name="Tile").outputs[0]


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """tf.pad: Pad with zeros, PadV2 with another constant, MirrorPad for REFLECT and SYMMETRIC (as TF)."""
    mode = str(mode).upper()
    if mode in ("REFLECT", "SYMMETRIC"):
        return build("MirrorPad", [tensor, paddings], name=name, default_name="MirrorPad",
                     attrs={"mode": mode}).outputs[0]
    if mode != "CONSTANT":
        raise ValueError(f"pad: mode {mode!r} must be CONSTANT, REFLECT or SYMMETRIC")
    if isinstance(constant_values, (int, float, np.number)) and constant_values == 0:
        return build("Pad", [tensor, paddings], name=name, default_name="Pad").outputs[0]
    tensor = convert_to_tensor(tensor)
    value = convert_to_tensor(constant_values, dtype=tensor.dtype)
    return build("PadV2", [tensor, paddings, value], name=name, default_name="PadV2").outputs[0]


def gather(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """tf.gather: GatherV2 along `axis` (default batch_dims, i.e. 0)."""
    params = convert_to_tensor(params)
    axis = batch_dims if axis is None else axis
    return build("GatherV2", [params, indices, axis], name=name, default_name="GatherV2",
                 attrs={"batch_dims": int(batch_dims)}).outputs[0]


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """tf.math.unsorted_segment_sum: [num_segments] + data.shape[rank(segment_ids):]."""
    return build("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name,
                 default_name="UnsortedSegmentSum").outputs[0]
