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
#include "cli/text_escape.h"
#include "core/errors.h"
#include "graph/kernel.h"
#include "io/stdout.h"
#include "core/tensor_limit.h"
#include "cli/verbs.h"
#include "core/version.h"

namespace graphrun {
namespace {

// One line, whatever a message carries (a path or JSON text with newlines).
void report_error(const std::string& message) {
  std::fprintf(stderr, "graphrun-cc: %s\n", escape_controls(message, false).c_str());
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
