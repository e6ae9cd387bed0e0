"""TF1's TensorArrayV3 family: the arrays tf.compat.v1.map_fn, scan and nn.dynamic_rnn loop over.

A TensorArray lives for one run: TensorArrayV3's kernel makes a new `_Array` each time it runs, and
its handle output carries it (as TF's, a 2-vector: the array, then its name) to every op that uses
it, through Enter into a loop frame as any loop constant. So no array outlives its run or is
shared between runs or sessions. The float "flow" outputs carry no data; they only order the ops
that use one array, as in TensorFlow. The words of every refusal are TensorFlow's own
(tensor_array.h and tensor_array_ops.cc, single-spaced as graphrun prints them), the node named by
the runtime that ran it.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.list_ops import MAX_LIST_ITEMS
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, scalar_shape


RESOURCE = dtypes.resource  # the handle's dtype


class _Cleared:
    """An item read from an array with clear_after_read: refused to a second read, but kept for the
    replay of its read that a while loop's gradient makes (see REPLAY)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# graphdef's while-loop gradient rebuilds the loop body inside the backward loop (ops/while_gradients.py),
# so a body's TensorArray read and write are built a second time there. Those copies carry this attr:
# they recompute what the forward op did (a read returns the item even if cleared; a write of an item
# already written does nothing) so that their gradients can be built, and change no array.
REPLAY = "_replay"


class _Array:
    """One TensorArray's state in one run."""

    __slots__ = ("name", "dtype", "element_shape", "dynamic_size", "clear_after_read", "identical", "items",
                 "closed", "grads", "aggregate")

    def __init__(self, name, dtype, size, element_shape, dynamic_size, clear_after_read, identical,
                 aggregate=False):
        self.name, self.dtype = name, dtype
        self.element_shape = element_shape  # None (unknown rank) or a tuple, None for an unknown dim
        self.dynamic_size, self.clear_after_read, self.identical = dynamic_size, clear_after_read, identical
        self.items = [None] * size
        self.closed = False
        self.grads = {}            # source -> the gradient array TensorArrayGradV3 made for it
        self.aggregate = aggregate  # a gradient array sums its writes, as TF's multiple_writes_aggregate

    def _check_open(self):
        if self.closed:
            raise ValueError(f"TensorArray {self.name} has already been closed.")

    def write(self, index, value):
        self._check_open()
        value = np.asarray(value)
        if value.dtype != self.dtype.np:
            raise ValueError(f"TensorArray dtype is {_tf_name(self.dtype)} but Op is trying to write dtype "
                             f"{_tf_name(dtypes.as_dtype(value.dtype))}.")
        i = int(index)
        if i < 0 or i >= len(self.items):
            if not self.dynamic_size or i < 0:
                raise ValueError(f"TensorArray {self.name}: Tried to write to index {i} but array is not "
                                 f"resizeable and size is: {len(self.items)}")
            _check_count(i + 1)
            self.items.extend([None] * (i + 1 - len(self.items)))
        if self.element_shape is not None and not _fits(value.shape, self.element_shape):
            raise ValueError(f"TensorArray {self.name}: Could not write to TensorArray index {i} because the "
                             f"value shape is {_show(value.shape)} which is incompatible with the TensorArray's "
                             f"inferred element shape: {_show(self.element_shape)} (consider setting "
                             "infer_shape=False).")
        old = self.items[i]
        if isinstance(old, _Cleared):
            raise ValueError(f"TensorArray {self.name}: Could not write to TensorArray index {i} because it "
                             "has already been read.")
        if old is not None:
            if not self.aggregate:
                raise ValueError(f"TensorArray {self.name}: Could not write to TensorArray index {i} because it "
                                 "has already been written to.")
            if old.shape != value.shape:
                raise ValueError(f"TensorArray {self.name}: Could not aggregate to TensorArray index {i} because "
                                 f"the existing shape is {_show(old.shape)} but the new input shape is "
                                 f"{_show(value.shape)}.")
            value = old + value
        if self.identical and (self.element_shape is None or None in self.element_shape):
            self.element_shape = value.shape  # identical_element_shapes: the first write fixes them all
        self.items[i] = value

    def read(self, index, dtype, replay=False):
        self._check_open()
        if dtype is not self.dtype:
            raise ValueError(f"TensorArray dtype is {_tf_name(self.dtype)} but Op requested dtype "
                             f"{_tf_name(dtype)}.")
        i = int(index)
        if not 0 <= i < len(self.items):
            raise ValueError(f"Tried to read from index {i} but array size is: {len(self.items)}")
        item = self.items[i]
        if isinstance(item, _Cleared) and replay:
            return item.value
        if isinstance(item, _Cleared):
            raise ValueError(f"TensorArray {self.name}: Could not read index {i} twice because it was cleared "
                             "after a previous read (perhaps try setting clear_after_read = false?).")
        if item is None:
            shape = self.element_shape
            if shape is None or None in shape:
                raise ValueError(f"TensorArray {self.name}: Could not read from TensorArray index {i}. "
                                 f"Furthermore, the element shape is not fully defined: {_show(shape)}. "
                                 "If you set the full element_shape property on the forward TensorArray, "
                                 "the all-zeros tensor is returned instead of this error.")
            check_size(shape, self.dtype.np)
            return np.zeros(shape, self.dtype.np)
        if self.clear_after_read and not self.aggregate and not replay:
            self.items[i] = _Cleared(item)
        return item


