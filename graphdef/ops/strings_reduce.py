"""ReduceJoin: the strings along some axes joined into one, as TensorFlow's tf.strings.reduce_join."""

import numpy as np

from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, define
from graphdef.ops.strings import as_array, check_string_bytes, strings_like


def _axes(indices, rank):
    """The reduced axes in the order given (the first varies fastest in the join), TF's checks."""
    axes = []
    for axis in np.ravel(indices).tolist():
        if not -rank <= axis < max(rank, 1) or (rank == 0 and axis != 0):
            raise InvalidArgumentError(f"Invalid reduction dimension {axis} for input with {rank} dimension(s)")
        axis = axis % rank if rank else 0
        if axis in axes:
            raise InvalidArgumentError(f"Duplicate reduction dimension {axis}")
        axes.append(axis)
    return axes


def _infer_reduce_join(ctx):
    x, indices = ctx.shape(0), constant_value(ctx.inputs[1])
    if x.ndims is None or indices is None:
        return [TensorShape(None)]
    try:
        axes = _axes(indices, x.ndims)
    except InvalidArgumentError as e:
        raise ctx.error(str(e)) from None
    keep = ctx.attrs["keep_dims"]
    return [TensorShape([1 if i in axes else d for i, d in enumerate(x.dims)] if keep else
                        [d for i, d in enumerate(x.dims) if i not in axes])]


def _reduce_join(inputs, reduction_indices, *, keep_dims, separator):
    x = as_array(inputs)
    axes = _axes(reduction_indices, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    # the first listed axis last in the transposed order: it varies fastest, as in TF
    moved = np.transpose(x, kept + axes[::-1]) if x.ndim else x
    count = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    rows = moved.reshape(-1, count) if count else np.empty((int(np.prod([x.shape[i] for i in kept])), 0), object)
    sep = separator.encode("utf-8") if isinstance(separator, str) else bytes(separator)
    check_string_bytes(sum(map(len, x.reshape(-1).tolist())) + len(sep) * max(count - 1, 0) * len(rows))
    joined = [sep.join(row) for row in rows.tolist()]
    shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep_dims else [x.shape[i] for i in kept]
    return strings_like(tuple(shape), joined)


REDUCE_JOIN = define(
    "ReduceJoin", "inputs: string, reduction_indices: int32 -> output: string",
    doc="The strings along the reduction axes joined with separator (the first axis listed varies fastest).",
    attrs={"keep_dims": Attr("bool", False), "separator": Attr("string", "")},
    infer=_infer_reduce_join, kernel=_reduce_join, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """tf.strings.reduce_join: axis None joins every axis."""
    if axis is None:
        rank = inputs.shape.ndims if hasattr(inputs, "shape") and hasattr(inputs.shape, "ndims") else np.ndim(inputs)
        axis = list(range(rank))
    return build("ReduceJoin", [inputs, np.array(np.ravel(axis), np.int32)], name=name, default_name="ReduceJoin",
                 attrs={"keep_dims": keepdims, "separator": separator}).outputs[0]
