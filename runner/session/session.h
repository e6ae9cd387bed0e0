// A TF1 session in C++: a graph that may grow after the session starts, the
// values of its variables (VariableV2) across runs, and one plan per
// (feeds, fetches, targets), each optimized by the graph passes keeping what
// it feeds, fetches and runs. graphrun_c.h's graphrun_session_* functions are
// a C face on this class; its callers serialize calls on one session.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "exec/executor.h"
#include "exec/fetches.h"
#include "exec/variable_store.h"
#include "graph.pb.h"
#include "graph/graph.h"

namespace graphrun {

// One tensor as a C caller hands it over: nothing is copied until needed.
struct BorrowedFeed {
  std::string name;
  std::string dtype;  // numpy's name
  Shape shape;
  const void* data = nullptr;
};

// The bytes of a binary GraphDef (`source` names it in messages). Any
// well-formed graph parses, an empty one included; ops without a kernel fail
// only the runs that need them. Throws ModelError.
std::unique_ptr<graphdef::GraphDef> parse_graph_bytes(const std::string& source, const void* data, std::size_t size);

class Session {
 public:
  // Validates `graph` (ModelError); with `optimize` (and GRAPHRUN_CC_OPTIMIZE
  // not "0") each plan runs the graph passes.
  Session(std::unique_ptr<graphdef::GraphDef> graph, bool optimize);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Adds the nodes and functions of `more`, each replacing the one of its
  // name if the graph has it: a whole newer GraphDef, or only what was added
  // since (as TensorFlow's TF_ExtendGraph takes). Plans are made anew; a
  // variable keeps its value when the new graph has a VariableV2 of that
  // name and dtype. Throws ModelError, leaving the session as it was.
  void extend(const graphdef::GraphDef& more);

  // Whether a run could take these feeds and give these fetches and
  // targets: throws UsageError (an unknown name, a feed this runtime cannot
  // take) or UnsupportedError (ops without a kernel, named).
  void check(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
             const std::vector<std::string>& targets) const;

  // TF1 Session.run: every target and fetch in one execution, each node once.
  // Feeds are read in place for the call; the values returned (one per fetch)
  // and the variables never hold the caller's memory. Throws UsageError,
  // UnsupportedError, RunError.
  std::vector<TensorPtr> run(const std::vector<BorrowedFeed>& feeds, const std::vector<std::string>& fetches,
                             const std::vector<std::string>& targets);

  // nullptr while it has no value. Throws UsageError when the graph has no
  // VariableV2 of that name.
  TensorPtr read_variable(const std::string& name) const;
  // Copies the value; its dtype must be the variable's. Throws UsageError.
  void assign_variable(const BorrowedFeed& value);

  const Graph& graph() const { return *graph_; }
  std::size_t cached_plans() const { return plans_.size(); }

 private:
  struct Request;
  struct Plan;

  Request resolve(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                  const std::vector<std::string>& targets) const;
  Plan& plan_for(const Request& request);
  std::unique_ptr<Plan> make_plan(const Request& request) const;
  const GraphNode& variable_node(const std::string& name) const;
  void own_borrowed_values();

  std::unique_ptr<const Graph> graph_;
  bool optimize_ = true;
  VariableStore variables_;
  // A client asking ever new questions must not grow this without end.
  static constexpr std::size_t kMaxPlans = 32;
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace graphrun
