"""graphrun-cc's graph passes (runner/passes): what they rewrite, what they must leave alone.

The fusion pass turns a float32 Conv2D -> BiasAdd (-> Relu) chain into one _FusedConv2D node
(tests/cc/passes/test_fusion.py covers the other products and activations). The oracle for the values is
numpy (a direct float64 convolution, bias and ReLU, within float32 rounding); the same runner with
GRAPHRUN_CC_OPTIMIZE=0, which runs the file's own nodes, agrees under the numerics policy (not bit
for bit: oneDNN adds the bias inside its kernel). `bench --profile --json` lists the op types that
ran, which shows where fusion happened.
"""

import json
import os
import subprocess

import numpy as np
import pytest

from graphdef._proto import graph_pb2
from tests.support.cc_helpers import Graph, fails, ints_attr, str_attr, type_attr
from tests.support.numerics_policy import assert_conforms

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 6, 5, 3)).astype(np.float32)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
B = np.array([0.5, -0.25, 1.0, -3.0], np.float32)


def conv_chain(tmp_path, relu=True, extra_use=None):
    g = Graph()
    g.placeholder("x", np.float32, [-1, 6, 5, 3])
    g.const("w", W)
    g.const("b", B)
    g.op("conv", "Conv2D", ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("SAME"))
    g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
    if relu:
        g.op("relu", "Relu", ["bias"], np.float32)
    if extra_use:
        g.op("other", "Neg", [extra_use], np.float32)
    np.save(tmp_path / "x.npy", X)
    return g.save(tmp_path / "model.pb")


def oracle(relu=True):
    x, w = X.astype(np.float64), W.astype(np.float64)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((2, 6, 5, 4))
    for i in range(6):
        for j in range(5):
            out[:, i, j] = np.einsum("nabc,abco->no", padded[:, i:i + 3, j:j + 3], w)
    out += B
    return (np.maximum(out, 0) if relu else out).astype(np.float32)


def assert_close(actual, expected):
    # 27 products summed in float32: an absolute bound, since sums near 0 cancel
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def cc(runner, *args, optimize=True):
    env = dict(os.environ, GRAPHRUN_CC_OPTIMIZE="1" if optimize else "0")
    proc = subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def fetched(runner, model, tmp_path, *fetches, optimize=True):
    args = [model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--json"]
    for name in fetches:
        args += ["--fetch", name]
    outputs = json.loads(cc(runner, *args, optimize=optimize))["outputs"]
    return {o["name"]: np.array(o["values"], np.float32) for o in outputs}


def op_types(runner, model, tmp_path, *fetches, optimize=True):
    args = ["bench", model, "--feed", f"x=@{tmp_path / 'x.npy'}", "--runs", "2", "--warmup", "0", "--profile",
            "--json"]
    for name in fetches:
        args += ["--fetch", name]
    profile = json.loads(cc(runner, *args, optimize=optimize))["profile"]
    return sorted(t["op"] for t in profile["op_types"])


@pytest.mark.parametrize("relu", [True, False])
def test_the_chain_runs_as_one_fused_node(runner, tmp_path, relu):
    model = conv_chain(tmp_path, relu=relu)
    last = "relu:0" if relu else "bias:0"
    fused = fetched(runner, model, tmp_path, last)[last]
    assert_close(fused, oracle(relu))
    assert_conforms(fused, fetched(runner, model, tmp_path, last, optimize=False)[last], model, last)
    assert op_types(runner, model, tmp_path, last) == ["_FusedConv2D"]
    unfused = ["BiasAdd", "Conv2D"] + (["Relu"] if relu else [])
    assert op_types(runner, model, tmp_path, last, optimize=False) == unfused


def test_a_fetched_intermediate_is_not_fused_away(runner, tmp_path):
    model = conv_chain(tmp_path)
    values = fetched(runner, model, tmp_path, "bias:0", "relu:0")
    assert_close(values["bias:0"], oracle(relu=False))
    assert_close(values["relu:0"], oracle(relu=True))
    # conv + bias still fuse into the node named bias; the Relu reads it
    assert op_types(runner, model, tmp_path, "bias:0", "relu:0") == ["Relu", "_FusedConv2D"]
    assert op_types(runner, model, tmp_path, "conv:0", "relu:0") == ["BiasAdd", "Conv2D", "Relu"]


@pytest.mark.parametrize("shared", ["conv", "bias"])
def test_an_intermediate_with_a_second_consumer_is_not_fused_away(runner, tmp_path, shared):
    model = conv_chain(tmp_path, extra_use=shared)
    values = fetched(runner, model, tmp_path, "relu:0", "other:0")
    assert_close(values["relu:0"], oracle())
    expected = {"conv": ["BiasAdd", "Conv2D", "Neg", "Relu"], "bias": ["Neg", "Relu", "_FusedConv2D"]}[shared]
    assert op_types(runner, model, tmp_path, "relu:0", "other:0") == expected


def test_a_model_file_may_name_the_fused_op(runner, tmp_path):
    """graphdef's optimizer writes _FusedConv2D into the files it saves (graphdef/ops/fused.py):
    graphrun-cc runs such a node as the chain it stands for."""
    g = Graph()
    g.placeholder("x", np.float32, [-1, 6, 5, 3])
    g.const("w", W)
    g.const("b", B)
    g.node("f", "_FusedConv2D", ["x", "w", "b"], T=type_attr(np.float32), strides=ints_attr([1, 1, 1, 1]),
           padding=str_attr("SAME"), num_args=graph_pb2.AttrValue(i=1),
           fused_ops=graph_pb2.AttrValue(list=graph_pb2.AttrValue.ListValue(s=[b"BiasAdd", b"Relu"])))
    np.save(tmp_path / "x.npy", X)
    model = g.save(tmp_path / "model.pb")
    assert_close(fetched(runner, model, tmp_path, "f:0", optimize=False)["f:0"], oracle(relu=True))


def test_a_bias_not_known_to_fit_is_left_to_the_bias_add(runner, tmp_path):
    # The bias comes through a placeholder of unknown length: the chain is not fused, so a
    # bias that turns out not to fit is reported by the BiasAdd, as in the file.
    g = Graph()
    g.placeholder("x", np.float32, [-1, 6, 5, 3])
    g.placeholder("b", np.float32, [-1])
    g.const("w", W)
    g.op("conv", "Conv2D", ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("SAME"))
    g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
    model = g.save(tmp_path / "model.pb")
    np.save(tmp_path / "x.npy", X)
    feeds = ["--feed", f"x=@{tmp_path / 'x.npy'}"]
    ok_args = ["bench", model, *feeds, "--feed", f"b={B.tolist()}", "--runs", "1", "--warmup", "0", "--profile",
               "--json"]
    profile = json.loads(cc(runner, *ok_args))["profile"]
    assert sorted(t["op"] for t in profile["op_types"]) == ["BiasAdd", "Conv2D"]
    line = fails(runner, 4, model, *feeds, "--feed", "b=[1, 2, 3]")
    assert "node 'bias' (BiasAdd): bias [3] must be 1-D and match" in line
