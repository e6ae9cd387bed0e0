"""TensorFlow as the oracle for single ops: the same GraphDef run by our Session and by TF.

`run_both` builds a graph with graphdef, runs it here, imports its bytes into TensorFlow and
runs it there; `gradients_both` compares our tf.gradients with TensorFlow's own gradients of
the same imported forward graph. Both judge with the numerics policy of the fetched tensors
(graphdef/framework/numerics.py), so no test states its own tolerance. Tests get TensorFlow from the
`tf_oracle` fixture, which skips (with the reason reported) where it is not installed.

TensorFlow picks its CPU kernels by CPU: oneDNN's where the CPU has AVX512_VNNI, BF16 or AMX,
Eigen's elsewhere, and the two accept different attrs (Eigen refuses dilated convolution
gradients and unequal depthwise strides). The fixture pins Eigen's (TF_ENABLE_ONEDNN_OPTS=0)
unless the environment chooses, so a test means the same on every machine; what Eigen cannot
run is tested against numpy or central differences instead, in the test that needs it.
"""

import os

import pytest

import graphdef
from tests.support.numerics_policy import assert_all_conform


@pytest.fixture(scope="module")
def tf_oracle():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # must precede the import to quiet its C++ logging
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # read at import: the same kernels on every CPU
    return pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")


def freeze_keras(tf, model, shape, path):
    """A Keras model frozen the standard way (convert_variables_to_constants_v2) into a .pb at `path`;
    (placeholder name, fetch, GraphDef)."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    function = tf.function(lambda x: model(x)).get_concrete_function(tf.TensorSpec(shape, tf.float32))
    constants = convert_variables_to_constants_v2(function)
    graph_def = constants.graph.as_graph_def()
    path.write_bytes(graph_def.SerializeToString())
    (x_name,) = [n.name for n in graph_def.node if n.op == "Placeholder"]
    (fetch,) = [t.name for t in constants.outputs]
    return x_name, fetch, graph_def


def _import(tf, graph_def):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph_def.SerializeToString()), name="")
    return graph


def _session(tf, graph):
    return tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto(device_count={"GPU": 0}))


def _feed(feeds):
    return {f"{name}:0": value for name, value in feeds.items()}


def run_both(tf, make, feeds):
    """make() builds into a fresh default graph and returns the tensors to fetch; returns our values."""
    graph = graphdef.Graph()
    with graph.as_default():
        fetches = make()
    names = [t.name for t in fetches]
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run(names, _feed(feeds))
    with _session(tf, _import(tf, graph.as_graph_def())) as sess:
        theirs = sess.run(names, _feed(feeds))
    assert_all_conform(ours, theirs, graph, names, who="graphdef and TensorFlow")
    return ours


def gradients_both(tf, make, feeds, slack=1):
    """make() -> (loss, xs); our symbolic gradients against TF's on the imported forward graph.

    Inputs TF gives no gradient for (it treats some as constants) are returned in `skipped`.
    """
    graph = graphdef.Graph()
    with graph.as_default():
        loss, xs = make()
        forward = graph.as_graph_def()
        ours_t = graphdef.gradients(loss, xs)
    tf_graph = _import(tf, forward)
    with tf_graph.as_default():
        theirs_t = tf.compat.v1.gradients(tf_graph.get_tensor_by_name(loss.name),
                                          [tf_graph.get_tensor_by_name(x.name) for x in xs])
    pairs = [(x, o, t) for x, o, t in zip(xs, ours_t, theirs_t) if t is not None]
    for x, o, _ in pairs:
        assert o is not None, f"TF has a gradient for {x.name}, graphdef has none"
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run([o for _, o, _ in pairs], _feed(feeds))
    with _session(tf, tf_graph) as sess:
        theirs = sess.run([t for _, _, t in pairs], _feed(feeds))
    assert_all_conform(ours, theirs, graph, [o.name for _, o, _ in pairs], slack, who="graphdef and TensorFlow")
    return [x.name for x, _, t in zip(xs, ours_t, theirs_t) if t is None]
