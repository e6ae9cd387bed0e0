"""Any and All: reductions besides control flow that frozen Keras RNNs use (Masking reduces its
mask with Any). ReverseV2, which go_backwards and Bidirectional use, is in reverse_pad.py."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.numerics import EXACT
from graphdef.ops.reductions import _check_empty_reduction, _infer_reduction, normalize_axes
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, define


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
