#include "cli/feeds.h"

#include <new>

#include "io/json_tensor.h"
#include "io/npy.h"
#include "io/npz.h"
#include "graph/shape_pattern.h"
#include "core/value_conversion.h"

namespace graphrun {

namespace {

const graphdef::TensorShapeProto& declared_shape(const GraphNode& node) {
  return node.kernel->attr(*node.def, "shape").shape();
}

std::string describe_placeholders(const Graph& graph) {
  std::string list;
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    if (!node.kernel->is_feedable()) continue;
    if (!list.empty()) list += ", ";
    list += node.name() + " (" + dtype_name(node.output_dtypes[0]) + ", " + pattern_string(declared_shape(node)) + ")";
  }
  return list.empty() ? "the graph has no placeholders" : "the graph's placeholders: " + list;
}

// A value read from a file, converted to the placeholder's dtype exactly.
TensorPtr to_dtype(Tensor tensor, DataType dtype) {
  if (tensor.dtype() == dtype) return std::make_shared<const Tensor>(std::move(tensor));
  return std::make_shared<const Tensor>(convert_exactly(tensor, dtype));
}

int find_placeholder(const Graph& graph, std::string name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  const int node = graph.find(name);
  if (node < 0 || !graph.node(node).kernel->is_feedable()) return -1;
  return node;
}

TensorPtr read_value(const GraphNode& node, const std::string& value) {
  const DataType dtype = node.output_dtypes[0];
  if (!value.empty() && value[0] == '@') return to_dtype(read_npy(value.substr(1)), dtype);
  return std::make_shared<const Tensor>(tensor_from_json(value, dtype));
}

// Adds one feed: `read` gives the value for the placeholder `name`; `label`
// says where it came from in error messages ("" for --feed).
template <class Read>
void add_feed(const Graph& graph, FeedMap& feeds, const std::string& label, const std::string& name, Read read) {
  const int node = find_placeholder(graph, name);
  if (node < 0) throw UsageError(label + "unknown feed '" + name + "': " + describe_placeholders(graph));
  if (feeds.count(node)) throw UsageError(label + "'" + name + "' is fed more than once");
  const GraphNode& placeholder = graph.node(node);
  TensorPtr tensor;
  try {
    tensor = read(placeholder);
  } catch (const Error& error) {
    throw UsageError(label + "feed '" + name + "': " + error.what());
  } catch (const std::bad_alloc&) {
    throw UsageError(label + "feed '" + name + "': out of memory");
  }
  const auto& pattern = declared_shape(placeholder);
  if (!shape_matches(pattern, tensor->shape())) {
    throw UsageError(label + "feed '" + name + "': the value has shape " + shape_string(tensor->shape()) +
                     " but placeholder '" + placeholder.name() + "' has shape " + pattern_string(pattern));
  }
  feeds.emplace(node, std::move(tensor));
}

}  // namespace

FeedMap parse_feeds(const Graph& graph, const std::vector<std::string>& arguments,
                    const std::vector<std::string>& archives) {
  FeedMap feeds;
  for (const std::string& argument : arguments) {
    const std::size_t equals = argument.find('=');
    if (equals == std::string::npos) throw UsageError("--feed needs NAME=VALUE, got '" + argument + "'");
    const std::string value = argument.substr(equals + 1);
    add_feed(graph, feeds, "", argument.substr(0, equals),
             [&](const GraphNode& placeholder) { return read_value(placeholder, value); });
  }
  for (const std::string& path : archives) {
    const std::string label = "--feeds " + path + ": ";
    std::vector<NpzArray> arrays;
    try {
      arrays = read_npz(path);
    } catch (const Error& error) {
      throw UsageError(label + error.what());
    } catch (const std::bad_alloc&) {
      throw UsageError(label + "out of memory");
    }
    for (NpzArray& array : arrays) {
      add_feed(graph, feeds, label, array.name, [&](const GraphNode& placeholder) {
        return to_dtype(std::move(array.value), placeholder.output_dtypes[0]);
      });
    }
  }
  return feeds;
}

}  // namespace graphrun
