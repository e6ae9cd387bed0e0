#include "exec/run_targets.h"

#include "core/errors.h"
#include "graph/input_name.h"

namespace graphrun {

std::vector<int> resolve_run_targets(const Graph& graph, const std::vector<std::string>& arguments) {
  std::vector<int> targets;
  for (const std::string& argument : arguments) {
    const InputName parsed = parse_input_name(argument);
    if (parsed.is_control) {
      throw UsageError("unknown run target '" + argument + "': name the node without '^'");
    }
    const int node = graph.find(parsed.node);
    if (node < 0) throw UsageError("unknown run target '" + argument + "': no node is named '" + parsed.node + "'");
    // "node:k" must name a tensor the node has; plain "node" runs any node,
    // NoOps (which have no outputs) included.
    const bool as_tensor = argument != parsed.node;
    const int outputs = static_cast<int>(graph.node(node).output_dtypes.size());
    if (as_tensor && (parsed.output < 0 || parsed.output >= outputs)) {
      throw UsageError("unknown run target '" + argument + "': " + graph.node(node).describe() + " has " +
                       (outputs == 0 ? "no outputs; run it as '" + parsed.node + "'"
                                     : std::to_string(outputs) + (outputs == 1 ? " output" : " outputs")));
    }
    targets.push_back(node);
  }
  return targets;
}

}  // namespace graphrun
