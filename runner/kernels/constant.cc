// Const: a tensor stored in the node's `value` attr.
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/tensor_proto.h"
#include "graph/shape_rules.h"
#include "graph/external_weights.h"

namespace graphrun {
namespace {

// Decoded once, at load, and shared by every run: a model's weights are
// never copied per run, and no kernel reuses them in place (the node's state
// holds a reference). Decoding here also makes a bad constant (short
// tensor_content, hostile shape) a model error at load time rather than a
// failure half-way through a run.
// An external value is mapped, checked and set as the node's state by graph
// validation, which knows the model's directory; only its dtype is checked here.
std::any decode_const(const Kernel& kernel, const graphdef::NodeDef& node) {
  if (has_external_value(node)) {
    const DataType held = kernel.attr(node, "value").tensor().dtype();
    if (held != kernel.get_type(node, "dtype")) {
      throw Error("attr 'value' holds a " + dtype_name(held) + " tensor but attr 'dtype' is " +
                  dtype_name(kernel.get_type(node, "dtype")));
    }
    return TensorPtr();
  }
  TensorPtr decoded;
  try {
    decoded = std::make_shared<const Tensor>(tensor_from_proto(kernel.attr(node, "value").tensor()));
  } catch (const TensorLimitError& error) {  // named as the Python runtime names it
    throw TensorLimitError(std::string("attr 'value': ") + error.what());
  } catch (const Error& error) {
    throw Error(std::string("attr 'value': ") + error.what());
  }
  const DataType declared = kernel.get_type(node, "dtype");
  if (decoded->dtype() != declared) {
    throw Error("attr 'value' holds a " + dtype_name(decoded->dtype()) + " tensor but attr 'dtype' is " +
                dtype_name(declared));
  }
  return decoded;
}

void const_shape(ShapeContext& context) {
  context.set_output(0, static_shape_of(context.node().def->attr().at("value").tensor().tensor_shape()));
}

REGISTER_KERNEL(Kernel("Const")
                    .output("dtype")
                    .type_attr("dtype", dtypes_and_string())
                    .tensor_attr("value")
                    .prepare(decode_const)
                    .shape(const_shape)
                    .compute([](KernelContext& context) { context.set_output(0, context.state<TensorPtr>()); }));

}  // namespace
}  // namespace graphrun
