// oneDNN 3 (runner/third_party/onednn.txt) for the float32 convolutions and matrix products:
// one CPU engine and stream for the process, the attributes every primitive
// is made with, and the activations a fused kernel applies as oneDNN
// post-ops. The hand-written kernels stay the fallback (other dtypes, shapes
// oneDNN refuses, GRAPHRUN_CC_NO_DNNL=1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {

// False when GRAPHRUN_CC_NO_DNNL is "1": every kernel then takes its
// hand-written path (for comparing the two and for measuring).
bool dnnl_enabled();

// GRAPHRUN_CC_MAX_CPU_ISA (oneDNN's names: SSE41, AVX, AVX2, AVX512_CORE, ...)
// caps graphrun-cc's oneDNN alone, where ONEDNN_MAX_CPU_ISA would also cap a
// TensorFlow in the same environment (tests/support/cpu_profiles.py). Called before
// oneDNN is first asked about the CPU; dnnl_engine() calls it.
void cap_dnnl_isa();

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();

// The activation a fused kernel applies after its bias (fused_ops' second
// entry); kSwish is x * sigmoid(x), which only the fusion pass writes.
enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kSwish };

struct Epilogue {
  bool bias = false;
  // A second tensor of the output's shape added after the bias, before the
  // activation (a residual connection): oneDNN's sum post-op, accumulating
  // into an output buffer that already holds it.
  bool residual = false;
  Activation activation = Activation::kNone;
  float alpha = 0.0f;  // LeakyRelu's
};

// fused_ops as the fusion passes write them: ["BiasAdd"], then "Add" where
// `residual_allowed` (convolutions), then optionally one of Relu, Relu6, Elu,
// LeakyRelu, _Swish. Throws Error otherwise.
Epilogue parse_fused_ops(const std::vector<std::string>& ops, float leakyrelu_alpha, bool residual_allowed = false);

// What TensorFlow's remapper ops (_FusedConv2D, _FusedDepthwiseConv2dNative,
// _FusedMatMul) add to their base op: the bias as the one `args` input,
// num_args, fused_ops, epsilon, leakyrelu_alpha. A model file may name them
// too: graphdef's optimizer writes them (graphdef/ops/fused.py defines them).
Kernel& declare_fused_epilogue(Kernel& kernel);

// Such a node's num_args (1, or 2 with a residual: the bias, then the
// tensor added), fused_ops and leakyrelu_alpha, checked (at load).
Epilogue read_fused_ops(const Kernel& kernel, const graphdef::NodeDef& node, bool residual_allowed = false);

// Such a node's bias (its input 2), or null without one; a bias that is not
// [channels] for an output of `out_shape` gets BiasAdd's own message (the
// pass fused a BiasAdd that would refuse it).
const Tensor* fused_bias(const KernelContext& context, const Epilogue& epilogue, const Shape& out_shape);

// Strict float32 (no bf16 or tf32 down-conversion), the residual (a sum
// post-op) and the activation as post-ops, scratchpad passed by the caller
// (PrimitiveArgs) at each execution.
dnnl::primitive_attr strict_attr(const Epilogue& epilogue);
// The epilogue's activation as a oneDNN post-op (none for kNone).
void append_activation(dnnl::post_ops& ops, const Epilogue& epilogue);
// The calling thread's scratchpad buffer for one execution of a primitive made
// with strict_attr (user mode): grown to `bytes`, 64-byte aligned, valid until
// the thread's next call.
void* scratchpad_buffer(std::size_t bytes);

// The arguments of one prepared primitive: its memory objects and oneDNN's
// argument list, made once and pointed at each run's buffers. Making them
// anew for every execution took dozens of allocations a convolution,
// thousands a run of a CNN, all on the thread the other waits
// for. Not for use from two threads at once (the callers hold their lock).
class PrimitiveArgs {
 public:
  // An argument of this layout, its buffer given by point() before each run.
  void add(int arg, const dnnl::memory::desc& desc);
  // An argument that is this memory object until replaced (weights kept in the
  // primitive's layout).
  void set_memory(int arg, const dnnl::memory& memory);
  void point(int arg, const void* data);
  // The primitive's scratchpad (of strict_attr's user mode), pointed at the
  // calling thread's buffer at each run().
  void add_scratchpad(const dnnl::memory::desc& desc);
  // Runs the primitive on `stream` and waits for it; throws dnnl::error.
  void run(const dnnl::primitive& primitive, dnnl::stream& stream);

 private:
  dnnl::memory& slot(int arg);

  std::vector<int> ids_;
  std::vector<dnnl::memory> memories_;
  std::vector<dnnl_exec_arg_t> c_args_;
  std::size_t scratchpad_bytes_ = 0;
  int scratchpad_index_ = -1;
};

// A primitive's weights argument, given at each run as the caller's buffer
// in the `user` layout: used in place when the primitive's layout is that
// one, else reordered into a kept copy, on every run or, for constant
// weights, once.
class WeightsArg {
 public:
  // Declares the weights argument of `args`; `wanted` is the primitive's layout.
  void add_to(PrimitiveArgs& args, const dnnl::memory::desc& user, const dnnl::memory::desc& wanted);
  // Points `args` at this run's weights (reordering them on `stream` if need be).
  void point(PrimitiveArgs& args, const void* data, bool constant, dnnl::stream& stream);
  // The kept copy holds constant weights already: they are not read again.
  bool filled() const { return filled_; }

 private:
  dnnl::memory::desc user_;
  bool in_place_ = false;
  bool filled_ = false;
  dnnl::memory kept_;
};

// y[rows, channels] += bias, then the activation: the hand-written kernels'
// epilogue, with the element rules of the BiasAdd and activation kernels.
void apply_epilogue(float* y, int64_t rows, int64_t channels, const float* bias, const Epilogue& epilogue);

// Runs `body` and turns a dnnl::error into graphrun's Error naming `what`.
template <class Body>
auto dnnl_call(const char* what, Body&& body) -> decltype(body());

[[noreturn]] void throw_dnnl_error(const char* what, const dnnl::error& e);

template <class Body>
auto dnnl_call(const char* what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const dnnl::error& e) {
    throw_dnnl_error(what, e);
  }
}

}  // namespace graphrun
