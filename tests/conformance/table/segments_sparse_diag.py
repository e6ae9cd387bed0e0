"""Conformance cases for issue 34's numeric ops: segment reductions, Unique/Bincount/partition/stitch,
DivNoNan, InTopKV2, the sparse ops, ReverseSequence, the matrix diagonals and CombinedNonMaxSuppression.

Expected values are literals worked by hand (beside each case), checked against TensorFlow in
tests/python/ops34/. graphrun-cc has kernels for the segment reductions, Unique, Bincount, DivNoNan,
InTopKV2, ReverseSequence and MatrixBandPart; it skips the other cases with that reason, and
tests/python/ops34/ asserts the one line it prints instead.
"""

import numpy as np

import graphdef as tf

from .base import case, f32, feed, i32, i64

NO_CC = {"graphrun-cc": "no C++ kernel yet (issue 34, Python side first); tests/python/ops34 asserts its "
                        "'no kernel for <Op> (<node>)' line"}
D = f32([1, 2], [3, 4], [5, 6], [7, 8], [-1, 0])


@case("segment_reductions", "SegmentSum/Mean/Max/Min/Prod over sorted ids [0, 0, 2, 2, 3] (segment 1 empty: 0, "
      "or 1 for Prod) and UnsortedSegmentMax/Min/Prod over [2, -1, 0, 2, 0] with 4 segments (id -1 dropped; "
      "empty segment 3: lowest, highest, 1).")
def _():
    x = feed("x", D)
    ids, un = i32(0, 0, 2, 2, 3), i32(2, -1, 0, 2, 0)
    for op in ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"):
        tf.raw_op(op, x, ids, name=op)
    for op in ("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"):
        tf.raw_op(op, x, un, np.int32(4), name=op)
    lo, hi = np.finfo(np.float32).min, np.finfo(np.float32).max
    return {"x": D}, {
        "SegmentSum:0": f32([4, 6], [0, 0], [12, 14], [-1, 0]), "SegmentMean:0": f32([2, 3], [0, 0], [6, 7], [-1, 0]),
        "SegmentMax:0": f32([3, 4], [0, 0], [7, 8], [-1, 0]), "SegmentMin:0": f32([1, 2], [0, 0], [5, 6], [-1, 0]),
        "SegmentProd:0": f32([3, 8], [1, 1], [35, 48], [-1, 0]),
        "UnsortedSegmentMax:0": f32([5, 6], [lo, lo], [7, 8], [lo, lo]),
        "UnsortedSegmentMin:0": f32([-1, 0], [hi, hi], [1, 2], [hi, hi]),
        "UnsortedSegmentProd:0": f32([-5, 0], [1, 1], [7, 16], [1, 1])}


@case("sparse_segment_reductions", "SparseSegmentSum/Mean/SqrtN of rows [4, 0, 4, 1] by ids [0, 0, 2, 2] (rows "
      "repeat; segment 1 empty), and the WithNumSegments forms with 4 segments.", skip=NO_CC)
def _():
    x = feed("x", D)
    rows, ids = i32(4, 0, 4, 1), i32(0, 0, 2, 2)
    for kind in ("Sum", "Mean", "SqrtN"):
        tf.raw_op(f"SparseSegment{kind}", x, rows, ids, name=kind)
        tf.raw_op(f"SparseSegment{kind}WithNumSegments", x, rows, ids, np.int32(4), name=kind + "N")
    r2 = np.float32(np.sqrt(np.float32(2)))
    sums = f32([0, 2], [0, 0], [2, 4])
    means = f32([0, 1], [0, 0], [1, 2])
    roots = (sums / np.array([[r2], [1], [r2]], np.float32)).astype(np.float32)
    pad = np.zeros((1, 2), np.float32)
    return {"x": D}, {"Sum:0": sums, "Mean:0": means, "SqrtN:0": roots, "SumN:0": np.concatenate([sums, pad]),
                      "MeanN:0": np.concatenate([means, pad]), "SqrtNN:0": np.concatenate([roots, pad])}


@case("unique_and_counts", "Unique and UniqueWithCounts keep first-appearance order (every NaN apart, -0.0 equal "
      "to 0.0, the first kept); UniqueV2 along axis 1 of a matrix; Bincount and DenseBincount (binary_output, "
      "values past size ignored).")
