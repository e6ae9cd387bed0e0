"""TF2 SavedModels: signatures whose functions capture resource variables, frozen.

`tf.saved_model.save` (and Keras `model.export`) write a graph whose signature outputs come
from call nodes (StatefulPartitionedCall) of the graph's function library. A function's
captured variables are its trailing arguments, of dtype resource, passed VarHandleOp nodes
of the graph; inside, ReadVariableOp reads them, perhaps after passing them on to nested
calls. Which variable each argument is comes from the MetaGraphDef's SavedObjectGraph: the
concrete function's bound_inputs are the ids of the captured objects. The checkpoint's own
object graph (the string tensor _CHECKPOINTABLE_OBJECT_GRAPH, a TrackableObjectGraph) gives
each variable object's checkpoint key; the two graphs are matched as TensorFlow's loader
matches them, by walking both from the root along children of the same local name.

Freezing replaces each captured VarHandleOp by a Const of its value and lets the value flow
where the handle flowed: each function that receives it is copied with that argument typed
as the value ("<name>_frozen"), each ReadVariableOp of it becomes an Identity, and call,
If and While nodes' type lists follow. The result needs no resource support in a runtime.
"""

from graphdef._proto import graph_pb2, trackable_object_graph_pb2
from graphdef.wire import tensor_bundle
from graphdef.wire.serialize import GraphFileError

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"
DT_RESOURCE = graph_pb2.DT_RESOURCE
CALL_OPS = frozenset({"StatefulPartitionedCall", "PartitionedCall"})
IF_OPS = frozenset({"If", "StatelessIf"})
MAX_COPIES = 10_000  # each (function, frozen arguments) is one copy; a hostile file could ask for exponentially many
WHILE_OPS = frozenset({"While", "StatelessWhile"})


def is_tf2(meta):
    return bool(meta.object_graph_def.nodes)


def _node_of(ref):
    return ref.lstrip("^").split(":")[0]


# -- which graph node is which checkpoint value ------------------------------------------------

def _checkpoint_object_graph(bundle, where):
    if OBJECT_GRAPH_KEY not in bundle.entries:
        raise GraphFileError(f"{where}: the checkpoint has no object graph ({OBJECT_GRAPH_KEY}), so its "
                             "variables cannot be matched to the SavedModel's; was it written by tf.saved_model.save?")
    try:
        data = bundle.read_strings(OBJECT_GRAPH_KEY)
    except tensor_bundle.CheckpointFormatError as e:
        raise GraphFileError(str(e)) from None
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    try:
        graph.ParseFromString(data[0] if data else b"")
    except Exception:  # noqa: BLE001 - protobuf's DecodeError, whatever its module
        raise GraphFileError(f"{where}: the checkpoint's object graph does not parse") from None
    return graph


def variable_keys(saved_objects, checkpoint_objects):
    """{SavedObjectGraph node id: checkpoint key} of every variable both graphs reach from
    their roots along children of the same local names."""
    keys, matched, stack = {}, {0: 0}, [0]
    if not saved_objects.nodes or not checkpoint_objects.nodes:
        return keys
    while stack:
        saved_id = stack.pop()
        saved, checkpoint = saved_objects.nodes[saved_id], checkpoint_objects.nodes[matched[saved_id]]
        if saved.WhichOneof("kind") == "variable":
            for attribute in checkpoint.attributes:
                if attribute.name == VARIABLE_VALUE:
                    keys[saved_id] = attribute.checkpoint_key
        by_name = {c.local_name: c.node_id for c in checkpoint.children}
        for child in saved.children:
            other = by_name.get(child.local_name)
            if child.node_id in matched or other is None:
                continue
            if not (0 <= child.node_id < len(saved_objects.nodes) and 0 <= other < len(checkpoint_objects.nodes)):
                continue
            matched[child.node_id] = other
            stack.append(child.node_id)
    return keys


def captured_variables(meta, bundle, where):
    """{graph node (a VarHandleOp): checkpoint key} for every variable a call node of the graph
    passes to a concrete function as one of its bound inputs."""
    keys = variable_keys(meta.object_graph_def, _checkpoint_object_graph(bundle, where))
    functions = meta.object_graph_def.concrete_functions
    out = {}
    for node in meta.graph_def.node:
        if node.op not in CALL_OPS or node.attr["f"].func.name not in functions:
            continue
        bound = list(functions[node.attr["f"].func.name].bound_inputs)
        data = [ref for ref in node.input if not ref.startswith("^")]
        if not bound or len(bound) > len(data):
            continue
        for object_id, ref in zip(bound, data[len(data) - len(bound):]):
            if object_id in keys:
                out[_node_of(ref)] = keys[object_id]
    return out


# -- freezing -----------------------------------------------------------------------------------

