"""TF1 control flow and TensorLists in graphrun-cc, on graphs TensorFlow makes, against TensorFlow.

Each graph is built here by TensorFlow (tf.compat.v1 with control flow v2 off, so tf.cond and
tf.while_loop become Switch/Merge/Enter/Exit/NextIteration/LoopCond; Keras RNNs frozen by
convert_variables_to_constants_v2, which lowers their While to the same ops and keeps their
TensorList ops), run by TensorFlow for the expected values, then by graphrun-cc. The graphs are
made in the test rather than committed: they are small and quick to build, and building them
from TensorFlow each time keeps the oracle TensorFlow's, not a file of ours that could drift.

Exactness: the cond and while graphs use only correctly rounded elementwise ops, so their
results must equal TensorFlow's bit for bit; the Keras cells go through MatMul and
transcendental functions, compared under the numerics policy.
"""

import contextlib
import os
import subprocess

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, fails, outputs, str_attr
from tests.support.numerics_policy import assert_conforms, assert_same

EXIT_USAGE, EXIT_MODEL, EXIT_RUN = 2, 3, 4


@pytest.fixture(scope="module")
def tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")


@pytest.fixture(scope="module")
def convert_to_constants(tf):
    return pytest.importorskip("tensorflow.python.framework.convert_to_constants")


@contextlib.contextmanager
def v1_control_flow(tf):
    """tf.cond and tf.while_loop build TF1 Switch/Merge frames while inside."""
    was_v2 = tf.compat.v1.control_flow_v2_enabled()
    tf.compat.v1.disable_control_flow_v2()
    try:
        yield
    finally:
        if was_v2:
            tf.compat.v1.enable_control_flow_v2()


def tf1_graph(tf, tmp_path, build):
    """(model path, graph, fetch tensors) of the TF1 graph `build(tf)` makes; build returns {name: tensor}."""
    graph = tf.Graph()
    with v1_control_flow(tf), graph.as_default():
        fetched = build(tf)
    path = tmp_path / "model.pb"
    path.write_bytes(graph.as_graph_def().SerializeToString())
    return path, graph, fetched


def tf_run(tf, graph, fetched, feeds):
    with tf.compat.v1.Session(graph=graph) as session:
        values = session.run(list(fetched.values()), {graph.get_tensor_by_name(f"{k}:0"): v for k, v in feeds.items()})
    return dict(zip(fetched, values))


def cc_run(runner, tmp_path, model, fetches, feeds):
    """{fetch: value} from graphrun-cc, fed through an .npz archive."""
    args = []
    if feeds:
        np.savez(tmp_path / "feeds.npz", **feeds)
        args = ["--feeds", tmp_path / "feeds.npz"]
    for name in fetches:
        args += ["--fetch", name]
    got = outputs(runner, model, *args)
    return {name: got[f"{name}:0" if ":" not in name else name] for name in fetches}


def check_against_tf(tf, runner, tmp_path, build, feed_sets):
    """graphrun-cc's fetches equal TensorFlow's, bit for bit, for each feed set."""
    model, graph, fetched = tf1_graph(tf, tmp_path, build)
    names = {name: tensor.name for name, tensor in fetched.items()}
    for feeds in feed_sets:
        expected = tf_run(tf, graph, fetched, feeds)
        got = cc_run(runner, tmp_path, model, [names[k] for k in fetched], feeds)
        for name in fetched:
            assert_same(got[names[name]], expected[name])


def placeholders(tf, **specs):
    return {name: tf.compat.v1.placeholder(dtype, shape, name=name) for name, (dtype, shape) in specs.items()}


X = np.array([1.5, -2.25, 3.0], np.float32)


def build_cond(tf):
    p = placeholders(tf, x=(tf.float32, [3]), p=(tf.bool, []))
    y = tf.cond(p["p"], lambda: p["x"] * 2.0, lambda: p["x"] - 1.0)
    k = tf.cond(p["p"], lambda: tf.constant(7), lambda: tf.constant(-7))
    return {"y": y, "k": k}


@pytest.mark.tf_oracle
def test_cond_takes_the_branch_pred_names(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_cond,
                     [{"x": X, "p": np.array(True)}, {"x": X, "p": np.array(False)}])


