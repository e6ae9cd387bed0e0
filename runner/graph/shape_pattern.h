// A TensorShapeProto used as a pattern (a placeholder's or a variable's
// `shape` attr): -1 dims and unknown rank match anything.
#pragma once

#include <string>

#include "graph.pb.h"
#include "core/tensor.h"

namespace graphrun {

bool shape_matches(const graphdef::TensorShapeProto& pattern, const Shape& shape);

// "[?,3]" with ? for an unknown dim; "<unknown>" when the rank is unknown
// (the form Python's graphrun uses in messages).
std::string pattern_string(const graphdef::TensorShapeProto& pattern);

}  // namespace graphrun
