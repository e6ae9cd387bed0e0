// Identity, Snapshot, StopGradient and PreventGradient forward their input
// unchanged at inference, so their readers can read the input directly
// (graphdef/optimize/passes/identity.py, TF's remove_nodes). One stays
// where something could tell: when it is fed or fetched, has control inputs
// to carry, or reads a variable or other stateful node (in TF1 that
// Identity is the snapshot ordering a read before later assignments). A
// NoOp nothing reads and that waits for nothing goes too.
#include <unordered_map>

#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

bool forwards(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient" || op == "PreventGradient";
}

std::unique_ptr<graphdef::GraphDef> remove_identities(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  GraphEdit edit(graph);
  const Uses uses(edit);
  std::unordered_map<std::string, GraphEdit::Move> moves;
  int noops = 0;
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    if (context.pinned(node.name()) || !node.runnable()) continue;
    if (node.op() == "NoOp" && node.def->input_size() == 0 && !uses.data[i] && !uses.control[i]) {
      edit.remove(i);
      ++noops;
      continue;
    }
    if (!forwards(node.op()) || node.inputs.size() != 1 || !node.control_inputs.empty()) continue;
    const GraphNode& producer = graph.node(node.inputs[0].node);
    if (!producer.runnable() || (is_stateful(producer) && !producer.kernel->is_feedable())) continue;
    moves[node.name()] = {producer.name(), node.inputs[0].output};
    edit.remove(i);
  }
  if (moves.empty() && noops == 0) return nullptr;
  edit.redirect(moves);
  context.report("identities removed", static_cast<int64_t>(moves.size()));
  context.report("NoOps removed", noops);
  return edit.finish();
}

REGISTER_GRAPH_PASS("remove_identities", 10, remove_identities);

}  // namespace
}  // namespace graphrun
