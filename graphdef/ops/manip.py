"""Rearranging ops: Squeeze, ExpandDims, ConcatV2, Pack, Unpack, Split, SplitV and IdentityN.

Axes may be negative, counted from the end, and are checked at build time whenever they are
constants. Ops with several outputs return a tuple from their kernel, or the bare array when
they have exactly one (how the Session stores a single output).
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.framework.numerics import EXACT
from graphdef.ops.registry import Attr, build, constant_value, convert_to_tensor, define
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops


def const_ints(tensor):
    """A Const tensor's value as a list of Python ints (a scalar as one int), else None."""
    value = constant_value(tensor)
    if value is None:
        return None
    return int(value) if np.ndim(value) == 0 else [int(v) for v in np.ravel(value)]


def normalize_axis(axis, rank, what="axis"):
    """An axis in [-rank, rank) as a non-negative int; ValueError naming the range otherwise."""
    if not -rank <= axis < rank:
        raise ValueError(f"{what} {axis} is out of range [{-rank}, {rank})")
    return axis % rank


def _one_or_all(parts):
    parts = tuple(parts)
    return parts[0] if len(parts) == 1 else parts


def _reshape_like(g, x):
    return array_ops.reshape(g, array_ops.shape_of(x))


# -- Squeeze and ExpandDims -------------------------------------------------------------------

def _squeezed_axes(dims, squeeze_dims):
    return sorted({normalize_axis(int(a), len(dims), "squeeze dim") for a in squeeze_dims})


def _infer_squeeze(ctx):
    x = ctx.shape(0)
    listed = ctx.attrs["squeeze_dims"]
    if x.ndims is None:
        return [TensorShape(None)]
    try:
        axes = _squeezed_axes(x.dims, listed)
    except ValueError as e:
        raise ctx.error(f"{e} for input shape {show(x)}") from None
    if not listed:
        if None in x.dims:  # which unknown dims are 1 is only known at run time
            return [TensorShape(None)]
        axes = [i for i, d in enumerate(x.dims) if d == 1]
    for a in axes:
        if x.dims[a] not in (None, 1):
            raise ctx.error(f"cannot squeeze dim {a} of shape {show(x)}: it is {x.dims[a]}, not 1")
    return [TensorShape([d for i, d in enumerate(x.dims) if i not in axes])]


def _squeeze(input, *, squeeze_dims):  # noqa: A002 - TF's name
    x = np.asarray(input)
    axes = _squeezed_axes(x.shape, squeeze_dims) if squeeze_dims else [i for i, d in enumerate(x.shape) if d == 1]
    bad = [a for a in axes if x.shape[a] != 1]
    if bad:
        raise ValueError(f"cannot squeeze dim {bad[0]} of shape {show(x.shape)}: it is not 1")
    return x.reshape([d for i, d in enumerate(x.shape) if i not in axes])


SQUEEZE = define(
    "Squeeze", "input: T -> output: T",
    doc="Removes size-1 dims: those listed in squeeze_dims (negative counts from the end), or all of them.",
    attrs={"T": Attr("type"), "squeeze_dims": Attr("list(int)", ())},
    infer=_infer_squeeze, kernel=_squeeze, grad=lambda op, g: [_reshape_like(g, op.inputs[0])], numerics=EXACT)


def _expand_axis(dim, rank):
    if np.size(dim) != 1:
        raise ValueError(f"dim must be a single axis, got {np.asarray(dim).tolist()}")
    return normalize_axis(int(np.ravel(dim)[0]), rank + 1, "dim")


def _infer_expand_dims(ctx):
    x = ctx.shape(0)
    dim = constant_value(ctx.inputs[1])
    if x.ndims is None:
        return [TensorShape(None)]
    if dim is None:
        return [TensorShape([None] * (x.ndims + 1))]
    try:
        axis = _expand_axis(dim, x.ndims)
    except ValueError as e:
        raise ctx.error(f"{e} for input shape {show(x)}") from None
    return [TensorShape(x.dims[:axis] + (1,) + x.dims[axis:])]


def _expand_dims(input, dim):  # noqa: A002
    x = np.asarray(input)
    return np.expand_dims(x, _expand_axis(dim, x.ndim))


