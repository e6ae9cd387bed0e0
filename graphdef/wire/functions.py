"""GraphDef.library: FunctionDefs turned into graphs a runtime can run.

A FunctionDef body names its inputs "arg" (an argument), "node:out_arg:i" (the i-th tensor of
a node's output arg `out_arg`) or "^node". Instantiating a function writes it out as a plain
GraphDef, one Placeholder per argument and every input in "node:k" form (k counts through the
op's output args, whose names and lengths the registry knows), imports that into a Graph of its
own, and records which tensors the function returns and which nodes it must run. The library
proto itself is kept verbatim, so a file read and written again keeps its library byte for byte.
"""

from graphdef._proto import graph_pb2
from graphdef.framework import dtypes
from graphdef.framework.graph import Graph
from graphdef.ops import REGISTRY
from graphdef.ops import unsupported as unsupported_ops
from graphdef.ops.functional import CALLS, func_name


class FunctionError(ValueError):
    """A function of the library that cannot be instantiated or called as a node asks."""


class FunctionBody:
    """One instantiated function: its graph, argument placeholders, results and effect nodes."""

    def __init__(self, name, graph, args, outputs, control):
        self.name, self.graph, self.args, self.outputs, self.control = name, graph, args, outputs, control

    @property
    def fetches(self):
        return list(self.outputs) + list(self.control)


class FunctionLibrary:
    """The FunctionDefLibrary of a graph, with each function instantiated once, when first needed."""

    def __init__(self, proto, import_nodes):
        # the first library is kept as it is (unknown fields and order included), so a file
        # read and written again keeps it byte for byte; later ones are merged into it
        self.proto = graph_pb2.FunctionDefLibrary()
        self.defs = {}
        self._bodies = {}
        self._import_nodes = import_nodes  # serialize.import_nodes: the wire layer's importer
        self.proto.CopyFrom(proto)
        for fdef in self.proto.function:
            self._add(fdef)

    def _add(self, fdef):
        name = fdef.signature.name
        if not name:
            raise FunctionError("the library holds a function without a name")
        if name in self.defs:
            raise FunctionError(f"function '{name}' is defined twice")
        self.defs[name] = fdef

    def merge(self, proto):
        for fdef in proto.function:
            known = self.defs.get(fdef.signature.name)
            if known is not None:
                if known != fdef:
                    raise FunctionError(f"function '{fdef.signature.name}' is defined twice, differently")
                continue
            self.proto.function.add().CopyFrom(fdef)
            self._add(self.proto.function[-1])
        for grad in proto.gradient:
            if grad not in self.proto.gradient:
                self.proto.gradient.add().CopyFrom(grad)
        for grad in proto.registered_gradients:
            if grad not in self.proto.registered_gradients:
                self.proto.registered_gradients.add().CopyFrom(grad)

    def body(self, name):
        """The instantiated function `name`; FunctionError when it is missing or malformed."""
        found = self._bodies.get(name)
        if found is None:
            fdef = self.defs.get(name)
            if fdef is None:
                raise FunctionError(f"the graph's library has no function '{name}'")
            try:
                found = _instantiate(self, fdef)
            except FunctionError:
                raise
            except (TypeError, ValueError) as e:
                raise FunctionError(f"function '{name}': {e}") from None
            self._bodies[name] = found
        return found


def attach_library(graph, proto, import_nodes):
    """Gives `graph` the functions of `proto` (a FunctionDefLibrary), beside any it has."""
    if graph.functions is None:
        graph.functions = FunctionLibrary(proto, import_nodes)
    else:
        graph.functions.merge(proto)


def called_functions(op):
    """(attr, function name) for each function a call op names, in CALLS order."""
    out = []
    for attr, _, _ in CALLS.get(op.type, ()):
        try:
            out.append((attr, func_name(op.attrs[attr])))
        except (KeyError, ValueError):
            raise FunctionError(f"node '{op.name}' ({op.type}): attr '{attr}' must name a function of the "
                                "graph's library") from None
    return out


def check_calls(graph, ops):
    """Instantiates every function the `ops` call, and the functions those call, checking each call
    against its function's signature; iterative, so a function that calls itself is no problem."""
    pending = list(ops)
    seen = set()
    while pending:
        op = pending.pop()
        for (attr, name), (_, ins_attr, outs_attr) in zip(called_functions(op), CALLS.get(op.type, ())):
            if graph.functions is None:
                raise FunctionError(f"node '{op.name}' ({op.type}): attr '{attr}' calls function '{name}', "
                                    "but the graph has no function library")
            try:
                body = graph.functions.body(name)
            except FunctionError as e:
                raise FunctionError(f"node '{op.name}' ({op.type}): attr '{attr}': {e}") from None
            _check_signature(op, attr, body, op.attrs[ins_attr], op.attrs[outs_attr] if outs_attr else None)
            if name not in seen:
                seen.add(name)
                pending.extend(o for o in body.graph.get_operations() if o.type in CALLS)


