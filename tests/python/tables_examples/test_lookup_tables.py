"""Lookup tables made by TensorFlow (a frozen TF1 graph, a TF1 SavedModel with a vocabulary asset and
OOV buckets) run in the Session and in graphrun with no initializer run by hand, equal to TensorFlow's
answers; graphrun-cc names the ops it lacks; bad tables and vocabularies get one line naming the node."""

import re

import numpy as np
import pytest

import graphdef
from graphdef.ops import lookup_api as lookup
from graphdef.wire import saved_model
from tests.python.strings.oracle import assert_same
from tests.python.tables_examples.models import (VOCAB, graphrun_error, hash_table_graph, run_frozen_in_session,
                                                 run_graphrun_json, string_lookup_saved_model, tf_session,
                                                 vocabulary_saved_model)
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

pytestmark = pytest.mark.tf_oracle

WORDS = ["a", "b\x00", "zz", "\u00e9", "", "A"]
NUMBERS = [3, 0, 1, -1, 2**40]
QUERY = ["apple", "kiwi", "cherry", "", " ", "\u00e9clair", "Apple", "banana", "durian"]


@pytest.fixture(scope="module")
def frozen_tables(tf_oracle, tmp_path_factory):
    path = hash_table_graph(tf_oracle, tmp_path_factory.mktemp("tables") / "tables.pb")
    graph = tf_oracle.Graph()
    with graph.as_default():
        tf_oracle.compat.v1.import_graph_def(tf_oracle.compat.v1.GraphDef.FromString(path.read_bytes()), name="")
    with tf_session(tf_oracle, graph) as sess:
        sess.run("init_all_tables")
        theirs = sess.run(["ids:0", "names:0", "size:0"], {"x:0": WORDS, "n:0": NUMBERS})
    return path, dict(zip(["ids", "names", "size"], theirs))


@pytest.fixture(scope="module")
def vocabulary_model(tf_oracle, tmp_path_factory):
    root = tmp_path_factory.mktemp("vocab")
    export_dir = vocabulary_saved_model(tf_oracle, root / "model", root / "source")
    with tf_session(tf_oracle, tf_oracle.Graph()) as sess:
        tf_oracle.compat.v1.saved_model.loader.load(sess, ["serve"], str(export_dir))
        theirs = sess.run(["ids:0", "scaled:0"], {"x:0": QUERY})
    return export_dir, dict(zip(["ids", "scaled"], theirs))


def test_a_frozen_graph_with_hash_tables_runs_in_the_session_without_an_init_step(frozen_tables):
    path, theirs = frozen_tables
    ours = run_frozen_in_session(path, ["ids:0", "names:0", "size:0"], {"x:0": WORDS, "n:0": NUMBERS})
    for name, value in zip(["ids", "names", "size"], ours):
        assert_same(value, theirs[name], name)


def test_a_frozen_graph_with_hash_tables_runs_in_graphrun(frozen_tables):
    path, theirs = frozen_tables
    ours = run_graphrun_json(path, {"x": WORDS, "n": NUMBERS}, ["ids", "names", "size"])
    for name in ("ids", "names", "size"):
        assert_same(ours[name], theirs[name], name)


