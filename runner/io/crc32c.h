// CRC-32C (Castagnoli), the checksum of TensorFlow's checkpoint files and of the
// leveldb tables their index is written in, and leveldb's "masked" form of it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphrun {

uint32_t crc32c(const void* data, std::size_t size);

// Rotated and offset so that the CRC of bytes holding CRCs stays informative.
inline uint32_t masked_crc32c(const void* data, std::size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace graphrun