def _():
    v = f32(3, -0.0, 0.0, np.nan, 3, np.nan)
    m = i32([1, 1, 2], [4, 4, 5])
    a = i32(1, 1, 5, 2, 0)
    x, mm, aa = feed("v", v), feed("m", m), feed("a", a)
    tf.raw_op("Unique", x, name="u")
    tf.raw_op("UniqueWithCounts", x, out_idx=tf.int64, name="uc")
    tf.raw_op("UniqueV2", mm, i64(1), name="u2")
    tf.raw_op("Bincount", aa, np.int32(4), np.zeros(0, np.float32), name="bc")
    tf.raw_op("DenseBincount", tf.reshape(aa, [1, 5]), np.int32(3), np.zeros(0, np.int32), binary_output=True,
              name="dbc")
    return {"v": v, "m": m, "a": a}, {
        "u:0": f32(3, -0.0, np.nan, np.nan), "u:1": i32(0, 1, 1, 2, 0, 3),
        "uc:0": f32(3, -0.0, np.nan, np.nan), "uc:1": i64(0, 1, 1, 2, 0, 3), "uc:2": i64(2, 2, 1, 1),
        "u2:0": i32([1, 2], [4, 5]), "u2:1": i32(0, 0, 1),
        "bc:0": f32(1, 2, 1, 0), "dbc:0": i32([1, 1, 1])}


@case("partition_and_stitch", "DynamicPartition of 5 rows into 3 (partition 1 gets none) and DynamicStitch / "
      "ParallelDynamicStitch putting them back; DynamicStitch with a repeated index (the later input wins) and "
      "a gap (0).", skip=NO_CC)
def _():
    x = feed("x", D)
    parts = tf.raw_op("DynamicPartition", x, i32(2, 0, 2, 0, 0), num_partitions=3, name="dp")
    where = tf.raw_op("DynamicPartition", tf.range(5), i32(2, 0, 2, 0, 0), num_partitions=3, name="wp")
    tf.raw_op("DynamicStitch", list(where), list(parts), name="ds")
    tf.raw_op("ParallelDynamicStitch", list(where), list(parts), name="pds")
    tf.raw_op("DynamicStitch", [i32(0, 3), i32(3)], [D[:2], D[4:]], name="rep")
    return {"x": D}, {"dp:0": D[[1, 3, 4]], "dp:1": np.zeros((0, 2), np.float32), "dp:2": D[[0, 2]],
                      "ds:0": D, "pds:0": D, "rep:0": f32([1, 2], [0, 0], [0, 0], [-1, 0])}


@case("div_no_nan_and_in_top_k", "DivNoNan gives 0 wherever y is 0 (even for 0, inf and NaN over it); InTopKV2 "
      "with k 2: a tie counts for the target, a target out of range or a row with a NaN is false.")
def _():
    x, y = f32(1, 0, np.inf, np.nan, 6), f32(0, 0, 0, 0, -4)
    p = f32([1, 3, 3, 0], [4, 3, 2, 1], [1, np.nan, 2, 3], [1, 2, 3, 4])
    t = i32(1, 2, 3, 7)
    tf.raw_op("DivNoNan", feed("x", x), feed("y", y), name="dnn")
    tf.raw_op("InTopKV2", feed("p", p), feed("t", t), np.int32(2), name="itk")
    return {"x": x, "y": y, "p": p, "t": t}, {"dnn:0": f32(0, 0, 0, 0, -1.5),
                                               "itk:0": np.array([True, False, False, False])}


SP_INDICES = i64([2, 0], [0, 1], [0, 0], [1, 1])


@case("sparse_ops", "SparseToDense (sorted indices, default 9; a scalar value broadcast to 1-D indices), "
      "SparseTensorDenseMatMul (and with adjoint_a), SparseReorder to row-major order, SparseReduceSum over "
      "axis 1 with keep_dims and over both axes.", skip=NO_CC)
def _():
    v = f32(1, 2, 3, 4)
    vals = feed("v", v)
    tf.raw_op("SparseToDense", SP_INDICES[[2, 1, 3, 0]], i64(3, 2), tf.gather(vals, [2, 1, 3, 0]), np.float32(9),
              name="s2d")
    tf.raw_op("SparseToDense", i32(1, 3), i32(5), np.int32(7), np.int32(-1), name="s2d1")
    b = f32([1, 10], [100, 1000])
    tf.raw_op("SparseTensorDenseMatMul", SP_INDICES, vals, i64(3, 2), b, name="mm")
    tf.raw_op("SparseTensorDenseMatMul", SP_INDICES, vals, i64(3, 2), f32([1, 10], [100, 1000], [0.5, 0.25]),
              adjoint_a=True, name="mmt")
    tf.raw_op("SparseReorder", SP_INDICES, vals, i64(3, 2), name="ro")
    tf.raw_op("SparseReduceSum", SP_INDICES, vals, i64(3, 2), i32(1), keep_dims=True, name="rs")
    tf.raw_op("SparseReduceSum", SP_INDICES, vals, i64(3, 2), i32(0, -1), name="rsa")
    # A = [[3, 2], [0, 4], [1, 0]]
    return {"v": v}, {"s2d:0": f32([3, 2], [9, 4], [1, 9]), "s2d1:0": i32(-1, 7, -1, 7, -1),
                      "mm:0": f32([203, 2030], [400, 4000], [1, 10]), "mmt:0": f32([3.5, 30.25], [402, 4020]),
                      "ro:0": i64([0, 0], [0, 1], [1, 1], [2, 0]), "ro:1": f32(3, 2, 4, 1),
                      "rs:0": f32([5], [4], [1]), "rsa:0": np.float32(10)}


