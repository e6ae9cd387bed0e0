"""tf.Example records serialized by TensorFlow, parsed by graphs TensorFlow made (ParseExampleV2,
ParseSingleExample, TF1's ParseExample) in the Session and graphrun, and by graphs graphdef's builders
made, equal to TensorFlow's answers; hostile records get one line naming the node and the feature."""

import base64
import json

import numpy as np
import pytest

import graphdef
from graphdef.ops import parse_example_api as parsing
from tests.python.strings.oracle import assert_same
from tests.python.tables_examples.models import (estimator_style_saved_model, graphrun_error, run_graphrun_json,
                                                 tf_session)
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle


def example(tf, **features):
    made = {}
    for key, values in features.items():
        if not values or isinstance(values[0], int):
            made[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif isinstance(values[0], float):
            made[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            made[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=made)).SerializeToString()


def records(tf):
    return [example(tf, age=[31], score=[0.25, -1.5], tags=[b"a", b"\xff\x00"], ids=[3, 1, 4], seq=[1.0, 2.0]),
            example(tf, score=[1e-45, 3.4e38], seq=[5.0, 6.0, 7.0, 8.0]),
            example(tf, age=[-2**63], score=[0.0, 2.0], tags=[b""], ids=[])]


def spec(io, api):
    return {"age": io.FixedLenFeature([], api.int64, default_value=-1),
            "score": io.FixedLenFeature([2], api.float32),
            "name": io.FixedLenFeature([1], api.string, default_value=["anon"]),
            "tags": io.VarLenFeature(api.string),
            "ids": io.VarLenFeature(api.int64),
            "seq": io.FixedLenSequenceFeature([2], api.float32, allow_missing=True, default_value=0.5)}


class _Io:
    """graphdef's parsing builders under TensorFlow's tf.io names."""

    FixedLenFeature, FixedLenSequenceFeature = parsing.FixedLenFeature, parsing.FixedLenSequenceFeature
    VarLenFeature = parsing.VarLenFeature
    int64, float32, string = graphdef.int64, graphdef.float32, graphdef.string


def _flat(parsed):
    """[(name, tensor)] of a parse result, sparse features as their three tensors, in key order."""
    out = []
    for key in sorted(parsed):
        value = parsed[key]
        if hasattr(value, "indices"):
            out += [(f"{key}.indices", value.indices), (f"{key}.values", value.values),
                    (f"{key}.dense_shape", value.dense_shape)]
        else:
            out.append((key, value))
    return out


@pytest.fixture(scope="module")
def tf_parse_graph(tf_oracle, tmp_path_factory):
    """TensorFlow's parse_example and parse_single_example graph, its .pb, and its answers."""
    tf = tf_oracle
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="serialized")
        batch = _flat(tf.io.parse_example(serialized, spec(tf.io, tf)))
        single = _flat(tf.io.parse_single_example(serialized[0], {k: v for k, v in spec(tf.io, tf).items()
                                                                  if k != "seq"}))
        names = {}
        for prefix, items in (("batch", batch), ("single", single)):
            for key, tensor in items:
                names[f"{prefix}/{key}"] = tf.identity(tensor, name=f"{prefix}/{key}").name
    path = tmp_path_factory.mktemp("parse") / "parse.pb"
    path.write_bytes(graph.as_graph_def().SerializeToString())
    with tf_session(tf, graph) as sess:
        theirs = dict(zip(names, sess.run(list(names.values()), {"serialized:0": records(tf)})))
    return path, names, theirs


def test_tensorflows_parse_example_graph_in_the_session(tf_oracle, tf_parse_graph):
    path, names, theirs = tf_parse_graph
    graph = graphdef.Graph()
    with graph.as_default():
        graphdef.import_graph_def(graphdef.GraphDef.FromString(path.read_bytes()), name="")
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run(list(names.values()), {"serialized:0": np.array(records(tf_oracle), dtype=object)})
    for key, value in zip(names, ours):
        assert_same(value, theirs[key], key)


