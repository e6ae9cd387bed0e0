#include "graph/graph.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "core/errors.h"
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
  throw ModelError(path + ": the file is " + size + " bytes, over protobuf's 2 GB limit (" +
                   std::to_string(kMaxProtoBytes) +
                   " bytes) for one GraphDef; write the model with its weights in a file beside it (graphdef's "
                   "writers do so over 2 GB)");
}

// graphrun's words for a path that is not a readable file.
[[noreturn]] void unreadable(const std::string& path, int error) {
  if (error == ENOENT) throw ModelError(path + ": no such file");
  if (error == EISDIR) {
    throw ModelError(path + ": is a directory, not a model file (nor a SavedModel: it has no saved_model.pb)");
  }
  throw ModelError(path + ": cannot read: " + std::strerror(error));
}

std::string read_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) unreadable(path, errno);
  struct stat info;
  if (fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) > kMaxProtoBytes) {
    std::fclose(file);
    too_large(path, std::to_string(info.st_size));
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
  if (failed) unreadable(path, read_errno);
  if (bytes.size() > kMaxProtoBytes) too_large(path, "more than " + std::to_string(kMaxProtoBytes));
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

// How deep messages may nest, as in TensorFlow's readers: only an AttrValue
// holding a func (whose attrs hold AttrValues) nests without end, and every walk
// over one recurses, so a file nested thousands deep would overflow the stack.
constexpr int kMaxNesting = 100;

// Refuses a text GraphDef whose braces nest deeper than kMaxNesting, naming the
// node and attr (or the line) where it happens; graphdef/wire/nesting.py scans
// text the same way, so both runtimes word it alike. Strings and comments are
// skipped; the text is otherwise left to the parser.
void check_text_nesting(const std::string& path, const std::string& text) {
  std::vector<std::string> fields;  // the field each open brace belongs to
  std::string word, node_name, attr_key;
  bool have_node_name = false, have_attr_key = false;
  long line = 1;
  const std::size_t n = text.size();
  auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
  };
  for (std::size_t i = 0; i < n;) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const std::size_t start = ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] != '\n') ++i;
        ++i;
      }
      const std::string value = text.substr(start, i - start);
      if (i < n && text[i] == c) ++i;
      if (fields.size() == 1 && fields[0] == "node" && word == "name" && !have_node_name) {
        node_name = value;
        have_node_name = true;
      } else if (fields.size() == 2 && fields[0] == "node" && fields[1] == "attr" && word == "key" && !have_attr_key) {
        attr_key = value;
        have_attr_key = true;
      }
      word.clear();
    } else if (c == '{' || c == '<') {
      if (fields.size() == 0) have_node_name = false;
      if (fields.size() == 1) have_attr_key = false;
      fields.push_back(word);
      word.clear();
      ++i;
      if (fields.size() > static_cast<std::size_t>(kMaxNesting)) {
        std::string where = "line " + std::to_string(line);
        if (fields[0] == "node" && have_node_name) {
          where = "node '" + node_name + "'";
          if (fields[1] == "attr" && have_attr_key) where += " attr '" + attr_key + "'";
        }
        throw ModelError(path + ": nesting deeper than " + std::to_string(kMaxNesting) + " levels (at " + where + ")");
      }
    } else if (c == '}' || c == '>') {
      if (!fields.empty()) fields.pop_back();
      word.clear();
      ++i;
    } else if (is_word(c)) {
      const std::size_t start = i;
      while (i < n && is_word(text[i])) ++i;
      word = text.substr(start, i - start);
    } else {
      ++i;
    }
  }
}

// Strict UTF-8 as Python decodes it: no overlong forms, no surrogates, nothing
// past U+10FFFF.
bool is_utf8(const std::string& text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    int more = 0;
    unsigned char low = 0x80, high = 0xbf;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      more = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c == 0xe0) low = 0xa0;
      if (c == 0xed) high = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c == 0xf0) low = 0x90;
      if (c == 0xf4) high = 0x8f;
    } else {
      return false;
    }
    if (n - i <= static_cast<std::size_t>(more) || p[i + 1] < low || p[i + 1] > high) return false;
    for (int k = 2; k <= more; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xbf) return false;
    }
    i += more + 1;
  }
  return true;
}

