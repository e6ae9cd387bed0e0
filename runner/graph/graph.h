// A loaded, fully validated graph: the GraphDef plus, for every node, its
// kernel, its resolved inputs and its output dtypes.
#pragma once

#include <any>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/dtype.h"
#include "graph.pb.h"
#include "graph/kernel.h"

namespace graphrun {

class FunctionLibrary;

struct Endpoint {
  int node = -1;
  int output = 0;
};

struct GraphNode {
  const graphdef::NodeDef* def = nullptr;
  const Kernel* kernel = nullptr;
  std::vector<Endpoint> inputs;     // data inputs in the op's order, ref inputs included
  std::vector<const InputSpec*> input_specs;  // the kernel's arg behind each of `inputs`
  std::vector<int> control_inputs;  // "^node" dependencies
  std::vector<DataType> output_dtypes;
  std::any state;  // what the kernel's prepare step made of the attrs, if it has one
  // What graphrun-cc cannot run still loads; a run that needs it is refused
  // (exec/unsupported.h). kMissingOp: no kernel for the op type; kForeignDtype:
  // an attr holds a dtype graphrun-cc has no type for (string, variant,
  // resource...); kDependent: reads an output of such a node, so its input
  // dtypes cannot be checked. Their outputs are DT_INVALID.
  enum class Support { kRunnable, kMissingOp, kForeignDtype, kDependent };
  Support support = Support::kRunnable;
  std::string foreign_dtype;  // kForeignDtype: the dtype's name
  bool runnable() const { return support == Support::kRunnable; }
  bool unsupported_itself() const { return support == Support::kMissingOp || support == Support::kForeignDtype; }
  // A Const whose attr 'value' passed validation. A Const of a foreign dtype
  // is unsupported and may lack 'value' altogether: never read it.
  bool is_valid_const() const { return runnable() && op() == "Const"; }

  const InputSpec& input_spec(int i) const { return *input_specs[i]; }
  const std::string& name() const { return def->name(); }
  const std::string& op() const { return def->op(); }
  // "node 'mm' (MatMul)", the prefix of every message about this node.
  std::string describe() const { return "node '" + name() + "' (" + op() + ")"; }
};

// A while loop's back edge: a NextIteration feeding a Merge (the next
// iteration's value of a loop variable). Graph validation and planning
// treat it as no dependency; the frame executor carries it.
inline bool is_loop_back_edge(const GraphNode& producer, const GraphNode& consumer) {
  return producer.op() == "NextIteration" && consumer.op() == "Merge";
}

class Graph {
 public:
  // Reads a binary GraphDef, or text format when the path ends in ".pbtxt",
  // and validates it. Throws ModelError("<path>: <reason>").
  static std::unique_ptr<const Graph> load(const std::string& path, const std::string& signature = "");

  // load() for a file's bytes already in memory; `path` names the source in
  // messages and picks the format as load() does.
  static std::unique_ptr<const Graph> parse(const std::string& path, const std::string& bytes);

  // The GraphDef at `path`, parsed but not validated (graphrun-cc inspect
  // describes models it cannot run). Throws ModelError like load().
  static std::unique_ptr<graphdef::GraphDef> read(const std::string& path, const std::string& signature = "");

  // Validates an in-memory GraphDef; `source` prefixes error messages. Every
  // function its nodes call is instantiated from its library and validated too.
  // `internal_ops` admits the ops only graph passes write (Kernel::internal).
  Graph(std::string source, std::unique_ptr<graphdef::GraphDef> proto, bool internal_ops = false);
  // A function body's graph, whose calls go to `library` (which checks them).
  Graph(std::string source, std::unique_ptr<graphdef::GraphDef> proto, const FunctionLibrary* library);
  ~Graph();

  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& source() const { return source_; }
  const graphdef::GraphDef& def() const { return *proto_; }
  int size() const { return static_cast<int>(nodes_.size()); }
  const GraphNode& node(int i) const { return nodes_[i]; }
  int find(const std::string& name) const;  // -1 when there is no such node
  // The functions this graph's If, While and call nodes run (never null).
  const FunctionLibrary& functions() const { return *library_; }

 private:
  // graph_validation.cc: each step throws ModelError on the first problem it
  // finds (unknown ops are all gathered into one message).
  void validate();
  void check_names();
  void find_kernels();
  void check_attrs();
  void resolve_inputs();
  void mark_dependents();
  void check_input_dtypes();
  void check_acyclic() const;
  [[noreturn]] void fail(const std::string& reason) const;

  std::string source_;
  std::shared_ptr<graphdef::GraphDef> proto_;  // shared with the large Consts' values (graph_validation.cc)
  bool internal_ops_ = false;
  std::vector<GraphNode> nodes_;
  std::unordered_map<std::string, int> index_;
  std::unique_ptr<FunctionLibrary> own_library_;  // the file's, in the top-level graph
  const FunctionLibrary* library_ = nullptr;
};

}  // namespace graphrun
