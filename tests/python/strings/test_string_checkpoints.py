"""String variables in checkpoints (TensorBundle V2: varint lengths, a masked crc32c of them, the bytes)
and SavedModels, both ways with TensorFlow."""

import json

import numpy as np
import pytest

import graphdef as gd
from graphdef.graphrun import cli
from graphdef.wire import tensor_bundle
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle

VOCAB = [b"", b"a", "\u00e9t\u00e9".encode(), b"\xff\x00\x1b[2J", b"w" * 300]


def test_tensorflow_reads_our_string_checkpoint(tf_oracle, tmp_path):
    with gd.Graph().as_default():
        vocab = gd.Variable(gd.constant(np.array(VOCAB, dtype=object).reshape(5, 1)), name="vocab")
        gd.Variable(gd.constant([1.5]), name="w")
        saver = gd.train.Saver()
        with gd.Session() as sess:
            sess.run(gd.global_variables_initializer())
            saver.save(sess, str(tmp_path / "model"))
            assert sess.run(vocab).reshape(-1).tolist() == VOCAB
    reader = tf_oracle.train.load_checkpoint(str(tmp_path / "model"))
    assert reader.get_variable_to_dtype_map()["vocab"] == tf_oracle.string
    assert reader.get_tensor("vocab").reshape(-1).tolist() == VOCAB


def test_we_restore_tensorflows_string_checkpoint(tf_oracle, tmp_path):
    tf1 = tf_oracle.compat.v1
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tf1.Variable(np.array(VOCAB, dtype=object), name="vocab", use_resource=False)
        tf1.Variable(np.arange(3, dtype=np.int64), name="ids", use_resource=False)
        sess.run(tf1.global_variables_initializer())
        tf1.train.Saver().save(sess, str(tmp_path / "tf"))
    bundle = tensor_bundle.Bundle(tmp_path / "tf")
    got = bundle.read("vocab")
    assert got.dtype == object and got.tolist() == VOCAB
    with gd.Graph().as_default():
        vocab = gd.Variable(gd.constant([b""] * 5), name="vocab")
        gd.Variable(gd.constant(np.zeros(3, np.int64)), name="ids")
        with gd.Session() as sess:
            gd.train.Saver().restore(sess, str(tmp_path / "tf"))
            assert sess.run(vocab).tolist() == VOCAB


def test_a_damaged_string_entry_is_one_line(tmp_path):
    tensor_bundle.write(str(tmp_path / "m"), {"s": np.array([b"abc", b"de"], dtype=object)})
    data = tmp_path / "m.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    with pytest.raises(tensor_bundle.CheckpointFormatError, match="tensor 's': the bytes fail their checksum"):
        tensor_bundle.Bundle(tmp_path / "m").read("s")
    raw[0] = 0x7F  # a first length past the data
    data.write_bytes(bytes(raw))
    with pytest.raises(tensor_bundle.CheckpointFormatError, match="the string lengths do not match"):
        tensor_bundle.Bundle(tmp_path / "m").read("s")


def test_a_tensorflow_saved_model_with_string_variables_and_inputs_runs_here(tf_oracle, tmp_path, capsys):
    tf1 = tf_oracle.compat.v1
    export = str(tmp_path / "export")
    with tf1.Graph().as_default(), tf1.Session() as sess:
        words = tf1.placeholder(tf_oracle.string, [None], name="words")
        prefix = tf1.Variable(np.array([b"<", b">"], dtype=object), name="prefix", use_resource=False)
        tagged = tf_oracle.identity(tf_oracle.strings.join([prefix[0], tf_oracle.strings.lower(words), prefix[1]]),
                                    name="tagged")
        bucket = tf_oracle.identity(tf_oracle.strings.to_hash_bucket_fast(words, 100), name="bucket")
        sess.run(tf1.global_variables_initializer())
        tf1.saved_model.simple_save(sess, export, {"words": words}, {"tagged": tagged, "bucket": bucket})
        feed = np.array([b"Hello", b"\xc3\x89t\xc3\xa9"], dtype=object)
        theirs = sess.run([tagged, bucket], {words: feed})
    graph = gd.load(export)
    with gd.Session(graph=graph) as sess:
        ours = sess.run(["tagged:0", "bucket:0"], {"words:0": feed})
    assert ours[0].tolist() == theirs[0].tolist() and ours[1].tolist() == theirs[1].tolist()
    assert cli.main([export, "--feed", 'words=["Hello", "\u00c9t\u00e9"]', "--json"]) == 0
    outputs = {o["name"].split(":")[0]: o for o in json.loads(capsys.readouterr().out)["outputs"]}
    assert [v.encode() for v in outputs["tagged"]["values"]] == theirs[0].tolist()


def test_a_tf2_saved_model_with_string_functions_runs_in_graphrun(tf_oracle, tmp_path, capsys):
    tf = tf_oracle

    class Tagger(tf.Module):
        def __init__(self):
            self.prefix = tf.Variable("p:")

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def serve(self, words):
            clean = tf.strings.regex_replace(tf.strings.lower(words), "[^a-z ]", "")
            tf.debugging.assert_greater(tf.size(words), 0, message="no words")
            return {"tagged": tf.strings.join([self.prefix, clean]), "ids": tf.strings.to_hash_bucket_fast(clean, 50)}

    module = Tagger()
    export = str(tmp_path / "tf2")
    tf.saved_model.save(module, export, signatures={"serving_default": module.serve})
    words = ["Hello, World!", "\u00c9T\u00c9 2", ""]
    theirs = module.serve(tf.constant(words))
    assert cli.main([export, "--feed", "words=" + json.dumps(words), "--json"]) == 0
    outputs = {o["name"].split(":")[0]: o["values"] for o in json.loads(capsys.readouterr().out)["outputs"]}
    assert [v.encode() for v in outputs["tagged"]] == theirs["tagged"].numpy().tolist()
    assert outputs["ids"] == theirs["ids"].numpy().tolist()
    assert cli.main([export, "--feed", "words=[]"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "assertion failed: [no words] [Condition x > y did not hold element-wise:]" in err


def test_tensorflow_runs_our_saved_model_with_string_inputs_and_variables(tf_oracle, tmp_path):
    export = str(tmp_path / "ours")
    with gd.Graph().as_default():
        words = gd.placeholder(gd.string, [None], name="words")
        prefix = gd.Variable(gd.constant(["<", ">"]), name="prefix")
        tagged = gd.identity(gd.strings.join([prefix[0], gd.strings.upper(words), prefix[1]]), name="tagged")
        with gd.Session() as sess:
            sess.run(gd.global_variables_initializer())
            gd.saved_model.simple_save(sess, export, {"words": words}, {"tagged": tagged})
    tf1 = tf_oracle.compat.v1
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tf1.saved_model.loader.load(sess, [tf1.saved_model.SERVING], export)
        got = sess.run("tagged:0", {"words:0": [b"ab", b"\xc3\xa9"]})
    assert got.tolist() == [b"<AB>", b"<\xc3\xa9>"]
