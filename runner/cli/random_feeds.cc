#include "cli/random_feeds.h"

#include <cmath>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "graph/input_name.h"
#include "core/int_text.h"
#include "io/npz.h"
#include "core/random_words.h"
#include "core/tensor_limit.h"
#include "graph/shape_pattern.h"
#include "exec/unfed.h"

namespace graphrun {

namespace {

template <class T>
void fill(Tensor& tensor, uint64_t stream) {
  T* data = tensor.data<T>();
  const int64_t n = tensor.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t word = random_word(stream, i);
    if constexpr (std::is_same_v<T, bool>) {
      data[i] = (word >> 63) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      constexpr int p = std::numeric_limits<T>::digits;  // 24 or 53 significand bits
      const double m = static_cast<double>(word >> (64 - p));
      data[i] = static_cast<T>(m * std::ldexp(1.0, 1 - p) - 1.0);  // exact in T
    } else {
      data[i] = static_cast<T>(((word >> 32) * 10) >> 32);
    }
  }
}

const graphdef::TensorShapeProto& declared_shape(const GraphNode& node) {
  return node.kernel->attr(*node.def, "shape").shape();
}

// "x (float32, [?,2])", graphrun's way of naming a placeholder.
std::string describe(const GraphNode& node) {
  return node.name() + " (" + dtype_name(node.output_dtypes[0]) + ", " + pattern_string(declared_shape(node)) + ")";
}

}  // namespace

std::string quoted(const std::string& text) {
  const bool double_quotes = text.find('\'') != std::string::npos && text.find('"') == std::string::npos;
  const char quote = double_quotes ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + quote;
}

