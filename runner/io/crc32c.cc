#include "io/crc32c.h"

#include <array>

namespace graphrun {

namespace {

// One table of the reflected polynomial 0x82F63B78, built once. Checkpoint indexes are
// small and tensors are checked once at load, so the byte-at-a-time loop is fast enough
// (no Debian package ships a CRC-32C library for C++).
std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    table[i] = crc;
  }
  return table;
}

}  // namespace

uint32_t crc32c(const void* data, std::size_t size) {
  static const std::array<uint32_t, 256> table = make_table();
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace graphrun
