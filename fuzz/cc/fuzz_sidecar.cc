// fuzz-sidecar: a GraphDef whose Consts keep their values in a weights file
// beside it (attr _external_value: file, tag, offset, length, crc32c), as two
// sections (sections.h) written into a directory: the model, and the weights
// under the name the first such attr gives (when it is a plain name). The
// model is loaded as graphrun-cc loads a file and run as fuzz-graph runs a
// graph. The mutator changes the references (names with directories, dots,
// NULs; tags; offsets, lengths and checksums off by one or past the file),
// the Consts' declared dtype and shape, the weights file's header and
// length, or the graph as fuzz-graph does.
#include <cstring>
#include <string>
#include <vector>

#include "graph/external_weights.h"
#include "graph_mutations.h"
#include "run_graph.h"
#include "sections.h"

using namespace graphrun;
using namespace graphrun_fuzz;

namespace {

enum Part { kModel, kWeights, kParts };

const char* const kFileNames[] = {"", ".", "..", "../weights", "sub/w", "w\\x", "model.pb", "a\x1b[2J"};

std::string weights_name(const graphdef::GraphDef& graph) {
  for (const auto& node : graph.node()) {
    if (!has_external_value(node)) continue;
    const auto& list = node.attr().at(kExternalValueAttr).list();
    if (list.s_size() == 0) break;
    const std::string& name = list.s(0);
    if (!name.empty() && name != "." && name != ".." &&
        name.find_first_of(std::string("/\\\0", 3)) == std::string::npos && name.size() < 200 && name != "model.pb") {
      return name;
    }
    break;
  }
  return "model.weights";
}

Outcome execute(const uint8_t* data, size_t size) {
  const std::vector<std::string> parts = split_sections(data, size, kParts);
  const std::string input(reinterpret_cast<const char*>(data), size);
  graphdef::GraphDef graph;
  graph.ParseFromString(parts[kModel]);
  static std::string written;  // the previous input's weights file
  const std::string dir = scratch_dir(), name = dir + "/" + weights_name(graph);
  if (!written.empty()) put_file(written, "");
  put_file(name, parts[kWeights]);
  written = name;
  put_file(dir + "/model.pb", parts[kModel]);
  return guarded(input, [&] { return run_graph(Graph::load(dir + "/model.pb"), fnv1a(data, size)); });
}

void mutate_reference(graphdef::AttrValue& value, Random& random) {
  auto& list = *value.mutable_list();
  if (list.s_size() != 2 || list.i_size() != 3 || random.chance(5)) {
    if (random.chance(50)) list.add_i(interesting_int(random));
    else list.add_s("x");
    return;
  }
  switch (random.below(6)) {
    case 0: list.set_s(0, kFileNames[random.below(sizeof kFileNames / sizeof kFileNames[0])]); break;
    case 1: list.set_s(1, random.chance(50) ? std::string(32, 'g') : list.s(1).substr(1)); break;
    case 2:
      list.set_i(0,
                 random.chance(50) ? wrapping_add(list.i(0), random.chance(50) ? 64 : -64) : interesting_int(random));
      break;
    case 3:
      list.set_i(1, random.chance(50) ? wrapping_add(list.i(1), random.chance(50) ? 1 : -1) : interesting_int(random));
      break;
    case 4: list.set_i(2, random.chance(50) ? list.i(2) ^ 1 : interesting_int(random)); break;
    default: list.mutable_i()->SwapElements(0, 1);
  }
}

void mutate_model(std::string& bytes, Random& random) {
  graphdef::GraphDef graph;
  if (!graph.ParseFromString(bytes)) {
    mutate_bytes(bytes);
    return;
  }
  std::vector<graphdef::NodeDef*> external;
  for (auto& node : *graph.mutable_node()) {
    if (has_external_value(node)) external.push_back(&node);
  }
  if (external.empty() || random.chance(25)) {
    mutate_graph(graph, random);
  } else {
    graphdef::NodeDef& node = *external[random.below(external.size())];
    graphdef::TensorProto& tensor = *(*node.mutable_attr())["value"].mutable_tensor();
    switch (random.below(5)) {
      case 0: tensor.set_dtype(random.chance(50) ? graphdef::DT_DOUBLE : graphdef::DT_STRING); break;
      case 1:
        if (tensor.tensor_shape().dim_size() > 0) {
          tensor.mutable_tensor_shape()->mutable_dim(0)->set_size(interesting_int(random));
        }
        break;
      case 2: tensor.add_float_val(1.0f); break;  // a value inline as well
      default: mutate_reference((*node.mutable_attr())[kExternalValueAttr], random);
    }
  }
  serialize_deterministic(graph, bytes);
}

void mutate_weights(std::string& bytes, Random& random) {
  static const size_t kFields[] = {8, 12, 16, 24, 32, 40, 48, 56};
  if (random.chance(30)) {
    bytes.resize(random.below(bytes.size() + 1));
  } else if (random.chance(60) && bytes.size() >= 64) {
    const size_t at = kFields[random.below(sizeof kFields / sizeof kFields[0])];
    const int64_t value = interesting_int(random);
    std::memcpy(&bytes[at], &value, random.chance(50) ? 4 : 8);
  } else {
    mutate_bytes(bytes, 128);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  init_harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  count(execute(data, size));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Random random(seed);
  std::vector<std::string> parts = split_sections(data, size, kParts);
  if (random.chance(55)) mutate_model(parts[kModel], random);
  else if (random.chance(80)) mutate_weights(parts[kWeights], random);
  else mutate_bytes(parts[random.below(kParts)]);
  const std::string out = join_sections(parts);
  if (out.size() > max_size) return size;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
