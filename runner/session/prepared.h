// A graph with what one run of it feeds, runs and fetches, and the graph
// passes run on it keeping exactly those: what every client of the core
// (graphrun-cc's verbs, the C API's models and sessions) does before a plan.
#pragma once

#include <memory>
#include <vector>

#include "exec/executor.h"
#include "exec/fetches.h"
#include "graph/graph.h"
#include "passes/pass.h"

namespace graphrun {

struct Prepared {
  std::unique_ptr<const Graph> graph;
  FeedMap feeds;  // the nodes fed (a value, or nullptr where only the node matters)
  std::vector<int> runs;
  std::vector<Fetch> fetches;
  PassReport passes;  // what the graph passes changed
};

// Runs the graph passes (runner/passes) on prepared.graph, keeping the fed,
// fetched and run nodes, and moves the feeds, runs and fetches to the
// rewritten graph's node indices. With `enabled` false (--no-optimize) the
// graph stays as it is and the report says "optimize: off".
void optimize(Prepared& prepared, bool enabled = true);

}  // namespace graphrun
