"""Batched matrix products: BatchMatMul (V1, V2 with broadcast batch dims, V3 with its own dtypes).

Each batch is one matrix product; float16 is multiplied in float32 and rounded once, as TF's CPU
kernels accumulate. adj_x/adj_y transpose the last two dims (graphdef carries no complex dtypes,
so the adjoint is the transpose).
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import tensor_ulps
from graphdef.framework.shapes import TensorShape, broadcast, show
from graphdef.ops.registry import Attr, build, convert_to_tensor, define
from graphdef.ops import array as array_ops
from graphdef.ops import math as math_ops

f16, f32, f64 = dtypes.float16, dtypes.float32, dtypes.float64
i8, i16, i32, i64 = dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64
u8, u16, u32, u64 = dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64
V1_TYPES = frozenset((f16, f32, f64, i32, i64))
V2_TYPES = frozenset((f16, f32, f64, i16, i32, i64, u8, u16, u32, u64))
V3_IN_TYPES = frozenset((f16, f32, f64, i8, i16, i32, i64, u8))
V3_OUT_TYPES = frozenset((f16, f32, f64, i16, i32, i64))


def _matrix_dims(shape, adjoint):
    rows, cols = shape.dims[-2:]
    return (cols, rows) if adjoint else (rows, cols)


def _infer(broadcasting):
    def infer(ctx):
        x, y = ctx.shape(0), ctx.shape(1)
        for s, side in ((x, "x"), (y, "y")):
            if s.ndims is not None and s.ndims < 2:
                raise ctx.error(f"input {side} must have rank >= 2 (a batch of matrices), got shape {show(s)}")
        if x.ndims is None or y.ndims is None:
            return [TensorShape(None)]
        m, k = _matrix_dims(x, ctx.attrs["adj_x"])
        k2, n = _matrix_dims(y, ctx.attrs["adj_y"])
        if k is not None and k2 is not None and k != k2:
            raise ctx.error(f"cannot multiply {show(x)} by {show(y)} (adj_x={ctx.attrs['adj_x']}, "
                            f"adj_y={ctx.attrs['adj_y']}): inner dimensions {k} and {k2} differ")
        bx, by = TensorShape(x.dims[:-2]), TensorShape(y.dims[:-2])
        if broadcasting:
            batch = broadcast(bx, by)
            if batch is None:
                raise ctx.error(f"batch dims of {show(x)} and {show(y)} cannot be broadcast together")
        else:
            if bx.ndims != by.ndims or not bx.is_compatible_with(by):
                raise ctx.error(f"BatchMatMul needs the same batch dims in x {show(x)} and y {show(y)}; "
                                "BatchMatMulV2 broadcasts them")
            batch = TensorShape([a if a is not None else b for a, b in zip(bx.dims, by.dims)])
        return [TensorShape(list(batch.dims) + [m, n])]
    return infer


def batch_matmul_values(x, y, adj_x, adj_y, out_dtype, broadcasting=True):
    """The numpy product of two batches of matrices, shared by the three ops' kernels."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim < 2 or y.ndim < 2:
        raise ValueError(f"inputs must have rank >= 2, got shapes {show(x.shape)} and {show(y.shape)}")
    if adj_x:
        x = np.swapaxes(x, -1, -2)
    if adj_y:
        y = np.swapaxes(y, -1, -2)
    if x.shape[-1] != y.shape[-2]:
        raise ValueError(f"cannot multiply {show(x.shape)} by {show(y.shape)}: inner dimensions "
                         f"{x.shape[-1]} and {y.shape[-2]} differ")
    if not broadcasting and x.shape[:-2] != y.shape[:-2]:
        raise ValueError(f"batch dims {show(x.shape[:-2])} and {show(y.shape[:-2])} differ; "
                         "BatchMatMul does not broadcast them")
    try:
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except ValueError:
        raise ValueError(f"batch dims {show(x.shape[:-2])} and {show(y.shape[:-2])} cannot be broadcast "
                         "together") from None
    out_dtype = np.dtype(out_dtype)
    work = np.float32 if out_dtype == np.float16 else out_dtype
    out_shape = tuple(batch) + (x.shape[-2], y.shape[-1])
    check_size(out_shape, work)
    x, y = x.astype(work, copy=False), y.astype(work, copy=False)
    if y.ndim == 2 and x.ndim > 2:
        # a batch of matrices times one matrix (Keras' Dense and attention projections on
        # [batch, T, features]) is one matrix product of all the rows: one BLAS call instead of
        # one per batch entry, each of which starts and joins BLAS's threads
        rows = _as_rows(x)
        if rows is not None:
            return np.matmul(rows, y).reshape(out_shape).astype(out_dtype, copy=False)
    return np.matmul(x, y).astype(out_dtype, copy=False)


def _as_rows(x):
    """x's matrices stacked into one [rows, k] matrix, as a view (None where that needs a copy,
    as for an adjoint's transposed view, where the per-matrix product reads it in place)."""
    try:
        return np.reshape(x, (-1, x.shape[-1]), copy=False)
    except ValueError:
        return None