@case("reverse_sequence", "ReverseSequence along axis 1 with batch axis 0, lengths [3, 0, 1] (int64), and along "
      "axis 0 with batch axis 1, lengths [2, 1] (int32).")
def _():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = feed("x", x)
    tf.reverse_sequence(t, i64(3, 0, 1), seq_axis=1, batch_axis=0, name="r1")
    tf.reverse_sequence(t[:2, :2], i32(2, 1), seq_axis=0, batch_axis=1, name="r0")
    return {"x": x}, {"r1:0": i32([2, 1, 0, 3], [4, 5, 6, 7], [8, 9, 10, 11]), "r0:0": i32([4, 1], [0, 5])}


M = np.arange(12, dtype=np.int32).reshape(3, 4)


@case("matrix_diagonals", "MatrixDiagPartV3 of the band [-1, 2] of a 3 x 4 matrix, padding 9, RIGHT_LEFT and "
      "LEFT_RIGHT; MatrixDiagV3 back to 3 x 4 and to the least square size; MatrixSetDiagV3; the V2 forms "
      "(LEFT_LEFT) and V1 (main diagonal).", skip=NO_CC)
def _():
    m = feed("m", M)
    band = i32(-1, 2)
    part = tf.raw_op("MatrixDiagPartV3", m, band, np.int32(9), name="rl")
    tf.raw_op("MatrixDiagPartV3", m, band, np.int32(9), align="LEFT_RIGHT", name="lr")
    tf.raw_op("MatrixDiagV3", part, band, np.int32(3), np.int32(4), np.int32(-1), name="back")
    tf.raw_op("MatrixDiagV3", i32(1, 2), np.int32(1), np.int32(-1), np.int32(-1), np.int32(0), name="least")
    tf.raw_op("MatrixSetDiagV3", m, i32([1, 2, 3], [4, 5, 6]), i32(0, 1), name="set")
    v2 = tf.raw_op("MatrixDiagPartV2", m, band, np.int32(9), name="v2")
    tf.raw_op("MatrixDiagV2", v2, band, np.int32(3), np.int32(4), np.int32(-1), name="v2back")
    tf.raw_op("MatrixSetDiagV2", m, i32([1, 2, 3], [4, 5, 6]), i32(0, 1), name="v2set")
    main = tf.raw_op("MatrixDiagPart", m, name="v1")
    tf.raw_op("MatrixDiag", main, name="v1d")
    tf.raw_op("MatrixSetDiag", m, main * 2, name="v1s")
    return {"m": M}, {
        "rl:0": i32([9, 2, 7], [1, 6, 11], [0, 5, 10], [4, 9, 9]),
        "lr:0": i32([2, 7, 9], [1, 6, 11], [0, 5, 10], [9, 4, 9]),
        "back:0": i32([0, 1, 2, -1], [4, 5, 6, 7], [-1, 9, 10, 11]),
        "least:0": i32([0, 1, 0], [0, 0, 2], [0, 0, 0]),
        "set:0": i32([4, 1, 2, 3], [4, 5, 2, 7], [8, 9, 6, 3]),
        "v2:0": i32([2, 7, 9], [1, 6, 11], [0, 5, 10], [4, 9, 9]),
        "v2back:0": i32([0, 1, 2, -1], [4, 5, 6, 7], [-1, 9, 10, 11]),
        "v2set:0": i32([4, 1, 2, 3], [4, 5, 2, 7], [8, 9, 6, 3]),
        "v1:0": i32(0, 5, 10), "v1d:0": i32([0, 0, 0], [0, 5, 0], [0, 0, 10]),
        "v1s:0": i32([0, 1, 2, 3], [4, 10, 6, 7], [8, 9, 20, 11])}


@case("matrix_band_part", "MatrixBandPart: one subdiagonal and the main (lower 1, upper 0), everything above "
      "(lower 0, upper -1), all (-1, -1), int32 bounds.")
