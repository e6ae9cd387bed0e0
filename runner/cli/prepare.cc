#include "cli/prepare.h"

#include "cli/feeds.h"
#include "io/npz.h"
#include "cli/random_feeds.h"
#include "exec/run_targets.h"
#include "exec/unfed.h"
#include "core/errors.h"
#include "passes/pass.h"
#include "exec/unsupported.h"

namespace graphrun {

Prepared prepare(const Options& options) { return prepare(Graph::load(options.model, options.signature), options); }

Prepared prepare(std::unique_ptr<const Graph> loaded, const Options& options) {
  Prepared prepared;
  prepared.graph = std::move(loaded);
  const Graph& graph = *prepared.graph;
  prepared.feeds = parse_feeds(graph, options.feeds, options.feed_files);
  prepared.runs = resolve_run_targets(graph, options.runs);
  // Without --fetch, a plain run prints the graph's outputs; runs done for
  // their effects (training) print nothing unless asked.
  if (!options.fetches.empty()) prepared.fetches = resolve_fetches(graph, options.fetches);
  else if (options.runs.empty()) prepared.fetches = default_fetches(graph);
  std::vector<Endpoint> endpoints;
  for (const Fetch& fetch : prepared.fetches) endpoints.push_back(fetch.endpoint);
  check_supported(graph, prepared.runs, endpoints, prepared.feeds);
  add_random_feeds(graph, options, prepared.runs, endpoints, prepared.feeds);
  check_fed(graph, prepared.runs, endpoints, prepared.feeds);
  optimize(prepared, options.optimize);
  return prepared;
}

namespace {

int placeholder_node(const Graph& graph, std::string name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  return graph.find(name);
}

}  // namespace

std::string describe_feeds(const Prepared& prepared, const Options& options) {
  const Graph& graph = *prepared.graph;
  // graphrun lists the feeds in the order it gathered them: --feed, then each
  // archive's arrays, then the random values in file order.
  std::vector<std::pair<int, std::string>> listed;
  auto add = [&](int node, const std::string& source) {
    for (const auto& entry : listed) {
      if (entry.first == node) return;
    }
    if (prepared.feeds.count(node)) listed.emplace_back(node, source);
  };
  for (const std::string& argument : options.feeds) {
    add(placeholder_node(graph, argument.substr(0, argument.find('='))), "--feed");
  }
  for (const std::string& path : options.feed_files) {
    for (const NpzArray& array : read_npz(path)) add(placeholder_node(graph, array.name), "--feeds " + path);
  }
  for (int i = 0; i < graph.size(); ++i) add(i, "random (seed " + std::to_string(options.seed) + ")");
  if (listed.empty()) return "none";
  std::string text;
  for (const auto& [node, source] : listed) {
    const Tensor& value = *prepared.feeds.at(node);
    text += (text.empty() ? "" : ", ") + graph.node(node).name() + " " + dtype_name(value.dtype()) + " " +
            shape_string(value.shape()) + " " + source;
  }
  return text;
}

}  // namespace graphrun