def _tf_name(dtype):
    return {"float32": "float", "float64": "double", "float16": "half"}.get(dtype.name, dtype.name)


def _show(dims):
    return "<unknown>" if dims is None else "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _fits(shape, promised):
    return len(shape) == len(promised) and all(p is None or p == s for s, p in zip(shape, promised))


def _check_count(n):
    if not 0 <= n <= MAX_LIST_ITEMS:
        raise ValueError(f"a TensorArray's size must be in 0..{MAX_LIST_ITEMS}, got {n}")
    return n


def _dims(shape):
    """A shape attr as None (unknown rank) or a tuple with None for unknown dims."""
    shape = TensorShape(shape)
    return None if shape.dims is None else tuple(shape.dims)


def _array(handle):
    array = handle[0] if isinstance(handle, np.ndarray) and handle.shape == (2,) else None
    if not isinstance(array, _Array):
        raise ValueError("handle is not a TensorArray's (the output of TensorArrayV3 or TensorArrayGradV3)")
    return array


def _handle(array):
    handle = np.empty(2, object)
    handle[0], handle[1] = array, array.name.encode()
    return handle


_FLOW = np.float32(0)


def _flow(flow_in):
    return np.asarray(flow_in, np.float32)


def _source_shape(tensor):
    """The element shape of the TensorArrayV3 a handle comes from (through Enter, Identity, Switch,
    Merge), for shape inference; None when it cannot be seen."""
    op = tensor.op
    for _ in range(64):
        if op.type in ("TensorArrayV3",):
            return op.attrs["element_shape"]
        if op.type not in ("Enter", "RefEnter", "Identity", "Switch", "RefSwitch", "Merge", "RefMerge") \
                or not op.inputs or op.inputs[0] is None:
            return None
        op = op.inputs[0].op
    return None


# -- ops ------------------------------------------------------------------------------------------

def _create(size, *, dtype, element_shape, dynamic_size, clear_after_read, identical_element_shapes,
            tensor_array_name, node):
    n = _check_count(int(size))
    name = tensor_array_name.decode("utf-8", "replace") if isinstance(tensor_array_name, bytes) else tensor_array_name
    array = _Array(name or node, dtype, n, _dims(element_shape), dynamic_size, clear_after_read,
                   identical_element_shapes)
    return _handle(array), _FLOW


CREATE = define(
    "TensorArrayV3", "size: int32 -> handle: resource, flow: float32",
    doc="A new array of size items of dtype, for this run: its handle and the flow that orders its ops.",
    attrs={"dtype": Attr("type"), "element_shape": Attr("shape", None), "dynamic_size": Attr("bool", False),
           "clear_after_read": Attr("bool", True), "identical_element_shapes": Attr("bool", False),
           "tensor_array_name": Attr("string", "")},
    infer=lambda ctx: [TensorShape([2]), TensorShape(())], kernel=_create, grad=NOT_DIFFERENTIABLE,
    stateful=True, numerics=EXACT)


