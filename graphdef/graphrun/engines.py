"""The engines `graphrun compare` drives: this package's two Session engines, and TensorFlow.

Each engine takes a Job (the model as this package loaded it, the fetch names, the feeds as
{placeholder name: ndarray}) and returns the fetched values as ndarrays in fetch order. python
and cc are graphdef.Session(engine=...) on the same graph: the numpy reference runtime and the
C++ core in process (graphdef/client/runtime.py). An engine that cannot be used at all (the
C++ library not built, TensorFlow not installed) raises EngineMissing; one that fails on this
model or these feeds raises EngineError with its one-line reason.
"""

import contextlib
import os
import sys
import time

import numpy as np

from graphdef._native import capi
from graphdef.client.session import Session
from graphdef.framework.errors import OpError
from graphdef.wire import external_weights
from graphdef.wire.serialize import is_text_path


class EngineMissing(RuntimeError):
    """The engine is not available on this machine; the message says how to get it."""


class EngineError(RuntimeError):
    """The engine ran but failed on this model or these feeds."""


class Job:
    """What every engine runs: the model, the fetches (tensor names) and the feeds."""

    def __init__(self, model, graph, fetches, feeds, optimize=None):
        self.model = str(model)
        self.graph = graph          # the model as this package loaded it
        self.fetches = list(fetches)
        self.feeds = dict(feeds)    # {placeholder name: ndarray of its dtype}
        self.optimize = optimize    # False: the cc engine runs the graph as written (--no-optimize)


def run_session(job, engine):
    """The job on a fresh Session of `engine` ("python" or "cc")."""
    if engine == "cc":
        try:
            capi.load_library()
        except capi.LibraryMissing as e:
            raise EngineMissing(str(e)) from None
    session = Session(graph=job.graph, engine=engine, optimize=job.optimize)
    try:
        return [np.asarray(v) for v in session.run(job.fetches, {f"{k}:0": v for k, v in job.feeds.items()})]
    except (OpError, ValueError, TypeError) as e:
        raise EngineError(_one_line(e)) from None
    finally:
        session.close()


def run_python(job):
    return run_session(job, "python")


def run_cc(job):
    return run_session(job, "cc")


# -- TensorFlow ---------------------------------------------------------------------------

def run_tensorflow(job):
    """tf.compat.v1: import the same GraphDef bytes, run a Session with the same feeds."""
    with _quiet_stderr():  # TensorFlow logs its start-up on stderr, which carries only our one error line
        return _run_tensorflow(job)


def _run_tensorflow(job):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
    except ImportError:
        raise EngineMissing("TensorFlow is not installed (pip install tensorflow-cpu)") from None
    from google.protobuf import text_format

    graph_def = tf.compat.v1.GraphDef()
    with open(job.model, "rb") as f:
        data = f.read()
    try:
        if is_text_path(job.model):
            text_format.Parse(data.decode("utf-8"), graph_def)
        else:
            graph_def.ParseFromString(data)
        if any(external_weights.ATTR in node.attr for node in graph_def.node):
            # TensorFlow would read those Consts as zeros, and every difference would be that
            raise EngineError("TensorFlow: the model keeps Const values in a weights file, which TensorFlow "
                              "reads as zeros; compare the model written by graphrun convert --inline-weights")
        graph = tf.Graph()
        with graph.as_default():
            tf.compat.v1.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as session:
            values = session.run(job.fetches, {f"{k}:0": v for k, v in job.feeds.items()})
    except EngineError:
        raise
    except Exception as e:  # noqa: BLE001 - TensorFlow raises many kinds; each is this engine failing
        raise EngineError(f"TensorFlow: {type(e).__name__}: {_first_line(e)}") from None
    return [np.asarray(v) for v in values]


@contextlib.contextmanager
def _quiet_stderr():
    """Points file descriptor 2 at /dev/null (C++ libraries write there directly), then back."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


ENGINES = {"python": run_python, "cc": run_cc, "tensorflow": run_tensorflow}


def run_engine(name, job):
    """(values, seconds) of engine `name` on `job`."""
    start = time.perf_counter()
    values = ENGINES[name](job)
    return values, time.perf_counter() - start


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__


def _first_line(exc):
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(exc).__name__
