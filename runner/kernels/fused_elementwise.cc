// _FusedElementwise (internal: only the fuse_elementwise pass writes it): a
// chain of float32 elementwise ops on one tensor x and scalars, such as a
// Transformer's tanh GELU (Pow, Mul, AddV2, Mul, Tanh, AddV2, Mul, Mul),
// run a block of elements at a time through every step while the block is
// in cache, instead of one pass over the whole tensor per op.
//
// Inputs: x, then scalar operands (one element each). Attrs: `steps`, the
// op of each step, and `operands`, two per step: an index below the input
// count names an input, above it the result of an earlier step (input count
// + step index); a unary step's second is -1. The last step is the output.
// Each step computes what the op's own kernel computes for an element (the
// same IEEE operation, exp_f32 and tanh_f32, x * x for Pow by 2), so fusing changes no
// bit of the result.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "exec/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/fused_elementwise.h"
#include "kernels/lib/min_max.h"
#include "kernels/lib/exp_tanh_f32.h"
#include "kernels/lib/vec4.h"

namespace graphrun {
namespace {

enum class Step { kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow, kNeg, kSquare, kTanh, kRelu, kSigmoid, kExp,
                  kSqrt, kRsqrt };

struct StepName {
  const char* op;
  Step step;
  bool binary;
};

constexpr StepName kSteps[] = {
    {"Add", Step::kAdd, true},          {"AddV2", Step::kAdd, true},    {"Sub", Step::kSub, true},
    {"Mul", Step::kMul, true},          {"RealDiv", Step::kDiv, true},  {"Maximum", Step::kMaximum, true},
    {"Minimum", Step::kMinimum, true},  {"Pow", Step::kPow, true},      {"Neg", Step::kNeg, false},
    {"Square", Step::kSquare, false},   {"Tanh", Step::kTanh, false},   {"Relu", Step::kRelu, false},
    {"Sigmoid", Step::kSigmoid, false}, {"Exp", Step::kExp, false},     {"Sqrt", Step::kSqrt, false},
    {"Rsqrt", Step::kRsqrt, false},
};

struct Program {
  struct Op {
    Step step;
    bool binary;
    int64_t a, b;  // operand indices (see the file comment)
  };
  std::vector<Op> ops;
};

}  // namespace

bool fusable_elementwise_op(const std::string& op, bool* binary) {
  for (const StepName& s : kSteps) {
    if (op == s.op) {
      if (binary) *binary = s.binary;
      return true;
    }
  }
  return false;
}

namespace {

Program read_program(const Kernel& kernel, const graphdef::NodeDef& node) {
  const auto& attrs = node.attr();
  const auto steps = attrs.find("steps");
  const std::vector<int64_t> operands = kernel.get_int_list(node, "operands");
  const int64_t inputs = kernel.get_int(node, "N");
  if (steps == attrs.end() || steps->second.list().s_size() == 0 ||
      static_cast<int64_t>(operands.size()) != 2 * steps->second.list().s_size()) {
    throw Error("needs one or more steps and two operands each");
  }
  Program program;
  for (int k = 0; k < steps->second.list().s_size(); ++k) {
    const std::string& op = steps->second.list().s(k);
    const StepName* found = nullptr;
    for (const StepName& s : kSteps) {
      if (op == s.op) found = &s;
    }
    if (!found) throw Error("step " + std::to_string(k) + " is '" + op + "', which does not fuse");
    const int64_t limit = inputs + k;  // inputs and the steps before this one
    const int64_t a = operands[2 * k], b = operands[2 * k + 1];
    if (a < 0 || a >= limit || (found->binary ? (b < 0 || b >= limit) : b != -1)) {
      throw Error("step " + std::to_string(k) + " (" + op + ") has operands " + std::to_string(a) + ", " +
                  std::to_string(b) + " outside the " + std::to_string(limit) + " values before it");
    }
    program.ops.push_back({found->step, found->binary, a, b});
  }
  return program;
}

constexpr std::true_type kLanes{};
constexpr std::false_type kScalar{};

// out[i] = step(a[i], b[i]); a or b fixed at element 0 when it does not move.
void run_step(const Program::Op& op, const float* a, bool a_moves, const float* b, bool b_moves, float* out,
              int64_t n) {
  // A loop for each way the operands move. Ops that are one IEEE operation
  // also run four lanes at a time (`f` then takes F32x4 as well as float):
  // the same operation on each lane, so the same bits.
  auto binary = [&](auto f, auto lanes) {
    int64_t i = 0;
    const float p = a[0], q = b[0];
    if constexpr (decltype(lanes)::value) {
      const F32x4 p4 = {p, p, p, p}, q4 = {q, q, q, q};
      for (; i + 4 <= n; i += 4) store4(out + i, f(a_moves ? load4(a + i) : p4, b_moves ? load4(b + i) : q4));
    }
    if (a_moves && b_moves) {
      for (; i < n; ++i) out[i] = f(a[i], b[i]);
    } else if (a_moves) {
      for (; i < n; ++i) out[i] = f(a[i], q);
    } else if (b_moves) {
      for (; i < n; ++i) out[i] = f(p, b[i]);
    } else {
      const float r = f(p, q);
      for (; i < n; ++i) out[i] = r;
    }
  };
  auto unary = [&](auto f, auto lanes) {
    int64_t i = 0;
    if constexpr (decltype(lanes)::value) {
      if (a_moves) {
        for (; i + 4 <= n; i += 4) store4(out + i, f(load4(a + i)));
      }
    }
    if (a_moves) {
      for (; i < n; ++i) out[i] = f(a[i]);
    } else {
      const float r = f(a[0]);
      for (; i < n; ++i) out[i] = r;
    }
  };
  // exp_tanh_f32.h's functions, as the Exp and Tanh kernels call them
  auto vector_math = [&](void (*f)(const float*, int64_t, float*)) {
    if (a_moves) {
      f(a, n, out);
    } else {
      float r;
      f(a, 1, &r);
      for (int64_t i = 0; i < n; ++i) out[i] = r;
    }
  };
  switch (op.step) {
    case Step::kAdd: binary([](auto p, auto q) { return p + q; }, kLanes); break;
    case Step::kSub: binary([](auto p, auto q) { return p - q; }, kLanes); break;
    case Step::kMul: binary([](auto p, auto q) { return p * q; }, kLanes); break;
    case Step::kDiv: binary([](auto p, auto q) { return p / q; }, kLanes); break;
    case Step::kMaximum: binary([](float p, float q) { return maximum(p, q); }, kScalar); break;
    case Step::kMinimum: binary([](float p, float q) { return minimum(p, q); }, kScalar); break;
    case Step::kPow:
      // Pow's kernel: a single exponent of 2 or 3 multiplies (math_binary.cc)
      if (!b_moves && (b[0] == 2.0f || b[0] == 3.0f)) {
        const bool cube = b[0] == 3.0f;
        if (cube) unary([](auto p) { return (p * p) * p; }, kLanes);
        else unary([](auto p) { return p * p; }, kLanes);
        for (int64_t i = 0; i < n; ++i) {  // an overflow of a finite x is pow's own, as in the kernel
          const float p = a[a_moves ? i : 0];
          if (std::isinf(out[i]) && std::isfinite(p)) out[i] = std::pow(p, b[0]);
        }
      } else {
        binary([](float p, float q) { return std::pow(p, q); }, kScalar);
      }
      break;
    case Step::kNeg: unary([](auto p) { return -p; }, kLanes); break;
    case Step::kSquare: unary([](auto p) { return p * p; }, kLanes); break;
    case Step::kTanh: vector_math(tanh_f32); break;
    case Step::kRelu: unary([](float p) { return maximum(p, 0.0f); }, kScalar); break;
    case Step::kSigmoid: unary([](float p) { return 1.0f / (1.0f + std::exp(-p)); }, kScalar); break;
    case Step::kExp: vector_math(exp_f32); break;
    case Step::kSqrt: unary([](float p) { return std::sqrt(p); }, kScalar); break;
    case Step::kRsqrt: unary([](float p) { return 1.0f / std::sqrt(p); }, kScalar); break;
  }
}

// Elements a block: every step's block stays in the core's cache.
constexpr int64_t kBlock = 2048;

void compute_fused_elementwise(KernelContext& context) {
  const Program& program = context.state<Program>();
  const Tensor& x = context.input(0);
  const int inputs = context.num_inputs();
  for (int k = 1; k < inputs; ++k) {
    if (context.input(k).num_elements() != 1 || context.input(k).dtype() != graphdef::DT_FLOAT) {
      throw Error("input " + std::to_string(k) + " must be one float32, got " +
                  shape_string(context.input(k).shape()));
    }
  }
  const int64_t n = x.num_elements();
  const int64_t steps = static_cast<int64_t>(program.ops.size());
  Tensor out = Tensor::uninitialized(graphdef::DT_FLOAT, x.shape());
  const float* in = x.data<float>();
  float* result = out.data<float>();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(blocks, static_cast<double>(n) * static_cast<double>(steps), [&](int64_t begin, int64_t end) {
    std::vector<float> registers(static_cast<std::size_t>(steps > 1 ? steps - 1 : 1) * kBlock);
    for (int64_t block = begin; block < end; ++block) {
      const int64_t first = block * kBlock, count = std::min(kBlock, n - first);
      // the value at operand index v for this block, and whether it moves
      auto value = [&](int64_t v, bool& moves) -> const float* {
        moves = true;
        if (v == 0) return in + first;
        if (v < inputs) {
          moves = false;
          return context.input(static_cast<int>(v)).data<float>();
        }
        return registers.data() + (v - inputs) * kBlock;
      };
      for (int64_t k = 0; k < steps; ++k) {
        const Program::Op& op = program.ops[k];
        bool a_moves, b_moves = false;
        const float* a = value(op.a, a_moves);
        const float* b = op.binary ? value(op.b, b_moves) : a;
        float* to = k + 1 == steps ? result + first : registers.data() + k * kBlock;
        run_step(op, a, a_moves, b, b_moves, to, count);
      }
    }
  });
  context.set_output(0, std::move(out));
}

REGISTER_KERNEL(Kernel("_FusedElementwise")
                    .list_input("inputs", "N", "T")
                    .output("T")
                    .int_attr("N", 1)
                    .type_attr("T", {graphdef::DT_FLOAT})
                    .string_list_attr("steps")
                    .int_list_attr("operands")
                    .internal()
                    .prepare([](const Kernel& kernel, const graphdef::NodeDef& node) -> std::any {
                      return read_program(kernel, node);
                    })
                    .shape(same_as_input(0))
                    .compute(compute_fused_elementwise));

}  // namespace
}  // namespace graphrun
