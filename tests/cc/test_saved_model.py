"""graphrun-cc runs SavedModel directories: graphdef's exports and TensorFlow's (VariableV2 and
resource variables), with the answers TensorFlow's own loader gives; a damaged checkpoint is one
line and exit code 3."""

import json

import numpy as np
import pytest

import graphdef as gd
from tests.support.cc_helpers import fails, ok

pytestmark = pytest.mark.tf_oracle

tensorflow = pytest.importorskip("tensorflow")
tf1 = tensorflow.compat.v1

W = np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5
B = np.array([0.5, -1.0], np.float32)
X = np.array([[1, 2, 3], [-1, 0, 1], [0.5, 0.25, -2]], np.float32)


def tensorflow_export(path, use_resource):
    """A TF1 SavedModel made by TensorFlow, and TensorFlow's answer for X."""
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        w = tf1.Variable(W, name="dense/w", use_resource=use_resource)
        b = tf1.Variable(B, name="dense/b", use_resource=use_resource)
        y = tf1.nn.relu(tf1.matmul(x, w) + b, name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, str(path), {"x": x}, {"y": y})
        return sess.run(y, {x: X})


@pytest.mark.parametrize("use_resource", [False, True], ids=["VariableV2", "resource"])
def test_graphrun_cc_runs_tensorflows_saved_model(tmp_path, runner, use_resource):
    expected = tensorflow_export(tmp_path / "export", use_resource)
    np.save(tmp_path / "x.npy", X)
    output = json.loads(ok(runner, tmp_path / "export", "--feed", f"x=@{tmp_path / 'x.npy'}", "--json"))["outputs"][0]
    assert output["name"] == "y:0"
    np.testing.assert_allclose(np.array(output["values"], np.float32), expected, rtol=1e-6)


def test_graphrun_cc_runs_graphdefs_export(tmp_path, runner):
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        y = gd.nn.relu(gd.matmul(x, gd.Variable(W, name="w")) + gd.Variable(B, name="b"), name="y")
        init = gd.global_variables_initializer()
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        gd.saved_model.simple_save(sess, tmp_path / "export", {"x": x}, {"y": y})
        expected = sess.run(y, {x: X})
    np.save(tmp_path / "x.npy", X)
    stdout = ok(runner, tmp_path / "export", "--feed", f"x=@{tmp_path / 'x.npy'}", "--json")
    np.testing.assert_array_equal(np.array(json.loads(stdout)["outputs"][0]["values"], np.float32), expected)


def test_a_damaged_checkpoint_is_one_line(tmp_path, runner):
    tensorflow_export(tmp_path / "export", use_resource=False)
    data = tmp_path / "export" / "variables" / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0xFF
    data.write_bytes(bytes(raw))
    assert "fail their checksum" in fails(runner, 3, tmp_path / "export", "--feed", "x=[[1,2,3]]")
    (tmp_path / "export" / "variables" / "variables.index").write_bytes(b"garbage" * 20)
    assert "magic" in fails(runner, 3, tmp_path / "export", "--feed", "x=[[1,2,3]]")
