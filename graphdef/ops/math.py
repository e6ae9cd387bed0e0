"""Binary elementwise arithmetic, division, AddN and Cast, with Tensor's operators.

Unary math, reductions and MatMul live in math_unary.py, reductions.py and matmul.py; their
builders are re-exported here, so `math_ops.reduce_sum` and the tf.* namespaces keep working.
"""

import operator

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.graph import Tensor, get_default_graph
from graphdef.framework.numerics import EXACT, EXACT_BUT_ZERO_SIGN, elementwise_ulps, tensor_ulps
from graphdef.ops.registry import (NOT_DIFFERENTIABLE, Attr, build, builder, convert_to_tensor, define,
                                   infer_broadcast, same_as_input)
from graphdef.framework.shapes import TensorShape
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops
from graphdef.ops.math_unary import (ARITH, FLOATS, SIGNED, _infer_same_shapes, _same_shapes,  # noqa: F401
                                     abs, erfc, exp, log, log1p, negative, relu, rsqrt, sigmoid, sign, sqrt,
                                     square, tanh)
from graphdef.ops.reductions import (argmax, argmin, normalize_axes, reduce_max, reduce_mean,  # noqa: F401
                                     reduce_min, reduce_prod, reduce_sum)
from graphdef.ops.matmul import matmul  # noqa: F401


def _binary(type_name, kernel, doc, grad, allowed=ARITH, *, numerics):
    return define(type_name, "x: T, y: T -> z: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=infer_broadcast, kernel=kernel,
                  grad=_broadcasting(grad) if callable(grad) else grad, numerics=numerics)


def _broadcasting(grad):
    """Wraps a binary op's gradient so each side is summed back to its own (broadcast) shape."""
    def wrapped(op, g):
        x, y = op.inputs
        gx, gy = grad(op, g, x, y)
        if not (x.shape.is_fully_defined() and y.shape.is_fully_defined()):
            return _unbroadcast_at_run_time(x, y, gx, gy)
        return [None if gx is None else unbroadcast(gx, x), None if gy is None else unbroadcast(gy, y)]
    return wrapped


def _unbroadcast_at_run_time(x, y, gx, gy):
    """TF's own form for shapes known only at run time: BroadcastGradientArgs, Sum, Reshape."""
    sx, sy = array_ops.shape_of(x), array_ops.shape_of(y)
    rx, ry = build("BroadcastGradientArgs", [sx, sy], default_name="BroadcastGradientArgs").outputs
    return [None if gx is None else array_ops.reshape(reduce_sum(gx, rx), sx),
            None if gy is None else array_ops.reshape(reduce_sum(gy, ry), sy)]


def _broadcast_gradient_args(s0, s1):
    dtype = np.asarray(s0).dtype
    s0, s1 = [int(d) for d in np.ravel(s0)], [int(d) for d in np.ravel(s1)]
    n = max(len(s0), len(s1))
    a, b = [1] * (n - len(s0)) + s0, [1] * (n - len(s1)) + s1
    for p, q in zip(a, b):
        if p != q and p != 1 and q != 1:
            raise ValueError(f"shapes {s0} and {s1} are not broadcast-compatible")
    if s0 == s1:  # TF's fast path: nothing to reduce
        return np.array([], dtype=dtype), np.array([], dtype=dtype)
    # as TF does, every size-1 (or missing) dim is listed, even where both sides are 1
    r0 = [i for i, p in enumerate(a) if p == 1]
    r1 = [i for i, q in enumerate(b) if q == 1]
    return np.array(r0, dtype=dtype), np.array(r1, dtype=dtype)


