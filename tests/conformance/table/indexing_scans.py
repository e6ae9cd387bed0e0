"""Conformance cases: GatherNd, ScatterNd, Where, TopKV2, Cumsum/Cumprod, ReverseV2, PadV2 and MirrorPad."""

import numpy as np

import graphdef as tf

from .base import case, f32, f64, i32, i64, u8, feed, INF, NAN

P = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5


@case("gather_nd", "GatherNd: full coordinates (scalars out), partial ones (rows out), a repeated coordinate, "
      "int64 indices, q = 0 (the whole params per row) and an empty indices list.")
def _():
    full, part = i32([1, 2, 3], [0, 0, 0], [1, 2, 3]), i64([1, 0], [0, 2])
    p = feed("p", P)
    tf.gather_nd(p, feed("full", full), name="full_nd")
    tf.gather_nd(p, feed("part", part), name="part_nd")
    tf.gather_nd(p, np.zeros((2, 0), np.int32), name="whole")
    tf.gather_nd(p, np.zeros((0, 2), np.int32), name="none")
    return {"p": P, "full": full, "part": part}, {
        "full_nd:0": f32(*[P[a, b, c] for a, b, c in full.tolist()]),
        "part_nd:0": np.stack([P[a, b] for a, b in part.tolist()]),
        "whole:0": np.stack([P, P]), "none:0": np.zeros((0, 4), np.float32)}


@case("gather_nd_batch_dims", "tf.gather_nd with batch_dims=1 (rows of each batch element's own params) and "
      "batch_dims=2 with int64 indices: TF's composition of Shape, Slice, Prod, Reshape, Range, Tile, ConcatV2 "
      "and GatherNd, the leading dims shared by params and indices.")
def _():
    p = feed("p", P)
    rows, cells = i32([[1], [0]], [[2], [1]]), i64([[1], [3], [0]], [[2], [2], [1]], [[0], [0], [3]])
    rows, cells = rows.reshape(2, 2, 1), np.stack([cells, cells[::-1]])  # [2,2,1], [2,3,3,1]
    tf.identity(tf.gather_nd(p, feed("rows", rows), batch_dims=1), name="rows_nd")
    tf.identity(tf.gather_nd(p, feed("cells", cells), batch_dims=2), name="cells_nd")
    return {"p": P, "rows": rows, "cells": cells}, {
        "rows_nd:0": np.stack([[P[b, r[0]] for r in rows[b]] for b in range(2)]),
        "cells_nd:0": np.array([[[P[b, c, k[0]] for k in cells[b, c]] for c in range(3)]
                                          for b in range(2)])}


@case("scatter_nd", "ScatterNd: rows and single elements into zeros; a repeated coordinate adds up; int32 "
      "and float64 updates, int64 indices.")
def _():
    rows_at, rows = i32([2], [0], [2]), f64([1, 2], [3, 4], [5, 6])
    cells_at, cells = i64([0, 1], [1, 0], [0, 1]), i32(7, -2, 5)
    tf.scatter_nd(feed("rows_at", rows_at), feed("rows", rows), [4, 2], name="rows_nd")
    tf.scatter_nd(feed("cells_at", cells_at), feed("cells", cells), tf.constant([2, 3], tf.int64), name="cells_nd")
    return {"rows_at": rows_at, "rows": rows, "cells_at": cells_at, "cells": cells}, {
        "rows_nd:0": f64([3, 4], [0, 0], [6, 8], [0, 0]), "cells_nd:0": i32([0, 12, 0], [-2, 0, 0])}


@case("where_coordinates", "One-argument Where: int64 [n, rank] coordinates of true elements in row-major "
      "order, for bool, float32 (NaN is true, -0.0 false) and an input with no true element.")
def _():
    b = np.array([[True, False, True], [False, False, True]])
    x = f32(0.0, -0.0, NAN, 2.0, -1.0)
    tf.where(feed("b", b), name="wb")
    tf.where(feed("x", x), name="wx")
    tf.where(feed("z", np.zeros((2, 2), np.int32)), name="wz")
    return {"b": b, "x": x, "z": np.zeros((2, 2), np.int32)}, {
        "wb:0": i64([0, 0], [0, 2], [1, 2]), "wx:0": i64([2], [3], [4]), "wz:0": np.zeros((0, 2), np.int64)}


def _top_k(row, k):
    """The k largest, ties by lower index first: sorted by (-value, index) in Python."""
    order = sorted(range(len(row)), key=lambda i: (-float(row[i]), i))[:k]
    return [row[i] for i in order], order


@case("top_k", "TopKV2 along the last axis: largest first, ties by lower index first (3.0 twice, 0.0 and -0.0), "
      "k = 0, k = the whole row, int32 values and int64 indices.")
def _():
    x = f32([1.0, 3.0, -2.0, 3.0, 0.0], [-0.0, 5.0, 0.0, -INF, 2.0])
    n = i32([4, -1, 4, 9], [0, 0, 0, 0])
    v3, i3 = tf.nn.top_k(feed("x", x), 3, name="top3")
    tf.identity(v3, name="v3"), tf.identity(i3, name="i3")
    tf.identity(tf.nn.top_k(feed("x0", x), 0)[0], name="v0")
    vn, inn = tf.math.top_k(feed("n", n), 4, index_type=tf.int64)
    tf.identity(vn, name="vn"), tf.identity(inn, name="in")
    rows = [_top_k(r, 3) for r in x.tolist()]
    int_rows = [_top_k(r, 4) for r in n.tolist()]
    return {"x": x, "x0": x, "n": n}, {
        "v3:0": f32(*[v for v, _ in rows]), "i3:0": i32(*[i for _, i in rows]), "v0:0": np.zeros((2, 0), np.float32),
        "vn:0": i32(*[v for v, _ in int_rows]), "in:0": i64(*[i for _, i in int_rows])}


