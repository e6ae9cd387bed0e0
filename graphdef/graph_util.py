"""tf.compat.v1.graph_util: freeze a trained graph into a self-contained inference GraphDef.

Freezing keeps only what the outputs need (their ancestors through data and control
inputs), so gradient, optimizer, initializer and saver nodes fall away, and turns every
remaining VariableV2 into a Const of the same name holding the session's current value.
The result is an ordinary GraphDef that graphrun, the C++ runner and TensorFlow run with
no checkpoint beside it.
"""

from graphdef.framework import dtypes
from graphdef._proto import graph_pb2
from graphdef.framework.errors import FailedPreconditionError
from graphdef.framework.graph import Tensor
from graphdef.ops import REGISTRY
from graphdef.wire.serialize import ndarray_to_proto

VARIABLE_OPS = ("VariableV2",)
# Ops that pass their first input through unchanged at inference time (TF's list).
_PASS_THROUGH = ("Identity", "StopGradient", "CheckNumerics")


def _node_name(text):
    """The node an input or output string names: "^ctrl" -> "ctrl", "op:1" -> "op"."""
    text = text[1:] if text.startswith("^") else text
    name, sep, index = text.rpartition(":")
    return name if sep and index.isdigit() else text


def _names(output_node_names, where):
    if isinstance(output_node_names, str):
        raise TypeError(f"{where}: output_node_names must be a list of names, not the string "
                        f"{output_node_names!r}")
    return list(dict.fromkeys(_node_name(n) for n in output_node_names))


def _ancestors(by_name, outputs):
    """The names of `outputs` and every node they reach through data and control inputs."""
    keep, pending = set(), list(outputs)
    while pending:
        name = pending.pop()
        if name in keep:
            continue
        keep.add(name)
        for text in by_name[name].input:
            source = _node_name(text)
            if source not in by_name:
                raise ValueError(f"node '{name}': input '{text}' names no node in the graph")
            pending.append(source)
    return keep


def extract_sub_graph(graph_def, dest_nodes):
    """tf.graph_util.extract_sub_graph: the nodes `dest_nodes` need, in the original order."""
    outputs = _names(dest_nodes, "extract_sub_graph")
    by_name = {node.name: node for node in graph_def.node}
    unknown = [n for n in outputs if n not in by_name]
    if unknown:
        raise ValueError(f"extract_sub_graph: no node named {', '.join(repr(n) for n in unknown)} in the graph")
    keep = _ancestors(by_name, outputs)
    result = graph_pb2.GraphDef()
    result.versions.CopyFrom(graph_def.versions)
    result.node.extend(node for node in graph_def.node if node.name in keep)
    return result


def _chosen(name, allow, deny):
    return (allow is None or name in allow) and (deny is None or name not in deny)


def _data_inputs(node):
    return [text for text in node.input if not text.startswith("^")]


def _refuse_writers(graph_def, converted):
    """A kept node that writes a variable (Assign, an Apply op) cannot write a Const: say which."""
    writers = []
    for node in graph_def.node:
        opdef = REGISTRY.get(node.op)
        if opdef is None:
            continue
        inputs = _data_inputs(node)
        for i in opdef.ref_inputs:
            if i < len(inputs) and _node_name(inputs[i]) in converted:
                writers.append(f"'{node.name}' ({node.op}) writes '{_node_name(inputs[i])}'")
    if writers:
        raise ValueError("convert_variables_to_constants: the outputs depend on nodes that update "
                         f"variables, which a frozen graph cannot do: {'; '.join(writers)}; fetch an "
                         "output that does not depend on a training or assignment step")


def _session_values(sess, names):
    """{name: current value} of each variable; one error lists every one without a value."""
    state = sess._variables
    missing = [n for n in names if n not in state]
    if missing:
        raise FailedPreconditionError(
            f"convert_variables_to_constants: variables {', '.join(repr(n) for n in missing)} have no "
            "value in the session; run their initializer (or restore a checkpoint) first")
    return {n: state[n] for n in names}


