"""build/graphrun-cc, the C++ runner, through its command line.

Every graph is built here with the generated protobuf classes (not the graphdef package),
and every expected value is a literal or numpy worked out in the test: an oracle
independent of the runner. The training tests are the exception: they build their graphs
with graphdef's API, as users do, and compare with graphdef.Session as well as numpy. Exit codes and the one-line stderr rule are checked for every
error class of the CLI contract.
"""

import json
import math
import random
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from graphdef.ops import REGISTRY

REPO = Path(__file__).resolve().parent.parent
RUNNER = REPO / "build" / "graphrun-cc"

DT = graph_pb2.DataType
DTYPES = {
    np.dtype(np.float32): DT.DT_FLOAT, np.dtype(np.float64): DT.DT_DOUBLE,
    np.dtype(np.int8): DT.DT_INT8, np.dtype(np.int16): DT.DT_INT16,
    np.dtype(np.int32): DT.DT_INT32, np.dtype(np.int64): DT.DT_INT64,
    np.dtype(np.uint8): DT.DT_UINT8, np.dtype(np.uint16): DT.DT_UINT16,
    np.dtype(np.uint32): DT.DT_UINT32, np.dtype(np.uint64): DT.DT_UINT64,
    np.dtype(np.bool_): DT.DT_BOOL,
}

# every op the registry defines, and nothing else (tests/test_op_schema.py compares their signatures)
KERNELS = sorted(REGISTRY)


@pytest.fixture(scope="session")
def runner(cc_runner):
    """build/graphrun-cc (the shared fixture in conftest.py builds it when missing)."""
    return cc_runner


# -- building graphs ----------------------------------------------------------------------

def dtype_enum(dtype):
    return DTYPES[np.dtype(dtype)]


def tensor_proto(array, typed_field=False):
    """A TensorProto of `array`: tensor_content (TF's choice for >1 element) or the typed field."""
    array = np.asarray(array)
    proto = graph_pb2.TensorProto(dtype=dtype_enum(array.dtype))
    for d in array.shape:
        proto.tensor_shape.dim.add().size = d
    if array.size > 1 and not typed_field:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<")).tobytes()
        return proto
    kind = array.dtype
    flat = array.reshape(-1).tolist()
    if kind == np.float32:
        proto.float_val.extend(flat)
    elif kind == np.float64:
        proto.double_val.extend(flat)
    elif kind == np.int64:
        proto.int64_val.extend(flat)
    elif kind == np.uint32:
        proto.uint32_val.extend(flat)
    elif kind == np.uint64:
        proto.uint64_val.extend(flat)
    elif kind == np.bool_:
        proto.bool_val.extend(flat)
    else:
        proto.int_val.extend(flat)
    return proto


class Graph:
    """A GraphDef under construction; each method adds one node and returns its name."""

    def __init__(self):
        self.proto = graph_pb2.GraphDef()
        self.proto.versions.producer = 2474

    def node(self, name, op, inputs=(), **attrs):
        node = self.proto.node.add(name=name, op=op)
        node.input.extend(inputs)
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value)
        return name

    def const(self, name, value, dtype=None, typed_field=False):
        array = np.asarray(value, dtype=dtype)
        return self.node(name, "Const", dtype=type_attr(array.dtype),
                         value=graph_pb2.AttrValue(tensor=tensor_proto(array, typed_field)))

    def placeholder(self, name, dtype, shape=None, op="Placeholder", inputs=()):
        attrs = {"dtype": type_attr(dtype)}
        if shape is not None:
            attrs["shape"] = shape_attr(shape)
        return self.node(name, op, inputs, **attrs)

    def op(self, name, op, inputs, dtype, **attrs):
        """An op whose dtype attr is T."""
        return self.node(name, op, inputs, T=type_attr(dtype), **attrs)

    def save(self, path):
        path = Path(path)
        path.write_bytes(self.proto.SerializeToString(deterministic=True))
        return path


def type_attr(dtype):
    return graph_pb2.AttrValue(type=dtype_enum(dtype))


def bool_attr(value):
    return graph_pb2.AttrValue(b=value)


def shape_attr(dims):
    """dims: a list with -1 for unknown dims, or "unknown" for unknown rank."""
    attr = graph_pb2.AttrValue()
    attr.shape.SetInParent()
    if dims == "unknown":
        attr.shape.unknown_rank = True
    else:
        for d in dims:
            attr.shape.dim.add().size = d
    return attr


# -- running ------------------------------------------------------------------------------

def run(runner, *args):
    proc = subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert proc.returncode >= 0, f"graphrun-cc died with signal {-proc.returncode}: {proc.stderr}"
    return proc


def ok(runner, *args):
    proc = run(runner, *args)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr}"
    assert proc.stderr == ""
    return proc.stdout


def fails(runner, code, *args):
    """The one stderr line of a run that must exit with `code`."""
    proc = run(runner, *args)
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}: {proc.stderr}"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and proc.stderr.endswith("\n"), f"stderr is not one line: {proc.stderr!r}"
    assert lines[0].startswith("graphrun-cc: ")
    assert proc.stdout == ""
    return lines[0]


def outputs(runner, model, *args):
    """{fetch name: ndarray} from --json output, decoded independently of the runner."""
    stdout = ok(runner, model, *args, "--json")
    assert stdout.endswith("\n") and stdout.count("\n") == 1
    special = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}

    def walk(v):
        return [walk(x) for x in v] if isinstance(v, list) else special.get(v, v) if isinstance(v, str) else v

    result = {}
    for out in json.loads(stdout)["outputs"]:
        dtype = np.dtype(out["dtype"])
        values = walk(out["values"])
        if dtype.kind == "f":
            array = np.array(values, dtype=np.float64).astype(dtype)
        else:
            array = np.array(values, dtype=dtype)
        if array.size == 0:
            array = np.zeros(out["shape"], dtype)
        assert list(array.shape) == out["shape"]
        result[out["name"]] = array
    return result


def output(runner, model, *args):
    """The single fetched value."""
    (value,) = outputs(runner, model, *args).values()
    return value


