"""The activations beyond Relu: Relu6, Elu, LeakyRelu, Softplus, with TF's exact formulas.

Their gradients are composed from comparisons and selects rather than TF's *Grad ops, so every
runtime has fewer kernels to carry.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, elementwise_ulps, tensor_ulps
from graphdef.ops.registry import Attr, build, define, same_as_input
from graphdef.ops.registry import convert_to_tensor
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops
from graphdef.ops import math as math_ops

REAL = dtypes.NUMERIC
FLOATS = dtypes.FLOATS

# the builders tf.nn exports (graphdef/nn.py takes this list, so a new activation is one file)
__all__ = ["elu", "leaky_relu", "relu6", "selu", "softplus", "softsign"]


def _zero_where_not(keep, g):
    return compare_ops.select_v2(keep, g, array_ops.zeros_like(g))


def _relu6(features, *, out=None):
    low = np.maximum(features, 0, out=out)  # NaN propagates, as TF's
    # the second pass in place on the first's result (a scalar when the input is 0-d)
    return np.minimum(low, 6, out=low if type(low) is np.ndarray else None)


def _relu6_grad(op, g):
    x = op.inputs[0]
    return [_zero_where_not(compare_ops.logical_and(compare_ops.greater(x, 0), compare_ops.less(x, 6)), g)]


def _elu(features):
    x = np.asarray(features)
    return np.where(x < 0, np.exp(x) - 1, x)  # exp - 1 rather than expm1: TF's formula, so -0.0 stays -0.0


def _elu_grad(op, g):
    y = op.outputs[0]
    return [compare_ops.select_v2(compare_ops.less(y, 0), g * (y + 1), g)]


# TF's constants, each rounded once to the features' dtype; scale * alpha is one constant, not a product
SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123


def _selu(features):
    x = np.asarray(features)
    scale, scale_alpha = x.dtype.type(SELU_SCALE), x.dtype.type(SELU_SCALE_ALPHA)
    return np.where(x < 0, scale_alpha * (np.exp(x) - 1), scale * x)  # exp - 1 as TF, not expm1


def _selu_grad(op, g):
    y = op.outputs[0]
    scale, scale_alpha = (np.asarray(c, y.dtype.np) for c in (SELU_SCALE, SELU_SCALE_ALPHA))
    return [compare_ops.select_v2(compare_ops.less(y, 0), g * (y + scale_alpha), g * scale)]


def _leaky_relu(features, *, alpha):
    x = np.asarray(features)
    # the attr is a float32 on the wire; using that value keeps built and loaded graphs (and TF) equal
    return np.where(x > 0, x, x * np.float32(alpha).astype(x.dtype))


def _leaky_relu_grad(op, g):
    x = op.inputs[0]
    alpha = np.float32(op.attrs["alpha"]).astype(x.dtype.np)
    return [compare_ops.select_v2(compare_ops.greater(x, 0), g, g * alpha)]


def _softplus(features):
    x = np.asarray(features)
    # TF's thresholds: beyond them softplus is x (or exp(x)) to within the type's epsilon
    threshold = np.log(np.finfo(x.dtype).eps).astype(x.dtype) + x.dtype.type(2)
    e = np.exp(x)
    return np.where(x > -threshold, x, np.where(x < threshold, e, np.log1p(e)))


def _softplus_grad(op, g):
    return [g * math_ops.sigmoid(op.inputs[0])]


def _softsign(features):
    x = np.asarray(features)
    return x / (x.dtype.type(1) + np.abs(x))


def _softsign_grad(op, g):
    return [g / math_ops.square(1 + math_ops.abs(op.inputs[0]))]


RELU6 = define(
    "Relu6", "features: T -> activations: T", doc="min(max(x, 0), 6); NaN propagates.",
    attrs={"T": Attr("type", allowed=REAL)}, infer=same_as_input(), kernel=_relu6, grad=_relu6_grad,
    numerics=EXACT_BUT_ZERO_SIGN)

ELU = define(
    "Elu", "features: T -> activations: T", doc="exp(x) - 1 where x < 0, else x.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=same_as_input(), kernel=_elu, grad=_elu_grad,
    numerics=tensor_ulps(4))

SELU = define(
    "Selu", "features: T -> activations: T", doc="scale * x where x >= 0, else scale * alpha * (exp(x) - 1).",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=same_as_input(), kernel=_selu, grad=_selu_grad,
    numerics=tensor_ulps(4))

LEAKY_RELU = define(
    "LeakyRelu", "features: T -> activations: T", doc="x where x > 0, else alpha * x.",
    attrs={"alpha": Attr("float", 0.2), "T": Attr("type", dtypes.float32, FLOATS)},
    infer=same_as_input(), kernel=_leaky_relu, grad=_leaky_relu_grad, numerics=EXACT)

SOFTPLUS = define(
    "Softplus", "features: T -> activations: T", doc="log(1 + exp(x)), computed without overflow.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=same_as_input(), kernel=_softplus, grad=_softplus_grad,
    numerics=elementwise_ulps(4))

SOFTSIGN = define(
    "Softsign", "features: T -> activations: T",
    doc="x / (1 + |x|): an IEEE sum, then an IEEE division, as TF computes it.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=same_as_input(), kernel=_softsign, grad=_softsign_grad,
    numerics=EXACT)


# -- builders (tf.nn) ----------------------------------------------------------------------------

def relu6(features, name=None):
    return build("Relu6", [features], name=name, default_name="Relu6").outputs[0]


def elu(features, name=None):
    return build("Elu", [features], name=name, default_name="Elu").outputs[0]


def selu(features, name=None):
    return build("Selu", [features], name=name, default_name="Selu").outputs[0]


def leaky_relu(features, alpha=0.2, name=None):
    """tf.nn.leaky_relu: integer features are cast to float32 first, as TF does."""
    features = convert_to_tensor(features)
    if features.dtype.is_integer:
        features = math_ops.cast(features, dtypes.float32)
    return build("LeakyRelu", [features], name=name, default_name="LeakyRelu",
                 attrs={"alpha": float(alpha)}).outputs[0]


def softplus(features, name=None):
    return build("Softplus", [features], name=name, default_name="Softplus").outputs[0]


def softsign(features, name=None):
    return build("Softsign", [features], name=name, default_name="Softsign").outputs[0]
