"""Conformance cases: ops TensorFlow's own frozen graphs carry: dropout leftovers, gelu, TF's gradient graphs."""

import math

import numpy as np

import graphdef as tf
from graphdef.ops.registry import build

from .base import case, f32, i32, feed, INF, NAN


# -- ops TensorFlow's own frozen graphs carry: dropout leftovers, gelu, TF's gradient graphs ---------

@case("erfc", "Erfc in float32 and float64, against Python's math.erfc.")
def _():
    import math
    x = f32(-2.0, -0.5, 0.0, 0.5, 3.0)
    tf.erfc(feed("x", x), name="e")
    return {"x": x}, {"e:0": np.array([math.erfc(v) for v in x.astype(np.float64)], np.float32)}


@case("bias_add_grad_shape_n", "BiasAddGrad sums over every dim but the last; ShapeN gives each input's shape.")
def _():
    g = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t, v = feed("g", g), feed("v", f32(1, 2, 3))
    build("BiasAddGrad", [t], name="db")
    build("ShapeN", [[t, v]], name="shapes")
    return {"g": g, "v": f32(1, 2, 3)}, {"db:0": g.sum(axis=(0, 1)), "shapes:0": i32(2, 3, 4), "shapes:1": i32(3)}


@case("random_uniform", "RandomUniform: float32 [2, 3] in [0, 1) from the generator every graphdef runtime "
      "shares (graphdef/framework/random_feeds.py's spec), seeded by seed 1, seed2 2 and the node's name.",
      skip={"tensorflow": "TensorFlow draws its own (Philox) random values; only graphdef's runtimes share a stream"})
def _():
    build("RandomUniform", [tf.constant([2, 3])], name="u",
          attrs={"dtype": tf.float32, "seed": 1, "seed2": 2})
    # splitmix64 words of the stream (1 << 32 | 2) XOR fnv1a64("u"), top 24 bits, times 2**-24
    from graphdef.framework.random_feeds import words
    mantissas = words((1 << 32) | 2, "u", 6) >> np.uint64(40)
    return {}, {"u:0": (mantissas.astype(np.float64) / 2**24).astype(np.float32).reshape(2, 3)}


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("erfc_specials", "Erfc in float32 and float64 over infinities, signed zero, tiny, large and nan inputs: "
      "Python's math.erfc in double, rounded once.")
def _():
    x = np.array([-INF, -3.0, -0.5, -0.0, 1e-30, 0.3, 1.0, 2.5, 9.0, 30.0, INF, NAN])
    x32 = x.astype(np.float32)
    tf.erfc(feed("x", x), name="e64")
    tf.erfc(feed("x32", x32), name="e32")
    expected = np.array([math.erfc(v) for v in x.tolist()])
    return {"x": x, "x32": x32}, {"e64:0": expected, "e32:0": np.array([math.erfc(v) for v in
                                                                          x32.astype(np.float64).tolist()],
                                                                         np.float32)}
