#include "exec/executor.h"

#include <chrono>
#include <functional>
#include <new>
#include <queue>

#include "core/channel_blocks.h"
#include "core/tensor_limit.h"
#include "exec/frame_executor.h"
#include "exec/kernel_context.h"
#include "graph/shape_pattern.h"

namespace graphrun {

namespace {

// Calls visit(producer) for each dependency of a node that must run first:
// its data inputs except refs, then its control inputs.
template <class Visit>
void for_each_dependency(const GraphNode& node, Visit&& visit) {
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    if (!node.input_spec(i).is_ref) visit(node.inputs[i].node);
  }
  for (int control : node.control_inputs) visit(control);
}

// "x (float32, [?,3])", as Python's graphrun names a placeholder.
std::string describe_placeholder(const GraphNode& node) {
  const std::string shape = pattern_string(node.kernel->attr(*node.def, "shape").shape());
  return node.name() + " (" + dtype_name(node.output_dtypes[0]) + ", " + shape + ")";
}

}  // namespace

Executor::Executor(const Graph& graph, std::vector<Endpoint> fetches, std::vector<int> targets, const FeedMap& feeds)
    : graph_(graph), fetches_(std::move(fetches)), targets_(std::move(targets)), uses_(graph.size(), 0) {
  const std::vector<char> needed = mark_needed(feeds);
  check_fed(needed, feeds);
  if (needs_frame_executor(graph_, needed)) {
    frames_ = std::make_shared<const FrameExecutor>(graph_, fetches_, targets_, needed, feeds);
    return;
  }
  plan_order(needed, feeds);
  plan_channel_blocks(needed, feeds);
}

void Executor::release_inputs(int i, std::vector<std::vector<TensorPtr>>& values, std::vector<int>& remaining) const {
  const GraphNode& node = graph_.node(i);
  for (int k = 0; k < static_cast<int>(node.inputs.size()); ++k) {
    if (node.input_spec(k).is_ref) continue;
    const int producer = node.inputs[k].node;
    if (--remaining[producer] == 0) values[producer].clear();
  }
}

std::vector<char> Executor::mark_needed(const FeedMap& feeds) const {
  // An explicit stack: no recursion over the graph.
  std::vector<char> needed(graph_.size(), 0);
  std::vector<int> stack;
  std::vector<int> roots = targets_;
  for (const Endpoint& fetch : fetches_) roots.push_back(fetch.node);
  for (int root : roots) {
    if (!needed[root]) {
      needed[root] = 1;
      stack.push_back(root);
    }
  }
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (feeds.count(i)) continue;  // a fed value replaces the node and its inputs
    for_each_dependency(graph_.node(i), [&](int producer) {
      if (!needed[producer]) {
        needed[producer] = 1;
        stack.push_back(producer);
      }
    });
  }
  return needed;
}

void Executor::check_fed(const std::vector<char>& needed, const FeedMap& feeds) const {
  // Name every placeholder the run lacks at once, in file order.
  std::string unfed;
  int unfed_count = 0;
  for (int i = 0; i < graph_.size(); ++i) {
    if (!needed[i] || feeds.count(i) || !graph_.node(i).kernel->must_be_fed()) continue;
    unfed += (unfed_count++ ? ", " : "") + describe_placeholder(graph_.node(i));
  }
  if (unfed_count > 0) {
    throw UsageError(std::string(unfed_count > 1 ? "placeholders" : "placeholder") + " not fed: " + unfed +
                     "; use --feed NAME=VALUE or --feeds FILE.npz");
  }
}

void Executor::plan_order(const std::vector<char>& needed, const FeedMap& feeds) {
  // Kahn's algorithm; the min-heap on the node index keeps a file that is
  // already in topological order in file order.
  const int n = graph_.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    if (!needed[i] || feeds.count(i)) continue;
    const GraphNode& node = graph_.node(i);
    for_each_dependency(node, [&](int producer) {
      ++pending[i];
      consumers[producer].push_back(i);
    });
    for (int k = 0; k < static_cast<int>(node.inputs.size()); ++k) {
      if (!node.input_spec(k).is_ref) ++uses_[node.inputs[k].node];
    }
  }
  for (const Endpoint& fetch : fetches_) ++uses_[fetch.node];

  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (needed[i] && pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order_.push_back(i);
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push(consumer);
    }
  }
}

