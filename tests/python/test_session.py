"""Session.run: fetch structures, feeds, pruning, variables, and the errors users meet."""

import collections

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError


def _seed_graph():
    a = tf.constant(15, name="a")
    b = tf.constant(5, name="b")
    return tf.divide(tf.multiply(a, b, name="Multiply"), tf.add(a, b, name="Add"), name="Divide")


def test_fetch_structures_come_back_in_the_same_shape(graph):
    res = _seed_graph()
    Pair = collections.namedtuple("Pair", "left right")
    with tf.Session() as sess:
        assert sess.run(res) == 3.75
        assert sess.run("Divide:0") == 3.75
        assert sess.run("Divide") is None  # an Operation: run, nothing returned
        assert sess.run([res, "Multiply:0"]) == [3.75, 75]
        assert sess.run((res,)) == (3.75,)
        assert sess.run({"r": res, "nested": [res.op, "Add:0"]}) == {"r": 3.75, "nested": [None, 20]}
        assert sess.run(Pair(res, "Add:0")) == Pair(3.75, 20)


def test_scalar_results_are_numpy_scalars_and_arrays_are_writable_copies(graph):
    c = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        value = sess.run(c)
        assert isinstance(sess.run(tf.constant(2.5)), np.float32)
        value[0] = 100  # must not change the graph's constant
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_only_the_subgraph_a_fetch_needs_runs(graph):
    x = tf.placeholder(tf.float32, name="x")
    unrelated = tf.sqrt(x)
    needed = tf.constant(2.0) * 3.0
    with tf.Session() as sess:
        assert sess.run(needed) == 6.0  # x is not fed, but nothing needed uses it
        with pytest.raises(InvalidArgumentError, match="placeholder 'x'"):
            sess.run(unrelated)


def test_feeds_target_placeholders_or_any_tensor(graph):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    doubled = x * 2.0
    total = tf.reduce_sum(doubled)
    feed = np.array([[1, 2], [3, 4]], np.float32)
    with tf.Session() as sess:
        assert sess.run(total, {x: feed}) == 20.0
        assert sess.run(total, {"x:0": feed}) == 20.0
        # feeding an intermediate tensor cuts the graph there: x is no longer needed
        assert sess.run(total, {doubled: np.ones((3, 2), np.float32)}) == 6.0


def test_feed_errors_name_the_placeholder_and_the_shapes(graph):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    i = tf.placeholder(tf.int32, [], name="i")
    y = tf.reduce_sum(x) + tf.cast(i, tf.float32)
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError) as err:
            sess.run(y, {x: np.zeros((1, 2))})
        message = str(err.value)
        assert "'i' (int32, [])" in message and "['x:0']" in message
        with pytest.raises(ValueError, match=r"shape \[3\] to 'x:0', which has shape \[\?,2\]"):
            sess.run(y, {x: [1.0, 2.0, 3.0], i: 1})
        with pytest.raises(TypeError, match="'i:0' \\(int32\\)"):
            sess.run(y, {x: np.zeros((1, 2)), i: 1.5})
        # lossless conversions are accepted, as TensorFlow accepts them
        assert sess.run(y, {x: np.ones((1, 2), np.float64), i: 2.0}) == 4.0


def test_unknown_fetches_and_foreign_tensors_are_refused(graph):
    _seed_graph()
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1)
    with tf.Session() as sess:
        with pytest.raises(NotFoundError, match="Divide:1"):
            sess.run("Divide:1")
        with pytest.raises(NotFoundError, match="nope"):
            sess.run("nope:0")
        with pytest.raises(ValueError, match="another graph"):
            sess.run(foreign)


def test_variables_keep_their_values_across_runs(graph):
    w = tf.Variable(1.0, name="w")
    step = tf.assign_add(w, 2.0)
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match="variable 'w' is not initialized"):
            sess.run(w)
        sess.run(tf.global_variables_initializer())
        assert sess.run(w) == 1.0
        sess.run(step)
        sess.run(step)
        assert sess.run(w) == 5.0
        assert sess.run(w.assign(-1.0)) == -1.0
        assert sess.run(tf.assign_sub(w, 1.0)) == -2.0
    with tf.Session() as fresh:  # state belongs to a session
        with pytest.raises(FailedPreconditionError):
            fresh.run(w)


