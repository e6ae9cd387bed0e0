"""ReverseV2, and the paddings beyond Pad's zeros: PadV2 (any constant) and MirrorPad (REFLECT, SYMMETRIC)."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import Attr, build, check_dims_vector, constant_value, define
from graphdef.ops import array as array_ops
from graphdef.ops import slicing as slicing_ops


# -- ReverseV2 -----------------------------------------------------------------------------------

def _reverse_axes(axis, ndim):
    axes = []
    for a in np.ravel(axis).tolist():
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        if a % ndim in axes:
            raise ValueError(f"axis {a % ndim} is listed twice")
        axes.append(a % ndim)
    return tuple(axes)


def _infer_reverse(ctx):
    if ctx.shape(1).ndims not in (None, 1):
        raise ctx.error(f"axis must be a vector, got shape {show(ctx.shape(1))}")
    axis, x = constant_value(ctx.inputs[1]), ctx.shape(0)
    if axis is not None and x.ndims is not None:
        try:
            _reverse_axes(axis, x.ndims)
        except ValueError as e:
            raise ctx.error(f"{e} (input shape {show(x)})") from None
    return [x]


def _reverse(tensor, axis):
    x = np.asarray(tensor)
    if np.ndim(axis) != 1:
        raise ValueError(f"axis must be a vector, got shape {show(np.shape(axis))}")
    axes = _reverse_axes(axis, x.ndim)
    return np.flip(x, axes).copy() if axes else x


REVERSE_V2 = define(
    "ReverseV2", "tensor: T, axis: Tidx -> output: T",
    doc="The tensor with the order of each listed axis reversed.",
    attrs={"Tidx": Attr("type", dtypes.int32, dtypes.INDEX), "T": Attr("type")},
    infer=_infer_reverse, kernel=_reverse, grad=lambda op, g: [reverse(g, op.inputs[1]), None], numerics=EXACT)


# -- PadV2 and MirrorPad ---------------------------------------------------------------------------

def _pairs(x, paddings, what):
    p = np.asarray(paddings)
    if p.shape != (x.ndim, 2):
        raise ValueError(f"{what}: paddings must have shape [{x.ndim}, 2] for input {show(x.shape)}, "
                         f"got {show(p.shape)}")
    p = [(int(lo), int(hi)) for lo, hi in p.reshape(-1, 2)]
    if any(lo < 0 or hi < 0 for lo, hi in p):
        raise ValueError(f"{what}: paddings {[list(v) for v in p]} must not be negative")
    return p


def _mirror_limits(x_dims, pairs, mode):
    """REFLECT leaves the edge out, so each side pads at most dim - 1; SYMMETRIC repeats it: at most dim."""
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"mode {mode!r} must be 'REFLECT' or 'SYMMETRIC'")
    extra = 0 if mode == "REFLECT" else 1
    for i, (d, (lo, hi)) in enumerate(zip(x_dims, pairs)):
        if d is not None and max(lo, hi) > d - 1 + extra:
            raise ValueError(f"paddings [{lo}, {hi}] of dim {i} (size {d}) must be at most {d - 1 + extra} "
                             f"in {mode} mode")


def _infer_padded(mirror):
    def infer(ctx):
        x, p = ctx.shape(0), ctx.shape(1)
        if p.ndims not in (None, 2) or (p.ndims == 2 and (p.dims[1] not in (None, 2) or (
                x.ndims is not None and p.dims[0] not in (None, x.ndims)))):
            raise ctx.error(f"paddings must be [rank, 2] for input {show(x)}, got shape {show(p)}")
        if not mirror and ctx.shape(2).ndims not in (None, 0):
            raise ctx.error(f"constant_values must be a scalar, got shape {show(ctx.shape(2))}")
        check_dims_vector(ctx, 1, "paddings", per_dim=2)
        paddings = constant_value(ctx.inputs[1])
        if paddings is None or x.ndims is None:
            n = x.ndims if x.ndims is not None else (p.dims[0] if p.ndims == 2 else None)
            return [TensorShape(None if n is None else [None] * n)]
        pairs = [(int(lo), int(hi)) for lo, hi in np.asarray(paddings).reshape(-1, 2)]
        try:
            if any(lo < 0 or hi < 0 for lo, hi in pairs):
                raise ValueError(f"paddings {[list(v) for v in pairs]} must not be negative")
            if mirror:
                _mirror_limits(x.dims, pairs, ctx.attrs["mode"])
        except ValueError as e:
            raise ctx.error(str(e)) from None
        return [TensorShape([None if d is None else d + lo + hi for d, (lo, hi) in zip(x.dims, pairs)])]
    return infer


def _pad_v2(input, paddings, constant_values):  # noqa: A002 - TF's name
    x = np.asarray(input)
    if np.ndim(constant_values) != 0:
        raise ValueError(f"constant_values must be a scalar, got shape {show(np.shape(constant_values))}")
    pairs = _pairs(x, paddings, "PadV2")
    dims = [d + lo + hi for d, (lo, hi) in zip(x.shape, pairs)]
    check_size(dims, x.dtype)
    return slicing_ops.padded(x, pairs, np.asarray(constant_values).astype(x.dtype))


def _mirror_pad(input, paddings, *, mode):  # noqa: A002 - TF's name
    x = np.asarray(input)
    pairs = _pairs(x, paddings, "MirrorPad")
    _mirror_limits(x.shape, pairs, mode)
    check_size([d + lo + hi for d, (lo, hi) in zip(x.shape, pairs)], x.dtype)
    return np.pad(x, pairs, mode="reflect" if mode == "REFLECT" else "symmetric")


def _padded_grad(op, g):
    """Pad's gradient for PadV2: the block where the input went (the constant gets none, as in TF)."""
    x, paddings = op.inputs[0], op.inputs[1]
    p = constant_value(paddings)
    if p is None:
        raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs constant paddings")
    begin = [int(v) for v in np.asarray(p).reshape(-1, 2)[:, 0]]
    return [slicing_ops.slice_(g, begin, array_ops.shape_of(x, out_type=paddings.dtype)), None] + \
        [None] * (len(op.inputs) - 2)


