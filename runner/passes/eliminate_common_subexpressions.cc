// Common subexpression elimination: two stateless nodes of one op type with
// the same inputs, in the same order, and the same attrs compute the same
// values; the later one's readers read the first, and it goes
// (graphdef/optimize/passes/cse.py). Identical Consts merge too. Nodes are
// visited in dependency order, so duplicates of duplicates merge in one go.
// A fed or fetched node is never the one that goes.
#include <map>
#include <unordered_map>

#include "graph/input_name.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

std::unique_ptr<graphdef::GraphDef> eliminate_common_subexpressions(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  GraphEdit edit(graph);
  std::unordered_map<std::string, GraphEdit::Move> moves;
  std::unordered_map<std::string, std::string> first_with_key;
  for (int i : topological_order(graph)) {
    const GraphNode& node = graph.node(i);
    if (node.output_dtypes.empty() || context.fed.count(node.name()) ||
        (node.op() != "Const" && is_stateful(node))) {
      continue;
    }
    // The key: op, inputs as they read once the duplicates found so far
    // are gone, then the attrs in name order.
    std::string key = node.op();
    key += '\0';
    for (const std::string& text : node.def->input()) {
      InputName name = parse_input_name(text);
      const auto moved = moves.find(name.node);
      if (moved != moves.end()) name.node = moved->second.to;
      key += name.is_control ? "^" + name.node : input_text(name.node, name.output);
      key += '\0';
    }
    const std::map<std::string, graphdef::AttrValue> attrs(node.def->attr().begin(), node.def->attr().end());
    for (const auto& [attr, value] : attrs) {
      std::string bytes;
      if (!value.SerializeToString(&bytes)) bytes = "?" + node.name();  // never equal to another's
      key += attr + '\0' + std::to_string(bytes.size()) + '\0' + bytes;
    }
    const auto [it, inserted] = first_with_key.emplace(std::move(key), node.name());
    if (inserted || context.pinned(node.name())) continue;
    moves[node.name()] = {it->second, -1};
    edit.remove(i);
  }
  if (moves.empty()) return nullptr;
  edit.redirect(moves);
  context.report("duplicates merged", static_cast<int64_t>(moves.size()));
  return edit.finish();
}

REGISTER_GRAPH_PASS("eliminate_common_subexpressions", 40, eliminate_common_subexpressions);

}  // namespace
}  // namespace graphrun
