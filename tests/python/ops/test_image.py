"""ResizeBilinear and ResizeNearestNeighbor against TensorFlow under every coordinate rule, their
gradients, their OpDefs, and hostile sizes refused in one line by both runtimes."""

import numpy as np
import pytest

import graphdef as tf
from tests.support import cc_helpers as cc
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow

RULES = [(False, False), (True, False), (False, True)]
SIZES = [((2, 3, 4, 2), (5, 8)), ((1, 5, 7, 3), (3, 2)), ((1, 4, 4, 1), (4, 4)), ((2, 1, 1, 3), (3, 5)),
         ((1, 6, 5, 2), (1, 1)), ((0, 3, 3, 2), (7, 9)), ((1, 37, 29, 1), (111, 13))]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", ["ResizeBilinear", "ResizeNearestNeighbor", "ResizeBilinearGrad",
                                     "ResizeNearestNeighborGrad"])
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("align, half", RULES)
@pytest.mark.parametrize("shape, size", SIZES)
def test_resize_matches_tensorflow(tf_oracle, shape, size, align, half):
    if align and half:
        return
    x = np.random.default_rng(sum(shape)).normal(size=shape).astype(np.float32)

    def make():
        p = tf.placeholder(tf.float32, shape, name="x")
        return [tf.image.resize_nearest_neighbor(p, size, align_corners=align, half_pixel_centers=half),
                tf.image.resize_bilinear(p, size, align_corners=align, half_pixel_centers=half)]
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float64, np.float16])
def test_resize_dtypes_match_tensorflow(tf_oracle, dtype):
    x = (np.arange(2 * 3 * 5 * 2).reshape(2, 3, 5, 2) * 7 % 200).astype(dtype)
    t = tf.as_dtype(dtype)

    def make():
        p = tf.placeholder(t, x.shape, name="x")
        return [tf.image.resize_nearest_neighbor(p, [4, 7], half_pixel_centers=True),
                tf.image.resize_bilinear(p, [4, 7], half_pixel_centers=True)]
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("align, half", RULES)
def test_resize_gradients_match_tensorflow(tf_oracle, align, half):
    x = np.random.default_rng(3).normal(size=(2, 3, 5, 2)).astype(np.float32)
    w = np.random.default_rng(4).normal(size=(2, 7, 4, 2)).astype(np.float32)

    def make():
        p = tf.placeholder(tf.float32, x.shape, name="x")
        a = tf.image.resize_bilinear(p, [7, 4], align_corners=align, half_pixel_centers=half)
        b = tf.image.resize_nearest_neighbor(p, [7, 4], align_corners=align, half_pixel_centers=half)
        return tf.reduce_sum(a * w + b * b), [p]
    gradients_both(tf_oracle, make, {"x": x})


@pytest.mark.parametrize("size, why", [([0, 3], "must be positive"), ([-1, 3], "must be positive"),
                                       ([3], "2 elements"), ([2 ** 31 - 1, 2 ** 31 - 1], "over the limit")])
