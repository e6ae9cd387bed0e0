"""graphrun-cc's channel blocks (core/tensor.h, Layout): runs of convolutions that start at a
depthwise one keep their values in oneDNN's nChw8c layout between them, and every other reader (a
kernel without blocks, a fetch, a convolution the layout does not suit) gets a plain copy.

Blocks are on by default only where oneDNN's kernels stop below AVX-512 (where they win); the
tests turn them on (GRAPHRUN_CC_CHANNEL_BLOCKS=1) so the blocked path is checked on every CPU.

Each graph is a MobileNetV2-like chain with channel counts that are whole blocks of 8. The oracle is
TensorFlow running the same file; the same runner with GRAPHRUN_CC_CHANNEL_BLOCKS=0 (every value
plain) must agree too. oneDNN's verbose log (DNNL_VERBOSE=1, on stdout) names the memory formats
each primitive ran with, which shows whether blocks (`aBcd8b`) were used at all.
"""

import json

import numpy as np
import pytest

from tests.support.cc_helpers import Graph, ints_attr, run_cc, str_attr, type_attr
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import tf_oracle  # noqa: F401 (a fixture)
from tests.cc.passes.test_pad_residual import feed_args, fetch_args, tf_values

RNG = np.random.default_rng(31)
BLOCKED = "aBcd8b"  # oneDNN's name for nChw8c in its verbose log


def weights(*shape, scale=0.3):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def conv(g, name, x, filter_shape, depthwise=False, stride=1, padding="SAME", dilation=1, bias=True,
         activation=None, filter_value=None):
    """x -> Conv2D / DepthwiseConv2dNative (-> BiasAdd) (-> activation); the last node's name."""
    g.const(name + "/w", weights(*filter_shape) if filter_value is None else filter_value)
    op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
    last = g.op(name, op, [x, name + "/w"], np.float32, strides=ints_attr([1, stride, stride, 1]),
                padding=str_attr(padding), dilations=ints_attr([1, dilation, dilation, 1]))
    if bias:
        out = filter_shape[2] * filter_shape[3] if depthwise else filter_shape[3]
        g.const(name + "/b", weights(out))
        last = g.op(name + "/bias", "BiasAdd", [last, name + "/b"], np.float32)
    if activation:
        last = g.op(name + "/act", activation, [last], np.float32)
    return last


def inverted_residual_graph(tmp_path, channels=16, expand=24, dw_filter=None, expand_window=1, dilation=1,
                            tail="Mean"):
    """x [?, 9, 7, channels] -> depthwise -> 1x1 (+ x, a residual) -> expand (1x1, or a wider window
    with `dilation`) -> depthwise stride 2 -> 1x1 project -> tail (Mean over H and W, or a Tanh)."""
    g = Graph()
    g.placeholder("x", np.float32, [-1, 9, 7, channels])
    first = conv(g, "dw1", "x", (3, 3, channels, 1), depthwise=True, activation="Relu6")
    project = conv(g, "pw1", first, (1, 1, channels, channels))
    added = g.op("add", "AddV2", [project, "x"], np.float32)
    expanded = conv(g, "pw2", added, (expand_window, expand_window, channels, expand), activation="Relu",
                    dilation=dilation)
    second = conv(g, "dw2", expanded, (3, 3, expand, 1), depthwise=True, stride=2, activation="Relu6",
                  filter_value=dw_filter)
    last = conv(g, "pw3", second, (1, 1, expand, 16))
    if tail == "Mean":
        g.const("axes", np.array([1, 2], np.int32))
        last = g.node("pool", "Mean", [last, "axes"], T=type_attr(np.float32), Tidx=type_attr(np.int32))
    else:
        last = g.op("tail", tail, [last], np.float32)
    return g.save(tmp_path / "chain.pb"), last


