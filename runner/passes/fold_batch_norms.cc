// Batch-norm folding: an inference batch norm after a Conv2D,
// DepthwiseConv2dNative or MatMul goes into its weights, the rewrite of TF's
// fold_batch_norms and of graphdef/optimize/passes/batch_norm.py. Forms:
// - FusedBatchNorm / V2 / V3 with is_training false, only output 0 read:
//   y = (x - mean) * scale / sqrt(variance + epsilon) + offset;
// - Keras' and TF1's unfused form, which constant folding reduces to
//   Mul(x, c) then Add/AddV2/Sub/BiasAdd(b), c and b one value per channel;
//   a Mul after a BiasAdd (a Dense layer's bias) folds the same way.
// Either way output channel k of the filter is scaled by s[k] (worked in
// float64, rounded once) and one BiasAdd adds the shift, so the result is
// Conv2D -> BiasAdd, which the fusion pass then fuses with its activation.
// The convolution then sums products of the scaled weights, a reordering of
// the same arithmetic that its tolerance under the numerics policy covers.
//
// A pattern folds only where nothing can tell: no node of it fed or fetched
// (but the last, whose name the BiasAdd keeps), each intermediate value read
// once, the filter a Const. Rewrites repeat until none applies, since the
// Mul's BiasAdd meets the Add in the next round.
#include <cmath>
#include <optional>

#include "graph/input_name.h"
#include "graph/tensor_proto.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

constexpr int kMaxRounds = 8;

bool is_float(const graphdef::NodeDef& node, const char* attr = "T") {
  const auto it = node.attr().find(attr);
  return it != node.attr().end() && it->second.type() == graphdef::DT_FLOAT;
}

bool nhwc(const graphdef::NodeDef& node) {
  const auto it = node.attr().find("data_format");
  return it == node.attr().end() || it->second.s().empty() || it->second.s() == "NHWC";
}

bool attr_true(const graphdef::NodeDef& node, const char* name, bool default_value) {
  const auto it = node.attr().find(name);
  return it == node.attr().end() ? default_value : it->second.b();
}

class Folder {
 public:
  Folder(const Graph& graph, const PassContext& context) : context_(context), edit_(graph) {}

  // One round over the graph; returns how many patterns folded.
  int round() {
    const Uses uses(edit_);
    uses_ = &uses;
    touched_.assign(edit_.size(), 0);
    int folded = 0;
    const int n = edit_.size();
    for (int i = 0; i < n; ++i) {
      if (edit_.removed(i) || touched_[i] || context_.fed.count(edit_.node(i).name())) continue;
      const std::string& op = edit_.node(i).op();
      if (op == "FusedBatchNorm" || op == "FusedBatchNormV2" || op == "FusedBatchNormV3") folded += fold_fused(i);
      else if (op == "Mul") folded += fold_mul(i);
      else if (op == "Add" || op == "AddV2" || op == "BiasAdd" || op == "Sub") folded += fold_add(i);
    }
    uses_ = nullptr;
    return folded;
  }

  GraphEdit& edit() { return edit_; }

 private:
  // The node input `text` reads as output 0 (not a control input), or -1.
  int data_node(const std::string& text) const {
    const InputName name = parse_input_name(text);
    if (name.is_control || name.output != 0) return -1;
    return edit_.find(name.node);
  }

