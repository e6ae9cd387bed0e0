"""Shared by the graphrun verb tests: run graphrun in-process and check its streams."""

import json
from pathlib import Path

import graphdef as tf
from graphdef.graphrun import cli
from graphdef.wire import serialize

MODELS = Path(__file__).resolve().parent / "models"
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
