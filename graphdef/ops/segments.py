"""Segment reductions: SegmentSum/Mean/Max/Min/Prod (sorted ids), UnsortedSegmentMax/Min/Prod and
the SparseSegmentSum/Mean/SqrtN family (rows picked by `indices`, then reduced by sorted ids).

UnsortedSegmentSum lives in slicing.py beside GatherV2, whose gradient it is. Bad ids are errors
in TensorFlow's words; every output size an id or num_segments decides is checked against the
size limit before anything is allocated.
"""

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT_BUT_ZERO_SIGN, tensor_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import (NOT_DIFFERENTIABLE, Attr, build, constant_value, convert_to_tensor, define,
                                   lookup)
from graphdef.framework.graph import name_scope
from graphdef.ops.manip import const_ints
from graphdef.ops import array as array_ops
from graphdef.ops import compare as compare_ops
from graphdef.ops import manip as manip_ops
from graphdef.ops import math as math_ops
from graphdef.ops import slicing

IDS = frozenset((dtypes.int32, dtypes.int64))


# -- what the reductions share -------------------------------------------------------------------

def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


# kind -> (the ufunc that accumulates, the value of a segment no row reached in the unsorted ops)
_REDUCERS = {
    "sum": (np.add, lambda d: 0),
    "prod": (np.multiply, lambda d: 1),
    "max": (np.maximum, _lowest),
    "min": (np.minimum, _highest),
}


_RUN_STEPS = 256  # past this many rows in one segment, a Python step per row costs more than ufunc.at


def _reduce(kind, data, ids, num):
    """Rows of `data` ([n, ...]) reduced into `num` segments by `ids` ([n], each in [0, num)), each
    segment's rows combined left to right; also the count of rows each segment got."""
    ufunc, empty = _REDUCERS["sum" if kind in ("mean", "sqrtn") else kind]
    rest = data.shape[1:]
    check_size((num,) + rest, data.dtype)  # an id or num_segments is a value: it may ask for anything
    out = np.full((num,) + rest, empty(data.dtype), data.dtype)
    counts = np.bincount(ids, minlength=num)[:num] if ids.size else np.zeros(num, np.int64)
    if ids.size == 0:
        return out, counts
    if np.any(ids[1:] < ids[:-1]):  # a stable sort keeps each segment's rows in their order
        order = np.argsort(ids, kind="stable")
        ids, data = ids[order], data[order]
    starts = np.concatenate([[0], np.flatnonzero(ids[1:] != ids[:-1]) + 1])
    lengths = np.diff(np.append(starts, ids.size))
    with np.errstate(all="ignore"):  # integers wrap as in TF; float overflow is inf
        if lengths.max() > _RUN_STEPS:
            ufunc.at(out, ids, data)
            return out, counts
        # the k-th row of every run at once, k = 0, 1, ...: the order ufunc.at would take (so the
        # same bits) at a fraction of its time when segments are short
        acc = data[starts].copy()
        for k in range(1, int(lengths.max())):
            live = np.flatnonzero(lengths > k)
            acc[live] = ufunc(acc[live], data[starts[live] + k])
    out[ids[starts]] = acc
    return out, counts


def _divide(sums, divisors):
    """sums / divisors per row; integers truncate toward zero, as C++ does."""
    divisors = divisors.reshape((-1,) + (1,) * (sums.ndim - 1))
    if sums.dtype.kind == "f":
        return (sums / divisors.astype(sums.dtype)).astype(sums.dtype)
    q = np.abs(sums) // divisors
    return (np.sign(sums) * q).astype(sums.dtype)


def _finish(kind, out, counts, unsorted):
    empty = counts == 0
    if kind == "mean":
        out = _divide(out, np.maximum(counts, 1))
    elif kind == "sqrtn":
        root = np.sqrt(np.maximum(counts, 1)).astype(out.dtype)
        out = (out / root.reshape((-1,) + (1,) * (out.ndim - 1))).astype(out.dtype)
    if not unsorted and kind in ("max", "min") and empty.any():  # the sorted ops' max and min give 0 there
        out[empty] = 0
    return out


