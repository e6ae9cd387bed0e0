// Static shapes for graphrun-cc inspect: what can be known about each
// node's outputs without running anything, by the same rules graphrun's
// shape functions apply, for the ops where that is cheap (placeholders and
// variables by their shape attr, Consts, elementwise ops with numpy
// broadcasting, MatMul, reductions and ArgMax with constant axes, Reshape
// with a constant shape, ...). Anything else is unknown, never guessed.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace graphrun {

struct StaticShape {
  bool known_rank = false;
  std::vector<int64_t> dims;  // -1: unknown dim
};

// One entry per node, one StaticShape per output of it.
std::vector<std::vector<StaticShape>> infer_shapes(const Graph& graph);

}  // namespace graphrun
