// graphrun-cc: run a GraphDef and print the fetched tensors.
//
// Every failure ends as exactly one "graphrun-cc: ..." line on stderr and the
// exit code of its stage (see errors.h); nothing escapes as a crash.
#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>

#include "cli.h"
#include "errors.h"
#include "feeds.h"
#include "fetches.h"
#include "format.h"
#include "graph.h"
#include "invocation.h"
#include "kernel.h"
#include "run_targets.h"
#include "version.h"

namespace graphrun {
namespace {

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (errno == EPIPE) throw RunError("output closed before everything was written (broken pipe)");
    throw RunError(std::string("cannot write the output: ") + std::strerror(errno));
  }
}

void report_error(std::string message) {
  // One line, whatever a message carries (a path or JSON text with newlines).
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "graphrun-cc: %s\n", message.c_str());
}

int run(int argc, const char* const* argv) {
  const Options options = parse_command_line(argc, argv);
  if (options.help) {
    write_stdout(usage_text());
    return kExitOk;
  }
  if (options.version) {
    write_stdout(std::string("graphrun-cc ") + kVersion + "\n");
    return kExitOk;
  }
  if (options.list_kernels) {
    std::string names;
    for (const std::string& op : KernelRegistry::op_names()) names += op + "\n";
    write_stdout(names);
    return kExitOk;
  }

  const auto graph = Graph::load(options.model);
  const FeedMap feeds = parse_feeds(*graph, options.feeds, options.feed_files);
  Work work;
  work.runs = resolve_run_targets(*graph, options.runs);
  work.steps = options.steps;
  // Without --fetch, a plain run prints the graph's outputs; runs done for
  // their effects (training) print nothing unless asked.
  std::vector<Fetch> fetches;
  if (!options.fetches.empty()) fetches = resolve_fetches(*graph, options.fetches);
  else if (options.runs.empty()) fetches = default_fetches(*graph);
  for (const Fetch& fetch : fetches) work.fetches.push_back(fetch.endpoint);
  const std::vector<TensorPtr> values = execute(*graph, feeds, work);

  std::vector<FetchResult> results;
  for (std::size_t i = 0; i < fetches.size(); ++i) results.push_back({fetches[i].name, values[i]});
  write_stdout(options.json ? format_json(results) : format_text(results));
  return kExitOk;
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
