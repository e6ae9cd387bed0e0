"""Batch-norm folding: an inference batch norm after a convolution or MatMul goes into its weights.

Two forms reach here, both after constant folding has made their parameters Consts:
- FusedBatchNorm / V2 / V3 with is_training false (TF's and Keras' frozen form):
  y = (x - mean) * scale / sqrt(var + eps) + offset;
- Keras' and TF1's unfused form, which folding reduces to y = x * c + b (Mul, then Add/AddV2/
  Sub/BiasAdd), c and b one value per output channel.
Either way the filter's output channels are scaled by s and a BiasAdd adds the shift, the same
rewrite as TF's Graph Transform Tool's fold_batch_norms. The scale is worked in float64 and
rounded once; the convolution then sums products of the scaled weights, a reordering of the
same arithmetic that the convolution's tensor_ulps tolerance covers.
"""

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.optimize.graph_view import input_text
from graphdef.wire.serialize import ndarray_from_proto, ndarray_to_proto

PRODUCERS = frozenset({"Conv2D", "DepthwiseConv2dNative", "MatMul"})
FUSED_BN = frozenset({"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"})
ADDS = frozenset({"Add", "AddV2", "BiasAdd", "Sub"})


def fold_batch_norms(view, outputs, protected):
    folded = 0
    for name in list(view.nodes):
        node = view.nodes.get(name)
        if node is None or name in protected:
            continue
        if node.op in FUSED_BN:
            folded += _fold_fused(view, node, protected)
        elif node.op == "Mul":
            folded += _fold_mul(view, node, protected)
        elif node.op in ADDS:
            folded += _fold_add(view, node, protected)
    return folded


fold_batch_norms.name = "batch-norm folding"


# -- matching -----------------------------------------------------------------------------------

def _const(view, protected, text):
    """The value of the Const that input `text` reads, else None (also for a Const that is fed)."""
    if text.startswith("^") or (":" in text and not text.endswith(":0")):
        return None
    node = view.nodes.get(text.split(":")[0])
    if node is None or node.op != "Const" or node.name in protected:
        return None
    return ndarray_from_proto(node.attr["value"].tensor)


def _sole_reader(view, producer, reader, protected):
    """True when `reader` is the only thing reading `producer` (output 0, no control uses)."""
    if producer in protected:
        return False
    uses = [(node.name, text) for node in view.nodes.values() for text in node.input
            if text.split(":")[0].lstrip("^") == producer]
    return len(uses) == 1 and uses[0][0] == reader and uses[0][1] in (producer, f"{producer}:0")


def _producer(view, text, reader, protected):
    """The float32 Conv2D/Depthwise/MatMul (with a Const filter) that `text` names, read only by
    `reader`; else None."""
    if text.startswith("^") or (":" in text and not text.endswith(":0")):
        return None
    node = view.nodes.get(text.split(":")[0])
    if node is None or node.op not in PRODUCERS or node.attr["T"].type != 1:
        return None
    if node.op != "MatMul" and node.attr["data_format"].s not in (b"", b"NHWC"):
        return None
    if node.op == "MatMul" and node.attr["transpose_b"].b:
        return None
    if len(node.input) != 2 or _const(view, protected, node.input[1]) is None:
        return None
    if not _sole_reader(view, node.name, reader, protected):
        return None
    return node


def _per_channel(value, channels):
    """A scale or shift as one float64 per output channel, or None if it is not of that form."""
    if value is None or value.dtype != np.float32:
        return None
    if value.size == 1:
        return np.full(channels, float(value.reshape(())), np.float64)
    if value.size != channels or any(d != 1 for d in value.shape[:-1]):
        return None
    return value.reshape(channels).astype(np.float64)


# -- rewriting ----------------------------------------------------------------------------------

def _filter_of(view, producer):
    return ndarray_from_proto(view.nodes[producer.input[1].split(":")[0]].attr["value"].tensor)


def _out_channels(producer, weights):
    if producer.op == "DepthwiseConv2dNative":
        return weights.shape[2] * weights.shape[3]
    return weights.shape[-1]


def _scaled(producer, weights, scale):
    """The filter with output channel c multiplied by scale[c], worked in float64, rounded once."""
    w = weights.astype(np.float64)
    if producer.op == "DepthwiseConv2dNative":
        w = w * scale.reshape(weights.shape[2], weights.shape[3])
    else:
        w = w * scale
    return w.astype(np.float32)


def _add_const(view, base, value):
    name, k = base, 1
    while name in view.nodes:
        name, k = f"{base}_{k}", k + 1
    node = graph_pb2.NodeDef(name=name, op="Const")
    proto = ndarray_to_proto(np.asarray(value, np.float32))
    node.attr["dtype"].type = proto.dtype
    node.attr["value"].tensor.CopyFrom(proto)
    view.nodes[name] = node
    return name


