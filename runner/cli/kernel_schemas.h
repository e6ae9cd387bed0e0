// `graphrun-cc --list-kernels --json`: every kernel's declaration (inputs, outputs,
// attrs with kinds, defaults and allowed dtypes) as one JSON document, so a test can hold
// it against the Python registry, the one definition of each op's signature.
#pragma once

#include <string>

namespace graphrun {

std::string kernel_schemas_json();

}  // namespace graphrun
