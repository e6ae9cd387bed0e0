#include "session/session.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "session/prepared.h"
#include "exec/run_targets.h"
#include "exec/unfed.h"
#include "exec/unsupported.h"
#include "graph/input_name.h"
#include "graph/shape_pattern.h"
#include "passes/pass.h"

namespace graphrun {

namespace {

// How messages name the session's graph: it has no file.
const char* const kSource = "graph";

// Each name with its length first, so no two different lists make one key.
void add_to_key(std::string& key, const std::string& name) {
  key += std::to_string(name.size());
  key += ':';
  key += name;
}

std::string placeholder_text(const GraphNode& node) {
  return node.name() + " (" + dtype_name(node.output_dtypes[0]) + ", " +
         pattern_string(node.kernel->attr(*node.def, "shape").shape()) + ")";
}

Tensor copy_of(const Tensor& value) {
  Tensor copy = Tensor::uninitialized(value.dtype(), value.shape());
  if (value.byte_size()) std::memcpy(copy.raw_data(), value.raw_data(), value.byte_size());
  return copy;
}

// The caller's elements, checked against the dtype and the count the shape
// makes; `what` names the value in messages ("feed 'x'").
int64_t checked_count(const BorrowedFeed& value, DataType dtype, const std::string& what) {
  int64_t count = 0;
  try {
    count = checked_num_elements(value.shape, dtype);
  } catch (const Error& error) {
    throw UsageError(what + ": " + error.what());
  }
  if (count > 0 && value.data == nullptr) throw UsageError(what + ": no data (a null pointer)");
  return count;
}

}  // namespace

std::unique_ptr<graphdef::GraphDef> parse_graph_bytes(const std::string& source, const void* data, std::size_t size) {
  if (size > 0 && data == nullptr)
    throw ModelError(source + ": no bytes (a null pointer for " + std::to_string(size) + ")");
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw ModelError(source + ": " + std::to_string(size) + " bytes, over protobuf's 2 GiB limit for a GraphDef");
  }
  auto proto = std::make_unique<graphdef::GraphDef>();
  if (size > 0 && !proto->ParseFromArray(data, static_cast<int>(size))) {
    throw ModelError(source + ": not a GraphDef (the protobuf does not parse)");
  }
  return proto;
}

struct Session::Request {
  std::vector<int> feeds;  // nodes of graph_, in the caller's order
  std::vector<Fetch> fetches;
  std::vector<int> targets;
  std::string key;  // what the plan cache knows it by
};

struct Session::Plan {
  std::unique_ptr<const Graph> optimized;  // null: the plan runs the session's graph
  const Graph* graph = nullptr;
  std::unordered_map<int, int> feed_node;  // graph_'s node -> the plan graph's
  std::unique_ptr<Executor> executor;      // after the graph it refers to, so it goes first
};

Session::Session(std::unique_ptr<graphdef::GraphDef> graph, bool optimize)
    : graph_(std::make_unique<const Graph>(kSource, std::move(graph))), optimize_(optimize && optimization_enabled()) {}

Session::~Session() = default;

void Session::extend(const graphdef::GraphDef& more) {
  auto merged = std::make_unique<graphdef::GraphDef>(graph_->def());
  std::unordered_map<std::string, int> at;
  for (int i = 0; i < merged->node_size(); ++i) at[merged->node(i).name()] = i;
  std::unordered_set<std::string> added;
  for (const graphdef::NodeDef& node : more.node()) {
    if (!added.insert(node.name()).second) {
      throw ModelError(std::string(kSource) + ": the extension defines node '" + node.name() + "' twice");
    }
    auto found = at.find(node.name());
    if (found != at.end()) {
      *merged->mutable_node(found->second) = node;
    } else {
      at.emplace(node.name(), merged->node_size());
      *merged->add_node() = node;
    }
  }
  graphdef::FunctionDefLibrary& library = *merged->mutable_library();
  for (const graphdef::FunctionDef& function : more.library().function()) {
    auto same = std::find_if(library.mutable_function()->begin(), library.mutable_function()->end(),
                             [&](const auto& f) { return f.signature().name() == function.signature().name(); });
    if (same != library.mutable_function()->end()) *same = function;
    else *library.add_function() = function;
  }
  for (const graphdef::GradientDef& gradient : more.library().gradient()) *library.add_gradient() = gradient;
  if (more.has_versions()) *merged->mutable_versions() = more.versions();

  // Validated before anything changes: a bad extension leaves the session as it was.
  auto grown = std::make_unique<const Graph>(kSource, std::move(merged));
  plans_.clear();  // their executors refer to the old graph
  graph_ = std::move(grown);
  std::vector<std::string> dropped;
  for (const auto& [name, value] : variables_.values()) {
    const int node = graph_->find(name);
    const bool kept = node >= 0 && graph_->node(node).kernel && graph_->node(node).kernel->is_variable() &&
                      graph_->node(node).runnable() && graph_->node(node).output_dtypes[0] == value->dtype();
    if (!kept) dropped.push_back(name);
  }
  for (const std::string& name : dropped) variables_.erase(name);
}

