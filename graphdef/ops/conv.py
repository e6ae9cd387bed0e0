"""Convolution, NHWC only: Conv2D with its two backprops, DepthwiseConv2dNative and BiasAdd.

Kernels are one matrix product over an im2col patch matrix (or a few vectorised passes, one per
window offset), never a loop over pixels. float16 is computed in float32 and rounded once, as TF's
CPU kernels accumulate.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.framework.numerics import EXACT, in_working_dtype, tensor_ulps, working_dtype
from graphdef.framework.limits import check as check_size
from graphdef.ops.registry import Attr, build, check_dims_vector, constant_value, convert_to_tensor, define
from graphdef.ops.windows import (Window, col2im, depthwise_einsum, depthwise_sum, im2col, infer_window, padded_scratch,
                                  window_attrs)
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array as array_ops
from graphdef.ops import math as math_ops

# From this many channels (multiplier 1) one einsum over a strided view of every window beats the
# per-offset passes; at 32 channels it is slower (docs/performance.md, depthwise).
DEPTHWISE_EINSUM_CHANNELS = 64
CONV_TYPES = frozenset((dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32))
FLOATS = dtypes.FLOATS


def _window(attrs, kh, kw):
    return Window(kh, kw, attrs["strides"], attrs["padding"], attrs.get("dilations", (1, 1, 1, 1)),
                  attrs.get("explicit_paddings", ()), attrs["data_format"])


def _filter_dims(ctx, index):
    f = ctx.shape(index)
    if f.ndims not in (None, 4):
        raise ctx.error(f"filter must be 4-D [height, width, in, out], got shape {show(f)}")
    return f.dims or (None,) * 4


def _known_window(kh, kw):
    """The window when the filter size is known; else only the attrs are checked (size 1 stands in)."""
    return lambda ctx: _window(ctx.attrs, kh or 1, kw or 1)


def infer_conv2d(ctx):
    kh, kw, ci, co = _filter_dims(ctx, 1)
    window, n, oh, ow, c = infer_window(ctx, _known_window(kh, kw))
    if c is not None and ci is not None:
        try:
            _groups(c, ci, co)
        except ValueError as e:
            raise ctx.error(f"input {show(ctx.shape(0))} and filter {show(ctx.shape(1))}: {e}") from None
    if kh is None or kw is None:
        oh = ow = None
    return [TensorShape([n, oh, ow, co])]


def _groups(c, ci, co):
    """How many groups a Conv2D splits its channels into: the input's channels over the filter's in
    channels (TF's grouped convolution), each group with co / groups of the output channels."""
    if ci == c:
        return 1
    if ci == 0 or c == 0 or c % ci:
        raise ValueError(f"the input's {c} channels are not a multiple of the filter's {ci} in channels")
    groups = c // ci
    if co is not None and co % groups:
        raise ValueError(f"{groups} groups ({c} / {ci} channels) do not divide the filter's {co} out channels")
    return groups


def _check_filter_elements(f_shape, out_dims):
    """TF's Conv2D refuses a filter with a zero dimension rather than sum over nothing, unless its
    output is empty (DepthwiseConv2dNative sums over nothing: zeros)."""
    if 0 in f_shape and 0 not in out_dims:
        raise ValueError(f"the filter {show(f_shape)} has no elements: every dimension must be at least 1")


def _check_depth(x_shape, f_shape, what="filter"):
    if len(x_shape) != 4 or len(f_shape) != 4 or x_shape[3] != f_shape[2]:
        raise ValueError(f"input {show(x_shape)} and {what} {show(f_shape)} do not match: "
                         "need [N,H,W,C] and [KH,KW,C,out]")


def _backprop_groups(x_shape, f_shape, what):
    """The groups of a backprop (1 unless the filter's in channels divide the input's, as Conv2D groups)."""
    if len(x_shape) == 4 and len(f_shape) == 4 and x_shape[3] != f_shape[2]:
        return _groups(x_shape[3], f_shape[2], f_shape[3])
    _check_depth(x_shape, f_shape, what)
    return 1


def conv2d_kernel(x, filter, *, strides, padding, explicit_paddings, data_format, dilations):  # noqa: A002 - TF's name
    x, f = np.asarray(x), np.asarray(filter)
    groups = _groups(x.shape[3], f.shape[2], f.shape[3]) if x.ndim == 4 and f.ndim == 4 else 1
    if groups == 1:
        _check_depth(x.shape, f.shape)
    window = Window(f.shape[0], f.shape[1], strides, padding, dilations, explicit_paddings, data_format)
    geometry = window.geometry(x.shape[1], x.shape[2])
    out_dims = (x.shape[0], geometry[0][0], geometry[1][0], f.shape[3])
    _check_filter_elements(f.shape, out_dims)
    # the output's channels come from the filter and its H x W from the attrs: either may be huge
    check_size(out_dims, working_dtype(x.dtype))
    if groups > 1:  # each group's channels convolved by its slice of the filter
        ci, cog = f.shape[2], f.shape[3] // groups
        return np.concatenate([
            conv2d_kernel(x[..., g * ci:(g + 1) * ci], f[..., g * cog:(g + 1) * cog], strides=strides, padding=padding,
                          explicit_paddings=explicit_paddings, data_format=data_format, dilations=dilations)
            for g in range(groups)], axis=3)
    cols, weights = im2col(in_working_dtype(x), window, geometry), in_working_dtype(f).reshape(-1, f.shape[3])
    # one BLAS call, written straight into the output (an array of its own, so a fused kernel, or
    # the Session's BiasAdd and activation steps after it, may work in place)
    out = np.empty(out_dims, np.result_type(cols, weights))
    np.matmul(cols, weights, out=out.reshape(-1, f.shape[3]))
    return out.astype(x.dtype, copy=False)


def _conv_attrs(attrs):
    return {k: attrs[k] for k in ("strides", "padding", "explicit_paddings", "data_format", "dilations")}


def _conv2d_grad(op, g):
    x, f = op.inputs
    attrs = _conv_attrs(op.attrs)
    return [conv2d_backprop_input(_shape32(x), f, g, **attrs),
            conv2d_backprop_filter(x, _shape32(f), g, **attrs)]


def _shape32(t):
    return array_ops.shape_of(t, out_type=dtypes.int32)


CONV2D = define(
    "Conv2D", "input: T, filter: T -> output: T",
    doc="2-D convolution (cross-correlation) of NHWC input with a [KH, KW, in, out] filter; SAME pads "
        "the extra row/column at the bottom/right, as TF does.",
    attrs={"T": Attr("type", allowed=CONV_TYPES), "use_cudnn_on_gpu": Attr("bool", True), **window_attrs()},
    infer=infer_conv2d, kernel=conv2d_kernel, grad=_conv2d_grad, numerics=tensor_ulps(8))


# -- the two backprops: also the forward op of a transposed convolution --------------------------

def _sizes_shape(ctx, index):
    check_dims_vector(ctx, index, f"input {index} (sizes)")
    sizes = constant_value(ctx.inputs[index])
    if ctx.shape(index).ndims not in (None, 1) or (ctx.shape(index).ndims == 1 and ctx.shape(index).dims[0]
                                                   not in (None, 4)):
        raise ctx.error(f"input {index} must be a 4-vector of sizes, got shape {show(ctx.shape(index))}")
    if sizes is None:
        return None
    sizes = [int(v) for v in np.ravel(sizes)]
    if len(sizes) != 4 or min(sizes) < 0:
        raise ctx.error(f"sizes {sizes} must be 4 non-negative numbers")
    return sizes


def _check_backprop(ctx, x_dims, f_dims, g_index):
    """Both backprops: the gradient must have the shape Conv2D(x, filter) would give."""
    kh, kw, ci, co = f_dims
    window, n, oh, ow, c = _infer_window_of(ctx, x_dims, kh, kw)
    expected = TensorShape([n, oh if kh else None, ow if kw else None, co])
    g = ctx.shape(g_index)
    if c is not None and ci is not None:
        try:
            _groups(c, ci, co)
        except ValueError as e:
            raise ctx.error(f"input {show(x_dims)} and filter {show(f_dims)}: {e}") from None
    if not g.is_compatible_with(expected):
        raise ctx.error(f"out_backprop has shape {show(g)}, but Conv2D of input {show(x_dims)} with filter "
                        f"{show(f_dims)} gives {show(expected)}")


def _infer_window_of(ctx, x_dims, kh, kw):
    dims = x_dims if x_dims is not None else (None,) * 4
    try:
        window = _window(ctx.attrs, kh or 1, kw or 1)
        oh, ow = window.output_dims(dims[1], dims[2])
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(dims)})") from None
    return window, dims[0], oh, ow, dims[3]


