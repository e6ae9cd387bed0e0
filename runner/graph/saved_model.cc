#include "graph/saved_model.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/dtype.h"
#include "core/errors.h"
#include "core/tensor.h"
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

// An entry's shape as the file holds it, "[3, -1]" or "<unknown>", as graphrun
// words it (graphdef/wire/tensor_bundle.py).
std::string shape_text(const graphdef::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "<unknown>";
  std::string text = "[";
  for (int i = 0; i < shape.dim_size(); ++i) text += (i ? ", " : "") + std::to_string(shape.dim(i).size());
  return text + "]";
}

// The product of non-negative dims times `itemsize` in decimal, however large:
// a lying entry is answered with the exact byte count it would need.
std::string bytes_needed(const graphdef::TensorShapeProto& shape, uint64_t itemsize) {
  std::vector<uint32_t> limbs = {1};  // base 10^9, least significant first
  auto multiply = [&](uint64_t factor) {
    unsigned __int128 carry = 0;
    for (uint32_t& limb : limbs) {
      const unsigned __int128 value = static_cast<unsigned __int128>(limb) * factor + carry;
      limb = static_cast<uint32_t>(value % 1000000000u);
      carry = value / 1000000000u;
    }
    for (; carry > 0; carry /= 1000000000u) limbs.push_back(static_cast<uint32_t>(carry % 1000000000u));
  };
  for (const auto& dim : shape.dim()) multiply(static_cast<uint64_t>(dim.size()));
  multiply(itemsize);
  while (limbs.size() > 1 && limbs.back() == 0) limbs.pop_back();
  std::string text = std::to_string(limbs.back());
  for (std::size_t i = limbs.size() - 1; i-- > 0;) {
    char part[16];
    std::snprintf(part, sizeof part, "%09u", limbs[i]);
    text += part;
  }
  return text;
}

