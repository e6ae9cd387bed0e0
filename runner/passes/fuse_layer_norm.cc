// Layer normalization over the last axis, as a frozen Keras or TF graph
// spells it, becomes one _FusedLayerNorm node (kernels/fused_layer_norm.cc).
// Unfused it is ten or eleven ops, most of them a pass over the whole
// activation (rsqrt times gamma alone broadcasts to its shape, then is read
// twice); fused it is one visit per row while the row is in cache.
//
// Two spellings, both ending out = x * inv + shift with inv = Rsqrt(var +
// eps) * gamma, mean = Mean(x, -1, keep_dims) and var = Mean(
// SquaredDifference(x, mean), -1, keep_dims):
//
//   Keras 3:                    shift = (Neg(mean) * inv) + beta
//   tf.nn.batch_normalization:  shift = beta - mean * inv
//
// (tf_keras writes the second where it does not take FusedBatchNormV3,
// which is left alone: with an epsilon below 1.001e-5, for one.)
//
// The two shifts are the same IEEE result ((-m) * i + b is b - m * i, bit
// for bit), so one kernel computes both. Operand order of the commutative
// ops does not matter (nor does it change a bit); the Neg form must pair
// with the Add and the plain mean with the Sub.
//
// Fused only where nothing can tell: gamma and beta are float32 Consts of
// shape [1, ..., 1, C] (Keras 3 reshapes them so), eps a one-element float32
// Const, both Means reduce the last axis alone (a Const -1, or rank - 1
// where x's rank is known) with keep_dims, and every intermediate is unfed,
// unfetched, without control dependants and read only inside the pattern.
// x's shape is seldom known statically (a Tensordot's Reshape hides it), so
// the kernel broadcasts as the unfused ops did: the output is x, gamma and
// beta broadcast together. The fused node takes the name of the final Add;
// the Consts stay for whoever else reads them.
//
// The answer differs from the unfused nodes' only in the Means, whose sums
// the kernel takes in numpy's pairwise order (the Mean kernel adds left to
// right): within Mean's tensor_ulps tolerance, and the Python runtime's bits.
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <set>

#include "graph/shape_inference.h"
#include "graph/tensor_proto.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"

namespace graphrun {
namespace {

bool same(const Endpoint& a, const Endpoint& b) { return a.node == b.node && a.output == b.output; }

struct LayerNorm {
  Endpoint x;
  int gamma = -1, beta = -1;
  float epsilon = 0;
  std::vector<int> inner;  // every node of the pattern but the last
  int out = -1;            // the final Add, whose name the fused node takes
};

class LayerNormFinder {
 public:
  LayerNormFinder(const Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), shapes_(context.shapes(graph)), readers_(graph) {}

  // The layer norm whose final Add is node i.
  std::optional<LayerNorm> ending_at(int i) const {
    if (!float_node({i, 0}, {"Add", "AddV2"})) return std::nullopt;
    const GraphNode& out = graph_.node(i);
    for (int k : {1, 0}) {  // Keras writes x * inv first
      std::optional<LayerNorm> found = match(out.inputs[1 - k], out.inputs[k]);
      if (found) {
        found->out = i;
        if (private_pattern(*found)) return found;
      }
    }
    return std::nullopt;
  }

 private:
  // The node behind `e` when it is output 0 of a runnable, unfed float32
  // node of one of `ops` (the dtype attr is T: validation matched the inputs).
  const GraphNode* float_node(const Endpoint& e, std::initializer_list<const char*> ops) const {
    const GraphNode& node = graph_.node(e.node);
    if (e.output != 0 || !node.runnable() || context_.fed.count(node.name()) || node.output_dtypes.size() != 1 ||
        node.output_dtypes[0] != graphdef::DT_FLOAT) {
      return nullptr;
    }
    for (const char* op : ops) {
      if (node.op() == op) return &node;
    }
    return nullptr;
  }

  // The value of an unfed Const read at `e`, or nothing.
  std::optional<Tensor> const_value(const Endpoint& e) const {
    const GraphNode& node = graph_.node(e.node);
    if (e.output != 0 || !node.is_valid_const() || context_.fed.count(node.name())) return std::nullopt;
    const auto value = node.def->attr().find("value");
    if (value == node.def->attr().end()) return std::nullopt;
    try {
      return tensor_from_proto(value->second.tensor());
    } catch (const Error&) {
      return std::nullopt;
    }
  }

  // The input of binary `node` that is not `e` when the other is; for
  // Mul(a, a) that is `a` again.
  static std::optional<Endpoint> other_than(const GraphNode& node, const Endpoint& e) {
    if (node.inputs.size() != 2) return std::nullopt;
    if (same(node.inputs[0], e)) return node.inputs[1];
    if (same(node.inputs[1], e)) return node.inputs[0];
    return std::nullopt;
  }

