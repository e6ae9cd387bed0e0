#include "graph/functions.h"

#include <algorithm>
#include <utility>
#include <vector>
#include <string>
#include <map>
#include <set>

#include "core/errors.h"
#include "graph/input_name.h"

namespace graphrun {

namespace {

// How each functional op calls: the func attr, the list(type) attr its
// arguments follow, and the one its results follow ("" for a condition, which
// returns one tensor of any dtype). Python's graphdef/ops/functional.py CALLS.
struct CallRule {
  const char* func_attr;
  const char* args_attr;
  const char* results_attr;
};

const std::vector<CallRule>* call_rules(const std::string& op) {
  static const std::map<std::string, std::vector<CallRule>> rules = {
      {"PartitionedCall", {{"f", "Tin", "Tout"}}},
      {"StatefulPartitionedCall", {{"f", "Tin", "Tout"}}},
      {"If", {{"then_branch", "Tin", "Tout"}, {"else_branch", "Tin", "Tout"}}},
      {"StatelessIf", {{"then_branch", "Tin", "Tout"}, {"else_branch", "Tin", "Tout"}}},
      {"While", {{"cond", "T", ""}, {"body", "T", "T"}}},
      {"StatelessWhile", {{"cond", "T", ""}, {"body", "T", "T"}}},
  };
  auto found = rules.find(op);
  return found == rules.end() ? nullptr : &found->second;
}

std::string dtype_names(const std::vector<DataType>& dtypes) {
  std::string out;
  for (DataType dtype : dtypes) out += (out.empty() ? "" : ", ") + dtype_name(dtype);
  return out;
}

// A function's argument or result dtype: fixed, or from one of its attrs.
DataType arg_dtype(const graphdef::FunctionDef& fdef, const graphdef::OpDef::ArgDef& arg, const std::string& role) {
  if (!arg.number_attr().empty() || !arg.type_list_attr().empty()) {
    throw Error(role + " '" + arg.name() + "' is a list; only single-tensor arguments and results are supported");
  }
  if (arg.type_attr().empty()) return arg.type();
  auto found = fdef.attr().find(arg.type_attr());
  if (found == fdef.attr().end() || found->second.value_case() != graphdef::AttrValue::kType) {
    throw Error(role + " '" + arg.name() + "' takes its dtype from attr '" + arg.type_attr() +
                "', which the function does not set");
  }
  return found->second.type();
}

// output arg name -> (first flat output, count) of a body node, from its
// kernel's declaration; empty when the op has no kernel (validation names it).
using OutputTable = std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>>;

OutputTable output_table(const graphdef::NodeDef& node) {
  OutputTable table;
  const Kernel* kernel = KernelRegistry::find(node.op());
  if (kernel == nullptr) return table;
  int64_t start = 0;
  for (const Kernel::OutputSpec& out : kernel->outputs()) {
    int64_t count = 1;
    auto attr = node.attr().find(out.type_list ? out.type_attr : out.number_attr);
    if (out.type_list) {
      count = attr == node.attr().end() ? 0 : attr->second.list().type_size();
    } else if (!out.number_attr.empty()) {
      count = attr == node.attr().end() ? 0 : std::max<int64_t>(attr->second.i(), 0);
    }
    table.push_back({out.name, {start, count}});
    start += count;
  }
  return table;
}

// "node:out_arg:i" -> "node:k"; an argument's name and "^node" stay as they are.
std::string plain_input(const std::string& text, const std::map<std::string, OutputTable>& tables,
                        const std::string& where) {
  if (!text.empty() && text[0] == '^') return text;
  const std::size_t first = text.find(':');
  if (first == std::string::npos) return text;
  const std::size_t second = text.find(':', first + 1);
  const std::string index_text = second == std::string::npos ? "" : text.substr(second + 1);
  if (second == std::string::npos || index_text.empty() || index_text.size() > 9 ||
      index_text.find_first_not_of("0123456789") != std::string::npos) {
    throw Error(where + ": input '" + text + "' is neither an argument nor 'node:output:index'");
  }
  const std::string node = text.substr(0, first);
  const std::string arg = text.substr(first + 1, second - first - 1);
  const int64_t index = std::stoll(index_text);
  auto table = tables.find(node);
  if (table == tables.end()) throw Error(where + ": input '" + text + "' names no node of the body");
  if (table->second.empty()) return node + ":" + index_text;  // no kernel: validation reports the op
  const std::pair<int64_t, int64_t>* span = nullptr;
  if (table->second.size() == 1) {
    span = &table->second[0].second;  // one output arg: its name is not needed
  } else {
    for (const auto& [name, range] : table->second) {
      if (name == arg) span = &range;
    }
  }
  if (span == nullptr) throw Error(where + ": input '" + text + "': the node has no output '" + arg + "'");
  if (index >= span->second) {
    throw Error(where + ": input '" + text + "': output '" + arg + "' has " + std::to_string(span->second) +
                " tensors");
  }
  return node + ":" + std::to_string(span->first + index);
}

// The call budget, counted as graphdef/wire/call_budget.py counts it, so both
// runtimes refuse the same files in the same words.
constexpr uint64_t kOver = kMaxCalls + 1;  // counts saturate here

uint64_t saturate(uint64_t value) { return std::min(value, kOver); }

// The function each call attr of `node` names, one call each, in CALLS order.
template <class Visit>
void for_each_call(const graphdef::NodeDef& node, Visit visit) {
  const std::vector<CallRule>* rules = call_rules(node.op());
  if (rules == nullptr) return;
  for (const CallRule& rule : *rules) {
    auto found = node.attr().find(rule.func_attr);
    if (found == node.attr().end() || found->second.value_case() != graphdef::AttrValue::kFunc) continue;
    visit(rule.func_attr, found->second.func().name());
  }
}

struct CallCost {
  uint64_t calls = 0;  // calls one call of the function makes, nested ones included
  uint64_t nodes = 0;  // nodes it runs, its callees' included
  int64_t depth = 0;   // how deep its calls nest, itself included
};

// Tarjan's strongly connected components, iterative: a chain of calls may be
// far longer than the stack. A function in a cycle is bounded at run time by
// the depth limit; one calling into its cycle more than once per call would
// multiply at every level, and counts as over the budget.
class CallBudget {
 public:
  explicit CallBudget(const std::map<std::string, const graphdef::FunctionDef*>& defs) : defs_(defs) {}

