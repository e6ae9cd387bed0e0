#include "kernels/lib/dnnl_conv.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/lib/cpu_isa.h"

namespace graphrun {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

struct DnnlConvolution::Prepared {
  std::vector<int64_t> key;
  bool usable = false;  // false: oneDNN refused this problem; the caller's kernel runs
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
  WeightsArg weights;  // the filter: TF's layout in place, or kept in pd's (a constant one reordered once)
  PrimitiveArgs args;
  bool pads = false;             // the window reaches into padding
  bool filter_finite = true;     // of the constant filter kept in `weights`
};

namespace {

std::vector<int64_t> problem_key(const ConvShape& s, int64_t groups, int64_t out_channels, bool blocked) {
  const WindowGeometry& g = s.window;
  return {s.n,           s.h,          s.w,        s.c,          groups,       out_channels,  g.kh,
          g.kw,          g.stride_h,   g.stride_w, g.dilation_h, g.dilation_w, g.rows.before, g.rows.after,
          g.cols.before, g.cols.after, g.rows.out, g.cols.out,   blocked};
}

// Shapes oneDNN's kernels are meant for; the rest (empty tensors, padding as
// wide as the window, which only hostile graphs have) stay with the caller.
bool fits_dnnl(const ConvShape& s, int64_t groups, int64_t out_channels) {
  const WindowGeometry& g = s.window;
  const int64_t extent_h = (g.kh - 1) * g.dilation_h + 1, extent_w = (g.kw - 1) * g.dilation_w + 1;
  return s.n > 0 && s.h > 0 && s.w > 0 && s.c > 0 && out_channels > 0 && groups > 0 && s.c % groups == 0 &&
         out_channels % groups == 0 && g.rows.out > 0 && g.cols.out > 0 && g.rows.before < extent_h &&
         g.rows.after < extent_h && g.cols.before < extent_w && g.cols.after < extent_w && g.rows.after >= 0 &&
         g.cols.after >= 0;
}

using ConvPd = dnnl::convolution_forward::primitive_desc;

// The implementation named `wanted` among those after `pd`, oneDNN's first
// choice from `make`, else that first choice. next_impl() moves the
// descriptor itself (copies share it), so when `wanted` is not on the list
// the first choice is made again.
ConvPd prefer_impl(ConvPd pd, const std::function<ConvPd()>& make, const std::string& wanted) {
  while (pd.next_impl()) {
    if (pd.impl_info_str() == wanted) return pd;
  }
  return make();
}

// oneDNN 3.2's first choice is not always its fastest kernel here:
// - It ranks its brdgmm depthwise kernel first on AVX-512, but its jit_dw
//   kernel of the same ISA runs MobileNetV2's depthwise layers faster: take
//   jit_dw when it is offered at the first choice's ISA. Below AVX-512
//   jit_dw is already the first.
// - On a CPU that splits each 512-bit operation in two (cpu_isa.h), a 1x1
//   convolution to fewer than 32 channels runs faster on its AVX2 kernel
//   (MobileNetV2's 112x112 32->16 and 56x56 96->24 and 144->24 layers; the
//   figures are in docs/performance.md).
//   These layers move many pixels for little arithmetic, and 24 channels fill
//   only three quarters of two 512-bit registers. At 32 channels and more the
//   two ISAs came out even. Other CPUs keep oneDNN's choice.
ConvPd choose_impl(const std::function<ConvPd()>& make, const ConvShape& s, int64_t groups, int64_t out_channels) {
  ConvPd pd = make();
  const std::string first = pd.impl_info_str();
  const std::size_t colon = first.find(':');
  if (colon == std::string::npos) return pd;
  if (groups == s.c && groups == out_channels && first.rfind("brdgmm_dw:", 0) == 0) {
    return prefer_impl(std::move(pd), make, "jit_dw" + first.substr(colon));  // "jit_dw:avx512_core"
  }
  const WindowGeometry& g = s.window;
  if (groups == 1 && g.kh == 1 && g.kw == 1 && out_channels < 32 && first.rfind("brgconv_1x1:avx512", 0) == 0 &&
      splits_512bit_operations()) {
    return prefer_impl(std::move(pd), make, "brgconv_1x1:avx2");
  }
  return pd;
}

}  // namespace

DnnlConvolution::DnnlConvolution(const Epilogue& epilogue) : epilogue_(epilogue) {}
DnnlConvolution::~DnnlConvolution() = default;

DnnlConvolution::Prepared* DnnlConvolution::prepare(const ConvShape& s, int64_t groups, int64_t out_channels,
                                                    bool blocked) {
  std::vector<int64_t> key = problem_key(s, groups, out_channels, blocked);
  std::unique_ptr<Prepared>& slot = prepared_[blocked ? 1 : 0];
  if (slot && slot->key == key) return slot.get();
  auto p = std::make_unique<Prepared>();
  p->key = std::move(key);
  p->pads = s.window.rows.before || s.window.rows.after || s.window.cols.before || s.window.cols.after;
  if (fits_dnnl(s, groups, out_channels) && (!blocked || (s.c % 8 == 0 && out_channels % 8 == 0))) {
    const WindowGeometry& g = s.window;
    const Tag layout = blocked ? Tag::nChw8c : Tag::nhwc;
    const memory::desc src({s.n, s.c, s.h, s.w}, kF32, layout);
    const memory::desc dst({s.n, out_channels, g.rows.out, g.cols.out}, kF32, layout);
    const memory::dims weight_dims = groups == 1
                                         ? memory::dims{out_channels, s.c, g.kh, g.kw}
                                         : memory::dims{groups, out_channels / groups, s.c / groups, g.kh, g.kw};
    // TF's [KH, KW, C/groups, out] is hwio, and with groups hwigo (out = g * out/groups + o).
    const memory::desc user_weights(weight_dims, kF32, groups == 1 ? Tag::hwio : Tag::hwigo);
    const memory::desc any_weights(weight_dims, kF32, Tag::any);
    const memory::desc bias_md = epilogue_.bias ? memory::desc({out_channels}, kF32, Tag::a) : memory::desc();
    try {
      // Direct convolution (oneDNN 3.2 has no Winograd kernel for x86); the
      // 3x3 layers Winograd suits never get here (winograd_conv.h).
      auto make = [&] {
        return ConvPd(dnnl_engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                      any_weights, bias_md, dst, {g.stride_h, g.stride_w}, {g.dilation_h - 1, g.dilation_w - 1},
                      {g.rows.before, g.cols.before}, {g.rows.after, g.cols.after}, strict_attr(epilogue_));
      };
      p->pd = choose_impl(make, s, groups, out_channels);
      // In blocks, oneDNN's reference kernel is the only one for some rare
      // windows: far slower than staying plain, so those stay plain.
      const bool reference = std::string(p->pd.impl_info_str()).rfind("ref", 0) == 0;
      if (!(blocked && reference)) {
        p->primitive = dnnl::convolution_forward(p->pd);
        p->weights.add_to(p->args, user_weights, p->pd.weights_desc());
        p->args.add(DNNL_ARG_SRC, p->pd.src_desc());
        p->args.add(DNNL_ARG_DST, p->pd.dst_desc());
        if (epilogue_.bias) p->args.add(DNNL_ARG_BIAS, p->pd.bias_desc());
        p->args.add_scratchpad(p->pd.scratchpad_desc());
        p->usable = true;
      }
    } catch (const dnnl::error&) {
      p->usable = false;  // no implementation for this problem: the caller's kernel serves it
    }
  }
  slot = std::move(p);
  return slot.get();
}

DnnlConvolution::Prepared* DnnlConvolution::ready_locked(const ConvShape& s, int64_t groups, int64_t out_channels,
                                                         bool blocked, const float* filter, bool constant_filter) {
  if (!dnnl_enabled()) return nullptr;
  Prepared* p = prepare(s, groups, out_channels, blocked);
  if (!p->usable) return nullptr;
  // oneDNN skips padding taps; TF multiplies them, so a padding tap of an
  // inf or NaN weight makes NaN. Such a filter goes to the caller's kernel.
  if (p->pads) {
    if (!constant_filter || !p->weights.filled()) {
      const WindowGeometry& g = s.window;
      const int64_t count = g.kh * g.kw * (s.c / groups) * out_channels;
      p->filter_finite = std::all_of(filter, filter + count, [](float w) { return std::isfinite(w); });
    }
    if (!p->filter_finite) return nullptr;
  }
  return p;
}

bool DnnlConvolution::ready(const ConvShape& s, int64_t groups, int64_t out_channels, bool blocked, const float* filter,
                            bool constant_filter) {
  std::lock_guard<std::mutex> lock(mutex_);
  return ready_locked(s, groups, out_channels, blocked, filter, constant_filter) != nullptr;
}

bool DnnlConvolution::run(const ConvShape& s, int64_t groups, int64_t out_channels, const float* x, const float* filter,
                          bool constant_filter, const float* bias, float* y, bool blocked) {
  std::lock_guard<std::mutex> lock(mutex_);
  Prepared* p = ready_locked(s, groups, out_channels, blocked, filter, constant_filter);
  if (p == nullptr) return false;
  dnnl_call("run a convolution", [&] {
    dnnl::stream& stream = dnnl_stream();
    p->weights.point(p->args, filter, constant_filter, stream);
    p->args.point(DNNL_ARG_SRC, x);
    p->args.point(DNNL_ARG_DST, y);
    if (epilogue_.bias) p->args.point(DNNL_ARG_BIAS, bias);
    p->args.run(p->primitive, stream);
  });
  return true;
}

}  // namespace graphrun
