"""graphrun-cc's convolution and pooling kernels (Conv2D and its backprops, DepthwiseConv2dNative, MaxPool,
AvgPool and their gradients) against numpy oracles that loop over TensorFlow's window definitions.

Every graph is built with the generated protobuf classes (not the graphdef package), and every
expected value is a literal or numpy worked out in the test: an oracle independent of the runner.
Shared builders and runners are in tests/support/cc_helpers.py.
"""

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, fails, ints_attr, op_graph, output, outputs, str_attr
from tests.support.numerics_policy import assert_conforms, assert_same


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


CONV_CASES = [  # x shape, filter shape, strides, padding, dilations, explicit paddings
    ((2, 9, 9, 1), (5, 5, 1, 8), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), ()),
    ((1, 7, 8, 3), (3, 2, 3, 13), (1, 2, 3, 1), "SAME", (1, 1, 1, 1), ()),
    ((2, 10, 9, 2), (3, 3, 2, 20), (1, 1, 2, 1), "VALID", (1, 2, 3, 1), ()),
    ((1, 5, 6, 4), (2, 3, 4, 5), (1, 2, 1, 1), "EXPLICIT", (1, 1, 1, 1), (0, 0, 1, 2, 0, 3, 0, 0)),
    ((3, 4, 4, 6), (1, 1, 6, 9), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), ()),
    ((1, 3, 3, 2), (5, 5, 2, 3), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), ()),
    # 1x1 to fewer than 32 channels over many pixels: MobileNetV2's projections, which take
    # oneDNN's AVX2 kernel on a CPU that splits 512-bit operations (lib/dnnl_conv.cc)
    ((2, 28, 28, 96), (1, 1, 96, 24), (1, 1, 1, 1), "VALID", (1, 1, 1, 1), ()),
    ((1, 40, 40, 32), (1, 1, 32, 16), (1, 1, 1, 1), "SAME", (1, 1, 1, 1), ()),
]


def conv_attrs(strides, padding, dilations, explicit):
    return {"strides": ints_attr(strides), "padding": str_attr(padding), "dilations": ints_attr(dilations),
            "explicit_paddings": ints_attr(explicit)}


@pytest.mark.parametrize("xs, fs, strides, padding, dilations, explicit", CONV_CASES)
def test_conv2d_float32_matches_direct_convolution(runner, tmp_path, xs, fs, strides, padding, dilations, explicit):
    rng = np.random.default_rng(len(xs) + fs[3])
    x, f = rng.normal(size=xs).astype(np.float32), rng.normal(size=fs).astype(np.float32)
    model = op_graph(tmp_path, "Conv2D", [x, f], np.float32, **conv_attrs(strides, padding, dilations, explicit))
    expected = conv_oracle(x, f, strides, padding, dilations, explicit or (0,) * 8)
    assert_conforms(output(runner, model), expected, model, "z")


def test_conv2d_float64_and_int32_wrap(runner, tmp_path):
    rng = np.random.default_rng(3)
    x, f = rng.normal(size=(2, 6, 5, 3)), rng.normal(size=(3, 3, 3, 4))
    attrs = conv_attrs((1, 2, 1, 1), "SAME", (1, 1, 1, 1), ())
    model = op_graph(tmp_path, "Conv2D", [x, f], np.float64, **attrs)
    assert_conforms(output(runner, model), conv_oracle(x, f, (1, 2, 1, 1), "SAME"), model, "z")
    xi = rng.integers(-2**31, 2**31, size=(1, 4, 4, 2), dtype=np.int32)
    fi = rng.integers(-2**31, 2**31, size=(2, 2, 2, 3), dtype=np.int32)
    assert_same(output(runner, op_graph(tmp_path, "Conv2D", [xi, fi], np.int32, **attrs)),
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
    model = gr.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "dx", "--fetch", "df")
    assert_conforms(got["dx:0"], dx, model, "dx:0")
    assert_conforms(got["df:0"], df, model, "df:0")


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
    expected = np.zeros((2, oh, ow, 3, 2), np.float64)
    for (oy, ox), found in taps.items():
        for a, b, r, c in found:
            if r is not None:
                expected[:, oy, ox] += x[:, r, c, :, None].astype(np.float64) * f[a, b]
    model = op_graph(tmp_path, "DepthwiseConv2dNative", [x, f], np.float32,
                       strides=ints_attr((1, 1, 2, 1)), padding=str_attr("SAME"))
    assert_conforms(output(runner, model), expected.reshape(2, oh, ow, 6).astype(np.float32), model, "z")


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
    model = op_graph(tmp_path, "Conv2D", [np.ones((1, 3, 3, 1), np.float32), np.ones((1, 1, 1, 1), np.float32)],
                       np.float32, **{**base, **attrs})
    assert message in fails(runner, 3, model)


