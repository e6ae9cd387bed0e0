"""The conformance table: small graphs, their feeds, and what every runtime must answer.

Each case builds its graph with graphdef's public API into a fresh default graph and
returns `(feeds, expected)`: placeholder name -> ndarray, and fetched tensor name ->
ndarray. Expected values are literals, or plain numpy worked in float64 and rounded
once, so they come from an oracle independent of the kernels under test. Nothing here
runs a Session.

No case states a tolerance: each fetched tensor gets the one the numerics policy gives
the ops that made it (graphdef/framework/numerics.py, declared with each op), written to case.json
by the generator. Exact ops are compared bit for bit.

Regenerate the committed files after editing: .venv/bin/python -m tests.conformance.generate
"""

from dataclasses import dataclass, field

import numpy as np

import graphdef as tf
from graphdef.ops.registry import build


@dataclass(frozen=True)
class Case:
    name: str
    doc: str
    make: object                    # () -> (feeds, expected); builds into the default graph
    skip: dict = field(default_factory=dict)  # runtime -> written reason


CASES = []


def case(name, doc, skip=None):
    def register(make):
        CASES.append(Case(name, doc, make, skip=dict(skip or {})))
        return make
    return register


def f32(*v):
    return np.array(v, np.float32)


def f64(*v):
    return np.array(v, np.float64)


def i32(*v):
    return np.array(v, np.int32)


def i64(*v):
    return np.array(v, np.int64)


def u8(*v):
    return np.array(v, np.uint8)


def rounded(fn, dtype, *args):
    """`fn` worked in float64, rounded once to `dtype`: correctly rounded for + - * / sqrt."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*(np.asarray(a, np.float64) for a in args))).astype(dtype)


def feed(name, value, shape=None):
    """A placeholder of `value`'s dtype; its static shape is `value`'s unless given."""
    return tf.placeholder(tf.as_dtype(value.dtype), value.shape if shape is None else shape, name=name)


# -- elementwise ops, one row each --------------------------------------------------------
# (case name, builder, x, y or None for unary ops, expected, what it shows)

def raw(op_type):
    """A builder for an op type that has no public builder of its own (TF 1.x's Add)."""
    return lambda *inputs, name: build(op_type, list(inputs), name=name).outputs[0]


INF, NAN = np.inf, np.nan
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


# -- sources, pass-throughs and control flow ----------------------------------------------

@case("const_only", "A graph of Consts only, no feeds: a float32 scalar and an int32 matrix.")
def _():
    tf.constant(2.5, name="s")
    tf.constant([[1, 2], [3, 4]], name="m")
    return {}, {"s:0": np.float32(2.5), "m:0": i32([1, 2], [3, 4])}


@case("seed_divide", "The seed graph: (15 * 5) / (15 + 5) = 3.75; int32 true division runs in float64.")
def _():
    a = tf.Constant(15, name="a")
    b = tf.Constant(5, name="b")
    prod = tf.multiply(a, b, name="prod")
    total = tf.add(a, b, name="sum")
    tf.divide(prod, total, name="Divide")
    return {}, {"Divide:0": np.float64(3.75), "prod:0": np.int32(75), "sum:0": np.int32(20)}


@case("placeholder_identity", "Identity of a fed placeholder; fetching the fed placeholder itself returns the feed.")
def _():
    x = f32([1.0, -2.0], [0.5, 8.0])
    tf.identity(feed("x", x), name="y")
    return {"x": x}, {"y:0": x, "x:0": x}


@case("scalars", "Scalar placeholders (shape []) fed 0-d values: x * y + x.")
def _():
    x, y = np.float32(1.5), np.float32(-4.0)
    px, py = feed("x", np.asarray(x)), feed("y", np.asarray(y))
    tf.add(tf.multiply(px, py), px, name="z")
    return {"x": np.asarray(x), "y": np.asarray(y)}, {"z:0": np.float32(-4.5)}


@case("placeholder_with_default_unfed", "PlaceholderWithDefault not fed: its default value flows.")
def _():
    p = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [None], name="p")
    tf.identity(p, name="y")
    return {}, {"y:0": f32(1.0, 2.0, 3.0)}


@case("placeholder_with_default_fed", "PlaceholderWithDefault fed with a value of another length than its default.")
def _():
    p = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [None], name="p")
    tf.identity(p, name="y")
    fed = f32(7.0, -8.0)
    return {"p": fed}, {"y:0": fed}


@case("stop_gradient", "StopGradient passes its input through unchanged.")
def _():
    x = i64(-(2**40), 3)
    tf.stop_gradient(feed("x", x), name="y")
    return {"x": x}, {"y:0": x}


@case("noop_control_dependency", "A NoOp as a control input: the fetch still computes x + 1.")
def _():
    x = f32(1.0, 2.0)
    px = feed("x", x)
    done = tf.no_op(name="first")
    with tf.control_dependencies([done]):
        tf.add(px, tf.constant(1.0), name="y")
    return {"x": x}, {"y:0": f32(2.0, 3.0)}


# -- variables: one run proves the state logic through control dependencies --------------

@case("variable_assign_add", "VariableV2 initialised by its Assign (a control input), then AssignAdd; fetch the sum.")
def _():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.assign_add(v, tf.constant([10.0, 20.0]), name="y")
    return {}, {"y:0": f32(11.0, 22.0)}


@case("variable_assign_sub", "An int32 VariableV2 initialised, then AssignSub of a fed value; fetch the difference.")
def _():
    v = tf.Variable(tf.constant([5, 5, -2147483648]), name="v")
    d = i32(1, 7, 1)
    # The placeholder stays outside the block: TensorFlow loses the ordering when a fed
    # placeholder carries a control input, and reports the variable uninitialised.
    pd = feed("d", d)
    with tf.control_dependencies([v.initializer]):
        tf.assign_sub(v, pd, name="y")
    return {"d": d}, {"y:0": i32(4, -2, 2147483647)}


@case("variable_chain", "Initialise, Assign a new value, AssignAdd, AssignSub, then read: each step a control input of the next.")
def _():
    v = tf.Variable(tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="v")
    with tf.control_dependencies([v.initializer]):
        set_ = tf.assign(v, tf.constant([[10.0, 20.0], [30.0, 40.0]]), name="set")
    with tf.control_dependencies([set_]):
        inc = tf.assign_add(v, tf.constant([[0.5, 0.5], [0.5, 0.5]]), name="inc")
    with tf.control_dependencies([inc]):
        dec = tf.assign_sub(v, tf.constant([[1.0, 2.0], [3.0, 4.0]]), name="dec")
    with tf.control_dependencies([dec]):
        # Read the VariableV2 ref itself: `v` would be the snapshot v/read, which has no
        # control inputs and may run before the chain (in TF 1.x too).
        tf.identity(v.op.outputs[0], name="final")
    return {}, {"final:0": f32([9.5, 18.5], [27.5, 36.5])}


# -- broadcasting and empty dims -----------------------------------------------------------

@case("add_broadcast_rank3_vector", "AddV2 of [2,1,3] and [3] broadcasts to [2,1,3].")
def _():
    x = f32([[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]])
    y = f32(10.0, 20.0, 30.0)
    tf.add(feed("x", x), feed("y", y), name="z")
    return {"x": x, "y": y}, {"z:0": f32([[11.0, 22.0, 33.0]], [[14.0, 25.0, 36.0]])}


@case("mul_broadcast_both_sides", "Mul of [2,1,3] and [2,1] broadcasts both sides to [2,2,3].")
def _():
    x = i32([[1, 2, 3]], [[4, 5, 6]])
    y = i32([10], [-1])
    tf.multiply(feed("x", x), feed("y", y), name="z")
    expected = i32([[10, 20, 30], [-1, -2, -3]], [[40, 50, 60], [-4, -5, -6]])
    return {"x": x, "y": y}, {"z:0": expected}


@case("sub_scalar_broadcast", "Sub of a scalar and a [2,2] matrix broadcasts the scalar.")
def _():
    y = f32([1.0, 2.0], [3.0, 4.5])
    tf.subtract(tf.constant(1.0), feed("y", y), name="z")
    return {"y": y}, {"z:0": f32([0.0, -1.0], [-2.0, -3.5])}


@case("add_empty", "AddV2 of [0,3] and [3] gives [0,3].")
def _():
    x = np.zeros((0, 3), np.float32)
    y = f32(1.0, 2.0, 3.0)
    tf.add(feed("x", x), feed("y", y), name="z")
    return {"x": x, "y": y}, {"z:0": np.zeros((0, 3), np.float32)}


# -- reductions ----------------------------------------------------------------------------

M23 = f32([1.0, 2.0, 3.5], [-4.0, 0.25, 6.0])


@case("sum_float32_all", "Sum over every axis of a [2,3] float32 matrix gives a scalar.")
def _():
    tf.reduce_sum(feed("x", M23), name="z")
    return {"x": M23}, {"z:0": np.float32(M23.astype(np.float64).sum())}