def _write(handle, index, value, flow_in, *, _replay):
    array = _array(handle)
    if not (_replay and 0 <= int(index) < len(array.items) and array.items[int(index)] is not None):
        array.write(index, value)
    return _flow(flow_in)


def _write_grad(op, flow_grad):
    handle, index = op.inputs[0], op.inputs[1]
    grad_handle, grad_flow = _grad_array(op, handle, flow_grad)
    value = build_op("TensorArrayReadV3", [grad_handle, index, grad_flow], dtype=op.attrs["T"])
    value._shape = op.inputs[2].shape  # the gradient array's items have the written value's shape
    return [None, None, value, flow_grad]


WRITE = define(
    "TensorArrayWriteV3", "handle: resource, index: int32, value: T, flow_in: float32 -> flow_out: float32",
    doc="Writes value at index (once; a gradient array adds what is written twice).",
    attrs={"T": Attr("type"), REPLAY: Attr("bool", False)}, infer=scalar_shape, kernel=_write,
    grad=_write_grad, stateful=True,
    numerics=EXACT)


def _read(handle, index, flow_in, *, dtype, _replay):
    return _array(handle).read(index, dtype, _replay)


def _infer_read(ctx):
    return [TensorShape(_source_shape(ctx.inputs[0]))]


def _read_grad(op, g):
    handle, index, flow = op.inputs
    grad_handle, grad_flow = _grad_array(op, handle, flow)
    flow_out = build_op("TensorArrayWriteV3", [grad_handle, index, g, grad_flow])
    return [None, None, flow_out]


READ = define(
    "TensorArrayReadV3", "handle: resource, index: int32, flow_in: float32 -> value: dtype",
    doc="The item at index (zeros where never written, if the element shape is fully known).",
    attrs={"dtype": Attr("type"), REPLAY: Attr("bool", False)}, infer=_infer_read, kernel=_read,
    grad=_read_grad, stateful=True,
    numerics=EXACT)


def _gather(handle, indices, flow_in, *, dtype, element_shape):
    array = _array(handle)
    indices = np.asarray(indices).reshape(-1)
    if indices.size == 0:
        dims = _dims(element_shape)
        if dims is None or None in dims:
            dims = array.element_shape
        if dims is None or None in dims:
            raise ValueError(f"TensorArray has size zero, but element shape {_show(dims)} is not fully "
                             "defined. Currently only static shapes are supported when packing zero-size "
                             "TensorArrays.")
        return np.zeros((0,) + dims, dtype.np)
    items = [array.read(i, dtype) for i in indices]
    for k, item in enumerate(items[1:], 1):
        if item.shape != items[0].shape:
            raise ValueError(f"TensorArray has inconsistent shapes. Index {indices[0]} has shape: "
                             f"{_show(items[0].shape)} but index {indices[k]} has shape: {_show(item.shape)}")
    check_size((len(items),) + items[0].shape, dtype.np)
    return np.stack(items)


def _infer_gather(ctx):
    dims = _dims(ctx.attrs["element_shape"])
    if dims is None:
        dims = _source_shape(ctx.inputs[0])
        dims = None if dims is None else _dims(dims)
    n = ctx.shape(1).dims[0] if ctx.shape(1).dims else None
    return [TensorShape(None if dims is None else [n, *dims])]


def _gather_grad(op, g):
    handle, indices, flow = op.inputs
    grad_handle, grad_flow = _grad_array(op, handle, flow)
    return [None, None, build_op("TensorArrayScatterV3", [grad_handle, indices, g, grad_flow])]


GATHER = define(
    "TensorArrayGatherV3", "handle: resource, indices: int32, flow_in: float32 -> value: dtype",
    doc="The items at indices stacked along a new first dim (TensorArray.stack gathers them all).",
    attrs={"dtype": Attr("type"), "element_shape": Attr("shape", None)},
    infer=_infer_gather, kernel=_gather, grad=_gather_grad, stateful=True, numerics=EXACT)


