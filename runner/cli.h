// The command line: graphrun-cc MODEL.pb [--feed NAME=VALUE]... [--fetch NAME]... [--json]
#pragma once

#include <string>
#include <vector>

namespace graphrun {

struct Options {
  std::string model;
  std::vector<std::string> feeds;    // "NAME=VALUE"
  std::vector<std::string> fetches;  // "node" or "node:k"
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
