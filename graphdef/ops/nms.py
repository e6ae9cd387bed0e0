"""Non-max suppression: NonMaxSuppressionV3, V4 (padding, valid_outputs), V5 (soft-NMS, selected_scores) and
CombinedNonMaxSuppression (per class and per batch entry, the detection exports' post-processing).

The selection follows TF's CPU kernel step by step, so equal inputs select the same boxes in the
same order in every runtime: candidates above score_threshold are taken highest score first, a
tie going to the lower box index; each is compared with the boxes already selected, newest first,
by IoU worked in float32 (corners in either order; a box of zero area overlaps nothing). Hard NMS
drops a candidate whose IoU with one of them passes iou_threshold; soft-NMS (soft_nms_sigma > 0)
scales its score by exp(-0.5 * iou^2 / sigma) instead and puts it back in line while it stays
above score_threshold, comparing it later only with boxes selected since.
"""

import heapq
import math

import numpy as np

from graphdef.framework import dtypes
from graphdef.framework.limits import check as check_size
from graphdef.framework.numerics import EXACT, elementwise_ulps
from graphdef.framework.shapes import TensorShape, show
from graphdef.ops.registry import NOT_DIFFERENTIABLE, Attr, build, constant_value, convert_to_tensor, define

F32 = np.float32
FLOAT = frozenset((dtypes.float32,))


def _iou(boxes, i, j):
    bi, bj = boxes[i], boxes[j]
    ymin_i, xmin_i = min(bi[0], bi[2]), min(bi[1], bi[3])
    ymax_i, xmax_i = max(bi[0], bi[2]), max(bi[1], bi[3])
    ymin_j, xmin_j = min(bj[0], bj[2]), min(bj[1], bj[3])
    ymax_j, xmax_j = max(bj[0], bj[2]), max(bj[1], bj[3])
    area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i)
    area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j)
    if area_i <= 0 or area_j <= 0:
        return F32(0)
    inter = max(min(ymax_i, ymax_j) - max(ymin_i, ymin_j), F32(0)) * max(
        min(xmax_i, xmax_j) - max(xmin_i, xmin_j), F32(0))
    return inter / (area_i + area_j - inter)


def _scalar(value, what):
    value = np.asarray(value)
    if value.shape != ():
        raise ValueError(f"{what} must be a scalar, got shape {show(value.shape)}")
    return value[()]


def select(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma=0.0):
    """(selected indices, their scores) by TF's rules; every argument checked first."""
    boxes, scores = np.asarray(boxes), np.asarray(scores)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must be 2-D [num_boxes, 4], got shape {show(boxes.shape)}")
    if scores.shape != (boxes.shape[0],):
        raise ValueError(f"scores must be 1-D [num_boxes] = [{boxes.shape[0]}], got shape {show(scores.shape)}")
    limit = int(_scalar(max_output_size, "max_output_size"))
    if limit < 0:
        raise ValueError(f"max_output_size is {limit}; it must be non-negative")
    iou_threshold = F32(_scalar(iou_threshold, "iou_threshold"))
    if not 0 <= iou_threshold <= 1:
        raise ValueError(f"iou_threshold is {iou_threshold}; it must be in [0, 1]")
    score_threshold = F32(_scalar(score_threshold, "score_threshold"))
    sigma = F32(_scalar(soft_nms_sigma, "soft_nms_sigma"))
    if not sigma >= 0:
        raise ValueError(f"soft_nms_sigma is {sigma}; it must be non-negative")
    boxes, scores = boxes.astype(F32, copy=False), scores.astype(F32, copy=False)
    soft = sigma > 0
    scale = F32(-0.5) / sigma if soft else F32(0)
    # a heap of (-score, index, suppress_begin): the highest score first, then the lowest index
    queue = [(-s, i, 0) for i, s in enumerate(scores.tolist()) if F32(s) > score_threshold]
    heapq.heapify(queue)
    selected, selected_scores = [], []
    with np.errstate(all="ignore"):
        while len(selected) < limit and queue:
            neg, index, begin = heapq.heappop(queue)
            original = score = F32(-neg)
            hard = False
            for j in range(len(selected) - 1, begin - 1, -1):
                sim = _iou(boxes, index, selected[j])
                weight = np.exp(scale * sim * sim) if soft or sim <= iou_threshold else F32(0)
                score = F32(score * weight)
                if not soft and sim > iou_threshold:
                    hard = True
                    break
                if score <= score_threshold:
                    break
            if hard:
                continue
            if score == original:
                selected.append(index)
                selected_scores.append(score)
            elif score > score_threshold:
                heapq.heappush(queue, (-float(score), index, len(selected)))
    return selected, selected_scores


