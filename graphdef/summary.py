"""tf.summary (TF1): FileWriter writes TensorBoard event files; scalar and merge_all make training curves.

    loss_summary = tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("logs", sess.graph)     # the graph, for the Graphs dashboard
    for step in range(100):
        summary, _ = sess.run([merged, train], feed)
        writer.add_summary(summary, step)                   # a point on the "loss" curve
    writer.close()

Event files are written with the tensorboard package's own record writer and protos
(tensorboard.summary.writer.record_writer.RecordWriter, tensorboard.compat.proto), so
`tensorboard --logdir logs` reads them. tensorboard is imported only when a summary is
written or a FileWriter opened; the rest of graphdef never needs it.

How a summary is fetched. TF1's tf.summary.scalar adds a ScalarSummary node whose output
is a DT_STRING tensor of Summary bytes, and merge_all a MergeSummary node. graphdef has no
string tensors, so instead a summary is a fetchable made of the numeric tensors it reports:
Session.run fetches those tensors like any others, then rebuilds the fetch the way TF's own
Session rebuilds a namedtuple, by calling its type with the fetched values; that call
returns the serialized Summary. So `sess.run(merged)` gives bytes, alone or inside a list
or dict of fetches, exactly where TF1 gives bytes. The trade-off: summaries add no node
to the graph. A saved .pb stays a plain TensorFlow GraphDef that TensorFlow, graphrun and
the C++ runner all accept, but it carries no summary ops: only Python code holding the
fetchable produces summaries, and a TensorFlow-made graph with ScalarSummary or
MergeSummary nodes is still refused as having ops graphdef lacks.
"""

import itertools
import os
import re
import threading
import time
import weakref

import numpy as np

from graphdef.framework.errors import InvalidArgumentError
from graphdef.framework.graph import Graph, get_default_graph
from graphdef.ops.registry import convert_to_tensor
from graphdef.framework.shapes import show
from graphdef.wire.serialize import serialize


class GraphKeys:
    SUMMARIES = "summaries"


# graph -> {collection key -> [summary fetchables]}; graphdef's Graph has no collections of its
# own, and a weak key lets a graph and its summaries be collected together.
_COLLECTIONS = weakref.WeakKeyDictionary()
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
_class_ids = itertools.count(1)


def _tensorboard_protos():
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
    except ImportError:
        raise ImportError("graphdef.summary needs the tensorboard package to write summaries and event "
                          "files: pip install tensorboard") from None
    return event_pb2, summary_pb2


# -- summaries as fetchables -----------------------------------------------------------------

class _SummaryFetch(tuple):
    """The tensors a summary reports, as a tuple Session.run can fetch; each subclass knows its tags.

    Session.run (graphdef's and TensorFlow's alike) rebuilds a fetched tuple subclass as
    `type(fetch)(*values)`; here that call serializes the values into Summary bytes. Each
    summary gets its own subclass with a unique name, because a Session caches its plans by
    the fetch's structure and type name, and two summaries may report the same tensor
    under different tags.
    """

    _tags = ()

    def __new__(cls, *values):
        return _serialize(cls._tags, values)

    @classmethod
    def _create(cls, graph, tags, tensors):
        kind = type(f"Summary_{next(_class_ids)}", (cls,), {"_tags": tuple(tags)})
        fetch = tuple.__new__(kind, tensors)
        fetch.graph = graph
        return fetch

    @property
    def tags(self):
        return self._tags

    @property
    def name(self):
        return self._tags[0] if len(self._tags) == 1 else "Merge"

    def __repr__(self):
        return f"<tf.summary of {', '.join(repr(t) for t in self._tags) or 'nothing'}>"

    # a fetch is a value, not a container to compare or hash element-wise
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


def _serialize(tags, values):
    _, summary_pb2 = _tensorboard_protos()
    summary = summary_pb2.Summary()
    for tag, value in zip(tags, values):
        array = np.asarray(value)
        if array.ndim != 0:
            raise InvalidArgumentError(f"tf.summary.scalar '{tag}': the tensor must be a scalar, "
                                       f"but its value has shape {show(array.shape)}")
        summary.value.add(tag=tag, simple_value=float(array))
    return summary.SerializeToString()


