// Conv2D, DepthwiseConv2dNative or MatMul -> BiasAdd (-> activation) in
// float32 as one _FusedConv2D / _FusedDepthwiseConv2dNative / _FusedMatMul
// node, the form TensorFlow's grappler remapper gives the same chain:
// inputs (input, filter, bias), fused_ops ["BiasAdd"] or ["BiasAdd", act]
// with act one of Relu, Relu6, Elu, LeakyRelu (its alpha in
// leakyrelu_alpha) or _Swish, our name for x * Sigmoid(x) (a Mul reading
// the BiasAdd and a Sigmoid of it; TF's remapper has no such entry, and only
// passes write these ops). The kernels apply bias and activation as oneDNN
// post-ops while each block of the product is still in cache, saving the
// passes over memory. The arithmetic is not the unfused nodes' bit for bit
// (oneDNN's exp for Elu and swish, the bias added inside its kernel), which
// the numerics policy allows: the chain's tolerance is the product's plus
// the activation's.
//
// A BatchMatMulV2 by a 2-D filter (a Dense on a sequence, and what
// move_bias_before_reshape leaves of Keras' attention projections) becomes
// _FusedBatchMatMulV2, our name with the same inputs and attrs: TF's remapper
// has no such op, and only this pass writes it.
//
// A chain is fused only where nothing can tell: no chain node is fed, the
// intermediate values (the product's, the BiasAdd's when an activation
// follows, the Sigmoid's) are not fetched and have no other use and no
// control dependants, and the bias is statically known to fit the product's
// output channels, so a bias that does not fit is still reported by the
// BiasAdd node that has it. The fused node takes the name of the chain's
// last node, so fetches of it and its consumers are unchanged.
#include <algorithm>
#include <map>

#include "graph/shape_inference.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

const std::map<std::string, std::string>& fused_op_of() {
  static const std::map<std::string, std::string> ops = {{"Conv2D", "_FusedConv2D"},
                                                         {"DepthwiseConv2dNative", "_FusedDepthwiseConv2dNative"},
                                                         {"MatMul", "_FusedMatMul"},
                                                         {"BatchMatMulV2", "_FusedBatchMatMulV2"}};
  return ops;
}

struct Chain {
  int product = -1, bias_add = -1;
  int activation = -1;  // the activation node (the Mul of a swish), -1 for none
  int sigmoid = -1;     // a swish's Sigmoid
  std::string activation_name;
  int last() const { return activation >= 0 ? activation : bias_add; }
};

class ChainFinder {
 public:
  ChainFinder(const Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), shapes_(context.shapes(graph)), readers_(graph) {}

  // The chain starting at node i, or one with bias_add -1.
  Chain chain_at(int i) const {
    Chain chain;
    const GraphNode& node = graph_.node(i);
    if (!fused_op_of().count(node.op()) || node.output_dtypes[0] != graphdef::DT_FLOAT ||
        context_.fed.count(node.name())) {
      return chain;
    }
    chain.product = i;
    const std::vector<int> uses = private_uses(i);
    if (uses.size() != 1 || !reads_as_input0(uses[0], i, "BiasAdd")) return chain;
    const GraphNode& bias_add = graph_.node(uses[0]);
    const auto format = bias_add.def->attr().find("data_format");
    if (format != bias_add.def->attr().end() && format->second.s() != "NHWC") return chain;
    if (!bias_fits(node, bias_add.inputs[1])) return chain;
    chain.bias_add = uses[0];
    find_activation(chain);
    return chain;
  }

 private:
  void find_activation(Chain& chain) const {
    const std::vector<int> uses = private_uses(chain.bias_add);
    if (uses.size() == 1) {
      for (const char* op : {"Relu", "Relu6", "Elu", "LeakyRelu"}) {
        if (reads_as_input0(uses[0], chain.bias_add, op)) {
          chain.activation = uses[0];
          chain.activation_name = op;
        }
      }
      return;
    }
    if (uses.size() != 2) return;
    // x * Sigmoid(x): the Sigmoid's only use is the Mul, whose other input is x.
    for (int k = 0; k < 2; ++k) {
      const int sigmoid = uses[k], mul = uses[1 - k];
      if (!reads_as_input0(sigmoid, chain.bias_add, "Sigmoid")) continue;
      const std::vector<int> sigmoid_uses = private_uses(sigmoid);
      const GraphNode& m = graph_.node(mul);
      if (sigmoid_uses.size() != 1 || sigmoid_uses[0] != mul || m.op() != "Mul" || context_.fed.count(m.name()) ||
          m.inputs.size() != 2) {
        continue;
      }
      const Endpoint x{chain.bias_add, 0}, s{sigmoid, 0};
      auto is = [](const Endpoint& e, const Endpoint& want) { return e.node == want.node && e.output == want.output; };
      if ((is(m.inputs[0], x) && is(m.inputs[1], s)) || (is(m.inputs[0], s) && is(m.inputs[1], x))) {
        chain.activation = mul;
        chain.sigmoid = sigmoid;
        chain.activation_name = "_Swish";
        return;
      }
    }
  }

