#include "kernels/index_input.h"

namespace graphrun {

std::vector<int64_t> read_index_vector(const Tensor& tensor, const std::string& what, bool allow_scalar) {
  if (tensor.rank() > 1 || (tensor.rank() == 0 && !allow_scalar)) {
    throw Error(what + " must be " + (allow_scalar ? "a scalar or " : "") + "1-D, got shape " +
                shape_string(tensor.shape()));
  }
  std::vector<int64_t> values(static_cast<std::size_t>(tensor.num_elements()));
  if (tensor.dtype() == graphdef::DT_INT32) {
    const int32_t* data = tensor.data<int32_t>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = data[i];
  } else if (tensor.dtype() == graphdef::DT_INT64) {
    const int64_t* data = tensor.data<int64_t>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = data[i];
  } else {
    throw Error(what + " must be int32 or int64, got " + dtype_name(tensor.dtype()));
  }
  return values;
}

std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  // A scalar accepts axis 0 (or -1) and reduces nothing, as TensorFlow and
  // Python's graphrun allow; treating it as one pseudo-axis catches repeats.
  const int64_t span = rank == 0 ? 1 : rank;
  std::vector<int> normalized;
  std::vector<char> seen(static_cast<std::size_t>(span), 0);
  for (int64_t axis : axes) {
    if (axis < -span || axis >= span) {
      throw Error("axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
    }
    const int64_t positive = axis < 0 ? axis + span : axis;
    if (seen[positive]) throw Error("axis " + std::to_string(positive) + " is listed twice");
    seen[positive] = 1;
    if (rank > 0) normalized.push_back(static_cast<int>(positive));
  }
  return normalized;
}

}  // namespace graphrun
