// fuzz-savedmodel: SavedModel directories (savedmodel_harness.cc), mutated
// mostly in saved_model.pb (signatures, meta graphs, graphs, functions,
// object graphs), sometimes in its checkpoint.
#include "savedmodel_input.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return graphrun_fuzz::mutate_saved_model_input(data, size, max_size, seed, {/*proto=*/65, /*index=*/15, /*shard=*/5});
}
