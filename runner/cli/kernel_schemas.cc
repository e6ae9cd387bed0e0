#include "cli/kernel_schemas.h"

#include <cstdio>

#include "core/dtype.h"
#include "graph/kernel.h"
#include "io/format.h"

namespace graphrun {

namespace {

// TensorFlow's names for attr kinds, as the Python registry spells them.
const char* kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kType: return "type";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kShape: return "shape";
    case AttrKind::kTensor: return "tensor";
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kIntList: return "list(int)";
    case AttrKind::kTypeList: return "list(type)";
    case AttrKind::kShapeList: return "list(shape)";
    case AttrKind::kFunc: return "func";
    case AttrKind::kStringList: return "list(string)";
  }
  return "?";
}

std::string quoted(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string dtype_or_null(DataType dtype) { return dtype == graphdef::DT_INVALID ? "null" : quoted(dtype_name(dtype)); }

// A default in JSON; null for kinds whose defaults the test does not compare (shape, tensor).
std::string default_json(const AttrSpec& attr) {
  const graphdef::AttrValue& v = attr.default_value;
  switch (attr.kind) {
    case AttrKind::kType: return quoted(dtype_name(v.type()));
    case AttrKind::kBool: return v.b() ? "true" : "false";
    case AttrKind::kString: return quoted(v.s());
    case AttrKind::kInt: return std::to_string(v.i());
    case AttrKind::kFloat: {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v.f()));
      return text;
    }
    case AttrKind::kIntList: {
      std::string out = "[";
      for (int k = 0; k < v.list().i_size(); ++k) out += (k ? ", " : "") + std::to_string(v.list().i(k));
      return out + "]";
    }
    default: return "null";
  }
}

std::string input_json(const InputSpec& in) {
  return "{\"name\": " + quoted(in.name) +
         ", \"type_attr\": " + (in.type_attr.empty() ? "null" : quoted(in.type_attr)) +
         ", \"dtype\": " + dtype_or_null(in.fixed_dtype) +
         ", \"number_attr\": " + (in.number_attr.empty() ? "null" : quoted(in.number_attr)) +
         ", \"is_ref\": " + (in.is_ref ? "true" : "false") + ", \"type_list\": " + (in.type_list ? "true" : "false") +
         "}";
}

std::string output_json(const Kernel::OutputSpec& out) {
  return "{\"type_attr\": " + (out.type_attr.empty() ? std::string("null") : quoted(out.type_attr)) +
         ", \"dtype\": " + dtype_or_null(out.fixed_dtype) +
         ", \"number_attr\": " + (out.number_attr.empty() ? "null" : quoted(out.number_attr)) +
         ", \"type_list\": " + (out.type_list ? "true" : "false") + "}";
}

std::string attr_json(const AttrSpec& attr) {
  std::string allowed = "[";
  for (std::size_t k = 0; k < attr.allowed_dtypes.size(); ++k) {
    allowed += (k ? ", " : "") + quoted(dtype_name(attr.allowed_dtypes[k]));
  }
  allowed += "]";
  return "{\"name\": " + quoted(attr.name) + ", \"kind\": \"" + kind_name(attr.kind) +
         "\", \"has_default\": " + (attr.has_default ? "true" : "false") +
         ", \"default\": " + (attr.has_default ? default_json(attr) : "null") + ", \"allowed\": " + allowed + "}";
}

template <class T, class F>
std::string json_list(const std::vector<T>& items, F to_json) {
  std::string out = "[";
  for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + to_json(items[k]);
  return out + "]";
}

std::string kernels_json(const std::vector<std::string>& ops) {
  std::string out = "[";
  bool first = true;
  for (const std::string& op : ops) {
    const Kernel& kernel = *KernelRegistry::find(op, true);
    out += first ? "" : ", ";
    first = false;
    out += "{\"op\": " + quoted(op) + ", \"inputs\": " + json_list(kernel.inputs(), input_json) +
           ", \"outputs\": " + json_list(kernel.outputs(), output_json) +
           ", \"attrs\": " + json_list(kernel.attrs(), attr_json) + ", \"output_names\": " +
           json_list(kernel.outputs(), [](const Kernel::OutputSpec& o) { return quoted(o.name); }) + "}";
  }
  return out + "]";
}

}  // namespace

std::string kernel_schemas_json() {
  // The dtypes a type attr with no allowed list accepts, so a reader can spell them out.
  std::vector<std::string> carried;
  for (int value = graphdef::DataType_MIN; value <= graphdef::DataType_MAX; ++value) {
    const auto dtype = static_cast<DataType>(value);
    if (graphdef::DataType_IsValid(value) && is_supported_dtype(dtype)) carried.push_back(dtype_name(dtype));
  }
  // Internal kernels apart, so "kernels" stays the list the Python registry defines too.
  return "{\"kernels\": " + kernels_json(KernelRegistry::op_names()) +
         ", \"internal_kernels\": " + kernels_json(KernelRegistry::internal_op_names()) +
         ", \"dtypes\": " + json_list(carried, quoted) + "}\n";
}

}  // namespace graphrun
