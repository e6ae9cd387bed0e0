#include "kernels/conv_common.h"

#include <cstdlib>
#include <cstring>

#include "core/channel_blocks.h"
#include "core/parallel.h"
#include "kernels/lib/broadcast.h"

namespace graphrun {

Kernel& declare_conv_attrs(Kernel& kernel, bool cudnn) {
  if (cudnn) kernel.bool_attr("use_cudnn_on_gpu", true);
  return kernel.int_list_attr("strides")
      .choice_attr("padding", {"SAME", "VALID", "EXPLICIT"})
      .int_list_attr("explicit_paddings", {})
      .choice_attr("data_format", {"NHWC"}, "NHWC")
      .int_list_attr("dilations", {1, 1, 1, 1})
      .prepare([](const Kernel& k, const graphdef::NodeDef& node) { return read_window_attrs(k, node, true, true); });
}

const WindowAttrs& conv_window_attrs(const KernelContext& context) { return context.state<WindowAttrs>(); }

ConvShape conv_shape(const Shape& input, const Shape& filter, const WindowAttrs& attrs,
                     const std::string& filter_what) {
  if (input.size() != 4 || filter.size() != 4 || input[3] != filter[2]) {
    throw Error("input " + shape_string(input) + " and " + filter_what + " " + shape_string(filter) +
                " do not match: need [N,H,W,C] and [KH,KW,C,out]");
  }
  ConvShape s;
  s.n = input[0];
  s.h = input[1];
  s.w = input[2];
  s.c = input[3];
  s.window = window_geometry(attrs, filter[0], filter[1], s.h, s.w);
  return s;
}

// TF's Conv2D refuses a filter with a zero dimension rather than sum over
// nothing, unless its output is empty (DepthwiseConv2dNative sums over
// nothing: zeros).
void check_filter_elements(const Shape& filter, const Shape& output) {
  const auto has_zero = [](const Shape& shape) {
    for (const int64_t d : shape) {
      if (d == 0) return true;
    }
    return false;
  };
  if (has_zero(filter) && !has_zero(output)) {
    throw Error("the filter " + shape_string(filter) + " has no elements: every dimension must be at least 1");
  }
}

int64_t conv_groups(const Shape& input, const Shape& filter) {
  const int64_t c = input[3], ci = filter[2], co = filter[3];
  if (ci == 0 || c == 0 || c % ci) {
    throw Error("the input's " + std::to_string(c) + " channels are not a multiple of the filter's " +
                std::to_string(ci) + " in channels");
  }
  const int64_t groups = c / ci;
  if (co % groups) {
    throw Error(std::to_string(groups) + " groups (" + std::to_string(c) + " / " + std::to_string(ci) +
                " channels) do not divide the filter's " + std::to_string(co) + " out channels");
  }
  return groups;
}

// Blocks pay where oneDNN's kernels stop at AVX2 or older: there its depthwise
// and pointwise kernels run much faster on nChw8c than on NHWC. With AVX-512
// its NHWC kernels (brgconv) beat blocks of either size (nChw8c falls back to
// AVX2's kernels); docs/performance.md has the figures. So by default
// blocks follow oneDNN's effective ISA (ONEDNN_MAX_CPU_ISA or
// GRAPHRUN_CC_MAX_CPU_ISA caps it);
// GRAPHRUN_CC_CHANNEL_BLOCKS=1 or 0 decides instead.
bool channel_blocks_enabled() {
  static const bool enabled = [] {
    const char* setting = std::getenv("GRAPHRUN_CC_CHANNEL_BLOCKS");
    if (setting != nullptr && *setting != '\0') return std::strcmp(setting, "0") != 0;
    cap_dnnl_isa();
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) != avx512;
  }();
  return enabled;
}

Layout conv_layout(const KernelContext& context, const Tensor& input, int64_t out_channels, bool depthwise,
                   const std::function<bool()>& ready_in_blocks) {
  const bool wanted = context.may_write_channel_blocks() && channel_blocks_enabled() &&
                      input.dtype() == graphdef::DT_FLOAT && input.rank() == 4 && input.shape()[3] % 8 == 0 &&
                      out_channels % 8 == 0 && (depthwise || input.layout() == Layout::kChannelBlocks8);
  return wanted && ready_in_blocks() ? Layout::kChannelBlocks8 : Layout::kPlain;
}

