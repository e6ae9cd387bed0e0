"""TF2 SavedModels (tf.saved_model.save of a tf.Module or a Keras model, Keras model.export) and
TF1 ones with several signatures, run by signature in tf.load, graphrun and graphrun-cc with
TensorFlow's own answers as the oracle; `inspect` lists them as saved_model_cli does; bad
directories are one error line. The models are made here, by TensorFlow, into tmp dirs."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import graphdef as gd
from graphdef.wire import saved_model
from graphdef.wire.serialize import GraphFileError
from tests.support import cc_helpers, graphrun_helpers
from tests.support.numerics_policy import assert_conforms

pytestmark = pytest.mark.tf_oracle

tensorflow = pytest.importorskip("tensorflow")
tf1 = tensorflow.compat.v1
keras = pytest.importorskip("keras")

RNG = np.random.default_rng(13)
W = RNG.standard_normal((3, 2)).astype(np.float32)
B = RNG.standard_normal(2).astype(np.float32)


class TwoSignatures(tensorflow.Module):
    def __init__(self):
        super().__init__()
        self.w = tensorflow.Variable(W, name="w")
        self.b = tensorflow.Variable(B, name="b")

    @tensorflow.function(input_signature=[tensorflow.TensorSpec([None, 3], tensorflow.float32, name="x")])
    def serve(self, x):
        return {"y": tensorflow.nn.relu(tensorflow.matmul(x, self.w) + self.b)}

    @tensorflow.function(input_signature=[tensorflow.TensorSpec([None, 3], tensorflow.float32, name="features")])
    def scores(self, features):
        return {"logits": tensorflow.matmul(features, self.w), "bias": self.b * 2.0}


class LoopAndCond(tensorflow.Module):
    """Captured variables passed on into a While body and If branches (functional control flow)."""

    def __init__(self):
        super().__init__()
        self.w = tensorflow.Variable(np.eye(3, dtype=np.float32) * 0.5 + W[0, 0])
        self.b = tensorflow.Variable(B[0])

    @tensorflow.function(input_signature=[tensorflow.TensorSpec([None, 3], tensorflow.float32, name="x")])
    def __call__(self, x):
        _, y = tensorflow.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, tensorflow.matmul(acc, self.w) +
                                                                           self.b), [tensorflow.constant(0), x])
        return {"y": tensorflow.cond(tensorflow.reduce_sum(y) > 0, lambda: y * self.b, lambda: y - self.b)}


def make_loop(path):
    tensorflow.saved_model.save(LoopAndCond(), str(path))


def make_module(path):
    module = TwoSignatures()
    tensorflow.saved_model.save(module, str(path), signatures={"serving_default": module.serve,
                                                               "scores": module.scores})


def make_keras_functional(path):
    inputs = keras.Input((4,), name="feat")
    hidden = keras.layers.Dense(8, activation="relu")(inputs)
    hidden = keras.layers.BatchNormalization()(hidden)
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax", name="probs")(hidden))
    norm = model.layers[2]  # moving statistics that are not the identity's, so freezing them shows
    norm.moving_mean.assign(RNG.standard_normal(8).astype(np.float32))
    norm.moving_variance.assign(RNG.uniform(0.5, 2.0, 8).astype(np.float32))
    tensorflow.saved_model.save(model, str(path))


def make_keras_export(path):
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, activation="tanh"), keras.layers.Dense(2)])
    model.export(str(path), verbose=False)


def make_tf1_two_signatures(path):
    with tf1.Graph().as_default(), tf1.Session() as sess:
        x = tf1.placeholder(tensorflow.float32, [None, 3], name="x")
        w = tf1.Variable(W, name="dense/w")
        b = tf1.Variable(B, name="dense/b", use_resource=True)
        logits = tf1.matmul(x, w, name="logits")
        y = tf1.nn.relu(logits + b, name="y")
        sess.run(tf1.global_variables_initializer())
        info = tf1.saved_model.utils.build_tensor_info
        sign = tf1.saved_model.signature_def_utils.build_signature_def
        builder = tf1.saved_model.Builder(str(path))
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
            "serving_default": sign({"x": info(x)}, {"y": info(y)}, "tensorflow/serving/predict"),
            "scores": sign({"features": info(x)}, {"logits": info(logits)}, "tensorflow/serving/predict")})
        builder.save()


MODELS = {"module": make_module, "loop": make_loop, "keras_functional": make_keras_functional,
          "keras_export": make_keras_export, "tf1": make_tf1_two_signatures}
# (model, signature, features of its one input)
CASES = [("module", "serving_default", 3), ("module", "scores", 3), ("loop", "serving_default", 3),
         ("keras_functional", "serving_default", 4),
         ("keras_export", "serve", 5), ("keras_export", "serving_default", 5), ("tf1", "serving_default", 3),
         ("tf1", "scores", 3)]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("saved_models")
    for name, make in MODELS.items():
        make(root / name)
    return root


def tensorflows_answer(export, signature, feeds):
    """The signature run by TensorFlow's own loader: {output key: ndarray}."""
    if signature == "serving_default" or "tf1" not in str(export):
        loaded = tensorflow.saved_model.load(str(export))
        results = loaded.signatures[signature](**{k: tensorflow.constant(v) for k, v in feeds.items()})
        return {k: v.numpy() for k, v in results.items()}
    with tf1.Graph().as_default(), tf1.Session() as sess:
        meta = tf1.saved_model.loader.load(sess, ["serve"], str(export))
        sig = meta.signature_def[signature]
        keys = sorted(sig.outputs)
        values = sess.run([sig.outputs[k].name for k in keys], {sig.inputs[k].name: v for k, v in feeds.items()})
        return dict(zip(keys, values))


