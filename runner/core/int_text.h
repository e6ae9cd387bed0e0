// Whole numbers written as Python's int() reads them, so graphrun-cc accepts
// the same --seed, --shape and bench counts as graphrun: surrounding
// whitespace, an optional sign, and digits with single '_' between them.
#pragma once

#include <cstdint>
#include <string>

namespace graphrun {

struct IntText {
  bool negative = false;
  uint64_t magnitude = 0;
};

// False when `text` is not an integer or its magnitude does not fit in 64 bits.
bool parse_int_text(const std::string& text, IntText& value);

// Python's str.strip() for ASCII whitespace.
std::string strip_ascii(const std::string& text);

}  // namespace graphrun
