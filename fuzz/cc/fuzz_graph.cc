// libFuzzer entry point: the input is a binary GraphDef, driven through the
// same functions graphrun-cc's run verb uses (Graph::parse, which validates;
// prepare(), which resolves feeds and fetches; compute_fetches() and the
// formatters, the two halves of run_prepared()), plus inspect's shape
// inference, and the C API's session (graphrun_session_create and _check)
// on the same bytes. Feeds are synthesized for the
// placeholders; which kind, and what is fetched, follows from a hash of the
// input so every input replays the same way.
//
// Each execution is classified: ok, or a clean error (an ExitError: the one
// "graphrun-cc: ..." line and exit code 2, 3 or 4 the CLI would give). Any
// other exception, or a message saying "internal error", is a finding and
// aborts; sanitizer reports, crashes, timeouts and allocations past
// -malloc_limit_mb are findings libFuzzer reports itself.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/errors.h"
#include "graph/graph.h"
#include "exec/fetches.h"
#include "run_graph.h"
#include "session/session.h"

using namespace graphrun;
using namespace graphrun_fuzz;

namespace {

// A session takes any well-formed GraphDef (an empty one too): it must load
// the bytes or refuse them with a clean error, and check its default fetches.
void check_session(const uint8_t* data, size_t size) {
  try {
    Session session(parse_graph_bytes("graph", data, size), /*optimize=*/true);
    std::vector<std::string> fetches;
    for (const Fetch& fetch : default_fetches(session.graph())) fetches.push_back(fetch.name);
    session.check({}, fetches, {});
  } catch (const ExitError&) {
  } catch (const std::bad_alloc&) {
    finding("bad_alloc", "a session's allocation failed outside every size check");
  } catch (const std::exception& error) {
    finding("uncaught exception in a session", error.what());
  }
}

Outcome execute(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  check_session(data, size);
  return guarded(bytes, [&] { return run_graph(Graph::parse("fuzz.pb", bytes), fnv1a(data, size)); });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  init_harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  count(execute(data, size));
  return 0;
}
