#include "graph/shape_pattern.h"

namespace graphrun {

bool shape_matches(const graphdef::TensorShapeProto& pattern, const Shape& shape) {
  if (pattern.unknown_rank()) return true;
  if (pattern.dim_size() != static_cast<int>(shape.size())) return false;
  for (int i = 0; i < pattern.dim_size(); ++i) {
    const int64_t want = pattern.dim(i).size();
    if (want >= 0 && want != shape[i]) return false;
  }
  return true;
}

std::string pattern_string(const graphdef::TensorShapeProto& pattern) {
  if (pattern.unknown_rank()) return "<unknown>";
  std::string out = "[";
  for (int i = 0; i < pattern.dim_size(); ++i) {
    if (i > 0) out += ',';
    const int64_t dim = pattern.dim(i).size();
    out += dim < 0 ? "?" : std::to_string(dim);
  }
  out += ']';
  return out;
}

}  // namespace graphrun
