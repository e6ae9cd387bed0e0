// The SavedModel targets' input: saved_model.pb, variables/variables.index
// and variables/variables.data-00000-of-00001, as three sections
// (sections.h), written into a directory for the readers; and the mutations
// of each part (savedmodel_mutations.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "random.h"

namespace graphrun_fuzz {

enum SavedModelPart { kSavedModelProto, kVariablesIndex, kVariablesShard, kSavedModelParts };

// The directory holding the input's files (the same one for every input).
std::string write_saved_model(const std::vector<std::string>& parts);

// How often a mutation goes to each part, in percent: the proto, the index,
// the shard; the rest goes to libFuzzer's byte mutation of one part.
struct PartWeights {
  int proto, index, shard;
};

// Mutates the input in place, as LLVMFuzzerCustomMutator does.
size_t mutate_saved_model_input(uint8_t* data, size_t size, size_t max_size, unsigned seed, PartWeights weights);

}  // namespace graphrun_fuzz
