"""Pooling, NHWC only: MaxPool and AvgPool with the gradient ops TF emits for them.

Each kernel makes one vectorised pass per window offset (KH * KW passes over the output),
never a loop over pixels.
"""

import functools

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT_BUT_ZERO_SIGN, in_working_dtype, tensor_ulps, working_dtype
from graphdef.ops.registry import Attr, NOT_DIFFERENTIABLE, build, check_dims_vector, constant_value, define
from graphdef.ops.windows import Window, infer_window, padded
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops
from graphdef.ops import conv as conv_ops

MAX_POOL_TYPES = dtypes.NUMERIC - {dtypes.uint32, dtypes.uint64}  # TF's MaxPool has no 32/64-bit unsigned kernel
FLOATS = dtypes.FLOATS


def _pool_window(ksize, strides, padding, data_format, explicit_paddings=()):
    ksize = [int(k) for k in ksize]
    if len(ksize) != 4 or ksize[0] != 1 or ksize[3] != 1 or min(ksize) < 1:
        raise ValueError(f"ksize {ksize} must be [1, height, width, 1]: pooling over the batch or "
                         "channel dims is not supported")
    return Window(ksize[1], ksize[2], strides, padding, (1, 1, 1, 1), explicit_paddings, data_format)


def _window_of(attrs):
    return _pool_window(attrs["ksize"], attrs["strides"], attrs["padding"], attrs["data_format"],
                        attrs.get("explicit_paddings", ()))


def _pool_attrs(explicit):
    attrs = {"ksize": Attr("list(int)"), "strides": Attr("list(int)"), "padding": Attr("string"),
             "data_format": Attr("string", "NHWC")}
    if explicit:
        attrs["explicit_paddings"] = Attr("list(int)", ())
    return attrs


def _infer_pool(ctx):
    _, n, oh, ow, c = infer_window(ctx, lambda ctx: _window_of(ctx.attrs))
    return [TensorShape([n, oh, ow, c])]


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _setup(x, window):
    if x.ndim != 4:
        raise ValueError(f"input must be 4-D (NHWC), got shape {show(x.shape)}")
    return window.geometry(x.shape[1], x.shape[2])


def _max_pool(input, *, ksize, strides, padding, explicit_paddings, data_format):  # noqa: A002 - TF's name
    x = np.asarray(input)
    window = _pool_window(ksize, strides, padding, data_format, explicit_paddings)
    (oh, top, bottom), (ow, left, right) = _setup(x, window)
    # TF starts every window at the lowest finite value and skips NaN, so a window of only NaN
    # or -inf gives the lowest finite value; padding never wins
    check_size((x.shape[0], oh, ow, x.shape[3]), x.dtype)
    lowest = _lowest(x.dtype)
    xp = padded(x, top, bottom, left, right, lowest)
    out = np.full((x.shape[0], oh, ow, x.shape[3]), lowest, dtype=x.dtype)
    if out.size:  # an empty output needs no pass, however many offsets a huge window has
        # padding alone never changes the max (fmax with the lowest value), so its offsets are skipped
        for _, _, rows, cols in window.offsets(oh, ow, (top, x.shape[1], left, x.shape[2])):
            np.fmax(out, xp[:, rows, cols, :], out=out)
    return out


def _in_bounds(window, oh, ow, size_h, size_w, top, left):
    """For each window offset, which output positions read a real (unpadded) input element: [OH, OW]."""
    rows_h = np.arange(oh) * window.sh - top
    cols_w = np.arange(ow) * window.sw - left
    for i, j, _, _ in window.offsets(oh, ow, (top, size_h, left, size_w)):
        r = rows_h + i * window.dh
        c = cols_w + j * window.dw
        yield ((r >= 0) & (r < size_h))[:, None] & ((c >= 0) & (c < size_w))[None, :]


def _max_pool_grad(orig_input, orig_output, grad, *, ksize, strides, padding, explicit_paddings, data_format):
    x, g = np.asarray(orig_input), np.asarray(grad)
    window = _pool_window(ksize, strides, padding, data_format, explicit_paddings)
    (oh, top, bottom), (ow, left, right) = _setup(x, window)
    n, h, w, c = x.shape
    if g.shape != (n, oh, ow, c):
        raise ValueError(f"grad has shape {show(g.shape)}, expected the pooled shape {show((n, oh, ow, c))}")
    xp = padded(x, top, bottom, left, right)
    # the same offsets as _in_bounds gives: those reaching the real input (the rest are never taken)
    offsets = list(window.offsets(oh, ow, (top, h, left, w))) if g.size else []
    # TF's CPU kernel: the first real element of a window is taken, then replaced only by a
    # strictly larger one, so ties go to the first in row-major order and a NaN first stays
    best = np.zeros(g.shape, x.dtype)
    arg = np.full(g.shape, -1, np.int64)
    for k, ((_, _, rows, cols), valid) in enumerate(zip(offsets, _in_bounds(window, oh, ow, h, w, top, left))):
        v = xp[:, rows, cols, :]
        take = valid[None, :, :, None] & ((arg < 0) | (best < v))
        best = np.where(take, v, best)
        arg = np.where(take, k, arg)
    out = np.zeros(xp.shape, g.dtype)
    zero = np.zeros((), g.dtype)
    for k, (_, _, rows, cols) in enumerate(offsets):
        out[:, rows, cols, :] += np.where(arg == k, g, zero)
    return out[:, top:top + h, left:left + w, :]