def _to_const(node, value):
    """Rewrites a VariableV2 NodeDef in place as a Const with `value`, as graphdef.wire.serialize writes one."""
    dtype = node.attr["dtype"].type
    if dtypes.as_dtype(value.dtype).enum != dtype:
        raise ValueError(f"convert_variables_to_constants: variable '{node.name}' is "
                         f"{dtypes.as_dtype(dtype).name} but the session holds {value.dtype} for it")
    name, device = node.name, node.device
    node.Clear()
    node.name, node.op, node.device = name, "Const", device
    node.attr["dtype"].type = dtype
    ndarray_to_proto(value, node.attr["value"].tensor)


def convert_variables_to_constants(sess, input_graph_def, output_node_names, variable_names_whitelist=None,
                                   variable_names_blacklist=None):
    """A new GraphDef with only the ancestors of `output_node_names`, variables made Consts.

    Each VariableV2 kept (and allowed by the white/black lists, as in TF1) becomes a Const of
    the same name holding its value in `sess`; every other node is copied unchanged, in the
    original order.
    """
    pruned = extract_sub_graph(input_graph_def, output_node_names)
    allow = None if variable_names_whitelist is None else set(variable_names_whitelist)
    deny = None if variable_names_blacklist is None else set(variable_names_blacklist)
    names = [n.name for n in pruned.node if n.op in VARIABLE_OPS and _chosen(n.name, allow, deny)]
    _refuse_writers(pruned, set(names))
    values = _session_values(sess, names)
    for node in pruned.node:
        if node.name in values:
            _to_const(node, values[node.name])
    return pruned


def _output_node(graph, output):
    """The node name of a Tensor, Operation, Variable or name in `graph`."""
    element = graph.as_graph_element(output)
    return element.op.name if isinstance(element, Tensor) else element.name


def freeze(sess, outputs, graph=None):
    """The frozen GraphDef of `graph` (the session's) for `outputs`: Tensors, Operations, Variables or names."""
    graph = graph if graph is not None else sess.graph
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    names = [_output_node(graph, o) for o in outputs]
    return convert_variables_to_constants(sess, graph.as_graph_def(), names)


def remove_training_nodes(input_graph, protected_nodes=None):
    """tf.graph_util.remove_training_nodes: splices out Identity, StopGradient and CheckNumerics nodes.

    As in TensorFlow, a node is kept when it is protected, when another node names it as a
    control input or colocates with it, or when it has control inputs of its own (splicing
    would drop them). Protect your output nodes: an unprotected Identity output is removed
    like any other. Unlike TensorFlow, a CheckNumerics node is spliced (its consumers read
    its input) rather than cut out with its edges, and `versions` is kept.
    """
    protected = set(protected_nodes or ())
    keep = protected | _control_targets(input_graph) | _colocated(input_graph)
    splice = {node.name: node.input[0] for node in input_graph.node
              if node.op in _PASS_THROUGH and node.input and node.name not in keep
              and not any(t.startswith("^") for t in node.input)}
    result = graph_pb2.GraphDef()
    result.versions.CopyFrom(input_graph.versions)
    for node in input_graph.node:
        if node.name in splice:
            continue
        kept = result.node.add()
        kept.CopyFrom(node)
        del kept.input[:]
        kept.input.extend(_resolve_splice(text, splice) for text in node.input)
    return result


def _control_targets(graph_def):
    return {_node_name(t) for n in graph_def.node for t in n.input if t.startswith("^")}


def _colocated(graph_def):
    """Nodes that others ask to be placed with (`_class: ["loc:@name"]`); TF keeps them."""
    names = set()
    for node in graph_def.node:
        if "_class" in node.attr:
            for entry in node.attr["_class"].list.s:
                text = entry.decode("utf-8", errors="replace")
                if text.startswith("loc:@"):
                    names.add(text[len("loc:@"):])
    return names


def _resolve_splice(text, splice):
    """Follows a chain of spliced pass-through nodes back to the tensor that feeds them."""
    seen = set()
    while not text.startswith("^") and _node_name(text) in splice:  # pass-throughs have one output
        name = _node_name(text)
        if name in seen:
            raise ValueError(f"remove_training_nodes: pass-through nodes form a cycle at '{name}'")
        seen.add(name)
        text = splice[name]
    return text
