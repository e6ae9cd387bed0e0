// A reader for numpy's .npy files (format versions 1, 2 and 3), for --feed
// NAME=@file.npy and the members of --feeds archives. The header is parsed as
// data, never evaluated.
#pragma once

#include <string>

#include "core/tensor.h"

namespace graphrun {

// float16/32/64, int8/16/32/64, uint8/16/32/64 and bool, in either byte
// order and in C or Fortran order: everything numpy.load gives Python's
// graphrun as a numeric array. The tensor is in row-major order and native
// byte order; float16, which graphrun-cc has no tensors of, comes back as
// float32 (every float16 is exactly a float32), so converting it onward to the
// placeholder's dtype follows the same exact-conversion rule as other feeds.
// Throws Error for any other dtype or a malformed file.
// A fixed-width string array ('S' bytes or 'U' text) is a DT_STRING tensor
// (trailing NULs dropped, text as UTF-8, as numpy and graphrun read them);
// `string_descr`, when given, gets its numpy dtype ("|S5"), else "".
Tensor read_npy(const std::string& path, std::string* string_descr = nullptr);

// The same for a .npy file's bytes already in memory (an .npz member);
// `source` names it in error messages.
Tensor parse_npy(const std::string& bytes, const std::string& source, std::string* string_descr = nullptr);

}  // namespace graphrun