EXPAND_DIMS = define(
    "ExpandDims", "input: T, dim: Tdim -> output: T",
    doc="Inserts a size-1 dim at index `dim` of the output (in [-rank-1, rank]).",
    attrs={"T": Attr("type"), "Tdim": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_expand_dims, kernel=_expand_dims, grad=lambda op, g: [_reshape_like(g, op.inputs[0]), None],
    numerics=EXACT)


# -- ConcatV2 ------------------------------------------------------------------------------------

def _infer_concat(ctx):
    n = ctx.attrs["N"]  # at least 2: create checks the count's minimum
    shapes = [ctx.shape(i) for i in range(n)]
    axis = const_ints(ctx.inputs[n])
    known = [s for s in shapes if s.ndims is not None]
    if not known:
        return [TensorShape(None)]
    rank = known[0].ndims
    for s in known:
        if s.ndims != rank:
            raise ctx.error(f"cannot concatenate shapes {show(known[0])} and {show(s)}: ranks differ")
    if rank == 0:
        raise ctx.error("cannot concatenate scalars; use tf.stack")
    if axis is None:
        return [TensorShape([None] * rank)]
    try:
        axis = normalize_axis(axis, rank)
    except ValueError as e:
        raise ctx.error(f"{e} for shapes {', '.join(show(s) for s in known)}") from None
    out = [None] * rank
    total = 0
    for s in shapes:
        dims = s.dims if s.dims is not None else (None,) * rank
        for i, d in enumerate(dims):
            if i == axis:
                total = None if total is None or d is None else total + d
            elif d is not None:
                if out[i] is not None and out[i] != d:
                    first = next(t for t in known if t.dims[i] is not None)
                    raise ctx.error(f"cannot concatenate shapes {show(first)} and {show(s)} along axis {axis}: "
                                    f"dim {i} differs ({out[i]} vs {d})")
                out[i] = d
    out[axis] = total
    return [TensorShape(out)]


def _concat(*inputs):
    values, axis = inputs[:-1], int(inputs[-1])
    values = [np.asarray(v) for v in values]
    if values[0].ndim == 0:
        raise ValueError("cannot concatenate scalars; use tf.stack")
    return np.concatenate(values, axis=normalize_axis(axis, values[0].ndim))


def _concat_grad(op, g):
    *values, axis_t = op.inputs
    axis = const_ints(axis_t)
    rank = next((v.shape.ndims for v in values if v.shape.ndims is not None), None)
    if axis is None or rank is None:
        raise NotImplementedError(f"the gradient of ConcatV2 '{op.name}' needs a constant axis and known ranks")
    axis = normalize_axis(axis, rank)
    dims = [v.shape.dims[axis] if v.shape.ndims is not None else None for v in values]
    if None not in dims:
        sizes = array_ops.constant(dims, dtype=dtypes.int32, name="sizes")
    else:
        sizes = concat([array_ops.constant([d], dtype=dtypes.int32) if d is not None else
                        array_ops.shape_of(v)[axis:axis + 1] for v, d in zip(values, dims)], 0, name="sizes")
    parts = build("SplitV", [g, sizes, axis], attrs={"num_split": len(values)}).outputs
    return list(parts) + [None]


CONCAT_V2 = define(
    "ConcatV2", "values: N*T, axis: Tidx -> output: T",
    doc="Joins N >= 2 tensors of one rank along `axis` (negative counts from the end); other dims must match.",
    attrs={"N": Attr("int", minimum=2), "T": Attr("type"), "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_concat, kernel=_concat, grad=_concat_grad, numerics=EXACT)


# -- Pack and Unpack -----------------------------------------------------------------------------

def _infer_pack(ctx):
    n, axis = ctx.attrs["N"], ctx.attrs["axis"]
    merged = TensorShape(None)
    for i in range(n):
        if not merged.is_compatible_with(ctx.shape(i)):
            raise ctx.error(f"cannot stack shapes {show(merged)} and {show(ctx.shape(i))}: all must be equal")
        merged = merged.merge_with(ctx.shape(i))
    if merged.ndims is None:
        return [TensorShape(None)]
    try:
        axis = normalize_axis(axis, merged.ndims + 1)
    except ValueError as e:
        raise ctx.error(f"{e} for stacking shape {show(merged)}") from None
    return [TensorShape(merged.dims[:axis] + (n,) + merged.dims[axis:])]


def _pack(*values, axis):
    values = [np.asarray(v) for v in values]
    return np.stack(values, axis=normalize_axis(axis, values[0].ndim + 1))


PACK = define(
    "Pack", "values: N*T -> output: T",
    doc="Stacks N tensors of one shape along a new dim at `axis` (in [-rank-1, rank]).",
    attrs={"N": Attr("int"), "T": Attr("type"), "axis": Attr("int", 0)},
    infer=_infer_pack, kernel=_pack,
    grad=lambda op, g: list(unstack(g, num=op.attrs["N"], axis=op.attrs["axis"])), numerics=EXACT)


def _infer_unpack(ctx):
    x, num, axis = ctx.shape(0), ctx.attrs["num"], ctx.attrs["axis"]
    if x.ndims is None:
        return [TensorShape(None)] * num
    try:
        axis = normalize_axis(axis, x.ndims)
    except ValueError as e:
        raise ctx.error(f"{e} for input shape {show(x)}") from None
    if x.dims[axis] not in (None, num):
        raise ctx.error(f"cannot unstack dim {axis} of shape {show(x)} into {num} tensors")
    return [TensorShape(x.dims[:axis] + x.dims[axis + 1:])] * num


def _unpack(value, *, num, axis):
    x = np.asarray(value)
    axis = normalize_axis(axis, x.ndim)
    if x.shape[axis] != num:
        raise ValueError(f"cannot unstack dim {axis} of shape {show(x.shape)} into {num} tensors")
    return _one_or_all(np.moveaxis(x, axis, 0))


UNPACK = define(
    "Unpack", "value: T -> output: num*T",
    doc="Splits a tensor along `axis` into `num` tensors with that dim removed.",
    attrs={"num": Attr("int"), "T": Attr("type"), "axis": Attr("int", 0)},
    infer=_infer_unpack, kernel=_unpack,
    grad=lambda op, *gs: [stack(list(gs), axis=op.attrs["axis"])], numerics=EXACT)


# -- Split and SplitV ------------------------------------------------------------------------------

def _infer_split(ctx):
    num = ctx.attrs["num_split"]  # at least 1 (TF's bound): create checks the count's minimum
    x = ctx.shape(1)
    axis = const_ints(ctx.inputs[0])
    if x.ndims is None:
        return [TensorShape(None)] * num
    if axis is None:
        return [TensorShape([None] * x.ndims)] * num
    try:
        axis = normalize_axis(axis, x.ndims, "split_dim")
    except ValueError as e:
        raise ctx.error(f"{e} for input shape {show(x)}") from None
    d = x.dims[axis]
    if d is not None and d % num:
        raise ctx.error(f"cannot split dim {axis} of shape {show(x)} into {num} equal parts")
    return [TensorShape(x.dims[:axis] + (None if d is None else d // num,) + x.dims[axis + 1:])] * num


def _split(split_dim, value, *, num_split):
    x = np.asarray(value)
    axis = normalize_axis(int(split_dim), x.ndim, "split_dim")
    if x.shape[axis] % num_split:
        raise ValueError(f"cannot split dim {axis} of shape {show(x.shape)} into {num_split} equal parts")
    return _one_or_all(np.split(x, num_split, axis=axis))


def _split_grad(op, *gs):
    return [None, gs[0] if len(gs) == 1 else concat(list(gs), op.inputs[0])]


SPLIT = define(
    "Split", "split_dim: int32, value: T -> output: num_split*T",
    doc="Splits `value` along split_dim into num_split equal parts.",
    attrs={"num_split": Attr("int", minimum=1), "T": Attr("type")},
    infer=_infer_split, kernel=_split, grad=_split_grad, numerics=EXACT)


def _resolve_sizes(sizes, dim, num):
    """size_splits with its one -1 filled in; ValueError if they cannot cover `dim` (None: unknown)."""
    sizes = [int(s) for s in np.ravel(sizes)]
    if len(sizes) != num:
        raise ValueError(f"size_splits {sizes} has {len(sizes)} entries for num_split={num}")
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError(f"size_splits {sizes} may hold at most one -1 and no other negative size")
    known = sum(s for s in sizes if s != -1)
    if dim is None:
        return [None if s == -1 else s for s in sizes]
    if -1 in sizes:
        if known > dim:
            raise ValueError(f"size_splits {sizes} add up to more than the dim's {dim}")
        sizes[sizes.index(-1)] = dim - known
    elif known != dim:
        raise ValueError(f"size_splits {sizes} add up to {known}, not the dim's {dim}")
    return sizes


def _infer_split_v(ctx):
    num = ctx.attrs["num_split"]  # at least 1: create checks the count's minimum
    x = ctx.shape(0)
    sizes = constant_value(ctx.inputs[1])
    axis = const_ints(ctx.inputs[2])
    if x.ndims is None:
        return [TensorShape(None)] * num
    if axis is None:
        return [TensorShape([None] * x.ndims)] * num
    try:
        axis = normalize_axis(axis, x.ndims, "split_dim")
        resolved = [None] * num if sizes is None else _resolve_sizes(sizes, x.dims[axis], num)
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)}, split_dim {axis})") from None
    return [TensorShape(x.dims[:axis] + (s,) + x.dims[axis + 1:]) for s in resolved]


def _split_v(value, size_splits, split_dim, *, num_split):
    x = np.asarray(value)
    axis = normalize_axis(int(split_dim), x.ndim, "split_dim")
    sizes = _resolve_sizes(size_splits, x.shape[axis], num_split)
    return _one_or_all(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _split_v_grad(op, *gs):
    return [gs[0] if len(gs) == 1 else concat(list(gs), op.inputs[2]), None, None]


SPLIT_V = define(
    "SplitV", "value: T, size_splits: Tlen, split_dim: int32 -> output: num_split*T",
    doc="Splits `value` along split_dim into parts of the given sizes (one may be -1: the rest).",
    attrs={"num_split": Attr("int", minimum=1), "T": Attr("type"),
           "Tlen": Attr("type", dtypes.int64, frozenset((dtypes.int8, dtypes.int32, dtypes.int64)))},
    infer=_infer_split_v, kernel=_split_v, grad=_split_v_grad, numerics=EXACT)


# -- IdentityN -----------------------------------------------------------------------------------

def _identity_n(*inputs):
    return _one_or_all(inputs)


IDENTITY_N = define(
    "IdentityN", "input: T -> output: T",
    doc="Returns its inputs unchanged; T lists their dtypes, which may differ.",
    attrs={"T": Attr("list(type)", minimum=1)},
    infer=lambda ctx: [t.shape for t in ctx.inputs], kernel=_identity_n, grad=lambda op, *gs: list(gs), numerics=EXACT)


# -- builders ------------------------------------------------------------------------------------

def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    """tf.squeeze: removes the listed size-1 dims, or every size-1 dim when axis is None."""
    axis = squeeze_dims if axis is None else axis
    axis = [] if axis is None else [int(axis)] if np.ndim(axis) == 0 else [int(a) for a in axis]
    return build("Squeeze", [input], name=name, default_name="Squeeze", attrs={"squeeze_dims": axis}).outputs[0]


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    """tf.expand_dims: a size-1 dim inserted at `axis` (negative counts from the end of the output)."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("expand_dims: axis is required")
    return build("ExpandDims", [input, axis], name=name, default_name="ExpandDims").outputs[0]


def concat(values, axis, name="concat"):
    """tf.concat: ConcatV2, or an Identity of the only value (as TF does)."""
    values = list(values)
    if len(values) == 1:
        with get_default_graph().name_scope(name) as scope:
            return array_ops.identity(values[0], name=scope)
    return build("ConcatV2", [values, axis], name=name, default_name="concat").outputs[0]


def stack(values, axis=0, name="stack"):
    """tf.stack: Pack along a new dim `axis`."""
    return build("Pack", [list(values)], name=name, default_name="stack", attrs={"axis": int(axis)}).outputs[0]


def unstack(value, num=None, axis=0, name="unstack"):
    """tf.unstack: a list of tensors; num defaults to the static size of dim `axis`."""
    value = convert_to_tensor(value)
    if num is None:
        dims = value.shape.dims
        if dims is None:
            raise ValueError(f"unstack: '{value.name}' has unknown rank; pass num")
        num = dims[normalize_axis(int(axis), len(dims))]
        if num is None:
            raise ValueError(f"unstack: dim {axis} of '{value.name}' {show(value.shape)} is unknown; pass num")
    op = build("Unpack", [value], name=name, default_name="unstack", attrs={"num": int(num), "axis": int(axis)})
    return list(op.outputs)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """tf.split: an int gives Split into equal parts, a list of sizes gives SplitV; returns a list."""
    if isinstance(num_or_size_splits, (int, np.integer)):
        op = build("Split", [axis, value], name=name, default_name="split",
                   attrs={"num_split": int(num_or_size_splits)})
        return list(op.outputs)
    sizes = convert_to_tensor(num_or_size_splits, name="num_or_size_splits")
    if num is None:
        if sizes.shape.ndims != 1 or sizes.shape.dims[0] is None:
            raise ValueError(f"split: cannot tell how many parts {show(sizes.shape)} sizes make; pass num")
        num = sizes.shape.dims[0]
    op = build("SplitV", [value, sizes, axis], name=name, default_name="split", attrs={"num_split": int(num)})
    return list(op.outputs)


def identity_n(input, name=None):  # noqa: A002
    """tf.identity_n: its inputs, unchanged, as a list."""
    return list(build("IdentityN", [list(input)], name=name, default_name="IdentityN").outputs)
