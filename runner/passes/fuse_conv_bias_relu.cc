// Conv2D -> BiasAdd (-> Relu) in float32 as one _FusedConv2D node, the form
// TensorFlow's grappler remapper gives the same chain: inputs (input,
// filter, bias), fused_ops ["BiasAdd"] or ["BiasAdd", "Relu"]. Its kernel
// adds the bias and applies ReLU to each tile of the product while the tile
// is still in cache, saving the BiasAdd and Relu passes over memory, with
// the same float arithmetic, so fusing changes no bit.
//
// A chain is fused only where nothing can tell: no chain node is fed, the
// intermediate values (the convolution's, and the BiasAdd's when a Relu
// follows) are not fetched and have exactly one use (that next node's input
// 0) and no control dependants, and where the bias is statically known to
// fit the filter's output channels, so a bias that does not fit is still
// reported by the BiasAdd node that has it. The fused node takes the name
// of the chain's last node, so fetches of it and its consumers are
// unchanged.
#include <algorithm>

#include "graph/shape_inference.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

struct Chain {
  int conv = -1, bias_add = -1, relu = -1;
  int last() const { return relu >= 0 ? relu : bias_add; }
};

class ChainFinder {
 public:
  ChainFinder(const Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), shapes_(infer_shapes(graph)), data_uses_(graph.size(), 0),
        control_uses_(graph.size(), 0), consumer_(graph.size(), -1) {
    for (int i = 0; i < graph.size(); ++i) {
      for (const Endpoint& input : graph.node(i).inputs) {
        ++data_uses_[input.node];
        consumer_[input.node] = i;
      }
      for (int control : graph.node(i).control_inputs) ++control_uses_[control];
    }
  }

  // The chain starting at node i, or one with bias_add -1.
  Chain chain_at(int i) const {
    Chain chain;
    const GraphNode& node = graph_.node(i);
    if (node.op() != "Conv2D" || node.output_dtypes[0] != graphdef::DT_FLOAT || context_.fed.count(node.name())) {
      return chain;
    }
    chain.conv = i;
    chain.bias_add = sole_consumer(i, "BiasAdd");
    if (chain.bias_add < 0) return chain;
    if (!bias_fits(node.inputs[1], graph_.node(chain.bias_add).inputs[1])) {
      chain.bias_add = -1;
      return chain;
    }
    chain.relu = sole_consumer(chain.bias_add, "Relu");
    return chain;
  }

 private:
  // The unfed `op` node that reads `producer`'s output 0 as its input 0,
  // when that is the producer's only use and nobody else can see it; -1
  // otherwise.
  int sole_consumer(int producer, const char* op) const {
    if (data_uses_[producer] != 1 || control_uses_[producer] != 0 ||
        context_.fetched.count(graph_.node(producer).name())) {
      return -1;
    }
    const int consumer = consumer_[producer];
    const GraphNode& node = graph_.node(consumer);
    if (node.op() != op || context_.fed.count(node.name()) || node.inputs[0].node != producer ||
        node.inputs[0].output != 0) {
      return -1;
    }
    return consumer;
  }

  // A filter [KH,KW,C,out] and a bias [out], as far as static shapes tell.
  bool bias_fits(const Endpoint& filter, const Endpoint& bias) const {
    // Nodes that shape inference never reached (loop bodies) have no entry.
    if (shapes_[filter.node].size() <= static_cast<std::size_t>(filter.output) ||
        shapes_[bias.node].size() <= static_cast<std::size_t>(bias.output)) {
      return false;
    }
    const StaticShape& f = shapes_[filter.node][filter.output];
    const StaticShape& b = shapes_[bias.node][bias.output];
    return f.known_rank && f.dims.size() == 4 && f.dims[3] >= 0 && b.known_rank && b.dims.size() == 1 &&
           b.dims[0] == f.dims[3];
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>> shapes_;
  std::vector<int> data_uses_, control_uses_, consumer_;
};

void add_control_inputs(const graphdef::NodeDef& from, graphdef::NodeDef& to) {
  for (const std::string& input : from.input()) {
    if (input.empty() || input[0] != '^') continue;
    if (std::find(to.input().begin(), to.input().end(), input) == to.input().end()) to.add_input(input);
  }
}

graphdef::NodeDef fused_node(const Graph& graph, const Chain& chain) {
  const graphdef::NodeDef& conv = *graph.node(chain.conv).def;
  const graphdef::NodeDef& bias_add = *graph.node(chain.bias_add).def;
  const graphdef::NodeDef& last = *graph.node(chain.last()).def;
  graphdef::NodeDef fused;
  fused.set_name(last.name());
  fused.set_op("_FusedConv2D");
  fused.set_device(last.device());
  // Data inputs come before control inputs (validation insists), so a
  // Conv2D's first two inputs are its input and filter, a BiasAdd's second
  // its bias.
  fused.add_input(conv.input(0));
  fused.add_input(conv.input(1));
  fused.add_input(bias_add.input(1));
  add_control_inputs(conv, fused);
  add_control_inputs(bias_add, fused);
  if (chain.relu >= 0) add_control_inputs(last, fused);
  for (const auto& [name, value] : conv.attr()) {
    // Underscored attrs (_output_shapes, _class) describe the Conv2D alone.
    if (name.empty() || name[0] != '_') (*fused.mutable_attr())[name] = value;
  }
  auto& attrs = *fused.mutable_attr();
  attrs["num_args"].set_i(1);
  auto* fused_ops = attrs["fused_ops"].mutable_list();
  fused_ops->add_s("BiasAdd");
  if (chain.relu >= 0) fused_ops->add_s("Relu");
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_conv_bias_relu(const Graph& graph, const PassContext& context) {
  const ChainFinder finder(graph, context);
  std::vector<Chain> chains;
  std::vector<char> removed(graph.size(), 0);
  std::vector<int> chain_ending_at(graph.size(), -1);
  for (int i = 0; i < graph.size(); ++i) {
    const Chain chain = finder.chain_at(i);
    if (chain.bias_add < 0) continue;
    removed[chain.conv] = 1;
    if (chain.relu >= 0) removed[chain.bias_add] = 1;
    chain_ending_at[chain.last()] = static_cast<int>(chains.size());
    chains.push_back(chain);
  }
  if (chains.empty()) return nullptr;
  auto rewritten = std::make_unique<graphdef::GraphDef>();
  const graphdef::GraphDef& def = graph.def();
  if (def.has_library()) *rewritten->mutable_library() = def.library();
  if (def.has_versions()) *rewritten->mutable_versions() = def.versions();
  // The fused node takes its last node's place in the file order.
  for (int i = 0; i < graph.size(); ++i) {
    if (removed[i]) continue;
    if (chain_ending_at[i] >= 0) *rewritten->add_node() = fused_node(graph, chains[chain_ending_at[i]]);
    else *rewritten->add_node() = *graph.node(i).def;
  }
  return rewritten;
}

REGISTER_GRAPH_PASS("fuse_conv_bias_relu", 100, fuse_conv_bias_relu);

}  // namespace
}  // namespace graphrun
