"""FusedBatchNorm, V2 and V3 (NHWC), computed as TF's CPU kernel computes it, and tf.nn's batch-norm builders.

Statistics and the affine part run in U (float32) even for float16 x, as in TF. Its gradient is
composed from ordinary ops, so no FusedBatchNormGradV3 kernel is needed anywhere.
"""

import functools

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import get_default_graph
from graphdef.framework.numerics import tensor_ulps
from graphdef.ops.registry import Attr, build, convert_to_tensor, define
from graphdef.framework.shapes import show
from graphdef.ops import array as array_ops
from graphdef.ops import conv as conv_ops
from graphdef.ops import math as math_ops

_AXES = (0, 1, 2)


def _infer(ctx):
    x = ctx.shape(0)
    if ctx.attrs["data_format"] != "NHWC":
        raise ctx.error(f"data_format {ctx.attrs['data_format']!r} is not supported, only NHWC; "
                        "transpose the input to NHWC")
    if x.ndims not in (None, 4):
        raise ctx.error(f"x must be 4-D [batch, height, width, channels] (NHWC), got shape {show(x)}")
    depth = x.dims[3] if x.dims else None
    names = ("scale", "offset", "mean", "variance")
    optional = ctx.attrs["is_training"] and ctx.attrs["exponential_avg_factor"] == 1.0
    for i, what in enumerate(names, start=1):
        s = ctx.shape(i)
        if s.ndims not in (None, 1):
            raise ctx.error(f"{what} must be 1-D, got shape {show(s)}")
        size = s.dims[0] if s.dims else None
        if optional and i >= 3 and size == 0:  # training ignores them: TF passes empty tensors
            continue
        if size is not None and depth is not None and size != depth:
            raise ctx.error(f"{what} has shape {show(s)} but x {show(x)} has {depth} channels")
        depth = depth if depth is not None else size
    return [x, [depth], [depth], [depth], [depth], [0]]


def _fused_batch_norm(x, scale, offset, mean, variance, *, epsilon, exponential_avg_factor, data_format,
                      is_training):
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D (NHWC), got shape {show(x.shape)}")
    u = np.asarray(scale).dtype.type
    xw = x.astype(u, copy=False)
    depth = x.shape[3]
    for what, v in (("scale", scale), ("offset", offset)):
        if np.shape(v) != (depth,):
            raise ValueError(f"{what} has shape {show(np.shape(v))}, expected [{depth}]")
    eps = u(epsilon)
    empty = np.zeros(0, u)
    if not is_training:
        for what, v in (("mean", mean), ("variance", variance)):
            if np.shape(v) != (depth,):
                raise ValueError(f"{what} has shape {show(np.shape(v))}, expected [{depth}]")
        factor = scale / np.sqrt(variance + eps)
        y = (xw - mean) * factor + offset
        return y.astype(x.dtype, copy=False), mean, variance, mean, variance, empty
    count = x.size // depth if depth else 0
    # TF multiplies by 1/n in U rather than dividing, and centres before squaring
    inv_count = u(1) / u(count) if count else u(np.nan)
    batch_mean = xw.sum(axis=_AXES, dtype=u) * inv_count
    centred = xw - batch_mean
    batch_var = np.square(centred).sum(axis=_AXES, dtype=u) * inv_count
    y = centred * (scale / np.sqrt(batch_var + eps)) + offset
    adjust = u(count) / u(max(count - 1, 1))  # the variance reported for moving averages is unbiased
    f = u(exponential_avg_factor)
    if f == 1:
        running_mean, running_var = batch_mean, batch_var * adjust
    else:
        for what, v in (("mean", mean), ("variance", variance)):
            if np.shape(v) != (depth,):
                raise ValueError(f"{what} has shape {show(np.shape(v))}, expected [{depth}] "
                                 "(exponential_avg_factor != 1 updates it)")
        running_mean = (u(1) - f) * mean + f * batch_mean
        running_var = (u(1) - f) * variance + (f * adjust) * batch_var
    return y.astype(x.dtype, copy=False), running_mean, running_var, batch_mean, batch_var, empty


def _grad(op, g, *unused):
    """dy -> dx, dscale, doffset (and, at inference, dmean and dvariance), built from ordinary ops."""
    x, scale, offset, mean, variance = op.inputs
    u = scale.dtype
    xw, gw = math_ops.cast(x, u), math_ops.cast(g, u)
    eps = convert_to_tensor(np.asarray(op.attrs["epsilon"], u.np), name="epsilon")
    sum_g = math_ops.reduce_sum(gw, axis=list(_AXES))
    if not op.attrs["is_training"]:
        inv = math_ops.rsqrt(variance + eps)
        centred = xw - mean
        sum_gc = math_ops.reduce_sum(gw * centred, axis=list(_AXES))
        dx = gw * (scale * inv)
        return [math_ops.cast(dx, x.dtype), sum_gc * inv, sum_g, -sum_g * scale * inv,
                sum_gc * scale * (-0.5) * inv * math_ops.square(inv)]
    inv = math_ops.rsqrt(op.outputs[4] + eps)          # the biased batch variance
    normalized = (xw - op.outputs[3]) * inv   # the batch mean
    sum_gn = math_ops.reduce_sum(gw * normalized, axis=list(_AXES))
    count = _per_channel_count(x)
    dx = (scale * inv) * (gw - sum_g / count - normalized * (sum_gn / count))
    return [math_ops.cast(dx, x.dtype), sum_gn, sum_g, None, None]


