"""StridedSlice (what `tensor[...]` builds), its gradient op, and TF's mask encoding of an index.

The masks are bit fields over the positions of the slice spec: begin_mask/end_mask ignore that
position's begin/end, ellipsis_mask marks `...`, new_axis_mask marks `None` (tf.newaxis) and
shrink_axis_mask an integer index, which removes the dim. `_resolve` follows TF's
ValidateStridedSliceOp step by step, so shapes, clamping and errors match it.
"""

from dataclasses import dataclass

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import Tensor, get_default_graph
from graphdef.framework.numerics import EXACT
from graphdef.framework.limits import check as check_size
from graphdef.ops.registry import (Attr, build, check_dims_value, check_dims_vector, constant_value,
                                   convert_to_tensor, define)
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops
from graphdef.ops import manip as manip_ops
from graphdef.ops import math as math_ops

_NEW_AXIS, _SHRINK = -1, -2
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@dataclass
class Resolved:
    """A slice spec resolved against an input shape."""
    index: tuple            # per input dim: an int (shrink) or a slice, where the dim is known
    processing: list        # per input dim: the sliced size (None: unknown); shrunk dims are 1
    final: list             # the output shape (None: unknown)


def _dense(rank, n, begin, end, strides, masks):
    """Expands the sparse spec (n positions, one ellipsis at most) into one entry per input dim."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = (masks[k] for k in MASKS)
    if ellipsis_mask & (ellipsis_mask - 1):
        raise ValueError("a slice may hold at most one ellipsis (...)")
    seen, new_after = False, 0
    for i in range(n):
        if seen and new_axis_mask & (1 << i):
            new_after += 1
        if ellipsis_mask & (1 << i):
            seen = True
    positions = n
    if not seen:  # an implicit ellipsis at the end keeps the remaining dims whole
        ellipsis_mask |= 1 << n
        positions += 1
    dense = [[0, 0, 1, True, True, False] for _ in range(rank)]  # begin, end, stride, b-masked, e-masked, shrink
    gather = []
    full = 0
    for i in range(positions):
        bit = 1 << i
        if ellipsis_mask & bit:
            stop = min(rank - (positions - i) + 1 + new_after, rank)
            while full < stop:
                gather.append(full)
                full += 1
        elif new_axis_mask & bit:
            gather.append(_NEW_AXIS)
        else:
            if full == rank:
                raise ValueError("cannot slice a scalar" if rank == 0 else
                                 f"the slice has more indices than the input's {rank} dims")
            dense[full] = [None if begin is None else begin[i], None if end is None else end[i], strides[i],
                           bool(begin_mask & bit), bool(end_mask & bit), bool(shrink_mask & bit)]
            gather.append(_SHRINK if shrink_mask & bit else full)
            full += 1
    return dense, gather


def _resolve(shape, begin, end, strides, masks):
    """TF's ValidateStridedSliceOp: begin/end may be None (not constant), shape dims None (unknown)."""
    strides = [int(s) for s in strides]
    n = len(strides)
    for what, v in (("begin", begin), ("end", end)):
        if v is not None and len(v) != n:
            raise ValueError(f"begin, end and strides must have one entry each; {what} has {len(v)}, strides {n}")
    dense, gather = _dense(len(shape), n, begin, end, strides, masks)
    index, processing = [], []
    for i, ((b, e, s, b_masked, e_masked, shrink), d) in enumerate(zip(dense, shape)):
        if s == 0:
            raise ValueError(f"strides[{i}] must be non-zero")
        if shrink and s <= 0:
            raise ValueError("an integer index needs stride 1")
        if d is None:
            processing.append(1 if shrink else None)
            index.append(None)
            continue
        lo, hi = (0, d) if s > 0 else (-1, d - 1)

        def canonical(x, masked, is_end):
            if masked:  # the whole dim, in the stride's direction
                return (hi if is_end else lo) if s > 0 else (lo if is_end else hi)
            x = x + d if x < 0 else x
            return min(max(x, lo), hi)

        known = b is not None and e is not None
        if known and shrink:
            b = b + d if b < 0 else b
            if not 0 <= b < d:
                raise ValueError(f"index {dense[i][0]} is out of bounds for dim {i} of size {d}")
            e = b + 1
        elif known:
            b, e = canonical(b, b_masked, False), canonical(e, e_masked, True)
        if known:
            length = e - b
        elif shrink:
            length = 1
        elif b_masked and e_masked:
            length = -d if s < 0 else d
        else:
            processing.append(None)
            index.append(None)
            continue
        size = 0 if length == 0 or (length < 0) != (s < 0) else -(-abs(length) // abs(s))
        processing.append(size)
        if not known:
            index.append(None)
        elif shrink:
            index.append(b)
        elif size == 0:
            index.append(slice(0, 0))
        else:  # a negative stride may end "before 0", which a Python slice spells None
            index.append(slice(b, e if e >= 0 else None, s))
    final = [1 if g == _NEW_AXIS else processing[g] for g in gather if g != _SHRINK]
    return Resolved(tuple(index), processing, final)


def _ints(value):
    return [int(v) for v in np.ravel(value)]


def _masks(attrs):
    return {k: int(attrs[k]) for k in MASKS}


def _infer_strided_slice(ctx, x, first):
    """The output shape for input shape `x`, begin/end/strides at inputs first..first+2."""
    for i, what in zip(range(first, first + 3), ("begin", "end", "strides")):
        if ctx.shape(i).ndims not in (None, 1):
            raise ctx.error(f"{what} must be a vector, got shape {show(ctx.shape(i))}")
    begin, end, strides = (constant_value(ctx.inputs[i]) for i in range(first, first + 3))
    if x.ndims is None or strides is None:
        return TensorShape(None)
    try:
        resolved = _resolve(x.dims, None if begin is None else _ints(begin), None if end is None else _ints(end),
                            _ints(strides), _masks(ctx.attrs))
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)})") from None
    return TensorShape(resolved.final)


