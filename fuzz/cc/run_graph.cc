// What every target does with a graph once its reader has made one: the run
// verb's path (inspect's shape inference, prepare, execute, format), with
// feeds and fetches picked by a hash of the input. See run_graph.h.
#include "run_graph.h"

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "cli/prepare.h"
#include "cli/verbs.h"
#include "exec/fetches.h"
#include "graph/shape_inference.h"
#include "hostile_feeds.h"

using namespace graphrun;

namespace graphrun_fuzz {

namespace {

constexpr int64_t kMaxFormattedElements = 100000;

}  // namespace

uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 0x100000001b3ull;
  return hash;
}

namespace {

// A --shape value for a placeholder with unknown dims ("" when it needs none).
std::string random_shape(const GraphNode& node, uint64_t& bits) {
  const graphdef::TensorShapeProto& shape = node.kernel->attr(*node.def, "shape").shape();
  if (shape.unknown_rank()) return std::to_string(1 + bits % 3);
  std::string text;
  bool unknown = false;
  for (const auto& dim : shape.dim()) {
    int64_t size = dim.size();
    if (size < 0) {
      unknown = true;
      size = 1 + static_cast<int64_t>((bits >>= 2) % 3);
    }
    text += (text.empty() ? "" : ",") + std::to_string(size);
  }
  return unknown ? text : "";
}

Options make_options(const Graph& graph, uint64_t bits) {
  Options options;
  options.model = "fuzz.pb";
  options.random = true;
  options.seed = bits & 7;
  options.json = (bits >> 3) & 1;
  const int mode = static_cast<int>((bits >> 4) % 5);
  bits >>= 8;
  const std::vector<std::string>& hostile = hostile_feed_values();
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    if (!node.kernel->is_feedable()) continue;
    if ((mode == 2 || mode == 3) && !hostile.empty() && (bits & 1)) {
      // Mode 2: one hostile value per placeholder (most are refused as exit 2;
      // the ones that fit reach the kernels with NaN, empty or extreme values).
      options.feeds.push_back(node.name() + "=" + hostile[(bits >> 1) % hostile.size()]);
      bits = bits * 6364136223846793005ull + 1442695040888963407ull;
      continue;
    }
    const std::string shape = random_shape(node, bits);
    if (!shape.empty()) options.shapes.push_back(node.name() + "=" + shape);
  }
  if (mode == 0 || mode == 2) {
    // Every output of (at most 64) nodes, so intermediate values are formatted too.
    for (int i = 0, fetched = 0; i < graph.size() && fetched < 64; ++i) {
      const int outputs = static_cast<int>(graph.node(i).output_dtypes.size());
      for (int k = 0; k < outputs && k < 4; ++k, ++fetched) {
        options.fetches.push_back(graph.node(i).name() + ":" + std::to_string(k));
      }
    }
  } else if (mode == 4) {
    // Nodes run for their effects (initializers, training steps), twice.
    for (int i = 0; i < graph.size() && options.runs.size() < 8; ++i) {
      if (graph.node(i).output_dtypes.empty() || graph.node(i).op().rfind("Assign", 0) == 0 ||
          graph.node(i).op().rfind("Apply", 0) == 0) {
        options.runs.push_back(graph.node(i).name());
      }
    }
    if (!options.runs.empty()) options.steps = 2;
  }
  return options;  // modes 1 and 3: the default fetches
}

}  // namespace

Outcome classify(const ExitError& error, const std::string& input) {
  const std::string message = error.what();
  // The runner's own "internal error" (a kernel bug, an escaped exception);
  // not when the words come from the input, as part of a name it echoes.
  if (message.find("internal error") != std::string::npos && input.find("internal error") == std::string::npos) {
    finding("internal error", message);
  }
  // GRAPHRUN_FUZZ_VERBOSE=1 prints every clean error, to see where mutated
  // inputs stop (tuning the mutator).
  static const bool verbose = std::getenv("GRAPHRUN_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "clean error %d: %.200s\n", static_cast<int>(error.code()), message.c_str());
  switch (error.code()) {
    case kExitUsage: return Outcome::kUsage;
    case kExitModel: return Outcome::kModel;
    case kExitRun: return Outcome::kRun;
    default: finding("unexpected exit code", std::to_string(error.code()) + ": " + message);
  }
}

Outcome run_graph(std::unique_ptr<const Graph> graph, uint64_t bits) {
  infer_shapes(*graph);  // graphrun-cc inspect's analysis
  const Options options = make_options(*graph, bits);
  const Prepared prepared = prepare(std::move(graph), options);
  // run_prepared's two halves; the values are formatted only when small:
  // printing millions of numbers is slow, legitimate work, not a hang.
  const std::vector<FetchResult> results = compute_fetches(prepared, options);
  int64_t elements = 0;
  for (const FetchResult& result : results) {
    int64_t printed_items = 1;  // an empty [N, 0] still prints N "[]"
    for (int64_t dim : result.value->shape()) printed_items *= dim > 1 ? dim : 1;
    elements += printed_items;
  }
  if (elements <= kMaxFormattedElements) {
    const std::string printed = options.json ? format_json(results) : format_text(results);
    if (printed.empty() && !results.empty()) finding("empty output", "fetches printed nothing");
  }
  return Outcome::kOk;
}

void init_harness() {
  // Keep every single tensor small enough that a run cannot reach
  // -rss_limit_mb legitimately (nor spend the -timeout on legitimate work
  // over huge tensors); a tensor past this must be refused cleanly. 16 MiB:
  // at 64 MiB a broadcast LogicalAnd to [64, 10^6], fetched with its twin,
  // ran past the fuzzing timeout under ASan at -O1.
  setenv("GRAPHDEF_MAX_TENSOR_BYTES", "16777216", /*overwrite=*/0);
  // A loop whose condition stays true runs to the iteration bound: kept small, as tensors are, so
  // that their product fits the timeout (10^4 iterations of adds over a 16 MiB tensor took
  // minutes under ASan).
  setenv("GRAPHDEF_MAX_WHILE_ITERATIONS", "16", /*overwrite=*/0);
  google::protobuf::SetLogHandler(nullptr);
  write_hostile_npy_files();
  report_at_exit();
}

}  // namespace graphrun_fuzz