// Whether any `string` field of `message` or of a message inside it is not
// UTF-8: cheaper than scanning the text again, which only a bad file needs.
bool holds_non_utf8(const google::protobuf::Message& message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  std::string scratch;
  for (const FieldDescriptor* field : fields) {
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      if (!field->is_repeated()) {
        if (!is_utf8(reflection.GetStringReference(message, field, &scratch))) return true;
        continue;
      }
      for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
        if (!is_utf8(reflection.GetRepeatedStringReference(message, field, i, &scratch))) return true;
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!field->is_repeated()) {
        if (holds_non_utf8(reflection.GetMessage(message, field))) return true;
        continue;
      }
      for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
        if (holds_non_utf8(reflection.GetRepeatedMessage(message, field, i))) return true;
      }
    }
  }
  return false;
}

class IgnoreErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override {}
};

// A `string` field must hold UTF-8: TensorFlow refuses any other name, op or
// input at import, and graphrun (Python protobuf) cannot hold it. C++ TextFormat
// keeps the bytes, so the parsed text is scanned again, naming the first value
// (adjacent literals make one) of a string field that is not UTF-8 where its
// first literal opens, as graphrun does (graphdef/wire/pbtxt.py). A literal's
// field is the identifier before the last ':'; in a GraphDef the bytes fields
// (AttrValue s, TensorProto's) share no name with a string field.
void check_text_strings(const std::string& path, const std::string& text, const graphdef::GraphDef& parsed) {
  if (!holds_non_utf8(parsed)) return;
  namespace io = google::protobuf::io;
  io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  IgnoreErrors ignore;
  io::Tokenizer tokenizer(&input, &ignore);
  tokenizer.set_comment_style(io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  static const char* const kBytesFields[] = {"s", "tensor_content", "string_val", "float8_val"};
  std::string identifier, field, value;
  bool in_value = false;
  int line = 0, column = 0;
  auto check_value = [&] {
    if (in_value && !is_utf8(value)) {
      throw ModelError(path + ": not a text-format GraphDef (line " + std::to_string(line + 1) + " column " +
                       std::to_string(column + 1) + ": a string is not valid UTF-8)");
    }
    in_value = false;
  };
  while (tokenizer.Next()) {
    const io::Tokenizer::Token& token = tokenizer.current();
    if (token.type == io::Tokenizer::TYPE_STRING) {
      if (!in_value) {
        bool bytes = false;
        for (const char* name : kBytesFields) bytes = bytes || field == name;
        if (bytes) continue;
        in_value = true;
        value.clear();
        line = token.line;
        column = token.column;
      }
      io::Tokenizer::ParseStringAppend(token.text, &value);
      continue;
    }
    check_value();
    if (token.type == io::Tokenizer::TYPE_IDENTIFIER) {
      identifier = token.text;
    } else if (token.text == ":") {
      field = identifier;
    } else {
      identifier.clear();
    }
  }
  check_value();
}

std::unique_ptr<graphdef::GraphDef> parse_graph_def(const std::string& path, const std::string& bytes) {
  auto proto = std::make_unique<graphdef::GraphDef>();
  if (ends_with(path, ".pbtxt")) {
    check_text_nesting(path, bytes);
    google::protobuf::TextFormat::Parser parser;
    parser.SetRecursionLimit(kMaxNesting);  // protobuf's own default is unbounded
    FirstErrorCollector errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(bytes, proto.get())) {
      throw ModelError(path + ": not a text-format GraphDef (" + errors.message() + ")");
    }
    check_text_strings(path, bytes, *proto);
  } else {
    google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                 static_cast<int>(bytes.size()));
    input.SetRecursionLimit(kMaxNesting);
    if (!proto->ParseFromCodedStream(&input) || !input.ConsumedEntireMessage()) {
      throw ModelError(path + ": not a GraphDef (the protobuf does not parse, or nests deeper than " +
                       std::to_string(kMaxNesting) + " levels)");
    }
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
