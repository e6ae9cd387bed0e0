#include "exec/variable_store.h"

namespace graphrun {

TensorPtr VariableStore::read(const std::string& name) const {
  auto found = values_.find(name);
  if (found == values_.end()) {
    throw RunError("variable '" + name + "' is not initialized; run its initializer first");
  }
  return found->second;
}

}  // namespace graphrun