def test_graphrun_cc_names_the_table_ops_it_lacks(frozen_tables, cc_runner):
    import subprocess
    path, _ = frozen_tables
    proc = subprocess.run([str(cc_runner), "run", str(path), "--fetch", "size"], capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.count("\n") <= 1 and "Traceback" not in proc.stderr
    assert "no kernel for HashTableV2 (hash_table" in proc.stderr and "LookupTableSizeV2" in proc.stderr


def test_a_tf1_saved_model_with_a_vocabulary_asset_and_oov_buckets_in_graphrun(vocabulary_model):
    export_dir, theirs = vocabulary_model
    ours = run_graphrun_json(export_dir, {"x": QUERY}, ["ids", "scaled"])
    assert_same(ours["ids"], theirs["ids"], "ids")
    assert np.array_equal(ours["scaled"], theirs["scaled"])  # small integers times 2.0: exact
    assert ours["ids"].max() >= len(VOCAB)  # an OOV bucket was taken


def test_a_tf1_saved_model_with_a_vocabulary_asset_in_the_session(vocabulary_model):
    export_dir, theirs = vocabulary_model
    with graphdef.Session(graph=graphdef.load(export_dir)) as sess:  # the serving signature, frozen
        assert_same(sess.run("ids:0", {"x:0": QUERY}), theirs["ids"], "ids")
    with graphdef.Session(graph=graphdef.Graph()) as sess:  # tf.compat.v1.saved_model.loader.load
        saved_model.load(sess, ["serve"], export_dir)
        ours = sess.run(["ids:0", "scaled:0"], {"x:0": QUERY})
    assert_same(ours[0], theirs["ids"], "ids")
    assert np.array_equal(ours[1], theirs["scaled"])


def test_a_keras_string_lookup_tf2_saved_model_in_the_session_and_graphrun(tf_oracle, tmp_path):
    export_dir = tmp_path / "string_lookup"
    serve = string_lookup_saved_model(tf_oracle, export_dir)
    theirs = serve(tf_oracle.constant(QUERY))["ids"].numpy()
    assert_same(run_graphrun_json(export_dir, {"x": QUERY}, ["ids"])["ids"], theirs, "ids")
    with graphdef.Session(graph=graphdef.load(export_dir)) as sess:
        assert_same(sess.run("ids:0", {"x:0": QUERY}), theirs, "ids")


def test_a_missing_asset_file_is_one_line_naming_the_node_and_the_file(vocabulary_model, tmp_path):
    import shutil
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    (copy / "assets" / "vocab.txt").unlink()
    err = graphrun_error(copy, "--feed", 'x=["apple"]', "--fetch", "ids")
    assert "(InitializeTableFromTextFileV2)" in err and "vocab.txt; No such file or directory" in err


def test_duplicate_words_in_a_vocabulary_are_refused_in_tensorflows_words(tf_oracle, vocabulary_model, tmp_path):
    import shutil
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    (copy / "assets" / "vocab.txt").write_text("a\nb\na\n")
    err = graphrun_error(copy, "--feed", 'x=["a"]', "--fetch", "ids")
    words = "HashTable has different value for same key. Key a has 0 and trying to add value 2"
    assert "InitializeTableFromTextFileV2" in err and words in err
    with tf_session(tf_oracle, tf_oracle.Graph()) as sess, pytest.raises(Exception, match=words):
        tf_oracle.compat.v1.saved_model.loader.load(sess, ["serve"], str(copy))


def test_an_empty_vocabulary_line_is_refused_in_tensorflows_words(tf_oracle, vocabulary_model, tmp_path):
    import shutil
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    (copy / "assets" / "vocab.txt").write_bytes("a\r\n\u00e9\n\r\nb\n".encode())
    err = graphrun_error(copy, "--feed", 'x=["a"]', "--fetch", "ids")
    words = "vocab.txt: empty line found at position 8."
    assert "(InitializeTableFromTextFileV2): Invalid content in " in err and words in err
    with tf_session(tf_oracle, tf_oracle.Graph()) as sess, pytest.raises(Exception, match=words):
        tf_oracle.compat.v1.saved_model.loader.load(sess, ["serve"], str(copy))


def test_a_vocabulary_over_the_tensor_size_limit_is_refused(vocabulary_model, tmp_path, monkeypatch):
    import shutil
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    (copy / "assets" / "vocab.txt").write_bytes(b"x" * 5000 + b"\n")
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", "4096")
    err = graphrun_error(copy, "--feed", 'x=["a"]', "--fetch", "ids")
    assert "InitializeTableFromTextFileV2" in err and "over the tensor size limit" in err


def test_a_frozen_graph_without_its_initializer_says_table_not_initialized(tf_oracle, frozen_tables, tmp_path):
    path, _ = frozen_tables
    graph_def = graphdef.GraphDef.FromString(path.read_bytes())
    kept = [n for n in graph_def.node if n.name != "init_all_tables"]
    del graph_def.node[:]
    graph_def.node.extend(kept)
    bare = tmp_path / "bare.pb"
    bare.write_bytes(graph_def.SerializeToString())
    err = graphrun_error(bare, "--feed", 'x=["a"]', "--fetch", "ids")
    assert "node 'hash_table_Lookup/LookupTableFindV2' (LookupTableFindV2): Table not initialized." in err


def test_a_key_of_the_wrong_dtype_is_refused_naming_the_node(tf_oracle, frozen_tables, tmp_path):
    path, _ = frozen_tables
    graph_def = graphdef.GraphDef.FromString(path.read_bytes())
    for node in graph_def.node:
        if node.name == "x":
            node.attr["dtype"].type = graphdef.int64.enum
        if node.name == "hash_table_Lookup/LookupTableFindV2":
            node.attr["Tin"].type = graphdef.int64.enum
    wrong = tmp_path / "wrong.pb"
    wrong.write_bytes(graph_def.SerializeToString())
    err = graphrun_error(wrong, "--feed", "x=[1]", "--fetch", "ids")
    assert "'hash_table_Lookup/LookupTableFindV2'" in err
    assert "signature mismatch, have: resource, int64, int64 expected: resource, string, int64" in err


def test_our_builders_make_graphs_tensorflow_runs_alike(tf_oracle, tmp_path):
    tf = tf_oracle
    vocab = tmp_path / "v.txt"
    vocab.write_text("10\tten\n20\ttwenty\n30\tthirty\n")
    query_words, query_numbers = ["ten", "nine", "thirty", ""], [30, 5, 10, -7]

    def build(api):
        index = api.lookup.TextFileIndex
        words = api.lookup.StaticVocabularyTable(
            api.lookup.TextFileInitializer(str(vocab), api.string, 1, api.int64, index.LINE_NUMBER), 4)
        numbers = api.lookup.StaticHashTable(
            api.lookup.TextFileInitializer(str(vocab), api.int64, 0, api.string, 1, delimiter="\t"), "none")
        by_id = api.lookup.StaticVocabularyTable(
            api.lookup.KeyValueTensorInitializer(api.constant([30, 10], api.int64), api.constant([0, 1], api.int64)),
            5)
        return [words.lookup(api.constant(query_words)), numbers.lookup(api.constant(query_numbers, api.int64)),
                by_id.lookup(api.constant(query_numbers, api.int64)), numbers.size()]

    theirs_graph = tf.Graph()
    with theirs_graph.as_default():
        fetches = build(tf)
        with tf_session(tf) as sess:
            sess.run(tf.compat.v1.tables_initializer())
            theirs = sess.run(fetches)
    graph = graphdef.Graph()
    with graph.as_default():
        fetches = build(_Api())
        init = lookup.tables_initializer()
    with graphdef.Session(graph=graph) as sess:
        sess.run(init)
        ours = sess.run(fetches)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert_same(o, t, i)
    # and TensorFlow runs the GraphDef our builders made
    imported = tf.Graph()
    with imported.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph.as_graph_def().SerializeToString()),
                                      name="")
    with tf_session(tf, imported) as sess:
        sess.run("init_all_tables")
        again = sess.run([t.name for t in fetches])
    for i, (o, t) in enumerate(zip(ours, again)):
        assert_same(o, t, i)


