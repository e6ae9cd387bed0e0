"""Function calls replaced by their bodies before the passes, as grappler's function optimizer
inlines them.

Keras 3 wraps each grouped convolution in a jit-compiled function, so a frozen ConvNeXt keeps a
library of one-Conv2D functions and a StatefulPartitionedCall for each depthwise layer. The passes
do not look into function bodies, so with a library in the graph they left it as it was, and each
call ran its body as a graph of its own.

Inlining is all or nothing: every node that names a function must be a PartitionedCall or
StatefulPartitionedCall whose body has only ops the registry knows, none of which keeps state,
calls a function (If and While name theirs); else the graph stays as it is. A body node takes the call's
name as a prefix ("call/convolution"). Where the call's name must stay (fetched, fed, read as a
control input, or read by nothing, as a default output is), an IdentityN of that name hands on
the results. Elsewhere the readers read the body's results themselves, so the passes meet
Conv2D -> BiasAdd as in any other graph.
"""

from graphdef._proto import graph_pb2
from graphdef.ops import REGISTRY
from graphdef.ops.registry import STATE_PARAMS
from graphdef.wire.functions import FunctionError, plain_body, signature_values

CALL_OPS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})


class _NotInlinable(Exception):
    pass


def inline_calls(graph_def, protected=()):
    """(a copy of `graph_def` with every call inlined and no library, the number of calls inlined),
    or (`graph_def` itself, 0) when it has no library or a function use that cannot be inlined."""
    if not graph_def.library.function:
        return graph_def, 0
    try:
        return _inlined(graph_def, set(protected)), sum(n.op in CALL_OPS for n in graph_def.node)
    except _NotInlinable:
        return graph_def, 0


def inlined_nodes(graph_def):
    """The nodes inline_calls would write, but for the IdentityNs that keep calls' names: the graph's
    own and each call's body, read in place rather than copied with their weights (at load, where
    only their ops matter). None when inline_calls would keep the graph as it is."""
    if not graph_def.library.function:
        return None
    try:
        calls = _calls(graph_def)
    except _NotInlinable:
        return None
    own = [node for node in graph_def.node if node.op not in CALL_OPS]
    return own + [node for _, (body, args, _, _) in calls.values() for node in body.node if node.name not in args]


def _calls(graph_def):
    """call name -> (the call, its _body), every call checked inlinable."""
    defs = {f.signature.name: f for f in graph_def.library.function}
    names = {n.name for n in graph_def.node}
    calls = {}
    for node in graph_def.node:
        if node.op in CALL_OPS:
            calls[node.name] = (node, _body(node, defs, names))
        elif _names_a_function(node):
            raise _NotInlinable
    return calls


def _inlined(graph_def, protected):
    calls = _calls(graph_def)
    # a call whose name must stay: protected, read by a control input, or read by nothing
    data_read, control_read = set(), set()
    for node in graph_def.node:
        for text in node.input:
            (control_read if text.startswith("^") else data_read).add(_node_of(text))
    named = {c for c in calls if c in protected or c in control_read or c not in data_read}

    resolved = {}

    def resolve(text, depth=0):
        """A data input with every unnamed call's output replaced by the tensor it returns."""
        node, index = _node_of(text), _index_of(text)
        if node not in calls or node in named:
            return text
        if depth > len(calls):
            raise _NotInlinable  # calls reading each other in a cycle: the importer reports it
        key = (node, index)
        if key not in resolved:
            call, (_, args, outputs, _) = calls[node]
            if index >= len(outputs):
                raise _NotInlinable
            resolved[key] = _body_tensor(outputs[index], call, args, resolve, depth)
        return resolved[key]

    out = graph_pb2.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    for node in graph_def.node:
        if node.op not in CALL_OPS:
            copy = out.node.add()
            copy.CopyFrom(node)
            copy.input[:] = [t if t.startswith("^") else resolve(t) for t in node.input]
            continue
        body, args, outputs, control = calls[node.name][1]
        prefix = node.name + "/"
        call_controls = [t for t in node.input if t.startswith("^")]
        for body_node in body.node:
            if body_node.name in args:
                continue
            copy = out.node.add()
            copy.CopyFrom(body_node)
            copy.name = prefix + body_node.name
            inputs = []
            for text in body_node.input:
                if text.startswith("^"):
                    target = text[1:]
                    inputs.append("^" + (_node_of(args[target]) if target in args else prefix + target))
                else:
                    inputs.append(_body_tensor(text, node, args, resolve, 0))
            copy.input[:] = inputs + call_controls
        if node.name in named:
            identity = out.node.add(name=node.name, op="IdentityN", device=node.device)
            identity.input.extend(_body_tensor(t, node, args, resolve, 0) for t in outputs)
            identity.input.extend("^" + prefix + target for target in control)
            identity.attr["T"].CopyFrom(node.attr["Tout"])
    return out


def _body(call, defs, names):
    """(the plain body, its argument placeholder -> the call's input, result tensors, effect nodes)
    for `call`, checked inlinable."""
    # membership first: reading a missing key of a proto map would add it to the caller's graph
    if "f" not in call.attr or "Tout" not in call.attr or not call.attr["f"].HasField("func"):
        raise _NotInlinable
    try:
        fdef = defs.get(call.attr["f"].func.name)
        if fdef is None:
            raise _NotInlinable
        body, arg_nodes, outputs, control = plain_body(fdef, signature_values(fdef, call.attr["f"].func.attr))
    except (FunctionError, TypeError, ValueError, KeyError):
        raise _NotInlinable from None
    placeholders = [name for arg in fdef.signature.input_arg for name in arg_nodes[arg.name]]
    data_inputs = [t for t in call.input if not t.startswith("^")]
    if (len(placeholders) != len(data_inputs) or not outputs
            or len(outputs) != len(call.attr["Tout"].list.type)):
        raise _NotInlinable
    for node in body.node:
        if node.name in placeholders:
            continue
        opdef = REGISTRY.get(node.op)
        if (opdef is None or node.op in CALL_OPS or opdef.stateful or opdef.ref_inputs
                or STATE_PARAMS.intersection(opdef.kernel_params) or _names_a_function(node)
                or f"{call.name}/{node.name}" in names):
            raise _NotInlinable
    return body, dict(zip(placeholders, data_inputs)), outputs, control


def _body_tensor(text, call, args, resolve, depth):
    """A body's "node:k" or argument as a tensor of the inlined graph."""
    if text in args:
        return resolve(args[text], depth + 1)
    return f"{call.name}/{text}"


def _names_a_function(node):
    return any(value.HasField("func") or len(value.list.func) for value in node.attr.values())


def _node_of(text):
    return text.lstrip("^").partition(":")[0]


def _index_of(text):
    _, _, index = text.partition(":")
    return int(index) if index.isdigit() else 0