@case("sum_int32_negative_axis_keep_dims", "Sum over axis -1 with keep_dims: [2,3] -> [2,1].")
def _():
    x = i32([1, 2, 3], [4, 5, 6])
    tf.reduce_sum(feed("x", x), axis=-1, keepdims=True, name="z")
    return {"x": x}, {"z:0": i32([6], [15])}


@case("sum_int32_wraparound", "Sum in int32 wraps around like AddV2.")
def _():
    x = i32(2147483647, 1, 2)
    tf.reduce_sum(feed("x", x), axis=0, name="z")
    return {"x": x}, {"z:0": np.int32(-2147483646)}


@case("sum_axes_list_rank3", "Sum of a [2,2,3] tensor over axes [0, 2] gives [2].")
def _():
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3) * np.float32(0.5)
    tf.reduce_sum(feed("x", x), axis=[0, 2], name="z")
    return {"x": x}, {"z:0": x.astype(np.float64).sum(axis=(0, 2)).astype(np.float32)}


@case("sum_int64_reduction_indices", "Sum whose reduction_indices are int64 (Tidx = int64), over axis [-2].")
def _():
    x = i64([1, 2], [3, 2**40])
    tf.reduce_sum(feed("x", x), axis=tf.constant([-2], dtype=tf.int64), name="z")
    return {"x": x}, {"z:0": i64(4, 2**40 + 2)}


@case("sum_empty", "Sum of a [0,3] tensor over axis 0 is zeros of shape [3].")
def _():
    x = np.zeros((0, 3), np.float32)
    tf.reduce_sum(feed("x", x), axis=0, name="z")
    return {"x": x}, {"z:0": f32(0.0, 0.0, 0.0)}


@case("mean_float32", "Mean of a [2,3] float32 matrix over axis 0.")
def _():
    tf.reduce_mean(feed("x", M23), axis=[0], name="z")
    return {"x": M23}, {"z:0": M23.astype(np.float64).mean(axis=0).astype(np.float32)}


@case("mean_int32_truncates", "Integer Mean truncates toward zero: mean(-7, 0) = -3, mean(3, 6) = 4.")
def _():
    x = i32([1, 2], [-7, 0], [3, 6])
    tf.reduce_mean(feed("x", x), axis=1, name="z")
    return {"x": x}, {"z:0": i32(1, -3, 4)}


@case("mean_int_sum_does_not_wrap", "Integer Mean sums in a wider type, as TF does: "
      "mean(250, 10) in uint8 is 130 (keep_dims), mean(INT32_MAX, 3) in int32 is 2**30 + 1.")
def _():
    small = u8([250, 10])
    big = i32(2147483647, 3)
    tf.reduce_mean(feed("small", small), axis=[0, 1], keepdims=True, name="z8")
    tf.reduce_mean(feed("big", big), axis=0, name="z32")
    return {"small": small, "big": big}, {"z8:0": u8([130]), "z32:0": np.int32(1073741825)}


@case("mean_empty_float32", "Mean over an empty axis is 0 / 0 = nan.")
def _():
    x = np.zeros((0, 2), np.float32)
    tf.reduce_mean(feed("x", x), axis=0, name="z")
    return {"x": x}, {"z:0": f32(NAN, NAN)}


@case("max_float32_negative_axis_keep_dims", "Max over axis -2 with keep_dims: [2,3] -> [1,3].")
def _():
    tf.reduce_max(feed("x", M23), axis=-2, keepdims=True, name="z")
    return {"x": M23}, {"z:0": f32([1.0, 2.0, 6.0])}


@case("max_int32_all", "Max over every axis of an int32 matrix of negatives.")
def _():
    x = i32([-5, -9], [-2147483648, -3])
    tf.reduce_max(feed("x", x), name="z")
    return {"x": x}, {"z:0": np.int32(-3)}


@case("max_empty", "Max over an empty axis is the lowest value: -inf for float32, INT32_MIN for int32.")
def _():
    xf = np.zeros((0, 2), np.float32)
    xi = np.zeros((2, 0), np.int32)
    tf.reduce_max(feed("xf", xf), axis=0, name="zf")
    tf.reduce_max(feed("xi", xi), axis=1, name="zi")
    return {"xf": xf, "xi": xi}, {"zf:0": f32(-INF, -INF), "zi:0": i32(-2147483648, -2147483648)}


@case("max_uint8", "Max in uint8 over axis 1.")
def _():
    x = u8([0, 255, 3], [7, 1, 2])
    tf.reduce_max(feed("x", x), axis=1, name="z")
    return {"x": x}, {"z:0": u8(255, 7)}


# -- MatMul: all four transpose combinations, each with the same product -----------------

A = f32([1.0, 2.0, 3.0], [-0.5, 0.25, 4.0])
B = f32([1.0, -1.0], [2.0, 0.5], [0.1, 3.0])
AB = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)

for _ta in (False, True):
    for _tb in (False, True):
        def _matmul(ta=_ta, tb=_tb):
            a = A.T.copy() if ta else A
            b = B.T.copy() if tb else B
            tf.matmul(feed("a", a), feed("b", b), transpose_a=ta, transpose_b=tb, name="z")
            return {"a": a, "b": b}, {"z:0": AB}
        _flags = "".join(s for s, on in (("_transpose_a", _ta), ("_transpose_b", _tb)) if on)
        CASES.append(Case(f"matmul_float32{_flags}",
                          f"MatMul [2,3] x [3,2] with transpose_a={_ta}, transpose_b={_tb} "
                          "(inputs stored transposed to match).", _matmul))


@case("matmul_int32", "MatMul in int32 is exact.")
def _():
    a, b = i32([1, 2], [3, 4], [-5, 6]), i32([7, -8, 9], [10, 11, -12])
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": i32([27, 14, -15], [61, 20, -21], [25, 106, -117])}


@case("matmul_float64", "MatMul in float64.")
def _():
    a, b = A.astype(np.float64), B.astype(np.float64)
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": a @ b}


@case("matmul_empty_inner", "MatMul [2,0] x [0,3] sums nothing: zeros of shape [2,3].")
def _():
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": np.zeros((2, 3), np.float32)}


# -- shapes: Reshape, Transpose, Fill --------------------------------------------------------

@case("reshape_infer_dim", "Reshape [2,3] to [3,-1]: the -1 becomes 2; elements stay in row-major order.")
def _():
    x = i32([1, 2, 3], [4, 5, 6])
    tf.reshape(feed("x", x), [3, -1], name="z")
    return {"x": x}, {"z:0": i32([1, 2], [3, 4], [5, 6])}


@case("reshape_to_scalar_int64_shape", "Reshape [1] to a scalar, the shape given as an empty int64 tensor.")
def _():
    x = f32([2.5])
    tf.reshape(feed("x", x), tf.constant(np.zeros(0, np.int64)), name="z")
    return {"x": x}, {"z:0": np.float32(2.5)}


@case("reshape_empty", "Reshape [0,3] to [3,0].")
def _():
    x = np.zeros((0, 3), np.float32)
    tf.reshape(feed("x", x), [3, 0], name="z")
    return {"x": x}, {"z:0": np.zeros((3, 0), np.float32)}


@case("transpose_2d", "Transpose with the default perm reverses the dims.")
def _():
    x = i32([1, 2, 3], [4, 5, 6])
    tf.transpose(feed("x", x), name="z")
    return {"x": x}, {"z:0": i32([1, 4], [2, 5], [3, 6])}


@case("transpose_rank3_int64_perm", "Transpose [2,2,3] by perm [2,0,1] given as int64: output dim i is input dim perm[i].")
def _():
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    tf.transpose(feed("x", x), tf.constant([2, 0, 1], dtype=tf.int64), name="z")
    expected = f32([[0, 3], [6, 9]], [[1, 4], [7, 10]], [[2, 5], [8, 11]])
    return {"x": x}, {"z:0": expected}


@case("fill_zeros_ones", "zeros([2,3]) float32 and ones([3]) int32, both Fill nodes.")
def _():
    tf.zeros([2, 3], name="zeros")
    tf.ones([3], dtype=tf.int32, name="ones")
    return {}, {"zeros:0": np.zeros((2, 3), np.float32), "ones:0": i32(1, 1, 1)}


@case("fill_value", "Fill [2,2] with a fed scalar 7.5.")
def _():
    v = np.float32(7.5)
    tf.fill([2, 2], feed("v", np.asarray(v)), name="z")
    return {"v": np.asarray(v)}, {"z:0": f32([7.5, 7.5], [7.5, 7.5])}


@case("fill_int64_dims_empty", "Fill with int64 dims (index_type = int64), one of them 0: shape [0,2] uint8.")
def _():
    tf.fill(tf.constant([0, 2], dtype=tf.int64), tf.constant(9, dtype=tf.uint8), name="z")
    return {}, {"z:0": np.zeros((0, 2), np.uint8)}


# -- Cast ------------------------------------------------------------------------------------

