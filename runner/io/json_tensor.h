// A --feed VALUE written as JSON -> a tensor of the placeholder's dtype.
#pragma once

#include <string>

#include "core/tensor.h"

namespace graphrun {

// A number, true/false, or a rectangular nested array of them (NaN and
// Infinity are not JSON and are refused, as Python's graphrun refuses them).
// Each value goes into `dtype` by convert_exactly's rule. Throws Error.
Tensor tensor_from_json(const std::string& text, DataType dtype);

}  // namespace graphrun
