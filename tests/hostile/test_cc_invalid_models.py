"""graphrun-cc on invalid models: exit 3 and one line naming what is wrong.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import struct
from pathlib import Path

import numpy as np
import pytest

from graphdef._proto import graph_pb2, meta_graph_pb2

from tests.support.cc_helpers import DT, Graph, fails, run_cc, tensor_proto, type_attr


def test_unknown_ops_are_all_listed_at_once(runner, tmp_path):
    # Made-up op types, so the test keeps meaning the same as kernels are added.
    g = Graph()
    g.const("x", [1.0], np.float32)
    g.op("dense/Frobnicate", "Frobnicate", ["x"], np.float32)
    g.op("t/Twiddle", "Twiddle", ["dense/Frobnicate", "x"], np.float32)
    model = g.save(tmp_path / "model.pb")
    assert fails(runner, 3, model) == (
        f"graphrun-cc: {model}: no kernel for Frobnicate (dense/Frobnicate), Twiddle (t/Twiddle)")
    g.op("f2", "Frobnicate", ["x"], np.float32)  # a type used twice is listed once
    model = g.save(tmp_path / "model.pb")
    assert fails(runner, 3, model) == (
        f"graphrun-cc: {model}: no kernel for Frobnicate (dense/Frobnicate and 1 more), Twiddle (t/Twiddle)")


def invalid_graph(kind):
    g = Graph()
    g.const("a", [1.0, 2.0], np.float32)
    if kind == "missing input":
        g.op("b", "Neg", ["zz"], np.float32)
    elif kind == "bad output index":
        g.op("b", "Neg", ["a:1"], np.float32)
    elif kind == "control before data":
        g.node("n", "NoOp")
        g.op("b", "AddV2", ["a", "^n", "a"], np.float32)
    elif kind == "duplicate name":
        g.const("a", 1.0, np.float32)
    elif kind == "wrong attr type":
        g.node("b", "Neg", ["a"], T=graph_pb2.AttrValue(i=1))
    elif kind == "missing attr":
        g.node("b", "Neg", ["a"])
    elif kind == "wrong input dtype":
        g.op("b", "Neg", ["a"], np.float64)
    elif kind == "wrong input count":
        g.op("b", "AddV2", ["a"], np.float32)
    elif kind == "unsupported dtype":
        g.node("s", "Const", dtype=graph_pb2.AttrValue(type=DT.DT_HALF),
               value=graph_pb2.AttrValue(tensor=graph_pb2.TensorProto(dtype=DT.DT_HALF, half_val=[15360])))
    elif kind == "cycle":
        g.op("b", "AddV2", ["a", "c"], np.float32)
        g.op("c", "Neg", ["b"], np.float32)
    elif kind == "self loop":
        g.op("b", "Neg", ["b"], np.float32)
    elif kind == "short tensor_content":
        tensor = tensor_proto(np.ones(4, np.float32))
        tensor.tensor_content = tensor.tensor_content[:-1]
        g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=tensor))
    elif kind == "hostile const shape":
        tensor = graph_pb2.TensorProto(dtype=DT.DT_FLOAT, float_val=[1.0])
        for _ in range(4):
            tensor.tensor_shape.dim.add().size = 2**62
        g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=tensor))
    elif kind == "const dtype mismatch":
        g.node("c", "Const", dtype=type_attr(np.int32), value=graph_pb2.AttrValue(tensor=tensor_proto(np.float32(1))))
    return g


@pytest.mark.parametrize("kind, message", [
    ("missing input", "node 'b' (Neg): input 'zz' names no node"),
    ("bad output index", "node 'b' (Neg): input 'a:1' asks for output 1"),
    ("control before data", "control inputs must come last"),
    ("duplicate name", "node 'a': the name is not unique"),
    ("wrong attr type", "node 'b' (Neg): attr 'T' should hold a type but holds an int"),
    ("missing attr", "node 'b' (Neg): missing attr 'T'"),
    ("wrong input dtype", "is float32 from 'a:0' but the node expects float64"),
    ("wrong input count", "has 1 data input but AddV2 takes 2"),
    # refused by the run that needs it
    ("unsupported dtype", "half tensors, which graphrun-cc cannot hold: 's' (Const)"),
    ("cycle", "the graph has a cycle: 'b' -> 'c' -> 'b'"),
    ("self loop", "the graph has a cycle: 'b' -> 'b'"),
    ("short tensor_content", "tensor_content holds 15 bytes"),
    ("const dtype mismatch", "attr 'value' holds a float32 tensor but attr 'dtype' is int32"),
])
def test_invalid_graphs_exit_3(runner, tmp_path, kind, message):
    model = invalid_graph(kind).save(tmp_path / "model.pb")
    line = fails(runner, 3, model)
    assert line.startswith(f"graphrun-cc: {model}: ") and message in line, line


def test_a_const_over_the_size_limit_is_a_run_error(runner, tmp_path):
    """Exit 4, as graphrun gives for any tensor over GRAPHDEF_MAX_TENSOR_BYTES."""
    model = invalid_graph("hostile const shape").save(tmp_path / "model.pb")
    line = fails(runner, 4, model)
    assert line.startswith(f"graphrun-cc: {model}: node 'c' (Const): "), line
    assert "would take more than 16.0 EiB, over the limit of" in line, line


# -- SavedModel directories: findings of fuzz-savedmodel (fuzz/cc), each kept in fuzz/regressions/ --

REGRESSIONS = Path(__file__).resolve().parents[2] / "fuzz" / "regressions"


def unpack_sections(packed, directory):
    """A fuzz-savedmodel input (fuzz/cc/sections.h: 4-byte little-endian length, then the bytes) as
    the SavedModel directory it stands for; an empty section is a missing file."""
    names = ["saved_model.pb", "variables/variables.index", "variables/variables.data-00000-of-00001"]
    (directory / "variables").mkdir(parents=True)
    pos = 0
    for name in names:
        (length,) = struct.unpack_from("<I", packed, pos)
        part = packed[pos + 4:pos + 4 + length]
        pos += 4 + length
        if part:
            (directory / name).write_bytes(part)
    return directory


def saved_model_with_a_variable_named_twice(path):
    """x -> Identity 'v' -> Identity 'y', and a VariableV2 also named 'v' before it; no checkpoint."""
    g = Graph()
    g.node("x", "Placeholder", dtype=type_attr(np.float32))
    g.node("v", "VariableV2", dtype=type_attr(np.float32), shape=graph_pb2.AttrValue(
        shape=graph_pb2.TensorShapeProto(dim=[graph_pb2.TensorShapeProto.Dim(size=1)])))
    g.op("v", "Identity", ["x"], np.float32)
    g.op("y", "Identity", ["v"], np.float32)
    model = meta_graph_pb2.SavedModel()
    meta = model.meta_graphs.add()
    meta.meta_info_def.tags.append("serve")
    meta.graph_def.CopyFrom(g.proto)
    signature = meta.signature_def["serving_default"]
    signature.inputs["x"].name = "x:0"
    signature.outputs["y"].name = "y:0"
    signature.outputs["y"].dtype = DT.DT_FLOAT
    path.mkdir()
    (path / "saved_model.pb").write_bytes(model.SerializeToString())
    return path


def test_saved_model_node_named_twice_is_refused_before_freezing(runner, tmp_path):
    # Freezing looked variables up by name: the VariableV2 'v' was frozen from a checkpoint that
    # was never opened (a crash), or read under a key the checkpoint lacks ("internal error: map::at").
    model = saved_model_with_a_variable_named_twice(tmp_path / "export")
    assert fails(runner, 3, "run", model, "--feed", "x=[1.0]") == (
        f"graphrun-cc: {model}: node 'v': the name is not unique")
    regression = unpack_sections((REGRESSIONS / "saved-model-variable-named-twice.savedmodel").read_bytes(),
                                 tmp_path / "fuzzed")
    assert fails(runner, 3, "run", regression, "--random", "--shape", "x=1,3") == (
        f"graphrun-cc: {regression}: node 'MatMul': the name is not unique")


# The kinds both runtimes name alike: graphrun must give graphrun-cc's line word for word
# (test_validation_words.py has more of the op-rule kinds).
ALIKE = ["missing input", "bad output index", "wrong attr type", "cycle", "self loop", "short tensor_content",
         "hostile const shape", "duplicate name", "control before data", "missing attr", "wrong input dtype",
         "wrong input count", "const dtype mismatch"]


@pytest.mark.parametrize("kind", ALIKE)
def test_graphrun_names_an_invalid_graph_as_graphrun_cc_does(runner, tmp_path, capsys, kind):
    from tests.support.graphrun_helpers import graphrun

    model = invalid_graph(kind).save(tmp_path / "model.pb")
    code, out, err = graphrun(capsys, "run", model)
    cc_code, cc_out, cc_err = run_cc(runner, "run", model)
    assert err.startswith("graphrun: ") and err.count("\n") == 1, err
    assert (code, out, err[len("graphrun: "):]) == (cc_code, cc_out, cc_err[len("graphrun-cc: "):])
