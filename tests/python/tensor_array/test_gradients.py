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


@pytest.mark.parametrize("op_type", sorted(ROWS))
def test_gradient_matches_central_differences(op_type):
    _check(*ROWS[op_type])


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