def _strided_slice(input, begin, end, strides, **masks):  # noqa: A002 - TF's name
    x = np.asarray(input)
    r = _resolve(x.shape, _ints(begin), _ints(end), _ints(strides), masks)
    out = x[r.index]
    if type(out) is not np.ndarray:  # one element of a string (object) array comes out as bare bytes
        out = np.array(out, dtype=x.dtype)
    return out.reshape(r.final)


def _kernel(input, begin, end, strides, *, begin_mask, end_mask, ellipsis_mask, new_axis_mask,  # noqa: A002
            shrink_axis_mask):
    return _strided_slice(input, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask,
                          ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask,
                          shrink_axis_mask=shrink_axis_mask)


def _grad_kernel(shape, begin, end, strides, dy, *, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                 shrink_axis_mask):
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    check_dims_value(shape)
    shape = tuple(_ints(shape))
    dy = np.asarray(dy)
    r = _resolve(shape, _ints(begin), _ints(end), _ints(strides), masks)
    if list(dy.shape) != r.final:
        raise ValueError(f"dy has shape {show(dy.shape)}, but the slice of {show(shape)} is {show(r.final)}")
    check_size(shape, dy.dtype)  # the shape is a value: a small dy may ask for any size
    out = np.zeros(shape, dy.dtype)
    target = out[r.index]
    out[r.index] = dy.reshape(np.shape(target))
    return out


def _infer_grad(ctx):
    check_dims_vector(ctx, 0, "shape")
    shape = constant_value(ctx.inputs[0])
    if shape is None:
        n = ctx.shape(0).dims[0] if ctx.shape(0).ndims == 1 else None
        return [TensorShape(None if n is None else [None] * n)]
    shape = TensorShape(_ints(shape))
    sliced = _infer_strided_slice(ctx, shape, 1)
    if not sliced.is_compatible_with(ctx.shape(4)):
        raise ctx.error(f"dy has shape {show(ctx.shape(4))}, but the slice of {show(shape)} is {show(sliced)}")
    return [shape]


def _mask_attrs():
    return {k: Attr("int", 0) for k in MASKS}


def _slice_grad(op, g):
    x, begin, end, strides = op.inputs
    shape = array_ops.shape_of(x, out_type=begin.dtype)
    return [build("StridedSliceGrad", [shape, begin, end, strides, g], default_name="StridedSliceGrad",
                  attrs=_masks(op.attrs)).outputs[0], None, None, None]


