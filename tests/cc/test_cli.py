"""graphrun-cc's command line: help, version, bad flags, output format and fetches.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import math
import random
import struct

import numpy as np
import pytest

from tests.support.cc_helpers import KERNELS, REPO, X23, Graph, binary_graph, fails, feed_graph, ok, output
from tests.support.numerics_policy import assert_same


def test_list_kernels(runner):
    assert ok(runner, "--list-kernels") == "".join(k + "\n" for k in KERNELS)


def test_help(runner):
    assert ok(runner, "--help").startswith("usage: graphrun-cc MODEL.pb")


def test_version_is_the_projects(runner):
    # pyproject.toml's version is the one Python's graphrun reports; the runner hard-codes
    # the same number, and this keeps the two places equal.
    import tomllib
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert ok(runner, "--version") == f"graphrun-cc {version}\n"



@pytest.mark.parametrize("args", [[], ["--bogus"], ["a.pb", "b.pb"], ["a.pb", "--fetch"]])
def test_bad_command_lines_exit_2(runner, args):
    fails(runner, 2, *args)


Y3 = np.array([0.5, 3.0, 0.2], np.float32)


@pytest.mark.parametrize("op, fn", [
    ("Add", np.add), ("AddV2", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
    ("RealDiv", np.divide), ("Maximum", np.maximum), ("Minimum", np.minimum),
])
def test_binary_float_ops_broadcast(runner, tmp_path, op, fn):
    # [2,3] with [3]: IEEE + - * / and max/min are exact, so float32 numpy is the oracle.
    assert_same(output(runner, binary_graph(tmp_path, op, X23, Y3)), fn(X23, Y3))


def test_float_format_literals(runner, tmp_path):
    g = Graph()
    g.const("d", [1e-05, 1e16, -0.0, np.nan, np.inf, -np.inf, 0.0001, 123456.0, 1.5e16, 1e100,
                  1e15, 3.0, 2.5e-300], np.float64)
    g.const("f", [0.1, 1 / 3, 16777216.0, 3.4028235e38], np.float32)
    model = g.save(tmp_path / "model.pb")
    assert ok(runner, model) == (
        "d:0 float64 [13] = [1e-05, 1e+16, -0.0, nan, inf, -inf, 0.0001, 123456.0, 1.5e+16, 1e+100, "
        "1000000000000000.0, 3.0, 2.5e-300]\n"
        "f:0 float32 [4] = [0.1, 0.33333334, 16777216.0, 3.4028235e+38]\n")
    assert ok(runner, model, "--json", "--fetch", "d") == (
        '{"outputs": [{"name": "d:0", "dtype": "float64", "shape": [13], "values": [1e-05, 1e+16, -0.0, '
        '"nan", "inf", "-inf", 0.0001, 123456.0, 1.5e+16, 1e+100, 1000000000000000.0, 3.0, 2.5e-300]}]}\n')


def shortest_float32_repr(value):
    """Python's repr layout of a float32's own shortest digits (numpy's str has those digits)."""
    return repr(float(str(np.float32(value))))


def test_float_format_matches_python_repr(runner, tmp_path):
    rng = random.Random(1234)
    doubles = [rng.uniform(1, 10) * 10.0 ** rng.randint(-30, 30) * rng.choice([1, -1]) for _ in range(300)]
    doubles += [struct.unpack("<d", rng.randbytes(8))[0] for _ in range(200)]
    doubles = [d for d in doubles if math.isfinite(d)]
    with np.errstate(over="ignore"):
        floats = np.array(doubles, np.float64).astype(np.float32)
    floats = floats[np.isfinite(floats)]
    g = Graph()
    g.const("d", doubles, np.float64)
    g.const("f", floats)
    lines = ok(runner, g.save(tmp_path / "model.pb")).splitlines()
    assert lines[0] == f"d:0 float64 [{len(doubles)}] = [" + ", ".join(map(repr, doubles)) + "]"
    assert lines[1] == f"f:0 float32 [{len(floats)}] = [" + ", ".join(map(shortest_float32_repr, floats)) + "]"


def test_integer_extremes_print_exactly(runner, tmp_path):
    g = Graph()
    g.const("i8", [-128, 127], np.int8)
    g.const("u64", [2**64 - 1, 0], np.uint64)
    g.const("i64", [-(2**63), 2**63 - 1], np.int64)
    assert ok(runner, g.save(tmp_path / "model.pb")) == (
        "i8:0 int8 [2] = [-128, 127]\n"
        "u64:0 uint64 [2] = [18446744073709551615, 0]\n"
        "i64:0 int64 [2] = [-9223372036854775808, 9223372036854775807]\n")


def test_feed_number_and_nested_json(runner, tmp_path):
    model = feed_graph(tmp_path, np.float32, [-1, 2])
    assert ok(runner, model, "--feed", "x=[[1,2],[3,4.5]]") == "y:0 float32 [2,2] = [[1.0, 2.0], [3.0, 4.5]]\n"
    scalar = feed_graph(tmp_path, np.float64)
    assert ok(runner, scalar, "--feed", "x:0=3.75") == "y:0 float64 [] = 3.75\n"


@pytest.mark.parametrize("fetch", ["nope", "a:1", "sink", "a:x1"])
def test_bad_fetches_exit_2(runner, tmp_path, fetch):
    g = Graph()
    g.const("a", 1, np.int32)
    g.node("sink", "NoOp", ["^a"])
    fails(runner, 2, g.save(tmp_path / "model.pb"), "--fetch", fetch)


def test_text_format_model(runner, tmp_path):
    g = Graph()
    g.const("a", [1.5, 2.5], np.float32)
    g.op("n", "Neg", ["a"], np.float32)
    from google.protobuf import text_format
    path = tmp_path / "model.pbtxt"
    path.write_text(text_format.MessageToString(g.proto))
    assert ok(runner, path) == "n:0 float32 [2] = [-1.5, -2.5]\n"
    (tmp_path / "bad.pbtxt").write_text("node { name: 'a' op: ")
    assert fails(runner, 3, tmp_path / "bad.pbtxt").startswith(f"graphrun-cc: {tmp_path / 'bad.pbtxt'}: ")


def small_model_bytes():
    g = Graph()
    g.const("a", [1.0, 2.0, 3.0, 4.0], np.float32)
    g.op("b", "Neg", ["a"], np.float32)
    return g.proto.SerializeToString()


def test_unreadable_files(runner, tmp_path):
    assert "no such file" in fails(runner, 3, tmp_path / "missing.pb")
    (tmp_path / "empty.pb").write_bytes(b"")
    assert fails(runner, 3, tmp_path / "empty.pb").endswith("not a GraphDef (no nodes)")
    fails(runner, 3, tmp_path)  # a directory
    rng = random.Random(7)
    for i in range(20):
        path = tmp_path / f"random{i}.pb"
        path.write_bytes(rng.randbytes(rng.randint(1, 4000)))
        fails(runner, 3, path)
    data = small_model_bytes()
    for cut in (1, 5, len(data) // 2, len(data) - 1):
        path = tmp_path / f"truncated{cut}.pb"
        path.write_bytes(data[:cut])
        fails(runner, 3, path)
