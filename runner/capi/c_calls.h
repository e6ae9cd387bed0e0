// What every graphrun_c.h function shares: the catch-all that turns a C++
// failure into a status and one line, the result type, and the checks of
// the C arrays a call hands over (counts, NULLs), so a bad call is a
// GRAPHRUN_USAGE and never a read through a bad pointer we could have seen.
#pragma once

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "capi/graphrun_c.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "core/tensor.h"
#include "exec/unsupported.h"
#include "graph/shape_rules.h"
#include "session/session.h"

struct graphrun_result {
  std::vector<graphrun::TensorPtr> values;
  std::vector<std::string> dtypes;
};

namespace graphrun {
namespace capi {

// One line, however the message was written, in memory the caller frees
// with graphrun_free_string (free()).
inline void report(char** error, std::string message) {
  if (error == nullptr) return;
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  *error = static_cast<char*>(std::malloc(message.size() + 1));
  if (*error != nullptr) std::memcpy(*error, message.c_str(), message.size() + 1);
}

template <class Body>
int guarded(char** error, Body&& body) {
  if (error != nullptr) *error = nullptr;
  try {
    body();
    return GRAPHRUN_OK;
  } catch (const UnsupportedError& e) {
    report(error, e.what());
    return GRAPHRUN_UNSUPPORTED;
  } catch (const ExitError& e) {
    report(error, e.what());
    switch (e.code()) {
      case kExitUsage: return GRAPHRUN_USAGE;
      case kExitModel: return GRAPHRUN_MODEL;
      default: return GRAPHRUN_RUN;
    }
  } catch (const Error& e) {
    report(error, e.what());
    return GRAPHRUN_RUN;
  } catch (const std::bad_alloc&) {
    report(error, "out of memory");
    return GRAPHRUN_RUN;
  } catch (const std::exception& e) {
    report(error, std::string("internal error: ") + e.what());
    return GRAPHRUN_INTERNAL;
  } catch (...) {
    report(error, "internal error: an unknown exception");
    return GRAPHRUN_INTERNAL;
  }
}

// `count` strings, none NULL; `call` and `what` name them in messages.
inline std::vector<std::string> strings(const char* call, const char* what, int count, const char* const* texts) {
  if (count < 0) throw UsageError(std::string(call) + ": a negative count of " + what);
  if (count > 0 && texts == nullptr) throw UsageError(std::string(call) + ": " + what + " counted but NULL");
  std::vector<std::string> out;
  for (int k = 0; k < count; ++k) {
    if (texts[k] == nullptr) throw UsageError(std::string(call) + ": " + what + " " + std::to_string(k) + " is NULL");
    out.emplace_back(texts[k]);
  }
  return out;
}

// One shape: `rank` dims at `dims`; `what` names the value ("input 'x'").
inline Shape shape_of(const std::string& what, int rank, const int64_t* dims) {
  if (rank < 0 || rank > kMaxStaticRank) throw UsageError(what + ": rank " + std::to_string(rank) + " is out of range");
  if (rank > 0 && dims == nullptr) throw UsageError(what + ": dims is NULL");
  return Shape(dims, dims + rank);
}

// The feeds of a run call: shapes one after the other in `dims`; `kind`
// names a feed in messages ("input", "feed").
inline std::vector<BorrowedFeed> borrowed_feeds(const char* call, const char* kind, int count, const char* const* names,
                                                const char* const* dtypes, const int* ranks, const int64_t* dims,
                                                const void* const* data) {
  if (count < 0) throw UsageError(std::string(call) + ": a negative count of feeds");
  if (count > 0 && (!names || !dtypes || !ranks || !data)) {
    throw UsageError(std::string(call) + ": feeds counted but their arrays are NULL");
  }
  std::vector<BorrowedFeed> feeds(count);
  std::size_t next_dim = 0;
  for (int k = 0; k < count; ++k) {
    if (!names[k] || !dtypes[k])
      throw UsageError(std::string(call) + ": feed " + std::to_string(k) + " has a NULL name or dtype");
    feeds[k].name = names[k];
    feeds[k].dtype = dtypes[k];
    feeds[k].shape =
        shape_of(std::string(kind) + " '" + feeds[k].name + "'", ranks[k], dims ? dims + next_dim : nullptr);
    next_dim += ranks[k];
    feeds[k].data = data[k];
  }
  return feeds;
}

inline graphrun_result* new_result(std::vector<TensorPtr> values) {
  auto made = std::make_unique<graphrun_result>();
  made->values = std::move(values);
  for (const auto& value : made->values) made->dtypes.push_back(dtype_name(value->dtype()));
  return made.release();
}

}  // namespace capi
}  // namespace graphrun
