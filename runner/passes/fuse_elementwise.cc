// Elementwise chains: float32 elementwise ops (kernels/fused_elementwise.h
// lists them) computing from one tensor x and scalar Consts, each reading
// only values of the chain, become one _FusedElementwise node, which runs
// every step on a cache-sized block before the next block. A Transformer's
// tanh GELU is eight such ops over its widest activation; unfused, each is
// a pass over memory.
//
// A chain grows backwards from its last node (up to kMaxSteps nodes, then
// the next chain ends where it stopped): an input joins when its node
// is such an op, reads output 0 only, is not fed or fetched, has no control
// dependants and is read only by nodes already in the chain; a rank-0 float
// Const is a scalar operand; anything else is the chain's x, which must be
// one and the same tensor. So every value of the chain has x's shape, and
// the fused node (named as the last node, reading x and the scalars) gives
// the same output bit for bit: each step is its op's own arithmetic.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "graph/tensor_proto.h"
#include "kernels/fused_elementwise.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

bool float_op(const GraphNode& node) {
  if (!node.runnable() || node.output_dtypes.size() != 1 || node.output_dtypes[0] != graphdef::DT_FLOAT) return false;
  const auto t = node.def->attr().find("T");
  return t != node.def->attr().end() && t->second.type() == graphdef::DT_FLOAT && fusable_elementwise_op(node.op());
}

bool scalar_const(const GraphNode& node, const PassContext& context) {
  if (!node.is_valid_const() || context.fed.count(node.name())) return false;
  const auto value = node.def->attr().find("value");
  if (value == node.def->attr().end()) return false;
  const auto& tensor = value->second.tensor();
  // rank 0 (a TensorProto without a shape is one too): it cannot change the result's shape
  return tensor.dtype() == graphdef::DT_FLOAT && tensor.tensor_shape().dim_size() == 0 &&
         !tensor.tensor_shape().unknown_rank();
}

// The kernel keeps a block of every step's value (8 KB each) per thread: at
// most this many steps a node keeps them in a core's L2, and a chain of a
// million ops becomes many nodes instead of one holding gigabytes. Each
// node's steps are the same arithmetic, so the split changes no bit.
constexpr std::size_t kMaxSteps = 64;

struct Chain {
  std::vector<int> nodes;  // in topological order, the last one last
  Endpoint x;
};

class ChainFinder {
 public:
  ChainFinder(const Graph& graph, const PassContext& context) : graph_(graph), context_(context), readers_(graph) {}

  // The chain ending at `last`, or one with no nodes.
  Chain ending_at(int last, const std::vector<char>& taken, const std::vector<int>& position) const {
    Chain chain;
    const GraphNode& sink = graph_.node(last);
    if (taken[last] || !float_op(sink) || context_.fed.count(sink.name())) return chain;
    // Grow until nothing more joins: a value read by several members (the
    // GELU's input, read three times) joins once all its readers have.
    // Only a new member can let a value join (as its last reader), so each
    // member's inputs are looked at when it joins: linear in a long chain.
    std::set<int> members{last};
    for (std::vector<int> joined{last}; !joined.empty() && members.size() < kMaxSteps;) {
      const int n = joined.back();
      joined.pop_back();
      for (const Endpoint& e : graph_.node(n).inputs) {
        if (members.size() < kMaxSteps && !members.count(e.node) && joins(e, taken, members)) {
          members.insert(e.node);
          joined.push_back(e.node);
        }
      }
    }
    std::optional<Endpoint> x;
    for (int n : members) {
      for (const Endpoint& e : graph_.node(n).inputs) {
        if (members.count(e.node) || (e.output == 0 && scalar_const(graph_.node(e.node), context_))) continue;
        if (x && (x->node != e.node || x->output != e.output)) return chain;  // a second tensor
        x = e;
      }
    }
    if (!x || members.size() < 2) return chain;
    chain.nodes.assign(members.begin(), members.end());
    std::sort(chain.nodes.begin(), chain.nodes.end(), [&](int a, int b) { return position[a] < position[b]; });
    chain.x = *x;
    return chain;
  }

