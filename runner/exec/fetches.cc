#include "exec/fetches.h"

#include <algorithm>
#include <utility>

#include "core/errors.h"
#include "graph/input_name.h"

namespace graphrun {

std::vector<Fetch> resolve_fetches(const Graph& graph, const std::vector<std::string>& arguments) {
  std::vector<Fetch> fetches;
  for (const std::string& argument : arguments) {
    const InputName parsed = parse_input_name(argument);
    if (parsed.is_control) throw UsageError("cannot fetch '" + argument + "': a control input is not a tensor");
    const int node = graph.find(parsed.node);
    if (node < 0) {
      throw UsageError("cannot fetch '" + argument + "': the graph has no node '" + parsed.node + "'" +
                       fetch_hint(graph, parsed.node));
    }
    const int outputs = static_cast<int>(graph.node(node).output_dtypes.size());
    if (outputs == 0) {
      throw UsageError("cannot fetch '" + argument + "': " + graph.node(node).describe() + " has no outputs");
    }
    if (parsed.output < 0 || parsed.output >= outputs) {
      throw UsageError("cannot fetch '" + argument + "': " + graph.node(node).describe() + " has " +
                       (outputs == 1 ? std::string("only output 0") : "outputs 0.." + std::to_string(outputs - 1)));
    }
    if (graph.node(node).output_dtypes[parsed.output] == graphdef::DT_VARIANT) {
      throw UsageError("cannot fetch '" + argument + "': it is a variant (such as a TensorList), which has no " +
                       "elements to print or save; fetch a tensor made from it (TensorListStack, TensorListGetItem)");
    }
    fetches.push_back({{node, parsed.output}, tensor_name(parsed.node, parsed.output)});
  }
  return fetches;
}

bool is_lowering_residue(const GraphNode& node) {
  // TensorFlow's lowering of functional control flow leaves one unread
  // Placeholder per lowered input, named "[scope/]unused_control_flow_input[_N]".
  static const std::string kStem = "unused_control_flow_input";
  if (node.op() != "Placeholder") return false;
  const std::string& name = node.name();
  const std::size_t slash = name.rfind('/');
  const std::string leaf = slash == std::string::npos ? name : name.substr(slash + 1);
  if (leaf.compare(0, kStem.size(), kStem) != 0) return false;
  const std::string rest = leaf.substr(kStem.size());
  if (rest.empty()) return true;
  if (rest.size() < 2 || rest[0] != '_') return false;
  return rest.find_first_not_of("0123456789", 1) == std::string::npos;
}

namespace {

// Levenshtein distance, or limit + 1 once it must exceed `limit`
// (graphdef/graphrun/suggest.py ranks the same way).
std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t limit) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > limit) return limit + 1;
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    std::size_t row_min = current[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1])});
      row_min = std::min(row_min, current[j]);
    }
    if (row_min > limit) return limit + 1;
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::string fetch_hint(const Graph& graph, const std::string& name) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, int>> scored;  // (distance, node): ties in file order
  for (int i = 0; i < graph.size(); ++i) {
    const std::size_t d = edit_distance(name, graph.node(i).name(), limit);
    if (d <= limit) scored.emplace_back(d, i);
  }
  std::sort(scored.begin(), scored.end());
  std::string text;
  for (std::size_t k = 0; k < scored.size() && k < 3; ++k) {
    text += (k ? ", '" : "; closest names: '") + graph.node(scored[k].second).name() + "'";
  }
  const std::vector<Fetch> outputs = default_fetches(graph);
  for (std::size_t k = 0; k < outputs.size() && k < 5; ++k)
    text += (k ? ", " : "; the model's outputs: ") + outputs[k].name;
  if (outputs.size() > 5) text += " and " + std::to_string(outputs.size() - 5) + " more";
  return text;
}

std::vector<Fetch> default_fetches(const Graph& graph) {
  std::vector<char> consumed(graph.size(), 0);
  for (int i = 0; i < graph.size(); ++i) {
    for (const Endpoint& input : graph.node(i).inputs) consumed[input.node] = 1;
    for (int control : graph.node(i).control_inputs) consumed[control] = 1;
  }
  std::vector<Fetch> fetches;
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    if (consumed[i] || is_lowering_residue(node)) continue;
    for (int k = 0; k < static_cast<int>(node.output_dtypes.size()); ++k) {
      if (node.output_dtypes[k] == graphdef::DT_VARIANT) continue;  // nothing to print (resolve_fetches)
      fetches.push_back({{i, k}, tensor_name(node.name(), k)});
    }
  }
  return fetches;
}

}  // namespace graphrun
