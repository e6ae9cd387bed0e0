// TF1 control flow: Switch, Merge, Enter, Exit, NextIteration, LoopCond,
// ControlTrigger. Their meaning is in how values move (dead branches,
// frames, iterations), which exec/frame_executor.cc implements; a graph
// holding any of them runs there. The kernels below are the part that is an
// ordinary computation on one node's inputs.
#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

void pass_input_through(KernelContext& context) { context.set_output(0, context.input_ptr(0)); }

// Forwards data to output_false (0) or output_true (1); the frame executor
// marks the output left unset dead.
REGISTER_KERNEL(Kernel("Switch")
                    .input("data", "T")
                    .input("pred", graphdef::DT_BOOL)
                    .output("T")
                    .output("T")
                    .type_attr("T", dtypes_and_variant())
                    .output_names({"output_false", "output_true"})
                    .compute([](KernelContext& context) {
                      const Tensor& pred = context.input(1);
                      if (pred.rank() != 0) {
                        throw Error("pred must be a scalar, not a " + shape_string(pred.shape()) + " tensor");
                      }
                      context.set_output(pred.data<bool>()[0] ? 1 : 0, context.input_ptr(0));
                    }));

// Merge takes its first live input, which only the frame executor knows;
// it never calls this.
REGISTER_KERNEL(Kernel("Merge")
                    .list_input("inputs", "N", "T")
                    .output("T")
                    .output(graphdef::DT_INT32)
                    .type_attr("T", dtypes_and_variant())
                    .int_attr("N", 1)
                    .output_names({"output", "value_index"})
                    .compute([](KernelContext&) {
                      throw Error("internal error: Merge ran outside the frame executor");
                    }));

// Enters a child frame (a while loop's body and condition); with
// is_constant, its value is the same in every iteration.
REGISTER_KERNEL(Kernel("Enter")
                    .input("data", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_variant())
                    .choice_attr("frame_name", {})
                    .bool_attr("is_constant", false)
                    .int_attr("parallel_iterations", 1, 10)
                    .compute(pass_input_through));

REGISTER_KERNEL(
    Kernel("Exit").input("data", "T").output("T").type_attr("T", dtypes_and_variant()).compute(pass_input_through));

REGISTER_KERNEL(Kernel("NextIteration")
                    .input("data", "T")
                    .output("T")
                    .type_attr("T", dtypes_and_variant())
                    .compute(pass_input_through));

REGISTER_KERNEL(
    Kernel("LoopCond").input("input", graphdef::DT_BOOL).output(graphdef::DT_BOOL).compute([](KernelContext& context) {
      const Tensor& pred = context.input(0);
      if (pred.rank() != 0) {
        throw Error("input must be a scalar, not a " + shape_string(pred.shape()) + " tensor");
      }
      pass_input_through(context);
    }));

// A NoOp that runs even when its inputs are dead.
REGISTER_KERNEL(Kernel("ControlTrigger").compute([](KernelContext&) {}));

}  // namespace
}  // namespace graphrun
