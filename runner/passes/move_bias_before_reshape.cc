// A bias added after a Reshape of a matrix product moves before it:
//
//   BiasAdd(Reshape(MatMul(a, W), shape), b)  ->  Reshape(BiasAdd(MatMul(a, W), b), shape)
//
// A frozen Keras Dense on a 3-D input is that chain (Tensordot's MatMul,
// then a Reshape to the input's leading dims and N, then the BiasAdd), and
// Keras' attention projections are BatchMatMulV2(x, W) -> Reshape to [...,
// heads, depth] -> AddV2 of a bias [heads, depth]. With the bias between
// them no pass could fuse it into the product, so it ran as a pass of its own
// over the whole activation; moved, fuse_conv_bias_activation (rank 100)
// takes product and BiasAdd as one node whose kernel adds the bias while the
// block is in cache.
//
// The move is the same arithmetic: the product's element (i, j) gets b[j]
// either way, one float32 add each. That holds when the Reshape keeps the
// bias's dims at the end: the product's last dim is N (W a 2-D Const whose
// output dim is N), the bias a float32 Const whose dims multiply to N, and
// the Reshape's shape ends in the bias's dims (a Const, or a ConcatV2 along
// axis 0 whose last input is a Const ending so; Keras computes the leading
// dims at run time). Row r's N elements then land in the last dims in order,
// element j at bias index j, so an AddV2 of bias [heads, depth] after the
// Reshape is a BiasAdd of the bias flattened to [N] before it. A bias of rank
// above 1 gets a flattened Const of its own; the original stays for its
// other readers. A BiasAdd (NHWC: the last dim) moves only where the
// Reshape's output is statically at least 2-D, as BiasAdd requires: the move
// must not make a failing graph run. The kernels still check every shape at
// run time.
//
// Moved only where nothing can tell: the product and the Reshape are
// unfed, unfetched, without control dependants, and each read only by the
// next node of the chain; the add is unfed. The Reshape takes the add's name
// (and its control inputs), so its readers and fetches are unchanged; the
// new BiasAdd is named after the add. Only float32 moves: that is what
// fuse_conv_bias_activation fuses, and elsewhere the move gains nothing.
#include <algorithm>
#include <optional>

#include "graph/shape_inference.h"
#include "graph/tensor_proto.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

struct BiasMove {
  int product = -1, reshape = -1, add = -1;
  Endpoint bias;
  std::vector<int64_t> bias_dims;
};

class BiasMoveFinder {
 public:
  BiasMoveFinder(const Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), shapes_(context.shapes(graph)), readers_(graph) {}

  // The chain whose add is node i.
  std::optional<BiasMove> ending_at(int i) const {
    const GraphNode& add = graph_.node(i);
    if (!unfed_float(add) || add.inputs.size() != 2) return std::nullopt;
    if (add.op() == "BiasAdd") {
      const auto format = add.def->attr().find("data_format");
      if (format != add.def->attr().end() && format->second.s() != "NHWC") return std::nullopt;
      std::optional<BiasMove> move = match(i, add.inputs[0], add.inputs[1]);
      if (move && move->bias_dims.size() == 1 && output_rank_at_least_2(*move)) return move;
      return std::nullopt;
    }
    if (add.op() != "Add" && add.op() != "AddV2") return std::nullopt;
    for (int k : {0, 1}) {  // x + b is b + x, bit for bit
      std::optional<BiasMove> move = match(i, add.inputs[k], add.inputs[1 - k]);
      if (move) return move;
    }
    return std::nullopt;
  }

 private:
  bool unfed_float(const GraphNode& node) const {
    return node.runnable() && !context_.fed.count(node.name()) && node.output_dtypes.size() == 1 &&
           node.output_dtypes[0] == graphdef::DT_FLOAT;
  }

  // `consumer` is the one reader of `producer`, which nothing else sees.
  bool only_reader(int producer, int consumer) const {
    if (context_.pinned(graph_.node(producer).name())) return false;
    const std::vector<int> uses = readers_.private_uses(producer, context_);
    return uses.size() == 1 && uses[0] == consumer;
  }

  // The dims of an unfed Const's value at `e`, read from its proto (no
  // weight is decoded here); nothing for another node or dtype.
  std::optional<std::vector<int64_t>> const_dims(const Endpoint& e, DataType dtype) const {
    const GraphNode& node = graph_.node(e.node);
    if (e.output != 0 || !node.is_valid_const() || context_.fed.count(node.name())) return std::nullopt;
    const auto value = node.def->attr().find("value");
    if (value == node.def->attr().end()) return std::nullopt;
    const graphdef::TensorProto& proto = value->second.tensor();
    if (proto.dtype() != dtype || proto.tensor_shape().unknown_rank()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& d : proto.tensor_shape().dim()) dims.push_back(d.size());
    return dims;
  }

