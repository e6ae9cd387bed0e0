// What the run and bench verbs share before anything executes: the model,
// the feeds (--feed, --feeds, then --random for what is still needed), the
// --run targets and the fetches, resolved in graphrun's order so the first
// error a user sees is the one graphrun reports.
#pragma once

#include <memory>
#include <vector>

#include "cli/cli.h"
#include "session/prepared.h"

namespace graphrun {

// Throws ModelError or UsageError. Calls optimize() last, keeping the graph
// as it is under --no-optimize.
Prepared prepare(const Options& options);

// prepare() for a graph already loaded (options.model is not read).
Prepared prepare(std::unique_ptr<const Graph> graph, const Options& options);

// "x float32 [8,784] random (seed 0), k int32 [] --feed": the feeds as
// graphrun bench lists them, in the order graphrun gathers them.
std::string describe_feeds(const Prepared& prepared, const Options& options);

}  // namespace graphrun
