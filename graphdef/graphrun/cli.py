"""graphrun: run, inspect, compare, benchmark, draw and batch-score a GraphDef file.

    graphrun MODEL [--run TARGET]... [--steps N] [--feed NAME=VALUE]... [--fetch NAME]... [--json]
    graphrun inspect|compare|bench|view|batch MODEL ...

The C++ runner (graphrun-cc) implements the same contract for run, and both must print
the same bytes, so the output rules live in graphdef.client.output_format and the feed rules in
graphdef.client.feeds. Each other verb lives in its own module, imported only when used, so the
run verb starts as fast as before. Every failure ends as one `graphrun: ...` line on
stderr and an exit code that says whose fault it was (see EXIT_CODES).
"""

import argparse
import importlib
import os
import re
import sys
import warnings

import graphdef
from graphdef.ops import unsupported as unsupported_ops
from graphdef.graphrun import feed_options, suggest
from graphdef.client import feeds as feeding
from graphdef.framework import limits
from graphdef.framework.text_escape import escape_controls
from graphdef.framework.errors import OpError, ResourceExhaustedError
from graphdef.wire.model_file import output_names
from graphdef.client.output_format import dtype_name, format_json, format_shape, format_text, too_large_to_print
from graphdef.optimize.at_load import load_with_graph_def
from graphdef.wire import saved_model_tables
from graphdef.wire.serialize import GraphFileError, read_graph_def
from graphdef.client import runtime
from graphdef.client.session import Session
from graphdef.wire.call_check import check_deferred_calls, has_deferred_calls
from graphdef.wire.functions import FunctionError

EXIT_OK = 0
EXIT_DIFFERENT = 1    # compare: the engines disagree (or an output holds NaN/Inf)
EXIT_USAGE = 2        # bad command line, feed or fetch: the caller can fix it
EXIT_MODEL = 3        # the model file cannot be read or is not a valid graph
EXIT_RUN = 4          # the graph failed while running
EXIT_INTERRUPTED = 130

# verb -> the module holding its build_parser() and main(args); "run" is this module
VERBS = {
    "run": None,
    "inspect": "graphdef.graphrun.inspect_model",
    "compare": "graphdef.graphrun.compare",
    "bench": "graphdef.graphrun.bench",
    "view": "graphdef.graphrun.view",
    "batch": "graphdef.graphrun.batch",
    "optimize": "graphdef.graphrun.optimize_model",
    "serve": "graphdef.graphrun.serve",
    "convert": "graphdef.graphrun.convert_model",
}

EXIT_CODES = """exit codes:
  0    success
  1    compare: FAILED (the engines' outputs differ, or hold NaN/Inf)
  2    usage or feed error: bad option, unparsable or mismatched feed, unknown feed or
       fetch name, a needed placeholder not fed, a missing tool (graphrun-cc,
       TensorFlow, Graphviz's dot)
  3    the model cannot be read or is invalid (missing file, not a GraphDef, failed
       validation, unsupported ops)
  4    an error while running the graph (e.g. an uninitialized variable)
  130  interrupted
"""

FETCH_HELP = """fetches:
  "node" (output 0) or "node:k". Without --fetch, every output of every node that no
  other node uses (as data or control input), in file order.
"""

RUN_HELP = """training (--run, --steps):
  --run TARGET executes the node TARGET ("node", or "node:k" naming one of its outputs)
  for its effects, such as an initializer or a training step, before the fetches are
  printed. Repeatable: the runs execute in the order given, in one session, so variables
  keep their values from one run to the next. --steps N executes the last --run target N
  times (default 1). Every run gets all the feeds and needs only the placeholders it uses;
  all runs are checked before the first executes. With --run, nothing is printed unless
  asked for with --fetch (with --json, an empty "outputs" list). graphrun-cc takes the
  same flags and prints the same bytes. For example:
    graphrun model.pb --run init --run train --steps 1000 --feeds data.npz --fetch loss
"""

