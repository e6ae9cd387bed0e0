// The paddings operand of Pad, PadV2 and MirrorPad: one [before, after] pair
// per dim of the input, checked once for all three.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

// The pairs, flattened (before_0, after_0, before_1, ...), after checking the
// operand's [rank, 2] shape and that no amount is negative; `padded` receives
// the padded shape, overflow-checked (the Tensor constructor then checks it
// against the size limit).
std::vector<int64_t> read_paddings(const Tensor& x, const Tensor& paddings, Shape& padded);

}  // namespace graphrun
