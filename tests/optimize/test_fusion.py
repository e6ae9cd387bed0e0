"""The optimizer's final passes: bias/activation fusion into TF's _Fused* ops, and Pad folding.

Each graph is built with graphdef's API and optimized for its fetch. Oracles: the same graph
unoptimized in graphdef's Session, bit for bit (the fused kernels apply the BiasAdd, AddV2 and
activation kernels' element rules to the same product); and TensorFlow running both the original
and the optimized GraphDef (which also proves TF imports and runs what the passes write). The
negative cases check the graph keeps the nodes the rewrite must not touch.
"""

import numpy as np
import pytest

import graphdef as tf
from graphdef.client.session import Session
from graphdef.framework.graph import Graph
from graphdef.optimize import optimize
from graphdef.wire.serialize import import_graph_def

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
W = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
WD = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)  # depthwise, multiplier 2
B4, B6 = RNG.standard_normal(4).astype(np.float32), RNG.standard_normal(6).astype(np.float32)
M = RNG.standard_normal((5, 8)).astype(np.float32)
WM = RNG.standard_normal((8, 4)).astype(np.float32)

ACTIVATIONS = {"Relu": tf.nn.relu, "Relu6": tf.nn.relu6, "Elu": tf.nn.elu,
               "LeakyRelu": lambda y, name: tf.nn.leaky_relu(y, alpha=0.3, name=name)}


def build_graph(make, feed):
    graph = Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, feed.shape, name="x")
        make(x)
    return graph.as_graph_def()


def run_graphdef(graph_def, fetches, feed):
    graph = Graph()
    with graph.as_default():
        import_graph_def(graph_def, name="")
    # the python engine: the bit-for-bit claim is its fused kernels' (the cc engine fuses on its own)
    with Session(graph=graph, engine="python") as session:
        return session.run([f"{f}:0" for f in fetches], {"x:0": feed})


def run_tensorflow(graph_def, fetches, feed):
    tensorflow = pytest.importorskip("tensorflow")
    tf1 = tensorflow.compat.v1
    graph = tf1.Graph()
    with graph.as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
    with tf1.Session(graph=graph) as session:
        return session.run([f"{f}:0" for f in fetches], {"x:0": feed})


def optimized_ops(make, fetches, feed, tensorflow=True, for_tensorflow=True):
    """The op types (Consts left out) of the optimized graph, after checking its values against the
    unoptimized graph in graphdef and against TensorFlow on both graphs (unless `tensorflow` is
    False: for graphs TF itself gets wrong). `for_tensorflow` False: the copy graphdef's Session
    runs, which TF's op definitions need not allow, so graphdef alone checks it."""
    original = build_graph(make, feed)
    graph_def, _ = optimize(original, outputs=list(fetches), keep=["x"], for_tensorflow=for_tensorflow)
    ours, before = run_graphdef(graph_def, fetches, feed), run_graphdef(original, fetches, feed)
    for fetch, a, b in zip(fetches, ours, before):
        np.testing.assert_array_equal(a, b, err_msg=f"{fetch}: optimized vs unoptimized graphdef")
    if not (tensorflow and for_tensorflow):
        return sorted(n.op for n in graph_def.node if n.op != "Const"), graph_def
    theirs, theirs_before = run_tensorflow(graph_def, fetches, feed), run_tensorflow(original, fetches, feed)
    for fetch, a, t, t0 in zip(fetches, ours, theirs, theirs_before):
        scale = max(np.abs(t0).max(), 1.0)
        np.testing.assert_allclose(a, t0, rtol=1e-5, atol=1e-5 * scale, err_msg=f"{fetch}: graphdef vs TensorFlow")
        np.testing.assert_allclose(t, t0, rtol=1e-5, atol=1e-5 * scale, err_msg=f"{fetch}: TF optimized vs original")
    return sorted(n.op for n in graph_def.node if n.op != "Const"), graph_def