  // The elements of an unfed int32/int64 Const at `e` of rank `rank` (0 or 1).
  std::optional<std::vector<int64_t>> int_values(const Endpoint& e, int64_t rank) const {
    const GraphNode& node = graph_.node(e.node);
    if (e.output != 0 || !node.is_valid_const() || context_.fed.count(node.name())) return std::nullopt;
    try {
      const Tensor t = tensor_from_proto(node.def->attr().at("value").tensor());
      if (t.rank() != rank) return std::nullopt;
      std::vector<int64_t> values;
      for (int64_t k = 0; k < t.num_elements(); ++k) {
        if (t.dtype() == graphdef::DT_INT32) values.push_back(t.data<int32_t>()[k]);
        else if (t.dtype() == graphdef::DT_INT64) values.push_back(t.data<int64_t>()[k]);
        else return std::nullopt;
      }
      return values;
    } catch (const Error&) {
      return std::nullopt;
    }
  }

  // The product's output dim N from its Const 2-D W, or -1.
  int64_t product_columns(const GraphNode& product) const {
    const char* transposed = product.op() == "MatMul" ? "transpose_b" : "adj_y";
    if ((product.op() != "MatMul" && product.op() != "BatchMatMulV2") || product.inputs.size() != 2) return -1;
    const std::optional<std::vector<int64_t>> w = const_dims(product.inputs[1], graphdef::DT_FLOAT);
    if (!w || w->size() != 2) return -1;
    const auto attr = product.def->attr().find(transposed);
    return (*w)[attr != product.def->attr().end() && attr->second.b() ? 0 : 1];
  }

  // The Const whose elements end the Reshape's shape: the shape itself, or
  // the last input of a ConcatV2 along axis 0 (-1 is the same axis of a
  // 1-D shape) that computes it.
  std::optional<std::vector<int64_t>> shape_tail(const Endpoint& shape) const {
    const GraphNode& node = graph_.node(shape.node);
    if (node.op() == "Const") return int_values(shape, 1);
    if (node.op() != "ConcatV2" || shape.output != 0 || context_.fed.count(node.name()) || node.inputs.size() < 3) {
      return std::nullopt;
    }
    const std::optional<std::vector<int64_t>> axis = int_values(node.inputs.back(), 0);
    if (!axis || ((*axis)[0] != 0 && (*axis)[0] != -1)) return std::nullopt;
    return int_values(node.inputs[node.inputs.size() - 2], 1);
  }

  std::optional<BiasMove> match(int add, const Endpoint& reshaped, const Endpoint& bias) const {
    const GraphNode& reshape = graph_.node(reshaped.node);
    if (reshape.op() != "Reshape" || reshaped.output != 0 || !unfed_float(reshape) || reshape.inputs.size() != 2 ||
        !only_reader(reshaped.node, add)) {
      return std::nullopt;
    }
    const Endpoint& produced = reshape.inputs[0];
    const GraphNode& product = graph_.node(produced.node);
    if (produced.output != 0 || !unfed_float(product) || !only_reader(produced.node, reshaped.node)) {
      return std::nullopt;
    }
    const int64_t n = product_columns(product);
    const std::optional<std::vector<int64_t>> b = const_dims(bias, graphdef::DT_FLOAT);
    if (n <= 0 || !b || b->empty()) return std::nullopt;
    int64_t elements = 1;
    for (int64_t d : *b) {
      if (d <= 0) return std::nullopt;
      elements *= d;
    }
    const std::optional<std::vector<int64_t>> tail = shape_tail(reshape.inputs[1]);
    if (elements != n || !tail || tail->size() < b->size() ||
        !std::equal(b->begin(), b->end(), tail->end() - static_cast<std::ptrdiff_t>(b->size()))) {
      return std::nullopt;
    }
    BiasMove move;
    move.product = produced.node;
    move.reshape = reshaped.node;
    move.add = add;
    move.bias = bias;
    move.bias_dims = *b;
    return move;
  }

