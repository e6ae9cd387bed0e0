#include "exec/unfed.h"

#include "graph/shape_pattern.h"

namespace graphrun {

std::vector<int> unfed_placeholders(const Graph& graph, const std::vector<int>& runs,
                                    const std::vector<Endpoint>& fetches, const FeedMap& feeds) {
  std::vector<char> seen(graph.size(), 0);
  std::vector<int> stack;
  auto visit = [&](int node) {
    if (!seen[node] && !feeds.count(node)) {
      seen[node] = 1;
      stack.push_back(node);
    }
  };
  for (int run : runs) visit(run);
  for (const Endpoint& fetch : fetches) visit(fetch.node);
  while (!stack.empty()) {
    const GraphNode& node = graph.node(stack.back());
    stack.pop_back();
    for (const Endpoint& input : node.inputs) visit(input.node);
    for (int control : node.control_inputs) visit(control);
  }
  std::vector<int> missing;
  for (int i = 0; i < graph.size(); ++i) {
    if (seen[i] && graph.node(i).op() == "Placeholder") missing.push_back(i);
  }
  return missing;
}

namespace {

void check(const Graph& graph, const std::vector<int>& runs, const std::vector<Endpoint>& fetches,
           const FeedMap& feeds) {
  const std::vector<int> missing = unfed_placeholders(graph, runs, fetches, feeds);
  if (missing.empty()) return;
  std::string listed;
  for (int i : missing) {
    const GraphNode& node = graph.node(i);
    listed += (listed.empty() ? "" : ", ") + node.name() + " (" + dtype_name(node.output_dtypes[0]) + ", " +
              pattern_string(node.kernel->attr(*node.def, "shape").shape()) + ")";
  }
  throw UsageError(std::string(missing.size() > 1 ? "placeholders" : "placeholder") + " not fed: " + listed +
                   "; use --feed NAME=VALUE, --feeds FILE.npz or --random");
}

}  // namespace

void check_fed(const Graph& graph, const std::vector<int>& runs, const std::vector<Endpoint>& fetches,
               const FeedMap& feeds) {
  for (int run : runs) check(graph, {run}, {}, feeds);
  check(graph, {}, fetches, feeds);
}

}  // namespace graphrun
