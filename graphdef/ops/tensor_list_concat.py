"""TensorListConcatV2: a TensorList's items joined along their first dim (TF2's TensorArray.concat).

Items never set are zeros: their first dim is leading_dims[i] when leading_dims is given, else the
element shape's; the rest of their shape comes from the element shape, completed, when it is partly
unknown, by what the items set agree on (so a list of ragged items needs leading_dims, as in TensorFlow).
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.list_ops import _merge_shapes, _shape_from_value, _show, _the_list, _zeros
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, constant_value, define

_WHERE = "TensorListConcatV2"


def _concat(input_handle, element_shape, leading_dims, *, element_dtype):
    lst = _the_list(input_handle, element_dtype, _WHERE)
    shape = _merge_shapes(lst.element_shape, _shape_from_value(element_shape), _WHERE)
    if shape is not None and len(shape) == 0:
        raise ValueError(f"{_WHERE}: Concat requires elements to be at least vectors, found scalars instead.")
    leading = [int(d) for d in np.asarray(leading_dims).reshape(-1)]
    if leading and len(leading) != len(lst.items):
        raise ValueError(f"{_WHERE}: leading_dims has {len(leading)} entries for a list of {len(lst.items)} items")
    if shape is None or None in shape:
        shape = _merge_shapes(shape, _common_shape([item.shape for item in lst.items if item is not None]), _WHERE)
    if shape is not None and len(shape) == 0:
        raise ValueError(f"{_WHERE}: Concat requires elements to be at least vectors, found scalars instead.")
    rest = None if shape is None else shape[1:]
    items = []
    for i, item in enumerate(lst.items):
        if item is None:
            if not leading and (shape is None or None in shape):
                raise ValueError(f"{_WHERE}: List contains uninitialized tensor at index {i} but leading_dims has "
                                 f"only {len(leading)} elements.")
            if rest is None or None in rest:
                raise ValueError(f"{_WHERE}: item {i} was never set and the element shape {_show(shape)} does not "
                                 "give every dim past the first, so it cannot be read as zeros")
            item = _zeros(element_dtype, (leading[i] if leading else shape[0],) + tuple(rest), _WHERE)
        elif item.ndim == 0:
            raise ValueError(f"{_WHERE}: Concat requires elements to be at least vectors, found scalars instead.")
        items.append(item)
    lengths = np.array([item.shape[0] for item in items], np.int64)
    if not items:
        if rest is None or None in rest:
            raise ValueError(f"{_WHERE}: the list is empty and the element shape {_show(shape)} does not give "
                             "every dim past the first")
        return np.zeros((0,) + tuple(rest), element_dtype.np), lengths
    if any(item.shape[1:] != items[0].shape[1:] for item in items):
        raise ValueError(f"{_WHERE}: the items' shapes past the first dim differ: "
                         + ", ".join(_show(item.shape) for item in items))
    check_size((int(lengths.sum()),) + items[0].shape[1:], element_dtype.np)
    return np.concatenate(items), lengths


def _common_shape(shapes):
    """What the items set agree on: a dim they differ in is unknown; None when none is set or ranks differ."""
    if not shapes or any(len(s) != len(shapes[0]) for s in shapes):
        return None
    return tuple(dims[0] if len(set(dims)) == 1 else None for dims in zip(*shapes))


def _infer(ctx):
    value = constant_value(ctx.inputs[1])
    dims = None if value is None else _shape_from_value(value)
    return [TensorShape(None if dims is None else [None, *dims[1:]]), TensorShape([None])]


CONCAT_V2 = define(
    "TensorListConcatV2",
    "input_handle: variant, element_shape: shape_type, leading_dims: int64 -> tensor: element_dtype, lengths: int64",
    doc="The list's items concatenated along dim 0, and each one's length there (unset items are zeros).",
    attrs={"element_dtype": Attr("type"), "shape_type": Attr("type", allowed=frozenset((dtypes.int32, dtypes.int64)))},
    infer=_infer, kernel=_concat, grad=NOT_DIFFERENTIABLE, numerics=EXACT)
