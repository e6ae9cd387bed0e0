"""Node names as TensorFlow's importer checks them (IsValidNodeName without internal ops: a letter,
digit or dot first, then letters, digits and . _ - /, each '>' followed by a letter, digit or dot),
and a name given twice: both runtimes refuse the file in the same line, control characters shown
as \\xNN. The graphs are built with the protobuf classes, the expected lines spelled out."""
import numpy as np
import pytest

from graphdef._proto import meta_graph_pb2
from tests.support.cc_helpers import DT, Graph, run_cc
from tests.support.graphrun_helpers import graphrun

RULE = "not a valid node name (letters, digits and . _ / - >, not starting with _ / - >)"


def _graph_with_a_node_named(name):
    g = Graph()
    g.const("a", 1.0, np.float32)
    g.op(name, "Neg", ["a"], np.float32)
    return g


INVALID = {
    "nul inside": ("x\x00y", "x\\x00y"),
    "escape sequence": ("x\x1b[2J", "x\\x1b[2J"),
    "leading underscore": ("_x", "_x"),
    "leading dash": ("-x", "-x"),
    "leading slash": ("/x", "/x"),
    "leading angle": (">x", ">x"),
    "angle at the end": ("x>", "x>"),
    "angle before underscore": ("x>_y", "x>_y"),
    "two angles": ("x>>y", "x>>y"),
    "backslash": ("x\\y", "x\\y"),
    "space": ("x y", "x y"),
    "colon": ("x:0", "x:0"),
    "caret": ("^x", "^x"),
    "trailing newline": ("x\n", "x "),
    "non-ascii letter": ("caf\u00e9", "caf\u00e9"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_a_name_tensorflow_refuses_is_refused_alike(runner, tmp_path, capsys, case):
    name, shown = INVALID[case]
    model = _graph_with_a_node_named(name).save(tmp_path / "model.pb")
    line = f"{model}: node '{shown}': {RULE}\n"
    assert graphrun(capsys, "run", model) == (3, "", "graphrun: " + line)
    assert run_cc(runner, "run", model) == (3, "", "graphrun-cc: " + line)


@pytest.mark.parametrize("name", ["x", "X9", ".x", "9", "a/b_c-d.e", "x>y", "x>.y/z", "x>9>a_b"])
def test_a_name_tensorflow_takes_runs_alike(runner, tmp_path, capsys, name):
    model = _graph_with_a_node_named(name).save(tmp_path / "model.pb")
    expected = f"{name}:0 float32 [] = -1.0\n"
    assert graphrun(capsys, "run", model, "--fetch", name) == (0, expected, "")
    assert run_cc(runner, "run", model, "--fetch", name) == (0, expected, "")


def test_an_empty_name_is_refused_alike(runner, tmp_path, capsys):
    model = _graph_with_a_node_named("").save(tmp_path / "model.pb")
    line = f"{model}: node #1 (Neg) has no name\n"
    assert graphrun(capsys, "run", model) == (3, "", "graphrun: " + line)
    assert run_cc(runner, "run", model) == (3, "", "graphrun-cc: " + line)


def test_a_name_given_twice_is_refused_alike(runner, tmp_path, capsys):
    g = _graph_with_a_node_named("b")
    g.const("b", 2.0, np.float32)
    model = g.save(tmp_path / "model.pb")
    line = f"{model}: node 'b': the name is not unique\n"
    assert graphrun(capsys, "run", model) == (3, "", "graphrun: " + line)
    assert run_cc(runner, "run", model) == (3, "", "graphrun-cc: " + line)


def _saved_model(graph, path):
    model = meta_graph_pb2.SavedModel()
    meta = model.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    meta.graph_def.CopyFrom(graph.proto)
    signature = meta.signature_def["serving_default"]
    signature.outputs["y"].name = "y:0"
    signature.outputs["y"].dtype = DT.DT_FLOAT
    path.mkdir()
    (path / "saved_model.pb").write_bytes(model.SerializeToString())
    return path


def test_a_saved_model_naming_two_nodes_alike_is_refused_before_freezing(runner, tmp_path, capsys):
    # 'y' needs only the first 'a'; freezing took it and ran, though TensorFlow's importer refuses
    # the meta graph. The twin is a node the signature does not need, so only a whole-graph check sees it.
    g = Graph()
    g.const("a", 1.0, np.float32)
    g.op("y", "Neg", ["a"], np.float32)
    g.const("a", 2.0, np.float32)
    model = _saved_model(g, tmp_path / "export")
    line = f"{model}: node 'a': the name is not unique\n"
    assert graphrun(capsys, "run", model) == (3, "", "graphrun: " + line)
    assert run_cc(runner, "run", model) == (3, "", "graphrun-cc: " + line)