  // Whether the Reshape's shape vector statically has 2 or more elements:
  // a ConcatV2 has no shape rule, so its inputs' known lengths are summed.
  bool output_rank_at_least_2(const BiasMove& move) const {
    const Endpoint& shape = graph_.node(move.reshape).inputs[1];
    const GraphNode& node = graph_.node(shape.node);
    int64_t length = 0;
    if (node.op() == "ConcatV2") {
      for (std::size_t k = 0; k + 1 < node.inputs.size(); ++k) length += known_length(node.inputs[k]);
    } else {
      length = known_length(shape);
    }
    return length >= 2;
  }

  // A 1-D value's static length, 0 when unknown. Shape inference does not
  // read the zero axis TF writes as an empty TensorProto, so a GatherV2 from
  // a vector (Tensordot's leading dims, gathered from Shape) is measured here:
  // as long as its indices.
  int64_t known_length(const Endpoint& e) const {
    const GraphNode& node = graph_.node(e.node);
    if (node.op() == "GatherV2" && node.inputs.size() == 3 && rank_1_length(node.inputs[0]) != 0) {
      const auto batch_dims = node.def->attr().find("batch_dims");
      const std::optional<std::vector<int64_t>> axis = int_values(node.inputs[2], 0);
      if ((batch_dims == node.def->attr().end() || batch_dims->second.i() == 0) && axis &&
          ((*axis)[0] == 0 || (*axis)[0] == -1)) {
        return std::max<int64_t>(rank_1_length(node.inputs[1]), 0);
      }
    }
    return std::max<int64_t>(rank_1_length(e), 0);
  }

  // The static length of a value known to be 1-D, -1 when its length is
  // unknown, 0 when it is not known to be 1-D.
  int64_t rank_1_length(const Endpoint& e) const {
    if (shapes_[e.node].size() <= static_cast<std::size_t>(e.output)) return 0;
    const StaticShape& s = shapes_[e.node][e.output];
    if (!s.known_rank || s.dims.size() != 1) return 0;
    return s.dims[0] >= 0 ? s.dims[0] : -1;
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  GraphReaders readers_;
};

// The bias as the new BiasAdd reads it: the Const itself when 1-D, else a
// flattened copy (the same elements in the same order).
std::string flat_bias(const Graph& graph, const BiasMove& move, GraphEdit& edit) {
  const GraphNode& bias = graph.node(move.bias.node);
  if (move.bias_dims.size() == 1) return bias.name();
  const Tensor value = tensor_from_proto(bias.def->attr().at("value").tensor());
  graphdef::NodeDef flat = const_node("", value.reshaped({value.num_elements()}));
  flat.set_device(bias.def->device());
  return edit.add(std::move(flat), bias.name() + "/flat");
}

void move_bias(const Graph& graph, const BiasMove& move, GraphEdit& edit) {
  const graphdef::NodeDef& add = *graph.node(move.add).def;
  const graphdef::NodeDef& reshape = *graph.node(move.reshape).def;
  graphdef::NodeDef bias_add;
  bias_add.set_op("BiasAdd");
  bias_add.set_device(add.device());
  bias_add.add_input(graph.node(move.product).name());
  bias_add.add_input(flat_bias(graph, move, edit));
  add_control_inputs(add, bias_add);
  auto& attrs = *bias_add.mutable_attr();
  attrs["T"].set_type(graphdef::DT_FLOAT);
  attrs["data_format"].set_s("NHWC");
  const std::string moved = edit.add(std::move(bias_add), add.name() + "/bias");
  // The Reshape, now of the biased product, in the add's place and name.
  graphdef::NodeDef out = reshape;
  out.set_name(add.name());
  out.set_input(0, moved);
  add_control_inputs(add, out);
  edit.mutable_node(move.add) = std::move(out);
  edit.remove(move.reshape);
}

std::unique_ptr<graphdef::GraphDef> move_bias_before_reshape(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const BiasMoveFinder finder(graph, context);
  GraphEdit edit(graph);
  int64_t moved = 0;
  // Each Reshape and product is read by its own chain alone, so chains never share a node.
  for (int i = 0; i < graph.size(); ++i) {
    const std::optional<BiasMove> move = finder.ending_at(i);
    if (!move) continue;
    move_bias(graph, *move, edit);
    ++moved;
  }
  if (!moved) return nullptr;
  context.report("biases moved before reshapes", moved);
  return edit.finish();
}

// After the graph is folded and deduplicated (W's Reshape to 2-D is a Const
// by then), before fuse_conv_bias_activation fuses what it moved.
REGISTER_GRAPH_PASS("move_bias_before_reshape", 90, move_bias_before_reshape);

}  // namespace
}  // namespace graphrun
