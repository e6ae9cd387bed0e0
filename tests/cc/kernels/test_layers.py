"""graphrun-cc's layer and array kernels (bias, normalization, activations, division, slicing, joining,
gathering) against numpy oracles written from TensorFlow's definitions; convolution and pooling are in
tests/cc/kernels/test_conv_pool.py.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import (DT, Graph, binary_graph, bool_attr, fails, float_attr, ints_attr, op_graph,
                                      output, outputs, type_attr)
from tests.support.numerics_policy import assert_conforms, assert_same


def test_bias_add_wraps_integers_and_checks_shapes(runner, tmp_path):
    value = np.array([[100, -128], [5, 6]], np.int8)
    bias = np.array([100, -1], np.int8)
    assert_same(output(runner, op_graph(tmp_path, "BiasAdd", [value, bias], np.int8)),
                (value.astype(np.int16) + bias).astype(np.int8))
    line = fails(runner, 4, op_graph(tmp_path, "BiasAdd", [np.ones(3, np.float32), np.ones(3, np.float32)],
                                       np.float32))
    assert "must be 1-D and match the last dim of value [3] (at least 2-D)" in line


@pytest.mark.parametrize("shape", [(2, 3, 4), (300, 5), (4, 70, 1), (1000, 1), (0, 3)])
def test_bias_add_grad_rounds_as_numpy(runner, tmp_path, shape):
    # numpy adds row by row into the sums, except with one channel, where it sums the
    # contiguous column pairwise; non-integral values make any other order show.
    g = np.random.default_rng(7).standard_normal(shape).astype(np.float32) * np.float32(1000)
    expected = np.sum(g, axis=tuple(range(g.ndim - 1)), dtype=np.float32)
    assert_same(output(runner, op_graph(tmp_path, "BiasAddGrad", [g], np.float32)), expected)


def test_bias_add_grad_wraps_integers_and_checks_its_input(runner, tmp_path):
    g = np.array([[[100, -128]], [[100, -1]]], np.int8)
    assert_same(output(runner, op_graph(tmp_path, "BiasAddGrad", [g], np.int8)), np.array([-56, 127], np.int8))
    line = fails(runner, 4, op_graph(tmp_path, "BiasAddGrad", [np.ones(3, np.float32)], np.float32))
    assert "node 'z' (BiasAddGrad): out_backprop must be at least 2-D, got shape [3]" in line
    model = op_graph(tmp_path, "BiasAddGrad", [np.ones((2, 3), np.float32)], np.float32,
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
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, *[a for f in fetches for a in ("--fetch", f)])
    x64, scale64, offset64, mean64, var64 = (v.astype(np.float64) for v in (x, scale, offset, mean, var))
    eps = np.float64(np.float32(0.001))

    def conforms(fetch, expected):
        assert_conforms(got[fetch], expected.astype(np.float32), model, fetch)
    conforms("infer:0", (x64 - mean64) * (scale64 / np.sqrt(var64 + eps)) + offset64)
    for k, v in zip(range(1, 5), (mean, var, mean, var)):
        assert_same(got[f"infer:{k}"], v)
    bm, bv = x64.mean(axis=(0, 1, 2)), x64.var(axis=(0, 1, 2))
    n = x.size // 5
    conforms("train:0", (x64 - bm) / np.sqrt(bv + eps) * scale64 + offset64)
    conforms("train:1", 0.75 * mean64 + 0.25 * bm)
    conforms("train:2", 0.75 * var64 + 0.25 * bv * n / (n - 1))
    conforms("train:3", bm)
    conforms("train:4", bv)
    assert got["train:5"].shape == (0,) and got["infer:5"].shape == (0,)


def test_activations(runner, tmp_path):
    x = np.array([-100, -20, -1, -0.0, 0, 0.5, 3, 6, 7, 20, 100, np.nan], np.float32)
    g = Graph()
    g.const("x", x)
    for op in ("Relu6", "Elu", "Softplus", "Rsqrt"):
        g.op(op.lower(), op, ["x"], np.float32)
    g.op("leaky", "LeakyRelu", ["x"], np.float32, alpha=float_attr(0.1))
    names = ["relu6", "elu", "softplus", "rsqrt", "leaky"]
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, *[a for n in names for a in ("--fetch", n)])
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        assert_same(got["relu6:0"], np.minimum(np.maximum(x, np.float32(0)), np.float32(6)))  # -0.0 becomes 0.0
        assert_conforms(got["elu:0"], np.where(x64 < 0, np.expm1(x64), x64).astype(np.float32), model, "elu:0")
        assert np.signbit(got["elu:0"][3])  # -0.0 stays -0.0: exp(x) - 1 is not taken at zero
        assert_conforms(got["softplus:0"], np.logaddexp(0, x64).astype(np.float32), model, "softplus:0")
        assert_same(got["rsqrt:0"], (np.float32(1) / np.sqrt(x)).astype(np.float32))
        assert_same(got["leaky:0"], np.where(x > 0, x, x * np.float32(0.1)).astype(np.float32))


def test_relu6_integers(runner, tmp_path):
    x = np.array([-5, 0, 3, 6, 9, 2**31 - 1], np.int32)
    assert_same(output(runner, op_graph(tmp_path, "Relu6", [x], np.int32)), np.clip(x, 0, 6))


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
    model = op_graph(tmp_path, op, inputs, dtype, **attrs)
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
