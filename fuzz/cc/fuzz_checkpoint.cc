// fuzz-checkpoint: a SavedModel's V2 checkpoint (savedmodel_harness.cc) with
// its saved_model.pb left alone: the index's table, header and entries
// (dtypes, shapes, shards, offsets, sizes, checksums) and the shard's bytes.
#include "savedmodel_input.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return graphrun_fuzz::mutate_saved_model_input(data, size, max_size, seed, {/*proto=*/0, /*index=*/60, /*shard=*/25});
}
