// Runs graphs with TF1 control flow (Switch, Merge, Enter, Exit,
// NextIteration, LoopCond, ControlTrigger), which the static executor's one
// pass over a topological order cannot express:
//
// - Dead values. Switch forwards its data to output_false (0) when pred is
//   false, to output_true (1) when true; the other output is dead. A node
//   with a dead data or control input does not run and its outputs are dead,
//   except Merge, which forwards its first live input (with its index as
//   value_index) and is dead only when every input is, and ControlTrigger,
//   which always runs.
// - Frames. Enter moves a value into a child frame (a while loop), Exit
//   back to the parent; NextIteration carries a value to the Merge of the
//   next iteration. A non-constant Enter delivers its value to iteration 0,
//   a constant one to every iteration. A loop runs until no NextIteration
//   delivers a live value; each Exit then gives the parent its last live
//   value, or dead when it never had one (a loop inside an untaken branch).
//
// Planning assigns every node its frame the way TensorFlow does (from the
// inputs: an Enter's consumers are in its frame_name child, an Exit's in the
// parent) and orders each frame's nodes, with each child loop as one unit
// of its parent. Iterations run one after another, so parallel_iterations
// (a bound on how many TensorFlow overlaps) cannot change a result.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "exec/executor.h"

namespace graphrun {

// True when a planned node is a control-flow op, so the run needs a FrameExecutor.
bool needs_frame_executor(const Graph& graph, const std::vector<char>& needed);

class FrameExecutor {
 public:
  // `needed` marks the planned nodes (Executor's plan). Throws ModelError
  // for a control-flow structure that cannot run (a node fed from two
  // frames, an Exit outside any loop, a NextIteration not feeding a Merge),
  // UsageError for a fetch inside a loop.
  FrameExecutor(const Graph& graph, std::vector<Endpoint> fetches, std::vector<int> targets,
                const std::vector<char>& needed, const FeedMap& feeds);

  // As Executor::run. A fetch that is dead is a RunError naming it.
  std::vector<TensorPtr> run(const FeedMap& feeds, VariableStore& variables) const;

  enum class Liveness : unsigned char { kAbsent, kDead, kLive };  // absent < dead < live

  // One node's result in one iteration: whether it ran (kLive), was skipped
  // as dead, or never had all its inputs (kAbsent); when it ran, a null
  // output is a dead one (Switch's untaken side).
  struct Slot {
    Liveness state = Liveness::kAbsent;
    std::vector<TensorPtr> outputs;
  };
  // A single value crossing a frame boundary (an Enter's, an Exit's, a NextIteration's).
  struct Value {
    Liveness state = Liveness::kAbsent;
    TensorPtr tensor;
  };

 private:
  struct Frame {
    std::string name;  // the Enter nodes' frame_name; empty for the root
    int parent = -1;
    int depth = 0;
    std::vector<int> members;          // nodes in this frame, Enters and Exits included
    std::vector<int> child_exits;      // Exit nodes of child frames, whose values land here
    std::vector<int> units;            // run order: node index, or ~child frame
    std::vector<int> enters;           // this frame's Enter nodes
    std::vector<int> exits;            // this frame's Exit nodes
    std::vector<int> next_iterations;  // this frame's NextIteration nodes
  };
  struct RunState;

  void assign_frames(const std::vector<char>& needed, const FeedMap& feeds);
  int child_frame(int parent, const std::string& name, int enter);
  int out_frame(int node) const;
  void order_frames(const std::vector<char>& needed, const FeedMap& feeds);
  void check_fetches() const;
  [[noreturn]] void fail(const std::string& reason) const;
  std::string frame_label(int frame) const;

  void run_iteration(int frame, int64_t iteration, const std::vector<Value>& enters, const std::vector<Value>& carried,
                     std::vector<Slot>& slots, RunState& run) const;
  std::vector<Value> run_loop(int frame, const std::vector<Value>& enters, RunState& run) const;
  Value read(int frame, Endpoint from, int consumer, int64_t iteration, const std::vector<Slot>& slots,
             const std::vector<Value>& carried, RunState& run) const;
  Liveness control_state(int frame, int producer, const std::vector<Slot>& slots, RunState& run) const;
  Slot run_node(int frame, int node, int64_t iteration, const std::vector<Value>& enters,
                const std::vector<Slot>& slots, const std::vector<Value>& carried, RunState& run) const;
  std::vector<TensorPtr> execute(int node, int frame, int64_t iteration, std::vector<TensorPtr> inputs,
                                 RunState& run) const;

  const Graph& graph_;
  std::vector<Endpoint> fetches_;
  std::vector<int> targets_;
  std::vector<Frame> frames_;
  std::vector<int> frame_of_;   // per node: its frame, -1 when not planned
  std::vector<int> slot_of_;    // per node: its slot in its frame's iteration
  std::vector<int> exit_slot_;  // per Exit node: its slot in the parent frame
  std::vector<int> index_in_frame_;  // per Enter / Exit / NextIteration: its index in the frame's list
  std::vector<char> fed_;
  std::unordered_map<std::string, int> child_by_key_;  // "<parent>/<frame_name>" -> frame
};

}  // namespace graphrun
