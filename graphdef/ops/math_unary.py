"""Unary elementwise math (Neg, Square, Sqrt, Exp, Log, ..., Relu), with its tf.* builders."""

import operator

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, elementwise_ulps
from graphdef.framework.shapes import show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, builder, define, same_as_input

ARITH = dtypes.NUMERIC
SIGNED = dtypes.SIGNED
FLOATS = dtypes.FLOATS
REAL = dtypes.NUMERIC

def _unary(type_name, kernel, doc, grad, allowed=ARITH, *, numerics):
    return define(type_name, "x: T -> y: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=same_as_input(), kernel=kernel,
                  grad=grad, numerics=numerics)


NEG = _unary("Neg", operator.neg, "-x.", lambda op, g: [negative(g)], SIGNED, numerics=EXACT)
SQUARE = _unary("Square", np.square, "x * x.", lambda op, g: [g * (2 * op.inputs[0])], numerics=EXACT)
SQRT = _unary("Sqrt", np.sqrt, "Square root; NaN below zero.", lambda op, g: [g / (2 * op.outputs[0])],
              FLOATS, numerics=EXACT)
EXP = _unary("Exp", np.exp, "e ** x.", lambda op, g: [g * op.outputs[0]], FLOATS, numerics=elementwise_ulps(4))
LOG = _unary("Log", np.log, "Natural log; -inf at 0, NaN below zero.", lambda op, g: [g / op.inputs[0]],
             FLOATS, numerics=elementwise_ulps(4))
LOG1P = _unary("Log1p", np.log1p, "log(1 + x), accurate near 0.", lambda op, g: [g / (1 + op.inputs[0])],
               FLOATS, numerics=elementwise_ulps(4))


def _erfc(x):
    """numpy has no erfc: scipy's ufunc, in float64 and then rounded to x's dtype (as graphrun-cc
    rounds std::erfc). np.vectorize(math.erfc) called Python per element: 49 of ConvNeXt-tiny's 190
    ms a run at 32x32, where its exact GELUs have 0.3M elements in all. Imported on first use: only
    a graph with Erfc pays scipy's import."""
    from scipy.special import erfc
    x = np.asarray(x)
    return np.asarray(erfc(x.astype(np.float64, copy=False))).astype(x.dtype, copy=False)


ERFC = _unary("Erfc", _erfc, "1 - erf(x) (Keras' exact gelu uses it).",
              lambda op, g: [g * (-2 / np.sqrt(np.pi)) * exp(-square(op.inputs[0]))], FLOATS,
              numerics=elementwise_ulps(4))
SIGN = _unary("Sign", np.sign, "-1, 0 or 1 by the sign of x (0 for 0).", NOT_DIFFERENTIABLE, SIGNED, numerics=EXACT)
ABS = _unary("Abs", np.abs, "|x|.", lambda op, g: [g * sign(op.inputs[0])], SIGNED, numerics=EXACT)
SIGMOID = _unary("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), "1 / (1 + exp(-x)).",
                 lambda op, g: [g * op.outputs[0] * (1 - op.outputs[0])], FLOATS, numerics=elementwise_ulps(4))


def _tanh(x, *, out=None):
    """np.tanh, into the donated input's array when the Session gives one (it does when nothing
    reads x afterwards, as in the tanh GELU): numpy's tanh gives the same bits in place."""
    return np.tanh(x, out=out)


TANH = _unary("Tanh", _tanh, "Hyperbolic tangent.",
              lambda op, g: [g * (1 - square(op.outputs[0]))], FLOATS, numerics=elementwise_ulps(4))
RSQRT = _unary("Rsqrt", lambda x: 1 / np.sqrt(x), "1 / sqrt(x); inf at 0, NaN below zero.",
               lambda op, g: [g * op.outputs[0] * op.outputs[0] * op.outputs[0] * -0.5], FLOATS,
               numerics=elementwise_ulps(2))

def _same_shapes(what, *arrays):
    shape = np.shape(arrays[0])
    for a in arrays[1:]:
        if np.shape(a) != shape:
            raise ValueError(f"{what} inputs must all have one shape, got {show(shape)} and {show(np.shape(a))}")


def _infer_same_shapes(ctx):
    shape = ctx.shape(0)
    for i in range(1, len(ctx.inputs)):
        if not shape.is_compatible_with(ctx.shape(i)):
            raise ctx.error(f"inputs must all have one shape, got {show(shape)} and {show(ctx.shape(i))}")
        shape = shape.merge_with(ctx.shape(i))
    return [shape]


_SAME_WIDTH_UINT = {4: np.uint32, 8: np.uint64, 2: np.uint16}


def _relu_grad(gradients, features):
    _same_shapes("ReluGrad", gradients, features)
    gradients = np.asarray(gradients)
    keep = np.asarray(features) > 0
    if gradients.dtype.kind != "f" or gradients.ndim == 0:
        return np.where(keep, gradients, np.zeros((), gradients.dtype))
    # select(keep, g, +0.0) by masking the bits: exact (a NaN where features <= 0 still gives 0,
    # unlike g * keep) and several times faster than np.where
    bits = _SAME_WIDTH_UINT[gradients.dtype.itemsize]
    mask = keep.astype(bits)
    np.negative(mask, out=mask)  # True -> all ones, False -> 0
    return (np.ascontiguousarray(gradients).view(bits) & mask).view(gradients.dtype)


