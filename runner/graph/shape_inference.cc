#include "graph/shape_inference.h"

#include <algorithm>
#include <set>
#include <string>

namespace graphrun {

namespace {

StaticShape unknown() { return {}; }

StaticShape known(std::vector<int64_t> dims) { return {true, std::move(dims)}; }

StaticShape from_proto(const graphdef::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return unknown();
  std::vector<int64_t> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size() < 0 ? -1 : dim.size());
  return known(dims);
}

// graphdef.shapes.broadcast: numpy's rule, with an unknown dim taking the
// other side's size unless that is 1.
StaticShape broadcast(const StaticShape& a, const StaticShape& b) {
  if (!a.known_rank || !b.known_rank) return unknown();
  const std::size_t n = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> x(n - a.dims.size(), 1), y(n - b.dims.size(), 1), out;
  x.insert(x.end(), a.dims.begin(), a.dims.end());
  y.insert(y.end(), b.dims.begin(), b.dims.end());
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t p = x[i], q = y[i];
    if (p == 1) out.push_back(q);
    else if (q == 1 || p == q) out.push_back(p);
    else if (p < 0 || q < 0) out.push_back(p < 0 ? q : p);
    else return unknown();  // can never broadcast: validation reports it when run
  }
  return known(out);
}

const std::set<std::string> kSameShape = {
    "Identity", "Neg", "Abs", "Relu", "Relu6", "Sigmoid", "Tanh", "Exp", "Log", "Log1p", "Sqrt", "Rsqrt", "Square",
    "Sign", "Softplus", "Elu", "LeakyRelu", "Softmax", "LogSoftmax", "Cast", "StopGradient", "ZerosLike", "OnesLike",
    "LogicalNot", "Floor", "Ceil", "Round", "Reciprocal", "Erf", "Erfc", "Softsign", "Selu", "Sin", "Cos", "BiasAdd",
    "ReluGrad", "Relu6Grad", "SigmoidGrad", "TanhGrad", "Snapshot", "Assign", "AssignAdd", "AssignSub",
    "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "IsNan", "IsFinite", "IsInf"};

const std::set<std::string> kBroadcast = {
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
    "SquaredDifference", "Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd",
    "LogicalOr", "DivNoNan", "TruncateDiv", "Atan2"};

// TensorFlow's most dims; a longer 1-D shape operand (from the file) leaves
// the rank unknown rather than building a list that long.
constexpr int64_t kMaxRank = 254;

const std::set<std::string> kReductions = {"Sum", "Mean", "Max", "Min", "Prod", "All", "Any"};

// The integer elements of a Const node's value, or false.
bool const_ints(const Graph& graph, const Endpoint& input, std::vector<int64_t>& values) {
  const GraphNode& node = graph.node(input.node);
  if (node.op() != "Const") return false;
  const auto& tensor = node.def->attr().at("value").tensor();
  values.clear();
  // Load-time checks have bounded the Const's size; shape operands are small,
  // so anything longer is simply not used for inference.
  int64_t count = 1;
  for (const auto& dim : tensor.tensor_shape().dim()) {
    if (dim.size() < 0 || __builtin_mul_overflow(count, dim.size(), &count) || count > (int64_t{1} << 16)) return false;
  }
  if (tensor.dtype() == graphdef::DT_INT32) {
    if (tensor.int_val_size() > 0) {
      for (int64_t i = 0; i < count; ++i) values.push_back(tensor.int_val(std::min<int64_t>(i, tensor.int_val_size() - 1)));
    } else {
      const std::string& bytes = tensor.tensor_content();
      if (static_cast<int64_t>(bytes.size()) != count * 4) return false;
      for (int64_t i = 0; i < count; ++i) {
        int32_t v;
        std::copy_n(bytes.data() + 4 * i, 4, reinterpret_cast<char*>(&v));
        values.push_back(v);
      }
    }
  } else if (tensor.dtype() == graphdef::DT_INT64) {
    if (tensor.int64_val_size() > 0) {
      for (int64_t i = 0; i < count; ++i) values.push_back(tensor.int64_val(std::min<int64_t>(i, tensor.int64_val_size() - 1)));
    } else {
      const std::string& bytes = tensor.tensor_content();
      if (static_cast<int64_t>(bytes.size()) != count * 8) return false;
      for (int64_t i = 0; i < count; ++i) {
        int64_t v;
        std::copy_n(bytes.data() + 8 * i, 8, reinterpret_cast<char*>(&v));
        values.push_back(v);
      }
    }
  } else {
    return false;
  }
  return static_cast<int64_t>(values.size()) == count;
}

bool attr_bool(const GraphNode& node, const std::string& name) {
  const auto& attrs = node.def->attr();
  const auto found = attrs.find(name);
  return found != attrs.end() && found->second.b();
}

StaticShape reduce(const Graph& graph, const GraphNode& node, const StaticShape& in) {
  std::vector<int64_t> axes;
  const bool keep = attr_bool(node, "keep_dims");
  if (!in.known_rank || !const_ints(graph, node.inputs[1], axes)) return unknown();
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<char> reduced(rank, 0);
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) return unknown();
    reduced[axis < 0 ? axis + rank : axis] = 1;
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out.push_back(in.dims[d]);
    else if (keep) out.push_back(1);
  }
  return known(out);
}

