"""Time spent in each node of a Session's run, for `graphrun bench --profile`.

The numpy engine executes a plan (graphdef.client.python_engine._Plan): its `ops` are the nodes it runs,
in order, and its `segments` hold one step per op, in the same order, each step a tuple
whose first item is the op's bound kernel. Profiling builds such a plan and swaps each
kernel for one that adds its own duration to that op's total, so the plan runs exactly
as Session.run would run it. Each time includes the wrapper's own cost, about a tenth
of a microsecond. Consts need no step and so never appear. Fetches that need control flow
run on the control-flow executor instead (graphdef/client/control_flow_exec.py): there each
node's kernel is timed over all the iterations it runs.
"""

import time

from graphdef.client.control_flow_exec import ControlFlowPlan
from graphdef.client.runtime import python_plan


class NodeTimes:
    """Total seconds per node over `runs` runs of one plan."""

    def __init__(self, ops, totals, runs):
        self.ops, self.totals, self.runs = ops, totals, runs

    def per_node(self):
        """[(op, mean seconds per run)], slowest first (ties in run order)."""
        order = sorted(range(len(self.ops)), key=lambda i: -self.totals[i])
        return [(self.ops[i], self.totals[i] / self.runs) for i in order]

    def per_type(self):
        """[(op type, node count, mean seconds per run)], slowest first."""
        types = {}
        for op, total in zip(self.ops, self.totals):
            count, seconds = types.get(op.type, (0, 0.0))
            types[op.type] = (count + 1, seconds + total)
        ranked = sorted(types.items(), key=lambda item: (-item[1][1], item[0]))
        return [(name, count, seconds / self.runs) for name, (count, seconds) in ranked]

    def total(self):
        return sum(self.totals) / self.runs


def profile(session, fetches, feed_dict, runs):
    """NodeTimes of `runs` runs of session.run(fetches, feed_dict), node by node."""
    plan = python_plan(session, fetches, tuple(feed_dict))
    if isinstance(plan, ControlFlowPlan):  # kernels timed per node; routing ops (Switch, Merge, ...) cost ~0
        nodes = sorted((n for n in plan.nodes.values() if n.kernel is not None), key=lambda n: n.op.name)
        ops, totals = [n.op for n in nodes], [0.0] * len(nodes)
        for i, node in enumerate(nodes):
            node.kernel = _timed(node.kernel, i, totals)
    else:
        ops, totals = plan.ops, [0.0] * len(plan.ops)
        plan.segments = _timed_segments(plan, totals)
    for _ in range(runs):
        session._run_plan(plan, feed_dict)  # the variables brought from the cc engine where they live
    return NodeTimes(ops, totals, runs)


def _timed_segments(plan, totals):
    segments, index = [], 0
    for kind, items in plan.segments:
        timed = []
        for item in items:
            # every kernel a step may call: a donating step also holds the one it calls when it
            # cannot donate (session_steps._plain); the rest of an item is slot numbers
            timed.append(tuple(_timed(part, index, totals) if callable(part) else part for part in item))
            index += 1
        segments.append((kind, timed))
    if index != len(plan.ops):
        raise RuntimeError(f"the session's plan has {index} steps for {len(plan.ops)} ops; "
                           "node_profile no longer matches graphdef.client.python_engine")
    return segments


def _timed(kernel, index, totals):
    clock = time.perf_counter

    def run(*args, **kwargs):  # out= when the step may work in place
        start = clock()
        try:
            return kernel(*args, **kwargs)
        finally:
            totals[index] += clock() - start
    return run
