"""tf.cond, tf.case and tf.while_loop, built as TF1 builds them (control flow v1).

A cond is a Switch per value entering a branch and a Merge per result; a while loop is, per
loop variable, Enter -> Merge -> Switch(LoopCond) -> Identity -> body -> NextIteration (back
into the Merge) and Switch -> Exit, in a frame named like TF1's ('while/while_context').
While a branch or a body is built, its context is the graph's current control-flow context:
registry.build asks it to adjust every new op's inputs, so a tensor from outside enters
through a Switch (cond) or a constant Enter (loop), and an op without inputs gets a control
input from the context's pivot, so it runs only when the branch or iteration does.
"""

import contextlib

from graphdef.framework.graph import get_default_graph
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops import array, compare, math
from graphdef.ops.control_flow import merge, switch
from graphdef.ops.registry import build, convert_to_tensor


class _Context:
    """A cond branch or a loop body being built; `outer` is the context it sits in."""

    pred = None

    def __init__(self, graph):
        self.graph = graph
        self.outer = graph._control_flow_context
        self.entered = {}  # outside tensor -> its stand-in inside this context

    def contains(self, tensor):
        context = self.graph._op_context.get(tensor.op)
        while context is not None:
            if context is self:
                return True
            context = context.outer
        return False

    def adjust(self, inputs, control_inputs):
        """The inputs a new op of this context really takes (registry.build calls this)."""
        inputs = [self.add_value(t) for t in inputs]
        if not inputs and not control_inputs:
            control_inputs = [self.pivot().op]
        return inputs, control_inputs

    def add_value(self, tensor):
        if self.contains(tensor):
            return tensor
        found = self.entered.get(tensor)
        if found is None:
            outside = self.outer.add_value(tensor) if self.outer is not None else tensor
            with self.in_outer(), self.graph.control_dependencies(None):
                found = self.bring_in(outside)
            self.graph._op_context[found.op] = self
            self.entered[tensor] = found
        return found

    def process_output(self, value):
        return self.add_value(convert_to_tensor(value))

    @contextlib.contextmanager
    def in_outer(self):
        saved, self.graph._control_flow_context = self.graph._control_flow_context, self.outer
        try:
            yield
        finally:
            self.graph._control_flow_context = saved

    @contextlib.contextmanager
    def active(self):
        saved, self.graph._control_flow_context = self.graph._control_flow_context, self
        try:
            yield
        finally:
            self.graph._control_flow_context = saved


class CondContext(_Context):
    def __init__(self, graph, pred, pivot, branch):
        super().__init__(graph)
        self.pred, self._pivot, self.branch = pred, pivot, branch

    def pivot(self):
        return self._pivot

    def bring_in(self, tensor):
        return switch(tensor, self.pred)[self.branch]


class WhileContext(_Context):
    def __init__(self, graph, name, parallel_iterations):
        super().__init__(graph)
        self.name, self.parallel_iterations = name, parallel_iterations
        self.pivot_for_pred = self.pivot_for_body = None
        # filled by _build_loop: the Python body and structure (a gradient recomputes the body
        # from each iteration's saved inputs), the LoopCond output, and per loop variable its
        # Enter, body input (Identity) and Exit
        self.body = self.structure = self.loop_cond = None
        self.var_enters, self.identities, self.exits = [], [], []
        self.saved = None  # the TensorLists of every iteration's body inputs, once a gradient asked

    def pivot(self):
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def enter(self, tensor, is_constant, name="Enter"):
        return build("Enter", [tensor], name=name, attrs={
            "frame_name": self.name, "is_constant": is_constant,
            "parallel_iterations": self.parallel_iterations}).outputs[0]

    def bring_in(self, tensor):
        return self.enter(tensor, True)


# -- nested structures --------------------------------------------------------------------

def _flatten(structure):
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in _flatten(item)]
    return [structure]


