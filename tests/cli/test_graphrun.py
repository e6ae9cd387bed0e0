"""graphrun, the command-line runner: its output bytes, feeds, default fetches and errors.

Most tests call graphdef.graphrun.cli.main(argv) in-process (it returns the exit code and never
raises); one runs the installed console script to prove the entry point works.
"""

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graphdef as tf
from graphdef.graphrun import cli
from tests.support.graphrun_helpers import fails, graphrun, ok, save_model

CONSOLE_SCRIPT = Path(sys.executable).parent / "graphrun"


# -- helpers ------------------------------------------------------------------------------

def json_outputs(text):
    """--json stdout -> [(name, dtype, shape, values)] after checking it is one line."""
    assert text.endswith("\n") and text.count("\n") == 1
    return [(o["name"], o["dtype"], o["shape"], o["values"]) for o in json.loads(text)["outputs"]]


# -- models -------------------------------------------------------------------------------

def build_seed():
    a = tf.constant(15, name="a")
    b = tf.constant(5, name="b")
    tf.divide(a * b, a + b, name="Divide")


def build_scalar():
    x = tf.placeholder(tf.float32, [], name="x")
    tf.multiply(x, 3.0, name="y")


def build_matrix():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.multiply(x, 2.0, name="y")
    tf.reduce_sum(x, name="total")


def build_typed():
    """Placeholders of many dtypes and shapes; tests fetch the fed placeholders back."""
    tf.placeholder(tf.float32, [None, 2], name="f32")
    tf.placeholder(tf.float32, None, name="g32")
    tf.placeholder(tf.float64, None, name="anyshape")
    tf.placeholder(tf.int32, [], name="i32")
    tf.placeholder(tf.int64, [None], name="i64")
    tf.placeholder(tf.uint8, [None], name="u8")
    tf.placeholder(tf.uint64, [None], name="u64")
    tf.placeholder(tf.bool, [None], name="flag")


def build_variable():
    v = tf.Variable([1.0, 2.0], name="v")
    tf.identity(v, name="out")
    tf.global_variables_initializer()


@pytest.fixture
def seed(tmp_path):
    return save_model(tmp_path / "seed.pb", build_seed)


@pytest.fixture
def scalar(tmp_path):
    return save_model(tmp_path / "scalar.pb", build_scalar)


@pytest.fixture
def matrix(tmp_path):
    return save_model(tmp_path / "matrix.pbtxt", build_matrix)


@pytest.fixture
def typed(tmp_path):
    return save_model(tmp_path / "typed.pb", build_typed)


# -- the seed and the basics --------------------------------------------------------------

def test_seed_model_prints_the_division(capsys, seed):
    assert ok(capsys, seed) == "Divide:0 float64 [] = 3.75\n"


def test_seed_model_as_json(capsys, seed):
    out = ok(capsys, seed, "--json")
    assert out == '{"outputs": [{"name": "Divide:0", "dtype": "float64", "shape": [], "values": 3.75}]}\n'
    assert json_outputs(out) == [("Divide:0", "float64", [], 3.75)]


@pytest.mark.slow
def test_the_console_script_is_installed(seed):
    """The pyproject entry point: a separate process, real stdout bytes and exit code."""
    assert CONSOLE_SCRIPT.exists(), f"{CONSOLE_SCRIPT} is missing; run `make venv`"
    done = subprocess.run([str(CONSOLE_SCRIPT), str(seed)], capture_output=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"Divide:0 float64 [] = 3.75\n", b"")
    missing = subprocess.run([str(CONSOLE_SCRIPT), str(seed) + ".nope"], capture_output=True, timeout=120)
    assert missing.returncode == 3 and missing.stdout == b""
    assert missing.stderr.startswith(b"graphrun: ") and missing.stderr.count(b"\n") == 1


def test_version(capsys):
    assert graphrun(capsys, "--version") == (0, f"graphrun {tf.__version__}\n", "")


def test_help_documents_the_exit_codes(capsys):
    code, out, err = graphrun(capsys, "--help")
    assert (code, err) == (0, "")
    assert out.startswith("usage: graphrun")
    section = out[out.index("exit codes:"):]
    for exit_code in ("0", "2", "3", "4", "130"):
        assert f"\n  {exit_code} " in section