def feeds_for(export, signature, width):
    """A random batch for the signature's one input, under the input key TensorFlow gives it."""
    [key] = tensorflow.saved_model.load(str(export)).signatures[signature].structured_input_signature[1]
    return {key: RNG.standard_normal((4, width)).astype(np.float32)}


@pytest.mark.slow
@pytest.mark.parametrize("model,signature,width", CASES, ids=[f"{m}-{s}" for m, s, _ in CASES])
def test_each_runtime_gives_tensorflows_answer(exports, tmp_path, capsys, runner, model, signature, width):
    export = exports / model
    feeds = feeds_for(export, signature, width)
    expected = tensorflows_answer(export, signature, feeds)
    frozen = saved_model.frozen(export, signature)[0]
    keys = sorted(expected)
    # tf.load: the signature's keys are node names of the loaded graph
    graph = gd.load(export, signature)
    with gd.Session(graph=graph) as sess:
        got = sess.run([f"{k}:0" for k in keys], {f"{k}:0": v for k, v in feeds.items()})
    for key, value in zip(keys, got):
        assert_conforms(value, expected[key], frozen, key)
    # graphrun and graphrun-cc: --signature, --feed KEY=..., the outputs by key
    args = []
    for key, value in feeds.items():
        np.save(tmp_path / f"{key}.npy", value)
        args += ["--feed", f"{key}=@{tmp_path / f'{key}.npy'}"]
    args += ["--signature", signature, "--json"]
    for fetches in ([], [a for k in keys for a in ("--fetch", k)]):
        for stdout in (graphrun_helpers.ok(capsys, export, *args, *fetches), cc_helpers.ok(runner, export, *args,
                                                                                             *fetches)):
            outputs = {o["name"]: np.array(o["values"], np.float32) for o in json.loads(stdout)["outputs"]}
            assert sorted(outputs) == [f"{k}:0" for k in keys] or sorted(outputs) == keys, outputs
            for key in keys:
                assert_conforms(outputs.get(key, outputs.get(f"{key}:0")), expected[key], frozen, key)


def saved_model_cli_show(export):
    proc = subprocess.run([sys.executable, "-m", "tensorflow.python.tools.saved_model_cli", "show", "--dir",
                           str(export), "--all"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("model", ["module", "keras_export", "tf1"])
def test_inspect_lists_signatures_as_saved_model_cli_does(exports, capsys, runner, model):
    export = exports / model
    theirs = saved_model_cli_show(export)
    ours = graphrun_helpers.ok(capsys, "inspect", export)
    assert ours == cc_helpers.ok(runner, "inspect", export)
    assert theirs.startswith(ours), (ours, theirs)  # TF goes on with ops and concrete functions
    listing = json.loads(graphrun_helpers.ok(capsys, "inspect", export, "--json"))
    assert listing == json.loads(cc_helpers.ok(runner, "inspect", export, "--json"))
    [meta] = listing["meta_graphs"]
    assert meta["tags"] == ["serve"]
    loaded = saved_model.read(export).meta_graphs[0].signature_def
    assert [s["key"] for s in meta["signatures"]] == sorted(loaded)
    for signature in meta["signatures"]:
        for side in ("inputs", "outputs"):
            tf_side = getattr(loaded[signature["key"]], side)
            assert [t["key"] for t in signature[side]] == sorted(tf_side)
            assert [t["name"] for t in signature[side]] == [tf_side[k].name for k in sorted(tf_side)]


def test_a_signatures_frozen_graph_is_inspected_by_key(exports, capsys, runner):
    summary = json.loads(graphrun_helpers.ok(capsys, "inspect", exports / "module", "--signature", "scores",
                                             "--json"))
    assert [i["name"] for i in summary["inputs"]] == ["features"]
    assert sorted(o["name"] for o in summary["outputs"]) == ["bias:0", "logits:0"]
    cc = json.loads(cc_helpers.ok(runner, "inspect", exports / "module", "--signature", "scores", "--json"))
    assert [i["name"] for i in cc["inputs"]] == ["features"]


def broken_copy(exports, tmp_path, model="module"):
    target = tmp_path / model
    shutil.copytree(exports / model, target)
    return target


def both_fail(capsys, runner, code, *argv):
    """The one error line of graphrun and of graphrun-cc, each exiting with `code`."""
    got, out, err = graphrun_helpers.graphrun(capsys, *argv)
    assert got == code and out == "" and len(err.splitlines()) == 1, (got, err)
    return err.strip(), cc_helpers.fails(runner, code, *argv)


def test_bad_saved_models_are_one_line(exports, tmp_path, capsys, runner):
    feed = ["--feed", "x=[[1,2,3]]"]
    for line in both_fail(capsys, runner, 3, exports / "module", "--signature", "nope", *feed):
        assert "no signature 'nope' (it has: scores, serving_default); choose one with --signature" in line
    missing = broken_copy(exports, tmp_path)
    (missing / "variables" / "variables.index").unlink()
    for line in both_fail(capsys, runner, 3, missing, *feed):
        assert "variables are missing" in line and "copy its variables/ directory" in line
    corrupt = broken_copy(exports, tmp_path / "c")
    (corrupt / "saved_model.pb").write_bytes(b"\x0a\xff\xff\xff garbage")
    for line in both_fail(capsys, runner, 3, corrupt, *feed):
        assert "saved_model.pb: not a SavedModel" in line and "re-export it" in line
    for line in both_fail(capsys, runner, 3, "inspect", corrupt):
        assert "saved_model.pb: not a SavedModel" in line
    with pytest.raises(GraphFileError, match="no signature 'nope'"):
        gd.load(exports / "module", "nope")
