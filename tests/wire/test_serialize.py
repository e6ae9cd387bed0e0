"""GraphDef round trips, TensorFlow's wire facts, and bad files."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework.errors import ResourceExhaustedError
from graphdef._proto import graph_pb2
from graphdef.wire.serialize import (GraphFileError, import_graph_def, load, ndarray_from_proto, ndarray_to_proto, save,
                                     serialize)

# TF 2.21's bytes for: c = Const(1.5), y = Identity(c, ^n), n = NoOp, versions{producer: 2474}
TF_VECTOR = bytes.fromhex(
    "0a2e0a0163 1205436f6e7374 2a0b0a056474797065120230 01"
    "2a150a0576616c7565120c420a080112002a040000c03f"
    "0a1d0a0179 12084964656e74697479 1a0163 1a025e6e 2a070a0154 12023001"
    "0a090a016e 12044e6f4f70"
    "220308aa13".replace(" ", ""))


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    with tf.name_scope("layer"):
        h = tf.nn.relu(tf.matmul(x, w) - 4.0)
    out = tf.reduce_sum(h, axis=1, name="out")
    count = tf.cast(tf.reduce_max(tf.constant([3, 9, 2], tf.int64)), tf.uint8, name="count")
    return x, [out, count, tf.sigmoid(h, name="sig")]


def test_build_save_load_run_gives_identical_values(graph, tmp_path):
    x, fetches = _model()
    feed = np.array([[1, 2, 3], [-1, 0, 5]], np.float32)
    with tf.Session() as sess:
        before = sess.run(fetches, {x: feed})
    for name in ("model.pb", "model.pbtxt"):
        save(graph, tmp_path / name)
        loaded = load(tmp_path / name)
        with tf.Session(graph=loaded) as sess:
            after = sess.run([t.name for t in fetches], {"x:0": feed})
        for a, b in zip(before, after):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_array_equal(a, b)


def test_serialize_parse_serialize_is_byte_identical(graph, tmp_path):
    _model()
    first = serialize(graph.as_graph_def())
    save(graph, tmp_path / "m.pb")
    assert (tmp_path / "m.pb").read_bytes() == first
    reparsed = graph_pb2.GraphDef.FromString(first)
    assert serialize(reparsed) == first
    assert serialize(load(tmp_path / "m.pb").as_graph_def()) == first


def test_tensorflows_own_bytes_parse_and_run():
    g = tf.Graph()
    import_graph_def(graph_pb2.GraphDef.FromString(TF_VECTOR), name="", graph=g)
    assert [(op.name, op.type) for op in g.get_operations()] == [("c", "Const"), ("n", "NoOp"), ("y", "Identity")]
    assert g.get_operation_by_name("y").control_inputs == (g.get_operation_by_name("n"),)
    with tf.Session(graph=g) as sess:
        assert sess.run("y:0") == np.float32(1.5)


def test_written_nodes_carry_every_attr_and_a_producer(graph):
    tf.matmul(tf.zeros([2, 2]), tf.zeros([2, 2]), name="mm")
    tf.placeholder(tf.float32, name="p")
    gd = graph.as_graph_def()
    nodes = {n.name: n for n in gd.node}
    assert gd.versions.producer > 0
    assert set(nodes["mm"].attr) == {"T", "transpose_a", "transpose_b"}
    assert nodes["mm"].attr["transpose_a"].WhichOneof("value") == "b"  # written even when false
    assert nodes["p"].attr["shape"].shape.unknown_rank
    assert list(nodes["mm"].input) == ["zeros", "zeros_1"]


def test_typed_fields_follow_tensorflows_fill_rule():
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DT_FLOAT)
    proto.tensor_shape.dim.add().size = 5
    proto.float_val.extend([1, 2])
    np.testing.assert_array_equal(ndarray_from_proto(proto), [1, 2, 2, 2, 2])
    del proto.float_val[:]
    np.testing.assert_array_equal(ndarray_from_proto(proto), np.zeros(5))
    half = graph_pb2.TensorProto(dtype=graph_pb2.DT_HALF, half_val=[15360])  # fp16 1.0
    assert ndarray_from_proto(half) == np.float16(1.0)
    ints = graph_pb2.TensorProto(dtype=graph_pb2.DT_INT64, int64_val=[-1, 2, 3])
    ints.tensor_shape.dim.add().size = 2  # too many values are truncated
    np.testing.assert_array_equal(ndarray_from_proto(ints), [-1, 2])


def test_tensor_content_is_little_endian_row_major():
    array = np.array([[1, 2], [3, 256]], np.int32)
    proto = ndarray_to_proto(array)
    assert proto.tensor_content == array.astype("<i4").tobytes()
    np.testing.assert_array_equal(ndarray_from_proto(proto), array)
    proto.tensor_content = proto.tensor_content[:-1]
    with pytest.raises(ValueError, match="15 bytes"):
        ndarray_from_proto(proto)


def test_hostile_shapes_are_refused_without_allocating():
    proto = graph_pb2.TensorProto(dtype=graph_pb2.DT_FLOAT, float_val=[1])
    for _ in range(3):
        proto.tensor_shape.dim.add().size = 10**6
    with pytest.raises(ResourceExhaustedError, match=r"^tensor \[1000000,1000000,1000000\] float32 would take "
                                                     r"3\.5 EiB, over the limit of .* \(set GRAPHDEF_MAX_TENSOR_BYTES"):
        ndarray_from_proto(proto)


def _graph_def(text):
    from google.protobuf import text_format
    return text_format.Parse(text, graph_pb2.GraphDef())


def test_every_missing_op_type_is_listed_at_once():
    """Missing op types load; the run that needs them lists every one at once."""
    gd = _graph_def('node { name: "a" op: "FooBar" } node { name: "b" op: "Baz" } node { name: "c" op: "FooBar" }')
    graph = tf.Graph()
    import_graph_def(gd, graph=graph, name="")
    with tf.Session(graph=graph) as sess, pytest.raises(
            tf.errors.UnimplementedError, match=r"no kernel for FooBar \(a and 1 more\), Baz \(b\)$"):
        sess.run(["a", "b", "c"])


@pytest.mark.parametrize("text, message", [
    ('node { name: "y" op: "Identity" input: "zz" attr { key: "T" value { type: DT_FLOAT } } }',
     "node 'y' \\(Identity\\): input 'zz' names no node"),
    ('node { name: "c" op: "Const" attr { key: "dtype" value { i: 1 } } }',
     "node 'c' \\(Const\\): attr 'dtype' should hold a type but holds an int"),
    ('node { name: "a" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }'
     'node { name: "b" op: "Identity" input: "a" attr { key: "T" value { type: DT_FLOAT } } }',
     "cycle"),
    ('node { name: "a" op: "NoOp" } node { name: "a" op: "NoOp" }', "node 'a': the name is not unique"),
    ('node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }'
     'node { name: "y" op: "Identity" input: "p:3" attr { key: "T" value { type: DT_FLOAT } } }',
     r"asks for output 3 of node 'p' \(Placeholder\)"),
    ('node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }'
     'node { name: "y" op: "Identity" input: "p" attr { key: "T" value { type: DT_INT32 } } }',
     r"node 'y' \(Identity\): input 0 \('input'\) is float32 from 'p:0' but the node expects int32 \(attr T\)"),
])
def test_invalid_graphs_get_one_clear_line(text, message):
    with pytest.raises(GraphFileError, match=message) as err:
        import_graph_def(_graph_def(text), name="", graph=tf.Graph())
    assert "\n" not in str(err.value)


def test_bad_files_are_refused_with_one_line(tmp_path):
    import random
    cases = {"missing.pb": None, "empty.pb": b"", "noise.pb": random.Random(0).randbytes(4096),
             "garbage.pbtxt": b"node { name: "}
    for name, data in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(GraphFileError) as err:
            load(path)
        assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_truncated_files_never_load_silently(graph, tmp_path):
    _model()
    data = serialize(graph.as_graph_def())
    for cut in range(1, len(data), 7):
        path = tmp_path / "cut.pb"
        path.write_bytes(data[:cut])
        try:
            g = load(path)
        except GraphFileError:
            continue
        assert len(g.get_operations()) < len(graph.get_operations())  # a prefix of whole nodes


def test_import_prefixes_names_like_tensorflow(graph):
    _model()
    gd = graph.as_graph_def()
    target = tf.Graph()
    with target.as_default():
        import_graph_def(gd)
    assert target.get_operation_by_name("import/layer/Relu").type == "Relu"


def test_unknown_attrs_are_carried_through(tmp_path):
    gd = _graph_def('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                    'attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 2 } } } '
                    'attr { key: "_class" value { list { s: "loc:@c" } } } }')
    g = tf.Graph()
    import_graph_def(gd, name="", graph=g)
    again = g.as_graph_def()
    assert again.node[0].attr["_class"].list.s == [b"loc:@c"]


def test_saved_files_get_ordinary_permissions(graph, tmp_path):
    import os
    tf.constant(1.0, name="c")
    old = os.umask(0o022)
    try:
        save(graph, tmp_path / "m.pb")
    finally:
        os.umask(old)
    assert (tmp_path / "m.pb").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["m.pb"]  # no temporary file left behind


def test_tensorflow_made_files_reserialize_to_their_own_bytes():
    """TF's frozen graphs (tests/tf_models, written by TensorFlow) come back byte for byte."""
    import pathlib
    files = sorted((pathlib.Path(__file__).parents[1] / "tf_models").glob("*/model.pb"))
    assert files, "tests/tf_models holds TensorFlow-made models"
    for path in files:
        data = path.read_bytes()
        assert serialize(graph_pb2.GraphDef.FromString(data)) == data, path.parent.name


def test_small_integer_values_given_in_int_val_keep_their_low_bits_as_tensorflow_does():
    """uint8/int8/uint16/int16 values travel in int_val (int32); TensorFlow's C++ casts each to
    the dtype, keeping the low bits (a fuzz finding: 65536 for uint8 was a traceback)."""
    raw = [65536, 257, -1, 300, 40000]
    for dtype, expected in ((graph_pb2.DT_UINT8, [0, 1, 255, 44, 64]), (graph_pb2.DT_INT8, [0, 1, -1, 44, 64]),
                            (graph_pb2.DT_UINT16, [0, 257, 65535, 300, 40000]),
                            (graph_pb2.DT_INT16, [0, 257, -1, 300, 40000 - 65536])):
        proto = graph_pb2.TensorProto(dtype=dtype, int_val=raw)
        proto.tensor_shape.dim.add(size=len(raw))
        assert ndarray_from_proto(proto).tolist() == expected, graph_pb2.DataType.Name(dtype)
