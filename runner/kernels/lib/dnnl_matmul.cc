#include "kernels/lib/dnnl_matmul.h"

namespace graphrun {

using dnnl::memory;
constexpr memory::data_type kF32 = memory::data_type::f32;

struct DnnlMatMul::Prepared {
  std::vector<int64_t> key;
  bool usable = false;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  memory::desc a_md, b_md, c_md, bias_md;
  WeightsArg weights;  // b: in place, or kept in pd's layout (a constant b reordered once)
  PrimitiveArgs args;
};

namespace {

// Row-major strides of `dims`, with the last two dims swapped when `transposed`
// (the operand is stored as its transpose).
memory::desc operand_desc(const std::vector<int64_t>& stored, bool transposed) {
  const std::size_t r = stored.size();
  memory::dims dims(stored.begin(), stored.end());
  memory::dims strides(r);
  int64_t stride = 1;
  for (std::size_t i = r; i-- > 0;) {
    strides[i] = stride;
    stride *= stored[i];
  }
  if (transposed) {
    std::swap(dims[r - 1], dims[r - 2]);
    std::swap(strides[r - 1], strides[r - 2]);
  }
  return memory::desc(dims, kF32, strides);
}

}  // namespace

DnnlMatMul::DnnlMatMul(const Epilogue& epilogue) : epilogue_(epilogue) {}
DnnlMatMul::~DnnlMatMul() = default;

DnnlMatMul::Prepared* DnnlMatMul::prepare(const std::vector<int64_t>& a_dims, const std::vector<int64_t>& b_dims,
                                          bool transpose_a, bool transpose_b, bool constant_b) {
  std::vector<int64_t> key = a_dims;
  key.insert(key.end(), b_dims.begin(), b_dims.end());
  key.push_back(transpose_a);
  key.push_back(transpose_b);
  key.push_back(constant_b);
  if (prepared_ && prepared_->key == key) return prepared_.get();
  auto p = std::make_unique<Prepared>();
  p->key = std::move(key);
  const std::size_t r = a_dims.size();
  bool fits = r >= 2 && r <= 5 && b_dims.size() == r;  // oneDNN's matmul takes up to 12 dims; 5 is plenty
  for (std::size_t i = 0; fits && i < r; ++i) {
    fits = a_dims[i] > 0 && b_dims[i] > 0 && (i >= r - 2 || a_dims[i] == b_dims[i] || a_dims[i] == 1 || b_dims[i] == 1);
  }
  if (fits) {
    p->a_md = operand_desc(a_dims, transpose_a);
    p->b_md = operand_desc(b_dims, transpose_b);
    memory::dims c_dims(r);
    for (std::size_t i = 0; i + 2 < r; ++i) c_dims[i] = std::max(a_dims[i], b_dims[i]);
    c_dims[r - 2] = p->a_md.get_dims()[r - 2];
    c_dims[r - 1] = p->b_md.get_dims()[r - 1];
    const bool inner_fits = p->a_md.get_dims()[r - 1] == p->b_md.get_dims()[r - 2];
    memory::dims c_strides(r);
    int64_t stride = 1;
    for (std::size_t i = r; i-- > 0;) {
      c_strides[i] = stride;
      stride *= c_dims[i];
    }
    p->c_md = memory::desc(c_dims, kF32, c_strides);
    if (epilogue_.bias) {
      memory::dims bias_dims(r, 1);
      bias_dims[r - 1] = c_dims[r - 1];
      memory::dims bias_strides(r, c_dims[r - 1]);
      bias_strides[r - 1] = 1;
      p->bias_md = memory::desc(bias_dims, kF32, bias_strides);
    }
    // A constant b in whatever layout oneDNN prefers ("any"); else as stored.
    const memory::desc b_any(p->b_md.get_dims(), kF32, memory::format_tag::any);
    try {
      if (inner_fits) {
        p->pd = dnnl::matmul::primitive_desc(dnnl_engine(), p->a_md, constant_b ? b_any : p->b_md, p->bias_md, p->c_md,
                                             strict_attr(epilogue_));
        p->primitive = dnnl::matmul(p->pd);
        p->weights.add_to(p->args, p->b_md, p->pd.weights_desc());
        p->args.add(DNNL_ARG_SRC, p->a_md);
        p->args.add(DNNL_ARG_DST, p->c_md);
        if (epilogue_.bias) p->args.add(DNNL_ARG_BIAS, p->bias_md);
        p->args.add_scratchpad(p->pd.scratchpad_desc());
        p->usable = true;
      }
    } catch (const dnnl::error&) {
      p->usable = false;
    }
  }
  prepared_ = std::move(p);
  return prepared_.get();
}

bool DnnlMatMul::run(const std::vector<int64_t>& a_dims, const std::vector<int64_t>& b_dims, bool transpose_a,
                     bool transpose_b, const float* a, const float* b, bool constant_b, const float* bias, float* c) {
  if (!dnnl_enabled()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  Prepared* p = prepare(a_dims, b_dims, transpose_a, transpose_b, constant_b);
  if (!p->usable) return false;
  dnnl_call("run a matrix product", [&] {
    dnnl::stream& stream = dnnl_stream();
    p->weights.point(p->args, b, constant_b, stream);
    p->args.point(DNNL_ARG_SRC, a);
    p->args.point(DNNL_ARG_DST, c);
    if (epilogue_.bias) p->args.point(DNNL_ARG_BIAS, bias);
    p->args.run(p->primitive, stream);
  });
  return true;
}

}  // namespace graphrun
