// Const values stored outside the GraphDef, in a weights file beside the
// model (the format is described in graphdef/wire/external_weights.py and
// README "Models over 2 GB"), read as tensors that point into the mapped
// file: nothing is copied, pages are read when a kernel touches them.
#pragma once

#include <string>

#include "core/tensor.h"
#include "graph.pb.h"

namespace graphrun {

// The node attr locating a Const's value in the weights file.
inline constexpr const char* kExternalValueAttr = "_external_value";

bool has_external_value(const graphdef::NodeDef& node);

// The value of the external Const `node` of a model whose file is in
// `model_dir`. Checks the attr, the weights file's header and tag, the
// offset and length against the file's size and dtype * shape (and the
// crc32c when GRAPHDEF_VERIFY_WEIGHTS=1) before anything is read; throws
// Error with one line saying what is wrong and how to fix it.
TensorPtr load_external_value(const graphdef::NodeDef& node, const std::string& model_dir);

// The directory a model's weights file names are relative to: `source`
// itself when it is a directory (a SavedModel), else the file's directory.
std::string model_directory(const std::string& source);

}  // namespace graphrun
