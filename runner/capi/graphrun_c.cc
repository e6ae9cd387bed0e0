// graphrun_c.h's functions: C in, C out. Every call that can fail catches
// everything and reports it as a status and one line of text.
#include "capi/graphrun_c.h"

#include <memory>
#include <string>
#include <vector>

#include "capi/c_calls.h"
#include "capi/model.h"
#include "core/version.h"

struct graphrun_model {
  graphrun::CapiModel model;
  template <class... Args>
  explicit graphrun_model(Args&&... args) : model(std::forward<Args>(args)...) {}
};

namespace {

using graphrun::TensorInfo;
using graphrun::capi::guarded;

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

int graphrun_model_load(const char* path, const char* signature, int optimize, graphrun_model** model, char** error) {
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
    const auto feeds =
        graphrun::capi::borrowed_feeds("graphrun_model_run", "input", num_feeds, names, dtypes, ranks, dims, data);
    const auto wanted = graphrun::capi::strings("graphrun_model_run", "fetches", num_fetches, fetches);
    *result = graphrun::capi::new_result(model->model.run(feeds, wanted));
  });
}

int graphrun_model_set_threads(graphrun_model* model, int threads, char** error) {
  return guarded(error, [&] {
    if (model == nullptr) throw graphrun::UsageError("graphrun_model_set_threads: no model (model is NULL)");
    model->model.set_threads(threads);
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
