#include "kernels/conv_common.h"

#include <cstring>

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

void run_residual_conv(KernelContext& context, int residual_input, const Shape& out_shape, const Epilogue& epilogue,
                       const std::function<bool(float*)>& accumulate, const std::function<void(Tensor&)>& product) {
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
    Tensor* reused = context.reusable_input(residual_input);
    Tensor fresh = reused ? Tensor(graphdef::DT_FLOAT, {0}) : Tensor::uninitialized(graphdef::DT_FLOAT, out_shape);
    Tensor& output = reused ? *reused : fresh;
    if (!reused && residual.byte_size()) std::memcpy(output.raw_data(), residual.raw_data(), residual.byte_size());
    if (!accumulate(output.data<float>())) {
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
  const BroadcastPlan plan = plan_broadcast(out_shape, residual.shape());
  Tensor output = Tensor::uninitialized(graphdef::DT_FLOAT, plan.out);
  broadcast_apply(plan, sum.data<float>(), residual.data<float>(), output.data<float>(),
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
