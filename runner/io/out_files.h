// --out DIR: one .npy file per fetched tensor, named as graphrun names it
// ('/', ':', '\' and '>' in the tensor name become '_'), and the lines (or
// JSON) graphrun prints about them instead of the values.
#pragma once

#include <string>
#include <vector>

#include "io/format.h"

namespace graphrun {

// Creates DIR (and its parents), writes every result and returns what to
// print. Two tensors mapping to one file are refused before anything is
// written. Throws UsageError in graphrun's words.
std::string write_out_files(const std::string& directory, const std::vector<FetchResult>& results, bool json);

}  // namespace graphrun
