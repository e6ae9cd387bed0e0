// `graphrun-cc --list-kernels --json`: every kernel's declaration (inputs, outputs,
// attrs with kinds, defaults and allowed dtypes) as one JSON document, so a test can hold
// it against the Python registry, the one definition of each op's signature. The internal
// kernels (graph passes' fused ops) and the dtypes graphrun-cc carries follow under their own
// keys, for docs/ops.md.
#pragma once

#include <string>

namespace graphrun {

std::string kernel_schemas_json();

}  // namespace graphrun
