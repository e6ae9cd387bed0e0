"""Gradient-check rows for issue 34's op families, merged into tests/python/test_gradients.py's TABLE
(before its automatic rows for one-input ops, which these override): builder over placeholder
inputs, input shapes, and the domain each input is sampled from."""

import numpy as np
import graphdef as tf
IDX = np.int64([[2, 0], [0, 1], [0, 0]])
ROWS = {
    "SegmentSum": (lambda x: tf.math.segment_sum(x, [0, 0, 2, 3]), [(4, 2)], [(-2, 2)]),
    "SegmentMean": (lambda x: tf.math.segment_mean(x, [0, 0, 2, 3]), [(4, 2)], [(-2, 2)]),
    "SegmentMax": (lambda x: tf.math.segment_max(x, [0, 0, 2, 3]), [(4, 2)], [(-2, 2)]),
    "SegmentMin": (lambda x: tf.math.segment_min(x, [0, 0, 2, 3]), [(4, 2)], [(-2, 2)]),
    "SegmentProd": (lambda x: tf.math.segment_prod(x, [0, 0, 2, 3]), [(4, 2)], [(0.5, 2)]),
    "UnsortedSegmentMax": (lambda x: tf.math.unsorted_segment_max(x, [1, -1, 1, 0], 2), [(4, 2)], [(-2, 2)]),
    "UnsortedSegmentMin": (lambda x: tf.math.unsorted_segment_min(x, [1, -1, 1, 0], 2), [(4, 2)], [(-2, 2)]),
    "UnsortedSegmentProd": (lambda x: tf.math.unsorted_segment_prod(x, [1, -1, 1, 0], 2), [(4, 2)], [(0.5, 2)]),
    **{op: (lambda x, op=op: tf.raw_op(op, x, [3, 0, 3], [0, 0, 1]), [(4, 2)], [(-2, 2)])
       for op in ("SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN")},
    **{op: (lambda x, op=op: tf.raw_op(op, x, [3, 0, 3], [0, 0, 1], 3), [(4, 2)], [(-2, 2)])
       for op in ("SparseSegmentSumWithNumSegments", "SparseSegmentMeanWithNumSegments",
                  "SparseSegmentSqrtNWithNumSegments")},

    "DynamicPartition": (lambda x: (lambda a, b: tf.concat([a * a, b], 0))(*tf.dynamic_partition(x, [1, 0, 1, 0], 2)),
                         [(4, 2)], [(-2, 2)]),
    "DynamicStitch": (lambda x, y: tf.dynamic_stitch([[2, 0], [1, 3]], [x, y]), [(2, 3), (2, 3)], [(-2, 2), (-2, 2)]),
    "ParallelDynamicStitch": (lambda x, y: tf.raw_op("ParallelDynamicStitch", [[2, 0], [1, 3]], [x, y]),
                              [(2, 3), (2, 3)], [(-2, 2), (-2, 2)]),
    "DivNoNan": (lambda x, y: tf.div_no_nan(x, y), [(2, 3), (3,)], [(-2, 2), (0.5, 2)]),

    "SparseToDense": (lambda v, d: tf.raw_op("SparseToDense", np.int64([[0, 1], [2, 0]]), np.int64([3, 2]), v,
                                             tf.reshape(d, [])), [(2,), (1,)], [(-2, 2), (-2, 2)]),
    "SparseTensorDenseMatMul": (lambda v, b: tf.raw_op("SparseTensorDenseMatMul", IDX, v, np.int64([3, 2]), b,
                                                       adjoint_b=True), [(3,), (4, 2)], [(-2, 2), (-2, 2)]),
    "SparseReorder": (lambda v: tf.raw_op("SparseReorder", IDX, v * v, np.int64([3, 2]))[1], [(3,)], [(-2, 2)]),
    "SparseReduceSum": (lambda v: tf.raw_op("SparseReduceSum", IDX, v * v, np.int64([3, 2]), np.int32([1]),
                                            keep_dims=True), [(3,)], [(-2, 2)]),
    "ReverseSequence": (lambda x: tf.reverse_sequence(x * x, [2, 0, 3], seq_axis=1), [(3, 4)], [(-2, 2)]),

    "MatrixDiagPartV3": (lambda x: tf.matrix_diag_part(x, k=[-1, 1], padding_value=0.5), [(2, 3, 4)], [(-2, 2)]),
    "MatrixDiagV3": (lambda d: tf.matrix_diag(d, k=[-1, 1], num_rows=3, num_cols=4), [(2, 3, 3)], [(-2, 2)]),
    "MatrixSetDiagV3": (lambda x, d: tf.matrix_set_diag(x, d, k=1), [(3, 4), (3,)], [(-2, 2), (-2, 2)]),
    "MatrixBandPart": (lambda x: tf.matrix_band_part(x, 1, 0), [(2, 3, 4)], [(-2, 2)]),

    "MatrixDiagPartV2": (lambda x: tf.raw_op("MatrixDiagPartV2", x, np.int32([-1, 1]), np.float64(0)), [(2, 3, 4)],
                         [(-2, 2)]),
    "MatrixDiagV2": (lambda d: tf.raw_op("MatrixDiagV2", d, np.int32(1), np.int32(3), np.int32(4), np.float64(0)),
                     [(2, 3)], [(-2, 2)]),
    "MatrixSetDiagV2": (lambda x, d: tf.raw_op("MatrixSetDiagV2", x, d, np.int32(1)), [(3, 4), (3,)],
                        [(-2, 2), (-2, 2)]),
    "MatrixDiagPart": (lambda x: tf.raw_op("MatrixDiagPart", x), [(2, 3, 4)], [(-2, 2)]),
    "MatrixDiag": (lambda d: tf.raw_op("MatrixDiag", d), [(2, 3)], [(-2, 2)]),
    "MatrixSetDiag": (lambda x, d: tf.raw_op("MatrixSetDiag", x, d), [(3, 4), (3,)], [(-2, 2), (-2, 2)]),

    "SparseFillEmptyRows": (lambda v, d: tf.raw_op("SparseFillEmptyRows", np.int64([[3, 1], [1, 0], [1, 2]]), v,
                                                   np.int64([5, 3]), tf.reshape(d, []))[1], [(3,), (1,)],
                            [(-2, 2), (-2, 2)]),
}
