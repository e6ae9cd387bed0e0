// A kernel: everything graphrun-cc knows about one op type. It is declared
// OpDef-style (inputs and outputs typed by attrs, attrs with kinds, allowed
// dtypes and defaults), so graph validation can check a node completely
// before anything runs, and kernels read attrs with their defaults applied.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "graph.pb.h"

namespace graphrun {

class KernelContext;
class Kernel;
class ShapeContext;  // graph/shape_rules.h

// kFunc names a function of the GraphDef library (If, While, PartitionedCall).
enum class AttrKind {
  kType,
  kBool,
  kString,
  kShape,
  kTensor,
  kInt,
  kFloat,
  kIntList,
  kTypeList,
  kShapeList,
  kFunc,
  kStringList
};

struct AttrSpec {
  AttrSpec(std::string name, AttrKind kind) : name(std::move(name)), kind(kind) {}

  std::string name;
  AttrKind kind;
  bool has_default = false;
  graphdef::AttrValue default_value;
  std::vector<DataType> allowed_dtypes;  // kType only; empty means every supported dtype
  std::vector<std::string> allowed_strings;  // kString only; empty means any string
  int64_t minimum = 0;                    // kInt: the least value; kTypeList: the least length
};

struct InputSpec {
  std::string name;
  std::string type_attr;  // the attr holding this input's dtype; empty for a fixed dtype
  // TF's "N*T": the arg is a list of inputs whose length is this int attr
  // (AddN's N). Empty for a single input.
  std::string number_attr;
  // A TF1 reference input: it names a VariableV2 node directly, and the
  // kernel reads or writes that variable in the store instead of receiving a
  // computed value. It is not a data dependency, so Assign can initialize a
  // variable nobody has written yet.
  bool is_ref = false;
  // The dtype of an input whose type no attr gives (LogicalAnd's bool,
  // OneHot's int32 depth).
  DataType fixed_dtype = graphdef::DT_INVALID;
  // TF's "list(type)" arg (IdentityN's T): one input per dtype that the
  // list attr `type_attr` names.
  bool type_list = false;
};

using ComputeFn = std::function<void(KernelContext&)>;
// Extra attr validation beyond kinds and dtypes (e.g. Const decodes `value`).
// Throws Error.
using CheckFn = std::function<void(const Kernel&, const graphdef::NodeDef&)>;
// Decodes and checks a node's attrs once, at load (after the declared kinds
// and dtypes are checked): the value returned is the node's state, which
// compute reads with KernelContext::state<T>() instead of looking attrs up
// by name on every run. Throws Error, reported as a model error.
using PrepareFn = std::function<std::any(const Kernel&, const graphdef::NodeDef&)>;
// The static shapes of a node's outputs, for graphrun-cc inspect; see
// graph/shape_rules.h for the common rules.
using ShapeFn = std::function<void(ShapeContext&)>;

class Kernel {
 public:
  explicit Kernel(std::string op) : op_(std::move(op)) {}

  // --- declaration (used in the REGISTER_KERNEL expression) ---
  Kernel& input(std::string name, std::string type_attr);
  Kernel& ref_input(std::string name, std::string type_attr);
  Kernel& list_input(std::string name, std::string number_attr, std::string type_attr);
  Kernel& input(std::string name, DataType fixed_dtype);  // always this dtype, whatever the attrs
  Kernel& output(std::string type_attr);
  Kernel& output(DataType fixed_dtype);  // an output of one dtype whatever the attrs (Rank's int32)
  // "num*T": as many outputs of dtype attr `type_attr` as the int attr
  // `number_attr` says (Split's num_split).
  Kernel& list_output(std::string number_attr, std::string type_attr);
  // A list(type) arg: one input, or one output, per dtype the attr lists.
  Kernel& type_list_input(std::string name, std::string type_list_attr);
  Kernel& type_list_output(std::string type_list_attr);
  // Names the output args declared so far, in order: needed only by an op with
  // several output args, whose tensors a function body addresses by arg name
  // ("bn:batch_mean:0").
  Kernel& output_names(std::vector<std::string> names);
  Kernel& type_attr(std::string name, std::vector<DataType> allowed = {});
  Kernel& type_attr(std::string name, std::vector<DataType> allowed, DataType default_dtype);
  Kernel& bool_attr(std::string name, bool default_value);
  Kernel& string_attr(std::string name, std::string default_value);
  // A string that must be one of `allowed` (padding, data_format); required,
  // or with a default.
  Kernel& choice_attr(std::string name, std::vector<std::string> allowed);
  Kernel& choice_attr(std::string name, std::vector<std::string> allowed, std::string default_value);
  Kernel& float_attr(std::string name, float default_value);
  Kernel& int_list_attr(std::string name);  // required
  Kernel& int_list_attr(std::string name, std::vector<int64_t> default_value);
  Kernel& type_list_attr(std::string name, int64_t min_length);  // required; each a supported dtype
  Kernel& string_list_attr(std::string name);  // absent means an empty list
  Kernel& shape_attr(std::string name);  // absent means "unknown rank"
  Kernel& required_shape_attr(std::string name);
  Kernel& tensor_attr(std::string name);  // required
  Kernel& int_attr(std::string name, int64_t minimum);  // required, at least `minimum`
  Kernel& int_attr(std::string name, int64_t minimum, int64_t default_value);
  Kernel& shape_list_attr(std::string name);  // defaults to the empty list
  Kernel& func_attr(std::string name);        // required: a function of the GraphDef library
  Kernel& feedable(bool must_be_fed);    // Placeholder-like: a --feed may replace it
  Kernel& holds_variable();               // VariableV2: what ref inputs may name
  // An op only graph passes (runner/passes) write, such as _FusedLayerNorm:
  // a model file naming it is refused as an unknown op, and --list-kernels
  // leaves it out (--json lists it apart), since the Python runtime has no
  // definition of it.
  Kernel& internal();
  // A convolution that takes these data inputs in channel blocks as they
  // come (core/tensor.h, Layout) and may write its output in them when the
  // executor allows (KernelContext::may_write_channel_blocks). Every other
  // input, of this kernel or any other, reaches it plain.
  Kernel& channel_block_inputs(std::vector<int> inputs);
  Kernel& check(CheckFn fn);
  Kernel& shape(ShapeFn fn);  // without one, inspect shows unknown shapes
  Kernel& prepare(PrepareFn fn);  // optional; see PrepareFn
  Kernel& compute(ComputeFn fn);

