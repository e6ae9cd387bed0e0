#include "cli/cli.h"

#include <cmath>
#include <cstdlib>

#include "core/errors.h"
#include "core/int_text.h"

namespace graphrun {

namespace {

const char* const kFeedHelp =
    "  --feed NAME=VALUE  value for the placeholder NAME: JSON (3.5, true, [[1,2],[3,4]])\n"
    "                     or @file.npy; converted to the placeholder's dtype\n"
    "  --feeds FILE.npz   every array of the archive feeds the placeholder of its name\n"
    "  --random           random values for every needed placeholder not fed otherwise: floats\n"
    "                     uniform in [-1, 1), integers in 0..9, bools half true (graphrun's values)\n"
    "  --seed N           the seed of --random (default 0)\n"
    "  --shape NAME=D,..  the shape of a random feed whose placeholder has unknown dims\n";

const char* const kExitCodes =
    "Exit codes: 0 ok, 2 usage or feed error, 3 unreadable or invalid model, 4 error while running.\n";

}  // namespace

std::string usage_text(const std::string& verb) {
  if (verb == "inspect") {
    return std::string(
               "usage: graphrun-cc inspect MODEL.pb [--json] [--no-optimize] [--signature KEY]\n"
               "\n"
               "Describes a GraphDef: inputs, outputs, op types, parameters, unsupported ops, as graphrun\n"
               "inspect does. A SavedModel directory: its meta graphs' tags and signatures, as\n"
               "saved_model_cli show --all lists them; with --signature, that signature's frozen graph.\n"
               "\n"
               "  --json             print one JSON document\n"
               "  --no-optimize      do not apply the load-time graph passes (the optimize line says off)\n"
               "\n") +
           kExitCodes;
  }
  if (verb == "bench") {
    return std::string(
               "usage: graphrun-cc bench MODEL.pb [--warmup N] [--runs N | --duration S] [--profile] [--top K]\n"
               "                  [--feed NAME=VALUE]... [--feeds FILE.npz]... [--random] [--seed N]\n"
               "                  [--shape NAME=D,..]... [--fetch NAME]... [--json]\n"
               "\n"
               "Measures latency and throughput as graphrun bench does: a first run, --warmup untimed runs,\n"
               "then --runs N timed runs or as many as fit in --duration S (default up to 1000 runs or 5 s).\n"
               "\n"
               "  --warmup N         untimed runs first (default 10)\n"
               "  --runs N           exactly N timed runs\n"
               "  --duration S       timed runs for S seconds\n"
               "  --profile          time every node; print per op type and slowest nodes\n"
               "  --top K            slowest nodes to list (default 10)\n"
               "  --json             print one JSON document (figures in seconds)\n"
               "  --no-optimize      run the graph as written, without the load-time graph passes\n"
               "  --fetch NAME       tensor to compute, \"node\" or \"node:k\" (repeatable)\n") +
           kFeedHelp + "\n" + kExitCodes;
  }
  return std::string(
             "usage: graphrun-cc MODEL.pb [--run TARGET]... [--steps N] [--feed NAME=VALUE]...\n"
             "                  [--feeds FILE.npz]... [--random] [--seed N] [--shape NAME=D,..]...\n"
             "                  [--fetch NAME]... [--json] [--out DIR]\n"
             "       graphrun-cc run MODEL.pb ... (the same)\n"
             "       graphrun-cc inspect MODEL.pb [--json]\n"
             "       graphrun-cc bench MODEL.pb ... (see graphrun-cc bench --help)\n"
             "       graphrun-cc --list-kernels | --version | --help\n"
             "\n"
             "Runs a TensorFlow 1.x GraphDef (binary .pb, or text .pbtxt) and prints the fetched tensors.\n"
             "\n"
             "  --run TARGET       execute the node TARGET (\"node\" or \"node:k\") for its effects, e.g. an\n"
             "                     initializer or a training step; repeatable, in the order given, and\n"
             "                     variables keep their values from one run to the next\n"
             "  --steps N          execute the last --run target N times (default 1)\n") +
         kFeedHelp +
         "  --fetch NAME       tensor to print after the runs, \"node\" or \"node:k\" (repeatable);\n"
         "                     default without --run: every output of every node that nothing else\n"
         "                     consumes; with --run: nothing\n"
         "  --signature KEY    with a SavedModel directory: the signature to run (default\n"
         "                     serving_default); its input and output keys are feed/fetch names\n"
         "  --json             print one JSON line instead of one line per tensor\n"
         "  --out DIR          save each fetched tensor as DIR/<name>.npy ('/' ':' '\\' '>' become '_')\n"
         "  --no-optimize      run the graph as written: no load-time passes (constant and batch-norm\n"
         "                     folding, fusion...); GRAPHRUN_CC_OPTIMIZE=0 does the same\n"
         "  --list-kernels     print the supported op types and exit (with --json: their declarations)\n"
         "  --version          print the version and exit\n"
         "  --help             print this help and exit\n"
         "\n"
         "Every run and the fetches get all the feeds; each needs only the placeholders it uses.\n" +
         kExitCodes;
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

uint64_t parse_seed(const std::string& text) {
  IntText value;
  if (!parse_int_text(text, value) || (value.negative && value.magnitude != 0)) {
    throw UsageError("argument --seed: invalid seed value: '" + text + "' (a whole number in 0..2**64-1)");
  }
  return value.magnitude;
}

// A count at least `minimum` (bench's --warmup, --runs, --top).
int64_t parse_count(const std::string& flag, const std::string& text, int64_t minimum) {
  IntText value;
  const bool valid = parse_int_text(text, value) && value.magnitude <= INT64_MAX;
  const int64_t number =
      value.negative ? -static_cast<int64_t>(value.magnitude) : static_cast<int64_t>(value.magnitude);
  if (!valid || number < minimum) {
    throw UsageError("argument " + flag + ": invalid value: '" + text + "' (a whole number of at least " +
                     std::to_string(minimum) + ")");
  }
  return number;
}

// Seconds as Python's float() reads them, positive and finite.
double parse_seconds(const std::string& text) {
  const std::string body = strip_ascii(text);
  char* end = nullptr;
  const bool hex = body.find_first_of("xX") != std::string::npos;  // float() takes no hex
  const double value = body.empty() || hex ? NAN : std::strtod(body.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(value > 0) || std::isinf(value)) {
    throw UsageError("argument --duration: invalid duration value: '" + text + "'");
  }
  return value;
}

bool is_verb(const std::string& word) {
  return word == "run" || word == "inspect" || word == "bench" || word == "compare" || word == "view" ||
         word == "batch";
}

}  // namespace

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  bool have_model = false;
  bool steps_given = false;
  int first = 1;
  if (argc > 1 && is_verb(argv[1])) {
    options.verb = argv[1];
    first = 2;
    if (options.verb != "run" && options.verb != "inspect" && options.verb != "bench") {
      throw UsageError("graphrun-cc has no '" + options.verb + "' verb (only run, inspect and bench); use graphrun " +
                       options.verb);
    }
  }
  const bool run = options.verb == "run";
  const bool bench = options.verb == "bench";
  const bool feeds = run || bench;  // the verbs that take feed flags and --fetch
  for (int i = first; i < argc; ++i) {
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
    if (feeds && flag == "--feed") {
      options.feeds.push_back(value());
    } else if (feeds && flag == "--feeds") {
      options.feed_files.push_back(value());
    } else if (feeds && argument == "--random") {
      options.random = true;
    } else if (feeds && flag == "--seed") {
      options.seed = parse_seed(value());
    } else if (feeds && flag == "--shape") {
      options.shapes.push_back(value());
    } else if (run && flag == "--run") {
      options.runs.push_back(value());
    } else if (run && flag == "--steps") {
      options.steps = parse_steps(value());
      steps_given = true;
    } else if (feeds && flag == "--fetch") {
      options.fetches.push_back(value());
    } else if (run && flag == "--out") {
      options.out = value();
      options.out_given = true;
    } else if (bench && flag == "--warmup") {
      options.warmup = parse_count(flag, value(), 0);
    } else if (bench && flag == "--runs") {
      options.bench_runs = parse_count(flag, value(), 1);
    } else if (bench && flag == "--duration") {
      options.duration = parse_seconds(value());
    } else if (bench && argument == "--profile") {
      options.profile = true;
    } else if (bench && flag == "--top") {
      options.top = parse_count(flag, value(), 1);
    } else if (flag == "--signature") {
      options.signature = value();
    } else if (argument == "--json") {
      options.json = true;
    } else if (argument == "--no-optimize") {
      options.optimize = false;
    } else if (run && first == 1 && argument == "--list-kernels") {
      options.list_kernels = true;
    } else if (run && first == 1 && argument == "--version") {
      options.version = true;
    } else if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument.size() > 1 && argument[0] == '-') {
      throw UsageError("unknown option '" + argument + "'" + (run ? "" : " for " + options.verb) + "; see --help");
    } else if (have_model) {
      throw UsageError("unexpected argument '" + argument + "': only one MODEL.pb is allowed");
    } else {
      options.model = argument;
      have_model = true;
    }
  }
  if (options.help) return options;
  if (steps_given && options.runs.empty()) {
    throw UsageError("--steps repeats the last --run target; give one with --run");
  }
  if (options.bench_runs > 0 && options.duration > 0) {
    throw UsageError("argument --duration: not allowed with argument --runs");
  }
  if (!have_model && !options.list_kernels && !options.version) {
    throw UsageError("missing MODEL.pb; see --help");
  }
  return options;
}

}  // namespace graphrun
