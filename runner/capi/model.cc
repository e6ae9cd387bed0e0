#include "capi/model.h"

#include <cstring>
#include <new>

#include "exec/fetches.h"
#include "session/prepared.h"
#include "exec/unfed.h"
#include "exec/unsupported.h"
#include "exec/variable_store.h"
#include "graph/input_name.h"
#include "graph/shape_inference.h"
#include "graph/shape_pattern.h"

// OpenMP's own API (libgomp, which oneDNN and parallel_for run on), declared
// here as core/parallel.cc does rather than through omp.h.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int count);
}

namespace graphrun {

namespace {

// The calling thread's OpenMP thread count for a scope: OpenMP keeps it per
// thread, and oneDNN and parallel_for read it when they start their work.
class ThreadCount {
 public:
  explicit ThreadCount(int threads) : saved_(threads > 0 ? omp_get_max_threads() : 0) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadCount() {
    if (saved_ > 0) omp_set_num_threads(saved_);
  }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// The name a run uses for an output: TensorFlow's ("node" for output 0).
std::string output_request_name(const GraphNode& node, int output) {
  return output == 0 ? node.name() : tensor_name(node.name(), output);
}

std::string strip_zero(const std::string& name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) return name.substr(0, name.size() - 2);
  return name;
}

std::string describe(const TensorInfo& info) {
  std::string shape = "<unknown>";
  if (info.rank >= 0) {
    shape = "[";
    for (int i = 0; i < info.rank; ++i)
      shape += (i ? "," : "") + (info.dims[i] < 0 ? "?" : std::to_string(info.dims[i]));
    shape += "]";
  }
  return info.name + " (" + info.dtype + ", " + shape + ")";
}

std::string listing(const std::vector<TensorInfo>& infos, const char* what) {
  if (infos.empty()) return std::string("the model has no ") + what;
  std::string text = std::string("the model's ") + what + ": ";
  for (std::size_t i = 0; i < infos.size(); ++i) text += (i ? ", " : "") + describe(infos[i]);
  return text;
}

}  // namespace

CapiModel::CapiModel(const std::string& path, const std::string& signature, bool optimize_graph) {
  Prepared prepared;
  prepared.graph = Graph::load(path, signature);
  const Graph& graph = *prepared.graph;
  const std::vector<std::vector<StaticShape>> shapes = infer_shapes(graph);

  for (int i = 0; i < graph.size(); ++i) {
    const GraphNode& node = graph.node(i);
    if (!node.kernel->is_feedable() || is_lowering_residue(node)) continue;
    TensorInfo info;
    info.name = node.name();
    info.dtype = dtype_name(node.output_dtypes[0]);
    const graphdef::TensorShapeProto& pattern = node.kernel->attr(*node.def, "shape").shape();
    if (!pattern.unknown_rank()) {
      info.rank = pattern.dim_size();
      for (const auto& dim : pattern.dim()) info.dims.push_back(dim.size() < 0 ? -1 : dim.size());
    }
    info.required = node.kernel->must_be_fed();
    info.endpoint = {i, 0};
    // Every input counts as fed below: what feeds it is never needed, and the passes keep it.
    prepared.feeds[i] = nullptr;
    inputs_.push_back(std::move(info));
  }
  for (const Fetch& fetch : default_fetches(graph)) {
    const GraphNode& node = graph.node(fetch.endpoint.node);
    TensorInfo info;
    info.name = output_request_name(node, fetch.endpoint.output);
    info.dtype = dtype_name(node.output_dtypes[fetch.endpoint.output]);
    const StaticShape& shape = shapes[fetch.endpoint.node][fetch.endpoint.output];
    if (shape.known_rank) {
      info.rank = static_cast<int>(shape.dims.size());
      info.dims = shape.dims;
    }
    info.endpoint = fetch.endpoint;
    outputs_.push_back(std::move(info));
    prepared.fetches.push_back(fetch);
  }

  // String tensors do not cross the C API yet (a caller would get no layout for them).
  for (const std::vector<TensorInfo>* side : {&inputs_, &outputs_}) {
    for (const TensorInfo& info : *side) {
      if (info.dtype == "string") {
        throw UnsupportedError(graph.source() + ": string tensors, which the C API cannot hold yet: '" + info.name +
                               "'");
      }
    }
  }
  std::vector<Endpoint> endpoints;
  for (const Fetch& fetch : prepared.fetches) endpoints.push_back(fetch.endpoint);
  const std::vector<int> unsupported = needed_unsupported(graph, {}, endpoints, prepared.feeds);
  if (!unsupported.empty()) throw UnsupportedError(graph.source() + ": " + describe_unsupported(graph, unsupported));

  // The passes rename nothing they are told to keep; node indices change.
  optimize(prepared, optimize_graph);
  optimize_summary_ = prepared.passes.summary();
  optimized_ = prepared.passes.enabled;
  graph_ = std::move(prepared.graph);
  for (TensorInfo& input : inputs_) {
    input.endpoint.node = graph_->find(input.name);
    if (input.endpoint.node < 0)
      throw ModelError(path + ": internal error: the graph passes removed input '" + input.name + "'");
  }
  for (std::size_t k = 0; k < outputs_.size(); ++k) outputs_[k].endpoint = prepared.fetches[k].endpoint;
}

const TensorInfo& CapiModel::input_named(const std::string& name) const {
  const std::string wanted = strip_zero(name);
  for (const TensorInfo& input : inputs_) {
    if (input.name == wanted) return input;
  }
  throw UsageError("unknown input '" + name + "': " + listing(inputs_, "inputs"));
}

Endpoint CapiModel::fetch_named(const std::string& name) const {
  const std::string wanted = strip_zero(name);
  for (const TensorInfo& output : outputs_) {
    if (output.name == wanted) return output.endpoint;
  }
  if (!optimized_) return resolve_fetches(*graph_, {name}).at(0).endpoint;
  throw UsageError("unknown output '" + name + "': " + listing(outputs_, "outputs") +
                   " (other tensors can be fetched from a model loaded without optimizing)");
}

TensorPtr CapiModel::borrow(const BorrowedFeed& feed, const TensorInfo& input) const {
  if (feed.dtype != input.dtype) {
    throw UsageError("input '" + input.name + "': the value is " + feed.dtype + " but the input takes " + input.dtype);
  }
  bool fits = input.rank < 0 || input.rank == static_cast<int>(feed.shape.size());
  for (std::size_t i = 0; fits && input.rank >= 0 && i < feed.shape.size(); ++i) {
    fits = input.dims[i] < 0 || input.dims[i] == feed.shape[i];
  }
  if (!fits) {
    throw UsageError("input '" + input.name + "': the value has shape " + shape_string(feed.shape) +
                     " but the input takes " + describe(input).substr(input.name.size() + 1));
  }
  const DataType dtype = graph_->node(input.endpoint.node).output_dtypes[0];
  int64_t count = 0;
  try {
    count = checked_num_elements(feed.shape, dtype);
  } catch (const Error& error) {
    throw UsageError("input '" + input.name + "': " + error.what());
  }
  if (count > 0 && feed.data == nullptr) throw UsageError("input '" + input.name + "': no data (a null pointer)");
  // The caller's memory, valid for the call: the feed map holds this pointer
  // for the whole run, so no kernel ever takes it over to write in place.
  std::shared_ptr<const void> owner(feed.data, [](const void*) {});
  return std::make_shared<const Tensor>(Tensor::borrowed(dtype, feed.shape, count, feed.data, std::move(owner)));
}

const Executor& CapiModel::plan(const FeedMap& feeds, const std::vector<Endpoint>& fetches) {
  std::string key;
  for (int i = 0; i < graph_->size(); ++i) {
    if (feeds.count(i)) key += std::to_string(i) + ",";
  }
  key += "|";
  for (const Endpoint& fetch : fetches) key += std::to_string(fetch.node) + ":" + std::to_string(fetch.output) + ",";
  auto found = plans_.find(key);
  if (found != plans_.end()) return *found->second;
  // A client choosing ever new combinations must not grow the cache without end.
  constexpr std::size_t kMaxPlans = 64;
  if (plans_.size() >= kMaxPlans) plans_.clear();
  auto made = std::make_unique<Executor>(*graph_, fetches, std::vector<int>{}, feeds);
  return *plans_.emplace(key, std::move(made)).first->second;
}

void CapiModel::set_threads(int threads) {
  if (threads < 0) {
    throw UsageError("a thread count must be 0 (OpenMP's default) or more, not " + std::to_string(threads));
  }
  std::lock_guard<std::mutex> lock(run_mutex_);
  // oneDNN fixes a primitive's thread count when the first run makes it.
  if (ran_ && threads != threads_) {
    const std::string prepared = threads_ == 1  ? std::string("1 thread")
                                 : threads_ > 1 ? std::to_string(threads_) + " threads"
                                                : std::string("OpenMP's default count");
    throw UsageError("the thread count must be set before the model's first run (its kernels are prepared for " +
                     prepared + "; load the model again for another count)");
  }
  threads_ = threads;
}

std::vector<TensorPtr> CapiModel::run(const std::vector<BorrowedFeed>& feeds, const std::vector<std::string>& fetches) {
  FeedMap fed;
  for (const BorrowedFeed& feed : feeds) {
    const TensorInfo& input = input_named(feed.name);
    if (fed.count(input.endpoint.node)) throw UsageError("input '" + input.name + "' is given more than once");
    fed[input.endpoint.node] = borrow(feed, input);
  }
  if (fetches.empty()) throw UsageError("nothing to fetch: name at least one of " + listing(outputs_, "outputs"));
  std::vector<Endpoint> endpoints;
  for (const std::string& name : fetches) endpoints.push_back(fetch_named(name));
  const std::vector<int> missing = unfed_placeholders(*graph_, {}, endpoints, fed);
  if (!missing.empty()) {
    std::string names;
    for (int node : missing) names += (names.empty() ? "" : ", ") + describe(input_named(graph_->node(node).name()));
    throw UsageError(std::string(missing.size() > 1 ? "inputs" : "input") + " not given: " + names);
  }

  std::vector<TensorPtr> values;
  {
    std::lock_guard<std::mutex> lock(run_mutex_);
    const ThreadCount count(threads_);
    ran_ = true;
    const Executor& executor = plan(fed, endpoints);
    VariableStore variables;
    values = executor.run(fed, variables);
  }
  // An output that is an input (or a mapped weight) is memory the result
  // must not depend on: it gets its own copy.
  for (TensorPtr& value : values) {
    if (!value->is_borrowed()) continue;
    Tensor copy = Tensor::uninitialized(value->dtype(), value->shape());
    if (value->byte_size()) std::memcpy(copy.raw_data(), value->raw_data(), value->byte_size());
    value = std::make_shared<const Tensor>(std::move(copy));
  }
  return values;
}

}  // namespace graphrun