def _check_sorted(ids, what="segment ids"):
    """Sorted ids, as TF checks them: the first must be >= 0, each no less than the one before."""
    if ids.size == 0:
        return 0
    if np.any(ids[1:] < ids[:-1]):
        raise ValueError(f"{what} are not increasing")
    last = int(ids[-1])
    if ids[0] < 0:
        raise ValueError(f"Segment id {int(ids[0])} out of range [0, {last + 1}), possibly because "
                         "'segment_ids' input is not sorted.")
    return last + 1


def _scalar_count(num_segments, what="num_segments"):
    if np.ndim(num_segments) != 0:
        raise ValueError(f"{what} should be a scalar, not shape {show(np.shape(num_segments))}")
    num = int(num_segments)
    if num < 0:
        raise ValueError(f"Input {what} == {num} must not be negative.")
    return num


# -- SegmentSum, Mean, Max, Min, Prod ------------------------------------------------------------

def _infer_sorted(ctx):
    data, ids = ctx.shape(0), ctx.shape(1)
    if ids.ndims not in (None, 1):
        raise ctx.error(f"segment_ids should be a vector, got shape {show(ids)}")
    if data.ndims == 0:
        raise ctx.error("data must have at least one dim, got a scalar")
    if data.ndims and ids.ndims == 1 and not TensorShape(data.dims[:1]).is_compatible_with(ids):
        raise ctx.error(f"segment_ids {show(ids)} should be the same size as dimension 0 of data {show(data)}")
    return [TensorShape(None if data.ndims is None else (_rows_of(ctx, 1),) + data.dims[1:])]


def _rows_of(ctx, index):
    """The output's rows when the sorted ids are a constant (last id + 1), else unknown; bad constant
    ids are the kernel's to refuse, in its words."""
    ids = constant_value(ctx.inputs[index])
    if ids is None or np.ndim(ids) != 1:
        return None
    try:
        return _check_sorted(np.asarray(ids))
    except ValueError:
        return None


def _sorted_kernel(kind):
    def kernel(data, segment_ids):
        data, ids = np.asarray(data), np.asarray(segment_ids)
        if ids.ndim != 1:
            raise ValueError("segment_ids should be a vector.")
        if data.ndim == 0 or data.shape[0] != ids.size:
            raise ValueError("segment_ids should be the same size as dimension 0 of input.")
        num = _check_sorted(ids)
        out, counts = _reduce(kind, data, ids.astype(np.int64), num)
        return _finish(kind, out, counts, unsorted=False)
    return kernel


def _ones_column(data, dtype):
    """Ones of shape [n, 1, ...] for data [n, ...]: counts per segment that divide g row by row."""
    n = slicing.gather(array_ops.shape_of(data), [0])
    extra = data.shape.ndims - 1
    shape = manip_ops.concat([n, array_ops.constant([1] * extra, dtype=dtypes.int32)], 0) if extra else n
    return array_ops.fill(shape, array_ops.constant(1, dtype=dtype))


def _segment_sum_grad(op, g):
    return [slicing.gather(g, op.inputs[1]), None]


def _segment_mean_grad(op, g):
    data, ids = op.inputs
    if data.shape.ndims is None:
        raise NotImplementedError(f"the gradient of SegmentMean '{op.name}' needs data's rank known")
    counts = segment_sum(_ones_column(data, g.dtype), ids)
    return [slicing.gather(g / counts, ids), None]


def _gather_drop_negatives(params, ids, zero_clipped=None, is_positive=None):
    """TF's helper: params' rows at ids, zeros where an id is negative (dropped by the forward op)."""
    if zero_clipped is None:
        zero_clipped = math_ops.maximum(ids, array_ops.constant(0, dtype=ids.dtype))
    gathered = slicing.gather(params, zero_clipped)
    if is_positive is None:
        is_positive = compare_ops.greater_equal(ids, array_ops.constant(0, dtype=ids.dtype))
        extra = gathered.shape.ndims - ids.shape.ndims
        if extra:
            shape = manip_ops.concat([array_ops.shape_of(ids), array_ops.constant([1] * extra, dtype=dtypes.int32)],
                                     0)
            is_positive = array_ops.reshape(is_positive, shape)
    return compare_ops.select_v2(is_positive, gathered, array_ops.zeros_like(gathered)), zero_clipped, is_positive