def _outputs(selected, scores, limit, pad):
    count = len(selected)
    size = limit if pad else count
    check_size((size,), np.int32)
    indices, kept = np.zeros(size, np.int32), np.zeros(size, F32)
    indices[:count], kept[:count] = selected, scores
    return indices, kept, np.int32(count)


def _v3(boxes, scores, max_output_size, iou_threshold, score_threshold):
    return _outputs(*select(boxes, scores, max_output_size, iou_threshold, score_threshold), 0, False)[0]


def _v4(boxes, scores, max_output_size, iou_threshold, score_threshold, *, pad_to_max_output_size):
    chosen = select(boxes, scores, max_output_size, iou_threshold, score_threshold)
    indices, _, count = _outputs(*chosen, int(np.asarray(max_output_size)), pad_to_max_output_size)
    return indices, count


def _v5(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma, *, pad_to_max_output_size):
    chosen = select(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma)
    return _outputs(*chosen, int(np.asarray(max_output_size)), pad_to_max_output_size)


def _infer(ctx, n_scalars):
    b, s = ctx.shape(0), ctx.shape(1)
    if b.ndims not in (None, 2) or (b.ndims == 2 and b.dims[1] not in (None, 4)):
        raise ctx.error(f"boxes must be 2-D [num_boxes, 4], got shape {show(b)}")
    if s.ndims not in (None, 1):
        raise ctx.error(f"scores must be 1-D [num_boxes], got shape {show(s)}")
    n = b.dims[0] if b.dims else None
    if s.dims and n is not None and s.dims[0] not in (None, n):
        raise ctx.error(f"scores {show(s)} must have one score per box of {show(b)}")
    names = ("max_output_size", "iou_threshold", "score_threshold", "soft_nms_sigma")
    for i in range(2, 2 + n_scalars):
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.error(f"{names[i - 2]} must be a scalar, got shape {show(ctx.shape(i))}")
    limit = constant_value(ctx.inputs[2])
    limit = None if limit is None else int(np.asarray(limit))
    if limit is not None and limit < 0:
        raise ctx.error(f"max_output_size is {limit}; it must be non-negative")
    if ctx.attrs.get("pad_to_max_output_size"):
        return TensorShape([limit])
    return TensorShape([None])


def _infer_v3(ctx):
    return [_infer(ctx, 3)]


def _infer_v4(ctx):
    return [_infer(ctx, 3), TensorShape([])]


def _infer_v5(ctx):
    shape = _infer(ctx, 4)
    return [shape, shape, TensorShape([])]


_T = {"T": Attr("type", dtypes.float32, allowed=FLOAT)}

