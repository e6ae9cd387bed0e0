"""Any, All and ReverseV2: the ops besides control flow that frozen Keras RNNs use (Masking
reduces its mask with Any; go_backwards and Bidirectional reverse the time axis)."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.ops.math import _check_empty_reduction, _infer_reduction, normalize_axes
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, define, same_as_input


def _any(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    return np.any(x, axis=normalize_axes(axes, x.ndim), keepdims=keep_dims)


def _all(x, axes, *, keep_dims):
    x = np.asarray(x)
    _check_empty_reduction(x, axes, keep_dims)
    return np.all(x, axis=normalize_axes(axes, x.ndim), keepdims=keep_dims)


def _logical_reduction(type_name, kernel, doc):
    return define(type_name, "input: bool, reduction_indices: Tidx -> output: bool", doc=doc,
                  attrs={"keep_dims": Attr("bool", False), "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
                  infer=_infer_reduction, kernel=kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


ANY = _logical_reduction("Any", _any, "Logical or over the axes; an empty reduction gives False.")
ALL = _logical_reduction("All", _all, "Logical and over the axes; an empty reduction gives True.")


def _reverse(tensor, axis):
    tensor = np.asarray(tensor)
    axes = normalize_axes(np.asarray(axis).reshape(-1), tensor.ndim)
    return np.flip(tensor, axis=axes) if axes else tensor


def _reverse_grad(op, grad):
    return [build("ReverseV2", [grad, op.inputs[1]], name="ReverseV2").outputs[0], None]


REVERSE_V2 = define(
    "ReverseV2", "tensor: T, axis: Tidx -> output: T",
    doc="The tensor with the order of its entries reversed along each listed axis.",
    attrs={"Tidx": Attr("type", dtypes.int32, dtypes.INDEX), "T": Attr("type")},
    infer=same_as_input(), kernel=_reverse, grad=_reverse_grad, numerics=EXACT)

