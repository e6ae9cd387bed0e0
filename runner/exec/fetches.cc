#include "exec/fetches.h"

#include "core/errors.h"
#include "graph/input_name.h"

namespace graphrun {

std::vector<Fetch> resolve_fetches(const Graph& graph, const std::vector<std::string>& arguments) {
  std::vector<Fetch> fetches;
  for (const std::string& argument : arguments) {
    const InputName parsed = parse_input_name(argument);
    if (parsed.is_control) throw UsageError("cannot fetch '" + argument + "': a control input is not a tensor");
    const int node = graph.find(parsed.node);
    if (node < 0) throw UsageError("unknown fetch '" + argument + "': no node is named '" + parsed.node + "'");
    const int outputs = static_cast<int>(graph.node(node).output_dtypes.size());
    if (outputs == 0) {
      throw UsageError("cannot fetch '" + argument + "': " + graph.node(node).describe() + " has no outputs");
    }
    if (parsed.output < 0 || parsed.output >= outputs) {
      throw UsageError("unknown fetch '" + argument + "': " + graph.node(node).describe() + " has " +
                       std::to_string(outputs) + (outputs == 1 ? " output" : " outputs"));
    }
    if (graph.node(node).output_dtypes[parsed.output] == graphdef::DT_VARIANT) {
      throw UsageError("cannot fetch '" + argument + "': it is a variant (such as a TensorList), which has no " +
                       "elements to print or save; fetch a tensor made from it (TensorListStack, TensorListGetItem)");
    }
    fetches.push_back({{node, parsed.output}, tensor_name(parsed.node, parsed.output)});
  }
  return fetches;
}

std::vector<Fetch> default_fetches(const Graph& graph) {
  std::vector<char> consumed(graph.size(), 0);
  for (int i = 0; i < graph.size(); ++i) {
    for (const Endpoint& input : graph.node(i).inputs) consumed[input.node] = 1;
    for (int control : graph.node(i).control_inputs) consumed[control] = 1;
  }
  std::vector<Fetch> fetches;
  for (int i = 0; i < graph.size(); ++i) {
    if (consumed[i]) continue;
    const GraphNode& node = graph.node(i);
    for (int k = 0; k < static_cast<int>(node.output_dtypes.size()); ++k) {
      if (node.output_dtypes[k] == graphdef::DT_VARIANT) continue;  // nothing to print (resolve_fetches)
      fetches.push_back({{i, k}, tensor_name(node.name(), k)});
    }
  }
  return fetches;
}

}  // namespace graphrun
