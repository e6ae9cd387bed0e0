#include "exec/kernel_context.h"

#include <memory>

namespace graphrun {

KernelContext::KernelContext(const Graph& graph, int node, std::vector<TensorPtr> inputs, VariableStore& variables)
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

Tensor* KernelContext::reusable_input(int i) {
  const TensorPtr& input = input_ptr(i);
  // use_count 1: this context holds the only reference, so no other node,
  // feed, fetch or variable can observe the change. Borrowed memory (a mapped
  // weights file) is read-only whoever holds it.
  return input.use_count() == 1 && !input->is_borrowed() ? const_cast<Tensor*>(input.get()) : nullptr;
}

bool KernelContext::input_is_constant(int i) const {
  if (i < 0 || i >= static_cast<int>(node_.inputs.size())) return false;
  const GraphNode* producer = &graph_.node(node_.inputs[i].node);
  for (int hops = 0; producer->op() == "Identity" && !producer->inputs.empty() && hops < 64; ++hops) {
    producer = &graph_.node(producer->inputs[0].node);
  }
  return producer->is_valid_const();
}

const std::string& KernelContext::ref_variable(int i) const { return graph_.node(node_.inputs.at(i).node).name(); }

const graphdef::NodeDef& KernelContext::ref_variable_def(int i) const {
  return *graph_.node(node_.inputs.at(i).node).def;
}

const graphdef::AttrValue& KernelContext::attr(const std::string& name) const {
  return node_.kernel->attr(*node_.def, name);
}

DataType KernelContext::attr_type(const std::string& name) const { return attr(name).type(); }

bool KernelContext::attr_bool(const std::string& name) const { return attr(name).b(); }

int64_t KernelContext::attr_int(const std::string& name) const { return attr(name).i(); }

float KernelContext::attr_float(const std::string& name) const { return attr(name).f(); }

const std::string& KernelContext::attr_string(const std::string& name) const { return attr(name).s(); }

std::vector<int64_t> KernelContext::attr_int_list(const std::string& name) const {
  return node_.kernel->get_int_list(*node_.def, name);
}

void KernelContext::set_output(int i, TensorPtr value) { outputs_.at(i) = std::move(value); }

void KernelContext::set_output(int i, Tensor&& value) {
  set_output(i, std::make_shared<const Tensor>(std::move(value)));
}

}  // namespace graphrun
