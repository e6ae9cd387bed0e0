"""graphrun view: a Graphviz drawing with name scopes as clusters, op types and shapes on nodes."""

import shutil
import xml.etree.ElementTree as ET

import pytest

import graphdef as tf
from graphdef.graphrun import view
from tests.support.graphrun_helpers import CNN, UNSUPPORTED, fails, graphrun, ok, save_model

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


def svg_groups(path):
    """{class: [the text of each <g> of that class]} of an SVG file, which must parse as XML."""
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg"
    groups = {}
    for g in root.iter(SVG + "g"):
        text = " ".join(t.text for t in g.iter(SVG + "text") if t.text)
        groups.setdefault(g.get("class"), []).append(text)
    return groups


@needs_dot
def test_cnn_svg(capsys, tmp_path):
    assert ok(capsys, "view", CNN, "-o", tmp_path / "cnn.svg") == ""
    groups = svg_groups(tmp_path / "cnn.svg")
    graph = tf.load(CNN)
    ops = graph.get_operations()
    consts = [op for op in ops if op.type == "Const"]
    nodes = groups["node"]
    assert len(nodes) == len(ops) - len(consts)            # every Const is read by a node, which lists it
    clusters = {text.split()[0] for text in groups["cluster"]}
    assert {"input", "conv1", "batchnorm", "pool1", "conv2", "dense", "logits", "softmax"} <= clusters
    assert len(groups["cluster"]) == 9                     # 7 scopes, and conv1/ and conv2/ each hold a batchnorm/
    assert "MatMul float32 [?,144] toeplitz float32 [64,144]" in nodes
    assert "Reshape flatten float32 [?,64] shape = [-1, 64]" in nodes
    assert "Max float32 [?,3,3,4] reduction_indices = [2, 4]" in nodes
    assert "RealDiv probs float32 [?,10]" in nodes
    assert "Placeholder x float32 [?,8,8,1]" in nodes
    assert len(groups["edge"]) == sum(1 for op in ops for t in op.inputs if t.op.type != "Const")


def test_dot_source_needs_no_graphviz(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(view.shutil, "which", lambda name: None)
    ok(capsys, "view", CNN, "-o", tmp_path / "cnn.dot")
    source = (tmp_path / "cnn.dot").read_text()
    assert source.startswith("digraph graphdef {") and source.rstrip().endswith("}")
    assert source.count("subgraph cluster_") == 9
    assert "penwidth=2.2" in source                        # the output, softmax/probs


def test_a_missing_dot_is_one_clear_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(view.shutil, "which", lambda name: None)
    fails(capsys, 2, "view", CNN, "-o", tmp_path / "cnn.svg", mentions=["dot", "apt-get install graphviz"])
    assert not (tmp_path / "cnn.svg").exists()


@needs_dot
def test_png_pdf_and_html(capsys, tmp_path):
    ok(capsys, "view", CNN, "-o", tmp_path / "cnn.png")
    assert (tmp_path / "cnn.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ok(capsys, "view", CNN, "-o", tmp_path / "cnn.pdf")
    assert (tmp_path / "cnn.pdf").read_bytes()[:5] == b"%PDF-"
    ok(capsys, "view", CNN, "-o", tmp_path / "cnn.html")
    page = (tmp_path / "cnn.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<title>cnn.pb</title>" in page


@needs_dot
def test_control_edges_variables_and_unsupported_ops(capsys, tmp_path):
    def build():
        v = tf.Variable([1.0, 2.0], name="v")
        tf.identity(v, name="out")
        tf.global_variables_initializer()
    path = save_model(tmp_path / "var.pb", build)
    ok(capsys, "view", path, "-o", tmp_path / "var.dot")
    assert "[style=dashed" in (tmp_path / "var.dot").read_text()   # v/Assign -> init is a control edge
    ok(capsys, "view", UNSUPPORTED, "-o", tmp_path / "u.svg")       # drawn, without shapes
    nodes = svg_groups(tmp_path / "u.svg")["node"]
    assert "TRTEngineOp TRTEngineOp_0 weights float32 [3,3,1,8]" in nodes and "ZeroOut zero" in nodes


def test_errors(capsys, tmp_path):
    fails(capsys, 2, "view", CNN, "-o", tmp_path / "cnn.jpeg", mentions=[".jpeg", ".svg"])
    fails(capsys, 2, "view", CNN, mentions=["-o"])
    fails(capsys, 3, "view", tmp_path / "absent.pb", "-o", tmp_path / "a.svg", mentions=["absent.pb"])
    code, out, _ = graphrun(capsys, "view", "--help")
    assert code == 0 and "apt-get install graphviz" in out
