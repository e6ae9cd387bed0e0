// BatchMatMul (equal batch dims), BatchMatMulV2 (broadcast batch dims) and
// BatchMatMulV3 (its own dtype per side; here all three must agree): one
// matrix product per batch, adj_x/adj_y transposing the last two dims.
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/batch_gemm.h"

namespace graphrun {
namespace {

using Types = TypeList<float, double, int32_t, int64_t>;

void compute(KernelContext& context, bool broadcasting) {
  const Tensor& x = context.input(0);
  const Tensor& y = context.input(1);
  if (x.dtype() != y.dtype()) {
    throw Error("x is " + dtype_name(x.dtype()) + " and y " + dtype_name(y.dtype()) +
                "; graphrun-cc multiplies only equal dtypes (cast one side to Tout first)");
  }
  const bool adj_x = context.attr_bool("adj_x"), adj_y = context.attr_bool("adj_y");
  Tensor out(x.dtype(), batch_matmul_shape(x.shape(), y.shape(), adj_x, adj_y, broadcasting));
  batch_matmul(x, y, adj_x, adj_y, out);
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
                    .compute([](KernelContext& context) { compute(context, true); }));

}  // namespace
}  // namespace graphrun
