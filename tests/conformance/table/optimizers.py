"""Conformance cases: the other optimizers' update ops."""

import numpy as np

import graphdef as tf

from .base import case, f32


# -- the other optimizers' update ops ------------------------------------------------------------

@case("apply_momentum", "ApplyMomentum twice (plain, then Nesterov) on a [2] float64 variable and its accumulator.")
def _():
    v = tf.Variable(tf.constant([1.0, -2.0], dtype=tf.float64), name="v")
    acc = tf.Variable(tf.constant([0.5, 0.5], dtype=tf.float64), name="acc")
    grad = tf.constant([2.0, -4.0], dtype=tf.float64)
    lr, mom = tf.constant(0.1, dtype=tf.float64), tf.constant(0.9, dtype=tf.float64)
    with tf.control_dependencies([v.initializer, acc.initializer]):
        first = tf.raw_op("ApplyMomentum", v.op.outputs[0], acc.op.outputs[0], lr, grad, mom, name="m1")
    with tf.control_dependencies([first]):
        tf.raw_op("ApplyMomentum", v.op.outputs[0], acc.op.outputs[0], lr, grad, mom, use_nesterov=True, name="m2")
    w, a, g = np.array([1.0, -2.0]), np.array([0.5, 0.5]), np.array([2.0, -4.0])
    a = a * 0.9 + g
    w1 = w - 0.1 * a
    a = a * 0.9 + g
    w2 = w1 - (g * 0.1 + a * 0.9 * 0.1)
    return {}, {"m2:0": w2}


@case("apply_adam", "ApplyAdam at step 1 and step 2 (beta powers fed as they would be) on a [3] float32 variable.")
def _():
    v = tf.Variable(f32(1.0, -1.0, 0.5), name="v")
    m = tf.Variable(f32(0, 0, 0), name="m")
    s = tf.Variable(f32(0, 0, 0), name="s")
    grad = f32(0.5, -2.0, 0.0)
    consts = [tf.constant(np.float32(c)) for c in (0.01, 0.9, 0.999, 1e-8)]
    with tf.control_dependencies([v.initializer, m.initializer, s.initializer]):
        first = tf.raw_op("ApplyAdam", v.op.outputs[0], m.op.outputs[0], s.op.outputs[0], tf.constant(np.float32(0.9)),
                          tf.constant(np.float32(0.999)), *consts, tf.constant(grad), name="a1")
    with tf.control_dependencies([first]):
        tf.raw_op("ApplyAdam", v.op.outputs[0], m.op.outputs[0], s.op.outputs[0], tf.constant(np.float32(0.81)),
                  tf.constant(np.float32(0.998001)), *consts, tf.constant(grad), name="a2")
    w, mm, ss, g = f32(1.0, -1.0, 0.5).astype(np.float64), np.zeros(3), np.zeros(3), grad.astype(np.float64)
    for b1p, b2p in ((0.9, 0.999), (0.81, 0.998001)):
        lr_t = 0.01 * np.sqrt(1 - b2p) / (1 - b1p)
        mm = 0.9 * mm + 0.1 * g
        ss = 0.999 * ss + 0.001 * g * g
        w = w - lr_t * mm / (np.sqrt(ss) + 1e-8)
    return {}, {"a2:0": w.astype(np.float32)}
