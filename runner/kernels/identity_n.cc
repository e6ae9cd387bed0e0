// IdentityN: its inputs, of the dtypes the list attr T names, handed on
// unchanged (shared, not copied).
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void compute_identity_n(KernelContext& context) {
  for (int i = 0; i < context.num_inputs(); ++i) context.set_output(i, context.input_ptr(i));
}

void identity_n_shape(ShapeContext& context) {
  for (int k = 0; k < context.num_inputs() && k < context.num_outputs(); ++k) context.set_output(k, context.input(k));
}

REGISTER_KERNEL(Kernel("IdentityN")
                    .type_list_input("input", "T")
                    .type_list_output("T")
                    .type_list_attr("T", 1)
                    .shape(identity_n_shape)
                    .compute(compute_identity_n));

}  // namespace
}  // namespace graphrun
