"""ResizeBilinear and ResizeNearestNeighbor (NHWC), with TF's coordinate rules worked in float32.

Output pixel i of a dim sized `in_size -> out_size` reads input coordinate
    legacy:             i * scale
    half_pixel_centers: (i + 0.5) * scale - 0.5    (bilinear)   (i + 0.5) * scale   (nearest)
with scale = (in - 1) / (out - 1) under align_corners (when out > 1), else in / out, all float32.
Nearest takes floor (round under align_corners) clamped to the image; bilinear blends the two
neighbours floor(x), ceil(x) (clamped) by x - floor(x), as top + (bottom - top) * dy of the
same in x. A resize is separable, so each gradient is two Einsums with constant interpolation
matrices (static sizes needed), and no ResizeBilinearGrad kernel is needed anywhere.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, constant_value, convert_to_tensor, define
from graphdef.ops import math as math_ops

F32 = np.float32
BILINEAR_TYPES = frozenset((dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.int64,
                            dtypes.float16, dtypes.float32, dtypes.float64))
NEAREST_TYPES = BILINEAR_TYPES


def _scale(in_size, out_size, align_corners):
    if align_corners and out_size > 1:
        return F32(in_size - 1) / F32(out_size - 1)
    return F32(in_size) / F32(out_size)


def nearest_indices(in_size, out_size, align_corners, half_pixel_centers):
    """The input index each output index copies."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=F32)
    x = (i + F32(0.5)) * scale if half_pixel_centers else i * scale
    index = np.floor(x)
    if align_corners:  # TF's roundf: half away from zero (x >= 0 here), without the error of floor(x + 0.5)
        index = index + (x - index >= F32(0.5))
    index = np.minimum(index.astype(np.int64), in_size - 1)
    return np.maximum(index, 0)


def bilinear_weights(in_size, out_size, align_corners, half_pixel_centers):
    """(lower, upper, lerp) per output index: input indices and the float32 weight of `upper`."""
    scale = _scale(in_size, out_size, align_corners)
    i = np.arange(out_size, dtype=F32)
    x = (i + F32(0.5)) * scale - F32(0.5) if half_pixel_centers else i * scale
    floor = np.floor(x)
    lower = np.maximum(floor, F32(0)).astype(np.int64)
    upper = np.minimum(np.ceil(x).astype(np.int64), in_size - 1)
    return lower, upper, (x - floor).astype(F32)


def _size_value(size):
    size = np.asarray(size)
    if size.shape != (2,):
        raise ValueError(f"size must be a 1-D tensor of 2 elements [new_height, new_width], got shape "
                         f"{show(size.shape)}")
    h, w = int(size[0]), int(size[1])
    if h <= 0 or w <= 0:
        raise ValueError(f"size {[h, w]} must be positive")
    return h, w


def _check_images(x):
    if x.ndim != 4:
        raise ValueError(f"images must be 4-D [batch, height, width, channels], got shape {show(x.shape)}")
    if x.shape[1] <= 0 or x.shape[2] <= 0:
        raise ValueError(f"images {show(x.shape)} have no pixels to resize from")


def _resize_nearest(images, size, *, align_corners, half_pixel_centers):
    x = np.asarray(images)
    _check_images(x)
    h, w = _size_value(size)
    check_size((x.shape[0], h, w, x.shape[3]), x.dtype)
    rows = nearest_indices(x.shape[1], h, align_corners, half_pixel_centers)
    cols = nearest_indices(x.shape[2], w, align_corners, half_pixel_centers)
    return x[:, rows][:, :, cols]


def _resize_bilinear(images, size, *, align_corners, half_pixel_centers):
    x = np.asarray(images)
    _check_images(x)
    h, w = _size_value(size)
    check_size((x.shape[0], h, w, x.shape[3]), F32)
    x = x.astype(F32, copy=False)
    y0, y1, dy = bilinear_weights(x.shape[1], h, align_corners, half_pixel_centers)
    x0, x1, dx = bilinear_weights(x.shape[2], w, align_corners, half_pixel_centers)
    dx = dx[None, None, :, None]
    top_left, top_right = x[:, y0][:, :, x0], x[:, y0][:, :, x1]
    bottom_left, bottom_right = x[:, y1][:, :, x0], x[:, y1][:, :, x1]
    top = top_left + (top_right - top_left) * dx
    bottom = bottom_left + (bottom_right - bottom_left) * dx
    return top + (bottom - top) * dy[None, :, None, None]


