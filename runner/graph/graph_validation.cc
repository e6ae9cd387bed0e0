// Everything about a graph is checked here, before any node runs, so a bad
// model fails fast with exit code 3 and never half-way through a computation.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <new>

#include "core/errors.h"
#include "graph/graph.h"
#include "graph/input_name.h"
#include "graph/external_weights.h"

namespace graphrun {
namespace {

// A large Const's value is the tensor_content bytes of the graph's own
// GraphDef, shared instead of copied (they are the same bytes for these
// dtypes on a little-endian machine): a graph then holds its weights once,
// not twice. ResNet50's 98 MiB of weights were held by the GraphDef and
// again decoded, in every graph the load-time passes make. The value keeps
// the GraphDef alive, so it may outlive the Graph (a fetched constant).
// Bools are decoded (their bytes are made 0 or 1), small values too.
void share_const_content(GraphNode& node, const std::shared_ptr<graphdef::GraphDef>& proto) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  constexpr std::size_t kMinSharedBytes = 64 << 10;
  const TensorPtr* decoded = std::any_cast<TensorPtr>(&node.state);
  if (decoded == nullptr || *decoded == nullptr || node.def->op() != "Const") return;
  const Tensor& value = **decoded;
  const DataType dtype = value.dtype();
  if (dtype != graphdef::DT_FLOAT && dtype != graphdef::DT_DOUBLE && dtype != graphdef::DT_INT32 &&
      dtype != graphdef::DT_INT64) {
    return;
  }
  auto attr = node.def->attr().find("value");
  if (attr == node.def->attr().end()) return;
  const std::string& content = attr->second.tensor().tensor_content();
  if (content.size() < kMinSharedBytes || content.size() != value.byte_size() ||
      reinterpret_cast<std::uintptr_t>(content.data()) % alignof(std::max_align_t) != 0) {
    return;
  }
  node.state = TensorPtr(std::make_shared<const Tensor>(Tensor::borrowed(
      dtype, value.shape(), value.num_elements(), content.data(), std::shared_ptr<const void>(proto, content.data()))));
#else
  (void)node;
  (void)proto;
#endif
}

}  // namespace

void Graph::validate() {
  nodes_.resize(proto_->node_size());
  for (int i = 0; i < size(); ++i) nodes_[i].def = &proto_->node(i);
  check_names();
  find_kernels();
  check_attrs();
  resolve_inputs();
  mark_dependents();
  check_input_dtypes();
  check_acyclic();
}

namespace {

// ASCII only, whatever the locale: TensorFlow's scanner takes no other letters.
bool is_alnum_or_dot(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.';
}

bool is_name_char(char c) { return is_alnum_or_dot(c) || c == '_' || c == '-' || c == '/'; }

// TensorFlow's importer's rule (IsValidNodeName without internal ops): a
// letter, digit or dot, then letters, digits and . _ - /, where each '>'
// must be followed by a letter, digit or dot. graphrun checks the same.
bool is_valid_node_name(const std::string& name) {
  if (name.empty() || !is_alnum_or_dot(name[0])) return false;
  for (std::size_t i = 1; i < name.size(); ++i) {
    if (name[i] == '>') {
      if (i + 1 == name.size() || !is_alnum_or_dot(name[i + 1])) return false;
    } else if (!is_name_char(name[i])) {
      return false;
    }
  }
  return true;
}

// `name` with each NUL written as \x00: an error's what() ends at the first
// NUL, and the command line escapes every other control character itself.
std::string without_nuls(const std::string& name) {
  std::string shown;
  for (char c : name) shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
  return shown;
}

}  // namespace

void Graph::check_names() {
  index_.reserve(nodes_.size());
  for (int i = 0; i < size(); ++i) {
    const std::string& name = nodes_[i].name();
    if (name.empty()) fail("node #" + std::to_string(i) + " (" + nodes_[i].op() + ") has no name");
    // A file's own graph only: function bodies and graph passes name their nodes themselves.
    if (library_ == nullptr && !internal_ops_ && !is_valid_node_name(name)) {
      fail("node '" + without_nuls(name) +
           "': not a valid node name (letters, digits and . _ / - >, not starting with _ / - >)");
    }
    if (!index_.emplace(name, i).second) fail("node '" + name + "': the name is not unique");
  }
}