def _mirror_pad_grad(op, g):
    """Folds each padded strip back, reversed, onto the input positions it mirrored, one axis at a time."""
    x, paddings = op.inputs
    p, dims = constant_value(paddings), x.shape.dims
    if p is None or x.shape.ndims is None or None in dims:
        raise NotImplementedError(f"the gradient of MirrorPad '{op.name}' needs constant paddings and a known "
                                  "input shape")
    skip = 1 if op.attrs["mode"] == "REFLECT" else 0  # REFLECT's mirror leaves the edge element out
    full = [d + lo + hi for d, (lo, hi) in zip(dims, np.asarray(p).reshape(-1, 2).tolist())]
    for axis, (d, (lo, hi)) in enumerate(zip(dims, np.asarray(p).reshape(-1, 2).tolist())):
        if not lo and not hi:
            continue

        def strip(start, size):
            begin, extent = [0] * len(full), list(full)
            begin[axis], extent[axis] = start, size
            return slicing_ops.slice_(g, begin, extent)

        def placed(part, start, size):
            pads = [[0, 0] for _ in full]
            pads[axis] = [start, d - start - size]
            return slicing_ops.pad(reverse(part, [axis]), pads)
        core = strip(lo, d)
        if lo:
            core = core + placed(strip(0, lo), skip, lo)
        if hi:
            core = core + placed(strip(lo + d, hi), d - skip - hi, hi)
        g, full[axis] = core, d
    return [g, None]


PAD_V2 = define(
    "PadV2", "input: T, paddings: Tpaddings, constant_values: T -> output: T",
    doc="Adds paddings[i] = [before, after] copies of constant_values around each dim i.",
    attrs={"T": Attr("type"), "Tpaddings": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_padded(False), kernel=_pad_v2, grad=_padded_grad, numerics=EXACT)

MIRROR_PAD = define(
    "MirrorPad", "input: T, paddings: Tpaddings -> output: T",
    doc="Pads each dim with its own mirror image: REFLECT leaves the edge out ([1, 2, 3] -> 2 1 2 3 2), "
        "SYMMETRIC repeats it (-> 1 1 2 3 3).",
    attrs={"T": Attr("type"), "Tpaddings": Attr("type", dtypes.int32, dtypes.INDEX), "mode": Attr("string")},
    infer=_infer_padded(True), kernel=_mirror_pad, grad=_mirror_pad_grad, numerics=EXACT)


# -- builders ------------------------------------------------------------------------------------

def reverse(tensor, axis, name=None):
    """tf.reverse: ReverseV2 over the listed axes."""
    return build("ReverseV2", [tensor, axis], name=name, default_name="ReverseV2").outputs[0]