  // Costs `root` and all it reaches; false at once if a chain of calls from it
  // nests deeper than kMaxCallDepth.
  bool visit(const std::string& root) {
    std::vector<std::pair<std::string, std::size_t>> work{{root, 0}};
    while (!work.empty()) {
      auto [name, i] = work.back();
      work.pop_back();
      if (i == 0) {
        if (work.size() >= static_cast<std::size_t>(kMaxCallDepth)) return false;
        index_[name] = low_[name] = counter_++;
        stack_.push_back(name);
        on_stack_.insert(name);
      }
      const std::vector<std::string>& out = callees(name);
      if (i < out.size()) {
        work.emplace_back(name, i + 1);
        const std::string& callee = out[i];
        if (index_.count(callee) == 0) {
          work.emplace_back(callee, 0);
        } else if (on_stack_.count(callee) != 0) {
          low_[name] = std::min(low_[name], index_[callee]);
        }
        continue;
      }
      if (!work.empty()) {
        const std::string& caller = work.back().first;
        low_[caller] = std::min(low_[caller], low_[name]);
      }
      if (low_[name] == index_[name]) {
        std::vector<std::string> component;
        while (true) {
          std::string member = stack_.back();
          stack_.pop_back();
          on_stack_.erase(member);
          component.push_back(member);
          if (member == name) break;
        }
        cost_component(component);
      }
    }
    return true;
  }

  bool known(const std::string& name) const { return cost_.count(name) != 0; }
  const CallCost& cost(const std::string& name) const { return cost_.at(name); }

 private:
  const std::vector<std::string>& callees(const std::string& name) {
    auto found = callees_.find(name);
    if (found != callees_.end()) return found->second;
    std::vector<std::string>& out = callees_[name];
    for (const graphdef::NodeDef& node : defs_.at(name)->node_def()) {
      for_each_call(node, [&](const char*, const std::string& callee) {
        if (defs_.count(callee) != 0) out.push_back(callee);
      });
    }
    return out;
  }

  void cost_component(const std::vector<std::string>& component) {
    const std::set<std::string> members(component.begin(), component.end());
    CallCost total;
    int inward = 0;
    for (const std::string& name : component) {
      total.nodes = saturate(total.nodes + static_cast<uint64_t>(defs_.at(name)->node_def_size()));
      int into = 0;
      for (const std::string& callee : callees(name)) {
        if (members.count(callee) != 0) {
          ++into;
          continue;
        }
        const CallCost& c = cost_.at(callee);
        total.calls = saturate(total.calls + 1 + c.calls);
        total.nodes = saturate(total.nodes + c.nodes);
        total.depth = std::max(total.depth, c.depth);
      }
      inward = std::max(inward, into);
    }
    total.depth += 1;  // a cycle's own depth is bounded at run time
    if (inward > 1) {
      total.calls = total.nodes = kOver;
    } else if (inward == 1) {
      total.calls = saturate(kMaxCallDepth * (total.calls + 1));
      total.nodes = saturate(kMaxCallDepth * total.nodes);
    }
    for (const std::string& name : component) cost_[name] = total;
  }