def test_a_fetched_variable_value_cannot_corrupt_the_variable(graph):
    w = tf.Variable([1.0, 2.0], name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        value = sess.run(w)
        value[:] = 0
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])


@pytest.mark.slow
def test_a_100000_node_chain_runs(graph):
    x = tf.placeholder(tf.int32, [], name="x")
    y = x
    for _ in range(100_000):
        y = tf.add(y, 1)
    with tf.Session() as sess:
        assert sess.run(y, {x: 5}) == 100_005


def test_kernel_errors_name_the_node(graph):
    x = tf.placeholder(tf.float32, name="x")
    r = tf.reshape(x, [3], name="r")
    big = tf.zeros([10**12, 10**12], name="big")
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match="node 'r' \\(Reshape\\)"):
            sess.run(r, {x: np.zeros(4, np.float32)})
        with pytest.raises(MemoryError, match="node 'big' \\(Fill\\)"):
            sess.run(big)


def test_eval_and_run_use_the_default_session(graph):
    c = tf.constant(3) * 2
    with tf.Session().as_default():
        assert c.eval() == 6
    sess = tf.Session()
    with sess:
        assert c.eval() == 6
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(c)


def test_control_dependencies_run_first(graph):
    w = tf.Variable(0, name="w")
    bump = tf.assign_add(w, 10)
    with tf.control_dependencies([bump]):
        after = tf.identity(tf.constant(1))
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(after)
        assert sess.run(w) == 10


def test_elementwise_kernels_follow_numpy(graph):
    x = np.array([[-2.0, 0.5, 3.0]], np.float32)
    t = tf.constant(x)
    checks = {
        tf.sqrt(tf.abs(t)): np.sqrt(np.abs(x)),
        tf.exp(t): np.exp(x),
        tf.log(tf.abs(t)): np.log(np.abs(x)),
        tf.sigmoid(t): 1 / (1 + np.exp(-x)),
        tf.tanh(t): np.tanh(x),
        tf.nn.relu(t): np.maximum(x, 0),
        tf.square(t): x * x,
        tf.negative(t): -x,
        tf.maximum(t, 1.0): np.maximum(x, 1),
        tf.minimum(t, 1.0): np.minimum(x, 1),
        tf.reduce_max(t, axis=1): x.max(axis=1),
        tf.reduce_mean(t): x.mean(),
        tf.transpose(t): x.T,
        tf.matmul(t, t, transpose_b=True): x @ x.T,
        tf.cast(t, tf.int32): x.astype(np.int32),
        tf.fill([2], 7): np.full(2, 7, np.int32),
        tf.ones([2, 1], tf.int64): np.ones((2, 1), np.int64),
    }
    with tf.Session() as sess:
        for tensor, expected in checks.items():
            got = sess.run(tensor)
            assert np.asarray(got).dtype == np.asarray(expected).dtype, tensor.op.type
            np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=tensor.op.type)


def test_integer_mean_truncates_like_tensorflow(graph):
    with tf.Session() as sess:
        assert sess.run(tf.reduce_mean(tf.constant([-7, 0]))) == -3
        assert sess.run(tf.reduce_mean(tf.constant([7, 0]))) == 3


def test_a_variable_is_read_when_its_consumer_runs(graph):
    w = tf.Variable(1, name="w")
    bump = tf.assign_add(w, 10)
    with tf.control_dependencies([bump]):
        after = tf.identity(w.read_value(), name="after")  # a read made after the bump
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert sess.run(after) == 11
        assert sess.run(after) == 21


