// graphrun-cc: run, inspect or bench a GraphDef (see verbs.h).
//
// Every failure ends as exactly one "graphrun-cc: ..." line on stderr and the
// exit code of its stage (see errors.h); nothing escapes as a crash.
#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>

#include "cli/cli.h"
#include "cli/kernel_schemas.h"
#include "core/errors.h"
#include "graph/kernel.h"
#include "io/stdout.h"
#include "core/tensor_limit.h"
#include "cli/verbs.h"
#include "core/version.h"

namespace graphrun {
namespace {

// A message on one line (a path or JSON text may hold newlines) with every
// control character from the file written as \xNN, so a node name cannot move
// the cursor or clear the terminal: C0 (tab and line breaks become spaces),
// DEL, C1 (UTF-8 C2 80..C2 9F) and bytes that are not UTF-8, as graphrun does.
std::string escape_controls(const std::string& message) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  auto hex = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  const std::size_t n = message.size();
  for (std::size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(message[i]);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      hex(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // One UTF-8 sequence: its length from the lead byte, its tail all 10xxxxxx.
      const std::size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      std::size_t k = 1;
      while (len != 0 && k < len && i + k < n && (static_cast<unsigned char>(message[i + k]) & 0xc0) == 0x80) ++k;
      if (len == 0 || k < len) {
        hex(c);
        ++i;
      } else if (c == 0xc2 && static_cast<unsigned char>(message[i + 1]) < 0xa0) {
        hex(static_cast<unsigned char>(message[i + 1]));  // C1, named by its code point
        i += 2;
      } else {
        out.append(message, i, len);
        i += len;
      }
    }
  }
  return out;
}

void report_error(const std::string& message) {
  std::fprintf(stderr, "graphrun-cc: %s\n", escape_controls(message).c_str());
}

int run(int argc, const char* const* argv) {
  const Options options = parse_command_line(argc, argv);
  max_tensor_bytes();  // a bad GRAPHDEF_MAX_TENSOR_BYTES is a usage error before any work
  if (options.help) {
    write_stdout(usage_text(options.verb));
    return kExitOk;
  }
  if (options.version) {
    write_stdout(std::string("graphrun-cc ") + kVersion + "\n");
    return kExitOk;
  }
  if (options.list_kernels && options.json) {
    write_stdout(kernel_schemas_json());
    return kExitOk;
  }
  if (options.list_kernels) {
    std::string names;
    for (const std::string& op : KernelRegistry::op_names()) names += op + "\n";
    write_stdout(names);
    return kExitOk;
  }

  if (options.verb == "inspect") return inspect_verb(options);
  if (options.verb == "bench") return bench_verb(options);
  return run_verb(options);
}

}  // namespace
}  // namespace graphrun

int main(int argc, char** argv) {
  // Protobuf logs parse problems to stderr itself; errors are reported here
  // instead, on one line.
  google::protobuf::SetLogHandler(nullptr);
  // A closed stdout (graphrun-cc ... | head) becomes an EPIPE write error,
  // reported on one line, instead of a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return graphrun::run(argc, argv);
  } catch (const graphrun::ExitError& error) {
    graphrun::report_error(error.what());
    return error.code();
  } catch (const std::bad_alloc&) {
    graphrun::report_error("out of memory");
    return graphrun::kExitRun;
  } catch (const std::exception& error) {
    graphrun::report_error(std::string("internal error: ") + error.what());
    return graphrun::kExitRun;
  }
}
