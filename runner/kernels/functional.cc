// Functional control flow: PartitionedCall, StatefulPartitionedCall, If,
// StatelessIf, While, StatelessWhile. Each runs functions of the GraphDef's
// library (graph/functions.h), instantiated and checked at load, with an
// executor of their own that shares the run's variables. Calls nest through
// kernels, so their depth is bounded, and a While stops with an error after
// GRAPHDEF_MAX_WHILE_ITERATIONS iterations (default 10^6), as in Python's
// graphdef/ops/functional.py: a hostile file must not hang the runner or
// overflow its stack. TensorFlow bounds neither.
#include <cstdlib>
#include <limits>
#include <string>

#include "core/errors.h"
#include "exec/executor.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/functions.h"

namespace graphrun {
namespace {

constexpr long long kDefaultMaxWhileIterations = 1000000;

thread_local int call_depth = 0;

long long max_while_iterations() {
  const char* text = std::getenv("GRAPHDEF_MAX_WHILE_ITERATIONS");
  if (text == nullptr || *text == '\0') return kDefaultMaxWhileIterations;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0') throw Error(std::string("GRAPHDEF_MAX_WHILE_ITERATIONS=") + text + " is not a whole number");
  return value;
}

std::vector<TensorPtr> call(KernelContext& context, const std::string& attr, std::vector<TensorPtr> args) {
  const std::string& name = context.attr(attr).func().name();
  const FunctionBody* body = context.graph().functions().find(name);
  if (body == nullptr) throw Error("internal error: function '" + name + "' was not instantiated");
  const std::string where = "calls function '" + name + "'";
  if (call_depth >= kMaxCallDepth) {
    throw Error(where + ": function calls nest more than " + std::to_string(kMaxCallDepth) +
                " deep; does a function call itself without end?");
  }
  FeedMap feeds;
  for (std::size_t i = 0; i < body->args.size(); ++i) feeds[body->args[i]] = std::move(args[i]);
  struct DepthGuard {
    DepthGuard() { ++call_depth; }
    ~DepthGuard() { --call_depth; }
  } guard;
  try {
    Executor executor(*body->graph, body->outputs, body->control, feeds);
    return executor.run(feeds, context.variables());
  } catch (const ExitError& error) {
    if (call_depth > 1) throw;  // the outermost call names the whole chain once
    throw Error(where + ": " + error.what());
  }
}

// TensorFlow's reading of a condition: a scalar is true when nonzero, any
// other tensor when it is not empty.
bool truth(const Tensor& value) {
  if (value.rank() != 0) return value.num_elements() > 0;
  const unsigned char* bytes = static_cast<const unsigned char*>(value.raw_data());
  const std::size_t size = dtype_size(value.dtype());
  if (value.dtype() == graphdef::DT_FLOAT) return *value.data<float>() != 0.0f;    // -0.0 is false
  if (value.dtype() == graphdef::DT_DOUBLE) return *value.data<double>() != 0.0;
  for (std::size_t i = 0; i < size; ++i) {
    if (bytes[i] != 0) return true;
  }
  return false;
}

void set_outputs(KernelContext& context, std::vector<TensorPtr> values) {
  for (std::size_t i = 0; i < values.size(); ++i) context.set_output(static_cast<int>(i), std::move(values[i]));
}

std::vector<TensorPtr> inputs_from(KernelContext& context, int first) {
  std::vector<TensorPtr> values;
  for (int i = first; i < context.num_inputs(); ++i) values.push_back(context.input_ptr(i));
  return values;
}

void compute_call(KernelContext& context) { set_outputs(context, call(context, "f", inputs_from(context, 0))); }

void compute_if(KernelContext& context) {
  const char* branch = truth(context.input(0)) ? "then_branch" : "else_branch";
  set_outputs(context, call(context, branch, inputs_from(context, 1)));
}

void compute_while(KernelContext& context) {
  const long long limit = max_while_iterations();
  std::vector<TensorPtr> values = inputs_from(context, 0);
  for (long long i = 0; i < limit; ++i) {
    if (!truth(*call(context, "cond", values).at(0))) {
      set_outputs(context, std::move(values));
      return;
    }
    values = call(context, "body", values);
  }
  throw Error("the loop ran " + std::to_string(limit) +
              " iterations and its condition is still true; set GRAPHDEF_MAX_WHILE_ITERATIONS to allow more");
}

Kernel call_kernel(const char* op) {
  return Kernel(op)
      .type_list_input("args", "Tin")
      .type_list_output("Tout")
      .type_list_attr("Tin", 0)
      .type_list_attr("Tout", 0)
      .func_attr("f")
      .string_attr("config", "")
      .string_attr("config_proto", "")
      .string_attr("executor_type", "")
      .compute(compute_call);
}

Kernel if_kernel(const char* op) {
  return Kernel(op)
      .input("cond", "Tcond")
      .type_list_input("input", "Tin")
      .type_list_output("Tout")
      .type_attr("Tcond")
      .type_list_attr("Tin", 0)
      .type_list_attr("Tout", 0)
      .func_attr("then_branch")
      .func_attr("else_branch")
      .shape_list_attr("output_shapes")
      .compute(compute_if);
}

Kernel while_kernel(const char* op) {
  return Kernel(op)
      .type_list_input("input", "T")
      .type_list_output("T")
      .type_list_attr("T", 0)
      .func_attr("cond")
      .func_attr("body")
      .shape_list_attr("output_shapes")
      .int_attr("parallel_iterations", std::numeric_limits<int64_t>::min(), 10)
      .compute(compute_while);
}

REGISTER_KERNEL(call_kernel("PartitionedCall"));
REGISTER_KERNEL(call_kernel("StatefulPartitionedCall"));
REGISTER_KERNEL(if_kernel("If"));
REGISTER_KERNEL(if_kernel("StatelessIf"));
REGISTER_KERNEL(while_kernel("While"));
REGISTER_KERNEL(while_kernel("StatelessWhile"));

}  // namespace
}  // namespace graphrun
