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

}  // namespace graphrun
