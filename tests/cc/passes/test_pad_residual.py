"""graphrun-cc's Pad folding and residual-add fusion (runner/passes/fold_pads.cc,
runner/passes/fuse_residual_add.cc), the Pad kernel they leave for what does not fold, and the
reductions' row-at-a-time walk (a global average pool's Mean).

fold_pads: a zero Pad of H and W read only by a convolution becomes its EXPLICIT padding.
fuse_residual_add: Conv -> BiasAdd -> Add(other) (-> Relu) runs as one _Fused node whose oneDNN
sum post-op adds `other` (taken over in place when nothing else holds it).

Each test builds a small graph, checks from `inspect --json` that the pass fired (or did not) and
from `bench --profile` which op types ran, and compares the values with an oracle (numpy in float64
for the Pad graphs, TensorFlow running the original graph for the residual ones) and with the same
runner without passes, under the numerics policy.
"""

import json

import numpy as np
import pytest

from tests.support.cc_helpers import REPO, Graph, bool_attr, ints_attr, ok, run_cc, str_attr, type_attr
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import tf_oracle  # noqa: F401 (a fixture)

RNG = np.random.default_rng(23)
X = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
W_DEPTHWISE = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
B = RNG.standard_normal(6).astype(np.float32)


def pass_counts(runner, model):
    """{pass name: counts} from inspect --json."""
    code, stdout, stderr = run_cc(runner, "inspect", model, "--json")
    assert code == 0, stderr
    return {p["pass"]: p["counts"] for p in json.loads(stdout)["optimize"]["passes"]}


def feed_args(tmp_path, feeds):
    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--feed", f"{name}=@{tmp_path / (name + '.npy')}"]
    return args


def fetch_args(fetches):
    return [a for f in fetches for a in ("--fetch", f)]


def cc_values(runner, model, tmp_path, feeds, fetches, optimize=True, dnnl=True):
    """The fetched values; dnnl=False runs the hand-written kernels (GRAPHRUN_CC_NO_DNNL=1)."""
    args = [model, *feed_args(tmp_path, feeds), *fetch_args(fetches), "--json"]
    code, stdout, stderr = run_cc(runner, *args, *([] if optimize else ["--no-optimize"]),
                                  env={"GRAPHRUN_CC_NO_DNNL": None if dnnl else "1"})
    assert code == 0 and stderr == "", stderr
    docs = json.loads(stdout)["outputs"]
    return [np.array(d["values"], dtype=d["dtype"]).reshape(d["shape"]) for d in docs]


def op_types(runner, model, tmp_path, feeds, fetches):
    args = ["bench", model, *feed_args(tmp_path, feeds), *fetch_args(fetches), "--runs", "1", "--warmup", "0",
            "--profile", "--json"]
    return sorted(t["op"] for t in json.loads(ok(runner, *args))["profile"]["op_types"])


def tf_values(tf, model, feeds, fetches):
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(model.read_bytes()), name="")
    config = tf.compat.v1.ConfigProto(device_count={"GPU": 0})
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        return sess.run([f if ":" in f else f + ":0" for f in fetches], {f"{k}:0": v for k, v in feeds.items()})


def check_values(tf, runner, model, tmp_path, feeds, fetches, dnnl=True):
    """The optimized run agrees with TensorFlow and with the run without passes."""
    optimized = cc_values(runner, model, tmp_path, feeds, fetches, dnnl=dnnl)
    plain = cc_values(runner, model, tmp_path, feeds, fetches, optimize=False)
    for fetch, ours, unoptimized, theirs in zip(fetches, optimized, plain, tf_values(tf, model, feeds, fetches)):
        assert ours.shape == theirs.shape, fetch
        assert_conforms(ours, theirs, model, fetch)
        assert_conforms(ours, unoptimized, model, fetch)


# -- Pad folding ------------------------------------------------------------------------------
# The oracle is numpy in float64 here, not TensorFlow: TF built with oneDNN fuses Pad into Conv2D
# itself (and then skips padding taps, and drops a batch padding), so its answers for these
# graphs depend on how it was built and on what imported it first.

