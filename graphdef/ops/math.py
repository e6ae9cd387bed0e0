"""Elementwise arithmetic, reductions, MatMul and Cast, with Tensor's operators."""

import operator

import numpy as np

from graphdef import dtypes
from graphdef.graph import Tensor, get_default_graph
from graphdef.ops.registry import (Attr, build, constant_value, convert_to_tensor,
                                   define, infer_broadcast, lookup, same_as_input)
from graphdef.shapes import TensorShape, show

ARITH = dtypes.NUMERIC
SIGNED = dtypes.SIGNED
FLOATS = dtypes.FLOATS
REAL = dtypes.NUMERIC


def _binary(type_name, kernel, doc, allowed=ARITH):
    return define(type_name, "x: T, y: T -> z: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=infer_broadcast, kernel=kernel)


def _unary(type_name, kernel, doc, allowed=ARITH):
    return define(type_name, "x: T -> y: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed)}, infer=same_as_input(), kernel=kernel)


# operator.* rather than np.* ufuncs: same numpy semantics, far less call overhead on scalars.
ADD = _binary("Add", operator.add, "x + y with numpy broadcasting (TF 1.x graphs).")
ADD_V2 = _binary("AddV2", operator.add, "x + y with numpy broadcasting.")
SUB = _binary("Sub", operator.sub, "x - y with numpy broadcasting.")
MUL = _binary("Mul", operator.mul, "x * y with numpy broadcasting.")
REAL_DIV = _binary("RealDiv", operator.truediv, "x / y for floats, with numpy broadcasting.", FLOATS)
MAXIMUM = _binary("Maximum", np.maximum, "Elementwise max; NaN propagates.")
MINIMUM = _binary("Minimum", np.minimum, "Elementwise min; NaN propagates.")
POW = _binary("Pow", operator.pow, "x ** y; integer x to a negative integer power is an error.")

NEG = _unary("Neg", operator.neg, "-x.", SIGNED)
SQUARE = _unary("Square", np.square, "x * x.")
SQRT = _unary("Sqrt", np.sqrt, "Square root; NaN below zero.", FLOATS)
EXP = _unary("Exp", np.exp, "e ** x.", FLOATS)
LOG = _unary("Log", np.log, "Natural log; -inf at 0, NaN below zero.", FLOATS)
ABS = _unary("Abs", np.abs, "|x|.", SIGNED)
SIGMOID = _unary("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), "1 / (1 + exp(-x)).", FLOATS)
TANH = _unary("Tanh", np.tanh, "Hyperbolic tangent.", FLOATS)
RELU = _unary("Relu", lambda x: np.maximum(x, 0), "max(x, 0); NaN propagates.", REAL)


# -- reductions -----------------------------------------------------------------------

def normalize_axes(axes, ndim):
    """Reduction axes (scalar or 1-D, negatives allowed) -> sorted tuple; raises on bad ones."""
    out = []
    for a in np.ravel(axes).tolist():
        if not -ndim <= a < max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        a = a % ndim if ndim else 0
        if a in out:
            raise ValueError(f"axis {a} is listed twice")
        out.append(a)
    return tuple(sorted(out)) if ndim else ()


def _infer_reduction(ctx):
    x = ctx.shape(0)
    keep = ctx.attrs["keep_dims"]
    axes = constant_value(ctx.inputs[1])
    if x.ndims is None:
        return [TensorShape(None)]
    if axes is None:
        return [TensorShape([None] * x.ndims) if keep else TensorShape(None)]
    try:
        axes = normalize_axes(axes, x.ndims)
    except ValueError as e:
        raise ctx.error(f"{e} (input shape {show(x)})") from None
    if keep:
        return [TensorShape([1 if i in axes else d for i, d in enumerate(x.dims)])]
    return [TensorShape([d for i, d in enumerate(x.dims) if i not in axes])]


def _sum(x, axes, *, keep_dims):
    x = np.asarray(x)
    return np.sum(x, axis=normalize_axes(axes, x.ndim), dtype=x.dtype, keepdims=keep_dims)


def _mean(x, axes, *, keep_dims):
    x = np.asarray(x)
    axes = normalize_axes(axes, x.ndim)
    if x.dtype.kind in "iu":  # TF divides integers with truncation
        total = np.sum(x, axis=axes, dtype=x.dtype, keepdims=keep_dims)
        count = int(np.prod([x.shape[a] for a in axes]))
        if count == 0:
            raise ValueError("mean of an empty integer reduction")
        return (np.sign(total) * (np.abs(total) // count)).astype(x.dtype)
    return np.mean(x, axis=axes, dtype=x.dtype, keepdims=keep_dims)


def _max(x, axes, *, keep_dims):
    x = np.asarray(x)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    return np.max(x, axis=normalize_axes(axes, x.ndim), keepdims=keep_dims, initial=lowest)


def _reduction(type_name, kernel, doc, allowed=ARITH):
    return define(type_name, "input: T, reduction_indices: Tidx -> output: T", doc=doc,
                  attrs={"keep_dims": Attr("bool", False), "T": Attr("type", allowed=allowed),
                         "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
                  infer=_infer_reduction, kernel=kernel)


SUM = _reduction("Sum", _sum, "Sum over the axes given as a tensor; keep_dims keeps them as size 1.")
MEAN = _reduction("Mean", _mean, "Mean over the axes; integer means truncate, as in TF.")
MAX = _reduction("Max", _max, "Max over the axes; an empty reduction gives the lowest value.")


# -- MatMul and Cast ------------------------------------------------------------------

def _infer_matmul(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    for s, side in ((a, "a"), (b, "b")):
        if s.ndims not in (None, 2):
            raise ctx.error(f"input {side} must be a matrix, got shape {show(s)}")
    if a.ndims is None or b.ndims is None:
        return [TensorShape([None, None])]
    m, k = reversed(a.dims) if ctx.attrs["transpose_a"] else a.dims
    k2, n = reversed(b.dims) if ctx.attrs["transpose_b"] else b.dims
    if k is not None and k2 is not None and k != k2:
        flags = "".join(f", {f}=True" for f in ("transpose_a", "transpose_b") if ctx.attrs[f])
        raise ctx.error(f"cannot multiply {show(a)} by {show(b)}{flags}: inner dimensions {k} and {k2} differ")
    return [TensorShape([m, n])]


def _matmul(a, b, *, transpose_a, transpose_b):
    if np.ndim(a) != 2 or np.ndim(b) != 2:
        raise ValueError(f"MatMul needs matrices, got shapes {list(np.shape(a))} and {list(np.shape(b))}")
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


MATMUL = define(
    "MatMul", "a: T, b: T -> product: T",
    doc="Matrix product of two 2-D tensors, optionally transposing either first.",
    attrs={"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
           "T": Attr("type", allowed=ARITH)},
    infer=_infer_matmul, kernel=_matmul)


def _cast(x, *, DstT):  # noqa: N803 - TF's attr name
    return np.asarray(x).astype(DstT.np)


CAST = define(
    "Cast", "x: SrcT -> y: DstT",
    doc="Converts the element type; float -> int truncates toward zero, x -> bool is x != 0.",
    attrs={"SrcT": Attr("type"), "DstT": Attr("type"), "Truncate": Attr("bool", False)},
    infer=same_as_input(), kernel=_cast)


# -- builders -------------------------------------------------------------------------

def _op(type_name, default_name):
    def builder(x, y, name=None):
        return build(type_name, [x, y], name=name, default_name=default_name).outputs[0]
    builder.__name__ = default_name.lower()
    builder.__doc__ = lookup(type_name).doc
    return builder


def _op1(type_name, default_name):
    def builder(x, name=None):
        return build(type_name, [x], name=name, default_name=default_name).outputs[0]
    builder.__doc__ = lookup(type_name).doc
    return builder


add = _op("AddV2", "Add")
subtract = _op("Sub", "Sub")
multiply = _op("Mul", "Mul")
maximum = _op("Maximum", "Maximum")
minimum = _op("Minimum", "Minimum")
pow = _op("Pow", "Pow")  # noqa: A001 - TF's name
negative = _op1("Neg", "Neg")
square = _op1("Square", "Square")
sqrt = _op1("Sqrt", "Sqrt")
exp = _op1("Exp", "Exp")
log = _op1("Log", "Log")
abs = _op1("Abs", "Abs")  # noqa: A001 - TF's name
sigmoid = _op1("Sigmoid", "Sigmoid")
tanh = _op1("Tanh", "Tanh")
relu = _op1("Relu", "Relu")

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


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    return build("MatMul", [a, b], name=name, default_name="MatMul",
                 attrs={"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}).outputs[0]


def cast(x, dtype, name=None):
    """Converts `x` to `dtype`; a no-op (no node) when it already has it."""
    x = convert_to_tensor(x)
    dtype = dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    return build("Cast", [x], name=name, default_name="Cast", attrs={"DstT": dtype}).outputs[0]


def _reduce(type_name, default_name):
    def reducer(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        x = convert_to_tensor(input_tensor)
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else keep_dims)
        if axis is None:
            if x.shape.ndims is None:
                raise ValueError(f"{reducer.__name__}: '{x.name}' has unknown rank; pass axis explicitly")
            from graphdef.ops.array import constant
            axis = constant(list(range(x.shape.ndims)), dtype=dtypes.int32)
        return build(type_name, [x, axis], name=name, default_name=default_name,
                     attrs={"keep_dims": keep}).outputs[0]
    reducer.__name__ = f"reduce_{default_name.lower()}"
    return reducer


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")


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
