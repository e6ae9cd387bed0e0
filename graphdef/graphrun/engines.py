"""The runtimes `graphrun compare` drives: this package, the C++ runner, and TensorFlow.

Each engine takes a Job (the model file, the fetch names, the feeds as {placeholder name:
ndarray}) and returns the fetched values as ndarrays in fetch order. An engine that
cannot be used at all (no binary, TensorFlow not installed) raises EngineMissing; one
that fails on this model or these feeds raises EngineError with its one-line reason.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from graphdef.framework.errors import OpError
from graphdef.client.session import Session
from graphdef.wire import external_weights
from graphdef.wire.serialize import is_text_path

CC_ENV = "GRAPHRUN_CC"
CC_NAME = "graphrun-cc"


class EngineMissing(RuntimeError):
    """The engine is not available on this machine; the message says how to get it."""


class EngineError(RuntimeError):
    """The engine ran but failed on this model or these feeds."""


class Job:
    """What every engine runs: the model, the fetches (tensor names) and the feeds."""

    def __init__(self, model, graph, fetches, feeds, cc=None):
        self.model = str(model)
        self.graph = graph          # the model as this package loaded it
        self.fetches = list(fetches)
        self.feeds = dict(feeds)    # {placeholder name: ndarray of its dtype}
        self.cc = cc                # --cc PATH, if given


def run_python(job):
    session = Session(graph=job.graph)
    try:
        return [np.asarray(v) for v in session.run(job.fetches, {f"{k}:0": v for k, v in job.feeds.items()})]
    except (OpError, ValueError, TypeError) as e:
        raise EngineError(_one_line(e)) from None
    finally:
        session.close()


# -- the C++ runner -----------------------------------------------------------------------

def find_cc(explicit=None):
    """The graphrun-cc binary: --cc, else $GRAPHRUN_CC, else the repository's build/, else PATH."""
    if explicit or os.environ.get(CC_ENV):
        path = Path(explicit or os.environ[CC_ENV])
        how = "--cc" if explicit else f"${CC_ENV}"
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise EngineMissing(f"{how} names {path}, which is not an executable file")
        return path
    built = Path(__file__).resolve().parents[2] / "build" / CC_NAME
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which(CC_NAME)
    if found:
        return Path(found)
    raise EngineMissing(f"{CC_NAME} not found: build it with `make cc`, or give its path "
                        f"with --cc PATH or ${CC_ENV}")


def run_cc(job):
    """graphrun-cc with every feed as an .npy file and --json; its JSON read back exactly."""
    binary = find_cc(job.cc)
    with tempfile.TemporaryDirectory(prefix="graphrun-compare-") as tmp:
        command = [str(binary), job.model, "--json"]
        for i, (name, value) in enumerate(job.feeds.items()):
            path = os.path.join(tmp, f"feed{i}.npy")
            np.save(path, value, allow_pickle=False)
            command += ["--feed", f"{name}=@{path}"]
        for name in job.fetches:
            command += ["--fetch", name]
        try:
            done = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            raise EngineMissing(f"cannot start {binary}: {e.strerror}") from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no message"
        raise EngineError(f"{CC_NAME} exited with {done.returncode}: {reason}")
    try:
        outputs = json.loads(done.stdout)["outputs"]
        return [array_from_json(o["values"], o["dtype"], o["shape"]) for o in outputs]
    except (ValueError, KeyError, TypeError) as e:
        raise EngineError(f"{CC_NAME} printed output that is not graphrun's --json ({_one_line(e)})") from None


def array_from_json(values, dtype, shape):
    """The ndarray a --json output entry denotes, exactly.

    Floats are printed with the shortest digits that round-trip in their own precision,
    so parsing to float64 and rounding once to float32 or float16 gives back the very
    value (float64 has more than twice their precision, so the double rounding is harmless).
    """
    dtype = np.dtype(dtype)
    flat = list(_flatten(values, len(shape)))
    if dtype.kind == "f":
        array = np.array([float(v) for v in flat], np.float64).astype(dtype)  # "nan"/"inf" strings parse too
    else:
        array = np.array(flat, dtype=dtype)
    return array.reshape(shape)


def _flatten(values, depth):
    if depth == 0:
        yield values
        return
    for item in values:
        yield from _flatten(item, depth - 1)


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
