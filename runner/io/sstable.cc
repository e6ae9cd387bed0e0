#include "io/sstable.h"

#include <cstdint>
#include <cstring>

#include "core/errors.h"
#include "io/crc32c.h"

namespace graphrun {

namespace {

constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
constexpr std::size_t kFooterSize = 48;
constexpr std::size_t kTrailerSize = 5;  // compression type byte + masked CRC

uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian hosts only, as the rest of the runner
  return v;
}

uint64_t read_varint(const std::string& data, std::size_t& pos, std::size_t end, const std::string& where,
                     int max_bits = 64) {
  uint64_t value = 0;
  for (int shift = 0; shift < max_bits; shift += 7) {
    if (pos >= end) throw Error(where + ": truncated number");
    const auto byte = static_cast<unsigned char>(data[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return value;
  }
  throw Error(where + ": malformed number");
}

struct Handle {
  uint64_t offset, size;
};

Handle read_handle(const std::string& data, std::size_t& pos, std::size_t end, const std::string& where) {
  Handle handle;
  handle.offset = read_varint(data, pos, end, where);
  handle.size = read_varint(data, pos, end, where);
  return handle;
}

// The block's contents as [begin, end) in `data`, after its checksum and type are checked.
std::pair<std::size_t, std::size_t> block(const std::string& data, Handle handle, const std::string& where) {
  const uint64_t limit = data.size() - kFooterSize;
  if (handle.offset > limit || handle.size > limit - handle.offset ||
      limit - handle.offset - handle.size < kTrailerSize) {
    throw Error(where + ": block at " + std::to_string(handle.offset) + " of " + std::to_string(handle.size) +
                " bytes runs past the end of the file");
  }
  const std::size_t begin = handle.offset, end = handle.offset + handle.size;
  if (masked_crc32c(data.data() + begin, handle.size + 1) != load32(data.data() + end + 1)) {
    throw Error(where + ": block at " + std::to_string(begin) + " fails its checksum");
  }
  if (data[end] != 0) {
    throw Error(where + ": block at " + std::to_string(begin) + " is compressed (type " +
                std::to_string(static_cast<unsigned char>(data[end])) +
                "); only uncompressed tables are read (TensorFlow writes its checkpoints uncompressed)");
  }
  return {begin, end};
}

// Calls visit(key, value) for each entry of the block [begin, end).
template <class Visit>
void entries(const std::string& data, std::pair<std::size_t, std::size_t> range, const std::string& where,
             Visit&& visit) {
  const auto [begin, end] = range;
  if (end - begin < 4) throw Error(where + ": block too short");
  const uint32_t restarts = load32(data.data() + end - 4);
  if (restarts == 0 && end - begin == 4) return;  // an empty block
  if (restarts < 1 || restarts > (end - begin - 4) / 4) {
    throw Error(where + ": bad restart count " + std::to_string(restarts));
  }
  const std::size_t limit = end - 4 - 4 * static_cast<std::size_t>(restarts);
  std::size_t pos = begin;
  std::string key;
  while (pos < limit) {
    const uint64_t shared = read_varint(data, pos, limit, where, 35);
    const uint64_t unshared = read_varint(data, pos, limit, where, 35);
    const uint64_t length = read_varint(data, pos, limit, where, 35);
    if (shared > key.size() || unshared > limit - pos || length > limit - pos - unshared) {
      throw Error(where + ": entry at " + std::to_string(pos - begin) + " runs past its block");
    }
    key.resize(shared);
    key.append(data, pos, unshared);
    pos += unshared;
    visit(key, data.substr(pos, length));
    pos += length;
  }
}

}  // namespace

std::map<std::string, std::string> parse_sstable(const std::string& bytes, const std::string& name) {
  if (bytes.size() < kFooterSize) {
    throw Error(name + ": " + std::to_string(bytes.size()) + " bytes is too short for a table footer");
  }
  const std::size_t footer = bytes.size() - kFooterSize;
  uint64_t magic;
  std::memcpy(&magic, bytes.data() + footer + 40, 8);
  if (magic != kMagic) throw Error(name + ": not a sorted string table (bad magic number)");
  std::size_t pos = footer;
  read_handle(bytes, pos, footer + 40, name + " footer");  // the metaindex: empty in TF's files
  const Handle index = read_handle(bytes, pos, footer + 40, name + " footer");
  std::map<std::string, std::string> items;
  entries(bytes, block(bytes, index, name + " index"), name + " index",
          [&](const std::string& last_key, const std::string& value) {
            std::size_t at = 0;
            const Handle handle = read_handle(value, at, value.size(), name + " index");
            entries(bytes, block(bytes, handle, name + " data"), name + " data",
                    [&](const std::string& key, const std::string& item) {
                      if (key > last_key) throw Error(name + ": key '" + key + "' is out of order");
                      items[key] = item;
                    });
          });
  return items;
}

}  // namespace graphrun
