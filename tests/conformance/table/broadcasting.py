"""Conformance cases: broadcasting and empty dims."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, feed


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


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("pow_broadcast_float32_float64", "Pow of [2,3] by [3] in float32 (a negative base to a fractional power "
      "is nan); in float64 exactly representable powers come out exact: 0**0 = 1, (-2)**3 = -8, 4**-1 = 0.25.")
def _():
    x, y = f32([2.0, 9.0, 4.0], [0.0, -2.0, 1.5]), f32(0.5, -1.0, 3.0)
    x64, y64 = np.array([0.0, -2.0, 4.0, 2.0, -8.0]), np.array([0.0, 3.0, -1.0, 10.0, 1 / 3])
    tf.pow(feed("x", x), feed("y", y), name="z")
    tf.pow(feed("x64", x64), feed("y64", y64), name="z64")
    with np.errstate(all="ignore"):
        expected = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    return ({"x": x, "y": y, "x64": x64, "y64": y64},
            {"z:0": expected, "z64:0": np.array([1.0, -8.0, 0.25, 1024.0, np.nan])})
