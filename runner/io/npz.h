// A reader for numpy's .npz archives, for --feeds FILE.npz: a zip archive
// with one .npy file per array, stored (np.savez) or deflated
// (np.savez_compressed). The zip format is left to libzip.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

struct NpzArray {
  std::string name;  // the member's name without ".npy", as np.load keys it
  Tensor value;
  // Why the member cannot be used ("'x': not an .npy file"), else "": kept
  // for the caller to report after naming the placeholder, as graphrun does.
  std::string error;
  bool over_limit = false;  // the error is GRAPHDEF_MAX_TENSOR_BYTES's (a run failure, exit 4)
  std::string string_descr;  // numpy's dtype of a string array ("|S5"), else ""
};

// Every array in the archive, in the archive's order; each member is read as
// read_npy reads a file. Throws Error for an unreadable archive; a damaged
// member (libzip checks every member's CRC) or one that is not an .npy file
// has its `error` set instead.
std::vector<NpzArray> read_npz(const std::string& path);

}  // namespace graphrun