def test_tensorflows_parse_example_graph_in_graphrun(tf_oracle, tf_parse_graph):
    path, names, theirs = tf_parse_graph
    ours = run_graphrun_json(path, {"serialized": records(tf_oracle)}, [n.split(":")[0] for n in names.values()])
    for key, name in names.items():
        assert_same(ours[name.split(":")[0]], theirs[key], key)


def test_our_builders_parse_as_tensorflow_does(tf_oracle, tf_parse_graph):
    _, _, theirs = tf_parse_graph
    graph = graphdef.Graph()
    with graph.as_default():
        serialized = graphdef.placeholder(graphdef.string, [None], name="serialized")
        batch = _flat(parsing.parse_example(serialized, spec(_Io, _Io)))
    with graphdef.Session(graph=graph) as sess:
        ours = sess.run([t for _, t in batch], {serialized: np.array(records(tf_oracle), dtype=object)})
    for (key, _), value in zip(batch, ours):
        assert_same(value, theirs[f"batch/{key}"], key)
    # and TensorFlow runs the GraphDef our builders made
    tf = tf_oracle
    imported = tf.Graph()
    with imported.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph.as_graph_def().SerializeToString()),
                                      name="")
    with tf_session(tf, imported) as sess:
        again = sess.run([t.name for _, t in batch], {"serialized:0": records(tf)})
    for (key, _), value, before in zip(batch, again, ours):
        assert_same(before, value, key)


