#include "session/prepared.h"

#include "core/errors.h"

namespace graphrun {

void optimize(Prepared& prepared, bool enabled) {
  if (!enabled) {
    prepared.passes = PassReport{};
    prepared.passes.nodes_before = prepared.passes.nodes_after = prepared.graph->size();
    return;
  }
  // The caller resolved names against the file's graph, so messages
  // name what the user wrote; the passes then see which nodes must stay.
  const Graph& original = *prepared.graph;
  PassContext context;
  std::vector<std::pair<std::string, TensorPtr>> feeds;
  for (const auto& [node, value] : prepared.feeds) {
    context.fed.insert(original.node(node).name());
    feeds.emplace_back(original.node(node).name(), value);
  }
  std::vector<std::string> runs, fetched;
  for (int run : prepared.runs) runs.push_back(original.node(run).name());
  for (const Fetch& fetch : prepared.fetches) fetched.push_back(original.node(fetch.endpoint.node).name());
  context.fetched.insert(runs.begin(), runs.end());
  context.fetched.insert(fetched.begin(), fetched.end());
  prepared.graph = run_graph_passes(std::move(prepared.graph), context, &prepared.passes);
  // Node indices change with the graph; the names the context pinned stay.
  const Graph& graph = *prepared.graph;
  auto index = [&](const std::string& name) {
    const int node = graph.find(name);
    if (node < 0) throw ModelError(graph.source() + ": internal error: a graph pass removed node '" + name + "'");
    return node;
  };
  prepared.feeds.clear();
  for (const auto& [name, value] : feeds) prepared.feeds[index(name)] = value;
  for (std::size_t k = 0; k < runs.size(); ++k) prepared.runs[k] = index(runs[k]);
  for (std::size_t k = 0; k < fetched.size(); ++k) prepared.fetches[k].endpoint.node = index(fetched[k]);
}

}  // namespace graphrun
