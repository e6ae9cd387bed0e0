"""graphrun-cc's fusion of a 1x1 convolution and the 3x3 depthwise convolution that alone reads it
(runner/passes/fuse_pointwise_depthwise.cc) into one _FusedPointwiseDepthwise node, run as one oneDNN
primitive with a depthwise post-op (runner/kernels/lib/dnnl_pointwise_depthwise.h) or, where oneDNN has
none, as the two convolutions.

The pass runs where channel blocks are off (AVX-512 CPUs); the tests set GRAPHRUN_CC_CHANNEL_BLOCKS=0 so
that it runs on every CPU. The oracle is numpy in float64, under the numerics policy of the fetch;
`inspect --json` shows whether the pass fired, `bench --profile --json` which op types ran.
"""

import json
import os
import subprocess

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, ints_attr, str_attr
from tests.support.numerics_policy import assert_conforms

RNG = np.random.default_rng(8)
ACTIVATIONS = {None: lambda v: v, "Relu": lambda v: np.maximum(v, 0),
               "Relu6": lambda v: np.minimum(np.maximum(v, 0), 6)}
BLOCKS_OFF = {"GRAPHRUN_CC_CHANNEL_BLOCKS": "0"}


def same_pads(size, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + 3 - size, 0)
    return total // 2, total - total // 2


def depthwise64(x, w, stride, padding):
    """3x3 depthwise (multiplier 1) in float64."""
    n, h, wd, c = x.shape
    pads = (same_pads(h, stride), same_pads(wd, stride)) if padding == "SAME" else ((0, 0), (0, 0))
    p = np.pad(x, ((0, 0), *pads, (0, 0)))
    oh, ow = (p.shape[1] - 3) // stride + 1, (p.shape[2] - 3) // stride + 1
    out = np.zeros((n, oh, ow, c))
    with np.errstate(invalid="ignore"):  # an inf weight times a zero of the padding, as TF computes it
        for a in range(3):
            for b in range(3):
                out += p[:, a:a + (oh - 1) * stride + 1:stride, b:b + (ow - 1) * stride + 1:stride, :] * w[a, b, :, 0]
    return out


