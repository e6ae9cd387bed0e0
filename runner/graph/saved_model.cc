#include "graph/saved_model.h"

#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/tensor_limit.h"
#include "graph/captured_variables.h"
#include "io/crc32c.h"
#include "io/sstable.h"
#include "meta_graph.pb.h"
#include "tensor_bundle.pb.h"
#include "trackable_object_graph.pb.h"

namespace graphrun {

namespace {

constexpr uint64_t kMaxProtoBytes = (uint64_t{1} << 31) - 1;
constexpr const char* kObjectGraphKey = "_CHECKPOINTABLE_OBJECT_GRAPH";

const std::set<std::string> kSaverOps = {"SaveV2",          "RestoreV2",       "SaveSlices",
                                         "RestoreSlice",    "Restore",         "MergeV2Checkpoints",
                                         "ShardedFilename", "ShardedFilespec", "StringJoin"};

std::string node_of(const std::string& input) {
  const std::size_t start = input.empty() || input[0] != '^' ? 0 : 1;
  return input.substr(start, input.find(':') == std::string::npos ? std::string::npos : input.find(':') - start);
}

int output_of(const std::string& input) {
  const std::size_t colon = input.rfind(':');
  if (colon == std::string::npos) return 0;
  try {
    return std::stoi(input.substr(colon + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

// The whole file, refused by its size first (files, not pipes: this reads a directory's members).
std::string read_whole(const std::string& path, uint64_t limit) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) throw ModelError(path + ": no such file");
  if (!S_ISREG(info.st_mode)) throw ModelError(path + ": not a regular file; put the file saved with the model there");
  if (static_cast<uint64_t>(info.st_size) > limit) {
    throw ModelError(path + ": the file is " + format_bytes(info.st_size) + ", over the " + format_bytes(limit) +
                     " this reader allows");
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw ModelError("cannot read " + path);
  std::string bytes(static_cast<std::size_t>(info.st_size), '\0');
  const std::size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  if (got != bytes.size()) throw ModelError("cannot read " + path);
  return bytes;
}

// An open checkpoint: its entries, and each tensor's bytes on demand, checked.
class Bundle {
 public:
  explicit Bundle(std::string prefix) : prefix_(std::move(prefix)) {
    const std::string index = prefix_ + ".index";
    std::map<std::string, std::string> table;
    try {
      table = parse_sstable(read_whole(index, kMaxProtoBytes), index);
    } catch (const ExitError&) {
      throw;
    } catch (const Error& error) {
      throw ModelError(error.what());
    }
    graphdef::BundleHeaderProto header;
    if (!header.ParseFromString(table[""])) throw ModelError(index + ": unreadable bundle header");
    if (header.endianness() != graphdef::BundleHeaderProto::LITTLE) {
      throw ModelError(index + ": a big-endian checkpoint, which graphrun-cc does not read");
    }
    if (header.num_shards() < 1 || header.num_shards() > (1 << 16)) {
      throw ModelError(index + ": " + std::to_string(header.num_shards()) + " shards");
    }
    num_shards_ = header.num_shards();
    table.erase("");
    for (auto& [key, value] : table) {
      if (!entries_[key].ParseFromString(value)) throw ModelError(index + ": entry '" + key + "' does not parse");
    }
  }

  bool has(const std::string& key) const { return entries_.count(key) > 0; }

  // A string tensor's elements. TF writes one as each element's length
  // (varint), a masked crc32c of the lengths, then the bytes; the entry's
  // checksum covers the lengths (as little-endian uint32s, uint64s past 4 GiB),
  // that crc's four bytes, and the bytes.
  std::vector<std::string> read_strings(const std::string& key) const {
    const graphdef::BundleEntryProto& entry = entries_.at(key);
    const std::string where = prefix_ + ": tensor '" + key + "'";
    uint64_t count = 1;
    for (const auto& dim : entry.shape().dim()) {
      if (dim.size() < 0 || (dim.size() > 0 && count > UINT64_MAX / static_cast<uint64_t>(dim.size()))) {
        throw ModelError(where + ": bad shape");
      }
      count *= static_cast<uint64_t>(dim.size());
    }
    if (entry.dtype() != graphdef::DT_STRING || entry.size() < 0 || count > static_cast<uint64_t>(entry.size()) ||
        static_cast<uint64_t>(entry.size()) > max_tensor_bytes()) {
      throw ModelError(where + ": not a string tensor of " + std::to_string(entry.size()) + " bytes");
    }
    const std::string raw = read_bytes(entry, where);
    std::vector<uint64_t> lengths;
    std::size_t pos = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t value = 0;
      for (int shift = 0;; shift += 7) {
        if (pos >= raw.size() || shift >= 64) throw ModelError(where + ": truncated string lengths");
        const unsigned char byte = static_cast<unsigned char>(raw[pos++]);
        value |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if (!(byte & 0x80)) break;
      }
      lengths.push_back(value);
    }
    uint64_t total = 0;
    for (uint64_t length : lengths) total += std::min<uint64_t>(length, raw.size());
    if (raw.size() < pos + 4 || total != raw.size() - pos - 4) {
      throw ModelError(where + ": the string lengths do not match its " + std::to_string(raw.size()) + " bytes");
    }
    std::string covered;
    for (uint64_t length : lengths) {
      const int width = length < (uint64_t{1} << 32) ? 4 : 8;
      for (int b = 0; b < width; ++b) covered.push_back(static_cast<char>((length >> (8 * b)) & 0xff));
    }
    covered.append(raw, pos, std::string::npos);
    if (masked_crc32c(covered.data(), covered.size()) != entry.crc32c()) {
      throw ModelError(where + ": the bytes fail their checksum (the file is damaged)");
    }
    std::vector<std::string> out;
    pos += 4;
    for (uint64_t length : lengths) {
      out.push_back(raw.substr(pos, length));
      pos += length;
    }
    return out;
  }

  // Fills `tensor` (dtype, shape, content) with the entry's checked bytes.
  void read(const std::string& key, graphdef::TensorProto& tensor) const {
    const graphdef::BundleEntryProto& entry = entries_.at(key);
    char shard[64];
    std::snprintf(shard, sizeof shard, ".data-%05d-of-%05d", entry.shard_id(), num_shards_);
    const std::string path = prefix_ + shard, where = path + ": tensor '" + key + "'";
    if (entry.shard_id() < 0 || entry.shard_id() >= num_shards_ || entry.slices_size() > 0) {
      throw ModelError(where + ": a sliced or misplaced entry, which graphrun-cc does not read");
    }
    uint64_t count = 1;
    for (const auto& dim : entry.shape().dim()) {
      if (dim.size() < 0 || (dim.size() > 0 && count > UINT64_MAX / static_cast<uint64_t>(dim.size()))) {
        throw ModelError(where + ": bad shape");
      }
      count *= static_cast<uint64_t>(dim.size());
    }
    const DataType dtype = entry.dtype();
    const std::size_t itemsize = is_supported(dtype) ? dtype_size(dtype) : 0;
    if (itemsize == 0) throw ModelError(where + ": dtype " + dtype_name(dtype) + ", which graphrun-cc does not read");
    if (count > max_tensor_bytes() / itemsize || entry.size() < 0 ||
        static_cast<uint64_t>(entry.size()) != count * itemsize || entry.offset() < 0) {
      throw ModelError(where + ": " + std::to_string(entry.size()) + " bytes do not hold " + dtype_name(dtype) +
                       " of that shape, or exceed the tensor size limit");
    }
    std::string bytes = read_bytes(entry, where);
    if (masked_crc32c(bytes.data(), bytes.size()) != entry.crc32c()) {
      throw ModelError(where + ": the bytes fail their checksum (the file is damaged)");
    }
    tensor.set_dtype(dtype);
    *tensor.mutable_tensor_shape() = entry.shape();
    tensor.set_tensor_content(std::move(bytes));
  }

 private:
  std::string read_bytes(const graphdef::BundleEntryProto& entry, const std::string& where) const {
    char shard[64];
    std::snprintf(shard, sizeof shard, ".data-%05d-of-%05d", entry.shard_id(), num_shards_);
    const std::string path = prefix_ + shard;
    if (entry.shard_id() < 0 || entry.shard_id() >= num_shards_ || entry.slices_size() > 0 || entry.offset() < 0) {
      throw ModelError(where + ": a sliced or misplaced entry, which graphrun-cc does not read");
    }
    struct stat info;
    if (stat(path.c_str(), &info) != 0) throw ModelError(path + ": no such file");
    // a FIFO here would block fopen for ever
    if (!S_ISREG(info.st_mode))
      throw ModelError(path + ": not a regular file; put the file saved with the model there");
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) throw ModelError(path + ": no such file");
    std::string bytes(static_cast<std::size_t>(entry.size()), '\0');
    const bool ok = fseeko(file, entry.offset(), SEEK_SET) == 0 &&
                    (bytes.empty() || std::fread(bytes.data(), 1, bytes.size(), file) == bytes.size());
    std::fclose(file);
    if (!ok) throw ModelError(where + ": its bytes lie past the file's end");
    return bytes;
  }

  static bool is_supported(DataType dtype) {
    try {
      return dtype_size(dtype) > 0;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::string prefix_;
  int num_shards_ = 1;
  std::map<std::string, graphdef::BundleEntryProto> entries_;
};

// The first string of a DT_STRING Const's k-th element.
bool string_element(const graphdef::NodeDef& node, int k, std::string& out) {
  if (node.op() != "Const" || !node.attr().count("value")) return false;
  const auto& tensor = node.attr().at("value").tensor();
  if (tensor.dtype() != graphdef::DT_STRING || tensor.string_val_size() == 0 || k < 0) return false;
  out = tensor.string_val(std::min(k, tensor.string_val_size() - 1));
  return true;
}

// VariableV2 / VarHandleOp node -> checkpoint key, from RestoreV2 -> (Identity)* -> Assign edges.
std::map<std::string, std::string> restored_variables(const graphdef::GraphDef& graph) {
  std::unordered_map<std::string, const graphdef::NodeDef*> nodes;
  for (const auto& node : graph.node()) nodes[node.name()] = &node;
  std::map<std::string, std::string> keys;
  for (const auto& node : graph.node()) {
    if ((node.op() != "Assign" && node.op() != "AssignVariableOp") || node.input_size() < 2) continue;
    std::string source = node_of(node.input(1));
    int index = output_of(node.input(1));
    for (int hops = 0;
         hops < 64 && nodes.count(source) && nodes[source]->op() == "Identity" && nodes[source]->input_size() > 0;
         ++hops) {
      index = output_of(nodes[source]->input(0));
      source = node_of(nodes[source]->input(0));
    }
    auto restore = nodes.find(source);
    if (restore == nodes.end() || restore->second->op() != "RestoreV2" || restore->second->input_size() < 2) continue;
    auto names = nodes.find(node_of(restore->second->input(1)));
    std::string key;
    if (names != nodes.end() && string_element(*names->second, index, key)) keys[node_of(node.input(0))] = key;
  }
  for (const auto& node : graph.node()) {
    if (node.op() == "VariableV2" || node.op() == "VarHandleOp") keys.emplace(node.name(), node.name());
  }
  return keys;
}

// The saver's ops, what depends on them, and what only they use.
std::unordered_set<std::string> saver_nodes(const graphdef::GraphDef& graph) {
  std::unordered_map<std::string, std::vector<std::string>> users;
  std::unordered_map<std::string, const graphdef::NodeDef*> nodes;
  for (const auto& node : graph.node()) nodes[node.name()] = &node;
  for (const auto& node : graph.node()) {
    for (const auto& input : node.input()) users[node_of(input)].push_back(node.name());
  }
  std::unordered_set<std::string> saver;
  std::vector<std::string> stack;
  for (const auto& node : graph.node()) {
    if (kSaverOps.count(node.op())) stack.push_back(node.name());
  }
  while (!stack.empty()) {
    const std::string name = stack.back();
    stack.pop_back();
    if (!saver.insert(name).second) continue;
    for (const auto& user : users[name]) stack.push_back(user);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::string& name : std::vector<std::string>(saver.begin(), saver.end())) {
      for (const auto& input : nodes[name]->input()) {
        const std::string producer = node_of(input);
        if (!nodes.count(producer) || saver.count(producer) || users[producer].empty()) continue;
        bool only_saver = true;
        for (const auto& user : users[producer]) only_saver = only_saver && saver.count(user);
        if (only_saver) changed = saver.insert(producer).second || changed;
      }
    }
  }
  return saver;
}

const graphdef::MetaGraphDef& meta_graph_for(const graphdef::SavedModel& model, const std::vector<std::string>& tags,
                                             const std::string& where) {
  const std::set<std::string> wanted(tags.begin(), tags.end());
  std::string there;
  for (const auto& meta : model.meta_graphs()) {
    const std::set<std::string> has(meta.meta_info_def().tags().begin(), meta.meta_info_def().tags().end());
    if (has == wanted) return meta;
    std::string joined;
    for (const auto& tag : has) joined += (joined.empty() ? "" : ",") + tag;
    there += (there.empty() ? "" : "; ") + (joined.empty() ? std::string("(none)") : joined);
  }
  std::string asked;
  for (const auto& tag : wanted) asked += (asked.empty() ? "" : ",") + tag;
  throw ModelError(where + ": no meta graph tagged " + asked + " (it has: " + there + ")");
}

// A tensor name's node and output index.
std::pair<std::string, int> tensor_of(const std::string& name) {
  const int index = output_of(name);
  return {node_of(name), index < 0 ? 0 : index};
}

void rename_node(graphdef::GraphDef& graph, const std::string& from, const std::string& to) {
  for (auto& node : *graph.mutable_node()) {
    if (node.name() == from) node.set_name(to);
    for (auto& ref : *node.mutable_input()) {
      const bool control = !ref.empty() && ref[0] == '^';
      if (node_of(ref) != from) continue;
      const std::size_t colon = ref.find(':');
      ref = (control ? "^" : "") + to + (colon == std::string::npos ? "" : ref.substr(colon));
    }
  }
}

// The signature's keys as node names, as graphdef/wire/signature_names.py
// makes them: an input's Placeholder renamed to its key, an Identity named by
// each output key; a key already naming another node stays that node's.
void name_by_keys(graphdef::GraphDef& graph, const graphdef::SignatureDef& signature) {
  std::set<std::string> names;
  for (const auto& node : graph.node()) names.insert(node.name());
  std::map<std::string, std::string> renamed;
  for (const auto& [key, info] :
       std::map<std::string, graphdef::TensorInfo>(signature.inputs().begin(), signature.inputs().end())) {
    const auto [node, index] = tensor_of(info.name());
    if ((node == key && index == 0) || !names.count(node) || index != 0 || names.count(key)) continue;
    rename_node(graph, node, key);
    names.erase(node);
    names.insert(key);
    renamed[node] = key;
  }
  for (const auto& [key, info] :
       std::map<std::string, graphdef::TensorInfo>(signature.outputs().begin(), signature.outputs().end())) {
    auto [node, index] = tensor_of(info.name());
    if (node == key && index == 0) continue;
    if (renamed.count(node)) node = renamed[node];
    if (!names.count(node) || names.count(key) || info.dtype() == graphdef::DT_INVALID) continue;
    graphdef::NodeDef* alias = graph.add_node();
    alias->set_name(key);
    alias->set_op("Identity");
    alias->add_input(index == 0 ? node : node + ":" + std::to_string(index));
    (*alias->mutable_attr())["T"].set_type(info.dtype());
    names.insert(key);
  }
}

}  // namespace

bool is_saved_model(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
         stat((path + "/saved_model.pb").c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

graphdef::SavedModel read_saved_model(const std::string& dir) {
  graphdef::SavedModel model;
  if (!model.ParseFromString(read_whole(dir + "/saved_model.pb", kMaxProtoBytes))) {
    throw ModelError(dir +
                     "/saved_model.pb: not a SavedModel (it does not parse as one); re-export it, or "
                     "point at a .pb GraphDef instead");
  }
  if (model.meta_graphs_size() == 0) throw ModelError(dir + "/saved_model.pb: a SavedModel without meta graphs");
  return model;
}

std::unique_ptr<graphdef::GraphDef> frozen_saved_model(const std::string& dir, const std::string& signature,
                                                       const std::vector<std::string>& tags) {
  const graphdef::SavedModel model = read_saved_model(dir);
  const graphdef::MetaGraphDef& meta = meta_graph_for(model, tags, dir);
  const std::string key = signature.empty() ? kDefaultSignature : signature;
  auto found = meta.signature_def().find(key);
  if (found == meta.signature_def().end()) {
    std::string names;
    for (const auto& entry :
         std::map<std::string, graphdef::SignatureDef>(meta.signature_def().begin(), meta.signature_def().end())) {
      if (entry.first.rfind("__", 0) != 0) names += (names.empty() ? "" : ", ") + entry.first;
    }
    throw ModelError(dir + ": no signature '" + key + "' (it has: " + (names.empty() ? "none" : names) +
                     "); choose one with --signature");
  }
  const auto saver = saver_nodes(meta.graph_def());

  // Keep what the outputs need, walking back from them; variables have no inputs.
  // Names must be unique before anything is looked up by name: freezing a
  // variable whose name a later node repeats would read a key the checkpoint lacks.
  std::unordered_map<std::string, const graphdef::NodeDef*> nodes;
  for (const auto& node : meta.graph_def().node()) {
    if (!nodes.emplace(node.name(), &node).second) {
      throw ModelError(dir + ": node name '" + node.name() + "' is not unique");
    }
  }
  std::unordered_set<std::string> needed;
  std::vector<std::string> stack, variables;
  for (const auto& output : found->second.outputs()) stack.push_back(node_of(output.second.name()));
  while (!stack.empty()) {
    const std::string name = stack.back();
    stack.pop_back();
    if (!nodes.count(name) || saver.count(name) || !needed.insert(name).second) continue;
    if (nodes[name]->op() == "VariableV2" || nodes[name]->op() == "VarHandleOp") variables.push_back(name);
    for (const auto& input : nodes[name]->input()) stack.push_back(node_of(input));
  }

  std::map<std::string, std::string> keys;
  std::unique_ptr<Bundle> bundle;
  const std::string prefix = dir + "/variables/variables";
  if (!variables.empty()) {
    struct stat info;
    if (stat((prefix + ".index").c_str(), &info) != 0) {
      throw ModelError(dir + ": the SavedModel's variables are missing (" + prefix +
                       ".index is not there); copy its variables/ directory next to saved_model.pb");
    }
    bundle = std::make_unique<Bundle>(prefix);
    if (meta.object_graph_def().nodes_size() > 0) {  // TF2: keys from the object graphs
      if (!bundle->has(kObjectGraphKey)) {
        throw ModelError(prefix + ": the checkpoint has no object graph (" + kObjectGraphKey +
                         "), so its variables cannot be matched to the SavedModel's");
      }
      const auto data = bundle->read_strings(kObjectGraphKey);
      graphdef::TrackableObjectGraph objects;
      if (data.empty() || !objects.ParseFromString(data[0])) {
        throw ModelError(prefix + ": the checkpoint's object graph does not parse");
      }
      keys = captured_variables(meta, objects);
    } else {
      keys = restored_variables(meta.graph_def());
    }
    for (const auto& name : variables) {
      if (!keys.count(name)) {
        throw ModelError(dir + ": variable node '" + name +
                         "' is not captured by any function of the SavedModel's object graph, so its value is unknown");
      }
      if (!bundle->has(keys[name])) throw ModelError(prefix + ": the checkpoint lacks '" + keys[name] + "'");
    }
  }

  auto out = std::make_unique<graphdef::GraphDef>();
  *out->mutable_versions() = meta.graph_def().versions();
  *out->mutable_library() = meta.graph_def().library();
  std::map<std::string, graphdef::DataType> resources;
  for (const auto& source : meta.graph_def().node()) {
    if (!needed.count(source.name())) continue;
    graphdef::NodeDef* node = out->add_node();
    if (source.op() != "VariableV2" && source.op() != "VarHandleOp") {
      *node = source;
      continue;
    }
    node->set_name(source.name());
    node->set_op("Const");
    graphdef::TensorProto& value = *(*node->mutable_attr())["value"].mutable_tensor();
    bundle->read(keys[source.name()], value);
    (*node->mutable_attr())["dtype"].set_type(value.dtype());
    if (source.op() == "VarHandleOp") resources[source.name()] = value.dtype();
  }
  freeze_resource_flow(*out, resources);
  name_by_keys(*out, found->second);
  return out;
}

}  // namespace graphrun
