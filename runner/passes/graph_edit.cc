#include "passes/graph_edit.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>
#include <utility>

#include "graph/input_name.h"

namespace graphrun {

namespace {

// Op names (or parts of them) that act, hold state or are not pure
// functions of their inputs. Kept by name because graphrun-cc's kernels do
// not declare statefulness; anything matching is left alone.
const char* const kStatefulParts[] = {"Variable",  "Assign",    "Apply",   "Random",      "Stateful",    "Print",
                                      "Assert",    "Queue",     "Stack",   "TensorArray", "TensorList",  "Save",
                                      "Restore",   "Iterator",  "Dataset", "Reader",      "Multinomial", "Shuffle",
                                      "Truncated", "Candidate", "Scatter", "Resource",    "Placeholder"};

const std::unordered_set<std::string>& control_flow_ops() {
  static const std::unordered_set<std::string> ops = {"Switch",
                                                      "RefSwitch",
                                                      "Merge",
                                                      "RefMerge",
                                                      "Enter",
                                                      "RefEnter",
                                                      "Exit",
                                                      "RefExit",
                                                      "NextIteration",
                                                      "RefNextIteration",
                                                      "LoopCond",
                                                      "If",
                                                      "StatelessIf",
                                                      "While",
                                                      "StatelessWhile",
                                                      "PartitionedCall",
                                                      "StatefulPartitionedCall",
                                                      "ControlTrigger"};
  return ops;
}

}  // namespace

bool is_stateful(const GraphNode& node) {
  if (!node.runnable() || node.kernel->is_variable() || node.kernel->is_feedable()) return true;
  if (control_flow_ops().count(node.op())) return true;
  for (const char* part : kStatefulParts) {
    if (node.op().find(part) != std::string::npos) return true;
  }
  for (const InputSpec* spec : node.input_specs) {
    if (spec->is_ref) return true;
  }
  for (DataType dtype : node.output_dtypes) {
    if (!is_supported_dtype(dtype)) return true;  // variants, resources, strings
  }
  return false;
}

std::vector<int> topological_order(const Graph& graph) {
  const int n = graph.size();
  std::vector<int> pending(n, 0), order;
  std::vector<std::vector<int>> readers(n);
  for (int i = 0; i < n; ++i) {
    for (const Endpoint& input : graph.node(i).inputs) readers[input.node].push_back(i);
    for (int control : graph.node(i).control_inputs) readers[control].push_back(i);
    pending[i] = static_cast<int>(graph.node(i).inputs.size() + graph.node(i).control_inputs.size());
    if (!pending[i]) order.push_back(i);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (int reader : readers[order[k]]) {
      if (--pending[reader] == 0) order.push_back(reader);
    }
  }
  return order;
}

GraphReaders::GraphReaders(const Graph& graph) : graph_(graph), data_(graph.size()), control_(graph.size(), 0) {
  for (int i = 0; i < graph.size(); ++i) {
    for (const Endpoint& input : graph.node(i).inputs) data_[input.node].push_back(i);
    for (int control : graph.node(i).control_inputs) ++control_[control];
  }
}

std::vector<int> GraphReaders::private_uses(int producer, const PassContext& context) const {
  if (control_[producer] != 0 || context.fetched.count(graph_.node(producer).name())) return {};
  return data_[producer];
}

bool has_control_flow(const Graph& graph) {
  if (graph.def().has_library() && graph.def().library().function_size() > 0) return true;
  for (int i = 0; i < graph.size(); ++i) {
    if (control_flow_ops().count(graph.node(i).op())) return true;
  }
  return false;
}

graphdef::NodeDef const_node(const std::string& name, const Tensor& value) {
  graphdef::NodeDef node;
  node.set_name(name);
  node.set_op("Const");
  (*node.mutable_attr())["dtype"].set_type(value.dtype());
  graphdef::TensorProto& proto = *(*node.mutable_attr())["value"].mutable_tensor();
  proto.set_dtype(value.dtype());
  for (int64_t dim : value.shape()) proto.mutable_tensor_shape()->add_dim()->set_size(dim);
  // tensor_content is the element bytes in little-endian order, which is
  // this machine's order (as tensor_from_proto assumes too).
  proto.set_tensor_content(static_cast<const char*>(value.raw_data()), value.byte_size());
  return node;
}

void add_control_inputs(const graphdef::NodeDef& from, graphdef::NodeDef& to) {
  for (const std::string& input : from.input()) {
    if (input.empty() || input[0] != '^') continue;
    if (std::find(to.input().begin(), to.input().end(), input) == to.input().end()) to.add_input(input);
  }
}

std::string input_text(const std::string& node, int output) {
  return output == 0 ? node : node + ":" + std::to_string(output);
}

GraphEdit::GraphEdit(const Graph& graph)
    : graph_(graph), original_(graph.def()), edited_(graph.def().node_size()), removed_(graph.def().node_size(), 0) {}

const graphdef::NodeDef& GraphEdit::node(int i) const {
  const int originals = original_.node_size();
  if (i >= originals) return added_[i - originals];
  return edited_[i] ? *edited_[i] : original_.node(i);
}

graphdef::NodeDef& GraphEdit::mutable_node(int i) {
  const int originals = original_.node_size();
  changed_ = true;
  if (i >= originals) return added_[i - originals];
  if (!edited_[i]) edited_[i] = std::make_unique<graphdef::NodeDef>(original_.node(i));
  return *edited_[i];
}

int GraphEdit::find(const std::string& name) const {
  int i = graph_.find(name);
  if (i < 0) {
    const auto it = added_index_.find(name);
    if (it == added_index_.end()) return -1;
    i = it->second;
  }
  return removed_[i] ? -1 : i;
}

std::string GraphEdit::add(graphdef::NodeDef node, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph_.find(name) >= 0 || added_index_.count(name); ++k) name = base + "_" + std::to_string(k);
  node.set_name(name);
  added_index_[name] = size();
  added_.push_back(std::move(node));
  removed_.push_back(0);
  changed_ = true;
  return name;
}