namespace {

// The kernel of every node graphrun-cc cannot run: it declares nothing and
// refuses to run (a run that needs such a node is refused before it starts).
const Kernel& unsupported_kernel() {
  static const Kernel* kernel =
      new Kernel(Kernel("").compute([](KernelContext&) { throw Error("graphrun-cc cannot run this node"); }));
  return *kernel;
}

// The name of a dtype an attr of `node` holds that graphrun-cc has no type
// for, or "" when there is none.
std::string foreign_dtype(const graphdef::NodeDef& node) {
  // In name order: protobuf's map order changes from run to run, and the message must not.
  std::map<std::string, const graphdef::AttrValue*> attrs;
  for (const auto& [name, value] : node.attr()) attrs[name] = &value;
  for (const auto& [name, attr] : attrs) {
    const graphdef::AttrValue& value = *attr;
    std::vector<DataType> dtypes;
    if (value.value_case() == graphdef::AttrValue::kType) dtypes.push_back(value.type());
    if (value.value_case() == graphdef::AttrValue::kTensor) dtypes.push_back(value.tensor().dtype());
    if (value.value_case() == graphdef::AttrValue::kList) {
      for (int type : value.list().type()) dtypes.push_back(static_cast<DataType>(type));
    }
    for (DataType dtype : dtypes) {
      // DT_INVALID or a number TensorFlow never defined is a malformed node, checked as one.
      if (is_supported_dtype(dtype) || dtype == graphdef::DT_INVALID || !graphdef::DataType_IsValid(dtype)) continue;
      std::string text = graphdef::DataType_Name(dtype);
      if (text.rfind("DT_", 0) == 0) text = text.substr(3);
      if (text.size() > 4 && text.compare(text.size() - 4, 4, "_REF") == 0) text.resize(text.size() - 4);
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return text;
    }
  }
  return "";
}

}  // namespace

void Graph::find_kernels() {
  for (GraphNode& node : nodes_) {
    node.kernel = KernelRegistry::find(node.op(), internal_ops_);
    if (node.kernel == nullptr) {
      node.support = GraphNode::Support::kMissingOp;
      node.kernel = &unsupported_kernel();
    }
  }
}

