"""Conformance cases: training: gradient ops and ApplyGradientDescent, chained by control dependencies."""

import numpy as np

import graphdef as tf

from .base import case, f32, feed


# -- training: gradient ops and ApplyGradientDescent, chained by control dependencies -------------

@case("apply_gradient_descent", "ApplyGradientDescent on an initialised [2] variable: [1, 2] - 0.5 * [2, -4] = [0, 4].")
def _():
    v = tf.Variable(tf.constant([1.0, 2.0]), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(0.5), tf.constant([2.0, -4.0]), name="y")
    return {}, {"y:0": f32(0.0, 4.0)}


@case("apply_gradient_descent_scalar", "ApplyGradientDescent on an initialised float64 scalar: 3 - 0.25 * 2 = 2.5.")
def _():
    v = tf.Variable(tf.constant(3.0, dtype=tf.float64), name="v")
    with tf.control_dependencies([v.initializer]):
        tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(0.25, dtype=tf.float64),
                  tf.constant(2.0, dtype=tf.float64), name="y")
    return {}, {"y:0": np.float64(2.5)}


STEPS, RATE = 3, 0.05
TRAIN_X, TRAIN_T = f32(1.0, 2.0, -1.0), f32(2.0, 3.0, -2.5)


def _train_oracle():
    """Gradient descent on sum((w * x - t)^2) by hand, in float64: dL/dw = sum(2 (w x - t) x)."""
    w = 0.5
    x, t = TRAIN_X.astype(np.float64), TRAIN_T.astype(np.float64)
    first_loss = np.sum((w * x - t) ** 2)
    for _ in range(STEPS):
        w = w - RATE * np.sum(2 * (w * x - t) * x)
    return np.float32(first_loss), np.float32(w)


@case("train_steps", f"{STEPS} gradient-descent steps on sum((w * x - t)^2), scalar w, in one run: tf.gradients "
      "through broadcasting, ApplyGradientDescent, each step reading w after the previous update.")
def _():
    v = tf.Variable(tf.constant(0.5), name="w")
    x, t = feed("x", TRAIN_X), feed("t", TRAIN_T)
    with tf.control_dependencies([v.initializer]):
        w = tf.identity(v.op.outputs[0], name="w0")
    for step in range(STEPS):
        loss = tf.reduce_sum(tf.square(w * x - t), name=f"loss{step}")
        (grad,) = tf.gradients(loss, [w])
        update = tf.raw_op("ApplyGradientDescent", v.op.outputs[0], tf.constant(RATE), grad, name=f"step{step}")
        with tf.control_dependencies([update]):
            w = tf.identity(v.op.outputs[0], name=f"w{step + 1}")
    first_loss, learned = _train_oracle()
    return {"x": TRAIN_X, "t": TRAIN_T}, {f"w{STEPS}:0": learned, "loss0:0": first_loss}
