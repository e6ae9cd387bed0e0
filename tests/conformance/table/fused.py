"""Conformance cases: TensorFlow's remapper ops, a product with its bias and activation in one node
(_FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul), as graphdef's optimizer writes them."""

import numpy as np

from graphdef.ops.fused import fused_conv2d, fused_depthwise_conv2d, fused_matmul

from .base import case, f32, feed
from .conv_pool import F_33, X_IMG, _conv_ref


# The references: the product in float64 (conv_pool's loop over output positions, or @), the bias
# added, the activation by TF's formula, rounded once. Inputs are small integers or halves, so
# every sum before the activation is exact.

def _activate(y, activation, alpha=0.2):
    if activation == "Relu":
        return np.maximum(y, 0)
    if activation == "Relu6":
        return np.minimum(np.maximum(y, 0), 6)
    if activation == "Elu":
        return np.where(y < 0, np.exp(y) - 1, y)
    if activation == "LeakyRelu":
        return np.where(y > 0, y, y * np.float64(np.float32(alpha)))
    return y


BIAS2 = f32(0.5, -1.5)


@case("fused_conv2d_bias_relu", "_FusedConv2D [BiasAdd, Relu], SAME, stride 2: [1,5,5,2] * [3,3,2,2] + bias.")
def _():
    fused_conv2d(feed("x", X_IMG), feed("f", F_33), feed("b", BIAS2), 2, "SAME", "Relu", name="y")
    expected = _activate(_conv_ref(X_IMG, F_33, (2, 2), (1, 1), (3, 3)) + BIAS2, "Relu")
    return {"x": X_IMG, "f": F_33, "b": BIAS2}, {"y:0": expected.astype(np.float32)}


@case("fused_conv2d_explicit_leaky_relu", "_FusedConv2D [BiasAdd, LeakyRelu] (alpha 0.25) with EXPLICIT padding "
      "[[0,0],[1,2],[0,1],[0,0]], as a folded Pad leaves it.")
def _():
    f = F_33[:2]
    fused_conv2d(feed("x", X_IMG), feed("f", f), feed("b", BIAS2), 1, [[0, 0], [1, 2], [0, 1], [0, 0]],
                 "LeakyRelu", leakyrelu_alpha=0.25, name="y")
    out = (5 + 1 + 2 - 2 + 1, 5 + 0 + 1 - 3 + 1)
    expected = _activate(_conv_ref(X_IMG, f, (1, 1), (1, 0), out) + BIAS2, "LeakyRelu", 0.25)
    return {"x": X_IMG, "f": f, "b": BIAS2}, {"y:0": expected.astype(np.float32)}


@case("fused_conv2d_relu6_elu", "_FusedConv2D [BiasAdd, Relu6] and [BiasAdd, Elu], VALID, 1x1 and 3x3 filters.")
def _():
    x, f, b = feed("x", X_IMG), feed("f", F_33), feed("b", BIAS2)
    f1 = F_33[1:2, 1:2]
    fused_conv2d(x, feed("f1", f1), b, 1, "VALID", "Relu6", name="relu6")
    fused_conv2d(x, f, b, 1, "VALID", "Elu", name="elu")
    relu6 = _activate(_conv_ref(X_IMG, f1, (1, 1), (0, 0), (5, 5)) + BIAS2, "Relu6")
    elu = _activate(_conv_ref(X_IMG, F_33, (1, 1), (0, 0), (3, 3)) + BIAS2, "Elu")
    return ({"x": X_IMG, "f": F_33, "f1": f1, "b": BIAS2},
            {"relu6:0": relu6.astype(np.float32), "elu:0": elu.astype(np.float32)})


@case("fused_depthwise_bias_relu6", "_FusedDepthwiseConv2dNative [BiasAdd, Relu6], SAME, multiplier 2: "
      "[1,5,5,2] * [3,3,2,2] + 4 biases; and [BiasAdd, Elu], VALID, stride 2.")
def _():
    b4 = f32(0.5, -1, 2, -0.25)
    x, f, b = feed("x", X_IMG), feed("f", F_33), feed("b", b4)
    fused_depthwise_conv2d(x, f, b, 1, "SAME", "Relu6", name="relu6")
    fused_depthwise_conv2d(x, f, b, 2, "VALID", "Elu", name="elu")
    relu6 = _activate(_conv_ref(X_IMG, F_33, (1, 1), (1, 1), (5, 5), depthwise=True) + b4, "Relu6")
    elu = _activate(_conv_ref(X_IMG, F_33, (2, 2), (0, 0), (2, 2), depthwise=True) + b4, "Elu")
    return {"x": X_IMG, "f": F_33, "b": b4}, {"relu6:0": relu6.astype(np.float32), "elu:0": elu.astype(np.float32)}


@case("fused_matmul_bias_activations", "_FusedMatMul [BiasAdd] with transpose_b, and [BiasAdd, Relu] / "
      "[BiasAdd, LeakyRelu]: [3,4] x [4,2] + bias.")
def _():
    a = (np.arange(12, dtype=np.float32).reshape(3, 4) % 5 - 2)
    w = f32(1, -0.5, 2, 0, -1, 1.5, 0.5, -2).reshape(4, 2)
    x, wt, w_, b = feed("a", a), feed("wt", w.T.copy()), feed("w", w), feed("b", BIAS2)
    fused_matmul(x, wt, b, transpose_b=True, name="plain")
    fused_matmul(x, w_, b, "Relu", name="relu")
    fused_matmul(x, w_, b, "LeakyRelu", leakyrelu_alpha=0.5, name="leaky")
    y = a.astype(np.float64) @ w.astype(np.float64) + BIAS2
    return ({"a": a, "wt": w.T.copy(), "w": w, "b": BIAS2},
            {"plain:0": y.astype(np.float32), "relu:0": _activate(y, "Relu").astype(np.float32),
             "leaky:0": _activate(y, "LeakyRelu", 0.5).astype(np.float32)})


@case("depthwise_wide_channels", "DepthwiseConv2dNative and _FusedDepthwiseConv2dNative [BiasAdd, Relu] over 64 "
      "channels (graphdef's one-einsum kernel path): SAME stride 2, and VALID with dilations 2.")
def _():
    import graphdef as tf
    x = (np.arange(2 * 7 * 6 * 64, dtype=np.float32).reshape(2, 7, 6, 64) % 11 - 5)
    f = (np.arange(3 * 3 * 64, dtype=np.float32).reshape(3, 3, 64, 1) % 7 - 3) * np.float32(0.5)
    b = (np.arange(64, dtype=np.float32) % 5 - 2) * np.float32(0.25)
    xt, ft, bt = feed("x", x), feed("f", f), feed("b", b)
    tf.nn.depthwise_conv2d(xt, ft, [1, 1, 1, 1], "VALID", rate=2, name="dilated")
    fused_depthwise_conv2d(xt, ft, bt, 2, "SAME", "Relu", name="fused")
    dilated = _conv_ref(x, f, (1, 1), (0, 0), (3, 2), dilations=(2, 2), depthwise=True)
    # SAME: 1 row on top, no column
    fused = _activate(_conv_ref(x, f, (2, 2), (1, 0), (4, 3), depthwise=True) + b, "Relu")
    return {"x": x, "f": f, "b": b}, {"dilated:0": dilated.astype(np.float32), "fused:0": fused.astype(np.float32)}