def _per_channel_count(x):
    dims = x.shape.dims
    if dims is not None and None not in dims[:3]:
        return float(dims[0] * dims[1] * dims[2])
    return math_ops.cast(math_ops.reduce_prod(array_ops.shape_of(x)[:3]), dtypes.float32)


FUSED_BATCH_NORM_V3 = define(
    "FusedBatchNormV3",
    "x: T, scale: U, offset: U, mean: U, variance: U -> y: T, batch_mean: U, batch_variance: U, "
    "reserve_space_1: U, reserve_space_2: U, reserve_space_3: U",
    doc="Batch normalization over the channel (last) dim: with is_training the batch's statistics "
        "(the variance output is unbiased), else the given mean and variance.",
    attrs={"T": Attr("type", allowed=frozenset((dtypes.float16, dtypes.float32))),
           "U": Attr("type", allowed=frozenset((dtypes.float32,))),
           "epsilon": Attr("float", 0.0001), "exponential_avg_factor": Attr("float", 1.0),
           "data_format": Attr("string", "NHWC"), "is_training": Attr("bool", True)},
    infer=_infer, kernel=_fused_batch_norm, grad=_grad, numerics=tensor_ulps(8))


def _first_five(fn):
    """V1 and V2 are V3 without reserve_space_3: the same statistics, one output fewer."""
    @functools.wraps(fn)  # keeps fn's signature: the registry reads the attrs a kernel takes from it
    def wrapped(*args, **kwargs):
        return fn(*args, **kwargs)[:5]
    return wrapped


_OLDER_ATTRS = {k: v for k, v in FUSED_BATCH_NORM_V3.attrs.items() if k not in ("T", "U")}

FUSED_BATCH_NORM_V2 = define(
    "FusedBatchNormV2",
    "x: T, scale: U, offset: U, mean: U, variance: U -> y: T, batch_mean: U, batch_variance: U, "
    "reserve_space_1: U, reserve_space_2: U",
    doc="FusedBatchNormV3 as TF 1.x graphs before it wrote it: the same outputs but reserve_space_3.",
    attrs={"T": FUSED_BATCH_NORM_V3.attrs["T"], "U": FUSED_BATCH_NORM_V3.attrs["U"], **_OLDER_ATTRS},
    infer=_first_five(_infer), kernel=_first_five(_fused_batch_norm), grad=_grad, numerics=tensor_ulps(8))

FUSED_BATCH_NORM = define(
    "FusedBatchNorm",
    "x: T, scale: T, offset: T, mean: T, variance: T -> y: T, batch_mean: T, batch_variance: T, "
    "reserve_space_1: T, reserve_space_2: T",
    doc="FusedBatchNormV2 of TF <= 1.13 graphs: float32 only, every tensor of one dtype.",
    attrs={"T": Attr("type", allowed=frozenset((dtypes.float32,))), **_OLDER_ATTRS},
    infer=_first_five(_infer), kernel=_first_five(_fused_batch_norm), grad=_grad, numerics=tensor_ulps(8))


# -- builders (tf.nn) ----------------------------------------------------------------------------

def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """tf.nn.fused_batch_norm -> (y, running or batch mean, running or batch variance), NHWC."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError("fused_batch_norm: mean and variance are needed when is_training is False or "
                         "exponential_avg_factor != 1.0")
    x = convert_to_tensor(x)
    mean = convert_to_tensor([] if mean is None else mean, dtype=dtypes.float32)
    variance = convert_to_tensor([] if variance is None else variance, dtype=dtypes.float32)
    epsilon = max(float(epsilon), 1.001e-5)  # TF raises small values to cuDNN's minimum, on every device
    y, running_mean, running_var, *_ = build(
        "FusedBatchNormV3", [x, scale, offset, mean, variance], name=name, default_name="FusedBatchNormV3",
        attrs={"epsilon": epsilon, "exponential_avg_factor": float(exponential_avg_factor),
               "data_format": conv_ops._nhwc(data_format), "is_training": bool(is_training),
               "U": dtypes.float32}).outputs
    return y, running_mean, running_var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """tf.nn.batch_normalization, composed as TF composes it: x * inv + (offset - mean * inv)."""
    with get_default_graph().name_scope(name or "batchnorm"):
        x = convert_to_tensor(x)
        inv = math_ops.rsqrt(convert_to_tensor(variance, dtype=x.dtype) + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        mean = convert_to_tensor(mean, dtype=x.dtype)
        shift = offset - mean * inv if offset is not None else -mean * inv
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(shift, x.dtype)