 private:
  bool joins(const Endpoint& e, const std::vector<char>& taken, const std::set<int>& members) const {
    const GraphNode& producer = graph_.node(e.node);
    if (e.output != 0 || taken[e.node] || !float_op(producer) || context_.pinned(producer.name())) return false;
    const std::vector<int> uses = readers_.private_uses(e.node, context_);
    if (uses.empty()) return false;
    return std::all_of(uses.begin(), uses.end(), [&](int reader) { return members.count(reader) > 0; });
  }

  const Graph& graph_;
  const PassContext& context_;
  GraphReaders readers_;
};

graphdef::NodeDef fused_node(const Graph& graph, const Chain& chain, const PassContext& context) {
  const graphdef::NodeDef& last = *graph.node(chain.nodes.back()).def;
  graphdef::NodeDef fused;
  fused.set_name(last.name());
  fused.set_op("_FusedElementwise");
  fused.set_device(last.device());
  // Inputs: x, then each scalar Const once.
  fused.add_input(input_text(graph.node(chain.x.node).name(), chain.x.output));
  std::map<int, int64_t> index;  // node -> operand index (inputs, then steps)
  std::vector<int> scalars;
  const std::set<int> members(chain.nodes.begin(), chain.nodes.end());
  std::set<int> seen_scalars;
  for (int n : chain.nodes) {
    for (const Endpoint& e : graph.node(n).inputs) {
      const bool is_x = e.node == chain.x.node && e.output == chain.x.output;
      if (!is_x && !members.count(e.node) && !seen_scalars.count(e.node) && scalar_const(graph.node(e.node), context)) {
        scalars.push_back(e.node);
        seen_scalars.insert(e.node);
      }
    }
  }
  for (std::size_t k = 0; k < scalars.size(); ++k) {
    fused.add_input(graph.node(scalars[k]).name());
    index[scalars[k]] = static_cast<int64_t>(k) + 1;
  }
  const int64_t inputs = static_cast<int64_t>(scalars.size()) + 1;
  auto& attrs = *fused.mutable_attr();
  attrs["N"].set_i(inputs);
  attrs["T"].set_type(graphdef::DT_FLOAT);
  auto* steps = attrs["steps"].mutable_list();
  auto* operands = attrs["operands"].mutable_list();
  for (std::size_t k = 0; k < chain.nodes.size(); ++k) {
    const GraphNode& node = graph.node(chain.nodes[k]);
    steps->add_s(node.op());
    bool binary = false;
    fusable_elementwise_op(node.op(), &binary);
    for (int side = 0; side < 2; ++side) {
      if (side == 1 && !binary) {
        operands->add_i(-1);
        continue;
      }
      const Endpoint& e = node.inputs[side];
      const bool is_x = e.node == chain.x.node && e.output == chain.x.output;
      operands->add_i(is_x ? 0 : index.at(e.node));
    }
    index[chain.nodes[k]] = inputs + static_cast<int64_t>(k);
    add_control_inputs(*node.def, fused);
  }
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_elementwise(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const std::vector<int> order = topological_order(graph);
  if (static_cast<int>(order.size()) != graph.size()) return nullptr;
  std::vector<int> position(graph.size());
  for (int k = 0; k < graph.size(); ++k) position[order[k]] = k;
  const ChainFinder finder(graph, context);
  std::vector<char> taken(graph.size(), 0);
  GraphEdit edit(graph);
  int64_t chains = 0, fused_ops = 0;
  // From the last node backwards, so each chain is as long as it can be.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Chain chain = finder.ending_at(*it, taken, position);
    if (chain.nodes.empty()) continue;
    for (int n : chain.nodes) taken[n] = 1;
    edit.mutable_node(chain.nodes.back()) = fused_node(graph, chain, context);
    for (std::size_t k = 0; k + 1 < chain.nodes.size(); ++k) edit.remove(chain.nodes[k]);
    ++chains;
    fused_ops += static_cast<int64_t>(chain.nodes.size());
  }
  if (!chains) return nullptr;
  context.report("elementwise ops fused", fused_ops);
  return edit.finish();
}

// Last: the bias and activation fusions take their ops first.
REGISTER_GRAPH_PASS("fuse_elementwise", 120, fuse_elementwise);

}  // namespace
}  // namespace graphrun