NON_MAX_SUPPRESSION_V3 = define(
    "NonMaxSuppressionV3",
    "boxes: T, scores: T, max_output_size: int32, iou_threshold: T_threshold, score_threshold: T_threshold "
    "-> selected_indices: int32",
    doc="Greedy non-max suppression: up to max_output_size box indices, by score, dropping overlaps.",
    attrs={**_T, "T_threshold": Attr("type", dtypes.float32, allowed=FLOAT)},
    infer=_infer_v3, kernel=_v3, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

NON_MAX_SUPPRESSION_V4 = define(
    "NonMaxSuppressionV4",
    "boxes: T, scores: T, max_output_size: int32, iou_threshold: T_threshold, score_threshold: T_threshold "
    "-> selected_indices: int32, valid_outputs: int32",
    doc="NonMaxSuppressionV3 that can pad its indices with zeros to max_output_size and counts the real ones.",
    attrs={**_T, "T_threshold": Attr("type", dtypes.float32, allowed=FLOAT),
           "pad_to_max_output_size": Attr("bool", False)},
    infer=_infer_v4, kernel=_v4, grad=NOT_DIFFERENTIABLE, numerics=EXACT)

NON_MAX_SUPPRESSION_V5 = define(
    "NonMaxSuppressionV5",
    "boxes: T, scores: T, max_output_size: int32, iou_threshold: T, score_threshold: T, soft_nms_sigma: T "
    "-> selected_indices: int32, selected_scores: T, valid_outputs: int32",
    doc="NonMaxSuppressionV4 with soft-NMS (soft_nms_sigma > 0 decays overlapping scores) and the selected scores.",
    attrs={**_T, "pad_to_max_output_size": Attr("bool", False)},
    infer=_infer_v5, kernel=_v5, grad=NOT_DIFFERENTIABLE, numerics=elementwise_ulps(4))


# -- CombinedNonMaxSuppression ----------------------------------------------------------------------
# Each batch entry and class runs the hard selection above (max_output_size_per_class boxes at most);
# the survivors of all classes are ranked by score and the best max_total_size kept, their boxes
# clipped to [0, 1] when clip_boxes. Outputs are padded with zeros to the per-batch size: max_total_size,
# or with pad_per_class min(max_total_size, max_output_size_per_class * num_classes).

def _combined_sizes(boxes_shape, scores_shape):
    if len(boxes_shape) != 4:
        raise ValueError(f"boxes must be 4-D [batch, num_boxes, q, 4], got shape {show(boxes_shape)}")
    if len(scores_shape) != 3:
        raise ValueError(f"scores must be 3-D [batch, num_boxes, num_classes], got shape {show(scores_shape)}")
    batch, num_boxes, q, four = boxes_shape
    classes = scores_shape[2]
    if four != 4:
        raise ValueError(f"boxes' last dimension must be 4, got shape {show(boxes_shape)}")
    if q not in (1, classes):
        raise ValueError(f"third dimension of boxes must be either 1 or num classes, got {q} for {classes} classes")
    if tuple(scores_shape[:2]) != (batch, num_boxes):
        raise ValueError(f"scores has incompatible shape {show(scores_shape)} for boxes {show(boxes_shape)}")
    return batch, num_boxes, q, classes


def _per_batch_size(per_class, total, classes, pad_per_class):
    return min(total, per_class * classes) if pad_per_class else total


def _combined_nms(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold, score_threshold, *,
                  pad_per_class, clip_boxes):
    boxes, scores = np.asarray(boxes, F32), np.asarray(scores, F32)
    batch, num_boxes, q, classes = _combined_sizes(boxes.shape, scores.shape)
    per_class = int(_scalar(max_output_size_per_class, "max_output_size_per_class"))
    total = int(_scalar(max_total_size, "max_total_size"))
    if per_class <= 0:
        raise ValueError(f"max_size_per_class must be > 0, got {per_class}")
    if total <= 0:
        raise ValueError(f"max_total_size must be > 0, got {total}")
    size = _per_batch_size(per_class, total, classes, pad_per_class)
    check_size((batch, size, 4), F32)
    out_boxes, out_scores = np.zeros((batch, size, 4), F32), np.zeros((batch, size), F32)
    out_classes, valid = np.zeros((batch, size), F32), np.zeros(batch, np.int32)
    # the (entry, class) pairs with a score over the threshold, found at once: the others select nothing
    iou = F32(_scalar(iou_threshold, "iou_threshold"))
    if not 0 <= iou <= 1:  # checked here too: select() may not be reached
        raise ValueError(f"iou_threshold is {iou}; it must be in [0, 1]")
    threshold = F32(_scalar(score_threshold, "score_threshold"))
    # no larger than scores when there are boxes; with none, nothing to select and nothing to allocate
    live = (scores > threshold).any(axis=1) if num_boxes else None
    for b in np.flatnonzero(live.any(axis=1)).tolist() if live is not None else []:
        found = []  # (score, class, box index) of every class's survivors
        for c in np.flatnonzero(live[b]).tolist():
            kept, kept_scores = select(boxes[b, :, c if q > 1 else 0], scores[b, :, c], min(per_class, num_boxes),
                                       iou_threshold, score_threshold)
            found += [(s, c, i) for i, s in zip(kept, kept_scores)]
        found.sort(key=lambda f: -f[0])  # stable: equal scores keep class order, then selection order
        found = found[:min(len(found), size)]
        valid[b] = len(found)
        for n, (s, c, i) in enumerate(found):
            box = boxes[b, i, c if q > 1 else 0]
            out_boxes[b, n] = np.clip(box, F32(0), F32(1)) if clip_boxes else box
            out_scores[b, n], out_classes[b, n] = s, c
    return out_boxes, out_scores, out_classes, valid


def _infer_combined(ctx):
    b, s = ctx.shape(0), ctx.shape(1)
    if b.ndims not in (None, 4):
        raise ctx.error(f"boxes must be 4-D [batch, num_boxes, q, 4], got shape {show(b)}")
    if s.ndims not in (None, 3):
        raise ctx.error(f"scores must be 3-D [batch, num_boxes, num_classes], got shape {show(s)}")
    names = ("max_output_size_per_class", "max_total_size", "iou_threshold", "score_threshold")
    for i in range(2, 6):
        if ctx.shape(i).ndims not in (None, 0):
            raise ctx.error(f"{names[i - 2]} must be a scalar, got shape {show(ctx.shape(i))}")
    batch = b.dims[0] if b.ndims else (s.dims[0] if s.ndims else None)
    per_class, total = (constant_value(ctx.inputs[i]) for i in (2, 3))
    classes = s.dims[2] if s.ndims else None
    size = None
    if total is not None and not ctx.attrs["pad_per_class"]:
        size = int(total)
    elif None not in (total, per_class, classes):
        size = _per_batch_size(int(per_class), int(total), classes, True)
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]), TensorShape([batch, size]),
            TensorShape([batch])]


