"""The cc engine: a Session's plans run in the C++ core, in process, through graphrun_c.h.

One CcSession (graphdef/_native/capi.py) per Session holds the graph and its variables between
runs. The graph is sent once and extended with the nodes added since whenever a new plan finds
it grown (a TF1 graph gains a saver or another train op after its session starts). What a run
fetches, feeds and returns follows the numpy engine's rules (run_args.py): feeds are converted
and checked here, results come back as numpy scalars for 0-d values, and the C++ core's failures
become graphdef's OpError classes, its one line naming the node.
"""

import os
import threading

from graphdef._native import capi
from graphdef._proto import graph_pb2
from graphdef.client.run_args import check_runnable, convert_feed, reachable_ops, resolve, result
from graphdef.framework.errors import (FailedPreconditionError, InvalidArgumentError, OpError,
                                       ResourceExhaustedError, UnimplementedError)
from graphdef.framework.graph import Tensor
from graphdef.ops.array import frozen
from graphdef.wire import external_weights
from graphdef.wire.serialize import PRODUCER, graph_to_proto, node_to_proto

# The numpy engine's switch for its load-time passes (graphdef.optimize.at_load) turns the
# C++ core's graph passes off too, so GRAPHDEF_OPTIMIZE=0 runs the graph as written in both.
OPTIMIZE_SWITCH = "GRAPHDEF_OPTIMIZE"


def optimize_enabled():
    return os.environ.get(OPTIMIZE_SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


def op_error(error, where="Session.run"):
    """The OpError a GraphrunError stands for: the class TensorFlow would raise, the same line."""
    message = str(error)
    if error.unsupported:
        return UnimplementedError(f"{where}: {message}")
    if "not initialized" in message or "uninitialized" in message:
        return FailedPreconditionError(message)
    if "out of memory" in message or "over the limit" in message or "exceeds" in message:
        return ResourceExhaustedError(message)
    if error.code in (capi.USAGE, capi.RUN, capi.MODEL):
        return InvalidArgumentError(message)
    return OpError(message)


class CcRuntime:
    """The C++ core holding one Session's graph and variables."""

    name = "cc"

    def __init__(self, graph, optimize=None):
        self.graph = graph
        self.optimize = optimize_enabled() if optimize is None else bool(optimize)
        self._lock = threading.Lock()
        self._cc = None
        self._sent = 0          # graph.get_operations()[:_sent] are in the C++ session
        self._version = None    # graph.version when they were sent
        self.session()

    def session(self):
        """The CcSession, holding the graph as it is now."""
        with self._lock:
            graph = self.graph
            # Read once, before the ops: another thread may add ops meanwhile (while this one is in
            # the library), and a version counting an op not sent would hide it for good.
            version = graph.version
            if self._cc is not None and version == self._version:
                return self._cc
            ops = graph.get_operations()
            added = ops[self._sent:]
            if self._cc is None:
                _check_size(ops)
                self._cc = capi.CcSession(_graph_bytes(graph, version), optimize=self.optimize)
            elif version - self._version == len(added):  # nodes were only added: send those
                extension = graph_pb2.GraphDef()
                extension.versions.producer = PRODUCER
                for op in added:
                    node_to_proto(op, extension.node.add())
                if graph.functions is not None:  # a new node may call a function added with it
                    extension.library.CopyFrom(graph.functions.proto)
                self._cc.extend(extension.SerializeToString())
            else:  # an existing node was rewired: the whole graph again (variables keep their values)
                self._cc.extend(graph_to_proto(graph).SerializeToString())
            self._sent, self._version = len(ops), version
            return self._cc

    def plan(self, fetches, feed_keys):
        return CcPlan(self, fetches, feed_keys)

    def read_variable(self, name):
        value = self.session().read_variable(name)
        return None if value is None else frozen(value)

    def assign_variable(self, name, value):
        self.session().assign_variable(name, value)

    def close(self):
        with self._lock:
            if self._cc is not None:
                self._cc.close()
                self._cc = None


def _graph_bytes(graph, version):
    """The GraphDef the C++ core loads first: the file's own while the graph is still exactly what
    was read from it (at_load keeps it), else the graph's. Encoding a large graph again node by node
    cost more than the C++ core's whole load of it; a file whose Consts keep their values in an
    external weights file is encoded again, as the core reads only values held in the message."""
    source = getattr(graph, "_file_graph_def", None)
    if source is not None and source[1] == version:
        graph_def = source[0]
        if not any(external_weights.ATTR in node.attr for node in graph_def.node):
            return graph_def.SerializeToString()
    return graph_to_proto(graph).SerializeToString()


# A GraphDef travels to the C++ core as one protobuf message, which cannot pass 2 GiB; a model
# with weights that large (kept in a .weights file, memory-mapped) runs on the numpy engine.
MESSAGE_LIMIT = (1 << 31) - (16 << 20)


def _check_size(ops):
    total = sum(getattr(op.attrs.get("value"), "nbytes", 0) for op in ops if op.type == "Const")
    if total > MESSAGE_LIMIT:
        raise capi.GraphrunError(capi.MODEL, f"the graph's constants take {total / (1 << 30):.1f} GiB, more than "
                                             "a GraphDef can carry to the C++ core (2 GiB); graphrun-cc maps such a "
                                             "model's weights file itself")


class CcPlan:
    """One (fetches, feed keys) checked once against the C++ core's kernels, ready to run."""

    def __init__(self, runtime, fetches, feed_keys):
        self.runtime = runtime
        graph = runtime.graph
        self.rebuild, self.single, targets, self.feeds = resolve(graph, fetches, feed_keys)
        fed = {t: i for i, t in enumerate(self.feeds)}
        check_runnable(graph, reachable_ops(graph, targets, fed), self.feeds)
        self.feed_names = [t.name for t in self.feeds]
        self.fetch_names, self.target_names = [], []
        self.leaves = []  # per fetch leaf: ("feed", i), ("fetch", j), or None for an Operation
        fetched = {}
        for t in targets:
            if not isinstance(t, Tensor):
                if not (t.outputs and all(out in fed for out in t.outputs)) and t.name not in self.target_names:
                    self.target_names.append(t.name)
                self.leaves.append(None)
            elif t in fed:
                self.leaves.append(("feed", fed[t]))
            else:
                if t.name not in fetched:  # the C API takes each fetch once
                    fetched[t.name] = len(self.fetch_names)
                    self.fetch_names.append(t.name)
                self.leaves.append(("fetch", fetched[t.name]))
        try:
            runtime.session().check(self.feed_names, self.fetch_names, self.target_names)
        except capi.GraphrunError as e:
            raise op_error(e) from None

    def run(self, feed_dict):
        fed = [convert_feed(value, tensor) for value, tensor in zip(feed_dict.values(), self.feeds)] \
            if self.feeds else []
        try:
            values = self.runtime.session().run(dict(zip(self.feed_names, fed)), self.fetch_names,
                                                self.target_names)
        except capi.GraphrunError as e:
            raise op_error(e) from None
        leaves = [None if leaf is None else result((fed if leaf[0] == "feed" else values)[leaf[1]])
                  for leaf in self.leaves]
        return leaves[0] if self.single else self.rebuild(leaves)
