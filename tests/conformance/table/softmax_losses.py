"""Conformance cases: softmax, losses, arg-extremes, one-hot."""

import numpy as np

import graphdef as tf
from graphdef.ops.registry import build

from .base import case, f32, i32, i64, rounded, feed, INF, NAN


# -- softmax, losses, arg-extremes, one-hot ------------------------------------------------------

LOGITS = f32(1.0, 2.0, 3.0, 0.5, -1.0, 0.0, 2.0, 2.0).reshape(2, 4)


def _log_softmax64(x):
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@case("softmax_log_softmax", "Softmax and LogSoftmax over the last axis of [2,4] float32 logits.")
def _():
    x = feed("x", LOGITS)
    tf.nn.softmax(x, name="p")
    tf.nn.log_softmax(x, name="logp")
    log_p = _log_softmax64(LOGITS)
    return {"x": LOGITS}, {"p:0": np.exp(log_p).astype(np.float32), "logp:0": log_p.astype(np.float32)}


@case("softmax_cross_entropy", "SoftmaxCrossEntropyWithLogits: per-row loss and its backprop (softmax - labels).")
def _():
    labels = f32(0, 0, 1, 0, 0.25, 0.25, 0.25, 0.25).reshape(2, 4)
    build("SoftmaxCrossEntropyWithLogits", [feed("x", LOGITS), feed("labels", labels)], name="xent")
    log_p = _log_softmax64(LOGITS)
    return {"x": LOGITS, "labels": labels}, {
        "xent:0": (-(labels * log_p).sum(axis=-1)).astype(np.float32),
        "xent:1": (np.exp(log_p) - labels).astype(np.float32)}


@case("sparse_softmax_cross_entropy", "SparseSoftmaxCrossEntropyWithLogits with int32 labels: loss and backprop.")
def _():
    labels = i32(2, 0)
    build("SparseSoftmaxCrossEntropyWithLogits", [feed("x", LOGITS), feed("labels", labels)], name="xent")
    log_p = _log_softmax64(LOGITS)
    backprop = np.exp(log_p)
    backprop[[0, 1], labels] -= 1
    return {"x": LOGITS, "labels": labels}, {
        "xent:0": (-log_p[[0, 1], labels]).astype(np.float32), "xent:1": backprop.astype(np.float32)}


@case("l2_loss", "L2Loss: sum(x ** 2) / 2 of a [2,3] float32.")
def _():
    x = f32(1, -2, 3, 0.5, 0, -1).reshape(2, 3)
    tf.nn.l2_loss(feed("x", x), name="z")
    return {"x": x}, {"z:0": np.float32(np.sum(x.astype(np.float64) ** 2) / 2)}


@case("argmax_argmin", "ArgMax (int64 and int32 output) and ArgMin along axes 1 and -2; the first index wins ties.")
def _():
    x = f32(3, 1, 3, 0, 5, 5, -1, -1).reshape(2, 4)
    t = feed("x", x)
    tf.argmax(t, 1, name="amax")
    tf.argmax(t, -2, output_type=tf.int32, name="amax0")
    tf.argmin(t, 1, name="amin")
    return {"x": x}, {"amax:0": np.argmax(x, 1).astype(np.int64), "amax0:0": np.argmax(x, 0).astype(np.int32),
                      "amin:0": np.argmin(x, 1).astype(np.int64)}  # numpy also takes the first index on ties


@case("one_hot", "OneHot of int32 indices with depth 3: float32 1/0 on the last axis (index -1 and 3 all off), "
      "and int32 5/-5 on axis 0.")
def _():
    idx = i32(0, 2, -1, 3)
    t = feed("i", idx)
    tf.one_hot(t, 3, name="h")
    tf.one_hot(t, 3, on_value=5, off_value=-5, axis=0, dtype=tf.int32, name="h0")
    h = (idx[:, None] == np.arange(3)).astype(np.float32)
    return {"i": idx}, {"h:0": h, "h0:0": np.where(h.T > 0, 5, -5).astype(np.int32)}