def build_while(tf, parallel_iterations=10):
    p = placeholders(tf, x=(tf.float32, [3]), n=(tf.int32, []))
    # x inside the body is a loop invariant: a constant Enter seen by every iteration
    i, acc = tf.while_loop(lambda i, acc: i < p["n"], lambda i, acc: (i + 1, acc * 1.5 + p["x"]),
                           [tf.constant(0), p["x"]], parallel_iterations=parallel_iterations)
    return {"i": i, "acc": acc}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("parallel_iterations", [1, 10, 32])
def test_while_loop_runs_until_its_condition_fails(tf, cc_runner, tmp_path, parallel_iterations):
    # n = 0: the body never runs and the Exits carry the Enters' values out
    check_against_tf(tf, cc_runner, tmp_path, lambda tf: build_while(tf, parallel_iterations),
                     [{"x": X, "n": np.array(n, np.int32)} for n in (0, 1, 6)])


def build_nested_while(tf):
    p = placeholders(tf, n=(tf.int32, []))

    def outer_body(i, total):
        def inner_body(j, s):
            return j + 1, s + j * i
        _, s = tf.while_loop(lambda j, s: j < i, inner_body, [tf.constant(0), tf.constant(0)])
        return i + 1, total + s
    _, total = tf.while_loop(lambda i, t: i < p["n"], outer_body, [tf.constant(0), tf.constant(0)])
    return {"total": total}


@pytest.mark.tf_oracle
def test_nested_while_loops(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_nested_while, [{"n": np.array(n, np.int32)} for n in (0, 1, 5)])


def build_cond_in_while(tf):
    p = placeholders(tf, x=(tf.float32, [3]), n=(tf.int32, []))

    def body(i, acc):
        acc = tf.cond(tf.equal(i % 2, 0), lambda: acc + tf.cast(i, tf.float32), lambda: acc * -0.5)
        return i + 1, acc
    _, acc = tf.while_loop(lambda i, acc: i < p["n"], body, [tf.constant(0), p["x"]])
    return {"acc": acc}


@pytest.mark.tf_oracle
def test_cond_inside_while(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_cond_in_while,
                     [{"x": X, "n": np.array(n, np.int32)} for n in (0, 3, 8)])


def build_while_in_cond(tf):
    p = placeholders(tf, x=(tf.float32, [3]), p=(tf.bool, []))

    def looped():
        return tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2.0 + 1.0), [tf.constant(0), p["x"]])[1]
    # untaken, the loop's Enters are dead: it must end at once with dead Exits, not hang
    y = tf.cond(p["p"], looped, lambda: p["x"] * 3.0)
    return {"y": y}


@pytest.mark.tf_oracle
def test_while_inside_cond_taken_and_not_taken(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_while_in_cond,
                     [{"x": X, "p": np.array(True)}, {"x": X, "p": np.array(False)}])


def build_nested_cond(tf):
    p = placeholders(tf, x=(tf.float32, [3]), a=(tf.bool, []), b=(tf.bool, []))
    y = tf.cond(p["a"], lambda: tf.cond(p["b"], lambda: p["x"] + 1.0, lambda: p["x"] + 2.0),
                lambda: tf.cond(p["b"], lambda: p["x"] * 4.0, lambda: -p["x"]))
    return {"y": y}


@pytest.mark.tf_oracle
def test_nested_conds(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_nested_cond,
                     [{"x": X, "a": np.array(a), "b": np.array(b)} for a in (True, False) for b in (True, False)])


def build_switch(tf):
    p = placeholders(tf, x=(tf.float32, [3]), p=(tf.bool, []))
    out_false, out_true = tf.raw_ops.Switch(data=p["x"], pred=p["p"], name="sw")
    merged, index = tf.raw_ops.Merge(inputs=[out_false * 2.0, out_true * 3.0], name="merge")
    return {"merged": merged, "index": index, "untaken": out_true}


@pytest.mark.tf_oracle
def test_merge_reports_which_input_was_live(tf, cc_runner, tmp_path):
    model, graph, fetched = tf1_graph(tf, tmp_path, build_switch)
    for pred in (False, True):
        feeds = {"x": X, "p": np.array(pred)}
        expected = tf_run(tf, graph, {k: fetched[k] for k in ("merged", "index")}, feeds)
        got = cc_run(cc_runner, tmp_path, model, ["merge:0", "merge:1"], feeds)
        assert_same(got["merge:0"], expected["merged"])
        assert_same(got["merge:1"], expected["index"])


