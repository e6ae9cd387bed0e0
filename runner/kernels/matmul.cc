// MatMul: 2-D matrix product with optional transposes, and the fusion
// pass's _FusedMatMul (bias and activation after it). float32 runs as a
// oneDNN matmul primitive (lib/dnnl_matmul.h); Eigen does the other floats
// and is float32's fallback; integers use a plain triple loop so the products
// wrap like every other integer op here.
#include <Eigen/Core>
#include <memory>

#include "kernels/lib/dnnl_matmul.h"

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

using MatMulTypes = TypeList<float, double, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
void multiply_floats(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, Tensor& out) {
  const Eigen::Map<const RowMajorMatrix<T>> A(a.data<T>(), a.shape()[0], a.shape()[1]);
  const Eigen::Map<const RowMajorMatrix<T>> B(b.data<T>(), b.shape()[0], b.shape()[1]);
  Eigen::Map<RowMajorMatrix<T>> C(out.data<T>(), out.shape()[0], out.shape()[1]);
  if (!transpose_a && !transpose_b) C.noalias() = A * B;
  else if (transpose_a && !transpose_b) C.noalias() = A.transpose() * B;
  else if (!transpose_a && transpose_b) C.noalias() = A * B.transpose();
  else C.noalias() = A.transpose() * B.transpose();
}

template <class T>
void multiply_ints(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, Tensor& out) {
  const int64_t m = out.shape()[0];
  const int64_t n = out.shape()[1];
  const int64_t k = transpose_a ? a.shape()[0] : a.shape()[1];
  const int64_t a_cols = a.shape()[1];
  const int64_t b_cols = b.shape()[1];
  const T* A = a.data<T>();
  const T* B = b.data<T>();
  T* C = out.data<T>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T x = transpose_a ? A[p * a_cols + i] : A[i * a_cols + p];
        const T y = transpose_b ? B[j * b_cols + p] : B[p * b_cols + j];
        sum = wrapping_add(sum, wrapping_mul(x, y));
      }
      C[i * n + j] = sum;
    }
  }
}

struct MatMulNode {
  bool transpose_a = false, transpose_b = false;
  Epilogue epilogue;
  std::shared_ptr<DnnlMatMul> dnnl;
};

void compute_matmul(KernelContext& context) {
  const MatMulNode& node = context.state<MatMulNode>();
  const Tensor& a = context.input(0);
  const Tensor& b = context.input(1);
  const bool transpose_a = node.transpose_a;
  const bool transpose_b = node.transpose_b;
  if (a.rank() != 2 || b.rank() != 2) {
    throw Error("needs two 2-D inputs, got " + shape_string(a.shape()) + " and " + shape_string(b.shape()));
  }
  // The shapes as multiplied, after the transposes.
  const Shape a_used = transpose_a ? Shape{a.shape()[1], a.shape()[0]} : a.shape();
  const Shape b_used = transpose_b ? Shape{b.shape()[1], b.shape()[0]} : b.shape();
  if (a_used[1] != b_used[0]) {
    throw Error("cannot multiply " + shape_string(a_used) + " by " + shape_string(b_used));
  }
  const Tensor* bias = fused_bias(context, node.epilogue, {a_used[0], b_used[1]});
  if (a.dtype() == graphdef::DT_FLOAT) {
    Tensor out = Tensor::uninitialized(a.dtype(), {a_used[0], b_used[1]});
    if (node.dnnl->run(a.shape(), b.shape(), transpose_a, transpose_b, a.data<float>(), b.data<float>(),
                       context.input_is_constant(1), bias ? bias->data<float>() : nullptr, out.data<float>())) {
      context.set_output(0, std::move(out));
      return;
    }
  }
  Tensor out(a.dtype(), {a_used[0], b_used[1]});
  dispatch(MatMulTypes{}, a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) multiply_floats<T>(a, b, transpose_a, transpose_b, out);
    else multiply_ints<T>(a, b, transpose_a, transpose_b, out);
  });
  if (bias) apply_epilogue(out.data<float>(), a_used[0], b_used[1], bias->data<float>(), node.epilogue);
  context.set_output(0, std::move(out));
}

void matmul_shape(ShapeContext& context) {
  const StaticShape a = context.input(0), b = context.input(1);
  if (a.known_rank && b.known_rank && a.dims.size() == 2 && b.dims.size() == 2) {
    context.set_output(0, known_shape({a.dims[context.attr("transpose_a").b() ? 1 : 0],
                                       b.dims[context.attr("transpose_b").b() ? 0 : 1]}));
  }
}

REGISTER_KERNEL(Kernel("MatMul")
                    .input("a", "T")
                    .input("b", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(MatMulTypes{}))
                    .bool_attr("transpose_a", false)
                    .bool_attr("transpose_b", false)
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      return MatMulNode{kernel.get_bool(node, "transpose_a"), kernel.get_bool(node, "transpose_b"),
                                        Epilogue{}, std::make_shared<DnnlMatMul>(Epilogue{})};
                    })
                    .shape(matmul_shape)
                    .compute(compute_matmul));

// TensorFlow's remapper op, written only by the fusion pass; float32 only.
REGISTER_KERNEL(declare_fused_epilogue(Kernel("_FusedMatMul")
                                           .input("a", "T")
                                           .input("b", "T")
                                           .output("T")
                                           .type_attr("T", {graphdef::DT_FLOAT})
                                           .bool_attr("transpose_a", false)
                                           .bool_attr("transpose_b", false))
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      const Epilogue epilogue = read_fused_ops(kernel, node);
                      return MatMulNode{kernel.get_bool(node, "transpose_a"), kernel.get_bool(node, "transpose_b"),
                                        epilogue, std::make_shared<DnnlMatMul>(epilogue)};
                    })
                    .shape(matmul_shape)
                    .compute(compute_matmul));

}  // namespace
}  // namespace graphrun
