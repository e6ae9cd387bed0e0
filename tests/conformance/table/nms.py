"""Conformance cases: NonMaxSuppressionV3, V4 and V5.

Expected selections are worked by hand from TF's rules (stated in graphdef/ops/nms.py) on boxes
whose IoUs are simple fractions, listed beside each case.
"""

import numpy as np

import graphdef as tf

from .base import case, f32, feed, i32

# IoU(0,1) = 81/119 (overlap 9x9 of two 10x10 boxes), IoU(0,2) = 0, IoU(2,3) = 1 (the same box, corners
# swapped), box 4 has zero area and overlaps nothing, and box 5 = [0,0,10,20] has IoU 100/200 = 0.5 with
# box 0 (not over a 0.5 threshold) and 90/210 with box 1.
BOXES = f32([0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [30, 30, 20, 20], [5, 5, 5, 9], [0, 0, 10, 20])
SCORES = f32(0.9, 0.8, 0.7, 0.7, 0.95, 0.6)


@case("non_max_suppression_v3", "NonMaxSuppressionV3, IoU threshold 0.5: box 4 (zero area, best score) is kept, "
      "box 1 (IoU 0.68 with box 0) dropped, the tie 2/3 goes to the lower index and 3 (IoU 1 with 2) dropped, "
      "box 5 (IoU exactly 0.5 with box 0) kept: [4, 0, 2, 5].")
def _():
    tf.raw_op("NonMaxSuppressionV3", feed("boxes", BOXES), feed("scores", SCORES), np.int32(10), np.float32(0.5),
              np.float32(-np.inf), name="nms")
    return {"boxes": BOXES, "scores": SCORES}, {"nms:0": i32(4, 0, 2, 5)}


@case("non_max_suppression_v4_padded", "NonMaxSuppressionV4 with score threshold 0.65 and padding to 6: "
      "[4, 0, 2] then zeros, valid_outputs 3; max_output_size 2 without padding stops at [4, 0].")
def _():
    b, s = feed("boxes", BOXES), feed("scores", SCORES)
    tf.raw_op("NonMaxSuppressionV4", b, s, np.int32(6), np.float32(0.5), np.float32(0.65),
              pad_to_max_output_size=True, name="padded")
    tf.raw_op("NonMaxSuppressionV4", b, s, np.int32(2), np.float32(0.5), np.float32(0.0), name="short")
    return {"boxes": BOXES, "scores": SCORES}, {"padded:0": i32(4, 0, 2, 0, 0, 0), "padded:1": np.int32(3),
                                                "short:0": i32(4, 0), "short:1": np.int32(2)}


@case("non_max_suppression_v5_hard", "NonMaxSuppressionV5 with soft_nms_sigma 0 is hard NMS and returns the "
      "selected scores unchanged.")
def _():
    tf.raw_op("NonMaxSuppressionV5", feed("boxes", BOXES), feed("scores", SCORES), np.int32(10), np.float32(0.5),
              np.float32(0.0), np.float32(0.0), name="nms")
    return {"boxes": BOXES, "scores": SCORES}, {"nms:0": i32(4, 0, 2, 5), "nms:1": f32(0.95, 0.9, 0.7, 0.6),
                                                "nms:2": np.int32(4)}


@case("non_max_suppression_empty", "NonMaxSuppressionV4 of no boxes selects nothing; padded to 3 gives zeros.")
def _():
    boxes, scores = np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
    tf.raw_op("NonMaxSuppressionV4", feed("boxes", boxes), feed("scores", scores), np.int32(3), np.float32(0.5),
              np.float32(0.0), pad_to_max_output_size=True, name="nms")
    return {"boxes": boxes, "scores": scores}, {"nms:0": i32(0, 0, 0), "nms:1": np.int32(0)}
