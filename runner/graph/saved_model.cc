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
#include "io/crc32c.h"
#include "io/sstable.h"
#include "meta_graph.pb.h"
#include "tensor_bundle.pb.h"

namespace graphrun {

namespace {

constexpr uint64_t kMaxProtoBytes = (uint64_t{1} << 31) - 1;

const std::set<std::string> kSaverOps = {"SaveV2",      "RestoreV2",       "SaveSlices", "RestoreSlice",
                                         "Restore",     "MergeV2Checkpoints", "ShardedFilename",
                                         "ShardedFilespec", "StringJoin"};

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
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) throw ModelError(path + ": no such file");
    std::string bytes(static_cast<std::size_t>(entry.size()), '\0');
    const bool ok = fseeko(file, entry.offset(), SEEK_SET) == 0 &&
                    (bytes.empty() || std::fread(bytes.data(), 1, bytes.size(), file) == bytes.size());
    std::fclose(file);
    if (!ok) throw ModelError(where + ": its bytes lie past the file's end");
    if (masked_crc32c(bytes.data(), bytes.size()) != entry.crc32c()) {
      throw ModelError(where + ": the bytes fail their checksum (the file is damaged)");
    }
    tensor.set_dtype(dtype);
    *tensor.mutable_tensor_shape() = entry.shape();
    tensor.set_tensor_content(std::move(bytes));
  }

 private:
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
    for (int hops = 0; hops < 64 && nodes.count(source) && nodes[source]->op() == "Identity" &&
                       nodes[source]->input_size() > 0;
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

}  // namespace

bool is_saved_model(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
         stat((path + "/saved_model.pb").c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::unique_ptr<graphdef::GraphDef> frozen_saved_model(const std::string& dir, const std::string& signature,
                                                       const std::vector<std::string>& tags) {
  graphdef::SavedModel model;
  if (!model.ParseFromString(read_whole(dir + "/saved_model.pb", kMaxProtoBytes))) {
    throw ModelError(dir + "/saved_model.pb: not a SavedModel (it does not parse as one)");
  }
  const graphdef::MetaGraphDef& meta = meta_graph_for(model, tags, dir);
  auto found = meta.signature_def().find(signature);
  if (found == meta.signature_def().end()) {
    std::string names;
    for (const auto& entry : std::map<std::string, graphdef::SignatureDef>(meta.signature_def().begin(),
                                                                           meta.signature_def().end())) {
      names += (names.empty() ? "" : ", ") + entry.first;
    }
    throw ModelError(dir + ": no signature '" + signature + "' (it has: " + (names.empty() ? "none" : names) + ")");
  }
  const auto keys = restored_variables(meta.graph_def());
  const auto saver = saver_nodes(meta.graph_def());
  std::unique_ptr<Bundle> bundle;
  if (!keys.empty()) bundle = std::make_unique<Bundle>(dir + "/variables/variables");

  // Keep what the outputs need, walking back from them.
  std::unordered_map<std::string, const graphdef::NodeDef*> nodes;
  for (const auto& node : meta.graph_def().node()) nodes[node.name()] = &node;
  std::unordered_set<std::string> needed;
  std::vector<std::string> stack;
  for (const auto& output : found->second.outputs()) stack.push_back(node_of(output.second.name()));
  while (!stack.empty()) {
    const std::string name = stack.back();
    stack.pop_back();
    if (!nodes.count(name) || saver.count(name) || !needed.insert(name).second) continue;
    if (keys.count(name)) continue;  // a variable becomes a Const: its inputs are not needed
    for (const auto& input : nodes[name]->input()) stack.push_back(node_of(input));
  }

  auto out = std::make_unique<graphdef::GraphDef>();
  *out->mutable_versions() = meta.graph_def().versions();
  *out->mutable_library() = meta.graph_def().library();
  for (const auto& source : meta.graph_def().node()) {
    if (!needed.count(source.name())) continue;
    graphdef::NodeDef* node = out->add_node();
    auto key = keys.find(source.name());
    if (key != keys.end()) {
      if (!bundle->has(key->second)) {
        throw ModelError(dir + "/variables/variables: the checkpoint lacks '" + key->second + "'");
      }
      node->set_name(source.name());
      node->set_op("Const");
      graphdef::TensorProto& value = *(*node->mutable_attr())["value"].mutable_tensor();
      bundle->read(key->second, value);
      (*node->mutable_attr())["dtype"].set_type(value.dtype());
      continue;
    }
    *node = source;
    if (node->op() == "ReadVariableOp" && node->input_size() > 0 && keys.count(node_of(node->input(0)))) {
      const auto dtype = node->attr().count("dtype") ? node->attr().at("dtype").type() : graphdef::DT_INVALID;
      node->set_op("Identity");
      node->mutable_attr()->clear();
      (*node->mutable_attr())["T"].set_type(dtype);
    }
  }
  return out;
}

}  // namespace graphrun