def _infer_backprop_input(ctx):
    sizes = _sizes_shape(ctx, 0)
    f_dims = _filter_dims(ctx, 1)
    x_dims = sizes or [None, None, None, f_dims[2]]
    _check_backprop(ctx, x_dims, f_dims, 2)
    return [TensorShape(x_dims)]


def _infer_backprop_filter(ctx):
    sizes = _sizes_shape(ctx, 1)
    x = ctx.shape(0)
    if x.ndims not in (None, 4):
        raise ctx.error(f"input must be 4-D [batch, height, width, channels] (NHWC), got shape {show(x)}")
    g = ctx.shape(2)
    if g.ndims not in (None, 4):  # read for its channels below: a file may give it any rank
        raise ctx.error(f"out_backprop must be 4-D [batch, height, width, channels], got shape {show(g)}")
    # without filter_sizes the in channels are unknown: a grouped filter has fewer than the input
    f_dims = sizes or [None, None, None, g.dims[3] if g.dims else None]
    _check_backprop(ctx, x.dims, f_dims, 2)
    return [TensorShape(f_dims)]


def _check_gradient_shape(g, n, oh, ow, co):
    if g.shape != (n, oh, ow, co):
        raise ValueError(f"out_backprop has shape {show(g.shape)}, expected {show((n, oh, ow, co))}")


