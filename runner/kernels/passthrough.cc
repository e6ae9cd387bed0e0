// Ops that hand their input on unchanged (sharing it, not copying it), and
// NoOp, which exists only to carry control dependencies.
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

void pass_input_through(KernelContext& context) { context.set_output(0, context.input_ptr(0)); }

// Identity carries TensorList variants through loop bodies, and strings.
REGISTER_KERNEL(Kernel("Identity")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T", dtypes_string_and_variant())
                    .shape(same_as_input(0))
                    .compute(pass_input_through));

// Only gradients treat StopGradient specially; running forward it is Identity.
REGISTER_KERNEL(Kernel("StopGradient")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_string())
                    .shape(same_as_input(0))
                    .compute(pass_input_through));

REGISTER_KERNEL(Kernel("NoOp").compute([](KernelContext&) {}));

}  // namespace
}  // namespace graphrun
