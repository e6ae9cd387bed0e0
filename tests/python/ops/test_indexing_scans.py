"""The ops real TF/Keras graphs add beyond the basics (Round, Reciprocal, IsNan..., Selu, Cumsum, Cumprod,
TopKV2, GatherNd, ScatterNd, Where, ReverseV2, PadV2, MirrorPad) against TensorFlow itself: values at
the edges (NaN, inf, -0.0, halves, empty tensors, integer dtypes), gradients, and the errors for
hostile indices and sizes, which must name the node."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.framework.errors import InvalidArgumentError, ResourceExhaustedError
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture

EDGES = np.array([0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 0.0, 1e-30, -7.49999, np.inf, -np.inf, np.nan, 3e9],
                 np.float32)


def _fed(value, name="x"):
    return tf.placeholder(tf.as_dtype(value.dtype), value.shape, name=name)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_edges_match_tensorflow(tf_oracle, dtype):
    x = EDGES.astype(dtype)
    fns = [tf.round, tf.floor, tf.ceil, tf.reciprocal, tf.sin, tf.cos, tf.is_nan, tf.is_inf, tf.is_finite,
           tf.nn.selu, lambda t: tf.raw_op("Inv", t)]
    run_both(tf_oracle, lambda: (lambda t: [f(t) for f in fns])(_fed(x)), {"x": x})


# TF's CPU has no integer Reciprocal, and its int32/int64 Round kernel returns zeros (TF 2.21; tf.round
# itself never calls it for integers, whose documented result is x): both are checked against numpy
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_integer_round_passes_integers_through(dtype):
    x = np.array([1, -1, 2, -3, 100, np.iinfo(dtype).min, np.iinfo(dtype).max], dtype)
    with tf.Graph().as_default(), tf.Session() as sess:
        out = sess.run(tf.round(_fed(x)), {"x:0": x})
    assert out.dtype == x.dtype and np.array_equal(out, x)


def test_integer_reciprocal_of_zero_is_an_error_naming_the_node():
    with tf.Graph().as_default():
        r = tf.reciprocal(tf.constant([1, 0]), name="inverse")
        with tf.Session() as sess, pytest.raises(InvalidArgumentError, match="node 'inverse' .*reciprocal of 0"):
            sess.run(r)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_scans_match_tensorflow(tf_oracle, exclusive, reverse):
    x = np.array([[1.5, np.nan, -2.0, 4.0], [np.inf, 3.0, -0.0, 0.25], [-np.inf, np.inf, 2.0, -1.0]], np.float32)
    n = np.array([[2**31 - 1, 1, -5], [7, 0, 3]], np.int32)
    u = np.array([200, 100, 7], np.uint8)

    def make():
        out = []
        t, tn = _fed(x), _fed(n, "n")
        for axis in (0, 1, -1):
            out.append(tf.cumsum(t, axis, exclusive=exclusive, reverse=reverse))
            out.append(tf.math.cumprod(t, axis, exclusive=exclusive, reverse=reverse))
        out.append(tf.cumsum(tn, 1, exclusive=exclusive, reverse=reverse))
        out.append(tf.math.cumprod(tn, 0, exclusive=exclusive, reverse=reverse))
        out.append(tf.math.cumprod(_fed(u, "u"), 0, exclusive=exclusive, reverse=reverse))
        out.append(tf.cumsum(_fed(np.zeros((0, 3), np.float64), "e"), 0, exclusive=exclusive, reverse=reverse))
        return out
    run_both(tf_oracle, make, {"x": x, "n": n, "u": u, "e": np.zeros((0, 3))})


@pytest.mark.tf_oracle
def test_top_k_ties_and_dtypes_match_tensorflow(tf_oracle):
    x = np.array([[3.0, 1.0, 3.0, -0.0, 0.0, 3.0], [-np.inf, 2.0, np.inf, 2.0, -1.0, 2.0]], np.float32)
    n = np.array([[5, 5, -7, 5, 0, 2**31 - 1]], np.int32)
    u = np.array([[9, 200, 9, 0]], np.uint8)

    def make():
        out = []
        t = _fed(x)
        for k in (0, 1, 3, 6):
            out.extend(tf.nn.top_k(t, k))
        out.extend(tf.nn.top_k(_fed(n, "n"), 4, index_type=tf.int64))
        out.extend(tf.nn.top_k(_fed(u, "u"), 3, sorted=True))
        out.extend(tf.nn.top_k(_fed(np.zeros((0, 4), np.float32), "e"), 2))
        return out
    run_both(tf_oracle, make, {"x": x, "n": n, "u": u, "e": np.zeros((0, 4), np.float32)})


@pytest.mark.tf_oracle
def test_gather_scatter_where_match_tensorflow(tf_oracle):
    p = np.arange(24).reshape(2, 3, 4).astype(np.int64) - 9
    b = np.array([[True, False], [False, True]])
    f = np.array([[0.0, -0.0, np.nan], [np.inf, 1.0, 0.0]], np.float32)

    def make():
        tp, tb = _fed(p, "p"), _fed(b, "b")
        out = [tf.gather_nd(tp, [[1, 2, 3], [0, 1, 0]]),
               tf.gather_nd(tp, tf.constant([[[1], [0]]], tf.int64)),
               tf.gather_nd(tb, [[1, 1], [0, 1]]),
               tf.gather_nd(tp, np.zeros((0, 2), np.int32)),
               tf.scatter_nd([[1, 0], [1, 0], [0, 2]], np.array([1.5, 2.25, -3.0], np.float32), [2, 3]),
               tf.scatter_nd(tf.constant([[3], [0]], tf.int64), tf.constant([[1, 2], [3, 4]], tf.int64),
                             tf.constant([5, 2], tf.int64)),
               tf.scatter_nd(np.zeros((0, 1), np.int32), np.zeros((0, 2), np.float32), [3, 2]),
               tf.where(tb), tf.where(_fed(f, "f")), tf.where(tp),
               tf.where(_fed(np.zeros((2, 0, 3), bool), "e"))]
        return out
    run_both(tf_oracle, make, {"p": p, "b": b, "f": f, "e": np.zeros((2, 0, 3), bool)})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_reverse_and_padding_match_tensorflow(tf_oracle, dtype):
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)

    def make():
        t = _fed(x)
        return [tf.reverse(t, [0]), tf.reverse(t, [-1, 0]), tf.reverse(t, np.zeros(0, np.int32)),
                tf.pad(t, [[2, 2], [3, 3]], "REFLECT"), tf.pad(t, [[3, 0], [4, 4]], "SYMMETRIC"),
                tf.pad(t, tf.constant([[0, 0], [1, 2]], tf.int64), "reflect"),
                tf.pad(t, [[1, 2], [0, 1]], constant_values=True if dtype == np.bool_ else 3)]
    run_both(tf_oracle, make, {"x": x})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ["cumsum", "cumprod", "top_k", "mirror_reflect", "mirror_symmetric", "pad_v2",
                                  "reverse", "gather_nd", "scatter_nd", "selu", "reciprocal", "sin_cos"])
def test_gradients_match_tensorflow(tf_oracle, case):
    rng = np.random.default_rng(7)
    x = rng.uniform(0.5, 2.0, (3, 4)) * np.array([1, -1, 1, -1])
    build = {
        "cumsum": lambda t: tf.cumsum(t, 1, exclusive=True, reverse=True),
        "cumprod": lambda t: tf.math.cumprod(t, 0, reverse=True) + tf.math.cumprod(t, 1, exclusive=True),
        "top_k": lambda t: tf.nn.top_k(t, 2)[0],
        "mirror_reflect": lambda t: tf.pad(t, [[2, 1], [3, 2]], "REFLECT"),
        "mirror_symmetric": lambda t: tf.pad(t, [[3, 0], [1, 4]], "SYMMETRIC"),
        "pad_v2": lambda t: tf.pad(t, [[1, 0], [2, 1]], constant_values=-1.0),
        "reverse": lambda t: tf.reverse(t, [0, 1]),
        "gather_nd": lambda t: tf.gather_nd(t, [[2, 1], [0, 3], [2, 1]]),
        "scatter_nd": lambda t: tf.scatter_nd([[1], [3], [1]], t, [5, 4]),
        "selu": tf.nn.selu,
        "reciprocal": tf.reciprocal,
        "sin_cos": lambda t: tf.sin(t) * tf.cos(t),
    }[case]

    def make():
        t = tf.placeholder(tf.float64, [3, 4], name="x")
        y = build(t)
        weights = tf.constant(rng.normal(size=y.shape.as_list()))
        return tf.reduce_sum(y * y * weights), [t]
    assert gradients_both(tf_oracle, make, {"x": x}) == []


def _run_error(build, feeds):
    with tf.Graph().as_default() as g:
        fetch = build()
        with tf.Session(graph=g) as sess:
            return sess.run(fetch, {f"{k}:0": v for k, v in feeds.items()})


@pytest.mark.parametrize("build, feeds, message", [
    (lambda: tf.gather_nd(tf.placeholder(tf.float32, None, name="p"), tf.placeholder(tf.int32, None, name="i"),
                          name="gnd"),
     {"p": np.ones((2, 3)), "i": [[0, 1], [1, 3]]}, r"node 'gnd' \(GatherNd\).*\[1, 3\] does not index into"),
    (lambda: tf.gather_nd(tf.placeholder(tf.float32, None, name="p"), tf.placeholder(tf.int32, None, name="i"),
                          name="gnd"),
     {"p": np.ones((2, 3)), "i": [[-1]]}, r"node 'gnd' .*\[-1\] does not index"),
    (lambda: tf.gather_nd(tf.placeholder(tf.float32, None, name="p"), tf.placeholder(tf.int32, None, name="i"),
                          name="gnd"),
     {"p": np.ones((2, 3)), "i": [[0, 0, 0]]}, r"node 'gnd' .*index depth 3 .* past the rank 2"),
    (lambda: tf.scatter_nd(tf.placeholder(tf.int32, None, name="i"), tf.placeholder(tf.float32, None, name="u"),
                           tf.placeholder(tf.int32, [2], name="s"), name="snd"),
     {"i": [[4]], "u": [[1.0, 2.0]], "s": [3, 2]}, r"node 'snd' \(ScatterNd\).*\[4\] does not index into"),
    (lambda: tf.scatter_nd(tf.placeholder(tf.int32, None, name="i"), tf.placeholder(tf.float32, None, name="u"),
                           tf.placeholder(tf.int32, [2], name="s"), name="snd"),
     {"i": [[0]], "u": [[1.0]], "s": [3, 2]}, r"node 'snd' .*updates \[1,1\] must have shape"),
    (lambda: tf.nn.top_k(tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int32, [], name="k"),
                         name="topk")[0],
     {"x": np.ones((2, 3)), "k": 4}, r"node 'topk' \(TopKV2\): k 4 must be in \[0, 3\]"),
    (lambda: tf.nn.top_k(tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int32, [], name="k"),
                         name="topk")[0],
     {"x": np.ones((2, 3)), "k": -1}, r"node 'topk' .*k -1 must be in"),
    (lambda: tf.pad(tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int32, None, name="p"),
                    "REFLECT", name="mirror"),
     {"x": np.ones((2, 3)), "p": [[2, 0], [0, 0]]}, r"node 'mirror' \(MirrorPad\).*at most 1 in REFLECT mode"),
    (lambda: tf.reverse(tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int32, None, name="a"),
                        name="rev"),
     {"x": np.ones((2, 3)), "a": [1, -1]}, r"node 'rev' \(ReverseV2\).*listed twice"),
    (lambda: tf.where(tf.placeholder(tf.bool, None, name="x"), name="coords"),
     {"x": np.array(True)}, r"node 'coords' \(Where\).*at least one dim, got a scalar"),
])
def test_hostile_indices_and_sizes_are_errors_naming_the_node(build, feeds, message):
    with pytest.raises(InvalidArgumentError, match=message):
        _run_error(build, feeds)


def test_huge_outputs_are_refused_before_allocating():
    huge = [
        (lambda: tf.scatter_nd([[0]], tf.placeholder(tf.float32, None, name="u"),
                               tf.placeholder(tf.int64, [2], name="s"), name="big"),
         {"u": np.ones((1, 1), np.float32), "s": [2**40, 1]}),
        (lambda: tf.gather_nd(tf.placeholder(tf.float32, None, name="p"), tf.placeholder(tf.int32, None, name="i"),
                              name="big"),
         {"p": np.ones((1, 2**20), np.float32), "i": np.zeros((2**22, 1), np.int32)}),
        (lambda: tf.pad(tf.placeholder(tf.float32, None, name="x"), tf.placeholder(tf.int64, None, name="p"),
                        constant_values=1.0, name="big"),
         {"x": np.ones((2, 2), np.float32), "p": [[2**40, 0], [0, 2**30]]}),
    ]
    for build, feeds in huge:
        with pytest.raises(ResourceExhaustedError, match=r"node 'big' .*would take .* over the limit"):
            _run_error(build, feeds)


def test_static_checks_refuse_bad_k_and_paddings_when_building():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(ValueError, match="k 4 must be in"):
            tf.nn.top_k(x, 4)
        with pytest.raises(ValueError, match="at most 3 in SYMMETRIC mode"):
            tf.pad(x, [[0, 0], [4, 0]], "SYMMETRIC")
        with pytest.raises(ValueError, match="index depth 3"):
            tf.gather_nd(x, [[0, 0, 0]])
