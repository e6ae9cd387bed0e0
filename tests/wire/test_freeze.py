"""Freezing: a trained graph becomes a self-contained inference GraphDef that every runtime runs.

A small ReLU network is trained for a few steps with GradientDescentOptimizer, next to the
same training written in numpy here; the frozen graph must hold only the output's
ancestors, with the trained values as Consts, and give the live session's outputs in the
Session, graphrun, the C++ runner and TensorFlow.
"""

import os
from pathlib import Path

import numpy as np
import pytest

import graphdef as tf
from graphdef import graph_util
from graphdef.wire import serialize
from graphdef.framework.errors import FailedPreconditionError
from tests.support.cc_helpers import listed_kernels
from tests.support.cc_helpers import ok as ok_cc
from tests.support.graphrun_helpers import json_line, ok
from tests.support.numerics_policy import assert_conforms

RNG = np.random.default_rng(7)
X = RNG.normal(size=(16, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
W1 = RNG.normal(scale=0.5, size=(3, 4)).astype(np.float32)
B1 = np.full(4, 0.1, np.float32)
W2 = RNG.normal(scale=0.5, size=(4, 1)).astype(np.float32)
B2 = np.zeros(1, np.float32)
RATE, STEPS = 0.05, 5

# The nodes `out` needs, by the names build_model gives them.
INFERENCE_NODES = {"x", "w1", "w1/read", "b1", "b1/read", "mm1", "pre1", "hidden",
                   "w2", "w2/read", "b2", "b2/read", "mm2", "out"}


def build_model():
    """out = relu(x w1 + b1) w2 + b2, its squared loss, a training step and a global step."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w1, b1 = tf.Variable(W1, name="w1"), tf.Variable(B1, name="b1")
    w2, b2 = tf.Variable(W2, name="w2"), tf.Variable(B2, name="b2")
    hidden = tf.nn.relu(tf.add(tf.matmul(x, w1, name="mm1"), b1, name="pre1"), name="hidden")
    out = tf.add(tf.matmul(hidden, w2, name="mm2"), b2, name="out")
    loss = tf.reduce_mean(tf.square(out - y), name="loss")
    step = tf.Variable(np.int64(0), name="global_step", trainable=False)
    train = tf.train.GradientDescentOptimizer(RATE).minimize(loss, global_step=step)
    init = tf.global_variables_initializer()
    return {"x": x, "y": y, "out": out, "loss": loss, "train": train, "init": init,
            "vars": [w1, b1, w2, b2], "step": step}


def numpy_training():
    """The same STEPS of gradient descent on the mean squared error, by hand."""
    w1, b1, w2, b2 = W1.astype(np.float64), B1.astype(np.float64), W2.astype(np.float64), B2.astype(np.float64)
    for _ in range(STEPS):
        pre = X @ w1 + b1
        hidden = np.maximum(pre, 0)
        out = hidden @ w2 + b2
        d_out = 2 * (out - Y) / out.size
        d_hidden = (d_out @ w2.T) * (pre > 0)
        grads = (X.T @ d_hidden, d_hidden.sum(0), hidden.T @ d_out, d_out.sum(0))
        w1, b1, w2, b2 = (p - RATE * g for p, g in zip((w1, b1, w2, b2), grads))
    return w1, b1, w2, b2


def forward(weights, x):
    w1, b1, w2, b2 = weights
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


@pytest.fixture(scope="module")
def trained():
    """The graph trained for STEPS steps in a live session, and its parts."""
    g = tf.Graph()
    with g.as_default():
        parts = build_model()
    sess = tf.Session(graph=g)
    sess.run(parts["init"])
    for _ in range(STEPS):
        sess.run(parts["train"], {parts["x"]: X, parts["y"]: Y})
    parts.update(graph=g, sess=sess, weights=sess.run(parts["vars"]))
    yield parts
    sess.close()


@pytest.fixture(scope="module")
def frozen(trained):
    return graph_util.convert_variables_to_constants(trained["sess"], trained["graph"].as_graph_def(), ["out"])


@pytest.fixture(scope="module")
def frozen_file(frozen, tmp_path_factory):
    directory = tmp_path_factory.mktemp("frozen")
    path = tf.io.write_graph(frozen, str(directory), "frozen.pb", as_text=False)
    np.save(directory / "x.npy", X)
    return Path(path)


def live_output(trained, x=X):
    return trained["sess"].run(trained["out"], {trained["x"]: x})


# -- what the frozen graph holds -------------------------------------------------------------------

def test_training_reached_the_numpy_weights(trained):
    for got, want in zip(trained["weights"], numpy_training()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not np.allclose(trained["weights"][0], W1)  # the weights did move


def test_only_the_outputs_ancestors_are_kept_in_the_original_order(trained, frozen):
    original = [n.name for n in trained["graph"].as_graph_def().node]
    names = [n.name for n in frozen.node]
    assert set(names) == INFERENCE_NODES
    assert names == [n for n in original if n in INFERENCE_NODES]
    assert {n.op for n in frozen.node} == {"Placeholder", "Const", "Identity", "MatMul", "AddV2", "Relu"}
    assert not [n.name for n in frozen.node if n.name.startswith(("gradients/", "GradientDescent", "global_step"))]
    assert frozen.versions == trained["graph"].as_graph_def().versions


def test_the_training_graph_had_what_freezing_removes(trained):
    """The check above means something only if these nodes were there to remove."""
    ops = {op.type for op in trained["graph"].get_operations()}
    assert {"Assign", "AssignAdd", "ApplyGradientDescent", "VariableV2", "NoOp"} <= ops
    assert any(op.name.startswith("gradients/") for op in trained["graph"].get_operations())


def test_variables_become_consts_written_as_graphdef_writes_a_constant(trained, frozen):
    by_name = {n.name: n for n in frozen.node}
    for var, value in zip(trained["vars"], trained["weights"]):
        scratch = tf.Graph()
        with scratch.as_default():
            expected = tf.constant(value, name=var.op.name).op.node_def
        got = by_name[var.op.name]
        assert got.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
        np.testing.assert_array_equal(serialize.ndarray_from_proto(got.attr["value"].tensor), value)


def test_every_other_node_is_copied_unchanged(trained, frozen):
    original = {n.name: n.SerializeToString(deterministic=True) for n in trained["graph"].as_graph_def().node}
    variables = {v.op.name for v in trained["vars"]}
    for node in frozen.node:
        if node.name not in variables:
            assert node.SerializeToString(deterministic=True) == original[node.name], node.name


def test_freeze_takes_tensors_operations_variables_or_names(trained, frozen):
    sess, out = trained["sess"], trained["out"]
    for outputs in (out, [out.op], ["out:0"], "out", [out, "out"]):
        assert graph_util.freeze(sess, outputs) == frozen
    w1 = trained["vars"][0]
    assert [n.name for n in graph_util.freeze(sess, w1).node] == ["w1", "w1/read"]


# -- the frozen file in every runtime ----------------------------------------------------------------

def test_the_frozen_file_loads_and_runs_in_a_session_like_the_live_one(trained, frozen_file):
    g = tf.load(frozen_file)
    assert not [op for op in g.get_operations() if op.type == "VariableV2"]
    with tf.Session(graph=g) as sess:  # no initializer: there is nothing left to initialize
        got = sess.run("out:0", {"x:0": X})
    np.testing.assert_array_equal(got, live_output(trained))
    assert_conforms(got, forward(trained["weights"], X), frozen_file, "out:0")


def graphrun_outputs(capsys, *argv):
    return {o["name"]: o for o in json_line(ok(capsys, *argv))["outputs"]}


def test_graphrun_prints_the_live_outputs(trained, frozen_file, capsys):
    # without --fetch graphrun prints every node nothing consumes: only `out` is left
    outputs = graphrun_outputs(capsys, frozen_file, "--feed", f"x=@{frozen_file.parent / 'x.npy'}", "--json")
    assert list(outputs) == ["out:0"]
    assert (outputs["out:0"]["dtype"], outputs["out:0"]["shape"]) == ("float32", [16, 1])
    np.testing.assert_array_equal(np.array(outputs["out:0"]["values"], np.float32), live_output(trained))


def test_the_cc_runner_has_a_kernel_for_every_frozen_op(runner, frozen):
    assert {n.op for n in frozen.node} <= listed_kernels(runner)


def test_the_cc_runner_prints_the_live_outputs(trained, frozen_file, runner):
    [output] = json_line(ok_cc(runner, frozen_file, "--feed", f"x=@{frozen_file.parent / 'x.npy'}",
                               "--fetch", "out:0", "--json"))["outputs"]
    assert (output["name"], output["dtype"], output["shape"]) == ("out:0", "float32", [16, 1])
    assert_conforms(np.array(output["values"], np.float32), live_output(trained), frozen_file, "out:0")


@pytest.fixture(scope="module")
def tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # must precede the import to quiet its C++ logging
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")


def tensorflow_run(tensorflow, graph_def_bytes, fetch, feeds):
    graph_def = tensorflow.compat.v1.GraphDef.FromString(graph_def_bytes)
    graph = tensorflow.Graph()
    with graph.as_default():
        tensorflow.compat.v1.import_graph_def(graph_def, name="")
    config = tensorflow.compat.v1.ConfigProto(device_count={"GPU": 0})
    with tensorflow.compat.v1.Session(graph=graph, config=config) as sess:
        return sess.run(fetch, feeds)


@pytest.mark.tf_oracle
def test_tensorflow_runs_the_frozen_file_to_the_live_outputs(trained, frozen_file, tensorflow):
    got = tensorflow_run(tensorflow, frozen_file.read_bytes(), "out:0", {"x:0": X})
    assert_conforms(got, live_output(trained), frozen_file, "out:0")


@pytest.mark.tf_oracle
def test_tensorflow_prunes_the_training_graph_to_the_same_nodes(trained, frozen, tensorflow):
    data = serialize.serialize(trained["graph"].as_graph_def())
    theirs = tensorflow.compat.v1.graph_util.extract_sub_graph(
        tensorflow.compat.v1.GraphDef.FromString(data), ["out"])
    assert [n.name for n in theirs.node] == [n.name for n in frozen.node]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ["protected output", "unprotected output", "control inputs"])
def test_remove_training_nodes_agrees_with_tensorflow(frozen, tensorflow, case):
    graph_def, protected = {"protected output": (frozen, ["out"]), "unprotected output": (frozen, None),
                            "control inputs": (frozen_with_control_inputs(), ["total"])}[case]
    ours = graph_util.remove_training_nodes(graph_def, protected_nodes=protected)
    theirs = tensorflow.compat.v1.graph_util.remove_training_nodes(
        tensorflow.compat.v1.GraphDef.FromString(serialize.serialize(graph_def)), protected_nodes=protected)
    assert [(n.name, list(n.input)) for n in ours.node] == [(n.name, list(n.input)) for n in theirs.node]
    assert [n.SerializeToString(deterministic=True) for n in ours.node] == [
        n.SerializeToString(deterministic=True) for n in theirs.node]


# -- options and errors ---------------------------------------------------------------------------------

def test_remove_training_nodes_splices_out_the_reads_and_still_runs(trained, frozen):
    spliced = graph_util.remove_training_nodes(frozen, protected_nodes=["out"])
    assert [n.name for n in spliced.node if n.op == "Identity"] == []
    assert list({n.name: n for n in spliced.node}["mm1"].input) == ["x", "w1"]
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(spliced, name="")
    with tf.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run("out:0", {"x:0": X}), live_output(trained))


def frozen_with_control_inputs():
    """total = sum(counter) after `side` (a control input only); `unused` is a variable nothing needs."""
    g = tf.Graph()
    with g.as_default():
        counter = tf.Variable(np.int32([3, 4]), name="counter")
        side = tf.identity(tf.constant(2, name="two"), name="side")
        with tf.control_dependencies([side]):
            total = tf.reduce_sum(tf.stop_gradient(counter, name="held"), name="total")
        tf.Variable(1.0, name="unused")
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        counter.load([10, 20], sess)
        return graph_util.freeze(sess, total)


def test_control_inputs_are_followed_and_int_variables_freeze_too():
    frozen = frozen_with_control_inputs()
    # `side` is reached only through control inputs (of `total`, its axis Const and `held`)
    assert [(n.name, n.op, list(n.input)) for n in frozen.node] == [
        ("counter", "Const", []), ("counter/read", "Identity", ["counter"]), ("two", "Const", []),
        ("side", "Identity", ["two"]), ("held", "StopGradient", ["counter/read", "^side"]),
        ("Const", "Const", ["^side"]), ("total", "Sum", ["held", "Const", "^side"])]
    assert frozen.node[0].attr["dtype"].type == tf.int32.enum
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(frozen, name="")
    with tf.Session(graph=g) as sess:
        assert sess.run("total:0") == 30


def test_a_blacklisted_variable_stays_a_variable(trained):
    frozen = graph_util.convert_variables_to_constants(trained["sess"], trained["graph"].as_graph_def(), ["out"],
                                                       variable_names_blacklist=["w2"])
    assert {n.name: n.op for n in frozen.node if n.name in ("w1", "w2")} == {"w1": "Const", "w2": "VariableV2"}
    only = graph_util.convert_variables_to_constants(trained["sess"], trained["graph"].as_graph_def(), ["out"],
                                                     variable_names_whitelist=["b1"])
    assert [n.name for n in only.node if n.op == "Const" and n.name in ("w1", "b1", "w2", "b2")] == ["b1"]


def test_unknown_outputs_are_all_named(trained):
    with pytest.raises(ValueError, match=r"no node named 'nope', 'nada' in the graph"):
        graph_util.convert_variables_to_constants(trained["sess"], trained["graph"].as_graph_def(),
                                                  ["out", "nope", "nada:0"])
    with pytest.raises(TypeError, match="must be a list of names"):
        graph_util.convert_variables_to_constants(trained["sess"], trained["graph"].as_graph_def(), "out")


def test_uninitialized_variables_are_all_named(trained):
    with tf.Session(graph=trained["graph"]) as fresh:
        with pytest.raises(FailedPreconditionError, match=r"variables 'w1', 'b1', 'w2', 'b2' have no value"):
            graph_util.freeze(fresh, trained["out"])


def test_an_output_that_needs_a_training_step_cannot_be_frozen():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(2.0, name="w")
        update = w.assign_add(1.0, name="bump")
        with tf.control_dependencies([update]):
            after = tf.identity(w.read_value(), name="after")
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        with pytest.raises(ValueError, match=r"'bump' \(AssignAdd\) writes 'w'"):
            graph_util.freeze(sess, after)
