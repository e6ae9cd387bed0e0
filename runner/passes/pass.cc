#include "passes/pass.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "io/format.h"

namespace graphrun {

namespace {

std::vector<GraphPass>& registered_passes() {
  // Function-local so it exists before the first registration.
  static std::vector<GraphPass> passes;
  return passes;
}

}  // namespace

bool GraphPassRegistry::add(GraphPass pass) {
  registered_passes().push_back(std::move(pass));
  return true;
}

std::vector<GraphPass> GraphPassRegistry::in_order() {
  std::vector<GraphPass> passes = registered_passes();
  // Static initializers register in link order; the rank (then the name)
  // fixes the order whatever the link order is.
  std::sort(passes.begin(), passes.end(), [](const GraphPass& a, const GraphPass& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.name < b.name;
  });
  return passes;
}

const std::vector<std::vector<StaticShape>>& PassContext::shapes(const Graph& graph) const {
  if (!shapes_ || shapes_of_ != &graph) {
    shapes_ = std::make_shared<const std::vector<std::vector<StaticShape>>>(infer_shapes(graph));
    shapes_of_ = &graph;
  }
  return *shapes_;
}

bool optimization_enabled() {
  const char* value = std::getenv("GRAPHRUN_CC_OPTIMIZE");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

std::unique_ptr<const Graph> run_graph_passes(std::unique_ptr<const Graph> graph, const PassContext& context,
                                              PassReport* report) {
  const bool enabled = optimization_enabled();
  if (report) {
    report->enabled = enabled;
    report->nodes_before = report->nodes_after = graph->size();
  }
  if (!enabled) return graph;
  context.forget_shapes();  // of another graph, which may have lived at the same address
  for (const GraphPass& pass : GraphPassRegistry::in_order()) {
    context.counts.clear();
    std::unique_ptr<graphdef::GraphDef> rewritten;
    try {
      rewritten = pass.run(*graph, context);
    } catch (const std::exception&) {
      // A pass that cannot finish (out of memory on a huge model) changes
      // nothing: the graph it was given is still valid and runs as is.
      continue;
    }
    if (!rewritten) continue;
    context.forget_shapes();
    const int before = graph->size();
    try {
      graph = std::make_unique<const Graph>(graph->source(), std::move(rewritten), true);
    } catch (const ModelError& error) {
      // The input graph was valid, so this is the pass's fault.
      throw ModelError(std::string("internal error: graph pass ") + pass.name + " made an invalid graph (" +
                       error.what() + "); GRAPHRUN_CC_OPTIMIZE=0 or --no-optimize runs the model without passes");
    }
    if (report) report->steps.push_back({pass.name, before, graph->size(), std::move(context.counts)});
    context.counts.clear();
  }
  context.forget_shapes();
  if (report) report->nodes_after = graph->size();
  return graph;
}

namespace {

// "270 nodes folded, 3 nodes removed", or the node count change.
std::string describe_step(const PassReport::Step& step) {
  std::string text;
  for (const auto& [what, count] : step.counts) text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  if (text.empty()) text = std::to_string(step.nodes_before) + " -> " + std::to_string(step.nodes_after) + " nodes";
  return text;
}

}  // namespace

std::string PassReport::summary() const {
  if (!enabled) return "optimize: off";
  if (steps.empty()) return "optimize: " + std::to_string(nodes_before) + " nodes, nothing to do";
  std::string text = "optimize: " + std::to_string(nodes_before) + " nodes -> " + std::to_string(nodes_after) + " (";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    text += (i ? "; " : "") + steps[i].pass + ": " + describe_step(steps[i]);
  }
  return text + ")";
}

std::string PassReport::json() const {
  std::string out = std::string("{\"enabled\": ") + (enabled ? "true" : "false") +
                    ", \"nodes_before\": " + std::to_string(nodes_before) +
                    ", \"nodes_after\": " + std::to_string(nodes_after) + ", \"passes\": [";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    out += std::string(i ? ", " : "") + "{\"pass\": ";
    append_json_string(out, step.pass);
    out += ", \"nodes_before\": " + std::to_string(step.nodes_before) +
           ", \"nodes_after\": " + std::to_string(step.nodes_after) + ", \"counts\": {";
    for (std::size_t k = 0; k < step.counts.size(); ++k) {
      out += k ? ", " : "";
      append_json_string(out, step.counts[k].first);
      out += ": " + std::to_string(step.counts[k].second);
    }
    out += "}}";
  }
  return out + "]}";
}

}  // namespace graphrun