  // x's static shape; unknown (rank -1) where inference never reached it.
  StaticShape shape_of(const Endpoint& e) const {
    if (shapes_[e.node].size() <= static_cast<std::size_t>(e.output)) return unknown_shape();
    return shapes_[e.node][e.output];
  }

  // A float32 Const of shape [1, ..., 1, C] (or a scalar) whose C
  // broadcasts with x's last dim as far as it is known. Its shape is read
  // first: a weight in that place is not decoded.
  bool channel_vector(const Endpoint& e, const StaticShape& x) const {
    const GraphNode& node = graph_.node(e.node);
    if (e.output != 0 || !node.is_valid_const() || context_.fed.count(node.name())) return false;
    const auto value = node.def->attr().find("value");
    if (value == node.def->attr().end() || value->second.tensor().tensor_shape().unknown_rank()) return false;
    const auto& dims = value->second.tensor().tensor_shape().dim();
    if (!dims.empty() && !std::all_of(dims.begin(), dims.end() - 1, [](const auto& d) { return d.size() == 1; })) {
      return false;
    }
    const int64_t channels = dims.empty() ? 1 : dims.rbegin()->size();
    const int64_t last = x.known_rank && !x.dims.empty() ? x.dims.back() : -1;
    // a pair that cannot broadcast is left to fail where the file's graph fails
    if (last >= 0 && channels != last && channels != 1 && last != 1) return false;
    const std::optional<Tensor> tensor = const_value(e);
    return tensor && tensor->dtype() == graphdef::DT_FLOAT;
  }

  // A Mean of `input` over its last axis alone, with keep_dims.
  // `rank` is x's static rank, -1 when unknown.
  bool last_axis_mean(const GraphNode& mean, const Endpoint& input, int64_t rank) const {
    if (mean.inputs.size() != 2 || !same(mean.inputs[0], input)) return false;
    const auto keep = mean.def->attr().find("keep_dims");
    if (keep == mean.def->attr().end() || !keep->second.b()) return false;
    const std::optional<Tensor> axes = const_value(mean.inputs[1]);
    if (!axes || axes->num_elements() != 1 || axes->rank() > 1) return false;
    int64_t axis = 0;
    if (axes->dtype() == graphdef::DT_INT32) axis = axes->data<int32_t>()[0];
    else if (axes->dtype() == graphdef::DT_INT64) axis = axes->data<int64_t>()[0];
    else return false;
    return axis == -1 || (rank > 0 && axis == rank - 1);
  }

  // The pattern with final Add(xs, shift), structurally: which nodes, and
  // whether shapes and constants fit. Who else reads them is private_pattern's.
  std::optional<LayerNorm> match(const Endpoint& xs_at, const Endpoint& shift_at) const {
    const GraphNode* xs = float_node(xs_at, {"Mul"});
    const GraphNode* shift = float_node(shift_at, {"Add", "AddV2", "Sub"});
    if (!xs || !shift || shift->inputs.size() != 2) return std::nullopt;
    const bool keras = shift->op() != "Sub";
    // Sub(beta, ms); Add(ms, beta) in either order: the Mul is ms.
    Endpoint ms_at = shift->inputs[1], beta_at = shift->inputs[0];
    if (keras && float_node(shift->inputs[0], {"Mul"})) std::swap(ms_at, beta_at);
    const GraphNode* ms = float_node(ms_at, {"Mul"});
    if (!ms || ms->inputs.size() != 2) return std::nullopt;
    // inv = Mul(Rsqrt, gamma) is the operand xs and ms share.
    for (const Endpoint& inv_at : ms->inputs) {
      const GraphNode* inv = float_node(inv_at, {"Mul"});
      const std::optional<Endpoint> x = other_than(*xs, inv_at);
      const std::optional<Endpoint> m_side = other_than(*ms, inv_at);
      if (!inv || !x || !m_side || inv->inputs.size() != 2) continue;
      for (int k : {0, 1}) {
        LayerNorm p;
        const GraphNode* rsqrt = float_node(inv->inputs[k], {"Rsqrt"});
        if (rsqrt && fill(p, *x, *m_side, keras, inv->inputs[k], inv->inputs[1 - k], beta_at)) {
          p.inner.insert(p.inner.end(), {inv_at.node, xs_at.node, ms_at.node, shift_at.node});
          return p;
        }
      }
    }
    return std::nullopt;
  }

