"""The work a file's function calls ask for, bounded before anything is instantiated or run.

A few KB of functions that each call the next ten times, twenty deep, ask for 10^20 calls; a
chain of 100,000 functions nests far past what a run allows. Both are refused at load, from the
call graph alone: calls are counted with their multiplicity (a function called from ten nodes
counts ten times, with everything it calls), and so are the nodes the calls run (what inlining
them would create). graphrun-cc counts the same way (runner/graph/functions.cc,
check_call_budget), so both refuse in the same words.

A function in a cycle (one that calls itself, directly or not) is bounded at run time by the
depth limit; if it calls into its cycle more than once per call, its calls would multiply at
every level, and it counts as over the budget.
"""

from graphdef.ops.functional import CALLS

MAX_CALL_DEPTH = 64  # how deep calls may nest (a run refuses the 65th nested call)
MAX_CALLS = 1_000_000  # function calls, and nodes run by them, that one file may ask for
_OVER = MAX_CALLS + 1  # counts saturate here: past the budget, how far past does not matter


class CallBudgetError(ValueError):
    """The file's calls nest too deep or ask for too much work; the message names the call."""


def _call_sites(nodes):
    """(node, func attr, function name) for each function the call nodes among `nodes` name."""
    for node in nodes:
        for attr, _, _ in CALLS.get(node.op, ()):
            value = node.attr.get(attr)
            if value is not None and value.WhichOneof("value") == "func":
                yield node, attr, value.func.name


def check_call_budget(graph_def):
    """Raises CallBudgetError if a call of `graph_def` (a GraphDef) nests deeper than MAX_CALL_DEPTH
    or, with everything it calls, makes more than MAX_CALLS calls or runs more than MAX_CALLS nodes."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    if not functions:
        return
    callees = _Callees(functions)
    cost = {}
    state = _Tarjan()
    total_calls = total_nodes = 0
    for node, attr, name in _call_sites(graph_def.node):
        if name not in functions:
            continue  # refused where calls are checked, with the missing function named
        where = f"node '{node.name}' ({node.op}): attr '{attr}' calls '{name}'"
        if name not in cost and not _costs(name, functions, callees, cost, state):
            raise CallBudgetError(f"{where}, whose calls nest more than {MAX_CALL_DEPTH} deep, the most a run allows")
        calls, nodes, depth = cost[name]
        if depth > MAX_CALL_DEPTH:
            raise CallBudgetError(f"{where}, whose calls nest more than {MAX_CALL_DEPTH} deep, the most a run allows")
        total_calls = min(total_calls + 1 + calls, _OVER)
        total_nodes = min(total_nodes + nodes, _OVER)
        if total_calls > MAX_CALLS or total_nodes > MAX_CALLS:
            what = "function calls" if total_calls > MAX_CALLS else "nodes in function calls"
            raise CallBudgetError(f"{where}: the graph's calls would run more than {MAX_CALLS} {what}, "
                                  "the budget a file may ask for")


class _Callees(dict):
    """name -> the library functions its call nodes call, one entry per call, read when first asked."""

    def __init__(self, functions):
        super().__init__()
        self._functions = functions

    def __missing__(self, name):
        out = [callee for _, _, callee in _call_sites(self._functions[name].node_def) if callee in self._functions]
        self[name] = out
        return out


class _Tarjan:
    def __init__(self):
        self.index, self.low, self.on_stack, self.stack, self.counter = {}, {}, set(), [], 0


def _costs(root, functions, callees, cost, state):
    """Sets cost[name] = (calls one call of it makes, nodes it runs, how deep its calls nest) for
    `root` and every function it reaches; iterative (Tarjan's strongly connected components),
    since a chain may be far longer than Python's stack. False, at once, if a chain of calls
    from `root` is longer than MAX_CALL_DEPTH."""
    index, low, on_stack, stack = state.index, state.low, state.on_stack, state.stack
    work = [(root, 0)]
    while work:
        name, i = work.pop()
        if i == 0:
            if len(work) >= MAX_CALL_DEPTH:  # this call is nested in as many others: too deep already
                return False
            index[name] = low[name] = state.counter
            state.counter += 1
            stack.append(name)
            on_stack.add(name)
        out = callees[name]
        if i < len(out):
            work.append((name, i + 1))
            callee = out[i]
            if callee not in index:
                work.append((callee, 0))
            elif callee in on_stack:
                low[name] = min(low[name], index[callee])
            continue
        if work:  # the caller resumes: carry the lowest index up
            caller = work[-1][0]
            low[caller] = min(low[caller], low[name])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            _cost_of(component, functions, callees, cost)
    return True


def _cost_of(component, functions, callees, cost):
    """Sets cost[name] for the functions of one strongly connected component, whose callees
    outside it already have theirs."""
    members = set(component)
    calls = nodes = 0
    depth = 0
    inward = 0
    for name in component:
        nodes = min(nodes + len(functions[name].node_def), _OVER)
        into = 0
        for callee in callees[name]:
            if callee in members:
                into += 1
                continue
            c_calls, c_nodes, c_depth = cost[callee]
            calls = min(calls + 1 + c_calls, _OVER)
            nodes = min(nodes + c_nodes, _OVER)
            depth = max(depth, c_depth)
        inward = max(inward, into)
    if inward == 0:  # one function calling no function of its own component: no cycle
        cost[component[0]] = (calls, nodes, depth + 1)
        return
    if inward > 1:  # calls that multiply at every level, up to the depth limit
        calls = nodes = _OVER
    else:  # linear recursion, as deep as a run allows
        calls = min(MAX_CALL_DEPTH * (calls + 1), _OVER)
        nodes = min(MAX_CALL_DEPTH * nodes, _OVER)
    for name in component:
        cost[name] = (calls, nodes, depth + 1)  # the cycle's own depth is bounded at run time