def _scatter(handle, indices, value, flow_in):
    array = _array(handle)
    indices, value = np.asarray(indices).reshape(-1), np.asarray(value)
    if value.ndim == 0 or value.shape[0] != indices.size:
        raise ValueError(f"Expected len(indices) == values.shape[0], but saw: {indices.size} vs. "
                         f"{value.shape[0] if value.ndim else 'a scalar'}")
    if indices.size and not array.dynamic_size and indices.max() >= len(array.items):
        raise ValueError(f"Max scatter index must be < array size ({indices.max()} vs. {len(array.items)})")
    for i, item in zip(indices, value):
        array.write(i, item)
    return _flow(flow_in)


def _scatter_grad(op, flow_grad):
    handle, indices = op.inputs[0], op.inputs[1]
    grad_handle, grad_flow = _grad_array(op, handle, flow_grad)
    value = build_op("TensorArrayGatherV3", [grad_handle, indices, grad_flow], dtype=op.attrs["T"],
                     element_shape=TensorShape(op.inputs[2].shape.dims[1:] if op.inputs[2].shape.dims else None))
    value._shape = op.inputs[2].shape
    return [None, None, value, flow_grad]


SCATTER = define(
    "TensorArrayScatterV3",
    "handle: resource, indices: int32, value: T, flow_in: float32 -> flow_out: float32",
    doc="Writes value[k] at indices[k] (TensorArray.unstack scatters a tensor's rows).",
    attrs={"T": Attr("type")}, infer=scalar_shape, kernel=_scatter, grad=_scatter_grad, stateful=True,
    numerics=EXACT)


def _concat(handle, flow_in, *, dtype, element_shape_except0):
    array = _array(handle)
    items = [array.read(i, dtype) for i in range(len(array.items))]
    for i, item in enumerate(items):
        if item.ndim == 0:
            raise ValueError(f"Concat saw a scalar shape at index {i} but requires at least vectors.")
        if item.shape[1:] != items[0].shape[1:]:
            raise ValueError(f"TensorArray has inconsistent shapes. Index 0 has (excepting dimension 0) shape: "
                             f"{_show(items[0].shape[1:])} but index {i} has (excepting dimension 0) shape: "
                             f"{_show(item.shape[1:])}")
    lengths = np.array([item.shape[0] for item in items], np.int64)
    if not items:
        dims = _dims(element_shape_except0)
        if dims is None or None in dims:
            raise ValueError(f"TensorArray has size zero, but element_shape_except0 {_show(dims)} is not fully "
                             "defined. Currently only static shapes are supported when concatenating zero-size "
                             "TensorArrays.")
        return np.zeros((0,) + dims, dtype.np), lengths
    check_size((int(lengths.sum()),) + items[0].shape[1:], dtype.np)
    return np.concatenate(items), lengths


def _concat_grad(op, g, lengths_grad):
    handle, flow = op.inputs
    grad_handle, grad_flow = _grad_array(op, handle, flow)
    return [None, build_op("TensorArraySplitV3", [grad_handle, g, op.outputs[1], grad_flow])]


CONCAT = define(
    "TensorArrayConcatV3", "handle: resource, flow_in: float32 -> value: dtype, lengths: int64",
    doc="Every item concatenated along dim 0, and each item's length there.",
    attrs={"dtype": Attr("type"), "element_shape_except0": Attr("shape", None)},
    infer=lambda ctx: [TensorShape(None), TensorShape([None])], kernel=_concat, grad=_concat_grad,
    stateful=True, numerics=EXACT)


def _split(handle, value, lengths, flow_in):
    array = _array(handle)
    value, lengths = np.asarray(value), np.asarray(lengths).reshape(-1)
    if value.ndim == 0:
        raise ValueError("Expected value to be at least a vector, but received shape: []")
    if (lengths < 0).any() or int(lengths.sum()) != value.shape[0]:
        raise ValueError(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                         f"{int(lengths.sum())} and value's shape is: {_show(value.shape)}")
    if not array.dynamic_size and lengths.size != len(array.items):
        raise ValueError(f"TensorArray's size is not equal to the size of lengths ({len(array.items)} vs. "
                         f"{lengths.size}), and the TensorArray is not marked as dynamically resizeable")
    start = 0
    for i, n in enumerate(lengths):
        array.write(i, value[start:start + int(n)])
        start += int(n)
    return _flow(flow_in)


