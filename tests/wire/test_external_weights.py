"""Const weights in a weights file beside the model (graphdef.wire.external_weights): written by
graphdef's serializer and `graphrun convert`, memory-mapped by graphdef, graphrun and graphrun-cc,
with the answers of the same graph written inline, and of TensorFlow on the inlined graph.
Damaged, missing or hostile weights files are one clear error line in every reader."""

import json
import mmap
import os
import struct

import google_crc32c
import numpy as np
import pytest

import graphdef as tf
from graphdef._proto import graph_pb2
from graphdef.wire import external_weights, serialize
from tests.support import cc_helpers
from tests.conformance.replay import from_json_output
from tests.support.graphrun_helpers import run_graphrun
from tests.support.numerics_policy import assert_conforms, assert_same

RNG = np.random.default_rng(13)
W = RNG.standard_normal((16, 32)).astype(np.float32)
B = RNG.standard_normal(32).astype(np.float32)
TABLE = RNG.standard_normal((100, 8)).astype(np.float64)
OFFSETS = RNG.integers(-1000, 1000, 64).astype(np.int64)
MASK = RNG.integers(0, 2, 64).astype(bool)
SMALL = np.array([1.5, -2.0], np.float32)
X = RNG.standard_normal((3, 16)).astype(np.float32)
IDS = np.array([4, 99, 0, 4], np.int32)
K = np.arange(64, dtype=np.int64)
FETCHES = ["y", "rows", "shifted", "masked"]
BIG_CONSTS = {"w": W, "b": B, "table": TABLE, "offsets": OFFSETS, "mask": MASK}


def _build():
    x = tf.placeholder(tf.float32, [None, 16], name="x")
    ids = tf.placeholder(tf.int32, [None], name="ids")
    k = tf.placeholder(tf.int64, [64], name="k")
    w = tf.constant(W, name="w")
    b = tf.constant(B, name="b")
    tf.nn.relu(tf.matmul(x, w) + b + tf.reduce_sum(tf.constant(SMALL, name="small")), name="y")
    tf.gather(tf.constant(TABLE, name="table"), ids, name="rows")
    tf.add(k, tf.constant(OFFSETS, name="offsets"), name="shifted")
    tf.where(tf.constant(MASK, name="mask"), k, -k, name="masked")


def _save(path, **options):
    g = tf.Graph()
    with g.as_default():
        _build()
    serialize.save(g, path, **options)
    return path


def _expected():
    """numpy, float64 where the graph computes in float32."""
    y = np.maximum(X.astype(np.float64) @ W + B + SMALL.sum(), 0)
    return {"y": y, "rows": TABLE[IDS], "shifted": K + OFFSETS, "masked": np.where(MASK, K, -K)}


def _feed():
    return {"x:0": X, "ids:0": IDS, "k:0": K}


def _run_python(path):
    graph = tf.load(str(path))
    with tf.Session(graph=graph) as sess:
        return dict(zip(FETCHES, sess.run([f + ":0" for f in FETCHES], _feed())))


def _cc_args():
    return [arg for name, value in (("x", X), ("ids", IDS), ("k", K))
            for arg in ("--feed", f"{name}={json.dumps(value.tolist())}")] + \
        [arg for f in FETCHES for arg in ("--fetch", f)]


@pytest.fixture
def models(tmp_path):
    inline = _save(tmp_path / "inline.pb")
    external = _save(tmp_path / "model.pb", external_weights=True, external_threshold=64)
    return inline, external


def test_the_weights_file_holds_each_value_aligned_with_its_crc32c(models):
    _, external = models
    graph_def = graph_pb2.GraphDef.FromString(external.read_bytes())
    data = (external.parent / "model.weights").read_bytes()
    magic, version, alignment, size, tag = struct.unpack_from("<8sIIQ16s", data, 0)
    assert (magic, version, alignment, size) == (b"GDWEIGHT", 1, 64, len(data))
    nodes = {n.name: n for n in graph_def.node}
    for name, array in BIG_CONSTS.items():
        node = nodes[name]
        assert node.op == "Const" and not node.attr["value"].tensor.tensor_content
        assert [d.size for d in node.attr["value"].tensor.tensor_shape.dim] == list(array.shape)
        location, tag_hex = (s.decode() for s in node.attr["_external_value"].list.s)
        offset, length, crc = node.attr["_external_value"].list.i
        assert (location, tag_hex) == ("model.weights", tag.hex())
        assert offset % 64 == 0 and length == array.nbytes
        assert data[offset:offset + length] == array.astype(array.dtype.newbyteorder("<")).tobytes()
        assert crc == google_crc32c.value(array.tobytes())
    # under the threshold, inside the graph as before
    assert "_external_value" not in nodes["small"].attr
    assert nodes["small"].attr["value"].tensor.tensor_content == SMALL.tobytes()