  const std::map<std::string, const graphdef::FunctionDef*>& defs_;
  std::map<std::string, std::vector<std::string>> callees_;
  std::map<std::string, CallCost> cost_;
  std::map<std::string, int64_t> index_, low_;
  std::set<std::string> on_stack_;
  std::vector<std::string> stack_;
  int64_t counter_ = 0;
};

}  // namespace

FunctionLibrary::FunctionLibrary(std::string source, const graphdef::FunctionDefLibrary& proto)
    : source_(std::move(source)) {
  for (const graphdef::FunctionDef& fdef : proto.function()) {
    const std::string& name = fdef.signature().name();
    if (name.empty()) fail("the library holds a function without a name");
    if (!defs_.emplace(name, &fdef).second) fail("function '" + name + "' is defined twice");
  }
}

FunctionLibrary::~FunctionLibrary() = default;

void FunctionLibrary::fail(const std::string& reason) const { throw ModelError(source_ + ": " + reason); }

const FunctionBody* FunctionLibrary::find(const std::string& name) const {
  auto found = bodies_.find(name);
  return found == bodies_.end() ? nullptr : found->second.get();
}

void FunctionLibrary::check_call_budget(const Graph& root) const {
  if (defs_.empty()) return;
  CallBudget budget(defs_);
  uint64_t calls = 0, nodes = 0;
  for (int i = 0; i < root.size(); ++i) {
    const GraphNode& node = root.node(i);
    for_each_call(*node.def, [&](const char* attr, const std::string& name) {
      if (defs_.count(name) == 0) return;  // refused where calls are checked, naming the function
      const std::string where = node.describe() + ": attr '" + attr + "' calls '" + name + "'";
      const std::string too_deep =
          where + ", whose calls nest more than " + std::to_string(kMaxCallDepth) + " deep, the most a run allows";
      if (!budget.known(name) && !budget.visit(name)) fail(too_deep);
      const CallCost& cost = budget.cost(name);
      if (cost.depth > kMaxCallDepth) fail(too_deep);
      calls = saturate(calls + 1 + cost.calls);
      nodes = saturate(nodes + cost.nodes);
      if (calls > kMaxCalls || nodes > kMaxCalls) {
        fail(where + ": the graph's calls would run more than " + std::to_string(kMaxCalls) +
             (calls > kMaxCalls ? " function calls" : " nodes in function calls") + ", the budget a file may ask for");
      }
    });
  }
}

void FunctionLibrary::instantiate_called(const Graph& root) {
  check_call_budget(root);
  std::vector<const FunctionBody*> pending;
  check_calls(root, pending);
  while (!pending.empty()) {
    const FunctionBody* body = pending.back();
    pending.pop_back();
    check_calls(*body->graph, pending);
  }
}

void FunctionLibrary::check_calls(const Graph& graph, std::vector<const FunctionBody*>& pending) {
  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    const std::vector<CallRule>* rules = call_rules(node.op());
    // A call node that cannot run (a foreign dtype in its attrs) is refused when a run needs it.
    if (rules == nullptr || !node.runnable()) continue;
    for (const CallRule& rule : *rules) {
      const std::string where = node.describe() + ": attr '" + rule.func_attr + "'";
      const std::string& name = node.kernel->attr(*node.def, rule.func_attr).func().name();
      const bool is_new = bodies_.count(name) == 0;
      const FunctionBody& body = instantiate(name, where);
      if (is_new) pending.push_back(&body);
      const std::string calls = where + " calls '" + name + "'";
      std::vector<DataType> args, results, passed, expected;
      for (int a : body.args) args.push_back(body.graph->node(a).output_dtypes[0]);
      for (const Endpoint& e : body.outputs) results.push_back(body.graph->node(e.node).output_dtypes[e.output]);
      for (int t : node.kernel->attr(*node.def, rule.args_attr).list().type())
        passed.push_back(static_cast<DataType>(t));
      if (args != passed) {
        fail(calls + ", which takes (" + dtype_names(args) + ") but the node passes (" + dtype_names(passed) + ")");
      }
      if (rule.results_attr[0] == '\0') {
        if (results.size() != 1) {
          fail(calls + ", a condition, which must return one tensor but returns " + std::to_string(results.size()));
        }
        continue;
      }
      for (int t : node.kernel->attr(*node.def, rule.results_attr).list().type()) {
        expected.push_back(static_cast<DataType>(t));
      }
      if (results != expected) {
        fail(calls + ", which returns (" + dtype_names(results) + ") but the node expects (" + dtype_names(expected) +
             ")");
      }
    }
  }
}

