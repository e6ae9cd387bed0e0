"""TF1 control-flow ops: Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger.

These ops do not compute: they route values. A Switch forwards its data to one output and
leaves the other *dead*; an op with a dead input is dead itself, except Merge, which
forwards its first live input. Enter, Exit and NextIteration move a value into a loop frame,
out of it, and to the next iteration. The Session runs graphs holding them with its own
executor (graphdef/client/control_flow_exec.py); the kernels here state each op's effect on
values and deadness, for that executor and for anyone reading the op.
"""

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.array import zeros_like
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, same_as_input


class _Dead:
    """The value of a dead tensor: what a not-taken Switch output carries."""

    __slots__ = ()

    def __repr__(self):
        return "<dead>"


DEAD = _Dead()

# the op types that make a graph need the control-flow executor
CONTROL_FLOW_OPS = frozenset(("Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
                              "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger"))


def _relaxed(shapes):
    """The most specific shape every one of `shapes` fits (dims that differ become unknown)."""
    dims = None
    for s in shapes:
        if s.dims is None:
            return TensorShape(None)
        if dims is None:
            dims = list(s.dims)
        elif len(dims) != len(s.dims):
            return TensorShape(None)
        else:
            dims = [a if a == b else None for a, b in zip(dims, s.dims)]
    return TensorShape(dims)


def _infer_switch(ctx):
    pred = ctx.shape(1)
    if pred.dims is not None and len(pred.dims) != 0:
        raise ctx.error(f"pred must be a scalar bool, got shape {pred}")
    return [ctx.shape(0), ctx.shape(0)]


def _switch_kernel(data, pred):
    return (DEAD, data) if bool(pred) else (data, DEAD)


def _switch_grad(op, grad_false, grad_true):
    # an output nothing differentiates gets ZerosLike of that output: live exactly when its branch
    # is taken, so the Merge forwards whichever gradient the taken branch made
    if grad_false is None and grad_true is None:
        return [None, None]
    grads = [g if g is not None else zeros_like(t) for g, t in zip((grad_false, grad_true), op.outputs)]
    return [merge(grads, name="cond_grad")[0], None]


SWITCH = define(
    "Switch", "data: T, pred: bool -> output_false: T, output_true: T",
    doc="Forwards data to output_true if pred, else to output_false; the other output is dead.",
    attrs={"T": Attr("type")},
    infer=_infer_switch, kernel=_switch_kernel, grad=_switch_grad, numerics=EXACT)

def _infer_merge(ctx):
    return [_relaxed([t.shape for t in ctx.inputs]), TensorShape(())]


def _merge_kernel(*inputs):
    for i, value in enumerate(inputs):
        if value is not DEAD:
            return value, dtypes.int32.np.type(i)
    return DEAD, DEAD


def _merge_grad(op, grad, _index_grad):
    pred = cond_predicate(op)
    if len(op.inputs) != 2:
        raise LookupError(f"no gradient for '{op.name}' (Merge) with {len(op.inputs)} inputs; "
                          "only a cond's two-way Merge is differentiable")
    false_grad, true_grad = switch(grad, pred, name="cond_grad")
    return [false_grad, true_grad]


MERGE = define(
    "Merge", "inputs: N*T -> output: T, value_index: int32",
    doc="Forwards the first of its inputs to become live, and that input's index.",
    attrs={"T": Attr("type"), "N": Attr("int")},
    infer=_infer_merge, kernel=_merge_kernel, grad=_merge_grad, numerics=EXACT)


def _loop_only_grad(op, *grads):
    raise LookupError(f"no gradient for '{op.name}' ({op.type}): a while loop is differentiated as a "
                      "whole, from its Exits (graphdef/ops/while_gradients.py); this op was reached from inside one")


def _identity(data):
    return data


ENTER = define(
    "Enter", "data: T -> output: T",
    doc="Passes a value into the loop frame frame_name (to every iteration when is_constant).",
    attrs={"T": Attr("type"), "frame_name": Attr("string"), "is_constant": Attr("bool", False),
           "parallel_iterations": Attr("int", 10)},
    infer=same_as_input(), kernel=_identity, grad=_loop_only_grad, numerics=EXACT)

EXIT = define(
    "Exit", "data: T -> output: T",
    doc="Passes a loop's final value out of its frame to the enclosing one.",
    attrs={"T": Attr("type")},
    infer=same_as_input(), kernel=_identity, grad=_loop_only_grad, numerics=EXACT)

NEXT_ITERATION = define(
    "NextIteration", "data: T -> output: T",
    doc="Passes a value to the next iteration of its loop frame.",
    attrs={"T": Attr("type")},
    infer=same_as_input(), kernel=_identity, grad=_loop_only_grad, numerics=EXACT)


def _infer_loop_cond(ctx):
    s = ctx.shape(0)
    if s.dims is not None and len(s.dims) != 0:
        raise ctx.error(f"input must be a scalar bool, got shape {s}")
    return [TensorShape(())]


LOOP_COND = define(
    "LoopCond", "input: bool -> output: bool",
    doc="A loop's continue-condition; its output drives the loop's Switches.",
    infer=_infer_loop_cond, kernel=_identity, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _no_outputs():
    return ()


CONTROL_TRIGGER = define(
    "ControlTrigger", "->",
    doc="Does nothing; unlike NoOp it runs even when its control inputs are dead.",
    infer=lambda ctx: [], kernel=_no_outputs, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders -------------------------------------------------------------------------------

def switch(data, pred, name=None):
    """(output_false, output_true): data forwarded to one of them by pred."""
    return tuple(build("Switch", [data, pred], name=name, default_name="Switch").outputs)


def merge(inputs, name=None):
    """(output, value_index) of a Merge of `inputs`."""
    return tuple(build("Merge", [list(inputs)], name=name, default_name="Merge").outputs)


def cond_predicate(merge_op):
    """The pred of the cond a Merge closes: the cond context's, or the nearest Switch's above it."""
    context = merge_op.graph._op_context.get(merge_op.inputs[0].op)
    while context is not None:
        if getattr(context, "pred", None) is not None:
            return context.pred
        context = context.outer
    seen, stack = set(), [t.op for t in merge_op.inputs]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Switch":
            return op.inputs[1]
        stack.extend(t.op for t in op.inputs)
    raise LookupError(f"no gradient for '{merge_op.name}' (Merge): no Switch above it gives its predicate")