def _min_or_max_grad(op, g):
    """TF's rule: the gradient is shared evenly among the rows that equal their segment's result."""
    data, ids = op.inputs[0], op.inputs[1]
    if data.shape.ndims is None or ids.shape.ndims is None:
        raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs known ranks")
    unsorted = len(op.inputs) == 3
    if unsorted:
        gathered, clipped, positive = _gather_drop_negatives(op.outputs[0], ids)
        selected = compare_ops.logical_and(compare_ops.equal(data, gathered), positive)
        num = slicing.unsorted_segment_sum(math_ops.cast(selected, g.dtype), ids, op.inputs[2])
        weighted, _, _ = _gather_drop_negatives(g / num, None, clipped, positive)
        return [compare_ops.select_v2(selected, weighted, array_ops.zeros_like(weighted)), None, None]
    selected = compare_ops.equal(data, slicing.gather(op.outputs[0], ids))
    num = segment_sum(math_ops.cast(selected, g.dtype), ids)
    weighted = slicing.gather(g / num, ids)
    return [compare_ops.select_v2(selected, weighted, array_ops.zeros_like(weighted)), None]


def _prod_grad(op, g):
    """TF's rule, which stays finite with zeros: a segment with two zeros has gradient 0 everywhere,
    a zero's gradient is the product of the others, any other row's is the product over the row."""
    data, ids = op.inputs[0], op.inputs[1]
    unsorted = len(op.inputs) == 3
    if data.shape.ndims is None or ids.shape.ndims is None:
        raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs known ranks")
    zero = array_ops.zeros_like(data)
    is_zero = compare_ops.equal(data, zero)
    zeros_int = math_ops.cast(is_zero, dtypes.int32)
    if unsorted:
        num_zeros = slicing.unsorted_segment_sum(zeros_int, ids, op.inputs[2])
    else:
        num_zeros = segment_sum(zeros_int, ids)
    g = compare_ops.select_v2(compare_ops.greater(num_zeros, array_ops.constant(1, dtype=dtypes.int32)),
                              array_ops.zeros_like(g), g)
    non_zero_data = compare_ops.select_v2(is_zero, array_ops.ones_like(data), data)
    if unsorted:
        non_zero_prod = unsorted_segment_prod(non_zero_data, ids, op.inputs[2])
        clipped = math_ops.maximum(ids, array_ops.constant(0, dtype=ids.dtype))
        gathered_prod = slicing.gather(op.outputs[0], clipped)
        gathered_non_zero = slicing.gather(non_zero_prod, clipped)
        gathered_g, _, _ = _gather_drop_negatives(g, ids, clipped)
    else:
        non_zero_prod = segment_prod(non_zero_data, ids)
        gathered_prod = slicing.gather(op.outputs[0], ids)
        gathered_non_zero = slicing.gather(non_zero_prod, ids)
        gathered_g = slicing.gather(g, ids)
    partial = compare_ops.select_v2(is_zero, gathered_non_zero, gathered_prod / non_zero_data)
    return [gathered_g * partial, None] + ([None] if unsorted else [])


def _sorted_op(type_name, kind, allowed, doc, grad, numerics):
    return define(type_name, "data: T, segment_ids: Tindices -> output: T", doc=doc,
                  attrs={"T": Attr("type", allowed=allowed), "Tindices": Attr("type", allowed=IDS)},
                  infer=_infer_sorted, kernel=_sorted_kernel(kind), grad=grad, numerics=numerics)


SEGMENT_SUM = _sorted_op("SegmentSum", "sum", dtypes.NUMERIC, "output[k] = the sum of data's rows with segment id k; "
                         "ids sorted, rows max(id) + 1, empty segments 0.", _segment_sum_grad, tensor_ulps(8))
SEGMENT_MEAN = _sorted_op("SegmentMean", "mean", dtypes.NUMERIC, "output[k] = the mean of data's rows with segment "
                          "id k; ids sorted, empty segments 0.", _segment_mean_grad, tensor_ulps(8))