StaticShape reshape(const Graph& graph, const GraphNode& node, const StaticShape& in) {
  std::vector<int64_t> target;
  if (!const_ints(graph, node.inputs[1], target)) return unknown();
  // Products are overflow-checked: the target comes from the file, and a
  // shape that cannot be computed is unknown here (the run refuses it).
  int64_t known_product = 1, wildcard = -1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) wildcard = static_cast<int64_t>(i);
    else if (target[i] < 0 || __builtin_mul_overflow(known_product, target[i], &known_product)) return unknown();
  }
  if (wildcard >= 0) {
    bool complete = in.known_rank;
    int64_t total = 1;
    for (int64_t d : in.dims) {
      complete = complete && d >= 0 && !__builtin_mul_overflow(total, d < 0 ? 1 : d, &total);
    }
    target[wildcard] = complete && known_product > 0 ? total / known_product : -1;
  }
  return known(target);
}

std::vector<StaticShape> infer_node(const Graph& graph, const GraphNode& node,
                                    const std::vector<std::vector<StaticShape>>& shapes) {
  const std::string& op = node.op();
  const std::size_t outputs = node.output_dtypes.size();
  auto input = [&](int k) {
    const Endpoint& e = node.inputs[k];
    return shapes[e.node].size() > static_cast<std::size_t>(e.output) ? shapes[e.node][e.output] : unknown();
  };
  std::vector<StaticShape> out(outputs);
  if (outputs == 0) return out;
  const auto& attrs = node.def->attr();
  if (op == "Placeholder" || op == "PlaceholderWithDefault" || op == "VariableV2") {
    if (attrs.count("shape")) out[0] = from_proto(attrs.at("shape").shape());
  } else if (op == "Const") {
    out[0] = from_proto(attrs.at("value").tensor().tensor_shape());
  } else if (kSameShape.count(op) && !node.inputs.empty()) {
    out[0] = input(0);
  } else if (kBroadcast.count(op) && node.inputs.size() == 2) {
    out[0] = broadcast(input(0), input(1));
  } else if ((op == "Select" || op == "SelectV2") && node.inputs.size() == 3) {
    out[0] = broadcast(broadcast(input(0), input(1)), input(2));
  } else if (op == "MatMul") {
    const StaticShape a = input(0), b = input(1);
    if (a.known_rank && b.known_rank && a.dims.size() == 2 && b.dims.size() == 2) {
      out[0] = known({a.dims[attr_bool(node, "transpose_a") ? 1 : 0], b.dims[attr_bool(node, "transpose_b") ? 0 : 1]});
    }
  } else if (kReductions.count(op)) {
    out[0] = reduce(graph, node, input(0));
  } else if (op == "Reshape") {
    out[0] = reshape(graph, node, input(0));
  } else if (op == "L2Loss" || op == "Size" || op == "Rank") {
    out[0] = known({});
  } else if (op == "Shape") {
    const StaticShape in = input(0);
    out[0] = in.known_rank ? known({static_cast<int64_t>(in.dims.size())}) : known({-1});
  } else if (op == "ShapeN") {
    for (std::size_t k = 0; k < outputs && k < node.inputs.size(); ++k) {
      const StaticShape in = input(static_cast<int>(k));
      out[k] = in.known_rank ? known({static_cast<int64_t>(in.dims.size())}) : known({-1});
    }
  } else if (op == "BiasAddGrad") {
    // The last dim, whatever it is; graphrun says so even for an unknown rank.
    const StaticShape in = input(0);
    out[0] = known({in.known_rank && !in.dims.empty() ? in.dims.back() : -1});
  } else if (op == "RandomUniform") {
    // The dims of a Const shape, or as many unknown dims as a 1-D shape has.
    std::vector<int64_t> dims;
    const StaticShape shape = input(0);
    if (const_ints(graph, node.inputs[0], dims)) out[0] = known(dims);
    else if (shape.known_rank && shape.dims.size() == 1 && shape.dims[0] >= 0 && shape.dims[0] <= kMaxRank) {
      out[0] = known(std::vector<int64_t>(shape.dims[0], -1));
    }
  } else if (op == "AddN") {
    out[0] = input(0);
    for (std::size_t k = 1; k < node.inputs.size(); ++k) out[0] = broadcast(out[0], input(static_cast<int>(k)));
  }
  return out;
}

}  // namespace

std::vector<std::vector<StaticShape>> infer_shapes(const Graph& graph) {
  // Kahn's order over data inputs (validation has ruled out cycles other
  // than while loops' back edges, which are skipped).
  const int n = graph.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (const Endpoint& input : graph.node(i).inputs) {
      if (is_loop_back_edge(graph.node(input.node), graph.node(i))) continue;
      ++pending[i];
      consumers[input.node].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<std::vector<StaticShape>> shapes(n);
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    shapes[i] = infer_node(graph, graph.node(i), shapes);
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  return shapes;
}

}  // namespace graphrun
