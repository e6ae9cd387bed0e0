"""Conformance cases: Cast."""

import numpy as np

import graphdef as tf

from .base import case, f32, f64, i32, i64, u8, feed, INF, NAN


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