def _conv2d_backprop_input(input_sizes, filter, out_backprop, *, strides, padding,  # noqa: A002
                           explicit_paddings, data_format, dilations):
    sizes = tuple(int(v) for v in np.ravel(input_sizes))
    f, g = np.asarray(filter), np.asarray(out_backprop)
    groups = _backprop_groups(sizes, f.shape, "filter")
    window = Window(f.shape[0], f.shape[1], strides, padding, dilations, explicit_paddings, data_format)
    geometry = window.geometry(sizes[1], sizes[2])
    _check_gradient_shape(g, sizes[0], geometry[0][0], geometry[1][0], f.shape[3])
    # input_sizes is a value, and an empty out_backprop may stand for a patch matrix of any size
    check_size(sizes, in_working_dtype(g).dtype)
    check_size((sizes[0] * geometry[0][0] * geometry[1][0], f.shape[0] * f.shape[1] * sizes[3]),
               in_working_dtype(g).dtype, "patch matrix")
    if groups == 1:
        cols = in_working_dtype(g).reshape(-1, f.shape[3]) @ in_working_dtype(f).reshape(-1, f.shape[3]).T
    else:  # group k's patch columns (its ci channels of every tap) from its cog gradient channels alone
        taps, ci, cog = f.shape[0] * f.shape[1], f.shape[2], f.shape[3] // groups
        pixels = sizes[0] * geometry[0][0] * geometry[1][0]
        # [groups, pixels, taps*ci]
        per_group = (in_working_dtype(g).reshape(pixels, groups, cog).transpose(1, 0, 2)
                     @ in_working_dtype(f).reshape(taps * ci, groups, cog).transpose(1, 2, 0))
        cols = per_group.reshape(groups, pixels, taps, ci).transpose(1, 2, 0, 3).reshape(pixels, taps * groups * ci)
    return col2im(cols, window, geometry, sizes).astype(g.dtype, copy=False)


