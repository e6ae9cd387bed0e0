"""Moving spatial blocks into the batch or the channels and back: SpaceToBatchND, BatchToSpaceND
(TF writes them around dilated convolutions in old graphs), SpaceToDepth and DepthToSpace (NHWC).

All four only move elements, so they are exact. block_shape, paddings and crops are values from a
file or a feed: each is checked, and the output's size with it, before anything is allocated.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, constant_value, convert_to_tensor, define

INDEX = frozenset((dtypes.int32, dtypes.int64))


def _block_and_pairs(block_shape, pairs, input_shape, what):
    """(block list, [[before, after]] list) after checking them against the input's rank."""
    block = np.asarray(block_shape)
    pairs = np.asarray(pairs)
    if block.ndim != 1:
        raise ValueError(f"block_shape must be 1-D, got shape {show(block.shape)}")
    m = block.shape[0]
    if pairs.shape != (m, 2):
        raise ValueError(f"{what} must have shape [{m},2] for block_shape {block.tolist()}, got {show(pairs.shape)}")
    if m < 1 or m > len(input_shape) - 1:
        raise ValueError(f"block_shape has {m} entries; the input {show(input_shape)} has "
                         f"{len(input_shape) - 1} dims after its batch dim (need 1 to that many)")
    block, pairs = [int(b) for b in block], [[int(a), int(b)] for a, b in pairs]
    if min(block) < 1:
        raise ValueError(f"block_shape {block} must be positive")
    if min(min(p) for p in pairs) < 0:
        raise ValueError(f"{what} {pairs} must be non-negative")
    return block, pairs


def _space_to_batch_dims(shape, block, paddings):
    padded = [shape[1 + i] + a + b for i, (a, b) in enumerate(paddings)]
    for i, (p, k) in enumerate(zip(padded, block)):
        if p % k:
            raise ValueError(f"padded spatial dim {i} is {p}, not a multiple of block_shape[{i}] = {k}")
    return [shape[0] * int(np.prod(block, dtype=object))] + [p // k for p, k in zip(padded, block)] + list(
        shape[1 + len(block):]), padded


def _space_to_batch(input, block_shape, paddings):  # noqa: A002 - TF's name
    x = np.asarray(input)
    block, pads = _block_and_pairs(block_shape, paddings, x.shape, "paddings")
    out_dims, padded = _space_to_batch_dims(x.shape, block, pads)
    check_size(out_dims, x.dtype)
    m = len(block)
    x = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m))
    split = [x.shape[0]]
    for p, k in zip(padded, block):
        split += [p // k, k]
    x = x.reshape(split + list(x.shape[1 + m:]))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, x.ndim))
    return np.ascontiguousarray(np.transpose(x, perm)).reshape(out_dims)


def _batch_to_space(input, block_shape, crops):  # noqa: A002 - TF's name
    x = np.asarray(input)
    block, crops = _block_and_pairs(block_shape, crops, x.shape, "crops")
    m, count = len(block), int(np.prod(block, dtype=object))
    if x.shape[0] % count:
        raise ValueError(f"input batch {x.shape[0]} is not a multiple of the block size {count} ({block})")
    full = [x.shape[1 + i] * k for i, k in enumerate(block)]
    for i, ((a, b), f) in enumerate(zip(crops, full)):
        if a + b > f:
            raise ValueError(f"crops[{i}] = {[a, b]} remove more than the {f} elements of spatial dim {i}")
    batch = x.shape[0] // count
    x = x.reshape(block + [batch] + list(x.shape[1:]))
    perm = [m] + [j for i in range(m) for j in (m + 1 + i, i)] + list(range(2 * m + 1, x.ndim))
    x = np.transpose(x, perm).reshape([batch] + full + list(x.shape[2 * m + 1:]))
    index = (slice(None),) + tuple(slice(a, f - b) for (a, b), f in zip(crops, full))
    return np.ascontiguousarray(x[index])


