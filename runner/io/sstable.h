// Reading the sorted string table (leveldb's table format) that a TensorFlow
// checkpoint's .index file is: data blocks of prefix-compressed keys, an index
// block, a footer with the magic number. graphdef/wire/sstable.py describes the
// layout and writes it; this reads it with the same checks: every handle,
// length and checksum is validated before use, so a damaged index is one
// Error naming the file, never a crash.
#pragma once

#include <map>
#include <string>

namespace graphrun {

// Every key and value of the table held in `bytes`; `name` prefixes errors.
std::map<std::string, std::string> parse_sstable(const std::string& bytes, const std::string& name);

}  // namespace graphrun
