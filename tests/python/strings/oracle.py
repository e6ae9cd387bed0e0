"""TensorFlow as the oracle for string graphs: TensorFlow builds a graph, both run it, results must be
equal element for element (strings, integers and bools are exact under the numerics policy)."""

import numpy as np

import graphdef
from graphdef.wire.serialize import import_graph_def


def _session(tf, graph):
    return tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto(device_count={"GPU": 0}))


def assert_same(ours, theirs, name):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
    if theirs.dtype.kind == "O":
        assert ours.dtype.kind == "O", (name, ours.dtype)
        assert all(type(v) is bytes for v in ours.reshape(-1).tolist()), name
        assert ours.reshape(-1).tolist() == theirs.reshape(-1).tolist(), (name, ours, theirs)
    else:
        assert ours.dtype == theirs.dtype, (name, ours.dtype, theirs.dtype)
        assert np.array_equal(ours, theirs, equal_nan=ours.dtype.kind == "f"), (name, ours, theirs)


def tf_graph(tf, build):
    """build(tf) inside a fresh TF1 graph; (graph, names of the tensors it returns)."""
    graph = tf.Graph()
    with graph.as_default():
        fetches = build(tf)
    return graph, [t.name for t in fetches]


def run_tf_graph_in_both(tf, build, feeds=None):
    """TensorFlow's GraphDef run by TensorFlow and by graphdef's Session; returns ours."""
    feeds = {f"{k}:0": v for k, v in (feeds or {}).items()}
    graph, names = tf_graph(tf, build)
    with _session(tf, graph) as sess:
        theirs = sess.run(names, feeds)
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        import_graph_def(graph.as_graph_def(), name="")
    with graphdef.Session(graph=ours_graph) as sess:
        ours = sess.run(names, feeds)
    for name, o, t in zip(names, ours, theirs):
        assert_same(o, t, name)
    return ours


def run_ours_in_both(tf, build, feeds=None):
    """graphdef's graph (build(graphdef)) run by graphdef and, from its GraphDef, by TensorFlow."""
    feeds = {f"{k}:0": v for k, v in (feeds or {}).items()}
    graph = graphdef.Graph()
    with graph.as_default():
        names = [t.name for t in build(graphdef)]
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run(names, feeds)
    theirs_graph = tf.Graph()
    with theirs_graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph.as_graph_def().SerializeToString()),
                                      name="")
    with _session(tf, theirs_graph) as sess:
        theirs = sess.run(names, feeds)
    for name, o, t in zip(names, ours, theirs):
        assert_same(o, t, name)
    return ours