SEGMENT_MAX = _sorted_op("SegmentMax", "max", dtypes.NUMERIC, "output[k] = the largest of data's rows with segment "
                         "id k; ids sorted, empty segments 0.", _min_or_max_grad, EXACT_BUT_ZERO_SIGN)
SEGMENT_MIN = _sorted_op("SegmentMin", "min", dtypes.NUMERIC, "output[k] = the smallest of data's rows with segment "
                         "id k; ids sorted, empty segments 0.", _min_or_max_grad, EXACT_BUT_ZERO_SIGN)
SEGMENT_PROD = _sorted_op("SegmentProd", "prod", dtypes.NUMERIC, "output[k] = the product of data's rows with "
                          "segment id k; ids sorted, empty segments 1.", _prod_grad, tensor_ulps(8))


# -- UnsortedSegmentMax, Min, Prod ----------------------------------------------------------------

def _unsorted_kernel(kind):
    def kernel(data, segment_ids, num_segments):
        data, ids = np.asarray(data), np.asarray(segment_ids)
        num = _scalar_count(num_segments)
        if data.shape[:ids.ndim] != ids.shape:
            raise ValueError(f"segment_ids {show(ids.shape)} must be a prefix of data's shape {show(data.shape)}")
        flat = ids.reshape(-1).astype(np.int64)
        bad = np.flatnonzero(flat >= num)
        if bad.size:
            raise ValueError(f"segment_ids[{int(bad[0])}] = {int(flat[bad[0]])} is out of range [0, {num})")
        keep = flat >= 0  # TF drops rows with a negative id
        row_shape = data.shape[ids.ndim:]
        rows = data.reshape((ids.size,) + row_shape)[keep]
        out, counts = _reduce(kind, rows, flat[keep], num)
        return _finish(kind, out, counts, unsorted=True)
    return kernel


def _unsorted_op(type_name, kind, doc, grad, numerics):
    return define(type_name, "data: T, segment_ids: Tindices, num_segments: Tnumsegments -> output: T", doc=doc,
                  attrs={"T": Attr("type", allowed=dtypes.NUMERIC), "Tindices": Attr("type", allowed=IDS),
                         "Tnumsegments": Attr("type", dtypes.int32, IDS)},
                  infer=slicing._infer_segment_sum, kernel=_unsorted_kernel(kind), grad=grad, numerics=numerics)


UNSORTED_SEGMENT_MAX = _unsorted_op("UnsortedSegmentMax", "max", "output[k] = the largest of data's rows with "
                                    "segment id k; negative ids dropped, empty segments the dtype's lowest value.",
                                    _min_or_max_grad, EXACT_BUT_ZERO_SIGN)
UNSORTED_SEGMENT_MIN = _unsorted_op("UnsortedSegmentMin", "min", "output[k] = the smallest of data's rows with "
                                    "segment id k; negative ids dropped, empty segments the dtype's highest value.",
                                    _min_or_max_grad, EXACT_BUT_ZERO_SIGN)
UNSORTED_SEGMENT_PROD = _unsorted_op("UnsortedSegmentProd", "prod", "output[k] = the product of data's rows with "
                                     "segment id k; negative ids dropped, empty segments 1.", _prod_grad,
                                     tensor_ulps(8))


# -- SparseSegmentSum, Mean, SqrtN (and WithNumSegments) ----------------------------------------

def _infer_sparse(ctx):
    data, indices, ids = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    for shape, what in ((indices, "indices"), (ids, "segment_ids")):
        if shape.ndims not in (None, 1):
            raise ctx.error(f"{what} should be a vector, got shape {show(shape)}")
    if not indices.is_compatible_with(ids):
        raise ctx.error(f"segment_ids and indices should have same size, got {show(ids)} and {show(indices)}")
    if data.ndims == 0:
        raise ctx.error("data must have at least one dim, got a scalar")
    num = None
    if len(ctx.inputs) == 4:
        if ctx.shape(3).ndims not in (None, 0):
            raise ctx.error(f"num_segments should be a scalar, got shape {show(ctx.shape(3))}")
        num = const_ints(ctx.inputs[3])
        if num is not None and num < 0:
            raise ctx.error(f"num_segments {num} must not be negative")
    else:
        num = _rows_of(ctx, 2)
    return [TensorShape(None if data.ndims is None else (num,) + data.dims[1:])]