def _check_signature(op, attr, body, in_dtypes, out_dtypes):
    where = f"node '{op.name}' ({op.type}): attr '{attr}' calls '{body.name}'"
    got_in = tuple(t.dtype for t in body.args)
    if tuple(in_dtypes) != got_in:
        raise FunctionError(f"{where}, which takes ({_names(got_in)}) but the node passes ({_names(in_dtypes)})")
    got_out = tuple(t.dtype for t in body.outputs)
    if out_dtypes is None:
        if len(got_out) != 1:
            raise FunctionError(f"{where}, a condition, which must return one tensor but returns {len(got_out)}")
    elif tuple(out_dtypes) != got_out:
        raise FunctionError(f"{where}, which returns ({_names(got_out)}) but the node expects "
                            f"({_names(out_dtypes)})")


def _names(types):
    return ", ".join(t.name for t in types)


# -- instantiation ------------------------------------------------------------------------------

def _instantiate(library, fdef):
    sig = fdef.signature
    graph_def = graph_pb2.GraphDef()
    for i, arg in enumerate(sig.input_arg):
        node = graph_def.node.add(name=arg.name, op="Placeholder")
        node.attr["dtype"].type = _arg_dtype(fdef, arg, "argument").enum
        shapes = fdef.arg_attr[i].attr.get("_output_shapes") if i in fdef.arg_attr else None
        if shapes is not None and len(shapes.list.shape) == 1:
            node.attr["shape"].shape.CopyFrom(shapes.list.shape[0])
        else:
            node.attr["shape"].shape.unknown_rank = True
    offsets = {node.name: _output_offsets(node) for node in fdef.node_def}
    for body_node in fdef.node_def:
        node = graph_def.node.add()
        node.CopyFrom(body_node)
        del node.input[:]
        node.input.extend(_plain_input(text, offsets, f"node '{body_node.name}'") for text in body_node.input)
    graph = Graph()
    graph.functions = library
    created = library._import_nodes(graph_def, graph)
    # A call runs the whole body, so what graphdef cannot run there is refused now, by name.
    cannot = [op for op in created.values() if unsupported_ops.is_unsupported(op)]
    if cannot:
        raise FunctionError(f"function '{sig.name}': {unsupported_ops.describe(cannot)}")
    outputs = []
    for arg in sig.output_arg:
        _arg_dtype(fdef, arg, "result")
        if arg.name not in fdef.ret:
            raise FunctionError(f"function '{sig.name}': result '{arg.name}' has no entry in ret")
        name, index = _split(_plain_input(fdef.ret[arg.name], offsets, f"result '{arg.name}'"))
        outputs.append(created[name].outputs[index])
    control = []
    for name in sig.control_output:
        target = fdef.control_ret.get(name)
        if target not in created:
            raise FunctionError(f"function '{sig.name}': control output '{name}' names no node of the body")
        control.append(created[target])
    args = [created[arg.name].outputs[0] for arg in sig.input_arg]
    return FunctionBody(sig.name, graph, args, outputs, control)


def _arg_dtype(fdef, arg, role):
    if arg.number_attr or arg.type_list_attr:
        raise FunctionError(f"{role} '{arg.name}' is a list ({arg.number_attr or arg.type_list_attr}); "
                            "only single-tensor arguments and results are supported")
    enum = arg.type
    if arg.type_attr:
        value = fdef.attr.get(arg.type_attr)
        if value is None or value.WhichOneof("value") != "type":
            raise FunctionError(f"{role} '{arg.name}' takes its dtype from attr '{arg.type_attr}', "
                                "which the function does not set")
        enum = value.type
    try:
        return dtypes.as_dtype(enum)
    except TypeError:
        raise FunctionError(f"{role} '{arg.name}' has a dtype graphdef does not carry ({enum})") from None


def _output_offsets(node):
    """output arg name -> (first flat output index, count) for a body node, from the registry's
    declaration of its op; None for an op the registry lacks (the import names it)."""
    opdef = REGISTRY.get(node.op)
    if opdef is None:
        return None
    offsets, start = {}, 0
    for arg in opdef.outputs:
        if arg.type_list:
            count = len(node.attr[arg.type_attr].list.type) if arg.type_attr in node.attr else 0
        elif arg.number_attr:
            count = node.attr[arg.number_attr].i if arg.number_attr in node.attr else 0
        else:
            count = 1
        offsets[arg.name] = (start, count)
        start += max(count, 0)
    return offsets


def _plain_input(text, offsets, where):
    """"node:out_arg:i" -> "node:k"; an argument's name and "^node" stay as they are."""
    if text.startswith("^"):
        return text
    parts = text.split(":")
    if len(parts) == 1:
        return text
    if len(parts) != 3 or not parts[2].isdigit():
        raise FunctionError(f"{where}: input '{text}' is neither an argument nor 'node:output:index'")
    node, arg, index = parts[0], parts[1], int(parts[2])
    if node not in offsets:
        raise FunctionError(f"{where}: input '{text}' names no node of the body")
    table = offsets[node]
    if table is None:
        return f"{node}:{index}"  # an unknown op: the importer reports it by name
    if arg not in table:
        raise FunctionError(f"{where}: input '{text}': the node has no output '{arg}' "
                            f"(it has {', '.join(table) or 'none'})")
    start, count = table[arg]
    if index >= count:
        raise FunctionError(f"{where}: input '{text}': output '{arg}' has {count} tensors")
    return f"{node}:{start + index}"


def _split(text):
    name, _, index = text.partition(":")
    return name, int(index or 0)
