// The values of the graph's variables (VariableV2 nodes), keyed by the
// variable node's name. execute() (invocation.h) owns one store for the whole
// invocation, so a sequence of runs (e.g. training steps) sees the values
// earlier runs wrote.
#pragma once

#include <string>
#include <unordered_map>

#include "core/tensor.h"

namespace graphrun {

class VariableStore {
 public:
  bool contains(const std::string& name) const { return values_.count(name) > 0; }

  // Throws RunError when nothing has been assigned to `name` yet.
  TensorPtr read(const std::string& name) const;

  void write(const std::string& name, TensorPtr value) { values_[name] = std::move(value); }

 private:
  std::unordered_map<std::string, TensorPtr> values_;
};

}  // namespace graphrun