// An open checkpoint: its entries checked as the index is read, in the order
// and words of graphrun's reader, and each tensor's bytes on demand.
class Bundle {
 public:
  Bundle(std::string model, std::string prefix) : model_(std::move(model)), prefix_(std::move(prefix)) {
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
      throw ModelError(index + ": a big-endian checkpoint, which graphdef does not read");
    }
    if (header.num_shards() < 1 || header.num_shards() > (1 << 16)) {
      throw ModelError(index + ": " + std::to_string(header.num_shards()) + " shards");
    }
    num_shards_ = header.num_shards();
    table.erase("");
    for (auto& [key, value] : table) {
      Entry& entry = entries_[key];
      if (!entry.proto.ParseFromString(value)) {
        throw ModelError(index + ": entry '" + key + "' is not a BundleEntryProto");
      }
      entry.unreadable = check_entry(entry.proto, index + ": entry '" + key + "'");
      if (entry.proto.shard_id() < 0 || entry.proto.shard_id() >= num_shards_) {
        throw ModelError(index + ": entry '" + key + "' is in shard " + std::to_string(entry.proto.shard_id()) +
                         " of " + std::to_string(num_shards_));
      }
    }
  }

  bool has(const std::string& key) const { return entries_.count(key) > 0; }

  // A string tensor's elements. TF writes one as each element's length
  // (varint), a masked crc32c of the lengths, then the bytes; the entry's
  // checksum covers the lengths (as little-endian uint32s, uint64s past 4 GiB),
  // that crc's four bytes, and the bytes.
  std::vector<std::string> read_strings(const std::string& key) const {
    const graphdef::BundleEntryProto& entry = entries_.at(key).proto;
    const std::string path = data_path(entry), where = path + ": tensor '" + key + "'";
    bool known = !entry.shape().unknown_rank();
    for (const auto& dim : entry.shape().dim()) known = known && dim.size() >= 0;
    if (entry.dtype() != graphdef::DT_STRING || entry.slices_size() > 0 || !known) {
      throw ModelError(where + ": not a string tensor of known shape");
    }
    // each element takes at least its one-byte length, so a count past the size is a lie
    uint64_t count = 1;
    bool over = false;
    for (const auto& dim : entry.shape().dim()) {
      over = over || __builtin_mul_overflow(count, static_cast<uint64_t>(dim.size()), &count);
    }
    if (over || entry.size() < 0 || count > static_cast<uint64_t>(entry.size())) {
      throw ModelError(where + ": " + bytes_needed(entry.shape(), 1) + " strings cannot fit in " +
                       std::to_string(entry.size()) + " bytes");
    }
    limit_checked({entry.size()}, graphdef::DT_UINT8, where);
    const std::string raw = read_bytes(entry, path, where);
    std::vector<uint64_t> lengths;
    std::size_t pos = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t value = 0;
      for (int shift = 0;; shift += 7) {
        if (shift >= 64) throw ModelError(where + ": malformed number");
        if (pos >= raw.size()) throw ModelError(where + ": truncated number");
        const unsigned char byte = static_cast<unsigned char>(raw[pos++]);
        value |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if (!(byte & 0x80)) break;
      }
      lengths.push_back(value);
    }
    uint64_t total = 0;
    for (uint64_t length : lengths) total += std::min<uint64_t>(length, raw.size());
    if (raw.size() < pos + 4 || total != raw.size() - pos - 4) {
      throw ModelError(where + ": the string lengths do not match the " + std::to_string(raw.size()) + " bytes");
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
    const Entry& found = entries_.at(key);
    const graphdef::BundleEntryProto& entry = found.proto;
    const std::string path = data_path(entry), where = path + ": tensor '" + key + "'";
    if (!found.unreadable.empty()) throw ModelError(where + ": " + found.unreadable);
    Shape shape;
    for (const auto& dim : entry.shape().dim()) shape.push_back(dim.size());
    limit_checked(shape, entry.dtype(), where);
    std::string bytes = read_bytes(entry, path, where);
    if (masked_crc32c(bytes.data(), bytes.size()) != entry.crc32c()) {
      throw ModelError(where + ": the bytes fail their checksum (the file is damaged)");
    }
    tensor.set_dtype(entry.dtype());
    *tensor.mutable_tensor_shape() = entry.shape();
    tensor.set_tensor_content(std::move(bytes));
  }

 private:
  struct Entry {
    graphdef::BundleEntryProto proto;
    std::string unreadable;  // why its tensor cannot be read, when it cannot; the rest of the bundle reads
  };

  // Throws for an entry that damages the index; returns why a well-formed
  // entry cannot be read ("" when it can).
  static std::string check_entry(const graphdef::BundleEntryProto& entry, const std::string& where) {
    bool known = !entry.shape().unknown_rank();
    for (const auto& dim : entry.shape().dim()) {
      if (dim.size() < -1) throw ModelError(where + ": negative dimension in shape " + shape_text(entry.shape()));
      known = known && dim.size() >= 0;
    }
    const DataType dtype = entry.dtype();
    // graphrun reads float16 too: its entries are checked alike, then refused when read
    const bool half = dtype == graphdef::DT_HALF;
    if (!half && !is_supported_dtype(dtype)) {
      return "dtype enum " + std::to_string(static_cast<int>(dtype)) + " (graphdef reads numeric and bool tensors)";
    }
    if (entry.slices_size() > 0) return "a sliced (partitioned) variable, which graphdef does not read";
    if (!known) throw ModelError(where + ": shape " + shape_text(entry.shape()) + " is not fully known");
    if (entry.offset() < 0) {
      throw ModelError(where + ": offset " + std::to_string(entry.offset()) + " is negative; the index is damaged");
    }
    const std::string needed = bytes_needed(entry.shape(), half ? 2 : dtype_size(dtype));
    if (std::to_string(entry.size()) != needed) {
      throw ModelError(where + ": " + std::to_string(entry.size()) + " bytes at offset " +
                       std::to_string(entry.offset()) + ", but " + (half ? "float16" : dtype_name(dtype)) + " " +
                       shape_text(entry.shape()) + " needs " + needed);
    }
    return half ? "dtype float16, which graphrun-cc cannot hold" : "";
  }

  // A tensor over the size limit is a run failure (exit 4), named after the
  // model as a Const over it is, then by its entry: graphrun's words.
  void limit_checked(const Shape& shape, DataType dtype, const std::string& where) const {
    try {
      checked_num_elements(shape, dtype, "value");
    } catch (const TensorLimitError& error) {
      throw RunError(model_ + ": " + where + ": " + error.what());
    }
  }

  std::string data_path(const graphdef::BundleEntryProto& entry) const {
    char shard[64];
    std::snprintf(shard, sizeof shard, ".data-%05d-of-%05d", entry.shard_id(), num_shards_);
    return prefix_ + shard;
  }

  // The entry's `size` bytes at its `offset`; the entry was checked when the index was read.
  static std::string read_bytes(const graphdef::BundleEntryProto& entry, const std::string& path,
                                const std::string& where) {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) throw ModelError(path + ": " + std::strerror(errno));
    // a FIFO here would block fopen for ever
    if (!S_ISREG(info.st_mode)) {
      throw ModelError(path + ": not a regular file; put the file saved with the model there");
    }
    const uint64_t offset = static_cast<uint64_t>(entry.offset()), size = static_cast<uint64_t>(entry.size());
    const uint64_t file_size = static_cast<uint64_t>(info.st_size);
    if (offset > file_size || size > file_size - offset) {
      // offset + size in decimal without overflow: both are below 2^63
      const unsigned __int128 end = static_cast<unsigned __int128>(offset) + size;
      throw ModelError(where + ": bytes " + std::to_string(offset) + ".." + decimal(end) +
                       " lie past the file's end (" + std::to_string(file_size) + " bytes)");
    }
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) throw ModelError(path + ": " + std::strerror(errno));
    std::string bytes(static_cast<std::size_t>(size), '\0');
    const bool ok = fseeko(file, static_cast<off_t>(offset), SEEK_SET) == 0 &&
                    (bytes.empty() || std::fread(bytes.data(), 1, bytes.size(), file) == bytes.size());
    std::fclose(file);
    if (!ok) throw ModelError(path + ": cannot read " + std::to_string(size) + " bytes at " + std::to_string(offset));
    return bytes;
  }

  static std::string decimal(unsigned __int128 value) {
    std::string text;
    do {
      text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
      value /= 10;
    } while (value > 0);
    return text;
  }

  std::string model_, prefix_;
  int num_shards_ = 1;
  std::map<std::string, Entry> entries_;
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
  // Then, upstream, what only the saver uses: a worklist over each node's count of users
  // outside the saver, linear where rescanning the set until nothing changed was quadratic.
  std::unordered_map<std::string, size_t> outside;
  for (const auto& [name, found] : users) {
    for (const auto& user : found) outside[name] += saver.count(user) ? 0 : 1;
  }
  stack.assign(saver.begin(), saver.end());
  while (!stack.empty()) {
    const graphdef::NodeDef* node = nodes[stack.back()];
    stack.pop_back();
    for (const auto& input : node->input()) {
      const std::string producer = node_of(input);
      if (!nodes.count(producer) || saver.count(producer) || outside[producer] != 0) continue;
      saver.insert(producer);
      stack.push_back(producer);
      for (const auto& own : nodes[producer]->input()) --outside[node_of(own)];
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
      throw ModelError(dir + ": node '" + node.name() + "': the name is not unique");
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
    bundle = std::make_unique<Bundle>(dir, prefix);
    if (meta.object_graph_def().nodes_size() > 0) {  // TF2: keys from the object graphs
      if (!bundle->has(kObjectGraphKey)) {
        throw ModelError(prefix + ": the checkpoint has no object graph (" + kObjectGraphKey +
                         "), so its variables cannot be matched to the SavedModel's; was it written by "
                         "tf.saved_model.save?");
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
    std::set<std::string> missing;  // every key the checkpoint lacks, named at once as graphrun names them
    for (const auto& name : variables) {
      if (!keys.count(name)) {
        throw ModelError(dir + ": variable node '" + name +
                         "' is not captured by any function of the SavedModel's object graph, so its value is unknown");
      }
      if (!bundle->has(keys[name])) missing.insert(keys[name]);
    }
    if (!missing.empty()) {
      std::string listed;
      int count = 0;
      for (auto it = missing.begin(); it != missing.end() && count < 10; ++it, ++count) {
        listed += (listed.empty() ? "" : ", ") + *it;
      }
      throw ModelError(prefix + ": the checkpoint lacks " + listed);
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
