"""SpaceToBatchND, BatchToSpaceND, SpaceToDepth and DepthToSpace against TensorFlow, their OpDefs, and
hostile block shapes, paddings and crops refused in one line by both runtimes."""

import numpy as np
import pytest

import graphdef as tf
from tests.support import cc_helpers as cc
from tests.support.op_oracle import gradients_both, run_both, tf_oracle  # noqa: F401 - a fixture
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow

NEW_OPS = ["SpaceToBatchND", "BatchToSpaceND", "SpaceToDepth", "DepthToSpace"]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", NEW_OPS)
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


def _x(shape, dtype=np.float32):
    return np.random.default_rng(sum(shape)).normal(size=shape).astype(dtype)


SPACE_TO_BATCH = [  # input shape, block, paddings
    ((2, 5, 4, 3), [2, 2], [[1, 0], [0, 2]]),
    ((1, 7, 3), [7], [[0, 0]]),
    ((3, 2, 3, 4, 2), [1, 3, 2], [[0, 0], [2, 1], [1, 1]]),
    ((0, 4, 4, 1), [2, 2], [[0, 0], [0, 0]]),
    ((2, 3, 3, 0), [3, 3], [[0, 0], [0, 0]]),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("shape, block, pads", SPACE_TO_BATCH)
def test_space_to_batch_and_back_match_tensorflow(tf_oracle, shape, block, pads):
    x = _x(shape)

    def make():
        p = tf.placeholder(tf.float32, shape, name="x")
        y = tf.space_to_batch_nd(p, block, pads)
        return [y, tf.batch_to_space_nd(y, block, pads)]
    ours = run_both(tf_oracle, make, {"x": x})
    np.testing.assert_array_equal(ours[1], x)


@pytest.mark.tf_oracle
def test_space_batch_gradients_match_tensorflow(tf_oracle):
    def make():
        x = tf.placeholder(tf.float32, [2, 5, 4, 3], name="x")
        y = tf.space_to_batch_nd(x, [2, 2], [[1, 0], [0, 2]])
        z = tf.batch_to_space_nd(y * y, [2, 2], [[0, 1], [1, 0]])
        return tf.reduce_sum(z * tf.constant(_x([2, 5, 5, 3]))), [x]  # crops differ from the paddings
    gradients_both(tf_oracle, make, {"x": _x((2, 5, 4, 3))})


@pytest.mark.tf_oracle
@pytest.mark.parametrize("shape, block", [((2, 4, 6, 3), 2), ((1, 3, 3, 2), 3), ((0, 2, 2, 1), 2)])
def test_space_to_depth_and_back_match_tensorflow(tf_oracle, shape, block):
    x = _x(shape)

    def make():
        p = tf.placeholder(tf.float32, shape, name="x")
        y = tf.space_to_depth(p, block)
        return [y, tf.depth_to_space(y, block)]

    def loss():
        p = tf.placeholder(tf.float32, shape, name="x")
        return tf.reduce_sum(tf.depth_to_space(tf.space_to_depth(p, block) ** 2.0, block) * x), [p]
    run_both(tf_oracle, make, {"x": x})
    if x.size:
        gradients_both(tf_oracle, loss, {"x": x})


HOSTILE = [  # op, input shape, block, pairs, what the message says
    ("SpaceToBatchND", [2, 4, 4, 1], [0, 2], [[0, 0], [0, 0]], "must be positive"),
    ("SpaceToBatchND", [2, 4, 4, 1], [2, 2], [[-1, 0], [0, 0]], "must be non-negative"),
    ("SpaceToBatchND", [2, 5, 4, 1], [2, 2], [[0, 0], [0, 0]], "not a multiple of block_shape[0] = 2"),
    ("SpaceToBatchND", [2, 4], [2, 2], [[0, 0], [0, 0]], "dims after its batch dim"),
    ("SpaceToBatchND", [2, 4, 4, 1], [2, 2], [[0, 0, 0]], "must have shape [2,2]"),
    ("SpaceToBatchND", [2, 4, 4, 1], [1, 1], [[2 ** 40, 2 ** 40], [0, 0]], "over the limit"),
    ("BatchToSpaceND", [3, 4, 4, 1], [2, 2], [[0, 0], [0, 0]], "not a multiple of the block size 4"),
    ("BatchToSpaceND", [4, 2, 2, 1], [2, 2], [[3, 2], [0, 0]], "remove more than"),
]


@pytest.mark.parametrize("op, shape, block, pairs, why", HOSTILE)
def test_hostile_blocks_are_refused_by_both_runtimes(tmp_path, cc_runner, op, shape, block, pairs, why):
    x = np.zeros(shape, np.float32)
    b, p = np.array(block, np.int64), np.array(pairs, np.int64)
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, None, name="x")
        bs, ps = tf.placeholder(tf.int64, None, name="b"), tf.placeholder(tf.int64, None, name="p")
        y = tf.raw_op(op, xs, bs, ps, name="z")
    with tf.Session(graph=g) as sess, pytest.raises(Exception, match="'z'.*" + why.replace("[", r"\[")):
        sess.run(y, {xs: x, bs: b, ps: p})
    m = cc.Graph()
    m.placeholder("x", np.float32)
    m.placeholder("b", np.int64)
    m.placeholder("p", np.int64)
    m.node("z", op, ["x", "b", "p"], T=cc.type_attr(np.float32), Tblock_shape=cc.type_attr(np.int64),
           **{"Tpaddings" if op == "SpaceToBatchND" else "Tcrops": cc.type_attr(np.int64)})
    np.save(tmp_path / "x.npy", x)
    line = cc.fails(cc_runner, 4, m.save(tmp_path / "m.pb"), "--feed", f"x=@{tmp_path / 'x.npy'}",
                    "--feed", f"b={b.tolist()}", "--feed", f"p={p.tolist()}".replace(" ", ""))
    assert "'z'" in line and why in line


@pytest.mark.parametrize("op, shape, block, why", [
    ("SpaceToDepth", [1, 3, 4, 1], 2, "multiple"),
    ("DepthToSpace", [1, 2, 2, 3], 2, "multiple of block_size"),
    ("SpaceToDepth", [1, 0, 0, 1], 2 ** 40, "overflow"),
])
def test_hostile_block_sizes_are_refused_by_both_runtimes(tmp_path, cc_runner, op, shape, block, why):
    x = np.zeros(shape, np.float32)
    g = tf.Graph()
    with g.as_default():
        xs = tf.placeholder(tf.float32, None, name="x")
        y = tf.raw_op(op, xs, block_size=block, name="z")
    with tf.Session(graph=g) as sess, pytest.raises(Exception, match="'z'"):
        sess.run(y, {xs: x})
    m = cc.Graph()
    m.placeholder("x", np.float32)
    m.node("z", op, ["x"], T=cc.type_attr(np.float32), block_size=cc.graph_pb2.AttrValue(i=block))
    np.save(tmp_path / "x.npy", x)
    line = cc.fails(cc_runner, 4, m.save(tmp_path / "m.pb"), "--feed", f"x=@{tmp_path / 'x.npy'}")
    assert "'z'" in line and why in line
