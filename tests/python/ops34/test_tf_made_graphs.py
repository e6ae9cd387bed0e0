"""Graphs TensorFlow itself builds with issue 34's ops (its own tf.* functions, so its own attrs, node order
and helper ops), frozen to a GraphDef and run by the Session and graphrun, answers checked against
TensorFlow's under the numerics policy."""

import json

import numpy as np
import pytest

import graphdef
from tests.conformance.replay import from_json_output
from tests.support.graphrun_helpers import run_graphrun
from tests.support.numerics_policy import assert_all_conform
from tests.support.op_oracle import tf_oracle  # noqa: F401 - a fixture

RNG = np.random.default_rng(34)


def _tf_graph(tf, build):
    """build(tf) inside a TF1 graph: (GraphDef, feeds {name: value}, fetch names) and TF's answers."""
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches = build(tf)
        names = [t.name for t in fetches]
        with tf.compat.v1.Session(graph=graph) as sess:
            theirs = sess.run(names, {f"{k}:0": v for k, v in feeds.items()})
    return graph.as_graph_def(), feeds, names, theirs


def _run_everywhere(tmp_path, graph_def, feeds, names, theirs):
    model = tmp_path / "model.pb"
    model.write_bytes(graph_def.SerializeToString())
    with graphdef.Session(graph=graphdef.load(model)) as sess:
        ours = sess.run(names, {f"{k}:0": v for k, v in feeds.items()})
    assert_all_conform(ours, theirs, model, names, who="the Session and TensorFlow")
    args = [model]
    for k, v in feeds.items():
        np.save(tmp_path / f"{k.replace('/', '_')}.npy", v, allow_pickle=False)
        args += ["--feed", f"{k}=@{tmp_path / (k.replace('/', '_') + '.npy')}"]
    for n in names:
        args += ["--fetch", n]
    code, out, err = run_graphrun(*args, "--json")
    assert code == 0, err
    got = dict(from_json_output(o) for o in json.loads(out)["outputs"])
    assert_all_conform([got[n] for n in names], theirs, model, names, who="graphrun and TensorFlow")


