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
// same IEEE operation, exp_f32 and tanh_f32, x * x for Pow by 2), so fusing
// changes no bit of the result; the steps run in the widest vector lanes the
// CPU has (fused_elementwise_steps.inc), which changes none either.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "graph/kernel.h"
#include "exec/kernel_context.h"
#include "graph/shape_rules.h"
#include "kernels/fused_elementwise.h"
#include "kernels/lib/min_max.h"
#include "kernels/lib/exp_tanh_f32.h"
#include "kernels/lib/cpu_isa.h"

namespace graphrun {
namespace {

enum class Step {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  kPow,
  kNeg,
  kSquare,
  kTanh,
  kRelu,
  kSigmoid,
  kExp,
  kSqrt,
  kRsqrt
};

struct StepName {
  const char* op;
  Step step;
  bool binary;
};

constexpr StepName kSteps[] = {
    {"Add", Step::kAdd, true},          {"AddV2", Step::kAdd, true},   {"Sub", Step::kSub, true},
    {"Mul", Step::kMul, true},          {"RealDiv", Step::kDiv, true}, {"Maximum", Step::kMaximum, true},
    {"Minimum", Step::kMinimum, true},  {"Pow", Step::kPow, true},     {"Neg", Step::kNeg, false},
    {"Square", Step::kSquare, false},   {"Tanh", Step::kTanh, false},  {"Relu", Step::kRelu, false},
    {"Sigmoid", Step::kSigmoid, false}, {"Exp", Step::kExp, false},    {"Sqrt", Step::kSqrt, false},
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

// run_step in three lane widths (fused_elementwise_steps.inc). Their vector
// helpers are inlined into functions of the same target, so the vector ABI
// the compiler warns about (clang, which ignores these target pragmas, does)
// is never crossed.
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx512f")
namespace lanes16 {
typedef float V __attribute__((vector_size(64)));
#include "kernels/fused_elementwise_steps.inc"
}  // namespace lanes16
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2")
namespace lanes8 {
typedef float V __attribute__((vector_size(32)));
#include "kernels/fused_elementwise_steps.inc"
}  // namespace lanes8
#pragma GCC pop_options

namespace lanes4 {
typedef float V __attribute__((vector_size(16)));
#include "kernels/fused_elementwise_steps.inc"
}  // namespace lanes4

using StepFn = void (*)(const Program::Op&, const float*, bool, const float*, bool, float*, int64_t);

StepFn step_for_this_cpu() {
  switch (own_kernel_isa()) {
    case CpuIsa::kAvx512: return lanes16::run_step;
    case CpuIsa::kAvx2: return lanes8::run_step;
    case CpuIsa::kSse: break;
  }
  return lanes4::run_step;
}

// Elements a block: every step's block stays in the core's cache.
constexpr int64_t kBlock = 2048;

void compute_fused_elementwise(KernelContext& context) {
  const Program& program = context.state<Program>();
  const Tensor& x = context.input(0);
  const int inputs = context.num_inputs();
  for (int k = 1; k < inputs; ++k) {
    if (context.input(k).num_elements() != 1 || context.input(k).dtype() != graphdef::DT_FLOAT) {
      throw Error("input " + std::to_string(k) + " must be one float32, got " + shape_string(context.input(k).shape()));
    }
  }
  const int64_t n = x.num_elements();
  const int64_t steps = static_cast<int64_t>(program.ops.size());
  Tensor out = Tensor::uninitialized(graphdef::DT_FLOAT, x.shape());
  const float* in = x.data<float>();
  float* result = out.data<float>();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  // A register holds one block, so a small tensor's chain needs only its own size per step.
  const int64_t width = std::max<int64_t>(1, std::min(kBlock, n));
  static const StepFn run_step = step_for_this_cpu();
  parallel_for(blocks, static_cast<double>(n) * static_cast<double>(steps), [&](int64_t begin, int64_t end) {
    // uninitialized: every register is written by its step before a later step reads it
    const std::unique_ptr<float[]> registers(new float[static_cast<std::size_t>(steps > 1 ? steps - 1 : 1) * width]);
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
        return registers.get() + (v - inputs) * width;
      };
      for (int64_t k = 0; k < steps; ++k) {
        const Program::Op& op = program.ops[k];
        bool a_moves, b_moves = false;
        const float* a = value(op.a, a_moves);
        const float* b = op.binary ? value(op.b, b_moves) : a;
        float* to = k + 1 == steps ? result + first : registers.get() + k * width;
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
