// Structured mutations shared by the mutators: a GraphDef changed the way a
// hostile or broken file would be, values a parser should meet, and the
// deterministic serialization that keeps a seed's run replayable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/message_lite.h>

#include "graph.pb.h"
#include "random.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace graphrun_fuzz {

// Small counts, zero, -1, powers of two near 2^31, 2^32 and 2^62, INT64_MIN/MAX.
int64_t interesting_int(Random& random);
// Zero, signed zero, denormals, near-FLT_MAX, 1e300, NaN and both infinities.
double interesting_float(Random& random);

// a + b wrapping around as the hardware adds (signed overflow is undefined behaviour).
inline int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// One mutation of `graph`: an attr of the wrong kind or value, a Const's
// values, dims or content, an input dangling, cyclic or removed, a duplicate
// name, another op type, a node removed, duplicated, swapped or added.
void mutate_graph(graphdef::GraphDef& graph, Random& random);

// `message` serialized with map entries in key order (not the map's order).
bool serialize_deterministic(const google::protobuf::MessageLite& message, std::string& bytes);

// libFuzzer's byte mutation of `bytes`, growing it by at most `extra` bytes.
void mutate_bytes(std::string& bytes, size_t extra = 64);

}  // namespace graphrun_fuzz
