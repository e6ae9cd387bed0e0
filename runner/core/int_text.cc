#include "core/int_text.h"

namespace graphrun {

std::string strip_ascii(const std::string& text) {
  const char* space = " \t\n\r\f\v";
  const std::size_t first = text.find_first_not_of(space);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

bool parse_int_text(const std::string& text, IntText& value) {
  const std::string body = strip_ascii(text);
  std::size_t i = 0;
  value = IntText{};
  if (i < body.size() && (body[i] == '+' || body[i] == '-')) value.negative = body[i++] == '-';
  if (i >= body.size()) return false;
  bool after_digit = false;
  for (; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '_') {
      // One underscore, only between two digits.
      if (!after_digit || i + 1 >= body.size() || body[i + 1] < '0' || body[i + 1] > '9') return false;
      after_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value.magnitude > (UINT64_MAX - digit) / 10) return false;
    value.magnitude = value.magnitude * 10 + digit;
    after_digit = true;
  }
  return true;
}

}  // namespace graphrun