void GraphEdit::redirect(const std::unordered_map<std::string, Move>& moves) {
  if (moves.empty()) return;
  // Where a reference ends up, following chains (an Identity of an Identity).
  auto resolve = [&](InputName name) {
    for (int hops = 0; hops <= size(); ++hops) {
      const auto it = moves.find(name.node);
      if (it == moves.end()) break;
      name.node = it->second.to;
      if (it->second.output >= 0 && !name.is_control) name.output = it->second.output;
    }
    return name;
  };
  for (int i = 0; i < size(); ++i) {
    if (removed_[i]) continue;
    bool touched = false;
    for (const std::string& text : node(i).input()) touched = touched || moves.count(parse_input_name(text).node);
    if (!touched) continue;  // left as it is, and not copied
    graphdef::NodeDef& edited = mutable_node(i);
    std::vector<std::string> inputs;
    std::unordered_set<std::string> data_nodes, controls;
    for (const std::string& text : edited.input()) {
      InputName name = parse_input_name(text);
      if (moves.count(name.node)) name = resolve(name);
      if (name.is_control) {
        inputs.push_back("^" + name.node);
      } else {
        data_nodes.insert(name.node);
        inputs.push_back(input_text(name.node, name.output));
      }
    }
    edited.clear_input();
    for (const std::string& text : inputs) {
      if (text[0] == '^') {
        const std::string target = text.substr(1);
        if (data_nodes.count(target) || !controls.insert(target).second) continue;
      }
      edited.add_input(text);
    }
  }
}

std::unique_ptr<graphdef::GraphDef> GraphEdit::finish() {
  auto def = std::make_unique<graphdef::GraphDef>();
  if (original_.has_library()) *def->mutable_library() = original_.library();
  if (original_.has_versions()) *def->mutable_versions() = original_.versions();
  def->mutable_node()->Reserve(size());
  const int originals = original_.node_size();
  for (int i = 0; i < size(); ++i) {
    if (removed_[i]) continue;
    if (i >= originals) {
      *def->add_node() = std::move(added_[i - originals]);
    } else if (edited_[i]) {
      *def->add_node() = std::move(*edited_[i]);
    } else {
      *def->add_node() = original_.node(i);
    }
  }
  edited_.clear();
  added_.clear();
  removed_.clear();
  added_index_.clear();
  return def;
}

Uses::Uses(const GraphEdit& edit) : data(edit.size(), 0), control(edit.size(), 0), other_outputs(edit.size(), 0) {
  const Graph& graph = edit.graph();
  for (int i = 0; i < edit.size(); ++i) {
    if (edit.removed(i)) continue;
    if (edit.pristine()) {
      // The Graph resolved these inputs already: no name to look up again.
      const GraphNode& node = graph.node(i);
      if (node.inputs.size() + node.control_inputs.size() == static_cast<std::size_t>(node.def->input_size())) {
        for (const Endpoint& input : node.inputs) {
          ++data[input.node];
          if (input.output != 0) other_outputs[input.node] = 1;
        }
        for (int producer : node.control_inputs) ++control[producer];
        continue;
      }
    }
    for (const std::string& text : edit.node(i).input()) {
      const InputName name = parse_input_name(text);
      const int producer = edit.find(name.node);
      if (producer < 0) continue;
      if (name.is_control) {
        ++control[producer];
      } else {
        ++data[producer];
        if (name.output != 0) other_outputs[producer] = 1;
      }
    }
  }
}

}  // namespace graphrun
