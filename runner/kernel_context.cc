#include "kernel_context.h"

#include <memory>

namespace graphrun {

KernelContext::KernelContext(const Graph& graph, int node, std::vector<TensorPtr> inputs,
                             VariableStore& variables)
    : graph_(graph),
      node_(graph.node(node)),
      inputs_(std::move(inputs)),
      variables_(variables),
      outputs_(node_.output_dtypes.size()) {}

const TensorPtr& KernelContext::input_ptr(int i) const {
  if (i < 0 || i >= static_cast<int>(inputs_.size()) || !inputs_[i]) {
    throw Error("internal error: input " + std::to_string(i) + " has no value");
  }
  return inputs_[i];
}

const std::string& KernelContext::ref_variable(int i) const {
  return graph_.node(node_.inputs.at(i).node).name();
}

const graphdef::NodeDef& KernelContext::ref_variable_def(int i) const {
  return *graph_.node(node_.inputs.at(i).node).def;
}

const graphdef::AttrValue& KernelContext::attr(const std::string& name) const {
  return node_.kernel->attr(*node_.def, name);
}

DataType KernelContext::attr_type(const std::string& name) const { return attr(name).type(); }

bool KernelContext::attr_bool(const std::string& name) const { return attr(name).b(); }

int64_t KernelContext::attr_int(const std::string& name) const { return attr(name).i(); }

void KernelContext::set_output(int i, TensorPtr value) { outputs_.at(i) = std::move(value); }

void KernelContext::set_output(int i, Tensor&& value) {
  set_output(i, std::make_shared<const Tensor>(std::move(value)));
}

}  // namespace graphrun
