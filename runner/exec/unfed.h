// The placeholders a run still lacks, found before anything executes, and
// graphrun's error naming them (whose hint includes --random, which the
// executor's own last-resort check predates).
#pragma once

#include <vector>

#include "exec/executor.h"
#include "graph/graph.h"

namespace graphrun {

// The Placeholders (without a default) that running `runs` and computing
// `fetches` need and `feeds` lacks, in file order: graphrun's walk over data
// and control inputs, stopping at fed nodes.
std::vector<int> unfed_placeholders(const Graph& graph, const std::vector<int>& runs,
                                    const std::vector<Endpoint>& fetches, const FeedMap& feeds);

// Checks each run on its own, in order, then the fetches, as graphrun does;
// throws UsageError("placeholder(s) not fed: ...; use --feed NAME=VALUE, ...").
void check_fed(const Graph& graph, const std::vector<int>& runs, const std::vector<Endpoint>& fetches,
               const FeedMap& feeds);

}  // namespace graphrun
