#include "core/value_conversion.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/float_repr.h"

namespace graphrun {

FeedScalar FeedScalar::of_signed(int64_t v) {
  FeedScalar s;
  s.kind = kSigned;
  s.i = v;
  return s;
}

FeedScalar FeedScalar::of_unsigned(uint64_t v) {
  FeedScalar s;
  s.kind = kUnsigned;
  s.u = v;
  return s;
}

FeedScalar FeedScalar::of_float(double v) {
  FeedScalar s;
  s.kind = kFloat;
  s.f = v;
  return s;
}

FeedScalar FeedScalar::of_bool(bool v) {
  FeedScalar s;
  s.kind = kBool;
  s.b = v;
  return s;
}

namespace {

std::string scalar_text(const FeedScalar& scalar) {
  switch (scalar.kind) {
    case FeedScalar::kSigned: return std::to_string(scalar.i);
    case FeedScalar::kUnsigned: return std::to_string(scalar.u);
    case FeedScalar::kBool: return scalar.b ? "true" : "false";
    case FeedScalar::kFloat: break;
  }
  if (std::isnan(scalar.f)) return "nan";
  if (std::isinf(scalar.f)) return scalar.f > 0 ? "inf" : "-inf";
  return float_repr(scalar.f);
}

template <class T>
Error refusal(const FeedScalar& scalar, const std::string& why) {
  return Error(scalar_text(scalar) + " " + why + " " + dtype_name(dtype_of<T>()));
}

}  // namespace

template <class T>
T convert_exactly(const FeedScalar& scalar) {
  if constexpr (std::is_same_v<T, bool>) {
    if (scalar.kind != FeedScalar::kBool) throw refusal<T>(scalar, "cannot be fed as");
    return scalar.b;
  } else {
    if (scalar.kind == FeedScalar::kBool) throw refusal<T>(scalar, "cannot be fed as");
    if constexpr (std::is_floating_point_v<T>) {
      // One rounding, straight from the exact value.
      T converted;
      if (scalar.kind == FeedScalar::kSigned) converted = static_cast<T>(scalar.i);
      else if (scalar.kind == FeedScalar::kUnsigned) converted = static_cast<T>(scalar.u);
      else converted = static_cast<T>(scalar.f);
      if (std::isinf(converted) && !(scalar.kind == FeedScalar::kFloat && std::isinf(scalar.f))) {
        throw refusal<T>(scalar, "is out of range for");
      }
      return converted;
    } else {
      using Limits = std::numeric_limits<T>;
      if (scalar.kind == FeedScalar::kSigned) {
        const bool fits = scalar.i >= static_cast<int64_t>(Limits::lowest()) &&
                          (scalar.i < 0 || static_cast<uint64_t>(scalar.i) <= static_cast<uint64_t>(Limits::max()));
        if (!fits) throw refusal<T>(scalar, "is out of range for");
        return static_cast<T>(scalar.i);
      }
      if (scalar.kind == FeedScalar::kUnsigned) {
        if (scalar.u > static_cast<uint64_t>(Limits::max())) throw refusal<T>(scalar, "is out of range for");
        return static_cast<T>(scalar.u);
      }
      if (!std::isfinite(scalar.f) || std::trunc(scalar.f) != scalar.f) {
        throw refusal<T>(scalar, "is not an integer, as needed for");
      }
      // lowest and max + 1 are zero or powers of two: exact in double.
      const double lowest = static_cast<double>(Limits::lowest());
      const double past_max = std::ldexp(1.0, Limits::digits);
      if (scalar.f < lowest || scalar.f >= past_max) throw refusal<T>(scalar, "is out of range for");
      return static_cast<T>(scalar.f);
    }
  }
}

template float convert_exactly<float>(const FeedScalar&);
template double convert_exactly<double>(const FeedScalar&);
template int8_t convert_exactly<int8_t>(const FeedScalar&);
template int16_t convert_exactly<int16_t>(const FeedScalar&);
template int32_t convert_exactly<int32_t>(const FeedScalar&);
template int64_t convert_exactly<int64_t>(const FeedScalar&);
template uint8_t convert_exactly<uint8_t>(const FeedScalar&);
template uint16_t convert_exactly<uint16_t>(const FeedScalar&);
template uint32_t convert_exactly<uint32_t>(const FeedScalar&);
template uint64_t convert_exactly<uint64_t>(const FeedScalar&);
template bool convert_exactly<bool>(const FeedScalar&);

namespace {

template <class From>
FeedScalar scalar_of(From value) {
  if constexpr (std::is_same_v<From, bool>) return FeedScalar::of_bool(value);
  else if constexpr (std::is_floating_point_v<From>) return FeedScalar::of_float(value);
  else if constexpr (std::is_signed_v<From>) return FeedScalar::of_signed(value);
  else return FeedScalar::of_unsigned(value);
}

}  // namespace

Tensor convert_exactly(const Tensor& source, DataType target) {
  Tensor out(target, source.shape());
  dispatch(AllTypes{}, source.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch(AllTypes{}, target, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = source.data<From>();
      To* result = out.data<To>();
      for (int64_t i = 0; i < source.num_elements(); ++i) result[i] = convert_exactly<To>(scalar_of(in[i]));
    });
  });
  return out;
}

}  // namespace graphrun