def test_tf1_parse_example_graph(tf_oracle):
    tf = tf_oracle
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="serialized")
        parsed = tf.raw_ops.ParseExample(
            serialized=serialized, names=[], sparse_keys=["tags"], dense_keys=["age", "score"],
            dense_defaults=[tf.constant([7], tf.int64), tf.constant([], tf.float32)], sparse_types=[tf.string],
            dense_shapes=[[1], [2]])
        fetches = [tf.identity(t).name for t in list(parsed[0]) + list(parsed[1]) + list(parsed[2]) + list(parsed[3])]
    with tf_session(tf, graph) as sess:
        theirs = sess.run(fetches, {"serialized:0": records(tf)})
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        graphdef.import_graph_def(graphdef.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    with graphdef.Session(graph=ours_graph) as sess:
        ours = sess.run(fetches, {"serialized:0": np.array(records(tf), dtype=object)})
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert_same(o, t, i)


@pytest.mark.parametrize("case, words", [
    ("wrong kind", "Name: <unknown>, Key: score, Index: 0.  Data types don't match. Data type: int64 but "
                   "expected type: float"),
    ("wrong length", "Name: <unknown>, Key: score, Index: 0.  Number of float values != expected.  Values size: 3 "
                     "but output shape: [2]"),
    ("missing", "Name: <unknown>, Feature: score (data type: float) is required but could not be found."),
    ("truncated", "Could not parse example input"),
    ("huge length", "Could not parse example input"),
])
def test_a_hostile_record_is_one_line_naming_the_node_and_feature(tf_oracle, tf_parse_graph, tmp_path, case, words):
    tf = tf_oracle
    path, names, _ = tf_parse_graph
    bad = {"wrong kind": example(tf, score=[1, 2]), "wrong length": example(tf, score=[1.0, 2.0, 3.0]),
           "missing": example(tf, age=[1]), "truncated": example(tf, name=[b"x" * 90], tags=[b"y" * 300])[:-40],
           "huge length": b"\n\xff\xff\xff\xff\x0f\n\x03age"}[case]  # features: 2**32 - 1 bytes, 7 there
    feed = json.dumps([{"b64": base64.b64encode(bad).decode()}])
    err = graphrun_error(path, "--feed", f"serialized={feed}", "--fetch", "batch/score")
    assert "node 'ParseExample/ParseExampleV2' (ParseExampleV2): " in err and " ".join(words.split()) in err, err
    assert len(err) < 400  # a record is shown cut short, never whole
    if case in ("truncated", "huge length"):  # TF's own line holds the raw record, which it cannot decode
        bad = example(tf, name=[b"x" * 90])[:-10]
    with tf_session(tf, tf.Graph()) as sess:  # TensorFlow's own words
        with pytest.raises(tf.errors.InvalidArgumentError, match=_escaped(words)):
            sess.run(tf.io.parse_example([bad], spec(tf.io, tf))["score"])


def _escaped(text):
    import re
    return re.escape(text)


def test_a_dense_shape_over_the_tensor_size_limit_is_refused(tf_oracle):
    graph = graphdef.Graph()
    with graph.as_default():
        serialized = graphdef.placeholder(graphdef.string, [None], name="serialized")
        big = parsing.parse_example(serialized, {"x": parsing.FixedLenFeature([1 << 40], graphdef.float32)})
    with graphdef.Session(graph=graph) as sess, pytest.raises(Exception, match="ParseExampleV2") as info:
        sess.run(big["x"], {serialized: np.array([example(tf_oracle, y=[1])], dtype=object)})
    assert "limit" in str(info.value)


def test_graphrun_cc_names_the_parse_op_it_lacks(tf_parse_graph, cc_runner):
    import subprocess
    path, _, _ = tf_parse_graph
    proc = subprocess.run([str(cc_runner), "run", str(path), "--fetch", "batch/score"], capture_output=True,
                          text=True)
    assert proc.returncode != 0 and proc.stdout == "" and proc.stderr.count("\n") <= 1, proc.stderr
    assert "no kernel for ParseExampleV2 (ParseExample/ParseExampleV2)" in proc.stderr


def test_ragged_features_as_tensorflow_parses_them(tf_oracle):
    tf = tf_oracle
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="serialized")
        parsed = tf.io.parse_example(serialized, {"ids": tf.io.RaggedFeature(tf.int64),
                                                  "tags": tf.io.RaggedFeature(tf.string, row_splits_dtype=tf.int64)})
        fetches = [tf.identity(t).name for key in ("ids", "tags") for t in (parsed[key].values,
                                                                          parsed[key].row_splits)]
    with tf_session(tf, graph) as sess:
        theirs = sess.run(fetches, {"serialized:0": records(tf)})
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        graphdef.import_graph_def(graphdef.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    with graphdef.Session(graph=ours_graph) as sess:
        ours = sess.run(fetches, {"serialized:0": np.array(records(tf), dtype=object)})
    for name, o, t in zip(fetches, ours, theirs):
        assert_same(o, t, name)


@pytest.mark.parametrize("kind, words", [
    ("var_len", "Name: <unknown>, Key: t, Index: 0.  Data types don't match. Expected type: string, Actual type: "
                "int64"),
    ("ragged", "Name: <unknown>, Key: t, Index: 0.  Data types don't match. Expected type: float, Actual type: "
               "int64"),
    ("sequence", "Name: <unknown>, Key: t, Index: 0.  Number of int64 values is not a multiple of stride length. "
                 "Saw 1 values but output shape is: [?,2]"),
])
def test_sparse_ragged_and_sequence_features_of_the_wrong_kind_or_length(tf_oracle, kind, words):
    tf = tf_oracle
    record = example(tf, t=[1])

    def spec(io, api):
        return {"t": {"var_len": lambda: io.VarLenFeature(api.string), "ragged": lambda: io.RaggedFeature(api.float32),
                      "sequence": lambda: io.FixedLenSequenceFeature([2], api.int64, allow_missing=True)}[kind]()}

    class _Ours(_Io):
        RaggedFeature = parsing.RaggedFeature

    graph = graphdef.Graph()
    with graph.as_default():
        parsed = parsing.parse_example(graphdef.constant([record]), spec(_Ours, _Ours))["t"]
    with graphdef.Session(graph=graph) as sess, pytest.raises(graphdef.errors.InvalidArgumentError) as ours:
        sess.run(parsed.values if hasattr(parsed, "values") else parsed)
    assert "(ParseExampleV2): " + words in str(ours.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match=_escaped(words)):
        tf.io.parse_example([record], spec(tf.io, tf))


def test_an_estimator_style_example_parsing_saved_model(tf_oracle, tmp_path):
    tf = tf_oracle
    export_dir = estimator_style_saved_model(tf, tmp_path / "model", tmp_path / "vocab")
    inputs = [example(tf, size=[1.0, 2.0], color=[b"green"]), example(tf, size=[0.5, -4.0]),
              example(tf, size=[3.0, 0.0], color=[b"purple"]), example(tf, size=[-1.0, 1.0], color=[b"blue"])]
    with tf_session(tf, tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], str(export_dir))
        outputs = meta.signature_def["serving_default"].outputs
        theirs = sess.run([outputs["score"].name, outputs["ids"].name], {"input_example_tensor:0": inputs})
    ours = run_graphrun_json(export_dir, {"examples": inputs}, ["score", "ids"])
    assert_same(ours["ids"], theirs[1], "ids")
    assert_conforms_scores(ours["score"], theirs[0])
    with graphdef.Session(graph=graphdef.load(export_dir)) as sess:
        got = sess.run(["score:0", "ids:0"], {"examples:0": np.array(inputs, dtype=object)})
    assert_same(got[1], theirs[1], "ids")
    assert_conforms_scores(got[0], theirs[0])