def session_optimized_ops(make, fetches, feed):
    return optimized_ops(make, fetches, feed, for_tensorflow=False)


def node(graph_def, op_type):
    [found] = [n for n in graph_def.node if n.op == op_type]
    return found


# -- fusion ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("activation", [None, *ACTIVATIONS])
def test_conv2d_bias_activation_fuses(activation):
    def make(x):
        y = tf.nn.bias_add(tf.nn.conv2d(x, tf.constant(W), 2, "SAME"), tf.constant(B4), name="bias")
        if activation:
            ACTIVATIONS[activation](y, name="act")
    last = "act" if activation else "bias"
    ops, graph_def = optimized_ops(make, [last], X)
    assert ops == ["Placeholder", "_FusedConv2D"]
    fused = node(graph_def, "_FusedConv2D")
    assert fused.name == last
    assert list(fused.attr["fused_ops"].list.s) == [b"BiasAdd"] + ([activation.encode()] if activation else [])
    if activation == "LeakyRelu":
        assert fused.attr["leakyrelu_alpha"].f == pytest.approx(0.3)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("activation", [None, "Relu", "Relu6", "Elu"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_depthwise_bias_activation_fuses_in_the_session_copy_alone(activation, padding):
    """TF runs _FusedDepthwiseConv2dNative only with its oneDNN kernels (TF_ENABLE_ONEDNN_OPTS=0 has a
    NoOp stand in, and the run fails): a written graph keeps the chain; the Session's copy fuses it."""
    def make(x):
        y = tf.nn.bias_add(tf.nn.depthwise_conv2d(x, tf.constant(WD), [1, 1, 1, 1], padding), tf.constant(B6),
                           name="bias")
        if activation:
            ACTIVATIONS[activation](y, name="act")
    fetch = "act" if activation else "bias"
    ops, _ = optimized_ops(make, [fetch], X)
    assert ops == sorted(["BiasAdd", "DepthwiseConv2dNative", "Placeholder"] + ([activation] if activation else []))
    ops, graph_def = session_optimized_ops(make, [fetch], X)
    assert ops == ["Placeholder", "_FusedDepthwiseConv2dNative"]
    assert "explicit_paddings" not in node(graph_def, "_FusedDepthwiseConv2dNative").attr  # not in TF's op def


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("activation", [None, *ACTIVATIONS])
def test_matmul_bias_activation_fuses(activation):
    def make(x):
        y = tf.nn.bias_add(tf.matmul(x, tf.constant(WM)), tf.constant(B4), name="bias")
        if activation:
            ACTIVATIONS[activation](y, name="act")
    ops, _ = optimized_ops(make, ["act" if activation else "bias"], M)
    assert ops == ["Placeholder", "_FusedMatMul"]


@pytest.mark.tf_oracle
def test_depthwise_leaky_relu_stays_apart():
    """TF's fused depthwise kernel has no LeakyRelu: in the Session's copy the bias fuses, the activation stays."""
    def make(x):
        y = tf.nn.bias_add(tf.nn.depthwise_conv2d(x, tf.constant(WD), [1, 1, 1, 1], "SAME"), tf.constant(B6))
        tf.nn.leaky_relu(y, name="act")
    ops, _ = session_optimized_ops(make, ["act"], X)
    assert ops == ["LeakyRelu", "Placeholder", "_FusedDepthwiseConv2dNative"]


@pytest.mark.tf_oracle
def test_a_fetched_bias_add_keeps_its_activation_apart():
    def make(x):
        tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, tf.constant(W), 1, "VALID"), tf.constant(B4), name="bias"),
                   name="act")
    ops, graph_def = optimized_ops(make, ["bias", "act"], X)
    assert ops == ["Placeholder", "Relu", "_FusedConv2D"]
    assert node(graph_def, "_FusedConv2D").name == "bias"


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_bias_add_read_twice_keeps_its_activation_apart():
    def make(x):
        y = tf.nn.bias_add(tf.nn.conv2d(x, tf.constant(W), 1, "VALID"), tf.constant(B4))
        tf.add(tf.nn.relu(y), tf.negative(y), name="out")
    ops, _ = optimized_ops(make, ["out"], X)
    assert ops == ["AddV2", "Neg", "Placeholder", "Relu", "_FusedConv2D"]


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_convolution_read_twice_is_not_fused():
    def make(x):
        y = tf.nn.conv2d(x, tf.constant(W), 1, "VALID")
        tf.add(tf.nn.relu(tf.nn.bias_add(y, tf.constant(B4))), y, name="out")
    ops, _ = optimized_ops(make, ["out"], X)
    assert ops == ["AddV2", "BiasAdd", "Conv2D", "Placeholder", "Relu"]


