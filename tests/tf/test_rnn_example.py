"""examples/rnn_sequence.py: an RNN trained through tf.while_loop's gradient, against TF1
training the same program (control flow v1, the same initial weights and batches)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphdef
from graphdef.framework.numerics import combined
from graphdef.ops.registry import numerics_of
from tests.support.cflow_oracle import tf1  # noqa: F401  (a fixture)
from tests.support.op_oracle import tf_oracle  # noqa: F401

pytestmark = pytest.mark.tf_oracle

STEPS = 25


def _example():
    path = Path(__file__).resolve().parents[2] / "examples" / "rnn_sequence.py"
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


# TensorFlow runs in its own process, with its Eigen kernels pinned: in this process it may already
# have been imported with oneDNN's (by another test), whose training-step numbers differ by ~0.2%,
# and grappler's remapper fails on this graph then. The graph is what is under test, not TF's rewrites.
_RUN_IN_TENSORFLOW = """
import json, sys
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
v1.disable_eager_execution()
graph_def = v1.GraphDef.FromString(open(sys.argv[1], "rb").read())
xs, ys = np.load(sys.argv[2]), np.load(sys.argv[3])
graph = tf.Graph()
with graph.as_default():
    v1.import_graph_def(graph_def, name="")
config = v1.ConfigProto()
config.graph_options.rewrite_options.disable_meta_optimizer = True  # run the graph as written
with v1.Session(graph=graph, config=config) as sess:
    sess.run("init")
    print(json.dumps([float(sess.run(["loss:0", "train"], {"x:0": xs, "y:0": ys})[0]) for _ in range(3)]))
"""


@pytest.mark.slow
def test_tensorflow_runs_the_saved_training_graph(tf_oracle, tmp_path):
    example = _example()
    graph = graphdef.Graph()
    with graph.as_default():
        x, y, loss, train, init = example.build(graphdef, example.initial_weights(3))
    (xs, ys), = example.make_data(3, 1)
    with graphdef.Session(graph=graph) as sess:
        sess.run(init)
        ours = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(3)]
    (tmp_path / "g.pb").write_bytes(graph.as_graph_def().SerializeToString())
    np.save(tmp_path / "x.npy", xs)
    np.save(tmp_path / "y.npy", ys)
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0", "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, "-c", _RUN_IN_TENSORFLOW, str(tmp_path / "g.pb"), str(tmp_path / "x.npy"),
                           str(tmp_path / "y.npy")], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    step = numerics_of(graph.as_graph_def(), "train")
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert combined([step] * (i + 1)).tolerance(np.float32).mismatch(np.float32(a), np.float32(b)) is None
