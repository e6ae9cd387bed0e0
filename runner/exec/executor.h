// Runs the part of a graph that the fetches need.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "exec/kernel_context.h"
#include "core/tensor.h"
#include "exec/variable_store.h"

namespace graphrun {

// Placeholder node index -> the value fed for its output 0.
using FeedMap = std::unordered_map<int, TensorPtr>;

class FrameExecutor;  // exec/frame_executor.h: runs plans with control flow

class Executor {
 public:
  // Plans which nodes run and in what order: the fetches' nodes and the
  // targets (nodes run only for their effects, such as a training step),
  // with their ancestors through data and control inputs, stopping at fed
  // nodes (ref inputs are not followed: Assign writes a variable without
  // reading it). Throws UsageError naming every placeholder that is needed
  // but not fed.
  Executor(const Graph& graph, std::vector<Endpoint> fetches, std::vector<int> targets, const FeedMap& feeds);

  // Executes the plan; `feeds` must feed the same nodes as at planning.
  // Returns one tensor per fetch. Throws RunError. A plan can run any number
  // of times; the variables carry state from one run to the next.
  std::vector<TensorPtr> run(const FeedMap& feeds, VariableStore& variables) const;

  // The planned node order (topological; among ready nodes, file order first).
  const std::vector<int>& order() const { return order_; }

  // For graphrun-cc bench --profile: while set, every kernel's run adds its
  // seconds to (*seconds)[node] (sized graph.size()); nullptr stops it.
  void time_nodes(std::vector<double>* seconds) { node_seconds_ = seconds; }

 private:
  std::vector<char> mark_needed(const FeedMap& feeds) const;
  void check_fed(const std::vector<char>& needed, const FeedMap& feeds) const;
  void plan_order(const std::vector<char>& needed, const FeedMap& feeds);
  std::vector<TensorPtr> gather_inputs(int node, const std::vector<std::vector<TensorPtr>>& values,
                                       VariableStore& variables) const;
  std::vector<TensorPtr> run_node(int node, const std::vector<std::vector<TensorPtr>>& values,
                                  VariableStore& variables) const;
  std::vector<TensorPtr> execute(int node, std::vector<TensorPtr> inputs, VariableStore& variables,
                                 OutputEpilogue* epilogue = nullptr) const;

  // A float32 Conv2D whose one use is a BiasAdd, and that BiasAdd's one use
  // a Relu (relu -1 when there is none): the convolution waits until the
  // BiasAdd's turn (its bias may be made after the Conv2D in the order) and
  // then runs with the bias and ReLU as its epilogue.
  struct ConvChain {
    int conv = -1, bias_add = -1, relu = -1;
  };
  void plan_fusions(const FeedMap& feeds);
  // Runs a chain's convolution at its BiasAdd's turn; true when the kernel
  // applied the epilogue and the chain's last node has its value.
  bool run_chain(const ConvChain& chain, std::vector<std::vector<TensorPtr>>& values, std::vector<int>& remaining,
                 VariableStore& variables) const;
  void release_inputs(int node, std::vector<std::vector<TensorPtr>>& values, std::vector<int>& remaining) const;
  TensorPtr value_of(Endpoint endpoint, const std::vector<std::vector<TensorPtr>>& values,
                     VariableStore& variables) const;

  const Graph& graph_;
  std::vector<Endpoint> fetches_;
  std::vector<int> targets_;
  std::vector<int> order_;
  std::vector<int> uses_;  // per node: data uses within the plan + fetches of it
  std::vector<ConvChain> chains_;
  std::vector<int> chain_of_;  // per node: its chain in chains_, or -1
  std::vector<double>* node_seconds_ = nullptr;  // see time_nodes
  // Set when the plan holds control-flow ops: then it runs the plan instead.
  std::shared_ptr<const FrameExecutor> frames_;
};

}  // namespace graphrun
