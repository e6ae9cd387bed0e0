"""ResizeBilinear and ResizeNearestNeighbor (NHWC), with TF's coordinate rules worked in float32.

Output pixel i of a dim sized `in_size -> out_size` reads input coordinate
    legacy:             i * scale
    half_pixel_centers: (i + 0.5) * scale - 0.5    (bilinear)   (i + 0.5) * scale   (nearest)
with scale = (in - 1) / (out - 1) under align_corners (when out > 1), else in / out, all float32.
Nearest takes floor (round under align_corners) clamped to the image; bilinear blends the two
neighbours floor(x), ceil(x) (clamped) by x - floor(x), as top + (bottom - top) * dy of the
same in x. The gradients are TF's ops: ResizeBilinearGrad adds each output gradient, times its
four weights, back to the four input pixels it blended; ResizeNearestNeighborGrad adds it to the
one pixel it copied; both visit the output gradient in row-major order, as TF's CPU kernels do.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, convert_to_tensor, define
from graphdef.ops import array as array_ops
from graphdef.ops.strided_slice import strided_slice

F32 = np.float32
BILINEAR_TYPES = frozenset((dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.int64,
                            dtypes.float16, dtypes.float32, dtypes.float64))
NEAREST_TYPES = BILINEAR_TYPES
BILINEAR_GRAD_TYPES = frozenset((dtypes.float16, dtypes.float32, dtypes.float64))
NEAREST_GRAD_TYPES = frozenset((dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.float16, dtypes.float32,
                                dtypes.float64))


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


def _resized_shape(ctx, what):
    """Input 0 (`what`) with its height and width set by input 1, the [height, width] size."""
    x, s = ctx.shape(0), ctx.shape(1)
    if x.ndims not in (None, 4):
        raise ctx.error(f"{what} must be 4-D [batch, height, width, channels], got shape {show(x)}")
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


def _infer(ctx):
    return _resized_shape(ctx, "images")


def _flags(op):
    return {"align_corners": op.attrs["align_corners"], "half_pixel_centers": op.attrs["half_pixel_centers"]}


def _bilinear_grad(op, g):
    x = op.inputs[0]
    if x.dtype.base_dtype not in BILINEAR_GRAD_TYPES:  # TF's gradient has no integer kernel either
        return [None, None]
    return [build("ResizeBilinearGrad", [g, x], default_name="ResizeBilinearGrad", attrs=_flags(op)).outputs[0],
            None]


def _nearest_grad(op, g):
    x = op.inputs[0]
    if x.dtype.base_dtype not in NEAREST_GRAD_TYPES:
        return [None, None]
    dims = x.shape.dims
    if dims is not None and None not in dims[1:3]:
        size = convert_to_tensor(np.array(dims[1:3], np.int32), name="size")
    else:
        size = strided_slice(array_ops.shape_of(x, out_type=dtypes.int32), [1], [3], [1])
    return [build("ResizeNearestNeighborGrad", [g, size], default_name="ResizeNearestNeighborGrad",
                  attrs=_flags(op)).outputs[0], None]


def _check_grads(grads, size):
    if grads.ndim != 4:
        raise ValueError(f"grads must be 4-D [batch, height, width, channels], got shape {show(grads.shape)}")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"the original image {show(size)} has no pixels")
    check_size((grads.shape[0], size[0], size[1], grads.shape[3]), grads.dtype)


def _add_back(out, grads, rows, cols, wy=None, wx=None):
    """out[:, rows[i], cols[j]] += grads[:, i, j] (* wy[i] * wx[j], in float32 as TF), row-major."""
    n, h, w, c = grads.shape
    flat = out.reshape(n, -1, c)
    target = (rows[:, None] * out.shape[2] + cols[None, :]).ravel()
    values = grads
    if wy is not None:
        values = values * wy[None, :, None, None] * wx[None, None, :, None]
    np.add.at(flat, (slice(None), target), values.reshape(n, h * w, c).astype(out.dtype, copy=False))


def _resize_bilinear_grad(grads, original_image, *, align_corners, half_pixel_centers):
    g, x = np.asarray(grads, F32), np.asarray(original_image)
    if x.ndim != 4:
        raise ValueError(f"original_image must be 4-D [batch, height, width, channels], got shape {show(x.shape)}")
    _check_grads(g, x.shape[1:3])
    if g.shape[0] != x.shape[0] or g.shape[3] != x.shape[3]:
        raise ValueError(f"grads {show(g.shape)} and original_image {show(x.shape)} differ in batch or channels")
    out = np.zeros(x.shape, x.dtype)
    if g.size == 0 or g.shape[1] == 0 or g.shape[2] == 0:
        return out
    y0, y1, dy = bilinear_weights(x.shape[1], g.shape[1], align_corners, half_pixel_centers)
    x0, x1, dx = bilinear_weights(x.shape[2], g.shape[2], align_corners, half_pixel_centers)
    # TF adds the four corners of each grad pixel before the next pixel; four passes add the same
    # terms in another order, which the tolerance (a few ulps of the tensor) allows
    for rows, cols, wy, wx in ((y0, x0, 1 - dy, 1 - dx), (y0, x1, 1 - dy, dx), (y1, x0, dy, 1 - dx),
                               (y1, x1, dy, dx)):
        _add_back(out, g, rows, cols, wy, wx)
    return out


def _resize_nearest_grad(grads, size, *, align_corners, half_pixel_centers):
    g = np.asarray(grads)
    h, w = _size_value(size)
    _check_grads(g, (h, w))
    out = np.zeros((g.shape[0], h, w, g.shape[3]), g.dtype)
    if g.size:
        rows = nearest_indices(h, g.shape[1], align_corners, half_pixel_centers)
        cols = nearest_indices(w, g.shape[2], align_corners, half_pixel_centers)
        _add_back(out, g, rows, cols)
    return out


def _infer_bilinear_grad(ctx):
    g, x = ctx.shape(0), ctx.shape(1)
    for name, shape in (("grads", g), ("original_image", x)):
        if shape.ndims not in (None, 4):
            raise ctx.error(f"{name} must be 4-D [batch, height, width, channels], got shape {show(shape)}")
    return [x]


def _infer_nearest_grad(ctx):
    return _resized_shape(ctx, "grads")


_ATTRS = {"align_corners": Attr("bool", False), "half_pixel_centers": Attr("bool", False)}

RESIZE_NEAREST_NEIGHBOR = define(
    "ResizeNearestNeighbor", "images: T, size: int32 -> resized_images: T",
    doc="Resizes NHWC images to size [new_height, new_width], each output pixel copying its nearest input pixel.",
    attrs={"T": Attr("type", allowed=NEAREST_TYPES), **_ATTRS},
    infer=_infer, kernel=_resize_nearest, grad=_nearest_grad, numerics=EXACT)

RESIZE_BILINEAR = define(
    "ResizeBilinear", "images: T, size: int32 -> resized_images: float32",
    doc="Resizes NHWC images to size [new_height, new_width] by bilinear interpolation, in float32.",
    attrs={"T": Attr("type", allowed=BILINEAR_TYPES), **_ATTRS},
    infer=_infer, kernel=_resize_bilinear, grad=_bilinear_grad, numerics=tensor_ulps(4))

RESIZE_BILINEAR_GRAD = define(
    "ResizeBilinearGrad", "grads: float32, original_image: T -> output: T",
    doc="The gradient of ResizeBilinear: each output gradient times its four weights, added back to the "
        "input pixels it blended, in original_image's shape.",
    attrs={"T": Attr("type", allowed=BILINEAR_GRAD_TYPES), **_ATTRS},
    infer=_infer_bilinear_grad, kernel=_resize_bilinear_grad, grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(4))

RESIZE_NEAREST_NEIGHBOR_GRAD = define(
    "ResizeNearestNeighborGrad", "grads: T, size: int32 -> output: T",
    doc="The gradient of ResizeNearestNeighbor: each output gradient added back to the input pixel it "
        "copied, in an image of size [height, width].",
    attrs={"T": Attr("type", allowed=NEAREST_GRAD_TYPES), **_ATTRS},
    infer=_infer_nearest_grad, kernel=_resize_nearest_grad, grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(2))


def resize_nearest_neighbor(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """tf.compat.v1.image.resize_nearest_neighbor."""
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    return build("ResizeNearestNeighbor", [convert_to_tensor(images), size], name=name,
                 default_name="ResizeNearestNeighbor", attrs=attrs).outputs[0]


def resize_bilinear(images, size, align_corners=False, half_pixel_centers=False, name=None):
    """tf.compat.v1.image.resize_bilinear."""
    attrs = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    return build("ResizeBilinear", [convert_to_tensor(images), size], name=name, default_name="ResizeBilinear",
                 attrs=attrs).outputs[0]
