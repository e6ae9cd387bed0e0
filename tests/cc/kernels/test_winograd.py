"""graphrun-cc's Winograd F(2x2, 3x3) convolution (runner/kernels/lib/winograd_conv.cc): a float32
3x3 Conv2D with stride 1, a constant filter and at least 64 channels in and out over at least 32
2x2 tiles runs as input transforms, one batched oneDNN matmul and output transforms.

The oracle is numpy in float64 (a direct sum), under the numerics policy of the fetch; which path
ran is read from oneDNN's own log (ONEDNN_VERBOSE=1 prints one `exec` line per primitive run: a
`matmul` for Winograd's products, a `convolution` for the direct kernel). Where Winograd cannot give
the direct sum's answer (a value that is not finite, an overflow of its transformed values) it
hands the node back, and the result is the direct kernel's to the bit (GRAPHRUN_CC_WINOGRAD=0).
"""

import json
import os
import subprocess

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, ints_attr, str_attr
from tests.support.numerics_policy import assert_conforms, assert_same

RNG = np.random.default_rng(5)


def direct_oracle(x, w, pads):
    """3x3, stride 1 convolution in float64 with pads ((top, bottom), (left, right)); inf and NaN
    propagate as they will (the tests that feed them compare two runs with each other instead)."""
    padded = np.pad(x.astype(np.float64), ((0, 0), *pads, (0, 0)))
    oh, ow = padded.shape[1] - 2, padded.shape[2] - 2
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    with np.errstate(invalid="ignore"):
        for a in range(3):
            for b in range(3):
                out += padded[:, a:a + oh, b:b + ow, :] @ w[a, b].astype(np.float64)
    return out


ACTIVATIONS = {None: lambda v: v, "Relu": lambda v: np.maximum(v, 0),
               "Relu6": lambda v: np.minimum(np.maximum(v, 0), 6)}


def build(tmp_path, x, w, padding, activation, bias=True, constant_filter=True):
    """x -> Conv2D(w) [-> BiasAdd -> activation]; returns (model, fetch, float64 oracle or None)."""
    g = Graph()
    g.placeholder("x", np.float32, list(x.shape))
    if constant_filter:
        g.const("w", w)
    else:
        g.placeholder("w", np.float32, list(w.shape))
        np.save(tmp_path / "w.npy", w)
    if isinstance(padding, str):
        pads = ((1, 1), (1, 1)) if padding == "SAME" else ((0, 0), (0, 0))
        attrs = {"padding": str_attr(padding)}
    else:
        pads = padding
        attrs = {"padding": str_attr("EXPLICIT"), "explicit_paddings": ints_attr([0, 0, *pads[0], *pads[1], 0, 0])}
    g.op("conv", "Conv2D", ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]), **attrs)
    value, last = direct_oracle(x, w, pads), "conv"
    if bias:
        b = np.linspace(-0.5, 0.5, w.shape[3]).astype(np.float32)
        g.const("b", b)
        g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
        value, last = value + b, "bias"
    if activation:
        g.op("act", activation, [last], np.float32)
        last = "act"
    np.save(tmp_path / "x.npy", x)
    expected = ACTIVATIONS[activation](value).astype(np.float32)
    return g.save(tmp_path / "model.pb"), f"{last}:0", expected


