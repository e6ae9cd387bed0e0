// fuzz-graph's structure-aware mutation: nine times in ten the input is
// parsed as a GraphDef, changed in one to three ways a hostile or broken file
// would be (graph_mutations.h), and re-serialized, so the fuzzer spends its
// time past the protobuf parser, in graph validation and the kernels.
// Otherwise (or when the input does not parse) libFuzzer's byte-level
// mutation runs, which keeps the parser and the odd half-valid encodings
// covered too.
#include <cstring>
#include <string>

#include "graph.pb.h"
#include "graph_mutations.h"
#include "random.h"

using namespace graphrun_fuzz;

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Random random(seed);
  graphdef::GraphDef graph;
  if (random.chance(90) && graph.ParseFromArray(data, static_cast<int>(size))) {
    const int mutations = 1 + static_cast<int>(random.below(3));
    for (int i = 0; i < mutations; ++i) mutate_graph(graph, random);
    std::string bytes;
    if (serialize_deterministic(graph, bytes) && bytes.size() <= max_size) {
      std::memcpy(data, bytes.data(), bytes.size());
      return bytes.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