@case("cast_float32_to_int32_truncates", "Cast float32 -> int32 truncates toward zero.")
def _():
    x = f32(1.9, -1.9, 0.5, -0.5, 2.0, -2147483520.0)
    tf.cast(feed("x", x), tf.int32, name="z")
    return {"x": x}, {"z:0": i32(1, -1, 0, 0, 2, -2147483520)}


@case("cast_float32_to_bool", "Cast float32 -> bool is x != 0: -0.0 is false, nan and inf are true.")
def _():
    x = f32(0.0, -0.0, 0.5, -2.0, INF, NAN)
    tf.cast(feed("x", x), tf.bool, name="z")
    return {"x": x}, {"z:0": np.array([False, False, True, True, True, True])}


@case("cast_bool_to_float32_and_int32", "Cast bool -> float32 and bool -> int32 give 1 and 0.")
def _():
    x = np.array([True, False, True])
    px = feed("x", x)
    tf.cast(px, tf.float32, name="f")
    tf.cast(px, tf.int32, name="i")
    return {"x": x}, {"f:0": f32(1.0, 0.0, 1.0), "i:0": i32(1, 0, 1)}


@case("cast_int32_to_float32_rounds", "Cast int32 -> float32 rounds to nearest even: 16777217 -> 16777216.")
def _():
    x = i32(16777217, 16777219, -3, 2147483647)
    tf.cast(feed("x", x), tf.float32, name="z")
    return {"x": x}, {"z:0": f32(16777216.0, 16777220.0, -3.0, 2147483648.0)}


@case("cast_int_narrowing_wraps", "Cast int32 -> uint8 and int64 -> int32 keep the low bits (300 -> 44, -1 -> 255).")
def _():
    x = i32(300, -1, 255)
    w = i64(2**32 + 5, -(2**32) - 1)
    tf.cast(feed("x", x), tf.uint8, name="u")
    tf.cast(feed("w", w), tf.int32, name="n")
    return {"x": x, "w": w}, {"u:0": u8(44, 255, 255), "n:0": i32(5, -1)}


@case("cast_float64_to_float32", "Cast float64 -> float32 rounds to nearest; 1e300 overflows to inf.")
def _():
    x = f64(0.1, -1.0 / 3.0, 1e300)
    tf.cast(feed("x", x), tf.float32, name="z")
    return {"x": x}, {"z:0": np.array([0.1, -1.0 / 3.0, INF], np.float32)}


@case("cast_uint8_to_float64", "Cast uint8 -> float64 is exact.")
def _():
    x = u8(0, 128, 255)
    tf.cast(feed("x", x), tf.float64, name="z")
    return {"x": x}, {"z:0": f64(0.0, 128.0, 255.0)}


# -- shape queries and generators ---------------------------------------------------------------

@case("shape_size_rank", "Shape (int32 and int64), Size and Rank of a [2,3] value fed to a [?,3] placeholder.")
def _():
    x = f32([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    px = feed("x", x, shape=[None, 3])
    tf.shape(px, name="shape")
    tf.raw_op("Shape", px, out_type=tf.int64, name="shape64")
    tf.size(px, name="size")
    tf.raw_op("Rank", px, name="rank")
    return {"x": x}, {"shape:0": i32(2, 3), "shape64:0": i64(2, 3), "size:0": np.int32(6), "rank:0": np.int32(2)}


@case("shape_size_rank_edge", "Shape, Size and Rank of an empty [0,3] value and of a scalar.")
def _():
    e = np.zeros((0, 3), np.uint8)
    s = np.asarray(np.float64(2.0))
    pe, ps = feed("e", e, shape=None), feed("s", s, shape=None)
    tf.shape(pe, name="shape_e")
    tf.size(pe, name="size_e")
    tf.shape(ps, name="shape_s")
    tf.raw_op("Rank", ps, name="rank_s")
    return {"e": e, "s": s}, {"shape_e:0": i32(0, 3), "size_e:0": np.int32(0),
                              "shape_s:0": np.zeros(0, np.int32), "rank_s:0": np.int32(0)}


@case("range", "Range in int32 (0..4, and 5 down to 1 by -2) and in float32 by a dyadic step.")
def _():
    tf.raw_op("Range", 0, 5, 1, name="up")
    tf.raw_op("Range", 5, 0, -2, name="down")
    tf.raw_op("Range", 1.0, 2.0, 0.25, Tidx=tf.float32, name="frac")
    return {}, {"up:0": i32(0, 1, 2, 3, 4), "down:0": i32(5, 3, 1), "frac:0": f32(1.0, 1.25, 1.5, 1.75)}


@case("broadcast_to", "BroadcastTo [3] -> [2,3] and [2,1] -> [2,3] (shape as int64).")
def _():
    x, y = i32(1, 2, 3), f32([1.5], [-2.0])
    tf.broadcast_to(feed("x", x), [2, 3], name="bx")
    tf.broadcast_to(feed("y", y), tf.constant([2, 3], dtype=tf.int64), name="by")
    return {"x": x, "y": y}, {"bx:0": i32([1, 2, 3], [1, 2, 3]),
                              "by:0": f32([1.5, 1.5, 1.5], [-2.0, -2.0, -2.0])}


def _gradient_args(pairs):
    """BroadcastGradientArgs on fed shape pairs; expected values are TensorFlow's (its op, its rules)."""
    feeds, expected = {}, {}
    for i, (s0, s1, r0, r1) in enumerate(pairs):
        a, b = np.array(s0, np.int32), np.array(s1, np.int32)
        tf.raw_op("BroadcastGradientArgs", feed(f"s0_{i}", a), feed(f"s1_{i}", b), name=f"args_{i}")
        feeds.update({f"s0_{i}": a, f"s1_{i}": b})
        expected.update({f"args_{i}:0": np.array(r0, np.int32), f"args_{i}:1": np.array(r1, np.int32)})
    return feeds, expected


@case("broadcast_gradient_args", "BroadcastGradientArgs: the axes each side's gradient sums over "
      "([2,3,5] vs [1]; [4,1] vs [1,5]; [] vs [2,2]; equal shapes [1,3]).")
def _():
    return _gradient_args([([2, 3, 5], [1], [], [0, 1, 2]), ([4, 1], [1, 5], [1], [0]),
                           ([], [2, 2], [0, 1], []), ([1, 3], [1, 3], [], [])])


@case("broadcast_gradient_args_both_one", "BroadcastGradientArgs lists a dim where both (unequal) shapes are 1 "
      "for both sides, as TF does: [2,1,3] vs [3] gives [1] and [0,1]; [2,1,1] vs [1,1] gives [1,2] and [0,1,2].")
def _():
    return _gradient_args([([2, 1, 3], [3], [1], [0, 1]), ([2, 1, 1], [1, 1], [1, 2], [0, 1, 2])])


@case("add_n", "AddN of three float32 vectors, and of one int32 vector (itself).")
def _():
    a, b, c = f32(1.0, 0.1, -2.0), f32(2.0, 0.2, 0.5), f32(4.0, 0.3, 0.25)
    tf.add_n([feed("a", a), feed("b", b), feed("c", c)], name="z")
    tf.add_n([tf.constant([7, -7])], name="one")
    expected = ((a.astype(np.float64) + b).astype(np.float32).astype(np.float64) + c).astype(np.float32)
    return {"a": a, "b": b, "c": c}, {"z:0": expected, "one:0": i32(7, -7)}


@case("sign", "Sign in float32 (-0.0 gives +0.0, nan stays nan) and int32.")
def _():
    x = f32(-2.5, 0.0, -0.0, 3.5, -INF, INF, NAN)
    n = i32(-7, 0, 9)
    tf.sign(feed("x", x), name="z")
    tf.sign(feed("n", n), name="zi")
    return {"x": x, "n": n}, {"z:0": f32(-1.0, 0.0, 0.0, 1.0, -1.0, 1.0, NAN), "zi:0": i32(-1, 0, 1)}


@case("relu_grad", "ReluGrad passes the gradient where features > 0, else 0 (also at 0 and nan).")
def _():
    g, x = f32(1.0, 2.0, 3.0, 4.0, 5.0), f32(-1.0, 0.0, 0.5, 2.0, NAN)
    tf.raw_op("ReluGrad", feed("g", g), feed("x", x), name="z")
    return {"g": g, "x": x}, {"z:0": f32(0.0, 0.0, 3.0, 4.0, 0.0)}


# -- training: gradient ops and ApplyGradientDescent, chained by control dependencies -------------

@case("apply_gradient_descent", "ApplyGradientDescent on an initialised [2] variable: [1, 2] - 0.5 * [2, -4] = [0, 4].")
def _():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(0.5), tf.constant([2.0, -4.0]), name="y")
    return {}, {"y:0": f32(0.0, 4.0)}


@case("apply_gradient_descent_scalar", "ApplyGradientDescent on an initialised float64 scalar: 3 - 0.25 * 2 = 2.5.")
def _():
    v = tf.Variable(tf.constant(3.0, dtype=tf.float64), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(0.25, dtype=tf.float64),
                  tf.constant(2.0, dtype=tf.float64), name="y")
    return {}, {"y:0": np.float64(2.5)}


STEPS, RATE = 3, 0.05
TRAIN_X, TRAIN_T = f32(1.0, 2.0, -1.0), f32(2.0, 3.0, -2.5)


def _train_oracle():
    """Gradient descent on sum((w * x - t)^2) by hand, in float64: dL/dw = sum(2 (w x - t) x)."""
    w = 0.5
    x, t = TRAIN_X.astype(np.float64), TRAIN_T.astype(np.float64)
    first_loss = np.sum((w * x - t) ** 2)
    for _ in range(STEPS):
        w = w - RATE * np.sum(2 * (w * x - t) * x)
    return np.float32(first_loss), np.float32(w)


@case("train_steps", f"{STEPS} gradient-descent steps on sum((w * x - t)^2), scalar w, in one run: tf.gradients "
      "through broadcasting, ApplyGradientDescent, each step reading w after the previous update.")
def _():
    v = tf.Variable(tf.constant(0.5), name="w")
    x, t = feed("x", TRAIN_X), feed("t", TRAIN_T)
    with tf.control_dependencies([v.initializer]):
        w = tf.identity(v.op.outputs[0], name="w0")
    for step in range(STEPS):
        loss = tf.reduce_sum(tf.square(w * x - t), name=f"loss{step}")
        (grad,) = tf.gradients(loss, [w])
        update = tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(RATE), grad, name=f"step{step}")
        with tf.control_dependencies([update]):
            w = tf.identity(v.op.outputs[0], name=f"w{step + 1}")
    first_loss, learned = _train_oracle()
    return {"x": TRAIN_X, "t": TRAIN_T}, {f"w{STEPS}:0": learned, "loss0:0": first_loss}


