"""graphrun-cc's elementwise, reduction and MatMul kernels against numpy oracles.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/cc_helpers.py.
"""

import math

import numpy as np
import pytest

from tests.cc_helpers import (Graph, X23, assert_close, assert_same, binary_graph, bool_attr, fails, fed_graph,
                              feeds, output, reduction_graph, type_attr, unary_graph)


def test_broadcast_both_sides(runner, tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 1, 3)
    y = np.array([[10], [-1]], np.int32)
    assert_same(output(runner, binary_graph(tmp_path, "Mul", x, y)), x * y)


def test_broadcast_mismatch_names_the_node(runner, tmp_path):
    model = fed_graph(tmp_path, "AddV2", [np.float32, np.float32])
    line = fails(runner, 4, model, *feeds(a=X23.tolist(), b=[1, 2]))
    assert line == "graphrun-cc: node 'z' (AddV2): cannot broadcast [2,3] with [2]"


@pytest.mark.parametrize("op, x, y, dtype", [
    ("AddV2", [2147483647, -2147483648], [1, -1], np.int32),
    ("Sub", [3, 0], [5, 1], np.uint8),
    ("Mul", [100, -128], [3, -1], np.int8),
    ("Mul", [65535, 40000], [65535, 3], np.uint16),
    ("Add", [2**62, -(2**63)], [2**62, -1], np.int64),
    ("AddV2", [2**64 - 1], [2], np.uint64),
])
def test_integer_arithmetic_wraps(runner, tmp_path, op, x, y, dtype):
    fn = {"AddV2": np.add, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op]
    x, y = np.array(x, dtype), np.array(y, dtype)
    with np.errstate(all="ignore"):
        expected = fn(x, y)
    assert_same(output(runner, binary_graph(tmp_path, op, x, y)), expected)


def test_maximum_minimum_propagate_nan(runner, tmp_path):
    x = np.array([np.nan, 1.0, 2.0], np.float32)
    y = np.array([1.0, np.nan, -1.0], np.float32)
    assert_same(output(runner, binary_graph(tmp_path, "Maximum", x, y)), np.maximum(x, y))
    assert_same(output(runner, binary_graph(tmp_path, "Minimum", x, y)), np.minimum(x, y))


def test_real_div_refuses_integers(runner, tmp_path):
    line = fails(runner, 3, binary_graph(tmp_path, "RealDiv", [1, 2], [3, 4], np.int32))
    assert "node 'z' (RealDiv)" in line and "int32" in line


UNARY_INPUT = np.array([-2.5, -0.0, 0.0, 0.3, 1.0, 4.0, np.inf, np.nan], np.float32)