Session::Request Session::resolve(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                                  const std::vector<std::string>& targets) const {
  const Graph& graph = *graph_;
  Request request;
  for (const std::string& name : feeds) {
    const InputName parsed = parse_input_name(name);
    if (parsed.is_control) throw UsageError("cannot feed '" + name + "': a control input is not a tensor");
    const int node = graph.find(parsed.node);
    if (node < 0) {
      throw UsageError("unknown feed '" + name + "': no node is named '" + parsed.node + "'" +
                       fetch_hint(graph, parsed.node));
    }
    const GraphNode& fed = graph.node(node);
    const int outputs = static_cast<int>(fed.output_dtypes.size());
    if (parsed.output < 0 || parsed.output >= outputs) {
      throw UsageError("unknown feed '" + name + "': " + fed.describe() + " has " + std::to_string(outputs) +
                       (outputs == 1 ? " output" : " outputs"));
    }
    // The executor replaces a fed node by one value, its output 0.
    if (outputs > 1) {
      throw UsageError("cannot feed '" + name + "': this runtime feeds only a node with one output, and " +
                       fed.describe() + " has " + std::to_string(outputs));
    }
    if (!fed.runnable() || !is_supported_dtype(fed.output_dtypes[0])) {
      throw UsageError("cannot feed '" + name + "': graphrun-cc cannot hold the value of " + fed.describe() +
                       (fed.support == GraphNode::Support::kForeignDtype ? " (" + fed.foreign_dtype + ")" : ""));
    }
    if (std::find(request.feeds.begin(), request.feeds.end(), node) != request.feeds.end()) {
      throw UsageError("feed '" + name + "': " + fed.describe() + " is fed more than once");
    }
    request.feeds.push_back(node);
  }
  request.fetches = resolve_fetches(graph, fetches);
  request.targets = resolve_run_targets(graph, targets);

  std::vector<std::string> fed_names, target_names;
  for (int node : request.feeds) fed_names.push_back(graph.node(node).name());
  for (int node : request.targets) target_names.push_back(graph.node(node).name());
  std::sort(fed_names.begin(), fed_names.end());
  std::sort(target_names.begin(), target_names.end());
  target_names.erase(std::unique(target_names.begin(), target_names.end()), target_names.end());
  for (const std::string& name : fed_names) add_to_key(request.key, name);
  request.key += '|';
  for (const Fetch& fetch : request.fetches) add_to_key(request.key, fetch.name);
  request.key += '|';
  for (const std::string& name : target_names) add_to_key(request.key, name);
  return request;
}

void Session::check(const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets) const {
  const Request request = resolve(feeds, fetches, targets);
  FeedMap fed;
  for (int node : request.feeds) fed[node] = nullptr;
  std::vector<Endpoint> endpoints;
  for (const Fetch& fetch : request.fetches) endpoints.push_back(fetch.endpoint);
  check_supported(*graph_, request.targets, endpoints, fed);
}

std::unique_ptr<Session::Plan> Session::make_plan(const Request& request) const {
  const Graph& graph = *graph_;
  FeedMap fed;
  for (int node : request.feeds) fed[node] = nullptr;
  std::vector<Endpoint> endpoints;
  for (const Fetch& fetch : request.fetches) endpoints.push_back(fetch.endpoint);
  check_supported(graph, request.targets, endpoints, fed);
  const std::vector<int> missing = unfed_placeholders(graph, request.targets, endpoints, fed);
  if (!missing.empty()) {
    std::string names;
    for (int node : missing) names += (names.empty() ? "" : ", ") + placeholder_text(graph.node(node));
    throw UsageError(std::string(missing.size() > 1 ? "placeholders" : "placeholder") + " not fed: " + names +
                     "; feed a value for each");
  }

  auto plan = std::make_unique<Plan>();
  std::vector<int> targets = request.targets;
  if (optimize_) {
    // The passes rewrite a copy, keeping (by name) what this plan feeds, fetches and runs.
    Prepared prepared;
    prepared.graph = std::make_unique<const Graph>(graph.source(), std::make_unique<graphdef::GraphDef>(graph.def()));
    prepared.feeds = fed;
    prepared.runs = request.targets;
    prepared.fetches = request.fetches;
    optimize(prepared, true);
    plan->optimized = std::move(prepared.graph);
    plan->graph = plan->optimized.get();
    targets = prepared.runs;
    endpoints.clear();
    for (const Fetch& fetch : prepared.fetches) endpoints.push_back(fetch.endpoint);
    fed.clear();
    for (int node : request.feeds) {
      const int moved = plan->graph->find(graph.node(node).name());
      plan->feed_node[node] = moved;
      fed[moved] = nullptr;
    }
  } else {
    plan->graph = &graph;
    for (int node : request.feeds) plan->feed_node[node] = node;
  }
  plan->executor = std::make_unique<Executor>(*plan->graph, endpoints, targets, fed);
  return plan;
}

