// TF1 variables: VariableV2 reads its value from the process's variable
// store; Assign, AssignAdd and AssignSub write the variable their ref input
// names and output the new value (the optimizers' update ops are in
// optimizers.cc).
#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_pattern.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

const std::vector<DataType> kNumeric = dtypes_of(NumericTypes{});

void assign(KernelContext& context) {
  const std::string& variable = context.ref_variable(0);
  const TensorPtr& value = context.input_ptr(1);
  if (context.attr_bool("validate_shape")) {
    const auto& variable_attrs = context.ref_variable_def(0).attr();
    const auto declared = variable_attrs.find("shape");
    if (declared != variable_attrs.end() && !shape_matches(declared->second.shape(), value->shape())) {
      throw Error("cannot assign a value of shape " + shape_string(value->shape()) + " to variable '" + variable +
                  "' of shape " + pattern_string(declared->second.shape()));
    }
    if (context.variables().contains(variable)) {
      const TensorPtr current = context.variables().read(variable);
      if (current->shape() != value->shape()) {
        throw Error("cannot assign a value of shape " + shape_string(value->shape()) + " to variable '" + variable +
                    "', which holds shape " + shape_string(current->shape()));
      }
    }
  }
  // Tensors are immutable once shared, so the variable can hold the very
  // value that was assigned.
  context.variables().write(variable, value);
  context.set_output(0, value);
}

// AssignAdd / AssignSub: variable = variable (op) value, same shape, no
// broadcasting (as in TensorFlow).
template <bool kAdd>
void assign_update(KernelContext& context) {
  const std::string& variable = context.ref_variable(0);
  const TensorPtr current = context.variables().read(variable);
  const Tensor& value = context.input(1);
  if (current->shape() != value.shape()) {
    throw Error("variable '" + variable + "' has shape " + shape_string(current->shape()) +
                " but the value has shape " + shape_string(value.shape()));
  }
  dispatch(NumericTypes{}, value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor updated(value.dtype(), value.shape());
    const T* a = current->data<T>();
    const T* b = value.data<T>();
    T* out = updated.data<T>();
    for (int64_t i = 0; i < value.num_elements(); ++i) out[i] = kAdd ? add(a[i], b[i]) : sub(a[i], b[i]);
    auto shared = std::make_shared<const Tensor>(std::move(updated));
    context.variables().write(variable, shared);
    context.set_output(0, shared);
  });
}

REGISTER_KERNEL(Kernel("VariableV2")
                    .output("dtype")
                    .type_attr("dtype")
                    .required_shape_attr("shape")
                    .string_attr("container", "")
                    .string_attr("shared_name", "")
                    .holds_variable()
                    .shape(shape_from_attr("shape"))
                    .compute([](KernelContext& context) {
                      context.set_output(0, context.variables().read(context.node_def().name()));
                    }));

REGISTER_KERNEL(Kernel("Assign")
                    .ref_input("ref", "T")
                    .input("value", "T")
                    .output("T")
                    .type_attr("T")
                    .bool_attr("validate_shape", true)
                    .bool_attr("use_locking", true)
                    .shape(same_as_input(0))
                    .compute(assign));

REGISTER_KERNEL(Kernel("AssignAdd")
                    .ref_input("ref", "T")
                    .input("value", "T")
                    .output("T")
                    .type_attr("T", kNumeric)
                    .bool_attr("use_locking", false)
                    .shape(same_as_input(0))
                    .compute(assign_update<true>));

REGISTER_KERNEL(Kernel("AssignSub")
                    .ref_input("ref", "T")
                    .input("value", "T")
                    .output("T")
                    .type_attr("T", kNumeric)
                    .bool_attr("use_locking", false)
                    .shape(same_as_input(0))
                    .compute(assign_update<false>));

}  // namespace
}  // namespace graphrun