def _conv2d_backprop_filter(input, filter_sizes, out_backprop, *, strides, padding,  # noqa: A002
                            explicit_paddings, data_format, dilations):
    sizes = tuple(int(v) for v in np.ravel(filter_sizes))
    x, g = np.asarray(input), np.asarray(out_backprop)
    groups = _backprop_groups(x.shape, sizes, "filter_sizes")
    window = Window(sizes[0], sizes[1], strides, padding, dilations, explicit_paddings, data_format)
    geometry = window.geometry(x.shape[1], x.shape[2])
    _check_gradient_shape(g, x.shape[0], geometry[0][0], geometry[1][0], sizes[3])
    check_size(sizes, in_working_dtype(x).dtype)  # filter_sizes is a value
    patches = im2col(in_working_dtype(x), window, geometry)
    if groups == 1:
        out = patches.T @ in_working_dtype(g).reshape(-1, sizes[3])
    else:  # group k's filter slice from its ci input channels of every tap and its cog gradient channels
        taps, ci, cog = sizes[0] * sizes[1], sizes[2], sizes[3] // groups
        pixels = patches.shape[0]
        per_group = (patches.reshape(pixels, taps, groups, ci).transpose(2, 1, 3, 0).reshape(groups, taps * ci, pixels)
                     @ in_working_dtype(g).reshape(pixels, groups, cog).transpose(1, 0, 2))  # [groups, taps*ci, cog]
        out = per_group.reshape(groups, taps, ci, cog).transpose(1, 2, 0, 3)
    return out.reshape(sizes).astype(x.dtype, copy=False)


def _backprop_input_grad(op, g):
    sizes, f, dy = op.inputs
    attrs = _conv_attrs(op.attrs)
    return [None, conv2d_backprop_filter(g, _shape32(f), dy, **attrs), conv2d(g, f, **attrs)]


def _backprop_filter_grad(op, g):
    x, sizes, dy = op.inputs
    attrs = _conv_attrs(op.attrs)
    return [conv2d_backprop_input(_shape32(x), g, dy, **attrs), None, conv2d(x, g, **attrs)]


CONV2D_BACKPROP_INPUT = define(
    "Conv2DBackpropInput", "input_sizes: int32, filter: T, out_backprop: T -> output: T",
    doc="The gradient of Conv2D with respect to its input, of shape input_sizes (also a transposed convolution).",
    attrs={"T": Attr("type", allowed=CONV_TYPES), "use_cudnn_on_gpu": Attr("bool", True), **window_attrs()},
    infer=_infer_backprop_input, kernel=_conv2d_backprop_input, grad=_backprop_input_grad, numerics=tensor_ulps(8))

CONV2D_BACKPROP_FILTER = define(
    "Conv2DBackpropFilter", "input: T, filter_sizes: int32, out_backprop: T -> output: T",
    doc="The gradient of Conv2D with respect to its filter, of shape filter_sizes.",
    attrs={"T": Attr("type", allowed=FLOATS), "use_cudnn_on_gpu": Attr("bool", True), **window_attrs()},
    infer=_infer_backprop_filter, kernel=_conv2d_backprop_filter, grad=_backprop_filter_grad, numerics=tensor_ulps(8))


# -- depthwise ---------------------------------------------------------------------------------

def infer_depthwise(ctx):
    kh, kw, ci, m = _filter_dims(ctx, 1)
    window, n, oh, ow, c = infer_window(ctx, _known_window(kh, kw))
    if c is not None and ci is not None and c != ci:
        raise ctx.error(f"input {show(ctx.shape(0))} has {c} channels but filter {show(ctx.shape(1))} "
                        f"expects {ci}")
    if kh is None or kw is None:
        oh = ow = None
    c = c if c is not None else ci
    return [TensorShape([n, oh, ow, None if c is None or m is None else c * m])]


