"""GraphDef.library: FunctionDefs turned into graphs a runtime can run.

A FunctionDef body names its inputs "arg" (an argument), "node:out_arg:i" (the i-th tensor of
a node's output arg `out_arg`) or "^node"; a list argument (number_attr or type_list_attr, sized
by the attr values the calling node's func attr passes, else the function's own attrs or the
signature's defaults) is "arg" for the whole list and "arg:i" for one tensor, as "node:out_arg"
is a whole output list. Instantiating a function writes it out as a plain
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
        self.checked = {}  # call_check's CheckedFunction per function and attr values
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

    def body(self, name, attrs=None):
        """The instantiated function `name` for the attr values a call passes (a NameAttrList's attr
        map, for functions whose signature has attrs); FunctionError when it is missing or malformed."""
        fdef = self.defs.get(name)
        if fdef is None:
            raise FunctionError(f"the graph's library has no function '{name}'")
        values = signature_values(fdef, attrs or {})
        key = (name, tuple(sorted((k, v.SerializeToString(deterministic=True)) for k, v in values.items())))
        found = self._bodies.get(key)
        if found is None:
            try:
                found = _instantiate(self, fdef, values)
            except FunctionError:
                raise
            except (TypeError, ValueError) as e:
                raise FunctionError(f"function '{name}': {e}") from None
            self._bodies[key] = found
        return found


def call_attrs(value):
    """The attr values a func attr passes to its function: a NameAttrList's attr map, else none."""
    attr = getattr(value, "attr", None)
    return attr if attr is not None and hasattr(attr, "items") else {}


def signature_values(fdef, attrs):
    """The signature attrs' values: the call's, else the function's own attrs, else the defaults."""
    values = {}
    for declared in fdef.signature.attr:
        for source in (attrs, fdef.attr):
            if declared.name in source:
                values[declared.name] = source[declared.name]
                break
        else:
            if declared.HasField("default_value"):
                values[declared.name] = declared.default_value
    return values


def attach_library(graph, proto, import_nodes):
    """Gives `graph` the functions of `proto` (a FunctionDefLibrary), beside any it has."""
    if graph.functions is None:
        graph.functions = FunctionLibrary(proto, import_nodes)
    else:
        graph.functions.merge(proto)


# -- instantiation ------------------------------------------------------------------------------

def plain_body(fdef, values):
    """The function as a plain GraphDef for these signature attr `values`: a Placeholder per argument
    tensor, then the body with every input in "node:k" form. Also (argument name -> its placeholder
    names, each result tensor as "node:k" or a placeholder's name, the nodes the function must run
    for their effects). FunctionError when the function is malformed."""
    sig = fdef.signature
    graph_def = graph_pb2.GraphDef()
    arg_nodes = {}  # argument name -> its placeholders (a list argument has one per tensor)
    for i, arg in enumerate(sig.input_arg):
        types = _arg_dtypes(fdef, arg, values, "argument")
        listed = bool(arg.number_attr or arg.type_list_attr)
        names = [f"{arg.name}/_{k}" for k in range(len(types))] if listed else [arg.name]
        arg_nodes[arg.name] = names
        for name, dtype in zip(names, types):
            node = graph_def.node.add(name=name, op="Placeholder")
            node.attr["dtype"].type = dtype.enum
            shapes = fdef.arg_attr[i].attr.get("_output_shapes") if i in fdef.arg_attr else None
            if shapes is not None and len(shapes.list.shape) == 1 and not listed:
                node.attr["shape"].shape.CopyFrom(shapes.list.shape[0])
            else:
                node.attr["shape"].shape.unknown_rank = True
    filled = []
    for body_node in fdef.node_def:
        node = graph_pb2.NodeDef()
        node.CopyFrom(body_node)
        _fill_placeholders(node, values, sig.name)
        filled.append(node)
    offsets = {node.name: _output_offsets(node) for node in filled}
    for body_node, node in zip(fdef.node_def, filled):
        del node.input[:]
        graph_def.node.add().CopyFrom(node)
        node = graph_def.node[-1]
        for text in body_node.input:
            node.input.extend(_plain_inputs(text, offsets, arg_nodes, f"node '{body_node.name}'"))
    outputs, _, control = results(fdef, values, offsets, arg_nodes)
    return graph_def, arg_nodes, outputs, control


def results(fdef, values, offsets, arg_nodes):
    """(each result tensor as "node:k" or a placeholder's name, their declared dtypes, the nodes the
    function must run for its effects), checked against the body: `offsets` is each body node's
    _output_offsets, `arg_nodes` each argument's placeholder names. FunctionError when they do not fit."""
    sig = fdef.signature
    outputs, declared = [], []
    for arg in sig.output_arg:
        types = _arg_dtypes(fdef, arg, values, "result")
        if arg.name not in fdef.ret:
            raise FunctionError(f"function '{sig.name}': result '{arg.name}' has no entry in ret")
        returned = _plain_inputs(fdef.ret[arg.name], offsets, arg_nodes, f"result '{arg.name}'")
        if len(returned) != len(types):
            raise FunctionError(f"function '{sig.name}': result '{arg.name}' is {len(types)} tensors, but ret "
                                f"'{fdef.ret[arg.name]}' names {len(returned)}")
        outputs.extend(returned)
        declared.extend(types)
    control = []
    known = set(offsets).union(*arg_nodes.values())
    for name in sig.control_output:
        target = fdef.control_ret.get(name)
        if target not in known:
            raise FunctionError(f"function '{sig.name}': control output '{name}' names no node of the body")
        control.append(target)
    return outputs, declared, control


