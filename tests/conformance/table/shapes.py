"""Conformance cases: shapes: Reshape, Transpose, Fill."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, feed


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


@case("transpose_rank3_int64_perm",
      "Transpose [2,2,3] by perm [2,0,1] given as int64: output dim i is input dim perm[i].")
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
