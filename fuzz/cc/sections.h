// Inputs made of several files (a SavedModel's saved_model.pb and variables,
// a GraphDef and its weights file): each section is a 4-byte little-endian
// length and that many bytes. The files are written into a directory of the
// process's own, as the readers take paths, and rewritten for each input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrun_fuzz {

// `count` sections; a length past the end takes what is left, missing
// sections are empty.
std::vector<std::string> split_sections(const uint8_t* data, size_t size, size_t count);
std::string join_sections(const std::vector<std::string>& sections);

// A fresh temporary directory, made once per process.
const std::string& scratch_dir();

// Writes `bytes` to `path`, or removes `path` when `bytes` is empty (an
// empty section stands for a missing file).
void put_file(const std::string& path, const std::string& bytes);

}  // namespace graphrun_fuzz