def build(tmp_path, shape, expand, stride, padding="SAME", act1="Relu6", act2="Relu6", dw_filter=None,
          dilations=None):
    """x -> Conv2D 1x1 -> BiasAdd (-> act1) -> DepthwiseConv2dNative 3x3 -> BiasAdd (-> act2)."""
    c = shape[3]
    x = RNG.uniform(-1, 1, shape).astype(np.float32)
    w1 = (RNG.standard_normal((1, 1, c, expand)) / np.sqrt(c)).astype(np.float32)
    b1 = RNG.uniform(-0.5, 0.5, expand).astype(np.float32)
    w2 = RNG.standard_normal((3, 3, expand, 1)).astype(np.float32) if dw_filter is None else dw_filter
    b2 = RNG.uniform(-0.5, 0.5, expand).astype(np.float32)
    g = Graph()
    g.placeholder("x", np.float32, list(shape))
    g.const("w1", w1)
    g.const("b1", b1)
    g.const("w2", w2)
    g.const("b2", b2)
    g.op("expand", "Conv2D", ["x", "w1"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("VALID"))
    g.op("expand_bias", "BiasAdd", ["expand", "b1"], np.float32)
    last = "expand_bias"
    if act1:
        last = g.op("expand_act", act1, [last], np.float32)
    extra = {"dilations": ints_attr(dilations)} if dilations else {}
    g.op("dw", "DepthwiseConv2dNative", [last, "w2"], np.float32, strides=ints_attr([1, stride, stride, 1]),
         padding=str_attr(padding), **extra)
    g.op("dw_bias", "BiasAdd", ["dw", "b2"], np.float32)
    fetch = "dw_bias"
    if act2:
        fetch = g.op("dw_act", act2, [fetch], np.float32)
    np.save(tmp_path / "x.npy", x)
    middle = ACTIVATIONS[act1](x.astype(np.float64) @ w1[0, 0].astype(np.float64) + b1)
    expected = ACTIVATIONS[act2](depthwise64(middle, w2.astype(np.float64), stride, padding) + b2)
    return g.save(tmp_path / "model.pb"), f"{fetch}:0", expected.astype(np.float32)


def cc(runner, *args, env=None):
    proc = subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fetched(runner, model, tmp_path, fetches, env=None, *flags):
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", *[a for f in fetches for a in ("--fetch", f)], "--json"]
    docs = json.loads(cc(runner, *args, *flags, env=env))["outputs"]
    return [np.array(d["values"], np.float32).reshape(d["shape"]) for d in docs]


def fused_count(runner, model, env=None):
    doc = json.loads(cc(runner, "inspect", model, "--json", env=env))
    counts = {p["pass"]: p["counts"] for p in doc["optimize"]["passes"]}
    return counts.get("fuse_pointwise_depthwise", {}).get("1x1 and depthwise convolutions fused", 0)


def op_types(runner, model, tmp_path, fetch, env=None):
    out = cc(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch, "--runs", "1",
             "--warmup", "0", "--profile", "--json", env=env)
    return sorted(t["op"] for t in json.loads(out)["profile"]["op_types"])


CASES = {
    "stride1": ((2, 12, 10, 16), 96, 1, "SAME", "Relu6", "Relu6"),
    "stride2-even": ((2, 16, 14, 24), 144, 2, "SAME", "Relu6", "Relu6"),
    "stride2-odd": ((1, 15, 13, 16), 40, 2, "SAME", "Relu", None),
    "valid": ((1, 9, 11, 8), 48, 1, "VALID", None, "Relu"),
    "valid-stride2": ((1, 10, 9, 8), 32, 2, "VALID", "Relu6", None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_pair_fuses_and_agrees_with_numpy(runner, tmp_path, case):
    shape, expand, stride, padding, act1, act2 = CASES[case]
    model, fetch, expected = build(tmp_path, shape, expand, stride, padding, act1, act2)
    assert fused_count(runner, model, BLOCKS_OFF) == 1
    assert op_types(runner, model, tmp_path, fetch, BLOCKS_OFF) == ["_FusedPointwiseDepthwise"]
    (ours,) = fetched(runner, model, tmp_path, [fetch], BLOCKS_OFF)
    assert_conforms(ours, expected, model, fetch)
    (unfused,) = fetched(runner, model, tmp_path, [fetch], BLOCKS_OFF, "--no-optimize")
    assert_conforms(unfused, expected, model, fetch)


def onednn_has_avx512():
    """Whether graphrun-cc's oneDNN may use AVX-512 here (the CPU has it, and no profile caps it)."""
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    cap = os.environ.get("GRAPHRUN_CC_MAX_CPU_ISA", "")
    return " avx512f" in flags and (cap == "" or cap.upper().startswith("AVX512"))


@pytest.mark.parametrize("stride, post_op", [(2, "+dw:k3s2p0+"), (1, "+dw:k3s1p1+")])
def test_a_wide_pair_runs_as_one_primitive_with_the_depthwise_inside(runner, tmp_path, stride, post_op):
    # oneDNN 3.2 fuses only where its jit 1x1 kernel wins (MobileNetV2's 112x112 pair from batch 2 on,
    # with AVX-512); elsewhere it offers a reference composition, which the node does not take.
    model, fetch, expected = build(tmp_path, (2, 112, 112, 16), 96, stride)
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch, "--out", tmp_path / "out"]
    log = cc(runner, *args, env=dict(BLOCKS_OFF, ONEDNN_VERBOSE="1"))
    convolutions = [line for line in log.splitlines() if line.startswith("onednn_verbose,exec,cpu,convolution")]
    if onednn_has_avx512():
        assert len(convolutions) == 1 and post_op in convolutions[0], convolutions
    else:
        assert len(convolutions) in (1, 2), convolutions
    assert_conforms(np.load(tmp_path / "out" / "dw_act_0.npy"), expected, model, fetch)


def test_without_a_fused_kernel_the_two_convolutions_run(runner, tmp_path):
    # at this size oneDNN offers only its reference composition (and below AVX2 no fused kernel at all):
    # the node runs the two convolutions one after the other
    model, fetch, expected = build(tmp_path, *CASES["stride2-even"][:4])
    env = dict(BLOCKS_OFF, GRAPHRUN_CC_MAX_CPU_ISA="SSE41")
    assert op_types(runner, model, tmp_path, fetch, env) == ["_FusedPointwiseDepthwise"]
    (ours,) = fetched(runner, model, tmp_path, [fetch], env)
    assert_conforms(ours, expected, model, fetch)
    log = cc(runner, model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", fetch,
             env=dict(env, ONEDNN_VERBOSE="1"))
    convolutions = [line for line in log.splitlines() if line.startswith("onednn_verbose,exec,cpu,convolution")]
    assert len(convolutions) == 2 and not any("+dw:" in line for line in convolutions), convolutions


def test_a_grouped_1x1_runs_unfused_in_the_node(runner, tmp_path):
    # the 1x1 filter has 2 of the input's 4 channels: two groups, as Conv2D computes them
    x = RNG.uniform(-1, 1, (1, 8, 8, 4)).astype(np.float32)
    w1 = RNG.standard_normal((1, 1, 2, 8)).astype(np.float32)
    w2 = RNG.standard_normal((3, 3, 8, 1)).astype(np.float32)
    b = np.linspace(-0.5, 0.5, 8).astype(np.float32)
    g = Graph()
    g.placeholder("x", np.float32, [1, 8, 8, 4])
    for name, value in (("w1", w1), ("w2", w2), ("b", b)):
        g.const(name, value)
    g.op("expand", "Conv2D", ["x", "w1"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("VALID"))
    g.op("expand_bias", "BiasAdd", ["expand", "b"], np.float32)
    g.op("dw", "DepthwiseConv2dNative", ["expand_bias", "w2"], np.float32, strides=ints_attr([1, 1, 1, 1]),
         padding=str_attr("SAME"))
    g.op("dw_bias", "BiasAdd", ["dw", "b"], np.float32)
    model = g.save(tmp_path / "model.pb")
    np.save(tmp_path / "x.npy", x)
    x64 = x.astype(np.float64)
    middle = np.concatenate([x64[..., :2] @ w1[0, 0, :, :4], x64[..., 2:] @ w1[0, 0, :, 4:]], -1) + b
    expected = (depthwise64(middle, w2.astype(np.float64), 1, "SAME") + b).astype(np.float32)
    assert fused_count(runner, model, BLOCKS_OFF) == 1
    (ours,) = fetched(runner, model, tmp_path, ["dw_bias:0"], BLOCKS_OFF)
    assert_conforms(ours, expected, model, "dw_bias:0")


def with_explicit_pads(model, pads, path):
    """The model with its depthwise padded EXPLICIT-ly by pads (top, bottom, left, right)."""
    g = Graph()
    g.proto.ParseFromString(model.read_bytes())
    (dw,) = [n for n in g.proto.node if n.name == "dw"]
    dw.attr["padding"].s = b"EXPLICIT"
    dw.attr["explicit_paddings"].CopyFrom(ints_attr([0, 0, *pads, 0, 0]))
    return g.save(path)


def test_an_empty_input_gives_the_epilogue_of_zeros(runner, tmp_path):
    # no rows: the 1x1 has nothing to sum, and every depthwise window lies in the padding (2 + 2 rows)
    model, fetch, _ = build(tmp_path, (1, 0, 5, 8), 16, 1, act1=None, act2="Relu")
    model = with_explicit_pads(model, [2, 2, 1, 1], tmp_path / "empty.pb")
    assert fused_count(runner, model, BLOCKS_OFF) == 1
    (ours,) = fetched(runner, model, tmp_path, [fetch], BLOCKS_OFF)
    g = Graph()
    g.proto.ParseFromString(model.read_bytes())
    (b2,) = [np.frombuffer(n.attr["value"].tensor.tensor_content, np.float32) for n in g.proto.node if n.name == "b2"]
    assert_conforms(ours, np.broadcast_to(np.maximum(b2, 0), (1, 2, 5, 16)), model, fetch)


def test_explicit_padding_as_wide_as_the_window_is_not_fused(runner, tmp_path):
    model, fetch, _ = build(tmp_path, (1, 4, 4, 8), 16, 1)
    model = with_explicit_pads(model, [3, 3, 3, 3], tmp_path / "wide.pb")
    assert fused_count(runner, model, BLOCKS_OFF) == 0
    (ours,) = fetched(runner, model, tmp_path, [fetch], BLOCKS_OFF)
    (unfused,) = fetched(runner, model, tmp_path, [fetch], BLOCKS_OFF, "--no-optimize")
    assert_conforms(ours, unfused, model, fetch)


def test_what_cannot_fuse_stays_two_nodes(runner, tmp_path):
    shape, expand = (1, 8, 8, 8), 16
    model, fetch, expected = build(tmp_path, shape, expand, 1)
    # the 1x1's value fetched
    values = fetched(runner, model, tmp_path, ["expand_act:0", fetch], BLOCKS_OFF)
    assert_conforms(values[1], expected, model, fetch)
    types = cc(runner, "bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--fetch", "expand_act:0",
               "--fetch", fetch, "--runs", "1", "--warmup", "0", "--profile", "--json", env=BLOCKS_OFF)
    ops = sorted(t["op"] for t in json.loads(types)["profile"]["op_types"])
    assert ops == ["_FusedConv2D", "_FusedDepthwiseConv2dNative"]
    # a depthwise filter that is not finite (oneDNN's fused kernel would skip its padding taps)
    w2 = RNG.standard_normal((3, 3, expand, 1)).astype(np.float32)
    w2[0, 0, 3, 0] = np.inf
    model, fetch, _ = build(tmp_path, shape, expand, 1, dw_filter=w2)
    assert fused_count(runner, model, BLOCKS_OFF) == 0
    # a dilated depthwise
    model, fetch, _ = build(tmp_path, shape, expand, 1, dilations=[1, 2, 2, 1])
    assert fused_count(runner, model, BLOCKS_OFF) == 0
    # channel blocks on: the depthwise chains run in blocks instead
    model, fetch, _ = build(tmp_path, shape, expand, 1)
    assert fused_count(runner, model, {"GRAPHRUN_CC_CHANNEL_BLOCKS": "1"}) == 0