# -- comparisons, logic and selection ---------------------------------------------------------------

CMP_X, CMP_Y = f32(1.0, 2.0, NAN, -0.0, 3.0), f32(2.0, 2.0, 1.0, 0.0, -INF)


@case("comparisons_float32", "Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual in float32: "
      "NaN compares false (unequal), -0.0 equals 0.0.")
def _():
    x, y = feed("x", CMP_X), feed("y", CMP_Y)
    for name, fn in (("eq", tf.equal), ("ne", tf.not_equal), ("gt", tf.greater), ("ge", tf.greater_equal),
                     ("lt", tf.less), ("le", tf.less_equal)):
        fn(x, y, name=name)
    with np.errstate(invalid="ignore"):
        expected = {"eq:0": CMP_X == CMP_Y, "ne:0": CMP_X != CMP_Y, "gt:0": CMP_X > CMP_Y,
                    "ge:0": CMP_X >= CMP_Y, "lt:0": CMP_X < CMP_Y, "le:0": CMP_X <= CMP_Y}
    return {"x": CMP_X, "y": CMP_Y}, expected


@case("comparisons_int32_broadcast", "Greater and Equal of a [2,1] int32 against a [3] int32: a [2,3] bool.")
def _():
    a, b = np.array([[1], [5]], np.int32), i32(0, 1, 5)
    tf.greater(feed("a", a), feed("b", b), name="gt")
    tf.equal(feed("a2", a), feed("b2", b), name="eq")
    return {"a": a, "b": b, "a2": a, "b2": b}, {"gt:0": a > b, "eq:0": a == b}


@case("logical_ops", "LogicalAnd, LogicalOr (broadcasting a scalar) and LogicalNot.")
def _():
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    x, y = feed("p", p), feed("q", q)
    tf.logical_and(x, y, name="and_")
    tf.logical_or(x, tf.constant(False), name="or_")
    tf.logical_not(y, name="not_")
    return {"p": p, "q": q}, {"and_:0": p & q, "or_:0": p.copy(), "not_:0": ~q}


@case("select_v2_broadcast", "SelectV2 (tf.where) with a [3] condition over [2,3] and [3] branches.")
def _():
    c, t, e = np.array([True, False, True]), f32(1, 2, 3, 4, 5, 6).reshape(2, 3), f32(-1, -2, -3)
    tf.where(feed("c", c), feed("t", t), feed("e", e), name="z")
    return {"c": c, "t": t, "e": e}, {"z:0": np.where(c, t, e)}


@case("select_v1_rows", "Select (TF1) with a [2] condition picking whole rows of [2,2] int32 tensors.")
def _():
    c, t, e = np.array([False, True]), i32(1, 2, 3, 4).reshape(2, 2), i32(-1, -2, -3, -4).reshape(2, 2)
    tf.raw_op("Select", feed("c", c), feed("t", t), feed("e", e), name="z")
    return {"c": c, "t": t, "e": e}, {"z:0": i32(-1, -2, 3, 4).reshape(2, 2)}


# -- softmax, losses, arg-extremes, one-hot ------------------------------------------------------

LOGITS = f32(1.0, 2.0, 3.0, 0.5, -1.0, 0.0, 2.0, 2.0).reshape(2, 4)


def _log_softmax64(x):
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@case("softmax_log_softmax", "Softmax and LogSoftmax over the last axis of [2,4] float32 logits.")
def _():
    x = feed("x", LOGITS)
    tf.nn.softmax(x, name="p")
    tf.nn.log_softmax(x, name="logp")
    log_p = _log_softmax64(LOGITS)
    return {"x": LOGITS}, {"p:0": np.exp(log_p).astype(np.float32), "logp:0": log_p.astype(np.float32)}


@case("softmax_cross_entropy", "SoftmaxCrossEntropyWithLogits: per-row loss and its backprop (softmax - labels).")
def _():
    labels = f32(0, 0, 1, 0, 0.25, 0.25, 0.25, 0.25).reshape(2, 4)
    build("SoftmaxCrossEntropyWithLogits", [feed("x", LOGITS), feed("labels", labels)], name="xent")
    log_p = _log_softmax64(LOGITS)
    return {"x": LOGITS, "labels": labels}, {
        "xent:0": (-(labels * log_p).sum(axis=-1)).astype(np.float32),
        "xent:1": (np.exp(log_p) - labels).astype(np.float32)}


@case("sparse_softmax_cross_entropy", "SparseSoftmaxCrossEntropyWithLogits with int32 labels: loss and backprop.")
def _():
    labels = i32(2, 0)
    build("SparseSoftmaxCrossEntropyWithLogits", [feed("x", LOGITS), feed("labels", labels)], name="xent")
    log_p = _log_softmax64(LOGITS)
    backprop = np.exp(log_p)
    backprop[[0, 1], labels] -= 1
    return {"x": LOGITS, "labels": labels}, {
        "xent:0": (-log_p[[0, 1], labels]).astype(np.float32), "xent:1": backprop.astype(np.float32)}


@case("l2_loss", "L2Loss: sum(x ** 2) / 2 of a [2,3] float32.")
def _():
    x = f32(1, -2, 3, 0.5, 0, -1).reshape(2, 3)
    tf.nn.l2_loss(feed("x", x), name="z")
    return {"x": x}, {"z:0": np.float32(np.sum(x.astype(np.float64) ** 2) / 2)}


@case("argmax_argmin", "ArgMax (int64 and int32 output) and ArgMin along axes 1 and -2; the first index wins ties.")
def _():
    x = f32(3, 1, 3, 0, 5, 5, -1, -1).reshape(2, 4)
    t = feed("x", x)
    tf.argmax(t, 1, name="amax")
    tf.argmax(t, -2, output_type=tf.int32, name="amax0")
    tf.argmin(t, 1, name="amin")
    return {"x": x}, {"amax:0": np.argmax(x, 1).astype(np.int64), "amax0:0": np.argmax(x, 0).astype(np.int32),
                      "amin:0": np.argmin(x, 1).astype(np.int64)}  # numpy also takes the first index on ties


@case("one_hot", "OneHot of int32 indices with depth 3: float32 1/0 on the last axis (index -1 and 3 all off), "
      "and int32 5/-5 on axis 0.")
def _():
    idx = i32(0, 2, -1, 3)
    t = feed("i", idx)
    tf.one_hot(t, 3, name="h")
    tf.one_hot(t, 3, on_value=5, off_value=-5, axis=0, dtype=tf.int32, name="h0")
    h = (idx[:, None] == np.arange(3)).astype(np.float32)
    return {"i": idx}, {"h:0": h, "h0:0": np.where(h.T > 0, 5, -5).astype(np.int32)}


@case("min_prod", "Min (float32, keep_dims) and Prod (int32, all axes) reductions.")
def _():
    x, n = f32(3, -1, 2, 0.5, 7, -4).reshape(2, 3), i32(2, -3, 4, 1, 1, 5).reshape(2, 3)
    tf.reduce_min(feed("x", x), axis=1, keepdims=True, name="mn")
    tf.reduce_prod(feed("n", n), name="pr")
    return {"x": x, "n": n}, {"mn:0": f32(-1, -4).reshape(2, 1), "pr:0": np.int32(-120)}


