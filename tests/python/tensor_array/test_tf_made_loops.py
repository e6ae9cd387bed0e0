"""TF1 graphs TensorFlow builds with control flow v1 and TensorArrays (map_fn, scan, dynamic_rnn with an
LSTM and sequence lengths, bidirectional_dynamic_rnn), frozen, run by the Session and graphrun and held to
TensorFlow's answers; graphrun-cc, which has no TensorArray kernels yet, names them in one line."""

import json

import numpy as np
import pytest

import graphdef
from tests.conformance.replay import from_json_output
from tests.support import cc_helpers as cc
from tests.support.graphrun_helpers import run_graphrun
from tests.support.numerics_policy import assert_all_conform
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

RNG = np.random.default_rng(34)


@pytest.fixture
def tf1(tf_oracle):  # noqa: F811 - the fixture
    """TensorFlow building TF1 loops (Enter/Merge/Switch/Exit), as TF1 itself did."""
    tf_oracle.compat.v1.disable_control_flow_v2()
    yield tf_oracle
    tf_oracle.compat.v1.enable_control_flow_v2()


def _legacy_cells():
    cells = pytest.importorskip("tf_keras.src.layers.rnn.legacy_cells", reason="tf_keras holds TF1's RNN cells")
    return cells


def _frozen(tf, build):
    """build(tf) in a TF1 graph, variables frozen: (GraphDef, feeds, fetch names, TF's answers)."""
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches = build(tf)
        names = [t.name for t in fetches]
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            theirs = sess.run(names, {f"{k}:0": v for k, v in feeds.items()})
            graph_def = tf.compat.v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), [n.split(":")[0] for n in names])
    return graph_def, feeds, names, theirs


def _cli_args(tmp_path, model, feeds, names):
    args = [model]
    for k, v in feeds.items():
        path = tmp_path / f"{k}.npy"
        np.save(path, v, allow_pickle=False)
        args += ["--feed", f"{k}=@{path}"]
    for n in names:
        args += ["--fetch", n]
    return args


def _run_everywhere(tmp_path, graph_def, feeds, names, theirs):
    model = tmp_path / "model.pb"
    model.write_bytes(graph_def.SerializeToString())
    with graphdef.Session(graph=graphdef.load(model)) as sess:
        ours = sess.run(names, {f"{k}:0": v for k, v in feeds.items()})
    assert_all_conform(ours, theirs, model, names, who="the Session and TensorFlow")
    code, out, err = run_graphrun(*_cli_args(tmp_path, model, feeds, names), "--json")
    assert code == 0, err
    got = dict(from_json_output(o) for o in json.loads(out)["outputs"])
    assert_all_conform([got[n] for n in names], theirs, model, names, who="graphrun and TensorFlow")
    return model


def _map_and_scan(tf):
    x = tf.compat.v1.placeholder(tf.float32, [5, 3], name="x")
    mapped = tf.compat.v1.map_fn(lambda row: tf.reduce_sum(row * row) + row[0], x)
    pairs = tf.compat.v1.map_fn(lambda row: (row * 2.0, tf.reduce_max(row)), x, dtype=(tf.float32, tf.float32))
    nested = tf.compat.v1.map_fn(lambda row: tf.compat.v1.map_fn(lambda v: v * v + 1.0, row), x)
    running = tf.compat.v1.scan(lambda acc, row: acc * 0.5 + row, x)
    started = tf.compat.v1.scan(lambda acc, row: acc + tf.reduce_sum(row), x, initializer=tf.constant(1.0),
                                reverse=True)
    return {"x": RNG.normal(size=(5, 3)).astype(np.float32)}, [mapped, *pairs, nested, running, started]


def _lstm(tf):
    seq = tf.compat.v1.placeholder(tf.float32, [3, 6, 4], name="seq")
    lengths = tf.compat.v1.placeholder(tf.int32, [3], name="lengths")
    init = tf.compat.v1.glorot_uniform_initializer(seed=34)
    cell = _legacy_cells().LSTMCell(5, initializer=init)
    out, state = tf.compat.v1.nn.dynamic_rnn(cell, seq, sequence_length=lengths, dtype=tf.float32)
    return ({"seq": RNG.normal(size=(3, 6, 4)).astype(np.float32), "lengths": np.array([6, 2, 4], np.int32)},
            [out, state.c, state.h])


def _basic_rnn_bidirectional(tf):
    seq = tf.compat.v1.placeholder(tf.float32, [2, 5, 3], name="seq")
    lengths = tf.compat.v1.placeholder(tf.int64, [2], name="lengths")
    cells = _legacy_cells()
    with tf.compat.v1.variable_scope("rnn", initializer=tf.compat.v1.glorot_uniform_initializer(seed=3)):
        (fw, bw), (sfw, sbw) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
            cells.BasicRNNCell(4), cells.GRUCell(3), seq, sequence_length=lengths, dtype=tf.float32)
    return ({"seq": RNG.normal(size=(2, 5, 3)).astype(np.float32), "lengths": np.array([3, 5], np.int64)},
            [fw, bw, sfw, sbw])


