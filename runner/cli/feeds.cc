#include "cli/feeds.h"

#include <new>

#include "cli/random_feeds.h"
#include "core/value_conversion.h"
#include "graph/shape_pattern.h"
#include "io/json_tensor.h"
#include "io/npy.h"
#include "io/npz.h"

namespace graphrun {

namespace {

// The messages are graphrun's (graphdef/client/feeds.py), word for word:
// each starts with a label naming the flag that gave the value ("--feed x",
// "--feeds data.npz: 'x'").

const graphdef::TensorShapeProto& declared_shape(const GraphNode& node) {
  return node.kernel->attr(*node.def, "shape").shape();
}

std::string target_of(const GraphNode& node) {
  return "placeholder '" + node.name() + "' (" + dtype_name(node.output_dtypes[0]) + ")";
}

// A value read from a file, converted to the placeholder's dtype exactly.
// Strings go only to a string placeholder, which takes nothing else (but an
// empty array); `held` is the file's string dtype ("|S5") for the message.
TensorPtr to_dtype(Tensor tensor, const GraphNode& node, const std::string& held = "") {
  const DataType dtype = node.output_dtypes[0];
  if (tensor.dtype() == dtype) return std::make_shared<const Tensor>(std::move(tensor));
  if (tensor.is_string()) {
    throw Error(target_of(node) + " cannot be fed strings" + (held.empty() ? "" : " (" + held + " data)"));
  }
  if (dtype == graphdef::DT_STRING && tensor.num_elements() > 0) {
    throw Error(target_of(node) + " takes strings, not " +
                (tensor.dtype() == graphdef::DT_BOOL ? "true/false" : "numbers") + "; quote them: '[\"a\", \"b\"]'");
  }
  if (tensor.num_elements() == 0) return std::make_shared<const Tensor>(Tensor(dtype, tensor.shape()));
  try {
    return std::make_shared<const Tensor>(convert_exactly(tensor, dtype));
  } catch (const Error& error) {
    throw Error(conversion_error_for(error.what(), dtype, target_of(node)));
  }
}

TensorPtr read_value(const GraphNode& node, const std::string& value) {
  if (!value.empty() && value[0] == '@') {
    std::string held;
    Tensor tensor = read_npy(value.substr(1), &held);
    if (tensor.is_string() && node.output_dtypes[0] != graphdef::DT_STRING) {
      throw Error("'" + value.substr(1) + "' holds " + held + " data (strings), which " + target_of(node) +
                  " cannot be fed");
    }
    return to_dtype(std::move(tensor), node);
  }
  return std::make_shared<const Tensor>(tensor_from_json(value, node.output_dtypes[0], target_of(node)));
}

// Adds one feed: `read` gives the value for the placeholder `name`. `prefix`
// ("" for --feed, "--feeds PATH: " for an archive) starts a line about the
// placeholder; `label` one about its value.
template <class Read>
void add_feed(const Graph& graph, FeedMap& feeds, const std::string& prefix, const std::string& label,
              const std::string& name, Read read) {
  int node;
  try {
    node = find_placeholder(graph, name);
  } catch (const UsageError& error) {
    throw UsageError(prefix + error.what());
  }
  const GraphNode& placeholder = graph.node(node);
  if (feeds.count(node)) throw UsageError(label + ": placeholder '" + placeholder.name() + "' is fed twice");
  TensorPtr tensor;
  try {
    tensor = read(placeholder);
  } catch (const TensorLimitError& error) {  // a run failure (exit 4), as graphrun reports it
    throw RunError(label + ": " + error.what());
  } catch (const Error& error) {
    throw UsageError(label + ": " + error.what());
  } catch (const std::bad_alloc&) {
    throw UsageError(label + ": out of memory");
  }
  const auto& pattern = declared_shape(placeholder);
  if (!shape_matches(pattern, tensor->shape())) {
    throw UsageError(label + ": a value of shape " + shape_string(tensor->shape()) + " does not fit " +
                     target_of(placeholder) + ", whose shape is " + pattern_string(pattern));
  }
  feeds.emplace(node, std::move(tensor));
}

}  // namespace

FeedMap parse_feeds(const Graph& graph, const std::vector<std::string>& arguments,
                    const std::vector<std::string>& archives) {
  FeedMap feeds;
  for (const std::string& argument : arguments) {
    const std::size_t equals = argument.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError("--feed expects NAME=VALUE, got " + quoted(argument));
    }
    const std::string name = argument.substr(0, equals);
    const std::string value = argument.substr(equals + 1);
    if (value.empty()) throw UsageError("--feed " + name + ": the value is empty");
    add_feed(graph, feeds, "", "--feed " + name, name,
             [&](const GraphNode& placeholder) { return read_value(placeholder, value); });
  }
  for (const std::string& path : archives) {
    const std::string prefix = "--feeds " + path + ": ";
    std::vector<NpzArray> arrays;
    try {
      arrays = read_npz(path);
    } catch (const Error& error) {
      throw UsageError(prefix + error.what());
    } catch (const std::bad_alloc&) {
      throw UsageError(prefix + "out of memory");
    }
    for (NpzArray& array : arrays) {
      add_feed(graph, feeds, prefix, prefix + "'" + array.name + "'", array.name, [&](const GraphNode& placeholder) {
        if (array.over_limit) throw RunError(prefix + array.error);
        if (!array.error.empty()) throw UsageError(prefix + array.error);
        return to_dtype(std::move(array.value), placeholder, array.string_descr);
      });
    }
  }
  return feeds;
}

}  // namespace graphrun
