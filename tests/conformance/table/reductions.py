"""Conformance cases: reductions."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, i64, u8, feed, INF, NAN


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


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("sum_over_no_axes", "Sum over an empty list of axes is the input unchanged; over [0, 1] it is a scalar.")
def _():
    x = f32([1.5, 2.0], [3.0, 4.25])
    tf.reduce_sum(feed("x", x), axis=tf.constant(np.zeros(0, np.int32)), name="none")
    tf.reduce_sum(feed("x2", x), axis=[0, 1], name="all")
    return {"x": x, "x2": x}, {"none:0": x, "all:0": np.float32(10.75)}


@case("max_nan_and_empty_int16", "Max propagates nan over axis 0; over an empty axis in int16 it is INT16_MIN.")
def _():
    x = f32([1.0, NAN], [3.0, -1.0])
    empty = np.zeros((2, 0), np.int16)
    tf.reduce_max(feed("x", x), axis=0, name="z")
    tf.reduce_max(feed("e", empty), axis=1, name="ze")
    return {"x": x, "e": empty}, {"z:0": f32(3.0, NAN), "ze:0": np.array([-32768, -32768], np.int16)}
