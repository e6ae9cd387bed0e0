"""Convolution, pooling, batch norm and the activations: TensorFlow as the oracle, forward and
backward, over strides, paddings (SAME, VALID, explicit), dilations and dtypes; and the
build-time errors, which name the shapes involved."""

import numpy as np
import pytest

import graphdef as tf
from tests.support.numerics_policy import assert_conforms
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - tf_oracle is a fixture

RNG = np.random.default_rng(7)

# (input H, W, C), (kernel H, W), out channels, strides, dilations, padding
WINDOWS = [
    ((5, 5, 3), (3, 3), 4, 1, 1, "SAME"),
    ((7, 6, 2), (3, 3), 3, 2, 1, "SAME"),
    ((7, 6, 2), (3, 2), 3, 2, 1, "VALID"),
    ((8, 8, 3), (2, 2), 2, 3, 1, "SAME"),      # stride larger than the window
    ((9, 9, 2), (3, 3), 2, 1, 2, "SAME"),
    ((9, 7, 2), (2, 3), 2, (2, 1), (1, 2), "VALID"),
    ((6, 6, 2), (1, 1), 5, 1, 1, "VALID"),
    ((6, 7, 2), (3, 3), 2, (1, 2), 1, [[0, 0], [1, 2], [0, 3], [0, 0]]),
    ((1, 1, 3), (3, 3), 2, 1, 1, "SAME"),      # a window larger than the input
]
IDS = [f"{hwc}-k{k}-s{s}-d{d}-{p if isinstance(p, str) else 'EXPLICIT'}" for hwc, k, _, s, d, p in WINDOWS]


def _pool_padding(padding):
    return padding if isinstance(padding, str) else "SAME"


def _unequal(strides):
    return len(set(np.broadcast_to(strides, 2).tolist())) > 1