Session::Plan& Session::plan_for(const Request& request) {
  auto found = plans_.find(request.key);
  if (found != plans_.end()) return *found->second;
  std::unique_ptr<Plan> made = make_plan(request);
  if (plans_.size() >= kMaxPlans) plans_.clear();
  return *plans_.emplace(request.key, std::move(made)).first->second;
}

std::vector<TensorPtr> Session::run(const std::vector<BorrowedFeed>& feeds, const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets) {
  std::vector<std::string> names;
  for (const BorrowedFeed& feed : feeds) names.push_back(feed.name);
  const Request request = resolve(names, fetches, targets);

  std::vector<TensorPtr> values;
  for (std::size_t k = 0; k < feeds.size(); ++k) {
    const BorrowedFeed& feed = feeds[k];
    const GraphNode& node = graph_->node(request.feeds[k]);
    const std::string what = "feed '" + feed.name + "'";
    const DataType dtype = node.output_dtypes[0];
    if (feed.dtype != dtype_name(dtype)) {
      throw UsageError(what + ": the value is " + feed.dtype + " but " + node.describe() + " gives " +
                       dtype_name(dtype));
    }
    if (node.kernel->is_feedable()) {
      const graphdef::TensorShapeProto& pattern = node.kernel->attr(*node.def, "shape").shape();
      if (!shape_matches(pattern, feed.shape)) {
        throw UsageError(what + ": the value has shape " + shape_string(feed.shape) + " but " + node.describe() +
                         " takes " + pattern_string(pattern));
      }
    }
    const int64_t count = checked_count(feed, dtype, what);
    // The caller's memory, valid for the call only: kernels never write a
    // borrowed tensor, and what outlives the call is copied below.
    std::shared_ptr<const void> owner(feed.data, [](const void*) {});
    values.push_back(
        std::make_shared<const Tensor>(Tensor::borrowed(dtype, feed.shape, count, feed.data, std::move(owner))));
  }

  Plan& plan = plan_for(request);
  FeedMap fed;
  for (std::size_t k = 0; k < feeds.size(); ++k) fed[plan.feed_node.at(request.feeds[k])] = values[k];
  try {
    values = plan.executor->run(fed, variables_);
  } catch (...) {
    own_borrowed_values();  // a failed run may have assigned a feed before its failing node
    throw;
  }
  own_borrowed_values();
  for (TensorPtr& value : values) {
    if (value->is_borrowed()) value = std::make_shared<const Tensor>(copy_of(*value));
  }
  return values;
}

void Session::own_borrowed_values() {
  std::vector<std::string> borrowed;
  for (const auto& [name, value] : variables_.values()) {
    if (value->is_borrowed()) borrowed.push_back(name);
  }
  for (const std::string& name : borrowed) {
    try {
      variables_.write(name, std::make_shared<const Tensor>(copy_of(*variables_.read(name))));
    } catch (...) {
      variables_.erase(name);  // never keep memory the caller takes back
    }
  }
}

const GraphNode& Session::variable_node(const std::string& name) const {
  const int node = graph_->find(name);
  if (node >= 0 && graph_->node(node).kernel && graph_->node(node).kernel->is_variable()) {
    const GraphNode& variable = graph_->node(node);
    if (!variable.runnable()) {
      throw UsageError("variable '" + name + "': graphrun-cc cannot hold its dtype" +
                       (variable.foreign_dtype.empty() ? "" : " (" + variable.foreign_dtype + ")"));
    }
    return variable;
  }
  std::string listed;
  int count = 0;
  for (int i = 0; i < graph_->size(); ++i) {
    if (!graph_->node(i).kernel || !graph_->node(i).kernel->is_variable()) continue;
    if (count++ < 5) listed += (listed.empty() ? "" : ", ") + graph_->node(i).name();
  }
  if (count > 5) listed += " and " + std::to_string(count - 5) + " more";
  throw UsageError(
      "unknown variable '" + name +
      "': " + (node >= 0 ? graph_->node(node).describe() + " is not a VariableV2" : "no node is named '" + name + "'") +
      (count ? "; the graph's variables: " + listed : "; the graph has no variables"));
}

TensorPtr Session::read_variable(const std::string& name) const {
  variable_node(name);
  return variables_.contains(name) ? variables_.read(name) : nullptr;
}

void Session::assign_variable(const BorrowedFeed& value) {
  const GraphNode& node = variable_node(value.name);
  const DataType dtype = node.output_dtypes[0];
  const std::string what = "variable '" + value.name + "'";
  if (value.dtype != dtype_name(dtype)) {
    throw UsageError(what + ": the value is " + value.dtype + " but the variable holds " + dtype_name(dtype));
  }
  checked_count(value, dtype, what);
  Tensor copy = Tensor::uninitialized(dtype, value.shape);
  if (copy.byte_size()) std::memcpy(copy.raw_data(), value.data, copy.byte_size());
  variables_.write(value.name, std::make_shared<const Tensor>(std::move(copy)));
}

}  // namespace graphrun
