// Constant folding: a node computed from Consts alone is computed once, at
// load, by its own kernel, and its readers read a Const holding the value
// (graphdef/optimize/passes/constant_folding.py, TF's fold_constants). After
// it, a Keras batch norm's Rsqrt(variance + epsilon) * gamma and
// beta - mean * that are per-channel Consts the batch-norm pass can fold.
//
// Left alone: anything fed, fetched or run (a fed Const's value is the
// feed's), stateful or random nodes (graph_edit.h), and any node whose
// outputs' static shapes are not fully known or would take over kMaxBytes,
// checked before its kernel runs, so a hostile Fill or Tile never allocates
// (grappler has the same 10 MiB cap). A kernel that fails leaves its node,
// and everything after it, to fail at run time with the usual message.
#include <algorithm>
#include <unordered_map>

#include "core/errors.h"
#include "exec/kernel_context.h"
#include "graph/shape_inference.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

constexpr int64_t kMaxBytes = int64_t{10} << 20;

// Fully known static output shapes, each within the cap.
bool small_known_outputs(const GraphNode& node, const std::vector<StaticShape>& shapes) {
  if (shapes.size() != node.output_dtypes.size() || shapes.empty()) return false;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    // A string's bytes are not its dtype's size: strings are left to the run.
    if (!shapes[k].known_rank || node.output_dtypes[k] == graphdef::DT_STRING) return false;
    int64_t bytes = static_cast<int64_t>(dtype_size(node.output_dtypes[k]));
    for (int64_t dim : shapes[k].dims) {
      if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes) || bytes > kMaxBytes) return false;
    }
  }
  return true;
}

// Ops whose outputs together never hold more bytes than their inputs: they
// fold even without a shape rule, when their inputs are small.
bool never_larger(const std::string& op) {
  return op == "Split" || op == "SplitV" || op == "Unpack" || op == "Reshape" || op == "Squeeze" ||
         op == "ExpandDims" || op == "Transpose" || op == "Slice" || op == "StridedSlice" || op == "ConcatV2" ||
         op == "Concat" || op == "Pack" || op == "Identity" || op == "Shape" || op == "Size" || op == "Rank";
}

class Folder {
 public:
  Folder(const Graph& graph, const PassContext& context)
      : graph_(graph),
        context_(context),
        shapes_(context.shapes(graph)),
        ready_(graph.size(), 0),
        frontier_(graph.size(), 0),
        values_(graph.size()),
        pending_(graph.size(), 0) {
    for (int i = 0; i < graph.size(); ++i) {
      for (const Endpoint& input : graph.node(i).inputs) ++pending_[input.node];
    }
  }

  void run() {
    for (int i : topological_order(graph_)) {
      decide(i);
      for (const Endpoint& input : graph_.node(i).inputs) {
        const int p = input.node;
        if (!ready_[p]) continue;
        if (!ready_[i]) frontier_[p] = 1;
        // Interior values go as soon as their last reader has them.
        if (--pending_[p] == 0 && !frontier_[p]) values_[p].clear();
      }
    }
  }

  bool ready(int i) const { return ready_[i]; }
  bool frontier(int i) const { return frontier_[i] && graph_.node(i).op() != "Const"; }
  const std::vector<TensorPtr>& values(int i) const { return values_[i]; }
  int64_t evaluated() const { return evaluated_; }

 private:
  void decide(int i) {
    const GraphNode& node = graph_.node(i);
    if (context_.pinned(node.name())) return;
    if (node.op() == "Const") {
      ready_[i] = node.runnable();
      return;
    }
    if (node.inputs.empty() || node.output_dtypes.empty() || is_stateful(node)) return;
    for (const Endpoint& input : node.inputs) {
      if (!ready_[input.node]) return;
    }
    if (!small_known_outputs(node, shapes_[i]) && !(never_larger(node.op()) && small_inputs(node))) return;
    for (int control : node.control_inputs) {
      if (!ready_[control]) return;
    }
    ready_[i] = evaluate(i);
    if (ready_[i]) ++evaluated_;
  }

