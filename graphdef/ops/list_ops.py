"""TensorList ops, as Keras RNNs frozen to TF1 control flow use them.

A TensorList is a DT_VARIANT value: here an immutable `TensorList` holding the element dtype,
the element shape it promises (possibly partly unknown) and a tuple of items, None for an
item not yet set. Every op returns a new list, so a value seen by one iteration of a loop is
never changed by the next. Variants cannot be fed or fetched; they only travel between ops.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.registry import (MAX_RANK, NOT_DIFFERENTIABLE, Attr, constant_value, define,
                                   scalar_shape)

# the most items one list may hold: a file's TensorListReserve(10**12) is refused, not allocated
MAX_LIST_ITEMS = 1 << 24
_SHAPE_TYPES = frozenset((dtypes.int32, dtypes.int64))


class TensorList:
    """An immutable list of tensors of one dtype; `element_shape` is None (unknown rank) or a
    tuple whose unknown dims are None."""

    __slots__ = ("element_dtype", "element_shape", "items")

    def __init__(self, element_dtype, element_shape, items):
        self.element_dtype = element_dtype
        self.element_shape = element_shape
        self.items = tuple(items)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"<TensorList of {len(self.items)} {self.element_dtype.name} {self.element_shape}>"


def _shape_from_value(value, what="element_shape"):
    """A shape tensor's value (-1 for unknown rank, -1 for an unknown dim) as None or a tuple."""
    value = np.asarray(value)
    if value.ndim == 0:
        if int(value) != -1:
            raise ValueError(f"{what} as a scalar must be -1 (unknown rank), got {int(value)}")
        return None
    if value.ndim != 1 or value.size > MAX_RANK:
        raise ValueError(f"{what} must be a vector of at most {MAX_RANK} dims, got shape {value.shape}")
    dims = tuple(None if int(d) == -1 else int(d) for d in value)
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"{what} has a negative dim: {value.tolist()}")
    return dims


def _merge_shapes(a, b, where):
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(x is not None and y is not None and x != y for x, y in zip(a, b)):
        raise ValueError(f"{where}: element shapes {_show(a)} and {_show(b)} are incompatible")
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _show(dims):
    return "<unknown>" if dims is None else "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _check_item(lst, item, where):
    if item.dtype != lst.element_dtype.np:
        raise ValueError(f"{where}: item is {item.dtype}, the list holds {lst.element_dtype.name}")
    _merge_shapes(lst.element_shape, item.shape, where)


def _count(n, what):
    n = int(n)
    if not 0 <= n <= MAX_LIST_ITEMS:
        raise ValueError(f"{what} must be in 0..{MAX_LIST_ITEMS}, got {n}")
    return n


def _zeros(dtype, shape, where):
    if shape is None or None in shape:
        raise ValueError(f"{where}: the item was never set and its shape {_show(shape)} is not fully "
                         "known, so it cannot be read as zeros")
    check_size(shape, dtype.np)
    return np.zeros(shape, dtype.np)


def _static_shape(tensor):
    """The element shape a shape-tensor input gives at build time, as a TensorShape."""
    value = constant_value(tensor)
    if value is None:
        return TensorShape(None)
    dims = _shape_from_value(value)
    return TensorShape(None if dims is None else list(dims))


# -- ops ------------------------------------------------------------------------------------

def _reserve(element_shape, num_elements, *, element_dtype):
    n = _count(num_elements, "TensorListReserve: num_elements")
    return TensorList(element_dtype, _shape_from_value(element_shape), [None] * n)