STRIDED_SLICE = define(
    "StridedSlice", "input: T, begin: Index, end: Index, strides: Index -> output: T",
    doc="input[begin:end:strides] per dim, numpy-style (negative indices count from the end, out-of-range "
        "bounds clamp), with TF's masks for omitted bounds, ..., newaxis and integer indices.",
    attrs={"T": Attr("type"), "Index": Attr("type", allowed=dtypes.INDEX), **_mask_attrs()},
    infer=lambda ctx: [_infer_strided_slice(ctx, ctx.shape(0), 1)], kernel=_kernel, grad=_slice_grad, numerics=EXACT)

STRIDED_SLICE_GRAD = define(
    "StridedSliceGrad", "shape: Index, begin: Index, end: Index, strides: Index, dy: T -> output: T",
    doc="Zeros of `shape` with dy written where StridedSlice with the same arguments reads.",
    attrs={"T": Attr("type"), "Index": Attr("type", allowed=dtypes.INDEX), **_mask_attrs()},
    infer=_infer_grad, kernel=_grad_kernel,
    grad=lambda op, g: [None, None, None, None,
                        strided_slice(g, *op.inputs[1:4], **_masks(op.attrs))], numerics=EXACT)


# -- builders and Tensor.__getitem__ ---------------------------------------------------------------

def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """tf.strided_slice: the raw op; strides default to ones."""
    if strides is None:
        strides = [1] * len(begin)
    return build("StridedSlice", [input_, begin, end, strides], name=name, default_name="StridedSlice",
                 attrs={"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
                        "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}).outputs[0]


def _is_index(value):
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    if hasattr(value, "_to_tensor"):
        value = value._to_tensor()
    return isinstance(value, Tensor) and value.dtype in dtypes.INDEX and value.shape.ndims in (None, 0)


def _check_index(value, key):
    if not _is_index(value):
        raise TypeError(f"only integers, slices (:), ellipsis (...), tf.newaxis (None) and scalar int32/int64 "
                        f"tensors are valid indices, got {value!r} in {key!r}")


def _getitem(tensor, key):
    """TF's _slice_helper: one StridedSlice named 'strided_slice', its bounds packed into vectors."""
    tensor = convert_to_tensor(tensor)
    spec = list(key) if isinstance(key, (tuple, list)) else [key]
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, s in enumerate(spec):
        bit = 1 << i
        if isinstance(s, slice):
            for part, bounds, mask in ((s.start, begin, "begin_mask"), (s.stop, end, "end_mask")):
                if part is None:
                    bounds.append(0)
                    masks[mask] |= bit
                else:
                    _check_index(part, key)
                    bounds.append(part)
            if s.step is not None:
                _check_index(s.step, key)
            strides.append(1 if s.step is None else s.step)
        elif s is Ellipsis or s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(s, key)
            begin.append(s)
            end.append(s + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    with get_default_graph().name_scope("strided_slice") as scope:
        packed = [_pack_bounds(v, name) for v, name in ((begin, "stack"), (end, "stack_1"), (strides, "stack_2"))]
        if any(p.dtype is dtypes.int64 for p in packed):
            packed = [math_ops.cast(p, dtypes.int64) for p in packed]
        return build("StridedSlice", [tensor, *packed], name=scope, attrs=masks).outputs[0]


def _pack_bounds(values, name):
    """A Const vector when every bound is a Python int (as TF folds it), else a Pack of scalars."""
    if all(isinstance(v, (int, np.integer)) for v in values):
        ints = [int(v) for v in values]
        wide = any(not -2**31 <= v < 2**31 for v in ints)
        return array_ops.constant(ints, dtype=dtypes.int64 if wide else dtypes.int32, name=name)
    tensors = {i: convert_to_tensor(v) for i, v in enumerate(values) if not isinstance(v, (int, np.integer))}
    wide = dtypes.int64 if any(t.dtype is dtypes.int64 for t in tensors.values()) else dtypes.int32
    return manip_ops.stack([math_ops.cast(tensors[i], wide) if i in tensors else convert_to_tensor(v, dtype=wide)
                  for i, v in enumerate(values)], name=name)


Tensor.__getitem__ = _getitem
