// graphrun_c.h's functions: C in, C out. Every call that can fail catches
// everything and reports it as a status and one line of text.
#include "capi/graphrun_c.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi/model.h"
#include "graph/shape_rules.h"
#include "core/version.h"

struct graphrun_model {
  graphrun::CapiModel model;
  template <class... Args>
  explicit graphrun_model(Args&&... args) : model(std::forward<Args>(args)...) {}
};

struct graphrun_result {
  std::vector<graphrun::TensorPtr> values;
  std::vector<std::string> dtypes;
};

namespace {

using graphrun::TensorInfo;

// One line, however the message was written, in memory the caller frees
// with graphrun_free_string (free()).
void report(char** error, std::string message) {
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
  } catch (const graphrun::UnsupportedError& e) {
    report(error, e.what());
    return GRAPHRUN_UNSUPPORTED;
  } catch (const graphrun::ExitError& e) {
    report(error, e.what());
    switch (e.code()) {
      case graphrun::kExitUsage: return GRAPHRUN_USAGE;
      case graphrun::kExitModel: return GRAPHRUN_MODEL;
      default: return GRAPHRUN_RUN;
    }
  } catch (const graphrun::Error& e) {
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

// The accessors take an index a caller may get wrong; out of range gives
// NULL / -1 rather than reading past the end.
const TensorInfo* info_at(const std::vector<TensorInfo>& infos, int index) {
  return index >= 0 && static_cast<std::size_t>(index) < infos.size() ? &infos[index] : nullptr;
}

const TensorInfo* input_at(const graphrun_model* model, int index) {
  return model ? info_at(model->model.inputs(), index) : nullptr;
}

const TensorInfo* output_at(const graphrun_model* model, int index) {
  return model ? info_at(model->model.outputs(), index) : nullptr;
}

const graphrun::Tensor* value_at(const graphrun_result* result, int index) {
  if (result == nullptr || index < 0 || static_cast<std::size_t>(index) >= result->values.size()) return nullptr;
  return result->values[index].get();
}

std::string text_or_empty(const char* text) { return text ? text : ""; }

}  // namespace

extern "C" {

const char* graphrun_version(void) {
  static const std::string version = std::string("graphrun-cc ") + graphrun::kVersion;
  return version.c_str();
}

int graphrun_model_load(const char* path, const char* signature, int optimize, graphrun_model** model,
                        char** error) {
  return guarded(error, [&] {
    if (model == nullptr) throw graphrun::UsageError("graphrun_model_load: no place for the model (model is NULL)");
    *model = nullptr;
    if (path == nullptr || !*path) throw graphrun::UsageError("graphrun_model_load: no model path given");
    *model = new graphrun_model(std::string(path), text_or_empty(signature), optimize != 0);
  });
}

int graphrun_model_num_inputs(const graphrun_model* model) {
  return model ? static_cast<int>(model->model.inputs().size()) : -1;
}

int graphrun_model_num_outputs(const graphrun_model* model) {
  return model ? static_cast<int>(model->model.outputs().size()) : -1;
}

const char* graphrun_model_input_name(const graphrun_model* model, int index) {
  const TensorInfo* info = input_at(model, index);
  return info ? info->name.c_str() : nullptr;
}

const char* graphrun_model_input_dtype(const graphrun_model* model, int index) {
  const TensorInfo* info = input_at(model, index);
  return info ? info->dtype.c_str() : nullptr;
}

int graphrun_model_input_rank(const graphrun_model* model, int index) {
  const TensorInfo* info = input_at(model, index);
  return info ? info->rank : -1;
}

const int64_t* graphrun_model_input_shape(const graphrun_model* model, int index) {
  const TensorInfo* info = input_at(model, index);
  return info ? info->dims.data() : nullptr;
}

int graphrun_model_input_required(const graphrun_model* model, int index) {
  const TensorInfo* info = input_at(model, index);
  return info ? info->required : -1;
}

const char* graphrun_model_output_name(const graphrun_model* model, int index) {
  const TensorInfo* info = output_at(model, index);
  return info ? info->name.c_str() : nullptr;
}

const char* graphrun_model_output_dtype(const graphrun_model* model, int index) {
  const TensorInfo* info = output_at(model, index);
  return info ? info->dtype.c_str() : nullptr;
}

int graphrun_model_output_rank(const graphrun_model* model, int index) {
  const TensorInfo* info = output_at(model, index);
  return info ? info->rank : -1;
}

const int64_t* graphrun_model_output_shape(const graphrun_model* model, int index) {
  const TensorInfo* info = output_at(model, index);
  return info ? info->dims.data() : nullptr;
}

const char* graphrun_model_optimize_summary(const graphrun_model* model) {
  return model ? model->model.optimize_summary().c_str() : nullptr;
}

int graphrun_model_run(graphrun_model* model, int num_feeds, const char* const* names, const char* const* dtypes,
                       const int* ranks, const int64_t* dims, const void* const* data, int num_fetches,
                       const char* const* fetches, graphrun_result** result, char** error) {
  return guarded(error, [&] {
    if (result == nullptr) throw graphrun::UsageError("graphrun_model_run: no place for the result (result is NULL)");
    *result = nullptr;
    if (model == nullptr) throw graphrun::UsageError("graphrun_model_run: no model (model is NULL)");
    if (num_feeds < 0 || num_fetches < 0) throw graphrun::UsageError("graphrun_model_run: a negative count");
    if (num_feeds > 0 && (!names || !dtypes || !ranks || !data)) {
      throw graphrun::UsageError("graphrun_model_run: feeds counted but their arrays are NULL");
    }
    if (num_fetches > 0 && !fetches) throw graphrun::UsageError("graphrun_model_run: fetches counted but NULL");
    std::vector<graphrun::BorrowedFeed> feeds(num_feeds);
    std::size_t next_dim = 0;
    for (int k = 0; k < num_feeds; ++k) {
      if (!names[k] || !dtypes[k]) throw graphrun::UsageError("graphrun_model_run: feed " + std::to_string(k) + " has a NULL name or dtype");
      feeds[k].name = names[k];
      feeds[k].dtype = dtypes[k];
      if (ranks[k] < 0 || ranks[k] > graphrun::kMaxStaticRank) {
        throw graphrun::UsageError("input '" + feeds[k].name + "': rank " + std::to_string(ranks[k]) + " is out of range");
      }
      if (ranks[k] > 0 && !dims) throw graphrun::UsageError("graphrun_model_run: dims is NULL");
      feeds[k].shape.assign(dims + next_dim, dims + next_dim + ranks[k]);
      next_dim += ranks[k];
      feeds[k].data = data[k];
    }
    std::vector<std::string> wanted;
    for (int k = 0; k < num_fetches; ++k) {
      if (!fetches[k]) throw graphrun::UsageError("graphrun_model_run: fetch " + std::to_string(k) + " is NULL");
      wanted.emplace_back(fetches[k]);
    }
    auto made = std::make_unique<graphrun_result>();
    made->values = model->model.run(feeds, wanted);
    for (const auto& value : made->values) made->dtypes.push_back(graphrun::dtype_name(value->dtype()));
    *result = made.release();
  });
}

int graphrun_result_count(const graphrun_result* result) {
  return result ? static_cast<int>(result->values.size()) : -1;
}

const char* graphrun_result_dtype(const graphrun_result* result, int index) {
  return value_at(result, index) ? result->dtypes[index].c_str() : nullptr;
}

int graphrun_result_rank(const graphrun_result* result, int index) {
  const graphrun::Tensor* value = value_at(result, index);
  return value ? static_cast<int>(value->rank()) : -1;
}

const int64_t* graphrun_result_shape(const graphrun_result* result, int index) {
  const graphrun::Tensor* value = value_at(result, index);
  return value ? value->shape().data() : nullptr;
}

const void* graphrun_result_data(const graphrun_result* result, int index) {
  const graphrun::Tensor* value = value_at(result, index);
  return value ? value->raw_data() : nullptr;
}

size_t graphrun_result_nbytes(const graphrun_result* result, int index) {
  const graphrun::Tensor* value = value_at(result, index);
  return value ? value->byte_size() : 0;
}

void graphrun_free_model(graphrun_model* model) { delete model; }

void graphrun_free_result(graphrun_result* result) { delete result; }

void graphrun_free_string(char* text) { std::free(text); }

}  // extern "C"
