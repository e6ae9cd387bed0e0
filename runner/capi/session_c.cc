// graphrun_c.h's session functions: a graphrun::Session (session/session.h)
// behind C calls. Every call on a session takes the session's own lock, so
// its plans and variables are never touched by two threads at once; other
// sessions and models run meanwhile.
#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capi/c_calls.h"
#include "capi/graphrun_c.h"
#include "graph/input_name.h"
#include "session/session.h"

struct graphrun_session {
  graphrun::Session session;
  std::mutex lock;  // held for each call that reads or changes the session
  graphrun_session(std::unique_ptr<graphdef::GraphDef> graph, bool optimize) : session(std::move(graph), optimize) {}
};

namespace {

using graphrun::UsageError;
using graphrun::capi::guarded;
using graphrun::capi::strings;

// protobuf's binary limit, as graphrun-cc and graphrun set it for a model file
constexpr int kMaxNesting = 100;

// The GraphDef in `data`, refused in the words graphrun-cc and graphrun use
// for a .pb file, so a caller of the library sees the same line.
std::unique_ptr<graphdef::GraphDef> graph_from_bytes(const std::string& source, const void* data, size_t size) {
  if (size > 0 && data == nullptr) {
    throw graphrun::ModelError(source + ": no bytes (a null pointer for " + std::to_string(size) + ")");
  }
  if (size > static_cast<size_t>(INT_MAX)) {
    throw graphrun::ModelError(source + ": " + std::to_string(size) +
                               " bytes, over protobuf's 2 GiB limit for a GraphDef");
  }
  auto proto = std::make_unique<graphdef::GraphDef>();
  if (size == 0) return proto;
  google::protobuf::io::CodedInputStream input(static_cast<const uint8_t*>(data), static_cast<int>(size));
  input.SetRecursionLimit(kMaxNesting);
  if (!proto->ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
    throw graphrun::ModelError(source + ": not a GraphDef (the protobuf does not parse, or nests deeper than " +
                               std::to_string(kMaxNesting) + " levels)");
  }
  return proto;
}

graphrun_session& session_of(graphrun_session* session, const char* call) {
  if (session == nullptr) throw UsageError(std::string(call) + ": no session (session is NULL)");
  return *session;
}

std::string name_of(const char* name, const char* call) {
  if (name == nullptr) throw UsageError(std::string(call) + ": no variable name (name is NULL)");
  return name;
}

}  // namespace

extern "C" {

int graphrun_session_create(const void* graph_def, size_t size, int optimize, graphrun_session** session,
                            char** error) {
  return guarded(error, [&] {
    if (session == nullptr) throw UsageError("graphrun_session_create: no place for the session (session is NULL)");
    *session = nullptr;
    auto graph = graph_from_bytes("graph", graph_def, size);
    *session = new graphrun_session(std::move(graph), optimize != 0);
  });
}

int graphrun_session_extend(graphrun_session* session, const void* graph_def, size_t size, char** error) {
  return guarded(error, [&] {
    graphrun_session& target = session_of(session, "graphrun_session_extend");
    const auto more = graph_from_bytes("graph extension", graph_def, size);
    std::lock_guard<std::mutex> lock(target.lock);
    target.session.extend(*more);
  });
}

namespace {

// String tensors do not cross the C API yet: a fetch of one is refused before
// anything runs, as a missing kernel is, so the Python Session's auto engine
// runs that plan itself.
void refuse_string_fetches(const graphrun::Session& session, const std::vector<std::string>& fetched) {
  const graphrun::Graph& graph = session.graph();
  for (const std::string& name : fetched) {
    const graphrun::InputName parsed = graphrun::parse_input_name(name);
    const int node = graph.find(parsed.node);
    if (node < 0) continue;
    const auto& dtypes = graph.node(node).output_dtypes;
    if (parsed.output >= 0 && parsed.output < static_cast<int>(dtypes.size()) &&
        dtypes[parsed.output] == graphdef::DT_STRING) {
      throw graphrun::UnsupportedError(
          "fetch '" + name + "': string tensors, which the C API cannot hold yet: " + graph.node(node).describe());
    }
  }
}

}  // namespace

int graphrun_session_check(graphrun_session* session, int num_feeds, const char* const* feed_names, int num_fetches,
                           const char* const* fetches, int num_targets, const char* const* targets, char** error) {
  return guarded(error, [&] {
    const char* call = "graphrun_session_check";
    graphrun_session& target = session_of(session, call);
    const auto fed = strings(call, "feed names", num_feeds, feed_names);
    const auto fetched = strings(call, "fetches", num_fetches, fetches);
    const auto run = strings(call, "targets", num_targets, targets);
    std::lock_guard<std::mutex> lock(target.lock);
    refuse_string_fetches(target.session, fetched);
    target.session.check(fed, fetched, run);
  });
}

int graphrun_session_run(graphrun_session* session, int num_feeds, const char* const* names, const char* const* dtypes,
                         const int* ranks, const int64_t* dims, const void* const* data, int num_fetches,
                         const char* const* fetches, int num_targets, const char* const* targets,
                         graphrun_result** result, char** error) {
  return guarded(error, [&] {
    const char* call = "graphrun_session_run";
    if (result == nullptr) throw UsageError("graphrun_session_run: no place for the result (result is NULL)");
    *result = nullptr;
    graphrun_session& target = session_of(session, call);
    const auto feeds = graphrun::capi::borrowed_feeds(call, "feed", num_feeds, names, dtypes, ranks, dims, data);
    const auto fetched = strings(call, "fetches", num_fetches, fetches);
    const auto run = strings(call, "targets", num_targets, targets);
    std::vector<graphrun::TensorPtr> values;
    {
      std::lock_guard<std::mutex> lock(target.lock);
      refuse_string_fetches(target.session, fetched);
      values = target.session.run(feeds, fetched, run);
    }
    *result = graphrun::capi::new_result(std::move(values));
  });
}

int graphrun_session_read_variable(graphrun_session* session, const char* name, graphrun_result** result,
                                   char** error) {
  return guarded(error, [&] {
    const char* call = "graphrun_session_read_variable";
    if (result == nullptr) throw UsageError(std::string(call) + ": no place for the result (result is NULL)");
    *result = nullptr;
    graphrun_session& target = session_of(session, call);
    const std::string variable = name_of(name, call);
    std::vector<graphrun::TensorPtr> values;
    {
      std::lock_guard<std::mutex> lock(target.lock);
      if (graphrun::TensorPtr value = target.session.read_variable(variable)) values.push_back(std::move(value));
    }
    *result = graphrun::capi::new_result(std::move(values));
  });
}

int graphrun_session_assign_variable(graphrun_session* session, const char* name, const char* dtype, int rank,
                                     const int64_t* dims, const void* data, char** error) {
  return guarded(error, [&] {
    const char* call = "graphrun_session_assign_variable";
    graphrun_session& target = session_of(session, call);
    graphrun::BorrowedFeed value;
    value.name = name_of(name, call);
    if (dtype == nullptr) throw UsageError(std::string(call) + ": no dtype (dtype is NULL)");
    value.dtype = dtype;
    value.shape = graphrun::capi::shape_of("variable '" + value.name + "'", rank, dims);
    value.data = data;
    std::lock_guard<std::mutex> lock(target.lock);
    target.session.assign_variable(value);
  });
}

void graphrun_free_session(graphrun_session* session) { delete session; }

}  // extern "C"