@pytest.mark.parametrize("op, fn, exact", [
    ("Neg", np.negative, True), ("Square", np.square, True), ("Sqrt", np.sqrt, True),
    ("Abs", np.abs, True), ("Relu", lambda x: np.maximum(x, 0), True),
    ("Exp", np.exp, False), ("Log", np.log, False), ("Tanh", np.tanh, False),
    ("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), False),
])
def test_unary_float_ops(runner, tmp_path, op, fn, exact):
    with np.errstate(all="ignore"):
        expected = fn(UNARY_INPUT.astype(np.float64)).astype(np.float32)
    actual = output(runner, unary_graph(tmp_path, op, UNARY_INPUT))
    (assert_same if exact else assert_close)(actual, expected)


def test_unary_float64(runner, tmp_path):
    x = np.array([0.5, 2.0, 10.0])
    assert_close(output(runner, unary_graph(tmp_path, "Exp", x)), np.exp(x), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erfc_is_double_erfc_rounded(runner, tmp_path, dtype):
    x = np.array([-np.inf, -3.0, -0.5, -0.0, 1e-30, 0.3, 1.0, 2.5, 9.0, 30.0, np.inf, np.nan], dtype)
    expected = np.array([math.erfc(v) for v in x.astype(np.float64).tolist()]).astype(dtype)
    assert_same(output(runner, unary_graph(tmp_path, "Erfc", x)), expected)


def test_erfc_refuses_integers(runner, tmp_path):
    assert "node 'z' (Erfc): attr 'T' is int32" in fails(runner, 3, unary_graph(tmp_path, "Erfc", [1], np.int32))


def test_unary_integer_ops_wrap(runner, tmp_path):
    x = np.array([-128, -3, 0, 127], np.int8)
    assert_same(output(runner, unary_graph(tmp_path, "Neg", x)), np.array([-128, 3, 0, -127], np.int8))
    assert_same(output(runner, unary_graph(tmp_path, "Abs", x)), np.array([-128, 3, 0, 127], np.int8))
    assert_same(output(runner, unary_graph(tmp_path, "Relu", x)), np.array([0, 0, 0, 127], np.int8))
    assert_same(output(runner, unary_graph(tmp_path, "Square", np.array([16, -3], np.int8))),
                np.array([0, 9], np.int8))


def test_sum_negative_axis_keep_dims(runner, tmp_path):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    model = reduction_graph(tmp_path, "Sum", x, [-1, 0], keep_dims=True)
    assert_same(output(runner, model), x.sum(axis=(0, 2), keepdims=True).astype(np.int32))


def test_sum_scalar_axis_int64_and_wrap(runner, tmp_path):
    x = np.array([[2147483647, 5], [1, 7]], np.int32)
    model = reduction_graph(tmp_path, "Sum", x, 0, axes_dtype=np.int64)
    assert_same(output(runner, model), np.array([-2147483648, 12], np.int32))


def test_sum_of_everything_and_of_nothing(runner, tmp_path):
    x = np.array([[1.5, 2.0], [3.0, 4.25]], np.float32)
    assert_same(output(runner, reduction_graph(tmp_path, "Sum", x, [0, 1])), np.float32(10.75))
    assert_same(output(runner, reduction_graph(tmp_path, "Sum", x, np.zeros(0, np.int32))), x)


def test_mean_float_and_integer_truncation(runner, tmp_path):
    x = np.array([[1.0, 2.0, 4.5], [-3.0, 0.25, 6.0]], np.float32)
    assert_close(output(runner, reduction_graph(tmp_path, "Mean", x, 1)), x.mean(axis=1))
    xi = np.array([[-7, 0], [3, 6], [250, 10]], np.int32)
    expected = np.trunc(xi.mean(axis=1)).astype(np.int32)  # -3, 4, 130: truncation toward zero
    assert_same(output(runner, reduction_graph(tmp_path, "Mean", xi, 1)), expected)
    small = np.array([250, 10], np.uint8)  # summed wider than uint8, as TensorFlow does
    assert_same(output(runner, reduction_graph(tmp_path, "Mean", small, 0)), np.uint8(130))


def test_max_with_nan_and_empty(runner, tmp_path):
    x = np.array([[1.0, np.nan], [3.0, -1.0]], np.float32)
    assert_same(output(runner, reduction_graph(tmp_path, "Max", x, 0)), np.array([3.0, np.nan], np.float32))
    empty = np.zeros((0, 2), np.float32)
    assert_same(output(runner, reduction_graph(tmp_path, "Max", empty, 0)), np.full(2, -np.inf, np.float32))
    empty_int = np.zeros((2, 0), np.int16)
    assert_same(output(runner, reduction_graph(tmp_path, "Max", empty_int, 1)), np.full(2, -32768, np.int16))


def test_reduction_axis_errors(runner, tmp_path):
    model = fed_graph(tmp_path, "Sum", [np.float32, np.int32])
    x = np.ones((2, 3)).tolist()
    assert "listed twice" in fails(runner, 4, model, *feeds(a=x, b=[1, -1]))
    assert "out of range" in fails(runner, 4, model, *feeds(a=x, b=[2]))


A = np.array([[1.0, 2.0, 3.0], [-0.5, 0.25, 4.0]], np.float32)


B = np.array([[1.0, -1.0], [2.0, 0.5], [0.1, 3.0]], np.float32)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transposes(runner, tmp_path, ta, tb):
    g = Graph()
    g.const("a", A.T if ta else A)
    g.const("b", B.T if tb else B)
    g.op("mm", "MatMul", ["a", "b"], np.float32, transpose_a=bool_attr(ta), transpose_b=bool_attr(tb))
    expected = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    assert_close(output(runner, g.save(tmp_path / "model.pb")), expected)


def test_matmul_integers_and_float64(runner, tmp_path):
    a = np.array([[1, 2], [3, 4], [-5, 6]], np.int32)
    b = np.array([[7, -8, 9], [10, 11, 2**30]], np.int32)
    with np.errstate(all="ignore"):
        expected = a @ b  # numpy wraps int32 products the same way
    assert_same(output(runner, binary_graph(tmp_path, "MatMul", a, b)), expected)
    assert_close(output(runner, binary_graph(tmp_path, "MatMul", A.astype(np.float64), B.astype(np.float64))),
                 A.astype(np.float64) @ B.astype(np.float64), rtol=1e-15)


def test_matmul_shape_error_names_the_node(runner, tmp_path):
    model = fed_graph(tmp_path, "MatMul", [np.float32, np.float32])
    line = fails(runner, 4, model, *feeds(a=np.ones((2, 3)).tolist(), b=np.ones((4, 5)).tolist()))
    assert line == "graphrun-cc: node 'z' (MatMul): cannot multiply [2,3] by [4,5]"


def test_reshape_infers_minus_one(runner, tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    g = Graph()
    g.const("x", x)
    g.const("shape", [3, -1], np.int64)
    g.op("z", "Reshape", ["x", "shape"], np.int32, Tshape=type_attr(np.int64))
    assert_same(output(runner, g.save(tmp_path / "model.pb")), x.reshape(3, -1))


@pytest.mark.parametrize("shape", [[4, -1], [-1, -1], [7]])
def test_reshape_errors(runner, tmp_path, shape):
    model = fed_graph(tmp_path, "Reshape", [np.float32, np.int32])
    line = fails(runner, 4, model, *feeds(a=np.zeros((2, 3)).tolist(), b=shape))
    assert line.startswith("graphrun-cc: node 'z' (Reshape): ")


def test_transpose(runner, tmp_path):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    g = Graph()
    g.const("x", x)
    g.const("perm", [2, 0, 1], np.int32)
    g.op("z", "Transpose", ["x", "perm"], np.float64)
    assert_same(output(runner, g.save(tmp_path / "model.pb")), x.transpose(2, 0, 1))


def test_pow_float_broadcasts(runner, tmp_path):
    x = np.array([[2.0, 9.0, 4.0], [0.0, -2.0, 1.5]], np.float32)
    y = np.array([0.5, -1.0, 3.0], np.float32)
    with np.errstate(all="ignore"):
        expected = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    assert_close(output(runner, binary_graph(tmp_path, "Pow", x, y)), expected)
    # Exactly representable powers come out exact: 0 ** 0 = 1, (-2) ** 3 = -8, 4 ** -1 = 0.25.
    exact = output(runner, binary_graph(tmp_path, "Pow", [0.0, -2.0, 4.0, 2.0], [0.0, 3.0, -1.0, 10.0], np.float64))
    assert_same(exact, np.array([1.0, -8.0, 0.25, 1024.0]))
    # A negative base to a fractional power has no real value.
    assert np.isnan(output(runner, binary_graph(tmp_path, "Pow", [-8.0], [1 / 3], np.float32))).all()
