#include "cli/invocation.h"

#include "exec/variable_store.h"

namespace graphrun {

std::vector<TensorPtr> execute(const Graph& graph, const FeedMap& feeds, const Work& work) {
  std::vector<Executor> runs;
  runs.reserve(work.runs.size());
  for (int target : work.runs) runs.emplace_back(graph, std::vector<Endpoint>{}, std::vector<int>{target}, feeds);
  const Executor fetches(graph, work.fetches, {}, feeds);

  VariableStore variables;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const int64_t times = i + 1 == runs.size() ? work.steps : 1;
    for (int64_t step = 0; step < times; ++step) runs[i].run(feeds, variables);
  }
  return fetches.run(feeds, variables);
}

}  // namespace graphrun
