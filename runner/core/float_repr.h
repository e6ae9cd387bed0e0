// Floats printed exactly as Python's repr() prints them, in the value's own
// precision: the shortest digits that read back to the same float32 (or
// float64), positional when the decimal exponent E is in [-4, 16), else
// scientific "d.ddde±XX". Both runtimes use this rule, so their output is
// byte for byte the same.
#pragma once

#include <string>

namespace graphrun {

// Finite values only; callers decide how nan and inf are spelled.
std::string float_repr(float value);
std::string float_repr(double value);

}  // namespace graphrun
