// graphrun-cc inspect: the same description graphrun inspect prints (text,
// or one JSON document with the same keys in the same order), read from the
// GraphDef itself, so a model graphrun-cc cannot run is still described and
// the ops it has no kernel for are listed.
#include <cctype>
#include <map>
#include <optional>

#include "exec/fetches.h"
#include "io/format.h"
#include "graph/graph.h"
#include "graph/input_name.h"
#include "graph/saved_model.h"
#include "graph/kernel.h"
#include "graph/shape_inference.h"
#include "passes/pass.h"
#include "io/stdout.h"
#include "cli/text_escape.h"
#include "cli/verbs.h"

namespace graphrun {

namespace {

using Dims = std::optional<std::vector<int64_t>>;  // nullopt: unknown rank; -1: unknown dim

struct Input {
  std::string name, op;
  std::optional<std::string> dtype;
  Dims shape;
};

struct Output {
  std::string name;
  std::optional<std::string> dtype;  // nullopt when the graph cannot be loaded
  Dims shape;
};

struct Unsupported {
  std::string op;
  int64_t count = 0;
  std::string first_node;
};

struct FunctionArg {
  std::string name;
  std::optional<std::string> dtype;  // nullopt for a list or an unset type attr
};

struct Function {
  std::string name;
  std::vector<FunctionArg> inputs, outputs;
  int64_t nodes = 0;
};

struct Summary {
  std::string model, format;
  int64_t producer = 0, min_consumer = 0, nodes = 0;
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  int64_t count = 0, bytes = 0, const_nodes = 0, variable_nodes = 0;
  std::vector<std::pair<std::string, int64_t>> op_types;
  std::vector<Unsupported> unsupported;
  std::optional<std::string> load_error;
  std::vector<Function> functions;  // the library's; listed only when there is one
  std::optional<PassReport> passes;  // graphrun-cc's own: what its load-time passes do to the graph
};

// graphrun's names: numpy's for the dtypes graphrun holds ("float32"),
// TensorFlow's for the others ("string", "variant", "resource", "bfloat16"),
// "_ref" after a reference type's base, the number for an undefined enum.
std::string enum_dtype_name(int dtype) {
  if (dtype > 100 && graphdef::DataType_IsValid(dtype)) return enum_dtype_name(dtype - 100) + "_ref";
  if (is_supported_dtype(static_cast<DataType>(dtype))) return dtype_name(static_cast<DataType>(dtype));
  if (dtype == graphdef::DT_HALF) return "float16";
  if (!graphdef::DataType_IsValid(dtype)) return "DataType " + std::to_string(dtype);
  std::string name = graphdef::DataType_Name(static_cast<DataType>(dtype)).substr(3);  // past "DT_"
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// TensorFlow's lowering residue, judged by the node alone (the caller checks nothing reads it).
bool residue_name(const graphdef::NodeDef& def) {
  GraphNode node;
  node.def = &def;
  return is_lowering_residue(node);
}

Dims dims_of(const graphdef::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const auto& dim : proto.dim()) dims.push_back(dim.size() < 0 ? -1 : dim.size());
  return dims;
}

int64_t elements(const graphdef::TensorShapeProto& proto) {
  if (proto.unknown_rank()) return 0;
  int64_t n = 1;
  for (const auto& dim : proto.dim()) {
    if (dim.size() < 0) return 0;
    n *= dim.size();
  }
  return n;
}

int64_t itemsize(int dtype) {
  if (is_supported_dtype(static_cast<DataType>(dtype)))
    return static_cast<int64_t>(dtype_size(static_cast<DataType>(dtype)));
  switch (dtype) {
    case graphdef::DT_HALF:
    case graphdef::DT_BFLOAT16: return 2;
    case graphdef::DT_COMPLEX64: return 8;
    case graphdef::DT_COMPLEX128: return 16;
    default: return 0;
  }
}

void count_parameters(const graphdef::GraphDef& def, Summary& s) {
  // A Const used only as the value (input 1) of Assign nodes is a variable's
  // initial value: counted once, as the variable.
  std::map<std::string, std::vector<bool>> only_assign_value;  // source -> per use: is it an Assign's value?
  for (const auto& node : def.node()) {
    for (int position = 0; position < node.input_size(); ++position) {
      const std::string& text = node.input(position);
      const InputName parsed = parse_input_name(text);
      only_assign_value[parsed.node].push_back(node.op() == "Assign" && position == 1 && !parsed.is_control);
    }
  }
  for (const auto& node : def.node()) {
    int64_t n = 0, size = 0;
    if (node.op() == "Const") {
      const auto found = only_assign_value.find(node.name());
      if (found != only_assign_value.end() && !found->second.empty() &&
          std::all_of(found->second.begin(), found->second.end(), [](bool b) { return b; })) {
        continue;
      }
      const auto& tensor = node.attr().count("value") ? node.attr().at("value").tensor() : graphdef::TensorProto();
      n = elements(tensor.tensor_shape());
      size = itemsize(tensor.dtype());
      ++s.const_nodes;
    } else if (node.op() == "VariableV2") {
      n = node.attr().count("shape") ? elements(node.attr().at("shape").shape()) : 0;
      size = node.attr().count("dtype") ? itemsize(node.attr().at("dtype").type()) : 0;
      ++s.variable_nodes;
    } else {
      continue;
    }
    s.count += n;
    s.bytes += n * size;
  }
}

void find_outputs(const graphdef::GraphDef& def, const std::string& path, Summary& s) {
  try {
    const Graph graph(path, std::make_unique<graphdef::GraphDef>(def));
    const auto shapes = infer_shapes(graph);
    std::vector<char> consumed(graph.size(), 0);
    for (int i = 0; i < graph.size(); ++i) {
      for (const Endpoint& input : graph.node(i).inputs) consumed[input.node] = 1;
      for (int control : graph.node(i).control_inputs) consumed[control] = 1;
    }
    for (int i = 0; i < graph.size(); ++i) {
      const GraphNode& node = graph.node(i);
      if (consumed[i] || is_lowering_residue(node)) continue;
      for (std::size_t k = 0; k < node.output_dtypes.size(); ++k) {
        if (!node.runnable()) {  // what graphrun-cc cannot run has no known dtype or shape
          s.outputs.push_back({tensor_name(node.name(), static_cast<int>(k)), std::nullopt, std::nullopt});
          continue;
        }
        const StaticShape& shape = shapes[i][k];
        s.outputs.push_back({tensor_name(node.name(), static_cast<int>(k)), dtype_name(node.output_dtypes[k]),
                             shape.known_rank ? Dims(shape.dims) : std::nullopt});
      }
    }
  } catch (const ExitError& error) {
    // Unloadable: the sinks by name only, and why, unless the unsupported ops already say it.
    std::map<std::string, bool> consumed;
    for (const auto& node : def.node()) {
      for (const std::string& text : node.input()) consumed[parse_input_name(text).node] = true;
    }
    for (const auto& node : def.node()) {
      if (!consumed.count(node.name()) && node.op() != "NoOp" && !residue_name(node)) {
        s.outputs.push_back({node.name() + ":0", {}, {}});
      }
    }
    std::string message = error.what();
    for (char& c : message) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    if (s.unsupported.empty()) s.load_error = message;
  }
}

std::vector<FunctionArg> function_args(const graphdef::FunctionDef& fdef,
                                       const google::protobuf::RepeatedPtrField<graphdef::OpDef::ArgDef>& args) {
  std::vector<FunctionArg> out;
  for (const auto& arg : args) {
    FunctionArg a{arg.name(), std::nullopt};
    auto attr = fdef.attr().find(arg.type_attr());
    if (!arg.type_attr().empty() && attr != fdef.attr().end()) {
      a.dtype = enum_dtype_name(attr->second.type());
    } else if (arg.type_attr().empty() && arg.number_attr().empty() && arg.type_list_attr().empty()) {
      a.dtype = enum_dtype_name(arg.type());
    }
    out.push_back(a);
  }
  return out;
}

void note_unsupported(const graphdef::NodeDef& node, const std::string& label, Summary& s) {
  if (KernelRegistry::find(node.op()) != nullptr) return;
  auto found =
      std::find_if(s.unsupported.begin(), s.unsupported.end(), [&](const Unsupported& u) { return u.op == node.op(); });
  if (found == s.unsupported.end()) found = s.unsupported.insert(s.unsupported.end(), {node.op(), 0, label});
  ++found->count;
}

Summary summarize(const std::string& path, const std::string& signature) {
  const auto def = Graph::read(path, signature);
  Summary s;
  s.model = path;
  s.format = path.size() >= 6 && path.compare(path.size() - 6, 6, ".pbtxt") == 0 ? "text" : "binary";
  s.producer = def->versions().producer();
  s.min_consumer = def->versions().min_consumer();
  s.nodes = def->node_size();
  std::map<std::string, int64_t> histogram;
  std::map<std::string, bool> read;
  for (const auto& node : def->node()) {
    for (const std::string& text : node.input()) read[parse_input_name(text).node] = true;
  }
  for (const auto& node : def->node()) {
    ++histogram[node.op()];
    if ((node.op() == "Placeholder" || node.op() == "PlaceholderWithDefault") &&
        !(read.count(node.name()) == 0 && residue_name(node))) {
      Input input{node.name(), node.op(), std::nullopt, std::nullopt};
      if (node.attr().count("dtype")) input.dtype = enum_dtype_name(node.attr().at("dtype").type());
      if (node.attr().count("shape")) input.shape = dims_of(node.attr().at("shape").shape());
      s.inputs.push_back(input);
    }
    note_unsupported(node, node.name(), s);
  }
  for (const auto& fdef : def->library().function()) {
    const graphdef::OpDef& sig = fdef.signature();
    s.functions.push_back({sig.name(), function_args(fdef, sig.input_arg()), function_args(fdef, sig.output_arg()),
                           fdef.node_def_size()});
    for (const auto& node : fdef.node_def()) note_unsupported(node, node.name() + " (in " + sig.name() + ")", s);
  }
  s.op_types.assign(histogram.begin(), histogram.end());
  std::stable_sort(s.op_types.begin(), s.op_types.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  find_outputs(*def, path, s);
  count_parameters(*def, s);
  return s;
}

// What the load-time passes make of the graph run as `graphrun-cc MODEL`
// does (its default fetches, every input fed); nullopt when it cannot load.
std::optional<PassReport> optimize_report(const std::string& path, const std::string& signature, bool enabled) {
  try {
    std::unique_ptr<const Graph> graph = Graph::load(path, signature);
    PassReport report;
    report.nodes_before = report.nodes_after = graph->size();
    if (!enabled) return report;
    PassContext context;
    for (const Fetch& fetch : default_fetches(*graph)) context.fetched.insert(graph->node(fetch.endpoint.node).name());
    for (int i = 0; i < graph->size(); ++i) {
      if (graph->node(i).runnable() && graph->node(i).kernel->is_feedable()) context.fed.insert(graph->node(i).name());
    }
    run_graph_passes(std::move(graph), context, &report);
    return report;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// -- JSON -------------------------------------------------------------------------------

std::string json_string(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string json_dims(const Dims& dims) {
  if (!dims) return "null";
  std::string out = "[";
  for (std::size_t i = 0; i < dims->size(); ++i) {
    out += (i ? ", " : "") + ((*dims)[i] < 0 ? std::string("null") : std::to_string((*dims)[i]));
  }
  return out + "]";
}

std::string json_optional(const std::optional<std::string>& text) { return text ? json_string(*text) : "null"; }

std::string to_json(const Summary& s) {
  std::string out = "{\"model\": " + json_string(s.model) + ", \"format\": \"" + s.format +
                    "\", \"producer\": " + std::to_string(s.producer) +
                    ", \"min_consumer\": " + std::to_string(s.min_consumer) +
                    ", \"nodes\": " + std::to_string(s.nodes) + ", \"inputs\": [";
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    const Input& in = s.inputs[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + json_string(in.name) + ", \"op\": " + json_string(in.op) +
           ", \"dtype\": " + json_optional(in.dtype) + ", \"shape\": " + json_dims(in.shape) + "}";
  }
  out += "], \"outputs\": [";
  for (std::size_t i = 0; i < s.outputs.size(); ++i) {
    const Output& o = s.outputs[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + json_string(o.name) + ", \"dtype\": " + json_optional(o.dtype) +
           ", \"shape\": " + json_dims(o.shape) + "}";
  }
  out += "], \"parameters\": {\"count\": " + std::to_string(s.count) + ", \"bytes\": " + std::to_string(s.bytes) +
         ", \"const_nodes\": " + std::to_string(s.const_nodes) +
         ", \"variable_nodes\": " + std::to_string(s.variable_nodes) + "}, \"op_types\": [";
  for (std::size_t i = 0; i < s.op_types.size(); ++i) {
    out += std::string(i ? ", " : "") + "{\"op\": " + json_string(s.op_types[i].first) +
           ", \"count\": " + std::to_string(s.op_types[i].second) + "}";
  }
  out += "], \"unsupported_ops\": [";
  for (std::size_t i = 0; i < s.unsupported.size(); ++i) {
    const Unsupported& u = s.unsupported[i];
    out += std::string(i ? ", " : "") + "{\"op\": " + json_string(u.op) + ", \"count\": " + std::to_string(u.count) +
           ", \"first_node\": " + json_string(u.first_node) + "}";
  }
  out += "], \"load_error\": " + json_optional(s.load_error);
  if (!s.functions.empty()) {
    auto args = [](const std::vector<FunctionArg>& list) {
      std::string text = "[";
      for (std::size_t k = 0; k < list.size(); ++k) {
        text += std::string(k ? ", " : "") + "{\"name\": " + json_string(list[k].name) +
                ", \"dtype\": " + json_optional(list[k].dtype) + "}";
      }
      return text + "]";
    };
    out += ", \"functions\": [";
    for (std::size_t i = 0; i < s.functions.size(); ++i) {
      const Function& f = s.functions[i];
      out += std::string(i ? ", " : "") + "{\"name\": " + json_string(f.name) + ", \"inputs\": " + args(f.inputs) +
             ", \"outputs\": " + args(f.outputs) + ", \"nodes\": " + std::to_string(f.nodes) + "}";
    }
    out += "]";
  }
  // Last, so the keys before it are graphrun inspect's, in its order.
  if (s.passes) out += ", \"optimize\": " + s.passes->json();
  return out + "}\n";
}

// -- text -------------------------------------------------------------------------------

std::string show_dims(const Dims& dims) {
  if (!dims) return "<unknown>";
  std::string out = "[";
  for (std::size_t i = 0; i < dims->size(); ++i) {
    out += (i ? "," : "") + ((*dims)[i] < 0 ? std::string("?") : std::to_string((*dims)[i]));
  }
  return out + "]";
}

std::string rstrip(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// Left-aligned columns two spaces apart, "none" for no rows.
std::vector<std::string> table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return {"  none"};
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::vector<std::string> lines;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) line += "  ";
      line += row[i] + std::string(widths[i] - row[i].size(), ' ');
    }
    lines.push_back(rstrip(line));
  }
  return lines;
}

// shlex.quote.
std::string shell_quote(const std::string& word) {
  if (word.empty()) return "''";
  const std::string safe = "@%+=:,./-_";
  bool plain = true;
  for (char c : word)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || safe.find(c) != std::string::npos);
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\"'\"'") : std::string(1, c);
  return out + "'";
}

std::string try_command(const Summary& s) {
  std::string command = "graphrun " + shell_quote(s.model);
  std::vector<const Input*> needed;
  for (const Input& in : s.inputs) {
    if (in.op == "Placeholder") needed.push_back(&in);
  }
  if (!needed.empty()) command += " --random";
  for (const Input* in : needed) {
    if (!in->shape || std::find(in->shape->begin(), in->shape->end(), -1) == in->shape->end()) continue;
    std::string dims;
    for (std::size_t i = 0; i < in->shape->size(); ++i) {
      dims += (i ? "," : "") + ((*in->shape)[i] < 0 ? std::string("1") : std::to_string((*in->shape)[i]));
    }
    command += " --shape " + shell_quote(in->name + "=" + dims);
  }
  return command;
}

std::string to_text(const Summary& s) {
  std::vector<std::string> lines = {"model: " + s.model, "  " + s.format + " GraphDef, producer " +
                                                             std::to_string(s.producer) + ", " +
                                                             std::to_string(s.nodes) + " nodes"};
  auto add = [&](const std::vector<std::string>& more) { lines.insert(lines.end(), more.begin(), more.end()); };
  lines.push_back("inputs (" + std::to_string(s.inputs.size()) + "):");
  std::vector<std::vector<std::string>> rows;
  for (const Input& in : s.inputs) {
    rows.push_back({in.name, in.dtype.value_or("?"), show_dims(in.shape),
                    in.op == "PlaceholderWithDefault" ? "has a default" : ""});
  }
  add(table(rows));
  lines.push_back("outputs (" + std::to_string(s.outputs.size()) + "):");
  rows.clear();
  for (const Output& o : s.outputs) rows.push_back({o.name, o.dtype.value_or("?"), o.dtype ? show_dims(o.shape) : "?"});
  add(table(rows));
  lines.push_back("parameters: " + std::to_string(s.count) + " values, " + std::to_string(s.bytes) + " bytes in " +
                  std::to_string(s.const_nodes) + " Const and " + std::to_string(s.variable_nodes) +
                  " VariableV2 nodes");
  lines.push_back("op types (" + std::to_string(s.op_types.size()) + "):");
  rows.clear();
  for (const auto& [op, count] : s.op_types) rows.push_back({op, std::to_string(count)});
  add(table(rows));
  if (!s.functions.empty()) {
    lines.push_back("functions (" + std::to_string(s.functions.size()) + "):");
    rows.clear();
    auto dtypes = [](const std::vector<FunctionArg>& list) {
      std::string text;
      for (std::size_t k = 0; k < list.size(); ++k) text += std::string(k ? ", " : "") + list[k].dtype.value_or("?");
      return "(" + text + ")";
    };
    for (const Function& f : s.functions) {
      rows.push_back({f.name, dtypes(f.inputs) + " -> " + dtypes(f.outputs),
                      std::to_string(f.nodes) + (f.nodes == 1 ? " node" : " nodes")});
    }
    add(table(rows));
  }
  if (!s.unsupported.empty()) {
    lines.push_back("unsupported ops (" + std::to_string(s.unsupported.size()) + "): no kernel for");
    rows.clear();
    for (const Unsupported& u : s.unsupported) {
      rows.push_back({u.op, std::to_string(u.count) + (u.count > 1 ? " nodes" : " node"), "e.g. " + u.first_node});
    }
    add(table(rows));
  } else {
    lines.push_back("unsupported ops: none");
  }
  if (s.load_error) {
    lines.push_back("cannot be run: " + *s.load_error);
  } else if (s.unsupported.empty()) {
    lines.push_back("try:");
    lines.push_back("  " + try_command(s));
  }
  if (s.passes) lines.push_back(s.passes->summary());
  std::string text;
  for (const std::string& line : lines) text += rstrip(line) + "\n";
  return text;
}

}  // namespace

int inspect_verb(const Options& options) {
  if (is_saved_model(options.model) && options.signature.empty()) {
    write_stdout(saved_model_listing(options.model, options.json));
    return kExitOk;
  }
  Summary summary = summarize(options.model, options.signature);
  summary.passes = optimize_report(options.model, options.signature, options.optimize);
  write_stdout(options.json ? to_json(summary) : escape_controls(to_text(summary), true));
  return kExitOk;
}

}  // namespace graphrun
