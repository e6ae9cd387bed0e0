// The optimizers' update ops: ApplyGradientDescent, ApplyMomentum and
// ApplyAdam. Each reads the variable (and its slots) named by its ref inputs,
// writes the new values back to the variable store and outputs the
// variable's new value.
//
// The arithmetic is Python's kernels' (graphdef/ops/state.py) operation by
// operation, each rounded to the element type in the same order, so both
// runners give the same bits. TensorFlow's checks come first: the gradient
// has the variable's shape, every slot too, and the hyper-parameters are
// scalars.
#include <cmath>

#include "core/int_arith.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"

namespace graphrun {
namespace {

// What one update works on: the variable's current value and name.
struct Target {
  std::string name;
  TensorPtr value;
};

Target read_variable(KernelContext& context) {
  Target target{context.ref_variable(0), nullptr};
  target.value = context.variables().read(target.name);
  return target;
}

void check_gradient(const Target& variable, const char* what, const Tensor& gradient) {
  if (gradient.shape() != variable.value->shape()) {
    throw Error("variable '" + variable.name + "' has shape " + shape_string(variable.value->shape()) + " but " + what +
                " has shape " + shape_string(gradient.shape()));
  }
}

// A slot (Momentum's accumulator, Adam's moments) must match its variable.
TensorPtr read_slot(KernelContext& context, int ref, const char* what, const Target& variable) {
  const std::string& name = context.ref_variable(ref);
  TensorPtr slot = context.variables().read(name);
  if (slot->shape() != variable.value->shape()) {
    throw Error(std::string(what) + " '" + name + "' has shape " + shape_string(slot->shape()) + " but variable '" +
                variable.name + "' has shape " + shape_string(variable.value->shape()));
  }
  return slot;
}

template <class T>
T hyper_parameter(const Tensor& tensor, const char* what, const Target& variable) {
  if (tensor.rank() != 0) {
    throw Error(std::string("hyper-parameter ") + what + " for variable '" + variable.name +
                "' must be a scalar, got shape " + shape_string(tensor.shape()));
  }
  return tensor.data<T>()[0];
}

// Stores a new value for ref input `ref`; returns it, shared.
TensorPtr store(KernelContext& context, int ref, Tensor&& value) {
  auto shared = std::make_shared<const Tensor>(std::move(value));
  context.variables().write(context.ref_variable(ref), shared);
  return shared;
}

// var -= alpha * delta.
void apply_gradient_descent(KernelContext& context) {
  const Target var = read_variable(context);
  const Tensor& delta = context.input(2);
  check_gradient(var, "delta", delta);
  dispatch(NumericTypes{}, delta.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = hyper_parameter<T>(context.input(1), "alpha", var);
    Tensor updated(delta.dtype(), delta.shape());
    const T* v = var.value->data<T>();
    const T* d = delta.data<T>();
    T* out = updated.data<T>();
    for (int64_t i = 0; i < delta.num_elements(); ++i) out[i] = sub(v[i], mul(alpha, d[i]));
    context.set_output(0, store(context, 0, std::move(updated)));
  });
}

// accum = accum * momentum + grad; var -= accum * lr, or with Nesterov
// var -= grad * lr + accum * momentum * lr (TensorFlow's order of rounding).
void apply_momentum(KernelContext& context) {
  const Target var = read_variable(context);
  const TensorPtr accum = read_slot(context, 1, "accumulator", var);
  const Tensor& grad = context.input(3);
  check_gradient(var, "grad", grad);
  const bool nesterov = context.attr_bool("use_nesterov");
  dispatch(NumericTypes{}, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T lr = hyper_parameter<T>(context.input(2), "lr", var);
    const T momentum = hyper_parameter<T>(context.input(4), "momentum", var);
    Tensor new_accum(grad.dtype(), grad.shape());
    Tensor new_var(grad.dtype(), grad.shape());
    const T* v = var.value->data<T>();
    const T* a = accum->data<T>();
    const T* g = grad.data<T>();
    T* a_out = new_accum.data<T>();
    T* v_out = new_var.data<T>();
    for (int64_t i = 0; i < grad.num_elements(); ++i) {
      a_out[i] = add(mul(a[i], momentum), g[i]);
      const T step = nesterov ? add(mul(g[i], lr), mul(mul(a_out[i], momentum), lr)) : mul(a_out[i], lr);
      v_out[i] = sub(v[i], step);
    }
    store(context, 1, std::move(new_accum));
    context.set_output(0, store(context, 0, std::move(new_var)));
  });
}

// lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power);
// m = beta1 * m + (1 - beta1) * grad; v = beta2 * v + (1 - beta2) * grad * grad;
// var -= lr_t * m / (sqrt(v) + epsilon), with Nesterov's beta1 * m + (1 - beta1) * grad
// in place of m.
void apply_adam(KernelContext& context) {
  const Target var = read_variable(context);
  const TensorPtr m = read_slot(context, 1, "first moment", var);
  const TensorPtr v = read_slot(context, 2, "second moment", var);
  const Tensor& grad = context.input(9);
  check_gradient(var, "grad", grad);
  const bool nesterov = context.attr_bool("use_nesterov");
  dispatch(FloatTypes{}, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T beta1_power = hyper_parameter<T>(context.input(3), "beta1_power", var);
    const T beta2_power = hyper_parameter<T>(context.input(4), "beta2_power", var);
    const T lr = hyper_parameter<T>(context.input(5), "lr", var);
    const T beta1 = hyper_parameter<T>(context.input(6), "beta1", var);
    const T beta2 = hyper_parameter<T>(context.input(7), "beta2", var);
    const T epsilon = hyper_parameter<T>(context.input(8), "epsilon", var);
    const T lr_t = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    Tensor new_m(grad.dtype(), grad.shape());
    Tensor new_v(grad.dtype(), grad.shape());
    Tensor new_var(grad.dtype(), grad.shape());
    const T* w = var.value->data<T>();
    const T* m_in = m->data<T>();
    const T* v_in = v->data<T>();
    const T* g = grad.data<T>();
    T* m_out = new_m.data<T>();
    T* v_out = new_v.data<T>();
    T* w_out = new_var.data<T>();
    for (int64_t i = 0; i < grad.num_elements(); ++i) {
      m_out[i] = beta1 * m_in[i] + (T(1) - beta1) * g[i];
      v_out[i] = beta2 * v_in[i] + (T(1) - beta2) * g[i] * g[i];
      const T direction = nesterov ? beta1 * m_out[i] + (T(1) - beta1) * g[i] : m_out[i];
      w_out[i] = w[i] - lr_t * direction / (std::sqrt(v_out[i]) + epsilon);
    }
    store(context, 1, std::move(new_m));
    store(context, 2, std::move(new_v));
    context.set_output(0, store(context, 0, std::move(new_var)));
  });
}

const std::vector<DataType> kNumeric = dtypes_of(NumericTypes{});

REGISTER_KERNEL(Kernel("ApplyGradientDescent")
                    .ref_input("var", "T")
                    .input("alpha", "T")
                    .input("delta", "T")
                    .output("T")
                    .type_attr("T", kNumeric)
                    .bool_attr("use_locking", false)
                    .shape(same_as_input(0))
                    .compute(apply_gradient_descent));

REGISTER_KERNEL(Kernel("ApplyMomentum")
                    .ref_input("var", "T")
                    .ref_input("accum", "T")
                    .input("lr", "T")
                    .input("grad", "T")
                    .input("momentum", "T")
                    .output("T")
                    .type_attr("T", kNumeric)
                    .bool_attr("use_locking", false)
                    .bool_attr("use_nesterov", false)
                    .shape(same_as_input(0))
                    .compute(apply_momentum));

// Python's registry takes floats only (TensorFlow's OpDef lists every number
// type, but an integer Adam step is meaningless).
REGISTER_KERNEL(Kernel("ApplyAdam")
                    .ref_input("var", "T")
                    .ref_input("m", "T")
                    .ref_input("v", "T")
                    .input("beta1_power", "T")
                    .input("beta2_power", "T")
                    .input("lr", "T")
                    .input("beta1", "T")
                    .input("beta2", "T")
                    .input("epsilon", "T")
                    .input("grad", "T")
                    .output("T")
                    .type_attr("T", dtypes_of(FloatTypes{}))
                    .bool_attr("use_locking", false)
                    .bool_attr("use_nesterov", false)
                    .shape(same_as_input(0))
                    .compute(apply_adam));

}  // namespace
}  // namespace graphrun