  std::vector<int> private_uses(int producer) const { return readers_.private_uses(producer, context_); }

  // Whether `consumer` is an unfed `op` node reading `producer`'s output 0 as its input 0.
  bool reads_as_input0(int consumer, int producer, const char* op) const {
    const GraphNode& node = graph_.node(consumer);
    return node.op() == op && !context_.fed.count(node.name()) && !node.inputs.empty() &&
           node.inputs[0].node == producer && node.inputs[0].output == 0;
  }

  // The product's output channels and a bias [channels], as far as static shapes tell.
  bool bias_fits(const GraphNode& product, const Endpoint& bias) const {
    const Endpoint& filter = product.inputs[1];
    // Nodes that shape inference never reached (loop bodies) have no entry.
    if (shapes_[filter.node].size() <= static_cast<std::size_t>(filter.output) ||
        shapes_[bias.node].size() <= static_cast<std::size_t>(bias.output)) {
      return false;
    }
    const StaticShape& f = shapes_[filter.node][filter.output];
    const StaticShape& b = shapes_[bias.node][bias.output];
    if (!f.known_rank || !b.known_rank || b.dims.size() != 1 || b.dims[0] < 0) return false;
    int64_t channels = -1;
    if ((product.op() == "MatMul" || product.op() == "BatchMatMulV2") && f.dims.size() == 2) {
      const auto transpose = product.def->attr().find(product.op() == "MatMul" ? "transpose_b" : "adj_y");
      channels = f.dims[transpose != product.def->attr().end() && transpose->second.b() ? 0 : 1];
    } else if (product.op() == "Conv2D" && f.dims.size() == 4) {
      channels = f.dims[3];
    } else if (product.op() == "DepthwiseConv2dNative" && f.dims.size() == 4 && f.dims[2] >= 0 && f.dims[3] >= 0) {
      channels = f.dims[2] * f.dims[3];
    }
    return channels >= 0 && b.dims[0] == channels;
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  GraphReaders readers_;
};

graphdef::NodeDef fused_node(const Graph& graph, const Chain& chain) {
  const graphdef::NodeDef& product = *graph.node(chain.product).def;
  const graphdef::NodeDef& bias_add = *graph.node(chain.bias_add).def;
  const graphdef::NodeDef& last = *graph.node(chain.last()).def;
  graphdef::NodeDef fused;
  fused.set_name(last.name());
  fused.set_op(fused_op_of().at(product.op()));
  fused.set_device(last.device());
  // Data inputs come before control inputs (validation insists), so a
  // product's first two inputs are its operands, a BiasAdd's second its bias.
  fused.add_input(product.input(0));
  fused.add_input(product.input(1));
  fused.add_input(bias_add.input(1));
  add_control_inputs(product, fused);
  add_control_inputs(bias_add, fused);
  if (chain.sigmoid >= 0) add_control_inputs(*graph.node(chain.sigmoid).def, fused);
  if (chain.activation >= 0) add_control_inputs(last, fused);
  for (const auto& [name, value] : product.attr()) {
    // Underscored attrs (_output_shapes, _class) describe the product alone.
    if (name.empty() || name[0] != '_') (*fused.mutable_attr())[name] = value;
  }
  auto& attrs = *fused.mutable_attr();
  attrs["num_args"].set_i(1);
  auto* fused_ops = attrs["fused_ops"].mutable_list();
  fused_ops->add_s("BiasAdd");
  if (chain.activation >= 0) fused_ops->add_s(chain.activation_name);
  if (chain.activation_name == "LeakyRelu") {
    const auto alpha = last.attr().find("alpha");
    attrs["leakyrelu_alpha"].set_f(alpha != last.attr().end() ? alpha->second.f() : 0.2f);
  }
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_conv_bias_activation(const Graph& graph, const PassContext& context) {
  const ChainFinder finder(graph, context);
  std::vector<Chain> chains;
  std::vector<char> removed(graph.size(), 0);
  std::vector<int> chain_ending_at(graph.size(), -1);
  for (int i = 0; i < graph.size(); ++i) {
    const Chain chain = finder.chain_at(i);
    if (chain.bias_add < 0) continue;
    removed[chain.product] = 1;
    if (chain.activation >= 0) removed[chain.bias_add] = 1;
    if (chain.sigmoid >= 0) removed[chain.sigmoid] = 1;
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

REGISTER_GRAPH_PASS("fuse_conv_bias_activation", 100, fuse_conv_bias_activation);

}  // namespace
}  // namespace graphrun
