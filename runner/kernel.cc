#include "kernel.h"

#include <algorithm>
#include <limits>
#include <map>

namespace graphrun {

namespace {

const char* attr_kind_name(AttrKind kind) {
  switch (kind) {
    case AttrKind::kType: return "a type";
    case AttrKind::kBool: return "a bool";
    case AttrKind::kString: return "a string";
    case AttrKind::kShape: return "a shape";
    case AttrKind::kTensor: return "a tensor";
    case AttrKind::kInt: return "an int";
  }
  return "?";
}

const char* held_kind_name(const graphdef::AttrValue& value) {
  switch (value.value_case()) {
    case graphdef::AttrValue::kList: return "a list";
    case graphdef::AttrValue::kS: return "a string";
    case graphdef::AttrValue::kI: return "an int";
    case graphdef::AttrValue::kF: return "a float";
    case graphdef::AttrValue::kB: return "a bool";
    case graphdef::AttrValue::kType: return "a type";
    case graphdef::AttrValue::kShape: return "a shape";
    case graphdef::AttrValue::kTensor: return "a tensor";
    case graphdef::AttrValue::kFunc: return "a function";
    case graphdef::AttrValue::kPlaceholder: return "a function placeholder";
    case graphdef::AttrValue::VALUE_NOT_SET: return "nothing";
  }
  return "something else";
}

bool holds_kind(const graphdef::AttrValue& value, AttrKind kind) {
  switch (kind) {
    case AttrKind::kType: return value.value_case() == graphdef::AttrValue::kType;
    case AttrKind::kBool: return value.value_case() == graphdef::AttrValue::kB;
    case AttrKind::kString: return value.value_case() == graphdef::AttrValue::kS;
    case AttrKind::kShape: return value.value_case() == graphdef::AttrValue::kShape;
    case AttrKind::kTensor: return value.value_case() == graphdef::AttrValue::kTensor;
    case AttrKind::kInt: return value.value_case() == graphdef::AttrValue::kI;
  }
  return false;
}

std::string dtype_list(const std::vector<DataType>& dtypes) {
  std::string out;
  for (DataType dtype : dtypes) {
    if (!out.empty()) out += ", ";
    out += dtype_name(dtype);
  }
  return out;
}

std::map<std::string, Kernel>& registered_kernels() {
  // Function-local so it exists before the first registration, whatever
  // order the translation units' static initializers run in.
  static std::map<std::string, Kernel> kernels;
  return kernels;
}

}  // namespace

Kernel& Kernel::input(std::string name, std::string type_attr) {
  inputs_.push_back({std::move(name), std::move(type_attr), "", false});
  return *this;
}

Kernel& Kernel::ref_input(std::string name, std::string type_attr) {
  inputs_.push_back({std::move(name), std::move(type_attr), "", true});
  return *this;
}

Kernel& Kernel::list_input(std::string name, std::string number_attr, std::string type_attr) {
  inputs_.push_back({std::move(name), std::move(type_attr), std::move(number_attr), false});
  return *this;
}

Kernel& Kernel::input(std::string name, DataType fixed_dtype) {
  inputs_.push_back({std::move(name), "", "", false, fixed_dtype});
  return *this;
}

Kernel& Kernel::output(std::string type_attr) {
  outputs_.push_back({std::move(type_attr), graphdef::DT_INVALID});
  return *this;
}

Kernel& Kernel::output(DataType fixed_dtype) {
  outputs_.push_back({"", fixed_dtype});
  return *this;
}

void Kernel::add_attr(AttrSpec spec) { attrs_.push_back(std::move(spec)); }

Kernel& Kernel::type_attr(std::string name, std::vector<DataType> allowed) {
  AttrSpec spec(std::move(name), AttrKind::kType);
  spec.allowed_dtypes = std::move(allowed);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::type_attr(std::string name, std::vector<DataType> allowed, DataType default_dtype) {
  AttrSpec spec(std::move(name), AttrKind::kType);
  spec.allowed_dtypes = std::move(allowed);
  spec.has_default = true;
  spec.default_value.set_type(default_dtype);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::bool_attr(std::string name, bool default_value) {
  AttrSpec spec(std::move(name), AttrKind::kBool);
  spec.has_default = true;
  spec.default_value.set_b(default_value);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::string_attr(std::string name, std::string default_value) {
  AttrSpec spec(std::move(name), AttrKind::kString);
  spec.has_default = true;
  spec.default_value.set_s(std::move(default_value));
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::shape_attr(std::string name) {
  AttrSpec spec(std::move(name), AttrKind::kShape);
  spec.has_default = true;
  spec.default_value.mutable_shape()->set_unknown_rank(true);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::tensor_attr(std::string name) {
  add_attr(AttrSpec(std::move(name), AttrKind::kTensor));
  return *this;
}

Kernel& Kernel::int_attr(std::string name, int64_t minimum) {
  AttrSpec spec(std::move(name), AttrKind::kInt);
  spec.minimum = minimum;
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::int_attr(std::string name, int64_t minimum, int64_t default_value) {
  AttrSpec spec(std::move(name), AttrKind::kInt);
  spec.minimum = minimum;
  spec.has_default = true;
  spec.default_value.set_i(default_value);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::feedable(bool must_be_fed) {
  feedable_ = true;
  must_be_fed_ = must_be_fed;
  return *this;
}

Kernel& Kernel::holds_variable() {
  holds_variable_ = true;
  return *this;
}

Kernel& Kernel::check(CheckFn fn) {
  check_ = std::move(fn);
  return *this;
}

Kernel& Kernel::compute(ComputeFn fn) {
  compute_ = std::move(fn);
  return *this;
}

int64_t Kernel::num_inputs(const graphdef::NodeDef& node) const {
  // 64 bits: N is the file's int64, and a hostile N must not wrap into a
  // count that happens to match the node's inputs.
  int64_t count = 0;
  for (const InputSpec& arg : inputs_) {
    const int64_t length = arg.number_attr.empty() ? 1 : get_int(node, arg.number_attr);
    if (__builtin_add_overflow(count, length, &count)) return std::numeric_limits<int64_t>::max();
  }
  return count;
}

const InputSpec& Kernel::input_spec(const graphdef::NodeDef& node, int i) const {
  int64_t first = 0;  // the flat index of the current arg's first input
  for (const InputSpec& arg : inputs_) {
    const int64_t length = arg.number_attr.empty() ? 1 : get_int(node, arg.number_attr);
    if (i < first + length) return arg;
    first += length;
  }
  throw Error("internal error: " + op_ + " has no input " + std::to_string(i));
}

DataType Kernel::input_dtype(const graphdef::NodeDef& node, const InputSpec& arg) const {
  return arg.type_attr.empty() ? arg.fixed_dtype : get_type(node, arg.type_attr);
}

int Kernel::num_outputs(const graphdef::NodeDef&) const {
  // Every op graphrun-cc supports has a fixed output count; an op like Split
  // would compute it from the node's attrs here.
  return static_cast<int>(outputs_.size());
}

void Kernel::validate_attrs(const graphdef::NodeDef& node) const {
  for (const AttrSpec& spec : attrs_) {
    auto found = node.attr().find(spec.name);
    if (found == node.attr().end()) {
      if (!spec.has_default) throw Error("missing attr '" + spec.name + "'");
      continue;
    }
    const graphdef::AttrValue& value = found->second;
    if (!holds_kind(value, spec.kind)) {
      throw Error("attr '" + spec.name + "' should hold " + attr_kind_name(spec.kind) +
                  " but holds " + held_kind_name(value));
    }
    if (spec.kind == AttrKind::kInt && value.i() < spec.minimum) {
      throw Error("attr '" + spec.name + "' is " + std::to_string(value.i()) + "; " + op_ +
                  " needs at least " + std::to_string(spec.minimum));
    }
    if (spec.kind != AttrKind::kType) continue;
    const DataType dtype = value.type();
    if (!is_supported_dtype(dtype)) {
      throw Error("attr '" + spec.name + "' is " + dtype_name(dtype) +
                  ", a dtype graphrun-cc does not support");
    }
    const auto& allowed = spec.allowed_dtypes;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
      throw Error("attr '" + spec.name + "' is " + dtype_name(dtype) + "; " + op_ +
                  " accepts " + dtype_list(allowed));
    }
  }
  if (check_) check_(*this, node);
}

const AttrSpec& Kernel::spec(const std::string& name) const {
  for (const AttrSpec& spec : attrs_) {
    if (spec.name == name) return spec;
  }
  throw Error("internal error: " + op_ + " declares no attr '" + name + "'");
}

const graphdef::AttrValue& Kernel::attr(const graphdef::NodeDef& node, const std::string& name) const {
  const AttrSpec& declared = spec(name);
  auto found = node.attr().find(name);
  if (found != node.attr().end()) return found->second;
  if (!declared.has_default) throw Error("missing attr '" + name + "'");
  return declared.default_value;
}

DataType Kernel::get_type(const graphdef::NodeDef& node, const std::string& name) const {
  return attr(node, name).type();
}

bool Kernel::get_bool(const graphdef::NodeDef& node, const std::string& name) const {
  return attr(node, name).b();
}

int64_t Kernel::get_int(const graphdef::NodeDef& node, const std::string& name) const {
  return attr(node, name).i();
}

std::vector<DataType> Kernel::output_dtypes(const graphdef::NodeDef& node) const {
  std::vector<DataType> dtypes;
  for (const OutputSpec& output : outputs_) {
    dtypes.push_back(output.type_attr.empty() ? output.fixed_dtype : get_type(node, output.type_attr));
  }
  return dtypes;
}

bool KernelRegistry::add(Kernel kernel) {
  std::string op = kernel.op();
  registered_kernels().emplace(std::move(op), std::move(kernel));
  return true;
}

const Kernel* KernelRegistry::find(const std::string& op) {
  const auto& kernels = registered_kernels();
  auto found = kernels.find(op);
  return found == kernels.end() ? nullptr : &found->second;
}

std::vector<std::string> KernelRegistry::op_names() {
  std::vector<std::string> names;
  for (const auto& entry : registered_kernels()) names.push_back(entry.first);
  return names;  // std::map keeps them sorted
}

}  // namespace graphrun