def assert_same(actual, expected):
    """Equal dtype, shape and bits (any NaN matches any NaN)."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    if expected.dtype.kind == "f":
        both_nan = np.isnan(actual) & np.isnan(expected)
        bits = f"u{expected.dtype.itemsize}"
        assert np.all(both_nan | (actual.view(bits) == expected.view(bits))), (actual, expected)
    else:
        assert np.array_equal(actual, expected), (actual, expected)


def assert_close(actual, expected, rtol=1e-6):
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-30, equal_nan=True)


def binary_graph(tmp_path, op, x, y, dtype=None):
    g = Graph()
    g.const("x", x, dtype)
    g.const("y", y, dtype)
    g.op("z", op, ["x", "y"], np.asarray(x, dtype).dtype)
    return g.save(tmp_path / "model.pb")


def unary_graph(tmp_path, op, x, dtype=None):
    g = Graph()
    g.const("x", x, dtype)
    g.op("z", op, ["x"], np.asarray(x, dtype).dtype)
    return g.save(tmp_path / "model.pb")


def reduction_graph(tmp_path, op, x, axes, keep_dims=False, axes_dtype=np.int32):
    g = Graph()
    g.const("x", x)
    g.const("axes", axes, axes_dtype)
    g.op("z", op, ["x", "axes"], np.asarray(x).dtype, keep_dims=bool_attr(keep_dims),
         Tidx=type_attr(axes_dtype))
    return g.save(tmp_path / "model.pb")


# -- the CLI itself -----------------------------------------------------------------------

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


# -- kernels ------------------------------------------------------------------------------

X23 = np.array([[1.5, -2.0, 0.1], [4.0, 0.0, -7.25]], np.float32)
Y3 = np.array([0.5, 3.0, 0.2], np.float32)


@pytest.mark.parametrize("op, fn", [
    ("Add", np.add), ("AddV2", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
    ("RealDiv", np.divide), ("Maximum", np.maximum), ("Minimum", np.minimum),
])
def test_binary_float_ops_broadcast(runner, tmp_path, op, fn):
    # [2,3] with [3]: IEEE + - * / and max/min are exact, so float32 numpy is the oracle.
    assert_same(output(runner, binary_graph(tmp_path, op, X23, Y3)), fn(X23, Y3))


def test_broadcast_both_sides(runner, tmp_path):
    x = np.arange(6, dtype=np.int32).reshape(2, 1, 3)
    y = np.array([[10], [-1]], np.int32)
    assert_same(output(runner, binary_graph(tmp_path, "Mul", x, y)), x * y)


# Kernel errors: the inputs are fed at run time into placeholders of unknown shape, so
# no runtime could have caught the problem while loading the graph (exit 4, not 3).

def fed_graph(tmp_path, op, inputs, **attrs):
    """Placeholders a, b, ... of unknown shape feeding `op` as node "z" (T from the first)."""
    g = Graph()
    names = []
    for i, dtype in enumerate(inputs):
        names.append(g.placeholder("abcdef"[i], dtype))
    g.op("z", op, names, inputs[0], **attrs)
    return g.save(tmp_path / "model.pb")


def feeds(**values):
    return [arg for name, value in values.items() for arg in ("--feed", f"{name}={json.dumps(value)}")]


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


# -- ops for gradients and training: Pow, Sign, AddN, ReluGrad, shape queries, Range,
# -- BroadcastTo, BroadcastGradientArgs ---------------------------------------------------

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


@pytest.mark.parametrize("dtype, base, exponent", [
    (np.int32, [2, 3, -2, 0, 7, 46341], [10, 3, 3, 0, 1, 2]),
    (np.int8, [3, 2, -2, -1, 1, 0], [5, 7, 7, 9, 100, 3]),
    (np.uint8, [3, 255, 2], [6, 2, 8]),
    (np.int64, [3, -3, 10], [40, 41, 19]),
    (np.uint64, [3, 2], [41, 64]),
])
def test_pow_integers_wrap(runner, tmp_path, dtype, base, exponent):
    base, exponent = np.array(base, dtype), np.array(exponent, dtype)
    # numpy's integer power keeps the low bits, as TensorFlow's does.
    with np.errstate(all="ignore"):
        expected = np.power(base, exponent)
    assert_same(output(runner, binary_graph(tmp_path, "Pow", base, exponent)), expected)


def test_pow_negative_integer_exponent_names_the_node(runner, tmp_path):
    model = fed_graph(tmp_path, "Pow", [np.int32, np.int32])
    line = fails(runner, 4, model, *feeds(a=[2, 3], b=[1, -1]))
    assert line == "graphrun-cc: node 'z' (Pow): integers to negative integer powers are not allowed"


def test_sign(runner, tmp_path):
    x = np.array([-2.5, 0.0, -0.0, 3.5, -np.inf, np.inf, np.nan, 1e-45], np.float32)
    assert_same(output(runner, unary_graph(tmp_path, "Sign", x)), np.sign(x))
    # -0.0 gives +0.0: assert_same compares bits, so say so explicitly too.
    assert np.signbit(output(runner, unary_graph(tmp_path, "Sign", [-0.0], np.float64))).tolist() == [False]
    n = np.array([-128, -1, 0, 9, 127], np.int8)
    assert_same(output(runner, unary_graph(tmp_path, "Sign", n)), np.array([-1, -1, 0, 1, 1], np.int8))
    big = np.array([-(2**63), 2**63 - 1], np.int64)
    assert_same(output(runner, unary_graph(tmp_path, "Sign", big)), np.array([-1, 1], np.int64))


def test_sign_refuses_unsigned(runner, tmp_path):
    line = fails(runner, 3, unary_graph(tmp_path, "Sign", [1, 2], np.uint8))
    assert "node 'z' (Sign): attr 'T' is uint8" in line


def add_n_graph(tmp_path, values, n=None):
    g = Graph()
    names = [g.const(f"x{i}", v) for i, v in enumerate(values)]
    dtype = np.asarray(values[0]).dtype
    g.node("z", "AddN", names, T=type_attr(dtype), N=graph_pb2.AttrValue(i=len(values) if n is None else n))
    return g.save(tmp_path / "model.pb")


def test_add_n_sums_left_to_right(runner, tmp_path):
    # Order matters in float32: (1e8 + -1e8) + 1 is 1, 1e8 + (-1e8 + 1) would be 0.
    a = np.array([1e8, 0.1, 1.0], np.float32)
    b = np.array([-1e8, 0.2, 2.0**-24], np.float32)
    c = np.array([1.0, 0.3, 2.0**-24], np.float32)
    d = np.array([0.5, -0.6, 0.0], np.float32)
    expected = ((a + b) + c) + d
    assert expected[0] == 1.5
    assert_same(output(runner, add_n_graph(tmp_path, [a, b, c, d])), expected)


def test_add_n_integers_wrap_and_one_input(runner, tmp_path):
    a = np.array([[2147483647, -5]], np.int32)
    b = np.array([[1, 5]], np.int32)
    with np.errstate(all="ignore"):
        expected = a + b + b
    assert_same(output(runner, add_n_graph(tmp_path, [a, b, b])), expected)
    assert_same(output(runner, add_n_graph(tmp_path, [np.array([7, -7], np.int64)])), np.array([7, -7], np.int64))
    empty = np.zeros((0, 2), np.float64)
    assert_same(output(runner, add_n_graph(tmp_path, [empty, empty])), empty)


def test_add_n_shapes_must_match(runner, tmp_path):
    model = fed_graph(tmp_path, "AddN", [np.float32, np.float32], N=graph_pb2.AttrValue(i=2))
    line = fails(runner, 4, model, *feeds(a=[1, 2], b=[3]))
    assert line == ("graphrun-cc: node 'z' (AddN): all inputs must have the same shape, "
                    "but input 0 has shape [2] and input 1 has shape [1]")


@pytest.mark.parametrize("n, message", [
    (3, "has 2 data inputs but AddN takes 3"),
    (0, "attr 'N' is 0; AddN needs at least 1"),
    (-(2**63), "attr 'N' is -9223372036854775808"),
    (2**63 - 1, "has 2 data inputs but AddN takes 9223372036854775807"),
])
def test_add_n_count_must_match_n(runner, tmp_path, n, message):
    model = add_n_graph(tmp_path, [np.float32(1), np.float32(2)], n=n)
    assert message in fails(runner, 3, model)


def test_add_n_needs_n(runner, tmp_path):
    g = Graph()
    g.const("a", 1.0, np.float32)
    g.op("z", "AddN", ["a"], np.float32)
    assert "node 'z' (AddN): missing attr 'N'" in fails(runner, 3, g.save(tmp_path / "model.pb"))


def test_add_n_input_dtypes_are_checked(runner, tmp_path):
    g = Graph()
    g.const("a", 1.0, np.float32)
    g.const("b", 1.0, np.float64)
    g.op("z", "AddN", ["a", "b"], np.float32, N=graph_pb2.AttrValue(i=2))
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert "input 1 ('inputs') is float64 from 'b:0' but the node expects float32" in line


def test_relu_grad(runner, tmp_path):
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0, -6.0], np.float32)
    x = np.array([-1.0, 0.0, -0.0, 0.5, np.nan, 2.0], np.float32)
    assert_same(output(runner, binary_graph(tmp_path, "ReluGrad", g, x)), np.where(x > 0, g, np.float32(0)))
    gi = np.array([[5, -5], [7, 9]], np.int16)
    xi = np.array([[1, 0], [-3, 32767]], np.int16)
    assert_same(output(runner, binary_graph(tmp_path, "ReluGrad", gi, xi)), np.array([[5, 0], [0, 9]], np.int16))


def test_relu_grad_shapes_must_match(runner, tmp_path):
    model = fed_graph(tmp_path, "ReluGrad", [np.float32, np.float32])
    line = fails(runner, 4, model, *feeds(a=[[1, 2]], b=[1, 2]))
    assert line == ("graphrun-cc: node 'z' (ReluGrad): gradients and features must have the same shape, "
                    "got [1,2] and [2]")


def test_shape_size_rank(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.uint8)
    g.node("shape", "Shape", ["x"], T=type_attr(np.uint8), out_type=type_attr(np.int32))
    g.node("shape64", "Shape", ["x"], T=type_attr(np.uint8), out_type=type_attr(np.int64))
    g.node("shape_default", "Shape", ["x"], T=type_attr(np.uint8))
    g.node("size", "Size", ["x"], T=type_attr(np.uint8), out_type=type_attr(np.int64))
    g.node("size_default", "Size", ["x"], T=type_attr(np.uint8))
    g.node("rank", "Rank", ["x"], T=type_attr(np.uint8))
    model = g.save(tmp_path / "model.pb")
    for i, value in enumerate((np.zeros((2, 0, 3), np.uint8), np.ones((4, 5), np.uint8), np.uint8(7))):
        np.save(tmp_path / f"x{i}.npy", value)  # JSON cannot say [2,0,3]
        got = outputs(runner, model, "--feed", f"x=@{tmp_path / f'x{i}.npy'}")
        shape = np.array(value.shape, np.int32)
        assert_same(got["shape:0"], shape)
        assert_same(got["shape64:0"], shape.astype(np.int64))
        assert_same(got["shape_default:0"], shape)
        assert_same(got["size:0"], np.int64(value.size))
        assert_same(got["size_default:0"], np.int32(value.size))
        assert_same(got["rank:0"], np.int32(value.ndim))


def test_shape_refuses_other_out_types(runner, tmp_path):
    g = Graph()
    g.const("x", [1.0], np.float32)
    g.node("s", "Shape", ["x"], T=type_attr(np.float32), out_type=type_attr(np.float32))
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert "node 's' (Shape): attr 'out_type' is float32; Shape accepts int32, int64" in line


def test_shape_n(runner, tmp_path):
    g = Graph()
    g.placeholder("a", np.float32)
    g.placeholder("b", np.float32)
    g.node("s", "ShapeN", ["a", "b"], N=graph_pb2.AttrValue(i=2), T=type_attr(np.float32))
    g.node("s64", "ShapeN", ["b"], N=graph_pb2.AttrValue(i=1), T=type_attr(np.float32),
           out_type=type_attr(np.int64))
    model = g.save(tmp_path / "model.pb")
    np.save(tmp_path / "a.npy", np.zeros((2, 0, 3), np.float32))
    got = outputs(runner, model, "--feed", f"a=@{tmp_path / 'a.npy'}", "--feed", "b=1.5",
                  "--fetch", "s:0", "--fetch", "s:1", "--fetch", "s64:0")
    assert_same(got["s:0"], np.array([2, 0, 3], np.int32))
    assert_same(got["s:1"], np.zeros(0, np.int32))
    assert_same(got["s64:0"], np.zeros(0, np.int64))


def test_shape_n_count_must_match_n(runner, tmp_path):
    g = Graph()
    g.const("a", [1.0], np.float32)
    g.node("s", "ShapeN", ["a"], N=graph_pb2.AttrValue(i=2), T=type_attr(np.float32))
    assert "node 's' (ShapeN)" in fails(runner, 3, g.save(tmp_path / "model.pb"))


def range_graph(tmp_path, start, limit, delta, dtype):
    g = Graph()
    for name, value in (("start", start), ("limit", limit), ("delta", delta)):
        g.const(name, value, dtype)
    g.node("r", "Range", ["start", "limit", "delta"], Tidx=type_attr(dtype))
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("dtype, start, limit, delta", [
    (np.int32, 0, 5, 1), (np.int32, 5, 0, -2), (np.int32, -7, 8, 3), (np.int32, 0, 5, -1),
    (np.int64, -(2**40), 2**40, 2**38), (np.uint16, 3, 65535, 4096), (np.int16, 10, 10, 1),
    (np.float32, 1.0, 2.0, 0.25), (np.float32, 0.0, 1.0, 0.1), (np.float32, 10.0, -3.0, -0.7),
    (np.float32, 0.3, 0.9, 0.3), (np.float64, -1.0, 1.0, 0.1), (np.float64, 0.0, 1.0, -0.5),
    # start + delta rounds back to start in float32, so every element is 1e8 (numpy's step is 0)
    (np.float32, 1e8, 1e8 + 10, 1.0),
])
def test_range_matches_numpy_arange(runner, tmp_path, dtype, start, limit, delta):
    typed = [np.asarray(v, dtype)[()] for v in (start, limit, delta)]
    expected = np.arange(*typed, dtype=dtype)
    assert_same(output(runner, range_graph(tmp_path, start, limit, delta, dtype)), expected)


def test_range_count_is_exact_for_narrow_integers(runner, tmp_path):
    # limit - start = 200 does not fit int8, but the count is still 200 (TensorFlow's count);
    # every element does fit.
    expected = np.arange(-100, 100, dtype=np.int64).astype(np.int8)
    assert_same(output(runner, range_graph(tmp_path, -100, 100, 1, np.int8)), expected)
    expected = np.arange(0, 255, 2, dtype=np.int64).astype(np.uint8)
    assert_same(output(runner, range_graph(tmp_path, 0, 255, 2, np.uint8)), expected)
    # An unsigned range that would go down is empty.
    assert_same(output(runner, range_graph(tmp_path, 5, 0, 1, np.uint8)), np.zeros(0, np.uint8))


@pytest.mark.parametrize("dtype, values, message", [
    (np.int32, (1, 5, 0), "delta must not be 0"),
    (np.float32, (0.0, 1.0, 0.0), "delta must not be 0"),
    (np.float32, (0.0, np.nan, 1.0), "cannot compute the length"),
    (np.float64, (0.0, np.inf, 1.0), "2**63 or more elements"),
    (np.float32, (-3e38, 3e38, 1e-30), "2**63 or more elements"),
    (np.float64, (0.0, 1e300, 1e-300), "2**63 or more elements"),
    (np.float64, (0.0, 1e12, 1.0), "over the limit of"),
    (np.int64, (0, 2**62, 1), "over the limit of"),
    (np.int32, ([0, 1], 5, 1), "start must be a scalar, got shape [2]"),
])
def test_range_errors(runner, tmp_path, dtype, values, message):
    g = Graph()
    args = []
    for name, value in zip(("start", "limit", "delta"), values):
        g.placeholder(name, dtype)
        path = tmp_path / f"{name}.npy"
        np.save(path, np.asarray(value, dtype))  # .npy carries nan and inf, which JSON cannot
        args += ["--feed", f"{name}=@{path}"]
    g.node("z", "Range", ["start", "limit", "delta"], Tidx=type_attr(dtype))
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), *args)
    assert line.startswith("graphrun-cc: node 'z' (Range): ") and message in line, line


@pytest.mark.parametrize("x, shape", [
    (np.array([1, 2, 3], np.int32), [2, 3]),
    (np.array([[1.5], [-2.0]], np.float32), [2, 3]),
    (np.float64(4.5), [2, 2]),
    (np.array([True, False]), [3, 1, 2]),
    (np.arange(6, dtype=np.int8).reshape(2, 1, 3), [4, 2, 5, 3]),
    (np.array([[7]], np.uint64), [0, 3]),
    (np.zeros((0, 1), np.int16), [2, 0, 4]),
    (np.array([1, 2], np.int64), [2]),
])
def test_broadcast_to_matches_numpy(runner, tmp_path, x, shape):
    for shape_dtype in (np.int32, np.int64):
        g = Graph()
        g.const("x", x)
        g.const("shape", shape, shape_dtype)
        g.op("z", "BroadcastTo", ["x", "shape"], np.asarray(x).dtype, Tidx=type_attr(shape_dtype))
        assert_same(output(runner, g.save(tmp_path / "model.pb")), np.broadcast_to(x, shape))


@pytest.mark.parametrize("x, shape", [
    ([1, 2, 3], [3, 2]),   # a dim of 3 cannot become 2
    ([1, 2, 3], [1]),      # nor 1: broadcasting goes one way only
    ([[1, 2]], [2]),       # the target has a lower rank
    ([1], [-1]),
])
def test_broadcast_to_errors(runner, tmp_path, x, shape):
    model = fed_graph(tmp_path, "BroadcastTo", [np.float32, np.int32])
    line = fails(runner, 4, model, *feeds(a=x, b=shape))
    expected_in = "[" + ",".join(map(str, np.shape(x))) + "]"
    assert line == (f"graphrun-cc: node 'z' (BroadcastTo): cannot broadcast {expected_in} to "
                    f"[{','.join(map(str, shape))}]")


@pytest.mark.parametrize("s0, s1, r0, r1", [
    ([2, 1, 3], [3], [1], [0, 1]),          # TF's documented example
    ([2, 3, 5], [1], [], [0, 1, 2]),
    ([4, 1], [1, 5], [1], [0]),
    ([], [2, 2], [0, 1], []),
    ([1, 3], [1, 3], [], []),               # equal shapes: nothing to reduce
    ([2, 1, 1], [1, 1], [1, 2], [0, 1, 2]),  # a dim where both are 1 is listed for both
    ([0, 4], [1, 4], [], [0]),
])
def test_broadcast_gradient_args(runner, tmp_path, s0, s1, r0, r1):
    for dtype in (np.int32, np.int64):
        g = Graph()
        g.const("s0", np.array(s0, dtype))
        g.const("s1", np.array(s1, dtype))
        g.op("args", "BroadcastGradientArgs", ["s0", "s1"], dtype)
        got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "args:0", "--fetch", "args:1")
        assert_same(got["args:0"], np.array(r0, dtype))
        assert_same(got["args:1"], np.array(r1, dtype))


def test_broadcast_gradient_args_refuses_incompatible_shapes(runner, tmp_path):
    model = fed_graph(tmp_path, "BroadcastGradientArgs", [np.int32, np.int32])
    line = fails(runner, 4, model, *feeds(a=[2, 3], b=[4]), "--fetch", "z:1")
    assert line == ("graphrun-cc: node 'z' (BroadcastGradientArgs): "
                    "shapes [2,3] and [4] are not broadcast-compatible")


def test_cast(runner, tmp_path):
    g = Graph()
    g.const("f", [1.9, -1.9, 0.5, -0.0, 300.7], np.float32)
    g.const("b", [True, False], np.bool_)
    g.const("i", [300, -1, 65536 + 7], np.int32)
    for name, source, src, dst in [("to_int", "f", np.float32, np.int32), ("to_bool", "f", np.float32, np.bool_),
                                   ("from_bool", "b", np.bool_, np.float64), ("narrow", "i", np.int32, np.uint8),
                                   ("to_double", "f", np.float32, np.float64)]:
        g.node(name, "Cast", [source], SrcT=type_attr(src), DstT=type_attr(dst), Truncate=bool_attr(False))
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    f = np.array([1.9, -1.9, 0.5, -0.0, 300.7], np.float32)
    assert_same(got["to_int:0"], np.trunc(f).astype(np.int32))
    assert_same(got["to_bool:0"], f != 0)
    assert_same(got["from_bool:0"], np.array([1.0, 0.0]))
    assert_same(got["narrow:0"], np.array([300, -1, 65543], np.int32).astype(np.uint8))
    assert_same(got["to_double:0"], f.astype(np.float64))


def test_fill(runner, tmp_path):
    g = Graph()
    g.const("dims", [2, 3], np.int32)
    g.const("v", 7.5, np.float32)
    g.op("z", "Fill", ["dims", "v"], np.float32)
    assert_same(output(runner, g.save(tmp_path / "model.pb")), np.full((2, 3), 7.5, np.float32))


def test_fill_with_huge_dims_fails_cleanly(runner, tmp_path):
    g = Graph()
    g.const("dims", [1_000_000_000, 1_000_000_000, 1_000_000_000], np.int64)
    g.const("v", 1.0, np.float32)
    g.op("z", "Fill", ["dims", "v"], np.float32, index_type=type_attr(np.int64))
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line.startswith("graphrun-cc: node 'z' (Fill): ") and "over the limit of" in line


def test_const_typed_fields_fill_rule(runner, tmp_path):
    g = Graph()
    shape5 = graph_pb2.TensorShapeProto(dim=[graph_pb2.TensorShapeProto.Dim(size=5)])
    cases = {
        "f": (DT.DT_FLOAT, {"float_val": [1.0, 2.0]}, np.array([1, 2, 2, 2, 2], np.float32)),
        "z": (DT.DT_DOUBLE, {}, np.zeros(5)),
        "i8": (DT.DT_INT8, {"int_val": [-1, 3]}, np.array([-1, 3, 3, 3, 3], np.int8)),
        "u16": (DT.DT_UINT16, {"int_val": [65535]}, np.full(5, 65535, np.uint16)),
        "i64": (DT.DT_INT64, {"int64_val": [2**40]}, np.full(5, 2**40, np.int64)),
        "u32": (DT.DT_UINT32, {"uint32_val": [2**32 - 1, 0]}, np.array([2**32 - 1, 0, 0, 0, 0], np.uint32)),
        "u64": (DT.DT_UINT64, {"uint64_val": [2**64 - 1]}, np.full(5, 2**64 - 1, np.uint64)),
        "b": (DT.DT_BOOL, {"bool_val": [False, True]}, np.array([False, True, True, True, True])),
    }
    for name, (dtype, fields, _) in cases.items():
        tensor = graph_pb2.TensorProto(dtype=dtype, tensor_shape=shape5, **fields)
        g.node(name, "Const", dtype=graph_pb2.AttrValue(type=dtype), value=graph_pb2.AttrValue(tensor=tensor))
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    for name, (_, _, expected) in cases.items():
        assert_same(got[f"{name}:0"], expected)


def test_passthrough_ops_and_control_inputs(runner, tmp_path):
    g = Graph()
    g.const("x", [1, 2], np.int64)
    g.node("first", "NoOp")
    g.op("i", "Identity", ["x", "^first"], np.int64)
    g.op("s", "StopGradient", ["i"], np.int64)
    assert ok(runner, g.save(tmp_path / "model.pb")) == "s:0 int64 [2] = [1, 2]\n"


def test_placeholder_with_default(runner, tmp_path):
    g = Graph()
    g.const("d", [1.0, 2.0, 3.0], np.float32)
    g.placeholder("p", np.float32, [-1], op="PlaceholderWithDefault", inputs=["d"])
    g.op("y", "Identity", ["p"], np.float32)
    model = g.save(tmp_path / "model.pb")
    assert ok(runner, model) == "y:0 float32 [3] = [1.0, 2.0, 3.0]\n"
    assert ok(runner, model, "--feed", "p=[7, -8]") == "y:0 float32 [2] = [7.0, -8.0]\n"


def variable_graph(g, name="v", dtype=np.float32, shape=(2,)):
    return g.node(name, "VariableV2", dtype=type_attr(dtype), shape=shape_attr(list(shape)),
                  container=graph_pb2.AttrValue(s=b""), shared_name=graph_pb2.AttrValue(s=b""))


def test_variables_assign_then_update_through_control_inputs(runner, tmp_path):
    g = Graph()
    variable_graph(g)
    g.const("init", [1.0, 2.0], np.float32)
    g.const("step", [0.5, 0.5], np.float32)
    g.op("v/Assign", "Assign", ["v", "init"], np.float32)
    g.op("inc", "AssignAdd", ["v", "step", "^v/Assign"], np.float32)
    g.op("dec", "AssignSub", ["v", "init", "^inc"], np.float32)
    # The ref is read when its consumer runs: after dec, although v was ready first.
    g.op("final", "Identity", ["v", "^dec"], np.float32)
    assert ok(runner, g.save(tmp_path / "model.pb")) == "final:0 float32 [2] = [0.5, 0.5]\n"


def test_uninitialized_variable_exits_4(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    g.op("w/read", "Identity", ["w"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"


def test_assign_shape_is_validated(runner, tmp_path):
    g = Graph()
    variable_graph(g, shape=(2,))
    g.placeholder("value", np.float32)
    g.op("set", "Assign", ["v", "value"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), *feeds(value=[1, 2, 3]))
    assert "node 'set' (Assign)" in line


def test_ref_input_must_name_a_variable(runner, tmp_path):
    g = Graph()
    g.const("c", [1.0], np.float32)
    g.op("set", "Assign", ["c", "c"], np.float32)
    assert "must name a variable" in fails(runner, 3, g.save(tmp_path / "model.pb"))


def apply_gradient_descent_graph(dtype, init, alpha, delta):
    g = Graph()
    variable_graph(g, dtype=dtype, shape=np.shape(init))
    g.const("init", init, dtype)
    g.const("alpha", alpha, dtype)
    g.const("delta", delta, dtype)
    g.op("v/Assign", "Assign", ["v", "init"], dtype)
    g.op("step1", "ApplyGradientDescent", ["v", "alpha", "delta", "^v/Assign"], dtype,
         use_locking=bool_attr(False))
    g.op("step2", "ApplyGradientDescent", ["v", "alpha", "delta", "^step1"], dtype)
    g.op("read", "Identity", ["v", "^step2"], dtype)
    return g


def test_apply_gradient_descent_updates_the_variable(runner, tmp_path):
    init = np.array([[1.0, 2.0], [0.1, -3.0]], np.float32)
    alpha = np.float32(0.1)
    delta = np.array([[2.0, -4.0], [0.3, 1e-3]], np.float32)
    model = apply_gradient_descent_graph(np.float32, init, alpha, delta).save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "step1", "--fetch", "read")
    once = init - alpha * delta  # float32 throughout: the product is rounded before subtracting
    assert_same(got["step1:0"], once)
    assert_same(got["read:0"], once - alpha * delta)


def test_apply_gradient_descent_integers_and_scalars(runner, tmp_path):
    init = np.array([2147483647, 10], np.int32)
    with np.errstate(all="ignore"):
        expected = init - np.int32(-1) * np.array([1, 3], np.int32) - np.int32(-1) * np.array([1, 3], np.int32)
    g = apply_gradient_descent_graph(np.int32, init, -1, [1, 3])
    assert_same(output(runner, g.save(tmp_path / "model.pb"), "--fetch", "read"), expected)
    g = apply_gradient_descent_graph(np.float64, 3.0, 0.25, 2.0)
    assert_same(output(runner, g.save(tmp_path / "model.pb"), "--fetch", "read"), np.float64(2.0))


def test_apply_gradient_descent_needs_an_initialized_variable(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    g.const("alpha", 0.5, np.float32)
    g.const("delta", [1.0, 1.0], np.float32)
    g.op("step", "ApplyGradientDescent", ["w", "alpha", "delta"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"


@pytest.mark.parametrize("alpha, delta, message", [
    (0.5, [1.0, 2.0, 3.0], "variable 'v' has shape [2] but delta has shape [3]"),
    ([0.5], [1.0, 2.0], "hyper-parameter alpha for variable 'v' must be a scalar, got shape [1]"),
])
def test_apply_gradient_descent_checks_shapes(runner, tmp_path, alpha, delta, message):
    g = Graph()
    variable_graph(g)
    g.const("init", [1.0, 2.0], np.float32)
    g.op("v/Assign", "Assign", ["v", "init"], np.float32)
    g.placeholder("alpha", np.float32)
    g.placeholder("delta", np.float32)
    g.op("step", "ApplyGradientDescent", ["v", "alpha", "delta", "^v/Assign"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), *feeds(alpha=alpha, delta=delta))
    assert line == f"graphrun-cc: node 'step' (ApplyGradientDescent): {message}"


def test_apply_gradient_descent_ref_must_name_a_variable(runner, tmp_path):
    g = Graph()
    g.const("c", [1.0], np.float32)
    g.op("step", "ApplyGradientDescent", ["c", "c", "c"], np.float32)
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert "input 0 ('var') must name a variable node directly" in line


def test_long_chain_runs_without_recursion(runner, tmp_path):
    g = Graph()
    g.const("one", 1, np.int32)
    g.const("n0", 0, np.int32)
    for i in range(1, 100_000):
        node = g.proto.node.add(name=f"n{i}", op="AddV2")
        node.input.extend([f"n{i - 1}", "one"])
        node.attr["T"].type = DT.DT_INT32
    assert ok(runner, g.save(tmp_path / "chain.pb")) == "n99999:0 int32 [] = 99999\n"


# -- training ops: comparisons, logic, selection, softmax and losses, ArgMax/ArgMin, OneHot,
# -- Min/Prod, Log1p, SquaredDifference, ZerosLike/OnesLike, ApplyMomentum, ApplyAdam ----------

NAN_PAIRS = (np.array([1.0, 2.0, np.nan, -0.0, 3.0, np.nan], np.float32),
             np.array([2.0, 2.0, 1.0, 0.0, -np.inf, np.nan], np.float32))


@pytest.mark.parametrize("op, fn", [
    ("Equal", np.equal), ("NotEqual", np.not_equal), ("Greater", np.greater),
    ("GreaterEqual", np.greater_equal), ("Less", np.less), ("LessEqual", np.less_equal),
])
def test_comparisons_follow_ieee(runner, tmp_path, op, fn):
    # NaN is unequal to everything (NotEqual true, the rest false); -0.0 equals 0.0.
    x, y = NAN_PAIRS
    with np.errstate(invalid="ignore"):
        assert_same(output(runner, binary_graph(tmp_path, op, x, y)), fn(x, y))


def test_comparisons_broadcast_integers_and_bools(runner, tmp_path):
    a, b = np.array([[1], [5]], np.int64), np.array([0, 1, 5], np.int64)
    g = Graph()
    g.const("a", a)
    g.const("b", b)
    g.const("p", [True, False])
    g.const("q", [[True], [False]])
    g.node("gt", "Greater", ["a", "b"], T=type_attr(np.int64))
    g.node("eq", "Equal", ["p", "q"], T=type_attr(np.bool_))
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    assert_same(got["gt:0"], a > b)
    assert_same(got["eq:0"], np.array([[True, False], [False, True]]))


def test_orderings_refuse_bool(runner, tmp_path):
    line = fails(runner, 3, binary_graph(tmp_path, "Less", [True], [False]))
    assert "attr 'T' is bool; Less accepts" in line


def test_logical_ops(runner, tmp_path):
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    g = Graph()
    g.const("p", p)
    g.const("q", q)
    g.const("f", False)
    g.node("and", "LogicalAnd", ["p", "q"])
    g.node("or", "LogicalOr", ["p", "f"])
    g.node("not", "LogicalNot", ["q"])
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    assert_same(got["and:0"], p & q)
    assert_same(got["or:0"], p)
    assert_same(got["not:0"], ~q)


def test_logical_ops_take_only_bools(runner, tmp_path):
    g = Graph()
    g.const("x", [1], np.int32)
    g.node("not", "LogicalNot", ["x"])
    line = fails(runner, 3, g.save(tmp_path / "model.pb"))
    assert line.endswith("node 'not' (LogicalNot): input 0 ('x') is int32 from 'x:0' but the node expects bool")


def select_graph(tmp_path, op, condition, t, e):
    g = Graph()
    g.const("c", condition, np.bool_)
    g.const("t", t)
    g.const("e", e)
    g.op("z", op, ["c", "t", "e"], np.asarray(t).dtype)
    return g.save(tmp_path / "model.pb")


T22 = np.array([[1, 2], [3, 4]], np.int32)
E22 = -T22


@pytest.mark.parametrize("condition, expected", [
    (True, T22), (False, E22),                                  # a scalar picks a whole tensor
    ([False, True], [[-1, -2], [3, 4]]),                        # a vector picks rows
    ([[True, False], [False, True]], [[1, -2], [-3, 4]]),       # t's shape picks elements
])
def test_select_v1(runner, tmp_path, condition, expected):
    model = select_graph(tmp_path, "Select", condition, T22, E22)
    assert_same(output(runner, model), np.array(expected, np.int32))


@pytest.mark.parametrize("condition, t, e, message", [
    ([True, False, True], T22, E22, "condition [3] must be a scalar, a vector over t's first dim, or t's shape [2,2]"),
    ([[True, False]], T22, E22, "condition [1,2] must be a scalar"),
    (True, T22, [1, 2], "t [2,2] and e [2] must have the same shape"),
])
def test_select_v1_refuses_other_shapes(runner, tmp_path, condition, t, e, message):
    line = fails(runner, 4, select_graph(tmp_path, "Select", condition, np.asarray(t, np.int32),
                                         np.asarray(e, np.int32)))
    assert line.startswith(f"graphrun-cc: node 'z' (Select): {message}")


def test_select_v2_broadcasts_all_three(runner, tmp_path):
    c = np.array([[True], [False]])
    t = np.array([1.5, 2.5, 3.5], np.float64)
    e = np.float64(-1.0)
    assert_same(output(runner, select_graph(tmp_path, "SelectV2", c, t, e)), np.where(c, t, e))
    line = fails(runner, 4, select_graph(tmp_path, "SelectV2", [True, False], t, e))
    assert "condition [2], t [3] and e [] cannot be broadcast together" in line


def softmax64(x):
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def test_softmax_and_log_softmax_over_the_last_axis(runner, tmp_path):
    # Rank 3, a row of huge logits (exp would overflow without the max subtracted), 20 classes.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 20)).astype(np.float32) * 4
    x[1, 2] += 1e4
    g = Graph()
    g.const("x", x)
    g.op("p", "Softmax", ["x"], np.float32)
    g.op("logp", "LogSoftmax", ["x"], np.float32)
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    assert_close(got["p:0"], np.exp(softmax64(x)).astype(np.float32), rtol=1e-5)
    assert_close(got["logp:0"], softmax64(x).astype(np.float32), rtol=1e-5)


def test_softmax_of_a_row_with_nan_is_nan(runner, tmp_path):
    x = np.array([[1.0, np.nan, 2.0], [0.0, 1.0, 2.0]])
    got = output(runner, unary_graph(tmp_path, "Softmax", x))
    assert np.isnan(got[0]).all() and np.allclose(got[1], np.exp(softmax64(x[1])))


def test_softmax_needs_a_dim(runner, tmp_path):
    g = Graph()
    g.placeholder("x", np.float32)
    g.op("p", "Softmax", ["x"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--feed", "x=1")
    assert line == "graphrun-cc: node 'p' (Softmax): logits must have at least one dim, got shape []"


LOGITS = np.array([[1.0, 2.0, 3.0, 0.5], [-1.0, 0.0, 2.0, 2.0], [50.0, -50.0, 0.0, 0.0]], np.float32)


def xent_graph(tmp_path, op, labels, labels_dtype=None):
    g = Graph()
    g.placeholder("x", np.float32)
    g.placeholder("labels", labels_dtype or np.float32)
    attrs = {"Tlabels": type_attr(labels_dtype)} if labels_dtype else {}
    g.op("xent", op, ["x", "labels"], np.float32, **attrs)
    return g.save(tmp_path / "model.pb"), ["--feed", f"x={json.dumps(LOGITS.tolist())}",
                                           "--feed", f"labels={json.dumps(np.asarray(labels).tolist())}"]


def test_softmax_cross_entropy(runner, tmp_path):
    labels = np.array([[0, 0, 1, 0], [0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0]], np.float32)
    model, args = xent_graph(tmp_path, "SoftmaxCrossEntropyWithLogits", labels)
    got = outputs(runner, model, *args, "--fetch", "xent:0", "--fetch", "xent:1")
    log_p = softmax64(LOGITS)
    assert_close(got["xent:0"], (-(labels * log_p).sum(axis=-1)).astype(np.float32), rtol=1e-5)
    assert_close(got["xent:1"], (np.exp(log_p) - labels).astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize("labels_dtype", [np.int32, np.int64])
def test_sparse_softmax_cross_entropy(runner, tmp_path, labels_dtype):
    labels = np.array([2, 0, 0], labels_dtype)
    model, args = xent_graph(tmp_path, "SparseSoftmaxCrossEntropyWithLogits", labels, labels_dtype)
    got = outputs(runner, model, *args, "--fetch", "xent:0", "--fetch", "xent:1")
    log_p = softmax64(LOGITS)
    backprop = np.exp(log_p)
    backprop[[0, 1, 2], labels] -= 1
    assert_close(got["xent:0"], (-log_p[[0, 1, 2], labels]).astype(np.float32), rtol=1e-5)
    np.testing.assert_allclose(got["xent:1"], backprop.astype(np.float32), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op, labels, labels_dtype, message", [
    ("SparseSoftmaxCrossEntropyWithLogits", [2, 4, 0], np.int64, "label 4 (row 1) is outside [0, 4)"),
    ("SparseSoftmaxCrossEntropyWithLogits", [2, -1, 0], np.int32, "label -1 (row 1) is outside [0, 4)"),
    ("SparseSoftmaxCrossEntropyWithLogits", [2, 1], np.int32, "labels [2] must be [batch] for logits [3,4]"),
    ("SoftmaxCrossEntropyWithLogits", [[1.0, 0.0]], None, "logits [3,4] and labels [1,2] must have the same shape"),
])
def test_cross_entropy_errors_name_the_node(runner, tmp_path, op, labels, labels_dtype, message):
    model, args = xent_graph(tmp_path, op, labels, labels_dtype)
    assert fails(runner, 4, model, *args) == f"graphrun-cc: node 'xent' ({op}): {message}"


def test_l2_loss_sums_as_numpy_does(runner, tmp_path):
    # 1000 float32 squares: numpy's pairwise summation gives different low bits from a
    # left-to-right sum; the runner sums the same way, so the results are identical.
    x = np.random.default_rng(1).normal(size=(10, 100)).astype(np.float32)
    expected = np.sum(x * x, dtype=np.float32) / np.float32(2)
    left_to_right = np.float32(0)
    for v in (x * x).ravel():
        left_to_right = np.float32(left_to_right + v)
    assert left_to_right / np.float32(2) != expected  # the data tells the two apart
    assert_same(output(runner, unary_graph(tmp_path, "L2Loss", x)), expected)


def arg_graph(tmp_path, op, x, axis, output_type=None):
    g = Graph()
    g.const("x", x)
    g.const("axis", axis, np.int32)
    attrs = {"output_type": type_attr(output_type)} if output_type else {}
    g.op("z", op, ["x", "axis"], np.asarray(x).dtype, **attrs)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("op, fn", [("ArgMax", np.argmax), ("ArgMin", np.argmin)])
def test_arg_extremes_take_the_first_index(runner, tmp_path, op, fn):
    x = np.array([[3, 1, 3, 0], [5, 5, -1, -1], [2, np.nan, 7, np.nan]], np.float32)
    for axis, output_type in ((1, None), (-2, np.int32), (0, np.int64)):
        got = output(runner, arg_graph(tmp_path, op, x, axis, output_type))
        assert_same(got, fn(x, axis=axis).astype(output_type or np.int64))  # numpy: the first NaN wins


def test_arg_max_of_bools_and_unsigned(runner, tmp_path):
    flags = np.array([[False, True, True], [False, False, False]])
    assert_same(output(runner, arg_graph(tmp_path, "ArgMax", flags, 1)), np.array([1, 0], np.int64))
    small = np.array([200, 3, 255, 255], np.uint8)
    assert_same(output(runner, arg_graph(tmp_path, "ArgMin", small, 0)), np.int64(1))


@pytest.mark.parametrize("x, axis, message", [
    (np.zeros((2, 0), np.float32), 1, "cannot take ArgMax along axis 1, which is empty in shape [2,0]"),
    (np.zeros((2, 3), np.float32), 2, "axis 2 is out of range for a tensor of rank 2"),
    (np.float32(1), 0, "the input must have at least one dim, got shape []"),
])
def test_arg_max_errors(runner, tmp_path, x, axis, message):
    assert fails(runner, 4, arg_graph(tmp_path, "ArgMax", x, axis)) == f"graphrun-cc: node 'z' (ArgMax): {message}"


def one_hot_graph(tmp_path, indices, depth, on, off, axis=None):
    g = Graph()
    g.const("i", indices)
    g.const("depth", depth, np.int32)
    g.const("on", on)
    g.const("off", off)
    attrs = {"TI": type_attr(np.asarray(indices).dtype)}
    if axis is not None:
        attrs["axis"] = graph_pb2.AttrValue(i=axis)
    g.op("h", "OneHot", ["i", "depth", "on", "off"], np.asarray(on).dtype, **attrs)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_on_every_axis(runner, tmp_path, axis):
    indices = np.array([[0, 2, -1], [3, 1, 1]], np.int64)  # -1 and 3 are out of range: all off
    hot = np.where(indices[..., None] == np.arange(3), np.float64(2.5), np.float64(-1))
    expected = hot if axis in (None, -1) else np.moveaxis(hot, -1, axis)
    assert_same(output(runner, one_hot_graph(tmp_path, indices, 3, 2.5, -1.0, axis)), expected)


def test_one_hot_uint8_indices_and_bool_values(runner, tmp_path):
    got = output(runner, one_hot_graph(tmp_path, np.array([255, 1], np.uint8), 2, True, False))
    assert_same(got, np.array([[False, False], [False, True]]))


@pytest.mark.parametrize("depth, on, axis, message", [
    (-1, 1.0, None, "depth must not be negative, got -1"),
    (3, [1.0], None, "on_value must be a scalar, got shape [1]"),
    (3, 1.0, 3, "axis 3 is out of range for indices of rank 1"),
])
def test_one_hot_errors(runner, tmp_path, depth, on, axis, message):
    model = one_hot_graph(tmp_path, np.array([0, 1], np.int32), depth, np.asarray(on, np.float32),
                          np.float32(0), axis)
    assert fails(runner, 4, model) == f"graphrun-cc: node 'h' (OneHot): {message}"


def test_one_hot_axis_below_minus_one_is_an_invalid_model(runner, tmp_path):
    model = one_hot_graph(tmp_path, np.array([0], np.int32), 2, np.float32(1), np.float32(0), axis=-2)
    assert "attr 'axis' is -2; OneHot needs at least -1" in fails(runner, 3, model)


def test_min_and_prod(runner, tmp_path):
    x = np.array([[3.0, -1.0, np.nan], [0.5, 7.0, -4.0]], np.float32)
    assert_same(output(runner, reduction_graph(tmp_path, "Min", x, 1, keep_dims=True)),
                np.array([[np.nan], [-4.0]], np.float32))
    n = np.array([[2, -3, 4], [100, 100, 100]], np.int32)
    with np.errstate(over="ignore"):
        assert_same(output(runner, reduction_graph(tmp_path, "Prod", n, [0, 1])), np.prod(n, dtype=np.int32))
    assert_same(output(runner, reduction_graph(tmp_path, "Prod", n, 1)), np.prod(n, axis=1, dtype=np.int32))
    empty = np.zeros((0, 2), np.float64)
    assert_same(output(runner, reduction_graph(tmp_path, "Prod", empty, 0)), np.ones(2))
    assert_same(output(runner, reduction_graph(tmp_path, "Min", empty, 0)), np.full(2, np.inf))
    assert_same(output(runner, reduction_graph(tmp_path, "Min", np.zeros((0,), np.uint16), 0)), np.uint16(65535))


def test_log1p_and_squared_difference(runner, tmp_path):
    x = np.array([1e-10, 0.5, -0.5, 3.0], np.float64)
    assert_close(output(runner, unary_graph(tmp_path, "Log1p", x)), np.log1p(x), rtol=1e-15)
    a, b = np.array([1.5, -2.0], np.float32), np.array([[0.25], [4.0]], np.float32)
    assert_same(output(runner, binary_graph(tmp_path, "SquaredDifference", a, b)), np.square(a - b))
    big = np.array([100, -100], np.int8)
    with np.errstate(over="ignore"):
        expected = np.square(big - np.int8(-100))
    assert_same(output(runner, binary_graph(tmp_path, "SquaredDifference", big, np.int8(-100))), expected)
    assert "SquaredDifference accepts" in fails(runner, 3, binary_graph(tmp_path, "SquaredDifference", [1], [2],
                                                                          np.uint8))


@pytest.mark.parametrize("x", [np.array([[1, 2], [3, 4]], np.int64), np.array([1.5, np.nan], np.float32),
                               np.array([True, False]), np.zeros((0, 3), np.uint32)])
def test_zeros_like_and_ones_like(runner, tmp_path, x):
    g = Graph()
    g.const("x", x)
    g.op("z", "ZerosLike", ["x"], x.dtype)
    g.op("o", "OnesLike", ["x"], x.dtype)
    got = outputs(runner, g.save(tmp_path / "model.pb"))
    assert_same(got["z:0"], np.zeros_like(x))
    assert_same(got["o:0"], np.ones_like(x))


def optimizer_graph(op, dtype, variables, inputs, **attrs):
    """Variables initialized from constants, then `op` twice on them (step1, step2), then reads."""
    g = Graph()
    assigns = []
    for name, value in variables.items():
        variable_graph(g, name, dtype, np.shape(value))
        g.const(f"{name}/init", value, dtype)
        assigns.append(g.op(f"{name}/Assign", "Assign", [name, f"{name}/init"], dtype))
    names = []
    for i, value in enumerate(inputs):
        if isinstance(value, str):  # a placeholder's name: fed at run time
            names.append(g.placeholder(value, dtype))
        else:
            names.append(g.const(f"in{i}", value, dtype))
    refs = list(variables)
    g.op("step1", op, refs + names + ["^" + a for a in assigns], dtype, **attrs)
    g.op("step2", op, refs + names + ["^step1"], dtype, **attrs)
    for name in variables:
        g.op(f"{name}/read", "Identity", [name, "^step2"], dtype)
    return g


def test_apply_momentum_matches_numpy_bit_for_bit(runner, tmp_path):
    w0 = np.array([1.0, -2.0, 0.3], np.float32)
    a0 = np.array([0.5, 0.5, -0.1], np.float32)
    lr, grad, mom = np.float32(0.1), np.array([2.0, -4.0, 0.7], np.float32), np.float32(0.9)
    for nesterov in (False, True):
        g = optimizer_graph("ApplyMomentum", np.float32, {"w": w0, "acc": a0}, [lr, grad, mom],
                            use_nesterov=bool_attr(nesterov))
        got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "w/read", "--fetch", "acc/read")
        w, a = w0, a0
        for _ in range(2):  # float32 numpy, in Python's (TensorFlow's) order of rounding
            a = a * mom + grad
            w = w - (grad * lr + a * mom * lr if nesterov else a * lr)
        assert_same(got["w/read:0"], w)
        assert_same(got["acc/read:0"], a)


def test_apply_momentum_on_integers_wraps(runner, tmp_path):
    g = optimizer_graph("ApplyMomentum", np.int32, {"w": [2**31 - 1, 0], "acc": [1, 1]},
                        [np.int32(-1), [1, 2], np.int32(2)])
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "w/read")
    with np.errstate(over="ignore"):
        w, a = np.array([2**31 - 1, 0], np.int32), np.array([1, 1], np.int32)
        for _ in range(2):
            a = a * np.int32(2) + np.array([1, 2], np.int32)
            w = w - a * np.int32(-1)
    assert_same(got["w/read:0"], w)


def adam_numpy(w, m, v, grad, steps, lr, beta1, beta2, eps, nesterov=False):
    """Float32 numpy Adam in Python's order of rounding; beta powers as the optimizer keeps them."""
    one = np.float32(1)
    b1p, b2p = beta1, beta2
    for _ in range(steps):
        lr_t = lr * np.sqrt(one - b2p) / (one - b1p)
        m = beta1 * m + (one - beta1) * grad
        v = beta2 * v + (one - beta2) * grad * grad
        direction = beta1 * m + (one - beta1) * grad if nesterov else m
        w = w - lr_t * direction / (np.sqrt(v) + eps)
        b1p, b2p = b1p * beta1, b2p * beta2
    return w, m, v


