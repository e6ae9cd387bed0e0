// Feed values for the fuzz harness: good random ones through --random and
// --shape, and hostile ones (wrong dtype and rank, NaN, empty, ragged JSON,
// .npy files whose header lies or holds pickled objects) through --feed, so
// each run also exercises the CLI's feed checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphrun_fuzz {

// Writes the hostile .npy files into a fresh temporary directory, once.
void write_hostile_npy_files();

// The hostile feed values, as --feed takes them after "NAME=": JSON text, or
// "@path" for one of the .npy files.
const std::vector<std::string>& hostile_feed_values();

}  // namespace graphrun_fuzz
