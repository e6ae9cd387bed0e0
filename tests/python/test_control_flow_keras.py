"""Keras 3 recurrent layers frozen to TF1 control flow (while loops over TensorLists), run by
our Session and by graphrun, against TensorFlow running the same frozen GraphDef.

`convert_variables_to_constants_v2` lowers the layers' While ops to Enter/Merge/Switch/Exit
frames and their TensorArrays to TensorList ops; that is the graph real users bring.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

import graphdef
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import tf_oracle  # noqa: F401  (a fixture)

pytestmark = pytest.mark.tf_oracle

LAYERS = ["lstm", "gru_sequences", "simple_rnn", "bidirectional_lstm_masked"]


def _model(keras, kind):
    layers = keras.layers
    body = {
        "lstm": [layers.LSTM(4)],
        "gru_sequences": [layers.GRU(4, return_sequences=True)],
        "simple_rnn": [layers.SimpleRNN(4)],
        "bidirectional_lstm_masked": [layers.Masking(0.0), layers.Bidirectional(layers.LSTM(3))],
    }[kind]
    return keras.Sequential([keras.Input((5, 3))] + body)


@pytest.fixture(scope="module")
def frozen(tf_oracle, tmp_path_factory):
    """kind -> (path of the frozen .pb, TF's own output for the test input)."""
    tf = tf_oracle
    keras = pytest.importorskip("keras")
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    keras.utils.set_random_seed(0)
    out = {}
    for kind in LAYERS:
        model = _model(keras, kind)
        fn = tf.function(lambda x, m=model: m(x))
        concrete = fn.get_concrete_function(tf.TensorSpec([2, 5, 3], tf.float32, name="x"))
        graph_def = convert_variables_to_constants_v2(concrete).graph.as_graph_def()
        path = tmp_path_factory.mktemp("keras") / f"{kind}.pb"
        path.write_bytes(graph_def.SerializeToString())
        imported = tf.Graph()
        with imported.as_default():
            tf.compat.v1.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=imported) as sess:
            expected = sess.run("Identity:0", {"x:0": _input()})
        out[kind] = (path, graph_def, expected)
    return out


def _input():
    x = np.random.RandomState(1).uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    x[1, 3:] = 0.0  # masked steps for the Masking model; ordinary values for the others
    return x


@pytest.mark.slow
@pytest.mark.parametrize("kind", LAYERS)
def test_frozen_keras_rnn_matches_tensorflow(frozen, kind):
    path, graph_def, expected = frozen[kind]
    ops = {node.op for node in graph_def.node}
    assert {"Enter", "Merge", "Switch", "NextIteration", "Exit", "TensorListSetItem"} <= ops
    graph = graphdef.load(path)
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run("Identity:0", {"x:0": _input()})
    assert ours.shape == expected.shape
    assert_conforms(ours, expected, graph_def, "Identity:0")


def test_graphrun_runs_a_frozen_lstm(frozen, tmp_path):
    path, graph_def, expected = frozen["lstm"]
    np.save(tmp_path / "x.npy", _input())
    proc = subprocess.run([sys.executable, "-m", "graphdef.graphrun.cli", str(path),
                           "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "Identity:0", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (output,) = json.loads(proc.stdout)["outputs"]
    assert output["name"] == "Identity:0"
    assert_conforms(np.asarray(output["values"], np.float32), expected, graph_def, "Identity:0")
