"""Constant folding: a node whose inputs are all constant becomes a Const holding its value.

Values come from graphdef's own Session, so folding computes exactly what running would.
Shape, Size and Rank of a tensor whose static shape is fully known fold too, from the shape
alone. A folded value over MAX_BYTES stays computed (Fill and Tile can make constants far
larger than their inputs, as grappler's 10 MiB cap guards against); so does anything
stateful, random, fed or protected.
"""

import numpy as np

from graphdef._proto import graph_pb2
from graphdef.client.session import Session
from graphdef.framework.errors import OpError
from graphdef.framework.graph import Graph
from graphdef.ops.registry import REGISTRY
from graphdef.optimize.graph_view import input_text, parse_input
from graphdef.wire.serialize import GraphFileError, import_graph_def, ndarray_to_proto

MAX_BYTES = 10 << 20
SHAPE_OPS = frozenset({"Shape", "Size", "Rank"})
NEVER = frozenset({"Placeholder", "PlaceholderWithDefault", "Const"})


def fold_constants(view, outputs, protected):
    if not _may_fold(view, protected):
        return 0  # building the graph (its whole size) would only find nothing to fold
    graph = _build(view)
    if graph is None:
        return 0
    ready, known = _foldable(view, graph, protected)
    frontier = _frontier(view, ready, outputs)
    values = _evaluate(graph, frontier, known)
    folded = 0
    for name, indices in frontier.items():
        results = {k: values.get(f"{name}:{k}") for k in indices}
        if any(v is None or v.dtype == object or v.nbytes > MAX_BYTES for v in results.values()):
            continue
        if len(graph.get_operation_by_name(name).outputs) == 1:
            _become_const(view.nodes[name], results[0])
        else:
            for k, value in results.items():
                const_name = _fresh_name(view, f"{name}/folded_{k}")
                const = graph_pb2.NodeDef(name=const_name)
                _become_const(const, value)
                view.nodes[const_name] = const
                _redirect_output(view, name, k, const_name)
        folded += 1
    return folded


fold_constants.name = "constant folding"


def _build(view):
    graph = Graph()
    try:
        with graph.as_default():
            import_graph_def(view.to_graph_def(graph_pb2.GraphDef()), name="")
    except (GraphFileError, ValueError, TypeError):
        return None  # a graph this package cannot build is left as it is
    return graph


def _may_fold(view, protected):
    """False when no node but a Const is computable from Consts alone and no shape query could
    be answered: _foldable's walk on the GraphDef, without the graph it needs for shapes."""
    ready = set()
    for name in view.topological_order():
        node = view.nodes[name]
        if name in protected:
            continue
        if node.op == "Const":
            ready.add(name)
            continue
        opdef = REGISTRY.get(node.op)
        if opdef is None or opdef.stateful or node.op in NEVER or "Random" in node.op:
            continue
        if node.op in SHAPE_OPS and not view.control_inputs(node):
            return True
        producers = [parse_input(text)[0] for text in node.input]
        if producers and all(p in ready for p in producers):
            return True
    return False


def _static_value(op):
    """The value of Shape/Size/Rank of a fully known shape, else None."""
    shape = op.inputs[0].shape
    if not shape.is_fully_defined():
        return None
    dims = shape.as_list()
    dtype = op.outputs[0].dtype.np
    return {"Shape": np.array(dims, dtype), "Size": np.array(int(np.prod(dims)), dtype),
            "Rank": np.array(len(dims), dtype)}[op.type]


def _foldable(view, graph, protected):
    """({name: True} for Consts and every node computable from them alone,
    {tensor name: value} for the shape queries answered from static shapes)."""
    ready, known = {}, {}
    for name in view.topological_order():
        node = view.nodes[name]
        if name in protected:  # fed or fetched: a fed Const's value is the feed's
            continue
        if node.op == "Const":
            ready[name] = True
            continue
        opdef = REGISTRY.get(node.op)
        if opdef is None or opdef.stateful or node.op in NEVER or "Random" in node.op:
            continue
        if node.op in SHAPE_OPS and not view.control_inputs(node):
            value = _static_value(graph.get_operation_by_name(name))
            if value is not None:
                known[f"{name}:0"] = value
                ready[name] = True
            continue
        producers = [parse_input(text)[0] for text in node.input]
        if producers and all(ready.get(p) for p in producers):
            ready[name] = True
    return ready, known


def _frontier(view, ready, outputs):
    """{folded node: output indices} that something not folded, or an output, reads."""
    users = view.consumers()
    frontier = {}
    for name in ready:
        if view.nodes[name].op == "Const":
            continue
        for user, _, index in users[name]:
            if not ready.get(user) and index is not None:
                frontier.setdefault(name, set()).add(index)
        if name in outputs:
            frontier.setdefault(name, set()).add(0)
    return frontier


def _evaluate(graph, frontier, known):
    """{tensor name: value} for the frontier's tensors; a tensor that fails to compute is left out."""
    names = [f"{name}:{k}" for name, indices in frontier.items() for k in sorted(indices)]
    values = {n: v for n, v in known.items() if n in names}
    wanted = [n for n in names if n not in values]
    if not wanted:
        return values
    feeds = {graph.get_tensor_by_name(n): v for n, v in known.items()}
    with Session(graph=graph) as session:
        try:
            values.update(zip(wanted, (np.asarray(v) for v in session.run(wanted, feeds))))
        except (OpError, ValueError, TypeError, OverflowError, MemoryError):
            for n in wanted:  # one by one, so one failing node does not stop the rest
                try:
                    values[n] = np.asarray(session.run(n, feeds))
                except (OpError, ValueError, TypeError, OverflowError, MemoryError):
                    pass
    return values


def _become_const(node, value):
    """Rewrites `node` in place (name kept, inputs and other attrs dropped) as a Const of `value`."""
    name = node.name
    node.Clear()
    node.name, node.op = name, "Const"
    proto = ndarray_to_proto(value)
    node.attr["dtype"].type = proto.dtype
    node.attr["value"].tensor.CopyFrom(proto)


def _fresh_name(view, base):
    name, k = base, 1
    while name in view.nodes:
        name, k = f"{base}_{k}", k + 1
    return name


def _redirect_output(view, producer, index, const_name):
    for node in view.nodes.values():
        for k, text in enumerate(node.input):
            if parse_input(text) == (producer, index):
                node.input[k] = input_text(const_name, 0)
