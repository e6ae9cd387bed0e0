"""Pad folding: a zero Pad in front of a convolution becomes the convolution's own padding.

Keras writes ZeroPadding2D then a VALID convolution (ResNet's stem, MobileNet's strided
depthwise layers); the convolution reads padding as zeros anyway, so the Pad's spatial
amounts move into padding="EXPLICIT" with explicit_paddings [0, 0, top, bottom, left, right,
0, 0] (NHWC), TensorFlow's own form, and the Pad goes. Only when the Pad's amounts and value
are constants, it pads zeros (Pad, or PadV2 with a 0 value), spatially only, and its result
feeds that convolution's input alone. A SAME convolution folds too when its implicit pads do
not depend on the input's size (stride 1: k_eff - 1 split with the odd one at the bottom/right,
TF's rule); they are added to the Pad's. A depthwise convolution keeps its Pad in a written
graph: TF's _FusedDepthwiseConv2dNative has no EXPLICIT padding, and TF 2.21 with its oneDNN
kernels on aborts the process (a failed check in tensor_format.h) on a DepthwiseConv2dNative with
EXPLICIT padding that its remapper fuses with the BiasAdd after it. fold_pads_for_session, for the
copy only graphdef's Session runs (graphdef/optimize/at_load.py), folds those Pads too: graphdef's
kernels take EXPLICIT padding, and pad into a reused buffer where the Pad op allocates a new tensor.
"""

import numpy as np

from graphdef.optimize.graph_view import parse_input
from graphdef.wire.serialize import ndarray_from_proto

CONVOLUTIONS = frozenset({"Conv2D", "_FusedConv2D"})
SESSION_CONVOLUTIONS = CONVOLUTIONS | {"DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative"}
PADS = frozenset({"Pad", "PadV2"})


def fold_pads(view, outputs, protected, convolutions=CONVOLUTIONS):
    users = view.consumers()
    folded = 0
    for name in list(view.nodes):
        conv = view.nodes.get(name)
        if conv is None or conv.op not in convolutions or not conv.input or conv.input[0].startswith("^"):
            continue
        pad_name, index = parse_input(conv.input[0])
        pad = view.nodes.get(pad_name)
        if pad is None or pad.op not in PADS or index != 0 or pad_name in protected:
            continue
        if [(user, k) for user, k, _ in users[pad_name]] != [(name, 0)]:
            continue  # something else reads the padded tensor (or waits on the Pad)
        amounts = _spatial_pads(view, pad)
        implicit = _implicit_pads(view, conv)
        if amounts is None or implicit is None:
            continue
        explicit = [0, 0] + [int(a + b) for a, b in zip(amounts, implicit)] + [0, 0]
        conv.input[0] = pad.input[0]
        conv.input.extend(t for t in pad.input if t.startswith("^") and t not in conv.input)
        conv.attr["padding"].s = b"EXPLICIT"
        del conv.attr["explicit_paddings"].list.i[:]
        conv.attr["explicit_paddings"].list.i.extend(explicit)
        del view.nodes[pad_name]
        view.recolocate({pad_name: name})
        users = view.consumers()
        folded += 1
    return folded


fold_pads.name = "pad folding"


def fold_pads_for_session(view, outputs, protected):
    return fold_pads(view, outputs, protected, SESSION_CONVOLUTIONS)


fold_pads_for_session.name = fold_pads.name


def _const(view, text):
    name, index = parse_input(text)
    node = view.nodes.get(name)
    if index != 0 or node is None or node.op != "Const":
        return None
    return ndarray_from_proto(node.attr["value"].tensor)


def _spatial_pads(view, pad):
    """[top, bottom, left, right] of a zero, spatial-only, constant Pad of a 4-D tensor, else None."""
    data = [t for t in pad.input if not t.startswith("^")]
    if len(data) != (3 if pad.op == "PadV2" else 2):
        return None
    amounts = _const(view, data[1])
    if amounts is None or amounts.dtype.kind not in "iu" or amounts.shape != (4, 2) or (amounts < 0).any():
        return None
    if amounts[0].any() or amounts[3].any():
        return None  # batch or channel padding changes the tensor the convolution sees
    if pad.op == "PadV2":
        value = _const(view, data[2])
        if value is None or value.size != 1 or value.reshape(()) != 0 or np.isnan(value).any():
            return None
    return [int(v) for v in amounts[1:3].reshape(-1)]


def _implicit_pads(view, conv):
    """[top, bottom, left, right] the convolution pads by itself, or None when unknown here."""
    if conv.attr["data_format"].s not in (b"", b"NHWC"):
        return None
    padding = conv.attr["padding"].s
    if padding == b"VALID":
        return [0, 0, 0, 0]
    if padding == b"EXPLICIT":
        given = list(conv.attr["explicit_paddings"].list.i)
        return given[2:6] if len(given) == 8 else None
    if padding != b"SAME":
        return None
    strides = list(conv.attr["strides"].list.i)
    dilations = list(conv.attr["dilations"].list.i) or [1, 1, 1, 1]
    weights = _const(view, conv.input[1]) if len(conv.input) > 1 else None
    if weights is None or weights.ndim != 4 or len(strides) != 4 or strides[1:3] != [1, 1] or len(dilations) != 4:
        return None  # with a stride, SAME's pads depend on the input's size
    pads = []
    for k, d in ((weights.shape[0], dilations[1]), (weights.shape[1], dilations[2])):
        total = max((k - 1) * d, 0)
        pads += [total // 2, total - total // 2]
    return pads
