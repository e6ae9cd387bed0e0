// MobileNet's expand-then-depthwise pairs: a _FusedConv2D with a Const 1x1
// filter, stride 1 and no padding, read only by a _FusedDepthwiseConv2dNative
// with a Const 3x3 filter (multiplier 1, stride 1 or 2 both ways, no
// dilation), each with its bias and Relu, Relu6 or nothing, become one
// _FusedPointwiseDepthwise node (kernels/pointwise_depthwise.cc) under the
// depthwise's name: oneDNN then runs the depthwise on each band of the 1x1's
// output while it is in cache, instead of writing the widest tensor of the
// block out and reading it back (lib/dnnl_pointwise_depthwise.h).
//
// Only where nothing can tell: neither node fed, the 1x1's value not fetched,
// read once and without control dependants; a depthwise filter whose values
// are all finite (oneDNN skips padding taps, which TF multiplies: 0 * inf is
// NaN). Only with oneDNN on and channel blocks off (CPUs with AVX-512, where
// the fused pair is faster): where blocks are on, the depthwise chains
// already run in them.
#include <algorithm>
#include <cmath>
#include <optional>

#include "graph/tensor_proto.h"
#include "kernels/conv_common.h"
#include "kernels/lib/dnnl_runtime.h"
#include "kernels/lib/window.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

// The node's epilogue when it is a bias and Relu, Relu6 or nothing.
std::optional<Epilogue> simple_epilogue(const GraphNode& node) {
  const auto& attrs = node.def->attr();
  const auto ops = attrs.find("fused_ops");
  const auto args = attrs.find("num_args");
  if (ops == attrs.end() || args == attrs.end() || args->second.i() != 1 || node.inputs.size() != 3) {
    return std::nullopt;
  }
  try {
    const auto& list = ops->second.list().s();
    const Epilogue e = parse_fused_ops(std::vector<std::string>(list.begin(), list.end()), 0.0f);
    const bool plain =
        e.activation == Activation::kNone || e.activation == Activation::kRelu || e.activation == Activation::kRelu6;
    return plain ? std::optional<Epilogue>(e) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The float32 value of the unfed Const that `input` reads.
std::optional<Tensor> const_input(const Graph& graph, const Endpoint& input, const PassContext& context) {
  const GraphNode& node = graph.node(input.node);
  if (node.op() != "Const" || input.output != 0 || context.pinned(node.name())) return std::nullopt;
  const auto value = node.def->attr().find("value");
  if (value == node.def->attr().end()) return std::nullopt;
  try {
    Tensor t = tensor_from_proto(value->second.tensor());
    if (t.dtype() != graphdef::DT_FLOAT) return std::nullopt;
    return t;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<WindowAttrs> window_of(const GraphNode& node) {
  try {
    return read_window_attrs(*node.kernel, *node.def, true, true);
  } catch (const std::exception&) {
    return std::nullopt;  // the node's own run reports it
  }
}

// Whether depthwise node i and the 1x1 convolution it reads may fuse.
bool fusable(const Graph& graph, int i, const GraphReaders& readers, const PassContext& context) {
  const GraphNode& dw = graph.node(i);
  if (dw.op() != "_FusedDepthwiseConv2dNative" || !dw.runnable() || context.fed.count(dw.name()) ||
      !simple_epilogue(dw) || dw.inputs[0].output != 0) {
    return false;
  }
  const int producer = dw.inputs[0].node;
  const GraphNode& pw = graph.node(producer);
  if (pw.op() != "_FusedConv2D" || !pw.runnable() || context.pinned(pw.name()) || !simple_epilogue(pw)) return false;
  const std::vector<int> uses = readers.private_uses(producer, context);
  if (uses.size() != 1 || uses[0] != i) return false;
  const std::optional<WindowAttrs> pw_window = window_of(pw), dw_window = window_of(dw);
  if (!pw_window || !dw_window) return false;
  const WindowAttrs& a = *pw_window;
  const WindowAttrs& b = *dw_window;
  if (a.stride_h != 1 || a.stride_w != 1 || a.dilation_h != 1 || a.dilation_w != 1 || a.top || a.bottom || a.left ||
      a.right) {
    return false;
  }
  // Explicit pads under the window's 3, as oneDNN's convolutions take them (wider ones
  // only hostile graphs have; the separate nodes' hand-written kernels serve those).
  if (b.stride_h != b.stride_w || b.stride_h > 2 || b.dilation_h != 1 || b.dilation_w != 1 ||
      std::max({b.top, b.bottom, b.left, b.right}) > 2) {
    return false;
  }
  const std::optional<Tensor> f1 = const_input(graph, pw.inputs[1], context);
  const std::optional<Tensor> f2 = const_input(graph, dw.inputs[1], context);
  if (!f1 || !f2 || f1->rank() != 4 || f2->rank() != 4) return false;
  const Shape& s1 = f1->shape();
  const Shape& s2 = f2->shape();
  if (s1[0] != 1 || s1[1] != 1 || s2 != Shape{3, 3, s1[3], 1}) return false;
  const float* w = f2->data<float>();
  return std::all_of(w, w + f2->num_elements(), [](float v) { return std::isfinite(v); });
}

graphdef::NodeDef fused_node(const graphdef::NodeDef& pw, const graphdef::NodeDef& dw) {
  graphdef::NodeDef fused;
  fused.set_name(dw.name());
  fused.set_op("_FusedPointwiseDepthwise");
  fused.set_device(dw.device());
  for (int k = 0; k < 3; ++k) fused.add_input(pw.input(k));
  fused.add_input(dw.input(1));
  fused.add_input(dw.input(2));
  add_control_inputs(pw, fused);
  add_control_inputs(dw, fused);
  auto& attrs = *fused.mutable_attr();
  for (const char* name : {"T", "strides", "padding", "explicit_paddings", "dilations", "data_format"}) {
    const auto found = dw.attr().find(name);
    if (found != dw.attr().end()) attrs[name] = found->second;
  }
  attrs["pointwise_ops"] = pw.attr().at("fused_ops");
  attrs["fused_ops"] = dw.attr().at("fused_ops");
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_pointwise_depthwise(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph) || !dnnl_enabled() || channel_blocks_enabled()) return nullptr;
  const GraphReaders readers(graph);
  GraphEdit edit(graph);
  int64_t fused = 0;
  for (int i = 0; i < graph.size(); ++i) {
    if (!fusable(graph, i, readers, context)) continue;
    const int producer = graph.node(i).inputs[0].node;
    edit.mutable_node(i) = fused_node(*graph.node(producer).def, *graph.node(i).def);
    edit.remove(producer);
    ++fused;
  }
  if (!fused) return nullptr;
  context.report("1x1 and depthwise convolutions fused", fused);
  return edit.finish();
}

// After fuse_residual_add: a 1x1 whose output a residual Add reads is not private to a depthwise.
REGISTER_GRAPH_PASS("fuse_pointwise_depthwise", 112, fuse_pointwise_depthwise);

}  // namespace
}  // namespace graphrun
