// The work of one graphrun-cc invocation once its arguments are resolved:
// the --run targets in order (the last one --steps times), then the fetches,
// all sharing one variable store, so what a run writes (an initializer, a
// training step) is what the next run and the fetches read.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/executor.h"
#include "graph/graph.h"

namespace graphrun {

struct Work {
  std::vector<int> runs;          // nodes, executed in this order
  int64_t steps = 1;              // executions of the last run
  std::vector<Endpoint> fetches;  // evaluated once, after the runs
};

// Plans every run and the fetches before executing any of them, so a
// placeholder some run needs and nobody fed is reported (UsageError) before
// the variables change. Returns one value per fetch; throws RunError.
std::vector<TensorPtr> execute(const Graph& graph, const FeedMap& feeds, const Work& work);

}  // namespace graphrun
