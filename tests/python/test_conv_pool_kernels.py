"""The numpy kernels of the convolutions, their fused forms and MaxPool against float64 numpy
written here (a loop over window offsets, TF's padding rule), under the ops' numerics policy.
TensorFlow is the other oracle (tests/python/ops/test_nn.py, test_depthwise_blocks.py); these run
without it, on the forms TF's tests do not reach: every fused activation, grouped and dilated
windows, transposed fused products, and MaxPool's NaN and -inf rule on explicit padding."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework.limits import TensorTooLarge
from graphdef.ops import pool
from graphdef.ops.fused import fused_conv2d, fused_depthwise_conv2d, fused_matmul
from graphdef.ops.registry import raw_op
from tests.support.numerics_policy import assert_conforms


def _conv64(x, f, strides, padding, dilations=(1, 1), groups=1):
    """Cross-correlation in float64, TF's SAME padding (the extra row and column at the end)."""
    x, f = x.astype(np.float64), f.astype(np.float64)
    n, h, w, c = x.shape
    kh, kw, ci, co = f.shape
    sh, sw = strides
    dh, dw = dilations
    spans = [(kh - 1) * dh + 1, (kw - 1) * dw + 1]
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        pad_h, pad_w = max((oh - 1) * sh + spans[0] - h, 0), max((ow - 1) * sw + spans[1] - w, 0)
    else:
        oh, ow = (h - spans[0]) // sh + 1, (w - spans[1]) // sw + 1
        pad_h = pad_w = 0
    xp = np.pad(x, [(0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0)])
    out = np.zeros((n, oh, ow, co))
    cog = co // groups
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]
            for g in range(groups):
                out[..., g * cog:(g + 1) * cog] += patch[..., g * ci:(g + 1) * ci] @ f[i, j, :, g * cog:(g + 1) * cog]
    return out


def _depthwise_as_grouped(f):
    kh, kw, c, m = f.shape
    return f.reshape(kh, kw, 1, c * m)


def _activate(y, activation, alpha=0.2):
    if activation == "Relu":
        return np.maximum(y, 0)
    if activation == "Relu6":
        return np.clip(y, 0, 6)
    if activation == "LeakyRelu":
        return np.where(y > 0, y, y * alpha)
    if activation == "Elu":
        return np.where(y < 0, np.expm1(y), y)
    return y


def _run(build, feeds):
    """The fetch `build` makes, run by the numpy kernels (the python engine: these are its tests),
    with its graph and name for the policy."""
    g = tf.Graph()
    with g.as_default():
        out = build()
    with tf.Session(graph=g, engine="python") as sess:
        return g, out.name, sess.run(out, feeds)


CONVS = [  # input shape, filter shape, strides, padding, dilations, groups
    ((2, 9, 11, 8), (3, 3, 8, 16), (1, 1), "SAME", (1, 1), 1),
    ((1, 12, 12, 6), (3, 3, 6, 5), (2, 2), "SAME", (1, 1), 1),  # SAME pads only at the end
    ((1, 10, 10, 4), (3, 3, 4, 8), (1, 1), "VALID", (2, 2), 1),
    ((1, 8, 8, 12), (1, 1, 12, 24), (1, 1), "VALID", (1, 1), 1),  # the input itself is the patch matrix
    ((1, 7, 7, 8), (3, 3, 2, 12), (1, 1), "SAME", (1, 1), 4),  # grouped
]


@pytest.mark.parametrize("x_shape, f_shape, strides, padding, dilations, groups", CONVS)
@pytest.mark.parametrize("activation", [None, "Relu", "Relu6", "LeakyRelu", "Elu"])
def test_fused_conv2d_matches_float64(x_shape, f_shape, strides, padding, dilations, groups, activation):
    rng = np.random.default_rng(7)
    x = rng.normal(size=x_shape).astype(np.float32)
    f = rng.normal(size=f_shape).astype(np.float32)
    b = rng.normal(size=f_shape[3]).astype(np.float32)
    g, name, got = _run(lambda: fused_conv2d(
        tf.placeholder(tf.float32, x_shape, name="x"), tf.constant(f), tf.constant(b), [1, *strides, 1], padding,
        activation=activation, dilations=[1, *dilations, 1], name="c"), {"x:0": x})
    want = _activate(_conv64(x, f, strides, padding, dilations, groups) + b, activation)
    assert_conforms(got, want.astype(np.float32), g, name)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32])
