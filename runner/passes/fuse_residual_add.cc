// Residual connections: Add(conv, other) (-> activation), where conv is a
// _FusedConv2D or _FusedDepthwiseConv2dNative with fused_ops ["BiasAdd"]
// (what fuse_conv_bias_activation made of Conv2D -> BiasAdd), becomes that
// node with fused_ops ["BiasAdd", "Add"] or ["BiasAdd", "Add", act] and
// num_args 2, inputs (input, filter, bias, other): the form of TF's
// oneDNN remapper. ResNet's bottlenecks end Conv -> Add -> Relu, MobileNetV2's
// inverted residuals Conv -> Add. The kernel (kernels/conv_common.h,
// run_residual_conv) runs oneDNN's sum post-op: the output buffer starts as
// `other` (taken over when nothing else holds it) and the convolution adds
// into it, saving the Add's pass over both tensors and its output buffer.
// Its arithmetic is the Add's: (conv + bias) + other, one float32 rounding,
// then the activation.
//
// Only where nothing can tell: no node of the pattern fed, the convolution's
// and (when an activation follows) the Add's value not fetched, read once and
// without control dependants. The fused node takes the name of the
// pattern's last node. `other` must be float32 of the convolution's output
// shape as far as static shapes tell (Conv2D has no shape rule, so usually
// they tell little): a rank other than 4, a size that differs or a dim of 1
// facing one that is not known to be 1 (a broadcast) keeps the Add. Shapes
// that turn out to broadcast at run time are still added right, the slow way.
#include <algorithm>

#include "graph/shape_inference.h"
#include "kernels/lib/window.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

bool is_fused_conv(const std::string& op) { return op == "_FusedConv2D" || op == "_FusedDepthwiseConv2dNative"; }

