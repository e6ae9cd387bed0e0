"""Conformance cases: convolution and pooling (NHWC)."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, rounded, feed, INF, NAN


# -- convolution and pooling (NHWC) ---------------------------------------------------------------
# The references below loop over output positions in float64, straight from TF's definitions:
# output size and padding by TF's rule (SAME puts the odd pad at the bottom/right), a window
# reads only real input elements. Inputs are small integers or halves, so sums are exact.

def _same(size, k, s, d=1):
    """TF's SAME rule: (output size, padding before)."""
    k_eff = (k - 1) * d + 1
    out = -(-size // s)
    return out, max((out - 1) * s + k_eff - size, 0) // 2


def _valid(size, k, s, d=1):
    return (size - ((k - 1) * d + 1)) // s + 1, 0


def _window_reads(x_shape, k, strides, dilations, pads, out):
    """Yields (n, i, j, a, b, r, c): output (n, i, j) reads input (n, r, c) through filter tap (a, b)."""
    n_, h, w, _ = x_shape
    for n in range(n_):
        for i in range(out[0]):
            for j in range(out[1]):
                for a in range(k[0]):
                    for b in range(k[1]):
                        r = i * strides[0] + a * dilations[0] - pads[0]
                        c = j * strides[1] + b * dilations[1] - pads[1]
                        if 0 <= r < h and 0 <= c < w:
                            yield n, i, j, a, b, r, c


def _conv_ref(x, f, strides, pads, out, dilations=(1, 1), depthwise=False):
    x, f = x.astype(np.float64), f.astype(np.float64)
    channels = x.shape[3] * f.shape[3] if depthwise else f.shape[3]
    y = np.zeros((x.shape[0], out[0], out[1], channels))
    for n, i, j, a, b, r, c in _window_reads(x.shape, f.shape[:2], strides, dilations, pads, out):
        y[n, i, j] += (x[n, r, c][:, None] * f[a, b]).ravel() if depthwise else x[n, r, c] @ f[a, b]
    return y


X_IMG = (np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) % 7 - 3)       # small integers, some negative
F_33 = (np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2) % 5 - 2) * np.float32(0.5)


@case("conv2d_same_stride2", "Conv2D NHWC, SAME padding, stride 2: [1,5,5,2] * [3,3,2,2] -> [1,3,3,2] "
      "(one row/column of zeros on each side).")
def _():
    tf.nn.conv2d(feed("x", X_IMG), feed("f", F_33), strides=2, padding="SAME", name="y")
    expected = _conv_ref(X_IMG, F_33, (2, 2), (1, 1), (3, 3)).astype(np.float32)
    return {"x": X_IMG, "f": F_33}, {"y:0": expected}


@case("conv2d_valid_dilated_rect", "Conv2D VALID with dilations [2,1] and strides [1,2] on a [2,6,5,1] "
      "input with a [2,2,1,3] filter.")
def _():
    x = (np.arange(60, dtype=np.float32).reshape(2, 6, 5, 1) % 9 - 4)
    f = np.array([1, -1, 2, 0.5, 0, 1, -2, 1, 1, 0.5, -1, 3], np.float32).reshape(2, 2, 1, 3)
    tf.nn.conv2d(feed("x", x), feed("f", f), strides=[1, 2], padding="VALID", dilations=[2, 1], name="y")
    out = (_valid(6, 2, 1, 2)[0], _valid(5, 2, 2)[0])
    return {"x": x, "f": f}, {"y:0": _conv_ref(x, f, (1, 2), (0, 0), out, (2, 1)).astype(np.float32)}


@case("conv2d_explicit_padding", "Conv2D with EXPLICIT padding [[0,0],[1,2],[0,1],[0,0]] (asymmetric), stride 1.")
def _():
    f = F_33[:2, :, :, :1]
    tf.nn.conv2d(feed("x", X_IMG), feed("f", f), strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]], name="y")
    out = (5 + 1 + 2 - 2 + 1, 5 + 0 + 1 - 3 + 1)
    return {"x": X_IMG, "f": f}, {"y:0": _conv_ref(X_IMG, f, (1, 1), (1, 0), out).astype(np.float32)}


