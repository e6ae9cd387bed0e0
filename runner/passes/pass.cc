#include "passes/pass.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"

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

bool optimization_enabled() {
  const char* value = std::getenv("GRAPHRUN_CC_OPTIMIZE");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

std::unique_ptr<const Graph> run_graph_passes(std::unique_ptr<const Graph> graph, const PassContext& context) {
  if (!optimization_enabled()) return graph;
  for (const GraphPass& pass : GraphPassRegistry::in_order()) {
    std::unique_ptr<graphdef::GraphDef> rewritten = pass.run(*graph, context);
    if (!rewritten) continue;
    try {
      graph = std::make_unique<const Graph>(graph->source(), std::move(rewritten), true);
    } catch (const ModelError& error) {
      // The input graph was valid, so this is the pass's fault.
      throw ModelError(std::string("internal error: graph pass ") + pass.name + " made an invalid graph (" +
                       error.what() + "); GRAPHRUN_CC_OPTIMIZE=0 runs the model without passes");
    }
  }
  return graph;
}

}  // namespace graphrun