def verbose_formats(runner, model, tmp_path, feeds, fetches, blocks=True):
    """oneDNN's verbose lines of one run."""
    code, stdout, stderr = run_cc(runner, model, *feed_args(tmp_path, feeds), *fetch_args(fetches),
                                  env={"DNNL_VERBOSE": "1", "GRAPHRUN_CC_CHANNEL_BLOCKS": "1" if blocks else "0"})
    assert code == 0, stderr
    return [line for line in stdout.splitlines() if line.startswith("onednn_verbose,exec") or
            line.startswith("dnnl_verbose,exec")]


def cc_values(runner, model, tmp_path, feeds, fetches, blocks):
    args = [model, *feed_args(tmp_path, feeds), *fetch_args(fetches), "--json"]
    code, stdout, stderr = run_cc(runner, *args, env={"GRAPHRUN_CC_CHANNEL_BLOCKS": "1" if blocks else "0"})
    assert code == 0 and stderr == "", stderr
    return [np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"]) for d in json.loads(stdout)["outputs"]]


def check(tf, runner, model, tmp_path, feeds, fetches):
    """Blocks on and off both agree with TensorFlow and with each other."""
    theirs = tf_values(tf, model, feeds, fetches)
    blocked = cc_values(runner, model, tmp_path, feeds, fetches, blocks=True)
    plain = cc_values(runner, model, tmp_path, feeds, fetches, blocks=False)
    for fetch, a, b, t in zip(fetches, blocked, plain, theirs):
        assert a.shape == t.shape, fetch
        assert_conforms(a, t, model, fetch)
        assert_conforms(b, t, model, fetch)
        assert_conforms(a, b, model, fetch)


def feeds_for(batch=2, channels=16):
    return {"x": RNG.standard_normal((batch, 9, 7, channels)).astype(np.float32)}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("batch", [1, 3])
def test_a_chain_from_a_depthwise_convolution_runs_in_blocks(tf_oracle, runner, tmp_path, batch):
    model, last = inverted_residual_graph(tmp_path)
    feeds = feeds_for(batch)
    lines = verbose_formats(runner, model, tmp_path, feeds, [last])
    convolutions = [line for line in lines if ",convolution," in line]
    # in file order: dw1, pw1 (+ x), pw2, dw2 in blocks; pw3, read by Mean, plain
    assert [BLOCKED in line for line in convolutions] == [True, True, True, True, False], convolutions
    assert not any(BLOCKED in line for line in verbose_formats(runner, model, tmp_path, feeds, [last], blocks=False))
    check(tf_oracle, runner, model, tmp_path, feeds, [last])


@pytest.mark.parametrize("isa_cap", ["as the machine has it", "AVX2"])
def test_by_default_blocks_follow_onednn_isa(runner, tmp_path, isa_cap):
    # oneDNN's verbose log names the instruction set its kernels use: with AVX-512 (NHWC's brgconv
    # kernels are faster there) the chain stays plain, below it the depthwise chain runs in blocks.
    model, last = inverted_residual_graph(tmp_path)
    env = {"DNNL_VERBOSE": "1", "GRAPHRUN_CC_CHANNEL_BLOCKS": None}
    if isa_cap != "as the machine has it":
        env["ONEDNN_MAX_CPU_ISA"] = env["GRAPHRUN_CC_MAX_CPU_ISA"] = isa_cap  # over a profile's cap
    code, stdout, stderr = run_cc(runner, model, *feed_args(tmp_path, feeds_for()), *fetch_args([last]), env=env)
    assert code == 0, stderr
    isa = [line for line in stdout.splitlines() if ",info,cpu,isa:" in line]
    assert len(isa) == 1, stdout[:2000]
    convolutions = [line for line in stdout.splitlines() if ",exec," in line and ",convolution," in line]
    assert convolutions
    assert any(BLOCKED in line for line in convolutions) == ("AVX-512" not in isa[0]), (isa, convolutions)


@pytest.mark.tf_oracle
def test_fetched_values_inside_the_chain_are_plain(tf_oracle, runner, tmp_path):
    # Fetched, the depthwise output and the residual sum stay plain; the rest still run in blocks.
    model, last = inverted_residual_graph(tmp_path, tail="Tanh")
    fetches = [last, "dw1/act", "add", "pw3/bias"]
    lines = [line for line in verbose_formats(runner, model, tmp_path, feeds_for(), fetches) if ",convolution," in line]
    assert any(BLOCKED in line for line in lines) and not all(BLOCKED in line for line in lines), lines
    check(tf_oracle, runner, model, tmp_path, feeds_for(), fetches)


@pytest.mark.tf_oracle
def test_channels_that_are_not_whole_blocks_stay_plain(tf_oracle, runner, tmp_path):
    model, last = inverted_residual_graph(tmp_path, channels=12, expand=20)
    feeds = feeds_for(channels=12)
    assert not any(BLOCKED in line for line in verbose_formats(runner, model, tmp_path, feeds, [last]))
    check(tf_oracle, runner, model, tmp_path, feeds, [last])


@pytest.mark.tf_oracle
def test_a_dilated_window_in_blocks(tf_oracle, runner, tmp_path):
    model, last = inverted_residual_graph(tmp_path, expand_window=3, dilation=2)
    lines = [line for line in verbose_formats(runner, model, tmp_path, feeds_for(), [last]) if ",convolution," in line]
    assert BLOCKED in lines[2] and "dh1" in lines[2], lines[2]  # oneDNN counts dilation from 0
    check(tf_oracle, runner, model, tmp_path, feeds_for(), [last])


def test_an_inf_weight_at_the_border_leaves_blocks_for_the_hand_written_kernel(runner, tmp_path):
    # oneDNN skips padding taps, so such a filter goes to the hand-written kernel, which reads a plain
    # copy of its blocked input and makes NaN at the border (0 * inf). TensorFlow is no oracle here (with
    # its oneDNN options on it skips those taps too); tests/cc/passes/test_pad_residual.py checks the plain
    # runner's NaNs against numpy, so the plain run is the reference.
    dw_filter = weights(3, 3, 24, 1)
    dw_filter[0, 0, 5, 0] = np.inf
    model, last = inverted_residual_graph(tmp_path, dw_filter=dw_filter, tail="Tanh")
    feeds = feeds_for()
    blocked = cc_values(runner, model, tmp_path, feeds, [last], blocks=True)[0]
    plain = cc_values(runner, model, tmp_path, feeds, [last], blocks=False)[0]
    assert np.isnan(plain).any() and not np.isnan(plain).all()
    assert_conforms(blocked, plain, model, last)


@pytest.mark.tf_oracle
def test_a_residual_that_broadcasts_at_run_time_is_added_plain(tf_oracle, runner, tmp_path):
    # The residual's batch is unknown until the run: batch 1 against batch 2 broadcasts.
    g = Graph()
    g.placeholder("x", np.float32, [-1, 5, 5, 8])
    g.placeholder("y", np.float32, [-1, 5, 5, 8])
    first = conv(g, "dw", "x", (3, 3, 8, 1), depthwise=True, activation="Relu")
    project = conv(g, "pw", first, (1, 1, 8, 8))
    added = g.op("add", "AddV2", [project, "y"], np.float32)
    last = conv(g, "pw2", added, (1, 1, 8, 8), activation="Relu")
    tail = g.op("tail", "Tanh", [last], np.float32)
    model = g.save(tmp_path / "broadcast.pb")
    for x_batch, y_batch in ((2, 1), (1, 2), (2, 2)):
        feeds = {"x": RNG.standard_normal((x_batch, 5, 5, 8)).astype(np.float32),
                 "y": RNG.standard_normal((y_batch, 5, 5, 8)).astype(np.float32)}
        check(tf_oracle, runner, model, tmp_path, feeds, [tail])