def _numpy_depthwise(x, f, strides, padding):
    """TF's DepthwiseConv2dNative worked in float64 (no dilations): output channel c*M + m."""
    n, h, w, c = x.shape
    kh, kw, _, m = f.shape
    sh, sw = np.broadcast_to(strides, 2)
    if isinstance(padding, str):
        oh, ow = ((h + sh - 1) // sh, (w + sw - 1) // sw) if padding == "SAME" else \
            ((h - kh) // sh + 1, (w - kw) // sw + 1)
        top = max((oh - 1) * sh + kh - h, 0) // 2 if padding == "SAME" else 0
        left = max((ow - 1) * sw + kw - w, 0) // 2 if padding == "SAME" else 0
        pads = [(top, max((oh - 1) * sh + kh - h - top, 0)), (left, max((ow - 1) * sw + kw - w - left, 0))]
    else:
        pads = [tuple(padding[1]), tuple(padding[2])]
    xp = np.pad(x.astype(np.float64), [(0, 0), pads[0], pads[1], (0, 0)])
    oh, ow = (xp.shape[1] - kh) // sh + 1, (xp.shape[2] - kw) // sw + 1
    out = np.zeros((n, oh, ow, c, m))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :]
            out += patch[..., None] * f[i, j].astype(np.float64)
    return out.reshape(n, oh, ow, c * m).astype(x.dtype)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("hwc, k, out, strides, dilations, padding", WINDOWS, ids=IDS)
def test_conv_and_pool_forward_match_tensorflow(tf_oracle, hwc, k, out, strides, dilations, padding):
    x = RNG.normal(size=(2,) + hwc).astype(np.float32)
    f = RNG.normal(size=k + (hwc[2], out)).astype(np.float32)
    fd = RNG.normal(size=k + (hwc[2], 2)).astype(np.float32)
    depthwise_strides = [1, *np.broadcast_to(strides, 2), 1]

    def make():
        px = tf.placeholder(tf.float32, [None, *hwc], name="x")
        outs = [tf.nn.conv2d(px, tf.constant(f), strides=strides, padding=padding, dilations=dilations),
                tf.nn.max_pool(px, ksize=k, strides=strides, padding=_pool_padding(padding)),
                tf.nn.avg_pool(px, ksize=k, strides=strides, padding=_pool_padding(padding))]
        if dilations == 1 and not _unequal(strides):  # TF's CPU depthwise kernel has neither
            outs.append(tf.nn.depthwise_conv2d(px, tf.constant(fd), strides=depthwise_strides, padding=padding))
        return outs
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.parametrize("hwc, k, out, strides, dilations, padding",
                         [w for w in WINDOWS if w[4] == 1 and _unequal(w[3])],
                         ids=[i for i, w in zip(IDS, WINDOWS) if w[4] == 1 and _unequal(w[3])])
def test_depthwise_with_unequal_strides_matches_numpy(hwc, k, out, strides, dilations, padding):
    """TensorFlow's Eigen kernel refuses unequal strides (oneDNN's runs them); numpy is the oracle."""
    x = RNG.normal(size=(2,) + hwc).astype(np.float32)
    fd = RNG.normal(size=k + (hwc[2], 2)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        y = tf.nn.depthwise_conv2d(tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(fd),
                                   strides=[1, *np.broadcast_to(strides, 2), 1], padding=padding)
    with tf.Session(graph=g) as sess:
        got = sess.run(y, {"x:0": x})
    assert_conforms(got, _numpy_depthwise(x, fd, strides, padding), g, y.name)


@pytest.mark.slow
@pytest.mark.tf_oracle
@pytest.mark.parametrize("hwc, k, out, strides, dilations, padding", WINDOWS, ids=IDS)
def test_conv_and_pool_gradients_match_tensorflow(tf_oracle, hwc, k, out, strides, dilations, padding):
    x = RNG.normal(size=(2,) + hwc).astype(np.float32)
    f = RNG.normal(size=k + (hwc[2], out)).astype(np.float32)
    fd = RNG.normal(size=k + (hwc[2], 2)).astype(np.float32)
    # TF's Eigen gradient kernels refuse dilations: those are checked by central differences below
    dilated = dilations != 1

    def make():
        px = tf.placeholder(tf.float32, [2, *hwc], name="x")
        pf = tf.placeholder(tf.float32, f.shape, name="f")
        pfd = tf.placeholder(tf.float32, fd.shape, name="fd")
        parts = [tf.nn.max_pool(px, ksize=k, strides=strides, padding=_pool_padding(padding)),
                 tf.nn.avg_pool(px, ksize=k, strides=strides, padding=_pool_padding(padding))]
        if not dilated:
            parts.append(tf.nn.conv2d(px, pf, strides=strides, padding=padding, dilations=dilations))
        if not dilated and isinstance(padding, str):  # TF's depthwise backprops ignore explicit pads
            parts.append(tf.nn.depthwise_conv2d(px, pfd, strides=[1, *np.broadcast_to(strides, 2), 1],
                                                padding=padding))
        loss = tf.add_n([tf.reduce_sum(p * p * p) for p in parts])
        return loss, [px, pf, pfd]
    gradients_both(tf_oracle, make, {"x": x, "f": f, "fd": fd})


@pytest.mark.parametrize("hwc, k, out, strides, dilations, padding", [w for w in WINDOWS if w[4] != 1],
                         ids=[i for i, w in zip(IDS, WINDOWS) if w[4] != 1])
def test_dilated_conv_gradients_match_central_differences(hwc, k, out, strides, dilations, padding):
    """The dilated Conv2D gradients TF's Eigen kernels refuse, in float64 against central differences."""
    def build(x, f):
        return tf.nn.conv2d(x, f, strides=strides, padding=padding, dilations=dilations)
    assert _central_difference(build, [(2,) + hwc, k + (hwc[2], out)]) < 1e-7


def _central_difference(build, shapes, seed=0, eps=1e-6):
    """Largest relative gap between the symbolic and the numeric directional derivative, float64."""
    rng = np.random.default_rng(seed)
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        y = build(*xs)
        loss = tf.reduce_sum(y * tf.constant(rng.normal(size=y.shape.as_list())))
        grads = tf.gradients(loss, xs)
    values = [rng.normal(size=s) for s in shapes]
    worst = 0.0
    with tf.Session(graph=g) as sess:
        feed = dict(zip(xs, values))
        for i, grad in enumerate(sess.run(grads, feed)):
            d = rng.normal(size=shapes[i])
            numeric = (sess.run(loss, {**feed, xs[i]: values[i] + eps * d})
                       - sess.run(loss, {**feed, xs[i]: values[i] - eps * d})) / (2 * eps)
            worst = max(worst, abs(numeric - np.sum(grad * d)) / max(1.0, abs(numeric)))
    return worst


@pytest.mark.parametrize("strides, dilations, padding", [
    ([1, 2, 1, 1], [2, 1], "SAME"), ([1, 1, 1, 1], [2, 2], "VALID"),
    ([1, 2, 2, 1], 1, [[0, 0], [2, 0], [1, 1], [0, 0]])])
def test_depthwise_gradient_where_tensorflow_cannot_check_it(strides, dilations, padding):
    """Dilated or explicitly padded depthwise gradients, against central differences."""
    def build(x, f):
        return tf.nn.depthwise_conv2d(x, f, strides, padding, rate=dilations)
    assert _central_difference(build, [(2, 6, 5, 3), (2, 3, 3, 2)]) < 1e-7


def test_max_pool_gradient_goes_to_the_first_of_tied_maxima():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 2, 4, 1])
        (dx,) = tf.gradients(tf.reduce_sum(tf.nn.max_pool(x, 2, 2, "VALID")), [x])
    with tf.Session(graph=g) as sess:
        got = sess.run(dx, {x: np.array([1, 3, 7, 7, 3, 2, 7, 7], np.float32).reshape(1, 2, 4, 1)})
    np.testing.assert_array_equal(got.ravel(), [0, 1, 1, 0, 0, 0, 0, 0])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_conv2d_dtypes_match_tensorflow(tf_oracle, dtype):
    x = RNG.integers(-3, 4, size=(1, 5, 4, 2)).astype(dtype)
    f = RNG.integers(-2, 3, size=(3, 3, 2, 3)).astype(dtype)
    run_both(tf_oracle, lambda: [tf.nn.conv2d(tf.placeholder(tf.as_dtype(dtype), x.shape, name="x"), tf.constant(f),
                                              strides=[1, 2], padding="SAME")], {"x": x})


