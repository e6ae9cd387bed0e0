// Einsum for one or two inputs, by the rules of graphdef/ops/einsum.py: the
// equation (text from the file, parsed, never evaluated) has letters for
// labels, exactly one "->", no ellipsis and no label repeated inside one
// input (diagonals, traces). Labels only one input has and the output lacks
// are summed first; then the inputs are permuted to [batch, free, contract]
// and [batch, contract, free], multiplied per batch, and the product
// permuted to the output's order.
#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "kernels/lib/batch_gemm.h"
#include "kernels/lib/dnnl_matmul.h"
#include "kernels/lib/permute.h"

namespace graphrun {
namespace {

constexpr std::size_t kMaxEquation = 256;

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Equation parse(const std::string& equation, int64_t n_inputs) {
  if (equation.size() > kMaxEquation) {
    throw Error("equation has " + std::to_string(equation.size()) + " characters, more than " +
                std::to_string(kMaxEquation));
  }
  std::string text;
  for (char c : equation) {
    if (c != ' ') text += c;
  }
  const std::string quoted = "equation '" + equation + "'";
  if (text.find('.') != std::string::npos) {
    throw Error(quoted + " uses an ellipsis, which is not supported; name every dim");
  }
  const std::size_t arrow = text.find("->");
  if (arrow == std::string::npos) throw Error(quoted + " needs exactly one '->' before its output labels");
  const std::string lhs = text.substr(0, arrow);
  const std::string rhs = text.substr(arrow + 2);
  if ((lhs + rhs).find_first_of("->") != std::string::npos) {
    throw Error(quoted + " is malformed: one '->' at most, between inputs and output");
  }
  Equation eq;
  std::string part;
  for (char c : lhs + ",") {
    if (c == ',') {
      eq.inputs.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  if (static_cast<int64_t>(eq.inputs.size()) != n_inputs) {
    throw Error(quoted + " names " + std::to_string(eq.inputs.size()) + " inputs, the node has " +
                std::to_string(n_inputs));
  }
  if (n_inputs != 1 && n_inputs != 2) throw Error("Einsum takes one or two inputs, got " + std::to_string(n_inputs));
  std::vector<std::string> parts = eq.inputs;
  parts.push_back(rhs);
  for (const std::string& p : parts) {
    for (char c : p) {
      if (!is_label(c)) throw Error(quoted + " has '" + std::string(1, c) + "'; labels are letters a-z, A-Z");
    }
  }
  for (std::size_t k = 0; k < eq.inputs.size(); ++k) {
    const std::string& p = eq.inputs[k];
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p.find(p[i], i + 1) != std::string::npos) {
        throw Error(quoted + " repeats '" + std::string(1, p[i]) + "' in input " + std::to_string(k) +
                    ": diagonals and traces are not supported");
      }
    }
  }
  const std::string joined = n_inputs == 2 ? eq.inputs[0] + eq.inputs[1] : eq.inputs[0];
  eq.output = rhs;
  for (std::size_t i = 0; i < eq.output.size(); ++i) {
    if (eq.output.find(eq.output[i], i + 1) != std::string::npos) {
      throw Error(quoted + " repeats a label in its output");
    }
    if (joined.find(eq.output[i]) == std::string::npos) {
      throw Error(quoted + ": output label '" + std::string(1, eq.output[i]) + "' is in no input");
    }
  }
  return eq;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// `x` (labelled `labels`) with the labels outside `keep` summed away; `labels` is updated.
// x itself when every label is kept.
TensorPtr sum_labels(const TensorPtr& held, std::string& labels, const std::string& keep) {
  const Tensor& x = *held;
  std::vector<int> perm;
  std::string kept;
  int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (has(keep, labels[i])) {
      perm.push_back(static_cast<int>(i));
      kept += labels[i];
      outer *= x.shape()[i];
    }
  }
  if (kept.size() == labels.size()) return held;
  Shape out_shape;
  for (int d : perm) out_shape.push_back(x.shape()[d]);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (!has(keep, labels[i])) {
      perm.push_back(static_cast<int>(i));
      inner *= x.shape()[i];
    }
  }
  const Tensor moved = permuted(x, perm);
  Tensor out(x.dtype(), out_shape);
  dispatch(TypeList<float, double, int32_t, int64_t>{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = moved.data<T>();
    T* o = out.data<T>();
    for (int64_t r = 0; r < outer; ++r) {
      T sum = 0;
      for (int64_t c = 0; c < inner; ++c) sum = add(sum, in[r * inner + c]);
      o[r] = sum;
    }
  });
  labels = kept;
  return std::make_shared<const Tensor>(std::move(out));
}

// The oneDNN product kept with the node (float32 operands).
struct EinsumNode {
  std::shared_ptr<DnnlMatMul> dnnl;
};

std::vector<int> order_of(const std::string& from, const std::string& to) {
  std::vector<int> perm;
  for (char c : to) perm.push_back(static_cast<int>(from.find(c)));
  return perm;
}

// x (dims labelled `from`) with its dims in the order `to`, as `shape`:
// shared, not copied, when the order is already that (the result borrows
// x's elements, so nothing overwrites them in place).
Tensor arranged(const TensorPtr& x, const std::string& from, const std::string& to, const Shape& shape) {
  if (from != to) return permuted(*x, order_of(from, to)).reshaped(shape);
  if (x->layout() != Layout::kPlain || x->num_elements() == 0) return x->reshaped(shape);
  return Tensor::borrowed(x->dtype(), shape, x->num_elements(), x->raw_data(), x);
}

void compute_einsum(KernelContext& context) {
  const int n = context.num_inputs();
  const Equation eq = parse(context.attr_string("equation"), n);
  std::map<char, int64_t> sizes;
  for (int k = 0; k < n; ++k) {
    const Tensor& x = context.input(k);
    const std::string& labels = eq.inputs[k];
    if (x.rank() != static_cast<int64_t>(labels.size())) {
      throw Error("input " + std::to_string(k) + " has shape " + shape_string(x.shape()) +
                  " but the equation gives it " + std::to_string(labels.size()) + " labels '" + labels + "'");
    }
    for (std::size_t i = 0; i < labels.size(); ++i) {
      auto [it, fresh] = sizes.emplace(labels[i], x.shape()[i]);
      if (!fresh && it->second != x.shape()[i]) {
        throw Error(std::string("label '") + labels[i] + "' is " + std::to_string(it->second) + " in one place and " +
                    std::to_string(x.shape()[i]) + " in another");
      }
    }
  }
  if (n == 2 && context.input(0).dtype() != context.input(1).dtype()) throw Error("inputs differ in dtype");
  Shape out_shape;
  for (char c : eq.output) out_shape.push_back(sizes[c]);
  checked_num_elements(out_shape, context.input(0).dtype());  // before any intermediate is made
  if (n == 1) {
    std::string labels = eq.inputs[0];
    const TensorPtr reduced = sum_labels(context.input_ptr(0), labels, eq.output);
    context.set_output(0, permuted(*reduced, order_of(labels, eq.output)));
    return;
  }
  std::string la = eq.inputs[0], lb = eq.inputs[1];
  const TensorPtr a = sum_labels(context.input_ptr(0), la, lb + eq.output);
  const TensorPtr b = sum_labels(context.input_ptr(1), lb, la + eq.output);
  std::string batch, free_a, contract, free_b;
  for (char c : eq.output) {
    if (has(la, c) && has(lb, c)) batch += c;
  }
  for (char c : la) {
    if (has(lb, c) && !has(eq.output, c)) contract += c;
    if (!has(lb, c) && has(eq.output, c)) free_a += c;
  }
  for (char c : lb) {
    if (!has(la, c) && has(eq.output, c)) free_b += c;
  }
  auto size = [&](const std::string& group) {
    int64_t s = 1;
    for (char c : group) s *= sizes[c];
    return s;
  };
  const int64_t nb = size(batch), m = size(free_a), k = size(contract), nn = size(free_b);
  // Each operand as a batch of matrices, stored transposed (an adjoint) when
  // that keeps its innermost dim innermost: the copy then moves whole runs
  // (an attention head's H values), or nothing at all.
  const bool adj_a = !la.empty() && has(free_a, la.back());
  const bool adj_b = !lb.empty() && has(contract, lb.back());
  const Tensor a3 = arranged(a, la, adj_a ? batch + contract + free_a : batch + free_a + contract,
                             adj_a ? Shape{nb, k, m} : Shape{nb, m, k});
  const Tensor b3 = arranged(b, lb, adj_b ? batch + free_b + contract : batch + contract + free_b,
                             adj_b ? Shape{nb, nn, k} : Shape{nb, k, nn});
  const std::string order = batch + free_a + free_b;
  Shape order_shape;
  for (char c : order) order_shape.push_back(sizes[c]);
  const EinsumNode& node = context.state<EinsumNode>();
  Tensor product = Tensor::uninitialized(a->dtype(), {nb, m, nn});
  if (a->dtype() != graphdef::DT_FLOAT || !node.dnnl->run(a3.shape(), b3.shape(), adj_a, adj_b, a3.data<float>(),
                                                          b3.data<float>(), false, nullptr, product.data<float>())) {
    product = Tensor(a->dtype(), {nb, m, nn});  // zeros: an empty contraction sums to 0
    batch_matmul(a3, b3, adj_a, adj_b, product);
  }
  if (order == eq.output) {
    context.set_output(0, std::move(product).reshaped(out_shape));
  } else {
    const Tensor ordered = std::move(product).reshaped(order_shape);
    context.set_output(0, permuted(ordered, order_of(order, eq.output)).reshaped(out_shape));
  }
}

REGISTER_KERNEL(Kernel("Einsum")
                    .list_input("inputs", "N", "T")
                    .output("T")
                    .choice_attr("equation", {})
                    .int_attr("N", 1)
                    .type_attr("T", dtypes_of(TypeList<float, double, int32_t, int64_t>{}))
                    .check([](const Kernel& kernel, const graphdef::NodeDef& node) {
                      parse(kernel.get_string(node, "equation"), kernel.get_int(node, "N"));
                    })
                    .prepare([](const Kernel&, const graphdef::NodeDef&) -> std::any {
                      return EinsumNode{std::make_shared<DnnlMatMul>(Epilogue{})};
                    })
                    .compute(compute_einsum));

}  // namespace
}  // namespace graphrun