def _infer(ctx):
    x, s = ctx.shape(0), ctx.shape(1)
    if x.ndims not in (None, 4):
        raise ctx.error(f"images must be 4-D [batch, height, width, channels], got shape {show(x)}")
    if s.ndims not in (None, 1) or (s.ndims == 1 and s.dims[0] not in (None, 2)):
        raise ctx.error(f"size must be a 1-D tensor of 2 elements, got shape {show(s)}")
    dims = x.dims or (None,) * 4
    value = constant_value(ctx.inputs[1])
    h = w = None
    if value is not None:
        try:
            h, w = _size_value(value)
        except ValueError as e:
            raise ctx.error(str(e)) from None
    return [TensorShape([dims[0], h, w, dims[3]])]


def _matrix(in_size, out_size, op):
    """The [out, in] interpolation matrix of one dim, in float64 from the op's float32 weights."""
    a = op.attrs
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if op.type == "ResizeNearestNeighbor":
        m[rows, nearest_indices(in_size, out_size, a["align_corners"], a["half_pixel_centers"])] = 1
        return m
    lower, upper, lerp = bilinear_weights(in_size, out_size, a["align_corners"], a["half_pixel_centers"])
    np.add.at(m, (rows, lower), 1 - lerp.astype(np.float64))
    np.add.at(m, (rows, upper), lerp.astype(np.float64))
    return m


def _grad(op, g):
    x = op.inputs[0]
    dims, out = x.shape.dims, op.outputs[0].shape.dims
    if dims is None or None in dims[1:3] or out is None or None in out[1:3]:
        raise ValueError(f"no gradient for '{op.name}' ({op.type}): its input {show(x.shape)} and output "
                         f"{show(op.outputs[0].shape)} heights and widths must be known when the graph is built")
    if not x.dtype.is_floating:
        return [None, None]
    gw = math_ops.cast(g, x.dtype)
    rows = convert_to_tensor(_matrix(dims[1], out[1], op).astype(x.dtype.np), name="rows")
    cols = convert_to_tensor(_matrix(dims[2], out[2], op).astype(x.dtype.np), name="cols")
    gx = build("Einsum", [[gw, rows]], default_name="Einsum", attrs={"equation": "nawc,ah->nhwc"}).outputs[0]
    gx = build("Einsum", [[gx, cols]], default_name="Einsum", attrs={"equation": "nhbc,bw->nhwc"}).outputs[0]
    return [gx, None]


_ATTRS = {"align_corners": Attr("bool", False), "half_pixel_centers": Attr("bool", False)}

RESIZE_NEAREST_NEIGHBOR = define(
    "ResizeNearestNeighbor", "images: T, size: int32 -> resized_images: T",
    doc="Resizes NHWC images to size [new_height, new_width], each output pixel copying its nearest input pixel.",
    attrs={"T": Attr("type", allowed=NEAREST_TYPES), **_ATTRS},
    infer=_infer, kernel=_resize_nearest, grad=_grad, numerics=EXACT)

RESIZE_BILINEAR = define(
    "ResizeBilinear", "images: T, size: int32 -> resized_images: float32",
    doc="Resizes NHWC images to size [new_height, new_width] by bilinear interpolation, in float32.",
    attrs={"T": Attr("type", allowed=BILINEAR_TYPES), **_ATTRS},
    infer=_infer, kernel=_resize_bilinear, grad=_grad, numerics=tensor_ulps(4))


def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """tf.compat.v1.image.resize_nearest_neighbor."""
    return build("ResizeNearestNeighbor", [convert_to_tensor(images), size], name=name,
                 default_name="ResizeNearestNeighbor",
                 attrs={"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}).outputs[0]


def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """tf.compat.v1.image.resize_bilinear."""
    return build("ResizeBilinear", [convert_to_tensor(images), size], name=name, default_name="ResizeBilinear",
                 attrs={"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}).outputs[0]
