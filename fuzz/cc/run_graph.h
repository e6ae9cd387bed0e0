// The harness every target shares: its start-up, the run verb's path over a
// loaded graph, and the classification of each execution (outcomes.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "core/errors.h"
#include "graph/graph.h"
#include "outcomes.h"

namespace graphrun_fuzz {

// The limits that keep legitimate work small (16 MiB tensors, 10^4 loop
// iterations), protobuf's log quiet, the hostile .npy files written, and the
// counts printed at exit.
void init_harness();

uint64_t fnv1a(const uint8_t* data, size_t size);

// Runs `graph` as graphrun-cc run does (after inspect's shape inference),
// with feeds, fetches and output format picked by `bits`.
Outcome run_graph(std::unique_ptr<const graphrun::Graph> graph, uint64_t bits);

// An ExitError's class; a finding when it says "internal error" (unless
// `input` holds those words, echoed in a name) or has another exit code.
Outcome classify(const graphrun::ExitError& error, const std::string& input);

// Runs `step` (returning an Outcome): an ExitError is classified, any other
// exception is a finding.
template <class Step>
Outcome guarded(const std::string& input, Step&& step) {
  try {
    return step();
  } catch (const graphrun::ExitError& error) {
    return classify(error, input);
  } catch (const std::bad_alloc&) {
    finding("bad_alloc", "an allocation failed outside every size check");
  } catch (const std::exception& error) {
    finding("uncaught exception", error.what());
  }
}

}  // namespace graphrun_fuzz
