"""Grouped Conv2D (the filter's in channels divide the input's) against TensorFlow's CPU kernel, in
the Python Session and graphrun-cc, and the channel counts that cannot be grouped refused by both."""

import numpy as np
import pytest

import graphdef as tf
from tests.support import cc_helpers as cc
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - a fixture

CASES = [  # input shape, filter shape, strides, padding, dilations
    ((1, 5, 5, 6), (3, 3, 2, 9), 1, "SAME", 1),
    ((2, 7, 6, 4), (3, 2, 1, 8), 2, "VALID", 1),
    ((1, 8, 8, 8), (3, 3, 4, 4), 1, "SAME", 2),
    ((3, 4, 4, 4), (1, 1, 2, 6), 1, "VALID", 1),  # (TF 2.21 gives an empty batch the input's channel count)
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, fs, strides, padding, dilations", CASES)
def test_grouped_conv2d_matches_tensorflow(tf_oracle, tmp_path, cc_runner, xs, fs, strides, padding, dilations,
                                           dtype):
    rng = np.random.default_rng(sum(xs) + sum(fs))
    x, f = rng.normal(size=xs).astype(dtype), rng.normal(size=fs).astype(dtype)
    graph = tf.Graph()
    t = tf.as_dtype(dtype)

    def make():
        y = tf.nn.conv2d(tf.placeholder(t, xs, name="x"), tf.placeholder(t, fs, name="f"), strides, padding,
                         dilations=dilations, name="y")
        return [y]
    ours = run_both(tf_oracle, make, {"x": x, "f": f})
    with graph.as_default():
        make()
    path = tmp_path / "m.pb"
    tf.save(graph, str(path))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    theirs = cc.output(cc_runner, path, "--feed", f"x=@{tmp_path / 'x.npy'}", "--feed", f"f=@{tmp_path / 'f.npy'}")
    assert_conforms(theirs, ours[0], graph, "y:0")


@pytest.mark.parametrize("xs, fs, why", [
    ((1, 5, 5, 6), (3, 3, 4, 4), "not a multiple of the filter's 4 in channels"),
    ((1, 5, 5, 6), (3, 3, 2, 4), "3 groups (6 / 2 channels) do not divide the filter's 4 out"),
    ((1, 5, 5, 0), (3, 3, 2, 4), "the input's 0 channels are not a multiple"),  # once 0 groups: a division by 0
])
def test_ungroupable_channels_are_refused_by_both_runtimes(tmp_path, cc_runner, xs, fs, why):
    with pytest.raises(ValueError, match="Conv2D 'y'.*" + why.replace("(", r"\(").replace(")", r"\)")):
        with tf.Graph().as_default():
            tf.nn.conv2d(tf.placeholder(tf.float32, xs), tf.placeholder(tf.float32, fs), 1, "SAME", name="y")
    g = cc.Graph()
    g.placeholder("x", np.float32)
    g.placeholder("f", np.float32)
    g.op("y", "Conv2D", ["x", "f"], np.float32, strides=cc.graph_pb2.AttrValue(
        list=cc.graph_pb2.AttrValue.ListValue(i=[1, 1, 1, 1])), padding=cc.graph_pb2.AttrValue(s=b"SAME"))
    np.save(tmp_path / "x.npy", np.zeros(xs, np.float32))
    np.save(tmp_path / "f.npy", np.zeros(fs, np.float32))
    line = cc.fails(cc_runner, 4, g.save(tmp_path / "m.pb"), "--feed", f"x=@{tmp_path / 'x.npy'}",
                    "--feed", f"f=@{tmp_path / 'f.npy'}")
    assert "'y'" in line and why in line


def _tf_grouped_gradients(tf_, x, f, loss_weights, strides, padding, dilations):
    """TF's gradients of a grouped Conv2D written as one ungrouped Conv2D per group: TensorFlow's Eigen
    CPU kernels refuse grouped backprops, so its own ungrouped gradients are the oracle (a dilated one
    through atrous_conv2d, SpaceToBatchND around an undilated Conv2D, as Eigen has no dilated backprops)."""
    groups = x.shape[3] // f.shape[2]
    graph = tf_.Graph()
    with graph.as_default():
        xt, ft = tf_.constant(x), tf_.constant(f)

        def conv(xs, fs):
            if dilations == 1:
                return tf_.nn.conv2d(xs, fs, strides, padding)
            assert strides == 1, "atrous_conv2d has unit strides"
            return tf_.nn.atrous_conv2d(xs, fs, dilations, padding)
        y = tf_.concat([conv(xs, fs)
                        for xs, fs in zip(tf_.split(xt, groups, axis=3), tf_.split(ft, groups, axis=3))], axis=3)
        grads = tf_.compat.v1.gradients(tf_.reduce_sum(y * loss_weights), [xt, ft])
    with tf_.compat.v1.Session(graph=graph) as sess:
        return sess.run(grads)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs, fs, strides, padding, dilations", CASES)
def test_grouped_conv2d_gradients_match_tensorflow(tf_oracle, tmp_path, cc_runner, xs, fs, strides, padding,
                                                   dilations, dtype):
    rng = np.random.default_rng(sum(xs) * 3 + sum(fs))
    x, f = rng.normal(size=xs).astype(dtype), rng.normal(size=fs).astype(dtype)
    graph = tf.Graph()
    t = tf.as_dtype(dtype)
    with graph.as_default():
        xp, fp = tf.placeholder(t, xs, name="x"), tf.placeholder(t, fs, name="f")
        y = tf.nn.conv2d(xp, fp, strides, padding, dilations=dilations, name="y")
        w = rng.normal(size=y.shape.as_list()).astype(dtype)
        dx, df = tf.gradients(tf.reduce_sum(y * w), [xp, fp])
        dx, df = tf.identity(dx, name="dx"), tf.identity(df, name="df")
    assert {op.type for op in graph.get_operations()} >= {"Conv2DBackpropInput", "Conv2DBackpropFilter"}
    with tf.Session(graph=graph) as sess:
        ours = sess.run([dx, df], {"x:0": x, "f:0": f})
    theirs = _tf_grouped_gradients(tf_oracle, x, f, w, strides, padding, dilations)
    for name, a, b in zip(["dx:0", "df:0"], ours, theirs):
        assert_conforms(a, b, graph, name)
    path = tmp_path / "m.pb"
    tf.save(graph, str(path))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    got = cc.outputs(cc_runner, path, "--feed", f"x=@{tmp_path / 'x.npy'}", "--feed", f"f=@{tmp_path / 'f.npy'}",
                     "--fetch", "dx", "--fetch", "df")
    for name, b in zip(["dx", "df"], theirs):
        assert_conforms(got[f"{name}:0"], b, graph, f"{name}:0")
