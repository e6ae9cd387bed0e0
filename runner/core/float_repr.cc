#include "core/float_repr.h"

#include <charconv>
#include <cstdlib>

namespace graphrun {

namespace {

// `scientific` is std::to_chars' shortest round-trip output, e.g. "-1.2345e+03":
// an optional '-', one digit, optionally '.' and more digits, 'e', a signed exponent.
std::string repr_from_scientific(const std::string& scientific) {
  std::size_t pos = 0;
  std::string sign;
  if (scientific[pos] == '-') {
    sign = "-";
    ++pos;
  }
  const std::size_t e = scientific.find('e', pos);
  std::string digits;
  for (std::size_t i = pos; i < e; ++i) {
    if (scientific[i] != '.') digits += scientific[i];
  }
  const int exponent = std::atoi(scientific.c_str() + e + 1);

  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
    return out;
  }
  std::string out = sign;
  if (exponent < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  } else {
    const std::size_t integer_digits = static_cast<std::size_t>(exponent) + 1;
    if (digits.size() <= integer_digits) {
      out += digits + std::string(integer_digits - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
    }
  }
  return out;
}

template <class T>
std::string repr(T value) {
  char buffer[64];
  // No precision argument: the shortest representation that round-trips in T.
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  return repr_from_scientific(std::string(buffer, result.ptr));
}

}  // namespace

std::string float_repr(float value) { return repr(value); }
std::string float_repr(double value) { return repr(value); }

}  // namespace graphrun
