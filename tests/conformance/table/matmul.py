"""Conformance cases: MatMul: all four transpose combinations, each with the same product."""

import numpy as np

import graphdef as tf

from .base import case, f32, i32, feed, CASES, Case


# -- MatMul: all four transpose combinations, each with the same product -----------------

A = f32([1.0, 2.0, 3.0], [-0.5, 0.25, 4.0])
B = f32([1.0, -1.0], [2.0, 0.5], [0.1, 3.0])
AB = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)

for _ta in (False, True):
    for _tb in (False, True):
        def _matmul(ta=_ta, tb=_tb):
            a = A.T.copy() if ta else A
            b = B.T.copy() if tb else B
            tf.matmul(feed("a", a), feed("b", b), transpose_a=ta, transpose_b=tb, name="z")
            return {"a": a, "b": b}, {"z:0": AB}
        _flags = "".join(s for s, on in (("_transpose_a", _ta), ("_transpose_b", _tb)) if on)
        CASES.append(Case(f"matmul_float32{_flags}",
                          f"MatMul [2,3] x [3,2] with transpose_a={_ta}, transpose_b={_tb} "
                          "(inputs stored transposed to match).", _matmul))


@case("matmul_int32", "MatMul in int32 is exact.")
def _():
    a, b = i32([1, 2], [3, 4], [-5, 6]), i32([7, -8, 9], [10, 11, -12])
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": i32([27, 14, -15], [61, 20, -21], [25, 106, -117])}


@case("matmul_float64", "MatMul in float64.")
def _():
    a, b = A.astype(np.float64), B.astype(np.float64)
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": a @ b}


@case("matmul_empty_inner", "MatMul [2,0] x [0,3] sums nothing: zeros of shape [2,3].")
def _():
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    tf.matmul(feed("a", a), feed("b", b), name="z")
    return {"a": a, "b": b}, {"z:0": np.zeros((2, 3), np.float32)}


# -- moved from graphrun-cc's kernel tests, so every runtime replays them -------------------------

@case("matmul_int32_wraparound", "MatMul in int32 wraps modulo 2**32 (the last column multiplies by 2**30).")
def _():
    a, b = i32([1, 2], [3, 4], [-5, 6]), i32([7, -8, 9], [10, 11, 2**30])
    tf.matmul(feed("a", a), feed("b", b), name="z")
    wide = a.astype(np.int64) @ b.astype(np.int64)          # exact, then wrapped to int32
    return {"a": a, "b": b}, {"z:0": wide.astype(np.int32)}
