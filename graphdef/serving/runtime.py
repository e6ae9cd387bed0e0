"""The model as the server sees it: named inputs and outputs with dtypes and shapes, and run().

The server talks to a runtime only through this interface (load, inputs/outputs, run), so the
protocols, batching and the repository do not know which one runs the model:

    CcRuntime       graphrun-cc's C++ kernels in process, through libgraphrun.so (graphdef/_native/capi.py):
                    the fastest runtime there is (oneDNN convolutions and matrix products, the C++
                    graph passes), so the default whenever the library is built and runs the model
    SessionRuntime  graphdef's Session on its numpy engine: every op graphdef has, so the fallback
                    for a model needing an op only Python runs, or when the library is not built

Session is not shared between threads: each worker thread gets its own Session on the one loaded
(read-only) Graph, so concurrent batches never share a plan's scratch state. The library runs the
batches of one loaded model one at a time, so CcRuntime loads the model once per worker, each load
running its batches on `threads` OpenMP threads: with one thread each, as many workers as cores keep
every core busy, and no batch waits at a barrier for a thread the event loop has preempted.
"""

import functools
import logging
import os
import queue
import threading

import numpy as np

from graphdef.client.session import Session
from graphdef.framework.errors import InvalidArgumentError, OpError
from graphdef._native import capi as libgraphrun
from graphdef.wire.model_file import is_lowering_residue, output_names
from graphdef.wire.serialize import load
from graphdef.optimize.at_load import load_with_graph_def  # optimized at load, as graphrun runs it

PLACEHOLDERS = ("Placeholder", "PlaceholderWithDefault")


class TensorSpec:
    """One input or output: its name in requests, the graph tensor, numpy dtype, shape (None = any size)."""

    def __init__(self, name, tensor_name, dtype, shape, required=True):
        self.name = name
        self.tensor_name = tensor_name
        self.dtype = np.dtype(dtype)
        self.shape = shape          # list of int or None per dim; None for an unknown rank
        self.required = required    # False for a PlaceholderWithDefault

    def describe_shape(self):
        if self.shape is None:
            return "any shape"
        return "[" + ", ".join("?" if d is None else str(d) for d in self.shape) + "]"


def _shape_of(tensor):
    dims = tensor.shape.dims if hasattr(tensor.shape, "dims") else None
    if dims is None:
        return None
    return [d if d is None or d >= 0 else None for d in (getattr(d, "value", d) for d in dims)]


def _request_name(tensor_name):
    """An output's name in requests: "node" for output 0, "node:k" for the others (TensorFlow's rule)."""
    return tensor_name[:-2] if tensor_name.endswith(":0") else tensor_name


class _Specs:
    """Looking inputs and outputs up by name, and whether rows can be stacked: the same for every runtime."""

    inputs = outputs = ()

    def input(self, name):
        return next((s for s in self.inputs if s.name == name), None)

    def output(self, name):
        return next((s for s in self.outputs if s.name == name or s.tensor_name == name), None)

    @property
    def batchable(self):
        """True when every input and output has a first dimension of any size: rows can be stacked."""
        specs = self.inputs + self.outputs
        return bool(self.inputs) and all(s.shape is not None and len(s.shape) >= 1 and s.shape[0] is None
                                         for s in specs)


