#include "exec/frame_executor.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <new>

#include "core/tensor_limit.h"
#include "exec/kernel_context.h"
#include "graph/input_name.h"

namespace graphrun {

namespace {

using Liveness = FrameExecutor::Liveness;

// Nested deeper than this, a model is refused: run_loop recurses once per level.
constexpr int kMaxFrameDepth = 64;

bool is_op(const GraphNode& node, const char* op) { return node.op() == op; }

// Calls visit(producer, is_control) for each dependency a node waits for:
// its data inputs except refs, then its control inputs.
template <class Visit>
void for_each_dependency(const GraphNode& node, Visit&& visit) {
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    if (!node.input_spec(i).is_ref) visit(node.inputs[i].node, false);
  }
  for (int control : node.control_inputs) visit(control, true);
}

// GRAPHDEF_MAX_WHILE_ITERATIONS (default 10^6), as the functional While of
// both runtimes: a hostile loop whose condition never fails must end in an
// error, not hang. Read once.
int64_t max_while_iterations() {
  static const int64_t limit = [] {
    const char* text = std::getenv("GRAPHDEF_MAX_WHILE_ITERATIONS");
    if (text == nullptr || *text == '\0') return int64_t{1000000};
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text, &end, 10);
    if (*end != '\0' || errno != 0 || value < 1) {
      throw UsageError(std::string("GRAPHDEF_MAX_WHILE_ITERATIONS=") + text + " is not a positive whole number");
    }
    return static_cast<int64_t>(value);
  }();
  return limit;
}

}  // namespace

bool needs_frame_executor(const Graph& graph, const std::vector<char>& needed) {
  static const char* const kControlFlowOps[] = {"Switch",        "Merge",    "Enter",         "Exit",
                                                "NextIteration", "LoopCond", "ControlTrigger"};
  for (int i = 0; i < graph.size(); ++i) {
    if (!needed[i]) continue;
    for (const char* op : kControlFlowOps) {
      if (graph.node(i).op() == op) return true;
    }
  }
  return false;
}

struct FrameExecutor::RunState {
  const FeedMap& feeds;
  VariableStore& variables;
};

FrameExecutor::FrameExecutor(const Graph& graph, std::vector<Endpoint> fetches, std::vector<int> targets,
                             const std::vector<char>& needed, const FeedMap& feeds)
    : graph_(graph), fetches_(std::move(fetches)), targets_(std::move(targets)) {
  fed_.assign(graph_.size(), 0);
  for (const auto& feed : feeds) fed_[feed.first] = 1;
  assign_frames(needed, feeds);
  order_frames(needed, feeds);
  check_fetches();
}

void FrameExecutor::fail(const std::string& reason) const { throw ModelError(graph_.source() + ": " + reason); }

std::string FrameExecutor::frame_label(int frame) const {
  return frame == 0 ? "the top level" : "loop frame '" + frames_[frame].name + "'";
}

int FrameExecutor::child_frame(int parent, const std::string& name, int enter) {
  const std::string key = std::to_string(parent) + "/" + name;
  auto found = child_by_key_.find(key);
  if (found != child_by_key_.end()) return found->second;
  if (frames_[parent].depth + 1 > kMaxFrameDepth) {
    fail(graph_.node(enter).describe() + ": loops are nested more than " + std::to_string(kMaxFrameDepth) + " deep");
  }
  Frame frame;
  frame.name = name;
  frame.parent = parent;
  frame.depth = frames_[parent].depth + 1;
  frames_.push_back(std::move(frame));
  child_by_key_.emplace(key, static_cast<int>(frames_.size()) - 1);
  return static_cast<int>(frames_.size()) - 1;
}

// The frame a node's outputs are in: an Exit's go to the parent frame.
int FrameExecutor::out_frame(int node) const {
  const int frame = frame_of_[node];
  if (fed_[node] || !is_op(graph_.node(node), "Exit")) return frame;
  if (frame == 0) fail(graph_.node(node).describe() + " is not inside a loop: no Enter leads to it");
  return frames_[frame].parent;
}

