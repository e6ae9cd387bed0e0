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
#include <vector>

#include "graph/input_name.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

using SortedAttrs = std::map<std::string, const graphdef::AttrValue*>;

SortedAttrs sorted_attrs(const graphdef::NodeDef& node) {
  SortedAttrs attrs;
  for (const auto& [name, value] : node.attr()) attrs.emplace(name, &value);
  return attrs;
}

// An attr's bytes, to compare (so -0.0 and 0.0, or two NaNs' payloads,
// stay apart, as in cse.py); a value that cannot serialize gets bytes no
// other node's can have.
std::string attr_bytes(const graphdef::AttrValue& value, const std::string& node) {
  std::string bytes;
  if (!value.SerializeToString(&bytes)) bytes = "?" + node;
  return bytes;
}

// Whether two nodes of one key have the same attrs, byte for byte. The key
// holds only each attr's size and hash (holding the bytes would keep a
// second copy of every weight for the whole pass), so a hit is confirmed
// here, one attr at a time.
bool same_attrs(const graphdef::NodeDef& a, const graphdef::NodeDef& b) {
  const SortedAttrs x = sorted_attrs(a), y = sorted_attrs(b);
  if (x.size() != y.size()) return false;
  for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
    if (i->first != j->first || attr_bytes(*i->second, a.name()) != attr_bytes(*j->second, b.name())) return false;
  }
  return true;
}

std::unique_ptr<graphdef::GraphDef> eliminate_common_subexpressions(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  GraphEdit edit(graph);
  std::unordered_map<std::string, GraphEdit::Move> moves;
  std::unordered_map<std::string, std::vector<int>> first_with_key;  // the nodes kept, by key
  for (int i : topological_order(graph)) {
    const GraphNode& node = graph.node(i);
    if (node.output_dtypes.empty() || context.fed.count(node.name()) ||
        (node.op() != "Const" && is_stateful(node))) {
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
    for (const auto& [attr, value] : sorted_attrs(*node.def)) {
      const std::string bytes = attr_bytes(*value, node.name());
      key += attr + '\0' + std::to_string(bytes.size()) + '\0' +
             std::to_string(std::hash<std::string_view>{}(bytes)) + '\0';
    }
    std::vector<int>& kept = first_with_key[key];
    int same = -1;
    for (int k : kept) {
      if (same_attrs(*graph.node(k).def, *node.def)) {
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