def test_python_runs_the_external_model_as_the_inline_one(models):
    inline, external = models
    got, want = _run_python(external), _run_python(inline)
    for name in FETCHES:
        assert_same(got[name], want[name])
    expected = _expected()
    assert_conforms(got["y"], expected["y"].astype(np.float32), inline, "y")
    for name in ("rows", "shifted", "masked"):
        assert_same(got[name], expected[name])


def test_mapped_constants_are_read_only_and_shared(models):
    _, external = models
    graph = serialize.load(external)
    w = graph.get_operation_by_name("w").attrs["value"]
    assert not w.flags.writeable
    memory = w
    while isinstance(memory, np.ndarray):
        memory = memory.base
    assert isinstance(memory, memoryview) and isinstance(memory.obj, mmap.mmap)  # the mapping, not a copy
    with tf.Session(graph=graph) as sess:
        first = sess.run("y:0", _feed())
        second = sess.run("y:0", _feed())
    assert_same(first, second)
    assert_same(np.asarray(w), W)


def test_graphrun_and_graphrun_cc_agree_on_external_and_inline(models, cc_runner):
    inline, external = models
    cc_external = {k.split(":")[0]: v for k, v in cc_helpers.outputs(cc_runner, external, *_cc_args()).items()}
    cc_inline = {k.split(":")[0]: v for k, v in cc_helpers.outputs(cc_runner, inline, *_cc_args()).items()}
    python = _run_python(external)
    for name in FETCHES:
        assert_same(cc_external[name], cc_inline[name])
        assert_conforms(cc_external[name], python[name], inline, name)
    code, out, err = run_graphrun(external, "--feed", f"ids={json.dumps(IDS.tolist())}", "--fetch", "rows",
                                  "--json")
    assert (code, err) == (0, "")
    (output,) = json.loads(out)["outputs"]
    assert_same(from_json_output(output)[1], TABLE[IDS])


@pytest.mark.tf_oracle
def test_convert_inline_weights_restores_the_inline_file_and_tensorflow_agrees(models, tmp_path):
    inline, external = models
    back = tmp_path / "back.pb"
    code, _, err = run_graphrun("convert", external, "-o", back, "--inline-weights")
    assert (code, err) == (0, "")
    assert back.read_bytes() == inline.read_bytes()
    assert not (tmp_path / "back.weights").exists()
    real_tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")
    graph_def = real_tf.compat.v1.GraphDef.FromString(back.read_bytes())
    with real_tf.Graph().as_default() as g:
        real_tf.compat.v1.import_graph_def(graph_def, name="")
        with real_tf.compat.v1.Session(graph=g) as sess:
            want = dict(zip(FETCHES, sess.run([f + ":0" for f in FETCHES], _feed())))
    got = _run_python(external)
    for name in FETCHES:
        assert_conforms(got[name], want[name], inline, name)


@pytest.mark.tf_oracle
def test_tensorflow_imports_the_external_file_with_zero_constants(models):
    """What README promises: TF ignores `_` attrs, so the external Consts are zeros there."""
    _, external = models
    real_tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed; `make test` installs it")
    graph_def = real_tf.compat.v1.GraphDef.FromString(external.read_bytes())
    with real_tf.Graph().as_default() as g:
        real_tf.compat.v1.import_graph_def(graph_def, name="")
        with real_tf.compat.v1.Session(graph=g) as sess:
            rows = sess.run("rows:0", {"ids:0": IDS})
    assert_same(rows, np.zeros((4, 8)))