void FrameExecutor::assign_frames(const std::vector<char>& needed, const FeedMap& feeds) {
  // Breadth-first from the nodes without inputs (and the fed ones), as
  // TensorFlow's control-flow analysis: a consumer is in its producer's
  // output frame, an Enter in that frame's child named by frame_name.
  const int n = graph_.size();
  frames_.assign(1, Frame{});
  frame_of_.assign(n, -1);
  std::vector<std::vector<int>> consumers(n);
  std::deque<int> queue;
  for (int i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    bool has_dependency = false;
    if (!feeds.count(i)) {
      for_each_dependency(graph_.node(i), [&](int producer, bool) {
        consumers[producer].push_back(i);
        has_dependency = true;
      });
    }
    if (!has_dependency) {
      frame_of_[i] = 0;
      queue.push_back(i);
    }
  }
  auto expected_frame = [&](int producer, int consumer) {
    const GraphNode& node = graph_.node(consumer);
    const int frame = out_frame(producer);
    return is_op(node, "Enter") ? child_frame(frame, node.kernel->get_string(*node.def, "frame_name"), consumer)
                                : frame;
  };
  while (!queue.empty()) {
    const int producer = queue.front();
    queue.pop_front();
    for (int consumer : consumers[producer]) {
      const int frame = expected_frame(producer, consumer);
      if (frame_of_[consumer] < 0) {
        frame_of_[consumer] = frame;
        queue.push_back(consumer);
      } else if (frame_of_[consumer] != frame) {
        fail(graph_.node(consumer).describe() + " has inputs from two frames: '" + graph_.node(producer).name() +
             "' puts it in " + frame_label(frame) + ", another input in " + frame_label(frame_of_[consumer]) +
             " (a value must enter a loop through an Enter and leave it through an Exit)");
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (needed[i] && frame_of_[i] < 0) fail(graph_.node(i).describe() + " is reached from no input of the graph");
  }
}

void FrameExecutor::order_frames(const std::vector<char>& needed, const FeedMap& feeds) {
  const int n = graph_.size();
  slot_of_.assign(n, -1);
  exit_slot_.assign(n, -1);
  index_in_frame_.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!needed[i]) continue;
    const GraphNode& node = graph_.node(i);
    Frame& frame = frames_[frame_of_[i]];
    slot_of_[i] = static_cast<int>(frame.members.size());
    frame.members.push_back(i);
    if (fed_[i]) continue;  // a fed value replaces the node and its role
    if (is_op(node, "Enter")) {
      index_in_frame_[i] = static_cast<int>(frame.enters.size());
      frame.enters.push_back(i);
    } else if (is_op(node, "Exit")) {
      index_in_frame_[i] = static_cast<int>(frame.exits.size());
      frame.exits.push_back(i);
    } else if (is_op(node, "NextIteration")) {
      if (frame_of_[i] == 0) fail(node.describe() + " is not inside a loop: no Enter leads to it");
      index_in_frame_[i] = static_cast<int>(frame.next_iterations.size());
      frame.next_iterations.push_back(i);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!needed[i] || fed_[i] || !is_op(graph_.node(i), "Exit")) continue;
    Frame& parent = frames_[out_frame(i)];
    exit_slot_[i] = static_cast<int>(parent.members.size() + parent.child_exits.size());
    parent.child_exits.push_back(i);
  }

  // Each frame's units: its own nodes, and each child loop as one unit
  // that waits for its Enters' inputs and precedes its Exits' consumers.
  // A producer seen from `frame`: its own node, or (an Exit of a child
  // loop; assign_frames checked there is no other case) that loop's unit.
  auto unit_in = [&](int frame, int node) { return frame_of_[node] == frame ? node : ~frame_of_[node]; };
  const int frame_count = static_cast<int>(frames_.size());
  std::vector<std::unordered_map<int, std::vector<int>>> edges(frame_count);  // unit -> later units
  std::vector<std::unordered_map<int, int>> pending(frame_count);
  for (int f = 1; f < frame_count; ++f) pending[frames_[f].parent][~f];
  for (int i = 0; i < n; ++i) {
    if (needed[i]) pending[frame_of_[i]][i];
  }
  for (int i = 0; i < n; ++i) {
    if (!needed[i] || feeds.count(i)) continue;
    const GraphNode& node = graph_.node(i);
    const bool enter = is_op(node, "Enter");
    const int frame = enter ? frames_[frame_of_[i]].parent : frame_of_[i];
    const int unit = enter ? ~frame_of_[i] : i;
    for_each_dependency(node, [&](int producer, bool is_control) {
      const GraphNode& from = graph_.node(producer);
      if (is_op(from, "NextIteration") && !fed_[producer]) {
        if (is_control || !is_op(node, "Merge")) {
          fail(from.describe() + " feeds " + node.describe() + "; a NextIteration may only feed a Merge");
        }
        return;  // the loop's back edge: carried to the next iteration
      }
      const int before = unit_in(frame, producer);
      if (before == unit) {
        fail(frame_label(~unit) + " feeds its own Enter '" + node.name() + "' through '" + from.name() + "'");
      }
      edges[frame][before].push_back(unit);
      ++pending[frame][unit];
    });
  }
  for (int f = 0; f < frame_count; ++f) {
    // Kahn's algorithm; ready units in ascending key order so runs are reproducible.
    std::vector<int> ready;
    for (const auto& [unit, count] : pending[f]) {
      if (count == 0) ready.push_back(unit);
    }
    std::sort(ready.begin(), ready.end(), std::greater<int>());
    std::vector<int>& units = frames_[f].units;
    while (!ready.empty()) {
      const int unit = ready.back();
      ready.pop_back();
      units.push_back(unit);
      auto next = edges[f].find(unit);
      if (next == edges[f].end()) continue;
      for (int later : next->second) {
        if (--pending[f][later] == 0) {
          ready.insert(std::upper_bound(ready.begin(), ready.end(), later, std::greater<int>()), later);
        }
      }
    }
    if (units.size() != pending[f].size()) {
      fail(frame_label(f) + " cannot be ordered: a loop's output flows back into its own input");
    }
  }
}

