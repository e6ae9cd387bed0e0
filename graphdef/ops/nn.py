"""Softmax, its logarithm and the cross-entropy losses, over the last axis as TF's kernels are."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import tensor_ulps
from graphdef.ops.registry import Attr, build, convert_to_tensor, define
from graphdef.framework.shapes import TensorShape, show
from graphdef.framework.graph import get_default_graph
from graphdef.ops import array as array_ops
from graphdef.ops import math as math_ops

FLOATS = dtypes.FLOATS


# numpy reduces a short last axis row by row, slowly; reducing a transposed copy across rows
# instead is several times faster up to about this width.
_SHORT_ROW = 32


def _over_rows(ufunc, x):
    """ufunc.reduce over the last axis, keeping it as size 1; fast for short rows of a matrix."""
    if x.ndim == 2 and x.shape[1] <= _SHORT_ROW:
        return ufunc.reduce(x.T.copy(), axis=0)[:, None]
    return ufunc.reduce(x, axis=-1, keepdims=True)


def _shifted(x, out=None):
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("logits must have at least one dim (the classes), got a scalar")
    if x.shape[-1] == 0:  # no classes: nothing to normalise, and max() of nothing is an error
        return x
    return np.subtract(x, _over_rows(np.maximum, x), out=out)


def _softmax(x, *, out=None):
    """exp(x - max) / sum, each step written over the one before: into the logits' own array
    when the Session donates it (out=, nothing reads them afterwards), else into one new array.
    Attention's softmax runs over [batch, heads, T, T] scores, where every fresh array of that
    size costs more in page faults than the arithmetic; the same ufuncs, so the same bits."""
    e = _shifted(x, out)
    if e.size == 0:  # nothing to compute, and with no classes e is x itself, maybe a constant
        return e / _over_rows(np.add, e)
    np.exp(e, out=e)
    return np.divide(e, _over_rows(np.add, e), out=e)


def _log_softmax(x):
    shifted = _shifted(x)
    return shifted - np.log(_over_rows(np.add, np.exp(shifted)))


def _infer_last_axis(ctx):
    if ctx.shape(0).ndims == 0:
        raise ctx.error("logits must have at least one dim")
    return [ctx.shape(0)]


def _softmax_grad(op, g):
    y = op.outputs[0]
    return [(g - math_ops.reduce_sum(g * y, axis=-1, keepdims=True)) * y]


def _log_softmax_grad(op, g):
    return [g - math_ops.reduce_sum(g, axis=-1, keepdims=True) * math_ops.exp(op.outputs[0])]


SOFTMAX = define(
    "Softmax", "logits: T -> softmax: T", doc="exp(x) / sum(exp(x)) over the last axis.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=_infer_last_axis, kernel=_softmax, grad=_softmax_grad,
    numerics=tensor_ulps(8))

LOG_SOFTMAX = define(
    "LogSoftmax", "logits: T -> logsoftmax: T", doc="x - log(sum(exp(x))) over the last axis.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=_infer_last_axis, kernel=_log_softmax,
    grad=_log_softmax_grad, numerics=tensor_ulps(8))


def _infer_cross_entropy(ctx):
    features, labels = ctx.shape(0), ctx.shape(1)
    if features.ndims not in (None, 2):
        raise ctx.error(f"logits must be [batch, classes], got {show(features)}")
    if ctx.op_type == "SoftmaxCrossEntropyWithLogits":
        if not features.is_compatible_with(labels):
            raise ctx.error(f"logits {show(features)} and labels {show(labels)} must have the same shape")
        features = features.merge_with(labels)
        # an unknown-rank features takes the labels' rank, which the file may make anything
        if features.ndims not in (None, 2):
            raise ctx.error(f"logits and labels must be [batch, classes], got {show(features)}")
    elif labels.ndims not in (None, 1) or (features.ndims == 2 and labels.ndims == 1
                                           and not TensorShape([features.dims[0]]).is_compatible_with(labels)):
        raise ctx.error(f"labels {show(labels)} must be [batch] for logits {show(features)}")
    batch = None if features.ndims is None else features.dims[0]
    return [TensorShape([batch]), features if features.ndims is not None else TensorShape([None, None])]


def _check_batch(features, labels, dense):
    features, labels = np.asarray(features), np.asarray(labels)
    if features.ndim != 2:
        raise ValueError(f"logits must be [batch, classes], got {show(features.shape)}")
    if dense and labels.shape != features.shape:
        raise ValueError(f"logits {show(features.shape)} and labels {show(labels.shape)} must have the same shape")
    if not dense and labels.shape != features.shape[:1]:
        raise ValueError(f"labels {show(labels.shape)} must be [batch] for logits {show(features.shape)}")


def _softmax_cross_entropy(features, labels):
    _check_batch(features, labels, dense=True)
    log_p = _log_softmax(features)
    return -np.sum(labels * log_p, axis=-1), np.exp(log_p) - labels


def _sparse_softmax_cross_entropy(features, labels):
    _check_batch(features, labels, dense=False)
    features = np.asarray(features)
    labels = np.asarray(labels)
    classes = features.shape[-1]
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        raise ValueError(f"a label is outside [0, {classes}): {labels.tolist()}")
    log_p = _log_softmax(features)
    rows = np.arange(labels.shape[0])
    backprop = np.exp(log_p)
    backprop[rows, labels] -= 1
    return -log_p[rows, labels], backprop


def _cross_entropy_grad(op, g_loss, g_backprop):
    """d loss / d logits is the stored backprop, scaled per row; labels get -log_softmax (dense only)."""
    column = array_ops.reshape(g_loss, [-1, 1])
    grad_features = column * op.outputs[1]
    if op.type == "SparseSoftmaxCrossEntropyWithLogits":
        return [grad_features, None]
    return [grad_features, -column * log_softmax(op.inputs[0])]


SOFTMAX_CROSS_ENTROPY = define(
    "SoftmaxCrossEntropyWithLogits", "features: T, labels: T -> loss: T, backprop: T",
    doc="Per-row cross-entropy of softmax(features) against label distributions, and its gradient.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=_infer_cross_entropy, kernel=_softmax_cross_entropy,
    grad=_cross_entropy_grad, numerics=tensor_ulps(8))

SPARSE_SOFTMAX_CROSS_ENTROPY = define(
    "SparseSoftmaxCrossEntropyWithLogits", "features: T, labels: Tlabels -> loss: T, backprop: T",
    doc="Per-row cross-entropy of softmax(features) against class indices, and its gradient.",
    attrs={"T": Attr("type", allowed=FLOATS),
           "Tlabels": Attr("type", dtypes.int64, dtypes.INDEX)},
    infer=_infer_cross_entropy, kernel=_sparse_softmax_cross_entropy, grad=_cross_entropy_grad, numerics=tensor_ulps(8))


def _l2_loss(t):
    t = np.asarray(t)
    return (np.sum(t * t, dtype=t.dtype) / 2).astype(t.dtype)


L2_LOSS = define(
    "L2Loss", "t: T -> output: T", doc="sum(t ** 2) / 2.",
    attrs={"T": Attr("type", allowed=FLOATS)}, infer=lambda ctx: [TensorShape(())], kernel=_l2_loss,
    grad=lambda op, g: [op.inputs[0] * g], numerics=tensor_ulps(8))


# -- builders ---------------------------------------------------------------------------------

def _last_axis_only(axis, what):
    if axis not in (None, -1):
        raise NotImplementedError(f"{what}: only the last axis is supported (got axis={axis})")


def softmax(logits, axis=None, name=None):
    _last_axis_only(axis, "softmax")
    return build("Softmax", [logits], name=name, default_name="Softmax").outputs[0]


def log_softmax(logits, axis=None, name=None):
    _last_axis_only(axis, "log_softmax")
    return build("LogSoftmax", [logits], name=name, default_name="LogSoftmax").outputs[0]


def softmax_cross_entropy_with_logits_v2(labels=None, logits=None, axis=-1, name=None):
    """Per-row loss; gradients reach both logits and labels."""
    _last_axis_only(axis, "softmax_cross_entropy_with_logits")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    op = build("SoftmaxCrossEntropyWithLogits", [logits, labels], name=name,
               default_name="softmax_cross_entropy_with_logits")
    return op.outputs[0]


def softmax_cross_entropy_with_logits(labels=None, logits=None, axis=-1, name=None):
    """TF1's version: the labels are treated as constants."""
    return softmax_cross_entropy_with_logits_v2(array_ops.stop_gradient(convert_to_tensor(labels)), logits, axis, name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-row loss against integer class labels."""
    return build("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], name=name,
                 default_name="SparseSoftmaxCrossEntropyWithLogits").outputs[0]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-|x|)): stable for any logit."""
    with get_default_graph().name_scope(name or "logistic_loss"):
        x = convert_to_tensor(logits)
        z = convert_to_tensor(labels, dtype=x.dtype)
        return math_ops.relu(x) - x * z + math_ops.log1p(math_ops.exp(-math_ops.abs(x)))


def l2_loss(t, name=None):
    return build("L2Loss", [t], name=name, default_name="L2Loss").outputs[0]
