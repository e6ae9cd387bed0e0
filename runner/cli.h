// The command line:
//   graphrun-cc MODEL [--run TARGET]... [--steps N] [--feed NAME=VALUE]... [--feeds FILE.npz]...
//               [--fetch NAME]... [--json]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphrun {

struct Options {
  std::string model;
  std::vector<std::string> feeds;       // "NAME=VALUE"
  std::vector<std::string> feed_files;  // .npz archives, every array a feed
  std::vector<std::string> runs;        // "node" or "node:k", executed in order
  int64_t steps = 1;                    // how many times the last --run executes
  std::vector<std::string> fetches;     // "node" or "node:k"
  bool json = false;
  bool list_kernels = false;
  bool help = false;
  bool version = false;
};

// Flags take their value as the next argument or after '=' (--fetch=y).
// Throws UsageError.
Options parse_command_line(int argc, const char* const* argv);

std::string usage_text();

}  // namespace graphrun
