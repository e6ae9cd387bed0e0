"""A residual connection into the convolution before it, for graphdef's own runtimes only:
_FusedConv2D [BiasAdd] -> AddV2 (-> Relu, Relu6, Elu or LeakyRelu) becomes one _FusedConv2D with
fused_ops [BiasAdd, Add] (+ the activation) and the other addend as its second arg, as graphrun-cc
fuses it at load (its fuse_conv_bias_activation pass). ResNet50's 16 blocks each end this way:
their Add and Relu were two more single-threaded passes over the block's output.

TensorFlow's _FusedConv2D kernel runs no Add, so only the Session's copy gets this
(SESSION_FINAL_PASSES), after bias and activation fusion has made the _FusedConv2D. The kernel
adds as AddV2 does (broadcasting included), so the fused node gives the unfused chain's bits.
"""

from graphdef.optimize.graph_view import parse_input
from graphdef.optimize.passes.fusion import DT_FLOAT, _sole_data_reader, fusable_activation, fuse_chains

ADDS = ("AddV2", "Add")


def fuse_residual_adds(view, outputs, protected):
    return fuse_chains(view, protected, ADDS, _residual_chain, _rewrite)


fuse_residual_adds.name = "residual fusion"


def _residual_chain(view, users, add, protected):
    """(the _FusedConv2D, the residual's input text, the activation or None), else None."""
    data = [t for t in add.input if not t.startswith("^")]
    if add.attr["T"].type != DT_FLOAT or len(data) != 2:
        return None
    for position in (0, 1):
        conv_name, index = parse_input(data[position])
        conv = view.nodes.get(conv_name)
        if (index != 0 or conv is None or conv.op != "_FusedConv2D" or conv.attr["num_args"].i != 1
                or list(conv.attr["fused_ops"].list.s) != [b"BiasAdd"]):
            continue
        if _sole_data_reader(view, users, conv.name, protected) is not add:
            continue
        return conv, data[1 - position], fusable_activation(view, users, add.name, protected, "_FusedConv2D")
    return None


def _rewrite(view, add, conv, residual, activation):
    """The last node (the activation, else the Add) becomes the fused node, its name kept."""
    last = activation if activation is not None else add
    controls = []
    for node in (conv, add, activation):
        if node is not None:
            controls += [t for t in node.input if t.startswith("^") and t not in controls]
    data = [t for t in conv.input if not t.startswith("^")] + [residual]
    attrs = {key: value for key, value in conv.attr.items()}
    name, activation_op = last.name, activation.op if activation is not None else None
    alpha = conv.attr["leakyrelu_alpha"].f
    if activation is not None and activation.op == "LeakyRelu" and "alpha" in activation.attr:
        alpha = activation.attr["alpha"].f
    last.Clear()
    last.name, last.op = name, "_FusedConv2D"
    last.input.extend(data + controls)
    for key, value in attrs.items():
        last.attr[key].CopyFrom(value)
    last.attr["num_args"].i = 2
    del last.attr["TArgs"].list.type[:]
    last.attr["TArgs"].list.type.extend([DT_FLOAT, DT_FLOAT])
    last.attr["fused_ops"].list.s.append(b"Add")
    if activation_op is not None:
        last.attr["fused_ops"].list.s.append(activation_op.encode())
    last.attr["leakyrelu_alpha"].f = alpha
    removed = [node.name for node in (conv, add) if node is not last]
    for old in removed:
        del view.nodes[old]
    view.recolocate({old: name for old in removed})