def test_shape_rules_hold_at_run_time_for_fed_shapes(graph):
    """Each engine's message names the node and both shapes in its own words."""
    a = tf.placeholder(tf.float32, name="a")
    b = tf.placeholder(tf.float32, name="b")
    total = tf.add_n([a, b], name="total")
    w = tf.Variable([1.0, 2.0], name="w")
    delta = tf.placeholder(tf.float32, name="delta")
    step = tf.raw_op("ApplyGradientDescent", w.op.outputs[0], tf.constant(0.5), delta, name="step")
    with tf.Session() as sess:
        sess.run(w.initializer)
        with pytest.raises(InvalidArgumentError, match=r"node 'total' \(AddN\).*\[2\].*\[1\]"):
            sess.run(total, {a: [1.0, 2.0], b: [3.0]})
        with pytest.raises(InvalidArgumentError, match=r"node 'step'.*(\[2,2\].*'w'|'w'.*\[2,2\])"):
            sess.run(step, {delta: np.ones((2, 2))})
        np.testing.assert_array_equal(sess.run(w), [1.0, 2.0])  # nothing was half-applied


def test_integer_range_counts_exactly(graph):
    with tf.Session() as sess:
        assert len(sess.run(tf.range(tf.constant(-100, tf.int8), tf.constant(100, tf.int8)))) == 200
        assert sess.run(tf.range(tf.constant(5, tf.uint8), tf.constant(0, tf.uint8))).size == 0
        np.testing.assert_array_equal(sess.run(tf.range(5, 0, -2)), [5, 3, 1])


def test_training_ops_check_fed_shapes(graph):
    logits = tf.placeholder(tf.float32, name="logits")
    labels = tf.placeholder(tf.int32, name="labels")
    dense = tf.placeholder(tf.float32, name="dense")
    sparse = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    xent = tf.nn.softmax_cross_entropy_with_logits_v2(labels=dense, logits=logits)
    c, t, e = (tf.placeholder(tf.float32 if n != "c" else tf.bool, name=n) for n in "cte")
    chosen = tf.raw_op("Select", c, t, e, name="chosen")
    anywhere = tf.where(c, t, e)  # unknown ranks still build
    assert anywhere.shape.ndims is None
    two = np.zeros((2, 4), np.float32)
    with tf.Session() as sess:
        with pytest.raises(InvalidArgumentError, match=r"labels \[1\] must be \[batch\]"):
            sess.run(sparse, {logits: two, labels: [1]})
        with pytest.raises(InvalidArgumentError, match=r"same shape"):
            sess.run(xent, {logits: two, dense: np.zeros((1, 4))})
        with pytest.raises(InvalidArgumentError, match=r"must be \[batch, classes\]"):
            sess.run(xent, {logits: np.zeros((1, 2, 4)), dense: np.zeros((1, 2, 4))})
        with pytest.raises(InvalidArgumentError, match=r"t \[2,2\] and e \[2\]"):
            sess.run(chosen, {c: True, t: np.zeros((2, 2)), e: np.zeros(2)})
        assert sess.run(tf.nn.softmax(tf.zeros([2, 0]))).shape == (2, 0)


def test_running_ops_by_name_follows_their_outputs(graph):
    x = tf.placeholder(tf.float32, name="x")
    w = tf.Variable(1.0, name="w")
    with tf.Session() as sess:
        assert sess.run("x", {x: 2.0}) is None  # its output is fed, so the op need not run
        with pytest.raises(FailedPreconditionError, match="variable 'w' is not initialized"):
            sess.run("w")  # running the variable's op reads it
        sess.run(w.initializer)
        assert sess.run("w") is None


def test_segment_sum_with_empty_segments(graph):
    with tf.Session() as sess:
        empty_rows = tf.raw_op("UnsortedSegmentSum", tf.zeros([0, 3]), tf.zeros([0], tf.int32), 2)
        np.testing.assert_array_equal(sess.run(empty_rows), np.zeros((2, 3), np.float32))
        no_segments = tf.raw_op("UnsortedSegmentSum", tf.ones([2, 3]), tf.constant([-1, -1]), 0)
        assert sess.run(no_segments).shape == (0, 3)
