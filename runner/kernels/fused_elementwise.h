// What the _FusedElementwise kernel (fused_elementwise.cc) can run as one of
// its steps, for the pass that writes it (passes/fuse_elementwise.cc).
#pragma once

#include <string>

namespace graphrun {

// Whether float32 `op` (a TF op type) can be a step; *binary, when given,
// says whether it takes two operands.
bool fusable_elementwise_op(const std::string& op, bool* binary = nullptr);

}  // namespace graphrun
