// The GraphDef mutations every structure-aware mutator here shares (the
// graph target's, and the SavedModel, text and sidecar targets' for the graphs
// they carry): see graph_mutations.h.
#include "graph_mutations.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "graph/kernel.h"

namespace graphrun_fuzz {

namespace {

using graphdef::AttrValue;
using graphdef::GraphDef;
using graphdef::NodeDef;
using graphdef::TensorProto;

// clang-format off: value tables, laid out by hand
const int64_t kInterestingInts[] = {0, 1, -1, 2, 3, 7, 64, 255, 256, -2, 1 << 20, INT32_MAX, INT32_MIN,
                                    int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62, INT64_MAX, INT64_MIN,
                                    1000000, 1000000000000};

const double kInterestingFloats[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, 1e38, -1e38, 3.4e38, 1e300,
                                     std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(), 1e6, 255.5};
// clang-format on

const graphdef::DataType kDtypes[] = {
    graphdef::DT_FLOAT,  graphdef::DT_DOUBLE, graphdef::DT_INT32, graphdef::DT_INT64,  graphdef::DT_INT8,
    graphdef::DT_UINT8,  graphdef::DT_BOOL,   graphdef::DT_INT16, graphdef::DT_UINT16, graphdef::DT_UINT32,
    graphdef::DT_UINT64, graphdef::DT_STRING, graphdef::DT_HALF};

}  // namespace

int64_t interesting_int(Random& random) {
  if (random.chance(30)) return static_cast<int64_t>(random.below(10));
  return kInterestingInts[random.below(sizeof kInterestingInts / sizeof kInterestingInts[0])];
}

double interesting_float(Random& random) {
  return kInterestingFloats[random.below(sizeof kInterestingFloats / sizeof kInterestingFloats[0])];
}

namespace {

graphdef::DataType some_dtype(Random& random) {
  // Mostly the common ones, so a mutated graph still type-checks now and then.
  if (random.chance(60)) return random.chance(50) ? graphdef::DT_FLOAT : graphdef::DT_INT32;
  return kDtypes[random.below(sizeof kDtypes / sizeof kDtypes[0])];
}

NodeDef* some_node(GraphDef& graph, Random& random) {
  if (graph.node_size() == 0) return nullptr;
  return graph.mutable_node(static_cast<int>(random.below(graph.node_size())));
}

// A small tensor: a scalar or vector of interesting ints or floats, written
// through the typed fields or tensor_content.
void fill_small_tensor(TensorProto& tensor, Random& random) {
  tensor.Clear();
  const bool is_int = random.chance(60);
  tensor.set_dtype(is_int ? (random.chance(70) ? graphdef::DT_INT32 : graphdef::DT_INT64) : graphdef::DT_FLOAT);
  const int length = static_cast<int>(random.below(5));
  if (random.chance(70)) tensor.mutable_tensor_shape()->add_dim()->set_size(length);
  for (int i = 0; i < length; ++i) {
    if (tensor.dtype() == graphdef::DT_INT32) tensor.add_int_val(static_cast<int32_t>(interesting_int(random)));
    else if (tensor.dtype() == graphdef::DT_INT64) tensor.add_int64_val(interesting_int(random));
    else tensor.add_float_val(static_cast<float>(interesting_float(random)));
  }
}

// A value of the given kind, valid-looking for the op (when `spec` is given).
void make_attr(AttrValue& value, graphrun::AttrKind kind, const graphrun::AttrSpec* spec, Random& random) {
  value.Clear();
  switch (kind) {
    case graphrun::AttrKind::kType:
      if (spec && !spec->allowed_dtypes.empty() && random.chance(80)) {
        value.set_type(spec->allowed_dtypes[random.below(spec->allowed_dtypes.size())]);
      } else {
        value.set_type(some_dtype(random));
      }
      break;
    case graphrun::AttrKind::kBool: value.set_b(random.chance(50)); break;
    case graphrun::AttrKind::kString:
      if (spec && !spec->allowed_strings.empty() && random.chance(90)) {
        value.set_s(spec->allowed_strings[random.below(spec->allowed_strings.size())]);
      } else {
        value.set_s(random.chance(50) ? "SAME" : "NHWC\xff");
      }
      break;
    case graphrun::AttrKind::kShape: {
      auto* shape = value.mutable_shape();
      if (random.chance(10)) {
        shape->set_unknown_rank(true);
        break;
      }
      const int rank = static_cast<int>(random.below(5));
      for (int i = 0; i < rank; ++i) {
        shape->add_dim()->set_size(random.chance(70) ? static_cast<int64_t>(random.below(4)) - 1
                                                     : interesting_int(random));
      }
      break;
    }
    case graphrun::AttrKind::kTensor: fill_small_tensor(*value.mutable_tensor(), random); break;
    case graphrun::AttrKind::kInt:
      value.set_i(spec && random.chance(70) ? spec->minimum + static_cast<int64_t>(random.below(4))
                                            : interesting_int(random));
      break;
    case graphrun::AttrKind::kFloat: value.set_f(static_cast<float>(interesting_float(random))); break;
    case graphrun::AttrKind::kIntList: {
      auto* list = value.mutable_list();
      const int length = random.chance(70) ? 4 : static_cast<int>(random.below(6));
      for (int i = 0; i < length; ++i)
        list->add_i(random.chance(70) ? 1 + static_cast<int64_t>(random.below(2)) : interesting_int(random));
      break;
    }
    case graphrun::AttrKind::kTypeList: {
      auto* list = value.mutable_list();
      const int length = 1 + static_cast<int>(random.below(3));
      for (int i = 0; i < length; ++i) list->add_type(some_dtype(random));
      break;
    }
    case graphrun::AttrKind::kShapeList: {
      auto* list = value.mutable_list();
      const int length = static_cast<int>(random.below(3));
      for (int i = 0; i < length; ++i)
        list->add_shape()->add_dim()->set_size(static_cast<int64_t>(random.below(4)) - 1);
      break;
    }
    // A function name: the graph's library (usually empty) rarely has it, which the loader must refuse.
    case graphrun::AttrKind::kFunc: value.mutable_func()->set_name(random.chance(50) ? "f" : ""); break;
    case graphrun::AttrKind::kStringList: value.mutable_list()->add_s(random.chance(50) ? "BiasAdd" : "Relu"); break;
  }
}

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = graphrun::KernelRegistry::op_names();
  return names;
}

std::string some_input(const GraphDef& graph, Random& random) {
  if (graph.node_size() == 0) return "x";
  const std::string& name = graph.node(static_cast<int>(random.below(graph.node_size()))).name();
  if (random.chance(80)) return name;
  const char* suffixes[] = {":1", ":2", ":99", ":-1", ":2147483648", ":", ":0x1"};
  return name + suffixes[random.below(7)];
}

// A new node of any registered op, with attrs of the right kinds and the
// number of inputs they imply, reading existing nodes.
void add_node(GraphDef& graph, Random& random) {
  const std::string& op = op_names()[random.below(op_names().size())];
  const graphrun::Kernel* kernel = graphrun::KernelRegistry::find(op);
  NodeDef* node = graph.add_node();
  node->set_name("fuzz_" + std::to_string(random.next() % 100000));
  node->set_op(op);
  for (const graphrun::AttrSpec& spec : kernel->attr_specs()) {
    if (spec.has_default && random.chance(50)) continue;
    make_attr((*node->mutable_attr())[spec.name], spec.kind, &spec, random);
  }
  int64_t inputs = 0;
  try {
    inputs = kernel->num_inputs(*node);
  } catch (...) {
    inputs = 1;
  }
  for (int64_t i = 0; i < inputs && i < 8; ++i) node->add_input(some_input(graph, random));
}

// A Const holding an interesting int or float at one element, or a new shape.
void mutate_tensor(TensorProto& tensor, Random& random) {
  switch (random.below(6)) {
    case 0: {  // one element of tensor_content
      std::string& content = *tensor.mutable_tensor_content();
      if (content.empty()) break;
      const size_t width = tensor.dtype() == graphdef::DT_INT64 || tensor.dtype() == graphdef::DT_DOUBLE ? 8 : 4;
      if (content.size() < width) break;
      const size_t at = random.below(content.size() / width) * width;
      if (tensor.dtype() == graphdef::DT_FLOAT) {
        const float v = static_cast<float>(interesting_float(random));
        std::memcpy(&content[at], &v, 4);
      } else if (tensor.dtype() == graphdef::DT_DOUBLE) {
        const double v = interesting_float(random);
        std::memcpy(&content[at], &v, 8);
      } else {
        const int64_t v = interesting_int(random);
        std::memcpy(&content[at], &v, width);
      }
      break;
    }
    case 1:  // one typed value
      if (tensor.int_val_size() > 0)
        tensor.set_int_val(static_cast<int>(random.below(tensor.int_val_size())),
                           static_cast<int32_t>(interesting_int(random)));
      else if (tensor.int64_val_size() > 0)
        tensor.set_int64_val(static_cast<int>(random.below(tensor.int64_val_size())), interesting_int(random));
      else if (tensor.float_val_size() > 0)
        tensor.set_float_val(static_cast<int>(random.below(tensor.float_val_size())),
                             static_cast<float>(interesting_float(random)));
      else tensor.add_int_val(static_cast<int32_t>(interesting_int(random)));
      break;
    case 2: {  // a dim: negative, zero, huge (products past int64)
      auto* shape = tensor.mutable_tensor_shape();
      if (shape->dim_size() == 0 || random.chance(30)) shape->add_dim()->set_size(interesting_int(random));
      else shape->mutable_dim(static_cast<int>(random.below(shape->dim_size())))->set_size(interesting_int(random));
      break;
    }
    case 3: {  // tensor_content shorter or longer than the shape
      std::string& content = *tensor.mutable_tensor_content();
      if (!content.empty() && random.chance(50)) content.resize(random.below(content.size()));
      else content.append(1 + random.below(9), '\x7f');
      break;
    }
    case 4: tensor.set_dtype(some_dtype(random)); break;
    default: fill_small_tensor(tensor, random); break;
  }
}

// A node's attr names in sorted order: protobuf's map order changes from
// process to process, and a seed must pick the same attr every time.
std::vector<std::string> attr_names(const graphdef::NodeDef& node) {
  std::vector<std::string> names;
  for (const auto& entry : node.attr()) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

void mutate_graph(GraphDef& graph, Random& random) {
  NodeDef* node = some_node(graph, random);
  if (node == nullptr) {
    add_node(graph, random);
    return;
  }
  const graphrun::Kernel* kernel = graphrun::KernelRegistry::find(node->op());
  // Half the time, change only values (Const elements and dims, attr ints and
  // floats): the graph then usually still validates and the mutation reaches
  // the kernels. Structural changes mostly end in a model error at load.
  const size_t choice = random.chance(50) ? 2 + random.below(2) : random.below(14);
  switch (choice) {
    case 0: {  // an attr of the wrong kind
      if (node->attr().empty()) break;
      const std::string name = attr_names(*node)[random.below(node->attr_size())];
      make_attr((*node->mutable_attr())[name], static_cast<graphrun::AttrKind>(random.below(9)), nullptr, random);
      break;
    }
    case 1: {  // an attr missing
      if (node->attr().empty()) break;
      node->mutable_attr()->erase(attr_names(*node)[random.below(node->attr_size())]);
      break;
    }
    case 2: {  // an int, float or list value at an extreme
      for (const std::string& name : attr_names(*node)) {
        AttrValue& value = (*node->mutable_attr())[name];
        if (!random.chance(50)) continue;
        if (value.value_case() == AttrValue::kI) value.set_i(interesting_int(random));
        else if (value.value_case() == AttrValue::kF) value.set_f(static_cast<float>(interesting_float(random)));
        else if (value.value_case() == AttrValue::kList && value.list().i_size() > 0) {
          value.mutable_list()->set_i(static_cast<int>(random.below(value.list().i_size())), interesting_int(random));
        } else if (value.value_case() == AttrValue::kType) value.set_type(some_dtype(random));
        else if (value.value_case() == AttrValue::kShape) {
          auto* shape = value.mutable_shape();
          if (shape->dim_size() > 0)
            shape->mutable_dim(static_cast<int>(random.below(shape->dim_size())))->set_size(interesting_int(random));
          else shape->add_dim()->set_size(interesting_int(random));
        }
        break;
      }
      break;
    }
    case 3: {  // a tensor attr (Const's value) changed
      for (const std::string& name : attr_names(*node)) {
        AttrValue& value = (*node->mutable_attr())[name];
        if (value.value_case() == AttrValue::kTensor) {
          mutate_tensor(*value.mutable_tensor(), random);
          // Usually keep a Const's dtype attr in step, so the new value
          // reaches the kernels instead of failing the Const's own check.
          if (node->op() == "Const" && random.chance(80)) {
            (*node->mutable_attr())["dtype"].set_type(value.tensor().dtype());
          }
          break;
        }
      }
      break;
    }
    case 4:  // a dangling, out-of-range or cyclic input
      if (node->input_size() > 0 && random.chance(70)) {
        node->set_input(static_cast<int>(random.below(node->input_size())), some_input(graph, random));
      } else {
        node->add_input(random.chance(30) ? "^" + some_input(graph, random) : some_input(graph, random));
      }
      break;
    case 5:  // an input removed
      if (node->input_size() > 0) {
        node->mutable_input()->erase(node->mutable_input()->begin() +
                                     static_cast<int>(random.below(node->input_size())));
      }
      break;
    case 6: node->set_name(some_node(graph, random)->name()); break;  // a duplicate name
    case 7: node->set_op(op_names()[random.below(op_names().size())]); break;  // another op type
    case 8: {  // the node removed (nodes are not contiguous: find its index)
      for (int i = 0; i < graph.node_size(); ++i) {
        if (graph.mutable_node(i) == node) {
          graph.mutable_node()->DeleteSubrange(i, 1);
          break;
        }
      }
      break;
    }
    case 9: {  // the node duplicated, under its name or a new one
      NodeDef copy = *node;
      if (random.chance(70)) copy.set_name(copy.name() + "_dup");
      *graph.add_node() = copy;
      break;
    }
    case 10:  // the declared attrs rebuilt with plausible values
      if (kernel == nullptr) break;
      for (const graphrun::AttrSpec& spec : kernel->attr_specs()) {
        if (random.chance(40)) make_attr((*node->mutable_attr())[spec.name], spec.kind, &spec, random);
      }
      break;
    case 11: {  // two nodes swap places in the file
      NodeDef* other = some_node(graph, random);
      if (other != node) node->Swap(other);
      break;
    }
    default: add_node(graph, random); break;
  }
}

}  // namespace graphrun_fuzz

namespace graphrun_fuzz {

bool serialize_deterministic(const google::protobuf::MessageLite& message, std::string& bytes) {
  bytes.clear();
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  return message.SerializeToCodedStream(&coded);
}

void mutate_bytes(std::string& bytes, size_t extra) {
  const size_t size = bytes.size();
  bytes.resize(size + extra);
  bytes.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(bytes.data()), size, size + extra));
}

}  // namespace graphrun_fuzz
