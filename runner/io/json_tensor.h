// A --feed VALUE written as JSON -> a tensor of the placeholder's dtype.
#pragma once

#include <string>

#include "core/tensor.h"

namespace graphrun {

// A number, true/false, or a rectangular nested array of them (NaN and
// Infinity are not JSON and are refused, as Python's graphrun refuses them).
// Each value goes into `dtype` by convert_exactly's rule. Throws Error in
// graphrun's words (graphdef/client/feeds.py), checked in its order: nesting
// deeper than kMaxRank, unparsable text, ragged arrays, elements of other
// kinds, true/false mixed with numbers, numbers beyond float64, then each
// element's conversion; `target` ("placeholder 'x' (float32)") names the
// placeholder in the messages that concern it.
Tensor tensor_from_json(const std::string& text, DataType dtype, const std::string& target);

// The error of convert_exactly, which names the dtype ("300 is out of range
// for uint8"), reworded to name `target` as graphrun does.
std::string conversion_error_for(const std::string& message, DataType dtype, const std::string& target);

}  // namespace graphrun
