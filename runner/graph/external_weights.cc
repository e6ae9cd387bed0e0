#include "graph/external_weights.h"

#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "graph/tensor_proto.h"
#include "io/crc32c.h"
#include "io/mapped_file.h"

namespace graphrun {

namespace {

constexpr char kMagic[8] = {'G', 'D', 'W', 'E', 'I', 'G', 'H', 'T'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kAlignment = 64;
constexpr uint64_t kHeaderSize = 64;
const char kHowToInline[] = "graphrun convert --inline-weights writes the model with its weights inside";

struct Reference {
  std::string file;
  std::string tag;  // 32 hex digits
  uint64_t offset;
  uint64_t length;
  uint32_t crc;
};

uint32_t read_u32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t read_u64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::string hex(const unsigned char* bytes, int count) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (int i = 0; i < count; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

Reference parse_reference(const graphdef::AttrValue& value) {
  const std::string form = std::string("attr ") + kExternalValueAttr +
                           " must be a list of 2 strings (file, tag) and 3 ints (offset, length, crc32c)";
  if (value.value_case() != graphdef::AttrValue::kList || value.list().s_size() != 2 || value.list().i_size() != 3) {
    throw Error(form);
  }
  Reference ref{value.list().s(0), value.list().s(1), 0, 0, 0};
  if (ref.tag.size() != 32 || ref.tag.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw Error(std::string("attr ") + kExternalValueAttr + ": the tag must be 32 hex digits");
  }
  const int64_t offset = value.list().i(0), length = value.list().i(1), crc = value.list().i(2);
  if (offset < static_cast<int64_t>(kHeaderSize) || offset % kAlignment != 0 || length < 0 || crc < 0 ||
      crc > 0xffffffffLL) {
    throw Error(std::string("attr ") + kExternalValueAttr + ": offset " + std::to_string(offset) + " / length " +
                std::to_string(length) + " / crc " + std::to_string(crc) +
                " is not valid (offsets are multiples of 64 past the header)");
  }
  ref.offset = static_cast<uint64_t>(offset);
  ref.length = static_cast<uint64_t>(length);
  ref.crc = static_cast<uint32_t>(crc);
  const std::string& f = ref.file;
  if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\\') != std::string::npos ||
      f.find('\0') != std::string::npos) {
    // An exception's message is a C string, so a NUL would end it: spell it as the CLI spells controls.
    std::string shown;
    for (char c : f) shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
    throw Error("the weights file '" + shown + "' must be a plain file name in the model's directory");
  }
  return ref;
}

bool verify_requested() {
  const char* value = std::getenv("GRAPHDEF_VERIFY_WEIGHTS");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

}  // namespace

bool has_external_value(const graphdef::NodeDef& node) { return node.attr().count(kExternalValueAttr) > 0; }

std::string model_directory(const std::string& source) {
  struct stat info;
  if (stat(source.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return source;
  const std::size_t slash = source.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : source.substr(0, slash);
}

TensorPtr load_external_value(const graphdef::NodeDef& node, const std::string& model_dir) {
  if (node.op() != "Const") throw Error(std::string("only a Const may have attr ") + kExternalValueAttr);
  const Reference ref = parse_reference(node.attr().at(kExternalValueAttr));
  auto value = node.attr().find("value");
  if (value == node.attr().end() || value->second.value_case() != graphdef::AttrValue::kTensor) {
    throw Error("an external value needs attr 'value' holding its dtype and shape");
  }
  const graphdef::TensorProto& proto = value->second.tensor();
  const DataType dtype = proto.dtype();
  if (!is_supported_dtype(dtype) || dtype == graphdef::DT_VARIANT) {
    throw Error("an external value of dtype " + dtype_name(dtype) + " is not supported");
  }
  Shape shape = shape_from_proto(proto.tensor_shape());
  uint64_t count = 1, bytes = 0;
  bool overflow = false;
  for (int64_t dim : shape) overflow = overflow || __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count);
  overflow = overflow || __builtin_mul_overflow(count, static_cast<uint64_t>(dtype_size(dtype)), &bytes) ||
             count > static_cast<uint64_t>(INT64_MAX);
  if (overflow || bytes != ref.length) {
    throw Error("its external value has " + std::to_string(ref.length) + " bytes, shape " + shape_string(shape) +
                " of " + dtype_name(dtype) + " needs " + (overflow ? "more than 16.0 EiB" : std::to_string(bytes)));
  }
  const std::string path = model_dir + "/" + ref.file;
  std::shared_ptr<const MappedFile> file;
  try {
    file = MappedFile::open(path);
  } catch (const Error& error) {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) {
      throw Error("its value is stored in " + path + ", which does not exist; copy it beside the model, or " +
                  kHowToInline);
    }
    throw;
  }
  if (file->size() < kHeaderSize) {
    throw Error("weights file " + path + " has " + std::to_string(file->size()) + " bytes, shorter than its " +
                "64-byte header");
  }
  const unsigned char* header = file->data();
  if (std::memcmp(header, kMagic, 8) != 0 || read_u32(header + 8) != kVersion || read_u32(header + 12) != kAlignment) {
    throw Error(path + " is not a graphdef weights file (version 1)");
  }
  if (read_u64(header + 16) != file->size()) {
    throw Error("weights file " + path + " has " + std::to_string(file->size()) + " bytes but was written with " +
                std::to_string(read_u64(header + 16)) + " (truncated or appended to)");
  }
  if (hex(header + 24, 16) != ref.tag) {
    throw Error("weights file " + path +
                " belongs to another write of the model (tags differ); write the model and its weights file "
                "again together");
  }
  if (ref.offset > file->size() || ref.length > file->size() - ref.offset) {
    throw Error("its value at bytes " + std::to_string(ref.offset) + ".." + std::to_string(ref.offset + ref.length) +
                " lies past the end of " + path + " (" + std::to_string(file->size()) + " bytes)");
  }
  const unsigned char* data = file->data() + ref.offset;
  if (verify_requested() && crc32c(data, ref.length) != ref.crc) {
    throw Error("its value in " + path + " fails its crc32c check (corrupt)");
  }
  if (dtype == graphdef::DT_BOOL) {
    // A bool must be 0 or 1 in memory; bytes from a file are only made so by
    // a copy (bool tensors are small: masks, flags).
    auto tensor = std::make_shared<Tensor>(dtype, std::move(shape));
    auto* out = static_cast<unsigned char*>(tensor->raw_data());
    for (uint64_t i = 0; i < ref.length; ++i) out[i] = data[i] != 0;
    return tensor;
  }
  return std::make_shared<const Tensor>(
      Tensor::borrowed(dtype, std::move(shape), static_cast<int64_t>(count), data, std::move(file)));
}

}  // namespace graphrun
