// Dead-node removal (TF's strip_unused_nodes, graphdef/optimize/passes/
// prune.py): only what the fetches, the run targets and the feeds need stays.
// The executor would skip the rest anyway; pruning it frees the Consts the
// folding passes replaced, and leaves single uses the fusion pass needs.
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

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
    for (int control : graph.node(i).control_inputs) stack.push_back(control);
  }
  GraphEdit edit(graph);
  int64_t removed = 0;
  for (int i = 0; i < graph.size(); ++i) {
    if (!needed[i]) {
      edit.remove(i);
      ++removed;
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
