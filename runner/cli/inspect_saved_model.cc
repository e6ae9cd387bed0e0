// inspect of a SavedModel directory: each meta graph's tags and signatures
// with their inputs and outputs (key, dtype, shape, tensor name), in the words
// of `saved_model_cli show --all`, as graphrun inspect lists them
// (graphdef/graphrun/inspect_saved_model.py).
#include <map>
#include <string>

#include "cli/verbs.h"
#include "graph/saved_model.h"
#include "io/format.h"
#include "io/stdout.h"

namespace graphrun {

namespace {

using Infos = std::map<std::string, graphdef::TensorInfo>;

std::string dtype_enum_name(int dtype) {
  const std::string name = graphdef::DataType_IsValid(dtype)
                               ? graphdef::DataType_Name(static_cast<graphdef::DataType>(dtype))
                               : std::to_string(dtype);
  return name;
}

std::string shape_text(const graphdef::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown_rank";
  std::string out = "(";
  for (int i = 0; i < shape.dim_size(); ++i) out += (i ? ", " : "") + std::to_string(shape.dim(i).size());
  return out + ")";  // saved_model_cli writes a vector as "(2)"
}

std::string shape_json(const graphdef::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "null";
  std::string out = "[";
  for (int i = 0; i < shape.dim_size(); ++i) out += (i ? ", " : "") + std::to_string(shape.dim(i).size());
  return out + "]";
}

std::string json_text(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string tensors_text(const Infos& infos, const char* side) {
  std::string out;
  for (const auto& [key, info] : infos) {
    out += std::string("    ") + side + "['" + key + "'] tensor_info:\n";
    out += "        dtype: " + dtype_enum_name(info.dtype()) + "\n";
    out += "        shape: " + shape_text(info.tensor_shape()) + "\n";
    out += "        name: " + info.name() + "\n";
  }
  return out;
}

std::string tensors_json(const Infos& infos) {
  std::string out = "[";
  for (const auto& [key, info] : infos) {
    out += std::string(out.size() > 1 ? ", " : "") + "{\"key\": " + json_text(key) +
           ", \"dtype\": " + json_text(dtype_enum_name(info.dtype())) +
           ", \"shape\": " + shape_json(info.tensor_shape()) + ", \"name\": " + json_text(info.name()) + "}";
  }
  return out + "]";
}

std::string tags_of(const graphdef::MetaGraphDef& meta) {
  std::string out;
  for (const auto& tag : meta.meta_info_def().tags()) out += (out.empty() ? "" : ", ") + tag;
  return out;
}

}  // namespace

std::string saved_model_listing(const std::string& dir, bool json) {
  const graphdef::SavedModel model = read_saved_model(dir);
  std::string out = json ? "{\"saved_model\": " + json_text(dir) + ", \"meta_graphs\": [" : "";
  for (int m = 0; m < model.meta_graphs_size(); ++m) {
    const auto& meta = model.meta_graphs(m);
    const std::map<std::string, graphdef::SignatureDef> signatures(meta.signature_def().begin(),
                                                                   meta.signature_def().end());
    if (json) {
      out += std::string(m ? ", " : "") + "{\"tags\": [";
      for (int t = 0; t < meta.meta_info_def().tags_size(); ++t) {
        out += (t ? ", " : "") + json_text(meta.meta_info_def().tags(t));
      }
      out += "], \"signatures\": [";
      bool first = true;
      for (const auto& [key, signature] : signatures) {
        out += std::string(first ? "" : ", ") + "{\"key\": " + json_text(key) +
               ", \"method_name\": " + json_text(signature.method_name()) +
               ", \"inputs\": " + tensors_json(Infos(signature.inputs().begin(), signature.inputs().end())) +
               ", \"outputs\": " + tensors_json(Infos(signature.outputs().begin(), signature.outputs().end())) + "}";
        first = false;
      }
      out += "]}";
      continue;
    }
    out += "\nMetaGraphDef with tag-set: '" + tags_of(meta) + "' contains the following SignatureDefs:\n";
    for (const auto& [key, signature] : signatures) {
      out += "\nsignature_def['" + key + "']:\n";
      out += "  The given SavedModel SignatureDef contains the following input(s):\n";
      out += tensors_text(Infos(signature.inputs().begin(), signature.inputs().end()), "inputs");
      out += "  The given SavedModel SignatureDef contains the following output(s):\n";
      out += tensors_text(Infos(signature.outputs().begin(), signature.outputs().end()), "outputs");
      out += "  Method name is: " + signature.method_name() + "\n";
    }
  }
  return json ? out + "]}\n" : out;
}

}  // namespace graphrun