def _pack(structure, flat):
    """`flat`'s leaves in the shape of `structure` (lists, tuples, namedtuples, dicts)."""
    leaves = iter(flat)

    def pack(s):
        if isinstance(s, dict):
            packed = {k: pack(s[k]) for k in sorted(s)}
            return {k: packed[k] for k in s}
        if isinstance(s, (list, tuple)):
            items = [pack(item) for item in s]
            if isinstance(s, list):
                return items
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        return next(leaves)
    return pack(structure)


def _same_structure(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a) == sorted(b) and all(
            _same_structure(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same_structure(x, y) for x, y in zip(a, b)))
    return True


# -- cond and case ----------------------------------------------------------------------------

def cond(pred, true_fn=None, false_fn=None, strict=False, name=None):
    """true_fn() if pred else false_fn(), as a Switch/Merge graph; returns the branch's structure
    (a one-item list or tuple as its item, as TF1 does unless strict)."""
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callables")
    graph = get_default_graph()
    pred = convert_to_tensor(pred)
    if pred.dtype.name != "bool" or (pred.shape.dims is not None and pred.shape.dims != ()):
        raise ValueError(f"cond: pred must be a scalar bool tensor, got '{pred.name}' "
                         f"({pred.dtype.name}, {show(pred.shape)})")
    with graph.name_scope(name or "cond"):
        p_false, p_true = switch(pred, pred)
        pivot_true = array.identity(p_true, name="switch_t")
        pivot_false = array.identity(p_false, name="switch_f")
        pred_id = array.identity(pred, name="pred_id")
        results = []
        for branch, pivot, fn in ((1, pivot_true, true_fn), (0, pivot_false, false_fn)):
            context = CondContext(graph, pred_id, pivot, branch)
            with context.active():
                out = fn()
                if out is None:
                    raise ValueError(f"cond: {'true_fn' if branch else 'false_fn'} returned None; "
                                     "both branches must return tensors")
                flat = [context.process_output(v) for v in _flatten(out)]
            results.append((out, flat))
        (out_t, flat_t), (out_f, flat_f) = results
        if not _same_structure(out_t, out_f) or len(flat_t) != len(flat_f):
            raise ValueError("cond: true_fn and false_fn must return the same structure of tensors")
        merged = []
        for t, f in zip(flat_t, flat_f):
            if t.dtype is not f.dtype:
                raise TypeError(f"cond: the branches return {t.dtype.name} ('{t.name}') and "
                                f"{f.dtype.name} ('{f.name}') for the same output")
            merged.append(merge([f, t])[0])
    packed = _pack(out_t, merged)
    if not strict and isinstance(packed, (list, tuple)) and len(packed) == 1:
        return packed[0]
    return packed


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The fn of the first true pred (else default()), as nested conds like TF1's case."""
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if default is None:
        if not pairs:
            raise ValueError("case: needs at least one (pred, fn) pair or a default")
        *pairs, (_, default) = pairs
    graph = get_default_graph()
    with graph.name_scope(name):
        fn = default
        for pred, branch_fn in reversed(pairs):
            fn = (lambda p, t, f: lambda: cond(p, t, f, strict=strict))(pred, branch_fn, fn)
        return fn()


# -- while_loop -----------------------------------------------------------------------------