def _():
    m = feed("m", M)
    tf.raw_op("MatrixBandPart", m, np.int64(1), np.int64(0), name="low")
    tf.raw_op("MatrixBandPart", m, np.int32(0), np.int32(-1), name="up")
    tf.raw_op("MatrixBandPart", m, np.int64(-1), np.int64(-1), name="all")
    return {"m": M}, {"low:0": i32([0, 0, 0, 0], [4, 5, 0, 0], [0, 9, 10, 0]),
                      "up:0": i32([0, 1, 2, 3], [0, 5, 6, 7], [0, 0, 10, 11]), "all:0": M}


@case("combined_non_max_suppression", "CombinedNonMaxSuppression over 2 classes sharing boxes: class 0 keeps "
      "boxes 0 and 2 (box 1 overlaps box 0 by IoU 81/119), class 1 keeps box 1 only (box 3 scores under 0.1); "
      "ranked 0.9, 0.8, 0.7, padded to 4, box 2 clipped to [0, 1].", skip=NO_CC)
def _():
    boxes = f32([0, 0, 0.5, 0.5], [0.05, 0.05, 0.55, 0.55], [0.8, 0.8, 1.2, 1.1], [0, 0.6, 0.2, 0.9])
    boxes = boxes.reshape(1, 4, 1, 4)
    scores = f32([0.9, 0.2], [0.6, 0.8], [0.7, 0.05], [0.01, 0.05]).reshape(1, 4, 2)
    tf.image.combined_non_max_suppression(feed("b", boxes), feed("s", scores), 2, 4, 0.5, 0.1, name="nms")
    return {"b": boxes, "s": scores}, {
        "nms:0": f32([0, 0, 0.5, 0.5], [0.05, 0.05, 0.55, 0.55], [0.8, 0.8, 1, 1], [0, 0, 0, 0]).reshape(1, 4, 4),
        "nms:1": f32([0.9, 0.8, 0.7, 0]), "nms:2": f32([0, 1, 0, 0]), "nms:3": i32(3)}


@case("sparse_segment_grad_ops", "The ops TF's own training graphs hold for the sparse reductions' gradients: "
      "SparseSegmentSumGrad/MeanGrad/SqrtNGrad of grad rows [[1, 2], [3, 4], [5, 6]] back into 4 rows through "
      "indices [0, 2, 2, 1] and ids [0, 0, 1, 2] (segment 0 has 2 rows); InvertPermutation in int32 and int64.",
      skip=NO_CC)
def _():
    g = f32([1, 2], [3, 4], [5, 6])
    grad = feed("g", g)
    for kind in ("Sum", "Mean", "SqrtN"):
        tf.raw_op(f"SparseSegment{kind}Grad", grad, i32(0, 2, 2, 1), i32(0, 0, 1, 2), np.int32(4), name=kind)
    tf.raw_op("InvertPermutation", i32(2, 0, 1), name="inv")
    tf.raw_op("InvertPermutation", i64(3, 0, 2, 1), T=tf.int64, name="inv64")
    half, root = np.float32(0.5), np.float32(1) / np.sqrt(np.float32(2))
    return {"g": g}, {"Sum:0": f32([1, 2], [5, 6], [4, 6], [0, 0]),
                      "Mean:0": np.stack([g[0] * half, g[2], g[0] * half + g[1], [0, 0]]).astype(np.float32),
                      "SqrtN:0": np.stack([g[0] * root, g[2], g[0] * root + g[1], [0, 0]]).astype(np.float32),
                      "inv:0": i32(1, 2, 0), "inv64:0": i64(1, 3, 2, 0)}


@case("sparse_fill_and_reshape", "SparseFillEmptyRows puts 9 at [r, 0] for the empty rows 0, 2 and 4 of a 5 x 3 "
      "sparse tensor, entries by row (row 1's two keep their order); SparseReshape of [3, 4] indices to [2, -1]; "
      "SparseFillEmptyRowsGrad sends the added entries' gradient (1 + 4 + 6) to the default.", skip=NO_CC)
def _():
    v = f32(1, 2, 3)
    tf.raw_op("SparseFillEmptyRows", i64([3, 1], [1, 0], [1, 2]), feed("v", v), i64(5, 3), np.float32(9), name="fill")
    tf.raw_op("SparseReshape", i64([0, 1], [2, 3]), i64(3, 4), i64(2, -1), name="reshape")
    tf.raw_op("SparseFillEmptyRowsGrad", i64(4, 1, 2), f32(1, 2, 3, 4, 5, 6), name="grad")
    return {"v": v}, {"fill:0": i64([0, 0], [1, 0], [1, 2], [2, 0], [3, 1], [4, 0]), "fill:1": f32(9, 2, 3, 9, 1, 9),
                      "fill:2": np.array([True, False, True, False, True]), "fill:3": i64(4, 1, 2),
                      "reshape:0": i64([0, 1], [1, 5]), "reshape:1": i64(2, 6),
                      "grad:0": f32(5, 2, 3), "grad:1": np.float32(11)}