def _counts(window, oh, ow, h, w, top, left, dtype):
    """How many real input elements each window covers, [1, OH, OW, 1] in `dtype` (fewer at a SAME border)."""
    return _cached_counts(window.kh, window.kw, window.sh, window.sw, oh, ow, h, w, top, left, np.dtype(dtype))


@functools.lru_cache(maxsize=256)
def _cached_counts(kh, kw, sh, sw, oh, ow, h, w, top, left, dtype):
    # the same geometry recurs on every run of a model, so the counts are made once
    total = np.zeros((oh, ow), np.int64)
    if not (oh and ow):  # no windows: nothing to count (a window wider than the input under VALID)
        return total.astype(dtype)[None, :, :, None]
    for valid in _in_bounds(Window(kh, kw, [1, sh, sw, 1], "VALID"), oh, ow, h, w, top, left):
        total += valid
    counts = total.astype(dtype)[None, :, :, None]
    counts.flags.writeable = False
    return counts


def _avg_pool(value, *, ksize, strides, padding, data_format):
    x = np.asarray(value)
    window = _pool_window(ksize, strides, padding, data_format)
    (oh, top, bottom), (ow, left, right) = _setup(x, window)
    xp = padded(in_working_dtype(x), top, bottom, left, right)
    total = np.zeros((x.shape[0], oh, ow, x.shape[3]), xp.dtype)
    if not total.size:  # an empty [0, H, W, C] input may still claim OH x OW counts of any size
        return total.astype(x.dtype, copy=False)
    # padding adds +0.0, which changes no sum: only offsets reaching the input are summed
    for _, _, rows, cols in window.offsets(oh, ow, (top, x.shape[1], left, x.shape[2])):
        total += xp[:, rows, cols, :]
    return (total / _counts(window, oh, ow, x.shape[1], x.shape[2], top, left, xp.dtype)).astype(x.dtype, copy=False)


def _avg_pool_grad(orig_input_shape, grad, *, ksize, strides, padding, data_format):
    shape = tuple(int(d) for d in np.ravel(orig_input_shape))
    g = np.asarray(grad)
    if len(shape) != 4:
        raise ValueError(f"orig_input_shape must have 4 entries, got {list(shape)}")
    window = _pool_window(ksize, strides, padding, data_format)
    n, h, w, c = shape
    (oh, top, bottom), (ow, left, right) = window.geometry(h, w)
    if g.shape != (n, oh, ow, c):
        raise ValueError(f"grad has shape {show(g.shape)}, expected the pooled shape {show((n, oh, ow, c))}")
    check_size((n, h + top + bottom, w + left + right, c), working_dtype(g.dtype))  # before the window loops
    if not g.size:  # nothing to spread; orig_input_shape may still claim OH x OW counts of any size
        return np.zeros(shape, g.dtype)
    share = in_working_dtype(g) / _counts(window, oh, ow, h, w, top, left, working_dtype(g.dtype))
    out = np.zeros((n, h + top + bottom, w + left + right, c), share.dtype)
    if out.size:  # an offset reaching only padding adds where the crop below drops
        for _, _, rows, cols in window.offsets(oh, ow, (top, h, left, w)):
            out[:, rows, cols, :] += share
    return out[:, top:top + h, left:left + w, :].astype(g.dtype, copy=False)


def _infer_max_pool_grad(ctx):
    pooled = _infer_pool(ctx)[0]
    for i, what in ((1, "orig_output"), (2, "grad")):
        if not ctx.shape(i).is_compatible_with(pooled):
            raise ctx.error(f"{what} has shape {show(ctx.shape(i))}, but pooling input {show(ctx.shape(0))} "
                            f"gives {show(pooled)}")
    return [ctx.shape(0)]


def _infer_avg_pool_grad(ctx):
    check_dims_vector(ctx, 0, "orig_input_shape")
    sizes = constant_value(ctx.inputs[0])
    if sizes is None:
        g = ctx.shape(1)
        four = g.ndims == 4  # any other rank is refused below, once the sizes are known
        return [TensorShape([g.dims[0] if four else None, None, None, g.dims[3] if four else None])]
    sizes = [int(d) for d in np.ravel(sizes)]
    if len(sizes) != 4 or min(sizes) < 0:
        raise ctx.error(f"orig_input_shape {sizes} must be 4 non-negative sizes")
    try:
        oh, ow = _window_of(ctx.attrs).output_dims(sizes[1], sizes[2])
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(sizes)})") from None
    pooled = TensorShape([sizes[0], oh, ow, sizes[3]])
    if not ctx.shape(1).is_compatible_with(pooled):
        raise ctx.error(f"grad has shape {show(ctx.shape(1))}, but pooling input {show(sizes)} gives {show(pooled)}")
    return [TensorShape(sizes)]


