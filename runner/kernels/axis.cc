#include "kernels/axis.h"

namespace graphrun {

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    throw Error(what + " " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                std::to_string(rank) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

AxisView axis_view(const Shape& shape, int64_t axis) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) view.outer *= shape[d];
    else if (d == axis) view.dim = shape[d];
    else view.inner *= shape[d];
  }
  return view;
}

std::vector<int64_t> read_ints(const Tensor& tensor) {
  std::vector<int64_t> values(static_cast<std::size_t>(tensor.num_elements()));
  dispatch(IntTypes{}, tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = tensor.data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(data[i]);
  });
  return values;
}

int64_t read_scalar_int(const Tensor& tensor, const std::string& what) {
  if (tensor.num_elements() != 1) {
    throw Error(what + " must be a single value, got shape " + shape_string(tensor.shape()));
  }
  return read_ints(tensor)[0];
}

}  // namespace graphrun
