"""An op graphdef cannot run (a dtype it cannot hold) inside a cond or loop is refused up front with the
same line as outside control flow, naming the node, never reached as a kernel-less step mid-run."""

import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.framework.errors import UnimplementedError
from graphdef.wire.serialize import load


def _cond_model(path, plain):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        if plain:
            y = tf.square(x, name="sq")
        else:
            y = tf.cond(x > 0, lambda: tf.square(x, name="sq"), lambda: tf.negative(x), name="cond")
        tf.identity(y, name="y")
    graph_def = g.as_graph_def()
    (square,) = [n for n in graph_def.node if n.op == "Square"]
    square.attr["T"].type = graph_pb2.DT_QINT8  # a dtype graphdef's runtimes cannot hold
    path.write_bytes(graph_def.SerializeToString())
    return square.name


@pytest.mark.parametrize("engine", ["python", "cc"])
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "in a cond"])
def test_a_foreign_dtype_is_refused_before_the_run(tmp_path, plain, engine):
    name = _cond_model(tmp_path / "model.pb", plain)
    graph = load(str(tmp_path / "model.pb"))
    with tf.Session(graph=graph, engine=engine) as sess:
        with pytest.raises(UnimplementedError) as e:
            sess.run("y:0", {"x:0": 2.0})
    assert str(e.value) == f"Session.run: qint8 tensors, which graphdef cannot hold: '{name}' (Square)"
