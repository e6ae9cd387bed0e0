"""graphrun-cc's layer and array kernels (convolution, pooling, normalization, slicing) against numpy oracles
written from TensorFlow's definitions.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/cc_helpers.py.
"""

import json

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.cc_helpers import (DT, Graph, assert_close, assert_same, binary_graph, bool_attr, fails, float_attr,
                              ints_attr, output, outputs, str_attr, type_attr)


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


@pytest.mark.parametrize("inf_in_padding", [False, True])
def test_depthwise_with_a_filter_far_larger_than_its_input(runner, tmp_path, inf_in_padding):
    """The fuzzer's one timeout: a filter far larger than its input costs only the taps inside it
    (padding taps add zeros), unless a weight is not finite: then 0 * inf is NaN, as in TF."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1, 6, 6, 1)).astype(np.float32)
    f = rng.normal(size=(129, 129, 1, 1)).astype(np.float32)
    if inf_in_padding:
        f[0, 0, 0, 0] = np.inf          # a corner tap every output pixel reads from padding
    oh, ow, taps = window_taps(x.shape, (129, 129), (1, 1, 1, 1), (1, 1, 1, 1), "SAME")
    expected = np.zeros((1, oh, ow, 1, 1), np.float64)
    for (oy, ox), found in taps.items():
        for a, b, r, c in found:
            if r is not None:
                expected[:, oy, ox] += x[:, r, c, :, None].astype(np.float64) * f[a, b]
    if inf_in_padding:
        expected[...] = np.nan
    model = conv_graph(tmp_path, "DepthwiseConv2dNative", [x, f], np.float32,
                       strides=ints_attr((1, 1, 1, 1)), padding=str_attr("SAME"))
    got = output(runner, model)
    np.testing.assert_allclose(got, expected.reshape(1, oh, ow, 1).astype(np.float32), rtol=1e-5, atol=1e-5)
