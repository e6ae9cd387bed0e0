"""Ops that move string elements (Reshape, Concat, Gather, Slice, Tile, Transpose, Select...): graphrun-cc
against graphrun on graphs graphdef builds, and against TensorFlow itself on graphs TensorFlow makes."""

import json

import numpy as np
import pytest

import graphdef as tf
from tests.cc.strings.helpers import run, same
from tests.support.graphrun_helpers import save_model
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

WORDS = np.array([[b"a", b"\xff", b""], [b"d\x00e", b"\x1b[2J", "\u00e9".encode()]], dtype=object)


def _build(ops):
    def build():
        x = tf.placeholder(tf.string, [2, 3], name="x")
        y = tf.placeholder(tf.string, [2, 3], name="y")
        for name, make in ops.items():
            tf.identity(make(tf, x, y), name="out_" + name)
    return build


def _ops():
    return {
        "reshape": lambda tf, x, y: tf.reshape(x, [3, 2]),
        "expand": lambda tf, x, y: tf.expand_dims(x, 1),
        "squeeze": lambda tf, x, y: tf.squeeze(tf.reshape(x, [1, 6, 1])),
        "shape": lambda tf, x, y: tf.shape(x),
        "size": lambda tf, x, y: tf.size(x),
        "rank": lambda tf, x, y: tf.rank(x),
        "concat": lambda tf, x, y: tf.concat([x, y], 1),
        "gather": lambda tf, x, y: tf.gather(x, [2, 0, 2], axis=1),
        "stack": lambda tf, x, y: tf.stack([x, y], axis=1),
        "unstack": lambda tf, x, y: tf.unstack(x, axis=1)[2],
        "slice": lambda tf, x, y: tf.slice(x, [0, 1], [2, 2]),
        "strided": lambda tf, x, y: x[::-1, ::2],
        "tile": lambda tf, x, y: tf.tile(x, [2, 2]),
        "transpose": lambda tf, x, y: tf.transpose(x),
        "fill": lambda tf, x, y: tf.fill([2, 2], x[1, 1]),
        "select": lambda tf, x, y: _select(tf, tf.constant([True, False]), x, y, v2=False),
        "select_v2": lambda tf, x, y: _select(tf, tf.constant([[True], [False]]), x, y, v2=True),
    }


def _select(tf, condition, x, y, v2):
    if hasattr(tf, "compat"):  # TensorFlow: v1's where is Select, where is SelectV2
        return tf.where(condition, x, y) if v2 else tf.compat.v1.where(condition, x, y)
    from graphdef.ops import compare
    return compare.select_v2(condition, x, y) if v2 else compare.select(condition, x, y)


def _feeds(tmp_path):
    np.save(tmp_path / "x.npy", WORDS.astype("S"))
    np.save(tmp_path / "y.npy", np.array([[b"p", b"q", b"r"], [b"s", b"t", b"u"]]))
    return ["--feed", f"x=@{tmp_path / 'x.npy'}", "--feed", f"y=@{tmp_path / 'y.npy'}"]


def test_string_ops_match_graphrun(runner, tmp_path):
    ops = _ops()
    model = save_model(tmp_path / "ops.pb", _build(ops))
    fetches = [arg for name in ops for arg in ("--fetch", "out_" + name)]
    for flags in ([], ["--json"]):
        code, out, err = same(runner, model, *_feeds(tmp_path), *fetches, *flags)
        assert (code, err) == (0, "") and out.count(b"\n") == (1 if flags else len(ops))


def _decoded(value):
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if isinstance(value, dict):
        import base64
        return base64.b64decode(value["b64"])
    return value.encode() if isinstance(value, str) else value


@pytest.mark.tf_oracle
def test_string_ops_match_tensorflow(runner, tmp_path, tf_oracle):
    tfo = tf_oracle
    ops = _ops()
    graph = tfo.Graph()
    with graph.as_default():
        x = tfo.compat.v1.placeholder(tfo.string, [2, 3], name="x")
        y = tfo.compat.v1.placeholder(tfo.string, [2, 3], name="y")
        for name, make in ops.items():
            tfo.identity(make(tfo, x, y), name="out_" + name)
    (tmp_path / "tf.pb").write_bytes(graph.as_graph_def().SerializeToString())
    y_value = np.array([[b"p", b"q", b"r"], [b"s", b"t", b"u"]], dtype=object)
    with tfo.compat.v1.Session(graph=graph) as sess:
        expected = sess.run({name: f"out_{name}:0" for name in ops}, {"x:0": WORDS, "y:0": y_value})
    fetches = [arg for name in ops for arg in ("--fetch", "out_" + name)]
    code, out, err = run([str(runner)], "run", tmp_path / "tf.pb", *_feeds(tmp_path), *fetches, "--json")
    assert (code, err) == (0, ""), err
    got = {o["name"].split(":")[0][len("out_"):]: o for o in json.loads(out)["outputs"]}
    for name, want in expected.items():
        want = np.asarray(want)
        assert got[name]["shape"] == list(want.shape), name
        assert _decoded(got[name]["values"]) == want.tolist(), name


def test_an_op_with_no_string_path_is_refused_in_one_line(runner, tmp_path):
    path = tmp_path / "m.pbtxt"
    path.write_text(
        'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }\n'
        'node { name: "r" op: "ReverseV2" input: "x" input: "axis" attr { key: "T" value { type: DT_STRING } } '
        'attr { key: "Tidx" value { type: DT_INT32 } } }\n'
        'node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } '
        'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }\n')
    code, out, err = run([str(runner)], "run", path, "--feed", 'x=["a"]', "--fetch", "r")
    assert code == 3 and out == b"", err
    assert err == f"graphrun-cc: {path}: no kernel for ReverseV2 with dtype string (r)\n"