const Tensor& input_in_layout(const KernelContext& context, int i, Layout layout, TensorPtr& holder) {
  const Tensor& input = context.input(i);
  if (input.layout() == layout) return input;
  holder = std::make_shared<const Tensor>(to_layout(input, layout));
  return *holder;
}

void run_residual_conv(KernelContext& context, int residual_input, const Shape& out_shape, Layout layout,
                       const Epilogue& epilogue, const std::function<bool(float*)>& accumulate,
                       const std::function<void(Tensor&)>& product) {
  if (layout != Layout::kPlain && context.input(residual_input).shape() != out_shape) {
    throw Error("internal error: a residual that broadcasts, in channel blocks");
  }
  const Tensor& residual = context.input(residual_input);
  Epilogue activation_only;
  activation_only.activation = epilogue.activation;
  activation_only.alpha = epilogue.alpha;
  auto activate = [&](Tensor& y) {
    if (epilogue.activation == Activation::kNone) return;
    float* values = y.data<float>();
    parallel_for(y.num_elements(), static_cast<double>(y.num_elements()), [&](int64_t begin, int64_t end) {
      apply_epilogue(values + begin, end - begin, 1, nullptr, activation_only);
    });
  };
  if (residual.shape() == out_shape) {
    // The residual's buffer becomes the output when nobody else can see it:
    // each element is read (by the sum) before it is written.
    Tensor* reused = residual.layout() == layout ? context.reusable_input(residual_input) : nullptr;
    // A copy in `layout` (to_layout copies even when the layout is the same).
    Tensor fresh = reused ? Tensor(graphdef::DT_FLOAT, {0}) : to_layout(residual, layout);
    Tensor& output = reused ? *reused : fresh;
    if (!accumulate(output.data<float>())) {
      if (layout != Layout::kPlain) throw Error("internal error: oneDNN refused a convolution it had prepared");
      Tensor sum = Tensor::uninitialized(graphdef::DT_FLOAT, out_shape);
      product(sum);
      float* y = output.data<float>();
      const float* p = sum.data<float>();
      // As AddV2: (conv + bias) + residual.
      for (int64_t i = 0; i < output.num_elements(); ++i) y[i] = p[i] + y[i];
      activate(output);
    }
    if (reused) context.set_output(0, context.input_ptr(residual_input));
    else context.set_output(0, std::move(fresh));
    return;
  }
  Tensor sum = Tensor::uninitialized(graphdef::DT_FLOAT, out_shape);
  product(sum);
  TensorPtr holder;
  const Tensor& plain_residual = input_in_layout(context, residual_input, Layout::kPlain, holder);
  const BroadcastPlan plan = plan_broadcast(out_shape, plain_residual.shape());
  Tensor output = Tensor::uninitialized(graphdef::DT_FLOAT, plan.out);
  broadcast_apply(plan, sum.data<float>(), plain_residual.data<float>(), output.data<float>(),
                  [](float a, float b) { return a + b; });
  activate(output);
  context.set_output(0, std::move(output));
}

Shape read_sizes(const Tensor& sizes, const std::string& what) {
  if (sizes.rank() > 1 || sizes.num_elements() != 4) {
    throw Error(what + " must be a 4-vector of sizes, got shape " + shape_string(sizes.shape()));
  }
  const int32_t* values = sizes.data<int32_t>();
  Shape shape(values, values + 4);
  for (int64_t d : shape) {
    if (d < 0) throw Error(what + " " + shape_string(shape) + " must be 4 non-negative numbers");
  }
  return shape;
}

void check_out_backprop(const Tensor& grad, const ConvShape& s, int64_t out_channels) {
  const Shape expected = {s.n, s.window.rows.out, s.window.cols.out, out_channels};
  if (grad.shape() != expected) {
    throw Error("out_backprop has shape " + shape_string(grad.shape()) + ", expected " + shape_string(expected));
  }
}

}  // namespace graphrun
