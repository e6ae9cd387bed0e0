"""Runs one fuzz case through a public path and says which class its outcome falls in.

Classes (the first four are fine, the rest are findings):
  ok         ran to the end
  clean      graphdef's own error (one line, graphrun exit 2/3/4)
  wrapped    a kernel's numpy error that Session.run turned into a one-line
             InvalidArgumentError naming the node: clean, but its words are numpy's
  limit      a tensor over GRAPHDEF_MAX_TENSOR_BYTES refused before allocating
  traceback  any other exception escaping the public API, graphrun's "unexpected X"
             or "cannot load the graph (X...)" catch-alls, or more than one stderr line
  alloc      MemoryError (under the harness's RLIMIT_AS), however it was reported
  hang       over the per-execution time limit
  unpickled  a pickle inside a fuzzed file was loaded (never allowed)

A case is (mode, seed, graph bytes): mode "graph" loads the bytes with tf.load's loader
and runs them in a Session with feeds drawn from `seed`; mode "cli" runs graphrun's main
in-process with feed flags drawn from `seed` (JSON, .npy and .npz files, --random/--shape).
"""

import contextlib
import io
import os
import random

from feed_cases import TRIPWIRE, cli_feed_args, session_feeds

import graphdef.graphrun.cli as cli
from graphdef.framework.errors import OpError, ResourceExhaustedError
from graphdef.client.feeds import FeedError
from graphdef.wire.model_file import output_names
from graphdef.wire.serialize import GraphFileError, load_with_graph_def
from graphdef.client.session import Session

FINDINGS = ("traceback", "alloc", "hang", "unpickled")
CLASSES = ("ok", "clean", "wrapped", "limit") + FINDINGS
MAX_FETCHES = 24
# causes Session.run wraps that point at a bug in graphdef rather than at the input
_BUG_CAUSES = (AttributeError, NameError, AssertionError, RecursionError, SystemError, KeyError, LookupError)


class Hang(BaseException):
    """Raised by the harness's timer; BaseException so no `except Exception` swallows it."""


LAST = {"exception": None}  # for --replay: the exception behind the last outcome


def classify_exception(exc):
    """(class, detail) for an exception that escaped a public Python API."""
    LAST["exception"] = exc
    detail = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if isinstance(exc, Hang):
        return "hang", detail
    if isinstance(exc, ResourceExhaustedError):  # itself a MemoryError: look at what it reports
        cause = exc.__cause__
        if "out of memory" in str(exc) or (isinstance(cause, MemoryError)
                                           and not isinstance(cause, ResourceExhaustedError)):
            return "alloc", detail
        return "limit", detail
    if isinstance(exc, MemoryError):
        return "alloc", detail
    if isinstance(exc, (GraphFileError, FeedError)):
        return "clean", detail
    if isinstance(exc, OpError):
        cause = exc.__cause__
        if cause is None:
            return "clean", detail
        if isinstance(cause, MemoryError):
            return "alloc", detail
        if (isinstance(cause, _BUG_CAUSES) or "Maximum allowed size" in str(cause) or "too big" in str(cause)
                or isinstance(cause, TypeError) and ("NoneType" in str(cause) or "not callable" in str(cause))):
            return "traceback", f"{detail} [cause {type(cause).__name__}]"
        return "wrapped", f"{detail} [cause {type(cause).__name__}]"
    if isinstance(exc, (TypeError, ValueError)) and str(exc).startswith("Session.run:"):
        return "clean", detail  # Session.run's documented refusal of a feed it cannot use
    return "traceback", detail


def run_graph_case(seed, model_path):
    """The Python API: tf.load's loader, then Session.run of the file's outputs."""
    rng = random.Random(seed)
    try:
        graph, graph_def = load_with_graph_def(model_path)
        names = output_names(graph, [n.name for n in graph_def.node])[:MAX_FETCHES]
        session = Session(graph=graph)
        inits = [op for op in graph.get_operations() if op.type == "NoOp" and "init" in op.name]
        feeds = _harness_feeds(graph, rng)
        for op in inits[:1]:
            try:
                session.run(op, feeds)
            except OpError:
                pass
        if names:
            session.run(names, feeds)
    except (Hang, Exception) as exc:  # noqa: BLE001 - classifying every exception is the point
        return classify_exception(exc)
    return "ok", ""


def _harness_feeds(graph, rng):
    """session_feeds, shielded: a mistake of the harness's own must not count against graphdef."""
    try:
        return session_feeds(graph, rng)
    except Exception:  # noqa: BLE001
        return {}


def run_cli_case(seed, model_path, workdir):
    """graphrun's run verb, in-process, with hostile feed flags."""
    rng = random.Random(seed)
    try:
        graph, _ = load_with_graph_def(model_path)
        argv = [model_path] + cli_feed_args(graph, rng, workdir)
    except (Hang, Exception):  # noqa: BLE001 - an unloadable model still goes through graphrun
        argv = [model_path, "--random"]
    if rng.random() < 0.2:
        argv.append("--json")
    return run_graphrun(argv)


def run_graphrun(argv):
    """graphrun's main in-process on argv, classified: (class, detail)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    except (Hang, Exception) as exc:  # noqa: BLE001 - main must never raise
        kind, detail = classify_exception(exc)
        return ("hang" if kind == "hang" else "traceback"), f"graphrun raised {detail}"
    text = err.getvalue()
    detail = f"exit {code}: {text.strip()[:300]}"
    if ("unexpected " in text or "cannot load the graph (" in text or len(text.splitlines()) > 1
            or code not in (0, 1, 2, 3, 4)):
        return ("alloc" if "MemoryError" in text else "traceback"), detail
    if "out of memory" in text:
        return "alloc", detail
    if "over the limit of" in text or "of memory free now" in text:
        return "limit", detail
    return ("ok" if code == 0 else "clean"), detail


def execute(mode, seed, data, workdir):
    """Runs one case; returns (class, detail). Never raises (except the harness's own Hang)."""
    TRIPWIRE["unpickled"] = False
    LAST["exception"] = None
    model_path = os.path.join(workdir, "model.pb")
    with open(model_path, "wb") as f:
        f.write(data)
    if mode == "cli":
        outcome = run_cli_case(seed, model_path, workdir)
    else:
        outcome = run_graph_case(seed, model_path)
    if TRIPWIRE["unpickled"]:
        return "unpickled", "a pickle from a fuzzed feed file was loaded"
    return outcome