def _sparse_kernel(kind, with_num):
    def reduce_rows(data, indices, segment_ids, num_segments=None):
        data, indices, ids = np.asarray(data), np.asarray(indices), np.asarray(segment_ids)
        if indices.ndim != 1 or ids.ndim != 1:
            raise ValueError("indices and segment_ids should be vectors.")
        if indices.size != ids.size:
            raise ValueError("segment_ids and indices should have same size.")
        if data.ndim == 0:
            raise ValueError("data must have at least one dim, got a scalar")
        bad = np.flatnonzero((indices < 0) | (indices >= data.shape[0]))
        if bad.size:
            raise ValueError(f"Bad: indices[{int(bad[0])}] == {int(indices[bad[0]])} out of range "
                             f"[0, {data.shape[0]})")
        if with_num:
            num = _scalar_count(num_segments)
            if ids.size and np.any(ids[1:] < ids[:-1]):
                raise ValueError("segment ids are not increasing")
            if ids.size and ids[0] < 0:
                raise ValueError("segment ids must be >= 0")
            if ids.size and ids[-1] >= num:
                raise ValueError("segment ids must be < num_segments")
        else:
            num = _check_sorted(ids)
        out, counts = _reduce(kind, data[indices.astype(np.int64)], ids.astype(np.int64), num)
        return _finish(kind, out, counts, unsorted=False)

    if with_num:
        def kernel(data, indices, segment_ids, num_segments, *, sparse_gradient):
            return reduce_rows(data, indices, segment_ids, num_segments)
    else:
        def kernel(data, indices, segment_ids, *, sparse_gradient):
            return reduce_rows(data, indices, segment_ids)
    return kernel


def _sparse_grad(kind):
    """Each picked row gets its segment's gradient (divided by the count, or its root, for Mean and
    SqrtN), summed back into the row of data it came from: what TF's SparseSegment*Grad ops compute,
    from ops every runtime has."""
    def grad(op, g):
        data, indices, ids = op.inputs[:3]
        picked = slicing.gather(g, ids)
        if kind != "sum":
            if g.shape.ndims is None:
                raise NotImplementedError(f"the gradient of {op.type} '{op.name}' needs data's rank known")
            ones = array_ops.fill(array_ops.shape_of(ids), array_ops.constant(1, dtype=g.dtype))
            counts = slicing.gather(segment_sum(ones, ids), ids)
            if kind == "sqrtn":
                counts = math_ops.sqrt(counts)
            extra = g.shape.ndims - 1
            if extra:
                counts = array_ops.reshape(counts, manip_ops.concat(
                    [array_ops.shape_of(counts), array_ops.constant([1] * extra, dtype=dtypes.int32)], 0))
            picked = picked / counts
        dim0 = slicing.gather(array_ops.shape_of(data), 0)
        return [slicing.unsorted_segment_sum(picked, indices, dim0)] + [None] * (len(op.inputs) - 1)
    return grad


def _sparse_op(type_name, kind, allowed, doc, numerics):
    with_num = type_name.endswith("WithNumSegments")
    signature = "data: T, indices: Tidx, segment_ids: Tsegmentids" + (", num_segments: Tnumsegments" if with_num
                                                                      else "") + " -> output: T"
    attrs = {"T": Attr("type", allowed=allowed), "Tidx": Attr("type", dtypes.int32, IDS),
             "Tsegmentids": Attr("type", dtypes.int32, IDS), "sparse_gradient": Attr("bool", False)}
    if with_num:
        attrs["Tnumsegments"] = Attr("type", dtypes.int32, IDS)
    return define(type_name, signature, doc=doc, attrs=attrs, infer=_infer_sparse,
                  kernel=_sparse_kernel(kind, with_num), grad=_sparse_grad(kind), numerics=numerics)