def test_convert_external_weights_and_threshold(models, tmp_path):
    inline, _ = models
    out = tmp_path / "conv" / "net.pbtxt"
    code, _, err = run_graphrun("convert", inline, "-o", out, "--external-weights", "--threshold", "1000")
    assert (code, err) == (0, "")
    graph_def = serialize.read_graph_def(out)
    outside = sorted(n.name for n in graph_def.node if "_external_value" in n.attr)
    assert outside == sorted(n for n, a in BIG_CONSTS.items() if a.nbytes >= 1000)
    assert (tmp_path / "conv" / "net.weights").exists()
    got = _run_python(out)
    for name, value in _run_python(inline).items():
        assert_same(got[name], value)
    code, _, err = run_graphrun("convert", inline, "-o", out, "--external-weights", "--threshold", "8")
    assert code == 2 and "--threshold" in err and err.count("\n") == 1


def test_automatic_only_over_the_limit(tmp_path, monkeypatch):
    small = _save(tmp_path / "auto.pb")
    assert not (tmp_path / "auto.weights").exists()
    monkeypatch.setattr(serialize, "PROTOBUF_LIMIT", 4000)
    big = _save(tmp_path / "big.pb")
    assert (tmp_path / "big.weights").exists()
    assert serialize.read_graph_def(big).node[3].name == "w"
    with pytest.raises(ValueError, match="external_weights=True, or graphrun convert --external-weights"):
        _save(tmp_path / "refused.pb", external_weights=False)
    assert not (tmp_path / "refused.pb").exists()
    monkeypatch.undo()
    got, want = _run_python(big), _run_python(small)
    for name in FETCHES:
        assert_same(got[name], want[name])


def test_rewriting_a_mapped_model_in_place(models, tmp_path):
    _, external = models
    graph = serialize.load(external)
    serialize.save(graph, external, external_weights=True, external_threshold=64)
    assert sorted(os.listdir(tmp_path)) == ["inline.pb", "model.pb", "model.weights"]  # no temporary left
    got = _run_python(external)
    assert_same(got["rows"], TABLE[IDS])


# -- damaged and hostile files ------------------------------------------------------------

def _edit_reference(path, name, **fields):
    graph_def = graph_pb2.GraphDef.FromString(path.read_bytes())
    node = next(n for n in graph_def.node if n.name == name)
    ref = node.attr["_external_value"].list
    if "location" in fields:
        ref.s[0] = fields["location"].encode()
    for i, key in enumerate(("offset", "length", "crc")):
        if key in fields:
            ref.i[i] = fields[key]
    if "shape" in fields:
        del node.attr["value"].tensor.tensor_shape.dim[:]
        for d in fields["shape"]:
            node.attr["value"].tensor.tensor_shape.dim.add().size = d
    path.write_bytes(graph_def.SerializeToString())


def _damage(external, how):
    weights = external.parent / "model.weights"
    if how == "missing":
        weights.unlink()
        return "does not exist", {}
    if how == "truncated":
        weights.write_bytes(weights.read_bytes()[:-64])
        return "truncated", {}
    if how == "empty":
        weights.write_bytes(b"")
        return "shorter than its 64-byte header", {}
    if how == "not-weights":
        weights.write_bytes(b"\0" * 4096)
        return "not a graphdef weights file", {}
    if how == "other-write":
        data = bytearray(weights.read_bytes())
        data[24] ^= 0xFF
        weights.write_bytes(bytes(data))
        return "another write", {}
    if how == "corrupt":
        data = bytearray(weights.read_bytes())
        data[-8] ^= 0x01
        weights.write_bytes(bytes(data))
        return "crc32c", {"GRAPHDEF_VERIFY_WEIGHTS": "1"}
    if how == "past-end":
        _edit_reference(external, "table", offset=1 << 40)
        return "past the end", {}
    if how == "wrong-length":
        _edit_reference(external, "table", shape=[100, 9])
        return "needs 7200", {}
    if how == "directory-part":
        _edit_reference(external, "table", location="../model.weights")
        return "plain file name", {}
    if how == "bad-offset":
        _edit_reference(external, "table", offset=65)
        return "multiples of 64", {}
    raise AssertionError(how)


DAMAGES = ["missing", "truncated", "empty", "not-weights", "other-write", "corrupt", "past-end", "wrong-length",
           "directory-part", "bad-offset"]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_weights_are_one_error_line_in_graphrun(models, how, monkeypatch):
    _, external = models
    words, env = _damage(external, how)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, out, err = run_graphrun(external, *[a for a in _cc_args() if a])
    assert code == 3 and out == "" and err.count("\n") == 1, err
    assert words in err and str(external) in err, err


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_weights_are_one_error_line_in_graphrun_cc(models, how, cc_runner):
    _, external = models
    words, env = _damage(external, how)
    code, out, err = cc_helpers.run_cc(cc_runner, external, *_cc_args(), env=env)
    assert code == 3 and out == "" and err.count("\n") == 1, err
    assert err.startswith("graphrun-cc: ") and words in err and "node '" in err, err


