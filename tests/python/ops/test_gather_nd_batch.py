"""tf.gather_nd with batch_dims (TF composes it from GatherNd and shape ops; the op has no such attr)
against TensorFlow's own tf.gather_nd(batch_dims=...), values and gradients, in the Python Session
and graphrun-cc, and the batch_dims TensorFlow refuses refused here when the graph is built."""

import numpy as np
import pytest

import graphdef as tf
from tests.support import cc_helpers as cc
from tests.support.numerics_policy import assert_conforms, assert_same
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

CASES = [  # params shape, indices shape (last dim = index depth), batch_dims
    ((2, 3, 4, 5), (2, 3, 2), 1),
    ((2, 3, 4, 5), (2, 7, 1), 1),
    ((2, 3, 4, 5), (2, 3, 4, 1), 2),
    ((2, 3, 4, 5), (2, 3, 2, 6, 2), 2),
    ((3, 4), (3, 2, 1), 1),
    ((0, 4, 2), (0, 5, 1), 1),
]


def _indices(rng, params_shape, indices_shape, batch_dims, dtype):
    depth = indices_shape[-1]
    bounds = params_shape[batch_dims:batch_dims + depth]
    columns = [rng.integers(0, max(b, 1), size=indices_shape[:-1]) for b in bounds]
    return np.stack(columns, axis=-1).astype(dtype)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("params_shape, indices_shape, batch_dims", CASES)
def test_batch_gather_nd_matches_tensorflow(tf_oracle, tmp_path, cc_runner, params_shape, indices_shape, batch_dims,
                                            index_dtype):
    rng = np.random.default_rng(sum(params_shape) + sum(indices_shape) + batch_dims)
    params = rng.normal(size=params_shape).astype(np.float32)
    indices = _indices(rng, params_shape, indices_shape, batch_dims, index_dtype)
    weights = tf_oracle.gather_nd(params, indices, batch_dims=batch_dims).numpy()  # TF's value
    w = rng.normal(size=weights.shape).astype(np.float32)
    p = tf_oracle.constant(params)
    with tf_oracle.GradientTape() as tape:
        tape.watch(p)
        loss = tf_oracle.reduce_sum(tf_oracle.gather_nd(p, indices, batch_dims=batch_dims) * w)
    their_grad = tape.gradient(loss, p)
    their_grad = np.zeros_like(params) if their_grad is None else np.asarray(tf_oracle.convert_to_tensor(their_grad))

    graph = tf.Graph()
    with graph.as_default():
        pp = tf.placeholder(tf.float32, params_shape, name="p")
        ii = tf.placeholder(tf.as_dtype(index_dtype), indices_shape, name="i")
        y = tf.identity(tf.gather_nd(pp, ii, batch_dims=batch_dims), name="y")
        assert y.shape.as_list() == list(weights.shape)
        dp = tf.identity(tf.gradients(tf.reduce_sum(y * w), pp)[0], name="dp")
    with tf.Session(graph=graph) as sess:
        ours_y, ours_dp = sess.run([y, dp], {"p:0": params, "i:0": indices})
    assert_same(ours_y, weights)  # a gather moves values: exact
    assert_conforms(ours_dp, their_grad, graph, "dp:0")

    path = tmp_path / "m.pb"
    tf.save(graph, str(path))
    np.save(tmp_path / "p.npy", params)
    np.save(tmp_path / "i.npy", indices)
    got = cc.outputs(cc_runner, path, "--feed", f"p=@{tmp_path / 'p.npy'}", "--feed", f"i=@{tmp_path / 'i.npy'}",
                     "--fetch", "y", "--fetch", "dp")
    assert_same(got["y:0"], weights)
    assert_conforms(got["dp:0"], their_grad, graph, "dp:0")


def test_out_of_range_batched_index_is_one_error_line_in_both_runtimes(tmp_path, cc_runner):
    graph = tf.Graph()
    with graph.as_default():
        y = tf.gather_nd(tf.placeholder(tf.float32, [2, 3], name="p"), tf.placeholder(tf.int32, [2, 1], name="i"),
                         batch_dims=1)
        tf.identity(y, name="y")
    feeds = {"p:0": np.ones((2, 3), np.float32), "i:0": np.array([[1], [3]], np.int32)}
    with tf.Session(graph=graph) as sess, pytest.raises(Exception, match=r"\(GatherNd\).*does not index into"):
        sess.run("y:0", feeds)
    path = tmp_path / "m.pb"
    tf.save(graph, str(path))
    line = cc.fails(cc_runner, 4, path, "--feed", "p=[[1,1,1],[1,1,1]]", "--feed", "i=[[1],[3]]", "--fetch", "y")
    assert "(GatherNd)" in line and "do not index into" in line, line


@pytest.mark.parametrize("params_shape, indices_shape, batch_dims, why", [
    ((2, 3), (2, 1), 2, "less than the ranks"),
    ((2, 3), (2, 1), -1, "at least 0"),
    (None, (2, 1), 1, "ranks known"),
])
def test_batch_dims_tensorflow_refuses_are_refused(params_shape, indices_shape, batch_dims, why):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=why):
        tf.gather_nd(tf.placeholder(tf.float32, params_shape), tf.placeholder(tf.int32, indices_shape),
                     batch_dims=batch_dims)
    with tf.Graph().as_default(), pytest.raises(TypeError, match="Python int"):
        tf.gather_nd(tf.placeholder(tf.float32, (2, 3)), tf.placeholder(tf.int32, (2, 1)), batch_dims=1.0)