@pytest.mark.tf_oracle
def test_float16_runs_in_float32_and_rounds_once(tf_oracle):
    x = RNG.normal(size=(2, 4, 4, 3)).astype(np.float16)
    f = RNG.normal(size=(2, 2, 3, 2)).astype(np.float16)

    def make():
        px = tf.placeholder(tf.float16, x.shape, name="x")
        y, _, _ = tf.nn.fused_batch_norm(px, np.ones(3, np.float32), np.zeros(3, np.float32), is_training=True)
        return [tf.nn.conv2d(px, tf.constant(f), strides=1, padding="SAME"), tf.nn.avg_pool(px, 2, 1, "SAME"), y]
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.tf_oracle
def test_conv2d_transpose_matches_tensorflow(tf_oracle):
    v = RNG.normal(size=(2, 3, 3, 4)).astype(np.float32)
    f = RNG.normal(size=(3, 3, 2, 4)).astype(np.float32)
    run_both(tf_oracle, lambda: [tf.nn.conv2d_transpose(tf.placeholder(tf.float32, v.shape, name="v"), tf.constant(f),
                                                        [2, 6, 5, 2], strides=2, padding="SAME")],
             {"v": v})


# -- batch norm ----------------------------------------------------------------------------------

BN = {"x": RNG.normal(size=(2, 3, 2, 4)).astype(np.float32), "s": RNG.uniform(0.5, 2, 4).astype(np.float32),
      "o": RNG.normal(size=4).astype(np.float32), "m": RNG.normal(size=4).astype(np.float32),
      "v": RNG.uniform(0.5, 2, 4).astype(np.float32)}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("is_training, factor", [(False, 1.0), (True, 1.0), (True, 0.3)])