  // The rest, from x, the mean's side of ms, Rsqrt, gamma and beta.
  bool fill(LayerNorm& p, const Endpoint& x, const Endpoint& m_side, bool keras, const Endpoint& rsqrt_at,
            const Endpoint& gamma_at, const Endpoint& beta_at) const {
    const StaticShape x_shape = shape_of(x);
    const int64_t rank = x_shape.known_rank ? static_cast<int64_t>(x_shape.dims.size()) : -1;
    if (rank == 0 || !channel_vector(gamma_at, x_shape) || !channel_vector(beta_at, x_shape)) return false;
    Endpoint mean_at = m_side;
    if (keras) {
      const GraphNode* neg = float_node(m_side, {"Neg"});
      if (!neg || neg->inputs.size() != 1) return false;
      mean_at = neg->inputs[0];
      p.inner.push_back(m_side.node);
    }
    const GraphNode* mean = float_node(mean_at, {"Mean"});
    if (!mean || !last_axis_mean(*mean, x, rank)) return false;
    const GraphNode& rsqrt = graph_.node(rsqrt_at.node);
    const GraphNode* add = rsqrt.inputs.size() == 1 ? float_node(rsqrt.inputs[0], {"Add", "AddV2"}) : nullptr;
    if (!add || add->inputs.size() != 2) return false;
    for (int k : {0, 1}) {
      const GraphNode* variance = float_node(add->inputs[k], {"Mean"});
      if (!variance) continue;
      const std::optional<Tensor> eps = const_value(add->inputs[1 - k]);
      if (!eps || eps->dtype() != graphdef::DT_FLOAT || eps->num_elements() != 1 ||
          (eps->rank() > 1 && eps->rank() > rank)) {  // x has a dim: a [1] eps adds none
        continue;
      }
      const GraphNode* sqdiff = float_node(variance->inputs[0], {"SquaredDifference"});
      const std::optional<Endpoint> sq_other = sqdiff ? other_than(*sqdiff, x) : std::nullopt;
      if (!sq_other || !same(*sq_other, mean_at) || !last_axis_mean(*variance, variance->inputs[0], rank)) continue;
      p.x = x;
      p.gamma = gamma_at.node;
      p.beta = beta_at.node;
      p.epsilon = eps->data<float>()[0];
      p.inner.insert(p.inner.end(), {mean_at.node, variance->inputs[0].node, add->inputs[k].node, rsqrt.inputs[0].node,
                                     rsqrt_at.node});
      return true;
    }
    return false;
  }

  // Whether every inner node is unpinned and read only by pattern nodes.
  bool private_pattern(const LayerNorm& p) const {
    std::set<int> members(p.inner.begin(), p.inner.end());
    members.insert(p.out);
    if (members.size() != p.inner.size() + 1) return false;  // a node in two roles
    for (int n : p.inner) {
      if (context_.pinned(graph_.node(n).name())) return false;
      const std::vector<int> uses = readers_.private_uses(n, context_);
      if (uses.empty() || !std::all_of(uses.begin(), uses.end(), [&](int r) { return members.count(r) > 0; })) {
        return false;
      }
    }
    return true;
  }

  const Graph& graph_;
  const PassContext& context_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  GraphReaders readers_;
};

graphdef::NodeDef fused_node(const Graph& graph, const LayerNorm& p) {
  const graphdef::NodeDef& last = *graph.node(p.out).def;
  graphdef::NodeDef fused;
  fused.set_name(last.name());
  fused.set_op("_FusedLayerNorm");
  fused.set_device(last.device());
  fused.add_input(input_text(graph.node(p.x.node).name(), p.x.output));
  fused.add_input(graph.node(p.gamma).name());
  fused.add_input(graph.node(p.beta).name());
  for (int n : p.inner) add_control_inputs(*graph.node(n).def, fused);
  add_control_inputs(last, fused);
  auto& attrs = *fused.mutable_attr();
  attrs["T"].set_type(graphdef::DT_FLOAT);
  attrs["epsilon"].set_f(p.epsilon);
  return fused;
}

std::unique_ptr<graphdef::GraphDef> fuse_layer_norm(const Graph& graph, const PassContext& context) {
  if (has_control_flow(graph)) return nullptr;
  const LayerNormFinder finder(graph, context);
  GraphEdit edit(graph);
  std::vector<char> taken(graph.size(), 0);
  int64_t fused = 0, ops = 0;
  for (int i = 0; i < graph.size(); ++i) {
    const std::optional<LayerNorm> p = finder.ending_at(i);
    // Each inner node is read inside its own pattern alone, so patterns
    // cannot overlap; the check keeps an edit from undoing another if they did.
    if (!p || taken[i] || std::any_of(p->inner.begin(), p->inner.end(), [&](int n) { return taken[n]; })) continue;
    taken[i] = 1;
    for (int n : p->inner) taken[n] = 1;
    edit.mutable_node(i) = fused_node(graph, *p);
    for (int n : p->inner) edit.remove(n);
    ++fused;
    ops += static_cast<int64_t>(p->inner.size()) + 1;
  }
  if (!fused) return nullptr;
  context.report("layer norms fused", fused);
  context.report("ops fused", ops);
  return edit.finish();
}

// After the convolution fusions, before fuse_elementwise, which would take
// the Rsqrt and the Add of epsilon as a chain of their own.
REGISTER_GRAPH_PASS("fuse_layer_norm", 115, fuse_layer_norm);

}  // namespace
}  // namespace graphrun
