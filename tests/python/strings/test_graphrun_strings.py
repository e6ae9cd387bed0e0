"""graphrun with string tensors: --feed as JSON strings and .npy of 'S' or 'U' arrays, the text line and
--json (UTF-8 text, or {"b64": ...} for other bytes, as TensorFlow Serving's REST API), --out as 'S' .npy."""

import base64
import json

import numpy as np
import pytest

import graphdef as tf
from tests.support.graphrun_helpers import fails, ok, save_model


@pytest.fixture
def model(tmp_path):
    def build():
        x = tf.placeholder(tf.string, [None], name="x")
        tf.concat([x, tf.constant(["k"])], 0, name="joined")
        tf.equal(x, "a", name="is_a")
        tf.placeholder(tf.float32, [1], name="f")
    return save_model(tmp_path / "strings.pb", build)


def test_a_json_feed_of_strings(capsys, model):
    out = ok(capsys, model, "--feed", 'x=["a", "\u00e9", ""]', "--fetch", "joined", "--fetch", "is_a")
    assert out == 'joined:0 string [4] = ["a", "\u00e9", "", "k"]\nis_a:0 bool [3] = [true, false, false]\n'


def test_text_output_escapes_quotes_backslashes_controls_and_bytes_that_are_not_utf8(capsys, model, tmp_path):
    np.save(tmp_path / "x.npy", np.array([b'q"\\', b"\x1b[2J\x07", b"\xff\xfeok", b"mid\x00nul"]))
    out = ok(capsys, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "joined")
    assert out == ('joined:0 string [5] = ["q\\"\\\\", "\\x1b[2J\\x07", "\\xff\\xfeok", "mid\\x00nul", "k"]\n')
    assert "\x1b" not in out and "\x07" not in out


def test_json_output_is_utf8_text_or_b64(capsys, model, tmp_path):
    raw = [b"\x00\xff", "\u00e9\u2028".encode(), b"\x1b[31m", b"\x85"]
    np.save(tmp_path / "x.npy", np.array(raw, dtype="S"))
    out = ok(capsys, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "joined", "--json")
    assert "\x1b" not in out and "\u2028" not in out
    (entry,) = json.loads(out)["outputs"]
    assert entry["dtype"] == "string" and entry["shape"] == [5]
    assert entry["values"] == [{"b64": base64.b64encode(b"\x00\xff").decode()}, "\u00e9\u2028", "\x1b[31m",
                               {"b64": "hQ=="}, "k"]


def test_a_unicode_npy_feeds_utf8(capsys, model, tmp_path):
    np.save(tmp_path / "u.npy", np.array(["\u00e9", "z"]))
    assert ok(capsys, model, "--feed", f"x=@{tmp_path / 'u.npy'}", "--fetch", "joined") == \
        'joined:0 string [3] = ["\u00e9", "z", "k"]\n'


def test_out_writes_string_fetches_as_fixed_width_bytes(capsys, model, tmp_path):
    ok(capsys, model, "--feed", 'x=["abc", ""]', "--fetch", "joined", "--out", tmp_path / "out")
    saved = np.load(tmp_path / "out" / "joined_0.npy", allow_pickle=False)
    assert saved.dtype == np.dtype("S3") and saved.tolist() == [b"abc", b"", b"k"]


@pytest.mark.parametrize("feed, words", [
    ("x=[1, 2]", "placeholder 'x' (string) takes strings, not numbers"),
    ("x=[true]", "takes strings, not true/false"),
    ('x=["a", 1]', "not a number, true/false, a string, or a rectangular nested array of one kind of them"),
    ('x=[["a"], ["b", "c"]]', "the nested arrays are not rectangular"),
    ('x=["\\udcff"]', "lone surrogate"),
    ('x=[["a"]]', "shape [1,1] does not fit placeholder 'x' (string)"),
    ('f=["a"]', "placeholder 'f' (float32) cannot be fed strings"),
])
def test_a_bad_string_feed_is_one_line(capsys, model, feed, words):
    fetch = "f" if feed.startswith("f") else "joined"
    fails(capsys, 2, model, "--feed", feed, "--fetch", fetch, mentions=[words])


def test_an_npy_of_strings_for_a_number_placeholder_names_the_file(capsys, model, tmp_path):
    np.save(tmp_path / "s.npy", np.array(["a"]))
    fails(capsys, 2, model, "--feed", f"f=@{tmp_path / 's.npy'}", "--fetch", "f", mentions=["s.npy", "<U1"])


def test_an_npy_of_objects_is_never_unpickled(capsys, model, tmp_path):
    np.save(tmp_path / "o.npy", np.array(["a", b"b"], dtype=object), allow_pickle=True)
    fails(capsys, 2, model, "--feed", f"x=@{tmp_path / 'o.npy'}", "--fetch", "joined",
          mentions=["holds Python objects", "is ever unpickled"])


def test_json_output_feeds_back_as_the_same_bytes(capsys, model, tmp_path):
    raw = [b"\x00\xff", "\u00e9".encode(), b"\x1b[2J", b""]
    np.save(tmp_path / "x.npy", np.array(raw, dtype="S"))
    first = json.loads(ok(capsys, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "joined", "--json"))
    values = first["outputs"][0]["values"][:-1]  # without the graph's own "k"
    assert {"b64": "AP8="} in values
    again = json.loads(ok(capsys, model, "--feed", "x=" + json.dumps(values), "--fetch", "joined", "--json"))
    assert again["outputs"][0]["values"] == first["outputs"][0]["values"]


@pytest.mark.parametrize("feed, words", [
    ('x=[{"b64": "/wA"}]', "'/wA' is not base64"),
    ('x=[{"b64": "AP8=", "x": 1}]', 'a JSON object in a feed must be {"b64": "<base64>"} (bytes)'),
    ('x=[{"b64": 5}]', 'a JSON object in a feed must be {"b64": "<base64>"}'),
    ('x=[{"b64": "AP8="}, 1]', "not a number, true/false, a string"),
    ("x=" + "[" * 5000 + "]" * 5000, "x:"),
])
def test_a_bad_b64_feed_is_one_line(capsys, model, feed, words):
    fails(capsys, 2, model, "--feed", feed, "--fetch", "joined", mentions=[words])
