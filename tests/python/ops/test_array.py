"""Rearranging, slicing and indexing ops against TensorFlow: StridedSlice's masks over random slice
specs, Tensor.__getitem__'s encoding of them, the manipulation ops' values and gradients, and
the build-time errors naming the shapes involved."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops.strided_slice import MASKS
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - tf_oracle is a fixture

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 60


def _random_spec(rng, rank):
    """A numpy-style index: ints, slices (bounds beyond the dims included), at most one ..., and None."""
    spec, ellipsis = [], False
    for _ in range(rng.integers(0, rank + 2)):
        kind = rng.choice(["int", "slice", "slice", "ellipsis", "none"])
        if kind == "int":
            spec.append(int(rng.integers(-2, 2)))
        elif kind == "slice":
            bound = lambda: None if rng.random() < 0.3 else int(rng.integers(-7, 7))  # noqa: E731
            spec.append(slice(bound(), bound(), [None, 1, 2, 3, -1, -2][rng.integers(6)]))
        elif kind == "ellipsis" and not ellipsis:
            spec.append(Ellipsis)
            ellipsis = True
        else:
            spec.append(None)
    return tuple(spec)


def _fits(spec, rank):
    """Whether numpy accepts the spec on X: not more indexed dims than it has."""
    return sum(1 for s in spec if s is not None and s is not Ellipsis) <= rank


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_getitem_matches_numpy_and_tensorflow(tf_oracle):
    rng = np.random.default_rng(0)
    specs = [s for s in (_random_spec(rng, 4) for _ in range(300)) if _fits(s, 4)]

    def make():
        x = tf.placeholder(tf.float32, [None, 3, 4, None], name="x")
        return [x[s] for s in specs]
    ours = run_both(tf_oracle, make, {"x": X})
    for spec, value in zip(specs, ours):
        np.testing.assert_array_equal(value, X[spec], err_msg=repr(spec))


@pytest.mark.tf_oracle
def test_getitem_encodes_masks_as_tensorflow_does(tf_oracle):
    rng = np.random.default_rng(1)
    specs = [s for s in (_random_spec(rng, 4) for _ in range(100)) if _fits(s, 4)] + [
        (slice(None), slice(1, 3), Ellipsis, 0)]
    tf_graph = tf_oracle.Graph()
    with tf_graph.as_default():
        tx = tf_oracle.compat.v1.placeholder(tf_oracle.float32, X.shape)
        theirs = [tx[s].op for s in specs]
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, X.shape)
        ours = [x[s].op for s in specs]
    for spec, a, b in zip(specs, ours, theirs):
        assert a.type == b.type == "StridedSlice" and a.name == b.name, spec
        assert {m: a.attrs[m] for m in MASKS} == {m: b.get_attr(m) for m in MASKS}, spec
        for i in (1, 2, 3):  # the packed begin, end and strides
            assert a.inputs[i].op.attrs["value"].tolist() == tf_oracle.get_static_value(b.inputs[i]).tolist(), spec
    assert {m: ours[-1].attrs[m] for m in MASKS} == {
        "begin_mask": 1, "end_mask": 1, "ellipsis_mask": 4, "new_axis_mask": 0, "shrink_axis_mask": 8}


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_raw_strided_slice_with_random_masks_matches_tensorflow(tf_oracle):
    """Every mask bit combination TF's kernel accepts gives its values; what it refuses, graphdef refuses."""
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        args = [rng.integers(-6, 6, n).tolist(), rng.integers(-6, 6, n).tolist(),
                rng.choice([1, 2, -1, -2, 3], n).tolist()]
        masks = {m: int(rng.integers(0, 1 << n)) for m in MASKS}
        masks["ellipsis_mask"] &= 1 << int(rng.integers(0, n + 3))  # rarely more than one ellipsis
        try:
            theirs = tf_oracle.raw_ops.StridedSlice(input=X, begin=args[0], end=args[1], strides=args[2],
                                                    **masks).numpy()
        except Exception:  # noqa: BLE001 - TF's error types vary; only that it refuses matters
            theirs = None
        g = tf.Graph()
        with g.as_default():
            try:
                y = tf.strided_slice(tf.placeholder(tf.float32, X.shape, name="x"), *args, **masks)
            except ValueError:
                assert theirs is None, (args, masks, "graphdef refused at build time, TF did not")
                continue
        assert theirs is not None, (args, masks, "TF refused, graphdef built it")
        with tf.Session(graph=g) as sess:
            ours = sess.run(y, {"x:0": X})
        assert ours.shape == theirs.shape and y.shape.as_list() == list(theirs.shape), (args, masks)
        np.testing.assert_array_equal(ours, theirs, err_msg=repr((args, masks)))


