"""CombinedNonMaxSuppression (graphdef/ops/nms.py) against TensorFlow: shared and per-class boxes, padding per
class or to max_total_size, clipping, thresholds, empty selections; hostile sizes refused in one line."""

import numpy as np
import pytest

import graphdef as tf
from graphdef.ops import nms
from tests.python.ops.test_opdefs import test_declaration_matches_tensorflow as _matches_tensorflow
from tests.python.ops34.runtimes import check_cc_refuses, check_graphrun_agrees, check_refused
from tests.support.op_oracle import run_both, tf_oracle  # noqa: F401 - a fixture


@pytest.mark.tf_oracle
def test_declaration_matches_tensorflow(tf_oracle):
    _matches_tensorflow(tf_oracle, "CombinedNonMaxSuppression")


def _inputs(batch, n, q, classes, seed):
    """Boxes partly outside [0, 1] (clipping shows), some corners swapped; continuous scores (no ties:
    TF's heap and sort leave the order of equal scores unspecified)."""
    rng = np.random.default_rng(seed)
    corner = rng.uniform(-0.2, 1.0, size=(batch, n, q, 2)).astype(np.float32)
    size = rng.uniform(0.05, 0.5, size=(batch, n, q, 2)).astype(np.float32)
    boxes = np.concatenate([corner, corner + size], axis=-1)
    flip = rng.random((batch, n, q)) < 0.3
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes, rng.uniform(0, 1, size=(batch, n, classes)).astype(np.float32)


CASES = [  # batch, boxes, q, classes, per class, total, iou, score threshold, pad_per_class, clip_boxes
    (2, 20, 1, 3, 4, 10, 0.5, 0.1, False, True),
    (2, 20, 3, 3, 4, 10, 0.5, 0.1, False, False),
    (1, 30, 1, 4, 5, 8, 0.3, 0.0, True, True),
    (3, 12, 2, 2, 3, 100, 0.6, 0.4, True, False),
    (2, 15, 1, 2, 50, 40, 0.5, 0.0, False, True),
    (1, 10, 1, 3, 4, 6, 1.0, 0.99, False, True),   # almost nothing passes the score threshold
    (1, 10, 1, 2, 3, 5, 0.0, 0.2, True, True),     # any overlap suppresses
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("batch, n, q, classes, per_class, total, iou, threshold, pad, clip", CASES)
def test_combined_nms_matches_tensorflow(tf_oracle, batch, n, q, classes, per_class, total, iou, threshold, pad,
                                         clip):
    boxes, scores = _inputs(batch, n, q, classes, seed=n * 7 + classes)

    def make():
        b = tf.placeholder(tf.float32, [None, n, q, 4], name="b")
        s = tf.placeholder(tf.float32, [None, n, classes], name="s")
        return list(nms.combined_non_max_suppression(b, s, per_class, total, iou, threshold, pad_per_class=pad,
                                                     clip_boxes=clip))
    run_both(tf_oracle, make, {"b": boxes, "s": scores})


def test_graphrun_gives_the_sessions_answers(tmp_path):
    boxes, scores = _inputs(2, 12, 1, 3, seed=1)

    def make():
        b = tf.placeholder(tf.float32, [2, 12, 1, 4], name="b")
        s = tf.placeholder(tf.float32, [2, 12, 3], name="s")
        return list(nms.combined_non_max_suppression(b, s, 3, 7, 0.5, 0.2))
    check_graphrun_agrees(tmp_path, make, {"b": boxes, "s": scores})


def test_graphrun_cc_names_the_op_it_lacks(tmp_path, cc_runner):
    boxes, scores = _inputs(1, 4, 1, 2, seed=2)

    def make():
        b = tf.placeholder(tf.float32, [1, 4, 1, 4], name="b")
        s = tf.placeholder(tf.float32, [1, 4, 2], name="s")
        # only z:0: graphrun-cc checks fetches first and takes a node it has no kernel for as 1-output
        return list(nms.combined_non_max_suppression(b, s, 3, 7, name="z"))[:1]
    line = check_cc_refuses(tmp_path, cc_runner, make, {"b": boxes, "s": scores}, "CombinedNonMaxSuppression", "z")
    assert line.endswith("no kernel for CombinedNonMaxSuppression (z)"), line


@pytest.mark.parametrize("boxes_shape, scores_shape, scalars, words", [
    ((1, 4, 1, 4), (1, 4, 2), (0, 5, 0.5), "max_size_per_class must be > 0, got 0"),
    ((1, 4, 1, 4), (1, 4, 2), (3, -1, 0.5), "max_total_size must be > 0, got -1"),
    ((1, 4, 1, 4), (1, 4, 2), (3, 5, 1.5), "iou_threshold is 1.5; it must be in [0, 1]"),
    ((1, 4, 3, 4), (1, 4, 2), (3, 5, 0.5), "third dimension of boxes must be either 1 or num classes"),
    ((1, 4, 1, 4), (1, 5, 2), (3, 5, 0.5), "scores has incompatible shape [1,5,2]"),
    ((1, 4, 4), (1, 4, 2), (3, 5, 0.5), "boxes must be 4-D"),
    ((1, 4, 1, 4), (1, 4, 2), (3, 2 ** 31 - 1, 0.5), "over the limit"),
])
def test_hostile_arguments_are_refused(tmp_path, monkeypatch, boxes_shape, scores_shape, scalars, words):
    monkeypatch.setenv("GRAPHDEF_MAX_TENSOR_BYTES", str(1 << 30))
    per_class, total, iou = scalars

    def make():
        b, s = tf.placeholder(tf.float32, None, name="b"), tf.placeholder(tf.float32, None, name="s")
        p, t = tf.placeholder(tf.int32, None, name="p"), tf.placeholder(tf.int32, None, name="t")
        i = tf.placeholder(tf.float32, None, name="i")
        return list(tf.raw_op("CombinedNonMaxSuppression", b, s, p, t, i, np.float32(0), name="z"))
    check_refused(tmp_path, make, {"b": np.zeros(boxes_shape, np.float32), "s": np.zeros(scores_shape, np.float32),
                                   "p": np.int32(per_class), "t": np.int32(total), "i": np.float32(iou)}, "z", words)


def test_a_batch_of_empty_entries_is_not_a_loop_over_them():
    """Boxes and scores with no elements may still claim 10^6 batch entries and classes: the answer is all
    padding, worked out at once rather than 10^12 empty selections."""
    import resource
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    boxes, scores, classes, valid = nms._combined_nms(
        np.zeros((10 ** 6, 0, 1, 4), np.float32), np.zeros((10 ** 6, 0, 10 ** 6), np.float32), np.int32(3),
        np.int32(2), np.float32(0.5), np.float32(0), pad_per_class=False, clip_boxes=True)
    assert boxes.shape == (10 ** 6, 2, 4) and not boxes.any() and not valid.any()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 2.0


def test_classes_with_no_score_over_the_threshold_select_nothing_at_once():
    """10^3 entries x 10^3 classes whose scores all stay under the threshold: 10^6 empty selections, found
    empty in one comparison rather than one by one."""
    import resource
    rng = np.random.default_rng(4)
    boxes, _ = _inputs(1000, 10, 1, 1, seed=4)
    scores = rng.uniform(0, 0.1, size=(1000, 10, 1000)).astype(np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    out = nms._combined_nms(boxes, scores, np.int32(3), np.int32(5), np.float32(0.5), np.float32(0.5),
                            pad_per_class=False, clip_boxes=True)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 1.0
    assert not out[3].any() and not out[0].any()
