"""Segment reductions (graphdef/ops/segments.py) against TensorFlow: sorted, unsorted and sparse,
their gradients, their OpDefs, and bad ids refused in TensorFlow's words by both Python runtimes."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import segments
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow
from tests.python.ops34.runtimes import (check_both_refuse, check_cc_agrees, check_cc_refuses,
                                        check_graphrun_agrees, check_refused)
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture

SORTED = ["SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd"]
UNSORTED = ["UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"]
SPARSE = [f"SparseSegment{k}{n}" for k in ("Sum", "Mean", "SqrtN") for n in ("", "WithNumSegments")]
RNG = np.random.default_rng(34)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", SORTED + UNSORTED + SPARSE)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


def _data(dtype, shape):
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-2, 2, size=shape).astype(dtype)
    return RNG.integers(-5, 6, size=shape).astype(dtype)


SORTED_IDS = [  # runs with gaps (empty segments in between), one segment, none
    np.array([0, 0, 2, 2, 2, 5], np.int32),
    np.array([1, 1, 1, 1, 1, 1], np.int64),
    np.zeros(0, np.int32),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("ids", SORTED_IDS, ids=["gaps", "one", "empty"])
def test_sorted_segments_match_tensorflow(tf_oracle, dtype, ids):
    data = _data(dtype, (ids.size, 3))

    def make():
        x = tf.placeholder(tf.as_dtype(dtype), [None, 3], name="x")
        s = tf.placeholder(tf.as_dtype(ids.dtype), [None], name="s")
        return [tf.raw_op(op, x, s) for op in SORTED]
    run_both(tf_oracle, make, {"x": data, "s": ids})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_unsorted_segments_match_tensorflow(tf_oracle, dtype):
    """Ids in any order, negative ones dropped, a 2-d ids tensor, empty segments (lowest, highest, 1)."""
    data = _data(dtype, (2, 3, 2))
    ids = np.array([[3, -1, 0], [3, 0, -2]], np.int32)

    def make():
        x = tf.placeholder(tf.as_dtype(dtype), [2, 3, 2], name="x")
        s = tf.placeholder(tf.int32, [2, 3], name="s")
        return [tf.raw_op(op, x, s, np.int64(5)) for op in UNSORTED] + [
            segments.unsorted_segment_max(x[0], s[0], 4)]
    run_both(tf_oracle, make, {"x": data, "s": ids})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_segments_match_tensorflow(tf_oracle, dtype):
    data = _data(dtype, (5, 2, 3))
    indices = np.array([4, 0, 4, 1, 2, 2], np.int64)
    ids = np.array([0, 0, 0, 2, 3, 3], np.int32)

    def make():
        x = tf.placeholder(tf.as_dtype(dtype), [5, 2, 3], name="x")
        i = tf.placeholder(tf.int64, [None], name="i")
        s = tf.placeholder(tf.int32, [None], name="s")
        plain = [tf.raw_op(op, x, i, s) for op in SPARSE if not op.endswith("Segments")]
        counted = [tf.raw_op(op, x, i, s, np.int32(6)) for op in SPARSE if op.endswith("Segments")]
        return plain + counted
    run_both(tf_oracle, make, {"x": data, "i": indices, "s": ids})


@pytest.mark.tf_oracle
def test_sparse_segment_sum_of_integers_matches_tensorflow(tf_oracle):
    data = _data(np.int32, (4, 3))

    def make():
        x = tf.placeholder(tf.int32, [4, 3], name="x")
        return [segments.sparse_segment_sum(x, [3, 3, 0], [0, 1, 1]),
                segments.sparse_segment_sum(x, [3, 3, 0], [0, 1, 1], num_segments=4)]
    run_both(tf_oracle, make, {"x": data})


@pytest.mark.tf_oracle
def test_unsorted_mean_and_sqrt_n_match_tensorflow(tf_oracle):
    """TF composes these from UnsortedSegmentSum; an empty segment divides by 1 (stays 0)."""
    data = _data(np.float32, (2, 3, 2))

    def make():
        x = tf.placeholder(tf.float32, [2, 3, 2], name="x")
        ids = np.array([[3, -1, 0], [3, 0, 0]], np.int32)
        return [tf.math.unsorted_segment_mean(x, ids, 5), tf.math.unsorted_segment_sqrt_n(x, ids, 5),
                tf.math.unsorted_segment_mean(x[0], ids[0], 4)]
    run_both(tf_oracle, make, {"x": data})


# -- gradients: TF's own gradient graphs of the same forward graph ----------------------------------

def _grad_case(build, data):
    def make():
        x = tf.placeholder(tf.float64, data.shape, name="x")
        y = build(x)
        w = tf.constant(RNG.normal(size=y.shape.as_list()))
        return tf.reduce_sum(y * w), [x]
    return make


GRADIENTS = {
    "SegmentSum": lambda x: segments.segment_sum(x, [0, 0, 2, 3, 3]),
    "SegmentMean": lambda x: segments.segment_mean(x, [0, 0, 2, 3, 3]),
    "SegmentMax": lambda x: segments.segment_max(x, [0, 0, 2, 3, 3]),
    "SegmentMin": lambda x: segments.segment_min(x, [0, 0, 0, 3, 3]),
    "SegmentProd": lambda x: segments.segment_prod(x, [0, 0, 1, 1, 1]),
    "UnsortedSegmentMax": lambda x: segments.unsorted_segment_max(x, [2, -1, 0, 2, 0], 4),
    "UnsortedSegmentMin": lambda x: segments.unsorted_segment_min(x, [2, -1, 0, 2, 0], 3),
    "UnsortedSegmentProd": lambda x: segments.unsorted_segment_prod(x, [2, -1, 0, 2, 0], 3),
    "SparseSegmentSum": lambda x: segments.sparse_segment_sum(x, [4, 0, 4, 1], [0, 0, 2, 2]),
    "SparseSegmentMean": lambda x: segments.sparse_segment_mean(x, [4, 0, 4, 1], [0, 0, 2, 2]),
    "SparseSegmentSqrtN": lambda x: segments.sparse_segment_sqrt_n(x, [4, 0, 4, 1], [0, 0, 2, 2]),
    "SparseSegmentMeanWithNumSegments": lambda x: segments.sparse_segment_mean(x, [4, 0, 4, 1], [0, 0, 2, 2],
                                                                               num_segments=5),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", sorted(GRADIENTS))
def test_gradient_matches_tensorflow(tf_oracle, op_type):
    data = RNG.uniform(0.5, 2, size=(5, 3))
    data[1, 1] = data[0, 1]  # a tie for max and min: TF shares the gradient between the two
    gradients_both(tf_oracle, _grad_case(GRADIENTS[op_type], data), {"x": data})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", ["SegmentProd", "UnsortedSegmentProd"])
def test_product_gradient_with_zeros_matches_tensorflow(tf_oracle, op_type):
    """One zero in a segment: its gradient is the product of the others; two zeros: 0 throughout."""
    data = RNG.uniform(0.5, 2, size=(5, 3))
    data[0, 0] = data[2, 1] = data[3, 1] = 0.0
    build = GRADIENTS[op_type]
    gradients_both(tf_oracle, _grad_case(build, data), {"x": data})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", ["SparseSegmentSumGrad", "SparseSegmentMeanGrad", "SparseSegmentSqrtNGrad"])
def test_sparse_segment_grad_ops_match_tensorflow(tf_oracle, op_type):
    """The ops TF's own gradient graphs hold: ids need not be sorted, rows repeat, output_dim0 rows."""
    _matches_tensorflow(tf_oracle, op_type)
    grad = _data(np.float32, (3, 2, 2))

    def make():
        g = tf.placeholder(tf.float32, [3, 2, 2], name="g")
        return [tf.raw_op(op_type, g, np.int64([0, 2, 2, 1, 4]), np.int32([0, 1, 0, 2, 0]), np.int32(6))]
    run_both(tf_oracle, make, {"g": grad})