def _infer_space_batch(to_batch, what):
    def infer(ctx):
        x = ctx.shape(0)
        block, pairs = constant_value(ctx.inputs[1]), constant_value(ctx.inputs[2])
        bs, ps = ctx.shape(1), ctx.shape(2)
        if bs.ndims not in (None, 1):
            raise ctx.error(f"block_shape must be 1-D, got shape {show(bs)}")
        if ps.ndims not in (None, 2):
            raise ctx.error(f"{what} must be 2-D [M, 2], got shape {show(ps)}")
        if x.ndims is None or block is None or pairs is None:
            return [TensorShape(None)]
        dims = x.dims
        try:
            block, pairs = _block_and_pairs(block, pairs, dims, what)
            if to_batch:
                count = int(np.prod(block, dtype=object))
                out = [None if dims[0] is None else dims[0] * count]
                for i, (k, (a, b)) in enumerate(zip(block, pairs)):
                    d = dims[1 + i]
                    if d is not None and (d + a + b) % k:
                        raise ValueError(f"padded spatial dim {i} is {d + a + b}, not a multiple of "
                                         f"block_shape[{i}] = {k}")
                    out.append(None if d is None else (d + a + b) // k)
                return [TensorShape(out + list(dims[1 + len(block):]))]
            count = int(np.prod(block, dtype=object))
            if dims[0] is not None and dims[0] % count:
                raise ValueError(f"input batch {dims[0]} is not a multiple of the block size {count} ({block})")
            out = [None if dims[0] is None else dims[0] // count]
            for i, (k, (a, b)) in enumerate(zip(block, pairs)):
                d = dims[1 + i]
                if d is not None and a + b > d * k:
                    raise ValueError(f"crops[{i}] = {[a, b]} remove more than the {d * k} elements of spatial "
                                     f"dim {i}")
                out.append(None if d is None else d * k - a - b)
            return [TensorShape(out + list(dims[1 + len(block):]))]
        except ValueError as e:
            raise ctx.error(str(e)) from None
    return infer


def _grad_space_to_batch(op, g):
    return [build("BatchToSpaceND", [g, op.inputs[1], op.inputs[2]], default_name="BatchToSpaceND").outputs[0],
            None, None]


def _grad_batch_to_space(op, g):
    return [build("SpaceToBatchND", [g, op.inputs[1], op.inputs[2]], default_name="SpaceToBatchND").outputs[0],
            None, None]


SPACE_TO_BATCH_ND = define(
    "SpaceToBatchND", "input: T, block_shape: Tblock_shape, paddings: Tpaddings -> output: T",
    doc="Zero-pads the spatial dims, then moves each block_shape block's offsets into the batch dim.",
    attrs={"T": Attr("type"), "Tblock_shape": Attr("type", dtypes.int32, allowed=INDEX),
           "Tpaddings": Attr("type", dtypes.int32, allowed=INDEX)},
    infer=_infer_space_batch(True, "paddings"), kernel=_space_to_batch, grad=_grad_space_to_batch, numerics=EXACT)

BATCH_TO_SPACE_ND = define(
    "BatchToSpaceND", "input: T, block_shape: Tblock_shape, crops: Tcrops -> output: T",
    doc="The inverse of SpaceToBatchND: batch blocks back into the spatial dims, then crops them.",
    attrs={"T": Attr("type"), "Tblock_shape": Attr("type", dtypes.int32, allowed=INDEX),
           "Tcrops": Attr("type", dtypes.int32, allowed=INDEX)},
    infer=_infer_space_batch(False, "crops"), kernel=_batch_to_space, grad=_grad_batch_to_space, numerics=EXACT)


# -- SpaceToDepth, DepthToSpace (NHWC) ------------------------------------------------------------

def _check_block(block_size, data_format):
    fmt = data_format.decode() if isinstance(data_format, bytes) else data_format
    if fmt != "NHWC":
        raise ValueError(f"data_format {fmt!r} is not supported, only NHWC; transpose the input to NHWC")
    if block_size < 2:
        raise ValueError(f"block_size is {block_size}; it must be at least 2")


def _depth_dims(dims, b, to_depth):
    n, h, w, c = dims
    if to_depth:
        for what, d in (("height", h), ("width", w)):
            if d is not None and d % b:
                raise ValueError(f"input {what} {d} is not a multiple of block_size {b}")
        return [n, None if h is None else h // b, None if w is None else w // b, None if c is None else c * b * b]
    if c is not None and c % (b * b):
        raise ValueError(f"input depth {c} is not a multiple of block_size^2 = {b * b}")
    return [n, None if h is None else h * b, None if w is None else w * b, None if c is None else c // (b * b)]


def _infer_depth(to_depth):
    def infer(ctx):
        x = ctx.shape(0)
        try:
            _check_block(ctx.attrs["block_size"], ctx.attrs["data_format"])
            if x.ndims not in (None, 4):
                raise ValueError(f"input must be 4-D [batch, height, width, channels], got shape {show(x)}")
            return [TensorShape(None if x.ndims is None else _depth_dims(x.dims, ctx.attrs["block_size"], to_depth))]
        except ValueError as e:
            raise ctx.error(str(e)) from None
    return infer


def _space_to_depth(input, *, block_size, data_format):  # noqa: A002 - TF's name
    x = np.asarray(input)
    _check_block(block_size, data_format)
    if x.ndim != 4:
        raise ValueError(f"input must be 4-D, got shape {show(x.shape)}")
    n, h, w, c = x.shape
    b = block_size
    out = _depth_dims(x.shape, b, True)
    check_size(out, x.dtype)
    return np.ascontiguousarray(x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)).reshape(out)


def _depth_to_space(input, *, block_size, data_format):  # noqa: A002 - TF's name
    x = np.asarray(input)
    _check_block(block_size, data_format)
    if x.ndim != 4:
        raise ValueError(f"input must be 4-D, got shape {show(x.shape)}")
    n, h, w, c = x.shape
    b = block_size
    out = _depth_dims(x.shape, b, False)
    check_size(out, x.dtype)
    return np.ascontiguousarray(x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)).reshape(out)


def _depth_attrs():
    return {"T": Attr("type"), "block_size": Attr("int"), "data_format": Attr("string", "NHWC")}


def _depth_grad(other):
    def grad(op, g):
        return [build(other, [g], default_name=other, attrs={"block_size": op.attrs["block_size"],
                                                             "data_format": op.attrs["data_format"]}).outputs[0]]
    return grad


SPACE_TO_DEPTH = define(
    "SpaceToDepth", "input: T -> output: T",
    doc="Moves each block_size x block_size spatial block into the channels (NHWC).",
    attrs=_depth_attrs(), infer=_infer_depth(True), kernel=_space_to_depth, grad=_depth_grad("DepthToSpace"),
    numerics=EXACT)

DEPTH_TO_SPACE = define(
    "DepthToSpace", "input: T -> output: T",
    doc="The inverse of SpaceToDepth: channels back into block_size x block_size spatial blocks (NHWC).",
    attrs=_depth_attrs(), infer=_infer_depth(False), kernel=_depth_to_space, grad=_depth_grad("SpaceToDepth"),
    numerics=EXACT)


# -- builders (tf.*) --------------------------------------------------------------------------------

def space_to_batch_nd(input, block_shape, paddings, name=None):  # noqa: A002 - TF's name
    return build("SpaceToBatchND", [convert_to_tensor(input), block_shape, paddings], name=name,
                 default_name="SpaceToBatchND").outputs[0]


def batch_to_space_nd(input, block_shape, crops, name=None):  # noqa: A002 - TF's name
    return build("BatchToSpaceND", [convert_to_tensor(input), block_shape, crops], name=name,
                 default_name="BatchToSpaceND").outputs[0]


def space_to_depth(input, block_size, data_format="NHWC", name=None):  # noqa: A002 - TF's name
    return build("SpaceToDepth", [convert_to_tensor(input)], name=name, default_name="SpaceToDepth",
                 attrs={"block_size": int(block_size), "data_format": data_format}).outputs[0]


def depth_to_space(input, block_size, data_format="NHWC", name=None):  # noqa: A002 - TF's name
    return build("DepthToSpace", [convert_to_tensor(input)], name=name, default_name="DepthToSpace",
                 attrs={"block_size": int(block_size), "data_format": data_format}).outputs[0]