def test_fused_batch_norm_matches_tensorflow(tf_oracle, is_training, factor):
    def make():
        x, s, o, m, v = (tf.placeholder(tf.float32, BN[k].shape, name=k) for k in "xsomv")
        outputs = tf.raw_op("FusedBatchNormV3", x, s, o, m, v, epsilon=0.001, is_training=is_training,
                            exponential_avg_factor=factor, U=tf.float32)
        # y, mean and variance; the reserve spaces (3-5) are each implementation's own scratch
        return list(outputs[:3])
    run_both(tf_oracle, make, BN)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("is_training", [False, True])
def test_fused_batch_norm_gradients_match_tensorflow(tf_oracle, is_training):
    w = RNG.normal(size=BN["x"].shape).astype(np.float32)

    def make():
        x, s, o, m, v = (tf.placeholder(tf.float32, BN[k].shape, name=k) for k in "xsomv")
        y, _, _ = tf.nn.fused_batch_norm(x, s, o, None if is_training else m, None if is_training else v,
                                         is_training=is_training)
        return tf.reduce_sum(y * w), [x, s, o, m, v]
    skipped = gradients_both(tf_oracle, make, BN)
    # TF leaves the moving statistics without a gradient; graphdef gives the true one at inference
    assert skipped == ["m:0", "v:0"]


def test_batch_norm_inference_gradient_for_mean_and_variance():
    def build(x, m, v):
        return tf.nn.batch_normalization(x, m, v, offset=0.5, scale=2.0, variance_epsilon=1e-3)
    assert _central_difference(lambda x, m, v: build(x, m, v * v + 0.5), [(2, 3, 4), (4,), (4,)]) < 1e-7


def test_fused_batch_norm_builder_follows_tensorflow():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2, 2, 3])
        y, mean, var = tf.nn.fused_batch_norm(x, [1.0] * 3, [0.0] * 3, epsilon=1e-7)
        op = y.op
    assert op.type == "FusedBatchNormV3" and op.attrs["epsilon"] == 1.001e-5  # raised to cuDNN's minimum
    assert [t.shape.as_list() for t in op.outputs] == [[2, 2, 2, 3], [3], [3], [3], [3], [0]]
    with pytest.raises(ValueError, match="mean and variance are needed"):
        with g.as_default():
            tf.nn.fused_batch_norm(x, [1.0] * 3, [0.0] * 3, is_training=False)


# -- activations and bias ------------------------------------------------------------------------

EDGES = np.array([-40, -20, -14, -13.9, -3, -1, -0.0, 0.0, 0.5, 3, 5.9, 6, 7, 13.9, 14, 30, 40, np.nan, np.inf,
                  -np.inf])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_activations_match_tensorflow(tf_oracle, dtype):
    def make():
        x = tf.placeholder(tf.as_dtype(dtype), [None], name="x")
        return [tf.nn.relu6(x), tf.nn.elu(x), tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.01),
                tf.nn.softplus(x), tf.rsqrt(x)]
    run_both(tf_oracle, make, {"x": EDGES.astype(dtype)})


@pytest.mark.tf_oracle
def test_activation_gradients_match_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.nn.relu6(x) * tf.nn.elu(x) + tf.nn.leaky_relu(x, 0.3) + tf.nn.softplus(x) + tf.rsqrt(x + 30.0)
        return tf.reduce_sum(y * y), [x]
    gradients_both(tf_oracle, make, {"x": np.array([-3, -1, -0.5, 0.5, 3, 5.5, 6.5, 20], np.float32)})


