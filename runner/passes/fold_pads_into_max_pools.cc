// A zero Pad of H and W read only by a MaxPool folds into it: the pair
// becomes one _ZeroPadMaxPool node (kernels/max_pool.cc), the MaxPool's name
// and attrs with the Pad's amounts as zero_paddings. Keras' ResNet50 pads its
// stem's activation by one pixel before the 3x3 stride-2 MaxPool; as a node
// of its own the Pad writes a padded copy of the whole activation.
//
// Not TensorFlow's EXPLICIT padding, which a MaxPool skips: the Pad's zeros
// are values the MaxPool compares like any other (a window of NaN or -inf
// beside one gives +0.0, of -0.0 whichever it meets first), so the folded
// kernel keeps them as zeros in the order the padded tensor had them, and
// the result keeps its bits. The MaxPool's own padding (SAME, VALID,
// EXPLICIT) stays as it was, placed around the padded size, which the kernel
// knows when it runs: nothing here needs a static shape. _ZeroPadMaxPool is
// internal (a model file naming it is refused), and nothing in graphrun-cc
// writes the rewritten graph out, so TensorFlow never meets it.
//
// Which Pads may fold is fold_pads.cc's rule (passes/zero_pads.h). Its
// control inputs move to the MaxPool.
#include <optional>

#include "passes/graph_edit.h"
#include "passes/pass.h"
#include "passes/zero_pads.h"

namespace graphrun {
namespace {

std::unique_ptr<graphdef::GraphDef> fold_pads_into_max_pools(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const GraphReaders readers(graph);
  GraphEdit edit(graph);
  int64_t folded = 0;
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& pool = graph.node(i);
    if (pool.op() != "MaxPool" || !pool.runnable() || pool.inputs.size() != 1 || context.fed.count(pool.name())) {
      continue;
    }
    const Endpoint& input = pool.inputs[0];
    if (input.output != 0) continue;
    const std::optional<std::array<int64_t, 4>> pads = foldable_zero_pad(graph, input.node, context, readers);
    if (!pads) continue;
    graphdef::NodeDef& def = edit.mutable_node(i);
    bypass_pad(*graph.node(input.node).def, def);
    def.set_op("_ZeroPadMaxPool");
    auto* list = (*def.mutable_attr())["zero_paddings"].mutable_list();
    for (int64_t p : {int64_t{0}, int64_t{0}, (*pads)[0], (*pads)[1], (*pads)[2], (*pads)[3], int64_t{0}, int64_t{0}}) {
      list->add_i(p);
    }
    edit.remove(input.node);
    ++folded;
  }
  if (!folded) return nullptr;
  context.report("pads folded into max pools", folded);
  return edit.finish();
}

// Beside fold_pads, and before prune_folded, which then drops the paddings
// Consts left unread.
REGISTER_GRAPH_PASS("fold_pads_into_max_pools", 33, fold_pads_into_max_pools);

}  // namespace
}  // namespace graphrun