bool is_activation(const std::string& op) { return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu"; }

struct Residual {
  int conv = -1, add = -1, activation = -1;
  int other = -1;  // which input of the Add is not the convolution
  int last() const { return activation >= 0 ? activation : add; }
};

class ResidualFinder {
 public:
  ResidualFinder(const Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), shapes_(context.shapes(graph)), readers_(graph) {}

  // The pattern whose Add is node i, or one with conv -1.
  Residual at(int i) const {
    Residual found;
    const GraphNode& add = graph_.node(i);
    if ((add.op() != "Add" && add.op() != "AddV2") || !add.runnable() || add.inputs.size() != 2 ||
        add.output_dtypes[0] != graphdef::DT_FLOAT || context_.fed.count(add.name())) {
      return found;
    }
    // The second input first: in Keras' graphs it is the block's own branch.
    for (int k : {1, 0}) {
      const Endpoint& input = add.inputs[k];
      const Endpoint& other = add.inputs[1 - k];
      if (input.output != 0 || input.node == other.node || !fusable_conv(input.node, i)) continue;
      if (!shapes_may_match(input.node, other)) continue;
      found.conv = input.node;
      found.add = i;
      found.other = 1 - k;
      break;
    }
    if (found.conv < 0) return found;
    const std::vector<int> uses = private_uses(i);
    if (uses.size() == 1) {
      const GraphNode& next = graph_.node(uses[0]);
      if (is_activation(next.op()) && !context_.fed.count(next.name()) && next.runnable() && !next.inputs.empty() &&
          next.inputs[0].node == i && next.inputs[0].output == 0) {
        found.activation = uses[0];
      }
    }
    return found;
  }

 private:
  // A _Fused conv with only its bias fused, read once (by `reader`) and seen by nobody else.
  bool fusable_conv(int conv, int reader) const {
    const GraphNode& node = graph_.node(conv);
    if (!is_fused_conv(node.op()) || !node.runnable() || context_.pinned(node.name())) return false;
    const auto& attrs = node.def->attr();
    const auto ops = attrs.find("fused_ops");
    const auto args = attrs.find("num_args");
    if (ops == attrs.end() || ops->second.list().s_size() != 1 || ops->second.list().s(0) != "BiasAdd" ||
        args == attrs.end() || args->second.i() != 1 || node.inputs.size() != 3) {
      return false;
    }
    const std::vector<int> uses = private_uses(conv);
    return uses.size() == 1 && uses[0] == reader;
  }

  std::vector<int> private_uses(int producer) const { return readers_.private_uses(producer, context_); }

  const StaticShape* shape_of(const Endpoint& e) const {
    const auto& outputs = shapes_[e.node];
    return static_cast<std::size_t>(e.output) < outputs.size() ? &outputs[e.output] : nullptr;
  }

  // The convolution's output shape as far as its input's and filter's static
  // shapes tell (Conv2D itself has no shape rule).
  std::vector<int64_t> conv_output_dims(int conv) const {
    std::vector<int64_t> dims(4, -1);
    const GraphNode& node = graph_.node(conv);
    const StaticShape* x = shape_of(node.inputs[0]);
    const StaticShape* f = shape_of(node.inputs[1]);
    const bool x4 = x && x->known_rank && x->dims.size() == 4, f4 = f && f->known_rank && f->dims.size() == 4;
    if (x4) dims[0] = x->dims[0];
    if (f4 && node.op() == "_FusedConv2D") dims[3] = f->dims[3];
    int64_t channels;
    if (f4 && node.op() == "_FusedDepthwiseConv2dNative" && f->dims[2] >= 0 && f->dims[3] >= 0 &&
        !__builtin_mul_overflow(f->dims[2], f->dims[3], &channels)) {
      dims[3] = channels;
    }
    if (x4 && f4 && x->dims[1] >= 0 && x->dims[2] >= 0 && f->dims[0] >= 0 && f->dims[1] >= 0) {
      try {
        const WindowAttrs attrs = read_window_attrs(*node.kernel, *node.def, true, true);
        const WindowGeometry g = window_geometry(attrs, f->dims[0], f->dims[1], x->dims[1], x->dims[2]);
        dims[1] = g.rows.out;
        dims[2] = g.cols.out;
      } catch (const std::exception&) {
        // the node's run reports it
      }
    }
    return dims;
  }

  bool shapes_may_match(int conv, const Endpoint& other) const {
    const StaticShape* o = shape_of(other);
    if (!o || !o->known_rank) return true;
    if (o->dims.size() != 4) return false;
    const std::vector<int64_t> c = conv_output_dims(conv);
    for (int d = 0; d < 4; ++d) {
      if (c[d] >= 0 && o->dims[d] >= 0 && c[d] != o->dims[d]) return false;
      // A 1 facing a size not known to be 1 may be a broadcast.
      if ((c[d] == 1) != (o->dims[d] == 1)) return false;
    }
    return true;
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  GraphReaders readers_;
};

graphdef::NodeDef fused_node(const Graph& graph, const Residual& r) {
  const graphdef::NodeDef& conv = *graph.node(r.conv).def;
  const graphdef::NodeDef& add = *graph.node(r.add).def;
  const graphdef::NodeDef& last = *graph.node(r.last()).def;
  graphdef::NodeDef fused;
  fused.set_name(last.name());
  fused.set_op(conv.op());
  fused.set_device(last.device());
  // Data inputs come before control inputs: the conv's first three are
  // (input, filter, bias), the Add's first two its operands.
  for (int k = 0; k < 3; ++k) fused.add_input(conv.input(k));
  fused.add_input(add.input(r.other));
  add_control_inputs(conv, fused);
  add_control_inputs(add, fused);
  if (r.activation >= 0) add_control_inputs(last, fused);
  *fused.mutable_attr() = conv.attr();
  auto& attrs = *fused.mutable_attr();
  attrs["num_args"].set_i(2);
  auto* ops = attrs["fused_ops"].mutable_list();
  ops->add_s("Add");
  if (r.activation >= 0) {
    ops->add_s(last.op());
    if (last.op() == "LeakyRelu") {
      const auto alpha = last.attr().find("alpha");
      attrs["leakyrelu_alpha"].set_f(alpha != last.attr().end() ? alpha->second.f() : 0.2f);
    }
  }
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_residual_add(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const ResidualFinder finder(graph, context);
  GraphEdit edit(graph);
  int64_t fused = 0;
  for (int i = 0; i < graph.size(); ++i) {
    const Residual r = finder.at(i);
    if (r.conv < 0) continue;
    // The fused node takes the last node's place (and name) in the file.
    edit.mutable_node(r.last()) = fused_node(graph, r);
    edit.remove(r.conv);
    if (r.activation >= 0) edit.remove(r.add);
    ++fused;
  }
  if (!fused) return nullptr;
  context.report("residual adds fused into convolutions", fused);
  return edit.finish();
}

// After fuse_conv_bias_activation, whose _Fused nodes it extends.
REGISTER_GRAPH_PASS("fuse_residual_add", 110, fuse_residual_add);

}  // namespace
}  // namespace graphrun
