"""graphdef's TF1 dynamic_rnn and its cells (graphdef.ops.rnn_cells) give TensorFlow's answers for the same
weights (BasicRNNCell, BasicLSTMCell, LSTMCell; sequence lengths; batch- and time-major; bidirectional), name
their variables as TF1 does, and train."""

import numpy as np
import pytest

import graphdef
from graphdef.ops import rnn_cells as rnn
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

RNG = np.random.default_rng(77)
CELLS = ["BasicRNNCell", "BasicLSTMCell", "LSTMCell"]


def _theirs(tf, cell_name, x, lengths, time_major):
    """TensorFlow's TF1 dynamic_rnn (control flow v1): (outputs, final h, {variable name: value})."""
    cells = pytest.importorskip("tf_keras.src.layers.rnn.legacy_cells", reason="tf_keras holds TF1's RNN cells")
    tf.compat.v1.disable_control_flow_v2()
    try:
        graph = tf.Graph()
        with graph.as_default():
            cell = getattr(cells, cell_name)(4)
            out, state = tf.compat.v1.nn.dynamic_rnn(cell, tf.constant(x), sequence_length=tf.constant(lengths),
                                                     dtype=tf.float32, time_major=time_major)
            h = state.h if hasattr(state, "h") else state
            bias_init = [tf.compat.v1.assign(v, RNG.normal(size=v.shape).astype(np.float32) * 0.5)
                         for v in tf.compat.v1.global_variables() if v.name.endswith("bias:0")]
            with tf.compat.v1.Session(graph=graph) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                sess.run(bias_init)
                values = {v.name: sess.run(v) for v in tf.compat.v1.global_variables()}
                got = sess.run([out, h])
    finally:
        tf.compat.v1.enable_control_flow_v2()
    return got, values


@pytest.mark.tf_oracle
@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
@pytest.mark.parametrize("cell_name", CELLS)
def test_matches_tensorflow_for_the_same_weights(tf_oracle, cell_name, time_major):  # noqa: F811 - the fixture
    x = RNG.normal(size=(6, 3, 5) if time_major else (3, 6, 5)).astype(np.float32)
    lengths = np.array([6, 1, 4], np.int32)
    (out, h), values = _theirs(tf_oracle, cell_name, x, lengths, time_major)
    g = graphdef.Graph()
    with g.as_default():
        ours_out, state = rnn.dynamic_rnn(getattr(rnn, cell_name)(4), x, sequence_length=lengths,
                                          dtype=graphdef.float32, time_major=time_major)
        ours_h = state.h if hasattr(state, "h") else state
        variables = {v.name: v for v in graphdef.global_variables()}
        assert sorted(variables) == sorted(values), (sorted(variables), sorted(values))
        loads = [graphdef.assign(variables[name], value) for name, value in values.items()]
    with graphdef.Session(graph=g) as sess:
        sess.run(loads)
        got_out, got_h = sess.run([ours_out, ours_h])
    np.testing.assert_allclose(got_out, out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_h, h, rtol=1e-5, atol=1e-6)


def test_an_lstm_trains():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(4, 6, 3)).astype(np.float32)
    target = np.tanh(np.cumsum(x, 1)[:, -1, :2])
    g = graphdef.Graph()
    with g.as_default():
        _, state = rnn.dynamic_rnn(rnn.LSTMCell(2), x, sequence_length=[6, 5, 6, 3], dtype=graphdef.float32)
        loss = graphdef.reduce_mean(graphdef.square(state.h - target))
        step = graphdef.train.AdamOptimizer(0.05).minimize(loss)
        init = graphdef.global_variables_initializer()
    with graphdef.Session(graph=g) as sess:
        sess.run(init)
        first = sess.run(loss)
        for _ in range(80):
            sess.run(step)
        last = sess.run(loss)
    assert last < first * 0.5, (first, last)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("with_lengths", [True, False], ids=["sequence_length", "full_length"])
def test_bidirectional_matches_tensorflow(tf_oracle, with_lengths):  # noqa: F811 - the fixture
    tf = tf_oracle
    cells = pytest.importorskip("tf_keras.src.layers.rnn.legacy_cells", reason="tf_keras holds TF1's RNN cells")
    x = RNG.normal(size=(3, 5, 2)).astype(np.float32)
    lengths = np.array([5, 2, 3], np.int64) if with_lengths else None
    tf.compat.v1.disable_control_flow_v2()
    try:
        graph = tf.Graph()
        with graph.as_default():
            (fw, bw), (sfw, sbw) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
                cells.LSTMCell(3), cells.BasicRNNCell(2), tf.constant(x),
                sequence_length=None if lengths is None else tf.constant(lengths), dtype=tf.float32)
            with tf.compat.v1.Session(graph=graph) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                values = {v.name: sess.run(v) for v in tf.compat.v1.global_variables()}
                theirs = sess.run([fw, bw, sfw.h, sbw])
    finally:
        tf.compat.v1.enable_control_flow_v2()
    g = graphdef.Graph()
    with g.as_default():
        (fw, bw), (sfw, sbw) = rnn.bidirectional_dynamic_rnn(rnn.LSTMCell(3), rnn.BasicRNNCell(2), x,
                                                             sequence_length=lengths, dtype=graphdef.float32)
        variables = {v.name: v for v in graphdef.global_variables()}
        assert sorted(variables) == sorted(values), (sorted(variables), sorted(values))
        loads = [graphdef.assign(variables[name], value) for name, value in values.items()]
    with graphdef.Session(graph=g) as sess:
        sess.run(loads)
        ours = sess.run([fw, bw, sfw.h, sbw])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_variables_take_the_enclosing_scope_and_outputs_keep_known_dims():
    g = graphdef.Graph()
    with g.as_default():
        with graphdef.variable_scope("encoder"):
            out, state = rnn.dynamic_rnn(rnn.BasicRNNCell(3), np.ones((2, 4, 5), np.float32), dtype=graphdef.float32)
        assert [v.name for v in graphdef.global_variables()] == ["encoder/rnn/basic_rnn_cell/kernel:0",
                                                                 "encoder/rnn/basic_rnn_cell/bias:0"]
        assert out.shape.as_list() == [2, 4, 3] and state.shape.as_list() == [2, 3]
        with pytest.raises(ValueError, match="Variable encoder/rnn/basic_rnn_cell/kernel already exists"):
            with graphdef.variable_scope("encoder"):
                rnn.dynamic_rnn(rnn.BasicRNNCell(3), np.ones((2, 4, 5), np.float32), dtype=graphdef.float32)