def _embedding_lookup_sparse(tf):
    """Partitioned embeddings as TF1 models hold them: three shards, ids as a sparse placeholder, the three
    combiners (Unique, DynamicPartition, Gather, DynamicStitch, SparseSegmentSum/Mean/SqrtN)."""
    shards = [tf.constant(RNG.normal(size=(n, 4)).astype(np.float32)) for n in (4, 3, 3)]
    ids = tf.compat.v1.sparse_placeholder(tf.int64, name="ids")
    weights = tf.compat.v1.sparse_placeholder(tf.float32, name="w")
    out = [tf.compat.v1.nn.embedding_lookup_sparse(shards, ids, None, combiner=c, partition_strategy=p)
           for c in ("sum", "mean", "sqrtn") for p in ("mod", "div")]
    out.append(tf.compat.v1.nn.embedding_lookup_sparse(shards, ids, weights, combiner="mean"))
    indices = np.array([[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [3, 0]], np.int64)
    feeds = {"ids/indices": indices, "ids/values": np.array([1, 9, 1, 0, 5, 7], np.int64),
             "ids/shape": np.array([4, 3], np.int64), "w/indices": indices,
             "w/values": RNG.uniform(0.5, 2, 6).astype(np.float32), "w/shape": np.array([4, 3], np.int64)}
    return feeds, out


def _segments_and_counts(tf):
    x = tf.compat.v1.placeholder(tf.float32, [6, 3], name="x")
    ids = tf.compat.v1.placeholder(tf.int32, [6], name="ids")
    u, idx, counts = tf.unique_with_counts(ids)
    out = [tf.math.segment_sum(x, ids), tf.math.segment_max(x, ids), tf.math.segment_mean(x, ids),
           tf.math.unsorted_segment_min(x, ids, 5), tf.math.unsorted_segment_prod(x, ids, 5),
           tf.math.unsorted_segment_mean(x, ids, 5), tf.math.unsorted_segment_sqrt_n(x, ids, 5),
           u, idx, counts, tf.math.bincount(ids), tf.math.bincount(ids, minlength=7, maxlength=9),
           tf.math.divide_no_nan(x, tf.round(x)), tf.compat.v1.math.in_top_k(x, ids % 3, 2)]
    return {"x": RNG.normal(size=(6, 3)).astype(np.float32), "ids": np.array([0, 0, 1, 3, 3, 3], np.int32)}, out


def _matrices_and_sequences(tf):
    m = tf.compat.v1.placeholder(tf.float32, [2, 4, 5], name="m")
    lengths = tf.compat.v1.placeholder(tf.int64, [2], name="n")
    mask = tf.linalg.band_part(tf.ones([4, 4]), -1, 0)  # a causal mask, as CLIP builds it
    out = [mask, tf.linalg.band_part(m, 1, 2), tf.linalg.diag_part(m, k=(-1, 2), padding_value=7.0),
           tf.linalg.diag(tf.linalg.diag_part(m), k=1), tf.linalg.set_diag(m, m[:, :3, 1], k=-1),
           tf.linalg.diag_part(m, k=1, align="LEFT_RIGHT"), tf.reverse_sequence(m, lengths, seq_axis=2, batch_axis=0),
           tf.reverse_sequence(m, lengths, seq_axis=1, batch_axis=0)]
    return {"m": RNG.normal(size=(2, 4, 5)).astype(np.float32), "n": np.array([3, 0], np.int64)}, out


def _sparse_ops(tf):
    v = tf.compat.v1.placeholder(tf.float32, [4], name="v")
    sp = tf.sparse.SparseTensor(np.array([[2, 1], [0, 0], [1, 2], [0, 2]], np.int64), v, [3, 3])
    ordered = tf.sparse.reorder(sp)
    b = tf.constant(RNG.normal(size=(3, 2)).astype(np.float32))
    out = [ordered.indices, ordered.values, tf.sparse.to_dense(ordered), tf.sparse.sparse_dense_matmul(sp, b),
           tf.sparse.sparse_dense_matmul(sp, b, adjoint_a=True), tf.sparse.reduce_sum(sp, axis=1),
           tf.sparse.reduce_sum(sp, axis=0, keepdims=True), tf.sparse.segment_mean(b, [0, 2, 2], [0, 0, 1]),
           tf.sparse.segment_sqrt_n(b, [0, 2, 2], [0, 0, 1], num_segments=3)]
    return {"v": RNG.normal(size=4).astype(np.float32)}, out


def _detection_post_processing(tf):
    boxes = tf.compat.v1.placeholder(tf.float32, [2, 30, 1, 4], name="boxes")
    scores = tf.compat.v1.placeholder(tf.float32, [2, 30, 3], name="scores")
    out = list(tf.image.combined_non_max_suppression(boxes, scores, 5, 12, iou_threshold=0.4, score_threshold=0.2))
    corner = RNG.uniform(0, 0.8, size=(2, 30, 1, 2)).astype(np.float32)
    b = np.concatenate([corner, corner + RNG.uniform(0.05, 0.3, size=(2, 30, 1, 2)).astype(np.float32)], -1)
    return {"boxes": b, "scores": RNG.uniform(0, 1, size=(2, 30, 3)).astype(np.float32)}, out


@pytest.mark.tf_oracle
@pytest.mark.parametrize("build", [_embedding_lookup_sparse, _segments_and_counts, _matrices_and_sequences, _sparse_ops,
                                   _detection_post_processing],
                         ids=["embedding_lookup_sparse", "segments", "matrices", "sparse", "combined_nms"])
def test_tensorflow_made_graph_runs_with_tensorflows_answers(tf_oracle, tmp_path, build):
    graph_def, feeds, names, theirs = _tf_graph(tf_oracle, build)
    _run_everywhere(tmp_path, graph_def, feeds, names, theirs)


def _with_gradients(build):
    """The same graph with TF's gradients of every float output w.r.t. every float placeholder (and the
    embedding shards): what a TF1 training graph holds (SparseSegment*Grad, InvertPermutation, ...)."""
    def build_training(tf):
        feeds, out = build(tf)
        graph = tf.compat.v1.get_default_graph()
        # the inputs a user would train: float placeholders and the top-level Consts (the embedding shards),
        # not the constants TF's functions make inside their scopes
        xs = [op.outputs[0] for op in graph.get_operations() if op.outputs and op.outputs[0].dtype.is_floating
              and (op.type == "Placeholder" or (op.type == "Const" and "/" not in op.name)) and op.name != "w/values"]
        loss = tf.add_n([tf.reduce_sum(o * o) for o in out if o.dtype == tf.float32])
        return feeds, [g for g in tf.compat.v1.gradients(loss, xs) if g is not None]
    return build_training


@pytest.mark.tf_oracle
@pytest.mark.parametrize("build", [_embedding_lookup_sparse, _sparse_ops, _matrices_and_sequences,
                                   _segments_and_counts],
                         ids=["embedding_lookup_sparse", "sparse", "matrices", "segments"])
def test_tensorflow_made_training_graph_runs_with_tensorflows_answers(tf_oracle, tmp_path, build):
    graph_def, feeds, names, theirs = _tf_graph(tf_oracle, _with_gradients(build))
    held = {n.op for n in graph_def.node}
    assert held & {"SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad", "InvertPermutation", "MatrixBandPart",
                   "ReverseSequence", "SegmentMax", "UnsortedSegmentProd"}, sorted(held)
    _run_everywhere(tmp_path, graph_def, feeds, names, theirs)
