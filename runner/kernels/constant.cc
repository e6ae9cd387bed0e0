// Const: a tensor stored in the node's `value` attr.
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "graph/tensor_proto.h"
#include "graph/shape_rules.h"
#include "io/external_weights.h"

namespace graphrun {
namespace {

void check_const(const Kernel& kernel, const graphdef::NodeDef& node) {
  // Decoding here makes a bad constant (short tensor_content, hostile shape)
  // a model error at load time rather than a failure half-way through a run.
  // An external value is checked by graph validation as it maps it.
  const DataType held = has_external_value(node) ? kernel.attr(node, "value").tensor().dtype()
                                                 : tensor_from_proto(kernel.attr(node, "value").tensor()).dtype();
  const DataType declared = kernel.get_type(node, "dtype");
  if (held != declared) {
    throw Error("attr 'value' holds a " + dtype_name(held) + " tensor but attr 'dtype' is " +
                dtype_name(declared));
  }
}

void compute_const(KernelContext& context) {
  if (has_external_value(context.node_def())) {
    // Shared, never copied: the graph keeps its own reference, so no kernel
    // ever gets it as a reusable input to overwrite.
    context.set_output(0, context.state<ExternalValue>().tensor);
    return;
  }
  context.set_output(0, tensor_from_proto(context.attr("value").tensor()));
}

void const_shape(ShapeContext& context) {
  context.set_output(0, static_shape_of(context.node().def->attr().at("value").tensor().tensor_shape()));
}

REGISTER_KERNEL(Kernel("Const")
                    .output("dtype")
                    .type_attr("dtype")
                    .tensor_attr("value")
                    .check(check_const)
                    .shape(const_shape)
                    .compute(compute_const));

}  // namespace
}  // namespace graphrun
