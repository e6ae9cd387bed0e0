"""Conv/MatMul + BiasAdd (+ activation) fusion into TensorFlow's own remapper ops, as grappler's
remapper does: Conv2D -> _FusedConv2D, DepthwiseConv2dNative -> _FusedDepthwiseConv2dNative,
MatMul -> _FusedMatMul, with fused_ops [BiasAdd] or [BiasAdd, activation].

Only what TensorFlow 2.21's CPU kernels run is fused, so the written GraphDef still runs in
TensorFlow: depthwise convolutions only in the copy graphdef's Session runs (TF's
_FusedDepthwiseConv2dNative is a oneDNN kernel alone; with TF_ENABLE_ONEDNN_OPTS=0 a NoOp stands in
for it and the run fails with "Missing 0-th output"), and otherwise float32, NHWC, a Const filter
and a Const 1-D bias of the output's channels, the activations graphdef/ops/fused.py lists per
op, and for the depthwise op SAME or VALID padding (its op definition has no EXPLICIT). The fused
node takes the name of the chain's last node, so a fetch of it still works; the nodes before it
must be read by the next node alone and be neither fed nor fetched (an activation whose BiasAdd
is also fetched is left as it is).
"""

from graphdef.optimize.graph_view import parse_input
from graphdef.ops.fused import ACTIVATIONS

FUSED = {"Conv2D": "_FusedConv2D", "DepthwiseConv2dNative": "_FusedDepthwiseConv2dNative", "MatMul": "_FusedMatMul"}
FUSED_FOR_TENSORFLOW = {op: fused for op, fused in FUSED.items() if op != "DepthwiseConv2dNative"}
WINDOW_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")
DT_FLOAT = 1


def fuse_bias_activations(view, outputs, protected):
    return fuse_chains(view, protected, FUSED_FOR_TENSORFLOW, _chain, _rewrite)


def fuse_bias_activations_for_session(view, outputs, protected):
    return fuse_chains(view, protected, FUSED, _chain, _rewrite)


def fuse_chains(view, protected, op_types, find, rewrite):
    """For each node of `op_types`, in file order: `find(view, users, node, protected)` gives the
    rest of a chain to fuse (or None), and `rewrite(view, node, *rest)` fuses it. The count fused."""
    users = view.consumers()
    fused = 0
    for name in list(view.nodes):
        node = view.nodes.get(name)
        if node is None or node.op not in op_types:
            continue
        chain = find(view, users, node, protected)
        if chain is None:
            continue
        rewrite(view, node, *chain)
        users = view.consumers()
        fused += 1
    return fused


fuse_bias_activations.name = fuse_bias_activations_for_session.name = "bias and activation fusion"


def _sole_data_reader(view, users, name, protected):
    """The node that alone reads `name`'s output 0 (and nothing else of it, not even a control
    edge), or None."""
    if name in protected:
        return None
    uses = users.get(name, [])
    if len(uses) != 1 or uses[0][2] != 0:
        return None
    return view.nodes[uses[0][0]]


def _const_shape(view, text):
    """The shape of the float32 Const that input `text` reads, else None (its value, perhaps
    megabytes of weights, is not read)."""
    name, index = parse_input(text)
    node = view.nodes.get(name)
    if index != 0 or node is None or node.op != "Const" or node.attr["value"].tensor.dtype != DT_FLOAT:
        return None
    shape = node.attr["value"].tensor.tensor_shape
    return None if shape.unknown_rank else tuple(d.size for d in shape.dim)


def _chain(view, users, product, protected):
    """(bias_add, activation or None) when `product` and what follows it can fuse, else None."""
    if product.attr["T"].type != DT_FLOAT or len(product.input) < 2 or product.input[0].startswith("^"):
        return None
    if product.op != "MatMul" and product.attr["data_format"].s not in (b"", b"NHWC"):
        return None
    if product.op == "DepthwiseConv2dNative" and product.attr["padding"].s == b"EXPLICIT":
        return None  # TF's _FusedDepthwiseConv2dNative has no EXPLICIT padding
    weights = _const_shape(view, product.input[1])
    if weights is None or len(weights) != (2 if product.op == "MatMul" else 4):
        return None
    if product.op == "MatMul":
        channels = weights[0 if product.attr["transpose_b"].b else 1]
    elif product.op == "DepthwiseConv2dNative":
        channels = weights[2] * weights[3]
    else:
        channels = weights[3]
    bias_add = _sole_data_reader(view, users, product.name, protected)
    if bias_add is None or bias_add.op != "BiasAdd" or len(bias_add.input) < 2:
        return None
    if parse_input(bias_add.input[0]) != (product.name, 0) or bias_add.attr["data_format"].s not in (b"", b"NHWC"):
        return None
    if _const_shape(view, bias_add.input[1]) != (channels,):
        return None
    return bias_add, fusable_activation(view, users, bias_add.name, protected, FUSED[product.op])


def fusable_activation(view, users, name, protected, fused_op):
    """The float32 activation `fused_op` can take that alone reads `name`'s output, else None."""
    activation = _sole_data_reader(view, users, name, protected)
    if activation is None or activation.op not in ACTIVATIONS[fused_op] or activation.attr["T"].type != DT_FLOAT:
        return None
    return activation if len([t for t in activation.input if not t.startswith("^")]) == 1 else None


def _rewrite(view, product, bias_add, activation):
    """The last node of the chain becomes the fused node (its name kept); the others go."""
    last = activation if activation is not None else bias_add
    controls = []
    for node in (product, bias_add, activation):
        if node is not None:
            controls += [t for t in node.input if t.startswith("^") and t not in controls]
    data = [product.input[0], product.input[1], bias_add.input[1]]
    attrs = {k: product.attr[k] for k in (("transpose_a", "transpose_b") if product.op == "MatMul" else WINDOW_ATTRS)
             if k in product.attr}
    if product.op == "DepthwiseConv2dNative":
        attrs.pop("explicit_paddings", None)  # not an attr of TF's fused depthwise op (nor needed: no EXPLICIT)
    alpha = 0.2  # LeakyRelu's default alpha, and the fused op's
    if activation is not None and activation.op == "LeakyRelu" and "alpha" in activation.attr:
        alpha = activation.attr["alpha"].f
    fused_ops = [b"BiasAdd"] + ([activation.op.encode()] if activation is not None else [])
    name, op_type = last.name, FUSED[product.op]
    last.Clear()
    last.name, last.op = name, op_type
    last.input.extend(data + controls)
    for key, value in attrs.items():
        last.attr[key].CopyFrom(value)
    last.attr["T"].type = DT_FLOAT
    last.attr["num_args"].i = 1
    if op_type == "_FusedConv2D":
        # TF 2.21's _FusedConv2D types its args as a list (TArgs); graphdef reads the same args as num_args*T
        last.attr["TArgs"].list.type.append(DT_FLOAT)
    last.attr["fused_ops"].list.s.extend(fused_ops)
    last.attr["epsilon"].f = 0.0001
    last.attr["leakyrelu_alpha"].f = alpha
    removed = [node.name for node in (product, bias_add) if node is not last]
    for old in removed:
        del view.nodes[old]
    view.recolocate({old: name for old in removed})
