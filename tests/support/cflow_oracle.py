"""TensorFlow 1.x control flow as the oracle: one program built twice, by graphdef and by
tf.compat.v1 with control flow v2 disabled (the Switch/Merge/Enter/Exit graphs TF1 made).

`check` runs both builds, and also runs graphdef's own GraphDef inside TensorFlow, so a test
proves three things at once: our Session computes TF1's answers, our graph has TF1's op types
and loop frames, and TensorFlow accepts and runs the graph we save.
"""

import collections

import numpy as np
import pytest

import graphdef
from tests.support.numerics_policy import assert_conforms


@pytest.fixture(scope="module")
def tf1(tf_oracle):
    """TensorFlow with control flow v1: tf.compat.v1.cond/while_loop build Switch and Merge."""
    tf_oracle.compat.v1.disable_control_flow_v2()
    yield tf_oracle
    tf_oracle.compat.v1.enable_control_flow_v2()


def _session(tf, graph):
    return tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto(device_count={"GPU": 0}))


def build_ours(program):
    graph = graphdef.Graph()
    with graph.as_default():
        fetches = program(graphdef)
    return graph, fetches


def check(tf, program, feeds, same_structure=True, run_tf1_graph=True):
    """program(api) -> list of tensors, with api graphdef or tf.compat.v1; feeds by placeholder name.

    Returns our values, already compared with TF1's, with TF running our GraphDef and (unless
    run_tf1_graph is False: TF1's gradient graphs keep loop values on StackV2 resources, which
    graphdef does not have) with our Session running the GraphDef TF1 built."""
    graph, fetches = build_ours(program)
    names = [t.name for t in fetches]
    feed_names = {f"{k}:0": v for k, v in feeds.items()}
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run(names, feed_names)
    tf_graph = tf.Graph()
    with tf_graph.as_default():
        tf_fetches = program(tf.compat.v1)
    with _session(tf, tf_graph) as sess:
        theirs = sess.run(tf_fetches, feed_names)
    imported = tf.Graph()
    with imported.as_default():
        tf.compat.v1.import_graph_def(
            tf.compat.v1.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    with _session(tf, imported) as sess:
        theirs_on_ours = sess.run(names, feed_names)
    if run_tf1_graph:
        tf1_graph = graphdef.Graph()
        graphdef.import_graph_def(graphdef.GraphDef.FromString(tf_graph.as_graph_def().SerializeToString()),
                                  name="", graph=tf1_graph)
        with graphdef.Session(graph=tf1_graph) as sess:
            ours_on_theirs = sess.run([t.name for t in tf_fetches], feed_names)
        for t, a, b in zip(tf_fetches, ours_on_theirs, theirs):
            assert_conforms(a, b, tf1_graph.as_graph_def(), t.name)
    graph_def = graph.as_graph_def()
    for name, a, b, c in zip(names, ours, theirs, theirs_on_ours):
        assert np.asarray(a).shape == np.asarray(b).shape, f"{name}: {np.shape(a)} vs TF1 {np.shape(b)}"
        assert_conforms(a, b, graph_def, name)
        assert_conforms(a, c, graph_def, name)
    if same_structure:
        assert_same_structure(graph, tf_graph)
    return ours


def control_flow_summary(ops):
    """The control-flow op counts and the loop frame names of a graph's ops."""
    kinds = ("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond")
    types = collections.Counter(op.type for op in ops if op.type in kinds)
    frames = sorted({_frame_of(op) for op in ops if op.type == "Enter"})
    return dict(types), frames


def _frame_of(op):
    value = op.get_attr("frame_name")
    return value.decode() if isinstance(value, bytes) else value


def assert_same_structure(graph, tf_graph):
    ours = control_flow_summary(graph.get_operations())
    theirs = control_flow_summary(tf_graph.get_operations())
    assert ours == theirs, f"graphdef built {ours}, TF1 built {theirs}"
