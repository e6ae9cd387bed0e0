"""A graph's lookup tables filled before its first run, as TensorFlow's loaders do.

TensorFlow's SavedModel loader runs the model's main_op (or legacy_init_op), and a frozen TF1 graph
keeps its tables' initializers under one NoOp, `init_all_tables`, which whoever runs the graph is
expected to run first. The Session does that by itself: before a run, when the graph has a table
and an `init_all_tables` op, it runs that op once (and again only if the graph has grown since).
Running it twice is harmless: an initializer bringing the same entries again does nothing.
"""

from graphdef.ops.lookup import INIT_OP, TABLE_OPS


def initializer_of(graph):
    """The op that fills the graph's tables, or None when it has no table or no such op."""
    init = graph._ops.get(INIT_OP)
    if init is None or not any(op.type in TABLE_OPS for op in graph._ops.values()):
        return None
    return None if _needs_feeds(init) else init


def _needs_feeds(op):
    """Whether running `op` needs a Placeholder fed: such an initializer (keys fed by the program)
    is the program's to run, with its feeds, as in TensorFlow."""
    seen, stack = set(), [op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder":
            return True
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return False


def before_run(session, fetches):
    """Runs the graph's table initializer once per session and graph size; a run that fetches the
    initializer itself is left to do it."""
    graph = session.graph
    size = len(graph._ops)
    if getattr(session, "_tables_checked", None) == size:
        return
    init = initializer_of(graph)
    if init is not None and fetches is not init and fetches != INIT_OP:
        session._run_plan(session._plan(init, None), None)  # a failure is raised again by the next run
    session._tables_checked = size
