// Graph passes: rewrites of a loaded, validated graph made once, before any
// node runs, so the executor runs whatever graph it is given and knows no
// optimization. Each pass lives in its own file in runner/passes/ and
// registers itself with REGISTER_GRAPH_PASS and a rank; passes run in rank
// order, each on the graph the one before produced:
//
//   rank 5    prune                what no fetch, feed or run target needs
//   rank 10   remove_identities    Identity/Snapshot/StopGradient/NoOp nobody can tell apart
//   rank 20   fold_constants       all-constant subgraphs evaluated once, as Consts
//   rank 30   fold_batch_norms     inference batch norms into Conv2D/Depthwise/MatMul weights
//   rank 32   fold_pads            zero Pads into the next convolution's EXPLICIT padding
//   rank 33   fold_pads_into_max_pools  zero Pads and the MaxPool after them as one _ZeroPadMaxPool
//   rank 35   prune_folded         the same, for what the folding passes left unread
//   rank 40   eliminate_common_subexpressions
//   rank 90   move_bias_before_reshape  a Const bias added after the Reshape of a MatMul or
//             BatchMatMulV2 by a Const W (Keras' Dense on a sequence), moved before it
//   rank 100  fuse_conv_bias_activation  Conv2D / DepthwiseConv2dNative / MatMul (or
//             BatchMatMulV2 by a 2-D filter) -> BiasAdd (-> Relu, Relu6, Elu, LeakyRelu or
//             x * Sigmoid(x)) as one _Fused* node
//   rank 110  fuse_residual_add    such a convolution -> Add (-> activation): the Add as
//             a oneDNN sum post-op
//   rank 112  fuse_pointwise_depthwise  a 1x1 _FusedConv2D read only by a 3x3
//             _FusedDepthwiseConv2dNative as one _FusedPointwiseDepthwise (oneDNN's
//             depthwise post-op), where channel blocks are off
//   rank 115  fuse_layer_norm      Keras' and tf.nn's layer norm over the last axis (Mean,
//             SquaredDifference, Mean, Rsqrt, Muls, Adds) as one _FusedLayerNorm node
//   rank 120  fuse_elementwise     chains of float32 elementwise ops on one tensor and
//             scalars as one _FusedElementwise node, run a cache-sized block at a time
//
// They are the C++ form of graphdef/optimize (the Python runtime's passes).
// GRAPHRUN_CC_OPTIMIZE=0 in the environment, or --no-optimize, turns every
// pass off.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph.pb.h"
#include "graph/graph.h"
#include "graph/shape_inference.h"

namespace graphrun {

// What a pass must leave alone: the nodes a run feeds (a feed replaces the
// node, so rewriting it or its inputs is pointless), and the nodes whose
// outputs are fetched or that are run as targets (they must keep their
// name and outputs; what computes them may change).
struct PassContext {
  std::unordered_set<std::string> fed;
  std::unordered_set<std::string> fetched;

  bool pinned(const std::string& node) const { return fed.count(node) || fetched.count(node); }

  // What the running pass changed, for inspect and bench --profile
  // ("nodes folded", 270). run_graph_passes collects it after each pass; a
  // pass that reports nothing is described by its change in node count.
  void report(const std::string& what, int64_t count) const {
    if (count) counts.emplace_back(what, count);
  }
  mutable std::vector<std::pair<std::string, int64_t>> counts;

  // The static shapes of `graph`, inferred once for every pass that reads
  // them (six do) until one rewrites the graph: run_graph_passes forgets
  // them then.
  const std::vector<std::vector<StaticShape>>& shapes(const Graph& graph) const;
  void forget_shapes() const {
    shapes_.reset();
    shapes_of_ = nullptr;
  }

 private:
  mutable std::shared_ptr<const std::vector<std::vector<StaticShape>>> shapes_;
  mutable const Graph* shapes_of_ = nullptr;
};

// What the passes did to one graph.
struct PassReport {
  struct Step {
    std::string pass;
    int nodes_before = 0, nodes_after = 0;
    std::vector<std::pair<std::string, int64_t>> counts;
  };
  bool enabled = false;
  int nodes_before = 0, nodes_after = 0;
  std::vector<Step> steps;  // the passes that changed something, in order

  // "optimize: 812 nodes -> 312 (fold_constants: 270 nodes folded; ...)",
  // or "optimize: off" / "optimize: nothing to do".
  std::string summary() const;
  // {"enabled": true, "nodes_before": 812, "nodes_after": 312, "passes": [...]}
  std::string json() const;
};

// A pass reads `graph` (validated, inputs resolved) and returns the
// rewritten GraphDef, or nullptr when it changes nothing. It may write ops
// declared internal (Kernel::internal). The rewritten graph is validated as
// a model file is before the next pass sees it.
using GraphPassFn = std::unique_ptr<graphdef::GraphDef> (*)(const Graph& graph, const PassContext& context);

struct GraphPass {
  std::string name;
  int rank;
  GraphPassFn run;
};

class GraphPassRegistry {
 public:
  // Returns true so it can initialize a static; see REGISTER_GRAPH_PASS.
  static bool add(GraphPass pass);
  static std::vector<GraphPass> in_order();
};

// False when GRAPHRUN_CC_OPTIMIZE is "0".
bool optimization_enabled();

// Runs every registered pass in rank order (none when optimization is
// off) and returns the final graph. Node names the context pins survive.
// `report`, when given, says what each pass changed.
std::unique_ptr<const Graph> run_graph_passes(std::unique_ptr<const Graph> graph, const PassContext& context,
                                              PassReport* report = nullptr);

#define REGISTER_GRAPH_PASS(name, rank, fn)                                                 \
  [[maybe_unused]] static const bool GRAPHRUN_CONCAT(graph_pass_registered_, __COUNTER__) = \
      ::graphrun::GraphPassRegistry::add(::graphrun::GraphPass{name, rank, fn})

}  // namespace graphrun