void FrameExecutor::check_fetches() const {
  for (const Endpoint& fetch : fetches_) {
    const int frame = out_frame(fetch.node);
    if (frame != 0) {
      throw UsageError("cannot fetch '" + tensor_name(graph_.node(fetch.node).name(), fetch.output) +
                       "': it is inside " + frame_label(frame) + "; fetch a value the loop's Exit gives out");
    }
  }
}

std::vector<TensorPtr> FrameExecutor::run(const FeedMap& feeds, VariableStore& variables) const {
  RunState run{feeds, variables};
  std::vector<Slot> slots(frames_[0].members.size() + frames_[0].child_exits.size());
  run_iteration(0, 0, {}, {}, slots, run);
  for (int target : targets_) {
    if (graph_.node(target).kernel->is_variable() && !feeds.count(target)) execute(target, 0, 0, {}, run);
  }
  std::vector<TensorPtr> results;
  for (const Endpoint& fetch : fetches_) {
    const Value value = read(0, fetch, -1, 0, slots, {}, run);
    const std::string name = tensor_name(graph_.node(fetch.node).name(), fetch.output);
    if (value.state == Liveness::kDead) {
      throw RunError("fetch '" + name + "' is dead: it lies on a branch of a Switch that was not taken");
    }
    if (value.state == Liveness::kAbsent) {
      throw RunError("fetch '" + name + "' was never computed: one of its inputs never arrived from its loop");
    }
    results.push_back(value.tensor);
  }
  return results;
}

FrameExecutor::Value FrameExecutor::read(int frame, Endpoint from, int consumer, int64_t iteration,
                                         const std::vector<Slot>& slots, const std::vector<Value>& carried,
                                         RunState& run) const {
  const GraphNode& producer = graph_.node(from.node);
  if (consumer >= 0 && !fed_[from.node] && is_op(producer, "NextIteration") && is_op(graph_.node(consumer), "Merge")) {
    return iteration == 0 ? Value{} : carried[index_in_frame_[from.node]];
  }
  // A variable is read when its consumer runs, as in the static executor.
  if (producer.kernel->is_variable() && !fed_[from.node]) {
    return {Liveness::kLive, execute(from.node, frame, iteration, {}, run).at(from.output)};
  }
  const Slot& slot = slots[frame_of_[from.node] == frame ? slot_of_[from.node] : exit_slot_[from.node]];
  if (slot.state != Liveness::kLive) return {slot.state, nullptr};
  const TensorPtr& value = slot.outputs[from.output];
  return value ? Value{Liveness::kLive, value} : Value{Liveness::kDead, nullptr};
}

