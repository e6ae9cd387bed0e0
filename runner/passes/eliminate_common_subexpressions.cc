// Common subexpression elimination: two stateless nodes of one op type with
// the same inputs, in the same order, and the same attrs compute the same
// values; the later one's readers read the first, and it goes
// (graphdef/optimize/passes/cse.py). Identical Consts merge too. Nodes are
// visited in dependency order, so duplicates of duplicates merge in one go.
// A fed or fetched node is never the one that goes.
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/input_name.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

// A node's attrs in name order, each with its bytes (so -0.0 and 0.0, or
// two NaNs' payloads, stay apart, as in cse.py); a value that cannot
// serialize gets bytes no other node's can have.
using AttrBytes = std::vector<std::pair<std::string, std::string>>;

AttrBytes attr_bytes(const graphdef::NodeDef& node) {
  std::map<std::string, const graphdef::AttrValue*> sorted;
  for (const auto& [name, value] : node.attr()) sorted.emplace(name, &value);
  AttrBytes out;
  for (const auto& [name, value] : sorted) {
    std::string bytes;
    if (!value->SerializeToString(&bytes)) bytes = "?" + node.name();
    out.emplace_back(name, std::move(bytes));
  }
  return out;
}

std::unique_ptr<graphdef::GraphDef> eliminate_common_subexpressions(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  GraphEdit edit(graph);
  std::unordered_map<std::string, GraphEdit::Move> moves;
  // The nodes kept, by key. The key holds each attr's size and hash, not its
  // bytes (that would keep a second copy of every weight for the whole
  // pass), so a hit is confirmed byte for byte against the kept node.
  std::unordered_map<std::string, std::vector<int>> kept_by_key;
  for (int i : topological_order(graph)) {
    const GraphNode& node = graph.node(i);
    if (node.output_dtypes.empty() || context.fed.count(node.name()) || (node.op() != "Const" && is_stateful(node))) {
      continue;
    }
    // The key: op, inputs as they read once the duplicates found so far
    // are gone, then the attrs in name order, each as its size and hash.
    std::string key = node.op();
    key += '\0';
    for (const std::string& text : node.def->input()) {
      InputName name = parse_input_name(text);
      const auto moved = moves.find(name.node);
      if (moved != moves.end()) name.node = moved->second.to;
      key += name.is_control ? "^" + name.node : input_text(name.node, name.output);
      key += '\0';
    }
    const AttrBytes attrs = attr_bytes(*node.def);
    for (const auto& [attr, bytes] : attrs) {
      key += attr + '\0' + std::to_string(bytes.size()) + '\0' + std::to_string(std::hash<std::string_view>{}(bytes)) +
             '\0';
    }
    std::vector<int>& kept = kept_by_key[key];
    int same = -1;
    for (int k : kept) {
      if (attr_bytes(*graph.node(k).def) == attrs) {
        same = k;
        break;
      }
    }
    if (same < 0 || context.pinned(node.name())) {
      kept.push_back(i);
      continue;
    }
    moves[node.name()] = {graph.node(same).name(), -1};
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
