"""TensorFlow's checkpoint format both ways, with TensorFlow itself as the oracle.

graphdef's Saver writes what tf.compat.v1.train.Saver restores, and restores what it and
tf.train.Checkpoint write; a damaged index or data file is one CheckpointError line.
"""

import os

import numpy as np
import pytest

import graphdef as gd
from graphdef.wire import sstable, tensor_bundle
from graphdef.wire.checkpoint import CheckpointError, Saver, latest_checkpoint, list_variables, load_variable

pytestmark = pytest.mark.tf_oracle

tensorflow = pytest.importorskip("tensorflow")
tf1 = tensorflow.compat.v1

RNG = np.random.default_rng(3)
VALUES = {
    "dense/kernel": RNG.standard_normal((30, 20)).astype(np.float32),
    "dense/bias": RNG.standard_normal(20).astype(np.float64),
    "global_step": np.array(42, np.int64),
    "flags": np.array([True, False, True]),
    "embedding": RNG.integers(-100, 100, (7, 3)).astype(np.int32),
    "half": np.array([0.5, -2.0], np.float16),
    "empty": np.zeros((0, 4), np.float32),
}


def graphdef_model(values):
    graph = gd.Graph()
    with graph.as_default():
        variables = {k: gd.Variable(v, name=k) for k, v in values.items()}
        init = gd.global_variables_initializer()
    return graph, variables, init


def tf_model(values):
    graph = tf1.Graph()
    with graph.as_default():
        variables = {k: tf1.Variable(v, name=k) for k, v in values.items()}
        init = tf1.global_variables_initializer()
    return graph, variables, init


def test_tensorflow_restores_what_graphdef_saves(tmp_path):
    graph, _, init = graphdef_model(VALUES)
    with gd.Session(graph=graph) as sess:
        sess.run(init)
        with graph.as_default():
            path = Saver().save(sess, tmp_path / "model.ckpt", global_step=42)
    zeros = {k: np.zeros_like(v) for k, v in VALUES.items()}
    tgraph, tvars, tinit = tf_model(zeros)
    with tgraph.as_default(), tf1.Session(graph=tgraph) as sess:
        sess.run(tinit)
        tf1.train.Saver().restore(sess, tensorflow.train.latest_checkpoint(str(tmp_path)))
        for key, value in VALUES.items():
            got = sess.run(tvars[key])
            assert got.dtype == value.dtype and got.shape == value.shape, key
            np.testing.assert_array_equal(got, value)
    assert path == str(tmp_path / "model.ckpt-42")


def test_graphdef_restores_what_tensorflows_saver_saves(tmp_path):
    tgraph, _, tinit = tf_model(VALUES)
    with tgraph.as_default(), tf1.Session(graph=tgraph) as sess:
        sess.run(tinit)
        tf1.train.Saver().save(sess, str(tmp_path / "tf.ckpt"), global_step=7)
    path = latest_checkpoint(tmp_path)
    assert path == str(tmp_path / "tf.ckpt-7")
    graph, variables, init = graphdef_model({k: np.zeros_like(v) for k, v in VALUES.items()})
    with gd.Session(graph=graph) as sess:
        with graph.as_default():
            Saver().restore(sess, path)
        for key, value in VALUES.items():
            got = sess.run(variables[key])
            assert np.asarray(got).dtype == value.dtype, key
            np.testing.assert_array_equal(got, value)
    assert dict(list_variables(path)) == {k: list(v.shape) for k, v in VALUES.items()}


def test_tf2_checkpoints_list_and_load_every_tensor(tmp_path):
    kernel = tensorflow.Variable(VALUES["dense/kernel"])
    path = tensorflow.train.Checkpoint(kernel=kernel).write(str(tmp_path / "tf2"))
    listed = dict(list_variables(path))
    assert listed["kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [30, 20]
    assert "_CHECKPOINTABLE_OBJECT_GRAPH" in listed   # TF's object graph, a string tensor
    np.testing.assert_array_equal(load_variable(path, "kernel/.ATTRIBUTES/VARIABLE_VALUE"), VALUES["dense/kernel"])
    # a string tensor: read as TensorFlow reads it (graphdef holds strings since issue 34)
    theirs = tensorflow.train.load_checkpoint(path).get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
    assert load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH").tolist() == theirs


def test_many_tensors_span_several_table_blocks(tmp_path):
    """Over 512 KiB of index entries: three data blocks or more, and an index block to find them."""
    values = {f"layer_{i:05d}/{RNG.bytes(20).hex()}": np.full((2,), i, np.float32) for i in range(9000)}
    tensor_bundle.write(str(tmp_path / "big"), values)
    assert os.path.getsize(tmp_path / "big.index") > 2 * sstable.BLOCK_SIZE
    reader = tensorflow.train.load_checkpoint(str(tmp_path / "big"))
    for key in sorted(values)[::997]:
        np.testing.assert_array_equal(reader.get_tensor(key), values[key])
    assert len(reader.get_variable_to_shape_map()) == 9000
    assert dict(list_variables(str(tmp_path / "big"))) == {k: [2] for k in values}


def test_damaged_files_are_one_clear_line_never_a_crash(tmp_path):
    prefix = str(tmp_path / "model")
    tensor_bundle.write(prefix, VALUES)
    index = open(prefix + ".index", "rb").read()
    rng = np.random.default_rng(0)
    for trial in range(300):
        damaged = bytearray(index)
        for _ in range(int(rng.integers(1, 4))):
            damaged[int(rng.integers(len(damaged)))] = int(rng.integers(256))
        if trial % 5 == 0:
            damaged = damaged[: int(rng.integers(len(damaged)))]
        open(prefix + ".index", "wb").write(bytes(damaged))
        try:
            values = {k: load_variable(prefix, k) for k, _ in list_variables(prefix)}
        except CheckpointError as e:
            assert "\n" not in str(e) and str(e).startswith(prefix), str(e)
            continue
        # A flip the checksums cannot see (block padding) must still give the saved values.
        for key, value in values.items():
            np.testing.assert_array_equal(value, VALUES[key])