FrameExecutor::Liveness FrameExecutor::control_state(int frame, int producer, const std::vector<Slot>& slots,
                                                     RunState&) const {
  if (graph_.node(producer).kernel->is_variable() && !fed_[producer]) return Liveness::kLive;
  return slots[frame_of_[producer] == frame ? slot_of_[producer] : exit_slot_[producer]].state;
}

void FrameExecutor::run_iteration(int frame_index, int64_t iteration, const std::vector<Value>& enters,
                                  const std::vector<Value>& carried, std::vector<Slot>& slots, RunState& run) const {
  const Frame& frame = frames_[frame_index];
  for (int unit : frame.units) {
    if (unit >= 0) {
      slots[slot_of_[unit]] = run_node(frame_index, unit, iteration, enters, slots, carried, run);
      continue;
    }
    // A child loop: its Enters take their inputs here, then it runs to the end.
    const Frame& child = frames_[~unit];
    std::vector<Value> child_enters;
    for (int enter : child.enters) {
      Slot slot = run_node(frame_index, enter, iteration, enters, slots, carried, run);
      child_enters.push_back(slot.state == Liveness::kLive ? Value{Liveness::kLive, slot.outputs.at(0)}
                                                           : Value{slot.state, nullptr});
    }
    const std::vector<Value> exits = run_loop(~unit, child_enters, run);
    for (std::size_t k = 0; k < child.exits.size(); ++k) {
      Slot& slot = slots[exit_slot_[child.exits[k]]];
      slot.state = exits[k].state;
      slot.outputs.assign(1, exits[k].tensor);
    }
  }
}

std::vector<FrameExecutor::Value> FrameExecutor::run_loop(int frame_index, const std::vector<Value>& enters,
                                                          RunState& run) const {
  const Frame& frame = frames_[frame_index];
  std::vector<Value> exits(frame.exits.size());
  std::vector<Value> carried(frame.next_iterations.size());
  for (int64_t iteration = 0;; ++iteration) {
    std::vector<Slot> slots(frame.members.size() + frame.child_exits.size());
    run_iteration(frame_index, iteration, enters, carried, slots, run);
    // An Exit keeps its last live value; one never live reports how the last
    // iteration left it (dead when the whole loop sat in an untaken branch).
    for (std::size_t k = 0; k < frame.exits.size(); ++k) {
      const Slot& slot = slots[slot_of_[frame.exits[k]]];
      if (slot.state == Liveness::kLive) {
        exits[k] = {Liveness::kLive, slot.outputs.at(0)};
      } else if (exits[k].state != Liveness::kLive) {
        exits[k] = {slot.state, nullptr};
      }
    }
    // A dead NextIteration stops there (it is how a loop ends); only live
    // ones reach the next iteration's Merges.
    bool more = false;
    for (std::size_t k = 0; k < frame.next_iterations.size(); ++k) {
      const Slot& slot = slots[slot_of_[frame.next_iterations[k]]];
      const bool live = slot.state == Liveness::kLive;
      carried[k] = live ? Value{Liveness::kLive, slot.outputs.at(0)} : Value{};
      more = more || live;
    }
    if (!more) return exits;
    // iteration + 1 bodies have run, and the loop wants another condition check
    if (iteration + 1 > max_while_iterations()) {
      throw RunError(frame_label(frame_index) + " ran more than " + std::to_string(max_while_iterations()) +
                     " iterations; set GRAPHDEF_MAX_WHILE_ITERATIONS to allow more");
    }
  }
}