def test_conv2d_of_other_dtypes_matches_float64(dtype):
    """float16 is computed in float32 and rounded once; int32 is exact (small values, no overflow)."""
    rng = np.random.default_rng(14)
    x = rng.integers(-4, 5, size=(2, 7, 6, 3)).astype(dtype)
    f = rng.integers(-4, 5, size=(3, 3, 3, 5)).astype(dtype)
    if dtype != np.int32:
        x += rng.normal(size=x.shape).astype(dtype)
    g, name, got = _run(lambda: tf.nn.conv2d(tf.placeholder(tf.as_dtype(dtype), x.shape, name="x"), tf.constant(f),
                                             [1, 2, 1, 1], "SAME", name="c"), {"x:0": x})
    assert got.dtype == dtype
    assert_conforms(got, _conv64(x, f, (2, 1), "SAME").astype(dtype), g, name)


@pytest.mark.parametrize("channels, multiplier, strides", [(6, 1, (1, 1)), (6, 2, (2, 2)), (64, 1, (2, 1))])
@pytest.mark.parametrize("activation", [None, "Relu6"])
def test_fused_depthwise_matches_float64(channels, multiplier, strides, activation):
    """64 channels of multiplier 1 take the kernel's einsum over every window; the others its
    per-offset passes."""
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 9, 10, channels)).astype(np.float32)
    f = rng.normal(size=(3, 3, channels, multiplier)).astype(np.float32)
    b = rng.normal(size=channels * multiplier).astype(np.float32)
    g, name, got = _run(lambda: fused_depthwise_conv2d(
        tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), tf.constant(b), [1, *strides, 1], "SAME",
        activation=activation, name="c"), {"x:0": x})
    want = _activate(_conv64(x, _depthwise_as_grouped(f), strides, "SAME", groups=channels) + b, activation)
    assert_conforms(got, want.astype(np.float32), g, name)


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True), (True, True)])
def test_fused_matmul_matches_float64(transpose_a, transpose_b):
    rng = np.random.default_rng(9)
    a = rng.normal(size=(64, 160)).astype(np.float32)
    w = rng.normal(size=(160, 128)).astype(np.float32)
    b = rng.normal(size=128).astype(np.float32)
    a_in, w_in = (a.T.copy() if transpose_a else a), (w.T.copy() if transpose_b else w)
    g, name, got = _run(lambda: fused_matmul(
        tf.placeholder(tf.float32, a_in.shape, name="a"), tf.constant(w_in), tf.constant(b), activation="Relu",
        transpose_a=transpose_a, transpose_b=transpose_b, name="m"), {"a:0": a_in})
    want = np.maximum(a.astype(np.float64) @ w + b, 0)
    assert_conforms(got, want.astype(np.float32), g, name)


@pytest.mark.parametrize("residual_shape", [(1, 6, 5, 4), (4,), (2, 1, 6, 5, 4)])
def test_a_fused_residual_is_added_after_the_bias_as_addv2(residual_shape):
    """_FusedConv2D [BiasAdd, Add, Relu] (the Session's copy writes it): the residual broadcasts as
    AddV2's does, growing the output when it has more dims."""
    rng = np.random.default_rng(15)
    x = rng.normal(size=(1, 6, 5, 3)).astype(np.float32)
    f = rng.normal(size=(3, 3, 3, 4)).astype(np.float32)
    b, r = rng.normal(size=4).astype(np.float32), rng.normal(size=residual_shape).astype(np.float32)
    g, name, got = _run(lambda: raw_op(
        "_FusedConv2D", tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f), [tf.constant(b), tf.constant(r)],
        strides=[1, 1, 1, 1], padding="SAME", fused_ops=["BiasAdd", "Add", "Relu"], num_args=2, name="c"), {"x:0": x})
    want = np.maximum(_conv64(x, f, (1, 1), "SAME") + b + r, 0)
    assert got.shape == want.shape
    assert_conforms(got, want.astype(np.float32), g, name)


