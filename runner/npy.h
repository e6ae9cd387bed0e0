// A reader for numpy's .npy files (format versions 1, 2 and 3), for --feed
// NAME=@file.npy. The header is parsed as data, never evaluated.
#pragma once

#include <string>

#include "tensor.h"

namespace graphrun {

// Little-endian (or byte-sized) float32/64, int8/16/32/64, uint8/16/32/64 and
// bool, C order. Throws Error for anything else or a malformed file.
Tensor read_npy(const std::string& path);

}  // namespace graphrun