def test_corruption_is_caught_when_the_weights_are_copied(models, tmp_path):
    _, external = models
    _damage(external, "corrupt")
    code, _, err = run_graphrun("convert", external, "-o", tmp_path / "copy.pb", "--inline-weights")
    assert code == 3 and "crc32c" in err and err.count("\n") == 1, err
    assert not (tmp_path / "copy.pb").exists()


def test_a_graph_def_read_by_hand_names_the_way_to_load_it(models):
    _, external = models
    graph_def = graph_pb2.GraphDef.FromString(external.read_bytes())
    with tf.Graph().as_default(), pytest.raises(serialize.GraphFileError, match="graphrun convert --inline-weights"):
        tf.import_graph_def(graph_def, name="")


def test_a_stub_decoded_without_its_weights_file_fails_loudly(models):
    """Code that reads a bound GraphDef's TensorProto directly never sees made-up zeros."""
    _, external = models
    node = next(n for n in serialize.read_graph_def(external).node if n.name == "w")
    assert node.attr["value"].tensor.tensor_content == external_weights.STUB
    with pytest.raises(ValueError, match="tensor_content holds 23 bytes"):
        serialize.ndarray_from_proto(node.attr["value"].tensor)


def test_writing_twice_gives_the_same_bytes(models, tmp_path):
    _, external = models
    again = _save(tmp_path / "again" / "model.pb", external_weights=True, external_threshold=64)
    assert again.read_bytes() == external.read_bytes()
    assert (again.parent / "model.weights").read_bytes() == (external.parent / "model.weights").read_bytes()


def test_graphrun_cc_never_writes_into_mapped_weights(tmp_path, cc_runner):
    """The mapping is read-only: an in-place kernel writing into it would kill the runner, and
    the value fetched beside the computed ones must come back unchanged."""
    g = tf.Graph()
    with g.as_default():
        w = tf.constant(W, name="w")
        tf.nn.relu(tf.negative(w, name="neg"), name="r")
        tf.nn.relu(tf.add(w, w), name="doubled")
        tf.reshape(w, [32, 16], name="reshaped")
    model = serialize.save(g, tmp_path / "inplace.pb", external_weights=True, external_threshold=64)
    got = cc_helpers.outputs(cc_runner, model, "--fetch", "r", "--fetch", "doubled", "--fetch", "w",
                             "--fetch", "reshaped")
    assert_same(got["w:0"], W)
    assert_same(got["r:0"], np.maximum(-W, 0))
    assert_same(got["doubled:0"], np.maximum(W + W, 0))
    assert_same(got["reshaped:0"], W.reshape(32, 16))


def test_bool_bytes_other_than_0_and_1_read_as_true(models, cc_runner):
    _, external = models
    graph_def = graph_pb2.GraphDef.FromString(external.read_bytes())
    node = next(n for n in graph_def.node if n.name == "mask")
    offset, length, _ = node.attr["_external_value"].list.i
    weights = external.parent / "model.weights"
    data = bytearray(weights.read_bytes())
    data[offset:offset + length] = bytes(7 if m else 0 for m in MASK)
    weights.write_bytes(bytes(data))
    assert_same(_run_python(external)["masked"], np.where(MASK, K, -K))
    assert_same(cc_helpers.outputs(cc_runner, external, *_cc_args())["masked:0"], np.where(MASK, K, -K))


@pytest.mark.slow
def test_compare_runs_both_runtimes_on_external_weights_and_refuses_tensorflow(models, cc_runner):
    _, external = models
    feeds = ["--feed", f"ids={json.dumps(IDS.tolist())}", "--fetch", "rows"]
    code, out, err = run_graphrun("compare", external, *feeds)  # python and cc, in process
    assert (code, err) == (0, ""), err
    code, out, err = run_graphrun("compare", external, "--engines", "python,tensorflow", *feeds)
    assert code != 0 and "--inline-weights" in out + err, (out, err)
