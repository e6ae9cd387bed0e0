"""Functions (GraphDef.library) and functional control flow in every runtime.

The TensorFlow-made models are tests/tf_models/tf2_control_flow and tf2_noinline_calls
(committed; tests/tf/test_tf_models.py replays their feeds in every runtime). Here: the proto against
TensorFlow's own descriptors, more feeds against TensorFlow, the library's round trip, inspect
in both runners, and what a hostile library gets (one line, never a hang or a stack overflow).
"""

import json
import re
from pathlib import Path

import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.framework.errors import InvalidArgumentError
from graphdef.wire.serialize import GraphFileError, import_graph_def, load, read_graph_def
from tests.support import cc_helpers
from tests.support.numerics_policy import assert_conforms
from tests.support.pbtxt_helpers import one_line
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

MODELS = Path(__file__).resolve().parents[1] / "tf_models"
CFLOW = MODELS / "tf2_control_flow" / "model.pb"
CALLS = MODELS / "tf2_noinline_calls" / "model.pb"


# -- the proto ---------------------------------------------------------------------------------

@pytest.mark.tf_oracle
@pytest.mark.parametrize("message", ["FunctionDefLibrary", "FunctionDef", "GradientDef", "RegisteredGradient",
                                     "OpDef", "OpDeprecation"])
def test_messages_are_wire_compatible_with_tensorflow(tf_oracle, message):
    from tensorflow.core.framework import function_pb2, op_def_pb2
    theirs_module = function_pb2 if hasattr(function_pb2, message) else op_def_pb2
    pending = [(getattr(graph_pb2, message).DESCRIPTOR, getattr(theirs_module, message).DESCRIPTOR)]
    while pending:
        ours, theirs = pending.pop()
        for field in ours.fields:
            other = theirs.fields_by_name.get(field.name)
            assert other is not None, f"{ours.full_name}.{field.name}: TensorFlow has no such field"
            assert (field.number, field.type, field.is_repeated) == (other.number, other.type, other.is_repeated), \
                f"{ours.full_name}.{field.name}"
            if field.message_type is not None:
                assert field.message_type.name == other.message_type.name, f"{ours.full_name}.{field.name}"
                if field.message_type.file is ours.file and not field.message_type.GetOptions().map_entry:
                    if field.message_type.name not in ("AttrValue", "NodeDef"):
                        pending.append((field.message_type, other.message_type))


# -- TensorFlow-made models, more feeds ---------------------------------------------------------

def _tf_run(tf_module, path, feeds, fetches):
    graph = tf_module.Graph()
    with graph.as_default():
        tf_module.compat.v1.import_graph_def(tf_module.compat.v1.GraphDef.FromString(Path(path).read_bytes()),
                                             name="")
    with tf_module.compat.v1.Session(graph=graph) as sess:
        return sess.run(fetches, {f"{k}:0": v for k, v in feeds.items()})


