"""TF's three divisions (FloorDiv, FloorMod, Div) and Rsqrt against TensorFlow, over every integer
width and the float special values; the operators // and % and tf.div as TF 1.x builds them."""

import numpy as np
import pytest

import graphdef as tf
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - tf_oracle is a fixture

SIGNED_A = [-7, 7, -7, 7, 0, 6, -6, 5, -5, 1, -1, 100, -100]
SIGNED_B = [2, 2, -2, -2, 3, -4, 4, 1, -1, 7, -7, -3, 3]
UNSIGNED_A, UNSIGNED_B = [7, 200, 0, 255, 9], [2, 3, 5, 16, 9]
FLOAT_A = [-4, 4, -7, 7, -7, 7, 0, -0.0, 1, 1, -1, 0, 5.5, np.inf, 3, np.nan, -2.5, 1e30, -1e-30]
FLOAT_B = [2, -2, 2, -2, -2, 2, -3, 3, 0.1, 0, 0, 0, np.inf, 2, -np.inf, 1, 0.75, 3e-10, 7]


def _divisions(a, b, unsigned=False):
    out = [a // b, a % b, tf.floordiv(a, b), tf.floormod(a, b), tf.raw_op("Div", a, b)]
    return out if unsigned else out + [tf.div(a, b)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_signed_integer_division_matches_tensorflow(tf_oracle, dtype):
    d = tf.as_dtype(dtype)
    run_both(tf_oracle, lambda: _divisions(tf.placeholder(d, [None], name="a"), tf.placeholder(d, [None], name="b")),
             {"a": np.array(SIGNED_A, dtype), "b": np.array(SIGNED_B, dtype)})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_integer_division_matches_tensorflow(tf_oracle, dtype):
    d = tf.as_dtype(dtype)
    run_both(tf_oracle, lambda: _divisions(tf.placeholder(d, [None], name="a"), tf.placeholder(d, [None], name="b"),
                                           unsigned=True),
             {"a": np.array(UNSIGNED_A, dtype), "b": np.array(UNSIGNED_B, dtype)})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_division_matches_tensorflow_bit_for_bit(tf_oracle, dtype):
    d = tf.as_dtype(dtype)
    with np.errstate(over="ignore"):
        a, b = np.array(FLOAT_A, dtype), np.array(FLOAT_B, dtype)
    ours = run_both(tf_oracle, lambda: _divisions(tf.placeholder(d, [None], name="a"),
                                                  tf.placeholder(d, [None], name="b")),
                    {"a": a, "b": b})  # RealDiv, FloorDiv, FloorMod and Div are exact: the policy compares bits
    assert np.signbit(ours[1][0]) and ours[1][0] == 0  # -4 mod 2 is -0.0, where numpy says +0.0


@pytest.mark.tf_oracle
def test_floor_mod_gradient_matches_tensorflow(tf_oracle):
    def make():
        x, y = tf.placeholder(tf.float32, [2, 3], name="x"), tf.placeholder(tf.float32, [3], name="y")
        return tf.reduce_sum((x % y) * (x % y) + tf.raw_op("Div", x, y)), [x, y]
    gradients_both(tf_oracle, make, {"x": np.array([[5.3, -2.2, 7.1], [1.1, 4.4, -9.9]], np.float32),
                                     "y": np.array([2.0, 1.5, -3.0], np.float32)})


@pytest.mark.tf_oracle
def test_rsqrt_matches_tensorflow(tf_oracle):
    x = np.array([4, 2, 0.01, 0, -0.0, -1, np.inf, np.nan, 1e-30, 3e38], np.float32)
    run_both(tf_oracle, lambda: [tf.rsqrt(tf.placeholder(tf.float32, [None], name="x"))], {"x": x})


def test_integer_division_by_zero_is_an_error():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.int32, [2], name="a")
        outs = [tf.raw_op("FloorDiv", a, a, name="fd"), tf.raw_op("FloorMod", a, a, name="fm"),
                tf.raw_op("Div", a, a, name="div")]
    with tf.Session(graph=g) as sess:
        for out in outs:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=rf"node '{out.op.name}' .*integer division by zero"):
                sess.run(out, {a: [1, 0]})


def test_operators_build_what_tensorflow_builds():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.int32, [2], name="x")
        f = tf.placeholder(tf.float32, [2], name="f")
        built = [x // 2, 7 // x, x % 3, 5 % x, tf.div(x, x), tf.div(f, f), tf.floormod(x, x), tf.rsqrt(f), f // 2.0]
    assert [(t.op.type, t.op.name) for t in built] == [
        ("FloorDiv", "floordiv"), ("FloorDiv", "floordiv_1"), ("FloorMod", "mod"), ("FloorMod", "mod_1"),
        ("FloorDiv", "div"), ("RealDiv", "div_1"), ("FloorMod", "FloorMod"), ("Rsqrt", "Rsqrt"),
        ("FloorDiv", "floordiv_2")]
    with tf.Session(graph=g) as sess:
        got = sess.run(built[:4], {x: [7, -7]})
    assert [v.tolist() for v in got] == [[3, -4], [1, -1], [1, 2], [5, -2]]