@pytest.mark.tf_oracle
def test_fetching_a_dead_tensor_is_an_error_naming_it(tf, cc_runner, tmp_path):
    model, graph, fetched = tf1_graph(tf, tmp_path, build_switch)
    feeds = {"x": X, "p": np.array(False)}
    with pytest.raises(tf.errors.InvalidArgumentError):  # TensorFlow refuses it too
        tf_run(tf, graph, {"untaken": fetched["untaken"]}, feeds)
    np.savez(tmp_path / "feeds.npz", **feeds)
    line = fails(cc_runner, EXIT_RUN, model, "--feeds", tmp_path / "feeds.npz", "--fetch", "sw:1")
    assert "fetch 'sw:1' is dead" in line, line


@pytest.mark.tf_oracle
def test_a_tensor_inside_a_loop_cannot_be_fetched(tf, cc_runner, tmp_path):
    model, graph, fetched = tf1_graph(tf, tmp_path, build_while)
    inside = next(op.name for op in graph.get_operations() if op.type == "Merge")
    line = fails(cc_runner, EXIT_USAGE, model, "--feed", "x=[1,2,3]", "--feed", "n=2", "--fetch", inside)
    assert f"cannot fetch '{inside}:0': it is inside loop frame" in line, line


@pytest.mark.tf_oracle
def test_a_cycle_not_closed_by_next_iteration_is_still_refused(tf, cc_runner, tmp_path):
    model, graph, _ = tf1_graph(tf, tmp_path, build_while)
    graph_def = graph.as_graph_def()
    for node in graph_def.node:  # the back edge now comes from the body's add, skipping NextIteration
        if node.op == "Merge":
            node.input[1] = next(n for n in graph_def.node if n.op == "NextIteration" and
                                 n.name == node.input[1]).input[0]
            break
    model.write_bytes(graph_def.SerializeToString())
    line = fails(cc_runner, EXIT_MODEL, model, "--feed", "x=[1,2,3]", "--feed", "n=2")
    assert "the graph has a cycle:" in line and "only a while loop's NextIteration -> Merge edge" in line, line


def build_control_trigger(tf):
    p = placeholders(tf, x=(tf.float32, [3]), p=(tf.bool, []))
    _, out_true = tf.raw_ops.Switch(data=p["x"], pred=p["p"])
    dead_when_false = tf.identity(out_true)
    with tf.control_dependencies([dead_when_false]):
        trigger = tf.raw_ops.ControlTrigger(name="trigger")  # runs even after a dead input
    with tf.control_dependencies([trigger]):
        y = tf.identity(p["x"] + 1.0)
    return {"y": y}


@pytest.mark.tf_oracle
def test_control_trigger_runs_after_a_dead_input(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_control_trigger,
                     [{"x": X, "p": np.array(True)}, {"x": X, "p": np.array(False)}])


def build_lists(tf):
    p = placeholders(tf, x=(tf.float32, [4, 2]), i=(tf.int32, []))
    raw = tf.raw_ops
    shape = tf.constant([2], tf.int32)
    reserved = raw.TensorListReserve(element_shape=shape, num_elements=3, element_dtype=tf.float32)
    written = raw.TensorListSetItem(input_handle=reserved, index=p["i"], item=p["x"][1])
    split = raw.TensorListFromTensor(tensor=p["x"], element_shape=shape)
    return {
        "stacked": raw.TensorListStack(input_handle=written, element_shape=shape, element_dtype=tf.float32),
        "unset": raw.TensorListGetItem(input_handle=written, index=(p["i"] + 1) % 3, element_shape=shape,
                                       element_dtype=tf.float32),
        "item": raw.TensorListGetItem(input_handle=split, index=p["i"], element_shape=shape,
                                      element_dtype=tf.float32),
        "length": raw.TensorListLength(input_handle=split),
        "element_shape": raw.TensorListElementShape(input_handle=reserved, shape_type=tf.int64),
        "unknown_rank": raw.TensorListElementShape(
            input_handle=raw.TensorListReserve(element_shape=-1, num_elements=1, element_dtype=tf.int32),
            shape_type=tf.int32),
        "roundtrip": raw.TensorListStack(input_handle=split, element_shape=shape, element_dtype=tf.float32,
                                         num_elements=4),
    }


LIST_X = np.arange(8, dtype=np.float32).reshape(4, 2) - 3.5


