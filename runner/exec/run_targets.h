// What --run names: nodes executed for their effects (an initializer, a
// training step), before the fetches are printed.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace graphrun {

// "node" or a tensor name "node:k" (both mean the node). Throws UsageError
// naming a target that is not in the graph.
std::vector<int> resolve_run_targets(const Graph& graph, const std::vector<std::string>& arguments);

}  // namespace graphrun
