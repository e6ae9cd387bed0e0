// BatchMatMul (equal batch dims), BatchMatMulV2 (broadcast batch dims) and
// BatchMatMulV3 (its own dtype per side; here all three must agree): one
// matrix product per batch, adj_x/adj_y transposing the last two dims.
// float32 runs as one oneDNN matmul primitive over all batches
// (lib/dnnl_matmul.h) when the ranks allow; batch_gemm serves the rest.
// _FusedBatchMatMulV2 (internal: only the fusion pass writes it, for a 2-D
// filter) is BatchMatMulV2 with _FusedMatMul's bias and activation after it.
#include <memory>

#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/batch_gemm.h"
#include "kernels/lib/dnnl_matmul.h"

namespace graphrun {
namespace {

using Types = TypeList<float, double, int32_t, int64_t>;

struct BatchMatMulNode {
  bool adj_x = false, adj_y = false;
  Epilogue epilogue;
  std::shared_ptr<DnnlMatMul> dnnl;
};

BatchMatMulNode prepare_node(const Kernel& kernel, const graphdef::NodeDef& node) {
  return BatchMatMulNode{kernel.get_bool(node, "adj_x"), kernel.get_bool(node, "adj_y"), Epilogue{},
                         std::make_shared<DnnlMatMul>(Epilogue{})};
}

BatchMatMulNode prepare_fused_node(const Kernel& kernel, const graphdef::NodeDef& node) {
  const Epilogue epilogue = read_fused_ops(kernel, node);
  return BatchMatMulNode{kernel.get_bool(node, "adj_x"), kernel.get_bool(node, "adj_y"), epilogue,
                         std::make_shared<DnnlMatMul>(epilogue)};
}

// float32 through oneDNN: both operands as rank-`out` arrays (leading 1s
// added), whose batch dims then broadcast as oneDNN's matmul does.
bool multiply_dnnl(const KernelContext& context, const Tensor& x, const Tensor& y, const float* bias, Tensor& out) {
  const BatchMatMulNode& node = context.state<BatchMatMulNode>();
  const std::size_t rank = out.shape().size();
  if (x.dtype() != graphdef::DT_FLOAT || x.rank() < 2 || y.rank() < 2 || rank > 5) return false;
  std::vector<int64_t> a(rank - x.shape().size(), 1), b(rank - y.shape().size(), 1);
  a.insert(a.end(), x.shape().begin(), x.shape().end());
  b.insert(b.end(), y.shape().begin(), y.shape().end());
  if (y.rank() == 2 && x.rank() > 2 && !node.adj_x && x.shape().back() > 0) {
    // One matrix for every batch (a Dense layer on a sequence): x's rows of
    // all batches are one matrix, so the product is one large GEMM.
    a = {x.num_elements() / x.shape().back(), x.shape().back()};
    b = {y.shape()[0], y.shape()[1]};
  }
  return node.dnnl->run(a, b, node.adj_x, node.adj_y, x.data<float>(), y.data<float>(), context.input_is_constant(1),
                        bias, out.data<float>());
}

void compute(KernelContext& context, bool broadcasting) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  if (x.dtype() != y.dtype()) {
    throw Error("x is " + dtype_name(x.dtype()) + " and y " + dtype_name(y.dtype()) +
                "; graphrun-cc multiplies only equal dtypes (cast one side to Tout first)");
  }
  const BatchMatMulNode& node = context.state<BatchMatMulNode>();
  const bool adj_x = node.adj_x, adj_y = node.adj_y;
  const Shape shape = batch_matmul_shape(x.shape(), y.shape(), adj_x, adj_y, broadcasting);
  const Tensor* bias = fused_bias(context, node.epilogue, shape);
  const int64_t channels = shape.back();
  Tensor out = Tensor::uninitialized(x.dtype(), shape);
  if (!multiply_dnnl(context, x, y, bias ? bias->data<float>() : nullptr, out)) {
    out = Tensor(x.dtype(), shape);  // zeros: batch_matmul leaves an empty contraction's sums as they are
    batch_matmul(x, y, adj_x, adj_y, out);
    // the output is [rows, channels] in memory whatever its batch dims
    if (bias && channels > 0) {
      apply_epilogue(out.data<float>(), out.num_elements() / channels, channels, bias->data<float>(), node.epilogue);
    }
  }
  context.set_output(0, std::move(out));
}

void check_v3_dtypes(const Kernel& kernel, const graphdef::NodeDef& node) {
  const DataType a = kernel.get_type(node, "Ta"), b = kernel.get_type(node, "Tb"), out = kernel.get_type(node, "Tout");
  if (a != out || b != out) {
    throw Error("Ta=" + dtype_name(a) + ", Tb=" + dtype_name(b) + ", Tout=" + dtype_name(out) +
                ": graphrun-cc runs BatchMatMulV3 only when the three dtypes agree");
  }
}

REGISTER_KERNEL(Kernel("BatchMatMul")
                    .input("x", "T")
                    .input("y", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(Types{}))
                    .bool_attr("adj_x", false)
                    .bool_attr("adj_y", false)
                    .bool_attr("grad_x", false)
                    .bool_attr("grad_y", false)
                    .prepare(prepare_node)
                    .compute([](KernelContext& context) { compute(context, false); }));

REGISTER_KERNEL(Kernel("BatchMatMulV2")
                    .input("x", "T")
                    .input("y", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(Types{}))
                    .bool_attr("adj_x", false)
                    .bool_attr("adj_y", false)
                    .bool_attr("grad_x", false)
                    .bool_attr("grad_y", false)
                    .prepare(prepare_node)
                    .compute([](KernelContext& context) { compute(context, true); }));

REGISTER_KERNEL(Kernel("BatchMatMulV3")
                    .input("x", "Ta")
                    .input("y", "Tb")
                    .output("Tout")
                    .type_attr("Ta", dtypes_of(Types{}))
                    .type_attr("Tb", dtypes_of(Types{}))
                    .type_attr("Tout", dtypes_of(Types{}))
                    .bool_attr("adj_x", false)
                    .bool_attr("adj_y", false)
                    .bool_attr("grad_x", false)
                    .bool_attr("grad_y", false)
                    .check(check_v3_dtypes)
                    .prepare(prepare_node)
                    .compute([](KernelContext& context) { compute(context, true); }));

REGISTER_KERNEL(declare_fused_epilogue(Kernel("_FusedBatchMatMulV2")
                                           .input("x", "T")
                                           .input("y", "T")
                                           .output("T")
                                           .type_attr("T", {graphdef::DT_FLOAT})
                                           .bool_attr("adj_x", false)
                                           .bool_attr("adj_y", false)
                                           .bool_attr("grad_x", false)
                                           .bool_attr("grad_y", false))
                    .internal()
                    .prepare(prepare_fused_node)
                    .compute([](KernelContext& context) { compute(context, true); }));

}  // namespace
}  // namespace graphrun