@pytest.mark.tf_oracle
def test_tensor_list_ops(tf, cc_runner, tmp_path):
    check_against_tf(tf, cc_runner, tmp_path, build_lists, [{"x": LIST_X, "i": np.array(i, np.int32)} for i in (0, 2)])


def build_push_pop(tf):
    p = placeholders(tf, x=(tf.float32, [4, 2]), bound=(tf.int32, []))
    raw = tf.raw_ops
    empty = raw.EmptyTensorList(element_shape=tf.constant([2], tf.int64), max_num_elements=p["bound"],
                                element_dtype=tf.float32)
    pushed = raw.TensorListPushBack(input_handle=raw.TensorListPushBack(input_handle=empty, tensor=p["x"][0]),
                                    tensor=p["x"][3])
    popped, last = raw.TensorListPopBack(input_handle=pushed, element_shape=[-1], element_dtype=tf.float32)
    return {
        "stacked": raw.TensorListStack(input_handle=pushed, element_shape=[2], element_dtype=tf.float32),
        "last": last,
        "left": raw.TensorListLength(input_handle=popped),
        "unset_popped": raw.TensorListPopBack(
            input_handle=raw.TensorListReserve(element_shape=[3], num_elements=2, element_dtype=tf.int32),
            element_shape=[3], element_dtype=tf.int32)[1],
    }


@pytest.mark.tf_oracle
def test_push_back_and_pop_back(tf, cc_runner, tmp_path):
    # max_num_elements -1: no bound
    check_against_tf(tf, cc_runner, tmp_path, build_push_pop,
                     [{"x": LIST_X, "bound": np.array(b, np.int32)} for b in (-1, 2)])


@pytest.mark.tf_oracle
def test_pushing_onto_a_full_list_is_an_error(tf, cc_runner, tmp_path):
    model, graph, fetched = tf1_graph(tf, tmp_path, build_push_pop)
    feeds = {"x": LIST_X, "bound": np.array(1, np.int32)}
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf_run(tf, graph, {"last": fetched["last"]}, feeds)
    np.savez(tmp_path / "feeds.npz", **feeds)
    line = fails(cc_runner, EXIT_RUN, model, "--feeds", tmp_path / "feeds.npz", "--fetch", fetched["last"].name)
    assert "(TensorListPushBack)" in line and "the list is full: it holds its max_num_elements, 1" in line, line


@pytest.mark.tf_oracle
def test_a_list_index_out_of_range_is_an_error(tf, cc_runner, tmp_path):
    model, graph, fetched = tf1_graph(tf, tmp_path, build_lists)
    feeds = {"x": LIST_X, "i": np.array(5, np.int32)}
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf_run(tf, graph, {"item": fetched["item"]}, feeds)
    np.savez(tmp_path / "feeds.npz", **feeds)
    line = fails(cc_runner, EXIT_RUN, model, "--feeds", tmp_path / "feeds.npz", "--fetch", fetched["item"].name)
    assert "(TensorListGetItem)" in line and "index 5 is out of range for a list of 4 elements" in line, line


@pytest.mark.tf_oracle
def test_a_variant_can_be_neither_fetched_nor_fed(tf, cc_runner, tmp_path):
    def build(tf):
        handle = tf.compat.v1.placeholder(tf.variant, [], name="handle")
        lst = tf.raw_ops.TensorListReserve(element_shape=[2], num_elements=3, element_dtype=tf.float32, name="lst")
        return {"length": tf.raw_ops.TensorListLength(input_handle=handle, name="length"), "lst": lst}
    model, _, _ = tf1_graph(tf, tmp_path, build)
    line = fails(cc_runner, EXIT_USAGE, model, "--fetch", "lst")
    assert "cannot fetch 'lst': it is a variant" in line, line
    line = fails(cc_runner, EXIT_USAGE, model, "--fetch", "length", "--feed", "handle=1")
    assert "--feed handle: " in line and "variant" in line, line


# Keras 3 recurrent layers as TensorFlow freezes them: a While lowered to TF1 frames, its
# time steps read from and written to TensorLists.
def keras_rnn(keras, kind):
    inputs = keras.Input((5, 3))
    if kind == "lstm":
        outputs = keras.layers.LSTM(4)(inputs)
    elif kind == "gru":
        outputs = keras.layers.GRU(4, return_sequences=True)(inputs)
    elif kind == "simple_rnn":
        outputs = keras.layers.SimpleRNN(4, return_sequences=True)(inputs)
    else:
        masked = keras.layers.Masking(0.0)(inputs)
        outputs = keras.layers.Bidirectional(keras.layers.LSTM(3, return_sequences=True))(masked)
    return keras.Model(inputs, outputs)


