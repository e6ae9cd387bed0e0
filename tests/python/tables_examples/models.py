"""TensorFlow-made models with lookup tables and tf.Example parsing, built once per test module, and
the helpers that run them in graphdef's Session, in graphrun and in TensorFlow."""

import base64
import json
import shutil

import numpy as np

import graphdef
from graphdef.wire.serialize import import_graph_def
from tests.support.graphrun_helpers import run_graphrun

VOCAB = ["apple", "banana", "cherry", "\u00e9clair", " "]  # a space is a word; an empty line is refused


def tf_session(tf, graph=None):
    return tf.compat.v1.Session(graph=graph, config=tf.compat.v1.ConfigProto(device_count={"GPU": 0}))


def freeze(tf, graph, sess, outputs, path):
    """TF1's freezing, keeping init_all_tables as a frozen graph with tables keeps it."""
    graph_def = tf.compat.v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), outputs)
    path.write_bytes(graph_def.SerializeToString())
    return path


def hash_table_graph(tf, path):
    """A frozen graph: string -> int64 and int64 -> string StaticHashTables (KeyValueTensorInitializer);
    returns (path, TensorFlow's run of it as a function of the feed)."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.string, [None], name="x")
        n = v1.placeholder(tf.int64, [None], name="n")
        words = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b\x00", "\u00e9"], tf.constant([7, -3, 2**40], tf.int64)), -1)
        names = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant([1, 2, 3], tf.int64), ["one", "two", "three"]), "?")
        tf.identity(words.lookup(x), name="ids")
        tf.identity(names.lookup(n), name="names")
        tf.identity(words.size(), name="size")
        init = v1.tables_initializer()
        with tf_session(tf) as sess:
            sess.run(init)
            freeze(tf, graph, sess, ["ids", "names", "size", "init_all_tables"], path)
    return path


def vocabulary_saved_model(tf, export_dir, vocab_dir, num_oov_buckets=3):
    """A TF1 SavedModel: a vocabulary file asset (TextFileInitializer) in a StaticVocabularyTable with
    OOV buckets, a variable, and the tables' initializer as its main_op."""
    v1 = tf.compat.v1
    vocab_dir.mkdir(exist_ok=True)
    vocab = vocab_dir / "vocab.txt"
    vocab.write_text("".join(w + "\n" for w in VOCAB), encoding="utf-8")
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.string, [None], name="x")
        index = tf.lookup.TextFileIndex
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(str(vocab), tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER),
            num_oov_buckets)
        ids = tf.identity(table.lookup(x), name="ids")
        w = v1.get_variable("w", initializer=tf.constant([0.5, 2.0]), use_resource=False)
        scaled = tf.identity(tf.cast(ids, tf.float32) * w[1], name="scaled")
        with tf_session(tf) as sess:
            sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
            builder = v1.saved_model.Builder(str(export_dir))
            signature = v1.saved_model.predict_signature_def({"x": x}, {"ids": ids, "scaled": scaled})
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": signature}, main_op=v1.tables_initializer(),
                assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS))
            builder.save()
    shutil.rmtree(vocab_dir)  # the model must read its own copy under assets/
    return export_dir


def run_frozen_in_session(path, fetches, feeds):
    """A frozen graph imported into a fresh graph and run with no initializer run by hand."""
    graph = graphdef.Graph()
    with graph.as_default():
        import_graph_def(graphdef.GraphDef.FromString(path.read_bytes()), name="")
    with graphdef.Session(graph=graph) as sess:
        return sess.run(fetches, feeds)


def run_graphrun_json(model, feeds, fetches, *extra):
    """graphrun run --json: {fetch name: ndarray}; feeds are JSON lists."""
    argv = ["run", model, *extra, "--json"]
    for name, value in feeds.items():
        value = [{"b64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v for v in value]
        argv += ["--feed", f"{name}={json.dumps(value)}"]
    for name in fetches:
        argv += ["--fetch", name]
    code, out, err = run_graphrun(*argv)
    assert (code, err) == (0, ""), err
    result = {}
    for entry in json.loads(out)["outputs"]:
        values = entry["values"]
        if entry["dtype"] == "string":
            flat = np.asarray(values, dtype=object).reshape(-1).tolist()
            items = [base64.b64decode(v["b64"]) if isinstance(v, dict) else v.encode("utf-8") for v in flat]
            result[entry["name"].split(":")[0]] = np.array(items + [None], dtype=object)[:-1].reshape(entry["shape"])
        else:
            result[entry["name"].split(":")[0]] = np.array(values, dtype=entry["dtype"]).reshape(entry["shape"])
    return result


def graphrun_error(model, *argv):
    """graphrun run's one error line (exit code non-zero); graphrun joins runs of spaces."""
    code, out, err = run_graphrun("run", model, *argv)
    assert code != 0 and out == "" and err.count("\n") == 1 and "Traceback" not in err, (code, out, err)
    return err


def string_lookup_saved_model(tf, export_dir):
    """A TF2 SavedModel of a Keras StringLookup layer (two OOV indices): its table is filled by an
    initializer function the `__saved_model_init_op` calls; returns TensorFlow's own function."""
    layer = tf.keras.layers.StringLookup(vocabulary=["apple", "banana", "cherry", "\u00e9clair"], num_oov_indices=2)
    module = tf.Module()
    module.layer = layer
    module.serve = tf.function(lambda x: {"ids": layer(x)}, input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(export_dir), signatures={"serving_default": module.serve})
    return module.serve


def estimator_style_saved_model(tf, export_dir, vocab_dir):
    """A TF1 SavedModel as Estimator exports serve: serialized tf.Example records in, parse_example, a
    vocabulary-file table for a string feature (with an OOV bucket), an embedding and a linear score
    from variables, the tables' initializer as its legacy_init_op."""
    v1 = tf.compat.v1
    vocab_dir.mkdir(exist_ok=True)
    vocab = vocab_dir / "colors.txt"
    vocab.write_text("red\ngreen\nblue\n", encoding="utf-8")
    graph = tf.Graph()
    with graph.as_default():
        serialized = v1.placeholder(tf.string, [None], name="input_example_tensor")
        features = tf.io.parse_example(serialized, {
            "size": tf.io.FixedLenFeature([2], tf.float32),
            "color": tf.io.FixedLenFeature([], tf.string, default_value="none")})
        index = tf.lookup.TextFileIndex
        table = tf.lookup.StaticVocabularyTable(
            tf.lookup.TextFileInitializer(str(vocab), tf.string, index.WHOLE_LINE, tf.int64, index.LINE_NUMBER), 1)
        ids = table.lookup(features["color"])
        embedding = v1.get_variable("embedding", initializer=tf.constant([[0.5], [-1.0], [2.0], [0.0]]),
                                    use_resource=False)
        weights = v1.get_variable("weights", initializer=tf.constant([[1.5], [-0.25]]), use_resource=False)
        score = tf.identity(tf.matmul(features["size"], weights) + tf.gather(embedding, ids), name="score")
        with tf_session(tf) as sess:
            sess.run([v1.global_variables_initializer(), v1.tables_initializer()])
            builder = v1.saved_model.Builder(str(export_dir))
            signature = v1.saved_model.predict_signature_def({"examples": serialized}, {"score": score, "ids": ids})
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": signature},
                legacy_init_op=v1.tables_initializer(name="legacy_init_op"),
                assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS))
            builder.save()
    shutil.rmtree(vocab_dir)
    return export_dir
