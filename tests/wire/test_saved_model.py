"""SavedModel and .meta files both ways, with TensorFlow as the oracle.

graphdef's exports load in TensorFlow's TF1 loader, TF2's tf.saved_model.load and
saved_model_cli with the answers graphdef's Session gives; TensorFlow's exports (variables
as VariableV2 or as resource variables) run in graphrun and load into a graphdef session.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphdef as gd
from graphdef.graphrun import cli
from graphdef.wire import saved_model
from graphdef.wire.checkpoint import import_meta_graph
from graphdef.wire.serialize import GraphFileError

pytestmark = pytest.mark.tf_oracle

tensorflow = pytest.importorskip("tensorflow")
tf1 = tensorflow.compat.v1

W = np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5
B = np.array([0.5, -1.0], np.float32)
X = np.array([[1, 2, 3], [-1, 0, 1], [0.5, 0.25, -2]], np.float32)


def expected(x):
    """The model in float64, rounded once: relu(x W + b)."""
    return np.maximum(x.astype(np.float64) @ W + B, 0).astype(np.float32)


def graphdef_model():
    graph = gd.Graph()
    with graph.as_default():
        x = gd.placeholder(gd.float32, [None, 3], name="x")
        w = gd.Variable(np.zeros_like(W), name="dense/w")
        b = gd.Variable(np.zeros_like(B), name="dense/b")
        y = gd.nn.relu(gd.matmul(x, w) + b, name="y")
        init = gd.global_variables_initializer()
    session = gd.Session(graph=graph)
    session.run(init)
    w.load(W, session)
    b.load(B, session)
    return session, x, y


def test_tensorflow_loads_graphdefs_simple_save(tmp_path):
    session, x, y = graphdef_model()
    export = tmp_path / "export"
    gd.saved_model.simple_save(session, export, {"x": x}, {"y": y})
    np.testing.assert_allclose(session.run(y, {x: X}), expected(X), rtol=1e-6)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        meta = tf1.saved_model.loader.load(sess, [tf1.saved_model.SERVING], str(export))
        signature = meta.signature_def["serving_default"]
        got = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: X})
    np.testing.assert_allclose(got, expected(X), rtol=1e-6)
    loaded = tensorflow.saved_model.load(str(export))
    got2 = loaded.signatures["serving_default"](x=tensorflow.constant(X))["y"].numpy()
    np.testing.assert_allclose(got2, expected(X), rtol=1e-6)


@pytest.mark.slow
def test_saved_model_cli_shows_graphdefs_export(tmp_path):
    session, x, y = graphdef_model()
    builder = gd.saved_model.Builder(tmp_path / "export")
    builder.add_meta_graph_and_variables(session, [gd.saved_model.SERVING], signature_def_map={
        "serving_default": gd.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y}),
        "scores": gd.saved_model.signature_def_utils.predict_signature_def({"features": x}, {"relu": y})})
    builder.save()
    proc = subprocess.run([sys.executable, "-m", "tensorflow.python.tools.saved_model_cli", "show", "--dir",
                           str(tmp_path / "export"), "--all"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert proc.returncode == 0, proc.stderr
    for words in ("signature_def['scores']", "signature_def['serving_default']", "inputs['features']",
                  "name: x:0", "outputs['relu']", "Method name is: tensorflow/serving/predict"):
        assert words in proc.stdout, (words, proc.stdout)


@pytest.mark.parametrize("use_resource", [False, True], ids=["VariableV2", "resource"])
def test_graphrun_and_graphdef_run_tensorflows_saved_model(tmp_path, capsys, use_resource):
    export = str(tmp_path / "tf_export")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        w = tf1.Variable(W, name="dense/w", use_resource=use_resource)
        b = tf1.Variable(B, name="dense/b", use_resource=use_resource)
        y = tf1.nn.relu(tf1.matmul(x, w) + b, name="y")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, export, {"x": x}, {"y": y})
    graph_def, inputs, outputs = saved_model.frozen(export)
    assert (inputs, outputs) == ({"x": "x:0"}, {"y": "y:0"})
    graph = gd.load(export)
    with gd.Session(graph=graph) as sess:
        np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), expected(X), rtol=1e-6)
    np.save(tmp_path / "x.npy", X)
    code = cli.main([export, "--feed", f"x=@{tmp_path / 'x.npy'}", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    value = np.array(json.loads(out)["outputs"][0]["values"], np.float32)
    np.testing.assert_allclose(value, expected(X), rtol=1e-6)
    if not use_resource:
        with gd.Graph().as_default() as graph, gd.Session(graph=graph) as sess:
            gd.saved_model.loader.load(sess, ["serve"], export)
            np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), expected(X), rtol=1e-6)


def test_meta_graphs_both_ways(tmp_path):
    session, x, y = graphdef_model()
    with session.graph.as_default():
        path = gd.train.Saver().save(session, str(tmp_path / "ours" / "model.ckpt"))
    with tf1.Graph().as_default(), tf1.Session() as sess:
        saver = tf1.train.import_meta_graph(path + ".meta")
        saver.restore(sess, path)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), expected(X), rtol=1e-6)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tx = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        tw = tf1.Variable(W, name="dense/w", use_resource=False)
        tf1.nn.relu(tf1.matmul(tx, tw) + B, name="y")
        sess.run(tf1.global_variables_initializer())
        theirs = tf1.train.Saver().save(sess, str(tmp_path / "theirs" / "model.ckpt"))
    with gd.Graph().as_default() as graph, gd.Session(graph=graph) as sess:
        saver = import_meta_graph(theirs + ".meta")
        saver.restore(sess, theirs)
        np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), expected(X), rtol=1e-6)


def test_wrong_tags_signature_or_directory_are_one_line(tmp_path):
    session, x, y = graphdef_model()
    export = tmp_path / "export"
    gd.saved_model.simple_save(session, export, {"x": x}, {"y": y})
    with pytest.raises(GraphFileError, match=r"no meta graph tagged train \(it has: serve\)"):
        saved_model.frozen(export, tags=("train",))
    with pytest.raises(GraphFileError, match=r"no signature 'predict' \(it has: serving_default\)"):
        saved_model.frozen(export, signature_key="predict")
    (export / "variables" / "variables.index").unlink()
    with pytest.raises(GraphFileError, match="variables.index"):
        saved_model.frozen(export)
    with pytest.raises(GraphFileError, match="nor a SavedModel"):
        gd.load(tmp_path)
    with pytest.raises(AssertionError, match="already exists"):
        gd.saved_model.Builder(export)