@pytest.fixture(scope="module")
def cc_kernels(cc_runner):
    listing = subprocess.run([str(cc_runner), "--list-kernels"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    return {line.split()[0] for line in listing.stdout.splitlines() if line.strip()}


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", ["lstm", "gru", "simple_rnn", "bidirectional_masked"])
def test_frozen_keras_rnns(tf, convert_to_constants, cc_runner, cc_kernels, tmp_path, kind):
    keras = pytest.importorskip("keras", reason="Keras is not installed; `make test` installs it")
    keras.utils.set_random_seed(7)
    model = keras_rnn(keras, kind)
    function = tf.function(lambda x: model(x)).get_concrete_function(tf.TensorSpec((2, 5, 3), tf.float32))
    frozen = convert_to_constants.convert_variables_to_constants_v2(function)
    graph_def = frozen.graph.as_graph_def()
    ops = {node.op for node in graph_def.node}
    assert {"Enter", "Exit", "NextIteration", "TensorListSetItem"} <= ops  # what this test is about
    x = np.random.RandomState(3).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    x[1, 3:] = 0.0  # masked time steps, for the Masking layer
    (expected,) = [t.numpy() for t in tf.nest.flatten(frozen(tf.constant(x)))]
    path = tmp_path / "model.pb"
    path.write_bytes(graph_def.SerializeToString())
    np.save(tmp_path / "x.npy", x)
    (fetch,) = [t.name for t in frozen.outputs]
    missing = sorted(ops - cc_kernels)
    if missing:
        # until those kernels land, the refusal itself is what graphrun-cc must get right
        line = fails(cc_runner, EXIT_MODEL, path, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch)
        assert all(op in line for op in missing), line
        pytest.xfail(f"graphrun-cc has no kernel for {', '.join(missing)}")
    got = outputs(cc_runner, path, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch)[fetch]
    assert_conforms(got, expected, graph_def, fetch)


@pytest.mark.tf_oracle
def test_a_loop_past_the_iteration_limit_is_an_error(tf, cc_runner, tmp_path):
    model, _, _ = tf1_graph(tf, tmp_path, build_while)
    args = [cc_runner, model, "--feed", "x=[1,2,3]", "--feed", "n=5", "--fetch", "while/Exit_1"]
    env = dict(os.environ, GRAPHDEF_MAX_WHILE_ITERATIONS="5")  # the body runs 5 times, then the condition fails
    assert subprocess.run(list(map(str, args)), env=env, capture_output=True, timeout=60).returncode == 0
    env["GRAPHDEF_MAX_WHILE_ITERATIONS"] = "4"
    proc = subprocess.run(list(map(str, args)), env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == EXIT_RUN, proc.stderr
    assert "loop frame 'while/while_context' ran more than 4 iterations; set GRAPHDEF_MAX_WHILE_ITERATIONS" \
        in proc.stderr, proc.stderr


def malformed_frames(kind):
    """Control flow no TensorFlow program makes, built by hand."""
    g = Graph()
    g.const("c", np.float32(1.0))
    if kind == "exit outside a loop":
        g.op("out", "Exit", ["c"], np.float32)
    elif kind == "two frames":
        g.op("inside", "Enter", ["c"], np.float32, frame_name=str_attr("loop"))
        g.op("out", "AddV2", ["inside", "c"], np.float32)
    elif kind == "next iteration outside a loop":
        g.op("out", "NextIteration", ["c"], np.float32)
    return g


@pytest.mark.parametrize("kind, message", [
    ("exit outside a loop", "node 'out' (Exit) is not inside a loop: no Enter leads to it"),
    ("two frames", "node 'out' (AddV2) has inputs from two frames"),
    ("next iteration outside a loop", "node 'out' (NextIteration) is not inside a loop"),
])
def test_malformed_frames_are_refused(cc_runner, tmp_path, kind, message):
    model = malformed_frames(kind).save(tmp_path / "model.pb")
    line = fails(cc_runner, EXIT_MODEL, model, "--fetch", "out")
    assert message in line, line