def _clean_tag(name):
    """TF1's rule: characters other than letters, digits, _ - / . become _, and no leading /."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", str(name)).lstrip("/")
    return cleaned


def _register(graph, summary, collections):
    per_graph = _COLLECTIONS.setdefault(graph, {})
    for key in collections:
        per_graph.setdefault(key, []).append(summary)


def scalar(name, tensor, collections=None, family=None):
    """A summary of one scalar under the tag `name` (made unique in the current name scope, as TF1 does).

    `tensor` is a scalar Tensor, Variable or number of a real type. The result is fetchable
    with Session.run, which returns the serialized Summary; it is also added to each of
    `collections` (default: the summaries collection that merge_all reads).
    """
    name, family = _clean_tag(name), _clean_tag(family)
    tensor = convert_to_tensor(tensor)
    graph = tensor.graph
    if tensor.dtype.is_bool:
        raise TypeError(f"tf.summary.scalar '{name}': tensor '{tensor.name}' is bool; "
                        "a summary takes a real number (cast it)")
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"tf.summary.scalar '{name}': tensor '{tensor.name}' has shape {show(tensor.shape)}; "
                         "a scalar summary takes a scalar (reduce it, e.g. with tf.reduce_mean)")
    base = name if family is None else f"{family}/{name}"
    # TF1 opens name_scope(base) and tags the summary with the scope's unique name, so a
    # second "loss" (or a tag clashing with an op name) becomes "loss_1" here as there
    with graph.name_scope(base) as scope:
        tag = scope.rstrip("/")
    if family is not None:
        tag = f"{family}/{tag}"
    summary = _SummaryFetch._create(graph, [tag], [tensor])
    _register(graph, summary, [GraphKeys.SUMMARIES] if collections is None else collections)
    return summary


def merge(inputs, collections=None, name=None):
    """One summary reporting every value of `inputs` (summaries from scalar, merge or merge_all)."""
    inputs = list(inputs)
    for item in inputs:
        if not isinstance(item, _SummaryFetch):
            raise TypeError(f"tf.summary.merge: {item!r} is not a summary; pass what tf.summary.scalar returns")
    graphs = {id(item.graph) for item in inputs}
    if len(graphs) > 1:
        raise ValueError("tf.summary.merge: the summaries belong to different graphs")
    graph = inputs[0].graph if inputs else get_default_graph()
    tags = [tag for item in inputs for tag in item.tags]
    duplicates = sorted({t for t in tags if tags.count(t) > 1})
    if duplicates:
        raise InvalidArgumentError(f"tf.summary.merge: duplicate tag {', '.join(repr(t) for t in duplicates)}")
    merged = _SummaryFetch._create(graph, tags, [t for item in inputs for t in item])
    if collections:
        _register(graph, merged, collections)
    return merged


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Every summary in collection `key` of the default graph, merged; None when there are none (as TF1)."""
    graph = get_default_graph()
    summaries = _COLLECTIONS.get(graph, {}).get(key, [])
    if scope is not None:
        summaries = [s for s in summaries if all(re.match(scope, tag) for tag in s.tags)]
    if not summaries:
        return None
    return merge(summaries, name=name)


def get_summary_collection(key=GraphKeys.SUMMARIES, graph=None):
    """The summaries registered under `key` in `graph` (the default graph), oldest first."""
    graph = graph if graph is not None else get_default_graph()
    return list(_COLLECTIONS.get(graph, {}).get(key, []))


# -- event files -----------------------------------------------------------------------------

_file_ids = itertools.count()


