"""Conformance cases: shape queries and generators."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, i64, feed, INF, NAN


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