@case("min_prod", "Min (float32, keep_dims) and Prod (int32, all axes) reductions.")
def _():
    x, n = f32(3, -1, 2, 0.5, 7, -4).reshape(2, 3), i32(2, -3, 4, 1, 1, 5).reshape(2, 3)
    tf.reduce_min(feed("x", x), axis=1, keepdims=True, name="mn")
    tf.reduce_prod(feed("n", n), name="pr")
    return {"x": x, "n": n}, {"mn:0": f32(-1, -4).reshape(2, 1), "pr:0": np.int32(-120)}


@case("log1p_squared_difference", "Log1p near zero (accurate where log(1 + x) is not) and SquaredDifference.")
def _():
    x, y = f32(1e-7, 0.5, -0.5, 3.0), f32(0.0, 1.5, 0.5, -1.0)
    tf.log1p(feed("x", x), name="l")
    tf.squared_difference(feed("a", x), feed("b", y), name="d")
    return {"x": x, "a": x, "b": y}, {"l:0": rounded(np.log1p, np.float32, x),
                                     "d:0": rounded(lambda a, b: (a - b) ** 2, np.float32, x, y)}


@case("zeros_ones_like", "ZerosLike and OnesLike keep the shape and dtype (int64 [2,2], float32 [3]).")
def _():
    a, b = i64(1, 2, 3, 4).reshape(2, 2), f32(1.5, NAN, -2)
    tf.zeros_like(feed("a", a), name="z")
    tf.ones_like(feed("b", b), name="o")
    return {"a": a, "b": b}, {"z:0": np.zeros((2, 2), np.int64), "o:0": np.ones(3, np.float32)}


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("min_prod_nan_and_empty", "Min propagates nan (keep_dims); Prod of int32 over all axes and over axis 1; "
      "over an empty axis Prod is 1 and Min the highest value: inf in float64, 65535 in uint16.")
def _():
    x = f32([3.0, -1.0, NAN], [0.5, 7.0, -4.0])
    n = i32([2, -3, 4], [100, 100, 100])
    empty, empty16 = np.zeros((0, 2)), np.zeros((0,), np.uint16)
    tf.reduce_min(feed("x", x), axis=1, keepdims=True, name="mn")
    tf.reduce_prod(feed("n", n), name="pr_all")
    tf.reduce_prod(feed("n2", n), axis=1, name="pr_rows")
    tf.reduce_prod(feed("e", empty), axis=0, name="pr_empty")
    tf.reduce_min(feed("e2", empty), axis=0, name="mn_empty")
    tf.reduce_min(feed("e16", empty16), axis=0, name="mn_empty16")
    return ({"x": x, "n": n, "n2": n, "e": empty, "e2": empty, "e16": empty16},
            {"mn:0": f32([NAN], [-4.0]), "pr_all:0": np.int32(2 * -3 * 4 * 100 ** 3), "pr_rows:0": i32(-24, 100 ** 3),
             "pr_empty:0": np.ones(2), "mn_empty:0": np.full(2, INF), "mn_empty16:0": np.uint16(65535)})


@case("zeros_ones_like_dtypes", "ZerosLike and OnesLike of bool and of an empty uint32 [0,3] keep shape and dtype.")
def _():
    b, e = np.array([True, False]), np.zeros((0, 3), np.uint32)
    tf.zeros_like(feed("b", b), name="zb")
    tf.ones_like(feed("b2", b), name="ob")
    tf.zeros_like(feed("e", e), name="ze")
    tf.ones_like(feed("e2", e), name="oe")
    return ({"b": b, "b2": b, "e": e, "e2": e},
            {"zb:0": np.zeros(2, bool), "ob:0": np.ones(2, bool), "ze:0": e.copy(), "oe:0": np.ones((0, 3), np.uint32)})