BROADCAST_GRADIENT_ARGS = define(
    "BroadcastGradientArgs", "s0: T, s1: T -> r0: T, r1: T",
    doc="For shapes s0, s1 broadcast together: the axes each side's gradient must be summed over.",
    attrs={"T": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=lambda ctx: [TensorShape([None]), TensorShape([None])],
    kernel=_broadcast_gradient_args, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def unbroadcast(g, x):
    """Sums `g`, shaped like a broadcast result, over the axes broadcasting added to `x`."""
    gs, xs = g.shape, x.shape
    if gs.is_fully_defined() and gs == xs:
        return g
    if gs.ndims is None or xs.ndims is None:
        raise NotImplementedError(f"gradient through broadcasting needs known ranks ('{x.name}')")
    lead = gs.ndims - xs.ndims
    axes = list(range(lead)) + [lead + i for i, d in enumerate(xs.dims)
                                if d == 1 and gs.dims[lead + i] != 1]
    if axes:
        g = reduce_sum(g, axis=axes, keepdims=True)
    if lead or (axes and not xs.is_fully_defined()):
        g = array_ops.reshape(g, array_ops.shape_of(x))
    return g


def _into_first(ufunc, plain):
    """A binary kernel that, given out= (the Session donating x, which nothing reads afterwards),
    writes its result there when the result has x's shape and dtype: a residual add or a scaling
    of an activation then costs no new array (a fresh one is page-faulted in, about twice the
    time of the arithmetic). The same ufunc either way, so the same bits."""
    def kernel(x, y, *, out=None):
        if (out is None or getattr(y, "dtype", None) != out.dtype
                or np.broadcast_shapes(out.shape, np.shape(y)) != out.shape):
            return plain(x, y)
        return ufunc(x, y, out=out)
    kernel.__name__ = f"_{ufunc.__name__}"
    kernel.plain = plain  # what a step that never donates calls: no wrapper on its path (scalars)
    return kernel


# operator.* rather than np.* ufuncs: same numpy semantics, far less call overhead on scalars.
ADD = _binary("Add", operator.add, "x + y with numpy broadcasting (TF 1.x graphs).",
               lambda op, g, x, y: (g, g), numerics=EXACT)
ADD_V2 = _binary("AddV2", _into_first(np.add, operator.add), "x + y with numpy broadcasting.",
                 lambda op, g, x, y: (g, g), numerics=EXACT)
SUB = _binary("Sub", _into_first(np.subtract, operator.sub), "x - y with numpy broadcasting.",
              lambda op, g, x, y: (g, negative(g)), numerics=EXACT)
MUL = _binary("Mul", _into_first(np.multiply, operator.mul), "x * y with numpy broadcasting.",
               lambda op, g, x, y: (multiply(g, y), multiply(x, g)), numerics=EXACT)
REAL_DIV = _binary("RealDiv", operator.truediv, "x / y for floats, with numpy broadcasting.",
                   lambda op, g, x, y: (g / y, negative(g) * x / square(y)), FLOATS, numerics=EXACT)


def _choose(pick_x):
    """Maximum/Minimum send the gradient to the side that won (x on ties, as TF does)."""
    def grad(op, g, x, y):
        x_wins = pick_x(x, y)
        zero = array_ops.zeros_like(g)
        return compare_ops.select_v2(x_wins, g, zero), compare_ops.select_v2(x_wins, zero, g)
    return grad


def _ge(x, y):
    return compare_ops.greater_equal(x, y)


def _le(x, y):
    return compare_ops.less_equal(x, y)


MAXIMUM = _binary("Maximum", np.maximum, "Elementwise max; NaN propagates.", _choose(_ge), numerics=EXACT_BUT_ZERO_SIGN)
MINIMUM = _binary("Minimum", np.minimum, "Elementwise min; NaN propagates.", _choose(_le), numerics=EXACT_BUT_ZERO_SIGN)


def _squared_difference(x, y):
    d = x - y
    # squared where it is: the difference is a fresh array of its own, and a second fresh one
    # would be page-faulted in
    return np.square(d, out=d) if type(d) is np.ndarray else np.square(d)


SQUARED_DIFFERENCE = _binary("SquaredDifference", _squared_difference, "(x - y) ** 2 with broadcasting.",
                              lambda op, g, x, y: (g * (2 * (x - y)), g * (2 * (y - x))), SIGNED, numerics=EXACT)


_FAST_POW_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
_ARRAY_TYPES = (np.ndarray, np.generic)


def _pow(x, y):
    """x ** y. numpy's float pow is a slow general routine (many multiplies' worth an element),
    and models raise to a constant 2 or 3 (the tanh GELU's x**3). For
    a float32/64 x and a one-element exponent equal to 2.0 or 3.0 this is x*x or (x*x)*x: x*x is
    the correctly rounded square, so equal to pow's; the cube rounds twice (under 2 ulps from the
    true cube, inside Pow's 4), and the signs of zeros and infinities and NaN come out as pow's
    ((-0)**3 is -0, (-inf)**2 is inf). Not x**0.5 as sqrt: pow(-0, 0.5) is +0, pow(-inf, 0.5) +inf."""
    # either side may be a numpy scalar (a Const's or a 0-d result's value)
    if (isinstance(x, _ARRAY_TYPES) and isinstance(y, _ARRAY_TYPES) and y.size == 1
            and x.dtype in _FAST_POW_TYPES and y.dtype == x.dtype):
        e = y.item()
        if e == 2.0 or e == 3.0:
            z = x * x
            if e == 3:
                z = _cube_from_square(x, z, y.reshape(()))
            # a higher-rank exponent adds leading 1s to the shape, as broadcasting would
            return z.reshape((1,) * (y.ndim - x.ndim) + x.shape) if y.ndim > x.ndim else z
    return operator.pow(x, y)


def _cube_from_square(x, z, three):
    if x.dtype != np.float32:  # no float64 cube overflows where (x*x)*x does not
        return np.multiply(z, x, out=z) if type(z) is np.ndarray else z * x
    # A float32 cube less than half an ulp above FLT_MAX rounds down to it, but (x*x)*x overflows
    # where the square rounded up: x = +-6.9814636e12 (every float32 near cbrt(FLT_MAX) checked
    # exactly). The processor's overflow flag, which numpy reads after the loop, says whether any
    # product overflowed, at no cost; then pow answers where a finite x gave inf.
    with np.errstate(over="raise"):
        try:
            return np.multiply(z, x, out=z) if type(z) is np.ndarray else z * x
        except FloatingPointError:
            pass
    with np.errstate(over="ignore"):
        z = (x * x) * x
        return np.where(np.isinf(z) & np.isfinite(x), np.power(x, three), z)


POW = _binary("Pow", _pow, "x ** y; integer x to a negative integer power is an error.",
              lambda op, g, x, y: (g * y * pow(x, y - 1), None), numerics=elementwise_ulps(4))


# -- integer-aware division: TF's three conventions ------------------------------------------------

def _nonzero_divisor(y):
    if np.any(np.asarray(y) == 0):  # TF refuses rather than returning numpy's 0 and a warning
        raise ValueError("integer division by zero")


def _floor_div(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.floor(x / y)  # floor of the rounded quotient, as TF; numpy's // differs (1 // 0.1 is 9)
    _nonzero_divisor(y)
    return np.floor_divide(x, y)


def _floor_mod(x, y):
    if np.asarray(x).dtype.kind == "f":
        # TF's rule: the C remainder, moved into y's sign when it is non-zero, so -4 mod 2 is -0.0
        m = np.fmod(x, y)
        return np.where((m != 0) & ((y < 0) != (m < 0)), m + y, m)
    _nonzero_divisor(y)
    return np.remainder(x, y)


def _div(x, y):
    kind = np.asarray(x).dtype.kind
    if kind == "f":
        return x / y
    _nonzero_divisor(y)
    q = np.floor_divide(x, y)
    if kind == "u":
        return q
    # C++ division truncates toward zero: step floored quotients of inexact, opposite-sign pairs back up
    inexact = (x - q * y != 0) & ((x < 0) != (y < 0))
    return q + inexact.astype(q.dtype)


def _div_grad(op, g, x, y):
    if not x.dtype.is_floating:
        return None, None
    return g / y, negative(g) * x / square(y)


FLOOR_DIV = _binary("FloorDiv", _floor_div, "x // y rounding toward -inf (floor(x / y) for floats); "
                    "integer division by zero is an error.", NOT_DIFFERENTIABLE, numerics=EXACT)
FLOOR_MOD = _binary("FloorMod", _floor_mod, "The remainder of floor division: it has y's sign, as Python's %.",
                    lambda op, g, x, y: (g, negative(g) * floordiv(x, y)), numerics=EXACT)
DIV = _binary("Div", _div, "TF 1.x's x / y: truncating toward zero for integers, like RealDiv for floats.",
              _div_grad, numerics=EXACT)



def _add_n(*inputs):
    _same_shapes("AddN", *inputs)
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total


ADD_N = define(
    "AddN", "inputs: N*T -> sum: T",
    doc="The sum of N tensors of one shape, added left to right.",
    attrs={"N": Attr("int"), "T": Attr("type", allowed=ARITH)},
    infer=_infer_same_shapes, kernel=_add_n, grad=lambda op, g: [g] * len(op.inputs), numerics=tensor_ulps(8))


def _cast(x, *, DstT):  # noqa: N803 - TF's attr name
    return np.asarray(x).astype(DstT.np)


CAST = define(
    "Cast", "x: SrcT -> y: DstT",
    doc="Converts the element type; float -> int truncates toward zero, x -> bool is x != 0.",
    attrs={"SrcT": Attr("type"), "DstT": Attr("type"), "Truncate": Attr("bool", False)},
    infer=same_as_input(), kernel=_cast,
    grad=lambda op, g: [cast(g, op.attrs["SrcT"]) if op.attrs["SrcT"].is_floating and g.dtype.is_floating
                        else None], numerics=EXACT)


# -- builders -------------------------------------------------------------------------

def _op(type_name, default_name):
    return builder(type_name, default_name, 2)


add = _op("AddV2", "Add")
subtract = _op("Sub", "Sub")
multiply = _op("Mul", "Mul")
maximum = _op("Maximum", "Maximum")
minimum = _op("Minimum", "Minimum")
pow = _op("Pow", "Pow")  # noqa: A001 - TF's name
squared_difference = _op("SquaredDifference", "SquaredDifference")
floor_mod = floormod = mod = _op("FloorMod", "FloorMod")
realdiv = _op("RealDiv", "RealDiv")


def floordiv(x, y, name=None):
    """x // y, rounding toward -inf (TF's FloorDiv, also for floats)."""
    with get_default_graph().name_scope(name or "floordiv") as scope:
        return build("FloorDiv", [x, y], name=scope).outputs[0]


floor_div = floordiv


def div(x, y, name=None):
    """TF 1.x's tf.div (Python 2 division): RealDiv for floats, FloorDiv for integers."""
    with get_default_graph().name_scope(name or "div") as scope:
        x, y = _pair(x, y)
        return build("RealDiv" if x.dtype.is_floating else "FloorDiv", [x, y], name=scope).outputs[0]


def add_n(inputs, name=None):
    """The sum of a list of same-shaped tensors."""
    return build("AddN", [list(inputs)], name=name, default_name="AddN").outputs[0]

# int8/16 divide in float32, int32/64 in float64: TF's true-division table.
_TRUEDIV_TYPE = {dtypes.int8: dtypes.float32, dtypes.uint8: dtypes.float32, dtypes.int16: dtypes.float32,
                 dtypes.uint16: dtypes.float32, dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64}


def _pair(x, y):
    """Converts a Python operand to the other operand's dtype, as TF's operators do."""
    if isinstance(x, Tensor) or hasattr(x, "_to_tensor"):
        x = convert_to_tensor(x)
        return x, convert_to_tensor(y, dtype=x.dtype, name="y")
    y = convert_to_tensor(y, name="y")
    return convert_to_tensor(x, dtype=y.dtype, name="x"), y


def truediv(x, y, name=None):
    """x / y; integers are cast to float first (int32 -> float64), so 15 / 4 is 3.75."""
    graph = get_default_graph()
    with graph.name_scope(name or "truediv") as scope:
        x, y = _pair(x, y)
        if x.dtype is not y.dtype:
            raise TypeError(f"divide: x is {x.dtype.name} but y is {y.dtype.name}; cast one side")
        target = _TRUEDIV_TYPE.get(x.dtype)
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return build("RealDiv", [x, y], name=scope).outputs[0]


def divide(x, y, name=None):
    """True division, as `x / y`."""
    return truediv(x, y, name=name)



def cast(x, dtype, name=None):
    """Converts `x` to `dtype`; a no-op (no node) when it already has it."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return build("Cast", [x], name=name, default_name="Cast", attrs={"DstT": dtype}).outputs[0]


# -- Tensor operators, named as TF names them ------------------------------------------

def _operator(type_name, default_name, reflected=False):
    def method(self, other):
        a, b = (other, self) if reflected else (self, other)
        return build(type_name, [a, b], default_name=default_name).outputs[0]
    return method


for _dunder, _type, _name in (("add", "AddV2", "add"), ("sub", "Sub", "sub"), ("mul", "Mul", "mul"),
                              ("pow", "Pow", "pow")):
    setattr(Tensor, f"__{_dunder}__", _operator(_type, _name))
    setattr(Tensor, f"__r{_dunder}__", _operator(_type, _name, reflected=True))
Tensor.__truediv__ = lambda self, other: truediv(self, other)
Tensor.__rtruediv__ = lambda self, other: truediv(other, self)
Tensor.__matmul__ = lambda self, other: matmul(self, other, name="matmul")
Tensor.__rmatmul__ = lambda self, other: matmul(other, self, name="matmul")
Tensor.__neg__ = lambda self: negative(self)
Tensor.__abs__ = lambda self: abs(self)
Tensor.__floordiv__ = lambda self, other: floordiv(self, other)
Tensor.__rfloordiv__ = lambda self, other: floordiv(other, self)
Tensor.__mod__ = _operator("FloorMod", "mod")
Tensor.__rmod__ = _operator("FloorMod", "mod", reflected=True)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max), as TF1 builds it (Minimum, then Maximum)."""
    with get_default_graph().name_scope(name or "clip_by_value") as scope:
        t = convert_to_tensor(t, name="t")
        return maximum(minimum(t, clip_value_max, name="Minimum"), clip_value_min, name=scope)
