#include "core/dtype.h"

namespace graphrun {

bool is_supported_dtype(DataType dtype) {
  switch (dtype) {
    case graphdef::DT_FLOAT:
    case graphdef::DT_DOUBLE:
    case graphdef::DT_INT8:
    case graphdef::DT_INT16:
    case graphdef::DT_INT32:
    case graphdef::DT_INT64:
    case graphdef::DT_UINT8:
    case graphdef::DT_UINT16:
    case graphdef::DT_UINT32:
    case graphdef::DT_UINT64:
    case graphdef::DT_BOOL: return true;
    default: return false;
  }
}

std::string dtype_name(DataType dtype) {
  switch (dtype) {
    case graphdef::DT_FLOAT: return "float32";
    case graphdef::DT_DOUBLE: return "float64";
    case graphdef::DT_INT8: return "int8";
    case graphdef::DT_INT16: return "int16";
    case graphdef::DT_INT32: return "int32";
    case graphdef::DT_INT64: return "int64";
    case graphdef::DT_UINT8: return "uint8";
    case graphdef::DT_UINT16: return "uint16";
    case graphdef::DT_UINT32: return "uint32";
    case graphdef::DT_UINT64: return "uint64";
    case graphdef::DT_BOOL: return "bool";
    case graphdef::DT_VARIANT: return "variant";
    case graphdef::DT_STRING: return "string";
    default: break;
  }
  // proto3 enums are open: a file may carry a number this proto does not name.
  const std::string& proto_name = graphdef::DataType_Name(dtype);
  if (!proto_name.empty()) return proto_name;
  return "DataType(" + std::to_string(static_cast<int>(dtype)) + ")";
}

std::size_t dtype_size(DataType dtype) {
  switch (dtype) {
    case graphdef::DT_INT8:
    case graphdef::DT_UINT8:
    case graphdef::DT_BOOL: return 1;
    case graphdef::DT_INT16:
    case graphdef::DT_UINT16: return 2;
    case graphdef::DT_FLOAT:
    case graphdef::DT_INT32:
    case graphdef::DT_UINT32: return 4;
    case graphdef::DT_DOUBLE:
    case graphdef::DT_INT64:
    case graphdef::DT_UINT64: return 8;
    default: throw Error("dtype " + dtype_name(dtype) + " is not supported");
  }
}

}  // namespace graphrun