class SessionRuntime(_Specs):
    """graphdef's Session, numpy engine, on a frozen graph loaded once (the server picks cc or python
    per model itself, so this runtime is the numpy one, not the Session's auto)."""

    kind = "graphdef-python"

    def __init__(self, path):
        self.path = str(path)
        self.graph, graph_def = load_with_graph_def(self.path)
        file_order = [node.name for node in graph_def.node]
        read = {text.lstrip("^").split(":")[0] for node in graph_def.node for text in node.input}
        self.inputs = []
        for node in graph_def.node:
            if node.op in PLACEHOLDERS and not is_lowering_residue(node.op, node.name, node.name in read):
                tensor = self.graph.get_tensor_by_name(node.name + ":0")
                self.inputs.append(TensorSpec(node.name, tensor.name, tensor.dtype.as_numpy_dtype,
                                              _shape_of(tensor), required=node.op == "Placeholder"))
        self.outputs = []
        for name in output_names(self.graph, file_order):
            tensor = self.graph.get_tensor_by_name(name)
            self.outputs.append(TensorSpec(_request_name(name), name, tensor.dtype.as_numpy_dtype, _shape_of(tensor)))
        self._local = threading.local()

    def run(self, feeds, fetches):
        """feeds {input name: ndarray}, fetches [output name] -> [ndarray] in fetch order (on a worker thread)."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = Session(graph=self.graph, engine="python")
        feed_dict = {self.input(name).tensor_name: value for name, value in feeds.items()}
        values = session.run([self.output(name).tensor_name for name in fetches], feed_dict)
        return [np.asarray(v) for v in values]


def _tensor_name(name):
    return name if ":" in name else name + ":0"


def _fully_known(shape):
    return shape is not None and None not in shape


def _merged(ours, theirs):
    """Two static shapes of one tensor: each dim known in either is known."""
    if ours is None or theirs is None:
        return theirs if ours is None else ours
    if len(ours) != len(theirs):
        raise ValueError(f"graphrun-cc and graphdef disagree on a rank: {ours} and {theirs}")
    return [a if a is not None else b for a, b in zip(ours, theirs)]


class CcRuntime(_Specs):
    """graphrun-cc's runtime in process (libgraphrun.so): the model loaded and optimized in C++ once per
    instance, so `instances` batches run at once, each on `threads` OpenMP threads (None: OpenMP's default)."""

    kind = "graphrun-cc"

    def __init__(self, path, instances=1, threads=None):
        self.path = str(path)
        self.threads = threads
        self.models = [libgraphrun.CcModel(self.path, threads=threads) for _ in range(max(1, instances))]
        self.model = self.models[0]
        # the instances no run holds: a run takes one, and more runs than instances wait for one
        self._idle = queue.SimpleQueue()
        for model in self.models:
            self._idle.put(model)
        self.inputs = [TensorSpec(name, _tensor_name(name), dtype, shape, required)
                       for name, dtype, shape, required in self.model.inputs]
        self.outputs = [TensorSpec(name, _tensor_name(name), dtype, shape)
                        for name, dtype, shape, _ in self.model.outputs]
        self._complete_output_shapes()

    def _complete_output_shapes(self):
        """graphrun-cc's static shape rules cover fewer ops than graphdef's shape inference (none for a
        convolution yet), and an output of unknown shape would turn batching off: what they leave
        unknown is taken from graphdef's own inference on the file as written (no kernel runs)."""
        if all(_fully_known(s.shape) for s in self.outputs):
            return
        graph = load(self.path)
        for spec in self.outputs:
            if not _fully_known(spec.shape):
                spec.shape = _merged(spec.shape, _shape_of(graph.get_tensor_by_name(spec.tensor_name)))

    def run(self, feeds, fetches):
        """feeds {input name: ndarray}, fetches [output name] -> [ndarray] in fetch order (on a worker thread)."""
        model = self._idle.get()
        try:
            return model.run(feeds, fetches)
        except libgraphrun.GraphrunError as e:
            # a bad value fails a kernel as it fails the Session's: the request's fault (400)
            kind = InvalidArgumentError if e.code in (libgraphrun.USAGE, libgraphrun.RUN) else OpError
            raise kind(str(e)) from None
        finally:
            self._idle.put(model)


RUNTIMES = {"cc": CcRuntime, "python": SessionRuntime}
log = logging.getLogger("graphdef.serving")


def default_choice():
    """("cc", None) when libgraphrun.so loads, else ("python", why not)."""
    try:
        libgraphrun.load_library()
    except libgraphrun.LibraryMissing as e:
        return "python", f"the C++ runtime is not available: {e}"
    return "cc", None


DESCRIPTIONS = {"cc": "runtime cc (graphrun-cc's C++ kernels in process, libgraphrun.so)",
                "python": "runtime python (graphdef's Session)"}


def cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# Each load costs its own weights, prepared kernels and a batch's activations (MobileNetV2 at batches of
# 8: about 120 MB of RSS under load); on a machine with more cores than this, each load's batches
# share out the cores instead, where a preempted team thread is rarer (cores to spare for the
# event loop and gRPC).
MAX_CC_WORKERS = 4


def default_workers(choice):
    """Inference workers when none are asked for: for cc one per core (up to MAX_CC_WORKERS), each its own
    load of the model; for python 2 (numpy releases the GIL in its kernels, the interpreter does not)."""
    return min(cores(), MAX_CC_WORKERS) if choice == "cc" else 2


def default_threads(workers):
    """OpenMP threads per cc worker when none are asked for: the cores shared out among the workers."""
    return max(1, cores() // max(1, workers))


def load_runtime(path, choice="python", fallback=False, instances=1, threads=None):
    """The model at `path` in the chosen runtime (cc: `instances` loads of it, each running on `threads`
    OpenMP threads). With `fallback`, a model the C++ runtime refuses (an op only Python runs, a graph it
    does not accept) is loaded in Python's instead, saying so in one line."""
    make = functools.partial(CcRuntime, instances=instances, threads=threads) if choice == "cc" else RUNTIMES[choice]
    if choice != "cc" or not fallback:
        return make(path)
    try:
        return make(path)
    except libgraphrun.GraphrunError as e:
        runtime = SessionRuntime(path)
        log.warning("%s: served by the Python runtime: graphrun-cc cannot run it: %s", path, e)
        return runtime


def loader(choice, fallback, instances=1, threads=None):
    """load_runtime(path) with the choices made once for the whole server."""
    return functools.partial(load_runtime, choice=choice, fallback=fallback, instances=instances, threads=threads)
