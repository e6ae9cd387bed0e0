"""graphrun: run a GraphDef file and print the fetched tensors.

    graphrun MODEL [--feed NAME=VALUE]... [--fetch NAME]... [--json]

The C++ runner (graphrun-cc) implements the same contract, and both must print the same
bytes, so the output rules live in graphdef.output_format and the feed rules in
graphdef.feeds. Every failure ends as one `graphrun: ...` line on stderr and an exit
code that says whose fault it was (see EPILOG).
"""

import argparse
import os
import sys
import warnings

import graphdef
from graphdef import feeds as feeding
from graphdef.errors import OpError
from graphdef.graph import Graph
from graphdef.output_format import format_json, format_text
from graphdef.serialize import GraphFileError, import_graph_def, read_graph_def
from graphdef.session import Session

EXIT_OK = 0
EXIT_USAGE = 2        # bad command line, feed or fetch: the caller can fix it
EXIT_MODEL = 3        # the model file cannot be read or is not a valid graph
EXIT_RUN = 4          # the graph failed while running
EXIT_INTERRUPTED = 130

EPILOG = """\
feeds:
  NAME is a Placeholder or PlaceholderWithDefault node (a trailing ":0" is accepted).
  VALUE is JSON (a number, true/false, or a nested array such as [[1,2],[3,4]]) or
  @FILE.npy; it is converted to the placeholder's dtype without changing any value,
  and its shape must fit the placeholder's.

fetches:
  "node" (output 0) or "node:k". Without --fetch, every output of every node that no
  other node uses (as data or control input), in file order.

output:
  one line per fetch, "<node>:<k> <dtype> <shape> = <values>"; with --json, one line
  {"outputs": [{"name": ..., "dtype": ..., "shape": [...], "values": ...}, ...]}.

exit codes:
  0    success
  2    usage or feed error: bad option, unparsable or mismatched feed, unknown feed or
       fetch name, a needed placeholder not fed
  3    the model cannot be read or is invalid (missing file, not a GraphDef, failed
       validation, unsupported ops)
  4    an error while running the graph (e.g. an uninitialized variable)
  130  interrupted
"""


class Failure(Exception):
    """Ends the run: `message` becomes the stderr line, `code` the exit code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad command line as one line instead of usage + error."""

    def error(self, message):
        raise Failure(EXIT_USAGE, f"{message} (see graphrun --help)")


def build_parser():
    parser = _Parser(
        prog="graphrun", allow_abbrev=False, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a TensorFlow GraphDef (.pb binary, or .pbtxt text) and print the fetched tensors.")
    parser.add_argument("model", metavar="MODEL", help="the GraphDef file (.pb, or .pbtxt for text)")
    parser.add_argument("--feed", action="append", default=[], metavar="NAME=VALUE",
                        help="a placeholder's value: JSON, or @FILE.npy (repeatable)")
    parser.add_argument("--fetch", action="append", default=[], metavar="NAME",
                        help='"node" or "node:k" to print (repeatable; default: the graph\'s sinks)')
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of text lines")
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
    except BrokenPipeError:
        _silence_stdout()
        return _fail(EXIT_RUN, "output closed before everything was written (broken pipe)")
    except Exception as e:  # noqa: BLE001 - the contract: a one-line report, never a traceback
        return _fail(EXIT_RUN, f"unexpected {type(e).__name__}: {_one_line(e)}")


def _main(argv):
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help and --version print and exit 0
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    graph, file_order = load_model(args.model)
    try:
        feed_dict = feeding.parse_feeds(graph, args.feed)
    except feeding.FeedError as e:
        raise Failure(EXIT_USAGE, str(e)) from None
    names = args.fetch or default_fetches(graph, file_order)
    targets = [resolve_fetch(graph, name) for name in names]
    check_fed(targets, feed_dict)
    values = run(graph, targets, feed_dict)
    outputs = [(t.name, value) for t, value in zip(targets, values)]
    text = format_json(outputs) + "\n" if args.json else format_text(outputs)
    sys.stdout.write(text)
    sys.stdout.flush()  # inside main, so a closed pipe is reported here and not at exit
    return EXIT_OK


def load_model(path):
    """The Graph with the file's node names, and those names in file order.

    This is serialize.load() kept in two steps: the default fetches follow the file's
    node order, and the imported graph holds its nodes in dependency order instead.
    """
    try:
        graph_def = read_graph_def(path)
        graph = Graph()
        try:
            import_graph_def(graph_def, name="", graph=graph)
        except GraphFileError as e:
            raise GraphFileError(f"{path}: {e}") from None
    except GraphFileError as e:
        raise Failure(EXIT_MODEL, _one_line(e)) from None
    except RecursionError:
        raise Failure(EXIT_MODEL, f"{path}: the graph is nested too deeply to read") from None
    except Exception as e:  # noqa: BLE001 - any other failure to load still means an unusable model
        raise Failure(EXIT_MODEL, f"{path}: cannot load the graph ({type(e).__name__}: {_one_line(e)})") from None
    return graph, [node.name for node in graph_def.node]


def default_fetches(graph, file_order):
    """Every output of every node nothing consumes, nodes in file order, outputs by index."""
    consumed = set()
    for op in graph.get_operations():
        consumed.update(t.op for t in op.inputs)
        consumed.update(op.control_inputs)
    ops = (graph.get_operation_by_name(name) for name in file_order)
    return [t.name for op in ops if op not in consumed for t in op.outputs]


def resolve_fetch(graph, name):
    """The tensor `name` ("node" = "node:0", or "node:k") denotes; Failure if there is none."""
    node, sep, index = name.rpartition(":")
    if not sep or not index.isdigit():
        node, index = name, "0"
    try:
        op = graph.get_operation_by_name(node)
    except KeyError:
        raise Failure(EXIT_USAGE, f"cannot fetch '{name}': the graph has no node '{node}'") from None
    k = int(index)
    if k >= len(op.outputs):
        count = {0: "no outputs", 1: "only output 0"}.get(len(op.outputs), f"outputs 0..{len(op.outputs) - 1}")
        raise Failure(EXIT_USAGE, f"cannot fetch '{name}': node '{node}' ({op.type}) has {count}")
    return op.outputs[k]


def check_fed(targets, feed_dict):
    """Failure naming every placeholder the fetches need that --feed does not give."""
    missing = feeding.unfed_placeholders(targets, feed_dict)
    if missing:
        listed = ", ".join(feeding.describe(op) for op in missing)
        plural = "s" if len(missing) > 1 else ""
        raise Failure(EXIT_USAGE, f"placeholder{plural} not fed: {listed}; use --feed NAME=VALUE")


def run(graph, targets, feed_dict):
    """The fetched values as ndarrays; Failure(EXIT_RUN) if the graph fails."""
    session = Session(graph=graph)
    try:
        values = session.run(list(targets), feed_dict)
    except OpError as e:
        raise Failure(EXIT_RUN, _one_line(e)) from None
    finally:
        session.close()
    return values


def _fail(code, message):
    sys.stderr.write(f"graphrun: {message}\n")
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


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
