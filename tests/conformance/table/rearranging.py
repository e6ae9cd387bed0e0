"""Conformance cases: rearranging, slicing and indexing."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, i64, feed


# -- rearranging, slicing and indexing ---------------------------------------------------------------

T234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 12


@case("squeeze_expand_dims", "Squeeze of every size-1 dim and of listed ones (negative too); ExpandDims at 0, -1 "
      "and 1 (an int64 dim).")
def _():
    x = np.arange(6, dtype=np.int32).reshape(1, 2, 1, 3, 1)
    t = feed("x", x)
    tf.squeeze(t, name="all")
    tf.squeeze(t, axis=[0, -1], name="some")
    tf.expand_dims(t, 0, name="e0")
    tf.expand_dims(t, -1, name="elast")
    tf.expand_dims(feed("v", f32(1, 2)), tf.constant(1, dtype=tf.int64), name="e1")
    return {"x": x, "v": f32(1, 2)}, {"all:0": x.reshape(2, 3), "some:0": x.reshape(2, 1, 3), "e0:0": x[None],
                                      "elast:0": x[..., None], "e1:0": f32([1], [2])}


@case("concat_stack_unstack", "ConcatV2 along axis 1 and -1 (int64 axis), Pack along axis 0 and -1, "
      "Unpack along axis 1 (three outputs).")
def _():
    a, b = T234, T234[:, :2] * 2
    ta, tb = feed("a", a), feed("b", b)
    tf.concat([ta, tb, ta], 1, name="c1")
    tf.concat([ta, ta], tf.constant(-1, dtype=tf.int64), name="clast")
    tf.stack([ta, ta * 2], name="s0")
    tf.stack([ta, -ta], axis=-1, name="slast")
    tf.unstack(ta, axis=1, name="u")
    return {"a": a, "b": b}, {
        "c1:0": np.concatenate([a, b, a], 1), "clast:0": np.concatenate([a, a], -1), "s0:0": np.stack([a, a * 2]),
        "slast:0": np.stack([a, -a], -1), "u:0": a[:, 0], "u:1": a[:, 1], "u:2": a[:, 2]}


@case("split_splitv", "Split into equal parts along axis -1, and SplitV by sizes [1, -1, 1] (the -1 takes the rest) "
      "along axis 1.")
def _():
    x = feed("x", T234)
    tf.split(x, 2, axis=-1, name="eq")
    tf.split(x, [1, -1, 1], axis=1, name="by")
    return {"x": T234}, {"eq:0": T234[..., :2], "eq:1": T234[..., 2:], "by:0": T234[:, :1], "by:1": T234[:, 1:2],
                         "by:2": T234[:, 2:]}


@case("slice", "Slice [1,0,1] with size [1,-1,2] (-1: to the end), and an empty slice.")
def _():
    x = feed("x", T234)
    tf.slice(x, [1, 0, 1], [1, -1, 2], name="s")
    tf.slice(x, [0, 3, 0], [2, 0, 4], name="empty")
    return {"x": T234}, {"s:0": T234[1:2, :, 1:3], "empty:0": T234[:, 3:3]}


@case("strided_slice", "StridedSlice through Python indexing: x[1], x[-1, 1:3], x[:, ::-1], x[..., 1], "
      "x[:, None, 1:, ..., ::2], x[0, ..., None, -2], x[:, -1:-4:-2, 5:0:-2] and out-of-range bounds that clamp.")
def _():
    x = feed("x", T234)
    specs = {"i": (1,), "row": (-1, slice(1, 3)), "rev": (slice(None), slice(None, None, -1)),
             "ell": (Ellipsis, 1), "new": (slice(None), None, slice(1, None), Ellipsis, slice(None, None, 2)),
             "new2": (0, Ellipsis, None, -2), "neg": (slice(None), slice(-1, -4, -2), slice(5, 0, -2)),
             "clamp": (slice(-100, 100), slice(2, 100)), "none": (slice(None), slice(2, 1))}
    for name, spec in specs.items():
        tf.identity(x[spec], name=name)
    return {"x": T234}, {f"{name}:0": T234[spec] for name, spec in specs.items()}


@case("strided_slice_masks", "StridedSlice with masks set directly: begin_mask/end_mask ignore the given bounds, "
      "new_axis_mask inserts dims, shrink_axis_mask removes one; int64 indices.")
def _():
    x = feed("x", T234)
    tf.strided_slice(x, [1, 2, 3], [2, 0, 0], [1, -1, 1], begin_mask=0b010, end_mask=0b110, name="m")
    tf.strided_slice(x, [0, 0, 0, 1], [0, 0, 0, 2], [1, 1, 1, 1], new_axis_mask=0b0101, begin_mask=0b0010,
                     end_mask=0b0010, shrink_axis_mask=0b1000, name="n")
    i64_ = tf.constant([0, 1], dtype=tf.int64)
    tf.strided_slice(x, i64_, i64_ + 2, tf.constant([1, 1], dtype=tf.int64), name="w")
    return {"x": T234}, {"m:0": T234[1:2, ::-1, 3:], "n:0": T234[None, :, None, 1], "w:0": T234[0:2, 1:3]}


@case("strided_slice_grad", "StridedSliceGrad writes dy where StridedSlice x[1:, ::-2, None, 0] reads, zeros "
      "elsewhere.")
def _():
    dy = f32(1.5, -2).reshape(1, 2, 1)
    tf.raw_op("StridedSliceGrad", tf.constant([2, 4, 3]), tf.constant([1, 0, 0, 0]), tf.constant([0, 0, 0, 1]),
              tf.constant([1, -2, 1, 1]), feed("dy", dy), begin_mask=2, end_mask=3, new_axis_mask=4,
              shrink_axis_mask=8, name="dx")
    dx = np.zeros((2, 4, 3), np.float32)
    dx[1:, ::-2, 0] = dy[:, :, 0]
    return {"dy": dy}, {"dx:0": dx}


@case("tile_pad", "Tile by [2,1,2] and Pad with [[1,0],[0,2],[1,1]] zeros (int32 paddings and int64 multiples).")
def _():
    x = feed("x", T234)
    tf.tile(x, tf.constant([2, 1, 2], dtype=tf.int64), name="t")
    tf.pad(x, [[1, 0], [0, 2], [1, 1]], name="p")
    return {"x": T234}, {"t:0": np.tile(T234, (2, 1, 2)), "p:0": np.pad(T234, [(1, 0), (0, 2), (1, 1)])}


@case("gather", "GatherV2 along axis 0 with [2,2] indices, axis -1 with int64 indices (repeats), and batch_dims=1.")
def _():
    x = feed("x", T234)
    tf.gather(x, [[1, 0], [0, 1]], name="g0")
    tf.gather(x, tf.constant([3, 0, 3], dtype=tf.int64), axis=-1, name="glast")
    idx = i32([2, 0], [1, 1])
    tf.gather(x, feed("idx", idx), axis=1, batch_dims=1, name="gb")
    return {"x": T234, "idx": idx}, {
        "g0:0": T234[[[1, 0], [0, 1]]], "glast:0": T234[..., [3, 0, 3]],
        "gb:0": np.stack([T234[0, [2, 0]], T234[1, [1, 1]]])}


@case("unsorted_segment_sum", "UnsortedSegmentSum: rows summed into 3 segments; a negative id drops its row, an "
      "empty segment is zero.")
def _():
    d = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = i32(1, -1, 1, 0)
    tf.unsorted_segment_sum(feed("d", d), feed("ids", ids), 4, name="s")
    return {"d": d, "ids": ids}, {"s:0": np.array([d[3], d[0] + d[2], [0, 0], [0, 0]], np.float32)}


@case("identity_n", "IdentityN passes through tensors of different dtypes.")
def _():
    a, b = f32(1.5, -2), i64(2**40, -1)
    tf.identity_n([feed("a", a), feed("b", b)], name="n")
    return {"a": a, "b": b}, {"n:0": a, "n:1": b}
