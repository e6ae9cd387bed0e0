#include "graph/graph.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#include "core/errors.h"
#include "core/tensor_limit.h"
#include "graph/functions.h"
#include "graph/saved_model.h"

namespace graphrun {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Protobuf cannot parse a message of 2 GiB or more; a larger file is
// refused by its size, before it is read into memory.
constexpr uint64_t kMaxProtoBytes = (uint64_t{1} << 31) - 1;

[[noreturn]] void too_large(const std::string& path, const std::string& size) {
  throw ModelError(path + ": the file is " + size + ", over protobuf's 2 GiB limit for a GraphDef");
}

std::string read_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw ModelError("cannot read " + path + ": " + std::strerror(errno));
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) > kMaxProtoBytes) {
    std::fclose(file);
    too_large(path, format_bytes(static_cast<uint64_t>(info.st_size)));
  }
  std::string bytes;
  char chunk[1 << 16];
  std::size_t got;
  // A pipe or device has no size up front: stop reading past the limit.
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0 && bytes.size() <= kMaxProtoBytes) {
    bytes.append(chunk, got);
  }
  const bool failed = std::ferror(file);
  const int read_errno = errno;  // e.g. EISDIR for a directory
  std::fclose(file);
  if (failed) throw ModelError("cannot read " + path + ": " + std::strerror(read_errno));
  if (bytes.size() > kMaxProtoBytes) too_large(path, "more than 2 GiB");
  return bytes;
}

// Keeps the first text-format syntax error, so it can be reported on the one
// line graphrun-cc allows itself on stderr (protobuf would log it instead).
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (message_.empty()) {
      message_ = "line " + std::to_string(line + 1) + " column " + std::to_string(column + 1) + ": " + message;
    }
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

std::unique_ptr<graphdef::GraphDef> parse_graph_def(const std::string& path, const std::string& bytes) {
  auto proto = std::make_unique<graphdef::GraphDef>();
  if (ends_with(path, ".pbtxt")) {
    google::protobuf::TextFormat::Parser parser;
    FirstErrorCollector errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(bytes, proto.get())) {
      throw ModelError(path + ": not a text-format GraphDef (" + errors.message() + ")");
    }
  } else if (!proto->ParseFromString(bytes)) {
    throw ModelError(path + ": not a GraphDef (the protobuf does not parse)");
  }
  if (proto->node_size() == 0) throw ModelError(path + ": not a GraphDef (no nodes)");
  return proto;
}

}  // namespace

// --signature picks one of a SavedModel's signatures; any other file has none.
static void check_no_signature(const std::string& path, const std::string& signature) {
  if (!signature.empty()) throw ModelError(path + ": only a SavedModel directory has signatures; drop --signature");
}

std::unique_ptr<const Graph> Graph::load(const std::string& path, const std::string& signature) {
  try {
    if (is_saved_model(path)) return std::make_unique<const Graph>(path, frozen_saved_model(path, signature));
    check_no_signature(path, signature);
    return parse(path, read_file(path));
  } catch (const std::bad_alloc&) {
    throw ModelError(path + ": out of memory while loading the model");
  }
}

std::unique_ptr<const Graph> Graph::parse(const std::string& path, const std::string& bytes) {
  try {
    auto proto = parse_graph_def(path, bytes);
    return std::make_unique<const Graph>(path, std::move(proto));
  } catch (const std::bad_alloc&) {
    throw ModelError(path + ": out of memory while loading the model");
  }
}

std::unique_ptr<graphdef::GraphDef> Graph::read(const std::string& path, const std::string& signature) {
  try {
    if (is_saved_model(path)) return frozen_saved_model(path, signature);
    check_no_signature(path, signature);
    return parse_graph_def(path, read_file(path));
  } catch (const std::bad_alloc&) {
    throw ModelError(path + ": out of memory while loading the model");
  }
}

Graph::Graph(std::string source, std::unique_ptr<graphdef::GraphDef> proto, bool internal_ops)
    : source_(std::move(source)), proto_(std::move(proto)), internal_ops_(internal_ops) {
  validate();
  own_library_ = std::make_unique<FunctionLibrary>(source_, proto_->library());
  library_ = own_library_.get();
  own_library_->instantiate_called(*this);
}

Graph::Graph(std::string source, std::unique_ptr<graphdef::GraphDef> proto, const FunctionLibrary* library)
    : source_(std::move(source)), proto_(std::move(proto)), library_(library) {
  validate();
}

Graph::~Graph() = default;

int Graph::find(const std::string& name) const {
  auto found = index_.find(name);
  return found == index_.end() ? -1 : found->second;
}

void Graph::fail(const std::string& reason) const { throw ModelError(source_ + ": " + reason); }

}  // namespace graphrun
