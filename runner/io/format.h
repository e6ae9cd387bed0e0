// The fetch results as graphrun prints them (text lines or one JSON line).
// This is a shared contract with the Python runner: keep both in step.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace graphrun {

struct FetchResult {
  std::string name;  // canonical "node:k"
  TensorPtr value;
};

// One line per fetch: "y:0 float32 [2,2] = [[1.0, 2.0], [3.0, 4.0]]\n".
std::string format_text(const std::vector<FetchResult>& results);

// {"outputs": [{"name": "y:0", "dtype": "float32", "shape": [2, 2], "values": ...}]}\n
// nan and infinities become the strings "nan", "inf", "-inf".
std::string format_json(const std::vector<FetchResult>& results);

// Appends `text` as a JSON string escaped as Python's json.dumps escapes it
// (ensure_ascii), for every document graphrun-cc prints.
void append_json_string(std::string& out, const std::string& text);

}  // namespace graphrun