def _stacked_cells(tf):
    """MultiRNNCell of an LSTM over a GRU, time-major, with a final state per layer."""
    seq = tf.compat.v1.placeholder(tf.float32, [7, 2, 3], name="seq")
    lengths = tf.compat.v1.placeholder(tf.int32, [2], name="lengths")
    cells = _legacy_cells()
    with tf.compat.v1.variable_scope("deep", initializer=tf.compat.v1.glorot_uniform_initializer(seed=5)):
        stacked = cells.MultiRNNCell([cells.LSTMCell(4), cells.GRUCell(3)])
        out, (lstm_state, gru_state) = tf.compat.v1.nn.dynamic_rnn(stacked, seq, sequence_length=lengths,
                                                                   dtype=tf.float32, time_major=True)
    return ({"seq": RNG.normal(size=(7, 2, 3)).astype(np.float32), "lengths": np.array([7, 4], np.int32)},
            [out, lstm_state.c, gru_state])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("build", [_map_and_scan, _lstm, _basic_rnn_bidirectional, _stacked_cells],
                         ids=lambda f: f.__name__)
def test_tf1_loops_match_tensorflow(tmp_path, tf1, build):
    graph_def, feeds, names, theirs = _frozen(tf1, build)
    assert any(n.op == "TensorArrayV3" for n in graph_def.node) and any(n.op == "Enter" for n in graph_def.node)
    _run_everywhere(tmp_path, graph_def, feeds, names, theirs)


@pytest.mark.tf_oracle
def test_graphrun_cc_names_the_tensor_array_ops(tmp_path, tf1, cc_runner):
    graph_def, feeds, names, _ = _frozen(tf1, _map_and_scan)
    model = tmp_path / "model.pb"
    model.write_bytes(graph_def.SerializeToString())
    code, out, err = cc.run_cc(cc_runner, *_cli_args(tmp_path, model, feeds, names))
    assert code != 0 and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphrun-cc: "), err
    assert "TensorArrayV3" in lines[0] and "map/TensorArray" in lines[0], lines[0]


@pytest.mark.tf_oracle
def test_an_op_graphdef_lacks_inside_a_loop_is_named(tmp_path, tf1):
    """What a TF1 loop carries back through an op graphdef lacks (TensorArrayWriteV3 once) loads, and the
    run names that op rather than the loop's Merge ("input 1 cannot take a back edge")."""
    graph_def, feeds, names, _ = _frozen(tf1, _map_and_scan)
    (write,) = [n for n in graph_def.node if n.name == "map/while/TensorArrayWrite/TensorArrayWriteV3"]
    write.op = "TensorArrayWriteV9"
    model = tmp_path / "model.pb"
    model.write_bytes(graph_def.SerializeToString())
    with pytest.raises(graphdef.errors.UnimplementedError) as info:
        with graphdef.Session(graph=graphdef.load(model)) as sess:
            sess.run(names[0], {f"{k}:0": v for k, v in feeds.items()})
    line = str(info.value)
    assert "\n" not in line and "TensorArrayWriteV9 (map/while/TensorArrayWrite/TensorArrayWriteV3)" in line, line
    code, out, err = run_graphrun(*_cli_args(tmp_path, model, feeds, names[:1]))
    assert code != 0 and err.count("\n") == 1 and "TensorArrayWriteV9" in err and "back edge" not in err, err


@pytest.mark.tf_oracle
def test_control_flow_v2_map_fn(tmp_path, tf_oracle):  # noqa: F811 - the fixture
    """A TF2 map_fn left as a StatelessWhile whose body passes a TensorList (not lowered to TF1 frames)."""
    tf = tf_oracle
    function = tf.function(lambda x: tf.map_fn(lambda row: row * 2.0 + tf.reduce_sum(row), x))
    concrete = function.get_concrete_function(tf.TensorSpec([3, 4], tf.float32))
    graph_def = concrete.graph.as_graph_def()
    assert any(n.op in ("While", "StatelessWhile") for n in graph_def.node)
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    out = concrete(tf.constant(x))
    theirs = [np.asarray(out[0] if isinstance(out, (list, tuple)) else out)]
    (placeholder,) = [n.name for n in graph_def.node if n.op == "Placeholder"]
    _run_everywhere(tmp_path, graph_def, {placeholder: x}, [concrete.outputs[0].name], theirs)


def _gradients(tf):
    """tf.gradients through a dynamic_rnn and a map_fn, as TF1 builds them: StackV2 pushes in the forward
    loops, pops in the backward ones, TensorArrayGradV3, SigmoidGrad, TanhGrad, ConcatOffset."""
    seq = tf.compat.v1.placeholder(tf.float32, [2, 5, 3], name="seq")
    lengths = tf.compat.v1.placeholder(tf.int32, [2], name="lengths")
    cell = _legacy_cells().LSTMCell(4, initializer=tf.compat.v1.glorot_uniform_initializer(seed=2))
    out, _ = tf.compat.v1.nn.dynamic_rnn(cell, seq, sequence_length=lengths, dtype=tf.float32)
    mapped = tf.compat.v1.map_fn(lambda r: tf.sin(r) * r, seq)
    grads = tf.compat.v1.gradients(tf.reduce_sum(out * out) + tf.reduce_sum(mapped), [seq])
    return ({"seq": RNG.normal(size=(2, 5, 3)).astype(np.float32), "lengths": np.array([5, 3], np.int32)}, grads)


@pytest.mark.tf_oracle
def test_tf1_gradients_through_loops_match_tensorflow(tmp_path, tf1):
    graph_def, feeds, names, theirs = _frozen(tf1, _gradients)
    assert {"StackV2", "StackPushV2", "StackPopV2", "TensorArrayGradV3"} <= {n.op for n in graph_def.node}
    _run_everywhere(tmp_path, graph_def, feeds, names, theirs)