  // --- use ---
  const std::string& op() const { return op_; }
  // How many data inputs the node takes: one per arg, N per "N*T" arg.
  // Valid only after validate_attrs() accepted the node.
  int64_t num_inputs(const graphdef::NodeDef& node) const;
  // The arg that the node's i-th data input belongs to (i < num_inputs).
  const InputSpec& input_spec(const graphdef::NodeDef& node, int i) const;
  // The dtype each data input must have, in input order. Valid only after
  // validate_attrs() accepted the node.
  std::vector<DataType> input_dtypes(const graphdef::NodeDef& node) const;
  // The declared attrs, in declaration order (the fuzz harness's mutator
  // builds well-formed nodes of any registered op from them).
  const std::vector<AttrSpec>& attr_specs() const { return attrs_; }
  bool is_feedable() const { return feedable_; }
  bool must_be_fed() const { return must_be_fed_; }
  bool is_variable() const { return holds_variable_; }
  bool is_internal() const { return internal_; }
  bool reads_channel_blocks(int input) const;
  bool reads_channel_blocks() const { return !channel_block_inputs_.empty(); }

  // Throws Error naming the attr at fault. Unknown attrs are ignored, as
  // TensorFlow 2.x does.
  void validate_attrs(const graphdef::NodeDef& node) const;

  // Valid only after validate_attrs() accepted the node.
  std::vector<DataType> output_dtypes(const graphdef::NodeDef& node) const;

  // An attr's value from the node, or its declared default.
  const graphdef::AttrValue& attr(const graphdef::NodeDef& node, const std::string& name) const;
  DataType get_type(const graphdef::NodeDef& node, const std::string& name) const;
  bool get_bool(const graphdef::NodeDef& node, const std::string& name) const;
  int64_t get_int(const graphdef::NodeDef& node, const std::string& name) const;
  float get_float(const graphdef::NodeDef& node, const std::string& name) const;
  const std::string& get_string(const graphdef::NodeDef& node, const std::string& name) const;
  std::vector<int64_t> get_int_list(const graphdef::NodeDef& node, const std::string& name) const;

  void run(KernelContext& context) const { compute_(context); }
  const ShapeFn& shape_rule() const { return shape_; }
  // The node's prepared state (empty without a prepare step). Valid only
  // after validate_attrs() accepted the node; throws Error.
  std::any prepare_node(const graphdef::NodeDef& node) const { return prepare_ ? prepare_(*this, node) : std::any(); }

  // The declaration itself, for `--list-kernels --json`.
  struct OutputSpec {
    std::string type_attr;  // empty for a fixed dtype
    DataType fixed_dtype;
    std::string number_attr;  // "num*T": how many outputs; empty for one
    bool type_list = false;   // one output per dtype of the list attr type_attr
    std::string name;         // set by output_names(); may be empty
  };
  const std::vector<InputSpec>& inputs() const { return inputs_; }
  const std::vector<OutputSpec>& outputs() const { return outputs_; }
  const std::vector<AttrSpec>& attrs() const { return attrs_; }

 private:
  const AttrSpec& spec(const std::string& name) const;
  void add_attr(AttrSpec spec);

  std::string op_;
  std::vector<InputSpec> inputs_;
  // How many inputs or outputs an arg stands for: 1, its number attr, or
  // the length of its type-list attr.
  int64_t arg_length(const graphdef::NodeDef& node, const std::string& number_attr, bool type_list,
                     const std::string& type_attr) const;

  std::vector<OutputSpec> outputs_;
  std::vector<AttrSpec> attrs_;
  bool feedable_ = false;
  bool must_be_fed_ = false;
  bool holds_variable_ = false;
  bool internal_ = false;
  std::vector<int> channel_block_inputs_;
  CheckFn check_;
  ShapeFn shape_;
  PrepareFn prepare_;
  ComputeFn compute_;
};

class KernelRegistry {
 public:
  // Returns true so it can initialize a static; see REGISTER_KERNEL.
  static bool add(Kernel kernel);
  // A model's op: internal kernels only when `internal_too` (for graphs
  // that graph passes rewrote).
  static const Kernel* find(const std::string& op, bool internal_too = false);
  static std::vector<std::string> op_names();  // sorted; no internal kernels
  static std::vector<std::string> internal_op_names();  // sorted; only internal kernels
};

#define GRAPHRUN_CONCAT_INNER(a, b) a##b
#define GRAPHRUN_CONCAT(a, b) GRAPHRUN_CONCAT_INNER(a, b)

// Registers a kernel from the file that defines it, at static-initialization
// time, so adding a kernel never touches a central list.
#define REGISTER_KERNEL(kernel_expression)                                              \
  [[maybe_unused]] static const bool GRAPHRUN_CONCAT(kernel_registered_, __COUNTER__) = \
      ::graphrun::KernelRegistry::add(kernel_expression)

}  // namespace graphrun