RELU_GRAD = define(
    "ReluGrad", "gradients: T, features: T -> backprops: T",
    doc="The gradient of Relu: `gradients` where features > 0, else 0.",
    attrs={"T": Attr("type", allowed=REAL)}, infer=_infer_same_shapes, kernel=_relu_grad,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _relu(features, *, out=None):
    return np.maximum(features, 0, out=out)


RELU = define(
    "Relu", "features: T -> activations: T", doc="max(x, 0); NaN propagates.",
    attrs={"T": Attr("type", allowed=REAL)}, infer=same_as_input(), kernel=_relu,
    grad=lambda op, g: [build("ReluGrad", [g, op.inputs[0]], default_name="ReluGrad").outputs[0]],
    numerics=EXACT_BUT_ZERO_SIGN)


# -- builders -------------------------------------------------------------------------

negative = builder("Neg", "Neg", 1)
square = builder("Square", "Square", 1)
sqrt = builder("Sqrt", "Sqrt", 1)
exp = builder("Exp", "Exp", 1)
log = builder("Log", "Log", 1)
abs = builder("Abs", "Abs", 1)  # noqa: A001 - TF's name
sigmoid = builder("Sigmoid", "Sigmoid", 1)
tanh = builder("Tanh", "Tanh", 1)
relu = builder("Relu", "Relu", 1)
sign = builder("Sign", "Sign", 1)
log1p = builder("Log1p", "Log1p", 1)
erfc = builder("Erfc", "Erfc", 1)
rsqrt = builder("Rsqrt", "Rsqrt", 1)


# -- trigonometry, rounding, reciprocals and float classification ---------------------------------

def _reciprocal(x):
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return np.reciprocal(x)
    if np.any(x == 0):  # TF's Eigen kernel divides 1 by 0 (a trap); refused instead
        raise ValueError("integer reciprocal of 0")
    one = np.ones((), x.dtype)
    # 1 / x truncated toward zero: 1 for 1, -1 for -1, 0 for every other integer
    return np.where(x == 1, one, np.where(x == -1, -one, np.zeros((), x.dtype)))


def _reciprocal_grad(op, g):
    y = op.outputs[0]
    if not y.dtype.is_floating:
        return [None]
    return [negative(g) * y * y]  # TF's ReciprocalGrad: -dy * y * y


def _round(x):
    x = np.asarray(x)
    return np.rint(x) if x.dtype.kind == "f" else x.copy()  # np.rint: half to even, as TF


SIN = _unary("Sin", np.sin, "sin(x) in radians.", lambda op, g: [g * cos(op.inputs[0])], FLOATS,
             numerics=elementwise_ulps(4))
COS = _unary("Cos", np.cos, "cos(x) in radians.", lambda op, g: [negative(g) * sin(op.inputs[0])], FLOATS,
             numerics=elementwise_ulps(4))
# TF registers Floor, Ceil and Round with gradients that return None: nothing flows back
FLOOR = _unary("Floor", np.floor, "The largest integer not above x (-0.0 stays -0.0).", NOT_DIFFERENTIABLE, FLOATS,
               numerics=EXACT)
CEIL = _unary("Ceil", np.ceil, "The smallest integer not below x (-0.5 gives -0.0).", NOT_DIFFERENTIABLE, FLOATS,
              numerics=EXACT)
ROUND = _unary("Round", _round, "x rounded to the nearest integer, halves to even (banker's rounding); integers "
               "pass through.", NOT_DIFFERENTIABLE, SIGNED, numerics=EXACT)
# TF's float kernels use an approximate reciprocal refined by Newton steps (1 / 0.5 gives 1.9999999 in
# float32), so two correct implementations may differ by an ulp or two from IEEE's 1 / x
RECIPROCAL = _unary("Reciprocal", _reciprocal, "1 / x (for integers truncated toward zero, and 0 is an error).",
                    _reciprocal_grad, SIGNED, numerics=elementwise_ulps(2))
INV = _unary("Inv", _reciprocal, "TF 1.x's name for Reciprocal.", _reciprocal_grad, SIGNED,
             numerics=elementwise_ulps(2))


def _classify(type_name, test, doc):
    return define(type_name, "x: T -> y: bool", doc=doc, attrs={"T": Attr("type", allowed=FLOATS)},
                  infer=same_as_input(), kernel=lambda x: test(np.asarray(x)), grad=NOT_DIFFERENTIABLE,
                  numerics=EXACT)


IS_FINITE = _classify("IsFinite", np.isfinite, "True where x is neither inf nor NaN.")
IS_NAN = _classify("IsNan", np.isnan, "True where x is NaN.")
IS_INF = _classify("IsInf", np.isinf, "True where x is +inf or -inf.")

sin = builder("Sin", "Sin", 1)
cos = builder("Cos", "Cos", 1)
floor = builder("Floor", "Floor", 1)
ceil = builder("Ceil", "Ceil", 1)
round = builder("Round", "Round", 1)  # noqa: A001 - TF's name
reciprocal = builder("Reciprocal", "Reciprocal", 1)
is_finite = builder("IsFinite", "IsFinite", 1)
is_nan = builder("IsNan", "IsNan", 1)
is_inf = builder("IsInf", "IsInf", 1)
