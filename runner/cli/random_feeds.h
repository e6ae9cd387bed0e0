// --random [--seed N] and --shape NAME=D,...: values for the placeholders a
// run needs and nobody fed, bit for bit the ones graphrun makes (the
// generator is written out in graphdef/framework/random_feeds.py):
//   stream  = splitmix64(seed XOR fnv1a64(name))
//   word[i] = splitmix64(stream + (i + 1) * 0x9E3779B97F4A7C15)
// floats (p significand bits) (word >> (64 - p)) * 2^(1-p) - 1, integers
// ((word >> 32) * 10) >> 32, bools word >> 63.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "exec/executor.h"
#include "graph/graph.h"

namespace graphrun {

// Python's repr() of a plain string, for the messages that quote one.
std::string quoted(const std::string& text);

// graphdef.feeds.find_placeholder: the node of placeholder `name` ("x" or
// "x:0"). Throws UsageError in its words ("cannot feed 'y': the graph has no
// node 'y'; the graph's placeholders: ...").
int find_placeholder(const Graph& graph, const std::string& name);

// The random value of placeholder `name`. Throws Error for a dtype without a rule.
Tensor random_tensor(uint64_t seed, const std::string& name, DataType dtype, const Shape& shape);

// With --random, adds a value to `feeds` for every Placeholder that the
// `runs` targets and the `fetches` need and that is still unfed, in file
// order, shaped by --shape or its static shape. Checks every --shape first
// (as graphrun does: the form, the placeholder, its fit; then that --random
// is given; then that the placeholder is not fed). Throws UsageError in
// graphrun's words.
void add_random_feeds(const Graph& graph, const Options& options, const std::vector<int>& runs,
                      const std::vector<Endpoint>& fetches, FeedMap& feeds);

}  // namespace graphrun
