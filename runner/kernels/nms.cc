// NonMaxSuppressionV3, V4 and V5 by the steps of graphdef/ops/nms.py (TF's
// CPU kernel): candidates above score_threshold in a priority queue, highest
// score first and ties to the lower box index; each compared with the boxes
// selected so far, newest first, by IoU in float32. Hard NMS drops a
// candidate over iou_threshold; soft-NMS (sigma > 0) decays its score by
// exp(-0.5 * iou^2 / sigma) and requeues it while it stays above the score
// threshold. Every scalar is checked, and a padded output's size, first.
#include <algorithm>
#include <cmath>
#include <queue>

#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

float iou(const float* boxes, int64_t i, int64_t j) {
  const float* a = boxes + 4 * i;
  const float* b = boxes + 4 * j;
  const float ymin_i = std::min(a[0], a[2]), xmin_i = std::min(a[1], a[3]);
  const float ymax_i = std::max(a[0], a[2]), xmax_i = std::max(a[1], a[3]);
  const float ymin_j = std::min(b[0], b[2]), xmin_j = std::min(b[1], b[3]);
  const float ymax_j = std::max(b[0], b[2]), xmax_j = std::max(b[1], b[3]);
  const float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
  const float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0.0f;
  const float inter = std::max(std::min(ymax_i, ymax_j) - std::max(ymin_i, ymin_j), 0.0f) *
                      std::max(std::min(xmax_i, xmax_j) - std::max(xmin_i, xmin_j), 0.0f);
  return inter / (area_i + area_j - inter);
}

float scalar_of(const Tensor& t, const std::string& what) {
  if (t.rank() != 0) throw Error(what + " must be a scalar, got shape " + shape_string(t.shape()));
  return t.data<float>()[0];
}

struct Candidate {
  int64_t index;
  float score;
  int64_t suppress_begin;
};