def _split_grad(op, flow_grad):
    handle, _, lengths, _ = op.inputs
    grad_handle, grad_flow = _grad_array(op, handle, flow_grad)
    value = build_op("TensorArrayConcatV3", [grad_handle, grad_flow], dtype=op.attrs["T"])[0]
    value._shape = op.inputs[1].shape
    return [None, value, None, flow_grad]


SPLIT = define(
    "TensorArraySplitV3",
    "handle: resource, value: T, lengths: int64, flow_in: float32 -> flow_out: float32",
    doc="Writes consecutive slices of value, lengths[k] rows each, at indices 0, 1, ...",
    attrs={"T": Attr("type")}, infer=scalar_shape, kernel=_split, grad=_split_grad, stateful=True,
    numerics=EXACT)


def _size(handle, flow_in):
    return np.int32(len(_array(handle).items))


SIZE = define(
    "TensorArraySizeV3", "handle: resource, flow_in: float32 -> size: int32",
    doc="The number of items (grown by writes past the end of a dynamic_size array).",
    infer=scalar_shape, kernel=_size, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _close(handle):
    array = _array(handle)
    array.closed = True
    array.items = [None] * len(array.items)  # its memory is released now, as TF's
    return ()


CLOSE = define(
    "TensorArrayCloseV3", "handle: resource ->",
    doc="Releases the array's items; later use is an error.",
    infer=lambda ctx: [], kernel=_close, grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


def _grad_of(array, source, prepend=()):
    """The gradient array of `array` for `source`: made on first use, then shared by every op that asks."""
    array._check_open()
    grad = array.grads.get(source)
    if grad is None:
        shape = None if array.element_shape is None else tuple(prepend) + tuple(array.element_shape)
        grad = array.grads[source] = _Array(f"{array.name}@{source}", array.dtype, len(array.items), shape,
                                            False, True, False, aggregate=True)
    return grad


def _make_grad(handle, flow_in, *, source):
    return _handle(_grad_of(_array(handle), source)), _flow(flow_in)


GRAD = define(
    "TensorArrayGradV3", "handle: resource, flow_in: float32 -> grad_handle: resource, flow_out: float32",
    doc="The array holding the gradients of handle's items for one gradient computation (source).",
    attrs={"source": Attr("string")},
    infer=lambda ctx: [TensorShape([2]), TensorShape(())], kernel=_make_grad, grad=NOT_DIFFERENTIABLE,
    stateful=True, numerics=EXACT)


def _make_grad_with_shape(handle, flow_in, shape_to_prepend, *, source):
    prepend = tuple(int(d) for d in np.asarray(shape_to_prepend).reshape(-1))
    return _handle(_grad_of(_array(handle), source, prepend)), _flow(flow_in)


GRAD_WITH_SHAPE = define(
    "TensorArrayGradWithShape",
    "handle: resource, flow_in: float32, shape_to_prepend: int32 -> grad_handle: resource, flow_out: float32",
    doc="TensorArrayGradV3 whose items have shape_to_prepend's dims before the forward element shape.",
    attrs={"source": Attr("string")},
    infer=lambda ctx: [TensorShape([2]), TensorShape(())], kernel=_make_grad_with_shape,
    grad=NOT_DIFFERENTIABLE, stateful=True, numerics=EXACT)


# -- gradients: what TF's tensor_array_grad.py builds ----------------------------------------------

def build_op(op_type, inputs, **attrs):
    op = build(op_type, inputs, attrs=attrs)
    return op.outputs[0] if len(op.outputs) == 1 else op.outputs


def _grad_array(op, handle, flow):
    """The gradient array for the forward array `handle`, ordered after `flow` (TF's source is the
    gradient's name scope: one gradient computation shares one array)."""
    source = op.graph._name_stack.split("/")[0] if op.graph._name_stack else "gradients"
    return build_op("TensorArrayGradV3", [handle, flow], source=source)