class _Api:
    """graphdef's namespace with tf.lookup, as TensorFlow spells it."""

    lookup = lookup
    string, int64, float32 = graphdef.string, graphdef.int64, graphdef.float32
    constant = staticmethod(graphdef.constant)


def test_a_failed_table_initializer_is_tried_again_by_the_next_run(vocabulary_model, tmp_path):
    import shutil
    export_dir, theirs = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    vocab = copy / "assets" / "vocab.txt"
    kept = vocab.read_bytes()
    vocab.unlink()
    with graphdef.Session(graph=graphdef.load(copy)) as sess:
        with pytest.raises(graphdef.errors.NotFoundError, match="No such file or directory"):
            sess.run("ids:0", {"x:0": QUERY})
        vocab.write_bytes(kept)
        assert_same(sess.run("ids:0", {"x:0": QUERY}), theirs["ids"], "ids")


def test_an_initializer_that_needs_feeds_is_left_to_the_program():
    graph = graphdef.Graph()
    with graph.as_default():
        keys = graphdef.placeholder(graphdef.string, [None], name="keys")
        values = graphdef.constant([1, 2], graphdef.int64)
        table = lookup.StaticHashTable(lookup.KeyValueTensorInitializer(keys, values), -1)
        init = lookup.tables_initializer()
        other = graphdef.constant(5, name="other")
        found = table.lookup(graphdef.constant(["b", "z"]))
    with graphdef.Session(graph=graph) as sess:
        assert sess.run(other) == 5  # not held up by an initializer it cannot feed
        with pytest.raises(graphdef.errors.FailedPreconditionError, match="Table not initialized"):
            sess.run(found)
        sess.run(init, {keys: ["a", "b"]})
        assert sess.run(found).tolist() == [2, -1]