@case("cumsum_cumprod", "Cumsum and Cumprod along either axis, exclusive (the identity first) and reverse "
      "(from the end), in float32, int32 (wrapping) and uint8; an empty axis.")
def _():
    x = f32([1.5, -2.0, 4.0], [0.5, 3.0, -1.0])
    n = i32(2147483647, 1, 5)
    u = u8(200, 100, 3)
    t = feed("x", x)
    tf.cumsum(t, 1, name="cs")
    tf.cumsum(t, 0, exclusive=True, name="cs_ex")
    tf.cumsum(t, -1, exclusive=True, reverse=True, name="cs_ex_rev")
    tf.math.cumprod(t, 1, reverse=True, name="cp_rev")
    tf.math.cumprod(t, tf.constant(1, tf.int64), exclusive=True, name="cp_ex")
    tf.cumsum(feed("n", n), name="cs_int")
    tf.math.cumprod(feed("u", u), name="cp_u8")
    tf.cumsum(feed("e", np.zeros((2, 0), np.float32)), 1, exclusive=True, name="cs_empty")
    a, b, c = x[:, 0], x[:, 1], x[:, 2]
    return {"x": x, "n": n, "u": u, "e": np.zeros((2, 0), np.float32)}, {
        "cs:0": np.stack([a, a + b, a + b + c], 1),
        "cs_ex:0": f32([0, 0, 0], x[0]),
        "cs_ex_rev:0": np.stack([b + c, c, 0 * c], 1),
        "cp_rev:0": np.stack([a * b * c, b * c, c], 1),
        "cp_ex:0": np.stack([np.ones(2, np.float32), a, a * b], 1),
        "cs_int:0": i32(2147483647, -2147483648, -2147483643),
        "cp_u8:0": u8(200, (200 * 100) % 256, (200 * 100 * 3) % 256),
        "cs_empty:0": np.zeros((2, 0), np.float32)}


@case("reverse_v2", "ReverseV2 of one axis, of two (one negative, int64 axis) and of none; bool and int32.")
def _():
    t = feed("p", P)
    tf.reverse(t, [1], name="r1")
    tf.reverse(t, tf.constant([0, -1], tf.int64), name="r02")
    tf.reverse(t, np.zeros(0, np.int32), name="rnone")
    b = np.array([[True, False, False]])
    tf.reverse(feed("b", b), [1], name="rb")
    return {"p": P, "b": b}, {"r1:0": P[:, ::-1], "r02:0": P[::-1, :, ::-1], "rnone:0": P,
                              "rb:0": np.array([[False, False, True]])}


def _mirror(x, pads, skip):
    """Pads one dim at a time by index arithmetic: REFLECT (skip 1) leaves the edge out, SYMMETRIC repeats it."""
    for axis, (lo, hi) in enumerate(pads):
        d = x.shape[axis]
        source = [(-j - 1 + skip) if j < 0 else (2 * d - 1 - j - skip) if j >= d else j for j in range(-lo, d + hi)]
        x = np.take(x, source, axis=axis)
    return x


@case("pad_v2_mirror_pad", "PadV2 with a constant (float32 -1.5, int32 9, and 0.0 as a plain Pad); MirrorPad "
      "REFLECT and SYMMETRIC up to their largest paddings, int64 paddings.")
def _():
    x = f32([1, 2, 3], [4, 5, 6])
    n = i32([1, 2], [3, 4])
    t = feed("x", x)
    tf.pad(t, [[1, 0], [2, 1]], constant_values=-1.5, name="v2")
    tf.pad(feed("n", n), [[0, 1], [1, 1]], constant_values=9, name="v2_int")
    tf.pad(t, [[1, 1], [2, 2]], "REFLECT", name="reflect")
    tf.pad(t, tf.constant([[2, 1], [3, 0]], tf.int64), "SYMMETRIC", name="symmetric")
    v2 = np.full((3, 6), -1.5, np.float32)
    v2[1:, 2:5] = x
    v2_int = np.full((3, 4), 9, np.int32)
    v2_int[:2, 1:3] = n
    return {"x": x, "n": n}, {"v2:0": v2, "v2_int:0": v2_int, "reflect:0": _mirror(x, [(1, 1), (2, 2)], 1),
                              "symmetric:0": _mirror(x, [(2, 1), (3, 0)], 0)}


@case("round_reciprocal_int32", "Round of int32 passes it through; Reciprocal of int32 truncates toward zero "
      "(0 except for 1 and -1).",
      skip={"tensorflow": "TF's CPU has no integer Reciprocal kernel, and its int32 Round kernel returns zeros "
                          "(TF 2.21; tf.round never calls it for integers)"})
def _():
    r, n = i32(-3, 0, 7), i32(1, -1, 2, -5, 7)
    tf.round(feed("r", r), name="round")
    tf.reciprocal(feed("n", n), name="reciprocal")
    return {"r": r, "n": n}, {"round:0": r, "reciprocal:0": i32(1, -1, 0, 0, 0)}
