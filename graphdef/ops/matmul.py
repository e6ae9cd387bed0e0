"""MatMul, its gradient and the tf.matmul builder."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, define

def _infer_matmul(ctx):
    a, b = ctx.shape(0), ctx.shape(1)
    for s, side in ((a, "a"), (b, "b")):
        if s.ndims not in (None, 2):
            raise ctx.error(f"input {side} must be a matrix, got shape {show(s)}")
    if a.ndims is None or b.ndims is None:
        return [TensorShape([None, None])]
    m, k = reversed(a.dims) if ctx.attrs["transpose_a"] else a.dims
    k2, n = reversed(b.dims) if ctx.attrs["transpose_b"] else b.dims
    if k is not None and k2 is not None and k != k2:
        flags = "".join(f", {f}=True" for f in ("transpose_a", "transpose_b") if ctx.attrs[f])
        raise ctx.error(f"cannot multiply {show(a)} by {show(b)}{flags}: inner dimensions {k} and {k2} differ")
    return [TensorShape([m, n])]


def _matmul(a, b, *, transpose_a, transpose_b):
    if np.ndim(a) != 2 or np.ndim(b) != 2:
        raise ValueError(f"MatMul needs matrices, got shapes {list(np.shape(a))} and {list(np.shape(b))}")
    # [m, k] x [k, n] is m x n whatever k is: an empty k (or k of 1) may ask for any size
    m = np.shape(a)[1 if transpose_a else 0]
    n = np.shape(b)[0 if transpose_b else 1]
    check_size((m, n), np.result_type(a, b))
    return np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)


MATMUL = define(
    "MatMul", "a: T, b: T -> product: T",
    doc="Matrix product of two 2-D tensors, optionally transposing either first.",
    attrs={"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False),
           "T": Attr("type", allowed=dtypes.NUMERIC)},
    infer=_infer_matmul, kernel=_matmul, grad=lambda op, g: _matmul_grad(op, g), numerics=tensor_ulps(8))


def _matmul_grad(op, g):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)]
    if not ta and tb:
        return [matmul(g, b), matmul(g, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, g, transpose_b=True), matmul(a, g)]
    return [matmul(b, g, transpose_a=True, transpose_b=True), matmul(g, a, transpose_a=True, transpose_b=True)]


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    return build("MatMul", [a, b], name=name, default_name="MatMul",
                 attrs={"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}).outputs[0]

