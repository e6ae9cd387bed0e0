"""graphrun-cc's feeds: JSON values, .npy and .npz files, conversions and refusals.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, fails, feed_graph, ok, output
from tests.support.numerics_policy import assert_same


@pytest.mark.parametrize("dtype, text, expected", [
    (np.int64, "[9223372036854775807, -9223372036854775808]", "[9223372036854775807, -9223372036854775808]"),
    (np.uint64, "18446744073709551615", "18446744073709551615"),
    (np.uint8, "[2.0, 255]", "[2, 255]"),
    (np.bool_, "[true, false]", "[true, false]"),
    (np.float32, "16777217", "16777216.0"),
    (np.int32, "[]", "[]"),
])
def test_feed_conversions(runner, tmp_path, dtype, text, expected):
    model = feed_graph(tmp_path, dtype)
    assert ok(runner, model, "--feed", f"x={text}").endswith(f" = {expected}\n")


@pytest.mark.parametrize("dtype, text", [
    (np.int32, "1.5"), (np.uint8, "300"), (np.uint8, "-1"), (np.float32, "true"), (np.bool_, "1"),
    (np.float32, "1e39"), (np.float32, "[[1,2],[3]]"), (np.float32, "NaN"), (np.float32, "'1'"),
    (np.float32, "{}"), (np.float32, "1e400"),
])
def test_feed_refusals_exit_2(runner, tmp_path, dtype, text):
    assert "--feed x: " in fails(runner, 2, feed_graph(tmp_path, dtype), "--feed", f"x={text}")


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_feed_npy_versions(runner, tmp_path, version):
    array = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    path = tmp_path / "x.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version)
    assert_same(output(runner, feed_graph(tmp_path), "--feed", f"x=@{path}"), array)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                   np.uint64, np.float64, np.bool_])
def test_feed_npy_dtypes(runner, tmp_path, dtype):
    array = (np.arange(4) % 2 == 1) if dtype is np.bool_ else np.array([0, 1, 2, 100], dtype)
    np.save(tmp_path / "x.npy", array)
    model = feed_graph(tmp_path, dtype)
    assert_same(output(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}"), array)


def test_feed_npy_is_converted_exactly(runner, tmp_path):
    np.save(tmp_path / "ints.npy", np.array([1, 2**24 + 1], np.int64))
    model = feed_graph(tmp_path, np.float32)
    assert_same(output(runner, model, "--feed", f"x=@{tmp_path / 'ints.npy'}"), np.array([1, 2**24], np.float32))
    np.save(tmp_path / "halves.npy", np.array([0.5]))
    int_model = feed_graph(tmp_path, np.int32)
    assert "not an integer" in fails(runner, 2, int_model, "--feed", f"x=@{tmp_path / 'halves.npy'}")


def test_feed_npy_fortran_order_and_big_endian(runner, tmp_path):
    # np.load accepts both, so Python's graphrun does; the runner reorders and byte-swaps.
    array = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 3
    cases = {
        "fortran": (np.asfortranarray(array), np.float32, array),
        "big": (array.astype(">f4"), np.float32, array),
        "big_fortran": (np.asfortranarray(array.astype(">f8")), np.float64, array.astype(np.float64)),
        "big_int16": (np.array([[1, -2], [300, -32768]], ">i2").T, np.int16,
                      np.array([[1, 300], [-2, -32768]], np.int16)),
        "big_uint64": (np.array([2**64 - 2, 1], ">u8"), np.uint64, np.array([2**64 - 2, 1], np.uint64)),
        "big_to_float64": (np.array([1, -(2**31)], ">i4"), np.float64, np.array([1.0, -(2.0**31)])),
        "fortran_bool": (np.asfortranarray(np.array([[True, False, True], [False, False, True]])), np.bool_,
                         np.array([[True, False, True], [False, False, True]])),
    }
    for name, (stored, dtype, expected) in cases.items():
        path = tmp_path / f"{name}.npy"
        np.save(path, stored)
        if "fortran" in name:
            assert b"'fortran_order': True" in path.read_bytes()[:128]
        assert_same(output(runner, feed_graph(tmp_path, dtype), "--feed", f"x=@{path}"), expected)


def test_feed_npy_float16_is_converted_exactly(runner, tmp_path):
    halves = np.array([0.1, -2.5, 65504.0, 6e-8, -0.0, np.inf, -np.inf, np.nan, 1e-5], np.float16)
    np.save(tmp_path / "h.npy", halves)
    np.save(tmp_path / "hbig.npy", halves.astype(">f2"))
    for name in ("h.npy", "hbig.npy"):
        for dtype in (np.float32, np.float64):
            # Every float16 is exactly a float32 and a float64: numpy's widening is the oracle.
            got = output(runner, feed_graph(tmp_path, dtype), "--feed", f"x=@{tmp_path / name}")
            assert_same(got, halves.astype(dtype))
    np.save(tmp_path / "whole.npy", np.array([[1, -2048], [3, 0]], np.float16))
    got = output(runner, feed_graph(tmp_path, np.int16), "--feed", f"x=@{tmp_path / 'whole.npy'}")
    assert_same(got, np.array([[1, -2048], [3, 0]], np.int16))
    np.save(tmp_path / "half.npy", np.array([1.5], np.float16))
    line = fails(runner, 2, feed_graph(tmp_path, np.int32), "--feed", f"x=@{tmp_path / 'half.npy'}")
    assert "1.5 is not an integer" in line
    np.save(tmp_path / "big.npy", np.array([65504.0], np.float16))
    line = fails(runner, 2, feed_graph(tmp_path, np.uint8), "--feed", f"x=@{tmp_path / 'big.npy'}")
    assert "65504.0 is out of range for placeholder 'x' (uint8)" in line
    line = fails(runner, 2, feed_graph(tmp_path, np.bool_), "--feed", f"x=@{tmp_path / 'h.npy'}")
    assert "placeholder 'x' (bool) takes true/false, not numbers" in line


def test_feed_npy_refusals(runner, tmp_path):
    model = feed_graph(tmp_path)
    np.save(tmp_path / "c.npy", np.ones(2, np.complex64))
    assert "c.npy' holds complex64 data" in fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'c.npy'}")
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'junk.npy'}")
    fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'missing.npy'}")
    np.save(tmp_path / "short.npy", np.ones(100, np.float32))
    data = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-8])
    assert "the header promises [100] float32 (400 bytes of data) but only 392 bytes follow it" in fails(
        runner, 2, model, "--feed", f"x=@{tmp_path / 'short.npy'}")


def test_feed_shape_mismatch_names_both_shapes(runner, tmp_path):
    line = fails(runner, 2, feed_graph(tmp_path, np.float32, [-1, 3]), "--feed", "x=[1, 2, 3]")
    assert "[3]" in line and "[?,3]" in line


def test_unknown_feed_lists_placeholders(runner, tmp_path):
    line = fails(runner, 2, feed_graph(tmp_path, np.float32, [-1, 3]), "--feed", "nope=1")
    assert "nope" in line and "x (float32, [?,3])" in line


def test_feeding_a_non_placeholder_is_refused(runner, tmp_path):
    fails(runner, 2, feed_graph(tmp_path), "--feed", "y=1", "--feed", "x=1")


def test_unfed_placeholders_are_named_with_dtype_and_shape(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 3])
    g.placeholder("k", np.int32, "unknown")
    g.op("y", "Identity", ["x", "^k"], np.float32)
    line = fails(runner, 2, g.save(tmp_path / "model.pb"))
    assert "x (float32, [?,3])" in line and "k (int32, <unknown>)" in line


def test_placeholders_off_the_fetch_path_need_no_feed(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.const("c", 2, np.int32)
    g.op("y", "Identity", ["x"], np.float32)
    assert ok(runner, g.save(tmp_path / "model.pb"), "--fetch", "c") == "c:0 int32 [] = 2\n"


def test_default_fetches_are_unconsumed_outputs_in_file_order(runner, tmp_path):
    g = Graph()
    g.const("b", 2, np.int32)
    g.const("a", 1, np.int32)
    g.op("sum", "AddV2", ["a", "b"], np.int32)
    g.node("sink", "NoOp", ["^sum"])   # consumes sum; itself has no outputs
    g.const("later", 5, np.int8)
    g.op("twice", "AddV2", ["later", "later"], np.int8)
    g.const("z", 0.5, np.float32)
    assert ok(runner, g.save(tmp_path / "model.pb")) == "twice:0 int8 [] = 10\nz:0 float32 [] = 0.5\n"