@pytest.mark.parametrize("nesterov", [False, True])
def test_apply_adam_matches_numpy_bit_for_bit(runner, tmp_path, nesterov):
    w0 = np.array([1.0, -1.0, 0.5, 3.0], np.float32)
    zeros = np.zeros(4, np.float32)
    grad = np.array([0.5, -2.0, 0.0, 1e-3], np.float32)
    lr, beta1, beta2, eps = np.float32(0.01), np.float32(0.9), np.float32(0.999), np.float32(1e-8)
    # The graph feeds the same beta powers to both steps; numpy's second step uses the
    # squared ones, so run one step at a time: step1 only, through --fetch step1.
    g = optimizer_graph("ApplyAdam", np.float32, {"w": w0, "m": zeros, "s": zeros},
                        [beta1, beta2, lr, beta1, beta2, eps, grad], use_nesterov=bool_attr(nesterov))
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "step1")
    w, _, _ = adam_numpy(w0, zeros, zeros, grad, 1, lr, beta1, beta2, eps, nesterov)
    assert_same(got["step1:0"], w)


def test_apply_adam_refuses_integers(runner, tmp_path):
    g = optimizer_graph("ApplyAdam", np.int32, {"w": [1], "m": [0], "s": [0]}, [1, 1, 1, 1, 1, 1, [1]])
    assert "attr 'T' is int32; ApplyAdam accepts float32, float64" in fails(runner, 3, g.save(tmp_path / "m.pb"))


