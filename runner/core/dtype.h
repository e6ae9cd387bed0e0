// The element types graphrun-cc supports, their names, and a way to turn a
// runtime DataType into a compile-time C++ type for templated kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "graph.pb.h"

namespace graphrun {

using DataType = graphdef::DataType;

// float32 float64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 bool:
// the dtypes of fixed-size elements. DT_STRING and DT_VARIANT are held too,
// but only where a kernel lists them (a type attr with no list takes neither),
// so no kernel written for bytes ever sees a std::string.
bool is_supported_dtype(DataType dtype);

// A dtype graphrun-cc can hold in a tensor: the supported ones and string.
inline bool is_held_dtype(DataType dtype) { return is_supported_dtype(dtype) || dtype == graphdef::DT_STRING; }

// The numpy-style name ("float32") of a supported dtype; the proto enum name
// ("DT_HALF") of any other, so error messages can still say what was found.
std::string dtype_name(DataType dtype);

// Bytes per element of a supported dtype (bool is one byte, holding 0 or 1);
// throws for string, whose elements are not bytes in a buffer.
std::size_t dtype_size(DataType dtype);

template <class T>
struct TypeTag {
  using type = T;
};

template <class T>
constexpr DataType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return graphdef::DT_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return graphdef::DT_DOUBLE;
  else if constexpr (std::is_same_v<T, int8_t>) return graphdef::DT_INT8;
  else if constexpr (std::is_same_v<T, int16_t>) return graphdef::DT_INT16;
  else if constexpr (std::is_same_v<T, int32_t>) return graphdef::DT_INT32;
  else if constexpr (std::is_same_v<T, int64_t>) return graphdef::DT_INT64;
  else if constexpr (std::is_same_v<T, uint8_t>) return graphdef::DT_UINT8;
  else if constexpr (std::is_same_v<T, uint16_t>) return graphdef::DT_UINT16;
  else if constexpr (std::is_same_v<T, uint32_t>) return graphdef::DT_UINT32;
  else if constexpr (std::is_same_v<T, uint64_t>) return graphdef::DT_UINT64;
  else if constexpr (std::is_same_v<T, bool>) return graphdef::DT_BOOL;
  else if constexpr (std::is_same_v<T, std::string>) return graphdef::DT_STRING;
  else static_assert(!sizeof(T), "not an element type graphrun-cc supports");
}

template <class... Ts>
struct TypeList {};

using FloatTypes = TypeList<float, double>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using AllTypes =
    TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>;
using IndexTypes = TypeList<int32_t, int64_t>;
// AllTypes and strings, for kernels that only move elements around (Gather,
// Concat...): a string kernel path copies std::string objects, never bytes.
using AllAndStringTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                                   uint64_t, bool, std::string>;

template <class... Ts>
std::vector<DataType> dtypes_of(TypeList<Ts...>) {
  return {dtype_of<Ts>()...};
}

// Every element dtype plus DT_VARIANT, for ops that only pass a value on
// (Identity, Placeholder, the control-flow ops): a variant is accepted by a
// type attr only where a kernel lists it, since it has no elements to compute
// with (Tensor::variant).
inline std::vector<DataType> dtypes_and_variant() {
  std::vector<DataType> dtypes = dtypes_of(AllTypes{});
  dtypes.push_back(graphdef::DT_VARIANT);
  return dtypes;
}

// Every element dtype and string, for kernels with a string path.
inline std::vector<DataType> dtypes_and_string() { return dtypes_of(AllAndStringTypes{}); }

// Both: the pass-through ops.
inline std::vector<DataType> dtypes_string_and_variant() {
  std::vector<DataType> dtypes = dtypes_and_string();
  dtypes.push_back(graphdef::DT_VARIANT);
  return dtypes;
}

// Calls f(TypeTag<T>{}) for the T in the list whose dtype is `dtype`.
// Graph validation has already limited each node's dtypes to what its kernel
// accepts, so a miss here means a kernel was registered inconsistently.
template <class... Ts, class F>
void dispatch(TypeList<Ts...>, DataType dtype, F&& f) {
  bool matched = ((dtype == dtype_of<Ts>() && (f(TypeTag<Ts>{}), true)) || ...);
  if (!matched) throw Error("dtype " + dtype_name(dtype) + " is not supported by this kernel");
}

}  // namespace graphrun
