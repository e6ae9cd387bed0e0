"""graphrun-cc's kernels for gradient graphs: Pow, Sign, AddN, ReluGrad, shape queries, Range, BroadcastTo,
BroadcastGradientArgs, Cast, Fill, Const, comparisons, against numpy oracles (variables: test_variables.py).

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import (DT, Graph, binary_graph, bool_attr, fails, fed_graph, feeds, ok, output, outputs,
                              type_attr, unary_graph)
from tests.support.numerics_policy import assert_same


@pytest.mark.parametrize("dtype, base, exponent", [   # int32 and int64: the conformance case pow_integers_wrap
    (np.int8, [3, 2, -2, -1, 1, 0], [5, 7, 7, 9, 100, 3]),
    (np.uint8, [3, 255, 2], [6, 2, 8]),
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


def test_sign_of_a_subnormal_and_of_int8(runner, tmp_path):
    # The conformance cases sign and sign_more_dtypes hold the rest; TensorFlow's Sign of a
    # subnormal is the subnormal itself (its CPU flushes them), so this one is graphrun-cc's alone.
    x = np.array([1e-45, -1e-45], np.float32)
    assert_same(output(runner, unary_graph(tmp_path, "Sign", x)), np.array([1.0, -1.0], np.float32))
    n = np.array([-128, -1, 0, 9, 127], np.int8)
    assert_same(output(runner, unary_graph(tmp_path, "Sign", n)), np.array([-1, -1, 0, 1, 1], np.int8))


def test_sign_refuses_unsigned(runner, tmp_path):
    line = fails(runner, 3, unary_graph(tmp_path, "Sign", [1, 2], np.uint8))
    assert "node 'z' (Sign): attr 'T' is uint8" in line


def add_n_graph(tmp_path, values, n=None):
    g = Graph()
    names = [g.const(f"x{i}", v) for i, v in enumerate(values)]
    dtype = np.asarray(values[0]).dtype
    g.node("z", "AddN", names, T=type_attr(dtype), N=graph_pb2.AttrValue(i=len(values) if n is None else n))
    return g.save(tmp_path / "model.pb")


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
    # more integer ranges in the conformance cases range and range_more; TensorFlow refuses the
    # first row where graphrun-cc gives an empty range
    (np.int32, 0, 5, -1), (np.uint16, 3, 65535, 4096), (np.int16, 10, 10, 1),
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


@pytest.mark.slow
def test_long_chain_runs_without_recursion(runner, tmp_path):
    g = Graph()
    g.const("one", 1, np.int32)
    g.const("n0", 0, np.int32)
    for i in range(1, 100_000):
        node = g.proto.node.add(name=f"n{i}", op="AddV2")
        node.input.extend([f"n{i - 1}", "one"])
        node.attr["T"].type = DT.DT_INT32
    assert ok(runner, g.save(tmp_path / "chain.pb")) == "n99999:0 int32 [] = 99999\n"


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