@case("conv2d_float64_1x1", "Conv2D in float64 with a 1x1 filter (a matrix product per pixel).")
def _():
    x = X_IMG.astype(np.float64) * 0.1
    f = np.array([[1.5, -2.0, 0.25], [0.5, 1.0, -1.0]]).reshape(1, 1, 2, 3)
    tf.nn.conv2d(feed("x", x), feed("f", f), strides=1, padding="VALID", name="y")
    return {"x": x, "f": f}, {"y:0": np.einsum("nhwc,co->nhwo", x, f[0, 0])}


DY_33 = (np.arange(18, dtype=np.float32).reshape(1, 3, 3, 2) % 4 - 1.5)


@case("conv2d_backprop_input", "Conv2DBackpropInput (SAME, stride 2): the [1,3,3,2] gradient spread back through "
      "the filter onto a [1,5,5,2] input; TF's transposed convolution.")
def _():
    tf.nn.conv2d_backprop_input([1, 5, 5, 2], feed("f", F_33), feed("dy", DY_33), [1, 2, 2, 1], "SAME", name="dx")
    dx = np.zeros((1, 5, 5, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        dx[n, r, c] += F_33[a, b].astype(np.float64) @ DY_33[n, i, j]
    return {"f": F_33, "dy": DY_33}, {"dx:0": dx.astype(np.float32)}


@case("conv2d_backprop_filter", "Conv2DBackpropFilter (SAME, stride 2): the filter's gradient, [3,3,2,2].")
def _():
    tf.nn.conv2d_backprop_filter(feed("x", X_IMG), [3, 3, 2, 2], feed("dy", DY_33), [1, 2, 2, 1], "SAME", name="df")
    df = np.zeros((3, 3, 2, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        df[a, b] += np.outer(X_IMG[n, r, c], DY_33[n, i, j])
    return {"x": X_IMG, "dy": DY_33}, {"df:0": df.astype(np.float32)}


@case("depthwise_conv2d", "DepthwiseConv2dNative with channel multiplier 2: SAME stride 2, and VALID stride 1 "
      "in float64; output channel c*2 + m comes from input channel c.")
def _():
    f = F_33 * np.float32(-1)
    x64, f64_ = X_IMG.astype(np.float64), f.astype(np.float64)
    tf.nn.depthwise_conv2d(feed("x", X_IMG), feed("f", f), [1, 2, 2, 1], "SAME", name="same")
    tf.nn.depthwise_conv2d(feed("x64", x64), feed("f64", f64_), [1, 1, 1, 1], "VALID", name="valid")
    return {"x": X_IMG, "f": f, "x64": x64, "f64": f64_}, {
        "same:0": _conv_ref(X_IMG, f, (2, 2), (1, 1), (3, 3), depthwise=True).astype(np.float32),
        "valid:0": _conv_ref(x64, f64_, (1, 1), (0, 0), (3, 3), depthwise=True)}


def _pool_ref(x, k, s, padding, reduce):
    n_, h, w, c_ = x.shape
    (oh, top), (ow, left) = (_same(h, k, s) if padding == "SAME" else _valid(h, k, s),
                             _same(w, k, s) if padding == "SAME" else _valid(w, k, s))
    windows = {}
    for n, i, j, a, b, r, col in _window_reads(x.shape, (k, k), (s, s), (1, 1), (top, left), (oh, ow)):
        windows.setdefault((n, i, j), []).append(x[n, r, col].astype(np.float64))
    y = np.zeros((n_, oh, ow, c_))
    for (n, i, j), values in windows.items():
        y[n, i, j] = reduce(np.array(values), axis=0)
    return y


X_NEG = -(np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2) % 11) - 1  # all negative: zero padding would win


@case("max_pool", "MaxPool 3x3 stride 2 SAME on an all-negative input (padding never wins) and 2x2 VALID on int32.")
def _():
    xi = (np.arange(32, dtype=np.int32).reshape(1, 4, 4, 2) * 7) % 13 - 6
    tf.nn.max_pool(feed("x", X_NEG), ksize=3, strides=2, padding="SAME", name="same")
    tf.nn.max_pool(feed("xi", xi), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID", name="valid")
    return {"x": X_NEG, "xi": xi}, {"same:0": _pool_ref(X_NEG, 3, 2, "SAME", np.max).astype(np.float32),
                                    "valid:0": _pool_ref(xi, 2, 2, "VALID", np.max).astype(np.int32)}


@case("max_pool_nan", "MaxPool skips NaN, and a window of only NaN or -inf gives the lowest finite float32 "
      "(TF starts each window there).")
def _():
    x = f32(1, NAN, NAN, NAN, -INF, -INF, NAN, 5,
            NAN, 3, NAN, NAN, -INF, -INF, -INF, NAN).reshape(1, 2, 8, 1)
    tf.nn.max_pool(feed("x", x), ksize=2, strides=2, padding="VALID", name="y")
    lowest = np.finfo(np.float32).min
    return {"x": x}, {"y:0": f32(3, lowest, lowest, 5).reshape(1, 1, 4, 1)}


@case("max_pool_grad", "MaxPoolGrad (3x3 stride 2 SAME): each window's gradient goes to its max; on ties to the "
      "first in row-major order; overlapping windows add up.")
def _():
    x = f32(5, 1, 5, 2, 5, 0, 1, 5, 1, 0, 2, 2, 9, 2, 2, 0, 1, 2, 3, 4, 4, 3, 2, 1, 0).reshape(1, 5, 5, 1)
    y = _pool_ref(x, 3, 2, "SAME", np.max).astype(np.float32)
    g = f32(1, 2, 4, 8, 16, 32, 64, 128, 256).reshape(1, 3, 3, 1)
    tf.raw_op("MaxPoolGrad", feed("x", x), feed("y", y), feed("g", g), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
              padding="SAME", name="dx")
    dx = np.zeros((1, 5, 5, 1), np.float32)
    for i in range(3):
        for j in range(3):
            rows, cols = range(max(2 * i - 1, 0), min(2 * i + 2, 5)), range(max(2 * j - 1, 0), min(2 * j + 2, 5))
            best = max(((r, c) for r in rows for c in cols), key=lambda rc: (x[0, rc[0], rc[1], 0], -rc[0], -rc[1]))
            dx[0, best[0], best[1], 0] += g[0, i, j, 0]
    return {"x": x, "y": y, "g": g}, {"dx:0": dx}


@case("avg_pool", "AvgPool 3x3 stride 2 SAME (border windows average only their real elements) and 2x2 VALID.")
def _():
    tf.nn.avg_pool(feed("x", X_IMG), ksize=3, strides=2, padding="SAME", name="same")
    tf.nn.avg_pool(feed("x2", X_IMG), ksize=2, strides=1, padding="VALID", name="valid")
    return {"x": X_IMG, "x2": X_IMG}, {"same:0": _pool_ref(X_IMG, 3, 2, "SAME", np.mean).astype(np.float32),
                                      "valid:0": _pool_ref(X_IMG, 2, 1, "VALID", np.mean).astype(np.float32)}


@case("avg_pool_grad", "AvgPoolGrad (3x3 stride 2 SAME): each window's gradient shared among the real elements "
      "it covers.")
def _():
    tf.raw_op("AvgPoolGrad", [1, 5, 5, 2], feed("g", DY_33), ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1],
              padding="SAME", name="dx")
    counts = np.zeros((3, 3))
    for _, i, j, *_rest in _window_reads((1, 5, 5, 1), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        counts[i, j] += 1
    dx = np.zeros((1, 5, 5, 2))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 2), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        dx[n, r, c] += DY_33[n, i, j] / counts[i, j]
    return {"g": DY_33}, {"dx:0": dx.astype(np.float32)}


@case("bias_add", "BiasAdd adds a [C] bias along the last dim: float32 [2,2,1,3] and int32 [2,3].")
def _():
    b = f32(0.5, -1, 2)
    bi = i32(10, -20, 30)
    tf.nn.bias_add(feed("x", X_IMG[:, :2, :1, :].repeat(3, axis=3)[..., :3]), feed("b", b), name="y")
    tf.nn.bias_add(feed("xi", i32([1, 2, 3], [4, 5, 6])), feed("bi", bi), name="yi")
    x = X_IMG[:, :2, :1, :].repeat(3, axis=3)[..., :3]
    return {"x": x, "b": b, "xi": i32([1, 2, 3], [4, 5, 6]), "bi": bi}, {
        "y:0": rounded(np.add, np.float32, x, b), "yi:0": i32([11, -18, 33], [14, -15, 36])}


BN_X = (np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) % 5 - 2) * np.float32(0.5)
BN_SCALE, BN_OFFSET = f32(1.0, 2.0, 0.5), f32(0.0, 1.0, -1.0)
BN_MEAN, BN_VAR = f32(0.5, -0.25, 0.0), f32(1.0, 2.0, 0.25)


def _bn_feeds():
    return {"x": BN_X, "scale": BN_SCALE, "offset": BN_OFFSET, "mean": BN_MEAN, "variance": BN_VAR}


@case("fused_batch_norm_inference", "FusedBatchNormV3, is_training=False, epsilon 0.001: "
      "scale * (x - mean) / sqrt(variance + epsilon) + offset; mean and variance pass through.")
def _():
    ins = [feed(k, v) for k, v in _bn_feeds().items()]
    y, m, v = tf.nn.fused_batch_norm(*ins, epsilon=0.001, is_training=False, name="bn")
    eps = np.float64(np.float32(0.001))  # the attr is a float32 on the wire
    x = BN_X.astype(np.float64)
    y = BN_SCALE * (x - BN_MEAN) / np.sqrt(BN_VAR.astype(np.float64) + eps) + BN_OFFSET
    return _bn_feeds(), {"bn:0": y.astype(np.float32), "bn:1": BN_MEAN, "bn:2": BN_VAR}


@case("fused_batch_norm_training", "FusedBatchNormV3, is_training=True: normalizes with the batch mean and biased "
      "variance; outputs 1 and 2 are the mean and the unbiased (n/(n-1)) variance, 3 and 4 the mean and biased "
      "variance; with exponential_avg_factor 0.25 outputs 1 and 2 move a quarter of the way from the given ones.")
def _():
    x_, s_, o_ = feed("x", BN_X), feed("scale", BN_SCALE), feed("offset", BN_OFFSET)
    m_, v_ = feed("mean", BN_MEAN), feed("variance", BN_VAR)
    empty = np.zeros(0, np.float32)
    tf.raw_op("FusedBatchNormV3", x_, s_, o_, tf.constant(empty), tf.constant(empty), epsilon=0.001, is_training=True,
              U=tf.float32, name="bn")
    tf.raw_op("FusedBatchNormV3", x_, s_, o_, m_, v_, epsilon=0.001, is_training=True, exponential_avg_factor=0.25,
              U=tf.float32, name="ema")
    x = BN_X.astype(np.float64)
    mean, var = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    unbiased = var * 8 / 7
    eps = np.float64(np.float32(0.001))
    y = BN_SCALE * (x - mean) / np.sqrt(var + eps) + BN_OFFSET
    return _bn_feeds(), {
        "bn:0": y.astype(np.float32), "bn:1": mean.astype(np.float32), "bn:2": unbiased.astype(np.float32),
        "bn:3": mean.astype(np.float32), "bn:4": var.astype(np.float32),
        "ema:1": (0.75 * BN_MEAN + 0.25 * mean).astype(np.float32),
        "ema:2": (0.75 * BN_VAR + 0.25 * unbiased).astype(np.float32)}


@case("small_cnn", "A small CNN forward pass: Conv2D SAME, BiasAdd, Relu, MaxPool, AvgPool, Reshape, MatMul, Softmax.")
def _():
    x = X_IMG * np.float32(0.25)
    f = F_33[:, :, :, :1] * np.float32(0.5)
    bias = f32(0.125)
    w = f32(1, -1, 0.5, 2, -0.5, 1, 0.25, -2).reshape(4, 2)
    conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(feed("x", x), tf.constant(f), strides=1, padding="SAME"),
                                     tf.constant(bias)))
    pooled = tf.nn.avg_pool(tf.nn.max_pool(conv, ksize=2, strides=1, padding="VALID"), ksize=2, strides=2,
                            padding="VALID")
    tf.nn.softmax(tf.matmul(tf.reshape(pooled, [1, 4]), tf.constant(w)), name="p")
    c = np.maximum(_conv_ref(x, f, (1, 1), (1, 1), (5, 5)) + 0.125, 0)
    logits = _pool_ref(_pool_ref(c, 2, 1, "VALID", np.max), 2, 2, "VALID", np.mean).reshape(1, 4) @ w
    e = np.exp(logits - logits.max())
    return {"x": x}, {"p:0": (e / e.sum()).astype(np.float32)}


