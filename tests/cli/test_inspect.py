"""graphrun inspect: inputs, outputs, op histogram, parameters, unsupported ops, on committed models."""

import shlex
from collections import Counter

import numpy as np
import pytest

import graphdef as tf
from tests.support.graphrun_helpers import CNN, MLP, UNSUPPORTED, fails, graphrun, json_line, ok, save_model

MLP_TEXT = f"""\
model: {MLP}
  binary GraphDef, producer 2474, 16 nodes
inputs (1):
  x  float32  [?,16]
outputs (1):
  output/score:0  float32  [?,1]
parameters: 1633 values, 6532 bytes in 6 Const and 0 VariableV2 nodes
op types (6):
  Const        6
  AddV2        3
  MatMul       3
  Relu         2
  Placeholder  1
  Sigmoid      1
unsupported ops: none
try:
  graphrun {MLP} --random --shape x=1,16
"""


def test_mlp_text(capsys):
    assert ok(capsys, "inspect", MLP) == MLP_TEXT


@pytest.mark.slow
def test_cnn_json_matches_the_graph(capsys):
    summary = json_line(ok(capsys, "inspect", CNN, "--json"))
    graph = tf.load(CNN)
    ops = graph.get_operations()
    assert summary["model"] == str(CNN) and summary["format"] == "binary"
    assert (summary["producer"], summary["nodes"]) == (2474, len(ops))
    assert summary["inputs"] == [{"name": "x", "op": "Placeholder", "dtype": "float32", "shape": [None, 8, 8, 1]}]
    assert summary["outputs"] == [{"name": "softmax/probs:0", "dtype": "float32", "shape": [None, 10]}]
    consts = [op.attrs["value"] for op in ops if op.type == "Const"]
    assert summary["parameters"] == {"count": sum(c.size for c in consts), "bytes": sum(c.nbytes for c in consts),
                                     "const_nodes": len(consts), "variable_nodes": 0}
    histogram = Counter(op.type for op in ops)
    assert {t["op"]: t["count"] for t in summary["op_types"]} == histogram
    counts = [t["count"] for t in summary["op_types"]]
    assert counts == sorted(counts, reverse=True)
    assert summary["unsupported_ops"] == [] and summary["load_error"] is None


def test_unsupported_ops_are_listed_not_fatal(capsys):
    out = ok(capsys, "inspect", UNSUPPORTED)
    assert "  text GraphDef, producer 1205, 5 nodes\n" in out
    assert "  image  float32  [?,28,28,1]\n" in out
    assert ("unsupported ops (2): no kernel for\n  TRTEngineOp  1 node  e.g. trt/TRTEngineOp_0\n"
            "  ZeroOut      1 node  e.g. zero\n") in out
    assert "  zero:0  ?  ?\n" in out          # the sink; its dtype needs the missing kernel's definition
    assert "parameters: 72 values, 288 bytes in 1 Const" in out
    assert "try:" not in out
    summary = json_line(ok(capsys, "inspect", UNSUPPORTED, "--json"))
    assert summary["unsupported_ops"] == [{"op": "TRTEngineOp", "count": 1, "first_node": "trt/TRTEngineOp_0"},
                                          {"op": "ZeroOut", "count": 1, "first_node": "zero"}]
    assert summary["outputs"] == [{"name": "zero:0", "dtype": None, "shape": None}]
    # running the same file still refuses it, naming both ops
    fails(capsys, 3, UNSUPPORTED, mentions=["TRTEngineOp", "ZeroOut"])


def test_variables_are_counted_once(capsys, tmp_path):
    def build():
        x = tf.placeholder(tf.float64, None, name="x")
        w = tf.Variable(np.ones((3, 4), np.float32), name="w")
        tf.identity(w, name="out")
        tf.add(x, 1.0, name="y")
        tf.placeholder_with_default(tf.constant([1, 2]), [None], name="d")
        tf.global_variables_initializer()
    path = save_model(tmp_path / "vars.pb", build)
    summary = json_line(ok(capsys, "inspect", path, "--json"))
    # w (12 float32) counts; its initial value does not; the scalar 1.0 and [1,2] are Consts
    assert summary["parameters"] == {"count": 12 + 1 + 2, "bytes": 48 + 8 + 8, "const_nodes": 2, "variable_nodes": 1}
    assert summary["inputs"] == [{"name": "x", "op": "Placeholder", "dtype": "float64", "shape": None},
                                 {"name": "d", "op": "PlaceholderWithDefault", "dtype": "int32", "shape": [None]}]
    text = ok(capsys, "inspect", path)
    assert "  x  float64  <unknown>\n" in text and "  d  int32    [?]        has a default\n" in text
    assert text.endswith("try:\n  graphrun " + str(path) + " --random\n")


@pytest.mark.slow
def test_the_suggested_command_runs(capsys):
    for model in (MLP, CNN):
        command = ok(capsys, "inspect", model).splitlines()[-1]
        argv = shlex.split(command)
        assert argv[0] == "graphrun"
        code, out, err = graphrun(capsys, *argv[1:])
        assert (code, err) == (0, ""), err
        assert out.count("\n") == 1 and " = [[" in out


def test_an_invalid_graph_is_described_with_its_problem(capsys, tmp_path):
    (tmp_path / "dangling.pbtxt").write_text('node { name: "n" op: "Identity" input: "ghost" '
                                             'attr { key: "T" value { type: DT_FLOAT } } }\n')
    out = ok(capsys, "inspect", tmp_path / "dangling.pbtxt")
    assert "cannot be run: node 'n' (Identity): input 'ghost' names no node in the graph\n" in out


def test_unreadable_files_exit_3(capsys, tmp_path):
    fails(capsys, 3, "inspect", tmp_path / "absent.pb", mentions=["absent.pb", "no such file"])
    (tmp_path / "noise.pb").write_bytes(b"\xff" * 64)
    fails(capsys, 3, "inspect", tmp_path / "noise.pb", mentions=["noise.pb"])


def test_help_and_bad_flags(capsys):
    code, out, err = graphrun(capsys, "inspect", "--help")
    assert (code, err) == (0, "") and out.startswith("usage: graphrun inspect")
    assert "exit codes:" in out
    fails(capsys, 2, "inspect", MLP, "--bogus", mentions=["--bogus", "graphrun inspect --help"])