def _max_pool_taps(x, k, s, pads):
    """TF's MaxPool, tap by tap: each window starts at the lowest finite value and takes a tap only
    when strictly greater, in row-major order; padding is no tap. pads: (top, bottom, left, right)."""
    n, h, w, c = x.shape
    top, bottom, left, right = pads
    oh, ow = (h + top + bottom - k[0]) // s[0] + 1, (w + left + right - k[1]) // s[1] + 1
    out = np.full((n, oh, ow, c), np.finfo(np.float32).min, np.float32)
    for b, i, j, ch in np.ndindex(n, oh, ow, c):
        for di, dj in np.ndindex(*k):
            r, q = i * s[0] + di - top, j * s[1] + dj - left
            if 0 <= r < h and 0 <= q < w and x[b, r, q, ch] > out[b, i, j, ch]:
                out[b, i, j, ch] = x[b, r, q, ch]
    return out


@pytest.mark.parametrize("shape, k, s, padding, pads", [
    ((2, 7, 8, 5), (3, 3), (2, 2), "VALID", (0, 0, 0, 0)),
    ((1, 7, 8, 16), (3, 3), (2, 2), "SAME", (1, 1, 0, 1)),  # SAME: the extra row and column at the end
    ((1, 6, 6, 3), (2, 2), (1, 1), "SAME", (0, 1, 0, 1)),
    ((1, 5, 6, 4), (3, 2), (1, 2), [[0, 0], [2, 1], [1, 0], [0, 0]], (2, 1, 1, 0)),
])
def test_max_pool_skips_nan_and_padding_as_tensorflow(shape, k, s, padding, pads):
    """MaxPool against the tap-by-tap rule, on inputs full of NaN, -inf, +inf and both zeros (values
    compared, zeros of either sign equal)."""
    rng = np.random.default_rng(13)
    special = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.5, 2.25], np.float32)
    x = rng.choice(special, size=shape)
    x[..., 0] = np.nan  # windows of only NaN, of only -inf: the lowest finite value
    x[..., 1] = -np.inf
    _, _, got = _run(lambda: tf.nn.max_pool(tf.placeholder(tf.float32, shape, name="x"), [1, *k, 1], [1, *s, 1],
                                            padding), {"x:0": x})
    np.testing.assert_array_equal(got, _max_pool_taps(x, k, s, pads))


def test_inf_filter_in_padding_makes_nan_as_tensorflow():
    """TF multiplies padding taps too, so 0 * inf is NaN where the inf meets padding."""
    x = np.ones((1, 3, 3, 1), np.float32)
    f = np.zeros((3, 3, 1, 1), np.float32)
    f[0, 0, 0, 0] = np.inf
    _, _, got = _run(lambda: tf.nn.conv2d(tf.placeholder(tf.float32, x.shape, name="x"), tf.constant(f),
                                          [1, 1, 1, 1], "SAME"), {"x:0": x})
    want = np.full((1, 3, 3, 1), np.inf, np.float32)
    want[0, 0, :] = want[0, :, 0] = np.nan  # the first row and column read the padding with the inf
    np.testing.assert_array_equal(got, want)


def test_a_max_pool_window_larger_than_its_input_is_refused_at_once():
    """SAME pads any ksize to fit: a hostile 2^31 window is refused by the size check, naming the
    padded input, before any pass over it."""
    x = np.ones((1, 4, 4, 3), np.float32)
    with pytest.raises(TensorTooLarge):
        pool._max_pool(x, ksize=[1, 2 ** 31, 2 ** 31, 1], strides=[1, 1, 1, 1], padding="SAME",
                       explicit_paddings=[], data_format="NHWC")