RESERVE = define(
    "TensorListReserve", "element_shape: shape_type, num_elements: int32 -> handle: variant",
    doc="A list of num_elements unset items of element_dtype.",
    attrs={"element_dtype": Attr("type"), "shape_type": Attr("type", allowed=_SHAPE_TYPES)},
    infer=scalar_shape, kernel=_reserve, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _from_tensor(tensor, element_shape, *, element_dtype):
    tensor = np.asarray(tensor)
    if tensor.ndim == 0:
        raise ValueError("TensorListFromTensor: the tensor must have at least one dim")
    shape = _merge_shapes(_shape_from_value(element_shape), tensor.shape[1:], "TensorListFromTensor")
    return TensorList(element_dtype, shape, list(tensor))


FROM_TENSOR = define(
    "TensorListFromTensor", "tensor: element_dtype, element_shape: shape_type -> output_handle: variant",
    doc="A list of the slices of tensor along its first dim.",
    attrs={"element_dtype": Attr("type"), "shape_type": Attr("type", allowed=_SHAPE_TYPES)},
    infer=scalar_shape, kernel=_from_tensor, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _the_list(handle, element_dtype, where):
    if not isinstance(handle, TensorList):
        raise ValueError(f"{where}: input_handle is not a TensorList")
    if handle.element_dtype is not element_dtype:
        raise ValueError(f"{where}: the list holds {handle.element_dtype.name}, element_dtype is "
                         f"{element_dtype.name}")
    return handle


def _index(handle, index, where):
    i = int(index)
    if not 0 <= i < len(handle.items):
        raise ValueError(f"{where}: index {i} is out of range for a list of {len(handle.items)} items")
    return i


def _get_item(input_handle, index, element_shape, *, element_dtype):
    lst = _the_list(input_handle, element_dtype, "TensorListGetItem")
    item = lst.items[_index(lst, index, "TensorListGetItem")]
    if item is not None:
        return item
    shape = _merge_shapes(lst.element_shape, _shape_from_value(element_shape), "TensorListGetItem")
    return _zeros(element_dtype, shape, "TensorListGetItem")


GET_ITEM = define(
    "TensorListGetItem",
    "input_handle: variant, index: int32, element_shape: Tshape -> item: element_dtype",
    doc="The item at index (zeros of the element shape if it was never set).",
    attrs={"element_dtype": Attr("type"), "Tshape": Attr("type", dtypes.int32, allowed=_SHAPE_TYPES)},
    infer=lambda ctx: [_static_shape(ctx.inputs[2])],
    kernel=_get_item, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _set_item(input_handle, index, item, *, element_dtype, resize_if_index_out_of_bounds):
    lst = _the_list(input_handle, element_dtype, "TensorListSetItem")
    item = np.asarray(item)
    _check_item(lst, item, "TensorListSetItem")
    items = list(lst.items)
    i = int(index)
    if resize_if_index_out_of_bounds and i >= len(items):
        items.extend([None] * (_count(i + 1, "TensorListSetItem: the resized length") - len(items)))
    i = _index(TensorList(element_dtype, None, items), i, "TensorListSetItem")
    items[i] = item
    return TensorList(element_dtype, lst.element_shape, items)


SET_ITEM = define(
    "TensorListSetItem",
    "input_handle: variant, index: int32, item: element_dtype -> output_handle: variant",
    doc="A copy of the list with the item at index replaced.",
    attrs={"element_dtype": Attr("type"), "resize_if_index_out_of_bounds": Attr("bool", False)},
    infer=scalar_shape, kernel=_set_item, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _stack(input_handle, element_shape, *, element_dtype, num_elements):
    lst = _the_list(input_handle, element_dtype, "TensorListStack")
    if num_elements != -1 and num_elements != len(lst.items):
        raise ValueError(f"TensorListStack: num_elements is {num_elements}, the list has {len(lst.items)}")
    shape = _merge_shapes(lst.element_shape, _shape_from_value(element_shape), "TensorListStack")
    known = [item.shape for item in lst.items if item is not None]
    if known:
        shape = _merge_shapes(shape, known[0], "TensorListStack")
    if not lst.items:
        return _zeros(element_dtype, (0,) + tuple(shape or ()), "TensorListStack") if shape is not None \
            else _zeros(element_dtype, None, "TensorListStack")
    items = [item if item is not None else _zeros(element_dtype, shape, "TensorListStack")
             for item in lst.items]
    if any(item.shape != items[0].shape for item in items):
        raise ValueError("TensorListStack: the items have different shapes")
    check_size((len(items),) + items[0].shape, element_dtype.np)
    return np.stack(items)


def _infer_stack(ctx):
    element = _static_shape(ctx.inputs[1])
    n = ctx.attrs["num_elements"]
    if element.dims is None:
        return [TensorShape(None)]
    return [TensorShape([None if n == -1 else n] + list(element.dims))]


STACK = define(
    "TensorListStack", "input_handle: variant, element_shape: int32 -> tensor: element_dtype",
    doc="The items stacked along a new first dim.",
    attrs={"element_dtype": Attr("type"), "num_elements": Attr("int", -1)},
    infer=_infer_stack, kernel=_stack, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _length(input_handle):
    if not isinstance(input_handle, TensorList):
        raise ValueError("TensorListLength: input_handle is not a TensorList")
    return np.int32(len(input_handle.items))


LENGTH = define(
    "TensorListLength", "input_handle: variant -> length: int32",
    doc="The number of items in the list.",
    infer=scalar_shape, kernel=_length, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _element_shape(input_handle, *, shape_type):
    if not isinstance(input_handle, TensorList):
        raise ValueError("TensorListElementShape: input_handle is not a TensorList")
    dims = input_handle.element_shape
    if dims is None:
        return np.array(-1, shape_type.np)
    return np.array([-1 if d is None else d for d in dims], shape_type.np)


ELEMENT_SHAPE = define(
    "TensorListElementShape", "input_handle: variant -> element_shape: shape_type",
    doc="The element shape the list promises (-1 for unknown dims, a scalar -1 for unknown rank).",
    attrs={"shape_type": Attr("type", allowed=_SHAPE_TYPES)},
    infer=lambda ctx: [TensorShape(None)], kernel=_element_shape, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- lists as stacks: what the gradient of a while loop keeps each iteration's values in ---------

def _empty(element_shape, max_num_elements, *, element_dtype):
    limit = int(max_num_elements)
    if limit != -1:
        _count(limit, "EmptyTensorList: max_num_elements")
    return TensorList(element_dtype, _shape_from_value(element_shape), [])


EMPTY = define(
    "EmptyTensorList", "element_shape: shape_type, max_num_elements: int32 -> handle: variant",
    doc="An empty list of element_dtype.",
    attrs={"element_dtype": Attr("type"), "shape_type": Attr("type", allowed=_SHAPE_TYPES)},
    infer=scalar_shape, kernel=_empty, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _push_back(input_handle, tensor, *, element_dtype):
    lst = _the_list(input_handle, element_dtype, "TensorListPushBack")
    item = np.asarray(tensor)
    _check_item(lst, item, "TensorListPushBack")
    _count(len(lst.items) + 1, "TensorListPushBack: the list's length")
    return TensorList(element_dtype, lst.element_shape, lst.items + (item,))


PUSH_BACK = define(
    "TensorListPushBack", "input_handle: variant, tensor: element_dtype -> output_handle: variant",
    doc="A copy of the list with tensor appended.",
    attrs={"element_dtype": Attr("type")},
    infer=scalar_shape, kernel=_push_back, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _pop_back(input_handle, element_shape, *, element_dtype):
    lst = _the_list(input_handle, element_dtype, "TensorListPopBack")
    if not lst.items:
        raise ValueError("TensorListPopBack: the list is empty")
    item = lst.items[-1]
    if item is None:
        shape = _merge_shapes(lst.element_shape, _shape_from_value(element_shape), "TensorListPopBack")
        item = _zeros(element_dtype, shape, "TensorListPopBack")
    return TensorList(element_dtype, lst.element_shape, lst.items[:-1]), item


POP_BACK = define(
    "TensorListPopBack", "input_handle: variant, element_shape: int32 -> output_handle: variant, "
    "tensor: element_dtype",
    doc="The list without its last item, and that item.",
    attrs={"element_dtype": Attr("type")},
    infer=lambda ctx: [TensorShape(()), _static_shape(ctx.inputs[1])],
    kernel=_pop_back, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
