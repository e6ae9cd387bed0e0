// Everything about a graph is checked here, before any node runs, so a bad
// model fails fast with exit code 3 and never half-way through a computation.
#include <algorithm>
#include <map>
#include <new>

#include "core/errors.h"
#include "graph/graph.h"
#include "graph/input_name.h"

namespace graphrun {

void Graph::validate() {
  nodes_.resize(proto_->node_size());
  for (int i = 0; i < size(); ++i) nodes_[i].def = &proto_->node(i);
  check_names();
  check_ops_known();
  check_attrs();
  resolve_inputs();
  check_input_dtypes();
  check_acyclic();
}

void Graph::check_names() {
  index_.reserve(nodes_.size());
  for (int i = 0; i < size(); ++i) {
    const std::string& name = nodes_[i].name();
    if (name.empty()) fail("node #" + std::to_string(i) + " (" + nodes_[i].op() + ") has no name");
    if (!index_.emplace(name, i).second) fail("node name '" + name + "' is not unique");
  }
}

void Graph::check_ops_known() {
  // One message for every unknown op type, so a user sees at once everything
  // the model needs that graphrun-cc lacks.
  std::vector<std::string> unknown_ops;  // first-appearance order
  std::map<std::string, std::vector<const std::string*>> nodes_by_op;
  for (GraphNode& node : nodes_) {
    node.kernel = KernelRegistry::find(node.op());
    if (node.kernel != nullptr) continue;
    auto& names = nodes_by_op[node.op()];
    if (names.empty()) unknown_ops.push_back(node.op());
    names.push_back(&node.name());
  }
  if (unknown_ops.empty()) return;
  std::string message = "no kernel for ";
  for (std::size_t i = 0; i < unknown_ops.size(); ++i) {
    const auto& names = nodes_by_op[unknown_ops[i]];
    if (i > 0) message += ", ";
    message += (unknown_ops[i].empty() ? "an empty op type" : unknown_ops[i]) + " (" + *names[0];
    if (names.size() > 1) message += " and " + std::to_string(names.size() - 1) + " more";
    message += ")";
  }
  fail(message);
}

void Graph::check_attrs() {
  for (GraphNode& node : nodes_) {
    try {
      node.kernel->validate_attrs(*node.def);
      node.output_dtypes = node.kernel->output_dtypes(*node.def);
    } catch (const Error& error) {
      fail(node.describe() + ": " + error.what());
    }
  }
}

void Graph::resolve_inputs() {
  for (GraphNode& node : nodes_) {
    const Kernel& kernel = *node.kernel;
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
             (input.output < 0 ? std::string("beyond int range") : std::to_string(input.output)) +
             " of " + nodes_[producer].describe() + ", which has " + std::to_string(produced) +
             (produced == 1 ? " output" : " outputs"));
      }
      node.inputs.push_back({producer, input.output});
    }
    const int got = static_cast<int>(node.inputs.size());
    const int64_t expected = kernel.num_inputs(*node.def);
    if (got != expected) {
      fail(node.describe() + ": has " + std::to_string(got) + " data input" + (got == 1 ? "" : "s") +
           " but " + node.op() + " takes " + std::to_string(expected));
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

void Graph::check_input_dtypes() {
  for (const GraphNode& node : nodes_) {
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