@pytest.mark.parametrize("indices, ids, dim0, words", [
    ([0, 5, 2, 1], [0, 0, 1, 2], 4, "Index 5 out of range [0, 4)."),
    ([0, 2, 2, 1], [0, 0, 1, -1], 4, "Segment id -1 out of range [0, 3)."),
    ([0, 2, 2, 1], [0, 0, 1, 3], 4, "Invalid number of segments"),
    ([0, 2, 2, 1], [0, 0, 1, 2], -1, "Expected a non-negative size, got -1"),
    ([0, 2, 2, 1], [0, 0, 1, 2], 2 ** 31 - 1, "over the limit"),
])
def test_bad_sparse_segment_grads_are_refused(tmp_path, monkeypatch, indices, ids, dim0, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))

    def make():
        g = tf.placeholder(tf.float32, None, name="g")
        i, s = tf.placeholder(tf.int32, None, name="i"), tf.placeholder(tf.int32, None, name="s")
        return [tf.raw_op("SparseSegmentMeanGrad", g, i, s, tf.placeholder(tf.int32, None, name="d"), name="z")]
    check_refused(tmp_path, make, {"g": np.ones((3, 2), np.float32), "i": np.int32(indices), "s": np.int32(ids),
                                   "d": np.int32(dim0)}, "z", words)


