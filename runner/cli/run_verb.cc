// The run verb: feeds in, the --run targets executed, the fetched tensors out
// (printed, or saved under --out).
#include "io/format.h"
#include "cli/invocation.h"
#include "io/out_files.h"
#include "cli/prepare.h"
#include "io/stdout.h"
#include "cli/verbs.h"

namespace graphrun {

int run_verb(const Options& options) {
  write_stdout(run_prepared(prepare(options), options));
  return kExitOk;
}

std::vector<FetchResult> compute_fetches(const Prepared& prepared, const Options& options) {
  Work work;
  work.runs = prepared.runs;
  work.steps = options.steps;
  for (const Fetch& fetch : prepared.fetches) work.fetches.push_back(fetch.endpoint);
  const std::vector<TensorPtr> values = execute(*prepared.graph, prepared.feeds, work);

  std::vector<FetchResult> results;
  for (std::size_t i = 0; i < prepared.fetches.size(); ++i) results.push_back({prepared.fetches[i].name, values[i]});
  return results;
}

std::string run_prepared(const Prepared& prepared, const Options& options) {
  const std::vector<FetchResult> results = compute_fetches(prepared, options);
  if (options.out_given) return write_out_files(options.out, results, options.json);
  return options.json ? format_json(results) : format_text(results);
}

}  // namespace graphrun
