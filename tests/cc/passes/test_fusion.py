"""graphrun-cc's fusion of Conv2D / DepthwiseConv2dNative / MatMul -> BiasAdd -> activation into one
_FusedConv2D / _FusedDepthwiseConv2dNative / _FusedMatMul node (runner/passes/fuse_conv_bias_activation.cc),
and the float32 oneDNN kernels behind them.

The oracle is numpy in float64 (a direct convolution or product, the bias, the activation by its formula);
results are compared under the numerics policy of the unfused graph's fetch, with the pass on, with it off
(GRAPHRUN_CC_OPTIMIZE=0) and with oneDNN off (GRAPHRUN_CC_NO_DNNL=1, the hand-written kernels).
`bench --profile --json` lists the op types that ran, which shows where fusion happened.
"""

import json
import os
import subprocess

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, bool_attr, float_attr, ints_attr, str_attr
from tests.support.numerics_policy import assert_conforms

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 7, 6, 4)).astype(np.float32)
CONV_W = RNG.standard_normal((3, 3, 4, 5)).astype(np.float32)
DW_W = RNG.standard_normal((3, 3, 4, 2)).astype(np.float32)
MM_W = RNG.standard_normal((24, 6)).astype(np.float32)


def conv_oracle(x, w, stride, groups=1):
    """SAME convolution in float64; `groups` input-channel groups (depthwise: one per channel)."""
    n, h, wd, c = x.shape
    kh, kw, ci, co = w.shape
    oh, ow = -(-h // stride), -(-wd // stride)
    pad_h, pad_w = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - wd, 0)
    padded = np.pad(x.astype(np.float64), ((0, 0), (pad_h // 2, pad_h - pad_h // 2),
                                           (pad_w // 2, pad_w - pad_w // 2), (0, 0)))
    out = np.zeros((n, oh, ow, co))
    cog = co // groups
    for i in range(oh):
        for j in range(ow):
            patch = padded[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
            for g in range(groups):
                out[:, i, j, g * cog:(g + 1) * cog] = np.einsum(
                    "nabc,abco->no", patch[..., g * ci:(g + 1) * ci], w[..., g * cog:(g + 1) * cog].astype(np.float64))
    return out


def depthwise_as_grouped(w):
    """A depthwise filter [KH,KW,C,M] as the grouped filter [KH,KW,1,C*M] with C groups."""
    kh, kw, c, m = w.shape
    return w.reshape(kh, kw, 1, c * m)


ACTIVATIONS = {
    None: lambda v: v,
    "Relu": lambda v: np.maximum(v, 0),
    "Relu6": lambda v: np.minimum(np.maximum(v, 0), 6),
    "Elu": lambda v: np.where(v < 0, np.expm1(v), v),
    "LeakyRelu": lambda v: np.where(v > 0, v, 0.1 * v),
    "swish": lambda v: v / (1 + np.exp(-v)),
    "swish_reversed": lambda v: v / (1 + np.exp(-v)),
}


def build(tmp_path, product, activation):
    """x -> product -> BiasAdd -> activation; returns (model, fetch, float64 oracle)."""
    g = Graph()
    if product == "MatMul":
        x = X.reshape(2, -1)[:, :24] * 2
        g.placeholder("x", np.float32, [-1, 24])
        g.const("w", MM_W)
        g.op("prod", "MatMul", ["x", "w"], np.float32, transpose_a=bool_attr(False), transpose_b=bool_attr(False))
        value = x.astype(np.float64) @ MM_W.astype(np.float64)
    elif product == "Conv2D":
        x = X
        g.placeholder("x", np.float32, [-1, 7, 6, 4])
        g.const("w", CONV_W)
        g.op("prod", "Conv2D", ["x", "w"], np.float32, strides=ints_attr([1, 2, 2, 1]), padding=str_attr("SAME"))
        value = conv_oracle(X, CONV_W, 2)
    else:
        x = X
        g.placeholder("x", np.float32, [-1, 7, 6, 4])
        g.const("w", DW_W)
        g.op("prod", "DepthwiseConv2dNative", ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]),
             padding=str_attr("SAME"))
        value = conv_oracle(X, depthwise_as_grouped(DW_W), 1, groups=4)
    channels = value.shape[-1]
    bias = np.linspace(-1.5, 1.5, channels).astype(np.float32)
    g.const("b", bias)
    g.op("bias", "BiasAdd", ["prod", "b"], np.float32)
    last = "bias"
    if activation in ("swish", "swish_reversed"):
        g.op("sig", "Sigmoid", ["bias"], np.float32)
        g.op("act", "Mul", ["bias", "sig"] if activation == "swish" else ["sig", "bias"], np.float32)
        last = "act"
    elif activation == "LeakyRelu":
        g.op("act", "LeakyRelu", ["bias"], np.float32, alpha=float_attr(0.1))
        last = "act"
    elif activation:
        g.op("act", activation, ["bias"], np.float32)
        last = "act"
    np.save(tmp_path / "x.npy", x)
    expected = ACTIVATIONS[activation](value + bias).astype(np.float32)
    return g.save(tmp_path / "model.pb"), f"{last}:0", expected


def cc(runner, *args, **env):
    proc = subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **env))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fetched(runner, model, tmp_path, fetch, **env):
    out = cc(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch, "--json", **env)
    return np.array(json.loads(out)["outputs"][0]["values"], np.float32)


def op_types(runner, model, tmp_path, fetch, **env):
    out = cc(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch, "--runs", "1",
             "--warmup", "0", "--profile", "--json", **env)
    return sorted(t["op"] for t in json.loads(out)["profile"]["op_types"])


FUSED = {"Conv2D": "_FusedConv2D", "DepthwiseConv2dNative": "_FusedDepthwiseConv2dNative",
         "MatMul": "_FusedMatMul"}


@pytest.mark.slow
@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("product", list(FUSED))
def test_the_chain_fuses_and_agrees_with_numpy(runner, tmp_path, product, activation):
    model, fetch, expected = build(tmp_path, product, activation)
    assert op_types(runner, model, tmp_path, fetch) == [FUSED[product]]
    for env in ({}, {"GRAPHRUN_CC_OPTIMIZE": "0"}, {"GRAPHRUN_CC_NO_DNNL": "1"}):
        assert_conforms(fetched(runner, model, tmp_path, fetch, **env), expected, model, fetch)


def test_a_swish_whose_sigmoid_is_fetched_is_not_fused_away(runner, tmp_path):
    model, fetch, expected = build(tmp_path, "Conv2D", "swish")
    out = cc(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch, "--fetch", "sig:0",
             "--runs", "1", "--warmup", "0", "--profile", "--json")
    assert sorted(t["op"] for t in json.loads(out)["profile"]["op_types"]) == ["Mul", "Sigmoid", "_FusedConv2D"]
    assert_conforms(fetched(runner, model, tmp_path, fetch), expected, model, fetch)


def test_a_mul_of_two_other_values_is_no_swish(runner, tmp_path):
    # x * Sigmoid(y) with y not x: only the product and the bias fuse into the MatMul (the three
    # elementwise ops after it, all on the MatMul's value, run as one fuse_elementwise chain).
    g = Graph()
    g.placeholder("x", np.float32, [-1, 24])
    g.const("w", MM_W)
    g.const("b", np.ones(6, np.float32))
    g.op("prod", "MatMul", ["x", "w"], np.float32)
    g.op("bias", "BiasAdd", ["prod", "b"], np.float32)
    g.op("neg", "Neg", ["bias"], np.float32)
    g.op("sig", "Sigmoid", ["neg"], np.float32)
    g.op("act", "Mul", ["bias", "sig"], np.float32)
    model = g.save(tmp_path / "model.pb")
    np.save(tmp_path / "x.npy", X.reshape(2, -1)[:, :24])
    assert op_types(runner, model, tmp_path, "act:0") == ["_FusedElementwise", "_FusedMatMul"]
