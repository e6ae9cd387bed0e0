"""Comparisons, logical ops and selection: bool-valued or bool-driven, never differentiable
in their condition."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, builder, define, infer_broadcast
from graphdef.framework.shapes import show
from graphdef.framework.graph import Tensor
from graphdef.framework.shapes import broadcast
from graphdef.ops import array as array_ops
from graphdef.ops import math as math_ops

_ORDERED = dtypes.NUMERIC


def _comparison(type_name, kernel, doc, allowed=_ORDERED, extra_attrs=None):
    attrs = {"T": Attr("type", allowed=allowed)}
    attrs.update(extra_attrs or {})
    return define(type_name, "x: T, y: T -> z: bool", doc=doc, attrs=attrs, infer=infer_broadcast,
                  kernel=kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _equality(compare):
    # incompatible_shape_error is TF's attr; shapes are checked at build time either way
    def kernel(x, y, *, incompatible_shape_error):
        return compare(x, y)
    return kernel


_ALL = frozenset(dtypes.ALL)
EQUAL = _comparison("Equal", _equality(np.equal), "x == y elementwise, with broadcasting.", _ALL,
                    {"incompatible_shape_error": Attr("bool", True)})
NOT_EQUAL = _comparison("NotEqual", _equality(np.not_equal), "x != y elementwise, with broadcasting.", _ALL,
                        {"incompatible_shape_error": Attr("bool", True)})
GREATER = _comparison("Greater", np.greater, "x > y elementwise, with broadcasting.")
GREATER_EQUAL = _comparison("GreaterEqual", np.greater_equal, "x >= y elementwise, with broadcasting.")
LESS = _comparison("Less", np.less, "x < y elementwise, with broadcasting.")
LESS_EQUAL = _comparison("LessEqual", np.less_equal, "x <= y elementwise, with broadcasting.")

LOGICAL_AND = define("LogicalAnd", "x: bool, y: bool -> z: bool", doc="x and y elementwise.",
                     infer=infer_broadcast, kernel=np.logical_and, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
LOGICAL_OR = define("LogicalOr", "x: bool, y: bool -> z: bool", doc="x or y elementwise.",
                    infer=infer_broadcast, kernel=np.logical_or, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
LOGICAL_NOT = define("LogicalNot", "x: bool -> y: bool", doc="not x elementwise.",
                     infer=lambda ctx: [ctx.shape(0)], kernel=np.logical_not, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_select_v2(ctx):
    inner = broadcast(ctx.shape(0), ctx.shape(1))
    shape = None if inner is None else broadcast(inner, ctx.shape(2))
    if shape is None:
        raise ctx.error(f"condition {show(ctx.shape(0))}, t {show(ctx.shape(1))} and e {show(ctx.shape(2))} "
                        "cannot be broadcast together")
    return [shape]


def _select_grad(op, g):
    condition, t, e = op.inputs
    zero = array_ops.zeros_like(g)
    return [None, math_ops.unbroadcast(select_v2(condition, g, zero), t),
            math_ops.unbroadcast(select_v2(condition, zero, g), e)]


SELECT_V2 = define(
    "SelectV2", "condition: bool, t: T, e: T -> output: T",
    doc="t where condition, else e; all three broadcast together (numpy.where).",
    attrs={"T": Attr("type")}, infer=_infer_select_v2, kernel=np.where, grad=_select_grad, numerics=EXACT)


def _infer_select(ctx):
    c, t, e = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if not t.is_compatible_with(e):
        raise ctx.error(f"t {show(t)} and e {show(e)} must have the same shape")
    if c.ndims not in (None, 0) and t.ndims is not None and not (
            c.is_compatible_with(t) or (c.ndims == 1 and c.dims[0] in (None, t.dims[0] if t.dims else None))):
        raise ctx.error(f"condition {show(c)} must be a scalar, a vector over t's first dim, or t's shape {show(t)}")
    return [t.merge_with(e)]


def _select(condition, t, e):
    condition = np.asarray(condition)
    if np.shape(t) != np.shape(e):
        raise ValueError(f"t {show(np.shape(t))} and e {show(np.shape(e))} must have the same shape")
    if condition.ndim and condition.shape != np.shape(t) and not (
            condition.ndim == 1 and np.ndim(t) > 1 and condition.shape[0] == np.shape(t)[0]):
        raise ValueError(f"condition {show(condition.shape)} must be a scalar, a vector over t's first dim, "
                         f"or t's shape {show(np.shape(t))}")
    if condition.ndim == 1 and np.ndim(t) > 1:  # a vector picks whole rows
        condition = condition.reshape((-1,) + (1,) * (np.ndim(t) - 1))
    return np.where(condition, t, e)


SELECT = define(
    "Select", "condition: bool, t: T, e: T -> output: T",
    doc="TF1's select: t where condition, else e; condition is a scalar, a vector over dim 0, or t's shape.",
    attrs={"T": Attr("type")}, infer=_infer_select, kernel=_select,
    grad=lambda op, g: _select_v1_grad(op, g), numerics=EXACT)


def _select_v1_grad(op, g):
    condition = op.inputs[0]
    zero = array_ops.zeros_like(g)
    return [None, select(condition, g, zero), select(condition, zero, g)]


# -- builders -------------------------------------------------------------------------------

def _builder(type_name, default_name):
    return builder(type_name, default_name, 2)


equal = _builder("Equal", "Equal")
not_equal = _builder("NotEqual", "NotEqual")
greater = _builder("Greater", "Greater")
greater_equal = _builder("GreaterEqual", "GreaterEqual")
less = _builder("Less", "Less")
less_equal = _builder("LessEqual", "LessEqual")
logical_and = _builder("LogicalAnd", "LogicalAnd")
logical_or = _builder("LogicalOr", "LogicalOr")


def logical_not(x, name=None):
    return build("LogicalNot", [x], name=name, default_name="LogicalNot").outputs[0]


def select_v2(condition, x, y, name=None):
    """tf.where(condition, x, y): elementwise choice with broadcasting."""
    return build("SelectV2", [condition, x, y], name=name, default_name="SelectV2").outputs[0]


where = select_v2


def select(condition, x, y, name=None):
    return build("Select", [condition, x, y], name=name, default_name="Select").outputs[0]


def _install_operators():
    for dunder, function, name in (("lt", less, "Less"), ("le", less_equal, "LessEqual"),
                                   ("gt", greater, "Greater"), ("ge", greater_equal, "GreaterEqual")):
        setattr(Tensor, f"__{dunder}__", (lambda b, n: lambda self, other: b(self, other, name=n))(function, name))
    Tensor.__and__ = lambda self, other: logical_and(self, other)
    Tensor.__or__ = lambda self, other: logical_or(self, other)
    Tensor.__invert__ = lambda self: logical_not(self)


_install_operators()
