// Static shapes for graphrun-cc inspect: each node's outputs by its kernel's
// shape rule (graph/shape_rules.h), in dependency order. An op without a
// rule has unknown outputs, never guessed ones.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/shape_rules.h"

namespace graphrun {

// One entry per node, one StaticShape per output of it.
std::vector<std::vector<StaticShape>> infer_shapes(const Graph& graph);

}  // namespace graphrun
