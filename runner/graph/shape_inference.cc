#include "graph/shape_inference.h"

namespace graphrun {

std::vector<std::vector<StaticShape>> infer_shapes(const Graph& graph) {
  // Kahn's order over data inputs (validation has ruled out cycles other
  // than while loops' back edges, which are skipped).
  const int n = graph.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    for (const Endpoint& input : graph.node(i).inputs) {
      if (is_loop_back_edge(graph.node(input.node), graph.node(i))) continue;
      ++pending[i];
      consumers[input.node].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<std::vector<StaticShape>> shapes(n);
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    const GraphNode& node = graph.node(i);
    shapes[i].resize(node.output_dtypes.size());
    if (!shapes[i].empty() && node.kernel->shape_rule()) {
      ShapeContext context(graph, node, shapes, shapes[i]);
      node.kernel->shape_rule()(context);
    }
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  return shapes;
}

}  // namespace graphrun