@pytest.mark.parametrize("variables, feeds_, message", [
    ({"w": [1.0, 2.0], "acc": [0.0, 0.0]}, {"lr": 0.1, "grad": [1.0, 2.0, 3.0], "mom": 0.9},
     "variable 'w' has shape [2] but grad has shape [3]"),
    ({"w": [1.0, 2.0], "acc": [0.0, 0.0]}, {"lr": [0.1], "grad": [1.0, 2.0], "mom": 0.9},
     "hyper-parameter lr for variable 'w' must be a scalar, got shape [1]"),
    ({"w": [1.0, 2.0], "acc": [0.0]}, {"lr": 0.1, "grad": [1.0, 2.0], "mom": 0.9},
     "accumulator 'acc' has shape [1] but variable 'w' has shape [2]"),
])
def test_apply_momentum_checks_shapes(runner, tmp_path, variables, feeds_, message):
    g = optimizer_graph("ApplyMomentum", np.float32, variables, ["lr", "grad", "mom"])
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--fetch", "step1", *feeds(**feeds_))
    assert line == f"graphrun-cc: node 'step1' (ApplyMomentum): {message}"


def test_apply_adam_checks_hyper_parameters(runner, tmp_path):
    g = optimizer_graph("ApplyAdam", np.float32, {"w": [1.0], "m": [0.0], "s": [0.0]},
                        ["b1p", "b2p", "lr", "b1", "b2", "eps", "grad"])
    args = feeds(b1p=0.9, b2p=0.999, lr=0.1, b1=0.9, b2=0.999, eps=[1e-8, 1e-8], grad=[1.0])
    line = fails(runner, 4, g.save(tmp_path / "model.pb"), "--fetch", "step1", *args)
    assert line == ("graphrun-cc: node 'step1' (ApplyAdam): hyper-parameter epsilon for variable 'w' must be "
                    "a scalar, got shape [2]")


def test_apply_momentum_needs_an_initialized_accumulator(runner, tmp_path):
    g = Graph()
    variable_graph(g, "w")
    variable_graph(g, "acc")
    g.const("init", [1.0, 2.0], np.float32)
    g.const("s", 0.5, np.float32)
    g.op("w/Assign", "Assign", ["w", "init"], np.float32)
    g.op("step", "ApplyMomentum", ["w", "acc", "s", "init", "s", "^w/Assign"], np.float32)
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert line == "graphrun-cc: variable 'acc' is not initialized; run its initializer first"


# -- training: --run, --steps and --feeds ---------------------------------------------------
# These graphs are built with graphdef's API, as a user builds a training graph, and the
# runner's training is checked against graphdef.Session running the same graph and, for
# gradient descent, against the update rule written out in numpy.

