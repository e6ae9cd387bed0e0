// graphrun-cc's verbs, each in its own file; main() picks one by Options::verb.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "io/format.h"

namespace graphrun {

int run_verb(const Options& options);      // run_verb.cc

// The run verb after prepare(): executes the runs and fetches and returns
// what run_verb prints (or, with --out, writes the files and returns their
// listing). run_verb.cc; also driven in-process by the fuzz harness.
struct Prepared;
std::string run_prepared(const Prepared& prepared, const Options& options);
// Its first half: the fetched values, unformatted.
std::vector<FetchResult> compute_fetches(const Prepared& prepared, const Options& options);
int inspect_verb(const Options& options);  // inspect.cc
// A SavedModel's meta graphs and signatures, as saved_model_cli show --all (text) or one JSON document.
std::string saved_model_listing(const std::string& dir, bool json);  // inspect_saved_model.cc
int bench_verb(const Options& options);    // bench.cc

}  // namespace graphrun
