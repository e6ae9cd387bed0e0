// Dead-node removal (TF's strip_unused_nodes, graphdef/optimize/passes/
// prune.py): only what the fetches, the run targets and the feeds need stays.
// The executor would skip the rest anyway; pruning it frees the Consts the
// folding passes replaced, and leaves single uses the fusion pass needs.
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

// A Const that waits for nothing: a control edge from it orders nothing (it
// has no effect and cannot fail at run time), so it keeps nothing needed.
// Keras' frozen graphs hang every weight on a NoOp by such edges, which
// kept ResNet50's unfolded filters (94 MiB) alive beside the folded ones.
bool is_free_const(const GraphNode& node) {
  return node.op() == "Const" && node.inputs.empty() && node.control_inputs.empty();
}

std::unique_ptr<graphdef::GraphDef> prune(const Graph& graph, const PassContext& context) {
  // Without fetches nothing says what is needed; with control flow the
  // executor's own frame rules decide.
  if (context.fetched.empty() || has_control_flow(graph)) return nullptr;
  std::vector<char> needed(graph.size(), 0);
  std::vector<int> stack;
  for (int i = 0; i < graph.size(); ++i) {
    if (context.pinned(graph.node(i).name())) stack.push_back(i);
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (needed[i]) continue;
    needed[i] = 1;
    for (const Endpoint& input : graph.node(i).inputs) stack.push_back(input.node);
    for (int control : graph.node(i).control_inputs) {
      if (!is_free_const(graph.node(control))) stack.push_back(control);
    }
  }
  GraphEdit edit(graph);
  int64_t removed = 0;
  for (int i = 0; i < graph.size(); ++i) {
    if (!needed[i]) {
      edit.remove(i);
      ++removed;
      continue;
    }
    bool drops = false;
    for (int control : graph.node(i).control_inputs) drops = drops || !needed[control];
    if (!drops) continue;
    // Control inputs come last, as "^name"; drop those on removed Consts.
    auto* inputs = edit.mutable_node(i).mutable_input();
    for (int k = inputs->size(); k-- > 0;) {
      const std::string& input = inputs->Get(k);
      if (input.empty() || input[0] != '^') break;
      const int control = graph.find(input.substr(1));
      if (control >= 0 && !needed[control]) inputs->DeleteSubrange(k, 1);
    }
  }
  if (!removed) return nullptr;
  context.report("unused nodes removed", removed);
  return edit.finish();
}

// First so folding never computes what nothing needs; again after the
// folding passes, which leave the values they replaced unread.
REGISTER_GRAPH_PASS("prune", 5, prune);
REGISTER_GRAPH_PASS("prune_folded", 35, prune);

}  // namespace
}  // namespace graphrun