@pytest.mark.tf_oracle
def test_tensor_indices_and_int64_bounds(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        i, j = tf.placeholder(tf.int32, [], name="i"), tf.constant(3, dtype=tf.int64)
        return [x[i], x[:, i:j], x[1, :, j], x[..., i::2], x[-1, 2 ** 40:]]
    ours = run_both(tf_oracle, make, {"x": X, "i": np.int32(1)})
    np.testing.assert_array_equal(ours[1], X[:, 1:3])


def test_getitem_refuses_what_tensorflow_refuses():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        with pytest.raises(TypeError, match="only integers, slices"):
            x[1.5]
        with pytest.raises(TypeError, match="only integers, slices"):
            x[True]
        with pytest.raises(ValueError, match=r"StridedSlice 'strided_slice.*': index 3 is out of bounds for dim 1 "
                                             r"of size 3 \(input shape \[2,3\]\)"):
            x[:, 3]
        with pytest.raises(ValueError, match="at most one ellipsis"):
            x[..., 0, ...]
        with pytest.raises(ValueError, match="more indices than the input's 2 dims"):
            x[0, 0, 0]
        with pytest.raises(ValueError, match="must be non-zero"):
            x[::0]


@pytest.mark.tf_oracle
def test_strided_slice_gradient_matches_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        parts = [x[1, ..., ::-2], x[:, None, 1:3, -1], x[::2, -1:-4:-1, 5:0:-2, 0], x[..., 1:2]]
        return tf.add_n([tf.reduce_sum(p * p * p) for p in parts]), [x]
    gradients_both(tf_oracle, make, {"x": X * 0.01})


# -- the manipulation ops ----------------------------------------------------------------------

def _manipulations(x):
    a, b = tf.split(x, 2, axis=0)
    return [tf.squeeze(a), tf.squeeze(b, [0]), tf.expand_dims(x, -1), tf.expand_dims(x, 0),
            tf.concat([a, b], 0), tf.concat([x, x[:, :1]], 1), tf.stack([x, x, x], axis=2), tf.stack([a, b], -1),
            *tf.split(x, [1, -1, 2], axis=-1), *tf.unstack(x, axis=1), tf.slice(x, [0, 1, 0, 2], [-1, 2, 3, 2]),
            tf.tile(x, [1, 2, 1, 3]), tf.pad(x, [[0, 1], [2, 0], [1, 1], [0, 0]]), tf.gather(x, [2, 0, 0], axis=1),
            tf.gather(x, [[1, 0], [0, 1]]), tf.gather(x, tf.constant([3, 1], dtype=tf.int64), axis=-1),
            tf.unsorted_segment_sum(x, [1, -1], 3), tf.unsorted_segment_sum(x, [[0, 2, 0], [1, 1, -1]], 4),
            tf.identity_n([x, x * 2])[1]]


@pytest.mark.tf_oracle
def test_manipulation_ops_match_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        return _manipulations(x) + [
            tf.gather(x, [[2, 0], [1, 1]], axis=2, batch_dims=1),
            tf.gather(x, [[[2, 0]] * 3, [[1, 1]] * 3], axis=3, batch_dims=2),
            tf.gather(x, [[2, 0, 1], [1, 1, 0]], axis=1, batch_dims=-1),
            *tf.identity_n([x, tf.constant([1, 2], dtype=tf.int64)])]
    run_both(tf_oracle, make, {"x": X})


@pytest.mark.tf_oracle
def test_manipulation_gradients_match_tensorflow(tf_oracle):
    rng = np.random.default_rng(3)

    def make():
        x = tf.placeholder(tf.float32, X.shape, name="x")
        outs = _manipulations(x)
        weights = [tf.constant(rng.normal(size=o.shape.as_list()).astype(np.float32)) for o in outs]
        return tf.add_n([tf.reduce_sum(o * w) for o, w in zip(outs, weights)]), [x]
    gradients_both(tf_oracle, make, {"x": X})


@pytest.mark.tf_oracle
def test_gradients_with_shapes_known_only_at_run_time(tf_oracle):
    """Slice, Pad, Tile and ConcatV2 fall back to shape ops when static shapes are unknown."""
    def make():
        x = tf.placeholder(tf.float32, [None, 3, None, 5], name="x")
        y = tf.placeholder(tf.float32, [None, 3, None, None], name="y")
        parts = [tf.slice(x, [0, 1, 0, 2], [-1, 2, 3, 2]), tf.tile(x, [1, 2, 1, 3]),
                 tf.pad(x, [[0, 1], [2, 0], [1, 1], [0, 0]]), tf.concat([x, y], axis=-1), tf.gather(x, [1, 0], axis=2),
                 tf.gather(x[:, 0, 0, 0], [1, 0, 1])]
        return tf.add_n([tf.reduce_sum(p * p) for p in parts]), [x, y]
    gradients_both(tf_oracle, make, {"x": X, "y": X[..., :2]})


def test_errors_name_the_shapes():
    def error(make, match):
        g = tf.Graph()
        with g.as_default():
            with pytest.raises((ValueError, TypeError), match=match):
                make()

    a, b = (lambda: tf.placeholder(tf.float32, [2, 3], name="a")), (lambda: tf.placeholder(tf.float32, [4, 4]))
    error(lambda: tf.concat([a(), b()], 1), r"ConcatV2 'concat': cannot concatenate shapes \[2,3\] and \[4,4\] along "
                                           r"axis 1: dim 0 differs \(2 vs 4\)")
    error(lambda: tf.concat([a(), tf.placeholder(tf.float32, [2])], 0), r"shapes \[2,3\] and \[2\]: ranks differ")
    error(lambda: tf.concat([a(), a()], 2), r"axis 2 is out of range \[-2, 2\) for shapes \[2,3\], \[2,3\]")
    error(lambda: tf.stack([a(), b()]), r"Pack 'stack': cannot stack shapes \[2,3\] and \[4,4\]")
    error(lambda: tf.split(a(), 2, axis=1), r"cannot split dim 1 of shape \[2,3\] into 2 equal parts")
    error(lambda: tf.split(a(), [1, 1], axis=1), r"size_splits \[1, 1\] add up to 2, not the dim's 3")
    error(lambda: tf.squeeze(a(), [0]), r"cannot squeeze dim 0 of shape \[2,3\]: it is 2, not 1")
    error(lambda: tf.expand_dims(a(), 3), r"dim 3 is out of range \[-3, 3\) for input shape \[2,3\]")
    error(lambda: tf.unstack(a(), num=3), r"cannot unstack dim 0 of shape \[2,3\] into 3 tensors")
    error(lambda: tf.slice(a(), [1, 1], [2, 1]), r"slice of dim 0 from 1 with size 2 is outside shape \[2,3\]")
    error(lambda: tf.tile(a(), [2]), r"Tile 'Tile': multiples must be a vector of 2 entries, got shape \[1\] "
                                     r"for input \[2,3\]")
    error(lambda: tf.tile(a(), [2, -1]), r"multiples \[2, -1\] must be 2 non-negative counts for shape \[2,3\]")
    error(lambda: tf.pad(a(), [[1, 1]]), r"paddings must be \[rank, 2\] for input \[2,3\], got shape \[1,2\]")
    error(lambda: tf.gather(a(), [0], axis=2), r"axis 2 is out of range \[-2, 2\) \(params \[2,3\], indices \[1\]\)")
    error(lambda: tf.unsorted_segment_sum(a(), [0, 1, 2], 3),
          r"segment_ids \[3\] must be a prefix of data's shape \[2,3\]")
    error(lambda: tf.raw_op("StridedSliceGrad", [2, 3], [0], [1], [1], tf.zeros([2, 3])),
          r"dy has shape \[2,3\], but the slice of \[2,3\] is \[1,3\]")
    error(lambda: tf.raw_op("ConcatV2", [a()], 0), r"attr 'N' is 1; ConcatV2 needs at least 2")


def test_run_time_errors_name_the_node():
    g = tf.Graph()
    with g.as_default():
        p = tf.placeholder(tf.float32, [None, 2], name="p")
        i = tf.placeholder(tf.int32, [None], name="i")
        y = tf.gather(p, i, name="g")
        n = tf.placeholder(tf.int32, [None], name="n")
        q = tf.floordiv(n, tf.constant([0, 1]), name="q")
    with tf.Session(graph=g) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"node 'g' \(GatherV2\): index 3 is not in \[0, 3\)"):
            sess.run(y, {p: np.zeros((3, 2)), i: [0, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"node 'q' \(FloorDiv\): integer division by zero"):
            sess.run(q, {n: [1, 2]})


@pytest.mark.slow
def test_identity_n_round_trips_its_type_list(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.identity_n([tf.constant([1.5]), tf.constant([7], dtype=tf.int64), tf.constant(True)], name="n")
    tf.save(g, tmp_path / "n.pb")
    loaded = tf.load(tmp_path / "n.pb")
    op = loaded.get_operation_by_name("n")
    assert op.attrs["T"] == (tf.float32, tf.int64, tf.bool)
    assert loaded.as_graph_def().SerializeToString() == g.as_graph_def().SerializeToString()
    with tf.Session(graph=loaded) as sess:
        assert [v.tolist() for v in sess.run(["n:0", "n:1", "n:2"])] == [[1.5], [7], True]


def test_single_output_of_a_multi_output_op():
    """Unpack, Split and SplitV with one part still hand back one tensor, as a list."""
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([[1.0, 2.0]])
        parts = tf.unstack(x) + tf.split(x, 1, axis=1) + tf.split(x, [2], axis=1) + tf.identity_n([x])
    with tf.Session(graph=g) as sess:
        got = sess.run(parts)
    assert [v.tolist() for v in got] == [[1.0, 2.0], [[1.0, 2.0]], [[1.0, 2.0]], [[1.0, 2.0]]]


def test_variables_index_and_divide():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.array([[7, -7], [9, 4]], np.int32), name="v")
        y = [v[0], v[:, 1], v // 2, v % 3, 10 // v]
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        got = sess.run(y)
    assert [a.tolist() for a in got] == [[7, -7], [-7, 4], [[3, -4], [4, 2]], [[1, 2], [0, 1]], [[1, -2], [1, 2]]]