def depthwise_kernel(x, filter, *, strides, padding, explicit_paddings, data_format, dilations):  # noqa: A002
    x, f = np.asarray(x), np.asarray(filter)
    _check_depth(x.shape, f.shape)
    window = Window(f.shape[0], f.shape[1], strides, padding, dilations, explicit_paddings, data_format)
    (oh, top, bottom), (ow, left, right) = window.geometry(x.shape[1], x.shape[2])
    n, _, _, c = x.shape
    m = f.shape[3]
    check_size((n, oh, ow, c * m), working_dtype(x.dtype))  # m comes from the filter: it multiplies the input's size
    xp, fw = padded_scratch(in_working_dtype(x), top, bottom, left, right), in_working_dtype(f)
    # every element is written by the first offset's products (acc needs no zeros), unless
    # there is no offset at all: an empty filter, whose sum is 0
    acc = (np.empty if fw.size else np.zeros)((n, oh, ow, c, m), dtype=np.result_type(xp, fw))
    # every offset is visited (padding times an inf filter entry is NaN, as in TF), unless the
    # output is empty: an empty filter may still claim a window of 2^30 rows
    if acc.size and fw.size:
        if m == 1 and c >= DEPTHWISE_EINSUM_CHANNELS:
            depthwise_einsum(xp, fw, window, acc[..., 0])
        else:
            depthwise_sum(xp, fw, window, acc)
    return acc.reshape(n, oh, ow, c * m).astype(x.dtype, copy=False)


def _depthwise_grad(op, g):
    """Through the equivalent Conv2D with a block-diagonal filter, so no extra backprop ops are needed."""
    x, f = op.inputs
    if not f.shape.is_fully_defined():
        raise NotImplementedError(f"the gradient of DepthwiseConv2dNative '{op.name}' needs the filter's shape "
                                  f"known, got {show(f.shape)}")
    kh, kw, c, m = f.shape.dims
    mask = array_ops.constant(np.eye(c, dtype=f.dtype.np)[:, :, None], name="block_diagonal")  # [C, C, 1]
    full = array_ops.reshape(array_ops.reshape(f, [kh, kw, c, 1, m]) * mask, [kh, kw, c, c * m])
    attrs = _conv_attrs(op.attrs)
    dx = conv2d_backprop_input(_shape32(x), full, g, **attrs)
    dfull = conv2d_backprop_filter(x, [kh, kw, c, c * m], g, **attrs)
    df = math_ops.reduce_sum(array_ops.reshape(dfull, [kh, kw, c, c, m]) * mask, axis=3)
    return [dx, df]


DEPTHWISE_CONV2D_NATIVE = define(
    "DepthwiseConv2dNative", "input: T, filter: T -> output: T",
    doc="Per-channel 2-D convolution: filter [KH, KW, C, M] gives C*M output channels, channel c*M + m "
        "from input channel c.",
    attrs={"T": Attr("type", allowed=FLOATS), **window_attrs()},
    infer=infer_depthwise, kernel=depthwise_kernel, grad=_depthwise_grad, numerics=tensor_ulps(8))


# -- bias ----------------------------------------------------------------------------------------

def _infer_bias_add(ctx):
    value, bias = ctx.shape(0), ctx.shape(1)
    if ctx.attrs["data_format"] != "NHWC":
        raise ctx.error(f"data_format {ctx.attrs['data_format']!r} is not supported, only NHWC "
                        "(the bias is added along the last dim)")
    if value.ndims is not None and value.ndims < 2:
        raise ctx.error(f"value must be at least 2-D, got shape {show(value)}")
    if bias.ndims not in (None, 1):
        raise ctx.error(f"bias must be 1-D, got shape {show(bias)}")
    last = value.dims[-1] if value.dims else None
    size = bias.dims[0] if bias.dims else None
    if last is not None and size is not None and last != size:
        raise ctx.error(f"bias {show(bias)} must match the last dim of value {show(value)}")
    if value.dims is not None and last is None and size is not None:
        return [TensorShape(value.dims[:-1] + (size,))]
    return [value]