void Graph::check_attrs() {
  // An unsupported node has as many outputs as its readers ask for (at least
  // one), each of unknown dtype.
  std::vector<int> asked(nodes_.size(), 1);
  for (const GraphNode& node : nodes_) {
    for (const std::string& text : node.def->input()) {
      const InputName input = parse_input_name(text);
      const int producer = find(input.node);
      if (producer >= 0 && !input.is_control && input.output >= 0 && input.output < (1 << 20)) {
        asked[producer] = std::max(asked[producer], input.output + 1);
      }
    }
  }
  // A malformed node is reported only when it does not read (through its
  // data inputs) from a node graphrun-cc cannot run: graphrun leaves such a
  // reader unchecked, as it can never run, and reports the missing kernel or
  // dtype first, which says what the runtime lacks. So refusals wait until
  // every node's support is known.
  struct Refusal {
    int node;
    std::string message;
    bool over_limit;  // a tensor over GRAPHDEF_MAX_TENSOR_BYTES: a run failure (exit 4)
  };
  std::vector<Refusal> malformed;
  for (int i = 0; i < size(); ++i) {
    GraphNode& node = nodes_[i];
    if (!node.runnable()) {
      node.output_dtypes.assign(asked[i], graphdef::DT_INVALID);
      continue;
    }
    try {
      node.kernel->validate_attrs(*node.def);
      node.output_dtypes = node.kernel->output_dtypes(*node.def);
      node.state = node.kernel->prepare_node(*node.def);
      // An external Const's value is the mapped weights file beside the model.
      if (has_external_value(*node.def)) node.state = load_external_value(*node.def, model_directory(source_));
      else share_const_content(node, proto_);
    } catch (const TensorLimitError& error) {
      malformed.push_back({i, source_ + ": " + node.describe() + ": " + error.what(), true});
      node.kernel = &unsupported_kernel();
      node.output_dtypes.assign(asked[i], graphdef::DT_INVALID);
    } catch (const Error& error) {
      // A kernel that refuses a dtype graphrun-cc cannot hold (string,
      // resource...) leaves the node unsupported; any other refusal is a
      // malformed node. (A kernel may accept DT_VARIANT: TensorList ops.)
      const std::string dtype = foreign_dtype(*node.def);
      if (dtype.empty()) {
        malformed.push_back({i, node.describe() + ": " + error.what(), false});
      } else {
        node.support = GraphNode::Support::kForeignDtype;
        node.foreign_dtype = dtype;
      }
      node.kernel = &unsupported_kernel();
      node.output_dtypes.assign(asked[i], graphdef::DT_INVALID);
    }
  }
  if (malformed.empty()) return;
  // Readers of unsupported nodes, and their readers in turn, in any file order.
  std::vector<std::vector<int>> readers(nodes_.size());
  std::vector<char> dependent(nodes_.size(), 0);
  std::vector<int> work;
  for (int i = 0; i < size(); ++i) {
    for (const std::string& text : nodes_[i].def->input()) {
      const InputName input = parse_input_name(text);
      const int producer = input.is_control ? -1 : find(input.node);
      if (producer >= 0) readers[producer].push_back(i);
    }
    if (nodes_[i].unsupported_itself()) work.push_back(i);
  }
  while (!work.empty()) {
    const int i = work.back();
    work.pop_back();
    for (int reader : readers[i]) {
      if (dependent[reader] || nodes_[reader].unsupported_itself()) continue;
      dependent[reader] = 1;
      work.push_back(reader);
    }
  }
  for (const Refusal& refusal : malformed) {
    if (dependent[refusal.node]) continue;
    if (refusal.over_limit) throw RunError(refusal.message);
    fail(refusal.message);
  }
  // Every malformed node reads from an unsupported one: it can never run.
  for (const Refusal& refusal : malformed) nodes_[refusal.node].support = GraphNode::Support::kDependent;
}

void Graph::resolve_inputs() {
  static const InputSpec any_input = [] {
    InputSpec spec;
    spec.name = "input";
    return spec;
  }();
  for (GraphNode& node : nodes_) {
    const Kernel& kernel = *node.kernel;
    const bool unsupported = !node.runnable();
    for (const std::string& text : node.def->input()) {
      const InputName input = parse_input_name(text);
      const int producer = find(input.node);
      if (producer < 0) fail(node.describe() + ": input '" + text + "' names no node in the graph");
      if (input.is_control) {
        node.control_inputs.push_back(producer);
        continue;
      }
      if (!node.control_inputs.empty()) {
        fail(node.describe() + ": data input '" + text + "' comes after a control input; " +
             "control inputs must come last");
      }
      const int produced = static_cast<int>(nodes_[producer].output_dtypes.size());
      if (input.output < 0 || input.output >= produced) {
        fail(node.describe() + ": input '" + text + "' asks for output " +
             (input.output < 0 ? std::string("beyond int range") : std::to_string(input.output)) + " of " +
             nodes_[producer].describe() + ", which has " + std::to_string(produced) +
             (produced == 1 ? " output" : " outputs"));
      }
      node.inputs.push_back({producer, input.output});
    }
    if (unsupported) {  // nothing to check it against: kept as written
      node.input_specs.assign(node.inputs.size(), &any_input);
      continue;
    }
    const int got = static_cast<int>(node.inputs.size());
    const int64_t expected = kernel.num_inputs(*node.def);
    if (got != expected) {
      fail(node.describe() + ": has " + std::to_string(got) + " data input" + (got == 1 ? "" : "s") + " but " +
           node.op() + " takes " + std::to_string(expected));
    }
    for (int i = 0; i < got; ++i) node.input_specs.push_back(&kernel.input_spec(*node.def, i));
    for (int i = 0; i < got; ++i) {
      const GraphNode& producer = nodes_[node.inputs[i].node];
      if (node.input_spec(i).is_ref && !producer.kernel->is_variable()) {
        fail(node.describe() + ": input " + std::to_string(i) + " ('" + node.input_spec(i).name +
             "') must name a variable node directly, not " + producer.describe());
      }
    }
  }
}

