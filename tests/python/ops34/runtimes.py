"""What the issue-34 op tests share: one graph run by the Session, graphrun and graphrun-cc.

The Session and graphrun must give the same answer (the Session's is judged against TensorFlow or
numpy by the test). graphrun-cc gives the same answer for the ops it has kernels for; for the others it
must say so in one line naming the node, never run the graph partly or print a traceback.
"""

import json

import numpy as np
import pytest

import graphdef as tf
from graphdef.wire import serialize
from tests.conformance.replay import from_json_output
from tests.support import cc_helpers as cc
from tests.support.graphrun_helpers import run_graphrun


def build_graph(make):
    """make() builds into a fresh graph and returns the tensors to fetch: (graph, fetch names)."""
    graph = tf.Graph()
    with graph.as_default():
        fetches = make()
    return graph, [t.name for t in fetches]


def session_values(graph, names, feeds):
    with tf.Session(graph=graph) as sess:
        return sess.run(names, {f"{k}:0": v for k, v in feeds.items()})


def _cli_args(tmp_path, graph, names, feeds):
    model = tmp_path / "model.pb"
    serialize.save(graph, model)
    args = [model]
    for name, value in feeds.items():
        path = tmp_path / f"feed_{name}.npy"
        np.save(path, np.asarray(value), allow_pickle=False)
        args += ["--feed", f"{name}=@{path}"]
    for name in names:
        args += ["--fetch", name]
    return args


def graphrun_values(tmp_path, graph, names, feeds):
    code, out, err = run_graphrun(*_cli_args(tmp_path, graph, names, feeds), "--json")
    assert code == 0, err
    outputs = dict(from_json_output(o) for o in json.loads(out)["outputs"])
    return [outputs[n] for n in names]


def check_graphrun_agrees(tmp_path, make, feeds):
    """graphrun's --json answer equals the Session's, bit for bit (the same numpy kernels)."""
    graph, names = build_graph(make)
    ours = session_values(graph, names, feeds)
    theirs = graphrun_values(tmp_path, graph, names, feeds)
    for name, a, b in zip(names, ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)
        assert np.asarray(a).dtype == np.asarray(b).dtype, name


def check_cc_agrees(tmp_path, runner, make, feeds):
    """graphrun-cc's --json answer equals the Session's, bit for bit (ops whose arithmetic is exact)."""
    graph, names = build_graph(make)
    ours = session_values(graph, names, feeds)
    code, out, err = cc.run_cc(runner, *_cli_args(tmp_path, graph, names, feeds), "--json")
    assert code == 0, err
    outputs = dict(from_json_output(o) for o in json.loads(out)["outputs"])
    for name, a in zip(names, ours):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(outputs[name]), err_msg=name)
        assert np.asarray(a).dtype == np.asarray(outputs[name]).dtype, name


def check_both_refuse(tmp_path, runner, make, feeds, node):
    """graphrun and graphrun-cc refuse the run with the same exit code and the same line (after the program's
    name), which names `node`."""
    graph, names = build_graph(make)
    args = _cli_args(tmp_path, graph, names, feeds)
    py_code, py_out, py_err = run_graphrun(*args)
    cc_code, cc_out, cc_err = cc.run_cc(runner, *args)
    assert py_out == cc_out == "" and py_code == cc_code != 0, (py_code, py_err, cc_code, cc_err)
    assert py_err.count("\n") == cc_err.count("\n") == 1, (py_err, cc_err)
    assert py_err.removeprefix("graphrun: ") == cc_err.removeprefix("graphrun-cc: "), (py_err, cc_err)
    assert f"'{node}'" in py_err, py_err
    return py_err


def check_cc_refuses(tmp_path, runner, make, feeds, op_type, node):
    """graphrun-cc's one line for a graph holding `op_type` at `node`, which it has no kernel for."""
    graph, names = build_graph(make)
    code, out, err = cc.run_cc(runner, *_cli_args(tmp_path, graph, names, feeds))
    assert code != 0 and out == "", (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("graphrun-cc: "), err
    assert op_type in lines[0] and node in lines[0], lines[0]
    return lines[0]


def check_refused(tmp_path, make, feeds, node, *mentions):
    """The Session and graphrun both refuse in one line naming `node` and saying each of `mentions`."""
    graph, names = build_graph(make)
    with pytest.raises(Exception) as info:
        session_values(graph, names, feeds)
    session_line = str(info.value)
    assert "\n" not in session_line and f"'{node}'" in session_line, session_line
    code, out, err = run_graphrun(*_cli_args(tmp_path, graph, names, feeds))
    assert code != 0 and out == "", (code, out, err)
    assert err.startswith("graphrun: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"'{node}'" in err, err
    for text in mentions:
        assert text in session_line, (text, session_line)
        assert text in err, (text, err)
    return session_line, err
