"""SparseToDense, SparseTensorDenseMatMul, SparseReorder, SparseReduceSum (graphdef/ops/sparse.py) and
ReverseSequence (reverse_sequence.py) against TensorFlow, their gradients, and bad indices and shapes."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import reverse_sequence as rs, sparse
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow
from tests.python.ops34.runtimes import check_both_refuse, check_cc_agrees, check_graphrun_agrees, check_refused
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture

OPS = ["SparseToDense", "SparseTensorDenseMatMul", "SparseReorder", "SparseReduceSum", "ReverseSequence"]
RNG = np.random.default_rng(3)
# a 4 x 3 sparse matrix given out of order, with an entry in every row but one
INDICES = np.array([[3, 2], [0, 1], [2, 0], [0, 0], [3, 0]], np.int64)
SORTED = INDICES[np.lexsort(INDICES.T[::-1])]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
def test_sparse_to_dense_matches_tensorflow(tf_oracle, dtype):
    values = RNG.integers(1, 9, size=5).astype(dtype)

    def make():
        v = tf.placeholder(tf.as_dtype(dtype), [5], name="v")
        default = np.zeros((), dtype)
        return [tf.raw_op("SparseToDense", SORTED, np.int64([4, 3]), v, default),
                tf.raw_op("SparseToDense", INDICES.astype(np.int32), np.int32([4, 3]), v, default,
                          validate_indices=False),
                tf.raw_op("SparseToDense", np.int32([1, 3]), np.int32([5]), v[0], np.ones((), dtype)),
                tf.raw_op("SparseToDense", np.int32(2), np.int32([4]), v[1], default),
                sparse.sparse_to_dense(np.int64([[0, 0], [1, 2]]), np.int64([2, 3]), v[:2])]
    run_both(tf_oracle, make, {"v": values})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("adjoint_a", [False, True])
@pytest.mark.parametrize("adjoint_b", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_sparse_dense_matmul_matches_tensorflow(tf_oracle, adjoint_a, adjoint_b, dtype):
    indices = np.concatenate([INDICES, INDICES[:1]])  # a repeated entry adds up
    values = RNG.integers(-3, 4, size=6).astype(dtype)
    inner, rows = (4, 3) if adjoint_a else (3, 4)
    b = RNG.integers(-3, 4, size=(2, inner) if adjoint_b else (inner, 2)).astype(dtype)

    def make():
        v = tf.placeholder(tf.as_dtype(dtype), [6], name="v")
        d = tf.placeholder(tf.as_dtype(dtype), b.shape, name="b")
        return [tf.raw_op("SparseTensorDenseMatMul", indices, v, np.int64([4, 3]), d, adjoint_a=adjoint_a,
                          adjoint_b=adjoint_b),
                tf.raw_op("SparseTensorDenseMatMul", indices.astype(np.int32), v, np.int64([4, 3]), d,
                          adjoint_a=adjoint_a, adjoint_b=adjoint_b)]
    run_both(tf_oracle, make, {"v": values, "b": b})


@pytest.mark.tf_oracle
def test_sparse_reorder_matches_tensorflow(tf_oracle):
    indices = np.array([[1, 0, 2], [0, 3, 1], [1, 0, 0], [0, 0, 5], [0, 3, 0]], np.int64)

    def make():
        v = tf.placeholder(tf.float32, [5], name="v")
        return list(tf.raw_op("SparseReorder", indices, v, np.int64([2, 4, 6])))
    run_both(tf_oracle, make, {"v": RNG.normal(size=5).astype(np.float32)})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("axes", [[1], [0], [-1], [0, 2], [], [2, 0, 1]])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_sparse_reduce_sum_matches_tensorflow(tf_oracle, axes, keep_dims):
    indices = np.array([[1, 0, 2], [0, 3, 1], [1, 0, 0], [0, 0, 5], [0, 3, 1]], np.int64)  # one repeated

    def make():
        v = tf.placeholder(tf.float32, [5], name="v")
        return [tf.raw_op("SparseReduceSum", indices, v, np.int64([2, 4, 6]), np.int32(axes), keep_dims=keep_dims)]
    run_both(tf_oracle, make, {"v": RNG.normal(size=5).astype(np.float32)})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("seq_dim, batch_dim", [(1, 0), (0, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("len_dtype", [np.int32, np.int64])
def test_reverse_sequence_matches_tensorflow(tf_oracle, seq_dim, batch_dim, len_dtype):
    x = RNG.integers(0, 100, size=(3, 4, 3, 2)).astype(np.int32)
    lengths = RNG.integers(0, x.shape[seq_dim] + 1, size=x.shape[batch_dim]).astype(len_dtype)

    def make():
        t = tf.placeholder(tf.int32, x.shape, name="x")
        n = tf.placeholder(tf.as_dtype(len_dtype), [None], name="n")
        return [rs.reverse_sequence(t, n, seq_axis=seq_dim, batch_axis=batch_dim)]
    run_both(tf_oracle, make, {"x": x, "n": lengths})


@pytest.mark.tf_oracle
def test_sparse_tensor_builders_match_tensorflow(tf_oracle):
    """tf.SparseTensor given out of order: reordered, then made dense (the default 0 or given), multiplied and
    summed, as TF1 code writes it."""
    def make():
        v = tf.placeholder(tf.float32, [5], name="v")
        sp = tf.SparseTensor(INDICES, v, [4, 3])
        ordered = tf.sparse_reorder(sp)
        assert sp.shape.as_list() == [4, 3] and sp.dtype == tf.float32
        return [ordered.indices, ordered.values, sparse.sparse_tensor_to_dense(ordered),
                sparse.sparse_tensor_to_dense(ordered, default_value=-2.0),
                tf.sparse_tensor_dense_matmul(sp, tf.ones([3, 2])), tf.sparse_reduce_sum(sp),
                tf.sparse_reduce_sum(sp, axis=1, keepdims=True)]
    run_both(tf_oracle, make, {"v": RNG.normal(size=5).astype(np.float32)})


def test_a_sparse_tensor_needs_int64_indices():
    g = tf.Graph()
    with g.as_default(), pytest.raises(TypeError, match="SparseTensor: indices must be int64, got int32"):
        tf.SparseTensor(tf.constant([[0, 1]], tf.int32), [1.0], [2, 2])


@pytest.mark.tf_oracle
def test_invert_permutation_matches_tensorflow(tf_oracle):
    _matches_tensorflow(tf_oracle, "InvertPermutation")

    def make():
        p = tf.placeholder(tf.int64, [None], name="p")
        return [tf.raw_op("InvertPermutation", p), tf.raw_op("InvertPermutation", np.int32([2, 0, 1])),
                tf.raw_op("InvertPermutation", np.zeros(0, np.int32))]
    run_both(tf_oracle, make, {"p": RNG.permutation(7).astype(np.int64)})


@pytest.mark.parametrize("perm, words", [
    ([2, 0, 0], "0 is duplicated in the input."),
    ([3, 0, 1], "3 is not between 0 and 3"),
    ([[1]], "invert_permutation expects a 1D vector."),
])
def test_bad_permutations_are_refused(tmp_path, perm, words):
    def make():
        return [tf.raw_op("InvertPermutation", tf.placeholder(tf.int32, None, name="p"), name="z")]
    check_refused(tmp_path, make, {"p": np.int32(perm)}, "z", words)


# -- gradients against TF's -----------------------------------------------------------------------

@pytest.mark.tf_oracle
@pytest.mark.parametrize("adjoint_a, adjoint_b", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_gradients_match_tensorflow(tf_oracle, adjoint_a, adjoint_b):
    inner = 4 if adjoint_a else 3
    b = RNG.normal(size=(2, inner) if adjoint_b else (inner, 2))

    def make():
        v = tf.placeholder(tf.float64, [5], name="v")
        d = tf.placeholder(tf.float64, b.shape, name="b")
        default = tf.placeholder(tf.float64, [], name="default")
        sp = sparse.SparseTensor(INDICES, v, [4, 3])
        product = sparse.sparse_tensor_dense_matmul(sp, d, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
        ordered = sparse.sparse_reorder(sp).values
        dense = tf.raw_op("SparseToDense", SORTED, np.int64([4, 3]), ordered * ordered, default)
        reduced = sparse.sparse_reduce_sum(sp, axis=[1], keepdims=True)
        loss = (tf.reduce_sum(product * tf.constant(RNG.normal(size=product.shape.as_list())))
                + tf.reduce_sum(dense * tf.constant(RNG.normal(size=(4, 3))))
                + tf.reduce_sum(reduced * tf.constant(RNG.normal(size=(4, 1)))))
        return loss, [v, d, default]
    gradients_both(tf_oracle, make, {"v": RNG.normal(size=5), "b": b, "default": np.float64(0.25)})


@pytest.mark.tf_oracle
def test_reverse_sequence_gradient_matches_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.float64, [4, 3, 2], name="x")
        y = rs.reverse_sequence(x * x, [1, 3, 0], seq_axis=0, batch_axis=1)
        return tf.reduce_sum(y * tf.constant(RNG.normal(size=(4, 3, 2)))), [x]
    gradients_both(tf_oracle, make, {"x": RNG.normal(size=(4, 3, 2))})


# -- graphrun's answers are the Session's; graphrun-cc names what it lacks --------------------------

def _all_ops():
    v = tf.placeholder(tf.float32, [5], name="v")
    b = tf.placeholder(tf.float32, [3, 2], name="b")
    sp = sparse.SparseTensor(tf.constant(INDICES), v, tf.constant(np.int64([4, 3])))
    ordered = sparse.sparse_reorder(sp)
    return [tf.raw_op("SparseToDense", SORTED, np.int64([4, 3]), v, np.float32(-1)),
            sparse.sparse_tensor_dense_matmul(sp, b), ordered.indices, ordered.values, sparse.sparse_reduce_sum(sp, 0),
            sparse.sparse_tensor_to_dense(ordered, default_value=0.5),
            rs.reverse_sequence(b, [2, 0, 1], seq_axis=1)]


def test_graphrun_gives_the_sessions_answers(tmp_path):
    check_graphrun_agrees(tmp_path, _all_ops, {"v": RNG.normal(size=5).astype(np.float32),
                                               "b": RNG.normal(size=(3, 2)).astype(np.float32)})


def _reversed_sequences():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    cube = tf.placeholder(tf.int64, [3, 4, 2], name="cube")
    flags = tf.placeholder(tf.bool, [4, 3], name="flags")
    return [rs.reverse_sequence(x, [1, 3], seq_axis=1),
            rs.reverse_sequence(cube, np.int64([4, 0, 2]), seq_axis=1, batch_axis=0),
            rs.reverse_sequence(cube, np.int32([3, 1]), seq_axis=0, batch_axis=2),
            rs.reverse_sequence(flags, np.int32([2, 4, 1]), seq_axis=0, batch_axis=1),
            rs.reverse_sequence(tf.zeros([2, 0, 3]), [0, 0], seq_axis=1)]


def test_graphrun_cc_gives_the_sessions_reverse_sequence(tmp_path, cc_runner):
    check_cc_agrees(tmp_path, cc_runner, _reversed_sequences,
                    {"x": RNG.normal(size=(2, 3)).astype(np.float32),
                     "cube": np.arange(24, dtype=np.int64).reshape(3, 4, 2),
                     "flags": RNG.random((4, 3)) > 0.5})


@pytest.mark.parametrize("lengths, seq_axis, words", [
    ([1, 4], 1, "seq_lens(1) > input.dims(1)"),
    ([-1, 2], 1, "seq_lens(0) < 0"),
    ([1, 2, 3], 1, "Length of seq_lengths != input.dims(0), (3 vs. 2)"),
])
def test_bad_sequence_lengths_read_the_same_in_both(tmp_path, cc_runner, lengths, seq_axis, words):
    def make():
        x = tf.placeholder(tf.float32, None, name="x")
        return [rs.reverse_sequence(x, tf.placeholder(tf.int64, None, name="n"), seq_axis=seq_axis, name="z")]
    line = check_both_refuse(tmp_path, cc_runner, make,
                             {"x": np.ones((2, 3), np.float32), "n": np.int64(lengths)}, "z")
    assert words in line, line


# -- hostile indices and shapes ------------------------------------------------------------------

def _sparse_to_dense(validate):
    def make():
        i = tf.placeholder(tf.int64, None, name="i")
        s = tf.placeholder(tf.int64, None, name="s")
        v = tf.placeholder(tf.int32, None, name="v")
        return [tf.raw_op("SparseToDense", i, s, v, np.int32(0), validate_indices=validate, name="z")]
    return make


@pytest.mark.parametrize("indices, shape, values, validate, words", [
    ([[2, 0], [0, 1]], [3, 2], [5, 6], True, "indices[1] = [0,1] is out of order."),
    ([[0, 1], [0, 1]], [3, 2], [5, 6], True, "indices[1] = [0,1] is repeated"),
    ([[0, 1], [3, 1]], [3, 2], [5, 6], True, "indices[1] = [3,1] is out of bounds: need 0 <= index < [3,2]"),
    ([[0, 1], [3, 1]], [3, 2], [5, 6], False, "Indices are not valid (out of bounds). Shape: [3,2]"),
    ([[0, 1], [2, 1]], [3, 2], [5, 6, 7], True, "sparse_values has incorrect shape [3], should be [] or [2]"),
    ([[0, 1], [2, 1]], [3, -2], [5, 6], True, "Dimension -2 must be >= 0"),
    ([[0, 1], [2, 1]], [2 ** 40, 2 ** 20], [5, 6], True, "over the limit"),
    ([[0, 1], [2, 1]], [3, 2, 1], [5, 6], True, "output_shape has incorrect number of elements: 3 should be: 2"),
])
def test_bad_sparse_to_dense_is_refused(tmp_path, indices, shape, values, validate, words):
    check_refused(tmp_path, _sparse_to_dense(validate), {"i": np.int64(indices), "s": np.int64(shape),
                                                         "v": np.int32(values)}, "z", words)


@pytest.mark.parametrize("indices, shape, b_shape, words", [
    ([[0, 1], [2, 5]], [3, 2], (2, 2), "k (5) from index[1,1] out of bounds (>=2)"),
    ([[0, 1], [5, 0]], [3, 2], (2, 2), "m (5) from index[1,0] out of bounds (>=3)"),
    ([[0, 1], [-1, 0]], [3, 2], (2, 2), "m (-1) from index[1,0] out of bounds (>=3)"),
    ([[0, 1], [2, 0]], [3, 3], (2, 2), "Cannot multiply A and B because inner dimension does not match: 3 vs. 2."),
])
def test_bad_sparse_matmul_is_refused(tmp_path, indices, shape, b_shape, words):
    def make():
        i = tf.placeholder(tf.int64, None, name="i")
        s = tf.placeholder(tf.int64, None, name="s")
        b = tf.placeholder(tf.float32, None, name="b")
        return [tf.raw_op("SparseTensorDenseMatMul", i, np.float32([1, 2]), s, b, name="z")]
    check_refused(tmp_path, make, {"i": np.int64(indices), "s": np.int64(shape), "b": np.ones(b_shape, np.float32)},
                  "z", words)


@pytest.mark.parametrize("indices, axes, words", [
    ([[2, 0], [0, 1]], [2], "Invalid reduction dimension 2, for input with 2 dimensions."),
    ([[2, 0], [0, 7]], [0], "indices[1] = [0,7] is out of bounds: need 0 <= index < [3,2]"),
    ([[2, 0, 1], [0, 1, 1]], [0], "input_indices has 3 columns for input_shape [3,2]"),
])
def test_bad_sparse_reduce_sum_is_refused(tmp_path, indices, axes, words):
    def make():
        i = tf.placeholder(tf.int64, None, name="i")
        a = tf.placeholder(tf.int32, None, name="a")
        return [tf.raw_op("SparseReduceSum", i, np.float32([1, 2]), np.int64([3, 2]), a, name="z")]
    check_refused(tmp_path, make, {"i": np.int64(indices), "a": np.int32(axes)}, "z", words)


@pytest.mark.parametrize("lengths, words", [
    ([2, 5], "seq_lens(1) > input.dims(1)"),
    ([2, -1], "seq_lens(1) < 0"),
    ([2], "Length of seq_lengths != input.dims(0), (1 vs. 2)"),
])
def test_bad_sequence_lengths_are_refused(tmp_path, lengths, words):
    def make():
        x = tf.placeholder(tf.int32, None, name="x")
        n = tf.placeholder(tf.int64, None, name="n")
        return [tf.raw_op("ReverseSequence", x, n, seq_dim=1, name="z")]
    check_refused(tmp_path, make, {"x": np.int32([[1, 2, 3], [4, 5, 6]]), "n": np.int64(lengths)}, "z", words)


def test_bad_dims_are_refused_when_building():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        with pytest.raises(ValueError, match=r"ReverseSequence 'a': batch_dim == seq_dim == 0"):
            rs.reverse_sequence(x, [1, 2], seq_axis=0, name="a")
        with pytest.raises(ValueError, match=r"'b': seq_dim must be < input rank \( 2 vs. 2\)"):
            rs.reverse_sequence(x, [1, 2], seq_axis=2, name="b")


# -- SparseFillEmptyRows and SparseReshape (safe_embedding_lookup_sparse, feature columns) -------------

@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", ["SparseFillEmptyRows", "SparseReshape"])
def test_fill_and_reshape_declarations_match_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


@pytest.mark.tf_oracle
def test_fill_empty_rows_and_reshape_match_tensorflow(tf_oracle):
    indices = np.array([[3, 1], [1, 0], [1, 2], [6, 2]], np.int64)

    def make():
        i = tf.placeholder(tf.int64, [None, 2], name="i")
        v = tf.placeholder(tf.float32, [None], name="v")
        filled = tf.raw_op("SparseFillEmptyRows", i, v, np.int64([7, 3]), np.float32(-1))
        none = tf.raw_op("SparseFillEmptyRows", np.zeros((0, 2), np.int64), np.zeros(0, np.int32), np.int64([2, 3]),
                         np.int32(5))
        reshaped = tf.raw_op("SparseReshape", i, np.int64([7, 3]), np.int64([-1, 7]))
        flat = tf.raw_op("SparseReshape", i, np.int64([7, 3]), np.int64([21]))
        deep = tf.raw_op("SparseReshape", i, np.int64([7, 3]), np.int64([7, 1, 3, 1]))
        return [*filled, *none, *reshaped, *flat, *deep]
    run_both(tf_oracle, make, {"i": indices, "v": RNG.normal(size=4).astype(np.float32)})


@pytest.mark.tf_oracle
def test_safe_embedding_lookup_sparse_graph_and_gradient_match_tensorflow(tf_oracle, tmp_path):
    """TF's own tf.nn.safe_embedding_lookup_sparse (feature columns' embedding): SparseFillEmptyRows for the
    rows with no id, SparseReshape, and the gradient w.r.t. the default through SparseFillEmptyRows."""
    from tests.python.ops34.test_tf_made_graphs import _run_everywhere, _tf_graph

    def build(tf_):
        shards = [tf_.constant(RNG.normal(size=(n, 3)).astype(np.float32), name=f"shard{k}") for k, n in
                  enumerate((4, 3))]
        ids = tf_.compat.v1.sparse_placeholder(tf_.int64, name="ids")
        w = tf_.compat.v1.sparse_placeholder(tf_.float32, name="w")
        outs = [tf_.compat.v1.nn.safe_embedding_lookup_sparse(shards, ids, None, combiner="mean"),
                tf_.compat.v1.nn.safe_embedding_lookup_sparse(shards, ids, w, combiner="sqrtn", default_id=2)]
        fill = tf_.sparse.fill_empty_rows(tf_.sparse.SparseTensor(ids.indices, w.values, ids.dense_shape), 0.5)
        outs += tf_.compat.v1.gradients(tf_.reduce_sum(fill[0].values ** 2), [w.values])
        indices = np.array([[0, 0], [0, 1], [2, 0], [4, 1]], np.int64)
        return {"ids/indices": indices, "ids/values": np.array([1, 6, 0, 3], np.int64),
                "ids/shape": np.array([5, 2], np.int64), "w/indices": indices,
                "w/values": RNG.uniform(0.5, 2, 4).astype(np.float32), "w/shape": np.array([5, 2], np.int64)}, outs
    graph_def, feeds, names, theirs = _tf_graph(tf_oracle, build)
    assert {"SparseFillEmptyRows", "SparseReshape"} <= {n.op for n in graph_def.node}
    _run_everywhere(tmp_path, graph_def, feeds, names, theirs)


@pytest.mark.parametrize("op_type, inputs, words", [
    ("SparseFillEmptyRows", ([[3, 1], [5, 0]], [1.0, 2.0], [5, 3]), "indices(1, 0) is invalid: 5 >= 5"),
    ("SparseFillEmptyRows", ([[3, 1], [1, 0]], [1.0, 2.0, 3.0], [5, 3]),
     "The length of `values` (3) must match the first dimension of `indices` (2)."),
    ("SparseFillEmptyRows", ([[0, 1]], [1.0], [0, 3]), "Received SparseTensor with dense_shape[0] = 0"),
    ("SparseFillEmptyRows", ([[0, 1]], [1.0], [2 ** 40, 3]), "over the limit"),
    ("SparseReshape", ([[0, 1], [2, 3]], [3, 4], [5, -1]), "requires a multiple of 5"),
    ("SparseReshape", ([[0, 1], [2, 3]], [3, 4], [-1, -1]), "only one output dimension may be -1, not both 0 and 1"),
    ("SparseReshape", ([[0, 1], [2, 3]], [3, 4], [5, 3]), "but the requested shape has 15"),
    ("SparseReshape", ([[0, 1], [2, 3]], [3, 4], [2, -3]), "size 1 must be non-negative, not -3"),
    ("SparseReshape", ([[0, 1], [2, 3]], [3, 4, 1], [12]), "Input tensor rank must match input shape length."),
])
def test_bad_fill_and_reshape_inputs_are_refused(tmp_path, monkeypatch, op_type, inputs, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    a, b, c = inputs

    def make():
        i = tf.placeholder(tf.int64, None, name="a")
        if op_type == "SparseFillEmptyRows":
            v, s = tf.placeholder(tf.float32, None, name="b"), tf.placeholder(tf.int64, None, name="c")
            return [tf.raw_op(op_type, i, v, s, np.float32(0), name="z")[0]]
        s, n = tf.placeholder(tf.int64, None, name="b"), tf.placeholder(tf.int64, None, name="c")
        return [tf.raw_op(op_type, i, s, n, name="z")[0]]
    feeds = {"a": np.int64(a), "b": np.float32(b) if op_type == "SparseFillEmptyRows" else np.int64(b),
             "c": np.int64(c)}
    check_refused(tmp_path, make, feeds, "z", words)


@pytest.mark.tf_oracle
def test_fill_empty_rows_grad_matches_tensorflow(tf_oracle):
    _matches_tensorflow(tf_oracle, "SparseFillEmptyRowsGrad")

    def make():
        g = tf.placeholder(tf.float32, [None], name="g")
        return list(tf.raw_op("SparseFillEmptyRowsGrad", np.int64([4, 1, 2]), g))
    run_both(tf_oracle, make, {"g": RNG.normal(size=6).astype(np.float32)})


def test_a_reverse_index_out_of_range_is_refused(tmp_path):
    def make():
        r = tf.placeholder(tf.int64, None, name="r")
        return [tf.raw_op("SparseFillEmptyRowsGrad", r, tf.placeholder(tf.float32, None, name="g"), name="z")[0]]
    check_refused(tmp_path, make, {"r": np.int64([0, 6]), "g": np.ones(3, np.float32)}, "z",
                  "Elements in reverse index must be in [0, 3) but got 6")