def _kernel_v1(x, y, *, adj_x, adj_y):
    return batch_matmul_values(x, y, adj_x, adj_y, np.asarray(x).dtype, broadcasting=False)


def _kernel_v2(x, y, *, adj_x, adj_y):
    return batch_matmul_values(x, y, adj_x, adj_y, np.asarray(x).dtype)


def _kernel_v3(x, y, *, Tout, adj_x, adj_y):  # noqa: N803 - TF's attr name
    return batch_matmul_values(x, y, adj_x, adj_y, Tout.np)


def _unbroadcast_batch(grad, like):
    """Sums a gradient's leading batch dims back to `like`'s (V2 broadcasts them), then reshapes."""
    gs, ls = grad.shape, like.shape
    if gs.is_fully_defined() and ls.is_fully_defined():
        g_batch, l_batch = gs.dims[:-2], ls.dims[:-2]
        lead = len(g_batch) - len(l_batch)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(l_batch) if d == 1 and g_batch[lead + i] != 1]
        if not axes:
            return grad
        return array_ops.reshape(math_ops.reduce_sum(grad, axes), ls.dims)
    sg, sl = array_ops.shape_of(grad), array_ops.shape_of(like)
    axes, _ = build("BroadcastGradientArgs", [sl[:-2], sg[:-2]], default_name="BroadcastGradientArgs").outputs
    return array_ops.reshape(math_ops.reduce_sum(grad, axes), sl)


def _grad(op_type):
    def grad(op, g):
        x, y = op.inputs
        ax, ay = op.attrs["adj_x"], op.attrs["adj_y"]
        extra = {}
        if op_type == "BatchMatMulV3":
            if not (op.attrs["Ta"] == op.attrs["Tb"] == op.attrs["Tout"]):
                raise ValueError(f"no gradient for '{op.name}' (BatchMatMulV3) with mixed dtypes "
                                 f"Ta={op.attrs['Ta'].name}, Tb={op.attrs['Tb'].name}, Tout={op.attrs['Tout'].name}")
            extra = {"Ta": x.dtype, "Tb": y.dtype, "Tout": x.dtype}

        def mm(a, b, adj_a, adj_b, hint):
            return build(op_type, [a, b], default_name=op_type,
                         attrs={"adj_x": adj_a, "adj_y": adj_b, **hint, **extra}).outputs[0]
        # TF's rules; grad_x/grad_y only hint which side of a gradient a product computes
        if not ax and not ay:
            gx, gy = mm(g, y, False, True, {"grad_x": True}), mm(x, g, True, False, {"grad_y": True})
        elif not ax and ay:
            gx, gy = mm(g, y, False, False, {"grad_x": True}), mm(g, x, True, False, {"grad_y": True})
        elif ax and not ay:
            gx, gy = mm(y, g, False, True, {"grad_x": True}), mm(x, g, False, False, {"grad_y": True})
        else:
            gx, gy = mm(y, g, True, True, {"grad_x": True}), mm(g, x, True, True, {"grad_y": True})
        if op_type == "BatchMatMul":
            return [gx, gy]
        return [_unbroadcast_batch(gx, x), _unbroadcast_batch(gy, y)]
    return grad


_FLAGS = {"adj_x": Attr("bool", False), "adj_y": Attr("bool", False),
          "grad_x": Attr("bool", False), "grad_y": Attr("bool", False)}

BATCH_MATMUL = define(
    "BatchMatMul", "x: T, y: T -> output: T",
    doc="Matrix product of each pair of matrices in two batches with the same batch dims.",
    attrs={"T": Attr("type", allowed=V1_TYPES), **_FLAGS},
    infer=_infer(False), kernel=_kernel_v1, grad=_grad("BatchMatMul"), numerics=tensor_ulps(8))

BATCH_MATMUL_V2 = define(
    "BatchMatMulV2", "x: T, y: T -> output: T",
    doc="Matrix product of each pair of matrices in two batches whose batch dims broadcast.",
    attrs={"T": Attr("type", allowed=V2_TYPES), **_FLAGS},
    infer=_infer(True), kernel=_kernel_v2, grad=_grad("BatchMatMulV2"), numerics=tensor_ulps(8))

BATCH_MATMUL_V3 = define(
    "BatchMatMulV3", "x: Ta, y: Tb -> output: Tout",
    doc="BatchMatMulV2 with each input of its own dtype, both converted to Tout before multiplying.",
    attrs={"Ta": Attr("type", allowed=V3_IN_TYPES), "Tb": Attr("type", allowed=V3_IN_TYPES),
           "Tout": Attr("type", allowed=V3_OUT_TYPES), **_FLAGS},
    infer=_infer(True), kernel=_kernel_v3, grad=_grad("BatchMatMulV3"), numerics=tensor_ulps(8))


def batch_matmul(x, y, adj_x=False, adj_y=False, name=None):
    """tf.linalg.matmul of batches, as TF2 emits it: BatchMatMulV2, broadcasting the batch dims."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    return build("BatchMatMulV2", [x, y], name=name, default_name="MatMul",
                 attrs={"adj_x": bool(adj_x), "adj_y": bool(adj_y)}).outputs[0]
