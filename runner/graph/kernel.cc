#include "graph/kernel.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

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
    case AttrKind::kFloat: return "a float";
    case AttrKind::kIntList: return "a list of ints";
    case AttrKind::kTypeList: return "a list of types";
    case AttrKind::kShapeList: return "a list of shapes";
    case AttrKind::kFunc: return "a function";
    case AttrKind::kStringList: return "a list of strings";
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

// A list attr holds only the one field its kind allows; an empty list holds
// none and suits either kind.
bool holds_only(const graphdef::AttrValue::ListValue& list, int ints, int types, int shapes = 0) {
  return list.s_size() == 0 && list.f_size() == 0 && list.b_size() == 0 && list.shape_size() == shapes &&
         list.tensor_size() == 0 && list.func_size() == 0 && list.i_size() == ints && list.type_size() == types;
}

bool holds_kind(const graphdef::AttrValue& value, AttrKind kind) {
  const bool is_list = value.value_case() == graphdef::AttrValue::kList;
  switch (kind) {
    case AttrKind::kFloat: return value.value_case() == graphdef::AttrValue::kF;
    case AttrKind::kIntList: return is_list && holds_only(value.list(), value.list().i_size(), 0);
    case AttrKind::kTypeList: return is_list && holds_only(value.list(), 0, value.list().type_size());
    case AttrKind::kStringList:
      return is_list && value.list().i_size() == 0 && value.list().type_size() == 0 && value.list().f_size() == 0 &&
             value.list().b_size() == 0 && value.list().shape_size() == 0 && value.list().tensor_size() == 0 &&
             value.list().func_size() == 0;
    case AttrKind::kType: return value.value_case() == graphdef::AttrValue::kType;
    case AttrKind::kBool: return value.value_case() == graphdef::AttrValue::kB;
    case AttrKind::kString: return value.value_case() == graphdef::AttrValue::kS;
    case AttrKind::kShape: return value.value_case() == graphdef::AttrValue::kShape;
    case AttrKind::kTensor: return value.value_case() == graphdef::AttrValue::kTensor;
    case AttrKind::kInt: return value.value_case() == graphdef::AttrValue::kI;
    case AttrKind::kShapeList: return is_list && holds_only(value.list(), 0, 0, value.list().shape_size());
    case AttrKind::kFunc: return value.value_case() == graphdef::AttrValue::kFunc;
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

constexpr int64_t kMaxOutputs = int64_t{1} << 20;

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

Kernel& Kernel::type_list_input(std::string name, std::string type_list_attr) {
  InputSpec spec{std::move(name), std::move(type_list_attr), "", false};
  spec.type_list = true;
  inputs_.push_back(std::move(spec));
  return *this;
}

Kernel& Kernel::output(std::string type_attr) {
  outputs_.push_back({std::move(type_attr), graphdef::DT_INVALID, "", false, ""});
  return *this;
}

Kernel& Kernel::output(DataType fixed_dtype) {
  outputs_.push_back({"", fixed_dtype, "", false, ""});
  return *this;
}

Kernel& Kernel::list_output(std::string number_attr, std::string type_attr) {
  outputs_.push_back({std::move(type_attr), graphdef::DT_INVALID, std::move(number_attr), false, ""});
  return *this;
}

Kernel& Kernel::type_list_output(std::string type_list_attr) {
  outputs_.push_back({std::move(type_list_attr), graphdef::DT_INVALID, "", true, ""});
  return *this;
}

Kernel& Kernel::output_names(std::vector<std::string> names) {
  // A declaration mistake, caught by every run of the binary (test_op_schema lists the names).
  if (names.size() != outputs_.size()) throw std::logic_error(op_ + ": output_names does not match the outputs");
  for (std::size_t i = 0; i < names.size(); ++i) outputs_[i].name = std::move(names[i]);
  return *this;
}

Kernel& Kernel::shape_list_attr(std::string name) {
  AttrSpec spec(std::move(name), AttrKind::kShapeList);
  spec.has_default = true;
  spec.default_value.mutable_list();
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::func_attr(std::string name) {
  add_attr(AttrSpec(std::move(name), AttrKind::kFunc));
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

Kernel& Kernel::choice_attr(std::string name, std::vector<std::string> allowed) {
  AttrSpec spec(std::move(name), AttrKind::kString);
  spec.allowed_strings = std::move(allowed);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::choice_attr(std::string name, std::vector<std::string> allowed, std::string default_value) {
  AttrSpec spec(std::move(name), AttrKind::kString);
  spec.allowed_strings = std::move(allowed);
  spec.has_default = true;
  spec.default_value.set_s(std::move(default_value));
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::float_attr(std::string name, float default_value) {
  AttrSpec spec(std::move(name), AttrKind::kFloat);
  spec.has_default = true;
  spec.default_value.set_f(default_value);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::int_list_attr(std::string name) {
  add_attr(AttrSpec(std::move(name), AttrKind::kIntList));
  return *this;
}

Kernel& Kernel::int_list_attr(std::string name, std::vector<int64_t> default_value) {
  AttrSpec spec(std::move(name), AttrKind::kIntList);
  spec.has_default = true;
  auto* list = spec.default_value.mutable_list();  // present even when empty
  for (int64_t v : default_value) list->add_i(v);
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::type_list_attr(std::string name, int64_t min_length) {
  AttrSpec spec(std::move(name), AttrKind::kTypeList);
  spec.minimum = min_length;
  add_attr(std::move(spec));
  return *this;
}

Kernel& Kernel::string_list_attr(std::string name) {
  AttrSpec spec(std::move(name), AttrKind::kStringList);
  spec.has_default = true;
  spec.default_value.mutable_list();
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

Kernel& Kernel::required_shape_attr(std::string name) {
  add_attr(AttrSpec(std::move(name), AttrKind::kShape));
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

Kernel& Kernel::internal() {
  internal_ = true;
  return *this;
}

Kernel& Kernel::channel_block_inputs(std::vector<int> inputs) {
  channel_block_inputs_ = std::move(inputs);
  return *this;
}

bool Kernel::reads_channel_blocks(int input) const {
  return std::find(channel_block_inputs_.begin(), channel_block_inputs_.end(), input) != channel_block_inputs_.end();
}

Kernel& Kernel::check(CheckFn fn) {
  check_ = std::move(fn);
  return *this;
}

Kernel& Kernel::shape(ShapeFn fn) {
  shape_ = std::move(fn);
  return *this;
}

Kernel& Kernel::prepare(PrepareFn fn) {
  prepare_ = std::move(fn);
  return *this;
}

Kernel& Kernel::compute(ComputeFn fn) {
  compute_ = std::move(fn);
  return *this;
}

int64_t Kernel::arg_length(const graphdef::NodeDef& node, const std::string& number_attr, bool type_list,
                           const std::string& type_attr) const {
  if (type_list) return attr(node, type_attr).list().type_size();
  return number_attr.empty() ? 1 : get_int(node, number_attr);
}

int64_t Kernel::num_inputs(const graphdef::NodeDef& node) const {
  // 64 bits: N is the file's int64, and a hostile N must not wrap into a
  // count that happens to match the node's inputs.
  int64_t count = 0;
  for (const InputSpec& arg : inputs_) {
    const int64_t length = arg_length(node, arg.number_attr, arg.type_list, arg.type_attr);
    if (__builtin_add_overflow(count, length, &count)) return std::numeric_limits<int64_t>::max();
  }
  return count;
}

const InputSpec& Kernel::input_spec(const graphdef::NodeDef& node, int i) const {
  int64_t first = 0;  // the flat index of the current arg's first input
  for (const InputSpec& arg : inputs_) {
    const int64_t length = arg_length(node, arg.number_attr, arg.type_list, arg.type_attr);
    if (i < first + length) return arg;
    first += length;
  }
  throw Error("internal error: " + op_ + " has no input " + std::to_string(i));
}

std::vector<DataType> Kernel::input_dtypes(const graphdef::NodeDef& node) const {
  std::vector<DataType> dtypes;
  for (const InputSpec& arg : inputs_) {
    if (arg.type_list) {
      for (int dtype : attr(node, arg.type_attr).list().type()) dtypes.push_back(static_cast<DataType>(dtype));
      continue;
    }
    const DataType dtype = arg.type_attr.empty() ? arg.fixed_dtype : get_type(node, arg.type_attr);
    const int64_t length = arg_length(node, arg.number_attr, false, arg.type_attr);
    dtypes.insert(dtypes.end(), static_cast<std::size_t>(length), dtype);
  }
  return dtypes;
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
      throw Error("attr '" + spec.name + "' should hold " + attr_kind_name(spec.kind) + " but holds " +
                  held_kind_name(value));
    }
    if (spec.kind == AttrKind::kInt && value.i() < spec.minimum) {
      throw Error("attr '" + spec.name + "' is " + std::to_string(value.i()) + "; " + op_ + " needs at least " +
                  std::to_string(spec.minimum));
    }
    if (spec.kind == AttrKind::kString && !spec.allowed_strings.empty()) {
      const auto& allowed = spec.allowed_strings;
      if (std::find(allowed.begin(), allowed.end(), value.s()) == allowed.end()) {
        std::string choices;
        for (const std::string& choice : allowed) choices += (choices.empty() ? "" : ", ") + choice;
        throw Error("attr '" + spec.name + "' is '" + value.s() + "'; " + op_ + " accepts " + choices);
      }
    }
    if (spec.kind == AttrKind::kTypeList) {
      if (value.list().type_size() < spec.minimum) {
        throw Error("attr '" + spec.name + "' lists " + std::to_string(value.list().type_size()) + " types; " + op_ +
                    " needs at least " + std::to_string(spec.minimum));
      }
      for (int dtype : value.list().type()) {
        if (!is_supported_dtype(static_cast<DataType>(dtype))) {
          throw Error("attr '" + spec.name + "' lists " + dtype_name(static_cast<DataType>(dtype)) +
                      ", a dtype graphrun-cc does not support");
        }
      }
    }
    if (spec.kind != AttrKind::kType) continue;
    const DataType dtype = value.type();
    const auto& listed = spec.allowed_dtypes;
    // variant and string only where the kernel lists them (core/dtype.h)
    const bool listed_variant = (dtype == graphdef::DT_VARIANT || dtype == graphdef::DT_STRING) &&
                                std::find(listed.begin(), listed.end(), dtype) != listed.end();
    if (!is_supported_dtype(dtype) && !listed_variant) {
      throw Error("attr '" + spec.name + "' is " + dtype_name(dtype) + ", a dtype graphrun-cc does not support");
    }
    const auto& allowed = spec.allowed_dtypes;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), dtype) == allowed.end()) {
      throw Error("attr '" + spec.name + "' is " + dtype_name(dtype) + "; " + op_ + " accepts " + dtype_list(allowed));
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

bool Kernel::get_bool(const graphdef::NodeDef& node, const std::string& name) const { return attr(node, name).b(); }

int64_t Kernel::get_int(const graphdef::NodeDef& node, const std::string& name) const { return attr(node, name).i(); }

float Kernel::get_float(const graphdef::NodeDef& node, const std::string& name) const { return attr(node, name).f(); }

const std::string& Kernel::get_string(const graphdef::NodeDef& node, const std::string& name) const {
  return attr(node, name).s();
}

std::vector<int64_t> Kernel::get_int_list(const graphdef::NodeDef& node, const std::string& name) const {
  const auto& values = attr(node, name).list().i();
  return std::vector<int64_t>(values.begin(), values.end());
}

std::vector<DataType> Kernel::output_dtypes(const graphdef::NodeDef& node) const {
  std::vector<DataType> dtypes;
  for (const OutputSpec& output : outputs_) {
    if (output.type_list) {
      for (int dtype : attr(node, output.type_attr).list().type()) dtypes.push_back(static_cast<DataType>(dtype));
      continue;
    }
    const DataType dtype = output.type_attr.empty() ? output.fixed_dtype : get_type(node, output.type_attr);
    const int64_t count = arg_length(node, output.number_attr, false, output.type_attr);
    // The count comes from the file: a hostile one must fail as a model
    // error, not exhaust memory while the graph is being checked.
    if (count > kMaxOutputs) {
      throw Error("attr '" + output.number_attr + "' asks for " + std::to_string(count) + " outputs; " +
                  "graphrun-cc allows at most " + std::to_string(kMaxOutputs));
    }
    dtypes.insert(dtypes.end(), static_cast<std::size_t>(count), dtype);
  }
  return dtypes;
}

bool KernelRegistry::add(Kernel kernel) {
  std::string op = kernel.op();
  registered_kernels().emplace(std::move(op), std::move(kernel));
  return true;
}

const Kernel* KernelRegistry::find(const std::string& op, bool internal_too) {
  const auto& kernels = registered_kernels();
  auto found = kernels.find(op);
  if (found == kernels.end() || (found->second.is_internal() && !internal_too)) return nullptr;
  return &found->second;
}

std::vector<std::string> KernelRegistry::op_names() {
  std::vector<std::string> names;
  for (const auto& entry : registered_kernels()) {
    if (!entry.second.is_internal()) names.push_back(entry.first);
  }
  return names;  // std::map keeps them sorted
}

std::vector<std::string> KernelRegistry::internal_op_names() {
  std::vector<std::string> names;
  for (const auto& entry : registered_kernels()) {
    if (entry.second.is_internal()) names.push_back(entry.first);
  }
  return names;
}

}  // namespace graphrun
