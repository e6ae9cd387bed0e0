"""GraphDefs written as protobuf text, for the hostile-input tests (tests/hostile/test_py*.py): a test
reads like the file it feeds the runtime."""

import pytest
from google.protobuf import text_format

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.wire.serialize import GraphFileError, load
from tests.support.graphrun_helpers import fails

TB = r"\d+\.\d TiB"  # what a terabyte-scale refusal prints
LIMIT_WORDS = "(set GRAPHDEF_MAX_TENSOR_BYTES to change it)"


def write_pbtxt(tmp_path, text, name="model.pb"):
    """A binary .pb made from GraphDef text (so the tests read like the file)."""
    graph_def = text_format.Parse(text, graph_pb2.GraphDef())
    path = tmp_path / name
    path.write_bytes(graph_def.SerializeToString())
    return path


def const(name, dtype="DT_INT32", shape=(), values=(), field="int_val"):
    dims = " ".join(f"dim {{ size: {d} }}" for d in shape)
    vals = " ".join(f"{field}: {v}" for v in values)
    return (f'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: {dtype} tensor_shape {{ {dims} }} {vals} }} }} }} }}')


def node(name, op, inputs=(), **attrs):
    ins = " ".join(f'input: "{i}"' for i in inputs)
    body = " ".join(f'attr {{ key: "{k}" value {{ {v} }} }}' for k, v in attrs.items())
    return f'node {{ name: "{name}" op: "{op}" {ins} {body} }}'


def run_file(path, fetch, feeds=None):
    graph = load(path)
    with tf.Session(graph=graph) as sess:
        return sess.run(fetch, feeds)


def one_line(message):
    assert "\n" not in str(message) and "Traceback" not in str(message)
    return str(message)


def load_fails(tmp_path, capsys, text, *mentions):
    """The file `text` describes is refused in one line by tf.load and by graphrun (exit 3)."""
    path = write_pbtxt(tmp_path, text)
    with pytest.raises(GraphFileError) as e:
        load(path)
    message = one_line(e.value)
    for m in mentions:
        assert m in message, (m, message)
    fails(capsys, 3, path, mentions=mentions)