def regression_data(rows=4):
    """Features [rows,3] and targets [rows] in float32; rows < 8 keeps every sum in the graph
    (over the 3 features, over the batch) a plain left-to-right sum in numpy too."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(rows, 3)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.5], np.float32) + np.float32(0.75)).astype(np.float32)
    return x, y


OPTIMIZERS = {
    "gradient_descent": lambda tf: tf.train.GradientDescentOptimizer(0.2),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.02, 0.9, use_nesterov=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.05),
}


def regression_model(tmp_path, optimizer):
    """pred = sum(x * w, axis=1) + b, mean squared error, `train` and `init`; saved with graphdef.save.

    Returns the model's path and a function that trains the same graph with graphdef.Session.
    """
    import graphdef as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None], name="y")
        w = tf.Variable(np.zeros(3, np.float32), name="w")
        b = tf.Variable(np.float32(0), name="b")
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y), name="loss")
        OPTIMIZERS[optimizer](tf).minimize(loss, name="train")
        tf.global_variables_initializer()
    path = tmp_path / "model.pb"
    tf.save(graph, str(path))

    def session_training(feeds, steps):
        with tf.Session(graph=graph) as sess:
            sess.run("init")
            for _ in range(steps):
                sess.run("train", {f"{name}:0": value for name, value in feeds.items()})
            return dict(zip(["w:0", "b:0"], sess.run(["w:0", "b:0"])))

    return path, session_training


def training_outputs(runner, model, data, *args, steps=200):
    return outputs(runner, model, "--run", "init", "--run", "train", "--steps", steps, "--feeds", data,
                   "--fetch", "w:0", "--fetch", "b", *args)


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_training_matches_the_session(runner, tmp_path, optimizer):
    # Elementwise ops and short sums round alike in numpy and C++, so the 200 steps agree
    # bit for bit, and so does the printed text.
    model, session_training = regression_model(tmp_path, optimizer)
    x, y = regression_data()
    np.savez(tmp_path / "data.npz", x=x, y=y)
    got = training_outputs(runner, model, tmp_path / "data.npz")
    expected = session_training({"x": x, "y": y}, 200)
    assert_same(got["w:0"], expected["w:0"])
    assert_same(got["b:0"], expected["b:0"])
    loss = np.mean((x @ got["w:0"] + got["b:0"] - y) ** 2)
    assert loss < 0.01 * np.mean(y ** 2)  # it did learn


def test_gradient_descent_matches_numpy_bit_for_bit(runner, tmp_path):
    model, _ = regression_model(tmp_path, "gradient_descent")
    x, y = regression_data()
    np.savez_compressed(tmp_path / "data.npz", x=x, y=y)  # deflated members
    got = training_outputs(runner, model, tmp_path / "data.npz")
    # The gradient graph's arithmetic in float32: d(mean)/d(pred) = 1/4 each; Square's
    # gradient 2 * (pred - y); the batch sums run in row order.
    f = np.float32
    w, b, lr = np.zeros(3, f), f(0), f(0.2)
    for _ in range(200):
        residual = (x * w).sum(axis=1) + b - y
        g = f(1) / f(len(y)) * (f(2) * residual)
        w, b = w - lr * (x * g[:, None]).sum(axis=0), b - lr * g.sum()
    assert_same(got["w:0"], w)
    assert_same(got["b:0"], b)


def counter_model(tmp_path):
    """A float64 counter: init sets it to 0, inc adds 1, double multiplies it by 2."""
    import graphdef as tf

    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(np.float64(0), name="v")
        tf.assign_add(v, np.float64(1), name="inc")
        tf.assign(v, v * np.float64(2), name="double")
        k = tf.placeholder(tf.float64, [], name="k")
        tf.assign_add(v, k, name="add_k")
        tf.global_variables_initializer()
    path = tmp_path / "counter.pb"
    tf.save(graph, str(path))
    return path


def test_runs_execute_in_order_and_the_last_one_repeats(runner, tmp_path):
    model = counter_model(tmp_path)
    # ((0 + 1) * 2 + 1) doubled 3 times = 24
    assert ok(runner, model, "--run", "init", "--run", "inc", "--run", "double", "--run", "inc:0",
              "--run", "double", "--steps", "3", "--fetch", "v") == "v:0 float64 [] = 24.0\n"
    assert ok(runner, model, "--run", "init", "--run", "inc", "--steps=5", "--fetch=v:0",
              "--json") == '{"outputs": [{"name": "v:0", "dtype": "float64", "shape": [], "values": 5.0}]}\n'


def test_runs_without_fetches_print_nothing(runner, tmp_path):
    model = counter_model(tmp_path)
    assert ok(runner, model, "--run", "init", "--run", "inc") == ""
    assert ok(runner, model, "--run", "init", "--json") == '{"outputs": []}\n'


def test_each_run_needs_only_its_own_placeholders(runner, tmp_path):
    model = counter_model(tmp_path)
    assert ok(runner, model, "--run", "init", "--run", "add_k", "--feed", "k=2.5", "--run", "inc",
              "--fetch", "v") == "v:0 float64 [] = 3.5\n"
    # A run that needs an unfed placeholder is refused before any run changes anything.
    line = fails(runner, 2, model, "--run", "init", "--run", "add_k", "--fetch", "v")
    assert line == ("graphrun-cc: placeholder not fed: k (float64, []); use --feed NAME=VALUE, --feeds FILE.npz "
                    "or --random")


@pytest.mark.parametrize("args, message", [
    (["--run", "nope"], "unknown run target 'nope': no node is named 'nope'"),
    (["--run", "inc:1"], "unknown run target 'inc:1': node 'inc' (AssignAdd) has 1 output"),
    (["--run", "init:0"], "unknown run target 'init:0': node 'init' (NoOp) has no outputs; run it as 'init'"),
    (["--run", "^init"], "unknown run target '^init': name the node without '^'"),
    (["--steps", "2"], "--steps repeats the last --run target; give one with --run"),
    (["--run", "init", "--steps", "0"], "--steps needs a whole number of at least 1, got '0'"),
    (["--run", "init", "--steps", "-3"], "--steps needs a whole number of at least 1, got '-3'"),
    (["--run", "init", "--steps", "1e3"], "--steps needs a whole number of at least 1, got '1e3'"),
    (["--run"], "--run needs a value; see --help"),
])
def test_bad_runs_exit_2(runner, tmp_path, args, message):
    assert fails(runner, 2, counter_model(tmp_path), *args) == f"graphrun-cc: {message}"


def test_errors_inside_a_run_exit_4(runner, tmp_path):
    model, _ = regression_model(tmp_path, "gradient_descent")
    x, y = regression_data()
    np.savez(tmp_path / "data.npz", x=x, y=y)
    line = fails(runner, 4, model, "--run", "train", "--feeds", tmp_path / "data.npz")
    assert line == "graphrun-cc: variable 'w' is not initialized; run its initializer first"
    assert fails(runner, 4, counter_model(tmp_path), "--run", "v") == (
        "graphrun-cc: variable 'v' is not initialized; run its initializer first")
    # Targets of the wrong length: the node that fails is named.
    np.savez(tmp_path / "bad.npz", x=x, y=y[:3])
    line = fails(runner, 4, model, "--run", "init", "--run", "train", "--feeds", tmp_path / "bad.npz")
    assert line.startswith("graphrun-cc: node 'sub' (Sub): cannot broadcast [4] with [3]")


def feeds_model(tmp_path):
    g = Graph()
    g.placeholder("x", np.float32, [-1])
    g.placeholder("layer/k", np.int64, [2])
    g.op("sum", "Sum", ["x", g.const("axis", 0, np.int32)], np.float32)
    g.op("k2", "Identity", ["layer/k"], np.int64)
    return g.save(tmp_path / "model.pb")


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_feeds_from_an_npz(runner, tmp_path, save):
    model = feeds_model(tmp_path)
    # int64 values into a float32 placeholder convert exactly; "layer/k" keeps its scope.
    save(tmp_path / "data.npz", x=np.array([1, 2, 2**24 + 1], np.int64), **{"layer/k": np.array([7, -8])})
    assert ok(runner, model, "--feeds", tmp_path / "data.npz") == (
        "sum:0 float32 [] = 16777220.0\nk2:0 int64 [2] = [7, -8]\n")


def test_feeds_from_several_archives_and_flags(runner, tmp_path):
    model = feeds_model(tmp_path)
    np.savez(tmp_path / "a.npz", **{"x:0": np.array([0.5], np.float32)})
    np.savez(tmp_path / "b.npz", **{"layer/k": np.array([1, 2])})
    assert ok(runner, model, "--feeds", tmp_path / "a.npz", "--feeds", tmp_path / "b.npz") == (
        "sum:0 float32 [] = 0.5\nk2:0 int64 [2] = [1, 2]\n")
    assert ok(runner, model, "--feeds", tmp_path / "a.npz", "--feed", "layer/k=[3,4]", "--fetch", "k2") == (
        "k2:0 int64 [2] = [3, 4]\n")


def save_npy_as(path, array):
    with open(path, "wb") as f:  # a file object: np.save adds no ".npy" to the name
        np.save(f, array)


def corrupt_member(path):
    """Flips a byte inside the first member's compressed data."""
    data = bytearray(path.read_bytes())
    name_length, extra_length = struct.unpack("<HH", data[26:30])
    data[30 + name_length + extra_length + 20] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("setup, message", [
    (lambda d: np.savez(d / "f.npz", x=np.ones(2, np.float32), **{"layer/k": np.ones(2, np.int64)},
                        extra=np.ones(1)),
     "--feeds {d}/f.npz: unknown feed 'extra': the graph's placeholders: x (float32, [?]), layer/k (int64, [2])"),
    (lambda d: np.savez(d / "f.npz", x=np.ones(2, np.float32), **{"x:0": np.ones(2, np.float32)}),
     "--feeds {d}/f.npz: 'x:0' is fed more than once"),
    (lambda d: np.savez(d / "f.npz", x=np.array([0.5, 1.5])),
     None),  # fine on its own; fed twice with --feed below
    (lambda d: np.savez(d / "f.npz", **{"layer/k": np.array([1.5, 2.0])}),
     "--feeds {d}/f.npz: feed 'layer/k': 1.5 is not an integer, as needed for int64"),
    (lambda d: np.savez(d / "f.npz", **{"layer/k": np.array([1, 2, 3])}),
     "--feeds {d}/f.npz: feed 'layer/k': the value has shape [3] but placeholder 'layer/k' has shape [2]"),
    (lambda d: save_npy_as(d / "f.npz", np.ones(2)),
     "--feeds {d}/f.npz: the file is a single .npy array; feed it with --feed NAME=@{d}/f.npz"),
    (lambda d: (d / "f.npz").write_bytes(b"not a zip archive at all"),
     "--feeds {d}/f.npz: cannot read the file as an .npz archive (Not a zip archive)"),
    (lambda d: None, "--feeds {d}/f.npz: no such file"),
])
def test_bad_feeds_archives_exit_2(runner, tmp_path, setup, message):
    model = feeds_model(tmp_path)
    setup(tmp_path)
    if message is None:
        line = fails(runner, 2, model, "--feed", "x=[1]", "--feeds", tmp_path / "f.npz")
        assert line == f"graphrun-cc: --feeds {tmp_path}/f.npz: 'x' is fed more than once"
        return
    line = fails(runner, 2, model, "--feeds", tmp_path / "f.npz")
    assert line.startswith("graphrun-cc: " + message.format(d=tmp_path)), line


@pytest.mark.parametrize("save, problem", [(np.savez, "CRC error"), (np.savez_compressed, "Zlib error")])
def test_damaged_npz_members_are_refused(runner, tmp_path, save, problem):
    # A stored member's damage shows only in its CRC, which libzip checks at the member's end.
    save(tmp_path / "f.npz", x=np.arange(1000, dtype=np.float32))
    corrupt_member(tmp_path / "f.npz")
    line = fails(runner, 2, feeds_model(tmp_path), "--feeds", tmp_path / "f.npz")
    assert line.startswith(f"graphrun-cc: --feeds {tmp_path}/f.npz: member 'x.npy': {problem}")


def test_an_npz_member_that_is_not_an_array_is_refused(runner, tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "f.npz", "w") as archive:
        archive.writestr("notes.txt", "hello")
    line = fails(runner, 2, feeds_model(tmp_path), "--feeds", tmp_path / "f.npz")
    assert line == f"graphrun-cc: --feeds {tmp_path}/f.npz: member 'notes.txt' is not a .npy array"


# -- output format ------------------------------------------------------------------------

def test_text_and_json_layout(runner, tmp_path):
    g = Graph()
    g.const("Divide", 3.75, np.float64)
    g.const("y", [[1.0, 2.0], [3.0, 4.0]], np.float32)
    g.const("e", np.zeros((2, 0), np.int32))
    g.const("b", [True, False], np.bool_)
    model = g.save(tmp_path / "model.pb")
    assert ok(runner, model) == ("Divide:0 float64 [] = 3.75\n"
                                 "y:0 float32 [2,2] = [[1.0, 2.0], [3.0, 4.0]]\n"
                                 "e:0 int32 [2,0] = [[], []]\n"
                                 "b:0 bool [2] = [true, false]\n")
    assert ok(runner, model, "--json", "--fetch", "Divide", "--fetch", "y:0") == (
        '{"outputs": [{"name": "Divide:0", "dtype": "float64", "shape": [], "values": 3.75}, '
        '{"name": "y:0", "dtype": "float32", "shape": [2, 2], "values": [[1.0, 2.0], [3.0, 4.0]]}]}\n')


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


# -- feeds --------------------------------------------------------------------------------

def feed_graph(tmp_path, dtype=np.float32, shape=None):
    g = Graph()
    g.placeholder("x", dtype, shape)
    g.op("y", "Identity", ["x"], dtype)
    return g.save(tmp_path / "model.pb")


def test_feed_number_and_nested_json(runner, tmp_path):
    model = feed_graph(tmp_path, np.float32, [-1, 2])
    assert ok(runner, model, "--feed", "x=[[1,2],[3,4.5]]") == "y:0 float32 [2,2] = [[1.0, 2.0], [3.0, 4.5]]\n"
    scalar = feed_graph(tmp_path, np.float64)
    assert ok(runner, scalar, "--feed", "x:0=3.75") == "y:0 float64 [] = 3.75\n"


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
    assert "feed 'x'" in fails(runner, 2, feed_graph(tmp_path, dtype), "--feed", f"x={text}")


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
    assert "65504.0 is out of range for uint8" in line
    assert "cannot be fed" in fails(runner, 2, feed_graph(tmp_path, np.bool_), "--feed", f"x=@{tmp_path / 'h.npy'}")


def test_feed_npy_refusals(runner, tmp_path):
    model = feed_graph(tmp_path)
    np.save(tmp_path / "c.npy", np.ones(2, np.complex64))
    assert "unsupported .npy dtype '<c8'" in fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'c.npy'}")
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'junk.npy'}")
    fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'missing.npy'}")
    np.save(tmp_path / "short.npy", np.ones(100, np.float32))
    data = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-8])
    assert "truncated" in fails(runner, 2, model, "--feed", f"x=@{tmp_path / 'short.npy'}")


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


# -- fetches ------------------------------------------------------------------------------

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


# -- invalid models: exit 3, one line -------------------------------------------------------

def small_model_bytes():
    g = Graph()
    g.const("a", [1.0, 2.0, 3.0, 4.0], np.float32)
    g.op("b", "Neg", ["a"], np.float32)
    return g.proto.SerializeToString()


def test_unreadable_files(runner, tmp_path):
    assert "No such file" in fails(runner, 3, tmp_path / "missing.pb")
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