def run(runner, model, tmp_path, fetch, winograd=True, verbose=False):
    """(fetched value, the kinds of oneDNN primitive that ran, reorders aside)."""
    feeds = ["--feed", f"x=@{tmp_path / 'x.npy'}"]
    if (tmp_path / "w.npy").exists():
        feeds += ["--feed", f"w=@{tmp_path / 'w.npy'}"]
    env = dict(os.environ, GRAPHRUN_CC_WINOGRAD="1" if winograd else "0")
    if verbose:
        env["ONEDNN_VERBOSE"] = "1"
    proc = subprocess.run([str(runner), model, *feeds, "--fetch", fetch, "--json"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # "onednn_verbose,exec,cpu,<kind>,<implementation>,..."; the filter's reorders are left out
    kinds = {line.split(",")[3] for line in lines if line.startswith("onednn_verbose,exec,")} - {"reorder"}
    (doc,) = [json.loads(line) for line in lines if line.startswith("{")]
    out = doc["outputs"][0]
    return np.array(out["values"], np.float32).reshape(out["shape"]), kinds


def relu_input(shape):
    """Post-Relu activations (half zeros), as a ResNet's 3x3 layers see them."""
    return np.maximum(RNG.standard_normal(shape), 0).astype(np.float32)


def he_filter(c, k):
    return (RNG.standard_normal((3, 3, c, k)) * np.sqrt(2 / (9 * c))).astype(np.float32)


CASES = {
    "same-relu": ((1, 16, 16, 64), 64, "SAME", "Relu"),
    # odd sizes (tiles cut by the edge) and channel counts that leave lanes over
    "odd-relu6": ((2, 15, 13, 70), 72, "SAME", "Relu6"),
    "valid-bias": ((1, 18, 17, 64), 80, "VALID", None),
    "explicit-relu": ((1, 12, 14, 96), 64, ((2, 0), (0, 1)), "Relu"),
    "resnet-stage4": ((2, 14, 14, 256), 256, "SAME", "Relu"),
    # 1089 tiles: two chunks of 545 and 544 under the 4 MiB budget, so a second matmul for the last
    "two-chunks": ((1, 66, 66, 64), 64, "SAME", "Relu"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_winograd_runs_and_agrees_with_a_float64_direct_sum(runner, tmp_path, case):
    shape, k, padding, activation = CASES[case]
    x = relu_input(shape) if case != "valid-bias" else RNG.uniform(-1, 1, shape).astype(np.float32)
    model, fetch, expected = build(tmp_path, x, he_filter(shape[3], k), padding, activation)
    ours, kinds = run(runner, model, tmp_path, fetch, verbose=True)
    assert kinds == {"matmul"}, kinds
    assert_conforms(ours, expected, model, fetch)
    _, kinds = run(runner, model, tmp_path, fetch, winograd=False, verbose=True)
    assert kinds == {"convolution"}, kinds  # the switch that keeps the direct kernel, for comparing


def test_a_plain_conv2d_without_bias_runs_by_winograd_too(runner, tmp_path):
    x = relu_input((1, 12, 12, 64))  # 36 tiles
    model, fetch, expected = build(tmp_path, x, he_filter(64, 64), "SAME", None, bias=False)
    ours, kinds = run(runner, model, tmp_path, fetch, verbose=True)
    assert kinds == {"matmul"}
    assert_conforms(ours, expected, model, fetch)


@pytest.mark.parametrize("why", ["few-channels", "few-tiles", "fed-filter", "leaky-relu"])
def test_what_winograd_does_not_take_runs_the_direct_kernel(runner, tmp_path, why):
    shape, k = {"few-channels": ((1, 16, 16, 32), 64), "few-tiles": ((1, 8, 7, 64), 64)}.get(
        why, ((1, 16, 16, 64), 64))
    x = relu_input(shape)
    w = he_filter(shape[3], k)
    if why == "leaky-relu":
        model, fetch, _ = build(tmp_path, x, w, "SAME", None)
        g = Graph()
        g.proto.ParseFromString(model.read_bytes())
        g.op("act", "LeakyRelu", ["bias"], np.float32)
        model, fetch = g.save(tmp_path / "leaky.pb"), "act:0"
        value = direct_oracle(x, w, ((1, 1), (1, 1))) + np.linspace(-0.5, 0.5, k).astype(np.float32)
        expected = np.where(value > 0, value, 0.2 * value).astype(np.float32)  # LeakyRelu's default alpha
    else:
        model, fetch, expected = build(tmp_path, x, w, "SAME", "Relu", constant_filter=why != "fed-filter")
    ours, kinds = run(runner, model, tmp_path, fetch, verbose=True)
    assert kinds == {"convolution"}, kinds
    assert_conforms(ours, expected, model, fetch)


def with_values(x, spots, values):
    x = x.copy()
    for (n, i, j, c), v in zip(spots, values):
        x[n, i, j, c] = v
    return x


@pytest.mark.parametrize("values, finite", [
    ([np.inf, -np.inf, np.nan], False),  # inf - inf would make NaN where the direct sum has inf
    ([3e38, -3e38, 3e38], True),         # finite, but the patch's 3e38 - -3e38 overflows
])
def test_values_winograd_cannot_take_get_the_direct_kernels_bits(runner, tmp_path, values, finite):
    # rows 3 and 5 of one column are the first and third rows of one tile's patch
    x = with_values(relu_input((1, 16, 16, 64)), [(0, 3, 4, 5), (0, 5, 4, 5), (0, 10, 11, 60)], values)
    w = he_filter(64, 64) * np.float32(1e-3)
    model, fetch, _ = build(tmp_path, x, w, "SAME", None)
    ours, _ = run(runner, model, tmp_path, fetch)
    direct, _ = run(runner, model, tmp_path, fetch, winograd=False)
    assert_same(ours, direct)
    assert np.all(np.isfinite(direct)) == finite


def test_a_filter_that_is_not_finite_gets_the_direct_kernels_bits(runner, tmp_path):
    x = relu_input((1, 16, 16, 64))
    w = he_filter(64, 64)
    w[1, 1, 3, 7] = np.inf
    model, fetch, _ = build(tmp_path, x, w, "SAME", "Relu")
    ours, _ = run(runner, model, tmp_path, fetch)
    direct, _ = run(runner, model, tmp_path, fetch, winograd=False)
    assert_same(ours, direct)
