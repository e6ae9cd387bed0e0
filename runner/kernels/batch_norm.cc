// FusedBatchNormV3 (and V1, V2: the same but output 5), NHWC, float32, computed as Python's graphrun (and TF's
// CPU kernel) does, every step in float32:
//   inference  y = (x - mean) * (scale / sqrt(variance + eps)) + offset;
//              outputs 1-4 are mean, variance, mean, variance;
//   training   mean = sum(x) * (1/n) and variance = sum((x - mean)^2) * (1/n)
//              per channel (sums in row order), y normalizes with them;
//              output 1 is the batch mean and output 2 the unbiased variance
//              (times n / max(n - 1, 1)), or with exponential_avg_factor
//              f != 1 the moving averages (1 - f) * input + f * batch;
//              outputs 3 and 4 are the batch mean and biased variance.
// Output 5 is an empty [0]. Training ignores empty mean/variance inputs
// unless f != 1 needs them.
#include <cmath>
#include <limits>
#include <vector>

#include "graph/kernel.h"
#include "exec/kernel_context.h"

namespace graphrun {
namespace {

Tensor vector_of(const std::vector<float>& values) {
  Tensor t = Tensor::uninitialized(graphdef::DT_FLOAT, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

std::vector<float> read_vector(const Tensor& t, int64_t depth, const std::string& what, const std::string& why) {
  if (t.shape() != Shape{depth}) {
    throw Error(what + " has shape " + shape_string(t.shape()) + ", expected [" + std::to_string(depth) + "]" + why);
  }
  return std::vector<float>(t.data<float>(), t.data<float>() + depth);
}

// V3's empty output 5; V1 and V2 have only five outputs.
void set_reserve_space_3(KernelContext& context) {
  if (context.outputs().size() > 5) context.set_output(5, Tensor(graphdef::DT_FLOAT, {0}));
}

struct BatchNormAttrs {
  float epsilon = 0, exponential_avg_factor = 1;
  bool is_training = true;
};

void compute_fused_batch_norm(KernelContext& context) {
  const BatchNormAttrs& attrs = context.state<BatchNormAttrs>();
  const Tensor& x = context.input(0);
  if (x.rank() != 4) throw Error("x must be 4-D (NHWC), got shape " + shape_string(x.shape()));
  const int64_t depth = x.shape()[3];
  const int64_t rows = depth ? x.num_elements() / depth : 0;
  const std::vector<float> scale = read_vector(context.input(1), depth, "scale", "");
  const std::vector<float> offset = read_vector(context.input(2), depth, "offset", "");
  const float eps = attrs.epsilon;
  const float* in = x.data<float>();
  Tensor y = Tensor::uninitialized(graphdef::DT_FLOAT, x.shape());
  float* out = y.data<float>();

  if (!attrs.is_training) {
    const std::vector<float> mean = read_vector(context.input(3), depth, "mean", "");
    const std::vector<float> variance = read_vector(context.input(4), depth, "variance", "");
    std::vector<float> factor(depth);
    for (int64_t c = 0; c < depth; ++c) factor[c] = scale[c] / std::sqrt(variance[c] + eps);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < depth; ++c) out[r * depth + c] = (in[r * depth + c] - mean[c]) * factor[c] + offset[c];
    }
    context.set_output(0, std::move(y));
    context.set_output(1, context.input_ptr(3));
    context.set_output(2, context.input_ptr(4));
    context.set_output(3, context.input_ptr(3));
    context.set_output(4, context.input_ptr(4));
    set_reserve_space_3(context);
    return;
  }

  const float inv_count = rows ? 1.0f / static_cast<float>(rows) : std::numeric_limits<float>::quiet_NaN();
  std::vector<float> batch_mean(depth, 0.0f), batch_var(depth, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < depth; ++c) batch_mean[c] += in[r * depth + c];
  }
  for (float& m : batch_mean) m *= inv_count;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < depth; ++c) {
      const float centred = in[r * depth + c] - batch_mean[c];
      batch_var[c] += centred * centred;
    }
  }
  for (float& v : batch_var) v *= inv_count;
  std::vector<float> factor(depth);
  for (int64_t c = 0; c < depth; ++c) factor[c] = scale[c] / std::sqrt(batch_var[c] + eps);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < depth; ++c) {
      out[r * depth + c] = (in[r * depth + c] - batch_mean[c]) * factor[c] + offset[c];
    }
  }
  // The variance reported for moving averages is unbiased.
  const float adjust = static_cast<float>(rows) / static_cast<float>(std::max<int64_t>(rows - 1, 1));
  const float f = attrs.exponential_avg_factor;
  std::vector<float> running_mean(depth), running_var(depth);
  if (f == 1.0f) {
    for (int64_t c = 0; c < depth; ++c) {
      running_mean[c] = batch_mean[c];
      running_var[c] = batch_var[c] * adjust;
    }
  } else {
    const std::string why = " (exponential_avg_factor != 1 updates it)";
    const std::vector<float> mean = read_vector(context.input(3), depth, "mean", why);
    const std::vector<float> variance = read_vector(context.input(4), depth, "variance", why);
    for (int64_t c = 0; c < depth; ++c) {
      running_mean[c] = (1.0f - f) * mean[c] + f * batch_mean[c];
      running_var[c] = (1.0f - f) * variance[c] + (f * adjust) * batch_var[c];
    }
  }
  context.set_output(0, std::move(y));
  context.set_output(1, vector_of(running_mean));
  context.set_output(2, vector_of(running_var));
  context.set_output(3, vector_of(batch_mean));
  context.set_output(4, vector_of(batch_var));
  set_reserve_space_3(context);
}

// Every version's attrs, decoded once at load.
BatchNormAttrs prepare_batch_norm(const Kernel& kernel, const graphdef::NodeDef& node) {
  return BatchNormAttrs{kernel.get_float(node, "epsilon"), kernel.get_float(node, "exponential_avg_factor"),
                        kernel.get_bool(node, "is_training")};
}

// The three versions differ only in their parameters' dtype attr (V1: T, V2/V3: U) and
// V3's sixth output; one kernel code serves them all.
Kernel batch_norm_kernel(const char* op, const std::string& params, bool reserve_space_3) {
  Kernel kernel(op);
  kernel.input("x", "T");
  for (const char* name : {"scale", "offset", "mean", "variance"}) kernel.input(name, params);
  kernel.output("T");
  std::vector<std::string> names = {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"};
  if (reserve_space_3) names.push_back("reserve_space_3");
  for (std::size_t i = 1; i < names.size(); ++i) kernel.output(params);
  kernel.output_names(names).type_attr("T", {graphdef::DT_FLOAT});
  if (params != "T") kernel.type_attr(params, {graphdef::DT_FLOAT});
  return kernel.float_attr("epsilon", 0.0001f)
      .float_attr("exponential_avg_factor", 1.0f)
      .choice_attr("data_format", {"NHWC"}, "NHWC")
      .bool_attr("is_training", true)
      .prepare(prepare_batch_norm)
      .compute(compute_fused_batch_norm);
}

REGISTER_KERNEL(batch_norm_kernel("FusedBatchNormV3", "U", true));
REGISTER_KERNEL(batch_norm_kernel("FusedBatchNormV2", "U", false));
REGISTER_KERNEL(batch_norm_kernel("FusedBatchNorm", "T", false));

}  // namespace
}  // namespace graphrun