def test_leaky_relu_uses_the_float32_alpha_of_the_wire(tmp_path):
    """A float64 graph computes with alpha as stored (float32), so it gives the same after a save and load."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [1], name="x")
        tf.nn.leaky_relu(x, alpha=0.1, name="y")
    tf.save(g, tmp_path / "m.pb")
    runs = []
    for graph in (g, tf.load(tmp_path / "m.pb")):
        with tf.Session(graph=graph) as sess:
            runs.append(sess.run("y:0", {"x:0": [-1.0]}))
    assert runs[0] == runs[1] == -np.float64(np.float32(0.1))


@pytest.mark.tf_oracle
def test_bias_add_matches_tensorflow_and_its_gradient(tf_oracle):
    v, b = RNG.normal(size=(2, 3, 4)).astype(np.float32), RNG.normal(size=4).astype(np.float32)

    def make():
        pv, pb = tf.placeholder(tf.float32, [None, 3, 4], name="v"), tf.placeholder(tf.float32, [4], name="b")
        return tf.reduce_sum(tf.nn.bias_add(pv, pb) ** 2), [pv, pb]
    run_both(tf_oracle, lambda: [make()[0]], {"v": v, "b": b})
    gradients_both(tf_oracle, make, {"v": v, "b": b})


# -- build-time errors name what is wrong ----------------------------------------------------------

def _build_error(make, match):
    g = tf.Graph()
    with g.as_default():
        with pytest.raises((ValueError, TypeError), match=match):
            make()


def test_errors_at_build_time():
    x = lambda: tf.placeholder(tf.float32, [2, 5, 5, 3], name="x")  # noqa: E731
    f = np.zeros((3, 3, 4, 2), np.float32)
    _build_error(lambda: tf.nn.conv2d(x(), f, 1, "SAME"),
                 r"Conv2D 'Conv2D': input \[2,5,5,3\] and filter \[3,3,4,2\]: the input's 3 channels are not a "
                 r"multiple of the filter's 4 in channels")
    _build_error(lambda: tf.nn.conv2d(x(), f[:, :, :3], 1, "SAME", data_format="NCHW"),
                 r"data_format 'NCHW' is not supported, only NHWC")
    _build_error(lambda: tf.raw_op("Conv2D", x(), f[:, :, :3], strides=[1, 1, 1, 1], padding="SAME",
                                   data_format="NCHW"), r"Conv2D 'Conv2D': data_format 'NCHW' is not supported")
    _build_error(lambda: tf.nn.conv2d(x(), f[:, :, :3], 1, "FULL"), r"padding must be one of SAME, VALID, EXPLICIT")
    _build_error(lambda: tf.nn.conv2d(x(), np.zeros((7, 1, 3, 1), np.float32), 1, "VALID"),
                 r"a window of 7 .* does not fit in 5 \(input shape \[2,5,5,3\]\)")
    _build_error(lambda: tf.nn.conv2d(tf.placeholder(tf.float32, [5, 5, 3]), f[:, :, :3], 1, "SAME"),
                 r"input must be 4-D .* got shape \[5,5,3\]")
    _build_error(lambda: tf.raw_op("MaxPool", x(), ksize=[2, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME"),
                 r"pooling over the batch or channel dims is not supported")
    _build_error(lambda: tf.raw_op("Conv2D", x(), f[:, :, :3], strides=[2, 1, 1, 1], padding="SAME"),
                 r"strides \[2, 1, 1, 1\] must be 1 in the batch and channel dims")
    _build_error(lambda: tf.nn.avg_pool(x(), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]), r"explicit padding")
    _build_error(lambda: tf.nn.bias_add(x(), np.zeros(4, np.float32)),
                 r"bias \[4\] must match the last dim of value \[2,5,5,3\]")
    _build_error(lambda: tf.nn.fused_batch_norm(x(), np.ones(4, np.float32), np.zeros(4, np.float32)),
                 r"scale has shape \[4\] but x \[2,5,5,3\] has 3 channels")
    _build_error(lambda: tf.nn.fused_batch_norm(tf.placeholder(tf.float64, [1, 1, 1, 1]), [1.0], [0.0]),
                 r"attr 'T' is float64; FusedBatchNormV3 accepts float16, float32")


def test_unknown_dims_stay_unknown_and_run():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, None, None, 2], name="x")
        y = tf.nn.max_pool(tf.nn.conv2d(x, np.ones((3, 3, 2, 4), np.float32), 2, "SAME"), 2, 2, "SAME")
        assert y.shape.as_list() == [None, None, None, 4]
        f = tf.placeholder(tf.float32, None, name="f")
        assert tf.nn.conv2d(x, f, 1, "VALID").shape.as_list() == [None, None, None, None]
    with tf.Session(graph=g) as sess:
        assert sess.run(y, {x: np.ones((3, 9, 6, 2), np.float32)}).shape == (3, 3, 2, 4)
