// The strings that name a tensor or a dependency: a NodeDef input ("node",
// "node:k", "^node") and a --fetch argument ("node", "node:k").
#pragma once

#include <string>

namespace graphrun {

struct InputName {
  std::string node;
  int output = 0;         // -1 when the ":k" suffix is out of int range
  bool is_control = false;  // "^node"
};

// Never fails: anything that is not "<name>:<digits>" is a plain node name
// (output 0), and the caller then reports it as an unknown node if it is.
InputName parse_input_name(const std::string& text);

// "node:k", the canonical form printed for fetches.
std::string tensor_name(const std::string& node, int output);

}  // namespace graphrun
