"""gradients(ys, xs): the backward pass, built as ordinary graph ops.

It walks only the ops on a path from an x to a y, in reverse topological order; each op's
gradient function (declared beside the op) turns the gradients of its outputs into
gradients of its inputs. Where a tensor fans out, its gradients are summed with AddN.

With gate_gradients (what optimizers ask for, TF1's GATE_OP), an op's input gradients are
released together: each passes an Identity that waits for all of them. Without that gate an
optimizer's update of a ref variable can run as soon as its own gradient exists, while another
gradient of the same op still has to read the variable (TensorFlow's reads of a ref variable
alias its buffer, so that read would see the updated value). The gate waits only for the
gradients that lead on to an x (TF's tf.tuple waits for all of them: the same names, fewer
control inputs), so a gradient nothing uses, a fed batch's, is never computed.
"""

from graphdef.ops import while_gradients
from graphdef.framework.graph import get_default_graph
from graphdef.ops.array import fill, group, identity, shape_of
from graphdef.ops.math import add_n
from graphdef.ops.registry import NOT_DIFFERENTIABLE, convert_to_tensor
from graphdef.framework.toposort import toposort


_GRAD_OF_NONE = frozenset(("Switch", "RefSwitch"))  # ops whose gradient takes None for an unused output


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _target(x):
    """A Variable is differentiated through its VariableV2 output, as TF1 does for ref variables."""
    if hasattr(x, "_variable"):
        return x._variable
    return convert_to_tensor(x)


def gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None, gate_gradients=False):
    """d(sum of ys)/d(x) for each x: a Tensor shaped like x, or None where ys does not depend on x."""
    graph = get_default_graph()
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [_target(x) for x in _as_list(xs)]
    grad_ys = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"gradients: {len(grad_ys)} grad_ys for {len(ys)} ys")
    stops = {_target(s).op for s in _as_list(stop_gradients or [])}

    between = _ops_between(ys, xs, stops)
    pending = {}  # tensor -> list of gradient contributions
    with graph.name_scope(name):
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if gy is None:  # d(y)/d(y) = ones shaped like y
                gy = fill(shape_of(y), convert_to_tensor(1, dtype=y.dtype), name=f"grad_ys_{i}")
            pending.setdefault(y, []).append(convert_to_tensor(gy, dtype=y.dtype))

        # a while loop is one step here, from its Exits back to what entered it (ops/while_gradients.py)
        def step(op):
            return while_gradients.loop_of(op) or op

        def inputs_of(node):
            tensors = while_gradients.loop_inputs(node) if not hasattr(node, "opdef") else node.inputs
            return [step(t.op) for t in tensors if t.op in between]

        order = toposort([step(y.op) for y in ys if y.op in between], inputs_of)
        for op in reversed(order):
            if not hasattr(op, "opdef"):
                _loop_step(op, pending, between)
                continue
            out_grads = [_sum(pending.get(t)) for t in op.outputs]
            if all(g is None for g in out_grads) or not any(t.op in between for t in op.inputs):
                continue  # nothing flows in, or nothing upstream leads back to an x
            grad_fn = op.opdef.grad
            if grad_fn is NOT_DIFFERENTIABLE or op in stops:
                continue
            if grad_fn is None:
                raise LookupError(f"no gradient for '{op.name}' ({op.type}); wrap its input in "
                                  f"stop_gradient() to treat it as constant")
            with graph.name_scope(op.name + "_grad"):
                # a Switch's missing gradient must stay dead with its branch: its own grad makes it
                filled = out_grads if op.type in _GRAD_OF_NONE else [
                    g if g is not None else _zeros_like(t) for g, t in zip(out_grads, op.outputs)]
                in_grads = grad_fn(op, *filled)
                if len(in_grads) != len(op.inputs):
                    raise AssertionError(f"gradient of {op.type} gave {len(in_grads)} values for "
                                         f"{len(op.inputs)} inputs")
                if gate_gradients and sum(g is not None for g in in_grads) > 1:
                    # the gate waits only for the gradients that flow on to an x: one of an input
                    # nothing needs (a fed batch's, into the first MatMul) is then never computed
                    in_grads = gradients_released_together(
                        graph, in_grads, waits_for=[g for t, g in zip(op.inputs, in_grads) if t.op in between])
            for t, g in zip(op.inputs, in_grads):
                if g is not None and t.op in between:
                    pending.setdefault(t, []).append(g)
        return [_sum(pending.get(x)) for x in xs]


def _loop_step(context, pending, between):
    out_grads = [_sum(pending.get(t)) for t in context.exits]
    if all(g is None for g in out_grads):
        return
    inputs = while_gradients.loop_inputs(context)
    for t, g in zip(inputs, while_gradients.loop_gradients(context, out_grads, gradients)):
        if g is not None and t.op in between:
            pending.setdefault(t, []).append(g)


def gradients_released_together(graph, grads, waits_for=None):
    """Each gradient through an Identity run after all of them (TF's tf.tuple, names included), or
    after all of `waits_for` (those of them that are used)."""
    waits_for = grads if waits_for is None else waits_for
    with graph.name_scope("tuple"):
        gate = group(*dict.fromkeys(g.op for g in waits_for if g is not None))
        with graph.control_dependencies([gate]):
            return [None if g is None else identity(g, name="control_dependency") for g in grads]


def _sum(grads):
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    return add_n(grads)


def _zeros_like(t):
    return fill(shape_of(t), convert_to_tensor(0, dtype=t.dtype))


def _ops_between(ys, xs, stops):
    """Ops both reachable forward from an x and backward from a y (iteratively: graphs are deep)."""
    graph = get_default_graph()
    forward = set()
    stack = [x.op for x in xs]
    while stack:
        op = stack.pop()
        if op in forward or op in stops:
            continue
        forward.add(op)
        for t in op.outputs:
            stack.extend(graph._consumers.get(t, ()))
    between = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in between or op not in forward:
            continue
        between.add(op)
        stack.extend(t.op for t in op.inputs)
    return between