class FileWriter:
    """tf.summary.FileWriter: a TensorBoard event file in `logdir`, created now.

    Events are framed by tensorboard's RecordWriter into
    `events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>`, which TensorBoard finds by its
    "tfevents" name. (tensorboard's EventFileWriter is not used: it imports TensorFlow
    whenever TensorFlow is installed, seconds of start-up a graphdef program never pays.)
    The first event names the file version, as TensorFlow's writer does. Writes are
    buffered and reach the file when `max_queue` events are pending, when `flush_secs` have
    passed since the last flush at the next event, and on flush() and close().
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, filename_suffix=None,
                 session=None, graph_def=None):
        self._logdir = str(logdir)
        self._max_queue = max(1, int(max_queue))
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._writer = None
        self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _open(self):
        import socket  # here, not at the top: `import graphdef` should not pay for it
        from tensorboard.summary.writer.record_writer import RecordWriter
        os.makedirs(self._logdir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_file_ids)}{self._suffix}")
        self._path = os.path.join(self._logdir, name)
        self._writer = RecordWriter(open(self._path, "wb"))
        self._pending = 0
        self._last_flush = time.monotonic()
        event_pb2, _ = _tensorboard_protos()
        self.add_event(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.flush()

    def get_logdir(self):
        return self._logdir

    @property
    def path(self):
        """The event file being written (a new one after reopen())."""
        return self._path

    def add_event(self, event):
        """Appends an Event proto; dropped once the writer is closed, as TF1's writer drops it."""
        with self._lock:
            if self._writer is None:
                return
            self._writer.write(event.SerializeToString())
            self._pending += 1
            if self._pending >= self._max_queue or time.monotonic() - self._last_flush >= self._flush_secs:
                self._flush_locked()

    def add_summary(self, summary, global_step=None):
        """Records a Summary (its serialized bytes, as Session.run returns them, or the proto) at a step."""
        event_pb2, summary_pb2 = _tensorboard_protos()
        if isinstance(summary, (bytes, bytearray)):
            proto = summary_pb2.Summary()
            proto.ParseFromString(bytes(summary))
        elif hasattr(summary, "SerializeToString") and type(summary).__name__ == "Summary":
            proto = summary_pb2.Summary.FromString(summary.SerializeToString())
        else:
            raise TypeError(f"FileWriter.add_summary: expected the bytes Session.run returns for a summary, or "
                            f"a Summary proto, got {type(summary).__name__}; did you pass the summary itself "
                            "instead of sess.run(summary)?")
        self.add_event(event_pb2.Event(wall_time=time.time(), step=int(global_step or 0), summary=proto))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Records a graph for TensorBoard's Graphs dashboard: a graphdef Graph, a GraphDef proto or its bytes.

        A Graph is written with `_output_shapes` on its nodes (as_graph_def(add_shapes=True)),
        as TF1's FileWriter writes it, so the dashboard shows each edge's shape.
        """
        source = graph if graph is not None else graph_def
        if source is None:
            raise ValueError("FileWriter.add_graph: pass a graph or a graph_def")
        if isinstance(source, Graph):
            data = serialize(source.as_graph_def(add_shapes=True))
        elif isinstance(source, (bytes, bytearray)):
            data = bytes(source)
        elif hasattr(source, "SerializeToString"):
            data = source.SerializeToString(deterministic=True)
        else:
            raise TypeError(f"FileWriter.add_graph: expected a Graph, a GraphDef or its bytes, "
                            f"got {type(source).__name__}")
        event_pb2, _ = _tensorboard_protos()
        event = event_pb2.Event(wall_time=time.time(), graph_def=data)
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def _flush_locked(self):
        self._writer.flush()
        self._pending = 0
        self._last_flush = time.monotonic()

    def flush(self):
        """Writes every pending event to the file."""
        with self._lock:
            if self._writer is not None:
                self._flush_locked()

    def close(self):
        """Flushes and closes the file; later events are dropped until reopen()."""
        with self._lock:
            if self._writer is not None:
                self._flush_locked()
                self._writer.close()
                self._writer = None

    def reopen(self):
        """After close(), starts a new event file in the same logdir; otherwise does nothing."""
        with self._lock:
            closed = self._writer is None
        if closed:
            self._open()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the file objects may already be gone
            pass


__all__ = ["FileWriter", "GraphKeys", "get_summary_collection", "merge", "merge_all", "scalar"]
