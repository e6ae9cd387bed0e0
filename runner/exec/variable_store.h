// The values of the graph's variables (VariableV2 nodes), keyed by the
// variable node's name. Whoever runs a sequence of plans owns one store for
// all of them (a Session, graphrun-cc's invocation), so each run (e.g. a
// training step) sees the values earlier runs wrote.
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

  void erase(const std::string& name) { values_.erase(name); }
  const std::unordered_map<std::string, TensorPtr>& values() const { return values_; }

 private:
  std::unordered_map<std::string, TensorPtr> values_;
};

}  // namespace graphrun