def _bias_add(value, bias, *, data_format, out=None):
    value, bias = np.asarray(value), np.asarray(bias)
    if value.ndim < 2 or bias.ndim != 1 or value.shape[-1] != bias.shape[0]:
        raise ValueError(f"bias {show(bias.shape)} must be 1-D and match the last dim of value "
                         f"{show(value.shape)} (at least 2-D)")
    if value.dtype != bias.dtype:
        return value + bias
    if value.ndim >= 3 and value.size and value.shape[-1] < 512 and value.flags.c_contiguous:
        # [.., W, C] + bias as rows of W*C against the bias tiled W times: the same sums, in runs
        # long enough for numpy's inner loop (C alone is often 16 or 32)
        run = value.shape[-2] * value.shape[-1]
        result = out if out is not None else np.empty_like(value)
        np.add(value.reshape(-1, run), np.tile(bias, value.shape[-2]), out=result.reshape(-1, run))
        return result
    return np.add(value, bias, out=out)


def _bias_add_grad(op, g):
    ndims = op.inputs[0].shape.ndims
    axes = list(range(ndims - 1)) if ndims is not None else array_ops.range_(0, array_ops.rank(g) - 1)
    return [g, math_ops.reduce_sum(g, axis=axes)]


BIAS_ADD = define(
    "BiasAdd", "value: T, bias: T -> output: T",
    doc="value + bias, the 1-D bias added along the last (channel) dim of a value of rank 2 or more.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "data_format": Attr("string", "NHWC")},
    infer=_infer_bias_add, kernel=_bias_add, grad=_bias_add_grad, numerics=EXACT)


def _infer_bias_add_grad(ctx):
    g = ctx.shape(0)
    if g.ndims is not None and g.ndims < 2:
        raise ctx.error(f"out_backprop must be at least 2-D, got shape {show(g)}")
    return [TensorShape([None if g.ndims is None else g.dims[-1]])]


def _bias_add_grad_kernel(out_backprop, *, data_format):
    g = np.asarray(out_backprop)
    if g.ndim < 2:
        raise ValueError(f"out_backprop must be at least 2-D, got shape {show(g.shape)}")
    return np.sum(g, axis=tuple(range(g.ndim - 1)), dtype=g.dtype)


BIAS_ADD_GRAD = define(
    "BiasAddGrad", "out_backprop: T -> output: T",
    doc="The gradient of BiasAdd for its bias: out_backprop summed over every dim but the last.",
    attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "data_format": Attr("string", "NHWC")},
    infer=_infer_bias_add_grad, kernel=_bias_add_grad_kernel,
    grad=lambda op, g: [_bias_grad_back(op, g)], numerics=tensor_ulps(8))


def _bias_grad_back(op, g):
    return array_ops.broadcast_to(g, array_ops.shape_of(op.inputs[0]))


# -- builders (tf.nn) -----------------------------------------------------------------------------

def spatial(value, name, channel_index=3):
    """TF's _get_sequence for 2-D ops: an int or 1-, 2- or 4-list -> the 4-list in NHWC order."""
    if value is None:
        return [1, 1, 1, 1]
    if isinstance(value, (int, np.integer)):
        value = [int(value)]
    value = [int(v) for v in value]
    if len(value) == 1:
        value = value * 2
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError(f"{name} must be an int or a list of 1, 2 or 4 ints, got {value}")


def padding_attrs(padding):
    """A padding string, or TF's explicit [[0, 0], [top, bottom], [left, right], [0, 0]]."""
    if isinstance(padding, (str, bytes)):
        padding = padding.decode() if isinstance(padding, bytes) else padding
        return {"padding": padding.upper(), "explicit_paddings": []}
    pairs = [[int(p) for p in pair] for pair in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"explicit padding must be 4 [before, after] pairs in NHWC order, got {padding}")
    return {"padding": "EXPLICIT", "explicit_paddings": [p for pair in pairs for p in pair]}


