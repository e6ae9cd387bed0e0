"""Unique*, Bincount, DenseBincount, DynamicPartition, DynamicStitch (graphdef/ops/unique_partition.py),
DivNoNan and InTopKV2 (div_in_top_k.py) against TensorFlow, with their gradients and bad indices."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import div_in_top_k, unique_partition as up
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow
from tests.python.ops34.runtimes import (check_both_refuse, check_cc_agrees, check_cc_refuses,
                                        check_graphrun_agrees, check_refused)
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture

OPS = ["Unique", "UniqueV2", "UniqueWithCounts", "Bincount", "DenseBincount", "DynamicPartition", "DynamicStitch",
       "ParallelDynamicStitch", "DivNoNan", "InTopKV2"]
RNG = np.random.default_rng(7)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("values", [
    np.array([3, 1, -0.0, 0.0, np.nan, 3, np.nan, -np.inf], np.float32),  # NaNs stay apart, -0.0 == 0.0
    RNG.integers(-3, 4, size=40).astype(np.int64),
    np.array([], np.int32),
    np.array([True, False, True]),
], ids=["float-specials", "int64", "empty", "bool"])
def test_unique_matches_tensorflow(tf_oracle, values):
    def make():
        x = tf.placeholder(tf.as_dtype(values.dtype), [None], name="x")
        return [*up.unique(x), *up.unique_with_counts(x, out_idx=tf.int64)]
    run_both(tf_oracle, make, {"x": values})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("axis", [[0], [1], [-1], [2], []])
def test_unique_v2_along_an_axis_matches_tensorflow(tf_oracle, axis):
    values = RNG.integers(0, 2, size=(4, 3, 2)).astype(np.int32)
    if axis == []:
        values = values.reshape(-1)

    def make():
        x = tf.placeholder(tf.int32, values.shape, name="x")
        return list(tf.raw_op("UniqueV2", x, np.array(axis, np.int64)))
    run_both(tf_oracle, make, {"x": values})


@pytest.mark.tf_oracle
def test_unique_v2_of_float_rows_matches_tensorflow(tf_oracle):
    """Rows equal but for -0.0 are one; rows holding a NaN are each their own; along axis 0 and 1."""
    x = np.array([[1, -0.0], [2, 3], [1, 0.0], [np.nan, 1], [2, 3], [np.nan, 1], [0, 0]], np.float32)

    def make():
        t = tf.placeholder(tf.float32, [7, 2], name="x")
        return [*tf.raw_op("UniqueV2", t, np.int64([0])), *tf.raw_op("UniqueV2", tf.transpose(t), np.int64([1]))]
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_bincounts_match_tensorflow(tf_oracle, dtype):
    arr = RNG.integers(0, 9, size=(3, 7)).astype(np.int32)
    weights = RNG.integers(-4, 5, size=(3, 7)).astype(dtype)
    empty = np.zeros(0, dtype)

    def make():
        a = tf.placeholder(tf.int32, [3, 7], name="a")
        w = tf.placeholder(tf.as_dtype(dtype), [3, 7], name="w")
        flat_a, flat_w = tf.reshape(a, [-1]), tf.reshape(w, [-1])
        return [tf.raw_op("Bincount", flat_a, np.int32(6), empty), tf.raw_op("Bincount", flat_a, np.int32(12), flat_w),
                tf.raw_op("DenseBincount", a, np.int32(6), empty), tf.raw_op("DenseBincount", a, np.int32(6), w),
                tf.raw_op("DenseBincount", a, np.int32(5), empty, binary_output=True),
                tf.raw_op("DenseBincount", flat_a, np.int32(10), flat_w),
                up.bincount(flat_a, minlength=3, dtype=tf.as_dtype(dtype)),
                up.bincount(flat_a, weights=flat_w, maxlength=4)]
    run_both(tf_oracle, make, {"a": arr, "w": weights})


@pytest.mark.tf_oracle
def test_partition_and_stitch_match_tensorflow(tf_oracle):
    """A 2-d partitions tensor over rows of 3; stitched back, and DynamicStitch with a repeated index (the
    later input wins on TF's CPU) and a gap (0)."""
    data = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    parts = np.array([[2, 0, 2, 1], [0, 0, 2, 2]], np.int32)

    def make():
        x = tf.placeholder(tf.float32, [2, 4, 3], name="x")
        p = tf.placeholder(tf.int32, [2, 4], name="p")
        pieces = up.dynamic_partition(x, p, 4)
        positions = up.dynamic_partition(tf.reshape(tf.range(8), [2, 4]), p, 4)
        again = up.dynamic_stitch(positions, pieces)
        parallel = up.parallel_dynamic_stitch(positions, pieces)
        repeated = up.dynamic_stitch([[0, 5], [[5, 1]]], [x[0, :2], x[1:, :2]])
        return pieces + [again, parallel, repeated]
    run_both(tf_oracle, make, {"x": data, "p": parts})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_div_no_nan_matches_tensorflow(tf_oracle, dtype):
    x = np.array([1, 0, np.nan, np.inf, -3, 2.5, -0.0], dtype)
    y = np.array([0, 0, 0, 2, -0.0, 7, 4], dtype)

    def make():
        a = tf.placeholder(tf.as_dtype(dtype), [7], name="a")
        b = tf.placeholder(tf.as_dtype(dtype), [7], name="b")
        return [div_in_top_k.div_no_nan(a, b), div_in_top_k.div_no_nan(tf.reshape(a, [7, 1]), b)]
    run_both(tf_oracle, make, {"a": x, "b": y})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("k", [0, 1, 2, 4, 9, -1])
def test_in_top_k_matches_tensorflow(tf_oracle, k):
    scores = np.array([[1, 2, 2, 0], [0, 1, 2, 3], [np.nan, 1, 2, 3], [0, 1, np.inf, 3], [5, 5, 5, 5],
                       [1, 2, 3, 4]], np.float32)
    targets = np.array([1, 3, 3, 0, 2, 4], np.int64)  # the last one is out of range: false

    def make():
        p = tf.placeholder(tf.float32, [None, 4], name="p")
        t = tf.placeholder(tf.int64, [None], name="t")
        return [div_in_top_k.in_top_k(p, t, k)]
    run_both(tf_oracle, make, {"p": scores, "t": targets})


@pytest.mark.tf_oracle
def test_string_tensors_match_tensorflow(tf_oracle):
    """Vocabulary handling on strings: Unique and UniqueWithCounts (empty and non-UTF-8 values too),
    DynamicPartition, DynamicStitch leaving a gap (TF's empty string there), SparseToDense, ReverseSequence."""
    words = np.array([b"a", b"b", b"a", b"", b"\xff\x00", b"b", b""], object)

    def make():
        s = tf.placeholder(tf.string, [None], name="s")
        parts = up.dynamic_partition(s, [0, 1, 0, 1, 1, 0, 0], 2)
        return [*up.unique(s), *up.unique_with_counts(s, out_idx=tf.int64), *parts,
                up.dynamic_stitch([[0, 4, 5, 6], [1, 3, 8]], parts),
                tf.sparse_to_dense([[0], [2]], [4], tf.constant([b"x", b"y"]), default_value=b"-"),
                tf.reverse_sequence(tf.reshape(s[:6], [2, 3]), [3, 2], seq_axis=1)]
    run_both(tf_oracle, make, {"s": words})


# -- gradients against TF's -------------------------------------------------------------------------

@pytest.mark.tf_oracle
def test_partition_and_stitch_gradients_match_tensorflow(tf_oracle):
    data = RNG.normal(size=(6, 2))

    def make():
        x = tf.placeholder(tf.float64, [6, 2], name="x")
        pieces = up.dynamic_partition(x, [1, 0, 1, 2, 0, 1], 4)  # partition 3 gets nothing
        mixed = up.dynamic_stitch([[2, 0], [1, 3, 4]], [pieces[0] * 2.0, pieces[1] * pieces[1]])
        # a repeated index: TF's gradient reaches the overwritten row too (a gather), and so does ours
        repeated = up.dynamic_stitch([[1, 0], [1]], [pieces[0], pieces[2][:1]])
        return (tf.reduce_sum(mixed * tf.constant(RNG.normal(size=(5, 2)))) + tf.reduce_sum(pieces[2])
                + tf.reduce_sum(repeated * tf.constant(RNG.normal(size=(2, 2))))), [x]
    gradients_both(tf_oracle, make, {"x": data})


@pytest.mark.tf_oracle
def test_div_no_nan_gradient_matches_tensorflow(tf_oracle):
    xv = RNG.normal(size=(3, 4))
    yv = RNG.normal(size=(4,))
    yv[1] = 0.0  # its column's gradients are 0

    def make():
        x = tf.placeholder(tf.float64, [3, 4], name="x")
        y = tf.placeholder(tf.float64, [4], name="y")
        z = div_in_top_k.div_no_nan(x, y)
        return tf.reduce_sum(z * tf.constant(RNG.normal(size=(3, 4)))), [x, y]
    gradients_both(tf_oracle, make, {"x": xv, "y": yv})


# -- graphrun's answers are the Session's; graphrun-cc names what it lacks -------------------------

def _all_ops():
    x = tf.placeholder(tf.float32, [6], name="x")
    i = tf.placeholder(tf.int32, [6], name="i")
    pieces = up.dynamic_partition(x, i, 3)
    positions = up.dynamic_partition(tf.range(6), i, 3)
    return [*up.unique(x), *up.unique_with_counts(i), *tf.raw_op("UniqueV2", i, np.int64([0])),
            tf.raw_op("Bincount", i, np.int32(4), np.zeros(0, np.float32)),
            tf.raw_op("DenseBincount", i, np.int32(4), x, binary_output=False),
            *pieces, up.dynamic_stitch(positions, pieces), up.parallel_dynamic_stitch(positions, pieces),
            div_in_top_k.div_no_nan(x, x - 1.0), div_in_top_k.in_top_k(tf.reshape(x, [2, 3]), [0, 2], 2)]


FEEDS = {"x": np.array([1, 0, 2, 1, np.nan, -1], np.float32), "i": np.array([2, 0, 0, 1, 2, 2], np.int32)}


def test_graphrun_gives_the_sessions_answers(tmp_path):
    check_graphrun_agrees(tmp_path, _all_ops, FEEDS)


@pytest.mark.parametrize("op_type, build", [
    ("DynamicStitch", lambda x: up.dynamic_stitch([[0, 1, 2], [3, 4, 5]], [x[:3], x[3:]], name="z")),
])
def test_graphrun_cc_names_the_op_it_lacks(tmp_path, cc_runner, op_type, build):
    def make():
        return [build(tf.placeholder(tf.float32, [6], name="x"))]
    line = check_cc_refuses(tmp_path, cc_runner, make, {"x": FEEDS["x"]}, op_type, "z")
    assert line.endswith(f"no kernel for {op_type} (z)"), line


def _grouping_ops():
    out = []
    for dtype in (tf.float32, tf.int64, tf.bool):
        v = tf.placeholder(dtype, [8], name=f"v_{dtype.name}")
        m = tf.placeholder(dtype, [4, 3], name=f"m_{dtype.name}")
        out += [*up.unique(v), *up.unique_with_counts(v, out_idx=tf.int64),
                *tf.raw_op("UniqueV2", m, np.int64([0])), *tf.raw_op("UniqueV2", m, np.int32([-1])),
                *tf.raw_op("UniqueV2", v, np.int64([]))]
        p = tf.placeholder(tf.int32, [4], name=f"p_{dtype.name}")
        out += [*up.dynamic_partition(m, p, 3), *up.dynamic_partition(v, tf.reshape(tf.concat([p, p], 0), [8]), 4)]
    i = tf.placeholder(tf.int32, [6], name="i")
    i2 = tf.placeholder(tf.int64, [2, 3], name="i2")
    w = tf.placeholder(tf.float32, [6], name="w")
    out += [tf.raw_op("Bincount", i, np.int32(4), np.zeros(0, np.float32)),
            tf.raw_op("Bincount", i, np.int32(3), w), tf.raw_op("Bincount", i, np.int32(5), tf.cast(w, tf.int64)),
            tf.raw_op("DenseBincount", i2, np.int64(4), np.zeros(0, np.float64), binary_output=False),
            tf.raw_op("DenseBincount", i2, np.int64(4), tf.reshape(w, [2, 3]), binary_output=False),
            tf.raw_op("DenseBincount", i2, np.int64(3), np.zeros(0, np.int32), binary_output=True)]
    return out


def _grouping_feeds():
    floats = np.array([1.5, np.nan, -0.0, 1.5, 0.0, np.nan, 7, -0.0])
    rows = np.array([[1, 0, 2], [np.nan, 1, 1], [1, -0.0, 2], [np.nan, 1, 1]])
    feeds = {"i": np.int32([3, 1, 3, 0, 9, 1]), "i2": np.int64([[3, 1, 3], [0, 9, 1]]),
             "w": np.float32([0.1, 0.2, 0.3, 0.4, 0.5, 1e-8])}
    for name, cast in (("float32", np.float32), ("int64", np.int64), ("bool", bool)):
        exact = cast is np.float32  # the other dtypes take the NaNs as a value of their own
        feeds[f"v_{name}"] = (floats if exact else np.nan_to_num(floats, nan=3)).astype(cast)
        feeds[f"m_{name}"] = (rows if exact else np.nan_to_num(rows, nan=5)).astype(cast)
        feeds[f"p_{name}"] = np.int32([2, 0, 2, 2])
    return feeds


def test_graphrun_cc_gives_the_sessions_grouping_and_counting(tmp_path, cc_runner):
    # every NaN its own value, -0.0 equal to 0.0 (the first kept), empty partitions, counts past size ignored
    check_cc_agrees(tmp_path, cc_runner, _grouping_ops, _grouping_feeds())


@pytest.mark.parametrize("op_type, inputs, words", [
    ("DynamicPartition", [np.ones((2, 2), np.float32), np.int32([[0, 1], [3, 0]])],
     "partitions[1,0] = 3 is not in [0, 2)"),
    ("DynamicPartition", [np.ones((3,), np.float32), np.int32([0, 1])],
     "data.shape must start with partitions.shape, got data.shape = [3], partitions.shape = [2]"),
    ("Unique", [np.ones((2, 2), np.float32)], "unique expects a 1D vector."),
    ("Bincount", [np.int32([1, -2]), np.int32(3), np.zeros(0, np.float32)], "Input arr must be non-negative!"),
    ("DenseBincount", [np.int32([[1, -2]]), np.int32(3), np.zeros(0, np.float32)],
     "Input 'in' must be non-negative! Negative input value found: -2"),
])
def test_bad_grouping_inputs_read_the_same_in_both(tmp_path, cc_runner, op_type, inputs, words):
    attrs = {"num_partitions": 2} if op_type == "DynamicPartition" else \
        {"binary_output": False} if op_type == "DenseBincount" else {}

    def make():
        ins = [tf.placeholder(tf.as_dtype(v.dtype), None, name=f"in{k}") for k, v in enumerate(inputs)]
        out = tf.raw_op(op_type, *ins, name="z", **attrs)
        return list(out) if isinstance(out, (list, tuple)) else [out]
    line = check_both_refuse(tmp_path, cc_runner, make, {f"in{k}": v for k, v in enumerate(inputs)}, "z")
    assert words in line, line


def _div_in_top_k():
    x = tf.placeholder(tf.float32, [6], name="x")
    p = tf.placeholder(tf.float32, [4, 3], name="p")
    t64 = tf.placeholder(tf.int64, [4], name="t64")
    d = tf.placeholder(tf.float64, [6], name="d")
    return [div_in_top_k.div_no_nan(x, x - 1.0), div_in_top_k.div_no_nan(tf.reshape(x, [6, 1]), x),
            div_in_top_k.div_no_nan(d, d * 0.0), div_in_top_k.div_no_nan(d, d),
            *[div_in_top_k.in_top_k(p, [0, 2, 1, 5], k) for k in (0, 1, 2, 3, -1)],
            div_in_top_k.in_top_k(p, t64, 1)]


def test_graphrun_cc_gives_the_sessions_div_no_nan_and_in_top_k(tmp_path, cc_runner):
    # rows: a tie for the top, a NaN score, an infinity, a target out of range
    p = np.array([[1, 3, 3], [2, np.nan, 0], [np.inf, 1, 2], [0, 1, 2]], np.float32)
    d = np.array([0.0, -0.0, np.inf, np.nan, 3, -7], np.float64)
    check_cc_agrees(tmp_path, cc_runner, _div_in_top_k,
                    {"x": FEEDS["x"], "p": p, "t64": np.array([2, 0, 0, -1], np.int64), "d": d})


def test_in_top_k_bad_targets_read_the_same_in_both(tmp_path, cc_runner):
    def make():
        p = tf.placeholder(tf.float32, None, name="p")
        return [div_in_top_k.in_top_k(p, tf.placeholder(tf.int32, None, name="t"), 1, name="z")]
    line = check_both_refuse(tmp_path, cc_runner, make, {"p": np.ones((2, 3), np.float32), "t": np.int32([0])}, "z")
    assert "First dimension of predictions 2 must match length of targets 1" in line, line


# -- hostile values --------------------------------------------------------------------------------

def _graph(op_type, n_inputs, dtypes_, **attrs):
    def make():
        ins = [tf.placeholder(d, None, name=f"in{k}") for k, d in zip(range(n_inputs), dtypes_)]
        out = tf.raw_op(op_type, *ins, name="z", **attrs)
        return list(out) if isinstance(out, (list, tuple)) else [out]
    return make


@pytest.mark.parametrize("arr, size, words", [
    ([1, -1, 5], 3, "Input arr must be non-negative!"),
    ([1, 1, 2], -3, "size (-3) must be non-negative"),
    ([1, 1, 2], 2 ** 31 - 1, "over the limit"),
])
def test_bad_bincounts_are_refused(tmp_path, monkeypatch, arr, size, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    check_refused(tmp_path, _graph("Bincount", 3, [tf.int32, tf.int32, tf.float32]),
                  {"in0": np.int32(arr), "in1": np.int32(size), "in2": np.zeros(0, np.float32)}, "z", words)


def test_bad_dense_bincount_is_refused(tmp_path):
    check_refused(tmp_path, _graph("DenseBincount", 3, [tf.int64, tf.int64, tf.float32]),
                  {"in0": np.int64([[1, 2], [0, -7]]), "in1": np.int64(4), "in2": np.zeros(0, np.float32)}, "z",
                  "Input 'in' must be non-negative! Negative input value found: -7")


@pytest.mark.parametrize("parts, words", [
    ([0, 5, 1], "partitions[1] = 5 is not in [0, 2)"),
    ([0, -1, 1], "partitions[1] = -1 is not in [0, 2)"),
    ([0, 1], "data.shape must start with partitions.shape, got data.shape = [3], partitions.shape = [2]"),
])
def test_bad_partitions_are_refused(tmp_path, parts, words):
    check_refused(tmp_path, _graph("DynamicPartition", 2, [tf.float32, tf.int32], num_partitions=2),
                  {"in0": np.float32([1, 2, 3]), "in1": np.int32(parts)}, "z", words)


@pytest.mark.parametrize("op_type", ["DynamicStitch", "ParallelDynamicStitch"])
@pytest.mark.parametrize("second, words", [
    ([1, -1], "indices[1] is out of range"),
    ([1, 2 ** 31 - 1], "over the limit"),
    ([1], "data[1].shape = [2] does not start with indices[1].shape = [1]"),
])
def test_bad_stitch_indices_are_refused(tmp_path, monkeypatch, op_type, second, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))

    def make():
        i0, i1 = tf.placeholder(tf.int32, None, name="i0"), tf.placeholder(tf.int32, None, name="i1")
        d0, d1 = tf.placeholder(tf.float32, None, name="d0"), tf.placeholder(tf.float32, None, name="d1")
        return [tf.raw_op(op_type, [i0, i1], [d0, d1], name="z")]
    check_refused(tmp_path, make, {"i0": np.int32([0, 2]), "i1": np.int32(second), "d0": np.float32([1, 2]),
                                   "d1": np.float32([3, 4])}, "z", words)


@pytest.mark.parametrize("x, axis, words", [
    ([[3, 1], [3, 3]], [], "unique expects a 1D vector."),
    ([[3, 1], [3, 3]], [2], "axis has to be between [-2, 2), got 2"),
    ([[3, 1], [3, 3]], [0, 1], "axis does not support input tensors larger than 1 elements"),
])
def test_bad_unique_axes_are_refused(tmp_path, x, axis, words):
    check_refused(tmp_path, _graph("UniqueV2", 2, [tf.int32, tf.int64]),
                  {"in0": np.int32(x), "in1": np.int64(axis).reshape(-1)}, "z", words)


def test_in_top_k_with_lying_shapes_is_refused(tmp_path):
    check_refused(tmp_path, _graph("InTopKV2", 3, [tf.float32, tf.int32, tf.int32]),
                  {"in0": np.ones((2, 4), np.float32), "in1": np.int32([1]), "in2": np.int32(1)}, "z",
                  "First dimension of predictions 2 must match length of targets 1")


@pytest.mark.tf_oracle
def test_unique_v2_of_slices_with_no_elements_matches_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.int32, [5, 0], name="x")
        f = tf.placeholder(tf.float32, [4, 0, 2], name="f")
        return [*tf.raw_op("UniqueV2", x, np.int64([0])), *tf.raw_op("UniqueV2", f, np.int64([2]))]
    run_both(tf_oracle, make, {"x": np.zeros((5, 0), np.int32), "f": np.zeros((4, 0, 2), np.float32)})


def test_many_empty_rows_are_not_a_python_loop():
    """10^6 slices of no elements: one answer at once, not a step per slice."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    y, idx = up.UNIQUE_V2.kernel(np.zeros((10 ** 6, 0), np.float32), np.int64([0]), out_idx=tf.int32)
    assert y.shape == (1, 0) and not idx.any() and idx.shape == (10 ** 6,)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 1.0


def test_many_partitions_are_not_a_mask_each():
    """num_partitions may be 2^20 (graphdef's cap on listed outputs) with 10^5 rows: one sort and a cut,
    not 2^20 masks over every row."""
    import resource
    rng = np.random.default_rng(3)
    data, parts = rng.normal(size=(10 ** 5, 2)).astype(np.float32), rng.integers(0, 1 << 20, 10 ** 5).astype(np.int32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    pieces = up.DYNAMIC_PARTITION.kernel(data, parts, num_partitions=1 << 20)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 5.0
    assert len(pieces) == 1 << 20 and sum(len(p) for p in pieces) == 10 ** 5
    k = int(parts[7])
    np.testing.assert_array_equal(pieces[k], data[parts == k])  # each keeps its rows in order
