"""What TF1's gradients of a while loop are built from: StackV2 and its push and pop, which keep each
forward iteration's values for the backward loop; and the small gradient ops of the cells they run
(SigmoidGrad, TanhGrad, ConcatOffset). A frozen TF1 graph holding tf.gradients through dynamic_rnn or
map_fn needs them.

A stack lives in its run, as a TensorArray does (graphdef.ops.tensor_array): StackV2's kernel makes a
new one each time it runs and its handle carries it to the pushes and pops, through loop frames.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT, elementwise_ulps
from graphdef.framework.shapes import TensorShape
from graphdef.ops.list_ops import MAX_LIST_ITEMS
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define, infer_broadcast


class _Stack:
    __slots__ = ("name", "dtype", "limit", "items", "closed")

    def __init__(self, name, dtype, limit):
        self.name, self.dtype, self.limit, self.items, self.closed = name, dtype, limit, [], False


def _stack(handle):
    stack = handle[0] if isinstance(handle, np.ndarray) and handle.shape == (2,) else None
    if not isinstance(stack, _Stack):
        raise ValueError("handle is not a stack's (the output of StackV2)")
    if stack.closed:
        raise ValueError(f"Stack {stack.name} has already been closed.")
    return stack


def _create(max_size, *, elem_type, stack_name, node):
    limit = int(max_size)
    limit = MAX_LIST_ITEMS if limit < 0 else min(limit, MAX_LIST_ITEMS)  # TF: negative means no limit
    handle = np.empty(2, object)
    handle[0], handle[1] = _Stack(stack_name or node, elem_type, limit), (stack_name or node).encode()
    return handle


STACK = define(
    "StackV2", "max_size: int32 -> handle: resource",
    doc="A new stack of elem_type for this run (max_size < 0: as deep as graphdef allows).",
    attrs={"elem_type": Attr("type"), "stack_name": Attr("string", "")},
    infer=lambda ctx: [TensorShape([2])], kernel=_create, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _push(handle, elem, *, swap_memory):
    stack = _stack(handle)
    elem = np.asarray(elem)
    if elem.dtype != stack.dtype.np:
        raise ValueError(f"Stack {stack.name} holds {stack.dtype.name}; cannot push a {elem.dtype.name} element")
    if len(stack.items) >= stack.limit:
        raise ValueError(f"Stack {stack.name} is full: it holds at most {stack.limit} elements")
    stack.items.append(elem)
    return elem


PUSH = define(
    "StackPushV2", "handle: resource, elem: T -> output: T",
    doc="Pushes elem and passes it on.",
    attrs={"T": Attr("type"), "swap_memory": Attr("bool", False)},
    infer=lambda ctx: [ctx.shape(1)], kernel=_push, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _pop(handle, *, elem_type):
    stack = _stack(handle)
    if not stack.items:
        raise ValueError(f"Stack {stack.name} is empty.")
    if stack.dtype is not elem_type:
        raise ValueError(f"Stack {stack.name} holds {stack.dtype.name}, the pop asks for {elem_type.name}")
    return stack.items.pop()


POP = define(
    "StackPopV2", "handle: resource -> elem: elem_type",
    doc="The element pushed last, removed.",
    attrs={"elem_type": Attr("type")},
    infer=lambda ctx: [TensorShape(None)], kernel=_pop, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _close(handle):
    _stack(handle).closed = True
    return ()


CLOSE = define(
    "StackCloseV2", "handle: resource ->",
    doc="Releases the stack.",
    infer=lambda ctx: [], kernel=_close, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _sigmoid_grad(y, dy):
    return (dy * y * (1 - y)).astype(y.dtype, copy=False)


def _tanh_grad(y, dy):
    return (dy * (1 - y * y)).astype(y.dtype, copy=False)


for _type, _kernel, _doc in (("SigmoidGrad", _sigmoid_grad, "dy * y * (1 - y): sigmoid's gradient from its output."),
                             ("TanhGrad", _tanh_grad, "dy * (1 - y * y): tanh's gradient from its output.")):
    define(_type, "y: T, dy: T -> z: T", doc=_doc, attrs={"T": Attr("type", allowed=dtypes.FLOATS)},
           infer=infer_broadcast, kernel=_kernel, grad=NOT_DIFFERENTIABLE, numerics=elementwise_ulps(4))


def _concat_offset(concat_dim, *shape, N):
    shapes = [np.asarray(s) for s in shape]
    rank = shapes[0].size
    axis = int(concat_dim)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < max(rank, 1):
        raise ValueError(f"Concat dim is out of range: {int(concat_dim)} vs. {rank}")
    offsets, at = [], 0
    for i, s in enumerate(shapes):
        if s.shape != shapes[0].shape:
            raise ValueError(f"input {i} should contain {rank} elements, but got {s.size}")
        if any(s[d] != shapes[0][d] for d in range(rank) if d != axis):
            raise ValueError(f"All dimensions except {axis} must match. Input {i} has shape {s.tolist()} and "
                             f"doesn't match input 0 with shape {shapes[0].tolist()}.")
        offset = np.zeros(rank, shapes[0].dtype)
        offset[axis] = at
        at += int(s[axis])
        offsets.append(offset)
    return offsets


CONCAT_OFFSET = define(
    "ConcatOffset", "concat_dim: int32, shape: N*shape_type -> offset: N*shape_type",
    doc="Where each input starts in a concat along concat_dim: ConcatV2's gradient slices by them.",
    attrs={"N": Attr("int"), "shape_type": Attr("type", dtypes.int32, allowed=dtypes.INDEX)},
    infer=lambda ctx: [ctx.shape(1 + i) for i in range(ctx.attrs["N"])], kernel=_concat_offset,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