void Executor::plan_channel_blocks(const std::vector<char>& needed, const FeedMap& feeds) {
  // A node's output may stay in channel blocks when its kernel can write
  // them, nothing fetches it, and every consumer reads them at that input.
  // Control-flow plans (FrameExecutor) keep every value plain.
  const int n = graph_.size();
  channel_blocks_.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    channel_blocks_[i] = needed[i] && !feeds.count(i) && graph_.node(i).kernel->reads_channel_blocks();
  }
  for (const Endpoint& fetch : fetches_) channel_blocks_[fetch.node] = 0;
  for (int i = 0; i < n; ++i) {
    if (!needed[i] || feeds.count(i)) continue;
    const GraphNode& node = graph_.node(i);
    for (int k = 0; k < static_cast<int>(node.inputs.size()); ++k) {
      if (!node.kernel->reads_channel_blocks(k)) channel_blocks_[node.inputs[k].node] = 0;
    }
  }
}

std::vector<TensorPtr> Executor::gather_inputs(int i, const std::vector<std::vector<TensorPtr>>& values,
                                               VariableStore& variables) const {
  const GraphNode& node = graph_.node(i);
  std::vector<TensorPtr> inputs(node.inputs.size());
  for (std::size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.input_spec(static_cast<int>(k)).is_ref) continue;
    inputs[k] = value_of(node.inputs[k], values, variables);
    // The plan keeps blocks from kernels that cannot read them; this is the guard.
    if (!node.kernel->reads_channel_blocks(static_cast<int>(k))) inputs[k] = plain(std::move(inputs[k]));
  }
  return inputs;
}

std::vector<TensorPtr> Executor::run_node(int i, const std::vector<std::vector<TensorPtr>>& values,
                                          VariableStore& variables) const {
  return execute(i, gather_inputs(i, values, variables), variables);
}

std::vector<TensorPtr> Executor::execute(int i, std::vector<TensorPtr> inputs, VariableStore& variables) const {
  const GraphNode& node = graph_.node(i);
  KernelContext context(graph_, i, std::move(inputs), variables);
  if (!channel_blocks_.empty() && channel_blocks_[i]) context.allow_channel_blocks();
  const auto start = node_seconds_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  try {
    node.kernel->run(context);
    if (node_seconds_) {
      (*node_seconds_)[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  } catch (const ExitError&) {
    throw;
  } catch (const Error& error) {
    throw RunError(node.describe() + ": " + error.what());
  } catch (const std::bad_alloc&) {
    throw RunError(node.describe() + ": " + out_of_memory_text());
  } catch (const std::exception& error) {
    throw RunError(node.describe() + ": internal error: " + error.what());
  }
  std::vector<TensorPtr>& outputs = context.outputs();
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k] || outputs[k]->dtype() != node.output_dtypes[k]) {
      throw RunError(node.describe() + ": internal error: output " + std::to_string(k) +
                     " is missing or has the wrong dtype");
    }
  }
  return std::move(outputs);
}

TensorPtr Executor::value_of(Endpoint endpoint, const std::vector<std::vector<TensorPtr>>& values,
                             VariableStore& variables) const {
  // A variable is read when its consumer runs, as a TF1 ref is, so a read
  // ordered after an Assign by a control input sees the assigned value even
  // though the variable node itself was "ready" long before.
  if (graph_.node(endpoint.node).kernel->is_variable() && values[endpoint.node].empty()) {
    return run_node(endpoint.node, values, variables).at(endpoint.output);
  }
  return values[endpoint.node].at(endpoint.output);
}

std::vector<TensorPtr> Executor::run(const FeedMap& feeds, VariableStore& variables) const {
  struct RunScope {
    RunScope() { tensor_memory_run_started(); }
    ~RunScope() { tensor_memory_run_ended(); }
  } scope;
  if (frames_) return frames_->run(feeds, variables);
  std::vector<std::vector<TensorPtr>> values(graph_.size());
  std::vector<int> remaining = uses_;
  for (int i : order_) {
    auto fed = feeds.find(i);
    if (fed != feeds.end()) {
      values[i] = {fed->second};
      continue;
    }
    if (graph_.node(i).kernel->is_variable()) continue;  // read by each consumer instead
    std::vector<TensorPtr> inputs = gather_inputs(i, values, variables);
    // Let go of each input whose last consumer this node is before it runs:
    // an input it then holds the only reference to is one it may overwrite
    // (KernelContext::reusable_input), saving a new buffer and a pass over
    // memory for ops like BiasAdd and Relu.
    release_inputs(i, values, remaining);
    values[i] = execute(i, std::move(inputs), variables);
  }
  // Variables are read only by their consumers; a variable run as a target
  // is read here, so an uninitialized one is reported as it would be fetched.
  for (int target : targets_) {
    if (graph_.node(target).kernel->is_variable() && !feeds.count(target)) run_node(target, values, variables);
  }
  std::vector<TensorPtr> results;
  results.reserve(fetches_.size());
  for (const Endpoint& fetch : fetches_) results.push_back(plain(value_of(fetch, values, variables)));
  return results;
}

}  // namespace graphrun