def assert_conforms_scores(ours, theirs):
    """Two products and a sum of values exact in binary: TF's float32 answer bit for bit."""
    assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), (ours, theirs)


def test_tf1_parse_single_example_graph(tf_oracle):
    tf = tf_oracle
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [], name="serialized")
        parsed = tf.raw_ops.ParseSingleExample(
            serialized=serialized, dense_defaults=[tf.constant([], tf.float32), tf.constant(["none"])],
            num_sparse=2, sparse_keys=["ids", "tags"], dense_keys=["score", "name"],
            sparse_types=[tf.int64, tf.string], dense_shapes=[[2], [1]])
        fetches = [tf.identity(t).name for group in parsed for t in group]
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        graphdef.import_graph_def(graphdef.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    for record in records(tf):
        with tf_session(tf, graph) as sess:
            theirs = sess.run(fetches, {"serialized:0": record})
        with graphdef.Session(graph=ours_graph) as sess:
            ours = sess.run(fetches, {"serialized:0": np.array(record, dtype=object)})
        for name, o, t in zip(fetches, ours, theirs):
            assert_same(o, t, name)


@pytest.mark.parametrize("shape, default", [([2], [1.0, 2.0, 3.0]), ([2], [[1.0, 2.0]]), ([2], 5.0),
                                            ([2, 1], [1.0, 2.0]), ([None], [1.0, 2.0]), ([None, 2], []),
                                            ([None, 2], [0.5, 0.5])])
def test_a_default_that_does_not_fit_its_dense_shape_is_refused_as_tensorflow_does(tf_oracle, shape, default):
    tf = tf_oracle
    graph = tf.Graph()
    with graph.as_default():
        serialized = tf.constant([example(tf, a=[1.0, 2.0])])
        empty = tf.constant([], tf.string)
        parsed = tf.raw_ops.ParseExampleV2(
            serialized=serialized, names=empty, sparse_keys=empty, dense_keys=tf.constant(["b"]), ragged_keys=empty,
            dense_defaults=[tf.constant(default, tf.float32)], num_sparse=0, sparse_types=[], ragged_value_types=[],
            ragged_split_types=[], dense_shapes=[shape], name="parse")
        fetch = tf.identity(parsed[3][0], name="b").name
    with tf_session(tf, graph) as sess, pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        sess.run(fetch)
    import re
    words = re.search(r"(def_value\[0\]\.shape\(\)|dense_shape\[0\] is a variable).*", theirs.value.message).group(0)
    ours_graph = graphdef.Graph()
    with ours_graph.as_default():
        graphdef.import_graph_def(graphdef.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
    with graphdef.Session(graph=ours_graph) as sess, pytest.raises(graphdef.errors.InvalidArgumentError) as ours:
        sess.run(fetch)
    assert "node 'parse' (ParseExampleV2): " + words in str(ours.value)
