#include "cli.h"

#include "errors.h"

namespace graphrun {

std::string usage_text() {
  return "usage: graphrun-cc MODEL.pb [--feed NAME=VALUE]... [--fetch NAME]... [--json]\n"
         "       graphrun-cc --list-kernels | --version | --help\n"
         "\n"
         "Runs a TensorFlow 1.x GraphDef (binary .pb, or text .pbtxt) and prints the fetched tensors.\n"
         "\n"
         "  --feed NAME=VALUE  value for the placeholder NAME: JSON (3.5, true, [[1,2],[3,4]])\n"
         "                     or @file.npy; converted to the placeholder's dtype\n"
         "  --fetch NAME       tensor to print, \"node\" or \"node:k\" (repeatable); default: every\n"
         "                     output of every node that nothing else consumes\n"
         "  --json             print one JSON line instead of one line per tensor\n"
         "  --list-kernels     print the supported op types and exit\n"
         "  --version          print the version and exit\n"
         "  --help             print this help and exit\n"
         "\n"
         "Exit codes: 0 ok, 2 usage or feed error, 3 unreadable or invalid model, 4 error while running.\n";
}

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  bool have_model = false;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    // "--flag=value" and "--flag value" are both accepted for valued flags.
    const std::size_t equals = argument.find('=');
    const std::string flag = argument.rfind("--", 0) == 0 ? argument.substr(0, equals) : argument;
    auto value = [&]() -> std::string {
      if (equals != std::string::npos && argument.rfind("--", 0) == 0) return argument.substr(equals + 1);
      if (i + 1 >= argc) throw UsageError(flag + " needs a value; see --help");
      return argv[++i];
    };
    if (flag == "--feed") {
      options.feeds.push_back(value());
    } else if (flag == "--fetch") {
      options.fetches.push_back(value());
    } else if (argument == "--json") {
      options.json = true;
    } else if (argument == "--list-kernels") {
      options.list_kernels = true;
    } else if (argument == "--version") {
      options.version = true;
    } else if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument.size() > 1 && argument[0] == '-') {
      throw UsageError("unknown option '" + argument + "'; see --help");
    } else if (have_model) {
      throw UsageError("unexpected argument '" + argument + "': only one MODEL.pb is allowed");
    } else {
      options.model = argument;
      have_model = true;
    }
  }
  if (!have_model && !options.help && !options.list_kernels && !options.version) {
    throw UsageError("missing MODEL.pb; see --help");
  }
  return options;
}

}  // namespace graphrun
