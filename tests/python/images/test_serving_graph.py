"""A TF1-era serving graph made by TensorFlow: encoded image bytes in -> decode -> resize -> a small
conv -> out, frozen to a .pb. graphrun runs it on base64 JSON feeds with TensorFlow's answers (a scalar
of JPEG bytes, and a batch of PNG and JPEG bytes through tf.map_fn); graphrun-cc, which has no image
codecs yet, names the op it lacks in one line."""

import base64
import json

import numpy as np
import pytest

from tests.python.images import made
from tests.python.tables_examples.models import graphrun_error, run_graphrun_json, tf_session
from tests.support import cc_helpers as cc
from tests.support.numerics_policy import assert_all_conform
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle


def _classifier(tf, image):
    """decoded uint8 [h, w, 3] -> resized float -> 3x3 conv -> relu -> mean: [4] scores."""
    v1 = tf.compat.v1
    pixels = tf.cast(image, tf.float32) / 255.0
    resized = v1.image.resize_bilinear(pixels[None], [16, 16])
    kernel = tf.constant(np.random.default_rng(1).normal(size=(3, 3, 3, 4)).astype(np.float32))
    features = tf.nn.relu(tf.nn.conv2d(resized, kernel, strides=1, padding="SAME"))
    return tf.reduce_mean(features, axis=[0, 1, 2])


@pytest.fixture(scope="module")
def serving_graphs(tf_oracle, tmp_path_factory):
    """(scalar model, batch model, TF's session runner): frozen TF graphs, as a TF1 export would be."""
    tf = tf_oracle
    v1 = tf.compat.v1
    folder = tmp_path_factory.mktemp("serving")
    scalar = tf.Graph()
    with scalar.as_default():
        contents = v1.placeholder(tf.string, [], name="image_bytes")
        tf.identity(_classifier(tf, tf.io.decode_jpeg(contents, channels=3)), name="scores")
    batch = tf.Graph()
    with batch.as_default():
        contents = v1.placeholder(tf.string, [None], name="image_bytes")
        scores = v1.map_fn(lambda b: _classifier(tf, tf.image.decode_image(b, channels=3, expand_animations=False)),
                           contents, dtype=tf.float32)
        tf.identity(scores, name="scores")
    paths = []
    for graph, name in ((scalar, "scalar.pb"), (batch, "batch.pb")):
        path = folder / name
        path.write_bytes(graph.as_graph_def().SerializeToString())
        paths.append(path)

    def tf_run(graph, feed):
        with tf_session(tf, graph) as sess:
            return sess.run("scores:0", {"image_bytes:0": feed})
    return paths[0], paths[1], scalar, batch, tf_run


def _conform(ours, theirs, model):
    """Our scores against TF's under the numerics policy of the graph (decode exact, then float ops)."""
    import graphdef
    from graphdef.wire.serialize import import_graph_def
    graph = graphdef.Graph()
    with graph.as_default():
        import_graph_def(graphdef.GraphDef.FromString(model.read_bytes()), name="")
    assert_all_conform([ours], [theirs], graph, ["scores:0"], who="graphrun and TensorFlow")


def test_graphrun_runs_a_jpeg_bytes_in_graph(serving_graphs):
    scalar_model, _, scalar, _, tf_run = serving_graphs
    for data in (made.jpeg(height=40, width=30), made.jpeg(channels=1, progressive=True)):
        feed = json.dumps({"b64": base64.b64encode(data).decode()})
        ours = _run_scalar(scalar_model, feed)
        _conform(ours, tf_run(scalar, data), scalar_model)


def _run_scalar(model, feed):
    from tests.support.graphrun_helpers import run_graphrun
    code, out, err = run_graphrun("run", model, "--feed", f"image_bytes={feed}", "--fetch", "scores", "--json")
    assert (code, err) == (0, ""), err
    (entry,) = json.loads(out)["outputs"]
    return np.array(entry["values"], dtype=np.float32).reshape(entry["shape"])


def test_graphrun_runs_a_batch_of_mixed_formats_through_map_fn(serving_graphs):
    _, batch_model, _, batch, tf_run = serving_graphs
    images = [made.jpeg(seed=1), made.png(channels=4, seed=2), made.gif(seed=3), made.bmp(seed=4)]
    ours = run_graphrun_json(batch_model, {"image_bytes": images}, ["scores"])["scores"]
    theirs = tf_run(batch, np.array(images, dtype=object))
    assert ours.shape == (4, 4)
    _conform(ours, theirs, batch_model)


def test_graphrun_gives_one_line_for_a_truncated_image(serving_graphs):
    scalar_model = serving_graphs[0]
    feed = json.dumps({"b64": base64.b64encode(made.jpeg()[:200]).decode()})
    line = graphrun_error(scalar_model, "--feed", f"image_bytes={feed}", "--fetch", "scores")
    assert line.startswith("graphrun: ") and line.rstrip("\n").endswith(
        "(DecodeJpeg): jpeg::Uncompress failed. Invalid JPEG data or crop window."), line


def test_graphrun_cc_names_the_codec_it_lacks(serving_graphs, cc_runner):
    scalar_model = serving_graphs[0]
    feed = json.dumps({"b64": base64.b64encode(made.jpeg()).decode()})
    code, out, err = cc.run_cc(cc_runner, "run", scalar_model, "--feed", f"image_bytes={feed}", "--fetch", "scores")
    lines = err.splitlines()
    assert code != 0 and out == "" and len(lines) == 1, (code, out, err)
    assert lines[0].startswith("graphrun-cc: ") and "no kernel for DecodeJpeg (DecodeJpeg)" in lines[0], lines[0]


def test_graphrun_runs_a_tf2_saved_model_that_decodes_in_its_signature(tf_oracle, tmp_path):
    """TF2's export of a bytes-in Keras classifier: tf.map_fn (control flow v2, TensorLists) over
    decode_image and tf.image.resize inside the serving signature, run from the SavedModel folder."""
    from graphdef.graphrun.cli import load_model
    tf = tf_oracle
    model = tf.keras.Sequential([tf.keras.Input((16, 16, 3)), tf.keras.layers.Conv2D(4, 3, activation="relu"),
                                 tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(2)])

    def prepare(data):
        pixels = tf.cast(tf.io.decode_image(data, channels=3, expand_animations=False), tf.float32) / 255.0
        return tf.image.resize(pixels, [16, 16])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve(images):
        return {"scores": model(tf.map_fn(prepare, images, fn_output_signature=tf.float32))}
    module = tf.Module()
    module.model, module.serve = model, serve
    tf.saved_model.save(module, str(tmp_path / "model"), signatures={"serving_default": serve})
    images = [made.jpeg(seed=5), made.png(channels=3, seed=6), made.jpeg(channels=1, subsampling="4:4:4", seed=7)]
    theirs = serve(tf.constant(images))["scores"].numpy()
    ours = run_graphrun_json(tmp_path / "model", {"images": images}, [])["scores"]
    graph, _ = load_model(str(tmp_path / "model"))
    assert_all_conform([ours], [theirs], graph, ["scores:0"], who="graphrun and TensorFlow")
