#include "kernels/lib/dnnl_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/errors.h"
#include "kernels/lib/min_max.h"

namespace graphrun {
namespace {

// Debian's oneDNN runs its threads with OpenMP (libgomp), whose threads by
// default spin for a while at every barrier and after every parallel
// region. On a machine whose cores are busy with other work, or while our
// own thread pool (core/parallel.h) runs the elementwise ops between two
// convolutions, a spinning thread takes the core the thread it waits for
// needs: measured on 2 loaded cores, MobileNetV2 took ~8x longer than with
// passive waiting. libgomp reads its settings when it is loaded, before
// main, so this runs from the executable's .preinit_array, which the
// dynamic loader calls before any library's initializer. A setting the
// user made is kept. A shared library may not have a .preinit_array
// (build/libgraphrun.so): there the host process sets it (runner/capi/graphrun_c.h).
#ifndef GRAPHRUN_SHARED_LIBRARY
void prefer_passive_openmp_waits() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  }
}

__attribute__((section(".preinit_array"), used)) void (*const passive_openmp_waits)() = prefer_passive_openmp_waits;
#endif

}  // namespace

bool dnnl_enabled() {
  static const bool enabled = [] {
    const char* off = std::getenv("GRAPHRUN_CC_NO_DNNL");
    return !(off != nullptr && std::strcmp(off, "1") == 0);
  }();
  return enabled;
}

dnnl::engine& dnnl_engine() {
  static dnnl::engine engine = [] {
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& dnnl_stream() {
  static dnnl::stream stream(dnnl_engine());
  return stream;
}

Epilogue parse_fused_ops(const std::vector<std::string>& ops, float leakyrelu_alpha, bool residual_allowed) {
  Epilogue epilogue;
  epilogue.residual = residual_allowed && ops.size() >= 2 && ops[1] == "Add";
  const std::size_t first_activation = epilogue.residual ? 2 : 1;
  if (ops.empty() || ops.size() > first_activation + 1 || ops[0] != "BiasAdd") {
    throw Error(residual_allowed ? "attr 'fused_ops' must be [BiasAdd], [BiasAdd, Add] or either with an activation"
                                 : "attr 'fused_ops' must be [BiasAdd] or [BiasAdd, <activation>]");
  }
  epilogue.bias = true;
  if (ops.size() == first_activation) return epilogue;
  const std::string& name = ops[first_activation];
  if (name == "Relu") epilogue.activation = Activation::kRelu;
  else if (name == "Relu6") epilogue.activation = Activation::kRelu6;
  else if (name == "Elu") epilogue.activation = Activation::kElu;
  else if (name == "LeakyRelu") epilogue.activation = Activation::kLeakyRelu;
  else if (name == "_Swish") epilogue.activation = Activation::kSwish;
  else throw Error("attr 'fused_ops' names an activation this kernel has not: " + name);
  epilogue.alpha = leakyrelu_alpha;
  return epilogue;
}

Kernel& declare_fused_epilogue(Kernel& kernel) {
  return kernel.list_input("args", "num_args", "T")
      .int_attr("num_args", 1)
      .string_list_attr("fused_ops")
      .float_attr("epsilon", 0.0001f)
      .float_attr("leakyrelu_alpha", 0.2f)
      .internal();
}

Epilogue read_fused_ops(const Kernel& kernel, const graphdef::NodeDef& node, bool residual_allowed) {
  const auto& list = kernel.attr(node, "fused_ops").list().s();
  const Epilogue epilogue = parse_fused_ops(std::vector<std::string>(list.begin(), list.end()),
                                            kernel.get_float(node, "leakyrelu_alpha"), residual_allowed);
  const int64_t args = epilogue.residual ? 2 : 1;
  if (kernel.get_int(node, "num_args") != args) {
    throw Error("attr 'num_args' must be " + std::to_string(args) + " for these fused_ops");
  }
  return epilogue;
}

dnnl::primitive_attr strict_attr(const Epilogue& epilogue) {
  dnnl::primitive_attr attr;
  // No implicit down-conversion to bf16/f16: float32 stays float32 throughout.
  attr.set_fpmath_mode(dnnl::fpmath_mode::strict);
  dnnl::post_ops ops;
  // dst = 1.0 * dst + (product + bias): the residual the output buffer holds.
  if (epilogue.residual) ops.append_sum(1.0f);
  using A = dnnl::algorithm;
  switch (epilogue.activation) {
    case Activation::kNone: break;
    case Activation::kRelu: ops.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f); break;
    // clip_v2 lets NaN through (clip would turn it into 0), as Relu6 does.
    case Activation::kRelu6: ops.append_eltwise(1.0f, A::eltwise_clip_v2, 0.0f, 6.0f); break;
    case Activation::kElu: ops.append_eltwise(1.0f, A::eltwise_elu, 1.0f, 0.0f); break;
    case Activation::kLeakyRelu: ops.append_eltwise(1.0f, A::eltwise_relu, epilogue.alpha, 0.0f); break;
    case Activation::kSwish: ops.append_eltwise(1.0f, A::eltwise_swish, 1.0f, 0.0f); break;
  }
  attr.set_post_ops(ops);
  return attr;
}

namespace {

float activate(float v, const Epilogue& e) {
  switch (e.activation) {
    case Activation::kNone: return v;
    case Activation::kRelu: return maximum(v, 0.0f);
    case Activation::kRelu6: return minimum(maximum(v, 0.0f), 6.0f);
    case Activation::kElu: return v < 0.0f ? std::exp(v) - 1.0f : v;
    case Activation::kLeakyRelu: return v > 0.0f ? v : v * e.alpha;
    case Activation::kSwish: return v * (1.0f / (1.0f + std::exp(-v)));
  }
  return v;
}

}  // namespace

void apply_epilogue(float* y, int64_t rows, int64_t channels, const float* bias, const Epilogue& epilogue) {
  for (int64_t r = 0; r < rows; ++r, y += channels) {
    for (int64_t c = 0; c < channels; ++c) y[c] = activate(bias ? y[c] + bias[c] : y[c], epilogue);
  }
}

void throw_dnnl_error(const char* what, const dnnl::error& e) {
  throw Error(std::string("oneDNN could not ") + what + ": " + e.what());
}

}  // namespace graphrun
