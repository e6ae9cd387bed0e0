// What fuzz-savedmodel and fuzz-checkpoint run for each input (the two differ
// only in what their mutators change): the SavedModel's files are written
// into a directory, then read as graphrun-cc reads them in inspect (the
// listing of meta graphs and signatures) and run (the signature frozen with
// its variables, then the run verb's path), and as the C API loads a model.
// The checkpoint's index is also parsed on its own, which covers the table
// when the signature needs no variable.
#include <sys/stat.h>

#include <cstring>

#include "capi/graphrun_c.h"
#include "cli/verbs.h"
#include "io/sstable.h"
#include "run_graph.h"
#include "savedmodel_input.h"
#include "sections.h"

using namespace graphrun;
using namespace graphrun_fuzz;

namespace graphrun_fuzz {

std::string write_saved_model(const std::vector<std::string>& parts) {
  const std::string dir = scratch_dir() + "/saved_model";
  mkdir(dir.c_str(), 0700);
  mkdir((dir + "/variables").c_str(), 0700);
  put_file(dir + "/saved_model.pb", parts[kSavedModelProto]);
  put_file(dir + "/variables/variables.index", parts[kVariablesIndex]);
  put_file(dir + "/variables/variables.data-00000-of-00001", parts[kVariablesShard]);
  return dir;
}

}  // namespace graphrun_fuzz

namespace {

// The C API's load must succeed or fail with a status of its own, never
// GRAPHRUN_INTERNAL.
void check_capi_load(const std::string& dir) {
  graphrun_model* model = nullptr;
  char* error = nullptr;
  const int status = graphrun_model_load(dir.c_str(), nullptr, /*optimize=*/1, &model, &error);
  if (status == GRAPHRUN_INTERNAL) finding("C API internal error", error != nullptr ? error : "(no message)");
  graphrun_free_model(model);
  graphrun_free_string(error);
}

Outcome execute(const uint8_t* data, size_t size) {
  const std::vector<std::string> parts = split_sections(data, size, kSavedModelParts);
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string dir = write_saved_model(parts);
  const uint64_t bits = fnv1a(data, size);
  try {  // a plain Error here is the table's own refusal, which the reader words for the user
    if (!parts[kVariablesIndex].empty()) parse_sstable(parts[kVariablesIndex], "variables.index");
  } catch (const Error&) {
  } catch (const std::exception& error) {
    finding("uncaught exception in the table reader", error.what());
  }
  guarded(input, [&] {
    saved_model_listing(dir, bits & 1);
    return Outcome::kOk;
  });
  check_capi_load(dir);
  return guarded(input, [&] { return run_graph(Graph::load(dir), bits >> 1); });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  init_harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  count(execute(data, size));
  return 0;
}