def _attrs_of(op, explicit):
    keys = ("ksize", "strides", "padding", "data_format") + (("explicit_paddings",) if explicit else ())
    return {k: op.attrs[k] for k in keys}


MAX_POOL = define(
    "MaxPool", "input: T -> output: T",
    doc="The max over each window of an NHWC input; padding never wins, NaN is skipped.",
    attrs={"T": Attr("type", dtypes.float32, MAX_POOL_TYPES), **_pool_attrs(explicit=True)},
    infer=_infer_pool, kernel=_max_pool,
    grad=lambda op, g: [build("MaxPoolGrad", [op.inputs[0], op.outputs[0], g], default_name="MaxPoolGrad",
                              attrs=_attrs_of(op, explicit=True)).outputs[0]], numerics=EXACT_BUT_ZERO_SIGN)

MAX_POOL_GRAD = define(
    "MaxPoolGrad", "orig_input: T, orig_output: T, grad: T -> output: T",
    doc="The gradient of MaxPool: each window's gradient goes to its max (the first, on ties).",
    attrs={"T": Attr("type", dtypes.float32, dtypes.NUMERIC), **_pool_attrs(explicit=True)},
    # as for ReluGrad, second derivatives through it are not built
    infer=_infer_max_pool_grad, kernel=_max_pool_grad, grad=NOT_DIFFERENTIABLE, numerics=tensor_ulps(4))

AVG_POOL = define(
    "AvgPool", "value: T -> output: T",
    doc="The mean over each window of an NHWC input; SAME windows at the border average only real elements.",
    attrs={"T": Attr("type", allowed=FLOATS), **_pool_attrs(explicit=False)},
    infer=_infer_pool, kernel=_avg_pool,
    grad=lambda op, g: [avg_pool_grad(_shape32(op.inputs[0]), g, **_attrs_of(op, explicit=False))],
    numerics=tensor_ulps(8))

AVG_POOL_GRAD = define(
    "AvgPoolGrad", "orig_input_shape: int32, grad: T -> output: T",
    doc="The gradient of AvgPool: each window's gradient shared equally among the real elements it covers.",
    attrs={"T": Attr("type", allowed=FLOATS), **_pool_attrs(explicit=False)},
    infer=_infer_avg_pool_grad, kernel=_avg_pool_grad,
    grad=lambda op, g: [None, _pool("AvgPool", g, **_attrs_of(op, explicit=False))], numerics=tensor_ulps(8))


def _shape32(t):
    return array_ops.shape_of(t, out_type=dtypes.int32)


# -- builders (tf.nn) ----------------------------------------------------------------------------

def _pool(op_type, value, ksize, strides, padding, data_format="NHWC", name=None, explicit_paddings=None):
    attrs = {"ksize": conv_ops.spatial(ksize, "ksize"), "strides": conv_ops.spatial(strides, "strides"),
             "data_format": conv_ops._nhwc(data_format), **conv_ops.padding_attrs(padding)}
    if op_type == "AvgPool":
        if attrs.pop("explicit_paddings"):
            raise ValueError("avg_pool: explicit padding is not supported by AvgPool; use 'SAME' or 'VALID'")
    elif explicit_paddings:
        attrs["explicit_paddings"] = list(explicit_paddings)
    return build(op_type, [value], name=name, default_name=op_type, attrs=attrs).outputs[0]


def max_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """tf.nn.max_pool: ksize/strides an int or a 1-, 2- or 4-list; padding 'SAME', 'VALID' or explicit pairs."""
    return _pool("MaxPool", input if value is None else value, ksize, strides, padding, data_format, name)


def avg_pool(value=None, ksize=None, strides=None, padding=None, data_format="NHWC", name=None,
             input=None):  # noqa: A002
    """tf.nn.avg_pool: ksize/strides an int or a 1-, 2- or 4-list; padding 'SAME' or 'VALID'."""
    return _pool("AvgPool", input if value is None else value, ksize, strides, padding, data_format, name)


max_pool2d = max_pool
avg_pool2d = avg_pool


def avg_pool_grad(orig_input_shape, grad, ksize, strides, padding, data_format="NHWC", name=None):
    return build("AvgPoolGrad", [orig_input_shape, grad], name=name, default_name="AvgPoolGrad",
                 attrs={"ksize": list(ksize), "strides": list(strides), "padding": padding,
                        "data_format": data_format}).outputs[0]
