// Placeholder and PlaceholderWithDefault: the graph's inputs, given by --feed.
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_pattern.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// A variant placeholder loads (frozen Keras RNN graphs keep unused ones) but
// cannot be fed: feeds refuse DT_VARIANT.
REGISTER_KERNEL(Kernel("Placeholder")
                    .output("dtype")
                    .type_attr("dtype", dtypes_string_and_variant())
                    .shape_attr("shape")
                    .feedable(/*must_be_fed=*/true)
                    .shape(shape_from_attr("shape"))
                    .compute([](KernelContext&) {
                      // The executor refuses to plan a run with an unfed
                      // placeholder, so this only guards against a bug there.
                      throw Error("placeholder was not fed");
                    }));

REGISTER_KERNEL(Kernel("PlaceholderWithDefault")
                    .input("input", "dtype")
                    .output("dtype")
                    .type_attr("dtype", dtypes_and_string())
                    .required_shape_attr("shape")
                    .feedable(/*must_be_fed=*/false)
                    .shape(shape_from_attr("shape"))
                    .compute([](KernelContext& context) {
                      const Tensor& value = context.input(0);
                      const auto& pattern = context.attr("shape").shape();
                      if (!shape_matches(pattern, value.shape())) {
                        throw Error("the default value has shape " + shape_string(value.shape()) +
                                    ", which does not match the declared shape " + pattern_string(pattern));
                      }
                      context.set_output(0, context.input_ptr(0));
                    }));

}  // namespace
}  // namespace graphrun
