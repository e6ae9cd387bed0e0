"""NonMaxSuppressionV3, V4 and V5 against TensorFlow (ties, thresholds, padding, soft-NMS, empty input),
their OpDefs, and hostile scalars refused in one line by both runtimes."""

import numpy as np
import pytest

import graphdef as tf
from tests.support import cc_helpers as cc
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - a fixture
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow


@pytest.mark.tf_oracle
@pytest.mark.parametrize("op_type", ["NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5"])
def test_declaration_matches_tensorflow(tf_oracle, op_type):
    _matches_tensorflow(tf_oracle, op_type)


def _boxes(n, seed):
    rng = np.random.default_rng(seed)
    corners = rng.uniform(0, 10, size=(n, 2)).astype(np.float32)
    sizes = rng.uniform(0.5, 4, size=(n, 2)).astype(np.float32)
    boxes = np.concatenate([corners, corners + sizes], axis=1)
    flip = rng.random(n) < 0.3  # some boxes give their corners the other way round
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    scores = np.round(rng.uniform(0, 1, size=n), 1).astype(np.float32)  # many ties
    return boxes, scores


CASES = [  # n, seed, max_output_size, iou, score threshold, sigma
    (30, 1, 10, 0.5, 0.0, 0.0),
    (50, 2, 50, 0.3, 0.2, 0.0),
    (40, 3, 5, 0.7, -1.0, 0.0),
    (25, 4, 25, 0.0, 0.0, 0.0),
    (25, 5, 25, 1.0, 0.0, 0.0),
    (30, 6, 30, 0.5, 0.1, 0.5),
    (30, 7, 8, 1.0, 0.3, 1.0),
    (0, 8, 4, 0.5, 0.0, 0.0),
    (10, 9, 0, 0.5, 0.0, 0.0),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("pad", [False, True])
@pytest.mark.parametrize("n, seed, limit, iou, threshold, sigma", CASES)
def test_nms_matches_tensorflow(tf_oracle, n, seed, limit, iou, threshold, sigma, pad):
    boxes, scores = _boxes(n, seed)

    def make():
        b = tf.placeholder(tf.float32, [None, 4], name="boxes")
        s = tf.placeholder(tf.float32, [None], name="scores")
        limit_, iou_, thr_ = np.int32(limit), np.float32(iou), np.float32(threshold)
        v3 = [] if pad else [tf.raw_op("NonMaxSuppressionV3", b, s, limit_, iou_, thr_)]
        v4 = tf.raw_op("NonMaxSuppressionV4", b, s, limit_, iou_, thr_, pad_to_max_output_size=pad)
        v5 = tf.raw_op("NonMaxSuppressionV5", b, s, limit_, iou_, thr_, np.float32(sigma), pad_to_max_output_size=pad)
        return v3 + list(v4) + list(v5)
    run_both(tf_oracle, make, {"boxes": boxes, "scores": scores})


@pytest.mark.parametrize("scalars, why", [
    ((-1, 0.5, 0.0, 0.0), "max_output_size is -1; it must be non-negative"),
    ((3, 1.5, 0.0, 0.0), "it must be in [0, 1]"),
    ((3, 0.5, 0.0, -1.0), "soft_nms_sigma is"),
    ((2 ** 31 - 1, 0.5, 0.0, 0.0), "over the limit"),
])
def test_hostile_scalars_are_refused_by_both_runtimes(tmp_path, cc_runner, monkeypatch, scalars, why):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))  # padding to 2^31 - 1 indices takes 8 GiB
    boxes, scores = _boxes(4, 10)
    limit, iou, threshold, sigma = scalars
    g = tf.Graph()
    with g.as_default():
        b, s = tf.placeholder(tf.float32, None, name="b"), tf.placeholder(tf.float32, None, name="s")
        m = tf.placeholder(tf.int32, None, name="m")
        y = tf.raw_op("NonMaxSuppressionV5", b, s, m, np.float32(iou), np.float32(threshold), np.float32(sigma),
                      pad_to_max_output_size=True, name="z")
    with tf.Session(graph=g) as sess, pytest.raises(Exception, match="'z'.*" + why.replace("[", r"\[")):
        sess.run(y, {b: boxes, s: scores, m: np.int32(limit)})
    model = cc.Graph()
    model.placeholder("b", np.float32)
    model.placeholder("s", np.float32)
    model.placeholder("m", np.int32)
    for name, v in (("iou", iou), ("thr", threshold), ("sigma", sigma)):
        model.const(name, np.float32(v))
    model.node("z", "NonMaxSuppressionV5", ["b", "s", "m", "iou", "thr", "sigma"], T=cc.type_attr(np.float32),
               pad_to_max_output_size=cc.bool_attr(True))
    np.save(tmp_path / "b.npy", boxes)
    np.save(tmp_path / "s.npy", scores)
    line = cc.fails(cc_runner, 4, model.save(tmp_path / "m.pb"), "--feed", f"b=@{tmp_path / 'b.npy'}",
                    "--feed", f"s=@{tmp_path / 's.npy'}", "--feed", f"m={limit}", "--fetch", "z:0")
    assert "'z'" in line and why in line


@pytest.mark.tf_oracle
def test_builder_selects_like_tensorflow(tf_oracle):
    boxes, scores = _boxes(20, 11)
    run_both(tf_oracle, lambda: [tf.image.non_max_suppression(tf.placeholder(tf.float32, [20, 4], name="b"),
                                                              tf.placeholder(tf.float32, [20], name="s"), 7, 0.4)],
             {"b": boxes, "s": scores})
