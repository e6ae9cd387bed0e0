"""Einsum and BatchMatMulV2 hand numpy's matmul views of their operands where BLAS can read them in
place, and one stacked matrix for a batch times a single matrix. Each layout those paths take
(strides BLAS reads as they are, transposed, or not at all; groups of labels that merge into a
view or need a copy; size-1 and empty dims) against float64 numpy references, under the op's
declared numerics, with NaN and inf in the operands; and against TensorFlow."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import REGISTRY
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - a fixture

DTYPES = [np.float32, np.float64, np.float16, np.int32]


def _values(shape, seed, dtype):
    x = np.random.default_rng(seed).normal(size=shape) * (4 if np.dtype(dtype).kind == "i" else 1)
    return x.astype(dtype)


def _with_specials(x):
    """x with a NaN, an inf and a -inf (floats), which poison the sums they enter."""
    if x.dtype.kind == "f" and x.size >= 3:
        x.reshape(-1)[[0, x.size // 2, -1]] = [np.nan, np.inf, -np.inf]
    return x


def _layouts(x):
    """x as it is, in Fortran order, and as a strided view: one value, three sets of strides."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return [x, np.asfortranarray(x), wide[..., ::2]]


def _assert_conforms(op_type, got, expected):
    why = REGISTRY[op_type].numerics.tolerance(expected.dtype).mismatch(got, expected)
    assert why is None, why


EINSUM_LAYOUTS = [
    ("BTNH,BSNH->BNTS", [(2, 5, 3, 4), (2, 6, 3, 4)]),    # attention's scores: T x H matrices read in place
    ("BNTS,BSNH->BTNH", [(2, 3, 5, 6), (2, 6, 3, 4)]),    # attention's context, the output transposed
    ("abn,acn->nbc", [(4, 3, 5), (4, 2, 5)]),             # the batch label innermost: no unit stride, copied
    ("acbd,cdef->abef", [(2, 3, 4, 5), (3, 5, 2, 3)]),    # rows a, b apart in memory: merging needs a copy
    ("abcd,cdef->abef", [(2, 3, 4, 5), (4, 5, 2, 3)]),    # groups that merge as views
    ("ij,jk->ik", [(1, 4), (4, 1)]),                      # size-1 dims, whose strides say nothing
    ("ij,kj->ki", [(3, 4), (2, 4)]),
    ("bij,bjk->bik", [(0, 2, 3), (0, 3, 4)]),             # an empty batch
    ("ij,jk->ik", [(3, 0), (0, 2)]),                      # an empty contraction: zeros
    ("abc,cd->ad", [(2, 3, 4), (4, 5)]),                  # a label summed away first
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("equation, shapes", EINSUM_LAYOUTS)
def test_einsum_layouts_match_float64_numpy(equation, shapes, dtype):
    a, b = (_with_specials(_values(s, 40 + k, dtype)) for k, s in enumerate(shapes))
    with np.errstate(invalid="ignore"):
        expected = np.einsum(equation, a.astype(np.float64), b.astype(np.float64)).astype(dtype)
        for x in _layouts(a):
            for y in _layouts(b):
                got = REGISTRY["Einsum"].kernel(x, y, equation=equation)
                _assert_conforms("Einsum", np.asarray(got), expected)


BMM_LAYOUTS = [  # x shape, y shape, adj_x, adj_y
    ((2, 3, 4), (4, 5), False, False),        # a batch times one matrix: one stacked product
    ((2, 2, 3, 4), (4, 5), False, False),
    ((2, 4, 3), (4, 5), True, False),         # adj_x: a transposed view, multiplied matrix by matrix
    ((2, 3, 4), (5, 4), False, True),
    ((1, 1, 4), (4, 1), False, False),
    ((0, 3, 4), (4, 5), False, False),
    ((2, 3, 0), (0, 5), False, False),
    ((2, 3, 4), (1, 4, 5), False, False),     # a 3-D y: the batched product, as before
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs, ys, adj_x, adj_y", BMM_LAYOUTS)
def test_batch_matmul_layouts_match_float64_numpy(xs, ys, adj_x, adj_y, dtype):
    a, b = _with_specials(_values(xs, 50, dtype)), _with_specials(_values(ys, 51, dtype))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        expected = np.matmul(np.swapaxes(a64, -1, -2) if adj_x else a64,
                             np.swapaxes(b64, -1, -2) if adj_y else b64).astype(dtype)
        for x in _layouts(a):
            for y in _layouts(b):
                got = REGISTRY["BatchMatMulV2"].kernel(x, y, adj_x=adj_x, adj_y=adj_y)
                _assert_conforms("BatchMatMulV2", got, expected)


@pytest.mark.tf_oracle
def test_attention_einsums_and_projections_match_tensorflow(tf_oracle):
    """Keras MultiHeadAttention's products at a small size: projections of [B, T, D] by [D, N*H]
    matrices, the scores and the context."""
    x, w = _values((2, 7, 12), 60, np.float32), _values((12, 12), 61, np.float32)

    def make():
        inp = tf.placeholder(tf.float32, [None, 7, 12], name="x")
        kernel = tf.placeholder(tf.float32, [12, 12], name="w")
        q = tf.reshape(tf.raw_op("BatchMatMulV2", inp, kernel), [-1, 7, 3, 4])
        k = tf.reshape(tf.raw_op("BatchMatMulV2", inp, kernel, adj_y=True), [-1, 7, 3, 4])
        scores = tf.nn.softmax(tf.einsum("BTNH,BSNH->BNTS", q, k) * 0.5)
        return [scores, tf.einsum("BNTS,BSNH->BTNH", scores, q)]
    run_both(tf_oracle, make, {"x": x, "w": w})


def test_attention_operands_reach_blas_as_views_not_copies():
    """The point of the layouts above: attention's [B, T, N, H] operands and a [B, T, D] batch
    times one matrix go to np.matmul without being copied."""
    from graphdef.ops.einsum import _matrices
    from graphdef.ops.linalg import _as_rows
    q = _values((2, 5, 3, 4), 70, np.float32)
    sizes = dict(zip("BTNH", q.shape))
    scores_side = _matrices(q, "BTNH", ["B", "N"], ["T"], ["H"], sizes)     # 'BTNH,BSNH->BNTS', as a
    keys_side = _matrices(q, "BTNH", ["B", "N"], ["H"], ["T"], sizes)       # ... and as b
    assert scores_side.shape == (2, 3, 5, 4) and keys_side.shape == (2, 3, 4, 5)
    assert np.shares_memory(scores_side, q) and np.shares_memory(keys_side, q)
    x = _values((2, 5, 12), 71, np.float32)
    assert _as_rows(x).shape == (10, 12) and np.shares_memory(_as_rows(x), x)
    assert _as_rows(np.swapaxes(x, -1, -2)) is None  # an adjoint's view cannot be stacked without a copy
