"""Conformance cases: batched matrix products (BatchMatMul V1-V3) and Einsum.

Inputs are small integers or halves and every sum is short, so float64 numpy (matmul, einsum)
rounded once is the exact answer.
"""

import numpy as np

import graphdef as tf

from .base import case, feed


def _ints(shape, seed, dtype=np.float32):
    """Small integers and halves, some negative: products and their sums are exact in float32."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-6, 7, size=shape) * 0.5).astype(dtype)


def _bmm(op, x, y, adj_x=False, adj_y=False, **attrs):
    tf.raw_op(op, feed("x", x), feed("y", y), adj_x=adj_x, adj_y=adj_y, name="z", **attrs)
    xs = np.swapaxes(x, -1, -2) if adj_x else x
    ys = np.swapaxes(y, -1, -2) if adj_y else y
    return {"x": x, "y": y}, {"z:0": np.matmul(xs.astype(np.float64), ys.astype(np.float64)).astype(x.dtype)}


@case("batch_matmul_v1", "BatchMatMul [2,3,4] x [2,4,5]: one product per batch.")
def _():
    return _bmm("BatchMatMul", _ints((2, 3, 4), 1), _ints((2, 4, 5), 2))


@case("batch_matmul_v1_adjoints", "BatchMatMul with adj_x and adj_y: [2,4,3]^T x [2,5,4]^T -> [2,3,5].")
def _():
    return _bmm("BatchMatMul", _ints((2, 4, 3), 3), _ints((2, 5, 4), 4), adj_x=True, adj_y=True)


@case("batch_matmul_v2_broadcast", "BatchMatMulV2 broadcasts batch dims: [2,1,3,4] x [3,4,2] -> [2,3,3,2].")
def _():
    return _bmm("BatchMatMulV2", _ints((2, 1, 3, 4), 5), _ints((3, 4, 2), 6))


@case("batch_matmul_v2_adj_y_rank2", "BatchMatMulV2 of plain matrices with adj_y: [3,4] x [5,4]^T.")
def _():
    return _bmm("BatchMatMulV2", _ints((3, 4), 7), _ints((5, 4), 8), adj_y=True)


@case("batch_matmul_v2_float64_adj_x", "BatchMatMulV2 float64, adj_x, odd sizes: [1,7,3]^T x [4,7,9].")
def _():
    return _bmm("BatchMatMulV2", _ints((1, 7, 3), 9, np.float64), _ints((4, 7, 9), 10, np.float64), adj_x=True)


@case("batch_matmul_v2_int32", "BatchMatMulV2 in int32 is exact.")
def _():
    return _bmm("BatchMatMulV2", _ints((2, 2, 3), 11).astype(np.int32) * 2,
                _ints((2, 3, 2), 12).astype(np.int32) * 2)


@case("batch_matmul_v2_empty_batch", "BatchMatMulV2 with an empty batch [0,2,3] x [1,3,4] -> [0,2,4], and an "
      "empty inner dim [2,2,0] x [2,0,3] -> zeros [2,2,3].")
def _():
    x, y = np.zeros((0, 2, 3), np.float32), np.zeros((1, 3, 4), np.float32)
    tf.raw_op("BatchMatMulV2", feed("x", x), feed("y", y), name="z")
    p, q = np.zeros((2, 2, 0), np.float32), np.zeros((2, 0, 3), np.float32)
    tf.raw_op("BatchMatMulV2", feed("p", p), feed("q", q), name="w")
    return {"x": x, "y": y, "p": p, "q": q}, {"z:0": np.zeros((0, 2, 4), np.float32),
                                              "w:0": np.zeros((2, 2, 3), np.float32)}


@case("batch_matmul_v3", "BatchMatMulV3 with Ta = Tb = Tout = float32 and a broadcast batch.")
def _():
    return _bmm("BatchMatMulV3", _ints((3, 2, 4), 13), _ints((1, 4, 3), 14),
                Ta=tf.float32, Tb=tf.float32, Tout=tf.float32)


EINSUMS = [
    ("einsum_attention_scores", "BTNH,BSNH->BNTS", [(2, 3, 2, 4), (2, 5, 2, 4)]),
    ("einsum_attention_values", "BNTS,BSNH->BTNH", [(2, 2, 3, 5), (2, 5, 2, 4)]),
    ("einsum_dense_in", "btd,dnh->btnh", [(2, 3, 4), (4, 2, 3)]),
    ("einsum_dense_out", "btnh,nhd->btd", [(2, 3, 2, 3), (2, 3, 4)]),
    ("einsum_abc_cd", "abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("einsum_summed_alone", "abc,cd->ad", [(2, 3, 4), (4, 5)]),
    ("einsum_outer", "i,j->ij", [(3,), (4,)]),
    ("einsum_implicit", "ij,jk", [(2, 3), (3, 4)]),
    ("einsum_transpose", "abc->cab", [(2, 3, 4)]),
    ("einsum_sum", "abc->b", [(2, 3, 4)]),
]

for _name, _equation, _shapes in EINSUMS:
    def _einsum(equation=_equation, shapes=_shapes):
        values = [_ints(s, 20 + k) for k, s in enumerate(shapes)]
        tf.einsum(equation, *[feed(f"x{k}", v) for k, v in enumerate(values)], name="z")
        expected = np.einsum(equation, *[v.astype(np.float64) for v in values]).astype(np.float32)
        return {f"x{k}": v for k, v in enumerate(values)}, {"z:0": expected}
    case(_name, f"Einsum {_equation!r} on shapes {_shapes}.")(_einsum)


@case("einsum_int64", "Einsum 'ij,jk->ik' in int64 is exact.")
def _():
    a, b = _ints((2, 3), 40).astype(np.int64) * 2, _ints((3, 2), 41).astype(np.int64) * 2
    tf.einsum("ij,jk->ik", feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": a @ b}