# -- the same answers from graphrun; graphrun-cc names what it lacks --------------------------------

def _all_ops():
    x = tf.placeholder(tf.float32, [5, 2], name="x")
    s = tf.placeholder(tf.int32, [5], name="s")
    return ([tf.raw_op(op, x, s) for op in SORTED] + [tf.raw_op(op, x, s - 1, 4) for op in UNSORTED]
            + [tf.raw_op(op, x, s, s) for op in SPARSE if not op.endswith("Segments")]
            + [tf.raw_op(op, x, s, s, 7) for op in SPARSE if op.endswith("Segments")])


FEEDS = {"x": RNG.uniform(-2, 2, size=(5, 2)).astype(np.float32), "s": np.array([0, 0, 1, 3, 3], np.int32)}


def test_graphrun_gives_the_sessions_answers(tmp_path):
    check_graphrun_agrees(tmp_path, _all_ops, FEEDS)


def test_graphrun_cc_names_the_op_it_lacks(tmp_path, cc_runner):
    def make():
        x = tf.placeholder(tf.float32, [5, 2], name="x")
        return [segments.sparse_segment_sum(x, [0, 1, 1, 2, 4], [0, 0, 1, 3, 3], name="seg")]
    line = check_cc_refuses(tmp_path, cc_runner, make, {"x": FEEDS["x"]}, "SparseSegmentSum", "seg")
    assert line.endswith("no kernel for SparseSegmentSum (seg)"), line


def _cc_segment_ops():
    out = []
    for dtype in (tf.float32, tf.float64, tf.int32, tf.uint8):
        x = tf.placeholder(dtype, [6, 2], name=f"x_{dtype.name}")
        s = tf.placeholder(tf.int64, [6], name=f"s_{dtype.name}")
        u = tf.placeholder(tf.int32, [6], name=f"u_{dtype.name}")
        out += [tf.raw_op(op, x, s) for op in SORTED]
        out += [tf.raw_op(op, x, u, np.int64(5)) for op in UNSORTED]
        out += [tf.raw_op(op, tf.reshape(x, [3, 2, 2]), tf.reshape(u, [3, 2]), 4) for op in UNSORTED]
    return out


def _cc_segment_feeds():
    floats = np.array([[1.5, -2], [np.nan, 3], [-0.0, 7], [4, np.inf], [2.5, -np.inf], [0.25, 8]])
    ints = np.array([[2 ** 30, -3], [3, 5], [-7, 0], [2 ** 30, 4], [9, -1], [1, 2]])
    feeds = {}
    for name, values in (("float32", floats), ("float64", floats), ("int32", ints), ("uint8", np.abs(ints) % 256)):
        feeds[f"x_{name}"] = values.astype(name)
        feeds[f"s_{name}"] = np.int64([0, 0, 2, 2, 2, 5])  # segments 1, 3 and 4 empty
        feeds[f"u_{name}"] = np.int32([3, -1, 0, 3, 1, 3])  # segments 2 and 4 empty, a row dropped
    return feeds


def test_graphrun_cc_gives_the_sessions_segment_reductions(tmp_path, cc_runner):
    # NaN and infinities through max, min, sums and products; int32 sums that wrap; empty segments
    check_cc_agrees(tmp_path, cc_runner, _cc_segment_ops, _cc_segment_feeds())


@pytest.mark.parametrize("ids, words", [
    ([0, 0, 2, 1], "segment ids are not increasing"),
    ([-1, 0, 0, 1], "Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is not sorted."),
    ([0, 0, 1], "segment_ids should be the same size as dimension 0 of input."),
])
def test_bad_sorted_ids_read_the_same_in_both(tmp_path, cc_runner, ids, words):
    line = check_both_refuse(tmp_path, cc_runner, _sorted_graph("SegmentMean"),
                             {"x": np.ones((4, 2), np.float32), "s": np.int32(ids)}, "z")
    assert words in line, line


@pytest.mark.parametrize("ids, num, words", [
    ([0, 5, 2, 2], 3, "segment_ids[1] = 5 is out of range [0, 3)"),
    ([0, 1, 2, 2], -3, "Input num_segments == -3 must not be negative."),
    ([[0, 1], [2, 2]], 3, "segment_ids [2,2] must be a prefix of data's shape [4,2]"),
])
def test_bad_unsorted_ids_read_the_same_in_both(tmp_path, cc_runner, ids, num, words):
    def make():
        x, s = tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int32, None, name="s")
        return [tf.raw_op("UnsortedSegmentProd", x, s, tf.placeholder(tf.int64, None, name="n"), name="z")]
    line = check_both_refuse(tmp_path, cc_runner, make,
                             {"x": np.ones((4, 2), np.float32), "s": np.int32(ids), "n": np.int64(num)}, "z")
    assert words in line, line


