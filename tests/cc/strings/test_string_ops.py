"""String ops graphrun-cc has a kernel for: the same values and error lines as graphrun, and TensorFlow's
values on graphs TensorFlow makes."""

import json

import numpy as np
import pytest

import graphdef as tf
from tests.cc.strings.helpers import both, run, same
from tests.support.graphrun_helpers import save_model
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture, taken by name

TEXTS = [b"", b"abc", "\u00e9t\u00e9 \U0001f600".encode(), b"\xff\xfe\x80", b"a\x00b", b"\xc3"]
NUMBERS = [b"0", b" 12 ", b"-7", b"+3", b"1e3", b".5", b"5.", b"-inf", b"NaN", b"Infinity", b"2147483647",
           b"-2147483648", b"1e400", b"16777217", b"0.1"]
INTEGERS = [b"0", b" 12 ", b"-7", b"+3", b"2147483647", b"-2147483648", b"\t9\n"]


def _model(tmp_path, make):
    return save_model(tmp_path / "m.pb", lambda: tf.identity(make(tf.placeholder(tf.string, None, name="x")), name="y"))


def _feed(tmp_path, values):
    np.save(tmp_path / "x.npy", np.array(values, dtype=object).astype("S") if values else np.array([], "S1"))
    return ["--feed", f"x=@{tmp_path / 'x.npy'}"]


@pytest.mark.parametrize("unit", ["BYTE", "UTF8_CHAR"])
def test_string_length(runner, tmp_path, unit):
    model = _model(tmp_path, lambda x: tf.strings.length(x, unit=unit))
    code, out, err = same(runner, model, *_feed(tmp_path, TEXTS), "--fetch", "y", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["outputs"][0]["dtype"] == "int32"


@pytest.mark.parametrize("out_type, values", [
    (tf.float32, NUMBERS), (tf.float64, NUMBERS), (tf.int32, INTEGERS),
    (tf.int64, INTEGERS + [b"-9223372036854775808"]),
    (tf.uint32, [b"4294967295", b"0"]), (tf.uint64, [b"18446744073709551615"]),
])
def test_string_to_number(runner, tmp_path, out_type, values):
    model = _model(tmp_path, lambda x: tf.strings.to_number(x, out_type=out_type))
    for flags in ([], ["--json"]):
        code, _, err = same(runner, model, *_feed(tmp_path, values), "--fetch", "y", *flags)
        assert (code, err) == (0, "")


@pytest.mark.parametrize("out_type, bad", [
    (tf.float32, b"1.2.3"), (tf.float32, b""), (tf.float32, b"0x10"), (tf.float32, b"1e"), (tf.float32, b"\xff\x1b[2J"),
    (tf.int32, b"2147483648"), (tf.int32, b"1.0"), (tf.uint32, b"-0"), (tf.int64, b"99999999999999999999"),
    (tf.uint64, b"18446744073709551616"), (tf.int32, b"- 1"),
])
def test_string_to_number_refusals(runner, tmp_path, out_type, bad):
    model = _model(tmp_path, lambda x: tf.strings.to_number(x, out_type=out_type))
    py, cc = both(runner, model, *_feed(tmp_path, [b"1", bad]), "--fetch", "y")
    # graphrun passes TensorFlow's words on as they are; graphrun-cc names the node first, as for any op
    assert py[:2] == cc[:2] == (4, b"") and cc[2] == "node 'StringToNumber' (StringToNumber): " + py[2]
    assert "could not correctly convert string" in cc[2]


@pytest.mark.tf_oracle
def test_matches_tensorflow(runner, tmp_path, tf_oracle):
    tfo = tf_oracle
    graph = tfo.Graph()
    with graph.as_default():
        x = tfo.compat.v1.placeholder(tfo.string, None, name="x")
        n = tfo.compat.v1.placeholder(tfo.string, None, name="n")
        tfo.identity(tfo.strings.length(x), name="bytes")
        tfo.identity(tfo.strings.length(x, unit="UTF8_CHAR"), name="chars")
        tfo.identity(tfo.strings.to_number(n), name="f32")
        tfo.identity(tfo.strings.to_number(n, tfo.float64), name="f64")
    (tmp_path / "tf.pb").write_bytes(graph.as_graph_def().SerializeToString())
    numbers = [v for v in NUMBERS if v != b"1e400"]
    with tfo.compat.v1.Session(graph=graph) as sess:
        want = sess.run(["bytes:0", "chars:0", "f32:0", "f64:0"], {"x:0": TEXTS, "n:0": numbers})
    np.save(tmp_path / "x.npy", np.array(TEXTS, dtype=object).astype("S"))
    np.save(tmp_path / "n.npy", np.array(numbers, dtype="S"))
    code, out, err = run([str(runner)], "run", tmp_path / "tf.pb", "--feed", f"x=@{tmp_path / 'x.npy'}",
                         "--feed", f"n=@{tmp_path / 'n.npy'}", "--fetch", "bytes", "--fetch", "chars", "--fetch", "f32",
                         "--fetch", "f64", "--json")
    assert (code, err) == (0, ""), err
    got = json.loads(out)["outputs"]
    for expected, o in zip(want, got):
        values = [float(v) if isinstance(v, str) else v for v in o["values"]]
        np.testing.assert_array_equal(np.array(values, dtype=expected.dtype), expected)


@pytest.mark.parametrize("unit", ["BYTE", "UTF8_CHAR"])
@pytest.mark.parametrize("pos, length", [
    (0, 2), (1, 100), (-2, 1), (0, -1), (2, 0), ([[0], [1]], [[1], [2]]), ([0, 1, 2, 0, 1, 0], [1, 1, 1, 9, 9, 9]),
])
def test_substr(runner, tmp_path, unit, pos, length):
    words = [b"abc", "\u00e9t\u00e9".encode(), b"\xff\xfe\x80", b"a\x00b", "\U0001f600x".encode(), b"xyz"]
    model = _model(tmp_path, lambda x: tf.strings.substr(x, np.int32(pos), np.int32(length), unit=unit))
    code, out, err = same(runner, model, *_feed(tmp_path, words), "--fetch", "y", "--json")
    assert (code, err) == (0, "")


@pytest.mark.parametrize("unit, pos, length, words", [
    ("BYTE", 4, 1, [b"abc"]), ("BYTE", -4, 1, [b"a\x1b[2J\xff"[:3]]), ("UTF8_CHAR", 4, 1, [b"abc"]),
    ("UTF8_CHAR", -1, -1, [b"abc"]), ("BYTE", [0, 1], [0], [b"abc"]), ("BYTE", [0, 1, 2], [0, 1, 2], [b"a", b"b"]),
])
def test_substr_refusals(runner, tmp_path, unit, pos, length, words):
    model = _model(tmp_path, lambda x: tf.strings.substr(tf.reshape(x, [-1]), tf.placeholder(tf.int32, None, "p"),
                                                         tf.placeholder(tf.int32, None, "n"), unit=unit))
    feeds = [*_feed(tmp_path, words), "--feed", f"p={json.dumps(pos)}", "--feed", f"n={json.dumps(length)}"]
    py, cc = both(runner, model, *feeds, "--fetch", "y")
    assert py[:2] == cc[:2] == (4, b"") and cc[2].startswith("node 'Substr' (Substr): ") and cc[2].endswith(py[2])
