// graphrun-cc's verbs, each in its own file; main() picks one by Options::verb.
#pragma once

#include "cli.h"

namespace graphrun {

int run_verb(const Options& options);      // run_verb.cc
int inspect_verb(const Options& options);  // inspect.cc
int bench_verb(const Options& options);    // bench.cc

}  // namespace graphrun
