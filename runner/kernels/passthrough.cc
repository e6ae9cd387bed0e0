// Ops that hand their input on unchanged (sharing it, not copying it), and
// NoOp, which exists only to carry control dependencies.
#include "exec/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

void pass_input_through(KernelContext& context) { context.set_output(0, context.input_ptr(0)); }

// Identity carries TensorList variants through loop bodies.
REGISTER_KERNEL(Kernel("Identity")
                    .input("input", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_variant())
                    .compute(pass_input_through));

// Only gradients treat StopGradient specially; running forward it is Identity.
REGISTER_KERNEL(Kernel("StopGradient").input("input", "T").output("T").type_attr("T").compute(pass_input_through));

REGISTER_KERNEL(Kernel("NoOp").compute([](KernelContext&) {}));

}  // namespace
}  // namespace graphrun
