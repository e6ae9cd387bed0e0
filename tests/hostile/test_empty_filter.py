"""A Conv2D whose filter has a zero dimension is refused where its output has elements, as
TensorFlow's kernel refuses it, by both runtimes in the same line at run time (the file itself is well
formed). TensorFlow's DepthwiseConv2dNative sums over the empty filter instead (zeros), and so do both
runtimes; an empty input or output is no error."""

import numpy as np
import pytest

import graphdef as tf
from tests.support.cc_helpers import fails as cc_fails
from tests.support.cc_helpers import outputs as cc_outputs
from tests.support.graphrun_helpers import fails, save_model
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

REFUSED = [(0, 3, 3, 4), (3, 0, 3, 4), (0, 0, 3, 1)]
# (op, input shape, filter shape) whose output TensorFlow's reference kernels compute
COMPUTED = [
    ("Conv2D", (1, 5, 5, 3), (3, 3, 3, 0)),
    ("Conv2D", (0, 5, 5, 3), (3, 3, 3, 4)),
    ("Conv2D", (2, 0, 5, 3), (3, 3, 3, 4)),
    ("DepthwiseConv2dNative", (1, 5, 5, 3), (0, 3, 3, 1)),
    ("DepthwiseConv2dNative", (1, 5, 5, 3), (3, 0, 3, 2)),
    ("DepthwiseConv2dNative", (1, 5, 5, 3), (3, 3, 3, 0)),
    ("DepthwiseConv2dNative", (0, 5, 5, 3), (3, 3, 3, 2)),
]


def _conv_model(path, op):
    def build():
        x = tf.placeholder(tf.float32, None, name="x")
        f = tf.placeholder(tf.float32, None, name="f")
        if op == "Conv2D":
            tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", name="y")
        else:
            tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "SAME", name="y")
    return save_model(path, build)


def _args(tmp_path, op, x, f):
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    model = _conv_model(tmp_path / "m.pb", op)
    return [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--feed", f"f=@{tmp_path / 'f.npy'}", "--fetch", "y"]


@pytest.mark.parametrize("f_shape", REFUSED)
def test_a_conv2d_filter_with_a_zero_dimension_is_refused_in_one_line(runner, tmp_path, capsys, f_shape):
    args = _args(tmp_path, "Conv2D", np.ones((1, 5, 5, 3), np.float32), np.ones(f_shape, np.float32))
    shape = "[" + ",".join(map(str, f_shape)) + "]"
    want = f"node 'y' (Conv2D): the filter {shape} has no elements: every dimension must be at least 1"
    assert fails(capsys, 4, *args) == f"graphrun: {want}\n"
    assert cc_fails(runner, 4, *args) == f"graphrun-cc: {want}"


@pytest.mark.tf_oracle
def test_tensorflow_refuses_the_same_filters(tf_oracle):
    for f_shape in REFUSED:
        with pytest.raises(tf_oracle.errors.InvalidArgumentError, match="zero elements"):
            tf_oracle.raw_ops.Conv2D(input=np.ones((1, 5, 5, 3), np.float32), filter=np.ones(f_shape, np.float32),
                                     strides=[1, 1, 1, 1], padding="SAME")


@pytest.mark.parametrize("op, x_shape, f_shape", COMPUTED)
def test_empty_filters_inputs_and_outputs_give_zeros_or_nothing(runner, tmp_path, op, x_shape, f_shape):
    """TF's reference kernels answer these (its oneDNN kernels, which a TF build may use instead,
    refuse more of them): SAME at stride 1 keeps N, H and W, and a sum over an empty filter, or
    an output with no elements, is zeros; so the oracle is the shape worked out here."""
    n, h, w, c = x_shape
    out_channels = f_shape[3] if op == "Conv2D" else c * f_shape[3]
    want = np.zeros((n, h, w, out_channels), np.float32)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(x_shape).astype(np.float32)
    f = rng.standard_normal(f_shape).astype(np.float32)
    args = _args(tmp_path, op, x, f)
    graph = tf.Graph()
    with graph.as_default():
        y = (tf.nn.conv2d if op == "Conv2D" else tf.nn.depthwise_conv2d_native)(x, f, [1, 1, 1, 1], "SAME")
        with tf.Session() as session:
            got_session = session.run(y)
    (got_cc,) = cc_outputs(runner, *args).values()
    for got in (got_session, got_cc):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # zeros or empty: exact