@pytest.mark.parametrize("content, attrs, words", [
    (b"", {}, "Read less bytes than requested"),
    (b"a\tx\nb\n", {"vocab_size": 5}, "Invalid vocab_size in {path}: expected 5 but got 2"),
    (b"a\tx\nb\n", {"key_index": 0, "value_index": 1, "value_dtype": "string"},
     "Invalid number of columns in {path} line 1 (b) : expected at least 2 got 1"),
    (b"12\n3z\n", {"key_index": 0, "key_dtype": "int64"}, "Field 3z in line 1 is not a valid int64."),
])
def test_bad_vocabulary_files_in_tensorflows_words(tf_oracle, tmp_path, content, attrs, words):
    path = tmp_path / "vocab.txt"
    path.write_bytes(content)
    words = words.format(path=path)
    settings = {"key_dtype": "string", "key_index": -2, "value_dtype": "int64", "value_index": -1, "vocab_size": None,
                **attrs}

    def build(api):
        initializer = api.lookup.TextFileInitializer(
            str(path), getattr(api, settings["key_dtype"]), settings["key_index"],
            getattr(api, settings["value_dtype"]), settings["value_index"], vocab_size=settings["vocab_size"])
        default = "?" if settings["value_dtype"] == "string" else -5
        return api.lookup.StaticHashTable(initializer, default).size()

    graph = graphdef.Graph()
    with graph.as_default():
        size = build(_Api())
        init = lookup.tables_initializer()
    with graphdef.Session(graph=graph) as sess, pytest.raises(graphdef.errors.OpError) as ours:
        sess.run(init)
    assert "(InitializeTableFromTextFileV2)" in str(ours.value) and words in str(ours.value)
    assert size is not None
    tf = tf_oracle
    with tf.Graph().as_default(), tf_session(tf) as sess, pytest.raises(tf.errors.OpError, match=re.escape(words)):
        build(tf)
        sess.run(tf.compat.v1.tables_initializer())


@pytest.mark.parametrize("verb", [["convert"], ["optimize", "--outputs", "ids,scaled"]])
def test_a_saved_model_written_as_one_file_carries_its_vocabulary_not_its_path(vocabulary_model, tmp_path, verb):
    import shutil

    from tests.support.graphrun_helpers import run_graphrun
    export_dir, theirs = vocabulary_model
    copy = tmp_path / "somewhere" / "model"
    shutil.copytree(export_dir, copy)
    out = tmp_path / "model.pb"
    code, _, err = run_graphrun(verb[0], copy, "-o", out, *verb[1:])
    assert code == 0, err
    shutil.rmtree(copy)  # the written graph must not need the SavedModel any more
    assert str(copy).encode() not in out.read_bytes()
    ops = {node.op for node in graphdef.GraphDef.FromString(out.read_bytes()).node}
    assert "InitializeTableV2" in ops and "InitializeTableFromTextFileV2" not in ops
    ours = run_graphrun_json(out, {"x": QUERY}, ["ids", "scaled"])
    assert_same(ours["ids"], theirs["ids"], "ids")
    assert np.array_equal(ours["scaled"], theirs["scaled"])
    assert_same(run_frozen_in_session(out, "ids:0", {"x:0": QUERY}), theirs["ids"], "ids")


def test_converting_a_saved_model_whose_vocabulary_is_missing_is_one_line(vocabulary_model, tmp_path):
    import shutil

    from tests.support.graphrun_helpers import run_graphrun
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    (copy / "assets" / "vocab.txt").unlink()
    code, out, err = run_graphrun("convert", copy, "-o", tmp_path / "model.pb")
    assert (code, out, err.count("\n")) == (3, "", 1), err
    assert "(InitializeTableFromTextFileV2)" in err and "vocab.txt; No such file or directory" in err
    assert not (tmp_path / "model.pb").exists()


@pytest.mark.parametrize("name", ["../../../etc/hostname", "/etc/hostname", "./", ".."])
def test_an_asset_named_outside_the_assets_directory_is_refused(vocabulary_model, tmp_path, name):
    import shutil

    from graphdef._proto import meta_graph_pb2
    from graphdef.wire import saved_model_tables
    from tests.support.graphrun_helpers import run_graphrun
    export_dir, _ = vocabulary_model
    copy = tmp_path / "model"
    shutil.copytree(export_dir, copy)
    model = meta_graph_pb2.SavedModel.FromString((copy / "saved_model.pb").read_bytes())
    meta = model.meta_graphs[0]
    [(tensor, _)] = saved_model_tables.asset_files(meta)
    del meta.collection_def["saved_model_assets"]  # the same asset, named as a TF2 writer keeps it
    asset = meta.asset_file_def.add(filename=name)
    asset.tensor_info.name = tensor
    (copy / "saved_model.pb").write_bytes(model.SerializeToString())
    for verb in (["run", copy, "--feed", 'x=["apple"]', "--fetch", "ids"], ["convert", copy, "-o", tmp_path / "m.pb"]):
        code, out, err = run_graphrun(*verb)
        assert (code, out, err.count("\n")) == (3, "", 1), err
        assert "is not a file name under assets/" in err