_SPARSE = {"sum": ("the sum", dtypes.NUMERIC), "mean": ("the mean", dtypes.FLOATS),
           "sqrtn": ("the sum / sqrt(count)", dtypes.FLOATS)}
SPARSE_SEGMENT_OPS = {}
for _name, _kind in (("SparseSegmentSum", "sum"), ("SparseSegmentMean", "mean"), ("SparseSegmentSqrtN", "sqrtn")):
    _what, _allowed = _SPARSE[_kind]
    SPARSE_SEGMENT_OPS[_name] = _sparse_op(
        _name, _kind, _allowed, f"output[k] = {_what} of data[indices[i]] over the i with segment id k; ids sorted, "
        "rows max(id) + 1, empty segments 0.", tensor_ulps(8))
    SPARSE_SEGMENT_OPS[_name + "WithNumSegments"] = _sparse_op(
        _name + "WithNumSegments", _kind, _allowed, f"output[k] = {_what} of data[indices[i]] over the i with "
        "segment id k; ids sorted, num_segments rows, empty segments 0.", tensor_ulps(8))


# -- SparseSegmentSumGrad, MeanGrad, SqrtNGrad -----------------------------------------------------
# What TF's own gradient graphs of the sparse reductions hold (training graphs TF exported): each
# picked row of data gets its segment's gradient row, scaled by 1, 1/count or 1/sqrt(count).

def _sparse_grad_kernel(kind):
    def kernel(grad, indices, segment_ids, output_dim0):
        g, indices, ids = np.asarray(grad), np.asarray(indices), np.asarray(segment_ids)
        if indices.ndim != 1 or ids.shape != indices.shape:
            raise ValueError(f"indices and segment_ids must be vectors of one length, got {show(indices.shape)} and "
                             f"{show(ids.shape)}")
        if g.ndim == 0:
            raise ValueError("grad must have at least one dim, got a scalar")
        if np.ndim(output_dim0) != 0:
            raise ValueError(f"output_dim0 should be a scalar, got shape {show(np.shape(output_dim0))}")
        rows, segments = int(output_dim0), g.shape[0]
        if rows < 0:
            raise ValueError(f"Expected a non-negative size, got {rows}")
        if ids.size and ids.min() < 0:
            raise ValueError(f"Segment id {int(ids.min())} out of range [0, {segments}).")
        if ids.size and ids.max() >= segments:
            raise ValueError(f"Invalid number of segments: segment id {int(ids.max())} for a grad of {segments} rows")
        bad = np.flatnonzero((indices < 0) | (indices >= rows))
        if bad.size:
            raise ValueError(f"Index {int(indices[bad[0]])} out of range [0, {rows}).")
        ids, indices = ids.astype(np.int64), indices.astype(np.int64)
        picked = g[ids]
        if kind != "sum":
            counts = np.maximum(np.bincount(ids, minlength=segments), 1).astype(g.dtype)
            scale = (np.ones((), g.dtype) / (counts if kind == "mean" else np.sqrt(counts))).astype(g.dtype)
            picked = picked * scale[ids].reshape((-1,) + (1,) * (g.ndim - 1))
        out, _ = _reduce("sum", picked, indices, rows)
        return out
    return kernel


def _infer_sparse_grad(ctx):
    g = ctx.shape(0)
    for i, what in ((1, "indices"), (2, "segment_ids")):
        if ctx.shape(i).ndims not in (None, 1):
            raise ctx.error(f"{what} must be a vector, got shape {show(ctx.shape(i))}")
    if g.ndims == 0:
        raise ctx.error("grad must have at least one dim, got a scalar")
    return [TensorShape(None if g.ndims is None else (const_ints(ctx.inputs[3]),) + g.dims[1:])]


for _kind, _what in (("Sum", "1"), ("Mean", "1 / count"), ("SqrtN", "1 / sqrt(count)")):
    define(f"SparseSegment{_kind}Grad", "grad: T, indices: Tidx, segment_ids: Tsegmentids, output_dim0: int32 -> "
           "output: T",
           doc=f"The gradient of SparseSegment{_kind}: output[indices[i]] += grad[segment_ids[i]] * {_what}, "
               "output_dim0 rows.",
           attrs={"T": Attr("type", allowed=dtypes.FLOATS), "Tidx": Attr("type", dtypes.int32, IDS),
                  "Tsegmentids": Attr("type", dtypes.int32, IDS)},
           infer=_infer_sparse_grad, kernel=_sparse_grad_kernel(_kind.lower()), grad=NOT_DIFFERENTIABLE,
           numerics=tensor_ulps(8))


