// Pad folding: a zero Pad of the spatial dims read only by a convolution
// becomes that convolution's own padding, TensorFlow's EXPLICIT form
// (padding "EXPLICIT", explicit_paddings [0, 0, top, bottom, left, right, 0, 0]
// for NHWC), the rewrite graphdef/optimize makes for the Python runtime.
// Keras writes ZeroPadding2D before every stride-2 convolution it wants
// padded asymmetrically (MobileNetV2's depthwise blocks, ResNet50's first
// layer); as a node of its own the Pad writes a padded copy of the whole
// activation, while the convolution's kernel only has to skip the taps
// that fall outside.
//
// Forms: Pad, or PadV2 whose constant_values is a Const zero (every byte 0,
// so +0.0 for floats), with Const paddings that leave batch and channels
// alone, before Conv2D, DepthwiseConv2dNative or their _Fused forms in NHWC
// with padding VALID (the Pad's amounts), EXPLICIT (the sums) or SAME (the
// sums with SAME's own amounts, which depend on the padded size and so need
// it statically known). The padded taps are real zeros in both forms: each
// kernel's EXPLICIT padding multiplies 0 * w as the Pad's zeros would (so an
// inf weight at the border still makes NaN; the oneDNN path hands such a
// filter to the hand-written kernel, see lib/dnnl_conv.cc).
//
// Only where nothing can tell: the Pad not fed or fetched, its output read
// once, by the convolution's input, and no control dependants. Its control
// inputs move to the convolution. The filter's size must be known and each
// folded amount narrower than the window, as oneDNN's kernels need (wider
// padding, which only odd graphs have, would run the hand-written kernel).
#include <optional>

#include "graph/shape_inference.h"
#include "kernels/lib/window.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"
#include "passes/zero_pads.h"

namespace graphrun {
namespace {

bool is_conv(const std::string& op) {
  return op == "Conv2D" || op == "DepthwiseConv2dNative" || op == "_FusedConv2D" || op == "_FusedDepthwiseConv2dNative";
}

class PadFolder {
 public:
  PadFolder(const Graph& graph, const PassContext& context) : graph_(graph), context_(context), readers_(graph) {}

  // [top, bottom, left, right] of the zero Pad node `pad`, when it may fold.
  std::optional<std::array<int64_t, 4>> spatial_zero_pads(int pad) const {
    return foldable_zero_pad(graph_, pad, context_, readers_);
  }

  // The explicit_paddings conv `i` needs to read the Pad's input instead of
  // its output, or nothing when it cannot say.
  std::optional<std::vector<int64_t>> folded_paddings(int i, const std::array<int64_t, 4>& pads) const {
    const GraphNode& conv = graph_.node(i);
    WindowAttrs attrs;
    try {
      attrs = read_window_attrs(*conv.kernel, *conv.def, true, true);
    } catch (const std::exception&) {
      return std::nullopt;  // the node's own load-time check reports it
    }
    const auto format = conv.def->attr().find("data_format");
    if (format != conv.def->attr().end() && !format->second.s().empty() && format->second.s() != "NHWC") {
      return std::nullopt;
    }
    if (!shapes_) shapes_ = &context_.shapes(graph_);
    const StaticShape* x = static_shape(conv.inputs[0]);
    const StaticShape* f = static_shape(conv.inputs[1]);
    if (!f || !f->known_rank || f->dims.size() != 4 || f->dims[0] < 1 || f->dims[1] < 1) return std::nullopt;
    int64_t own[4] = {attrs.top, attrs.bottom, attrs.left, attrs.right};
    if (attrs.padding == "VALID") {
      own[0] = own[1] = own[2] = own[3] = 0;
    } else if (attrs.padding == "SAME") {
      // SAME pads the Pad's output, whose size must then be known.
      if (!x || !x->known_rank || x->dims.size() != 4 || x->dims[1] < 0 || x->dims[2] < 0) return std::nullopt;
      try {
        const WindowGeometry g = window_geometry(attrs, f->dims[0], f->dims[1], x->dims[1], x->dims[2]);
        own[0] = g.rows.before, own[1] = g.rows.after, own[2] = g.cols.before, own[3] = g.cols.after;
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    // Padding at least as wide as the window (only odd graphs have it) is
    // left to the Pad: oneDNN has no kernel for it, the hand-written one would run.
    int64_t extent[2];
    if (__builtin_mul_overflow(f->dims[0] - 1, attrs.dilation_h, &extent[0]) ||
        __builtin_mul_overflow(f->dims[1] - 1, attrs.dilation_w, &extent[1])) {
      return std::nullopt;
    }
    std::vector<int64_t> explicit_paddings = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) {
      int64_t sum;
      if (__builtin_add_overflow(pads[k], own[k], &sum) || sum > kMaxFoldedPad || sum > extent[k / 2]) {
        return std::nullopt;
      }
      explicit_paddings[2 + k] = sum;
    }
    return explicit_paddings;
  }

 private:
  const StaticShape* static_shape(const Endpoint& e) const {
    const auto& outputs = (*shapes_)[e.node];
    return static_cast<std::size_t>(e.output) < outputs.size() ? &outputs[e.output] : nullptr;
  }

  const Graph& graph_;
  const PassContext& context_;
  GraphReaders readers_;
  // Made when a Pad first meets a convolution.
  mutable const std::vector<std::vector<StaticShape>>* shapes_ = nullptr;
};

std::unique_ptr<graphdef::GraphDef> fold_pads(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const PadFolder folder(graph, context);
  GraphEdit edit(graph);
  int64_t folded = 0;
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& conv = graph.node(i);
    if (!is_conv(conv.op()) || !conv.runnable() || conv.inputs.size() < 2 || context.fed.count(conv.name())) continue;
    const Endpoint& input = conv.inputs[0];
    if (input.output != 0 || input.node == conv.inputs[1].node) continue;
    const int pad = input.node;
    const std::optional<std::array<int64_t, 4>> pads = folder.spatial_zero_pads(pad);
    if (!pads) continue;
    const std::optional<std::vector<int64_t>> explicit_paddings = folder.folded_paddings(i, *pads);
    if (!explicit_paddings) continue;
    graphdef::NodeDef& def = edit.mutable_node(i);
    bypass_pad(*graph.node(pad).def, def);
    auto& attrs = *def.mutable_attr();
    attrs["padding"].set_s("EXPLICIT");
    auto* list = attrs["explicit_paddings"].mutable_list();
    list->clear_i();
    for (int64_t p : *explicit_paddings) list->add_i(p);
    edit.remove(pad);
    ++folded;
  }
  if (!folded) return nullptr;
  context.report("pads folded into convolutions", folded);
  return edit.finish();
}

// After the batch-norm folding (which wants Conv2D nodes it can read) and
// before prune_folded, which then drops the paddings Consts left unread.
REGISTER_GRAPH_PASS("fold_pads", 32, fold_pads);

}  // namespace
}  // namespace graphrun
