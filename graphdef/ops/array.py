"""Sources and shape ops: Const, Placeholder, Identity, Reshape, Transpose, Fill, Range, NoOp.

OneHot and the other index ops live in gather_scatter.py (its one_hot is re-exported here)."""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT
from graphdef.ops.registry import (Attr, MAX_RANK, NOT_DIFFERENTIABLE, build, check_dims_value, check_dims_vector,
                                   constant_value, convert_to_tensor, define, python_to_numpy, same_as_input)
from graphdef.framework.shapes import TensorShape, show, broadcast
from graphdef.framework.graph import get_default_graph
from graphdef.ops import math as math_ops
from graphdef.ops.gather_scatter import one_hot  # noqa: F401 - tf.one_hot's old home


def frozen(array):
    """Graph-owned arrays are read-only, so a fetched value can never alias and corrupt them."""
    array = np.asarray(array)
    if array.flags.writeable:
        array = array.copy()
        array.flags.writeable = False
    return array


def _infer_const(ctx):
    value, dtype = ctx.attrs["value"], ctx.attrs["dtype"]
    held = dtypes.as_dtype(value.dtype)
    if held is not dtype:  # graphrun-cc's words (runner/kernels/constant.cc)
        raise ctx.error(f"attr 'value' holds a {held.name} tensor but attr 'dtype' is {dtype.name}")
    return TensorShape(value.shape)


def _const_kernel(*, value):
    return value


