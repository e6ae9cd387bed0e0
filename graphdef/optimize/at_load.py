"""The optimizer applied when a model file is loaded for running, as ONNX Runtime and TF's
grappler optimize a session's graph by default.

`load(path)` (tf.load, and every graphrun verb that runs a model) returns the graph exactly
as the file has it, so every node can still be fetched or fed by name; it attaches a
RunOptimizer that the Session asks, once per plan (fetches and feeds known), for a graph
optimized for just those fetches and feeds. A plan then runs the optimized copy, whose fetched
and fed nodes keep their names.

The switch: `load(path, optimize=False)`, or GRAPHDEF_OPTIMIZE=0 in the environment (as ORT's
graph_optimization_level), or `graphrun --no-optimize`. Nothing is optimized, whatever the
switch, for a graph that keeps state or flows control (variables, assignments, loops, a
function library it cannot inline: a training graph's semantics are its node-by-node order), for one with an
op graphdef cannot run (the plain plan names it), or once the graph has been added to after
loading (the file no longer describes it). Any failure inside the passes also falls back to
the graph as it is: optimizing only ever saves time.
"""

import os

from graphdef.ops.control_flow import CONTROL_FLOW_OPS as RUNTIME_CONTROL_FLOW_OPS
from graphdef.ops.registry import REGISTRY, STATE_PARAMS
from graphdef.optimize import CONTROL_FLOW_OPS, optimize
from graphdef.optimize.inline_calls import inlined_nodes
from graphdef.framework.gc_pause import gc_paused
from graphdef.framework.graph import Graph
from graphdef.wire import serialize
from graphdef.wire.serialize import import_graph_def

ENVIRONMENT_SWITCH = "GRAPHDEF_OPTIMIZE"


def enabled(optimize_flag=None):
    """The switch: an explicit True/False wins, else GRAPHDEF_OPTIMIZE (anything but 0/false/off is on)."""
    if optimize_flag is not None:
        return bool(optimize_flag)
    return os.environ.get(ENVIRONMENT_SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


def load(path, signature=None, optimize=None):
    """Reads a model file (or a SavedModel directory's `signature`) into a new Graph, keeping the
    file's node names (tf.load)."""
    return load_with_graph_def(path, signature, optimize)[0]


def load_with_graph_def(path, signature=None, optimize=None, defer_calls=False):
    """(Graph, GraphDef) for the file at `path`, the graph set up to run optimized unless switched off
    (`defer_calls`: see serialize.import_graph_def)."""
    graph, graph_def = serialize.load_with_graph_def(path, signature, defer_calls)
    graph._file_graph_def = (graph_def, graph.version)  # what the cc engine can send as it is (cc_engine.py)
    if enabled(optimize) and _eligible_without_collections(graph_def):
        graph._run_optimizer = RunOptimizer(graph_def, graph.version)
    return graph, graph_def


def _eligible_without_collections(graph_def):
    # eligible() makes an object for each function and node it reads, right after the load has
    # made the graph: each collection would rescan that whole graph (10^5 nodes of calls: 1.4 s
    # of CPU against 0.09 s with the collector paused)
    with gc_paused():
        return eligible(graph_def)


def eligible(graph_def):
    """True for a stateless, loop-free graph of ops graphdef knows: the passes' rewrites are then
    the same computation, whatever is fetched or fed."""
    nodes = graph_def.node
    if graph_def.library.SerializeToString():
        nodes = inlined_nodes(graph_def)  # the nodes once every call is inlined (None: it cannot be)
        if nodes is None:
            return False
    for node in nodes:
        opdef = REGISTRY.get(node.op)
        if opdef is None or node.op in CONTROL_FLOW_OPS or node.op in RUNTIME_CONTROL_FLOW_OPS:
            return False
        if opdef.ref_inputs or STATE_PARAMS.intersection(opdef.kernel_params):
            return False
    return True


def report_for_file(graph_def, inputs):
    """The Report of optimizing a whole file for its default outputs, `inputs` fed (what graphrun
    inspect shows), or None when it would run as it is (not eligible, or nothing to change)."""
    if not eligible(graph_def):
        return None
    try:
        _, report = optimize(graph_def, keep=inputs, for_tensorflow=False)
    except Exception:  # noqa: BLE001 - as in RunOptimizer: the file then runs as it is
        return None
    return report if any(report.changes.values()) else None


class RunOptimizer:
    """Optimized copies of one loaded graph, one per set of fetched and fed nodes."""

    def __init__(self, graph_def, version):
        self.graph_def = graph_def
        self.version = version
        self._copies = {}

    def __call__(self, graph, targets, feeds):
        """(optimized Graph, Report) for these fetched elements and fed tensors, or None to run
        `graph` as it is."""
        if graph.version != self.version:
            return None
        outputs = tuple(sorted({_node_name(t) for t in targets}))
        keep = tuple(sorted({t.op.name for t in feeds}))
        key = (outputs, keep)
        if key not in self._copies:
            self._copies[key] = self._optimized(outputs, keep)
        return self._copies[key]

    def _optimized(self, outputs, keep):
        try:
            optimized, report = optimize(self.graph_def, outputs=list(outputs), keep=keep, for_tensorflow=False)
            if not any(report.changes.values()):
                return None
            copy = Graph()
            import_graph_def(optimized, name="", graph=copy)
            return copy, report
        except Exception:  # noqa: BLE001 - an optional speed-up: the graph as it is still runs, and reports its errors itself
            return None


def _node_name(element):
    op = getattr(element, "op", element)
    return op.name
