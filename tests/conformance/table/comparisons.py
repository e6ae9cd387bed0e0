"""Conformance cases: comparisons, logic and selection."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, feed, INF, NAN


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
