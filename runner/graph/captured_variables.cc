#include "graph/captured_variables.h"

#include <set>
#include <utility>
#include <vector>

#include "core/errors.h"

namespace graphrun {

namespace {

using Types = std::map<int, graphdef::DataType>;
using Frozen = std::map<std::string, graphdef::DataType>;
using Nodes = google::protobuf::RepeatedPtrField<graphdef::NodeDef>;

const std::set<std::string> kCallOps = {"StatefulPartitionedCall", "PartitionedCall"};
const std::set<std::string> kIfOps = {"If", "StatelessIf"};
const std::set<std::string> kWhileOps = {"While", "StatelessWhile"};
// Each (function, frozen arguments) pair is one copy; a hostile file could ask for exponentially many.
constexpr std::size_t kMaxCopies = 10000;

std::string node_of(const std::string& ref) {
  const std::size_t start = !ref.empty() && ref[0] == '^' ? 1 : 0;
  const std::size_t colon = ref.find(':', start);
  return ref.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
}

std::map<int, std::string> variable_keys(const graphdef::SavedObjectGraph& saved,
                                         const graphdef::TrackableObjectGraph& checkpoint) {
  std::map<int, std::string> keys;
  if (saved.nodes_size() == 0 || checkpoint.nodes_size() == 0) return keys;
  std::map<int, int> matched = {{0, 0}};
  std::vector<int> stack = {0};
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    const auto& object = saved.nodes(id);
    const auto& entry = checkpoint.nodes(matched[id]);
    if (object.kind_case() == graphdef::SavedObject::kVariable) {
      for (const auto& attribute : entry.attributes()) {
        if (attribute.name() == "VARIABLE_VALUE") keys[id] = attribute.checkpoint_key();
      }
    }
    std::map<std::string, int> by_name;
    for (const auto& child : entry.children()) by_name[child.local_name()] = child.node_id();
    for (const auto& child : object.children()) {
      auto other = by_name.find(child.local_name());
      if (other == by_name.end() || matched.count(child.node_id())) continue;
      if (child.node_id() < 0 || child.node_id() >= saved.nodes_size() || other->second < 0 ||
          other->second >= checkpoint.nodes_size()) {
        continue;
      }
      matched[child.node_id()] = other->second;
      stack.push_back(child.node_id());
    }
  }
  return keys;
}

class Freezer {
 public:
  explicit Freezer(graphdef::FunctionDefLibrary& library) : library_(library) {
    for (const auto& function : library_.function()) names_.insert(function.signature().name());
  }