  // The value of the unfed Const that `text` reads.
  std::optional<Tensor> const_value(const std::string& text) const {
    const int node = data_node(text);
    if (node < 0 || edit_.node(node).op() != "Const" || context_.pinned(edit_.node(node).name())) return std::nullopt;
    const auto value = edit_.node(node).attr().find("value");
    if (value == edit_.node(node).attr().end()) return std::nullopt;
    try {
      return tensor_from_proto(value->second.tensor());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  // True when node `producer` is read once, as output 0 by `reader`, and
  // nobody can see it.
  bool sole_reader(int producer, int reader) const {
    if (context_.pinned(edit_.node(producer).name()) || uses_->data[producer] != 1 || uses_->control[producer] ||
        uses_->other_outputs[producer] || touched_[producer]) {
      return false;
    }
    for (const std::string& text : edit_.node(reader).input()) {
      if (data_node(text) == producer) return true;
    }
    return false;
  }

  // The float32 NHWC Conv2D/Depthwise or MatMul (B untransposed) with a
  // Const filter that `text` names, read only by `reader`; -1 otherwise.
  int producer(const std::string& text, int reader) const {
    const int p = data_node(text);
    if (p < 0) return -1;
    const graphdef::NodeDef& node = edit_.node(p);
    const bool conv = node.op() == "Conv2D" || node.op() == "DepthwiseConv2dNative";
    if (!(conv || node.op() == "MatMul") || !is_float(node) || node.input_size() != 2) return -1;
    if (conv ? !nhwc(node) : attr_true(node, "transpose_b", false)) return -1;
    if (!sole_reader(p, reader)) return -1;
    const std::optional<Tensor> filter = const_value(node.input(1));
    if (!filter || filter->dtype() != graphdef::DT_FLOAT || filter->rank() != (conv ? 4 : 2)) return -1;
    return p;
  }

  Tensor filter(int producer) const { return *const_value(edit_.node(producer).input(1)); }

  static int64_t out_channels(const graphdef::NodeDef& producer, const Tensor& filter) {
    const Shape& shape = filter.shape();
    return producer.op() == "DepthwiseConv2dNative" ? shape[2] * shape[3] : shape.back();
  }

  static int output_rank(const graphdef::NodeDef& producer) { return producer.op() == "MatMul" ? 2 : 4; }

  // A float32 scale or shift as one double per output channel: a scalar, or
  // [..., channels] with leading 1s and no more dims than the output has.
  static std::optional<std::vector<double>> per_channel(const std::optional<Tensor>& value, int64_t channels,
                                                        int rank) {
    if (!value || value->dtype() != graphdef::DT_FLOAT || value->rank() > rank) return std::nullopt;
    const float* data = value->data<float>();
    if (value->num_elements() == 1) return std::vector<double>(channels, data[0]);
    if (value->num_elements() != channels) return std::nullopt;
    for (int64_t d = 0; d + 1 < value->rank(); ++d) {
      if (value->shape()[d] != 1) return std::nullopt;
    }
    return std::vector<double>(data, data + channels);
  }

  std::string add_const(const std::string& base, Tensor value) { return edit_.add(const_node("", value), base); }

  // `target` (keeping its name and control inputs) becomes
  // BiasAdd(producer with its filter scaled, shift).
  int rewrite(int target, int producer, const std::vector<double>& scale, const std::vector<double>& shift) {
    const Tensor weights = filter(producer);
    Tensor scaled(graphdef::DT_FLOAT, weights.shape());
    const float* w = weights.data<float>();
    float* out = scaled.data<float>();
    const int64_t channels = static_cast<int64_t>(scale.size());
    for (int64_t i = 0; i < weights.num_elements(); ++i) {
      out[i] = static_cast<float>(static_cast<double>(w[i]) * scale[i % channels]);
    }
    Tensor bias(graphdef::DT_FLOAT, {channels});
    for (int64_t c = 0; c < channels; ++c) bias.data<float>()[c] = static_cast<float>(shift[c]);
    // Names are copied first: adding a node may move the others.
    const std::string conv_name = edit_.node(producer).name(), target_name = edit_.node(target).name();
    const std::string filter_name = add_const(conv_name + "/folded_filter", std::move(scaled));
    edit_.mutable_node(producer).set_input(1, filter_name);
    const std::string bias_name = add_const(target_name + "/folded_bias", std::move(bias));
    become_bias_add(target, conv_name, bias_name);
    touched_.resize(edit_.size(), 0);
    touched_[target] = touched_[producer] = 1;
    return 1;
  }

  void become_bias_add(int target, const std::string& input, const std::string& bias) {
    graphdef::NodeDef& node = edit_.mutable_node(target);
    std::vector<std::string> controls;
    for (const std::string& text : node.input()) {
      if (!text.empty() && text[0] == '^') controls.push_back(text);
    }
    graphdef::NodeDef rewritten;
    rewritten.set_name(node.name());
    rewritten.set_op("BiasAdd");
    rewritten.set_device(node.device());
    rewritten.add_input(input);
    rewritten.add_input(bias);
    for (const std::string& text : controls) rewritten.add_input(text);
    (*rewritten.mutable_attr())["T"].set_type(graphdef::DT_FLOAT);
    (*rewritten.mutable_attr())["data_format"].set_s("NHWC");
    node = std::move(rewritten);
  }

  int fold_fused(int i) {
    const graphdef::NodeDef& node = edit_.node(i);
    if (attr_true(node, "is_training", true) || !nhwc(node) || !is_float(node) || uses_->other_outputs[i] ||
        node.input_size() < 5) {
      return 0;
    }
    if (node.attr().count("U") && !is_float(node, "U")) return 0;
    const int p = producer(node.input(0), i);
    if (p < 0) return 0;
    const graphdef::NodeDef& conv = edit_.node(p);
    const int64_t channels = out_channels(conv, filter(p));
    std::vector<double> params[4];
    for (int k = 0; k < 4; ++k) {
      std::optional<std::vector<double>> value = per_channel(const_value(node.input(k + 1)), channels, 1);
      if (!value) return 0;
      params[k] = std::move(*value);
    }
    const auto epsilon_attr = node.attr().find("epsilon");
    const double epsilon = epsilon_attr == node.attr().end() ? 1e-4f : epsilon_attr->second.f();
    std::vector<double> scale(channels), shift(channels);
    for (int64_t c = 0; c < channels; ++c) {
      scale[c] = params[0][c] / std::sqrt(params[3][c] + epsilon);
      shift[c] = params[1][c] - params[2][c] * scale[c];
    }
    return rewrite(i, p, scale, shift);
  }

  // Mul(conv, c) or Mul(BiasAdd(conv, b), c), either operand order.
  int fold_mul(int i) {
    const graphdef::NodeDef& node = edit_.node(i);
    if (!is_float(node) || node.input_size() != 2) return 0;
    for (int data = 0; data < 2; ++data) {
      const std::string& other = node.input(1 - data);
      int p = producer(node.input(data), i);
      std::optional<std::vector<double>> bias;
      int first = -1;
      if (p < 0) {
        first = bias_add_of_producer(node.input(data), i, p);
        if (first < 0) continue;
        const graphdef::NodeDef& conv = edit_.node(p);
        bias = per_channel(const_value(edit_.node(first).input(1)), out_channels(conv, filter(p)), 1);
        if (!bias) continue;
      }
      const graphdef::NodeDef& conv = edit_.node(p);
      const int64_t channels = out_channels(conv, filter(p));
      std::optional<std::vector<double>> scale = per_channel(const_value(other), channels, output_rank(conv));
      if (!scale) continue;
      std::vector<double> shift(channels, 0.0);
      if (bias) {
        for (int64_t c = 0; c < channels; ++c)
          shift[c] = static_cast<double>(static_cast<float>((*bias)[c])) * (*scale)[c];
      }
      if (first >= 0) {
        edit_.remove(first);  // read by nothing once the Mul reads the convolution
        touched_[first] = 1;
      }
      return rewrite(i, p, *scale, shift);
    }
    return 0;
  }

  // Node `text` as an NHWC float BiasAdd(producer, Const) read only by
  // `reader`: its index, with the producer in `p`; else -1.
  int bias_add_of_producer(const std::string& text, int reader, int& p) const {
    const int first = data_node(text);
    if (first < 0) return -1;
    const graphdef::NodeDef& node = edit_.node(first);
    if (node.op() != "BiasAdd" || !is_float(node) || !nhwc(node) || node.input_size() != 2 ||
        !sole_reader(first, reader)) {
      return -1;
    }
    p = producer(node.input(0), first);
    return p < 0 ? -1 : first;
  }

  // BiasAdd(conv, b) then Add/AddV2/BiasAdd(c) or Sub(c): one BiasAdd of b + c or b - c.
  int fold_add(int i) {
    const graphdef::NodeDef& node = edit_.node(i);
    if (!is_float(node) || node.input_size() != 2 || (node.op() == "BiasAdd" && !nhwc(node))) return 0;
    const bool commutes = node.op() == "Add" || node.op() == "AddV2";
    for (int data = 0; data < (commutes ? 2 : 1); ++data) {
      int p = -1;
      const int first = bias_add_of_producer(node.input(data), i, p);
      if (first < 0) continue;
      const graphdef::NodeDef& conv = edit_.node(p);
      const int64_t channels = out_channels(conv, filter(p));
      const std::optional<std::vector<double>> bias = per_channel(const_value(edit_.node(first).input(1)), channels, 1);
      const std::optional<std::vector<double>> other =
          per_channel(const_value(node.input(1 - data)), channels, node.op() == "BiasAdd" ? 1 : output_rank(conv));
      if (!bias || !other) continue;
      Tensor total(graphdef::DT_FLOAT, {channels});
      for (int64_t c = 0; c < channels; ++c) {
        total.data<float>()[c] = static_cast<float>((*bias)[c] + (node.op() == "Sub" ? -(*other)[c] : (*other)[c]));
      }
      const std::string conv_name = conv.name();
      const std::string bias_name = add_const(edit_.node(i).name() + "/folded_bias", std::move(total));
      become_bias_add(i, conv_name, bias_name);
      edit_.remove(first);
      touched_.resize(edit_.size(), 0);
      touched_[i] = touched_[p] = touched_[first] = 1;
      return 1;
    }
    return 0;
  }

  const PassContext& context_;
  GraphEdit edit_;
  const Uses* uses_ = nullptr;
  std::vector<char> touched_;
};

std::unique_ptr<graphdef::GraphDef> fold_batch_norms(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  Folder folder(graph, context);
  int folded = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    const int count = folder.round();
    if (!count) break;
    folded += count;
  }
  if (!folded) return nullptr;
  context.report("batch-norm steps folded", folded);
  return folder.edit().finish();
}

REGISTER_GRAPH_PASS("fold_batch_norms", 30, fold_batch_norms);

}  // namespace
}  // namespace graphrun