void compute_nms(KernelContext& context, bool has_sigma, bool counts, bool returns_scores) {
  const Tensor& boxes = context.input(0);
  const Tensor& scores = context.input(1);
  if (boxes.rank() != 2 || boxes.shape()[1] != 4) {
    throw Error("boxes must be 2-D [num_boxes, 4], got shape " + shape_string(boxes.shape()));
  }
  const int64_t n = boxes.shape()[0];
  if (scores.shape() != Shape{n}) {
    throw Error("scores must be 1-D [num_boxes] = [" + std::to_string(n) + "], got shape " +
                shape_string(scores.shape()));
  }
  const Tensor& max_output = context.input(2);
  if (max_output.rank() != 0) {
    throw Error("max_output_size must be a scalar, got shape " + shape_string(max_output.shape()));
  }
  const int64_t limit = max_output.data<int32_t>()[0];
  if (limit < 0) throw Error("max_output_size is " + std::to_string(limit) + "; it must be non-negative");
  const float iou_threshold = scalar_of(context.input(3), "iou_threshold");
  if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
    throw Error("iou_threshold is " + std::to_string(iou_threshold) + "; it must be in [0, 1]");
  }
  const float score_threshold = scalar_of(context.input(4), "score_threshold");
  const float sigma = has_sigma ? scalar_of(context.input(5), "soft_nms_sigma") : 0.0f;
  if (!(sigma >= 0)) throw Error("soft_nms_sigma is " + std::to_string(sigma) + "; it must be non-negative");
  const bool pad = counts && context.attr_bool("pad_to_max_output_size");
  if (pad) checked_num_elements({limit}, graphdef::DT_INT32);  // before any selection work

  const float* box = boxes.data<float>();
  const float* score = scores.data<float>();
  auto later = [](const Candidate& a, const Candidate& b) {
    return (a.score == b.score && a.index > b.index) || a.score < b.score;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  for (int64_t i = 0; i < n; ++i) {
    if (score[i] > score_threshold) queue.push({i, score[i], 0});
  }
  const bool soft = sigma > 0;
  const float scale = soft ? -0.5f / sigma : 0.0f;
  std::vector<int32_t> selected;
  std::vector<float> selected_scores;
  while (static_cast<int64_t>(selected.size()) < limit && !queue.empty()) {
    Candidate next = queue.top();
    queue.pop();
    const float original = next.score;
    bool hard = false;
    for (int64_t j = static_cast<int64_t>(selected.size()) - 1; j >= next.suppress_begin; --j) {
      const float sim = iou(box, next.index, selected[j]);
      const float weight = (soft || sim <= iou_threshold) ? std::exp(scale * sim * sim) : 0.0f;
      next.score *= weight;
      if (!soft && sim > iou_threshold) {
        hard = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    if (hard) continue;
    if (next.score == original) {
      selected.push_back(static_cast<int32_t>(next.index));
      selected_scores.push_back(next.score);
    } else if (next.score > score_threshold) {
      next.suppress_begin = static_cast<int64_t>(selected.size());
      queue.push(next);
    }
  }
  const int64_t valid = static_cast<int64_t>(selected.size());
  const int64_t size = pad ? limit : valid;
  Tensor indices(graphdef::DT_INT32, {size});
  Tensor kept(graphdef::DT_FLOAT, {returns_scores ? size : 0});
  std::copy(selected.begin(), selected.end(), indices.data<int32_t>());
  if (returns_scores) std::copy(selected_scores.begin(), selected_scores.end(), kept.data<float>());
  context.set_output(0, std::move(indices));
  if (returns_scores) context.set_output(1, std::move(kept));
  if (counts) {
    Tensor count(graphdef::DT_INT32, {});
    count.data<int32_t>()[0] = static_cast<int32_t>(valid);
    context.set_output(returns_scores ? 2 : 1, std::move(count));
  }
}

REGISTER_KERNEL(Kernel("NonMaxSuppressionV3")
                    .input("boxes", "T")
                    .input("scores", "T")
                    .input("max_output_size", graphdef::DT_INT32)
                    .input("iou_threshold", "T_threshold")
                    .input("score_threshold", "T_threshold")
                    .output(graphdef::DT_INT32)
                    .type_attr("T", {graphdef::DT_FLOAT}, graphdef::DT_FLOAT)
                    .type_attr("T_threshold", {graphdef::DT_FLOAT}, graphdef::DT_FLOAT)
                    .compute([](KernelContext& context) { compute_nms(context, false, false, false); }));

REGISTER_KERNEL(Kernel("NonMaxSuppressionV4")
                    .input("boxes", "T")
                    .input("scores", "T")
                    .input("max_output_size", graphdef::DT_INT32)
                    .input("iou_threshold", "T_threshold")
                    .input("score_threshold", "T_threshold")
                    .output(graphdef::DT_INT32)
                    .output(graphdef::DT_INT32)
                    .type_attr("T", {graphdef::DT_FLOAT}, graphdef::DT_FLOAT)
                    .type_attr("T_threshold", {graphdef::DT_FLOAT}, graphdef::DT_FLOAT)
                    .bool_attr("pad_to_max_output_size", false)
                    .output_names({"selected_indices", "valid_outputs"})
                    .compute([](KernelContext& context) { compute_nms(context, false, true, false); }));

REGISTER_KERNEL(Kernel("NonMaxSuppressionV5")
                    .input("boxes", "T")
                    .input("scores", "T")
                    .input("max_output_size", graphdef::DT_INT32)
                    .input("iou_threshold", "T")
                    .input("score_threshold", "T")
                    .input("soft_nms_sigma", "T")
                    .output(graphdef::DT_INT32)
                    .output("T")
                    .output(graphdef::DT_INT32)
                    .type_attr("T", {graphdef::DT_FLOAT}, graphdef::DT_FLOAT)
                    .bool_attr("pad_to_max_output_size", false)
                    .output_names({"selected_indices", "selected_scores", "valid_outputs"})
                    .compute([](KernelContext& context) { compute_nms(context, true, true, true); }));

}  // namespace
}  // namespace graphrun
