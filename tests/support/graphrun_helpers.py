"""Shared by the graphrun verb tests: run graphrun in-process and check its streams, and the models
several of them run."""

import contextlib
import io
import json
from pathlib import Path

import numpy as np

import graphdef as tf
from graphdef.graphrun import cli
from graphdef.wire import serialize

MODELS = Path(__file__).resolve().parents[1] / "models"
CNN = MODELS / "cnn.pb"
MLP = MODELS / "mlp.pb"
UNSUPPORTED = MODELS / "unsupported.pbtxt"


def save_model(path, build):
    """Builds a graph with `build()` inside it and writes it to `path` (.pbtxt means text)."""
    g = tf.Graph()
    with g.as_default():
        build()
    serialize.save(g, path)
    return path


def run_graphrun(*argv):
    """graphrun in this process without capsys: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def graphrun(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys, *argv):
    code, out, err = graphrun(capsys, *argv)
    assert (code, err) == (0, ""), err
    return out


def fails(capsys, expected_code, *argv, mentions=()):
    """Runs graphrun expecting failure: that exit code, no stdout, one 'graphrun: ' line."""
    code, out, err = graphrun(capsys, *argv)
    assert code == expected_code, (code, err)
    assert out == ""
    assert err.startswith("graphrun: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for text in mentions:
        assert text in err, (text, err)
    return err


def json_line(text):
    """A --json stdout: one line holding one JSON document."""
    assert text.endswith("\n") and text.count("\n") == 1, text
    return json.loads(text)


def counter_model(tmp_path):
    """A float64 counter: init sets it to 0, inc adds 1, double multiplies it by 2, add_k adds k."""
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(np.float64(0), name="v")
        tf.assign_add(v, np.float64(1), name="inc")
        tf.assign(v, v * np.float64(2), name="double")
        k = tf.placeholder(tf.float64, [], name="k")
        tf.assign_add(v, k, name="add_k")
        tf.identity(tf.placeholder(tf.float64, [2], name="unused") * 2.0, name="twice")
        tf.global_variables_initializer()
    path = tmp_path / "counter.pb"
    tf.save(graph, str(path))
    return path
