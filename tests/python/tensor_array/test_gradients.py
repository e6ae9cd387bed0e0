"""TensorArray gradients (TensorArrayGradV3 and the read/write/gather/scatter/split/concat gradients) match
central differences, and a model reading its inputs through TensorArrays trains."""

import numpy as np
import pytest

import graphdef as tf
from tests.python.tensor_array.gradient_rows import LOOP_ROWS, ROWS


def _check(build, shapes, domains, eps=1e-6, tolerance=1e-6):
    rng = np.random.default_rng(34)
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.float64, shape) for shape in shapes]
        y = build(*xs)
        loss = tf.reduce_sum(y * tf.constant(rng.normal(size=y.shape.as_list())))
        grads = tf.gradients(loss, xs)
        assert any(op.type == "TensorArrayGradV3" for op in g.get_operations())
    values = [rng.uniform(lo, hi, size=shape) for shape, (lo, hi) in zip(shapes, domains)]
    with tf.Session(graph=g) as sess:
        feed = dict(zip(xs, values))
        for x, value, grad in zip(xs, values, sess.run(grads, feed)):
            direction = rng.normal(size=np.shape(value))
            plus = sess.run(loss, {**feed, x: value + eps * direction})
            minus = sess.run(loss, {**feed, x: value - eps * direction})
            numeric = (plus - minus) / (2 * eps)
            analytic = float(np.sum(grad * direction))
            assert abs(numeric - analytic) <= tolerance * max(1.0, abs(numeric)), (analytic, numeric)


@pytest.mark.parametrize("op_type", sorted(ROWS) + sorted(LOOP_ROWS))
def test_gradient_matches_central_differences(op_type):
    _check(*{**ROWS, **LOOP_ROWS}[op_type])


def test_an_rnn_looping_over_tensor_arrays_trains():
    """dynamic_rnn's pattern built with graphdef's API: inputs unstacked into an array, a while loop reading
    a step and writing the new state each iteration, the states stacked; gradient descent fits it."""
    rng = np.random.default_rng(7)
    steps, batch, width = 5, 4, 3
    inputs = rng.normal(size=(steps, batch, width))
    target = np.tanh(np.cumsum(inputs, 0) @ np.full((width, 2), 0.3))
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [steps, batch, width])
        w = tf.Variable(rng.normal(size=(width, 2)) * 0.1, dtype=tf.float64)
        u = tf.Variable(rng.normal(size=(2, 2)) * 0.1, dtype=tf.float64)
        rows = tf.TensorArray(tf.float64, size=steps).unstack(x)
        out = tf.TensorArray(tf.float64, size=steps)

        def body(t, h, out):
            h = tf.tanh(tf.matmul(rows.read(t), w) + tf.matmul(h, u))
            return t + 1, h, out.write(t, h)

        _, _, out = tf.while_loop(lambda t, h, o: t < steps, body,
                                  [tf.constant(0), tf.zeros([batch, 2], tf.float64), out])
        loss = tf.reduce_mean(tf.square(out.stack() - target))
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        first = sess.run(loss, {x: inputs})
        for _ in range(60):
            sess.run(step, {x: inputs})
        last = sess.run(loss, {x: inputs})
    assert last < first * 0.2, (first, last)


def test_a_model_reading_through_tensor_arrays_trains():
    rng = np.random.default_rng(5)
    inputs = rng.normal(size=(4, 3))
    target = inputs @ np.array([[1.0], [-2.0], [0.5]])
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [4, 3])
        w = tf.Variable(np.zeros((3, 1)), dtype=tf.float64)
        rows = tf.TensorArray(tf.float64, size=4).unstack(x)
        out = tf.TensorArray(tf.float64, size=4)
        for i in range(4):
            out = out.write(i, tf.matmul(tf.reshape(rows.read(i), [1, 3]), w)[0])
        loss = tf.reduce_mean(tf.square(out.stack() - target))
        step = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        first = sess.run(loss, {x: inputs})
        for _ in range(200):
            sess.run(step, {x: inputs})
        last = sess.run(loss, {x: inputs})
    assert last < first * 1e-3, (first, last)