def test_unknown_ops_are_all_listed_at_once(runner, tmp_path):
    # Made-up op types, so the test keeps meaning the same as kernels are added.
    g = Graph()
    g.const("x", [1.0], np.float32)
    g.op("dense/Frobnicate", "Frobnicate", ["x"], np.float32)
    g.op("t/Twiddle", "Twiddle", ["dense/Frobnicate", "x"], np.float32)
    model = g.save(tmp_path / "model.pb")
    assert fails(runner, 3, model) == (
        f"graphrun-cc: {model}: no kernel for Frobnicate (dense/Frobnicate), Twiddle (t/Twiddle)")
    g.op("f2", "Frobnicate", ["x"], np.float32)  # a type used twice is listed once
    model = g.save(tmp_path / "model.pb")
    assert fails(runner, 3, model) == (
        f"graphrun-cc: {model}: no kernel for Frobnicate (dense/Frobnicate and 1 more), Twiddle (t/Twiddle)")


def invalid_graph(kind):
    g = Graph()
    g.const("a", [1.0, 2.0], np.float32)
    if kind == "missing input":
        g.op("b", "Neg", ["zz"], np.float32)
    elif kind == "bad output index":
        g.op("b", "Neg", ["a:1"], np.float32)
    elif kind == "control before data":
        g.node("n", "NoOp")
        g.op("b", "AddV2", ["a", "^n", "a"], np.float32)
    elif kind == "duplicate name":
        g.const("a", 1.0, np.float32)
    elif kind == "wrong attr type":
        g.node("b", "Neg", ["a"], T=graph_pb2.AttrValue(i=1))
    elif kind == "missing attr":
        g.node("b", "Neg", ["a"])
    elif kind == "wrong input dtype":
        g.op("b", "Neg", ["a"], np.float64)
    elif kind == "wrong input count":
        g.op("b", "AddV2", ["a"], np.float32)
    elif kind == "unsupported dtype":
        g.node("s", "Const", dtype=graph_pb2.AttrValue(type=DT.DT_STRING),
               value=graph_pb2.AttrValue(tensor=graph_pb2.TensorProto(dtype=DT.DT_STRING, string_val=[b"hi"])))
    elif kind == "cycle":
        g.op("b", "AddV2", ["a", "c"], np.float32)
        g.op("c", "Neg", ["b"], np.float32)
    elif kind == "self loop":
        g.op("b", "Neg", ["b"], np.float32)
    elif kind == "short tensor_content":
        tensor = tensor_proto(np.ones(4, np.float32))
        tensor.tensor_content = tensor.tensor_content[:-1]
        g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=tensor))
    elif kind == "hostile const shape":
        tensor = graph_pb2.TensorProto(dtype=DT.DT_FLOAT, float_val=[1.0])
        for _ in range(4):
            tensor.tensor_shape.dim.add().size = 2**62
        g.node("c", "Const", dtype=type_attr(np.float32), value=graph_pb2.AttrValue(tensor=tensor))
    elif kind == "const dtype mismatch":
        g.node("c", "Const", dtype=type_attr(np.int32), value=graph_pb2.AttrValue(tensor=tensor_proto(np.float32(1))))
    return g


@pytest.mark.parametrize("kind, message", [
    ("missing input", "node 'b' (Neg): input 'zz' names no node"),
    ("bad output index", "node 'b' (Neg): input 'a:1' asks for output 1"),
    ("control before data", "control inputs must come last"),
    ("duplicate name", "node name 'a' is not unique"),
    ("wrong attr type", "node 'b' (Neg): attr 'T' should hold a type but holds an int"),
    ("missing attr", "node 'b' (Neg): missing attr 'T'"),
    ("wrong input dtype", "is float32 from 'a:0' but the node expects float64"),
    ("wrong input count", "has 1 data input but AddV2 takes 2"),
    ("unsupported dtype", "node 's' (Const): attr 'dtype' is DT_STRING"),
    ("cycle", "the graph has a cycle: 'b' -> 'c' -> 'b'"),
    ("self loop", "the graph has a cycle: 'b' -> 'b'"),
    ("short tensor_content", "tensor_content holds 15 bytes"),
    ("hostile const shape", "would take more than 16.0 EiB, over the limit of"),
    ("const dtype mismatch", "attr 'value' holds a float32 tensor but attr 'dtype' is int32"),
])
def test_invalid_graphs_exit_3(runner, tmp_path, kind, message):
    model = invalid_graph(kind).save(tmp_path / "model.pb")
    line = fails(runner, 3, model)
    assert line.startswith(f"graphrun-cc: {model}: ") and message in line, line


# -- the layer and array ops: convolution, pooling, normalization, slicing ----------------
# Oracles are numpy written here from TF's definitions (direct loops over window taps,
# fancy indexing), never graphdef's kernels.

def ints_attr(values):
    return graph_pb2.AttrValue(list=graph_pb2.AttrValue.ListValue(i=list(values)))


def str_attr(value):
    return graph_pb2.AttrValue(s=value.encode())


def float_attr(value):
    return graph_pb2.AttrValue(f=value)


def window_axis(size, k, s, d, padding, before=0, after=0):
    """TF's output size and leading pad along one axis."""
    k_eff = (k - 1) * d + 1
    if padding == "SAME":
        out = -(-size // s)
        return out, max((out - 1) * s + k_eff - size, 0) // 2
    return (size + before + after - k_eff + s) // s, before


def window_taps(x_shape, k, strides, dilations, padding, explicit=(0,) * 8):
    """Per output (oy, ox): the list of (a, b, row, col) taps, row/col None for padding."""
    _, h, w, _ = x_shape
    oh, top = window_axis(h, k[0], strides[1], dilations[1], padding, *explicit[2:4])
    ow, left = window_axis(w, k[1], strides[2], dilations[2], padding, *explicit[4:6])
    taps = {}
    for oy in range(oh):
        for ox in range(ow):
            found = []
            for a in range(k[0]):
                for b in range(k[1]):
                    r = oy * strides[1] - top + a * dilations[1]
                    c = ox * strides[2] - left + b * dilations[2]
                    real = 0 <= r < h and 0 <= c < w
                    found.append((a, b, r if real else None, c if real else None))
            taps[oy, ox] = found
    return oh, ow, taps


def conv_oracle(x, f, strides, padding, dilations=(1, 1, 1, 1), explicit=(0,) * 8):
    n, _, _, _ = x.shape
    oh, ow, taps = window_taps(x.shape, f.shape[:2], strides, dilations, padding, explicit)
    wide = np.float64 if x.dtype.kind == "f" else np.int64
    out = np.zeros((n, oh, ow, f.shape[3]), wide)
    for (oy, ox), found in taps.items():
        for a, b, r, c in found:
            if r is not None:
                out[:, oy, ox] += x[:, r, c].astype(wide) @ f[a, b].astype(wide)
    return out.astype(x.dtype)  # int64 sums wrap to int32 as the runner's do


def conv_graph(tmp_path, op, inputs, dtype, **attrs):
    g = Graph()
    names = []
    for i, value in enumerate(inputs):
        names.append(g.const("abcdef"[i], value))
    g.op("z", op, names, dtype, **attrs)
    return g.save(tmp_path / "model.pb")


CONV_CASES = [  # x shape, filter shape, strides, padding, dilations, explicit paddings
    ((2, 9, 9, 1), (5, 5, 1, 8), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), ()),
    ((1, 7, 8, 3), (3, 2, 3, 13), (1, 2, 3, 1), "SAME", (1, 1, 1, 1), ()),
    ((2, 10, 9, 2), (3, 3, 2, 20), (1, 1, 2, 1), "VALID", (1, 2, 3, 1), ()),
    ((1, 5, 6, 4), (2, 3, 4, 5), (1, 2, 1, 1), "EXPLICIT", (1, 1, 1, 1), (0, 0, 1, 2, 0, 3, 0, 0)),
    ((3, 4, 4, 6), (1, 1, 6, 9), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), ()),
    ((1, 3, 3, 2), (5, 5, 2, 3), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), ()),
]


def conv_attrs(strides, padding, dilations, explicit):
    return {"strides": ints_attr(strides), "padding": str_attr(padding), "dilations": ints_attr(dilations),
            "explicit_paddings": ints_attr(explicit)}


@pytest.mark.parametrize("xs, fs, strides, padding, dilations, explicit", CONV_CASES)
def test_conv2d_float32_matches_direct_convolution(runner, tmp_path, xs, fs, strides, padding, dilations, explicit):
    rng = np.random.default_rng(len(xs) + fs[3])
    x, f = rng.normal(size=xs).astype(np.float32), rng.normal(size=fs).astype(np.float32)
    model = conv_graph(tmp_path, "Conv2D", [x, f], np.float32, **conv_attrs(strides, padding, dilations, explicit))
    expected = conv_oracle(x, f, strides, padding, dilations, explicit or (0,) * 8)
    np.testing.assert_allclose(output(runner, model), expected, rtol=1e-5, atol=1e-5)


def test_conv2d_float64_and_int32_wrap(runner, tmp_path):
    rng = np.random.default_rng(3)
    x, f = rng.normal(size=(2, 6, 5, 3)), rng.normal(size=(3, 3, 3, 4))
    attrs = conv_attrs((1, 2, 1, 1), "SAME", (1, 1, 1, 1), ())
    assert_close(output(runner, conv_graph(tmp_path, "Conv2D", [x, f], np.float64, **attrs)),
                 conv_oracle(x, f, (1, 2, 1, 1), "SAME"), rtol=1e-12)
    xi = rng.integers(-2**31, 2**31, size=(1, 4, 4, 2), dtype=np.int32)
    fi = rng.integers(-2**31, 2**31, size=(2, 2, 2, 3), dtype=np.int32)
    assert_same(output(runner, conv_graph(tmp_path, "Conv2D", [xi, fi], np.int32, **attrs)),
                conv_oracle(xi, fi, (1, 2, 1, 1), "SAME"))


def test_conv2d_backprops_are_the_adjoints(runner, tmp_path):
    # <conv(x, f), g> = <x, backprop_input(g)> = <f, backprop_filter(x, g)>, checked elementwise
    # against the oracle's own adjoint loops.
    rng = np.random.default_rng(5)
    x, f = rng.normal(size=(2, 7, 6, 3)), rng.normal(size=(3, 2, 3, 4))
    strides, dilations = (1, 2, 1, 1), (1, 1, 2, 1)
    oh, ow, taps = window_taps(x.shape, f.shape[:2], strides, dilations, "SAME")
    g = rng.normal(size=(2, oh, ow, 4))
    dx, df = np.zeros_like(x), np.zeros_like(f)
    for (oy, ox), found in taps.items():
        for a, b, r, c in found:
            if r is not None:
                dx[:, r, c] += g[:, oy, ox] @ f[a, b].T
                df[a, b] += x[:, r, c].T @ g[:, oy, ox]
    attrs = conv_attrs(strides, "SAME", dilations, ())
    gr = Graph()
    gr.const("sizes_x", np.array(x.shape, np.int32))
    gr.const("sizes_f", np.array(f.shape, np.int32))
    gr.const("x", x)
    gr.const("f", f)
    gr.const("g", g)
    gr.op("dx", "Conv2DBackpropInput", ["sizes_x", "f", "g"], np.float64, **attrs)
    gr.op("df", "Conv2DBackpropFilter", ["x", "sizes_f", "g"], np.float64, **attrs)
    got = outputs(runner, gr.save(tmp_path / "model.pb"), "--fetch", "dx", "--fetch", "df")
    assert_close(got["dx:0"], dx, rtol=1e-12)
    assert_close(got["df:0"], df, rtol=1e-12)


def test_conv2d_backprop_input_checks_the_gradient_shape(runner, tmp_path):
    g = Graph()
    g.const("sizes", np.array([1, 4, 4, 1], np.int32))
    g.const("f", np.ones((2, 2, 1, 1), np.float32))
    g.const("g", np.ones((1, 4, 4, 1), np.float32))
    g.op("z", "Conv2DBackpropInput", ["sizes", "f", "g"], np.float32, **conv_attrs((1, 1, 1, 1), "VALID", (1,) * 4, ()))
    line = fails(runner, 4, g.save(tmp_path / "model.pb"))
    assert "out_backprop has shape [1,4,4,1], expected [1,3,3,1]" in line


def test_depthwise_conv2d_channel_order(runner, tmp_path):
    rng = np.random.default_rng(7)
    x, f = rng.normal(size=(2, 5, 6, 3)).astype(np.float32), rng.normal(size=(3, 3, 3, 2)).astype(np.float32)
    oh, ow, taps = window_taps(x.shape, (3, 3), (1, 1, 2, 1), (1, 1, 1, 1), "SAME")
    expected = np.zeros((2, oh, ow, 3, 2), np.float32)
    for (oy, ox), found in taps.items():
        for a, b, r, c in found:
            if r is not None:
                expected[:, oy, ox] += x[:, r, c, :, None] * f[a, b]
    model = conv_graph(tmp_path, "DepthwiseConv2dNative", [x, f], np.float32,
                       strides=ints_attr((1, 1, 2, 1)), padding=str_attr("SAME"))
    np.testing.assert_allclose(output(runner, model), expected.reshape(2, oh, ow, 6), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs, message", [
    ({"strides": ints_attr((1, 1, 1))}, "strides must have 4 entries"),
    ({"strides": ints_attr((2, 1, 1, 1))}, "must be 1 in the batch and channel dims"),
    ({"padding": str_attr("FULL")}, "attr 'padding' is 'FULL'; Conv2D accepts SAME, VALID, EXPLICIT"),
    ({"data_format": str_attr("NCHW")}, "attr 'data_format' is 'NCHW'; Conv2D accepts NHWC"),
    ({"padding": str_attr("EXPLICIT")}, "EXPLICIT padding needs 8 non-negative explicit_paddings"),
    ({"explicit_paddings": ints_attr((0, 0, 1, 1, 1, 1, 0, 0))}, "only allowed with padding EXPLICIT"),
    ({"dilations": ints_attr((1, 0, 1, 1))}, "dilations [1,0,1,1] must be positive"),
    ({"strides": graph_pb2.AttrValue(i=1)}, "attr 'strides' should hold a list of ints but holds an int"),
])
def test_window_attrs_are_checked_at_load(runner, tmp_path, attrs, message):
    base = {"strides": ints_attr((1, 1, 1, 1)), "padding": str_attr("SAME")}
    model = conv_graph(tmp_path, "Conv2D", [np.ones((1, 3, 3, 1), np.float32), np.ones((1, 1, 1, 1), np.float32)],
                       np.float32, **{**base, **attrs})
    assert message in fails(runner, 3, model)


def test_conv2d_window_that_does_not_fit(runner, tmp_path):
    model = conv_graph(tmp_path, "Conv2D", [np.ones((1, 2, 2, 1), np.float32), np.ones((4, 1, 1, 1), np.float32)],
                       np.float32, strides=ints_attr((1, 1, 1, 1)), padding=str_attr("VALID"))
    assert "a window of 4 (size 4, dilation 1) does not fit in 2" in fails(runner, 4, model)


