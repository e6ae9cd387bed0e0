#include "cli.h"

#include "errors.h"

namespace graphrun {

std::string usage_text() {
  return "usage: graphrun-cc MODEL.pb [--run TARGET]... [--steps N] [--feed NAME=VALUE]... [--feeds FILE.npz]...\n"
         "                  [--fetch NAME]... [--json]\n"
         "       graphrun-cc --list-kernels | --version | --help\n"
         "\n"
         "Runs a TensorFlow 1.x GraphDef (binary .pb, or text .pbtxt) and prints the fetched tensors.\n"
         "\n"
         "  --run TARGET       execute the node TARGET (\"node\" or \"node:k\") for its effects, e.g. an\n"
         "                     initializer or a training step; repeatable, in the order given, and\n"
         "                     variables keep their values from one run to the next\n"
         "  --steps N          execute the last --run target N times (default 1)\n"
         "  --feed NAME=VALUE  value for the placeholder NAME: JSON (3.5, true, [[1,2],[3,4]])\n"
         "                     or @file.npy; converted to the placeholder's dtype\n"
         "  --feeds FILE.npz   every array of the archive feeds the placeholder of its name\n"
         "  --fetch NAME       tensor to print after the runs, \"node\" or \"node:k\" (repeatable);\n"
         "                     default without --run: every output of every node that nothing else\n"
         "                     consumes; with --run: nothing\n"
         "  --json             print one JSON line instead of one line per tensor\n"
         "  --list-kernels     print the supported op types and exit\n"
         "  --version          print the version and exit\n"
         "  --help             print this help and exit\n"
         "\n"
         "Every run and the fetches get all the feeds; each needs only the placeholders it uses.\n"
         "Exit codes: 0 ok, 2 usage or feed error, 3 unreadable or invalid model, 4 error while running.\n";
}

namespace {

int64_t parse_steps(const std::string& text) {
  int64_t steps = 0;
  bool valid = !text.empty() && text.size() <= 18;  // at most 18 digits: no overflow
  for (char c : text) valid = valid && c >= '0' && c <= '9';
  if (valid) steps = std::stoll(text);
  if (!valid || steps < 1) throw UsageError("--steps needs a whole number of at least 1, got '" + text + "'");
  return steps;
}

}  // namespace

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  bool have_model = false;
  bool steps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    // "--flag=value" and "--flag value" are both accepted for valued flags;
    // a single-valued flag given twice takes the last value, as argparse does.
    const std::size_t equals = argument.find('=');
    const std::string flag = argument.rfind("--", 0) == 0 ? argument.substr(0, equals) : argument;
    auto value = [&]() -> std::string {
      if (equals != std::string::npos && argument.rfind("--", 0) == 0) return argument.substr(equals + 1);
      if (i + 1 >= argc) throw UsageError(flag + " needs a value; see --help");
      return argv[++i];
    };
    if (flag == "--feed") {
      options.feeds.push_back(value());
    } else if (flag == "--feeds") {
      options.feed_files.push_back(value());
    } else if (flag == "--run") {
      options.runs.push_back(value());
    } else if (flag == "--steps") {
      options.steps = parse_steps(value());
      steps_given = true;
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
  if (steps_given && options.runs.empty() && !options.help) {
    throw UsageError("--steps repeats the last --run target; give one with --run");
  }
  if (!have_model && !options.help && !options.list_kernels && !options.version) {
    throw UsageError("missing MODEL.pb; see --help");
  }
  return options;
}

}  // namespace graphrun