CFLOW_FEEDS = [  # both branches of each cond, and loops of 0, 1 and 6 iterations
    {"x": np.array([[1, 2], [3, -1]], np.float32), "n": np.array(0, np.int32)},
    {"x": np.array([[-1, 2], [-3, -1]], np.float32), "n": np.array(1, np.int32)},
    {"x": np.array([[0.5, 0.25]], np.float32), "n": np.array(6, np.int32)},
    {"x": np.zeros((0, 2), np.float32), "n": np.array(3, np.int32)},
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("feeds", CFLOW_FEEDS, ids=["n0", "n1", "n6", "empty"])
def test_control_flow_agrees_with_tensorflow_in_every_runtime(tf_oracle, cc_runner, tmp_path, feeds):
    fetches = ["Identity:0", "Identity_1:0"]
    expected = _tf_run(tf_oracle, CFLOW, feeds, fetches)
    with tf.Session(graph=load(CFLOW)) as sess:
        ours = sess.run(fetches, {f"{k}:0": v for k, v in feeds.items()})
    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--feed", f"{name}=@{tmp_path / f'{name}.npy'}"]
    cc = cc_helpers.outputs(cc_runner, CFLOW, *args, *sum((["--fetch", f] for f in fetches), []))
    for fetch, want, got in zip(fetches, expected, ours):
        assert_conforms(got, want, CFLOW, fetch)
        assert_conforms(cc[fetch], want, CFLOW, fetch)


@pytest.mark.tf_oracle
def test_nested_and_stateful_calls_agree_with_tensorflow(tf_oracle, cc_runner):
    census = {n.op for n in read_graph_def(CALLS).node}
    assert {"PartitionedCall", "StatefulPartitionedCall"} <= census
    nested = [f for f in read_graph_def(CALLS).library.function if any(n.op == "PartitionedCall" for n in f.node_def)]
    assert nested, "the model should nest a call inside a function"
    x = np.random.default_rng(3).normal(size=(7, 4)).astype(np.float32)
    (expected,) = _tf_run(tf_oracle, CALLS, {"x": x}, ["Identity:0"])
    with tf.Session(graph=load(CALLS)) as sess:
        assert_conforms(sess.run("Identity:0", {"x:0": x}), expected, CALLS, "Identity:0")
    cc = cc_helpers.output(cc_runner, CALLS, "--feed", "x=" + json.dumps(x.tolist()))
    assert_conforms(cc, expected, CALLS, "Identity:0")


# -- round trip ---------------------------------------------------------------------------------

@pytest.mark.tf_oracle
@pytest.mark.parametrize("path", [CFLOW, CALLS], ids=["control_flow", "calls"])
def test_the_library_round_trips_and_tensorflow_imports_the_saved_file(tf_oracle, tmp_path, path):
    original = read_graph_def(path)
    saved = tmp_path / "saved.pb"
    tf.save(load(path), saved)
    again = read_graph_def(saved)
    assert again.library.SerializeToString(deterministic=True) == original.library.SerializeToString(deterministic=True)
    tf.save(load(saved), tmp_path / "twice.pb")
    assert (tmp_path / "twice.pb").read_bytes() == saved.read_bytes()
    spec = json.loads((path.parent / "case.json").read_text())
    feeds = {name: np.load(path.parent / file) for name, file in spec["feeds"].items()}
    for fetch, want in zip(spec["fetches"], _tf_run(tf_oracle, saved, feeds, spec["fetches"])):
        assert_conforms(want, np.load(path.parent / spec["expected"][spec["fetches"].index(fetch)]), path, fetch)


# -- inspect ------------------------------------------------------------------------------------

def test_inspect_lists_the_library_alike_in_both_runners(cc_runner):
    from graphdef.graphrun.inspect_model import format_summary, summarize
    text = format_summary(summarize(str(CFLOW)))
    assert "functions (" in text
    for fdef in read_graph_def(CFLOW).library.function:
        assert fdef.signature.name in text
    # graphrun-cc infers fewer output shapes (README); the library and the ops are read alike
    def library_section(report):
        return report[report.index("op types ("):report.index("unsupported ops")]
    assert library_section(cc_helpers.ok(cc_runner, "inspect", CFLOW)) == library_section(text)
    cc_json = json.loads(cc_helpers.ok(cc_runner, "inspect", CFLOW, "--json"))
    ours = summarize(str(CFLOW))
    assert [cc_json[k] for k in ("functions", "op_types", "unsupported_ops", "inputs")] == \
        [ours[k] for k in ("functions", "op_types", "unsupported_ops", "inputs")]


def test_inspect_is_unchanged_for_a_graph_without_a_library(cc_runner):
    from graphdef.graphrun.inspect_model import format_summary, summarize
    model = Path(__file__).resolve().parents[1] / "models" / "mlp.pb"
    assert "functions" not in summarize(str(model)) and "\nfunctions (" not in format_summary(summarize(str(model)))
    assert "functions" not in json.loads(cc_helpers.ok(cc_runner, "inspect", model, "--json"))
    assert "\nfunctions (" not in cc_helpers.ok(cc_runner, "inspect", model)


# -- hostile libraries --------------------------------------------------------------------------

def _loop_forever():
    """A While whose condition is always true: cond(i) = i >= 0, body(i) = i + 1."""
    lib = graph_pb2.FunctionDefLibrary()
    cond = lib.function.add()
    cond.signature.name = "cond"
    cond.signature.input_arg.add(name="i", type=tf.int32.enum)
    cond.signature.output_arg.add(name="keep", type=tf.bool.enum)
    node = cond.node_def.add(name="ge", op="GreaterEqual", input=["i", "i"])
    node.attr["T"].type = tf.int32.enum
    cond.ret["keep"] = "ge:z:0"
    body = lib.function.add()
    body.signature.name = "body"
    body.signature.input_arg.add(name="i", type=tf.int32.enum)
    body.signature.output_arg.add(name="j", type=tf.int32.enum)
    node = body.node_def.add(name="neg", op="Neg", input=["i"])
    node.attr["T"].type = tf.int32.enum
    body.ret["j"] = "neg:y:0"
    return lib


def _graph_with(lib, op, inputs, attrs):
    g = graph_pb2.GraphDef()
    g.library.CopyFrom(lib)
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = tf.int32.enum
    node = g.node.add(name="call", op=op, input=inputs)
    for key, value in attrs.items():
        if isinstance(value, str):
            node.attr[key].func.name = value
        else:
            node.attr[key].list.type.extend(t.enum for t in value)
    return g


def test_an_endless_loop_stops_with_one_line(cc_runner, tmp_path, monkeypatch):
    model = tmp_path / "loop.pb"
    model.write_bytes(_graph_with(_loop_forever(), "While", ["x"], {"T": [tf.int32], "cond": "cond", "body": "body"})
                      .SerializeToString())
    monkeypatch.setenv("GRAPHDEF_MAX_WHILE_ITERATIONS", "50")
    with tf.Session(graph=load(model)) as sess, pytest.raises(InvalidArgumentError, match="ran 50 iterations"):
        sess.run("call:0", {"x:0": 1})
    line = cc_helpers.fails(cc_runner, 4, model, "--feed", "x=1")
    assert "node 'call' (While)" in line and "ran 50 iterations" in line


def test_endless_recursion_stops_with_one_line(cc_runner, tmp_path):
    lib = graph_pb2.FunctionDefLibrary()
    f = lib.function.add()
    f.signature.name = "f"
    f.signature.input_arg.add(name="a", type=tf.int32.enum)
    f.signature.output_arg.add(name="b", type=tf.int32.enum)
    node = f.node_def.add(name="again", op="PartitionedCall", input=["a"])
    node.attr["Tin"].list.type.append(tf.int32.enum)
    node.attr["Tout"].list.type.append(tf.int32.enum)
    node.attr["f"].func.name = "f"
    f.ret["b"] = "again:output:0"
    model = tmp_path / "recursive.pb"
    model.write_bytes(_graph_with(lib, "PartitionedCall", ["x"], {"Tin": [tf.int32], "Tout": [tf.int32], "f": "f"})
                      .SerializeToString())
    with tf.Session(graph=load(model)) as sess, pytest.raises(InvalidArgumentError, match="nest more than"):
        sess.run("call:0", {"x:0": 1})
    assert "nest more than" in cc_helpers.fails(cc_runner, 4, model, "--feed", "x=1")


BAD_LIBRARIES = {
    "missing function": (lambda g: setattr(g.node[1].attr["body"].func, "name", "nope"), "no function 'nope'"),
    "wrong argument dtype": (
        lambda g: (g.library.function[0].signature.input_arg[0].__setattr__("type", tf.float32.enum),
                   g.library.function[0].node_def[0].attr["T"].__setattr__("type", tf.float32.enum)),
        "takes (float32) but the node passes (int32)"),
    "output index out of range": (lambda g: g.library.function[1].ret.__setitem__("j", "neg:y:5"), "has 1 tensors"),
    "unknown body op": (lambda g: setattr(g.library.function[1].node_def[0], "op", "NoSuchOp"), "NoSuchOp"),
    "body input of the wrong dtype": (
        lambda g: g.library.function[1].node_def[0].attr["T"].__setattr__("type", tf.float32.enum),
        "function 'body': node 'neg' (Neg): input 0 ('x') is int32 from 'i:0' but the node expects float32 (attr T)"),
}


@pytest.mark.parametrize("name", sorted(BAD_LIBRARIES))
def test_a_bad_library_is_refused_at_load_with_one_line(cc_runner, tmp_path, name):
    change, words = BAD_LIBRARIES[name]
    g = _graph_with(_loop_forever(), "While", ["x"], {"T": [tf.int32], "cond": "cond", "body": "body"})
    change(g)
    model = tmp_path / "bad.pb"
    model.write_bytes(g.SerializeToString())
    with pytest.raises(GraphFileError, match=re.escape(words)):
        load(model)
    assert words in cc_helpers.fails(cc_runner, 3, model, "--feed", "x=1")


def test_a_call_without_a_library_is_refused(graph):
    g = _graph_with(graph_pb2.FunctionDefLibrary(), "PartitionedCall", ["x"],
                    {"Tin": [tf.int32], "Tout": [tf.int32], "f": "f"})
    with pytest.raises(GraphFileError, match="no function library"):
        import_graph_def(g, name="")


def _chain_of_functions(count):
    """Functions f0..f{count-1}, each a + 1 calling the one before; the graph calls the last: y = x + count."""
    g = graph_pb2.GraphDef()
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = tf.float32.enum
    for i in range(count):
        f = g.library.function.add()
        f.signature.name = f"f{i}"
        f.signature.input_arg.add(name="a", type=tf.float32.enum)
        f.signature.output_arg.add(name="b", type=tf.float32.enum)
        source = "a"
        if i:
            inner = f.node_def.add(name="inner", op="PartitionedCall", input=["a"])
            inner.attr["f"].func.name = f"f{i - 1}"
            inner.attr["Tin"].list.type.append(tf.float32.enum)
            inner.attr["Tout"].list.type.append(tf.float32.enum)
            source = "inner:output:0"
        one = f.node_def.add(name="one", op="Const")
        one.attr["dtype"].type = tf.float32.enum
        one.attr["value"].tensor.dtype = tf.float32.enum
        one.attr["value"].tensor.float_val.append(1.0)
        add = f.node_def.add(name="add", op="AddV2", input=[source, "one:output:0"])
        add.attr["T"].type = tf.float32.enum
        f.ret["b"] = "add:z:0"
    call = g.node.add(name="y", op="PartitionedCall", input=["x"])
    call.attr["f"].func.name = f"f{count - 1}"
    call.attr["Tin"].list.type.append(tf.float32.enum)
    call.attr["Tout"].list.type.append(tf.float32.enum)
    return g


def test_bodies_are_checked_at_load_and_instantiated_on_their_first_call(monkeypatch):
    from graphdef.wire import functions
    made = []
    real = functions._instantiate
    monkeypatch.setattr(functions, "_instantiate", lambda *args: made.append(args[1].signature.name) or real(*args))
    graph = tf.Graph()
    import_graph_def(_chain_of_functions(40), graph=graph, name="")
    assert made == [] and len(graph.functions.checked) == 40  # each checked once, none built
    with tf.Session(graph=graph, engine="python") as sess:
        assert sess.run("y:0", {"x:0": 2.5}) == np.float32(2.5 + 40)
    assert sorted(made) == sorted(f"f{i}" for i in range(40))


def test_a_shape_error_inside_a_body_is_refused_by_the_run_alike(cc_runner, tmp_path):
    g = _chain_of_functions(3)
    body = g.library.function[0]
    for name, shape in (("m", (2, 3)), ("n", (4, 5))):
        node = body.node_def.add(name=name, op="Const")
        node.attr["dtype"].type = tf.float32.enum
        node.attr["value"].tensor.dtype = tf.float32.enum
        node.attr["value"].tensor.tensor_shape.dim.extend(graph_pb2.TensorShapeProto.Dim(size=d) for d in shape)
        node.attr["value"].tensor.float_val.append(1.0)
    product = body.node_def.add(name="mm", op="MatMul", input=["m:output:0", "n:output:0"])
    product.attr["T"].type = tf.float32.enum
    body.control_ret["mm"] = "mm"
    body.signature.control_output.append("mm")
    model = tmp_path / "shapes.pb"
    model.write_bytes(g.SerializeToString())
    # checked at load as TensorFlow's importer checks calls; shapes are inferred when a body is
    # instantiated, on its first call, in both runtimes
    for engine in ("python", "cc"):
        with tf.Session(graph=load(model), engine=engine) as sess, pytest.raises(InvalidArgumentError) as e:
            sess.run("y:0", {"x:0": 1.0})
        line = one_line(e.value)
        assert line.startswith("node 'y'") and "node 'mm' (MatMul)" in line, (engine, line)
        assert "cannot multiply [2,3] by [4,5]" in line, (engine, line)
    assert "node 'mm' (MatMul): cannot multiply [2,3] by [4,5]" in cc_helpers.fails(cc_runner, 4, model, "--feed",
                                                                                      "x=1")


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_graphrun_checks_each_call_once_in_the_engine_that_runs_it(tmp_path, monkeypatch, capsys, engine):
    """graphrun run hands a library to the C++ engine unchecked when that engine takes the graph: it
    checks the calls itself, in the same words. On the numpy engine each function is checked once at
    load and instantiated once, on its first call."""
    from graphdef.graphrun import cli
    from graphdef.wire import call_check, functions
    counts = {"checked": 0, "made": 0}

    def counting(module, name, key):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a: counts.__setitem__(key, counts[key] + 1) or real(*a))

    counting(call_check, "_check_body", "checked")
    counting(functions, "_instantiate", "made")
    monkeypatch.setenv("GRAPHDEF_ENGINE", engine)
    model = tmp_path / "calls.pb"
    model.write_bytes(_chain_of_functions(50).SerializeToString())
    assert cli.main([str(model), "--feed", "x=2"]) == 0
    assert capsys.readouterr().out == "y:0 float32 [] = 52.0\n"
    assert counts == ({"checked": 0, "made": 0} if engine == "auto" else {"checked": 50, "made": 50}), counts


def test_graphrun_refuses_a_bad_call_the_cc_engine_refused_before_reading_feeds(tmp_path, capsys, cc_runner):
    g = _chain_of_functions(5)
    g.library.function[2].node_def[0].attr["Tin"].list.type[0] = tf.int32.enum
    model = tmp_path / "bad.pb"
    model.write_bytes(g.SerializeToString())
    from graphdef.graphrun import cli
    assert cli.main([str(model), "--feed", "x=not a number"]) == 3  # the model's error comes first
    line = capsys.readouterr().err
    words = "function 'f2': node 'inner' (PartitionedCall): input 0 ('args') is float32 from 'a:0' but the node " \
            "expects int32 (attr Tin)"
    assert line == f"graphrun: {model}: {words}\n", line
    assert cc_helpers.fails(cc_runner, 3, model, "--feed", "x=1") == f"graphrun-cc: {model}: {words}"
