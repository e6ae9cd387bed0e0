#include "graph/input_name.h"

#include <climits>

namespace graphrun {

InputName parse_input_name(const std::string& text) {
  InputName name;
  if (!text.empty() && text[0] == '^') {
    name.is_control = true;
    name.node = text.substr(1);
    return name;
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) {
    name.node = text;
    return name;
  }
  long long index = 0;
  for (std::size_t i = colon + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      name.node = text;
      return name;
    }
    // Saturate rather than overflow; any index this large is out of range.
    if (index <= INT_MAX) index = index * 10 + (c - '0');
  }
  name.node = text.substr(0, colon);
  name.output = index > INT_MAX ? -1 : static_cast<int>(index);
  return name;
}

std::string tensor_name(const std::string& node, int output) { return node + ":" + std::to_string(output); }

}  // namespace graphrun
