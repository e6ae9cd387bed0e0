// fuzz-pbtxt: text-format GraphDefs, read as graphrun-cc reads a .pbtxt
// (the nesting check, then protobuf's text parser with its recursion limit)
// and run as fuzz-graph runs a graph. The mutator works on the text: the
// graph parsed and mutated as fuzz-graph mutates graphs, then printed; or
// text a hostile file holds (deep nesting, a field repeated thousands of
// times, numbers past every range, escapes and control bytes in strings);
// or libFuzzer's byte mutation.
#include <google/protobuf/text_format.h>

#include <cstring>
#include <string>

#include "graph_mutations.h"
#include "run_graph.h"

using namespace graphrun;
using namespace graphrun_fuzz;

namespace {

const char* const kNumbers[] = {"1e999",
                                "-1e999",
                                "nan",
                                "-inf",
                                "18446744073709551616",
                                "-9223372036854775809",
                                "0x7fffffffffffffff",
                                "0777777777777777777777",
                                "1e-400",
                                "99999999999999999999999"};
const char* const kStrings[] = {"\"\\x1b[2J\\x1b]0;t\\x07\"",
                                "\"\\377\\376\"",
                                "\"\\u00e9\"",
                                "\"\\\"",
                                "\"a\\0b\"",
                                "'x'",
                                "\""
                                "\\n\\r\\t"
                                "\"",
                                "\"\\x\""};

// An offset in `text` just after one of `marks`, or the end.
size_t some_place(const std::string& text, Random& random) {
  if (text.empty()) return 0;
  const size_t at = random.below(text.size());
  const size_t found = text.find_first_of(":{\n ", at);
  return found == std::string::npos ? text.size() : found + 1;
}

void hostile_text(std::string& text, size_t max_size, Random& random) {
  const size_t at = some_place(text, random);
  switch (random.below(5)) {
    case 0: {  // nesting, in an attr's list or an unknown field
      const size_t depth = random.chance(50) ? 50 + random.below(80) : 1000 + random.below(100000);
      std::string open, close;
      for (size_t i = 0; i < depth; ++i) open += random.chance(50) ? "list { " : "value { ";
      for (size_t i = 0; i < depth; ++i) close += "} ";
      text.insert(at, open + close);
      break;
    }
    case 1: {  // a line repeated many times
      const size_t start = text.rfind('\n', at == 0 ? 0 : at - 1);
      const size_t begin = start == std::string::npos ? 0 : start + 1;
      const size_t end = text.find('\n', begin);
      const std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin + 1);
      std::string many;
      for (size_t i = 0, n = 1 + random.below(5000); i < n && text.size() + many.size() + line.size() <= max_size;
           ++i) {
        many += line;
      }
      text.insert(begin, many);
      break;
    }
    case 2: {  // a number replaced by one past every range
      const size_t digit = text.find_first_of("0123456789", at);
      if (digit == std::string::npos) break;
      const size_t end = text.find_first_not_of("0123456789.e-x", digit);
      text.replace(digit, (end == std::string::npos ? text.size() : end) - digit,
                   kNumbers[random.below(sizeof kNumbers / sizeof kNumbers[0])]);
      break;
    }
    case 3: {  // a string replaced by one of escapes and control bytes
      const size_t quote = text.find('"', at);
      const size_t end = quote == std::string::npos ? std::string::npos : text.find('"', quote + 1);
      if (end == std::string::npos) break;
      text.replace(quote, end - quote + 1, kStrings[random.below(sizeof kStrings / sizeof kStrings[0])]);
      break;
    }
    default:  // a brace or bracket too many or too few
      text.insert(at, 1, "{}<>[]"[random.below(6)]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  init_harness();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  count(guarded(text, [&] { return run_graph(Graph::parse("fuzz.pbtxt", text), fnv1a(data, size)); }));
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Random random(seed);
  std::string text(reinterpret_cast<const char*>(data), size);
  const int roll = static_cast<int>(random.below(100));
  graphdef::GraphDef graph;
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(100);
  if (roll < 50 && parser.ParseFromString(text, &graph)) {
    for (int i = 0, n = 1 + static_cast<int>(random.below(3)); i < n; ++i) mutate_graph(graph, random);
    google::protobuf::TextFormat::Printer printer;
    printer.SetSingleLineMode(random.chance(20));
    printer.PrintToString(graph, &text);
  } else if (roll < 75) {
    hostile_text(text, max_size, random);
  } else {
    mutate_bytes(text, 128);
  }
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