FrameExecutor::Slot FrameExecutor::run_node(int frame, int node_index, int64_t iteration,
                                            const std::vector<Value>& enters, const std::vector<Slot>& slots,
                                            const std::vector<Value>& carried, RunState& run) const {
  const GraphNode& node = graph_.node(node_index);
  Slot result;
  auto fed = run.feeds.find(node_index);
  if (fed != run.feeds.end()) {
    result.state = Liveness::kLive;
    result.outputs = {fed->second};
    return result;
  }
  if (node.kernel->is_variable()) return result;  // read by each consumer instead
  if (is_op(node, "Enter") && frame_of_[node_index] != frame) {
    // Evaluated in the parent, for the child loop: handled below like any node.
  } else if (is_op(node, "Enter")) {
    // Inside its own frame: the value given at the frame's start, for
    // iteration 0 only unless the Enter is constant.
    const bool constant = node.kernel->get_bool(*node.def, "is_constant");
    const Value& value = enters[index_in_frame_[node_index]];
    if (iteration > 0 && !constant) return result;
    result.state = value.state;
    if (value.state == Liveness::kLive) result.outputs = {value.tensor};
    return result;
  }
  // The least live of the control inputs, and the data inputs' values.
  Liveness controls = Liveness::kLive;
  for (int control : node.control_inputs) controls = std::min(controls, control_state(frame, control, slots, run));
  std::vector<Value> inputs(node.inputs.size());
  Liveness data = Liveness::kLive;
  for (std::size_t k = 0; k < node.inputs.size(); ++k) {
    if (node.input_spec(static_cast<int>(k)).is_ref) continue;
    inputs[k] = read(frame, node.inputs[k], node_index, iteration, slots, carried, run);
    data = std::min(data, inputs[k].state);
  }
  if (is_op(node, "Merge")) {
    // Waits for every control input, then takes the first live data input.
    if (controls == Liveness::kAbsent) return result;
    // Dead only when every input is; but a dead Enter makes it dead at once
    // (as in TensorFlow), since the back edge can bring nothing in iteration
    // 0: this is how a loop inside an untaken branch ends.
    bool any_absent = false;
    bool dead_enter = false;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      dead_enter =
          dead_enter || (inputs[k].state == Liveness::kDead && is_op(graph_.node(node.inputs[k].node), "Enter"));
      if (inputs[k].state == Liveness::kLive) {
        Tensor index(graphdef::DT_INT32, {});
        index.data<int32_t>()[0] = static_cast<int32_t>(k);
        result.state = Liveness::kLive;
        result.outputs = {inputs[k].tensor, std::make_shared<const Tensor>(std::move(index))};
        return result;
      }
      any_absent = any_absent || inputs[k].state == Liveness::kAbsent;
    }
    result.state = any_absent && !dead_enter ? Liveness::kAbsent : Liveness::kDead;
    return result;
  }
  const Liveness state = std::min(controls, data);
  if (state == Liveness::kAbsent) return result;
  if (state == Liveness::kDead && !is_op(node, "ControlTrigger")) {
    result.state = Liveness::kDead;
    return result;
  }
  std::vector<TensorPtr> tensors(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) tensors[k] = std::move(inputs[k].tensor);
  result.state = Liveness::kLive;
  result.outputs = execute(node_index, frame, iteration, std::move(tensors), run);
  return result;
}

std::vector<TensorPtr> FrameExecutor::execute(int node_index, int frame, int64_t iteration,
                                              std::vector<TensorPtr> inputs, RunState& run) const {
  const GraphNode& node = graph_.node(node_index);
  const std::string where =
      frame == 0 ? "" : " in iteration " + std::to_string(iteration) + " of " + frame_label(frame);
  KernelContext context(graph_, node_index, std::move(inputs), run.variables);
  try {
    node.kernel->run(context);
  } catch (const ExitError&) {
    throw;
  } catch (const Error& error) {
    throw RunError(node.describe() + where + ": " + error.what());
  } catch (const std::bad_alloc&) {
    throw RunError(node.describe() + where + ": " + out_of_memory_text());
  } catch (const std::exception& error) {
    throw RunError(node.describe() + where + ": internal error: " + error.what());
  }
  std::vector<TensorPtr>& outputs = context.outputs();
  const bool is_switch = is_op(node, "Switch");  // leaves its untaken output unset: dead
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if ((!outputs[k] && !is_switch) || (outputs[k] && outputs[k]->dtype() != node.output_dtypes[k])) {
      throw RunError(node.describe() + ": internal error: output " + std::to_string(k) +
                     " is missing or has the wrong dtype");
    }
  }
  return std::move(outputs);
}

}  // namespace graphrun