void Graph::mark_dependents() {
  // Readers of unsupported nodes, and their readers in turn, in any file order.
  std::vector<std::vector<int>> readers(nodes_.size());
  std::vector<int> work;
  for (int i = 0; i < size(); ++i) {
    for (const Endpoint& input : nodes_[i].inputs) readers[input.node].push_back(i);
    if (!nodes_[i].runnable()) work.push_back(i);
  }
  while (!work.empty()) {
    const int i = work.back();
    work.pop_back();
    for (int reader : readers[i]) {
      if (!nodes_[reader].runnable()) continue;
      nodes_[reader].support = GraphNode::Support::kDependent;
      work.push_back(reader);
    }
  }
}

void Graph::check_input_dtypes() {
  for (const GraphNode& node : nodes_) {
    if (!node.runnable()) continue;
    const std::vector<DataType> expected_dtypes = node.kernel->input_dtypes(*node.def);
    for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
      const Endpoint from = node.inputs[i];
      const DataType got = nodes_[from.node].output_dtypes[from.output];
      const InputSpec& arg = node.input_spec(i);
      const DataType expected = expected_dtypes[i];
      if (got != expected) {
        fail(node.describe() + ": input " + std::to_string(i) + " ('" + arg.name + "') is " + dtype_name(got) +
             " from '" + tensor_name(nodes_[from.node].name(), from.output) + "' but the node expects " +
             dtype_name(expected) + (arg.type_attr.empty() ? "" : " (attr " + arg.type_attr + ")"));
      }
    }
  }
}

void Graph::check_acyclic() const {
  // Kahn's algorithm over every edge (data, ref and control); whatever it
  // cannot order lies on or behind a cycle. Iterative, so a 100,000-node
  // chain is no problem.
  const int n = size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  // A while loop's back edge, NextIteration -> Merge, is the one edge that
  // may close a cycle (the frame executor runs it once per iteration).
  auto for_each_producer = [&](int i, auto&& visit) {
    for (const Endpoint& input : nodes_[i].inputs) {
      if (!is_loop_back_edge(nodes_[input.node], nodes_[i])) visit(input.node);
    }
    for (int control : nodes_[i].control_inputs) visit(control);
  };
  for (int i = 0; i < n; ++i) {
    for_each_producer(i, [&](int producer) {
      ++pending[i];
      consumers[producer].push_back(i);
    });
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  int ordered = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++ordered;
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  if (ordered == n) return;

  // Every unordered node has an unordered producer; walking producers from
  // one of them must revisit a node, and the walk from there is a cycle.
  int start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int> step_of(n, -1);
  std::vector<int> walk;
  int current = start;
  while (step_of[current] < 0) {
    step_of[current] = static_cast<int>(walk.size());
    walk.push_back(current);
    int next = -1;
    for_each_producer(current, [&](int producer) {
      if (next < 0 && pending[producer] > 0) next = producer;
    });
    current = next;
  }
  // The walk goes consumer -> producer; print the cycle in data-flow order,
  // starting from its first node in the file so the message is stable.
  std::vector<int> cycle(walk.begin() + step_of[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string path;
  const std::size_t shown = std::min<std::size_t>(cycle.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) path += "'" + nodes_[cycle[i]].name() + "' -> ";
  if (shown < cycle.size()) path += "... -> ";
  path += "'" + nodes_[cycle[0]].name() + "'";
  fail("the graph has a cycle: " + path + " (only a while loop's NextIteration -> Merge edge may close a cycle)");
}

}  // namespace graphrun