def test_fetch_names_are_canonical(capsys, seed):
    out = ok(capsys, seed, "--fetch", "Divide", "--fetch", "a:0", "--fetch", "Divide")
    assert out == "Divide:0 float64 [] = 3.75\na:0 int32 [] = 15\nDivide:0 float64 [] = 3.75\n"


# -- feeds --------------------------------------------------------------------------------

def test_scalar_feed(capsys, scalar):
    assert ok(capsys, scalar, "--feed", "x=10") == "y:0 float32 [] = 30.0\n"
    assert ok(capsys, scalar, "--feed", "x:0=0.1", "--fetch", "x") == "x:0 float32 [] = 0.1\n"


def test_json_array_feed(capsys, matrix):
    out = ok(capsys, matrix, "--feed", "x=[[1,2],[3,4.5]]")
    assert out == "y:0 float32 [2,2] = [[2.0, 4.0], [6.0, 9.0]]\ntotal:0 float32 [] = 10.5\n"


def test_json_output_round_trips(capsys, matrix):
    x = np.array([[0.1, -2.5], [1e-7, 3e20]], dtype=np.float32)
    out = ok(capsys, matrix, "--feed", f"x={json.dumps(x.tolist())}", "--json")
    (y_name, y_dtype, y_shape, y_values), (t_name, t_dtype, t_shape, t_values) = json_outputs(out)
    assert (y_name, y_dtype, y_shape) == ("y:0", "float32", [2, 2])
    assert (t_name, t_dtype, t_shape) == ("total:0", "float32", [])
    np.testing.assert_array_equal(np.array(y_values, np.float64).astype(np.float32), x * np.float32(2))
    assert np.float32(t_values) == np.sum(x, dtype=np.float32)
    assert y_values[0][0] == 0.2  # float32 shortest digits, not 0.20000000298023224


def test_npy_feeds(capsys, typed, tmp_path):
    np.save(tmp_path / "f.npy", np.array([[0.1, 2.0]], dtype=np.float64))
    np.save(tmp_path / "i.npy", np.array(-7, dtype=np.int16))
    np.save(tmp_path / "b.npy", np.array([True, False]))
    out = ok(capsys, typed, f"--feed=f32=@{tmp_path / 'f.npy'}", f"--feed=i32=@{tmp_path / 'i.npy'}",
             f"--feed=flag=@{tmp_path / 'b.npy'}", "--fetch", "f32", "--fetch", "i32", "--fetch", "flag")
    assert out == ("f32:0 float32 [1,2] = [[0.1, 2.0]]\n"
                   "i32:0 int32 [] = -7\n"
                   "flag:0 bool [2] = [true, false]\n")


@pytest.mark.parametrize("feed, fetched", [
    ("i32=2.0", "i32:0 int32 [] = 2"),
    ("i32=-2147483648", "i32:0 int32 [] = -2147483648"),
    ("u8=[0,255]", "u8:0 uint8 [2] = [0, 255]"),
    ("i64=[-9223372036854775808, 9223372036854775807]",
     "i64:0 int64 [2] = [-9223372036854775808, 9223372036854775807]"),
    ("u64=[18446744073709551615, 0]", "u64:0 uint64 [2] = [18446744073709551615, 0]"),
    ("flag=[true,false,true]", "flag:0 bool [3] = [true, false, true]"),
    ("anyshape=[[[1]]]", "anyshape:0 float64 [1,1,1] = [[[1.0]]]"),
    ("anyshape=[]", "anyshape:0 float64 [0] = []"),
    ("anyshape=[[], []]", "anyshape:0 float64 [2,0] = [[], []]"),
    ("anyshape=-0.0", "anyshape:0 float64 [] = -0.0"),
    ("f32=[[0.1, 1e-5], [16777217, 1e20]]", "f32:0 float32 [2,2] = [[0.1, 1e-05], [16777216.0, 1e+20]]"),
])
def test_feed_conversions(capsys, typed, feed, fetched):
    name = feed.split("=")[0]
    assert ok(capsys, typed, "--feed", feed, "--fetch", name) == fetched + "\n"


