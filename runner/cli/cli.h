// The command line:
//   graphrun-cc [run] MODEL [--run TARGET]... [--steps N] [feeds] [--fetch NAME]... [--json] [--out DIR]
//   graphrun-cc inspect MODEL [--json] [--no-optimize]
//   graphrun-cc bench MODEL [--warmup N] [--runs N | --duration S] [--profile] [--top K] [feeds]
//               [--fetch NAME]... [--json]
// where feeds are [--feed NAME=VALUE]... [--feeds FILE.npz]... [--random [--seed N]] [--shape NAME=D,..]...
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphrun {

struct Options {
  std::string verb = "run";             // run, inspect or bench (the first argument, if it is one)
  std::string model;
  std::string signature;                // --signature KEY of a SavedModel directory ("": serving_default)
  std::vector<std::string> feeds;       // "NAME=VALUE"
  std::vector<std::string> feed_files;  // .npz archives, every array a feed
  bool random = false;                  // --random: random values for the needed unfed placeholders
  uint64_t seed = 0;
  std::vector<std::string> shapes;      // --shape "NAME=D,D,..." for random values
  std::vector<std::string> runs;        // "node" or "node:k", executed in order
  int64_t steps = 1;                    // how many times the last --run executes
  std::vector<std::string> fetches;     // "node" or "node:k"
  bool json = false;
  bool optimize = true;                 // --no-optimize: run the file's graph as written (no graph passes)
  bool out_given = false;               // --out DIR: one .npy per fetch instead of values
  std::string out;
  // bench
  int64_t warmup = 10;
  int64_t bench_runs = 0;               // 0: not given
  double duration = 0;                  // 0: not given
  bool profile = false;
  int64_t top = 10;
  bool list_kernels = false;
  bool help = false;
  bool version = false;
};

// Flags take their value as the next argument or after '=' (--fetch=y).
// Each verb accepts only its own flags, as graphrun's do. Throws UsageError.
Options parse_command_line(int argc, const char* const* argv);

std::string usage_text(const std::string& verb = "run");

}  // namespace graphrun
