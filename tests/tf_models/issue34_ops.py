"""A TensorFlow-made graph holding issue 34's numeric ops, as TF's own functions emit them: segment
reductions, embedding_lookup_sparse over partitioned shards, unique/bincount, the tf.sparse functions,
the diagonal and band ops, reverse_sequence and combined non-max suppression."""

import numpy as np

from .building import F32, Model, builder


@builder
def build_issue34_ops(tf):
    """Each output fetched; the placeholders' batch dims unknown, so nothing is folded away."""
    v1 = tf.compat.v1
    rng = np.random.default_rng(34)
    graph = tf.Graph()
    out = {}

    def keep(name, tensor):
        out[name] = tf.identity(tensor, name=f"out/{name}")

    with graph.as_default():
        x = v1.placeholder(tf.float32, [None, 3], name="x")            # 6 rows
        ids = v1.placeholder(tf.int32, [None], name="ids")             # sorted, 6 of them
        m = v1.placeholder(tf.float32, [None, 4, 5], name="m")
        lengths = v1.placeholder(tf.int64, [None], name="lengths")
        sp_ids = v1.sparse_placeholder(tf.int64, name="sp_ids")
        boxes = v1.placeholder(tf.float32, [None, 12, 1, 4], name="boxes")
        scores = v1.placeholder(tf.float32, [None, 12, 2], name="scores")

        for name in ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod"):
            keep(name, getattr(tf.math, name)(x, ids))
        for name in ("unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"):
            keep(name, getattr(tf.math, name)(x, ids[::-1], 5))
        keep("sparse_segment_sum_n", tf.sparse.segment_sum(x, [5, 0, 5], [0, 0, 2], num_segments=4))
        keep("sparse_segment_mean_n", tf.sparse.segment_mean(x, [5, 0, 5], [0, 0, 2], num_segments=4))
        keep("sparse_segment_sqrt_n_n", tf.sparse.segment_sqrt_n(x, [5, 0, 5], [0, 0, 2], num_segments=4))
        for kind in ("Sum", "Mean", "SqrtN"):  # what TF's training graphs of the sparse reductions hold
            keep(f"sparse_segment_{kind.lower()}_grad", getattr(tf.raw_ops, f"SparseSegment{kind}Grad")(
                grad=x[:3], indices=[0, 2, 2, 1], segment_ids=[0, 0, 1, 2], output_dim0=4))
        shards = [tf.constant(rng.normal(size=(n, 3)).astype(F32), name=f"shard{i}") for i, n in enumerate((4, 3))]
        for combiner in ("sum", "mean", "sqrtn"):
            keep(f"embedding_{combiner}", v1.nn.embedding_lookup_sparse(shards, sp_ids, None, combiner=combiner))
        unique, index, counts = tf.unique_with_counts(ids)
        keep("unique", unique)
        keep("unique_index", index)
        keep("unique_counts", counts)
        keep("unique_v2", tf.raw_ops.UniqueV2(x=tf.cast(x > 0, tf.int32), axis=[0])[0])
        keep("bincount", tf.math.bincount(ids, minlength=8))
        keep("bincount_v1", tf.raw_ops.Bincount(arr=ids, size=7, weights=tf.zeros([0])))
        pieces = tf.dynamic_partition(x, ids % 2, 2)
        keep("stitch", tf.dynamic_stitch(tf.dynamic_partition(tf.range(tf.shape(x)[0]), ids % 2, 2), pieces))
        keep("divide_no_nan", tf.math.divide_no_nan(x, tf.round(x)))
        keep("in_top_k", v1.math.in_top_k(x, ids % 3, 2))
        sp = tf.sparse.SparseTensor(np.array([[2, 1], [0, 0], [1, 2]], np.int64), x[0], [3, 3])
        ordered = tf.sparse.reorder(sp)
        keep("sparse_to_dense", tf.sparse.to_dense(ordered))
        keep("sparse_matmul", tf.sparse.sparse_dense_matmul(sp, tf.transpose(x[:, :3])))
        keep("sparse_reduce_sum", tf.sparse.reduce_sum(sp, axis=1))
        safe = v1.nn.safe_embedding_lookup_sparse(shards, sp_ids, None, combiner="mean")  # fills empty rows
        keep("safe_embedding", safe)
        d_values, d_default = tf.raw_ops.SparseFillEmptyRowsGrad(reverse_index_map=[2, 0], grad_values=x[:, 0])
        keep("fill_empty_rows_grad_values", d_values)
        keep("fill_empty_rows_grad_default", d_default)
        keep("invert_permutation", tf.math.invert_permutation(ids[::-1] * 0 + tf.range(6)[::-1]))
        keep("band_part", tf.linalg.band_part(m, 1, -1))
        keep("diag_part", tf.linalg.diag_part(m, k=(-1, 2), padding_value=9.0))
        keep("diag", tf.linalg.diag(m[:, 0, :3], k=1))
        keep("set_diag", tf.linalg.set_diag(m, m[:, 0, :4]))
        # the older forms TF1-era files hold: V1 (main diagonal) and V2 (packed LEFT_LEFT)
        keep("diag_v1", tf.raw_ops.MatrixDiag(diagonal=m[:, 0, :3]))
        keep("diag_part_v1", tf.raw_ops.MatrixDiagPart(input=m))
        keep("set_diag_v1", tf.raw_ops.MatrixSetDiag(input=m, diagonal=m[:, 1, :4]))
        part_v2 = tf.raw_ops.MatrixDiagPartV2(input=m, k=[-1, 1], padding_value=0.5)
        keep("diag_part_v2", part_v2)
        keep("diag_v2", tf.raw_ops.MatrixDiagV2(diagonal=part_v2, k=[-1, 1], num_rows=4, num_cols=5, padding_value=0.0))
        keep("set_diag_v2", tf.raw_ops.MatrixSetDiagV2(input=m, diagonal=m[:, 2, :4], k=1))
        keep("reverse_sequence", tf.reverse_sequence(m, lengths, seq_axis=2, batch_axis=0))
        nmsed = tf.image.combined_non_max_suppression(boxes, scores, 3, 5, iou_threshold=0.4, score_threshold=0.2)
        for name, tensor in zip(("nms_boxes", "nms_scores", "nms_classes", "nms_valid"), nmsed):
            keep(name, tensor)

    corner = rng.uniform(0, 0.8, size=(2, 12, 1, 2)).astype(F32)
    feeds = {
        "x": rng.normal(size=(6, 3)).astype(F32), "ids": np.array([0, 0, 1, 3, 3, 4], np.int32),
        "m": rng.normal(size=(2, 4, 5)).astype(F32), "lengths": np.array([3, 0], np.int64),
        "sp_ids/indices": np.array([[0, 0], [0, 1], [2, 0], [3, 0]], np.int64),
        "sp_ids/values": np.array([1, 6, 0, 3], np.int64), "sp_ids/shape": np.array([4, 2], np.int64),
        "boxes": np.concatenate([corner, corner + rng.uniform(0.05, 0.3, size=(2, 12, 1, 2)).astype(F32)], -1),
        "scores": rng.uniform(0, 1, size=(2, 12, 2)).astype(F32),
    }
    return Model(graph.as_graph_def(), feeds, [t.name for t in out.values()],
                 f"Issue 34's numeric ops: {len(out)} outputs over segment reductions, partitioned sparse "
                 "embeddings, unique/bincount, DivNoNan, InTopKV2, tf.sparse, band/diagonal ops, reverse_sequence "
                 "and combined NMS")
