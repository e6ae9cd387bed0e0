// A run that needs a node graphrun-cc cannot run is refused before anything
// executes, with one line: plain words for TF control flow, the TensorFlow
// resources (queues, readers, lookup tables, iterators) it would need, then
// every op type without a kernel, each with a node. Nodes no run needs never
// matter: any well-formed graph loads (graph/graph.h, GraphNode::support).
#pragma once

#include <string>
#include <vector>

#include "core/errors.h"
#include "exec/executor.h"
#include "graph/graph.h"

namespace graphrun {

// A run needs a node graphrun-cc cannot run (graphrun_c.h's
// GRAPHRUN_UNSUPPORTED; for the CLI, a model error like any other).
struct UnsupportedError : ModelError {
  using ModelError::ModelError;
};

// The unsupported nodes (no kernel, or a foreign dtype) that running `runs`
// and computing `fetches` need, walking data and control inputs back and
// stopping at fed nodes; in file order.
std::vector<int> needed_unsupported(const Graph& graph, const std::vector<int>& runs,
                                    const std::vector<Endpoint>& fetches, const FeedMap& feeds);

// Why those nodes cannot run, as one line (graphrun's words).
std::string describe_unsupported(const Graph& graph, const std::vector<int>& nodes);

// Throws ModelError("<model>: <why>") when the run needs any unsupported node.
void check_supported(const Graph& graph, const std::vector<int>& runs, const std::vector<Endpoint>& fetches,
                     const FeedMap& feeds);

}  // namespace graphrun