def _fits(shape, invariant):
    """Whether `shape` satisfies the shape invariant (every dim it fixes)."""
    if invariant.dims is None:
        return True
    if shape.dims is None or len(shape.dims) != len(invariant.dims):
        return False
    return all(i is None or i == s for s, i in zip(shape.dims, invariant.dims))


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """Repeats body(*loop_vars) while cond(*loop_vars), as TF1's Enter/Merge/Switch/Exit frame."""
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callables")
    graph = get_default_graph()
    single = not isinstance(loop_vars, (list, tuple, dict))
    structure = [loop_vars] if single else loop_vars
    invariants = None
    if shape_invariants is not None:
        invariants = _flatten([shape_invariants] if single else shape_invariants)
    with graph.name_scope(name or "while"):
        if maximum_iterations is not None:
            limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            counter = array.constant(0, dtype=limit.dtype, name="iteration_counter")
            user_cond, user_body = cond, body
            cond = lambda i, lv: compare.logical_and(compare.less(i, limit), user_cond(*lv))  # noqa: E731
            body = lambda i, lv: (math.add(i, 1), _as_list(user_body(*lv)))  # noqa: E731
            structure = [counter, list(structure)]
            if invariants is not None:
                invariants = [TensorShape(())] + invariants
        flat = [convert_to_tensor(v) for v in _flatten(structure)]
        if invariants is not None and len(invariants) != len(flat):
            raise ValueError(f"while_loop: {len(invariants)} shape_invariants for {len(flat)} loop variables")
        context = WhileContext(graph, graph.unique_name("while_context"), parallel_iterations)
        with context.active():
            exits = _build_loop(graph, context, cond, body, structure, flat, invariants)
    packed = _pack(structure, exits)
    if maximum_iterations is not None:
        packed = packed[1]
        if not single and isinstance(loop_vars, tuple):
            packed = type(loop_vars)(*packed) if hasattr(loop_vars, "_fields") else tuple(packed)
    if not return_same_structure and len(_flatten(packed)) == 1:  # TF1 unpacks a lone loop variable
        return _flatten(packed)[0]
    return packed


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _build_loop(graph, context, cond, body, structure, flat, invariants):
    with context.in_outer():
        outside = [context.outer.add_value(t) if context.outer is not None else t for t in flat]
    enters = []
    for i, t in enumerate(outside):
        with context.in_outer(), graph.control_dependencies(None):
            e = context.enter(t, False)
        graph._op_context[e.op] = context
        if invariants is not None:
            wanted = TensorShape(invariants[i])
            if not _fits(t.shape, wanted):
                raise ValueError(f"while_loop: loop variable '{t.name}' has shape {show(t.shape)}, which does "
                                 f"not fit its shape invariant {show(wanted)}")
            e._shape = wanted
        enters.append(e)
    merges = [merge([e, e])[0] for e in enters]
    context.pivot_for_pred = merges[0]
    c = context.process_output(cond(*_pack(structure, merges)))
    if c.dtype.name != "bool" or (c.shape.dims is not None and c.shape.dims != ()):
        raise ValueError(f"while_loop: cond must return a scalar bool, got '{c.name}' "
                         f"({c.dtype.name}, {show(c.shape)})")
    pivot = build("LoopCond", [c], name="LoopCond").outputs[0]
    switches = [switch(m, pivot) for m in merges]
    identities = [array.identity(s[1]) for s in switches]
    context.pivot_for_body = identities[0]
    result = body(*_pack(structure, identities))
    result_flat = _flatten(_as_list(result) if len(structure) > 1 or isinstance(result, (list, tuple))
                           else [result])
    if len(result_flat) != len(merges):
        raise ValueError(f"while_loop: body returned {len(result_flat)} values for {len(merges)} loop variables")
    result_flat = [context.process_output(v) for v in result_flat]
    for m, r, e in zip(merges, result_flat, enters):
        if r.dtype is not m.dtype:
            raise TypeError(f"while_loop: loop variable '{e.op.inputs[0].name}' is {m.dtype.name} but the "
                            f"body returns {r.dtype.name} ('{r.name}')")
        if not _fits(r.shape, m.shape):
            raise ValueError(f"while_loop: input tensor '{e.op.inputs[0].name}' enters the loop with shape "
                             f"{show(m.shape)}, but has shape {show(r.shape)} after one iteration; to allow "
                             "the shape to vary across iterations, use the shape_invariants argument")
        nxt = build("NextIteration", [r], name="NextIteration").outputs[0]
        graph._update_input(m.op, 1, nxt)
    exits = []
    with context.in_outer():
        for s in switches:
            exits.append(build("Exit", [s[0]], name="Exit").outputs[0])
    context.body, context.structure, context.loop_cond = body, structure, pivot
    context.var_enters, context.identities, context.exits = enters, identities, exits
    for e in exits:  # what the loop's gradient needs is found from its Exits (ops/while_gradients.py)
        graph._loop_of_exit[e.op] = context
    return exits

