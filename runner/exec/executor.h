// Runs the part of a graph that the fetches need.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"
#include "exec/kernel_context.h"
#include "core/tensor.h"
#include "core/tensor_memory.h"
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
  void plan_channel_blocks(const std::vector<char>& needed, const FeedMap& feeds);
  std::vector<TensorPtr> gather_inputs(int node, const std::vector<std::vector<TensorPtr>>& values,
                                       VariableStore& variables) const;
  std::vector<TensorPtr> run_node(int node, const std::vector<std::vector<TensorPtr>>& values,
                                  VariableStore& variables) const;
  std::vector<TensorPtr> execute(int node, std::vector<TensorPtr> inputs, VariableStore& variables) const;

  void release_inputs(int node, std::vector<std::vector<TensorPtr>>& values, std::vector<int>& remaining) const;
  TensorPtr value_of(Endpoint endpoint, const std::vector<std::vector<TensorPtr>>& values,
                     VariableStore& variables) const;

  // While an Executor (or a copy) lives, large freed tensor buffers are kept
  // for the next run (core/tensor_memory.h); the last one to go empties that cache.
  struct TensorMemoryUser {
    TensorMemoryUser() { add_tensor_memory_user(); }
    TensorMemoryUser(const TensorMemoryUser&) { add_tensor_memory_user(); }
    TensorMemoryUser& operator=(const TensorMemoryUser&) = default;
    ~TensorMemoryUser() { remove_tensor_memory_user(); }
  };
  TensorMemoryUser memory_user_;
  const Graph& graph_;
  std::vector<Endpoint> fetches_;
  std::vector<int> targets_;
  std::vector<int> order_;
  std::vector<int> uses_;  // per node: data uses within the plan + fetches of it
  std::vector<char> channel_blocks_;  // per node: its output may stay in channel blocks
  std::vector<double>* node_seconds_ = nullptr;  // see time_nodes
  // Set when the plan holds control-flow ops: then it runs the plan instead.
  std::shared_ptr<const FrameExecutor> frames_;
};

}  // namespace graphrun