COMBINED_NON_MAX_SUPPRESSION = define(
    "CombinedNonMaxSuppression",
    "boxes: float32, scores: float32, max_output_size_per_class: int32, max_total_size: int32, "
    "iou_threshold: float32, score_threshold: float32 -> nmsed_boxes: float32, nmsed_scores: float32, "
    "nmsed_classes: float32, valid_detections: int32",
    doc="Greedy NMS per batch entry and class, then the best max_total_size of all classes by score, zero-padded; "
        "boxes clipped to [0, 1] when clip_boxes.",
    attrs={"pad_per_class": Attr("bool", False), "clip_boxes": Attr("bool", True)},
    infer=_infer_combined, kernel=_combined_nms, grad=NOT_DIFFERENTIABLE, numerics=EXACT)


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=-math.inf, pad_per_class=False, clip_boxes=True, name=None):
    """tf.image.combined_non_max_suppression: (nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)."""
    return tuple(build("CombinedNonMaxSuppression", [
        convert_to_tensor(boxes, dtypes.float32), convert_to_tensor(scores, dtypes.float32),
        np.int32(max_output_size_per_class), np.int32(max_total_size), F32(iou_threshold), F32(score_threshold)],
        name=name, default_name="combined_non_max_suppression",
        attrs={"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)}).outputs)


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=-math.inf, name=None):
    """tf.image.non_max_suppression: NonMaxSuppressionV3."""
    return build("NonMaxSuppressionV3", [convert_to_tensor(boxes, dtypes.float32),
                                         convert_to_tensor(scores, dtypes.float32), max_output_size,
                                         float(iou_threshold), float(score_threshold)],
                 name=name, default_name="NonMaxSuppressionV3").outputs[0]
