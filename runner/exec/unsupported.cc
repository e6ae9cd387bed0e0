#include "exec/unsupported.h"

#include <map>
#include <utility>

#include "core/errors.h"

namespace graphrun {

namespace {

struct ControlFlow {
  std::vector<std::string> ops;
  const char* words;
};

// Kept in step with graphdef/ops/unsupported.py, so both runners say the same.
const std::vector<ControlFlow>& control_flow() {
  static const std::vector<ControlFlow> kinds = {
      {{"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"},
       "a TF1 while-loop (Enter/Exit/NextIteration/LoopCond)"},
      {{"Switch", "RefSwitch", "Merge", "RefMerge"}, "a TF1 cond (Switch/Merge)"},
      {{"If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase", "PartitionedCall",
        "StatefulPartitionedCall", "For", "RemoteCall", "SymbolicGradient"},
       "TF2 functional control flow or function calls (If/While/PartitionedCall)"},
  };
  return kinds;
}

// The resource an op type works on that only TensorFlow's runtime holds, or "".
std::string resource_of(const std::string& op) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> resources = {
      {{"Queue"}, "a TensorFlow queue"},
      {{"Reader"}, "a TensorFlow reader"},
      {{"HashTable", "LookupTable", "InitializeTable", "MutableHashTable", "MutableDenseHashTable"},
       "a TensorFlow lookup table"},
      {{"Iterator", "Dataset"}, "a tf.data iterator"},
  };
  for (const auto& [words, resource] : resources) {
    for (const std::string& word : words) {
      if (op.find(word) != std::string::npos) return resource;
    }
  }
  return "";
}

// Who cannot hold tensors of `dtype`: graphdef (both runtimes, as graphrun
// words it) unless Python's graphrun holds them and only this runtime lacks them.
std::string who_cannot_hold(const std::string& dtype) {
  const bool python_holds = dtype == "half" || dtype == "variant";
  return python_holds ? "graphrun-cc" : "graphdef";
}

std::string first_and_more(const std::vector<std::string>& names) {
  std::string text = names[0];
  if (names.size() > 1) text += " and " + std::to_string(names.size() - 1) + " more";
  return text;
}

}  // namespace

std::vector<int> needed_unsupported(const Graph& graph, const std::vector<int>& runs,
                                    const std::vector<Endpoint>& fetches, const FeedMap& feeds) {
  std::vector<char> seen(graph.size(), 0);
  std::vector<int> stack = runs;
  for (const Endpoint& fetch : fetches) stack.push_back(fetch.node);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (seen[i] || feeds.count(i)) continue;
    seen[i] = 1;
    const GraphNode& node = graph.node(i);
    for (const Endpoint& input : node.inputs) stack.push_back(input.node);
    for (int control : node.control_inputs) stack.push_back(control);
  }
  std::vector<int> found;
  for (int i = 0; i < graph.size(); ++i) {
    if (seen[i] && graph.node(i).unsupported_itself()) found.push_back(i);
  }
  return found;
}

std::string describe_unsupported(const Graph& graph, const std::vector<int>& nodes) {
  std::vector<std::string> op_order;  // first-appearance order
  std::map<std::string, std::vector<std::string>> by_op;
  std::vector<std::string> foreign_order;
  std::map<std::string, std::vector<std::string>> by_dtype;
  for (int i : nodes) {
    const GraphNode& node = graph.node(i);
    if (node.support == GraphNode::Support::kMissingOp) {
      const std::string op = node.op().empty() ? "an empty op type" : node.op();
      if (by_op[op].empty()) op_order.push_back(op);
      by_op[op].push_back(node.name());
    } else if (node.foreign_dtype == "string") {
      // graphrun-cc holds strings; this op's kernel just has no string path
      const std::string op = node.op() + " with dtype string";
      if (by_op[op].empty()) op_order.push_back(op);
      by_op[op].push_back(node.name());
    } else {
      if (by_dtype[node.foreign_dtype].empty()) foreign_order.push_back(node.foreign_dtype);
      by_dtype[node.foreign_dtype].push_back("'" + node.name() + "' (" + node.op() + ")");
    }
  }
  std::vector<std::string> parts;
  for (const ControlFlow& kind : control_flow()) {
    for (const std::string& op : kind.ops) {
      if (by_op.count(op)) {
        parts.push_back(std::string("this graph contains ") + kind.words + ", which graphdef cannot run yet");
        break;
      }
    }
  }
  std::vector<std::string> resource_order;
  std::map<std::string, std::vector<std::string>> by_resource;
  for (const std::string& op : op_order) {
    const std::string resource = resource_of(op);
    if (resource.empty()) continue;
    if (by_resource[resource].empty()) resource_order.push_back(resource);
    by_resource[resource].push_back(op + " ('" + by_op[op][0] + "')");
  }
  for (const std::string& resource : resource_order) {
    const auto& listed = by_resource[resource];
    std::string text;
    for (std::size_t k = 0; k < listed.size(); ++k) text += (k ? ", " : "") + listed[k];
    parts.push_back(text + (listed.size() == 1 ? " needs " : " need ") + resource +
                    ", which exists only inside TensorFlow's runtime; feed the tensors it would produce instead");
  }
  if (!op_order.empty()) {
    std::string text = "no kernel for ";
    for (std::size_t k = 0; k < op_order.size(); ++k) {
      text += (k ? ", " : "") + op_order[k] + " (" + first_and_more(by_op[op_order[k]]) + ")";
    }
    parts.push_back(text);
  }
  for (const std::string& dtype : foreign_order) {
    parts.push_back((parts.empty() ? "" : "and ") + dtype + " tensors, which " + who_cannot_hold(dtype) +
                    " cannot hold: " + first_and_more(by_dtype[dtype]));
  }
  std::string line;
  for (std::size_t k = 0; k < parts.size(); ++k) line += (k ? "; " : "") + parts[k];
  return line;
}

void check_supported(const Graph& graph, const std::vector<int>& runs, const std::vector<Endpoint>& fetches,
                     const FeedMap& feeds) {
  const std::vector<int> found = needed_unsupported(graph, runs, fetches, feeds);
  if (!found.empty()) throw UnsupportedError(graph.source() + ": " + describe_unsupported(graph, found));
}

}  // namespace graphrun
