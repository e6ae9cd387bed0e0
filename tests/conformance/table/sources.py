"""Conformance cases: sources, pass-throughs and control flow."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, i64, feed


# -- sources, pass-throughs and control flow ----------------------------------------------

@case("const_only", "A graph of Consts only, no feeds: a float32 scalar and an int32 matrix.")
def _():
    tf.constant(2.5, name="s")
    tf.constant([[1, 2], [3, 4]], name="m")
    return {}, {"s:0": np.float32(2.5), "m:0": i32([1, 2], [3, 4])}


@case("seed_divide", "The seed graph: (15 * 5) / (15 + 5) = 3.75; int32 true division runs in float64.")
def _():
    a = tf.Constant(15, name="a")
    b = tf.Constant(5, name="b")
    prod = tf.multiply(a, b, name="prod")
    total = tf.add(a, b, name="sum")
    tf.divide(prod, total, name="Divide")
    return {}, {"Divide:0": np.float64(3.75), "prod:0": np.int32(75), "sum:0": np.int32(20)}


@case("placeholder_identity", "Identity of a fed placeholder; fetching the fed placeholder itself returns the feed.")
def _():
    x = f32([1.0, -2.0], [0.5, 8.0])
    tf.identity(feed("x", x), name="y")
    return {"x": x}, {"y:0": x, "x:0": x}


@case("scalars", "Scalar placeholders (shape []) fed 0-d values: x * y + x.")
def _():
    x, y = np.float32(1.5), np.float32(-4.0)
    px, py = feed("x", np.asarray(x)), feed("y", np.asarray(y))
    tf.add(tf.multiply(px, py), px, name="z")
    return {"x": np.asarray(x), "y": np.asarray(y)}, {"z:0": np.float32(-4.5)}


@case("placeholder_with_default_unfed", "PlaceholderWithDefault not fed: its default value flows.")
def _():
    p = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [None], name="p")
    tf.identity(p, name="y")
    return {}, {"y:0": f32(1.0, 2.0, 3.0)}


@case("placeholder_with_default_fed", "PlaceholderWithDefault fed with a value of another length than its default.")
def _():
    p = tf.placeholder_with_default(tf.constant([1.0, 2.0, 3.0]), [None], name="p")
    tf.identity(p, name="y")
    fed = f32(7.0, -8.0)
    return {"p": fed}, {"y:0": fed}


@case("stop_gradient", "StopGradient passes its input through unchanged.")
def _():
    x = i64(-(2**40), 3)
    tf.stop_gradient(feed("x", x), name="y")
    return {"x": x}, {"y:0": x}


@case("noop_control_dependency", "A NoOp as a control input: the fetch still computes x + 1.")
def _():
    x = f32(1.0, 2.0)
    px = feed("x", x)
    done = tf.no_op(name="first")
    with tf.control_dependencies([done]):
        tf.add(px, tf.constant(1.0), name="y")
    return {"x": x}, {"y:0": f32(2.0, 3.0)}
