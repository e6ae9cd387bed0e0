#include "graph/shape_rules.h"

#include <algorithm>

namespace graphrun {

StaticShape unknown_shape() { return {}; }

StaticShape known_shape(std::vector<int64_t> dims) { return {true, std::move(dims)}; }

StaticShape static_shape_of(const graphdef::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return unknown_shape();
  std::vector<int64_t> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size() < 0 ? -1 : dim.size());
  return known_shape(dims);
}

StaticShape broadcast_shapes(const StaticShape& a, const StaticShape& b) {
  if (!a.known_rank || !b.known_rank) return unknown_shape();
  const std::size_t n = std::max(a.dims.size(), b.dims.size());
  std::vector<int64_t> x(n - a.dims.size(), 1), y(n - b.dims.size(), 1), out;
  x.insert(x.end(), a.dims.begin(), a.dims.end());
  y.insert(y.end(), b.dims.begin(), b.dims.end());
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t p = x[i], q = y[i];
    if (p == 1) out.push_back(q);
    else if (q == 1 || p == q) out.push_back(p);
    else if (p < 0 || q < 0) out.push_back(p < 0 ? q : p);
    else return unknown_shape();  // can never broadcast: validation reports it when run
  }
  return known_shape(out);
}

StaticShape ShapeContext::input(int k) const {
  const Endpoint& e = node_.inputs.at(k);
  return shapes_[e.node].size() > static_cast<std::size_t>(e.output) ? shapes_[e.node][e.output] : unknown_shape();
}

bool ShapeContext::const_ints(int k, std::vector<int64_t>& values) const {
  const GraphNode& node = graph_.node(node_.inputs.at(k).node);
  if (!node.is_valid_const()) return false;
  const auto& tensor = node.def->attr().at("value").tensor();
  values.clear();
  // Load-time checks have bounded the Const's size; shape operands are small,
  // so anything longer is simply not used for inference.
  int64_t count = 1;
  for (const auto& dim : tensor.tensor_shape().dim()) {
    if (dim.size() < 0 || __builtin_mul_overflow(count, dim.size(), &count) || count > (int64_t{1} << 16)) return false;
  }
  // TensorFlow's rules, as tensor_from_proto reads a Const: a non-empty
  // tensor_content wins and must be exact; else the typed values, the last
  // repeating; none at all are zeros (TF writes a zero scalar, such as
  // GatherV2's axis, that way)
  auto read = [&](auto width, const auto& typed) {
    using T = decltype(width);
    const std::string& bytes = tensor.tensor_content();
    if (!bytes.empty()) {
      if (static_cast<int64_t>(bytes.size()) != count * static_cast<int64_t>(sizeof(T))) return false;
      for (int64_t i = 0; i < count; ++i) {
        T v;
        std::copy_n(bytes.data() + sizeof(T) * i, sizeof(T), reinterpret_cast<char*>(&v));
        values.push_back(v);
      }
    } else {
      for (int64_t i = 0; i < count; ++i)
        values.push_back(typed.empty() ? 0 : typed[std::min<int64_t>(i, typed.size() - 1)]);
    }
    return true;
  };
  if (tensor.dtype() == graphdef::DT_INT32) {
    if (!read(int32_t{}, tensor.int_val())) return false;
  } else if (tensor.dtype() == graphdef::DT_INT64) {
    if (!read(int64_t{}, tensor.int64_val())) return false;
  } else {
    return false;
  }
  return static_cast<int64_t>(values.size()) == count;
}

ShapeFn same_as_input(int k) {
  return [k](ShapeContext& context) {
    if (k < context.num_inputs()) context.set_output(0, context.input(k));
  };
}

ShapeFn broadcast_inputs() {
  return [](ShapeContext& context) {
    if (context.num_inputs() == 0) return;
    StaticShape out = context.input(0);
    for (int k = 1; k < context.num_inputs(); ++k) out = broadcast_shapes(out, context.input(k));
    context.set_output(0, out);
  };
}

ShapeFn scalar_output() {
  return [](ShapeContext& context) { context.set_output(0, known_shape({})); };
}

ShapeFn shape_from_attr(std::string name) {
  return [name](ShapeContext& context) {
    const auto& attrs = context.node().def->attr();
    const auto found = attrs.find(name);
    if (found != attrs.end()) context.set_output(0, static_shape_of(found->second.shape()));
  };
}

ShapeFn padded_shape(bool mirror) {
  return [mirror](ShapeContext& context) {
    const StaticShape x = context.input(0), p = context.input(1);
    if (p.known_rank && (p.dims.size() != 2 || (p.dims[1] >= 0 && p.dims[1] != 2) ||
                         (x.known_rank && p.dims[0] >= 0 && p.dims[0] != static_cast<int64_t>(x.dims.size())))) {
      return;  // the run refuses it
    }
    std::vector<int64_t> pads;
    if (!context.const_ints(1, pads) || !x.known_rank) {
      const int64_t n = x.known_rank ? static_cast<int64_t>(x.dims.size()) : p.known_rank ? p.dims[0] : -1;
      if (n >= 0 && n <= kMaxStaticRank) context.set_output(0, known_shape(std::vector<int64_t>(n, -1)));
      return;
    }
    if (pads.size() != 2 * x.dims.size()) return;
    int64_t extra = 0;
    if (mirror) {
      const std::string& mode = context.attr("mode").s();
      if (mode != "REFLECT" && mode != "SYMMETRIC") return;
      extra = mode == "SYMMETRIC";
    }
    std::vector<int64_t> out;
    for (std::size_t i = 0; i < x.dims.size(); ++i) {
      const int64_t lo = pads[2 * i], hi = pads[2 * i + 1], d = x.dims[i];
      if (lo < 0 || hi < 0) return;
      if (mirror && d >= 0 && std::max(lo, hi) > d - 1 + extra) return;
      int64_t grown = -1;
      if (d >= 0 && (__builtin_add_overflow(d, lo, &grown) || __builtin_add_overflow(grown, hi, &grown))) return;
      out.push_back(grown);
    }
    context.set_output(0, known_shape(out));
  };
}

}  // namespace graphrun