namespace {

std::string dims_string(const Shape& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

}  // namespace

int find_placeholder(const Graph& graph, const std::string& name) {
  const InputName parsed = parse_input_name(name);
  const bool suffixed = parsed.node != name;
  const int node = graph.find(parsed.node);
  const GraphNode* found = node < 0 ? nullptr : &graph.node(node);
  const bool placeholder_op = found && (found->op() == "Placeholder" || found->op() == "PlaceholderWithDefault");
  std::string problem;
  if (found == nullptr) {
    problem = "the graph has no node '" + parsed.node + "'";
  } else if (!found->kernel->is_feedable() && !placeholder_op) {
    problem = "'" + parsed.node + "' is a " + found->op() + " node, not a placeholder";
  } else if (suffixed && parsed.output != 0) {
    problem = "a placeholder has only output 0";
  } else if (found->support == GraphNode::Support::kForeignDtype) {
    // Python's graphrun holds strings, halves and variants; for those only this runtime lacks them.
    const std::string& dtype = found->foreign_dtype;
    const std::string who = dtype == "string" || dtype == "half" || dtype == "variant" ? "graphrun-cc" : "graphdef";
    problem = "its dtype (" + dtype + ") is one " + who + " cannot hold, so " + who + " cannot run what reads it";
  } else if (!found->kernel->is_feedable()) {
    problem = "'" + parsed.node + "' is a " + found->op() + " node, not a placeholder";
  } else {
    return node;
  }
  std::string list;
  for (int i = 0; i < graph.size(); ++i) {
    if (graph.node(i).kernel->is_feedable()) list += (list.empty() ? "" : ", ") + describe(graph.node(i));
  }
  throw UsageError("cannot feed '" + name + "': " + problem + "; " +
                   (list.empty() ? "the graph has no placeholders" : "the graph's placeholders: " + list));
}

namespace {

// --shape NAME=D,D,... -> (placeholder node, dims), in the order given.
std::vector<std::pair<int, Shape>> parse_shapes(const Graph& graph, const std::vector<std::string>& arguments) {
  std::vector<std::pair<int, Shape>> shapes;
  for (const std::string& text : arguments) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError("--shape expects NAME=D,D,... (e.g. x=8,784), got " + quoted(text));
    }
    const std::string name = text.substr(0, equals);
    const std::string value = text.substr(equals + 1);
    Shape dims;
    bool valid = true;
    if (!strip_ascii(value).empty()) {
      std::size_t start = 0;
      while (valid) {
        const std::size_t comma = value.find(',', start);
        IntText dim;
        valid = parse_int_text(value.substr(start, comma - start), dim) && (!dim.negative || dim.magnitude == 0) &&
                dim.magnitude <= INT64_MAX;
        dims.push_back(static_cast<int64_t>(dim.magnitude));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    if (!valid) throw UsageError("--shape " + name + ": " + quoted(value) + " is not a list of sizes such as 8,784");
    if (dims.size() > static_cast<std::size_t>(kMaxRank)) {
      throw UsageError("--shape " + name + ": the shape has " + std::to_string(dims.size()) + " dims, more than the " +
                       std::to_string(kMaxRank) + " a tensor may have");
    }
    const int node = find_placeholder(graph, name);
    for (const auto& given : shapes) {
      if (given.first == node) {
        throw UsageError("--shape " + name + ": placeholder '" + graph.node(node).name() + "' is given twice");
      }
    }
    const auto& pattern = declared_shape(graph.node(node));
    if (!shape_matches(pattern, dims)) {
      throw UsageError("--shape " + name + ": shape " + dims_string(dims) + " does not fit placeholder '" +
                       graph.node(node).name() + "' (" + dtype_name(graph.node(node).output_dtypes[0]) +
                       "), whose shape is " + pattern_string(pattern));
    }
    shapes.emplace_back(node, std::move(dims));
  }
  return shapes;
}

// Where a fed placeholder's value came from, as graphrun says it: "--feed"
// or "--feeds PATH" (an error path only, so archives are read again).
std::string feed_source(const Graph& graph, const Options& options, int node) {
  for (const std::string& argument : options.feeds) {
    std::string name = argument.substr(0, argument.find('='));
    if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
    if (graph.find(name) == node) return "--feed";
  }
  for (const std::string& path : options.feed_files) {
    for (const NpzArray& array : read_npz(path)) {
      std::string name = array.name;
      if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
      if (graph.find(name) == node) return "--feeds " + path;
    }
  }
  return "--feed";
}

}  // namespace

Tensor random_tensor(uint64_t seed, const std::string& name, DataType dtype, const Shape& shape) {
  Tensor tensor(dtype, shape);
  const uint64_t stream = random_stream(seed, name);
  dispatch(AllTypes{}, dtype, [&](auto tag) { fill<typename decltype(tag)::type>(tensor, stream); });
  return tensor;
}

void add_random_feeds(const Graph& graph, const Options& options, const std::vector<int>& runs,
                      const std::vector<Endpoint>& fetches, FeedMap& feeds) {
  const auto shapes = parse_shapes(graph, options.shapes);
  if (!shapes.empty() && !options.random) throw UsageError("--shape sets the shape of --random values; add --random");
  if (!options.random) return;
  for (const auto& given : shapes) {
    if (feeds.count(given.first)) {
      throw UsageError("--shape " + graph.node(given.first).name() + ": the placeholder is fed by " +
                       feed_source(graph, options, given.first) + "; --shape applies to --random values only");
    }
  }
  for (int i : unfed_placeholders(graph, runs, fetches, feeds)) {
    const GraphNode& node = graph.node(i);
    Shape shape;
    bool given = false;
    for (const auto& entry : shapes) {
      if (entry.first == i) {
        shape = entry.second;
        given = true;
      }
    }
    if (!given) {
      const auto& pattern = declared_shape(node);
      std::string hint;
      bool unknown = pattern.unknown_rank();
      for (int d = 0; d < pattern.dim_size(); ++d) {
        const int64_t size = pattern.dim(d).size();
        unknown = unknown || size < 0;
        hint += (d ? "," : "") + (size < 0 ? std::string("N") : std::to_string(size));
        shape.push_back(size);
      }
      if (unknown) {
        throw UsageError("--random: placeholder " + describe(node) + " has an unknown " +
                         (pattern.unknown_rank() ? "rank" : "dimension") + "; give its shape with --shape " +
                         node.name() + "=" + (pattern.unknown_rank() ? "D,D,..." : hint));
      }
    }
    if (!is_supported_dtype(node.output_dtypes[0])) {  // a variant: the only other dtype a placeholder here has
      throw UsageError("--random: placeholder " + describe(node) +
                       ": random values are made for float, integer and bool placeholders only; "
                       "fetch a tensor that does not need this one");
    }
    try {  // the command line asked for it: a usage error (exit 2), as in graphrun
      checked_num_elements(shape, node.output_dtypes[0], "random value");
    } catch (const TensorLimitError& error) {
      throw UsageError((given ? "--shape " : "--random ") + node.name() + ": " + error.what());
    }
    try {
      feeds[i] = std::make_shared<const Tensor>(random_tensor(options.seed, node.name(), node.output_dtypes[0], shape));
    } catch (const Error& error) {
      throw UsageError("--random: placeholder " + describe(node) + ": " + error.what());
    } catch (const std::bad_alloc&) {
      throw UsageError("--random: placeholder " + describe(node) + ": " + out_of_memory_text());
    }
  }
}

}  // namespace graphrun
