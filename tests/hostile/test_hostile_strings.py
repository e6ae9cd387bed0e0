"""Hostile strings in graphrun: empty, 10 and 100 MB, not UTF-8, NUL bytes, terminal escape sequences; each
gives the right answer or one clean line, in graphrun and graphrun-cc alike. The C API carries no
strings yet: the Session's cc engine refuses them in one line naming the node."""

import subprocess
import sys

import numpy as np
import pytest

import graphdef as tf
from tests.support.graphrun_helpers import fails, ok, save_model

GRAPHRUN = [sys.executable, "-c", "import sys; from graphdef.graphrun.cli import main; sys.exit(main(sys.argv[1:]))"]
MB = 1 << 20


def _const(strings_text):
    return ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_STRING } } '
            f'attr {{ key: "value" value {{ tensor {{ dtype: DT_STRING {strings_text} }} }} }} }}')


@pytest.fixture
def model(tmp_path):
    def build():
        x = tf.placeholder(tf.string, [None], name="x")
        tf.concat([x, tf.constant(["k"])], 0, name="joined")
        tf.equal(x, tf.constant("a" * 3), name="is_aaa")
    return save_model(tmp_path / "strings.pb", build)


def test_a_10mb_string_constant_runs_in_graphrun_and_graphrun_cc(tmp_path, cc_runner):
    path = tmp_path / "big.pbtxt"
    path.write_text(_const(f'tensor_shape {{}} string_val: "{"a" * 10_000_000}"'))
    proc = subprocess.run(GRAPHRUN + ["run", str(path), "--fetch", "c"], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == 'c:0 string [] = "' + "a" * 10_000_000 + '"\n'
    cc = subprocess.run([str(cc_runner), "run", str(path), "--fetch", "c"], capture_output=True, text=True, timeout=120)
    assert (cc.returncode, cc.stderr) == (0, "") and cc.stdout == proc.stdout


def test_a_100mb_string_feed_gives_the_right_answer(capsys, model, tmp_path):
    big = b"\xff" + b"a\x00\x1b" * (100 * MB // 3)
    np.save(tmp_path / "big.npy", np.array([big, b"aaa"]))
    assert ok(capsys, model, "--feed", f"x=@{tmp_path / 'big.npy'}", "--fetch", "is_aaa") == \
        "is_aaa:0 bool [2] = [false, true]\n"
    ok(capsys, model, "--feed", f"x=@{tmp_path / 'big.npy'}", "--fetch", "joined", "--out", tmp_path / "out")
    saved = np.load(tmp_path / "out" / "joined_0.npy", allow_pickle=False)
    assert saved.shape == (3,) and saved[0] == big and saved[1:].tolist() == [b"aaa", b"k"]


def test_empty_strings_and_empty_tensors(capsys, model):
    assert ok(capsys, model, "--feed", 'x=["", ""]', "--fetch", "joined") == 'joined:0 string [3] = ["", "", "k"]\n'
    assert ok(capsys, model, "--feed", "x=[]", "--fetch", "joined", "--fetch", "is_aaa") == \
        'joined:0 string [1] = ["k"]\nis_aaa:0 bool [0] = []\n'


def test_bytes_not_utf8_nul_and_escape_sequences_in_a_file_are_printed_escaped(capsys, tmp_path):
    path = tmp_path / "hostile.pbtxt"
    path.write_text(_const(r'tensor_shape { dim { size: 3 } } string_val: "\377\033]0;title\007" '
                           r'string_val: "a\000b" string_val: "\033[2J\r"'))
    out = ok(capsys, path, "--fetch", "c")
    assert out == 'c:0 string [3] = ["\\xff\\x1b]0;title\\x07", "a\\x00b", "\\x1b[2J\\x0d"]\n'
    assert ok(capsys, path, "--fetch", "c", "--json") == ('{"outputs": [{"name": "c:0", "dtype": "string", "shape": '
                                                         '[3], "values": [{"b64": "/xtdMDt0aXRsZQc="}, "a\\u0000b", '
                                                         '"\\u001b[2J\\r"]}]}\n')


def test_a_string_ending_in_nul_is_not_written_to_npy_where_it_would_be_cut(capsys, model, tmp_path):
    fails(capsys, 2, model, "--feed", 'x=["a\\u0000"]', "--fetch", "joined", "--out", tmp_path / "out",
          mentions=["'joined:0' holds a string ending in NUL bytes", "--json"])


def test_a_string_placeholder_in_graphrun_cc_is_fed_or_named_in_one_line(model, cc_runner):
    def refused(*argv):
        proc = subprocess.run([str(cc_runner), "run", str(model), *argv], capture_output=True, text=True, timeout=60)
        assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
        return proc.returncode, proc.stderr
    code, line = refused("--fetch", "joined")
    assert (code, line) == (2, "graphrun-cc: placeholder not fed: x (string, [?]); use --feed NAME=VALUE, "
                               "--feeds FILE.npz or --random\n")
    code, line = refused("--random", "--shape", "x=2", "--fetch", "joined")
    assert code == 2 and "random values are made for float, integer and bool placeholders only" in line, line
    fed = subprocess.run([str(cc_runner), "run", str(model), "--feed", 'x=["a", "\\u001b[2J"]', "--fetch", "joined"],
                         capture_output=True, text=True, timeout=60)
    assert (fed.returncode, fed.stderr) == (0, "") and fed.stdout == 'joined:0 string [3] = ["a", "\\x1b[2J", "k"]\n'


@pytest.mark.parametrize("fetch, build, words", [
    ("joined", lambda: tf.strings.join([tf.fill([1000], tf.constant("x" * 100_000)), "y"], name="joined"),
     "node 'joined' (StringJoin): the output's strings would take 95.4 MiB, over the limit of 9.5 MiB"),
    ("rewritten", lambda: tf.strings.regex_replace(tf.constant("a" * 100), "", "b" * 100_000, name="rewritten"),
     "node 'rewritten' (StaticRegexReplace): the output's strings would take"),
    ("wide", lambda: tf.strings.as_string(tf.constant([1, 2]), width=2 ** 30, name="wide"),
     "node 'wide' (AsString): the output's strings would take 2.0 GiB"),
    ("encoded", lambda: tf.strings.encode_base64(tf.constant("z" * 9_000_000), name="encoded"),
     "node 'encoded' (EncodeBase64): the output's strings would take 11.4 MiB"),
])
def test_strings_that_would_grow_past_the_tensor_limit_are_refused_before_they_are_made(
        capsys, tmp_path, monkeypatch, fetch, build, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(10_000_000))
    path = save_model(tmp_path / "grow.pb", build)
    fails(capsys, 4, path, "--fetch", fetch, mentions=[words, "set GRAPHDEF_MAX_TENSOR_BYTES to change it"])


def test_the_sessions_cc_engine_refuses_strings_in_one_line_naming_the_node(model):
    graph = tf.load(str(model))
    with tf.Session(graph=graph, engine="cc") as sess:
        with pytest.raises(tf.errors.UnimplementedError) as fed:
            sess.run("joined:0", {"x:0": ["a"]})
        with pytest.raises(tf.errors.UnimplementedError) as const:
            sess.run(graph.get_tensor_by_name("Const:0"))
    assert str(fed.value) == ("Session.run: fetch 'joined:0': string tensors, which the C API cannot hold yet: "
                              "node 'joined' (ConcatV2)")
    assert str(const.value) == ("Session.run: fetch 'Const:0': string tensors, which the C API cannot hold yet: "
                                "node 'Const' (Const)")
    with tf.Session(graph=graph) as sess:  # the default engine runs the same plan with numpy
        assert sess.run("joined:0", {"x:0": ["a"]}).tolist() == [b"a", b"k"]
