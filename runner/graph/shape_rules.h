// Static shape rules, declared on each kernel (Kernel::shape): what can be
// known about a node's outputs without running anything, by the rules
// graphrun's shape functions apply, for the ops where that is cheap.
// graphrun-cc inspect prints them; anything a rule does not set is unknown,
// never guessed. Common rules are here; an op's own rule lives with its
// kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace graphrun {

struct StaticShape {
  bool known_rank = false;
  std::vector<int64_t> dims;  // -1: unknown dim
};

StaticShape unknown_shape();
StaticShape known_shape(std::vector<int64_t> dims);
StaticShape static_shape_of(const graphdef::TensorShapeProto& proto);
// graphdef.shapes.broadcast: numpy's rule, with an unknown dim taking the
// other side's size unless that is 1.
StaticShape broadcast_shapes(const StaticShape& a, const StaticShape& b);

// TensorFlow's most dims; a longer 1-D shape operand (from the file) leaves
// the rank unknown rather than building a list that long.
constexpr int64_t kMaxStaticRank = 254;

// What a rule sees: the node, its inputs' static shapes, and where its
// outputs' go (all unknown until set).
class ShapeContext {
 public:
  ShapeContext(const Graph& graph, const GraphNode& node, const std::vector<std::vector<StaticShape>>& shapes,
               std::vector<StaticShape>& outputs)
      : graph_(graph), node_(node), shapes_(shapes), outputs_(outputs) {}

  const GraphNode& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(node_.inputs.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  StaticShape input(int k) const;
  // The attr in the file, or the kernel's default.
  const graphdef::AttrValue& attr(const std::string& name) const { return node_.kernel->attr(*node_.def, name); }
  // Input k's integer values when a Const (int32 or int64) makes it.
  bool const_ints(int k, std::vector<int64_t>& values) const;
  void set_output(int k, StaticShape shape) { outputs_.at(k) = std::move(shape); }

 private:
  const Graph& graph_;
  const GraphNode& node_;
  const std::vector<std::vector<StaticShape>>& shapes_;
  std::vector<StaticShape>& outputs_;
};

// Output 0 has input k's shape (elementwise ops, Identity, Assign, ...).
ShapeFn same_as_input(int k);
// Output 0 is every input broadcast together (binary ops, Select, AddN).
ShapeFn broadcast_inputs();
// Output 0 is a scalar (L2Loss, Size, Rank).
ShapeFn scalar_output();
// Output 0 has the shape in attr `name` when the file sets it (Placeholder).
ShapeFn shape_from_attr(std::string name);
// Output 0 is input 0 grown by input 1's constant [rank, 2] paddings (Pad,
// PadV2, MirrorPad, whose `mode` attr bounds them when `mirror`).
ShapeFn padded_shape(bool mirror);

}  // namespace graphrun
