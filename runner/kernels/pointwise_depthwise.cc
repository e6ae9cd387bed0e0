// _FusedPointwiseDepthwise: a _FusedConv2D with a 1x1 filter and the
// _FusedDepthwiseConv2dNative with a 3x3 filter that alone reads it, as one
// node (passes/fuse_pointwise_depthwise.cc writes it; a model file naming it
// is refused). Inputs: the 1x1's input, filter [1, 1, C, E] and bias, then
// the depthwise filter [3, 3, E, 1] and bias; the depthwise's window attrs;
// pointwise_ops and fused_ops are the two nodes' fused_ops. float32 only.
// It runs as one oneDNN primitive (lib/dnnl_pointwise_depthwise.h) where
// oneDNN has one, else as the two oneDNN convolutions one after the other,
// each as its own node would.
#include <algorithm>
#include <memory>

#include "kernels/conv_common.h"
#include "kernels/lib/dnnl_conv.h"
#include "kernels/lib/dnnl_pointwise_depthwise.h"

namespace graphrun {
namespace {

struct PointwiseDepthwiseNode {
  WindowAttrs window;  // the depthwise's; the 1x1's is stride 1, unpadded
  Epilogue pointwise, depthwise;
  std::shared_ptr<DnnlPointwiseDepthwise> fused;
  std::shared_ptr<DnnlConvolution> first, second;
};

Epilogue read_ops(const Kernel& kernel, const graphdef::NodeDef& node, const char* attr) {
  const auto& list = kernel.attr(node, attr).list().s();
  try {
    return parse_fused_ops(std::vector<std::string>(list.begin(), list.end()), 0.0f);
  } catch (const Error& e) {
    throw Error(std::string("attr '") + attr + "': " + e.what());
  }
}

void check_bias(const Tensor& bias, int64_t channels, const char* which) {
  if (bias.rank() != 1 || bias.shape()[0] != channels) {
    throw Error(std::string(which) + " bias has shape " + shape_string(bias.shape()) + ", not [" +
                std::to_string(channels) + "]");
  }
}

// One of the two convolutions through oneDNN. Given the pass's rules, oneDNN
// refuses only an empty input (no pixels or no channels) with a non-empty
// output: each sum then has no products, so the output is the epilogue of
// zeros, as TF computes it.
void step(DnnlConvolution& conv, const ConvShape& s, int64_t groups, int64_t out, const float* x, const Tensor& filter,
          const float* bias, const Epilogue& epilogue, Tensor& y) {
  if (y.num_elements() == 0 || conv.run(s, groups, out, x, filter.data<float>(), true, bias, y.data<float>())) return;
  if (s.n * s.h * s.w * s.c != 0) {
    throw Error("oneDNN has no kernel for a step of this fused 1x1 and depthwise pair (run with --no-optimize)");
  }
  std::fill(y.data<float>(), y.data<float>() + y.num_elements(), 0.0f);
  apply_epilogue(y.data<float>(), y.num_elements() / out, out, bias, epilogue);
}

void compute_pointwise_depthwise(KernelContext& context) {
  const PointwiseDepthwiseNode& node = context.state<PointwiseDepthwiseNode>();
  const Tensor& x = context.input(0);
  const Tensor& filter = context.input(1);
  const Tensor& dw_filter = context.input(3);
  WindowAttrs unpadded;
  unpadded.padding = "VALID";
  // A filter with fewer in channels than the input is a grouped 1x1 (as Conv2D's):
  // run unfused, each step as its node would.
  int64_t groups = 1;
  Shape x_shape = x.shape();
  if (x.rank() == 4 && filter.rank() == 4 && filter.shape()[2] > 0 && x_shape[3] != filter.shape()[2]) {
    groups = conv_groups(x.shape(), filter.shape());
    x_shape[3] = filter.shape()[2];
  }
  ConvShape pw = conv_shape(x_shape, filter.shape(), unpadded);
  pw.c = x.shape()[3];
  const int64_t e = filter.shape()[3];
  const ConvShape dw = conv_shape({pw.n, pw.h, pw.w, e}, dw_filter.shape(), node.window, "depthwise filter");
  if (pw.window.kh != 1 || pw.window.kw != 1 || dw_filter.shape()[3] != 1) {
    throw Error("the filters must be [1, 1, C, E] and [3, 3, E, 1]");
  }
  check_bias(context.input(2), e, "the 1x1 convolution's");
  check_bias(context.input(4), e, "the depthwise convolution's");
  const float* bias = context.input(2).data<float>();
  const float* dw_bias = context.input(4).data<float>();
  Tensor output = Tensor::uninitialized(graphdef::DT_FLOAT, {dw.n, dw.window.rows.out, dw.window.cols.out, e});
  const bool fused = output.num_elements() == 0 ||
                     (groups == 1 && node.fused->run(pw, e, dw, x.data<float>(), filter.data<float>(), bias,
                                                     dw_filter.data<float>(), dw_bias, output.data<float>()));
  if (!fused) {
    Tensor middle = Tensor::uninitialized(graphdef::DT_FLOAT, {pw.n, pw.h, pw.w, e});
    step(*node.first, pw, groups, e, x.data<float>(), filter, bias, node.pointwise, middle);
    step(*node.second, dw, e, e, middle.data<float>(), dw_filter, dw_bias, node.depthwise, output);
  }
  context.set_output(0, std::move(output));
}

REGISTER_KERNEL(declare_conv_attrs(Kernel("_FusedPointwiseDepthwise")
                                       .input("input", "T")
                                       .input("filter", "T")
                                       .input("bias", "T")
                                       .input("depthwise_filter", "T")
                                       .input("depthwise_bias", "T")
                                       .output("T")
                                       .type_attr("T", {graphdef::DT_FLOAT})
                                       .string_list_attr("pointwise_ops")
                                       .string_list_attr("fused_ops")
                                       .internal(),
                                   false)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      const Epilogue pointwise = read_ops(kernel, node, "pointwise_ops");
                      const Epilogue depthwise = read_ops(kernel, node, "fused_ops");
                      return PointwiseDepthwiseNode{read_window_attrs(kernel, node, true, true),
                                                    pointwise,
                                                    depthwise,
                                                    std::make_shared<DnnlPointwiseDepthwise>(pointwise, depthwise),
                                                    std::make_shared<DnnlConvolution>(pointwise),
                                                    std::make_shared<DnnlConvolution>(depthwise)};
                    })
                    .compute(compute_pointwise_depthwise));

}  // namespace
}  // namespace graphrun
