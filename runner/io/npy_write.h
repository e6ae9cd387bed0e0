// Writing .npy files byte for byte as numpy.save writes them (format 1.0),
// so graphrun-cc --out DIR leaves the same files as graphrun --out DIR.
#pragma once

#include <string>

#include "core/tensor.h"

namespace graphrun {

// The whole file: magic, version 1.0, the header dict numpy writes (keys
// sorted, the growth padding, spaces up to a multiple of 64 bytes, '\n'),
// then the little-endian, C-order data.
std::string npy_bytes(const Tensor& tensor);

}  // namespace graphrun