@pytest.mark.parametrize("op", ["ResizeBilinear", "ResizeNearestNeighbor"])
def test_hostile_sizes_are_refused_by_both_runtimes(tmp_path, cc_runner, op, size, why):
    x = np.zeros((1, 2, 2, 1), np.float32)
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, None, name="x")
        ss = tf.placeholder(tf.int32, None, name="s")
        y = tf.raw_op(op, xs, ss, name="z")
    with tf.Session(graph=g) as sess, pytest.raises(Exception, match="'z'.*" + why):
        sess.run(y, {xs: x, ss: np.array(size, np.int32)})
    m = cc.Graph()
    m.placeholder("x", np.float32)
    m.placeholder("s", np.int32)
    m.op("z", op, ["x", "s"], np.float32)
    line = cc.fails(cc_runner, 4, m.save(tmp_path / "m.pb"), "--feed", "x=[[[[1],[2]],[[3],[4]]]]",
                    "--feed", f"s={size}".replace(" ", ""))
    assert "'z'" in line and why in line


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("align, half", RULES)
@pytest.mark.parametrize("shape, size", SIZES)
def test_resize_gradient_ops_match_tensorflow_in_both_runtimes(tf_oracle, tmp_path, cc_runner, shape, size, align,
                                                               half):
    """ResizeBilinearGrad and ResizeNearestNeighborGrad themselves (what tf.gradients builds), in the
    Session, against TensorFlow, and in graphrun-cc against TensorFlow."""
    rng = np.random.default_rng(sum(shape) + sum(size))
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(shape[0], *size, shape[3])).astype(np.float32)
    graph = tf.Graph()

    def make():
        p = tf.placeholder(tf.float32, [None, None, None, shape[3]], name="x")  # the nearest gradient's size from Shape
        a = tf.image.resize_bilinear(p, size, align_corners=align, half_pixel_centers=half)
        b = tf.image.resize_nearest_neighbor(p, size, align_corners=align, half_pixel_centers=half)
        da, db = tf.gradients(tf.reduce_sum(a * w), p)[0], tf.gradients(tf.reduce_sum(b * w), p)[0]
        return [tf.identity(da, name="da"), tf.identity(db, name="db")]
    ours = run_both(tf_oracle, make, {"x": x})
    with graph.as_default():
        make()
    types = {op.type for op in graph.get_operations()}
    assert {"ResizeBilinearGrad", "ResizeNearestNeighborGrad"} <= types, types
    path = tmp_path / "m.pb"
    tf.save(graph, str(path))
    np.save(tmp_path / "x.npy", x)
    got = cc.outputs(cc_runner, path, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "da", "--fetch", "db")
    for name, ours_value in zip(["da", "db"], ours):
        assert_conforms(got[f"{name}:0"], ours_value, graph, f"{name}:0")


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_nearest_gradient_dtypes_match_tensorflow(tf_oracle, dtype):
    g = (np.arange(2 * 5 * 7 * 2).reshape(2, 5, 7, 2) * 13 % 251).astype(dtype)

    def make():
        p = tf.placeholder(tf.as_dtype(dtype), g.shape, name="g")
        return [tf.raw_op("ResizeNearestNeighborGrad", p, np.array([3, 4], np.int32), half_pixel_centers=True),
                tf.raw_op("ResizeNearestNeighborGrad", p, np.array([2, 9], np.int32), align_corners=True)]
    run_both(tf_oracle, make, {"g": g})


@pytest.mark.parametrize("op, inputs, why", [
    ("ResizeNearestNeighborGrad", [np.zeros((1, 2, 2, 1), np.float32), np.array([0, 3], np.int32)], "must be positive"),
    ("ResizeNearestNeighborGrad", [np.zeros((2, 2, 1), np.float32), np.array([2, 3], np.int32)], "must be 4-D"),
    ("ResizeNearestNeighborGrad", [np.zeros((1, 2, 2, 1), np.float32), np.array([2 ** 31 - 1] * 2, np.int32)],
     "over the limit"),
    ("ResizeBilinearGrad", [np.zeros((1, 2, 2, 1), np.float32), np.zeros((1, 0, 2, 1), np.float32)], "has no pixels"),
    ("ResizeBilinearGrad", [np.zeros((1, 2, 2, 2), np.float32), np.zeros((1, 3, 3, 1), np.float32)],
     "differ in batch or channels"),
])
def test_hostile_gradient_inputs_are_refused_by_both_runtimes(tmp_path, cc_runner, op, inputs, why):
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, None, name="a")
        b = tf.placeholder(tf.as_dtype(inputs[1].dtype), None, name="b")
        y = tf.raw_op(op, a, b, name="z")
    with tf.Session(graph=g) as sess, pytest.raises(Exception, match="'z'.*" + why):
        sess.run(y, {a: inputs[0], b: inputs[1]})
    m = cc.Graph()
    m.placeholder("a", np.float32)
    m.placeholder("b", inputs[1].dtype)
    m.op("z", op, ["a", "b"], np.float32)
    np.save(tmp_path / "a.npy", inputs[0])
    np.save(tmp_path / "b.npy", inputs[1])
    line = cc.fails(cc_runner, 4, m.save(tmp_path / "m.pb"), "--feed", f"a=@{tmp_path / 'a.npy'}",
                    "--feed", f"b=@{tmp_path / 'b.npy'}")
    assert "'z'" in line and why in line