  // Rewrites `nodes`; `frozen` maps references carrying a variable's value to
  // its dtype and grows as values flow on. Returns the ReadVariableOps made Identity.
  std::set<std::string> freeze(Nodes& nodes, Frozen& frozen, bool in_function) {
    auto out_ref = [&](const graphdef::NodeDef& node, int k) {
      if (in_function) return node.name() + ":output:" + std::to_string(k);
      return k == 0 ? node.name() : node.name() + ":" + std::to_string(k);
    };
    auto normal = [&](const std::string& ref) {
      const bool zero = ref.size() > 2 && ref.compare(ref.size() - 2, 2, ":0") == 0;
      return !in_function && zero ? ref.substr(0, ref.size() - 2) : ref;
    };
    std::map<std::string, std::pair<std::map<std::string, std::string>, Types>> originals;
    std::set<std::string> reads;
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& node : nodes) {
        Types positions;
        int index = 0;
        for (const auto& ref : node.input()) {
          if (!ref.empty() && ref[0] == '^') continue;
          auto found = frozen.find(normal(ref));
          if (found != frozen.end()) positions[index] = found->second;
          ++index;
        }
        if (positions.empty()) continue;
        if (node.op() == "ReadVariableOp") {
          auto attr = node.attr().find("dtype");
          const auto dtype = attr != node.attr().end() && attr->second.type() != graphdef::DT_INVALID
                                 ? attr->second.type()
                                 : positions.begin()->second;
          node.set_op("Identity");
          node.mutable_attr()->clear();
          (*node.mutable_attr())["T"].set_type(dtype);
          reads.insert(node.name());
        } else if (node.op() == "Identity" && !frozen.count(out_ref(node, 0)) && positions.count(0)) {
          frozen[out_ref(node, 0)] = positions[0];
          (*node.mutable_attr())["T"].set_type(positions[0]);
          node.mutable_attr()->erase("_output_shapes");
          changed = true;
        } else if (kCallOps.count(node.op()) || kIfOps.count(node.op()) || kWhileOps.count(node.op())) {
          auto seen = originals.find(node.name());
          if (seen != originals.end() && seen->second.second == positions) continue;
          if (seen == originals.end()) {
            std::map<std::string, std::string> funcs;
            for (const auto& [key, value] : node.attr()) {
              if (value.value_case() == graphdef::AttrValue::kFunc) funcs[key] = value.func().name();
            }
            seen = originals.emplace(node.name(), std::make_pair(funcs, Types())).first;
          }
          seen->second.second = positions;
          for (const auto& [k, dtype] : retype(node, seen->second.first, positions)) {
            if (frozen.emplace(out_ref(node, k), dtype).second) changed = true;
          }
        }
      }
    }
    return reads;
  }

 private:
  // The copy of function `name` whose arguments `args` are values, not handles,
  // and which of its results are values too.
  std::pair<std::string, Types> specialize(const std::string& name, const Types& args) {
    const auto key = std::make_pair(name, args);
    auto made = made_.find(key);
    if (made != made_.end()) return made->second;
    const graphdef::FunctionDef* source = nullptr;
    for (const auto& function : library_.function()) {
      if (function.signature().name() == name) source = &function;
    }
    if (source == nullptr) return {name, {}};
    if (made_.size() >= kMaxCopies) {
      throw ModelError("freezing the SavedModel's variables would copy more than " + std::to_string(kMaxCopies) +
                       " functions");
    }
    graphdef::FunctionDef* copy = library_.add_function();  // elements keep their addresses
    *copy = *source;
    std::string fresh = name + "_frozen";
    for (int k = 1; names_.count(fresh); ++k) fresh = name + "_frozen_" + std::to_string(k);
    names_.insert(fresh);
    copy->mutable_signature()->set_name(fresh);
    made_[key] = {fresh, {}};
    Frozen frozen;
    for (const auto& [index, dtype] : args) {
      if (index >= copy->signature().input_arg_size()) continue;
      auto* arg = copy->mutable_signature()->mutable_input_arg(index);
      arg->set_type(dtype);
      frozen[arg->name()] = dtype;
      auto attrs = copy->mutable_arg_attr()->find(static_cast<uint32_t>(index));
      // a handle's recorded shape is a scalar's, not the value's
      if (attrs != copy->mutable_arg_attr()->end()) attrs->second.mutable_attr()->erase("_output_shapes");
    }
    const std::set<std::string> reads = freeze(*copy->mutable_node_def(), frozen, true);
    rename_read_outputs(*copy, reads);
    Types outputs;
    for (int k = 0; k < copy->signature().output_arg_size(); ++k) {
      auto* arg = copy->mutable_signature()->mutable_output_arg(k);
      auto ret = copy->ret().find(arg->name());
      if (ret == copy->ret().end()) continue;
      auto value = frozen.find(ret->second);
      if (value == frozen.end()) continue;
      arg->set_type(value->second);
      outputs[k] = value->second;
    }
    made_[key] = {fresh, outputs};
    return made_[key];
  }

  // Points a call/If/While node at its functions' frozen copies; returns its frozen outputs.
  Types retype(graphdef::NodeDef& node, const std::map<std::string, std::string>& funcs, const Types& positions) {
    const int offset = kIfOps.count(node.op()) ? 1 : 0;
    const bool loop = kWhileOps.count(node.op()) > 0;
    Types args;
    for (const auto& [i, dtype] : positions) {
      if (i >= offset) args[i - offset] = dtype;
    }
    auto* types = (*node.mutable_attr())[loop ? "T" : "Tin"].mutable_list();
    for (const auto& [i, dtype] : args) {
      if (i < types->type_size()) types->set_type(i, dtype);
    }
    Types outputs;
    for (const auto& [attr, name] : funcs) {
      const auto [fresh, frozen_out] = specialize(name, args);
      (*node.mutable_attr())[attr].mutable_func()->set_name(fresh);
      if (attr != "cond") outputs.insert(frozen_out.begin(), frozen_out.end());
    }
    if (!loop) {
      auto* out_types = (*node.mutable_attr())["Tout"].mutable_list();
      for (const auto& [k, dtype] : outputs) {
        if (k < out_types->type_size()) out_types->set_type(k, dtype);
      }
    }
    auto shapes = node.mutable_attr()->find("output_shapes");
    for (const auto& [k, dtype] : outputs) {  // a handle's recorded shape is a scalar's, not the value's
      if (shapes == node.mutable_attr()->end() || k >= shapes->second.list().shape_size()) continue;
      graphdef::TensorShapeProto* shape = shapes->second.mutable_list()->mutable_shape(k);
      shape->Clear();
      shape->set_unknown_rank(true);
    }
    node.mutable_attr()->erase("_read_only_resource_inputs");
    node.mutable_attr()->erase("_output_shapes");
    return outputs;
  }

  // Inside a function a ReadVariableOp's result is "node:value:k", an Identity's "node:output:k".
  static void rename_read_outputs(graphdef::FunctionDef& function, const std::set<std::string>& reads) {
    auto renamed = [&](const std::string& ref) {
      const std::size_t start = !ref.empty() && ref[0] == '^' ? 1 : 0;
      const std::size_t first = ref.find(':', start);
      if (first == std::string::npos || !reads.count(ref.substr(start, first - start))) return ref;
      const std::size_t second = ref.find(':', first + 1);
      if (second == std::string::npos || ref.compare(first + 1, second - first - 1, "value") != 0) return ref;
      return ref.substr(0, first) + ":output" + ref.substr(second);
    };
    for (auto& node : *function.mutable_node_def()) {
      for (auto& ref : *node.mutable_input()) ref = renamed(ref);
    }
    for (auto& [key, ref] : *function.mutable_ret()) ref = renamed(ref);
  }

  graphdef::FunctionDefLibrary& library_;
  std::set<std::string> names_;
  std::map<std::pair<std::string, Types>, std::pair<std::string, Types>> made_;
};

