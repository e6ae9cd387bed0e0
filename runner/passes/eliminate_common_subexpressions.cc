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
  // The nodes kept, by op and inputs; where two nodes share those, by op,
  // inputs and each attr's size and hash too, and a hit is then confirmed
  // byte for byte. Most nodes share no op and inputs, so their attrs are
  // never serialized; the key never holds attr bytes (that would keep a
  // second copy of every weight for the whole pass).
  struct Bucket {
    int first = -1;
    bool split = false;  // its nodes are in kept_by_attrs
  };
  std::unordered_map<std::string, Bucket> by_inputs;
  std::unordered_map<std::string, std::vector<int>> kept_by_attrs;
  auto attrs_key = [](std::string key, const AttrBytes& attrs) {
    for (const auto& [attr, bytes] : attrs) {
      key += attr + '\0' + std::to_string(bytes.size()) + '\0' + std::to_string(std::hash<std::string_view>{}(bytes)) +
             '\0';
    }
    return key;
  };
  for (int i : topological_order(graph)) {
    const GraphNode& node = graph.node(i);
    if (node.output_dtypes.empty() || context.fed.count(node.name()) || (node.op() != "Const" && is_stateful(node))) {
      continue;
    }
    // Inputs as they read once the duplicates found so far are gone.
    std::string key = node.op();
    key += '\0';
    for (const std::string& text : node.def->input()) {
      InputName name = parse_input_name(text);
      const auto moved = moves.find(name.node);
      if (moved != moves.end()) name.node = moved->second.to;
      key += name.is_control ? "^" + name.node : input_text(name.node, name.output);
      key += '\0';
    }
    Bucket& bucket = by_inputs[key];
    if (bucket.first < 0) {
      bucket.first = i;
      continue;
    }
    if (!bucket.split) {
      kept_by_attrs[attrs_key(key, attr_bytes(*graph.node(bucket.first).def))].push_back(bucket.first);
      bucket.split = true;
    }
    const AttrBytes attrs = attr_bytes(*node.def);
    std::vector<int>& kept = kept_by_attrs[attrs_key(key, attrs)];
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