# -- builders ------------------------------------------------------------------------------------

def _sorted_builder(type_name, default_name):
    def segment(data, segment_ids, name=None):
        return build(type_name, [data, segment_ids], name=name, default_name=type_name).outputs[0]
    segment.__name__ = default_name
    segment.__doc__ = f"tf.math.{default_name}: {lookup(type_name).doc}"
    return segment


def _unsorted_builder(type_name, default_name):
    def segment(data, segment_ids, num_segments, name=None):
        return build(type_name, [data, segment_ids, num_segments], name=name, default_name=type_name).outputs[0]
    segment.__name__ = default_name
    segment.__doc__ = f"tf.math.{default_name}: {lookup(type_name).doc}"
    return segment


segment_sum = _sorted_builder("SegmentSum", "segment_sum")
segment_mean = _sorted_builder("SegmentMean", "segment_mean")
segment_max = _sorted_builder("SegmentMax", "segment_max")
segment_min = _sorted_builder("SegmentMin", "segment_min")
segment_prod = _sorted_builder("SegmentProd", "segment_prod")
unsorted_segment_max = _unsorted_builder("UnsortedSegmentMax", "unsorted_segment_max")
unsorted_segment_min = _unsorted_builder("UnsortedSegmentMin", "unsorted_segment_min")
unsorted_segment_prod = _unsorted_builder("UnsortedSegmentProd", "unsorted_segment_prod")


def _sparse_builder(base, default_name):
    def sparse_segment(data, indices, segment_ids, name=None, num_segments=None):
        inputs = [data, indices, segment_ids] + ([] if num_segments is None else [num_segments])
        type_name = base + ("" if num_segments is None else "WithNumSegments")
        return build(type_name, inputs, name=name, default_name=type_name).outputs[0]
    sparse_segment.__name__ = default_name
    sparse_segment.__doc__ = f"tf.sparse.{default_name.replace('sparse_', '')}: {SPARSE_SEGMENT_OPS[base].doc}"
    return sparse_segment


sparse_segment_sum = _sparse_builder("SparseSegmentSum", "sparse_segment_sum")
sparse_segment_mean = _sparse_builder("SparseSegmentMean", "sparse_segment_mean")
sparse_segment_sqrt_n = _sparse_builder("SparseSegmentSqrtN", "sparse_segment_sqrt_n")


def _unsorted_counts(data, segment_ids, num_segments):
    """TF's _unsorted_segment_N: rows per segment (at least 1), shaped to divide the sums."""
    data, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    if data.shape.ndims is None or ids.shape.ndims is None:
        raise ValueError("unsorted_segment_mean and sqrt_n need the ranks of data and segment_ids known")
    ones = array_ops.fill(array_ops.shape_of(ids), array_ops.constant(1, dtype=data.dtype))
    n = slicing.unsorted_segment_sum(ones, ids, num_segments)
    for _ in range(data.shape.ndims - ids.shape.ndims):
        n = manip_ops.expand_dims(n, -1)
    return data, ids, math_ops.maximum(n, array_ops.constant(1, dtype=data.dtype))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """tf.math.unsorted_segment_mean, composed as TF does (UnsortedSegmentSum over the counts)."""
    with name_scope(name, "unsorted_segment_mean"):
        data, ids, n = _unsorted_counts(data, segment_ids, num_segments)
        return slicing.unsorted_segment_sum(data, ids, num_segments) / n


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """tf.math.unsorted_segment_sqrt_n: the sums over the square root of the counts."""
    with name_scope(name, "unsorted_segment_sqrt_n"):
        data, ids, n = _unsorted_counts(data, segment_ids, num_segments)
        return slicing.unsorted_segment_sum(data, ids, num_segments) / math_ops.sqrt(n)