class _Freezer:
    """Lets frozen variable values flow through a GraphDef and the functions it calls."""

    def __init__(self, graph_def):
        self.library = graph_def.library
        self.functions = {f.signature.name: f for f in graph_def.library.function}
        self.made = {}  # (function, frozen args) -> (copy's name, {output index: dtype})

    def specialize(self, name, frozen_args):
        """The copy of function `name` whose arguments {index: dtype} are values, not handles."""
        key = (name, tuple(sorted(frozen_args.items())))
        if key in self.made:
            return self.made[key]
        source = self.functions.get(name)
        if source is None:
            return name, {}
        if len(self.made) >= MAX_COPIES:
            raise GraphFileError(f"freezing the SavedModel's variables would copy more than {MAX_COPIES} functions")
        copy = self.library.function.add()
        copy.CopyFrom(source)
        copy.signature.name = new_name = self._fresh(f"{name}_frozen")
        self.functions[new_name] = copy
        self.made[key] = (new_name, {})
        frozen = {}
        for index, dtype in frozen_args.items():
            if index < len(copy.signature.input_arg):
                arg = copy.signature.input_arg[index]
                arg.type = dtype
                frozen[arg.name] = dtype
                if index in copy.arg_attr:  # a handle's recorded shape is a scalar's, not the value's
                    copy.arg_attr[index].attr.pop("_output_shapes", None)
        reads = self.freeze(copy.node_def, frozen, in_function=True)
        _rename_read_outputs(copy, reads)
        outputs = {}
        for index, arg in enumerate(copy.signature.output_arg):
            ref = copy.ret.get(arg.name)
            if ref in frozen:
                arg.type = outputs[index] = frozen[ref]
        self.made[key] = (new_name, outputs)
        return self.made[key]

    def _fresh(self, base):
        name, k = base, 1
        while name in self.functions:
            name, k = f"{base}_{k}", k + 1
        return name

    def freeze(self, nodes, frozen, in_function):
        """Rewrites `nodes` in place: `frozen` maps the references ("node", "node:output:0", "arg")
        that now carry a variable's value to its dtype, and grows as values flow on."""
        def out_ref(node, k):
            if in_function:
                return f"{node.name}:output:{k}"
            return node.name if k == 0 else f"{node.name}:{k}"

        def normal(ref):
            return ref[:-2] if not in_function and ref.endswith(":0") else ref

        originals, reads, changed = {}, set(), True
        while changed:
            changed = False
            for node in nodes:
                data = [normal(ref) for ref in node.input if not ref.startswith("^")]
                positions = {i: frozen[ref] for i, ref in enumerate(data) if ref in frozen}
                if not positions:
                    continue
                if node.op == "ReadVariableOp":
                    dtype = node.attr["dtype"].type or positions[0]
                    node.op = "Identity"
                    node.attr.clear()
                    node.attr["T"].type = dtype
                    reads.add(node.name)
                elif node.op == "Identity" and out_ref(node, 0) not in frozen:
                    node.attr["T"].type = frozen[out_ref(node, 0)] = positions[0]
                    node.attr.pop("_output_shapes", None)
                    changed = True
                elif node.op in CALL_OPS | IF_OPS | WHILE_OPS:
                    if originals.get(node.name, (None, None))[1] == positions:
                        continue
                    funcs = originals.setdefault(node.name, ({k: v.func.name for k, v in node.attr.items()
                                                              if v.HasField("func")}, None))[0]
                    originals[node.name] = (funcs, positions)
                    for k, dtype in self._retype(node, funcs, positions).items():
                        if out_ref(node, k) not in frozen:
                            frozen[out_ref(node, k)] = dtype
                            changed = True
        return reads

    def _retype(self, node, funcs, positions):
        """Points a call/If/While node at its functions' frozen copies; returns its frozen outputs."""
        offset, types = (1, "Tin") if node.op in IF_OPS else (0, "T" if node.op in WHILE_OPS else "Tin")
        args = {i - offset: dtype for i, dtype in positions.items() if i >= offset}
        type_list = node.attr[types].list.type
        for i, dtype in args.items():
            if i < len(type_list):
                type_list[i] = dtype
        outputs = {}
        for attr, name in funcs.items():
            new_name, frozen_out = self.specialize(name, args)
            node.attr[attr].func.name = new_name
            if attr != "cond":
                outputs.update(frozen_out)
        if node.op not in WHILE_OPS:
            out_types = node.attr["Tout"].list.type
            for k, dtype in outputs.items():
                if k < len(out_types):
                    out_types[k] = dtype
        shapes = node.attr["output_shapes"].list.shape if "output_shapes" in node.attr else []
        for k in outputs:  # a handle's recorded shape is a scalar's, not the value's
            if k < len(shapes):
                shapes[k].Clear()
                shapes[k].unknown_rank = True
        node.attr.pop("_read_only_resource_inputs", None)
        node.attr.pop("_output_shapes", None)
        return outputs


def _rename_read_outputs(function, reads):
    """Inside a function, a ReadVariableOp's result is "node:value:k"; an Identity's, "node:output:k"."""
    def renamed(ref):
        control = ref.startswith("^")
        parts = ref.lstrip("^").split(":")
        if len(parts) == 3 and parts[0] in reads and parts[1] == "value":
            return ("^" if control else "") + f"{parts[0]}:output:{parts[2]}"
        return ref
    for node in function.node_def:
        node.input[:] = [renamed(ref) for ref in node.input]
    for key in list(function.ret):
        function.ret[key] = renamed(function.ret[key])


def freeze_resource_flow(graph_def, variables):
    """Rewrites `graph_def` in place so the values of `variables` ({node: dtype}, VarHandleOps
    already made Consts) flow where their handles flowed; keeps only the functions its nodes
    still call."""
    _Freezer(graph_def).freeze(graph_def.node, dict(variables), in_function=False)
    _keep_called_functions(graph_def)


def _called(nodes, functions):
    for node in nodes:
        if node.op in functions:
            yield node.op
        for value in node.attr.values():
            if value.HasField("func"):
                yield value.func.name
            for func in value.list.func:
                yield func.name


def _keep_called_functions(graph_def):
    functions = {f.signature.name: f for f in graph_def.library.function}
    kept, stack = set(), list(_called(graph_def.node, functions))
    while stack:
        name = stack.pop()
        if name in functions and name not in kept:
            kept.add(name)
            stack.extend(_called(functions[name].node_def, functions))
    library = graph_pb2.FunctionDefLibrary()
    library.CopyFrom(graph_def.library)
    del library.function[:]
    library.function.extend(f for f in graph_def.library.function if f.signature.name in kept)
    graph_def.library.CopyFrom(library)
