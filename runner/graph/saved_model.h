// SavedModel directories (saved_model.pb + variables/): graphrun-cc runs one
// signature of one meta graph, frozen at load as graphdef/wire/saved_model.py
// freezes it: the saver's ops go, each variable (VariableV2, or a resource
// variable's VarHandleOp, read through ReadVariableOp) becomes a Const holding
// its bytes from the checkpoint, and only what the signature's outputs need
// stays. The result is an ordinary GraphDef for Graph to validate and run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph.pb.h"
#include "meta_graph.pb.h"

namespace graphrun {

constexpr const char* kServingTag = "serve";
constexpr const char* kDefaultSignature = "serving_default";

// True when `path` is a directory holding saved_model.pb.
bool is_saved_model(const std::string& path);

// The SavedModel proto of `dir`; throws ModelError if it does not parse.
graphdef::SavedModel read_saved_model(const std::string& dir);

// The signature's graph (serving_default when empty), frozen, with the
// signature's input and output keys as node names; throws ModelError naming
// what is wrong (no meta graph with exactly these tags, no such signature,
// missing variables, a damaged checkpoint). TF2 SavedModels' captured resource
// variables are frozen through their functions (graph/captured_variables.h).
std::unique_ptr<graphdef::GraphDef> frozen_saved_model(const std::string& dir,
                                                       const std::string& signature = kDefaultSignature,
                                                       const std::vector<std::string>& tags = {kServingTag});

}  // namespace graphrun
