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


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("pow_integers_wrap", "Pow in int32 and int64 keeps the low bits of the power, as TensorFlow's does: "
      "46341**2 and 3**40 wrap.")
def _():
    b32, e32 = i32(2, 3, -2, 0, 7, 46341), i32(10, 3, 3, 0, 1, 2)
    b64, e64 = i64(3, -3, 10), i64(40, 41, 19)
    tf.pow(feed("b32", b32), feed("e32", e32), name="p32")
    tf.pow(feed("b64", b64), feed("e64", e64), name="p64")
    wrapped32 = np.array([int(b) ** int(e) for b, e in zip(b32, e32)], object)
    wrapped64 = np.array([int(b) ** int(e) for b, e in zip(b64, e64)], object)
    # exact Python integers, reduced to the low 32 or 64 bits as two's complement
    low = lambda v, bits: ((v + 2 ** (bits - 1)) % 2 ** bits) - 2 ** (bits - 1)  # noqa: E731
    return ({"b32": b32, "e32": e32, "b64": b64, "e64": e64},
            {"p32:0": np.array([low(v, 32) for v in wrapped32], np.int32),
             "p64:0": np.array([low(v, 64) for v in wrapped64], np.int64)})


@case("sign_more_dtypes", "Sign of float32 specials, float64 -0.0 (gives +0.0) and the int64 extremes. "
      "(TensorFlow's Sign of a subnormal is the subnormal, graphdef's 1: not a case here.)")
def _():
    x = f32(-2.5, 0.0, -0.0, 3.5, -INF, INF, NAN)
    d = np.array([-0.0, 2.0])
    n = i64(-(2**63), 2**63 - 1, 0)
    tf.sign(feed("x", x), name="z")
    tf.sign(feed("d", d), name="zd")
    tf.sign(feed("n", n), name="zn")
    return {"x": x, "d": d, "n": n}, {"z:0": f32(-1.0, 0.0, 0.0, 1.0, -1.0, 1.0, NAN),
                                      "zd:0": np.array([0.0, 1.0]), "zn:0": i64(-1, 1, 0)}


@case("add_n_order_wrap_empty", "AddN sums left to right ((1e8 + -1e8) + 1 is 1 in float32, where 1e8 + (-1e8 + 1) "
      "would be 0); in int32 it wraps; empty inputs give an empty sum.")
def _():
    a, b = f32(1e8, 0.1, 1.0), f32(-1e8, 0.2, 2.0**-24)
    c, d = f32(1.0, 0.3, 2.0**-24), f32(0.5, -0.6, 0.0)
    ia, ib = i32([2147483647, -5]), i32([1, 5])
    empty = np.zeros((0, 2))
    tf.add_n([feed("a", a), feed("b", b), feed("c", c), feed("d", d)], name="z")
    tf.add_n([feed("ia", ia), feed("ib", ib), feed("ib2", ib)], name="zi")
    tf.add_n([feed("e", empty), feed("e2", empty)], name="ze")
    expected = a
    for term in (b, c, d):   # each partial sum rounded once to float32, as the op rounds it
        expected = (expected.astype(np.float64) + term).astype(np.float32)
    wide = ia.astype(np.int64) + ib + ib
    return ({"a": a, "b": b, "c": c, "d": d, "ia": ia, "ib": ib, "ib2": ib, "e": empty, "e2": empty},
            {"z:0": expected, "zi:0": wide.astype(np.int32), "ze:0": empty})


@case("relu_grad_int16_and_signed_zero", "ReluGrad at -0.0 and nan features gives 0; a negative gradient passes "
      "where features > 0; in int16 too.")
def _():
    g, x = f32(1.0, 2.0, 3.0, 4.0, 5.0, -6.0), f32(-1.0, 0.0, -0.0, 0.5, NAN, 2.0)
    gi, xi = np.array([[5, -5], [7, 9]], np.int16), np.array([[1, 0], [-3, 32767]], np.int16)
    tf.raw_op("ReluGrad", feed("g", g), feed("x", x), name="z")
    tf.raw_op("ReluGrad", feed("gi", gi), feed("xi", xi), name="zi")
    return ({"g": g, "x": x, "gi": gi, "xi": xi},
            {"z:0": f32(0.0, 0.0, 0.0, 4.0, 0.0, -6.0), "zi:0": np.array([[5, 0], [0, 9]], np.int16)})


@case("range_more", "Range by TF's count ceil((limit - start) / delta) in integers: int32 with a step past "
      "the limit, counting down, int64 beyond 2**32.")
def _():
    # (TF refuses a delta that points away from the limit, so no empty range from that here)
    rows = [("i_skip", np.int32, -7, 8, 3), ("i_down", np.int32, 5, -6, -4),
            ("i64", np.int64, -(2**40), 2**40, 2**38)]
    expected = {}
    for name, dtype, start, limit, delta in rows:
        tf.raw_op("Range", tf.constant(start, tf.as_dtype(dtype)), tf.constant(limit, tf.as_dtype(dtype)),
                  tf.constant(delta, tf.as_dtype(dtype)), Tidx=tf.as_dtype(dtype), name=name)
        count = max(0, -(-(limit - start) // delta))   # ceil in exact integers
        expected[f"{name}:0"] = np.array([start + i * delta for i in range(count)], dtype)
    return {}, expected


@case("broadcast_to_dtypes", "BroadcastTo of bool, int8, uint64, int16 and int64 values, shapes given as int32 "
      "and int64: rank grows, size-1 dims stretch, a 0 dim stays empty.")
def _():
    rows = [("b", np.array([True, False]), [3, 1, 2]),
            ("i8", np.arange(6, dtype=np.int8).reshape(2, 1, 3), [4, 2, 5, 3]),
            ("u64", np.array([[7]], np.uint64), [0, 3]), ("i16", np.zeros((0, 1), np.int16), [2, 0, 4]),
            ("i64", np.array([1, 2], np.int64), [2]), ("f64", np.array(4.5), [2, 2])]
    feeds, expected = {}, {}
    for name, x, shape in rows:
        fed = feed(name, x)
        for shape_dtype in (tf.int32, tf.int64):
            out = f"{name}_{shape_dtype.name}"
            tf.broadcast_to(fed, tf.constant(shape, dtype=shape_dtype), name=out)
            expected[f"{out}:0"] = np.broadcast_to(x, shape).copy()
        feeds[name] = x
    return feeds, expected


@case("broadcast_gradient_args_int64_and_empty", "BroadcastGradientArgs with int64 shapes, and with a 0 dim: "
      "[0,4] vs [1,4] sums the second side over axis 0.")
def _():
    feeds, expected = {}, {}
    for i, (s0, s1, r0, r1, dtype) in enumerate([([2, 1, 3], [3], [1], [0, 1], np.int64),
                                                 ([0, 4], [1, 4], [], [0], np.int32),
                                                 ([0, 4], [1, 4], [], [0], np.int64)]):
        a, b = np.array(s0, dtype), np.array(s1, dtype)
        tf.raw_op("BroadcastGradientArgs", feed(f"s0_{i}", a), feed(f"s1_{i}", b), name=f"args_{i}")
        feeds.update({f"s0_{i}": a, f"s1_{i}": b})
        expected.update({f"args_{i}:0": np.array(r0, dtype), f"args_{i}:1": np.array(r1, dtype)})
    return feeds, expected