@pytest.mark.parametrize("value", ["[1152921573326323713]", "[1152921573326323713, 0.5]"])
def test_large_ints_round_once_into_float32(capsys, typed, value):
    """2**60 + 2**36 + 1 is just above a float32 midpoint: rounding via float64 would lose the +1."""
    out = ok(capsys, typed, "--feed", f"g32={value}", "--fetch", "g32", "--json")
    ((_, dtype, _, values),) = json_outputs(out)
    assert dtype == "float32"
    assert np.float32(values[0]) == np.float32(2 ** 60 + 2 ** 37)


def test_placeholder_with_default(capsys, tmp_path):
    def build():
        d = tf.placeholder_with_default(tf.constant([1, 2]), [None], name="d")
        tf.multiply(d, 10, name="m")
    path = save_model(tmp_path / "pwd.pb", build)
    assert ok(capsys, path) == "m:0 int32 [2] = [10, 20]\n"
    assert ok(capsys, path, "--feed", "d=[3]") == "m:0 int32 [1] = [30]\n"


@pytest.mark.slow
def test_a_large_output_is_exact(capsys, tmp_path):
    """10**6 float32 elements fed from .npy come back digit-exact through --json."""
    def build():
        tf.identity(tf.placeholder(tf.float32, [None, None], name="x"), name="y")
    path = save_model(tmp_path / "big.pb", build)
    x = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ((name, dtype, shape, values),) = json_outputs(ok(capsys, path, f"--feed=x=@{tmp_path / 'x.npy'}", "--json"))
    assert (name, dtype, shape) == ("y:0", "float32", [1000, 1000])
    np.testing.assert_array_equal(np.array(values, np.float64).astype(np.float32), x)


# -- default fetches ----------------------------------------------------------------------

def test_default_fetches_are_the_sinks_in_file_order(capsys, tmp_path):
    """Hand-written, not in dependency order: 'first' comes before the node it reads.

    'k' is consumed only as a control input, so it is not a sink; 'g' (NoOp) is a sink
    with no outputs, so it prints nothing.
    """
    path = tmp_path / "order.pbtxt"
    path.write_text("""
node { name: "first" op: "Identity" input: "c" attr { key: "T" value { type: DT_INT32 } } }
node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 7 } } } }
node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
node { name: "g" op: "NoOp" input: "^k" }
node { name: "last" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 2.5 } } } }
""")
    assert ok(capsys, path) == "first:0 int32 [] = 7\nlast:0 float32 [2] = [2.5, 2.5]\n"


def test_default_fetches_skip_consumed_nodes_and_noops(capsys, tmp_path):
    def build():
        a = tf.constant(2, name="a")
        b = tf.constant(3, name="b")
        tf.add(a, b, name="sum")
        tf.group(tf.identity(a, name="side"), name="grp")
        tf.constant(1.5, name="loose")
    path = save_model(tmp_path / "sinks.pb", build)
    assert ok(capsys, path) == "sum:0 int32 [] = 5\nloose:0 float32 [] = 1.5\n"


def test_a_graph_of_only_noops_prints_nothing(capsys, tmp_path):
    path = save_model(tmp_path / "noop.pb", lambda: tf.no_op(name="nothing"))
    assert ok(capsys, path) == ""
    assert ok(capsys, path, "--json") == '{"outputs": []}\n'


# -- errors: the model (exit 3) -----------------------------------------------------------

def test_missing_file(capsys, tmp_path):
    fails(capsys, 3, tmp_path / "absent.pb", mentions=["absent.pb", "no such file"])


def test_directory_instead_of_a_file(capsys, tmp_path):
    fails(capsys, 3, tmp_path)


def test_empty_file(capsys, tmp_path):
    (tmp_path / "empty.pb").write_bytes(b"")
    fails(capsys, 3, tmp_path / "empty.pb", mentions=["empty.pb"])


def test_random_bytes(capsys, tmp_path):
    (tmp_path / "noise.pb").write_bytes(random.Random(0).randbytes(4096))
    fails(capsys, 3, tmp_path / "noise.pb", mentions=["noise.pb"])


