"""examples/rnn_sequence.py: an RNN trained through tf.while_loop's gradient, against TF1
training the same program (control flow v1, the same initial weights and batches)."""

import importlib.util
from pathlib import Path

import numpy as np

import graphdef
from graphdef.framework.numerics import combined
from graphdef.ops.registry import numerics_of
from tests.cflow_oracle import tf1  # noqa: F401  (a fixture)
from tests.op_oracle import tf_oracle  # noqa: F401

STEPS = 25


def _example():
    path = Path(__file__).resolve().parent.parent / "examples" / "rnn_sequence.py"
    spec = importlib.util.spec_from_file_location("rnn_sequence", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rnn_loss_falls_and_matches_tf1(tf1):
    example = _example()
    graph, ours = example.train(graphdef, lambda g: graphdef.Session(graph=g), STEPS)
    _, theirs = example.train(tf1.compat.v1, lambda g: tf1.compat.v1.Session(graph=g), STEPS)
    assert np.mean(ours[-5:]) < 0.6 * np.mean(ours[:5]), f"the loss did not fall: {ours}"
    # each step's loss may differ from TF1's by what that many training steps' ops allow
    step = numerics_of(graph.as_graph_def(), "train")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        why = combined([step] * (i + 1)).tolerance(np.float32).mismatch(np.float32(a), np.float32(b))
        assert why is None, f"step {i}: graphdef {a}, TF1 {b}: {why}"


def test_tensorflow_runs_the_saved_training_graph(tf_oracle, tmp_path):
    example = _example()
    graph = graphdef.Graph()
    with graph.as_default():
        x, y, loss, train, init = example.build(graphdef, example.initial_weights(3))
    (xs, ys), = example.make_data(3, 1)
    with graphdef.Session(graph=graph) as sess:
        sess.run(init)
        ours = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(3)]
    imported = tf_oracle.Graph()
    with imported.as_default():
        tf_oracle.compat.v1.import_graph_def(
            tf_oracle.compat.v1.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    # grappler's remapper is off: with oneDNN kernels (when TensorFlow was imported before the oracle
    # fixture pinned Eigen's) it fuses the weight-gradient sum `total + MatMul` as a bias add of a
    # [1, 8] "bias" and fails; the graph itself is what is under test, not TF's rewrites
    config = tf_oracle.compat.v1.ConfigProto()
    config.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
    with tf_oracle.compat.v1.Session(graph=imported, config=config) as sess:
        sess.run("init")
        theirs = [sess.run(["loss:0", "train"], {"x:0": xs, "y:0": ys})[0] for _ in range(3)]
    step = numerics_of(graph.as_graph_def(), "train")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert combined([step] * (i + 1)).tolerance(np.float32).mismatch(np.float32(a), np.float32(b)) is None
