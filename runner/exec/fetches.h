// Which tensors a run prints: the --fetch arguments, or the default set.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace graphrun {

struct Fetch {
  Endpoint endpoint;
  std::string name;  // canonical "node:k"
};

// "node" means output 0; "node:k" output k. Throws UsageError.
std::vector<Fetch> resolve_fetches(const Graph& graph, const std::vector<std::string>& arguments);

// Every output of every node that no node consumes (as data or control
// input), in file order; nodes without outputs (NoOp) add nothing.
std::vector<Fetch> default_fetches(const Graph& graph);

// TensorFlow's lowering residue: an unread Placeholder named
// "[scope/]unused_control_flow_input[_N]", neither an input nor an output.
bool is_lowering_residue(const GraphNode& node);

// "; closest names: 'a', 'b'; the model's outputs: x:0, y:0" for a node name
// the graph lacks: up to 3 names within max(2, size/3) edits, nearest first,
// and up to 5 outputs.
std::string fetch_hint(const Graph& graph, const std::string& name);

}  // namespace graphrun