def test_conv2d_window_that_does_not_fit(runner, tmp_path):
    model = op_graph(tmp_path, "Conv2D", [np.ones((1, 2, 2, 1), np.float32), np.ones((4, 1, 1, 1), np.float32)],
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
    model = op_graph(tmp_path, "MaxPool", [x], dtype, **pool_attrs((3, 2), (2, 2), "SAME"))
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
    expected = np.zeros((2, oh, ow, 3), np.float64)
    grad = rng.normal(size=(2, oh, ow, 3)).astype(np.float32)
    dx = np.zeros(x.shape, np.float64)
    for (oy, ox), found in taps.items():
        real = [(r, c) for _, _, r, c in found if r is not None]
        expected[:, oy, ox] = np.mean([x[:, r, c].astype(np.float64) for r, c in real], axis=0)
        for r, c in real:
            dx[:, r, c] += grad[:, oy, ox].astype(np.float64) / len(real)
    g = Graph()
    g.const("x", x)
    g.const("shape", np.array(x.shape, np.int32))
    g.const("g", grad)
    g.op("avg", "AvgPool", ["x"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    g.op("back", "AvgPoolGrad", ["shape", "g"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "avg", "--fetch", "back")
    assert_conforms(got["avg:0"], expected.astype(np.float32), model, "avg:0")
    assert_conforms(got["back:0"], dx.astype(np.float32), model, "back:0")


def test_pools_split_over_cores_mid_row(runner, tmp_path):
    # Large enough for the kernels to split their output pixels over the cores (core/parallel.h), with an
    # odd output width, so a share starts in the middle of an output row.
    x = np.random.default_rng(17).normal(size=(3, 41, 37, 24)).astype(np.float32)
    g = Graph()
    g.const("x", x)
    g.op("max", "MaxPool", ["x"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    g.op("avg", "AvgPool", ["x"], np.float32, **pool_attrs((3, 3), (2, 2), "SAME"))
    model = g.save(tmp_path / "model.pb")
    got = outputs(runner, model, "--fetch", "max", "--fetch", "avg")
    oh, ow, taps = window_taps(x.shape, (3, 3), (1, 2, 2, 1), (1, 1, 1, 1), "SAME")
    largest = np.zeros((3, oh, ow, 24), np.float32)
    mean = np.zeros((3, oh, ow, 24), np.float64)
    for (oy, ox), found in taps.items():
        real = [x[:, r, c] for _, _, r, c in found if r is not None]
        largest[:, oy, ox] = np.max(real, axis=0)
        mean[:, oy, ox] = np.mean(np.array(real, np.float64), axis=0)
    assert_same(got["max:0"], largest)
    assert_conforms(got["avg:0"], mean.astype(np.float32), model, "avg:0")


def test_avg_pool_refuses_explicit_padding(runner, tmp_path):
    model = op_graph(tmp_path, "AvgPool", [np.ones((1, 2, 2, 1), np.float32)], np.float32,
                       **pool_attrs((1, 1), (1, 1), "EXPLICIT"))
    assert "attr 'padding' is 'EXPLICIT'; AvgPool accepts SAME, VALID" in fails(runner, 3, model)


def test_conv_bias_relu_chain_gives_what_the_separate_kernels_give(runner, tmp_path):
    # The executor runs Conv2D -> BiasAdd -> Relu as one kernel call when the intermediate
    # values have no other use; fetching them too forces the separate kernels. Both must
    # agree under the numerics policy (oneDNN adds the bias inside its kernel, and its ReLU
    # may give -0.0, which Relu's policy allows), and a bias that does not fit is still
    # BiasAdd's error.
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
    assert_conforms(got["fused_relu:0"], got["plain_relu:0"], model, "plain_relu:0")
    assert_same(got["plain_bias:0"], got["plain_conv:0"] + b)
    assert_conforms(got["plain_conv:0"], conv_oracle(x, f, (1, 1, 1, 1), "SAME"), model, "plain_conv:0")
    assert "node 'bad_bias' (BiasAdd): bias [9] must be 1-D and match" in fails(runner, 4, model, "--fetch", "bad_bias")


@pytest.mark.slow
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
    model = op_graph(tmp_path, "DepthwiseConv2dNative", [x, f], np.float32,
                       strides=ints_attr((1, 1, 1, 1)), padding=str_attr("SAME"))
    got = output(runner, model)
    assert_conforms(got, expected.reshape(1, oh, ow, 1).astype(np.float32), model, "z")