@case("log1p_squared_difference", "Log1p near zero (accurate where log(1 + x) is not) and SquaredDifference.")
def _():
    x, y = f32(1e-7, 0.5, -0.5, 3.0), f32(0.0, 1.5, 0.5, -1.0)
    tf.log1p(feed("x", x), name="l")
    tf.squared_difference(feed("a", x), feed("b", y), name="d")
    return {"x": x, "a": x, "b": y}, {"l:0": rounded(np.log1p, np.float32, x),
                                     "d:0": rounded(lambda a, b: (a - b) ** 2, np.float32, x, y)}


@case("zeros_ones_like", "ZerosLike and OnesLike keep the shape and dtype (int64 [2,2], float32 [3]).")
def _():
    a, b = i64(1, 2, 3, 4).reshape(2, 2), f32(1.5, NAN, -2)
    tf.zeros_like(feed("a", a), name="z")
    tf.ones_like(feed("b", b), name="o")
    return {"a": a, "b": b}, {"z:0": np.zeros((2, 2), np.int64), "o:0": np.ones(3, np.float32)}


# -- the other optimizers' update ops ------------------------------------------------------------

@case("apply_momentum", "ApplyMomentum twice (plain, then Nesterov) on a [2] float64 variable and its accumulator.")
def _():
    v = tf.Variable(tf.constant([1.0, -2.0], dtype=tf.float64), name="v")
    acc = tf.Variable(tf.constant([0.5, 0.5], dtype=tf.float64), name="acc")
    grad = tf.constant([2.0, -4.0], dtype=tf.float64)
    lr, mom = tf.constant(0.1, dtype=tf.float64), tf.constant(0.9, dtype=tf.float64)
    with tf.control_dependencies([v.initializer, acc.initializer]):
        first = tf.raw_op("ApplyMomentum", v.op.outputs[0], acc.op.outputs[0], lr, grad, mom, name="m1")
    with tf.control_dependencies([first]):
        tf.raw_op("ApplyMomentum", v.op.outputs[0], acc.op.outputs[0], lr, grad, mom, use_nesterov=True, name="m2")
    w, a, g = np.array([1.0, -2.0]), np.array([0.5, 0.5]), np.array([2.0, -4.0])
    a = a * 0.9 + g
    w1 = w - 0.1 * a
    a = a * 0.9 + g
    w2 = w1 - (g * 0.1 + a * 0.9 * 0.1)
    return {}, {"m2:0": w2}


@case("apply_adam", "ApplyAdam at step 1 and step 2 (beta powers fed as they would be) on a [3] float32 variable.")
def _():
    v = tf.Variable(f32(1.0, -1.0, 0.5), name="v")
    m = tf.Variable(f32(0, 0, 0), name="m")
    s = tf.Variable(f32(0, 0, 0), name="s")
    grad = f32(0.5, -2.0, 0.0)
    consts = [tf.constant(np.float32(c)) for c in (0.01, 0.9, 0.999, 1e-8)]
    with tf.control_dependencies([v.initializer, m.initializer, s.initializer]):
        first = tf.raw_op("ApplyAdam", v.op.outputs[0], m.op.outputs[0], s.op.outputs[0], tf.constant(np.float32(0.9)),
                          tf.constant(np.float32(0.999)), *consts, tf.constant(grad), name="a1")
    with tf.control_dependencies([first]):
        tf.raw_op("ApplyAdam", v.op.outputs[0], m.op.outputs[0], s.op.outputs[0], tf.constant(np.float32(0.81)),
                  tf.constant(np.float32(0.998001)), *consts, tf.constant(grad), name="a2")
    w, mm, ss, g = f32(1.0, -1.0, 0.5).astype(np.float64), np.zeros(3), np.zeros(3), grad.astype(np.float64)
    for b1p, b2p in ((0.9, 0.999), (0.81, 0.998001)):
        lr_t = 0.01 * np.sqrt(1 - b2p) / (1 - b1p)
        mm = 0.9 * mm + 0.1 * g
        ss = 0.999 * ss + 0.001 * g * g
        w = w - lr_t * mm / (np.sqrt(ss) + 1e-8)
    return {}, {"a2:0": w.astype(np.float32)}


# -- convolution and pooling (NHWC) ---------------------------------------------------------------
# The references below loop over output positions in float64, straight from TF's definitions:
# output size and padding by TF's rule (SAME puts the odd pad at the bottom/right), a window
# reads only real input elements. Inputs are small integers or halves, so sums are exact.

def _same(size, k, s, d=1):
    """TF's SAME rule: (output size, padding before)."""
    k_eff = (k - 1) * d + 1
    out = -(-size // s)
    return out, max((out - 1) * s + k_eff - size, 0) // 2


def _valid(size, k, s, d=1):
    return (size - ((k - 1) * d + 1)) // s + 1, 0


def _window_reads(x_shape, k, strides, dilations, pads, out):
    """Yields (n, i, j, a, b, r, c): output (n, i, j) reads input (n, r, c) through filter tap (a, b)."""
    n_, h, w, _ = x_shape
    for n in range(n_):
        for i in range(out[0]):
            for j in range(out[1]):
                for a in range(k[0]):
                    for b in range(k[1]):
                        r = i * strides[0] + a * dilations[0] - pads[0]
                        c = j * strides[1] + b * dilations[1] - pads[1]
                        if 0 <= r < h and 0 <= c < w:
                            yield n, i, j, a, b, r, c


def _conv_ref(x, f, strides, pads, out, dilations=(1, 1), depthwise=False):
    x, f = x.astype(np.float64), f.astype(np.float64)
    channels = x.shape[3] * f.shape[3] if depthwise else f.shape[3]
    y = np.zeros((x.shape[0], out[0], out[1], channels))
    for n, i, j, a, b, r, c in _window_reads(x.shape, f.shape[:2], strides, dilations, pads, out):
        y[n, i, j] += (x[n, r, c][:, None] * f[a, b]).ravel() if depthwise else x[n, r, c] @ f[a, b]
    return y


X_IMG = (np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) % 7 - 3)       # small integers, some negative
F_33 = (np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2) % 5 - 2) * np.float32(0.5)


@case("conv2d_same_stride2", "Conv2D NHWC, SAME padding, stride 2: [1,5,5,2] * [3,3,2,2] -> [1,3,3,2] "
      "(one row/column of zeros on each side).")
def _():
    tf.nn.conv2d(feed("x", X_IMG), feed("f", F_33), strides=2, padding="SAME", name="y")
    expected = _conv_ref(X_IMG, F_33, (2, 2), (1, 1), (3, 3)).astype(np.float32)
    return {"x": X_IMG, "f": F_33}, {"y:0": expected}


@case("conv2d_valid_dilated_rect", "Conv2D VALID with dilations [2,1] and strides [1,2] on a [2,6,5,1] "
      "input with a [2,2,1,3] filter.")
def _():
    x = (np.arange(60, dtype=np.float32).reshape(2, 6, 5, 1) % 9 - 4)
    f = np.array([1, -1, 2, 0.5, 0, 1, -2, 1, 1, 0.5, -1, 3], np.float32).reshape(2, 2, 1, 3)
    tf.nn.conv2d(feed("x", x), feed("f", f), strides=[1, 2], padding="VALID", dilations=[2, 1], name="y")
    out = (_valid(6, 2, 1, 2)[0], _valid(5, 2, 2)[0])
    return {"x": x, "f": f}, {"y:0": _conv_ref(x, f, (1, 2), (0, 0), out, (2, 1)).astype(np.float32)}


@case("conv2d_explicit_padding", "Conv2D with EXPLICIT padding [[0,0],[1,2],[0,1],[0,0]] (asymmetric), stride 1.")
def _():
    f = F_33[:2, :, :, :1]
    tf.nn.conv2d(feed("x", X_IMG), feed("f", f), strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]], name="y")
    out = (5 + 1 + 2 - 2 + 1, 5 + 0 + 1 - 3 + 1)
    return {"x": X_IMG, "f": f}, {"y:0": _conv_ref(X_IMG, f, (1, 1), (1, 0), out).astype(np.float32)}


@case("conv2d_float64_1x1", "Conv2D in float64 with a 1x1 filter (a matrix product per pixel).")
def _():
    x = X_IMG.astype(np.float64) * 0.1
    f = np.array([[1.5, -2.0, 0.25], [0.5, 1.0, -1.0]]).reshape(1, 1, 2, 3)
    tf.nn.conv2d(feed("x", x), feed("f", f), strides=1, padding="VALID", name="y")
    return {"x": x, "f": f}, {"y:0": np.einsum("nhwc,co->nhwo", x, f[0, 0])}


DY_33 = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) % 4 - 1.5)