def _nhwc(data_format):
    if data_format not in (None, "NHWC"):
        raise ValueError(f"data_format {data_format!r} is not supported, only NHWC; transpose the input "
                         "to NHWC (tf.transpose(x, [0, 2, 3, 1])) and use NHWC")
    return "NHWC"


def conv2d(input=None, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=None, name=None, filters=None, explicit_paddings=None):
    """tf.nn.conv2d: NHWC input, [KH, KW, in, out] filter; strides/dilations an int or a 1-, 2- or 4-list."""
    filter = filters if filter is None else filter  # noqa: A001
    if padding is None:
        raise ValueError("conv2d: padding is required ('SAME', 'VALID' or explicit pairs)")
    attrs = {"strides": spatial(strides, "strides"), "dilations": spatial(dilations, "dilations"),
             "data_format": _nhwc(data_format), "use_cudnn_on_gpu": bool(use_cudnn_on_gpu), **padding_attrs(padding)}
    if explicit_paddings:  # the raw op's spelling, passed back by gradients
        attrs["explicit_paddings"] = list(explicit_paddings)
    return build("Conv2D", [input, filter], name=name, default_name="Conv2D", attrs=attrs).outputs[0]


def conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding, explicit_paddings=(),  # noqa: A002
                          data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The raw Conv2DBackpropInput (input_sizes as int32)."""
    attrs = {"strides": list(strides), "padding": padding, "explicit_paddings": list(explicit_paddings),
             "data_format": data_format, "dilations": list(dilations)}
    return build("Conv2DBackpropInput", [input_sizes, filter, out_backprop], name=name,
                 default_name="Conv2DBackpropInput", attrs=attrs).outputs[0]


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, explicit_paddings=(),  # noqa: A002
                           data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The raw Conv2DBackpropFilter (filter_sizes as int32)."""
    attrs = {"strides": list(strides), "padding": padding, "explicit_paddings": list(explicit_paddings),
             "data_format": data_format, "dilations": list(dilations)}
    return build("Conv2DBackpropFilter", [input, filter_sizes, out_backprop], name=name,
                 default_name="Conv2DBackpropFilter", attrs=attrs).outputs[0]


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """tf.nn.conv2d_transpose: Conv2DBackpropInput with the output's shape given; filter [KH, KW, out, in]."""
    value = input if value is None else value
    filter = filters if filter is None else filter  # noqa: A001
    with get_default_graph().name_scope(name or "conv2d_transpose") as scope:
        return conv2d_backprop_input(convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape"),
                                     filter, value, spatial(strides, "strides"), name=scope,
                                     dilations=spatial(dilations, "dilations"), data_format=_nhwc(data_format),
                                     **padding_attrs(padding))


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
                            name=None):
    """The raw DepthwiseConv2dNative: strides a 4-list (or int), filter [KH, KW, C, M]."""
    attrs = {"strides": spatial(strides, "strides"), "dilations": spatial(dilations, "dilations"),
             "data_format": _nhwc(data_format), **padding_attrs(padding)}
    return build("DepthwiseConv2dNative", [input, filter], name=name, default_name="DepthwiseConv2dNative",
                 attrs=attrs).outputs[0]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """tf.nn.depthwise_conv2d: one DepthwiseConv2dNative named 'depthwise'; `rate` becomes its dilations."""
    dilations = dilations if dilations is not None else rate
    with get_default_graph().name_scope(name or "depthwise") as scope:
        return depthwise_conv2d_native(input, filter, strides, padding, data_format or "NHWC",
                                       dilations, name=scope)


def bias_add(value, bias, data_format=None, name=None):
    """tf.nn.bias_add: bias (1-D) added along the last dim."""
    return build("BiasAdd", [value, bias], name=name, default_name="BiasAdd",
                 attrs={"data_format": _nhwc(data_format)}).outputs[0]