def test_truncated_pb(capsys, seed, tmp_path):
    data = seed.read_bytes()
    for cut in (len(data) // 3, len(data) // 2, len(data) - 20):
        (tmp_path / "cut.pb").write_bytes(data[:cut])
        fails(capsys, 3, tmp_path / "cut.pb", mentions=["cut.pb"])


def test_garbage_pbtxt(capsys, tmp_path):
    (tmp_path / "bad.pbtxt").write_text("node { name: 'a' op: [this is not a GraphDef\n")
    fails(capsys, 3, tmp_path / "bad.pbtxt", mentions=["bad.pbtxt"])


def test_unknown_op(capsys, tmp_path):
    (tmp_path / "op.pbtxt").write_text('node { name: "n" op: "SomeFancyOp" }\n')
    fails(capsys, 3, tmp_path / "op.pbtxt", mentions=["SomeFancyOp"])


def test_input_naming_a_missing_node(capsys, tmp_path):
    (tmp_path / "dangling.pbtxt").write_text('node { name: "n" op: "Identity" input: "ghost" '
                                             'attr { key: "T" value { type: DT_FLOAT } } }\n')
    fails(capsys, 3, tmp_path / "dangling.pbtxt", mentions=["ghost"])


# -- errors: usage and feeds (exit 2) -----------------------------------------------------

@pytest.mark.parametrize("argv", [[], ["--bogus"], ["--json=yes"], ["--feed"], ["--js"]])
def test_bad_command_lines(capsys, seed, argv):
    fails(capsys, 2, *(argv if argv == [] else [seed, *argv]))


def test_unknown_feed_lists_the_placeholders(capsys, matrix):
    fails(capsys, 2, matrix, "--feed", "nope=1", mentions=["nope", "x (float32, [?,2])"])


def test_feeding_a_node_that_is_not_a_placeholder(capsys, matrix):
    fails(capsys, 2, matrix, "--feed", "y=1", mentions=["'y'", "Mul", "x (float32, [?,2])"])


def test_feeding_a_graph_without_placeholders(capsys, seed):
    fails(capsys, 2, seed, "--feed", "a=1", mentions=["no placeholders"])


def test_feed_values_are_never_evaluated(capsys, matrix, tmp_path):
    marker = tmp_path / "evaluated"
    fails(capsys, 2, matrix, "--feed", f"x=__import__('pathlib').Path({str(marker)!r}).touch()")
    fails(capsys, 2, matrix, "--feed", "x=__import__('os')", mentions=["JSON"])
    assert not marker.exists()


def test_pickled_npy_is_refused(capsys, matrix, tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    fails(capsys, 2, matrix, f"--feed=x=@{tmp_path / 'obj.npy'}", mentions=["obj.npy"])


@pytest.mark.parametrize("feed, mentions", [
    ("i32=1.5", ["1.5", "int32"]),
    ("i32=2147483648", ["2147483648", "out of range"]),
    ("u8=[1,300]", ["300", "uint8"]),
    ("u8=[-1]", ["-1", "uint8"]),
    ("i64=[9223372036854775808]", ["9223372036854775808"]),
    ("u64=[18446744073709551616]", ["18446744073709551616"]),
    ("i32=true", ["true/false", "int32"]),
    ("flag=[1,0]", ["flag"]),
    ("flag=[true, 1]", ["flag"]),
    ("f32=[[1,2,3]]", ["[1,3]", "[?,2]"]),
    ("i32=[1]", ["[1]", "[]"]),
    ("f32=[[1,2],[3]]", ["f32"]),
    ("f32=[[1,2],3]", ["f32"]),
    ('f32="abc"', ["f32"]),
    ("f32=[[null, 1]]", ["f32"]),
    ("f32={}", ["f32"]),
    ("f32=NaN", ["f32"]),
    ("g32=1e400", ["g32"]),
    ("g32=[1e39]", ["1e+39", "float32"]),
    ("i32", ["NAME=VALUE"]),
    ("i32=", ["i32"]),
    ("=1", ["NAME=VALUE"]),
    ("x:1=1", ["x:1"]),
    pytest.param("i32=" + "[" * 70 + "1" + "]" * 70, ["i32"], id="more-dims-than-numpy-has"),
    pytest.param("i32=" + "[" * 100000 + "]" * 100000, ["i32"], id="deeper-than-json-recurses"),
])
def test_bad_feed_values(capsys, typed, feed, mentions):
    fails(capsys, 2, typed, "--feed", feed, "--fetch", "i32", mentions=mentions)


def test_bad_npy_files(capsys, typed, tmp_path):
    np.savez(tmp_path / "pair.npz", a=np.zeros(2), b=np.ones(2))
    (tmp_path / "junk.npy").write_bytes(random.Random(0).randbytes(256))
    np.save(tmp_path / "wide.npy", np.zeros((1, 3), np.float32))
    np.save(tmp_path / "text.npy", np.array(["a", "b"]))
    for file, mention in [("absent.npy", "absent.npy"), ("pair.npz", ".npz"), ("junk.npy", "junk.npy"),
                          ("wide.npy", "[1,3]"), ("text.npy", "text.npy")]:
        fails(capsys, 2, typed, f"--feed=f32=@{tmp_path / file}", "--fetch", "f32", mentions=[mention])


def test_feeding_twice(capsys, typed):
    fails(capsys, 2, typed, "--feed", "i32=1", "--feed", "i32:0=2", "--fetch", "i32", mentions=["twice"])


def test_unfed_placeholder_is_named_with_dtype_and_shape(capsys, matrix):
    fails(capsys, 2, matrix, mentions=["x (float32, [?,2])", "--feed"])
    fails(capsys, 2, matrix, "--fetch", "total", mentions=["x (float32, [?,2])"])


@pytest.mark.parametrize("fetch, mentions", [
    ("ghost", ["ghost"]), ("y:1", ["y:1"]), ("y:x", ["y:x"]), ("x:0:0", ["x:0:0"])])
def test_unknown_fetch(capsys, matrix, fetch, mentions):
    fails(capsys, 2, matrix, "--feed", "x=[[1,2]]", "--fetch", fetch, mentions=mentions)


def test_fetching_a_noop(capsys, tmp_path):
    path = save_model(tmp_path / "noop.pb", lambda: tf.no_op(name="nothing"))
    fails(capsys, 2, path, "--fetch", "nothing", mentions=["no outputs"])


# -- errors: running (exit 4) -------------------------------------------------------------

def test_uninitialized_variable(capsys, tmp_path):
    path = save_model(tmp_path / "var.pb", build_variable)
    fails(capsys, 4, path, mentions=["'v'", "not initialized"])
    # Fetching the initializer's output runs it, so that succeeds.
    assert ok(capsys, path, "--fetch", "v/Assign") == "v/Assign:0 float32 [2] = [1.0, 2.0]\n"


def test_kernel_failure(capsys, tmp_path):
    def build():
        tf.reshape(tf.placeholder(tf.float32, None, name="x"), [2, 2], name="r")
    path = save_model(tmp_path / "reshape.pb", build)
    fails(capsys, 4, path, "--feed", "x=[1,2,3]", mentions=["'r'"])


def test_interrupt(capsys, seed, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "run", interrupted)
    assert fails(capsys, 130, seed) == "graphrun: interrupted\n"


def test_unexpected_exceptions_are_one_line(capsys, seed, monkeypatch):
    def broken(*args):
        raise RuntimeError("first line\nsecond line")
    monkeypatch.setattr(cli, "format_text", broken)
    assert fails(capsys, 4, seed) == "graphrun: unexpected RuntimeError: first line second line\n"


def test_main_reads_sys_argv(capsys, seed, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["graphrun", str(seed), "--json"])
    assert cli.main() == 0
    assert json.loads(capsys.readouterr().out)["outputs"][0]["values"] == 3.75


def test_nothing_is_written_on_success_to_stderr_even_with_warnings(capsys, tmp_path):
    """Overflow inside a kernel must not leak a numpy RuntimeWarning onto stderr."""
    def build():
        tf.multiply(tf.placeholder(tf.float32, [], name="x"), 1e30, name="big")
    path = save_model(tmp_path / "overflow.pb", build)
    assert ok(capsys, path, "--feed", "x=1e30") == "big:0 float32 [] = inf\n"
