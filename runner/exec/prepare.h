// What the run and bench verbs share before anything executes: the model,
// the feeds (--feed, --feeds, then --random for what is still needed), the
// --run targets and the fetches, resolved in graphrun's order so the first
// error a user sees is the one graphrun reports.
#pragma once

#include <memory>
#include <vector>

#include "cli/cli.h"
#include "exec/executor.h"
#include "exec/fetches.h"
#include "graph/graph.h"
#include "passes/pass.h"

namespace graphrun {

struct Prepared {
  std::unique_ptr<const Graph> graph;
  FeedMap feeds;
  std::vector<int> runs;
  std::vector<Fetch> fetches;
  PassReport passes;  // what the graph passes changed
};

// Throws ModelError or UsageError.
Prepared prepare(const Options& options);

// prepare() for a graph already loaded (options.model is not read).
Prepared prepare(std::unique_ptr<const Graph> graph, const Options& options);

// Runs the graph passes (runner/passes) on prepared.graph, keeping the fed,
// fetched and run nodes, and moves the feeds, runs and fetches to the
// rewritten graph's node indices. prepare() calls it last, with `enabled`
// false under --no-optimize.
void optimize(Prepared& prepared, bool enabled = true);

// "x float32 [8,784] random (seed 0), k int32 [] --feed": the feeds as
// graphrun bench lists them, in the order graphrun gathers them.
std::string describe_feeds(const Prepared& prepared, const Options& options);

}  // namespace graphrun
