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
};

// Every array in the archive, in the archive's order; each member is read as
// read_npy reads a file. Throws Error for an unreadable or damaged archive
// (libzip checks every member's CRC) or a member that is not a .npy file.
std::vector<NpzArray> read_npz(const std::string& path);

}  // namespace graphrun
