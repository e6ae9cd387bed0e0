#include "kernels/lib/dnnl_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <unistd.h>

#include "core/errors.h"
#include "kernels/lib/min_max.h"

namespace graphrun {

bool dnnl_enabled() {
  static const bool enabled = [] {
    const char* off = std::getenv("GRAPHRUN_CC_NO_DNNL");
    return !(off != nullptr && std::strcmp(off, "1") == 0);
  }();
  return enabled;
}

void cap_dnnl_isa() {
  // Before oneDNN first looks at the CPU: a cap is refused after that.
  static const bool capped = [] {
    const char* cap = std::getenv("GRAPHRUN_CC_MAX_CPU_ISA");
    if (cap == nullptr || *cap == '\0') return false;
    static const std::pair<const char*, dnnl::cpu_isa> kIsas[] = {{"SSE41", dnnl::cpu_isa::sse41},
                                                                  {"AVX", dnnl::cpu_isa::avx},
                                                                  {"AVX2", dnnl::cpu_isa::avx2},
                                                                  {"AVX2_VNNI", dnnl::cpu_isa::avx2_vnni},
                                                                  {"AVX512_CORE", dnnl::cpu_isa::avx512_core},
                                                                  {"AVX512_CORE_VNNI", dnnl::cpu_isa::avx512_core_vnni},
                                                                  {"AVX512_CORE_BF16", dnnl::cpu_isa::avx512_core_bf16},
                                                                  {"AVX512_CORE_FP16", dnnl::cpu_isa::avx512_core_fp16},
                                                                  {"AVX512_CORE_AMX", dnnl::cpu_isa::avx512_core_amx}};
    for (const auto& [name, isa] : kIsas) {
      if (std::strcmp(cap, name) == 0) {
        try {
          dnnl::set_max_cpu_isa(isa);
        } catch (const dnnl::error&) {
          return false;  // oneDNN had already fixed its ISA (ONEDNN_MAX_CPU_ISA still applies)
        }
        return true;
      }
    }
    return false;  // an unknown name caps nothing, as oneDNN treats its own variable
  }();
  (void)capped;
}

const Tensor* fused_bias(const KernelContext& context, const Epilogue& epilogue, const Shape& out_shape) {
  if (!epilogue.bias) return nullptr;
  const Tensor& bias = context.input(2);
  if (out_shape.empty() || bias.shape() != Shape{out_shape.back()}) {
    throw Error("bias " + shape_string(bias.shape()) + " must be 1-D and match the last dim of value " +
                shape_string(out_shape) + " (at least 2-D)");
  }
  return &bias;
}

dnnl::engine& dnnl_engine() {
  static dnnl::engine engine = [] {
    cap_dnnl_isa();
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
      .float_attr("leakyrelu_alpha", 0.2f);
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

void* scratchpad_buffer(std::size_t bytes) {
  // One growing buffer per calling thread: runs on a thread are sequential, and a buffer
  // per primitive would keep every node's scratch alive at once.
  // Over-allocated by one cache line so the start can be 64-byte aligned, as oneDNN's own is.
  constexpr std::size_t kAlign = 64;
  thread_local std::vector<unsigned char> buffer;
  if (buffer.size() < bytes + kAlign) buffer.resize(bytes + kAlign);
  const auto address = reinterpret_cast<uintptr_t>(buffer.data());
  return buffer.data() + (kAlign - address % kAlign) % kAlign;
}

dnnl::memory& PrimitiveArgs::slot(int arg) {
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] == arg) return memories_[i];
  }
  ids_.push_back(arg);
  memories_.emplace_back();
  c_args_.push_back({arg, nullptr});
  return memories_.back();
}

void PrimitiveArgs::add(int arg, const dnnl::memory::desc& desc) {
  set_memory(arg, dnnl::memory(desc, dnnl_engine(), nullptr));
}

void PrimitiveArgs::set_memory(int arg, const dnnl::memory& memory) {
  slot(arg) = memory;
  // The C handles are re-read: slot() may have moved the vector's objects (their handles stay).
  for (std::size_t i = 0; i < ids_.size(); ++i) c_args_[i].memory = memories_[i].get();
}

void PrimitiveArgs::point(int arg, const void* data) {
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] == arg) {
      memories_[i].set_data_handle(const_cast<void*>(data));
      return;
    }
  }
  throw dnnl::error(dnnl_invalid_arguments, "internal error: an argument the primitive was not given");
}

void PrimitiveArgs::add_scratchpad(const dnnl::memory::desc& desc) {
  scratchpad_bytes_ = desc.get_size();
  add(DNNL_ARG_SCRATCHPAD, desc);
  scratchpad_index_ = static_cast<int>(ids_.size()) - 1;
}

void PrimitiveArgs::run(const dnnl::primitive& primitive, dnnl::stream& stream) {
  if (scratchpad_index_ >= 0 && scratchpad_bytes_ > 0) {
    memories_[scratchpad_index_].set_data_handle(scratchpad_buffer(scratchpad_bytes_));
  }
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive.get(), stream.get(), static_cast<int>(c_args_.size()), c_args_.data()),
      "could not execute a primitive");
  stream.wait();
}

void WeightsArg::add_to(PrimitiveArgs& args, const dnnl::memory::desc& user, const dnnl::memory::desc& wanted) {
  user_ = user;
  in_place_ = wanted == user;
  if (in_place_) {
    args.add(DNNL_ARG_WEIGHTS, user);
  } else {
    kept_ = dnnl::memory(wanted, dnnl_engine());
    args.set_memory(DNNL_ARG_WEIGHTS, kept_);
  }
}

void WeightsArg::point(PrimitiveArgs& args, const void* data, bool constant, dnnl::stream& stream) {
  if (in_place_) {
    args.point(DNNL_ARG_WEIGHTS, data);
  } else if (!constant || !filled_) {
    dnnl::memory user(user_, dnnl_engine(), const_cast<void*>(data));
    dnnl::reorder(user, kept_).execute(stream, user, kept_);
    filled_ = constant;
  }
}

dnnl::primitive_attr strict_attr(const Epilogue& epilogue) {
  dnnl::primitive_attr attr;
  // No implicit down-conversion to bf16/f16: float32 stays float32 throughout.
  attr.set_fpmath_mode(dnnl::fpmath_mode::strict);
  // The caller passes the scratchpad (PrimitiveArgs): in oneDNN's library mode it is a
  // per-thread buffer sized when the primitive is created, so a cached primitive run from
  // another thread (libgraphrun's callers) could overrun that thread's smaller one.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  // dst = 1.0 * dst + (product + bias): the residual the output buffer holds.
  if (epilogue.residual) ops.append_sum(1.0f);
  append_activation(ops, epilogue);
  attr.set_post_ops(ops);
  return attr;
}

void append_activation(dnnl::post_ops& ops, const Epilogue& epilogue) {
  using A = dnnl::algorithm;
  switch (epilogue.activation) {
    case Activation::kNone: break;
    case Activation::kRelu: ops.append_eltwise(A::eltwise_relu, 0.0f, 0.0f); break;
    // clip_v2 lets NaN through (clip would turn it into 0), as Relu6 does.
    case Activation::kRelu6: ops.append_eltwise(A::eltwise_clip_v2, 0.0f, 6.0f); break;
    case Activation::kElu: ops.append_eltwise(A::eltwise_elu, 1.0f, 0.0f); break;
    case Activation::kLeakyRelu: ops.append_eltwise(A::eltwise_relu, epilogue.alpha, 0.0f); break;
    case Activation::kSwish: ops.append_eltwise(A::eltwise_swish, 1.0f, 0.0f); break;
  }
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