def _rewrite(view, target, producer, scale, shift):
    """`target` (the last node of the pattern, name kept) becomes BiasAdd(producer', shift), where
    producer' is `producer` with its filter scaled; `producer` keeps its name."""
    weights = _filter_of(view, producer)
    producer.input[1] = _add_const(view, f"{producer.name}/folded_filter", _scaled(producer, weights, scale))
    bias = _add_const(view, f"{target.name}/folded_bias", shift)
    controls = [t for t in target.input if t.startswith("^")]
    name = target.name
    target.Clear()
    target.name, target.op = name, "BiasAdd"
    target.input.extend([input_text(producer.name, 0), bias] + controls)
    target.attr["T"].type = 1
    target.attr["data_format"].s = b"NHWC"
    return 1


def _fold_fused(view, node, protected):
    if node.attr["is_training"].b or node.attr["data_format"].s not in (b"", b"NHWC"):
        return 0
    if "is_training" not in node.attr:  # TF's default is true
        return 0
    # Only output 0 may be read: the others are batch statistics for training.
    for other in view.nodes.values():
        for text in other.input:
            if text.split(":")[0].lstrip("^") == node.name and not (text == node.name or text == f"{node.name}:0"):
                return 0
    producer = _producer(view, node.input[0], node.name, protected)
    if producer is None:
        return 0
    channels = _out_channels(producer, _filter_of(view, producer))
    params = [_per_channel(_const(view, protected, t), channels) for t in node.input[1:5]]
    if any(p is None for p in params):
        return 0
    scale, offset, mean, variance = params
    epsilon = node.attr["epsilon"].f if "epsilon" in node.attr else 1e-4
    s = scale / np.sqrt(variance + np.float64(np.float32(epsilon)))
    return _rewrite(view, node, producer, s, offset - mean * s)


def _fold_mul(view, node, protected):
    """Conv -> Mul(c): the Mul becomes BiasAdd(conv with scaled filter, 0); the following Add folds next.
    Conv -> BiasAdd(b) -> Mul(c) (a Keras convolution with use_bias, as in ResNet50) becomes
    BiasAdd(conv with scaled filter, b * c)."""
    for data, other in ((0, 1), (1, 0)):
        producer, bias = _producer(view, node.input[data], node.name, protected), None
        if producer is None:
            producer, bias = _biased_producer(view, node.input[data], node.name, protected)
        if producer is None:
            continue
        channels = _out_channels(producer, _filter_of(view, producer))
        scale = _per_channel(_const(view, protected, node.input[other]), channels)
        if scale is None or (bias is not None and bias.size != channels):
            continue
        shift = np.zeros(channels) if bias is None else bias.reshape(channels).astype(np.float64) * scale
        # the BiasAdd, now read by nothing, goes at the next pruning
        return _rewrite(view, node, producer, scale, shift)
    return 0


def _biased_producer(view, text, reader, protected):
    """(producer, bias value) when `text` names a float32 BiasAdd(producer, Const) that only
    `reader` reads, with a producer only that BiasAdd reads; else (None, None)."""
    if text.startswith("^") or (":" in text and not text.endswith(":0")):
        return None, None
    first = view.nodes.get(text.split(":")[0])
    if first is None or first.op != "BiasAdd" or first.attr["T"].type != 1 or len(first.input) != 2:
        return None, None
    if first.attr["data_format"].s not in (b"", b"NHWC") or not _sole_reader(view, first.name, reader, protected):
        return None, None
    bias = _const(view, protected, first.input[1])
    producer = _producer(view, first.input[0], first.name, protected)
    if producer is None or bias is None or bias.dtype != np.float32:
        return None, None
    return producer, bias


def _fold_add(view, node, protected):
    """BiasAdd(conv, b) -> Add/Sub/BiasAdd(c): one BiasAdd with b + c (or b - c)."""
    first = view.nodes.get(node.input[0].split(":")[0]) if not node.input[0].startswith("^") else None
    if first is None or first.op != "BiasAdd" or ":" in node.input[0] and not node.input[0].endswith(":0"):
        return 0
    if node.op != "BiasAdd" and node.attr["T"].type != 1:
        return 0
    producer = _producer(view, first.input[0], first.name, protected)
    bias = _const(view, protected, first.input[1])
    if producer is None or bias is None or not _sole_reader(view, first.name, node.name, protected):
        return 0
    channels = _out_channels(producer, _filter_of(view, producer))
    shift = _per_channel(_const(view, protected, node.input[1]), channels)
    if shift is None or bias.size != channels:
        return 0
    total = bias.astype(np.float64) + (-shift if node.op == "Sub" else shift)
    # `first` is now read by nothing and goes at the next pruning.
    name, controls = node.name, [t for t in node.input if t.startswith("^")]
    node.Clear()
    node.name, node.op = name, "BiasAdd"
    node.input.extend([input_text(producer.name, 0), _add_const(view, f"{name}/folded_bias", total)] + controls)
    node.attr["T"].type = 1
    node.attr["data_format"].s = b"NHWC"
    return 1