def _instantiate(library, fdef, values):
    sig = fdef.signature
    graph_def, arg_nodes, returned, control_names = plain_body(fdef, values)
    graph = Graph()
    graph.functions = library
    created = library._import_nodes(graph_def, graph)
    # A call runs the whole body, so what graphdef cannot run there is refused now, by name.
    cannot = [op for op in created.values() if unsupported_ops.is_unsupported(op)]
    if cannot:
        raise FunctionError(f"function '{sig.name}': {unsupported_ops.describe(cannot)}")
    outputs = []
    for text in returned:
        name, index = _split(text)
        outputs.append(created[name].outputs[index])
    declared = [t for arg in sig.output_arg for t in _arg_dtypes(fdef, arg, values, "result")]
    for tensor, dtype in zip(outputs, declared):
        if tensor.dtype != dtype:  # calls were checked at load against the declared dtypes
            raise FunctionError(f"function '{sig.name}': it declares a {dtype.name} result, but ret names "
                                f"'{tensor.op.name}', a {tensor.dtype.name} tensor")
    control = [created[name] for name in control_names]
    args = [created[name].outputs[0] for arg in sig.input_arg for name in arg_nodes[arg.name]]
    return FunctionBody(sig.name, graph, args, outputs, control)


MAX_LIST_ARG = 1 << 16  # tensors in one list argument: a count from a file must not size a loop unchecked


def _attr_of(values, name, kind, role, arg):
    value = values.get(name)
    if value is None or value.WhichOneof("value") != kind:
        raise FunctionError(f"{role} '{arg.name}' takes its {'count' if kind == 'i' else 'dtypes'} from attr "
                            f"'{name}', which neither the call nor the function sets")
    return value


def _arg_dtypes(fdef, arg, values, role):
    """The dtypes of an argument or result: one, or a list argument's each."""
    values = {**fdef.attr, **values}
    if arg.type_list_attr:
        enums = list(_attr_of(values, arg.type_list_attr, "list", role, arg).list.type)
    else:
        enum = arg.type
        if arg.type_attr:
            enum = _attr_of(values, arg.type_attr, "type", role, arg).type
        count = _attr_of(values, arg.number_attr, "i", role, arg).i if arg.number_attr else 1
        if not 0 <= count <= MAX_LIST_ARG:
            raise FunctionError(f"{role} '{arg.name}' is a list of {count} tensors (attr '{arg.number_attr}'); "
                                f"0 to {MAX_LIST_ARG} are allowed")
        enums = [enum] * count
    if len(enums) > MAX_LIST_ARG:
        raise FunctionError(f"{role} '{arg.name}' is a list of {len(enums)} tensors; at most {MAX_LIST_ARG}")
    try:
        return [dtypes.as_dtype(enum) for enum in enums]
    except TypeError:
        raise FunctionError(f"{role} '{arg.name}' has a dtype graphdef does not carry ({enums})") from None


def _fill_placeholders(node, values, function):
    """A body node's attrs written "$N" (AttrValue.placeholder) take the signature attr's value."""
    for key, value in sorted(node.attr.items()):  # sorted, so the error names the same attr every run
        if value.WhichOneof("value") == "placeholder":
            if value.placeholder not in values:
                raise FunctionError(f"function '{function}': node '{node.name}' attr '{key}' is "
                                    f"${value.placeholder}, which the call does not set")
            value.CopyFrom(values[value.placeholder])


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


def _plain_inputs(text, offsets, arg_nodes, where):
    """"node:out_arg:i" -> ["node:k"]; "node:out_arg" and a list argument's name -> each of its tensors;
    "arg:i" -> that tensor of a list argument; an argument's name and "^node" stay as they are."""
    if text.startswith("^"):
        return [text]
    parts = text.split(":")
    if len(parts) == 1:
        return list(arg_nodes.get(text, [text]))
    if len(parts) == 2 and parts[0] in arg_nodes and parts[1].isdigit():
        names = arg_nodes[parts[0]]
        if int(parts[1]) >= len(names):
            raise FunctionError(f"{where}: input '{text}': argument '{parts[0]}' has {len(names)} tensors")
        return [names[int(parts[1])]]
    if len(parts) not in (2, 3) or (len(parts) == 3 and not parts[2].isdigit()):
        raise FunctionError(f"{where}: input '{text}' is neither an argument nor 'node:output:index'")
    node, arg = parts[0], parts[1]
    if node not in offsets:
        raise FunctionError(f"{where}: input '{text}' names no node of the body")
    table = offsets[node]
    if table is None:
        if len(parts) == 2:
            raise FunctionError(f"{where}: input '{text}' names a whole output list of an op graphdef does not know")
        return [f"{node}:{int(parts[2])}"]  # an unknown op: the importer reports it by name
    if arg not in table:
        raise FunctionError(f"{where}: input '{text}': the node has no output '{arg}' "
                            f"(it has {', '.join(table) or 'none'})")
    start, count = table[arg]
    if len(parts) == 2:
        return [f"{node}:{start + k}" for k in range(count)]
    index = int(parts[2])
    if index >= count:
        raise FunctionError(f"{where}: input '{text}': output '{arg}' has {count} tensors")
    return [f"{node}:{start + index}"]


def _split(text):
    name, _, index = text.partition(":")
    return name, int(index or 0)