const FunctionBody& FunctionLibrary::instantiate(const std::string& name, const std::string& where) {
  if (const FunctionBody* known = find(name)) return *known;
  auto def = defs_.find(name);
  if (def == defs_.end()) fail(where + ": the graph's library has no function '" + name + "'");
  const graphdef::FunctionDef& fdef = *def->second;
  const graphdef::OpDef& sig = fdef.signature();
  const std::string context = "function '" + name + "'";
  auto graph_def = std::make_unique<graphdef::GraphDef>();
  try {
    for (int i = 0; i < sig.input_arg_size(); ++i) {
      const graphdef::OpDef::ArgDef& arg = sig.input_arg(i);
      graphdef::NodeDef* node = graph_def->add_node();
      node->set_name(arg.name());
      node->set_op("Placeholder");
      (*node->mutable_attr())["dtype"].set_type(arg_dtype(fdef, arg, "argument"));
      graphdef::TensorShapeProto* shape = (*node->mutable_attr())["shape"].mutable_shape();
      shape->set_unknown_rank(true);
      auto attrs = fdef.arg_attr().find(static_cast<uint32_t>(i));
      if (attrs != fdef.arg_attr().end()) {
        auto shapes = attrs->second.attr().find("_output_shapes");
        if (shapes != attrs->second.attr().end() && shapes->second.list().shape_size() == 1) {
          *shape = shapes->second.list().shape(0);
        }
      }
    }
    std::map<std::string, OutputTable> tables;
    for (const graphdef::NodeDef& node : fdef.node_def()) tables[node.name()] = output_table(node);
    for (const graphdef::NodeDef& body_node : fdef.node_def()) {
      graphdef::NodeDef* node = graph_def->add_node();
      *node = body_node;
      node->clear_input();
      for (const std::string& text : body_node.input()) {
        node->add_input(plain_input(text, tables, "node '" + body_node.name() + "'"));
      }
    }
    auto body = std::make_unique<FunctionBody>();
    body->name = name;
    std::vector<std::string> rets;
    for (const graphdef::OpDef::ArgDef& arg : sig.output_arg()) {
      arg_dtype(fdef, arg, "result");
      auto ret = fdef.ret().find(arg.name());
      if (ret == fdef.ret().end()) throw Error("result '" + arg.name() + "' has no entry in ret");
      rets.push_back(plain_input(ret->second, tables, "result '" + arg.name() + "'"));
    }
    body->graph = std::make_unique<const Graph>(source_ + ": " + context, std::move(graph_def), this);
    const Graph& graph = *body->graph;
    // A call runs the whole body, so what graphrun-cc cannot run there is refused now, by name.
    std::string cannot;
    for (int i = 0; i < graph.size(); ++i) {
      const GraphNode& node = graph.node(i);
      if (!node.unsupported_itself()) continue;
      cannot += (cannot.empty() ? "" : ", ") + node.op() + " (" + node.name() + ")";
    }
    if (!cannot.empty()) throw Error("graphrun-cc cannot run " + cannot);
    for (const graphdef::OpDef::ArgDef& arg : sig.input_arg()) body->args.push_back(graph.find(arg.name()));
    for (const std::string& ret : rets) {
      const InputName input = parse_input_name(ret);
      const int node = graph.find(input.node);
      if (node < 0 || input.output < 0 || input.output >= static_cast<int>(graph.node(node).output_dtypes.size())) {
        throw Error("result '" + ret + "' names no tensor of the body");
      }
      body->outputs.push_back({node, input.output});
    }
    for (const std::string& control : sig.control_output()) {
      auto target = fdef.control_ret().find(control);
      const int node = target == fdef.control_ret().end() ? -1 : graph.find(target->second);
      if (node < 0) throw Error("control output '" + control + "' names no node of the body");
      body->control.push_back(node);
    }
    FunctionBody& stored = *body;
    bodies_[name] = std::move(body);
    return stored;
  } catch (const ExitError&) {
    throw;
  } catch (const Error& error) {
    fail(context + ": " + error.what());
  }
}

}  // namespace graphrun
