"""Graph optimization as passes over a GraphDef, as TF's grappler and Graph Transform Tool do.

`optimize(graph_def, outputs, keep)` returns a new, plain GraphDef that TensorFlow still imports
and that computes the same outputs within the numerics policy, and a report of what each pass
changed. The passes run in PASSES order until nothing changes (each may expose work for another:
folding makes batch-norm parameters constant, batch-norm folding leaves dead nodes to prune),
then FINAL_PASSES once: bias/activation fusion into TF's _Fused* ops and Pad folding.

Calls of library functions are inlined first when every function use can be (inline_calls.py).
Graphs with TF control flow or a function library left are only pruned: folding across frames or
into function bodies needs the frame-aware rules those runtimes have, not these.
"""

import gc

from graphdef.framework.gc_pause import gc_paused
from graphdef.ops.lookup import INIT_OP
from graphdef.optimize.graph_view import GraphView
from graphdef.optimize.inline_calls import inline_calls
from graphdef.optimize.passes import FINAL_PASSES, PASSES, SESSION_FINAL_PASSES, Report

__all__ = ["optimize", "FINAL_PASSES", "PASSES", "Report"]

CONTROL_FLOW_OPS = frozenset({"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
                              "NextIteration", "RefNextIteration", "LoopCond", "If", "StatelessIf", "While",
                              "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"})

MAX_ROUNDS = 8


def optimize(graph_def, outputs=None, keep=(), passes=None, for_tensorflow=True):
    """(optimized GraphDef, Report). `outputs`: node names the result must compute (default: every
    node nothing consumes); `keep`: node names that must survive unchanged (fed or fetched);
    `passes`: run just these, in rounds (default PASSES in rounds, then FINAL_PASSES once);
    `for_tensorflow` False: the result is only for graphdef's Session (SESSION_FINAL_PASSES),
    which runs a few forms TensorFlow's op definitions do not allow."""
    with gc_paused():  # the passes copy every node; the rounds below collect what they free
        return _optimize(graph_def, outputs, keep, passes, for_tensorflow)


def _optimize(graph_def, outputs, keep, passes, for_tensorflow):
    nodes_before = len(graph_def.node)
    graph_def, inlined = inline_calls(graph_def, set(outputs or ()) | set(keep))
    view = GraphView(graph_def)
    outputs = list(outputs) if outputs is not None else view.sinks()
    if INIT_OP in view.nodes and INIT_OP not in outputs:  # the loaders run the tables' initializer by themselves
        outputs.append(INIT_OP)
    protected = set(outputs) | set(keep)
    report = Report(nodes_before=nodes_before)
    report.add("inline calls", inlined)
    structured = graph_def.library.SerializeToString() != b"" or any(n.op in CONTROL_FLOW_OPS for n in graph_def.node)
    chosen = [p for p in (passes or PASSES) if not structured or p.name == "prune"]
    for _ in range(MAX_ROUNDS):
        changed = 0
        for run_pass in chosen:
            count = run_pass(view, outputs, protected)
            report.add(run_pass.name, count)
            changed += count
        # constant folding builds a Graph and a Session each round: reference cycles holding
        # every constant, which Python's collector (counting objects, not bytes) would let
        # pile up to several copies of a large model's weights
        gc.collect()
        if not changed:
            break
    if passes is None and not structured:
        for run_pass in FINAL_PASSES if for_tensorflow else SESSION_FINAL_PASSES:
            report.add(run_pass.name, run_pass(view, outputs, protected))
    report.nodes_after = len(view.nodes)
    return view.to_graph_def(graph_def), report
