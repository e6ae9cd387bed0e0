"""String constants, feeds and fetches: graphrun-cc prints, saves and refuses exactly as graphrun does.

Graphs come from graphdef's builders; graphrun (the Python runtime, run as a separate process) is the
oracle for every byte of output and every error line, and numpy reads back what --out saved.
"""

import base64
import json

import numpy as np
import pytest

import graphdef as tf
from tests.cc.strings.helpers import GRAPHRUN, run, same
from tests.support.graphrun_helpers import save_model

HOSTILE = [b"", b"plain", "\u00e9t\u00e9 \u2603 \U0001f600".encode(), b"tab\there\nline\r", b"a\x00b",
           b"\x1b[2J\x1b]0;title\x07", b"\xff\xfe not utf-8", b"\xc2\x85 C1 \xe2\x80\xa8 LS", b'quote" back\\',
           b"\xed\xa0\x80 surrogate", b"\xc0\xaf overlong", b"\xf4\x90\x80\x80 past U+10FFFF", b"\x7f del", b"x\x00"]


@pytest.fixture
def identity_model(tmp_path):
    def build():
        words = tf.constant(np.array(HOSTILE, dtype=object).reshape(2, 7), dtype=tf.string, name="words")
        tf.identity(words, name="out")
        x = tf.placeholder(tf.string, [None], name="x")
        tf.identity(x, name="fed")
    return save_model(tmp_path / "strings.pb", build)


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_hostile_constants_print_as_graphrun_prints_them(runner, identity_model, flags):
    code, out, err = same(runner, identity_model, "--fetch", "out", *flags)
    assert code == 0 and err == ""
    if flags:  # decoded independently: UTF-8 text as JSON strings, the rest as base64
        values = json.loads(out)["outputs"][0]["values"]
        flat = [base64.b64decode(v["b64"]) if isinstance(v, dict) else v.encode() for row in values for v in row]
        assert flat == HOSTILE
    else:
        assert b"\x1b" not in out and b"\x00" not in out and out.count(b"\n") == 1


@pytest.mark.parametrize("feed", [
    '["a", "", "\\u00e9", "\\u0000", "\\u001b[2J"]', "[]", '[{"b64": "/w=="}, "text"]', '[{"b64": ""}]',
    '[{"b64": "YWJj="}]',
])
def test_json_feeds(runner, identity_model, feed):
    for flags in ([], ["--json"]):
        code, _, err = same(runner, identity_model, "--feed", f"x={feed}", "--fetch", "fed", *flags)
        assert code == 0 and err == ""


@pytest.mark.parametrize("feed", [
    "[1, 2]", "[true]", '["a", 1]', '[{"b64": "!!"}]', '[{"b64": "YQ"}]', '[{"b64": "YWJjZ"}]', '[{"x": "a"}]',
    '[["a"], "b"]', '"scalar"',
])
def test_json_feed_refusals(runner, identity_model, feed):
    code, out, err = same(runner, identity_model, "--feed", f"x={feed}", "--fetch", "fed")
    assert code != 0 and out == b"" and err.startswith("--feed x: ")


def test_strings_fed_to_a_number_placeholder_are_refused(runner, tmp_path):
    model = save_model(tmp_path / "f.pb", lambda: tf.identity(tf.placeholder(tf.float32, [None], name="x"), name="y"))
    np.save(tmp_path / "s.npy", np.array([b"a"]))
    for feed in ['["a"]', f"@{tmp_path / 's.npy'}"]:
        code, _, err = same(runner, model, "--feed", f"x={feed}", "--fetch", "y")
        assert code == 2 and "cannot be fed" in err


@pytest.mark.parametrize("array", [
    np.array([b"a", b"", b"\xff\x00\x1b"]), np.array([["\u00e9t\u00e9", ""], ["\U0001f600", "x"]]),
    np.array([], dtype="S3"), np.array(["abc"], dtype=">U3"),
])
def test_npy_feeds(runner, identity_model, tmp_path, array):
    model = save_model(tmp_path / "any.pb", lambda: tf.identity(tf.placeholder(tf.string, None, name="x"), name="y"))
    np.save(tmp_path / "x.npy", array)
    for flags in ([], ["--json"]):
        code, _, err = same(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "y", *flags)
        assert code == 0 and err == ""


def test_npz_feeds(runner, tmp_path):
    model = save_model(tmp_path / "any.pb", lambda: tf.identity(tf.placeholder(tf.string, None, name="x"), name="y"))
    np.savez(tmp_path / "f.npz", x=np.array([b"p", b"q\xff"]))
    code, _, err = same(runner, model, "--feeds", tmp_path / "f.npz", "--fetch", "y", "--json")
    assert code == 0 and err == ""


def test_out_saves_fixed_width_bytes(runner, identity_model, tmp_path):
    feed = '["abc", "", {"b64": "/w=="}]'
    for command, out_dir in ((GRAPHRUN, "py"), ([str(runner)], "cc")):
        args = ("run", identity_model, "--feed", f"x={feed}", "--fetch", "fed", "--out", tmp_path / out_dir)
        assert run(command, *args)[0] == 0
    py = (tmp_path / "py" / "fed_0.npy").read_bytes()
    cc = (tmp_path / "cc" / "fed_0.npy").read_bytes()
    assert cc == py
    assert np.load(tmp_path / "cc" / "fed_0.npy").tolist() == [b"abc", b"", b"\xff"]


def test_out_refuses_a_string_ending_in_nul(runner, identity_model, tmp_path):
    code, out, err = same(runner, identity_model, "--feed", 'x=["a\\u0000"]', "--fetch", "fed", "--out", tmp_path / "o")
    assert code != 0 and "ending in NUL" in err


def test_a_1mb_string_and_an_empty_one(runner, tmp_path):
    big = b"\xff" + b"a\x00\x1b" * (1 << 18)
    np.save(tmp_path / "big.npy", np.array([big, b""]))
    model = save_model(tmp_path / "any.pb", lambda: tf.identity(tf.placeholder(tf.string, [2], name="x"), name="y"))
    for flags in ([], ["--json"]):
        code, out, err = same(runner, model, "--feed", f"x=@{tmp_path / 'big.npy'}", "--fetch", "y", *flags)
        assert code == 0 and len(out) > len(big)
