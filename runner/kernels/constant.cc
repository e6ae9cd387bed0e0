// Const: a tensor stored in the node's `value` attr.
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "graph/tensor_proto.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void check_const(const Kernel& kernel, const graphdef::NodeDef& node) {
  // Decoding here makes a bad constant (short tensor_content, hostile shape)
  // a model error at load time rather than a failure half-way through a run.
  const Tensor value = tensor_from_proto(kernel.attr(node, "value").tensor());
  const DataType declared = kernel.get_type(node, "dtype");
  if (value.dtype() != declared) {
    throw Error("attr 'value' holds a " + dtype_name(value.dtype()) + " tensor but attr 'dtype' is " +
                dtype_name(declared));
  }
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
                    .compute([](KernelContext& context) {
                      context.set_output(0, tensor_from_proto(context.attr("value").tensor()));
                    }));

}  // namespace
}  // namespace graphrun
