// What a kernel sees while it runs one node: its inputs, its attrs (defaults
// applied), the variable store, and where to put its outputs.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "core/errors.h"
#include "core/tensor.h"
#include "exec/variable_store.h"

namespace graphrun {

class KernelContext {
 public:
  KernelContext(const Graph& graph, int node, std::vector<TensorPtr> inputs, VariableStore& variables);

  const graphdef::NodeDef& node_def() const { return *node_.def; }
  const Kernel& kernel() const { return *node_.kernel; }

  // A data input's value. Ref inputs have none: use ref_variable().
  const Tensor& input(int i) const { return *input_ptr(i); }
  const TensorPtr& input_ptr(int i) const;

  // Input i as a tensor this kernel may overwrite and pass on as an output,
  // when nothing else holds it (the executor lets go of each value at its
  // last consumer, and feeds, variables and other uses keep their own
  // reference); nullptr otherwise. The kernel must then write every element
  // it reads only before writing it.
  Tensor* reusable_input(int i);

  // True when data input i is a Const's value (through Identity nodes): the
  // same every run, so a kernel may keep what it derives from it (oneDNN's
  // reordered weights). Const is never feedable, so no run replaces it.
  bool input_is_constant(int i) const;

  // The variable node a ref input names (its name keys the variable store).
  const std::string& ref_variable(int i) const;
  const graphdef::NodeDef& ref_variable_def(int i) const;

  // The node's state from its kernel's prepare step (Kernel::prepare),
  // made once at load; T must be the type that step returns.
  template <class T>
  const T& state() const {
    const T* state = std::any_cast<T>(&node_.state);
    if (state == nullptr) throw Error("internal error: the kernel's prepared state is missing or of another type");
    return *state;
  }

  // Attrs looked up by name, for kernels without a prepare step.
  const graphdef::AttrValue& attr(const std::string& name) const;
  DataType attr_type(const std::string& name) const;
  bool attr_bool(const std::string& name) const;
  int64_t attr_int(const std::string& name) const;
  float attr_float(const std::string& name) const;
  const std::string& attr_string(const std::string& name) const;
  std::vector<int64_t> attr_int_list(const std::string& name) const;
  int num_inputs() const { return static_cast<int>(inputs_.size()); }

  VariableStore& variables() { return variables_; }
  // The graph the node belongs to (functional ops reach its function library).
  const Graph& graph() const { return graph_; }

  // True when every consumer of this node's output in the run reads channel
  // blocks (Kernel::reads_channel_blocks) and nothing fetches it: a
  // convolution may then leave its output in them.
  bool may_write_channel_blocks() const { return may_write_channel_blocks_; }
  void allow_channel_blocks() { may_write_channel_blocks_ = true; }

  void set_output(int i, TensorPtr value);
  void set_output(int i, Tensor&& value);
  std::vector<TensorPtr>& outputs() { return outputs_; }

 private:
  const Graph& graph_;
  const GraphNode& node_;
  std::vector<TensorPtr> inputs_;
  VariableStore& variables_;
  std::vector<TensorPtr> outputs_;
  bool may_write_channel_blocks_ = false;
};

}  // namespace graphrun
