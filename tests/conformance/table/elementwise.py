"""Conformance cases: elementwise ops, one row each."""

import numpy as np

import graphdef as tf
from graphdef.ops.registry import build

from .base import f32, f64, i8, i32, i64, u8, u16, u64, rounded, feed, INF, NAN, CASES, Case


# -- elementwise ops, one row each --------------------------------------------------------
# (case name, builder, x, y or None for unary ops, expected, what it shows)

def raw(op_type):
    """A builder for an op type that has no public builder of its own (TF 1.x's Add)."""
    return lambda *inputs, name: build(op_type, list(inputs), name=name).outputs[0]


X3 = f32(1.5, -2.0, 0.1)
Y3 = f32(0.5, 2.0, 0.2)

def _softsign32(x):
    with np.errstate(invalid="ignore"):  # -inf / inf
        return x / (np.float32(1) + np.abs(x))


ELEMENTWISE = [
    ("add_float32", raw("Add"), X3, Y3, rounded(np.add, np.float32, X3, Y3),
     "Add (TF 1.x's op type) of float32 vectors."),
    ("add_v2_float32", tf.add, X3, Y3, rounded(np.add, np.float32, X3, Y3),
     "AddV2 of float32 vectors; 0.1 + 0.2 rounds once to float32."),
    ("sub_float32", tf.subtract, X3, Y3, rounded(np.subtract, np.float32, X3, Y3),
     "Sub of float32 vectors."),
    ("mul_float32_negative_zero", tf.multiply, f32(1.5, -1.0, 0.1, 3.0), f32(-2.0, 0.0, 0.1, 0.5),
     rounded(np.multiply, np.float32, f32(1.5, -1.0, 0.1, 3.0), f32(-2.0, 0.0, 0.1, 0.5)),
     "Mul of float32 vectors; -1 * 0 is -0.0, bit for bit."),
    ("real_div_float32", tf.truediv, f32(1.0, -3.0, 7.0, 0.5), f32(3.0, 4.0, -0.1, 8.0),
     rounded(np.divide, np.float32, f32(1.0, -3.0, 7.0, 0.5), f32(3.0, 4.0, -0.1, 8.0)),
     "RealDiv of float32 vectors, correctly rounded."),
    ("real_div_float32_by_zero", tf.truediv, f32(1.0, -1.0, 0.0), f32(0.0, 0.0, 0.0),
     f32(INF, -INF, NAN),
     "RealDiv by zero: 1/0 = inf, -1/0 = -inf, 0/0 = nan (IEEE 754)."),
    ("real_div_float64", tf.truediv, f64(1.0, 2.0, -5.0), f64(3.0, 7.0, 0.25),
     f64(1.0, 2.0, -5.0) / f64(3.0, 7.0, 0.25),
     "RealDiv of float64 vectors."),
    ("add_float64", tf.add, f64(0.1, 1e308, -2.5), f64(0.2, 1e308, 2.5),
     f64(0.30000000000000004, INF, 0.0),
     "AddV2 in float64: 0.1 + 0.2 = 0.30000000000000004; 1e308 + 1e308 overflows to inf."),
    ("maximum_float32", tf.maximum, f32(1.0, -2.0, 3.5, -INF), f32(0.5, -1.0, 3.5, 2.0),
     f32(1.0, -1.0, 3.5, 2.0), "Maximum of float32 vectors, including -inf."),
    ("minimum_float32", tf.minimum, f32(1.0, -2.0, 3.5, INF), f32(0.5, -1.0, 3.5, 2.0),
     f32(0.5, -2.0, 3.5, 2.0), "Minimum of float32 vectors, including inf."),
    ("maximum_float32_nan", tf.maximum, f32(NAN, 1.0, NAN), f32(1.0, NAN, NAN),
     f32(NAN, NAN, NAN), "Maximum propagates NaN from either side."),
    ("minimum_float32_nan", tf.minimum, f32(NAN, 1.0, NAN), f32(1.0, NAN, NAN),
     f32(NAN, NAN, NAN), "Minimum propagates NaN from either side."),
    ("pow_float32", tf.pow, f32(2.0, 9.0, 4.0, 0.0, -2.0), f32(0.5, 0.5, -1.0, 0.0, 3.0),
     f32(np.sqrt(2.0), 3.0, 0.25, 1.0, -8.0),
     "Pow in float32: square roots, a negative power, 0 ** 0 = 1, a negative base to an integral power."),
    ("pow_int32", tf.pow, i32(2, 3, -2, 0, 7), i32(10, 3, 3, 0, 1),
     i32(1024, 27, -8, 1, 7), "Pow in int32, non-negative exponents."),
    ("add_int32_wraparound", tf.add, i32(2147483647, -2147483648, 5), i32(1, -1, -3),
     i32(-2147483648, 2147483647, 2), "AddV2 in int32 wraps around modulo 2**32."),
    ("sub_int32", tf.subtract, i32(5, -2147483648, 0), i32(7, 1, -3),
     i32(-2, 2147483647, 3), "Sub in int32; INT32_MIN - 1 wraps to INT32_MAX."),
    ("mul_int32_wraparound", tf.multiply, i32(65536, 46341, -3), i32(65536, 46341, 4),
     i32(0, -2147479015, -12), "Mul in int32 wraps: 65536**2 = 0, 46341**2 = -2147479015."),
    ("maximum_int32", tf.maximum, i32(3, -7, 0), i32(-3, -6, 0), i32(3, -6, 0),
     "Maximum of int32 vectors."),
    ("minimum_int64", tf.minimum, i64(2**40, -(2**40), 5), i64(2**41, -(2**41), 5),
     i64(2**40, -(2**41), 5), "Minimum of int64 vectors beyond the int32 range."),
    ("mul_int64", tf.multiply, i64(2**40, -3, 2**31), i64(3, 2**40, 2**31),
     i64(3 * 2**40, -3 * 2**40, 2**62), "Mul in int64, products beyond 2**32."),
    ("add_uint8_wraparound", tf.add, u8(250, 255, 1), u8(10, 1, 2), u8(4, 0, 3),
     "AddV2 in uint8 wraps modulo 256."),
    ("sub_uint8_wraparound", tf.subtract, u8(3, 0, 200), u8(5, 1, 100), u8(254, 255, 100),
     "Sub in uint8 wraps modulo 256."),
    ("maximum_uint8", tf.maximum, u8(0, 255, 7), u8(1, 254, 7), u8(1, 255, 7),
     "Maximum of uint8 vectors."),

    ("neg_float32", tf.negative, f32(1.5, -2.0, 0.0, INF), None, f32(-1.5, 2.0, -0.0, -INF),
     "Neg in float32; -(0.0) is -0.0."),
    ("neg_int32", tf.negative, i32(3, -4, 0), None, i32(-3, 4, 0), "Neg in int32."),
    ("square_float32", tf.square, f32(1.5, -3.0, 0.1), None,
     rounded(np.square, np.float32, f32(1.5, -3.0, 0.1)), "Square in float32."),
    ("square_int32", tf.square, i32(-3, 4, 0), None, i32(9, 16, 0), "Square in int32."),
    ("sqrt_float32", tf.sqrt, f32(4.0, 2.0, 0.0, -1.0, INF), None,
     rounded(np.sqrt, np.float32, f32(4.0, 2.0, 0.0, -1.0, INF)),
     "Sqrt in float32 is correctly rounded; sqrt(-1) is nan, sqrt(inf) is inf."),
    ("exp_float32", tf.exp, f32(0.0, 1.0, -1.5, 10.0, -INF, 100.0), None,
     rounded(np.exp, np.float32, f32(0.0, 1.0, -1.5, 10.0, -INF, 100.0)),
     "Exp in float32; exp(-inf) = 0 and exp(100) overflows to inf."),
    ("exp_float64", tf.exp, f64(0.0, 1.0, -1.5, 10.0), None, np.exp(f64(0.0, 1.0, -1.5, 10.0)),
     "Exp in float64."),
    ("log_float32", tf.log, f32(1.0, np.e, 0.5, 0.0, -1.0, INF), None,
     rounded(np.log, np.float32, f32(1.0, np.e, 0.5, 0.0, -1.0, INF)),
     "Log in float32; log(0) = -inf, log(-1) = nan, log(inf) = inf."),
    ("abs_float32", tf.abs, f32(-1.5, 2.0, -0.0, -INF), None, f32(1.5, 2.0, 0.0, INF),
     "Abs in float32; |-0.0| is +0.0."),
    ("abs_int32", tf.abs, i32(-3, 4, 0, -2147483647), None, i32(3, 4, 0, 2147483647), "Abs in int32."),
    ("sigmoid_float32", tf.sigmoid, f32(0.0, 1.0, -2.0, 5.0), None,
     rounded(lambda x: 1 / (1 + np.exp(-x)), np.float32, f32(0.0, 1.0, -2.0, 5.0)),
     "Sigmoid in float32; sigmoid(0) = 0.5."),
    ("tanh_float32", tf.tanh, f32(0.0, 0.5, -1.0, 3.0), None,
     rounded(np.tanh, np.float32, f32(0.0, 0.5, -1.0, 3.0)), "Tanh in float32."),
    ("relu_float32", tf.nn.relu, f32(-1.0, 0.0, 2.5, -INF, INF), None,
     f32(0.0, 0.0, 2.5, 0.0, INF), "Relu in float32."),
    ("relu_int32", tf.relu, i32(-5, 0, 7), None, i32(0, 0, 7), "Relu in int32."),
    ("softsign_float32", tf.nn.softsign, f32(-3.0, -0.0, 0.1, 1.0, 1e30, -INF, NAN), None,
     _softsign32(f32(-3.0, -0.0, 0.1, 1.0, 1e30, -INF, NAN)),
     "Softsign in float32: x / (1 + |x|), each step an IEEE float32 rounding; -0.0 stays -0.0, "
     "-inf / inf is nan."),
    ("sin_float32", tf.sin, f32(0.0, -0.0, 0.5, -1.5, 3.0, 100.0, INF, NAN), None,
     rounded(np.sin, np.float32, f32(0.0, -0.0, 0.5, -1.5, 3.0, 100.0, INF, NAN)),
     "Sin in float32; sin(-0.0) is -0.0, sin(inf) is nan."),
    ("cos_float64", tf.cos, f64(0.0, 0.5, -1.5, 3.0, 100.0, -INF), None,
     rounded(np.cos, np.float64, f64(0.0, 0.5, -1.5, 3.0, 100.0, -INF)),
     "Cos in float64; cos(-inf) is nan."),
    ("floor_float32", tf.floor, f32(1.5, -1.5, -0.5, -0.0, 2.0, -INF, NAN, 1e10), None,
     f32(1.0, -2.0, -1.0, -0.0, 2.0, -INF, NAN, 1e10), "Floor in float32; -0.0 stays -0.0."),
    ("ceil_float64", tf.ceil, f64(1.5, -1.5, -0.5, 0.2, INF), None, f64(2.0, -1.0, -0.0, 1.0, INF),
     "Ceil in float64; ceil(-0.5) is -0.0."),
    ("round_float32_half_to_even", tf.round, f32(0.5, 1.5, 2.5, -0.5, -2.5, 2.4, -2.6, -0.0, INF, NAN), None,
     f32(0.0, 2.0, 2.0, -0.0, -2.0, 2.0, -3.0, -0.0, INF, NAN),
     "Round in float32 takes halves to the even neighbour (banker's rounding), as TF; -0.5 gives -0.0."),
    ("reciprocal_float32", tf.reciprocal, f32(2.0, -4.0, 3.0, 0.0, -0.0, INF), None,
     rounded(np.reciprocal, np.float32, f32(2.0, -4.0, 3.0, 1.0, 1.0, INF)) * f32(1, 1, 1, INF, -INF, 1),
     "Reciprocal in float32, correctly rounded; 1/0 is inf, 1/-0.0 is -inf."),
    ("inv_float64", raw("Inv"), f64(0.5, -8.0), None, f64(2.0, -0.125), "Inv, TF 1.x's name for Reciprocal."),
    ("is_finite_float32", tf.is_finite, f32(1.0, INF, -INF, NAN, -0.0), None, np.array([1, 0, 0, 0, 1], bool),
     "IsFinite in float32."),
    ("is_nan_float64", tf.is_nan, f64(1.0, INF, NAN, -NAN), None, np.array([0, 0, 1, 1], bool), "IsNan in float64."),
    ("is_inf_float32", tf.is_inf, f32(1.0, INF, -INF, NAN), None, np.array([0, 1, 1, 0], bool),
     "IsInf in float32: both infinities."),
    ("selu_float32", tf.nn.selu, f32(-3.0, -1.0, -0.0, 0.0, 0.5, 2.0, -INF, NAN), None,
     np.where(f64(-3.0, -1.0, -0.0, 0.0, 0.5, 2.0, -INF, NAN) < 0,
              1.7580993408473768599402175208123 * np.expm1(f64(-3.0, -1.0, -0.0, 0.0, 0.5, 2.0, -INF, NAN)),
              1.0507009873554804934193349852946 * f64(-3.0, -1.0, -0.0, 0.0, 0.5, 2.0, -INF, NAN)).astype(np.float32),
     "Selu in float32: scale * alpha * (exp(x) - 1) below 0, scale * x above; -0.0 stays -0.0, -inf gives "
     "-scale * alpha."),
]


