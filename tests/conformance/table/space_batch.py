"""Conformance cases: SpaceToBatchND, BatchToSpaceND, SpaceToDepth, DepthToSpace (exact data movement).

References loop over output positions in numpy from TF's definitions of where each element goes.
"""

import itertools

import numpy as np

import graphdef as tf

from .base import case, feed, i32

X = np.arange(2 * 5 * 4 * 3, dtype=np.float32).reshape(2, 5, 4, 3) - 40


def _space_to_batch_ref(x, block, pads):
    m = len(block)
    padded = [x.shape[1 + i] + a + b for i, (a, b) in enumerate(pads)]
    out = np.zeros([x.shape[0] * int(np.prod(block))] + [p // k for p, k in zip(padded, block)]
                   + list(x.shape[1 + m:]), x.dtype)
    for offsets in itertools.product(*[range(k) for k in block]):
        q0 = int(np.ravel_multi_index(offsets, block)) * x.shape[0] if m else 0
        for n in range(x.shape[0]):
            for s in itertools.product(*[range(d) for d in out.shape[1:1 + m]]):
                at = [s[i] * block[i] + offsets[i] - pads[i][0] for i in range(m)]
                if all(0 <= a < x.shape[1 + i] for i, a in enumerate(at)):
                    out[(q0 + n,) + s] = x[(n,) + tuple(at)]
    return out


@case("space_to_batch_nd_2d", "SpaceToBatchND [2,5,4,3], block [2,2], paddings [[1,0],[0,2]] -> [8,3,3,3]; "
      "then BatchToSpaceND with the same crops returns the input.")
def _():
    tf.space_to_batch_nd(feed("x", X), [2, 2], [[1, 0], [0, 2]], name="s2b")
    y = _space_to_batch_ref(X, [2, 2], [[1, 0], [0, 2]])
    tf.batch_to_space_nd(feed("y", y), [2, 2], [[1, 0], [0, 2]], name="b2s")
    return {"x": X, "y": y}, {"s2b:0": y, "b2s:0": X}


@case("space_to_batch_nd_1d_int32", "SpaceToBatchND over one spatial dim of an int32 [1,5,2] with block [3], "
      "paddings [[2,2]]; int64 block and paddings.")
def _():
    x = np.arange(10, dtype=np.int32).reshape(1, 5, 2)
    tf.space_to_batch_nd(feed("x", x), np.array([3], np.int64), np.array([[2, 2]], np.int64), name="s2b")
    return {"x": x}, {"s2b:0": _space_to_batch_ref(x, [3], [[2, 2]])}


@case("batch_to_space_nd_crops", "BatchToSpaceND [4,2,3,1], block [2,2], crops [[0,1],[1,1]] -> [1,3,4,1].")
def _():
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3, 1)
    full = np.zeros((1, 4, 6, 1), np.float32)
    for q in range(4):
        a, b = divmod(q, 2)
        for i in range(2):
            for j in range(3):
                full[0, i * 2 + a, j * 2 + b] = x[q, i, j]
    tf.batch_to_space_nd(feed("x", x), [2, 2], [[0, 1], [1, 1]], name="b2s")
    return {"x": x}, {"b2s:0": full[:, 0:3, 1:5]}


@case("space_to_depth_depth_to_space", "SpaceToDepth block 2: [1,4,6,2] -> [1,2,3,8], channel (a*2+b)*2+k "
      "from pixel (2i+a, 2j+b); DepthToSpace inverts it.")
def _():
    x = np.arange(48, dtype=np.float32).reshape(1, 4, 6, 2)
    y = np.zeros((1, 2, 3, 8), np.float32)
    for i, j, a, b, k in itertools.product(range(2), range(3), range(2), range(2), range(2)):
        y[0, i, j, (a * 2 + b) * 2 + k] = x[0, 2 * i + a, 2 * j + b, k]
    tf.space_to_depth(feed("x", x), 2, name="s2d")
    tf.depth_to_space(feed("y", y), 2, name="d2s")
    return {"x": x, "y": y}, {"s2d:0": y, "d2s:0": x}


@case("space_to_batch_nd_empty", "SpaceToBatchND of an empty batch [0,2,2,1] with block [2,2] -> [0,1,1,1].")
def _():
    x = np.zeros((0, 2, 2, 1), np.float32)
    tf.space_to_batch_nd(feed("x", x), i32(2, 2), i32([0, 0], [0, 0]), name="s2b")
    return {"x": x}, {"s2b:0": np.zeros((0, 1, 1, 1), np.float32)}