def test_a_fed_bias_is_not_fused():
    """The bias must be a Const of the output's channels: a fed one may not fit."""
    graph = Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        b = tf.placeholder(tf.float32, [None], name="b")
        tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, tf.constant(W), 1, "VALID"), b), name="act")
    graph_def, report = optimize(graph.as_graph_def(), outputs=["act"], keep=["x", "b"])
    assert sorted(n.op for n in graph_def.node if n.op != "Const") == ["BiasAdd", "Conv2D", "Placeholder",
                                                                        "Placeholder", "Relu"]
    assert not report.changes.get("bias and activation fusion")


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_float64_is_not_fused():
    def make(x):
        y = tf.nn.conv2d(tf.cast(x, tf.float64), tf.constant(W.astype(np.float64)), 1, "VALID")
        tf.nn.relu(tf.nn.bias_add(y, tf.constant(B4.astype(np.float64))), name="act")
    ops, _ = optimized_ops(make, ["act"], X)
    assert ops == ["BiasAdd", "Cast", "Conv2D", "Placeholder", "Relu"]


# -- Pad folding ----------------------------------------------------------------------------------

def padded_conv(pads, padding="VALID", strides=1, value=0, depthwise=False, bias=True):
    def make(x):
        p = tf.pad(x, pads, constant_values=value, name="pad")
        if depthwise:
            y = tf.nn.depthwise_conv2d(p, tf.constant(WD), [1, strides, strides, 1], padding, name="conv")
        else:
            y = tf.nn.conv2d(p, tf.constant(W), strides, padding, name="conv")
        if bias:
            tf.nn.relu(tf.nn.bias_add(y, tf.constant(B6 if depthwise else B4)), name="act")
        else:
            tf.identity(y, name="act")
    return make