def pool_attrs(k, s, padding, explicit=None):
    attrs = {"ksize": ints_attr((1, *k, 1)), "strides": ints_attr((1, *s, 1)), "padding": str_attr(padding)}
    if explicit is not None:
        attrs["explicit_paddings"] = ints_attr(explicit)
    return attrs


def test_max_pool_skips_nan_and_padding(runner, tmp_path):
    x = np.array([[1, np.nan, -np.inf], [np.nan, np.nan, 5], [-np.inf, -np.inf, 2]], np.float32).reshape(1, 3, 3, 1)
    g = Graph()
    g.const("x", x)
    g.op("same", "MaxPool", ["x"], np.float32, **pool_attrs((2, 2), (2, 2), "SAME"))
    g.op("valid", "MaxPool", ["x"], np.float32, **pool_attrs((2, 2), (1, 1), "VALID"))
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "same", "--fetch", "valid")
    lowest = np.finfo(np.float32).min
    # SAME 2x2 stride 2 on 3x3: windows [0:2,0:2], [0:2,2], [2,0:2], [2,2]
    assert_same(got["same:0"], np.array([1, 5, lowest, 2], np.float32).reshape(1, 2, 2, 1))
    assert_same(got["valid:0"], np.array([1, 5, lowest, 5], np.float32).reshape(1, 2, 2, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint16, np.int64])
def test_max_pool_matches_numpy(runner, tmp_path, dtype):
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, size=(2, 7, 6, 5)).astype(dtype) if np.dtype(dtype).kind != "u" else \
        rng.integers(0, 100, size=(2, 7, 6, 5)).astype(dtype)
    oh, ow, taps = window_taps(x.shape, (3, 2), (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
    expected = np.zeros((2, oh, ow, 5), dtype)
    for (oy, ox), found in taps.items():
        expected[:, oy, ox] = np.max([x[:, r, c] for _, _, r, c in found if r is not None], axis=0)
    model = conv_graph(tmp_path, "MaxPool", [x], dtype, **pool_attrs((3, 2), (2, 2), "SAME"))
    assert_same(output(runner, model), expected)


def test_max_pool_grad_first_max_wins_and_overlaps_add(runner, tmp_path):
    x = np.array([[3, 3, 1], [0, 3, 2], [4, 4, 4]], np.float32).reshape(1, 3, 3, 1)
    grad = np.array([[1, 10], [100, 1000]], np.float32).reshape(1, 2, 2, 1)
    g = Graph()
    g.const("x", x)
    g.const("y", np.zeros((1, 2, 2, 1), np.float32))  # orig_output: not read, as in TF's CPU kernel
    g.const("g", grad)
    g.op("z", "MaxPoolGrad", ["x", "y", "g"], np.float32, **pool_attrs((2, 2), (1, 1), "VALID"))
    # windows: [0,0] max 3 first at (0,0); [0,1] max 3 first at (0,1); [1,0] max 4 at (2,0);
    # [1,1] max 4 first at (2,1)
    expected = np.array([[1, 10, 0], [0, 0, 0], [100, 1000, 0]], np.float32).reshape(1, 3, 3, 1)
    assert_same(output(runner, g.save(tmp_path / "model.pb")), expected)


def test_avg_pool_and_grad_count_real_elements(runner, tmp_path):
    rng = np.random.default_rng(13)
    x = rng.normal(size=(2, 5, 4, 3)).astype(np.float32)
    oh, ow, taps = window_taps(x.shape, (3, 3), (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
    expected = np.zeros((2, oh, ow, 3), np.float32)
    grad = rng.normal(size=(2, oh, ow, 3)).astype(np.float32)
    dx = np.zeros_like(x)
    for (oy, ox), found in taps.items():
        real = [(r, c) for _, _, r, c in found if r is not None]
        expected[:, oy, ox] = np.mean([x[:, r, c] for r, c in real], axis=0)
        for r, c in real:
            dx[:, r, c] += grad[:, oy, ox] / len(real)
    g = Graph()
    g.const("x", x)
    g.const("shape", np.array(x.shape, np.int32))
    g.const("g", grad)
    g.op("avg", "AvgPool", ["x"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    g.op("back", "AvgPoolGrad", ["shape", "g"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "avg", "--fetch", "back")
    np.testing.assert_allclose(got["avg:0"], expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got["back:0"], dx, rtol=1e-6, atol=1e-7)


def test_avg_pool_refuses_explicit_padding(runner, tmp_path):
    model = conv_graph(tmp_path, "AvgPool", [np.ones((1, 2, 2, 1), np.float32)], np.float32,
                       **pool_attrs((1, 1), (1, 1), "EXPLICIT"))
    assert "attr 'padding' is 'EXPLICIT'; AvgPool accepts SAME, VALID" in fails(runner, 3, model)


def test_bias_add_wraps_integers_and_checks_shapes(runner, tmp_path):
    value = np.array([[100, -128], [5, 6]], np.int8)
    bias = np.array([100, -1], np.int8)
    assert_same(output(runner, conv_graph(tmp_path, "BiasAdd", [value, bias], np.int8)),
                (value.astype(np.int16) + bias).astype(np.int8))
    line = fails(runner, 4, conv_graph(tmp_path, "BiasAdd", [np.ones(3, np.float32), np.ones(3, np.float32)],
                                       np.float32))
    assert "must be 1-D and match the last dim of value [3] (at least 2-D)" in line


@pytest.mark.parametrize("shape", [(2, 3, 4), (300, 5), (4, 70, 1), (1000, 1), (0, 3)])
def test_bias_add_grad_rounds_as_numpy(runner, tmp_path, shape):
    # numpy adds row by row into the sums, except with one channel, where it sums the
    # contiguous column pairwise; non-integral values make any other order show.
    g = np.random.default_rng(7).standard_normal(shape).astype(np.float32) * np.float32(1000)
    expected = np.sum(g, axis=tuple(range(g.ndim - 1)), dtype=np.float32)
    assert_same(output(runner, conv_graph(tmp_path, "BiasAddGrad", [g], np.float32)), expected)


def test_bias_add_grad_wraps_integers_and_checks_its_input(runner, tmp_path):
    g = np.array([[[100, -128]], [[100, -1]]], np.int8)
    assert_same(output(runner, conv_graph(tmp_path, "BiasAddGrad", [g], np.int8)), np.array([-56, 127], np.int8))
    line = fails(runner, 4, conv_graph(tmp_path, "BiasAddGrad", [np.ones(3, np.float32)], np.float32))
    assert "node 'z' (BiasAddGrad): out_backprop must be at least 2-D, got shape [3]" in line
    model = conv_graph(tmp_path, "BiasAddGrad", [np.ones((2, 3), np.float32)], np.float32,
                       data_format=graph_pb2.AttrValue(s=b"NCHW"))
    assert "attr 'data_format' is 'NCHW'; BiasAddGrad accepts NHWC" in fails(runner, 3, model)


def uniform_words(stream, name, count):
    """graphdef's shared generator, in Python integers: splitmix64 words of name's stream."""
    mask = (1 << 64) - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    h = 0xCBF29CE484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) & mask
    start = mix(stream ^ h)
    return [mix((start + (i + 1) * 0x9E3779B97F4A7C15) & mask) for i in range(count)]


@pytest.mark.parametrize("dtype, bits, seed, seed2, shape_dtype", [
    (np.float32, 24, 1, 2, np.int32), (np.float64, 53, -5, 7, np.int64), (np.float32, 24, 0, 0, np.int64),
])
def test_random_uniform_is_the_shared_stream(runner, tmp_path, dtype, bits, seed, seed2, shape_dtype):
    g = Graph()
    g.const("shape", [2, 3], shape_dtype)
    g.node("drop/u", "RandomUniform", ["shape"], T=type_attr(shape_dtype), dtype=type_attr(dtype),
           seed=graph_pb2.AttrValue(i=seed), seed2=graph_pb2.AttrValue(i=seed2))
    stream = ((seed & 0xFFFFFFFF) << 32) | (seed2 & 0xFFFFFFFF)
    expected = np.array([w >> (64 - bits) for w in uniform_words(stream, "drop/u", 6)], np.float64) * 2.0 ** -bits
    model = g.save(tmp_path / "model.pb")
    first = output(runner, model)
    assert_same(first, expected.astype(dtype).reshape(2, 3))
    assert_same(output(runner, model), first)  # the same values on every run


def test_random_uniform_checks_shape_and_dtype(runner, tmp_path):
    g = Graph()
    g.const("shape", [2, -1], np.int32)
    g.node("u", "RandomUniform", ["shape"], T=type_attr(np.int32), dtype=type_attr(np.float32))
    assert "node 'u' (RandomUniform): shape [2,-1] must not be negative" in fails(runner, 4, g.save(tmp_path / "a.pb"))
    g = Graph()
    g.const("shape", [2], np.int32)
    g.node("u", "RandomUniform", ["shape"], T=type_attr(np.int32), dtype=type_attr(np.int32))
    assert "node 'u' (RandomUniform): attr 'dtype' is int32" in fails(runner, 3, g.save(tmp_path / "b.pb"))


def test_in_place_kernels_leave_shared_values_alone(runner, tmp_path):
    # BiasAdd and Relu may overwrite an input nothing else holds; here the input is also
    # fetched, fed, or read twice, and must come through unchanged.
    x = np.array([[-1.5, 2.0], [3.0, -4.0]], np.float32)
    g = Graph()
    g.placeholder("p", np.float32)
    g.const("b", np.array([1, 1], np.float32))
    g.op("m", "Mul", ["p", "p"], np.float32)       # a fresh value, fetched and used twice below
    g.op("biased", "BiasAdd", ["m", "b"], np.float32)
    g.op("relu", "Relu", ["m"], np.float32)
    g.op("relu_fed", "Relu", ["p"], np.float32)
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--feed", f"p={json.dumps(x.tolist())}",
                  "--fetch", "m", "--fetch", "biased", "--fetch", "relu", "--fetch", "relu_fed", "--fetch", "p")
    assert_same(got["m:0"], x * x)
    assert_same(got["biased:0"], x * x + 1)
    assert_same(got["relu:0"], x * x)
    assert_same(got["relu_fed:0"], np.maximum(x, 0))
    assert_same(got["p:0"], x)


def test_fused_batch_norm_inference_and_training(runner, tmp_path):
    rng = np.random.default_rng(17)
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    scale, offset, mean, var = (rng.uniform(0.5, 2, 5).astype(np.float32) for _ in range(4))
    g = Graph()
    for name, value in (("x", x), ("scale", scale), ("offset", offset), ("mean", mean), ("var", var)):
        g.const(name, value)
    common = {"U": type_attr(np.float32), "epsilon": float_attr(0.001)}
    g.op("infer", "FusedBatchNormV3", ["x", "scale", "offset", "mean", "var"], np.float32,
         is_training=bool_attr(False), **common)
    g.op("train", "FusedBatchNormV3", ["x", "scale", "offset", "mean", "var"], np.float32,
         exponential_avg_factor=float_attr(0.25), **common)
    fetches = [f"{node}:{k}" for node in ("infer", "train") for k in range(6)]
    got = outputs(runner, g.save(tmp_path / "model.pb"), *[a for f in fetches for a in ("--fetch", f)])
    eps = np.float32(0.001)
    np.testing.assert_allclose(got["infer:0"], (x - mean) * (scale / np.sqrt(var + eps)) + offset, rtol=1e-5)
    for k, v in zip(range(1, 5), (mean, var, mean, var)):
        assert_same(got[f"infer:{k}"], v)
    bm, bv = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    n = x.size // 5
    np.testing.assert_allclose(got["train:0"], (x - bm) / np.sqrt(bv + eps) * scale + offset, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["train:1"], 0.75 * mean + 0.25 * bm, rtol=1e-5)
    np.testing.assert_allclose(got["train:2"], 0.75 * var + 0.25 * bv * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(got["train:3"], bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["train:4"], bv, rtol=1e-5)
    assert got["train:5"].shape == (0,) and got["infer:5"].shape == (0,)


def test_activations(runner, tmp_path):
    x = np.array([-100, -20, -1, -0.0, 0, 0.5, 3, 6, 7, 20, 100, np.nan], np.float32)
    g = Graph()
    g.const("x", x)
    for op in ("Relu6", "Elu", "Softplus", "Rsqrt"):
        g.op(op.lower(), op, ["x"], np.float32)
    g.op("leaky", "LeakyRelu", ["x"], np.float32, alpha=float_attr(0.1))
    names = ["relu6", "elu", "softplus", "rsqrt", "leaky"]
    got = outputs(runner, g.save(tmp_path / "model.pb"), *[a for n in names for a in ("--fetch", n)])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        assert_same(got["relu6:0"], np.minimum(np.maximum(x, np.float32(0)), np.float32(6)))  # -0.0 becomes 0.0
        np.testing.assert_allclose(got["elu:0"], np.where(x < 0, np.exp(x) - 1, x), rtol=1e-6)
        assert np.signbit(got["elu:0"][3])  # -0.0 stays -0.0: exp(x) - 1 is not taken at zero
        np.testing.assert_allclose(got["softplus:0"], np.logaddexp(0, x.astype(np.float64)), rtol=1e-6, atol=1e-44)
        assert_same(got["rsqrt:0"], (np.float32(1) / np.sqrt(x)).astype(np.float32))
        assert_same(got["leaky:0"], np.where(x > 0, x, x * np.float32(0.1)).astype(np.float32))


def test_relu6_integers(runner, tmp_path):
    x = np.array([-5, 0, 3, 6, 9, 2**31 - 1], np.int32)
    assert_same(output(runner, conv_graph(tmp_path, "Relu6", [x], np.int32)), np.clip(x, 0, 6))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.float32, np.float64])
def test_divisions_match_python_semantics(runner, tmp_path, dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is not None and info.min < 0:
        x = np.array([7, -7, 7, -7, 6, info.min, info.min, 0], dtype)
        y = np.array([2, 2, -2, -2, 3, -1, 3, -5], dtype)
    elif info is not None:
        x, y = np.array([7, 200, 0, 255], dtype), np.array([2, 3, 9, 16], dtype)
    else:
        x = np.array([7, -7, 7, -7, 1, -4, 5.5, np.inf], dtype)
        y = np.array([2, 2, -2, -2, 0.1, 2, -np.inf, 3], dtype)
    g = Graph()
    g.const("x", x)
    g.const("y", y)
    for op in ("FloorDiv", "FloorMod", "Div"):
        g.op(op, op, ["x", "y"], dtype)
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "FloorDiv", "--fetch", "FloorMod", "--fetch", "Div")
    with np.errstate(all="ignore"):
        if info is None:
            floor_div = np.floor(x / y)
            r = np.fmod(x, y)
            floor_mod = np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)
            div = x / y
        else:
            xs, ys = [int(v) for v in x], [int(v) for v in y]
            floor_div = [a // b for a, b in zip(xs, ys)]
            floor_mod = [a % b for a, b in zip(xs, ys)]
            div = [abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) for a, b in zip(xs, ys)]
            wrap = lambda v: np.array([(i - info.min) % 2**info.bits + info.min for i in v]).astype(dtype)  # noqa: E731
            floor_div, floor_mod, div = wrap(floor_div), wrap(floor_mod), wrap(div)
    assert_same(got["FloorDiv:0"], np.asarray(floor_div, dtype))
    assert_same(got["FloorMod:0"], np.asarray(floor_mod, dtype))
    assert_same(got["Div:0"], np.asarray(div, dtype))


@pytest.mark.parametrize("op", ["FloorDiv", "FloorMod", "Div"])
def test_integer_division_by_zero_exits_4(runner, tmp_path, op):
    line = fails(runner, 4, binary_graph(tmp_path, op, [1, 2], [1, 0], np.int32))
    assert f"node 'z' ({op}): integer division by zero" in line


def list_outputs_graph(tmp_path, op, inputs, fetch_count, dtype, **attrs):
    model = conv_graph(tmp_path, op, inputs, dtype, **attrs)
    return [a for k in range(fetch_count) for a in ("--fetch", f"z:{k}")], model


def test_squeeze_and_expand_dims(runner, tmp_path):
    x = np.arange(6, dtype=np.int16).reshape(1, 2, 1, 3, 1)
    g = Graph()
    g.const("x", x)
    g.const("axis", np.int64(-1))
    g.op("all", "Squeeze", ["x"], np.int16)
    g.op("some", "Squeeze", ["x"], np.int16, squeeze_dims=ints_attr((0, -1)))
    g.node("expand", "ExpandDims", ["x", "axis"], T=type_attr(np.int16), Tdim=type_attr(np.int64))
    g.op("bad", "Squeeze", ["x"], np.int16, squeeze_dims=ints_attr((1,)))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "all", "--fetch", "some", "--fetch", "expand")
    assert_same(got["all:0"], x.reshape(2, 3))
    assert_same(got["some:0"], x.reshape(2, 1, 3))
    assert_same(got["expand:0"], x[..., None])
    assert "cannot squeeze dim 1 of shape [1,2,1,3,1]: it is not 1" in fails(runner, 4, model, "--fetch", "bad")


def test_concat_pack_unpack(runner, tmp_path):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = np.arange(100, 104, dtype=np.float64).reshape(2, 2)
    g = Graph()
    g.const("a", a)
    g.const("b", b)
    g.const("axis", np.int32(-1))
    g.node("concat", "ConcatV2", ["a", "b", "axis"], T=type_attr(np.float64), N=graph_pb2.AttrValue(i=2),
           Tidx=type_attr(np.int32))
    g.node("stack", "Pack", ["a", "a", "a"], T=type_attr(np.float64), N=graph_pb2.AttrValue(i=3),
           axis=graph_pb2.AttrValue(i=1))
    g.node("unstack", "Unpack", ["a"], T=type_attr(np.float64), num=graph_pb2.AttrValue(i=3),
           axis=graph_pb2.AttrValue(i=-1))
    g.node("bad", "ConcatV2", ["a", "b", "axis"], T=type_attr(np.float64), N=graph_pb2.AttrValue(i=2),
           Tidx=type_attr(np.int32))
    g.proto.node[-1].input[2] = "zero"
    g.const("zero", np.int32(0))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "concat", "--fetch", "stack", *[a for k in range(3)
                                                                       for a in ("--fetch", f"unstack:{k}")])
    assert_same(got["concat:0"], np.concatenate([a, b], axis=-1))
    assert_same(got["stack:0"], np.stack([a, a, a], axis=1))
    for k in range(3):
        assert_same(got[f"unstack:{k}"], a[:, k])
    assert "cannot concatenate shapes [2,3] and [2,2] along axis 0" in fails(runner, 4, model, "--fetch", "bad")


def test_split_and_split_v(runner, tmp_path):
    x = np.arange(24, dtype=np.uint8).reshape(2, 6, 2)
    g = Graph()
    g.const("x", x)
    g.const("dim", np.int32(1))
    g.const("sizes", np.array([1, -1, 2], np.int8))
    g.node("split", "Split", ["dim", "x"], T=type_attr(np.uint8), num_split=graph_pb2.AttrValue(i=3))
    g.node("splitv", "SplitV", ["x", "sizes", "dim"], T=type_attr(np.uint8), Tlen=type_attr(np.int8),
           num_split=graph_pb2.AttrValue(i=3))
    g.node("uneven", "Split", ["dim", "x"], T=type_attr(np.uint8), num_split=graph_pb2.AttrValue(i=4))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, *[a for n in ("split", "splitv") for k in range(3) for a in ("--fetch", f"{n}:{k}")])
    for k, part in enumerate(np.split(x, 3, axis=1)):
        assert_same(got[f"split:{k}"], part)
    for k, part in enumerate(np.split(x, [1, 4], axis=1)):
        assert_same(got[f"splitv:{k}"], part)
    assert "cannot split dim 1 of shape [2,6,2] into 4 equal parts" in fails(runner, 4, model, "--fetch", "uneven:0")