void add_called(const Nodes& nodes, const std::set<std::string>& functions, std::vector<std::string>& out) {
  for (const auto& node : nodes) {
    if (functions.count(node.op())) out.push_back(node.op());
    for (const auto& [key, value] : node.attr()) {
      if (value.value_case() == graphdef::AttrValue::kFunc) out.push_back(value.func().name());
      if (value.value_case() == graphdef::AttrValue::kList) {
        for (const auto& func : value.list().func()) out.push_back(func.name());
      }
    }
  }
}

void keep_called_functions(graphdef::GraphDef& graph) {
  std::map<std::string, const graphdef::FunctionDef*> functions;
  std::set<std::string> names;
  for (const auto& function : graph.library().function()) {
    functions[function.signature().name()] = &function;
    names.insert(function.signature().name());
  }
  std::set<std::string> kept;
  std::vector<std::string> stack;
  add_called(graph.node(), names, stack);
  while (!stack.empty()) {
    const std::string name = stack.back();
    stack.pop_back();
    if (!functions.count(name) || !kept.insert(name).second) continue;
    add_called(functions[name]->node_def(), names, stack);
  }
  google::protobuf::RepeatedPtrField<graphdef::FunctionDef> all;
  all.Swap(graph.mutable_library()->mutable_function());
  for (auto& function : all) {
    if (kept.count(function.signature().name())) *graph.mutable_library()->add_function() = std::move(function);
  }
}

}  // namespace

std::map<std::string, std::string> captured_variables(const graphdef::MetaGraphDef& meta,
                                                      const graphdef::TrackableObjectGraph& checkpoint_objects) {
  const auto keys = variable_keys(meta.object_graph_def(), checkpoint_objects);
  const auto& functions = meta.object_graph_def().concrete_functions();
  std::map<std::string, std::string> out;
  for (const auto& node : meta.graph_def().node()) {
    if (!kCallOps.count(node.op())) continue;
    auto f = node.attr().find("f");
    if (f == node.attr().end()) continue;
    auto function = functions.find(f->second.func().name());
    if (function == functions.end()) continue;
    std::vector<std::string> data;
    for (const auto& ref : node.input()) {
      if (ref.empty() || ref[0] != '^') data.push_back(ref);
    }
    const auto& bound = function->second.bound_inputs();
    if (bound.empty() || bound.size() > static_cast<int>(data.size())) continue;
    const std::size_t first = data.size() - bound.size();
    for (int i = 0; i < bound.size(); ++i) {
      auto key = keys.find(bound[i]);
      if (key != keys.end()) out[node_of(data[first + i])] = key->second;
    }
  }
  return out;
}

void freeze_resource_flow(graphdef::GraphDef& graph, const std::map<std::string, graphdef::DataType>& variables) {
  Frozen frozen(variables.begin(), variables.end());
  Freezer(*graph.mutable_library()).freeze(*graph.mutable_node(), frozen, false);
  keep_called_functions(graph);
}

}  // namespace graphrun