def conv64(x, w, stride, padding, explicit=None, depthwise=False):
    """TF's Conv2D / DepthwiseConv2dNative on x in float64, padding taps multiplied (0 * inf is nan)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    (n, h, wd, _), (kh, kw) = x.shape, w.shape[:2]
    pads = [0, 0, 0, 0]
    if padding == "SAME":
        for axis, (size, k) in enumerate(((h, kh), (wd, kw))):
            total = max((-(-size // stride) - 1) * stride + k - size, 0)
            pads[2 * axis:2 * axis + 2] = [total // 2, total - total // 2]
    elif padding == "EXPLICIT":
        pads = list(explicit[2:6])
    padded = np.pad(x, ((0, 0), tuple(pads[:2]), tuple(pads[2:]), (0, 0)))
    oh = (padded.shape[1] - kh) // stride + 1
    ow = (padded.shape[2] - kw) // stride + 1
    out = np.zeros((n, oh, ow, w.shape[2] * w.shape[3] if depthwise else w.shape[3]))
    with np.errstate(invalid="ignore"):
        for i in range(oh):
            for j in range(ow):
                patch = padded[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
                if depthwise:
                    out[:, i, j] = np.einsum("nabc,abcm->ncm", patch, w).reshape(n, -1)
                else:
                    out[:, i, j] = np.einsum("nabc,abco->no", patch, w)
    return out


def pad_conv_graph(tmp_path, op="Conv2D", pads=((0, 0), (1, 2), (0, 1), (0, 0)), padding="VALID", stride=1,
                   pad_op="Pad", value=0.0, explicit=None, bias_relu=False, extra_use=False, w=None):
    """The graph, its last node, and {fetch: float64 numpy value} for x = X."""
    w = (W if op == "Conv2D" else W_DEPTHWISE) if w is None else w
    g = Graph()
    g.placeholder("x", np.float32, list(X.shape))
    g.const("p", np.array(pads, np.int32))
    inputs = ["x", "p"]
    if pad_op == "PadV2":
        g.const("v", np.float32(value))
        inputs.append("v")
    g.op("pad", pad_op, inputs, np.float32, Tpaddings=type_attr(np.int32))
    g.const("w", w)
    attrs = dict(strides=ints_attr([1, stride, stride, 1]), padding=str_attr(padding))
    if explicit:
        attrs["explicit_paddings"] = ints_attr(explicit)
    g.op("conv", op, ["pad", "w"], np.float32, **attrs)
    padded = np.pad(X.astype(np.float64), pads, constant_values=value)
    expected = {"pad": padded, "conv": conv64(padded, w, stride, padding, explicit, op != "Conv2D")}
    last = "conv"
    if bias_relu:
        b = B[:expected["conv"].shape[3]]
        g.const("b", b)
        g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
        last = g.op("relu", "Relu", ["bias"], np.float32)
        expected["relu"] = np.maximum(expected["conv"] + b, 0)
    if extra_use:
        g.op("neg", "Neg", ["pad"], np.float32)
        expected["neg"] = -padded
    return g.save(tmp_path / "pad_conv.pb"), last, expected


def check_pad_values(runner, model, tmp_path, expected, fetches, dnnl=True):
    """The optimized run agrees with numpy and with the run without passes."""
    optimized = cc_values(runner, model, tmp_path, {"x": X}, fetches, dnnl=dnnl)
    plain = cc_values(runner, model, tmp_path, {"x": X}, fetches, optimize=False)
    for fetch, ours, unoptimized in zip(fetches, optimized, plain):
        want = expected[fetch].astype(np.float32)
        assert ours.shape == want.shape, fetch
        assert_conforms(ours, want, model, fetch)
        assert_conforms(ours, unoptimized, model, fetch)


# op, padding, stride, pads, explicit paddings already on the convolution; each side's total padding
# (the Pad's plus the convolution's own) narrower than the 3x3 window
FOLDED = [
    ("Conv2D", "VALID", 1, ((0, 0), (1, 2), (0, 1), (0, 0)), None),
    ("Conv2D", "VALID", 2, ((0, 0), (0, 1), (0, 1), (0, 0)), None),
    ("Conv2D", "SAME", 2, ((0, 0), (0, 1), (1, 0), (0, 0)), None),
    ("Conv2D", "SAME", 1, ((0, 0), (1, 0), (0, 1), (0, 0)), None),
    ("Conv2D", "EXPLICIT", 2, ((0, 0), (1, 0), (0, 2), (0, 0)), [0, 0, 0, 1, 2, 0, 0, 0]),
    ("DepthwiseConv2dNative", "VALID", 2, ((0, 0), (0, 1), (0, 1), (0, 0)), None),
    ("DepthwiseConv2dNative", "VALID", 1, ((0, 0), (2, 1), (1, 0), (0, 0)), None),
    ("DepthwiseConv2dNative", "SAME", 2, ((0, 0), (1, 0), (0, 1), (0, 0)), None),
    ("DepthwiseConv2dNative", "SAME", 1, ((0, 0), (0, 1), (1, 1), (0, 0)), None),
]


@pytest.mark.slow
@pytest.mark.parametrize("op, padding, stride, pads, explicit", FOLDED)
@pytest.mark.parametrize("pad_op, dnnl", [("Pad", True), ("PadV2", True), ("Pad", False)])
def test_a_zero_pad_folds_into_the_convolution(runner, tmp_path, op, padding, stride, pads, explicit, pad_op, dnnl):
    model, last, expected = pad_conv_graph(tmp_path, op, pads, padding, stride, pad_op=pad_op, explicit=explicit)
    assert pass_counts(runner, model)["fold_pads"] == {"pads folded into convolutions": 1}
    assert op_types(runner, model, tmp_path, {"x": X}, [last]) == [op]
    check_pad_values(runner, model, tmp_path, expected, [last], dnnl=dnnl)


@pytest.mark.parametrize("op", ["Conv2D", "DepthwiseConv2dNative"])
def test_the_folded_convolution_still_fuses_its_bias_and_relu(runner, tmp_path, op):
    model, last, expected = pad_conv_graph(tmp_path, op, stride=2, bias_relu=True)
    counts = pass_counts(runner, model)
    assert counts["fold_pads"] == {"pads folded into convolutions": 1}
    assert op_types(runner, model, tmp_path, {"x": X}, [last]) == ["_Fused" + op]
    check_pad_values(runner, model, tmp_path, expected, [last])


@pytest.mark.parametrize("dnnl", [True, False])
def test_an_inf_weight_at_the_border_still_makes_nan(runner, tmp_path, dnnl):
    # The Pad's zeros times inf are NaN; the folded padding must multiply too.
    w = W.copy()
    w[0, 0, 0, 0] = np.inf
    model, last, expected = pad_conv_graph(tmp_path, pads=((0, 0), (1, 1), (1, 1), (0, 0)), w=w)
    assert pass_counts(runner, model)["fold_pads"] == {"pads folded into convolutions": 1}
    assert np.isnan(expected[last][:, 0, :, 0]).all() and np.isnan(expected[last][:, :, 0, 0]).all()
    check_pad_values(runner, model, tmp_path, expected, [last], dnnl=dnnl)


NOT_FOLDED = {
    "non-zero value": dict(pad_op="PadV2", value=1.5),
    "negative zero": dict(pad_op="PadV2", value=-0.0),
    "batch padded": dict(pads=((1, 0), (1, 1), (1, 1), (0, 0))),
    "read twice": dict(extra_use=True),
    "wider than the window": dict(pads=((0, 0), (3, 0), (0, 1), (0, 0))),
    "wider with SAME": dict(pads=((0, 0), (2, 0), (0, 1), (0, 0)), padding="SAME"),
    # a depthwise filter over the 4 channels the Pad makes
    "channels padded": dict(op="DepthwiseConv2dNative", pads=((0, 0), (1, 1), (1, 1), (0, 1)),
                            w=RNG.standard_normal((3, 3, 4, 1)).astype(np.float32)),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", NOT_FOLDED)
def test_a_pad_that_cannot_fold_stays(runner, tmp_path, case):
    options = NOT_FOLDED[case]
    model, last, expected = pad_conv_graph(tmp_path, **options)
    fetches = [last] + (["neg"] if options.get("extra_use") else [])
    assert "fold_pads" not in pass_counts(runner, model)
    assert options.get("pad_op", "Pad") in op_types(runner, model, tmp_path, {"x": X}, fetches)
    check_pad_values(runner, model, tmp_path, expected, fetches)


def test_a_fetched_pad_stays(runner, tmp_path):
    model, last, expected = pad_conv_graph(tmp_path)
    fetches = ["pad", last]
    assert op_types(runner, model, tmp_path, {"x": X}, fetches) == ["Conv2D", "Pad"]
    check_pad_values(runner, model, tmp_path, expected, fetches)


# -- the Pad kernel ---------------------------------------------------------------------------

PAD_KERNEL_CASES = [  # input shape, paddings, dtype, constant
    ((2, 7, 6, 3), ((0, 0), (1, 2), (3, 0), (0, 0)), np.float32, 0),
    ((2, 7, 6, 3), ((0, 0), (2, 1), (0, 0), (0, 0)), np.float32, -2.5),  # rows only: one run per image row
    ((2, 7, 6, 3), ((1, 1), (0, 0), (0, 0), (2, 0)), np.int32, 7),  # batch and channels
    ((3, 0, 2), ((1, 0), (2, 2), (0, 1)), np.float64, 4.0),  # an empty input
    ((5,), ((0, 0),), np.int64, 1),  # nothing padded
    ((16, 56, 56, 24), ((0, 0), (1, 1), (1, 1), (0, 0)), np.float32, 0),  # large enough to run threaded
]


@pytest.mark.parametrize("shape, pads, dtype, constant", PAD_KERNEL_CASES)
@pytest.mark.parametrize("pad_op", ["Pad", "PadV2"])
def test_the_pad_kernel(runner, tmp_path, shape, pads, dtype, constant, pad_op):
    x = (RNG.standard_normal(shape) * 10).astype(dtype)
    g = Graph()
    g.const("x", x)
    g.const("p", np.array(pads, np.int64))
    inputs = ["x", "p"]
    if pad_op == "PadV2":
        g.const("v", np.array(constant, dtype))
        inputs.append("v")
    else:
        constant = 0
    g.op("out", pad_op, inputs, dtype, Tpaddings=type_attr(np.int64))
    model = g.save(tmp_path / "pad.pb")
    ok(runner, model, "--fetch", "out", "--out", tmp_path / "out", "--no-optimize")
    ours = np.load(tmp_path / "out" / "out_0.npy")
    expected = np.pad(x, pads, constant_values=np.array(constant, dtype))
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    np.testing.assert_array_equal(ours, expected)  # data movement: exact


# -- residual adds ----------------------------------------------------------------------------

def residual_graph(tmp_path, op="Conv2D", add_op="AddV2", conv_first=True, activation="Relu", y_shape=None,
                   y_const=None, read_later=False):
    """x -> conv -> BiasAdd -> add_op with y' (-> activation), y' = Tanh(y) computed in the graph so that
    nothing but the Add holds it (unless read_later: a Mul of the result with y' follows)."""
    channels = 4 if op == "Conv2D" else 6
    g = Graph()
    g.placeholder("x", np.float32, [-1, 7, 6, 3])
    if y_const is not None:
        g.const("yt", y_const)
    else:
        g.placeholder("y", np.float32, list(y_shape or (-1, 7, 6, channels)))
        g.op("yt", "Tanh", ["y"], np.float32)
    g.const("w", W if op == "Conv2D" else W_DEPTHWISE)
    g.const("b", B[:channels])
    g.op("conv", op, ["x", "w"], np.float32, strides=ints_attr([1, 1, 1, 1]), padding=str_attr("SAME"))
    g.op("bias", "BiasAdd", ["conv", "b"], np.float32)
    last = g.op("add", add_op, ["bias", "yt"] if conv_first else ["yt", "bias"], np.float32)
    if activation:
        last = g.op("act", activation, ["add"], np.float32)
    if read_later:
        last = g.op("later", "Mul", [last, "yt"], np.float32)
    return g.save(tmp_path / "residual.pb"), last


def residual_feeds(op="Conv2D", y=None):
    channels = 4 if op == "Conv2D" else 6
    return {"x": X, "y": RNG.standard_normal((2, 7, 6, channels)).astype(np.float32) if y is None else y}


FUSED = [  # op, add op, conv as the Add's first input, activation
    ("Conv2D", "AddV2", True, "Relu"),
    ("Conv2D", "Add", False, "Relu"),
    ("Conv2D", "AddV2", False, None),
    ("Conv2D", "AddV2", True, "Relu6"),
    ("DepthwiseConv2dNative", "AddV2", True, None),
    ("DepthwiseConv2dNative", "Add", False, "Relu"),
]


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("op, add_op, conv_first, activation", FUSED)
@pytest.mark.parametrize("dnnl", [True, False])
def test_a_residual_add_fuses_into_the_convolution(tf_oracle, runner, tmp_path, op, add_op, conv_first, activation,
                                                   dnnl):
    model, last = residual_graph(tmp_path, op, add_op, conv_first, activation)
    assert pass_counts(runner, model)["fuse_residual_add"] == {"residual adds fused into convolutions": 1}
    feeds = residual_feeds(op)
    assert op_types(runner, model, tmp_path, feeds, [last]) == ["Tanh", "_Fused" + op]
    check_values(tf_oracle, runner, model, tmp_path, feeds, [last], dnnl=dnnl)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dnnl", [True, False])
def test_the_other_input_read_later_is_not_overwritten(tf_oracle, runner, tmp_path, dnnl):
    model, last = residual_graph(tmp_path, read_later=True)
    assert pass_counts(runner, model)["fuse_residual_add"] == {"residual adds fused into convolutions": 1}
    feeds = residual_feeds()
    assert op_types(runner, model, tmp_path, feeds, [last, "yt"]) == ["Mul", "Tanh", "_FusedConv2D"]
    check_values(tf_oracle, runner, model, tmp_path, feeds, [last, "yt"], dnnl=dnnl)


@pytest.mark.tf_oracle
def test_a_fetched_add_keeps_its_activation_apart(tf_oracle, runner, tmp_path):
    model, last = residual_graph(tmp_path)
    feeds = residual_feeds()
    assert op_types(runner, model, tmp_path, feeds, ["add", last]) == ["Relu", "Tanh", "_FusedConv2D"]
    check_values(tf_oracle, runner, model, tmp_path, feeds, ["add", last])


@pytest.mark.tf_oracle
def test_a_fetched_convolution_keeps_the_add(tf_oracle, runner, tmp_path):
    model, last = residual_graph(tmp_path)
    feeds = residual_feeds()
    assert op_types(runner, model, tmp_path, feeds, ["bias", last]) == ["AddV2", "Relu", "Tanh", "_FusedConv2D"]
    check_values(tf_oracle, runner, model, tmp_path, feeds, ["bias", last])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("y_shape", [(-1, 1, 1, 4), (-1, 7, 6, 1)])
def test_a_static_broadcast_keeps_the_add(tf_oracle, runner, tmp_path, y_shape):
    model, last = residual_graph(tmp_path, y_shape=y_shape)
    assert "fuse_residual_add" not in pass_counts(runner, model)
    feeds = residual_feeds(y=RNG.standard_normal((2,) + y_shape[1:]).astype(np.float32))
    assert "AddV2" in op_types(runner, model, tmp_path, feeds, [last])
    check_values(tf_oracle, runner, model, tmp_path, feeds, [last])


@pytest.mark.tf_oracle
def test_a_per_channel_constant_keeps_the_add(tf_oracle, runner, tmp_path):
    model, last = residual_graph(tmp_path, y_const=RNG.standard_normal(4).astype(np.float32))
    assert "fuse_residual_add" not in pass_counts(runner, model)
    check_values(tf_oracle, runner, model, tmp_path, {"x": X}, [last])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("y_batch", [1, 2])
def test_shapes_unknown_until_the_run_may_still_broadcast(tf_oracle, runner, tmp_path, y_batch):
    # Static shapes cannot rule out a broadcast: fused, and the kernel adds the slow way when they differ.
    model, last = residual_graph(tmp_path, y_shape=(-1, -1, -1, -1))
    assert pass_counts(runner, model)["fuse_residual_add"] == {"residual adds fused into convolutions": 1}
    feeds = residual_feeds(y=RNG.standard_normal((y_batch, 7, 6, 4)).astype(np.float32))
    check_values(tf_oracle, runner, model, tmp_path, feeds, [last])
    if y_batch == 1:  # x with batch 1 and y with batch 2: the output is y's size, larger than the product
        feeds = {"x": X[:1], "y": RNG.standard_normal((2, 7, 6, 4)).astype(np.float32)}
        check_values(tf_oracle, runner, model, tmp_path, feeds, [last])


def test_shapes_that_do_not_broadcast_fail_as_the_add_would(runner, tmp_path):
    model, last = residual_graph(tmp_path, y_shape=(-1, -1, -1, -1))
    feeds = residual_feeds(y=RNG.standard_normal((2, 5, 6, 4)).astype(np.float32))
    for optimize in (True, False):
        args = [model, *feed_args(tmp_path, feeds), "--fetch", last, *([] if optimize else ["--no-optimize"])]
        code, stdout, stderr = run_cc(runner, *args)
        assert code == 4 and stdout == "" and stderr.count("\n") == 1, stderr
        assert "cannot broadcast" in stderr and "[2,7,6,4]" in stderr and "[2,5,6,4]" in stderr, stderr


def test_mobilenet_v2_runs_without_its_pads_and_residual_adds(runner, tmp_path):
    """Keras' MobileNetV2 (the committed small one): ZeroPadding2D before its 4 stride-2 depthwise
    convolutions, 10 inverted-residual Adds; tests/real_models checks its values against TensorFlow."""
    case = REPO / "tests" / "real_models" / "mobilenet_v2"
    model = case / "model.pb"
    counts = pass_counts(runner, model)
    assert counts["fold_pads"] == {"pads folded into convolutions": 4}
    assert counts["fuse_residual_add"] == {"residual adds fused into convolutions": 10}
    feeds = {"image": np.load(case / "feed_image.npy")}
    ops = op_types(runner, model, tmp_path, feeds, ["Identity"])
    assert not {"Pad", "AddV2", "Add", "Conv2D", "DepthwiseConv2dNative"} & set(ops), ops


# -- hostile paddings -------------------------------------------------------------------------

def hostile_graph(tmp_path, op, explicit=None, pads=None, padding="EXPLICIT"):
    g = Graph()
    g.const("x", np.ones((1, 4, 4, 2), np.float32))
    source = "x"
    if pads is not None:
        g.const("p", np.array(pads, np.int64))
        source = g.op("pad", "Pad", ["x", "p"], np.float32, Tpaddings=type_attr(np.int64))
    g.const("w", np.ones((3, 3, 2, 2) if op == "Conv2D" else (3, 3, 2, 1), np.float32))
    attrs = dict(strides=ints_attr([1, 1, 1, 1]), padding=str_attr(padding))
    if explicit is not None:
        attrs["explicit_paddings"] = ints_attr(explicit)
    g.op("conv", op, [source, "w"], np.float32, **attrs)
    return g.save(tmp_path / "hostile.pb")


HOSTILE = [  # explicit paddings, Pad paddings, padding, exit code, what the line says in both runs
    ([0, 0, -1, 0, 0, 0, 0, 0], None, "EXPLICIT", 3, "EXPLICIT padding needs 8 non-negative explicit_paddings"),
    ([0, 0, 2**62, 2**62, 0, 0, 0, 0], None, "EXPLICIT", 4, "the padding is too large"),
    ([0, 0, 2**63 - 1, 1, 0, 0, 0, 0], None, "EXPLICIT", 4, "the padding is too large"),
    ([0, 0, 2**40, 1, 0, 0, 0, 0], None, "EXPLICIT", 4, "would take 16.0 TiB"),
    ([0, 0, 1, 1, 1, 1, 0, 0], None, "SAME", 3, "only allowed with padding EXPLICIT"),
    # a Pad that cannot fold (past the window, past int32 in total) reports its own size
    ([0, 0, 2**63 - 1, 0, 0, 0, 0, 0], [[0, 0], [1, 0], [0, 0], [0, 0]], "EXPLICIT", 4, "node 'conv'"),
    (None, [[0, 0], [2**62, 2**62], [0, 0], [0, 0]], "VALID", 4, "node 'pad' (Pad): paddings"),
    (None, [[0, 0], [2**31 - 1, 0], [0, 0], [0, 0]], "VALID", 4, "node 'pad' (Pad): output [1,2147483651,4,2]"),
]


@pytest.mark.slow
@pytest.mark.parametrize("op", ["Conv2D", "DepthwiseConv2dNative"])
@pytest.mark.parametrize("explicit, pads, padding, code, says", HOSTILE)
def test_hostile_paddings_give_one_clear_line(runner, tmp_path, op, explicit, pads, padding, code, says):
    model = hostile_graph(tmp_path, op, explicit, pads, padding)
    for extra in ([], ["--no-optimize"]):
        got, stdout, stderr = run_cc(runner, model, *extra, env={"GRAPHDEF_MAX_TENSOR_BYTES": None})
        assert got == code and stdout == "", stderr
        assert stderr.startswith("graphrun-cc: ") and stderr.count("\n") == 1 and says in stderr, stderr
        assert "internal error" not in stderr


# -- reductions walked a row at a time (a global average pool's Mean) ---------------------------

@pytest.mark.parametrize("op, shape, axes, keep_dims", [
    ("Mean", (8, 7, 7, 64), [1, 2], False),  # a global average pool: the channels are the kept run
    ("Mean", (2, 7, 7, 5), [1, 2], True),
    ("Sum", (3, 4, 5, 6), [0, 3], False),  # the innermost dim reduced
    ("Max", (3, 4, 5, 6), [3], True),
    ("Sum", (3, 0, 5), [1], False),
    ("Prod", (2, 3, 4), [0, 1, 2], False),
])
def test_reductions_over_outer_and_inner_dims(runner, tmp_path, op, shape, axes, keep_dims):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    g = Graph()
    g.const("x", x)
    g.const("a", np.array(axes, np.int32))
    g.op("r", op, ["x", "a"], np.float32, keep_dims=bool_attr(keep_dims), Tidx=type_attr(np.int32))
    model = g.save(tmp_path / "reduce.pb")
    (ours,) = cc_values(runner, model, tmp_path, {}, ["r"], optimize=False)
    numpy_op = {"Mean": np.mean, "Sum": np.sum, "Max": np.max, "Prod": np.prod}[op]
    expected = numpy_op(x.astype(np.float64), axis=tuple(axes), keepdims=keep_dims).astype(np.float32)
    assert ours.shape == expected.shape
    assert_conforms(ours, expected, model, "r")
