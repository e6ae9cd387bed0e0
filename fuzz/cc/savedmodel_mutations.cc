// The SavedModel targets' structure-aware mutations (savedmodel_input.h).
// saved_model.pb is parsed and changed as a hostile export would be: tensor
// names of signatures naming missing nodes, control inputs or other outputs
// ('^NoOp', 'w/read', 'x:7'), signatures, tags and meta graphs dropped or
// duplicated, the graph and its functions mutated as fuzz-graph mutates
// graphs, object-graph references out of range. The index is parsed as a
// table, one entry's BundleEntryProto (or the header) changed, and the table
// written back valid, so the reader gets past its checksums to the entries;
// the shard's bytes change with or without the entries' checksums following.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "graph_mutations.h"
#include "io/crc32c.h"
#include "io/sstable.h"
#include "meta_graph.pb.h"
#include "savedmodel_input.h"
#include "sections.h"
#include "tensor_bundle.pb.h"

namespace graphrun_fuzz {

namespace {

const char* const kNames[] = {
    "^NoOp",  "w/read", "save/RestoreV2", "serving_default_x", "x:7",         "",       ":", "^", "y:-1",
    "nosuch", "x:0:0",  "x:99999999999",  "^save/Const",       "variables/x", "\x1b[2J"};

template <class T>
const T& pick(const std::vector<T>& items, Random& random) {
  return items[random.below(items.size())];
}

std::vector<std::string> node_names(const graphdef::GraphDef& graph) {
  std::vector<std::string> names;
  for (const auto& node : graph.node()) names.push_back(node.name());
  return names;
}

// A tensor name a hostile signature or input might hold.
std::string some_name(const graphdef::GraphDef& graph, Random& random) {
  const std::vector<std::string> names = node_names(graph);
  if (names.empty() || random.chance(40)) return kNames[random.below(sizeof kNames / sizeof kNames[0])];
  const std::string& name = pick(names, random);
  switch (random.below(5)) {
    case 0: return "^" + name;
    case 1: return name + ":" + std::to_string(interesting_int(random));
    case 2: return name + "/read";
    default: return name;
  }
}

void mutate_signature(graphdef::MetaGraphDef& meta, Random& random) {
  auto& signatures = *meta.mutable_signature_def();
  if (signatures.empty()) {
    (*signatures["serving_default"].mutable_outputs())["y"].set_name(some_name(meta.graph_def(), random));
    return;
  }
  std::vector<std::string> keys;
  for (const auto& entry : signatures) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  graphdef::SignatureDef& signature = signatures[pick(keys, random)];
  auto& infos = random.chance(50) ? *signature.mutable_inputs() : *signature.mutable_outputs();
  std::vector<std::string> names;
  for (const auto& entry : infos) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  switch (random.below(6)) {
    case 0:
    case 1:
      if (!names.empty()) infos[pick(names, random)].set_name(some_name(meta.graph_def(), random));
      break;
    case 2:
      if (!names.empty()) infos.erase(pick(names, random));
      break;
    case 3: {  // a key that names a node already, or a new one
      graphdef::TensorInfo& info = infos[random.chance(50) ? some_name(meta.graph_def(), random) : "k"];
      info.set_name(some_name(meta.graph_def(), random));
      info.set_dtype(static_cast<graphdef::DataType>(random.below(30)));
      break;
    }
    case 4:
      if (!names.empty()) infos[pick(names, random)].set_dtype(static_cast<graphdef::DataType>(random.below(120)));
      break;
    default: signatures.erase(pick(keys, random)); break;
  }
}

void mutate_functions(graphdef::GraphDef& graph, Random& random) {
  auto& functions = *graph.mutable_library()->mutable_function();
  if (functions.empty()) return;
  graphdef::FunctionDef& function = functions[static_cast<int>(random.below(functions.size()))];
  switch (random.below(4)) {
    case 0: function.mutable_signature()->set_name(some_name(graph, random)); break;
    case 1:
      if (function.node_def_size() > 0) {
        graphdef::NodeDef& node = *function.mutable_node_def(static_cast<int>(random.below(function.node_def_size())));
        if (node.input_size() > 0) node.set_input(static_cast<int>(random.below(node.input_size())), "nosuch:out:0");
        else node.set_op(some_name(graph, random));
      }
      break;
    case 2: functions.erase(functions.begin() + static_cast<int>(random.below(functions.size()))); break;
    default: {  // the function's body mutated as a graph
      graphdef::GraphDef body;
      *body.mutable_node() = function.node_def();
      mutate_graph(body, random);
      *function.mutable_node_def() = body.node();
    }
  }
}

void mutate_object_graph(graphdef::MetaGraphDef& meta, Random& random) {
  auto& objects = *meta.mutable_object_graph_def();
  if (objects.nodes_size() == 0) return;
  graphdef::SavedObject& object = *objects.mutable_nodes(static_cast<int>(random.below(objects.nodes_size())));
  switch (random.below(4)) {
    case 0:
      if (object.children_size() > 0) {
        auto& child = *object.mutable_children(static_cast<int>(random.below(object.children_size())));
        if (random.chance(50)) child.set_node_id(static_cast<int32_t>(interesting_int(random)));
        else child.set_local_name(random.chance(50) ? "" : "variables");
      }
      break;
    case 1: {
      auto& functions = *objects.mutable_concrete_functions();
      if (functions.empty()) break;
      std::vector<std::string> names;
      for (const auto& entry : functions) names.push_back(entry.first);
      std::sort(names.begin(), names.end());
      auto& bound = *functions[pick(names, random)].mutable_bound_inputs();
      if (bound.empty() || random.chance(30)) bound.Add(static_cast<int32_t>(interesting_int(random)));
      else bound.Set(static_cast<int>(random.below(bound.size())), static_cast<int32_t>(interesting_int(random)));
      break;
    }
    case 2: objects.mutable_nodes()->SwapElements(0, static_cast<int>(random.below(objects.nodes_size()))); break;
    default: object.mutable_children()->Add()->set_node_id(static_cast<int32_t>(random.below(objects.nodes_size())));
  }
}

void mutate_proto(std::string& bytes, Random& random) {
  graphdef::SavedModel model;
  if (!model.ParseFromString(bytes) || model.meta_graphs_size() == 0) {
    mutate_bytes(bytes);
    return;
  }
  graphdef::MetaGraphDef& meta = *model.mutable_meta_graphs(static_cast<int>(random.below(model.meta_graphs_size())));
  switch (random.below(10)) {
    case 0:
    case 1:
    case 2: mutate_signature(meta, random); break;
    case 3:
    case 4: mutate_graph(*meta.mutable_graph_def(), random); break;
    case 5: {  // a node's input renamed as the signature names are
      graphdef::GraphDef& graph = *meta.mutable_graph_def();
      if (graph.node_size() == 0) break;
      graphdef::NodeDef& node = *graph.mutable_node(static_cast<int>(random.below(graph.node_size())));
      const std::string name = some_name(graph, random);
      if (node.input_size() > 0 && random.chance(60))
        node.set_input(static_cast<int>(random.below(node.input_size())), name);
      else node.add_input(name);
      break;
    }
    case 6: mutate_functions(*meta.mutable_graph_def(), random); break;
    case 7: mutate_object_graph(meta, random); break;
    case 8: {  // tags
      auto& tags = *meta.mutable_meta_info_def()->mutable_tags();
      if (!tags.empty() && random.chance(50)) tags.RemoveLast();
      else *tags.Add() = random.chance(50) ? "serve" : "train";
      break;
    }
    default:  // a meta graph duplicated or removed
      if (random.chance(50)) *model.add_meta_graphs() = meta;
      else model.mutable_meta_graphs()->DeleteSubrange(static_cast<int>(random.below(model.meta_graphs_size())), 1);
  }
  serialize_deterministic(model, bytes);
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_u32(std::string& out, uint32_t value) { out.append(reinterpret_cast<const char*>(&value), 4); }

// A block of `items` (no key sharing, one restart point) with its trailer.
void write_block(std::string& out, const std::map<std::string, std::string>& items, uint64_t& offset, uint64_t& size) {
  std::string block;
  for (const auto& [key, value] : items) {
    put_varint(block, 0);
    put_varint(block, key.size());
    put_varint(block, value.size());
    block += key + value;
  }
  put_u32(block, 0);
  put_u32(block, 1);
  offset = out.size();
  size = block.size();
  block.push_back('\0');  // uncompressed
  const uint32_t crc = graphrun::masked_crc32c(block.data(), block.size());
  out += block;
  put_u32(out, crc);
}

// The table of `items` in leveldb's format, as the checkpoint reader reads it.
std::string write_table(const std::map<std::string, std::string>& items) {
  std::string out;
  uint64_t data_offset = 0, data_size = 0, index_offset = 0, index_size = 0;
  write_block(out, items, data_offset, data_size);
  std::string handle;
  put_varint(handle, data_offset);
  put_varint(handle, data_size);
  write_block(out, {{items.empty() ? std::string() : items.rbegin()->first, handle}}, index_offset, index_size);
  std::string footer;
  put_varint(footer, 0);
  put_varint(footer, 0);
  put_varint(footer, index_offset);
  put_varint(footer, index_size);
  footer.resize(40, '\0');
  const uint64_t magic = 0xdb4775248b80fb57ull;
  footer.append(reinterpret_cast<const char*>(&magic), 8);
  return out + footer;
}

// The entry's checksum made right again for `shard`, when its bytes lie there.
void fix_checksum(graphdef::BundleEntryProto& entry, const std::string& shard) {
  if (entry.offset() < 0 || entry.size() < 0 || static_cast<uint64_t>(entry.offset()) > shard.size() ||
      static_cast<uint64_t>(entry.size()) > shard.size() - static_cast<uint64_t>(entry.offset())) {
    return;
  }
  entry.set_crc32c(graphrun::masked_crc32c(shard.data() + entry.offset(), static_cast<size_t>(entry.size())));
}

void mutate_entry(graphdef::BundleEntryProto& entry, const std::string& shard, Random& random) {
  switch (random.below(9)) {
    case 0: entry.set_dtype(static_cast<graphdef::DataType>(random.below(random.chance(70) ? 24 : 130))); break;
    case 1:
      if (entry.shape().dim_size() > 0 && random.chance(70)) {
        entry.mutable_shape()
            ->mutable_dim(static_cast<int>(random.below(entry.shape().dim_size())))
            ->set_size(interesting_int(random));
      } else {
        entry.mutable_shape()->add_dim()->set_size(interesting_int(random));
      }
      break;
    case 2: entry.set_shard_id(static_cast<int32_t>(interesting_int(random))); break;
    case 3:
      entry.set_offset(random.chance(50) ? wrapping_add(entry.offset(), interesting_int(random))
                                         : interesting_int(random));
      break;
    case 4:
      entry.set_size(random.chance(50) ? wrapping_add(entry.size(), interesting_int(random)) : interesting_int(random));
      break;
    case 5: entry.set_crc32c(entry.crc32c() ^ (1u << random.below(32))); break;
    case 6: entry.add_slices()->add_extent()->set_start(interesting_int(random)); break;
    case 7: entry.mutable_shape()->set_unknown_rank(true); break;
    default: entry.mutable_shape()->clear_dim(); break;
  }
  if (random.chance(60)) fix_checksum(entry, shard);
}

void mutate_index(std::string& index, const std::string& shard, Random& random) {
  std::map<std::string, std::string> items;
  try {
    items = graphrun::parse_sstable(index, "index");
  } catch (const graphrun::Error&) {
    mutate_bytes(index);
    return;
  }
  std::vector<std::string> keys;
  for (const auto& entry : items) keys.push_back(entry.first);
  if (keys.empty() || random.chance(10)) {
    mutate_bytes(index);
    return;
  }
  const std::string key = pick(keys, random);
  const int choice = static_cast<int>(random.below(10));
  if (key.empty() || choice == 0) {  // the header
    graphdef::BundleHeaderProto header;
    header.ParseFromString(items[""]);
    switch (random.below(3)) {
      case 0: header.set_num_shards(static_cast<int32_t>(interesting_int(random))); break;
      case 1: header.set_endianness(graphdef::BundleHeaderProto::BIG); break;
      default: header.mutable_version()->set_producer(static_cast<int32_t>(interesting_int(random)));
    }
    serialize_deterministic(header, items[""]);
  } else if (choice == 1) {  // the key renamed, dropped, or a second copy under another
    std::string value = items[key];
    if (random.chance(50)) items.erase(key);
    items[random.chance(50) ? key + "/x" : std::string(kNames[random.below(sizeof kNames / sizeof kNames[0])])] = value;
  } else if (choice == 2) {
    mutate_bytes(items[key], 16);
  } else {
    graphdef::BundleEntryProto entry;
    entry.ParseFromString(items[key]);
    mutate_entry(entry, shard, random);
    serialize_deterministic(entry, items[key]);
  }
  index = write_table(items);
}

// The shard's bytes changed; then, often, every entry's checksum follows.
void mutate_shard(std::string& shard, std::string& index, Random& random) {
  if (random.chance(30)) shard.resize(random.below(shard.size() + 1));
  else mutate_bytes(shard, 256);
  if (!random.chance(60)) return;
  try {
    std::map<std::string, std::string> items = graphrun::parse_sstable(index, "index");
    for (auto& [key, value] : items) {
      graphdef::BundleEntryProto entry;
      if (key.empty() || !entry.ParseFromString(value)) continue;
      fix_checksum(entry, shard);
      serialize_deterministic(entry, value);
    }
    index = write_table(items);
  } catch (const graphrun::Error&) {
  }
}

}  // namespace

size_t mutate_saved_model_input(uint8_t* data, size_t size, size_t max_size, unsigned seed, PartWeights weights) {
  Random random(seed);
  std::vector<std::string> parts = split_sections(data, size, kSavedModelParts);
  const int roll = static_cast<int>(random.below(100));
  if (roll < weights.proto) {
    mutate_proto(parts[kSavedModelProto], random);
  } else if (roll < weights.proto + weights.index) {
    mutate_index(parts[kVariablesIndex], parts[kVariablesShard], random);
  } else if (roll < weights.proto + weights.index + weights.shard) {
    mutate_shard(parts[kVariablesShard], parts[kVariablesIndex], random);
  } else {
    // Byte mutation of one part (the proto only when the target mutates it).
    const int first = weights.proto > 0 ? 0 : 1;
    mutate_bytes(parts[first + random.below(kSavedModelParts - first)]);
  }
  const std::string out = join_sections(parts);
  if (out.size() > max_size) return size;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace graphrun_fuzz