@case("conv2d_grouped", "Conv2D with a [3,3,2,4] filter on 4 channels is 2 groups: input channels 0-1 make "
      "outputs 0-1, channels 2-3 outputs 2-3 (TF's grouped convolution), SAME, stride 1.")
def _():
    x = (np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4) % 5 - 2)
    f = (np.arange(72, dtype=np.float32).reshape(3, 3, 2, 4) % 7 - 3) * np.float32(0.5)
    tf.nn.conv2d(feed("x", x), feed("f", f), strides=1, padding="SAME", name="y")
    expected = np.concatenate([_conv_ref(x[..., 2 * g:2 * g + 2], f[..., 2 * g:2 * g + 2], (1, 1), (1, 1), (4, 4))
                               for g in range(2)], axis=3).astype(np.float32)
    return {"x": x, "f": f}, {"y:0": expected}


@case("conv2d_grouped_backprops", "The backprops of a 2-group Conv2D (a [3,3,2,4] filter on 4 channels, SAME, "
      "stride 2): input channels 0-1 take their gradient from output channels 0-1 only, and the filter's "
      "out channels 0-1 see input channels 0-1 only.")
def _():
    x = (np.arange(100, dtype=np.float32).reshape(1, 5, 5, 4) % 7 - 3)
    f = (np.arange(72, dtype=np.float32).reshape(3, 3, 2, 4) % 5 - 2) * np.float32(0.5)
    dy = (np.arange(36, dtype=np.float32).reshape(1, 3, 3, 4) % 4 - 1.5)
    tf.nn.conv2d_backprop_input([1, 5, 5, 4], feed("f", f), feed("dy", dy), [1, 2, 2, 1], "SAME", name="dx")
    tf.nn.conv2d_backprop_filter(feed("x", x), [3, 3, 2, 4], dy, [1, 2, 2, 1], "SAME", name="df")
    dx, df = np.zeros((1, 5, 5, 4)), np.zeros((3, 3, 2, 4))
    for n, i, j, a, b, r, c in _window_reads((1, 5, 5, 4), (3, 3), (2, 2), (1, 1), (1, 1), (3, 3)):
        for g in range(2):
            ins, outs = slice(2 * g, 2 * g + 2), slice(2 * g, 2 * g + 2)
            dx[n, r, c, ins] += f[a, b, :, outs].astype(np.float64) @ dy[n, i, j, outs]
            df[a, b, :, outs] += np.outer(x[n, r, c, ins], dy[n, i, j, outs])
    return {"x": x, "f": f, "dy": dy}, {"dx:0": dx.astype(np.float32), "df:0": df.astype(np.float32)}