EPILOG = f"""commands (the first argument; without one, graphrun runs the model):
  graphrun MODEL ...            run it and print the fetched tensors (also: graphrun run)
  graphrun inspect MODEL        inputs, outputs, op histogram, parameters, unsupported ops
  graphrun compare MODEL        the same feeds through python, cc (and tensorflow); PASSED/FAILED
  graphrun bench MODEL          latency percentiles and throughput; --profile per op and node
  graphrun view MODEL -o F.svg  draw the graph (.svg, .png, .pdf, .html, .dot) with Graphviz
  graphrun batch MODEL ...      stream a large .npy through the model into an .npy
  graphrun optimize MODEL -o F  fold constants and batch norms, prune, merge; write a plain GraphDef
  graphrun serve MODEL|REPO     serve it over the Open Inference Protocol and TF Serving's API
  graphrun convert MODEL -o F   write it with its weights in a file beside it, or back inside
  Each has its own --help. A model file named like a command is given as ./NAME.

{feed_options.HELP}
{FETCH_HELP}
{RUN_HELP}
output:
  one line per fetch, "<node>:<k> <dtype> <shape> = <values>"; with --json, one line
  {{"outputs": [{{"name": ..., "dtype": ..., "shape": [...], "values": ...}}, ...]}}.
  With --out DIR, each fetched tensor is saved as DIR/<name>.npy, '/' ':' '\\' '>' in the
  name turned into '_' (layer/Relu:0 -> DIR/layer_Relu_0.npy), and each line reads
  "<node>:<k> <dtype> <shape> -> <file>" (with --json, "file" replaces "values").

{EXIT_CODES}"""


class Failure(Exception):
    """Ends the run: `message` becomes the stderr line, `code` the exit code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command line as one line instead of usage + error."""

    def error(self, message):
        # a message ending in its own parenthesized hint (argparse's choices, a value's range) needs no other
        hint = "" if message.endswith(")") else f" (see {self.prog} --help)"
        raise Failure(EXIT_USAGE, f"{message}{hint}")