def _elementwise(name, fn, x, y, expected, doc):
    def make():
        if y is None:
            fn(feed("x", x), name="z")
            return {"x": x}, {"z:0": expected}
        fn(feed("x", x), feed("y", y), name="z")
        return {"x": x, "y": y}, {"z:0": expected}
    CASES.append(Case(name, doc, make))


for _row in ELEMENTWISE:
    _elementwise(*_row)


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------
# Integer rows wrap modulo 2**bits, as TF's kernels do; the float rows run one input through each
# unary op: signed zeros, inf and nan included.

SPECIALS = f32(-2.5, -0.0, 0.0, 0.3, 1.0, 4.0, INF, NAN)

MOVED_ELEMENTWISE = [
    ("mul_int8_wraparound", tf.multiply, i8(100, -128), i8(3, -1), i8(44, -128),
     "Mul in int8 wraps: 100 * 3 = 300 is 44, -128 * -1 = 128 is -128."),
    ("mul_uint16_wraparound", tf.multiply, u16(65535, 40000), u16(65535, 3), u16(1, 54464),
     "Mul in uint16 wraps modulo 65536: 65535**2 is 1, 120000 is 54464."),
    ("add_int64_wraparound", raw("Add"), i64(2**62, -(2**63)), i64(2**62, -1), i64(-(2**63), 2**63 - 1),
     "Add (TF 1.x's op type) in int64 wraps: 2**62 + 2**62 is INT64_MIN, INT64_MIN - 1 is INT64_MAX."),
    ("add_uint64_wraparound", tf.add, u64(2**64 - 1, 5), u64(2, 7), u64(1, 12),
     "AddV2 in uint64 wraps modulo 2**64."),
    ("neg_int8_wraparound", tf.negative, i8(-128, -3, 0, 127), None, i8(-128, 3, 0, -127),
     "Neg in int8: -INT8_MIN wraps to INT8_MIN."),
    ("abs_int8_wraparound", tf.abs, i8(-128, -3, 0, 127), None, i8(-128, 3, 0, 127),
     "Abs in int8: |INT8_MIN| wraps to INT8_MIN."),
    ("relu_int8", tf.nn.relu, i8(-128, -3, 0, 127), None, i8(0, 0, 0, 127), "Relu in int8."),
    ("square_int8_wraparound", tf.square, i8(16, -3), None, i8(0, 9), "Square in int8 wraps: 256 is 0."),
] + [
    (f"{name}_float32_specials", fn, SPECIALS, None, rounded(reference, np.float32, SPECIALS),
     f"{title} in float32 of -2.5, -0.0, 0.0, 0.3, 1, 4, inf and nan.")
    for name, title, fn, reference in [
        ("neg", "Neg", tf.negative, np.negative),
        ("square", "Square", tf.square, np.square),
        ("sqrt", "Sqrt", tf.sqrt, np.sqrt),
        ("abs", "Abs", tf.abs, np.abs),
        ("relu", "Relu", tf.nn.relu, lambda x: np.maximum(x, 0)),  # nan stays nan, -0.0 stays -0.0
        ("exp", "Exp", tf.exp, np.exp),
        ("log", "Log", tf.log, np.log),
        ("tanh", "Tanh", tf.tanh, np.tanh),
        ("sigmoid", "Sigmoid", tf.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    ]
]

for _row in MOVED_ELEMENTWISE:
    _elementwise(*_row)