CONST = define(
    "Const", "-> output: dtype",
    doc="A tensor whose value is stored in the graph.",
    attrs={"value": Attr("tensor"), "dtype": Attr("type")},
    infer=lambda ctx: [_infer_const(ctx)],
    kernel=_const_kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _must_feed(*, node):
    raise InvalidArgumentError(f"placeholder '{node}' was not fed")


PLACEHOLDER = define(
    "Placeholder", "-> output: dtype",
    doc="An input whose value must be fed to Session.run.",
    attrs={"dtype": Attr("type"), "shape": Attr("shape", TensorShape(None))},
    infer=lambda ctx: [ctx.attrs["shape"]],
    kernel=_must_feed, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_placeholder_with_default(ctx):
    declared = ctx.attrs["shape"]
    if not declared.is_compatible_with(ctx.shape(0)):
        raise ctx.error(f"default value's shape {show(ctx.shape(0))} does not match shape {show(declared)}")
    return [declared]


PLACEHOLDER_WITH_DEFAULT = define(
    "PlaceholderWithDefault", "input: dtype -> output: dtype",
    doc="An input that takes its default value unless fed.",
    attrs={"dtype": Attr("type"), "shape": Attr("shape")},
    infer=_infer_placeholder_with_default,
    kernel=lambda x: x, grad=lambda op, g: [g], numerics=EXACT)

IDENTITY = define(
    "Identity", "input: T -> output: T",
    doc="Returns its input unchanged.",
    attrs={"T": Attr("type")}, infer=same_as_input(), kernel=lambda x: x,
    grad=lambda op, g: [g], numerics=EXACT)

STOP_GRADIENT = define(
    "StopGradient", "input: T -> output: T",
    doc="Returns its input; gradients do not flow through it.",
    attrs={"T": Attr("type")}, infer=same_as_input(), kernel=lambda x: x,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _no_op():
    return ()


NO_OP = define("NoOp", "->", doc="Does nothing; groups control dependencies.",
               infer=lambda ctx: [], kernel=_no_op, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_reshape(ctx):
    check_dims_vector(ctx, 1, "shape")
    target = constant_value(ctx.inputs[1])
    if target is None:
        n = ctx.shape(1)[0] if ctx.shape(1).ndims == 1 else None
        return [TensorShape(None if n is None else [None] * n)]
    target = [int(d) for d in np.ravel(target)]
    if sum(d == -1 for d in target) > 1 or any(d < -1 for d in target):
        raise ctx.error(f"shape {target} may hold at most one -1 and no other negative size")
    have = ctx.shape(0).num_elements()
    known = int(np.prod([d for d in target if d != -1]))
    if -1 in target:
        if have is None or known == 0:
            return [TensorShape([None if d == -1 else d for d in target])]
        if have % known:
            raise ctx.error(f"cannot reshape {show(ctx.shape(0))} ({have} elements) into {target}")
        return [TensorShape([have // known if d == -1 else d for d in target])]
    if have is not None and have != known:
        raise ctx.error(f"cannot reshape {show(ctx.shape(0))} ({have} elements) into {target} ({known} elements)")
    return [TensorShape(target)]


RESHAPE = define(
    "Reshape", "tensor: T, shape: Tshape -> output: T",
    doc="The same elements in row-major order, with a new shape (one dim may be -1).",
    attrs={"T": Attr("type"), "Tshape": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_reshape,
    kernel=lambda x, shape: np.reshape(x, shape),
    grad=lambda op, g: [reshape(g, shape_of(op.inputs[0])), None], numerics=EXACT)


def _infer_transpose(ctx):
    perm = constant_value(ctx.inputs[1])
    x = ctx.shape(0)
    if perm is None:
        return [TensorShape(None if x.ndims is None else [None] * x.ndims)]
    perm = [int(p) for p in np.ravel(perm)]
    if x.ndims is not None and sorted(perm) != list(range(x.ndims)):
        raise ctx.error(f"perm {perm} is not a permutation of the {x.ndims} dims of {show(x)}")
    if x.ndims is None:
        return [TensorShape([None] * len(perm))]
    return [TensorShape([x.dims[p] for p in perm])]


TRANSPOSE = define(
    "Transpose", "x: T, perm: Tperm -> y: T",
    doc="Permutes the dims: output dim i is input dim perm[i].",
    attrs={"T": Attr("type"), "Tperm": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_transpose,
    kernel=lambda x, perm: np.transpose(x, _checked_perm(perm, np.ndim(x))),
    grad=lambda op, g: [transpose(g, _inverse_permutation(op.inputs[1])), None], numerics=EXACT)


def _checked_perm(perm, ndim):
    perm = [int(p) for p in np.ravel(perm)]
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"perm {perm} is not a permutation of the {ndim} dims of the input")
    return perm


def _inverse_permutation(perm):
    value = constant_value(perm)
    if value is None:
        raise NotImplementedError("the gradient of Transpose needs a constant perm")
    return np.argsort(np.ravel(value)).astype(np.int32)


def _infer_fill(ctx):
    if ctx.shape(1).ndims not in (None, 0):
        raise ctx.error(f"value must be a scalar, got shape {show(ctx.shape(1))}")
    dims = constant_value(ctx.inputs[0])
    if dims is None:
        n = ctx.shape(0)[0] if ctx.shape(0).ndims == 1 else None
        if n is not None and n > MAX_RANK:
            raise ctx.error(f"dims has {n} entries; a tensor has at most {MAX_RANK} dims")
        return [TensorShape(None if n is None else [None] * n)]
    if np.size(dims) > MAX_RANK:  # a million-entry dims vector must not become a million-dim shape
        raise ctx.error(f"dims has {np.size(dims)} entries; a tensor has at most {MAX_RANK} dims")
    dims = [int(d) for d in np.ravel(dims)]
    if any(d < 0 for d in dims):
        raise ctx.error(f"dims {dims} must not be negative")
    return [TensorShape(dims)]


def _fill(dims, value):
    if np.size(dims) > MAX_RANK:
        raise ValueError(f"dims has {np.size(dims)} entries; a tensor has at most {MAX_RANK} dims")
    dims = tuple(int(d) for d in np.ravel(dims))
    if any(d < 0 for d in dims):
        raise ValueError(f"dims {list(dims)} must not be negative")
    check_size(dims, np.asarray(value).dtype)
    return np.full(dims, value, dtype=np.asarray(value).dtype)


FILL = define(
    "Fill", "dims: index_type, value: T -> output: T",
    doc="A tensor of shape `dims` with every element `value`; nothing is allocated until it runs.",
    attrs={"T": Attr("type"), "index_type": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_fill, kernel=_fill,
    grad=lambda op, g: [None, math_ops.reduce_sum(g)], numerics=EXACT)


def _infer_shape_op(ctx):
    x = ctx.shape(0)
    return [TensorShape([x.ndims])]


def _shape_kernel(x, *, out_type):
    return np.array(np.shape(x), dtype=out_type.np)


SHAPE = define(
    "Shape", "input: T -> output: out_type",
    doc="The input's shape as a 1-D tensor.",
    attrs={"T": Attr("type"), "out_type": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_shape_op, kernel=_shape_kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _shape_n_kernel(*inputs, out_type):
    return tuple(np.array(np.shape(x), dtype=out_type.np) for x in inputs)


SHAPE_N = define(
    "ShapeN", "input: N*T -> output: N*out_type",
    doc="The shapes of N tensors, as N 1-D tensors.",
    attrs={"N": Attr("int"), "T": Attr("type"), "out_type": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=lambda ctx: [TensorShape([t.shape.ndims]) for t in ctx.inputs], kernel=_shape_n_kernel,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _size_kernel(x, *, out_type):
    return np.array(np.size(x), dtype=out_type.np)


SIZE = define(
    "Size", "input: T -> output: out_type",
    doc="The input's number of elements as a scalar.",
    attrs={"T": Attr("type"), "out_type": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=lambda ctx: [TensorShape(())], kernel=_size_kernel, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _rank_kernel(x):
    return np.array(np.ndim(x), dtype=np.int32)


RANK = define(
    "Rank", "input: T -> output: int32",
    doc="The input's number of dims as a scalar.",
    attrs={"T": Attr("type")}, infer=lambda ctx: [TensorShape(())], kernel=_rank_kernel,
    grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_range(ctx):
    values = [constant_value(t) for t in ctx.inputs]
    if any(v is None for v in values):
        return [TensorShape([None])]
    count = _range_count(*values)
    # a long range is counted, not built: a file's Range(0, 10**18, 1) must load without allocating
    return [TensorShape([len(_range(*values)) if count <= 1 << 16 else count])]


def _range_count(start, limit, delta):
    if np.ndim(start) or np.ndim(limit) or np.ndim(delta):
        raise ValueError(f"Range: start, limit and delta must be scalars, got shapes "
                         f"{show(np.shape(start))}, {show(np.shape(limit))} and {show(np.shape(delta))}")
    if delta == 0:
        raise ValueError("Range: delta must not be 0")
    if np.asarray(start).dtype.kind in "iu":
        return max(0, -((int(start) - int(limit)) // int(delta)))
    return _float_range_count(start, limit, delta)


def _range(start, limit, delta):
    count = _range_count(start, limit, delta)
    dtype = np.asarray(start).dtype
    check_size((count,), dtype)
    if dtype.kind in "iu":
        # start + delta * i in uint64 arithmetic, which wraps modulo 2^64: every value in the
        # range fits the dtype, so the wrapped result cast back is exact, and a uint64 delta
        # over 2^63 (which int64 cannot hold) works too
        steps = np.arange(count, dtype=np.uint64) * np.uint64(int(delta) % (1 << 64))
        return (steps + np.uint64(int(start) % (1 << 64))).astype(dtype)
    return np.arange(start, limit, delta, dtype=dtype)


def _float_range_count(start, limit, delta):
    """How many values a float Range holds (ceil((limit - start) / delta)); refuses NaN and inf."""
    span = (float(limit) - float(start)) / float(delta)
    if not np.isfinite(span):
        raise ValueError(f"Range: start {start}, limit {limit} and delta {delta} must be finite "
                         "and give a finite count")
    return max(0, int(np.ceil(span)))


RANGE = define(
    "Range", "start: Tidx, limit: Tidx, delta: Tidx -> output: Tidx",
    doc="[start, start + delta, ...) up to but not including limit.",
    attrs={"Tidx": Attr("type", dtypes.int32, dtypes.NUMERIC)},
    infer=_infer_range, kernel=_range, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def _infer_broadcast_to(ctx):
    check_dims_vector(ctx, 1, "shape")
    target = constant_value(ctx.inputs[1])
    if target is None:
        n = ctx.shape(1)[0] if ctx.shape(1).ndims == 1 else None
        return [TensorShape(None if n is None else [None] * n)]
    out = TensorShape([int(d) for d in np.ravel(target)])
    if broadcast(ctx.shape(0), out) is None:
        raise ctx.error(f"cannot broadcast {show(ctx.shape(0))} to {show(out)}")
    return [out]


def _broadcast_to(x, shape):
    check_dims_value(shape)
    dims = tuple(int(d) for d in np.ravel(shape))
    check_size(dims, np.asarray(x).dtype)
    return np.array(np.broadcast_to(x, dims))


BROADCAST_TO = define(
    "BroadcastTo", "input: T, shape: Tidx -> output: T",
    doc="Repeats the input along size-1 and missing leading dims to reach `shape` (numpy rules).",
    attrs={"T": Attr("type"), "Tidx": Attr("type", dtypes.int32, dtypes.INDEX)},
    infer=_infer_broadcast_to, kernel=_broadcast_to,
    grad=lambda op, g: [math_ops.unbroadcast(g, op.inputs[0]), None], numerics=EXACT)


def _like(fill_value):
    def kernel(x):
        dtype = np.asarray(x).dtype
        if dtype.kind == "O":  # a string tensor: TF's zeros of strings are empty strings
            if fill_value != 0:
                raise ValueError("OnesLike takes numbers or bools, not strings")
            return np.full(np.shape(x), b"", dtype=object)
        return np.full(np.shape(x), fill_value, dtype=dtype)
    return kernel


ZEROS_LIKE = define(
    "ZerosLike", "x: T -> y: T", doc="Zeros with the shape and dtype of x.",
    attrs={"T": Attr("type")}, infer=same_as_input(), kernel=_like(0), grad=NOT_DIFFERENTIABLE, numerics=EXACT)
ONES_LIKE = define(
    "OnesLike", "x: T -> y: T", doc="Ones with the shape and dtype of x.",
    attrs={"T": Attr("type")}, infer=same_as_input(), kernel=_like(1), grad=NOT_DIFFERENTIABLE, numerics=EXACT)


# -- builders -------------------------------------------------------------------------

def constant(value, dtype=None, shape=None, name="Const"):
    """A Const node holding `value` (Python ints become int32, floats float32, as in TF)."""
    array = python_to_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        if array.size == 1:
            array = np.broadcast_to(array.reshape(()), shape)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise ValueError(f"constant: {array.size} values cannot fill shape {shape}")
    array = frozen(array)
    return build("Const", [], name=name, default_name="Const",
                 attrs={"value": array, "dtype": dtypes.as_dtype(array.dtype)}).outputs[0]


def Constant(value, dtype=None, shape=None, name="Const"):  # noqa: N802 - the seed listing's spelling
    """The seed listing's `tf.Constant(15)`: the same as `constant`."""
    return constant(value, dtype=dtype, shape=shape, name=name)


def placeholder(dtype=dtypes.float32, shape=None, name=None):
    """An input fed at run time; `shape` may have None dims, or be None for any shape."""
    return build("Placeholder", [], name=name, default_name="Placeholder",
                 attrs={"dtype": dtypes.as_dtype(dtype), "shape": TensorShape(shape)}).outputs[0]


def Placeholder(dtype=dtypes.float32, shape=None, name=None):  # noqa: N802 - the seed listing's spelling
    """The seed listing's `Placeholder()`: float32 and any shape unless told otherwise."""
    return placeholder(dtype, shape, name)


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    value = convert_to_tensor(input)
    return build("PlaceholderWithDefault", [value], name=name, default_name="PlaceholderWithDefault",
                 attrs={"dtype": value.dtype, "shape": TensorShape(shape)}).outputs[0]


def identity(input, name=None):  # noqa: A002
    return build("Identity", [input], name=name, default_name="Identity").outputs[0]


def stop_gradient(input, name=None):  # noqa: A002
    return build("StopGradient", [input], name=name, default_name="StopGradient").outputs[0]


def no_op(name=None):
    return build("NoOp", [], name=name, default_name="NoOp")


def group(*inputs, name=None):
    """A NoOp that runs only after every input has run."""
    return build("NoOp", [], name=name, default_name="group_deps",
                 control_inputs=[getattr(i, "op", i) for i in inputs])


def zeros_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) is not tensor.dtype:
        tensor = math_ops.cast(tensor, dtype)
    return build("ZerosLike", [tensor], name=name, default_name="zeros_like").outputs[0]


def ones_like(tensor, dtype=None, name=None):
    tensor = convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) is not tensor.dtype:
        tensor = math_ops.cast(tensor, dtype)
    return build("OnesLike", [tensor], name=name, default_name="ones_like").outputs[0]



def reshape(tensor, shape, name=None):
    return build("Reshape", [tensor, shape], name=name, default_name="Reshape").outputs[0]


def transpose(a, perm=None, name="transpose"):
    """Reverses the dims when `perm` is None (the input's rank must then be known)."""
    if perm is None:
        a = convert_to_tensor(a)
        if a.shape.ndims is None:
            raise ValueError(f"transpose: '{a.name}' has unknown rank; pass perm explicitly")
        perm = list(range(a.shape.ndims - 1, -1, -1))
    return build("Transpose", [a, perm], name=name, default_name="transpose").outputs[0]


def shape_of(x, out_type=dtypes.int32, name=None):
    """tf.shape: the static shape as a Const when fully known, else a Shape node."""
    x = convert_to_tensor(x)
    if x.shape.is_fully_defined():
        return constant(list(x.shape.dims), dtype=out_type, name=name or "Shape")
    return build("Shape", [x], name=name, default_name="Shape", attrs={"out_type": out_type}).outputs[0]


def rank(x, name=None):
    return build("Rank", [x], name=name, default_name="Rank").outputs[0]


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    if limit is None:
        start, limit = 0, start
    return build("Range", [start, limit, delta], name=name, default_name="range",
                 attrs={"Tidx": dtype} if dtype else None).outputs[0]


def size(x, out_type=dtypes.int32, name=None):
    return build("Size", [x], name=name, default_name="Size", attrs={"out_type": out_type}).outputs[0]


def broadcast_to(input, shape, name=None):  # noqa: A002
    return build("BroadcastTo", [input, shape], name=name, default_name="BroadcastTo").outputs[0]


def fill(dims, value, name=None):
    return build("Fill", [dims, value], name=name, default_name="Fill").outputs[0]


def _filled(shape, dtype, scalar, name):
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name) as scope:
        dims = [int(d) for d in np.ravel(shape)]
        index = dtypes.int32 if all(d < 2**31 for d in dims) else dtypes.int64
        dims = constant(dims, dtype=index, name="shape_as_tensor")
        value = constant(scalar, dtype=dtype, name="Const")
        return fill(dims, value, name=scope)


def zeros(shape, dtype=dtypes.float32, name="zeros"):
    """A Fill node: `zeros([10**12, 10**12])` builds a node and allocates nothing."""
    return _filled(shape, dtype, 0, name)


def ones(shape, dtype=dtypes.float32, name="ones"):
    return _filled(shape, dtype, 1, name)