def verb_parser(verb, description, epilog):
    """The parser every verb starts from: MODEL, one-line errors, raw help text."""
    parser = _Parser(prog=f"graphrun {verb}", allow_abbrev=False, epilog=epilog, description=description,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", metavar="MODEL", help="the GraphDef file (.pb, or .pbtxt for text)")
    return parser


def add_fetch_argument(parser, help_text='"node" or "node:k" to fetch (repeatable; default: the graph\'s outputs)'):
    parser.add_argument("--fetch", action="append", default=[], metavar="NAME", help=help_text)


def add_optimize_argument(parser):
    """--no-optimize, for every verb that runs a model (run, bench, compare, batch)."""
    parser.add_argument("--no-optimize", action="store_true",
                        help="run the graph exactly as the file has it: no load-time passes (constant and "
                             "batch-norm folding, Identity removal, CSE); also GRAPHDEF_OPTIMIZE=0")


def optimize_switch(args):
    """load()'s optimize argument: off with --no-optimize, else as GRAPHDEF_OPTIMIZE says."""
    return False if getattr(args, "no_optimize", False) else None


def build_parser():
    parser = _Parser(
        prog="graphrun", allow_abbrev=False, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a TensorFlow GraphDef (.pb binary, or .pbtxt text), after any --run targets such as "
                    "an initializer and training steps, and print the fetched tensors.")
    parser.add_argument("model", metavar="MODEL", help="the GraphDef file (.pb, or .pbtxt for text)")
    feed_options.add_arguments(parser)
    add_fetch_argument(parser, '"node" or "node:k" to print (repeatable; default: the graph\'s sinks, '
                               'or nothing with --run)')
    training = parser.add_argument_group("training (see below)")
    training.add_argument("--run", action="append", default=[], metavar="TARGET",
                          help="execute the node TARGET for its effects, e.g. an initializer or a training "
                               "step (repeatable, in order; variables persist from run to run)")
    training.add_argument("--steps", type=parse_steps, default=None, metavar="N",
                          help="execute the last --run target N times (default 1)")
    parser.add_argument("--signature", metavar="KEY",
                        help="with a SavedModel directory: the signature to run (default serving_default); its "
                             "input and output keys are feed and fetch names")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text lines")
    parser.add_argument("--out", metavar="DIR", help="save each fetched tensor as DIR/<name>.npy")
    add_optimize_argument(parser)
    parser.add_argument("--version", action="version", version=f"graphrun {graphdef.__version__}")
    return parser


def main(argv=None):
    """Runs graphrun; returns the exit code (never raises, never prints a traceback)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stderr carries at most the one error line
            return _main(sys.argv[1:] if argv is None else argv)
    except Failure as failure:
        return _fail(failure.code, failure.message)
    except KeyboardInterrupt:
        return _fail(EXIT_INTERRUPTED, "interrupted")
    except ResourceExhaustedError as e:  # a tensor over the size limit, refused before allocating
        return _fail(EXIT_RUN, _one_line(e))
    except MemoryError:  # under the limit, yet the allocation failed (outside any node: feeds, output)
        return _fail(EXIT_RUN, limits.out_of_memory_text())
    except BrokenPipeError:
        _silence_stdout()
        return _fail(EXIT_RUN, "output closed before everything was written (broken pipe)")
    except Exception as e:  # noqa: BLE001 - the contract: a one-line report, never a traceback
        return _fail(EXIT_RUN, f"unexpected {type(e).__name__}: {_one_line(e)}")


def _main(argv):
    verb = argv[0] if argv and argv[0] in VERBS else None
    if verb in (None, "run"):
        parser, command = build_parser(), run_command
    else:
        module = importlib.import_module(VERBS[verb])
        parser, command = module.build_parser(), module.main
    try:
        args = parser.parse_args(argv if verb is None else argv[1:])
    except SystemExit as e:  # --help and --version print and exit 0
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    return command(args)


def parse_steps(text):
    """--steps N: N >= 1 written in at most 18 ASCII digits, as graphrun-cc accepts it.

    Checked for every --steps given (the last one counts), so a bad value is refused even
    when a later --steps replaces it, as graphrun-cc refuses it. Raises Failure itself:
    argparse would wrap a ValueError in its own words.
    """
    if not re.fullmatch(r"[0-9]{1,18}", text) or int(text) < 1:
        raise Failure(EXIT_USAGE, f"--steps needs a whole number of at least 1, got '{text}'")
    return int(text)


def run_command(args):
    """The run verb: feeds in, the --run targets executed, the fetched tensors out."""
    if args.steps is not None and not args.run:
        raise Failure(EXIT_USAGE, "--steps repeats the last --run target; give one with --run")
    prepared = prepare(args, open_session=True)
    values = run(prepared.graph, prepared.targets, prepared.fed.values, prepared.runs,
                 1 if args.steps is None else args.steps, optimize=optimize_switch(args), session=prepared.session)
    outputs = [(t.name, value) for t, value in zip(prepared.targets, values)]
    if args.out is not None:
        text = _write_out(args, outputs)
    else:
        too_large = too_large_to_print(outputs)
        if too_large:
            raise Failure(EXIT_USAGE, too_large)
        text = format_json(outputs) + "\n" if args.json else format_text(outputs)
    sys.stdout.write(text)
    sys.stdout.flush()  # inside main, so a closed pipe is reported here and not at exit
    return EXIT_OK


def _write_out(args, outputs):
    """Saves the outputs under --out and returns what to print about each file."""
    from graphdef.graphrun.output_files import OutputFileError, write_outputs
    try:
        written = write_outputs(args.out, outputs)
    except OutputFileError as e:
        raise Failure(EXIT_USAGE, str(e)) from None
    if args.json:
        import json
        entries = [{"name": name, "dtype": dtype_name(value), "shape": list(value.shape), "file": path}
                   for name, value, path in written]
        return json.dumps({"outputs": entries}) + "\n"
    return "".join(f"{name} {dtype_name(value)} {format_shape(value.shape)} -> {path}\n"
                   for name, value, path in written)


class Prepared:
    """A loaded model with its runs and fetches resolved and every needed feed in hand.

    `runs` holds what Session.run executes for each --run target (see run_element).
    """

    def __init__(self, graph, file_order, targets, fed, runs=(), session=None):
        self.graph, self.file_order, self.targets, self.fed = graph, file_order, targets, fed
        self.runs = list(runs)
        self.session = session  # with prepare(open_session=True): the Session to run in


def prepare(args, open_session=False):
    """Loads args.model and gathers the feeds, runs and fetches of args (the run/compare/bench flags);
    with `open_session`, also the Session to run them in (see open_run_session).

    Order matters to which error a user sees first, and follows graphrun-cc's: the model,
    then the feed values, then the --run targets, then the fetch names, then what is still
    unfed, for each run in order and then for the fetches, all before anything executes,
    so a run that cannot start never leaves the runs before it half done.
    """
    graph, file_order = load_model(args.model, getattr(args, "signature", None), optimize_switch(args),
                                   defer_calls=open_session)
    session = open_run_session(graph, optimize_switch(args)) if open_session else None
    try:
        fed = feed_options.explicit_feeds(graph, args)
    except feeding.FeedError as e:
        raise Failure(EXIT_USAGE, str(e)) from None
    run_ops = [resolve_run_target(graph, name) for name in getattr(args, "run", ())]
    # Runs are done for their effects (training): printing every output of the graph
    # after them is rarely wanted, so with --run only --fetch prints anything.
    names = args.fetch or ([] if run_ops else default_fetches(graph, file_order))
    targets = [resolve_fetch(graph, name) for name in names]
    missing = unsupported_ops.needed_unsupported(run_ops + targets, fed.values)
    if missing:
        raise Failure(EXIT_MODEL, f"{args.model}: {unsupported_ops.describe(missing)}")
    try:
        feed_options.complete_feeds(graph, file_order, run_ops + targets, fed, args)
    except feeding.FeedError as e:
        raise Failure(EXIT_USAGE, str(e)) from None
    runs = [run_element(op, fed.values) for op in run_ops]
    for element in runs:
        check_fed([element], fed.values, file_order)
    check_fed(targets, fed.values, file_order)
    return Prepared(graph, file_order, targets, fed, runs, session)


def load_model(path, signature=None, optimize=None, defer_calls=False):
    """The Graph with the file's node names, and those names in file order; Failure(3) if unusable.
    The graph runs optimized for its fetches and feeds unless `optimize` is False (see
    graphdef.optimize.at_load). `defer_calls`: its function calls are checked by open_run_session."""
    try:
        graph, graph_def = load_with_graph_def(path, signature, optimize, defer_calls)
    except GraphFileError as e:
        raise Failure(EXIT_MODEL, _one_line(e)) from None
    except RecursionError:
        raise Failure(EXIT_MODEL, f"{path}: the graph is nested too deeply to read") from None
    except ResourceExhaustedError as e:  # a Const over the tensor size limit: refused, as when running
        raise Failure(EXIT_RUN, f"{path}: {_one_line(e)}") from None
    except MemoryError:  # allocating under the limit failed: graphrun-cc's words for the same failure
        raise Failure(EXIT_MODEL, f"{path}: out of memory while loading the model") from None
    except Exception as e:  # noqa: BLE001 - any other failure to load still means an unusable model
        raise Failure(EXIT_MODEL, f"{path}: cannot load the graph ({type(e).__name__}: {_one_line(e)})") from None
    return graph, [node.name for node in graph_def.node]


def read_model_to_write(path):
    """The GraphDef a verb writes out again (convert, optimize); Failure(3) if unusable. From a
    SavedModel, the vocabulary files its tables read go into the graph (saved_model_tables)."""
    try:
        graph_def = read_graph_def(path)
        if os.path.isdir(path):
            saved_model_tables.inline_vocabularies(graph_def)
    except GraphFileError as e:
        raise Failure(EXIT_MODEL, _one_line(e)) from None
    except OpError as e:  # a vocabulary file that is missing or does not parse
        raise Failure(EXIT_MODEL, f"{path}: {_one_line(e)}") from None
    return graph_def


def open_run_session(graph, optimize=None):
    """The Session a run verb runs `graph` in, made right after the load. When the C++ engine takes
    the graph it has checked the graph's function calls as the load would (in the same words);
    otherwise they are checked here, and a bad one is the model's error (exit 3), before any feed
    is read, as graphrun-cc orders its errors."""
    session = Session(graph=graph, optimize=optimize)
    if has_deferred_calls(graph) and not runtime.cc_takes(session):
        try:
            check_deferred_calls(graph)
        except FunctionError as e:
            session.close()
            raise Failure(EXIT_MODEL, _one_line(e)) from None
    return session


def default_fetches(graph, file_order):
    """Every output of every node nothing consumes, nodes in file order, outputs by index."""
    return output_names(graph, file_order)


def resolve_fetch(graph, name):
    """The tensor `name` ("node" = "node:0", or "node:k") denotes; Failure if there is none."""
    node, sep, index = name.rpartition(":")
    if not sep or not index.isdigit():
        node, index = name, "0"
    try:
        op = graph.get_operation_by_name(node)
    except KeyError:
        raise Failure(EXIT_USAGE, f"cannot fetch '{name}': the graph has no node '{node}'"
                                  f"{suggest.hint(graph, node)}") from None
    k = int(index)
    if k >= len(op.outputs):
        count = {0: "no outputs", 1: "only output 0"}.get(len(op.outputs), f"outputs 0..{len(op.outputs) - 1}")
        raise Failure(EXIT_USAGE, f"cannot fetch '{name}': node '{node}' ({op.type}) has {count}")
    return op.outputs[k]


_TENSOR_NAME = re.compile(r"(.*):([0-9]+)")


def resolve_run_target(graph, name):
    """The node --run `name` executes: "node", or "node:k" naming an output of it.

    Parsed and refused exactly as graphrun-cc does: "node:k" must name an output the node
    has (so "init:0" for a NoOp is refused, with the way to say it), and a control input
    "^node" is not a target.
    """
    if name.startswith("^"):
        raise Failure(EXIT_USAGE, f"unknown run target '{name}': name the node without '^'")
    tensor = _TENSOR_NAME.fullmatch(name)
    node = tensor.group(1) if tensor else name
    try:
        op = graph.get_operation_by_name(node)
    except KeyError:
        raise Failure(EXIT_USAGE, f"unknown run target '{name}': no node is named '{node}'") from None
    outputs = len(op.outputs)
    if tensor and int(tensor.group(2)) >= outputs:
        has = f"no outputs; run it as '{node}'" if outputs == 0 else f"{outputs} output{'s' * (outputs != 1)}"
        raise Failure(EXIT_USAGE, f"unknown run target '{name}': node '{node}' ({op.type}) has {has}")
    return op


def run_element(op, feed_dict):
    """What Session.run executes for --run `op`: the operation, or its output 0 where that
    does what graphrun-cc does and the operation would not.

    A variable run as an operation is not read, so an uninitialized one would pass silently
    where graphrun-cc reports it (exit 4); a fed placeholder run as an operation would be
    planned as unfed, where running it means nothing (its value is the feed).
    """
    if op.type == "VariableV2" or (op.outputs and op.outputs[0] in feed_dict):
        return op.outputs[0]
    return op


def check_fed(targets, feed_dict, file_order=None):
    """Failure naming every placeholder `targets` need that the feeds do not give.

    Listed in the file's node order when it is given, as graphrun-cc lists them.
    """
    missing = feeding.unfed_placeholders(targets, feed_dict)
    if missing and file_order is not None:
        position = {name: i for i, name in enumerate(file_order)}
        missing.sort(key=lambda op: position[op.name])
    if missing:
        listed = ", ".join(feeding.describe(op) for op in missing)
        plural = "s" if len(missing) > 1 else ""
        raise Failure(EXIT_USAGE, f"placeholder{plural} not fed: {listed}; use --feed NAME=VALUE, "
                                  "--feeds FILE.npz or --random")


def run(graph, targets, feed_dict, runs=(), steps=1, optimize=None, session=None):
    """Executes `runs` in order (the last one `steps` times), then returns the fetched values.

    One Session throughout, so what a run writes to a variable is what the next run and
    the fetches read. The Session plans each distinct run once and reuses the plan, so a
    step costs only its kernels. `optimize`: False runs the graph as written on the cc engine
    too (--no-optimize). `session`: the one to use (open_run_session's), else a new one.
    Failure(EXIT_RUN) if the graph fails.
    """
    session = session or Session(graph=graph, optimize=optimize)
    try:
        execute = session.run
        for i, element in enumerate(runs):
            for _ in range(steps if i == len(runs) - 1 else 1):
                execute(element, feed_dict)
        values = session.run(list(targets), feed_dict) if targets else []
    except OpError as e:
        raise Failure(EXIT_RUN, _one_line(e)) from None
    except TypeError as e:  # what the Session refuses to hand out (a variant fetch): the caller's to change
        raise Failure(EXIT_USAGE, _one_line(e)) from None
    finally:
        session.close()
    return values


def _fail(code, message):
    # The one choke point of every refusal: a node or op name from the file may hold a newline.
    sys.stderr.write(f"graphrun: {one_line(message)}\n")
    sys.stderr.flush()
    return code


def _silence_stdout():
    """Points stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


# C0 controls but tab and line breaks (one_line makes those spaces), DEL and C1: text from a
# file (a node name holding ESC [2J) must reach a terminal as text, not as commands to it
def one_line(exc):
    """An exception's message on one line (the verbs' errors must be one stderr line), its
    control characters escaped."""
    return " ".join(escape_controls(str(exc)).split()) or type(exc).__name__


_one_line = one_line


if __name__ == "__main__":
    sys.exit(main())
