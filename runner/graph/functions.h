// GraphDef.library: the functions that If, While and PartitionedCall nodes
// call, each instantiated once, at load, as a validated Graph of its own.
//
// A FunctionDef body names its inputs "arg" (an argument), "node:out_arg:i"
// (the i-th tensor of a node's output arg) or "^node". Instantiating writes
// the body out as a plain GraphDef: one Placeholder per argument and every
// input in "node:k" form, k counting through the op's output args (a kernel
// with several output args names them: Kernel::output_names).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph.pb.h"
#include "graph/graph.h"

namespace graphrun {

struct FunctionBody {
  std::string name;
  std::unique_ptr<const Graph> graph;
  std::vector<int> args;          // the Placeholder node of each argument
  std::vector<Endpoint> outputs;  // the tensor each result is
  std::vector<int> control;       // nodes run for their effects (control_ret)
};

// How deep function calls may nest: a run refuses the 65th nested call, and a
// library whose call graph holds a longer chain is refused at load.
constexpr int kMaxCallDepth = 64;

// The function calls, and the nodes those calls run, one file may ask for,
// counted through the call graph at load with their multiplicity.
constexpr uint64_t kMaxCalls = 1000000;

class FunctionLibrary {
 public:
  // `source` prefixes error messages; `proto` must outlive the library.
  FunctionLibrary(std::string source, const graphdef::FunctionDefLibrary& proto);
  ~FunctionLibrary();

  // Instantiates every function `root`'s nodes call, and every function
  // those call (iteratively: a function may call itself), checking each call
  // against the function's signature. Throws ModelError.
  // First, from the call graph alone, refuses calls nesting deeper than
  // kMaxCallDepth or asking for more than kMaxCalls calls or nodes.
  void instantiate_called(const Graph& root);

  // An instantiated function, or nullptr.
  const FunctionBody* find(const std::string& name) const;

 private:
  const FunctionBody& instantiate(const std::string& name, const std::string& where);
  void check_calls(const Graph& graph, std::vector<const FunctionBody*>& pending);
  void check_call_budget(const Graph& root) const;
  [[noreturn]] void fail(const std::string& reason) const;

  std::string source_;
  std::map<std::string, const graphdef::FunctionDef*> defs_;
  std::map<std::string, std::unique_ptr<FunctionBody>> bodies_;
};

}  // namespace graphrun