def test_identity_n_keeps_each_dtype(runner, tmp_path):
    g = Graph()
    g.const("a", np.array([1.5, 2.5], np.float32))
    g.const("b", np.array([True, False]))
    types = graph_pb2.AttrValue(list=graph_pb2.AttrValue.ListValue(type=[DT.DT_FLOAT, DT.DT_BOOL]))
    g.node("z", "IdentityN", ["a", "b"], T=types)
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "z:0", "--fetch", "z:1")
    assert_same(got["z:0"], np.array([1.5, 2.5], np.float32))
    assert_same(got["z:1"], np.array([True, False]))
    g.node("short", "IdentityN", ["a"], T=types)
    assert "has 1 data input but IdentityN takes 2" in fails(runner, 3, g.save(tmp_path / "bad.pb"))


def test_slice_pad_tile(runner, tmp_path):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    g = Graph()
    g.const("x", x)
    g.const("begin", np.array([1, 0, 1], np.int64))
    g.const("size", np.array([-1, 2, 3], np.int64))
    g.const("paddings", np.array([[0, 1], [2, 0], [1, 1]], np.int32))
    g.const("multiples", np.array([2, 1, 3], np.int32))
    g.const("far", np.array([0, 0, 2], np.int64))
    g.node("slice", "Slice", ["x", "begin", "size"], T=type_attr(np.int32), Index=type_attr(np.int64))
    g.node("pad", "Pad", ["x", "paddings"], T=type_attr(np.int32), Tpaddings=type_attr(np.int32))
    g.node("tile", "Tile", ["x", "multiples"], T=type_attr(np.int32), Tmultiples=type_attr(np.int32))
    g.node("outside", "Slice", ["x", "far", "size"], T=type_attr(np.int32), Index=type_attr(np.int64))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "slice", "--fetch", "pad", "--fetch", "tile")
    assert_same(got["slice:0"], x[1:, 0:2, 1:4])
    assert_same(got["pad:0"], np.pad(x, [[0, 1], [2, 0], [1, 1]]))
    assert_same(got["tile:0"], np.tile(x, [2, 1, 3]))
    assert "slice of dim 0 from 0 with size -1" not in (line := fails(runner, 4, model, "--fetch", "outside"))
    assert "slice of dim 2 from 2 with size 3 is outside shape [2,3,4]" in line


def test_gather_v2_axes_batch_dims_and_range(runner, tmp_path):
    params = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    g = Graph()
    g.const("params", params)
    g.const("idx", np.array([[2, 0], [1, 1]], np.int16))
    g.const("batch_idx", np.array([[3, 0, 3], [1, 2, 2]], np.int64))
    g.const("axis1", np.int32(1))
    g.const("axis2", np.int64(-1))
    g.const("bad_idx", np.array([0, 3], np.int32))
    g.node("g1", "GatherV2", ["params", "idx", "axis1"], Tparams=type_attr(np.float32), Tindices=type_attr(np.int16),
           Taxis=type_attr(np.int32))
    g.node("g2", "GatherV2", ["params", "batch_idx", "axis2"], Tparams=type_attr(np.float32),
           Tindices=type_attr(np.int64), Taxis=type_attr(np.int64), batch_dims=graph_pb2.AttrValue(i=1))
    g.node("bad", "GatherV2", ["params", "bad_idx", "axis1"], Tparams=type_attr(np.float32),
           Tindices=type_attr(np.int32), Taxis=type_attr(np.int32))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "g1", "--fetch", "g2")
    assert_same(got["g1:0"], params[:, [[2, 0], [1, 1]], :])
    bidx = np.array([[3, 0, 3], [1, 2, 2]])
    assert_same(got["g2:0"], np.stack([params[b][:, bidx[b]] for b in range(2)]))
    assert "index 3 is not in [0, 3)" in fails(runner, 4, model, "--fetch", "bad")


def test_unsorted_segment_sum(runner, tmp_path):
    data = np.arange(12, dtype=np.int32).reshape(4, 3)
    g = Graph()
    g.const("data", data)
    g.const("ids", np.array([2, -1, 0, 2], np.int32))
    g.const("num", np.int32(4))
    g.const("few", np.int32(2))
    g.node("sum", "UnsortedSegmentSum", ["data", "ids", "num"], T=type_attr(np.int32), Tindices=type_attr(np.int32),
           Tnumsegments=type_attr(np.int32))
    g.node("bad", "UnsortedSegmentSum", ["data", "ids", "few"], T=type_attr(np.int32), Tindices=type_attr(np.int32),
           Tnumsegments=type_attr(np.int32))
    model = g.save(tmp_path / "model.pb")
    expected = np.zeros((4, 3), np.int32)
    expected[0], expected[2] = data[2], data[0] + data[3]
    assert_same(outputs(runner, model, "--fetch", "sum")["sum:0"], expected)
    assert "segment id 2 is not below num_segments 2" in fails(runner, 4, model, "--fetch", "bad")


# (key as numpy spells it, begin, end, strides, masks (begin, end, ellipsis, new_axis, shrink))
STRIDED = [
    ((slice(1, None), slice(None, None, -1), 2), [1, 0, 2], [0, 0, 3], [1, -1, 1], (2, 3, 0, 0, 4)),
    ((Ellipsis, None, slice(-3, -1)), [0, 0, -3], [0, 0, -1], [1, 1, 1], (0, 0, 1, 2, 0)),
    ((-1, slice(None, None, 2)), [-1, 0], [0, 0], [1, 2], (2, 2, 0, 0, 1)),
    ((slice(10, -10, -3),), [10], [-10], [-3], (0, 0, 0, 0, 0)),
    ((slice(2, 1), None, Ellipsis, 0), [2, 0, 0, 0], [1, 0, 0, 1], [1, 1, 1, 1], (0, 0, 4, 2, 8)),
]


@pytest.mark.parametrize("key, begin, end, strides, masks", STRIDED)
def test_strided_slice_and_its_gradient_match_numpy(runner, tmp_path, key, begin, end, strides, masks):
    x = np.arange(4 * 5 * 6, dtype=np.int64).reshape(4, 5, 6)
    expected = x[key]
    attrs = dict(zip(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"),
                     (graph_pb2.AttrValue(i=m) for m in masks)))
    g = Graph()
    g.const("x", x)
    g.const("shape", np.array(x.shape, np.int32))
    for name, v in (("begin", begin), ("end", end), ("strides", strides)):
        g.const(name, np.array(v, np.int32))
    g.const("dy", np.arange(1, expected.size + 1, dtype=np.int64).reshape(expected.shape))
    g.node("slice", "StridedSlice", ["x", "begin", "end", "strides"], T=type_attr(np.int64),
           Index=type_attr(np.int32), **attrs)
    g.node("grad", "StridedSliceGrad", ["shape", "begin", "end", "strides", "dy"], T=type_attr(np.int64),
           Index=type_attr(np.int32), **attrs)
    got = outputs(runner, g.save(tmp_path / "model.pb"), "--fetch", "slice", "--fetch", "grad")
    assert_same(got["slice:0"], expected)
    grad = np.zeros_like(x)
    grad[key] = np.arange(1, expected.size + 1).reshape(expected.shape)
    assert_same(got["grad:0"], grad)


@pytest.mark.parametrize("begin, end, strides, masks, message", [
    ([0], [1], [0], (0, 0, 0, 0, 0), "strides[0] must be non-zero"),
    ([7], [8], [1], (0, 0, 0, 0, 1), "index 7 is out of bounds for dim 0 of size 4"),
    ([0, 0], [1, 1], [1, 1], (0, 0, 3, 0, 0), "at most one ellipsis"),
    ([0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], (0, 0, 0, 0, 0), "more indices than the input's 3 dims"),
    ([0, 0], [1], [1, 1], (0, 0, 0, 0, 0), "begin, end and strides must have one entry each"),
])
def test_strided_slice_errors(runner, tmp_path, begin, end, strides, masks, message):
    attrs = dict(zip(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"),
                     (graph_pb2.AttrValue(i=m) for m in masks)))
    g = Graph()
    g.const("x", np.zeros((4, 5, 6), np.float32))
    for name, v in (("begin", begin), ("end", end), ("strides", strides)):
        g.const(name, np.array(v, np.int64))
    g.node("z", "StridedSlice", ["x", "begin", "end", "strides"], T=type_attr(np.float32), Index=type_attr(np.int64),
           **attrs)
    assert message in fails(runner, 4, g.save(tmp_path / "model.pb"))


def test_conv_bias_relu_chain_gives_what_the_separate_kernels_give(runner, tmp_path):
    # The executor runs Conv2D -> BiasAdd -> Relu as one kernel call when the intermediate
    # values have no other use; fetching them too forces the separate kernels. Both must
    # agree bit for bit, and a bias that does not fit is still BiasAdd's error.
    rng = np.random.default_rng(19)
    x, f = rng.normal(size=(2, 6, 5, 3)).astype(np.float32), rng.normal(size=(3, 3, 3, 10)).astype(np.float32)
    g = Graph()
    g.const("x", x)
    g.const("f", f)
    b = rng.normal(size=10).astype(np.float32)
    g.const("b", b)
    g.const("short", np.ones(9, np.float32))
    attrs = conv_attrs((1, 1, 1, 1), "SAME", (1, 1, 1, 1), ())
    for prefix in ("fused", "plain"):
        g.op(f"{prefix}_conv", "Conv2D", ["x", "f"], np.float32, **attrs)
        g.op(f"{prefix}_bias", "BiasAdd", [f"{prefix}_conv", "b"], np.float32)
        g.op(f"{prefix}_relu", "Relu", [f"{prefix}_bias"], np.float32)
    g.op("bad_conv", "Conv2D", ["x", "f"], np.float32, **attrs)
    g.op("bad_bias", "BiasAdd", ["bad_conv", "short"], np.float32)
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "fused_relu", "--fetch", "plain_relu", "--fetch", "plain_bias",
                  "--fetch", "plain_conv")
    assert_same(got["fused_relu:0"], got["plain_relu:0"])
    assert_same(got["plain_bias:0"], got["plain_conv:0"] + b)
    np.testing.assert_allclose(got["plain_conv:0"], conv_oracle(x, f, (1, 1, 1, 1), "SAME"), rtol=1e-5, atol=1e-5)
    assert "node 'bad_bias' (BiasAdd): bias [9] must be 1-D and match" in fails(runner, 4, model, "--fetch", "bad_bias")
