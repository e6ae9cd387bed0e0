"""graphdef.Runner: a model file loaded once and run on numpy batches, ready for Dask or Ray.

    runner = graphdef.Runner("model.pb")
    scores = runner(batch)                       # one input, one output: array in, array out
    outputs = runner.run({"x": batch, "k": 3})   # {output name: array}

A Runner pickles as its path (and fetches), not as its graph: unpickling opens the file
again, through a per-process cache, so a Dask or Ray worker that receives the same
Runner for every task loads the model once. Running is thread-safe for models without
variable updates: each run has its own values, and the session only caches plans.
"""

import os
import threading
from collections.abc import Mapping

import numpy as np

from graphdef.client import feeds as feeding
from graphdef.framework.graph import Tensor
from graphdef.wire.model_file import output_names
from graphdef.wire.serialize import load_with_graph_def
from graphdef.client.session import Session

_cache = {}
_cache_lock = threading.Lock()


class Runner:
    """Loads the GraphDef at `path` once; runs its outputs (or `fetches`) on numpy feeds.

    `fetches`: tensor or node names to compute (default: the model's outputs, every output
    of every node nothing consumes). `init`: names of ops to run once after loading, such as
    a variable initializer ("init"). `engine`: the Session's ("auto", "python" or "cc").
    """

    def __init__(self, path, fetches=None, init=None, engine=None):
        self.path = os.fspath(path)
        self._fetch_names = _names(fetches)
        self._init_names = _names(init)
        self.graph, graph_def = load_with_graph_def(self.path)
        names = self._fetch_names or output_names(self.graph, [node.name for node in graph_def.node])
        if not names:
            raise ValueError(f"Runner: {self.path} has no outputs to compute; pass fetches=[...]")
        self._targets = [self._tensor(name) for name in names]
        self.outputs = [t.name for t in self._targets]
        self._placeholders = feeding.placeholders(self.graph)
        self._required = feeding.unfed_placeholders(self._targets, {})
        self.engine = engine
        self._session = Session(graph=self.graph, engine=engine)
        for name in self._init_names:
            self._session.run(name)

    @property
    def inputs(self):
        """{placeholder name: (dtype name, static shape as a list with None for unknown dims, or None)}."""
        return {op.name: (op.outputs[0].dtype.name, None if op.outputs[0].shape.dims is None
                          else list(op.outputs[0].shape.dims)) for op in self._placeholders}

    def run(self, feeds, fetches=None):
        """{output name: ndarray} for `feeds` ({input name: array}, or one array for a one-input model)."""
        targets = self._targets if fetches is None else [self._tensor(n) for n in _names(fetches)]
        feed_dict = self._feed_dict(feeds)
        missing = feeding.unfed_placeholders(targets, feed_dict)
        if missing:
            raise ValueError(f"Runner: {self._describe(missing)} not fed; {self.path} needs "
                             f"{self._describe(self._required) or 'no inputs'}")
        values = self._session.run(targets, feed_dict)
        return {t.name: np.asarray(v) for t, v in zip(targets, values)}

    def __call__(self, feeds):
        """Like run(), but a one-output model gives back the array itself."""
        outputs = self.run(feeds)
        return next(iter(outputs.values())) if len(outputs) == 1 else outputs

    def __reduce__(self):
        return open_runner, (self.path, self._fetch_names, self._init_names, self.engine)

    def __repr__(self):
        inputs = ", ".join(feeding.describe(op) for op in self._placeholders) or "none"
        return f"<graphdef.Runner {self.path!r} inputs: {inputs}; outputs: {', '.join(self.outputs)}>"

    # -- helpers --------------------------------------------------------------------------

    def _tensor(self, name):
        node, sep, index = name.rpartition(":")
        if not (sep and index.isdigit()):
            node, index = name, "0"
        try:
            op = self.graph.get_operation_by_name(node)
        except KeyError:
            raise ValueError(f"Runner: {self.path} has no node '{node}'") from None
        if int(index) >= len(op.outputs):
            raise ValueError(f"Runner: node '{node}' ({op.type}) has {len(op.outputs)} outputs; cannot fetch '{name}'")
        return op.outputs[int(index)]

    def _feed_dict(self, feeds):
        if isinstance(feeds, Mapping):
            return {self._input(key): value for key, value in feeds.items()}
        if len(self._required) != 1:
            raise ValueError(f"Runner: {self.path} needs {self._describe(self._required) or 'no inputs'}; "
                             "pass a dict {name: array}")
        return {self._required[0].outputs[0]: np.asarray(feeds)}

    def _input(self, key):
        if isinstance(key, Tensor) and key.graph is self.graph:
            return key
        try:
            return feeding.find_placeholder(self.graph, str(key))
        except feeding.FeedError as e:
            raise ValueError(f"Runner: {e}") from None

    @staticmethod
    def _describe(ops):
        return ", ".join(feeding.describe(op) for op in ops)


def _names(value):
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def open_runner(path, fetches=(), init=(), engine=None):
    """A Runner for `path`, shared within this process while the file is unchanged."""
    path = os.fspath(path)
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_mtime_ns, stat.st_size, tuple(fetches), tuple(init), engine)
    with _cache_lock:
        runner = _cache.get(key)
        if runner is None:
            runner = Runner(path, fetches or None, init or None, engine)
            _cache[key] = runner
        return runner
