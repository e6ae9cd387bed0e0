#include "kernels/lib/dnnl_pointwise_depthwise.h"

#include <string>
#include <vector>

namespace graphrun {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

struct DnnlPointwiseDepthwise::Prepared {
  std::vector<int64_t> key;
  bool usable = false;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
  memory::desc depthwise_weights_md;
  memory weights, depthwise_weights;  // in the primitive's layouts, filled at the first run
  bool filled = false;
  PrimitiveArgs args;
};

DnnlPointwiseDepthwise::DnnlPointwiseDepthwise(const Epilogue& pointwise, const Epilogue& depthwise)
    : pointwise_(pointwise), depthwise_(depthwise) {}
DnnlPointwiseDepthwise::~DnnlPointwiseDepthwise() = default;

DnnlPointwiseDepthwise::Prepared* DnnlPointwiseDepthwise::prepare(const ConvShape& pw, int64_t e, const ConvShape& dw) {
  const WindowGeometry& g = dw.window;
  std::vector<int64_t> key = {pw.n,       pw.h,          pw.w,         pw.c,          e,           g.stride_h,
                              g.stride_w, g.rows.before, g.rows.after, g.cols.before, g.cols.after};
  if (prepared_ && prepared_->key == key) return prepared_.get();
  auto p = std::make_unique<Prepared>();
  p->key = std::move(key);
  // oneDNN's depthwise post-op is a 3x3 window with one stride and one
  // leading pad for both axes; the trailing pad follows from the sizes, and
  // must be TF's too.
  const bool placeable = pw.n > 0 && pw.h > 0 && pw.w > 0 && pw.c > 0 && e > 0 && g.kh == 3 && g.kw == 3 &&
                         g.stride_h == g.stride_w && g.dilation_h == 1 && g.dilation_w == 1 &&
                         g.rows.before == g.cols.before && g.rows.out > 0 && g.cols.out > 0 &&
                         (g.rows.out - 1) * g.stride_h + 3 - pw.h - g.rows.before == g.rows.after &&
                         (g.cols.out - 1) * g.stride_w + 3 - pw.w - g.cols.before == g.cols.after;
  if (dnnl_enabled() && placeable) {
    try {
      dnnl::primitive_attr attr = strict_attr(pointwise_);
      dnnl::post_ops ops = attr.get_post_ops();
      ops.append_dw(kF32, kF32, kF32, 3, g.stride_h, g.rows.before);
      append_activation(ops, depthwise_);
      attr.set_post_ops(ops);
      const memory::desc src({pw.n, pw.c, pw.h, pw.w}, kF32, Tag::nhwc);
      const memory::desc middle({pw.n, e, pw.h, pw.w}, kF32, Tag::nhwc);
      const memory::desc weights({e, pw.c, 1, 1}, kF32, Tag::any);
      const memory::desc bias({e}, kF32, Tag::a);
      p->pd = dnnl::convolution_forward::primitive_desc(dnnl_engine(), dnnl::prop_kind::forward_inference,
                                                        dnnl::algorithm::convolution_direct, src, weights, bias, middle,
                                                        {1, 1}, {0, 0}, {0, 0}, attr);
      const memory::desc wanted({pw.n, e, g.rows.out, g.cols.out}, kF32, Tag::nhwc);
      const bool reference = std::string(p->pd.impl_info_str()).rfind("ref", 0) == 0;
      if (p->pd.dst_desc() == wanted && !reference) {
        p->primitive = dnnl::convolution_forward(p->pd);
        p->depthwise_weights_md = p->pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
        const memory::desc bias_md({e}, kF32, Tag::a);
        p->args.add(DNNL_ARG_SRC, p->pd.src_desc());
        p->args.add(DNNL_ARG_BIAS, bias_md);
        p->args.add(DNNL_ARG_DST, p->pd.dst_desc());
        p->args.add(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, bias_md);
        p->args.add_scratchpad(p->pd.scratchpad_desc());
        p->usable = true;
      }
    } catch (const dnnl::error&) {
      p->usable = false;  // no fused kernel here: the caller runs the two convolutions
    }
  }
  prepared_ = std::move(p);
  return prepared_.get();
}

bool DnnlPointwiseDepthwise::run(const ConvShape& pw, int64_t e, const ConvShape& dw, const float* x,
                                 const float* filter, const float* bias, const float* depthwise_filter,
                                 const float* depthwise_bias, float* y) {
  std::lock_guard<std::mutex> lock(mutex_);
  Prepared* p = prepare(pw, e, dw);
  if (!p->usable) return false;
  dnnl_call("run a 1x1 and depthwise convolution", [&] {
    dnnl::stream& stream = dnnl_stream();
    if (!p->filled) {
      // TF's [1, 1, C, E] is hwio; its depthwise [3, 3, E, 1] is hwigo with E groups.
      memory user(memory::desc({e, pw.c, 1, 1}, kF32, Tag::hwio), dnnl_engine(), const_cast<float*>(filter));
      p->weights = memory(p->pd.weights_desc(), dnnl_engine());
      dnnl::reorder(user, p->weights).execute(stream, user, p->weights);
      memory user_dw(memory::desc({e, 1, 1, 3, 3}, kF32, Tag::hwigo), dnnl_engine(),
                     const_cast<float*>(depthwise_filter));
      p->depthwise_weights = memory(p->depthwise_weights_md, dnnl_engine());
      dnnl::reorder(user_dw, p->depthwise_weights).execute(stream, user_dw, p->depthwise_weights);
      p->args.set_memory(DNNL_ARG_WEIGHTS, p->weights);
      p->args.set_memory(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, p->depthwise_weights);
      p->filled = true;
    }
    p->args.point(DNNL_ARG_SRC, x);
    p->args.point(DNNL_ARG_BIAS, bias);
    p->args.point(DNNL_ARG_DST, y);
    p->args.point(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, depthwise_bias);
    p->args.run(p->primitive, stream);
  });
  return true;
}

}  // namespace graphrun
