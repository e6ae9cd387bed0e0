// What the rewriting passes share: a mutable copy of a validated graph's
// nodes (same indices as the Graph, new nodes appended), the tests of what
// may be rewritten at all, and Const nodes made from tensors.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "graph.pb.h"
#include "graph/graph.h"
#include "passes/pass.h"

namespace graphrun {

// A node whose value is not a function of its inputs alone, or that acts on
// state (variables, random numbers, queues, I/O, assertions, calls): never
// folded, merged or bypassed. Unrunnable nodes count as stateful.
bool is_stateful(const GraphNode& node);

// TF control flow (frames) or a function library: the rewriting passes
// leave such graphs alone, as graphdef/optimize does (folding across frames
// or into function bodies needs the frame-aware rules those runtimes have).
bool has_control_flow(const Graph& graph);

// The nodes in an order where each comes after its data and control inputs
// (Kahn's, ready nodes in file order). For graphs without control flow: a
// loop's back edge would keep its nodes out of the order.
std::vector<int> topological_order(const Graph& graph);

// A Const NodeDef holding `value` (tensor_content form).
graphdef::NodeDef const_node(const std::string& name, const Tensor& value);

// Appends to `to` each control input of `from` that `to` does not have yet
// (a fused node keeps the ordering every node it replaces had).
void add_control_inputs(const graphdef::NodeDef& from, graphdef::NodeDef& to);

// A node reference as a NodeDef input: "node" for output 0, else "node:k".
std::string input_text(const std::string& node, int output);

// Nodes are copied on first write only: most passes find nothing to do in
// most graphs, and a copy of every node per pass was most of a large
// graph's optimizing time and memory.
class GraphEdit {
 public:
  explicit GraphEdit(const Graph& graph);

  int size() const { return static_cast<int>(removed_.size()); }
  const graphdef::NodeDef& node(int i) const;
  graphdef::NodeDef& mutable_node(int i);  // the node's own copy, made on first use
  int find(const std::string& name) const;  // -1 when absent or removed
  bool removed(int i) const { return removed_[i]; }
  void remove(int i) {
    removed_[i] = 1;
    changed_ = true;
  }
  // Nothing edited, added or removed yet: the nodes are the Graph's.
  bool pristine() const { return !changed_; }
  const Graph& graph() const { return graph_; }
  // Appends `node` under a name no node has, based on `base`; returns it.
  std::string add(graphdef::NodeDef node, const std::string& base);

  // Every input reading node `from` now reads `to`: "from:k" becomes
  // "to:map(k)" (the same k when `output` < 0, else `output`), "^from"
  // becomes "^to". Control inputs left duplicated, or naming a node the
  // reader also reads as data, are dropped.
  struct Move {
    std::string to;
    int output = -1;
  };
  void redirect(const std::unordered_map<std::string, Move>& moves);

  // The edited GraphDef: kept nodes in order, then the added ones. The
  // edited nodes move into it (a model's weights are most of its bytes: a
  // copy here was a third copy of them at the pass's peak), leaving the
  // edit empty.
  std::unique_ptr<graphdef::GraphDef> finish();

 private:
  const Graph& graph_;
  const graphdef::GraphDef& original_;
  std::vector<std::unique_ptr<graphdef::NodeDef>> edited_;  // null: the original node, unchanged
  std::vector<graphdef::NodeDef> added_;                    // node original_.node_size() + k
  std::vector<char> removed_;
  std::unordered_map<std::string, int> added_index_;
  bool changed_ = false;
};

// Data and control uses of each node of a GraphEdit (by node index).
// Who reads each node of a validated Graph, for the fusion passes' "may this
// node disappear into its reader" test.
class GraphReaders {
 public:
  explicit GraphReaders(const Graph& graph);

  // The nodes reading `node`'s outputs, one entry per input that reads it.
  const std::vector<int>& data(int node) const { return data_[node]; }
  int control(int node) const { return control_[node]; }

  // data(producer) when nothing else can see its value (not fetched, no
  // control dependants); empty otherwise.
  std::vector<int> private_uses(int producer, const PassContext& context) const;

 private:
  const Graph& graph_;
  std::vector<std::vector<int>> data_;
  std::vector<int> control_;
};

struct Uses {
  std::vector<int> data, control;
  std::vector<char> other_outputs;  // some reader takes an output other than 0
  explicit Uses(const GraphEdit& edit);
};

}  // namespace graphrun