@pytest.mark.tf_oracle
def test_a_zero_pad_folds_into_a_valid_convolution():
    ops, graph_def = optimized_ops(padded_conv([[0, 0], [3, 1], [0, 2], [0, 0]], strides=2), ["act"], X)
    assert ops == ["Placeholder", "_FusedConv2D"]
    fused = node(graph_def, "_FusedConv2D")
    assert fused.attr["padding"].s == b"EXPLICIT"
    assert list(fused.attr["explicit_paddings"].list.i) == [0, 0, 3, 1, 0, 2, 0, 0]


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_zero_pad_adds_to_same_padding_at_stride_1():
    ops, graph_def = optimized_ops(padded_conv([[0, 0], [1, 0], [2, 2], [0, 0]], padding="SAME"), ["act"], X)
    assert ops == ["Placeholder", "_FusedConv2D"]
    assert list(node(graph_def, "_FusedConv2D").attr["explicit_paddings"].list.i) == [0, 0, 2, 1, 3, 3, 0, 0]


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_zero_pad_folds_into_an_unfused_depthwise_convolution_in_the_session_copy_alone():
    make = padded_conv([[0, 0], [1, 1], [1, 1], [0, 0]], depthwise=True, bias=False)
    ops, _ = optimized_ops(make, ["act"], X)
    assert ops == ["DepthwiseConv2dNative", "Identity", "Pad", "Placeholder"]
    ops, graph_def = session_optimized_ops(make, ["act"], X)
    assert ops == ["DepthwiseConv2dNative", "Identity", "Placeholder"]
    assert list(node(graph_def, "DepthwiseConv2dNative").attr["explicit_paddings"].list.i) == [0, 0, 1, 1, 1, 1, 0, 0]


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_written_depthwise_chain_keeps_its_pad():
    """TF with its oneDNN kernels aborts on a DepthwiseConv2dNative with EXPLICIT padding that its
    remapper fuses with the BiasAdd after it; without them it has no fused depthwise kernel. So a
    written graph keeps this chain as it is (TensorFlow runs it here, oneDNN on)."""
    ops, _ = optimized_ops(padded_conv([[0, 0], [1, 1], [1, 1], [0, 0]], depthwise=True, strides=2), ["act"], X)
    assert ops == ["BiasAdd", "DepthwiseConv2dNative", "Pad", "Placeholder", "Relu"]


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("pads, value, padding, strides", [
    ([[0, 0], [1, 1], [1, 1], [0, 0]], 1.5, "VALID", 1),   # not zeros
    ([[0, 0], [1, 1], [1, 1], [0, 1]], 0, "VALID", 1),     # pads the channels
    ([[1, 0], [1, 1], [1, 1], [0, 0]], 0, "VALID", 1),     # pads the batch
    ([[0, 0], [1, 1], [1, 1], [0, 0]], 0, "SAME", 2),      # SAME's pads depend on the input's size
], ids=["nonzero-value", "channel-pad", "batch-pad", "same-strided"])
def test_pads_that_do_not_fold(pads, value, padding, strides):
    channels_padded = pads[3] != [0, 0]
    weights = np.concatenate([W, W[:, :, :1]], axis=2) if channels_padded else W

    def make(x):
        p = tf.pad(x, pads, constant_values=value, name="pad")
        tf.identity(tf.nn.conv2d(p, tf.constant(weights), strides, padding, name="conv"), name="act")
    # TF 2.21 (its oneDNN Pad + Conv2D rewrite) gets a batch or channel Pad wrong even in the
    # original graph, so those two are checked against graphdef's unoptimized run alone
    ops, graph_def = optimized_ops(make, ["act"], X, tensorflow=pads[0] == [0, 0] and not channels_padded)
    assert ops == ["Conv2D", "Identity", "Pad" if value == 0 else "PadV2", "Placeholder"]
    assert node(graph_def, "Conv2D").attr["padding"].s == padding.encode()


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_pad_read_twice_stays():
    def make(x):
        p = tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], name="pad")
        tf.add(tf.reduce_sum(tf.nn.conv2d(p, tf.constant(W), 1, "VALID")), tf.reduce_sum(p), name="out")
    ops, _ = optimized_ops(make, ["out"], X)
    assert "Pad" in ops and "Conv2D" in ops


def test_the_session_copy_folds_the_pad_into_the_fused_depthwise_convolution():
    """for_tensorflow=False (the copy graphdef's Session runs): the Pad TF's fused depthwise op
    cannot absorb goes too; the values stay the unoptimized graph's, bit for bit."""
    original = build_graph(padded_conv([[0, 0], [1, 2], [2, 1], [0, 0]], depthwise=True, strides=2), X)
    graph_def, report = optimize(original, outputs=["act"], keep=["x"], for_tensorflow=False)
    assert sorted(n.op for n in graph_def.node if n.op != "Const") == ["Placeholder", "_FusedDepthwiseConv2dNative"]
    fused = node(graph_def, "_FusedDepthwiseConv2dNative")
    assert fused.attr["padding"].s == b"EXPLICIT"
    assert list(fused.attr["explicit_paddings"].list.i) == [0, 0, 1, 2, 2, 1, 0, 0]
    [ours], [before] = run_graphdef(graph_def, ["act"], X), run_graphdef(original, ["act"], X)
    np.testing.assert_array_equal(ours, before)