@case("conv2d_backprop_input", "Conv2DBackpropInput (SAME, stride 2): the [1,3,3,2] gradient spread back through "
      "the filter onto a [1,5,5,2] input; TF's transposed convolution.")
def _():
    tf.nn.conv2d_backprop_input([1, 5, 5, 2], feed("f", F_33), feed("dy", DY_33), [1, 2, 2, 1], "SAME", name="dx")
    dx = np.zeros((1, 5, 5, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        dx[n, r, c] += F_33[a, b].astype(np.float64) @ DY_33[n, i, j]
    return {"f": F_33, "dy": DY_33}, {"dx:0": dx.astype(np.float32)}


@case("conv2d_backprop_filter", "Conv2DBackpropFilter (SAME, stride 2): the filter's gradient, [3,3,2,2].")
def _():
    tf.nn.conv2d_backprop_filter(feed("x", X_IMG), [3, 3, 2, 2], feed("dy", DY_33), [1, 2, 2, 1], "SAME", name="df")
    df = np.zeros((3, 3, 2, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        df[a, b] += np.outer(X_IMG[n, r, c], DY_33[n, i, j])
    return {"x": X_IMG, "dy": DY_33}, {"df:0": df.astype(np.float32)}


@case("depthwise_conv2d", "DepthwiseConv2dNative with channel multiplier 2: SAME stride 2, and VALID stride 1 "
      "in float64; output channel c*2 + m comes from input channel c.")
def _():
    f = F_33 * np.float32(-1)
    x64, f64_ = X_IMG.astype(np.float64), f.astype(np.float64)
    tf.nn.depthwise_conv2d(feed("x", X_IMG), feed("f", f), [1, 2, 2, 1], "SAME", name="same")
    tf.nn.depthwise_conv2d(feed("x64", x64), feed("f64", f64_), [1, 1, 1, 1], "VALID", name="valid")
    return {"x": X_IMG, "f": f, "x64": x64, "f64": f64_}, {
        "same:0": _conv_ref(X_IMG, f, (2, 2), (1, 1), (3, 3), depthwise=True).astype(np.float32),
        "valid:0": _conv_ref(x64, f64_, (1, 1), (0, 0), (3, 3), depthwise=True)}


def _pool_ref(x, k, s, padding, reduce):
    n_, h, w, c_ = x.shape
    (oh, top), (ow, left) = (_same(h, k, s) if padding == "SAME" else _valid(h, k, s),
                             _same(w, k, s) if padding == "SAME" else _valid(w, k, s))
    windows = {}
    for n, i, j, a, b, r, col in _window_reads(x.shape, (k, k), (s, s), (1, 1), (top, left), (oh, ow)):
        windows.setdefault((n, i, j), []).append(x[n, r, col].astype(np.float64))
    y = np.zeros((n_, oh, ow, c_))
    for (n, i, j), values in windows.items():
        y[n, i, j] = reduce(np.array(values), axis=0)
    return y


X_NEG = -(np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) % 11) - 1  # all negative: zero padding would win


@case("max_pool", "MaxPool 3x3 stride 2 SAME on an all-negative input (padding never wins) and 2x2 VALID on int32.")
def _():
    xi = (np.arange(32, dtype=np.int32).reshape(1, 4, 4, 2) * 7) % 13 - 6
    tf.nn.max_pool(feed("x", X_NEG), ksize=3, strides=2, padding="SAME", name="same")
    tf.nn.max_pool(feed("xi", xi), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID", name="valid")
    return {"x": X_NEG, "xi": xi}, {"same:0": _pool_ref(X_NEG, 3, 2, "SAME", np.max).astype(np.float32),
                                    "valid:0": _pool_ref(xi, 2, 2, "VALID", np.max).astype(np.int32)}


@case("max_pool_nan", "MaxPool skips NaN, and a window of only NaN or -inf gives the lowest finite float32 "
      "(TF starts each window there).")
def _():
    x = f32(1, NAN, NAN, NAN, -INF, -INF, NAN, 5,
            NAN, 3, NAN, NAN, -INF, -INF, -INF, NAN).reshape(1, 2, 8, 1)
    tf.nn.max_pool(feed("x", x), ksize=2, strides=2, padding="VALID", name="y")
    lowest = np.finfo(np.float32).min
    return {"x": x}, {"y:0": f32(3, lowest, lowest, 5).reshape(1, 1, 4, 1)}


@case("max_pool_grad", "MaxPoolGrad (3x3 stride 2 SAME): each window's gradient goes to its max; on ties to the "
      "first in row-major order; overlapping windows add up.")
def _():
    x = f32(5, 1, 5, 2, 5, 0, 1, 5, 1, 0, 2, 2, 9, 2, 2, 0, 1, 2, 3, 4, 4, 3, 2, 1, 0).reshape(1, 5, 5, 1)
    y = _pool_ref(x, 3, 2, "SAME", np.max).astype(np.float32)
    g = f32(1, 2, 4, 8, 16, 32, 64, 128, 256).reshape(1, 3, 3, 1)
    tf.raw_op("MaxPoolGrad", feed("x", x), feed("y", y), feed("g", g), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
              padding="SAME", name="dx")
    dx = np.zeros((1, 5, 5, 1), np.float32)
    for i in range(3):
        for j in range(3):
            rows, cols = range(max(2 * i - 1, 0), min(2 * i + 2, 5)), range(max(2 * j - 1, 0), min(2 * j + 2, 5))
            best = max(((r, c) for r in rows for c in cols), key=lambda rc: (x[0, rc[0], rc[1], 0], -rc[0], -rc[1]))
            dx[0, best[0], best[1], 0] += g[0, i, j, 0]
    return {"x": x, "y": y, "g": g}, {"dx:0": dx}


@case("avg_pool", "AvgPool 3x3 stride 2 SAME (border windows average only their real elements) and 2x2 VALID.")
def _():
    tf.nn.avg_pool(feed("x", X_IMG), ksize=3, strides=2, padding="SAME", name="same")
    tf.nn.avg_pool(feed("x2", X_IMG), ksize=2, strides=1, padding="VALID", name="valid")
    return {"x": X_IMG, "x2": X_IMG}, {"same:0": _pool_ref(X_IMG, 3, 2, "SAME", np.mean).astype(np.float32),
                                      "valid:0": _pool_ref(X_IMG, 2, 1, "VALID", np.mean).astype(np.float32)}


@case("avg_pool_grad", "AvgPoolGrad (3x3 stride 2 SAME): each window's gradient shared among the real elements "
      "it covers.")
def _():
    tf.raw_op("AvgPoolGrad", [1, 5, 5, 2], feed("g", DY_33), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
              padding="SAME", name="dx")
    counts = np.zeros((3, 3))
    for _, i, j, *_rest in _window_reads((1, 5, 5, 1), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        counts[i, j] += 1
    dx = np.zeros((1, 5, 5, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        dx[n, r, c] += DY_33[n, i, j] / counts[i, j]
    return {"g": DY_33}, {"dx:0": dx.astype(np.float32)}


@case("bias_add", "BiasAdd adds a [C] bias along the last dim: float32 [2,2,1,3] and int32 [2,3].")
def _():
    b = f32(0.5, -1, 2)
    bi = i32(10, -20, 30)
    tf.nn.bias_add(feed("x", X_IMG[:, :2, :1, :].repeat(3, axis=3)[..., :3]), feed("b", b), name="y")
    tf.nn.bias_add(feed("xi", i32([1, 2, 3], [4, 5, 6])), feed("bi", bi), name="yi")
    x = X_IMG[:, :2, :1, :].repeat(3, axis=3)[..., :3]
    return {"x": x, "b": b, "xi": i32([1, 2, 3], [4, 5, 6]), "bi": bi}, {
        "y:0": rounded(np.add, np.float32, x, b), "yi:0": i32([11, -18, 33], [14, -15, 36])}


BN_X = (np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) % 5 - 2) * np.float32(0.5)
BN_SCALE, BN_OFFSET = f32(1.0, 2.0, 0.5), f32(0.0, 1.0, -1.0)
BN_MEAN, BN_VAR = f32(0.5, -0.25, 0.0), f32(1.0, 2.0, 0.25)


def _bn_feeds():
    return {"x": BN_X, "scale": BN_SCALE, "offset": BN_OFFSET, "mean": BN_MEAN, "variance": BN_VAR}


@case("fused_batch_norm_inference", "FusedBatchNormV3, is_training=False, epsilon 0.001: "
      "scale * (x - mean) / sqrt(variance + epsilon) + offset; mean and variance pass through.")
def _():
    ins = [feed(k, v) for k, v in _bn_feeds().items()]
    y, m, v = tf.nn.fused_batch_norm(*ins, epsilon=0.001, is_training=False, name="bn")
    eps = np.float64(np.float32(0.001))  # the attr is a float32 on the wire
    x = BN_X.astype(np.float64)
    y = BN_SCALE * (x - BN_MEAN) / np.sqrt(BN_VAR.astype(np.float64) + eps) + BN_OFFSET
    return _bn_feeds(), {"bn:0": y.astype(np.float32), "bn:1": BN_MEAN, "bn:2": BN_VAR}


@case("fused_batch_norm_training", "FusedBatchNormV3, is_training=True: normalizes with the batch mean and biased "
      "variance; outputs 1 and 2 are the mean and the unbiased (n/(n-1)) variance, 3 and 4 the mean and biased "
      "variance; with exponential_avg_factor 0.25 outputs 1 and 2 move a quarter of the way from the given ones.")
def _():
    x_, s_, o_ = feed("x", BN_X), feed("scale", BN_SCALE), feed("offset", BN_OFFSET)
    m_, v_ = feed("mean", BN_MEAN), feed("variance", BN_VAR)
    tf.raw_op("FusedBatchNormV3", x_, s_, o_, tf.constant(np.zeros(0, np.float32)), tf.constant(np.zeros(0, np.float32)),
              epsilon=0.001, is_training=True, U=tf.float32, name="bn")
    tf.raw_op("FusedBatchNormV3", x_, s_, o_, m_, v_, epsilon=0.001, is_training=True, exponential_avg_factor=0.25,
              U=tf.float32, name="ema")
    x = BN_X.astype(np.float64)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    unbiased = var * 8 / 7
    eps = np.float64(np.float32(0.001))
    y = BN_SCALE * (x - mean) / np.sqrt(var + eps) + BN_OFFSET
    return _bn_feeds(), {
        "bn:0": y.astype(np.float32), "bn:1": mean.astype(np.float32), "bn:2": unbiased.astype(np.float32),
        "bn:3": mean.astype(np.float32), "bn:4": var.astype(np.float32),
        "ema:1": (0.75 * BN_MEAN + 0.25 * mean).astype(np.float32),
        "ema:2": (0.75 * BN_VAR + 0.25 * unbiased).astype(np.float32)}


@case("small_cnn", "A small CNN forward pass: Conv2D SAME, BiasAdd, Relu, MaxPool, AvgPool, Reshape, MatMul, Softmax.")
def _():
    x = X_IMG * np.float32(0.25)
    f = F_33[:, :, :, :1] * np.float32(0.5)
    bias = f32(0.125)
    w = f32(1, -1, 0.5, 2, -0.5, 1, 0.25, -2).reshape(4, 2)
    conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(feed("x", x), tf.constant(f), strides=1, padding="SAME"),
                                     tf.constant(bias)))
    pooled = tf.nn.avg_pool(tf.nn.max_pool(conv, ksize=2, strides=1, padding="VALID"), ksize=2, strides=2,
                            padding="VALID")
    tf.nn.softmax(tf.matmul(tf.reshape(pooled, [1, 4]), tf.constant(w)), name="p")
    c = np.maximum(_conv_ref(x, f, (1, 1), (1, 1), (5, 5)) + 0.125, 0)
    logits = _pool_ref(_pool_ref(c, 2, 1, "VALID", np.max), 2, 2, "VALID", np.mean).reshape(1, 4) @ w
    e = np.exp(logits - logits.max())
    return {"x": x}, {"p:0": (e / e.sum()).astype(np.float32)}


# -- activations, Rsqrt and TF's integer-aware divisions --------------------------------------------

ACT_X = f32(-20, -14, -13.9, -3, -1, -0.0, 0.0, 0.5, 3, 5.9, 6, 7, 13.9, 14, 30, NAN, INF, -INF)


@case("activations", "Relu6 (clips to [0, 6]), Elu (exp(x) - 1 below 0; -0.0 stays), LeakyRelu (alpha 0.2 and "
      "0.01), Softplus (x above 13.94, exp(x) below -13.94, log1p(exp(x)) between) in float32.")
def _():
    x = feed("x", ACT_X)
    tf.nn.relu6(x, name="relu6")
    tf.nn.elu(x, name="elu")
    tf.nn.leaky_relu(x, name="leaky")
    tf.nn.leaky_relu(x, alpha=0.01, name="leaky01")
    tf.nn.softplus(x, name="softplus")
    v = ACT_X.astype(np.float64)
    with np.errstate(all="ignore"):
        threshold = np.log(np.finfo(np.float32).eps) + 2
        softplus = np.where(v > -threshold, v, np.where(v < threshold, np.exp(v), np.log1p(np.exp(v))))
        return {"x": ACT_X}, {
            "relu6:0": np.clip(ACT_X, 0, 6), "elu:0": np.where(v < 0, np.expm1(v), v).astype(np.float32),
            "leaky:0": np.where(v > 0, v, v * np.float64(np.float32(0.2))).astype(np.float32),
            "leaky01:0": np.where(v > 0, v, v * np.float64(np.float32(0.01))).astype(np.float32),
            "softplus:0": softplus.astype(np.float32)}


@case("relu6_int32_rsqrt", "Relu6 in int32, and Rsqrt in float32 and float64 (inf at 0, nan below).")
def _():
    n, x = i32(-5, 0, 3, 6, 9), f32(4, 2, 0.01, 0, -1, INF)
    tf.nn.relu6(feed("n", n), name="r6")
    tf.rsqrt(feed("x", x), name="r")
    tf.rsqrt(feed("x64", x.astype(np.float64)), name="r64")
    with np.errstate(all="ignore"):
        inv = 1 / np.sqrt(x.astype(np.float64))
    return {"n": n, "x": x, "x64": x.astype(np.float64)}, {"r6:0": i32(0, 0, 3, 6, 6), "r:0": inv.astype(np.float32),
                                                             "r64:0": inv}


DIV_A = i32(-7, 7, -7, 7, 0, 6, -6, 2147483647, -2147483648, -1)
DIV_B = i32(2, 2, -2, -2, 3, -4, 4, 3, 7, 5)


@case("floor_div_mod_int", "FloorDiv (//) rounds toward -inf, FloorMod (%) takes y's sign, Div truncates toward "
      "zero, in int32 and uint8.")
def _():
    a, b = feed("a", DIV_A), feed("b", DIV_B)
    tf.identity(a // b, name="fd")
    tf.identity(a % b, name="fm")
    tf.raw_op("Div", a, b, name="div")
    ua, ub = u8(7, 200, 0, 255), u8(2, 3, 5, 16)
    tf.floordiv(feed("ua", ua), feed("ub", ub), name="ufd")
    tf.floormod(feed("ua2", ua), feed("ub2", ub), name="ufm")
    pa, pb = [int(v) for v in DIV_A], [int(v) for v in DIV_B]
    return {"a": DIV_A, "b": DIV_B, "ua": ua, "ub": ub, "ua2": ua, "ub2": ub}, {
        "fd:0": i32(*[p // q for p, q in zip(pa, pb)]), "fm:0": i32(*[p % q for p, q in zip(pa, pb)]),
        "div:0": i32(*[int(p / q) for p, q in zip(pa, pb)]),
        "ufd:0": u8(3, 66, 0, 15), "ufm:0": u8(1, 2, 0, 15)}


@case("floor_div_mod_float", "FloorDiv of floats is floor(x / y) (1 // 0.1 = 10, where numpy says 9); FloorMod "
      "keeps the C remainder's sign when it is zero (-4 mod 2 = -0.0); Div of floats is RealDiv.")
def _():
    a = f32(-4, 4, -7, 7, -7, 7, 0, -0.0, 1, 1, -1, 0, 5.5, -2.5)
    b = f32(2, -2, 2, -2, -2, 2, -3, 3, 0.1, 0, 0, 0, INF, 0.75)
    tf.floordiv(feed("a", a), feed("b", b), name="fd")
    tf.floormod(feed("a2", a), feed("b2", b), name="fm")
    tf.raw_op("Div", feed("a3", a), feed("b3", b), name="div")
    with np.errstate(all="ignore"):
        q = a.astype(np.float64) / b
        fd = np.floor(rounded(np.divide, np.float32, a, b))
        r = np.fmod(a, b)
        fm = np.where((r != 0) & ((b < 0) != (r < 0)), r + b, r)
    return {"a": a, "b": b, "a2": a, "b2": b, "a3": a, "b3": b}, {
        "fd:0": fd.astype(np.float32), "fm:0": fm.astype(np.float32), "div:0": q.astype(np.float32)}


# -- rearranging, slicing and indexing ---------------------------------------------------------------

T234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 12


@case("squeeze_expand_dims", "Squeeze of every size-1 dim and of listed ones (negative too); ExpandDims at 0, -1 "
      "and 1 (an int64 dim).")
def _():
    x = np.arange(6, dtype=np.int32).reshape(1, 2, 1, 3, 1)
    t = feed("x", x)
    tf.squeeze(t, name="all")
    tf.squeeze(t, axis=[0, -1], name="some")
    tf.expand_dims(t, 0, name="e0")
    tf.expand_dims(t, -1, name="elast")
    tf.expand_dims(feed("v", f32(1, 2)), tf.constant(1, dtype=tf.int64), name="e1")
    return {"x": x, "v": f32(1, 2)}, {"all:0": x.reshape(2, 3), "some:0": x.reshape(2, 1, 3), "e0:0": x[None],
                                      "elast:0": x[..., None], "e1:0": f32([1], [2])}


@case("concat_stack_unstack", "ConcatV2 along axis 1 and -1 (int64 axis), Pack along axis 0 and -1, "
      "Unpack along axis 1 (three outputs).")
def _():
    a, b = T234, T234[:, :2] * 2
    ta, tb = feed("a", a), feed("b", b)
    tf.concat([ta, tb, ta], 1, name="c1")
    tf.concat([ta, ta], tf.constant(-1, dtype=tf.int64), name="clast")
    tf.stack([ta, ta * 2], name="s0")
    tf.stack([ta, -ta], axis=-1, name="slast")
    tf.unstack(ta, axis=1, name="u")
    return {"a": a, "b": b}, {
        "c1:0": np.concatenate([a, b, a], 1), "clast:0": np.concatenate([a, a], -1), "s0:0": np.stack([a, a * 2]),
        "slast:0": np.stack([a, -a], -1), "u:0": a[:, 0], "u:1": a[:, 1], "u:2": a[:, 2]}


@case("split_splitv", "Split into equal parts along axis -1, and SplitV by sizes [1, -1, 1] (the -1 takes the rest) "
      "along axis 1.")
def _():
    x = feed("x", T234)
    tf.split(x, 2, axis=-1, name="eq")
    tf.split(x, [1, -1, 1], axis=1, name="by")
    return {"x": T234}, {"eq:0": T234[..., :2], "eq:1": T234[..., 2:], "by:0": T234[:, :1], "by:1": T234[:, 1:2],
                         "by:2": T234[:, 2:]}


@case("slice", "Slice [1,0,1] with size [1,-1,2] (-1: to the end), and an empty slice.")
def _():
    x = feed("x", T234)
    tf.slice(x, [1, 0, 1], [1, -1, 2], name="s")
    tf.slice(x, [0, 3, 0], [2, 0, 4], name="empty")
    return {"x": T234}, {"s:0": T234[1:2, :, 1:3], "empty:0": T234[:, 3:3]}


@case("strided_slice", "StridedSlice through Python indexing: x[1], x[-1, 1:3], x[:, ::-1], x[..., 1], "
      "x[:, None, 1:, ..., ::2], x[0, ..., None, -2], x[:, -1:-4:-2, 5:0:-2] and out-of-range bounds that clamp.")
def _():
    x = feed("x", T234)
    specs = {"i": (1,), "row": (-1, slice(1, 3)), "rev": (slice(None), slice(None, None, -1)),
             "ell": (Ellipsis, 1), "new": (slice(None), None, slice(1, None), Ellipsis, slice(None, None, 2)),
             "new2": (0, Ellipsis, None, -2), "neg": (slice(None), slice(-1, -4, -2), slice(5, 0, -2)),
             "clamp": (slice(-100, 100), slice(2, 100)), "none": (slice(None), slice(2, 1))}
    for name, spec in specs.items():
        tf.identity(x[spec], name=name)
    return {"x": T234}, {f"{name}:0": T234[spec] for name, spec in specs.items()}


@case("strided_slice_masks", "StridedSlice with masks set directly: begin_mask/end_mask ignore the given bounds, "
      "new_axis_mask inserts dims, shrink_axis_mask removes one; int64 indices.")
def _():
    x = feed("x", T234)
    tf.strided_slice(x, [1, 2, 3], [2, 0, 0], [1, -1, 1], begin_mask=0b010, end_mask=0b110, name="m")
    tf.strided_slice(x, [0, 0, 0, 1], [0, 0, 0, 2], [1, 1, 1, 1], new_axis_mask=0b0101, begin_mask=0b0010,
                     end_mask=0b0010, shrink_axis_mask=0b1000, name="n")
    i64_ = tf.constant([0, 1], dtype=tf.int64)
    tf.strided_slice(x, i64_, i64_ + 2, tf.constant([1, 1], dtype=tf.int64), name="w")
    return {"x": T234}, {"m:0": T234[1:2, ::-1, 3:], "n:0": T234[None, :, None, 1], "w:0": T234[0:2, 1:3]}


@case("strided_slice_grad", "StridedSliceGrad writes dy where StridedSlice x[1:, ::-2, None, 0] reads, zeros "
      "elsewhere.")
def _():
    dy = f32(1.5, -2).reshape(1, 2, 1)
    tf.raw_op("StridedSliceGrad", tf.constant([2, 4, 3]), tf.constant([1, 0, 0, 0]), tf.constant([0, 0, 0, 1]),
              tf.constant([1, -2, 1, 1]), feed("dy", dy), begin_mask=2, end_mask=3, new_axis_mask=4,
              shrink_axis_mask=8, name="dx")
    dx = np.zeros((2, 4, 3), np.float32)
    dx[1:, ::-2, 0] = dy[:, :, 0]
    return {"dy": dy}, {"dx:0": dx}


@case("tile_pad", "Tile by [2,1,2] and Pad with [[1,0],[0,2],[1,1]] zeros (int32 paddings and int64 multiples).")
def _():
    x = feed("x", T234)
    tf.tile(x, tf.constant([2, 1, 2], dtype=tf.int64), name="t")
    tf.pad(x, [[1, 0], [0, 2], [1, 1]], name="p")
    return {"x": T234}, {"t:0": np.tile(T234, (2, 1, 2)), "p:0": np.pad(T234, [(1, 0), (0, 2), (1, 1)])}


@case("gather", "GatherV2 along axis 0 with [2,2] indices, axis -1 with int64 indices (repeats), and batch_dims=1.")
def _():
    x = feed("x", T234)
    tf.gather(x, [[1, 0], [0, 1]], name="g0")
    tf.gather(x, tf.constant([3, 0, 3], dtype=tf.int64), axis=-1, name="glast")
    idx = i32([2, 0], [1, 1])
    tf.gather(x, feed("idx", idx), axis=1, batch_dims=1, name="gb")
    return {"x": T234, "idx": idx}, {
        "g0:0": T234[[[1, 0], [0, 1]]], "glast:0": T234[..., [3, 0, 3]],
        "gb:0": np.stack([T234[0, [2, 0]], T234[1, [1, 1]]])}


@case("unsorted_segment_sum", "UnsortedSegmentSum: rows summed into 3 segments; a negative id drops its row, an "
      "empty segment is zero.")
def _():
    d = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = i32(1, -1, 1, 0)
    tf.unsorted_segment_sum(feed("d", d), feed("ids", ids), 4, name="s")
    return {"d": d, "ids": ids}, {"s:0": np.array([d[3], d[0] + d[2], [0, 0], [0, 0]], np.float32)}


@case("identity_n", "IdentityN passes through tensors of different dtypes.")
def _():
    a, b = f32(1.5, -2), i64(2**40, -1)
    tf.identity_n([feed("a", a), feed("b", b)], name="n")
    return {"a": a, "b": b}, {"n:0": a, "n:1": b}


# -- ops TensorFlow's own frozen graphs carry: dropout leftovers, gelu, TF's gradient graphs ---------

@case("erfc", "Erfc in float32 and float64, against Python's math.erfc.")
def _():
    import math
    x = f32(-2.0, -0.5, 0.0, 0.5, 3.0)
    tf.erfc(feed("x", x), name="e")
    return {"x": x}, {"e:0": np.array([math.erfc(v) for v in x.astype(np.float64)], np.float32)}


@case("bias_add_grad_shape_n", "BiasAddGrad sums over every dim but the last; ShapeN gives each input's shape.")
def _():
    g = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t, v = feed("g", g), feed("v", f32(1, 2, 3))
    build("BiasAddGrad", [t], name="db")
    build("ShapeN", [[t, v]], name="shapes")
    return {"g": g, "v": f32(1, 2, 3)}, {"db:0": g.sum(axis=(0, 1)), "shapes:0": i32(2, 3, 4), "shapes:1": i32(3)}


@case("random_uniform", "RandomUniform: float32 [2, 3] in [0, 1) from the generator every graphdef runtime "
      "shares (graphdef/framework/random_feeds.py's spec), seeded by seed 1, seed2 2 and the node's name.",
      skip={"tensorflow": "TensorFlow draws its own (Philox) random values; only graphdef's runtimes share a stream"})
def _():
    build("RandomUniform", [tf.constant([2, 3])], name="u",
          attrs={"dtype": tf.float32, "seed": 1, "seed2": 2})
    # splitmix64 words of the stream (1 << 32 | 2) XOR fnv1a64("u"), top 24 bits, times 2**-24
    from graphdef.framework.random_feeds import words
    mantissas = words((1 << 32) | 2, "u", 6) >> np.uint64(40)
    return {}, {"u:0": (mantissas.astype(np.float64) / 2**24).astype(np.float32).reshape(2, 3)}
