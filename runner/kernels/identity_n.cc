// IdentityN: its inputs, of the dtypes the list attr T names, handed on
// unchanged (shared, not copied).
#include "exec/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

void compute_identity_n(KernelContext& context) {
  for (int i = 0; i < context.num_inputs(); ++i) context.set_output(i, context.input_ptr(i));
}

REGISTER_KERNEL(Kernel("IdentityN")
                    .type_list_input("input", "T")
                    .type_list_output("T")
                    .type_list_attr("T", 1)
                    .compute(compute_identity_n));

}  // namespace
}  // namespace graphrun