# -- residual adds (the Session's copy only) ------------------------------------------------------

def residual_block(residual_shape=None, activation="Relu"):
    """conv -> bias -> AddV2 with a residual (the input by default) -> activation."""
    def make(x):
        y = tf.nn.bias_add(tf.nn.conv2d(x, tf.constant(W[:, :, :, :3]), 1, "SAME"), tf.constant(B4[:3]))
        residual = x if residual_shape is None else tf.constant(RNG.standard_normal(residual_shape).astype(np.float32))
        total = tf.add(residual, y, name="add")  # the convolution second: either side fuses
        if activation:
            ACTIVATIONS[activation](total, name="act")
    return make


@pytest.mark.slow
@pytest.mark.parametrize("residual_shape, activation", [(None, "Relu"), (None, None), (None, "Relu6"), (None, "Elu"),
                                                        ((1, 1, 3), "Relu"), ((2, 7, 6, 3), "LeakyRelu")])
def test_the_session_copy_fuses_a_residual_add_into_the_convolution(residual_shape, activation):
    """for_tensorflow=False: _FusedConv2D [BiasAdd, Add(, activation)] with the residual as its second
    arg, broadcasting included; the copy for TensorFlow keeps the Add (its kernel has none). The
    fused kernel adds as the unoptimized graph does, bit for bit."""
    last = "act" if activation else "add"
    original = build_graph(residual_block(residual_shape, activation), X)
    graph_def, report = optimize(original, outputs=[last], keep=["x"], for_tensorflow=False)
    assert report.changes["residual fusion"] == 1
    assert sorted(n.op for n in graph_def.node if n.op != "Const") == ["Placeholder", "_FusedConv2D"]
    fused = node(graph_def, "_FusedConv2D")
    assert fused.name == last and fused.attr["num_args"].i == 2
    assert list(fused.attr["fused_ops"].list.s) == [b"BiasAdd", b"Add"] + ([activation.encode()] if activation else [])
    [ours], [before] = run_graphdef(graph_def, [last], X), run_graphdef(original, [last], X)
    np.testing.assert_array_equal(ours, before)
    for_tf, _ = optimize(original, outputs=[last], keep=["x"])
    assert "AddV2" in [n.op for n in for_tf.node]


def test_a_convolution_whose_output_is_also_fetched_keeps_its_residual_add():
    original = build_graph(residual_block(), X)
    conv = [n.name for n in original.node if n.op == "BiasAdd"]
    graph_def, report = optimize(original, outputs=["act", *conv], keep=["x"], for_tensorflow=False)
    assert report.changes.get("residual fusion", 0) == 0 and "AddV2" in [n.op for n in graph_def.node]


def _residual_after(read_again):
    """r = relu(x); act = relu(r + bias_add(conv(relu6(r)))); with `read_again`, r is read once more
    after."""
    def make(x):
        r = tf.nn.relu(x, name="r")
        y = tf.nn.bias_add(tf.nn.conv2d(tf.nn.relu6(r), tf.constant(W[:, :, :, :3]), 1, "SAME"), tf.constant(B4[:3]))
        act = tf.nn.relu(tf.add(r, y), name="act")
        tf.add(act, r if read_again else act, name="out")
    return make


@pytest.mark.slow
@pytest.mark.parametrize("read_again", [False, True])
def test_a_fused_residual_keeps_its_values_for_what_reads_it_after(read_again):
    """The fused convolution adds the residual into its own output, never into the residual's
    array: a residual read again after it still holds its values (the sums bit for bit)."""
    original = build_graph(_residual_after(read_again), X)
    graph_def, report = optimize(original, outputs=["out"], keep=["x"], for_tensorflow=False)
    assert report.changes["residual fusion"] == 1
    [ours], [before] = run_graphdef(graph_def, ["out"], X), run_graphdef(original, ["out"], X)
    np.testing.assert_array_equal(ours, before)