# -- hostile ids and counts ---------------------------------------------------------------------

def _sorted_graph(op_type):
    def make():
        x = tf.placeholder(tf.float32, None, name="x")
        s = tf.placeholder(tf.int32, None, name="s")
        return [tf.raw_op(op_type, x, s, name="z")]
    return make


@pytest.mark.parametrize("ids, words", [
    ([0, 0, 2, 1], "segment ids are not increasing"),
    ([-1, 0, 0, 1], "Segment id -1 out of range [0, 2), possibly because 'segment_ids' input is not sorted."),
    ([0, 0, 1], "segment_ids should be the same size as dimension 0 of input."),
    ([[0, 0], [0, 1], [1, 1], [1, 1]], "segment_ids should be a vector."),
])
@pytest.mark.parametrize("op_type", ["SegmentSum", "SegmentMax"])
def test_bad_sorted_ids_are_refused(tmp_path, op_type, ids, words):
    check_refused(tmp_path, _sorted_graph(op_type), {"x": np.ones((4, 2), np.float32), "s": np.int32(ids)}, "z",
                  words)


def test_a_huge_last_id_is_refused_before_allocating(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    check_refused(tmp_path, _sorted_graph("SegmentSum"),
                  {"x": np.ones((2, 2), np.float32), "s": np.int32([0, 2 ** 31 - 1])}, "z", "over the limit")


@pytest.mark.parametrize("ids, num, words", [
    ([0, 5, 2, 2], 3, "segment_ids[1] = 5 is out of range [0, 3)"),
    ([0, 1, 2, 2], -3, "Input num_segments == -3 must not be negative."),
    ([0, 1, 2, 2], 2 ** 62, "over the limit"),
])
@pytest.mark.parametrize("op_type", UNSORTED)
def test_bad_unsorted_ids_and_counts_are_refused(tmp_path, monkeypatch, op_type, ids, num, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    def make():
        x = tf.placeholder(tf.float32, None, name="x")
        s = tf.placeholder(tf.int32, None, name="s")
        n = tf.placeholder(tf.int64, None, name="n")
        return [tf.raw_op(op_type, x, s, n, name="z")]
    check_refused(tmp_path, make, {"x": np.ones((4, 2), np.float32), "s": np.int32(ids), "n": np.int64(num)}, "z",
                  words)


@pytest.mark.parametrize("indices, ids, num, words", [
    ([0, 5], [0, 1], None, "Bad: indices[1] == 5 out of range [0, 4)"),
    ([0, -1], [0, 1], None, "Bad: indices[1] == -1 out of range [0, 4)"),
    ([0, 1], [1, 0], None, "segment ids are not increasing"),
    ([0, 1, 2], [0, 1], None, "segment_ids and indices should have same size."),
    ([0, 1], [-1, 3], None, "Segment id -1 out of range [0, 4)"),
    ([0, 1, 3], [0, 0, 2], 2, "segment ids must be < num_segments"),
    ([0, 1, 3], [0, 2, 0], 5, "segment ids are not increasing"),
    ([0, 1], [0, 1], -4, "Input num_segments == -4 must not be negative."),
])
def test_bad_sparse_indices_and_ids_are_refused(tmp_path, indices, ids, num, words):
    def make():
        x = tf.placeholder(tf.float32, None, name="x")
        i = tf.placeholder(tf.int32, None, name="i")
        s = tf.placeholder(tf.int32, None, name="s")
        extra = [] if num is None else [tf.placeholder_with_default(np.int32(num), [])]
        op_type = "SparseSegmentMean" + ("" if num is None else "WithNumSegments")
        return [tf.raw_op(op_type, x, i, s, *extra, name="z")]
    check_refused(tmp_path, make, {"x": np.ones((4, 2), np.float32), "i": np.int32(indices), "s": np.int32(ids)},
                  "z", words)


def test_shapes_that_cannot_be_are_refused_when_building():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4, 2], name="x")
        with pytest.raises(ValueError, match="SegmentSum 'a': segment_ids .* should be the same size"):
            segments.segment_sum(x, [0, 1, 1], name="a")
        with pytest.raises(ValueError, match="SparseSegmentSum 'b': segment_ids and indices should have same size"):
            segments.sparse_segment_sum(x, [0, 1], [0, 1, 1], name="b")
        with pytest.raises(ValueError, match="'c': num_segments -1 must not be negative"):
            segments.sparse_segment_sum(x, [0, 1], [0, 1], name="c", num_segments=-1)