  // Inputs (values already computed, or Consts) that take at most kMaxBytes together.
  bool small_inputs(const GraphNode& node) {
    int64_t bytes = 0;
    for (const Endpoint& input : node.inputs) {
      const std::vector<TensorPtr>& values = values_[input.node];
      if (values.empty()) {
        const auto& proto = graph_.node(input.node).def->attr().at("value").tensor();
        if (proto.dtype() == graphdef::DT_STRING) return false;
        int64_t count = static_cast<int64_t>(dtype_size(static_cast<DataType>(proto.dtype())));
        for (const auto& dim : proto.tensor_shape().dim()) {
          if (dim.size() < 0 || __builtin_mul_overflow(count, dim.size(), &count) || count > kMaxBytes) return false;
        }
        bytes += count;
      } else {
        if (values.at(input.output)->dtype() == graphdef::DT_STRING) return false;
        bytes += static_cast<int64_t>(values.at(input.output)->byte_size());
      }
      if (bytes > kMaxBytes) return false;
    }
    return true;
  }

  bool evaluate(int i) {
    const GraphNode& node = graph_.node(i);
    try {
      std::vector<TensorPtr> inputs;
      for (const Endpoint& input : node.inputs) inputs.push_back(value(input));
      KernelContext kernel_context(graph_, i, std::move(inputs), variables_);
      node.kernel->run(kernel_context);
      std::vector<TensorPtr>& outputs = kernel_context.outputs();
      for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k] || outputs[k]->dtype() != node.output_dtypes[k] ||
            static_cast<int64_t>(outputs[k]->byte_size()) > kMaxBytes) {
          return false;
        }
      }
      values_[i] = std::move(outputs);
      return true;
    } catch (const std::exception&) {
      // Bad constants and failing kernels report themselves when the graph runs.
      return false;
    }
  }

  TensorPtr value(const Endpoint& input) {
    std::vector<TensorPtr>& values = values_[input.node];
    if (values.empty()) {
      // A Const: the value its kernel decoded at load.
      const TensorPtr* decoded = std::any_cast<TensorPtr>(&graph_.node(input.node).state);
      if (!decoded || !*decoded) throw Error("internal error: a Const without its decoded value");
      values.push_back(*decoded);
    }
    return values.at(input.output);
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  std::vector<char> ready_, frontier_;
  std::vector<std::vector<TensorPtr>> values_;
  std::vector<int> pending_;
  VariableStore variables_;
  int64_t evaluated_ = 0;
};

std::unique_ptr<graphdef::GraphDef> fold_constants(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  Folder folder(graph, context);
  folder.run();
  GraphEdit edit(graph);
  // Multi-output nodes: their read outputs become Consts of their own.
  std::unordered_map<std::string, std::vector<std::string>> output_consts;
  int64_t made = 0;
  for (int i = 0; i < graph.size(); ++i) {
    if (!folder.frontier(i)) continue;
    const GraphNode& node = graph.node(i);
    const std::vector<TensorPtr>& values = folder.values(i);
    ++made;
    if (values.size() == 1) {
      graphdef::NodeDef folded = const_node(node.name(), *values[0]);
      folded.set_device(node.def->device());
      edit.mutable_node(i) = std::move(folded);
      continue;
    }
    std::vector<std::string>& names = output_consts[node.name()];
    for (std::size_t k = 0; k < values.size(); ++k) {
      names.push_back(edit.add(const_node("", *values[k]), node.name() + "/folded_" + std::to_string(k)));
    }
  }
  if (made == 0) return nullptr;
  if (!output_consts.empty()) {
    for (int i = 0; i < graph.size(); ++i) {
      if (folder.ready(i)) continue;
      const graphdef::NodeDef& reader = edit.node(i);
      for (int k = 0; k < reader.input_size(); ++k) {
        const Endpoint& input =
            graph.node(i).inputs.size() > static_cast<std::size_t>(k) ? graph.node(i).inputs[k] : Endpoint{};
        if (input.node < 0 || reader.input(k).empty() || reader.input(k)[0] == '^') continue;
        const auto it = output_consts.find(graph.node(input.node).name());
        if (it != output_consts.end()) edit.mutable_node(i).set_input(k, it->second.at(input.output));
      }
    }
  }
  context.report("nodes folded", folder.evaluated());
  context.report("constants made", made);
  return edit.finish();
}

REGISTER_GRAPH_PASS("fold_constants", 20, fold_constants);

}  // namespace
}  // namespace graphrun
