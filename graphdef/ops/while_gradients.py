"""The gradient of a tf.while_loop, built as a second loop that runs the iterations backwards.

TF1 keeps each forward value the backward pass needs on a stack. Here the forward loop keeps
only each iteration's body inputs, pushed onto a TensorList (an extra loop variable added to
the finished loop, so the forward values it returns are unchanged); the backward loop pops
them, rebuilds the body on them (the Python body is called again, inside the backward frame)
and asks tf.gradients for that one iteration, given the gradients flowing back from the next.
Gradients of loop constants (tensors from outside the body) are summed over iterations. A
loop nested in the body is rebuilt too, and its gradient is built the same way, inside.

Only float loop variables and loop constants get gradients; a loop carrying TensorLists, or
one read from a file (no Python body to rebuild), is refused with a message saying so.
"""

from graphdef.framework import dtypes
from graphdef.framework.shapes import TensorShape
from graphdef.ops import array, compare
from graphdef.ops.control_flow import merge, switch
from graphdef.ops.control_flow_api import _flatten, _pack, while_loop
from graphdef.ops.registry import build


def loop_of(op):
    """The WhileContext an Exit op ends, or None for any other op."""
    if op.type != "Exit":
        return None
    context = op.graph._loop_of_exit.get(op)
    if context is None:
        raise LookupError(f"no gradient for '{op.name}' (Exit): gradients through a while loop need the loop "
                          "built by tf.while_loop in this program (a loop read from a file has no Python body "
                          "to rebuild)")
    return context


def loop_inputs(context):
    """The outside tensors a loop reads: its loop variables' initial values, then its loop constants."""
    return ([e.op.inputs[0] for e in context.var_enters]
            + [enter.op.inputs[0] for enter in context.entered.values()])


def loop_gradients(context, out_grads, gradients):
    """Gradients for loop_inputs(context), given the gradients of its Exits (None where none flows)."""
    for t in context.identities:
        if t.dtype is dtypes.variant:
            raise LookupError(f"no gradient for the while loop '{context.name}': it carries a TensorList "
                              f"('{t.name}'); gradients through TensorList loop variables are not supported")
    saved = _saved_inputs(context)
    diff_vars = [i for i, t in enumerate(context.identities) if t.dtype.is_floating]
    constants = [(outside, enter) for outside, enter in context.entered.items() if outside.dtype.is_floating]
    var_grads0 = [out_grads[i] if out_grads[i] is not None else array.zeros_like(context.exits[i])
                  for i in diff_vars]
    sums0 = [array.zeros_like(enter.op.inputs[0]) for _, enter in constants]
    n, k = len(saved), len(diff_vars)

    def cond(*loop_vars):
        return compare.greater(build("TensorListLength", [loop_vars[0]]).outputs[0], 0)

    def body(*loop_vars):
        lists, var_grads, sums = loop_vars[:n], loop_vars[n:n + k], loop_vars[n + k:]
        rest, values = [], []
        for lst, t in zip(lists, context.identities):
            popped = build("TensorListPopBack", [lst, -1], attrs={"element_dtype": t.dtype}).outputs
            popped[1].set_shape(t.shape)
            rest.append(popped[0])
            values.append(popped[1])
        backward = lists[0].graph._control_flow_context
        result = context.body(*_pack(context.structure, values))
        result = [backward.process_output(v) for v in _flatten(
            result if isinstance(result, (list, tuple)) or len(values) == 1 else [result])]
        inside = [backward.entered.get(outside) for outside, _ in constants]
        targets = [values[i] for i in diff_vars] + [t for t in inside if t is not None]
        grads = gradients([result[i] for i in diff_vars], targets, grad_ys=list(var_grads))
        new_var_grads = [g if g is not None else array.zeros_like(values[i])
                         for g, i in zip(grads[:k], diff_vars)]
        found = iter(grads[k:])
        new_sums = []
        for total, t in zip(sums, inside):
            g = next(found) if t is not None else None
            new_sums.append(total if g is None else total + g)
        return rest + new_var_grads + new_sums

    invariants = ([TensorShape(())] * n + [context.identities[i].shape for i in diff_vars]
                  + [enter.op.inputs[0].shape for _, enter in constants])
    final = while_loop(cond, body, list(saved) + var_grads0 + sums0, shape_invariants=invariants,
                       parallel_iterations=context.parallel_iterations, name="while_grad",
                       return_same_structure=True)
    var_in = [None] * len(context.var_enters)
    for i, g in zip(diff_vars, final[n:n + k]):
        var_in[i] = g
    constant_in = {id(enter): g for (_, enter), g in zip(constants, final[n + k:])}
    return var_in + [constant_in.get(id(enter)) for enter in context.entered.values()]


def _saved_inputs(context):
    """Exits of TensorLists holding every iteration's body inputs, added to the loop once."""
    if context.saved is None:
        context.saved = [_accumulator(context, t) for t in context.identities]
    return context.saved


def _accumulator(context, value):
    graph = value.graph
    with context.in_outer(), graph.control_dependencies(None):
        empty = build("EmptyTensorList", [-1, -1], name="saved_empty",
                      attrs={"element_dtype": value.dtype, "shape_type": dtypes.int32}).outputs[0]
        enter = context.enter(empty, False, name="saved_enter")
    graph._op_context[enter.op] = context
    with context.active(), graph.control_dependencies(None):
        m = merge([enter, enter], name="saved_merge")[0]
        off, on = switch(m, context.loop_cond, name="saved_switch")
        current = array.identity(on, name="saved_identity")
        pushed = build("TensorListPushBack", [current, value], name="saved_push",
                       attrs={"element_dtype": value.dtype}).outputs[0]
        graph._update_input(m.op, 1, build("NextIteration", [pushed], name="saved_next").outputs[0])
    with context.in_outer():
        return build("Exit", [off], name="saved_exit").outputs[0]
